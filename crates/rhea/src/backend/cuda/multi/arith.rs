//! The element-wise operations of a [`GpuGroup`]: sums and differences, negation, integer and
//! constant products, constants added, plaintext operands split like a ciphertext, and levels
//! dropped. Each GPU works on its own limbs with its own moduli, with no communication; the
//! words are those of the single-GPU [`Evaluator`](crate::ckks::Evaluator)'s operation on
//! operands at one level (the group does not align levels: operands at two levels are an
//! error, as for [`GpuGroup::mul_relin`]). Every operation runs like the key switchings
//! (`guarded`: refused once the group failed, the host at most one operation ahead).

use rhea_cuda::elementwise as ew;
use rhea_cuda::{DeviceBuffer, RnsLayout};

use super::{check_operand, GpuGroup, PartitionKind, PartitionedCiphertext, Split};
use crate::backend::Form;
use crate::ckks::scales_match;
use crate::ckks::{Evaluator, Plaintext};
use crate::error::{Error, Result};
use crate::Device;

/// A CKKS plaintext split by limb over a [`GpuGroup`] as a ciphertext's component is
/// ([`GpuGroup::scatter_plaintext`]): GPU `k` holds the `Q` limbs it owns below the level, in
/// increasing order, NTT form. An operand of [`GpuGroup::add_plain`] and
/// [`GpuGroup::mul_plain`] at its level or below (each GPU's limbs at a lower level are a
/// prefix of its limbs).
pub struct PartitionedPlaintext {
    /// `parts[k]`: GPU `k`'s limbs.
    parts: Vec<DeviceBuffer>,
    ell: usize,
    scale: f64,
    params_id: u64,
    split: Split,
}

impl std::fmt::Debug for PartitionedPlaintext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartitionedPlaintext")
            .field("level", &self.level())
            .field("split", &self.split.to_string())
            .finish()
    }
}

impl PartitionedPlaintext {
    /// The level (`Q` limbs − 1).
    pub fn level(&self) -> usize {
        self.ell - 1
    }

    /// The scale `Δ`.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The partition rule of the group that split it.
    pub fn partition_kind(&self) -> PartitionKind {
        self.split.kind
    }

    /// The GPUs of the group that split it, in rank order.
    pub fn devices(&self) -> &[Device] {
        &self.split.devices
    }
}

impl GpuGroup {
    /// `pt` (on the CPU or any GPU; NTT form, as the encoder makes it) split by limb over the
    /// group, for [`GpuGroup::add_plain`] and [`GpuGroup::mul_plain`].
    ///
    /// Errors: [`Error::ParametersMismatch`] for another parameter set; a plaintext not in NTT
    /// form; device errors.
    pub fn scatter_plaintext(&self, pt: &Plaintext) -> Result<PartitionedPlaintext> {
        self.ensure_healthy()?;
        self.ctx
            .rlwe()
            .check_id("scatter a plaintext", pt.params_id)?;
        pt.poly.expect_form("scatter a plaintext", Form::Ntt)?;
        let ell = pt.level() + 1;
        let parts = self.split_q_limbs(&self.ctx.ring().download(&pt.poly)?, ell)?;
        Ok(PartitionedPlaintext {
            parts,
            ell,
            scale: pt.scale,
            params_id: pt.params_id,
            split: self.split.clone(),
        })
    }

    /// `a + b`: the words of [`Evaluator::add`] for two ciphertexts at one level with matching
    /// scales (any number of components, the same for both).
    ///
    /// Errors: [`Error::InvalidInput`] for operands at two levels or of two component counts;
    /// [`Error::ScaleMismatch`]; [`Error::GroupMismatch`]; [`Error::ParametersMismatch`];
    /// device errors; the group's failure.
    pub fn add(
        &self,
        a: &PartitionedCiphertext,
        b: &PartitionedCiphertext,
    ) -> Result<PartitionedCiphertext> {
        self.guarded(|| self.add_sub("add", a, b, ew::add))
    }

    /// `a − b`: the words of [`Evaluator::sub`] (operands as [`GpuGroup::add`]).
    ///
    /// Errors: as [`GpuGroup::add`].
    pub fn sub(
        &self,
        a: &PartitionedCiphertext,
        b: &PartitionedCiphertext,
    ) -> Result<PartitionedCiphertext> {
        self.guarded(|| self.add_sub("sub", a, b, ew::sub))
    }

    /// `−a`: the words of [`Evaluator::neg`].
    ///
    /// Errors: [`Error::GroupMismatch`]; [`Error::ParametersMismatch`]; device errors; the
    /// group's failure.
    pub fn neg(&self, a: &PartitionedCiphertext) -> Result<PartitionedCiphertext> {
        self.guarded(|| {
            self.check_any("neg", a)?;
            self.map_parts(a, a.scale, |k, out, x, layout| {
                ew::neg(out, x, layout, &self.local[k].moduli)
            })
        })
    }

    /// `k · a` for an integer `k` (no scale change, no level): the words of
    /// [`Evaluator::mul_int`].
    ///
    /// Errors: as [`GpuGroup::neg`].
    pub fn mul_int(&self, a: &PartitionedCiphertext, k: i64) -> Result<PartitionedCiphertext> {
        self.guarded(|| {
            self.check_any("mul_int", a)?;
            self.mul_scalar(a, k as i128, a.scale)
        })
    }

    /// `c · a` with `c` encoded as `round(c · scale)`, scale `a.scale · scale`, not rescaled:
    /// the words of [`Evaluator::mul_const_with_scale`] (rescale with [`GpuGroup::rescale`]).
    ///
    /// Errors: [`Error::InvalidScale`] for a scale below 1, zero, negative, NaN or infinite;
    /// [`Error::InvalidInput`] for a constant that does not fit; [`Error::ScaleOverflow`] when
    /// the product's scale does not fit below the modulus; as [`GpuGroup::neg`].
    pub fn mul_const_with_scale(
        &self,
        a: &PartitionedCiphertext,
        c: f64,
        scale: f64,
    ) -> Result<PartitionedCiphertext> {
        const OP: &str = "mul_const_with_scale";
        self.guarded(|| {
            self.check_any(OP, a)?;
            crate::ckks::check_scale(OP, scale)?;
            let k = Evaluator::round_i128(OP, c * scale)?;
            let new_scale = a.scale * scale;
            self.eval.check_fits(OP, new_scale, a.level())?;
            self.mul_scalar(a, k, new_scale)
        })
    }

    /// `a + c` in every slot (a real constant at `a`'s scale): the words of
    /// [`Evaluator::add_const`].
    ///
    /// Errors: [`Error::InvalidInput`] for a constant that does not fit; as [`GpuGroup::neg`].
    pub fn add_const(&self, a: &PartitionedCiphertext, c: f64) -> Result<PartitionedCiphertext> {
        const OP: &str = "add_const";
        self.guarded(|| {
            self.check_any(OP, a)?;
            let k = Evaluator::round_i128(OP, c * a.scale)?;
            self.map_parts_first(a, |g, out, x, layout| {
                let w = self.residues(g, a.ell, k);
                ew::add_scalar(out, x, &w, layout, &self.local[g].moduli)
            })
        })
    }

    /// `a` with its limbs above `level` dropped (the scale kept): the words of
    /// [`Evaluator::drop_to_level`]. The level of `a` itself gives a copy.
    ///
    /// Errors: [`Error::LevelUnderflow`] for a level above `a`'s; as [`GpuGroup::neg`].
    pub fn drop_to_level(
        &self,
        a: &PartitionedCiphertext,
        level: usize,
    ) -> Result<PartitionedCiphertext> {
        const OP: &str = "drop_to_level";
        self.guarded(|| {
            self.check_any(OP, a)?;
            if level > a.level() {
                return Err(Error::LevelUnderflow {
                    op: OP,
                    level: a.level(),
                    needed: level,
                });
            }
            let (n, ell) = (self.ctx.ring().n(), level + 1);
            let parts = a
                .parts
                .iter()
                .map(|bufs| {
                    bufs.iter()
                        .enumerate()
                        .map(|(k, b)| {
                            let words = self.part.q_active(k, ell).len() * n;
                            let mut out = self.rings[k].alloc(words)?;
                            DeviceBuffer::copy_region(b, 0, &mut out, 0, words)?;
                            Ok(out)
                        })
                        .collect::<Result<Vec<_>>>()
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(PartitionedCiphertext {
                parts,
                ell,
                ..a.like()
            })
        })
    }

    /// `ct + pt` for a plaintext at `ct`'s scale and at its level or above (read at `ct`'s
    /// level): the words of [`Evaluator::add_plain`].
    ///
    /// Errors: [`Error::ScaleMismatch`]; [`Error::LevelUnderflow`] for a plaintext below the
    /// ciphertext's level; as [`GpuGroup::neg`].
    pub fn add_plain(
        &self,
        ct: &PartitionedCiphertext,
        pt: &PartitionedPlaintext,
    ) -> Result<PartitionedCiphertext> {
        const OP: &str = "add_plain";
        self.guarded(|| {
            self.check_plain(OP, ct, pt)?;
            if !scales_match(ct.scale, pt.scale) {
                return Err(Error::ScaleMismatch {
                    op: OP,
                    lhs_log_scale: ct.scale.log2(),
                    rhs_log_scale: pt.scale.log2(),
                });
            }
            self.map_parts_first(ct, |k, out, x, layout| {
                let p = pt.parts[k].prefix(layout.words())?;
                ew::add(out, x, &p, layout, &self.local[k].moduli)
            })
        })
    }

    /// `ct · pt` (scale `ct.scale · pt.scale`, not rescaled) for a plaintext at `ct`'s level or
    /// above: the words of [`Evaluator::mul_plain`] of an evaluator in manual mode (rescale
    /// with [`GpuGroup::rescale`]).
    ///
    /// Errors: [`Error::ScaleOverflow`] when the product's scale does not fit below the
    /// modulus; [`Error::LevelUnderflow`] for a plaintext below the ciphertext's level; as
    /// [`GpuGroup::neg`].
    pub fn mul_plain(
        &self,
        ct: &PartitionedCiphertext,
        pt: &PartitionedPlaintext,
    ) -> Result<PartitionedCiphertext> {
        const OP: &str = "mul_plain";
        self.guarded(|| {
            self.check_plain(OP, ct, pt)?;
            let scale = ct.scale * pt.scale;
            self.eval.check_fits(OP, scale, ct.level())?;
            self.map_parts(ct, scale, |k, out, x, layout| {
                let p = pt.parts[k].prefix(layout.words())?;
                ew::mul(out, x, &p, layout, &self.local[k].moduli)
            })
        })
    }

    // ------------------------------------------------------------------ helpers

    /// `a` an operand of `op` of any number of components (at least one).
    fn check_any(&self, op: &'static str, a: &PartitionedCiphertext) -> Result<()> {
        self.ctx.rlwe().check_id(op, a.params_id)?;
        check_operand(op, &self.split, &self.part, self.ctx.ring().n(), a, None)
    }

    /// `ct` and `pt` operands of `op`: both of this group, `pt` at `ct`'s level or above.
    fn check_plain(
        &self,
        op: &'static str,
        ct: &PartitionedCiphertext,
        pt: &PartitionedPlaintext,
    ) -> Result<()> {
        self.check_any(op, ct)?;
        self.ctx.rlwe().check_id(op, pt.params_id)?;
        self.split.check(op, "the plaintext", &pt.split)?;
        if pt.ell < ct.ell {
            return Err(Error::LevelUnderflow {
                op,
                level: pt.level(),
                needed: ct.level(),
            });
        }
        let n = self.ctx.ring().n();
        let lengths_ok = pt.parts.len() == self.gpus()
            && pt
                .parts
                .iter()
                .enumerate()
                .all(|(k, b)| b.len() == self.part.q_active(k, pt.ell).len() * n);
        if !lengths_ok {
            return Err(Error::InvalidInput(format!(
                "{op}: a plaintext at {} limbs not split as this group splits its limbs",
                pt.ell
            )));
        }
        Ok(())
    }

    /// The shape of GPU `k`'s limbs of one component at `ell` limbs.
    fn local_layout(&self, k: usize, ell: usize) -> RnsLayout {
        RnsLayout::new(self.ctx.ring().n(), self.part.q_active(k, ell).len(), 1)
    }

    /// `x` modulo each of GPU `k`'s limbs at `ell` limbs.
    fn residues(&self, k: usize, ell: usize, x: i128) -> Vec<u64> {
        let count = self.part.q_active(k, ell).len();
        self.local[k].moduli.moduli()[..count]
            .iter()
            .map(|q| q.reduce_i128(x))
            .collect()
    }

    /// `k · a`, every component, scale `scale`.
    fn mul_scalar(
        &self,
        a: &PartitionedCiphertext,
        k: i128,
        scale: f64,
    ) -> Result<PartitionedCiphertext> {
        self.map_parts(a, scale, |g, out, x, layout| {
            let w = self.residues(g, a.ell, k);
            ew::mul_scalar(out, x, &w, layout, &self.local[g].moduli)
        })
    }

    /// `op` on each component of two operands at one level with matching scales.
    fn add_sub(
        &self,
        op: &'static str,
        a: &PartitionedCiphertext,
        b: &PartitionedCiphertext,
        f: fn(
            &mut DeviceBuffer,
            &DeviceBuffer,
            &DeviceBuffer,
            &RnsLayout,
            &rhea_cuda::DeviceModuli,
        ) -> rhea_cuda::Result<()>,
    ) -> Result<PartitionedCiphertext> {
        self.check_any(op, a)?;
        self.check_any(op, b)?;
        if a.ell != b.ell || a.parts.len() != b.parts.len() {
            return Err(Error::InvalidInput(format!(
                "{op}: a ciphertext of {} component(s) at level {} and one of {} at level {} \
                 (bring them to one level first)",
                a.parts.len(),
                a.level(),
                b.parts.len(),
                b.level()
            )));
        }
        if !scales_match(a.scale, b.scale) {
            return Err(Error::ScaleMismatch {
                op,
                lhs_log_scale: a.scale.log2(),
                rhs_log_scale: b.scale.log2(),
            });
        }
        let parts = a
            .parts
            .iter()
            .zip(&b.parts)
            .map(|(xa, xb)| {
                self.map_gpus(a.ell, xa, &|k, out, x, layout| {
                    f(out, x, &xb[k], layout, &self.local[k].moduli)
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(PartitionedCiphertext { parts, ..a.like() })
    }

    /// `f(k, out, x, layout)` on GPU `k`'s limbs of every component of `a`, into new buffers;
    /// the result at `a`'s level with scale `scale`.
    fn map_parts(
        &self,
        a: &PartitionedCiphertext,
        scale: f64,
        f: impl Fn(usize, &mut DeviceBuffer, &DeviceBuffer, &RnsLayout) -> rhea_cuda::Result<()>,
    ) -> Result<PartitionedCiphertext> {
        let parts = a
            .parts
            .iter()
            .map(|bufs| self.map_gpus(a.ell, bufs, &f))
            .collect::<Result<Vec<_>>>()?;
        Ok(PartitionedCiphertext {
            parts,
            scale,
            ..a.like()
        })
    }

    /// `f` on the first component of `a` (as [`GpuGroup::map_parts`]), the others copied.
    fn map_parts_first(
        &self,
        a: &PartitionedCiphertext,
        f: impl Fn(usize, &mut DeviceBuffer, &DeviceBuffer, &RnsLayout) -> rhea_cuda::Result<()>,
    ) -> Result<PartitionedCiphertext> {
        let mut parts = Vec::with_capacity(a.parts.len());
        parts.push(self.map_gpus(a.ell, &a.parts[0], &f)?);
        for bufs in &a.parts[1..] {
            parts.push(
                bufs.iter()
                    .map(|b| Ok(b.try_clone()?))
                    .collect::<Result<Vec<_>>>()?,
            );
        }
        Ok(PartitionedCiphertext { parts, ..a.like() })
    }

    /// `f(k, out, bufs[k], layout)` for every GPU `k` with limbs at `ell` limbs.
    fn map_gpus(
        &self,
        ell: usize,
        bufs: &[DeviceBuffer],
        f: &impl Fn(usize, &mut DeviceBuffer, &DeviceBuffer, &RnsLayout) -> rhea_cuda::Result<()>,
    ) -> Result<Vec<DeviceBuffer>> {
        (0..self.gpus())
            .map(|k| {
                let layout = self.local_layout(k, ell);
                let mut out = self.rings[k].alloc(layout.words())?;
                if layout.limbs > 0 {
                    f(k, &mut out, &bufs[k], &layout)?;
                }
                Ok(out)
            })
            .collect()
    }
}
