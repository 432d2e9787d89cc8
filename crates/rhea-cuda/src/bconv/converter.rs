//! [`DeviceBaseConverter`]: upload, the conversions and their launches.

use super::*;

impl DeviceBaseConverter {
    /// Uploads the tables of `conv` to `device`.
    ///
    /// Errors: [`CudaError::InvalidArgument`] for a source basis of more than
    /// [`MAX_FROM_LIMBS`] limbs; driver errors.
    pub fn new(device: &Arc<GpuDevice>, conv: &BaseConverter) -> Result<Self> {
        let (l, k) = (conv.from().len(), conv.to().len());
        if l == 0 || k == 0 {
            return Err(CudaError::InvalidArgument("an empty basis".into()));
        }
        if l > MAX_FROM_LIMBS {
            return Err(CudaError::InvalidArgument(format!(
                "a source basis of {l} limbs exceeds {MAX_FROM_LIMBS}"
            )));
        }
        let from = DeviceModuli::new(device, conv.from().moduli())?;
        let to = DeviceModuli::new(device, conv.to().moduli())?;
        let mut words = Vec::with_capacity(2 * l + l * k);
        words.extend_from_slice(conv.q_hat_inv_mod_q());
        words.extend_from_slice(conv.q_hat_inv_mod_q_shoup());
        words.extend_from_slice(conv.q_hat_mod_p());
        words.extend(conv.q_inv_f64().iter().map(|x| x.to_bits()));
        words.extend_from_slice(conv.q_mod_p());
        let tables = device.upload(&words)?;
        let below_2_32 = |m: &Modulus| m.value() < 1 << 32;
        let narrow = conv.from().moduli().iter().all(below_2_32)
            && conv.to().moduli().iter().all(below_2_32);
        Ok(Self {
            device: device.clone(),
            from,
            to,
            tables,
            q_hat_inv: conv.q_hat_inv_mod_q().to_vec(),
            q_hat_inv_shoup: conv.q_hat_inv_mod_q_shoup().to_vec(),
            l,
            k,
            narrow,
        })
    }

    /// The device.
    pub fn device(&self) -> &Arc<GpuDevice> {
        &self.device
    }

    /// The number of source limbs `L`.
    pub fn from_len(&self) -> usize {
        self.l
    }

    /// The number of target limbs `K`.
    pub fn to_len(&self) -> usize {
        self.k
    }

    /// The source moduli on the device.
    pub fn from_moduli(&self) -> &Arc<DeviceModuli> {
        &self.from
    }

    /// The target moduli on the device.
    pub fn to_moduli(&self) -> &Arc<DeviceModuli> {
        &self.to
    }

    /// `q̂_i^{-1} mod q_i` per source limb: the per-limb constant of the first step, for a
    /// kernel (an inverse NTT) that fuses it and then calls
    /// [`DeviceBaseConverter::convert_centered_with`] with `scaled = true`.
    pub fn q_hat_inv_mod_q(&self) -> &[u64] {
        &self.q_hat_inv
    }

    /// Shoup companions of [`DeviceBaseConverter::q_hat_inv_mod_q`].
    pub fn q_hat_inv_mod_q_shoup(&self) -> &[u64] {
        &self.q_hat_inv_shoup
    }

    pub(super) fn ptr(&self, offset: usize) -> Result<u64> {
        self.tables.device_ptr_at(offset)
    }

    /// The centred conversion of `input` (`[polys][L][n]`) into `out` (`[polys][K][n]`), the
    /// first step fused (twin: [`BaseConverter::convert_centered`], word for word).
    pub fn convert_centered(
        &self,
        out: &mut DeviceBuffer,
        input: &DeviceBuffer,
        n: usize,
    ) -> Result<()> {
        self.convert_centered_with(out, input, n, false, BconvTile::Auto)
    }

    /// [`DeviceBaseConverter::convert_centered`] (`scaled = false`) or its variant on an input
    /// that already holds `t_i` (`scaled = true`), with an explicit register tile.
    pub fn convert_centered_with(
        &self,
        out: &mut DeviceBuffer,
        input: &DeviceBuffer,
        n: usize,
        scaled: bool,
        tile: BconvTile,
    ) -> Result<()> {
        self.convert_impl(out, input, n, scaled, tile)
    }

    /// [`DeviceBaseConverter::convert_centered`] of `polys` polynomials read in place from a
    /// larger buffer: polynomial `p`'s `L` input limbs start at word `in_offset + p · in_stride`
    /// of `input` (the `P` limbs of a `[2][Q_ℓ ∪ P][n]` key-switching accumulator); the output is
    /// `[polys][K][n]`.
    ///
    /// Errors: [`CudaError::Shape`] when the rows leave `input` or `out` is short; device
    /// mismatch and launch errors.
    pub fn convert_centered_strided(
        &self,
        out: &mut DeviceBuffer,
        input: &DeviceBuffer,
        in_offset: usize,
        in_stride: usize,
        polys: usize,
        n: usize,
    ) -> Result<()> {
        self.strided_impl(out, input, (in_offset, in_stride), polys, n, false)
    }

    /// [`DeviceBaseConverter::convert_centered_strided`] of rows that already hold the first
    /// step's `t_i = x_i · q̂_i^{-1}` (e.g. an inverse NTT with those factors folded in).
    ///
    /// Errors: as `convert_centered_strided`.
    pub fn convert_scaled_centered_strided(
        &self,
        out: &mut DeviceBuffer,
        input: &DeviceBuffer,
        in_offset: usize,
        in_stride: usize,
        polys: usize,
        n: usize,
    ) -> Result<()> {
        self.strided_impl(out, input, (in_offset, in_stride), polys, n, true)
    }

    /// [`DeviceBaseConverter::convert_centered_strided`] of some output columns only: `columns`
    /// pairs a target limb `j < K` with a limb of `out` (`[polys][out_limbs][n]`, `out_limbs =
    /// out.len() / (polys · n)`). Each written limb has exactly the words of limb `j` of the
    /// full conversion (a column depends on the input limbs alone): a multi-GPU ModDown, each
    /// GPU converting `P` to its own `Q` limbs. Nothing is launched for no columns.
    ///
    /// Errors: as `convert_centered_strided`; [`CudaError::Shape`] for a column `≥ K`, an
    /// output limb outside `out` or given twice, or an `out` that is not whole limbs.
    #[allow(clippy::too_many_arguments)]
    pub fn convert_centered_columns(
        &self,
        out: &mut DeviceBuffer,
        input: &DeviceBuffer,
        in_offset: usize,
        in_stride: usize,
        polys: usize,
        n: usize,
        columns: &[(usize, usize)],
    ) -> Result<()> {
        self.columns_impl(out, input, (in_offset, in_stride), polys, n, columns, false)
    }

    /// [`DeviceBaseConverter::convert_centered_columns`] of an input that already holds the
    /// first step's `x_j · q̂_j^{-1}` (as [`DeviceBaseConverter::convert_scaled_centered_strided`]:
    /// an inverse NTT with those factors folded in): the same words.
    ///
    /// Errors: as [`DeviceBaseConverter::convert_centered_columns`].
    #[allow(clippy::too_many_arguments)]
    pub fn convert_scaled_centered_columns(
        &self,
        out: &mut DeviceBuffer,
        input: &DeviceBuffer,
        in_offset: usize,
        in_stride: usize,
        polys: usize,
        n: usize,
        columns: &[(usize, usize)],
    ) -> Result<()> {
        self.columns_impl(out, input, (in_offset, in_stride), polys, n, columns, true)
    }

    #[allow(clippy::too_many_arguments)]
    fn columns_impl(
        &self,
        out: &mut DeviceBuffer,
        input: &DeviceBuffer,
        (in_offset, in_stride): (usize, usize),
        polys: usize,
        n: usize,
        columns: &[(usize, usize)],
        scaled: bool,
    ) -> Result<()> {
        check_degree(n)?;
        check_device(&self.device, &[out, input])?;
        let last = polys
            .checked_sub(1)
            .map(|p| in_offset + p * in_stride + self.l * n);
        if polys == 0 || !last.is_some_and(|end| end <= input.len()) || in_stride < self.l * n {
            return Err(CudaError::Shape(format!(
                "{polys} polynomials of {} limbs from word {in_offset} (stride {in_stride}) of a \
                 {}-word buffer",
                self.l,
                input.len()
            )));
        }
        if out.len() % (polys * n) != 0 {
            return Err(CudaError::Shape(format!(
                "conversion output of {} words is not {polys} polynomials of whole limbs",
                out.len()
            )));
        }
        let out_limbs = out.len() / (polys * n);
        let mut seen = vec![false; out_limbs];
        for &(j, o) in columns {
            if j >= self.k || o >= out_limbs || std::mem::replace(&mut seen[o], true) {
                return Err(CudaError::Shape(format!(
                    "conversion column {j} of {} to output limb {o} of {out_limbs} (outside, \
                     or given twice)",
                    self.k
                )));
            }
        }
        if columns.is_empty() {
            return Ok(());
        }
        let plan: Vec<(u32, u32)> = columns.iter().map(|&(j, o)| (j as u32, o as u32)).collect();
        let io = Io {
            n,
            polys,
            input: input.device_ptr() + (in_offset * 8) as u64,
            in_stride,
            out: out.device_ptr(),
            out_stride: out_limbs * n,
        };
        let flags = if scaled { FLAG_SCALED } else { 0 };
        self.launch_plan(&io, &plan, flags, 0, BconvTile::Auto)
    }

    fn strided_impl(
        &self,
        out: &mut DeviceBuffer,
        input: &DeviceBuffer,
        (in_offset, in_stride): (usize, usize),
        polys: usize,
        n: usize,
        scaled: bool,
    ) -> Result<()> {
        check_degree(n)?;
        check_device(&self.device, &[out, input])?;
        let last = polys
            .checked_sub(1)
            .map(|p| in_offset + p * in_stride + self.l * n);
        if polys == 0 || !last.is_some_and(|end| end <= input.len()) || in_stride < self.l * n {
            return Err(CudaError::Shape(format!(
                "{polys} polynomials of {} limbs from word {in_offset} (stride {in_stride}) of a \
                 {}-word buffer",
                self.l,
                input.len()
            )));
        }
        check_len("conversion output", out.len(), polys * self.k * n)?;
        let plan: Vec<(u32, u32)> = (0..self.k as u32).map(|j| (j, j)).collect();
        let io = Io {
            n,
            polys,
            input: input.device_ptr() + (in_offset * 8) as u64,
            in_stride,
            out: out.device_ptr(),
            out_stride: self.k * n,
        };
        let flags = if scaled { FLAG_SCALED } else { 0 };
        self.launch_plan(&io, &plan, flags, 0, BconvTile::Auto)
    }

    fn convert_impl(
        &self,
        out: &mut DeviceBuffer,
        input: &DeviceBuffer,
        n: usize,
        scaled: bool,
        tile: BconvTile,
    ) -> Result<()> {
        check_degree(n)?;
        check_device(&self.device, &[out, input])?;
        let polys = polys_of("conversion input", input.len(), self.l, n)?;
        check_len("conversion output", out.len(), polys * self.k * n)?;
        let plan: Vec<(u32, u32)> = (0..self.k as u32).map(|j| (j, j)).collect();
        let io = Io {
            n,
            polys,
            input: input.device_ptr(),
            in_stride: self.l * n,
            out: out.device_ptr(),
            out_stride: self.k * n,
        };
        let flags = if scaled { FLAG_SCALED } else { 0 };
        self.launch_plan(&io, &plan, flags, 0, tile)
    }

    /// Launches the conversion for `plan` (`(table column, output limb)` pairs), in chunks of
    /// [`MAX_PLAN`] (centred kernels); `FLAG_COPY` applies to the first chunk only.
    pub(super) fn launch_plan(
        &self,
        io: &Io,
        plan: &[(u32, u32)],
        flags: u32,
        copy_first: u32,
        tile: BconvTile,
    ) -> Result<()> {
        let rin_ok = self.l <= RIN_MAX_INPUTS && flags & FLAG_COPY == 0;
        let rin = Some(RIN_DEFAULT).filter(|_| rin_ok);
        let tile = match (tile, rin) {
            (BconvTile::Auto, Some(r)) => r,
            (BconvTile::Auto, None) => {
                let t = BconvTile::choose(
                    io.n,
                    io.polys,
                    plan.len(),
                    self.device.multiprocessor_count(),
                );
                // Many input limbs: the 8-limb load chunks of the uncapped variant (H100,
                // 30 -> 8 limbs: 22.6 us, as J8C2); key switching's 7-9 limbs prefer the
                // capped variant (H100, 9 -> 23: 24.8 against 29.2 us; bench-history §10).
                if t == BconvTile::J8C2 && self.l > 16 {
                    BconvTile::J8C2U8
                } else {
                    t
                }
            }
            // A register-input tile asked for where it does not serve: the register-tiled one.
            (t, _) if t.is_rin() && !rin_ok => BconvTile::J8C2,
            (t, _) => t,
        };
        let (_, c) = tile.shape().unwrap_or((8, 2));
        let f = self
            .device
            .function(&BCONV, &tile.kernel(self.narrow, self.l))?;
        let chunks: Vec<&[(u32, u32)]> = if plan.is_empty() {
            vec![&[]]
        } else {
            plan.chunks(MAX_PLAN).collect()
        };
        for (ci, chunk) in chunks.into_iter().enumerate() {
            let chunk_flags = if ci == 0 { flags } else { flags & !FLAG_COPY };
            let mut args = self.args(io, chunk, chunk_flags, copy_first)?;
            let coeff_blocks = io.n.div_ceil((THREADS * c) as usize);
            let sms = self.device.multiprocessor_count();
            let j = tile.columns_per_block(chunk.len(), coeff_blocks * io.polys, sms);
            args.group = j;
            let groups = chunk.len().div_ceil(j as usize).max(1);
            let cfg = LaunchConfig {
                grid_dim: (coeff_blocks as u32, io.polys as u32, groups as u32),
                block_dim: (THREADS, 1, 1),
                shared_mem_bytes: self.shared_bytes(j, tile.is_rin()),
            };
            let mut params = [param(&args)];
            // SAFETY: the one parameter is `struct BconvArgs` by value (#[repr(C)] like its CUDA
            // twin), pointing to a local that lives across the call; the callers checked every
            // buffer against the plan (input rows, output limbs, aux rows, table columns < K);
            // all work is ordered on the device's one stream, and before pdl_wait() the kernel
            // reads only this converter's tables and the moduli (uploaded by the host when they
            // were built, never written by a kernel).
            unsafe { launch_dependent(&self.device, &f, cfg, &mut params) }?;
        }
        Ok(())
    }
}
