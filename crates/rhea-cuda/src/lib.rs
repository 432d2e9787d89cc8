//! # rhea-cuda
//!
//! The CUDA runtime and kernels of Rhea. Knows nothing of schemes: every launch wrapper has a
//! twin in `rhea-math` that is its test oracle.
#![allow(unsafe_code)] // the one crate of the workspace where `unsafe` lives; each block has a SAFETY comment
