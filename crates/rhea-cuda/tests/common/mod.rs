//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rhea_cuda::GpuDevice;
use rhea_math::Modulus;

/// Whether the environment demands a GPU (`RHEA_REQUIRE_GPU=1`).
pub fn gpu_required() -> bool {
    std::env::var("RHEA_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// Device 0, or `None` after printing "SKIPPED (no GPU): <test>"; panics instead when
/// `RHEA_REQUIRE_GPU=1`.
pub fn gpu_or_skip(test: &str) -> Option<Arc<GpuDevice>> {
    match GpuDevice::new(0) {
        Ok(dev) => Some(dev),
        Err(e) if gpu_required() => panic!("{test}: RHEA_REQUIRE_GPU=1 but no GPU: {e}"),
        Err(e) => {
            println!("SKIPPED (no GPU): {test} ({e})");
            None
        }
    }
}

/// A deterministic RNG per test (seeded from the name, so failures reproduce).
pub fn rng(test: &str) -> ChaCha20Rng {
    let mut seed = [0u8; 32];
    for (i, b) in test.bytes().enumerate() {
        seed[i % 32] ^= b;
    }
    ChaCha20Rng::from_seed(seed)
}

/// `count` words uniformly random and non-zero modulo `q`.
pub fn random_nonzero(rng: &mut impl Rng, q: u64, count: usize) -> Vec<u64> {
    (0..count).map(|_| rng.random_range(1..q)).collect()
}

/// Random non-zero `[poly][limb][N]` data for the given moduli.
pub fn random_rns(rng: &mut impl Rng, moduli: &[Modulus], degree: usize, polys: usize) -> Vec<u64> {
    let mut v = Vec::with_capacity(polys * moduli.len() * degree);
    for _ in 0..polys {
        for m in moduli {
            v.extend(random_nonzero(rng, m.value(), degree));
        }
    }
    v
}

/// `count` distinct NTT-friendly primes of `bits` bits for degree `degree` (q ≡ 1 mod 2N),
/// searched downward from 2^bits.
pub fn primes(bits: u32, count: usize, degree: usize) -> Vec<Modulus> {
    let step = 2 * degree as u64;
    let mut q = ((1u64 << bits) / step) * step + 1;
    let mut out = Vec::new();
    while out.len() < count {
        q -= step;
        if is_prime(q) {
            out.push(Modulus::new(q).expect("prime below 2^61"));
        }
    }
    out
}

fn mul_mod(a: u64, b: u64, m: u64) -> u64 {
    ((a as u128 * b as u128) % m as u128) as u64
}

fn pow_mod(mut b: u64, mut e: u64, m: u64) -> u64 {
    let mut r = 1u64;
    b %= m;
    while e > 0 {
        if e & 1 == 1 {
            r = mul_mod(r, b, m);
        }
        b = mul_mod(b, b, m);
        e >>= 1;
    }
    r
}

/// Deterministic Miller–Rabin for 64-bit integers.
pub fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    for p in [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37] {
        if n % p == 0 {
            return n == p;
        }
    }
    let (mut d, mut s) = (n - 1, 0);
    while d % 2 == 0 {
        d /= 2;
        s += 1;
    }
    'witness: for a in [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37] {
        let mut x = pow_mod(a, d, n);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mul_mod(x, x, n);
            if x == n - 1 {
                continue 'witness;
            }
        }
        return false;
    }
    true
}
