//! LITE's protected mode of the RLWE core (issue 38; `docs/lite.md` "Protected mode"): the
//! secret key lives on the GPU only as AES-XTS ciphertext, and the secret-dependent steps (key
//! generation, decryption, secret-key encryption, plaintext operands) run in kernels that decrypt
//! it in registers. The host, which generates the secret, is trusted; the device's memory is not.
//!
//! Every key and plaintext word is the unprotected path's: the same CSPRNG draws in the same
//! order, the secret key and the error polynomials sampled and transformed on the host (the CPU
//! backend gives the GPU's words), the uniform halves regenerated from their seeds on the device
//! (public), and the element-wise steps exact modular arithmetic.

use std::sync::Arc;

use rhea_cuda::lite::LiteSession;
use rhea_math::sampler::Prng;

use super::{keys, KeySwitchKey, PublicKey, RelinearizationKey, RlweContext, SecretKey};
use crate::backend::{Device, Form, LiteTerm, Poly, ProtectedPoly, Storage};
use crate::error::{Error, Result};

/// A LITE session for one GPU: two AES-128 keys from the operating system's CSPRNG, zeroised on
/// drop, with which the protected mode encrypts what it puts in device memory. Cheap to clone
/// (shared); dropping the last clone makes everything it protected unreadable.
#[derive(Clone, Debug)]
pub struct Protection {
    session: Arc<LiteSession>,
    device: usize,
}

impl Protection {
    /// A fresh session for the GPU of `ctx` (a [`crate::ckks::CkksContext`] or an
    /// [`RlweContext`] on `Device::Cuda(i)`).
    ///
    /// Errors: [`Error::InvalidInput`] for a CPU context (host memory is trusted: nothing to
    /// protect); [`Error::Gpu`] when the OS gives no random bytes.
    pub fn new(ctx: &impl AsRef<RlweContext>) -> Result<Protection> {
        match ctx.as_ref().device() {
            Device::Cuda(device) => Ok(Protection {
                session: Arc::new(LiteSession::new()?),
                device,
            }),
            Device::Cpu => Err(Error::InvalidInput(
                "LITE's protected mode is for a GPU context; a CPU context keeps everything in \
                 (trusted) host memory"
                    .into(),
            )),
        }
    }

    /// The GPU it protects.
    pub fn device(&self) -> Device {
        Device::Cuda(self.device)
    }

    pub(crate) fn session(&self) -> &LiteSession {
        &self.session
    }

    /// Whether `other` is this session (a clone of it): only then can one read what the other
    /// protected.
    pub fn is_same_session(&self, other: &Protection) -> bool {
        Arc::ptr_eq(&self.session, &other.session)
    }

    fn check(&self, rlwe: &RlweContext, op: &'static str) -> Result<()> {
        if rlwe.device() == self.device() {
            Ok(())
        } else {
            Err(Error::DeviceMismatch {
                op,
                lhs: rlwe.device(),
                rhs: self.device(),
            })
        }
    }

    /// `host` (a polynomial in host memory) protected on this GPU.
    pub(crate) fn protect(&self, rlwe: &RlweContext, host: &Poly) -> Result<ProtectedPoly> {
        rlwe.ring().protect(&self.session, self.device, host)
    }
}

/// A secret key in LITE's protected mode: the trusted host copy (which generated it) and, on the
/// GPU, `s` over `Q ∪ P` in NTT form as XTS ciphertext, which the protected kernels decrypt in
/// registers. Its plaintext words are never in device memory.
pub struct ProtectedSecretKey {
    host: SecretKey,
    s_qp: ProtectedPoly,
    protection: Protection,
}

impl std::fmt::Debug for ProtectedSecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProtectedSecretKey")
            .field("params_id", &format_args!("{:016x}", self.host.params_id))
            .field("device", &self.protection.device())
            .finish_non_exhaustive()
    }
}

impl ProtectedSecretKey {
    /// The id of the parameters.
    pub fn params_id(&self) -> u64 {
        self.host.params_id
    }

    /// The key in host memory (e.g. to serialise it, or for a CPU decryptor).
    pub fn host_key(&self) -> &SecretKey {
        &self.host
    }

    /// The session that protects it.
    pub fn protection(&self) -> &Protection {
        &self.protection
    }
}

fn host_words(p: &Poly) -> Result<&[u64]> {
    match &p.storage {
        Storage::Cpu(v) => Ok(v),
        Storage::Cuda(_) => Err(Error::InvalidInput(
            "a protected key's host copy must be in host memory".into(),
        )),
    }
}

impl RlweContext {
    /// This context on the host (the same ring, parameters and key-switching counter).
    pub(crate) fn on_host(&self) -> RlweContext {
        RlweContext {
            device: Device::Cpu,
            ..self.clone()
        }
    }

    /// `host` (a secret key in host memory) protected on `protection`'s GPU.
    ///
    /// Errors: [`Error::ParametersMismatch`]; [`Error::DeviceMismatch`] for a protection of
    /// another GPU than this context's; [`Error::InvalidInput`] for a key on a GPU.
    pub(crate) fn protect_secret_key(
        &self,
        protection: &Protection,
        host: SecretKey,
    ) -> Result<ProtectedSecretKey> {
        self.check_id("protect_secret_key", host.params_id)?;
        protection.check(self, "protect_secret_key")?;
        host_words(&host.s_qp)?;
        let s_qp = protection.protect(self, &host.s_qp)?;
        Ok(ProtectedSecretKey {
            host,
            s_qp,
            protection: protection.clone(),
        })
    }

    /// A fresh secret key, generated on the host (the draws of
    /// [`RlweContext::gen_secret_key`]) and protected on the GPU.
    pub(crate) fn gen_protected_secret_key(
        &self,
        protection: &Protection,
        rng: &mut Prng,
    ) -> Result<ProtectedSecretKey> {
        let host = self.on_host().gen_secret_key(rng)?;
        self.protect_secret_key(protection, host)
    }

    fn check_protected_key(&self, op: &'static str, sk: &ProtectedSecretKey) -> Result<()> {
        self.check_id(op, sk.params_id())?;
        sk.protection.check(self, op)
    }

    /// A Gaussian error over `shape` (NTT form) drawn on the host from `rng` (the words of
    /// [`RnsRing::sample_gaussian`](crate::backend::RnsRing::sample_gaussian) on any device)
    /// and protected; the host copy is zeroised.
    fn protected_error(
        &self,
        protection: &Protection,
        rng: &mut Prng,
        shape: crate::backend::PolyShape,
    ) -> Result<ProtectedPoly> {
        let mut e = self
            .ring
            .sample_gaussian(Device::Cpu, rng, self.sigma, shape)?;
        let p = protection.protect(self, &e);
        e.zeroize();
        p
    }

    /// [`RlweContext::gen_public_key`] with `s` and `e` protected: the same words.
    pub(crate) fn gen_public_key_protected(
        &self,
        sk: &ProtectedSecretKey,
        rng: &mut Prng,
    ) -> Result<PublicKey> {
        self.check_protected_key("gen_public_key", sk)?;
        let shape = self.ring.full_shape();
        let seed = rng.fresh_seed();
        let a = self
            .ring
            .sample_uniform_from_seed(self.device, &seed, 0, shape)?;
        let e = self.protected_error(&sk.protection, rng, shape)?;
        let session = sk.protection.session();
        let b = self
            .ring
            .lite_key_row(session, &a, &e, &sk.s_qp, LiteTerm::None)?;
        Ok(PublicKey {
            parts: [b, a],
            seed,
            params_id: self.params_id,
        })
    }

    /// [`RlweContext::gen_keyswitch_key`] from `s_from` (protected, or `None` for `s²`) to the
    /// protected `s_to`: the same words.
    fn gen_keyswitch_key_protected(
        &self,
        protection: &Protection,
        s_to: &ProtectedPoly,
        s_from: Option<&ProtectedPoly>,
        rng: &mut Prng,
    ) -> Result<KeySwitchKey> {
        let ring = &self.ring;
        let full = ring.full_shape();
        let seed = rng.fresh_seed();
        let mut parts = Vec::with_capacity(ring.dnum());
        for (j, digit) in ring.digits().iter().enumerate() {
            let a = ring.sample_uniform_from_seed(self.device, &seed, j as u64, full)?;
            let e = self.protected_error(protection, rng, full)?;
            let gadget: Vec<u64> = (0..full.limbs())
                .map(|i| {
                    if digit.contains(&i) {
                        ring.p_mod_q()[i]
                    } else {
                        0
                    }
                })
                .collect();
            let term = match s_from {
                Some(x) => LiteTerm::Times(x, &gadget),
                None => LiteTerm::TimesSecretSquared(&gadget),
            };
            let b = ring.lite_key_row(protection.session(), &a, &e, s_to, term)?;
            parts.push([b, a]);
        }
        Ok(KeySwitchKey {
            parts,
            seed,
            params_id: self.params_id,
        })
    }

    /// [`RlweContext::gen_relinearization_key`] with `s` protected (`s²` only in registers).
    pub(crate) fn gen_relinearization_key_protected(
        &self,
        sk: &ProtectedSecretKey,
        rng: &mut Prng,
    ) -> Result<RelinearizationKey> {
        self.check_protected_key("gen_relinearization_key", sk)?;
        let key = self.gen_keyswitch_key_protected(&sk.protection, &sk.s_qp, None, rng)?;
        Ok(RelinearizationKey(key))
    }

    /// [`RlweContext::gen_galois_key`] with `s` protected: `σ_{g^{-1}}(s)` is computed on the
    /// host (which holds `s`), protected, and its host copy zeroised.
    pub(crate) fn gen_galois_key_protected(
        &self,
        sk: &ProtectedSecretKey,
        g: u64,
        rng: &mut Prng,
    ) -> Result<KeySwitchKey> {
        self.check_protected_key("gen_galois_key", sk)?;
        keys::check_galois_element(g, self.ring.n())?;
        let g_inv = self.galois_inverse(g);
        let mut s_to_host = self.ring.automorphism(&sk.host.s_qp, g_inv)?;
        let s_to = sk.protection.protect(self, &s_to_host);
        s_to_host.zeroize();
        let s_to = s_to?;
        self.gen_keyswitch_key_protected(&sk.protection, &s_to, Some(&sk.s_qp), rng)
    }

    /// [`RlweContext::decrypt`] with `s` protected; the result is in host memory (decrypted
    /// there from the ciphertext the GPU wrote).
    pub(crate) fn decrypt_protected(&self, sk: &ProtectedSecretKey, cs: &[Poly]) -> Result<Poly> {
        self.check_protected_key("decrypt", sk)?;
        self.ring
            .lite_decrypt(sk.protection.session(), cs, &sk.s_qp)
    }

    /// [`RlweContext::encrypt_sk`] of a protected plaintext with `s` and `e` protected: the
    /// same words.
    pub(crate) fn encrypt_sk_protected(
        &self,
        sk: &ProtectedSecretKey,
        m: &ProtectedPoly,
        rng: &mut Prng,
    ) -> Result<(Vec<Poly>, [u8; 32])> {
        self.check_protected_key("encrypt", sk)?;
        if m.form != Form::Ntt {
            return Err(Error::FormMismatch {
                op: "encrypt",
                expected: Form::Ntt,
                found: m.form,
            });
        }
        let ring = &self.ring;
        let shape = m.shape;
        let seed = rng.fresh_seed();
        let a = ring.sample_uniform_from_seed(self.device, &seed, 0, shape)?;
        let e = self.protected_error(&sk.protection, rng, shape)?;
        let ones = vec![1u64; shape.limbs()];
        let c0 = ring.lite_key_row(
            sk.protection.session(),
            &a,
            &e,
            &sk.s_qp,
            LiteTerm::Times(m, &ones),
        )?;
        Ok((vec![c0, a], seed))
    }
}
