//! Rust errors to Python exceptions, and the one door every call goes through ([`run`]): the
//! GIL released, panics caught.
//!
//! The exception classes live in `rhea/_errors.py` (so that they can derive from `ValueError`
//! or `MemoryError` too); each [`rhea::Error`] variant is raised as its class with the Rust
//! message, and `err.variant` names the variant.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rhea::serial::SerialError;
use rhea::Error;

/// The Python class name (in `rhea._errors`) and the Rust variant name of `e`.
fn class_of(e: &Error) -> (&'static str, &'static str) {
    match e {
        Error::Math(_) => ("InvalidParametersError", "Math"),
        Error::DeviceNotSupported { .. } => ("DeviceError", "DeviceNotSupported"),
        Error::DeviceOutOfMemory { .. } => ("DeviceOutOfMemoryError", "DeviceOutOfMemory"),
        Error::UnsupportedComputeCapability { .. } => {
            ("DeviceError", "UnsupportedComputeCapability")
        }
        Error::Gpu(_) => ("DeviceError", "Gpu"),
        Error::DeviceMismatch { .. } => ("DeviceMismatchError", "DeviceMismatch"),
        Error::ShapeMismatch { .. } => ("InvalidInputError", "ShapeMismatch"),
        Error::FormMismatch { .. } => ("InvalidInputError", "FormMismatch"),
        Error::InvalidInput(_) => ("InvalidInputError", "InvalidInput"),
        Error::InvalidParameters(_) => ("InvalidParametersError", "InvalidParameters"),
        Error::InsecureParameters { .. } => ("InsecureParametersError", "InsecureParameters"),
        Error::ParameterIntent(_) => ("InvalidParametersError", "ParameterIntent"),
        Error::ParametersMismatch { .. } => ("ParameterMismatchError", "ParametersMismatch"),
        Error::MissingRotationKey { .. } => ("MissingRotationKeyError", "MissingRotationKey"),
        Error::MissingConjugationKey { .. } => {
            ("MissingConjugationKeyError", "MissingConjugationKey")
        }
        Error::MissingRelinearizationKey { .. } => (
            "MissingRelinearizationKeyError",
            "MissingRelinearizationKey",
        ),
        Error::LevelUnderflow { .. } => ("LevelUnderflowError", "LevelUnderflow"),
        Error::ScaleOverflow { .. } => ("ScaleError", "ScaleOverflow"),
        Error::ScaleMismatch { .. } => ("ScaleError", "ScaleMismatch"),
        Error::InvalidScale { .. } => ("ScaleError", "InvalidScale"),
        Error::NoiseBudgetExhausted { .. } => ("NoiseBudgetExhaustedError", "NoiseBudgetExhausted"),
        Error::CiphertextDegree { .. } => ("InvalidInputError", "CiphertextDegree"),
        Error::SlotMismatch { .. } => ("InvalidInputError", "SlotMismatch"),
        Error::PlaintextOutOfRange { .. } => ("InvalidInputError", "PlaintextOutOfRange"),
        Error::InvalidGaloisElement { .. } => ("InvalidInputError", "InvalidGaloisElement"),
        _ => ("RheaError", "Other"),
    }
}

/// An instance of `rhea._errors.<class>` with `message`, its `variant` attribute set.
pub(crate) fn raise(py: Python<'_>, class: &str, variant: &str, message: String) -> PyErr {
    let built = (|| -> PyResult<PyErr> {
        let cls = py.import("rhea._errors")?.getattr(class)?;
        let value = cls.call1(PyTuple::new(py, [message.clone()])?)?;
        value.setattr("variant", variant)?;
        Ok(PyErr::from_value(value))
    })();
    // Importing our own module cannot fail once the package is installed; if it ever does,
    // the message still reaches the user.
    built.unwrap_or_else(|_| pyo3::exceptions::PyRuntimeError::new_err(message))
}

/// `e` as its Python exception.
pub(crate) fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let (class, variant) = class_of(&e);
    raise(py, class, variant, e.to_string())
}

/// A serialisation error as its Python exception (a wrapped [`rhea::Error`] keeps its class).
pub(crate) fn serial_to_py(py: Python<'_>, e: SerialError) -> PyErr {
    match e {
        SerialError::Rhea(inner) => to_py(py, inner),
        other => raise(py, "SerializationError", "Serial", other.to_string()),
    }
}

/// A caught panic as `rhea.InternalError`.
fn panic_to_py(py: Python<'_>, payload: Box<dyn Any + Send>) -> PyErr {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    raise(
        py,
        "InternalError",
        "Panic",
        format!("internal error in Rhea (a bug, please report it): {what}"),
    )
}

/// Runs `f` with the GIL released, a panic caught (as `rhea.InternalError`) and its error
/// raised as its Python class. Every call into Rhea that computes goes through here.
pub(crate) fn run<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> rhea::Result<T> + Send,
{
    match py.detach(move || catch_unwind(AssertUnwindSafe(f))) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(to_py(py, e)),
        Err(payload) => Err(panic_to_py(py, payload)),
    }
}

/// [`run`] for the serialisation layer's errors.
pub(crate) fn run_serial<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> Result<T, SerialError> + Send,
{
    match py.detach(move || catch_unwind(AssertUnwindSafe(f))) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(serial_to_py(py, e)),
        Err(payload) => Err(panic_to_py(py, payload)),
    }
}

/// An `InvalidInputError` raised by the bindings themselves (a bad Python argument).
pub(crate) fn invalid(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(py, "InvalidInputError", "InvalidInput", message.into())
}
