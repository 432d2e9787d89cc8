//! A GPU of a group that is stuck — busy far past the group's deadline, not dead — while a
//! collective waits for it (issue 37): the operation (or the next wait) returns
//! `Error::CollectiveTimeout` at the deadline, naming the GPUs whose work had not finished, not
//! a hang; the failed group refuses every later call at once. Once the stuck kernel ends, both
//! GPUs compute alone (the CPU's words) and a new group over them gives the CPU's words again.
//!
//! How GPU 1 gets stuck: `rhea_cuda::fault::stall_for` queues on its stream a kernel that
//! sleeps for four seconds, then returns. The group's `mul_relin`, queued right after, sits
//! behind it on GPU 1, while GPU 0 runs its share and enters the ModUp all-gather, where it
//! waits for GPU 1's limbs. The group's deadline is one second.
//!
//! `#[ignore]`d (two GPUs): `cargo test --release -p rhea --test gpu_multi_stuck --
//! --include-ignored`; it says so and passes on a machine with fewer, unless
//! `RHEA_REQUIRE_GPU=1`. NCCL is loaded as `libnccl.so` (`scripts/nccl-env.sh`).

use std::time::{Duration, Instant};

use rhea::ckks::{CkksContext, Evaluator};
use rhea::unstable::cuda::GpuDevice;
use rhea::unstable::multi::GpuGroup;
use rhea::{Device, Error};

mod multi_failure_common;
use multi_failure_common::{assert_refuses_at_once, failing, two_gpus, words, Failing};

/// The group's deadline in this test.
const DEADLINE: Duration = Duration::from_secs(1);

/// How long GPU 1 is stuck.
const STUCK_FOR: Duration = Duration::from_secs(4);

#[test]
#[ignore = "needs two CUDA GPUs (run with --include-ignored)"]
fn a_gpu_stuck_mid_collective_times_out_at_the_deadline() {
    let Some(devices) = two_gpus() else { return };
    let devices = &devices[..];
    let Device::Cuda(second) = devices[1] else {
        unreachable!("all_gpus lists GPUs")
    };
    let Failing {
        params,
        cpu,
        rlk,
        a,
        want,
    } = failing(61, 59, 101);

    let mut group = GpuGroup::new(&cpu, devices).expect("group (NCCL on LD_LIBRARY_PATH?)");
    group.set_collective_timeout(DEADLINE);
    let key = group.partition_relinearization_key(&rlk).unwrap();
    let ga = group.scatter(&a).unwrap();
    let healthy = group.mul_relin(&ga, &ga, &key).unwrap();
    assert_eq!(
        words(&cpu, &group.gather(&healthy, &cpu).unwrap()),
        want,
        "the group before GPU 1 is stuck"
    );

    // GPU 1 is stuck for four seconds from here; the group gives up after one.
    let stuck = GpuDevice::new(second).unwrap();
    let stuck_at = Instant::now();
    rhea::unstable::cuda::fault::stall_for(&stuck, STUCK_FOR).unwrap();
    let failed = group
        .mul_relin(&ga, &ga, &key)
        .and_then(|r| group.synchronize().map(|()| r));
    let took = stuck_at.elapsed();
    match &failed {
        Err(Error::CollectiveTimeout { waited, pending }) => {
            assert!(*waited >= DEADLINE, "waited {waited:?} < {DEADLINE:?}");
            assert!(
                pending.contains(&second),
                "GPU {second} (stuck) is among the pending: {pending:?}"
            );
        }
        Err(e) => panic!("expected CollectiveTimeout, got {e}"),
        Ok(_) => panic!("the operation finished while GPU {second} was stuck"),
    }
    assert!(
        took >= DEADLINE && took < DEADLINE + Duration::from_millis(1500),
        "the error took {took:?} (deadline {DEADLINE:?}, GPU {second} stuck for {STUCK_FOR:?})"
    );
    eprintln!(
        "GPU {second} stuck for {STUCK_FOR:?}: {} after {took:?}",
        failed
            .as_ref()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    );

    // The failed group answers at once, every call, with the same error.
    assert_refuses_at_once(&group, failed, &a, &ga, &key);

    // Dropping the failed group does not wait for the deadline again (its buffers' frees may
    // wait for the stuck kernel, which ends by itself).
    let start = Instant::now();
    drop((healthy, ga, key, group));
    let dropped = start.elapsed();
    eprintln!("the failed group dropped in {dropped:?}");
    assert!(
        dropped < STUCK_FOR + DEADLINE,
        "dropping the group took {dropped:?}"
    );

    // Once the stuck kernel has ended, each GPU computes alone: the CPU's words.
    if let Some(rest) = (STUCK_FOR + Duration::from_millis(500)).checked_sub(stuck_at.elapsed()) {
        std::thread::sleep(rest);
    }
    for &d in devices {
        let ctx = CkksContext::new(&params, d).unwrap();
        let eval = Evaluator::new(&ctx)
            .with_relinearization_key(rlk.to_device(&ctx).unwrap())
            .unwrap();
        let x = a.to_device(&ctx).unwrap();
        let y = eval
            .mul_relin(&x, &x)
            .unwrap_or_else(|e| panic!("{d:?} after the stuck kernel ended: {e}"));
        assert_eq!(words(&cpu, &y), want, "{d:?} alone after the stuck kernel");
    }

    // And a new group over the same GPUs gives the CPU's words again.
    let group = GpuGroup::new(&cpu, devices).expect("a new group");
    let key = group.partition_relinearization_key(&rlk).unwrap();
    let ga = group.scatter(&a).unwrap();
    let y = group.mul_relin(&ga, &ga, &key).unwrap();
    assert_eq!(
        words(&cpu, &group.gather(&y, &cpu).unwrap()),
        want,
        "a new group after the stuck kernel"
    );
}
