//! [`DeviceRescaler`]: dropping the last limb with rounding on the device.

use super::*;

impl DeviceRescaler {
    /// Uploads the tables of every level of `rescaler` to `device`.
    pub fn new(device: &Arc<GpuDevice>, rescaler: &Rescaler) -> Result<Self> {
        let basis = rescaler.basis();
        let len = basis.len();
        let moduli: Vec<Modulus> = basis.moduli().to_vec();
        let mut words = Vec::new();
        let mut offsets = Vec::new();
        for level in 2..=len {
            offsets.push(words.len());
            words.extend_from_slice(rescaler.q_last_inv_mod_q(level)?);
            words.extend_from_slice(rescaler.q_last_inv_mod_q_shoup(level)?);
            words.extend_from_slice(rescaler.half_mod_q(level)?);
        }
        if words.is_empty() {
            words.push(0);
        }
        Ok(Self {
            device: device.clone(),
            moduli: DeviceModuli::new(device, &moduli)?,
            tables: device.upload(&words)?,
            offsets,
            len,
        })
    }

    /// Rescales the level-`level` polynomials `input` (`[polys][level][n]`) into `output`
    /// (`[polys][level - 1][n]`) (twin: [`Rescaler::apply`]).
    ///
    /// Errors: [`CudaError::InvalidArgument`] for a level outside `2..=L` or a bad degree;
    /// [`CudaError::Shape`] for buffers of the wrong length.
    pub fn apply(
        &self,
        level: usize,
        input: &DeviceBuffer,
        output: &mut DeviceBuffer,
        n: usize,
    ) -> Result<()> {
        check_degree(n)?;
        check_device(&self.device, &[output, input])?;
        if level < 2 || level > self.len {
            return Err(CudaError::InvalidArgument(format!(
                "rescaling needs a level in 2..={}, got {level}",
                self.len
            )));
        }
        let polys = polys_of("rescale input", input.len(), level, n)?;
        check_len("rescale output", output.len(), polys * (level - 1) * n)?;
        let off = self.offsets[level - 2];
        let args = RescaleArgs {
            n: n as u64,
            in_stride: (level * n) as u64,
            out_stride: ((level - 1) * n) as u64,
            input: input.device_ptr(),
            out: output.device_ptr(),
            moduli: self.moduli.device_ptr(),
            inv: self.tables.device_ptr_at(off)?,
            inv_shoup: self.tables.device_ptr_at(off + level - 1)?,
            half: self.tables.device_ptr_at(off + 2 * (level - 1))?,
            level: level as u32,
            pad: 0,
        };
        let cfg = LaunchConfig {
            grid_dim: (n.div_ceil(SIMPLE_THREADS as usize) as u32, polys as u32, 1),
            block_dim: (SIMPLE_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let f = self.device.function(&BCONV, "bconv_rescale_last")?;
        let mut params = [param(&args)];
        // SAFETY: the one parameter is `struct RescaleArgs` by value (#[repr(C)] like its CUDA
        // twin), pointing to a local that lives across the call; buffer sizes were checked above
        // and the level's tables lie inside `tables`; all work is ordered on the device's one
        // stream, and before pdl_wait() the kernel reads only the moduli table (a host upload).
        unsafe { launch_dependent(&self.device, &f, cfg, &mut params) }
    }
}
