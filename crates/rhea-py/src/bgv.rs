//! BGV: `rhea.bgv.BgvContext`, `KeyGenerator`, `Encoder`, `Encryptor`, `Decryptor`,
//! `Plaintext`, `Ciphertext`, `Decrypted`, `Evaluator`, with int64 numpy arrays in and out.
//!
//! Ciphertext operators as for CKKS: `a + b`, `a - b`, `a * b` (relinearised), `-a`, integer
//! constants, plaintexts, `a << k` / `a >> k` (row rotations).

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyInt;
use rhea::bgv::{
    BgvContext as RContext, Ciphertext as RCiphertext, Decrypted as RDecrypted,
    Decryptor as RDecryptor, Encoder as REncoder, Encryptor as REncryptor, Evaluator as REvaluator,
    KeyGenerator as RKeyGenerator, Plaintext as RPlaintext,
};

use crate::ckks::lock;
use crate::convert::{i64_array, integers, seed};
use crate::errors::{invalid, run};
use crate::keys::{GaloisKeys, PublicKey, RelinearizationKey, SecretKey};
use crate::params::{device_or_best, BgvParameters, Device};

/// A BGV context: parameters on a device (``None``: ``Device.best()``).
#[pyclass(module = "rhea.bgv", frozen)]
pub struct BgvContext {
    pub(crate) inner: RContext,
}

#[pymethods]
impl BgvContext {
    #[new]
    #[pyo3(signature = (params, device = None))]
    fn new(py: Python<'_>, params: &BgvParameters, device: Option<Device>) -> PyResult<Self> {
        let device = device_or_best(py, device)?;
        let p = &params.inner;
        Ok(Self {
            inner: run(py, || RContext::new(p, device))?,
        })
    }
    /// The parameters.
    #[getter]
    fn params(&self) -> BgvParameters {
        BgvParameters {
            inner: self.inner.params().clone(),
        }
    }
    /// The plaintext modulus ``t``.
    #[getter]
    fn t(&self) -> u64 {
        self.inner.t()
    }
    /// The device.
    #[getter]
    fn device(&self) -> Device {
        Device {
            inner: self.inner.device(),
        }
    }
    fn __repr__(&self) -> String {
        format!(
            "BgvContext(t={}, levels={}, device={})",
            self.inner.t(),
            self.inner.params().max_level(),
            self.inner.device()
        )
    }
}

/// Generates the keys of a BGV context (``seed``: 32 bytes, tests only).
#[pyclass(name = "KeyGenerator", module = "rhea.bgv", frozen)]
pub struct BgvKeyGenerator {
    inner: Mutex<RKeyGenerator>,
}

#[pymethods]
impl BgvKeyGenerator {
    #[new]
    #[pyo3(signature = (ctx, seed = None))]
    fn new(py: Python<'_>, ctx: &BgvContext, seed: Option<Vec<u8>>) -> PyResult<Self> {
        let c = &ctx.inner;
        let kg = match self::seed(py, seed)? {
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
    /// Galois keys for row rotations by ``steps`` and, if ``column_swap``, the column swap.
    #[pyo3(signature = (sk, steps, column_swap = false))]
    fn galois_keys(
        &self,
        py: Python<'_>,
        sk: &SecretKey,
        steps: Vec<i64>,
        column_swap: bool,
    ) -> PyResult<GaloisKeys> {
        let sk = &*sk.inner;
        let k = run(py, || {
            lock(&self.inner).galois_keys(sk, &steps, column_swap)
        })?;
        Ok(GaloisKeys { inner: Arc::new(k) })
    }
    /// The Galois keys ``Evaluator.inner_sum`` needs.
    fn inner_sum_keys(&self, py: Python<'_>, sk: &SecretKey) -> PyResult<GaloisKeys> {
        let sk = &*sk.inner;
        let k = run(py, || lock(&self.inner).inner_sum_keys(sk))?;
        Ok(GaloisKeys { inner: Arc::new(k) })
    }
}

/// A BGV plaintext.
#[pyclass(module = "rhea.bgv", frozen)]
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
    /// A copy on the device of ``ctx`` (same parameters).
    fn to_device(&self, py: Python<'_>, ctx: &BgvContext) -> PyResult<Self> {
        let (pt, c) = (&self.inner, &ctx.inner);
        Ok(Self {
            inner: run(py, || pt.to_device(c))?,
        })
    }
    fn __repr__(&self) -> String {
        format!("bgv.Plaintext(level={})", self.inner.level())
    }
}

/// A decryption: the plaintext polynomial and the measured noise budget (bits).
#[pyclass(module = "rhea.bgv", frozen)]
pub struct Decrypted {
    inner: RDecrypted,
}

#[pymethods]
impl Decrypted {
    /// The noise budget left, in bits (``None`` when unknown).
    #[getter]
    fn noise_budget(&self) -> Option<u32> {
        self.inner.noise_budget()
    }
    /// The level of the decrypted ciphertext.
    #[getter]
    fn level(&self) -> usize {
        self.inner.level()
    }
    fn __repr__(&self) -> String {
        format!(
            "bgv.Decrypted(level={}, noise_budget={:?})",
            self.inner.level(),
            self.inner.noise_budget()
        )
    }
}

/// Batch-encodes integer arrays (at most ``N`` values, zero-padded) and decodes them.
/// Values are taken modulo nothing: each must lie in ``[0, t)`` or, with negatives,
/// ``(-t/2, t/2]`` (``InvalidInputError`` otherwise).
#[pyclass(module = "rhea.bgv", frozen)]
pub struct Encoder {
    inner: REncoder,
    max_level: usize,
}

#[pymethods]
impl Encoder {
    #[new]
    fn new(py: Python<'_>, ctx: &BgvContext) -> PyResult<Self> {
        let c = &ctx.inner;
        Ok(Self {
            inner: run(py, || REncoder::new(c))?,
            max_level: c.params().max_level(),
        })
    }
    /// The number of slots.
    #[getter]
    fn slots(&self) -> usize {
        self.inner.slots()
    }
    /// Encodes int64 ``values`` at ``level`` (default: the top level); a negative value makes
    /// the encoding signed (centred residues).
    #[pyo3(signature = (values, level = None))]
    fn encode(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        level: Option<usize>,
    ) -> PyResult<Plaintext> {
        let v = integers(values)?;
        let (enc, level) = (&self.inner, level.unwrap_or(self.max_level));
        let inner = run(py, move || {
            if v.iter().any(|&x| x < 0) {
                enc.encode_signed_at(&v, level)
            } else {
                let u: Vec<u64> = v.iter().map(|&x| x as u64).collect();
                enc.encode_at(&u, level)
            }
        })?;
        Ok(Plaintext { inner })
    }
    /// The slots in ``[0, t)``, as an int64 array.
    fn decode<'py>(
        &self,
        py: Python<'py>,
        d: &Decrypted,
    ) -> PyResult<Bound<'py, numpy::PyArray1<i64>>> {
        let (enc, d) = (&self.inner, &d.inner);
        let v = run(py, || enc.decode(d))?;
        Ok(i64_array(py, v.into_iter().map(|x| x as i64).collect()))
    }
    /// The slots centred in ``(-t/2, t/2]``, as an int64 array.
    fn decode_signed<'py>(
        &self,
        py: Python<'py>,
        d: &Decrypted,
    ) -> PyResult<Bound<'py, numpy::PyArray1<i64>>> {
        let (enc, d) = (&self.inner, &d.inner);
        Ok(i64_array(py, run(py, || enc.decode_signed(d))?))
    }
}

/// Encrypts under a public key (or a secret key).
#[pyclass(module = "rhea.bgv", frozen)]
pub struct Encryptor {
    inner: REncryptor,
    eval: Arc<Shared>,
}

#[pymethods]
impl Encryptor {
    #[new]
    #[pyo3(signature = (ctx, key, seed = None, evaluator = None))]
    fn new(
        py: Python<'_>,
        ctx: &BgvContext,
        key: &Bound<'_, PyAny>,
        seed: Option<Vec<u8>>,
        evaluator: Option<PyRef<'_, Evaluator>>,
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
            None => Arc::new(Shared {
                ev: REvaluator::new(c),
                relin: false,
                galois: false,
            }),
        };
        Ok(Self { inner: enc, eval })
    }
    /// Encrypts ``pt``.
    fn encrypt(&self, py: Python<'_>, pt: &Plaintext) -> PyResult<Ciphertext> {
        let (enc, p) = (&self.inner, &pt.inner);
        Ok(Ciphertext {
            inner: run(py, || enc.encrypt(p))?,
            eval: Some(self.eval.clone()),
        })
    }
}

/// Decrypts with the secret key (and measures the noise budget).
#[pyclass(module = "rhea.bgv", frozen)]
pub struct Decryptor {
    inner: RDecryptor,
}

#[pymethods]
impl Decryptor {
    #[new]
    fn new(py: Python<'_>, ctx: &BgvContext, sk: &SecretKey) -> PyResult<Self> {
        let (c, sk) = (&ctx.inner, sk.inner.clone());
        Ok(Self {
            inner: run(py, || RDecryptor::new(c, sk))?,
        })
    }
    /// Decrypts ``ct`` (raises ``NoiseBudgetExhaustedError`` if its noise used up the modulus).
    fn decrypt(&self, py: Python<'_>, ct: PyRef<'_, Ciphertext>) -> PyResult<Decrypted> {
        let (d, c) = (&self.inner, &ct.inner);
        Ok(Decrypted {
            inner: run(py, || d.decrypt(c))?,
        })
    }
    /// The noise budget of ``ct`` in bits (``None`` when unknown).
    fn noise_budget(&self, py: Python<'_>, ct: PyRef<'_, Ciphertext>) -> PyResult<Option<u32>> {
        let (d, c) = (&self.inner, &ct.inner);
        run(py, || d.noise_budget(c))
    }
}

/// The evaluator shared by `Evaluator` and its results.
pub(crate) struct Shared {
    ev: REvaluator,
    relin: bool,
    galois: bool,
}

/// A BGV ciphertext (``level``; operators evaluate on ``evaluator``).
#[pyclass(module = "rhea.bgv")]
pub struct Ciphertext {
    pub(crate) inner: RCiphertext,
    pub(crate) eval: Option<Arc<Shared>>,
}

fn pick(
    a: &Option<Arc<Shared>>,
    b: Option<&Option<Arc<Shared>>>,
    need: fn(&Shared) -> bool,
) -> PyResult<Arc<Shared>> {
    let c = [Some(a), b];
    c.iter()
        .flatten()
        .filter_map(|e| e.as_ref())
        .find(|e| need(e))
        .or_else(|| c.iter().flatten().filter_map(|e| e.as_ref()).next())
        .cloned()
        .ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err(
                "this ciphertext has no evaluator: set `ct.evaluator = ev`",
            )
        })
}

impl Ciphertext {
    fn op(&self, py: Python<'_>, other: &Bound<'_, PyAny>, which: char) -> PyResult<Py<PyAny>> {
        let a = &self.inner;
        let out = if let Ok(b) = other.extract::<PyRef<'_, Ciphertext>>() {
            let need: fn(&Shared) -> bool = if which == '*' { |e| e.relin } else { |_| true };
            let s = pick(&self.eval, Some(&b.eval), need)?;
            let (ev, b) = (&s.ev, &b.inner);
            let r = run(py, || match which {
                '+' => ev.add(a, b),
                '-' => ev.sub(a, b),
                'r' => ev.sub(b, a),
                _ => ev.mul(a, b),
            })?;
            (r, s)
        } else if let Ok(p) = other.extract::<PyRef<'_, Plaintext>>() {
            let s = pick(&self.eval, None, |_| true)?;
            let (ev, p) = (&s.ev, &p.inner);
            let r = run(py, || match which {
                '+' => ev.add_plain(a, p),
                '-' => ev.sub_plain(a, p),
                'r' => ev.add_plain(&ev.neg(a)?, p),
                _ => ev.mul_plain(a, p),
            })?;
            (r, s)
        } else if other.is_instance_of::<PyInt>() {
            let k: i64 = other.extract()?;
            let s = pick(&self.eval, None, |_| true)?;
            let ev = &s.ev;
            let r = run(py, || match which {
                '+' => ev.add_const(a, k),
                '-' => ev.sub_const(a, k),
                'r' => ev.add_const(&ev.neg(a)?, k),
                _ => ev.mul_const(a, k),
            })?;
            (r, s)
        } else {
            return Ok(py.NotImplemented());
        };
        Ok(Ciphertext {
            inner: out.0,
            eval: Some(out.1),
        }
        .into_pyobject(py)?
        .into_any()
        .unbind())
    }
    fn rot(&self, py: Python<'_>, step: i64) -> PyResult<Ciphertext> {
        let s = pick(&self.eval, None, |e| e.galois)?;
        let (ev, a) = (&s.ev, &self.inner);
        Ok(Ciphertext {
            inner: run(py, || ev.rotate_rows(a, step))?,
            eval: Some(s.clone()),
        })
    }
}

#[pymethods]
impl Ciphertext {
    /// Its level.
    #[getter]
    fn level(&self) -> usize {
        self.inner.level()
    }
    /// The tracked bound on its noise, in bits.
    #[getter]
    fn noise_bound_bits(&self) -> f64 {
        self.inner.noise_bound_bits()
    }
    /// The device it lives on.
    #[getter]
    fn device(&self) -> Device {
        Device {
            inner: self.inner.device(),
        }
    }
    /// The evaluator its operators use.
    #[getter]
    fn evaluator(&self) -> Option<Evaluator> {
        self.eval.clone().map(|shared| Evaluator { shared })
    }
    #[setter]
    fn set_evaluator(&mut self, ev: Option<PyRef<'_, Evaluator>>) {
        self.eval = ev.map(|e| e.shared.clone());
    }
    fn __repr__(&self) -> String {
        format!(
            "bgv.Ciphertext(level={}, noise_bound=2^{:.1}, device={})",
            self.inner.level(),
            self.inner.noise_bound_bits(),
            self.inner.device()
        )
    }
    fn __add__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.op(py, o, '+')
    }
    fn __radd__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.op(py, o, '+')
    }
    fn __sub__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.op(py, o, '-')
    }
    fn __rsub__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.op(py, o, 'r')
    }
    fn __mul__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.op(py, o, '*')
    }
    fn __rmul__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.op(py, o, '*')
    }
    fn __neg__(&self, py: Python<'_>) -> PyResult<Ciphertext> {
        let s = pick(&self.eval, None, |_| true)?;
        let (ev, a) = (&s.ev, &self.inner);
        Ok(Ciphertext {
            inner: run(py, || ev.neg(a))?,
            eval: Some(s.clone()),
        })
    }
    /// A copy on the device of ``ctx`` (same parameters, words unchanged); the evaluator is
    /// dropped (set one of that context).
    fn to_device(&self, py: Python<'_>, ctx: &BgvContext) -> PyResult<Self> {
        let (ct, c) = (&self.inner, &ctx.inner);
        Ok(Self {
            inner: run(py, || ct.to_device(c))?,
            eval: None,
        })
    }
    /// ``ct << k``: rows rotated left by ``k``.
    fn __lshift__(&self, py: Python<'_>, step: i64) -> PyResult<Ciphertext> {
        self.rot(py, step)
    }
    /// ``ct >> k``: rows rotated right by ``k``.
    fn __rshift__(&self, py: Python<'_>, step: i64) -> PyResult<Ciphertext> {
        self.rot(py, step.checked_neg().unwrap_or(i64::MAX))
    }
}

/// Evaluates on BGV ciphertexts (``relinearization_key`` for products, ``galois_keys`` for
/// rotations; ``auto_mod_switch`` switches modulus after products, ``noise_check`` refuses
/// results whose noise would exceed the modulus).
#[pyclass(module = "rhea.bgv", frozen)]
pub struct Evaluator {
    shared: Arc<Shared>,
}

type Ct<'a> = PyRef<'a, Ciphertext>;

impl Evaluator {
    fn wrap(&self, r: RCiphertext) -> Ciphertext {
        Ciphertext {
            inner: r,
            eval: Some(self.shared.clone()),
        }
    }
    fn un(
        &self,
        py: Python<'_>,
        a: Ct<'_>,
        f: impl FnOnce(&REvaluator, &RCiphertext) -> rhea::Result<RCiphertext> + Send,
    ) -> PyResult<Ciphertext> {
        let (ev, a) = (&self.shared.ev, &a.inner);
        Ok(self.wrap(run(py, || f(ev, a))?))
    }
    fn bin(
        &self,
        py: Python<'_>,
        a: Ct<'_>,
        b: Ct<'_>,
        f: impl FnOnce(&REvaluator, &RCiphertext, &RCiphertext) -> rhea::Result<RCiphertext> + Send,
    ) -> PyResult<Ciphertext> {
        let (ev, a, b) = (&self.shared.ev, &a.inner, &b.inner);
        Ok(self.wrap(run(py, || f(ev, a, b))?))
    }
    /// An in-place operation on `a` with `b` (which may be `a` itself: then on a copy of it).
    fn assign_ct(
        &self,
        py: Python<'_>,
        a: &Bound<'_, Ciphertext>,
        b: &Bound<'_, Ciphertext>,
        f: impl FnOnce(&REvaluator, &mut RCiphertext, &RCiphertext) -> rhea::Result<()> + Send,
    ) -> PyResult<()> {
        let ev = &self.shared.ev;
        if a.is(b) {
            let mut a = a.borrow_mut();
            let inner = &mut a.inner;
            run(py, || {
                let copy = inner.try_clone()?;
                f(ev, inner, &copy)
            })?;
            a.eval = Some(self.shared.clone());
            return Ok(());
        }
        let (mut a, b) = (a.borrow_mut(), b.borrow());
        let (inner, b_inner) = (&mut a.inner, &b.inner);
        run(py, || f(ev, inner, b_inner))?;
        a.eval = Some(self.shared.clone());
        Ok(())
    }
    /// An in-place operation on `a` alone.
    fn assign(
        &self,
        py: Python<'_>,
        mut a: PyRefMut<'_, Ciphertext>,
        f: impl FnOnce(&REvaluator, &mut RCiphertext) -> rhea::Result<()> + Send,
    ) -> PyResult<()> {
        let ev = &self.shared.ev;
        let inner = &mut a.inner;
        run(py, || f(ev, inner))?;
        a.eval = Some(self.shared.clone());
        Ok(())
    }
}

#[pymethods]
impl Evaluator {
    #[new]
    #[pyo3(signature = (ctx, relinearization_key = None, galois_keys = None, *,
                        auto_mod_switch = true, noise_check = true))]
    fn new(
        py: Python<'_>,
        ctx: &BgvContext,
        relinearization_key: Option<&RelinearizationKey>,
        galois_keys: Option<&GaloisKeys>,
        auto_mod_switch: bool,
        noise_check: bool,
    ) -> PyResult<Self> {
        let c = &ctx.inner;
        let rlk = relinearization_key.map(|k| k.inner.clone());
        let gk = galois_keys.map(|k| k.inner.clone());
        let (relin, galois) = (rlk.is_some(), gk.is_some());
        let ev = run(py, move || {
            let mut ev = REvaluator::new(c)
                .with_auto_mod_switch(auto_mod_switch)
                .with_noise_check(noise_check);
            if let Some(k) = rlk {
                ev = ev.with_relinearization_key(k)?;
            }
            if let Some(k) = gk {
                ev = ev.with_galois_keys(k)?;
            }
            Ok(ev)
        })?;
        Ok(Self {
            shared: Arc::new(Shared { ev, relin, galois }),
        })
    }
    /// ``a + b``.
    fn add(&self, py: Python<'_>, a: Ct<'_>, b: Ct<'_>) -> PyResult<Ciphertext> {
        self.bin(py, a, b, |ev, a, b| ev.add(a, b))
    }
    /// ``a - b``.
    fn sub(&self, py: Python<'_>, a: Ct<'_>, b: Ct<'_>) -> PyResult<Ciphertext> {
        self.bin(py, a, b, |ev, a, b| ev.sub(a, b))
    }
    /// ``a · b`` (relinearised; modulus switched in auto mode).
    fn mul(&self, py: Python<'_>, a: Ct<'_>, b: Ct<'_>) -> PyResult<Ciphertext> {
        self.bin(py, a, b, |ev, a, b| ev.mul(a, b))
    }
    /// ``a · b`` without relinearisation.
    fn mul_no_relin(&self, py: Python<'_>, a: Ct<'_>, b: Ct<'_>) -> PyResult<Ciphertext> {
        self.bin(py, a, b, |ev, a, b| ev.mul_no_relin(a, b))
    }
    /// ``a²``.
    fn square(&self, py: Python<'_>, a: Ct<'_>) -> PyResult<Ciphertext> {
        self.un(py, a, |ev, a| ev.square(a))
    }
    /// ``-a``.
    fn neg(&self, py: Python<'_>, a: Ct<'_>) -> PyResult<Ciphertext> {
        self.un(py, a, |ev, a| ev.neg(a))
    }
    /// A 3-component ciphertext back to 2.
    fn relinearize(&self, py: Python<'_>, a: Ct<'_>) -> PyResult<Ciphertext> {
        self.un(py, a, |ev, a| ev.relinearize(a))
    }
    /// ``ct + pt``.
    fn add_plain(&self, py: Python<'_>, ct: Ct<'_>, pt: &Plaintext) -> PyResult<Ciphertext> {
        let p = &pt.inner;
        self.un(py, ct, |ev, a| ev.add_plain(a, p))
    }
    /// ``ct - pt``.
    fn sub_plain(&self, py: Python<'_>, ct: Ct<'_>, pt: &Plaintext) -> PyResult<Ciphertext> {
        let p = &pt.inner;
        self.un(py, ct, |ev, a| ev.sub_plain(a, p))
    }
    /// ``ct · pt``.
    fn mul_plain(&self, py: Python<'_>, ct: Ct<'_>, pt: &Plaintext) -> PyResult<Ciphertext> {
        let p = &pt.inner;
        self.un(py, ct, |ev, a| ev.mul_plain(a, p))
    }
    /// ``ct + c``.
    fn add_const(&self, py: Python<'_>, ct: Ct<'_>, c: i64) -> PyResult<Ciphertext> {
        self.un(py, ct, move |ev, a| ev.add_const(a, c))
    }
    /// ``ct - c``.
    fn sub_const(&self, py: Python<'_>, ct: Ct<'_>, c: i64) -> PyResult<Ciphertext> {
        self.un(py, ct, move |ev, a| ev.sub_const(a, c))
    }
    /// ``ct · c``.
    fn mul_const(&self, py: Python<'_>, ct: Ct<'_>, c: i64) -> PyResult<Ciphertext> {
        self.un(py, ct, move |ev, a| ev.mul_const(a, c))
    }
    /// One modulus switch (one level down).
    fn mod_switch(&self, py: Python<'_>, a: Ct<'_>) -> PyResult<Ciphertext> {
        self.un(py, a, |ev, a| ev.mod_switch(a))
    }
    /// Modulus switches down to ``level``.
    fn mod_switch_to_level(&self, py: Python<'_>, a: Ct<'_>, level: usize) -> PyResult<Ciphertext> {
        self.un(py, a, move |ev, a| ev.mod_switch_to_level(a, level))
    }
    /// Drops primes down to ``level`` (no noise reduction).
    fn drop_to_level(&self, py: Python<'_>, a: Ct<'_>, level: usize) -> PyResult<Ciphertext> {
        self.un(py, a, move |ev, a| ev.drop_to_level(a, level))
    }
    /// Both rows rotated left by ``step``.
    fn rotate_rows(&self, py: Python<'_>, a: Ct<'_>, step: i64) -> PyResult<Ciphertext> {
        self.un(py, a, move |ev, a| ev.rotate_rows(a, step))
    }
    /// The two rows swapped.
    fn rotate_columns(&self, py: Python<'_>, a: Ct<'_>) -> PyResult<Ciphertext> {
        self.un(py, a, |ev, a| ev.rotate_columns(a))
    }
    /// The sum of all slots, in every slot (keys: ``KeyGenerator.inner_sum_keys``).
    fn inner_sum(&self, py: Python<'_>, a: Ct<'_>) -> PyResult<Ciphertext> {
        self.un(py, a, |ev, a| ev.inner_sum(a))
    }
    // ------------------------------------------------------------------ in place

    /// ``a += b``.
    fn add_assign(
        &self,
        py: Python<'_>,
        a: &Bound<'_, Ciphertext>,
        b: &Bound<'_, Ciphertext>,
    ) -> PyResult<()> {
        self.assign_ct(py, a, b, |ev, a, b| ev.add_assign(a, b))
    }
    /// ``a -= b``.
    fn sub_assign(
        &self,
        py: Python<'_>,
        a: &Bound<'_, Ciphertext>,
        b: &Bound<'_, Ciphertext>,
    ) -> PyResult<()> {
        self.assign_ct(py, a, b, |ev, a, b| ev.sub_assign(a, b))
    }
    /// ``a *= b`` (as ``mul``: relinearised, modulus switched in auto mode).
    fn mul_assign(
        &self,
        py: Python<'_>,
        a: &Bound<'_, Ciphertext>,
        b: &Bound<'_, Ciphertext>,
    ) -> PyResult<()> {
        self.assign_ct(py, a, b, |ev, a, b| ev.mul_assign(a, b))
    }
    /// ``a = a²`` (as ``square``).
    fn square_assign(&self, py: Python<'_>, a: PyRefMut<'_, Ciphertext>) -> PyResult<()> {
        self.assign(py, a, |ev, a| ev.square_assign(a))
    }
    /// ``a = -a``.
    fn neg_assign(&self, py: Python<'_>, a: PyRefMut<'_, Ciphertext>) -> PyResult<()> {
        self.assign(py, a, |ev, a| ev.neg_assign(a))
    }
    /// A 3-component ciphertext back to 2, in place.
    fn relinearize_assign(&self, py: Python<'_>, a: PyRefMut<'_, Ciphertext>) -> PyResult<()> {
        self.assign(py, a, |ev, a| ev.relinearize_assign(a))
    }
    /// ``ct += pt``.
    fn add_plain_assign(
        &self,
        py: Python<'_>,
        ct: PyRefMut<'_, Ciphertext>,
        pt: &Plaintext,
    ) -> PyResult<()> {
        let p = &pt.inner;
        self.assign(py, ct, |ev, a| ev.add_plain_assign(a, p))
    }
    /// ``ct -= pt``.
    fn sub_plain_assign(
        &self,
        py: Python<'_>,
        ct: PyRefMut<'_, Ciphertext>,
        pt: &Plaintext,
    ) -> PyResult<()> {
        let p = &pt.inner;
        self.assign(py, ct, |ev, a| ev.sub_plain_assign(a, p))
    }
    /// ``ct *= pt``.
    fn mul_plain_assign(
        &self,
        py: Python<'_>,
        ct: PyRefMut<'_, Ciphertext>,
        pt: &Plaintext,
    ) -> PyResult<()> {
        let p = &pt.inner;
        self.assign(py, ct, |ev, a| ev.mul_plain_assign(a, p))
    }
    /// ``ct += c``.
    fn add_const_assign(
        &self,
        py: Python<'_>,
        ct: PyRefMut<'_, Ciphertext>,
        c: i64,
    ) -> PyResult<()> {
        self.assign(py, ct, move |ev, a| ev.add_const_assign(a, c))
    }
    /// ``ct -= c``.
    fn sub_const_assign(
        &self,
        py: Python<'_>,
        ct: PyRefMut<'_, Ciphertext>,
        c: i64,
    ) -> PyResult<()> {
        self.assign(py, ct, move |ev, a| ev.sub_const_assign(a, c))
    }
    /// ``ct *= c``.
    fn mul_const_assign(
        &self,
        py: Python<'_>,
        ct: PyRefMut<'_, Ciphertext>,
        c: i64,
    ) -> PyResult<()> {
        self.assign(py, ct, move |ev, a| ev.mul_const_assign(a, c))
    }
    /// One modulus switch (one level down), in place.
    fn mod_switch_assign(&self, py: Python<'_>, a: PyRefMut<'_, Ciphertext>) -> PyResult<()> {
        self.assign(py, a, |ev, a| ev.mod_switch_assign(a))
    }
    /// Both rows rotated left by ``step``, in place.
    fn rotate_rows_assign(
        &self,
        py: Python<'_>,
        a: PyRefMut<'_, Ciphertext>,
        step: i64,
    ) -> PyResult<()> {
        self.assign(py, a, move |ev, a| ev.rotate_rows_assign(a, step))
    }
    /// The two rows swapped, in place.
    fn rotate_columns_assign(&self, py: Python<'_>, a: PyRefMut<'_, Ciphertext>) -> PyResult<()> {
        self.assign(py, a, |ev, a| ev.rotate_columns_assign(a))
    }
    /// The estimated noise budget of ``ct`` in bits (from the tracked bound).
    fn estimated_budget(&self, ct: Ct<'_>) -> i64 {
        self.shared.ev.estimated_budget(&ct.inner)
    }
}

/// Registers the classes of this module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<BgvContext>()?;
    m.add_class::<BgvKeyGenerator>()?;
    m.add_class::<Plaintext>()?;
    m.add_class::<Decrypted>()?;
    m.add_class::<Encoder>()?;
    m.add_class::<Encryptor>()?;
    m.add_class::<Decryptor>()?;
    m.add_class::<Ciphertext>()?;
    m.add_class::<Evaluator>()?;
    Ok(())
}
