//! CKKS: approximate arithmetic on encrypted complex vectors.
//!
//! ```
//! use rhea::ckks::{CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator};
//! use rhea::params::CkksParametersLiteral;
//! use rhea::Device;
//!
//! let params = CkksParametersLiteral::n13_logqp200_levels2().build()?;
//! let ctx = CkksContext::new(&params, Device::best())?;
//! let mut keygen = KeyGenerator::new(&ctx)?;
//! let sk = keygen.secret_key()?;
//! let pk = keygen.public_key(&sk)?;
//! let rlk = keygen.relinearization_key(&sk)?;
//! let gk = keygen.galois_keys(&sk, &[1], false)?;
//!
//! let encoder = Encoder::new(&ctx)?;
//! let encryptor = Encryptor::new(&ctx, &pk)?;
//! let decryptor = Decryptor::new(&ctx, &sk)?;
//! let eval = Evaluator::new(&ctx)
//!     .with_relinearization_key(rlk)?
//!     .with_galois_keys(gk)?;
//!
//! let x = encryptor.encrypt(&encoder.encode(&[1.0, 2.0, 3.0])?)?;
//! let y = encryptor.encrypt(&encoder.encode(&[0.5, 0.25, 2.0])?)?;
//! let z = eval.add(&eval.mul(&x, &y)?, &eval.rotate(&x, 1)?)?; // x·y + rot(x, 1)
//! let out = encoder.decode(&decryptor.decrypt(&z)?)?;
//! for (got, want) in out.iter().zip([2.5, 3.5, 6.0]) {
//!     assert!((got - want).abs() < 1e-6);
//! }
//! # Ok::<(), rhea::Error>(())
//! ```

mod all_data;
pub mod bootstrap;
mod ciphertext;
mod context;
mod encoder;
mod evaluator;
mod flooding;
pub mod functions;
mod keygen;
pub mod linear;
mod poly;
mod protected;

pub use all_data::{ProtectedCiphertext, ProtectedEvaluator};
pub use ciphertext::{Ciphertext, Plaintext};
pub use context::CkksContext;
pub use encoder::Encoder;
pub(crate) use encoder::{check_scale, check_stored_scale};
pub(crate) use evaluator::scales_match;
pub use evaluator::Evaluator;
pub use flooding::NoiseFlooding;
pub use keygen::{Decryptor, Encryptor, KeyGenerator};
pub use linear::{DiagonalStorage, LinearTransform, RotationKeys};
pub use num_complex::Complex64;
pub use poly::{ChebyshevFit, Parity, PolyBasis, Polynomial};
pub use protected::{
    ProtectedDecryptor, ProtectedEncryptor, ProtectedKeyGenerator, ProtectedPlaintext,
};
