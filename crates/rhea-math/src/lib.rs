//! # rhea-math
//!
//! Exact host arithmetic for Rhea, and the reference every GPU kernel is tested against:
//!
//! - [`Modulus`] / [`Montgomery`]: arithmetic modulo a word-sized `q < 2^61` (Barrett, Shoup,
//!   Montgomery, lazy Harvey forms).
//! - [`prime`]: deterministic generation of NTT-friendly primes `q ≡ 1 (mod 2N)`.
//! - [`ntt`]: the negacyclic NTT with bit-reversed output, batched over limbs.
//! - [`basis`]: RNS bases, CRT reconstruction to big integers.
//! - [`bconv`]: fast base conversion, ModUp, ModDown and rescaling on `[limb][N]` buffers.
//! - [`bgv_rescale`]: BGV modulus switching and ModDown that keep the plaintext modulo `t`.
//! - [`sampler`]: uniform, ternary and discrete-Gaussian samplers over a seedable ChaCha20 CSPRNG.
//! - [`fft`]: the CKKS special FFT (canonical embedding, `5^j` slot order).
//!
//! No I/O, no GPU, no `unsafe`.

pub mod basis;
pub mod bconv;
pub mod bgv_rescale;
mod error;
pub mod fft;
mod modulus;
pub mod ntt;
pub mod prime;
pub mod sampler;

pub use error::{MathError, Result};
pub use modulus::{Modulus, Montgomery, MAX_MODULUS_BITS};
