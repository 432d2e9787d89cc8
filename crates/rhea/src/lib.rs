//! # Rhea
//!
//! Fully homomorphic encryption — CKKS and BGV — on NVIDIA GPUs and on CPUs, with the same API and
//! bit-identical results.

pub use rhea_math as math;
