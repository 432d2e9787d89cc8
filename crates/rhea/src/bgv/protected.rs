//! LITE's protected mode for a BGV context on a GPU (issue 38; `docs/lite.md` "Protected
//! mode"): key generation, secret- and public-key encryption and decryption with the secret
//! key, the errors, the plaintexts and the decrypted phases only ever in device memory as
//! AES-XTS ciphertext. The RLWE steps are the scheme-independent protected core's (the CKKS
//! façade's too); what is BGV's is shared with the unprotected [`super::Encryptor`] and
//! [`super::Decryptor`]: a plaintext `m` is encrypted as `t^{-1}·m mod Q_ℓ` (computed on the
//! host, then protected), and a decryption's `Σ ĉ_i·s^i` (written encrypted on the GPU,
//! decrypted on the host) is multiplied by `t`, centred and reduced modulo `t` on the host,
//! with the ciphertext's correction factor divided out and the noise budget measured. A
//! protected plaintext is also an operand of a ciphertext ([`ProtectedPlaintext::add_to`],
//! [`ProtectedPlaintext::multiply`]), with the evaluator's bookkeeping
//! (`evaluator/protected_plain.rs`).
//!
//! ```no_run
//! use rhea::bgv::{BgvContext, BgvParametersLiteral, Encoder, Evaluator, ProtectedDecryptor,
//!                 ProtectedEncryptor, ProtectedKeyGenerator, ProtectedPlaintext};
//! use rhea::rlwe::Protection;
//! use rhea::Device;
//!
//! let params = BgvParametersLiteral::test_n12_levels5_insecure().build()?;
//! let gpu = BgvContext::new(&params, Device::Cuda(0))?;
//! let host = BgvContext::new(&params, Device::Cpu)?; // encoding and decoding stay on the host
//! let protection = Protection::new(&gpu)?; // session keys from the OS CSPRNG
//! let mut keygen = ProtectedKeyGenerator::new(&gpu, &protection)?;
//! let sk = std::sync::Arc::new(keygen.secret_key()?); // on the GPU only as ciphertext
//! let rlk = keygen.relinearization_key(&sk)?; // public: plain, usable by any evaluator
//! let pk = keygen.public_key(&sk)?;
//! let encoder = Encoder::new(&host)?;
//! let x = ProtectedPlaintext::new(&gpu, &protection, &encoder.encode(&[3, 4])?)?;
//! let y = ProtectedPlaintext::new(&gpu, &protection, &encoder.encode(&[5, 6])?)?;
//! let x = ProtectedEncryptor::new(&gpu, sk.clone())?.encrypt(&x)?;
//! // Or under the public key (no secret key needed; the same words as `Encryptor::new`'s):
//! let y = ProtectedEncryptor::with_public_key(&gpu, &pk, &protection)?.encrypt(&y)?;
//! let eval = Evaluator::new(&gpu).with_relinearization_key(rlk)?;
//! let z = eval.mul(&x, &y)?; // evaluation is unchanged
//! let dec = ProtectedDecryptor::new(&gpu, sk)?;
//! let out = dec.decrypt(&z)?; // in host memory
//! assert_eq!(&encoder.decode(&out)?[..2], &[15, 24]);
//! // A protected plaintext as an operand (`add_plain`'s and `mul_plain`'s words):
//! let w = ProtectedPlaintext::new(&gpu, &protection, &encoder.encode(&[2, 10])?)?;
//! let z = w.add_to(&eval, &w.multiply(&eval, &z)?)?; // z·w + w
//! assert_eq!(&encoder.decode(&dec.decrypt(&z)?)?[..2], &[32, 250]);
//! # Ok::<(), rhea::Error>(())
//! ```

use std::sync::Arc;

use rhea_math::sampler::Prng;

use super::evaluator::PlainInfo;
use super::keygen::{self, inner_sum_steps};
use super::{BgvContext, Ciphertext, Decrypted, Evaluator, Plaintext};
use crate::backend::{Device, ProtectedPoly};
use crate::error::{Error, Result};
use crate::rlwe::{
    GaloisKeys, KeySwitchKey, ProtectedEncryptorCore, ProtectedKeyGenCore, ProtectedSecretKey,
    Protection, PublicKey, RelinearizationKey,
};

/// [`super::KeyGenerator`] in protected mode: the same draws from its ChaCha20 CSPRNG, so the
/// same seed gives the same secret key and the same public, relinearisation and Galois key words
/// as the unprotected generator; the secret key and the error polynomials are generated on the
/// host and reach the GPU only as ciphertext. The keys are the RLWE core's, as BGV's always are.
pub struct ProtectedKeyGenerator {
    ctx: BgvContext,
    core: ProtectedKeyGenCore,
}

impl ProtectedKeyGenerator {
    /// A generator seeded from the operating system, for a GPU context.
    ///
    /// Errors: [`Error::DeviceMismatch`] for a protection of another device than `ctx`'s (a
    /// CPU context included: its memory is trusted, use [`super::KeyGenerator`]).
    pub fn new(ctx: &BgvContext, protection: &Protection) -> Result<Self> {
        Self::with_prng(ctx, protection, Prng::from_os()?)
    }

    /// A generator with an explicit seed (tests; see [`super::KeyGenerator::from_seed`]).
    ///
    /// Errors: as [`ProtectedKeyGenerator::new`].
    pub fn from_seed(ctx: &BgvContext, protection: &Protection, seed: [u8; 32]) -> Result<Self> {
        Self::with_prng(ctx, protection, Prng::from_seed(seed))
    }

    fn with_prng(ctx: &BgvContext, protection: &Protection, prng: Prng) -> Result<Self> {
        let op = "ProtectedKeyGenerator::new";
        Ok(Self {
            ctx: ctx.clone(),
            core: ProtectedKeyGenCore::new(op, ctx.rlwe(), protection, prng)?,
        })
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

    /// Galois keys for row rotations by each of `steps` and, if `column_swap`, for the swap of
    /// the two rows (the elements and order of [`super::KeyGenerator::galois_keys`]).
    pub fn galois_keys(
        &mut self,
        sk: &ProtectedSecretKey,
        steps: &[i64],
        column_swap: bool,
    ) -> Result<GaloisKeys> {
        self.core.galois_keys(sk, steps, column_swap)
    }

    /// The Galois key for element `g`.
    pub fn galois_key_for_element(
        &mut self,
        sk: &ProtectedSecretKey,
        g: u64,
    ) -> Result<KeySwitchKey> {
        self.core.galois_key_for_element(sk, g)
    }

    /// The Galois keys [`super::Evaluator::inner_sum`] needs (those of
    /// [`super::KeyGenerator::inner_sum_keys`]).
    pub fn inner_sum_keys(&mut self, sk: &ProtectedSecretKey) -> Result<GaloisKeys> {
        let steps = inner_sum_steps(&self.ctx);
        self.galois_keys(sk, &steps, true)
    }
}

/// A BGV plaintext protected on a GPU: encoded on the host (a [`Plaintext`] in host memory,
/// e.g. from an [`super::Encoder`] of a CPU context), turned there into what the RLWE core
/// encrypts (`t^{-1}·m mod Q_ℓ`, the unprotected encryptor's words) and uploaded as ciphertext,
/// so none of its words crosses the bus or sits in device memory in the clear. An operand of
/// [`ProtectedEncryptor::encrypt`], [`ProtectedPlaintext::add_to`] and
/// [`ProtectedPlaintext::multiply`].
#[derive(Debug)]
pub struct ProtectedPlaintext {
    /// `t^{-1}·m mod Q_ℓ`, NTT form: the one form every use needs scaled at most by public
    /// per-limb scalars on the other operand's side. Encryption adds it as it is; adding it to
    /// a ciphertext `ĉ = t^{-1}·c` adds `t^{-1}·m` to `ĉ_0` (as [`super::Evaluator::add_plain`]
    /// does, by `mul_scalar_add` with `t^{-1}`); a product `ĉ_i·t^{-1}·m` is multiplied by `t`
    /// afterwards (`ĉ_i·m`, [`super::Evaluator::mul_plain`]'s words). Protecting `m` instead
    /// would make encryption and addition need a kernel that scales the protected operand.
    poly: ProtectedPoly,
    log_norm: f64,
    params_id: u64,
    protection: Protection,
}

impl ProtectedPlaintext {
    /// `pt` (in host memory) protected on the GPU of `ctx`.
    ///
    /// Errors: [`Error::InvalidInput`] for a plaintext on a GPU (already plaintext in device
    /// memory: encode it with an encoder of a CPU context); [`Error::ParametersMismatch`];
    /// [`Error::DeviceMismatch`] for a protection of another device.
    pub fn new(ctx: &BgvContext, protection: &Protection, pt: &Plaintext) -> Result<Self> {
        const OP: &str = "ProtectedPlaintext::new";
        ctx.rlwe().check_id(OP, pt.params_id)?;
        if ctx.device() != protection.device() {
            return Err(Error::DeviceMismatch {
                op: OP,
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
        // `t^{-1}·m` on the host (the words of `Encryptor::encrypt`'s), protected, zeroised.
        let mut m = keygen::encryption_input(ctx, &pt.poly)?;
        let poly = protection.protect(ctx.rlwe(), &m);
        m.zeroize();
        Ok(Self {
            poly: poly?,
            log_norm: pt.log_norm,
            params_id: pt.params_id,
            protection: protection.clone(),
        })
    }

    /// The level.
    pub fn level(&self) -> usize {
        self.poly.shape().q_limbs - 1
    }

    /// `log2` of the noise model's bound on `m` (the encoded plaintext's).
    pub fn log_norm(&self) -> f64 {
        self.log_norm
    }

    /// The id of the parameters.
    pub fn params_id(&self) -> u64 {
        self.params_id
    }

    fn info(&self) -> PlainInfo {
        PlainInfo {
            level: self.level(),
            log_norm: self.log_norm,
            params_id: self.params_id,
        }
    }

    /// Fails unless `eval`'s context and `ct` are on this plaintext's GPU (a ciphertext without
    /// components is left to the evaluator's degree check).
    fn check_device(&self, op: &'static str, eval: &Evaluator, ct: &Ciphertext) -> Result<()> {
        let here = self.poly.device();
        let there = [
            Some(eval.context().device()),
            ct.parts.first().map(|p| p.device()),
        ];
        for device in there.into_iter().flatten() {
            if device != here {
                return Err(Error::DeviceMismatch {
                    op,
                    lhs: device,
                    rhs: here,
                });
            }
        }
        Ok(())
    }

    /// `ct + pt`: the words, correction factor and noise bound of
    /// [`super::Evaluator::add_plain`] with the unprotected plaintext, `m` decrypted only in
    /// registers. As there, a ciphertext above the plaintext's level is brought down to it
    /// (the evaluator's choice of switching or dropping), a plaintext above the ciphertext's is
    /// read at the ciphertext's level, and a ciphertext whose factor is not 1 is balanced
    /// (scaled by small `r_c`, the plaintext by `r_p`; the plaintext's scaling is done on the
    /// ciphertext's words around the kernel: see `Evaluator::add_lifted_plain`). Takes the
    /// evaluator, not the context, for its noise checks and level alignment.
    ///
    /// Errors: [`Error::DeviceMismatch`] for an evaluator or a ciphertext not on this
    /// plaintext's GPU; [`Error::ParametersMismatch`]; [`Error::CiphertextDegree`];
    /// [`Error::NoiseBudgetExhausted`] (with the evaluator's checks on).
    pub fn add_to(&self, eval: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext> {
        const OP: &str = "ProtectedPlaintext::add_to";
        self.check_device(OP, eval, ct)?;
        let ring = eval.context().ring();
        let session = self.protection.session();
        eval.add_lifted_plain(OP, ct, &self.info(), |c0| {
            ring.lite_plain_assign(session, c0, &self.poly, false)
        })
    }

    /// `ct · pt`, slot by slot: the words, factor and noise bound of
    /// [`super::Evaluator::mul_plain`] with the unprotected plaintext (levels aligned as
    /// there, and one modulus switch after it when the evaluator is in auto mode), `m`
    /// decrypted only in registers. Each component is multiplied by `t^{-1}·m` in the kernel
    /// and then by `t` (a public per-limb scalar): one element-wise pass per component more
    /// than the unprotected product.
    ///
    /// Errors: as [`ProtectedPlaintext::add_to`].
    pub fn multiply(&self, eval: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext> {
        const OP: &str = "ProtectedPlaintext::multiply";
        self.check_device(OP, eval, ct)?;
        let ring = eval.context().ring();
        let session = self.protection.session();
        eval.mul_lifted_plain(OP, ct, &self.info(), |c| {
            ring.lite_plain_assign(session, c, &self.poly, true)
        })
    }
}

/// Encryption of protected BGV plaintexts, with a protected secret key or a public key: the
/// words of [`super::Encryptor::with_secret_key`] and [`super::Encryptor::new`] for the same
/// seed (correction factor 1, the same noise bound), the RLWE encryption of `t^{-1}·m` done as
/// in the CKKS façade ([`crate::ckks::ProtectedEncryptor`]: under a secret key `s`, `e` and `m`
/// are decrypted only in registers; under a public key the encryption of zero is computed on
/// the host and `m` is added in a kernel).
pub struct ProtectedEncryptor {
    ctx: BgvContext,
    core: ProtectedEncryptorCore,
}

impl ProtectedEncryptor {
    /// A secret-key encryptor for `sk` (OS-seeded randomness); `sk` is the key or an `Arc` of
    /// it.
    ///
    /// Errors: [`Error::ParametersMismatch`] for a key of other parameters.
    pub fn new(ctx: &BgvContext, sk: impl Into<Arc<ProtectedSecretKey>>) -> Result<Self> {
        let sk = sk.into();
        ctx.rlwe()
            .check_id("ProtectedEncryptor::new", sk.params_id())?;
        Ok(Self {
            ctx: ctx.clone(),
            core: ProtectedEncryptorCore::secret(sk)?,
        })
    }

    /// A public-key encryptor (OS-seeded randomness) for the plaintexts protected by
    /// `protection`, on the GPU of `ctx`. `pk` (on any device) is copied to host memory once,
    /// here.
    ///
    /// Errors: [`Error::DeviceMismatch`] for a protection of another device than `ctx`'s (a
    /// CPU context included: use [`super::Encryptor`]); [`Error::ParametersMismatch`]; the
    /// device's errors.
    pub fn with_public_key(
        ctx: &BgvContext,
        pk: &PublicKey,
        protection: &Protection,
    ) -> Result<Self> {
        let op = "ProtectedEncryptor::with_public_key";
        Ok(Self {
            ctx: ctx.clone(),
            core: ProtectedEncryptorCore::public(op, ctx.rlwe(), pk, protection)?,
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

    /// Encrypts `pt` at its level (correction factor 1): under a secret key its `ĉ_1` is seeded
    /// (as [`super::Encryptor::with_secret_key`]'s), under a public key it is not.
    ///
    /// Errors: [`Error::ParametersMismatch`]; [`Error::InvalidInput`] for a plaintext protected
    /// by another [`Protection`] than the key's or the one given to
    /// [`ProtectedEncryptor::with_public_key`].
    pub fn encrypt(&self, pt: &ProtectedPlaintext) -> Result<Ciphertext> {
        let rlwe = self.ctx.rlwe();
        rlwe.check_id("encrypt", pt.params_id)?;
        let (parts, seed) = self.core.encrypt(rlwe, &pt.poly, &pt.protection)?;
        let secret = self.core.uses_secret_key();
        Ok(keygen::fresh_ciphertext(
            &self.ctx,
            pt.log_norm,
            pt.params_id,
            parts,
            seed,
            secret,
        ))
    }
}

/// [`super::Decryptor`] in protected mode: `Σ ĉ_i·s^i` (2 or 3 components) is computed on the
/// GPU with `s` protected, written there as ciphertext and decrypted on the host, where it is
/// multiplied by `t`, centred and reduced modulo `t` (the unprotected decryptor's code): the
/// phase and the message exist only in host memory. The same results and errors as
/// [`super::Decryptor`] (noise budget included).
pub struct ProtectedDecryptor {
    ctx: BgvContext,
    sk: Arc<ProtectedSecretKey>,
}

impl ProtectedDecryptor {
    /// A decryptor for `sk` (the key or an `Arc` of it).
    ///
    /// Errors: [`Error::ParametersMismatch`].
    pub fn new(ctx: &BgvContext, sk: impl Into<Arc<ProtectedSecretKey>>) -> Result<Self> {
        let sk = sk.into();
        ctx.rlwe()
            .check_id("ProtectedDecryptor::new", sk.params_id())?;
        Ok(Self {
            ctx: ctx.clone(),
            sk,
        })
    }

    fn phase(&self, op: &'static str, ct: &Ciphertext) -> Result<keygen::Phase> {
        keygen::phase(&self.ctx, op, ct, |parts| {
            self.ctx.rlwe().decrypt_protected(&self.sk, parts)
        })
    }

    /// The measured noise budget of `ct` (see [`super::Decryptor::noise_budget`]).
    ///
    /// Errors: as [`ProtectedDecryptor::decrypt`], the budget check apart.
    pub fn noise_budget(&self, ct: &Ciphertext) -> Result<Option<u32>> {
        let phase = self.phase("noise_budget", ct)?;
        Ok(keygen::reported_budget(&self.ctx, ct, &phase))
    }

    /// Decrypts `ct` to `m mod t` in host memory, checking the measured noise budget (see
    /// [`super::Decryptor::decrypt`]).
    ///
    /// Errors: [`Error::NoiseBudgetExhausted`]; [`Error::ParametersMismatch`];
    /// [`Error::CiphertextDegree`] for other than 2 or 3 components; a ciphertext not on the
    /// key's GPU.
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<Decrypted> {
        let phase = self.phase("decrypt", ct)?;
        keygen::decrypted(&self.ctx, ct, phase)
    }
}

/// On the CPU (no GPU here: the protected kernels are checked word for word against the
/// unprotected RLWE core by `tests/gpu_protected.rs`), the BGV half of the façade: the words it
/// hands the protected RLWE core and what it does with the core's results, composed with the
/// unprotected core's steps the kernels replace, give exactly [`super::Encryptor`]'s and
/// [`super::Decryptor`]'s results, and the messages.
#[cfg(test)]
mod tests {
    use rhea_math::sampler::Prng;

    use super::keygen;
    use crate::backend::Device;
    use crate::bgv::{
        BgvContext, BgvParametersLiteral, Ciphertext, Decryptor, Encoder, Encryptor, Evaluator,
        KeyGenerator,
    };
    use crate::rlwe::Protection;

    fn context() -> BgvContext {
        let params = BgvParametersLiteral::test_n12_levels5_insecure()
            .build()
            .unwrap();
        BgvContext::new(&params, Device::Cpu).unwrap()
    }

    /// `n` pseudo-random values modulo `t` (splitmix64 from `seed`).
    fn random_values(n: usize, t: u64, seed: u64) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = x;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                (z ^ (z >> 31)) % t
            })
            .collect()
    }

    fn words(ctx: &BgvContext, ct: &Ciphertext) -> Vec<Vec<u64>> {
        ct.parts
            .iter()
            .map(|p| ctx.ring().download(p).unwrap())
            .collect()
    }

    #[test]
    fn protection_refuses_a_cpu_context() {
        assert!(matches!(
            Protection::new(&context()),
            Err(crate::Error::InvalidInput(_))
        ));
    }

    /// The Galois elements the protected generator walks (`RlweContext::galois_elements`) are
    /// the unprotected generator's keys, in the order that fixes the draws: distinct, identity
    /// and repeats skipped, the column swap last.
    #[test]
    fn the_protected_galois_elements_are_the_unprotected_keys() {
        let ctx = context();
        let rlwe = ctx.rlwe();
        let half = (ctx.params().n() / 2) as i64;
        let steps = [1, -3, 1, half, 2 * half + 1, 5];
        let elements = rlwe.galois_elements(&steps, true);
        let mut kg = KeyGenerator::from_seed(&ctx, [1; 32]);
        let sk = kg.secret_key().unwrap();
        let keys = kg.galois_keys(&sk, &steps, true).unwrap();
        let mut sorted = elements.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, keys.elements());
        assert_eq!(elements.len(), 4, "{elements:?}"); // 1 (twice, and 2N/2+1), -3, 5, swap
        assert_eq!(elements[0], rlwe.galois_element_for_rotation(1));
        assert_eq!(elements[3], rlwe.galois_element_for_conjugation());
        let sums = rlwe.galois_elements(&keygen::inner_sum_steps(&ctx), true);
        let mut sorted = sums.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, kg.inner_sum_keys(&sk).unwrap().elements());
    }

    /// Secret- and public-key encryption of random messages at three levels, decomposed as the
    /// protected path runs them (`t^{-1}·m` made on the host; the secret-key RLWE encryption of
    /// it; the host encryption of zero plus it, the public-key kernel's one addition): the
    /// words, seed and noise bound of `Encryptor`'s ciphertexts; the decryption through the
    /// shared phase code gives the messages exactly, and so does a mul+relin of two of them.
    #[test]
    fn the_protected_encryption_steps_give_the_unprotected_ciphertexts() {
        let ctx = context();
        let rlwe = ctx.rlwe();
        let ring = ctx.ring();
        let t = ctx.t();
        let mut kg = KeyGenerator::from_seed(&ctx, [2; 32]);
        let sk = kg.secret_key().unwrap();
        let pk = kg.public_key(&sk).unwrap();
        let rlk = kg.relinearization_key(&sk).unwrap();
        let eval = Evaluator::new(&ctx).with_relinearization_key(rlk).unwrap();
        let encoder = Encoder::new(&ctx).unwrap();
        let dec = Decryptor::new(&ctx, &sk).unwrap();
        let top = ctx.params().max_level();
        for (k, level) in [top, 2, 1].into_iter().enumerate() {
            let seed = [10 + k as u8; 32];
            let xs = random_values(encoder.slots(), t, 100 + k as u64);
            let ys = random_values(encoder.slots(), t, 200 + k as u64);
            let (px, py) = (
                encoder.encode_at(&xs, level).unwrap(),
                encoder.encode_at(&ys, level).unwrap(),
            );
            // Secret key.
            let want = Encryptor::with_secret_key(&ctx, &sk)
                .unwrap()
                .with_seed(seed)
                .encrypt(&px)
                .unwrap();
            let m = keygen::encryption_input(&ctx, &px.poly).unwrap();
            let (parts, s) = rlwe
                .encrypt_sk(&sk, &m, &mut Prng::from_seed(seed))
                .unwrap();
            let x = keygen::fresh_ciphertext(&ctx, px.log_norm, px.params_id, parts, Some(s), true);
            assert_eq!(words(&ctx, &x), words(&ctx, &want), "level {level}: sk");
            assert_eq!(x.seed(), want.seed());
            assert_eq!(x.noise_bound_bits(), want.noise_bound_bits());
            assert_eq!((x.level(), x.factor()), (level, 1));
            // Public key: the encryption of zero on the host, then `+ t^{-1}·m`.
            let want = Encryptor::new(&ctx, &pk)
                .unwrap()
                .with_seed(seed)
                .encrypt(&py)
                .unwrap();
            let m = keygen::encryption_input(&ctx, &py.poly).unwrap();
            let [mut c0, c1] = rlwe
                .encrypt_zero_pk_on_host(&pk, level + 1, &mut Prng::from_seed(seed))
                .unwrap();
            ring.add_assign(&mut c0, &m).unwrap();
            let y = keygen::fresh_ciphertext(
                &ctx,
                py.log_norm,
                py.params_id,
                vec![c0, c1],
                None,
                false,
            );
            assert_eq!(words(&ctx, &y), words(&ctx, &want), "level {level}: pk");
            assert!(y.seed().is_none());
            assert_eq!(y.noise_bound_bits(), want.noise_bound_bits());
            // Decryption (the shared phase code, as the protected decryptor runs it on the
            // host copy of `Σ ĉ_i·s^i`): exact, and equal to the Decryptor's.
            let host_decrypt = |ct: &Ciphertext| {
                let phase = keygen::phase(&ctx, "decrypt", ct, |parts| {
                    let v = rlwe.decrypt(&sk, parts)?;
                    assert_eq!(v.device(), Device::Cpu);
                    Ok(v)
                })
                .unwrap();
                keygen::decrypted(&ctx, ct, phase).unwrap()
            };
            for (ct, msg) in [(&x, &xs), (&y, &ys)] {
                let d = host_decrypt(ct);
                assert_eq!(&encoder.decode(&d).unwrap(), msg, "level {level}");
                assert_eq!(d, dec.decrypt(ct).unwrap());
            }
            if level > 0 {
                let z = eval.mul(&x, &y).unwrap();
                let d = host_decrypt(&z);
                let prod: Vec<u64> = xs
                    .iter()
                    .zip(&ys)
                    .map(|(&a, &b)| ((a as u128 * b as u128) % t as u128) as u64)
                    .collect();
                assert_ne!(
                    z.factor(),
                    1,
                    "the product was switched down: f ≠ 1 is exercised"
                );
                assert_eq!(encoder.decode(&d).unwrap(), prod, "level {level}: x·y");
                assert_eq!(d, dec.decrypt(&z).unwrap());
            }
        }
    }

    /// The protected plaintext operands as `add_to` and `multiply` run them: the evaluator's
    /// `add_lifted_plain` / `mul_lifted_plain` (the code they call) with the kernel step
    /// replaced by the unprotected ring's `+ t^{-1}·m` / `· t^{-1}·m` (`encryption_input`, what
    /// `ProtectedPlaintext::new` protects) give the words, factor, level and noise bound of
    /// `add_plain` / `mul_plain` (or the same error), in auto and manual mode, at three levels:
    /// fresh ciphertexts (factor 1) and products switched down (factor ≠ 1, the balancing with
    /// `r_p ≠ 1` included), the plaintext at the ciphertext's level, above it (read as a
    /// prefix) and below it (the ciphertext lowered); the results decrypt to `a + m` / `a·m`.
    #[test]
    fn the_protected_plaintext_steps_give_add_plain_and_mul_plain() {
        use crate::bgv::evaluator::{balance, PlainInfo};

        let ctx = context();
        let ring = ctx.ring();
        let t = ctx.t();
        let tm = &ctx.tables.t;
        let mut kg = KeyGenerator::from_seed(&ctx, [3; 32]);
        let sk = kg.secret_key().unwrap();
        let rlk = std::sync::Arc::new(kg.relinearization_key(&sk).unwrap());
        let evals = [
            Evaluator::new(&ctx)
                .with_relinearization_key(rlk.clone())
                .unwrap(),
            Evaluator::new(&ctx)
                .with_relinearization_key(rlk)
                .unwrap()
                .with_auto_mod_switch(false),
        ];
        let encoder = Encoder::new(&ctx).unwrap();
        let enc = Encryptor::with_secret_key(&ctx, &sk).unwrap();
        let dec = Decryptor::new(&ctx, &sk).unwrap();
        let slots = encoder.slots();
        let mul_t = |a: &[u64], b: &[u64]| -> Vec<u64> {
            a.iter()
                .zip(b)
                .map(|(&x, &y)| ((x as u128 * y as u128) % t as u128) as u64)
                .collect()
        };
        let add_t = |a: &[u64], b: &[u64]| -> Vec<u64> {
            a.iter().zip(b).map(|(&x, &y)| (x + y) % t).collect()
        };
        let (mut checked, mut balanced, mut rp_not_one) = (0, 0, 0);
        let top = ctx.params().max_level();
        for (k, level) in [top, 3, 1].into_iter().enumerate() {
            let k = k as u64;
            let (xs, zs, ys) = (
                random_values(slots, t, 300 + k),
                random_values(slots, t, 400 + k),
                random_values(slots, t, 500 + k),
            );
            let x = enc
                .encrypt(&encoder.encode_at(&xs, level).unwrap())
                .unwrap();
            let z = enc
                .encrypt(&encoder.encode_at(&zs, level).unwrap())
                .unwrap();
            // A product switched down one level: factor q_level^{-1} mod t.
            let w = evals[0].mul(&x, &z).unwrap();
            assert_ne!(w.factor(), 1);
            let xz = mul_t(&xs, &zs);
            for pt_level in [level, level - 1] {
                let pt = encoder.encode_at(&ys, pt_level).unwrap();
                let lifted = keygen::encryption_input(&ctx, &pt.poly).unwrap();
                let info = PlainInfo {
                    level: pt.level(),
                    log_norm: pt.log_norm,
                    params_id: pt.params_id,
                };
                for (ct, msg) in [(&x, &xs), (&w, &xz)] {
                    if ct.factor() != 1 {
                        balanced += 1;
                        let (_, rp) = balance(
                            t,
                            tm.inv(ct.factor()).unwrap(),
                            ct.noise_bound_bits(),
                            pt.log_norm,
                        );
                        rp_not_one += usize::from(rp != 1);
                    }
                    for (e, eval) in evals.iter().enumerate() {
                        let what = format!("level {level}, plaintext at {pt_level}, eval {e}");
                        let got = eval.add_lifted_plain("add_plain", ct, &info, |c0| {
                            ring.add_assign(c0, &lifted)
                        });
                        let want = eval.add_plain(ct, &pt);
                        let sums = add_t(msg, &ys);
                        let got_m = eval.mul_lifted_plain("mul_plain", ct, &info, |c| {
                            ring.mul_assign(c, &lifted)
                        });
                        let want_m = eval.mul_plain(ct, &pt);
                        let prods = mul_t(msg, &ys);
                        for (got, want, msg) in [(got, want, sums), (got_m, want_m, prods)] {
                            match (got, want) {
                                (Ok(got), Ok(want)) => {
                                    assert_eq!(words(&ctx, &got), words(&ctx, &want), "{what}");
                                    assert_eq!(got.factor(), want.factor(), "{what}");
                                    assert_eq!(got.level(), want.level(), "{what}");
                                    assert_eq!(got.noise_bound_bits(), want.noise_bound_bits());
                                    assert!(got.seed().is_none());
                                    let d = dec.decrypt(&got).unwrap();
                                    assert_eq!(encoder.decode(&d).unwrap(), msg, "{what}");
                                    checked += 1;
                                }
                                (Err(got), Err(want)) => {
                                    assert_eq!(format!("{got:?}"), format!("{want:?}"), "{what}")
                                }
                                (got, want) => panic!("{what}: {got:?} vs {want:?}"),
                            }
                        }
                    }
                }
            }
        }
        assert!(checked >= 40, "{checked} results compared");
        assert!(
            balanced > 0 && rp_not_one > 0,
            "{balanced} balanced, {rp_not_one} with r_p ≠ 1"
        );

        // The plaintext's parameters are checked; the ciphertext's degree too.
        let other = PlainInfo {
            level: top,
            log_norm: 10.0,
            params_id: ctx.rlwe().params_id() ^ 1,
        };
        let x = enc.encrypt(&encoder.encode(&[1, 2]).unwrap()).unwrap();
        let never = |_: &mut crate::backend::Poly| -> crate::Result<()> {
            unreachable!("the checks fail first")
        };
        assert!(matches!(
            evals[0].add_lifted_plain("add", &x, &other, never),
            Err(crate::Error::ParametersMismatch { .. })
        ));
        assert!(matches!(
            evals[0].mul_lifted_plain("mul", &x, &other, never),
            Err(crate::Error::ParametersMismatch { .. })
        ));
    }
}
