//! # rhea-cuda
//!
//! The CUDA runtime and kernels of Rhea. Knows nothing of schemes: every launch wrapper has a
//! twin in `rhea-math` that is its test oracle.
//!
//! - [`GpuDevice`] ([`device`]): a device with one ordered stream, a binned memory pool
//!   ([`pool`]), a kernel-module cache and host↔device byte counters.
//! - [`DeviceBuffer`] ([`buffer`]): a pooled device array of `u64` words; upload/download.
//! - [`registry`]: embedded `kernels/*.cu` sources, NVRTC compilation for the device's own
//!   architecture, the on-disk CUBIN cache; [`registry::compile_all`] needs no GPU.
//! - [`elementwise`]: element-wise RNS arithmetic over `[poly][limb][N]` buffers, with the
//!   shared per-limb moduli table [`DeviceModuli`].
//! - [`ntt`], [`bconv`], [`automorphism`], [`sample`], [`fused`]: the kernels
//!   of the RNS primitives, each with its `rhea-math` twin; [`ntt_keyswitch`]: the ModUp's
//!   forward row phase fused with the key-switching inner product.
//! - [`fp64`]: modular arithmetic in doubles for primes below 2^46 (the FP64 pipe's NTT
//!   butterflies), the twin of `kernels/fp64.cuh`.
//! - [`Tuning`] ([`tuning`]): the per-device choices (PDL, FP64 NTT rows), made once when a
//!   device is opened; no environment variable changes them.
//! - [`lite`]: LITE, AES-XTS memory encryption inside kernels (`kernels/lite_aes_xts.cuh`):
//!   session keys, host-side XTS, encrypted device buffers, test and benchmark kernels.
//! - [`nccl`]: NCCL communicators of a device group (cudarc's bindings, loaded at run time)
//!   and the collectives of the multi-GPU key switching, with typed errors.
//! - `launch` (crate-internal): programmatic dependent launch, so that each kernel starts while
//!   the previous one drains; the contract kernels keep is in `docs/cuda-backend.md`.
//!
//! Without a driver or a GPU every entry point returns [`CudaError::NoDriver`]; nothing panics.
//! See `docs/cuda-backend.md` for the design.
#![allow(unsafe_code)] // the one crate of the workspace where `unsafe` lives; each block has a SAFETY comment

pub mod automorphism;
pub mod bconv;
pub mod buffer;
pub mod device;
pub mod elementwise;
pub mod error;
#[doc(hidden)]
pub mod fault;
pub mod fp64;
pub mod fused;
pub(crate) mod launch;
pub mod lite;
pub mod nccl;
pub mod ntt;
pub mod ntt_keyswitch;
pub mod pool;
pub mod registry;
pub mod sample;
pub mod sums_of_products;
#[cfg(feature = "dev-kernel-defines")]
pub mod timeline;
pub mod tuning;

pub use buffer::{DeviceBuffer, PrefixView};
pub use device::{DeviceInfo, GpuDevice, RawRegion};
pub use elementwise::{DeviceModuli, RnsLayout};
pub use error::{CudaError, Result};
pub use pool::PoolStats;
pub use registry::{all_kernel_sources, compile_all, KernelSource};
pub use tuning::Tuning;
