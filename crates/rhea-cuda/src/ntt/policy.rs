//! Which transform runs for a shape: the compiled splits and their defaults, twiddle staging, the
//! paired row kernel and the FP64 rows.

use super::*;

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
    pub(super) const fn new(log_n1: u32, cols_per_block: u32, derived_twiddles: bool) -> Self {
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

/// Launch rows up to which the kernels stage their twiddles in shared memory. Measured on the
/// H100 (bench-history §23): staging pays in launches of a few waves (2^16 × 32 limbs: forward
/// 33.4 → 32.0 µs, inverse 31.4 → 30.3 µs) and costs in long ones (1024 × 8 limbs at 2^15,
/// 8192 rows: forward +15 %).
pub(super) const TW_STAGED_ROWS: usize = FLAG_ROWS;

/// `args` with [`NttArgs::tw_staged`] set from its row count.
pub(super) fn stage_twiddles(mut args: NttArgs) -> NttArgs {
    args.tw_staged = u32::from(args.rows as usize <= TW_STAGED_ROWS);
    args
}

impl DeviceNttTables {
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
    pub(super) fn fp64_applies(
        &self,
        q_last: Option<u64>,
        mut tables: impl Iterator<Item = usize>,
    ) -> bool {
        self.forward_f64.is_some()
            && self.fp64_rows()
            && q_last.map_or(true, f64_prime_ok)
            && tables.any(|t| self.moduli.get(t).is_some_and(|m| f64_prime_ok(m.value())))
    }

    /// The split of the grouped launches (the default shape, derived twiddles), if the fast
    /// kernels serve this degree.
    pub(crate) fn grouped_split_of(&self) -> Result<NttSplit> {
        self.grouped_split()
    }

    /// Whether the fast kernels serve this degree (`N = 2^12 … 2^17`), which
    /// [`DeviceNttTables::forward_runs_epilogue`] needs.
    pub fn has_fast_kernels(&self) -> bool {
        default_split(self.log_degree, 2).is_some()
    }

    /// The split of the epilogue launches (the default shape with derived twiddles).
    pub(super) fn grouped_split(&self) -> Result<NttSplit> {
        let s = default_split(self.log_degree, 2).ok_or_else(|| {
            CudaError::InvalidArgument(format!(
                "grouped NTT needs the fast kernels (N = 2^{})",
                self.log_degree
            ))
        })?;
        Ok(s.with_derived_twiddles(true))
    }

    /// The kernel and arguments of a phase: a derived-twiddle row phase (blocks of an even
    /// number of chunks) whose rows pair up ([`NttArgs::pairing`]) takes the paired kernel
    /// (`…_p`, `pair_half` set); anything else runs as named.
    pub(super) fn paired(
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
    pub(super) fn phase_config(
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
}
