//! The error type of `rhea-cuda`.
//!
//! Every fallible call of the crate returns [`Result<T>`]. Asking for a GPU where there is no
//! driver or no device is an error ([`CudaError::NoDriver`], [`CudaError::NoDevice`]), never a
//! panic, so callers can fall back to the CPU.

use thiserror::Error;

/// Everything that can go wrong in the CUDA runtime and kernel layer.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CudaError {
    /// No usable CUDA driver: `libcuda` could not be loaded, is a stub, or `cuInit` failed
    /// (for instance because the machine has no NVIDIA GPU).
    #[error("no CUDA driver available: {0}")]
    NoDriver(String),
    /// The driver works but the requested device ordinal does not exist.
    #[error("no CUDA device with index {index} (the driver reports {count} device(s))")]
    NoDevice {
        /// The ordinal that was asked for.
        index: usize,
        /// How many devices the driver reports.
        count: usize,
    },
    /// A device allocation failed for lack of memory (after the pool's cache was trimmed).
    #[error(
        "out of memory on GPU {device}: an allocation of {requested_bytes} bytes failed ({}); \
         free objects that are no longer needed, use smaller parameters, or run on the CPU",
        match free_bytes {
            Some(free) => format!("{free} bytes free"),
            None => "free memory unknown".to_string(),
        }
    )]
    OutOfMemory {
        /// The ordinal of the device.
        device: usize,
        /// The size of the allocation that failed, in bytes.
        requested_bytes: usize,
        /// The free device memory the driver reported right after the failure (`cuMemGetInfo`),
        /// in bytes; `None` when that query failed too.
        free_bytes: Option<usize>,
    },
    /// The device's compute capability is below what the kernels need
    /// ([`crate::device::MIN_COMPUTE_CAPABILITY`]).
    #[error(
        "GPU {index} ({name}) has compute capability {}.{}, below the {}.{} that Rhea's kernels \
         need; use a newer GPU or the CPU",
        found.0, found.1, minimum.0, minimum.1
    )]
    UnsupportedComputeCapability {
        /// The device ordinal.
        index: usize,
        /// The device's name.
        name: String,
        /// Its compute capability `(major, minor)`.
        found: (u32, u32),
        /// The minimum supported, [`crate::device::MIN_COMPUTE_CAPABILITY`].
        minimum: (u32, u32),
    },
    /// The NVRTC library (`libnvrtc`) could not be loaded, so kernels cannot be compiled.
    #[error("NVRTC is not available: {0}")]
    NvrtcMissing(String),
    /// NVRTC refused a kernel source; `log` is the full compiler log.
    #[error("NVRTC failed to compile kernel `{kernel}`:\n{log}")]
    Compile {
        /// The kernel source name (see [`crate::registry::KernelSource`]).
        kernel: String,
        /// The complete NVRTC program log.
        log: String,
    },
    /// A kernel function was not found in its compiled module.
    #[error("kernel function `{function}` not found in module `{module}`")]
    MissingFunction {
        /// The module (kernel source) name.
        module: String,
        /// The function name that was looked up.
        function: String,
    },
    /// Any other error reported by the CUDA driver (the driver's own name and message).
    #[error("CUDA driver error: {0}")]
    Driver(String),
    /// Any other error reported by NVRTC.
    #[error("NVRTC error: {0}")]
    Nvrtc(String),
    /// Operands of the wrong length or shape (buffer sizes, limb counts, degrees).
    #[error("shape mismatch: {0}")]
    Shape(String),
    /// Operands that live on different devices.
    #[error("operands live on different devices ({0} and {1})")]
    DeviceMismatch(usize, usize),
    /// A bad argument that is not a shape (an unsupported modulus, an empty list, ...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The on-disk kernel cache could not be read or written.
    #[error("kernel cache I/O error: {0}")]
    Cache(String),
    /// The operating system could not supply random bytes (LITE's session keys).
    #[error("no entropy from the operating system: {0}")]
    Entropy(String),
    /// An error of the host arithmetic in `rhea-math`.
    #[error(transparent)]
    Math(#[from] rhea_math::MathError),
    /// An NCCL error (the library missing, a failed call, a bad request): the multi-GPU
    /// collectives of [`crate::nccl`].
    #[error(transparent)]
    Nccl(crate::nccl::NcclError),
}

/// The result type of `rhea-cuda`.
pub type Result<T> = std::result::Result<T, CudaError>;

impl From<cudarc::driver::DriverError> for CudaError {
    fn from(e: cudarc::driver::DriverError) -> Self {
        let name = e
            .error_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|_| format!("{:?}", e.0));
        let text = e
            .error_string()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        CudaError::Driver(format!("{name}: {text}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_problem() {
        let e = CudaError::NoDevice { index: 3, count: 1 };
        assert_eq!(
            e.to_string(),
            "no CUDA device with index 3 (the driver reports 1 device(s))"
        );
        let e = CudaError::OutOfMemory {
            device: 2,
            requested_bytes: 1024,
            free_bytes: Some(7),
        };
        let text = e.to_string();
        assert!(text.contains("GPU 2") && text.contains("1024") && text.contains("7 bytes free"));
        let e = CudaError::OutOfMemory {
            device: 0,
            requested_bytes: 1024,
            free_bytes: None,
        };
        assert!(e.to_string().contains("unknown"));
        let e = CudaError::UnsupportedComputeCapability {
            index: 1,
            name: "Tesla P100".into(),
            found: (6, 0),
            minimum: crate::device::MIN_COMPUTE_CAPABILITY,
        };
        assert!(
            e.to_string().contains("6.0") && e.to_string().contains("7.5"),
            "{e}"
        );
        use crate::device::check_compute_capability as check;
        assert!(matches!(
            check(1, "Tesla V100", (7, 0)),
            Err(CudaError::UnsupportedComputeCapability {
                index: 1,
                found: (7, 0),
                ..
            })
        ));
        assert!(check(0, "T4", (7, 5)).is_ok());
        assert!(check(0, "H100", (9, 0)).is_ok());
        assert!(check(0, "future", (10, 0)).is_ok());
        let e = CudaError::Compile {
            kernel: "k".into(),
            log: "line 3: error".into(),
        };
        assert!(e.to_string().contains("line 3: error"));
    }
}
