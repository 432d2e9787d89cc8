//! Basis changes: truncation, ModUp, ModDown and rescaling (coefficient and NTT form).

use super::*;

impl GpuRing {
    /// Keeps the first `q_limbs` Q limbs and the P limbs of a polynomial of `shape`.
    pub(crate) fn truncate(
        &self,
        shape: &PolyShape,
        a: &DeviceBuffer,
        q_limbs: usize,
    ) -> Result<DeviceBuffer> {
        let n = shape.n;
        let mut out = self.alloc((q_limbs + shape.p_limbs) * n)?;
        DeviceBuffer::copy_region(a, 0, &mut out, 0, q_limbs * n)?;
        DeviceBuffer::copy_region(
            a,
            shape.q_limbs * n,
            &mut out,
            q_limbs * n,
            shape.p_limbs * n,
        )?;
        Ok(out)
    }

    /// ModUp of every active digit of a level-`ℓ` NTT-form polynomial (the twin of
    /// `cpu::mod_up_digits`): one inverse NTT; per digit, the centred conversion of the digit's
    /// limbs to the other limbs of `Q_ℓ ∪ P` (`DeviceModUp::apply_centered`, one launch), the
    /// forward NTT of those converted limbs only, and the digit's own limbs copied from the
    /// NTT-form input (the forward NTT of the whole would give back exactly those words).
    pub(crate) fn mod_up(
        &self,
        ring: &RnsRing,
        ell: usize,
        input: &DeviceBuffer,
    ) -> Result<Vec<DeviceBuffer>> {
        let n = ring.n();
        let (mut outs, runs) = self.mod_up_converted(ring, ell, input)?;
        for (d, o) in outs.iter_mut().enumerate() {
            let own = Self::own_limbs(ring, d, ell);
            DeviceBuffer::copy_region(input, own.start * n, o, own.start * n, own.len() * n)?;
        }
        // One grouped forward transform (per MAX_RUNS runs) over every digit.
        for chunk in runs.chunks(MAX_RUNS) {
            let mut bufs: Vec<&mut DeviceBuffer> = outs.iter_mut().collect();
            self.ntt
                .transform_runs(&mut bufs, chunk, NttDirection::Forward)?;
        }
        Ok(outs)
    }

    /// Digit `d`'s own Q limbs at level `ℓ`.
    pub(super) fn own_limbs(ring: &RnsRing, d: usize, ell: usize) -> std::ops::Range<usize> {
        let r = &ring.digits()[d];
        r.start..r.end.min(ell)
    }

    /// The first part of a ModUp: one inverse NTT of `input`, then every active digit's
    /// centred conversion to the other limbs of `Q_ℓ ∪ P` (coefficient form, one
    /// `[Q_ℓ ∪ P][N]` buffer per digit, its own limbs left unwritten), and the runs of converted
    /// limbs a forward transform must cover (per digit: the Q limbs before and after its own,
    /// tables = limb index, and the P limbs, tables from `|Q|`).
    pub(super) fn mod_up_converted(
        &self,
        ring: &RnsRing,
        ell: usize,
        input: &DeviceBuffer,
    ) -> Result<(Vec<DeviceBuffer>, Vec<NttRun>)> {
        let n = ring.n();
        let shape_q = ring.shape_q(ell);
        let shape_qp = ring.shape_qp(ell);
        // The inverse NTT, with the conversions' first step folded in where it can be (then
        // out of place: the input stays as it is, with no copy).
        let scaled = self.mod_up_inverse.get(ell - 1);
        let coeff = match scaled {
            Some(f) => {
                let mut coeff = self.alloc(input.len())?;
                self.ntt.inverse_scaled_from(input, &mut coeff, 1, ell, f)?;
                coeff
            }
            None => {
                let mut coeff = input.try_clone()?;
                self.ntt(&shape_q, &mut coeff, 0..ell, NttDirection::Inverse)?;
                coeff
            }
        };
        let pl = shape_qp.p_limbs;
        let digits = ring.active_digits(ell);
        let mut converted = (0..digits)
            .map(|_| self.alloc(shape_qp.words()))
            .collect::<Result<Vec<_>>>()?;
        {
            // Every digit's conversion, five digits per launch.
            let mut jobs: Vec<(usize, &mut DeviceBuffer)> =
                converted.iter_mut().enumerate().collect();
            self.mod_up
                .convert_centered_many_with(ell, &coeff, &mut jobs, n, scaled.is_some())?;
        }
        let mut runs = Vec::new();
        for d in 0..digits {
            let own = Self::own_limbs(ring, d, ell);
            let (s, e) = (own.start, own.end);
            for (first, limbs, table) in [(0, s, 0), (e, ell - e, e), (ell, pl, self.q_len)] {
                if limbs > 0 {
                    runs.push(NttRun {
                        buf: d,
                        first_limb: first,
                        limbs,
                        table,
                    });
                }
            }
        }
        Ok((converted, runs))
    }

    /// Rescaling of several NTT-form polynomials of level `ℓ` at once (a ciphertext's parts):
    /// the inverse NTT of every last limb in one launch per phase, then one forward NTT whose
    /// column kernel lifts those limbs centred to the `ℓ - 1` primes as it reads them and whose
    /// row kernel's epilogue writes `(x_i − NTT_i(lift)) · q_{ℓ-1}^{-1}` (the twin of
    /// [`GpuRing::rescale`] on each part).
    pub(crate) fn rescale_ntt_many(
        &self,
        ring: &RnsRing,
        ell: usize,
        inputs: &[&DeviceBuffer],
    ) -> Result<Vec<DeviceBuffer>> {
        let n = ring.n();
        let k = inputs.len();
        if !self.ntt.has_fast_kernels() {
            return inputs
                .iter()
                .map(|x| self.rescale_ntt_composed(ring, ell, x))
                .collect();
        }
        if k == 0 || k > MAX_RUNS {
            return Err(Error::InvalidInput(format!(
                "rescale of {k} polynomials at once (1..={MAX_RUNS})"
            )));
        }
        // The inverse NTT of every input's last limb into `t`, read in place (no copies).
        let mut t = self.alloc(k * n)?;
        let last: Vec<NttRun> = (0..k)
            .map(|i| NttRun {
                buf: 0,
                first_limb: i,
                limbs: 1,
                table: ell - 1,
            })
            .collect();
        let sources: Vec<_> = inputs.iter().map(|x| Some((*x, ell - 1))).collect();
        self.ntt
            .inverse_runs_from(&mut [&mut t], &last, &sources, None)?;
        // The centred lift of each INTT'd last limb to the ell - 1 primes is fused into the
        // forward column kernel, which writes its output to `scratch`.
        let q_last = self.ntt.moduli()[ell - 1];
        let lift: Vec<LiftRun<'_>> = (0..k).map(|i| LiftRun { src: &t, limb: i }).collect();
        let mut scratch = (0..k)
            .map(|_| self.alloc((ell - 1) * n))
            .collect::<Result<Vec<_>>>()?;
        let mut outs = (0..k)
            .map(|_| self.alloc((ell - 1) * n))
            .collect::<Result<Vec<_>>>()?;
        let runs: Vec<NttRun> = (0..k)
            .map(|i| NttRun {
                buf: i,
                first_limb: 0,
                limbs: ell - 1,
                table: 0,
            })
            .collect();
        let epi: Vec<EpilogueRun<'_>> = inputs
            .iter()
            .enumerate()
            .map(|(i, x)| EpilogueRun {
                out: i,
                out_limb: 0,
                x,
                x_limb: 0,
                c: None,
            })
            .collect();
        let mut srcs: Vec<&mut DeviceBuffer> = scratch.iter_mut().collect();
        let mut dsts: Vec<&mut DeviceBuffer> = outs.iter_mut().collect();
        self.ntt.forward_runs_lifted_epilogue(
            &lift,
            q_last,
            &self.full,
            &mut srcs,
            &runs,
            &mut dsts,
            &epi,
            &self.rescale_w[ell - 2],
        )?;
        Ok(outs)
    }

    /// ModDown of a level-`ℓ` NTT-form polynomial over `Q_ℓ ∪ P` to `Q_ℓ` (the twin of
    /// `cpu::mod_down`): inverse NTT of the P limbs, centred conversion `P → Q_ℓ`, forward NTT,
    /// then `(x_i - y_i) · P^{-1} mod q_i` (one fused launch, in place on `y`).
    pub(crate) fn mod_down(
        &self,
        ring: &RnsRing,
        ell: usize,
        input: &DeviceBuffer,
    ) -> Result<DeviceBuffer> {
        let n = ring.n();
        let pl = ring.p_len();
        let shape_q = ring.shape_q(ell);
        let mut xp = self.alloc(pl * n)?;
        DeviceBuffer::copy_region(input, ell * n, &mut xp, 0, pl * n)?;
        let batch = NttBatch::all(1, pl).with_first_table(self.q_len);
        self.ntt
            .transform(&mut xp, &batch, NttDirection::Inverse, NttAlgorithm::Fast)?;
        let mut y = self.alloc(ell * n)?;
        self.mod_down[ell - 1].convert_centered(&mut y, &xp, n)?;
        self.ntt(&shape_q, &mut y, 0..ell, NttDirection::Forward)?;
        fused::sub_mul_scalar_assign(&mut y, input, &self.mod_down_w, &self.full, 0, ell, n)?;
        Ok(y)
    }

    /// Rescaling of a level-`ℓ` polynomial by its last prime (`round(x / q_{ℓ-1})`), in either
    /// form. In coefficient form: the `DeviceRescaler` kernel. In NTT form, only the last limb
    /// leaves the NTT domain: with `c` the centred lift of its coefficients (`x = q_{ℓ-1}·k + c`,
    /// `|c| ≤ ⌊q_{ℓ-1}/2⌋`, so `k = round(x / q_{ℓ-1})`, the `Rescaler`'s integer exactly),
    /// `NTT(k)_i = (x_i − NTT_i([c]_{q_i})) · q_{ℓ-1}^{-1}`: [`GpuRing::rescale_ntt_many`] of
    /// the one polynomial (one-limb inverse NTT, then the lift and the subtract-multiply fused
    /// into the forward NTT).
    pub(crate) fn rescale(
        &self,
        ring: &RnsRing,
        ell: usize,
        input: &DeviceBuffer,
        ntt_form: bool,
    ) -> Result<DeviceBuffer> {
        if ntt_form {
            let mut outs = self.rescale_ntt_many(ring, ell, &[input])?;
            return outs
                .pop()
                .ok_or_else(|| Error::InvalidInput("rescale: no output".into()));
        }
        let mut out = self.alloc((ell - 1) * ring.n())?;
        self.rescaler.apply(ell, input, &mut out, ring.n())?;
        Ok(out)
    }

    /// The NTT-form rescale of one polynomial as separate launches (one-limb inverse NTT, lift,
    /// forward NTT, subtract-multiply): the path for degrees without the fused NTT kernels.
    fn rescale_ntt_composed(
        &self,
        ring: &RnsRing,
        ell: usize,
        input: &DeviceBuffer,
    ) -> Result<DeviceBuffer> {
        let n = ring.n();
        let mut out = self.alloc((ell - 1) * n)?;
        {
            let mut t = self.alloc(n)?;
            DeviceBuffer::copy_region(input, (ell - 1) * n, &mut t, 0, n)?;
            let batch = NttBatch::all(1, 1).with_first_table(ell - 1);
            self.ntt
                .transform(&mut t, &batch, NttDirection::Inverse, NttAlgorithm::Fast)?;
            let q_last = self.q_values[ell - 1];
            fused::rescale_lift(&mut out, &t, q_last, &self.full, ell - 1, n)?;
            self.ntt(
                &ring.shape_q(ell - 1),
                &mut out,
                0..ell - 1,
                NttDirection::Forward,
            )?;
            let w = &self.rescale_w[ell - 2];
            fused::sub_mul_scalar_assign(&mut out, input, w, &self.full, 0, ell - 1, n)?;
        }
        Ok(out)
    }
}
