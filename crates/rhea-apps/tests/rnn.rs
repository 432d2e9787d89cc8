//! The RNN at the small size (N = 2^12, INSECURE; 64 units, 16 sequences, 9 steps, bootstrapping
//! every 3): the encrypted inference against the same network in f64, and the GPU twin (the
//! same words as the CPU).

use rhea::Device;
use rhea_apps::rnn::{self, RnnConfig, RnnReport, Size};

fn config() -> RnnConfig {
    RnnConfig::new(Size::Small).with_seed(36) // `rhea app rnn --seed 36`
}

fn check(report: &RnnReport) {
    eprint!("{}", report.table());
    // Bootstrapping in the loop: before steps 3 and 6 (4 levels a step, 13 after a bootstrap).
    assert_eq!(report.plan.levels_per_iteration, 4);
    assert_eq!(report.timing.bootstraps, 2);
    assert_eq!(report.parameters.bootstrap_slots, 64 * 16);
    // The f64 run stays inside the tanh interval, and is not trivial.
    assert!(report.max_preactivation < report.network.tanh_bound);
    assert!(
        report.max_preactivation > 1.0,
        "{}",
        report.max_preactivation
    );
    assert!(report.max_hidden > 0.5, "{}", report.max_hidden);
    // The encrypted network is the f64 network.
    assert!(
        report.hidden_error_bits >= 16.0,
        "{}",
        report.hidden_error_bits
    );
    assert!(
        report.logits_error_bits >= 12.0,
        "{}",
        report.logits_error_bits
    );
    assert_eq!(
        report.argmax_agreement, report.layout.batch,
        "smallest f64 margin {}",
        report.min_logit_margin
    );
    assert_eq!(report.accuracy_encrypted, report.accuracy_f64);
    assert!(report.timing.keyswitches_per_iteration > 5.0);
}

#[test]
fn small_rnn_on_ciphertexts_is_the_f64_network() {
    let report = rnn::run(Device::Cpu, &config()).unwrap();
    check(&report);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["app"], "rnn");
    assert_eq!(json["size"], "small");
    assert!(json["timing"]["total_ms"].as_f64().unwrap() > 0.0);
}

/// The same seeded run on the GPU: the same logits ciphertext, word for word.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn small_rnn_on_the_gpu_matches_the_cpu() {
    let cpu = rnn::run(Device::Cpu, &config()).unwrap();
    let gpu = rnn::run(Device::Cuda(0), &config()).unwrap();
    check(&gpu);
    assert_eq!(
        gpu.logits_digest, cpu.logits_digest,
        "the GPU's words differ from the CPU's"
    );
    assert_eq!(gpu.hidden_error_bits, cpu.hidden_error_bits);
}
