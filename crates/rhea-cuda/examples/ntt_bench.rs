//! Benchmarks the GPU NTT (fast two-kernel design vs the naive one-launch-per-stage baseline)
//! against the device-to-device copy bandwidth, prints a table and writes JSON.
//!
//! ```text
//! cargo run --release -p rhea-cuda --example ntt_bench -- [out.json] [--quick] [--default-split]
//! ```
//!
//! Cases: N = 2^16 × 32 limbs and N = 2^15 × 8 limbs × 1024 instances, 60-bit primes.
//! `--quick` takes fewer samples; `--default-split` times only the default split of the fast NTT;
//! `--profile` only runs each fast variant of N = 2^16 × 32 limbs a few times (for a profiler).

use std::process::ExitCode;
use std::sync::Arc;

use rhea_cuda::ntt::{
    bench_ntt, bench_primes, splits, DeviceNttTables, NttAlgorithm, NttBatch, NttBenchOptions,
    NttDirection,
};
use rhea_cuda::GpuDevice;

/// Runs the default shape with and without derived twiddles, forward and inverse, twice each.
fn profile(dev: &Arc<GpuDevice>) -> rhea_cuda::Result<()> {
    let (log_n, limbs) = (16u32, 32usize);
    let n = 1usize << log_n;
    let moduli = bench_primes(60, n, limbs)?;
    let tables = DeviceNttTables::from_moduli(dev, &moduli, n)?;
    let host: Vec<u64> = (0..limbs * n)
        .map(|i| 1 + (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) % (moduli[i / n].value() - 1))
        .collect();
    let mut buf = dev.upload(&host)?;
    let batch = NttBatch::all(1, limbs);
    for s in splits(log_n).into_iter().take(2) {
        for dir in [NttDirection::Forward, NttDirection::Inverse] {
            for _ in 0..2 {
                tables.transform(&mut buf, &batch, dir, NttAlgorithm::FastSplit(s))?;
            }
        }
    }
    dev.synchronize()
}

fn main() -> ExitCode {
    let mut json_path = None;
    let mut opts = NttBenchOptions::default();
    let mut profile_only = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--quick" => {
                opts.samples = 7;
                opts.warmup = 2;
            }
            "--default-split" => opts.all_splits = false,
            "--profile" => profile_only = true,
            "-h" | "--help" => {
                println!("usage: ntt_bench [out.json] [--quick] [--default-split] [--profile]");
                return ExitCode::SUCCESS;
            }
            path => json_path = Some(path.to_string()),
        }
    }
    let dev = match GpuDevice::new(0) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("ntt_bench: no GPU: {e}");
            return ExitCode::FAILURE;
        }
    };
    if profile_only {
        return match profile(&dev) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("ntt_bench: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let report = match bench_ntt(&dev, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("ntt_bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", report.table());
    if let Some(p) = json_path {
        if let Err(e) = std::fs::write(&p, report.to_json()) {
            eprintln!("ntt_bench: cannot write {p}: {e}");
            return ExitCode::FAILURE;
        }
        println!("wrote {p}");
    }
    ExitCode::SUCCESS
}
