//! EvalMod, the homomorphic reduction modulo 1 of bootstrapping: [`EvalMod`] (its
//! documentation gives the construction, the depths and the measured errors) and its
//! configuration [`EvalModParams`].

use std::f64::consts::PI;

use crate::ckks::{Ciphertext, Evaluator, Polynomial};
use crate::error::{Error, Result};

const OP: &str = "EvalMod::evaluate";

/// The points of each interval `[I − ε_max, I + ε_max]` on which
/// [`EvalMod::approximation_error`] is measured.
const GRID: usize = 512;

/// The largest `K` accepted (`|I| < K`; bootstrapping needs a few tens).
const MAX_K: usize = 1 << 10;

/// The largest polynomial degree accepted (bootstrapping uses a few tens; the approximation
/// error is measured on `(2K − 1)·513` points at construction).
const MAX_DEGREE: usize = 1 << 12;

/// The most double-angle steps accepted (each multiplies the cosine's error by up to 4).
const MAX_DOUBLE_ANGLES: usize = 16;

/// The configuration of [`EvalMod`]: public fields, bootstrapping defaults in
/// [`EvalModParams::default`] (`K = 16`, degree 30, 3 double angles, no arcsine, `factor = 1`,
/// `ε_max = 2^−5`, input not normalized), as in Bossuat et al. and Lattigo.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalModParams {
    /// `K`: the inputs are `t = I + ε` with `I` an integer, `|I| < K` (`1 ≤ K ≤ 1024`). The cosine is
    /// interpolated on `[−K, K]`.
    pub k: usize,
    /// The degree `1 ≤ d ≤ 4096` of the Chebyshev interpolant of `cos(2π(t − 1/4)/2^r)` on `[−K, K]`.
    pub degree: usize,
    /// `r`: the double-angle steps `y ← 2y² − 1` (at most 16; 0 interpolates `sin(2πt)`
    /// directly, which needs a far higher degree).
    pub double_angles: usize,
    /// The degree of the arcsine correction (odd), or `None` for none.
    pub arcsine_degree: Option<usize>,
    /// The real constant the output is multiplied by (finite, non-zero), at no level.
    pub factor: f64,
    /// `ε_max` (`0 < ε_max ≤ 1/4`): the bound on `|ε| = |t − I|` the approximation error is
    /// measured on and the arcsine interpolated for.
    pub eps_max: f64,
    /// Whether the ciphertext holds `t/(K + 1/4)` rather than `t` (a CoeffToSlot with the
    /// divisor folded into its matrices, [`EvalMod::input_divisor`]): the cosine polynomial is
    /// then an even one on `[−1, 1]` (in `w = (t − 1/4)/(K + 1/4)`, after a constant
    /// addition), with no interval map (one level less) and only even powers (about half the
    /// products). [`EvalMod::evaluate_plain`] takes `t` either way.
    pub normalized_input: bool,
}

impl Default for EvalModParams {
    fn default() -> Self {
        Self {
            k: 16,
            degree: 30,
            double_angles: 3,
            arcsine_degree: None,
            factor: 1.0,
            eps_max: 2f64.powi(-5),
            normalized_input: false,
        }
    }
}

/// EvalMod, the homomorphic reduction modulo 1 of bootstrapping.
///
/// After CoeffToSlot every (real) slot holds `t = I + ε`, `I` an integer with `|I| < K` (the
/// multiple of `q0` that ModRaise added) and `ε = m/q0` small. EvalMod computes
///
/// ```text
/// f(t) = factor · sin(2πt)/(2π)        (≈ factor · ε for t = I + ε)
/// ```
///
/// or, with the arcsine correction, `factor · arcsin(sin(2πt))/(2π) = factor · ε` up to the
/// polynomial approximations (Bossuat, Mouchet, Troncoso-Pastoriza and Hubaux, Eurocrypt 2021;
/// Lattigo's `EvalMod`). Construction:
///
/// 1. `y₀ = cos(2π(t − 1/4)/2^r)` by its Chebyshev interpolant of degree `d` on `[−K, K]`
///    (the shift by `−1/4` is part of the interpolated function, so it costs nothing), evaluated
///    by [`Evaluator::evaluate_polynomial`]: `⌈log2(d + 1)⌉` levels, plus one for the map of
///    `[−K, K]` onto `[−1, 1]` — or none with [`EvalModParams::normalized_input`], where the
///    ciphertext already holds `t/K` (the integrator folds `1/K` into CoeffToSlot's matrices);
/// 2. `r` double-angle steps `y ← 2y² − 1`, one level each (a square, the integer `2`, the
///    constant `−1`): `y_r = cos(2π(t − 1/4)) = sin(2πt)`;
/// 3. without arcsine, the constant `factor/(2π)` is folded into the last step (the square's
///    recorded scale is reinterpreted, no level); with arcsine of degree `a`, the last step's
///    output `x = sin(2πt)` is read as `u = x/sin(2π ε_max)` (again by its recorded scale) and
///    the odd Chebyshev interpolant of `factor · arcsin(sin(2π ε_max)·u)/(2π)` on `[−1, 1]` is
///    evaluated: `⌈log2(a + 1)⌉` levels, no interval map.
///
/// **Depth** ([`EvalMod::depth`]): `⌈log2(d + 1)⌉ + [not normalized] + r + ⌈log2(a + 1)⌉`
/// (no arcsine: the last term is 0). The bootstrapping default (`K = 16`, `d = 30`, `r = 3`):
/// `5 + 1 + 3 = 9` levels (8 with a normalized input).
///
/// **Exact scales.** All scales are planned backwards from `target_scale` before the first
/// operation: a double-angle step squares `y` at scale `S` and rescales by the prime `q` of its
/// level (`S²/q`), so the step before must land on `S = √(S_next · q)`; the last step lands on
/// `|factor/(2π)| · target_scale` and is *recorded* as `target_scale`, which multiplies the value
/// by `factor/(2π)` (its sign by the integer `∓2`), and adds `−factor/(2π)` there. The cosine
/// polynomial lands exactly on the first planned scale. The output scale is `target_scale`
/// exactly.
///
/// **Approximation error** ([`EvalMod::approximation_error`]): `max |f(t) − factor·ε|` over
/// `t = I + ε`, `|I| < K`, `|ε| ≤ ε_max` (a grid of 513 points of every such interval), in
/// `f64` — the "mod 1" error, separate from the error of the homomorphic evaluation. Measured
/// with `factor = 1` (the unit tests of this file check the bounds):
///
/// | `K` | `d` | `r` | arcsine | `ε_max` | depth | approximation error | cosine fit |
/// |---|---|---|---|---|---|---|---|
/// | 16 | 30 | 3 | — | `2^−5` | 9 (8 normalized) | `2^−12.3` | `2^−32.1` |
/// | 16 | 30 | 3 | — | `2^−6` | 9 | `2^−15.3` | `2^−32.1` |
/// | 16 | 30 | 3 | 7 | `2^−5` | 12 | `2^−29.6` | `2^−32.1` |
/// | 16 | 30 | 3 | 3 | `2^−6` | 11 (10 normalized) | `2^−26.0` | `2^−32.1` |
/// | 8 | 15 | 3 | — | `2^−6` | 8 | `2^−14.0` | `2^−17.6` |
/// | 8 | 31 | 2 | — | `2^−6` | 8 | `2^−15.3` | `2^−33.5` |
/// | 8 | 31 | 2 | 3 | `2^−6` | 10 | `2^−26.1` | `2^−33.5` |
/// | 4 | 15 | 2 | 3 | `2^−6` | 9 | `2^−16.9` | `2^−17.6` |
///
/// **Homomorphic precision.** The double angles multiply the absolute error of the cosine
/// polynomial by up to `4^r` (`r` = 3: about `2^5`, then `1/(2π)`), and that error is an
/// absolute noise over the scale, so EvalMod wants large primes (Lattigo runs it on 60-bit
/// ones). Measured at N = 2^13 on inputs `t = I + ε`, `|I| < K`, `|ε| ≤ 2^−6` encrypted at Δ
/// (`tests/ckks_bootstrap_evalmod.rs`), the maximal error against
/// [`EvalMod::evaluate_plain`], absolute and relative to the largest output:
///
/// | `K`, `d`, `r`, arcsine, factor | depth | 10 × 40-bit primes, Δ = 2^40 | 10 × 55-bit primes, Δ = 2^55 |
/// |---|---|---|---|
/// | 16, 30, 3, —, 1 | 9 | `2^−19.1` (13.1 bits) | `2^−35.0` (29.0 bits) |
/// | 16, 30, 3, 3, 1, normalized input | 10 | `2^−19.4` (13.4 bits) | `2^−35.1` (29.1 bits) |
/// | 8, 31, 2, 3, −1000 | 10 | `2^−11.5` (15.4 bits) | `2^−26.4` (30.3 bits) |
/// | 8, 15, 3, —, −1000 | 8 | `2^−12.1` (16.1 bits) | `2^−26.8` (30.8 bits) |
///
/// Without arcsine the error is the sine's own, `(2π)²ε³/6 ≈ 6.6 ε_max³`: at `ε_max = 2^−5`
/// about `2^−12.3` absolute, i.e. a relative error of `6.6 ε²` on the message; the arcsine
/// removes it, leaving the cosine fit's error (amplified by `4^r/(2π)` through the double
/// angles) and the arcsine fit's.
///
/// ```
/// use rhea::ckks::bootstrap::{EvalMod, EvalModParams};
/// use rhea::ckks::{CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator};
/// use rhea::params::CkksParametersLiteral;
/// use rhea::Device;
///
/// let params = CkksParametersLiteral::test_n13_levels10_insecure().build()?;
/// let ctx = CkksContext::new(&params, Device::Cpu)?;
/// let mut keygen = KeyGenerator::from_seed(&ctx, [7; 32]);
/// let sk = keygen.secret_key()?;
/// let eval = Evaluator::new(&ctx).with_relinearization_key(keygen.relinearization_key(&sk)?)?;
/// let (encoder, encryptor) = (Encoder::new(&ctx)?, Encryptor::with_secret_key(&ctx, &sk)?);
///
/// // |I| < 8, degree 15, 2 double angles, output multiplied by 1000.
/// let evalmod = EvalMod::new(EvalModParams {
///     k: 8,
///     degree: 15,
///     double_angles: 3,
///     factor: 1000.0,
///     eps_max: 2f64.powi(-6),
///     ..EvalModParams::default()
/// })?;
/// assert_eq!(evalmod.depth(), 8); // 4 + 1 (map of [−8, 8]) + 3
/// assert!(evalmod.approximation_error() < 1000.0 * 2f64.powi(-13));
///
/// let ts = [3.01, -5.0 + 0.007, 0.0 - 0.012, 7.0 + 0.0];
/// let ct = encryptor.encrypt(&encoder.encode(&ts)?)?;
/// let out = evalmod.evaluate(&eval, &ct, ct.scale())?;
/// assert_eq!((ct.level() - out.level(), out.scale()), (8, ct.scale()));
/// let got = encoder.decode(&Decryptor::new(&ctx, &sk)?.decrypt(&out)?)?;
/// for (g, t) in got.iter().zip(ts) {
///     let eps = t - t.round();
///     assert!((g - evalmod.evaluate_plain(t)).abs() < 1e-3); // the HE error
///     assert!((g - 1000.0 * eps).abs() < 1e-3 + evalmod.approximation_error());
/// }
/// # Ok::<(), rhea::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct EvalMod {
    params: EvalModParams,
    /// `cos(2π(t − 1/4)/2^r)` (times `factor/(2π)` when `r = 0` without arcsine), on `[−K, K]`
    /// or, normalized, in `u = t/K` on `[−1, 1]`.
    cosine: Polynomial,
    cosine_fit_error: f64,
    /// The arcsine polynomial in `u = x/a` on `[−1, 1]`, and `a = sin(2π ε_max)`.
    arcsine: Option<(Polynomial, f64)>,
    approximation_error: f64,
}

impl EvalMod {
    /// Interpolates the polynomials and measures the approximation error.
    ///
    /// Errors: [`Error::InvalidInput`] for `K = 0` or above 1024, a degree of 0 or above 4096,
    /// more than 16 double angles, an even, zero or too large arcsine degree, a factor that is zero or not
    /// finite, or `ε_max` outside `(0, 1/4]`.
    pub fn new(params: EvalModParams) -> Result<Self> {
        let p = &params;
        let bad = |what: String| Err(Error::InvalidInput(format!("EvalMod: {what}")));
        if p.k == 0 || p.k > MAX_K {
            return bad(format!("K = {} must be in 1..={MAX_K}", p.k));
        }
        if p.degree == 0 || p.degree > MAX_DEGREE {
            return bad(format!(
                "the cosine degree {} must be in 1..={MAX_DEGREE}",
                p.degree
            ));
        }
        if p.double_angles > MAX_DOUBLE_ANGLES {
            return bad(format!(
                "{} double angles is above {MAX_DOUBLE_ANGLES}",
                p.double_angles
            ));
        }
        if let Some(a) = p.arcsine_degree {
            if a % 2 == 0 || a > MAX_DEGREE {
                return bad(format!(
                    "the arcsine degree {a} must be odd (the arcsine is odd) and at most \
                     {MAX_DEGREE}"
                ));
            }
        }
        if !(p.factor.is_finite() && p.factor != 0.0) {
            return bad(format!(
                "the factor {} must be finite and non-zero",
                p.factor
            ));
        }
        if !(p.eps_max > 0.0 && p.eps_max <= 0.25) {
            return bad(format!(
                "ε_max = {} must be in (0, 1/4] (the sine is invertible only there)",
                p.eps_max
            ));
        }
        let k = p.k as f64;
        let period = 2f64.powi(p.double_angles as i32);
        // Without arcsine and without double angles, the factor goes into the polynomial.
        let c = if p.double_angles == 0 && p.arcsine_degree.is_none() {
            p.factor / (2.0 * PI)
        } else {
            1.0
        };
        let g = move |t: f64| c * (2.0 * PI * (t - 0.25) / period).cos();
        let fit = if p.normalized_input {
            // In w = (t − 1/4)/(K + 1/4) on [−1, 1] the cosine is even: only the even powers
            // are computed (about half the products of the general polynomial). The odd
            // coefficients of the fit are rounding noise.
            let kp = k + 0.25;
            let mut fit = Polynomial::interpolate(
                move |w| c * (2.0 * PI * kp * w / period).cos(),
                -1.0,
                1.0,
                p.degree,
            )?;
            let even = fit
                .polynomial
                .coefficients()
                .iter()
                .enumerate()
                .map(|(i, &c)| if i % 2 == 0 { c } else { 0.0 })
                .collect();
            fit.polynomial = Polynomial::chebyshev(even, -1.0, 1.0)?;
            fit
        } else {
            Polynomial::interpolate(g, -k, k, p.degree)?
        };
        let arcsine = match p.arcsine_degree {
            None => None,
            Some(d) => {
                let a = (2.0 * PI * p.eps_max).sin();
                let factor = p.factor;
                let h = move |u: f64| factor * (a * u).clamp(-1.0, 1.0).asin() / (2.0 * PI);
                let fit = Polynomial::interpolate(h, -1.0, 1.0, d)?;
                // The function is odd: the even coefficients are rounding noise.
                let odd = fit
                    .polynomial
                    .coefficients()
                    .iter()
                    .enumerate()
                    .map(|(i, &c)| if i % 2 == 0 { 0.0 } else { c })
                    .collect();
                Some((Polynomial::chebyshev(odd, -1.0, 1.0)?, a))
            }
        };
        let mut out = Self {
            cosine_fit_error: fit.max_error / c.abs(),
            cosine: fit.polynomial,
            arcsine,
            approximation_error: 0.0,
            params,
        };
        out.approximation_error = out.measure_error();
        Ok(out)
    }

    /// The configuration.
    pub fn params(&self) -> &EvalModParams {
        &self.params
    }

    /// What a normalized input is divided by: the ciphertext holds `t / (K + 1/4)` (1 without
    /// [`EvalModParams::normalized_input`]).
    pub fn input_divisor(&self) -> f64 {
        if self.params.normalized_input {
            self.params.k as f64 + 0.25
        } else {
            1.0
        }
    }

    /// The cosine polynomial (Chebyshev basis of `[−K, K]`, or of `[−1, 1]` in `t/K` with
    /// [`EvalModParams::normalized_input`]).
    pub fn cosine_polynomial(&self) -> &Polynomial {
        &self.cosine
    }

    /// The arcsine polynomial (odd, Chebyshev basis of `[−1, 1]`, in `u = sin(2πt)/sin(2π ε_max)`),
    /// if any.
    pub fn arcsine_polynomial(&self) -> Option<&Polynomial> {
        self.arcsine.as_ref().map(|(p, _)| p)
    }

    /// `max |cos(2π(t − 1/4)/2^r) − p(t)|` on `[−K, K]`: the interpolation error of the cosine
    /// alone (before the double angles amplify it).
    pub fn cosine_fit_error(&self) -> f64 {
        self.cosine_fit_error
    }

    /// The levels [`EvalMod::evaluate`] consumes: the cosine polynomial's depth (with its
    /// interval map unless the input is normalized), plus `r`, plus the arcsine polynomial's.
    pub fn depth(&self) -> usize {
        self.cosine.depth()
            + self.params.double_angles
            + self.arcsine.as_ref().map_or(0, |(p, _)| p.depth())
    }

    /// `max |f(t) − factor·(t − round(t))|` over `t = I + ε`, `|I| < K`, `|ε| ≤ ε_max` (513
    /// points per integer), `f` = [`EvalMod::evaluate_plain`]: the approximation error of the
    /// "mod 1", in `f64`.
    pub fn approximation_error(&self) -> f64 {
        self.approximation_error
    }

    fn measure_error(&self) -> f64 {
        let (k, eps) = (self.params.k as i64, self.params.eps_max);
        let mut worst = 0.0f64;
        for i in -(k - 1)..k {
            for j in 0..=GRID {
                let e = -eps + 2.0 * eps * j as f64 / GRID as f64;
                let t = i as f64 + e;
                let want = self.params.factor * (t - t.round());
                worst = worst.max((self.evaluate_plain(t) - want).abs());
            }
        }
        worst
    }

    /// The computation of [`EvalMod::evaluate`] in `f64`, on `t` (also with a normalized
    /// input): the reference the homomorphic result is measured against.
    pub fn evaluate_plain(&self, t: f64) -> f64 {
        let p = &self.params;
        let x = if p.normalized_input {
            (t - 0.25) / self.input_divisor()
        } else {
            t
        };
        let mut y = self.cosine.evaluate(x);
        let c = p.factor / (2.0 * PI);
        for i in 1..=p.double_angles {
            y = if i == p.double_angles && self.arcsine.is_none() {
                c * (2.0 * y * y - 1.0)
            } else {
                2.0 * y * y - 1.0
            };
        }
        match &self.arcsine {
            Some((q, a)) => q.evaluate(y / a),
            None => y,
        }
    }

    /// `f(t)` slot-wise on the real slot values `t` of `ct` (`t/K` with a normalized input), at
    /// level `ct.level() − depth()` and scale exactly `target_scale`. Complex slots: evaluate
    /// the real and imaginary parts separately.
    ///
    /// Errors: [`Error::LevelUnderflow`] with fewer than [`EvalMod::depth`] levels;
    /// [`Error::InvalidScale`] for a target scale below 1 or not finite (or a planned scale
    /// below 1: a factor far too small for the target scale);
    /// [`Error::ScaleOverflow`] when a planned scale does not fit its level (a factor far too
    /// large for the target scale); [`Error::MissingRelinearizationKey`]; and the evaluator's
    /// errors ([`Error::ParametersMismatch`], [`Error::CiphertextDegree`], ...).
    pub fn evaluate(
        &self,
        eval: &Evaluator,
        ct: &Ciphertext,
        target_scale: f64,
    ) -> Result<Ciphertext> {
        self.evaluate_with_factor(eval, ct, target_scale, self.params.factor)
    }

    /// [`EvalMod::evaluate`] with the output factor `factor` in place of the parameters' one,
    /// at no cost: without arcsine and with double angles the factor only enters the last
    /// step's constants (bootstrapping passes `q_0 / S` for the scale `S` of each input).
    ///
    /// With an arcsine (or no double angle) the parameters' factor is built into the last
    /// polynomial; another factor (of the same sign) is then applied by evaluating onto the
    /// scale `target_scale · factor / built-in` and recording `target_scale`.
    ///
    /// Errors: as [`EvalMod::evaluate`], and [`Error::InvalidInput`] for a factor that is zero,
    /// not finite, or of the other sign than a built-in one.
    pub(crate) fn evaluate_with_factor(
        &self,
        eval: &Evaluator,
        ct: &Ciphertext,
        target_scale: f64,
        factor: f64,
    ) -> Result<Ciphertext> {
        if !(factor.is_finite() && factor != 0.0) {
            return Err(Error::InvalidInput(format!(
                "`{OP}`: the factor {factor} must be finite and non-zero"
            )));
        }
        if (self.arcsine.is_some() || self.params.double_angles == 0)
            && factor != self.params.factor
        {
            // The parameters' factor is built into the last polynomial: evaluate onto the scale
            // `target · factor / built-in`, then record `target` (the same words then read as
            // `factor · ε`), exactly and at no cost.
            let ratio = factor / self.params.factor;
            if ratio <= 0.0 {
                return Err(Error::InvalidInput(format!(
                    "`{OP}`: the factor {factor} must have the sign of the built-in {}",
                    self.params.factor
                )));
            }
            let mut y = self.evaluate(eval, ct, target_scale * ratio)?;
            y.scale = target_scale;
            return Ok(y);
        }
        eval.check(OP, ct)?;
        crate::ckks::encoder::check_scale(OP, target_scale)?;
        let depth = self.depth();
        if ct.level() < depth {
            return Err(Error::LevelUnderflow {
                op: OP,
                level: ct.level(),
                needed: depth,
            });
        }
        let plan = self.plan(eval, ct.level(), target_scale, factor)?;
        let r = self.params.double_angles;
        let c = factor / (2.0 * PI);
        let mut y = if self.params.normalized_input {
            // w = u − 1/(4(K + 1/4)), the even cosine's variable: a constant, no level.
            let mut w = ct.try_clone()?;
            eval.add_const_assign(&mut w, -0.25 / self.input_divisor())?;
            eval.evaluate_polynomial(&w, &self.cosine, plan.scales[0])?
        } else {
            eval.evaluate_polynomial(ct, &self.cosine, plan.scales[0])?
        };
        for i in 1..=r {
            let mut z = eval.square_relin_rescale(&y)?;
            if i == r && self.arcsine.is_none() {
                // Value 2y²·|c| recorded at `target_scale`: z's scale is |c|·target_scale.
                eval.mul_int_assign(&mut z, if c < 0.0 { -2 } else { 2 })?;
                crate::ckks::functions::settle_scale(
                    OP,
                    &mut z,
                    c.abs() * target_scale,
                    target_scale,
                )?;
                eval.add_const_assign(&mut z, -c)?;
            } else {
                eval.mul_int_assign(&mut z, 2)?;
                crate::ckks::functions::settle_scale(OP, &mut z, plan.scales[i], plan.scales[i])?;
                eval.add_const_assign(&mut z, -1.0)?;
            }
            y = z;
        }
        if let Some((q, a)) = &self.arcsine {
            // x = sin(2πt) at scale Δ/a is u = x/a at scale Δ.
            crate::ckks::functions::settle_scale(OP, &mut y, plan.scales[r], plan.scales[r] * a)?;
            y = eval.evaluate_polynomial(&y, q, target_scale)?;
        }
        Ok(y)
    }

    /// The scales, planned backwards from `target_scale`: `scales[i]` is that of `y_i`
    /// (`scales[0]` the cosine polynomial's target). Checks that every scale, and every square
    /// before its rescaling, fits its level.
    fn plan(&self, eval: &Evaluator, level: usize, target_scale: f64, factor: f64) -> Result<Plan> {
        let r = self.params.double_angles;
        let q_primes = eval.context().params().q_primes();
        let delta = eval.context().params().default_scale();
        let c = factor / (2.0 * PI);
        // The level of y_0, then y_i at level_0 − i.
        let level0 = level - self.cosine.depth();
        let mut scales = vec![0.0; r + 1];
        // y_r: the input of the arcsine (x at Δ/a, read as u at Δ), or the output.
        scales[r] = match &self.arcsine {
            Some((_, a)) => delta / a,
            None => target_scale,
        };
        for i in (1..=r).rev() {
            // y_i = 2·y_(i−1)² − 1, the square rescaled by the prime of level level0 − i + 1.
            let q = q_primes[level0 - i + 1] as f64;
            let squared = if i == r && self.arcsine.is_none() {
                c.abs() * target_scale
            } else {
                scales[i]
            };
            scales[i - 1] = (squared * q).sqrt();
            crate::ckks::encoder::check_scale(OP, scales[i - 1])?;
            eval.check_fits(OP, scales[i - 1], level0 - i + 1)?;
            eval.check_fits(OP, squared * q, level0 - i + 1)?;
            eval.check_fits(OP, scales[i], level0 - i)?;
        }
        Ok(Plan { scales })
    }
}

/// The planned scales of [`EvalMod::evaluate`].
struct Plan {
    scales: Vec<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn make(k: usize, degree: usize, r: usize, arcsine: Option<usize>, eps: f64) -> EvalMod {
        EvalMod::new(EvalModParams {
            k,
            degree,
            double_angles: r,
            arcsine_degree: arcsine,
            eps_max: eps,
            ..EvalModParams::default()
        })
        .unwrap()
    }

    /// The table of `EvalMod`'s docs (run with `--nocapture` to see it).
    #[test]
    fn approximation_errors_of_the_documented_choices() {
        let cases = [
            (16, 30, 3, None, -5, -12.0, -31.0),
            (16, 30, 3, None, -6, -15.0, -31.0),
            (16, 30, 3, Some(7), -5, -29.0, -31.0),
            (16, 30, 3, Some(3), -6, -25.5, -31.0),
            (8, 15, 3, None, -6, -13.5, -17.0),
            (8, 31, 2, None, -6, -15.0, -33.0),
            (8, 31, 2, Some(3), -6, -25.5, -33.0),
            (4, 15, 2, Some(3), -6, -16.5, -17.0),
        ];
        for (k, d, r, arc, log_eps, bound, fit_bound) in cases {
            let m = make(k, d, r, arc, 2f64.powi(log_eps));
            eprintln!(
                "K = {k}, d = {d}, r = {r}, arcsine {arc:?}, eps_max 2^{log_eps}: depth {}, \
                 approximation error 2^{:.1}, cosine fit 2^{:.1}",
                m.depth(),
                m.approximation_error().log2(),
                m.cosine_fit_error().log2()
            );
            assert!(m.approximation_error() < 2f64.powf(bound), "{k} {d} {r}");
            assert!(m.cosine_fit_error() < 2f64.powf(fit_bound), "{k} {d} {r}");
        }
    }

    #[test]
    fn the_default_is_the_bootstrapping_choice() {
        let m = EvalMod::new(EvalModParams::default()).unwrap();
        assert_eq!(m.depth(), 9);
        // The sine's own error (2π)²ε³/6 at ε = 2^−5 dominates.
        let sine = (2.0 * PI).powi(2) * 2f64.powi(-15) / 6.0;
        assert!((m.approximation_error() / sine - 1.0).abs() < 0.05);
        let normalized = EvalMod::new(EvalModParams {
            normalized_input: true,
            ..EvalModParams::default()
        })
        .unwrap();
        assert_eq!(normalized.depth(), 8);
        for t in [-15.02, -3.0, 0.011, 7.03] {
            assert!((m.evaluate_plain(t) - normalized.evaluate_plain(t)).abs() < 1e-9);
        }
    }

    #[test]
    fn factor_sign_and_no_double_angle() {
        let base = make(8, 15, 2, None, 2f64.powi(-6));
        let neg = EvalMod::new(EvalModParams {
            factor: -3.5,
            ..base.params().clone()
        })
        .unwrap();
        for t in [2.01, -4.0 - 0.013, 0.005] {
            assert!((neg.evaluate_plain(t) + 3.5 * base.evaluate_plain(t)).abs() < 1e-12);
        }
        // r = 0: sin(2πt) interpolated directly (K = 2 needs a moderate degree).
        let direct = make(2, 40, 0, None, 2f64.powi(-6));
        assert_eq!(direct.depth(), 6 + 1);
        assert!(direct.approximation_error() < 2f64.powi(-15));
        let arc = make(2, 40, 0, Some(3), 2f64.powi(-6));
        assert!(arc.approximation_error() < 2f64.powi(-20));
    }

    #[test]
    fn bad_parameters_are_invalid_input() {
        let base = EvalModParams::default();
        for p in [
            EvalModParams {
                k: 0,
                ..base.clone()
            },
            EvalModParams {
                k: 1025,
                ..base.clone()
            },
            EvalModParams {
                degree: 0,
                ..base.clone()
            },
            EvalModParams {
                degree: 4097,
                ..base.clone()
            },
            EvalModParams {
                arcsine_degree: Some(4097),
                ..base.clone()
            },
            EvalModParams {
                double_angles: 17,
                ..base.clone()
            },
            EvalModParams {
                arcsine_degree: Some(4),
                ..base.clone()
            },
            EvalModParams {
                arcsine_degree: Some(0),
                ..base.clone()
            },
            EvalModParams {
                factor: 0.0,
                ..base.clone()
            },
            EvalModParams {
                factor: f64::NAN,
                ..base.clone()
            },
            EvalModParams {
                eps_max: 0.3,
                ..base.clone()
            },
            EvalModParams {
                eps_max: 0.0,
                ..base.clone()
            },
        ] {
            assert!(
                matches!(EvalMod::new(p.clone()), Err(Error::InvalidInput(_))),
                "{p:?}"
            );
        }
    }
}
