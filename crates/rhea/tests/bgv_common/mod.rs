//! Shared helpers of the BGV integration tests: seeded setups and a plain model of the slots.
#![allow(dead_code)]

use rhea::bgv::{
    BgvContext, BgvParametersLiteral, Ciphertext, Decryptor, Encoder, Encryptor, Evaluator,
    KeyGenerator,
};
use std::sync::Arc;

use rhea::rlwe::{GaloisKeys, PublicKey, RelinearizationKey, SecretKey};
use rhea::{Device, Error};

/// Everything a test needs, from seeded key generation.
pub struct Setup {
    pub ctx: BgvContext,
    pub sk: SecretKey,
    pub pk: PublicKey,
    pub encoder: Encoder,
    pub eval: Evaluator,
    pub rlk: Arc<RelinearizationKey>,
    pub gk: Arc<GaloisKeys>,
}

/// Parameters, keys (relinearisation; row rotations by `steps`; the column swap if asked;
/// everything the inner sum needs if `inner_sum`) from a fixed seed, and an auto-mode
/// evaluator.
pub fn setup(
    lit: BgvParametersLiteral,
    steps: &[i64],
    column_swap: bool,
    inner_sum: bool,
    seed: u8,
) -> Setup {
    let params = lit.build().expect("parameters");
    let ctx = BgvContext::new(&params, Device::Cpu).expect("context");
    let mut keygen = KeyGenerator::from_seed(&ctx, [seed; 32]);
    let sk = keygen.secret_key().unwrap();
    let pk = keygen.public_key(&sk).unwrap();
    let rlk = keygen.relinearization_key(&sk).unwrap();
    let mut gk = keygen.galois_keys(&sk, steps, column_swap).unwrap();
    if inner_sum {
        gk.extend(keygen.inner_sum_keys(&sk).unwrap()).unwrap();
    }
    let encoder = Encoder::new(&ctx).unwrap();
    let (rlk, gk) = (Arc::new(rlk), Arc::new(gk));
    let eval = Evaluator::new(&ctx)
        .with_relinearization_key(rlk.clone())
        .unwrap()
        .with_galois_keys(gk.clone())
        .unwrap();
    Setup {
        ctx,
        sk,
        pk,
        encoder,
        eval,
        rlk,
        gk,
    }
}

impl Setup {
    /// An evaluator with the same keys in manual mode (no automatic modulus switch).
    pub fn manual(&self) -> Evaluator {
        Evaluator::new(&self.ctx)
            .with_relinearization_key(self.rlk.clone())
            .unwrap()
            .with_galois_keys(self.gk.clone())
            .unwrap()
            .with_auto_mod_switch(false)
    }

    /// A seeded public-key encryptor.
    pub fn encryptor(&self, seed: u8) -> Encryptor {
        Encryptor::new(&self.ctx, &self.pk)
            .unwrap()
            .with_seed([seed; 32])
    }

    /// A seeded secret-key encryptor.
    pub fn sk_encryptor(&self, seed: u8) -> Encryptor {
        Encryptor::with_secret_key(&self.ctx, &self.sk)
            .unwrap()
            .with_seed([seed; 32])
    }

    /// A decryptor.
    pub fn decryptor(&self) -> Decryptor {
        Decryptor::new(&self.ctx, &self.sk).unwrap()
    }

    /// The plaintext modulus.
    pub fn t(&self) -> u64 {
        self.ctx.t()
    }

    /// The number of slots `N`.
    pub fn n(&self) -> usize {
        self.ctx.params().n()
    }

    /// Encrypts `values` at `level` (public key).
    pub fn encrypt(&self, values: &[u64], level: usize, seed: u8) -> Ciphertext {
        let pt = self.encoder.encode_at(values, level).unwrap();
        self.encryptor(seed).encrypt(&pt).unwrap()
    }

    /// Decrypts and decodes, and checks that the measured budget is at least the tracked
    /// estimate (the tracker is an upper bound on the noise).
    pub fn decrypt(&self, ct: &Ciphertext) -> Vec<u64> {
        let d = self.decryptor().decrypt(ct).unwrap();
        let estimated = self.eval.estimated_budget(ct);
        let measured = d
            .noise_budget()
            .expect("noise checks on: the budget is known");
        assert!(
            measured as i64 >= estimated,
            "measured budget {measured} below the tracked estimate {estimated} ({ct:?})"
        );
        self.encoder.decode(&d).unwrap()
    }
}

/// Whether `e` is the noise-budget error.
pub fn is_noise_exhausted(e: &Error) -> bool {
    matches!(e, Error::NoiseBudgetExhausted { .. })
}

/// A SplitMix64 stream: deterministic test inputs without extra dependencies.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, m)` (`m > 0`; the bias is below `m / 2^64`).
    pub fn below(&mut self, m: u64) -> u64 {
        ((self.next() as u128 * m as u128) >> 64) as u64
    }

    /// `n` values uniform in `[0, t)`, none of them all zero.
    pub fn values(&mut self, n: usize, t: u64) -> Vec<u64> {
        let v: Vec<u64> = (0..n).map(|_| self.below(t)).collect();
        assert!(v.iter().any(|&x| x != 0));
        v
    }
}

/// The plain model of the slots: vectors modulo `t`, a `2 × N/2` matrix.
pub struct Plain {
    pub t: u64,
}

impl Plain {
    pub fn add(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        a.iter().zip(b).map(|(x, y)| (x + y) % self.t).collect()
    }

    pub fn sub(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x + self.t - y) % self.t)
            .collect()
    }

    pub fn neg(&self, a: &[u64]) -> Vec<u64> {
        a.iter().map(|x| (self.t - x) % self.t).collect()
    }

    pub fn mul(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        a.iter()
            .zip(b)
            .map(|(x, y)| ((*x as u128 * *y as u128) % self.t as u128) as u64)
            .collect()
    }

    /// `c` reduced modulo `t`, in `[0, t)`.
    pub fn reduce(&self, c: i64) -> u64 {
        c.rem_euclid(self.t as i64) as u64
    }

    pub fn add_const(&self, a: &[u64], c: i64) -> Vec<u64> {
        let c = self.reduce(c);
        a.iter().map(|x| (x + c) % self.t).collect()
    }

    pub fn mul_const(&self, a: &[u64], c: i64) -> Vec<u64> {
        let c = self.reduce(c);
        a.iter()
            .map(|x| ((*x as u128 * c as u128) % self.t as u128) as u64)
            .collect()
    }

    /// Slot `j` of each row receives slot `j + k` of that row (cyclically).
    pub fn rotate_rows(&self, a: &[u64], k: i64) -> Vec<u64> {
        let half = a.len() / 2;
        let mut out = vec![0u64; a.len()];
        for r in 0..2 {
            for j in 0..half {
                let src = (j as i64 + k).rem_euclid(half as i64) as usize;
                out[r * half + j] = a[r * half + src];
            }
        }
        out
    }

    /// The two rows swapped.
    pub fn rotate_columns(&self, a: &[u64]) -> Vec<u64> {
        let half = a.len() / 2;
        let mut out = a[half..].to_vec();
        out.extend_from_slice(&a[..half]);
        out
    }

    /// The sum of all slots, in every slot.
    pub fn inner_sum(&self, a: &[u64]) -> Vec<u64> {
        let s = a.iter().fold(0u64, |acc, &x| (acc + x) % self.t);
        vec![s; a.len()]
    }
}
