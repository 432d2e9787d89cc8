//! Devices and parameter sets: `rhea.Device`, `rhea.CkksParameters`, `rhea.BgvParameters`
//! (by preset, by intent, or explicit).

use pyo3::prelude::*;
use rhea::params::{
    BgvParameters as RBgvParameters, BgvParametersLiteral, CkksParameters as RCkksParameters,
    CkksParametersLiteral, Security,
};

use crate::errors::{invalid, run};

/// A device to compute on: the CPU or a CUDA GPU. The same code runs on both with
/// bit-identical results; ``Device.best()`` picks GPU 0 when one is usable, else the CPU.
#[pyclass(module = "rhea", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Device {
    pub(crate) inner: rhea::Device,
}

#[pymethods]
impl Device {
    /// The best device available: GPU 0 when a CUDA driver and a GPU of compute capability 7.5
    /// or later are present, else the CPU.
    #[staticmethod]
    fn best(py: Python<'_>) -> PyResult<Self> {
        let inner = run(py, || Ok(rhea::Device::best()))?;
        Ok(Self { inner })
    }

    /// The host CPU.
    #[staticmethod]
    fn cpu() -> Self {
        Self {
            inner: rhea::Device::Cpu,
        }
    }

    /// The CUDA GPU with ordinal ``index`` (checked when a context is created on it;
    /// ``check_supported()`` checks now).
    #[staticmethod]
    #[pyo3(signature = (index = 0))]
    fn cuda(index: usize) -> Self {
        Self {
            inner: rhea::Device::Cuda(index),
        }
    }

    /// Raises ``DeviceError`` saying why this device cannot be used on this machine.
    fn check_supported(&self, py: Python<'_>) -> PyResult<()> {
        let d = self.inner;
        run(py, move || d.check_supported())
    }

    /// Whether this is the CPU.
    #[getter]
    fn is_cpu(&self) -> bool {
        self.inner.is_cpu()
    }

    /// Whether this is a GPU.
    #[getter]
    fn is_gpu(&self) -> bool {
        !self.inner.is_cpu()
    }

    /// A human-readable name: ``"cpu"`` or ``"cuda:0 (NVIDIA H100 80GB HBM3)"``.
    #[getter]
    fn name(&self, py: Python<'_>) -> PyResult<String> {
        let d = self.inner;
        run(py, move || Ok(d.name()))
    }

    /// Waits until the device's queued work is done (for timing).
    fn synchronize(&self, py: Python<'_>) -> PyResult<()> {
        let d = self.inner;
        run(py, move || d.synchronize())
    }

    fn __repr__(&self) -> String {
        match self.inner {
            rhea::Device::Cpu => "Device.cpu()".into(),
            rhea::Device::Cuda(i) => format!("Device.cuda({i})"),
        }
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }
}

/// `Device` from an optional argument (`None`: `Device.best()`).
pub(crate) fn device_or_best(py: Python<'_>, device: Option<Device>) -> PyResult<rhea::Device> {
    match device {
        Some(d) => Ok(d.inner),
        None => run(py, || Ok(rhea::Device::best())),
    }
}

fn security(py: Python<'_>, bits: u32) -> PyResult<Security> {
    match bits {
        128 => Ok(Security::Bits128),
        192 => Ok(Security::Bits192),
        256 => Ok(Security::Bits256),
        _ => Err(invalid(
            py,
            format!("security must be 128, 192 or 256 bits, not {bits}"),
        )),
    }
}

/// Validated CKKS parameters: by preset (``CkksParameters.preset(name)``, names from
/// ``CkksParameters.presets()``), by intent (``CkksParameters.for_depth(depth, ...)``) or
/// explicit (``CkksParameters.custom(...)``).
#[pyclass(module = "rhea", frozen)]
#[derive(Clone)]
pub struct CkksParameters {
    pub(crate) inner: RCkksParameters,
}

#[pymethods]
impl CkksParameters {
    /// The named presets as ``(name, purpose)`` pairs.
    #[staticmethod]
    fn presets() -> Vec<(&'static str, &'static str)> {
        CkksParametersLiteral::presets()
            .into_iter()
            .map(|p| (p.name, p.purpose))
            .collect()
    }

    /// The preset ``name`` (see ``presets()``), validated; ``dnum`` overrides its number of
    /// key-switching digits.
    #[staticmethod]
    #[pyo3(signature = (name, dnum = None))]
    fn preset(py: Python<'_>, name: &str, dnum: Option<usize>) -> PyResult<Self> {
        let mut lit = CkksParametersLiteral::by_name(name).ok_or_else(|| {
            let names: Vec<_> = CkksParametersLiteral::presets()
                .iter()
                .map(|p| p.name)
                .collect();
            invalid(
                py,
                format!(
                    "no CKKS preset named {name:?}; the presets are {}",
                    names.join(", ")
                ),
            )
        })?;
        if let Some(d) = dnum {
            lit = lit.with_dnum(d);
        }
        Ok(Self {
            inner: run(py, move || lit.build())?,
        })
    }

    /// The smallest secure parameters for ``depth`` multiplications (parameters by intent):
    /// ``scale_bits`` (precision), ``first_prime_bits``, ``slots``, ``log_n``, ``dnum`` and
    /// ``security`` (128, 192 or 256 bits) narrow the choice. Raises ``InvalidParametersError``
    /// saying what to relax when nothing fits.
    #[staticmethod]
    #[pyo3(signature = (depth, *, scale_bits = None, first_prime_bits = None, slots = None,
                        log_n = None, dnum = None, security = None))]
    #[allow(clippy::too_many_arguments)]
    fn for_depth(
        py: Python<'_>,
        depth: usize,
        scale_bits: Option<u32>,
        first_prime_bits: Option<u32>,
        slots: Option<usize>,
        log_n: Option<u32>,
        dnum: Option<usize>,
        security: Option<u32>,
    ) -> PyResult<Self> {
        let mut intent = RCkksParameters::for_depth(depth);
        if let Some(b) = scale_bits {
            intent = intent.scale_bits(b);
        }
        if let Some(b) = first_prime_bits {
            intent = intent.first_prime_bits(b);
        }
        if let Some(s) = slots {
            intent = intent.slots(s);
        }
        if let Some(l) = log_n {
            intent = intent.log_n(l);
        }
        if let Some(d) = dnum {
            intent = intent.dnum(d);
        }
        if let Some(s) = security {
            intent = intent.security(self::security(py, s)?);
        }
        Ok(Self {
            inner: run(py, move || intent.build())?,
        })
    }

    /// Explicit parameters: ``log_n``, the bit sizes of the ``Q`` primes (``q_0`` first) and of
    /// the ``P`` primes, ``log_default_scale`` and ``dnum``. ``insecure=True`` accepts a set below
    /// 128-bit security (for tests only).
    #[staticmethod]
    #[pyo3(signature = (log_n, log_q, log_p, log_default_scale, dnum = 1, *, insecure = false))]
    fn custom(
        py: Python<'_>,
        log_n: u32,
        log_q: Vec<u32>,
        log_p: Vec<u32>,
        log_default_scale: u32,
        dnum: usize,
        insecure: bool,
    ) -> PyResult<Self> {
        let mut lit = CkksParametersLiteral {
            log_n,
            log_q,
            log_p,
            q: vec![],
            p: vec![],
            log_default_scale,
            dnum,
            secret: Default::default(),
            error_std_dev: rhea_sigma(),
            allow_insecure_below_128_bits: false,
        };
        if insecure {
            lit = lit.insecure_allow_below_128_bits();
        }
        Ok(Self {
            inner: run(py, move || lit.build())?,
        })
    }

    /// The ring degree ``N``.
    #[getter]
    fn n(&self) -> usize {
        self.inner.n()
    }
    /// ``log2 N``.
    #[getter]
    fn log_n(&self) -> u32 {
        self.inner.log_n()
    }
    /// The number of slots of a full encoding (``N/2``).
    #[getter]
    fn slots(&self) -> usize {
        self.inner.slots()
    }
    /// The highest level (fresh ciphertexts sit at ``default_level``).
    #[getter]
    fn max_level(&self) -> usize {
        self.inner.max_level()
    }
    /// The level a fresh encryption is at (below ``max_level`` in a bootstrappable preset).
    #[getter]
    fn default_level(&self) -> usize {
        self.inner.default_level()
    }
    /// The default scale ``Δ``.
    #[getter]
    fn default_scale(&self) -> f64 {
        self.inner.default_scale()
    }
    /// ``log2`` of the default scale.
    #[getter]
    fn log_default_scale(&self) -> u32 {
        self.inner.log_default_scale()
    }
    /// The number of key-switching digits.
    #[getter]
    fn dnum(&self) -> usize {
        self.inner.dnum()
    }
    /// ``log2(Q·P)``.
    #[getter]
    fn log_qp(&self) -> f64 {
        self.inner.log_qp()
    }
    /// The ``Q`` primes, ``q_0`` first.
    #[getter]
    fn q_primes(&self) -> Vec<u64> {
        self.inner.q_primes().to_vec()
    }
    /// The ``P`` primes.
    #[getter]
    fn p_primes(&self) -> Vec<u64> {
        self.inner.p_primes().to_vec()
    }
    /// Whether the set meets 128-bit security.
    #[getter]
    fn secure(&self) -> bool {
        self.inner.security().meets_128_bits
    }
    /// The id every key and ciphertext of these parameters carries.
    #[getter]
    fn id(&self) -> u64 {
        self.inner.id()
    }
    /// A multi-line description (primes, security, sizes).
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn __eq__(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
    fn __hash__(&self) -> u64 {
        self.inner.id()
    }
    fn __repr__(&self) -> String {
        format!("CkksParameters({})", self.inner)
    }
}

fn rhea_sigma() -> f64 {
    CkksParametersLiteral::n13_logqp200_levels2().error_std_dev
}

/// Validated BGV parameters: by preset (``BgvParameters.preset(name)``, names from
/// ``BgvParameters.presets()``) or by intent (``BgvParameters.for_depth(depth, ...)``).
#[pyclass(module = "rhea", frozen)]
#[derive(Clone)]
pub struct BgvParameters {
    pub(crate) inner: RBgvParameters,
}

#[pymethods]
impl BgvParameters {
    /// The named presets as ``(name, purpose)`` pairs.
    #[staticmethod]
    fn presets() -> Vec<(&'static str, &'static str)> {
        BgvParametersLiteral::presets()
            .into_iter()
            .map(|p| (p.name, p.purpose))
            .collect()
    }

    /// The preset ``name`` (see ``presets()``), validated.
    #[staticmethod]
    #[pyo3(signature = (name, dnum = None))]
    fn preset(py: Python<'_>, name: &str, dnum: Option<usize>) -> PyResult<Self> {
        let mut lit = BgvParametersLiteral::by_name(name).ok_or_else(|| {
            let names: Vec<_> = BgvParametersLiteral::presets()
                .iter()
                .map(|p| p.name)
                .collect();
            invalid(
                py,
                format!(
                    "no BGV preset named {name:?}; the presets are {}",
                    names.join(", ")
                ),
            )
        })?;
        if let Some(d) = dnum {
            lit = lit.with_dnum(d);
        }
        Ok(Self {
            inner: run(py, move || lit.build())?,
        })
    }

    /// The smallest secure parameters for ``depth`` multiplications with a plaintext modulus of
    /// ``plaintext_bits`` bits (or exactly ``plaintext_modulus``); ``margin_bits``, ``slots``,
    /// ``log_n``, ``dnum`` and ``security`` narrow the choice.
    #[staticmethod]
    #[pyo3(signature = (depth, *, plaintext_bits = None, plaintext_modulus = None,
                        margin_bits = None, slots = None, log_n = None, dnum = None,
                        security = None))]
    #[allow(clippy::too_many_arguments)]
    fn for_depth(
        py: Python<'_>,
        depth: usize,
        plaintext_bits: Option<u32>,
        plaintext_modulus: Option<u64>,
        margin_bits: Option<u32>,
        slots: Option<usize>,
        log_n: Option<u32>,
        dnum: Option<usize>,
        security: Option<u32>,
    ) -> PyResult<Self> {
        let mut intent = RBgvParameters::for_depth(depth);
        if let Some(b) = plaintext_bits {
            intent = intent.plaintext_bits(b);
        }
        if let Some(t) = plaintext_modulus {
            intent = intent.plaintext_modulus(t);
        }
        if let Some(b) = margin_bits {
            intent = intent.margin_bits(b);
        }
        if let Some(s) = slots {
            intent = intent.slots(s);
        }
        if let Some(l) = log_n {
            intent = intent.log_n(l);
        }
        if let Some(d) = dnum {
            intent = intent.dnum(d);
        }
        if let Some(s) = security {
            intent = intent.security(self::security(py, s)?);
        }
        Ok(Self {
            inner: run(py, move || intent.build())?,
        })
    }

    /// The plaintext modulus ``t``.
    #[getter]
    fn t(&self) -> u64 {
        self.inner.t()
    }
    /// The number of slots (``N`` with batching).
    #[getter]
    fn slots(&self) -> usize {
        self.inner.slots()
    }
    /// Whether ``t ≡ 1 (mod 2N)`` (slot packing).
    #[getter]
    fn batching(&self) -> bool {
        self.inner.batching()
    }
    /// The ring degree ``N``.
    #[getter]
    fn n(&self) -> usize {
        self.inner.n()
    }
    /// The highest level.
    #[getter]
    fn max_level(&self) -> usize {
        self.inner.max_level()
    }
    /// The id every key and ciphertext of these parameters carries.
    #[getter]
    fn id(&self) -> u64 {
        self.inner.id()
    }
    /// A multi-line description.
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn __eq__(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
    fn __hash__(&self) -> u64 {
        self.inner.id()
    }
    fn __repr__(&self) -> String {
        format!("BgvParameters({})", self.inner)
    }
}

/// Registers the classes of this module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Device>()?;
    m.add_class::<CkksParameters>()?;
    m.add_class::<BgvParameters>()?;
    Ok(())
}
