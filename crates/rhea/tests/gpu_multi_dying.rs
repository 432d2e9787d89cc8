//! A GPU of a group whose context dies while a collective waits for it (issue 37): the
//! operation (or the next wait) returns a typed error naming a GPU within the group's deadline,
//! not a hang; the failed group refuses every later call at once. A GPU not named works on alone
//! (the CPU's words) and dropping the group does not hang; a GPU named dead no longer computes —
//! measured on 2 × H200 over NVLink: GPU 0 is named, its NCCL kernel having faulted on the dead
//! peer's memory (docs/multi-gpu.md).
//!
//! How GPU 1 dies mid-collective: `rhea_cuda::fault::kill_context_after` queues on its stream
//! a kernel that sleeps for half a second, then traps. The group's `mul_relin`, queued right
//! after, sits behind it on GPU 1, while GPU 0 runs its share and enters the ModUp all-gather,
//! where it waits for GPU 1's limbs; then GPU 1's context dies. Without the group's bounded
//! wait and `ncclCommAbort`, GPU 0's NCCL kernel would wait forever and so would the host.
//!
//! Its own test binary: a dead context stays dead for the rest of the process (so one test
//! here, and GPU 1 is not used again). `#[ignore]`d (two GPUs): `cargo test --release -p rhea
//! --test gpu_multi_dying -- --include-ignored`; it says so and passes on a machine with
//! fewer, unless `RHEA_REQUIRE_GPU=1`. NCCL is loaded as `libnccl.so` (`scripts/nccl-env.sh`).

use std::time::{Duration, Instant};

use rhea::ckks::{CkksContext, Evaluator};
use rhea::unstable::cuda::GpuDevice;
use rhea::unstable::multi::GpuGroup;
use rhea::{Device, Error};

mod multi_failure_common;
use multi_failure_common::{assert_refuses_at_once, failing, two_gpus, words, Failing};

/// The group's deadline in this test.
const DEADLINE: Duration = Duration::from_secs(5);

/// How long GPU 1 keeps the group's work waiting before it dies.
const DYING_AFTER: Duration = Duration::from_millis(500);

#[test]
#[ignore = "needs two CUDA GPUs (run with --include-ignored); kills GPU 1's context"]
fn a_gpu_dying_mid_collective_gives_a_typed_error_not_a_hang() {
    let Some(devices) = two_gpus() else { return };
    let devices = &devices[..];
    let (Device::Cuda(first), Device::Cuda(second)) = (devices[0], devices[1]) else {
        unreachable!("all_gpus lists GPUs")
    };
    let Failing {
        params,
        cpu,
        rlk,
        a,
        want,
    } = failing(51, 53, 97);

    // GPU 0 alone, made before anything dies.
    let gpu0 = CkksContext::new(&params, devices[0]).unwrap();
    let gpu0_eval = Evaluator::new(&gpu0)
        .with_relinearization_key(rlk.to_device(&gpu0).unwrap())
        .unwrap();

    let mut group = GpuGroup::new(&cpu, devices).expect("group (NCCL on LD_LIBRARY_PATH?)");
    assert_eq!(group.collective_timeout(), Duration::from_secs(60));
    group.set_collective_timeout(DEADLINE);
    assert_eq!(group.collective_timeout(), DEADLINE);
    let key = group.partition_relinearization_key(&rlk).unwrap();
    let ga = group.scatter(&a).unwrap();
    let healthy = group.mul_relin(&ga, &ga, &key).unwrap();
    assert_eq!(
        words(&cpu, &group.gather(&healthy, &cpu).unwrap()),
        want,
        "the group before the failure"
    );
    assert!(group.failure().is_none());

    // GPU 1 dies half a second into the group's next operation.
    let dying = GpuDevice::new(second).unwrap();
    rhea::unstable::cuda::fault::kill_context_after(&dying, DYING_AFTER).unwrap();
    let start = Instant::now();
    // The operation returns while its work runs (the group paces the host one operation
    // ahead): the failure surfaces there or at the next wait.
    let failed = group
        .mul_relin(&ga, &ga, &key)
        .and_then(|r| group.synchronize().map(|()| r));
    let took = start.elapsed();
    // The GPU named is the first whose context reports the fault: GPU 1's trap, or GPU 0's
    // NCCL kernel faulting on its peer's memory (NVLink peer access into the dead context).
    let named = match &failed {
        Err(Error::GroupFailed { gpu, reason }) => {
            assert!(
                *gpu == Some(second) || *gpu == Some(first),
                "a GPU of the group is named: {gpu:?} {reason}"
            );
            gpu.unwrap()
        }
        Err(e) => panic!("expected GroupFailed, got {e}"),
        Ok(_) => panic!("the operation succeeded on a dead GPU"),
    };
    assert!(
        took < DEADLINE + Duration::from_secs(2),
        "the error took {took:?} (deadline {DEADLINE:?})"
    );
    eprintln!(
        "GPU {second} died after {DYING_AFTER:?}: {} after {took:?}",
        failed
            .as_ref()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    );

    // The failed group answers at once, every call, with the same error.
    assert_refuses_at_once(&group, failed, &a, &ga, &key);

    // GPU 0 works on alone when its own context survived: the CPU's words. When it was named,
    // its context died too (a fault in its NCCL kernel): every call on it fails.
    let x0 = match a.to_device(&gpu0) {
        Ok(x) if named == second => x,
        other => {
            assert_eq!(
                named, first,
                "GPU {first} unusable but not named: {other:?}"
            );
            eprintln!("GPU {first} faulted too: {other:?}");
            assert!(
                other.is_err()
                    || gpu0_eval
                        .mul_relin(other.as_ref().unwrap(), other.as_ref().unwrap())
                        .is_err(),
                "GPU {first} was named dead but still computes"
            );
            return;
        }
    };
    let y0 = gpu0_eval.mul_relin(&x0, &x0).unwrap();
    assert_eq!(
        words(&cpu, &y0),
        want,
        "GPU {first} after GPU {second} died"
    );

    // Dropping the failed group (and its objects) does not wait for the dead GPU.
    let start = Instant::now();
    drop((healthy, ga, key, group));
    assert!(
        start.elapsed() < DEADLINE,
        "dropping the group took {:?}",
        start.elapsed()
    );
    // GPU 0 still works after the drop.
    let y1 = gpu0_eval.mul_relin(&x0, &x0).unwrap();
    assert_eq!(words(&cpu, &y1), want, "GPU {first} after the group's drop");
}
