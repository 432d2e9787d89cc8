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
//! key, and that key is kept over the smallest modulus `q_0·P` (its other limbs are zero and
//! never used: the switch runs at level 0). Whether `q_0·P` at the ring degree and weight of a
//! preset is 128-bit secure is checked per bootstrapping preset (issue 34; not yet validated).
//! The sparse→dense key encrypts the sparse secret under the dense one, over `Q ∪ P`, as any
//! key-switching key does.

use crate::ckks::{Ciphertext, Evaluator, KeyGenerator};
use crate::error::{Error, Result};
use crate::params::SecretDistribution;
use crate::rlwe::{check_two_components, KeySwitchKey, SecretKey};

/// The two key-switching keys of sparse-secret encapsulation for one dense secret key, with the
/// ephemeral sparse secret's weight. The sparse secret itself is dropped (and zeroised) once the
/// keys are made.
#[derive(Clone, Debug)]
pub struct EncapsulationKeys {
    to_sparse: KeySwitchKey,
    to_dense: KeySwitchKey,
    weight: usize,
}

impl EncapsulationKeys {
    /// The Hamming weight of the ephemeral sparse secret.
    pub fn weight(&self) -> usize {
        self.weight
    }

    /// The bytes of both keys' words in memory.
    pub fn size_bytes(&self) -> u64 {
        self.to_sparse.size_bytes() + self.to_dense.size_bytes()
    }
}

impl KeyGenerator {
    /// Draws an ephemeral secret of Hamming weight `weight` and returns the key switchings
    /// between it and `sk` (both directions).
    ///
    /// Errors: [`Error::InvalidInput`] for a weight of 0 or above `N`; parameter mismatches.
    pub fn encapsulation_keys(
        &mut self,
        sk: &SecretKey,
        weight: usize,
    ) -> Result<EncapsulationKeys> {
        let rlwe = self.ctx.rlwe().clone();
        rlwe.check_id("encapsulation_keys", sk.params_id)?;
        let n = self.ctx.params().n();
        if weight == 0 || weight > n {
            return Err(Error::InvalidInput(format!(
                "encapsulation_keys: a sparse secret of weight {weight} in a ring of degree {n} \
                 (1..={n}; 32 is the usual choice)"
            )));
        }
        let sparse =
            rlwe.gen_secret_key_from(SecretDistribution::HammingWeight(weight), &mut self.prng)?;
        let mut to_sparse = rlwe.gen_keyswitch_key(&sparse.s_qp, &sk.s_qp, &mut self.prng)?;
        // Keep the dense→sparse key over q_0·P only: the first digit's limb q_0 and the P limbs
        // (all a level-0 switch reads); every other limb and digit is zero.
        let ring = self.ctx.ring();
        let full = ring.full_shape();
        let mut keep = vec![0u64; full.limbs()];
        keep[0] = 1;
        for k in &mut keep[ring.q_len()..] {
            *k = 1;
        }
        for (j, pair) in to_sparse.parts.iter_mut().enumerate() {
            for p in pair.iter_mut() {
                if j == 0 {
                    ring.mul_scalar_assign(p, &keep)?;
                } else {
                    *p = ring.zero(self.ctx.device(), full, p.form())?;
                }
            }
        }
        let to_dense = rlwe.gen_keyswitch_key(&sk.s_qp, &sparse.s_qp, &mut self.prng)?;
        Ok(EncapsulationKeys {
            to_sparse,
            to_dense,
            weight,
        })
    }
}

impl Evaluator {
    /// The level-0 ciphertext `ct`, encrypted under the dense secret of `keys`, switched to the
    /// sparse ephemeral secret (before [`Evaluator::mod_raise`]).
    ///
    /// Errors: [`Error::InvalidInput`] unless `ct` is at level 0 (the dense→sparse key exists
    /// only there); a 3-component ciphertext; parameter mismatches.
    pub fn encapsulate(&self, ct: &Ciphertext, keys: &EncapsulationKeys) -> Result<Ciphertext> {
        if ct.level() != 0 {
            return Err(Error::InvalidInput(format!(
                "encapsulate: the ciphertext is at level {}; the switch to the sparse secret runs \
                 at level 0 only (drop it to level 0 first)",
                ct.level()
            )));
        }
        self.switch_key(ct, &keys.to_sparse)
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
    use crate::Device;

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
        // The dense→sparse key (the only object under the sparse secret) has no limb beyond
        // q_0 · P: its other Q limbs and its other digits are zero, its q_0 and P limbs are not.
        let ring = ctx.ring();
        let (n, lq) = (params.n(), params.q_primes().len());
        for (j, pair) in keys.to_sparse.parts.iter().enumerate() {
            for p in pair {
                let w = ring.download(p).unwrap();
                let nonzero = |limb: usize| w[limb * n..(limb + 1) * n].iter().any(|&x| x != 0);
                for limb in 0..w.len() / n {
                    let kept = j == 0 && (limb == 0 || limb >= lq);
                    assert_eq!(nonzero(limb), kept, "digit {j} limb {limb}");
                }
            }
        }
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
    }
}
