//! Standard functions on CKKS ciphertexts: smooth functions by Chebyshev interpolation,
//! inverse / square root / inverse square root by Newton-type iterations, and sign / ReLU / max
//! by composite polynomials.
//!
//! Every function is a small configuration value that knows, before anything is encrypted,
//!
//! - its **depth** (`depth()`): the exact number of levels it consumes (tested: the output level
//!   is the input level minus the depth);
//! - its **approximation error** against the true function (measured in `f64` on a dense grid
//!   of the domain), separate from the error the homomorphic evaluation adds;
//! - its **plaintext reference** (`evaluate_plain`): the same computation in `f64`, against
//!   which the homomorphic result is measured.
//!
//! `evaluate(&eval, &ct, target_scale)` returns a ciphertext whose scale is exactly
//! `target_scale`, at level `ct.level() − depth()`; with fewer levels left it fails with
//! [`Error::LevelUnderflow`] before computing anything.
//!
//! | function | construction | depth |
//! |---|---|---|
//! | [`SmoothFunction`] (sigmoid, exp, tanh, any `Fn`) | Chebyshev interpolant of degree `d` on `[a, b]` | `⌈log2(d+1)⌉` (+1 unless `[a, b] = [−1, 1]`) |
//! | [`Inverse`] `1/x` on `[lo, hi]` | Goldschmidt, `n` iterations | `1` for `n = 0`, else `n + 2` |
//! | [`InvSqrt`] `1/√x` on `[lo, hi]` | polynomial guess of degree `d`, then `n` Newton steps | guess + `2n` |
//! | [`Sqrt`] `√x` on `[lo, hi]` | `x · InvSqrt` | guess + `2n + 1` |
//! | [`Sign`] on `ε ≤ |x| ≤ 1` within `2^−α` | composite: Cheon–Kim–Kim–Lee `f_n^{d_f} ∘ g_n^{d_g}`, or Lee–Lee–Kim–No minimax stages | `Σ` stage depths (e.g. `ε = 2^−8`, `α = 20`: 12) |
//! | ReLU, max ([`Sign::relu`], [`Sign::max`]) | `(x + x·sign x)/2`, `((a+b) + (a−b)·sign(a−b))/2` | sign + 1 |
//!
//! Measured precision (N = 2^13, Δ = 2^40, 10 levels, inputs uniform on the domain; the tests in
//! `tests/ckks_functions.rs` check these bounds) is given in each type's documentation.
//!
//! ```
//! use rhea::ckks::functions::Inverse;
//! use rhea::ckks::{CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator};
//! use rhea::params::CkksParametersLiteral;
//! use rhea::Device;
//!
//! let params = CkksParametersLiteral::test_n13_levels10_insecure().build()?;
//! let ctx = CkksContext::new(&params, Device::Cpu)?;
//! let mut keygen = KeyGenerator::from_seed(&ctx, [3; 32]);
//! let sk = keygen.secret_key()?;
//! let eval = Evaluator::new(&ctx).with_relinearization_key(keygen.relinearization_key(&sk)?)?;
//! let (encoder, encryptor) = (Encoder::new(&ctx)?, Encryptor::with_secret_key(&ctx, &sk)?);
//!
//! // 1/x on [1, 4]: 5 Goldschmidt iterations, 7 levels.
//! let inv = Inverse::new(1.0, 4.0, 5)?;
//! assert_eq!(inv.depth(), 7);
//! assert!(inv.approximation_error() < 1e-9);
//!
//! let x = encryptor.encrypt(&encoder.encode(&[1.0, 2.5, 4.0])?)?;
//! let y = inv.evaluate(&eval, &x, x.scale())?;
//! assert_eq!(y.level(), x.level() - inv.depth());
//! assert_eq!(y.scale(), x.scale());
//! let out = encoder.decode(&Decryptor::new(&ctx, &sk)?.decrypt(&y)?)?;
//! for (got, x) in out.iter().zip([1.0, 2.5, 4.0]) {
//!     assert!((got - 1.0 / x).abs() < 1e-5);
//! }
//! # Ok::<(), rhea::Error>(())
//! ```

mod minimax;
mod newton;
mod sign;
mod smooth;

pub use newton::{InvSqrt, Inverse, Sqrt};
pub use sign::{Sign, SignConstruction};
pub use smooth::SmoothFunction;

use super::{Ciphertext, Evaluator};
use crate::error::{Error, Result};

/// The number of points of the grids on which approximation errors are measured.
const GRID: usize = 4096;

/// Fails with [`Error::LevelUnderflow`] unless `ct` has `depth` levels left.
fn check_levels(op: &'static str, ct: &Ciphertext, depth: usize) -> Result<()> {
    if ct.level() < depth {
        return Err(Error::LevelUnderflow {
            op,
            level: ct.level(),
            needed: depth,
        });
    }
    Ok(())
}

/// Records `record` as the scale of `ct`, whose tracked scale equals `planned` up to the `f64`
/// rounding of a scale plan (relative `1e-9`; the plans are exact up to a few ulps times the
/// iteration exponents). A larger difference is a bug in the plan, reported rather than hidden.
/// Shared by the functions here and bootstrapping's EvalMod.
pub(crate) fn settle_scale(
    op: &'static str,
    ct: &mut Ciphertext,
    planned: f64,
    record: f64,
) -> Result<()> {
    if (ct.scale / planned - 1.0).abs() > 1e-9 {
        return Err(Error::InvalidInput(format!(
            "`{op}`: internal scale plan missed: 2^{:.9} instead of 2^{:.9}",
            ct.scale.log2(),
            planned.log2()
        )));
    }
    ct.scale = record;
    Ok(())
}

/// `log2 q_level` for the evaluator's parameters.
fn log_q(eval: &Evaluator, level: usize) -> f64 {
    (eval.context().params().q_primes()[level] as f64).log2()
}

/// `max |f(x) − g(x)|` over `GRID + 1` evenly spaced points of `[lo, hi]`.
fn max_gap(lo: f64, hi: f64, f: impl Fn(f64) -> f64, g: impl Fn(f64) -> f64) -> f64 {
    (0..=GRID)
        .map(|i| {
            let x = lo + (hi - lo) * i as f64 / GRID as f64;
            (f(x) - g(x)).abs()
        })
        .fold(0.0, f64::max)
}

/// Checks `0 < lo < hi < ∞` for the functions defined on positive intervals.
fn check_positive_interval(op: &str, lo: f64, hi: f64) -> Result<()> {
    if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && lo < hi) {
        return Err(Error::InvalidInput(format!(
            "{op}: the interval [{lo}, {hi}] must satisfy 0 < lo < hi < ∞ (the function is not \
             defined at 0 or below; shift or scale the input into such an interval)"
        )));
    }
    Ok(())
}
