//! CKKS bootstrapping (issue 34): the homomorphic modular reduction [`EvalMod`].

mod evalmod;

pub use evalmod::{EvalMod, EvalModParams};
