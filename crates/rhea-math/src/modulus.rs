//! Arithmetic modulo a word-sized modulus `q < 2^61`.
//!
//! [`Modulus`] carries the precomputed constants for Barrett reduction of 128-bit products and
//! offers Shoup multiplication by precomputed constants (the NTT's twiddle multiply), lazy
//! (Harvey) variants that leave results in `[0, 2q)`, exponentiation and inversion.
//! [`Montgomery`] adds Montgomery form for odd moduli.
//!
//! Every non-lazy function returns a canonical value in `[0, q)` given canonical inputs.
//!
//! ```
//! use rhea_math::Modulus;
//! let q = Modulus::new(0x1fff_ffff_ffe0_0001)?;
//! let a = q.mul(123_456_789_012_345, 987_654_321_098_765);
//! assert_eq!(a as u128, (123_456_789_012_345u128 * 987_654_321_098_765) % q.value() as u128);
//! # Ok::<(), rhea_math::MathError>(())
//! ```

use crate::error::{MathError, Result};

/// The largest supported modulus size in bits. Values stay below `2^61`, so lazy forms in
/// `[0, 4q)` and sums of a few of them never overflow a `u64`.
pub const MAX_MODULUS_BITS: u32 = 61;

/// A modulus `2 ≤ q < 2^61` with its Barrett constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Modulus {
    value: u64,
    bits: u32,
    /// `floor((2^128 - 1) / q)`, high word.
    ratio_hi: u64,
    /// `floor((2^128 - 1) / q)`, low word.
    ratio_lo: u64,
}

impl Modulus {
    /// Creates a modulus; `q` must satisfy `2 ≤ q < 2^61`.
    pub fn new(value: u64) -> Result<Self> {
        if value < 2 {
            return Err(MathError::InvalidModulus {
                value,
                reason: "must be at least 2",
            });
        }
        if value >> MAX_MODULUS_BITS != 0 {
            return Err(MathError::InvalidModulus {
                value,
                reason: "must be below 2^61",
            });
        }
        let ratio = u128::MAX / value as u128;
        Ok(Self {
            value,
            bits: 64 - value.leading_zeros(),
            ratio_hi: (ratio >> 64) as u64,
            ratio_lo: ratio as u64,
        })
    }

    /// The modulus `q`.
    #[inline]
    pub fn value(&self) -> u64 {
        self.value
    }

    /// The bit length of `q`.
    #[inline]
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// The Barrett constant `floor((2^128 - 1) / q)` as `(high, low)` words (for GPU kernels).
    #[inline]
    pub fn barrett_ratio(&self) -> (u64, u64) {
        (self.ratio_hi, self.ratio_lo)
    }

    /// `(a + b) mod q` for `a, b < q`.
    #[inline]
    pub fn add(&self, a: u64, b: u64) -> u64 {
        let s = a + b;
        if s >= self.value {
            s - self.value
        } else {
            s
        }
    }

    /// `(a - b) mod q` for `a, b < q`.
    #[inline]
    pub fn sub(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            a - b
        } else {
            a + self.value - b
        }
    }

    /// `-a mod q` for `a < q`.
    #[inline]
    pub fn neg(&self, a: u64) -> u64 {
        if a == 0 {
            0
        } else {
            self.value - a
        }
    }

    /// Barrett reduction of any 128-bit value to `[0, q)`.
    #[inline]
    pub fn reduce_u128(&self, z: u128) -> u64 {
        let z0 = z as u64;
        let z1 = (z >> 64) as u64;
        // floor(z * ratio / 2^128), computed exactly (low word only is needed).
        let z0r0_hi = ((z0 as u128 * self.ratio_lo as u128) >> 64) as u64;
        let a = z1 as u128 * self.ratio_lo as u128;
        let b = z0 as u128 * self.ratio_hi as u128;
        let (s, c1) = a.overflowing_add(b);
        let (s, c2) = s.overflowing_add(z0r0_hi as u128);
        let mid_hi = ((s >> 64) as u64).wrapping_add(((c1 as u64) + (c2 as u64)) << 32 << 32);
        let quotient = z1.wrapping_mul(self.ratio_hi).wrapping_add(mid_hi);
        // The estimate is at most one short, so the remainder is in [0, 2q).
        let r = z0.wrapping_sub(quotient.wrapping_mul(self.value));
        if r >= self.value {
            r - self.value
        } else {
            r
        }
    }

    /// Reduces any `u64` to `[0, q)`.
    #[inline]
    pub fn reduce(&self, a: u64) -> u64 {
        if a < self.value {
            a
        } else {
            self.reduce_u128(a as u128)
        }
    }

    /// Reduces a signed integer to `[0, q)`.
    #[inline]
    pub fn reduce_i64(&self, a: i64) -> u64 {
        let r = self.reduce(a.unsigned_abs());
        if a < 0 {
            self.neg(r)
        } else {
            r
        }
    }

    /// Reduces a signed 128-bit integer to `[0, q)`.
    #[inline]
    pub fn reduce_i128(&self, a: i128) -> u64 {
        let r = self.reduce_u128(a.unsigned_abs());
        if a < 0 {
            self.neg(r)
        } else {
            r
        }
    }

    /// The centred representative of `a < q` in `(-q/2, q/2]`.
    #[inline]
    pub fn center(&self, a: u64) -> i64 {
        if a > self.value / 2 {
            a as i64 - self.value as i64
        } else {
            a as i64
        }
    }

    /// `(a · b) mod q` for `a, b < 2^64` (Barrett reduction of the 128-bit product).
    #[inline]
    pub fn mul(&self, a: u64, b: u64) -> u64 {
        self.reduce_u128(a as u128 * b as u128)
    }

    /// `(a · b + c) mod q` for `a, b, c < 2^64`.
    #[inline]
    pub fn mul_add(&self, a: u64, b: u64, c: u64) -> u64 {
        self.reduce_u128(a as u128 * b as u128 + c as u128)
    }

    /// The Shoup companion `floor(w · 2^64 / q)` of a constant `w < q`.
    #[inline]
    pub fn shoup(&self, w: u64) -> u64 {
        debug_assert!(w < self.value);
        (((w as u128) << 64) / self.value as u128) as u64
    }

    /// Lazy Shoup product: `a · w mod q` in `[0, 2q)` for any `a < 2^64`, `w < q`,
    /// `w_shoup = shoup(w)`.
    #[inline]
    pub fn mul_shoup_lazy(&self, a: u64, w: u64, w_shoup: u64) -> u64 {
        let hi = ((a as u128 * w_shoup as u128) >> 64) as u64;
        a.wrapping_mul(w).wrapping_sub(hi.wrapping_mul(self.value))
    }

    /// Shoup product `a · w mod q` in `[0, q)` (see [`Modulus::mul_shoup_lazy`]).
    #[inline]
    pub fn mul_shoup(&self, a: u64, w: u64, w_shoup: u64) -> u64 {
        let r = self.mul_shoup_lazy(a, w, w_shoup);
        if r >= self.value {
            r - self.value
        } else {
            r
        }
    }

    /// `base^exp mod q`.
    pub fn pow(&self, base: u64, mut exp: u64) -> u64 {
        let mut result = self.reduce(1);
        let mut b = self.reduce(base);
        while exp > 0 {
            if exp & 1 == 1 {
                result = self.mul(result, b);
            }
            b = self.mul(b, b);
            exp >>= 1;
        }
        result
    }

    /// The inverse of `a` modulo `q` (extended Euclid; works for any modulus).
    pub fn inv(&self, a: u64) -> Result<u64> {
        let a = self.reduce(a);
        let (mut r0, mut r1) = (self.value as i128, a as i128);
        let (mut t0, mut t1) = (0i128, 1i128);
        while r1 != 0 {
            let quotient = r0 / r1;
            (r0, r1) = (r1, r0 - quotient * r1);
            (t0, t1) = (t1, t0 - quotient * t1);
        }
        if r0 != 1 {
            return Err(MathError::NotInvertible {
                value: a,
                modulus: self.value,
            });
        }
        Ok(self.reduce_i128(t0))
    }

    /// Montgomery arithmetic for this modulus (needs `q` odd).
    pub fn montgomery(&self) -> Result<Montgomery> {
        Montgomery::new(*self)
    }
}

/// Montgomery form with `R = 2^64` for an odd modulus: `a ↦ a·R mod q`.
///
/// ```
/// use rhea_math::Modulus;
/// let q = Modulus::new(1_152_921_504_606_584_833)?;
/// let m = q.montgomery()?;
/// let (a, b) = (m.to_montgomery(12345), m.to_montgomery(67890));
/// assert_eq!(m.from_montgomery(m.mul(a, b)), q.mul(12345, 67890));
/// # Ok::<(), rhea_math::MathError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Montgomery {
    modulus: Modulus,
    /// `-q^{-1} mod 2^64`.
    q_inv_neg: u64,
}

impl Montgomery {
    /// Precomputes `-q^{-1} mod 2^64`; `q` must be odd.
    pub fn new(modulus: Modulus) -> Result<Self> {
        let q = modulus.value();
        if q & 1 == 0 {
            return Err(MathError::InvalidModulus {
                value: q,
                reason: "Montgomery form needs an odd modulus",
            });
        }
        // Newton iteration: each step doubles the number of correct low bits (1 → 64).
        let mut inv: u64 = q;
        for _ in 0..6 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(q.wrapping_mul(inv)));
        }
        Ok(Self {
            modulus,
            q_inv_neg: inv.wrapping_neg(),
        })
    }

    /// The underlying modulus.
    pub fn modulus(&self) -> &Modulus {
        &self.modulus
    }

    /// `-q^{-1} mod 2^64` (for GPU kernels).
    pub fn q_inv_neg(&self) -> u64 {
        self.q_inv_neg
    }

    /// Montgomery reduction: `t · 2^-64 mod q` for `t < q · 2^64`.
    #[inline]
    pub fn reduce(&self, t: u128) -> u64 {
        let q = self.modulus.value();
        let m = (t as u64).wrapping_mul(self.q_inv_neg);
        let u = ((t + m as u128 * q as u128) >> 64) as u64;
        if u >= q {
            u - q
        } else {
            u
        }
    }

    /// `a · R mod q`.
    #[inline]
    pub fn to_montgomery(&self, a: u64) -> u64 {
        self.modulus.reduce_u128((a as u128) << 64)
    }

    /// `a · R^-1 mod q`.
    #[inline]
    pub fn from_montgomery(&self, a: u64) -> u64 {
        self.reduce(a as u128)
    }

    /// The Montgomery product `a · b · R^-1 mod q` for `a, b < q`.
    #[inline]
    pub fn mul(&self, a: u64, b: u64) -> u64 {
        self.reduce(a as u128 * b as u128)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const Q61: u64 = 0x1fff_ffff_ffe0_0001; // 2^61 - 2^21 + 1, prime
    const Q_SMALL: u64 = 65537;

    fn moduli() -> impl Strategy<Value = u64> {
        prop_oneof![
            Just(Q61),
            Just(Q_SMALL),
            Just(2u64),
            Just((1u64 << 61) - 1),
            Just(1u64 << 40),
            2u64..(1u64 << 61),
        ]
    }

    proptest! {
        #[test]
        fn reduce_u128_matches_u128(q in moduli(), z in any::<u128>()) {
            let m = Modulus::new(q).unwrap();
            prop_assert_eq!(m.reduce_u128(z) as u128, z % q as u128);
        }

        #[test]
        fn ring_operations_match_u128(q in moduli(), a in any::<u64>(), b in any::<u64>()) {
            let m = Modulus::new(q).unwrap();
            let (a, b) = (a % q, b % q);
            let qq = q as u128;
            prop_assert_eq!(m.add(a, b) as u128, (a as u128 + b as u128) % qq);
            prop_assert_eq!(m.sub(a, b) as u128, (a as u128 + qq - b as u128) % qq);
            prop_assert_eq!(m.neg(a) as u128, (qq - a as u128) % qq);
            prop_assert_eq!(m.mul(a, b) as u128, (a as u128 * b as u128) % qq);
            prop_assert_eq!(m.mul_add(a, b, a) as u128, (a as u128 * b as u128 + a as u128) % qq);
            let c = m.center(a);
            prop_assert_eq!(m.reduce_i64(c), a);
            prop_assert!(c.unsigned_abs() <= q / 2);
        }

        #[test]
        fn shoup_matches_u128(q in moduli(), a in any::<u64>(), w in any::<u64>()) {
            let m = Modulus::new(q).unwrap();
            let w = w % q;
            let ws = m.shoup(w);
            let lazy = m.mul_shoup_lazy(a, w, ws);
            prop_assert!(lazy < 2 * q);
            prop_assert_eq!(lazy as u128 % q as u128, (a as u128 * w as u128) % q as u128);
            prop_assert_eq!(m.mul_shoup(a, w, ws) as u128, (a as u128 * w as u128) % q as u128);
        }

        #[test]
        fn montgomery_matches_u128(q in moduli(), a in any::<u64>(), b in any::<u64>()) {
            let q = q | 1;
            let m = Modulus::new(q).unwrap();
            let mg = m.montgomery().unwrap();
            let (a, b) = (a % q, b % q);
            let (am, bm) = (mg.to_montgomery(a), mg.to_montgomery(b));
            prop_assert_eq!(mg.from_montgomery(am), a);
            prop_assert_eq!(mg.from_montgomery(mg.mul(am, bm)), m.mul(a, b));
        }

        #[test]
        fn inverse_and_pow(a in 1u64..Q61) {
            let m = Modulus::new(Q61).unwrap();
            let inv = m.inv(a).unwrap();
            prop_assert_eq!(m.mul(a, inv), 1);
            prop_assert_eq!(m.pow(a, Q61 - 2), inv);
        }
    }

    #[test]
    fn rejects_bad_moduli() {
        assert!(Modulus::new(0).is_err());
        assert!(Modulus::new(1).is_err());
        assert!(Modulus::new(1 << 61).is_err());
        assert!(Modulus::new(u64::MAX).is_err());
        assert!(Modulus::new(1 << 40).unwrap().montgomery().is_err());
    }

    #[test]
    fn non_invertible_is_an_error() {
        let m = Modulus::new(1 << 20).unwrap();
        assert_eq!(
            m.inv(6),
            Err(MathError::NotInvertible {
                value: 6,
                modulus: 1 << 20
            })
        );
        assert_eq!(m.inv(7).map(|i| m.mul(i, 7)), Ok(1));
    }
}
