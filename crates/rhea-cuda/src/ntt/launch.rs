//! Launching the kernels: the fast two-phase transform, its phases and epilogue pair, and the naive
//! one.

use super::*;

impl DeviceNttTables {
    /// The two launches of a grouped forward transform with the fused epilogue: the column
    /// kernel `ntt_fwd_<cols>_*` (`cols`, `colsl`, `colsla`; `lifted`: the latter two, whose
    /// `pro_q` is `q_last`), then the epilogue row kernel. With FP64 rows
    /// ([`DeviceNttTables::set_fp64_rows`]) and some row's prime below 2^46 (and `q_last` too
    /// when lifted), `ntt_fwd_<cols>f_*` and `ntt_fwd_rowsef_*`, whose FP64 rows run on the FP64
    /// pipe.
    pub(super) fn launch_epilogue_pair(
        &self,
        args: &NttArgs,
        cols: &str,
        lifted: bool,
    ) -> Result<()> {
        let s = self.grouped_split()?;
        let log_n = self.log_degree;
        let mut args = *args;
        let tables = (0..args.rows).map(|r| args.table_of(r) as usize);
        let f64_rows = self.fp64_applies(lifted.then_some(args.pro_q), tables);
        if let (true, Some((tw, tw3))) = (f64_rows, &self.forward_f64) {
            args.tw_f64 = tw.device_ptr();
            args.tw3_f64 = tw3.device_ptr();
        }
        let f = if f64_rows { "f" } else { "" };
        let name = format!(
            "ntt_fwd_{cols}{f}_{log_n}_{}_{}",
            s.log_n1, s.cols_per_block
        );
        let (_, cfg) = self.phase_config(args.rows, NttDirection::Forward, s, Phase::Cols, false);
        let (first, second, _pair) = self.phase_args(&args)?;
        self.launch(&name, cfg, 0, &first, NttDirection::Forward, None)?;
        if f64_rows {
            let (_, cfg) =
                self.phase_config(args.rows, NttDirection::Forward, s, Phase::Rows, true);
            let name = format!("ntt_fwd_rowsef_{log_n}_{}", s.log_n1);
            // Paired rows share their table, hence their choice of body.
            let (name, second) = self.paired(name, &second, s, Phase::Rows, true);
            return self.launch(&name, cfg, 0, &second, NttDirection::Forward, None);
        }
        self.launch_phase_raw(&second, NttDirection::Forward, s, Phase::Rows, true)
    }

    pub(super) fn launch_fast_raw(
        &self,
        args: &NttArgs,
        dir: NttDirection,
        s: NttSplit,
    ) -> Result<()> {
        let (first, second, _pair) = self.phase_args(args)?;
        match dir {
            NttDirection::Forward => {
                self.launch_phase_raw(&first, dir, s, Phase::Cols, false)?;
                self.launch_phase_raw(&second, dir, s, Phase::Rows, false)
            }
            NttDirection::Inverse => {
                self.launch_phase_raw(&first, dir, s, Phase::Rows, false)?;
                self.launch_phase_raw(&second, dir, s, Phase::Cols, false)
            }
        }
    }

    pub(super) fn launch(
        &self,
        name: &str,
        cfg: LaunchConfig,
        data: u64,
        args: &NttArgs,
        dir: NttDirection,
        stage: Option<(u32, u32)>,
    ) -> Result<()> {
        let dev = &self.device;
        let f = dev.function(ntt_source(self.log_degree), name)?;
        let (tw, tw3) = match dir {
            NttDirection::Forward => (self.forward.device_ptr(), self.forward3.device_ptr()),
            NttDirection::Inverse => (self.inverse.device_ptr(), self.inverse3.device_ptr()),
        };
        let primes = self.primes.device_ptr();
        if stage.is_none() {
            // The two-kernel transforms call pdl_wait() before their first access to `data` or
            // any argument buffer, or (the second kernel of a flagged pair) wait for their row's
            // stamp from the first kernel, which waited itself; before that they read only the
            // tables.
            let mut params = [
                param(&data),
                param(&tw),
                param(&tw3),
                param(&primes),
                param(args),
            ];
            // SAFETY: the parameters are NTT_ARGS in order (data, tw, tw3, primes, the NttArgs
            // struct by value, #[repr(C)] like its CUDA twin), each pointing to a value that
            // lives across the call; `data` holds polys × limbs × N words and the tables every table
            // the batch uses (checked by the callers), all on this device; the kernels wait for
            // the previous kernel (pdl_wait, or their rows' stamps, see `phase_args`: the flag
            // words belong to these tables and hold `2 × FLAG_ROWS` counters and stamps, and a
            // flagged launch has at most FLAG_ROWS rows) before touching anything but the tables.
            return unsafe { launch_dependent(dev, &f, cfg, &mut params) };
        }
        let stream = dev.stream();
        let mut b = stream.launch_builder(&f);
        b.arg(&data).arg(&tw).arg(&tw3).arg(&primes).arg(args);
        let (log_n, log_m) = stage.unwrap_or((0, 0));
        if stage.is_some() {
            b.arg(&log_n).arg(&log_m);
        }
        // SAFETY: the arguments match the kernel's signature (NTT_ARGS, plus log_n and log_m for
        // the naive stages); `data` holds polys × limbs × N words (checked), the twiddle, compact
        // and prime tables hold every table the batch uses (checked), all on this device, and all
        // work is ordered on the device's one stream.
        unsafe { b.launch(cfg) }?;
        Ok(())
    }

    pub(super) fn launch_fast(
        &self,
        buf: &mut DeviceBuffer,
        args: &NttArgs,
        dir: NttDirection,
        s: NttSplit,
    ) -> Result<()> {
        let (first, second, _pair) = self.phase_args(args)?;
        match dir {
            NttDirection::Forward => {
                self.launch_phase(buf, &first, dir, s, Phase::Cols)?;
                self.launch_phase(buf, &second, dir, s, Phase::Rows)
            }
            NttDirection::Inverse => {
                self.launch_phase(buf, &first, dir, s, Phase::Rows)?;
                self.launch_phase(buf, &second, dir, s, Phase::Cols)
            }
        }
    }

    /// The butterfly-throughput kernels (`ntt_bf[32|f64]_{fwd,inv}_throughput`, benchmark
    /// only): `out.len()` threads (a multiple of 128), each running `passes` radix-8 passes in
    /// registers, with 64-bit words (table 0's twiddles, prime 0), 32-bit words (the prime
    /// [`ARITH32_PRIME`]) or doubles (a ~2^39 modulus derived from it).
    pub(super) fn launch_butterflies(
        &self,
        out: &mut DeviceBuffer,
        dir: NttDirection,
        passes: u32,
        words: ArithWords,
    ) -> Result<()> {
        let name = match (words, dir) {
            (ArithWords::U64, NttDirection::Forward) => "ntt_bf_fwd_throughput",
            (ArithWords::U64, NttDirection::Inverse) => "ntt_bf_inv_throughput",
            (ArithWords::U32, NttDirection::Forward) => "ntt_bf32_fwd_throughput",
            (ArithWords::U32, NttDirection::Inverse) => "ntt_bf32_inv_throughput",
            (ArithWords::F64, NttDirection::Forward) => "ntt_bff64_fwd_throughput",
            (ArithWords::F64, NttDirection::Inverse) => "ntt_bff64_inv_throughput",
        };
        let f = self.device.function(ntt_source(self.log_degree), name)?;
        let tw = match dir {
            NttDirection::Forward => self.forward.device_ptr(),
            NttDirection::Inverse => self.inverse.device_ptr(),
        };
        let (ptr, primes) = (out.device_ptr(), self.primes.device_ptr());
        let cfg = LaunchConfig {
            grid_dim: ((out.len() / 128) as u32, 1, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 0,
        };
        let stream = self.device.stream();
        let mut b = stream.launch_builder(&f);
        b.arg(&ptr)
            .arg(&tw)
            .arg(&primes)
            .arg(&ARITH32_PRIME)
            .arg(&passes);
        // SAFETY: (out, tw, primes, q32, passes) is the signature of all six kernels; each of
        // the out.len() threads writes its own word of `out`; the 64-bit ones read twiddles
        // 8 .. 8 + 70 of table 0 (N ≥ 2^12 entries) and prime 0; all on this device's one stream.
        unsafe { b.launch(cfg) }?;
        Ok(())
    }

    /// One of the two kernels of the fast NTT (on its own it is not a transform: for timing).
    pub(super) fn launch_phase(
        &self,
        buf: &mut DeviceBuffer,
        args: &NttArgs,
        dir: NttDirection,
        s: NttSplit,
        phase: Phase,
    ) -> Result<()> {
        let (name, cfg) = self.phase_config(args.rows, dir, s, phase, false);
        let (name, args) = self.paired(name, &stage_twiddles(*args), s, phase, false);
        self.launch(&name, cfg, buf.device_ptr(), &args, dir, None)
    }

    /// A phase of a grouped launch (`args.groups > 0`: the kernel ignores `data`).
    pub(super) fn launch_phase_raw(
        &self,
        args: &NttArgs,
        dir: NttDirection,
        s: NttSplit,
        phase: Phase,
        epilogue: bool,
    ) -> Result<()> {
        let (name, cfg) = self.phase_config(args.rows, dir, s, phase, epilogue);
        let (name, args) = self.paired(name, args, s, phase, epilogue);
        self.launch(&name, cfg, 0, &args, dir, None)
    }

    pub(super) fn launch_naive(
        &self,
        buf: &mut DeviceBuffer,
        args: &NttArgs,
        dir: NttDirection,
    ) -> Result<()> {
        self.launch_naive_at(buf.device_ptr(), args, dir)
    }

    /// The naive stages of a grouped launch (`data` unused).
    pub(super) fn launch_naive_raw(&self, args: &NttArgs, dir: NttDirection) -> Result<()> {
        self.launch_naive_at(0, args, dir)
    }

    fn launch_naive_at(&self, data: u64, args: &NttArgs, dir: NttDirection) -> Result<()> {
        let log_n = self.log_degree;
        let cfg = self
            .device
            .grid_stride_config((args.rows as usize) << (log_n - 1), 256);
        let stages: Vec<u32> = match dir {
            NttDirection::Forward => (0..log_n).collect(),
            NttDirection::Inverse => (0..log_n).rev().collect(),
        };
        let name = match dir {
            NttDirection::Forward => "ntt_naive_fwd_stage",
            NttDirection::Inverse => "ntt_naive_inv_stage",
        };
        for log_m in stages {
            self.launch(name, cfg, data, args, dir, Some((log_n, log_m)))?;
        }
        Ok(())
    }
}
