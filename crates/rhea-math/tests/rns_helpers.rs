//! Shared helpers of the `rns_*` tests (included with `#[path]`; also built alone, with no tests).
#![allow(dead_code)]

use num_bigint::{BigInt, BigUint};
use num_traits::ToPrimitive;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rhea_math::basis::Basis;
use rhea_math::prime::{generate_ntt_primes, is_prime};

/// A seeded test RNG.
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// `count` distinct NTT-friendly primes (`q ≡ 1 mod 2^(log_n+1)`) near `2^bits`, none in
/// `exclude` (from `rhea_math::prime`, itself tested against its own references).
pub fn ntt_primes(bits: u32, count: usize, log_n: u32, exclude: &[u64]) -> Vec<u64> {
    let primes = generate_ntt_primes(bits, 1 << log_n, count, exclude).unwrap();
    for &q in &primes {
        assert!(is_prime(q) && q >> 61 == 0 && !exclude.contains(&q));
    }
    primes
}

/// A basis of `count` NTT primes of `bits` bits avoiding `exclude`.
pub fn basis(bits: u32, count: usize, exclude: &[u64]) -> Basis {
    Basis::new(&ntt_primes(bits, count, 10, exclude)).unwrap()
}

/// A basis mixing the given bit sizes (one prime each), avoiding `exclude`.
pub fn mixed_basis(bits: &[u32], exclude: &[u64]) -> Basis {
    let mut values: Vec<u64> = Vec::new();
    for &b in bits {
        let mut ex = exclude.to_vec();
        ex.extend(&values);
        values.extend(ntt_primes(b, 1, 10, &ex));
    }
    Basis::new(&values).unwrap()
}

/// A uniformly random integer in `[0, bound)` (tiny bias, irrelevant here); never zero unless
/// `bound == 1`.
pub fn random_below(rng: &mut ChaCha8Rng, bound: &BigUint) -> BigUint {
    let words = bound.bits().div_ceil(32) as usize + 2;
    loop {
        let digits: Vec<u32> = (0..words).map(|_| rng.random()).collect();
        let x = BigUint::new(digits) % bound;
        if x != BigUint::from(0u8) || *bound == BigUint::from(1u8) {
            return x;
        }
    }
}

/// A random integer in `(-Q/2, Q/2]`.
pub fn random_centered(rng: &mut ChaCha8Rng, q: &BigUint) -> BigInt {
    let x = BigInt::from(random_below(rng, q));
    let q = BigInt::from(q.clone());
    if &x * 2 > q {
        x - q
    } else {
        x
    }
}

/// `x mod m`, by `num-bigint` alone.
pub fn big_mod(x: &BigUint, m: u64) -> u64 {
    (x % m).to_u64().unwrap()
}

/// `x mod m` in `[0, m)` for a signed `x`, by `num-bigint` alone.
pub fn big_mod_signed(x: &BigInt, m: u64) -> u64 {
    let m = BigInt::from(m);
    let r = ((x % &m) + &m) % &m;
    r.to_u64().unwrap()
}

/// The `[limb][n]` residues of the given integers, by `num-bigint` alone.
pub fn residues_of(basis: &Basis, xs: &[BigUint]) -> Vec<u64> {
    let n = xs.len();
    let mut out = vec![0u64; basis.len() * n];
    for (i, q) in basis.values().into_iter().enumerate() {
        for (k, x) in xs.iter().enumerate() {
            out[i * n + k] = big_mod(x, q);
        }
    }
    out
}

/// `n` random integers in `[0, bound)` and their `[limb][n]` residues over `basis`.
pub fn random_poly(
    rng: &mut ChaCha8Rng,
    basis: &Basis,
    bound: &BigUint,
    n: usize,
) -> (Vec<BigUint>, Vec<u64>) {
    let xs: Vec<BigUint> = (0..n).map(|_| random_below(rng, bound)).collect();
    let data = residues_of(basis, &xs);
    (xs, data)
}

/// Coefficient `k` of every limb of a `[limb][n]` buffer.
pub fn column(data: &[u64], n: usize, k: usize) -> Vec<u64> {
    data.iter().skip(k).step_by(n).copied().collect()
}
