//! The launch arguments packed for the kernels (`struct NttArgs` in `ntt.cuh`) and their
//! construction for plain, grouped, epilogue and lifted transforms.

use super::*;

/// The two kernels of the fast NTT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// The column kernel (strided, the first `log N1` forward stages).
    Cols,
    /// The row kernel (contiguous chunks, the last `log N2` forward stages).
    Rows,
}

/// The most runs one grouped transform takes (`NTT_MAX_GROUPS` in `ntt.cuh`).
pub const MAX_RUNS: usize = 24;

/// Launch arguments, passed by value (`struct NttArgs` in `ntt.cuh`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct NttArgs {
    pub(super) limbs: u32,
    pub(super) start: u32,
    pub(super) count: u32,
    pub(super) first_table: u32,
    pub(super) rows: u32,
    pub(super) groups: u32,
    pub(super) row_start: [u32; MAX_RUNS + 1],
    pub(super) table: [u32; MAX_RUNS],
    pub(super) pair_half: u32,
    pub(super) epi_galois: u32,
    /// Bit 1: the epilogue's `x` operands are read for the last time (`dead` in `ntt.cuh`).
    pub(super) dead: u32,
    pub(super) ptr: [u64; MAX_RUNS],
    pub(super) epi_out: [u64; MAX_RUNS],
    pub(super) epi_x: [u64; MAX_RUNS],
    pub(super) epi_c: [u64; MAX_RUNS],
    pub(super) epi_w: u64,
    pub(super) pro_src: [u64; MAX_RUNS],
    pub(super) pro_moduli: u64,
    pub(super) pro_q: u64,
    pub(super) pro_w: u64,
    pub(super) epi_w2: u64,
    /// The row flags' device address, or 0 (`flags` in `ntt.cuh`; see [`RowFlags`]).
    pub(super) flags: u64,
    /// The stamp of this transform's finished rows.
    pub(super) epoch: u32,
    /// 0: no row flags; 1: the first phase, signals its rows; 2: the second, waits on them.
    pub(super) flag_role: u32,
    /// 1: the kernels stage their twiddles in shared memory (`NTT_TW_SMEM` in `ntt.cuh`); set
    /// by [`stage_twiddles`] for launches of at most
    /// [`TW_STAGED_ROWS`](super::policy::TW_STAGED_ROWS) rows.
    pub(super) tw_staged: u32,
    /// The FP64 twiddle tables' device addresses, or 0: no FP64 rows (`tw_f64`, `tw3_f64` in
    /// `ntt.cuh`; see [`DeviceNttTables::set_fp64_rows`]).
    pub(super) tw_f64: u64,
    pub(super) tw3_f64: u64,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for NttArgs {}

// The layout of `struct NttArgs` in `kernels/ntt.cuh`, which asserts the same numbers
// (`static_assert`): a field added, moved or resized on one side only fails the build.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<NttArgs>() == 1272);
    assert!(align_of::<NttArgs>() == 8);
    assert!(offset_of!(NttArgs, limbs) == 0);
    assert!(offset_of!(NttArgs, start) == 4);
    assert!(offset_of!(NttArgs, count) == 8);
    assert!(offset_of!(NttArgs, first_table) == 12);
    assert!(offset_of!(NttArgs, rows) == 16);
    assert!(offset_of!(NttArgs, groups) == 20);
    assert!(offset_of!(NttArgs, row_start) == 24);
    assert!(offset_of!(NttArgs, table) == 124);
    assert!(offset_of!(NttArgs, pair_half) == 220);
    assert!(offset_of!(NttArgs, epi_galois) == 224);
    assert!(offset_of!(NttArgs, dead) == 228);
    assert!(offset_of!(NttArgs, ptr) == 232);
    assert!(offset_of!(NttArgs, epi_out) == 424);
    assert!(offset_of!(NttArgs, epi_x) == 616);
    assert!(offset_of!(NttArgs, epi_c) == 808);
    assert!(offset_of!(NttArgs, epi_w) == 1000);
    assert!(offset_of!(NttArgs, pro_src) == 1008);
    assert!(offset_of!(NttArgs, pro_moduli) == 1200);
    assert!(offset_of!(NttArgs, pro_q) == 1208);
    assert!(offset_of!(NttArgs, pro_w) == 1216);
    assert!(offset_of!(NttArgs, epi_w2) == 1224);
    assert!(offset_of!(NttArgs, flags) == 1232);
    assert!(offset_of!(NttArgs, epoch) == 1240);
    assert!(offset_of!(NttArgs, flag_role) == 1244);
    assert!(offset_of!(NttArgs, tw_staged) == 1248);
    assert!(offset_of!(NttArgs, tw_f64) == 1256);
    assert!(offset_of!(NttArgs, tw3_f64) == 1264);
};

impl NttArgs {
    /// The table of launch row `r` (see `ntt_row` in `ntt.cuh`).
    pub(super) fn table_of(&self, r: u32) -> u32 {
        if self.groups == 0 {
            return self.first_table + self.start + r % self.count.max(1);
        }
        let g = (0..self.groups as usize)
            .rev()
            .find(|&g| r >= self.row_start[g])
            .unwrap_or(0);
        self.table[g] + (r - self.row_start[g])
    }

    /// `rows / 2` when every row `r` of the first half has the table of row `r + rows / 2` (the
    /// two polynomials of a ciphertext), else 0: the row kernel then gives each block one chunk
    /// of each of two such rows, whose twiddles are the same (`pair_half` in `ntt.cuh`).
    pub(super) fn pairing(&self) -> u32 {
        let half = self.rows / 2;
        if half == 0 || self.rows % 2 != 0 {
            return 0;
        }
        let same = (0..half).all(|r| self.table_of(r) == self.table_of(r + half));
        if same {
            half
        } else {
            0
        }
    }

    /// The arguments of a checked batch (every count fits in 32 bits).
    pub(super) fn of(batch: &NttBatch) -> Self {
        Self {
            limbs: batch.limbs as u32,
            start: batch.start as u32,
            count: batch.count as u32,
            first_table: batch.first_table as u32,
            rows: batch.rows() as u32,
            ..Self::default()
        }
    }
}

/// `g^{-1} mod 2N` for an odd Galois element `g` (the epilogue's scatter form of `σ_g`).
pub(super) fn galois_inverse(g: u64, n: usize) -> Result<u32> {
    if g % 2 == 0 {
        return Err(CudaError::InvalidArgument(format!(
            "the Galois element must be odd, got {g}"
        )));
    }
    // Newton's iteration doubles the correct low bits of an inverse modulo 2^64 each step.
    let mut x = g;
    for _ in 0..6 {
        x = x.wrapping_mul(2u64.wrapping_sub(g.wrapping_mul(x)));
    }
    Ok((x & (2 * n as u64 - 1)) as u32)
}

impl DeviceNttTables {
    /// The checked arguments of a lifted grouped launch (see
    /// [`DeviceNttTables::forward_runs_lifted_epilogue`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn lifted_args(
        &self,
        lift: &[LiftRun<'_>],
        q_last: Modulus,
        moduli: &DeviceModuli,
        scratch: &mut [&mut DeviceBuffer],
        runs: &[NttRun],
        outs: &mut [&mut DeviceBuffer],
        epi: &[EpilogueRun<'_>],
        w_pairs: &DeviceBuffer,
    ) -> Result<NttArgs> {
        let (ptrs, lens) = self.buffers_of(scratch)?;
        self.check_device(moduli.buffer())?;
        let mut args = self.epilogue_args(&ptrs, &lens, runs, outs, epi, w_pairs)?;
        if lift.len() != runs.len() {
            return Err(CudaError::Shape(format!(
                "{} lifted sources for {} transform runs",
                lift.len(),
                runs.len()
            )));
        }
        if q_last.value() % 2 == 0 {
            return Err(CudaError::InvalidArgument(format!(
                "the centred lift needs an odd modulus, not {}",
                q_last.value()
            )));
        }
        for r in runs {
            for t in r.table..r.table + r.limbs {
                let listed = moduli.moduli().get(t).map(|m| m.value());
                if listed != Some(self.moduli[t].value()) {
                    return Err(CudaError::Shape(format!(
                        "moduli table entry {t} is {listed:?}, the NTT table's prime is {}",
                        self.moduli[t].value()
                    )));
                }
            }
        }
        let n = self.degree;
        for (g, l) in lift.iter().enumerate() {
            self.check_device(l.src)?;
            if (l.limb + 1) * n > l.src.len() {
                return Err(CudaError::Shape(format!(
                    "lifted source {g}: limb {} of a {}-word buffer",
                    l.limb,
                    l.src.len()
                )));
            }
            let p = l.src.device_ptr() + (l.limb * n * 8) as u64;
            // The column kernel reads the lifted limbs while it writes the scratch runs.
            let overlaps = ptrs
                .iter()
                .zip(&lens)
                .any(|(&b, &len)| p < b + (len * 8) as u64 && b < p + (n * 8) as u64);
            if overlaps {
                return Err(CudaError::Shape(format!(
                    "lifted source {g} overlaps a scratch buffer"
                )));
            }
            args.pro_src[g] = p;
        }
        args.pro_moduli = moduli.device_ptr();
        args.pro_q = q_last.value();
        Ok(args)
    }

    /// The checked grouped arguments of a forward transform of `runs` (over buffers at `ptrs`
    /// of `lens` words) with the fused epilogue `epi` into `outs`.
    pub(super) fn epilogue_args(
        &self,
        ptrs: &[u64],
        lens: &[usize],
        runs: &[NttRun],
        outs: &[&mut DeviceBuffer],
        epi: &[EpilogueRun<'_>],
        w_pairs: &DeviceBuffer,
    ) -> Result<NttArgs> {
        for b in outs.iter() {
            self.check_device(b)?;
        }
        self.check_device(w_pairs)?;
        let mut args = self.runs_args(ptrs, lens, runs)?;
        if epi.len() != runs.len() {
            return Err(CudaError::Shape(format!(
                "{} epilogue runs for {} transform runs",
                epi.len(),
                runs.len()
            )));
        }
        let tables_used = runs.iter().map(|r| r.table + r.limbs).max().unwrap_or(0);
        if w_pairs.len() < 2 * tables_used {
            return Err(CudaError::Shape(format!(
                "epilogue factors: {} words for {tables_used} tables",
                w_pairs.len()
            )));
        }
        let n = self.degree;
        let fits = |len: usize, limb: usize, count: usize| (limb + count) * n <= len;
        for (g, (r, e)) in runs.iter().zip(epi).enumerate() {
            let out = outs.get(e.out).ok_or_else(|| {
                CudaError::Shape(format!("epilogue output {} of {}", e.out, outs.len()))
            })?;
            self.check_device(e.x)?;
            let c_ok = e.c.map_or(true, |(c, l)| fits(c.len(), l, r.limbs));
            if !fits(out.len(), e.out_limb, r.limbs) || !fits(e.x.len(), e.x_limb, r.limbs) || !c_ok
            {
                return Err(CudaError::Shape(format!(
                    "epilogue run {g}: {} limbs do not fit its output or operands",
                    r.limbs
                )));
            }
            args.epi_out[g] = out.device_ptr() + (e.out_limb * n * 8) as u64;
            args.epi_x[g] = e.x.device_ptr() + (e.x_limb * n * 8) as u64;
            args.epi_c[g] = match e.c {
                Some((c, l)) => {
                    self.check_device(c)?;
                    c.device_ptr() + (l * n * 8) as u64
                }
                None => 0,
            };
        }
        // The outputs must not alias the sources or operands (the row kernel reads them
        // through the read-only cache while it writes the outputs).
        for o in outs.iter() {
            let (o0, o1) = (o.device_ptr(), o.device_ptr() + o.size_bytes() as u64);
            let overlaps = |p: u64, len: usize| p < o1 && o0 < p + (len * 8) as u64;
            let src_overlap = ptrs.iter().zip(lens).any(|(&p, &l)| overlaps(p, l));
            let opnd_overlap = epi.iter().any(|e| {
                overlaps(e.x.device_ptr(), e.x.len())
                    || e.c.is_some_and(|(c, _)| overlaps(c.device_ptr(), c.len()))
            });
            if src_overlap || opnd_overlap {
                return Err(CudaError::Shape(
                    "an epilogue output overlaps a source or an operand".into(),
                ));
            }
        }
        args.epi_w = w_pairs.device_ptr();
        Ok(args)
    }

    /// The device addresses and lengths of a grouped launch's buffers, each checked to be on
    /// this device.
    pub(super) fn buffers_of(&self, bufs: &[&mut DeviceBuffer]) -> Result<(Vec<u64>, Vec<usize>)> {
        for b in bufs.iter() {
            self.check_device(b)?;
        }
        Ok((
            bufs.iter().map(|b| b.device_ptr()).collect(),
            bufs.iter().map(|b| b.len()).collect(),
        ))
    }

    /// The grouped launch arguments of `runs` over buffers at `ptrs` of `lens` words.
    pub(super) fn runs_args(
        &self,
        ptrs: &[u64],
        lens: &[usize],
        runs: &[NttRun],
    ) -> Result<NttArgs> {
        if runs.is_empty() || runs.len() > MAX_RUNS {
            return Err(CudaError::Shape(format!(
                "a grouped NTT takes 1 to {MAX_RUNS} runs, not {}",
                runs.len()
            )));
        }
        let n = self.degree;
        let mut args = NttArgs {
            groups: runs.len() as u32,
            ..NttArgs::default()
        };
        let mut rows = 0usize;
        for (g, r) in runs.iter().enumerate() {
            let len = *lens.get(r.buf).ok_or_else(|| {
                CudaError::Shape(format!("run {g} names buffer {} of {}", r.buf, lens.len()))
            })?;
            if r.limbs == 0 || (r.first_limb + r.limbs) * n > len || r.table + r.limbs > self.len()
            {
                return Err(CudaError::Shape(format!(
                    "run {g}: limbs {}..{} (tables {}..) of a {len}-word buffer with {} tables",
                    r.first_limb,
                    r.first_limb + r.limbs,
                    r.table,
                    self.len()
                )));
            }
            for (h, o) in runs[..g].iter().enumerate() {
                let disjoint = o.buf != r.buf
                    || o.first_limb + o.limbs <= r.first_limb
                    || r.first_limb + r.limbs <= o.first_limb;
                if !disjoint {
                    return Err(CudaError::Shape(format!("runs {h} and {g} overlap")));
                }
            }
            args.row_start[g] = rows as u32;
            args.table[g] = r.table as u32;
            args.ptr[g] = ptrs[r.buf] + (r.first_limb * n * 8) as u64;
            rows += r.limbs;
        }
        args.row_start[runs.len()] = rows as u32;
        args.rows = rows as u32;
        Ok(args)
    }

    /// The arguments of the two kernels of one transform: with row flags (when enabled and the
    /// launch has at most [`FLAG_ROWS`] rows) the first signals its rows and the second waits
    /// on them under a fresh epoch; else both are `args`. With flags, also a hold on the
    /// device's dependent launches, to keep until both kernels are launched: the pair must be
    /// adjacent on the stream (see [`LaunchHold`]), and epochs must reach the stream in the
    /// order they are issued.
    pub(super) fn phase_args(
        &self,
        args: &NttArgs,
    ) -> Result<(NttArgs, NttArgs, Option<LaunchHold<'_>>)> {
        let args = &stage_twiddles(*args);
        if args.rows as usize > FLAG_ROWS {
            return Ok((*args, *args, None));
        }
        let hold = hold_launches(&self.device)?;
        // Epoch 0 is the stamps' initial value: skip it when the counter wraps.
        let epoch = loop {
            let e = self
                .row_flags
                .epoch
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                .wrapping_add(1);
            if e != 0 {
                break e;
            }
        };
        let mut first = *args;
        first.flags = self.row_flags.words.device_ptr();
        first.epoch = epoch;
        first.flag_role = 1;
        let mut second = first;
        second.flag_role = 2;
        Ok((first, second, Some(hold)))
    }
}
