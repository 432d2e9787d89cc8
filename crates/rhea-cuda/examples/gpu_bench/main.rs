//! GPU bandwidth benchmark: the device-to-device copy roofline and every element-wise kernel.
//!
//! ```text
//! gpu_bench [OUT.json] [--quick] [--degree N] [--limbs L] [--polys P] [--bits B] [--suite NAME]...
//! ```
//! Prints a table and, when a path is given, writes the report as JSON there.

mod harness;

use harness::{run_all, BenchConfig};
use rhea_cuda::GpuDevice;

fn main() {
    let mut cfg = BenchConfig::default();
    let mut out: Option<String> = None;
    let mut suites: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = |what: &str| -> usize {
            args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| {
                eprintln!("{what} needs a number");
                std::process::exit(2)
            })
        };
        match a.as_str() {
            "--quick" => {
                cfg.samples = 5;
                cfg.inner = 3;
                cfg.copy_bytes = 1 << 28;
            }
            "--degree" => cfg.degree = num("--degree"),
            "--limbs" => cfg.limbs = num("--limbs"),
            "--polys" => cfg.polys = num("--polys"),
            "--bits" => cfg.prime_bits = num("--bits") as u32,
            "--suite" => suites.push(args.next().unwrap_or_default()),
            "-h" | "--help" => {
                println!("gpu_bench [OUT.json] [--quick] [--degree N] [--limbs L] [--polys P] [--bits B] [--suite NAME]...");
                return;
            }
            path => out = Some(path.to_string()),
        }
    }
    let dev = match GpuDevice::new(0) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("gpu_bench: no GPU: {e}");
            std::process::exit(3);
        }
    };
    let only: Vec<&str> = suites.iter().map(String::as_str).collect();
    match run_all(&dev, &cfg, &only) {
        Ok(report) => {
            print!("{}", report.table());
            if let Some(path) = out {
                if let Err(e) = std::fs::write(&path, report.to_json()) {
                    eprintln!("gpu_bench: cannot write {path}: {e}");
                    std::process::exit(1);
                }
                println!("wrote {path}");
            }
        }
        Err(e) => {
            eprintln!("gpu_bench: {e}");
            std::process::exit(1);
        }
    }
}
