//! Kernel launches that may overlap the previous kernel of the stream: programmatic dependent
//! launch (PDL, compute capability 9.0 and up).
//!
//! A kernel launched by [`launch_dependent`] may start while the kernel before it on the stream
//! still runs, once every block of that kernel has executed `griddepcontrol.launch_dependents`
//! (`pdl_trigger()` in `kernels/common.cuh`) or exited. Its blocks then run their preamble
//! (indices, read-only tables such as twiddles) and must execute `griddepcontrol.wait`
//! (`pdl_wait()`) before they touch memory that earlier work writes or reads: the wait returns
//! once the previous kernel has completed and its writes are visible. Only kernels written that
//! way may be launched here; on a device without PDL ([`crate::Tuning`]), it is an ordinary
//! launch and the two instructions are no-ops.

use std::ffi::c_void;

use cudarc::driver::sys;
use cudarc::driver::{CudaFunction, DeviceRepr, LaunchConfig};

use crate::device::GpuDevice;
use crate::error::{CudaError, Result};

std::thread_local! {
    /// The address of the launch lock this thread holds through a [`LaunchHold`], or 0.
    static HELD_LOCK: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A hold on a device's dependent launches ([`hold_launches`]): while it lives, dependent
/// launches from other threads wait, so those this thread issues are adjacent on the stream. The
/// NTT's row flags need that: the second kernel of a flagged pair does not wait for the kernel
/// before it (`ntt_dep_wait` in `kernels/ntt.cuh`), and the chain "a kernel completes after its
/// predecessor" holds only if that predecessor is the pair's first kernel.
pub(crate) struct LaunchHold<'a> {
    _guard: std::sync::MutexGuard<'a, ()>,
}

impl Drop for LaunchHold<'_> {
    fn drop(&mut self) {
        HELD_LOCK.with(|h| h.set(0));
    }
}

fn lock_address(device: &GpuDevice) -> usize {
    std::ptr::from_ref(&device.launch_lock) as usize
}

/// Holds `device`'s dependent launches for this thread (see [`LaunchHold`]).
///
/// Errors: [`CudaError::Driver`] if this thread already holds a device's launches (holds do
/// not nest).
pub(crate) fn hold_launches(device: &GpuDevice) -> Result<LaunchHold<'_>> {
    if HELD_LOCK.with(|h| h.get()) != 0 {
        return Err(CudaError::Driver(
            "nested hold on dependent launches".into(),
        ));
    }
    // The lock guards no data, only the order of launches: a panic elsewhere leaves nothing to
    // repair, so a poisoned lock is taken as it is.
    let guard = device
        .launch_lock
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    HELD_LOCK.with(|h| h.set(lock_address(device)));
    Ok(LaunchHold { _guard: guard })
}

/// The kernel-parameter pointer to `value`, for [`launch_dependent`]'s `params` (the driver only
/// reads through it, copying the value into the launch's parameter block).
pub(crate) fn param<T: DeviceRepr>(value: &T) -> *mut c_void {
    (value as *const T).cast_mut().cast()
}

/// Launches `f` on `device`'s stream with the kernel parameters `params` (one pointer per
/// parameter, in order, each from [`param`]), allowing it to overlap the previous kernel when [`GpuDevice::uses_pdl`].
///
/// # Safety
/// As `cudarc`'s `LaunchArgs::launch`: `params` must match the kernel's signature and point to
/// live values, the memory the kernel touches must be valid for it; and the kernel must execute
/// `pdl_wait()` before it touches any memory that earlier stream work writes or reads.
pub(crate) unsafe fn launch_dependent(
    device: &GpuDevice,
    f: &CudaFunction,
    cfg: LaunchConfig,
    params: &mut [*mut c_void],
) -> Result<()> {
    device.context().bind_to_thread()?;
    // Wait for another thread's hold on this device's launches (not for this thread's own).
    let _serial = if HELD_LOCK.with(|h| h.get()) == lock_address(device) {
        None
    } else {
        Some(
            device
                .launch_lock
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    };
    let mut attr = sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
        pad: [0; 4],
        value: sys::CUlaunchAttributeValue {
            programmaticStreamSerializationAllowed: 1,
        },
    };
    let use_pdl = device.uses_pdl();
    let config = sys::CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: cfg.grid_dim.1,
        gridDimZ: cfg.grid_dim.2,
        blockDimX: cfg.block_dim.0,
        blockDimY: cfg.block_dim.1,
        blockDimZ: cfg.block_dim.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: device.stream().cu_stream(),
        attrs: if use_pdl {
            &mut attr
        } else {
            std::ptr::null_mut()
        },
        numAttrs: u32::from(use_pdl),
    };
    // SAFETY: `config` and `attr` live across the call; the function handle belongs to this
    // device's context (bound above); the caller guarantees the parameters and the kernel's
    // use of `pdl_wait()` (see the function's contract).
    unsafe {
        sys::cuLaunchKernelEx(
            &config,
            f.cu_function(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    }
    .result()?;
    Ok(())
}
