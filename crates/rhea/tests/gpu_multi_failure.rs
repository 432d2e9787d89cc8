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

use rhea::unstable::cuda::GpuDevice;
use rhea::unstable::multi::{GpuGroup, PartitionedCiphertext};
use rhea::unstable::HasRing;
use rhea::{Device, Error};

mod multi_failure_common;
use multi_failure_common::{failing, two_gpus, Failing};

#[test]
#[ignore = "needs two CUDA GPUs (run with --include-ignored)"]
fn a_full_gpu_gives_a_typed_error_and_the_group_recovers() {
    let Some(devices) = two_gpus() else { return };
    let devices = &devices[..];
    let Failing {
        cpu: ctx, rlk, a, ..
    } = failing(41, 37, 101);

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
