//! Shared helpers of the serialisation tests.
#![allow(dead_code)]

use rhea::backend::Poly;
use rhea::ckks::{self, CkksContext, Encoder, Encryptor, Evaluator, KeyGenerator};
use rhea::params::{CkksParameters, CkksParametersLiteral, SecretDistribution};
use rhea::rlwe::{GaloisKeys, PublicKey, RelinearizationKey, SecretKey};
use rhea::serial::{Codec, Compression};
use rhea::unstable::RnsRing;
use rhea::Device;
use sha2::{Digest, Sha256};

/// Every compression mode.
pub const ALL: [Compression; 4] = [
    Compression::NONE,
    Compression::SEEDED,
    Compression::PACKED,
    Compression::SEEDED_PACKED,
];

/// CKKS parameter sets at several sizes: N = 2^13 (3 + 1 primes, dnum 3), N = 2^13 deep
/// (11 + 2 primes, dnum 6), N = 2^11 (2 + 1 primes, dnum 2, sparse secret).
pub fn ckks_sets() -> Vec<(&'static str, CkksParameters)> {
    let small = CkksParametersLiteral {
        log_n: 11,
        log_q: vec![50, 36],
        log_p: vec![50],
        q: vec![],
        p: vec![],
        log_default_scale: 30,
        dnum: 2,
        secret: SecretDistribution::HammingWeight(64),
        error_std_dev: 3.2,
        allow_insecure_below_128_bits: false,
    }
    .insecure_allow_below_128_bits();
    vec![
        (
            "n13_levels2",
            CkksParametersLiteral::n13_logqp200_levels2()
                .build()
                .unwrap(),
        ),
        (
            "n13_levels10",
            CkksParametersLiteral::test_n13_levels10_insecure()
                .build()
                .unwrap(),
        ),
        ("n11_sparse", small.build().unwrap()),
    ]
}

/// Keys and objects of one CKKS parameter set, from fixed seeds.
pub struct CkksFixture {
    pub ctx: CkksContext,
    pub codec: Codec,
    pub sk: SecretKey,
    pub pk: PublicKey,
    pub rlk: RelinearizationKey,
    pub gk: GaloisKeys,
    pub pt: ckks::Plaintext,
    /// A fresh secret-key encryption (seeded `c_1`).
    pub ct_sk: ckks::Ciphertext,
    /// A fresh public-key encryption (no seed).
    pub ct_pk: ckks::Ciphertext,
    /// A 3-component product.
    pub ct3: ckks::Ciphertext,
    /// An evaluated 2-component ciphertext one level down.
    pub ct_low: ckks::Ciphertext,
}

pub fn ckks_fixture(params: &CkksParameters, seed: u8) -> CkksFixture {
    let ctx = CkksContext::new(params, Device::Cpu).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [seed; 32]);
    let sk = keygen.secret_key().unwrap();
    let pk = keygen.public_key(&sk).unwrap();
    let rlk = keygen.relinearization_key(&sk).unwrap();
    let gk = keygen.galois_keys(&sk, &[1, -3], true).unwrap();
    let encoder = Encoder::new(&ctx).unwrap();
    let values: Vec<f64> = (0..encoder.slots())
        .map(|i| ((i * 7 + seed as usize) % 17) as f64 / 4.0 - 2.0)
        .collect();
    let pt = encoder.encode(&values).unwrap();
    let ct_sk = Encryptor::with_secret_key(&ctx, &sk)
        .unwrap()
        .with_seed([seed ^ 0x55; 32])
        .encrypt(&pt)
        .unwrap();
    let ct_pk = Encryptor::new(&ctx, &pk)
        .unwrap()
        .with_seed([seed ^ 0xaa; 32])
        .encrypt(&pt)
        .unwrap();
    let eval = Evaluator::new(&ctx);
    let ct3 = eval.mul_no_relin(&ct_sk, &ct_pk).unwrap();
    let ct_low = eval.drop_to_level(&ct_pk, params.max_level() - 1).unwrap();
    let codec = Codec::from(&ctx);
    CkksFixture {
        ctx,
        codec,
        sk,
        pk,
        rlk,
        gk,
        pt,
        ct_sk,
        ct_pk,
        ct3,
        ct_low,
    }
}

/// The words of a polynomial.
pub fn words(ring: &RnsRing, p: &Poly) -> Vec<u64> {
    ring.download(p).unwrap()
}

/// The words of several polynomials.
pub fn all_words(ring: &RnsRing, ps: &[Poly]) -> Vec<Vec<u64>> {
    ps.iter().map(|p| words(ring, p)).collect()
}

/// Recomputes the SHA-256 trailer of a serialised object after an edit.
pub fn reseal(bytes: &mut [u8]) {
    let n = bytes.len() - 32;
    let d: [u8; 32] = Sha256::digest(&bytes[..n]).into();
    bytes[n..].copy_from_slice(&d);
}

/// A reader that hands out at most `chunk` bytes per call.
pub struct Trickle<'a> {
    pub data: &'a [u8],
    pub chunk: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = buf.len().min(self.chunk).min(self.data.len());
        buf[..k].copy_from_slice(&self.data[..k]);
        self.data = &self.data[k..];
        Ok(k)
    }
}

/// A writer that accepts at most `chunk` bytes per call.
pub struct TrickleWriter {
    pub out: Vec<u8>,
    pub chunk: usize,
}

impl std::io::Write for TrickleWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let k = buf.len().min(self.chunk);
        self.out.extend_from_slice(&buf[..k]);
        Ok(k)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
