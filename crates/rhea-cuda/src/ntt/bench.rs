//! The NTT benchmark ([`bench_ntt`]) against the device-to-device copy bandwidth.

use super::*;

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
pub(super) enum ArithWords {
    /// 64-bit words, Harvey butterflies with Shoup products (`ntt_bf_*`): the NTT kernels'.
    U64,
    /// 32-bit words (`ntt_bf32_*`), two ~30-bit primes per 60-bit limb (Cheddar's word size).
    U32,
    /// Doubles (`ntt_bff64_*`, `fp64.cuh`): a prime below 2^46 per limb.
    F64,
}

/// The ~30-bit prime of the 32-bit butterfly-throughput kernel (`7 · 2^26 + 1`).
pub(super) const ARITH32_PRIME: u32 = 469_762_049;

/// Radix-8 passes per thread of the butterfly-throughput kernel, per `log2 N` (12 butterflies
/// each: three times the 4 · log2 N butterflies an NTT thread does).
const ARITH_PASSES_PER_LOG_N: u32 = 1;

/// Median and minimum of a list of samples.
pub(super) fn median_min(mut v: Vec<f64>) -> (f64, f64) {
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
pub(super) fn splitmix(state: &mut u64) -> u64 {
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
