//! Fault injection, for tests of failure handling: [`kill_context_after`] makes a GPU's CUDA
//! context die the way a faulting kernel kills it, at a chosen moment, and [`stall_for`] makes
//! a GPU stuck (busy, not dead) for a while, with no switch in the library's own code paths.
//!
//! Test-facing: a dead context cannot be revived in the process (every later call on that
//! device returns the sticky error), so a test that uses [`kill_context_after`] must run in its
//! own process (its own test binary) and never use that GPU again. Rhea's own uses:
//! `crates/rhea/tests/gpu_multi_dying.rs` (a GPU of a group dies while a collective waits for
//! it) and `crates/rhea/tests/gpu_multi_stuck.rs` (a GPU of a group is stuck past the group's
//! deadline).

use std::time::Duration;

use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::device::GpuDevice;
use crate::error::Result;
use crate::registry::KernelSource;

/// One thread that sleeps until `%globaltimer` has advanced `spin_ns` nanoseconds from its
/// start, then returns (`rhea_spin`) or executes `trap` (`rhea_spin_then_trap`: the context dies
/// with `CUDA_ERROR_LAUNCH_FAILED` or `CUDA_ERROR_ILLEGAL_INSTRUCTION`, as on a device-side
/// fault).
static FAULT: KernelSource = KernelSource {
    name: "fault_injection",
    source: r#"
__device__ void rhea_spin_for(unsigned long long spin_ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    now = start;
    while (now - start < spin_ns) {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    }
}
extern "C" __global__ void rhea_spin(unsigned long long spin_ns) {
    rhea_spin_for(spin_ns);
}
extern "C" __global__ void rhea_spin_then_trap(unsigned long long spin_ns) {
    rhea_spin_for(spin_ns);
    __trap();
}
"#,
    headers: &[],
};

/// Queues on `device`'s stream a kernel that runs for `delay` (behind the work queued before
/// it, and holding back the work queued after it), then traps: the device's context dies with
/// a sticky error, for the rest of the process. Work queued on the stream meanwhile (a group's
/// share of an operation and its collectives) never runs; the host learns of the death from
/// the next call that queries or uses the device.
///
/// **Test-facing; it kills the GPU for this process** (see the module documentation).
///
/// Errors: the kernel's compilation (NVRTC) and launch errors.
#[doc(hidden)]
pub fn kill_context_after(device: &GpuDevice, delay: Duration) -> Result<()> {
    spin(device, "rhea_spin_then_trap", delay)
}

/// Queues on `device`'s stream a kernel that runs for `duration`, then ends normally: the GPU
/// is stuck (its stream holds back the work queued after it, as behind a kernel that runs far
/// longer than it should) but not dead. Test-facing.
///
/// Errors: the kernel's compilation (NVRTC) and launch errors.
#[doc(hidden)]
pub fn stall_for(device: &GpuDevice, duration: Duration) -> Result<()> {
    spin(device, "rhea_spin", duration)
}

/// Launches `kernel` (one of [`FAULT`]'s) on one thread with `duration` in nanoseconds.
fn spin(device: &GpuDevice, kernel: &str, duration: Duration) -> Result<()> {
    let f = device.function(&FAULT, kernel)?;
    let spin_ns = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
    let stream = device.stream();
    let mut b = stream.launch_builder(&f);
    b.arg(&spin_ns);
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: both kernels take one `unsigned long long`, given by value (`spin_ns` lives across
    // the call); they touch no memory. `rhea_spin_then_trap`'s trap is the point: it ends the
    // context, not this process's memory safety (the driver refuses every later use of the
    // context).
    unsafe { b.launch(cfg) }?;
    Ok(())
}
