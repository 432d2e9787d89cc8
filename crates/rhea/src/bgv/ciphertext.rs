//! BGV plaintexts, ciphertexts and decryption results.

use std::fmt;

use super::BgvContext;
use crate::backend::{Device, Poly};
use crate::error::Result;
use crate::rlwe::{ciphertext_component_accessors, clone_polys, transfer_polys};

/// An encoded message `m ∈ R_t`, ready for encryption and for plaintext operations: the centred
/// coefficients of `m` lifted to the Q limbs of its level, in NTT form, with a bound on its norm.
///
/// `Clone` copies it on its device (panicking only if the device is out of memory; see
/// [`Plaintext::try_clone`]); [`Plaintext::to_device`] copies it to another device.
#[derive(Clone)]
pub struct Plaintext {
    pub(crate) poly: Poly,
    /// `log2` of the noise model's bound on `‖m‖_can`.
    pub(crate) log_norm: f64,
    pub(crate) params_id: u64,
}

impl Plaintext {
    /// The level (`Q` limbs − 1).
    pub fn level(&self) -> usize {
        self.poly.q_limbs() - 1
    }

    /// The polynomial `m` (centred coefficients, NTT form).
    pub fn poly(&self) -> &Poly {
        &self.poly
    }

    /// `log2` of the bound the noise model uses for `m`.
    pub fn log_norm(&self) -> f64 {
        self.log_norm
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
            log_norm: self.log_norm,
            params_id: self.params_id,
        })
    }

    /// A copy on the device of `ctx` (a context of the same parameters on any device): one
    /// call moves a plaintext between the CPU and a GPU, or between GPUs.
    ///
    /// Errors: [`crate::Error::ParametersMismatch`] for a context of other parameters; the
    /// device's errors.
    pub fn to_device(&self, ctx: &BgvContext) -> Result<Self> {
        let mut parts = transfer_polys(
            ctx.rlwe(),
            "Plaintext::to_device",
            self.params_id,
            std::slice::from_ref(&self.poly),
        )?;
        Ok(Self {
            poly: parts.remove(0),
            log_norm: self.log_norm,
            params_id: self.params_id,
        })
    }
}

impl fmt::Debug for Plaintext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plaintext")
            .field("level", &self.level())
            .field("log2_norm", &self.log_norm)
            .field("device", &self.device())
            .finish()
    }
}

/// A BGV ciphertext.
///
/// Its components `ĉ_0, ĉ_1[, ĉ_2]` (NTT form, one shape) are stored multiplied by
/// `t^{-1} mod Q_ℓ`: the usual BGV ciphertext is `c = t·ĉ`, whose phase
/// `v = Σ c_i·s^i = [f·m]_t + t·e` (centred mod `Q_ℓ`) decrypts to `f·m mod t`. `f` is the
/// correction factor ([`Ciphertext::factor`]) that modulus switching multiplies by
/// `q_ℓ^{-1} mod t`; decryption divides it out. The level, the factor and a bound on the noise
/// ([`Ciphertext::noise_bound_bits`]) are tracked on every operation (see [`crate::bgv`]).
///
/// `Clone` copies it on its device (panicking only if the device is out of memory; see
/// [`Ciphertext::try_clone`]); [`Ciphertext::to_device`] copies it to another device.
#[derive(Clone)]
pub struct Ciphertext {
    pub(crate) parts: Vec<Poly>,
    pub(crate) factor: u64,
    pub(crate) log_noise: f64,
    pub(crate) params_id: u64,
    /// The seed of `ĉ_1` for a fresh secret-key encryption (`ĉ_1` is regenerated from
    /// `(seed, stream 0)`), so it can be serialised as `(seed, ĉ_0)`; `None` otherwise.
    pub(crate) seed: Option<[u8; 32]>,
}

impl Ciphertext {
    /// The seed of the uniform component `ĉ_1` of a fresh secret-key encryption (the
    /// serialisation stores it instead of `ĉ_1`); `None` for other ciphertexts.
    pub fn seed(&self) -> Option<&[u8; 32]> {
        self.seed.as_ref()
    }

    /// The level (`Q` limbs − 1): how many modulus switchings are left.
    pub fn level(&self) -> usize {
        self.parts[0].q_limbs() - 1
    }

    /// The correction factor `f ∈ Z_t^*`: the ciphertext decrypts to `f·m mod t`.
    pub fn factor(&self) -> u64 {
        self.factor
    }

    /// `log2` of the tracked upper bound on the phase `‖v‖` (noise plus message). Decryption is
    /// correct while it stays below `log2(Q_ℓ / 2)`.
    pub fn noise_bound_bits(&self) -> f64 {
        self.log_noise
    }

    /// The components `ĉ_i = t^{-1}·c_i mod Q_ℓ` (NTT form).
    pub fn parts(&self) -> &[Poly] {
        &self.parts
    }

    ciphertext_component_accessors!();

    /// A copy on the same device (a device copy can fail, hence the `Result`).
    pub fn try_clone(&self) -> Result<Self> {
        Ok(Self {
            parts: clone_polys(&self.parts)?,
            factor: self.factor,
            log_noise: self.log_noise,
            params_id: self.params_id,
            seed: self.seed,
        })
    }

    /// A copy on the device of `ctx` (a context of the same parameters on any device): one
    /// call moves a ciphertext between the CPU and a GPU, or between GPUs, words unchanged.
    ///
    /// Errors: [`crate::Error::ParametersMismatch`] for a context of other parameters; the
    /// device's errors.
    pub fn to_device(&self, ctx: &BgvContext) -> Result<Self> {
        Ok(Self {
            parts: transfer_polys(
                ctx.rlwe(),
                "Ciphertext::to_device",
                self.params_id,
                &self.parts,
            )?,
            factor: self.factor,
            log_noise: self.log_noise,
            params_id: self.params_id,
            seed: self.seed,
        })
    }
}

impl fmt::Debug for Ciphertext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ciphertext")
            .field("level", &self.level())
            .field("components", &self.parts.len())
            .field("factor", &self.factor)
            .field("log2_noise_bound", &self.log_noise)
            .field("device", &self.device())
            .finish()
    }
}

/// The result of a decryption: the message polynomial `m mod t` (correction factor removed) and
/// the measured noise budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decrypted {
    pub(crate) coeffs: Vec<u64>,
    pub(crate) noise_budget: Option<u32>,
    pub(crate) level: usize,
    pub(crate) params_id: u64,
}

impl Decrypted {
    /// The coefficients of `m`, in `[0, t)`, natural order.
    pub fn coeffs(&self) -> &[u64] {
        &self.coeffs
    }

    /// The measured noise budget in bits, `⌊log2(Q_ℓ / (2·‖v‖_∞))⌋ ≥ 1` (`v` the phase), or
    /// `None` when it cannot be known: the ciphertext's tracked noise bound had reached
    /// `Q_ℓ / 2` (only possible with the evaluator's noise checks off), so its phase may have
    /// wrapped modulo `Q_ℓ` — the measured phase, and the decrypted values, may then be wrong.
    pub fn noise_budget(&self) -> Option<u32> {
        self.noise_budget
    }

    /// The level of the ciphertext it came from.
    pub fn level(&self) -> usize {
        self.level
    }

    /// The id of the parameters.
    pub fn params_id(&self) -> u64 {
        self.params_id
    }
}
