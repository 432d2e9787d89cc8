//! LITE's protected and all-data modes for CKKS (issue 38, `docs/lite.md`): `rhea.Protection`,
//! `rhea.ProtectedSecretKey`, and in `rhea.ckks` `ProtectedKeyGenerator`, `ProtectedPlaintext`,
//! `ProtectedEncryptor`, `ProtectedDecryptor`, `ProtectedEvaluator`, `ProtectedCiphertext`.
//! Each wraps the Rust type of the same name; every call releases the GIL.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use rhea::ckks::{
    ProtectedCiphertext as RProtectedCt, ProtectedDecryptor as RProtectedDecryptor,
    ProtectedEncryptor as RProtectedEncryptor, ProtectedEvaluator as RProtectedEvaluator,
    ProtectedKeyGenerator as RProtectedKeyGenerator, ProtectedPlaintext as RProtectedPlaintext,
};
use rhea::rlwe::{ProtectedSecretKey as RProtectedSecretKey, Protection as RProtection};

use crate::ckks::{lock, CkksContext, Plaintext};
use crate::ckks_eval::{Ciphertext, EvalShared};
use crate::convert::seed;
use crate::errors::run;
use crate::keys::{GaloisKeys, PublicKey, RelinearizationKey};
use crate::params::Device;

/// A LITE session for the GPU of a context: two AES-128 keys from the operating system's
/// CSPRNG (zeroised when the last holder drops it), with which the protected modes keep the
/// secret key, plaintexts and (``ProtectedEvaluator``) ciphertexts as AES-XTS ciphertext in
/// device memory. A CPU context raises ``InvalidInputError`` (host memory is trusted).
#[pyclass(module = "rhea", frozen)]
pub struct Protection {
    pub(crate) inner: RProtection,
}

#[pymethods]
impl Protection {
    #[new]
    fn new(py: Python<'_>, ctx: &CkksContext) -> PyResult<Self> {
        let c = &ctx.inner;
        Ok(Self {
            inner: run(py, || RProtection::new(c))?,
        })
    }
    /// The GPU it protects.
    #[getter]
    fn device(&self) -> Device {
        Device {
            inner: self.inner.device(),
        }
    }
    /// Whether ``other`` is this session (only then can one read what the other protected).
    fn is_same_session(&self, other: &Protection) -> bool {
        self.inner.is_same_session(&other.inner)
    }
    fn __repr__(&self) -> String {
        format!("Protection(device={})", self.inner.device())
    }
}

/// A secret key of the protected mode: on the GPU only as XTS ciphertext.
#[pyclass(module = "rhea", frozen)]
pub struct ProtectedSecretKey {
    pub(crate) inner: Arc<RProtectedSecretKey>,
}

#[pymethods]
impl ProtectedSecretKey {
    fn __repr__(&self) -> String {
        format!(
            "ProtectedSecretKey(device={})",
            self.inner.protection().device()
        )
    }
}

/// ``KeyGenerator`` in protected mode (``seed``: 32 bytes, tests only): the same keys as the
/// unprotected generator from the same seed; the secret key and the errors reach the GPU only
/// as ciphertext. The public keys it makes are the ordinary ones.
#[pyclass(module = "rhea.ckks", frozen)]
pub struct ProtectedKeyGenerator {
    inner: Mutex<RProtectedKeyGenerator>,
}

#[pymethods]
impl ProtectedKeyGenerator {
    #[new]
    #[pyo3(signature = (ctx, protection, seed = None))]
    fn new(
        py: Python<'_>,
        ctx: &CkksContext,
        protection: &Protection,
        seed: Option<Vec<u8>>,
    ) -> PyResult<Self> {
        let seed = self::seed(py, seed)?;
        let (c, p) = (&ctx.inner, &protection.inner);
        let kg = run(py, || match seed {
            Some(s) => RProtectedKeyGenerator::from_seed(c, p, s),
            None => RProtectedKeyGenerator::new(c, p),
        })?;
        Ok(Self {
            inner: Mutex::new(kg),
        })
    }
    /// A fresh secret key (made on the host, protected on the GPU).
    fn secret_key(&self, py: Python<'_>) -> PyResult<ProtectedSecretKey> {
        let k = run(py, || lock(&self.inner).secret_key())?;
        Ok(ProtectedSecretKey { inner: Arc::new(k) })
    }
    /// The public key of ``sk``.
    fn public_key(&self, py: Python<'_>, sk: &ProtectedSecretKey) -> PyResult<PublicKey> {
        let sk = &*sk.inner;
        let k = run(py, || lock(&self.inner).public_key(sk))?;
        Ok(PublicKey { inner: Arc::new(k) })
    }
    /// The relinearisation key of ``sk`` (``s²`` exists only in registers).
    fn relinearization_key(
        &self,
        py: Python<'_>,
        sk: &ProtectedSecretKey,
    ) -> PyResult<RelinearizationKey> {
        let sk = &*sk.inner;
        let k = run(py, || lock(&self.inner).relinearization_key(sk))?;
        Ok(RelinearizationKey { inner: Arc::new(k) })
    }
    /// Galois keys for rotations by ``steps`` and, if ``conjugation``, complex conjugation.
    #[pyo3(signature = (sk, steps, conjugation = false))]
    fn galois_keys(
        &self,
        py: Python<'_>,
        sk: &ProtectedSecretKey,
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

/// A plaintext protected on the GPU: ``pt`` must be in host memory (encode it with an
/// ``Encoder`` of a CPU context of the same parameters); its words never reach the device in
/// plain.
#[pyclass(module = "rhea.ckks", frozen)]
pub struct ProtectedPlaintext {
    inner: RProtectedPlaintext,
}

#[pymethods]
impl ProtectedPlaintext {
    #[new]
    fn new(
        py: Python<'_>,
        ctx: &CkksContext,
        protection: &Protection,
        pt: &Plaintext,
    ) -> PyResult<Self> {
        let (c, p, pt) = (&ctx.inner, &protection.inner, &pt.inner);
        Ok(Self {
            inner: run(py, || RProtectedPlaintext::new(c, p, pt))?,
        })
    }
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
    /// ``ct + pt`` (a plain ciphertext on the GPU, at the plaintext's level and scale).
    fn add_to(
        &self,
        py: Python<'_>,
        ctx: &CkksContext,
        ct: PyRef<'_, Ciphertext>,
    ) -> PyResult<Ciphertext> {
        let (p, c, x) = (&self.inner, &ctx.inner, &ct.inner);
        Ok(Ciphertext::new(
            run(py, || p.add_to(c, x))?,
            ct.eval.clone(),
        ))
    }
    /// ``ct · pt``, not rescaled.
    fn multiply(
        &self,
        py: Python<'_>,
        ctx: &CkksContext,
        ct: PyRef<'_, Ciphertext>,
    ) -> PyResult<Ciphertext> {
        let (p, c, x) = (&self.inner, &ctx.inner, &ct.inner);
        Ok(Ciphertext::new(
            run(py, || p.multiply(c, x))?,
            ct.eval.clone(),
        ))
    }
    fn __repr__(&self) -> String {
        format!(
            "ProtectedPlaintext(level={}, scale=2^{:.2})",
            self.inner.level(),
            self.inner.scale().log2()
        )
    }
}

/// Encrypts protected plaintexts with a protected secret key (``key``: a
/// ``ProtectedSecretKey``) or a public key (``key``: a ``PublicKey``, then ``protection`` is
/// required): the words of ``Encryptor`` for the same seed. The ciphertexts are the ordinary
/// (public) ones.
#[pyclass(module = "rhea.ckks", frozen)]
pub struct ProtectedEncryptor {
    inner: RProtectedEncryptor,
    eval: Arc<EvalShared>,
}

#[pymethods]
impl ProtectedEncryptor {
    #[new]
    #[pyo3(signature = (ctx, key, protection = None, seed = None))]
    fn new(
        py: Python<'_>,
        ctx: &CkksContext,
        key: &Bound<'_, PyAny>,
        protection: Option<PyRef<'_, Protection>>,
        seed: Option<Vec<u8>>,
    ) -> PyResult<Self> {
        let c = &ctx.inner;
        let mut enc = if let Ok(sk) = key.extract::<PyRef<'_, ProtectedSecretKey>>() {
            let sk = sk.inner.clone();
            run(py, || RProtectedEncryptor::new(c, sk))?
        } else if let Ok(pk) = key.extract::<PyRef<'_, PublicKey>>() {
            let Some(p) = protection else {
                return Err(crate::errors::invalid(
                    py,
                    "a ProtectedEncryptor with a PublicKey needs protection=",
                ));
            };
            let (pk, p) = (&*pk.inner, &p.inner);
            run(py, || RProtectedEncryptor::with_public_key(c, pk, p))?
        } else {
            return Err(crate::errors::invalid(
                py,
                "a ProtectedEncryptor needs a ProtectedSecretKey or a PublicKey",
            ));
        };
        if let Some(s) = self::seed(py, seed)? {
            enc = enc.with_seed(s);
        }
        let eval = Arc::new(EvalShared::new(rhea::ckks::Evaluator::new(c)));
        Ok(Self { inner: enc, eval })
    }
    /// Encrypts ``pt`` (a ``ProtectedPlaintext``).
    fn encrypt(&self, py: Python<'_>, pt: &ProtectedPlaintext) -> PyResult<Ciphertext> {
        let (e, p) = (&self.inner, &pt.inner);
        Ok(Ciphertext::new(
            run(py, || e.encrypt(p))?,
            Some(self.eval.clone()),
        ))
    }
}

/// Decrypts with a protected secret key: the result is a plaintext in host memory (decode it
/// with an ``Encoder``); nothing of it is in device memory in plain.
#[pyclass(module = "rhea.ckks", frozen)]
pub struct ProtectedDecryptor {
    inner: RProtectedDecryptor,
}

#[pymethods]
impl ProtectedDecryptor {
    #[new]
    fn new(py: Python<'_>, ctx: &CkksContext, sk: &ProtectedSecretKey) -> PyResult<Self> {
        let (c, sk) = (&ctx.inner, sk.inner.clone());
        Ok(Self {
            inner: run(py, || RProtectedDecryptor::new(c, sk))?,
        })
    }
    /// Decrypts an ordinary ciphertext.
    fn decrypt(&self, py: Python<'_>, ct: PyRef<'_, Ciphertext>) -> PyResult<Plaintext> {
        let (d, c) = (&self.inner, &ct.inner);
        Ok(Plaintext {
            inner: run(py, || d.decrypt(c))?,
        })
    }
    /// Decrypts an all-data ciphertext (``ProtectedCiphertext``).
    fn decrypt_protected(&self, py: Python<'_>, ct: &ProtectedCiphertext) -> PyResult<Plaintext> {
        let (d, c) = (&self.inner, &ct.inner);
        Ok(Plaintext {
            inner: run(py, || d.decrypt_protected(c))?,
        })
    }
}

/// A ciphertext of the all-data mode: XTS ciphertext in device memory, readable only by its
/// session. Made by ``ProtectedEvaluator.protect``.
#[pyclass(module = "rhea.ckks", frozen)]
pub struct ProtectedCiphertext {
    inner: RProtectedCt,
}

#[pymethods]
impl ProtectedCiphertext {
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
    /// The GPU holding it.
    #[getter]
    fn device(&self) -> Device {
        Device {
            inner: self.inner.device(),
        }
    }
    fn __repr__(&self) -> String {
        format!(
            "ProtectedCiphertext(level={}, scale=2^{:.2}, slots={}, device={})",
            self.inner.level(),
            self.inner.scale().log2(),
            self.inner.slots(),
            self.inner.device()
        )
    }
}

/// The all-data evaluator: ``add``, ``sub``, ``mul_relin``, ``rescale``, ``rotate`` and
/// protected-plaintext operands on ``ProtectedCiphertext``s, every operand decrypted only in
/// the kernels' registers; the words of ``Evaluator`` (manual rescaling).
#[pyclass(module = "rhea.ckks", frozen)]
pub struct ProtectedEvaluator {
    inner: RProtectedEvaluator,
}

type Pct<'a> = PyRef<'a, ProtectedCiphertext>;

impl ProtectedEvaluator {
    fn wrap(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&RProtectedEvaluator) -> rhea::Result<RProtectedCt> + Send,
    ) -> PyResult<ProtectedCiphertext> {
        let e = &self.inner;
        Ok(ProtectedCiphertext {
            inner: run(py, || f(e))?,
        })
    }
}

#[pymethods]
impl ProtectedEvaluator {
    #[new]
    #[pyo3(signature = (ctx, protection, relinearization_key = None, galois_keys = None))]
    fn new(
        py: Python<'_>,
        ctx: &CkksContext,
        protection: &Protection,
        relinearization_key: Option<PyRef<'_, RelinearizationKey>>,
        galois_keys: Option<PyRef<'_, GaloisKeys>>,
    ) -> PyResult<Self> {
        let (c, p) = (&ctx.inner, &protection.inner);
        let rlk = relinearization_key.map(|k| k.inner.clone());
        let gk = galois_keys.map(|k| k.inner.clone());
        let inner = run(py, move || {
            let mut e = RProtectedEvaluator::new(c, p)?;
            if let Some(k) = rlk {
                e = e.with_relinearization_key(k)?;
            }
            if let Some(k) = gk {
                e = e.with_galois_keys(k)?;
            }
            Ok(e)
        })?;
        Ok(Self { inner })
    }
    /// ``ct`` in the all-data mode (from host memory: encrypted on the host; from the GPU:
    /// re-encrypted there).
    fn protect(&self, py: Python<'_>, ct: PyRef<'_, Ciphertext>) -> PyResult<ProtectedCiphertext> {
        let c = &ct.inner;
        self.wrap(py, |e| e.protect(c))
    }
    /// The ordinary (public) ciphertext of ``ct``, on the GPU.
    fn unprotect(&self, py: Python<'_>, ct: Pct<'_>) -> PyResult<Ciphertext> {
        let (e, c) = (&self.inner, &ct.inner);
        Ok(Ciphertext::new(run(py, || e.unprotect(c))?, None))
    }
    /// ``a + b`` (same level and scale).
    fn add(&self, py: Python<'_>, a: Pct<'_>, b: Pct<'_>) -> PyResult<ProtectedCiphertext> {
        let (a, b) = (&a.inner, &b.inner);
        self.wrap(py, |e| e.add(a, b))
    }
    /// ``a − b`` (same level and scale).
    fn sub(&self, py: Python<'_>, a: Pct<'_>, b: Pct<'_>) -> PyResult<ProtectedCiphertext> {
        let (a, b) = (&a.inner, &b.inner);
        self.wrap(py, |e| e.sub(a, b))
    }
    /// ``a · b`` relinearised, not rescaled.
    fn mul_relin(&self, py: Python<'_>, a: Pct<'_>, b: Pct<'_>) -> PyResult<ProtectedCiphertext> {
        let (a, b) = (&a.inner, &b.inner);
        self.wrap(py, |e| e.mul_relin(a, b))
    }
    /// ``a · b`` relinearised and rescaled.
    fn mul_relin_rescale(
        &self,
        py: Python<'_>,
        a: Pct<'_>,
        b: Pct<'_>,
    ) -> PyResult<ProtectedCiphertext> {
        let (a, b) = (&a.inner, &b.inner);
        self.wrap(py, |e| e.mul_relin_rescale(a, b))
    }
    /// Divides by the level's last prime.
    fn rescale(&self, py: Python<'_>, ct: Pct<'_>) -> PyResult<ProtectedCiphertext> {
        let c = &ct.inner;
        self.wrap(py, |e| e.rescale(c))
    }
    /// Rotates the slots left by ``step`` (right for negative steps).
    fn rotate(&self, py: Python<'_>, ct: Pct<'_>, step: i64) -> PyResult<ProtectedCiphertext> {
        let c = &ct.inner;
        self.wrap(py, |e| e.rotate(c, step))
    }
    /// ``ct + pt`` for a ``ProtectedPlaintext`` at the ciphertext's level and scale.
    fn add_plain(
        &self,
        py: Python<'_>,
        ct: Pct<'_>,
        pt: &ProtectedPlaintext,
    ) -> PyResult<ProtectedCiphertext> {
        let (c, p) = (&ct.inner, &pt.inner);
        self.wrap(py, |e| e.add_plain(c, p))
    }
    /// ``ct · pt`` for a ``ProtectedPlaintext`` at the ciphertext's level, not rescaled.
    fn mul_plain(
        &self,
        py: Python<'_>,
        ct: Pct<'_>,
        pt: &ProtectedPlaintext,
    ) -> PyResult<ProtectedCiphertext> {
        let (c, p) = (&ct.inner, &pt.inner);
        self.wrap(py, |e| e.mul_plain(c, p))
    }
    /// A protected copy.
    fn copy(&self, py: Python<'_>, ct: Pct<'_>) -> PyResult<ProtectedCiphertext> {
        let c = &ct.inner;
        self.wrap(py, |e| e.try_clone(c))
    }
}

/// Registers `Protection` and `ProtectedSecretKey` (module `rhea`).
pub(crate) fn register_top(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Protection>()?;
    m.add_class::<ProtectedSecretKey>()
}

/// Registers the CKKS protected classes (module `rhea.ckks`).
pub(crate) fn register_ckks(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ProtectedKeyGenerator>()?;
    m.add_class::<ProtectedPlaintext>()?;
    m.add_class::<ProtectedEncryptor>()?;
    m.add_class::<ProtectedDecryptor>()?;
    m.add_class::<ProtectedCiphertext>()?;
    m.add_class::<ProtectedEvaluator>()
}
