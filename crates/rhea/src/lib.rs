//! # Rhea
//!
//! Fully homomorphic encryption — CKKS and BGV — on NVIDIA GPUs and on CPUs, with the same API and
//! bit-identical results.
//!
//! - [`backend`]: the device seam ([`Device`], [`backend::Poly`], the primitives).
//! - [`params`]: validated parameter sets and named presets.
//! - [`rlwe`]: the scheme-agnostic RLWE core (keys, encryption, hybrid key switching).
//! - [`ckks`]: the CKKS scheme (encoder, encryptor, decryptor, evaluator).
//! - [`bgv`]: the BGV scheme, on the same RLWE core.
//!
//! Start with the quick start (`cargo run --release -p rhea --example quickstart`), the example
//! in [`ckks`], or the user guide (`docs/guide.md` in the repository: parameters, keys,
//! encoding, evaluation, rotations, serialisation, the GPU and errors, with runnable examples).

pub mod backend;
pub mod bgv;
pub mod ckks;
mod error;
pub mod params;
pub mod rlwe;
pub mod serial;

pub use backend::Device;

/// The user guide, `docs/guide.md`: its code blocks run as doctests (`cargo test -p rhea --doc`).
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide.md")]
pub struct GuideDoctests;
pub use error::{Error, Result};
pub use rhea_math as math;
