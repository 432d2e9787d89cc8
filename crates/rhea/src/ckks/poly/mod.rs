//! Polynomials over the reals, in the monomial or the Chebyshev basis, for homomorphic
//! evaluation on CKKS ciphertexts.
//!
//! A [`Polynomial`] is its coefficients and its basis: monomial (`Σ c_i x^i`) or Chebyshev on an
//! interval `[a, b]` (`Σ c_i T_i(y)` with `y = (2x − a − b)/(b − a)` the affine map of `[a, b]`
//! onto `[−1, 1]`). [`Polynomial::interpolate`] fits any function at the Chebyshev nodes of
//! `[a, b]` and reports the fit error; [`Polynomial::evaluate`] is the plaintext reference of the
//! homomorphic evaluation.
//!
//! ```
//! use rhea::ckks::Polynomial;
//!
//! let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
//! let fit = Polynomial::interpolate(sigmoid, -8.0, 8.0, 63)?;
//! assert!(fit.max_error < 1e-6);
//! assert!((fit.polynomial.evaluate(1.5) - sigmoid(1.5)).abs() <= fit.max_error);
//! assert_eq!(fit.polynomial.degree(), 63);
//! # Ok::<(), rhea::Error>(())
//! ```

use std::f64::consts::PI;

use crate::error::{Error, Result};

mod eval;
mod plan;

/// The basis a [`Polynomial`]'s coefficients are given in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PolyBasis {
    /// `Σ c_i x^i`.
    Monomial,
    /// `Σ c_i T_i(y)`, `y = (2x − a − b)/(b − a)`: Chebyshev polynomials of the first kind on
    /// `[a, b]`.
    Chebyshev {
        /// The lower end of the interval.
        a: f64,
        /// The upper end of the interval.
        b: f64,
    },
}

/// Whether a polynomial has only even or only odd terms (in either basis: `T_i` has the parity
/// of `i`, so on a symmetric interval the parity of the coefficients is that of the function).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parity {
    /// Only even-index coefficients are non-zero.
    Even,
    /// Only odd-index coefficients are non-zero.
    Odd,
    /// Both.
    Mixed,
}

/// A real polynomial in the monomial or Chebyshev basis (see the [module docs](self)).
#[derive(Clone, Debug, PartialEq)]
pub struct Polynomial {
    basis: PolyBasis,
    coeffs: Vec<f64>,
}

/// The result of [`Polynomial::interpolate`]: the Chebyshev interpolant and its error.
#[derive(Clone, Debug, PartialEq)]
pub struct ChebyshevFit {
    /// The interpolant, in the Chebyshev basis of the interval.
    pub polynomial: Polynomial,
    /// `max |f(x) − p(x)|` over a dense grid of the interval (`16·(degree + 1)` points plus the
    /// ends): the approximation error, separate from the error of evaluating `p` homomorphically.
    pub max_error: f64,
}

impl Polynomial {
    /// `Σ coeffs[i]·x^i`.
    ///
    /// Errors: [`Error::InvalidInput`] for no coefficients or a non-finite one.
    pub fn monomial(coeffs: Vec<f64>) -> Result<Self> {
        check_coeffs(&coeffs)?;
        Ok(Self {
            basis: PolyBasis::Monomial,
            coeffs,
        })
    }

    /// `Σ coeffs[i]·T_i(y)` on `[a, b]`.
    ///
    /// Errors: [`Error::InvalidInput`] for no coefficients, a non-finite one, or an interval that
    /// is not finite with `a < b`.
    pub fn chebyshev(coeffs: Vec<f64>, a: f64, b: f64) -> Result<Self> {
        check_coeffs(&coeffs)?;
        check_interval(a, b)?;
        Ok(Self {
            basis: PolyBasis::Chebyshev { a, b },
            coeffs,
        })
    }

    /// The Chebyshev interpolant of `f` of degree `degree` on `[a, b]` (at the `degree + 1`
    /// Chebyshev nodes of the first kind), with its maximal error on the interval.
    ///
    /// Errors: [`Error::InvalidInput`] for a bad interval, a degree above 2^16, or an `f` that is
    /// not finite at a node.
    pub fn interpolate(
        f: impl Fn(f64) -> f64,
        a: f64,
        b: f64,
        degree: usize,
    ) -> Result<ChebyshevFit> {
        check_interval(a, b)?;
        if degree > 1 << 16 {
            return Err(Error::InvalidInput(format!(
                "Polynomial::interpolate: degree {degree} is above 65536"
            )));
        }
        let m = degree + 1;
        let (mid, half) = ((a + b) / 2.0, (b - a) / 2.0);
        let values = (0..m)
            .map(|k| {
                let y = (PI * (k as f64 + 0.5) / m as f64).cos();
                let v = f(mid + half * y);
                if v.is_finite() {
                    Ok(v)
                } else {
                    Err(Error::InvalidInput(format!(
                        "Polynomial::interpolate: f({}) is not finite",
                        mid + half * y
                    )))
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let coeffs: Vec<f64> = (0..m)
            .map(|j| {
                let s: f64 = values
                    .iter()
                    .enumerate()
                    .map(|(k, v)| v * (PI * j as f64 * (k as f64 + 0.5) / m as f64).cos())
                    .sum();
                let c = 2.0 * s / m as f64;
                if j == 0 {
                    c / 2.0
                } else {
                    c
                }
            })
            .collect();
        let polynomial = Self::chebyshev(coeffs, a, b)?;
        let grid = 16 * m;
        let max_error = (0..=grid)
            .map(|i| {
                let x = a + (b - a) * i as f64 / grid as f64;
                (f(x) - polynomial.evaluate(x)).abs()
            })
            .fold(0.0, f64::max);
        Ok(ChebyshevFit {
            polynomial,
            max_error,
        })
    }

    /// The basis.
    pub fn basis(&self) -> PolyBasis {
        self.basis
    }

    /// The coefficients, lowest degree first.
    pub fn coefficients(&self) -> &[f64] {
        &self.coeffs
    }

    /// The degree: the index of the last non-zero coefficient (0 for a constant).
    pub fn degree(&self) -> usize {
        self.coeffs.iter().rposition(|&c| c != 0.0).unwrap_or(0)
    }

    /// The levels [`Evaluator::evaluate_polynomial`](crate::ckks::Evaluator::evaluate_polynomial)
    /// consumes: `⌈log2(degree + 1)⌉`, plus 1 when [`Polynomial::needs_interval_map`] (the
    /// map onto `[−1, 1]` is applied to the input first); 0 for a constant.
    pub fn depth(&self) -> usize {
        let d = self.degree();
        if d == 0 {
            return 0;
        }
        plan::bit_len(d) + usize::from(self.needs_interval_map())
    }

    /// Whether only even or only odd coefficients are non-zero.
    pub fn parity(&self) -> Parity {
        let even = self.coeffs.iter().step_by(2).any(|&c| c != 0.0);
        let odd = self.coeffs.iter().skip(1).step_by(2).any(|&c| c != 0.0);
        match (even, odd) {
            (true, false) => Parity::Even,
            (false, true) => Parity::Odd,
            // All zero counts as even: `0` is an even function.
            (false, false) => Parity::Even,
            (true, true) => Parity::Mixed,
        }
    }

    /// Whether evaluating in the Chebyshev basis needs the affine map `x ↦ (2x − a − b)/(b − a)`
    /// as a separate multiplication (false for the monomial basis and for `[−1, 1]`).
    pub fn needs_interval_map(&self) -> bool {
        match self.basis {
            PolyBasis::Monomial => false,
            PolyBasis::Chebyshev { a, b } => a != -1.0 || b != 1.0,
        }
    }

    /// The value at `x`, in `f64` (Horner's rule, or Clenshaw's recurrence in the Chebyshev
    /// basis): the reference the homomorphic evaluation is measured against.
    pub fn evaluate(&self, x: f64) -> f64 {
        match self.basis {
            PolyBasis::Monomial => self.coeffs.iter().rev().fold(0.0, |acc, &c| acc * x + c),
            PolyBasis::Chebyshev { a, b } => {
                let y = (2.0 * x - a - b) / (b - a);
                let (mut b1, mut b2) = (0.0, 0.0);
                for &c in self.coeffs.iter().skip(1).rev() {
                    let b0 = 2.0 * y * b1 - b2 + c;
                    b2 = b1;
                    b1 = b0;
                }
                y * b1 - b2 + self.coeffs[0]
            }
        }
    }
}

fn check_coeffs(coeffs: &[f64]) -> Result<()> {
    if coeffs.is_empty() {
        return Err(Error::InvalidInput(
            "a polynomial needs at least one coefficient".into(),
        ));
    }
    if let Some(i) = coeffs.iter().position(|c| !c.is_finite()) {
        return Err(Error::InvalidInput(format!(
            "polynomial coefficient {i} is not finite ({})",
            coeffs[i]
        )));
    }
    Ok(())
}

fn check_interval(a: f64, b: f64) -> Result<()> {
    if !(a.is_finite() && b.is_finite() && a < b) {
        return Err(Error::InvalidInput(format!(
            "the interval [{a}, {b}] must be finite with a < b"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chebyshev_evaluation_matches_the_recurrence() {
        // T_0..T_5 at y by the three-term recurrence, against Clenshaw, on [2, 6].
        let (a, b) = (2.0, 6.0);
        let coeffs = vec![0.5, -1.25, 0.75, 2.0, -0.125, 0.3];
        let p = Polynomial::chebyshev(coeffs.clone(), a, b).unwrap();
        for &x in &[2.0, 2.7, 4.0, 5.3, 6.0] {
            let y = (2.0 * x - a - b) / (b - a);
            let mut t = vec![1.0, y];
            for i in 2..coeffs.len() {
                t.push(2.0 * y * t[i - 1] - t[i - 2]);
            }
            let want: f64 = coeffs.iter().zip(&t).map(|(c, t)| c * t).sum();
            assert!((p.evaluate(x) - want).abs() < 1e-12, "x = {x}");
        }
    }

    #[test]
    fn monomial_evaluation_and_parity() {
        let p = Polynomial::monomial(vec![0.0, 1.5, 0.0, -0.5]).unwrap();
        assert_eq!(p.evaluate(2.0), 1.5 * 2.0 - 0.5 * 8.0);
        assert_eq!(p.parity(), Parity::Odd);
        assert_eq!(p.degree(), 3);
        assert!(!p.needs_interval_map());
        let q = Polynomial::monomial(vec![1.0, 0.0, 2.0, 0.0]).unwrap();
        assert_eq!(q.parity(), Parity::Even);
        assert_eq!(q.degree(), 2);
    }

    #[test]
    fn interpolation_is_exact_on_polynomials_and_reports_its_error() {
        // A cubic is reproduced exactly by a degree-3 interpolant.
        let f = |x: f64| 1.0 - 2.0 * x + 0.5 * x * x * x;
        let fit = Polynomial::interpolate(f, -3.0, 1.0, 3).unwrap();
        assert!(fit.max_error < 1e-12, "{}", fit.max_error);
        // exp on [-1, 1] at degree 10: error about 1/(2^10 · 11!) ≈ 2e-11.
        let fit = Polynomial::interpolate(f64::exp, -1.0, 1.0, 10).unwrap();
        assert!(
            fit.max_error < 1e-9 && fit.max_error > 1e-14,
            "{}",
            fit.max_error
        );
        assert!(!fit.polynomial.needs_interval_map());
        // A degree too low for the function shows in the error.
        let coarse = Polynomial::interpolate(f64::exp, -1.0, 1.0, 2).unwrap();
        assert!(coarse.max_error > 1e-3);
    }

    #[test]
    fn bad_input_is_a_typed_error() {
        assert!(Polynomial::monomial(vec![]).is_err());
        assert!(Polynomial::monomial(vec![f64::NAN]).is_err());
        assert!(Polynomial::chebyshev(vec![1.0], 1.0, 1.0).is_err());
        assert!(Polynomial::chebyshev(vec![1.0], 0.0, f64::INFINITY).is_err());
        assert!(Polynomial::interpolate(|x| 1.0 / x, -1.0, 1.0, 1).is_ok());
        assert!(Polynomial::interpolate(|_| f64::NAN, -1.0, 1.0, 4).is_err());
    }
}
