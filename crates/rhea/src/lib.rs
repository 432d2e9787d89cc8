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
//! - [`unstable`]: internals for Rhea's own CLI, benchmarks and tests, with **no semver
//!   guarantees** (the RNS ring and its primitives, the lower crates).
//!
//! Ciphertexts, plaintexts and keys are `Clone` and move to another device in one call
//! (`ct.to_device(&ctx_on_gpu)`); encryptors, decryptors and evaluators own their keys (an
//! `Arc`), so they can be stored and sent between threads. Decrypted CKKS results that leave the
//! key owner should be decrypted with noise flooding ([`ckks::NoiseFlooding`]). GPU failures are
//! typed ([`Error::DeviceOutOfMemory`], [`Error::UnsupportedComputeCapability`], [`Error::Gpu`]);
//! GPUs need compute capability 7.5 or later.
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
pub mod unstable;

pub use backend::Device;

/// The user guide, `docs/guide.md`: its code blocks run as doctests (`cargo test -p rhea --doc`).
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide.md")]
pub struct GuideDoctests;
pub use error::{Error, Result};
