//! ModRaise: a level-0 ciphertext read at the top of the chain, bootstrapping's step after
//! SlotToCoeff.

use crate::ckks::{Ciphertext, Evaluator};
use crate::error::{Error, Result};

impl Evaluator {
    /// The level-0 ciphertext `ct` raised to `level`: each component's coefficients read as
    /// centred integers modulo `q_0` and lifted to the first `level + 1` primes
    /// ([`crate::unstable::RnsRing::mod_raise`]), the scale kept. It decrypts to
    /// `m + q_0·I(X)` for `ct`'s plaintext `m`, with `I` the small integer polynomial
    /// `(c_0 + c_1·s − [c_0 + c_1·s]_{q_0}) / q_0`: `‖I‖_∞ ≤ (‖s‖_1 + 1)/2`, about `√h` in
    /// practice for a secret of `h` non-zero coefficients (`tests` below measures it). The
    /// homomorphic reduction of bootstrapping (EvalMod) removes `q_0·I`.
    ///
    /// Errors: [`Error::InvalidInput`] unless `ct` is at level 0 with two components and
    /// `level` is a level of the parameters.
    pub fn mod_raise(&self, ct: &Ciphertext, level: usize) -> Result<Ciphertext> {
        const OP: &str = "mod_raise";
        self.check(OP, ct)?;
        let max = self.context().params().max_level();
        if ct.level() != 0 || ct.parts.len() != 2 || level > max {
            return Err(Error::InvalidInput(format!(
                "{OP}: a 2-component ciphertext at level 0 raised to a level in 0..={max} (got \
                 {} components at level {}, to level {level}); drop it to level 0 first",
                ct.parts.len(),
                ct.level()
            )));
        }
        let ring = self.context().ring();
        let q_limbs = self.context().params().q_limbs_at_level(level);
        let parts = self.on_pool(|| {
            ct.parts
                .iter()
                .map(|p| ring.mod_raise(p, q_limbs))
                .collect::<Result<Vec<_>>>()
        })?;
        Ok(self.wrap(ct, parts, ct.scale))
    }
}

#[cfg(test)]
mod tests {
    use crate::backend::Form;
    use crate::ckks::{CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator};
    use crate::params::{CkksParametersLiteral, SecretDistribution};
    use crate::Device;

    /// The largest `|I_k|` of a raised encryption under a secret of `secret`, after checking
    /// that the raised plaintext is `m + q_0·I` coefficient by coefficient.
    fn overflow(secret: SecretDistribution) -> f64 {
        let mut lit = CkksParametersLiteral::test_n13_levels10_insecure();
        lit.secret = secret;
        let params = lit.build().unwrap();
        let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
        let mut keygen = KeyGenerator::from_seed(&ctx, [9; 32]);
        let sk = keygen.secret_key().unwrap();
        let encoder = Encoder::new(&ctx).unwrap();
        let values: Vec<f64> = (0..encoder.slots())
            .map(|i| ((i * 37) % 101) as f64 / 50.0 - 1.0)
            .collect();
        let ct = Encryptor::with_secret_key(&ctx, &sk)
            .unwrap()
            .with_seed([3; 32])
            .encrypt(&encoder.encode(&values).unwrap())
            .unwrap();
        let eval = Evaluator::new(&ctx);
        let low = eval.drop_to_level(&ct, 0).unwrap();
        let top = params.max_level();
        let raised = eval.mod_raise(&low, top).unwrap();
        assert_eq!((raised.level(), raised.scale()), (top, low.scale()));
        let dec = Decryptor::new(&ctx, &sk).unwrap();
        let ring = ctx.ring();
        let coeffs = |pt: &crate::ckks::Plaintext| {
            let mut p = pt.poly.try_clone().unwrap();
            if p.form() == Form::Ntt {
                ring.ntt_inverse(&mut p).unwrap();
            }
            ring.download_centered_f64(&p).unwrap()
        };
        let m = coeffs(&dec.decrypt(&low).unwrap());
        let v = coeffs(&dec.decrypt(&raised).unwrap());
        let q0 = params.q_primes()[0] as f64;
        let mut max_i: f64 = 0.0;
        for (vk, mk) in v.iter().zip(&m) {
            let i = (vk / q0).round();
            // f64 holds |v| < 2^70 to within 2^18: far below q_0 and the message.
            assert!((vk - q0 * i - mk).abs() < 2f64.powi(20), "{vk} {mk} {i}");
            max_i = max_i.max(i.abs());
        }
        max_i
    }

    #[test]
    fn a_raised_ciphertext_decrypts_to_the_message_plus_q0_times_a_small_polynomial() {
        // A dense ternary secret (about 2N/3 non-zero coefficients) gives |I| in the tens to
        // hundreds at N = 2^13; a sparse one (h = 32, bootstrapping's ephemeral secret) at most
        // (h + 1)/2 and in practice a few.
        let dense = overflow(SecretDistribution::Ternary);
        let sparse = overflow(SecretDistribution::HammingWeight(32));
        assert!(
            (1.0..=16.0).contains(&sparse),
            "sparse secret: max |I| = {sparse}"
        );
        assert!(dense > sparse, "dense {dense} vs sparse {sparse}");
        eprintln!("max |I|: dense ternary {dense}, h = 32 {sparse}");
    }
}
