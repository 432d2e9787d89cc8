//! The `rhea` command-line tool: device information and benchmark suites.
//!
//! ```text
//! rhea info                         # the devices Rhea can use
//! rhea bench ntt [--json out.json]  # GPU NTT: fast vs naive, limb-NTTs/s, roofline fraction
//! rhea bench ntt-cpu                # CPU NTT (rhea-math) at N = 2^14, 2^16, 2^17
//! rhea bench ckks --device cpu      # CKKS ops at a preset (--preset, --reps)
//! rhea bench bgv --preset he_booster_n13_logqp218   # BGV HEADD/HEMUL/HEROT
//! rhea bench seal-routines --device cpu   # seed 000: MulLin, MulLinRS, SqrLinRS, ..., Rotate
//! rhea bench he-booster --device cuda:0   # seed 003: BGV + CKKS HEADD/HEMUL/HEROT/ReScale
//! rhea bench matmul --shape 10x9x8        # seed 000: encrypted matrix product, end to end
//! rhea bench boot --device cpu --preset boot_test_n12_insecure   # CKKS bootstrapping
//! rhea bench boot --preset list           # the bootstrappable presets
//! rhea bench multi --gpus 2               # throughput: independent work on each GPU
//! rhea bench multi --mode latency --gpus 2   # one mul+relin / rotation split over GPUs (NCCL)
//! rhea app helr --device cpu --size small  # logistic-regression training on encrypted data
//! rhea app resnet20 --device cuda:0 --size paper  # ResNet-20 inference of an encrypted image
//! rhea app rnn --device cpu --size small   # RNN inference on encrypted word embeddings
//! rhea app cnn-mnist --device cpu --size small --layout seed   # CNN inference, 784 BGV ciphertexts
//! rhea app rnn --size paper --gpus 2       # one run per GPU at once (throughput), vs one GPU
//! ```

use std::process::ExitCode;
use std::time::Instant;

mod app;
mod app_spread;
mod bench_boot;
mod bench_machinery;
mod bench_multi;
mod bench_ops;
mod bench_suites;
mod files;

use clap::{Parser, Subcommand};
use rhea_cuda::GpuDevice;

/// Rhea: fully homomorphic encryption on GPUs and CPUs.
#[derive(Parser)]
#[command(name = "rhea", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Key generation, encryption, evaluation, decryption and inspection of files.
    #[command(flatten)]
    Files(files::FileCommand),
    /// Lists the devices Rhea can run on.
    Info,
    /// Runs a benchmark suite and prints a table (and JSON with --json).
    Bench {
        /// The suite: `ntt` (GPU NTT), `ntt-cpu`, `ckks`
        /// (also named `ops`: the CKKS operations at a preset and levels), `bgv`,
        /// `seal-routines`, `he-booster`, `matmul`, `linalg` (linear transforms and slot
        /// utilities), `poly` (polynomial evaluation and standard functions), `boot` (CKKS
        /// bootstrapping at a bootstrappable preset: `--preset list` names them) or `multi`
        /// (bootstrapping and mul+relin throughput over `--gpus` GPUs).
        suite: String,
        /// GPU ordinal for GPU suites.
        #[arg(long, default_value_t = 0)]
        gpu: usize,
        /// Only these operations of `ckks` / `bgv`
        /// (comma-separated; default all).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Extra ciphertext levels for the `ckks` suite (comma-separated; the top level always
        /// runs).
        #[arg(long, value_delimiter = ',')]
        level: Vec<usize>,
        /// Write the results as JSON to this file.
        #[arg(long)]
        json: Option<std::path::PathBuf>,
        /// Device for the `ckks`, `bgv`, `seal-routines`, `he-booster`, `matmul`, `linalg`,
        /// `poly` and `boot` suites: `cpu`,
        /// `cuda:N` or `best`.
        #[arg(long, default_value = "best")]
        device: String,
        /// Key-switching digits for the `ckks` suite, overriding the preset's (`P` is resized
        /// to cover the largest digit).
        #[arg(long)]
        dnum: Option<usize>,
        /// Parameter preset for the `ckks` / `bgv` suites, or a JSON parameter-literal file
        /// (default: the scheme's deep N = 2^16 preset, `n16_logqp1560_levels24` for CKKS,
        /// `n16_logqp1717_batching` for BGV). For `boot`: a bootstrappable preset
        /// (default `boot_n16_levels13`), or `list`.
        #[arg(long)]
        preset: Option<String>,
        /// Timed repetitions per operation (the median is reported; default 10, 5 for `boot`).
        #[arg(long)]
        reps: Option<usize>,
        /// Slots to bootstrap for the `boot` suite (a power of two up to N/2; default the
        /// preset's, N/2).
        #[arg(long)]
        slots: Option<usize>,
        /// Rotation keys for the `boot` suite: `per-baby-step` (the fastest, default) or
        /// `fewest` (a few keys per DFT level: about a quarter of the key memory, slower).
        #[arg(long, default_value = "per-baby-step")]
        keys: String,
        /// CoeffToSlot's and SlotToCoeff's encoded matrices for the `boot` suite: `whole` (the
        /// fastest, default), `q-only` (whole over `Q` only: the products after each baby
        /// step's ModDown) or `compact` (one limb a diagonal, expanded at each bootstrap).
        #[arg(long, default_value = "whole")]
        diagonals: String,
        /// GPUs for the `multi` suite (throughput of bootstrapping and mul+relin spread over
        /// that many GPUs, one GPU as the baseline in the same run).
        #[arg(long, default_value_t = 2)]
        gpus: usize,
        /// Mode of the `multi` suite: `throughput` (independent work on each GPU) or `latency`
        /// (one mul+relin, one mul+relin+rescale and one rotation split by limb over the GPUs
        /// through NCCL, keys partitioned; default preset `boot_n17_levels24`'s parameters,
        /// N = 2^17, 39 Q primes).
        #[arg(long, default_value = "throughput")]
        mode: String,
        /// Shapes `MxKxN` for the `matmul` suite (comma-separated).
        #[arg(long, value_delimiter = ',', default_value = "100x100x1,10x9x8")]
        shape: Vec<String>,
    },
    /// Runs an application on encrypted data and checks it against the same computation in
    /// f64: `helr` (logistic-regression training, Han et al.; seed 004), `resnet20`
    /// (ResNet-20 inference, Lee et al.; seed 004), `rnn` (RNN inference, Podschwadt and
    /// Takabi; seed 004), `cnn-mnist` (CNN inference on 28 × 28 images; seed 003).
    App {
        /// The application: `helr`, `resnet20`, `rnn` or `cnn-mnist`.
        name: String,
        /// Device: `cpu`, `cuda:N` or `best` (the default).
        #[arg(long)]
        device: Option<String>,
        /// `small` (N = 2^12, INSECURE, for CPUs) or `paper` (the paper's size, for the GPU).
        #[arg(long, default_value = "small")]
        size: String,
        /// Iterations (default: the application's, 32 for helr, 200 time steps for rnn at paper
        /// size).
        #[arg(long)]
        iterations: Option<usize>,
        /// Seed of the keys and encryptions (a reproducible run; default: OS randomness).
        #[arg(long)]
        seed: Option<u64>,
        /// The layout, for `cnn-mnist`: `seed` (one pixel per BGV ciphertext, the default) or
        /// `packed` (images packed in CKKS slots, layers as linear transforms).
        #[arg(long)]
        layout: Option<String>,
        /// For `resnet20`: device memory for the maps' encoded diagonals, GiB (every map at
        /// least compact, then maps kept whole while they fit; default: what the card has room
        /// for beside the keys).
        #[arg(long)]
        maps_gib: Option<f64>,
        /// Throughput mode: one independent run on each of the first GPUS GPUs at once (same
        /// seed; one GPU alone first as the baseline), instead of one run on `--device`.
        #[arg(long)]
        gpus: Option<usize>,
        /// Write the report as JSON to this file.
        #[arg(long)]
        json: Option<std::path::PathBuf>,
    },
    /// Draws the applications' results chart (SVG): Rhea's times from `rhea app --json`
    /// reports beside the seeds' figures, on a logarithmic time axis.
    AppChart {
        /// The JSON reports written by `rhea app NAME --json FILE`, in the chart's order.
        #[arg(required = true)]
        reports: Vec<std::path::PathBuf>,
        /// Where to write the SVG.
        #[arg(long)]
        svg: std::path::PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info => info(),
        Command::Files(cmd) => files::run(cmd),
        Command::App {
            name,
            device,
            size,
            iterations,
            seed,
            layout,
            maps_gib,
            gpus,
            json,
        } => parse_device(device.as_deref().unwrap_or("best"))
            .map_err(Into::into)
            .and_then(|parsed| {
                let options = app::AppOptions {
                    name: &name,
                    device: parsed,
                    size: &size,
                    iterations,
                    seed,
                    layout: layout.as_deref(),
                    maps_gib,
                    json: json.as_deref(),
                };
                match gpus {
                    None => app::run(&options),
                    Some(_) if device.is_some() => {
                        Err("rhea app: --gpus and --device: give one".into())
                    }
                    Some(k) => app_spread(&options, k),
                }
            }),
        Command::AppChart { reports, svg } => app::chart(&reports, &svg),
        Command::Bench {
            suite,
            gpu,
            only,
            level,
            json,
            device,
            dnum,
            preset,
            reps,
            slots,
            keys,
            diagonals,
            gpus,
            mode,
            shape,
        } => {
            let reps = reps.unwrap_or(if suite == "boot" { 5 } else { 10 });
            match suite.as_str() {
                "multi" => bench_multi(json.as_deref(), preset, gpus, reps, &mode),
                "boot" => {
                    let preset = preset.unwrap_or_else(|| "boot_n16_levels13".to_string());
                    bench_boot(
                        json.as_deref(),
                        &device,
                        &preset,
                        reps,
                        slots,
                        (&keys, &diagonals),
                    )
                }
                "seal-routines" | "he-booster" | "matmul" => {
                    bench_suite(&suite, json.as_deref(), &device, reps, &shape)
                }
                "linalg" | "poly" => {
                    let preset = preset.unwrap_or_else(|| default_preset(&suite).to_string());
                    bench_machinery(&suite, json.as_deref(), &device, &preset, reps)
                }
                _ => {
                    let sel = bench_ops::SuiteSelection {
                        only,
                        levels: level,
                        dnum,
                    };
                    let preset = preset.unwrap_or_else(|| default_preset(&suite).to_string());
                    bench(&suite, gpu, &sel, json.as_deref(), &device, &preset, reps)
                }
            }
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rhea: {e}");
            ExitCode::FAILURE
        }
    }
}

type CliResult = Result<(), Box<dyn std::error::Error>>;

fn info() -> CliResult {
    println!("rhea {}", env!("CARGO_PKG_VERSION"));
    println!(
        "cpu: {} threads (rayon)",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let count = GpuDevice::count();
    if count == 0 {
        println!("cuda: no usable driver or GPU found (the CPU backend will be used)");
    }
    for i in 0..count {
        let dev = GpuDevice::new(i)?;
        let info = dev.info();
        println!(
            "cuda:{i}: {} (sm_{}{}), {} SMs, {:.1} GiB",
            info.name,
            info.compute_capability.0,
            info.compute_capability.1,
            info.multiprocessor_count,
            info.total_memory as f64 / (1u64 << 30) as f64
        );
        println!("cuda:{i}: tuning: {}", dev.tuning());
    }
    Ok(())
}

/// Parses `cpu`, `cuda:N` or `best`.
/// `rhea app NAME --gpus K`: prints the spread report and writes it as JSON when asked.
fn app_spread(
    options: &app::AppOptions<'_>,
    gpus: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let report = app_spread::run_spread(options, gpus)?;
    print!("{}", report.table());
    if let Some(path) = options.json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
    }
    Ok(())
}

fn parse_device(name: &str) -> Result<rhea::Device, String> {
    match name {
        "cpu" => Ok(rhea::Device::Cpu),
        "best" => Ok(rhea::Device::best()),
        other => other
            .strip_prefix("cuda:")
            .and_then(|i| i.parse().ok())
            .map(rhea::Device::Cuda)
            .ok_or_else(|| format!("unknown device `{other}` (use cpu, cuda:N or best)")),
    }
}

/// The `--preset` a `bench` suite takes when none is given: the scheme's deep N = 2^16 preset.
fn default_preset(suite: &str) -> &'static str {
    match suite {
        "bgv" => "n16_logqp1717_batching",
        _ => "n16_logqp1560_levels24",
    }
}

fn bench(
    suite: &str,
    gpu: usize,
    sel: &bench_ops::SuiteSelection,
    json: Option<&std::path::Path>,
    device: &str,
    preset: &str,
    reps: usize,
) -> CliResult {
    match suite {
        "ntt" => {
            let dev = GpuDevice::new(gpu)?;
            let report =
                rhea_cuda::ntt::bench_ntt(&dev, &rhea_cuda::ntt::NttBenchOptions::default())?;
            println!("{}", report.table());
            if let Some(path) = json {
                std::fs::write(path, report.to_json())?;
            }
            Ok(())
        }
        "ntt-cpu" => ntt_cpu(json),
        "ckks" | "ops" => {
            let device = parse_device(device)?;
            let report = bench_ops::run_ckks(preset, device, reps, sel)?;
            println!("{}", report.table());
            if let Some(path) = json {
                std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
            }
            Ok(())
        }
        "bgv" => {
            let report = bench_ops::run_bgv(preset, parse_device(device)?, reps, sel)?;
            println!("{}", report.table());
            if let Some(path) = json {
                std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
            }
            Ok(())
        }
        other => {
            Err(format!("unknown suite `{other}` (known: ntt, ntt-cpu, ckks or ops, bgv, seal-routines, he-booster, matmul, linalg, poly, boot)").into())
        }
    }
}

/// Runs `linalg` or `poly` (the CKKS linear-algebra and polynomial machinery).
fn bench_machinery(
    suite: &str,
    json: Option<&std::path::Path>,
    device: &str,
    preset: &str,
    reps: usize,
) -> CliResult {
    let device = parse_device(device)?;
    let report = match suite {
        "linalg" => bench_machinery::run_linalg(preset, device, reps)?,
        _ => bench_machinery::run_poly(preset, device, reps)?,
    };
    println!("{}", report.table());
    if let Some(path) = json {
        std::fs::write(path, serde_json::to_string_pretty(&report.cases)?)?;
    }
    Ok(())
}

/// Runs `boot` (CKKS bootstrapping at a bootstrappable preset), or lists the presets for
/// `--preset list`.
fn bench_multi(
    json: Option<&std::path::Path>,
    preset: Option<String>,
    gpus: usize,
    reps: usize,
    mode: &str,
) -> CliResult {
    let text = match mode {
        "throughput" => {
            let preset = preset.unwrap_or_else(|| "boot_n16_levels13".to_string());
            let report = bench_multi::run_multi(&preset, gpus, reps)?;
            print!("{}", report.table());
            serde_json::to_string_pretty(&report)?
        }
        "latency" => {
            let preset = preset.unwrap_or_else(|| "boot_n17_levels24".to_string());
            let report = bench_multi::run_latency(&preset, gpus, reps)?;
            print!("{}", report.table());
            serde_json::to_string_pretty(&report)?
        }
        m => return Err(format!("rhea bench multi: --mode {m}: `throughput` or `latency`").into()),
    };
    if let Some(path) = json {
        std::fs::write(path, text)?;
    }
    Ok(())
}

fn bench_boot(
    json: Option<&std::path::Path>,
    device: &str,
    preset: &str,
    reps: usize,
    slots: Option<usize>,
    (keys, diagonals): (&str, &str),
) -> CliResult {
    if preset == "list" {
        print!("{}", bench_boot::list_presets()?);
        return Ok(());
    }
    let report = bench_boot::run_boot(&bench_boot::BootOptions {
        preset: preset.to_string(),
        device: parse_device(device)?,
        reps,
        slots,
        rotation_keys: bench_boot::parse_rotation_keys(keys)?,
        diagonal_storage: bench_boot::parse_diagonal_storage(diagonals)?,
    })?;
    print!("{}", report.table());
    if let Some(path) = json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
    }
    Ok(())
}

/// Runs one of the paper-comparison suites (`seal-routines`, `he-booster`, `matmul`).
fn bench_suite(
    suite: &str,
    json: Option<&std::path::Path>,
    device: &str,
    reps: usize,
    shapes: &[String],
) -> CliResult {
    let device = parse_device(device)?;
    let (table, report) = match suite {
        "seal-routines" => {
            let r = bench_suites::run_seal_routines(device, reps)?;
            (r.table(), serde_json::to_string_pretty(&r)?)
        }
        "he-booster" => {
            let r = bench_suites::run_he_booster(device, reps)?;
            (r.table(), serde_json::to_string_pretty(&r)?)
        }
        "matmul" => {
            let shapes = shapes
                .iter()
                .map(|s| bench_suites::parse_shape(s))
                .collect::<Result<Vec<_>, _>>()?;
            let r = bench_suites::run_matmul(device, &shapes)?;
            (r.table(), serde_json::to_string_pretty(&r)?)
        }
        other => return Err(format!("unknown suite `{other}`").into()),
    };
    println!("{table}");
    if let Some(path) = json {
        std::fs::write(path, report)?;
    }
    Ok(())
}

/// Times rhea-math's forward and inverse NTT on the CPU (single transform, one thread).
fn ntt_cpu(json: Option<&std::path::Path>) -> CliResult {
    use rhea_math::ntt::NttTable;
    use rhea_math::prime::generate_ntt_primes;
    use rhea_math::Modulus;
    let mut rows = Vec::new();
    println!("{:>8} {:>14} {:>14}", "N", "forward (µs)", "inverse (µs)");
    for log_n in [14u32, 16, 17] {
        let n = 1usize << log_n;
        let q = generate_ntt_primes(60, n, 1, &[])?[0];
        let table = NttTable::new(Modulus::new(q)?, n)?;
        let mut data: Vec<u64> = (0..n as u64)
            .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15)) % q)
            .collect();
        let reps = (1 << 22) / n;
        let time = |f: &mut dyn FnMut()| {
            f();
            let mut samples = Vec::new();
            for _ in 0..5 {
                let t = Instant::now();
                for _ in 0..reps {
                    f();
                }
                samples.push(t.elapsed().as_secs_f64() * 1e6 / reps as f64);
            }
            samples.sort_by(f64::total_cmp);
            samples[2]
        };
        let fwd = time(&mut || table.forward(&mut data).expect("length matches"));
        let inv = time(&mut || table.inverse(&mut data).expect("length matches"));
        println!("{:>8} {:>14.1} {:>14.1}", format!("2^{log_n}"), fwd, inv);
        rows.push(serde_json::json!({"log_n": log_n, "forward_us": fwd, "inverse_us": inv}));
    }
    if let Some(path) = json {
        std::fs::write(path, serde_json::to_string_pretty(&rows)?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selection(only: &[&str]) -> bench_ops::SuiteSelection {
        bench_ops::SuiteSelection {
            only: only.iter().map(|s| s.to_string()).collect(),
            levels: Vec::new(),
            dnum: None,
        }
    }

    #[test]
    fn ops_is_the_ckks_operations_suite() {
        let json = std::env::temp_dir().join(format!("rhea-bench-ops-{}.json", std::process::id()));
        let sel = selection(&["add"]);
        bench(
            "ops",
            0,
            &sel,
            Some(&json),
            "cpu",
            "n13_logqp200_levels2",
            1,
        )
        .unwrap();
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        std::fs::remove_file(&json).unwrap();
        assert_eq!(report["scheme"], "ckks");
        let ops = report["ops"].as_array().unwrap();
        assert!(
            !ops.is_empty() && ops.iter().all(|o| o["op"] == "add"),
            "{report}"
        );
    }

    #[test]
    fn a_dnum_that_makes_the_preset_insecure_is_refused() {
        // n13: Q = 140 bits in one digit needs P = 3 × 60 bits: log QP 320 > 218.
        let sel = bench_ops::SuiteSelection {
            dnum: Some(1),
            ..selection(&["add"])
        };
        let err = bench("ckks", 0, &sel, None, "cpu", "n13_logqp200_levels2", 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("128"), "{err}");
        let err = bench("bgv", 0, &sel, None, "cpu", "he_booster_n13_logqp218", 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("--dnum"), "{err}");
    }

    #[test]
    fn each_scheme_defaults_to_a_preset_of_its_own() {
        for suite in ["ckks", "ops", "bgv"] {
            let preset = default_preset(suite);
            let known = if suite == "bgv" {
                crate::files::bgv_literal(preset).is_ok()
            } else {
                crate::files::ckks_literal(preset).is_ok()
            };
            assert!(
                known,
                "{suite}: default preset {preset} is not one of its scheme's"
            );
        }
    }

    #[test]
    fn an_unknown_preset_lists_the_known_ones() {
        for suite in ["ckks", "bgv"] {
            let err = bench(suite, 0, &selection(&[]), None, "cpu", "n99_nothing", 1)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("unknown") && err.contains("n99_nothing"),
                "{err}"
            );
        }
        let err = bench("ckks", 0, &selection(&[]), None, "cpu", "n99_nothing", 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("n16_logqp1560_levels24"), "{err}");
    }

    #[test]
    fn an_unknown_suite_lists_the_known_ones() {
        let err = bench(
            "opz",
            0,
            &selection(&[]),
            None,
            "cpu",
            "n13_logqp200_levels2",
            1,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("unknown suite `opz`") && err.contains("ops"),
            "{err}"
        );
    }
}
