//! At every preset, CKKS and BGV evaluation on the GPU takes the fused paths: the per-device count
//! of fused primitives that ran as their composition ([`Device::fused_fallbacks`]) stays 0
//! through key generation, encryption (public and secret key), products with relinearisation and
//! rescaling, rotations (single, hoisted), conjugation, plaintext products, additions across
//! levels and decryption.
//!
//! Every test needs a GPU: it is ignored by a plain `cargo test`, and fails without one when run
//! with `--include-ignored` (as `scripts/gpu-run.sh` does on the GPU machine).

use rhea::bgv::{self, BgvContext, BgvParametersLiteral};
use rhea::ckks::{self, CkksContext};
use rhea::params::CkksParametersLiteral;
use rhea::Device;

const GPU: Device = Device::Cuda(0);

fn gpu() -> Device {
    if let Err(e) = GPU.check_supported() {
        panic!("this test needs a CUDA GPU: {e}");
    }
    GPU
}

fn ckks_preset_takes_the_fused_paths(name: &str, lit: CkksParametersLiteral) {
    ckks_evaluation(name, lit, gpu());
}

fn bgv_preset_takes_the_fused_paths(name: &str, lit: BgvParametersLiteral) {
    bgv_evaluation(name, lit, gpu());
}

/// The CKKS evaluation at `lit` on `device`, checked against the plaintext and for fallbacks.
fn ckks_evaluation(name: &str, lit: CkksParametersLiteral, device: Device) {
    let params = lit.build().unwrap();
    let ctx = CkksContext::new(&params, device).unwrap();
    let before = device.fused_fallbacks();

    let mut keygen = ckks::KeyGenerator::from_seed(&ctx, [3; 32]);
    let sk = keygen.secret_key().unwrap();
    let pk = keygen.public_key(&sk).unwrap();
    let rlk = std::sync::Arc::new(keygen.relinearization_key(&sk).unwrap());
    let gk = keygen.galois_keys(&sk, &[1, 2, -5], true).unwrap();
    let encoder = ckks::Encoder::new(&ctx).unwrap();
    let eval = ckks::Evaluator::new(&ctx)
        .with_relinearization_key(rlk.clone())
        .unwrap()
        .with_galois_keys(gk)
        .unwrap();
    let manual = ckks::Evaluator::new(&ctx)
        .with_relinearization_key(rlk)
        .unwrap()
        .with_auto_rescale(false);
    let n = encoder.slots();
    let xs: Vec<f64> = (0..n).map(|i| ((i % 97) as f64 / 48.5) - 1.0).collect();
    let pt = encoder.encode(&xs).unwrap();
    let x = ckks::Encryptor::new(&ctx, &pk)
        .unwrap()
        .encrypt(&pt)
        .unwrap();
    let y = ckks::Encryptor::with_secret_key(&ctx, &sk)
        .unwrap()
        .encrypt(&pt)
        .unwrap();

    let p = eval.mul(&x, &y).unwrap();
    let s = eval.square(&x).unwrap();
    let sum = eval.add(&p, &x).unwrap(); // across levels
    let _ = eval.mul_plain(&sum, &pt).unwrap();
    let _ = eval.rotate(&x, 1).unwrap();
    let _ = eval.rotate_hoisted(&s, &[1, 2, -5]).unwrap();
    let _ = eval.conjugate(&x).unwrap();
    let t = manual.mul_no_relin(&x, &y).unwrap();
    let r = manual.relinearize(&t).unwrap();
    let r = manual.rescale(&r).unwrap();
    let mut acc = x.try_clone().unwrap();
    eval.add_assign(&mut acc, &y).unwrap();
    eval.mul_assign(&mut acc, &r).unwrap();
    let out = encoder
        .decode(
            &ckks::Decryptor::new(&ctx, &sk)
                .unwrap()
                .decrypt(&acc)
                .unwrap(),
        )
        .unwrap();
    // (x + x)·x² at the first slots: the evaluation really ran.
    for (i, got) in out.iter().take(8).enumerate() {
        let v = xs[i];
        assert!(
            (got - 2.0 * v * v * v).abs() < 1e-3,
            "{name}: slot {i}: {got} vs {}",
            2.0 * v * v * v
        );
    }
    assert_eq!(
        device.fused_fallbacks(),
        before,
        "{name}: a fused GPU primitive ran as its composition"
    );
}

/// The BGV evaluation at `lit` on `device`, checked against the plaintext and for fallbacks.
fn bgv_evaluation(name: &str, lit: BgvParametersLiteral, device: Device) {
    let params = lit.build().unwrap();
    let ctx = BgvContext::new(&params, device).unwrap();
    let before = device.fused_fallbacks();

    let mut keygen = bgv::KeyGenerator::from_seed(&ctx, [5; 32]);
    let sk = keygen.secret_key().unwrap();
    let pk = keygen.public_key(&sk).unwrap();
    let rlk = keygen.relinearization_key(&sk).unwrap();
    let gk = keygen.galois_keys(&sk, &[1, -2], true).unwrap();
    let encoder = bgv::Encoder::new(&ctx).unwrap();
    let eval = bgv::Evaluator::new(&ctx)
        .with_relinearization_key(rlk)
        .unwrap()
        .with_galois_keys(gk)
        .unwrap();
    let values: Vec<u64> = (0..encoder.slots() as u64).map(|i| i % 7 + 1).collect();
    let pt = encoder.encode(&values).unwrap();
    let x = bgv::Encryptor::new(&ctx, &pk)
        .unwrap()
        .encrypt(&pt)
        .unwrap();
    let y = bgv::Encryptor::with_secret_key(&ctx, &sk)
        .unwrap()
        .encrypt(&pt)
        .unwrap();
    let p = eval.mul(&x, &y).unwrap();
    let _ = eval.square(&x).unwrap();
    let _ = eval.add(&p, &x).unwrap();
    let _ = eval.rotate_rows(&x, 1).unwrap();
    let _ = eval.rotate_rows_hoisted(&x, &[1, -2]).unwrap();
    let _ = eval.rotate_columns(&x).unwrap();
    let _ = eval.mul_plain(&x, &pt).unwrap();
    let got = encoder
        .decode(&bgv::Decryptor::new(&ctx, &sk).unwrap().decrypt(&p).unwrap())
        .unwrap();
    let t = params.t();
    for (i, (&g, &v)) in got.iter().zip(&values).enumerate().take(16) {
        assert_eq!(g, v * v % t, "{name}: slot {i}");
    }
    assert_eq!(
        device.fused_fallbacks(),
        before,
        "{name}: a fused GPU primitive ran as its composition"
    );
}

macro_rules! gpu_tests {
    ($check:ident: $($test:ident => $lit:expr,)*) => {$(
        #[test]
        #[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
        fn $test() {
            $check(stringify!($test), $lit);
        }
    )*};
}

gpu_tests! { ckks_preset_takes_the_fused_paths:
    ckks_n13_logqp200_levels2 => CkksParametersLiteral::n13_logqp200_levels2(),
    ckks_n14_logqp400_levels7 => CkksParametersLiteral::n14_logqp400_levels7(),
    ckks_n15_logqp400_levels7 => CkksParametersLiteral::n15_logqp400_levels7(),
    ckks_n16_logqp1520_levels26 => CkksParametersLiteral::n16_logqp1520_levels26(),
    ckks_n16_logqp1440_levels24 => CkksParametersLiteral::n16_logqp1440_levels24(),
    ckks_n16_logqp1560_levels24 => CkksParametersLiteral::n16_logqp1560_levels24(),
    ckks_n16_logqp1426_levels20 => CkksParametersLiteral::n16_logqp1426_levels20(),
}

gpu_tests! { bgv_preset_takes_the_fused_paths:
    bgv_he_booster_n13_logqp218 => BgvParametersLiteral::he_booster_n13_logqp218(),
    bgv_he_booster_n14_logqp438 => BgvParametersLiteral::he_booster_n14_logqp438(),
    bgv_he_booster_n15_logqp881 => BgvParametersLiteral::he_booster_n15_logqp881(),
    bgv_n16_logqp1717_batching => BgvParametersLiteral::n16_logqp1717_batching(),
}

/// The same evaluations on the CPU at the small presets: the checks above can fail (the values
/// are right, the CPU never counts a fallback).
#[test]
fn the_evaluations_are_right_on_the_cpu() {
    ckks_evaluation(
        "cpu n13",
        CkksParametersLiteral::n13_logqp200_levels2(),
        Device::Cpu,
    );
    bgv_evaluation(
        "cpu n13",
        BgvParametersLiteral::he_booster_n13_logqp218(),
        Device::Cpu,
    );
}
