//! The Python extension module `rhea._rhea`, wrapped by the Python package `rhea`
//! (`crates/rhea-py/python/rhea`). Every call that computes releases the GIL and catches
//! panics (`errors::run`); every class can be used from several threads.
//!
//! Layout: `params` (devices, parameter sets), `keys`, `ckks` (context, keys, encoder,
//! encryptor, decryptor), `ckks_ct` (ciphertext and its operators), `ckks_eval` (evaluator),
//! `poly` (polynomials, linear transforms), `functions`, `boot` (bootstrapping), `protected`
//! (LITE's protected and all-data modes), `bgv`,
//! `serial`, `errors`, `convert` (numpy).

// PyO3's macros (`#[pyclass]`, `#[pymethods]`, `#[pymodule]`) expand to `unsafe` FFI glue; this
// crate writes no `unsafe` of its own.
#![allow(unsafe_code)]

mod bgv;
mod boot;
mod ckks;
mod ckks_ct;
mod ckks_eval;
mod convert;
mod errors;
mod functions;
mod keys;
mod params;
mod poly;
mod protected;
mod serial;

use pyo3::prelude::*;

/// A submodule `name` of `parent`, filled by `register`.
fn submodule<'py>(
    parent: &Bound<'py, PyModule>,
    name: &str,
    register: fn(&Bound<'py, PyModule>) -> PyResult<()>,
) -> PyResult<Bound<'py, PyModule>> {
    let m = PyModule::new(parent.py(), name)?;
    register(&m)?;
    parent.add_submodule(&m)?;
    Ok(m)
}

/// Rhea's native module: the classes, re-exported by the `rhea` package.
#[pymodule]
fn _rhea(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    params::register(m)?;
    keys::register(m)?;
    protected::register_top(m)?;
    serial::register(m)?;
    let ckks_m = submodule(m, "ckks", |c| {
        ckks::register(c)?;
        ckks_ct::register(c)?;
        ckks_eval::register(c)?;
        poly::register(c)?;
        protected::register_ckks(c)?;
        boot::register(c)
    })?;
    submodule(&ckks_m, "functions", functions::register)?;
    submodule(m, "bgv", bgv::register)?;
    Ok(())
}
