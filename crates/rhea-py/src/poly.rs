//! Polynomials and linear transforms: `rhea.ckks.Polynomial`, `rhea.ckks.LinearTransform`
//! (evaluated by `Evaluator.evaluate_polynomial` and `Evaluator.linear_transform`).

use numpy::{AllowTypeChange, Complex64, PyArrayLike2};
use pyo3::prelude::*;
use rhea::ckks::{
    DiagonalStorage, LinearTransform as RLinearTransform, PolyBasis, Polynomial as RPolynomial,
};

use crate::convert::{c64_array, values, Values};
use crate::errors::{run, to_py};

/// A polynomial in the monomial basis (``Polynomial.monomial([c0, c1, ...])``) or the Chebyshev
/// basis of an interval (``Polynomial.chebyshev(coeffs, a, b)``, ``Polynomial.interpolate(f, a,
/// b, degree)``).
#[pyclass(module = "rhea.ckks", frozen)]
pub struct Polynomial {
    pub(crate) inner: RPolynomial,
}

#[pymethods]
impl Polynomial {
    /// ``Σ c_k x^k``.
    #[staticmethod]
    fn monomial(py: Python<'_>, coeffs: Vec<f64>) -> PyResult<Self> {
        Ok(Self {
            inner: RPolynomial::monomial(coeffs).map_err(|e| to_py(py, e))?,
        })
    }
    /// ``Σ c_k T_k(x)`` with ``T_k`` the Chebyshev polynomials of ``[a, b]``.
    #[staticmethod]
    fn chebyshev(py: Python<'_>, coeffs: Vec<f64>, a: f64, b: f64) -> PyResult<Self> {
        Ok(Self {
            inner: RPolynomial::chebyshev(coeffs, a, b).map_err(|e| to_py(py, e))?,
        })
    }
    /// The Chebyshev interpolant of the Python function ``f`` of degree ``degree`` on
    /// ``[a, b]``, and its maximal error on the interval: ``(polynomial, max_error)``.
    #[staticmethod]
    fn interpolate(
        py: Python<'_>,
        f: &Bound<'_, PyAny>,
        a: f64,
        b: f64,
        degree: usize,
    ) -> PyResult<(Self, f64)> {
        let failure: std::cell::RefCell<Option<PyErr>> = std::cell::RefCell::new(None);
        let fit = RPolynomial::interpolate(
            |x| match f.call1((x,)).and_then(|y| y.extract::<f64>()) {
                Ok(y) => y,
                Err(e) => {
                    failure.borrow_mut().get_or_insert(e);
                    f64::NAN
                }
            },
            a,
            b,
            degree,
        );
        if let Some(e) = failure.into_inner() {
            return Err(e);
        }
        let fit = fit.map_err(|e| to_py(py, e))?;
        Ok((
            Self {
                inner: fit.polynomial,
            },
            fit.max_error,
        ))
    }
    /// The coefficients.
    #[getter]
    fn coefficients(&self) -> Vec<f64> {
        self.inner.coefficients().to_vec()
    }
    /// The degree.
    #[getter]
    fn degree(&self) -> usize {
        self.inner.degree()
    }
    /// The levels a homomorphic evaluation consumes.
    #[getter]
    fn depth(&self) -> usize {
        self.inner.depth()
    }
    /// ``"monomial"`` or ``("chebyshev", a, b)``.
    #[getter]
    fn basis(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(match self.inner.basis() {
            PolyBasis::Monomial => "monomial".into_pyobject(py)?.into_any().unbind(),
            PolyBasis::Chebyshev { a, b } => {
                ("chebyshev", a, b).into_pyobject(py)?.into_any().unbind()
            }
        })
    }
    /// ``p(x)`` in floating point (the reference for a homomorphic evaluation).
    fn __call__(&self, x: f64) -> f64 {
        self.inner.evaluate(x)
    }
    fn __repr__(&self) -> String {
        format!(
            "Polynomial(degree={}, depth={}, basis={:?})",
            self.inner.degree(),
            self.inner.depth(),
            self.inner.basis()
        )
    }
}

/// A matrix on the slots, evaluated with baby-step giant-step (``Evaluator.linear_transform``).
/// Build it from a dense matrix (``from_dense``) or from its diagonals (``from_diagonals``,
/// ``{k: diag_k}`` with ``diag_k[i] = M[i][(i + k) mod slots]``); ``baby_steps`` forces the
/// baby-step count; ``storage`` says how the encoded diagonals are kept: ``"whole"`` (over
/// ``Q ∪ P``, the default), ``"q-only"`` (over ``Q`` alone, each baby rotation brought down
/// before the products: for many diagonals low in the chain, where the special primes are most
/// of the basis) or ``"compact"`` (one limb each, expanded at each evaluation: about
/// ``1/(level + 1 + |P|)`` of the memory, the same results; ``compact=True`` says the same).
/// The Galois keys it needs: ``rotations()``.
#[pyclass(module = "rhea.ckks", frozen)]
pub struct LinearTransform {
    pub(crate) inner: RLinearTransform,
}

fn rows_of(obj: &Bound<'_, PyAny>) -> PyResult<Values2> {
    let np = obj.py().import("numpy")?;
    let arr = np.call_method1("asarray", (obj,))?;
    let kind: String = arr.getattr("dtype")?.getattr("kind")?.extract()?;
    if kind == "c" {
        let a: PyArrayLike2<'_, Complex64, AllowTypeChange> = arr.extract()?;
        Ok(Values2::Complex(
            a.as_array()
                .rows()
                .into_iter()
                .map(|r| r.to_vec())
                .collect(),
        ))
    } else {
        let a: PyArrayLike2<'_, f64, AllowTypeChange> = arr.extract()?;
        Ok(Values2::Real(
            a.as_array()
                .rows()
                .into_iter()
                .map(|r| r.to_vec())
                .collect(),
        ))
    }
}

enum Values2 {
    Real(Vec<Vec<f64>>),
    Complex(Vec<Vec<Complex64>>),
}

/// The storage named by `storage` ([`DiagonalStorage::from_name`]) or by `compact`.
fn storage_of(compact: bool, storage: Option<&str>) -> rhea::Result<DiagonalStorage> {
    let named = match storage {
        None => None,
        Some(name) => Some(DiagonalStorage::from_name(name).ok_or_else(|| {
            rhea::Error::InvalidInput(format!(
                "LinearTransform: storage {name:?}: expected \"whole\", \"q-only\" or \"compact\""
            ))
        })?),
    };
    match (compact, named) {
        (false, None) => Ok(DiagonalStorage::Full),
        (true, None | Some(DiagonalStorage::Compact)) => Ok(DiagonalStorage::Compact),
        (false, Some(s)) => Ok(s),
        (true, Some(_)) => Err(rhea::Error::InvalidInput(
            "LinearTransform: compact=True with another storage".into(),
        )),
    }
}

fn with_options(
    lt: RLinearTransform,
    baby_steps: Option<usize>,
    storage: DiagonalStorage,
) -> rhea::Result<RLinearTransform> {
    let lt = match baby_steps {
        Some(n1) => lt.with_baby_steps(n1)?,
        None => lt,
    };
    Ok(lt.with_diagonal_storage(storage))
}

#[pymethods]
impl LinearTransform {
    /// The transform of the dense matrix ``matrix`` (``m × n``, real or complex, at most
    /// ``slots × slots``): reads slots ``0..n``, writes ``M·v`` to slots ``0..m``.
    #[staticmethod]
    #[pyo3(signature = (slots, matrix, baby_steps = None, *, compact = false, storage = None))]
    fn from_dense(
        py: Python<'_>,
        slots: usize,
        matrix: &Bound<'_, PyAny>,
        baby_steps: Option<usize>,
        compact: bool,
        storage: Option<&str>,
    ) -> PyResult<Self> {
        let rows = rows_of(matrix)?;
        let storage = run(py, || storage_of(compact, storage))?;
        let inner = run(py, move || {
            let lt = match rows {
                Values2::Real(r) => RLinearTransform::from_dense(slots, &r)?,
                Values2::Complex(r) => RLinearTransform::from_dense(slots, &r)?,
            };
            with_options(lt, baby_steps, storage)
        })?;
        Ok(Self { inner })
    }
    /// The transform given by its diagonals ``{k: diag_k}`` (``slots`` values each).
    #[staticmethod]
    #[pyo3(signature = (slots, diagonals, baby_steps = None, *, compact = false, storage = None))]
    fn from_diagonals(
        py: Python<'_>,
        slots: usize,
        diagonals: std::collections::BTreeMap<i64, Bound<'_, PyAny>>,
        baby_steps: Option<usize>,
        compact: bool,
        storage: Option<&str>,
    ) -> PyResult<Self> {
        let storage = run(py, || storage_of(compact, storage))?;
        let mut diags: Vec<(i64, Vec<Complex64>)> = Vec::with_capacity(diagonals.len());
        for (k, v) in &diagonals {
            let d = match values(v)? {
                Values::Real(x) => x.into_iter().map(|x| Complex64::new(x, 0.0)).collect(),
                Values::Complex(z) => z,
            };
            diags.push((*k, d));
        }
        let inner = run(py, move || {
            with_options(
                RLinearTransform::from_diagonals(slots, diags)?,
                baby_steps,
                storage,
            )
        })?;
        Ok(Self { inner })
    }
    /// The number of slots it acts on.
    #[getter]
    fn slots(&self) -> usize {
        self.inner.slots()
    }
    /// The number of non-zero diagonals.
    #[getter]
    fn diagonal_count(&self) -> usize {
        self.inner.diagonal_count()
    }
    /// The baby-step count.
    #[getter]
    fn baby_steps(&self) -> usize {
        self.inner.baby_steps()
    }
    /// The key switchings one evaluation costs.
    #[getter]
    fn keyswitches(&self) -> usize {
        self.inner.keyswitches()
    }
    /// Whether the encoded diagonals are kept compact (one limb each).
    #[getter]
    fn compact(&self) -> bool {
        self.inner.diagonal_storage() == DiagonalStorage::Compact
    }
    /// How the encoded diagonals are kept: ``"whole"``, ``"q-only"`` or ``"compact"``.
    #[getter]
    fn storage(&self) -> &'static str {
        self.inner.diagonal_storage().name()
    }
    /// Bytes the cached encoded diagonals hold (0 before the first evaluation).
    #[getter]
    fn cached_bytes(&self) -> u64 {
        self.inner.cached_bytes()
    }
    /// The rotation steps whose Galois keys an evaluation needs.
    fn rotations(&self) -> Vec<i64> {
        self.inner.rotations()
    }
    /// ``M·v`` in floating point (the reference), as a complex128 array.
    fn apply<'py>(
        &self,
        py: Python<'py>,
        v: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, numpy::PyArray1<Complex64>>> {
        let z: Vec<Complex64> = match values(v)? {
            Values::Real(x) => x.into_iter().map(|x| Complex64::new(x, 0.0)).collect(),
            Values::Complex(z) => z,
        };
        let lt = &self.inner;
        let out = run(py, || lt.apply(&z))?;
        Ok(c64_array(py, out))
    }
    fn __repr__(&self) -> String {
        format!(
            "LinearTransform(slots={}, diagonals={}, baby_steps={}, keyswitches={})",
            self.inner.slots(),
            self.inner.diagonal_count(),
            self.inner.baby_steps(),
            self.inner.keyswitches()
        )
    }
}

/// Registers the classes of this module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Polynomial>()?;
    m.add_class::<LinearTransform>()?;
    Ok(())
}
