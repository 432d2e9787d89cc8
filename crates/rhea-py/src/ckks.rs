//! CKKS: `rhea.ckks.CkksContext`, `KeyGenerator`, `Encoder`, `Encryptor`, `Decryptor`,
//! `Plaintext` (the ciphertext and the evaluator are in `ckks_eval.rs`).

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use rhea::ckks::{
    CkksContext as RContext, Decryptor as RDecryptor, Encoder as REncoder, Encryptor as REncryptor,
    Evaluator as REvaluator, KeyGenerator as RKeyGenerator, NoiseFlooding, Plaintext as RPlaintext,
};

use crate::ckks_eval::{Ciphertext, EvalShared};
use crate::convert::{c64_array, f64_array, seed, values, Values};
use crate::errors::{invalid, run};
use crate::keys::{GaloisKeys, PublicKey, RelinearizationKey, SecretKey};
use crate::params::{device_or_best, CkksParameters, Device};

/// A CKKS context: parameters on a device (``None``: ``Device.best()``). Creating it uploads
/// the ring's tables to the device.
#[pyclass(module = "rhea.ckks", frozen)]
pub struct CkksContext {
    pub(crate) inner: RContext,
}

#[pymethods]
impl CkksContext {
    #[new]
    #[pyo3(signature = (params, device = None))]
    fn new(py: Python<'_>, params: &CkksParameters, device: Option<Device>) -> PyResult<Self> {
        let device = device_or_best(py, device)?;
        let p = &params.inner;
        Ok(Self {
            inner: run(py, || RContext::new(p, device))?,
        })
    }
    /// The parameters.
    #[getter]
    fn params(&self) -> CkksParameters {
        CkksParameters {
            inner: self.inner.params().clone(),
        }
    }
    /// The device everything of this context is created on.
    #[getter]
    fn device(&self) -> Device {
        Device {
            inner: self.inner.device(),
        }
    }
    /// Key switchings run through this context so far (relinearisations, rotations, ...).
    #[getter]
    fn keyswitches(&self) -> u64 {
        self.inner.keyswitches()
    }
    fn __repr__(&self) -> String {
        format!(
            "CkksContext(N=2^{}, levels={}, device={})",
            self.inner.params().log_n(),
            self.inner.params().max_level(),
            self.inner.device()
        )
    }
}

/// Generates the keys of a context (``seed``: 32 bytes for reproducible keys, tests only).
/// Key generation releases the GIL; one generator serialises its own calls.
#[pyclass(name = "KeyGenerator", module = "rhea.ckks", frozen)]
pub struct CkksKeyGenerator {
    pub(crate) inner: Mutex<RKeyGenerator>,
}

/// Locks a key generator (a poisoned lock only means an earlier call panicked: the generator's
/// state is still a valid PRNG state).
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[pymethods]
impl CkksKeyGenerator {
    #[new]
    #[pyo3(signature = (ctx, seed = None))]
    fn new(py: Python<'_>, ctx: &CkksContext, seed: Option<Vec<u8>>) -> PyResult<Self> {
        let seed = self::seed(py, seed)?;
        let c = &ctx.inner;
        let kg = match seed {
            Some(s) => RKeyGenerator::from_seed(c, s),
            None => run(py, || RKeyGenerator::new(c))?,
        };
        Ok(Self {
            inner: Mutex::new(kg),
        })
    }
    /// A fresh secret key.
    fn secret_key(&self, py: Python<'_>) -> PyResult<SecretKey> {
        let k = run(py, || lock(&self.inner).secret_key())?;
        Ok(SecretKey { inner: Arc::new(k) })
    }
    /// The public key of ``sk``.
    fn public_key(&self, py: Python<'_>, sk: &SecretKey) -> PyResult<PublicKey> {
        let sk = &*sk.inner;
        let k = run(py, || lock(&self.inner).public_key(sk))?;
        Ok(PublicKey { inner: Arc::new(k) })
    }
    /// The relinearisation key of ``sk``.
    fn relinearization_key(&self, py: Python<'_>, sk: &SecretKey) -> PyResult<RelinearizationKey> {
        let sk = &*sk.inner;
        let k = run(py, || lock(&self.inner).relinearization_key(sk))?;
        Ok(RelinearizationKey { inner: Arc::new(k) })
    }
    /// Galois keys for rotations by each of ``steps`` slots (left for positive steps) and, if
    /// ``conjugation``, for complex conjugation.
    #[pyo3(signature = (sk, steps, conjugation = false))]
    fn galois_keys(
        &self,
        py: Python<'_>,
        sk: &SecretKey,
        steps: Vec<i64>,
        conjugation: bool,
    ) -> PyResult<GaloisKeys> {
        let sk = &*sk.inner;
        let k = run(py, || {
            lock(&self.inner).galois_keys(sk, &steps, conjugation)
        })?;
        Ok(GaloisKeys { inner: Arc::new(k) })
    }
}

/// A CKKS plaintext (an encoded vector at a level and a scale).
#[pyclass(module = "rhea.ckks", frozen)]
pub struct Plaintext {
    pub(crate) inner: RPlaintext,
}

#[pymethods]
impl Plaintext {
    /// Its level.
    #[getter]
    fn level(&self) -> usize {
        self.inner.level()
    }
    /// Its scale.
    #[getter]
    fn scale(&self) -> f64 {
        self.inner.scale()
    }
    /// Its number of slots.
    #[getter]
    fn slots(&self) -> usize {
        self.inner.slots()
    }
    /// The device it lives on.
    #[getter]
    fn device(&self) -> Device {
        Device {
            inner: self.inner.device(),
        }
    }
    /// A copy on the device of ``ctx`` (same parameters).
    fn to_device(&self, py: Python<'_>, ctx: &CkksContext) -> PyResult<Self> {
        let (pt, c) = (&self.inner, &ctx.inner);
        Ok(Self {
            inner: run(py, || pt.to_device(c))?,
        })
    }
    fn __len__(&self) -> usize {
        self.inner.slots()
    }
    fn __repr__(&self) -> String {
        format!(
            "Plaintext(level={}, scale=2^{:.2}, slots={}, device={})",
            self.inner.level(),
            self.inner.scale().log2(),
            self.inner.slots(),
            self.inner.device()
        )
    }
}

/// Encodes numpy arrays (float64 or complex128, at most ``slots`` values; fewer are padded
/// with zeros) into plaintexts, and decodes them back. ``slots`` defaults to ``N/2``.
#[pyclass(module = "rhea.ckks", frozen)]
pub struct Encoder {
    pub(crate) inner: REncoder,
    /// The parameters' default level and scale (what `encode` uses).
    defaults: (usize, f64),
}

#[pymethods]
impl Encoder {
    #[new]
    #[pyo3(signature = (ctx, slots = None))]
    fn new(py: Python<'_>, ctx: &CkksContext, slots: Option<usize>) -> PyResult<Self> {
        let c = &ctx.inner;
        let inner = run(py, || match slots {
            Some(s) => REncoder::with_slots(c, s),
            None => REncoder::new(c),
        })?;
        let p = c.params();
        Ok(Self {
            inner,
            defaults: (p.default_level(), p.default_scale()),
        })
    }
    /// The number of slots.
    #[getter]
    fn slots(&self) -> usize {
        self.inner.slots()
    }
    /// Encodes ``values`` (real or complex) at ``level`` and ``scale`` (default: the
    /// parameters' default level and scale).
    #[pyo3(signature = (values, level = None, scale = None))]
    fn encode(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        level: Option<usize>,
        scale: Option<f64>,
    ) -> PyResult<Plaintext> {
        let v = self::values(values)?;
        let enc = &self.inner;
        let at = match (level, scale) {
            (None, None) => None,
            (l, s) => Some((l.unwrap_or(self.defaults.0), s.unwrap_or(self.defaults.1))),
        };
        let inner = run(py, move || match (v, at) {
            (Values::Real(x), None) => enc.encode(&x),
            (Values::Real(x), Some((l, s))) => enc.encode_at(&x, l, s),
            (Values::Complex(z), None) => enc.encode_complex(&z),
            (Values::Complex(z), Some((l, s))) => enc.encode_complex_at(&z, l, s),
        })?;
        Ok(Plaintext { inner })
    }
    /// The real parts of the slots, as a float64 array.
    fn decode<'py>(
        &self,
        py: Python<'py>,
        pt: &Plaintext,
    ) -> PyResult<Bound<'py, numpy::PyArray1<f64>>> {
        let (enc, p) = (&self.inner, &pt.inner);
        let v = run(py, || enc.decode(p))?;
        Ok(f64_array(py, v))
    }
    /// The slots, as a complex128 array.
    fn decode_complex<'py>(
        &self,
        py: Python<'py>,
        pt: &Plaintext,
    ) -> PyResult<Bound<'py, numpy::PyArray1<numpy::Complex64>>> {
        let (enc, p) = (&self.inner, &pt.inner);
        let v = run(py, || enc.decode_complex(p))?;
        Ok(c64_array(py, v))
    }
}

/// Encrypts plaintexts under a public key (or a secret key: ``Encryptor(ctx, sk)``, smaller
/// fresh ciphertexts). ``evaluator``: the evaluator the fresh ciphertexts' operators use
/// (default: one without keys, enough for ``+``, ``-`` and constants).
#[pyclass(module = "rhea.ckks", frozen)]
pub struct Encryptor {
    inner: REncryptor,
    eval: Arc<EvalShared>,
}

#[pymethods]
impl Encryptor {
    #[new]
    #[pyo3(signature = (ctx, key, seed = None, evaluator = None))]
    fn new(
        py: Python<'_>,
        ctx: &CkksContext,
        key: &Bound<'_, PyAny>,
        seed: Option<Vec<u8>>,
        evaluator: Option<PyRef<'_, crate::ckks_eval::Evaluator>>,
    ) -> PyResult<Self> {
        let c = &ctx.inner;
        let mut enc = if let Ok(pk) = key.extract::<PyRef<'_, PublicKey>>() {
            let pk = pk.inner.clone();
            run(py, || REncryptor::new(c, pk))?
        } else if let Ok(sk) = key.extract::<PyRef<'_, SecretKey>>() {
            let sk = sk.inner.clone();
            run(py, || REncryptor::with_secret_key(c, sk))?
        } else {
            return Err(invalid(py, "an Encryptor needs a PublicKey or a SecretKey"));
        };
        if let Some(s) = self::seed(py, seed)? {
            enc = enc.with_seed(s);
        }
        let eval = match evaluator {
            Some(e) => e.shared.clone(),
            None => Arc::new(EvalShared::new(REvaluator::new(c))),
        };
        Ok(Self { inner: enc, eval })
    }
    /// Encrypts ``pt``.
    fn encrypt(&self, py: Python<'_>, pt: &Plaintext) -> PyResult<Ciphertext> {
        let (enc, p) = (&self.inner, &pt.inner);
        let ct = run(py, || enc.encrypt(p))?;
        Ok(Ciphertext::new(ct, Some(self.eval.clone())))
    }
}

/// Decrypts ciphertexts with the secret key. ``noise_flooding_log2_sigma``: add Gaussian
/// noise of that width before decoding (for results that leave the key owner).
#[pyclass(module = "rhea.ckks", frozen)]
pub struct Decryptor {
    inner: RDecryptor,
}

#[pymethods]
impl Decryptor {
    #[new]
    #[pyo3(signature = (ctx, sk, noise_flooding_log2_sigma = None))]
    fn new(
        py: Python<'_>,
        ctx: &CkksContext,
        sk: &SecretKey,
        noise_flooding_log2_sigma: Option<f64>,
    ) -> PyResult<Self> {
        let (c, sk) = (&ctx.inner, sk.inner.clone());
        let inner = run(py, move || {
            let d = RDecryptor::new(c, sk)?;
            match noise_flooding_log2_sigma {
                Some(b) => d.with_noise_flooding(NoiseFlooding::with_log2_sigma(b)?),
                None => Ok(d),
            }
        })?;
        Ok(Self { inner })
    }
    /// Decrypts ``ct`` to a plaintext (decode it with ``Encoder.decode``).
    fn decrypt(&self, py: Python<'_>, ct: PyRef<'_, Ciphertext>) -> PyResult<Plaintext> {
        let (d, c) = (&self.inner, &ct.inner);
        Ok(Plaintext {
            inner: run(py, || d.decrypt(c))?,
        })
    }
}

/// Registers the classes of this module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CkksContext>()?;
    m.add_class::<CkksKeyGenerator>()?;
    m.add_class::<Plaintext>()?;
    m.add_class::<Encoder>()?;
    m.add_class::<Encryptor>()?;
    m.add_class::<Decryptor>()?;
    Ok(())
}
