//! The RLWE keys shared by CKKS and BGV: `rhea.SecretKey`, `rhea.PublicKey`,
//! `rhea.RelinearizationKey`, `rhea.GaloisKeys`. Each holds its key behind an `Arc`, so that
//! encryptors, decryptors and evaluators share it without a copy.

use std::sync::Arc;

use pyo3::prelude::*;
use rhea::rlwe::{
    GaloisKeys as RGaloisKeys, PublicKey as RPublicKey, RelinearizationKey as RRelinKey,
    SecretKey as RSecretKey,
};

use crate::params::Device;

/// A secret key. Keep it private: it decrypts everything encrypted under its public key.
#[pyclass(module = "rhea", frozen)]
pub struct SecretKey {
    pub(crate) inner: Arc<RSecretKey>,
}

#[pymethods]
impl SecretKey {
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
