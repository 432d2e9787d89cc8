//! HELR at the small size (N = 2^12, INSECURE): the model trained on ciphertexts against the same
//! training in f64, and the GPU twin (the same words as the CPU).

use rhea::Device;
use rhea_apps::helr::{self, HelrConfig, HelrReport, Size};

/// Iterations of the CPU test: seven bootstraps (15–40 s in release on a shared 2-core CPU).
const ITERATIONS: usize = 16;

fn config() -> HelrConfig {
    let mut config = HelrConfig::new(Size::Small).with_seed(36); // `rhea app helr --seed 36`
    config.iterations = ITERATIONS;
    config
}

fn check(report: &HelrReport) {
    eprint!("{}", report.table());
    // Bootstrapping in the loop: two iterations a bootstrap (13 levels, 5 an iteration).
    assert_eq!(report.training.levels_per_iteration, 5);
    assert_eq!(report.timing.bootstraps, (ITERATIONS - 1) / 2);
    assert_eq!(report.timing.iteration_ms.len(), ITERATIONS);
    // The training learned something (chance is about 50 %) ...
    assert!(report.accuracy_f64 > 0.85, "{}", report.accuracy_f64);
    // ... and the encrypted model is the f64 model.
    assert!(
        (report.accuracy_encrypted - report.accuracy_f64).abs() <= 0.01,
        "{} against {}",
        report.accuracy_encrypted,
        report.accuracy_f64
    );
    assert!(
        report.prediction_agreement >= 0.99,
        "{}",
        report.prediction_agreement
    );
    // Measured (seed 36): 20.3 bits after 16 iterations (7 bootstraps of w and v, each about
    // 2^-20 on weights below 1), 18.8 after 32 (20.7 and 19.3 when SlotToCoeff ran at the top
    // of the chain and the iterations went down to level 0).
    assert!(
        report.weight_error_bits >= 19.5,
        "{}",
        report.weight_error_bits
    );
    assert!(report.weight_max_abs > 0.1, "{}", report.weight_max_abs);
}

#[test]
fn small_helr_on_ciphertexts_trains_the_f64_model() {
    let report = helr::run(Device::Cpu, &config()).unwrap();
    check(&report);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["app"], "helr");
    assert_eq!(json["size"], "small");
    assert!(json["timing"]["ms_per_iteration"].as_f64().unwrap() > 0.0);
}

/// The same seeded run on the GPU: the same final weight ciphertext, word for word, hence the
/// same weights and accuracy.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn small_helr_on_the_gpu_matches_the_cpu() {
    let cpu = helr::run(Device::Cpu, &config()).unwrap();
    let gpu = helr::run(Device::Cuda(0), &config()).unwrap();
    check(&gpu);
    assert_eq!(
        gpu.weights_digest, cpu.weights_digest,
        "the GPU's words differ from the CPU's"
    );
    assert_eq!(gpu.weight_error_bits, cpu.weight_error_bits);
    assert_eq!(gpu.accuracy_encrypted, cpu.accuracy_encrypted);
}
