//! The CKKS special FFT: the canonical embedding restricted to the `5^j` slot order.
//!
//! # Convention (SEAL / Lattigo / HEAAN "special FFT")
//!
//! With `n` slots (a power of two, `1 ≤ n ≤ 2^16`), the embedding ring has degree `2n`,
//! `M = 4n` and `ζ = exp(2πi / M)`. A real polynomial `m(X) = Σ_{k<2n} m_k X^k` encodes the slot
//! vector
//!
//! ```text
//! z_j = m(ζ^{5^j mod M}),   j = 0..n.
//! ```
//!
//! Because `ζ^{n·5^j} = i`, packing `c_k = m_k + i·m_{k+n}` (`k < n`) gives
//! `z_j = Σ_{k<n} c_k ξ_j^k` with `ξ_j = ζ^{5^j}`: this `n`-point transform is
//! [`SpecialFft::forward`] (coefficients → slots, the decode direction). Its matrix `V` satisfies
//! `V^H V = n·I`, so [`SpecialFft::inverse`] (the encode direction) is `c = V^H z / n`.
//!
//! For a ring of degree `N` with sparse slots `n < N/2`, the plaintext lives in the subring
//! `Z[X^{N/(2n)}]`: coefficient `k` of the degree-`2n` polynomial above sits at position
//! `k·N/(2n)`, and the embedding is unchanged (`ζ_{2N}^{(N/2n)·5^j} = ζ_{4n}^{5^j}`).
//! [`naive_embedding`] evaluates any length-`D` coefficient vector at `ζ_{2D}^{5^j}` directly.
//!
//! Both transforms run in natural order on both sides (the bit-reversal is internal). Twiddle
//! factors are computed in double-double and rounded once, so the `f64` path is accurate to a
//! few ulps times `log2 n`; [`SpecialFft::encode_scaled_i128`] runs the whole inverse transform in
//! double-double ([`DoubleDouble`]) for scales beyond `f64`'s 53 bits.

mod dd;

pub use dd::DoubleDouble;

use num_complex::Complex64;

use crate::{MathError, Result};

/// The largest supported slot count.
pub const MAX_SLOTS: usize = 1 << 16;

/// A complex number in double-double precision (internal to the high-precision encoder).
#[derive(Clone, Copy, Debug, Default)]
struct ComplexDd {
    re: DoubleDouble,
    im: DoubleDouble,
}

/// The arithmetic the FFT butterflies need, shared by the `f64` and double-double paths.
trait FftScalar: Copy {
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn conj(self) -> Self;
}

impl FftScalar for Complex64 {
    #[inline]
    fn add(self, o: Self) -> Self {
        self + o
    }
    #[inline]
    fn sub(self, o: Self) -> Self {
        self - o
    }
    #[inline]
    fn mul(self, o: Self) -> Self {
        self * o
    }
    #[inline]
    fn conj(self) -> Self {
        Complex64::conj(&self)
    }
}

impl FftScalar for ComplexDd {
    #[inline]
    fn add(self, o: Self) -> Self {
        Self {
            re: self.re + o.re,
            im: self.im + o.im,
        }
    }
    #[inline]
    fn sub(self, o: Self) -> Self {
        Self {
            re: self.re - o.re,
            im: self.im - o.im,
        }
    }
    #[inline]
    fn mul(self, o: Self) -> Self {
        Self {
            re: self.re * o.re - self.im * o.im,
            im: self.re * o.im + self.im * o.re,
        }
    }
    #[inline]
    fn conj(self) -> Self {
        Self {
            re: self.re,
            im: -self.im,
        }
    }
}

/// Double-double powers of `ζ_m` (`m` a power of two) as products of two small tables, each
/// entry computed directly by [`DoubleDouble::cos_sin_turns`]: `ζ^e = ζ^{(e / s)·s} · ζ^{e mod s}`
/// with `s ≈ √m` (error about `2^-102`, far cheaper than one series per root).
struct RootTable {
    shift: u32,
    coarse: Vec<ComplexDd>,
    fine: Vec<ComplexDd>,
}

impl RootTable {
    fn new(m: usize) -> Result<Self> {
        let shift = m.trailing_zeros().div_ceil(2);
        let s = 1usize << shift;
        let entry = |e: usize| -> Result<ComplexDd> {
            let (c, s) = DoubleDouble::cos_sin_turns(e as u64, m as u64)?;
            Ok(ComplexDd { re: c, im: s })
        };
        let coarse = (0..m.div_ceil(s))
            .map(|i| entry(i * s))
            .collect::<Result<_>>()?;
        let fine = (0..s.min(m)).map(entry).collect::<Result<_>>()?;
        Ok(Self {
            shift,
            coarse,
            fine,
        })
    }

    /// `ζ^e` for `e < m`.
    fn root(&self, e: usize) -> ComplexDd {
        let lo = e & ((1 << self.shift) - 1);
        let hi = e >> self.shift;
        if lo == 0 {
            self.coarse[hi]
        } else if hi == 0 {
            self.fine[lo]
        } else {
            self.coarse[hi].mul(self.fine[lo])
        }
    }
}

/// The special FFT for a fixed slot count, with precomputed rotation group and twiddles.
#[derive(Clone, Debug)]
pub struct SpecialFft {
    slots: usize,
    log_slots: u32,
    /// `5^j mod 4n` for `j < n`.
    rot_group: Vec<usize>,
    /// Twiddles for the stage of half-length `h` at `[h, 2h)`: `ζ^{(5^j mod 4·2h)·n/(2h)}`.
    twiddles: Vec<Complex64>,
    /// The same twiddles in double-double.
    twiddles_dd: Vec<ComplexDd>,
}

impl SpecialFft {
    /// Precomputes the transform for `slots` slots (a power of two in `1..=2^16`).
    pub fn new(slots: usize) -> Result<Self> {
        if slots == 0 || !slots.is_power_of_two() || slots > MAX_SLOTS {
            return Err(MathError::InvalidArgument(format!(
                "slot count {slots} must be a power of two in 1..={MAX_SLOTS}"
            )));
        }
        let m = 4 * slots;
        let mut rot_group = Vec::with_capacity(slots);
        let mut g = 1usize;
        for _ in 0..slots {
            rot_group.push(g);
            g = (g * 5) % m;
        }
        let mut twiddles = vec![Complex64::new(1.0, 0.0); slots];
        let mut twiddles_dd = vec![
            ComplexDd {
                re: DoubleDouble::ONE,
                im: DoubleDouble::ZERO,
            };
            slots
        ];
        let roots = RootTable::new(m)?;
        let mut half = 1;
        while half < slots {
            let len = 2 * half;
            let lenq = 4 * len;
            for (j, &r) in rot_group.iter().take(half).enumerate() {
                let w = roots.root((r % lenq) * (m / lenq));
                twiddles_dd[half + j] = w;
                twiddles[half + j] = Complex64::new(w.re.to_f64(), w.im.to_f64());
            }
            half = len;
        }
        Ok(Self {
            slots,
            log_slots: slots.trailing_zeros(),
            rot_group,
            twiddles,
            twiddles_dd,
        })
    }

    /// The number of slots `n`.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The rotation group `5^j mod 4n`, `j = 0..n` (slot `j` is the evaluation at `ζ^{5^j}`).
    pub fn rotation_group(&self) -> &[usize] {
        &self.rot_group
    }

    fn check_len(&self, len: usize, what: &str) -> Result<()> {
        if len != self.slots {
            return Err(MathError::ShapeMismatch(format!(
                "{what}: expected {} values, got {len}",
                self.slots
            )));
        }
        Ok(())
    }

    /// Coefficients → slots (decode direction): `values[j] ← Σ_k values[k] · ζ^{5^j·k}`.
    ///
    /// The input is the packed vector `c_k = m_k + i·m_{k+n}`; both sides are in natural order.
    pub fn forward(&self, values: &mut [Complex64]) -> Result<()> {
        self.check_len(values.len(), "SpecialFft::forward")?;
        forward_core(values, &self.twiddles, self.log_slots);
        Ok(())
    }

    /// Slots → coefficients (encode direction), the exact inverse of [`forward`](Self::forward):
    /// `values[k] ← (1/n) Σ_j values[j] · ζ^{-5^j·k}` (includes the `1/n`).
    pub fn inverse(&self, values: &mut [Complex64]) -> Result<()> {
        self.check_len(values.len(), "SpecialFft::inverse")?;
        inverse_core(values, &self.twiddles, self.log_slots);
        let inv_n = 1.0 / self.slots as f64;
        for v in values.iter_mut() {
            *v *= inv_n;
        }
        Ok(())
    }

    /// Encodes `n` slot values into the `2n` real coefficients `m_0..m_{2n}` of the polynomial
    /// whose embedding is `z` (before scaling and rounding): `m_k = Re c_k`, `m_{k+n} = Im c_k`.
    /// Errors on a wrong length or a non-finite value.
    pub fn encode_to_real(&self, z: &[Complex64]) -> Result<Vec<f64>> {
        self.check_len(z.len(), "SpecialFft::encode_to_real")?;
        check_finite(z)?;
        let mut c = z.to_vec();
        self.inverse(&mut c)?;
        let mut out = vec![0.0; 2 * self.slots];
        let (re, im) = out.split_at_mut(self.slots);
        for ((r, i), v) in re.iter_mut().zip(im.iter_mut()).zip(&c) {
            *r = v.re;
            *i = v.im;
        }
        Ok(out)
    }

    /// Decodes `2n` real coefficients (the layout of [`encode_to_real`](Self::encode_to_real);
    /// for sparse slots in a larger ring, gather the coefficients at stride `N/(2n)` first) into
    /// the `n` slot values. Errors on a wrong length or a non-finite value.
    pub fn decode_from_real(&self, coeffs: &[f64]) -> Result<Vec<Complex64>> {
        if coeffs.len() != 2 * self.slots {
            return Err(MathError::ShapeMismatch(format!(
                "SpecialFft::decode_from_real: expected {} coefficients, got {}",
                2 * self.slots,
                coeffs.len()
            )));
        }
        if let Some(x) = coeffs.iter().find(|x| !x.is_finite()) {
            return Err(MathError::InvalidArgument(format!(
                "non-finite coefficient {x}"
            )));
        }
        let (re, im) = coeffs.split_at(self.slots);
        let mut z: Vec<Complex64> = re
            .iter()
            .zip(im)
            .map(|(&r, &i)| Complex64::new(r, i))
            .collect();
        self.forward(&mut z)?;
        Ok(z)
    }

    /// High-precision encoding: the `2n` integers `round(Δ · m_k)` for the coefficients `m_k` of
    /// [`encode_to_real`](Self::encode_to_real), with `Δ = scale`.
    ///
    /// The inverse transform and the scaling run in double-double arithmetic (≈ 106-bit
    /// significand, twiddles accurate to `2^-104`), so the result is the correctly rounded
    /// integer whenever the exact `Δ·m_k` is farther than about
    /// `(log2 n + 3) · 2^-103 · Δ · max|z|` from a half-integer — at `Δ = 2^80`, `|z| ≤ 1`,
    /// `n = 2^15`, that window is below `2^-18`; the tests measure at most one unit of error
    /// against an `O(n²)` double-double evaluation, where the `f64` path is off by `~2^17` at
    /// `Δ = 2^70`. Errors on a wrong length, non-finite inputs, a non-positive or non-finite
    /// scale, and results outside `i128`.
    pub fn encode_scaled_i128(&self, z: &[Complex64], scale: f64) -> Result<Vec<i128>> {
        self.check_len(z.len(), "SpecialFft::encode_scaled_i128")?;
        check_finite(z)?;
        if !(scale.is_finite() && scale > 0.0) {
            return Err(MathError::InvalidArgument(format!(
                "scale {scale} must be finite and positive"
            )));
        }
        let mut c: Vec<ComplexDd> = z
            .iter()
            .map(|v| ComplexDd {
                re: DoubleDouble::from_f64(v.re),
                im: DoubleDouble::from_f64(v.im),
            })
            .collect();
        inverse_core(&mut c, &self.twiddles_dd, self.log_slots);
        // 1/n is a power of two: the scaling by Δ/n is one accurate double-double product
        // after an exact one.
        let inv_n = 1.0 / self.slots as f64;
        let mut out = vec![0i128; 2 * self.slots];
        let (re, im) = out.split_at_mut(self.slots);
        for ((r, i), v) in re.iter_mut().zip(im.iter_mut()).zip(&c) {
            *r = round_scaled(v.re, inv_n, scale)?;
            *i = round_scaled(v.im, inv_n, scale)?;
        }
        Ok(out)
    }
}

fn round_scaled(x: DoubleDouble, inv_n: f64, scale: f64) -> Result<i128> {
    x.mul_f64(inv_n)
        .mul_f64(scale)
        .round_to_i128()
        .ok_or_else(|| {
            MathError::InvalidArgument(format!(
                "encoded coefficient {:e} does not fit in an i128: lower the scale",
                x.to_f64() * inv_n * scale
            ))
        })
}

fn check_finite(z: &[Complex64]) -> Result<()> {
    if let Some(v) = z.iter().find(|v| !(v.re.is_finite() && v.im.is_finite())) {
        return Err(MathError::InvalidArgument(format!(
            "non-finite slot value {v}"
        )));
    }
    Ok(())
}

/// In-place bit-reversal permutation of a power-of-two-length slice.
fn bit_reverse<T>(values: &mut [T], log_n: u32) {
    if log_n == 0 {
        return;
    }
    let shift = usize::BITS - log_n;
    for i in 0..values.len() {
        let j = i.reverse_bits() >> shift;
        if i < j {
            values.swap(i, j);
        }
    }
}

/// Decode direction (HEAAN's `fftSpecial`): bit-reverse, then radix-2 DIT butterflies.
fn forward_core<T: FftScalar>(values: &mut [T], twiddles: &[T], log_n: u32) {
    let n = values.len();
    bit_reverse(values, log_n);
    let mut half = 1;
    while half < n {
        let len = 2 * half;
        let tw = &twiddles[half..len];
        for block in values.chunks_exact_mut(len) {
            let (lo, hi) = block.split_at_mut(half);
            for ((u, v), &w) in lo.iter_mut().zip(hi.iter_mut()).zip(tw) {
                let a = *u;
                let b = v.mul(w);
                *u = a.add(b);
                *v = a.sub(b);
            }
        }
        half = len;
    }
}

/// Encode direction without the `1/n` (HEAAN's `fftSpecialInvLazy`): DIF butterflies with
/// conjugated twiddles, then bit-reverse.
fn inverse_core<T: FftScalar>(values: &mut [T], twiddles: &[T], log_n: u32) {
    let n = values.len();
    let mut half = n / 2;
    while half >= 1 {
        let len = 2 * half;
        let tw = &twiddles[half..len];
        for block in values.chunks_exact_mut(len) {
            let (lo, hi) = block.split_at_mut(half);
            for ((u, v), &w) in lo.iter_mut().zip(hi.iter_mut()).zip(tw) {
                let a = *u;
                let b = *v;
                *u = a.add(b);
                *v = a.sub(b).mul(w.conj());
            }
        }
        half /= 2;
    }
    bit_reverse(values, log_n);
}

/// The `O(slots · D)` reference embedding: for a real coefficient vector of length `D` (the
/// ring degree), returns `z_j = Σ_k coeffs[k] · ζ_{2D}^{(5^j mod 2D)·k}` for `j < slots`.
///
/// With `D = 2·slots` this is the inverse of [`SpecialFft::encode_to_real`]; with a larger `D`
/// it evaluates a sparse-packed plaintext of the full ring directly. Roots come from `f64`
/// `sin_cos` on exactly reduced angles (independent of the FFT's twiddle code); the sums are
/// plain `f64`. An empty `coeffs` gives zeros.
pub fn naive_embedding(coeffs: &[f64], slots: usize) -> Vec<Complex64> {
    let d = coeffs.len();
    if d == 0 {
        return vec![Complex64::new(0.0, 0.0); slots];
    }
    let m = 2 * d;
    let roots: Vec<Complex64> = (0..m)
        .map(|e| {
            let (s, c) = (std::f64::consts::TAU * e as f64 / m as f64).sin_cos();
            Complex64::new(c, s)
        })
        .collect();
    let mut out = Vec::with_capacity(slots);
    let mut g = 1 % m;
    for _ in 0..slots {
        let mut acc = Complex64::new(0.0, 0.0);
        let mut e = 0usize;
        for &c in coeffs {
            acc += roots[e] * c;
            e = (e + g) % m;
        }
        out.push(acc);
        g = (g * 5) % m;
    }
    out
}
