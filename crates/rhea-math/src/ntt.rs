//! The negacyclic number-theoretic transform over `Z_q[X]/(X^N + 1)`.
//!
//! An [`NttTable`] holds, for one NTT-friendly prime `q` and one power-of-two degree `N`, the
//! twiddle tables that the CPU code here and the GPU kernels (which upload them verbatim) share.
//! With `ψ` = [`primitive_root_2n`]`(q, N)` (the smallest primitive `2N`-th root of unity) and
//! `brv` = [`bit_reverse`] on `log N` bits:
//!
//! - `root_powers[i] = ψ^brv(i)` and `inv_root_powers[i] = (ψ^-1)^brv(i)`, `i ∈ [0, N)`
//!   (index 0 holds 1 and is never used), each with its Shoup companion `floor(w · 2^64 / q)`.
//! - **Forward** ([`NttTable::forward`]): Cooley–Tukey, natural-order input, bit-reversed output.
//!   The stage with `m` blocks (`m = 1, 2, 4, …, N/2`; block `i` covers `2t` consecutive entries,
//!   `t = N / 2m`) applies `(x, y) ↦ (x + w·y, x − w·y)` with `w = root_powers[m + i]`.
//! - **Inverse** ([`NttTable::inverse`]): Gentleman–Sande, bit-reversed input, natural-order
//!   output. The stage with `m` blocks (`m = N/2, …, 2, 1`) applies `(x, y) ↦ (x + y, (x − y)·w)`
//!   with `w = inv_root_powers[m + i]`; the result is multiplied by `N^-1` (folded into the last
//!   stage, so the inverse exactly undoes the forward transform).
//! - **Evaluation points**: entry `i` of the forward output is `a(ψ^(2·brv(i) + 1))`, the
//!   evaluation of the input polynomial at an odd power of `ψ`. So a pointwise product of two
//!   forward transforms is the transform of the negacyclic product, and the Galois automorphism
//!   `X ↦ X^g` (odd `g`) permutes the entries: entry `i` of the result is entry `j` of the input,
//!   where `2·brv(j) + 1 ≡ g·(2·brv(i) + 1) (mod 2N)`.
//!
//! Values are canonical (`[0, q)`) on entry and on exit. Inside, the butterflies are Harvey's lazy
//! ones (forward values in `[0, 4q)`, inverse values in `[0, 2q)`, which fits in a `u64` since
//! `q < 2^61`) with Shoup multiplication by the precomputed twiddles; the last stage brings every
//! value back to `[0, q)`.
//!
//! [`forward_batch`] / [`inverse_batch`] transform a `[limb][N]` buffer, one limb per table, in
//! parallel (rayon).
//!
//! ```
//! use rhea_math::{ntt::{negacyclic_mul_naive, NttTable}, prime::generate_ntt_primes, Modulus};
//! let n = 16;
//! let q = Modulus::new(generate_ntt_primes(30, n, 1, &[])?[0])?;
//! let table = NttTable::new(q, n)?;
//! let a: Vec<u64> = (0..n as u64).collect();
//! let b: Vec<u64> = (0..n as u64).map(|i| 3 * i + 1).collect();
//! let (mut fa, mut fb) = (a.clone(), b.clone());
//! table.forward(&mut fa)?;
//! table.forward(&mut fb)?;
//! let mut prod: Vec<u64> = fa.iter().zip(&fb).map(|(&x, &y)| q.mul(x, y)).collect();
//! table.inverse(&mut prod)?;
//! assert_eq!(prod, negacyclic_mul_naive(&a, &b, &q)?);
//! # Ok::<(), rhea_math::MathError>(())
//! ```

use std::fmt;

use rayon::prelude::*;

use crate::error::{MathError, Result};
use crate::prime::{is_ntt_friendly, primitive_root_2n};
use crate::Modulus;

/// The smallest supported `log2 N`.
pub const MIN_LOG_DEGREE: u32 = 1;
/// The largest supported `log2 N`.
pub const MAX_LOG_DEGREE: u32 = 17;

/// Reverses the low `bits` bits of `i` (higher bits of `i` are ignored); `bit_reverse(i, 0) = 0`.
#[inline]
pub fn bit_reverse(i: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        i.reverse_bits() >> (usize::BITS - bits.min(usize::BITS))
    }
}

/// Precomputed tables for the negacyclic NTT of degree `N` modulo one NTT-friendly prime.
///
/// See the [module documentation](self) for the exact content of the tables and the order of the
/// transform; the GPU kernels upload these tables verbatim.
#[derive(Clone)]
pub struct NttTable {
    modulus: Modulus,
    degree: usize,
    log_degree: u32,
    psi: u64,
    root_powers: Vec<u64>,
    root_powers_shoup: Vec<u64>,
    inv_root_powers: Vec<u64>,
    inv_root_powers_shoup: Vec<u64>,
    inv_degree: u64,
    inv_degree_shoup: u64,
    /// `inv_root_powers[1] · N^-1 mod q` and its Shoup companion (the folded last inverse stage).
    last_inv_root: u64,
    last_inv_root_shoup: u64,
}

impl fmt::Debug for NttTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NttTable")
            .field("modulus", &self.modulus.value())
            .field("degree", &self.degree)
            .field("psi", &self.psi)
            .finish_non_exhaustive()
    }
}

impl NttTable {
    /// Builds the tables for degree `degree = N` modulo `modulus`.
    ///
    /// Errors: [`MathError::InvalidDegree`] if `N` is not a power of two `2^k` with
    /// `MIN_LOG_DEGREE ≤ k ≤ MAX_LOG_DEGREE`; [`MathError::NotNttFriendly`] if `q` is not a prime
    /// `≡ 1 (mod 2N)`.
    pub fn new(modulus: Modulus, degree: usize) -> Result<Self> {
        let log_degree = degree.trailing_zeros();
        if !degree.is_power_of_two() || !(MIN_LOG_DEGREE..=MAX_LOG_DEGREE).contains(&log_degree) {
            return Err(MathError::InvalidDegree {
                degree,
                min_log: MIN_LOG_DEGREE,
                max_log: MAX_LOG_DEGREE,
            });
        }
        let q = modulus.value();
        if !is_ntt_friendly(q, degree) {
            return Err(MathError::NotNttFriendly { modulus: q, degree });
        }
        let psi = primitive_root_2n(q, degree)?;
        let psi_inv = modulus.inv(psi)?;

        let powers = |base: u64| {
            let mut table = vec![0u64; degree];
            let mut current = 1u64;
            for k in 0..degree {
                table[bit_reverse(k, log_degree)] = current;
                current = modulus.mul(current, base);
            }
            table
        };
        let shoup = |table: &[u64]| table.iter().map(|&w| modulus.shoup(w)).collect::<Vec<_>>();
        let root_powers = powers(psi);
        let inv_root_powers = powers(psi_inv);
        let root_powers_shoup = shoup(&root_powers);
        let inv_root_powers_shoup = shoup(&inv_root_powers);
        let inv_degree = modulus.inv(degree as u64)?;
        let last_inv_root = modulus.mul(inv_root_powers[1], inv_degree);
        Ok(Self {
            modulus,
            degree,
            log_degree,
            psi,
            root_powers,
            root_powers_shoup,
            inv_root_powers,
            inv_root_powers_shoup,
            inv_degree,
            inv_degree_shoup: modulus.shoup(inv_degree),
            last_inv_root,
            last_inv_root_shoup: modulus.shoup(last_inv_root),
        })
    }

    /// The ring degree `N`.
    #[inline]
    pub fn degree(&self) -> usize {
        self.degree
    }

    /// `log2 N`.
    #[inline]
    pub fn log_degree(&self) -> u32 {
        self.log_degree
    }

    /// The modulus `q`.
    #[inline]
    pub fn modulus(&self) -> &Modulus {
        &self.modulus
    }

    /// `ψ`, the smallest primitive `2N`-th root of unity modulo `q`.
    #[inline]
    pub fn psi(&self) -> u64 {
        self.psi
    }

    /// `root_powers[i] = ψ^bit_reverse(i, log N)`, length `N`.
    #[inline]
    pub fn root_powers(&self) -> &[u64] {
        &self.root_powers
    }

    /// Shoup companions `floor(root_powers[i] · 2^64 / q)`.
    #[inline]
    pub fn root_powers_shoup(&self) -> &[u64] {
        &self.root_powers_shoup
    }

    /// `inv_root_powers[i] = (ψ^-1)^bit_reverse(i, log N)`, length `N`.
    #[inline]
    pub fn inv_root_powers(&self) -> &[u64] {
        &self.inv_root_powers
    }

    /// Shoup companions `floor(inv_root_powers[i] · 2^64 / q)`.
    #[inline]
    pub fn inv_root_powers_shoup(&self) -> &[u64] {
        &self.inv_root_powers_shoup
    }

    /// `N^-1 mod q`.
    #[inline]
    pub fn inv_degree(&self) -> u64 {
        self.inv_degree
    }

    /// The Shoup companion of `N^-1 mod q`.
    #[inline]
    pub fn inv_degree_shoup(&self) -> u64 {
        self.inv_degree_shoup
    }

    fn check_len(&self, len: usize) -> Result<()> {
        if len == self.degree {
            Ok(())
        } else {
            Err(MathError::ShapeMismatch(format!(
                "NTT of degree {} given a buffer of length {len}",
                self.degree
            )))
        }
    }

    /// In-place forward NTT: natural-order coefficients in `[0, q)` → bit-reversed evaluations in
    /// `[0, q)` (entry `i` holds `a(ψ^(2·bit_reverse(i) + 1))`).
    ///
    /// Errors: [`MathError::ShapeMismatch`] if `a.len() != N`. Inputs outside `[0, q)` give
    /// unspecified (but panic-free) results; inputs in `[0, 4q)` are in fact handled exactly.
    pub fn forward(&self, a: &mut [u64]) -> Result<()> {
        self.check_len(a.len())?;
        self.forward_unchecked(a);
        Ok(())
    }

    /// In-place inverse NTT: bit-reversed evaluations in `[0, q)` → natural-order coefficients in
    /// `[0, q)`, including the factor `N^-1`; exactly undoes [`NttTable::forward`].
    ///
    /// Errors: [`MathError::ShapeMismatch`] if `a.len() != N`. Inputs outside `[0, q)` give
    /// unspecified (but panic-free) results; inputs in `[0, 2q)` are in fact handled exactly.
    pub fn inverse(&self, a: &mut [u64]) -> Result<()> {
        self.check_len(a.len())?;
        self.inverse_unchecked(a);
        Ok(())
    }

    /// The forward transform of a buffer whose length is known to be `N`.
    ///
    /// Stages are merged in pairs (radix-4 passes over four quarter-blocks, each a pair of
    /// radix-2 Cooley–Tukey stages), which halves the passes over memory; with an odd `log N` the
    /// first stage runs alone. The last pass brings every value to `[0, q)`.
    fn forward_unchecked(&self, a: &mut [u64]) {
        let q = self.modulus.value();
        let two_q = 2 * q;
        let n = self.degree;
        let (roots, roots_shoup) = (&self.root_powers[..], &self.root_powers_shoup[..]);
        if n == 2 {
            let (x, y) = fwd_butterfly_last(a[0], a[1], roots[1], roots_shoup[1], q);
            (a[0], a[1]) = (x, y);
            return;
        }

        // `m` blocks of `2h` entries in the next stage.
        let mut m = 1;
        let mut h = n / 2;
        if self.log_degree % 2 == 1 {
            let (w, ws) = (roots[1], roots_shoup[1]);
            let (xs, ys) = a.split_at_mut(h);
            for (x, y) in xs.iter_mut().zip(ys.iter_mut()) {
                (*x, *y) = fwd_butterfly(*x, *y, w, ws, q, two_q);
            }
            m = 2;
            h /= 2;
        }

        // Radix-4 passes: stage `m` (pairs at distance h) then stage `2m` (distance h/2).
        while h > 2 {
            let quarter = h / 2;
            let outer = roots[m..2 * m].iter().zip(&roots_shoup[m..2 * m]);
            let inner = roots[2 * m..4 * m]
                .chunks_exact(2)
                .zip(roots_shoup[2 * m..4 * m].chunks_exact(2));
            for ((block, (&w0, &w0s)), (w12, w12s)) in
                a.chunks_exact_mut(2 * h).zip(outer).zip(inner)
            {
                let (w1, w2, w1s, w2s) = (w12[0], w12[1], w12s[0], w12s[1]);
                let (x01, x23) = block.split_at_mut(h);
                let (x0, x1) = x01.split_at_mut(quarter);
                let (x2, x3) = x23.split_at_mut(quarter);
                for (((a0, a1), a2), a3) in x0
                    .iter_mut()
                    .zip(x1.iter_mut())
                    .zip(x2.iter_mut())
                    .zip(x3.iter_mut())
                {
                    let (b0, b2) = fwd_butterfly(*a0, *a2, w0, w0s, q, two_q);
                    let (b1, b3) = fwd_butterfly(*a1, *a3, w0, w0s, q, two_q);
                    (*a0, *a1) = fwd_butterfly(b0, b1, w1, w1s, q, two_q);
                    (*a2, *a3) = fwd_butterfly(b2, b3, w2, w2s, q, two_q);
                }
            }
            m *= 4;
            h /= 4;
        }

        // The last two stages (m = N/4, then N/2) on blocks of four, ending in [0, q).
        let outer = roots[m..2 * m].iter().zip(&roots_shoup[m..2 * m]);
        let inner = roots[2 * m..]
            .chunks_exact(2)
            .zip(roots_shoup[2 * m..].chunks_exact(2));
        for ((b, (&w0, &w0s)), (w12, w12s)) in a.chunks_exact_mut(4).zip(outer).zip(inner) {
            let (b0, b2) = fwd_butterfly(b[0], b[2], w0, w0s, q, two_q);
            let (b1, b3) = fwd_butterfly(b[1], b[3], w0, w0s, q, two_q);
            (b[0], b[1]) = fwd_butterfly_last(b0, b1, w12[0], w12s[0], q);
            (b[2], b[3]) = fwd_butterfly_last(b2, b3, w12[1], w12s[1], q);
        }
    }

    /// The inverse transform of a buffer whose length is known to be `N`.
    ///
    /// Stages are merged in pairs as in the forward transform; the last stage (alone when `log N`
    /// is odd, else merged with the one before) multiplies by `N^-1` and ends in `[0, q)`.
    fn inverse_unchecked(&self, a: &mut [u64]) {
        let q = self.modulus.value();
        let two_q = 2 * q;
        let n = self.degree;
        let (roots, roots_shoup) = (&self.inv_root_powers[..], &self.inv_root_powers_shoup[..]);
        let (ninv, ninv_s) = (self.inv_degree, self.inv_degree_shoup);
        let (wl, wl_s) = (self.last_inv_root, self.last_inv_root_shoup);

        // Stage `m` has `m` blocks of `2h` entries.
        let mut m = n / 2;
        let mut h = 1;
        // Radix-4 passes: stage `m` (distance h) then stage `m/2` (distance 2h).
        while m > 2 {
            let half = m / 2;
            let outer = roots[half..m].iter().zip(&roots_shoup[half..m]);
            let inner = roots[m..2 * m]
                .chunks_exact(2)
                .zip(roots_shoup[m..2 * m].chunks_exact(2));
            for ((block, (&w0, &w0s)), (w12, w12s)) in
                a.chunks_exact_mut(4 * h).zip(outer).zip(inner)
            {
                let (w1, w2, w1s, w2s) = (w12[0], w12[1], w12s[0], w12s[1]);
                let (x01, x23) = block.split_at_mut(2 * h);
                let (x0, x1) = x01.split_at_mut(h);
                let (x2, x3) = x23.split_at_mut(h);
                for (((a0, a1), a2), a3) in x0
                    .iter_mut()
                    .zip(x1.iter_mut())
                    .zip(x2.iter_mut())
                    .zip(x3.iter_mut())
                {
                    let (b0, b1) = inv_butterfly(*a0, *a1, w1, w1s, q, two_q);
                    let (b2, b3) = inv_butterfly(*a2, *a3, w2, w2s, q, two_q);
                    (*a0, *a2) = inv_butterfly(b0, b2, w0, w0s, q, two_q);
                    (*a1, *a3) = inv_butterfly(b1, b3, w0, w0s, q, two_q);
                }
            }
            m /= 4;
            h *= 4;
        }

        if m == 2 {
            // Stage 2 (distance h = N/4) merged with the last stage (distance N/2).
            let (w1, w2, w1s, w2s) = (roots[2], roots[3], roots_shoup[2], roots_shoup[3]);
            let (x01, x23) = a.split_at_mut(2 * h);
            let (x0, x1) = x01.split_at_mut(h);
            let (x2, x3) = x23.split_at_mut(h);
            for (((a0, a1), a2), a3) in x0
                .iter_mut()
                .zip(x1.iter_mut())
                .zip(x2.iter_mut())
                .zip(x3.iter_mut())
            {
                let (b0, b1) = inv_butterfly(*a0, *a1, w1, w1s, q, two_q);
                let (b2, b3) = inv_butterfly(*a2, *a3, w2, w2s, q, two_q);
                (*a0, *a2) = inv_butterfly_last(b0, b2, ninv, ninv_s, wl, wl_s, q);
                (*a1, *a3) = inv_butterfly_last(b1, b3, ninv, ninv_s, wl, wl_s, q);
            }
        } else {
            // The last stage alone (distance N/2).
            let (xs, ys) = a.split_at_mut(n / 2);
            for (x, y) in xs.iter_mut().zip(ys.iter_mut()) {
                (*x, *y) = inv_butterfly_last(*x, *y, ninv, ninv_s, wl, wl_s, q);
            }
        }
    }
}

/// Lazy Shoup product `a · w mod q` in `[0, 2q)`, for any `a < 2^64`, `w < q`,
/// `w_shoup = floor(w · 2^64 / q)`.
#[inline(always)]
fn mul_shoup_lazy(a: u64, w: u64, w_shoup: u64, q: u64) -> u64 {
    let hi = ((a as u128 * w_shoup as u128) >> 64) as u64;
    a.wrapping_mul(w).wrapping_sub(hi.wrapping_mul(q))
}

/// `x mod bound` for `x < 2·bound` (branch-free: `x - bound` wraps above `x` when `x < bound`).
#[inline(always)]
fn reduce_once(x: u64, bound: u64) -> u64 {
    x.min(x.wrapping_sub(bound))
}

/// Harvey's forward (Cooley–Tukey) butterfly: `(x + w·y, x − w·y)`, inputs and outputs in
/// `[0, 4q)`.
#[inline(always)]
fn fwd_butterfly(x: u64, y: u64, w: u64, w_shoup: u64, q: u64, two_q: u64) -> (u64, u64) {
    let u = reduce_once(x, two_q);
    let v = mul_shoup_lazy(y, w, w_shoup, q);
    (u + v, u + two_q - v)
}

/// The forward butterfly of the last stage: inputs in `[0, 4q)`, outputs in `[0, q)`.
#[inline(always)]
fn fwd_butterfly_last(x: u64, y: u64, w: u64, w_shoup: u64, q: u64) -> (u64, u64) {
    let u = reduce_once(reduce_once(x, 2 * q), q);
    let v = reduce_once(mul_shoup_lazy(y, w, w_shoup, q), q);
    (reduce_once(u + v, q), reduce_once(u + q - v, q))
}

/// Gentleman–Sande butterfly: `(x + y, (x − y)·w)`, inputs and outputs in `[0, 2q)`.
#[inline(always)]
fn inv_butterfly(x: u64, y: u64, w: u64, w_shoup: u64, q: u64, two_q: u64) -> (u64, u64) {
    (
        reduce_once(x + y, two_q),
        mul_shoup_lazy(x + two_q - y, w, w_shoup, q),
    )
}

/// The last inverse butterfly with `N^-1` folded in: `((x + y)·N^-1, (x − y)·w·N^-1)`, inputs in
/// `[0, 2q)`, outputs in `[0, q)`.
#[inline(always)]
fn inv_butterfly_last(
    x: u64,
    y: u64,
    ninv: u64,
    ninv_shoup: u64,
    w: u64,
    w_shoup: u64,
    q: u64,
) -> (u64, u64) {
    let s = mul_shoup_lazy(x + y, ninv, ninv_shoup, q);
    let d = mul_shoup_lazy(x + 2 * q - y, w, w_shoup, q);
    (reduce_once(s, q), reduce_once(d, q))
}

/// Checks a `[limb][N]` buffer against a list of tables and returns `N`.
fn check_batch(tables: &[NttTable], len: usize) -> Result<usize> {
    let first = tables.first().ok_or_else(|| {
        MathError::ShapeMismatch("batched NTT needs at least one table".to_string())
    })?;
    let n = first.degree;
    if let Some(other) = tables.iter().find(|t| t.degree != n) {
        return Err(MathError::ShapeMismatch(format!(
            "batched NTT tables of different degrees ({n} and {})",
            other.degree
        )));
    }
    let limbs = tables.len();
    if len % (limbs * n) != 0 {
        return Err(MathError::ShapeMismatch(format!(
            "batched NTT: buffer of length {len} is not a multiple of {limbs} limbs × N = {n}"
        )));
    }
    Ok(n)
}

/// Forward NTT of every limb of a `[limb][N]` buffer, in parallel.
///
/// `data` holds `k · tables.len()` limbs of length `N` (k polynomials, each with one limb per
/// table); limb `j` is transformed with `tables[j % tables.len()]`. All tables must have the same
/// degree. Errors: [`MathError::ShapeMismatch`] for an empty table list, tables of different
/// degrees, or a buffer length that is not a multiple of `tables.len() · N`.
pub fn forward_batch(tables: &[NttTable], data: &mut [u64]) -> Result<()> {
    let n = check_batch(tables, data.len())?;
    data.par_chunks_exact_mut(n)
        .enumerate()
        .for_each(|(j, limb)| tables[j % tables.len()].forward_unchecked(limb));
    Ok(())
}

/// Inverse NTT of every limb of a `[limb][N]` buffer, in parallel (layout and errors as in
/// [`forward_batch`]).
pub fn inverse_batch(tables: &[NttTable], data: &mut [u64]) -> Result<()> {
    let n = check_batch(tables, data.len())?;
    data.par_chunks_exact_mut(n)
        .enumerate()
        .for_each(|(j, limb)| tables[j % tables.len()].inverse_unchecked(limb));
    Ok(())
}

/// The negacyclic product `a · b` in `Z_q[X]/(X^N + 1)` by schoolbook multiplication (`O(N²)`), a
/// reference for tests. Inputs may be any `u64` (they are reduced first); the output is canonical.
///
/// Errors: [`MathError::ShapeMismatch`] if `a` and `b` have different lengths.
pub fn negacyclic_mul_naive(a: &[u64], b: &[u64], q: &Modulus) -> Result<Vec<u64>> {
    if a.len() != b.len() {
        return Err(MathError::ShapeMismatch(format!(
            "negacyclic product of polynomials of lengths {} and {}",
            a.len(),
            b.len()
        )));
    }
    let n = a.len();
    let a: Vec<u64> = a.iter().map(|&x| q.reduce(x)).collect();
    let b: Vec<u64> = b.iter().map(|&x| q.reduce(x)).collect();
    // Sums of at most N products reduced mod q: < 2^61 · 2^17, no overflow in a u128.
    let mut plus = vec![0u128; n];
    let mut minus = vec![0u128; n];
    for (i, &ai) in a.iter().enumerate() {
        for (j, &bj) in b.iter().enumerate() {
            let p = q.mul(ai, bj) as u128;
            if i + j < n {
                plus[i + j] += p;
            } else {
                minus[i + j - n] += p;
            }
        }
    }
    Ok(plus
        .iter()
        .zip(&minus)
        .map(|(&p, &m)| q.sub(q.reduce_u128(p), q.reduce_u128(m)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prime::generate_ntt_primes;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random_poly(rng: &mut ChaCha8Rng, n: usize, q: u64) -> Vec<u64> {
        // Non-zero, and not all small: uniform in [1, q).
        (0..n).map(|_| rng.random_range(1..q)).collect()
    }

    fn table(bits: u32, log_n: u32) -> NttTable {
        let n = 1usize << log_n;
        let q = generate_ntt_primes(bits, n, 1, &[]).unwrap()[0];
        NttTable::new(Modulus::new(q).unwrap(), n).unwrap()
    }

    /// Direct evaluation of `a` at `x` (Horner).
    fn evaluate(a: &[u64], x: u64, q: &Modulus) -> u64 {
        a.iter().rev().fold(0, |acc, &c| q.add(q.mul(acc, x), c))
    }

    #[test]
    fn bit_reverse_basics() {
        assert_eq!(bit_reverse(0, 0), 0);
        assert_eq!(bit_reverse(1, 1), 1);
        assert_eq!(bit_reverse(1, 3), 4);
        assert_eq!(bit_reverse(6, 3), 3);
        assert_eq!(bit_reverse(0b1011, 4), 0b1101);
        for bits in 1..=12 {
            for i in 0..1usize << bits {
                let r = bit_reverse(i, bits);
                assert!(r < 1 << bits);
                assert_eq!(bit_reverse(r, bits), i);
            }
        }
    }

    #[test]
    fn tables_have_the_documented_content() {
        for &(bits, log_n) in &[(30u32, 1u32), (50, 3), (61, 10)] {
            let t = table(bits, log_n);
            let q = *t.modulus();
            let n = t.degree();
            assert_eq!(t.log_degree(), log_n);
            assert_eq!(t.psi(), primitive_root_2n(q.value(), n).unwrap());
            let psi_inv = q.inv(t.psi()).unwrap();
            for i in 0..n {
                let e = bit_reverse(i, log_n) as u64;
                assert_eq!(t.root_powers()[i], q.pow(t.psi(), e));
                assert_eq!(t.inv_root_powers()[i], q.pow(psi_inv, e));
                assert_eq!(t.root_powers_shoup()[i], q.shoup(t.root_powers()[i]));
                assert_eq!(
                    t.inv_root_powers_shoup()[i],
                    q.shoup(t.inv_root_powers()[i])
                );
            }
            assert_eq!(t.root_powers()[0], 1);
            assert_eq!(q.mul(t.inv_degree(), n as u64), 1);
            assert_eq!(t.inv_degree_shoup(), q.shoup(t.inv_degree()));
            assert_eq!(t.root_powers().len(), n);
            assert_eq!(t.inv_root_powers().len(), n);
        }
    }

    #[test]
    fn forward_output_i_is_evaluation_at_psi_2brv_plus_1() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for &(bits, log_n) in &[(30u32, 1u32), (40, 2), (60, 5), (61, 8)] {
            let t = table(bits, log_n);
            let q = *t.modulus();
            let a = random_poly(&mut rng, t.degree(), q.value());
            let mut fa = a.clone();
            t.forward(&mut fa).unwrap();
            for (i, &value) in fa.iter().enumerate() {
                let e = 2 * bit_reverse(i, log_n) as u64 + 1;
                assert_eq!(
                    value,
                    evaluate(&a, q.pow(t.psi(), e), &q),
                    "N = 2^{log_n}, i = {i}"
                );
            }
        }
    }

    #[test]
    fn ntt_product_equals_naive_negacyclic_product() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        for &bits in &[30u32, 50, 60, 61] {
            for &log_n in &[1u32, 2, 3, 6, 10, 11] {
                let t = table(bits, log_n);
                let q = *t.modulus();
                let n = t.degree();
                let a = random_poly(&mut rng, n, q.value());
                let b = random_poly(&mut rng, n, q.value());
                let (mut fa, mut fb) = (a.clone(), b.clone());
                t.forward(&mut fa).unwrap();
                t.forward(&mut fb).unwrap();
                assert!(fa.iter().all(|&x| x < q.value()));
                let mut c: Vec<u64> = fa.iter().zip(&fb).map(|(&x, &y)| q.mul(x, y)).collect();
                t.inverse(&mut c).unwrap();
                assert_eq!(
                    c,
                    negacyclic_mul_naive(&a, &b, &q).unwrap(),
                    "{bits} bits, N = {n}"
                );
            }
        }
    }

    #[test]
    fn naive_product_matches_the_definition_at_small_n() {
        // X^(N-1) · X = X^N = -1.
        let q = Modulus::new(7681).unwrap();
        let n = 8;
        let mut a = vec![0u64; n];
        let mut b = vec![0u64; n];
        a[n - 1] = 1;
        b[1] = 1;
        let mut expected = vec![0u64; n];
        expected[0] = 7680;
        assert_eq!(negacyclic_mul_naive(&a, &b, &q).unwrap(), expected);
        // (1 + 2X)(3 + X^3) in degree 4: 3 + 6X + X^3 + 2X^4 = 1 + 6X + X^3.
        let a = [1, 2, 0, 0];
        let b = [3, 0, 0, 1];
        assert_eq!(negacyclic_mul_naive(&a, &b, &q).unwrap(), vec![1, 6, 0, 1]);
        assert!(matches!(
            negacyclic_mul_naive(&a, &b[..3], &q),
            Err(MathError::ShapeMismatch(_))
        ));
    }

    #[test]
    fn round_trips_at_all_sizes() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for &bits in &[40u32, 61] {
            for log_n in 10..=MAX_LOG_DEGREE {
                let t = table(bits, log_n);
                let q = t.modulus().value();
                let a = random_poly(&mut rng, t.degree(), q);
                let mut b = a.clone();
                t.forward(&mut b).unwrap();
                assert_ne!(a, b);
                assert!(b.iter().all(|&x| x < q));
                t.inverse(&mut b).unwrap();
                assert_eq!(a, b, "{bits} bits, N = 2^{log_n}");
                // And the other way round.
                t.inverse(&mut b).unwrap();
                assert!(b.iter().all(|&x| x < q));
                t.forward(&mut b).unwrap();
                assert_eq!(a, b, "{bits} bits, N = 2^{log_n}");
            }
        }
    }

    #[test]
    fn extreme_inputs_stay_exact() {
        // All coefficients q - 1 (the largest canonical value) and all zero.
        for &(bits, log_n) in &[(61u32, 12u32), (30, 4)] {
            let t = table(bits, log_n);
            let q = t.modulus().value();
            let a = vec![q - 1; t.degree()];
            let mut b = a.clone();
            t.forward(&mut b).unwrap();
            for (i, &value) in b.iter().enumerate().step_by(97) {
                let x = t
                    .modulus()
                    .pow(t.psi(), 2 * bit_reverse(i, log_n) as u64 + 1);
                assert_eq!(value, evaluate(&a, x, t.modulus()));
            }
            t.inverse(&mut b).unwrap();
            assert_eq!(a, b);
            let mut z = vec![0u64; t.degree()];
            t.forward(&mut z).unwrap();
            assert!(z.iter().all(|&x| x == 0));
        }
    }

    #[test]
    fn batched_equals_per_limb() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let n = 1 << 10;
        let primes = generate_ntt_primes(50, n, 3, &[]).unwrap();
        let tables: Vec<NttTable> = primes
            .iter()
            .map(|&q| NttTable::new(Modulus::new(q).unwrap(), n).unwrap())
            .collect();
        for polys in [1usize, 2] {
            let mut data = Vec::new();
            for _ in 0..polys {
                for &q in &primes {
                    data.extend(random_poly(&mut rng, n, q));
                }
            }
            let original = data.clone();
            let mut expected = data.clone();
            for (j, limb) in expected.chunks_exact_mut(n).enumerate() {
                tables[j % 3].forward(limb).unwrap();
            }
            forward_batch(&tables, &mut data).unwrap();
            assert_eq!(data, expected);
            for (j, limb) in expected.chunks_exact_mut(n).enumerate() {
                tables[j % 3].inverse(limb).unwrap();
            }
            inverse_batch(&tables, &mut data).unwrap();
            assert_eq!(data, expected);
            assert_eq!(data, original);
        }
        // Zero polynomials is a valid (empty) batch.
        forward_batch(&tables, &mut []).unwrap();
    }

    #[test]
    fn errors_are_typed() {
        let q = Modulus::new(generate_ntt_primes(40, 1 << 10, 1, &[]).unwrap()[0]).unwrap();
        for bad in [0usize, 1, 3, 12, 1000, 1 << 18] {
            assert!(
                matches!(
                    NttTable::new(q, bad),
                    Err(MathError::InvalidDegree { degree, min_log: 1, max_log: 17 }) if degree == bad
                ),
                "degree {bad}"
            );
        }
        // q ≡ 1 mod 2^11 but not mod 2^12.
        let t = NttTable::new(q, 1 << 10).unwrap();
        let friendly_up_to = 1usize << ((q.value() - 1).trailing_zeros() - 1);
        assert!(matches!(
            NttTable::new(q, friendly_up_to * 2),
            Err(MathError::NotNttFriendly { .. })
        ));
        // A composite and a prime that is not ≡ 1 mod 2N.
        for bad in [7681u64 * 12289, (1 << 61) - 1] {
            assert_eq!(
                NttTable::new(Modulus::new(bad).unwrap(), 16).unwrap_err(),
                MathError::NotNttFriendly {
                    modulus: bad,
                    degree: 16
                }
            );
        }
        // Wrong lengths.
        let mut short = vec![1u64; (1 << 10) - 1];
        assert!(matches!(
            t.forward(&mut short),
            Err(MathError::ShapeMismatch(_))
        ));
        assert!(matches!(
            t.inverse(&mut short),
            Err(MathError::ShapeMismatch(_))
        ));
        let mut long = vec![1u64; 1 << 11];
        assert!(matches!(
            t.forward(&mut long),
            Err(MathError::ShapeMismatch(_))
        ));
        assert!(short.iter().all(|&x| x == 1), "untouched on error");
        // Batches: no tables, mismatched degrees, partial limbs.
        assert!(matches!(
            forward_batch(&[], &mut long),
            Err(MathError::ShapeMismatch(_))
        ));
        let small = NttTable::new(q, 1 << 9).unwrap();
        assert!(matches!(
            forward_batch(&[t.clone(), small], &mut long),
            Err(MathError::ShapeMismatch(_))
        ));
        let mut partial = vec![1u64; 3 << 9];
        assert!(matches!(
            inverse_batch(std::slice::from_ref(&t), &mut partial),
            Err(MathError::ShapeMismatch(_))
        ));
        assert!(matches!(
            forward_batch(&[t.clone(), t.clone()], &mut vec![0u64; 3 << 10]),
            Err(MathError::ShapeMismatch(_))
        ));
    }

    #[test]
    fn table_is_send_sync_and_debug_is_short() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<NttTable>();
        let t = table(30, 12);
        assert!(format!("{t:?}").len() < 200);
    }
}
