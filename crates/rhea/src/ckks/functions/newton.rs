//! Inverse, square root and inverse square root by Goldschmidt and Newton iterations.
//!
//! Every iteration's scales are planned before the first operation: the output scale is an
//! exact function of the one free scale (the constant of the first product, or the target
//! scale of the initial guess), solved in the log domain so that the result lands on the
//! requested scale (up to `f64` rounding of the plan, then recorded exactly).

use super::{check_levels, check_positive_interval, log_q, max_gap, settle_scale};
use crate::ckks::{Ciphertext, Evaluator, PolyBasis, Polynomial};
use crate::error::{Error, Result};

/// The most iterations accepted (far beyond any useful count: errors square each time).
const MAX_ITERATIONS: usize = 30;

/// An affine function `a·s + b` of the log2 of the free scale `s`: the log2 of a scale in the
/// plan.
#[derive(Clone, Copy)]
struct LogScale {
    a: f64,
    b: f64,
}

impl LogScale {
    const FREE: Self = Self { a: 1.0, b: 0.0 };

    /// The free log-scale that makes this one equal `log2(want)`.
    fn solve(self, want: f64) -> f64 {
        (want.log2() - self.b) / self.a
    }
}

fn check_iterations(op: &str, iterations: usize) -> Result<()> {
    if iterations > MAX_ITERATIONS {
        return Err(Error::InvalidInput(format!(
            "{op}: {iterations} iterations is above {MAX_ITERATIONS}"
        )));
    }
    Ok(())
}

/// `1/x` for `x ∈ [lo, hi] ⊂ (0, ∞)` by Goldschmidt's iteration.
///
/// With `c = 2/(lo + hi)` and `b = 1 − c·x` (so `|b| ≤ (hi − lo)/(hi + lo) < 1`),
/// `1/x = c·Π_{k≥0}(1 + b^{2^k})`; `n` iterations keep the factors `k ≤ n`, a relative error
/// of `|b|^{2^{n+1}}` ([`Inverse::approximation_error`] measures it).
///
/// **Depth** `n + 2` (1 for `n = 0`): one level for `c·x`, one per squaring of `b`, one for the
/// last product.
///
/// **Precision** (N = 2^13, Δ = 2^40, measured in `tests/ckks_functions.rs`, inputs uniform on
/// the interval):
///
/// | interval | `n` | depth | approximation error | HE vs `f64` reference |
/// |---|---|---|---|---|
/// | `[1, 4]` | 5 | 7 | `2^−47.1` | 25.6 bits |
/// | `[1/8, 1]` | 5 ([`Inverse::with_precision`]`(.., 20)`) | 7 | `2^−20.2` | 21.3 bits |
#[derive(Clone, Debug, PartialEq)]
pub struct Inverse {
    lo: f64,
    hi: f64,
    iterations: usize,
}

impl Inverse {
    /// `n = iterations` Goldschmidt iterations on `[lo, hi]`.
    ///
    /// Errors: [`Error::InvalidInput`] unless `0 < lo < hi < ∞` (an interval containing or
    /// touching 0 has no bounded inverse) and `iterations ≤ 30`.
    pub fn new(lo: f64, hi: f64, iterations: usize) -> Result<Self> {
        check_positive_interval("Inverse", lo, hi)?;
        check_iterations("Inverse", iterations)?;
        Ok(Self { lo, hi, iterations })
    }

    /// The fewest iterations whose relative error `|b|^{2^{n+1}}` is at most
    /// `2^−precision_bits`.
    ///
    /// Errors: as [`Inverse::new`], and when 30 iterations do not suffice.
    pub fn with_precision(lo: f64, hi: f64, precision_bits: u32) -> Result<Self> {
        check_positive_interval("Inverse", lo, hi)?;
        let b = (hi - lo) / (hi + lo);
        let target = -(precision_bits as f64);
        let n = (0..=MAX_ITERATIONS)
            .find(|&n| 2f64.powi(n as i32 + 1) * b.log2() <= target)
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "Inverse: more than {MAX_ITERATIONS} iterations needed for \
                     {precision_bits} bits on [{lo}, {hi}]"
                ))
            })?;
        Self::new(lo, hi, n)
    }

    /// The interval.
    pub fn interval(&self) -> (f64, f64) {
        (self.lo, self.hi)
    }

    /// The number of iterations.
    pub fn iterations(&self) -> usize {
        self.iterations
    }

    /// The levels [`Inverse::evaluate`] consumes: `n + 2`, or 1 for `n = 0`.
    pub fn depth(&self) -> usize {
        if self.iterations == 0 {
            1
        } else {
            self.iterations + 2
        }
    }

    /// The same iteration in `f64`: the reference of [`Inverse::evaluate`].
    pub fn evaluate_plain(&self, x: f64) -> f64 {
        let c = 2.0 / (self.lo + self.hi);
        let y = -c * x;
        let (mut b, mut a) = (y + 1.0, y + 2.0);
        for _ in 0..self.iterations {
            b *= b;
            a *= b + 1.0;
        }
        a * c
    }

    /// `max |evaluate_plain(x) − 1/x|` on a grid of 4097 points of `[lo, hi]`.
    pub fn approximation_error(&self) -> f64 {
        max_gap(self.lo, self.hi, |x| self.evaluate_plain(x), |x| 1.0 / x)
    }

    /// `1/x` slot-wise (slots in `[lo, hi]`), at level `ct.level() − depth()` and exactly
    /// `target_scale`.
    ///
    /// Errors: [`Error::LevelUnderflow`] with fewer than [`Inverse::depth`] levels,
    /// [`Error::InvalidScale`] for a bad target scale, and the evaluator's errors.
    pub fn evaluate(
        &self,
        eval: &Evaluator,
        ct: &Ciphertext,
        target_scale: f64,
    ) -> Result<Ciphertext> {
        const OP: &str = "Inverse::evaluate";
        crate::ckks::encoder::check_scale(OP, target_scale)?;
        check_levels(OP, ct, self.depth())?;
        let top = ct.level();
        let c = 2.0 / (self.lo + self.hi);
        // The plan: b_0 and a_0 at level top − 1 with the free scale S; b_i = b_{i−1}² at
        // level top − 1 − i; a_i = a_{i−1}·(1 + b_i) rescaled at b_i's level. The result a_n
        // encodes 1/(c·x), i.e. 1/x at scale S_a / c: S_a must be target·c.
        let (mut sb, mut sa) = (LogScale::FREE, LogScale::FREE);
        for i in 1..=self.iterations {
            sb = LogScale {
                a: 2.0 * sb.a,
                b: 2.0 * sb.b - log_q(eval, top - i),
            };
            sa = LogScale {
                a: sa.a + sb.a,
                b: sa.b + sb.b - log_q(eval, top - 1 - i),
            };
        }
        let want = target_scale * c;
        let s0 = sa.solve(want);
        let k_scale = (s0 + log_q(eval, top) - ct.scale.log2()).exp2();
        let y = eval.rescale(&eval.mul_const_with_scale(ct, -c, k_scale)?)?;
        let mut b = eval.add_const(&y, 1.0)?;
        let mut a = eval.add_const(&y, 2.0)?;
        for _ in 0..self.iterations {
            b = eval.square_relin_rescale(&b)?;
            a = eval.mul_relin_rescale(&a, &eval.add_const(&b, 1.0)?)?;
        }
        settle_scale(OP, &mut a, want, want)?;
        a.scale = target_scale;
        Ok(a)
    }
}

/// `1/√x` for `x ∈ [lo, hi] ⊂ (0, ∞)`: a Chebyshev interpolant of degree `d` as the initial
/// guess, then `n` Newton steps `y ← y·(3 − x·y²)/2`, evaluated as `1.5·y − (x·y)·y²/2` (two
/// levels per step).
///
/// If the guess has relative error `e` (`y = (1 + e)/√x`), a step leaves
/// `−(3/2)e² − (1/2)e³`: the error squares each step once `|e| < 1/2`.
///
/// **Depth** `depth(guess) + 2n`, with `depth(guess) = 1` for `d = 1` (a linear guess
/// `α + βx`: one constant product) and the polynomial evaluator's depth
/// `⌈log2(d + 1)⌉ + 1` for `d ≥ 2`.
///
/// **Precision** (N = 2^13, Δ = 2^40, measured in `tests/ckks_functions.rs`, inputs uniform on
/// the interval):
///
/// | interval | guess degree | steps | depth | approximation error | HE vs `f64` reference |
/// |---|---|---|---|---|---|
/// | `[1, 4]` | 1 | 3 | 7 | `2^−22.3` | 25.6 bits |
/// | `[1/16, 1]` | 7 | 2 | 8 | `2^−21.8` | 22.2 bits |
#[derive(Clone, Debug, PartialEq)]
pub struct InvSqrt {
    lo: f64,
    hi: f64,
    iterations: usize,
    guess: Polynomial,
}

impl InvSqrt {
    /// The guess of degree `guess_degree ≥ 1` and `iterations` Newton steps on `[lo, hi]`.
    ///
    /// Errors: [`Error::InvalidInput`] unless `0 < lo < hi < ∞`, `1 ≤ guess_degree ≤ 255`
    /// and `iterations ≤ 30`.
    pub fn new(lo: f64, hi: f64, guess_degree: usize, iterations: usize) -> Result<Self> {
        check_positive_interval("InvSqrt", lo, hi)?;
        check_iterations("InvSqrt", iterations)?;
        if !(1..=255).contains(&guess_degree) {
            return Err(Error::InvalidInput(format!(
                "InvSqrt: the initial guess degree {guess_degree} is outside 1..=255"
            )));
        }
        let guess = Polynomial::interpolate(|x| 1.0 / x.sqrt(), lo, hi, guess_degree)?.polynomial;
        Ok(Self {
            lo,
            hi,
            iterations,
            guess,
        })
    }

    /// The interval.
    pub fn interval(&self) -> (f64, f64) {
        (self.lo, self.hi)
    }

    /// The number of Newton steps.
    pub fn iterations(&self) -> usize {
        self.iterations
    }

    /// The initial guess (Chebyshev interpolant of `1/√x` on `[lo, hi]`).
    pub fn guess(&self) -> &Polynomial {
        &self.guess
    }

    fn guess_depth(&self) -> usize {
        if self.guess.degree() <= 1 {
            1
        } else {
            self.guess.depth()
        }
    }

    /// The levels [`InvSqrt::evaluate`] consumes: `depth(guess) + 2n`.
    pub fn depth(&self) -> usize {
        self.guess_depth() + 2 * self.iterations
    }

    /// The same computation in `f64`: the reference of [`InvSqrt::evaluate`].
    pub fn evaluate_plain(&self, x: f64) -> f64 {
        let mut y = self.guess.evaluate(x);
        for _ in 0..self.iterations {
            y = 1.5 * y - 0.5 * (x * y) * (y * y);
        }
        y
    }

    /// `max |evaluate_plain(x) − 1/√x|` on a grid of 4097 points of `[lo, hi]`.
    pub fn approximation_error(&self) -> f64 {
        max_gap(
            self.lo,
            self.hi,
            |x| self.evaluate_plain(x),
            |x| 1.0 / x.sqrt(),
        )
    }

    /// `1/√x` slot-wise (slots in `[lo, hi]`), at level `ct.level() − depth()` and exactly
    /// `target_scale`.
    ///
    /// Errors: [`Error::LevelUnderflow`] with fewer than [`InvSqrt::depth`] levels,
    /// [`Error::InvalidScale`] for a bad target scale, and the evaluator's errors.
    pub fn evaluate(
        &self,
        eval: &Evaluator,
        ct: &Ciphertext,
        target_scale: f64,
    ) -> Result<Ciphertext> {
        const OP: &str = "InvSqrt::evaluate";
        crate::ckks::encoder::check_scale(OP, target_scale)?;
        check_levels(OP, ct, self.depth())?;
        self.run(eval, ct, target_scale)
    }

    /// The guess and the Newton steps, with `y_n` landing on `final_scale`.
    fn run(&self, eval: &Evaluator, ct: &Ciphertext, final_scale: f64) -> Result<Ciphertext> {
        const OP: &str = "InvSqrt::evaluate";
        let top = ct.level();
        let log_sx = ct.scale.log2();
        // y_k at level l = top − depth(guess) − 2k, scale S_k. A step: y², x·y at l − 1; their
        // product at l − 2 with scale s_x·S_k³/(q_l²·q_{l−1}), recorded ×2 (it encodes
        // x·y³/2); 1.5·y is brought to that level and scale. So
        // log S_{k+1} = 3·log S_k + 1 + log s_x − 2·log q_l − log q_{l−1}.
        let mut plan = LogScale::FREE;
        for k in 0..self.iterations {
            let l = top - self.guess_depth() - 2 * k;
            plan = LogScale {
                a: 3.0 * plan.a,
                b: 3.0 * plan.b + 1.0 + log_sx - 2.0 * log_q(eval, l) - log_q(eval, l - 1),
            };
        }
        let s0 = plan.solve(final_scale).exp2();
        crate::ckks::encoder::check_scale(OP, s0)?;
        let mut y = self.guess_at(eval, ct, s0)?;
        for _ in 0..self.iterations {
            let l = y.level();
            let y2 = eval.square_relin_rescale(&y)?;
            let xy = eval.mul_relin_rescale(ct, &y)?;
            let mut v = eval.mul_relin_rescale(&xy, &y2)?;
            v.scale *= 2.0; // encodes x·y³/2
            let q_l = eval.context().params().q_primes()[l] as f64;
            let c_scale = v.scale * q_l / y.scale;
            let mut w = eval.rescale(&eval.mul_const_with_scale(&y, 1.5, c_scale)?)?;
            w = eval.drop_to_level(&w, l - 2)?;
            settle_scale(OP, &mut w, v.scale, v.scale)?;
            y = eval.sub(&w, &v)?;
        }
        settle_scale(OP, &mut y, final_scale, final_scale)?;
        Ok(y)
    }

    /// The initial guess at exactly `scale`: `α + β·x` by one constant product for degree 1,
    /// else the polynomial evaluator.
    fn guess_at(&self, eval: &Evaluator, ct: &Ciphertext, scale: f64) -> Result<Ciphertext> {
        const OP: &str = "InvSqrt::evaluate";
        if self.guess.degree() > 1 {
            return eval.evaluate_polynomial(ct, &self.guess, scale);
        }
        let c = self.guess.coefficients();
        let c1 = c.get(1).copied().unwrap_or(0.0);
        let (alpha, beta) = match self.guess.basis() {
            PolyBasis::Chebyshev { a, b } => (c[0] - c1 * (a + b) / (b - a), 2.0 * c1 / (b - a)),
            PolyBasis::Monomial => (c[0], c1),
        };
        let q = eval.context().params().q_primes()[ct.level()] as f64;
        let k_scale = scale * q / ct.scale;
        let mut y = eval.rescale(&eval.mul_const_with_scale(ct, beta, k_scale)?)?;
        settle_scale(OP, &mut y, scale, scale)?;
        eval.add_const(&y, alpha)
    }
}

/// `√x` for `x ∈ [lo, hi] ⊂ (0, ∞)`: `x · InvSqrt(x)` (see [`InvSqrt`] for the guess and the
/// Newton steps).
///
/// **Depth** `InvSqrt::depth() + 1`.
///
/// **Precision** (N = 2^13, Δ = 2^40, measured in `tests/ckks_functions.rs`): on `[1, 4]` with
/// a linear guess and 3 steps (8 levels): approximation error `2^−22.3`, homomorphic result
/// within 24.1 bits of the `f64` reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Sqrt {
    inv: InvSqrt,
}

impl Sqrt {
    /// As [`InvSqrt::new`].
    pub fn new(lo: f64, hi: f64, guess_degree: usize, iterations: usize) -> Result<Self> {
        Ok(Self {
            inv: InvSqrt::new(lo, hi, guess_degree, iterations)?,
        })
    }

    /// The inverse square root it multiplies by `x`.
    pub fn inv_sqrt(&self) -> &InvSqrt {
        &self.inv
    }

    /// The levels [`Sqrt::evaluate`] consumes: `InvSqrt::depth() + 1`.
    pub fn depth(&self) -> usize {
        self.inv.depth() + 1
    }

    /// The same computation in `f64`: the reference of [`Sqrt::evaluate`].
    pub fn evaluate_plain(&self, x: f64) -> f64 {
        x * self.inv.evaluate_plain(x)
    }

    /// `max |evaluate_plain(x) − √x|` on a grid of 4097 points of `[lo, hi]`.
    pub fn approximation_error(&self) -> f64 {
        let (lo, hi) = self.inv.interval();
        max_gap(lo, hi, |x| self.evaluate_plain(x), f64::sqrt)
    }

    /// `√x` slot-wise (slots in `[lo, hi]`), at level `ct.level() − depth()` and exactly
    /// `target_scale`.
    ///
    /// Errors: as [`InvSqrt::evaluate`], with `depth()` levels needed.
    pub fn evaluate(
        &self,
        eval: &Evaluator,
        ct: &Ciphertext,
        target_scale: f64,
    ) -> Result<Ciphertext> {
        const OP: &str = "Sqrt::evaluate";
        crate::ckks::encoder::check_scale(OP, target_scale)?;
        check_levels(OP, ct, self.depth())?;
        // x·y_n is rescaled at y_n's level l: y_n must land on target·q_l/s_x.
        let l = ct.level() - self.inv.depth();
        let q_l = eval.context().params().q_primes()[l] as f64;
        let y = self.inv.run(eval, ct, target_scale * q_l / ct.scale)?;
        let mut out = eval.mul_relin_rescale(ct, &y)?;
        settle_scale(OP, &mut out, target_scale, target_scale)?;
        Ok(out)
    }
}
