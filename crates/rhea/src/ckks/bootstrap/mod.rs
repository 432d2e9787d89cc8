//! CKKS bootstrapping (issue 34): the pieces that refresh a ciphertext at level 0 to a high
//! level — ModRaise ([`Evaluator::mod_raise`](crate::ckks::Evaluator::mod_raise)) under a sparse
//! ephemeral secret ([`EncapsulationKeys`],
//! [`Evaluator::encapsulate`](crate::ckks::Evaluator::encapsulate),
//! [`Evaluator::decapsulate`](crate::ckks::Evaluator::decapsulate)), the homomorphic DFTs
//! CoeffToSlot and SlotToCoeff ([`HomomorphicDft`]), and the approximate modular reduction
//! EvalMod. Conventions: a plaintext polynomial `m(X)` with `c_k = m_{k·g} + i·m_{(k+n)·g}`
//! (`g = N/(2n)`) decodes to the slots `z = U·c/Δ`, `U[j][k] = ξ_j^k`,
//! `ξ_j = ζ_{4n}^{5^j mod 4n}`. Between CoeffToSlot and SlotToCoeff the packed coefficient
//! `c_k` sits in slot `bit_reverse(k)` ([`bit_reverse_index`], [`HomomorphicDft::index`]).

mod batch;
mod bootstrapper;
mod dft;
mod encapsulation;
mod evalmod;
mod presets;
mod raise;

pub use bootstrapper::{BootstrapConfig, BootstrapStages, Bootstrapper, KeyProgress};
pub use dft::{bit_reverse_index, DftDirection, HomomorphicDft};
pub use encapsulation::EncapsulationKeys;
pub use evalmod::{EvalMod, EvalModParams};
pub use presets::BootstrapPreset;
