//! The primitives: batched RNS-level operations on [`Poly`]s, methods of [`RnsRing`].
//!
//! Each primitive checks its operands (device, shape, form), then matches on their
//! [`Storage`] and calls the implementation of that device ([`super::cpu`] or
//! [`super::cuda`]). Scheme code (RLWE, CKKS, BGV) calls only these.

use std::ops::Range;

use num_bigint::BigInt;
use rhea_math::sampler::{self, Prng};

use rhea_cuda::ntt::NttDirection;
use rhea_cuda::DeviceBuffer;

use super::cuda::GpuRing;
use super::{cpu, Device, Form, Poly, PolyShape, RnsRing, Storage};
use crate::error::{Error, Result};

/// The error for operands found on different devices inside a `match` (the checks before it
/// normally catch this first).
fn mixed(op: &'static str, lhs: Device, rhs: Device) -> Error {
    Error::DeviceMismatch { op, lhs, rhs }
}

fn same_device(op: &'static str, a: &Poly, b: &Poly) -> Result<()> {
    if a.device() == b.device() {
        Ok(())
    } else {
        Err(Error::DeviceMismatch {
            op,
            lhs: a.device(),
            rhs: b.device(),
        })
    }
}

impl RnsRing {
    /// The device tables of the GPU holding `buf`.
    fn cuda(&self, buf: &DeviceBuffer) -> Result<std::sync::Arc<GpuRing>> {
        self.gpu_ring(buf.device().index())
    }

    // ---------------------------------------------------------------- checks

    /// `a` and `b` on one device, in one form, and `b`'s limbs cover `a`'s: either the same
    /// shape, or both without `P` limbs and `b` at a higher level (`b` is then read as a view of
    /// its first `a.q_limbs()` limbs, without copying).
    /// Whether each of `b`'s polynomials can be combined in place with the matching one of `a`
    /// ([`RnsRing::check_binary`] of every pair) and `a` has at least as many: an in-place
    /// operation over the parts of two ciphertexts then cannot fail half-way on its operands.
    pub(crate) fn parts_combine_in_place(&self, op: &'static str, a: &[Poly], b: &[Poly]) -> bool {
        a.len() >= b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| self.check_binary(op, x, y).is_ok())
    }

    pub(crate) fn check_binary(&self, op: &'static str, a: &Poly, b: &Poly) -> Result<()> {
        same_device(op, a, b)?;
        self.check_shape(op, &a.shape)?;
        self.check_shape(op, &b.shape)?;
        if a.form != b.form {
            return Err(Error::FormMismatch {
                op,
                expected: a.form,
                found: b.form,
            });
        }
        let view = a.shape.n == b.shape.n
            && a.shape.p_limbs == 0
            && b.shape.p_limbs == 0
            && b.shape.q_limbs >= a.shape.q_limbs;
        if a.shape == b.shape || view {
            Ok(())
        } else {
            Err(Error::ShapeMismatch {
                op,
                lhs: a.shape,
                rhs: b.shape,
            })
        }
    }

    fn check_scalars(&self, op: &'static str, a: &Poly, scalars: &[u64]) -> Result<()> {
        self.check_shape(op, &a.shape)?;
        if scalars.len() != a.shape.limbs() {
            return Err(Error::InvalidInput(format!(
                "`{op}`: {} scalars for a polynomial of {} limbs",
                scalars.len(),
                a.shape.limbs()
            )));
        }
        for (i, &c) in scalars.iter().enumerate() {
            let q = self.modulus(&a.shape, i).value();
            if c >= q {
                return Err(Error::InvalidInput(format!(
                    "`{op}`: scalar {c} of limb {i} is not reduced modulo {q}"
                )));
            }
        }
        Ok(())
    }

    // ---------------------------------------------------------------- allocation, transfer

    /// A zero polynomial of the given shape and form on `device`.
    pub fn zero(&self, device: Device, shape: PolyShape, form: Form) -> Result<Poly> {
        device.check_supported()?;
        self.check_shape("zero", &shape)?;
        let storage = match device {
            Device::Cpu => Storage::Cpu(vec![0u64; shape.words()]),
            Device::Cuda(i) => {
                Storage::Cuda(self.gpu_ring(i)?.device().alloc_zeroed(shape.words())?)
            }
        };
        Ok(Poly {
            storage,
            shape,
            form,
        })
    }

    /// Uploads host words (`[limb][N]`, canonical residues) to `device`.
    ///
    /// Errors: [`Error::InvalidInput`] for a wrong length or a non-canonical residue.
    pub fn upload(
        &self,
        device: Device,
        data: Vec<u64>,
        shape: PolyShape,
        form: Form,
    ) -> Result<Poly> {
        device.check_supported()?;
        self.check_shape("upload", &shape)?;
        if data.len() != shape.words() {
            return Err(Error::InvalidInput(format!(
                "upload: {} words for a polynomial of shape {shape}",
                data.len()
            )));
        }
        for (i, limb) in data.chunks(shape.n).enumerate() {
            let q = self.modulus(&shape, i).value();
            if let Some(k) = limb.iter().position(|&x| x >= q) {
                return Err(Error::InvalidInput(format!(
                    "upload: word {k} of limb {i} is not reduced modulo {q}"
                )));
            }
        }
        let storage = match device {
            Device::Cpu => Storage::Cpu(data),
            Device::Cuda(i) => Storage::Cuda(self.gpu_ring(i)?.device().upload(&data)?),
        };
        Ok(Poly {
            storage,
            shape,
            form,
        })
    }

    /// A coefficient-form polynomial of `shape` (Q limbs, with or without the `P` limbs) whose
    /// limb `i` holds `[c]_{m_i}` (`m_i` the limb's prime) for the centred representatives
    /// `c ∈ [−⌊q_0/2⌋, ⌊q_0/2⌋]` of the words of `limb0` (`N` words canonical modulo `q_0`):
    /// small integers, given by their residues modulo the first prime and lifted to every limb
    /// on `device` — on a GPU only the one limb crosses the bus. The same words as
    /// [`RnsRing::upload`] of the lifted limbs (an encoder's plaintext whose coefficients lie
    /// below `q_0 / 2`, over `Q_ℓ` or over the extended basis `Q_ℓ ∪ P`).
    ///
    /// Errors: [`Error::InvalidInput`] for a `limb0` of another length or with a word not
    /// reduced modulo `q_0`; [`Error::ShapeMismatch`] for a shape not of this ring; the
    /// device's errors.
    pub fn upload_lifted(&self, device: Device, limb0: Vec<u64>, shape: PolyShape) -> Result<Poly> {
        device.check_supported()?;
        self.check_shape("upload_lifted", &shape)?;
        if limb0.len() != shape.n {
            return Err(Error::InvalidInput(format!(
                "upload_lifted: {} words for a polynomial of shape {shape} (one limb of words)",
                limb0.len()
            )));
        }
        let q0 = self.modulus(&shape, 0);
        if let Some(k) = limb0.iter().position(|&x| x >= q0.value()) {
            return Err(Error::InvalidInput(format!(
                "upload_lifted: word {k} is not reduced modulo {}",
                q0.value()
            )));
        }
        // The host lift: the centred integers, lifted as `from_signed` lifts them.
        let host_lift = || {
            let centred: Vec<i64> = limb0.iter().map(|&t| q0.center(t)).collect();
            sampler::lift_signed(&centred, &self.moduli(&shape))
        };
        let storage = match device {
            Device::Cpu => Storage::Cpu(host_lift()),
            Device::Cuda(i) => {
                let ring = self.gpu_ring(i)?;
                let t = ring.device().upload(&limb0)?;
                Storage::Cuda(ring.lift_first_limb(&t, &shape)?)
            }
        };
        Ok(Poly {
            storage,
            shape,
            form: Form::Coefficient,
        })
    }

    /// ModRaise: the level-1 polynomial `a` (one Q limb, either form) read as the centred
    /// integers `c ∈ [−⌊q_0/2⌋, ⌊q_0/2⌋]` of its coefficients and lifted to the first
    /// `q_limbs` Q primes, in `a`'s form, on `a`'s device (the lift of
    /// [`RnsRing::upload_lifted`], without leaving the device). A ciphertext raised this way
    /// decrypts to `m + q_0·I(X)` with `I` small (bootstrapping's first step).
    ///
    /// Errors: [`Error::InvalidInput`] unless `a` has exactly one Q limb and no `P` limbs, or for
    /// `q_limbs` outside `1..=|Q|`.
    pub fn mod_raise(&self, a: &Poly, q_limbs: usize) -> Result<Poly> {
        self.check_shape("mod_raise", &a.shape)?;
        if a.shape.q_limbs != 1 || a.shape.p_limbs != 0 || q_limbs == 0 || q_limbs > self.q_len() {
            return Err(Error::InvalidInput(format!(
                "mod_raise: a polynomial of shape {} raised to {q_limbs} Q limbs (one Q limb in, \
                 1..={} out)",
                a.shape,
                self.q_len()
            )));
        }
        let mut coeff = a.try_clone()?;
        if coeff.form == Form::Ntt {
            self.ntt_inverse(&mut coeff)?;
        }
        let mut out = self.lift(&coeff, self.shape_q(q_limbs))?;
        if a.form == Form::Ntt {
            self.ntt_forward(&mut out)?;
        }
        Ok(out)
    }

    /// The coefficient-form polynomial `a` (one Q limb, no `P` limbs) read as the centred
    /// integers `c ∈ [−⌊q_0/2⌋, ⌊q_0/2⌋]` of its words and lifted to every limb of `shape`
    /// (Q limbs, with or without the `P` limbs), on `a`'s device: [`RnsRing::upload_lifted`]
    /// for words already there (a compactly stored plaintext, expanded where it is used).
    ///
    /// Errors: [`Error::InvalidInput`] unless `a` is in coefficient form with exactly one Q limb
    /// and no `P` limbs; [`Error::ShapeMismatch`] for a shape not of this ring.
    pub fn lift(&self, a: &Poly, shape: PolyShape) -> Result<Poly> {
        self.check_shape("lift", &shape)?;
        self.check_liftable(a)?;
        let storage = match &a.storage {
            Storage::Cpu(x) => {
                let q0 = self.modulus(&shape, 0);
                let centred: Vec<i64> = x.iter().map(|&t| q0.center(t)).collect();
                Storage::Cpu(sampler::lift_signed(&centred, &self.moduli(&shape)))
            }
            Storage::Cuda(x) => Storage::Cuda(self.cuda(x)?.lift_first_limb(x, &shape)?),
        };
        Ok(Poly {
            storage,
            shape,
            form: Form::Coefficient,
        })
    }

    /// What [`RnsRing::lift`] takes: one Q limb of this ring, no `P` limbs, coefficient form.
    fn check_liftable(&self, a: &Poly) -> Result<()> {
        self.check_shape("lift", &a.shape)?;
        if a.shape.q_limbs != 1 || a.shape.p_limbs != 0 || a.form != Form::Coefficient {
            return Err(Error::InvalidInput(format!(
                "lift: a polynomial of shape {} in {} form (one Q limb in coefficient form in)",
                a.shape, a.form
            )));
        }
        Ok(())
    }

    /// [`RnsRing::lift`] of many one-limb polynomials to `shape`; on a GPU, those on one device
    /// lifted in grouped launches (sixteen a launch). The same words as one `lift` each.
    ///
    /// Errors: as [`RnsRing::lift`] for any of them (nothing is lifted then).
    pub fn lift_many(&self, a: &[&Poly], shape: PolyShape) -> Result<Vec<Poly>> {
        self.check_shape("lift", &shape)?;
        for p in a {
            self.check_liftable(p)?;
        }
        let gpu: Option<Vec<&rhea_cuda::DeviceBuffer>> = a
            .iter()
            .map(|p| match &p.storage {
                Storage::Cuda(b) if p.device() == a[0].device() => Some(b),
                _ => None,
            })
            .collect();
        match (gpu, a.first()) {
            (
                Some(bufs),
                Some(Poly {
                    storage: Storage::Cuda(b0),
                    ..
                }),
            ) => {
                let outs = self.cuda(b0)?.lift_first_limb_many(&bufs, &shape)?;
                Ok(outs
                    .into_iter()
                    .map(|b| Poly {
                        storage: Storage::Cuda(b),
                        shape,
                        form: Form::Coefficient,
                    })
                    .collect())
            }
            _ => a.iter().map(|p| self.lift(p, shape)).collect(),
        }
    }

    /// A copy of `a` on `device`, same shape, form and words (a copy on the same device when `a`
    /// is already there). The words travel through host memory (download, then upload); the
    /// host staging copy is zeroised afterwards, since `a` may be secret.
    pub(crate) fn transfer(&self, a: &Poly, device: Device) -> Result<Poly> {
        device.check_supported()?;
        self.check_shape("transfer", &a.shape)?;
        if a.device() == device {
            return a.try_clone();
        }
        let mut words = self.download(a)?;
        let storage = match device {
            Device::Cpu => Storage::Cpu(words),
            Device::Cuda(i) => {
                let b = self
                    .gpu_ring(i)
                    .and_then(|r| Ok(r.device().upload(&words)?));
                zeroize::Zeroize::zeroize(&mut words);
                Storage::Cuda(b?)
            }
        };
        Ok(Poly {
            storage,
            shape: a.shape,
            form: a.form,
        })
    }

    /// Downloads the words (`[limb][N]`) to the host (on a GPU this waits for the queued work).
    pub fn download(&self, a: &Poly) -> Result<Vec<u64>> {
        match &a.storage {
            Storage::Cpu(v) => Ok(v.clone()),
            Storage::Cuda(b) => Ok(b.device().download(b)?),
        }
    }

    /// Downloads a coefficient-form polynomial over Q limbs as the centred integers of its CRT
    /// reconstruction (in `(-Q_ℓ/2, Q_ℓ/2]`), rounded to `f64` (what decoding needs).
    pub fn download_centered_f64(&self, a: &Poly) -> Result<Vec<f64>> {
        self.check_shape("download_centered", &a.shape)?;
        a.expect_form("download_centered", Form::Coefficient)?;
        if a.shape.p_limbs != 0 {
            return Err(Error::ShapeMismatch {
                op: "download_centered",
                lhs: a.shape,
                rhs: self.shape_q(a.shape.q_limbs),
            });
        }
        let shape = a.shape;
        match &a.storage {
            Storage::Cpu(v) => Ok(cpu::centered_f64(self, &shape, v)),
            Storage::Cuda(b) => Ok(cpu::centered_f64(self, &shape, &b.device().download(b)?)),
        }
    }

    /// A coefficient-form polynomial with small signed coefficients (`coeffs.len() = N`), lifted
    /// to every limb of `shape` (on a GPU, for coefficients below `q_0 / 2`, by
    /// [`RnsRing::upload_lifted`]: the same words).
    pub fn from_signed(&self, device: Device, coeffs: &[i64], shape: PolyShape) -> Result<Poly> {
        self.check_shape("from_signed", &shape)?;
        if coeffs.len() != shape.n {
            return Err(Error::InvalidInput(format!(
                "from_signed: {} coefficients for N = {}",
                coeffs.len(),
                shape.n
            )));
        }
        if matches!(device, Device::Cuda(_)) {
            // Small enough for the centred lift from q_0: only that limb crosses the bus.
            let q0 = self.modulus(&shape, 0);
            let half = q0.value() / 2;
            if coeffs.iter().all(|c| c.unsigned_abs() <= half) {
                let limb0 = coeffs.iter().map(|&c| q0.reduce_i64(c)).collect();
                return self.upload_lifted(device, limb0, shape);
            }
        }
        let data = sampler::lift_signed(coeffs, &self.moduli(&shape));
        self.upload(device, data, shape, Form::Coefficient)
    }

    /// A coefficient-form polynomial with 128-bit signed coefficients (`coeffs.len() = N`).
    pub fn from_i128(&self, device: Device, coeffs: &[i128], shape: PolyShape) -> Result<Poly> {
        self.check_shape("from_i128", &shape)?;
        if coeffs.len() != shape.n {
            return Err(Error::InvalidInput(format!(
                "from_i128: {} coefficients for N = {}",
                coeffs.len(),
                shape.n
            )));
        }
        let mut data = Vec::with_capacity(shape.words());
        for q in self.moduli(&shape) {
            data.extend(coeffs.iter().map(|&c| q.reduce_i128(c)));
        }
        self.upload(device, data, shape, Form::Coefficient)
    }

    /// The residues of a signed integer modulo every limb of `shape` (a per-limb scalar).
    pub fn scalar_from_i128(&self, x: i128, shape: &PolyShape) -> Vec<u64> {
        self.moduli(shape)
            .iter()
            .map(|q| q.reduce_i128(x))
            .collect()
    }

    /// The residues of a big signed integer modulo every limb of `shape`.
    pub fn scalar_from_bigint(&self, x: &BigInt, shape: &PolyShape) -> Vec<u64> {
        let (sign, digits) = x.to_u64_digits();
        self.moduli(shape)
            .iter()
            .map(|q| {
                let r = digits
                    .iter()
                    .rev()
                    .fold(0u64, |r, &d| q.reduce_u128(((r as u128) << 64) | d as u128));
                if sign == num_bigint::Sign::Minus {
                    q.neg(r)
                } else {
                    r
                }
            })
            .collect()
    }

    // ---------------------------------------------------------------- transforms

    /// Forward NTT of every limb: coefficient form → NTT form.
    pub fn ntt_forward(&self, a: &mut Poly) -> Result<()> {
        self.check_shape("ntt_forward", &a.shape)?;
        a.expect_form("ntt_forward", Form::Coefficient)?;
        let limbs = a.shape.limbs();
        self.ntt_forward_limbs(a, 0..limbs)?;
        a.form = Form::Ntt;
        Ok(())
    }

    /// [`RnsRing::ntt_forward`] of several polynomials; on a GPU (all on one device) one
    /// grouped launch per phase for every [`rhea_cuda::ntt::MAX_RUNS`] runs (a polynomial of
    /// `Q` and `P` limbs is two runs), the same words as one transform each.
    ///
    /// Errors: as [`RnsRing::ntt_forward`] for any of them; nothing is transformed then.
    pub fn ntt_forward_many(&self, polys: &mut [&mut Poly]) -> Result<()> {
        for p in polys.iter() {
            self.check_shape("ntt_forward", &p.shape)?;
            p.expect_form("ntt_forward", Form::Coefficient)?;
        }
        let Some(first) = polys.first() else {
            return Ok(());
        };
        let dev = first.device();
        let all_gpu = polys
            .iter()
            .all(|p| p.device() == dev && matches!(p.storage, Storage::Cuda(_)));
        let gpu_ring = match (&first.storage, all_gpu) {
            (Storage::Cuda(b), true) => Some(self.cuda(b)?),
            _ => None,
        };
        if let Some(ring) = gpu_ring {
            let limbs = polys.iter().map(|p| p.shape.limbs()).max().unwrap_or(0);
            let mut bufs: Vec<(&PolyShape, &mut rhea_cuda::DeviceBuffer)> = Vec::new();
            for p in polys.iter_mut() {
                if let Poly {
                    storage: Storage::Cuda(b),
                    shape,
                    ..
                } = &mut **p
                {
                    bufs.push((&*shape, b));
                }
            }
            ring.ntt_many(&mut bufs, 0..limbs, NttDirection::Forward)?;
        } else {
            for p in polys.iter_mut() {
                let limbs = p.shape.limbs();
                self.ntt_forward_limbs(p, 0..limbs)?;
            }
        }
        for p in polys.iter_mut() {
            p.form = Form::Ntt;
        }
        Ok(())
    }

    /// Inverse NTT of every limb: NTT form → coefficient form.
    pub fn ntt_inverse(&self, a: &mut Poly) -> Result<()> {
        self.check_shape("ntt_inverse", &a.shape)?;
        a.expect_form("ntt_inverse", Form::Ntt)?;
        let limbs = a.shape.limbs();
        self.ntt_inverse_limbs(a, 0..limbs)?;
        a.form = Form::Coefficient;
        Ok(())
    }

    /// Forward NTT of the limbs in `limbs` only. Low level: the polynomial's [`Form`] flag is
    /// not changed, so the caller owns the mixed state it creates.
    pub fn ntt_forward_limbs(&self, a: &mut Poly, limbs: Range<usize>) -> Result<()> {
        check_range("ntt_forward_limbs", &a.shape, &limbs)?;
        let shape = a.shape;
        match &mut a.storage {
            Storage::Cpu(v) => cpu::ntt_forward(self, &shape, v, limbs),
            Storage::Cuda(b) => self.cuda(b)?.ntt(&shape, b, limbs, NttDirection::Forward),
        }
    }

    /// Inverse NTT of the limbs in `limbs` only (low level, see
    /// [`RnsRing::ntt_forward_limbs`]).
    pub fn ntt_inverse_limbs(&self, a: &mut Poly, limbs: Range<usize>) -> Result<()> {
        check_range("ntt_inverse_limbs", &a.shape, &limbs)?;
        let shape = a.shape;
        match &mut a.storage {
            Storage::Cpu(v) => cpu::ntt_inverse(self, &shape, v, limbs),
            Storage::Cuda(b) => self.cuda(b)?.ntt(&shape, b, limbs, NttDirection::Inverse),
        }
    }

    // ---------------------------------------------------------------- element-wise

    /// `a += b`.
    pub fn add_assign(&self, a: &mut Poly, b: &Poly) -> Result<()> {
        self.check_binary("add", a, b)?;
        let (shape, da, db) = (a.shape, a.device(), b.device());
        match (&mut a.storage, &b.storage) {
            (Storage::Cpu(x), Storage::Cpu(y)) => cpu::add(self, &shape, x, y),
            (Storage::Cuda(x), Storage::Cuda(y)) => self.cuda(x)?.add(&shape, x, y)?,
            _ => return Err(mixed("add", da, db)),
        }
        Ok(())
    }

    /// `a -= b`.
    pub fn sub_assign(&self, a: &mut Poly, b: &Poly) -> Result<()> {
        self.check_binary("sub", a, b)?;
        let (shape, da, db) = (a.shape, a.device(), b.device());
        match (&mut a.storage, &b.storage) {
            (Storage::Cpu(x), Storage::Cpu(y)) => cpu::sub(self, &shape, x, y),
            (Storage::Cuda(x), Storage::Cuda(y)) => self.cuda(x)?.sub(&shape, x, y)?,
            _ => return Err(mixed("sub", da, db)),
        }
        Ok(())
    }

    /// `a = b - a`.
    pub fn sub_from_assign(&self, a: &mut Poly, b: &Poly) -> Result<()> {
        self.check_binary("sub_from", a, b)?;
        let (shape, da, db) = (a.shape, a.device(), b.device());
        match (&mut a.storage, &b.storage) {
            (Storage::Cpu(x), Storage::Cpu(y)) => cpu::sub_from(self, &shape, x, y),
            (Storage::Cuda(x), Storage::Cuda(y)) => self.cuda(x)?.sub_from(&shape, x, y)?,
            _ => return Err(mixed("sub_from", da, db)),
        }
        Ok(())
    }

    /// `a = -a`.
    pub fn neg_assign(&self, a: &mut Poly) -> Result<()> {
        self.check_shape("neg", &a.shape)?;
        let shape = a.shape;
        match &mut a.storage {
            Storage::Cpu(x) => cpu::neg(self, &shape, x),
            Storage::Cuda(x) => self.cuda(x)?.neg(&shape, x)?,
        }
        Ok(())
    }

    /// `a *= b`, pointwise (both in NTT form: the negacyclic product).
    pub fn mul_assign(&self, a: &mut Poly, b: &Poly) -> Result<()> {
        self.check_binary("mul", a, b)?;
        a.expect_form("mul", Form::Ntt)?;
        let (shape, da, db) = (a.shape, a.device(), b.device());
        match (&mut a.storage, &b.storage) {
            (Storage::Cpu(x), Storage::Cpu(y)) => cpu::mul(self, &shape, x, y),
            (Storage::Cuda(x), Storage::Cuda(y)) => self.cuda(x)?.mul(&shape, x, y)?,
            _ => return Err(mixed("mul", da, db)),
        }
        Ok(())
    }

    /// `acc += a · b` (NTT form).
    pub fn mul_add_assign(&self, acc: &mut Poly, a: &Poly, b: &Poly) -> Result<()> {
        self.check_binary("mul_add", acc, a)?;
        self.check_binary("mul_add", acc, b)?;
        acc.expect_form("mul_add", Form::Ntt)?;
        let (shape, dz, da) = (acc.shape, acc.device(), a.device());
        match (&mut acc.storage, &a.storage, &b.storage) {
            (Storage::Cpu(z), Storage::Cpu(x), Storage::Cpu(y)) => {
                cpu::mul_add(self, &shape, z, x, y)
            }
            (Storage::Cuda(z), Storage::Cuda(x), Storage::Cuda(y)) => {
                self.cuda(z)?.mul_add(&shape, z, x, y)?
            }
            _ => return Err(mixed("mul_add", dz, da)),
        }
        Ok(())
    }

    /// `acc -= a · b` (NTT form).
    pub fn mul_sub_assign(&self, acc: &mut Poly, a: &Poly, b: &Poly) -> Result<()> {
        self.check_binary("mul_sub", acc, a)?;
        self.check_binary("mul_sub", acc, b)?;
        acc.expect_form("mul_sub", Form::Ntt)?;
        let (shape, dz, da) = (acc.shape, acc.device(), a.device());
        match (&mut acc.storage, &a.storage, &b.storage) {
            (Storage::Cpu(z), Storage::Cpu(x), Storage::Cpu(y)) => {
                cpu::mul_sub(self, &shape, z, x, y)
            }
            (Storage::Cuda(z), Storage::Cuda(x), Storage::Cuda(y)) => {
                self.cuda(z)?.mul_sub(&shape, z, x, y)?
            }
            _ => return Err(mixed("mul_sub", dz, da)),
        }
        Ok(())
    }

    /// `a + b` into a new polynomial of `a`'s shape.
    pub fn add(&self, a: &Poly, b: &Poly) -> Result<Poly> {
        if let (Storage::Cuda(x), Storage::Cuda(y)) = (&a.storage, &b.storage) {
            self.check_binary("add", a, b)?;
            let out = self.cuda(x)?.add_sub_new(&a.shape, x, y, false)?;
            return Ok(Poly::cuda(out, a.shape, a.form));
        }
        if let (Storage::Cpu(x), Storage::Cpu(y)) = (&a.storage, &b.storage) {
            self.check_binary("add", a, b)?;
            let out = cpu::add_new(self, &a.shape, x, y);
            return Ok(Poly {
                storage: Storage::Cpu(out),
                shape: a.shape,
                form: a.form,
            });
        }
        let mut out = a.try_clone()?;
        self.add_assign(&mut out, b)?;
        Ok(out)
    }

    /// `a - b` into a new polynomial of `a`'s shape.
    pub fn sub(&self, a: &Poly, b: &Poly) -> Result<Poly> {
        if let (Storage::Cuda(x), Storage::Cuda(y)) = (&a.storage, &b.storage) {
            self.check_binary("sub", a, b)?;
            let out = self.cuda(x)?.add_sub_new(&a.shape, x, y, true)?;
            return Ok(Poly::cuda(out, a.shape, a.form));
        }
        if let (Storage::Cpu(x), Storage::Cpu(y)) = (&a.storage, &b.storage) {
            self.check_binary("sub", a, b)?;
            let out = cpu::sub_new(self, &a.shape, x, y);
            return Ok(Poly {
                storage: Storage::Cpu(out),
                shape: a.shape,
                form: a.form,
            });
        }
        let mut out = a.try_clone()?;
        self.sub_assign(&mut out, b)?;
        Ok(out)
    }

    /// `a · b` (NTT form) into a new polynomial of `a`'s shape.
    pub fn mul(&self, a: &Poly, b: &Poly) -> Result<Poly> {
        if let (Storage::Cuda(x), Storage::Cuda(y)) = (&a.storage, &b.storage) {
            self.check_binary("mul", a, b)?;
            a.expect_form("mul", Form::Ntt)?;
            let out = self.cuda(x)?.mul_new(&a.shape, x, y)?;
            return Ok(Poly::cuda(out, a.shape, a.form));
        }
        if let (Storage::Cpu(x), Storage::Cpu(y)) = (&a.storage, &b.storage) {
            self.check_binary("mul", a, b)?;
            a.expect_form("mul", Form::Ntt)?;
            let out = cpu::mul_new(self, &a.shape, x, y);
            return Ok(Poly {
                storage: Storage::Cpu(out),
                shape: a.shape,
                form: a.form,
            });
        }
        let mut out = a.try_clone()?;
        self.mul_assign(&mut out, b)?;
        Ok(out)
    }

    /// `a *= c_i` on limb `i` (`scalars` canonical, one per limb).
    pub fn mul_scalar_assign(&self, a: &mut Poly, scalars: &[u64]) -> Result<()> {
        self.check_scalars("mul_scalar", a, scalars)?;
        let shape = a.shape;
        match &mut a.storage {
            Storage::Cpu(x) => cpu::mul_scalar(self, &shape, x, scalars),
            Storage::Cuda(x) => self.cuda(x)?.mul_scalar(&shape, x, scalars)?,
        }
        Ok(())
    }

    /// `acc += a · c_i` on limb `i`.
    pub fn mul_scalar_add_assign(&self, acc: &mut Poly, a: &Poly, scalars: &[u64]) -> Result<()> {
        self.check_binary("mul_scalar_add", acc, a)?;
        self.check_scalars("mul_scalar_add", acc, scalars)?;
        let (shape, dz, da) = (acc.shape, acc.device(), a.device());
        match (&mut acc.storage, &a.storage) {
            (Storage::Cpu(z), Storage::Cpu(x)) => cpu::mul_scalar_add(self, &shape, z, x, scalars),
            (Storage::Cuda(z), Storage::Cuda(x)) => {
                *z = self.cuda(z)?.mul_scalar_add(&shape, z, x, scalars)?;
            }
            _ => return Err(mixed("mul_scalar_add", dz, da)),
        }
        Ok(())
    }

    /// Adds the constant polynomial `c` (residues `c_i`, one per limb): to every evaluation in
    /// NTT form, to the constant coefficient in coefficient form.
    pub fn add_scalar_assign(&self, a: &mut Poly, scalars: &[u64]) -> Result<()> {
        self.check_scalars("add_scalar", a, scalars)?;
        let shape = a.shape;
        let form = a.form;
        match &mut a.storage {
            Storage::Cpu(x) => match form {
                Form::Ntt => cpu::add_scalar_all(self, &shape, x, scalars),
                Form::Coefficient => cpu::add_scalar_coeff0(self, &shape, x, scalars),
            },
            Storage::Cuda(x) => {
                let g = self.cuda(x)?;
                match form {
                    Form::Ntt => g.add_scalar_all(&shape, x, scalars)?,
                    Form::Coefficient => g.add_scalar_coeff0(&shape, x, scalars)?,
                }
            }
        }
        Ok(())
    }

    // ---------------------------------------------------------------- automorphism

    /// The Galois automorphism `X ↦ X^g` (`g` odd), in either form. In NTT form it is pure index
    /// arithmetic: entry `i` of the result is entry `j` of the input with
    /// `2·bitrev(j) + 1 ≡ g·(2·bitrev(i) + 1) (mod 2N)`.
    pub fn automorphism(&self, a: &Poly, g: u64) -> Result<Poly> {
        self.check_shape("automorphism", &a.shape)?;
        check_galois(g)?;
        let shape = a.shape;
        let data = match (&a.storage, a.form) {
            (Storage::Cpu(x), Form::Ntt) => {
                let perm = cpu::automorphism_permutation(shape.n, g);
                Storage::Cpu(cpu::automorphism_ntt(&shape, x, &perm))
            }
            (Storage::Cpu(x), Form::Coefficient) => {
                Storage::Cpu(cpu::automorphism_coeff(self, &shape, x, g))
            }
            (Storage::Cuda(x), form) => {
                Storage::Cuda(
                    self.cuda(x)?
                        .automorphism(&shape, x, g, form == Form::Ntt)?,
                )
            }
        };
        Ok(Poly {
            storage: data,
            shape,
            form: a.form,
        })
    }

    // ---------------------------------------------------------------- basis changes

    /// A copy keeping the first `q_limbs` Q limbs (and the `P` limbs, if any): dropping levels.
    /// Copies only the kept limbs (use [`RnsRing::truncate_q_limbs`] to drop them in place).
    pub fn drop_q_limbs(&self, a: &Poly, q_limbs: usize) -> Result<Poly> {
        if a.shape.p_limbs == 0 && q_limbs > 0 && q_limbs <= a.shape.q_limbs {
            if let Storage::Cuda(b) = &a.storage {
                self.check_shape("drop_limbs", &a.shape)?;
                let shape = PolyShape::qp(a.shape.n, q_limbs, 0);
                let copy = b.prefix(shape.words())?.try_clone()?;
                return Ok(Poly {
                    storage: Storage::Cuda(copy),
                    shape,
                    form: a.form,
                });
            }
        }
        let mut out = a.try_clone()?;
        self.truncate_q_limbs(&mut out, q_limbs)?;
        Ok(out)
    }

    /// Keeps only the first `q_limbs` Q limbs (and the `P` limbs, if any), in place.
    pub fn truncate_q_limbs(&self, a: &mut Poly, q_limbs: usize) -> Result<()> {
        self.check_shape("drop_limbs", &a.shape)?;
        let target = PolyShape::qp(a.shape.n, q_limbs, a.shape.p_limbs);
        if q_limbs == 0 || q_limbs > a.shape.q_limbs {
            return Err(Error::ShapeMismatch {
                op: "drop_limbs",
                lhs: a.shape,
                rhs: target,
            });
        }
        let n = a.shape.n;
        let (from, to) = (a.shape.q_limbs * n, q_limbs * n);
        match &mut a.storage {
            Storage::Cpu(v) => {
                // Move the P limbs down behind the kept Q limbs, then cut.
                v.copy_within(from.., to);
                v.truncate(target.words());
            }
            // Without P limbs the kept limbs are a prefix: shorten in place, no copy.
            Storage::Cuda(b) if a.shape.p_limbs == 0 => b.truncate(to)?,
            Storage::Cuda(b) => {
                let shape = a.shape;
                *b = self.cuda(b)?.truncate(&shape, b, q_limbs)?;
            }
        }
        a.shape = target;
        Ok(())
    }

    /// ModUp of every active digit of a level-`ℓ` polynomial (NTT form, no `P` limbs) to
    /// `Q_ℓ ∪ P` (NTT form), for hybrid key switching. The result can be shared by many key
    /// switchings of the same polynomial (hoisting).
    pub fn mod_up(&self, a: &Poly) -> Result<Vec<Poly>> {
        self.check_shape("mod_up", &a.shape)?;
        a.expect_form("mod_up", Form::Ntt)?;
        if a.shape.p_limbs != 0 {
            return Err(Error::ShapeMismatch {
                op: "mod_up",
                lhs: a.shape,
                rhs: self.shape_q(a.shape.q_limbs),
            });
        }
        let ell = a.shape.q_limbs;
        let shape = self.shape_qp(ell);
        match &a.storage {
            Storage::Cpu(x) => Ok(cpu::mod_up_digits(self, ell, x)?
                .into_iter()
                .map(|v| Poly {
                    storage: Storage::Cpu(v),
                    shape,
                    form: Form::Ntt,
                })
                .collect()),
            Storage::Cuda(x) => Ok(self
                .cuda(x)?
                .mod_up(self, ell, x)?
                .into_iter()
                .map(|b| Poly::cuda(b, shape, Form::Ntt))
                .collect()),
        }
    }

    /// ModDown from `Q_ℓ ∪ P` to `Q_ℓ` (NTT form): exactly `round(a / P)` for the centred
    /// representative of `a` (the `P → Q_ℓ` conversion is `rhea_math`'s exact centred one, so
    /// the rounding error is zero-mean; `rhea_math::bconv::ModDown` is the floor-like variant).
    pub fn mod_down(&self, a: &Poly) -> Result<Poly> {
        let ell = self.check_mod_down_input(a)?;
        match &a.storage {
            Storage::Cpu(x) => Ok(Poly {
                storage: Storage::Cpu(cpu::mod_down(self, ell, x)?),
                shape: self.shape_q(ell),
                form: Form::Ntt,
            }),
            Storage::Cuda(x) => Ok(Poly::cuda(
                self.cuda(x)?.mod_down(self, ell, x)?,
                self.shape_q(ell),
                Form::Ntt,
            )),
        }
    }

    /// ModDown's input checks (a polynomial of this ring over `Q_ℓ ∪ P` in NTT form); returns `ℓ`.
    fn check_mod_down_input(&self, a: &Poly) -> Result<usize> {
        self.check_shape("mod_down", &a.shape)?;
        a.expect_form("mod_down", Form::Ntt)?;
        if a.shape.p_limbs != self.p_len() {
            return Err(Error::ShapeMismatch {
                op: "mod_down",
                lhs: a.shape,
                rhs: self.shape_qp(a.shape.q_limbs),
            });
        }
        Ok(a.shape.q_limbs)
    }

    /// [`RnsRing::mod_down`] of `a + NTT(e)` for `e` in coefficient form over `a`'s shape, the
    /// same words without transforming `e` (the CPU's public-key encryption).
    ///
    /// Errors: as [`RnsRing::mod_down`]; [`Error::ShapeMismatch`] for an `e` of another shape,
    /// the form error of [`Poly::expect_form`] for `e` in NTT form, [`Error::InvalidInput`]
    /// for polynomials not on the CPU.
    pub(crate) fn mod_down_adding(&self, a: &Poly, e: &Poly) -> Result<Poly> {
        e.expect_form("mod_down_adding", Form::Coefficient)?;
        if e.shape != a.shape {
            return Err(Error::ShapeMismatch {
                op: "mod_down_adding",
                lhs: a.shape,
                rhs: e.shape,
            });
        }
        match (&a.storage, &e.storage) {
            (Storage::Cpu(x), Storage::Cpu(ev)) => {
                let ell = self.check_mod_down_input(a)?;
                Ok(Poly {
                    storage: Storage::Cpu(cpu::mod_down_adding(self, ell, x, Some(ev))?),
                    shape: self.shape_q(ell),
                    form: Form::Ntt,
                })
            }
            _ => Err(Error::InvalidInput(
                "mod_down_adding: CPU polynomials only (the GPU encrypts by its fused path)".into(),
            )),
        }
    }

    /// `P · a` over `Q_ℓ ∪ P` for `a` over `Q_ℓ` (no `P` limbs), in either form: limb `q_i` is
    /// `a_i · [P]_{q_i}`, the `P` limbs are zero (`P · a ≡ 0 mod p_j`). The extended-basis form
    /// of a ciphertext component that was not key-switched: `ModDown(P·a + u) = a + ModDown(u)`
    /// exactly, so sums of key-switching results and such lifts can stay in `Q_ℓ ∪ P` and share
    /// one ModDown (hoisted linear transforms).
    pub fn lift_times_p(&self, a: &Poly) -> Result<Poly> {
        self.check_shape("lift_times_p", &a.shape)?;
        let ell = a.shape.q_limbs;
        if a.shape.p_limbs != 0 {
            return Err(Error::ShapeMismatch {
                op: "lift_times_p",
                lhs: a.shape,
                rhs: self.shape_q(ell),
            });
        }
        let shape = self.shape_qp(ell);
        let mut scalars = vec![0u64; shape.limbs()];
        scalars[..ell].copy_from_slice(&self.p_mod_q()[..ell]);
        let n = shape.n;
        let storage = match &a.storage {
            Storage::Cpu(x) => {
                let mut out = vec![0u64; shape.words()];
                out[..ell * n].copy_from_slice(x);
                cpu::mul_scalar(self, &shape, &mut out, &scalars);
                Storage::Cpu(out)
            }
            Storage::Cuda(x) => {
                let g = self.cuda(x)?;
                let mut out = g.device().alloc_zeroed(shape.words())?;
                DeviceBuffer::copy_region(x, 0, &mut out, 0, ell * n)?;
                g.mul_scalar(&shape, &mut out, &scalars)?;
                Storage::Cuda(out)
            }
        };
        Ok(Poly {
            storage,
            shape,
            form: a.form,
        })
    }

    /// Rescaling by the last Q limb: exactly `round(a / q_{ℓ-1})` over `Q_{ℓ-1}`, in either form.
    pub fn rescale(&self, a: &Poly) -> Result<Poly> {
        self.check_shape("rescale", &a.shape)?;
        let ell = a.shape.q_limbs;
        if a.shape.p_limbs != 0 || ell < 2 {
            return Err(Error::ShapeMismatch {
                op: "rescale",
                lhs: a.shape,
                rhs: self.shape_q(ell.max(2)),
            });
        }
        let n = a.shape.n;
        let storage = match (&a.storage, a.form) {
            (Storage::Cpu(x), Form::Ntt) => Storage::Cpu(cpu::rescale_ntt(self, ell, x)?),
            (Storage::Cpu(x), Form::Coefficient) => {
                let mut out = vec![0u64; (ell - 1) * n];
                self.rescaler().apply(ell, x, &mut out, n)?;
                Storage::Cpu(out)
            }
            (Storage::Cuda(x), form) => {
                Storage::Cuda(self.cuda(x)?.rescale(self, ell, x, form == Form::Ntt)?)
            }
        };
        Ok(Poly {
            storage,
            shape: self.shape_q(ell - 1),
            form: a.form,
        })
    }

    /// The argument checks of [`RnsRing::keyswitch_inner_product`] (digits on one device, in NTT
    /// form, over `Q_ℓ ∪ P`; a full-level key with at least as many digits).
    pub(super) fn keyswitch_inner_product_checks(
        &self,
        digits: &[Poly],
        key: &[[Poly; 2]],
    ) -> Result<()> {
        let first = digits
            .first()
            .ok_or_else(|| Error::InvalidInput("keyswitch_inner_product: no digits".to_string()))?;
        if key.len() < digits.len() {
            return Err(Error::InvalidInput(format!(
                "keyswitch_inner_product: {} digits but the key has {}",
                digits.len(),
                key.len()
            )));
        }
        let ell = first.shape.q_limbs;
        let shape = self.shape_qp(ell);
        let full = self.full_shape();
        for d in digits {
            same_device("keyswitch_inner_product", first, d)?;
            d.expect_form("keyswitch_inner_product", Form::Ntt)?;
            if d.shape != shape {
                return Err(Error::ShapeMismatch {
                    op: "keyswitch_inner_product",
                    lhs: d.shape,
                    rhs: shape,
                });
            }
        }
        for k in key.iter().take(digits.len()).flatten() {
            same_device("keyswitch_inner_product", first, k)?;
            k.expect_form("keyswitch_inner_product", Form::Ntt)?;
            if k.shape != full {
                return Err(Error::ShapeMismatch {
                    op: "keyswitch_inner_product",
                    lhs: k.shape,
                    rhs: full,
                });
            }
        }
        Ok(())
    }

    /// The key-switching inner product over `Q_ℓ ∪ P`: `(Σ_j d_j · b_j, Σ_j d_j · a_j)` for the
    /// ModUp digits `d_j` (from [`RnsRing::mod_up`]) and a key's digit pairs `[b_j, a_j]` stored
    /// over the full `Q ∪ P` (only the limbs of `Q_ℓ ∪ P` are read). Uses the first
    /// `digits.len()` key digits.
    pub fn keyswitch_inner_product(&self, digits: &[Poly], key: &[[Poly; 2]]) -> Result<[Poly; 2]> {
        self.keyswitch_inner_product_checks(digits, key)?;
        let first = &digits[0];
        let ell = first.shape.q_limbs;
        let shape = self.shape_qp(ell);
        let keys = key.iter().take(digits.len());
        if let Storage::Cuda(first_buf) = &first.storage {
            let mut ds: Vec<&DeviceBuffer> = Vec::with_capacity(digits.len());
            for d in digits {
                match &d.storage {
                    Storage::Cuda(v) => ds.push(v),
                    Storage::Cpu(_) => {
                        return Err(mixed(
                            "keyswitch_inner_product",
                            first.device(),
                            Device::Cpu,
                        ))
                    }
                }
            }
            let mut ks: Vec<(&DeviceBuffer, &DeviceBuffer)> = Vec::with_capacity(digits.len());
            for [b, a] in keys {
                match (&b.storage, &a.storage) {
                    (Storage::Cuda(b), Storage::Cuda(a)) => ks.push((b, a)),
                    _ => {
                        return Err(mixed(
                            "keyswitch_inner_product",
                            first.device(),
                            Device::Cpu,
                        ))
                    }
                }
            }
            let (o0, o1) = self.cuda(first_buf)?.inner_product(self, ell, &ds, &ks)?;
            return Ok([
                Poly::cuda(o0, shape, Form::Ntt),
                Poly::cuda(o1, shape, Form::Ntt),
            ]);
        }
        let mut ds: Vec<&[u64]> = Vec::with_capacity(digits.len());
        for d in digits {
            match &d.storage {
                Storage::Cpu(v) => ds.push(v),
                Storage::Cuda(_) => {
                    return Err(mixed("keyswitch_inner_product", Device::Cpu, d.device()))
                }
            }
        }
        let mut ks: Vec<(&[u64], &[u64])> = Vec::with_capacity(digits.len());
        for [b, a] in keys {
            match (&b.storage, &a.storage) {
                (Storage::Cpu(b), Storage::Cpu(a)) => ks.push((b, a)),
                _ => return Err(mixed("keyswitch_inner_product", Device::Cpu, b.device())),
            }
        }
        let (o0, o1) = cpu::inner_product(self, ell, &ds, &ks);
        let wrap = |v| Poly {
            storage: Storage::Cpu(v),
            shape,
            form: Form::Ntt,
        };
        Ok([wrap(o0), wrap(o1)])
    }

    /// `(Σ_i a_i ⊙ b_{i,0}, Σ_i a_i ⊙ b_{i,1})` for polynomials of one shape, form and device:
    /// the plaintext–ciphertext dot product of a linear transform's giant step (plaintext
    /// diagonals `a_i` times the baby-step rotations `b_i` of a ciphertext, in `Q_ℓ ∪ P`): one
    /// sum of [`RnsRing::sums_of_products`]. Exact sums reduced once.
    ///
    /// Errors: [`Error::InvalidInput`] for no terms or unequal counts; shape, form and device
    /// mismatches as the element-wise primitives.
    pub fn sum_of_products(&self, a: &[&Poly], b: &[[&Poly; 2]]) -> Result<[Poly; 2]> {
        if a.len() != b.len() {
            return Err(Error::InvalidInput(format!(
                "`sum_of_products`: {} left and {} right operands",
                a.len(),
                b.len()
            )));
        }
        let row: Vec<Option<&Poly>> = a.iter().copied().map(Some).collect();
        let mut sums = self.sums_of_products(b, std::slice::from_ref(&row))?;
        sums.pop()
            .ok_or_else(|| Error::InvalidInput("`sum_of_products`: no terms".into()))
    }

    /// Several sums of products over the same right operands:
    /// `out_s = (Σ_t left[s][t] ⊙ right[t][0], Σ_t left[s][t] ⊙ right[t][1])`, a term absent
    /// where `left[s][t]` is `None`. The words of [`RnsRing::sum_of_products`] of each sum; on a
    /// GPU one pass reads each right operand once for all the sums (the giant steps of a linear
    /// transform over its baby steps).
    ///
    /// Errors: [`Error::InvalidInput`] for no right operands, no sums, a row of `left` not
    /// `right.len()` long or a sum without terms; the binary operations' errors for operands
    /// of different shapes, forms or devices.
    pub fn sums_of_products(
        &self,
        right: &[[&Poly; 2]],
        left: &[Vec<Option<&Poly>>],
    ) -> Result<Vec<[Poly; 2]>> {
        const OP: &str = "sums_of_products";
        let Some([first, _]) = right.first() else {
            return Err(Error::InvalidInput(format!("`{OP}`: no right operands")));
        };
        if left.is_empty() {
            return Err(Error::InvalidInput(format!("`{OP}`: no sums")));
        }
        for [y0, y1] in right {
            self.check_binary(OP, first, y0)?;
            self.check_binary(OP, first, y1)?;
        }
        for (s, row) in left.iter().enumerate() {
            if row.len() != right.len() {
                return Err(Error::InvalidInput(format!(
                    "`{OP}`: sum {s} has {} terms for {} right operands",
                    row.len(),
                    right.len()
                )));
            }
            if row.iter().all(Option::is_none) {
                return Err(Error::InvalidInput(format!("`{OP}`: sum {s} has no terms")));
            }
            for x in row.iter().flatten() {
                self.check_binary(OP, first, x)?;
            }
        }
        let (shape, form) = (first.shape, first.form);
        let wrap = |storage| Poly {
            storage,
            shape,
            form,
        };
        if let Storage::Cuda(fb) = &first.storage {
            let ys = right
                .iter()
                .map(|[y0, y1]| Ok((cuda_of(OP, y0)?, cuda_of(OP, y1)?)))
                .collect::<Result<Vec<_>>>()?;
            let xs = left
                .iter()
                .map(|row| {
                    row.iter()
                        .map(|x| x.map(|p| cuda_of(OP, p)).transpose())
                        .collect::<Result<Vec<_>>>()
                })
                .collect::<Result<Vec<_>>>()?;
            let outs = self.cuda(fb)?.sums_of_products(&shape, &ys, &xs)?;
            return Ok(outs
                .into_iter()
                .map(|(o0, o1)| [wrap(Storage::Cuda(o0)), wrap(Storage::Cuda(o1))])
                .collect());
        }
        left.iter()
            .map(|row| {
                let mut xs: Vec<&[u64]> = Vec::with_capacity(row.len());
                let mut ys: Vec<(&[u64], &[u64])> = Vec::with_capacity(row.len());
                for (x, [y0, y1]) in row.iter().zip(right) {
                    if let Some(x) = x {
                        xs.push(host_of(OP, x)?);
                        ys.push((host_of(OP, y0)?, host_of(OP, y1)?));
                    }
                }
                let (o0, o1) = cpu::sum_of_products(self, &shape, &xs, &ys, |i| i);
                Ok([wrap(Storage::Cpu(o0)), wrap(Storage::Cpu(o1))])
            })
            .collect()
    }

    // ---------------------------------------------------------------- sampling

    /// A uniform polynomial regenerated from `(seed, stream)`, read as NTT-form values (a
    /// uniform polynomial is uniform in either form), so it can be shipped as its seed.
    pub fn sample_uniform_from_seed(
        &self,
        device: Device,
        seed: &[u8; 32],
        stream: u64,
        shape: PolyShape,
    ) -> Result<Poly> {
        self.check_shape("sample_uniform", &shape)?;
        if let Device::Cuda(i) = device {
            let b = self.gpu_ring(i)?.uniform(&shape, seed, stream)?;
            return Ok(Poly::cuda(b, shape, Form::Ntt));
        }
        let data = sampler::uniform_poly_from_seed(seed, stream, &self.moduli(&shape), shape.n);
        self.upload(device, data, shape, Form::Ntt)
    }

    /// A discrete Gaussian error polynomial (`σ = sigma`, tail cut `6σ`) in NTT form, sampled on
    /// `device`: one fresh 32-byte seed is drawn from `rng`, and the polynomial is
    /// [`sampler::gaussian_from_seed`]`(seed, 0, N, σ, 6σ)` lifted to every limb, so the CPU and
    /// a GPU give the same words. On a GPU the samples are drawn, lifted and transformed on the
    /// device (nothing crosses the bus), except for tail cuts too wide for the kernel's table
    /// (`6σ ≥ 129`, see `rhea_cuda::sample::gaussian_fits`), which are sampled on the host and
    /// uploaded.
    pub fn sample_gaussian(
        &self,
        device: Device,
        rng: &mut Prng,
        sigma: f64,
        shape: PolyShape,
    ) -> Result<Poly> {
        let mut p = self.sample_gaussian_coefficients(device, rng, sigma, shape)?;
        self.ntt_forward(&mut p)?;
        Ok(p)
    }

    /// [`RnsRing::sample_gaussian`] in coefficient form (the same seed drawn from `rng`), for
    /// callers that transform several polynomials together ([`RnsRing::ntt_forward_many`]).
    pub(crate) fn sample_gaussian_coefficients(
        &self,
        device: Device,
        rng: &mut Prng,
        sigma: f64,
        shape: PolyShape,
    ) -> Result<Poly> {
        self.check_shape("sample_gaussian", &shape)?;
        let seed = zeroize::Zeroizing::new(rng.fresh_seed());
        let bound = 6.0 * sigma;
        Ok(match device {
            Device::Cuda(i) if rhea_cuda::sample::gaussian_fits(bound) => {
                let b = self.gpu_ring(i)?.gaussian(&shape, &seed, sigma, bound)?;
                Poly::cuda(b, shape, Form::Coefficient)
            }
            _ => {
                let mut coeffs = sampler::gaussian_from_seed(&seed, 0, shape.n, sigma, bound)?;
                let p = self.from_signed(device, &coeffs, shape);
                zeroize::Zeroize::zeroize(&mut coeffs);
                p?
            }
        })
    }

    /// A uniform ternary polynomial (`{-1, 0, 1}`) in NTT form, sampled on `device`: one fresh
    /// 32-byte seed is drawn from `rng`, and the polynomial is
    /// [`sampler::ternary_from_seed`]`(seed, 0, N)` lifted to every limb (on a GPU, drawn,
    /// lifted and transformed on the device; the CPU gives the same words).
    pub fn sample_ternary(&self, device: Device, rng: &mut Prng, shape: PolyShape) -> Result<Poly> {
        let mut p = self.sample_ternary_coefficients(device, rng, shape)?;
        self.ntt_forward(&mut p)?;
        Ok(p)
    }

    /// [`RnsRing::sample_ternary`] in coefficient form (the same seed drawn from `rng`).
    pub(crate) fn sample_ternary_coefficients(
        &self,
        device: Device,
        rng: &mut Prng,
        shape: PolyShape,
    ) -> Result<Poly> {
        self.check_shape("sample_ternary", &shape)?;
        let seed = zeroize::Zeroizing::new(rng.fresh_seed());
        Ok(if let Device::Cuda(i) = device {
            let b = self.gpu_ring(i)?.ternary(&shape, &seed)?;
            Poly::cuda(b, shape, Form::Coefficient)
        } else {
            let mut coeffs = sampler::ternary_from_seed(&seed, 0, shape.n);
            let p = self.from_signed(device, &coeffs, shape);
            zeroize::Zeroize::zeroize(&mut coeffs);
            p?
        })
    }
}

/// The device words of `p`, or the mixed-device error.
fn cuda_of<'a>(op: &'static str, p: &'a Poly) -> Result<&'a DeviceBuffer> {
    match &p.storage {
        Storage::Cuda(x) => Ok(x),
        Storage::Cpu(_) => Err(mixed(op, Device::Cuda(0), Device::Cpu)),
    }
}

/// The host words of `p`, or the mixed-device error.
fn host_of<'a>(op: &'static str, p: &'a Poly) -> Result<&'a [u64]> {
    match &p.storage {
        Storage::Cpu(x) => Ok(x),
        Storage::Cuda(_) => Err(mixed(op, Device::Cpu, p.device())),
    }
}

fn check_range(op: &'static str, shape: &PolyShape, limbs: &Range<usize>) -> Result<()> {
    if limbs.start <= limbs.end && limbs.end <= shape.limbs() {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "`{op}`: limb range {limbs:?} outside a polynomial of {} limbs",
            shape.limbs()
        )))
    }
}

/// [`Error::InvalidInput`] for an even Galois element (the automorphisms take odd `g` mod 2N).
pub(crate) fn check_galois(g: u64) -> Result<()> {
    if g % 2 == 0 {
        return Err(Error::InvalidInput(format!(
            "automorphism: the Galois element {g} is even (it must be odd modulo 2N)"
        )));
    }
    Ok(())
}
