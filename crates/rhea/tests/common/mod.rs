//! Shared helpers of the CKKS integration tests.
#![allow(dead_code)]

use num_complex::Complex64;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rhea::ckks::{Ciphertext, CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator};
use rhea::params::CkksParametersLiteral;
use rhea::rlwe::{PublicKey, SecretKey};
use rhea::Device;

/// Everything a test needs, from seeded key generation.
pub struct Setup {
    pub ctx: CkksContext,
    pub sk: SecretKey,
    pub pk: PublicKey,
    pub encoder: Encoder,
    pub eval: Evaluator,
}

/// Builds the parameters, keys (relinearisation, rotations by `steps`, conjugation if asked)
/// from a fixed seed, an encoder with full slots and an auto-rescale evaluator.
pub fn setup(lit: CkksParametersLiteral, steps: &[i64], conjugation: bool, seed: u8) -> Setup {
    let params = lit.build().expect("parameters");
    let ctx = CkksContext::new(&params, Device::Cpu).expect("context");
    let mut keygen = KeyGenerator::from_seed(&ctx, [seed; 32]);
    let sk = keygen.secret_key().unwrap();
    let pk = keygen.public_key(&sk).unwrap();
    let rlk = keygen.relinearization_key(&sk).unwrap();
    let gk = keygen.galois_keys(&sk, steps, conjugation).unwrap();
    let encoder = Encoder::new(&ctx).unwrap();
    let eval = Evaluator::new(&ctx)
        .with_relinearization_key(rlk)
        .unwrap()
        .with_galois_keys(gk)
        .unwrap();
    Setup {
        ctx,
        sk,
        pk,
        encoder,
        eval,
    }
}

impl Setup {
    /// A seeded public-key encryptor.
    pub fn encryptor(&self, seed: u8) -> Encryptor {
        Encryptor::new(&self.ctx, &self.pk)
            .unwrap()
            .with_seed([seed; 32])
    }

    /// Encodes and encrypts real values at the top level and default scale.
    pub fn encrypt(&self, values: &[f64], seed: u8) -> Ciphertext {
        self.encryptor(seed)
            .encrypt(&self.encoder.encode(values).unwrap())
            .unwrap()
    }

    /// Decrypts and decodes the real parts.
    pub fn decrypt(&self, ct: &Ciphertext) -> Vec<f64> {
        let pt = Decryptor::new(&self.ctx, &self.sk)
            .unwrap()
            .decrypt(ct)
            .unwrap();
        self.encoder.decode(&pt).unwrap()
    }

    /// Decrypts and decodes complex values.
    pub fn decrypt_complex(&self, ct: &Ciphertext) -> Vec<Complex64> {
        let pt = Decryptor::new(&self.ctx, &self.sk)
            .unwrap()
            .decrypt(ct)
            .unwrap();
        self.encoder.decode_complex(&pt).unwrap()
    }

    pub fn slots(&self) -> usize {
        self.encoder.slots()
    }
}

/// `n` values uniform in `[-1, 1)` from a seed.
pub fn random_vec(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
}

/// `n` complex values with parts uniform in `[-1, 1)`.
pub fn random_complex(n: usize, seed: u64) -> Vec<Complex64> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| Complex64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)))
        .collect()
}

/// `-log2(max |got - want|)`: the precision in bits.
pub fn precision_bits(got: &[f64], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len());
    let err = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0f64, f64::max);
    -err.log2()
}

/// The same for complex values.
pub fn precision_bits_complex(got: &[Complex64], want: &[Complex64]) -> f64 {
    assert_eq!(got.len(), want.len());
    let err = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g - w).norm())
        .fold(0.0f64, f64::max);
    -err.log2()
}

/// Left rotation of a plain vector.
pub fn rotate_plain<T: Clone>(v: &[T], step: i64) -> Vec<T> {
    let n = v.len() as i64;
    (0..n)
        .map(|i| v[(i + step).rem_euclid(n) as usize].clone())
        .collect()
}
