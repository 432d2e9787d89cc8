//! numpy arrays (and sequences) in, numpy arrays out.

use numpy::{AllowTypeChange, Complex64, PyArray1, PyArrayLike1};
use pyo3::prelude::*;

use crate::errors::invalid;

/// Values to encode: real or complex.
pub(crate) enum Values {
    /// float64 values.
    Real(Vec<f64>),
    /// complex128 values.
    Complex(Vec<Complex64>),
}

/// `numpy.asarray(obj)` and its dtype's kind (`'f'`, `'c'`, `'i'`, ...).
fn as_array<'py>(obj: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyAny>, String)> {
    let np = obj.py().import("numpy")?;
    let arr = np.call_method1("asarray", (obj,))?;
    let kind: String = arr.getattr("dtype")?.getattr("kind")?.extract()?;
    let ndim: usize = arr.getattr("ndim")?.extract()?;
    if ndim != 1 {
        return Err(invalid(
            obj.py(),
            format!("expected a one-dimensional array, got {ndim} dimensions"),
        ));
    }
    Ok((arr, kind))
}

/// Real or complex values from a numpy array or a sequence (complex dtypes stay complex,
/// integers and floats become float64).
pub(crate) fn values(obj: &Bound<'_, PyAny>) -> PyResult<Values> {
    let (arr, kind) = as_array(obj)?;
    match kind.as_str() {
        "c" => {
            let a: PyArrayLike1<'_, Complex64, AllowTypeChange> = arr.extract()?;
            Ok(Values::Complex(a.as_array().to_vec()))
        }
        "f" | "i" | "u" | "b" => {
            let a: PyArrayLike1<'_, f64, AllowTypeChange> = arr.extract()?;
            Ok(Values::Real(a.as_array().to_vec()))
        }
        k => Err(invalid(
            obj.py(),
            format!("CKKS encodes real or complex numbers; got an array of dtype kind {k:?}"),
        )),
    }
}

/// Integers (int64) from a numpy array or a sequence; floats are refused (never truncated).
pub(crate) fn integers(obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    let (arr, kind) = as_array(obj)?;
    match kind.as_str() {
        "i" | "u" | "b" => {
            let a: PyArrayLike1<'_, i64, AllowTypeChange> = arr.extract()?;
            Ok(a.as_array().to_vec())
        }
        k => Err(invalid(
            obj.py(),
            format!(
                "BGV encodes integers; got an array of dtype kind {k:?} (convert it with \
                 numpy.asarray(values, dtype=numpy.int64) if truncation is intended)"
            ),
        )),
    }
}

/// A float64 array.
pub(crate) fn f64_array(py: Python<'_>, v: Vec<f64>) -> Bound<'_, PyArray1<f64>> {
    PyArray1::from_vec(py, v)
}

/// A complex128 array.
pub(crate) fn c64_array(py: Python<'_>, v: Vec<Complex64>) -> Bound<'_, PyArray1<Complex64>> {
    PyArray1::from_vec(py, v)
}

/// An int64 array.
pub(crate) fn i64_array(py: Python<'_>, v: Vec<i64>) -> Bound<'_, PyArray1<i64>> {
    PyArray1::from_vec(py, v)
}

/// An optional 32-byte seed.
pub(crate) fn seed(py: Python<'_>, seed: Option<Vec<u8>>) -> PyResult<Option<[u8; 32]>> {
    seed.map(|s| {
        <[u8; 32]>::try_from(s.as_slice())
            .map_err(|_| invalid(py, format!("a seed is 32 bytes, not {}", s.len())))
    })
    .transpose()
}
