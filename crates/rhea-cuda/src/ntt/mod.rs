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
//! `NttSplit::twiddle_bytes_read`, bench-history §17.) When these timings were taken both kernels
//! were bound by the 64-bit integer multiplier, not by memory: Nsight Compute showed IPC ≈ 2.3
//! with "math pipe throttle" the first stall reason, and DRAM at 20–55 %. (Those timings predate
//! the following SASS reductions; today the transform reads 82–86 % of the copy bandwidth and
//! is neither issue- nor multiply-bound alone, bench-history §17.) A lazy butterfly costs 22
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

mod args;
mod bench;
mod launch;
mod policy;
mod tables;
mod transform;
pub use args::MAX_RUNS;
use args::{galois_inverse, NttArgs, Phase};
pub use bench::{
    bench_ntt, bench_primes, copy_bandwidth_gbps, NttBenchCase, NttBenchOptions, NttBenchReport,
    NttBenchRow,
};
use bench::{ArithWords, ARITH32_PRIME};
use policy::stage_twiddles;
pub use policy::{default_split, splits, NttSplit, DERIVED_TWIDDLES_MAX_POLYS};
pub use tables::{compact_last_stages, prime_words};
use tables::{RowFlags, FLAG_ROWS};

#[cfg(test)]
mod tests;

/// `kernels/ntt.cuh`: butterflies, passes and the two kernel bodies of the fast NTT.
pub const NTT_CUH: Header = Header {
    name: "ntt.cuh",
    source: include_str!("../../kernels/ntt.cuh"),
};
// (ntt.cuh includes fp64.cuh: every source listing NTT_CUH lists FP64_CUH too.)

/// `kernels/ntt.cu`: the fast (two-kernel) and naive (one launch per stage) NTT kernels, every
/// degree in one module (compile checks; the device loads [`ntt_source`]'s per-degree ones).
pub const NTT: KernelSource = KernelSource {
    name: "ntt",
    source: include_str!("../../kernels/ntt.cu"),
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
                include_str!("../../kernels/ntt.cu")
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
    /// The FP64 twiddles and their compact table ([`fp64_twiddles`](tables::fp64_twiddles)), when
    /// a prime takes FP64.
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
