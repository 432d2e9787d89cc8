//! `rhea.ckks.Ciphertext` and its Python operators.
//!
//! A ciphertext remembers the evaluator that produced it (`ct.evaluator`; a fresh encryption:
//! the encryptor's, by default one without keys), and its operators run on it: `a + b`,
//! `a - b`, `a * b` (multiply, relinearise, rescale in the default auto-rescale mode), `-a`,
//! constants (`a * 0.5`, `2 + a`, `a * 1j`, `a * 3` an exact integer product), plaintexts
//! (`a + pt`, `a * pt`), and rotations (`a << k` rotates left by `k` slots, `a >> k` right).
//! Of two operands, the evaluator with the keys the operation needs is used.

use std::sync::Arc;

use numpy::Complex64;
use pyo3::prelude::*;
use pyo3::types::{PyComplex, PyFloat, PyInt};
use rhea::ckks::{Ciphertext as RCiphertext, Evaluator as REvaluator};

use crate::ckks::{CkksContext, Plaintext};
use crate::errors::run;
use crate::params::Device;

/// An evaluator shared by the Python `Evaluator` and the ciphertexts it produced, with what
/// keys it has (to pick an operand's evaluator for an operator).
pub(crate) struct EvalShared {
    pub(crate) ev: REvaluator,
    pub(crate) relin: bool,
    pub(crate) galois: bool,
}

impl EvalShared {
    /// An evaluator without keys.
    pub(crate) fn new(ev: REvaluator) -> Self {
        Self {
            ev,
            relin: false,
            galois: false,
        }
    }
}

/// A CKKS ciphertext: ``level`` (rescalings left), ``scale``, ``slots``, ``device``; Python
/// operators evaluate on ``evaluator`` (see the module's documentation).
#[pyclass(module = "rhea.ckks")]
pub struct Ciphertext {
    pub(crate) inner: RCiphertext,
    pub(crate) eval: Option<Arc<EvalShared>>,
}

impl Ciphertext {
    pub(crate) fn new(inner: RCiphertext, eval: Option<Arc<EvalShared>>) -> Self {
        Self { inner, eval }
    }
}

/// The operand of an operator.
enum Operand<'a> {
    Ct(PyRef<'a, Ciphertext>),
    Pt(PyRef<'a, Plaintext>),
    Int(i64),
    Real(f64),
    Complex(Complex64),
}

fn operand<'a>(other: &Bound<'a, PyAny>) -> Option<Operand<'a>> {
    if let Ok(c) = other.extract::<PyRef<'a, Ciphertext>>() {
        Some(Operand::Ct(c))
    } else if let Ok(p) = other.extract::<PyRef<'a, Plaintext>>() {
        Some(Operand::Pt(p))
    } else if other.is_instance_of::<PyInt>() {
        other.extract::<i64>().ok().map(Operand::Int)
    } else if other.is_instance_of::<PyFloat>() || other.hasattr("__float__").unwrap_or(false) {
        if other.is_instance_of::<PyComplex>() {
            other.extract::<Complex64>().ok().map(Operand::Complex)
        } else {
            other.extract::<f64>().ok().map(Operand::Real)
        }
    } else if other.is_instance_of::<PyComplex>() || other.hasattr("__complex__").unwrap_or(false) {
        other.extract::<Complex64>().ok().map(Operand::Complex)
    } else {
        None
    }
}

#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    /// `other - self`.
    RSub,
    Mul,
}

/// The evaluator for an operation of `a` (and `b`): one with the keys it needs if either has.
fn pick(
    a: &Option<Arc<EvalShared>>,
    b: Option<&Option<Arc<EvalShared>>>,
    need: fn(&EvalShared) -> bool,
) -> Option<Arc<EvalShared>> {
    let cands = [Some(a), b];
    cands
        .iter()
        .flatten()
        .filter_map(|e| e.as_ref())
        .find(|e| need(e))
        .or_else(|| cands.iter().flatten().filter_map(|e| e.as_ref()).next())
        .cloned()
}

fn no_evaluator(py: Python<'_>) -> PyErr {
    crate::errors::invalid(
        py,
        "this ciphertext has no evaluator for its operators: set `ct.evaluator = ev` (or use \
         the evaluator's methods, e.g. `ev.add(a, b)`)",
    )
}

impl Ciphertext {
    fn binop(&self, py: Python<'_>, other: &Bound<'_, PyAny>, op: Op) -> PyResult<Py<PyAny>> {
        let Some(rhs) = operand(other) else {
            return Ok(py.NotImplemented());
        };
        let need: fn(&EvalShared) -> bool = match (&rhs, op) {
            (Operand::Ct(_), Op::Mul) => |e| e.relin,
            _ => |_| true,
        };
        let other_eval = match &rhs {
            Operand::Ct(c) => Some(&c.eval),
            _ => None,
        };
        let Some(shared) = pick(&self.eval, other_eval, need) else {
            return Err(no_evaluator(py));
        };
        let (ev, a) = (&shared.ev, &self.inner);
        // Plain references (Send) to the operands, for the closure that runs without the GIL.
        enum Rhs<'r> {
            Ct(&'r RCiphertext),
            Pt(&'r rhea::ckks::Plaintext),
            Int(i64),
            Real(f64),
            Complex(Complex64),
        }
        let rhs = match &rhs {
            Operand::Ct(b) => Rhs::Ct(&b.inner),
            Operand::Pt(p) => Rhs::Pt(&p.inner),
            Operand::Int(k) => Rhs::Int(*k),
            Operand::Real(c) => Rhs::Real(*c),
            Operand::Complex(c) => Rhs::Complex(*c),
        };
        let out = run(py, move || match (rhs, op) {
            (Rhs::Ct(b), Op::Add) => ev.add(a, b),
            (Rhs::Ct(b), Op::Sub) => ev.sub(a, b),
            (Rhs::Ct(b), Op::RSub) => ev.sub(b, a),
            (Rhs::Ct(b), Op::Mul) => ev.mul(a, b),
            (Rhs::Pt(p), Op::Add) => ev.add_plain(a, p),
            (Rhs::Pt(p), Op::Sub) => ev.sub_plain(a, p),
            (Rhs::Pt(p), Op::RSub) => ev.add_plain(&ev.neg(a)?, p),
            (Rhs::Pt(p), Op::Mul) => ev.mul_plain(a, p),
            (Rhs::Int(k), Op::Mul) => ev.mul_int(a, k),
            (Rhs::Int(k), Op::Add) => ev.add_const(a, k as f64),
            (Rhs::Int(k), Op::Sub) => ev.sub_const(a, k as f64),
            (Rhs::Int(k), Op::RSub) => ev.add_const(&ev.neg(a)?, k as f64),
            (Rhs::Real(c), Op::Add) => ev.add_const(a, c),
            (Rhs::Real(c), Op::Sub) => ev.sub_const(a, c),
            (Rhs::Real(c), Op::RSub) => ev.add_const(&ev.neg(a)?, c),
            (Rhs::Real(c), Op::Mul) => ev.mul_const(a, c),
            (Rhs::Complex(c), Op::Add) => ev.add_const_complex(a, c),
            (Rhs::Complex(c), Op::Sub) => ev.add_const_complex(a, -c),
            (Rhs::Complex(c), Op::RSub) => ev.add_const_complex(&ev.neg(a)?, c),
            (Rhs::Complex(c), Op::Mul) => ev.mul_const_complex(a, c),
        })?;
        Ok(Ciphertext::new(out, Some(shared.clone()))
            .into_pyobject(py)?
            .into_any()
            .unbind())
    }

    fn rotated(&self, py: Python<'_>, step: i64) -> PyResult<Ciphertext> {
        let Some(shared) = pick(&self.eval, None, |e| e.galois) else {
            return Err(no_evaluator(py));
        };
        let (ev, a) = (&shared.ev, &self.inner);
        let out = run(py, || ev.rotate(a, step))?;
        Ok(Ciphertext::new(out, Some(shared.clone())))
    }
}

#[pymethods]
impl Ciphertext {
    /// Its level: the rescalings it has left.
    #[getter]
    fn level(&self) -> usize {
        self.inner.level()
    }
    /// Its scale.
    #[getter]
    fn scale(&self) -> f64 {
        self.inner.scale()
    }
    /// ``log2`` of its scale.
    #[getter]
    fn log_scale(&self) -> f64 {
        self.inner.log_scale()
    }
    /// Its number of slots.
    #[getter]
    fn slots(&self) -> usize {
        self.inner.slots()
    }
    /// Its number of components (2, or 3 after a product without relinearisation).
    #[getter]
    fn size(&self) -> usize {
        self.inner.parts().len()
    }
    /// The device it lives on.
    #[getter]
    fn device(&self) -> Device {
        Device {
            inner: self.inner.device(),
        }
    }
    /// The evaluator its operators use (``None``: none).
    #[getter]
    fn evaluator(&self) -> Option<crate::ckks_eval::Evaluator> {
        self.eval
            .clone()
            .map(|shared| crate::ckks_eval::Evaluator { shared })
    }
    #[setter]
    fn set_evaluator(&mut self, ev: Option<PyRef<'_, crate::ckks_eval::Evaluator>>) {
        self.eval = ev.map(|e| e.shared.clone());
    }
    /// A copy (on the same device, with the same evaluator).
    fn copy(&self, py: Python<'_>) -> PyResult<Self> {
        let a = &self.inner;
        Ok(Self::new(run(py, || a.try_clone())?, self.eval.clone()))
    }
    fn __copy__(&self, py: Python<'_>) -> PyResult<Self> {
        self.copy(py)
    }
    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.copy(py)
    }
    /// A copy on the device of ``ctx`` (same parameters); the evaluator is dropped (set one
    /// of that context).
    fn to_device(&self, py: Python<'_>, ctx: &CkksContext) -> PyResult<Self> {
        let (a, c) = (&self.inner, &ctx.inner);
        Ok(Self::new(run(py, || a.to_device(c))?, None))
    }
    fn __len__(&self) -> usize {
        self.inner.slots()
    }
    fn __repr__(&self) -> String {
        format!(
            "Ciphertext(level={}, scale=2^{:.2}, slots={}, device={})",
            self.inner.level(),
            self.inner.log_scale(),
            self.inner.slots(),
            self.inner.device()
        )
    }
    fn __add__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binop(py, other, Op::Add)
    }
    fn __radd__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binop(py, other, Op::Add)
    }
    fn __sub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binop(py, other, Op::Sub)
    }
    fn __rsub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binop(py, other, Op::RSub)
    }
    fn __mul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binop(py, other, Op::Mul)
    }
    fn __rmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.binop(py, other, Op::Mul)
    }
    fn __neg__(&self, py: Python<'_>) -> PyResult<Ciphertext> {
        let Some(shared) = pick(&self.eval, None, |_| true) else {
            return Err(no_evaluator(py));
        };
        let (ev, a) = (&shared.ev, &self.inner);
        let out = run(py, || ev.neg(a))?;
        Ok(Ciphertext::new(out, Some(shared.clone())))
    }
    /// ``ct << k``: rotated left by ``k`` slots (needs the Galois key of ``k``).
    fn __lshift__(&self, py: Python<'_>, step: i64) -> PyResult<Ciphertext> {
        self.rotated(py, step)
    }
    /// ``ct >> k``: rotated right by ``k`` slots (needs the Galois key of ``-k``).
    fn __rshift__(&self, py: Python<'_>, step: i64) -> PyResult<Ciphertext> {
        self.rotated(py, step.checked_neg().unwrap_or(i64::MAX))
    }
}

/// Registers the classes of this module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Ciphertext>()?;
    Ok(())
}
