//! Where polynomials live and primitives run.

use std::fmt;
use std::sync::Arc;

use rhea_cuda::{CudaError, GpuDevice};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A compute device, chosen at run time.
///
/// ```
/// use rhea::backend::Device;
/// let device = Device::best(); // the GPU when one is usable, else the CPU
/// assert!(device.check_supported().is_ok());
/// // A GPU that is not there is a typed error, never a panic.
/// assert!(Device::Cuda(999).check_supported().is_err());
/// println!("running on {}", device.name());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Device {
    /// The host CPU (rayon over limbs).
    Cpu,
    /// The CUDA GPU with this ordinal.
    Cuda(usize),
}

impl Device {
    /// The best device available: GPU 0 when a CUDA driver and a GPU are present
    /// (`rhea_cuda::GpuDevice::is_available`) and the GPU can be opened (compute capability 7.5
    /// or later), else the CPU.
    pub fn best() -> Device {
        if GpuDevice::is_available() && gpu(0).is_ok() {
            Device::Cuda(0)
        } else {
            Device::Cpu
        }
    }

    /// Every GPU of this machine Rhea can run on (`Cuda(0)`, `Cuda(1)`, …; empty without a
    /// driver or a usable GPU): the devices a throughput run spreads independent work over,
    /// each with its own context, keys and stream.
    pub fn all_gpus() -> Vec<Device> {
        (0..GpuDevice::count())
            .map(Device::Cuda)
            .filter(|d| d.check_supported().is_ok())
            .collect()
    }

    /// Whether this device can run primitives on this machine; a typed error says why not
    /// ([`Error::DeviceNotSupported`]: no driver, no such GPU;
    /// [`Error::UnsupportedComputeCapability`]: a GPU below compute capability 7.5).
    pub fn check_supported(&self) -> Result<()> {
        match self {
            Device::Cpu => Ok(()),
            Device::Cuda(i) => gpu(*i).map(|_| ()),
        }
    }

    /// Whether this is the CPU.
    pub fn is_cpu(&self) -> bool {
        matches!(self, Device::Cpu)
    }

    /// A human-readable name: `"cpu"`, or `"cuda:0 (NVIDIA H100 80GB HBM3)"` (the GPU's own
    /// name when it can be opened).
    pub fn name(&self) -> String {
        match self {
            Device::Cpu => "cpu".to_string(),
            Device::Cuda(i) => match gpu(*i) {
                Ok(d) => format!("cuda:{i} ({})", d.name()),
                Err(_) => format!("cuda:{i} (unavailable)"),
            },
        }
    }

    /// Bytes copied host → device on this device since it was opened (0 on the CPU). Every
    /// upload through the backend is counted, so a test can check that an evaluation moves none.
    pub fn bytes_to_device(&self) -> Result<u64> {
        match self {
            Device::Cpu => Ok(0),
            Device::Cuda(i) => Ok(gpu(*i)?.bytes_to_device()),
        }
    }

    /// Bytes copied device → host on this device since it was opened (0 on the CPU).
    pub fn bytes_to_host(&self) -> Result<u64> {
        match self {
            Device::Cpu => Ok(0),
            Device::Cuda(i) => Ok(gpu(*i)?.bytes_to_host()),
        }
    }

    /// Bytes of memory the device has in all (the driver's figure); 0 on the CPU.
    ///
    /// ```
    /// assert_eq!(rhea::Device::Cpu.total_memory()?, 0);
    /// # Ok::<(), rhea::Error>(())
    /// ```
    pub fn total_memory(&self) -> Result<u64> {
        match self {
            Device::Cpu => Ok(0),
            Device::Cuda(i) => Ok(gpu(*i)?.total_memory() as u64),
        }
    }

    /// Bytes of device memory in use now (total − free, as the driver reports it: this
    /// process's buffers, the memory pool's cached ones, the CUDA context, and other
    /// processes' on a shared GPU); 0 on the CPU.
    pub fn memory_in_use(&self) -> Result<u64> {
        match self {
            Device::Cpu => Ok(0),
            Device::Cuda(i) => {
                let d = gpu(*i)?;
                Ok(d.total_memory().saturating_sub(d.free_memory()?) as u64)
            }
        }
    }

    /// The most bytes of device buffers live at once since the device was opened or since
    /// [`Device::reset_buffer_peak`] (0 on the CPU): keys, encodings, ciphertexts and
    /// temporaries, without the memory pool's cached buffers (which an allocation that runs
    /// short frees and retries) or the CUDA context — the memory a card needs for what ran.
    pub fn buffer_peak_bytes(&self) -> Result<u64> {
        match self {
            Device::Cpu => Ok(0),
            Device::Cuda(i) => Ok(gpu(*i)?.pool_stats().peak_in_use_bytes as u64),
        }
    }

    /// Restarts [`Device::buffer_peak_bytes`] from the bytes live now (nothing on the CPU).
    pub fn reset_buffer_peak(&self) -> Result<()> {
        if let Device::Cuda(i) = self {
            gpu(*i)?.reset_peak();
        }
        Ok(())
    }

    /// How many times the host waited for this device's stream since it was opened (0 on the
    /// CPU): every [`Device::synchronize`] and every download. An evaluation that moves no
    /// bytes and waits for nothing runs entirely on the device, queued ahead of the host.
    pub fn host_waits(&self) -> Result<u64> {
        match self {
            Device::Cpu => Ok(0),
            Device::Cuda(i) => Ok(gpu(*i)?.host_waits()),
        }
    }

    /// How many times, since the process started, a fused GPU primitive on this device ran as
    /// its composition of plain primitives instead (0 on the CPU, which always composes). The
    /// composition gives the same words, only slower; at the presets every evaluation takes the
    /// fused paths, and the GPU test suite checks that this count stays 0.
    pub fn fused_fallbacks(&self) -> u64 {
        match self {
            Device::Cpu => 0,
            Device::Cuda(i) => fallbacks().get(*i).copied().unwrap_or(0),
        }
    }

    /// Waits until every operation queued on the device has finished (a no-op on the CPU, whose
    /// primitives are synchronous). GPU primitives are asynchronous: time them with this.
    pub fn synchronize(&self) -> Result<()> {
        match self {
            Device::Cpu => Ok(()),
            Device::Cuda(i) => Ok(gpu(*i)?.synchronize()?),
        }
    }
}

/// The fused-path fallback counts, by GPU index.
static FALLBACKS: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

fn fallbacks() -> std::sync::MutexGuard<'static, Vec<u64>> {
    // A panic while holding this lock cannot leave the counts inconsistent: use them anyway.
    FALLBACKS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records that a fused primitive on GPU `index` ran as its composition
/// ([`Device::fused_fallbacks`]).
pub(crate) fn count_fused_fallback(index: usize) {
    let mut counts = fallbacks();
    if counts.len() <= index {
        counts.resize(index + 1, 0);
    }
    counts[index] += 1;
}

/// The shared device object of GPU `index` (one per process), or a typed error:
/// [`Error::DeviceNotSupported`] without a driver or such a GPU,
/// [`Error::UnsupportedComputeCapability`] for a GPU older than the kernels support, the
/// converted GPU error otherwise.
pub(crate) fn gpu(index: usize) -> Result<Arc<GpuDevice>> {
    GpuDevice::new(index).map_err(|e| match e {
        CudaError::NoDriver(_) | CudaError::NoDevice { .. } => Error::DeviceNotSupported {
            device: Device::Cuda(index),
            reason: format!("{e}; use Device::Cpu or Device::best()"),
        },
        e => Error::from(e),
    })
}

impl Default for Device {
    fn default() -> Self {
        Device::best()
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => write!(f, "cpu"),
            Device::Cuda(i) => write!(f, "cuda:{i}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_is_usable_and_a_missing_gpu_is_a_typed_error() {
        let best = Device::best();
        assert!(best.check_supported().is_ok());
        assert_eq!(best.is_cpu(), !GpuDevice::is_available());
        assert!(Device::Cpu.check_supported().is_ok());
        let err = Device::Cuda(999).check_supported().unwrap_err();
        assert!(matches!(
            err,
            Error::DeviceNotSupported {
                device: Device::Cuda(999),
                ..
            }
        ));
        assert_eq!(Device::Cuda(2).to_string(), "cuda:2");
        assert_eq!(Device::Cpu.name(), "cpu");
        assert_eq!(Device::Cpu.bytes_to_device(), Ok(0));
        assert_eq!(Device::Cpu.fused_fallbacks(), 0);
        // The count is per GPU index (an index no machine has, so no other test touches it).
        let before = Device::Cuda(63).fused_fallbacks();
        count_fused_fallback(63);
        count_fused_fallback(63);
        assert_eq!(Device::Cuda(63).fused_fallbacks(), before + 2);
        assert_eq!(Device::Cuda(62).fused_fallbacks(), 0);
        assert!(Device::Cpu.synchronize().is_ok());
    }
}
