//! NTTs and automorphisms.

use super::*;

impl GpuRing {
    /// NTT of the limbs `range` of a polynomial of `shape` (Q limbs use tables `0..`, P limbs
    /// tables `|Q|..`).
    pub(crate) fn ntt(
        &self,
        shape: &PolyShape,
        a: &mut DeviceBuffer,
        range: std::ops::Range<usize>,
        dir: NttDirection,
    ) -> Result<()> {
        let limbs = shape.limbs();
        let q_end = range.end.min(shape.q_limbs);
        if range.start < q_end && range.end > shape.q_limbs && self.ntt.has_fast_kernels() {
            // Q and P limbs both: one grouped launch per phase instead of two.
            return self.ntt_many(&mut [(shape, a)], range, dir);
        }
        if range.start < q_end {
            let batch = NttBatch::limb_range(1, limbs, range.start, q_end - range.start);
            self.ntt.transform(a, &batch, dir, NttAlgorithm::Fast)?;
        }
        let p_start = range.start.max(shape.q_limbs);
        if p_start < range.end {
            let batch = NttBatch::limb_range(1, limbs, p_start, range.end - p_start)
                .with_first_table(self.q_len - shape.q_limbs);
            self.ntt.transform(a, &batch, dir, NttAlgorithm::Fast)?;
        }
        Ok(())
    }

    /// NTT of the limbs `range` of several polynomials (each with its shape), in one grouped
    /// launch per phase for every [`MAX_RUNS`] runs of consecutive limbs with one table range
    /// (the Q part and the P part of each polynomial).
    pub(crate) fn ntt_many(
        &self,
        polys: &mut [(&PolyShape, &mut DeviceBuffer)],
        range: std::ops::Range<usize>,
        dir: NttDirection,
    ) -> Result<()> {
        let mut runs = Vec::with_capacity(2 * polys.len());
        for (i, (shape, _)) in polys.iter().enumerate() {
            let q_end = range.end.min(shape.q_limbs);
            if range.start < q_end {
                runs.push(NttRun {
                    buf: i,
                    first_limb: range.start,
                    limbs: q_end - range.start,
                    table: range.start,
                });
            }
            let p_start = range.start.max(shape.q_limbs);
            if p_start < range.end.min(shape.limbs()) {
                runs.push(NttRun {
                    buf: i,
                    first_limb: p_start,
                    limbs: range.end.min(shape.limbs()) - p_start,
                    table: self.q_len + (p_start - shape.q_limbs),
                });
            }
        }
        let mut bufs: Vec<&mut DeviceBuffer> = polys.iter_mut().map(|(_, b)| &mut **b).collect();
        for chunk in runs.chunks(MAX_RUNS) {
            self.ntt.transform_runs(&mut bufs, chunk, dir)?;
        }
        Ok(())
    }

    /// `σ_g` into a new buffer, in the NTT domain (a permutation) or the coefficient domain.
    pub(crate) fn automorphism(
        &self,
        shape: &PolyShape,
        a: &DeviceBuffer,
        g: u64,
        ntt_form: bool,
    ) -> Result<DeviceBuffer> {
        let mut out = self.alloc(shape.words())?;
        let layout = Self::layout(shape);
        if ntt_form {
            automorphism::apply_ntt(&mut out, a, g, &layout)?;
        } else {
            automorphism::apply_coeff(&mut out, a, g, &layout, self.moduli(shape))?;
        }
        Ok(out)
    }
}
