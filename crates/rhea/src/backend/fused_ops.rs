//! Fused primitives: compositions of [`super::ops`] primitives that the CUDA backend runs in fewer
//! passes over device memory (the CPU backend composes the plain primitives). Each one is
//! bit-identical to its composition on either device; `tests.rs` checks that on the CPU and the
//! GPU test suites check GPU against CPU.
//!
//! - [`RnsRing::tensor`]: the product of two 2-component ciphertexts before relinearisation.
//! - [`RnsRing::keyswitch_moddown`]: the key-switching inner product, ModDown of both halves and
//!   the additions that follow (relinearisation adds `c_0, c_1`; a rotation adds `c_0`).
//! - [`RnsRing::rescale_many`]: the rescale of all parts of a ciphertext.
//! - [`RnsRing::keyswitch_moddown_rescale`]: `keyswitch_moddown` then `rescale_many` of both
//!   results, ModDown merged with the rescale (relinearise-and-rescale).
//! - [`RnsRing::keyswitch_poly`]: `mod_up` then `keyswitch_moddown[_rescale]`, the ModUp's
//!   forward row phase merged with the inner product (key switching without hoisting).
//! - [`RnsRing::encrypt_zero_moddown`]: a public-key encryption's samples, inner product and
//!   ModDown, the errors' `Q` part never transformed on the GPU.

use std::sync::Arc;

use rayon::prelude::*;
use rhea_math::sampler::Prng;

use super::cuda::{GpuRing, KsTail};
use super::device::count_fused_fallback;
use super::ops::check_galois;
use super::poly::{Form, Poly, Storage};
use super::{Device, PolyShape, RnsRing};
use crate::error::{Error, Result};

impl RnsRing {
    /// The core of a public-key encryption at level `ell` under the key `(b, a)` (NTT form,
    /// the full `Q ∪ P` basis): draws `v` ternary, then `e_0`, `e_1` Gaussian (`σ = sigma`)
    /// from `rng`, each from one fresh seed as [`RnsRing::sample_ternary`] and
    /// [`RnsRing::sample_gaussian`] do, and returns `(add + ModDown(v·b + e_0), ModDown(v·a +
    /// e_1))` over `Q_ell` (NTT form) — [`RnsRing::keyswitch_moddown_with`] of the transformed
    /// `v` with the transformed errors inside, bit for bit on either device.
    ///
    /// On a GPU with the fast NTT the errors are sampled on `Q_1 ∪ P` only and transformed on
    /// their `P` limbs only: their `Q` part enters the ModDown's forward NTT in coefficient form
    /// (`x + NTT(e) − NTT(y) = x − NTT(y − e)`), which saves `2 · ell` limb-NTTs.
    ///
    /// Errors: [`Error::InvalidInput`] for a level outside `1..=|Q|`, an addend that is not
    /// over `Q_ell` in NTT form, or a key that is not over the full basis in NTT form; the
    /// primitives' errors for operands on different devices.
    pub fn encrypt_zero_moddown(
        &self,
        device: Device,
        rng: &mut Prng,
        sigma: f64,
        ell: usize,
        key: &[Poly; 2],
        add: Option<&Poly>,
    ) -> Result<[Poly; 2]> {
        if ell == 0 || ell > self.q_len() {
            return Err(Error::InvalidInput(format!(
                "encrypt: level {ell} outside 1..={}",
                self.q_len()
            )));
        }
        let full = self.full_shape();
        for k in key {
            if k.shape != full || k.form != Form::Ntt {
                return Err(Error::InvalidInput(
                    "encrypt: the public key must be over the full basis in NTT form".into(),
                ));
            }
        }
        let out_shape = self.shape_q(ell);
        if let Some(m) = add {
            if m.shape != out_shape || m.form != Form::Ntt {
                return Err(Error::InvalidInput(format!(
                    "encrypt: the message must be over {ell} Q limbs in NTT form"
                )));
            }
        }
        let shape = self.shape_qp(ell);
        let mut v = self.sample_ternary_coefficients(device, rng, shape)?;
        if let Some(ring) = self.gpu_encryption_ring(device, key, add)? {
            let e_shape = self.shape_qp(1);
            let mut e0 = self.sample_gaussian_coefficients(device, rng, sigma, e_shape)?;
            let mut e1 = self.sample_gaussian_coefficients(device, rng, sigma, e_shape)?;
            let out = match (
                &mut v.storage,
                &mut e0.storage,
                &mut e1.storage,
                &key[0].storage,
                &key[1].storage,
            ) {
                (
                    Storage::Cuda(vb),
                    Storage::Cuda(e0b),
                    Storage::Cuda(e1b),
                    Storage::Cuda(kb),
                    Storage::Cuda(ka),
                ) => {
                    let add_buf = add.and_then(|m| match &m.storage {
                        Storage::Cuda(b) => Some(b),
                        _ => None,
                    });
                    ring.encrypt_zero_moddown(self, ell, vb, [e0b, e1b], (kb, ka), add_buf)
                }
                _ => Err(Error::InvalidInput(
                    "encrypt: the samples left the device".into(),
                )),
            };
            v.zeroize();
            let [o0, o1] = out?;
            return Ok([
                Poly::cuda(o0, out_shape, Form::Ntt),
                Poly::cuda(o1, out_shape, Form::Ntt),
            ]);
        }
        if device.is_cpu() {
            // The errors join the ModDowns in coefficient form: the words of the composition
            // below, 2·(ℓ + |P|) fewer NTTs.
            let mut e0 = self.sample_gaussian_coefficients(device, rng, sigma, shape)?;
            let mut e1 = self.sample_gaussian_coefficients(device, rng, sigma, shape)?;
            self.ntt_forward(&mut v)?;
            let digits = [v];
            let prods = self.keyswitch_inner_product(&digits, std::slice::from_ref(key));
            let [mut d] = digits;
            d.zeroize();
            let [a0, a1] = prods?;
            let (u0, u1) = rayon::join(
                || self.mod_down_adding(&a0, &e0),
                || self.mod_down_adding(&a1, &e1),
            );
            e0.zeroize();
            e1.zeroize();
            let mut u0 = u0?;
            if let Some(m) = add {
                self.add_assign(&mut u0, m)?;
            }
            return Ok([u0, u1?]);
        }
        note_fallback(device);
        let mut e0 = self.sample_gaussian_coefficients(device, rng, sigma, shape)?;
        let mut e1 = self.sample_gaussian_coefficients(device, rng, sigma, shape)?;
        self.ntt_forward_many(&mut [&mut v, &mut e0, &mut e1])?;
        let mut digits = [v];
        let out = self.keyswitch_moddown_with(
            &digits,
            std::slice::from_ref(key),
            [Some(&e0), Some(&e1)],
            [add, None],
        );
        digits[0].zeroize();
        out
    }

    /// The GPU ring of a public-key encryption on `device` when the key and the addend are on
    /// that GPU and it serves the lifted path ([`GpuRing::lifted_encryption`]); `None` when the
    /// composed path must run.
    fn gpu_encryption_ring(
        &self,
        device: Device,
        key: &[Poly; 2],
        add: Option<&Poly>,
    ) -> Result<Option<Arc<GpuRing>>> {
        let Device::Cuda(i) = device else {
            return Ok(None);
        };
        let on_it = |p: &Poly| matches!(&p.storage, Storage::Cuda(b) if b.device().index() == i);
        if !key.iter().all(on_it) || !add.map_or(true, on_it) {
            return Ok(None);
        }
        let ring = self.gpu_ring(i)?;
        Ok(ring.lifted_encryption().then_some(ring))
    }

    /// The device tables of the GPU holding `buf`.
    fn cuda_ring(&self, buf: &rhea_cuda::DeviceBuffer) -> Result<Arc<GpuRing>> {
        self.gpu_ring(buf.device().index())
    }

    /// The device buffers of a key switching when everything (digits, key, addends of the
    /// output shape in NTT form) is on one GPU, after the composed path's checks; `None` when
    /// the composed path must run.
    #[allow(clippy::type_complexity)]
    fn gpu_keyswitch_args<'a>(
        &self,
        digits: &'a [Poly],
        key: &'a [[Poly; 2]],
        adds: [Option<&'a Poly>; 2],
    ) -> Result<
        Option<(
            Arc<GpuRing>,
            Vec<&'a rhea_cuda::DeviceBuffer>,
            Vec<(&'a rhea_cuda::DeviceBuffer, &'a rhea_cuda::DeviceBuffer)>,
            [Option<&'a rhea_cuda::DeviceBuffer>; 2],
        )>,
    > {
        let Some(first) = digits.first() else {
            return Ok(None);
        };
        let out_shape = self.shape_q(first.shape.q_limbs);
        let Storage::Cuda(fb) = &first.storage else {
            return Ok(None);
        };
        let Some(add_bufs) = gpu_addends(adds, out_shape, fb.device().index()) else {
            return Ok(None);
        };
        // The checks of the composed path (shapes, forms, devices, key length).
        self.keyswitch_inner_product_checks(digits, key)?;
        let ds: Vec<_> = digits
            .iter()
            .filter_map(|d| match &d.storage {
                Storage::Cuda(x) => Some(x),
                _ => None,
            })
            .collect();
        let ks: Vec<_> = key
            .iter()
            .take(digits.len())
            .filter_map(|[b, a]| match (&b.storage, &a.storage) {
                (Storage::Cuda(b), Storage::Cuda(a)) => Some((b, a)),
                _ => None,
            })
            .collect();
        if ds.len() == digits.len() && ks.len() == digits.len() {
            Ok(Some((self.cuda_ring(fb)?, ds, ks, add_bufs)))
        } else {
            Ok(None)
        }
    }

    /// `(a_0 b_0, a_0 b_1 + a_1 b_0, a_1 b_1)` (NTT form): the tensor product of two
    /// 2-component ciphertexts of one shape, `a` and `b` possibly the same (squaring). One pass
    /// over the inputs on the GPU; on the CPU (or for operands of different shapes, which are
    /// read as views like [`RnsRing::mul`]) `mul`, `mul`, `mul_add`, `mul`.
    pub fn tensor(&self, a: [&Poly; 2], b: [&Poly; 2]) -> Result<[Poly; 3]> {
        let shape = a[0].shape;
        let same = a.iter().chain(b.iter()).all(|p| p.shape == shape);
        if same {
            if let (Storage::Cuda(a0), Storage::Cuda(a1), Storage::Cuda(b0), Storage::Cuda(b1)) =
                (&a[0].storage, &a[1].storage, &b[0].storage, &b[1].storage)
            {
                self.check_shape("tensor", &shape)?;
                for p in a.iter().chain(b.iter()) {
                    p.expect_form("tensor", Form::Ntt)?;
                }
                let devs = [a1, b0, b1]
                    .iter()
                    .all(|x| x.device().index() == a0.device().index());
                if devs {
                    let [d0, d1, d2] = self.cuda_ring(a0)?.tensor(&shape, [a0, a1], [b0, b1])?;
                    return Ok([
                        Poly::cuda(d0, shape, Form::Ntt),
                        Poly::cuda(d1, shape, Form::Ntt),
                        Poly::cuda(d2, shape, Form::Ntt),
                    ]);
                }
            }
        }
        note_fallback(a[0].device());
        let d0 = self.mul(a[0], b[0])?;
        let mut d1 = self.mul(a[0], b[1])?;
        self.mul_add_assign(&mut d1, a[1], b[0])?;
        let d2 = self.mul(a[1], b[1])?;
        Ok([d0, d1, d2])
    }

    /// Key switching from ModUp digits, to the end: `(add_0 + u_0, add_1 + u_1)` with
    /// `u_c = ModDown(Σ_j d_j · key_{j,c})` over `d`'s Q limbs (a missing addend counts as 0).
    /// The composition of [`RnsRing::keyswitch_inner_product`], [`RnsRing::mod_down`] of both
    /// halves and [`RnsRing::add_assign`]; on the GPU one inner-product launch, one inverse NTT
    /// of both halves' `P` limbs, one conversion and one forward NTT with the subtraction, the
    /// `P^{-1}` factor and the addition fused into its epilogue.
    pub fn keyswitch_moddown(
        &self,
        digits: &[Poly],
        key: &[[Poly; 2]],
        adds: [Option<&Poly>; 2],
    ) -> Result<[Poly; 2]> {
        self.keyswitch_moddown_with(digits, key, [None, None], adds)
    }

    /// [`RnsRing::keyswitch_moddown`] with `inner_c` added to the inner product before the
    /// ModDown: `(add_0 + ModDown(inner_0 + Σ_j d_j · key_{j,c}), …)`, `inner_c` over the digits'
    /// shape `Q_ℓ ∪ P` (NTT form). A public-key encryption is this with one digit, the ternary
    /// `v`, the public key as the key, the two errors inside and the message outside. On the
    /// GPU the inner additions ride in the inner-product launch.
    ///
    /// Errors: as [`RnsRing::keyswitch_moddown`], plus those of [`RnsRing::add_assign`] for an
    /// inner addend of another shape, form or device.
    pub fn keyswitch_moddown_with(
        &self,
        digits: &[Poly],
        key: &[[Poly; 2]],
        inner: [Option<&Poly>; 2],
        adds: [Option<&Poly>; 2],
    ) -> Result<[Poly; 2]> {
        self.keyswitch_moddown_full(digits, key, inner, adds, None)
    }

    /// `(σ_g(u_0), σ_g(u_1))` for `(u_0, u_1)` = [`RnsRing::keyswitch_moddown`]`(digits, key,
    /// adds)`: a hoisted rotation's key switching and automorphism. On the GPU the ModDown's
    /// last kernel writes its results permuted (no automorphism launches); elsewhere the
    /// composition. Bit-identical either way.
    ///
    /// Errors: as [`RnsRing::keyswitch_moddown`] and [`RnsRing::automorphism`] (an even `g`).
    pub fn keyswitch_moddown_automorphism(
        &self,
        digits: &[Poly],
        key: &[[Poly; 2]],
        adds: [Option<&Poly>; 2],
        g: u64,
    ) -> Result<[Poly; 2]> {
        self.keyswitch_moddown_full(digits, key, [None, None], adds, Some(g))
    }

    fn keyswitch_moddown_full(
        &self,
        digits: &[Poly],
        key: &[[Poly; 2]],
        inner: [Option<&Poly>; 2],
        adds: [Option<&Poly>; 2],
        galois: Option<u64>,
    ) -> Result<[Poly; 2]> {
        galois.map_or(Ok(()), check_galois)?;
        let first = digits
            .first()
            .ok_or_else(|| Error::InvalidInput("keyswitch_moddown: no digits".to_string()))?;
        let ell = first.shape.q_limbs;
        if let Some((ring, ds, ks, add_bufs)) = self.gpu_keyswitch_args(digits, key, adds)? {
            let in_shape = first.shape;
            let inner_bufs = inner.map(|x| match x {
                Some(Poly {
                    storage: Storage::Cuda(b),
                    shape,
                    form: Form::Ntt,
                    ..
                }) if *shape == in_shape && b.device().index() == ds[0].device().index() => {
                    Some(Some(b))
                }
                Some(_) => None,
                None => Some(None),
            });
            if let [Some(i0), Some(i1)] = inner_bufs {
                let [o0, o1] =
                    ring.keyswitch_moddown(self, ell, &ds, &ks, [i0, i1], add_bufs, galois)?;
                let out_shape = self.shape_q(ell);
                return Ok([
                    Poly::cuda(o0, out_shape, Form::Ntt),
                    Poly::cuda(o1, out_shape, Form::Ntt),
                ]);
            }
        }
        note_fallback(first.device());
        let [mut acc0, mut acc1] = self.keyswitch_inner_product(digits, key)?;
        for (acc, x) in [(&mut acc0, inner[0]), (&mut acc1, inner[1])] {
            if let Some(x) = x {
                self.add_assign(acc, x)?;
            }
        }
        // The two halves are independent (on the CPU each starts with a serial inverse NTT).
        let (u0, u1) = rayon::join(|| self.mod_down(&acc0), || self.mod_down(&acc1));
        let (mut u0, mut u1) = (u0?, u1?);
        if let Some(c) = adds[0] {
            self.add_assign(&mut u0, c)?;
        }
        if let Some(c) = adds[1] {
            self.add_assign(&mut u1, c)?;
        }
        match galois {
            Some(g) => Ok([self.automorphism(&u0, g)?, self.automorphism(&u1, g)?]),
            None => Ok([u0, u1]),
        }
    }

    /// [`RnsRing::keyswitch_moddown`] followed by [`RnsRing::rescale_many`] of both results
    /// (relinearisation or key switching, then rescaling): `(u_0, u_1)` over `ℓ − 1` limbs for
    /// digits over `ℓ ≥ 2` Q limbs. On the GPU the ModDown and the rescale are merged: the
    /// rescale's forward NTT is the ModDown's (one per result limb, not two), bit-identical to
    /// the composition; on the CPU the composition.
    ///
    /// Errors: as [`RnsRing::keyswitch_moddown`], plus [`Error::InvalidInput`] for `ℓ < 2`.
    pub fn keyswitch_moddown_rescale(
        &self,
        digits: &[Poly],
        key: &[[Poly; 2]],
        adds: [Option<&Poly>; 2],
    ) -> Result<[Poly; 2]> {
        let first = digits.first().ok_or_else(|| {
            Error::InvalidInput("keyswitch_moddown_rescale: no digits".to_string())
        })?;
        let ell = first.shape.q_limbs;
        if ell < 2 {
            return Err(Error::InvalidInput(format!(
                "keyswitch_moddown_rescale: {ell} Q limb(s), rescaling needs at least 2"
            )));
        }
        if let Some(gpu) = self.gpu_keyswitch_args(digits, key, adds)? {
            let (ring, ds, ks, add_bufs) = gpu;
            let [o0, o1] = ring.keyswitch_moddown_rescale(self, ell, &ds, &ks, add_bufs)?;
            let out_shape = self.shape_q(ell - 1);
            return Ok([
                Poly::cuda(o0, out_shape, Form::Ntt),
                Poly::cuda(o1, out_shape, Form::Ntt),
            ]);
        }
        note_fallback(first.device());
        let [u0, u1] = self.keyswitch_moddown(digits, key, adds)?;
        let r: [Poly; 2] = self.rescale_many(&[u0, u1])?.try_into().map_err(|_| {
            Error::InvalidInput("keyswitch_moddown_rescale: rescale returned no pair".to_string())
        })?;
        Ok(r)
    }

    /// Key switching of one polynomial to the end: [`RnsRing::mod_up`] of `d` (NTT form over
    /// `Q_ℓ`), then [`RnsRing::keyswitch_moddown`] with `adds` or, with `rescale`,
    /// [`RnsRing::keyswitch_moddown_rescale`], bit for bit. On the GPU the ModUp's forward row
    /// phase and the inner product run as one kernel (`GpuRing::keyswitch_poly`): the digits'
    /// NTT-form limbs never go through device memory. Use [`RnsRing::mod_up`] and
    /// `keyswitch_moddown` instead when one ModUp serves several keys (hoisting).
    ///
    /// Errors: those of [`RnsRing::mod_up`] and [`RnsRing::keyswitch_moddown`] (or
    /// `keyswitch_moddown_rescale`, including [`Error::InvalidInput`] for `ℓ < 2`).
    pub fn keyswitch_poly(
        &self,
        d: &Poly,
        key: &[[Poly; 2]],
        adds: [Option<&Poly>; 2],
        rescale: bool,
    ) -> Result<[Poly; 2]> {
        let tail = if rescale {
            KsTail::Rescale
        } else {
            KsTail::Plain
        };
        self.keyswitch_poly_full(d, key, adds, tail)
    }

    /// `(σ_g(u_0), σ_g(u_1))` for `(u_0, u_1)` = [`RnsRing::keyswitch_poly`]`(d, key, adds,
    /// false)`: a rotation's key switching and automorphism. On the GPU the ModDown's last
    /// kernel writes its results permuted (no automorphism launches); elsewhere the
    /// composition. Bit-identical either way.
    ///
    /// Errors: as [`RnsRing::keyswitch_poly`] and [`RnsRing::automorphism`] (an even `g`).
    pub fn keyswitch_poly_automorphism(
        &self,
        d: &Poly,
        key: &[[Poly; 2]],
        adds: [Option<&Poly>; 2],
        g: u64,
    ) -> Result<[Poly; 2]> {
        self.keyswitch_poly_full(d, key, adds, KsTail::Automorphism(g))
    }

    fn keyswitch_poly_full(
        &self,
        d: &Poly,
        key: &[[Poly; 2]],
        adds: [Option<&Poly>; 2],
        tail: KsTail,
    ) -> Result<[Poly; 2]> {
        let rescale = tail == KsTail::Rescale;
        let galois = match tail {
            KsTail::Automorphism(g) => Some(g),
            _ => None,
        };
        galois.map_or(Ok(()), check_galois)?;
        if let Some((ring, x, ks, add_bufs)) = self.gpu_keyswitch_poly_args(d, key, adds)? {
            let ell = d.shape.q_limbs;
            let [o0, o1] = ring.keyswitch_poly(self, ell, x, &ks, add_bufs, tail)?;
            let out_shape = self.shape_q(if rescale { ell - 1 } else { ell });
            return Ok([
                Poly::cuda(o0, out_shape, Form::Ntt),
                Poly::cuda(o1, out_shape, Form::Ntt),
            ]);
        }
        note_fallback(d.device());
        let digits = self.mod_up(d)?;
        if rescale {
            self.keyswitch_moddown_rescale(&digits, key, adds)
        } else {
            self.keyswitch_moddown_full(&digits, key, [None, None], adds, galois)
        }
    }

    /// The device buffers of [`RnsRing::keyswitch_poly`] when `d`, the key parts it uses and
    /// the addends (NTT form, `d`'s shape) are all on one GPU and valid; `None` when the
    /// composed path must run (it then reports any error).
    #[allow(clippy::type_complexity)]
    fn gpu_keyswitch_poly_args<'a>(
        &self,
        d: &'a Poly,
        key: &'a [[Poly; 2]],
        adds: [Option<&'a Poly>; 2],
    ) -> Result<
        Option<(
            Arc<GpuRing>,
            &'a rhea_cuda::DeviceBuffer,
            Vec<(&'a rhea_cuda::DeviceBuffer, &'a rhea_cuda::DeviceBuffer)>,
            [Option<&'a rhea_cuda::DeviceBuffer>; 2],
        )>,
    > {
        let Storage::Cuda(x) = &d.storage else {
            return Ok(None);
        };
        let ell = d.shape.q_limbs;
        let in_shape = self.shape_q(ell);
        if d.form != Form::Ntt || d.shape != in_shape || ell == 0 || ell > self.q_len() {
            return Ok(None);
        }
        let dev = x.device().index();
        let on_dev = |p: &'a Poly| match &p.storage {
            Storage::Cuda(b) if b.device().index() == dev => Some(b),
            _ => None,
        };
        let digits = self.active_digits(ell);
        let full = self.full_shape();
        let mut ks = Vec::with_capacity(digits);
        for [b, a] in key.iter().take(digits) {
            let ok = |k: &Poly| k.shape == full && k.form == Form::Ntt;
            match (on_dev(b), on_dev(a)) {
                (Some(kb), Some(ka)) if ok(b) && ok(a) => ks.push((kb, ka)),
                _ => return Ok(None),
            }
        }
        if ks.len() < digits {
            return Ok(None);
        }
        let Some(add_bufs) = gpu_addends(adds, in_shape, dev) else {
            return Ok(None);
        };
        Ok(Some((self.cuda_ring(x)?, x, ks, add_bufs)))
    }

    /// [`RnsRing::rescale`] of every polynomial of `parts` (one level, one form, one device):
    /// on the GPU in NTT form, the parts share each launch (one inverse NTT of all last limbs,
    /// one forward NTT with the subtract-multiply in its epilogue).
    pub fn rescale_many(&self, parts: &[Poly]) -> Result<Vec<Poly>> {
        let Some(first) = parts.first() else {
            return Ok(Vec::new());
        };
        let shape = first.shape;
        let batched = parts.len() <= rhea_cuda::ntt::MAX_RUNS
            && shape.p_limbs == 0
            && shape.q_limbs >= 2
            && parts
                .iter()
                .all(|p| p.shape == shape && p.form == Form::Ntt);
        if let (Storage::Cuda(fb), true) = (&first.storage, batched) {
            self.check_shape("rescale", &shape)?;
            let bufs: Vec<_> = parts
                .iter()
                .filter_map(|p| match &p.storage {
                    Storage::Cuda(x) if x.device().index() == fb.device().index() => Some(x),
                    _ => None,
                })
                .collect();
            if bufs.len() == parts.len() {
                let ell = shape.q_limbs;
                let outs = self.cuda_ring(fb)?.rescale_ntt_many(self, ell, &bufs)?;
                let out_shape = self.shape_q(ell - 1);
                return Ok(outs
                    .into_iter()
                    .map(|b| Poly::cuda(b, out_shape, Form::Ntt))
                    .collect());
            }
        }
        note_fallback(first.device());
        parts.par_iter().map(|p| self.rescale(p)).collect()
    }
}

/// Counts a fused primitive that runs as its composition although its operands are on a GPU
/// ([`Device::fused_fallbacks`]); nothing on the CPU, where the composition is the path. A
/// fused primitive composed of others may count once for itself and once for each of them.
fn note_fallback(device: Device) {
    if let Device::Cuda(i) = device {
        count_fused_fallback(i);
    }
}

/// The device buffers of a key switching's addends when every one present is an NTT-form
/// polynomial of `shape` on GPU `dev`; `None` when one is not (the composed path then runs and
/// reports it).
fn gpu_addends(
    adds: [Option<&Poly>; 2],
    shape: PolyShape,
    dev: usize,
) -> Option<[Option<&rhea_cuda::DeviceBuffer>; 2]> {
    let mut bufs = [None, None];
    for (slot, c) in bufs.iter_mut().zip(adds) {
        if let Some(c) = c {
            match &c.storage {
                Storage::Cuda(b)
                    if c.shape == shape && c.form == Form::Ntt && b.device().index() == dev =>
                {
                    *slot = Some(b)
                }
                _ => return None,
            }
        }
    }
    Some(bufs)
}
