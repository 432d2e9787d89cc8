//! RNS bases and CRT reconstruction.
//!
//! A [`Basis`] is an ordered list of distinct, pairwise-coprime word-sized moduli
//! `q_0, …, q_{L-1}` with product `Q`. An integer `x ∈ [0, Q)` is represented by its residues
//! `x_i = x mod q_i`; a polynomial of degree `< N` is stored as one contiguous `[limb][N]` buffer
//! (`data[i * n + k]` is coefficient `k` modulo `q_i`), canonical in `[0, q_i)`.
//!
//! The per-modulus CRT constants `(Q/q_i)^{-1} mod q_i` (and their Shoup companions) are
//! precomputed and public so that GPU kernels can upload them unchanged.
//!
//! ```
//! use num_bigint::{BigInt, BigUint};
//! use rhea_math::basis::Basis;
//! // Toy moduli, not secure.
//! let basis = Basis::new(&[97, 193, 257])?;
//! let x = BigUint::from(1_234_567u32);
//! let residues = basis.decompose(&x);
//! assert_eq!(basis.reconstruct(&residues)?, x);
//! let y = BigInt::from(-42);
//! assert_eq!(basis.reconstruct_centered(&basis.decompose_signed(&y))?, y);
//! # Ok::<(), rhea_math::MathError>(())
//! ```

use std::ops::Range;

use num_bigint::{BigInt, BigUint, Sign};
use num_traits::Zero;
use rayon::prelude::*;

use crate::error::{MathError, Result};
use crate::Modulus;

/// An RNS basis: distinct, pairwise-coprime moduli `q_0, …, q_{L-1}` (each `2 ≤ q_i < 2^61`)
/// with their product `Q` and the CRT constants.
///
/// Cheap to share (`Send + Sync`); cloning copies the tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Basis {
    moduli: Vec<Modulus>,
    product: BigUint,
    /// `Q / q_i`.
    q_hat: Vec<BigUint>,
    /// `(Q / q_i)^{-1} mod q_i`.
    q_hat_inv_mod_q: Vec<u64>,
    /// Shoup companions of `q_hat_inv_mod_q`.
    q_hat_inv_mod_q_shoup: Vec<u64>,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `x mod q` for a big unsigned integer (Horner over the 64-bit digits, most significant first).
pub(crate) fn biguint_mod(x: &BigUint, q: &Modulus) -> u64 {
    x.iter_u64_digits()
        .rev()
        .fold(0u64, |r, d| q.reduce_u128(((r as u128) << 64) | d as u128))
}

/// `x mod q` in `[0, q)` for a big signed integer.
pub(crate) fn bigint_mod(x: &BigInt, q: &Modulus) -> u64 {
    let r = biguint_mod(x.magnitude(), q);
    if x.sign() == Sign::Minus {
        q.neg(r)
    } else {
        r
    }
}

/// Checks that `data` is a `[limbs][n]` buffer; `what` names it in the error.
pub(crate) fn check_poly(what: &str, data_len: usize, limbs: usize, n: usize) -> Result<()> {
    if n == 0 {
        return Err(MathError::InvalidArgument(format!(
            "{what}: the ring degree n must be positive"
        )));
    }
    match limbs.checked_mul(n) {
        Some(expected) if expected == data_len => Ok(()),
        _ => Err(MathError::ShapeMismatch(format!(
            "{what}: expected {limbs} limbs × {n} coefficients, got a buffer of {data_len} words"
        ))),
    }
}

impl Basis {
    /// Builds a basis from its moduli, in order.
    ///
    /// Errors: [`MathError::InvalidBasis`] for an empty list, a repeated modulus or two moduli
    /// that share a factor; [`MathError::InvalidModulus`] for a modulus outside `2 ..< 2^61`.
    pub fn new(moduli: &[u64]) -> Result<Self> {
        if moduli.is_empty() {
            return Err(MathError::InvalidBasis(
                "a basis needs at least one modulus".into(),
            ));
        }
        let moduli = moduli
            .iter()
            .map(|&q| Modulus::new(q))
            .collect::<Result<Vec<_>>>()?;
        for (i, a) in moduli.iter().enumerate() {
            for b in &moduli[..i] {
                if a.value() == b.value() {
                    return Err(MathError::InvalidBasis(format!(
                        "modulus {} appears more than once",
                        a.value()
                    )));
                }
                let g = gcd(a.value(), b.value());
                if g != 1 {
                    return Err(MathError::InvalidBasis(format!(
                        "moduli {} and {} are not coprime (common factor {g})",
                        b.value(),
                        a.value()
                    )));
                }
            }
        }
        Ok(Self::from_checked(moduli))
    }

    /// Builds the tables for moduli already known to be valid and pairwise coprime.
    fn from_checked(moduli: Vec<Modulus>) -> Self {
        let product = moduli
            .iter()
            .fold(BigUint::from(1u8), |acc, q| acc * q.value());
        let q_hat: Vec<BigUint> = moduli.iter().map(|q| &product / q.value()).collect();
        let q_hat_inv_mod_q: Vec<u64> = moduli
            .iter()
            .zip(&q_hat)
            .map(|(q, h)| {
                q.inv(biguint_mod(h, q))
                    .expect("pairwise-coprime moduli make Q/q_i invertible mod q_i")
            })
            .collect();
        let q_hat_inv_mod_q_shoup = moduli
            .iter()
            .zip(&q_hat_inv_mod_q)
            .map(|(q, &w)| q.shoup(w))
            .collect();
        Self {
            moduli,
            product,
            q_hat,
            q_hat_inv_mod_q,
            q_hat_inv_mod_q_shoup,
        }
    }

    /// The number of moduli (limbs), `L ≥ 1`.
    pub fn len(&self) -> usize {
        self.moduli.len()
    }

    /// Always `false`: a basis has at least one modulus.
    pub fn is_empty(&self) -> bool {
        self.moduli.is_empty()
    }

    /// The moduli, in order.
    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }

    /// The `i`-th modulus.
    ///
    /// # Panics
    /// If `i >= self.len()`, like slice indexing (use [`Basis::get`] for a checked look-up).
    pub fn modulus(&self, i: usize) -> &Modulus {
        &self.moduli[i]
    }

    /// The `i`-th modulus, or `None` when `i >= self.len()`.
    pub fn get(&self, i: usize) -> Option<&Modulus> {
        self.moduli.get(i)
    }

    /// The moduli as plain integers.
    pub fn values(&self) -> Vec<u64> {
        self.moduli.iter().map(Modulus::value).collect()
    }

    /// The product `Q = Π q_i`.
    pub fn product(&self) -> &BigUint {
        &self.product
    }

    /// `Q / q_i` for every `i`, as big integers.
    pub fn q_hat(&self) -> &[BigUint] {
        &self.q_hat
    }

    /// `(Q / q_i)^{-1} mod q_i` for every `i`, canonical (a GPU table).
    pub fn q_hat_inv_mod_q(&self) -> &[u64] {
        &self.q_hat_inv_mod_q
    }

    /// The Shoup companions `floor(w_i · 2^64 / q_i)` of [`Basis::q_hat_inv_mod_q`].
    pub fn q_hat_inv_mod_q_shoup(&self) -> &[u64] {
        &self.q_hat_inv_mod_q_shoup
    }

    /// The basis of the first `k` moduli (a CKKS level), `1 ≤ k ≤ len()`.
    pub fn prefix(&self, k: usize) -> Result<Basis> {
        self.slice(0..k)
    }

    /// The basis of the moduli with indices in `range` (non-empty, within `0..len()`).
    pub fn slice(&self, range: Range<usize>) -> Result<Basis> {
        if range.start >= range.end || range.end > self.len() {
            return Err(MathError::InvalidArgument(format!(
                "limb range {range:?} is empty or outside a basis of {} moduli",
                self.len()
            )));
        }
        if range.start == 0 && range.end == self.len() {
            return Ok(self.clone());
        }
        Ok(Self::from_checked(self.moduli[range].to_vec()))
    }

    /// The concatenation `self ∪ other`, `self`'s moduli first (e.g. `Q` then `P`).
    ///
    /// Errors with [`MathError::InvalidBasis`] if a modulus of `other` is not coprime to
    /// (or repeats) one of `self`.
    pub fn concat(&self, other: &Basis) -> Result<Basis> {
        let values: Vec<u64> = self.values().into_iter().chain(other.values()).collect();
        Basis::new(&values)
    }

    /// The residues `x mod q_i` of a non-negative integer of any size.
    pub fn decompose(&self, x: &BigUint) -> Vec<u64> {
        self.moduli.iter().map(|q| biguint_mod(x, q)).collect()
    }

    /// The canonical residues `x mod q_i ∈ [0, q_i)` of a signed integer of any size.
    pub fn decompose_signed(&self, x: &BigInt) -> Vec<u64> {
        self.moduli.iter().map(|q| bigint_mod(x, q)).collect()
    }

    fn check_residues(&self, residues: &[u64]) -> Result<()> {
        if residues.len() != self.len() {
            return Err(MathError::ShapeMismatch(format!(
                "expected {} residues, got {}",
                self.len(),
                residues.len()
            )));
        }
        for (q, &r) in self.moduli.iter().zip(residues) {
            if r >= q.value() {
                return Err(MathError::InvalidArgument(format!(
                    "residue {r} is not canonical modulo {}",
                    q.value()
                )));
            }
        }
        Ok(())
    }

    /// CRT without checks: `Σ [r_i · (Q/q_i)^{-1}]_{q_i} · (Q/q_i) mod Q`.
    fn crt(&self, residues: &[u64]) -> BigUint {
        let mut acc = BigUint::zero();
        for (i, q) in self.moduli.iter().enumerate() {
            let t = q.mul_shoup(
                residues[i],
                self.q_hat_inv_mod_q[i],
                self.q_hat_inv_mod_q_shoup[i],
            );
            if t != 0 {
                acc += &self.q_hat[i] * t;
            }
        }
        acc % &self.product
    }

    fn center(&self, x: BigUint) -> BigInt {
        // x ↦ x - Q when x > Q/2, i.e. when 2x > Q: the result lies in (-Q/2, Q/2].
        if (&x << 1u32) > self.product {
            BigInt::from(x) - BigInt::from(self.product.clone())
        } else {
            BigInt::from(x)
        }
    }

    /// The integer `x ∈ [0, Q)` with the given canonical residues.
    ///
    /// Errors: [`MathError::ShapeMismatch`] for a wrong count, [`MathError::InvalidArgument`]
    /// for a residue that is not canonical.
    pub fn reconstruct(&self, residues: &[u64]) -> Result<BigUint> {
        self.check_residues(residues)?;
        Ok(self.crt(residues))
    }

    /// The integer `x ∈ (-Q/2, Q/2]` with the given canonical residues.
    pub fn reconstruct_centered(&self, residues: &[u64]) -> Result<BigInt> {
        self.check_residues(residues)?;
        Ok(self.center(self.crt(residues)))
    }

    /// The `[limb][N]` residues of a polynomial with small signed coefficients (`n = coeffs.len()`).
    pub fn poly_from_signed(&self, coeffs: &[i64]) -> Vec<u64> {
        let mut out = vec![0u64; self.len() * coeffs.len()];
        if coeffs.is_empty() {
            return out;
        }
        out.par_chunks_mut(coeffs.len())
            .zip(self.moduli.par_iter())
            .for_each(|(row, q)| {
                for (o, &c) in row.iter_mut().zip(coeffs) {
                    *o = q.reduce_i64(c);
                }
            });
        out
    }

    /// The `[limb][N]` residues of a polynomial with big signed coefficients (`n = coeffs.len()`).
    pub fn poly_from_bigints(&self, coeffs: &[BigInt]) -> Vec<u64> {
        let mut out = vec![0u64; self.len() * coeffs.len()];
        if coeffs.is_empty() {
            return out;
        }
        out.par_chunks_mut(coeffs.len())
            .zip(self.moduli.par_iter())
            .for_each(|(row, q)| {
                for (o, c) in row.iter_mut().zip(coeffs) {
                    *o = bigint_mod(c, q);
                }
            });
        out
    }

    fn poly_crt(&self, data: &[u64], n: usize) -> Result<Vec<BigUint>> {
        check_poly("poly_reconstruct", data.len(), self.len(), n)?;
        for (i, q) in self.moduli.iter().enumerate() {
            if let Some(k) = data[i * n..(i + 1) * n]
                .iter()
                .position(|&r| r >= q.value())
            {
                return Err(MathError::InvalidArgument(format!(
                    "coefficient {k} of limb {i} is not canonical modulo {}",
                    q.value()
                )));
            }
        }
        Ok((0..n)
            .into_par_iter()
            .map_init(
                || vec![0u64; self.len()],
                |residues, k| {
                    for (i, r) in residues.iter_mut().enumerate() {
                        *r = data[i * n + k];
                    }
                    self.crt(residues)
                },
            )
            .collect())
    }

    /// The coefficients in `[0, Q)` of a canonical `[limb][N]` polynomial.
    pub fn poly_reconstruct(&self, data: &[u64], n: usize) -> Result<Vec<BigUint>> {
        self.poly_crt(data, n)
    }

    /// The coefficients in `(-Q/2, Q/2]` of a canonical `[limb][N]` polynomial.
    ///
    /// Errors: [`MathError::ShapeMismatch`] unless `data.len() == len() · n`,
    /// [`MathError::InvalidArgument`] for `n = 0` or a non-canonical residue.
    pub fn poly_reconstruct_centered(&self, data: &[u64], n: usize) -> Result<Vec<BigInt>> {
        Ok(self
            .poly_crt(data, n)?
            .into_par_iter()
            .map(|x| self.center(x))
            .collect())
    }

    /// `x mod q_i` for a `u64` constant, for every modulus (a per-limb scalar).
    pub fn reduce_scalar(&self, x: u64) -> Vec<u64> {
        self.moduli.iter().map(|q| q.reduce(x)).collect()
    }

    /// `Q mod m`, as `u64`.
    pub(crate) fn product_mod(&self, m: &Modulus) -> u64 {
        biguint_mod(&self.product, m)
    }

    /// `(Q / q_i) mod m`.
    pub(crate) fn q_hat_mod(&self, i: usize, m: &Modulus) -> u64 {
        biguint_mod(&self.q_hat[i], m)
    }

    /// `1 / q_i` rounded to `f64`, for every modulus.
    pub(crate) fn inv_f64(&self) -> Vec<f64> {
        self.moduli.iter().map(|q| 1.0 / q.value() as f64).collect()
    }
}
