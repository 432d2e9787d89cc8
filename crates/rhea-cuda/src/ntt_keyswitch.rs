//! The forward row phase of a ModUp fused with the key-switching inner product
//! (`kernels/ntt_keyswitch.cu`).
//!
//! A key switching of one polynomial `x` (NTT form over `Q_ℓ`) runs: the inverse NTT of `x`; per
//! digit, the conversion of its own limbs to the other limbs of `Q_ℓ ∪ P`; the forward NTT of
//! those converted limbs; the inner product with the key; ModDown. The forward NTT is two
//! kernels, a column phase and a row phase. [`DeviceNttTables::forward_rows_keyswitch`] runs the
//! row phase of every converted limb of every digit *and* the inner product in one kernel: each
//! block transforms its slice of one output limb for every digit, keeps the values in shared
//! memory, and sums them against the key. The digits' NTT-form limbs are never written to device
//! memory nor read back, and the digits' own limbs are read from `x` itself (no copy), so the
//! 71 limbs that a deep ModUp writes, and the 96 that the inner product reads back, no longer
//! move; the key's reads overlap the transforms.
//!
//! The result is bit-identical to [`DeviceNttTables::transform_runs`] (forward) over the same
//! runs, the own limbs copied from `x`, then [`crate::fused::ks_inner_product_pair`]: the same
//! row-phase arithmetic produces the same canonical words, and each output word is the exact sum
//! of the products reduced once. `crates/rhea-cuda/tests/ntt_keyswitch.rs` checks it against
//! that composition and against the CPU.

use std::ops::Range;

use cudarc::driver::{DeviceRepr, LaunchConfig};

use crate::buffer::DeviceBuffer;
use crate::elementwise::DeviceModuli;
use crate::error::{CudaError, Result};
use crate::fp64::FP64_CUH;
use crate::launch::{launch_dependent, param};
use crate::ntt::{DeviceNttTables, NTT_CUH};
use crate::registry::{KernelSource, COMMON_CUH};

/// `kernels/ntt_keyswitch.cu`: the fused ModUp row phase and inner product, every degree in one
/// module (compile checks; the device loads [`ntt_keyswitch_source`]'s per-degree ones).
pub const NTT_KEYSWITCH: KernelSource = KernelSource {
    name: "ntt_keyswitch",
    source: include_str!("../kernels/ntt_keyswitch.cu"),
    headers: &[COMMON_CUH, NTT_CUH, FP64_CUH],
};

/// The module of one degree: `kernels/ntt_keyswitch.cu` with `NTT_ONLY_LOG_N` defined.
macro_rules! ntt_keyswitch_degree_source {
    ($log_n:literal) => {
        KernelSource {
            name: concat!("ntt_keyswitch_", $log_n),
            source: concat!(
                "#define NTT_ONLY_LOG_N ",
                $log_n,
                "\n",
                include_str!("../kernels/ntt_keyswitch.cu")
            ),
            headers: &[COMMON_CUH, NTT_CUH, FP64_CUH],
        }
    };
}

/// The per-degree modules (`ntt_keyswitch_12` … `ntt_keyswitch_17`, one kernel each).
pub const NTT_KEYSWITCH_BY_DEGREE: [KernelSource; 6] = [
    ntt_keyswitch_degree_source!(12),
    ntt_keyswitch_degree_source!(13),
    ntt_keyswitch_degree_source!(14),
    ntt_keyswitch_degree_source!(15),
    ntt_keyswitch_degree_source!(16),
    ntt_keyswitch_degree_source!(17),
];

/// The module [`DeviceNttTables::forward_rows_keyswitch`] loads for `N = 2^log_degree` (a fast
/// degree; the smallest's below the range, the largest's above).
pub fn ntt_keyswitch_source(log_degree: u32) -> &'static KernelSource {
    let i = log_degree.clamp(
        crate::ntt::MIN_FAST_LOG_DEGREE,
        crate::ntt::MAX_FAST_LOG_DEGREE,
    ) - crate::ntt::MIN_FAST_LOG_DEGREE;
    &NTT_KEYSWITCH_BY_DEGREE[i as usize]
}

/// The most digits one fused launch takes (`NKS_MAX_DIGITS`): each digit's transformed slice
/// stays in shared memory (8 KiB per digit per block, the last one in the exchange buffer).
pub const MAX_DIGITS: usize = 4;

/// Entries of one output limb per block (`RowsShape`: 128 threads × 8 entries).
const ENTRIES_PER_BLOCK: usize = 1024;

/// Launch arguments (`struct NttKsArgs` in `ntt_keyswitch.cu`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct NttKsArgs {
    out: u64,
    input: u64,
    moduli: u64,
    width: u32,
    level: u32,
    q_full: u32,
    count: u32,
    own_start: [u32; MAX_DIGITS],
    own_end: [u32; MAX_DIGITS],
    conv: [u64; MAX_DIGITS],
    key_b: [u64; MAX_DIGITS],
    key_a: [u64; MAX_DIGITS],
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for NttKsArgs {}

// The layout of `struct NttKsArgs` in `kernels/ntt_keyswitch.cu`, which asserts the same numbers
// (`static_assert`): a field added, moved or resized on one side only fails the build.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<NttKsArgs>() == 168);
    assert!(align_of::<NttKsArgs>() == 8);
    assert!(offset_of!(NttKsArgs, out) == 0);
    assert!(offset_of!(NttKsArgs, input) == 8);
    assert!(offset_of!(NttKsArgs, moduli) == 16);
    assert!(offset_of!(NttKsArgs, width) == 24);
    assert!(offset_of!(NttKsArgs, level) == 28);
    assert!(offset_of!(NttKsArgs, q_full) == 32);
    assert!(offset_of!(NttKsArgs, count) == 36);
    assert!(offset_of!(NttKsArgs, own_start) == 40);
    assert!(offset_of!(NttKsArgs, own_end) == 56);
    assert!(offset_of!(NttKsArgs, conv) == 72);
    assert!(offset_of!(NttKsArgs, key_b) == 104);
    assert!(offset_of!(NttKsArgs, key_a) == 136);
};

/// One digit of [`DeviceNttTables::forward_rows_keyswitch`].
#[derive(Clone, Debug)]
pub struct KsDigit<'a> {
    /// `[ℓ + K][N]`: on every limb outside `own`, the conversion of the digit after the forward
    /// column phase ([`DeviceNttTables::forward_columns_runs`], tables by limb as a ModUp's
    /// runs: Q limb `i` table `i`, P limb `j` table `L + j`). The `own` limbs are not read.
    /// Consumed: the kernel drops the limbs it reads from L2 without writing them back, so
    /// their words are undefined after the call.
    pub converted: &'a DeviceBuffer,
    /// The digit's own Q limbs (read from the input instead), within `0..ℓ`.
    pub own: Range<usize>,
    /// The key part's first component `b_d`, `[L + K][N]` (full level).
    pub key_b: &'a DeviceBuffer,
    /// Its second component `a_d`, `[L + K][N]`.
    pub key_a: &'a DeviceBuffer,
}

impl DeviceNttTables {
    /// The row phase of the forward transform of every converted limb of every digit, fused
    /// with the key-switching inner product: `out[c][i] = Σ_d x_d[i] · key_{d,c}[kl(i)] mod p_i`
    /// for `c = 0, 1` and every limb `i` of `Q_ℓ ∪ P` (`out` is `[2][ℓ + K][N]`), where `x_d[i]`
    /// is `input[i]` on digit `d`'s own limbs and the finished transform of `converted[i]`
    /// elsewhere, and `kl(i)` is `i` for the Q limbs and `L + (i − ℓ)` for the P limbs (also the
    /// NTT table of limb `i`: these tables must be the full `Q ∪ P` list, `L = q_full`).
    /// `moduli` is the full `Q ∪ P` moduli table. Every input word must be canonical. The
    /// digits' converted limbs are consumed (see [`KsDigit::converted`]).
    ///
    /// Errors: [`CudaError::InvalidArgument`] for no digits or more than [`MAX_DIGITS`], a level
    /// outside `1..=q_full`, moduli that are not these tables' primes, or a degree without the
    /// fast kernels; [`CudaError::Shape`] for an own range outside `0..ℓ` or a buffer too short
    /// for its layout, an output that overlaps an operand, or a converted digit that overlaps
    /// the input, a key or another digit; [`CudaError::DeviceMismatch`];
    /// device and NVRTC errors.
    pub fn forward_rows_keyswitch(
        &self,
        input: &DeviceBuffer,
        level: usize,
        q_full: usize,
        moduli: &DeviceModuli,
        digits: &[KsDigit<'_>],
        out: &mut DeviceBuffer,
    ) -> Result<()> {
        let split = self.grouped_split_of()?;
        let n = self.degree();
        let full = self.len();
        if digits.is_empty() || digits.len() > MAX_DIGITS {
            return Err(CudaError::InvalidArgument(format!(
                "the fused ModUp row phase takes 1 to {MAX_DIGITS} digits, not {}",
                digits.len()
            )));
        }
        if level == 0 || level > q_full || q_full >= full {
            return Err(CudaError::InvalidArgument(format!(
                "level {level} with |Q| = {q_full} and {full} NTT tables"
            )));
        }
        let same = moduli.len() == full
            && moduli
                .moduli()
                .iter()
                .zip(self.moduli())
                .all(|(a, b)| a.value() == b.value());
        if !same {
            return Err(CudaError::InvalidArgument(
                "the moduli table is not the NTT tables' Q ∪ P list".into(),
            ));
        }
        let width = level + full - q_full;
        let need = |what: &str, b: &DeviceBuffer, words: usize| -> Result<()> {
            self.check_same_device(b)?;
            if b.len() < words {
                return Err(CudaError::Shape(format!(
                    "{what}: {} words, at least {words} needed",
                    b.len()
                )));
            }
            Ok(())
        };
        need("ModUp input", input, level * n)?;
        need("inner-product output", out, 2 * width * n)?;
        self.check_same_device(moduli.buffer())?;
        let mut args = NttKsArgs {
            out: out.device_ptr(),
            input: input.device_ptr(),
            moduli: moduli.device_ptr(),
            width: width as u32,
            level: level as u32,
            q_full: q_full as u32,
            count: digits.len() as u32,
            ..NttKsArgs::default()
        };
        let overlaps = |b: &DeviceBuffer| out.overlaps(b);
        if overlaps(input) {
            return Err(CudaError::Shape(
                "the output overlaps the ModUp input".into(),
            ));
        }
        for (d, g) in digits.iter().enumerate() {
            if g.own.start > g.own.end || g.own.end > level {
                return Err(CudaError::Shape(format!(
                    "digit {d}: own limbs {:?} outside 0..{level}",
                    g.own
                )));
            }
            need("converted digit", g.converted, width * n)?;
            need("key part b", g.key_b, full * n)?;
            need("key part a", g.key_a, full * n)?;
            if overlaps(g.converted) || overlaps(g.key_b) || overlaps(g.key_a) {
                return Err(CudaError::Shape(format!(
                    "the output overlaps an operand of digit {d}"
                )));
            }
            // The converted limbs are dropped from L2 as they are read: they may share memory
            // with nothing else the kernel reads.
            let clash = |b: &DeviceBuffer| g.converted.overlaps(b);
            let shared = clash(input)
                || digits.iter().enumerate().any(|(e, h)| {
                    clash(h.key_b) || clash(h.key_a) || (e != d && clash(h.converted))
                });
            if shared {
                return Err(CudaError::Shape(format!(
                    "converted digit {d} overlaps the input, a key or another digit"
                )));
            }
            args.own_start[d] = g.own.start as u32;
            args.own_end[d] = g.own.end as u32;
            args.conv[d] = g.converted.device_ptr();
            args.key_b[d] = g.key_b.device_ptr();
            args.key_a[d] = g.key_a.device_ptr();
        }
        let log_n = self.log_degree();
        let dev = self.device();
        let f = dev.function(
            ntt_keyswitch_source(log_n),
            &format!("ntt_fwd_rowsks_{log_n}_{}", split.log_n1),
        )?;
        let blocks = width * n / ENTRIES_PER_BLOCK;
        let cfg = LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: ((digits.len() - 1) * ENTRIES_PER_BLOCK * 8) as u32,
        };
        let (tw, tw3, primes) = self.forward_table_ptrs();
        let mut params = [param(&tw), param(&tw3), param(&primes), param(&args)];
        // SAFETY: the parameters are NKS_ARGS in order (the forward twiddles, the compact
        // forward twiddles, the prime constants, the NttKsArgs struct by value, #[repr(C)] like
        // its CUDA twin), each living across the call. Checked above: every buffer is on this
        // device and long enough for its layout (the input [ℓ][N], each converted digit
        // [ℓ + K][N], each key component [L + K][N], the output [2][ℓ + K][N]), the tables and
        // the moduli cover Q ∪ P, the output overlaps no operand; the grid covers exactly the
        // output's ℓ + K limbs (N is a multiple of 1024 for the fast degrees), the dynamic
        // shared memory is the kernel's [count - 1][1024] words; the kernel reads only the tables
        // before pdl_wait.
        unsafe { launch_dependent(dev, &f, cfg, &mut params) }
    }
}
