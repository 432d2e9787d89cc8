//! LITE's all-data mode for CKKS (issue 38, `docs/lite.md` "The all-data mode"): ciphertexts
//! held in device memory as AES-XTS ciphertext ([`ProtectedCiphertext`]) and evaluated by
//! kernels that decrypt every operand in registers and encrypt every result before storing it
//! ([`ProtectedEvaluator`]: addition, multiplication with relinearisation, rescaling, rotation,
//! protected plaintext operands).
//! Every intermediate of those operations — the tensor product, the key-switching digits and
//! inner products, the coefficient-form rows of the NTTs — is protected too; only the public
//! keys are read plain. The words are the unprotected evaluator's, bit for bit.
//!
//! The protected mode ([`super::ProtectedEncryptor`], [`super::ProtectedDecryptor`]) already
//! keeps the secret key and the plaintexts out of device memory; a ciphertext is public. The
//! all-data mode adds what the seed calls encrypting everything a kernel touches: an attacker
//! reading device memory sees neither the ciphertexts nor the data derived from them, at the
//! price of two AES-128 per 16 bytes read or written (measured: `examples/lite_protected_bench.rs`,
//! BENCHMARKS.md "LITE").
//!
//! ```no_run
//! use rhea::ckks::{CkksContext, Encoder, ProtectedDecryptor, ProtectedEncryptor,
//!                  ProtectedEvaluator, ProtectedKeyGenerator, ProtectedPlaintext};
//! use rhea::params::CkksParametersLiteral;
//! use rhea::rlwe::Protection;
//! use rhea::Device;
//!
//! let params = CkksParametersLiteral::n13_logqp200_levels2().build()?;
//! let gpu = CkksContext::new(&params, Device::Cuda(0))?;
//! let host = CkksContext::new(&params, Device::Cpu)?;
//! let protection = Protection::new(&gpu)?;
//! let mut keygen = ProtectedKeyGenerator::new(&gpu, &protection)?;
//! let sk = std::sync::Arc::new(keygen.secret_key()?);
//! let rlk = keygen.relinearization_key(&sk)?;
//! let pt = ProtectedPlaintext::new(&gpu, &protection, &Encoder::new(&host)?.encode(&[1.5])?)?;
//! let ct = ProtectedEncryptor::new(&gpu, sk.clone())?.encrypt(&pt)?;
//! let eval = ProtectedEvaluator::new(&gpu, &protection)?.with_relinearization_key(rlk)?;
//! let x = eval.protect(&ct)?; // from here on the ciphertext is XTS ciphertext in memory
//! let sq = eval.rescale(&eval.mul_relin(&x, &x)?)?;
//! let out = ProtectedDecryptor::new(&gpu, sk)?.decrypt_protected(&sq)?;
//! assert!((Encoder::new(&host)?.decode(&out)?[0] - 2.25).abs() < 1e-6);
//! # Ok::<(), rhea::Error>(())
//! ```

use std::sync::Arc;

use rhea_cuda::lite::ops::EwOp;

use super::{Ciphertext, CkksContext, Plaintext, ProtectedDecryptor, ProtectedPlaintext};
use crate::backend::{AllDataPlan, Device, ProtectedPoly};
use crate::error::{Error, Result};
use crate::rlwe::{GaloisKeys, KeySwitchKey, Protection, RelinearizationKey};

/// A CKKS ciphertext in LITE's all-data mode: its components are XTS ciphertext in device
/// memory, bound to their addresses and readable only by the session that protected them.
pub struct ProtectedCiphertext {
    parts: Vec<ProtectedPoly>,
    scale: f64,
    slots: usize,
    params_id: u64,
    protection: Protection,
}

impl std::fmt::Debug for ProtectedCiphertext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProtectedCiphertext")
            .field("level", &self.level())
            .field("scale", &self.scale)
            .field("slots", &self.slots)
            .field("components", &self.parts.len())
            .field("device", &self.device())
            .finish()
    }
}

impl ProtectedCiphertext {
    /// The level (Q limbs − 1).
    pub fn level(&self) -> usize {
        self.parts[0].shape().q_limbs - 1
    }

    /// The scale.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The number of slots.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The number of components (3 after a multiplication without relinearisation).
    pub fn components(&self) -> usize {
        self.parts.len()
    }

    /// The GPU holding it.
    pub fn device(&self) -> Device {
        self.protection.device()
    }

    fn with_parts(&self, parts: Vec<ProtectedPoly>, scale: f64) -> ProtectedCiphertext {
        ProtectedCiphertext {
            parts,
            scale,
            slots: self.slots,
            params_id: self.params_id,
            protection: self.protection.clone(),
        }
    }
}

/// The CKKS evaluator of the all-data mode: [`super::Evaluator`]'s `add`, `sub`, `mul_relin`,
/// `rescale` and `rotate` on [`ProtectedCiphertext`]s, each operand decrypted only in registers,
/// with the unprotected evaluator's words. Keys are the ordinary (public) keys of the protected
/// or unprotected key generator.
pub struct ProtectedEvaluator {
    ctx: CkksContext,
    protection: Protection,
    plan: Arc<AllDataPlan>,
    rlk: Option<Arc<RelinearizationKey>>,
    galois: Option<Arc<GaloisKeys>>,
}

impl ProtectedEvaluator {
    /// An evaluator for the GPU context `ctx` under `protection`'s session (the first one of
    /// a ring on a GPU uploads the kernels' twiddle tables for every prime; later ones share
    /// them).
    ///
    /// Errors: [`Error::DeviceMismatch`] for a protection of another device than `ctx`'s.
    pub fn new(ctx: &CkksContext, protection: &Protection) -> Result<Self> {
        let Device::Cuda(index) = ctx.device() else {
            return Err(Error::DeviceMismatch {
                op: "ProtectedEvaluator::new",
                lhs: protection.device(),
                rhs: ctx.device(),
            });
        };
        if protection.device() != ctx.device() {
            return Err(Error::DeviceMismatch {
                op: "ProtectedEvaluator::new",
                lhs: ctx.device(),
                rhs: protection.device(),
            });
        }
        Ok(Self {
            ctx: ctx.clone(),
            protection: protection.clone(),
            plan: ctx.ring().all_data_plan(index)?,
            rlk: None,
            galois: None,
        })
    }

    /// With the relinearisation key ([`ProtectedEvaluator::mul_relin`]).
    ///
    /// Errors: [`Error::ParametersMismatch`]; [`Error::DeviceMismatch`] for a key on another
    /// device.
    pub fn with_relinearization_key(
        mut self,
        rlk: impl Into<Arc<RelinearizationKey>>,
    ) -> Result<Self> {
        let rlk = rlk.into();
        self.check_key("with_relinearization_key", rlk.key())?;
        self.rlk = Some(rlk);
        Ok(self)
    }

    /// With Galois keys ([`ProtectedEvaluator::rotate`]).
    ///
    /// Errors: as [`ProtectedEvaluator::with_relinearization_key`].
    pub fn with_galois_keys(mut self, keys: impl Into<Arc<GaloisKeys>>) -> Result<Self> {
        let keys = keys.into();
        self.ctx
            .rlwe()
            .check_id("with_galois_keys", keys.params_id)?;
        for k in keys.keys.values() {
            self.check_key("with_galois_keys", k)?;
        }
        self.galois = Some(keys);
        Ok(self)
    }

    fn check_key(&self, op: &'static str, k: &KeySwitchKey) -> Result<()> {
        self.ctx.rlwe().check_id(op, k.params_id)?;
        let first = k.parts.first().ok_or_else(|| {
            Error::InvalidInput(format!("`{op}`: a key-switching key without digits"))
        })?;
        let device = first[0].device();
        if device != self.ctx.device() {
            return Err(Error::DeviceMismatch {
                op,
                lhs: self.ctx.device(),
                rhs: device,
            });
        }
        Ok(())
    }

    fn session(&self) -> &rhea_cuda::lite::LiteSession {
        self.protection.session()
    }

    fn check(&self, op: &'static str, ct: &ProtectedCiphertext) -> Result<()> {
        self.ctx.rlwe().check_id(op, ct.params_id)?;
        if !self.protection.is_same_session(&ct.protection) {
            return Err(Error::InvalidInput(format!(
                "`{op}`: the ciphertext was protected by another LITE session (its words are \
                 unreadable under this evaluator's keys)"
            )));
        }
        Ok(())
    }

    fn check_two(op: &'static str, ct: &ProtectedCiphertext) -> Result<()> {
        if ct.parts.len() != 2 {
            return Err(Error::CiphertextDegree {
                op,
                expected: 2,
                found: ct.parts.len(),
                hint: "the all-data evaluator works on relinearized (2-component) ciphertexts",
            });
        }
        Ok(())
    }

    fn check_pair(
        &self,
        op: &'static str,
        a: &ProtectedCiphertext,
        b: &ProtectedCiphertext,
    ) -> Result<()> {
        self.check(op, a)?;
        self.check(op, b)?;
        Self::check_two(op, a)?;
        Self::check_two(op, b)?;
        if a.slots != b.slots {
            return Err(Error::SlotMismatch {
                expected: a.slots,
                found: b.slots,
            });
        }
        if a.level() != b.level() {
            return Err(Error::ShapeMismatch {
                op,
                lhs: a.parts[0].shape(),
                rhs: b.parts[0].shape(),
            });
        }
        Ok(())
    }

    /// `ct` in the all-data mode on this evaluator's GPU. A ciphertext in host memory is
    /// encrypted on the host and uploaded as XTS ciphertext (its words never reach the device
    /// in plain); one on the GPU is re-encrypted there into new protected buffers (the plain
    /// one stays the caller's).
    ///
    /// Errors: [`Error::ParametersMismatch`]; [`Error::DeviceMismatch`] for a ciphertext on
    /// another GPU.
    pub fn protect(&self, ct: &Ciphertext) -> Result<ProtectedCiphertext> {
        self.ctx.rlwe().check_id("protect", ct.params_id)?;
        let parts = ct
            .parts
            .iter()
            .map(|p| match p.device() {
                // From host memory: encrypted on the host, uploaded as ciphertext.
                Device::Cpu => self.protection.protect(self.ctx.rlwe(), p),
                Device::Cuda(_) => self
                    .ctx
                    .ring()
                    .all_data_import(self.session(), &self.plan, p),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(ProtectedCiphertext {
            parts,
            scale: ct.scale,
            slots: ct.slots,
            params_id: ct.params_id,
            protection: self.protection.clone(),
        })
    }

    /// The ordinary (plain, public) ciphertext of `ct`, on the GPU: to serialise it, or evaluate
    /// it with [`super::Evaluator`].
    ///
    /// Errors: a ciphertext of another session or parameters.
    pub fn unprotect(&self, ct: &ProtectedCiphertext) -> Result<Ciphertext> {
        self.check("unprotect", ct)?;
        let parts = ct
            .parts
            .iter()
            .map(|p| {
                self.ctx
                    .ring()
                    .all_data_export(self.session(), &self.plan, p)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Ciphertext {
            parts,
            scale: ct.scale,
            slots: ct.slots,
            params_id: ct.params_id,
            seed: None,
        })
    }

    fn add_sub(
        &self,
        op: &'static str,
        ew: EwOp,
        a: &ProtectedCiphertext,
        b: &ProtectedCiphertext,
    ) -> Result<ProtectedCiphertext> {
        self.check_pair(op, a, b)?;
        if !super::evaluator::scales_match(a.scale, b.scale) {
            return Err(Error::ScaleMismatch {
                op,
                lhs_log_scale: a.scale.log2(),
                rhs_log_scale: b.scale.log2(),
            });
        }
        let ring = self.ctx.ring();
        let parts = a
            .parts
            .iter()
            .zip(&b.parts)
            .map(|(x, y)| ring.all_data_binary(self.session(), &self.plan, ew, x, y))
            .collect::<Result<Vec<_>>>()?;
        Ok(a.with_parts(parts, a.scale))
    }

    /// `a + b` (the same level and scale: the all-data evaluator does not align them).
    ///
    /// Errors: [`Error::ScaleMismatch`], [`Error::ShapeMismatch`] for other levels,
    /// [`Error::SlotMismatch`], [`Error::CiphertextDegree`] for 3 components, another session.
    pub fn add(
        &self,
        a: &ProtectedCiphertext,
        b: &ProtectedCiphertext,
    ) -> Result<ProtectedCiphertext> {
        self.add_sub("add", EwOp::Add, a, b)
    }

    /// `a − b` (as [`ProtectedEvaluator::add`]).
    ///
    /// Errors: as [`ProtectedEvaluator::add`].
    pub fn sub(
        &self,
        a: &ProtectedCiphertext,
        b: &ProtectedCiphertext,
    ) -> Result<ProtectedCiphertext> {
        self.add_sub("sub", EwOp::Sub, a, b)
    }

    /// A protected copy of `ct` (re-encrypted at new addresses in the kernels' registers).
    ///
    /// Errors: another session or parameters; the device's.
    pub fn try_clone(&self, ct: &ProtectedCiphertext) -> Result<ProtectedCiphertext> {
        self.check("try_clone", ct)?;
        let ring = self.ctx.ring();
        let parts = ct
            .parts
            .iter()
            .map(|p| ring.all_data_clone(self.session(), &self.plan, p))
            .collect::<Result<Vec<_>>>()?;
        Ok(ct.with_parts(parts, ct.scale))
    }

    fn check_plain(
        &self,
        op: &'static str,
        ct: &ProtectedCiphertext,
        pt: &ProtectedPlaintext,
    ) -> Result<()> {
        self.check(op, ct)?;
        Self::check_two(op, ct)?;
        self.ctx.rlwe().check_id(op, pt.params_id)?;
        if !self.protection.is_same_session(&pt.protection) {
            return Err(Error::InvalidInput(format!(
                "`{op}`: the plaintext was protected by another LITE session"
            )));
        }
        if ct.slots != pt.slots {
            return Err(Error::SlotMismatch {
                expected: ct.slots,
                found: pt.slots,
            });
        }
        if ct.level() != pt.level() {
            return Err(Error::ShapeMismatch {
                op,
                lhs: ct.parts[0].shape(),
                rhs: pt.poly.shape(),
            });
        }
        Ok(())
    }

    /// `ct + pt` for a protected plaintext at the ciphertext's level and scale: the words of
    /// [`super::Evaluator::add_plain`].
    ///
    /// Errors: [`Error::ScaleMismatch`]; [`Error::ShapeMismatch`] for another level;
    /// [`Error::SlotMismatch`]; another session or parameters.
    pub fn add_plain(
        &self,
        ct: &ProtectedCiphertext,
        pt: &ProtectedPlaintext,
    ) -> Result<ProtectedCiphertext> {
        const OP: &str = "add_plain";
        self.check_plain(OP, ct, pt)?;
        if !super::evaluator::scales_match(ct.scale, pt.scale) {
            return Err(Error::ScaleMismatch {
                op: OP,
                lhs_log_scale: ct.scale.log2(),
                rhs_log_scale: pt.scale.log2(),
            });
        }
        let ring = self.ctx.ring();
        let s = self.session();
        let parts = vec![
            ring.all_data_binary(s, &self.plan, EwOp::Add, &ct.parts[0], &pt.poly)?,
            ring.all_data_clone(s, &self.plan, &ct.parts[1])?,
        ];
        Ok(ct.with_parts(parts, ct.scale))
    }

    /// `ct · pt` for a protected plaintext at the ciphertext's level, not rescaled (scale
    /// `Δ_ct·Δ_pt`): the words of a manual-rescale [`super::Evaluator::mul_plain`].
    ///
    /// Errors: as [`ProtectedEvaluator::add_plain`] but for the scales;
    /// [`Error::ScaleOverflow`].
    pub fn mul_plain(
        &self,
        ct: &ProtectedCiphertext,
        pt: &ProtectedPlaintext,
    ) -> Result<ProtectedCiphertext> {
        const OP: &str = "mul_plain";
        self.check_plain(OP, ct, pt)?;
        let scale = ct.scale * pt.scale;
        super::evaluator::check_scale_fits(self.ctx.params(), OP, scale, ct.level())?;
        let ring = self.ctx.ring();
        let parts = ct
            .parts
            .iter()
            .map(|p| ring.all_data_binary(self.session(), &self.plan, EwOp::Mul, p, &pt.poly))
            .collect::<Result<Vec<_>>>()?;
        Ok(ct.with_parts(parts, scale))
    }

    /// Key switching of `d` (NTT form over `Q_ℓ`) with `key`: `(ModDown(Σ d_j·b_j),
    /// ModDown(Σ d_j·a_j))`, all protected.
    fn key_switch(&self, d: &ProtectedPoly, key: &KeySwitchKey) -> Result<[ProtectedPoly; 2]> {
        let ring = self.ctx.ring();
        let s = self.session();
        let digits = ring.all_data_mod_up(s, &self.plan, d)?;
        let [i0, i1] = ring.all_data_inner_product(s, &self.plan, &digits, &key.parts)?;
        drop(digits);
        self.ctx.rlwe().count_keyswitch();
        Ok([
            ring.all_data_mod_down(s, &self.plan, &i0)?,
            ring.all_data_mod_down(s, &self.plan, &i1)?,
        ])
    }

    /// `a · b` relinearised, not rescaled, at scale `a.scale · b.scale`: the words of
    /// [`super::Evaluator::mul_relin`].
    ///
    /// Errors: [`Error::MissingRelinearizationKey`]; as [`ProtectedEvaluator::add`] but for the
    /// scales; [`Error::ScaleOverflow`] when the product's scale does not fit the level.
    pub fn mul_relin(
        &self,
        a: &ProtectedCiphertext,
        b: &ProtectedCiphertext,
    ) -> Result<ProtectedCiphertext> {
        const OP: &str = "mul_relin";
        let rlk = self
            .rlk
            .as_ref()
            .ok_or(Error::MissingRelinearizationKey { op: OP })?;
        self.check_pair(OP, a, b)?;
        let scale = a.scale * b.scale;
        super::evaluator::check_scale_fits(self.ctx.params(), OP, scale, a.level())?;
        let ring = self.ctx.ring();
        let s = self.session();
        let [d0, d1, d2] = ring.all_data_tensor(
            s,
            &self.plan,
            [&a.parts[0], &a.parts[1]],
            [&b.parts[0], &b.parts[1]],
        )?;
        let [u0, u1] = self.key_switch(&d2, rlk.key())?;
        drop(d2);
        let c0 = ring.all_data_binary(s, &self.plan, EwOp::Add, &d0, &u0)?;
        let c1 = ring.all_data_binary(s, &self.plan, EwOp::Add, &d1, &u1)?;
        Ok(a.with_parts(vec![c0, c1], scale))
    }

    /// Divides by the last prime of the level: level − 1, scale / `q_level` (the words of
    /// [`super::Evaluator::rescale`]).
    ///
    /// Errors: [`Error::LevelUnderflow`] at level 0; another session or parameters.
    pub fn rescale(&self, ct: &ProtectedCiphertext) -> Result<ProtectedCiphertext> {
        const OP: &str = "rescale";
        self.check(OP, ct)?;
        if ct.level() == 0 {
            return Err(Error::LevelUnderflow {
                op: OP,
                level: 0,
                needed: 1,
            });
        }
        let q_last = self.ctx.params().q_primes()[ct.level()] as f64;
        let ring = self.ctx.ring();
        let parts = ct
            .parts
            .iter()
            .map(|p| ring.all_data_rescale(self.session(), &self.plan, p))
            .collect::<Result<Vec<_>>>()?;
        Ok(ct.with_parts(parts, ct.scale / q_last))
    }

    /// [`ProtectedEvaluator::mul_relin`] then [`ProtectedEvaluator::rescale`].
    ///
    /// Errors: as the two.
    pub fn mul_relin_rescale(
        &self,
        a: &ProtectedCiphertext,
        b: &ProtectedCiphertext,
    ) -> Result<ProtectedCiphertext> {
        self.rescale(&self.mul_relin(a, b)?)
    }

    /// Rotates the slots left by `step` (right for negative `step`): the words of
    /// [`super::Evaluator::rotate`].
    ///
    /// Errors: [`Error::MissingRotationKey`] without the step's Galois key; another session or
    /// parameters; [`Error::CiphertextDegree`] for 3 components.
    pub fn rotate(&self, ct: &ProtectedCiphertext, step: i64) -> Result<ProtectedCiphertext> {
        const OP: &str = "rotate";
        self.check(OP, ct)?;
        Self::check_two(OP, ct)?;
        let rlwe = self.ctx.rlwe();
        let g = rlwe.galois_element_for_rotation(step);
        if g == 1 {
            return self.try_clone(ct);
        }
        let key = self
            .galois
            .as_ref()
            .and_then(|k| k.get(g))
            .ok_or(Error::MissingRotationKey {
                step,
                galois_element: g,
            })?;
        let ring = self.ctx.ring();
        let s = self.session();
        let [u0, u1] = self.key_switch(&ct.parts[1], key)?;
        let c0 = ring.all_data_binary(s, &self.plan, EwOp::Add, &ct.parts[0], &u0)?;
        let parts = vec![
            ring.all_data_automorphism(s, &self.plan, &c0, g)?,
            ring.all_data_automorphism(s, &self.plan, &u1, g)?,
        ];
        Ok(ct.with_parts(parts, ct.scale))
    }
}

impl ProtectedDecryptor {
    /// The plaintext of an all-data ciphertext (2 or 3 components), in host memory: the
    /// components and the key decrypted in the kernel's registers, the result written as XTS
    /// ciphertext and decrypted on the host (the words of [`ProtectedDecryptor::decrypt`] of
    /// the unprotected ciphertext).
    ///
    /// Errors: [`Error::ParametersMismatch`]; a ciphertext of another session than the key's.
    pub fn decrypt_protected(&self, ct: &ProtectedCiphertext) -> Result<Plaintext> {
        let rlwe = self.ctx.rlwe();
        rlwe.check_id("decrypt_protected", ct.params_id)?;
        if !self.sk.protection().is_same_session(&ct.protection) {
            return Err(Error::InvalidInput(
                "`decrypt_protected`: the ciphertext was protected by another LITE session than \
                 the secret key's"
                    .into(),
            ));
        }
        let parts: Vec<&ProtectedPoly> = ct.parts.iter().collect();
        let poly = rlwe.decrypt_all_data(&self.sk, &parts)?;
        Ok(Plaintext {
            poly,
            scale: ct.scale,
            slots: ct.slots,
            params_id: ct.params_id,
        })
    }
}
