//! Fast base conversion, ModUp, ModDown and rescaling on `[limb][N]` buffers.
//!
//! Every buffer is one contiguous `[limb][N]` slice of `u64` (`data[i * n + k]` is coefficient `k`
//! modulo the `i`-th modulus), in the coefficient domain (the schemes run INTT/NTT around these
//! calls). Inputs are read modulo their limb's modulus (any `u64` is accepted); outputs are always
//! canonical in `[0, q)`. Because every output is defined as an exact residue, it is unique, and a
//! GPU kernel that computes the same integers agrees with these functions word for word.
//!
//! Notation: `from = {q_0, …, q_{L-1}}` with product `Q`, `q̂_i = Q / q_i`, and
//! `t_i = [x_i · q̂_i^{-1}]_{q_i}` (canonical); `to = {p_0, …, p_{K-1}}`.
//!
//! - [`BaseConverter::convert_approx`] (HPS "fast" conversion): `y_j = (Σ_i t_i · [q̂_i]_{p_j}) mod p_j`.
//!   Since `Σ_i t_i q̂_i = x + u·Q` with `x ∈ [0, Q)` and `0 ≤ u < L`, the output is `x + u·Q` mod
//!   `p_j`, the same `u` for every `j`.
//! - [`BaseConverter::convert_exact`]: the residues of the *centered* `x ∈ (-Q/2, Q/2]`, using the
//!   floating-point correction `v = round(Σ_i t_i / q_i)` with an exact fallback near the tie.
//! - [`BaseConverter::convert_centered`]: the same with the deterministic `f64` correction only
//!   (no fallback): exact for `|x| < (1/2 - δ)·Q`, otherwise off by `±Q`. This is the conversion
//!   the GPU kernels reproduce bit for bit.
//! - [`ModUp`]: hybrid key-switching basis extension of one digit to `Q_ℓ ∪ P`
//!   ([`ModUp::apply`]: fast, `x + u·Q_d`; [`ModUp::apply_centered`]: centred).
//! - [`ModDown`]: [`ModDown::apply`] is `(x - FastConv_{P→Q}(x_P)) · P^{-1}`, i.e.
//!   `floor(x / P) - u`, `0 ≤ u < |P|`; [`ModDown::apply_rounded`] is `round(x / P)`.
//! - [`Rescaler`] / [`rescale_by_last`]: exact `round(x / q_{ℓ-1})` onto the first `ℓ - 1` limbs.
//!
//! # Accumulation (how a GPU reproduces `convert_approx`)
//!
//! Each product `t_i · [q̂_i]_{p_j}` is below `(2^61)^2 = 2^122`, so 64 of them fit in a `u128`.
//! The reference accumulates the products exactly in a `u128`, in index order `i = 0, 1, …`, and
//! after every 63 terms (only when `L > 63`) folds the accumulator to `acc mod p_j`; at the end it
//! reduces once (Barrett). Any exact accumulation (lazy, blocked, Montgomery, in any order) gives
//! the same canonical result, because the value is exact modulo `p_j`.
//!
//! # BGV (to do)
//!
//! BGV needs variants of [`ModDown`] and [`Rescaler`] that keep the plaintext modulo `t`: instead of
//! subtracting `δ = [x]_{q_last}` (or the converted `x_P`), subtract `δ ≡ x (mod q_last)` with
//! `δ ≡ 0 (mod t)`, namely `δ = t · [x · t^{-1}]_{q_last}` (centered), and multiply by
//! `q_last^{-1}` as here; the plaintext is then scaled by `q_last^{-1} mod t`. Not implemented yet.

use std::ops::Range;

use num_bigint::BigUint;
use num_traits::{ToPrimitive, Zero};
use rayon::prelude::*;

use crate::basis::{check_poly, Basis};
use crate::error::{MathError, Result};
use crate::Modulus;

/// Coefficients handled together by one task (one `u128` accumulator per coefficient).
const BLOCK: usize = 256;
/// Products accumulated in a `u128` between two folds (`2^61 + 63 · 2^122 < 2^128`).
const FOLD: usize = 63;

/// `x · w mod q`, canonical, for any `x < 2^64` and `w < q` (`w_shoup = q.shoup(w)`): the lazy
/// Shoup product in `[0, 2q)` and one branch-free subtraction (the words are random, so a
/// branch would mispredict half the time).
#[inline(always)]
fn mul_shoup_canonical(q: &Modulus, x: u64, w: u64, w_shoup: u64) -> u64 {
    let r = q.mul_shoup_lazy(x, w, w_shoup);
    let t = r.wrapping_sub(q.value());
    t.wrapping_add(q.value() & ((t as i64 >> 63) as u64))
}

/// `(x + y) mod q` for `x, y < q < 2^62`, branch-free.
#[inline(always)]
fn add_canonical(q: u64, x: u64, y: u64) -> u64 {
    let t = (x + y).wrapping_sub(q);
    t.wrapping_add(q & ((t as i64 >> 63) as u64))
}

/// Which correction `v` a conversion subtracts (see [`BaseConverter::convert_exact`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Correction {
    /// `v = 0` (the fast conversion).
    None,
    /// The `f64` estimate only (the centred conversion).
    Centered,
    /// The `f64` estimate with the exact big-integer decision near the tie.
    Exact,
}

/// A fast base conversion from one RNS basis to another, coprime one.
///
/// The tables are public, row-major, for GPU kernels:
/// [`BaseConverter::q_hat_inv_mod_q`] over `from` and [`BaseConverter::q_hat_mod_p`] laid out
/// `[from_index][to_index]`.
///
/// ```
/// use num_bigint::{BigInt, BigUint};
/// use rhea_math::{basis::Basis, bconv::BaseConverter};
/// // Toy moduli, not secure.
/// let (q, p) = (Basis::new(&[97, 193])?, Basis::new(&[257, 769])?);
/// let conv = BaseConverter::new(&q, &p)?;
/// let x = 12_345i64; // in [Q/2, Q) with Q = 97 · 193 = 18_721
/// let input = q.decompose(&BigUint::from(x as u64)); // one coefficient: n = 1
/// let mut out = vec![0u64; 2];
/// conv.convert_exact(&input, &mut out, 1)?;
/// assert_eq!(out, p.decompose_signed(&BigInt::from(x - 18_721))); // the centered value x − Q
/// conv.convert_approx(&input, &mut out, 1)?; // x + u·Q with 0 ≤ u < 2
/// assert!(out == p.decompose_signed(&BigInt::from(x)) || out == p.decompose_signed(&BigInt::from(x + 18_721)));
/// # Ok::<(), rhea_math::MathError>(())
/// ```
#[derive(Clone, Debug)]
pub struct BaseConverter {
    from: Basis,
    to: Basis,
    /// `[q̂_i]_{p_j}` at `i * K + j`.
    q_hat_mod_p: Vec<u64>,
    /// The same, transposed (`j * L + i`), for contiguous per-output access.
    q_hat_mod_p_t: Vec<u64>,
    /// Shoup companions of `q_hat_mod_p_t` (modulo `p_j`), for single-limb sources.
    q_hat_mod_p_t_shoup: Vec<u64>,
    /// `[Q]_{p_j}`.
    q_mod_p: Vec<u64>,
    /// `[-v · Q]_{p_j}` at `j * (L + 1) + v` for `v = 0..=L` (every correction `v` is at most `L`).
    neg_v_q_mod_p: Vec<u64>,
    /// `1 / q_i` in `f64`.
    q_inv_f64: Vec<f64>,
    /// Half-width of the window around `1/2` where the exact fallback decides.
    window: f64,
}

fn check_coprime(a: &Basis, b: &Basis) -> Result<()> {
    for x in a.moduli() {
        for y in b.moduli() {
            let (mut u, mut v) = (x.value(), y.value());
            while v != 0 {
                (u, v) = (v, u % v);
            }
            if u != 1 {
                return Err(MathError::InvalidBasis(format!(
                    "modulus {} of one basis and {} of the other are not coprime",
                    x.value(),
                    y.value()
                )));
            }
        }
    }
    Ok(())
}

impl BaseConverter {
    /// Precomputes the conversion `from → to`; every modulus of `to` must be coprime to every
    /// modulus of `from` ([`MathError::InvalidBasis`] otherwise).
    pub fn new(from: &Basis, to: &Basis) -> Result<Self> {
        check_coprime(from, to)?;
        let (l, k) = (from.len(), to.len());
        let mut q_hat_mod_p = vec![0u64; l * k];
        let mut q_hat_mod_p_t = vec![0u64; l * k];
        for i in 0..l {
            for (j, p) in to.moduli().iter().enumerate() {
                let c = from.q_hat_mod(i, p);
                q_hat_mod_p[i * k + j] = c;
                q_hat_mod_p_t[j * l + i] = c;
            }
        }
        let q_hat_mod_p_t_shoup = q_hat_mod_p_t
            .iter()
            .enumerate()
            .map(|(c, &w)| to.modulus(c / l).shoup(w))
            .collect();
        let q_mod_p: Vec<u64> = to.moduli().iter().map(|p| from.product_mod(p)).collect();
        let neg_v_q_mod_p = to
            .moduli()
            .iter()
            .zip(&q_mod_p)
            .flat_map(|(p, &qm)| (0..=l as u64).map(move |v| p.neg(p.mul(v, qm))))
            .collect();
        let lf = l as f64;
        Ok(Self {
            from: from.clone(),
            to: to.clone(),
            q_hat_mod_p,
            q_hat_mod_p_t,
            q_hat_mod_p_t_shoup,
            q_mod_p,
            neg_v_q_mod_p,
            q_inv_f64: from.inv_f64(),
            window: (lf * (lf + 4.0) + 1.0) * f64::EPSILON,
        })
    }

    /// The source basis `{q_i}`.
    pub fn from(&self) -> &Basis {
        &self.from
    }

    /// The target basis `{p_j}`.
    pub fn to(&self) -> &Basis {
        &self.to
    }

    /// `q̂_i^{-1} mod q_i` over the source basis (same as `from().q_hat_inv_mod_q()`).
    pub fn q_hat_inv_mod_q(&self) -> &[u64] {
        self.from.q_hat_inv_mod_q()
    }

    /// Shoup companions of [`BaseConverter::q_hat_inv_mod_q`].
    pub fn q_hat_inv_mod_q_shoup(&self) -> &[u64] {
        self.from.q_hat_inv_mod_q_shoup()
    }

    /// `(Q / q_i) mod p_j` at index `i * to.len() + j` (row-major `[from_index][to_index]`).
    pub fn q_hat_mod_p(&self) -> &[u64] {
        &self.q_hat_mod_p
    }

    /// `Q mod p_j` for every target modulus (the exact conversion's correction).
    pub fn q_mod_p(&self) -> &[u64] {
        &self.q_mod_p
    }

    /// `1 / q_i` rounded to `f64`, for every source modulus.
    pub fn q_inv_f64(&self) -> &[f64] {
        &self.q_inv_f64
    }

    /// The half-width `δ = (L(L+4) + 1) · 2^-52` of the window around `1/2` in which
    /// [`BaseConverter::convert_exact`] does not trust the `f64` sum (see there).
    pub fn exact_window(&self) -> f64 {
        self.window
    }

    fn check_shapes(&self, input: &[u64], output_len: usize, n: usize) -> Result<()> {
        check_poly("base conversion input", input.len(), self.from.len(), n)?;
        check_poly("base conversion output", output_len, self.to.len(), n)
    }

    /// The whole conversion, one block of [`BLOCK`] coefficients at a time (block-major, so a
    /// block's `t` stays in L1 while every target row is produced from it):
    /// `t_i = [x_i · q̂_i^{-1}]_{q_i}` (canonical), then, with `mode` deciding the correction
    /// `v` (none, `f64` only, or `f64` with the exact fallback), writes
    /// `(Σ_i t_i [q̂_i]_{p_j} - v · [Q]_{p_j}) mod p_j` into each selected output row.
    /// `targets` pairs a target index `j` with its `n`-word row.
    fn convert_blocks(
        &self,
        input: &[u64],
        n: usize,
        targets: Vec<(usize, &mut [u64])>,
        mode: Correction,
    ) {
        if targets.is_empty() {
            return;
        }
        let l = self.from.len();
        let width = targets.len();
        let mut blocks: Vec<Vec<(usize, &mut [u64])>> = (0..n.div_ceil(BLOCK))
            .map(|_| Vec::with_capacity(width))
            .collect();
        for (j, row) in targets {
            for (b, out) in row.chunks_mut(BLOCK).enumerate() {
                blocks[b].push((j, out));
            }
        }
        let inv = self.from.q_hat_inv_mod_q();
        let inv_shoup = self.from.q_hat_inv_mod_q_shoup();
        blocks.into_par_iter().enumerate().for_each_init(
            || (vec![0u64; BLOCK * l], [0u64; BLOCK]),
            |(t, v), (b, outs)| {
                let off = b * BLOCK;
                let len = BLOCK.min(n - off);
                // t, transposed: t[k * l + i] for coefficient k of the block.
                let t = &mut t[..len * l];
                for i in 0..l {
                    let q = self.from.modulus(i);
                    let (w, ws) = (inv[i], inv_shoup[i]);
                    let x = &input[i * n + off..i * n + off + len];
                    for (k, &x) in x.iter().enumerate() {
                        t[k * l + i] = mul_shoup_canonical(q, x, w, ws);
                    }
                }
                let v = &mut v[..len];
                if mode != Correction::None {
                    for (vk, tk) in v.iter_mut().zip(t.chunks_exact(l)) {
                        let mut s = 0f64;
                        for (&x, &qi) in tk.iter().zip(&self.q_inv_f64) {
                            s += x as f64 * qi;
                        }
                        // `0 ≤ s < L + 1` (a sum of non-negative products `t_i/q_i < 1`), so
                        // the truncating cast is `⌊s⌋`, exactly, and both conversions are
                        // single instructions (`f64::floor` is a library call on baseline
                        // x86-64, and so are unsigned conversions).
                        let floor = s as i64;
                        let d = s - floor as f64 - 0.5;
                        *vk = if mode == Correction::Exact && d.abs() <= self.window {
                            self.exact_correction(tk)
                        } else {
                            floor as u64 + u64::from(d > 0.0)
                        };
                    }
                }
                for (j, out) in outs {
                    let p = self.to.modulus(j);
                    let coeffs = &self.q_hat_mod_p_t[j * l..(j + 1) * l];
                    // [-v · Q]_{p_j} for v = 0..=L.
                    let neg_vq = &self.neg_v_q_mod_p[j * (l + 1)..(j + 1) * (l + 1)];
                    if l == 1 {
                        // One source limb: `t_k · [q̂_0]_{p_j}` is a Shoup product by a constant
                        // and `v_k ∈ {0, 1}` (`t_k < q_0`, so `s < 1` or `s` rounds to exactly
                        // 1), so the correction is a masked constant: the same canonical words
                        // as the `u128` accumulation and Barrett reduction below, without them.
                        let (w, ws) = (coeffs[0], self.q_hat_mod_p_t_shoup[j]);
                        let corr1 = neg_vq[1];
                        let pv = p.value();
                        for (o, (&tk, &vk)) in out.iter_mut().zip(t.iter().zip(v.iter())) {
                            let y = mul_shoup_canonical(p, tk, w, ws);
                            let corr = if mode == Correction::None {
                                0
                            } else {
                                corr1 & vk.wrapping_neg()
                            };
                            *o = add_canonical(pv, y, corr);
                        }
                        continue;
                    }
                    // (acc - v_k · Q) mod p_j; acc < 2^61 + 63 · 2^122, so adding a word is exact.
                    let finish = |k: usize, acc: u128| -> u64 {
                        let corr = if mode == Correction::None {
                            0
                        } else {
                            let vk = v[k];
                            match neg_vq.get(vk as usize) {
                                Some(&c) => c,
                                None => p.neg(p.mul(vk, self.q_mod_p[j])),
                            }
                        };
                        p.reduce_u128(acc + corr as u128)
                    };
                    if l <= FOLD {
                        // Four coefficients at a time: four independent carry chains.
                        let mut quads = out.chunks_exact_mut(4);
                        for (k, (o, tk)) in (&mut quads).zip(t.chunks_exact(4 * l)).enumerate() {
                            let (t01, t23) = tk.split_at(2 * l);
                            let ((t0, t1), (t2, t3)) = (t01.split_at(l), t23.split_at(l));
                            let mut a = [0u128; 4];
                            for ((((&x0, &x1), &x2), &x3), &w) in
                                t0.iter().zip(t1).zip(t2).zip(t3).zip(coeffs)
                            {
                                let w = w as u128;
                                a[0] += x0 as u128 * w;
                                a[1] += x1 as u128 * w;
                                a[2] += x2 as u128 * w;
                                a[3] += x3 as u128 * w;
                            }
                            for (r, (o, &a)) in o.iter_mut().zip(&a).enumerate() {
                                *o = finish(4 * k + r, a);
                            }
                        }
                        let rem = quads.into_remainder();
                        let k0 = len - rem.len();
                        for (r, o) in rem.iter_mut().enumerate() {
                            let k = k0 + r;
                            let acc = t[k * l..(k + 1) * l]
                                .iter()
                                .zip(coeffs)
                                .map(|(&x, &w)| x as u128 * w as u128)
                                .sum();
                            *o = finish(k, acc);
                        }
                    } else {
                        for (k, (o, tk)) in out.iter_mut().zip(t.chunks_exact(l)).enumerate() {
                            let mut acc = 0u128;
                            for (c, (tc, wc)) in
                                tk.chunks(FOLD).zip(coeffs.chunks(FOLD)).enumerate()
                            {
                                if c > 0 {
                                    acc = p.reduce_u128(acc) as u128;
                                }
                                for (&x, &w) in tc.iter().zip(wc) {
                                    acc += x as u128 * w as u128;
                                }
                            }
                            *o = finish(k, acc);
                        }
                    }
                }
            },
        );
    }

    /// Fast conversion into the selected target rows only (used by [`ModUp`] and [`ModDown`]).
    pub(crate) fn convert_approx_into(
        &self,
        input: &[u64],
        n: usize,
        targets: Vec<(usize, &mut [u64])>,
    ) {
        self.convert_blocks(input, n, targets, Correction::None);
    }

    /// The fast (HPS, "approximate") base conversion of a `[from.len()][n]` polynomial into a
    /// `[to.len()][n]` one:
    /// `y_j = (Σ_i [x_i · q̂_i^{-1}]_{q_i} · [q̂_i]_{p_j}) mod p_j`.
    ///
    /// With `x ∈ [0, Q)` the integer whose residues are the input, every output coefficient is
    /// `(x + u·Q) mod p_j` for one `u` with `0 ≤ u < from.len()` (the same `u` for all `j`).
    /// See the module docs for the exact accumulation.
    ///
    /// Errors: [`MathError::ShapeMismatch`] for buffers of the wrong length,
    /// [`MathError::InvalidArgument`] for `n = 0`.
    pub fn convert_approx(&self, input: &[u64], output: &mut [u64], n: usize) -> Result<()> {
        self.check_shapes(input, output.len(), n)?;
        let targets = output.chunks_mut(n).enumerate().collect();
        self.convert_approx_into(input, n, targets);
        Ok(())
    }

    /// The exact base conversion of the *centered* value: with `x ∈ (-Q/2, Q/2]` the integer
    /// whose residues are the input, writes `x mod p_j` (canonical) for every target modulus.
    ///
    /// Computes `S = Σ_i t_i · q̂_i = x' + v·Q` (`x'` the centered value, `v` an integer in
    /// `[0, L]`), then `y_j = ([S]_{p_j} - v · [Q]_{p_j}) mod p_j`, with `v = round(S / Q) =
    /// round(Σ_i t_i / q_i)` rounding halves down (so that `x = Q/2` stays positive).
    ///
    /// `v` is found in `f64`: `s = Σ_i t_i · (1/q_i)` summed in index order. Its absolute error is
    /// below `L(L+4) · 2^-53`, so when the fractional part of `s` is farther than
    /// `δ = (L(L+4) + 1) · 2^-52` ([`BaseConverter::exact_window`]) from `1/2`, `round(s)` is
    /// exact. Inside that window (only when `|x| ≥ (1/2 - δ)·Q`, e.g. `δ < 2^-40` for `L ≤ 60`)
    /// `v` is computed exactly with big integers. A GPU kernel that keeps only the `f64` path
    /// therefore agrees word for word whenever `|x| < (1/2 - δ)·Q`.
    ///
    /// Errors as [`BaseConverter::convert_approx`].
    pub fn convert_exact(&self, input: &[u64], output: &mut [u64], n: usize) -> Result<()> {
        self.check_shapes(input, output.len(), n)?;
        let targets = output.chunks_mut(n).enumerate().collect();
        self.convert_blocks(input, n, targets, Correction::Exact);
        Ok(())
    }

    /// The centred conversion with a deterministic `f64` correction and no big-integer fallback
    /// (HPS): with `x ∈ (-Q/2, Q/2]` the integer whose residues are the input, writes
    /// `x mod p_j` (canonical) whenever `|x| < (1/2 - δ)·Q` (`δ` =
    /// [`BaseConverter::exact_window`]), and otherwise `(x + e·Q) mod p_j` with `e ∈ {-1, 0, 1}`
    /// (the same `e` for every `j`) — harmless in key switching, where the gadget absorbs
    /// multiples of the digit modulus, and in ModDown, where it moves the rounding by one unit.
    ///
    /// Precisely: `t_i = [x_i · q̂_i^{-1}]_{q_i}`; `s = 0.0`, then for `i = 0, 1, …` in order
    /// `s = s + (t_i as f64) · q_inv_f64[i]` with plain IEEE-754 round-to-nearest `f64` multiply
    /// and add (never fused; [`BaseConverter::q_inv_f64`]); `v = ⌊s⌋ + [s - ⌊s⌋ > 1/2]`
    /// (round half down); `y_j = ((Σ_i t_i · [q̂_i]_{p_j}) mod p_j - v · [Q]_{p_j}) mod p_j`.
    /// A GPU twin computes the same `f64` operations (`__ull2double_rn`, `__dmul_rn`,
    /// `__dadd_rn`, `floor`) and therefore the same `v` and output, word for word, for every
    /// input.
    ///
    /// Errors as [`BaseConverter::convert_approx`].
    pub fn convert_centered(&self, input: &[u64], output: &mut [u64], n: usize) -> Result<()> {
        self.check_shapes(input, output.len(), n)?;
        let targets = output.chunks_mut(n).enumerate().collect();
        self.convert_centered_into(input, n, targets);
        Ok(())
    }

    /// [`BaseConverter::convert_centered`] into caller-chosen rows: `rows` pairs a target index
    /// `j` (into `to`) with an `n`-word output row, which receives exactly what row `j` of
    /// [`BaseConverter::convert_centered`] would hold. Any subset of the targets, in any order,
    /// so a caller can convert straight into the rows of a larger buffer (skipping a copy).
    ///
    /// Errors: [`MathError::ShapeMismatch`] for an input that is not `[from.len()][n]` or a row
    /// that is not `n` words; [`MathError::InvalidArgument`] for `n = 0` or a target index
    /// outside `0..to.len()`.
    pub fn convert_centered_rows(
        &self,
        input: &[u64],
        n: usize,
        rows: Vec<(usize, &mut [u64])>,
    ) -> Result<()> {
        check_poly("base conversion input", input.len(), self.from.len(), n)?;
        for (j, row) in &rows {
            if *j >= self.to.len() {
                return Err(MathError::InvalidArgument(format!(
                    "target index {j} outside 0..{}",
                    self.to.len()
                )));
            }
            check_poly("base conversion output row", row.len(), 1, n)?;
        }
        self.convert_centered_into(input, n, rows);
        Ok(())
    }

    /// [`BaseConverter::convert_centered`] into the selected target rows only.
    pub(crate) fn convert_centered_into(
        &self,
        input: &[u64],
        n: usize,
        targets: Vec<(usize, &mut [u64])>,
    ) {
        self.convert_blocks(input, n, targets, Correction::Centered);
    }

    /// The exact `round(Σ_i t_ik · q̂_i / Q)` (halves down) with big integers.
    /// `tk[i]` is `t_i` of the coefficient.
    fn exact_correction(&self, tk: &[u64]) -> u64 {
        let mut s = BigUint::zero();
        for (q_hat, &ti) in self.from.q_hat().iter().zip(tk) {
            s += q_hat * ti;
        }
        let q = self.from.product();
        let v = &s / q;
        let rem = s - &v * q;
        let v = v
            .to_u64()
            .expect("Σ t_i q̂_i < L·Q, so the quotient is below L");
        if (rem << 1u32) > *q {
            v + 1
        } else {
            v
        }
    }
}

/// The even partition of `l` limbs into `dnum` key-switching digits of consecutive limbs: sizes
/// `⌈l/dnum⌉` for the first `l mod dnum` digits and `⌊l/dnum⌋` for the rest (what [`ModUp`]
/// uses). Callers keep `1 ≤ dnum ≤ l`; a `dnum` of 0 gives no digits.
///
/// ```
/// assert_eq!(rhea_math::bconv::digit_ranges(25, 3), vec![0..9, 9..17, 17..25]);
/// assert_eq!(rhea_math::bconv::digit_ranges(6, 4), vec![0..2, 2..4, 4..5, 5..6]);
/// ```
pub fn digit_ranges(l: usize, dnum: usize) -> Vec<Range<usize>> {
    if dnum == 0 {
        return Vec::new();
    }
    let (b, r) = (l / dnum, l % dnum);
    (0..dnum)
        .map(|d| {
            let start = d * b + d.min(r);
            start..start + b + usize::from(d < r)
        })
        .collect()
}

/// Basis extension for hybrid (GHS) key switching: ModUp of one digit to `Q_ℓ ∪ P`.
///
/// The full basis `Q = {q_0, …, q_{L-1}}` is split into `dnum` digits of consecutive limbs whose
/// sizes differ by at most one, the larger digits first: with `L = dnum·b + r` (`0 ≤ r < dnum`)
/// digit `d` has `b + 1` limbs for `d < r` and `b` limbs otherwise, so it starts at
/// `d·b + min(d, r)` ([`ModUp::digits`]). Every `dnum` in `1..=L` is valid (e.g. 6 limbs in 4
/// digits: `2, 2, 1, 1`), and the largest digit has `α = ⌈L / dnum⌉` limbs ([`ModUp::alpha`]).
/// At level `ℓ` (the number of active Q limbs) a digit is clipped to the active limbs: its
/// active range is [`ModUp::digit_limbs`], and digits that start at or after `ℓ` are inactive
/// ([`ModUp::active_digits`] counts the active ones).
///
/// [`ModUp::apply`] takes the digit's active limbs `x_D` (a `[c][N]` slice, `c` its active
/// length; for a level-`ℓ` polynomial `poly` that is `&poly[start·n .. (start+c)·n]`) and writes
/// the `[ℓ + |P|][N]` extension: Q limbs `0..ℓ` then P limbs. The digit's own limbs are copied;
/// every other limb is [`BaseConverter::convert_approx`] of `x_D`, so the extension is
/// `x_D + u·Q_D` with `x_D ∈ [0, Q_D)` and `0 ≤ u < c` (`Q_D` the product of the active digit
/// limbs). [`ModUp::apply_centered`] uses [`BaseConverter::convert_centered`] instead: the
/// extension is the centred `x_D ∈ (-Q_D/2, Q_D/2]` (off by `±Q_D` only within `δ·Q_D` of
/// `±Q_D/2`), which keeps the key-switching error zero-mean (about 4 bits of CKKS precision).
///
/// The converter used for (digit `d`, active length `c`) is [`ModUp::converter`]: from
/// `{q_start, …, q_{start+c-1}}` to `{q_0..q_start} ∪ {q_{start+c}..q_L} ∪ P` in that order; at
/// level `ℓ` only the target columns of active limbs are computed (Q limb `i < start` is column
/// `i`, Q limb `i ≥ start + c` is column `i - c`, P limb `m` is column `L - c + m`).
#[derive(Clone, Debug)]
pub struct ModUp {
    q: Basis,
    p: Basis,
    alpha: usize,
    digits: Vec<Range<usize>>,
    /// `converters[d][c - 1]`: digit `d` with `c` active limbs.
    converters: Vec<Vec<BaseConverter>>,
}

impl ModUp {
    /// Precomputes the digit partition (see the type docs) and one converter per (digit,
    /// active length).
    ///
    /// Errors: [`MathError::InvalidBasis`] if `q` and `p` are not coprime;
    /// [`MathError::InvalidArgument`] unless `1 ≤ dnum ≤ L`.
    pub fn new(q: &Basis, p: &Basis, dnum: usize) -> Result<Self> {
        let l = q.len();
        if dnum == 0 || dnum > l {
            return Err(MathError::InvalidArgument(format!(
                "dnum = {dnum} must be in 1..={l} (the number of Q limbs)"
            )));
        }
        check_coprime(q, p)?;
        let digits = digit_ranges(l, dnum);
        let alpha = l.div_ceil(dnum);
        let qv = q.values();
        let pv = p.values();
        let converters = digits
            .iter()
            .map(|r| {
                (1..=r.len())
                    .map(|c| {
                        let from = q.slice(r.start..r.start + c)?;
                        let to_values: Vec<u64> = qv[..r.start]
                            .iter()
                            .chain(&qv[r.start + c..])
                            .chain(&pv)
                            .copied()
                            .collect();
                        BaseConverter::new(&from, &Basis::new(&to_values)?)
                    })
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            q: q.clone(),
            p: p.clone(),
            alpha,
            digits,
            converters,
        })
    }

    /// The full `Q` basis.
    pub fn q(&self) -> &Basis {
        &self.q
    }

    /// The special basis `P`.
    pub fn p(&self) -> &Basis {
        &self.p
    }

    /// The number of digits.
    pub fn dnum(&self) -> usize {
        self.digits.len()
    }

    /// The largest digit size `α = ⌈L / dnum⌉` (the first `L mod dnum` digits have `α` limbs
    /// when `dnum` does not divide `L`, the others `α - 1`).
    pub fn alpha(&self) -> usize {
        self.alpha
    }

    /// The full limb range of every digit.
    pub fn digits(&self) -> &[Range<usize>] {
        &self.digits
    }

    /// The number of digits with at least one active limb at `level` (those starting below
    /// `level`).
    pub fn active_digits(&self, level: usize) -> usize {
        let level = level.min(self.q.len());
        self.digits.iter().filter(|r| r.start < level).count()
    }

    /// The active limbs of `digit` at `level`: `start .. min(end, level)`.
    ///
    /// Errors with [`MathError::InvalidArgument`] for a level outside `1..=L`, a digit index out of
    /// range, or a digit with no active limb at this level.
    pub fn digit_limbs(&self, digit: usize, level: usize) -> Result<Range<usize>> {
        if level == 0 || level > self.q.len() {
            return Err(MathError::InvalidArgument(format!(
                "level {level} outside 1..={}",
                self.q.len()
            )));
        }
        let r = self.digits.get(digit).ok_or_else(|| {
            MathError::InvalidArgument(format!(
                "digit {digit} out of range (dnum = {})",
                self.dnum()
            ))
        })?;
        if r.start >= level {
            return Err(MathError::InvalidArgument(format!(
                "digit {digit} (limbs {r:?}) has no active limb at level {level}"
            )));
        }
        Ok(r.start..r.end.min(level))
    }

    /// The converter used for `digit` at `level` (its tables are what a GPU kernel needs).
    pub fn converter(&self, digit: usize, level: usize) -> Result<&BaseConverter> {
        let r = self.digit_limbs(digit, level)?;
        Ok(&self.converters[digit][r.len() - 1])
    }

    /// Where the conversion of `digit` at `level` writes: `(column, limb)` for every limb of
    /// `Q_level ∪ P` (Q limbs `0..level`, then P limbs) but the digit's own, ascending by limb,
    /// `column` the target of [`ModUp::converter`] that feeds it (Q limb `i < start`: `i`;
    /// Q limb `i ≥ start + c`: `i − c`; P limb `m`: `L − c + m`). The one layout every ModUp
    /// consumer uses: [`ModUp::apply`], the CPU backend and the GPU kernels' plans.
    ///
    /// Errors: as [`ModUp::digit_limbs`].
    pub fn output_columns(&self, digit: usize, level: usize) -> Result<Vec<(usize, usize)>> {
        let r = self.digit_limbs(digit, level)?;
        let (c, l) = (r.len(), self.q.len());
        Ok((0..level + self.p.len())
            .filter(|limb| !r.contains(limb))
            .map(|limb| {
                let column = if limb < r.start {
                    limb
                } else if limb < level {
                    limb - c
                } else {
                    l - c + (limb - level)
                };
                (column, limb)
            })
            .collect())
    }

    /// Extends the active limbs of `digit` of a level-`level` polynomial (`input`, `[c][n]`) to
    /// all `level + |P|` limbs (`output`, `[level + |P|][n]`; Q limbs then P limbs).
    ///
    /// Errors: as [`ModUp::digit_limbs`]; [`MathError::ShapeMismatch`] for buffers of the wrong
    /// length; [`MathError::InvalidArgument`] for `n = 0`.
    pub fn apply(
        &self,
        digit: usize,
        level: usize,
        input: &[u64],
        output: &mut [u64],
        n: usize,
    ) -> Result<()> {
        self.extend(digit, level, input, output, n, false)
    }

    /// [`ModUp::apply`] with the centred conversion ([`BaseConverter::convert_centered`]) of
    /// the digit's active limbs to every other limb; the digit's own limbs are copied (reduced).
    /// The output is the centred digit value `x_D ∈ (-Q_D/2, Q_D/2]` over `Q_ℓ ∪ P` (off by
    /// `±Q_D` only when `|x_D| ≥ (1/2 - δ)·Q_D`). Coefficient domain: a scheme holding NTT-form
    /// polynomials runs the inverse NTT on the digit's limbs before, and the forward NTT on the
    /// converted limbs after (the own limbs can be taken from the NTT-form input unchanged).
    /// `rhea_cuda::bconv::DeviceModUp::apply_centered` is the bit-exact GPU twin.
    ///
    /// Errors: as [`ModUp::apply`].
    pub fn apply_centered(
        &self,
        digit: usize,
        level: usize,
        input: &[u64],
        output: &mut [u64],
        n: usize,
    ) -> Result<()> {
        self.extend(digit, level, input, output, n, true)
    }

    fn extend(
        &self,
        digit: usize,
        level: usize,
        input: &[u64],
        output: &mut [u64],
        n: usize,
        centered: bool,
    ) -> Result<()> {
        let r = self.digit_limbs(digit, level)?;
        let c = r.len();
        check_poly("ModUp input (digit limbs)", input.len(), c, n)?;
        check_poly(
            "ModUp output (level + P limbs)",
            output.len(),
            level + self.p.len(),
            n,
        )?;
        let conv = &self.converters[digit][c - 1];
        let mut columns = self.output_columns(digit, level)?.into_iter().peekable();
        let mut targets = Vec::with_capacity(level + self.p.len() - c);
        for (limb, row) in output.chunks_mut(n).enumerate() {
            match columns.next_if(|&(_, l)| l == limb) {
                Some((column, _)) => targets.push((column, row)),
                None => {
                    let k = limb - r.start;
                    row.iter_mut()
                        .zip(&input[k * n..(k + 1) * n])
                        .for_each(|(o, &x)| *o = self.q.modulus(limb).reduce(x));
                }
            }
        }
        if centered {
            conv.convert_centered_into(input, n, targets);
        } else {
            conv.convert_approx_into(input, n, targets);
        }
        Ok(())
    }
}

/// ModDown for hybrid key switching: from `Q_ℓ ∪ P` back to `Q_ℓ`, dividing by `P`.
///
/// For a level-`ℓ` input `x` (`[ℓ + |P|][N]`, Q limbs then P limbs; `x ∈ [0, Q_ℓ·P)` its integer)
/// the output (`[ℓ][N]`) is, for every `i < ℓ`,
/// `out_i = (x_i - y_i) · [P^{-1}]_{q_i} mod q_i` with `y = convert_approx_{P→Q_ℓ}(x_P)`.
/// Since `y = [x]_P + u·P` with `0 ≤ u < |P|`, the output is exactly the residues of
/// `floor(x / P) - u` (for a centered `x` too, since `Q_ℓ·P / P ≡ 0 mod Q_ℓ`): the division by
/// `P` is floor-like with an extra error `u ∈ [0, |P|)`, the same for all limbs. The tables are
/// [`ModDown::converter`] (`P → Q`, only the first `ℓ` columns are used at level `ℓ`) and
/// [`ModDown::p_inv_mod_q`] (+ Shoup).
#[derive(Clone, Debug)]
pub struct ModDown {
    q: Basis,
    p: Basis,
    conv: BaseConverter,
    p_inv_mod_q: Vec<u64>,
    p_inv_mod_q_shoup: Vec<u64>,
}

impl ModDown {
    /// Precomputes the `P → Q` converter and `P^{-1} mod q_i`.
    /// Errors with [`MathError::InvalidBasis`] if `q` and `p` are not coprime.
    pub fn new(q: &Basis, p: &Basis) -> Result<Self> {
        let conv = BaseConverter::new(p, q)?;
        let p_inv_mod_q = q
            .moduli()
            .iter()
            .map(|m| m.inv(p.product_mod(m)))
            .collect::<Result<Vec<_>>>()?;
        let p_inv_mod_q_shoup = q
            .moduli()
            .iter()
            .zip(&p_inv_mod_q)
            .map(|(m, &w)| m.shoup(w))
            .collect();
        Ok(Self {
            q: q.clone(),
            p: p.clone(),
            conv,
            p_inv_mod_q,
            p_inv_mod_q_shoup,
        })
    }

    /// The full `Q` basis.
    pub fn q(&self) -> &Basis {
        &self.q
    }

    /// The special basis `P`.
    pub fn p(&self) -> &Basis {
        &self.p
    }

    /// The `P → Q` converter (full `Q`; a level uses its first `ℓ` target columns).
    pub fn converter(&self) -> &BaseConverter {
        &self.conv
    }

    /// `P^{-1} mod q_i` for every Q limb.
    pub fn p_inv_mod_q(&self) -> &[u64] {
        &self.p_inv_mod_q
    }

    /// Shoup companions of [`ModDown::p_inv_mod_q`].
    pub fn p_inv_mod_q_shoup(&self) -> &[u64] {
        &self.p_inv_mod_q_shoup
    }

    /// Divides a level-`level` polynomial over `Q_ℓ ∪ P` by `P` (see the type docs).
    ///
    /// Errors: [`MathError::InvalidArgument`] for a level outside `1..=L` or `n = 0`;
    /// [`MathError::ShapeMismatch`] unless `input` is `[level + |P|][n]` and `output` `[level][n]`.
    pub fn apply(&self, level: usize, input: &[u64], output: &mut [u64], n: usize) -> Result<()> {
        self.divide(level, input, output, n, false)
    }

    /// ModDown with rounding to nearest: `out_i = (x_i - y_i) · [P^{-1}]_{q_i} mod q_i` with
    /// `y = convert_centered_{P→Q_ℓ}(x_P)` ([`BaseConverter::convert_centered`] of the P limbs,
    /// the first `ℓ` columns of [`ModDown::converter`]), i.e. the residues of `round(x / P)`
    /// (`x - [x]_P^{centred}` is a multiple of `P`); only when `[x]_P` lies within `δ·P` of
    /// `±P/2` may the result be the other neighbour (`round(x/P) ± 1`). This is exactly the
    /// composition of `rhea`'s CPU key switching (there conjugated by the NTT: inverse NTT on
    /// the P limbs, this conversion, forward NTT of `y`), with `convert_centered` in place of
    /// `convert_exact`. `rhea_cuda::bconv::DeviceModDown::apply_rounded` is the bit-exact GPU
    /// twin.
    ///
    /// Errors: as [`ModDown::apply`].
    pub fn apply_rounded(
        &self,
        level: usize,
        input: &[u64],
        output: &mut [u64],
        n: usize,
    ) -> Result<()> {
        self.divide(level, input, output, n, true)
    }

    fn divide(
        &self,
        level: usize,
        input: &[u64],
        output: &mut [u64],
        n: usize,
        rounded: bool,
    ) -> Result<()> {
        if level == 0 || level > self.q.len() {
            return Err(MathError::InvalidArgument(format!(
                "level {level} outside 1..={}",
                self.q.len()
            )));
        }
        check_poly(
            "ModDown input (level + P limbs)",
            input.len(),
            level + self.p.len(),
            n,
        )?;
        check_poly("ModDown output (level limbs)", output.len(), level, n)?;
        let (x_q, x_p) = input.split_at(level * n);
        let targets = output.chunks_mut(n).enumerate().collect();
        if rounded {
            self.conv.convert_centered_into(x_p, n, targets);
        } else {
            self.conv.convert_approx_into(x_p, n, targets);
        }
        output
            .par_chunks_mut(n)
            .zip(x_q.par_chunks(n))
            .enumerate()
            .for_each(|(i, (out, x))| {
                let q = self.q.modulus(i);
                let (w, ws) = (self.p_inv_mod_q[i], self.p_inv_mod_q_shoup[i]);
                for (o, &xi) in out.iter_mut().zip(x) {
                    *o = q.mul_shoup(q.sub(q.reduce(xi), *o), w, ws);
                }
            });
        Ok(())
    }
}

/// The tables for rescaling a level-`ℓ` polynomial by its last prime `q_{ℓ-1}`.
#[derive(Clone, Debug)]
struct RescaleLevel {
    q_last: Modulus,
    /// `q_0, …, q_{ℓ-2}`.
    lower: Vec<Modulus>,
    /// `q_{ℓ-1}^{-1} mod q_i`, `i < ℓ-1`.
    inv: Vec<u64>,
    inv_shoup: Vec<u64>,
    /// `⌊q_{ℓ-1}/2⌋ mod q_i`, `i < ℓ-1`.
    half: Vec<u64>,
}

impl RescaleLevel {
    fn new(basis: &Basis, level: usize) -> Result<Self> {
        if level < 2 || level > basis.len() {
            return Err(MathError::InvalidArgument(format!(
                "rescaling needs a level in 2..={}, got {level}",
                basis.len()
            )));
        }
        let q_last = *basis.modulus(level - 1);
        let lower = basis.moduli()[..level - 1].to_vec();
        let inv = lower
            .iter()
            .map(|q| q.inv(q_last.value()))
            .collect::<Result<Vec<_>>>()?;
        let inv_shoup = lower.iter().zip(&inv).map(|(q, &w)| q.shoup(w)).collect();
        let half = lower
            .iter()
            .map(|q| q.reduce(q_last.value() >> 1))
            .collect();
        Ok(Self {
            q_last,
            lower,
            inv,
            inv_shoup,
            half,
        })
    }

    fn apply(&self, level: usize, input: &[u64], output: &mut [u64], n: usize) -> Result<()> {
        check_poly("rescale input", input.len(), level, n)?;
        check_poly("rescale output", output.len(), level - 1, n)?;
        let (x_low, x_last) = input.split_at((level - 1) * n);
        let ql = &self.q_last;
        let h = ql.value() >> 1;
        // r = (x_last + h) mod q_last, canonical.
        let r: Vec<u64> = x_last.iter().map(|&x| ql.add(ql.reduce(x), h)).collect();
        output
            .par_chunks_mut(n)
            .zip(x_low.par_chunks(n))
            .enumerate()
            .for_each(|(i, (out, x))| {
                let q = &self.lower[i];
                let (w, ws, hi) = (self.inv[i], self.inv_shoup[i], self.half[i]);
                for ((o, &xi), &rk) in out.iter_mut().zip(x).zip(&r) {
                    let a = q.add(q.reduce(xi), hi);
                    *o = q.mul_shoup(q.sub(a, q.reduce(rk)), w, ws);
                }
            });
        Ok(())
    }
}

/// Rescaling by the last active prime, with all levels' tables precomputed.
///
/// For a level-`ℓ` polynomial `x` (`[ℓ][N]`, `2 ≤ ℓ ≤ L`) with last prime `q_l = q_{ℓ-1}` and
/// `h = ⌊q_l / 2⌋`, [`Rescaler::apply`] writes the `[ℓ-1][N]` polynomial
///
/// `out_i = ([x_i + h]_{q_i} - [r]_{q_i}) · [q_l^{-1}]_{q_i} mod q_i`, with
/// `r = [x_{ℓ-1} + h]_{q_l}` (canonical),
///
/// which is exactly `floor((x + h) / q_l) mod Q_{ℓ-1}`, i.e. `round(x / q_l)` for odd `q_l`
/// (no ties) — in both the `[0, Q_ℓ)` and the centered interpretation of `x`, since
/// `Q_ℓ / q_l = Q_{ℓ-1}`. The result is error-free. Tables per level (for `i < ℓ - 1`):
/// [`Rescaler::q_last_inv_mod_q`] (+ Shoup) and [`Rescaler::half_mod_q`] (`h mod q_i`).
#[derive(Clone, Debug)]
pub struct Rescaler {
    basis: Basis,
    /// `levels[ℓ - 2]` for `ℓ = 2..=L`.
    levels: Vec<RescaleLevel>,
}

impl Rescaler {
    /// Precomputes the tables of every level `2..=basis.len()` (none for a one-limb basis).
    pub fn new(basis: &Basis) -> Result<Self> {
        let levels = (2..=basis.len())
            .map(|l| RescaleLevel::new(basis, l))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            basis: basis.clone(),
            levels,
        })
    }

    /// The basis.
    pub fn basis(&self) -> &Basis {
        &self.basis
    }

    fn level(&self, level: usize) -> Result<&RescaleLevel> {
        level
            .checked_sub(2)
            .and_then(|i| self.levels.get(i))
            .ok_or_else(|| {
                MathError::InvalidArgument(format!(
                    "rescaling needs a level in 2..={}, got {level}",
                    self.basis.len()
                ))
            })
    }

    /// `q_{ℓ-1}^{-1} mod q_i` for `i < ℓ - 1`.
    pub fn q_last_inv_mod_q(&self, level: usize) -> Result<&[u64]> {
        Ok(&self.level(level)?.inv)
    }

    /// Shoup companions of [`Rescaler::q_last_inv_mod_q`].
    pub fn q_last_inv_mod_q_shoup(&self, level: usize) -> Result<&[u64]> {
        Ok(&self.level(level)?.inv_shoup)
    }

    /// `⌊q_{ℓ-1} / 2⌋ mod q_i` for `i < ℓ - 1`.
    pub fn half_mod_q(&self, level: usize) -> Result<&[u64]> {
        Ok(&self.level(level)?.half)
    }

    /// Rescales `input` (`[level][n]`) into `output` (`[level-1][n]`); see the type docs.
    ///
    /// Errors: [`MathError::InvalidArgument`] for a level outside `2..=L` or `n = 0`;
    /// [`MathError::ShapeMismatch`] for buffers of the wrong length.
    pub fn apply(&self, level: usize, input: &[u64], output: &mut [u64], n: usize) -> Result<()> {
        self.level(level)?.apply(level, input, output, n)
    }
}

/// Divides a level-`level` polynomial by its last prime with rounding, like [`Rescaler::apply`],
/// computing that level's tables on the fly (prefer a [`Rescaler`] in loops).
pub fn rescale_by_last(
    basis: &Basis,
    level: usize,
    input: &[u64],
    output: &mut [u64],
    n: usize,
) -> Result<()> {
    RescaleLevel::new(basis, level)?.apply(level, input, output, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prime::generate_ntt_primes;

    fn xorshift(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    /// `convert_centered_rows` writes exactly the rows of `convert_centered`, for any subset
    /// of targets in any order, at sizes that do and do not fill whole blocks (and odd `n`).
    /// The ModUp layout: every limb but the digit's own, the converter's column for each.
    #[test]
    fn modup_output_columns_skip_the_digits_own_limbs() {
        let primes = generate_ntt_primes(40, 1 << 4, 8, &[]).unwrap();
        let (q, p) = (
            Basis::new(&primes[..6]).unwrap(),
            Basis::new(&primes[6..]).unwrap(),
        );
        let up = ModUp::new(&q, &p, 3).unwrap(); // digits 0..2, 2..4, 4..6
                                                 // The digit of limbs 2..4 at level 5: Q limbs 0, 1, 4, then P limbs 5, 6.
        assert_eq!(
            up.output_columns(1, 5).unwrap(),
            vec![(0, 0), (1, 1), (2, 4), (4, 5), (5, 6)]
        );
        // First digit at the top; last digit clipped to one limb at level 5.
        assert_eq!(
            up.output_columns(0, 6).unwrap(),
            vec![(0, 2), (1, 3), (2, 4), (3, 5), (4, 6), (5, 7)]
        );
        assert_eq!(
            up.output_columns(2, 5).unwrap(),
            vec![(0, 0), (1, 1), (2, 2), (3, 3), (5, 5), (6, 6)]
        );
        assert!(up.output_columns(2, 4).is_err(), "an inactive digit");
    }

    #[test]
    fn centered_rows_match_the_full_conversion() {
        let primes = generate_ntt_primes(50, 1 << 10, 9, &[]).unwrap();
        let (from, to) = (
            Basis::new(&primes[..4]).unwrap(),
            Basis::new(&primes[4..]).unwrap(),
        );
        let conv = BaseConverter::new(&from, &to).unwrap();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for n in [1usize, 7, 256, 1000] {
            let input: Vec<u64> = (0..from.len() * n)
                .map(|w| xorshift(&mut seed) % from.modulus(w / n).value())
                .collect();
            assert!(input.iter().any(|&x| x != 0));
            let mut full = vec![0u64; to.len() * n];
            conv.convert_centered(&input, &mut full, n).unwrap();
            let order = [3usize, 0, 4];
            let mut rows = vec![vec![u64::MAX; n]; order.len()];
            let targets = order
                .iter()
                .copied()
                .zip(rows.iter_mut().map(|r| &mut r[..]));
            conv.convert_centered_rows(&input, n, targets.collect())
                .unwrap();
            for (&j, row) in order.iter().zip(&rows) {
                assert_eq!(row[..], full[j * n..(j + 1) * n], "n = {n}, row {j}");
            }
        }
    }

    /// A single source limb takes the Shoup fast path: every mode gives the defined residues
    /// (computed here in `u128`) for sources above and below the targets, for any input word
    /// (non-canonical ones are read modulo the source), including the values around `q/2`.
    #[test]
    fn single_source_limb_matches_the_definition() {
        let big = generate_ntt_primes(61, 1 << 4, 1, &[]).unwrap();
        let small = generate_ntt_primes(30, 1 << 4, 2, &big).unwrap();
        let mid = generate_ntt_primes(44, 1 << 4, 2, &[big[0], small[0], small[1]]).unwrap();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for (from, to) in [
            (vec![big[0]], vec![small[0], small[1], mid[0]]),
            (vec![small[0]], vec![big[0], mid[1]]),
            (vec![mid[0]], vec![mid[1], small[1]]),
        ] {
            let q = from[0];
            let conv =
                BaseConverter::new(&Basis::new(&from).unwrap(), &Basis::new(&to).unwrap()).unwrap();
            let mut input: Vec<u64> = vec![0, 1, q - 1, q / 2, q / 2 + 1, q / 2 - 1, q, u64::MAX];
            while input.len() < 300 {
                input.push(xorshift(&mut seed) % q);
            }
            let n = input.len();
            for mode in 0..3 {
                let mut out = vec![u64::MAX; to.len() * n];
                match mode {
                    0 => conv.convert_approx(&input, &mut out, n).unwrap(),
                    1 => conv.convert_exact(&input, &mut out, n).unwrap(),
                    _ => conv.convert_centered(&input, &mut out, n).unwrap(),
                }
                for (j, &p) in to.iter().enumerate() {
                    for (k, &x) in input.iter().enumerate() {
                        let x = x % q;
                        // The centred value is x − q above q/2 (halves stay positive); the
                        // centred mode decides with the documented `f64` rounding instead.
                        let s = x as f64 * (1.0 / q as f64);
                        let neg = match mode {
                            0 => false,
                            1 => 2 * x as u128 > q as u128,
                            _ => s.floor() as u64 + u64::from(s - s.floor() - 0.5 > 0.0) == 1,
                        };
                        let want = if neg {
                            ((x % p) + p - (q % p)) % p
                        } else {
                            x % p
                        };
                        assert_eq!(out[j * n + k], want, "mode {mode}, q {q}, p {p}, x {x}");
                    }
                }
            }
        }
    }

    #[test]
    fn centered_rows_errors_are_typed() {
        let primes = generate_ntt_primes(40, 16, 3, &[]).unwrap();
        let conv = BaseConverter::new(
            &Basis::new(&primes[..1]).unwrap(),
            &Basis::new(&primes[1..]).unwrap(),
        )
        .unwrap();
        let input = [1u64; 4];
        let mut row = [0u64; 4];
        let bad_index = conv.convert_centered_rows(&input, 4, vec![(2, &mut row[..])]);
        assert!(matches!(bad_index, Err(MathError::InvalidArgument(_))));
        let bad_row = conv.convert_centered_rows(&input, 4, vec![(0, &mut row[..3])]);
        assert!(matches!(bad_row, Err(MathError::ShapeMismatch(_))));
        let bad_input = conv.convert_centered_rows(&input[..3], 4, vec![(0, &mut row[..])]);
        assert!(matches!(bad_input, Err(MathError::ShapeMismatch(_))));
    }
}
