//! `rhea.ckks.functions`: approximations of non-polynomial functions (`Inverse`, `InvSqrt`,
//! `Sqrt`, `Sign` with `relu` and `max`, and `SmoothFunction`: sigmoid, exp, tanh).
//!
//! Each has `evaluate(ev, ct, target_scale=None)` (homomorphic; the result at exactly
//! `target_scale`, by default the input's scale), `evaluate_plain(x)` (the floating-point
//! reference) and `depth` (the levels it consumes).

use pyo3::prelude::*;
use rhea::ckks::functions::{
    InvSqrt as RInvSqrt, Inverse as RInverse, Sign as RSign, SmoothFunction as RSmooth,
    Sqrt as RSqrt,
};
use rhea::ckks::{Ciphertext as RCiphertext, Evaluator as REvaluator};

use crate::ckks_eval::{Ciphertext, Evaluator};
use crate::errors::{run, to_py};

/// Runs a homomorphic function of one ciphertext on `ev`.
fn apply(
    py: Python<'_>,
    ev: &Evaluator,
    ct: &Ciphertext,
    target_scale: Option<f64>,
    f: impl FnOnce(&REvaluator, &RCiphertext, f64) -> rhea::Result<RCiphertext> + Send,
) -> PyResult<Ciphertext> {
    let scale = target_scale.unwrap_or(ct.inner.scale());
    let (e, c) = (&ev.shared.ev, &ct.inner);
    let out = run(py, || f(e, c, scale))?;
    Ok(Ciphertext::new(out, Some(ev.shared.clone())))
}

/// ``1/x`` on ``[lo, hi]`` (``0 < lo < hi``) by Newton's iteration (Goldschmidt):
/// ``Inverse(lo, hi, iterations)`` or ``Inverse.with_precision(lo, hi, bits)``.
#[pyclass(module = "rhea.ckks.functions", frozen)]
pub struct Inverse {
    inner: RInverse,
}

#[pymethods]
impl Inverse {
    #[new]
    fn new(py: Python<'_>, lo: f64, hi: f64, iterations: usize) -> PyResult<Self> {
        Ok(Self {
            inner: RInverse::new(lo, hi, iterations).map_err(|e| to_py(py, e))?,
        })
    }
    /// The fewest iterations that reach ``precision_bits`` on ``[lo, hi]``.
    #[staticmethod]
    fn with_precision(py: Python<'_>, lo: f64, hi: f64, precision_bits: u32) -> PyResult<Self> {
        Ok(Self {
            inner: RInverse::with_precision(lo, hi, precision_bits).map_err(|e| to_py(py, e))?,
        })
    }
    /// The levels an evaluation consumes.
    #[getter]
    fn depth(&self) -> usize {
        self.inner.depth()
    }
    /// The floating-point reference.
    fn evaluate_plain(&self, x: f64) -> f64 {
        self.inner.evaluate_plain(x)
    }
    /// ``1/ct`` homomorphically.
    #[pyo3(signature = (ev, ct, target_scale = None))]
    fn evaluate(
        &self,
        py: Python<'_>,
        ev: &Evaluator,
        ct: PyRef<'_, Ciphertext>,
        target_scale: Option<f64>,
    ) -> PyResult<Ciphertext> {
        let f = &self.inner;
        apply(py, ev, &ct, target_scale, |e, c, s| f.evaluate(e, c, s))
    }
}

/// A Python class for a Newton-refined root function of `rhea::ckks::functions` (`InvSqrt`,
/// `Sqrt`: the same constructor and methods).
macro_rules! newton_root_class {
    ($name:ident, $rust:ty, $doc:literal, $eval_doc:literal) => {
        #[doc = $doc]
        #[pyclass(module = "rhea.ckks.functions", frozen)]
        pub struct $name {
            inner: $rust,
        }

        #[pymethods]
        impl $name {
            #[new]
            fn new(
                py: Python<'_>,
                lo: f64,
                hi: f64,
                guess_degree: usize,
                iterations: usize,
            ) -> PyResult<Self> {
                Ok(Self {
                    inner: <$rust>::new(lo, hi, guess_degree, iterations)
                        .map_err(|e| to_py(py, e))?,
                })
            }
            /// The levels an evaluation consumes.
            #[getter]
            fn depth(&self) -> usize {
                self.inner.depth()
            }
            /// The floating-point reference.
            fn evaluate_plain(&self, x: f64) -> f64 {
                self.inner.evaluate_plain(x)
            }
            #[doc = $eval_doc]
            #[pyo3(signature = (ev, ct, target_scale = None))]
            fn evaluate(
                &self,
                py: Python<'_>,
                ev: &Evaluator,
                ct: PyRef<'_, Ciphertext>,
                target_scale: Option<f64>,
            ) -> PyResult<Ciphertext> {
                let f = &self.inner;
                apply(py, ev, &ct, target_scale, |e, c, s| f.evaluate(e, c, s))
            }
        }
    };
}

newton_root_class!(
    InvSqrt,
    RInvSqrt,
    "``1/√x`` on ``[lo, hi]``: a polynomial first guess of ``guess_degree`` refined by\n\
     ``iterations`` Newton steps.",
    "``1/√ct`` homomorphically."
);
newton_root_class!(
    Sqrt,
    RSqrt,
    "``√x`` on ``[lo, hi]`` (as ``x · InvSqrt(x)``).",
    "``√ct`` homomorphically."
);

/// ``sign(x)`` within ``2^-precision_bits`` for ``gap ≤ |x| ≤ 1`` (a composite polynomial of
/// least depth), and ``relu`` and ``max`` built on it.
#[pyclass(module = "rhea.ckks.functions", frozen)]
pub struct Sign {
    inner: RSign,
}

#[pymethods]
impl Sign {
    #[new]
    fn new(py: Python<'_>, precision_bits: u32, gap: f64) -> PyResult<Self> {
        Ok(Self {
            inner: RSign::new(precision_bits, gap).map_err(|e| to_py(py, e))?,
        })
    }
    /// The levels ``sign`` consumes (``relu`` and ``max``: one more).
    #[getter]
    fn depth(&self) -> usize {
        self.inner.depth()
    }
    /// The floating-point reference of ``sign``.
    fn evaluate_plain(&self, x: f64) -> f64 {
        self.inner.evaluate_plain(x)
    }
    /// ``sign(ct)``.
    #[pyo3(signature = (ev, ct, target_scale = None))]
    fn sign(
        &self,
        py: Python<'_>,
        ev: &Evaluator,
        ct: PyRef<'_, Ciphertext>,
        target_scale: Option<f64>,
    ) -> PyResult<Ciphertext> {
        let f = &self.inner;
        apply(py, ev, &ct, target_scale, |e, c, s| f.sign(e, c, s))
    }
    /// ``max(ct, 0)``.
    #[pyo3(signature = (ev, ct, target_scale = None))]
    fn relu(
        &self,
        py: Python<'_>,
        ev: &Evaluator,
        ct: PyRef<'_, Ciphertext>,
        target_scale: Option<f64>,
    ) -> PyResult<Ciphertext> {
        let f = &self.inner;
        apply(py, ev, &ct, target_scale, |e, c, s| f.relu(e, c, s))
    }
    /// ``max(a, b)`` slot-wise.
    #[pyo3(signature = (ev, a, b, target_scale = None))]
    fn max(
        &self,
        py: Python<'_>,
        ev: &Evaluator,
        a: PyRef<'_, Ciphertext>,
        b: PyRef<'_, Ciphertext>,
        target_scale: Option<f64>,
    ) -> PyResult<Ciphertext> {
        let (f, b) = (&self.inner, &b.inner);
        apply(py, ev, &a, target_scale, |e, c, s| f.max(e, c, b, s))
    }
}

/// A smooth function by its Chebyshev interpolant on ``[a, b]``:
/// ``SmoothFunction.sigmoid(a, b, degree)``, ``.exp(...)``, ``.tanh(...)``.
#[pyclass(module = "rhea.ckks.functions", frozen)]
pub struct SmoothFunction {
    inner: RSmooth,
}

#[pymethods]
impl SmoothFunction {
    /// ``1 / (1 + e^-x)`` on ``[a, b]``.
    #[staticmethod]
    fn sigmoid(py: Python<'_>, a: f64, b: f64, degree: usize) -> PyResult<Self> {
        Ok(Self {
            inner: RSmooth::sigmoid(a, b, degree).map_err(|e| to_py(py, e))?,
        })
    }
    /// ``e^x`` on ``[a, b]``.
    #[staticmethod]
    fn exp(py: Python<'_>, a: f64, b: f64, degree: usize) -> PyResult<Self> {
        Ok(Self {
            inner: RSmooth::exp(a, b, degree).map_err(|e| to_py(py, e))?,
        })
    }
    /// ``tanh(x)`` on ``[a, b]``.
    #[staticmethod]
    fn tanh(py: Python<'_>, a: f64, b: f64, degree: usize) -> PyResult<Self> {
        Ok(Self {
            inner: RSmooth::tanh(a, b, degree).map_err(|e| to_py(py, e))?,
        })
    }
    /// The function's name.
    #[getter]
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    /// The interpolant's maximal error on the interval.
    #[getter]
    fn fit_error(&self) -> f64 {
        self.inner.fit_error()
    }
    /// The levels an evaluation consumes.
    #[getter]
    fn depth(&self) -> usize {
        self.inner.depth()
    }
    /// The floating-point reference (the interpolant).
    fn evaluate_plain(&self, x: f64) -> f64 {
        self.inner.evaluate_plain(x)
    }
    /// ``f(ct)`` homomorphically.
    #[pyo3(signature = (ev, ct, target_scale = None))]
    fn evaluate(
        &self,
        py: Python<'_>,
        ev: &Evaluator,
        ct: PyRef<'_, Ciphertext>,
        target_scale: Option<f64>,
    ) -> PyResult<Ciphertext> {
        let f = &self.inner;
        apply(py, ev, &ct, target_scale, |e, c, s| f.evaluate(e, c, s))
    }
}

/// Registers the classes of this module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Inverse>()?;
    m.add_class::<InvSqrt>()?;
    m.add_class::<Sqrt>()?;
    m.add_class::<Sign>()?;
    m.add_class::<SmoothFunction>()?;
    Ok(())
}
