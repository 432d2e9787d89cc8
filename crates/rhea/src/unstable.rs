//! Internals for Rhea's own command-line tool, benchmarks and tests: **no semver guarantees**.
//!
//! Everything here may change or disappear in any release, including patch releases. Build on
//! the rest of the crate ([`crate::ckks`], [`crate::bgv`], [`crate::params`], [`crate::serial`],
//! [`crate::Device`]); reach in here only to test or measure Rhea itself.
//!
//! - [`RnsRing`]: the precomputed tables of one `Q ∪ P` ring and the backend primitives (NTTs,
//!   element-wise arithmetic, ModUp/ModDown, rescaling, the fused key-switching paths, sampling,
//!   upload and download of a [`Poly`](crate::backend::Poly)'s words).
//! - [`KeySwitchPlan`]: a ring's hybrid key-switching tables (digits, ModUp, ModDown), read by
//!   the CPU backend and uploaded to a GPU.
//! - [`HasRing`]: the ring of a context, of parameters or of a codec.
//! - [`multi`]: latency mode over several GPUs — a [`multi::GpuGroup`] splits one key switching
//!   (mul+relin, rotation) by limb across its GPUs through NCCL, with keys partitioned by limb,
//!   and runs the element-wise operations (additions, constants, plaintext operands, rescaling)
//!   on each GPU's own limbs.
//! - [`math`] and [`cuda`]: the lower crates, `rhea-math` (exact host arithmetic, the test
//!   oracle) and `rhea-cuda` (the CUDA runtime and kernels).
//!
//! ```
//! use rhea::ckks::{CkksContext, Encoder};
//! use rhea::params::CkksParametersLiteral;
//! use rhea::unstable::HasRing;
//! use rhea::Device;
//!
//! let ctx = CkksContext::new(&CkksParametersLiteral::n13_logqp200_levels2().build()?, Device::Cpu)?;
//! let pt = Encoder::new(&ctx)?.encode(&[1.0, 2.0])?;
//! let words = ctx.ring().download(pt.poly())?; // the raw RNS words
//! assert_eq!(words.len(), 3 * ctx.ring().n());
//! # Ok::<(), rhea::Error>(())
//! ```

pub use crate::backend::keyswitch_plan::KeySwitchPlan;
pub use crate::backend::ring::RnsRing;
pub use rhea_cuda as cuda;
pub use rhea_math as math;

/// Latency mode over several GPUs (issue 37): one operation split by limb across a group of
/// GPUs, keys partitioned by limb, NCCL for the exchanges; bit-identical to one GPU and to the
/// CPU. See `docs/multi-gpu.md` and the design notes ("Issue 37, session 29").
pub mod multi {
    pub use crate::backend::multi::{
        GpuGroup, KeySwitchTraffic, LimbPartition, PartitionKind, PartitionedCiphertext,
        PartitionedGaloisKeys, PartitionedKey, PartitionedPlaintext,
    };
}

use crate::bgv::{BgvContext, BgvParameters};
use crate::ckks::CkksContext;
use crate::params::CkksParameters;
use crate::rlwe::RlweContext;
use crate::serial::{Codec, SchemeParameters};

/// The RNS ring (and its primitives) behind a context, a parameter set or a codec.
pub trait HasRing {
    /// The ring.
    fn ring(&self) -> &RnsRing;
}

macro_rules! has_ring {
    ($($t:ty),*) => {$(
        impl HasRing for $t {
            fn ring(&self) -> &RnsRing {
                <$t>::ring(self)
            }
        }
    )*};
}
has_ring!(
    CkksContext,
    BgvContext,
    RlweContext,
    CkksParameters,
    BgvParameters,
    SchemeParameters,
    Codec
);

/// **Tests of where secrets go only** (LITE's raw-memory test): the secret key's `s` over
/// `Q ∪ P` (NTT form), so that a test can search device memory for its words.
pub fn secret_key_poly(sk: &crate::rlwe::SecretKey) -> &crate::backend::Poly {
    &sk.s_qp
}

/// The two halves `[b, a]` of a public key (tests comparing key words).
pub fn public_key_parts(pk: &crate::rlwe::PublicKey) -> &[crate::backend::Poly; 2] {
    &pk.parts
}
