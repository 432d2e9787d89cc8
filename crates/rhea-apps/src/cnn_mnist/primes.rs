//! The plaintext modulus of the seed layout: a prime `t ≡ 1 (mod 2N)` of a given size (BGV
//! batching), by a deterministic Miller-Rabin test.

fn mul_mod(a: u64, b: u64, m: u64) -> u64 {
    ((a as u128 * b as u128) % m as u128) as u64
}

fn pow_mod(mut a: u64, mut e: u64, m: u64) -> u64 {
    let mut r = 1 % m;
    a %= m;
    while e > 0 {
        if e & 1 == 1 {
            r = mul_mod(r, a, m);
        }
        a = mul_mod(a, a, m);
        e >>= 1;
    }
    r
}

/// Deterministic Miller–Rabin for 64-bit integers.
pub(super) fn is_prime(n: u64) -> bool {
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

/// The largest prime `t < 2^bits` with `t ≡ 1 (mod 2N)` (`N = 2^log_n`): a `bits`-bit
/// batching plaintext modulus.
pub fn batching_prime_below(bits: u32, log_n: u32) -> Option<u64> {
    let step = 2u64 << log_n;
    let hi = 1u64.checked_shl(bits)?;
    let lo = hi >> 1;
    let mut c = (hi - 1) / step * step + 1;
    while c > lo {
        if is_prime(c) {
            return Some(c);
        }
        c -= step;
    }
    None
}
