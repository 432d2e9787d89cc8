//! Bandwidth benchmarks with structured results, for the `gpu_bench` example (moved out of the
//! library: no benchmark harness ships in `rhea-cuda`).
//!
//! Each row is timed with CUDA events around `inner` back-to-back launches, after a warm-up
//! (which also compiles and loads the kernels); the row reports the median and minimum over
//! `samples` such batches. Operands rotate between two independent sets so that consecutive
//! launches do not hit in L2. The roofline is a device-to-device `cuMemcpyDtoD` of a large
//! buffer, counting bytes read plus bytes written; each kernel row reports its achieved bandwidth
//! (minimum bytes read + written / median time) and the fraction of that roofline.
//!
//! Adding a suite (e.g. the NTT): write `fn my_suite(dev: &Arc<GpuDevice>, cfg: &BenchConfig)
//! -> Result<Vec<BenchRow>>` in your module using [`time_op`] and [`BenchRow::new`], and add it to
//! [`SUITES`]. [`run_all`] runs every suite and fills in the roofline fractions.

use std::sync::Arc;

use cudarc::driver::sys::CUevent_flags;
use rhea_math::Modulus;
use serde::Serialize;

use rhea_cuda::buffer::DeviceBuffer;
use rhea_cuda::device::GpuDevice;
use rhea_cuda::elementwise::{self as ew, RnsLayout};
use rhea_cuda::error::{CudaError, Result};

/// What to measure and how long.
#[derive(Clone, Debug, Serialize)]
pub struct BenchConfig {
    /// Ring degree N.
    pub degree: usize,
    /// Limbs per polynomial.
    pub limbs: usize,
    /// Polynomials per operand (2 = a ciphertext).
    pub polys: usize,
    /// Bit size of the (NTT-friendly) primes.
    pub prime_bits: u32,
    /// Untimed batches first.
    pub warmup: usize,
    /// Timed batches (the median is reported).
    pub samples: usize,
    /// Launches per timed batch.
    pub inner: usize,
    /// Bytes of the buffer copied for the roofline.
    pub copy_bytes: usize,
}

impl Default for BenchConfig {
    /// A 2^16 × 30-limb ciphertext (2 polynomials) of 61-bit primes.
    fn default() -> Self {
        Self {
            degree: 1 << 16,
            limbs: 30,
            polys: 2,
            prime_bits: 61,
            warmup: 3,
            samples: 21,
            inner: 10,
            copy_bytes: 1 << 30,
        }
    }
}

/// Timing of one operation (microseconds per launch).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Timing {
    /// Median over the samples.
    pub median_us: f64,
    /// Minimum over the samples.
    pub min_us: f64,
}

/// One measured operation.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    /// Suite name (`copy`, `elementwise`, `ntt`, ...).
    pub suite: String,
    /// Operation name.
    pub name: String,
    /// Shape, e.g. `N=65536 L=30 P=2`.
    pub shape: String,
    /// Minimum bytes read + written by one launch.
    pub bytes: u64,
    /// Median time per launch, µs.
    pub median_us: f64,
    /// Minimum time per launch, µs.
    pub min_us: f64,
    /// Achieved bandwidth at the median time, GB/s (10^9 bytes).
    pub gb_per_s: f64,
    /// `gb_per_s` over the device-to-device copy roofline (filled in by [`run_all`]).
    pub fraction_of_copy: f64,
}

impl BenchRow {
    /// A row from a timing and the bytes one launch must move.
    pub fn new(suite: &str, name: &str, shape: &str, bytes: u64, t: Timing) -> Self {
        Self {
            suite: suite.into(),
            name: name.into(),
            shape: shape.into(),
            bytes,
            median_us: t.median_us,
            min_us: t.min_us,
            gb_per_s: bytes as f64 / (t.median_us * 1e3),
            fraction_of_copy: 0.0,
        }
    }
}

/// Everything one run measured.
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    /// Device name.
    pub device: String,
    /// Compute capability.
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
    /// The configuration used.
    pub config: BenchConfig,
    /// The device-to-device copy roofline, GB/s (read + written).
    pub copy_gb_per_s: f64,
    /// All rows, roofline first.
    pub rows: Vec<BenchRow>,
}

impl BenchReport {
    /// The report as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// A plain-text table, one line per row.
    pub fn table(&self) -> String {
        let mut s = format!(
            "device: {} (sm_{}{}, {} SMs); copy roofline {:.0} GB/s\n",
            self.device,
            self.compute_capability.0,
            self.compute_capability.1,
            self.multiprocessors,
            self.copy_gb_per_s
        );
        s += &format!(
            "{:<12} {:<20} {:<22} {:>10} {:>10} {:>9} {:>7}\n",
            "suite", "op", "shape", "median µs", "min µs", "GB/s", "%copy"
        );
        for r in &self.rows {
            s += &format!(
                "{:<12} {:<20} {:<22} {:>10.2} {:>10.2} {:>9.0} {:>6.1}%\n",
                r.suite,
                r.name,
                r.shape,
                r.median_us,
                r.min_us,
                r.gb_per_s,
                100.0 * r.fraction_of_copy
            );
        }
        s
    }
}

/// Times `op` (call `k` queues one operation; alternate operands with `k`): `warmup` untimed
/// batches, then `samples` batches of `inner` calls between two CUDA events; per-call times.
pub fn time_op(
    dev: &Arc<GpuDevice>,
    cfg: &BenchConfig,
    mut op: impl FnMut(usize) -> Result<()>,
) -> Result<Timing> {
    let ctx = dev.context();
    let stream = dev.stream();
    let mut k = 0usize;
    for _ in 0..cfg.warmup {
        for _ in 0..cfg.inner {
            op(k)?;
            k += 1;
        }
    }
    dev.synchronize()?;
    let mut times = Vec::with_capacity(cfg.samples);
    for _ in 0..cfg.samples.max(1) {
        let start = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        let stop = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        start.record(stream)?;
        for _ in 0..cfg.inner.max(1) {
            op(k)?;
            k += 1;
        }
        stop.record(stream)?;
        stop.synchronize()?;
        let ms = start.elapsed_ms(&stop)? as f64;
        times.push(ms * 1e3 / cfg.inner.max(1) as f64);
    }
    times.sort_by(|a, b| a.total_cmp(b));
    Ok(Timing {
        median_us: times[times.len() / 2],
        min_us: times[0],
    })
}

/// Deterministic pseudo-random words below `q` (SplitMix64; never all zeros).
fn fill(q: u64, count: usize, seed: u64) -> Vec<u64> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x1234_5678;
    (0..count)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % q
        })
        .collect()
}

/// `count` NTT-friendly primes `q ≡ 1 (mod 2N)` of `bits` bits, from `2^bits` downwards.
pub fn ntt_primes(bits: u32, count: usize, degree: usize) -> Result<Vec<Modulus>> {
    if !(4..=61).contains(&bits) {
        return Err(CudaError::InvalidArgument(format!("{bits}-bit primes")));
    }
    let step = 2 * degree.max(1) as u64;
    let mut q = ((1u64 << bits) / step) * step + 1;
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        if q <= step {
            return Err(CudaError::InvalidArgument(format!(
                "not enough {bits}-bit primes ≡ 1 mod {step}"
            )));
        }
        q -= step;
        if rhea_math::prime::is_prime(q) {
            out.push(Modulus::new(q)?);
        }
    }
    Ok(out)
}

/// The roofline: device-to-device copies of `cfg.copy_bytes` (bytes read + written).
pub fn copy_suite(dev: &Arc<GpuDevice>, cfg: &BenchConfig) -> Result<Vec<BenchRow>> {
    let words = (cfg.copy_bytes / 8).max(1);
    let src = dev.upload(&fill(u64::MAX, words, 1))?;
    let mut dst = dev.alloc(words)?;
    let t = time_op(dev, cfg, |_| src.copy_into(&mut dst))?;
    let shape = format!("{} MiB", cfg.copy_bytes >> 20);
    let mut rows = vec![BenchRow::new(
        "copy",
        "memcpy_dtod",
        &shape,
        2 * (words as u64) * 8,
        t,
    )];
    // The same copy at the ciphertext's size, for comparison with the kernels.
    let layout = RnsLayout::new(cfg.degree, cfg.limbs, cfg.polys);
    let ct = layout.words();
    if ct < words {
        let srcs = [
            dev.upload(&fill(u64::MAX, ct, 2))?,
            dev.upload(&fill(u64::MAX, ct, 3))?,
        ];
        let mut dsts = [dev.alloc(ct)?, dev.alloc(ct)?];
        let t = time_op(dev, cfg, |k| srcs[k % 2].copy_into(&mut dsts[k % 2]))?;
        rows.push(BenchRow::new(
            "copy",
            "memcpy_dtod",
            &shape_of(&layout),
            2 * ct as u64 * 8,
            t,
        ));
    }
    drop((src, dst));
    dev.trim();
    Ok(rows)
}

fn shape_of(l: &RnsLayout) -> String {
    format!("N={} L={} P={}", l.degree, l.limbs, l.polys)
}

/// Every element-wise kernel on a `degree × limbs × polys` operand.
pub fn elementwise_suite(dev: &Arc<GpuDevice>, cfg: &BenchConfig) -> Result<Vec<BenchRow>> {
    let moduli = ntt_primes(cfg.prime_bits, cfg.limbs, cfg.degree)?;
    let table = dev.moduli(&moduli)?;
    let layout = RnsLayout::new(cfg.degree, cfg.limbs, cfg.polys);
    let words = layout.words();
    let data = |seed: u64| -> Result<DeviceBuffer> {
        let mut v = Vec::with_capacity(words);
        for p in 0..cfg.polys {
            for (j, m) in moduli.iter().enumerate() {
                v.extend(fill(
                    m.value(),
                    cfg.degree,
                    seed * 1000 + (p * cfg.limbs + j) as u64,
                ));
            }
        }
        dev.upload(&v)
    };
    // Two independent operand sets, alternated between launches.
    let a = [data(1)?, data(2)?];
    let b = [data(3)?, data(4)?];
    let c = [data(5)?, data(6)?];
    let mut out = [dev.alloc(words)?, dev.alloc(words)?];
    let scal: Vec<u64> = moduli.iter().map(|m| m.value() / 3).collect();
    let bytes = |streams: u64| streams * words as u64 * 8;
    let shape = shape_of(&layout);
    let (l, t) = (&layout, &*table);
    let mut rows = Vec::new();
    let mut row = |name: &str, streams: u64, timing: Timing| {
        rows.push(BenchRow::new(
            "elementwise",
            name,
            &shape,
            bytes(streams),
            timing,
        ));
    };
    row(
        "add",
        3,
        time_op(dev, cfg, |k| {
            ew::add(&mut out[k % 2], &a[k % 2], &b[k % 2], l, t)
        })?,
    );
    row(
        "sub",
        3,
        time_op(dev, cfg, |k| {
            ew::sub(&mut out[k % 2], &a[k % 2], &b[k % 2], l, t)
        })?,
    );
    row(
        "neg",
        2,
        time_op(dev, cfg, |k| ew::neg(&mut out[k % 2], &a[k % 2], l, t))?,
    );
    row(
        "mul",
        3,
        time_op(dev, cfg, |k| {
            ew::mul(&mut out[k % 2], &a[k % 2], &b[k % 2], l, t)
        })?,
    );
    row(
        "mul_add",
        4,
        time_op(dev, cfg, |k| {
            ew::mul_add(&mut out[k % 2], &a[k % 2], &b[k % 2], &c[k % 2], l, t)
        })?,
    );
    row(
        "mul_add_assign",
        4,
        time_op(dev, cfg, |k| {
            ew::mul_add_assign(&mut out[k % 2], &a[k % 2], &b[k % 2], l, t)
        })?,
    );
    row(
        "mul_scalar",
        2,
        time_op(dev, cfg, |k| {
            ew::mul_scalar(&mut out[k % 2], &a[k % 2], &scal, l, t)
        })?,
    );
    row(
        "add_scalar",
        2,
        time_op(dev, cfg, |k| {
            ew::add_scalar(&mut out[k % 2], &a[k % 2], &scal, l, t)
        })?,
    );
    row(
        "mul_scalar_add",
        3,
        time_op(dev, cfg, |k| {
            ew::mul_scalar_add(&mut out[k % 2], &a[k % 2], &scal, &b[k % 2], l, t)
        })?,
    );
    drop((a, b, c, out));
    dev.trim();
    Ok(rows)
}

/// A benchmark suite: measures some operations on a device.
pub type SuiteFn = fn(&Arc<GpuDevice>, &BenchConfig) -> Result<Vec<BenchRow>>;

/// Every suite [`run_all`] runs, in order (the roofline first; add yours here).
pub static SUITES: &[(&str, SuiteFn)] = &[
    ("copy", copy_suite),
    ("elementwise", elementwise_suite),
    ("bconv", bconv_suite),
];

/// Centred base conversion at the shapes of hybrid key switching at N = 2^16 (ModUp of one digit
/// of 9 limbs to the other 23, ModDown of 7 P limbs to 25 Q limbs for 1 and 2 polynomials, and a
/// 30 → 8 conversion), with every register tile, on 60-bit primes. Bytes = input + output.
pub fn bconv_suite(dev: &Arc<GpuDevice>, cfg: &BenchConfig) -> Result<Vec<BenchRow>> {
    use rhea_cuda::bconv::{BconvTile, DeviceBaseConverter};
    use rhea_math::basis::Basis;
    use rhea_math::bconv::BaseConverter;
    let n = cfg.degree;
    let all = ntt_primes(60, 40, n)?;
    let mut rows = Vec::new();
    for (from, to, polys) in [
        (9usize, 23usize, 1usize),
        (7, 25, 1),
        (7, 25, 2),
        (30, 8, 1),
    ] {
        let vals: Vec<u64> = all.iter().map(|m| m.value()).collect();
        let src =
            Basis::new(&vals[..from]).map_err(|e| CudaError::InvalidArgument(e.to_string()))?;
        let dst = Basis::new(&vals[from..from + to])
            .map_err(|e| CudaError::InvalidArgument(e.to_string()))?;
        let conv = BaseConverter::new(&src, &dst)
            .map_err(|e| CudaError::InvalidArgument(e.to_string()))?;
        let dconv = DeviceBaseConverter::new(dev, &conv)?;
        let mut input = Vec::with_capacity(polys * from * n);
        for _ in 0..polys {
            for (i, m) in all[..from].iter().enumerate() {
                input.extend(fill(m.value(), n, 77 + i as u64));
            }
        }
        let x = dev.upload(&input)?;
        let mut out = dev.alloc(polys * to * n)?;
        let bytes = ((from + to) * polys * n * 8) as u64;
        let shape = format!("N={n} {from}->{to} P={polys}");
        for (label, tile) in [
            ("centered_rin_c2", BconvTile::RinC2),
            ("centered_j8c2u8", BconvTile::J8C2U8),
            ("centered_j8c2", BconvTile::J8C2),
            ("centered_j8c1", BconvTile::J8C1),
            ("centered_j4c1", BconvTile::J4C1),
            ("centered_j7c2", BconvTile::J7C2),
            ("centered_j6c2", BconvTile::J6C2),
            ("centered_j5c2", BconvTile::J5C2),
            ("centered_auto", BconvTile::Auto),
        ] {
            let t = time_op(dev, cfg, |_| {
                dconv.convert_centered_with(&mut out, &x, n, false, tile)
            })?;
            rows.push(BenchRow::new("bconv", label, &shape, bytes, t));
        }
    }
    Ok(rows)
}

/// Runs the suites whose names are in `only` (all when empty) and fills in the roofline
/// fractions against the large device-to-device copy.
pub fn run_all(dev: &Arc<GpuDevice>, cfg: &BenchConfig, only: &[&str]) -> Result<BenchReport> {
    let mut rows = Vec::new();
    for (name, suite) in SUITES {
        if *name == "copy" || only.is_empty() || only.contains(name) {
            rows.extend(suite(dev, cfg)?);
        }
    }
    let copy = rows
        .iter()
        .find(|r| r.suite == "copy")
        .map(|r| r.gb_per_s)
        .unwrap_or(0.0);
    for r in &mut rows {
        r.fraction_of_copy = if copy > 0.0 { r.gb_per_s / copy } else { 0.0 };
    }
    Ok(BenchReport {
        device: dev.name().to_string(),
        compute_capability: dev.compute_capability(),
        multiprocessors: dev.multiprocessor_count(),
        config: cfg.clone(),
        copy_gb_per_s: copy,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primes_are_ntt_friendly() {
        let ps = ntt_primes(61, 3, 1 << 16).unwrap();
        assert_eq!(ps.len(), 3);
        for p in &ps {
            assert_eq!(p.value() % (1 << 17), 1);
            assert_eq!(p.bits(), 61);
        }
        assert!(ntt_primes(70, 1, 16).is_err());
    }

    #[test]
    fn fill_is_reduced_and_not_constant() {
        let v = fill(97, 1000, 7);
        assert!(v.iter().all(|&x| x < 97));
        assert!(v.iter().any(|&x| x != v[0]));
    }

    #[test]
    fn report_formats() {
        let t = Timing {
            median_us: 10.0,
            min_us: 9.0,
        };
        let r = BenchReport {
            device: "X".into(),
            compute_capability: (9, 0),
            multiprocessors: 132,
            config: BenchConfig::default(),
            copy_gb_per_s: 2000.0,
            rows: vec![BenchRow::new("copy", "memcpy_dtod", "1 MiB", 20_000_000, t)],
        };
        assert!((r.rows[0].gb_per_s - 2000.0).abs() < 1e-9);
        assert!(r.table().contains("memcpy_dtod"));
        let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(json["rows"][0]["bytes"], 20_000_000);
    }
}
