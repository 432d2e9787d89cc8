//! Negacyclic NTT on the GPU (`kernels/ntt.cu`, `kernels/ntt.cuh`): forward and inverse transforms
//! of `[poly][limb][N]` buffers, batched over polynomials and limbs in one launch per phase.
//!
//! The twin is [`rhea_math::ntt::NttTable`]: [`DeviceNttTables`] uploads its tables verbatim
//! (`root_powers` with `root_powers_shoup`, `inv_root_powers` with `inv_root_powers_shoup`,
//! `N^-1`), and every transform here is bit-identical to `NttTable::forward` / `inverse` on each
//! limb: forward maps natural-order coefficients to bit-reversed evaluations, inverse undoes it
//! (including `N^-1`); inputs must be canonical (`< q`) and outputs are canonical.
//!
//! Two algorithms ([`NttAlgorithm`]):
//!
//! - **Fast** (`N = 2^12 … 2^17`): two kernels, `N = N1 × N2`. The *column* kernel runs the `log N1`
//!   stages whose butterflies span `≥ N2` entries on `N2`-strided columns; the *row* kernel runs the
//!   remaining stages on contiguous chunks of `N2` entries. Each thread keeps 8 entries in registers
//!   and applies up to three radix-2 stages per pass (radix 8); passes exchange entries through
//!   shared memory with an XOR swizzle that keeps 64-bit accesses free of bank conflicts. Harvey's
//!   lazy butterflies with Shoup twiddles (forward values in `[0, 6q)`, inverse in `[0, 3q)`: the
//!   Shoup quotient's high product skips its low-by-low part and may come out one low); the
//!   reduction to `[0, q)` is fused into the last stage, and `N^-1` into the inverse's last stage.
//!   The split `(log N1, columns per block)` is an [`NttSplit`]; [`splits`] lists the compiled
//!   ones, the first being the default.
//! - **Naive**: one launch per stage, one radix-2 butterfly per thread, every stage through device
//!   memory: the benchmark's baseline and a second oracle (any `N = 2^1 … 2^17`).
//!
//! A transform covers a [`NttBatch`]: `polys` polynomials of `limbs` limbs each, of which the
//! limbs `start .. start + count` are transformed (key switching transforms the `P` limbs on
//! their own), limb `j` using table `first_table + j`. Grouped transforms cover up to
//! [`MAX_RUNS`] runs of limbs anywhere ([`DeviceNttTables::transform_runs`]); the forward one
//! can end in a fused epilogue ([`DeviceNttTables::forward_runs_epilogue`]: ModDown, rescaling)
//! and start from a centred lift of one limb to every prime of the run
//! ([`DeviceNttTables::forward_runs_lifted_epilogue`]: rescaling in the NTT domain), or add
//! a multiple of that lift to the run's own contents
//! ([`DeviceNttTables::forward_runs_lift_add_epilogue`]: ModDown merged with rescaling).
//!
//! [`bench_ntt`] measures both algorithms against the device-to-device copy bandwidth (see
//! `examples/ntt_bench.rs`).
//!
//! # Performance notes (H100 80GB HBM3, copy bandwidth 3.0 TB/s)
//!
//! | case | forward | inverse | naive fwd / inv |
//! |---|---|---|---|
//! | N = 2^16, 32 limbs, 60-bit | 45 µs, 0.71 M limb-NTT/s, 74 % | 47 µs, 0.68 M/s, 72 % | 153 / 169 µs |
//! | N = 2^15, 8 limbs × 1024 | 4.0 ms, 2.04 M/s, 71 % | 4.0 ms, 2.05 M/s, 71 % | 23.2 ms |
//!
//! (Percentages: bytes of a two-pass transform, data read and written twice plus one read of
//! each prime's 16-byte twiddle table, over the copy bandwidth. The bench now counts only the
//! twiddle bytes a variant reads, half the table or less with derived twiddles:
//! `NttSplit::twiddle_bytes_read`, BENCHMARKS.md §17.) When these timings were taken both kernels
//! were bound by the 64-bit integer multiplier, not by memory: Nsight Compute showed IPC ≈ 2.3
//! with "math pipe throttle" the first stall reason, and DRAM at 20–55 %. (Those timings predate
//! the following SASS reductions; today the transform reads 82–86 % of the copy bandwidth and
//! is neither issue- nor multiply-bound alone, BENCHMARKS.md §17.) A lazy butterfly costs 22
//! SASS instructions: the 64×64 high product (7), the two low products folded into one multiply-add chain (6, `ntt_shoup_lazy`), a conditional
//! subtraction decided by the sign (5) and two additions; with the data movement,
//! `ntt_fwd_cols_16_7_8` is ~31 instructions per butterfly and `ntt_fwd_rows_16_7` ~32 (from ~43
//! and ~41: shared-memory and global addresses are now a per-thread base plus a constant, the
//! swizzle one XOR). Tried and measured: 4 or 8 columns per block and the
//! 7×9 / 8×8 / 9×7 splits (within 5 %); a persistent grid prefetching the next tile with
//! `cp.async` (25–40 % slower: fewer resident warps, imbalanced tiles); derived twiddles (faster
//! only for the inverse of few polynomials, where twiddle loads sit on the critical path).
//! Further gains need fewer multiplications per butterfly (32-bit primes, or a cheaper quotient
//! estimate for primes below 2^59) or fewer passes (one kernel per limb with thread-block
//! clusters and distributed shared memory).

use std::sync::Arc;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{DeviceRepr, LaunchConfig, PushKernelArg};
use rhea_math::ntt::NttTable;
use rhea_math::Modulus;

use crate::buffer::DeviceBuffer;
use crate::device::GpuDevice;
use crate::elementwise::DeviceModuli;
use crate::error::{CudaError, Result};
use crate::fp64::{f64_prime_ok, FP64_CUH};
use crate::launch::{hold_launches, launch_dependent, param, LaunchHold};
use crate::registry::{Header, KernelSource, COMMON_CUH};

/// `kernels/ntt.cuh`: butterflies, passes and the two kernel bodies of the fast NTT.
pub const NTT_CUH: Header = Header {
    name: "ntt.cuh",
    source: include_str!("../kernels/ntt.cuh"),
};
// (ntt.cuh includes fp64.cuh: every source listing NTT_CUH lists FP64_CUH too.)

/// `kernels/ntt.cu`: the fast (two-kernel) and naive (one launch per stage) NTT kernels, every
/// degree in one module (compile checks; the device loads [`ntt_source`]'s per-degree ones).
pub const NTT: KernelSource = KernelSource {
    name: "ntt",
    source: include_str!("../kernels/ntt.cu"),
    headers: &[COMMON_CUH, NTT_CUH, FP64_CUH],
};

/// The NTT module of one degree: `kernels/ntt.cu` with `NTT_ONLY_LOG_N` defined, so that it
/// instantiates the fast kernels of `N = 2^log_n` only (and the naive and benchmark ones).
macro_rules! ntt_degree_source {
    ($log_n:literal) => {
        KernelSource {
            name: concat!("ntt_", $log_n),
            source: concat!(
                "#define NTT_ONLY_LOG_N ",
                $log_n,
                "\n",
                include_str!("../kernels/ntt.cu")
            ),
            headers: &[COMMON_CUH, NTT_CUH, FP64_CUH],
        }
    };
}

/// The per-degree NTT modules, `log2 N` = [`MIN_FAST_LOG_DEGREE`] ..= [`MAX_FAST_LOG_DEGREE`]
/// (`ntt_12` … `ntt_17`): what a [`DeviceNttTables`] loads ([`ntt_source`]). A ring's first
/// transform compiles its own degree's kernels, not every degree's.
pub const NTT_BY_DEGREE: [KernelSource; 6] = [
    ntt_degree_source!(12),
    ntt_degree_source!(13),
    ntt_degree_source!(14),
    ntt_degree_source!(15),
    ntt_degree_source!(16),
    ntt_degree_source!(17),
];

/// The NTT module a transform of `N = 2^log_degree` loads: its degree's
/// ([`NTT_BY_DEGREE`]); below the fast range (naive transforms only) the smallest one's.
pub fn ntt_source(log_degree: u32) -> &'static KernelSource {
    let i = log_degree.clamp(MIN_FAST_LOG_DEGREE, MAX_FAST_LOG_DEGREE) - MIN_FAST_LOG_DEGREE;
    &NTT_BY_DEGREE[i as usize]
}

/// The smallest `log2 N` of the fast kernels.
pub const MIN_FAST_LOG_DEGREE: u32 = 12;
/// The largest `log2 N` of the fast kernels (and of [`DeviceNttTables`]).
pub const MAX_FAST_LOG_DEGREE: u32 = 17;

/// Words per table in the device's per-prime constants (`struct NttPrime` in `ntt.cuh`).
pub const PRIME_WORDS: usize = 8;

/// One compiled variant of the fast NTT: `N = 2^log_n1 × 2^(log N - log_n1)`, the column kernel
/// handling `cols_per_block` columns per block (`2^log_n1 / 8` threads each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NttSplit {
    /// `log2 N1`: the stages done by the column kernel.
    pub log_n1: u32,
    /// Columns per block of the column kernel.
    pub cols_per_block: u32,
    /// Whether the row kernel reads 3 twiddles per thread for the last three stages from a
    /// compact table and derives the other 4 (`table[b + k] = table[b] · table[k]`, two Shoup
    /// products) instead of loading 7: less than half the twiddle traffic, a few more
    /// multiplications. Pays off when the twiddles are not shared by many polynomials.
    pub derived_twiddles: bool,
}

impl NttSplit {
    const fn new(log_n1: u32, cols_per_block: u32, derived_twiddles: bool) -> Self {
        Self {
            log_n1,
            cols_per_block,
            derived_twiddles,
        }
    }

    /// Twiddle bytes a transform of this split at `degree` reads at least once for `count`
    /// primes in direction `dir`: the whole table of 16-byte pairs without derived twiddles;
    /// with them, the table's first `N / 8` pairs (the column kernel's passes and the row
    /// kernel's before its direct one) and the direct pass's compact table, three pairs per
    /// eight entries forward (half the whole table), three twiddles alone inverse (the kernels
    /// compute their companions; 5/16 of the table).
    pub fn twiddle_bytes_read(&self, degree: usize, count: usize, dir: NttDirection) -> usize {
        match (self.derived_twiddles, dir) {
            (false, _) => count * degree * 16,
            (true, NttDirection::Forward) => count * (degree / 8) * (16 + 48),
            (true, NttDirection::Inverse) => count * (degree / 8) * (16 + 24),
        }
    }

    /// A short label such as `8x8/c4` or `8x8/c4+d` (`log N1 × log N2`, columns per block,
    /// derived twiddles).
    pub fn label(&self, log_degree: u32) -> String {
        format!(
            "{}x{}/c{}{}",
            self.log_n1,
            log_degree - self.log_n1,
            self.cols_per_block,
            if self.derived_twiddles { "+d" } else { "" }
        )
    }

    /// The same split with derived twiddles on or off.
    pub fn with_derived_twiddles(self, derived_twiddles: bool) -> Self {
        Self {
            derived_twiddles,
            ..self
        }
    }

    fn cols_name(&self, dir: &str, log_n: u32) -> String {
        format!(
            "ntt_{dir}_cols_{log_n}_{}_{}",
            self.log_n1, self.cols_per_block
        )
    }

    fn rows_name(&self, dir: &str, log_n: u32) -> String {
        let d = if self.derived_twiddles { "d" } else { "" };
        format!("ntt_{dir}_rows{d}_{log_n}_{}", self.log_n1)
    }
}

/// `g^{-1} mod 2N` for an odd Galois element `g` (the epilogue's scatter form of `σ_g`).
fn galois_inverse(g: u64, n: usize) -> Result<u32> {
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

/// The compiled `(log N1, columns per block)` pair per `log2 N` (keep in sync with the
/// `NTT_COLS`/`NTT_ROWS` list in `kernels/ntt.cu`), compiled with and without derived
/// twiddles: the measured default of each degree. (The alternatives measured against them,
/// 8×7/c8 at 2^15, 8×8/c4 at 2^16, 8×9/c8 and 9×8/c4 at 2^17, within 5 %, are no longer
/// compiled: nothing launched them but benchmarks.)
const SHAPES: [&[(u32, u32)]; 6] = [
    &[(6, 16)],
    &[(6, 16)],
    &[(7, 8)],
    &[(7, 8)],
    &[(7, 8)],
    &[(8, 4)],
];

/// [`NttAlgorithm::Fast`] derives twiddles when a batch has at most this many polynomials (with
/// more, each table is read once for many polynomials and the extra multiplications cost more
/// than the traffic they save).
pub const DERIVED_TWIDDLES_MAX_POLYS: usize = 2;

/// The compiled splits of the fast NTT for `N = 2^log_degree`: each shape with derived twiddles,
/// then without; the default shape first. Empty outside
/// `MIN_FAST_LOG_DEGREE ..= MAX_FAST_LOG_DEGREE`.
pub fn splits(log_degree: u32) -> Vec<NttSplit> {
    if !(MIN_FAST_LOG_DEGREE..=MAX_FAST_LOG_DEGREE).contains(&log_degree) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for &(log_n1, cols) in SHAPES[(log_degree - MIN_FAST_LOG_DEGREE) as usize] {
        out.push(NttSplit::new(log_n1, cols, true));
        out.push(NttSplit::new(log_n1, cols, false));
    }
    out
}

/// The split [`NttAlgorithm::Fast`] uses for `N = 2^log_degree` and `polys` polynomials, if the
/// fast NTT supports the degree: the default shape, with derived twiddles when
/// `polys ≤ DERIVED_TWIDDLES_MAX_POLYS`.
pub fn default_split(log_degree: u32, polys: usize) -> Option<NttSplit> {
    splits(log_degree)
        .first()
        .map(|s| s.with_derived_twiddles(polys <= DERIVED_TWIDDLES_MAX_POLYS))
}

/// The direction of a transform.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttDirection {
    /// Coefficients (natural order) → evaluations (bit-reversed order).
    Forward,
    /// Evaluations (bit-reversed order) → coefficients, including `N^-1`.
    Inverse,
}

/// Which kernels run a transform.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttAlgorithm {
    /// The two-kernel shared-memory NTT with [`default_split`] (naive outside `2^12 … 2^17`).
    Fast,
    /// The two-kernel NTT with a given compiled split (one of [`splits`]).
    FastSplit(NttSplit),
    /// One launch per radix-2 stage, through device memory (the baseline).
    Naive,
}

/// The limbs a transform covers: in a buffer of `polys × limbs × N` words, limbs
/// `start .. start + count` of every polynomial, buffer limb `j` using table `first_table + j`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NttBatch {
    /// Polynomials in the buffer.
    pub polys: usize,
    /// Limbs per polynomial in the buffer.
    pub limbs: usize,
    /// The first limb transformed.
    pub start: usize,
    /// Limbs transformed per polynomial.
    pub count: usize,
    /// The table index of buffer limb 0.
    pub first_table: usize,
}

impl NttBatch {
    /// Every limb of `polys` polynomials of `limbs` limbs; limb `j` uses table `j`.
    pub fn all(polys: usize, limbs: usize) -> Self {
        Self {
            polys,
            limbs,
            start: 0,
            count: limbs,
            first_table: 0,
        }
    }

    /// Limbs `start .. start + count` of `polys` polynomials of `limbs` limbs; limb `j` uses
    /// table `j`.
    pub fn limb_range(polys: usize, limbs: usize, start: usize, count: usize) -> Self {
        Self {
            polys,
            limbs,
            start,
            count,
            first_table: 0,
        }
    }

    /// The same batch with buffer limb `j` using table `first_table + j`.
    pub fn with_first_table(self, first_table: usize) -> Self {
        Self {
            first_table,
            ..self
        }
    }

    /// Limb-transforms in the batch (`polys × count`).
    pub fn rows(&self) -> usize {
        self.polys * self.count
    }
}

/// The two kernels of the fast NTT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
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
struct NttArgs {
    limbs: u32,
    start: u32,
    count: u32,
    first_table: u32,
    rows: u32,
    groups: u32,
    row_start: [u32; MAX_RUNS + 1],
    table: [u32; MAX_RUNS],
    pair_half: u32,
    epi_galois: u32,
    /// Bit 1: the epilogue's `x` operands are read for the last time (`dead` in `ntt.cuh`).
    dead: u32,
    ptr: [u64; MAX_RUNS],
    epi_out: [u64; MAX_RUNS],
    epi_x: [u64; MAX_RUNS],
    epi_c: [u64; MAX_RUNS],
    epi_w: u64,
    pro_src: [u64; MAX_RUNS],
    pro_moduli: u64,
    pro_q: u64,
    pro_w: u64,
    epi_w2: u64,
    /// The row flags' device address, or 0 (`flags` in `ntt.cuh`; see [`RowFlags`]).
    flags: u64,
    /// The stamp of this transform's finished rows.
    epoch: u32,
    /// 0: no row flags; 1: the first phase, signals its rows; 2: the second, waits on them.
    flag_role: u32,
    /// 1: the kernels stage their twiddles in shared memory (`NTT_TW_SMEM` in `ntt.cuh`); set
    /// by [`stage_twiddles`] for launches of at most [`TW_STAGED_ROWS`] rows.
    tw_staged: u32,
    /// The FP64 twiddle tables' device addresses, or 0: no FP64 rows (`tw_f64`, `tw3_f64` in
    /// `ntt.cuh`; see [`DeviceNttTables::set_fp64_rows`]).
    tw_f64: u64,
    tw3_f64: u64,
}

/// The FP64 twiddle tables of `tables` (`tw_f64` and `tw3_f64` in `ntt.cuh`): `[table][N]`
/// pairs of doubles' bits, `(w, fl(w / q))` for the twiddles `w` of direction `dir`
/// (`root_powers` or `inv_root_powers`) of a prime below
/// 2^[`F64_MAX_Q_BITS`](crate::fp64::F64_MAX_Q_BITS), the unused entry 0 holding
/// `(q, fl(1 / q))`, all zeros for a larger prime; and their compact table of the last three
/// stages ([`compact_last_stages`] of those pairs). `None` when no prime takes FP64.
fn fp64_twiddles(tables: &[NttTable], dir: NttDirection) -> Option<(Vec<u64>, Vec<u64>)> {
    if !tables.iter().any(|t| f64_prime_ok(t.modulus().value())) {
        return None;
    }
    let degree = tables.first().map_or(0, NttTable::degree);
    let mut full = Vec::with_capacity(tables.len() * 2 * degree);
    let mut compact = Vec::with_capacity(tables.len() * 3 * degree / 4);
    for t in tables {
        let q = t.modulus().value();
        let (mut w, mut wq) = (vec![0u64; degree], vec![0u64; degree]);
        if f64_prime_ok(q) {
            let qf = q as f64;
            let powers = match dir {
                NttDirection::Forward => t.root_powers(),
                NttDirection::Inverse => t.inv_root_powers(),
            };
            for (i, &r) in powers.iter().enumerate() {
                let rf = r as f64;
                w[i] = rf.to_bits();
                wq[i] = (rf / qf).to_bits();
            }
            w[0] = qf.to_bits();
            wq[0] = (1.0 / qf).to_bits();
        }
        interleave(&w, &wq, &mut full);
        compact_last_stages(&w, Some(&wq), &mut compact);
    }
    Some((full, compact))
}

/// Launch rows up to which the kernels stage their twiddles in shared memory. Measured on the
/// H100 (BENCHMARKS.md §23): staging pays in launches of a few waves (2^16 × 32 limbs: forward
/// 33.4 → 32.0 µs, inverse 31.4 → 30.3 µs) and costs in long ones (1024 × 8 limbs at 2^15,
/// 8192 rows: forward +15 %).
const TW_STAGED_ROWS: usize = FLAG_ROWS;

/// `args` with [`NttArgs::tw_staged`] set from its row count.
fn stage_twiddles(mut args: NttArgs) -> NttArgs {
    args.tw_staged = u32::from(args.rows as usize <= TW_STAGED_ROWS);
    args
}

/// Launch rows the row flags cover (`NTT_FLAG_ROWS` in `ntt.cuh`); larger launches wait for the
/// whole first phase instead.
const FLAG_ROWS: usize = 4096;

/// The row flags of a [`DeviceNttTables`]: per launch row a count of the first phase's blocks
/// done and the epoch stamp of its last finished transform (`u32 [2][FLAG_ROWS]`, 32 KiB,
/// zeroed with the tables), and the last epoch issued. With them the second kernel of a two-kernel transform
/// starts on a row as soon as the first kernel has finished that row, instead of waiting for
/// the whole first grid (see `ntt_dep_wait` in `ntt.cuh`): with the forward column kernels at 8
/// blocks per SM, the forward transform of 2^16 × 32 limbs 34.4 → 32.7–33.0 µs on the H100
/// (BENCHMARKS.md §21).
struct RowFlags {
    words: DeviceBuffer,
    epoch: std::sync::atomic::AtomicU32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for NttArgs {}

impl NttArgs {
    /// The table of launch row `r` (see `ntt_row` in `ntt.cuh`).
    fn table_of(&self, r: u32) -> u32 {
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
    fn pairing(&self) -> u32 {
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
    fn of(batch: &NttBatch) -> Self {
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

/// One run of a grouped transform ([`DeviceNttTables::transform_runs`]): limbs
/// `first_limb .. first_limb + limbs` of buffer `buf` (an index into the buffer list), its limb
/// `first_limb + j` using table `table + j`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NttRun {
    /// Index of the buffer in the list passed with the runs.
    pub buf: usize,
    /// The first limb of the run in that buffer.
    pub first_limb: usize,
    /// Consecutive limbs in the run.
    pub limbs: usize,
    /// The table of the run's first limb.
    pub table: usize,
}

/// Where the fused epilogue of [`DeviceNttTables::forward_runs_epilogue`] writes one run:
/// `out = [c +] (x − NTT(run)) · w[table] mod q`, limb `j` of the run at limb `out_limb + j` of
/// output buffer `out`, reading limb `x_limb + j` of `x` and limb `c_limb + j` of `c`.
#[derive(Clone, Copy, Debug)]
pub struct EpilogueRun<'a> {
    /// Index of the output buffer in the list passed with the runs.
    pub out: usize,
    /// The output limb of the run's first limb.
    pub out_limb: usize,
    /// The minuend `x` (canonical).
    pub x: &'a DeviceBuffer,
    /// Its limb of the run's first limb.
    pub x_limb: usize,
    /// The optional addend `c` (canonical) and its limb of the run's first limb.
    pub c: Option<(&'a DeviceBuffer, usize)>,
}

/// The input of one run of [`DeviceNttTables::forward_runs_lifted_epilogue`]: limb `limb` of
/// `src` (`N` words, canonical modulo the `q_last` of the call), lifted centred to every prime
/// of the run.
#[derive(Clone, Copy, Debug)]
pub struct LiftRun<'a> {
    /// The buffer holding the limb.
    pub src: &'a DeviceBuffer,
    /// Which limb of `src`.
    pub limb: usize,
}

/// The factors of [`DeviceNttTables::forward_runs_lift_add_epilogue`] beyond the lift: the
/// prologue adds `lift_factor[t] · lift` to run limb `t`'s input, the epilogue multiplies by
/// `w[t]` and then by `w2[t]` (all `(w, shoup(w))` pairs by table index, `w < q_t`).
#[derive(Clone, Copy, Debug)]
pub struct LiftAddFactors<'a> {
    /// The factor of the lifted limb in the prologue (ModDown's `P mod q_t`).
    pub lift_factor: &'a DeviceBuffer,
    /// The epilogue's first factor (ModDown's `P^{-1}`).
    pub w: &'a DeviceBuffer,
    /// The epilogue's second factor (the rescale's `q_last^{-1}`), or none.
    pub w2: Option<&'a DeviceBuffer>,
}

/// The twiddle tables of a list of primes for one degree, resident on a device.
///
/// Built once per `(N, primes)` and kept by the caller. Device layout: forward and inverse
/// twiddles as `[table][N]` pairs `(w, w_shoup)` (16-byte loads); the same entries of the last
/// three stages gathered per thread ([`compact_last_stages`]: `[table][N/8][3]` pairs forward,
/// `[table][N/8][3]` twiddles alone inverse); and [`PRIME_WORDS`] constants per table (`q, 2q,
/// N^-1, shoup(N^-1), inv_root_powers[1]·N^-1, its Shoup companion`, and `q`'s Barrett ratio
/// `floor((2^128 - 1) / q)` low and high word, from which the inverse computes its compact
/// twiddles' companions).
pub struct DeviceNttTables {
    device: Arc<GpuDevice>,
    degree: usize,
    log_degree: u32,
    moduli: Vec<Modulus>,
    forward: DeviceBuffer,
    inverse: DeviceBuffer,
    forward3: DeviceBuffer,
    inverse3: DeviceBuffer,
    primes: DeviceBuffer,
    /// The host copy of `primes` ([`PRIME_WORDS`] per table).
    prime_words: Vec<u64>,
    row_flags: RowFlags,
    /// The FP64 twiddles and their compact table ([`fp64_twiddles`]), when a prime takes FP64.
    forward_f64: Option<(DeviceBuffer, DeviceBuffer)>,
    /// Whether the epilogue transforms run FP64 rows ([`DeviceNttTables::set_fp64_rows`]).
    fp64_rows: std::sync::atomic::AtomicBool,
    /// The inverse FP64 twiddles and their compact table, when a prime takes FP64.
    inverse_f64: Option<(DeviceBuffer, DeviceBuffer)>,
    /// Whether the scaled inverse from a source runs FP64 rows
    /// ([`DeviceNttTables::set_fp64_inverse`]).
    fp64_inverse: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for DeviceNttTables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceNttTables")
            .field("device", &self.device.index())
            .field("degree", &self.degree)
            .field(
                "moduli",
                &self.moduli.iter().map(|m| m.value()).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Interleaves a table with its Shoup companions: `[w0, s0, w1, s1, …]`.
fn interleave(w: &[u64], s: &[u64], out: &mut Vec<u64>) {
    for (&a, &b) in w.iter().zip(s) {
        out.push(a);
        out.push(b);
    }
}

/// The compact table of the last three stages (`N ≥ 8`): for `g < N/8`, the entries
/// `table[N/8 + g]`, `table[N/4 + 2g]`, `table[N/2 + 4g]` (what one thread of the row kernel needs
/// with derived twiddles), appended to `out` as pairs `(w, w_shoup)` when `ws` is given (the
/// forward table), else as the twiddles alone (the inverse table: its kernels compute the Shoup
/// companions, `tw_companion` in `kernels/ntt.cuh`, reading half the bytes).
pub fn compact_last_stages(w: &[u64], ws: Option<&[u64]>, out: &mut Vec<u64>) {
    let n = w.len();
    for g in 0..n / 8 {
        for i in [n / 8 + g, n / 4 + 2 * g, n / 2 + 4 * g] {
            out.push(w[i]);
            if let Some(ws) = ws {
                out.push(ws[i]);
            }
        }
    }
}

/// The [`PRIME_WORDS`] device constants of one table.
pub fn prime_words(table: &NttTable) -> [u64; PRIME_WORDS] {
    let m = table.modulus();
    let q = m.value();
    let last_w = m.mul(table.inv_root_powers()[1], table.inv_degree());
    [
        q,
        2 * q,
        table.inv_degree(),
        table.inv_degree_shoup(),
        last_w,
        m.shoup(last_w),
        m.barrett_ratio().1,
        m.barrett_ratio().0,
    ]
}

impl DeviceNttTables {
    /// Uploads `tables` (all of one degree `N = 2^1 … 2^17`; table `j` serves limb `j`).
    ///
    /// Errors: [`CudaError::InvalidArgument`] for an empty list, [`CudaError::Shape`] for tables
    /// of different degrees, device errors from the upload.
    pub fn new(device: &Arc<GpuDevice>, tables: &[NttTable]) -> Result<Self> {
        let first = tables
            .first()
            .ok_or_else(|| CudaError::InvalidArgument("an empty list of NTT tables".into()))?;
        let degree = first.degree();
        if let Some(t) = tables.iter().find(|t| t.degree() != degree) {
            return Err(CudaError::Shape(format!(
                "NTT tables of different degrees ({degree} and {})",
                t.degree()
            )));
        }
        let mut fwd = Vec::with_capacity(tables.len() * 2 * degree);
        let mut inv = Vec::with_capacity(tables.len() * 2 * degree);
        let mut fwd3 = Vec::with_capacity(tables.len() * 3 * degree / 4);
        let mut inv3 = Vec::with_capacity(tables.len() * 3 * degree / 4);
        let mut primes = Vec::with_capacity(tables.len() * PRIME_WORDS);
        for t in tables {
            interleave(t.root_powers(), t.root_powers_shoup(), &mut fwd);
            interleave(t.inv_root_powers(), t.inv_root_powers_shoup(), &mut inv);
            compact_last_stages(t.root_powers(), Some(t.root_powers_shoup()), &mut fwd3);
            compact_last_stages(t.inv_root_powers(), None, &mut inv3);
            primes.extend_from_slice(&prime_words(t));
        }
        let upload_f64 = |dir| -> Result<Option<(DeviceBuffer, DeviceBuffer)>> {
            match fp64_twiddles(tables, dir) {
                Some((full, compact)) => {
                    Ok(Some((device.upload(&full)?, device.upload(&compact)?)))
                }
                None => Ok(None),
            }
        };
        let forward_f64 = upload_f64(NttDirection::Forward)?;
        let inverse_f64 = upload_f64(NttDirection::Inverse)?;
        Ok(Self {
            device: device.clone(),
            degree,
            log_degree: first.log_degree(),
            moduli: tables.iter().map(|t| *t.modulus()).collect(),
            forward: device.upload(&fwd)?,
            inverse: device.upload(&inv)?,
            forward3: device.upload(&fwd3)?,
            inverse3: device.upload(&inv3)?,
            primes: device.upload(&primes)?,
            prime_words: primes,
            row_flags: RowFlags {
                words: device.alloc_zeroed(FLAG_ROWS)?,
                epoch: std::sync::atomic::AtomicU32::new(0),
            },
            forward_f64,
            inverse_f64,
            fp64_rows: std::sync::atomic::AtomicBool::new(device.tuning().fp64_forward_rows),
            fp64_inverse: std::sync::atomic::AtomicBool::new(device.tuning().fp64_inverse_rows),
        })
    }

    /// Sets whether the forward transforms with the fused epilogue
    /// ([`DeviceNttTables::forward_runs_epilogue`] and its variants: the ModDown's;
    /// [`DeviceNttTables::forward_runs_lifted_epilogue`]: the rescale's;
    /// [`DeviceNttTables::forward_runs_lift_add_epilogue`]: the two merged) run the rows whose
    /// prime is below 2^46 on the FP64 pipe (`kernels/fp64.cuh`) instead of the integer one,
    /// when a lifted modulus is below 2^46 too (the default is the device's
    /// [`Tuning::fp64_forward_rows`](crate::Tuning::fp64_forward_rows)). The words are the same
    /// either way.
    pub fn set_fp64_rows(&self, on: bool) {
        self.fp64_rows
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether the epilogue transforms run FP64 rows ([`DeviceNttTables::set_fp64_rows`]).
    pub fn fp64_rows(&self) -> bool {
        self.fp64_rows.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Sets whether [`DeviceNttTables::inverse_scaled_from`] (the ModUp's inverse transform)
    /// runs the rows whose prime is below 2^46 on the FP64 pipe (`kernels/fp64.cuh`: the
    /// Gentleman–Sande butterflies in doubles, `ntt_inv_rowsdf_*_o` then `ntt_inv_colsf_*_s`)
    /// instead of the integer one (the default is the device's
    /// [`Tuning::fp64_inverse_rows`](crate::Tuning::fp64_inverse_rows)). The words are the same
    /// either way.
    pub fn set_fp64_inverse(&self, on: bool) {
        self.fp64_inverse
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether [`DeviceNttTables::inverse_scaled_from`] of `polys × limbs` runs some rows on
    /// the FP64 pipe now: FP64 inverses are on ([`DeviceNttTables::set_fp64_inverse`]), the
    /// fast kernels with derived twiddles serve the shape, and some limb's prime is below 2^46.
    pub fn inverse_takes_fp64(&self, polys: usize, limbs: usize) -> bool {
        self.inverse_f64.is_some()
            && self.fp64_inverse.load(std::sync::atomic::Ordering::Relaxed)
            && default_split(self.log_degree, polys).is_some_and(|s| s.derived_twiddles)
            && self.moduli[..limbs.min(self.moduli.len())]
                .iter()
                .any(|m| f64_prime_ok(m.value()))
    }

    /// Whether a forward transform of `runs` with the fused epilogue runs some rows on the FP64
    /// pipe now: FP64 rows are on, some run's prime is below
    /// 2^[`F64_MAX_Q_BITS`](crate::fp64::F64_MAX_Q_BITS), and so is `q_last` for a lifted one
    /// ([`DeviceNttTables::forward_runs_lifted_epilogue`] and
    /// [`DeviceNttTables::forward_runs_lift_add_epilogue`]; `None` for
    /// [`DeviceNttTables::forward_runs_epilogue`] and its variants).
    pub fn epilogue_takes_fp64(&self, q_last: Option<Modulus>, runs: &[NttRun]) -> bool {
        self.fp64_applies(
            q_last.map(|m| m.value()),
            runs.iter().flat_map(|r| r.table..r.table + r.limbs),
        )
    }

    /// Whether FP64 rows are on and apply to some of `tables`, lifted from `q_last` if given.
    fn fp64_applies(&self, q_last: Option<u64>, mut tables: impl Iterator<Item = usize>) -> bool {
        self.forward_f64.is_some()
            && self.fp64_rows()
            && q_last.map_or(true, f64_prime_ok)
            && tables.any(|t| self.moduli.get(t).is_some_and(|m| f64_prime_ok(m.value())))
    }

    /// Builds the host tables of `moduli` for degree `degree` and uploads them.
    ///
    /// Errors: those of [`NttTable::new`] (a degree out of range, a prime that is not
    /// NTT-friendly) as [`CudaError::Math`], and those of [`DeviceNttTables::new`].
    pub fn from_moduli(device: &Arc<GpuDevice>, moduli: &[Modulus], degree: usize) -> Result<Self> {
        let tables = moduli
            .iter()
            .map(|&m| NttTable::new(m, degree))
            .collect::<rhea_math::Result<Vec<_>>>()?;
        Self::new(device, &tables)
    }

    /// The device the tables live on.
    pub fn device(&self) -> &Arc<GpuDevice> {
        &self.device
    }

    /// The ring degree `N`.
    pub fn degree(&self) -> usize {
        self.degree
    }

    /// `log2 N`.
    pub fn log_degree(&self) -> u32 {
        self.log_degree
    }

    /// The moduli, one per table.
    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }

    /// The number of tables (primes).
    pub fn len(&self) -> usize {
        self.moduli.len()
    }

    /// Whether there are no tables (never, by construction).
    pub fn is_empty(&self) -> bool {
        self.moduli.is_empty()
    }

    /// Device bytes of the twiddle tables of one direction for `count` primes: what a transform
    /// that reads every twiddle pair once reads at least (the naive one, the fast one without
    /// derived twiddles).
    pub fn twiddle_bytes(&self, count: usize) -> usize {
        count * self.degree * 16
    }

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

    /// Device addresses of the forward twiddles, the compact forward twiddles and the prime
    /// constants (for the fused kernels that run a forward row phase).
    pub(crate) fn forward_table_ptrs(&self) -> (u64, u64, u64) {
        (
            self.forward.device_ptr(),
            self.forward3.device_ptr(),
            self.primes.device_ptr(),
        )
    }

    /// The split of the grouped launches (the default shape, derived twiddles), if the fast
    /// kernels serve this degree.
    pub(crate) fn grouped_split_of(&self) -> Result<NttSplit> {
        self.grouped_split()
    }

    /// Checks that `b` lives on this tables' device.
    pub(crate) fn check_same_device(&self, b: &DeviceBuffer) -> Result<()> {
        self.check_device(b)
    }

    /// Whether the fast kernels serve this degree (`N = 2^12 … 2^17`), which
    /// [`DeviceNttTables::forward_runs_epilogue`] needs.
    pub fn has_fast_kernels(&self) -> bool {
        default_split(self.log_degree, 2).is_some()
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

    /// The checked arguments of a lifted grouped launch (see
    /// [`DeviceNttTables::forward_runs_lifted_epilogue`]).
    #[allow(clippy::too_many_arguments)]
    fn lifted_args(
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

    /// The two launches of a grouped forward transform with the fused epilogue: the column
    /// kernel `ntt_fwd_<cols>_*` (`cols`, `colsl`, `colsla`; `lifted`: the latter two, whose
    /// `pro_q` is `q_last`), then the epilogue row kernel. With FP64 rows
    /// ([`DeviceNttTables::set_fp64_rows`]) and some row's prime below 2^46 (and `q_last` too
    /// when lifted), `ntt_fwd_<cols>f_*` and `ntt_fwd_rowsef_*`, whose FP64 rows run on the FP64
    /// pipe.
    fn launch_epilogue_pair(&self, args: &NttArgs, cols: &str, lifted: bool) -> Result<()> {
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

    /// The split of the epilogue launches (the default shape with derived twiddles).
    fn grouped_split(&self) -> Result<NttSplit> {
        let s = default_split(self.log_degree, 2).ok_or_else(|| {
            CudaError::InvalidArgument(format!(
                "grouped NTT needs the fast kernels (N = 2^{})",
                self.log_degree
            ))
        })?;
        Ok(s.with_derived_twiddles(true))
    }

    /// The checked grouped arguments of a forward transform of `runs` (over buffers at `ptrs`
    /// of `lens` words) with the fused epilogue `epi` into `outs`.
    fn epilogue_args(
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
    fn buffers_of(&self, bufs: &[&mut DeviceBuffer]) -> Result<(Vec<u64>, Vec<usize>)> {
        for b in bufs.iter() {
            self.check_device(b)?;
        }
        Ok((
            bufs.iter().map(|b| b.device_ptr()).collect(),
            bufs.iter().map(|b| b.len()).collect(),
        ))
    }

    fn check_device(&self, b: &DeviceBuffer) -> Result<()> {
        if Arc::ptr_eq(b.device(), &self.device) {
            Ok(())
        } else {
            Err(CudaError::DeviceMismatch(
                b.device().index(),
                self.device.index(),
            ))
        }
    }

    /// The grouped launch arguments of `runs` over buffers at `ptrs` of `lens` words.
    fn runs_args(&self, ptrs: &[u64], lens: &[usize], runs: &[NttRun]) -> Result<NttArgs> {
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
    fn phase_args(&self, args: &NttArgs) -> Result<(NttArgs, NttArgs, Option<LaunchHold<'_>>)> {
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

    fn launch_fast_raw(&self, args: &NttArgs, dir: NttDirection, s: NttSplit) -> Result<()> {
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

    fn launch(
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

    fn launch_fast(
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
    fn launch_butterflies(
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
    fn launch_phase(
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

    /// The kernel and arguments of a phase: a derived-twiddle row phase (blocks of an even
    /// number of chunks) whose rows pair up ([`NttArgs::pairing`]) takes the paired kernel
    /// (`…_p`, `pair_half` set); anything else runs as named.
    fn paired(
        &self,
        name: String,
        args: &NttArgs,
        s: NttSplit,
        phase: Phase,
        epilogue: bool,
    ) -> (String, NttArgs) {
        let mut a = *args;
        let chunks = self.row_chunks(s);
        let derived = s.derived_twiddles || epilogue;
        a.pair_half = if phase == Phase::Rows && derived && chunks % 2 == 0 {
            a.pairing()
        } else {
            0
        };
        if a.pair_half == 0 {
            (name, a)
        } else {
            (format!("{name}_p"), a)
        }
    }

    /// A phase of a grouped launch (`args.groups > 0`: the kernel ignores `data`).
    fn launch_phase_raw(
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

    /// Chunks per block of the row kernel of split `s` (`RowsShape::CH` in `ntt.cuh`): 128
    /// threads of 8 entries each, or one chunk of 2^log_n2 entries when that is more.
    fn row_chunks(&self, s: NttSplit) -> u32 {
        let t = (1u32 << (self.log_degree - s.log_n1)) / 8;
        if t >= 128 {
            1
        } else {
            128 / t
        }
    }

    /// The kernel name and launch shape of one phase over `rows` limb-transforms.
    fn phase_config(
        &self,
        rows: u32,
        dir: NttDirection,
        s: NttSplit,
        phase: Phase,
        epilogue: bool,
    ) -> (String, LaunchConfig) {
        let log_n = self.log_degree;
        let log_n2 = log_n - s.log_n1;
        let d = match dir {
            NttDirection::Forward => "fwd",
            NttDirection::Inverse => "inv",
        };
        match phase {
            // Column kernel: 2^log_n1 / 8 threads per column, cols_per_block columns per block.
            Phase::Cols => (
                s.cols_name(d, log_n),
                LaunchConfig {
                    grid_dim: (rows * ((1u32 << log_n2) / s.cols_per_block), 1, 1),
                    block_dim: (((1u32 << s.log_n1) / 8) * s.cols_per_block, 1, 1),
                    shared_mem_bytes: 0,
                },
            ),
            // Row kernel: chunks of 2^log_n2 entries, 2^log_n2 / 8 threads each, 128 threads
            // (or one chunk) per block.
            Phase::Rows => {
                let t = (1u32 << log_n2) / 8;
                let chunks = self.row_chunks(s);
                let name = if epilogue {
                    format!("ntt_fwd_rowsde_{log_n}_{}", s.log_n1)
                } else {
                    s.rows_name(d, log_n)
                };
                (
                    name,
                    LaunchConfig {
                        grid_dim: (rows * ((1u32 << log_n) / ((1u32 << log_n2) * chunks)), 1, 1),
                        block_dim: (t * chunks, 1, 1),
                        shared_mem_bytes: 0,
                    },
                )
            }
        }
    }

    fn launch_naive(
        &self,
        buf: &mut DeviceBuffer,
        args: &NttArgs,
        dir: NttDirection,
    ) -> Result<()> {
        self.launch_naive_at(buf.device_ptr(), args, dir)
    }

    /// The naive stages of a grouped launch (`data` unused).
    fn launch_naive_raw(&self, args: &NttArgs, dir: NttDirection) -> Result<()> {
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

// ---- benchmark ---------------------------------------------------------------------------------

/// One benchmark shape: `polys × limbs` limb-transforms of degree `2^log_degree` over primes of
/// `prime_bits` bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NttBenchCase {
    /// A short name for tables and JSON.
    pub name: String,
    /// `log2 N`.
    pub log_degree: u32,
    /// Limbs (distinct primes) per polynomial.
    pub limbs: usize,
    /// Polynomials (instances) per transform.
    pub polys: usize,
    /// Bits of each prime (the largest NTT-friendly primes below `2^prime_bits`).
    pub prime_bits: u32,
}

/// What [`bench_ntt`] runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NttBenchOptions {
    /// The shapes.
    pub cases: Vec<NttBenchCase>,
    /// Untimed transforms before timing each row.
    pub warmup: usize,
    /// Timed samples per row (the median is reported).
    pub samples: usize,
    /// Time every compiled split of the fast NTT, not only the default shape (with and without
    /// derived twiddles).
    pub all_splits: bool,
    /// Also time the naive baseline.
    pub naive: bool,
    /// Also time each kernel of the default shape on its own (the first case only).
    pub phases: bool,
}

impl Default for NttBenchOptions {
    /// N = 2^16 × 32 limbs × 1 polynomial, the same data over one prime (N = 2^16 × 1 limb × 32
    /// polynomials: the twiddles are shared, which isolates their cost) and N = 2^15 × 8 limbs ×
    /// 1024 polynomials, 60-bit primes, with every split, per-kernel times and the naive baseline.
    fn default() -> Self {
        Self {
            cases: vec![
                NttBenchCase {
                    name: "N=2^16 L=32".into(),
                    log_degree: 16,
                    limbs: 32,
                    polys: 1,
                    prime_bits: 60,
                },
                NttBenchCase {
                    name: "N=2^16 L=1 x32".into(),
                    log_degree: 16,
                    limbs: 1,
                    polys: 32,
                    prime_bits: 60,
                },
                NttBenchCase {
                    name: "N=2^15 L=8 x1024".into(),
                    log_degree: 15,
                    limbs: 8,
                    polys: 1024,
                    prime_bits: 60,
                },
            ],
            warmup: 5,
            samples: 30,
            all_splits: true,
            naive: true,
            phases: true,
        }
    }
}

/// One timed row of [`bench_ntt`].
#[derive(Clone, Debug, PartialEq)]
pub struct NttBenchRow {
    /// The case name.
    pub case: String,
    /// `log2 N`.
    pub log_degree: u32,
    /// Limbs per polynomial.
    pub limbs: usize,
    /// Polynomials.
    pub polys: usize,
    /// Prime size in bits.
    pub prime_bits: u32,
    /// `fast <split>`, `naive`, `[cols]`/`[rows] <split>` (one kernel) or `arith floor …` (the
    /// butterflies alone in registers, scaled to the transform's count).
    pub algorithm: String,
    /// `forward` or `inverse`.
    pub direction: String,
    /// Median time of one whole transform (all `polys × limbs` limbs), microseconds.
    pub median_us: f64,
    /// Fastest sample, microseconds.
    pub min_us: f64,
    /// Limb-transforms per second at the median.
    pub limb_ntts_per_s: f64,
    /// Bytes the variant must move: the data read and written once per pass (twice for the
    /// fast transform), plus the twiddle bytes it reads
    /// ([`NttSplit::twiddle_bytes_read`]: half the table with derived twiddles forward, 5/16
    /// inverse).
    pub model_bytes: u64,
    /// `model_bytes / median` in GB/s.
    pub effective_gbps: f64,
    /// `effective_gbps / copy_gbps`: the fraction of the memory roofline reached.
    pub roofline_fraction: f64,
}

/// The result of [`bench_ntt`].
#[derive(Clone, Debug, PartialEq)]
pub struct NttBenchReport {
    /// The device name.
    pub device: String,
    /// Device-to-device copy bandwidth measured in the same run (bytes read + written), GB/s.
    pub copy_gbps: f64,
    /// One row per (case, algorithm, direction).
    pub rows: Vec<NttBenchRow>,
}

impl NttBenchReport {
    /// A fixed-width text table.
    pub fn table(&self) -> String {
        let mut s = format!(
            "NTT benchmark on {} (device-to-device copy: {:.0} GB/s)\n{:<18} {:<14} {:<8} {:>10} \
             {:>10} {:>12} {:>9} {:>8}\n",
            self.device,
            self.copy_gbps,
            "case",
            "algorithm",
            "dir",
            "median us",
            "min us",
            "limb-NTT/s",
            "GB/s",
            "roofline"
        );
        for r in &self.rows {
            s.push_str(&format!(
                "{:<18} {:<14} {:<8} {:>10.1} {:>10.1} {:>12.3e} {:>9.0} {:>7.1}%\n",
                r.case,
                r.algorithm,
                r.direction,
                r.median_us,
                r.min_us,
                r.limb_ntts_per_s,
                r.effective_gbps,
                100.0 * r.roofline_fraction
            ));
        }
        s
    }

    /// The report as a JSON object.
    pub fn to_json(&self) -> String {
        let esc = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
        let rows: Vec<String> = self
            .rows
            .iter()
            .map(|r| {
                format!(
                    "{{\"case\":\"{}\",\"log_degree\":{},\"limbs\":{},\"polys\":{},\
                     \"prime_bits\":{},\"algorithm\":\"{}\",\"direction\":\"{}\",\
                     \"median_us\":{:.3},\"min_us\":{:.3},\"limb_ntts_per_s\":{:.1},\
                     \"model_bytes\":{},\"effective_gbps\":{:.2},\"roofline_fraction\":{:.4}}}",
                    esc(&r.case),
                    r.log_degree,
                    r.limbs,
                    r.polys,
                    r.prime_bits,
                    esc(&r.algorithm),
                    r.direction,
                    r.median_us,
                    r.min_us,
                    r.limb_ntts_per_s,
                    r.model_bytes,
                    r.effective_gbps,
                    r.roofline_fraction
                )
            })
            .collect();
        format!(
            "{{\"bench\":\"ntt\",\"device\":\"{}\",\"copy_gbps\":{:.2},\"rows\":[\n  {}\n]}}\n",
            esc(&self.device),
            self.copy_gbps,
            rows.join(",\n  ")
        )
    }
}

/// The `count` largest primes below `2^bits` that are NTT-friendly for degree `degree`.
///
/// Errors: [`CudaError::InvalidArgument`] when `bits` is outside `20 ..= 61` or too few exist.
pub fn bench_primes(bits: u32, degree: usize, count: usize) -> Result<Vec<Modulus>> {
    if !(20..=61).contains(&bits) {
        return Err(CudaError::InvalidArgument(format!(
            "benchmark primes of {bits} bits"
        )));
    }
    let step = 2 * degree as u64;
    let mut q = ((1u64 << bits) / step) * step + 1;
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        q = q
            .checked_sub(step)
            .filter(|&v| v > 1u64 << (bits - 1))
            .ok_or_else(|| {
                CudaError::InvalidArgument(format!("fewer than {count} {bits}-bit NTT primes"))
            })?;
        if rhea_math::prime::is_ntt_friendly(q, degree) {
            out.push(Modulus::new(q)?);
        }
    }
    Ok(out)
}

/// What one benchmark row times.
enum Job {
    /// A whole transform.
    Full(NttAlgorithm),
    /// One kernel of the fast NTT.
    Phase(NttSplit, Phase),
    /// The butterflies alone, in registers (`ntt_bf*_throughput`): the arithmetic floor.
    Arith(ArithWords),
}

/// The words of an arithmetic-floor row.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum ArithWords {
    /// 64-bit words, Harvey butterflies with Shoup products (`ntt_bf_*`): the NTT kernels'.
    U64,
    /// 32-bit words (`ntt_bf32_*`), two ~30-bit primes per 60-bit limb (Cheddar's word size).
    U32,
    /// Doubles (`ntt_bff64_*`, `fp64.cuh`): a prime below 2^46 per limb.
    F64,
}

/// The ~30-bit prime of the 32-bit butterfly-throughput kernel (`7 · 2^26 + 1`).
const ARITH32_PRIME: u32 = 469_762_049;

/// Radix-8 passes per thread of the butterfly-throughput kernel, per `log2 N` (12 butterflies
/// each: three times the 4 · log2 N butterflies an NTT thread does).
const ARITH_PASSES_PER_LOG_N: u32 = 1;

/// Median and minimum of a list of samples.
fn median_min(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    let med = if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    };
    (med, v[0])
}

/// Times `run` (called with an iteration index): `samples` samples of `inner` calls each between
/// two CUDA events, after `warmup` calls; returns (median, min) microseconds per call.
fn time_events(
    dev: &Arc<GpuDevice>,
    warmup: usize,
    samples: usize,
    mut run: impl FnMut(usize) -> Result<()>,
) -> Result<(f64, f64)> {
    let ctx = dev.context();
    let mut it = 0usize;
    for _ in 0..warmup.max(1) {
        run(it)?;
        it += 1;
    }
    dev.synchronize()?;
    // Calibrate: aim at ≥ 1 ms per sample so event resolution and launch gaps do not matter.
    let start = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    let end = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    start.record(dev.stream())?;
    run(it)?;
    it += 1;
    end.record(dev.stream())?;
    let once_ms = start.elapsed_ms(&end)? as f64;
    let inner = ((1.0 / once_ms.max(1e-3)).ceil() as usize).clamp(1, 200);
    let mut times = Vec::with_capacity(samples.max(1));
    for _ in 0..samples.max(1) {
        start.record(dev.stream())?;
        for _ in 0..inner {
            run(it)?;
            it += 1;
        }
        end.record(dev.stream())?;
        times.push(start.elapsed_ms(&end)? as f64 * 1e3 / inner as f64);
    }
    Ok(median_min(times))
}

/// Device-to-device copy bandwidth in GB/s (bytes read plus bytes written), from `cuMemcpyDtoD`
/// of `bytes` bytes, median of `samples`.
pub fn copy_bandwidth_gbps(dev: &Arc<GpuDevice>, bytes: usize, samples: usize) -> Result<f64> {
    let words = (bytes / 8).max(1);
    let chunk: Vec<u64> = (0..words.min(1 << 20))
        .map(|i| 0x0123_4567_89AB_CDEF ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    let mut src = dev.alloc(words)?;
    for off in (0..words).step_by(chunk.len()) {
        let n = chunk.len().min(words - off);
        src.copy_from_host_at(off, &chunk[..n])?;
    }
    let mut dst = dev.alloc(words)?;
    let (median_us, _) = time_events(dev, 3, samples, |_| {
        DeviceBuffer::copy_region(&src, 0, &mut dst, 0, words)
    })?;
    Ok(2.0 * (words * 8) as f64 / (median_us * 1e-6) / 1e9)
}

/// A fast deterministic generator for benchmark data (SplitMix64).
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Benchmarks the forward and inverse NTT on `dev`: for each case, the fast NTT (default split,
/// or every compiled split) and the naive baseline, timed with CUDA events (median of
/// `samples`, each sample long enough to hide launch gaps), on random non-zero data; buffers
/// rotate so that repeated runs do not hit in L2. The roofline is the device-to-device copy
/// bandwidth measured in the same run.
///
/// Errors: device, NVRTC and shape errors.
pub fn bench_ntt(dev: &Arc<GpuDevice>, opts: &NttBenchOptions) -> Result<NttBenchReport> {
    let copy_gbps = copy_bandwidth_gbps(dev, 1 << 30, 20)?;
    let l2 = (dev.info().l2_cache_bytes as usize).max(1 << 20);
    let mut rows = Vec::new();
    for (case_index, case) in opts.cases.iter().enumerate() {
        let degree = 1usize << case.log_degree;
        let moduli = bench_primes(case.prime_bits, degree, case.limbs)?;
        let tables = DeviceNttTables::from_moduli(dev, &moduli, degree)?;
        let poly_words = case.limbs * degree;
        let words = case.polys * poly_words;
        let bytes = words * 8;
        // Enough buffers that the rotation spans at least 3× the L2.
        let nbuf = (3 * l2).div_ceil(bytes).clamp(1, 16);
        let mut seed = 0x5EED_0000 + case.log_degree as u64;
        let mut host = vec![0u64; poly_words];
        for (j, m) in moduli.iter().enumerate() {
            let q = m.value();
            for x in &mut host[j * degree..(j + 1) * degree] {
                *x = 1 + splitmix(&mut seed) % (q - 1);
            }
        }
        let mut bufs = Vec::with_capacity(nbuf);
        for _ in 0..nbuf {
            let mut b = dev.upload(&host)?;
            if case.polys > 1 {
                let mut full = dev.alloc(words)?;
                for p in 0..case.polys {
                    DeviceBuffer::copy_region(&b, 0, &mut full, p * poly_words, poly_words)?;
                }
                b = full;
            }
            bufs.push(b);
        }
        let batch = NttBatch::all(case.polys, case.limbs);
        let args = NttArgs::of(&batch);
        let tw_bytes = tables.twiddle_bytes(case.limbs);
        let full_bytes = (4 * bytes + tw_bytes) as u64;
        let sp = splits(case.log_degree);
        // Each job with its model bytes forward and inverse.
        let mut jobs: Vec<(String, Job, [u64; 2])> = Vec::new();
        for (i, s) in sp.iter().enumerate() {
            if i < 2 || opts.all_splits {
                let label = format!("fast {}", s.label(case.log_degree));
                let model = [NttDirection::Forward, NttDirection::Inverse]
                    .map(|d| (4 * bytes + s.twiddle_bytes_read(degree, case.limbs, d)) as u64);
                jobs.push((label, Job::Full(NttAlgorithm::FastSplit(*s)), model));
            }
        }
        if opts.phases && case_index == 0 {
            for s in sp.iter().take(2) {
                let l = s.label(case.log_degree);
                // The column kernel's twiddles (the table's first N1 pairs) are negligible.
                let rows = [NttDirection::Forward, NttDirection::Inverse]
                    .map(|d| (2 * bytes + s.twiddle_bytes_read(degree, case.limbs, d)) as u64);
                let cols = [(2 * bytes) as u64; 2];
                jobs.push((format!("[cols] {l}"), Job::Phase(*s, Phase::Cols), cols));
                jobs.push((format!("[rows] {l}"), Job::Phase(*s, Phase::Rows), rows));
            }
        }
        if opts.naive || sp.is_empty() {
            jobs.push((
                "naive".into(),
                Job::Full(NttAlgorithm::Naive),
                [full_bytes; 2],
            ));
        }
        // The arithmetic alone: one thread per 8 entries, as the NTT kernels (a whole number of
        // 128-thread blocks).
        let mut arith_out = None;
        if opts.phases && case_index == 0 && words % 1024 == 0 {
            jobs.push((
                "arith floor (registers)".into(),
                Job::Arith(ArithWords::U64),
                [0; 2],
            ));
            jobs.push((
                "arith floor 2x32-bit words".into(),
                Job::Arith(ArithWords::U32),
                [0; 2],
            ));
            jobs.push((
                "arith floor fp64 (q < 2^46)".into(),
                Job::Arith(ArithWords::F64),
                [0; 2],
            ));
            arith_out = Some(dev.alloc(words / 8)?);
        }
        let arith_passes = ARITH_PASSES_PER_LOG_N * case.log_degree;
        for (label, job, model) in &jobs {
            for (dir, &model_bytes) in [NttDirection::Forward, NttDirection::Inverse]
                .into_iter()
                .zip(model)
            {
                let (median_us, min_us) =
                    time_events(dev, opts.warmup, opts.samples, |it| match job {
                        Job::Full(alg) => tables.transform(&mut bufs[it % nbuf], &batch, dir, *alg),
                        Job::Phase(s, ph) => {
                            tables.launch_phase(&mut bufs[it % nbuf], &args, dir, *s, *ph)
                        }
                        Job::Arith(words) => match arith_out.as_mut() {
                            Some(out) => tables.launch_butterflies(out, dir, arith_passes, *words),
                            None => Ok(()),
                        },
                    })?;
                // The arithmetic rows do 12 · passes butterflies per thread; the NTT 4 · log N,
                // twice over with 32-bit words (two ~30-bit primes carry one 60-bit limb).
                let scale = (4 * case.log_degree) as f64 / (12 * arith_passes) as f64;
                let (median_us, min_us) = match job {
                    Job::Arith(words) => {
                        let s = if *words == ArithWords::U32 {
                            2.0 * scale
                        } else {
                            scale
                        };
                        (median_us * s, min_us * s)
                    }
                    _ => (median_us, min_us),
                };
                let secs = median_us * 1e-6;
                let gbps = model_bytes as f64 / secs / 1e9;
                rows.push(NttBenchRow {
                    case: case.name.clone(),
                    log_degree: case.log_degree,
                    limbs: case.limbs,
                    polys: case.polys,
                    prime_bits: case.prime_bits,
                    algorithm: label.clone(),
                    direction: match dir {
                        NttDirection::Forward => "forward".into(),
                        NttDirection::Inverse => "inverse".into(),
                    },
                    median_us,
                    min_us,
                    limb_ntts_per_s: (case.polys * case.limbs) as f64 / secs,
                    model_bytes,
                    effective_gbps: gbps,
                    roofline_fraction: gbps / copy_gbps,
                });
            }
        }
        dev.synchronize()?;
    }
    Ok(NttBenchReport {
        device: dev.name().to_string(),
        copy_gbps,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_cover_the_fast_range() {
        for log_n in MIN_FAST_LOG_DEGREE..=MAX_FAST_LOG_DEGREE {
            let sp = splits(log_n);
            assert!(!sp.is_empty(), "no split for 2^{log_n}");
            for s in &sp {
                let log_n2 = log_n - s.log_n1;
                assert!(s.log_n1 >= 3 && log_n2 >= 3, "{s:?} for 2^{log_n}");
                assert!((1u32 << log_n2) % s.cols_per_block == 0);
                assert!(((1u32 << s.log_n1) / 8) * s.cols_per_block <= 1024);
                // Every split is instantiated in ntt.cu.
                let cols = format!("NTT_COLS({log_n}, {}, {})", s.log_n1, s.cols_per_block);
                let rows = format!("NTT_ROWS({log_n}, {})", s.log_n1);
                assert!(NTT.source.contains(&cols), "{cols} missing from ntt.cu");
                assert!(NTT.source.contains(&rows), "{rows} missing from ntt.cu");
            }
        }
        assert!(splits(11).is_empty());
        assert!(splits(18).is_empty());
    }

    #[test]
    fn bench_primes_have_the_requested_size() {
        let ps = bench_primes(60, 1 << 16, 4).unwrap();
        assert_eq!(ps.len(), 4);
        for w in ps.windows(2) {
            assert!(w[0].value() > w[1].value());
        }
        for p in &ps {
            assert_eq!(p.bits(), 60);
            assert!(rhea_math::prime::is_ntt_friendly(p.value(), 1 << 16));
        }
        assert!(bench_primes(62, 1 << 16, 1).is_err());
    }

    #[test]
    fn galois_inverse_inverts_modulo_2n() {
        for g in [1u64, 3, 5, 25, (1 << 17) - 1, 12345] {
            let h = u64::from(galois_inverse(g, 1 << 16).unwrap());
            assert_eq!(g * h % (1 << 17), 1, "g = {g}");
        }
        assert!(galois_inverse(4, 1 << 16).is_err());
    }

    #[test]
    fn twiddles_are_staged_in_launches_of_at_most_4096_rows() {
        // One limb, the 32 limbs of the NTT goal, the staging limit, and past it (the 1024 × 8
        // batch of seed 000 has 8192 rows and must not be staged: BENCHMARKS.md §23).
        for (polys, limbs, staged) in [(1, 1, 1), (1, 32, 1), (1024, 4, 1), (1024, 8, 0)] {
            let a = stage_twiddles(NttArgs::of(&NttBatch::all(polys, limbs)));
            assert_eq!(a.tw_staged, staged, "{polys} x {limbs}");
        }
        let mut a = NttArgs::of(&NttBatch::all(1, 32));
        a.rows = 4097;
        assert_eq!(stage_twiddles(a).tw_staged, 0);
    }

    #[test]
    fn rows_pair_when_both_halves_use_the_same_tables() {
        // Strided: two polynomials of limbs 1..4 (tables 3..6 with first_table 2): paired.
        let mut a = NttArgs::of(&NttBatch::limb_range(2, 6, 1, 3).with_first_table(2));
        assert_eq!(
            (a.rows, a.table_of(0), a.table_of(3), a.table_of(5)),
            (6, 3, 3, 5)
        );
        assert_eq!(a.pairing(), 3);
        // One polynomial: nothing to pair.
        a = NttArgs::of(&NttBatch::all(1, 4));
        assert_eq!(a.pairing(), 0);
        // Grouped: runs of tables 5..8 and 5..8 pair; 5..8 and 6..9 do not; odd rows never.
        a = NttArgs {
            rows: 8,
            groups: 2,
            ..NttArgs::default()
        };
        a.row_start[..3].copy_from_slice(&[0, 4, 8]);
        a.table[..2].copy_from_slice(&[5, 5]);
        assert_eq!((a.table_of(3), a.table_of(4), a.table_of(7)), (8, 5, 8));
        assert_eq!(a.pairing(), 4);
        a.table[1] = 6;
        assert_eq!(a.pairing(), 0);
        a.rows = 7;
        a.table[1] = 5;
        assert_eq!(a.pairing(), 0);
    }

    #[test]
    fn prime_words_fold_the_inverse_degree() {
        let q = bench_primes(50, 1 << 12, 1).unwrap()[0];
        let t = NttTable::new(q, 1 << 12).unwrap();
        let w = prime_words(&t);
        assert_eq!(w[0], q.value());
        assert_eq!(w[1], 2 * q.value());
        assert_eq!(q.mul(w[2], 1 << 12), 1);
        assert_eq!(w[3], q.shoup(w[2]));
        assert_eq!(w[4], q.mul(t.inv_root_powers()[1], w[2]));
        assert_eq!(w[5], q.shoup(w[4]));
        assert_eq!((w[7], w[6]), q.barrett_ratio());
    }

    /// The host twin of `tw_companion` (kernels/ntt.cuh), which gives the inverse's compact
    /// twiddles their Shoup companions from the Barrett ratio in the prime's words.
    fn tw_companion(w: u64, q: u64, r_hi: u64, r_lo: u64) -> u64 {
        let c = w
            .wrapping_mul(r_hi)
            .wrapping_add(((w as u128 * r_lo as u128) >> 64) as u64);
        let r = 0u64.wrapping_sub(c.wrapping_mul(q));
        if r >= q {
            c + 1
        } else {
            c
        }
    }

    #[test]
    fn companions_from_the_barrett_ratio_are_the_shoup_words() {
        for (bits, degree) in [
            (61u32, 1usize << 17),
            (60, 1 << 16),
            (40, 1 << 16),
            (30, 1 << 12),
        ] {
            for q in bench_primes(bits, degree, 3).unwrap() {
                let (r_hi, r_lo) = q.barrett_ratio();
                let t = NttTable::new(q, degree).unwrap();
                let mut ws: Vec<u64> = vec![0, 1, 2, q.value() - 1, q.value() - 2, q.value() / 2];
                ws.extend(t.inv_root_powers().iter().step_by(997).copied());
                ws.extend(t.root_powers().iter().step_by(991).copied());
                for w in ws {
                    assert_eq!(
                        tw_companion(w, q.value(), r_hi, r_lo),
                        q.shoup(w),
                        "q = {}, w = {w}",
                        q.value()
                    );
                }
            }
        }
    }

    #[test]
    fn compact_table_gathers_the_last_three_stages() {
        let q = bench_primes(60, 1 << 12, 1).unwrap()[0];
        let t = NttTable::new(q, 1 << 12).unwrap();
        let (w, ws) = (t.root_powers(), t.root_powers_shoup());
        let mut out = Vec::new();
        compact_last_stages(w, Some(ws), &mut out);
        let mut alone = Vec::new();
        compact_last_stages(w, None, &mut alone);
        let n = 1 << 12;
        assert_eq!(out.len(), 6 * n / 8);
        assert_eq!(alone.len(), 3 * n / 8);
        for g in [0, 1, 7, n / 8 - 1] {
            let e = &out[6 * g..6 * g + 6];
            assert_eq!((e[0], e[1]), (w[n / 8 + g], ws[n / 8 + g]));
            assert_eq!((e[2], e[3]), (w[n / 4 + 2 * g], ws[n / 4 + 2 * g]));
            assert_eq!((e[4], e[5]), (w[n / 2 + 4 * g], ws[n / 2 + 4 * g]));
            assert_eq!(alone[3 * g..3 * g + 3], [e[0], e[2], e[4]]);
        }
        // The derivation the kernels rely on: table[b + k] = table[b] · table[k] for 4 | b.
        for b in [n / 2 + 4 * 5, n / 4 + 4 * 6, n / 8 + 4 * 7] {
            for k in 1..4 {
                assert_eq!(w[b + k], q.mul(w[b], w[k]), "b = {b}, k = {k}");
            }
        }
        let mut tiny = Vec::new();
        compact_last_stages(&w[..4], Some(&ws[..4]), &mut tiny);
        assert!(tiny.is_empty());
    }

    #[test]
    fn derived_splits_read_fewer_twiddles() {
        let one = default_split(16, 1).unwrap();
        let many = default_split(16, 64).unwrap();
        let (fwd, inv) = (NttDirection::Forward, NttDirection::Inverse);
        let whole = 3 * (1 << 16) * 16;
        assert_eq!(many.twiddle_bytes_read(1 << 16, 3, fwd), whole);
        assert_eq!(many.twiddle_bytes_read(1 << 16, 3, inv), whole);
        assert_eq!(2 * one.twiddle_bytes_read(1 << 16, 3, fwd), whole);
        assert_eq!(16 * one.twiddle_bytes_read(1 << 16, 3, inv), 5 * whole);
    }

    #[test]
    fn default_split_derives_for_few_polynomials() {
        for log_n in MIN_FAST_LOG_DEGREE..=MAX_FAST_LOG_DEGREE {
            let one = default_split(log_n, 1).unwrap();
            let many = default_split(log_n, 64).unwrap();
            assert!(one.derived_twiddles && !many.derived_twiddles);
            assert_eq!(one.with_derived_twiddles(false), many);
            assert!(splits(log_n).contains(&one) && splits(log_n).contains(&many));
        }
        assert_eq!(default_split(11, 1), None);
    }

    /// The host twin of the prologue's `lift_lazy` (ntt.cuh), with `s1` the moduli table's
    /// `ratio_hi`.
    fn lift_lazy(t: u64, q_last: u64, m: &Modulus) -> u64 {
        let (q, s1) = (m.value(), m.barrett_ratio().0);
        let r = m.mul_shoup_lazy(q_last, 1, s1);
        let neg = q - if r >= q { r - q } else { r };
        m.mul_shoup_lazy(t, 1, s1) + if t > q_last >> 1 { neg } else { 0 }
    }

    #[test]
    fn lazy_lift_is_the_centred_lift_below_three_q() {
        // ratio_hi is the Shoup companion of 1.
        for bits in [20, 30, 40, 50, 60, 61] {
            for m in bench_primes(bits, 1 << 12, 3).unwrap() {
                assert_eq!(m.barrett_ratio().0, m.shoup(1), "q = {}", m.value());
            }
        }
        let mut seed = 0x11F7u64;
        for (qb, lb) in [
            (30, 61),
            (61, 30),
            (50, 50),
            (60, 61),
            (61, 60),
            (40, 20),
            (20, 61),
        ] {
            let q = bench_primes(qb, 1 << 12, 1).unwrap()[0];
            let ql = bench_primes(lb, 1 << 12, 2).unwrap()[1].value();
            let half = ql / 2;
            let edges = [0, 1, half - 1, half, half + 1, ql - 2, ql - 1];
            let randoms = (0..20_000).map(|_| splitmix(&mut seed) % ql);
            for t in edges.into_iter().chain(randoms) {
                let want = if t <= half {
                    q.reduce(t)
                } else {
                    q.reduce_i128(t as i128 - ql as i128)
                };
                let got = lift_lazy(t, ql, &q);
                assert!(
                    got < 3 * q.value(),
                    "t = {t}, q = {}, q_last = {ql}",
                    q.value()
                );
                assert_eq!(
                    got % q.value(),
                    want,
                    "t = {t}, q = {}, q_last = {ql}",
                    q.value()
                );
            }
        }
    }

    #[test]
    fn median_of_samples() {
        assert_eq!(median_min(vec![3.0, 1.0, 2.0]), (2.0, 1.0));
        assert_eq!(median_min(vec![4.0, 1.0, 2.0, 3.0]), (2.5, 1.0));
    }
}
