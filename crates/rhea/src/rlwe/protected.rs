//! LITE's protected mode of the RLWE core (issue 38; `docs/lite.md` "Protected mode"): the
//! secret key lives on the GPU only as AES-XTS ciphertext, and the secret-dependent steps (key
//! generation, decryption, secret-key encryption, plaintext operands) run in kernels that decrypt
//! it in registers. The host, which generates the secret, is trusted; the device's memory is not.
//!
//! Every key and plaintext word is the unprotected path's: the same CSPRNG draws in the same
//! order, the secret key and the error polynomials sampled and transformed on the host (the CPU
//! backend gives the GPU's words), the uniform halves regenerated from their seeds on the device
//! (public), and the element-wise steps exact modular arithmetic.
//!
//! Public-key encryption of a protected plaintext ([`RlweContext::encrypt_pk_protected`]) needs
//! no secret key: its encryption of zero `ModDown(v·pk + e)` (`v`, `e_0`, `e_1` secret, the
//! result public) is computed on the host by the CPU backend (the draws and words of
//! [`RlweContext::encrypt_pk`]), uploaded, and the protected message is added in a kernel.

use std::sync::{Arc, Mutex};

use rhea_cuda::lite::LiteSession;
use rhea_math::sampler::Prng;

use super::{
    keys, GaloisKeys, KeySwitchKey, PublicKey, RelinearizationKey, RlweContext, SecretKey,
};
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
    /// protected `s_to` (both over this context's `Q ∪ P`, NTT form, protected by
    /// `protection`): the same words.
    pub(crate) fn gen_keyswitch_key_protected(
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

    /// [`RlweContext::gen_keyswitch_key`] from the protected `s_from` (over `Q ∪ P`, NTT form,
    /// protected by `sk`'s session) to `sk`: the same words (e.g. bootstrapping's sparse→dense
    /// key).
    pub(crate) fn gen_keyswitch_key_to_protected(
        &self,
        sk: &ProtectedSecretKey,
        s_from: &ProtectedPoly,
        rng: &mut Prng,
    ) -> Result<KeySwitchKey> {
        self.check_protected_key("gen_keyswitch_key", sk)?;
        self.gen_keyswitch_key_protected(&sk.protection, &sk.s_qp, Some(s_from), rng)
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

    /// [`RlweContext::gen_galois_keys`] with `s` protected: the same elements in the same order
    /// ([`RlweContext::galois_elements`]), so the same draws and words.
    pub(crate) fn gen_galois_keys_protected(
        &self,
        sk: &ProtectedSecretKey,
        steps: &[i64],
        conjugation: bool,
        rng: &mut Prng,
    ) -> Result<GaloisKeys> {
        let mut keys = GaloisKeys::empty(self.params_id());
        for g in self.galois_elements(steps, conjugation) {
            keys.insert(g, self.gen_galois_key_protected(sk, g, rng)?)?;
        }
        Ok(keys)
    }

    /// [`RlweContext::decrypt`] with `s` protected; the result is in host memory (decrypted
    /// there from the ciphertext the GPU wrote).
    pub(crate) fn decrypt_protected(&self, sk: &ProtectedSecretKey, cs: &[Poly]) -> Result<Poly> {
        self.check_protected_key("decrypt", sk)?;
        self.ring
            .lite_decrypt(sk.protection.session(), cs, &sk.s_qp)
    }

    /// [`RlweContext::decrypt_protected`] of a ciphertext whose components are protected too
    /// (LITE's all-data mode).
    pub(crate) fn decrypt_all_data(
        &self,
        sk: &ProtectedSecretKey,
        cs: &[&ProtectedPoly],
    ) -> Result<Poly> {
        self.check_protected_key("decrypt", sk)?;
        self.ring
            .all_data_decrypt(sk.protection.session(), cs, &sk.s_qp)
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

impl RlweContext {
    /// The encryption of zero of [`RlweContext::encrypt_pk`] at level `ell` under `pk_host` (a
    /// public key in host memory), computed on the host by the CPU backend:
    /// `(ModDown(v·b + e_0), ModDown(v·a + e_1))` over `Q_ell` (NTT form, host memory), the same
    /// draws from `rng` in the same order (`v`, then `e_0`, `e_1`) and the same words as the
    /// unprotected encryption before it adds `m` ([`RnsRing::encrypt_zero_moddown`] adds `m`
    /// after the ModDowns, in NTT form at level `ell`: one modular addition per word). `v` and
    /// the errors never leave host memory and are zeroised there.
    ///
    /// Errors: [`Error::ParametersMismatch`]; [`Error::InvalidInput`] for a key on a GPU or a
    /// level outside `1..=|Q|`.
    ///
    /// [`RnsRing::encrypt_zero_moddown`]: crate::backend::RnsRing::encrypt_zero_moddown
    pub(crate) fn encrypt_zero_pk_on_host(
        &self,
        pk_host: &PublicKey,
        ell: usize,
        rng: &mut Prng,
    ) -> Result<[Poly; 2]> {
        self.check_id("encrypt", pk_host.params_id)?;
        if pk_host.parts.iter().any(|p| p.device() != Device::Cpu) {
            return Err(Error::InvalidInput(
                "encrypt: the host copy of the public key must be in host memory".into(),
            ));
        }
        self.ring
            .encrypt_zero_moddown(Device::Cpu, rng, self.sigma, ell, &pk_host.parts, None)
    }

    /// [`RlweContext::encrypt_pk`] of a protected plaintext `m` (NTT form, Q limbs only, at any
    /// level `ℓ`) with `v`, `e_0`, `e_1` and `m` never in device memory in the clear: the
    /// encryption of zero is computed on the host ([`RlweContext::encrypt_zero_pk_on_host`]),
    /// uploaded (it is a public ciphertext), and `m` is added to its `c_0` in a kernel that
    /// decrypts `m` in registers ([`RnsRing::lite_plain_assign`]). The same words as
    /// [`RlweContext::encrypt_pk`] from the same `rng` state.
    ///
    /// Errors: [`Error::ParametersMismatch`]; [`Error::DeviceMismatch`] for a protection of
    /// another device than this context's, or `m` on another GPU; [`Error::FormMismatch`] for
    /// `m` not in NTT form; [`Error::ShapeMismatch`] for `m` with `P` limbs.
    ///
    /// [`RnsRing::lite_plain_assign`]: crate::backend::RnsRing::lite_plain_assign
    pub(crate) fn encrypt_pk_protected(
        &self,
        protection: &Protection,
        pk_host: &PublicKey,
        m: &ProtectedPoly,
        rng: &mut Prng,
    ) -> Result<Vec<Poly>> {
        const OP: &str = "encrypt";
        self.check_id(OP, pk_host.params_id)?;
        protection.check(self, OP)?;
        if m.device() != self.device {
            return Err(Error::DeviceMismatch {
                op: OP,
                lhs: self.device,
                rhs: m.device(),
            });
        }
        if m.form != Form::Ntt {
            return Err(Error::FormMismatch {
                op: OP,
                expected: Form::Ntt,
                found: m.form,
            });
        }
        let ell = m.shape.q_limbs;
        if m.shape.p_limbs != 0 {
            return Err(Error::ShapeMismatch {
                op: OP,
                lhs: self.ring.shape_q(ell),
                rhs: m.shape,
            });
        }
        let zero = self.encrypt_zero_pk_on_host(pk_host, ell, rng)?;
        let mut parts = Vec::with_capacity(2);
        for c in &zero {
            parts.push(self.ring.transfer(c, self.device)?);
        }
        self.ring
            .lite_plain_assign(protection.session(), &mut parts[0], m, false)?;
        Ok(parts)
    }
}

/// The state of a protected key generator, shared by the CKKS and BGV façades: the context (a
/// GPU one), the session, and the ChaCha20 CSPRNG whose draws are the unprotected generator's
/// (the same seed gives the same keys).
pub(crate) struct ProtectedKeyGenCore {
    rlwe: RlweContext,
    protection: Protection,
    prng: Prng,
}

impl ProtectedKeyGenCore {
    /// A generator for `rlwe` with `prng` (`op` names the façade's constructor in errors).
    ///
    /// Errors: [`Error::DeviceMismatch`] for a protection of another device than `rlwe`'s (a
    /// CPU context included).
    pub(crate) fn new(
        op: &'static str,
        rlwe: &RlweContext,
        protection: &Protection,
        prng: Prng,
    ) -> Result<Self> {
        protection.check(rlwe, op)?;
        Ok(Self {
            rlwe: rlwe.clone(),
            protection: protection.clone(),
            prng,
        })
    }

    /// The CSPRNG (for keys made outside the RLWE core, e.g. bootstrapping's encapsulation
    /// keys: the draws continue the same stream).
    pub(crate) fn prng(&mut self) -> &mut Prng {
        &mut self.prng
    }

    /// A fresh secret key: generated on the host, protected on the GPU.
    pub(crate) fn secret_key(&mut self) -> Result<ProtectedSecretKey> {
        self.rlwe
            .gen_protected_secret_key(&self.protection, &mut self.prng)
    }

    /// The public key of `sk`.
    pub(crate) fn public_key(&mut self, sk: &ProtectedSecretKey) -> Result<PublicKey> {
        self.rlwe.gen_public_key_protected(sk, &mut self.prng)
    }

    /// The relinearisation key of `sk`.
    pub(crate) fn relinearization_key(
        &mut self,
        sk: &ProtectedSecretKey,
    ) -> Result<RelinearizationKey> {
        self.rlwe
            .gen_relinearization_key_protected(sk, &mut self.prng)
    }

    /// The Galois key for element `g`.
    pub(crate) fn galois_key_for_element(
        &mut self,
        sk: &ProtectedSecretKey,
        g: u64,
    ) -> Result<KeySwitchKey> {
        self.rlwe.gen_galois_key_protected(sk, g, &mut self.prng)
    }

    /// Galois keys for rotations by `steps` and, if `conjugation`, for `2N − 1`.
    pub(crate) fn galois_keys(
        &mut self,
        sk: &ProtectedSecretKey,
        steps: &[i64],
        conjugation: bool,
    ) -> Result<GaloisKeys> {
        self.rlwe
            .gen_galois_keys_protected(sk, steps, conjugation, &mut self.prng)
    }
}

/// The key a protected encryptor encrypts under.
enum ProtectedEncryptionKey {
    /// A protected secret key (its session is the key's).
    Secret(Arc<ProtectedSecretKey>),
    /// A public key, held in host memory (the encryption of zero is computed there), and the
    /// session whose plaintexts it encrypts.
    Public {
        host: Box<PublicKey>,
        protection: Protection,
    },
}

/// The key and the mutex-guarded CSPRNG of a protected encryptor (the CKKS and BGV façades'):
/// secret-key ([`RlweContext::encrypt_sk_protected`]) or public-key
/// ([`RlweContext::encrypt_pk_protected`]) encryption of a protected NTT-form polynomial.
pub(crate) struct ProtectedEncryptorCore {
    key: ProtectedEncryptionKey,
    prng: Mutex<Prng>,
}

impl ProtectedEncryptorCore {
    /// A secret-key encryptor (OS-seeded).
    pub(crate) fn secret(sk: Arc<ProtectedSecretKey>) -> Result<Self> {
        Ok(Self {
            key: ProtectedEncryptionKey::Secret(sk),
            prng: Mutex::new(Prng::from_os()?),
        })
    }

    /// A public-key encryptor (OS-seeded) for `rlwe` (a GPU context) and the plaintexts
    /// protected by `protection`; `pk` (on any device) is copied to host memory here, once.
    ///
    /// Errors: [`Error::DeviceMismatch`] for a protection of another device than `rlwe`'s (a
    /// CPU context included); [`Error::ParametersMismatch`]; the device's errors.
    pub(crate) fn public(
        op: &'static str,
        rlwe: &RlweContext,
        pk: &PublicKey,
        protection: &Protection,
    ) -> Result<Self> {
        protection.check(rlwe, op)?;
        rlwe.check_id(op, pk.params_id())?;
        let host = Box::new(pk.to_device(&rlwe.on_host())?);
        Ok(Self {
            key: ProtectedEncryptionKey::Public {
                host,
                protection: protection.clone(),
            },
            prng: Mutex::new(Prng::from_os()?),
        })
    }

    /// The same key with an explicitly seeded stream (reproducible tests only).
    pub(crate) fn with_seed(self, seed: [u8; 32]) -> Self {
        Self {
            prng: Mutex::new(Prng::from_seed(seed)),
            ..self
        }
    }

    /// Whether it encrypts under a (protected) secret key; a public key otherwise.
    pub(crate) fn uses_secret_key(&self) -> bool {
        matches!(self.key, ProtectedEncryptionKey::Secret(_))
    }

    fn protection(&self) -> &Protection {
        match &self.key {
            ProtectedEncryptionKey::Secret(sk) => sk.protection(),
            ProtectedEncryptionKey::Public { protection, .. } => protection,
        }
    }

    /// Encrypts the protected `m` (protected by `m_protection`): the components, and the seed
    /// of the uniform half under a secret key (`None` under a public key).
    ///
    /// Errors: [`Error::InvalidInput`] for a plaintext of another session than the key's (or
    /// the one the public-key encryptor was made for: its ciphertext would not decrypt); those
    /// of the two encryptions.
    pub(crate) fn encrypt(
        &self,
        rlwe: &RlweContext,
        m: &ProtectedPoly,
        m_protection: &Protection,
    ) -> Result<(Vec<Poly>, Option<[u8; 32]>)> {
        if !m_protection.is_same_session(self.protection()) {
            return Err(Error::InvalidInput(
                "ProtectedEncryptor::encrypt: the plaintext and the encryptor are protected by \
                 different sessions (use one Protection for both)"
                    .into(),
            ));
        }
        let mut prng = self
            .prng
            .lock()
            .map_err(|_| Error::InvalidInput("the encryptor's CSPRNG lock is poisoned".into()))?;
        match &self.key {
            ProtectedEncryptionKey::Secret(sk) => {
                let (parts, seed) = rlwe.encrypt_sk_protected(sk, m, &mut prng)?;
                Ok((parts, Some(seed)))
            }
            ProtectedEncryptionKey::Public { host, protection } => Ok((
                rlwe.encrypt_pk_protected(protection, host, m, &mut prng)?,
                None,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use rhea_math::sampler::Prng;

    use crate::backend::Device;
    use crate::error::Error;
    use crate::params::CkksParametersLiteral;

    /// The protected public-key encryption's decomposition on the CPU: the host encryption of
    /// zero plus `m` (one modular addition, as the kernel adds it) is
    /// [`super::RlweContext::encrypt_pk`]'s ciphertext word for word, at three levels with
    /// three seeds (and `c_0` differs before `m` is added: the comparison can fail).
    #[test]
    fn encryption_of_zero_plus_m_is_the_public_key_encryption() {
        let params = CkksParametersLiteral::test_n13_levels10_insecure()
            .build()
            .unwrap();
        let ctx = crate::ckks::CkksContext::new(&params, Device::Cpu).unwrap();
        let rlwe = ctx.rlwe();
        let ring = rlwe.ring();
        let mut kg = Prng::from_seed([3; 32]);
        let sk = rlwe.gen_secret_key(&mut kg).unwrap();
        let pk = rlwe.gen_public_key(&sk, &mut kg).unwrap();
        for (ell, seed) in [(ring.q_len(), 11u8), (1, 12), (4, 13)] {
            let shape = ring.shape_q(ell);
            let m = ring
                .sample_uniform_from_seed(Device::Cpu, &[seed ^ 0x5a; 32], 0, shape)
                .unwrap();
            let want = rlwe
                .encrypt_pk(&pk, &m, &mut Prng::from_seed([seed; 32]))
                .unwrap();
            let [mut c0, c1] = rlwe
                .encrypt_zero_pk_on_host(&pk, ell, &mut Prng::from_seed([seed; 32]))
                .unwrap();
            assert_ne!(
                ring.download(&c0).unwrap(),
                ring.download(&want[0]).unwrap(),
                "level {ell}: c0 before adding m"
            );
            ring.add_assign(&mut c0, &m).unwrap();
            assert_eq!(want.len(), 2);
            assert_eq!(
                ring.download(&c0).unwrap(),
                ring.download(&want[0]).unwrap(),
                "level {ell}: c0"
            );
            assert_eq!(
                ring.download(&c1).unwrap(),
                ring.download(&want[1]).unwrap(),
                "level {ell}: c1"
            );
            assert_eq!(c0.shape(), shape);
        }
        // A key of other parameters and a level outside 1..=|Q| are refused.
        let other = CkksParametersLiteral::n13_logqp200_levels2()
            .build()
            .unwrap();
        let octx = crate::ckks::CkksContext::new(&other, Device::Cpu).unwrap();
        let osk = octx.rlwe().gen_secret_key(&mut kg).unwrap();
        let opk = octx.rlwe().gen_public_key(&osk, &mut kg).unwrap();
        assert!(matches!(
            rlwe.encrypt_zero_pk_on_host(&opk, 1, &mut kg),
            Err(Error::ParametersMismatch { .. })
        ));
        assert!(matches!(
            rlwe.encrypt_zero_pk_on_host(&pk, 0, &mut kg),
            Err(Error::InvalidInput(_))
        ));
        assert!(matches!(
            rlwe.encrypt_zero_pk_on_host(&pk, ring.q_len() + 1, &mut kg),
            Err(Error::InvalidInput(_))
        ));
    }
}
