//! The CUDA implementation of the primitives, on `rhea_cuda::DeviceBuffer`s (`[limb][N]`).
//!
//! Every function here is the body of one primitive of [`super::ops`] for `Storage::Cuda`
//! operands; shapes and forms are checked by the caller. Each one computes exactly the canonical
//! words of its CPU twin in [`super::cpu`]:
//!
//! - element-wise arithmetic, NTTs, automorphisms and the key-switching inner product are exact
//!   residue arithmetic, so any correct kernel gives the CPU's words;
//! - ModUp and ModDown use the centred conversion with the deterministic `f64` correction
//!   (`DeviceBaseConverter::convert_centered`, twin of `BaseConverter::convert_centered`), composed
//!   with the NTTs exactly as on the CPU;
//! - rescaling is `rhea-math`'s exact `round(x / q_last)`: the `DeviceRescaler` kernel in
//!   coefficient form; in NTT form only the last limb is inverse-transformed, and the centred
//!   lift of it is subtracted in the NTT domain (the same integer, hence the same words);
//! - the key-switching inner product is one fused launch reading the digits and the key's
//!   polynomials in place (`rhea_cuda::fused`), ModDown ends in one fused subtract-multiply;
//! - uniform sampling regenerates the host's ChaCha20 stream on the device.
//!
//! All device tables of a ring (NTT twiddles of `Q ∪ P`, moduli tables of every shape, the ModUp
//! and ModDown converters of every level, the rescaler) are uploaded once, when the ring is first
//! used on the device ([`GpuRing::new`]); afterwards no primitive copies anything between host and
//! device except [`RnsRing::upload`](super::RnsRing::upload) and
//! [`RnsRing::download`](super::RnsRing::download). Work is queued on the device's one stream
//! and nothing waits for it, except downloads.

use std::sync::Arc;

use rhea_cuda::bconv::{DeviceBaseConverter, DeviceModUp, DeviceRescaler};
use rhea_cuda::ntt::{
    DeviceNttTables, EpilogueRun, LiftAddFactors, LiftRun, NttAlgorithm, NttBatch, NttDirection,
    NttRun, MAX_RUNS,
};
use rhea_cuda::ntt_keyswitch::{self, KsDigit};
use rhea_cuda::{automorphism, elementwise as ew, fused, sample};
use rhea_cuda::{CudaError, DeviceBuffer, DeviceModuli, GpuDevice, RnsLayout};

use super::{PolyShape, RnsRing};
use crate::error::{Error, Result};

mod basis;
mod elementwise;
mod keyswitch;
pub(crate) mod multi;
mod ring;
mod sampling;
mod transform;

/// Keeps GPU errors typed: out-of-memory, a too-old GPU and a failed GPU group
/// ([`Error::GroupFailed`], [`Error::CollectiveTimeout`]) become their own variants, the host
/// arithmetic's errors [`Error::Math`], everything else [`Error::Gpu`] with the `CudaError`.
impl From<CudaError> for Error {
    fn from(e: CudaError) -> Self {
        match e {
            CudaError::Math(m) => Error::Math(m),
            CudaError::OutOfMemory {
                device,
                requested_bytes,
                free_bytes,
            } => Error::DeviceOutOfMemory {
                requested: requested_bytes,
                free: free_bytes,
                device,
            },
            CudaError::UnsupportedComputeCapability {
                index,
                name,
                found,
                minimum,
            } => Error::UnsupportedComputeCapability {
                device: index,
                name,
                found,
                minimum,
            },
            CudaError::Nccl(rhea_cuda::nccl::NcclError::GroupFailed { gpu, reason }) => {
                Error::GroupFailed { gpu, reason }
            }
            CudaError::Nccl(rhea_cuda::nccl::NcclError::Timeout { waited, pending }) => {
                Error::CollectiveTimeout { waited, pending }
            }
            e => Error::Gpu(e),
        }
    }
}

/// A second operand: the caller's buffer, a view of its first limbs (a higher-level operand
/// read at a lower level: limbs outermost, so no copy), or a device copy (a key's `Q_ℓ ∪ P`
/// limbs, not a prefix).
enum Operand<'a> {
    Borrowed(&'a DeviceBuffer),
    View(rhea_cuda::PrefixView<'a>),
    Owned(DeviceBuffer),
}

impl std::ops::Deref for Operand<'_> {
    type Target = DeviceBuffer;
    fn deref(&self) -> &DeviceBuffer {
        match self {
            Operand::Borrowed(b) => b,
            Operand::View(v) => v,
            Operand::Owned(b) => b,
        }
    }
}

/// The device tables of one [`RnsRing`] on one GPU.
pub(crate) struct GpuRing {
    dev: Arc<GpuDevice>,
    /// `|Q|`.
    q_len: usize,
    /// NTT tables, `Q` primes then `P` primes.
    ntt: DeviceNttTables,
    /// Every modulus of `Q ∪ P` in order: limb `j` of a shape without `P`, or of the full
    /// shape, uses modulus `j`.
    full: Arc<DeviceModuli>,
    /// `qp[ℓ - 1]`: the moduli of `Q_ℓ ∪ P`.
    qp: Vec<Arc<DeviceModuli>>,
    /// ModUp of every digit, its converters uploaded (and its kernels compiled) at creation.
    mod_up: DeviceModUp,
    /// `mod_down[ℓ - 1]`: the twin of `KeySwitchPlan::mod_down_converter(ℓ)`.
    mod_down: Vec<DeviceBaseConverter>,
    rescaler: DeviceRescaler,
    /// `(P^{-1} mod q_i, shoup)` pairs for every Q prime (the ModDown tail).
    mod_down_w: DeviceBuffer,
    /// `rescale_w[ℓ - 2]`: `(q_{ℓ-1}^{-1} mod q_i, shoup)` pairs for `i < ℓ - 1`.
    rescale_w: Vec<DeviceBuffer>,
    /// `(P mod q_i, shoup)` pairs for every Q prime (the merged ModDown-rescale).
    p_mod_q_w: DeviceBuffer,
    /// `(q_i − 1, shoup)` pairs (`−1 mod q_i`) for every Q prime: the factor with which a
    /// public-key encryption's errors enter its ModDown's forward NTT.
    neg_one_w: DeviceBuffer,
    /// The Q primes.
    q_values: Vec<u64>,
    /// `mod_up_inverse[ℓ - 1]`: the ModUp's inverse NTT at level `ℓ` with the conversions'
    /// first step `q̂_i^{-1}` folded in ([`DeviceNttTables::scaled_inverse_words`]); empty
    /// without the fast NTT.
    mod_up_inverse: Vec<DeviceBuffer>,
    /// The ModDown's inverse NTT of the P limbs with its conversion's first step `p̂_j^{-1}`
    /// folded in (words for every table, the Q tables' factor 1); `None` as `mod_up_inverse`.
    mod_down_inverse: Option<DeviceBuffer>,
}

/// `(w_i, shoup(w_i))` pairs, interleaved.
fn shoup_pairs(w: &[u64], ws: &[u64]) -> Vec<u64> {
    w.iter().zip(ws).flat_map(|(&a, &b)| [a, b]).collect()
}

impl std::fmt::Debug for GpuRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuRing")
            .field("device", &self.dev.index())
            .field("q_len", &self.q_len)
            .finish_non_exhaustive()
    }
}

/// What a GPU key switching ([`GpuRing::keyswitch_poly`]) does after its ModDown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KsTail {
    /// Nothing more: the results in NTT form over `Q_ℓ`.
    Plain,
    /// The rescale by the last prime, merged with the ModDown.
    Rescale,
    /// The automorphism `σ_g` (odd `g`), written by the ModDown's last kernel.
    Automorphism(u64),
}
