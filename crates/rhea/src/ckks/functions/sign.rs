//! The sign function by composite polynomials (Cheon, Kim, Kim, Lee, "Efficient homomorphic
//! comparison methods with optimal complexity", Asiacrypt 2020), and ReLU and max built on it.

use super::{check_levels, settle_scale};
use crate::ckks::{Ciphertext, Evaluator, Polynomial};
use crate::error::{Error, Result};

/// The numerators of the published `g_n` (odd, `g_n(x) = Σ_k g[k]·x^{2k+1} / 2^10`), `n = 1..=4`
/// (Cheon et al. 2020, section 3.4).
const G_TABLE: [&[f64]; 4] = [
    &[2126.0, -1359.0],
    &[3334.0, -6108.0, 3796.0],
    &[4589.0, -16577.0, 25614.0, -12860.0],
    &[5850.0, -34974.0, 97015.0, -113492.0, 46623.0],
];

/// The most compositions of one kind the search considers.
const MAX_STAGES: usize = 40;

/// How a [`Sign`] composite is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignConstruction {
    /// Cheon, Kim, Kim, Lee (Asiacrypt 2020): `g_count` times `g_n`, then `f_count` times
    /// `f_n` (both of degree `2n + 1`).
    CheonKimKimLee {
        /// The family `n` (1..=4).
        n: usize,
        /// Compositions of `g_n` (applied first).
        g_count: usize,
        /// Compositions of `f_n`.
        f_count: usize,
    },
    /// Lee, Lee, Kim, No (IEEE TDSC 2021): `stages` odd minimax polynomials of degree `degree`,
    /// each the minimax approximation of `sign` on the image of the previous one.
    Minimax {
        /// The degree of every stage (odd).
        degree: usize,
        /// The number of stages.
        stages: usize,
    },
}

/// `sign(x)` for `ε ≤ |x| ≤ 1` within `2^−α`, as a composite polynomial `p_k ∘ … ∘ p_1`.
///
/// Two constructions ([`SignConstruction`]):
///
/// - [`Sign::cheon_kim_kim_lee`] (Asiacrypt 2020): `f_n ∘ … ∘ f_n ∘ g_n ∘ … ∘ g_n` with
///   `f_n(x) = Σ_{i=0}^{n} 4^{−i}·C(2i, i)·x·(1 − x²)^i` (degree `2n + 1`; `f_n(±1) = ±1` with
///   `1 − f_n(1 − δ) = O(δ^{n+1})`: it sharpens values already near `±1`) and the published
///   odd `g_n` of degree `2n + 1` (coefficients `k/2^10`), which push small values away from 0
///   much faster than `f_n` but do not converge to `±1` by themselves. The counts `d_g`, `d_f`
///   are the least-depth pair (then the fewest stages): the image of `[ε, 1]` is tracked
///   exactly in `f64` through each stage (end points and critical points), and `d_f` is the
///   least count bringing it within `2^−α` of 1.
/// - [`Sign::minimax`] (Lee, Lee, Kim, No, "Minimax approximation of sign function by
///   composite polynomial", IEEE TDSC 2021): each stage is the odd minimax polynomial of the
///   chosen degree for `sign` on the image `[1 − τ, 1 + τ]` of the previous stage (Remez
///   exchange), normalised by `1/(1 + τ)` except the last; stages are added until `τ ≤ 2^−α`.
///   (Lee et al. also optimise the degree of each stage; here all stages share one degree.)
///
/// [`Sign::new`] takes the least depth over both (families `n = 1..=4`, minimax degrees 3, 7,
/// 15, 31, 63), then the fewest stages. Each stage is evaluated by the polynomial evaluator at
/// depth `⌈log2(d + 1)⌉` (degree 3: 2, 5 and 7: 3, 9 to 15: 4, 31: 5, 63: 6), in the Chebyshev
/// basis of `[−1, 1]` (no interval map).
///
/// Composites (depth, then [`Sign::max_error`]) by [`Sign::cheon_kim_kim_lee`] with `n = 3`
/// (`d_g`, `d_f`) and by [`Sign::minimax`] at its best degree (degree × stages); [`Sign::new`]
/// picks the minimax one in every row:
///
/// | `ε` | `α` | CKKL `n = 3` | depth | error | minimax | depth | error |
/// |---|---|---|---|---|---|---|---|
/// | 2^−1 | 8 | 0, 2 | 6 | 2^−9.4 | 15 × 1 | 4 | 2^−14.0 |
/// | 2^−2 | 6 | 1, 1 | 6 | 2^−6.3 | 15 × 1 | 4 | 2^−7.0 |
/// | 2^−2 | 20 | 1, 2 | 9 | 2^−23.0 | 63 × 1 | 6 | 2^−25.6 |
/// | 2^−3 | 8 | 1, 2 | 9 | 2^−10.5 | 63 × 1 | 6 | 2^−13.3 |
/// | 2^−4 | 20 | 2, 2 | 12 | 2^−23.2 | 31 × 2 | 10 | 2^−51.0 |
/// | 2^−6 | 20 | 3, 2 | 15 | 2^−23.2 | 63 × 2 | 12 | 2^−50.4 |
/// | 2^−8 | 20 | 4, 2 | 18 | 2^−23.2 | 63 × 2 | 12 | 2^−20.2 |
/// | 2^−10 | 20 | 4, 3 | 21 | 2^−21.2 | 31 × 3 | 15 | 2^−29.0 |
///
/// Homomorphic evaluation against [`Sign::evaluate_plain`] (N = 2^13, Δ = 2^40, inputs uniform
/// on `[−1, −ε] ∪ [ε, 1]`, measured in `tests/ckks_functions.rs`):
///
/// | composite | function | depth | HE vs `f64` |
/// |---|---|---|---|
/// | CKKL `n = 3`, `ε = 2^−3`, `α = 8` (`d_g = 1`, `d_f = 2`) | sign | 9 | 26.2 bits |
/// | same | ReLU | 10 | 25.7 bits |
/// | same | max (`a − b` gapped, `|a|, |b| ≤ 1`) | 10 | 26.0 bits |
/// | minimax, `ε = 2^−2`, `α = 20` (degree 63 × 1) | sign | 6 | 22.5 bits |
/// | minimax, `ε = 2^−4`, `α = 8` (degree 15 × 2) | sign | 8 | 26.1 bits |
/// | same | ReLU | 9 | 24.8 bits |
///
/// ```
/// use rhea::ckks::functions::{Sign, SignConstruction};
///
/// let sign = Sign::new(20, 1.0 / 256.0)?;
/// assert_eq!(sign.construction(), SignConstruction::Minimax { degree: 63, stages: 2 });
/// assert_eq!(sign.depth(), 12);
/// assert!((sign.evaluate_plain(-0.01) + 1.0).abs() < 1e-6);
/// # Ok::<(), rhea::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Sign {
    precision_bits: u32,
    gap: f64,
    construction: SignConstruction,
    stages: Vec<Polynomial>,
    max_error: f64,
}

/// The minimax degrees [`Sign::new`] considers.
const MINIMAX_DEGREES: [usize; 5] = [3, 7, 15, 31, 63];

fn check_sign_parameters(precision_bits: u32, gap: f64) -> Result<()> {
    if !(1..=40).contains(&precision_bits) {
        return Err(Error::InvalidInput(format!(
            "Sign: precision {precision_bits} bits is outside 1..=40"
        )));
    }
    if !(gap.is_finite() && gap >= 2f64.powi(-30) && gap < 1.0) {
        return Err(Error::InvalidInput(format!(
            "Sign: the gap ε = {gap} must be in [2^-30, 1)"
        )));
    }
    Ok(())
}

impl Sign {
    /// The composite of least depth (then fewest stages) over both constructions with
    /// `|p(x) − sign(x)| ≤ 2^−precision_bits` for `gap ≤ |x| ≤ 1`.
    ///
    /// Errors: [`Error::InvalidInput`] for `precision_bits` outside `1..=40` or `gap` outside
    /// `[2^−30, 1)`.
    pub fn new(precision_bits: u32, gap: f64) -> Result<Self> {
        check_sign_parameters(precision_bits, gap)?;
        let candidates = (1..=4)
            .map(|n| Self::cheon_kim_kim_lee(n, precision_bits, gap))
            .chain(
                MINIMAX_DEGREES
                    .iter()
                    .map(|&d| Self::minimax(d, precision_bits, gap)),
            );
        let mut best: Option<Self> = None;
        for s in candidates.flatten() {
            let better = match &best {
                None => true,
                Some(b) => (s.depth(), s.stages.len()) < (b.depth(), b.stages.len()),
            };
            if better {
                best = Some(s);
            }
        }
        best.ok_or_else(|| {
            Error::InvalidInput(format!(
                "Sign: no composite reaches 2^-{precision_bits} at gap {gap}"
            ))
        })
    }

    /// The Cheon–Kim–Kim–Lee composite of least depth in the family `n` (`f_n`, `g_n` of
    /// degree `2n + 1`).
    ///
    /// Errors: as [`Sign::new`], and [`Error::InvalidInput`] for `n` outside `1..=4` or when
    /// 40 + 40 stages do not suffice.
    pub fn cheon_kim_kim_lee(n: usize, precision_bits: u32, gap: f64) -> Result<Self> {
        if !(1..=4).contains(&n) {
            return Err(Error::InvalidInput(format!(
                "Sign: family n = {n} is not one of 1..=4 (the published g_n)"
            )));
        }
        check_sign_parameters(precision_bits, gap)?;
        let (g_mono, f_mono) = (g_monomial(n), f_monomial(n));
        let g = to_chebyshev(&g_mono)?;
        let f = to_chebyshev(&f_mono)?;
        let (dg_depth, df_depth) = (g.depth(), f.depth());
        let target = 2f64.powi(-(precision_bits as i32));
        let mut best: Option<(usize, usize, usize, f64)> = None;
        let mut interval = (gap, 1.0);
        for g_count in 0..=MAX_STAGES {
            if g_count > 0 {
                interval = image(&g_mono, interval);
            }
            if interval.0.is_nan() || interval.0 <= 0.0 {
                break;
            }
            let mut iv = interval;
            for f_count in 0..=MAX_STAGES {
                if f_count > 0 {
                    iv = image(&f_mono, iv);
                }
                let err = (1.0 - iv.0).max(iv.1 - 1.0);
                // At least one stage (the identity is no sign approximation worth a circuit).
                if err <= target && g_count + f_count > 0 {
                    let depth = g_count * dg_depth + f_count * df_depth;
                    let key = (depth, g_count + f_count);
                    if best.map_or(true, |b| key < (b.0, b.1 + b.2)) {
                        best = Some((depth, g_count, f_count, err));
                    }
                    break;
                }
            }
        }
        let (_, g_count, f_count, max_error) = best.ok_or_else(|| {
            Error::InvalidInput(format!(
                "Sign: no composite of at most {MAX_STAGES} + {MAX_STAGES} stages reaches \
                 2^-{precision_bits} at gap {gap}"
            ))
        })?;
        let mut stages = vec![g; g_count];
        stages.extend(std::iter::repeat(f).take(f_count));
        Ok(Self {
            precision_bits,
            gap,
            construction: SignConstruction::CheonKimKimLee {
                n,
                g_count,
                f_count,
            },
            stages,
            max_error,
        })
    }

    /// The minimax composite (Lee, Lee, Kim, No) with every stage of degree `degree`.
    ///
    /// Errors: as [`Sign::new`], and [`Error::InvalidInput`] for a degree that is even or
    /// outside `3..=255`, or when 40 stages do not suffice.
    pub fn minimax(degree: usize, precision_bits: u32, gap: f64) -> Result<Self> {
        if degree % 2 == 0 || !(3..=255).contains(&degree) {
            return Err(Error::InvalidInput(format!(
                "Sign::minimax: the degree {degree} must be odd and in 3..=255"
            )));
        }
        check_sign_parameters(precision_bits, gap)?;
        let target = 2f64.powi(-(precision_bits as i32));
        let mut lo = gap;
        let mut stages = Vec::new();
        for _ in 0..MAX_STAGES {
            let mm = super::minimax::odd_sign_minimax(lo, degree)?;
            let tau = mm.error;
            if tau <= target {
                stages.push(Polynomial::chebyshev(mm.coeffs, -1.0, 1.0)?);
                return Ok(Self {
                    precision_bits,
                    gap,
                    construction: SignConstruction::Minimax {
                        degree,
                        stages: stages.len(),
                    },
                    stages,
                    max_error: tau,
                });
            }
            // Normalised: the image of [lo, 1] is [(1 − τ)/(1 + τ), 1].
            let scaled: Vec<f64> = mm.coeffs.iter().map(|c| c / (1.0 + tau)).collect();
            stages.push(Polynomial::chebyshev(scaled, -1.0, 1.0)?);
            lo = (1.0 - tau) / (1.0 + tau);
        }
        Err(Error::InvalidInput(format!(
            "Sign::minimax: {MAX_STAGES} stages of degree {degree} do not reach \
             2^-{precision_bits} at gap {gap}"
        )))
    }

    /// The precision asked for, in bits.
    pub fn precision_bits(&self) -> u32 {
        self.precision_bits
    }

    /// The gap `ε`: the composite is accurate for `ε ≤ |x| ≤ 1`.
    pub fn gap(&self) -> f64 {
        self.gap
    }

    /// How the composite is built (and its stage counts).
    pub fn construction(&self) -> SignConstruction {
        self.construction
    }

    /// The stages, first applied first, each in the Chebyshev basis of `[−1, 1]`.
    pub fn stages(&self) -> &[Polynomial] {
        &self.stages
    }

    /// The levels [`Sign::sign`] consumes: the sum of the stages' depths.
    pub fn depth(&self) -> usize {
        self.stages.iter().map(Polynomial::depth).sum()
    }

    /// `max |p(x) − sign(x)|` over `ε ≤ |x| ≤ 1` (the image of `[ε, 1]` tracked through the
    /// stages; for the minimax construction, the last stage's equioscillating error): the approximation error, at most `2^−precision_bits`.
    pub fn max_error(&self) -> f64 {
        self.max_error
    }

    /// The composite in `f64`, stage by stage with the polynomials the homomorphic evaluation
    /// uses: the reference of [`Sign::sign`].
    pub fn evaluate_plain(&self, x: f64) -> f64 {
        self.stages.iter().fold(x, |y, p| p.evaluate(y))
    }

    /// The reference of [`Sign::relu`]: `(x + x·p(x))/2`.
    pub fn relu_plain(&self, x: f64) -> f64 {
        (x + x * self.evaluate_plain(x)) / 2.0
    }

    /// The reference of [`Sign::max`]: `((a + b) + (a − b)·p(a − b))/2`.
    pub fn max_plain(&self, a: f64, b: f64) -> f64 {
        ((a + b) + (a - b) * self.evaluate_plain(a - b)) / 2.0
    }

    /// `sign(x)` slot-wise, for slots with `ε ≤ |x| ≤ 1` (others get a value in `[−1, 1]`
    /// that may be anything in between), at level `ct.level() − depth()` and exactly
    /// `target_scale`.
    ///
    /// Errors: [`Error::LevelUnderflow`] with fewer than [`Sign::depth`] levels,
    /// [`Error::InvalidScale`] for a bad target scale, and the evaluator's errors.
    pub fn sign(&self, eval: &Evaluator, ct: &Ciphertext, target_scale: f64) -> Result<Ciphertext> {
        const OP: &str = "Sign::sign";
        crate::ckks::encoder::check_scale(OP, target_scale)?;
        check_levels(OP, ct, self.depth())?;
        let mut cur: Option<Ciphertext> = None;
        for p in &self.stages {
            let next = eval.evaluate_polynomial(cur.as_ref().unwrap_or(ct), p, target_scale)?;
            cur = Some(next);
        }
        cur.ok_or_else(|| Error::InvalidInput(format!("`{OP}`: a composite without stages")))
    }

    /// `ReLU(x) = max(x, 0) = (x + x·sign(x))/2` slot-wise for `ε ≤ |x| ≤ 1` (for `|x| < ε`
    /// the error is about `|x|` at most), at level `ct.level() − depth() − 1` and exactly `target_scale`.
    ///
    /// Errors: as [`Sign::sign`], with `depth() + 1` levels needed.
    pub fn relu(&self, eval: &Evaluator, ct: &Ciphertext, target_scale: f64) -> Result<Ciphertext> {
        const OP: &str = "Sign::relu";
        crate::ckks::encoder::check_scale(OP, target_scale)?;
        check_levels(OP, ct, self.depth() + 1)?;
        self.half_sum_with_product(eval, OP, ct, ct, target_scale)
    }

    /// `max(a, b) = ((a + b) + (a − b)·sign(a − b))/2` slot-wise, for `ε ≤ |a − b| ≤ 1` (for
    /// `|a − b| < ε` the error is below `ε/2`), at level `min(a, b level) − depth() − 1` and
    /// exactly `target_scale`. `a` and `b` should share level and scale (the evaluator's
    /// alignment of [`Evaluator::sub`] applies otherwise, which may spend a level).
    ///
    /// Errors: as [`Sign::sign`], with `depth() + 1` levels needed.
    pub fn max(
        &self,
        eval: &Evaluator,
        a: &Ciphertext,
        b: &Ciphertext,
        target_scale: f64,
    ) -> Result<Ciphertext> {
        const OP: &str = "Sign::max";
        crate::ckks::encoder::check_scale(OP, target_scale)?;
        let d = eval.sub(a, b)?;
        check_levels(OP, &d, self.depth() + 1)?;
        let sum = eval.add(a, b)?;
        self.half_sum_with_product(eval, OP, &sum, &d, target_scale)
    }

    /// `(s + d·sign(d))/2` at exactly `target`: `sign(d)` is evaluated at the scale that makes
    /// `d·sign(d)` land on `target/2` after its rescaling, `s` is brought to that level and
    /// scale, and the sum, which encodes `2·result` at `target/2`, is recorded at `target`.
    fn half_sum_with_product(
        &self,
        eval: &Evaluator,
        op: &'static str,
        s: &Ciphertext,
        d: &Ciphertext,
        target: f64,
    ) -> Result<Ciphertext> {
        let half = target / 2.0;
        let l = d.level() - self.depth();
        let q_l = eval.context().params().q_primes()[l] as f64;
        let sign_scale = half * q_l / d.scale;
        crate::ckks::encoder::check_scale(op, sign_scale)?;
        let sg = self.sign(eval, d, sign_scale)?;
        let mut prod = eval.mul_relin_rescale(d, &sg)?;
        settle_scale(op, &mut prod, half, half)?;
        let s = eval.drop_to_level_and_scale(s, l - 1, half)?;
        let mut out = eval.add(&prod, &s)?;
        out.scale = target;
        Ok(out)
    }
}

/// The monomial coefficients (index = power) of `g_n`.
fn g_monomial(n: usize) -> Vec<f64> {
    let mut c = vec![0.0; 2 * n + 2];
    for (k, &v) in G_TABLE[n - 1].iter().enumerate() {
        c[2 * k + 1] = v / 1024.0;
    }
    c
}

/// The monomial coefficients of `f_n(x) = Σ_{i=0}^{n} 4^{−i}·C(2i, i)·x·(1 − x²)^i` (exact in
/// `f64`: dyadic rationals of small height).
fn f_monomial(n: usize) -> Vec<f64> {
    let mut c = vec![0.0; 2 * n + 2];
    for i in 0..=n {
        let ci = binomial(2 * i, i) / 4f64.powi(i as i32);
        for j in 0..=i {
            let sign = if j % 2 == 0 { 1.0 } else { -1.0 };
            c[2 * j + 1] += ci * binomial(i, j) * sign;
        }
    }
    c
}

fn binomial(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// The monomial polynomial `Σ c_k x^k` in the Chebyshev basis of `[−1, 1]` (by
/// `x·T_j = (T_{j+1} + T_{|j−1|})/2`).
fn to_chebyshev(mono: &[f64]) -> Result<Polynomial> {
    let d = mono.len();
    let mut out = vec![0.0; d];
    let mut power = vec![0.0; d]; // x^k in the Chebyshev basis
    power[0] = 1.0;
    for (k, &c) in mono.iter().enumerate() {
        if k > 0 {
            let mut next = vec![0.0; d];
            for (j, &a) in power.iter().enumerate() {
                if a == 0.0 {
                    continue;
                }
                if j == 0 {
                    next[1] += a;
                } else {
                    next[j + 1] += a / 2.0;
                    next[j - 1] += a / 2.0;
                }
            }
            power = next;
        }
        for (o, p) in out.iter_mut().zip(&power) {
            *o += c * p;
        }
    }
    Polynomial::chebyshev(out, -1.0, 1.0)
}

fn horner(c: &[f64], x: f64) -> f64 {
    c.iter().rev().fold(0.0, |acc, &v| acc * x + v)
}

/// `[min p, max p]` over `[lo, hi]`: `p` at the ends and at the roots of `p'` inside
/// (located on a fine grid, refined by bisection).
fn image(mono: &[f64], (lo, hi): (f64, f64)) -> (f64, f64) {
    let deriv: Vec<f64> = mono
        .iter()
        .enumerate()
        .skip(1)
        .map(|(k, &c)| k as f64 * c)
        .collect();
    let mut vals = vec![horner(mono, lo), horner(mono, hi)];
    const STEPS: usize = 2048;
    let at = |i: usize| lo + (hi - lo) * i as f64 / STEPS as f64;
    for i in 0..STEPS {
        let (mut a, mut b) = (at(i), at(i + 1));
        let (da, db) = (horner(&deriv, a), horner(&deriv, b));
        if da == 0.0 {
            vals.push(horner(mono, a));
            continue;
        }
        if da.signum() == db.signum() {
            continue;
        }
        for _ in 0..80 {
            let m = 0.5 * (a + b);
            if horner(&deriv, m).signum() == da.signum() {
                a = m;
            } else {
                b = m;
            }
        }
        vals.push(horner(mono, 0.5 * (a + b)));
    }
    let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let max = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (min, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f_n_matches_the_paper() {
        // f_1 = (3x − x³)/2, f_2 = (15x − 10x³ + 3x⁵)/8, f_3 = (35x − 35x³ + 21x⁵ − 5x⁷)/16.
        assert_eq!(f_monomial(1), vec![0.0, 1.5, 0.0, -0.5]);
        assert_eq!(
            f_monomial(2),
            vec![0.0, 15.0 / 8.0, 0.0, -10.0 / 8.0, 0.0, 3.0 / 8.0]
        );
        assert_eq!(
            f_monomial(3),
            vec![
                0.0,
                35.0 / 16.0,
                0.0,
                -35.0 / 16.0,
                0.0,
                21.0 / 16.0,
                0.0,
                -5.0 / 16.0
            ]
        );
        for n in 1..=4 {
            let f = f_monomial(n);
            assert_eq!(horner(&f, 1.0), 1.0, "f_{n}(1)");
        }
    }

    #[test]
    fn chebyshev_form_is_the_same_polynomial() {
        for n in 1..=4 {
            for mono in [g_monomial(n), f_monomial(n)] {
                let p = to_chebyshev(&mono).unwrap();
                assert_eq!(p.degree(), 2 * n + 1);
                assert_eq!(p.parity(), crate::ckks::Parity::Odd);
                for i in 0..=100 {
                    let x = -1.0 + i as f64 / 50.0;
                    assert!((p.evaluate(x) - horner(&mono, x)).abs() < 1e-12);
                }
            }
        }
    }

    #[test]
    fn image_brackets_a_dense_sample() {
        let g = g_monomial(3);
        let (lo, hi) = image(&g, (0.05, 1.0));
        let mut smin = f64::INFINITY;
        let mut smax = f64::NEG_INFINITY;
        for i in 0..=100_000 {
            let y = horner(&g, 0.05 + 0.95 * i as f64 / 100_000.0);
            smin = smin.min(y);
            smax = smax.max(y);
        }
        assert!(lo <= smin && smin - lo < 1e-9, "{lo} {smin}");
        assert!(hi >= smax && hi - smax < 1e-9, "{hi} {smax}");
    }

    fn worst_on_grid(s: &Sign) -> f64 {
        let gap = s.gap();
        // Uniform and geometric points of [ε, 1], both signs.
        (0..=20_000)
            .flat_map(|i| {
                let t = i as f64 / 20_000.0;
                [gap + (1.0 - gap) * t, gap * (1.0 / gap).powf(t)]
            })
            .map(|x| {
                let (p, m) = (s.evaluate_plain(x), s.evaluate_plain(-x));
                (p - 1.0).abs().max((m + 1.0).abs())
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn composites_reach_the_claimed_precision_on_a_dense_grid() {
        for &(bits, gap) in &[
            (8u32, 1.0 / 16.0),
            (12, 1.0 / 64.0),
            (20, 1.0 / 256.0),
            (30, 1e-4),
        ] {
            let bound = 2f64.powi(-(bits as i32));
            let ckkl = Sign::cheon_kim_kim_lee(3, bits, gap).unwrap();
            let mm = Sign::minimax(15, bits, gap).unwrap();
            let best = Sign::new(bits, gap).unwrap();
            for s in [&ckkl, &mm, &best] {
                assert!(s.max_error() <= bound);
                let worst = worst_on_grid(s);
                assert!(
                    worst <= s.max_error() * (1.0 + 1e-6),
                    "{bits} at {gap}: {worst}"
                );
                eprintln!(
                    "sign α = {bits}, ε = {gap}: {:?}, depth {}, error 2^{:.1}",
                    s.construction(),
                    s.depth(),
                    s.max_error().log2()
                );
            }
            assert!(best.depth() <= ckkl.depth().min(mm.depth()));
            // One stage fewer misses the precision: the counts are not wasteful.
            for s in [&ckkl, &mm] {
                let mut fewer = s.clone();
                fewer.stages.pop();
                assert!(
                    worst_on_grid(&fewer) > bound,
                    "{bits} at {gap}: not minimal"
                );
            }
        }
    }

    #[test]
    fn bad_parameters_are_typed_errors() {
        assert!(matches!(Sign::new(0, 0.1), Err(Error::InvalidInput(_))));
        assert!(matches!(Sign::new(41, 0.1), Err(Error::InvalidInput(_))));
        assert!(matches!(Sign::new(8, 0.0), Err(Error::InvalidInput(_))));
        assert!(matches!(Sign::new(8, 1.0), Err(Error::InvalidInput(_))));
        assert!(matches!(
            Sign::new(8, f64::NAN),
            Err(Error::InvalidInput(_))
        ));
        assert!(matches!(
            Sign::cheon_kim_kim_lee(5, 8, 0.1),
            Err(Error::InvalidInput(_))
        ));
        assert!(matches!(
            Sign::minimax(8, 8, 0.1),
            Err(Error::InvalidInput(_))
        ));
        assert!(matches!(
            Sign::minimax(1, 8, 0.1),
            Err(Error::InvalidInput(_))
        ));
    }
}
