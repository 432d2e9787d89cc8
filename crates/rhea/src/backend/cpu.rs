//! The CPU implementation of the primitives, on host `[limb][N]` slices (rayon over limbs).
//!
//! Every function here is the body of one primitive of [`super::ops`] for `Storage::Cpu`
//! operands; shapes and forms are checked by the caller. The transforms and base conversions
//! are `rhea-math`'s, so these are also the oracle the CUDA kernels are compared against.

use rayon::prelude::*;
use rhea_math::ntt::bit_reverse;

use super::{PolyShape, RnsRing};
use crate::error::Result;

// ---------------------------------------------------------------- buffer pool

/// Host buffers of dropped polynomials, kept for reuse (most recently returned last).
///
/// Every primitive returns a new polynomial, and a key switching at HE-Booster's sizes allocates
/// and frees a dozen buffers of a few hundred KiB. Fresh ones come from the allocator as
/// untouched pages (above its mmap threshold, or after it trimmed the heap), so each word is
/// paid again as a page fault, a zero fill by the kernel and, when freed, an unmap with a TLB
/// shootdown of the other cores: up to a tenth of a key switching. A buffer reused from here is
/// already mapped and usually still in cache.
static POOL: std::sync::Mutex<Vec<Vec<u64>>> = std::sync::Mutex::new(Vec::new());
/// At most this many buffers are kept.
const POOL_BUFFERS: usize = 32;
/// At most this many words are kept in all (256 MiB).
const POOL_WORDS: usize = 1 << 25;
/// Buffers below this many words are left to the allocator (which recycles small blocks well).
const POOL_MIN_WORDS: usize = 1 << 12;

/// Gives a buffer back to the pool (or to the allocator when the pool is full or the buffer
/// is small). Its contents are not cleared: [`buffer`] hands them out only to callers that
/// overwrite every word.
pub(crate) fn recycle(v: Vec<u64>) {
    if v.capacity() < POOL_MIN_WORDS {
        return;
    }
    if let Ok(mut pool) = POOL.lock() {
        let held: usize = pool.iter().map(Vec::capacity).sum();
        if pool.len() < POOL_BUFFERS && held + v.capacity() <= POOL_WORDS {
            pool.push(v);
        }
    }
}

/// A pooled buffer with room for `words` (the smallest that fits and is at most twice as
/// large), or `None`.
fn pooled(words: usize) -> Option<Vec<u64>> {
    if words < POOL_MIN_WORDS {
        return None;
    }
    let mut pool = POOL.lock().ok()?;
    let best = pool
        .iter()
        .enumerate()
        .filter(|(_, v)| v.capacity() >= words && v.capacity() <= 2 * words)
        .min_by_key(|(_, v)| v.capacity())
        .map(|(i, _)| i)?;
    Some(pool.swap_remove(best))
}

/// An empty buffer (`len` 0) with room for `words`: pooled when one fits, else new.
pub(crate) fn empty(words: usize) -> Vec<u64> {
    match pooled(words) {
        Some(mut v) => {
            v.clear();
            v
        }
        None => Vec::with_capacity(words),
    }
}

/// A buffer of exactly `words` words whose contents are **unspecified** (stale words of an
/// earlier polynomial, or zeros): only for callers that overwrite every word. Saves the zero
/// fill of `vec![0; words]` when a pooled buffer is reused.
pub(crate) fn buffer(words: usize) -> Vec<u64> {
    match pooled(words) {
        Some(mut v) => {
            v.truncate(words);
            v.resize(words, 0);
            v
        }
        None => vec![0u64; words],
    }
}

/// A pooled copy of `a`.
pub(crate) fn copy(a: &[u64]) -> Vec<u64> {
    let mut v = empty(a.len());
    v.extend_from_slice(a);
    v
}

// ---------------------------------------------------------------- primitives

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

/// The same threshold for the pointwise product, whose Barrett reduction makes it compute
/// bound: from two limbs of `N = 2^13` on, the second core pays for the hand-off.
const MUL_SERIAL_WORDS: usize = 1 << 14;

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
    let mut out = empty(a.len());
    if a.len() <= serial_words {
        for (i, (x, y)) in a.chunks(n).zip(b.chunks(n)).enumerate() {
            let q = ring.modulus(shape, i);
            out.extend(x.iter().zip(y).map(|(&x, &y)| f(q, x, y)));
        }
    } else {
        // Limb `k >> log N` of word `k`; leaves of at least one limb keep the look-up cheap.
        let (moduli, log_n) = (ring.moduli(shape), n.trailing_zeros());
        a.par_iter()
            .zip(b.par_iter())
            .enumerate()
            .with_min_len(n)
            .map(|(k, (&x, &y))| f(&moduli[k >> log_n], x, y))
            .collect_into_vec(&mut out);
    }
    out
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
    zip_limbs_new(ring, shape, a, b, MUL_SERIAL_WORDS, mul_word)
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
        x.iter_mut()
            .zip(y)
            .for_each(|(x, &y)| *x = mul_word(q, *x, y))
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
                .for_each(|(z, (&x, &y))| *z = sub_word(q, *z, mul_word(q, x, y)));
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

/// Permutations already computed, by `(N, g mod 2N)` (a handful of Galois elements per
/// application; each rotation used to recompute its table for every part).
type PermCache = Vec<((usize, u64), std::sync::Arc<Vec<usize>>)>;
static PERMUTATIONS: std::sync::Mutex<PermCache> = std::sync::Mutex::new(Vec::new());
/// At most this many permutations are cached (the oldest is evicted).
const PERMUTATIONS_KEPT: usize = 64;

/// The NTT-domain permutation of `X ↦ X^g`: output entry `i` is input entry `perm[i]`, where
/// `2·brv(perm[i]) + 1 ≡ g·(2·brv(i) + 1) (mod 2N)`. Cached per `(N, g mod 2N)`.
pub(crate) fn automorphism_permutation(n: usize, g: u64) -> std::sync::Arc<Vec<usize>> {
    let key = (n, g % (2 * n as u64));
    if let Ok(cache) = PERMUTATIONS.lock() {
        if let Some((_, p)) = cache.iter().find(|(k, _)| *k == key) {
            return p.clone();
        }
    }
    let perm = std::sync::Arc::new(compute_permutation(n, g));
    if let Ok(mut cache) = PERMUTATIONS.lock() {
        if cache.len() >= PERMUTATIONS_KEPT {
            cache.remove(0);
        }
        cache.push((key, perm.clone()));
    }
    perm
}

/// [`automorphism_permutation`], computed.
fn compute_permutation(n: usize, g: u64) -> Vec<usize> {
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
    // Every word is written (`perm` is a permutation).
    let mut out = buffer(a.len());
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
    // Every word is written (`k ↦ k·g mod 2N` is a bijection onto the N positions, up to sign).
    let mut out = buffer(a.len());
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
    let mut coeff = copy(input);
    ntt_inverse(ring, &shape_q, &mut coeff, 0..ell)?;
    let plan = ring.keyswitch_plan().mod_up();
    // Digits in parallel (each digit's conversion and NTTs split further when a core is
    // idle): one parallel region for all digits instead of two per digit.
    let digits = (0..ring.active_digits(ell))
        .into_par_iter()
        .map(|d| {
            let r = plan.digit_limbs(d, ell)?;
            let conv = plan.converter(d, ell)?;
            // Convert straight into the other limbs of the output (the plan's columns), then
            // NTT them; the own limbs are copied. Every word is written.
            let mut out = buffer(shape_qp.words());
            let mut columns = plan.output_columns(d, ell)?.into_iter().peekable();
            let targets = out
                .chunks_mut(n)
                .enumerate()
                .filter_map(|(i, limb)| columns.next_if(|&(_, l)| l == i).map(|(c, _)| (c, limb)))
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
        .collect();
    recycle(coeff);
    digits
}

/// ModDown of a level-`ℓ` NTT-domain polynomial over `Q_ℓ ∪ P` (`[ℓ + |P|][N]`) to `Q_ℓ`, with
/// rounding: `out_i = (x_i - NTT(conv_{P→Q_ℓ}(INTT(x_P)))_i) · P^{-1} mod q_i`, i.e.
/// `round(x / P)` (`conv` is `rhea_math`'s `BaseConverter::convert_centered`, the NTT-conjugated
/// `ModDown::apply_rounded`; within `δ·P` of a tie it may pick the other neighbour). Rounding to nearest keeps
/// the error zero-mean; the floor-like fast conversion would leave a bias of about one unit per
/// coefficient, whose embedding (that of `1 + X + … + X^{N-1}` times `s`) costs about 4 bits of
/// precision in the slots near `ζ = 1`.
pub(crate) fn mod_down(ring: &RnsRing, ell: usize, input: &[u64]) -> Result<Vec<u64>> {
    mod_down_adding(ring, ell, input, None)
}

/// [`mod_down`] of `input + NTT(e)` for a coefficient-form `e` over `Q_ℓ ∪ P` (`[ℓ + |P|][N]`,
/// canonical words), without transforming `e`: its `P` limbs join `INTT(x_P)` and its `Q` limbs
/// the converted limbs before their forward NTT (`NTT(y) − NTT(e) = NTT(y − e)`), so the words
/// are those of `mod_down(input + NTT(e))` for `2·(ℓ + |P|)` fewer NTTs (the public-key
/// encryption's two errors).
pub(crate) fn mod_down_adding(
    ring: &RnsRing,
    ell: usize,
    input: &[u64],
    e: Option<&[u64]>,
) -> Result<Vec<u64>> {
    let n = ring.n();
    let shape_qp = ring.shape_qp(ell);
    let mut xp = copy(&input[ell * n..]);
    xp.par_chunks_mut(n)
        .enumerate()
        .try_for_each(|(k, x)| -> rhea_math::Result<()> {
            let table = ring.ntt_table(&shape_qp, ell + k);
            table.inverse(x)?;
            if let Some(e) = e {
                let pv = table.modulus().value();
                x.iter_mut()
                    .zip(&e[(ell + k) * n..(ell + k + 1) * n])
                    .for_each(|(x, &e)| *x = reduce_once(*x + e, pv));
            }
            Ok(())
        })?;
    // Every word is written by the conversion.
    let mut out = buffer(ell * n);
    ring.keyswitch_plan()
        .mod_down_converter(ell)
        .convert_centered(&xp, &mut out, n)?;
    recycle(xp);
    if let Some(e) = e {
        // y − e as the representative y + q − e in [1, 2q): the forward NTT below takes [0, 4q).
        out.par_chunks_mut(n).enumerate().for_each(|(i, y)| {
            let qv = ring.ntt_table(&shape_qp, i).modulus().value();
            y.iter_mut()
                .zip(&e[i * n..(i + 1) * n])
                .for_each(|(y, &e)| *y = *y + qv - e);
        });
    }
    let plan = ring.keyswitch_plan().mod_down();
    let (pinv, pinv_s) = (plan.p_inv_mod_q(), plan.p_inv_mod_q_shoup());
    out.par_chunks_mut(n)
        .zip(input.par_chunks(n))
        .enumerate()
        .try_for_each(|(i, (y, x))| -> rhea_math::Result<()> {
            let table = ring.ntt_table(&shape_qp, i);
            table.forward(y)?;
            let q = table.modulus();
            let (qv, w, ws) = (q.value(), pinv[i], pinv_s[i]);
            // Branch-free: `x - y` enters the Shoup product as `x + q - y < 2q`.
            y.iter_mut()
                .zip(x)
                .for_each(|(y, &x)| *y = reduce_once(q.mul_shoup_lazy(x + qv - *y, w, ws), qv));
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
            let mut r = copy(&input[(ell - 1) * n..ell * n]);
            table_last.inverse(&mut r)?;
            r.iter_mut().for_each(|x| *x = add_word(&q_last, *x, h));
            Ok(r)
        },
        // Every word is written below.
        || buffer((ell - 1) * n),
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
    recycle(r);
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
    let shape = ring.shape_qp(ell);
    // Limb i of the level-ℓ shape is prime `prime_index(shape, i)`, which is also its limb
    // index in the full-shape key.
    sum_of_products(ring, &shape, digits, keys, |i| ring.prime_index(&shape, i))
}

/// `(Σ_j d_j · b_j, Σ_j d_j · a_j)` over `shape`, with limb `i` of the `(b_j, a_j)` read at
/// their limb `key_limb(i)` (the digits' and the output's at `i`): the key-switching inner
/// product ([`inner_product`], keys over the full `Q ∪ P`) and
/// [`RnsRing::sum_of_products`](crate::backend::RnsRing::sum_of_products) (same shapes).
pub(crate) fn sum_of_products(
    ring: &RnsRing,
    shape: &PolyShape,
    digits: &[&[u64]],
    keys: &[(&[u64], &[u64])],
    key_limb: impl Fn(usize) -> usize + Sync,
) -> (Vec<u64>, Vec<u64>) {
    let n = ring.n();
    let shape = *shape;
    let words = shape.words();
    // Every word is written.
    let mut out0 = buffer(words);
    let mut out1 = buffer(words);
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
            let key_off = key_limb(i) * n + k0;
            let mut acc0 = [0u128; BLOCK];
            let mut acc1 = [0u128; BLOCK];
            let (acc0, acc1) = (&mut acc0[..len], &mut acc1[..len]);
            // Digits in groups of `GROUP`, each coefficient's sums kept in registers across a
            // group (not loaded and stored once per digit); the last group writes the reduced
            // words. Any exact accumulation gives the same canonical words.
            let groups = digits.len().div_ceil(GROUP);
            let mut terms = 0;
            for (g, (ds, ks)) in digits.chunks(GROUP).zip(keys.chunks(GROUP)).enumerate() {
                if terms + ds.len() > FOLD {
                    // Keep the u128 sums exact: fold to words (each counts as one term).
                    for (x, y) in acc0.iter_mut().zip(acc1.iter_mut()) {
                        *x = q.reduce_u128(*x) as u128;
                        *y = q.reduce_u128(*y) as u128;
                    }
                    terms = 1;
                }
                terms += ds.len();
                let d = |j: usize| &ds[j][off..off + len];
                let b = |j: usize| &ks[j].0[key_off..key_off + len];
                let a = |j: usize| &ks[j].1[key_off..key_off + len];
                let out = (g + 1 == groups).then_some((&mut *o0, &mut *o1));
                match ds.len() {
                    1 => mac::<1>(q, [d(0)], [b(0)], [a(0)], acc0, acc1, out),
                    2 => mac::<2>(q, [d(0), d(1)], [b(0), b(1)], [a(0), a(1)], acc0, acc1, out),
                    3 => mac::<3>(
                        q,
                        [d(0), d(1), d(2)],
                        [b(0), b(1), b(2)],
                        [a(0), a(1), a(2)],
                        acc0,
                        acc1,
                        out,
                    ),
                    _ => mac::<GROUP>(
                        q,
                        [d(0), d(1), d(2), d(3)],
                        [b(0), b(1), b(2), b(3)],
                        [a(0), a(1), a(2), a(3)],
                        acc0,
                        acc1,
                        out,
                    ),
                }
            }
        });
    (out0, out1)
}

/// Digits per register-accumulated group of the key-switching inner product.
const GROUP: usize = 4;

/// One group of `G` digits of the inner product over a block: `s_c = acc_c[t] + Σ_g d_g[t] ·
/// key_{g,c}[t]` (exact in `u128`) for both key halves `c`, stored back into `acc_c`, or, for
/// the last group (`out` given), reduced modulo `q` into `out`.
#[inline(always)]
fn mac<const G: usize>(
    q: &rhea_math::Modulus,
    d: [&[u64]; G],
    b: [&[u64]; G],
    a: [&[u64]; G],
    acc0: &mut [u128],
    acc1: &mut [u128],
    out: Option<(&mut [u64], &mut [u64])>,
) {
    let sums = |t: usize, s0: u128, s1: u128| {
        let (mut s0, mut s1) = (s0, s1);
        for g in 0..G {
            let x = d[g][t] as u128;
            s0 += x * b[g][t] as u128;
            s1 += x * a[g][t] as u128;
        }
        (s0, s1)
    };
    match out {
        Some((o0, o1)) => {
            for (t, (o0, o1)) in o0.iter_mut().zip(o1.iter_mut()).enumerate() {
                let (s0, s1) = sums(t, acc0[t], acc1[t]);
                *o0 = q.reduce_u128(s0);
                *o1 = q.reduce_u128(s1);
            }
        }
        None => {
            for (t, (x0, x1)) in acc0.iter_mut().zip(acc1.iter_mut()).enumerate() {
                (*x0, *x1) = sums(t, *x0, *x1);
            }
        }
    }
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

    /// The grouped inner product equals the plain sum `Σ_j d_j · key_j mod q` word for word,
    /// for digit counts that leave every group remainder and that need the `u128` fold
    /// (more than 63 digits), with 60-bit primes (the largest products).
    #[test]
    fn inner_product_matches_the_plain_sum() {
        let n = 64;
        let q = generate_ntt_primes(60, n, 3, &[]).unwrap();
        let p = generate_ntt_primes(60, n, 1, &q).unwrap();
        let ring = RnsRing::new(n, &q, &p, 1).unwrap();
        let (full, ell) = (ring.full_shape(), 2);
        let shape = ring.shape_qp(ell);
        let mut seed = 0x0123_4567_89ab_cdefu64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for count in [1usize, 4, 5, 7, 9, 64, 70] {
            let mut random = |sh: &PolyShape| -> Vec<u64> {
                (0..sh.words())
                    .map(|w| next() % ring.modulus(sh, w / n).value())
                    .collect()
            };
            let digits: Vec<Vec<u64>> = (0..count).map(|_| random(&shape)).collect();
            let keys: Vec<(Vec<u64>, Vec<u64>)> =
                (0..count).map(|_| (random(&full), random(&full))).collect();
            let ds: Vec<&[u64]> = digits.iter().map(Vec::as_slice).collect();
            let ks: Vec<(&[u64], &[u64])> = keys.iter().map(|(b, a)| (&b[..], &a[..])).collect();
            let (o0, o1) = inner_product(&ring, ell, &ds, &ks);
            for w in 0..shape.words() {
                let i = w / n;
                let qi = ring.modulus(&shape, i).value() as u128;
                let kw = ring.prime_index(&shape, i) * n + w % n;
                let (mut s0, mut s1) = (0u128, 0u128);
                for (d, (b, a)) in digits.iter().zip(&keys) {
                    s0 = (s0 + d[w] as u128 * b[kw] as u128 % qi) % qi;
                    s1 = (s1 + d[w] as u128 * a[kw] as u128 % qi) % qi;
                }
                assert_eq!(
                    (o0[w] as u128, o1[w] as u128),
                    (s0, s1),
                    "{count} digits, word {w}"
                );
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
