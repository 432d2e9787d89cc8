//! A GPU of a group that fails mid-operation (here: runs out of memory while the other GPU has
//! its share of the work queued) gives a typed error, not a hang, and the group works again
//! once the memory is back: the same words as before the failure.
//!
//! Why no hang by construction: one host thread drives every GPU of a `GpuGroup`, each
//! operation allocates on every GPU before it issues a collective, and each NCCL collective is
//! issued for all ranks together (one `ncclGroupStart`/`ncclGroupEnd`), so a GPU that fails
//! before a collective keeps every GPU out of it. A GPU whose context dies (a faulting kernel)
//! after a collective is issued: `gpu_multi_dying.rs` (the group's bounded wait and abort).
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

    // Fill the second GPU: its cached buffers back to the driver, then all of its memory in
    // chunks of 1 GiB, then smaller ones down to 128 KiB, until the driver refuses each size.
    let Device::Cuda(second) = devices[1] else {
        unreachable!("all_gpus lists GPUs")
    };
    let dev = GpuDevice::new(second).unwrap();
    dev.synchronize().unwrap();
    dev.trim();
    let mut ballast = Vec::new();
    for chunk in [1usize << 27, 1 << 24, 1 << 20, 1 << 17, 1 << 14] {
        while let Ok(b) = dev.alloc(chunk) {
            ballast.push(b);
        }
    }
    let held: usize = ballast.iter().map(|b| b.len()).sum();
    assert!(held > 0, "no ballast");
    let start = Instant::now();
    let failed = group.mul_relin(&ga, &ga, &key);
    let took = start.elapsed();
    match failed {
        Err(Error::DeviceOutOfMemory { device, .. }) => assert_eq!(device, second),
        Err(e) => panic!("expected DeviceOutOfMemory on GPU {second}, got {e}"),
        Ok(_) => panic!("the operation fit beside a ballast of {held} words"),
    }
    assert!(took < Duration::from_secs(30), "the error took {took:?}");
    eprintln!(
        "GPU {second} full ({} GiB of ballast): DeviceOutOfMemory after {took:?}",
        held >> 27
    );

    drop(ballast);
    let again = group.mul_relin(&ga, &ga, &key).unwrap();
    assert_eq!(words(&again), want, "the group after the failure");
}
