//! Samplers over a seedable ChaCha20 CSPRNG: uniform polynomials (regenerable from a 32-byte
//! seed, position by position, on a GPU), ternary and fixed-weight ternary secrets, and a
//! constant-time discrete Gaussian.
//!
//! # The ChaCha20 layout
//!
//! Everything here draws from ChaCha20 exactly as `rand_chacha::ChaCha20Rng` produces it, and
//! [`chacha20_block`] is the reference block function for device code:
//!
//! - state words (all `u32`, little-endian where bytes are involved):
//!   `w0..w3` = `0x61707865 0x3320646e 0x79622d32 0x6b206574`;
//!   `w4..w11` = the 32-byte key read as eight little-endian `u32`s;
//!   `w12` = low half of the 64-bit block counter, `w13` = its high half;
//!   `w14` = low half of the 64-bit stream id, `w15` = its high half.
//!   (This is RFC 7539's block function with the 32-bit counter widened into the first nonce
//!   word: RFC counter `c` with nonce words `(n0, n1, n2)` is `counter = c | n0 << 32`,
//!   `stream = n1 | n2 << 32`.)
//! - 20 rounds (10 column/diagonal double rounds), then the input state is added word-wise.
//! - The keystream is the sequence of output words, block `0, 1, 2, …`, words `0..16` of each.
//!   A 64-bit draw (`next_u64`) is `word[2t] | word[2t+1] << 32` (low word first).
//!
//! # Uniform polynomials
//!
//! [`uniform_poly_from_seed`] with `(seed, stream)`: coefficient `k = limb·N + i` of the
//! `[limb][N]` buffer uses keystream words `4k .. 4k+4`, i.e. block counter `k / 4` and words
//! `4·(k mod 4) .. 4·(k mod 4) + 4` of that block:
//!
//! ```text
//! lo = w[4(k%4)] | w[4(k%4)+1] << 32,   hi = w[4(k%4)+2] | w[4(k%4)+3] << 32
//! a[k] = ((hi << 64) | lo) mod q_limb          (128-bit value, bias < q / 2^128 < 2^-67)
//! ```
//!
//! # Secrets and errors
//!
//! [`ternary`] and [`gaussian`] consume exactly one `next_u64` per coefficient, in order, so on
//! a fresh `Prng::from_seed(seed)` coefficient `i` depends only on keystream block `i / 8`,
//! words `2(i%8), 2(i%8)+1` (stream 0). Their counter-based twins [`ternary_from_seed`] and
//! [`gaussian_from_seed`] compute coefficient `i` from `(seed, stream, i)` alone, with that
//! layout on any stream:
//!
//! ```text
//! r_i = w[2(i%8)] | w[2(i%8)+1] << 32        (w = chacha20_block(seed, stream, i / 8))
//! ternary:  x_i = ⌊3·r_i / 2^64⌋ − 1                            ∈ {−1, 0, 1}
//! gaussian: x_i = #{t : r_i ≥ T_t} − B   (T = gaussian_cdt(σ, bound), B = ⌊bound⌋)  ∈ [−B, B]
//! ```
//!
//! so on stream 0 they equal [`ternary`] and [`gaussian`] on a fresh `Prng::from_seed(seed)`,
//! and a GPU thread can compute any position (`rhea_cuda::sample` does, bit for bit).
//! [`ternary_hamming`] is sequential (a shuffle). Results are signed `i64`; lift them to RNS
//! residues with [`lift_signed`].

use rand_chacha::ChaCha20Rng;
use rand_core::{CryptoRng, RngCore, SeedableRng};
use rayon::prelude::*;
use std::sync::{Arc, Mutex, PoisonError};
use zeroize::{Zeroize, Zeroizing};

use crate::fft::DoubleDouble;
use crate::{MathError, Modulus, Result};

/// The default standard deviation of error polynomials (HE standard).
pub const DEFAULT_SIGMA: f64 = 3.2;

/// The default tail cut of the discrete Gaussian: `6σ` (samples satisfy `|x| ≤ 19`).
pub const DEFAULT_BOUND: f64 = 6.0 * DEFAULT_SIGMA;

/// The largest supported Gaussian tail cut: the CDT has `2·⌊bound⌋` entries and every sample
/// scans all of them.
pub const MAX_GAUSSIAN_BOUND: f64 = 4096.0;

/// A ChaCha20 CSPRNG (a thin wrapper over `rand_chacha::ChaCha20Rng`, stream 0).
///
/// Reproducible: the same seed gives the same stream on every platform. Implements
/// [`RngCore`] and [`CryptoRng`]. Not `Clone` (a cloned generator repeats its stream) and its
/// `Debug` shows no state.
pub struct Prng {
    inner: ChaCha20Rng,
}

impl std::fmt::Debug for Prng {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Prng { .. }")
    }
}

impl Prng {
    /// A generator seeded from the operating system's random source.
    pub fn from_os() -> Result<Self> {
        let mut seed = Zeroizing::new([0u8; 32]);
        getrandom::fill(seed.as_mut()).map_err(|e| MathError::Entropy(e.to_string()))?;
        Ok(Self::from_seed(*seed))
    }

    /// A generator with the given 32-byte seed (the ChaCha20 key; stream 0, counter 0).
    pub fn from_seed(seed: [u8; 32]) -> Self {
        Self {
            inner: ChaCha20Rng::from_seed(seed),
        }
    }

    /// Draws a fresh 32-byte seed from this generator (for [`uniform_poly_from_seed`] or a child
    /// [`Prng`]).
    pub fn fresh_seed(&mut self) -> [u8; 32] {
        let mut seed = [0u8; 32];
        self.inner.fill_bytes(&mut seed);
        seed
    }
}

impl RngCore for Prng {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        self.inner.next_u32()
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    #[inline]
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        self.inner.fill_bytes(dst)
    }
}

impl CryptoRng for Prng {}

/// The ChaCha20 block function (20 rounds) in the layout of the module docs: key words
/// `w4..w11`, `counter` in `w12 | w13 << 32`, `stream` in `w14 | w15 << 32`. Returns the 16
/// output words (rounds result plus input state). The reference for device implementations.
pub fn chacha20_block(key: &[u8; 32], stream: u64, counter: u64) -> [u32; 16] {
    let mut input = [0u32; 16];
    input[0] = 0x6170_7865;
    input[1] = 0x3320_646e;
    input[2] = 0x7962_2d32;
    input[3] = 0x6b20_6574;
    for (w, chunk) in input[4..12].iter_mut().zip(key.chunks_exact(4)) {
        *w = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    }
    input[12] = counter as u32;
    input[13] = (counter >> 32) as u32;
    input[14] = stream as u32;
    input[15] = (stream >> 32) as u32;
    let mut x = input;
    #[inline(always)]
    fn qr(x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
        x[a] = x[a].wrapping_add(x[b]);
        x[d] = (x[d] ^ x[a]).rotate_left(16);
        x[c] = x[c].wrapping_add(x[d]);
        x[b] = (x[b] ^ x[c]).rotate_left(12);
        x[a] = x[a].wrapping_add(x[b]);
        x[d] = (x[d] ^ x[a]).rotate_left(8);
        x[c] = x[c].wrapping_add(x[d]);
        x[b] = (x[b] ^ x[c]).rotate_left(7);
    }
    for _ in 0..10 {
        qr(&mut x, 0, 4, 8, 12);
        qr(&mut x, 1, 5, 9, 13);
        qr(&mut x, 2, 6, 10, 14);
        qr(&mut x, 3, 7, 11, 15);
        qr(&mut x, 0, 5, 10, 15);
        qr(&mut x, 1, 6, 11, 12);
        qr(&mut x, 2, 7, 8, 13);
        qr(&mut x, 3, 4, 9, 14);
    }
    for (o, i) in x.iter_mut().zip(&input) {
        *o = o.wrapping_add(*i);
    }
    x
}

/// Coefficients per parallel task in [`uniform_poly_from_seed`] (a multiple of 4, so every task
/// starts on a block boundary).
const UNIFORM_CHUNK: usize = 4096;

/// A uniform `[limb][N]` polynomial (`moduli.len() · n` residues) regenerated from a seed:
/// coefficient `k = limb·n + i` is `((w_{2k+1} << 64) | w_{2k}) mod q_limb`, where `w_t` is the
/// `t`-th 64-bit word of the ChaCha20 keystream with key `seed` and stream id `stream` (so it
/// uses block counter `k/4`, words `4(k%4)..4(k%4)+4`; see the module docs for the exact layout).
/// Every coefficient is independent of the others, so a GPU thread can compute any position.
/// Bias below `2^-67` per coefficient. Parallel over chunks of the buffer.
pub fn uniform_poly_from_seed(
    seed: &[u8; 32],
    stream: u64,
    moduli: &[Modulus],
    n: usize,
) -> Vec<u64> {
    if n == 0 || moduli.is_empty() {
        return Vec::new();
    }
    let mut out = vec![0u64; moduli.len() * n];
    out.par_chunks_mut(UNIFORM_CHUNK)
        .enumerate()
        .for_each(|(chunk, slice)| {
            let k0 = chunk * UNIFORM_CHUNK;
            let mut rng = ChaCha20Rng::from_seed(*seed);
            rng.set_stream(stream);
            rng.set_word_pos(4 * k0 as u128);
            for (off, a) in slice.iter_mut().enumerate() {
                let k = k0 + off;
                let lo = rng.next_u64();
                let hi = rng.next_u64();
                *a = moduli[k / n].reduce_u128(((hi as u128) << 64) | lo as u128);
            }
        });
    out
}

/// A uniform `[limb][N]` polynomial: draws a fresh seed from `rng` (32 bytes) and expands it with
/// [`uniform_poly_from_seed`] on stream 0.
pub fn uniform_poly(rng: &mut Prng, moduli: &[Modulus], n: usize) -> Vec<u64> {
    let seed = Zeroizing::new(rng.fresh_seed());
    uniform_poly_from_seed(&seed, 0, moduli, n)
}

/// `n` coefficients uniform in `{-1, 0, 1}`, without branches: coefficient `i` takes the `i`-th
/// `next_u64` draw `r` and is `⌊3r / 2^64⌋ - 1` (bias below `2^-62`).
pub fn ternary(rng: &mut Prng, n: usize) -> Vec<i64> {
    (0..n).map(|_| ternary_of(rng.next_u64())).collect()
}

/// The ternary value `⌊3r / 2^64⌋ − 1 ∈ {−1, 0, 1}` of a uniform `r: u64` (branch-free).
#[inline]
fn ternary_of(r: u64) -> i64 {
    ((r as u128 * 3) >> 64) as i64 - 1
}

/// Coefficients per parallel task in [`ternary_from_seed`] and [`gaussian_from_seed`] (a
/// multiple of 8, so every task starts on a block boundary).
const SIGNED_CHUNK: usize = 4096;

/// `n` signed coefficients, coefficient `i` being `f(r_i)` with `r_i` the `i`-th 64-bit word of
/// the keystream `(seed, stream)` (block `i/8`, words `2(i%8)`, `2(i%8)+1`, low word first).
/// Parallel over chunks of [`SIGNED_CHUNK`] coefficients, each seeking its own generator.
fn signed_from_seed(
    seed: &[u8; 32],
    stream: u64,
    n: usize,
    f: impl Fn(u64) -> i64 + Sync,
) -> Vec<i64> {
    let mut out = vec![0i64; n];
    out.par_chunks_mut(SIGNED_CHUNK)
        .enumerate()
        .for_each(|(chunk, slice)| {
            let mut rng = ChaCha20Rng::from_seed(*seed);
            rng.set_stream(stream);
            // 64-bit word k is 32-bit words 2k, 2k + 1.
            rng.set_word_pos(2 * (chunk * SIGNED_CHUNK) as u128);
            for x in slice.iter_mut() {
                let mut r = rng.next_u64();
                *x = f(r);
                r.zeroize();
            }
        });
    out
}

/// `n` ternary coefficients from `(seed, stream)`, counter-based: coefficient `i` is
/// `⌊3r / 2^64⌋ − 1 ∈ {−1, 0, 1}` with `r` the `i`-th 64-bit word of the ChaCha20 keystream
/// with key `seed` and stream id `stream` (block `i/8`, words `2(i%8)`, `2(i%8)+1`, low word
/// first; see the module docs). On stream 0 this is [`ternary`] on a fresh
/// `Prng::from_seed(seed)`. The host reference of `rhea_cuda`'s `sample_ternary` kernel.
/// Parallel over chunks of the output.
pub fn ternary_from_seed(seed: &[u8; 32], stream: u64, n: usize) -> Vec<i64> {
    signed_from_seed(seed, stream, n, ternary_of)
}

/// An exactly uniform integer in `0..bound` (`bound ≥ 1`): Lemire's multiply-and-reject.
fn uniform_below(rng: &mut Prng, bound: u64) -> u64 {
    let mut m = rng.next_u64() as u128 * bound as u128;
    if (m as u64) < bound {
        let threshold = bound.wrapping_neg() % bound;
        while (m as u64) < threshold {
            m = rng.next_u64() as u128 * bound as u128;
        }
    }
    (m >> 64) as u64
}

/// `n` ternary coefficients with exactly `h` non-zero entries, each `±1` with probability 1/2,
/// at uniformly random positions. Positions come from a partial Fisher–Yates shuffle (`h` draws
/// of Lemire's exact multiply-and-reject method), then the `h` signs from one `next_u64` each
/// (`1 - 2·(r >> 63)`, branch-free). The position table is zeroised. Errors if `h > n`.
pub fn ternary_hamming(rng: &mut Prng, n: usize, h: usize) -> Result<Vec<i64>> {
    if h > n {
        return Err(MathError::InvalidArgument(format!(
            "Hamming weight {h} exceeds the degree {n}"
        )));
    }
    let mut positions: Zeroizing<Vec<usize>> = Zeroizing::new((0..n).collect());
    for i in 0..h {
        let j = i + uniform_below(rng, (n - i) as u64) as usize;
        positions.swap(i, j);
    }
    let mut out = vec![0i64; n];
    for &p in positions.iter().take(h) {
        let sign = 1 - 2 * (rng.next_u64() >> 63) as i64;
        out[p] = sign;
    }
    Ok(out)
}

/// The cumulative distribution table of the discrete Gaussian with parameter `sigma` truncated
/// to `[-B, B]`, `B = ⌊bound⌋`: `2B` entries, entry `t` is `round(2^64 · P(X ≤ t - B))`
/// (saturating at `2^64 - 1`), with `P(X = x) ∝ exp(-x² / (2σ²))`.
///
/// A sample from a uniform `r: u64` is `x = Σ_t [r ≥ T_t] - B`. The table is computed in
/// double-double arithmetic, so every entry is accurate to the last bit of its 64 (up to the
/// final rounding). Errors for `sigma` not finite or `≤ 0`, `bound` not finite, below `sigma`,
/// below 1 or above [`MAX_GAUSSIAN_BOUND`].
pub fn gaussian_cdt(sigma: f64, bound: f64) -> Result<Vec<u64>> {
    if !(sigma.is_finite() && sigma > 0.0) {
        return Err(MathError::InvalidArgument(format!(
            "Gaussian sigma {sigma} must be finite and positive"
        )));
    }
    if !(bound.is_finite() && bound >= 1.0 && bound >= sigma && bound <= MAX_GAUSSIAN_BOUND) {
        return Err(MathError::InvalidArgument(format!(
            "Gaussian bound {bound} must be finite, at least max(1, sigma = {sigma}) and at most \
             {MAX_GAUSSIAN_BOUND}"
        )));
    }
    let b = bound.floor() as i64;
    // 1 / (2σ²) in double-double.
    let two_sigma2 = DoubleDouble::from_f64(sigma).square().mul_f64(2.0);
    let weights: Vec<DoubleDouble> = (-b..=b)
        .map(|x| {
            let x2 = DoubleDouble::from_f64((x * x) as f64);
            (-(x2 / two_sigma2)).exp()
        })
        .collect::<Result<_>>()?;
    let total = weights.iter().fold(DoubleDouble::ZERO, |acc, &w| acc + w);
    let mut acc = DoubleDouble::ZERO;
    let mut table = Vec::with_capacity(2 * b as usize);
    for &w in weights.iter().take(2 * b as usize) {
        acc = acc + w;
        let t = (acc / total).mul_f64(18_446_744_073_709_551_616.0); // · 2^64
        let v = t.round_to_i128().unwrap_or(0).clamp(0, u64::MAX as i128);
        table.push(v as u64);
    }
    Ok(table)
}

/// How many `(sigma, bound)` tables [`gaussian_cdt_shared`] keeps (an application uses one or
/// two; the oldest goes when a new pair would exceed this).
const CDT_CACHE_ENTRIES: usize = 8;

/// The process-wide cache behind [`gaussian_cdt_shared`], keyed by the bits of `(sigma, bound)`.
type CdtCache = Vec<((u64, u64), Arc<[u64]>)>;
static CDT_CACHE: Mutex<CdtCache> = Mutex::new(Vec::new());

/// [`gaussian_cdt`], computed once per `(sigma, bound)` and shared: the double-double
/// exponentials cost tens of µs, which every error polynomial of every encryption would pay
/// again. The same words as [`gaussian_cdt`]; errors as it.
///
/// ```
/// use rhea_math::sampler::{gaussian_cdt, gaussian_cdt_shared, DEFAULT_BOUND, DEFAULT_SIGMA};
///
/// let shared = gaussian_cdt_shared(DEFAULT_SIGMA, DEFAULT_BOUND)?;
/// assert_eq!(&shared[..], &gaussian_cdt(DEFAULT_SIGMA, DEFAULT_BOUND)?[..]);
/// # Ok::<(), rhea_math::MathError>(())
/// ```
pub fn gaussian_cdt_shared(sigma: f64, bound: f64) -> Result<Arc<[u64]>> {
    let key = (sigma.to_bits(), bound.to_bits());
    // The cache holds only finished tables (each push is one step), so a lock poisoned by a
    // panic elsewhere still guards a consistent list.
    let lookup = |cache: &CdtCache| {
        cache
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, t)| Arc::clone(t))
    };
    if let Some(t) = lookup(&CDT_CACHE.lock().unwrap_or_else(PoisonError::into_inner)) {
        return Ok(t);
    }
    // Computed outside the lock; two threads racing on a new pair compute the same words.
    let table: Arc<[u64]> = gaussian_cdt(sigma, bound)?.into();
    let mut cache = CDT_CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(t) = lookup(&cache) {
        return Ok(t);
    }
    if cache.len() == CDT_CACHE_ENTRIES {
        cache.remove(0);
    }
    cache.push((key, Arc::clone(&table)));
    Ok(table)
}

/// `n` samples of the centred discrete Gaussian with parameter `sigma` truncated to
/// `|x| ≤ ⌊bound⌋`, by a constant-time CDT ([`gaussian_cdt`]): coefficient `i` takes the `i`-th
/// `next_u64` draw `r` and scans the whole table with branch-free comparisons (no early exit).
/// Use [`DEFAULT_SIGMA`] and [`DEFAULT_BOUND`] for error polynomials. Errors as
/// [`gaussian_cdt`].
pub fn gaussian(rng: &mut Prng, n: usize, sigma: f64, bound: f64) -> Result<Vec<i64>> {
    let table = gaussian_cdt_shared(sigma, bound)?;
    let b = bound.floor() as i64;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let mut r = rng.next_u64();
        out.push(cdt_sample(r, &table, b));
        r.zeroize();
    }
    Ok(out)
}

/// The CDT sample of a uniform `r`: `#{t : r ≥ T_t} − b`. Scans the whole table with
/// branch-free comparisons (no early exit, no secret-dependent index).
#[inline]
fn cdt_sample(r: u64, table: &[u64], b: i64) -> i64 {
    let mut count = 0u64;
    for &t in table {
        // 1 when r ≥ t: the borrow of r - t (in 128 bits) is 0.
        count += (((r as u128).wrapping_sub(t as u128) >> 127) as u64) ^ 1;
    }
    let x = count as i64 - b;
    count.zeroize();
    x
}

/// `n` samples of the centred discrete Gaussian with parameter `sigma` truncated to
/// `|x| ≤ ⌊bound⌋` from `(seed, stream)`, counter-based: coefficient `i` is the constant-time
/// CDT sample ([`gaussian_cdt`], the same table and comparison as [`gaussian`]) of `r`, the
/// `i`-th 64-bit word of the ChaCha20 keystream with key `seed` and stream id `stream` (block
/// `i/8`, words `2(i%8)`, `2(i%8)+1`, low word first; see the module docs). So coefficient `i`
/// is a pure function of `(seed, stream, i)`, and on stream 0 the result is [`gaussian`] on a
/// fresh `Prng::from_seed(seed)`. The host reference of `rhea_cuda`'s `sample_gaussian`
/// kernel. Parallel over chunks of the output. Errors as [`gaussian_cdt`].
pub fn gaussian_from_seed(
    seed: &[u8; 32],
    stream: u64,
    n: usize,
    sigma: f64,
    bound: f64,
) -> Result<Vec<i64>> {
    let table = gaussian_cdt_shared(sigma, bound)?;
    let b = bound.floor() as i64;
    Ok(signed_from_seed(seed, stream, n, |r| {
        cdt_sample(r, &table, b)
    }))
}

/// Lifts one signed coefficient into `[0, q)` without a data-dependent branch on its sign.
#[inline]
fn lift_one(c: i64, modulus: &Modulus) -> u64 {
    let q = modulus.value();
    let mag = modulus.reduce_u128(c.unsigned_abs() as u128);
    let neg_mask = (c >> 63) as u64; // all ones when c < 0
    let negated = q - mag; // in (0, q]
    let v = mag ^ ((mag ^ negated) & neg_mask);
    // v = q exactly when c < 0 and mag = 0: map it to 0.
    let is_q = (v ^ q).wrapping_sub(1) >> 63; // 1 iff v == q (v ^ q < 2^62)
    v - (q & is_q.wrapping_neg())
}

/// Lifts signed coefficients (a secret, an error) to `[limb][N]` residues, `N = coeffs.len()`:
/// entry `limb·N + i` is `coeffs[i] mod q_limb` in `[0, q)`. Branch-free in the sign; parallel
/// over limbs.
pub fn lift_signed(coeffs: &[i64], moduli: &[Modulus]) -> Vec<u64> {
    let n = coeffs.len();
    if n == 0 || moduli.is_empty() {
        return Vec::new();
    }
    let mut out = vec![0u64; moduli.len() * n];
    out.par_chunks_mut(n)
        .zip(moduli.par_iter())
        .for_each(|(row, q)| {
            for (o, &c) in row.iter_mut().zip(coeffs) {
                *o = lift_one(c, q);
            }
        });
    out
}
