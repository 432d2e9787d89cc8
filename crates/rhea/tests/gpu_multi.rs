//! Latency mode over several GPUs (`rhea::unstable::multi`): mul+relin and rotations with the
//! key switching split by limb over 1, 2 and all GPUs give the words of one GPU and of the CPU,
//! at two shapes and at the top and low levels (where the last GPUs hold no ciphertext limb),
//! from random (seeded) messages; the NCCL byte counters match the communication model.
//!
//! The GPU tests are `#[ignore]`d: `cargo test --release -p rhea --test gpu_multi --
//! --include-ignored`. A test that needs more GPUs than the machine has says so and passes,
//! unless `RHEA_REQUIRE_GPU=1` (then it fails). Groups of 2+ GPUs need NCCL, loaded as
//! `libnccl.so` (source `scripts/nccl-env.sh` where only `libnccl.so.2` is installed).

use num_complex::Complex64;
use rhea::ckks::{Ciphertext, CkksContext, Encoder, Encryptor, Evaluator, KeyGenerator};
use rhea::params::CkksParametersLiteral;
use rhea::rlwe::{GaloisKeys, RelinearizationKey};
use rhea::unstable::multi::{GpuGroup, LimbPartition, PartitionKind};
use rhea::unstable::HasRing;
use rhea::Device;

/// Serialises this binary's GPU tests (each builds groups over the same GPUs; NCCL's own
/// ordering is safe, but one test at a time keeps the GPUs' memory and time to one group).
static GPU_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The first `k` GPUs (`k = 0`: all of them, at least one), or `None` with the reason printed
/// when the machine has fewer, unless `RHEA_REQUIRE_GPU=1`.
fn gpus(test: &str, k: usize) -> Option<Vec<Device>> {
    let all = Device::all_gpus();
    let need = k.max(1);
    if all.len() < need {
        if std::env::var("RHEA_REQUIRE_GPU").as_deref() == Ok("1") {
            panic!(
                "{test}: needs {need} GPU(s), the machine has {} (RHEA_REQUIRE_GPU=1)",
                all.len()
            );
        }
        eprintln!(
            "{test}: skipped, needs {need} GPU(s) and the machine has {}",
            all.len()
        );
        return None;
    }
    Some(if k == 0 { all } else { all[..k].to_vec() })
}

/// Shape A: N = 2^12, 6 Q primes, 2 P primes, one digit per Q limb (6 digits).
fn shape_a() -> CkksParametersLiteral {
    CkksParametersLiteral {
        log_n: 12,
        log_q: vec![60, 40, 40, 40, 40, 40],
        log_p: vec![61, 61],
        q: vec![],
        p: vec![],
        log_default_scale: 40,
        dnum: 6,
        secret: Default::default(),
        error_std_dev: 3.2,
        allow_insecure_below_128_bits: false,
    }
    .insecure_allow_below_128_bits()
}

/// Shape B: N = 2^14, 14 Q primes, 5 P primes, 3 digits.
fn shape_b() -> CkksParametersLiteral {
    let mut log_q = vec![60];
    log_q.extend([40; 13]);
    CkksParametersLiteral {
        log_n: 14,
        log_q,
        log_p: vec![61; 5],
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

/// Keys and two ciphertexts of seeded random messages on one device.
struct Setup {
    ctx: CkksContext,
    eval: Evaluator,
    rlk: RelinearizationKey,
    gk: GaloisKeys,
    a: Ciphertext,
    b: Ciphertext,
}

const STEPS: [i64; 2] = [1, -3];

fn setup(lit: &CkksParametersLiteral, device: Device) -> Setup {
    let params = lit.build().expect("parameters");
    let ctx = CkksContext::new(&params, device).expect("context");
    let mut keygen = KeyGenerator::from_seed(&ctx, [29; 32]);
    let sk = keygen.secret_key().unwrap();
    let rlk = keygen.relinearization_key(&sk).unwrap();
    let gk = keygen.galois_keys(&sk, &STEPS, false).unwrap();
    let encoder = Encoder::new(&ctx).unwrap();
    let msg = |seed: u64| -> Vec<Complex64> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..encoder.slots())
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let re = (x % 2001) as f64 / 1000.0 - 1.0;
                Complex64::new(re, ((x >> 20) % 2001) as f64 / 1000.0 - 1.0)
            })
            .collect()
    };
    let enc = Encryptor::with_secret_key(&ctx, &sk)
        .unwrap()
        .with_seed([30; 32]);
    let a = enc
        .encrypt(&encoder.encode_complex(&msg(1)).unwrap())
        .unwrap();
    let b = enc
        .encrypt(&encoder.encode_complex(&msg(2)).unwrap())
        .unwrap();
    let eval = Evaluator::new(&ctx)
        .with_relinearization_key(rlk.clone())
        .unwrap()
        .with_galois_keys(gk.clone())
        .unwrap();
    Setup {
        ctx,
        eval,
        rlk,
        gk,
        a,
        b,
    }
}

fn words(ctx: &CkksContext, ct: &Ciphertext) -> Vec<Vec<u64>> {
    ct.parts()
        .iter()
        .map(|p| ctx.ring().download(p).unwrap())
        .collect()
}

/// The results `(mul_relin, rotate by each step)` at `level` on the setup's device.
fn reference(s: &Setup, level: usize) -> Vec<Vec<Vec<u64>>> {
    let a = s.eval.drop_to_level(&s.a, level).unwrap();
    let b = s.eval.drop_to_level(&s.b, level).unwrap();
    let mut out = vec![words(&s.ctx, &s.eval.mul_relin(&a, &b).unwrap())];
    for step in STEPS {
        out.push(words(&s.ctx, &s.eval.rotate(&a, step).unwrap()));
    }
    out
}

/// The group's results on the CPU setup's ciphertexts and keys, gathered back to the CPU.
fn on_group(
    s: &Setup,
    devices: &[Device],
    kind: PartitionKind,
    overlap: bool,
    level: usize,
) -> Vec<Vec<Vec<u64>>> {
    let mut group =
        GpuGroup::with_partition(&s.ctx, devices, kind).expect("group (NCCL on LD_LIBRARY_PATH?)");
    assert_eq!(group.partition().kind(), kind);
    group.set_overlap(overlap);
    let rlk = group.partition_relinearization_key(&s.rlk).unwrap();
    let rot = group.partition_rotation_keys(&s.gk, &STEPS).unwrap();
    // The key's limbs are split, not copied: the GPUs together hold the key once.
    let ring = s.ctx.ring();
    let key_words = s.rlk.key().dnum() * 2 * (ring.q_len() + ring.p_len()) * ring.n();
    assert_eq!(
        rlk.bytes_per_gpu().iter().sum::<u64>(),
        8 * key_words as u64
    );
    let a = group
        .scatter(&s.eval.drop_to_level(&s.a, level).unwrap())
        .unwrap();
    let b = group
        .scatter(&s.eval.drop_to_level(&s.b, level).unwrap())
        .unwrap();
    group.reset_nccl_counters();
    let prod = group.mul_relin(&a, &b, &rlk).unwrap();
    let model = group.keyswitch_traffic(level);
    let counted = group.nccl_bytes_received();
    for (k, (t, c)) in model.iter().zip(&counted).enumerate() {
        let want = if devices.len() > 1 { t.total() } else { 0 };
        assert_eq!(
            *c, want,
            "GPU {k}: NCCL bytes of one key switching at level {level}"
        );
    }
    let mut out = vec![words(&s.ctx, &group.gather(&prod, &s.ctx).unwrap())];
    for step in STEPS {
        let r = group.rotate(&a, step, &rot).unwrap();
        out.push(words(&s.ctx, &group.gather(&r, &s.ctx).unwrap()));
    }
    out
}

/// CPU, one GPU and a group of `k` GPUs (0: all), its limbs split by the default (strided)
/// partition, agree word for word at the top level, one below (the top limb's GPU holds one
/// fewer), a middle level and level 1; with 2+ GPUs, also with the ModUp exchange overlapped.
fn check(test: &str, lit: CkksParametersLiteral, k: usize) {
    check_with(test, lit, k, PartitionKind::Strided { block: 1 });
}

/// [`check`] with the limbs split by `kind`.
fn check_with(test: &str, lit: CkksParametersLiteral, k: usize, kind: PartitionKind) {
    check_modes(test, lit, k, kind, &[false, true]);
}

/// [`check_with`], for each overlap mode of `overlaps` (only `false` for one GPU).
fn check_modes(
    test: &str,
    lit: CkksParametersLiteral,
    k: usize,
    kind: PartitionKind,
    overlaps: &[bool],
) {
    let _one_at_a_time = GPU_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(devices) = gpus(test, k) else {
        return;
    };
    let overlaps = if devices.len() > 1 {
        overlaps
    } else {
        &[false]
    };
    let cpu = setup(&lit, Device::Cpu);
    let gpu = setup(&lit, devices[0]);
    let top = cpu.a.level();
    for level in [top, top - 1, top / 2 + 1, 1] {
        let want = reference(&cpu, level);
        assert!(
            want[0][0].iter().any(|&w| w != 0),
            "a tautology: zero words"
        );
        assert_eq!(
            reference(&gpu, level),
            want,
            "{test}: one GPU vs the CPU at level {level}"
        );
        for &overlap in overlaps {
            let got = on_group(&cpu, &devices, kind, overlap, level);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                let op = if i == 0 {
                    "mul_relin".to_string()
                } else {
                    format!("rotate {}", STEPS[i - 1])
                };
                assert!(
                    g == w,
                    "{test}: {op} over {} GPU(s) ({kind}, overlap {overlap}) at level {level} \
                     differs",
                    devices.len()
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored)"]
fn multi_one_gpu_group_matches_cpu_shape_a() {
    check("multi_one_gpu_group_matches_cpu_shape_a", shape_a(), 1);
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored)"]
fn multi_one_gpu_group_matches_cpu_shape_b() {
    check("multi_one_gpu_group_matches_cpu_shape_b", shape_b(), 1);
}

#[test]
#[ignore = "needs 2 CUDA GPUs and NCCL (run with --include-ignored)"]
fn multi_two_gpus_match_cpu_shape_a() {
    check("multi_two_gpus_match_cpu_shape_a", shape_a(), 2);
}

#[test]
#[ignore = "needs 2 CUDA GPUs and NCCL (run with --include-ignored)"]
fn multi_two_gpus_match_cpu_shape_b() {
    check("multi_two_gpus_match_cpu_shape_b", shape_b(), 2);
}

#[test]
#[ignore = "needs 2 CUDA GPUs and NCCL (run with --include-ignored)"]
fn multi_two_gpus_other_partitions_match_cpu() {
    let test = "multi_two_gpus_other_partitions_match_cpu";
    check_with(test, shape_a(), 2, PartitionKind::Contiguous);
    check_with(test, shape_b(), 2, PartitionKind::Strided { block: 2 });
}

#[test]
#[ignore = "needs CUDA GPUs (all of the machine's; NCCL for 2+) (run with --include-ignored)"]
fn multi_all_gpus_match_cpu_shape_a() {
    check("multi_all_gpus_match_cpu_shape_a", shape_a(), 0);
}

#[test]
#[ignore = "needs CUDA GPUs (all of the machine's; NCCL for 2+) (run with --include-ignored)"]
fn multi_all_gpus_match_cpu_shape_b() {
    check("multi_all_gpus_match_cpu_shape_b", shape_b(), 0);
}

/// Wrong requests are typed errors on any machine (no GPU needed).
#[test]
fn multi_group_requests_are_checked() {
    let params = shape_a().build().unwrap();
    let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
    for devices in [vec![], vec![Device::Cpu]] {
        let e = GpuGroup::new(&ctx, &devices).unwrap_err();
        assert!(matches!(e, rhea::Error::InvalidInput(_)), "{e}");
    }
    // More GPUs than Q limbs cannot be split.
    assert!(LimbPartition::new(6, 2, 7).is_err());
    let p = LimbPartition::new(6, 2, 4).unwrap();
    // Strided: GPU 1 holds limbs 1 and 5, GPU 3 limb 3 only.
    assert_eq!(p.q_limbs(1), &[1, 5]);
    assert_eq!(p.q_limbs(3), &[3]);
    assert!(p.p_range(3).is_empty());
    let c = LimbPartition::with_kind(6, 2, 4, PartitionKind::Contiguous).unwrap();
    assert_eq!(c.q_limbs(3), &[5]);
    // Blocks of no limb (checked before any device is touched).
    let two = [Device::Cuda(0), Device::Cuda(1)];
    let e = GpuGroup::with_partition(&ctx, &two, PartitionKind::Strided { block: 0 }).unwrap_err();
    assert!(matches!(e, rhea::Error::InvalidInput(_)), "{e}");
}
