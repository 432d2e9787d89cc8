//! The device twiddle tables: their host-side layout, upload and accessors.

use super::*;

/// The FP64 twiddle tables of `tables` (`tw_f64` and `tw3_f64` in `ntt.cuh`): `[table][N]`
/// pairs of doubles' bits, `(w, fl(w / q))` for the twiddles `w` of direction `dir`
/// (`root_powers` or `inv_root_powers`) of a prime below
/// 2^[`F64_MAX_Q_BITS`](crate::fp64::F64_MAX_Q_BITS), the unused entry 0 holding
/// `(q, fl(1 / q))`, all zeros for a larger prime; and their compact table of the last three
/// stages ([`compact_last_stages`] of those pairs). `None` when no prime takes FP64.
pub(super) fn fp64_twiddles(
    tables: &[NttTable],
    dir: NttDirection,
) -> Option<(Vec<u64>, Vec<u64>)> {
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

/// Launch rows the row flags cover (`NTT_FLAG_ROWS` in `ntt.cuh`); larger launches wait for the
/// whole first phase instead.
pub(super) const FLAG_ROWS: usize = 4096;

/// The row flags of a [`DeviceNttTables`]: per launch row a count of the first phase's blocks
/// done and the epoch stamp of its last finished transform (`u32 [2][FLAG_ROWS]`, 32 KiB,
/// zeroed with the tables), and the last epoch issued. With them the second kernel of a two-kernel transform
/// starts on a row as soon as the first kernel has finished that row, instead of waiting for
/// the whole first grid (see `ntt_dep_wait` in `ntt.cuh`): with the forward column kernels at 8
/// blocks per SM, the forward transform of 2^16 × 32 limbs 34.4 → 32.7–33.0 µs on the H100
/// (bench-history §21).
pub(super) struct RowFlags {
    pub(super) words: DeviceBuffer,
    pub(super) epoch: std::sync::atomic::AtomicU32,
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

    /// Device addresses of the forward twiddles, the compact forward twiddles and the prime
    /// constants (for the fused kernels that run a forward row phase).
    pub(crate) fn forward_table_ptrs(&self) -> (u64, u64, u64) {
        (
            self.forward.device_ptr(),
            self.forward3.device_ptr(),
            self.primes.device_ptr(),
        )
    }

    /// Checks that `b` lives on this tables' device.
    pub(crate) fn check_same_device(&self, b: &DeviceBuffer) -> Result<()> {
        self.check_device(b)
    }

    pub(super) fn check_device(&self, b: &DeviceBuffer) -> Result<()> {
        if Arc::ptr_eq(b.device(), &self.device) {
            Ok(())
        } else {
            Err(CudaError::DeviceMismatch(
                b.device().index(),
                self.device.index(),
            ))
        }
    }
}
