//! Where polynomials live and primitives run.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A compute device, chosen at run time.
///
/// ```
/// use rhea::backend::Device;
/// let device = Device::best();
/// assert!(device.check_supported().is_ok());
/// // A GPU is not yet usable by this build: a typed error, never a panic.
/// assert!(Device::Cuda(0).check_supported().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Device {
    /// The host CPU (rayon over limbs).
    Cpu,
    /// The CUDA GPU with this ordinal.
    Cuda(usize),
}

impl Device {
    /// The best device available: a GPU when the build supports one and it is present, else the
    /// CPU. The CUDA backend does not yet plug into the seam, so this is the CPU for now.
    pub fn best() -> Device {
        Device::Cpu
    }

    /// Whether this device can run primitives in this build; a typed error says why not.
    pub fn check_supported(&self) -> Result<()> {
        match self {
            Device::Cpu => Ok(()),
            Device::Cuda(_) => Err(Error::DeviceNotSupported {
                device: *self,
                reason: "the CUDA backend is not yet supported by this build of rhea (the \
                         primitives run on the CPU only); use Device::Cpu or Device::best()"
                    .to_string(),
            }),
        }
    }

    /// Whether this is the CPU.
    pub fn is_cpu(&self) -> bool {
        matches!(self, Device::Cpu)
    }
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
    fn cuda_is_a_typed_error_and_cpu_works() {
        assert_eq!(Device::best(), Device::Cpu);
        assert!(Device::Cpu.check_supported().is_ok());
        let err = Device::Cuda(1).check_supported().unwrap_err();
        assert!(matches!(
            err,
            Error::DeviceNotSupported {
                device: Device::Cuda(1),
                ..
            }
        ));
        assert!(err.to_string().contains("not yet supported"));
        assert_eq!(Device::Cuda(2).to_string(), "cuda:2");
    }
}
