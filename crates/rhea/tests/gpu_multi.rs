//! Latency mode over several GPUs (`rhea::unstable::multi`): mul+relin and rotations with the
//! key switching split by limb over 1, 2 and all GPUs give the words of one GPU and of the CPU,
//! at two shapes and at the top and low levels (where the last GPUs hold no ciphertext limb),
//! from random (seeded) messages; the NCCL byte counters match the communication model. The
//! same for rescale and mul_relin_rescale over a group, at every level of the small shapes (the
//! last limb's owner alternating between the GPUs), on a ring below the fast NTT kernels and at
//! the N = 2^17 bootstrapping preset's parameters. Hoisted rotations over a group
//! (`GpuGroup::rotate_many`: steps with repeats, negative ones, 0 and `N/2`) give the words of
//! one rotation at a time on one GPU and on the CPU, with one ModUp exchange for all of them.
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
    /// The steps of the hoisted rotations ([`hoisted_steps`]).
    hoisted: Vec<i64>,
}

const STEPS: [i64; 2] = [1, -3];

/// The hoisted rotations' steps at ring degree `n`: negative ones, a repeat (computed once),
/// 0 and `n/2` (Galois element 1: copies), the single rotations' steps among them.
fn hoisted_steps(n: usize) -> Vec<i64> {
    vec![2, -3, 0, 1, -1, (n / 2) as i64, 2, 7]
}

/// The distinct Galois elements other than 1 among `steps`: one ModDown exchange each.
fn keyed_elements(ctx: &CkksContext, steps: &[i64]) -> usize {
    let mut g: Vec<u64> = steps
        .iter()
        .map(|&k| ctx.rlwe().galois_element_for_rotation(k))
        .filter(|&g| g != 1)
        .collect();
    g.sort_unstable();
    g.dedup();
    g.len()
}

fn setup(lit: &CkksParametersLiteral, device: Device) -> Setup {
    let params = lit.build().expect("parameters");
    let ctx = CkksContext::new(&params, device).expect("context");
    let mut keygen = KeyGenerator::from_seed(&ctx, [29; 32]);
    let sk = keygen.secret_key().unwrap();
    let rlk = keygen.relinearization_key(&sk).unwrap();
    let hoisted = hoisted_steps(ctx.ring().n());
    let mut all_steps = STEPS.to_vec();
    all_steps.extend(&hoisted);
    let gk = keygen.galois_keys(&sk, &all_steps, false).unwrap();
    let encoder = Encoder::new(&ctx).unwrap();
    let msg = |seed: u64| message(encoder.slots(), seed);
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
        hoisted,
    }
}

/// `slots` seeded random complex values in the unit square.
fn message(slots: usize, seed: u64) -> Vec<Complex64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..slots)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let re = (x % 2001) as f64 / 1000.0 - 1.0;
            Complex64::new(re, ((x >> 20) % 2001) as f64 / 1000.0 - 1.0)
        })
        .collect()
}

fn words(ctx: &CkksContext, ct: &Ciphertext) -> Vec<Vec<u64>> {
    ct.parts()
        .iter()
        .map(|p| ctx.ring().download(p).unwrap())
        .collect()
}

/// The results `(mul_relin, rotate by each step, rotate by each hoisted step)` at `level` on
/// the setup's device, the hoisted ones one rotation at a time (and checked against the
/// device's own hoisted rotations, `Evaluator::rotate_hoisted`).
fn reference(s: &Setup, level: usize) -> Vec<Vec<Vec<u64>>> {
    let a = s.eval.drop_to_level(&s.a, level).unwrap();
    let b = s.eval.drop_to_level(&s.b, level).unwrap();
    let mut out = vec![words(&s.ctx, &s.eval.mul_relin(&a, &b).unwrap())];
    for step in STEPS {
        out.push(words(&s.ctx, &s.eval.rotate(&a, step).unwrap()));
    }
    let hoisted = s.eval.rotate_hoisted(&a, &s.hoisted).unwrap();
    for (&step, h) in s.hoisted.iter().zip(&hoisted) {
        let one = words(&s.ctx, &s.eval.rotate(&a, step).unwrap());
        assert!(
            words(&s.ctx, h) == one,
            "rotate_hoisted by {step} vs rotate"
        );
        out.push(one);
    }
    out
}

/// The label of result `i` of [`reference`].
fn op_name(s: &Setup, i: usize) -> String {
    match i {
        0 => "mul_relin".into(),
        i if i <= STEPS.len() => format!("rotate {}", STEPS[i - 1]),
        i => format!("rotate_many, step {}", s.hoisted[i - 1 - STEPS.len()]),
    }
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
    let mut all_steps = STEPS.to_vec();
    all_steps.extend(&s.hoisted);
    let rot = group.partition_rotation_keys(&s.gk, &all_steps).unwrap();
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
    // Hoisted: one ModUp exchange for all the rotations, one ModDown exchange per distinct
    // keyed element (the repeat and the copies exchange nothing).
    group.reset_nccl_counters();
    let many = group.rotate_many(&a, &s.hoisted, &rot).unwrap();
    group.synchronize().unwrap();
    let keyed = keyed_elements(&s.ctx, &s.hoisted) as u64;
    for (k, (t, c)) in model.iter().zip(group.nccl_bytes_received()).enumerate() {
        let want = if devices.len() > 1 {
            t.modup_bytes + keyed * t.moddown_bytes
        } else {
            0
        };
        assert_eq!(
            c,
            want,
            "GPU {k}: NCCL bytes of {} hoisted rotations ({keyed} keyed) at level {level}",
            s.hoisted.len()
        );
    }
    assert_eq!(many.len(), s.hoisted.len());
    for r in &many {
        assert_eq!((r.level(), r.components()), (level, 2));
        assert_eq!(r.scale().to_bits(), a.scale().to_bits());
        out.push(words(&s.ctx, &group.gather(r, &s.ctx).unwrap()));
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
            assert_eq!(got.len(), want.len());
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                let op = op_name(&cpu, i);
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

// ---------------------------------------------------------------------------------- rescale

/// Shape C: N = 2^11, below the fast NTT kernels (the composed launches), 5 Q primes.
fn shape_c() -> CkksParametersLiteral {
    CkksParametersLiteral {
        log_n: 11,
        log_q: vec![50, 35, 35, 35, 35],
        log_p: vec![55],
        q: vec![],
        p: vec![],
        log_default_scale: 35,
        dnum: 5,
        secret: Default::default(),
        error_std_dev: 3.2,
        allow_insecure_below_128_bits: false,
    }
    .insecure_allow_below_128_bits()
}

/// The parameters of the bootstrapping preset `boot_n17_levels24` (N = 2^17, 39 Q primes of
/// 60, 42, 40, 60 and 56 bits, 10 P primes, 4 digits), which `rhea bench multi --mode latency`
/// runs.
fn preset_n17() -> CkksParametersLiteral {
    rhea::ckks::bootstrap::BootstrapPreset::by_name("boot_n17_levels24")
        .expect("the preset")
        .params
}

/// The rescale tests' inputs: the relinearisation key and two ciphertexts of seeded random
/// messages, made on `make` (a GPU: fast at N = 2^17) and moved to the CPU, and the evaluators
/// of the CPU and of `gpu` holding that key.
struct RescaleSetup {
    cpu: CkksContext,
    cpu_eval: Evaluator,
    gpu: CkksContext,
    gpu_eval: Evaluator,
    /// On the CPU (the groups take keys from anywhere).
    rlk: RelinearizationKey,
    /// On the CPU, at the encryption level.
    a: Ciphertext,
    b: Ciphertext,
}

fn rescale_setup(lit: &CkksParametersLiteral, make: Device, gpu: Device) -> RescaleSetup {
    let params = lit.build().expect("parameters");
    let made = CkksContext::new(&params, make).expect("context");
    let mut keygen = KeyGenerator::from_seed(&made, [31; 32]);
    let sk = keygen.secret_key().unwrap();
    let rlk = keygen.relinearization_key(&sk).unwrap();
    let encoder = Encoder::new(&made).unwrap();
    let enc = Encryptor::with_secret_key(&made, &sk)
        .unwrap()
        .with_seed([32; 32]);
    let ct = |seed: u64| {
        enc.encrypt(
            &encoder
                .encode_complex(&message(encoder.slots(), seed))
                .unwrap(),
        )
        .unwrap()
    };
    let (a, b) = (ct(3), ct(4));
    let cpu = CkksContext::new(&params, Device::Cpu).unwrap();
    let gpu = CkksContext::new(&params, gpu).unwrap();
    let eval_on = |ctx: &CkksContext| {
        Evaluator::new(ctx)
            .with_relinearization_key(rlk.to_device(ctx).unwrap())
            .unwrap()
    };
    RescaleSetup {
        cpu_eval: eval_on(&cpu),
        gpu_eval: eval_on(&gpu),
        rlk: rlk.to_device(&cpu).unwrap(),
        a: a.to_device(&cpu).unwrap(),
        b: b.to_device(&cpu).unwrap(),
        cpu,
        gpu,
    }
}

/// Which levels a rescale test runs (`top` is the encryption level).
#[derive(Clone, Copy)]
enum Levels {
    /// Every level from `top` down to 1.
    All,
    /// `top`, `top − 1`, `top / 2`, 2 and 1 (the last limb's owner alternates between two GPUs
    /// from one to the next but the middle).
    Some,
}

impl Levels {
    fn of(self, top: usize) -> Vec<usize> {
        let mut l = match self {
            Levels::All => (1..=top).rev().collect(),
            Levels::Some => vec![top, top - 1, top / 2, 2, 1],
        };
        l.dedup();
        l
    }
}

/// `rescale` (of the 2-component `a` and of the 3-component unrelinearised `a · b`) and, where
/// `mul` says, `mul_relin_rescale(a, b)` over a group of `k` GPUs (0: all) split by `kind`, at
/// `levels`: the words and the scale of one GPU's `Evaluator` and of the CPU's (the CPU's
/// `mul_relin_rescale` only where `cpu_mul` says: it is slow at N = 2^17), the level one
/// lower, and the NCCL bytes of the model (the rescale: the owner of the last limb sends
/// `components · N` words to each other GPU). Then level 0 is a `LevelUnderflow`.
fn check_rescale(
    test: &str,
    lit: CkksParametersLiteral,
    k: usize,
    kind: PartitionKind,
    levels: Levels,
    mul: impl Fn(usize) -> bool,
    cpu_mul: impl Fn(usize) -> bool,
) {
    let _one_at_a_time = GPU_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(devices) = gpus(test, k) else {
        return;
    };
    let s = rescale_setup(&lit, devices[0], devices[0]);
    let group =
        GpuGroup::with_partition(&s.cpu, &devices, kind).expect("group (NCCL on LD_LIBRARY_PATH?)");
    let rlk = group.partition_relinearization_key(&s.rlk).unwrap();
    let n = s.cpu.ring().n() as u64;
    let multi = devices.len() > 1;
    let top = s.a.level();
    let mut owners = std::collections::BTreeSet::new();
    for level in levels.of(top) {
        let a = s.cpu_eval.drop_to_level(&s.a, level).unwrap();
        let b = s.cpu_eval.drop_to_level(&s.b, level).unwrap();
        // Limb `level` is the top one: its GPU broadcasts it.
        let (owner, local) = group.partition().owner_of_q(level).unwrap();
        assert_eq!(
            local + 1,
            group.partition().q_active(owner, level + 1).len()
        );
        owners.insert(owner);
        let at = |what: &str| {
            format!(
                "{test}: {what} over {} GPU(s) ({kind}) at level {level} (limb {level} on GPU \
                 {owner})",
                devices.len()
            )
        };
        let t = s.cpu_eval.mul_no_relin(&a, &b).unwrap();
        for (what, x) in [("rescale", &a), ("rescale of 3 components", &t)] {
            let want = s.cpu_eval.rescale(x).unwrap();
            let ww = words(&s.cpu, &want);
            assert!(ww[0].iter().any(|&w| w != 0), "a tautology: zero words");
            assert_eq!(want.level(), level - 1);
            let one = s.gpu_eval.rescale(&x.to_device(&s.gpu).unwrap()).unwrap();
            assert!(words(&s.gpu, &one) == ww, "{}", at("one GPU vs the CPU"));
            let px = group.scatter(x).unwrap();
            group.reset_nccl_counters();
            let r = group.rescale(&px).unwrap();
            group.synchronize().unwrap();
            let comps = x.parts().len() as u64;
            let counted = group.nccl_bytes_received();
            for (g, c) in counted.iter().enumerate() {
                let want_bytes = if multi && g != owner {
                    comps * n * 8
                } else {
                    0
                };
                assert_eq!(*c, want_bytes, "{}: NCCL bytes of GPU {g}", at(what));
            }
            assert_eq!(r.level(), level - 1, "{}", at(what));
            assert_eq!(r.components(), x.parts().len());
            assert_eq!(r.scale().to_bits(), want.scale().to_bits(), "{}", at(what));
            let got = group.gather(&r, &s.cpu).unwrap();
            assert_eq!(got.scale().to_bits(), want.scale().to_bits());
            assert!(words(&s.cpu, &got) == ww, "{} differs", at(what));
        }
        if !mul(level) {
            continue;
        }
        let one = s
            .gpu_eval
            .mul_relin_rescale(&a.to_device(&s.gpu).unwrap(), &b.to_device(&s.gpu).unwrap())
            .unwrap();
        let wo = words(&s.gpu, &one);
        assert!(wo[1].iter().any(|&w| w != 0), "a tautology: zero words");
        if cpu_mul(level) {
            let cpu = s.cpu_eval.mul_relin_rescale(&a, &b).unwrap();
            assert!(
                words(&s.cpu, &cpu) == wo,
                "{}",
                at("mul_relin_rescale, one GPU vs the CPU")
            );
            assert_eq!(cpu.scale().to_bits(), one.scale().to_bits());
        }
        let (pa, pb) = (group.scatter(&a).unwrap(), group.scatter(&b).unwrap());
        group.reset_nccl_counters();
        let m = group.mul_relin_rescale(&pa, &pb, &rlk).unwrap();
        group.synchronize().unwrap();
        let model = group.keyswitch_traffic(level);
        for (g, (c, ks)) in group.nccl_bytes_received().iter().zip(&model).enumerate() {
            let want_bytes = if multi {
                ks.total() + if g != owner { 2 * n * 8 } else { 0 }
            } else {
                0
            };
            assert_eq!(
                *c,
                want_bytes,
                "{}: NCCL bytes of GPU {g}",
                at("mul_relin_rescale")
            );
        }
        assert_eq!(m.level(), level - 1);
        assert_eq!(
            m.scale().to_bits(),
            one.scale().to_bits(),
            "{}",
            at("mul_relin_rescale")
        );
        let got = words(&s.cpu, &group.gather(&m, &s.cpu).unwrap());
        assert!(got == wo, "{} differs", at("mul_relin_rescale"));
        // What users chain by hand: the same words.
        let chained = group
            .rescale(&group.mul_relin(&pa, &pb, &rlk).unwrap())
            .unwrap();
        let chained = words(&s.cpu, &group.gather(&chained, &s.cpu).unwrap());
        assert!(chained == wo, "{} differs", at("mul_relin then rescale"));
    }
    if multi && matches!(kind, PartitionKind::Strided { block: 1 }) {
        assert!(owners.len() > 1, "{test}: the last limb on one GPU only");
    }
    // Level 0: nothing to drop.
    let z = group
        .scatter(&s.cpu_eval.drop_to_level(&s.a, 0).unwrap())
        .unwrap();
    match group.rescale(&z) {
        Err(rhea::Error::LevelUnderflow {
            op: "rescale",
            level: 0,
            needed: 1,
        }) => {}
        other => panic!("{test}: rescale at level 0 gave {other:?}"),
    }
    match group.mul_relin_rescale(&z, &z, &rlk) {
        Err(rhea::Error::LevelUnderflow {
            op: "mul_relin_rescale",
            level: 0,
            needed: 1,
        }) => {}
        other => panic!("{test}: mul_relin_rescale at level 0 gave {other:?}"),
    }
}

/// [`check_rescale`] at every level of shapes A and B (mul_relin_rescale too, at every level of
/// A and at five of B) with the default split.
fn check_rescale_small(test: &str, k: usize) {
    let strided = PartitionKind::Strided { block: 1 };
    check_rescale(test, shape_a(), k, strided, Levels::All, |_| true, |_| true);
    let some = Levels::Some.of(shape_b().log_q.len() - 1);
    let mul = |l: usize| some.contains(&l);
    check_rescale(test, shape_b(), k, strided, Levels::All, mul, mul);
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored)"]
fn multi_rescale_one_gpu_group_matches_cpu() {
    check_rescale_small("multi_rescale_one_gpu_group_matches_cpu", 1);
}

#[test]
#[ignore = "needs 2 CUDA GPUs and NCCL (run with --include-ignored)"]
fn multi_rescale_two_gpus_match_cpu() {
    check_rescale_small("multi_rescale_two_gpus_match_cpu", 2);
}

#[test]
#[ignore = "needs CUDA GPUs (all of the machine's; NCCL for 2+) (run with --include-ignored)"]
fn multi_rescale_all_gpus_match_cpu() {
    // Shape B only: its 14 limbs split over up to 14 GPUs (shape A's 6 would not over 8).
    let test = "multi_rescale_all_gpus_match_cpu";
    let strided = PartitionKind::Strided { block: 1 };
    check_rescale(test, shape_b(), 0, strided, Levels::All, |_| true, |_| true);
}

#[test]
#[ignore = "needs 2 CUDA GPUs and NCCL (run with --include-ignored)"]
fn multi_rescale_two_gpus_other_partitions_match_cpu() {
    let test = "multi_rescale_two_gpus_other_partitions_match_cpu";
    let all = |_: usize| true;
    // Contiguous: limbs 3..6 on GPU 1, so the top limb's owner is GPU 1 down to level 3, then
    // GPU 0 (GPU 1 then holds no limb, and receives the broadcast all the same).
    let contiguous = PartitionKind::Contiguous;
    check_rescale(test, shape_a(), 2, contiguous, Levels::All, all, all);
    let blocks = PartitionKind::Strided { block: 2 };
    check_rescale(test, shape_b(), 2, blocks, Levels::All, all, all);
}

/// Below the fast NTT kernels (N = 2^11): the composed launches of the rescale, every level.
/// The key switching of `mul_relin_rescale` is left to
/// `multi_small_ring_mul_relin_rescale_matches_cpu`.
fn check_rescale_small_ring(test: &str, k: usize) {
    let strided = PartitionKind::Strided { block: 1 };
    check_rescale(
        test,
        shape_c(),
        k,
        strided,
        Levels::All,
        |_| false,
        |_| false,
    );
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored)"]
fn multi_rescale_small_ring_one_gpu_matches_cpu() {
    check_rescale_small_ring("multi_rescale_small_ring_one_gpu_matches_cpu", 1);
}

#[test]
#[ignore = "needs 2 CUDA GPUs and NCCL (run with --include-ignored)"]
fn multi_rescale_small_ring_two_gpus_match_cpu() {
    check_rescale_small_ring("multi_rescale_small_ring_two_gpus_match_cpu", 2);
}

/// `mul_relin_rescale` at N = 2^11 over 1 and 2 GPUs: also the group's key switching without
/// the fast NTT kernels (the composed path, which the other tests' shapes do not reach).
#[test]
#[ignore = "needs a CUDA GPU; 2 and NCCL for the second half (run with --include-ignored)"]
fn multi_small_ring_mul_relin_rescale_matches_cpu() {
    let test = "multi_small_ring_mul_relin_rescale_matches_cpu";
    let strided = PartitionKind::Strided { block: 1 };
    for k in [1, 2] {
        check_rescale(test, shape_c(), k, strided, Levels::All, |_| true, |_| true);
    }
}

/// The N = 2^17 preset (39 Q primes of mixed sizes): rescale at five levels against one GPU
/// and the CPU, mul_relin_rescale at the same levels against one GPU and at levels 2 and 1
/// against the CPU too.
fn check_rescale_n17(test: &str, k: usize) {
    let strided = PartitionKind::Strided { block: 1 };
    let cpu_mul = |l: usize| l <= 2;
    check_rescale(
        test,
        preset_n17(),
        k,
        strided,
        Levels::Some,
        |_| true,
        cpu_mul,
    );
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored)"]
fn multi_rescale_n17_one_gpu_group_matches_cpu() {
    check_rescale_n17("multi_rescale_n17_one_gpu_group_matches_cpu", 1);
}

#[test]
#[ignore = "needs 2 CUDA GPUs and NCCL (run with --include-ignored)"]
fn multi_rescale_n17_two_gpus_match_cpu() {
    check_rescale_n17("multi_rescale_n17_two_gpus_match_cpu", 2);
}

/// A ciphertext split for another group is refused (a group of one's ciphertext given to a
/// group of two: a `GroupMismatch`), as is one of other parameters.
#[test]
#[ignore = "needs 2 CUDA GPUs and NCCL (run with --include-ignored)"]
fn multi_rescale_refuses_other_groups_ciphertexts() {
    let test = "multi_rescale_refuses_other_groups_ciphertexts";
    let _one_at_a_time = GPU_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(devices) = gpus(test, 2) else {
        return;
    };
    let s = rescale_setup(&shape_a(), devices[0], devices[0]);
    let one = GpuGroup::new(&s.cpu, &devices[..1]).unwrap();
    let two = GpuGroup::new(&s.cpu, &devices).unwrap();
    let rlk = two.partition_relinearization_key(&s.rlk).unwrap();
    let x = one.scatter(&s.a).unwrap();
    let e = two.rescale(&x).unwrap_err();
    assert!(matches!(e, rhea::Error::GroupMismatch { .. }), "{e}");
    let e = two.mul_relin_rescale(&x, &x, &rlk).unwrap_err();
    assert!(matches!(e, rhea::Error::GroupMismatch { .. }), "{e}");
    let c = shape_c().build().unwrap();
    let other = CkksContext::new(&c, devices[0]).unwrap();
    let mut keygen = KeyGenerator::from_seed(&other, [5; 32]);
    let sk = keygen.secret_key().unwrap();
    let ct = Encryptor::with_secret_key(&other, &sk)
        .unwrap()
        .encrypt(&Encoder::new(&other).unwrap().encode(&[0.25]).unwrap())
        .unwrap();
    let y = GpuGroup::new(&other, &devices)
        .unwrap()
        .scatter(&ct)
        .unwrap();
    let e = two.rescale(&y).unwrap_err();
    assert!(matches!(e, rhea::Error::ParametersMismatch { .. }), "{e}");
}

/// What the rescale relies on, on any machine: the last limb at every level is its owner's
/// last active limb (so the limbs a rescale keeps are a prefix of each GPU's), under every
/// split; strided over 2, the owner alternates.
#[test]
fn multi_rescale_last_limb_is_a_local_suffix() {
    for kind in [
        PartitionKind::Strided { block: 1 },
        PartitionKind::Strided { block: 2 },
        PartitionKind::Contiguous,
    ] {
        for gpus in 1..=4 {
            let p = LimbPartition::with_kind(14, 5, gpus, kind).unwrap();
            for ell in 2..=14 {
                let (owner, local) = p.owner_of_q(ell - 1).unwrap();
                assert_eq!(
                    local + 1,
                    p.q_active(owner, ell).len(),
                    "{kind} {gpus} {ell}"
                );
                for k in 0..gpus {
                    let kept = p.q_active(k, ell - 1);
                    assert!(kept.iter().all(|&i| i < ell - 1));
                    assert_eq!(kept, &p.q_limbs(k)[..kept.len()]);
                    let lost = p.q_active(k, ell).len() - kept.len();
                    assert_eq!(lost, usize::from(k == owner), "{kind} {gpus} {ell} GPU {k}");
                }
            }
        }
    }
    let p = LimbPartition::new(6, 2, 2).unwrap();
    assert_eq!(p.owner_of_q(5), Some((1, 2)));
    assert_eq!(p.owner_of_q(4), Some((0, 2)));
    assert_eq!(p.q_active(1, 5), &[1, 3]);
}

/// Ciphertexts and keys remember the split that made them: over the same two GPUs, the
/// strided and the contiguous split of shape A give every GPU 3 limbs at the top level (equal
/// buffer lengths, other limbs), and every operation of one group refuses the other's
/// ciphertexts and keys with a `GroupMismatch` instead of reading them as its own limbs.
#[test]
#[ignore = "needs 2 CUDA GPUs and NCCL (run with --include-ignored)"]
fn multi_refuses_ciphertexts_and_keys_of_another_partition() {
    let test = "multi_refuses_ciphertexts_and_keys_of_another_partition";
    let _one_at_a_time = GPU_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(devices) = gpus(test, 2) else {
        return;
    };
    let s = setup(&shape_a(), Device::Cpu);
    let strided = GpuGroup::new(&s.ctx, &devices).unwrap();
    let contiguous = GpuGroup::with_partition(&s.ctx, &devices, PartitionKind::Contiguous).unwrap();
    let top = s.a.level() + 1;
    for k in 0..2 {
        let (p, q) = (strided.partition(), contiguous.partition());
        assert_eq!(p.q_active(k, top).len(), q.q_active(k, top).len());
        assert_ne!(p.q_active(k, top), q.q_active(k, top));
    }
    let mine = strided.scatter(&s.a).unwrap();
    let theirs = contiguous.scatter(&s.a).unwrap();
    assert_eq!(theirs.partition_kind(), PartitionKind::Contiguous);
    assert_eq!(mine.devices(), &devices[..]);
    let rlk = strided.partition_relinearization_key(&s.rlk).unwrap();
    let rot = strided.partition_rotation_keys(&s.gk, &STEPS).unwrap();
    let their_rlk = contiguous.partition_relinearization_key(&s.rlk).unwrap();
    let their_rot = contiguous.partition_rotation_keys(&s.gk, &STEPS).unwrap();
    let mismatch = |what: &str, r: rhea::Result<_>| match r {
        Err(rhea::Error::GroupMismatch { .. }) => {}
        Err(e) => panic!("{test}: {what} gave {e}"),
        Ok(_) => panic!("{test}: {what} took another split's operand"),
    };
    mismatch("gather", strided.gather(&theirs, &s.ctx).map(|_| ()));
    mismatch(
        "mul_relin",
        strided.mul_relin(&mine, &theirs, &rlk).map(|_| ()),
    );
    mismatch(
        "mul_relin",
        strided.mul_relin(&theirs, &mine, &rlk).map(|_| ()),
    );
    mismatch(
        "mul_relin key",
        strided.mul_relin(&mine, &mine, &their_rlk).map(|_| ()),
    );
    mismatch(
        "rotate",
        strided.rotate(&theirs, STEPS[0], &rot).map(|_| ()),
    );
    mismatch(
        "rotate key",
        strided.rotate(&mine, STEPS[0], &their_rot).map(|_| ()),
    );
    mismatch(
        "rotate_many",
        strided.rotate_many(&theirs, &STEPS, &rot).map(|_| ()),
    );
    mismatch(
        "rotate_many key",
        strided.rotate_many(&mine, &STEPS, &their_rot).map(|_| ()),
    );
    // Even where every step is a copy (no key used): the ciphertext is still another's.
    mismatch(
        "rotate_many",
        strided.rotate_many(&theirs, &[0], &rot).map(|_| ()),
    );
    mismatch("rescale", strided.rescale(&theirs).map(|_| ()));
    mismatch(
        "mul_relin_rescale",
        strided
            .mul_relin_rescale(&theirs, &theirs, &rlk)
            .map(|_| ()),
    );
    // Each group still takes its own.
    let back = contiguous.gather(&theirs, &s.ctx).unwrap();
    assert!(words(&s.ctx, &back) == words(&s.ctx, &s.a));
    let r = strided.rotate(&mine, STEPS[0], &rot).unwrap();
    assert_eq!(r.partition_kind(), PartitionKind::Strided { block: 1 });
}

/// `rotate_many`'s wrong requests are typed errors, found before any GPU work: a step without
/// a key (after steps with keys), a 3-component ciphertext; no steps give no results, copies
/// only give the input's words.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored)"]
fn multi_rotate_many_requests_are_checked() {
    let test = "multi_rotate_many_requests_are_checked";
    let _one_at_a_time = GPU_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(devices) = gpus(test, 1) else {
        return;
    };
    let s = setup(&shape_a(), Device::Cpu);
    let group = GpuGroup::new(&s.ctx, &devices).unwrap();
    let rot = group.partition_rotation_keys(&s.gk, &STEPS).unwrap();
    let x = group.scatter(&s.a).unwrap();
    match group.rotate_many(&x, &[1, -3, 4], &rot) {
        Err(rhea::Error::MissingRotationKey { step: 4, .. }) => {}
        other => panic!("{test}: a step without a key gave {other:?}"),
    }
    let t = group
        .scatter(&s.eval.mul_no_relin(&s.a, &s.b).unwrap())
        .unwrap();
    match group.rotate_many(&t, &STEPS, &rot) {
        Err(rhea::Error::InvalidInput(_)) => {}
        other => panic!("{test}: a 3-component ciphertext gave {other:?}"),
    }
    assert!(group.rotate_many(&x, &[], &rot).unwrap().is_empty());
    let n = s.ctx.ring().n() as i64;
    let copies = group.rotate_many(&x, &[0, n / 2, -n], &rot).unwrap();
    assert_eq!(copies.len(), 3);
    let input = words(&s.ctx, &s.a);
    assert!(input[1].iter().any(|&w| w != 0), "a tautology: zero words");
    for c in &copies {
        assert!(words(&s.ctx, &group.gather(c, &s.ctx).unwrap()) == input);
    }
}
