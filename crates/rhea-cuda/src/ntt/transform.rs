//! The public transforms: plain, limb ranges, grouped runs, scaled inverses and the fused
//! epilogues, with their argument checks.

use super::*;

impl DeviceNttTables {
    /// Forward NTT of every limb of a `polys × limbs × N` buffer (limb `j` uses table `j`).
    pub fn forward(&self, buf: &mut DeviceBuffer, polys: usize, limbs: usize) -> Result<()> {
        self.transform(
            buf,
            &NttBatch::all(polys, limbs),
            NttDirection::Forward,
            NttAlgorithm::Fast,
        )
    }

    /// Inverse NTT of every limb of a `polys × limbs × N` buffer (limb `j` uses table `j`).
    pub fn inverse(&self, buf: &mut DeviceBuffer, polys: usize, limbs: usize) -> Result<()> {
        self.transform(
            buf,
            &NttBatch::all(polys, limbs),
            NttDirection::Inverse,
            NttAlgorithm::Fast,
        )
    }

    /// Forward NTT of limbs `start .. start + count` of every polynomial of a
    /// `polys × limbs × N` buffer (limb `j` uses table `j`); the other limbs are untouched.
    pub fn forward_limbs(
        &self,
        buf: &mut DeviceBuffer,
        polys: usize,
        limbs: usize,
        start: usize,
        count: usize,
    ) -> Result<()> {
        self.transform(
            buf,
            &NttBatch::limb_range(polys, limbs, start, count),
            NttDirection::Forward,
            NttAlgorithm::Fast,
        )
    }

    /// Inverse NTT of limbs `start .. start + count` (as [`DeviceNttTables::forward_limbs`]).
    pub fn inverse_limbs(
        &self,
        buf: &mut DeviceBuffer,
        polys: usize,
        limbs: usize,
        start: usize,
        count: usize,
    ) -> Result<()> {
        self.transform(
            buf,
            &NttBatch::limb_range(polys, limbs, start, count),
            NttDirection::Inverse,
            NttAlgorithm::Fast,
        )
    }

    /// Checks a batch against the buffer and the tables.
    fn check(&self, buf: &DeviceBuffer, batch: &NttBatch) -> Result<()> {
        if !Arc::ptr_eq(buf.device(), &self.device) {
            return Err(CudaError::DeviceMismatch(
                buf.device().index(),
                self.device.index(),
            ));
        }
        let NttBatch {
            polys,
            limbs,
            start,
            count,
            first_table,
        } = *batch;
        if polys == 0 || count == 0 {
            return Err(CudaError::Shape(format!("empty NTT batch {batch:?}")));
        }
        let words = polys
            .checked_mul(limbs)
            .and_then(|x| x.checked_mul(self.degree));
        if words != Some(buf.len()) {
            return Err(CudaError::Shape(format!(
                "NTT batch of {polys} polynomials × {limbs} limbs × N = {} given a buffer of {} \
                 words",
                self.degree,
                buf.len()
            )));
        }
        if !matches!(start.checked_add(count), Some(e) if e <= limbs) {
            return Err(CudaError::Shape(format!(
                "limbs {start}..{} of a polynomial with {limbs} limbs",
                start.saturating_add(count)
            )));
        }
        if !matches!(first_table.checked_add(start + count), Some(e) if e <= self.len()) {
            return Err(CudaError::Shape(format!(
                "limbs {start}..{} with first table {first_table} need tables beyond the {} \
                 uploaded",
                start + count,
                self.len()
            )));
        }
        // Row indices and grid sizes are 32-bit in the kernels.
        let max_rows = (u32::MAX as usize) >> 12;
        if batch.rows() > max_rows || limbs > u32::MAX as usize {
            return Err(CudaError::Shape(format!(
                "NTT batch {batch:?} exceeds one launch ({max_rows} limb-transforms)"
            )));
        }
        Ok(())
    }

    /// Transforms `batch` of `buf` in place in direction `dir` with algorithm `alg`.
    ///
    /// Errors: [`CudaError::Shape`] when the buffer length is not `polys × limbs × N`, the limb
    /// range leaves the polynomial, or the tables run out; [`CudaError::DeviceMismatch`] for a
    /// buffer of another device; [`CudaError::InvalidArgument`] for a split that is not compiled
    /// for this degree; device and NVRTC errors.
    pub fn transform(
        &self,
        buf: &mut DeviceBuffer,
        batch: &NttBatch,
        dir: NttDirection,
        alg: NttAlgorithm,
    ) -> Result<()> {
        self.check(buf, batch)?;
        let args = NttArgs::of(batch);
        let split = match alg {
            NttAlgorithm::Naive => None,
            NttAlgorithm::Fast => default_split(self.log_degree, batch.polys),
            NttAlgorithm::FastSplit(s) => {
                if !splits(self.log_degree).contains(&s) {
                    return Err(CudaError::InvalidArgument(format!(
                        "NTT split {s:?} is not compiled for N = 2^{}",
                        self.log_degree
                    )));
                }
                Some(s)
            }
        };
        match split {
            Some(s) => self.launch_fast(buf, &args, dir, s),
            None => self.launch_naive(buf, &args, dir),
        }
    }

    /// Transforms, in place and in one launch per phase, up to [`MAX_RUNS`] runs of limbs in
    /// `bufs` (a ModUp's digits with their own limbs skipped, both halves of a ciphertext).
    ///
    /// Errors: [`CudaError::Shape`] for an empty or too long list, a run outside its buffer or
    /// beyond the tables, or two runs that overlap; [`CudaError::DeviceMismatch`]; device errors.
    pub fn transform_runs(
        &self,
        bufs: &mut [&mut DeviceBuffer],
        runs: &[NttRun],
        dir: NttDirection,
    ) -> Result<()> {
        let (ptrs, lens) = self.buffers_of(bufs)?;
        let args = self.runs_args(&ptrs, &lens, runs)?;
        match default_split(self.log_degree, 2) {
            Some(s) => self.launch_fast_raw(&args, dir, s),
            None => self.launch_naive_raw(&args, dir),
        }
    }

    /// [`DeviceNttTables::transform_runs`] inverse, out of place where a run has a source:
    /// run `g` with `sources[g] = Some((src, limb))` receives the inverse transform of `src`'s
    /// limbs `limb ..` (left untouched), the others are transformed in place. The row phase
    /// reads the sources (`ntt_inv_rowsd_*_o`), so no copy precedes the transform: a rescale
    /// transforms the last limbs of a ciphertext's polynomials into one scratch buffer this way.
    /// With `factors` ([`DeviceNttTables::scaled_inverse_words`] of `f`, covering every table
    /// the runs use) each limb with table `t` is also multiplied by `f[t]`, the factor riding
    /// in the last stage's `N^{-1}` as with [`DeviceNttTables::inverse_scaled`]: a ModDown
    /// merged with the rescale folds its conversion's `p̂_j^{-1}` into its `P` limbs this way,
    /// beside `Q` limbs whose factor is 1.
    ///
    /// Errors: as [`DeviceNttTables::transform_runs`], plus [`CudaError::Shape`] for a source
    /// list of another length, a source too short for its run, or short factors, and
    /// [`CudaError::InvalidArgument`] without the fast kernels (N < 2^12).
    pub fn inverse_runs_from(
        &self,
        bufs: &mut [&mut DeviceBuffer],
        runs: &[NttRun],
        sources: &[Option<(&DeviceBuffer, usize)>],
        factors: Option<&DeviceBuffer>,
    ) -> Result<()> {
        if sources.len() != runs.len() {
            return Err(CudaError::Shape(format!(
                "{} sources for {} runs",
                sources.len(),
                runs.len()
            )));
        }
        let (ptrs, lens) = self.buffers_of(bufs)?;
        let mut args = self.runs_args(&ptrs, &lens, runs)?;
        if let Some(f) = factors {
            self.check_runs_factors(runs, f)?;
        }
        let n = self.degree;
        // Each DeviceBuffer owns its allocation and `bufs` are borrowed mutably, so no source
        // can overlap a run's destination.
        for (g, (r, src)) in runs.iter().zip(sources).enumerate() {
            let Some((src, limb)) = src else { continue };
            self.check_device(src)?;
            if (limb + r.limbs) * n > src.len() {
                return Err(CudaError::Shape(format!(
                    "run {g}: source limbs {limb}..{} of a {}-word buffer",
                    limb + r.limbs,
                    src.len()
                )));
            }
            args.pro_src[g] = src.device_ptr() + (limb * n * 8) as u64;
        }
        let s = self.grouped_split()?;
        let (name, cfg) =
            self.phase_config(args.rows, NttDirection::Inverse, s, Phase::Rows, false);
        let (first, mut second, _pair) = self.phase_args(&args)?;
        self.launch(
            &format!("{name}_o"),
            cfg,
            0,
            &first,
            NttDirection::Inverse,
            None,
        )?;
        second.pro_src = [0; MAX_RUNS];
        match factors {
            Some(f) => self.launch_scaled_cols(0, &mut second, s, f, false),
            None => self.launch_phase_raw(&second, NttDirection::Inverse, s, Phase::Cols, false),
        }
    }

    /// Checks that scaled-inverse `factors` cover every table of `runs`.
    fn check_runs_factors(&self, runs: &[NttRun], factors: &DeviceBuffer) -> Result<()> {
        self.check_device(factors)?;
        let tables = runs.iter().map(|r| r.table + r.limbs).max().unwrap_or(0);
        if factors.len() < 4 * tables {
            return Err(CudaError::Shape(format!(
                "scaled inverse: {} factor words for {tables} tables",
                factors.len()
            )));
        }
        Ok(())
    }

    /// The scaled inverse column phase (`ntt_inv_cols_*_s`, or with FP64 rows after
    /// `ntt_inv_rowsdf_*_o` `ntt_inv_colsf_*_s`, `args` then carrying the inverse FP64 tables) of
    /// `args` over `data` (0 for grouped launches, whose runs carry their addresses).
    fn launch_scaled_cols(
        &self,
        data: u64,
        args: &mut NttArgs,
        s: NttSplit,
        factors: &DeviceBuffer,
        f64_rows: bool,
    ) -> Result<()> {
        args.pro_w = factors.device_ptr();
        let (_, cfg) = self.phase_config(args.rows, NttDirection::Inverse, s, Phase::Cols, false);
        let f = if f64_rows { "f" } else { "" };
        let name = format!(
            "ntt_inv_cols{f}_{}_{}_{}_s",
            self.log_degree, s.log_n1, s.cols_per_block
        );
        self.launch(&name, cfg, data, args, NttDirection::Inverse, None)
    }

    /// The column phase alone of the forward transform of `runs` (grouped, in place): the
    /// first `log N1` stages, to be finished by a row phase that reads the runs, such as
    /// [`DeviceNttTables::forward_rows_keyswitch`]. On its own the result is not a transform.
    ///
    /// Errors: as [`DeviceNttTables::transform_runs`], plus [`CudaError::InvalidArgument`] for a
    /// degree without the fast kernels.
    pub fn forward_columns_runs(
        &self,
        bufs: &mut [&mut DeviceBuffer],
        runs: &[NttRun],
    ) -> Result<()> {
        let (ptrs, lens) = self.buffers_of(bufs)?;
        let args = self.runs_args(&ptrs, &lens, runs)?;
        let s = self.grouped_split()?;
        self.launch_phase_raw(&args, NttDirection::Forward, s, Phase::Cols, false)
    }

    /// The words [`DeviceNttTables::inverse_scaled`] reads for factors `f` (`f[t]` for table
    /// `t`, canonical): per table `N^{-1}·f`, `inv_root_powers[1]·N^{-1}·f` (the last inverse
    /// stage's two constants), each with its Shoup companion. Upload once, use many times.
    ///
    /// Errors: [`CudaError::Shape`] for more factors than tables.
    pub fn scaled_inverse_words(&self, f: &[u64]) -> Result<Vec<u64>> {
        if f.len() > self.moduli.len() {
            return Err(CudaError::Shape(format!(
                "{} factors for {} tables",
                f.len(),
                self.moduli.len()
            )));
        }
        let mut out = Vec::with_capacity(4 * f.len());
        for (t, (&ft, m)) in f.iter().zip(&self.moduli).enumerate() {
            let w = &self.prime_words[t * PRIME_WORDS..(t + 1) * PRIME_WORDS];
            let (a, b) = (m.mul(w[2], ft), m.mul(w[4], ft));
            out.extend_from_slice(&[a, m.shoup(a), b, m.shoup(b)]);
        }
        Ok(out)
    }

    /// The inverse transform of `batch` in `buf` times a factor per table: limb `j` of the range
    /// with table `t` is multiplied by `f[t]`, `factors` holding
    /// [`DeviceNttTables::scaled_inverse_words`] of `f` for every table the batch uses. The
    /// factor rides in the last stage's `N^{-1}`: no extra pass.
    ///
    /// Errors: as [`DeviceNttTables::inverse`], plus [`CudaError::Shape`] when `factors` is
    /// short, [`CudaError::InvalidArgument`] without the fast kernels (N < 2^12).
    pub fn inverse_scaled(
        &self,
        buf: &mut DeviceBuffer,
        batch: &NttBatch,
        factors: &DeviceBuffer,
    ) -> Result<()> {
        self.inverse_scaled_impl(None, buf, batch, factors)
    }

    /// [`DeviceNttTables::inverse_scaled`] of every limb of `polys × limbs` (limb `j` with table
    /// `j`), out of place: `dst` receives the scaled inverse of `src` (same shape), which is
    /// left untouched; no copy (the row phase reads `src`).
    ///
    /// Errors: as `inverse_scaled`, plus [`CudaError::Shape`] when `src` and `dst` differ in
    /// length or are the same buffer.
    pub fn inverse_scaled_from(
        &self,
        src: &DeviceBuffer,
        dst: &mut DeviceBuffer,
        polys: usize,
        limbs: usize,
        factors: &DeviceBuffer,
    ) -> Result<()> {
        self.check_device(src)?;
        if src.len() != dst.len() || src.device_ptr() == dst.device_ptr() {
            return Err(CudaError::Shape(
                "scaled inverse: the source must be another buffer of the destination's length"
                    .into(),
            ));
        }
        self.inverse_scaled_impl(Some(src), dst, &NttBatch::all(polys, limbs), factors)
    }

    fn inverse_scaled_impl(
        &self,
        src: Option<&DeviceBuffer>,
        buf: &mut DeviceBuffer,
        batch: &NttBatch,
        factors: &DeviceBuffer,
    ) -> Result<()> {
        self.check(buf, batch)?;
        self.check_device(factors)?;
        let tables = batch.first_table + batch.start + batch.count;
        if factors.len() < 4 * tables {
            return Err(CudaError::Shape(format!(
                "scaled inverse: {} factor words for {tables} tables",
                factors.len()
            )));
        }
        let s = default_split(self.log_degree, batch.polys).ok_or_else(|| {
            CudaError::InvalidArgument(format!(
                "the scaled inverse needs the fast NTT (N = 2^{} is outside its range)",
                self.log_degree
            ))
        })?;
        let (mut first, mut second, _pair) = self.phase_args(&NttArgs::of(batch))?;
        // FP64 rows (set_fp64_inverse) in the out-of-place form only: the row kernel reads
        // words and writes doubles, the column kernel reads them and writes words.
        let f64_rows = src.is_some()
            && batch.first_table == 0
            && batch.start == 0
            && self.inverse_takes_fp64(batch.polys, batch.count);
        let f = if f64_rows { "f" } else { "" };
        if let (true, Some((tw, tw3))) = (f64_rows, &self.inverse_f64) {
            for a in [&mut first, &mut second] {
                a.tw_f64 = tw.device_ptr();
                a.tw3_f64 = tw3.device_ptr();
            }
        }
        match src {
            // The out-of-place row kernel is compiled for the derived-twiddle split only.
            Some(src) if s.derived_twiddles => {
                first.pro_src[0] = src.device_ptr();
                let (_, cfg) =
                    self.phase_config(first.rows, NttDirection::Inverse, s, Phase::Rows, false);
                let name = format!("ntt_inv_rowsd{f}_{}_{}_o", self.log_degree, s.log_n1);
                self.launch(
                    &name,
                    cfg,
                    buf.device_ptr(),
                    &first,
                    NttDirection::Inverse,
                    None,
                )?;
            }
            Some(src) => {
                src.copy_into(buf)?;
                self.launch_phase(buf, &first, NttDirection::Inverse, s, Phase::Rows)?;
            }
            None => self.launch_phase(buf, &first, NttDirection::Inverse, s, Phase::Rows)?,
        }
        self.launch_scaled_cols(buf.device_ptr(), &mut second, s, factors, f64_rows)
    }

    /// The forward transform of `runs` of `srcs` (in place: `srcs` are scratch, their words
    /// undefined afterwards) with the fused epilogue: run `r`'s transform `v` becomes
    /// `[c +] (x − v) · w mod q` in `outs` as `epi[r]` says, `w` being `(w, shoup(w))` pairs by
    /// table index in `w_pairs` (ModDown's `P^{-1}`, rescale's `q_last^{-1}`), one launch per
    /// phase.
    ///
    /// Errors: as [`DeviceNttTables::transform_runs`], plus [`CudaError::Shape`] when `epi`
    /// does not match `runs` or an epilogue operand is too short.
    pub fn forward_runs_epilogue(
        &self,
        srcs: &mut [&mut DeviceBuffer],
        runs: &[NttRun],
        outs: &mut [&mut DeviceBuffer],
        epi: &[EpilogueRun<'_>],
        w_pairs: &DeviceBuffer,
    ) -> Result<()> {
        self.forward_runs_epilogue_automorphism(srcs, runs, outs, epi, w_pairs, None)
    }

    /// [`DeviceNttTables::forward_runs_epilogue`] with, for `Some(g)`, the results written
    /// permuted by the automorphism `σ_g` (as [`crate::automorphism::apply_ntt`] of the
    /// results would leave them, word for word): a key switching's ModDown and a rotation's
    /// automorphism in one pass.
    ///
    /// Errors: as `forward_runs_epilogue`, plus [`CudaError::InvalidArgument`] for an even `g`.
    pub fn forward_runs_epilogue_automorphism(
        &self,
        srcs: &mut [&mut DeviceBuffer],
        runs: &[NttRun],
        outs: &mut [&mut DeviceBuffer],
        epi: &[EpilogueRun<'_>],
        w_pairs: &DeviceBuffer,
        galois: Option<u64>,
    ) -> Result<()> {
        self.epilogue_launch(srcs, runs, outs, epi, w_pairs, galois, false)
    }

    /// [`DeviceNttTables::forward_runs_epilogue_automorphism`] for `x` operands read here for
    /// the last time (a key switching's accumulator): the row kernel drops their cache lines
    /// from L2 once read, so that the dead words are not written back to device memory. After
    /// the call the words of `x` that the runs read are undefined.
    ///
    /// Errors: as `forward_runs_epilogue_automorphism`, plus [`CudaError::Shape`] when a run's
    /// `x` limbs overlap another run's `x` limbs or any run's `c` limbs.
    pub fn forward_runs_epilogue_consuming_x(
        &self,
        srcs: &mut [&mut DeviceBuffer],
        runs: &[NttRun],
        outs: &mut [&mut DeviceBuffer],
        epi: &[EpilogueRun<'_>],
        w_pairs: &DeviceBuffer,
        galois: Option<u64>,
    ) -> Result<()> {
        self.epilogue_launch(srcs, runs, outs, epi, w_pairs, galois, true)
    }

    #[allow(clippy::too_many_arguments)]
    fn epilogue_launch(
        &self,
        srcs: &mut [&mut DeviceBuffer],
        runs: &[NttRun],
        outs: &mut [&mut DeviceBuffer],
        epi: &[EpilogueRun<'_>],
        w_pairs: &DeviceBuffer,
        galois: Option<u64>,
        x_consumed: bool,
    ) -> Result<()> {
        let (ptrs, lens) = self.buffers_of(srcs)?;
        let mut args = self.epilogue_args(&ptrs, &lens, runs, outs, epi, w_pairs)?;
        if x_consumed {
            self.check_consumed_x(runs, epi)?;
            args.dead |= 2;
        }
        if let Some(g) = galois {
            args.epi_galois = galois_inverse(g, self.degree)?;
        }
        self.launch_epilogue_pair(&args, "cols", false)
    }

    /// The consumed `x` regions (run `r` reads limbs `x_limb .. x_limb + limbs` of its `x`) are
    /// dropped from L2 as they are read: none may overlap another run's `x` or any `c`, which
    /// would then read undefined words.
    fn check_consumed_x(&self, runs: &[NttRun], epi: &[EpilogueRun<'_>]) -> Result<()> {
        let row = (self.degree * 8) as u64;
        let x_of = |r: &NttRun, e: &EpilogueRun<'_>| {
            let p = e.x.device_ptr() + e.x_limb as u64 * row;
            (p, p + r.limbs as u64 * row)
        };
        for (i, (ri, ei)) in runs.iter().zip(epi).enumerate() {
            let (a0, a1) = x_of(ri, ei);
            for (j, (rj, ej)) in runs.iter().zip(epi).enumerate() {
                let x_clash = j != i && {
                    let (b0, b1) = x_of(rj, ej);
                    a0 < b1 && b0 < a1
                };
                let c_clash = ej.c.is_some_and(|(c, cl)| {
                    let b0 = c.device_ptr() + cl as u64 * row;
                    a0 < b0 + rj.limbs as u64 * row && b0 < a1
                });
                if x_clash || c_clash {
                    return Err(CudaError::Shape(format!(
                        "consumed epilogue operand x of run {i} overlaps an operand of run {j}"
                    )));
                }
            }
        }
        Ok(())
    }

    /// [`DeviceNttTables::forward_runs_epilogue`] whose input is lifted on the fly (rescaling
    /// in the NTT domain): run `r`'s limb `j` (table `t = runs[r].table + j`, prime `q_t`) is the
    /// forward transform of `[c]_{q_t}`, `c` the centred representative
    /// (`|c| ≤ ⌊q_last/2⌋`) of the words of the single limb `lift[r]` (canonical modulo the odd
    /// `q_last`), then the epilogue `[c' +] (x − v) · w` as in `forward_runs_epilogue`. The
    /// column kernel reads the lifted limb instead of the run, and writes its (intermediate)
    /// output to the run in `scratch`: the runs' previous contents are ignored and clobbered.
    /// `moduli` is the moduli table indexed by table (its entry `t` must be table `t`'s prime).
    /// One launch per phase; no separate lift.
    ///
    /// Errors: as [`DeviceNttTables::forward_runs_epilogue`], plus [`CudaError::Shape`] when
    /// `lift` does not match `runs`, a lifted limb is outside its buffer or overlaps a scratch
    /// buffer, or `moduli` does not list the runs' primes; [`CudaError::InvalidArgument`] for
    /// an even `q_last`, or a degree without the fast kernels.
    #[allow(clippy::too_many_arguments)]
    pub fn forward_runs_lifted_epilogue(
        &self,
        lift: &[LiftRun<'_>],
        q_last: Modulus,
        moduli: &DeviceModuli,
        scratch: &mut [&mut DeviceBuffer],
        runs: &[NttRun],
        outs: &mut [&mut DeviceBuffer],
        epi: &[EpilogueRun<'_>],
        w_pairs: &DeviceBuffer,
    ) -> Result<()> {
        let args = self.lifted_args(lift, q_last, moduli, scratch, runs, outs, epi, w_pairs)?;
        self.launch_epilogue_pair(&args, "colsl", true)
    }

    /// The merged ModDown and rescale in the NTT domain: run `r`'s limb `j` (table `t`, prime
    /// `q_t`) is transformed from `run + F_t · [c]_{q_t}` (`c` the centred lift of limb
    /// `lift[r]`, canonical modulo the odd `q_last`; `F = factors.lift_factor`, the runs'
    /// canonical contents read in place), and the epilogue writes
    /// `([c' +] (x − v) · w_t) · w2_t mod q_t` as `epi[r]` says. One launch per phase. With
    /// `F = P`, `w = P^{-1}`, `w2 = q_last^{-1}` and `lift` the last limb of the ModDown's result
    /// in coefficient form, this is ModDown followed by a rescale, bit for bit (both are linear
    /// maps mod `q_t` after the one lift).
    ///
    /// Errors: as [`DeviceNttTables::forward_runs_lifted_epilogue`], plus [`CudaError::Shape`]
    /// for factor tables shorter than the tables used.
    #[allow(clippy::too_many_arguments)]
    pub fn forward_runs_lift_add_epilogue(
        &self,
        lift: &[LiftRun<'_>],
        q_last: Modulus,
        moduli: &DeviceModuli,
        bufs: &mut [&mut DeviceBuffer],
        runs: &[NttRun],
        outs: &mut [&mut DeviceBuffer],
        epi: &[EpilogueRun<'_>],
        factors: LiftAddFactors<'_>,
    ) -> Result<()> {
        let mut args = self.lifted_args(lift, q_last, moduli, bufs, runs, outs, epi, factors.w)?;
        let tables_used = runs.iter().map(|r| r.table + r.limbs).max().unwrap_or(0);
        let listed = [
            Some(("lift factors", factors.lift_factor)),
            factors.w2.map(|w2| ("second epilogue factors", w2)),
        ];
        for (what, b) in listed.into_iter().flatten() {
            self.check_device(b)?;
            if b.len() < 2 * tables_used {
                return Err(CudaError::Shape(format!(
                    "{what}: {} words for {tables_used} tables",
                    b.len()
                )));
            }
        }
        args.pro_w = factors.lift_factor.device_ptr();
        args.epi_w2 = factors.w2.map_or(0, DeviceBuffer::device_ptr);
        self.launch_epilogue_pair(&args, "colsla", true)
    }
}
