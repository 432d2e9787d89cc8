//! The error type of `rhea`.
//!
//! Every fallible call returns [`Result<T>`]. Each variant names the bad input and, where the
//! caller can fix it, says how (generate the missing key, choose parameters with more levels,
//! rescale first, ...). Library code never panics on user input.
//!
//! GPU failures stay typed: running out of device memory is [`Error::DeviceOutOfMemory`] (how
//! much was asked, how much was free), a GPU too old for the kernels is
//! [`Error::UnsupportedComputeCapability`], and every other error of the CUDA layer is
//! [`Error::Gpu`] wrapping the [`rhea_cuda::CudaError`] itself, so callers can match on it:
//!
//! ```
//! use rhea::Error;
//!
//! fn advice(e: &Error) -> &'static str {
//!     match e {
//!         Error::DeviceOutOfMemory { .. } => "free some ciphertexts or keys, or use the CPU",
//!         Error::UnsupportedComputeCapability { .. } | Error::DeviceNotSupported { .. } => {
//!             "run on Device::Cpu"
//!         }
//!         _ => "see the message",
//!     }
//! }
//! let e = Error::DeviceOutOfMemory { device: 0, requested: 1 << 30, free: Some(1 << 20) };
//! assert_eq!(advice(&e), "free some ciphertexts or keys, or use the CPU");
//! assert!(e.to_string().contains("1073741824 bytes"));
//! ```

use thiserror::Error;

use crate::backend::{Device, Form, PolyShape};

/// Everything that can go wrong in `rhea`.
///
/// `#[non_exhaustive]`: new variants may be added in minor releases, so a `match` needs a
/// wildcard arm.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum Error {
    /// An error of the exact host arithmetic (`rhea-math`).
    #[error(transparent)]
    Math(#[from] rhea_math::MathError),

    /// The requested device is not usable by this build or on this machine.
    #[error("device {device} is not supported: {reason}")]
    DeviceNotSupported {
        /// The device that was asked for.
        device: Device,
        /// Why it cannot be used, and what to do instead.
        reason: String,
    },

    /// A device allocation failed for lack of memory, after the memory pool's cache was
    /// returned to the driver and the allocation retried.
    #[error(
        "out of memory on GPU {device}: an allocation of {requested} bytes failed ({}); drop \
         ciphertexts, plaintexts or keys that are no longer needed (fewer Galois keys help \
         most), use parameters with a smaller ring or fewer limbs, or run on `Device::Cpu`",
        match free {
            Some(free) => format!("{free} bytes free"),
            None => "free memory unknown".to_string(),
        }
    )]
    DeviceOutOfMemory {
        /// The size of the allocation that failed, in bytes.
        requested: usize,
        /// The free device memory the driver reported right after the failure, in bytes
        /// (`None` when that query failed too).
        free: Option<usize>,
        /// The ordinal of the GPU (`Device::Cuda(device)`).
        device: usize,
    },

    /// The GPU is older than the kernels support
    /// ([`rhea_cuda::device::MIN_COMPUTE_CAPABILITY`], 7.5).
    #[error(
        "GPU {device} ({name}) has compute capability {}.{}, below the {}.{} Rhea's kernels \
         need; use `Device::Cpu` (or `Device::best()`, which falls back to it) or a newer GPU",
        found.0, found.1, minimum.0, minimum.1
    )]
    UnsupportedComputeCapability {
        /// The ordinal of the GPU.
        device: usize,
        /// Its name.
        name: String,
        /// Its compute capability `(major, minor)`.
        found: (u32, u32),
        /// The minimum supported.
        minimum: (u32, u32),
    },

    /// Any other error of the GPU runtime or of a kernel (driver, NVRTC, cache, ...), typed.
    #[error("GPU error: {0}")]
    Gpu(rhea_cuda::CudaError),

    /// The operands of a primitive live on different devices.
    #[error(
        "`{op}`: operands live on different devices ({lhs} and {rhs}); move one of them first"
    )]
    DeviceMismatch {
        /// The primitive.
        op: &'static str,
        /// The device of the first operand.
        lhs: Device,
        /// The device of the second operand.
        rhs: Device,
    },

    /// The operands of a primitive have incompatible shapes (ring degree, limb counts).
    #[error("`{op}`: shape mismatch ({lhs} vs {rhs})")]
    ShapeMismatch {
        /// The primitive.
        op: &'static str,
        /// The shape of the first operand.
        lhs: PolyShape,
        /// The shape of the second operand (or the expected shape).
        rhs: PolyShape,
    },

    /// A primitive received a polynomial in the wrong representation.
    #[error("`{op}`: expected a polynomial in {expected} form, got {found} form")]
    FormMismatch {
        /// The primitive.
        op: &'static str,
        /// The form the primitive needs.
        expected: Form,
        /// The form it was given.
        found: Form,
    },

    /// A buffer or argument of the wrong size or out of its domain.
    #[error("invalid input: {0}")]
    InvalidInput(String),

    /// Parameters that cannot work (bad primes, dnum, scale, ...).
    #[error("invalid parameters: {0}")]
    InvalidParameters(String),

    /// Parameters below 128-bit security without the explicit opt-in.
    #[error(
        "parameters below 128-bit security: {reason}; use a larger ring degree or fewer/smaller \
         primes, or opt in explicitly with `insecure_allow_below_128_bits()` on the \
         `CkksParametersLiteral` or `BgvParametersLiteral`"
    )]
    InsecureParameters {
        /// What the security check found.
        reason: String,
    },

    /// Parameters by intent ([`crate::params::CkksIntent`], [`crate::params::BgvIntent`]) that
    /// no parameter set can meet; the message says what to relax.
    #[error("no parameters for this intent: {0}")]
    ParameterIntent(#[from] crate::params::IntentError),

    /// Objects built for different parameter sets were combined.
    #[error(
        "`{op}`: the operands were created with different parameters (ids {lhs:016x} and \
         {rhs:016x}); use ciphertexts, plaintexts and keys of one context"
    )]
    ParametersMismatch {
        /// The operation.
        op: &'static str,
        /// The parameter id of the first operand.
        lhs: u64,
        /// The parameter id of the second operand.
        rhs: u64,
    },

    /// A rotation whose Galois key was not generated.
    #[error(
        "no Galois key for rotation by {step} (Galois element {galois_element}); generate it with \
         `KeyGenerator::galois_keys(&sk, &[{step}], ..)` and pass it to the evaluator"
    )]
    MissingRotationKey {
        /// The rotation step.
        step: i64,
        /// The Galois element `5^step mod 2N`.
        galois_element: u64,
    },

    /// A conjugation without the conjugation key.
    #[error(
        "no Galois key for complex conjugation (Galois element {galois_element}); generate it with \
         `KeyGenerator::galois_keys(&sk, &[], true)` and pass it to the evaluator"
    )]
    MissingConjugationKey {
        /// The Galois element `2N - 1`.
        galois_element: u64,
    },

    /// A relinearisation without the relinearisation key.
    #[error(
        "`{op}` needs the relinearization key: generate it with \
         `KeyGenerator::relinearization_key(&sk)` and pass it with \
         `Evaluator::with_relinearization_key`"
    )]
    MissingRelinearizationKey {
        /// The operation.
        op: &'static str,
    },

    /// An operation that needs more levels than the ciphertext has left.
    #[error(
        "`{op}` needs {needed} more level(s) but the operand is at level {level}; use parameters \
         with more Q primes (a deeper chain) or bootstrap first"
    )]
    LevelUnderflow {
        /// The operation.
        op: &'static str,
        /// The operand's level (number of rescalings left).
        level: usize,
        /// How many levels the operation consumes.
        needed: usize,
    },

    /// A scale that no longer fits below the ciphertext modulus.
    #[error(
        "`{op}`: the scale 2^{log_scale:.2} (times the message) does not fit below the modulus \
         2^{log_modulus:.2} at this level; rescale first (or use auto-rescale), encode with a \
         smaller scale, or use parameters with more Q primes"
    )]
    ScaleOverflow {
        /// The operation.
        op: &'static str,
        /// log2 of the scale the result would have.
        log_scale: f64,
        /// log2 of the modulus at the result's level.
        log_modulus: f64,
    },

    /// Two operands at the same level whose scales differ by a ratio that is not an integer
    /// (an integer ratio is reconciled exactly, without spending a level).
    #[error(
        "`{op}`: scales differ at the same level (2^{lhs_log_scale:.6} vs 2^{rhs_log_scale:.6}) \
         by a ratio that is not an integer; bring one operand onto the other's scale with \
         `Evaluator::drop_to_level_and_scale` (spends a level) or `mul_const_with_scale`, or \
         encode plaintexts at the ciphertext's level and scale (`Encoder::encode_at`)"
    )]
    ScaleMismatch {
        /// The operation.
        op: &'static str,
        /// log2 of the first operand's scale.
        lhs_log_scale: f64,
        /// log2 of the second operand's scale.
        rhs_log_scale: f64,
    },

    /// A BGV ciphertext whose noise has used up the modulus: the operation would produce (or the
    /// decryption measured) a phase that no longer fits below `Q_ℓ / 2`, so the result could
    /// decrypt wrongly.
    #[error(
        "`{op}`: noise budget exhausted at level {level}: the phase reaches 2^{log_noise:.1}, \
         not below Q_ℓ/2 = 2^{:.1}; use parameters with more or larger Q primes, switch modulus \
         earlier, or compute less deeply",
        log_modulus - 1.0
    )]
    NoiseBudgetExhausted {
        /// The operation (`decrypt` when measured at decryption).
        op: &'static str,
        /// The level of the result.
        level: usize,
        /// `log2` of the phase: the tracked bound, or the measured norm at decryption.
        log_noise: f64,
        /// `log2 Q_ℓ` at that level.
        log_modulus: f64,
    },

    /// A ciphertext with the wrong number of components for the operation.
    #[error("`{op}` needs a ciphertext of {expected} components, got {found}; {hint}")]
    CiphertextDegree {
        /// The operation.
        op: &'static str,
        /// How many components the operation accepts.
        expected: usize,
        /// How many the ciphertext has.
        found: usize,
        /// What to do.
        hint: &'static str,
    },

    /// Slot counts that do not match (encoder vs plaintext/ciphertext).
    #[error(
        "slot count mismatch: {found} slots where {expected} were expected; decode with an \
         `Encoder::with_slots(ctx, {found})`"
    )]
    SlotMismatch {
        /// The slot count expected by the encoder.
        expected: usize,
        /// The slot count of the operand.
        found: usize,
    },

    /// A CKKS scale that cannot carry a message: below 1, zero, negative, NaN or infinite.
    #[error(
        "`{op}`: the scale {scale:e} is not a finite number of at least 1; use a scale such as \
         2^40 (the parameters' default scale, `CkksParameters::default_scale`)"
    )]
    InvalidScale {
        /// The operation.
        op: &'static str,
        /// The scale that was given.
        scale: f64,
    },

    /// A value outside the range a BGV encoder accepts: `(-t/2, t/2]` for signed values,
    /// `[0, t)` for unsigned ones. Values are never reduced silently.
    #[error(
        "value {value} at index {index} is outside {range} for the plaintext modulus t = {t}; \
         reduce it yourself if wrapping modulo t is intended"
    )]
    PlaintextOutOfRange {
        /// The value that was given.
        value: i128,
        /// Its index in the input.
        index: usize,
        /// The plaintext modulus `t`.
        t: u64,
        /// The accepted range, as text (`(-t/2, t/2]` or `[0, t)`).
        range: &'static str,
    },

    /// A Galois element that is not in the Galois group of `Z[X]/(X^N + 1)` (the odd residues
    /// modulo `2N`).
    #[error(
        "{element} is not a Galois element for N = {}: Galois elements are odd and below 2N = \
         {two_n}; use `galois_element_for_rotation(step)` or `galois_element_for_conjugation()`",
        two_n / 2
    )]
    InvalidGaloisElement {
        /// The element that was given.
        element: u64,
        /// `2N`.
        two_n: u64,
    },

    /// A ciphertext or key split over a GPU group (`rhea::unstable::multi`) given to a group
    /// that splits its limbs otherwise (another partition rule or other GPUs): its limbs would
    /// be read as other limbs.
    #[error(
        "`{op}`: {what} split as {found}, but this GPU group splits as {expected}; scatter or \
         partition it with this group"
    )]
    GroupMismatch {
        /// The operation.
        op: &'static str,
        /// What was given (a ciphertext, a key).
        what: &'static str,
        /// The group's split (its partition rule and GPUs).
        expected: String,
        /// The split the operand was made with.
        found: String,
    },

    /// A GPU group (`rhea::unstable::multi::GpuGroup`) failed while its work ran: a GPU's
    /// device reported an error (its context died: a faulting kernel), or NCCL failed. Every
    /// communicator of the group was aborted (the other GPUs' collectives stopped waiting), and
    /// the group returns this error from now on. Drop the group and build a new one over the
    /// GPUs that still work; a GPU whose context died is usable again only from a new process.
    #[error(
        "the GPU group failed{}: {reason}; drop the group and build a new one over the GPUs \
         that still work (a GPU whose context died needs a new process)",
        match gpu { Some(g) => format!(" on GPU {g}"), None => String::new() }
    )]
    GroupFailed {
        /// The ordinal of the GPU that failed (`Device::Cuda(gpu)`), where one is known.
        gpu: Option<usize>,
        /// The device's or NCCL's error.
        reason: String,
    },

    /// A GPU group's work did not finish within the group's deadline
    /// (`GpuGroup::set_collective_timeout`, 60 s by default): a GPU stopped answering. The
    /// group was aborted as for [`Error::GroupFailed`] and returns this error from now on.
    #[error(
        "the GPU group's work did not finish within {waited:?} (GPUs {pending:?} still \
         running); the group was aborted: drop it and build a new one"
    )]
    CollectiveTimeout {
        /// How long the host waited.
        waited: std::time::Duration,
        /// The ordinals of the GPUs whose work had not finished.
        pending: Vec<usize>,
    },
}

/// The result type of `rhea`.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;
    use rhea_cuda::CudaError;

    #[test]
    fn gpu_errors_stay_typed() {
        let oom = Error::from(CudaError::OutOfMemory {
            device: 1,
            requested_bytes: 3 << 30,
            free_bytes: Some(1 << 30),
        });
        assert_eq!(
            oom,
            Error::DeviceOutOfMemory {
                requested: 3 << 30,
                free: Some(1 << 30),
                device: 1
            }
        );
        let text = oom.to_string();
        assert!(
            text.contains("GPU 1") && text.contains("3221225472 bytes"),
            "{text}"
        );
        assert!(text.contains("1073741824 bytes free") && text.contains("Device::Cpu"));
        let unknown = Error::DeviceOutOfMemory {
            requested: 8,
            free: None,
            device: 0,
        };
        assert!(unknown.to_string().contains("free memory unknown"));

        let old = Error::from(CudaError::UnsupportedComputeCapability {
            index: 0,
            name: "Tesla P100".into(),
            found: (6, 0),
            minimum: (7, 5),
        });
        assert!(matches!(
            old,
            Error::UnsupportedComputeCapability {
                device: 0,
                found: (6, 0),
                minimum: (7, 5),
                ..
            }
        ));
        assert!(old.to_string().contains("6.0") && old.to_string().contains("Device::Cpu"));

        use rhea_cuda::nccl::NcclError;
        let failed = Error::from(CudaError::Nccl(NcclError::GroupFailed {
            gpu: Some(1),
            reason: "CUDA_ERROR_LAUNCH_FAILED".into(),
        }));
        assert_eq!(
            failed,
            Error::GroupFailed {
                gpu: Some(1),
                reason: "CUDA_ERROR_LAUNCH_FAILED".into()
            }
        );
        let text = failed.to_string();
        assert!(
            text.contains("GPU 1") && text.contains("LAUNCH_FAILED"),
            "{text}"
        );
        let late = Error::from(CudaError::Nccl(NcclError::Timeout {
            waited: std::time::Duration::from_secs(5),
            pending: vec![0],
        }));
        assert_eq!(
            late,
            Error::CollectiveTimeout {
                waited: std::time::Duration::from_secs(5),
                pending: vec![0]
            }
        );
        assert!(late.to_string().contains("5s"), "{late}");

        let compile = CudaError::Compile {
            kernel: "ntt".into(),
            log: "error".into(),
        };
        assert_eq!(Error::from(compile.clone()), Error::Gpu(compile));
        let math = rhea_math::MathError::InvalidArgument("x".into());
        assert_eq!(
            Error::from(CudaError::Math(math.clone())),
            Error::Math(math)
        );
    }
}
