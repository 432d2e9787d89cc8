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
//!
//! # Homomorphic evaluation
//!
//! [`Evaluator::evaluate_polynomial`] computes `p(x)` in every slot of a ciphertext;
//! [`Evaluator::evaluate_polynomials`] several polynomials of one input, sharing the powers they
//! have in common.
//!
//! ```
//! use rhea::ckks::{CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator, Polynomial};
//! use rhea::params::CkksParametersLiteral;
//! use rhea::Device;
//!
//! // 10 levels of 40 bits, Δ = 2^40 (a test set: too small a ring for 128-bit security).
//! let params = CkksParametersLiteral::test_n13_levels10_insecure().build()?;
//! let ctx = CkksContext::new(&params, Device::Cpu)?;
//! let mut keygen = KeyGenerator::new(&ctx)?;
//! let sk = keygen.secret_key()?;
//! let eval = Evaluator::new(&ctx).with_relinearization_key(keygen.relinearization_key(&sk)?)?;
//! let (encoder, encryptor) = (Encoder::new(&ctx)?, Encryptor::with_secret_key(&ctx, &sk)?);
//!
//! let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
//! let p = Polynomial::interpolate(sigmoid, -8.0, 8.0, 15)?.polynomial;
//! assert_eq!(p.depth(), 5); // ⌈log2 16⌉ = 4, plus the map of [−8, 8] onto [−1, 1]
//!
//! let xs = [-7.5, -2.0, 0.0, 0.5, 6.0];
//! let ct = encryptor.encrypt(&encoder.encode(&xs)?)?;
//! let delta = params.default_scale();
//! let out = eval.evaluate_polynomial(&ct, &p, delta)?;
//! assert_eq!(ct.level() - out.level(), p.depth()); // exactly the documented depth
//! assert_eq!(out.scale(), delta); // exactly the target scale
//!
//! let got = encoder.decode(&Decryptor::new(&ctx, &sk)?.decrypt(&out)?)?;
//! for (g, &x) in got.iter().zip(&xs) {
//!     assert!((g - p.evaluate(x)).abs() < 1e-6); // the HE error, against p in f64
//! }
//! # Ok::<(), rhea::Error>(())
//! ```
//!
//! **Algorithm** (baby-step/giant-step, Paterson–Stockmeyer style, as in Bossuat, Mouchet,
//! Troncoso-Pastoriza and Hubaux, Eurocrypt 2021, Alg. 2). Write `B_i` for `T_i(y)` or `x^i`.
//! The *baby steps* `B_1 … B_(2^l)` and the *giant steps* `B_(2^j)`, `j > l`, are computed
//! once: `B_i` for `2^(k−1) < i ≤ 2^k` as `x^m·x^n` or `T_i = 2·T_m·T_n − T_(m−n)` with
//! `m = 2^(k−1)`, `n = i − m`, at level `L − k` (`L` the level of `B_1`). The polynomial is
//! split recursively as `p = q·B_(2^j) + r` (`2^j ≤ deg p < 2^(j+1)`; in the Chebyshev basis by
//! `T_(2^j + i) = 2·T_(2^j)·T_i − T_(2^j − i)`) until the parts are *leaves* `Σ c_i B_i` of
//! degree at most `2^l`, evaluated by constant multiplications only. The leading chain
//! (`q`, the quotient of `q`, …) of a degree `2^k − 1` polynomial has no level to spare, so its
//! leaves are split further, down to degree 1 or 2. The baby-step bound `l` is the one that
//! needs the fewest relinearisations (then products), counted for every `l` before any
//! ciphertext operation. Odd and even polynomials (in either basis) read only the powers of
//! their parity, which are computed from powers of their parity and powers of two. Several
//! polynomials of one input in one basis and interval share `B_1` and every power; each is
//! planned as if alone, so its result is the same, word for word. Only mode-independent
//! operations are used: the words are the same in auto-rescale and manual mode.
//!
//! **Depth**: [`Polynomial::depth`] `= ⌈log2(d + 1)⌉` levels for degree `d ≥ 1`, plus one when
//! the interval is not `[−1, 1]` in the Chebyshev basis (the map `y = αx + β` is applied to the
//! input first: `α` encoded at the scale `q_L`, `β` added, one rescaling), 0 for a constant.
//! The output is at `ct.level() − depth`, whatever the evaluator's rescaling mode.
//!
//! **Exact scales.** The output's recorded scale is `target_scale` exactly, and it is the true
//! scale. Every node's target `(level ℓ, scale S)` is chosen top-down: a node is first produced
//! *before its last rescaling*, at level `ℓ + 1` and scale `P = S·q_(ℓ+1)`, then relinearised
//! and rescaled once. A leaf multiplies each `B_i` by the integer `round(c_i·P / s_i)` (`s_i`
//! the scale of `B_i`) and sums: the rounding is an absolute error of at most `s_i / (2P)`
//! (about `2^-41`) on `c_i`, not a scale error. A split `q·B_(2^j) + r` evaluates `q` to
//! `(ℓ + 1, P / s_(2^j))`, so that its product with `B_(2^j)` has scale `P`, and adds `r`'s
//! leaf at the same `(ℓ + 1, P)` before the one relinearisation and rescaling of the sum. In
//! `T_i = 2·T_m·T_n − T_(m−n)`, `T_(m−n)` is multiplied by the integer
//! `round(s_m·s_n / s_(m−n))` to land on the product's scale. Additions thus always see equal
//! scales, and no level is ever spent to align them.
//!
//! **Inputs.** Any level `≥ depth`, any scale up to about the primes (typically `Δ`): the
//! interval map lands `y` on the scale `Δ` exactly (`α` encoded at `Δ·q_L / s_x`), and a power
//! whose scale would fall below `Δ/2` (squares of a small scale over the primes shrink towards 1)
//! is multiplied by an integer `k` before its rescaling, its recorded scale by `k`: back to
//! about `Δ`, without a level. At `Δ ≈ q` nothing of the kind happens. Inputs at scales well
//! above the primes make the powers' scales grow instead, until a typed
//! [`Error::ScaleOverflow`](crate::Error::ScaleOverflow).
//!
//! **Cost.** One ciphertext product (a tensor) per computed power `B_i`, `i ≥ 2`, and one per
//! split whose quotient is not a constant ([`Polynomial::ciphertext_products`]). Each power is
//! relinearised and rescaled at once (it is a factor of later products); the giant-step
//! products are summed before their one relinearisation and rescaling (a remainder's products
//! go into its parent's sum), so there are fewer relinearisations
//! ([`Polynomial::relinearizations`], what
//! [`CkksContext::keyswitches`](crate::ckks::CkksContext::keyswitches) then counts). The
//! constant multiplications of the leaves are multiply-adds on the polynomials, with no copy
//! per term. A dense degree-63 polynomial in the Chebyshev basis takes 18 products (9 powers
//! with `l = 3`, 9 giant steps) and 15 relinearisations, an odd one 17 and 14. Coefficients
//! that are zero cost nothing: an interpolated odd function has even coefficients of about
//! `1e-16` from floating-point rounding, which
//! [`Polynomial::truncated`] removes.
//!
//! [`Evaluator::evaluate_polynomial`]: crate::ckks::Evaluator::evaluate_polynomial
//! [`Evaluator::evaluate_polynomials`]: crate::ckks::Evaluator::evaluate_polynomials

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

/// A real polynomial in the monomial or Chebyshev basis, evaluated on ciphertexts by
/// [`Evaluator::evaluate_polynomial`](crate::ckks::Evaluator::evaluate_polynomial) at depth
/// [`Polynomial::depth`] with [`Polynomial::ciphertext_products`] products, the output landing
/// exactly on the target scale.
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

    /// The ciphertext products (each with one relinearisation and one rescaling)
    /// [`Evaluator::evaluate_polynomial`](crate::ckks::Evaluator::evaluate_polynomial) performs
    /// for this polynomial alone: one per computed power and one per giant-step product (see
    /// the module docs). 0 for degree 0 or 1.
    pub fn ciphertext_products(&self) -> usize {
        if self.degree() == 0 {
            return 0;
        }
        let chebyshev = matches!(self.basis, PolyBasis::Chebyshev { .. });
        plan::Plan::new(&self.coeffs, chebyshev).products(chebyshev)
    }

    /// The relinearisations (key switchings)
    /// [`Evaluator::evaluate_polynomial`](crate::ckks::Evaluator::evaluate_polynomial) performs
    /// for this polynomial alone: one per computed power, and one per sum of giant-step
    /// products (a remainder's products are summed into its parent's before the one
    /// relinearisation), so at most [`Polynomial::ciphertext_products`].
    pub fn relinearizations(&self) -> usize {
        if self.degree() == 0 {
            return 0;
        }
        let chebyshev = matches!(self.basis, PolyBasis::Chebyshev { .. });
        plan::Plan::new(&self.coeffs, chebyshev).relinearizations(chebyshev)
    }

    /// A copy with every coefficient of magnitude at most `tol` set to zero: removes the
    /// rounding noise (about `1e-16`) an interpolation leaves on the coefficients of the wrong
    /// parity, so that an odd or even function is evaluated with the powers of its parity
    /// only, and tiny high-degree terms.
    ///
    /// Errors: [`Error::InvalidInput`] for a negative or non-finite `tol`.
    pub fn truncated(&self, tol: f64) -> Result<Self> {
        if !(tol.is_finite() && tol >= 0.0) {
            return Err(Error::InvalidInput(format!(
                "Polynomial::truncated: the tolerance {tol} must be finite and non-negative"
            )));
        }
        let coeffs = self
            .coeffs
            .iter()
            .map(|&c| if c.abs() <= tol { 0.0 } else { c })
            .collect();
        Ok(Self {
            basis: self.basis,
            coeffs,
        })
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
    fn truncation_removes_rounding_noise_and_the_powers_it_cost() {
        let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
        let p = Polynomial::interpolate(sigmoid, -8.0, 8.0, 63)
            .unwrap()
            .polynomial;
        assert_eq!(p.parity(), Parity::Mixed);
        let t = p.truncated(1e-14).unwrap();
        // The constant 1/2 and the odd terms are kept, the noise on the even ones is gone.
        assert_eq!(t.coefficients()[0], 0.5);
        assert!(t.coefficients()[2..].iter().step_by(2).all(|&c| c == 0.0));
        assert_eq!(
            t.coefficients()[1..],
            p.coefficients()[1..]
                .iter()
                .enumerate()
                .map(|(i, &c)| if i % 2 == 0 { c } else { 0.0 })
                .collect::<Vec<_>>()[..]
        );
        assert_eq!((t.degree(), t.depth()), (63, 7));
        assert!(t.ciphertext_products() < p.ciphertext_products());
        assert!((t.evaluate(3.0) - p.evaluate(3.0)).abs() < 1e-13);
        assert!(p.truncated(-1.0).is_err() && p.truncated(f64::NAN).is_err());
    }

    #[test]
    fn depth_and_products() {
        let c = |d: usize| (0..=d).map(|i| 1.0 / (1.0 + i as f64)).collect::<Vec<_>>();
        for (d, depth) in [
            (0, 0),
            (1, 1),
            (2, 2),
            (3, 2),
            (4, 3),
            (7, 3),
            (8, 4),
            (63, 6),
        ] {
            assert_eq!(
                Polynomial::monomial(c(d)).unwrap().depth(),
                depth,
                "degree {d}"
            );
            let mapped = Polynomial::chebyshev(c(d), 0.0, 2.0).unwrap();
            assert_eq!(mapped.depth(), depth + usize::from(d > 0), "degree {d}");
        }
        assert_eq!(Polynomial::monomial(c(1)).unwrap().ciphertext_products(), 0);
        assert_eq!(Polynomial::monomial(c(2)).unwrap().ciphertext_products(), 1);
        // x^3 = x^2·x, then (c3·x + c2)·x^2 + (c1·x + c0): two products, two relinearisations.
        let cubic = Polynomial::monomial(c(3)).unwrap();
        assert_eq!(
            (cubic.ciphertext_products(), cubic.relinearizations()),
            (2, 2)
        );
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
