//! Sparse-secret encapsulation (Bossuat, Troncoso-Pastoriza, Hubaux, ACNS 2022): the user's
//! computation runs under a dense secret; bootstrapping's ModRaise runs under a sparse ephemeral
//! secret `s'` of Hamming weight `h` (32 by default), reached by a key switching `s → s'` at
//! level 0 and left by `s' → s` right after ModRaise.
//!
//! Why: ModRaise leaves `m + q_0·I(X)` with `‖I‖_∞` about the square root of the secret's weight
//! (`Evaluator::mod_raise`'s test measures 76 for a dense ternary secret at N = 2^13 and 7 for
//! h = 32), and the polynomial that removes `q_0·I` must cover `[−K, K]` with `K > ‖I‖_∞`: a
//! sparse secret keeps `K` (and so the degree and the levels of EvalMod) small.
//!
//! Security: the sparse secret is the RLWE secret of one public object only, the dense→sparse
//! key, and that key lives in a parameter set of its own over `q_0·p_0` (the first `Q` prime and
//! the first `P` prime; same `N`, same error width, one digit), as in Bossuat et al. and
//! Lattigo: about 120 bits at `N = 2^16`, where the full `q_0·P` of a preset would be 365–420.
//! [`KeyGenerator::encapsulation_keys`] checks that modulus with
//! [`crate::params::sparse_secret_is_128_bit`] (the citation and a hybrid-guessing sanity bound,
//! documented there: accepted up to the uniform-ternary 128-bit bound of the ring of degree
//! `N/4`, weight ≥ 32, `N ≥ 2^14`) and refuses with [`Error::InsecureParameters`] when it fails,
//! unless the main parameters carry the insecure opt-in (the small test rings). The sparse→dense
//! key encrypts the sparse secret under the dense one over `Q ∪ P`, as any key-switching key
//! does: its samples are under the dense secret, covered by the main parameters' own check.
//!
//! The switch to the sparse secret runs in the small context: a level-0 ciphertext's one limb
//! (`q_0`) has the same words there (the same prime, the same NTT tables), so
//! [`Evaluator::encapsulate`] hands its polynomials to the small context's key switching as they
//! are (no copy, no host round trip) and wraps the result as a level-0 ciphertext of the main
//! parameters. Its key switching is counted in the main context's
//! [`CkksContext::keyswitches`].

use rhea_math::sampler::{self, Prng};
use zeroize::Zeroize;

use crate::backend::{Device, Form, Poly, RnsRing};
use crate::ckks::{Ciphertext, CkksContext, Evaluator, KeyGenerator, ProtectedKeyGenerator};
use crate::error::{Error, Result};
use crate::params::{sparse_secret_is_128_bit, CkksParametersLiteral, SecretDistribution};
use crate::rlwe::{check_two_components, KeySwitchKey, ProtectedSecretKey, SecretKey};

/// The two key-switching keys of sparse-secret encapsulation for one dense secret key, with the
/// ephemeral sparse secret's weight: the dense→sparse key in its own context over `q_0·p_0`,
/// the sparse→dense key over the main parameters' `Q ∪ P`. The sparse secret itself is dropped
/// (and zeroised) once the keys are made.
#[derive(Clone, Debug)]
pub struct EncapsulationKeys {
    /// The context over `q_0·p_0` (same `N`, error width and device as the main one).
    sparse_ctx: CkksContext,
    /// Dense → sparse, over `q_0·p_0` (one digit).
    to_sparse: KeySwitchKey,
    /// Sparse → dense, over the main `Q ∪ P`.
    to_dense: KeySwitchKey,
    weight: usize,
}

impl EncapsulationKeys {
    /// The Hamming weight of the ephemeral sparse secret.
    pub fn weight(&self) -> usize {
        self.weight
    }

    /// `log2(q_0·p_0)`: the modulus of the dense→sparse key, the only RLWE samples under the
    /// sparse secret (what [`crate::params::sparse_secret_is_128_bit`] is checked on).
    pub fn sparse_modulus_bits(&self) -> f64 {
        self.sparse_ctx.params().log_qp()
    }

    /// The bytes of both keys' words in memory.
    pub fn size_bytes(&self) -> u64 {
        self.to_sparse.size_bytes() + self.to_dense.size_bytes()
    }
}

/// A secret polynomial, zeroised when dropped (also on the error paths).
struct Secret(Poly);

impl Drop for Secret {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

/// The secret with the small signed coefficients `coeffs` over all of `ring`'s limbs (`Q ∪ P`,
/// NTT form), lifted and transformed in host memory.
fn secret_from_signed(ring: &RnsRing, coeffs: &[i64]) -> Result<Secret> {
    let mut host = Secret(ring.from_signed(Device::Cpu, coeffs, ring.full_shape())?);
    ring.ntt_forward(&mut host.0)?;
    Ok(host)
}

/// `host` moved to `device` (the host words, staging included, are zeroised when `host` is
/// dropped and by `transfer`).
fn to_device(ring: &RnsRing, host: Secret, device: Device) -> Result<Secret> {
    Ok(Secret(ring.transfer(&host.0, device)?))
}

/// `sk`'s secret over `q_0·p_0` in the small context, in host memory: its `q_0` and `p_0`
/// limbs (NTT form: the same words in both rings, whose NTT tables depend on the prime and `N`
/// only).
fn restrict_to_sparse_context(
    main: &CkksContext,
    small: &CkksContext,
    sk: &SecretKey,
) -> Result<Secret> {
    let ring = main.ring();
    let (n, lq) = (ring.n(), ring.q_len());
    let mut words = ring.download(&sk.s_qp)?;
    let limbs: Vec<u64> = words[..n]
        .iter()
        .chain(&words[lq * n..(lq + 1) * n])
        .copied()
        .collect();
    words.zeroize();
    let small_ring = small.ring();
    // The vector becomes the polynomial's storage, zeroised on drop.
    Ok(Secret(small_ring.upload(
        Device::Cpu,
        limbs,
        small_ring.full_shape(),
        Form::Ntt,
    )?))
}

/// What both generators of the encapsulation keys start with: the checks, the small context
/// over `q_0·p_0` on `ctx`'s device, and the sparse secret's coefficients drawn from `prng`
/// (the first draw; the caller zeroises them).
fn sparse_setup(
    ctx: &CkksContext,
    sk_params_id: u64,
    weight: usize,
    prng: &mut Prng,
) -> Result<(CkksContext, Vec<i64>)> {
    ctx.rlwe().check_id("encapsulation_keys", sk_params_id)?;
    let params = ctx.params().clone();
    let n = params.n();
    if weight == 0 || weight > n {
        return Err(Error::InvalidInput(format!(
            "encapsulation_keys: a sparse secret of weight {weight} in a ring of degree {n} \
             (1..={n}; 32 is the usual choice)"
        )));
    }
    let (q0, p0) = (params.q_primes()[0], params.p_primes()[0]);
    let log_q = (q0 as f64).log2() + (p0 as f64).log2();
    if !sparse_secret_is_128_bit(params.log_n(), weight, log_q)
        && !params.security().insecure_opt_in
    {
        return Err(Error::InsecureParameters {
            reason: format!(
                "bootstrapping's dense→sparse key: a secret of Hamming weight {weight} modulo \
                 q_0·p_0 ({log_q:.1} bits) at N = 2^{} is not covered by the sparse-secret \
                 bound (params::sparse_secret_max_log_q_128: weight ≥ 32, N = 2^14..=2^17, \
                 log q at most the 128-bit bound of N/4)",
                params.log_n()
            ),
        });
    }
    // The small set: explicit primes, the sparse secret as its distribution. Its own
    // (uniform-ternary) check knows no sparse secrets, hence the opt-in here: the check
    // that applies is the one above.
    let small_params = CkksParametersLiteral {
        log_n: params.log_n(),
        log_q: Vec::new(),
        log_p: Vec::new(),
        q: vec![q0],
        p: vec![p0],
        log_default_scale: params.log_default_scale(),
        dnum: 1,
        secret: SecretDistribution::HammingWeight(weight),
        error_std_dev: params.error_std_dev(),
        allow_insecure_below_128_bits: true,
    }
    .build()?;
    let small = CkksContext::new(&small_params, ctx.device())?.sharing_keyswitch_count(ctx);
    let coeffs = sampler::ternary_hamming(prng, n, weight)?;
    Ok((small, coeffs))
}

/// The sparse secret of `coeffs` in the small and in the main context (host memory); the
/// coefficients are zeroised.
fn sparse_secrets(
    ctx: &CkksContext,
    small: &CkksContext,
    mut coeffs: Vec<i64>,
) -> Result<[Secret; 2]> {
    let secrets = (|| -> Result<[Secret; 2]> {
        Ok([
            secret_from_signed(small.ring(), &coeffs)?,
            secret_from_signed(ctx.ring(), &coeffs)?,
        ])
    })();
    coeffs.zeroize();
    secrets
}

impl KeyGenerator {
    /// Draws an ephemeral secret of Hamming weight `weight` and returns the key switchings
    /// between it and `sk` (both directions): dense→sparse over `q_0·p_0` in a small parameter
    /// set of its own (same `N`, error width and device; the only RLWE samples under the sparse
    /// secret, checked with [`crate::params::sparse_secret_is_128_bit`]), sparse→dense over
    /// `Q ∪ P`.
    ///
    /// Errors: [`Error::InvalidInput`] for a weight of 0 or above `N`;
    /// [`Error::InsecureParameters`] when `q_0·p_0` at this `N` and weight fails
    /// [`crate::params::sparse_secret_is_128_bit`] and the parameters do not carry the insecure
    /// opt-in; [`Error::InvalidParameters`] if `q_0, p_0` do not form a valid set on their own
    /// (`p_0` more than a bit smaller than `q_0`); parameter mismatches.
    pub fn encapsulation_keys(
        &mut self,
        sk: &SecretKey,
        weight: usize,
    ) -> Result<EncapsulationKeys> {
        let (small, coeffs) = sparse_setup(&self.ctx, sk.params_id, weight, &mut self.prng)?;
        let [sparse_small, sparse_main] = sparse_secrets(&self.ctx, &small, coeffs)?;
        let sparse_small = to_device(small.ring(), sparse_small, small.device())?;
        let sparse_main = to_device(self.ctx.ring(), sparse_main, self.ctx.device())?;
        let dense_small = restrict_to_sparse_context(&self.ctx, &small, sk)?;
        let dense_small = to_device(small.ring(), dense_small, small.device())?;
        let to_sparse =
            small
                .rlwe()
                .gen_keyswitch_key(&sparse_small.0, &dense_small.0, &mut self.prng)?;
        let to_dense =
            self.ctx
                .rlwe()
                .gen_keyswitch_key(&sk.s_qp, &sparse_main.0, &mut self.prng)?;
        Ok(EncapsulationKeys {
            sparse_ctx: small,
            to_sparse,
            to_dense,
            weight,
        })
    }
}

impl ProtectedKeyGenerator {
    /// [`KeyGenerator::encapsulation_keys`] in LITE's protected mode: the sparse secret, its
    /// restriction of `sk` to `q_0·p_0` and `sk` reach the GPU only as XTS ciphertext (made on
    /// the host, protected, the host copies zeroised), and both keys are made by the protected
    /// key-row kernel. The same draws in the same order, so the same keys, word for word, as
    /// the unprotected generator of the same seed and state.
    ///
    /// Errors: as [`KeyGenerator::encapsulation_keys`]; a key of another session's GPU.
    pub fn encapsulation_keys(
        &mut self,
        sk: &ProtectedSecretKey,
        weight: usize,
    ) -> Result<EncapsulationKeys> {
        let (ctx, prng) = self.parts();
        let ctx = ctx.clone();
        // Everything is protected by the key's session, so that one kernel never combines
        // words of two sessions (as the generator's other keys).
        let protection = sk.protection();
        let (small, coeffs) = sparse_setup(&ctx, sk.params_id(), weight, prng)?;
        let [sparse_small, sparse_main] = sparse_secrets(&ctx, &small, coeffs)?;
        let dense_small = restrict_to_sparse_context(&ctx, &small, sk.host_key())?;
        let sparse_small = protection.protect(small.rlwe(), &sparse_small.0)?;
        let sparse_main = protection.protect(ctx.rlwe(), &sparse_main.0)?;
        let dense_small = protection.protect(small.rlwe(), &dense_small.0)?;
        let to_sparse = small.rlwe().gen_keyswitch_key_protected(
            protection,
            &sparse_small,
            Some(&dense_small),
            prng,
        )?;
        let to_dense = ctx
            .rlwe()
            .gen_keyswitch_key_to_protected(sk, &sparse_main, prng)?;
        Ok(EncapsulationKeys {
            sparse_ctx: small,
            to_sparse,
            to_dense,
            weight,
        })
    }
}

impl Evaluator {
    /// The level-0 ciphertext `ct`, encrypted under the dense secret of `keys`, switched to the
    /// sparse ephemeral secret (before [`Evaluator::mod_raise`]). The switch runs in the keys'
    /// context over `q_0·p_0` on `ct`'s words as they are; the result is a level-0 ciphertext of
    /// `ct`'s parameters, at its scale.
    ///
    /// Errors: [`Error::InvalidInput`] unless `ct` is at level 0 (the dense→sparse key exists
    /// only there); a 3-component ciphertext; parameter mismatches (`keys` made for other
    /// parameters included).
    pub fn encapsulate(&self, ct: &Ciphertext, keys: &EncapsulationKeys) -> Result<Ciphertext> {
        const OP: &str = "encapsulate";
        if ct.level() != 0 {
            return Err(Error::InvalidInput(format!(
                "encapsulate: the ciphertext is at level {}; the switch to the sparse secret runs \
                 at level 0 only (drop it to level 0 first)",
                ct.level()
            )));
        }
        self.check(OP, ct)?;
        check_two_components(OP, ct.parts.len())?;
        // The keys belong to these parameters (their small set shares q_0 with them).
        self.context()
            .rlwe()
            .check_id(OP, keys.to_dense.params_id)?;
        let small = keys.sparse_ctx.rlwe();
        let parts = self.on_pool(|| small.switch_key(&ct.parts, &keys.to_sparse))?;
        Ok(self.wrap(ct, parts, ct.scale))
    }

    /// `ct`, encrypted under the sparse ephemeral secret of `keys` (at any level: after
    /// [`Evaluator::mod_raise`]), switched back to the dense secret.
    ///
    /// Errors: a 3-component ciphertext; parameter mismatches.
    pub fn decapsulate(&self, ct: &Ciphertext, keys: &EncapsulationKeys) -> Result<Ciphertext> {
        self.switch_key(ct, &keys.to_dense)
    }

    /// Key switching of a 2-component ciphertext with `key` (from the secret it is encrypted
    /// under to the key's target secret): `(c_0 + u_0, u_1)` with `(u_0, u_1) = KeySwitch(c_1)`,
    /// at the ciphertext's level and scale.
    pub(crate) fn switch_key(&self, ct: &Ciphertext, key: &KeySwitchKey) -> Result<Ciphertext> {
        const OP: &str = "switch_key";
        self.check(OP, ct)?;
        check_two_components(OP, ct.parts.len())?;
        let rlwe = self.context().rlwe();
        let parts = self.on_pool(|| rlwe.switch_key(&ct.parts, key))?;
        Ok(self.wrap(ct, parts, ct.scale))
    }
}

#[cfg(test)]
mod tests {
    use crate::backend::Form;
    use crate::ckks::{CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator};
    use crate::params::CkksParametersLiteral;
    use crate::{Device, Error};

    #[test]
    fn encapsulated_mod_raise_leaves_a_small_overflow_under_the_dense_secret() {
        let params = CkksParametersLiteral::test_n13_levels10_insecure()
            .build()
            .unwrap();
        let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
        let mut keygen = KeyGenerator::from_seed(&ctx, [4; 32]);
        let sk = keygen.secret_key().unwrap();
        let keys = keygen.encapsulation_keys(&sk, 32).unwrap();
        assert_eq!(keys.weight(), 32);
        // The dense→sparse key (the only object under the sparse secret) lives in the small
        // context over q_0·p_0: one digit of two limbs, both non-zero.
        let (q0, p0) = (params.q_primes()[0], params.p_primes()[0]);
        let small = keys.sparse_ctx.params();
        assert_eq!((small.q_primes(), small.p_primes()), (&[q0][..], &[p0][..]));
        assert_eq!(keys.to_sparse.params_id(), small.id());
        assert_ne!(small.id(), params.id());
        let bits = (q0 as f64).log2() + (p0 as f64).log2();
        assert!((keys.sparse_modulus_bits() - bits).abs() < 1e-9);
        assert!((119.0..122.0).contains(&bits), "log2(q_0·p_0) = {bits}");
        let small_ring = keys.sparse_ctx.ring();
        let n = params.n();
        assert_eq!(keys.to_sparse.dnum(), 1);
        for p in &keys.to_sparse.parts[0] {
            assert_eq!((p.q_limbs(), p.p_limbs()), (1, 1));
            let w = small_ring.download(p).unwrap();
            assert!(w[..n].iter().any(|&x| x != 0) && w[n..].iter().any(|&x| x != 0));
        }
        // The sparse→dense key is a full key of the main parameters.
        assert_eq!(keys.to_dense.params_id(), params.id());
        assert_eq!(keys.to_dense.dnum(), params.dnum());
        let limbs = params.q_primes().len() + params.p_primes().len();
        let (small_bytes, big_bytes) = (keys.to_sparse.size_bytes(), keys.to_dense.size_bytes());
        assert_eq!(keys.size_bytes(), small_bytes + big_bytes);
        assert_eq!(small_bytes, (2 * 2 * n * 8) as u64);
        assert_eq!(big_bytes, (params.dnum() * 2 * limbs * n * 8) as u64);
        let ring = ctx.ring();
        assert!(keygen.encapsulation_keys(&sk, 0).is_err());
        let encoder = Encoder::new(&ctx).unwrap();
        let values: Vec<f64> = (0..encoder.slots())
            .map(|i| ((i * 13) % 97) as f64 / 48.0 - 1.0)
            .collect();
        let ct = Encryptor::with_secret_key(&ctx, &sk)
            .unwrap()
            .with_seed([5; 32])
            .encrypt(&encoder.encode(&values).unwrap())
            .unwrap();
        let eval = Evaluator::new(&ctx);
        let dec = Decryptor::new(&ctx, &sk).unwrap();
        let low = eval.drop_to_level(&ct, 0).unwrap();
        // Dense → sparse at level 0, raise, sparse → dense at the top.
        let keyswitches = ctx.keyswitches();
        assert!(eval.encapsulate(&ct, &keys).is_err(), "only at level 0");
        let sparse = eval.encapsulate(&low, &keys).unwrap();
        let raised = eval.mod_raise(&sparse, params.max_level()).unwrap();
        let back = eval.decapsulate(&raised, &keys).unwrap();
        assert_eq!(ctx.keyswitches() - keyswitches, 2);
        let coeffs = |ct: &crate::ckks::Ciphertext| {
            let mut p = dec.decrypt(ct).unwrap().poly.try_clone().unwrap();
            if p.form() == Form::Ntt {
                ring.ntt_inverse(&mut p).unwrap();
            }
            ring.download_centered_f64(&p).unwrap()
        };
        let (m, v) = (coeffs(&low), coeffs(&back));
        let q0 = params.q_primes()[0] as f64;
        let mut max_i: f64 = 0.0;
        for (vk, mk) in v.iter().zip(&m) {
            let i = (vk / q0).round();
            // The two key switchings add a noise far below the message's scale (2^40).
            assert!((vk - q0 * i - mk).abs() < 2f64.powi(24), "{vk} {mk} {i}");
            max_i = max_i.max(i.abs());
        }
        assert!(max_i <= 16.0, "max |I| = {max_i} under the sparse secret");
        // The result of encapsulate is a level-0 ciphertext of the main parameters.
        assert_eq!(
            (sparse.level(), sparse.scale(), sparse.params_id()),
            (0, low.scale(), low.params_id())
        );
    }

    #[test]
    fn the_sparse_key_is_refused_where_q0_p0_is_not_covered_without_the_opt_in() {
        // N = 2^13: no sparse-secret claim at all, so a secure main set is refused (typed)...
        let params = CkksParametersLiteral::n13_logqp200_levels2()
            .build()
            .unwrap();
        assert!(params.security().meets_128_bits);
        let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
        let mut keygen = KeyGenerator::from_seed(&ctx, [6; 32]);
        let sk = keygen.secret_key().unwrap();
        let err = keygen.encapsulation_keys(&sk, 32).unwrap_err();
        assert!(
            matches!(&err, Error::InsecureParameters { reason } if reason.contains("q_0·p_0")),
            "{err}"
        );
        // ... and accepted with the insecure opt-in.
        let insecure = CkksParametersLiteral::n13_logqp200_levels2()
            .insecure_allow_below_128_bits()
            .build()
            .unwrap();
        let ctx = CkksContext::new(&insecure, Device::Cpu).unwrap();
        let mut keygen = KeyGenerator::from_seed(&ctx, [6; 32]);
        let sk = keygen.secret_key().unwrap();
        assert!(keygen.encapsulation_keys(&sk, 32).is_ok());
    }

    #[test]
    fn the_sparse_key_of_a_secure_n15_set_is_accepted_without_the_opt_in() {
        // N = 2^15, q_0·p_0 ≈ 120 bits ≤ 218 (the bound of N/4): accepted as it is; weight 31
        // is below what the bound covers and refused.
        let params = CkksParametersLiteral::n15_logqp400_levels7()
            .build()
            .unwrap();
        assert!(!params.security().insecure_opt_in);
        let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
        let mut keygen = KeyGenerator::from_seed(&ctx, [7; 32]);
        let sk = keygen.secret_key().unwrap();
        let keys = keygen.encapsulation_keys(&sk, 32).unwrap();
        assert!(keys.sparse_modulus_bits() < 122.0);
        assert!(matches!(
            keygen.encapsulation_keys(&sk, 31),
            Err(Error::InsecureParameters { .. })
        ));
    }
}
