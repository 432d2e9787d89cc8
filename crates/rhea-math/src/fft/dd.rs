//! Double-double arithmetic: an unevaluated sum `hi + lo` of two `f64`s with `|lo| ≤ ulp(hi)/2`,
//! about 106 bits of significand.
//!
//! Used by the high-precision CKKS encoder ([`super::SpecialFft::encode_scaled_i128`]) and by the
//! discrete-Gaussian table of the sampler. The error-free transformations are the classical ones
//! (Knuth's two-sum, Dekker's / FMA two-product; see Hida, Li and Bailey, "Library for
//! double-double and quad-double arithmetic", 2007). Every operation below is accurate to a few
//! units of `2^-104` relative, provided no intermediate overflows (magnitudes stay below `2^995`,
//! the limit of Dekker's splitting) or underflows into subnormals.

use std::ops::{Add, Div, Mul, Neg, Sub};

use crate::{MathError, Result};

/// A double-double number `hi + lo` (about 106 significant bits).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DoubleDouble {
    hi: f64,
    lo: f64,
}

/// `s + e = a + b` exactly, with `s = fl(a + b)`.
#[inline]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// `s + e = a + b` exactly, assuming `|a| ≥ |b|` (or `a = 0`).
#[inline]
fn quick_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let e = b - (s - a);
    (s, e)
}

/// Dekker's splitting of `a` into two 26-bit halves (valid for `|a| < 2^996`).
#[inline]
fn split(a: f64) -> (f64, f64) {
    const SPLITTER: f64 = 134_217_729.0; // 2^27 + 1
    let t = SPLITTER * a;
    let hi = t - (t - a);
    (hi, a - hi)
}

/// `p + e = a · b` exactly, with `p = fl(a · b)`.
#[inline]
fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    if cfg!(target_feature = "fma") {
        (p, a.mul_add(b, -p))
    } else {
        let (ah, al) = split(a);
        let (bh, bl) = split(b);
        let e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
        (p, e)
    }
}

const LN2: DoubleDouble = DoubleDouble {
    hi: std::f64::consts::LN_2,
    lo: 2.319_046_813_846_299_6e-17,
};

const FRAC_PI_4: DoubleDouble = DoubleDouble {
    hi: std::f64::consts::FRAC_PI_4,
    lo: 3.061_616_997_868_383e-17,
};

impl DoubleDouble {
    /// Zero.
    pub const ZERO: Self = Self { hi: 0.0, lo: 0.0 };
    /// One.
    pub const ONE: Self = Self { hi: 1.0, lo: 0.0 };

    /// The exact value of an `f64`.
    #[inline]
    pub const fn from_f64(x: f64) -> Self {
        Self { hi: x, lo: 0.0 }
    }

    /// The exact sum `hi + lo` of two `f64`s (renormalised).
    #[inline]
    pub fn from_parts(hi: f64, lo: f64) -> Self {
        let (s, e) = two_sum(hi, lo);
        Self { hi: s, lo: e }
    }

    /// The exact value of an `i128` when it fits in 106 bits, otherwise the nearest
    /// double-double (the remainder below the low word's precision is rounded).
    pub fn from_i128(x: i128) -> Self {
        let hi = x as f64; // nearest f64
        let rest = x - hi as i128; // exact: |rest| ≤ ulp(hi)/2 < 2^74
        Self::from_parts(hi, rest as f64)
    }

    /// The high word (the value rounded to the nearest `f64`).
    #[inline]
    pub const fn hi(self) -> f64 {
        self.hi
    }

    /// The low word (`self - hi`, rounded).
    #[inline]
    pub const fn lo(self) -> f64 {
        self.lo
    }

    /// The value rounded to an `f64`.
    #[inline]
    pub fn to_f64(self) -> f64 {
        self.hi + self.lo
    }

    /// `true` when both words are finite.
    #[inline]
    pub fn is_finite(self) -> bool {
        self.hi.is_finite() && self.lo.is_finite()
    }

    /// The absolute value.
    #[inline]
    pub fn abs(self) -> Self {
        if self.hi < 0.0 {
            -self
        } else {
            self
        }
    }

    /// `self · b` for an `f64` `b` (exact when `b` is a power of two).
    #[inline]
    pub fn mul_f64(self, b: f64) -> Self {
        let (p, e) = two_prod(self.hi, b);
        let e = e + self.lo * b;
        let (hi, lo) = quick_two_sum(p, e);
        Self { hi, lo }
    }

    /// `self / b` for an `f64` `b ≠ 0`.
    #[inline]
    pub fn div_f64(self, b: f64) -> Self {
        let q1 = self.hi / b;
        let (p, pe) = two_prod(q1, b);
        let (s, e) = two_sum(self.hi, -p);
        let e = e - pe + self.lo;
        let q2 = (s + e) / b;
        let (hi, lo) = quick_two_sum(q1, q2);
        Self { hi, lo }
    }

    /// `self²`.
    #[inline]
    pub fn square(self) -> Self {
        self * self
    }

    /// `e^self`, to about `2^-100` relative (0 below `-745`; an error above `709`).
    ///
    /// Argument reduction `x = k·ln 2 + 4r` with `|r| ≤ 0.087`, a Taylor series for `e^r`
    /// (about 19 terms), two squarings, then an exact scaling by `2^k`.
    pub fn exp(self) -> Result<Self> {
        if !self.is_finite() || self.hi > 709.0 {
            return Err(MathError::InvalidArgument(format!(
                "exp argument {} out of range",
                self.hi
            )));
        }
        if self.hi < -745.0 {
            return Ok(Self::ZERO);
        }
        let k = (self.hi / LN2.hi).round();
        let r = (self - LN2.mul_f64(k)).mul_f64(0.25);
        // Taylor series: |r| ≤ 0.087, so 19 terms reach below 2^-110. Few squarings keep the
        // error amplification (2^squarings) small.
        let mut term = Self::ONE;
        let mut sum = Self::ONE;
        for i in 1..=30 {
            term = (term * r).div_f64(i as f64);
            sum = sum + term;
            if term.hi.abs() < 1e-36 {
                break;
            }
        }
        for _ in 0..2 {
            sum = sum.square();
        }
        // 2^k in two steps so that neither factor underflows before the product does.
        let k = k as i32;
        let (k1, k2) = (k / 2, k - k / 2);
        Ok(sum.mul_f64(2f64.powi(k1)).mul_f64(2f64.powi(k2)))
    }

    /// `(cos θ, sin θ)` for `θ = 2π · num / den` (any `den ≥ 1`), to about `2^-104` absolute.
    ///
    /// The angle is reduced exactly with integer arithmetic to an octant, so the result does not
    /// lose accuracy for large `num`. Errors when `den = 0`.
    pub fn cos_sin_turns(num: u64, den: u64) -> Result<(Self, Self)> {
        if den == 0 {
            return Err(MathError::InvalidArgument(
                "cos_sin_turns: denominator must be non-zero".into(),
            ));
        }
        let e = (num % den) as u128;
        let den128 = den as u128;
        let scaled = 8 * e; // angle in units of π/4 is scaled / den
        let octant = (scaled / den128) as u32; // 0..8
        let rem = (scaled % den128) as u64; // local angle = (π/4) · rem / den
        let frac_of = |r: u64| -> Self {
            // r / den in double-double, then · π/4.
            let ratio = if den.is_power_of_two() {
                Self::from_f64(r as f64 / den as f64)
            } else {
                Self::from_i128(r as i128) / Self::from_i128(den as i128)
            };
            ratio * FRAC_PI_4
        };
        let (c, s) = if octant % 2 == 0 {
            sin_cos_taylor_swap(frac_of(rem))
        } else {
            sin_cos_taylor_swap(frac_of(den - rem))
        };
        // c = cos(local), s = sin(local); the local angle is θ - octant·π/4 for even octants and
        // (octant+1)·π/4 - θ for odd ones.
        Ok(match octant {
            0 => (c, s),
            1 => (s, c),
            2 => (-s, c),
            3 => (-c, s),
            4 => (-c, -s),
            5 => (-s, -c),
            6 => (s, -c),
            _ => (c, -s),
        })
    }

    /// The nearest integer to the exact value `hi + lo` (ties away from zero), or `None` when it
    /// does not fit in an `i128` or the value is not finite.
    pub fn round_to_i128(self) -> Option<i128> {
        if !self.is_finite() {
            return None;
        }
        // |hi| < 2^127 is required for `hi as i128` to be exact; the final adds are checked.
        if self.hi.abs() >= 1.701_411_834_604_692_3e38 {
            return None;
        }
        // floor(hi + lo) and the exact fractional part `s + e` in [0, 1].
        let (floor, s, e) = if self.hi == self.hi.floor() {
            // hi is an integer: floor = hi + floor(lo); lo - floor(lo) is exact.
            let fl = self.lo.floor();
            (
                (self.hi as i128).checked_add(fl as i128)?,
                self.lo - fl,
                0.0,
            )
        } else {
            // hi is not an integer, so |lo| ≤ ulp(hi)/2 cannot cross an integer: the floor is
            // floor(hi), and hi - floor(hi) is exact.
            let f = self.hi.floor();
            let (s, e) = two_sum(self.hi - f, self.lo);
            (f as i128, s, e)
        };
        let up = s > 0.5 || (s == 0.5 && (e > 0.0 || (e == 0.0 && self.hi > 0.0)));
        floor.checked_add(up as i128)
    }
}

/// `(cos x, sin x)` for `0 ≤ x ≤ π/4` by Taylor series (about 15 terms each).
fn sin_cos_taylor_swap(x: DoubleDouble) -> (DoubleDouble, DoubleDouble) {
    let x2 = x.square();
    let mut sin = x;
    let mut term = x;
    for i in 1..=20u32 {
        let d = (2 * i) as f64 * (2 * i + 1) as f64;
        term = -(term * x2).div_f64(d);
        sin = sin + term;
        if term.hi.abs() < 1e-36 {
            break;
        }
    }
    let mut cos = DoubleDouble::ONE;
    let mut term = DoubleDouble::ONE;
    for i in 1..=20u32 {
        let d = (2 * i - 1) as f64 * (2 * i) as f64;
        term = -(term * x2).div_f64(d);
        cos = cos + term;
        if term.hi.abs() < 1e-36 {
            break;
        }
    }
    (cos, sin)
}

impl Add for DoubleDouble {
    type Output = Self;
    #[inline]
    fn add(self, b: Self) -> Self {
        let (s1, s2) = two_sum(self.hi, b.hi);
        let (t1, t2) = two_sum(self.lo, b.lo);
        let s2 = s2 + t1;
        let (s1, s2) = quick_two_sum(s1, s2);
        let s2 = s2 + t2;
        let (hi, lo) = quick_two_sum(s1, s2);
        Self { hi, lo }
    }
}

impl Sub for DoubleDouble {
    type Output = Self;
    #[inline]
    fn sub(self, b: Self) -> Self {
        self + (-b)
    }
}

impl Neg for DoubleDouble {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        Self {
            hi: -self.hi,
            lo: -self.lo,
        }
    }
}

impl Mul for DoubleDouble {
    type Output = Self;
    #[inline]
    fn mul(self, b: Self) -> Self {
        let (p, e) = two_prod(self.hi, b.hi);
        let e = e + (self.hi * b.lo + self.lo * b.hi);
        let (hi, lo) = quick_two_sum(p, e);
        Self { hi, lo }
    }
}

impl Div for DoubleDouble {
    type Output = Self;
    /// `self / b` for a double-double `b ≠ 0` (three-step long division).
    fn div(self, b: Self) -> Self {
        let q1 = self.hi / b.hi;
        let r = self - b.mul_f64(q1);
        let q2 = r.hi / b.hi;
        let r = r - b.mul_f64(q2);
        let q3 = r.hi / b.hi;
        let (hi, lo) = quick_two_sum(q1, q2);
        Self { hi, lo } + Self::from_f64(q3)
    }
}

impl From<f64> for DoubleDouble {
    fn from(x: f64) -> Self {
        Self::from_f64(x)
    }
}
