//! Smooth functions (sigmoid, exp, tanh, or any `Fn(f64) -> f64`) by Chebyshev interpolation
//! on a user interval.

use super::check_levels;
use crate::ckks::{ChebyshevFit, Ciphertext, Evaluator, Polynomial};
use crate::error::{Error, Result};

/// A smooth function on `[a, b]` by its Chebyshev interpolant of a chosen degree `d`.
///
/// **Depth**: that of the polynomial evaluator, `⌈log2(d + 1)⌉`, plus 1 for the map of
/// `[a, b]` onto `[−1, 1]` unless `[a, b] = [−1, 1]` (e.g. degree 63 on `[−8, 8]`: 7).
///
/// **Precision**: the interpolation error [`SmoothFunction::fit_error`] (measured on a grid of
/// `16(d + 1)` points) is the approximation error; the homomorphic evaluation adds its own,
/// measured against [`SmoothFunction::evaluate_plain`] in the tests (N = 2^13, Δ = 2^40,
/// inputs uniform on `[a, b]`):
///
/// | function | `[a, b]` | `d` | depth | fit error | HE vs `f64` |
/// |---|---|---|---|---|---|
/// | sigmoid | `[−8, 8]` | 63 | 7 | `2^−36.0` | 25.4 bits |
/// | exp | `[−2, 2]` | 15 | 5 | `2^−43.0` | 23.7 bits |
/// | tanh | `[−4, 4]` | 31 | 6 | `2^−17.3` | 25.3 bits |
/// | tanh | `[−1, 1]` | 15 | 4 (no interval map) | `2^−28.3` | 26.0 bits |
///
/// ```
/// use rhea::ckks::functions::SmoothFunction;
///
/// let sigmoid = SmoothFunction::sigmoid(-8.0, 8.0, 63)?;
/// assert_eq!(sigmoid.depth(), 7); // ⌈log2 64⌉ + 1 for the map of [−8, 8]
/// assert!(sigmoid.fit_error() < 1e-10);
/// assert!((sigmoid.evaluate_plain(0.0) - 0.5).abs() < 1e-10);
/// # Ok::<(), rhea::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct SmoothFunction {
    name: &'static str,
    fit: ChebyshevFit,
}

impl SmoothFunction {
    /// The logistic sigmoid `1/(1 + e^{−x})` on `[a, b]` at degree `degree`.
    ///
    /// Errors: [`Error::InvalidInput`] for an interval that is not finite with `a < b`, or a
    /// degree of 0 or above 2^16 (as [`Polynomial::interpolate`]).
    pub fn sigmoid(a: f64, b: f64, degree: usize) -> Result<Self> {
        Self::new("sigmoid", |x| 1.0 / (1.0 + (-x).exp()), a, b, degree)
    }

    /// `e^x` on `[a, b]` at degree `degree` (errors as [`SmoothFunction::sigmoid`]).
    pub fn exp(a: f64, b: f64, degree: usize) -> Result<Self> {
        Self::new("exp", f64::exp, a, b, degree)
    }

    /// `tanh x` on `[a, b]` at degree `degree` (errors as [`SmoothFunction::sigmoid`]).
    pub fn tanh(a: f64, b: f64, degree: usize) -> Result<Self> {
        Self::new("tanh", f64::tanh, a, b, degree)
    }

    /// Any function finite on `[a, b]`, named `name` (errors as [`SmoothFunction::sigmoid`],
    /// and [`Error::InvalidInput`] where `f` is not finite at an interpolation node).
    pub fn new(
        name: &'static str,
        f: impl Fn(f64) -> f64,
        a: f64,
        b: f64,
        degree: usize,
    ) -> Result<Self> {
        if degree == 0 {
            return Err(Error::InvalidInput(format!(
                "SmoothFunction `{name}`: degree 0 is a constant; use degree 1 or more"
            )));
        }
        Ok(Self {
            name,
            fit: Polynomial::interpolate(f, a, b, degree)?,
        })
    }

    /// The function's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The interpolant (Chebyshev basis of `[a, b]`).
    pub fn polynomial(&self) -> &Polynomial {
        &self.fit.polynomial
    }

    /// `max |f(x) − p(x)|` on `[a, b]`: the approximation error.
    pub fn fit_error(&self) -> f64 {
        self.fit.max_error
    }

    /// The levels [`SmoothFunction::evaluate`] consumes.
    pub fn depth(&self) -> usize {
        self.fit.polynomial.depth()
    }

    /// The interpolant in `f64`: the reference of [`SmoothFunction::evaluate`].
    pub fn evaluate_plain(&self, x: f64) -> f64 {
        self.fit.polynomial.evaluate(x)
    }

    /// `p(x)` slot-wise (accurate for slots in `[a, b]`), at level `ct.level() − depth()` and
    /// exactly `target_scale`.
    ///
    /// Errors: [`Error::LevelUnderflow`] with fewer than [`SmoothFunction::depth`] levels,
    /// [`Error::InvalidScale`] for a bad target scale, and the evaluator's errors.
    pub fn evaluate(
        &self,
        eval: &Evaluator,
        ct: &Ciphertext,
        target_scale: f64,
    ) -> Result<Ciphertext> {
        const OP: &str = "SmoothFunction::evaluate";
        crate::ckks::encoder::check_scale(OP, target_scale)?;
        check_levels(OP, ct, self.depth())?;
        eval.evaluate_polynomial(ct, &self.fit.polynomial, target_scale)
    }
}
