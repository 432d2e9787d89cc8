//! CNN-MNIST at the small size (N = 2^12, INSECURE, the full 28 × 28 network): the seed's layout
//! (784 BGV ciphertexts, 4096 images across the slots) reproduces the integer network exactly,
//! the packed CKKS layout the f64 network; and the paper size's plans (128-bit parameters, the
//! noise rehearsal at N = 2^14) without running the paper size.

use rhea::Device;
use rhea_apps::cnn_mnist::{
    self, seed_op_counts, CnnConfig, CnnReport, Layout, OpCounts, Size, SEED_TABLE7,
};

fn check_common(r: &CnnReport) {
    eprint!("{}", r.table());
    // The f64 network learned the synthetic digits (chance is 10 %).
    assert!(r.accuracy_f64 > 0.9, "{}", r.accuracy_f64);
    assert_eq!(r.argmax_agreement, 1.0);
    assert_eq!(r.accuracy_encrypted, r.accuracy_reference);
    assert!(r.timing.latency_s > 0.0 && r.timing.images_per_s > 0.0);
    assert_eq!(r.plan.bootstraps, 0);
}

#[test]
fn small_seed_layout_is_exact() {
    let config = CnnConfig::new(Size::Small, Layout::Seed).with_seed(3);
    let r = cnn_mnist::run(Device::Cpu, &config).unwrap();
    check_common(&r);
    assert_eq!(r.images, 4096);
    assert_eq!(r.plan.input_ciphertexts, 784);
    // Every logit of every image equals the integer network's.
    assert_eq!(r.exact_logits, Some(true));
    assert!(
        r.noise_budget_bits.unwrap() > 10,
        "{:?}",
        r.noise_budget_bits
    );
    // The op counts: the seed's Table 7 but for the 645 taps on the zero padding.
    let ops = r.ops;
    let want = seed_op_counts(false);
    assert_eq!(
        (
            ops.pt_ct_mults,
            ops.ct_ct_adds,
            ops.pt_ct_adds,
            ops.ct_ct_mults
        ),
        (
            want.pt_ct_mults,
            want.ct_ct_adds,
            want.pt_ct_adds,
            want.ct_ct_mults
        )
    );
    assert_eq!(ops.pt_ct_mults + 645, SEED_TABLE7.pt_ct_mults);
    assert_eq!(ops.ct_ct_mults, SEED_TABLE7.ct_ct_mults);
    assert_eq!(ops.keyswitches, 945); // one relinearisation a squaring, no rotation
                                      // The plan predicted them (it counts no modulus switch).
    assert_eq!(
        OpCounts {
            mod_switches: 0,
            ..ops
        },
        r.plan.ops
    );
    assert!(ops.mod_switches > 0);
    // The quantisation fits t and loses little.
    let q = r.quantisation.as_ref().unwrap();
    assert!(
        q.max_logit_bits < q.t_bits - 1.0,
        "{} {}",
        q.max_logit_bits,
        q.t_bits
    );
    assert!(
        q.accuracy_quantised > r.accuracy_f64 - 0.03,
        "{}",
        q.accuracy_quantised
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["app"], "cnn-mnist");
    assert_eq!(json["layout"], "seed");
    assert_eq!(json["training"]["images"], 2000);
    assert_eq!(json["exact_logits"], true);
}

#[test]
fn small_packed_layout_matches_f64() {
    let mut config = CnnConfig::new(Size::Small, Layout::Packed).with_seed(3);
    config.images = Some(8); // 4 groups of 2 images
    let r = cnn_mnist::run(Device::Cpu, &config).unwrap();
    check_common(&r);
    assert_eq!(r.images, 8);
    assert_eq!(r.plan.input_ciphertexts, 4 * 25); // 25 tap ciphertexts a group
    let bits = r.error_bits.unwrap();
    assert!(bits > 20.0, "{bits}");
    assert_eq!(r.exact_logits, None);
}

#[test]
fn paper_plans_are_128_bit_and_the_noise_fits() {
    let seed = cnn_mnist::plan(Device::Cpu, &CnnConfig::new(Size::Paper, Layout::Seed)).unwrap();
    eprintln!("{seed:?}");
    assert!(seed.secure_128);
    assert_eq!(
        (seed.log_n, seed.batch, seed.input_ciphertexts),
        (14, 16384, 784)
    );
    assert!(seed.rehearsal_budget_bits.unwrap() > 10);
    assert!(seed.memory_bytes < 8 << 30, "{}", seed.memory_bytes);
    let packed =
        cnn_mnist::plan(Device::Cpu, &CnnConfig::new(Size::Paper, Layout::Packed)).unwrap();
    eprintln!("{packed:?}");
    assert!(packed.secure_128);
    assert_eq!(packed.batch, 8);
    assert!(packed.rotation_keys > 0 && packed.memory_bytes < 40 << 30);
}

/// The same runs on the GPU.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn small_layouts_on_the_gpu() {
    let config = CnnConfig::new(Size::Small, Layout::Seed).with_seed(3);
    let r = cnn_mnist::run(Device::Cuda(0), &config).unwrap();
    check_common(&r);
    assert_eq!(r.exact_logits, Some(true));
    let mut config = CnnConfig::new(Size::Small, Layout::Packed).with_seed(3);
    config.images = Some(8);
    let r = cnn_mnist::run(Device::Cuda(0), &config).unwrap();
    check_common(&r);
    assert!(r.error_bits.unwrap() > 20.0);
}
