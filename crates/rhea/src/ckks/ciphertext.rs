//! CKKS plaintexts and ciphertexts: polynomials in NTT form plus level, scale and slot count.

use std::fmt;

use super::CkksContext;
use crate::backend::{Device, Poly};
use crate::error::Result;
use crate::rlwe::{ciphertext_component_accessors, clone_polys, transfer_polys};

/// An encoded message: one NTT-form polynomial over the Q limbs of its level, with its scale and
/// slot count.
///
/// `Clone` copies it on its device (panicking only if the device is out of memory; see
/// [`Plaintext::try_clone`]); [`Plaintext::to_device`] copies it to another device.
#[derive(Clone)]
pub struct Plaintext {
    pub(crate) poly: Poly,
    pub(crate) scale: f64,
    pub(crate) slots: usize,
    pub(crate) params_id: u64,
}

impl Plaintext {
    /// The level (`Q` limbs − 1).
    pub fn level(&self) -> usize {
        self.poly.q_limbs() - 1
    }

    /// The scale `Δ` the message was multiplied by.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The number of slots.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The polynomial (NTT form).
    pub fn poly(&self) -> &Poly {
        &self.poly
    }

    /// The id of the parameters.
    pub fn params_id(&self) -> u64 {
        self.params_id
    }

    /// The device holding the polynomial.
    pub fn device(&self) -> Device {
        self.poly.device()
    }

    /// A copy on the same device (a device copy can fail, hence the `Result`).
    pub fn try_clone(&self) -> Result<Self> {
        Ok(Self {
            poly: self.poly.try_clone()?,
            scale: self.scale,
            slots: self.slots,
            params_id: self.params_id,
        })
    }

    /// A copy on the device of `ctx` (a context of the same parameters on any device): one
    /// call moves a plaintext between the CPU and a GPU, or between GPUs.
    ///
    /// Errors: [`crate::Error::ParametersMismatch`] for a context of other parameters; the
    /// device's errors.
    pub fn to_device(&self, ctx: &CkksContext) -> Result<Self> {
        let mut parts = transfer_polys(
            ctx.rlwe(),
            "Plaintext::to_device",
            self.params_id,
            std::slice::from_ref(&self.poly),
        )?;
        Ok(Self {
            poly: parts.remove(0),
            scale: self.scale,
            slots: self.slots,
            params_id: self.params_id,
        })
    }
}

impl fmt::Debug for Plaintext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plaintext")
            .field("level", &self.level())
            .field("log2_scale", &self.scale.log2())
            .field("slots", &self.slots)
            .field("device", &self.device())
            .finish()
    }
}

/// A CKKS ciphertext: components `c_0, c_1[, c_2]` (NTT form, one shape) that decrypt to
/// `Σ c_i·s^i ≈ Δ·m`, with the level, scale `Δ` and slot count tracked.
///
/// `Clone` copies it on its device (panicking only if the device is out of memory; see
/// [`Ciphertext::try_clone`]); [`Ciphertext::to_device`] copies it to another device.
#[derive(Clone)]
pub struct Ciphertext {
    pub(crate) parts: Vec<Poly>,
    pub(crate) scale: f64,
    pub(crate) slots: usize,
    pub(crate) params_id: u64,
    /// The seed of `c_1` for a fresh secret-key encryption (`c_1` is regenerated from
    /// `(seed, stream 0)`), so it can be serialised as `(seed, c_0)`; `None` otherwise.
    pub(crate) seed: Option<[u8; 32]>,
}

impl Ciphertext {
    /// The seed of the uniform component `c_1` of a fresh secret-key encryption (the
    /// serialisation stores it instead of `c_1`); `None` for other ciphertexts.
    pub fn seed(&self) -> Option<&[u8; 32]> {
        self.seed.as_ref()
    }

    /// The level (`Q` limbs − 1): how many rescalings are left.
    pub fn level(&self) -> usize {
        self.parts[0].q_limbs() - 1
    }

    /// The scale `Δ`.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// `log2` of the scale.
    pub fn log_scale(&self) -> f64 {
        self.scale.log2()
    }

    /// The number of slots.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The components (NTT form).
    pub fn parts(&self) -> &[Poly] {
        &self.parts
    }

    ciphertext_component_accessors!();

    /// A copy on the same device (a device copy can fail, hence the `Result`).
    pub fn try_clone(&self) -> Result<Self> {
        Ok(Self {
            parts: clone_polys(&self.parts)?,
            scale: self.scale,
            slots: self.slots,
            params_id: self.params_id,
            seed: self.seed,
        })
    }

    /// A copy on the device of `ctx` (a context of the same parameters on any device): one
    /// call moves a ciphertext between the CPU and a GPU, or between GPUs, words unchanged.
    ///
    /// Errors: [`crate::Error::ParametersMismatch`] for a context of other parameters; the
    /// device's errors.
    pub fn to_device(&self, ctx: &CkksContext) -> Result<Self> {
        Ok(Self {
            parts: transfer_polys(
                ctx.rlwe(),
                "Ciphertext::to_device",
                self.params_id,
                &self.parts,
            )?,
            scale: self.scale,
            slots: self.slots,
            params_id: self.params_id,
            seed: self.seed,
        })
    }
}

impl fmt::Debug for Ciphertext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ciphertext")
            .field("level", &self.level())
            .field("log2_scale", &self.scale.log2())
            .field("components", &self.parts.len())
            .field("slots", &self.slots)
            .field("device", &self.device())
            .finish()
    }
}
