//! The CPU implementation of the primitives, on host `[limb][N]` slices (rayon over limbs).
//!
//! Every function here is the body of one primitive of [`super::ops`] for `Storage::Cpu`
//! operands; shapes and forms are checked by the caller. The transforms and base conversions
//! are `rhea-math`'s, so these are also the oracle the CUDA kernels are compared against.

use rayon::prelude::*;
use rhea_math::ntt::bit_reverse;

use super::{PolyShape, RnsRing};
use crate::error::Result;

/// Coefficients per accumulation block in the key-switching inner product.
const BLOCK: usize = 256;
/// `u128` products accumulated between two reductions (`63 · 2^122 + 2^61 < 2^128`).
const FOLD: usize = 63;

/// `a[i] ← f(q_i, a[i], b[i])` limb by limb, in parallel; `b` may have more limbs (a view).
fn zip_limbs(
    ring: &RnsRing,
    shape: &PolyShape,
    a: &mut [u64],
    b: &[u64],
    f: impl Fn(&rhea_math::Modulus, &mut [u64], &[u64]) + Sync + Send,
) {
    let n = shape.n;
    a.par_chunks_mut(n)
        .zip(b.par_chunks(n))
        .enumerate()
        .for_each(|(i, (x, y))| f(ring.modulus(shape, i), x, y));
}

/// Polynomials of at most this many words are combined on the calling thread by
/// [`zip_limbs_new`]: a single core already runs such a pass at memory speed, and rayon's
/// hand-off costs more than the second core saves.
const SERIAL_WORDS: usize = 1 << 20;

/// `f(q_i, a[i][k], b[i][k])` into a new `[limb][N]` buffer of `a`'s length; `b` may have more
/// limbs (a view). Up to `serial_words` words on the calling thread ([`SERIAL_WORDS`]), else
/// over rayon. One pass that reads `a` and `b` and writes each output word once: the result
/// is collected straight from the iterator, with neither a zero fill nor a copy of `a` first
/// (allocating, zeroing and faulting in the result used to cost more than the arithmetic).
fn zip_limbs_new(
    ring: &RnsRing,
    shape: &PolyShape,
    a: &[u64],
    b: &[u64],
    serial_words: usize,
    f: impl Fn(&rhea_math::Modulus, u64, u64) -> u64 + Sync + Send,
) -> Vec<u64> {
    let (n, b) = (shape.n, &b[..a.len()]);
    if a.len() <= serial_words {
        let mut out = Vec::with_capacity(a.len());
        for (i, (x, y)) in a.chunks(n).zip(b.chunks(n)).enumerate() {
            let q = ring.modulus(shape, i);
            out.extend(x.iter().zip(y).map(|(&x, &y)| f(q, x, y)));
        }
        out
    } else {
        // Limb `k >> log N` of word `k`; leaves of at least one limb keep the look-up cheap.
        let (moduli, log_n) = (ring.moduli(shape), n.trailing_zeros());
        a.par_iter()
            .zip(b.par_iter())
            .enumerate()
            .with_min_len(n)
            .map(|(k, (&x, &y))| f(&moduli[k >> log_n], x, y))
            .collect()
    }
}

/// `(x + y) mod q` for `x, y < q`, branch-free: `x + y - q` is negative as an `i64` exactly
/// when `q` must be added back (`q < 2^61`). A sign mask rather than `min`: without SSE4.2 the
/// compiler emulates a 64-bit unsigned `min` with a dozen SSE2 instructions per pair of words.
#[inline(always)]
fn add_word(q: &rhea_math::Modulus, x: u64, y: u64) -> u64 {
    let q = q.value();
    let t = (x + y).wrapping_sub(q);
    t.wrapping_add(q & ((t as i64 >> 63) as u64))
}

/// `(x - y) mod q` for `x, y < q`, branch-free (`x - y` is negative as an `i64` exactly when
/// `x < y`).
#[inline(always)]
fn sub_word(q: &rhea_math::Modulus, x: u64, y: u64) -> u64 {
    let d = x.wrapping_sub(y);
    d.wrapping_add(q.value() & ((d as i64 >> 63) as u64))
}

/// `x · y mod q`.
#[inline(always)]
fn mul_word(q: &rhea_math::Modulus, x: u64, y: u64) -> u64 {
    q.mul(x, y)
}

/// `a + b` into a new buffer.
pub(crate) fn add_new(ring: &RnsRing, shape: &PolyShape, a: &[u64], b: &[u64]) -> Vec<u64> {
    zip_limbs_new(ring, shape, a, b, SERIAL_WORDS, add_word)
}

/// `a - b` into a new buffer.
pub(crate) fn sub_new(ring: &RnsRing, shape: &PolyShape, a: &[u64], b: &[u64]) -> Vec<u64> {
    zip_limbs_new(ring, shape, a, b, SERIAL_WORDS, sub_word)
}

/// `a · b` (pointwise) into a new buffer.
pub(crate) fn mul_new(ring: &RnsRing, shape: &PolyShape, a: &[u64], b: &[u64]) -> Vec<u64> {
    zip_limbs_new(ring, shape, a, b, SERIAL_WORDS, mul_word)
}

/// `a += b`.
pub(crate) fn add(ring: &RnsRing, shape: &PolyShape, a: &mut [u64], b: &[u64]) {
    zip_limbs(ring, shape, a, b, |q, x, y| {
        x.iter_mut().zip(y).for_each(|(x, &y)| *x = q.add(*x, y))
    });
}

/// `a -= b`.
pub(crate) fn sub(ring: &RnsRing, shape: &PolyShape, a: &mut [u64], b: &[u64]) {
    zip_limbs(ring, shape, a, b, |q, x, y| {
        x.iter_mut().zip(y).for_each(|(x, &y)| *x = q.sub(*x, y))
    });
}

/// `a = b - a`.
pub(crate) fn sub_from(ring: &RnsRing, shape: &PolyShape, a: &mut [u64], b: &[u64]) {
    zip_limbs(ring, shape, a, b, |q, x, y| {
        x.iter_mut().zip(y).for_each(|(x, &y)| *x = q.sub(y, *x))
    });
}

/// `a = -a`.
pub(crate) fn neg(ring: &RnsRing, shape: &PolyShape, a: &mut [u64]) {
    let n = shape.n;
    a.par_chunks_mut(n).enumerate().for_each(|(i, x)| {
        let q = ring.modulus(shape, i);
        x.iter_mut().for_each(|x| *x = q.neg(*x));
    });
}

/// `a *= b` (pointwise).
pub(crate) fn mul(ring: &RnsRing, shape: &PolyShape, a: &mut [u64], b: &[u64]) {
    zip_limbs(ring, shape, a, b, |q, x, y| {
        x.iter_mut().zip(y).for_each(|(x, &y)| *x = q.mul(*x, y))
    });
}

/// `acc += a · b` (pointwise).
pub(crate) fn mul_add(ring: &RnsRing, shape: &PolyShape, acc: &mut [u64], a: &[u64], b: &[u64]) {
    let n = shape.n;
    acc.par_chunks_mut(n)
        .zip(a.par_chunks(n).zip(b.par_chunks(n)))
        .enumerate()
        .for_each(|(i, (z, (x, y)))| {
            let q = ring.modulus(shape, i);
            z.iter_mut()
                .zip(x.iter().zip(y))
                .for_each(|(z, (&x, &y))| *z = q.mul_add(x, y, *z));
        });
}

/// `acc -= a · b` (pointwise).
pub(crate) fn mul_sub(ring: &RnsRing, shape: &PolyShape, acc: &mut [u64], a: &[u64], b: &[u64]) {
    let n = shape.n;
    acc.par_chunks_mut(n)
        .zip(a.par_chunks(n).zip(b.par_chunks(n)))
        .enumerate()
        .for_each(|(i, (z, (x, y)))| {
            let q = ring.modulus(shape, i);
            z.iter_mut()
                .zip(x.iter().zip(y))
                .for_each(|(z, (&x, &y))| *z = q.sub(*z, q.mul(x, y)));
        });
}

/// `a *= c_i` on limb `i` (scalars canonical per limb).
pub(crate) fn mul_scalar(ring: &RnsRing, shape: &PolyShape, a: &mut [u64], scalars: &[u64]) {
    let n = shape.n;
    a.par_chunks_mut(n).enumerate().for_each(|(i, x)| {
        let q = ring.modulus(shape, i);
        let (w, ws) = (scalars[i], q.shoup(scalars[i]));
        x.iter_mut().for_each(|x| *x = q.mul_shoup(*x, w, ws));
    });
}

/// `acc += a · c_i` on limb `i`.
pub(crate) fn mul_scalar_add(
    ring: &RnsRing,
    shape: &PolyShape,
    acc: &mut [u64],
    a: &[u64],
    scalars: &[u64],
) {
    let n = shape.n;
    acc.par_chunks_mut(n)
        .zip(a.par_chunks(n))
        .enumerate()
        .for_each(|(i, (z, x))| {
            let q = ring.modulus(shape, i);
            let (w, ws) = (scalars[i], q.shoup(scalars[i]));
            z.iter_mut()
                .zip(x)
                .for_each(|(z, &x)| *z = q.add(*z, q.mul_shoup(x, w, ws)));
        });
}

/// Adds `c_i` to every word of limb `i` (a constant in the NTT domain).
pub(crate) fn add_scalar_all(ring: &RnsRing, shape: &PolyShape, a: &mut [u64], scalars: &[u64]) {
    let n = shape.n;
    a.par_chunks_mut(n).enumerate().for_each(|(i, x)| {
        let q = ring.modulus(shape, i);
        let c = scalars[i];
        x.iter_mut().for_each(|x| *x = q.add(*x, c));
    });
}

/// Adds `c_i` to the constant coefficient of limb `i` (a constant in the coefficient domain).
pub(crate) fn add_scalar_coeff0(ring: &RnsRing, shape: &PolyShape, a: &mut [u64], scalars: &[u64]) {
    let n = shape.n;
    for (i, x) in a.chunks_mut(n).enumerate() {
        let q = ring.modulus(shape, i);
        x[0] = q.add(x[0], scalars[i]);
    }
}

/// Forward NTT of the limbs in `range`.
pub(crate) fn ntt_forward(
    ring: &RnsRing,
    shape: &PolyShape,
    a: &mut [u64],
    range: std::ops::Range<usize>,
) -> Result<()> {
    let n = shape.n;
    a[range.start * n..range.end * n]
        .par_chunks_mut(n)
        .enumerate()
        .try_for_each(|(k, x)| ring.ntt_table(shape, range.start + k).forward(x))?;
    Ok(())
}

/// Inverse NTT of the limbs in `range`.
pub(crate) fn ntt_inverse(
    ring: &RnsRing,
    shape: &PolyShape,
    a: &mut [u64],
    range: std::ops::Range<usize>,
) -> Result<()> {
    let n = shape.n;
    a[range.start * n..range.end * n]
        .par_chunks_mut(n)
        .enumerate()
        .try_for_each(|(k, x)| ring.ntt_table(shape, range.start + k).inverse(x))?;
    Ok(())
}

/// The NTT-domain permutation of `X ↦ X^g`: output entry `i` is input entry `perm[i]`, where
/// `2·brv(perm[i]) + 1 ≡ g·(2·brv(i) + 1) (mod 2N)`.
pub(crate) fn automorphism_permutation(n: usize, g: u64) -> Vec<usize> {
    let log_n = n.trailing_zeros();
    let two_n = 2 * n as u64;
    (0..n)
        .map(|i| {
            let k = 2 * bit_reverse(i, log_n) as u64 + 1;
            let e = (k * (g % two_n)) % two_n;
            bit_reverse(((e - 1) / 2) as usize, log_n)
        })
        .collect()
}

/// `X ↦ X^g` in the NTT domain: a pure permutation of every limb.
pub(crate) fn automorphism_ntt(shape: &PolyShape, a: &[u64], perm: &[usize]) -> Vec<u64> {
    let n = shape.n;
    let mut out = vec![0u64; a.len()];
    out.par_chunks_mut(n)
        .zip(a.par_chunks(n))
        .for_each(|(o, x)| o.iter_mut().zip(perm).for_each(|(o, &j)| *o = x[j]));
    out
}

/// `X ↦ X^g` in the coefficient domain: coefficient `k` moves to `k·g mod 2N` (negated past `N`).
pub(crate) fn automorphism_coeff(ring: &RnsRing, shape: &PolyShape, a: &[u64], g: u64) -> Vec<u64> {
    let n = shape.n;
    let two_n = 2 * n as u64;
    let g = g % two_n;
    let mut out = vec![0u64; a.len()];
    out.par_chunks_mut(n)
        .zip(a.par_chunks(n))
        .enumerate()
        .for_each(|(i, (o, x))| {
            let q = ring.modulus(shape, i);
            for (k, &v) in x.iter().enumerate() {
                let e = (k as u64 * g) % two_n;
                if e < n as u64 {
                    o[e as usize] = v;
                } else {
                    o[(e - n as u64) as usize] = q.neg(v);
                }
            }
        });
    out
}

/// ModUp of every active digit of a level-`ℓ` NTT-domain polynomial (`[ℓ][N]`) to `Q_ℓ ∪ P`,
/// NTT domain. One inverse NTT of the input; then, per digit, the **centred** conversion
/// (`rhea_math`'s `BaseConverter::convert_centered`: deterministic `f64` correction, no
/// big-integer fallback, so the GPU reproduces it word for word) of the digit's active limbs to
/// the other limbs, and forward NTTs of the converted limbs (the digit's own limbs are copied from
/// the input). A digit within `δ·Q_d` of `±Q_d/2` may come out shifted by `±Q_d`, which the
/// gadget absorbs.
///
/// Centring matters: a digit in `[0, Q_j)` has mean `Q_j/2`, and that mean, multiplied by the
/// key's error, lands on `1 + X + … + X^{N-1}` whose embedding is large near `ζ = 1` — with a
/// `P` no larger than the digits this costs about 4 bits. (`rhea_math::bconv::ModUp` is the
/// uncentred fast variant.)
pub(crate) fn mod_up_digits(ring: &RnsRing, ell: usize, input: &[u64]) -> Result<Vec<Vec<u64>>> {
    let n = ring.n();
    let shape_q = ring.shape_q(ell);
    let shape_qp = ring.shape_qp(ell);
    let mut coeff = input.to_vec();
    ntt_inverse(ring, &shape_q, &mut coeff, 0..ell)?;
    let plan = ring.mod_up_plan();
    (0..ring.active_digits(ell))
        .map(|d| {
            let r = plan.digit_limbs(d, ell)?;
            let c = r.len();
            let conv = ring.mod_up_converter(d, ell);
            // Convert straight into the other limbs of the output (converter row `i` for
            // `i < start`, `i - c` past the digit), then NTT them; the own limbs are copied.
            let mut out = vec![0u64; shape_qp.words()];
            let targets = out
                .chunks_mut(n)
                .enumerate()
                .filter(|(i, _)| !r.contains(i))
                .map(|(i, limb)| (if i < r.start { i } else { i - c }, limb))
                .collect();
            conv.convert_centered_rows(&coeff[r.start * n..r.end * n], n, targets)?;
            out.par_chunks_mut(n).enumerate().try_for_each(
                |(i, limb)| -> rhea_math::Result<()> {
                    if r.contains(&i) {
                        limb.copy_from_slice(&input[i * n..(i + 1) * n]);
                        return Ok(());
                    }
                    ring.ntt_table(&shape_qp, i).forward(limb)
                },
            )?;
            Ok(out)
        })
        .collect()
}

/// ModDown of a level-`ℓ` NTT-domain polynomial over `Q_ℓ ∪ P` (`[ℓ + |P|][N]`) to `Q_ℓ`, with
/// rounding: `out_i = (x_i - NTT(conv_{P→Q_ℓ}(INTT(x_P)))_i) · P^{-1} mod q_i`, i.e.
/// `round(x / P)` (`conv` is `rhea_math`'s `BaseConverter::convert_centered`, the NTT-conjugated
/// `ModDown::apply_rounded`; within `δ·P` of a tie it may pick the other neighbour). Rounding to nearest keeps
/// the error zero-mean; the floor-like fast conversion would leave a bias of about one unit per
/// coefficient, whose embedding (that of `1 + X + … + X^{N-1}` times `s`) costs about 4 bits of
/// precision in the slots near `ζ = 1`.
pub(crate) fn mod_down(ring: &RnsRing, ell: usize, input: &[u64]) -> Result<Vec<u64>> {
    let n = ring.n();
    let shape_qp = ring.shape_qp(ell);
    let mut xp = input[ell * n..].to_vec();
    xp.par_chunks_mut(n)
        .enumerate()
        .try_for_each(|(k, x)| ring.ntt_table(&shape_qp, ell + k).inverse(x))?;
    let mut out = vec![0u64; ell * n];
    ring.mod_down_converter(ell)
        .convert_centered(&xp, &mut out, n)?;
    let plan = ring.mod_down_plan();
    let (pinv, pinv_s) = (plan.p_inv_mod_q(), plan.p_inv_mod_q_shoup());
    out.par_chunks_mut(n)
        .zip(input.par_chunks(n))
        .enumerate()
        .try_for_each(|(i, (y, x))| -> rhea_math::Result<()> {
            let table = ring.ntt_table(&shape_qp, i);
            table.forward(y)?;
            let q = table.modulus();
            for (y, &x) in y.iter_mut().zip(x) {
                *y = q.mul_shoup(q.sub(x, *y), pinv[i], pinv_s[i]);
            }
            Ok(())
        })?;
    Ok(out)
}

/// `x mod q` for `x < 2q`, without a branch (`x - q` wraps above `x` when `x < q`).
#[inline(always)]
fn reduce_once(x: u64, q: u64) -> u64 {
    x.min(x.wrapping_sub(q))
}

/// Rescaling of a level-`ℓ` NTT-domain polynomial by its last prime, exactly
/// `round(x / q_{ℓ-1})` (`rhea_math`'s [`Rescaler`](rhea_math::bconv::Rescaler) conjugated by
/// the NTT): with `r = [INTT(x_last) + h]_{q_last}` and `t_i = [r]_{q_i} - [h]_{q_i}`,
/// `out_i = (x_i - NTT(t_i)) · q_last^{-1} mod q_i`.
///
/// Every element-wise step is branch-free (the comparisons of a modular reduction are
/// data-dependent, so branches mispredict half the time; they used to cost as much as the forward
/// NTTs): `t_i` is handed to the forward NTT as the representative `r + (q_i - [h]_{q_i})` in
/// `[0, 4q_i)` whenever `q_last ≤ 3q_i` (the NTT accepts `[0, 4q)` and returns the canonical
/// words), and `x_i - NTT(t_i)` enters the Shoup product as `x_i + q_i - NTT(t_i) < 2q_i`.
pub(crate) fn rescale_ntt(ring: &RnsRing, ell: usize, input: &[u64]) -> Result<Vec<u64>> {
    let n = ring.n();
    let shape = ring.shape_q(ell);
    let table_last = ring.ntt_table(&shape, ell - 1);
    let q_last = *table_last.modulus();
    let (ql, h) = (q_last.value(), q_last.value() >> 1);
    let resc = ring.rescaler();
    let inv = resc.q_last_inv_mod_q(ell)?;
    let inv_s = resc.q_last_inv_mod_q_shoup(ell)?;
    let half = resc.half_mod_q(ell)?;
    // The inverse NTT of the last limb is serial: zero-fill the output on the other core meanwhile.
    let (r, mut out) = rayon::join(
        || -> rhea_math::Result<Vec<u64>> {
            let mut r = input[(ell - 1) * n..ell * n].to_vec();
            table_last.inverse(&mut r)?;
            r.iter_mut().for_each(|x| *x = add_word(&q_last, *x, h));
            Ok(r)
        },
        || vec![0u64; (ell - 1) * n],
    );
    let r = r?;
    out.par_chunks_mut(n)
        .zip(input.par_chunks(n))
        .enumerate()
        .try_for_each(|(i, (t, x))| -> rhea_math::Result<()> {
            let table = ring.ntt_table(&shape, i);
            let q = table.modulus();
            let qv = q.value();
            if ql <= 3 * qv {
                // r < q_last ≤ 3q and q - [h]_q ≤ q: a representative in [0, 4q).
                let c = qv - half[i];
                t.iter_mut().zip(&r).for_each(|(t, &rk)| *t = rk + c);
            } else {
                t.iter_mut()
                    .zip(&r)
                    .for_each(|(t, &rk)| *t = q.sub(q.reduce(rk), half[i]));
            }
            table.forward(t)?;
            let (w, ws) = (inv[i], inv_s[i]);
            t.iter_mut()
                .zip(x)
                .for_each(|(t, &x)| *t = reduce_once(q.mul_shoup_lazy(x + qv - *t, w, ws), qv));
            Ok(())
        })?;
    Ok(out)
}

/// The key-switching inner product over `Q_ℓ ∪ P`:
/// `(Σ_j d_j · b_j, Σ_j d_j · a_j)`, where the digits `d_j` are `[ℓ + |P|][N]` and the key
/// components `(b_j, a_j)` are stored over the full `Q ∪ P` (`[|Q| + |P|][N]`). Products are
/// accumulated exactly in `u128` and reduced once (every 63 terms for huge `dnum`).
pub(crate) fn inner_product(
    ring: &RnsRing,
    ell: usize,
    digits: &[&[u64]],
    keys: &[(&[u64], &[u64])],
) -> (Vec<u64>, Vec<u64>) {
    let n = ring.n();
    let shape = ring.shape_qp(ell);
    let words = shape.words();
    let mut out0 = vec![0u64; words];
    let mut out1 = vec![0u64; words];
    // Blocks never straddle two limbs (N and BLOCK are powers of two).
    let bs = BLOCK.min(n);
    out0.par_chunks_mut(bs)
        .zip(out1.par_chunks_mut(bs))
        .enumerate()
        .for_each(|(blk, (o0, o1))| {
            let off = blk * bs;
            let i = off / n;
            let k0 = off % n;
            let len = o0.len();
            let q = ring.modulus(&shape, i);
            // Limb i of the level-ℓ shape is prime `prime_index(shape, i)`, which is also its
            // limb index in the full-shape key.
            let key_off = ring.prime_index(&shape, i) * n + k0;
            let mut acc0 = [0u128; BLOCK];
            let mut acc1 = [0u128; BLOCK];
            for (j, (d, (b, a))) in digits.iter().zip(keys).enumerate() {
                let d = &d[off..off + len];
                let b = &b[key_off..key_off + len];
                let a = &a[key_off..key_off + len];
                for t in 0..len {
                    acc0[t] += d[t] as u128 * b[t] as u128;
                    acc1[t] += d[t] as u128 * a[t] as u128;
                }
                if (j + 1) % FOLD == 0 {
                    for t in 0..len {
                        acc0[t] = q.reduce_u128(acc0[t]) as u128;
                        acc1[t] = q.reduce_u128(acc1[t]) as u128;
                    }
                }
            }
            for t in 0..len {
                o0[t] = q.reduce_u128(acc0[t]);
                o1[t] = q.reduce_u128(acc1[t]);
            }
        });
    (out0, out1)
}

/// Mixed-radix (Garner) digits of the integer with residues `x` over the moduli `q`:
/// `x = a_0 + a_1·q_0 + a_2·q_0·q_1 + …` with `a_i ∈ [0, q_i)`. `inv[i][j] = q_j^{-1} mod q_i`.
#[inline]
fn garner(q: &[rhea_math::Modulus], inv: &[Vec<(u64, u64)>], x: &[u64], a: &mut [u64]) {
    for i in 0..q.len() {
        let qi = &q[i];
        let mut t = x[i];
        for j in 0..i {
            let (w, ws) = inv[i][j];
            t = qi.mul_shoup(qi.sub(t, qi.reduce(a[j])), w, ws);
        }
        a[i] = t;
    }
}

/// The centred integers (in `(-Q/2, Q/2]`) of a coefficient-form polynomial over the first
/// `ℓ = shape.q_limbs` Q primes, as `f64`, exactly up to the final rounding: Garner's mixed-radix
/// conversion (`O(ℓ²)` word operations per coefficient, no big integers), the sign decided by
/// comparing digits with those of `(Q-1)/2`, and negative values converted through `Q - x`.
pub(crate) fn centered_f64(ring: &RnsRing, shape: &PolyShape, data: &[u64]) -> Vec<f64> {
    let n = shape.n;
    let ell = shape.q_limbs;
    let q: Vec<rhea_math::Modulus> = (0..ell).map(|i| *ring.modulus(shape, i)).collect();
    let inv: Vec<Vec<(u64, u64)>> = (0..ell)
        .map(|i| {
            (0..i)
                .map(|j| {
                    let w = q[i].inv(q[j].value()).unwrap_or(0);
                    (w, q[i].shoup(w))
                })
                .collect()
        })
        .collect();
    let half_res: Vec<u64> = q.iter().map(|m| (m.value() - 1) / 2).collect();
    let mut half = vec![0u64; ell];
    garner(&q, &inv, &half_res, &mut half);
    let mut out = vec![0f64; n];
    out.par_chunks_mut(BLOCK).enumerate().for_each(|(b, out)| {
        let mut x = vec![0u64; ell];
        let mut a = vec![0u64; ell];
        for (t, o) in out.iter_mut().enumerate() {
            let k = b * BLOCK + t;
            for i in 0..ell {
                x[i] = data[i * n + k];
            }
            garner(&q, &inv, &x, &mut a);
            // x > (Q-1)/2 ⇔ its digits are lexicographically larger, most significant first.
            let negative = a.iter().rev().cmp(half.iter().rev()) == std::cmp::Ordering::Greater;
            if negative {
                for i in 0..ell {
                    x[i] = q[i].neg(x[i]);
                }
                garner(&q, &inv, &x, &mut a);
            }
            let mut v = 0f64;
            for i in (0..ell).rev() {
                v = v * q[i].value() as f64 + a[i] as f64;
            }
            *o = if negative { -v } else { v };
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use rhea_math::prime::generate_ntt_primes;

    use super::*;
    use crate::backend::{Device, Form, Poly};

    fn random(ring: &RnsRing, shape: PolyShape, form: Form, stream: u64) -> Poly {
        let mut p = ring
            .sample_uniform_from_seed(Device::Cpu, &[9u8; 32], stream, shape)
            .unwrap();
        p.form = form;
        p
    }

    /// The one-pass `a ∘ b` into a new buffer equals the in-place ops word for word, on the
    /// calling thread and over rayon, and for a higher-level `b` (a view).
    #[test]
    fn new_buffer_element_wise_ops_match_the_in_place_ops() {
        let n = 256;
        let mut q = generate_ntt_primes(50, n, 1, &[]).unwrap();
        q.extend(generate_ntt_primes(40, n, 4, &q).unwrap());
        let p = generate_ntt_primes(55, n, 1, &q).unwrap();
        let ring = RnsRing::new(n, &q, &p, 1).unwrap();
        let (shape, big) = (ring.shape_q(3), ring.shape_q(5));
        let a = ring.download(&random(&ring, shape, Form::Ntt, 1)).unwrap();
        let b = ring.download(&random(&ring, big, Form::Ntt, 2)).unwrap();
        type InPlace = fn(&RnsRing, &PolyShape, &mut [u64], &[u64]);
        type Word = fn(&rhea_math::Modulus, u64, u64) -> u64;
        let ops: [(&str, InPlace, Word); 3] = [
            ("add", add, add_word),
            ("sub", sub, sub_word),
            ("mul", mul, mul_word),
        ];
        for (name, in_place, word) in ops {
            let mut want = a.clone();
            in_place(&ring, &shape, &mut want, &b);
            for serial_words in [0, usize::MAX] {
                let got = zip_limbs_new(&ring, &shape, &a, &b, serial_words, word);
                assert_eq!(got, want, "{name}, serial_words {serial_words}");
            }
        }
    }

    /// A last prime above three times another takes the reducing branch of the lift; both
    /// branches agree with the coefficient-domain rescaling (`rhea_math`'s `Rescaler`).
    #[test]
    fn rescale_with_a_large_last_prime_matches_the_coefficient_form() {
        let n = 256;
        let mut q = generate_ntt_primes(40, n, 2, &[]).unwrap();
        q.extend(generate_ntt_primes(58, n, 1, &q).unwrap());
        let p = generate_ntt_primes(59, n, 1, &q).unwrap();
        let ring = RnsRing::new(n, &q, &p, 1).unwrap();
        for ell in 2..=3 {
            let a = random(&ring, ring.shape_q(ell), Form::Coefficient, 10 + ell as u64);
            let want = ring.rescale(&a).unwrap();
            let mut fa = a.try_clone().unwrap();
            ring.ntt_forward(&mut fa).unwrap();
            let mut got = ring.rescale(&fa).unwrap();
            ring.ntt_inverse(&mut got).unwrap();
            assert_eq!(ring.download(&got).unwrap(), ring.download(&want).unwrap());
        }
    }
}
