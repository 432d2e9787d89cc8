//! The backend seam: devices, RNS polynomials and the primitives scheme code is written against.
//!
//! - [`Device`]: where data lives and work runs (`Cpu`, `Cuda(i)`), chosen at run time.
//! - [`Poly`]: one RNS polynomial on a device (its words live in host memory or in GPU memory),
//!   with its [`PolyShape`] (a prefix of the `Q` limbs, then none or all of the `P` limbs) and
//!   [`Form`] (coefficients, or NTT evaluations in bit-reversed order).
//! - [`RnsRing`] (unstable, in [`crate::unstable`]): the precomputed
//!   tables of one `Q ∪ P` ring; its methods are the primitives: allocation and transfer
//!   ([`RnsRing::zero`], [`RnsRing::upload`], [`RnsRing::download`]),
//!   NTTs over all or a range of limbs, element-wise add/sub/neg/mul/mul-add with per-limb scalar
//!   variants, the Galois automorphism, ModUp, ModDown, rescaling, the key-switching inner
//!   product, and sampling.
//!
//! Each primitive checks its operands (device, shape, form: typed errors), matches on their
//! storage and runs the implementation for that device (`cpu`, or `cuda` on `rhea-cuda`'s
//! kernels). Scheme code (RLWE, CKKS, BGV) calls only these primitives, so one copy of every
//! scheme runs on both devices, with bit-identical results: every GPU primitive produces exactly
//! the canonical words of its CPU twin.
//!
//! On a GPU, polynomials stay in device memory from their creation (upload, sampling) to their
//! download; no primitive other than [`RnsRing::upload`] and the downloads copies words between
//! host and device, and nothing waits for the device except downloads (see
//! [`Device::bytes_to_device`], [`Device::synchronize`]).
//!
//! [`RnsRing::zero`]: crate::unstable::RnsRing::zero
//! [`RnsRing::upload`]: crate::unstable::RnsRing::upload
//! [`RnsRing::download`]: crate::unstable::RnsRing::download

mod all_data;
mod awake;
mod cpu;
mod cuda;
mod device;
mod fused_ops;
pub(crate) mod keyswitch_plan;
mod ops;
mod poly;
mod protected;
pub(crate) mod ring;

pub(crate) use all_data::AllDataPlan;
pub use awake::{cpu_spin, set_cpu_spin};
pub use device::Device;
pub(crate) use poly::Storage;
pub use poly::{Form, Poly, PolyShape};
pub(crate) use protected::LiteTerm;
pub use protected::ProtectedPoly;
pub(crate) use ring::RnsRing;

pub(crate) use awake::on_pool;
pub(crate) use cuda::multi;

#[cfg(test)]
mod tests;
