//! A GPU of a group that fails mid-operation (here: runs out of memory while the other GPU has
//! its share of the work queued) gives a typed error, not a hang, and the group works again
//! once the memory is back: the same words as before the failure.
//!
//! Why no hang by construction: one host thread drives every GPU of a `GpuGroup`, each
//! operation allocates on every GPU before it issues a collective, and each NCCL collective is
//! issued for all ranks together (one `ncclGroupStart`/`ncclGroupEnd`), so a GPU that fails
//! before a collective keeps every GPU out of it. A GPU whose context dies (a faulting kernel)
//! is not covered: NCCL would wait for it (docs/multi-gpu.md).
//!
//! The test is `#[ignore]`d (two GPUs): `cargo test --release -p rhea --test gpu_multi_failure
//! -- --include-ignored`; it says so and passes on a machine with fewer, unless
//! `RHEA_REQUIRE_GPU=1`. NCCL is loaded as `libnccl.so` (`scripts/nccl-env.sh`).

use std::time::{Duration, Instant};

use rhea::ckks::{CkksContext, Encoder, Encryptor, KeyGenerator};
use rhea::params::CkksParametersLiteral;
use rhea::unstable::cuda::GpuDevice;
use rhea::unstable::multi::{GpuGroup, PartitionedCiphertext};
use rhea::unstable::HasRing;
use rhea::{Device, Error};

#[test]
#[ignore = "needs two CUDA GPUs (run with --include-ignored)"]
fn a_full_gpu_gives_a_typed_error_and_the_group_recovers() {
    let all = Device::all_gpus();
    if all.len() < 2 {
        assert_ne!(
            std::env::var("RHEA_REQUIRE_GPU").as_deref(),
            Ok("1"),
            "needs two GPUs, the machine has {} (RHEA_REQUIRE_GPU=1)",
            all.len()
        );
        eprintln!("skipped: needs two GPUs, the machine has {}", all.len());
        return;
    }
    let devices = &all[..2];
    let params = CkksParametersLiteral {
        log_n: 14,
        log_q: vec![60, 40, 40, 40, 40, 40],
        log_p: vec![61, 61],
        q: Vec::new(),
        p: Vec::new(),
        log_default_scale: 40,
        dnum: 3,
        ..CkksParametersLiteral::n13_logqp200_levels2()
    }
    .insecure_allow_below_128_bits()
    .build()
    .unwrap();
    let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [41; 32]);
    let sk = keygen.secret_key().unwrap();
    let rlk = keygen.relinearization_key(&sk).unwrap();
    let encoder = Encoder::new(&ctx).unwrap();
    let enc = Encryptor::with_secret_key(&ctx, &sk)
        .unwrap()
        .with_seed([42; 32]);
    let x: Vec<f64> = (0..encoder.slots())
        .map(|i| ((i * 37 % 101) as f64) / 101.0 - 0.5)
        .collect();
    let a = enc.encrypt(&encoder.encode(&x).unwrap()).unwrap();

    let group = GpuGroup::new(&ctx, devices).expect("group (NCCL on LD_LIBRARY_PATH?)");
    let key = group.partition_relinearization_key(&rlk).unwrap();
    let ga = group.scatter(&a).unwrap();
    let words = |ct: &PartitionedCiphertext| -> Vec<Vec<u64>> {
        let back = group.gather(ct, &ctx).unwrap();
        back.parts()
            .iter()
            .map(|p| ctx.ring().download(p).unwrap())
            .collect()
    };
    let want = words(&group.mul_relin(&ga, &ga, &key).unwrap());
    assert!(want[0].iter().any(|&w| w != 0), "a tautology: zero words");

    // Fill the second GPU: its cached buffers back to the driver, then all but 1 MiB of its
    // free memory in one ballast (a smaller one if the driver refuses that).
    let Device::Cuda(second) = devices[1] else {
        unreachable!("all_gpus lists GPUs")
    };
    let dev = GpuDevice::new(second).unwrap();
    dev.synchronize().unwrap();
    dev.trim();
    let mut words_left = dev.free_memory().unwrap() / 8 - (1 << 17);
    let ballast = loop {
        match dev.alloc(words_left) {
            Ok(b) => break b,
            Err(_) if words_left > 1 << 20 => words_left -= 1 << 17,
            Err(e) => panic!("no ballast: {e}"),
        }
    };
    let start = Instant::now();
    let failed = group.mul_relin(&ga, &ga, &key);
    let took = start.elapsed();
    match failed {
        Err(Error::DeviceOutOfMemory { device, .. }) => assert_eq!(device, second),
        Err(e) => panic!("expected DeviceOutOfMemory on GPU {second}, got {e}"),
        Ok(_) => panic!("the operation fit beside a ballast of {words_left} words"),
    }
    assert!(took < Duration::from_secs(30), "the error took {took:?}");
    eprintln!("GPU {second} full: DeviceOutOfMemory after {took:?}");

    drop(ballast);
    let again = group.mul_relin(&ga, &ga, &key).unwrap();
    assert_eq!(words(&again), want, "the group after the failure");
}
