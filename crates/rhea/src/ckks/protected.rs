//! LITE's protected mode for a CKKS context on a GPU (issue 38; `docs/lite.md` "Protected
//! mode"): key generation, decryption, secret- and public-key encryption and plaintext operands
//! with the secret key, the errors, the plaintexts and the decrypted results only ever in device
//! memory as AES-XTS ciphertext (decrypted in the kernels' registers). A public-key encryption's
//! randomness (`v`, `e_0`, `e_1`) never reaches the device: its encryption of zero is computed
//! on the host (trusted) and uploaded, and the protected message is added in a kernel.
//!
//! ```no_run
//! use rhea::ckks::{CkksContext, Encoder, Evaluator, ProtectedDecryptor, ProtectedEncryptor,
//!                  ProtectedKeyGenerator, ProtectedPlaintext};
//! use rhea::params::CkksParametersLiteral;
//! use rhea::rlwe::Protection;
//! use rhea::Device;
//!
//! let params = CkksParametersLiteral::n13_logqp200_levels2().build()?;
//! let gpu = CkksContext::new(&params, Device::Cuda(0))?;
//! let host = CkksContext::new(&params, Device::Cpu)?; // encoding and decoding stay on the host
//! let protection = Protection::new(&gpu)?; // session keys from the OS CSPRNG
//! let mut keygen = ProtectedKeyGenerator::new(&gpu, &protection)?;
//! let sk = std::sync::Arc::new(keygen.secret_key()?); // on the GPU only as ciphertext
//! let rlk = keygen.relinearization_key(&sk)?; // public: plain, usable by any evaluator
//! let pk = keygen.public_key(&sk)?;
//! let pt = ProtectedPlaintext::new(&gpu, &protection, &Encoder::new(&host)?.encode(&[1.5])?)?;
//! let ct = ProtectedEncryptor::new(&gpu, sk.clone())?.encrypt(&pt)?;
//! // Or under the public key (no secret key needed; the same words as `Encryptor::new`'s):
//! let ct_pk = ProtectedEncryptor::with_public_key(&gpu, &pk, &protection)?.encrypt(&pt)?;
//! let eval = Evaluator::new(&gpu).with_relinearization_key(rlk)?;
//! let sq = eval.mul(&ct, &ct)?; // evaluation is unchanged
//! let dec = ProtectedDecryptor::new(&gpu, sk)?;
//! let out = dec.decrypt(&sq)?; // a plaintext in host memory
//! assert!((Encoder::new(&host)?.decode(&out)?[0] - 2.25).abs() < 1e-6);
//! let out = dec.decrypt(&ct_pk)?;
//! assert!((Encoder::new(&host)?.decode(&out)?[0] - 1.5).abs() < 1e-6);
//! # Ok::<(), rhea::Error>(())
//! ```

use std::sync::Arc;

use rhea_math::sampler::Prng;

use super::{Ciphertext, CkksContext, Plaintext};
use crate::backend::{Device, ProtectedPoly};
use crate::error::{Error, Result};
use crate::rlwe::{
    GaloisKeys, KeySwitchKey, ProtectedEncryptorCore, ProtectedKeyGenCore, ProtectedSecretKey,
    Protection, PublicKey, RelinearizationKey,
};

/// [`super::KeyGenerator`] in protected mode: the same draws from its ChaCha20 CSPRNG, so the
/// same seed gives the same secret key and the same public, relinearisation and Galois key words
/// as the unprotected generator; the secret key and the error polynomials are generated on the
/// host and reach the GPU only as ciphertext.
pub struct ProtectedKeyGenerator {
    ctx: CkksContext,
    core: ProtectedKeyGenCore,
}

impl ProtectedKeyGenerator {
    /// A generator seeded from the operating system, for a GPU context.
    ///
    /// Errors: [`Error::DeviceMismatch`] for a protection of another device than `ctx`'s.
    pub fn new(ctx: &CkksContext, protection: &Protection) -> Result<Self> {
        Self::with_prng(ctx, protection, Prng::from_os()?)
    }

    /// A generator with an explicit seed (tests; see [`super::KeyGenerator::from_seed`]).
    ///
    /// Errors: as [`ProtectedKeyGenerator::new`].
    pub fn from_seed(ctx: &CkksContext, protection: &Protection, seed: [u8; 32]) -> Result<Self> {
        Self::with_prng(ctx, protection, Prng::from_seed(seed))
    }

    fn with_prng(ctx: &CkksContext, protection: &Protection, prng: Prng) -> Result<Self> {
        Ok(Self {
            ctx: ctx.clone(),
            core: ProtectedKeyGenCore::new(
                "ProtectedKeyGenerator::new",
                ctx.rlwe(),
                protection,
                prng,
            )?,
        })
    }

    /// The context and the CSPRNG (bootstrapping's encapsulation keys continue the same
    /// stream).
    pub(crate) fn parts(&mut self) -> (&CkksContext, &mut Prng) {
        (&self.ctx, self.core.prng())
    }

    /// A fresh secret key: generated on the host, protected on the GPU.
    pub fn secret_key(&mut self) -> Result<ProtectedSecretKey> {
        self.core.secret_key()
    }

    /// The public key of `sk`.
    pub fn public_key(&mut self, sk: &ProtectedSecretKey) -> Result<PublicKey> {
        self.core.public_key(sk)
    }

    /// The relinearisation key of `sk` (`s²` exists only in registers).
    pub fn relinearization_key(&mut self, sk: &ProtectedSecretKey) -> Result<RelinearizationKey> {
        self.core.relinearization_key(sk)
    }

    /// The Galois key for element `g` (see [`super::KeyGenerator::galois_key_for_element`]).
    pub fn galois_key_for_element(
        &mut self,
        sk: &ProtectedSecretKey,
        g: u64,
    ) -> Result<KeySwitchKey> {
        self.core.galois_key_for_element(sk, g)
    }

    /// Galois keys for rotations by `steps` and, if `conjugation`, complex conjugation (the
    /// elements and order of [`super::KeyGenerator::galois_keys`]).
    pub fn galois_keys(
        &mut self,
        sk: &ProtectedSecretKey,
        steps: &[i64],
        conjugation: bool,
    ) -> Result<GaloisKeys> {
        self.core.galois_keys(sk, steps, conjugation)
    }
}

/// A plaintext protected on a GPU: encoded on the host (a [`Plaintext`] in host memory, e.g.
/// from an [`super::Encoder`] of a CPU context) and uploaded as ciphertext, so none of its words
/// crosses the bus or sits in device memory in the clear. An operand of
/// [`ProtectedPlaintext::add_to`], [`ProtectedPlaintext::multiply`] and
/// [`ProtectedEncryptor::encrypt`].
#[derive(Debug)]
pub struct ProtectedPlaintext {
    pub(super) poly: ProtectedPoly,
    pub(super) scale: f64,
    pub(super) slots: usize,
    pub(super) params_id: u64,
    pub(super) protection: Protection,
}

impl ProtectedPlaintext {
    /// `pt` (in host memory) protected on the GPU of `ctx`.
    ///
    /// Errors: [`Error::InvalidInput`] for a plaintext on a GPU (already plaintext in device
    /// memory: encode on a CPU context); [`Error::ParametersMismatch`];
    /// [`Error::DeviceMismatch`] for a protection of another device.
    pub fn new(ctx: &CkksContext, protection: &Protection, pt: &Plaintext) -> Result<Self> {
        ctx.rlwe()
            .check_id("ProtectedPlaintext::new", pt.params_id)?;
        if ctx.device() != protection.device() {
            return Err(Error::DeviceMismatch {
                op: "ProtectedPlaintext::new",
                lhs: ctx.device(),
                rhs: protection.device(),
            });
        }
        if pt.device() != Device::Cpu {
            return Err(Error::InvalidInput(
                "ProtectedPlaintext::new: the plaintext is on a GPU already; encode it with an \
                 Encoder of a CPU context of the same parameters"
                    .into(),
            ));
        }
        Ok(Self {
            poly: protection.protect(ctx.rlwe(), &pt.poly)?,
            scale: pt.scale,
            slots: pt.slots,
            params_id: pt.params_id,
            protection: protection.clone(),
        })
    }

    /// The level.
    pub fn level(&self) -> usize {
        self.poly.shape().q_limbs - 1
    }

    /// The scale.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    fn check(&self, ctx: &CkksContext, op: &'static str, ct: &Ciphertext) -> Result<()> {
        ctx.rlwe().check_id(op, ct.params_id)?;
        ctx.rlwe().check_id(op, self.params_id)?;
        if ct.level() != self.level() {
            return Err(Error::InvalidInput(format!(
                "{op}: a ciphertext at level {} and a protected plaintext at level {} (bring the \
                 ciphertext to the plaintext's level, or encode at the ciphertext's)",
                ct.level(),
                self.level()
            )));
        }
        Ok(())
    }

    /// `ct + pt` (the words of [`super::Evaluator::add_plain`] at equal levels).
    ///
    /// Errors: [`Error::ScaleMismatch`] for scales that differ; levels that differ; mismatched
    /// parameters.
    pub fn add_to(&self, ctx: &CkksContext, ct: &Ciphertext) -> Result<Ciphertext> {
        const OP: &str = "ProtectedPlaintext::add_to";
        self.check(ctx, OP, ct)?;
        if !super::evaluator::scales_match(ct.scale, self.scale) {
            return Err(Error::ScaleMismatch {
                op: OP,
                lhs_log_scale: ct.scale.log2(),
                rhs_log_scale: self.scale.log2(),
            });
        }
        let mut parts = crate::rlwe::clone_polys(&ct.parts)?;
        let session = self.protection.session();
        ctx.ring()
            .lite_plain_assign(session, &mut parts[0], &self.poly, false)?;
        Ok(Ciphertext {
            parts,
            scale: ct.scale,
            slots: ct.slots,
            params_id: ct.params_id,
            seed: None,
        })
    }

    /// `ct · pt`, not rescaled (scale `Δ_ct·Δ_pt`; the words of a manual-rescale
    /// [`super::Evaluator::mul_plain`] at equal levels; rescale with the evaluator).
    ///
    /// Errors: levels that differ; mismatched parameters.
    pub fn multiply(&self, ctx: &CkksContext, ct: &Ciphertext) -> Result<Ciphertext> {
        const OP: &str = "ProtectedPlaintext::multiply";
        self.check(ctx, OP, ct)?;
        let mut parts = crate::rlwe::clone_polys(&ct.parts)?;
        let session = self.protection.session();
        for p in &mut parts {
            ctx.ring().lite_plain_assign(session, p, &self.poly, true)?;
        }
        Ok(Ciphertext {
            parts,
            scale: ct.scale * self.scale,
            slots: ct.slots,
            params_id: ct.params_id,
            seed: None,
        })
    }
}

/// Encryption of protected plaintexts, with a protected secret key or a public key.
///
/// - [`ProtectedEncryptor::new`] (secret key): `(−a·s + e + m, a)`, the words of
///   [`super::Encryptor::with_secret_key`] (same seed) with `s`, `e` and `m` decrypted only in
///   registers.
/// - [`ProtectedEncryptor::with_public_key`]: `(ModDown(v·b + e_0) + m, ModDown(v·a + e_1))`,
///   the words of [`super::Encryptor::new`] (same seed): the encryption of zero (with the
///   ephemeral ternary `v` and the errors `e_0`, `e_1`) is computed on the host, which is
///   trusted, and uploaded (it is public); `m` is added in a kernel that decrypts it in
///   registers. No secret is in device memory in the clear.
pub struct ProtectedEncryptor {
    ctx: CkksContext,
    core: ProtectedEncryptorCore,
}

impl ProtectedEncryptor {
    /// A secret-key encryptor for `sk` (OS-seeded randomness); `sk` is the key or an `Arc` of
    /// it.
    pub fn new(ctx: &CkksContext, sk: impl Into<Arc<ProtectedSecretKey>>) -> Result<Self> {
        Ok(Self {
            ctx: ctx.clone(),
            core: ProtectedEncryptorCore::secret(sk.into())?,
        })
    }

    /// A public-key encryptor (OS-seeded randomness) for the plaintexts protected by
    /// `protection`, on the GPU of `ctx`. `pk` (on any device) is copied to host memory once,
    /// here: every encryption computes its encryption of zero there (the CPU backend's cost of
    /// a public-key encryption, plus the upload of the two result polynomials).
    ///
    /// Errors: [`Error::DeviceMismatch`] for a protection of another device than `ctx`'s (a
    /// CPU context included: host memory needs no protection, use [`super::Encryptor`]);
    /// [`Error::ParametersMismatch`] for a key of other parameters; the device's errors.
    pub fn with_public_key(
        ctx: &CkksContext,
        pk: &PublicKey,
        protection: &Protection,
    ) -> Result<Self> {
        Ok(Self {
            ctx: ctx.clone(),
            core: ProtectedEncryptorCore::public(
                "ProtectedEncryptor::with_public_key",
                ctx.rlwe(),
                pk,
                protection,
            )?,
        })
    }

    /// Replaces the randomness with an explicitly seeded stream (reproducible tests only).
    pub fn with_seed(self, seed: [u8; 32]) -> Self {
        Self {
            ctx: self.ctx,
            core: self.core.with_seed(seed),
        }
    }

    /// Whether it encrypts under a (protected) secret key; a public key otherwise.
    pub fn uses_secret_key(&self) -> bool {
        self.core.uses_secret_key()
    }

    /// Encrypts `pt` at its level and scale: under a secret key its `c_1` is seeded (as
    /// [`super::Encryptor::with_secret_key`]'s), under a public key it is not (as
    /// [`super::Encryptor::new`]'s).
    ///
    /// Errors: [`Error::ParametersMismatch`]; [`Error::InvalidInput`] for a plaintext protected
    /// by another [`Protection`] than the key or the one given to
    /// [`ProtectedEncryptor::with_public_key`] (its ciphertext would not decrypt).
    pub fn encrypt(&self, pt: &ProtectedPlaintext) -> Result<Ciphertext> {
        self.ctx.rlwe().check_id("encrypt", pt.params_id)?;
        let (parts, seed) = self
            .core
            .encrypt(self.ctx.rlwe(), &pt.poly, &pt.protection)?;
        Ok(Ciphertext {
            parts,
            scale: pt.scale,
            slots: pt.slots,
            params_id: pt.params_id,
            seed,
        })
    }
}

/// [`super::Decryptor`] in protected mode: `Σ c_i·s^i` (2 or 3 components) computed on the GPU
/// with `s` protected, written there as ciphertext and decrypted on the host; the plaintext it
/// returns is in host memory (decode it with any encoder of the parameters: decoding reads
/// host words). No noise flooding.
pub struct ProtectedDecryptor {
    pub(super) ctx: CkksContext,
    pub(super) sk: Arc<ProtectedSecretKey>,
}

impl ProtectedDecryptor {
    /// A decryptor for `sk` (the key or an `Arc` of it).
    ///
    /// Errors: [`Error::ParametersMismatch`].
    pub fn new(ctx: &CkksContext, sk: impl Into<Arc<ProtectedSecretKey>>) -> Result<Self> {
        let sk = sk.into();
        ctx.rlwe()
            .check_id("ProtectedDecryptor::new", sk.params_id())?;
        Ok(Self {
            ctx: ctx.clone(),
            sk,
        })
    }

    /// The plaintext of `ct` (at its level, scale and slot count), in host memory.
    ///
    /// Errors: [`Error::ParametersMismatch`]; [`Error::CiphertextDegree`] beyond 3 components;
    /// a ciphertext not on the key's GPU.
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<Plaintext> {
        self.ctx.rlwe().check_id("decrypt", ct.params_id)?;
        let poly = self.ctx.rlwe().decrypt_protected(&self.sk, &ct.parts)?;
        Ok(Plaintext {
            poly,
            scale: ct.scale,
            slots: ct.slots,
            params_id: ct.params_id,
        })
    }
}
