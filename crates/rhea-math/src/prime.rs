//! NTT-friendly prime generation.
//!
//! - [`is_prime`]: deterministic Miller–Rabin, exact for every `u64`.
//! - [`is_ntt_friendly`]: a prime `q < 2^61` with `q ≡ 1 (mod 2N)`, so that `Z_q` holds a primitive
//!   `2N`-th root of unity and the negacyclic NTT of degree `N` exists.
//! - [`generate_ntt_primes`]: distinct NTT-friendly primes as close as possible to `2^bits`, taken
//!   alternately just above and just below `2^bits` (the nearer side first), so that the product of
//!   consecutive primes stays close to a power of two (this keeps CKKS scales stable).
//! - [`primitive_root_2n`]: the *smallest* primitive `2N`-th root of unity modulo `q`, a canonical
//!   choice that makes every NTT table (and so every GPU table) reproducible.
//!
//! ```
//! use rhea_math::prime::{generate_ntt_primes, is_ntt_friendly, primitive_root_2n};
//! let primes = generate_ntt_primes(50, 1 << 12, 3, &[])?;
//! for &q in &primes {
//!     assert!(is_ntt_friendly(q, 1 << 12));
//!     let psi = primitive_root_2n(q, 1 << 12)?;
//!     assert!(psi > 1 && psi < q);
//! }
//! # Ok::<(), rhea_math::MathError>(())
//! ```

use crate::error::{MathError, Result};
use crate::modulus::MAX_MODULUS_BITS;
use crate::ntt::{MAX_LOG_DEGREE, MIN_LOG_DEGREE};
use crate::Modulus;

/// The smallest accepted `bits` argument of [`generate_ntt_primes`].
pub const MIN_PRIME_BITS: u32 = 10;
/// The largest accepted `bits` argument of [`generate_ntt_primes`] (primes stay below `2^61`).
pub const MAX_PRIME_BITS: u32 = MAX_MODULUS_BITS;

/// `a · b mod n` without overflow, for any `n ≥ 1`.
#[inline]
fn mul_mod(a: u64, b: u64, n: u64) -> u64 {
    ((a as u128 * b as u128) % n as u128) as u64
}

/// `base^exp mod n` for any `n ≥ 1`.
fn pow_mod(base: u64, mut exp: u64, n: u64) -> u64 {
    let mut result = 1 % n;
    let mut b = base % n;
    while exp > 0 {
        if exp & 1 == 1 {
            result = mul_mod(result, b, n);
        }
        b = mul_mod(b, b, n);
        exp >>= 1;
    }
    result
}

/// Whether `n` is prime.
///
/// Trial division by the primes below 40, then Miller–Rabin with the first twelve prime bases
/// (2, 3, …, 37), which is deterministic for every `n < 3.3·10^24`, hence for all `u64`.
pub fn is_prime(n: u64) -> bool {
    const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    if n < 2 {
        return false;
    }
    for p in BASES {
        if n == p {
            return true;
        }
        if n % p == 0 {
            return false;
        }
    }
    // n > 37 and odd: write n - 1 = d · 2^s with d odd.
    let s = (n - 1).trailing_zeros();
    let d = (n - 1) >> s;
    'bases: for a in BASES {
        let mut x = pow_mod(a, d, n);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mul_mod(x, x, n);
            if x == n - 1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

/// Checks that `degree` is a power of two `2^k` with `MIN_LOG_DEGREE ≤ k ≤ MAX_LOG_DEGREE`.
fn check_degree(degree: usize) -> Result<()> {
    let ok = degree.is_power_of_two()
        && (MIN_LOG_DEGREE..=MAX_LOG_DEGREE).contains(&degree.trailing_zeros());
    if ok {
        Ok(())
    } else {
        Err(MathError::InvalidDegree {
            degree,
            min_log: MIN_LOG_DEGREE,
            max_log: MAX_LOG_DEGREE,
        })
    }
}

/// Whether `q` is an NTT-friendly modulus for ring degree `degree`: `q` is a prime below `2^61`
/// with `q ≡ 1 (mod 2·degree)`. Returns `false` for `degree = 0`.
pub fn is_ntt_friendly(q: u64, degree: usize) -> bool {
    let Some(two_n) = (degree as u64).checked_mul(2) else {
        return false;
    };
    degree != 0 && q >> MAX_MODULUS_BITS == 0 && q % two_n == 1 && is_prime(q)
}

/// `count` distinct NTT-friendly primes for ring degree `degree`, as close as possible to `2^bits`.
///
/// The candidates are the integers `q ≡ 1 (mod 2·degree)`. The search walks two cursors outwards
/// from `2^bits`: one upwards (primes in `(2^bits, 2^(bits+1))`, never reaching `2^61`) and one
/// downwards (primes in `(2^(bits-1), 2^bits)`). The first prime taken is the nearer of the two
/// nearest ones; after that the sides alternate (above, below, above, … or the reverse), and when
/// one side runs out the other continues alone. Primes listed in `exclude` are skipped (they do
/// not count and do not break the alternation). The result is deterministic.
///
/// Errors: [`MathError::InvalidArgument`] if `bits` is outside `10..=61`,
/// [`MathError::InvalidDegree`] if `degree` is not a power of two in the supported range, and
/// [`MathError::NotEnoughPrimes`] if fewer than `count` primes exist in the window.
pub fn generate_ntt_primes(
    bits: u32,
    degree: usize,
    count: usize,
    exclude: &[u64],
) -> Result<Vec<u64>> {
    if !(MIN_PRIME_BITS..=MAX_PRIME_BITS).contains(&bits) {
        return Err(MathError::InvalidArgument(format!(
            "prime size of {bits} bits is outside {MIN_PRIME_BITS}..={MAX_PRIME_BITS}"
        )));
    }
    check_degree(degree)?;
    let step = 2 * degree as u64;
    let center = 1u64 << bits;
    // Window: (2^(bits-1), min(2^(bits+1), 2^61)).
    let low_bound = center >> 1;
    let high_bound = (center << 1).min(1u64 << MAX_MODULUS_BITS);
    // The smallest candidate above 2^bits (2^bits itself is never ≡ 1 mod 2N, as 2N ≥ 2).
    let first_above = (center - 1).div_ceil(step).checked_mul(step).map(|v| v + 1);
    let mut above = first_above.filter(|&v| v < high_bound);
    let mut below = first_above
        .and_then(|v| v.checked_sub(step))
        .filter(|&v| v > low_bound);

    let wanted = |q: u64| !exclude.contains(&q) && is_prime(q);
    // Advance a cursor to the next wanted prime (inclusive), or `None` past its bound.
    let next_above = |mut c: Option<u64>| {
        while let Some(q) = c {
            if wanted(q) {
                return Some(q);
            }
            c = q.checked_add(step).filter(|&v| v < high_bound);
        }
        None
    };
    let next_below = |mut c: Option<u64>| {
        while let Some(q) = c {
            if wanted(q) {
                return Some(q);
            }
            c = q.checked_sub(step).filter(|&v| v > low_bound);
        }
        None
    };

    let mut primes = Vec::with_capacity(count);
    let mut take_above: Option<bool> = None;
    while primes.len() < count {
        above = next_above(above);
        below = next_below(below);
        let from_above = match (above, below) {
            (None, None) => {
                return Err(MathError::NotEnoughPrimes {
                    count,
                    bits,
                    degree,
                });
            }
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(a), Some(b)) => take_above.unwrap_or(a - center < center - b),
        };
        if from_above {
            let q = above.expect("checked above");
            primes.push(q);
            above = q.checked_add(step).filter(|&v| v < high_bound);
        } else {
            let q = below.expect("checked above");
            primes.push(q);
            below = q.checked_sub(step).filter(|&v| v > low_bound);
        }
        take_above = Some(!from_above);
    }
    Ok(primes)
}

/// The smallest primitive `2·degree`-th root of unity modulo `q`, i.e. the smallest `ψ ∈ [2, q)`
/// with `ψ^degree ≡ -1 (mod q)`.
///
/// A first root is found deterministically as `x^((q-1)/2N)` for the smallest `x ≥ 2` that gives
/// one; the smallest root is then the minimum over its `N` odd powers `ψ^(2k+1)` (SEAL's choice).
///
/// Errors: [`MathError::InvalidDegree`] if `degree` is not a power of two in the supported range,
/// [`MathError::NotNttFriendly`] if `q` is not NTT-friendly for `degree`.
pub fn primitive_root_2n(q: u64, degree: usize) -> Result<u64> {
    check_degree(degree)?;
    if !is_ntt_friendly(q, degree) {
        return Err(MathError::NotNttFriendly { modulus: q, degree });
    }
    let m = Modulus::new(q)?;
    let n = degree as u64;
    let cofactor = (q - 1) / (2 * n);
    // Half of all x give a primitive 2N-th root, so this loop ends after a few tries.
    let mut x = 2u64;
    let root = loop {
        let g = m.pow(x, cofactor);
        // g has order dividing 2N; it is exactly 2N iff g^N = -1 (2N is a power of two).
        if m.pow(g, n) == q - 1 {
            break g;
        }
        x += 1;
    };
    // The primitive 2N-th roots are root^(2k+1) for k = 0..N.
    let square = m.mul(root, root);
    let mut current = root;
    let mut smallest = root;
    for _ in 1..n {
        current = m.mul(current, square);
        smallest = smallest.min(current);
    }
    Ok(smallest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial_division(n: u64) -> bool {
        if n < 2 {
            return false;
        }
        let mut d = 2;
        while d * d <= n {
            if n % d == 0 {
                return false;
            }
            d += 1;
        }
        true
    }

    #[test]
    fn is_prime_matches_trial_division() {
        for n in 0..20_000u64 {
            assert_eq!(is_prime(n), trial_division(n), "n = {n}");
        }
        // Around 2^32, where trial division is still affordable.
        for n in (1u64 << 32) - 300..(1u64 << 32) + 300 {
            assert_eq!(is_prime(n), trial_division(n), "n = {n}");
        }
    }

    #[test]
    fn known_large_primes_and_composites() {
        let primes = [
            (1u64 << 61) - 1,           // Mersenne prime M61
            0x1fff_ffff_ffe0_0001,      // 2^61 - 2^21 + 1
            18_446_744_073_709_551_557, // largest 64-bit prime
            4_611_686_018_427_387_847,  // largest prime below 2^62
            1_152_921_504_606_584_833,  // 60-bit NTT prime
            (1u64 << 31) - 1,           // M31
            998_244_353,                // 119·2^23 + 1
            0xffff_ffff_0000_0001,      // Goldilocks
        ];
        for p in primes {
            assert!(is_prime(p), "{p} is prime");
        }
        let composites = [
            561u64,
            1105,
            1729,
            2465,
            41041,
            825_265,
            321_197_185,
            // Strong pseudoprimes: to base 2; to bases 2,3; to 2,3,5; to 2..7; to 2..11;
            // to 2..13; to 2..17; to 2..19,23; to 2..37 (psi_12 is larger than 2^64).
            2047,
            1_373_653,
            25_326_001,
            3_215_031_751,
            2_152_302_898_747,
            3_474_749_660_383,
            341_550_071_728_321,
            3_825_123_056_546_413_051,
            // Products of large primes.
            u64::MAX,
            ((1u64 << 31) - 1) * ((1u64 << 31) - 1),
            4_294_967_291 * 4_294_967_279,
        ];
        for (i, c) in composites.iter().copied().enumerate() {
            assert!(!is_prime(c), "composite #{i}: {c}");
        }
        // A large Carmichael number: (6k+1)(12k+1)(18k+1) with all three factors prime.
        // Chernick's form; k ≈ 10^5 keeps the product below 2^64.
        let mut kk = 100_000u64;
        let carmichael = loop {
            let (a, b, c) = (6 * kk + 1, 12 * kk + 1, 18 * kk + 1);
            if is_prime(a) && is_prime(b) && is_prime(c) {
                break a * b * c;
            }
            kk += 1;
        };
        assert!(!is_prime(carmichael));
        // Fermat's test to base 2 is fooled by it (a Carmichael number), Miller–Rabin is not.
        assert_eq!(pow_mod(2, carmichael - 1, carmichael), 1);
    }

    #[test]
    fn generated_primes_are_ntt_friendly_distinct_and_near_2_to_the_bits() {
        for &(bits, log_n, count) in &[
            (20u32, 10u32, 4usize),
            (30, 12, 6),
            (40, 16, 6),
            (50, 16, 8),
            (60, 17, 8),
            (61, 17, 5),
        ] {
            let degree = 1usize << log_n;
            let primes = generate_ntt_primes(bits, degree, count, &[]).unwrap();
            assert_eq!(primes.len(), count);
            let center = 1u64 << bits;
            let mut sorted = primes.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), count, "distinct");
            for (i, &q) in primes.iter().enumerate() {
                assert!(is_ntt_friendly(q, degree), "{q}");
                assert!(q < 1 << 61);
                // Bit size as asked: log2(q) rounds to `bits` (q is within 5% of 2^bits).
                assert!(q > center >> 1 && q < center << 1);
                let dist = q.abs_diff(center) as f64 / center as f64;
                assert!(dist < 0.05, "bits {bits}: prime {q} is {dist} away");
                assert_eq!((q as f64).log2().round() as u32, bits);
                if i > 0 && bits < 61 {
                    // Alternation around 2^bits.
                    assert_ne!(
                        q > center,
                        primes[i - 1] > center,
                        "bits {bits}: {primes:?}"
                    );
                }
                if bits == 61 {
                    assert_eq!(64 - q.leading_zeros(), 61);
                }
            }
            // Nearest first: no NTT-friendly prime is closer to 2^bits than the first one.
            let d0 = primes[0].abs_diff(center);
            let step = 2 * degree as u64;
            let mut c = center + 1;
            while c.abs_diff(center) < d0 {
                assert!(!is_prime(c));
                c += step;
            }
            let mut c = center + 1 - step;
            while c.abs_diff(center) < d0 {
                assert!(!is_prime(c));
                c -= step;
            }
            // Deterministic.
            assert_eq!(
                generate_ntt_primes(bits, degree, count, &[]).unwrap(),
                primes
            );
        }
    }

    #[test]
    fn alternation_takes_the_nearest_prime_on_each_side() {
        let degree = 1 << 10;
        let step = 2 * degree as u64;
        let center = 1u64 << 40;
        let primes = generate_ntt_primes(40, degree, 6, &[]).unwrap();
        let mut above: Vec<u64> = (0..)
            .map(|k| center + 1 + k * step)
            .filter(|&q| is_prime(q))
            .take(3)
            .collect();
        let mut below: Vec<u64> = (1..)
            .map(|k| center + 1 - k * step)
            .filter(|&q| is_prime(q))
            .take(3)
            .collect();
        let mut expected = Vec::new();
        let above_first = above[0] - center < center - below[0];
        above.reverse();
        below.reverse();
        for i in 0..6 {
            let side = if (i % 2 == 0) == above_first {
                &mut above
            } else {
                &mut below
            };
            expected.push(side.pop().unwrap());
        }
        assert_eq!(primes, expected);
    }

    #[test]
    fn exclude_skips_primes() {
        let degree = 1 << 12;
        let first = generate_ntt_primes(45, degree, 6, &[]).unwrap();
        let more = generate_ntt_primes(45, degree, 4, &first[..3]).unwrap();
        for q in &more {
            assert!(!first[..3].contains(q));
        }
        // The primes not excluded are still found, nearest first.
        assert!(more.contains(&first[3]) && more.contains(&first[4]) && more.contains(&first[5]));
    }

    #[test]
    fn generation_errors() {
        assert!(matches!(
            generate_ntt_primes(9, 1 << 4, 1, &[]),
            Err(MathError::InvalidArgument(_))
        ));
        assert!(matches!(
            generate_ntt_primes(62, 1 << 4, 1, &[]),
            Err(MathError::InvalidArgument(_))
        ));
        assert!(matches!(
            generate_ntt_primes(40, 1000, 1, &[]),
            Err(MathError::InvalidDegree { degree: 1000, .. })
        ));
        assert!(matches!(
            generate_ntt_primes(40, 1 << 18, 1, &[]),
            Err(MathError::InvalidDegree { .. })
        ));
        // Only a handful of 12-bit primes are ≡ 1 mod 2^9.
        assert_eq!(
            generate_ntt_primes(12, 1 << 8, 50, &[]),
            Err(MathError::NotEnoughPrimes {
                count: 50,
                bits: 12,
                degree: 1 << 8
            })
        );
        // No candidate at all: 2N > 2^(bits+1).
        assert!(matches!(
            generate_ntt_primes(10, 1 << 12, 1, &[]),
            Err(MathError::NotEnoughPrimes { .. })
        ));
    }

    #[test]
    fn small_window_is_exhausted_exactly() {
        // All 12-bit-window primes ≡ 1 mod 512, by brute force.
        let degree = 1 << 8;
        let all: Vec<u64> = ((1u64 << 11) + 1..(1 << 13))
            .filter(|&q| q % 512 == 1 && trial_division(q))
            .collect();
        let got = generate_ntt_primes(12, degree, all.len(), &[]).unwrap();
        let mut sorted = got.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, all);
    }

    #[test]
    fn primitive_root_is_smallest_and_has_order_2n() {
        for &(bits, log_n) in &[(20u32, 3u32), (30, 10), (50, 14), (60, 17), (61, 16)] {
            let degree = 1usize << log_n;
            for q in generate_ntt_primes(bits, degree, 3, &[]).unwrap() {
                let psi = primitive_root_2n(q, degree).unwrap();
                let m = Modulus::new(q).unwrap();
                // Order exactly 2N: psi^N = -1 (so psi^(2N) = 1 and no smaller power of two works).
                assert_eq!(m.pow(psi, degree as u64), q - 1);
                assert_eq!(m.pow(psi, 2 * degree as u64), 1);
                assert_eq!(primitive_root_2n(q, degree).unwrap(), psi);
            }
        }
        // Smallest: brute force at a small prime.
        let q = 7681u64; // 7681 = 15·512 + 1
        for log_n in 1..=8u32 {
            let degree = 1usize << log_n;
            let m = Modulus::new(q).unwrap();
            let brute = (2..q).find(|&x| m.pow(x, degree as u64) == q - 1).unwrap();
            assert_eq!(primitive_root_2n(q, degree).unwrap(), brute);
        }
    }

    #[test]
    fn primitive_root_errors() {
        assert_eq!(
            primitive_root_2n(7681, 1 << 10),
            Err(MathError::NotNttFriendly {
                modulus: 7681,
                degree: 1 << 10
            })
        );
        assert!(matches!(
            primitive_root_2n(7681 * 7, 1 << 4),
            Err(MathError::NotNttFriendly { .. })
        ));
        assert!(matches!(
            primitive_root_2n(7681, 12),
            Err(MathError::InvalidDegree { .. })
        ));
        assert!(!is_ntt_friendly(7681, 0));
        assert!(!is_ntt_friendly((1u64 << 61) - 1, 2)); // prime but 2^61-1 ≡ 3 mod 4
        assert!(!is_ntt_friendly(18_446_744_073_709_551_557, 1)); // prime but ≥ 2^61
        assert!(is_ntt_friendly(7681, 1 << 8));
        assert!(!is_ntt_friendly(7681, 1 << 9));
    }
}
