//! BGV: exact arithmetic on encrypted integers modulo a plaintext modulus `t`, on the same RLWE
//! core as CKKS.
//!
//! ```
//! use rhea::bgv::{BgvContext, BgvParametersLiteral, Decryptor, Encoder, Encryptor, Evaluator,
//!                 KeyGenerator};
//! use rhea::Device;
//!
//! // Toy parameters for a fast example (N = 2^12, insecure); see the presets for real ones.
//! let params = BgvParametersLiteral::test_n12_levels5_insecure().build()?;
//! let ctx = BgvContext::new(&params, Device::best())?;
//! let mut keygen = KeyGenerator::new(&ctx)?;
//! let sk = keygen.secret_key()?;
//! let pk = keygen.public_key(&sk)?;
//! let eval = Evaluator::new(&ctx)
//!     .with_relinearization_key(keygen.relinearization_key(&sk)?)?
//!     .with_galois_keys(keygen.galois_keys(&sk, &[1], false)?)?;
//!
//! let encoder = Encoder::new(&ctx)?;
//! let encryptor = Encryptor::new(&ctx, &pk)?;
//! let decryptor = Decryptor::new(&ctx, &sk)?;
//! let x = encryptor.encrypt(&encoder.encode(&[1, 2, 3])?)?;
//! let y = encryptor.encrypt(&encoder.encode(&[10, 20, 30])?)?;
//! let z = eval.add(&eval.mul(&x, &y)?, &eval.rotate_rows(&x, 1)?)?; // x·y + rot(x, 1)
//! let out = encoder.decode(&decryptor.decrypt(&z)?)?;
//! assert_eq!(&out[..3], &[12, 43, 90]);
//! # Ok::<(), rhea::Error>(())
//! ```
//!
//! # Design
//!
//! **One core, no second copy.** A BGV ciphertext `c` at level `ℓ` has the phase
//! `v = c_0 + c_1·s = [f·m]_t + t·e (mod Q_ℓ)`. Rhea stores `ĉ = t^{-1}·c mod Q_ℓ` instead, whose
//! phase `t^{-1}·[f·m]_t + e` has the *ordinary* small error `e`: `ĉ` is an RLWE ciphertext of
//! exactly the kind the RLWE core ([`crate::rlwe`]) encrypts, key-switches, relinearises,
//! rotates and rescales for CKKS. So BGV uses the core's keys, encryption (of `t^{-1}·m`),
//! hybrid key switching and backend primitives unchanged, and every rounding error `r` they
//! make becomes `t·r` on `c`, a multiple of `t` as BGV needs:
//!
//! - modulus switching is the core's rescale `ĉ ↦ round(ĉ / q_ℓ)`; on `c = t·ĉ` it is exactly
//!   the BGV switch `(c − δ)/q_ℓ` with `δ ≡ c (mod q_ℓ)`, `δ ≡ 0 (mod t)`
//!   ([`rhea_math::bgv_rescale`] is that map computed directly, the test oracle);
//! - key switching with the core's (CKKS-form) keys adds `t·e_ks`, and ModDown's rounding is
//!   likewise multiplied by `t`, so no `t`-scaled keys and no `t`-corrected ModDown are needed;
//! - the only BGV-specific arithmetic is a multiplication by `t` in the tensor product
//!   (`t·(â ⊗ b̂)` keeps the representation), by `t^{-1}` when a plaintext or constant is
//!   added, and by `t` at decryption.
//!
//! **Correction factor.** Switching from `ℓ` to `ℓ − 1` multiplies the message by
//! `q_ℓ^{-1} mod t`. Like OpenFHE and Lattigo, Rhea tracks this factor `f` on the ciphertext
//! ([`Ciphertext::factor`]) instead of paying a constant multiplication: products multiply the
//! factors, additions of operands with different factors first multiply them by small
//! `r_a, r_b` with `r_a·f_a ≡ r_b·f_b (mod t)`, plaintexts and constants are scaled by `f` on the
//! fly, and decryption multiplies by `f^{-1}`.
//!
//! **Noise.** Every ciphertext carries a cheap bound on its phase (`log2`, from standard
//! canonical-embedding estimates; see `noise.rs` for the model), updated by each operation; an
//! operation whose result would reach `Q_ℓ / 2` returns a noise-budget error
//! instead of a ciphertext that decrypts wrongly. Decryption measures the real budget
//! `⌊log2(Q_ℓ / (2·‖v‖_∞))⌋` and reports an exhausted one (`0`) as the same error,
//! [`crate::Error::NoiseBudgetExhausted`]. With the checks off
//! ([`Evaluator::with_noise_check`]`(false)`) a ciphertext's bound may pass `Q_ℓ / 2`; its phase
//! may then have wrapped modulo `Q_ℓ`, and decryption reports the budget as unknown
//! ([`Decrypted::noise_budget`] is `None`) rather than a number it cannot know. A ciphertext
//! read from a file gets a bound no lower than any real ciphertext can have, so a crafted file
//! cannot switch the checks off.
//!
//! **Slots.** With a prime `t ≡ 1 (mod 2N)` the encoder packs `N` values as a `2 × N/2`
//! matrix ([`Encoder`]); [`Evaluator::rotate_rows`] (Galois element `5^k`) rotates both rows,
//! [`Evaluator::rotate_columns`] (`2N − 1`) swaps them.

mod ciphertext;
mod context;
mod encoder;
mod evaluator;
mod keygen;
pub(crate) mod noise;
mod protected;

pub use ciphertext::{Ciphertext, Decrypted, Plaintext};
pub use context::BgvContext;
pub use encoder::Encoder;
pub use evaluator::Evaluator;
pub use keygen::{Decryptor, Encryptor, KeyGenerator};
pub use protected::{
    ProtectedDecryptor, ProtectedEncryptor, ProtectedKeyGenerator, ProtectedPlaintext,
};
// The parameter types live with CKKS's in `crate::params` (one place, one shape); re-exported
// here so that `rhea::bgv::BgvParameters` keeps working.
pub use crate::params::{
    BgvIntent, BgvParameters, BgvParametersLiteral, DEFAULT_PLAINTEXT_MODULUS,
};
