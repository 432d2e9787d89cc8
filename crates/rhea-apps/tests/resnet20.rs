//! ResNet-20 at the small size (8 × 8 × 3, stages 4/8/16 of one block, N = 2^12, INSECURE): the
//! logits of the encrypted inference against the same network in f64.

use rhea::Device;
use rhea_apps::resnet20::{self, ResnetConfig, ResnetReport, Size};

/// The small size with a budget of 0.1 GiB (about half the maps' encoded diagonals at
/// N = 2^12): the paper's two paths, whole maps and compact ones, both run.
fn config() -> ResnetConfig {
    let mut config = ResnetConfig::new(Size::Small).with_seed(36);
    config.cache_budget_gib = Some(0.1);
    config
}

fn check(report: &ResnetReport) {
    eprint!("{}", report.table());
    // One bootstrap a convolution: conv0 and two a block, 3 blocks.
    assert_eq!(report.timing.bootstraps, 7);
    assert_eq!(report.plan.bootstraps, 7);
    assert_eq!(report.logits_encrypted.len(), 10);
    let whole = report.plan.maps.iter().filter(|m| m.whole).count();
    assert!(whole > 0 && whole < report.plan.maps.len(), "{whole} whole");
    // The logits are not degenerate, and the encrypted ones are the f64 ones.
    assert!(report.logit_max_abs > 0.05, "{}", report.logit_max_abs);
    let spread = report
        .logits_f64
        .iter()
        .fold(f64::NEG_INFINITY, |m, &v| m.max(v))
        - report
            .logits_f64
            .iter()
            .fold(f64::INFINITY, |m, &v| m.min(v));
    assert!(spread > 0.05, "{spread}");
    assert!(report.argmax_agrees, "{:?}", report.logits_encrypted);
    // Measured (seed 36): 23.1 bits (7 bootstraps of about 2^-20 on values below 1; 19.1 when
    // SlotToCoeff ran at the top of the chain and the maps at level 1); the polynomial ReLU
    // against the exact one: 11.2 bits.
    assert!(
        report.logit_error_bits >= 15.0,
        "{} bits",
        report.logit_error_bits
    );
}

#[test]
fn small_resnet_on_ciphertexts_gives_the_f64_logits() {
    let report = resnet20::run(Device::Cpu, &config()).unwrap();
    check(&report);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["app"], "resnet20");
    assert_eq!(json["size"], "small");
    assert!(json["timing"]["latency_ms"].as_f64().unwrap() > 0.0);
}

/// The same seeded run on the GPU.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn small_resnet_on_the_gpu_matches_the_cpu() {
    let cpu = resnet20::run(Device::Cpu, &config()).unwrap();
    let gpu = resnet20::run(Device::Cuda(0), &config()).unwrap();
    check(&gpu);
    assert_eq!(gpu.logits_encrypted, cpu.logits_encrypted);
}
