//! Serialisation (`rhea::serial`): `rhea.Codec(ctx)` writes keys, plaintexts and ciphertexts
//! to bytes or files and reads them back onto the context's device, checked (magic, version,
//! parameters digest, checksum).

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};
use rhea::serial::{Codec as RCodec, Compression, SerialError};

use crate::errors::{invalid, run_serial};
use crate::keys::{GaloisKeys, PublicKey, RelinearizationKey, SecretKey};
use crate::{bgv, ckks, ckks_eval};

/// Writes and reads Rhea objects for the parameters of ``ctx`` (a ``CkksContext`` or a
/// ``BgvContext``), loading onto its device. ``compression``: ``"none"``, ``"seeded"``
/// (uniform halves as seeds), ``"packed"`` (words packed to the primes' widths) or
/// ``"seeded_packed"`` (the default, smallest); all are lossless.
#[pyclass(module = "rhea", frozen)]
pub struct Codec {
    inner: RCodec,
}

fn compression(py: Python<'_>, name: &str) -> PyResult<Compression> {
    Ok(match name {
        "none" => Compression::NONE,
        "seeded" => Compression::SEEDED,
        "packed" => Compression::PACKED,
        "seeded_packed" => Compression::SEEDED_PACKED,
        _ => {
            return Err(invalid(
                py,
                format!(
                    "compression {name:?}: use \"none\", \"seeded\", \"packed\" or \
                     \"seeded_packed\""
                ),
            ))
        }
    })
}

fn unsupported(py: Python<'_>, what: &Bound<'_, PyAny>) -> PyErr {
    let name = what
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default();
    invalid(
        py,
        format!(
            "cannot serialise a {name}: Codec handles PublicKey, RelinearizationKey, GaloisKeys, \
             ckks/bgv Plaintext and Ciphertext (secret keys: secret_key_to_bytes)"
        ),
    )
}

impl Codec {
    fn bytes_of(
        &self,
        py: Python<'_>,
        obj: &Bound<'_, PyAny>,
        c: Compression,
    ) -> PyResult<Vec<u8>> {
        let codec = &self.inner;
        if let Ok(o) = obj.extract::<PyRef<'_, ckks_eval::Ciphertext>>() {
            let o = &o.inner;
            run_serial(py, || codec.to_bytes(o, c))
        } else if let Ok(o) = obj.extract::<PyRef<'_, ckks::Plaintext>>() {
            let o = &o.inner;
            run_serial(py, || codec.to_bytes(o, c))
        } else if let Ok(o) = obj.extract::<PyRef<'_, bgv::Ciphertext>>() {
            let o = &o.inner;
            run_serial(py, || codec.to_bytes(o, c))
        } else if let Ok(o) = obj.extract::<PyRef<'_, bgv::Plaintext>>() {
            let o = &o.inner;
            run_serial(py, || codec.to_bytes(o, c))
        } else if let Ok(o) = obj.extract::<PyRef<'_, PublicKey>>() {
            let o = &*o.inner;
            run_serial(py, || codec.to_bytes(o, c))
        } else if let Ok(o) = obj.extract::<PyRef<'_, RelinearizationKey>>() {
            let o = &*o.inner;
            run_serial(py, || codec.to_bytes(o, c))
        } else if let Ok(o) = obj.extract::<PyRef<'_, GaloisKeys>>() {
            let o = &*o.inner;
            run_serial(py, || codec.to_bytes(o, c))
        } else {
            Err(unsupported(py, obj))
        }
    }

    fn object_of(
        &self,
        py: Python<'_>,
        cls: &Bound<'_, PyType>,
        data: &[u8],
    ) -> PyResult<Py<PyAny>> {
        let codec = &self.inner;
        macro_rules! read {
            ($t:ty) => {
                run_serial(py, || codec.from_bytes::<$t>(data))
            };
        }
        let obj: Py<PyAny> = if cls.is(py.get_type::<ckks_eval::Ciphertext>()) {
            let inner = read!(rhea::ckks::Ciphertext)?;
            Py::new(py, ckks_eval::Ciphertext::new(inner, None))?.into_any()
        } else if cls.is(py.get_type::<ckks::Plaintext>()) {
            let inner = read!(rhea::ckks::Plaintext)?;
            Py::new(py, ckks::Plaintext { inner })?.into_any()
        } else if cls.is(py.get_type::<bgv::Ciphertext>()) {
            let inner = read!(rhea::bgv::Ciphertext)?;
            Py::new(py, bgv::Ciphertext { inner, eval: None })?.into_any()
        } else if cls.is(py.get_type::<bgv::Plaintext>()) {
            let inner = read!(rhea::bgv::Plaintext)?;
            Py::new(py, bgv::Plaintext { inner })?.into_any()
        } else if cls.is(py.get_type::<PublicKey>()) {
            let inner = Arc::new(read!(rhea::rlwe::PublicKey)?);
            Py::new(py, PublicKey { inner })?.into_any()
        } else if cls.is(py.get_type::<RelinearizationKey>()) {
            let inner = Arc::new(read!(rhea::rlwe::RelinearizationKey)?);
            Py::new(py, RelinearizationKey { inner })?.into_any()
        } else if cls.is(py.get_type::<GaloisKeys>()) {
            let inner = Arc::new(read!(rhea::rlwe::GaloisKeys)?);
            Py::new(py, GaloisKeys { inner })?.into_any()
        } else {
            return Err(unsupported(py, cls.as_any()));
        };
        Ok(obj)
    }
}

fn io(py: Python<'_>, e: std::io::Error) -> PyErr {
    crate::errors::serial_to_py(py, SerialError::from(e))
}

#[pymethods]
impl Codec {
    #[new]
    fn new(py: Python<'_>, ctx: &Bound<'_, PyAny>) -> PyResult<Self> {
        let inner = if let Ok(c) = ctx.extract::<PyRef<'_, ckks::CkksContext>>() {
            RCodec::from(&c.inner)
        } else if let Ok(c) = ctx.extract::<PyRef<'_, bgv::BgvContext>>() {
            RCodec::from(&c.inner)
        } else {
            return Err(invalid(py, "a Codec needs a CkksContext or a BgvContext"));
        };
        Ok(Self { inner })
    }
    /// ``obj`` as bytes.
    #[pyo3(signature = (obj, compression = "seeded_packed"))]
    fn to_bytes<'py>(
        &self,
        py: Python<'py>,
        obj: &Bound<'py, PyAny>,
        compression: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let c = self::compression(py, compression)?;
        Ok(PyBytes::new(py, &self.bytes_of(py, obj, c)?))
    }
    /// An object of class ``cls`` (e.g. ``rhea.ckks.Ciphertext``) read from ``data``.
    #[allow(clippy::wrong_self_convention)] // the Python name mirrors `Codec::from_bytes`
    fn from_bytes(
        &self,
        py: Python<'_>,
        cls: &Bound<'_, PyType>,
        data: &[u8],
    ) -> PyResult<Py<PyAny>> {
        self.object_of(py, cls, data)
    }
    /// Writes ``obj`` to the file ``path``; returns the bytes written.
    #[pyo3(signature = (obj, path, compression = "seeded_packed"))]
    fn save(
        &self,
        py: Python<'_>,
        obj: &Bound<'_, PyAny>,
        path: std::path::PathBuf,
        compression: &str,
    ) -> PyResult<usize> {
        let c = self::compression(py, compression)?;
        let bytes = self.bytes_of(py, obj, c)?;
        py.detach(|| std::fs::write(&path, &bytes))
            .map_err(|e| io(py, e))?;
        Ok(bytes.len())
    }
    /// An object of class ``cls`` read from the file ``path``.
    fn load(
        &self,
        py: Python<'_>,
        cls: &Bound<'_, PyType>,
        path: std::path::PathBuf,
    ) -> PyResult<Py<PyAny>> {
        let data = py.detach(|| std::fs::read(&path)).map_err(|e| io(py, e))?;
        self.object_of(py, cls, &data)
    }
    /// The **secret key** as bytes (its ternary coefficients). Keep them private.
    fn secret_key_to_bytes<'py>(
        &self,
        py: Python<'py>,
        sk: &SecretKey,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let (codec, sk) = (&self.inner, &*sk.inner);
        let bytes = run_serial(py, || {
            let mut out = Vec::new();
            codec.write_secret_key(&mut out, sk)?;
            Ok(out)
        })?;
        Ok(PyBytes::new(py, &bytes))
    }
    /// A secret key read from ``data`` (written by ``secret_key_to_bytes``).
    #[allow(clippy::wrong_self_convention)]
    fn secret_key_from_bytes(&self, py: Python<'_>, data: &[u8]) -> PyResult<SecretKey> {
        let codec = &self.inner;
        let sk = run_serial(py, || codec.read_secret_key(data))?;
        Ok(SecretKey {
            inner: Arc::new(sk),
        })
    }
}

/// Registers the classes of this module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Codec>()?;
    Ok(())
}
