//! LITE's all-data mode (issue 38, `docs/lite.md` "The all-data mode"): the element-wise, NTT,
//! base-conversion and automorphism steps of CKKS evaluation on [`ProtectedPoly`]s, whose words
//! stay AES-XTS ciphertext in device memory and are decrypted only in the kernels' registers
//! (`rhea_cuda::lite::ops`). Key switching, ModUp, ModDown and rescaling are composed here from
//! those primitives exactly as the CPU backend composes them (`cpu::mod_up_digits`,
//! `cpu::mod_down`, `cpu::rescale_ntt`), so every result has the canonical words of the
//! unprotected path.
//!
//! Keys stay plain (they are public); every polynomial derived from a protected ciphertext —
//! the tensor product, the ModUp digits, the inner products, the coefficient-form
//! intermediates — is protected.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rhea_cuda::lite::ops::{self, Dst, EwOp, LiteConverter, LiteRingTables, Rows, Src};
use rhea_cuda::lite::{LiteBuffer, LiteForm, LiteSession};
use rhea_cuda::ntt::NttDirection;
use rhea_cuda::{DeviceBuffer, GpuDevice};

use super::protected::{check_decrypt_degree, gpu_buf};
use super::{Device, Form, Poly, PolyShape, ProtectedPoly, RnsRing};
use crate::error::{Error, Result};

/// The device tables of the all-data kernels for one ring on one GPU: the twiddles of every
/// `Q ∪ P` prime, and (built on first use, cached) the base converters of ModUp and ModDown per
/// level, the per-level scalar rows and the automorphisms' permutations.
pub(crate) struct AllDataPlan {
    device: usize,
    dev: Arc<GpuDevice>,
    tables: LiteRingTables,
    converters: Mutex<HashMap<(usize, usize), Arc<LiteConverter>>>,
    scalars: Mutex<HashMap<(u8, usize), Arc<DeviceBuffer>>>,
    permutations: Mutex<HashMap<u64, Arc<DeviceBuffer>>>,
}

impl std::fmt::Debug for AllDataPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AllDataPlan")
            .field("device", &Device::Cuda(self.device))
            .finish_non_exhaustive()
    }
}

/// The ModDown converter's key in [`AllDataPlan::converters`] (ModUp's are `(digit, ℓ)`).
const MOD_DOWN: usize = usize::MAX;

/// Scalar rows cached per level.
const P_INV: u8 = 0;
const RESCALE_INV: u8 = 1;
const RESCALE_MINUS_HALF: u8 = 2;
const RESCALE_HALF: u8 = 3;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned cache only means another thread panicked while inserting; the map is valid.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl AllDataPlan {
    /// The plan of `ring` on GPU `index` (uploads every prime's twiddles).
    pub(crate) fn new(ring: &RnsRing, index: usize) -> Result<Self> {
        let dev = ring.gpu_ring(index)?.device().clone();
        let tables = LiteRingTables::new(&dev, ring.ntt_tables())?;
        Ok(Self {
            device: index,
            dev,
            tables,
            converters: Mutex::new(HashMap::new()),
            scalars: Mutex::new(HashMap::new()),
            permutations: Mutex::new(HashMap::new()),
        })
    }

    /// The GPU.
    pub(crate) fn device(&self) -> Device {
        Device::Cuda(self.device)
    }

    fn converter(&self, ring: &RnsRing, digit: usize, ell: usize) -> Result<Arc<LiteConverter>> {
        if let Some(c) = lock(&self.converters).get(&(digit, ell)) {
            return Ok(c.clone());
        }
        let plan = ring.keyswitch_plan();
        let conv = if digit == MOD_DOWN {
            plan.mod_down_converter(ell)
        } else {
            plan.mod_up().converter(digit, ell)?
        };
        let c = Arc::new(LiteConverter::new(&self.dev, conv)?);
        lock(&self.converters).insert((digit, ell), c.clone());
        Ok(c)
    }

    fn scalars(
        &self,
        kind: u8,
        ell: usize,
        words: impl FnOnce() -> Result<Vec<u64>>,
    ) -> Result<Arc<DeviceBuffer>> {
        if let Some(b) = lock(&self.scalars).get(&(kind, ell)) {
            return Ok(b.clone());
        }
        let b = Arc::new(self.dev.upload(&words()?)?);
        lock(&self.scalars).insert((kind, ell), b.clone());
        Ok(b)
    }

    fn permutation(&self, n: usize, g: u64) -> Result<Arc<DeviceBuffer>> {
        if let Some(b) = lock(&self.permutations).get(&g) {
            return Ok(b.clone());
        }
        let perm: Vec<u64> = super::cpu::automorphism_permutation(n, g)
            .iter()
            .map(|&j| j as u64)
            .collect();
        let b = Arc::new(self.dev.upload(&perm)?);
        lock(&self.permutations).insert(g, b.clone());
        Ok(b)
    }
}

/// The runs of consecutive rows of a shape with consecutive table limbs: the Q limbs, then the
/// P limbs (tables `|Q|..`): `(first row, rows)`.
fn runs(ring: &RnsRing, shape: &PolyShape) -> Vec<(usize, Rows)> {
    let mut v = vec![(
        0,
        Rows {
            rows: shape.q_limbs,
            first_table: 0,
        },
    )];
    if shape.p_limbs > 0 {
        v.push((
            shape.q_limbs,
            Rows {
                rows: shape.p_limbs,
                first_table: ring.q_len(),
            },
        ));
    }
    v
}

fn protected_src(p: &ProtectedPoly, row: usize) -> Src<'_> {
    Src::Protected(&p.buf, row * p.shape.n)
}

fn protected_dst(p: &mut ProtectedPoly, row: usize) -> Dst<'_> {
    let n = p.shape.n;
    Dst::Protected(&mut p.buf, row * n)
}

impl RnsRing {
    fn all_data_check(
        &self,
        op: &'static str,
        plan: &AllDataPlan,
        p: &ProtectedPoly,
        form: Form,
    ) -> Result<()> {
        self.check_shape(op, &p.shape)?;
        if p.device != plan.device {
            return Err(Error::DeviceMismatch {
                op,
                lhs: plan.device(),
                rhs: p.device(),
            });
        }
        if p.form != form {
            return Err(Error::FormMismatch {
                op,
                expected: form,
                found: p.form,
            });
        }
        Ok(())
    }

    fn all_data_alloc(
        &self,
        plan: &AllDataPlan,
        shape: PolyShape,
        form: Form,
    ) -> Result<ProtectedPoly> {
        Ok(ProtectedPoly {
            buf: LiteBuffer::alloc(&plan.dev, shape.words(), LiteForm::Encrypted)?,
            shape,
            form,
            device: plan.device,
        })
    }

    /// A public polynomial on the plan's GPU re-encrypted in place of a copy: the protected
    /// copy (a ciphertext component entering the all-data mode).
    pub(crate) fn all_data_import(
        &self,
        session: &LiteSession,
        plan: &AllDataPlan,
        p: &Poly,
    ) -> Result<ProtectedPoly> {
        const OP: &str = "all-data import";
        self.check_shape(OP, &p.shape)?;
        if p.device() != plan.device() {
            return Err(Error::DeviceMismatch {
                op: OP,
                lhs: plan.device(),
                rhs: p.device(),
            });
        }
        let src = gpu_buf(OP, p)?;
        let mut out = self.all_data_alloc(plan, p.shape, p.form)?;
        for (row, rows) in runs(self, &p.shape) {
            let n = p.shape.n;
            ops::elementwise(
                session,
                &plan.tables,
                EwOp::Copy,
                protected_dst(&mut out, row),
                Src::Plain(src, row * n),
                None,
                None,
                None,
                rows,
            )?;
        }
        Ok(out)
    }

    /// The plain copy of a protected polynomial on its GPU (a ciphertext component leaving the
    /// all-data mode: public data).
    pub(crate) fn all_data_export(
        &self,
        session: &LiteSession,
        plan: &AllDataPlan,
        p: &ProtectedPoly,
    ) -> Result<Poly> {
        self.all_data_check("all-data export", plan, p, p.form)?;
        let mut out = plan.dev.alloc(p.shape.words())?;
        let n = p.shape.n;
        for (row, rows) in runs(self, &p.shape) {
            ops::elementwise(
                session,
                &plan.tables,
                EwOp::Copy,
                Dst::Plain(&mut out, row * n),
                protected_src(p, row),
                None,
                None,
                None,
                rows,
            )?;
        }
        Ok(Poly::cuda(out, p.shape, p.form))
    }

    /// A protected copy of a protected polynomial (re-encrypted at its new address; the words
    /// never leave the registers in plain).
    pub(crate) fn all_data_clone(
        &self,
        session: &LiteSession,
        plan: &AllDataPlan,
        p: &ProtectedPoly,
    ) -> Result<ProtectedPoly> {
        self.all_data_check("all-data copy", plan, p, p.form)?;
        let mut out = self.all_data_alloc(plan, p.shape, p.form)?;
        for (row, rows) in runs(self, &p.shape) {
            self.all_data_copy_rows(session, plan, &mut out, row, p, row, rows.rows)?;
        }
        Ok(out)
    }

    /// `a ∘ b` (`Add`, `Sub` or `Mul`), both protected, the same shape and form.
    pub(crate) fn all_data_binary(
        &self,
        session: &LiteSession,
        plan: &AllDataPlan,
        op: EwOp,
        a: &ProtectedPoly,
        b: &ProtectedPoly,
    ) -> Result<ProtectedPoly> {
        const OP: &str = "all-data element-wise";
        self.all_data_check(OP, plan, a, a.form)?;
        self.all_data_check(OP, plan, b, a.form)?;
        if a.shape != b.shape {
            return Err(Error::ShapeMismatch {
                op: OP,
                lhs: a.shape,
                rhs: b.shape,
            });
        }
        if op == EwOp::Mul && a.form != Form::Ntt {
            return Err(Error::FormMismatch {
                op: OP,
                expected: Form::Ntt,
                found: a.form,
            });
        }
        let mut out = self.all_data_alloc(plan, a.shape, a.form)?;
        for (row, rows) in runs(self, &a.shape) {
            ops::elementwise(
                session,
                &plan.tables,
                op,
                protected_dst(&mut out, row),
                protected_src(a, row),
                Some(protected_src(b, row)),
                None,
                None,
                rows,
            )?;
        }
        Ok(out)
    }

    /// The tensor product of two 2-component ciphertexts (NTT form):
    /// `(a0·b0, a0·b1 + a1·b0, a1·b1)`.
    pub(crate) fn all_data_tensor(
        &self,
        session: &LiteSession,
        plan: &AllDataPlan,
        a: [&ProtectedPoly; 2],
        b: [&ProtectedPoly; 2],
    ) -> Result<[ProtectedPoly; 3]> {
        let d0 = self.all_data_binary(session, plan, EwOp::Mul, a[0], b[0])?;
        let d2 = self.all_data_binary(session, plan, EwOp::Mul, a[1], b[1])?;
        let mut d1 = self.all_data_binary(session, plan, EwOp::Mul, a[1], b[0])?;
        for (row, rows) in runs(self, &a[0].shape) {
            ops::elementwise(
                session,
                &plan.tables,
                EwOp::MulAdd,
                protected_dst(&mut d1, row),
                protected_src(a[0], row),
                Some(protected_src(b[1], row)),
                Some(Src::Out),
                None,
                rows,
            )?;
        }
        Ok([d0, d1, d2])
    }

    /// In-place NTT (`Forward`: coefficient → NTT form) of rows `from..from + count` of `p`.
    fn all_data_ntt_rows(
        &self,
        session: &LiteSession,
        plan: &AllDataPlan,
        p: &mut ProtectedPoly,
        from: usize,
        count: usize,
        dir: NttDirection,
    ) -> Result<()> {
        if count == 0 {
            return Ok(());
        }
        let shape = p.shape;
        // The rows of one call are consecutive tables unless they cross from Q into P.
        let mut row = from;
        while row < from + count {
            let end = if row < shape.q_limbs {
                (from + count).min(shape.q_limbs)
            } else {
                from + count
            };
            let rows = Rows {
                rows: end - row,
                first_table: self.prime_index(&shape, row),
            };
            ops::ntt(session, &plan.tables, protected_dst(p, row), rows, dir)?;
            row = end;
        }
        Ok(())
    }

    /// Rows `from..from + count` of `p` copied to rows `to..to + count` of `out` (re-encrypted
    /// at their new addresses; the rows share their moduli).
    #[allow(clippy::too_many_arguments)]
    fn all_data_copy_rows(
        &self,
        session: &LiteSession,
        plan: &AllDataPlan,
        out: &mut ProtectedPoly,
        to: usize,
        p: &ProtectedPoly,
        from: usize,
        count: usize,
    ) -> Result<()> {
        let rows = Rows {
            rows: count,
            first_table: self.prime_index(&out.shape, to),
        };
        ops::elementwise(
            session,
            &plan.tables,
            EwOp::Copy,
            protected_dst(out, to),
            protected_src(p, from),
            None,
            None,
            None,
            rows,
        )?;
        Ok(())
    }

    /// [`RnsRing::mod_up`] on a protected polynomial (NTT form over `Q_ℓ`): the digits over
    /// `Q_ℓ ∪ P`, protected, word for word `cpu::mod_up_digits`.
    pub(crate) fn all_data_mod_up(
        &self,
        session: &LiteSession,
        plan: &AllDataPlan,
        a: &ProtectedPoly,
    ) -> Result<Vec<ProtectedPoly>> {
        const OP: &str = "all-data mod_up";
        self.all_data_check(OP, plan, a, Form::Ntt)?;
        if a.shape.p_limbs != 0 {
            return Err(Error::ShapeMismatch {
                op: OP,
                lhs: a.shape,
                rhs: self.shape_q(a.shape.q_limbs),
            });
        }
        let ell = a.shape.q_limbs;
        let shape_qp = self.shape_qp(ell);
        let mut coeff = self.all_data_alloc(plan, a.shape, Form::Coefficient)?;
        self.all_data_copy_rows(session, plan, &mut coeff, 0, a, 0, ell)?;
        self.all_data_ntt_rows(session, plan, &mut coeff, 0, ell, NttDirection::Inverse)?;
        let mod_up = self.keyswitch_plan().mod_up();
        let mut digits = Vec::with_capacity(self.active_digits(ell));
        for d in 0..self.active_digits(ell) {
            let r = mod_up.digit_limbs(d, ell)?;
            let conv = plan.converter(self, d, ell)?;
            let targets = mod_up.output_columns(d, ell)?;
            let mut out = self.all_data_alloc(plan, shape_qp, Form::Ntt)?;
            ops::convert_centered(
                session,
                &conv,
                protected_src(&coeff, r.start),
                Dst::Protected(&mut out.buf, 0),
                &targets,
                self.n(),
            )?;
            // Transform the converted rows; copy the digit's own rows (already in NTT form).
            self.all_data_ntt_rows(session, plan, &mut out, 0, r.start, NttDirection::Forward)?;
            let rest = shape_qp.limbs() - r.end;
            self.all_data_ntt_rows(session, plan, &mut out, r.end, rest, NttDirection::Forward)?;
            self.all_data_copy_rows(session, plan, &mut out, r.start, a, r.start, r.len())?;
            digits.push(out);
        }
        Ok(digits)
    }

    /// [`RnsRing::keyswitch_inner_product`] of protected digits with a plain key (stored over the
    /// full `Q ∪ P`): `(Σ_j d_j·b_j, Σ_j d_j·a_j)` over `Q_ℓ ∪ P`, protected.
    pub(crate) fn all_data_inner_product(
        &self,
        session: &LiteSession,
        plan: &AllDataPlan,
        digits: &[ProtectedPoly],
        key: &[[Poly; 2]],
    ) -> Result<[ProtectedPoly; 2]> {
        const OP: &str = "all-data key-switching inner product";
        let first = digits
            .first()
            .ok_or_else(|| Error::InvalidInput(format!("{OP}: no digits")))?;
        if key.len() < digits.len() {
            return Err(Error::InvalidInput(format!(
                "{OP}: {} digits but the key has {}",
                digits.len(),
                key.len()
            )));
        }
        let shape = self.shape_qp(first.shape.q_limbs);
        let full = self.full_shape();
        for d in digits {
            self.all_data_check(OP, plan, d, Form::Ntt)?;
            if d.shape != shape {
                return Err(Error::ShapeMismatch {
                    op: OP,
                    lhs: d.shape,
                    rhs: shape,
                });
            }
        }
        let mut out = [
            self.all_data_alloc(plan, shape, Form::Ntt)?,
            self.all_data_alloc(plan, shape, Form::Ntt)?,
        ];
        let n = self.n();
        for (j, (d, pair)) in digits.iter().zip(key).enumerate() {
            for (acc, k) in out.iter_mut().zip(pair) {
                k.expect_form(OP, Form::Ntt)?;
                if k.shape != full || k.device() != plan.device() {
                    return Err(Error::ShapeMismatch {
                        op: OP,
                        lhs: k.shape,
                        rhs: full,
                    });
                }
                let kb = gpu_buf(OP, k)?;
                for (row, rows) in runs(self, &shape) {
                    // Limb `row` of the level-ℓ shape is key limb `prime_index(row)`.
                    let key_row = self.prime_index(&shape, row);
                    let (op, c) = if j == 0 {
                        (EwOp::Mul, None)
                    } else {
                        (EwOp::MulAdd, Some(Src::Out))
                    };
                    ops::elementwise(
                        session,
                        &plan.tables,
                        op,
                        protected_dst(acc, row),
                        protected_src(d, row),
                        Some(Src::Plain(kb, key_row * n)),
                        c,
                        None,
                        rows,
                    )?;
                }
            }
        }
        Ok(out)
    }

    /// [`RnsRing::mod_down`] of a protected polynomial over `Q_ℓ ∪ P` (NTT form): word for word
    /// `cpu::mod_down`.
    pub(crate) fn all_data_mod_down(
        &self,
        session: &LiteSession,
        plan: &AllDataPlan,
        x: &ProtectedPoly,
    ) -> Result<ProtectedPoly> {
        const OP: &str = "all-data mod_down";
        self.all_data_check(OP, plan, x, Form::Ntt)?;
        let ell = x.shape.q_limbs;
        if x.shape.p_limbs != self.p_len() {
            return Err(Error::ShapeMismatch {
                op: OP,
                lhs: x.shape,
                rhs: self.shape_qp(ell),
            });
        }
        let p_len = self.p_len();
        // INTT of the P rows, in a scratch buffer (its rows use tables |Q|..).
        let mut xp = LiteBuffer::alloc(&plan.dev, p_len * self.n(), LiteForm::Encrypted)?;
        let p_rows = Rows {
            rows: p_len,
            first_table: self.q_len(),
        };
        ops::elementwise(
            session,
            &plan.tables,
            EwOp::Copy,
            Dst::Protected(&mut xp, 0),
            protected_src(x, ell),
            None,
            None,
            None,
            p_rows,
        )?;
        ops::ntt(
            session,
            &plan.tables,
            Dst::Protected(&mut xp, 0),
            p_rows,
            NttDirection::Inverse,
        )?;
        let shape_q = self.shape_q(ell);
        let mut y = self.all_data_alloc(plan, shape_q, Form::Coefficient)?;
        let conv = plan.converter(self, MOD_DOWN, ell)?;
        let targets: Vec<(usize, usize)> = (0..ell).map(|j| (j, j)).collect();
        ops::convert_centered(
            session,
            &conv,
            Src::Protected(&xp, 0),
            Dst::Protected(&mut y.buf, 0),
            &targets,
            self.n(),
        )?;
        self.all_data_ntt_rows(session, plan, &mut y, 0, ell, NttDirection::Forward)?;
        let p_inv = plan.scalars(P_INV, 0, || {
            Ok(self.keyswitch_plan().mod_down().p_inv_mod_q().to_vec())
        })?;
        // out = (x_Q − y)·P^{-1}, in place over y.
        ops::elementwise(
            session,
            &plan.tables,
            EwOp::SubMulScalar,
            Dst::Protected(&mut y.buf, 0),
            protected_src(x, 0),
            Some(Src::Out),
            None,
            Some(&p_inv),
            Rows {
                rows: ell,
                first_table: 0,
            },
        )?;
        y.form = Form::Ntt;
        Ok(y)
    }

    /// [`RnsRing::rescale`] of a protected polynomial over `Q_ℓ` (NTT form, `ℓ ≥ 2`): word for
    /// word `cpu::rescale_ntt`.
    pub(crate) fn all_data_rescale(
        &self,
        session: &LiteSession,
        plan: &AllDataPlan,
        x: &ProtectedPoly,
    ) -> Result<ProtectedPoly> {
        const OP: &str = "all-data rescale";
        self.all_data_check(OP, plan, x, Form::Ntt)?;
        let ell = x.shape.q_limbs;
        if x.shape.p_limbs != 0 || ell < 2 {
            return Err(Error::ShapeMismatch {
                op: OP,
                lhs: x.shape,
                rhs: self.shape_q(ell.max(2)),
            });
        }
        let n = self.n();
        let resc = self.rescaler();
        let q_last = *self.ntt_tables()[ell - 1].modulus();
        let h = q_last.value() >> 1;
        // r = INTT(x_last) + h mod q_last, in a one-row scratch polynomial.
        let last = Rows {
            rows: 1,
            first_table: ell - 1,
        };
        let mut r = LiteBuffer::alloc(&plan.dev, n, LiteForm::Encrypted)?;
        ops::elementwise(
            session,
            &plan.tables,
            EwOp::Copy,
            Dst::Protected(&mut r, 0),
            protected_src(x, ell - 1),
            None,
            None,
            None,
            last,
        )?;
        ops::ntt(
            session,
            &plan.tables,
            Dst::Protected(&mut r, 0),
            last,
            NttDirection::Inverse,
        )?;
        let half = plan.scalars(RESCALE_HALF, ell, || Ok(vec![h]))?;
        ops::elementwise(
            session,
            &plan.tables,
            EwOp::AddScalar,
            Dst::Protected(&mut r, 0),
            Src::Out,
            None,
            None,
            Some(&half),
            last,
        )?;
        // t_i = [r]_{q_i} − [h]_{q_i}, then NTT, then (x_i − t_i)·q_last^{-1}.
        let keep = Rows {
            rows: ell - 1,
            first_table: 0,
        };
        let minus_half = plan.scalars(RESCALE_MINUS_HALF, ell, || {
            let half = resc.half_mod_q(ell)?;
            Ok((0..ell - 1)
                .map(|i| {
                    let q = self.ntt_tables()[i].modulus().value();
                    (q - half[i]) % q
                })
                .collect())
        })?;
        let mut t = self.all_data_alloc(plan, self.shape_q(ell - 1), Form::Coefficient)?;
        ops::elementwise(
            session,
            &plan.tables,
            EwOp::ReduceBroadcast,
            Dst::Protected(&mut t.buf, 0),
            Src::Protected(&r, 0),
            None,
            None,
            Some(&minus_half),
            keep,
        )?;
        self.all_data_ntt_rows(session, plan, &mut t, 0, ell - 1, NttDirection::Forward)?;
        let inv = plan.scalars(RESCALE_INV, ell, || {
            Ok(resc.q_last_inv_mod_q(ell)?[..ell - 1].to_vec())
        })?;
        ops::elementwise(
            session,
            &plan.tables,
            EwOp::SubMulScalar,
            Dst::Protected(&mut t.buf, 0),
            protected_src(x, 0),
            Some(Src::Out),
            None,
            Some(&inv),
            keep,
        )?;
        t.form = Form::Ntt;
        Ok(t)
    }

    /// [`RnsRing::automorphism`] `X ↦ X^g` of a protected polynomial in NTT form (a permutation
    /// of every row: the irregular gather).
    pub(crate) fn all_data_automorphism(
        &self,
        session: &LiteSession,
        plan: &AllDataPlan,
        a: &ProtectedPoly,
        g: u64,
    ) -> Result<ProtectedPoly> {
        const OP: &str = "all-data automorphism";
        self.all_data_check(OP, plan, a, Form::Ntt)?;
        if g % 2 == 0 {
            return Err(Error::InvalidInput(format!(
                "{OP}: the Galois element {g} is even"
            )));
        }
        let perm = plan.permutation(self.n(), g)?;
        let mut out = self.all_data_alloc(plan, a.shape, Form::Ntt)?;
        for (row, rows) in runs(self, &a.shape) {
            ops::automorphism(
                session,
                &plan.tables,
                protected_dst(&mut out, row),
                protected_src(a, row),
                &perm,
                rows,
            )?;
        }
        Ok(out)
    }

    /// Protected decryption of a protected ciphertext: [`RnsRing::lite_decrypt`] with the
    /// components protected too.
    pub(crate) fn all_data_decrypt(
        &self,
        session: &LiteSession,
        cs: &[&ProtectedPoly],
        s: &ProtectedPoly,
    ) -> Result<Poly> {
        const OP: &str = "protected decrypt";
        check_decrypt_degree(OP, cs.len())?;
        let (shape, index) = (cs[0].shape, cs[0].device);
        self.check_protected(OP, s, index, &shape)?;
        for c in cs {
            if c.form != Form::Ntt || c.shape != shape || c.device != index {
                return Err(Error::ShapeMismatch {
                    op: OP,
                    lhs: shape,
                    rhs: c.shape,
                });
            }
        }
        let bufs: Vec<&LiteBuffer> = cs.iter().map(|c| &c.buf).collect();
        self.lite_decrypt_to_host(session, index, &shape, |out, fs| {
            rhea_cuda::lite::fhe::decrypt_protected(session, out, &bufs, &s.buf, fs)
        })
    }
}
