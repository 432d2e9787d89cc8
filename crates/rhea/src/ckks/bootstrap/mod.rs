//! CKKS bootstrapping (issue 34): the pieces that refresh a ciphertext near the bottom of the
//! chain to a high level — the homomorphic DFTs SlotToCoeff and CoeffToSlot
//! ([`HomomorphicDft`]; SlotToCoeff runs first, on the chain's lowest primes), ModRaise
//! ([`Evaluator::mod_raise`](crate::ckks::Evaluator::mod_raise)) under a sparse ephemeral secret
//! ([`EncapsulationKeys`], [`Evaluator::encapsulate`](crate::ckks::Evaluator::encapsulate),
//! [`Evaluator::decapsulate`](crate::ckks::Evaluator::decapsulate)), and the approximate modular
//! reduction EvalMod; [`Bootstrapper`] runs them in that order. Conventions: a plaintext
//! polynomial `m(X)` with `c_k = m_{k·g} + i·m_{(k+n)·g}` (`g = N/(2n)`) decodes to the slots
//! `z = U·c/Δ`, `U[j][k] = ξ_j^k`, `ξ_j = ζ_{4n}^{5^j mod 4n}`. The packed coefficient `c_k`
//! sits in slot `bit_reverse(k)` on the slot side of either transform ([`bit_reverse_index`],
//! [`HomomorphicDft::index`]).

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
