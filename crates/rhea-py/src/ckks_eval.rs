//! `rhea.ckks.Evaluator`: every CKKS evaluation operation, each with the GIL released.

use std::sync::Arc;

use numpy::Complex64;
use pyo3::prelude::*;
use rhea::ckks::{Ciphertext as RCiphertext, Evaluator as REvaluator};

pub(crate) use crate::ckks_ct::{Ciphertext, EvalShared};

use crate::ckks::{CkksContext, Plaintext};
use crate::errors::run;
use crate::keys::{GaloisKeys, RelinearizationKey};

/// Evaluates on ciphertexts of one context. ``relinearization_key`` is needed by products,
/// ``galois_keys`` by rotations and conjugation; ``auto_rescale`` (default ``True``) rescales
/// after every product; ``bootstrapper`` turns on automatic bootstrapping (an operand at level
/// 0 of an operation that rescales is refreshed first). Results remember this evaluator, so
/// their Python operators (``+ - * << >>``) run on it.
#[pyclass(module = "rhea.ckks", frozen)]
pub struct Evaluator {
    pub(crate) shared: Arc<EvalShared>,
}

/// A ciphertext argument's inner value.
type Ct<'a> = PyRef<'a, Ciphertext>;

/// A real or complex constant.
#[derive(FromPyObject)]
enum Constant {
    Real(f64),
    Complex(Complex64),
}

impl Evaluator {
    fn ev(&self) -> &REvaluator {
        &self.shared.ev
    }
    fn wrap(&self, ct: RCiphertext) -> Ciphertext {
        Ciphertext::new(ct, Some(self.shared.clone()))
    }
    fn unary(
        &self,
        py: Python<'_>,
        a: Ct<'_>,
        f: impl FnOnce(&REvaluator, &RCiphertext) -> rhea::Result<RCiphertext> + Send,
    ) -> PyResult<Ciphertext> {
        let (ev, a) = (self.ev(), &a.inner);
        Ok(self.wrap(run(py, || f(ev, a))?))
    }
    fn binary(
        &self,
        py: Python<'_>,
        a: Ct<'_>,
        b: Ct<'_>,
        f: impl FnOnce(&REvaluator, &RCiphertext, &RCiphertext) -> rhea::Result<RCiphertext> + Send,
    ) -> PyResult<Ciphertext> {
        let (ev, a, b) = (self.ev(), &a.inner, &b.inner);
        Ok(self.wrap(run(py, || f(ev, a, b))?))
    }
    /// An in-place operation on `a` with a second ciphertext `b` (which may be `a` itself).
    fn assign_ct(
        &self,
        py: Python<'_>,
        a: &Bound<'_, Ciphertext>,
        b: &Bound<'_, Ciphertext>,
        f: impl FnOnce(&REvaluator, &mut RCiphertext, &RCiphertext) -> rhea::Result<()> + Send,
    ) -> PyResult<()> {
        let ev = self.ev();
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
        let ev = self.ev();
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
                        auto_rescale = true, bootstrapper = None))]
    fn new(
        py: Python<'_>,
        ctx: &CkksContext,
        relinearization_key: Option<&RelinearizationKey>,
        galois_keys: Option<&GaloisKeys>,
        auto_rescale: bool,
        bootstrapper: Option<&crate::boot::Bootstrapper>,
    ) -> PyResult<Self> {
        let c = &ctx.inner;
        let rlk = relinearization_key.map(|k| k.inner.clone());
        let gk = galois_keys.map(|k| k.inner.clone());
        let boot = bootstrapper.map(|b| b.inner.clone());
        let (relin, galois) = (rlk.is_some(), gk.is_some());
        let ev = run(py, move || {
            let mut ev = REvaluator::new(c).with_auto_rescale(auto_rescale);
            if let Some(k) = rlk {
                ev = ev.with_relinearization_key(k)?;
            }
            if let Some(k) = gk {
                ev = ev.with_galois_keys(k)?;
            }
            if let Some(b) = boot {
                ev = ev.with_bootstrapper(b)?;
            }
            Ok(ev)
        })?;
        Ok(Self {
            shared: Arc::new(EvalShared { ev, relin, galois }),
        })
    }

    /// Whether products rescale automatically.
    #[getter]
    fn auto_rescale(&self) -> bool {
        self.ev().auto_rescale()
    }
    /// How many automatic bootstraps this evaluator has run.
    #[getter]
    fn bootstraps(&self) -> usize {
        self.ev().bootstraps()
    }

    // ------------------------------------------------------------------ additions

    /// ``a + b`` (operands at different levels are aligned).
    fn add(&self, py: Python<'_>, a: Ct<'_>, b: Ct<'_>) -> PyResult<Ciphertext> {
        self.binary(py, a, b, |ev, a, b| ev.add(a, b))
    }
    /// ``a - b``.
    fn sub(&self, py: Python<'_>, a: Ct<'_>, b: Ct<'_>) -> PyResult<Ciphertext> {
        self.binary(py, a, b, |ev, a, b| ev.sub(a, b))
    }
    /// ``-a``.
    fn neg(&self, py: Python<'_>, a: Ct<'_>) -> PyResult<Ciphertext> {
        self.unary(py, a, |ev, a| ev.neg(a))
    }
    /// ``ct + pt``.
    fn add_plain(&self, py: Python<'_>, ct: Ct<'_>, pt: &Plaintext) -> PyResult<Ciphertext> {
        let p = &pt.inner;
        self.unary(py, ct, |ev, a| ev.add_plain(a, p))
    }
    /// ``ct - pt``.
    fn sub_plain(&self, py: Python<'_>, ct: Ct<'_>, pt: &Plaintext) -> PyResult<Ciphertext> {
        let p = &pt.inner;
        self.unary(py, ct, |ev, a| ev.sub_plain(a, p))
    }
    /// ``ct + c`` for a real or complex constant ``c`` (in every slot).
    fn add_const(&self, py: Python<'_>, ct: Ct<'_>, c: Constant) -> PyResult<Ciphertext> {
        self.unary(py, ct, move |ev, a| match c {
            Constant::Real(c) => ev.add_const(a, c),
            Constant::Complex(c) => ev.add_const_complex(a, c),
        })
    }
    /// ``ct - c``.
    fn sub_const(&self, py: Python<'_>, ct: Ct<'_>, c: Constant) -> PyResult<Ciphertext> {
        self.unary(py, ct, move |ev, a| match c {
            Constant::Real(c) => ev.sub_const(a, c),
            Constant::Complex(c) => ev.add_const_complex(a, -c),
        })
    }

    // ------------------------------------------------------------------ products

    /// ``ct · k`` for an integer ``k``: exact, consumes no level.
    fn mul_int(&self, py: Python<'_>, ct: Ct<'_>, k: i64) -> PyResult<Ciphertext> {
        self.unary(py, ct, move |ev, a| ev.mul_int(a, k))
    }
    /// ``ct · c`` for a real or complex constant (rescaled in auto-rescale mode).
    fn mul_const(&self, py: Python<'_>, ct: Ct<'_>, c: Constant) -> PyResult<Ciphertext> {
        self.unary(py, ct, move |ev, a| match c {
            Constant::Real(c) => ev.mul_const(a, c),
            Constant::Complex(c) => ev.mul_const_complex(a, c),
        })
    }
    /// ``ct · c`` with ``c`` encoded at ``scale`` (not rescaled).
    fn mul_const_with_scale(
        &self,
        py: Python<'_>,
        ct: Ct<'_>,
        c: f64,
        scale: f64,
    ) -> PyResult<Ciphertext> {
        self.unary(py, ct, move |ev, a| ev.mul_const_with_scale(a, c, scale))
    }
    /// ``ct · pt`` (rescaled in auto-rescale mode).
    fn mul_plain(&self, py: Python<'_>, ct: Ct<'_>, pt: &Plaintext) -> PyResult<Ciphertext> {
        let p = &pt.inner;
        self.unary(py, ct, |ev, a| ev.mul_plain(a, p))
    }
    /// ``a · b``: multiply, relinearise, and rescale in auto-rescale mode.
    fn mul(&self, py: Python<'_>, a: Ct<'_>, b: Ct<'_>) -> PyResult<Ciphertext> {
        self.binary(py, a, b, |ev, a, b| ev.mul(a, b))
    }
    /// ``a · b`` relinearised, never rescaled.
    fn mul_relin(&self, py: Python<'_>, a: Ct<'_>, b: Ct<'_>) -> PyResult<Ciphertext> {
        self.binary(py, a, b, |ev, a, b| ev.mul_relin(a, b))
    }
    /// ``a · b`` relinearised and rescaled (in either mode).
    fn mul_relin_rescale(&self, py: Python<'_>, a: Ct<'_>, b: Ct<'_>) -> PyResult<Ciphertext> {
        self.binary(py, a, b, |ev, a, b| ev.mul_relin_rescale(a, b))
    }
    /// ``a · b`` without relinearisation (3 components).
    fn mul_no_relin(&self, py: Python<'_>, a: Ct<'_>, b: Ct<'_>) -> PyResult<Ciphertext> {
        self.binary(py, a, b, |ev, a, b| ev.mul_no_relin(a, b))
    }
    /// ``a²`` (as ``mul``).
    fn square(&self, py: Python<'_>, a: Ct<'_>) -> PyResult<Ciphertext> {
        self.unary(py, a, |ev, a| ev.square(a))
    }
    /// ``a²`` relinearised and rescaled (in either mode).
    fn square_relin_rescale(&self, py: Python<'_>, a: Ct<'_>) -> PyResult<Ciphertext> {
        self.unary(py, a, |ev, a| ev.square_relin_rescale(a))
    }
    /// A 3-component ciphertext back to 2 components.
    fn relinearize(&self, py: Python<'_>, a: Ct<'_>) -> PyResult<Ciphertext> {
        self.unary(py, a, |ev, a| ev.relinearize(a))
    }

    // ------------------------------------------------------------------ levels

    /// Divides by the last prime: one level down, scale divided by it.
    fn rescale(&self, py: Python<'_>, a: Ct<'_>) -> PyResult<Ciphertext> {
        self.unary(py, a, |ev, a| ev.rescale(a))
    }
    /// Drops primes down to ``level`` (the scale is kept).
    fn drop_to_level(&self, py: Python<'_>, a: Ct<'_>, level: usize) -> PyResult<Ciphertext> {
        self.unary(py, a, move |ev, a| ev.drop_to_level(a, level))
    }
    /// Brings ``a`` to ``level`` with exactly ``scale`` (spends a level).
    fn drop_to_level_and_scale(
        &self,
        py: Python<'_>,
        a: Ct<'_>,
        level: usize,
        scale: f64,
    ) -> PyResult<Ciphertext> {
        self.unary(py, a, move |ev, a| {
            ev.drop_to_level_and_scale(a, level, scale)
        })
    }

    // ------------------------------------------------------------------ rotations

    /// Rotated left by ``step`` slots (right for a negative step).
    fn rotate(&self, py: Python<'_>, a: Ct<'_>, step: i64) -> PyResult<Ciphertext> {
        self.unary(py, a, move |ev, a| ev.rotate(a, step))
    }
    /// Several rotations of one ciphertext sharing one decomposition (hoisting).
    fn rotate_hoisted(
        &self,
        py: Python<'_>,
        a: Ct<'_>,
        steps: Vec<i64>,
    ) -> PyResult<Vec<Ciphertext>> {
        let (ev, a) = (self.ev(), &a.inner);
        let out = run(py, || ev.rotate_hoisted(a, &steps))?;
        Ok(out.into_iter().map(|c| self.wrap(c)).collect())
    }
    /// Complex conjugation of every slot.
    fn conjugate(&self, py: Python<'_>, a: Ct<'_>) -> PyResult<Ciphertext> {
        self.unary(py, a, |ev, a| ev.conjugate(a))
    }
    /// The sum of all slots, in every slot.
    fn sum_slots(&self, py: Python<'_>, a: Ct<'_>) -> PyResult<Ciphertext> {
        self.unary(py, a, |ev, a| ev.sum_slots(a))
    }
    /// ``Σ_{j<count} rotate(a, j·stride)``.
    fn rotate_and_sum(
        &self,
        py: Python<'_>,
        a: Ct<'_>,
        stride: i64,
        count: usize,
    ) -> PyResult<Ciphertext> {
        self.unary(py, a, move |ev, a| ev.rotate_and_sum(a, stride, count))
    }
    /// Slot ``slot`` of ``a`` in every slot.
    fn replicate(&self, py: Python<'_>, a: Ct<'_>, slot: usize) -> PyResult<Ciphertext> {
        self.unary(py, a, move |ev, a| ev.replicate(a, slot))
    }
    /// ``Σ_i a_i·b_i`` in every slot.
    fn inner_product(&self, py: Python<'_>, a: Ct<'_>, b: Ct<'_>) -> PyResult<Ciphertext> {
        self.binary(py, a, b, |ev, a, b| ev.inner_product(a, b))
    }
    /// The rotation steps ``sum_slots`` needs keys for, at ``slots`` slots.
    #[staticmethod]
    fn sum_slots_rotations(slots: usize) -> Vec<i64> {
        REvaluator::sum_slots_rotations(slots)
    }
    /// The rotation steps ``inner_product`` needs keys for.
    #[staticmethod]
    fn inner_product_rotations(slots: usize) -> Vec<i64> {
        REvaluator::inner_product_rotations(slots)
    }
    /// The rotation steps ``replicate`` needs keys for.
    #[staticmethod]
    fn replicate_rotations(slots: usize) -> Vec<i64> {
        REvaluator::replicate_rotations(slots)
    }

    // ------------------------------------------------------------------ polynomials, transforms

    /// ``p(ct)`` for a ``Polynomial`` (monomial or Chebyshev basis), the result at exactly
    /// ``target_scale`` (default: the input's scale). Consumes ``p.depth`` levels.
    #[pyo3(signature = (ct, p, target_scale = None))]
    fn evaluate_polynomial(
        &self,
        py: Python<'_>,
        ct: Ct<'_>,
        p: &crate::poly::Polynomial,
        target_scale: Option<f64>,
    ) -> PyResult<Ciphertext> {
        let scale = target_scale.unwrap_or(ct.inner.scale());
        let p = &p.inner;
        self.unary(py, ct, move |ev, a| ev.evaluate_polynomial(a, p, scale))
    }
    /// Several polynomials of one input, sharing their common powers.
    #[pyo3(signature = (ct, ps, target_scale = None))]
    fn evaluate_polynomials(
        &self,
        py: Python<'_>,
        ct: Ct<'_>,
        ps: Vec<PyRef<'_, crate::poly::Polynomial>>,
        target_scale: Option<f64>,
    ) -> PyResult<Vec<Ciphertext>> {
        let scale = target_scale.unwrap_or(ct.inner.scale());
        let refs: Vec<&rhea::ckks::Polynomial> = ps.iter().map(|p| &p.inner).collect();
        let (ev, a) = (self.ev(), &ct.inner);
        let out = run(py, || ev.evaluate_polynomials(a, &refs, scale))?;
        Ok(out.into_iter().map(|c| self.wrap(c)).collect())
    }
    /// ``M·ct`` for a ``LinearTransform`` (baby-step giant-step; needs the Galois keys of
    /// ``lt.rotations()``).
    fn linear_transform(
        &self,
        py: Python<'_>,
        ct: Ct<'_>,
        lt: &crate::poly::LinearTransform,
    ) -> PyResult<Ciphertext> {
        let lt = &lt.inner;
        self.unary(py, ct, move |ev, a| ev.linear_transform(a, lt))
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
    /// ``a *= b`` (as ``mul``).
    fn mul_assign(
        &self,
        py: Python<'_>,
        a: &Bound<'_, Ciphertext>,
        b: &Bound<'_, Ciphertext>,
    ) -> PyResult<()> {
        self.assign_ct(py, a, b, |ev, a, b| ev.mul_assign(a, b))
    }
    /// ``a = -a``.
    fn neg_assign(&self, py: Python<'_>, a: PyRefMut<'_, Ciphertext>) -> PyResult<()> {
        self.assign(py, a, |ev, a| ev.neg_assign(a))
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
    /// ``ct += c`` (real).
    fn add_const_assign(
        &self,
        py: Python<'_>,
        ct: PyRefMut<'_, Ciphertext>,
        c: f64,
    ) -> PyResult<()> {
        self.assign(py, ct, move |ev, a| ev.add_const_assign(a, c))
    }
    /// ``ct -= c`` (real).
    fn sub_const_assign(
        &self,
        py: Python<'_>,
        ct: PyRefMut<'_, Ciphertext>,
        c: f64,
    ) -> PyResult<()> {
        self.assign(py, ct, move |ev, a| ev.sub_const_assign(a, c))
    }
    /// ``ct *= c`` (real).
    fn mul_const_assign(
        &self,
        py: Python<'_>,
        ct: PyRefMut<'_, Ciphertext>,
        c: f64,
    ) -> PyResult<()> {
        self.assign(py, ct, move |ev, a| ev.mul_const_assign(a, c))
    }
    /// ``ct *= k`` (integer, exact).
    fn mul_int_assign(&self, py: Python<'_>, ct: PyRefMut<'_, Ciphertext>, k: i64) -> PyResult<()> {
        self.assign(py, ct, move |ev, a| ev.mul_int_assign(a, k))
    }
    /// ``a = a²``.
    fn square_assign(&self, py: Python<'_>, a: PyRefMut<'_, Ciphertext>) -> PyResult<()> {
        self.assign(py, a, |ev, a| ev.square_assign(a))
    }
    /// Relinearises in place.
    fn relinearize_assign(&self, py: Python<'_>, a: PyRefMut<'_, Ciphertext>) -> PyResult<()> {
        self.assign(py, a, |ev, a| ev.relinearize_assign(a))
    }
    /// Rescales in place.
    fn rescale_assign(&self, py: Python<'_>, a: PyRefMut<'_, Ciphertext>) -> PyResult<()> {
        self.assign(py, a, |ev, a| ev.rescale_assign(a))
    }
    /// Drops to ``level`` in place.
    fn drop_to_level_assign(
        &self,
        py: Python<'_>,
        a: PyRefMut<'_, Ciphertext>,
        level: usize,
    ) -> PyResult<()> {
        self.assign(py, a, move |ev, a| ev.drop_to_level_assign(a, level))
    }
    /// Rotates in place.
    fn rotate_assign(
        &self,
        py: Python<'_>,
        a: PyRefMut<'_, Ciphertext>,
        step: i64,
    ) -> PyResult<()> {
        self.assign(py, a, move |ev, a| ev.rotate_assign(a, step))
    }
    /// Conjugates in place.
    fn conjugate_assign(&self, py: Python<'_>, a: PyRefMut<'_, Ciphertext>) -> PyResult<()> {
        self.assign(py, a, |ev, a| ev.conjugate_assign(a))
    }

    /// For `bench/python-overhead.py`: seconds per call of ``op`` (``"add"``, ``"sub"``,
    /// ``"mul_relin"``, ``"mul"``, ``"rotate"``: by 1) run ``reps`` times in a Rust loop, without
    /// the GIL, with one device synchronisation at the end; the same calls as the Python
    /// methods, minus Python.
    fn _rust_loop(
        &self,
        py: Python<'_>,
        op: &str,
        a: Ct<'_>,
        b: Ct<'_>,
        reps: usize,
    ) -> PyResult<f64> {
        type F = fn(&REvaluator, &RCiphertext, &RCiphertext) -> rhea::Result<RCiphertext>;
        let f: F = match op {
            "add" => |ev, a, b| ev.add(a, b),
            "sub" => |ev, a, b| ev.sub(a, b),
            "mul_relin" => |ev, a, b| ev.mul_relin(a, b),
            "mul" => |ev, a, b| ev.mul(a, b),
            "rotate" => |ev, a, _| ev.rotate(a, 1),
            _ => {
                return Err(crate::errors::invalid(
                    py,
                    format!("_rust_loop: unknown op {op:?}"),
                ))
            }
        };
        let (ev, a, b) = (self.ev(), &a.inner, &b.inner);
        let device = a.device();
        run(py, move || {
            device.synchronize()?;
            let start = std::time::Instant::now();
            for _ in 0..reps {
                std::hint::black_box(f(ev, a, b)?);
            }
            device.synchronize()?;
            Ok(start.elapsed().as_secs_f64() / reps.max(1) as f64)
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "Evaluator(relinearization_key={}, galois_keys={}, auto_rescale={}, bootstrapper={})",
            self.shared.relin,
            self.shared.galois,
            self.ev().auto_rescale(),
            self.ev().bootstrapper().is_some()
        )
    }
}

/// Registers the classes of this module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Evaluator>()?;
    Ok(())
}
