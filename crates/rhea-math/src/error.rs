//! The error type of `rhea-math`.

use thiserror::Error;

/// Everything that can go wrong in exact RNS arithmetic: each variant names the bad input.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MathError {
    /// A modulus outside the supported range `2 ..= 2^61` (or not odd where an odd one is needed).
    #[error("modulus {value} is not supported: {reason}")]
    InvalidModulus {
        /// The offending modulus.
        value: u64,
        /// Why it was refused.
        reason: &'static str,
    },
    /// A value has no inverse modulo `q` (it shares a factor with `q`).
    #[error("{value} has no inverse modulo {modulus}")]
    NotInvertible {
        /// The value.
        value: u64,
        /// The modulus.
        modulus: u64,
    },
    /// A ring degree that is not a power of two in the supported range.
    #[error("ring degree {degree} is not a power of two in 2^{min_log}..=2^{max_log}")]
    InvalidDegree {
        /// The requested degree.
        degree: usize,
        /// Smallest supported log2 degree.
        min_log: u32,
        /// Largest supported log2 degree.
        max_log: u32,
    },
    /// A modulus that is not NTT-friendly for the requested degree (needs a prime `q ≡ 1 mod 2N`).
    #[error("modulus {modulus} is not NTT-friendly for N = {degree}: need a prime q ≡ 1 (mod 2N)")]
    NotNttFriendly {
        /// The modulus.
        modulus: u64,
        /// The ring degree.
        degree: usize,
    },
    /// Not enough primes of the requested shape exist.
    #[error("could not find {count} distinct NTT-friendly primes of {bits} bits for N = {degree}")]
    NotEnoughPrimes {
        /// How many were asked for.
        count: usize,
        /// The bit size asked for.
        bits: u32,
        /// The ring degree.
        degree: usize,
    },
    /// An RNS basis with a repeated or non-coprime modulus, or an empty one.
    #[error("invalid RNS basis: {0}")]
    InvalidBasis(String),
    /// Two bases, or a basis and a buffer, that do not fit together.
    #[error("shape mismatch: {0}")]
    ShapeMismatch(String),
    /// A parameter outside its documented domain (e.g. a Hamming weight larger than N).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The operating system's random source failed.
    #[error("the OS random source failed: {0}")]
    Entropy(String),
}

/// Shorthand for results in this crate.
pub type Result<T> = std::result::Result<T, MathError>;
