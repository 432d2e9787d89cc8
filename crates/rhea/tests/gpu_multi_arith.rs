//! The element-wise operations of a GPU group (`rhea::unstable::multi`, issue 37): add, sub,
//! neg, mul_int, mul_const_with_scale, add_const, drop_to_level, add_plain and mul_plain over
//! 1, 2 and all GPUs (strided; contiguous and blocks of 2 on two GPUs) — and conjugate, with
//! a key set of its own and merged with a rotation's — give the words of the
//! CPU's `Evaluator` (manual rescaling), from seeded random messages, at the top level and at a
//! low level (where the last GPUs hold no limb), with a plaintext above the ciphertext's level
//! read at the ciphertext's level; a composition with mul_relin and rescale (a degree-2
//! polynomial, `Evaluator`'s words); and the typed errors (levels, scales, another split).
//!
//! `#[ignore]`d: `cargo test --release -p rhea --test gpu_multi_arith -- --include-ignored`. A
//! test that needs more GPUs than the machine has says so and passes, unless
//! `RHEA_REQUIRE_GPU=1`. Groups of 2+ GPUs need NCCL (`scripts/nccl-env.sh`).

use rhea::ckks::{Ciphertext, CkksContext, Encoder, Encryptor, Evaluator, KeyGenerator};
use rhea::params::CkksParametersLiteral;
use rhea::unstable::multi::{
    GpuGroup, PartitionKind, PartitionedCiphertext, PartitionedGaloisKeys,
};
use rhea::unstable::HasRing;
use rhea::{Device, Error};

/// The default split: limb `i` on GPU `i mod K`.
const STRIDED: PartitionKind = PartitionKind::Strided { block: 1 };

static GPU_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The first `k` GPUs (`k = 0`: all, at least one), or `None` (said) when the machine has
/// fewer, unless `RHEA_REQUIRE_GPU=1`.
fn gpus(test: &str, k: usize) -> Option<Vec<Device>> {
    let all = Device::all_gpus();
    let need = k.max(1);
    if all.len() < need {
        assert_ne!(
            std::env::var("RHEA_REQUIRE_GPU").as_deref(),
            Ok("1"),
            "{test}: needs {need} GPU(s), the machine has {}",
            all.len()
        );
        eprintln!(
            "{test}: skipped, needs {need} GPU(s), the machine has {}",
            all.len()
        );
        return None;
    }
    Some(if k == 0 { all } else { all[..k].to_vec() })
}

/// N = 2^`log_n`, 9 Q primes, 3 P primes, 3 digits.
fn shape(log_n: u32) -> CkksParametersLiteral {
    let mut log_q = vec![60];
    log_q.extend([40; 8]);
    CkksParametersLiteral {
        log_n,
        log_q,
        log_p: vec![61; 3],
        q: vec![],
        p: vec![],
        log_default_scale: 40,
        dnum: 3,
        secret: Default::default(),
        error_std_dev: 3.2,
        allow_insecure_below_128_bits: false,
    }
    .insecure_allow_below_128_bits()
}

fn words(ctx: &CkksContext, ct: &Ciphertext) -> Vec<Vec<u64>> {
    ct.parts()
        .iter()
        .map(|p| ctx.ring().download(p).unwrap())
        .collect()
}

fn back(group: &GpuGroup, ct: &PartitionedCiphertext, cpu: &CkksContext) -> Vec<Vec<u64>> {
    words(cpu, &group.gather(ct, cpu).unwrap())
}

/// Seeded messages in (−1, 1).
fn message(slots: usize, seed: u64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..slots)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

fn check_all(test: &str, log_n: u32, devices: &[Device], kind: PartitionKind) {
    let params = shape(log_n).build().unwrap();
    let cpu = CkksContext::new(&params, Device::Cpu).unwrap();
    let mut keygen = KeyGenerator::from_seed(&cpu, [71; 32]);
    let sk = keygen.secret_key().unwrap();
    let rlk = keygen.relinearization_key(&sk).unwrap();
    let gk = keygen.galois_keys(&sk, &[1], true).unwrap();
    let eval = Evaluator::new(&cpu)
        .with_auto_rescale(false)
        .with_relinearization_key(rlk.clone())
        .unwrap()
        .with_galois_keys(gk.clone())
        .unwrap();
    let enc = Encryptor::with_secret_key(&cpu, &sk)
        .unwrap()
        .with_seed([72; 32]);
    let encoder = Encoder::new(&cpu).unwrap();
    let top = params.max_level();
    let a = enc
        .encrypt(&encoder.encode(&message(encoder.slots(), 1)).unwrap())
        .unwrap();
    let b = enc
        .encrypt(&encoder.encode(&message(encoder.slots(), 2)).unwrap())
        .unwrap();
    let scale = params.default_scale();
    let pt = encoder
        .encode_at(&message(encoder.slots(), 3), top, scale)
        .unwrap();
    assert!(words(&cpu, &a)[0].iter().any(|&w| w != 0), "zero words");

    let group = GpuGroup::with_partition(&cpu, devices, kind).expect("group (NCCL?)");
    let conj = group.partition_conjugation_key(&gk).unwrap();
    let keys = group
        .partition_rotation_keys(&gk, &[1])
        .unwrap()
        .with(group.partition_conjugation_key(&gk).unwrap());
    assert_eq!(keys.elements().len(), 2);
    let (ga, gb, gp) = (
        group.scatter(&a).unwrap(),
        group.scatter(&b).unwrap(),
        group.scatter_plaintext(&pt).unwrap(),
    );
    let k = devices.len();
    let at =
        |what: &str, level: usize| format!("{test}: {what} on {k} GPU(s) {kind}, level {level}");
    // The top level, then level 1 (2 limbs: with 3+ GPUs some hold none) with the plaintext
    // left at the top.
    for level in [top, 1] {
        let (x, y) = (
            eval.drop_to_level(&a, level).unwrap(),
            eval.drop_to_level(&b, level).unwrap(),
        );
        let (gx, gy) = (
            group.drop_to_level(&ga, level).unwrap(),
            group.drop_to_level(&gb, level).unwrap(),
        );
        assert_eq!(
            back(&group, &gx, &cpu),
            words(&cpu, &x),
            "{}",
            at("drop_to_level", level)
        );
        let cases: Vec<(&str, Ciphertext, PartitionedCiphertext)> = vec![
            (
                "add",
                eval.add(&x, &y).unwrap(),
                group.add(&gx, &gy).unwrap(),
            ),
            (
                "sub",
                eval.sub(&x, &y).unwrap(),
                group.sub(&gx, &gy).unwrap(),
            ),
            ("neg", eval.neg(&x).unwrap(), group.neg(&gx).unwrap()),
            (
                "mul_int",
                eval.mul_int(&x, -7).unwrap(),
                group.mul_int(&gx, -7).unwrap(),
            ),
            (
                "mul_const_with_scale",
                eval.mul_const_with_scale(&x, -0.3125, 2f64.powi(20))
                    .unwrap(),
                group
                    .mul_const_with_scale(&gx, -0.3125, 2f64.powi(20))
                    .unwrap(),
            ),
            (
                "add_const",
                eval.add_const(&x, 0.75).unwrap(),
                group.add_const(&gx, 0.75).unwrap(),
            ),
            (
                "add_plain",
                eval.add_plain(&x, &pt).unwrap(),
                group.add_plain(&gx, &gp).unwrap(),
            ),
            (
                "mul_plain",
                eval.mul_plain(&x, &pt).unwrap(),
                group.mul_plain(&gx, &gp).unwrap(),
            ),
            (
                "conjugate",
                eval.conjugate(&x).unwrap(),
                group.conjugate(&gx, &conj).unwrap(),
            ),
            (
                "conjugate (a merged key set)",
                eval.conjugate(&x).unwrap(),
                group.conjugate(&gx, &keys).unwrap(),
            ),
            (
                "rotate (a merged key set)",
                eval.rotate(&x, 1).unwrap(),
                group.rotate(&gx, 1, &keys).unwrap(),
            ),
        ];
        for (op, want, got) in &cases {
            assert_eq!(got.level(), want.level(), "{}", at(op, level));
            assert_eq!(got.scale(), want.scale(), "{}", at(op, level));
            assert_eq!(
                back(&group, got, &cpu),
                words(&cpu, want),
                "{}",
                at(op, level)
            );
        }
    }
    // A degree-2 polynomial 0.5·(a² + a·pt) − 1.25: mul_relin, mul_plain (the plaintext at
    // the ciphertexts' scale: both products land on one scale), rescale, add,
    // mul_const_with_scale, add_const over the group against the evaluator.
    let want = {
        let sq = eval.rescale(&eval.mul_relin(&a, &a).unwrap()).unwrap();
        let lin = eval.rescale(&eval.mul_plain(&a, &pt).unwrap()).unwrap();
        let sum = eval.add(&sq, &lin).unwrap();
        let half = eval
            .rescale(&eval.mul_const_with_scale(&sum, 0.5, scale).unwrap())
            .unwrap();
        eval.add_const(&half, -1.25).unwrap()
    };
    let got = {
        let key = group.partition_relinearization_key(&rlk).unwrap();
        let sq = group
            .rescale(&group.mul_relin(&ga, &ga, &key).unwrap())
            .unwrap();
        let lin = group.rescale(&group.mul_plain(&ga, &gp).unwrap()).unwrap();
        let sum = group.add(&sq, &lin).unwrap();
        let half = group
            .rescale(&group.mul_const_with_scale(&sum, 0.5, scale).unwrap())
            .unwrap();
        group.add_const(&half, -1.25).unwrap()
    };
    assert_eq!(
        back(&group, &got, &cpu),
        words(&cpu, &want),
        "{}",
        at("polynomial", got.level())
    );
    assert!(
        (got.scale() / want.scale() - 1.0).abs() < 1e-12,
        "{}",
        at("polynomial scale", got.level())
    );

    // Typed errors: two levels, two scales, a plaintext below the ciphertext, another split.
    let low = group.drop_to_level(&ga, 1).unwrap();
    assert!(matches!(group.add(&ga, &low), Err(Error::InvalidInput(_))));
    let scaled = group.mul_const_with_scale(&ga, 1.0, 2f64.powi(10)).unwrap();
    assert!(matches!(
        group.add(&ga, &scaled),
        Err(Error::ScaleMismatch { .. })
    ));
    let low_pt = group
        .scatter_plaintext(
            &encoder
                .encode_at(&message(encoder.slots(), 4), 1, scale)
                .unwrap(),
        )
        .unwrap();
    assert!(matches!(
        group.mul_plain(&ga, &low_pt),
        Err(Error::LevelUnderflow { .. })
    ));
    assert!(matches!(
        group.drop_to_level(&low, 2),
        Err(Error::LevelUnderflow { .. })
    ));
    assert!(matches!(
        group.conjugate(&ga, &PartitionedGaloisKeys::default()),
        Err(Error::MissingConjugationKey { .. })
    ));
    let rotations_only = keygen.galois_keys(&sk, &[1], false).unwrap();
    assert!(matches!(
        group.partition_conjugation_key(&rotations_only),
        Err(Error::MissingConjugationKey { .. })
    ));
    if devices.len() >= 2 && kind == STRIDED {
        let other = GpuGroup::with_partition(&cpu, devices, PartitionKind::Contiguous).unwrap();
        let foreign = other.scatter(&a).unwrap();
        assert!(matches!(
            group.add(&ga, &foreign),
            Err(Error::GroupMismatch { .. })
        ));
        let foreign_pt = other.scatter_plaintext(&pt).unwrap();
        assert!(matches!(
            group.add_plain(&ga, &foreign_pt),
            Err(Error::GroupMismatch { .. })
        ));
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored)"]
fn one_gpu_matches_cpu() {
    let _held = GPU_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(d) = gpus("one_gpu_matches_cpu", 1) else {
        return;
    };
    check_all("one GPU", 13, &d, STRIDED);
}

#[test]
#[ignore = "needs two CUDA GPUs (run with --include-ignored)"]
fn two_gpus_match_cpu_every_split() {
    let _held = GPU_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(d) = gpus("two_gpus_match_cpu_every_split", 2) else {
        return;
    };
    for kind in [
        STRIDED,
        PartitionKind::Contiguous,
        PartitionKind::Strided { block: 2 },
    ] {
        check_all("two GPUs", 13, &d, kind);
    }
    // A ring below the fast NTT kernels.
    check_all("two GPUs, N = 2^11", 11, &d, STRIDED);
}

#[test]
#[ignore = "needs CUDA GPUs (run with --include-ignored)"]
fn all_gpus_match_cpu() {
    let _held = GPU_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(d) = gpus("all_gpus_match_cpu", 0) else {
        return;
    };
    check_all("all GPUs", 13, &d, STRIDED);
}
