//! The RLWE keys shared by CKKS and BGV: `rhea.SecretKey`, `rhea.PublicKey`,
//! `rhea.RelinearizationKey`, `rhea.GaloisKeys`. Each holds its key behind an `Arc`, so that
//! encryptors, decryptors and evaluators share it without a copy.

use std::sync::Arc;

use pyo3::prelude::*;
use rhea::rlwe::{
    GaloisKeys as RGaloisKeys, PublicKey as RPublicKey, RelinearizationKey as RRelinKey,
    RlweContext, SecretKey as RSecretKey,
};

use crate::errors::run;
use crate::params::Device;

/// Runs `f` (GIL released) on the RLWE context of `ctx`, a `ckks.CkksContext` or a
/// `bgv.BgvContext`; a `TypeError` for anything else.
fn on_context<T: Send>(
    py: Python<'_>,
    ctx: &Bound<'_, PyAny>,
    f: impl FnOnce(&RlweContext) -> rhea::Result<T> + Send,
) -> PyResult<T> {
    if let Ok(c) = ctx.extract::<PyRef<'_, crate::ckks::CkksContext>>() {
        let r: &RlweContext = c.inner.as_ref();
        return run(py, || f(r));
    }
    if let Ok(c) = ctx.extract::<PyRef<'_, crate::bgv::BgvContext>>() {
        let r: &RlweContext = c.inner.as_ref();
        return run(py, || f(r));
    }
    Err(pyo3::exceptions::PyTypeError::new_err(
        "to_device: expected a ckks.CkksContext or a bgv.BgvContext",
    ))
}

/// A secret key. Keep it private: it decrypts everything encrypted under its public key.
#[pyclass(module = "rhea", frozen)]
pub struct SecretKey {
    pub(crate) inner: Arc<RSecretKey>,
}

#[pymethods]
impl SecretKey {
    /// A copy on the device of ``ctx`` (a ``ckks.CkksContext`` or ``bgv.BgvContext`` of the
    /// same parameters; words unchanged).
    fn to_device(&self, py: Python<'_>, ctx: &Bound<'_, PyAny>) -> PyResult<Self> {
        let key = &self.inner;
        Ok(Self {
            inner: Arc::new(on_context(py, ctx, |c| key.to_device(c))?),
        })
    }
    /// The device the key lives on.
    #[getter]
    fn device(&self) -> Device {
        Device {
            inner: self.inner.device(),
        }
    }
    fn __repr__(&self) -> String {
        format!("SecretKey(device={})", self.inner.device())
    }
}

/// A public (encryption) key.
#[pyclass(module = "rhea", frozen)]
pub struct PublicKey {
    pub(crate) inner: Arc<RPublicKey>,
}

#[pymethods]
impl PublicKey {
    /// A copy on the device of ``ctx`` (a ``ckks.CkksContext`` or ``bgv.BgvContext`` of the
    /// same parameters; words unchanged).
    fn to_device(&self, py: Python<'_>, ctx: &Bound<'_, PyAny>) -> PyResult<Self> {
        let key = &self.inner;
        Ok(Self {
            inner: Arc::new(on_context(py, ctx, |c| key.to_device(c))?),
        })
    }
    /// The device the key lives on.
    #[getter]
    fn device(&self) -> Device {
        Device {
            inner: self.inner.device(),
        }
    }
    fn __repr__(&self) -> String {
        format!("PublicKey(device={})", self.inner.device())
    }
}

/// The relinearisation key (needed by products: ``Evaluator(ctx, relinearization_key=...)``).
#[pyclass(module = "rhea", frozen)]
pub struct RelinearizationKey {
    pub(crate) inner: Arc<RRelinKey>,
}

#[pymethods]
impl RelinearizationKey {
    /// A copy on the device of ``ctx`` (a ``ckks.CkksContext`` or ``bgv.BgvContext`` of the
    /// same parameters; words unchanged).
    fn to_device(&self, py: Python<'_>, ctx: &Bound<'_, PyAny>) -> PyResult<Self> {
        let key = &self.inner;
        Ok(Self {
            inner: Arc::new(on_context(py, ctx, |c| key.to_device(c))?),
        })
    }
    /// Its size in bytes.
    #[getter]
    fn size_bytes(&self) -> u64 {
        self.inner.key().size_bytes()
    }
    /// The device the key lives on.
    #[getter]
    fn device(&self) -> Device {
        Device {
            inner: self.inner.device(),
        }
    }
    fn __repr__(&self) -> String {
        format!(
            "RelinearizationKey({} bytes, device={})",
            self.inner.key().size_bytes(),
            self.inner.device()
        )
    }
}

/// A set of Galois keys (rotations and, optionally, complex conjugation), by Galois element.
#[pyclass(module = "rhea", frozen)]
pub struct GaloisKeys {
    pub(crate) inner: Arc<RGaloisKeys>,
}

#[pymethods]
impl GaloisKeys {
    /// A copy on the device of ``ctx`` (a ``ckks.CkksContext`` or ``bgv.BgvContext`` of the
    /// same parameters; words unchanged).
    fn to_device(&self, py: Python<'_>, ctx: &Bound<'_, PyAny>) -> PyResult<Self> {
        let key = &self.inner;
        Ok(Self {
            inner: Arc::new(on_context(py, ctx, |c| key.to_device(c))?),
        })
    }
    /// The Galois elements of the keys in the set, sorted.
    #[getter]
    fn elements(&self) -> Vec<u64> {
        self.inner.elements()
    }
    /// Their total size in bytes.
    #[getter]
    fn size_bytes(&self) -> u64 {
        self.inner.size_bytes()
    }
    /// Whether the set holds the key of Galois element ``g``.
    fn __contains__(&self, g: u64) -> bool {
        self.inner.contains(g)
    }
    fn __len__(&self) -> usize {
        self.inner.len()
    }
    fn __repr__(&self) -> String {
        format!(
            "GaloisKeys({} keys, {} bytes)",
            self.inner.len(),
            self.inner.size_bytes()
        )
    }
}

/// Registers the classes of this module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SecretKey>()?;
    m.add_class::<PublicKey>()?;
    m.add_class::<RelinearizationKey>()?;
    m.add_class::<GaloisKeys>()?;
    Ok(())
}
