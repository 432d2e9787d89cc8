//! [`DeviceModUp`]: ModUp of a digit on the device, one polynomial or many per launch.

use super::*;

impl DeviceModUp {
    /// Wraps `modup` for `device` (tables are uploaded lazily).
    pub fn new(device: &Arc<GpuDevice>, modup: &ModUp) -> Result<Self> {
        if modup.digits().iter().any(|d| d.len() > MAX_FROM_LIMBS) {
            return Err(CudaError::InvalidArgument(format!(
                "digits of more than {MAX_FROM_LIMBS} limbs are not supported"
            )));
        }
        Ok(Self {
            device: device.clone(),
            modup: modup.clone(),
            converters: Mutex::new(HashMap::new()),
        })
    }

    /// The host ModUp.
    pub fn host(&self) -> &ModUp {
        &self.modup
    }

    /// The `(table column, output limb)` pairs of `digit` at `level`: the host plan's
    /// [`ModUp::output_columns`], in the kernels' word size.
    pub(super) fn plan(&self, digit: usize, level: usize) -> Result<Vec<(u32, u32)>> {
        Ok(self
            .modup
            .output_columns(digit, level)?
            .into_iter()
            .map(|(column, limb)| (column as u32, limb as u32))
            .collect())
    }

    pub(super) fn converter(&self, digit: usize, level: usize) -> Result<Arc<DeviceBaseConverter>> {
        let c = self.modup.digit_limbs(digit, level)?.len();
        let mut cache = self
            .converters
            .lock()
            .map_err(|_| CudaError::Driver("ModUp converter cache lock poisoned".into()))?;
        if let Some(conv) = cache.get(&(digit, c)) {
            return Ok(conv.clone());
        }
        let conv = Arc::new(DeviceBaseConverter::new(
            &self.device,
            self.modup.converter(digit, level)?,
        )?);
        cache.insert((digit, c), conv.clone());
        Ok(conv)
    }

    /// Extends digit `digit` of the level-`level` polynomials `input` (`[polys][level][n]`: the
    /// whole polynomials; the kernel reads the digit's active limbs from them) to `output`
    /// (`[polys][level + |P|][n]`, Q limbs then P limbs) with the centred conversion (twin:
    /// [`ModUp::apply_centered`] on the digit's limbs, word for word): the digit's own limbs are
    /// copied (reduced), every other limb receives the centred digit value.
    /// One launch per [`MAX_PLAN`] output columns (one for `level + |P| − c ≤ 64`).
    ///
    /// Errors: as [`ModUp::digit_limbs`]; [`CudaError::Shape`] for buffers of the wrong length.
    pub fn apply_centered(
        &self,
        digit: usize,
        level: usize,
        input: &DeviceBuffer,
        output: &mut DeviceBuffer,
        n: usize,
    ) -> Result<()> {
        self.extend(digit, level, input, output, None, n, BconvTile::Auto)
    }

    /// [`DeviceModUp::apply_centered`] without the copy of the digit's own limbs: only the other
    /// limbs of `output` are written (the key-switching path fills the own limbs from the
    /// NTT-form input instead, so the reduced coefficient-form copy would be overwritten).
    ///
    /// Errors: as [`DeviceModUp::apply_centered`].
    pub fn convert_centered(
        &self,
        digit: usize,
        level: usize,
        input: &DeviceBuffer,
        output: &mut DeviceBuffer,
        n: usize,
    ) -> Result<()> {
        self.extend_flags(digit, level, input, output, None, n, BconvTile::Auto, 0)
    }

    /// [`DeviceModUp::convert_centered`] of digit `digit` of the level-`level` polynomial
    /// `input` (`[level][n]`, coefficient form), restricted to some output limbs and written to
    /// another layout: `targets` maps limbs of `Q_level ∪ P` (`0..level` the Q limbs, `level +
    /// j` the P limb `j`) to limbs of `output` (`[out_limbs][n]`, `out_limbs = output.len() /
    /// n`). Target limbs of the digit itself are skipped (the caller takes them from the NTT-form
    /// input, as the single-device key switching does). Each written limb has exactly the words
    /// of the same limb of [`DeviceModUp::convert_centered`]: a conversion's output column
    /// depends on the input limbs alone (the `f64` correction too), not on the other columns
    /// (the multi-GPU key switching's ModUp, each GPU its own limbs). Nothing is launched when
    /// no target is converted.
    ///
    /// Errors: as [`DeviceModUp::convert_centered`]; [`CudaError::Shape`] for an output that is
    /// not whole limbs, a target limb outside it or given twice.
    pub fn convert_centered_subset(
        &self,
        digit: usize,
        level: usize,
        input: &DeviceBuffer,
        output: &mut DeviceBuffer,
        targets: &[(usize, usize)],
        n: usize,
    ) -> Result<()> {
        check_degree(n)?;
        check_device(&self.device, &[output, input])?;
        check_len("ModUp input", input.len(), level * n)?;
        if output.len() % n != 0 {
            return Err(CudaError::Shape(format!(
                "ModUp output of {} words is not whole limbs of {n}",
                output.len()
            )));
        }
        let out_limbs = subset_out_limbs(output, targets, n)?;
        let r = self.modup.digit_limbs(digit, level)?;
        let plan: Vec<(u32, u32)> = self
            .plan(digit, level)?
            .into_iter()
            .filter_map(|(col, limb)| {
                targets
                    .iter()
                    .find(|t| t.0 == limb as usize)
                    .map(|t| (col, t.1 as u32))
            })
            .collect();
        if plan.is_empty() {
            return Ok(());
        }
        let conv = self.converter(digit, level)?;
        let io = Io {
            n,
            polys: 1,
            input: input.device_ptr_at(r.start * n)?,
            in_stride: level * n,
            out: output.device_ptr(),
            out_stride: out_limbs * n,
        };
        conv.launch_plan(&io, &plan, 0, 0, BconvTile::Auto)
    }

    /// The first step's factors at `level`: `q̂_i^{-1} mod q_i` for every limb `i < level`,
    /// `q̂_i` relative to the digit holding limb `i` (what the conversions multiply by first).
    ///
    /// Errors: [`CudaError::Shape`] for a level outside `1 ..= |Q|`.
    pub fn first_step_factors(&self, level: usize) -> Result<Vec<u64>> {
        let mut f = vec![0u64; level];
        for d in 0..self.modup.active_digits(level) {
            let r = self.modup.digit_limbs(d, level)?;
            let conv = self.modup.converter(d, level)?;
            f[r.clone()].copy_from_slice(&conv.q_hat_inv_mod_q()[..r.len()]);
        }
        Ok(f)
    }

    /// [`DeviceModUp::convert_centered`] of several digits of one level-`level` polynomial
    /// `input` (`[level][n]`), digit `d_i` into `outputs[i]` (`[level + |P|][n]` each), in one
    /// launch per five digits (each a kernel-parameter block of its own; blockIdx.y picks it)
    /// instead of one per digit. Words as [`DeviceModUp::convert_centered`] of each.
    ///
    /// Errors: as [`DeviceModUp::convert_centered`].
    pub fn convert_centered_many(
        &self,
        level: usize,
        input: &DeviceBuffer,
        outputs: &mut [(usize, &mut DeviceBuffer)],
        n: usize,
    ) -> Result<()> {
        self.convert_centered_many_with(level, input, outputs, n, false)
    }

    /// [`DeviceModUp::convert_centered_many`] of an input that already holds the first step's
    /// `t_i = x_i · q̂_i^{-1}` (`scaled`: e.g. an inverse NTT with the factors of
    /// [`DeviceModUp::first_step_factors`] folded in), or of the plain `x_i`.
    pub fn convert_centered_many_with(
        &self,
        level: usize,
        input: &DeviceBuffer,
        outputs: &mut [(usize, &mut DeviceBuffer)],
        n: usize,
        scaled: bool,
    ) -> Result<()> {
        self.many_impl(level, input, outputs, n, scaled, None)
    }

    /// [`DeviceModUp::convert_centered_subset`] of several digits of one level-`level`
    /// polynomial `input` (digit `d_i` into `outputs[i]`, each `[out_limbs][n]`, the same
    /// `targets` for all), five digits per launch as [`DeviceModUp::convert_centered_many`];
    /// with `scaled`, of an input that already holds the first step's `t_i` (as
    /// [`DeviceModUp::convert_centered_many_with`]). Each written limb has the words of
    /// [`DeviceModUp::convert_centered_subset`] of its digit; digits with nothing to convert
    /// launch nothing.
    ///
    /// Errors: as [`DeviceModUp::convert_centered_subset`].
    pub fn convert_centered_subset_many(
        &self,
        level: usize,
        input: &DeviceBuffer,
        outputs: &mut [(usize, &mut DeviceBuffer)],
        targets: &[(usize, usize)],
        n: usize,
        scaled: bool,
    ) -> Result<()> {
        self.many_impl(level, input, outputs, n, scaled, Some(targets))
    }

    /// [`DeviceModUp::convert_centered_many_with`] (all targets, outputs `[level + |P|][n]`) or,
    /// with `targets`, [`DeviceModUp::convert_centered_subset_many`].
    fn many_impl(
        &self,
        level: usize,
        input: &DeviceBuffer,
        outputs: &mut [(usize, &mut DeviceBuffer)],
        n: usize,
        scaled: bool,
        targets: Option<&[(usize, usize)]>,
    ) -> Result<()> {
        let flags = if scaled { FLAG_SCALED } else { 0 };
        check_degree(n)?;
        let pl = self.modup.p().len();
        if polys_of("ModUp input", input.len(), level, n)? != 1 {
            return Err(CudaError::Shape(
                "convert_centered_many converts one polynomial".into(),
            ));
        }
        let mut jobs = Vec::with_capacity(outputs.len());
        for (digit, output) in outputs.iter() {
            check_device(&self.device, &[output, input])?;
            let r = self.modup.digit_limbs(*digit, level)?;
            let start = r.start;
            let (plan, out_stride) = match targets {
                None => {
                    check_len("ModUp output", output.len(), (level + pl) * n)?;
                    (self.plan(*digit, level)?, (level + pl) * n)
                }
                Some(targets) => {
                    let out_limbs = subset_out_limbs(output, targets, n)?;
                    let plan: Vec<(u32, u32)> = self
                        .plan(*digit, level)?
                        .into_iter()
                        .filter_map(|(col, limb)| {
                            targets
                                .iter()
                                .find(|t| t.0 == limb as usize)
                                .map(|t| (col, t.1 as u32))
                        })
                        .collect();
                    (plan, out_limbs * n)
                }
            };
            if plan.is_empty() {
                continue;
            }
            let conv = self.converter(*digit, level)?;
            let io = Io {
                n,
                polys: 1,
                input: input.device_ptr_at(start * n)?,
                in_stride: level * n,
                out: output.device_ptr(),
                out_stride,
            };
            jobs.push((conv, plan, io));
        }
        if jobs.is_empty() {
            return Ok(());
        }
        let longest = jobs.iter().map(|(_, p, _)| p.len()).max().unwrap_or(0);
        let narrow = jobs.first().is_some_and(|(c, _, _)| c.narrow);
        let rin = Some(RIN_DEFAULT).filter(|_| jobs.iter().all(|(c, _, _)| c.l <= RIN_MAX_INPUTS));
        let tile = rin.unwrap_or_else(|| {
            BconvTile::choose(n, 1, longest, self.device.multiprocessor_count())
        });
        let widest = jobs.iter().map(|(c, _, _)| c.l).max().unwrap_or(0);
        let kernel = tile.multi_kernel(narrow, widest);
        let uniform = jobs
            .iter()
            .all(|(c, p, _)| c.narrow == narrow && c.l <= 16 && p.len() <= MAX_PLAN);
        let (Some(kernel), true) = (kernel, uniform) else {
            // Plans or tiles the multi kernel does not take: one launch per digit.
            for (conv, plan, io) in &jobs {
                conv.launch_plan(io, plan, flags, 0, BconvTile::Auto)?;
            }
            return Ok(());
        };
        let (_, c) = tile.shape().unwrap_or((8, 2));
        let f = self.device.function(&BCONV, &kernel)?;
        let (coeff_blocks, sms) = (
            n.div_ceil((THREADS * c) as usize),
            self.device.multiprocessor_count(),
        );
        for group in jobs.chunks(MAX_MULTI) {
            let group_of = |plan: &[(u32, u32)]| {
                tile.columns_per_block(plan.len(), coeff_blocks * group.len(), sms)
            };
            let args = group
                .iter()
                .map(|(conv, plan, io)| {
                    let mut a = conv.args(io, plan, flags, 0)?;
                    a.group = group_of(plan);
                    Ok(a)
                })
                .collect::<Result<Vec<_>>>()?;
            // Entries past the group repeat its first (never read: blockIdx.y < group.len()).
            let mut multi = BconvMulti {
                a: [args[0]; MAX_MULTI],
            };
            multi.a[..args.len()].copy_from_slice(&args);
            let shared = group
                .iter()
                .map(|(conv, plan, _)| conv.shared_bytes(group_of(plan), tile.is_rin()))
                .max();
            let groups = group
                .iter()
                .map(|(_, plan, _)| plan.len().div_ceil(group_of(plan) as usize))
                .max();
            let (shared, groups) = (shared.unwrap_or(0), groups.unwrap_or(1).max(1));
            let cfg = LaunchConfig {
                grid_dim: (coeff_blocks as u32, group.len() as u32, groups as u32),
                block_dim: (THREADS, 1, 1),
                shared_mem_bytes: shared,
            };
            let mut params = [param(&multi)];
            // SAFETY: the one parameter is `struct BconvMulti` by value (#[repr(C)] like its CUDA
            // twin), pointing to a local that lives across the call; blockIdx.y < group.len()
            // selects a filled entry; each entry's buffers were checked as in
            // `convert_centered` (input limbs of one level-`level` polynomial, an output of
            // `level + |P|` limbs, table columns below K); blocks past an entry's plan exit
            // before reading anything; all work is ordered on the device's one stream, and
            // before pdl_wait() the kernel reads only the converters' host-uploaded tables.
            unsafe { launch_dependent(&self.device, &f, cfg, &mut params) }?;
        }
        Ok(())
    }

    /// [`DeviceModUp::apply_centered`] writing into `output` from word `out_offset` on (e.g.
    /// digit `d` of a `[dnum][level + |P|][n]` buffer at `out_offset = d·(level + |P|)·n`, the
    /// stacked layout of the digits); `output` must hold
    /// `out_offset + polys·(level + |P|)·n` words or more. `input` is `[polys][level][n]`.
    ///
    /// Errors: as [`DeviceModUp::apply_centered`]; [`CudaError::Shape`] if `output` is too short.
    pub fn apply_centered_at(
        &self,
        digit: usize,
        level: usize,
        input: &DeviceBuffer,
        output: &mut DeviceBuffer,
        out_offset: usize,
        n: usize,
    ) -> Result<()> {
        self.extend(
            digit,
            level,
            input,
            output,
            Some(out_offset),
            n,
            BconvTile::Auto,
        )
    }

    /// [`DeviceModUp::apply_centered`] with an explicit register tile.
    pub fn apply_centered_with(
        &self,
        digit: usize,
        level: usize,
        input: &DeviceBuffer,
        output: &mut DeviceBuffer,
        n: usize,
        tile: BconvTile,
    ) -> Result<()> {
        self.extend(digit, level, input, output, None, n, tile)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn extend(
        &self,
        digit: usize,
        level: usize,
        input: &DeviceBuffer,
        output: &mut DeviceBuffer,
        out_offset: Option<usize>,
        n: usize,
        tile: BconvTile,
    ) -> Result<()> {
        self.extend_flags(digit, level, input, output, out_offset, n, tile, FLAG_COPY)
    }

    /// [`DeviceModUp::extend`] with the launch flags given (`FLAG_COPY` or 0).
    #[allow(clippy::too_many_arguments)]
    fn extend_flags(
        &self,
        digit: usize,
        level: usize,
        input: &DeviceBuffer,
        output: &mut DeviceBuffer,
        out_offset: Option<usize>,
        n: usize,
        tile: BconvTile,
        flags: u32,
    ) -> Result<()> {
        let at = out_offset.is_some();
        let out_offset = out_offset.unwrap_or(0);
        check_degree(n)?;
        check_device(&self.device, &[output, input])?;
        let r = self.modup.digit_limbs(digit, level)?;
        let start = r.start;
        let pl = self.modup.p().len();
        let polys = polys_of("ModUp input", input.len(), level, n)?;
        let out_words = polys * (level + pl) * n;
        if !at {
            check_len("ModUp output", output.len(), out_words)?;
        } else if output.len() < out_offset + out_words {
            return Err(CudaError::Shape(format!(
                "ModUp output has {} words; {out_offset} + {out_words} needed",
                output.len()
            )));
        }
        let conv = self.converter(digit, level)?;
        let plan = self.plan(digit, level)?;
        let io = Io {
            n,
            polys,
            input: input.device_ptr_at(start * n)?,
            in_stride: level * n,
            out: output.device_ptr_at(out_offset)?,
            out_stride: (level + pl) * n,
        };
        conv.launch_plan(&io, &plan, flags, start as u32, tile)
    }
}

/// The limbs of a subset conversion's `output` (`[out_limbs][n]`), every target limb inside it
/// and given once.
fn subset_out_limbs(output: &DeviceBuffer, targets: &[(usize, usize)], n: usize) -> Result<usize> {
    if output.len() % n != 0 {
        return Err(CudaError::Shape(format!(
            "ModUp output of {} words is not whole limbs of {n}",
            output.len()
        )));
    }
    let out_limbs = output.len() / n;
    let mut seen = vec![false; out_limbs];
    for &(_, o) in targets {
        if o >= out_limbs || std::mem::replace(&mut seen[o], true) {
            return Err(CudaError::Shape(format!(
                "ModUp target limb {o} of {out_limbs} (outside, or given twice)"
            )));
        }
    }
    Ok(out_limbs)
}
