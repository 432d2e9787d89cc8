//! Modular arithmetic in IEEE-754 doubles for primes below 2^[`F64_MAX_Q_BITS`]: the twin of
//! `kernels/fp64.cuh`.
//!
//! A residue is held as a signed integer in a double (`|v| < 2^50`), and a modular product is a
//! rounded product, its exact low part (the fused multiply-add two-product), a rounded quotient
//! and one more fused multiply-add: six floating-point operations and no 64-bit integer
//! multiply. On the H100 the FP64 pipe runs at the rate of the integer pipe that the 64-bit Shoup
//! products use, and a forward NTT butterfly costs 8 operations instead of ~23
//! (`BENCHMARKS.md` §24). The kernel header documents why each operation is exact; these Rust
//! functions compute the same doubles (Rust's `f64::mul_add` is the device's correctly rounded
//! DFMA), so the bounds are tested here, at their limits, on the CPU.

use crate::registry::Header;

/// `kernels/fp64.cuh`: the device functions.
pub const FP64_CUH: Header = Header {
    name: "fp64.cuh",
    source: include_str!("../kernels/fp64.cuh"),
};

/// The largest prime size, in bits, that the FP64 arithmetic takes (exclusive: `q < 2^46`).
pub const F64_MAX_Q_BITS: u32 = 46;

/// `1.5 · 2^52`: added to `|x| < 2^51`, rounds `x` to the nearest integer.
const ROUND_MAGIC: f64 = 6_755_399_441_055_744.0;

/// `2^52`.
const TWO_52: f64 = 4_503_599_627_370_496.0;

/// Whether the FP64 arithmetic holds for the prime `q` (odd, `q < 2^46`).
pub fn f64_prime_ok(q: u64) -> bool {
    q % 2 == 1 && q < (1u64 << F64_MAX_Q_BITS)
}

/// `rint(a · b)` of the unrounded product, for `|a · b| < 2^51` (`f64_round_mul`).
pub fn round_mul(a: f64, b: f64) -> f64 {
    a.mul_add(b, ROUND_MAGIC) - ROUND_MAGIC
}

/// `t ≡ y · w (mod q)` with `|t| ≤ 0.625 q`, for `|y| < 2^50`, `0 ≤ w < q < 2^46` and
/// `wq = w / q` rounded (`f64_mulmod`).
pub fn mulmod(y: f64, w: f64, wq: f64, q: f64) -> f64 {
    let h = y * w;
    let l = y.mul_add(w, -h);
    let k = round_mul(y, wq);
    (-k).mul_add(q, h) + l
}

/// `t ≡ v (mod q)` with `|t| ≤ q / 2 + 1`, for `|v| < 2^51` and `qinv = 1 / q` rounded
/// (`f64_reduce`).
pub fn reduce(v: f64, qinv: f64, q: f64) -> f64 {
    (-round_mul(v, qinv)).mul_add(q, v)
}

/// The double holding the word `a < 2^52`, by its bits (`f64_from_word`).
pub fn from_word(a: u64) -> f64 {
    f64::from_bits(a | 0x4330_0000_0000_0000) - TWO_52
}

/// The word held by the double `0 ≤ v < 2^52`, by its bits (`f64_to_word`).
pub fn to_word(v: f64) -> u64 {
    (v + TWO_52).to_bits() & 0x000F_FFFF_FFFF_FFFF
}

/// The base conversions' two-part sums (`BCONV_F64ACC` in `kernels/bconv.cu`) take a column
/// whose sums are below `2^TWO_PART_MAX_LOG2`: `(Σ q_i + L) · p ≤ 2^106` (`L ≤ 16` inputs).
pub const TWO_PART_MAX_LOG2: u32 = 106;

/// The high word of a sum `S < 2^107` of products `t_i · c_i` from its two parts
/// (`bconv_f64acc_high`): `lo = S mod 2^64`, exact, and `s`, the products summed in doubles
/// scaled by `2^-64` (`s = fma(t_i as f64, (c_i as f64) · 2^-64, s)` in index order). `s` is within
/// `2^-6` of `S · 2^-64` below the bound, so the high word is the integer nearest to
/// `s − lo · 2^-64`; the top 32 bits of `lo` suffice for it.
pub fn two_part_high(lo: u64, s: f64) -> u64 {
    let lo_top = f64::from_bits(0x4330_0000_0000_0000 | (lo >> 32)); // 2^52 + lo_hi
    let d = lo_top.mul_add(-TWO_M32, s + TWO_20);
    (d + ROUND_MAGIC).to_bits() & ((1u64 << 51) - 1)
}

/// `2^-32`.
const TWO_M32: f64 = 1.0 / 4_294_967_296.0;

/// `2^20`.
const TWO_20: f64 = 1_048_576.0;

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// `v mod q` in `[0, q)` for `|v| < 2^51`: [`reduce`], then `q` added to a negative result.
    fn canonical(v: f64, qinv: f64, q: f64) -> f64 {
        let r = reduce(v, qinv, q);
        if r < 0.0 {
            r + q
        } else {
            r
        }
    }

    /// `a mod q` for a signed 128-bit `a`, in `[0, q)`.
    fn rem(a: i128, q: u64) -> u64 {
        a.rem_euclid(q as i128) as u64
    }

    /// Odd moduli near the sizes used (40-bit scaling primes) and at the limit.
    fn moduli() -> Vec<u64> {
        vec![
            (1 << 20) + 7,
            (1 << 40) - 87,
            (1 << 40) + 15,
            (1 << 45) - 55,
            (1 << 46) - 1,
        ]
    }

    #[test]
    fn words_round_trip() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for a in [0u64, 1, (1 << 52) - 1, 123_456_789_012_345] {
            assert_eq!(to_word(from_word(a)), a);
            assert_eq!(from_word(a), a as f64);
        }
        for _ in 0..10_000 {
            let a = rng.random::<u64>() >> 12;
            assert_eq!(to_word(from_word(a)), a);
        }
    }

    #[test]
    fn mulmod_is_exact_and_bounded_up_to_its_limits() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let ylim = (1i64 << 50) - 1;
        for q in moduli() {
            let (qf, qi) = (q as f64, q as i128);
            for i in 0..20_000 {
                // The extremes first: |y| at its bound, w at q - 1.
                let y: i64 = match i {
                    0 => ylim,
                    1 => -ylim,
                    _ => rng.random_range(-ylim..=ylim),
                };
                let w: u64 = if i < 4 { q - 1 } else { rng.random_range(0..q) };
                let wq = w as f64 / qf;
                let t = mulmod(y as f64, w as f64, wq, qf);
                assert_eq!(t, t.trunc(), "not an integer");
                assert!(t.abs() <= 0.625 * qf, "q {q} y {y} w {w}: |{t}| > 0.625 q");
                assert_eq!(
                    rem(t as i128, q),
                    rem(y as i128 * w as i128, q),
                    "q {q} y {y} w {w}"
                );
                let _ = qi;
            }
        }
    }

    #[test]
    fn canonical_reduces_every_value_below_2_to_the_51() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let vlim = (1i64 << 51) - 1;
        for q in moduli() {
            let (qf, qinv) = (q as f64, 1.0 / q as f64);
            for i in 0..20_000 {
                let v: i64 = match i {
                    0 => vlim,
                    1 => -vlim,
                    2 => 0,
                    3 => q as i64,
                    4 => -(q as i64),
                    _ => rng.random_range(-vlim..=vlim),
                };
                let r = reduce(v as f64, qinv, qf);
                assert!(r.abs() <= qf / 2.0 + 1.0, "q {q} v {v}: {r}");
                let c = canonical(v as f64, qinv, qf);
                assert!((0.0..qf).contains(&c), "q {q} v {v}: {c}");
                assert_eq!(to_word(c), rem(v as i128, q), "q {q} v {v}");
            }
        }
    }

    /// A forward negacyclic NTT in these doubles (16 stages of `x ± w y`, no reduction until
    /// the end) equals the integer one: the growth bound of 0.625 q per stage holds.
    #[test]
    fn sixteen_forward_stages_stay_exact() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let q = (1u64 << 46) - 1;
        let (qf, qinv) = (q as f64, 1.0 / q as f64);
        // Worst case for growth: random twiddles, inputs at the lifted bound 2^45.
        let n = 1 << 16;
        let mut v: Vec<f64> = (0..n)
            .map(|_| rng.random_range(-(1i64 << 45)..(1i64 << 45)) as f64)
            .collect();
        let mut r: Vec<u64> = v.iter().map(|&x| rem(x as i128, q)).collect();
        let mut t = n;
        while t > 1 {
            t /= 2;
            for blk in (0..n).step_by(2 * t) {
                let w = rng.random_range(0..q);
                let (wf, wq) = (w as f64, w as f64 / qf);
                for j in blk..blk + t {
                    let p = mulmod(v[j + t], wf, wq, qf);
                    let a = v[j];
                    v[j] = a + p;
                    v[j + t] = a - p;
                    let pr = (r[j + t] as u128 * w as u128 % q as u128) as u64;
                    let ar = r[j];
                    r[j] = (ar + pr) % q;
                    r[j + t] = (ar + q - pr) % q;
                }
            }
        }
        for (x, want) in v.iter().zip(&r) {
            assert!(x.abs() < (1u64 << 50) as f64);
            assert_eq!(to_word(canonical(*x, qinv, qf)), *want);
        }
    }

    /// The inverse in these doubles as `ntt_inv_*f_*` runs it (Gentleman–Sande stages: sums
    /// reduced, differences times the twiddle; the last stage times `N^{-1}·f` and
    /// `inv_root_powers[1]·N^{-1}·f` with their quotient factors `w·fl(1/q)`, then `q` added to a
    /// negative value) equals `NttTable::inverse` times `f`, word for word, and every value
    /// stays within 0.75 q: canonical inputs including `q − 1` and 0, NTT-friendly primes of
    /// 30, 40 and 45 bits at N = 2^12.
    #[test]
    fn the_inverse_transform_is_exact() {
        use rhea_math::ntt::NttTable;
        use rhea_math::Modulus;
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let n = 1usize << 12;
        for bits in [30u32, 40, 45] {
            let q = rhea_math::prime::generate_ntt_primes(bits, n, 1, &[]).unwrap()[0];
            let m = Modulus::new(q).unwrap();
            let table = NttTable::new(m, n).unwrap();
            let (qf, qinv) = (q as f64, 1.0 / q as f64);
            let f = rng.random_range(1..q);
            let ninv = m.mul(table.inv_degree(), f);
            let last = m.mul(m.mul(table.inv_root_powers()[1], table.inv_degree()), f);
            let pair = |w: u64| (w as f64, w as f64 * qinv);
            let mut x: Vec<u64> = (0..n).map(|_| rng.random_range(0..q)).collect();
            x[0] = q - 1;
            x[1] = q - 1;
            x[2] = 0;
            let mut v: Vec<f64> = x.iter().map(|&w| w as f64).collect();
            let mut t = 1;
            let mut m_blocks = n / 2;
            while m_blocks >= 1 {
                for i in 0..m_blocks {
                    let (wf, wq) = pair(table.inv_root_powers()[m_blocks + i]);
                    for j in 2 * i * t..2 * i * t + t {
                        let (a, b) = (v[j], v[j + t]);
                        if m_blocks == 1 {
                            let (nf, nq) = pair(ninv);
                            let (lf, lq) = pair(last);
                            v[j] = mulmod(a + b, nf, nq, qf);
                            v[j + t] = mulmod(a - b, lf, lq, qf);
                        } else {
                            v[j] = reduce(a + b, qinv, qf);
                            v[j + t] = mulmod(a - b, wf, wq, qf);
                        }
                    }
                }
                for y in &v {
                    assert!(y.abs() <= 0.75 * qf, "{bits}-bit q: {y} beyond 0.75 q");
                }
                t *= 2;
                m_blocks /= 2;
            }
            let mut want = x.clone();
            table.inverse(&mut want).unwrap();
            for (k, (y, w)) in v.iter().zip(&want).enumerate() {
                let got = to_word(if *y < 0.0 { y + qf } else { *y });
                assert_eq!(got, m.mul(*w, f), "{bits}-bit q, entry {k}");
            }
        }
    }

    /// The two-part sum of `t_i · c_i` as the kernel forms it: the exact sum modulo 2^64 and the
    /// FMA chain of the rounded doubles.
    fn two_part_sum(t: &[u64], c: &[u64]) -> (u64, f64) {
        let scale = TWO_M32 * TWO_M32;
        let mut lo = 0u64;
        let mut s = 0.0f64;
        for (&ti, &ci) in t.iter().zip(c) {
            lo = lo.wrapping_add(ti.wrapping_mul(ci));
            s = (ti as f64).mul_add(ci as f64 * scale, s);
        }
        (lo, s)
    }

    /// At the bound (`(Σ q_i + L) · p` just below 2^106: 16 inputs, 61-bit `p`), with every
    /// `t_i = q_i − 1` and `c_i = p − 1` (the largest sum) and at random, the high word is exact;
    /// well beyond the bound it is not (the bound is what makes it exact).
    #[test]
    fn two_part_sums_recover_the_high_word_up_to_their_bound() {
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let bound = 1u128 << TWO_PART_MAX_LOG2;
        // Shapes: (inputs, input bits, output bits), each with (Σ q + L) · p ≤ 2^106 — 16 × 41-bit
        // inputs into 61 bits is at the edge; 9 × 60-bit inputs into 40 bits is the ModDown's.
        for (l, qbits, pbits) in [
            (16usize, 41u32, 61u32),
            (16, 40, 61),
            (9, 60, 40),
            (1, 44, 61),
        ] {
            let p = (1u64 << pbits) - 1;
            let q: Vec<u64> = (0..l).map(|i| (1u64 << qbits) - 1 - 2 * i as u64).collect();
            let sum_q: u128 = q.iter().map(|&x| x as u128).sum::<u128>() + l as u128;
            assert!(
                sum_q * p as u128 <= bound,
                "{l} x {qbits} bits: beyond the bound"
            );
            for trial in 0..20_000 {
                let (t, c): (Vec<u64>, Vec<u64>) = q
                    .iter()
                    .map(|&qi| match trial {
                        0 => (qi - 1, p - 1),
                        1 => (qi - 1, 1),
                        2 => (0, p - 1),
                        _ => (rng.random_range(0..qi), rng.random_range(0..p)),
                    })
                    .unzip();
                let exact: u128 = t.iter().zip(&c).map(|(&a, &b)| a as u128 * b as u128).sum();
                let (lo, s) = two_part_sum(&t, &c);
                assert_eq!(lo, exact as u64);
                assert_eq!(
                    two_part_high(lo, s),
                    (exact >> 64) as u64,
                    "{l} x {qbits}: {t:?}"
                );
            }
        }
        // 16 products of 61-bit factors (~2^126): the doubles are too coarse.
        let p = (1u64 << 61) - 1;
        let t = vec![(1u64 << 61) - 1; 16];
        let wrong = (0..1000).any(|_| {
            let c: Vec<u64> = (0..16).map(|_| rng.random_range(p / 2..p)).collect();
            let exact: u128 = t.iter().zip(&c).map(|(&a, &b)| a as u128 * b as u128).sum();
            let (lo, s) = two_part_sum(&t, &c);
            two_part_high(lo, s) != (exact >> 64) as u64
        });
        assert!(
            wrong,
            "beyond the bound the high word should not always be exact"
        );
    }
}
