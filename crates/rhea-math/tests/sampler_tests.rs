//! Tests of the samplers: the ChaCha20 layout (RFC 7539 vector, agreement with `rand_chacha`),
//! exact re-derivation of seeded uniform polynomials, reproducibility, and distribution
//! statistics with bounds of at least 5 standard deviations.

use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use rhea_math::sampler::{
    chacha20_block, gaussian, gaussian_cdt, gaussian_cdt_shared, gaussian_from_seed, lift_signed,
    ternary, ternary_from_seed, ternary_hamming, uniform_poly, uniform_poly_from_seed, Prng,
    DEFAULT_BOUND, DEFAULT_SIGMA, MAX_GAUSSIAN_BOUND,
};
use rhea_math::{MathError, Modulus};

fn seed(byte: u8) -> [u8; 32] {
    let mut s = [0u8; 32];
    for (i, b) in s.iter_mut().enumerate() {
        *b = byte.wrapping_mul(31).wrapping_add(i as u8);
    }
    s
}

fn moduli(values: &[u64]) -> Vec<Modulus> {
    values.iter().map(|&q| Modulus::new(q).unwrap()).collect()
}

const Q61: u64 = (1 << 61) - 1;
const Q60: u64 = 1_152_921_504_606_830_593; // 2^60 - 16383
const Q50: u64 = 1_125_899_906_826_241; // 2^50 - 16383

#[test]
fn chacha20_block_matches_rfc7539_2_3_2() {
    let key: [u8; 32] = std::array::from_fn(|i| i as u8);
    // RFC: counter 1, nonce 00:00:00:09:00:00:00:4a:00:00:00:00 → words 1, 0x09000000,
    // 0x4a000000, 0; in our layout counter = w12 | w13 << 32, stream = w14 | w15 << 32.
    let out = chacha20_block(&key, 0x4a00_0000, 0x0900_0000_0000_0001);
    let expected: [u32; 16] = [
        0xe4e7f110, 0x15593bd1, 0x1fdd0f50, 0xc47120a3, 0xc7f4d1c7, 0x0368c033, 0x9aaa2204,
        0x4e6cd4c3, 0x466482d2, 0x09aa9f07, 0x05d7c214, 0xa2028bd9, 0xd19c12b5, 0xb94e16de,
        0xe883d0cb, 0x4e3c50a2,
    ];
    assert_eq!(out, expected);
}

#[test]
fn chacha20_block_is_the_rand_chacha_keystream() {
    for (s, stream) in [(1u8, 0u64), (2, 7), (3, u64::MAX - 1)] {
        let key = seed(s);
        let mut rng = ChaCha20Rng::from_seed(key);
        rng.set_stream(stream);
        // Blocks 0..9 (crosses rand_chacha's 4-block buffers).
        for counter in 0..9u64 {
            let block = chacha20_block(&key, stream, counter);
            for (w, &expected) in block.iter().enumerate() {
                assert_eq!(
                    rng.next_u32(),
                    expected,
                    "stream {stream} block {counter} word {w}"
                );
            }
        }
        // A far block via word positions.
        let counter = 1u64 << 40;
        rng.set_word_pos(16 * counter as u128);
        let block = chacha20_block(&key, stream, counter);
        for &expected in &block {
            assert_eq!(rng.next_u32(), expected);
        }
    }
    // Prng::from_seed is stream 0 from counter 0, 64-bit draws low word first.
    let key = seed(9);
    let mut prng = Prng::from_seed(key);
    let b0 = chacha20_block(&key, 0, 0);
    for t in 0..8 {
        let expected = b0[2 * t] as u64 | (b0[2 * t + 1] as u64) << 32;
        assert_eq!(prng.next_u64(), expected);
    }
}

/// Direct re-derivation of the documented mapping from the block function alone.
fn uniform_reference(seed: &[u8; 32], stream: u64, moduli: &[Modulus], n: usize) -> Vec<u64> {
    let mut out = Vec::with_capacity(moduli.len() * n);
    for k in 0..moduli.len() * n {
        let block = chacha20_block(seed, stream, (k / 4) as u64);
        let w = 4 * (k % 4);
        let lo = block[w] as u128 | (block[w + 1] as u128) << 32;
        let hi = block[w + 2] as u128 | (block[w + 3] as u128) << 32;
        let x = (hi << 64) | lo;
        let q = moduli[k / n].value() as u128;
        out.push((x % q) as u64);
    }
    out
}

#[test]
fn uniform_poly_from_seed_matches_block_function() {
    // Shapes chosen so that parallel chunks (4096 coefficients) start mid-limb and limbs are
    // not multiples of 4.
    let shapes: [(Vec<u64>, usize); 4] = [
        (vec![Q61], 1),
        (vec![Q60, Q50, 17], 8),
        (vec![Q61, Q60, Q50, 3, 1 << 40], 1000),
        (vec![Q60, Q50], 4096),
    ];
    for (i, (qs, n)) in shapes.iter().enumerate() {
        let ms = moduli(qs);
        for stream in [0u64, 5] {
            let s = seed(i as u8 + 1);
            let got = uniform_poly_from_seed(&s, stream, &ms, *n);
            let want = uniform_reference(&s, stream, &ms, *n);
            assert_eq!(got, want, "shape {i} stream {stream}");
        }
    }
    assert!(uniform_poly_from_seed(&seed(1), 0, &moduli(&[Q61]), 0).is_empty());
    assert!(uniform_poly_from_seed(&seed(1), 0, &[], 16).is_empty());
}

#[test]
fn uniform_poly_reproducibility_and_streams() {
    let ms = moduli(&[Q61, Q60, Q50]);
    let n = 1024;
    let a = uniform_poly_from_seed(&seed(4), 0, &ms, n);
    assert_eq!(a, uniform_poly_from_seed(&seed(4), 0, &ms, n));
    let b = uniform_poly_from_seed(&seed(4), 1, &ms, n);
    let c = uniform_poly_from_seed(&seed(5), 0, &ms, n);
    let same_ab = a.iter().zip(&b).filter(|(x, y)| x == y).count();
    let same_ac = a.iter().zip(&c).filter(|(x, y)| x == y).count();
    assert!(same_ab < 4 && same_ac < 4, "streams/seeds must differ");

    // uniform_poly = fresh seed from the generator, then the seeded expansion on stream 0.
    let mut r1 = Prng::from_seed(seed(6));
    let mut r2 = Prng::from_seed(seed(6));
    let u = uniform_poly(&mut r1, &ms, n);
    let s = r2.fresh_seed();
    assert_eq!(u, uniform_poly_from_seed(&s, 0, &ms, n));
    // The generator advanced: the next draw differs.
    assert_ne!(u, uniform_poly(&mut r1, &ms, n));
}

#[test]
fn uniform_statistics() {
    let qs = [Q61, Q50, 12_289, 3];
    let ms = moduli(&qs);
    let n = 1 << 13;
    let a = uniform_poly_from_seed(&seed(7), 3, &ms, n);
    for (l, &q) in qs.iter().enumerate() {
        let row = &a[l * n..(l + 1) * n];
        assert!(
            row.iter().all(|&x| x < q),
            "residue out of range for q = {q}"
        );
        // Mean of x ≈ (q-1)/2, i.e. mean/q ≈ 1/2 - 1/(2q) (std of mean/q ≈ 0.0032; bound 0.02).
        let mean = row.iter().map(|&x| x as f64 / q as f64).sum::<f64>() / n as f64;
        let expect = 0.5 - 0.5 / q as f64;
        assert!((mean - expect).abs() < 0.02, "q = {q}: mean/q = {mean}");
        // 8 equal buckets (or the residues themselves when q is tiny): each ≈ n/8.
        let buckets = 8.min(q as usize);
        let mut hist = vec![0usize; buckets];
        for &x in row {
            hist[(x as u128 * buckets as u128 / q as u128) as usize] += 1;
        }
        let expect = n as f64 / buckets as f64;
        for (b, &h) in hist.iter().enumerate() {
            let dev = (h as f64 - expect).abs() / expect.sqrt();
            assert!(dev < 6.0, "q = {q} bucket {b}: {h} vs {expect}");
        }
    }
}

#[test]
fn prng_seeding() {
    let mut a = Prng::from_seed(seed(1));
    let mut b = Prng::from_seed(seed(1));
    let xa: Vec<u64> = (0..40).map(|_| a.next_u64()).collect();
    let xb: Vec<u64> = (0..40).map(|_| b.next_u64()).collect();
    assert_eq!(xa, xb);
    let s1 = a.fresh_seed();
    let s2 = a.fresh_seed();
    assert_ne!(s1, s2);
    assert_eq!(s1, b.fresh_seed());
    let mut o1 = Prng::from_os().unwrap();
    let mut o2 = Prng::from_os().unwrap();
    assert_ne!(o1.fresh_seed(), o2.fresh_seed());
    assert_eq!(format!("{o1:?}"), "Prng { .. }");
}

#[test]
fn ternary_distribution() {
    let n = 60_000;
    let v = ternary(&mut Prng::from_seed(seed(2)), n);
    assert_eq!(v, ternary(&mut Prng::from_seed(seed(2)), n));
    assert_ne!(v, ternary(&mut Prng::from_seed(seed(3)), n));
    let mut counts = [0usize; 3];
    for &x in &v {
        assert!((-1..=1).contains(&x));
        counts[(x + 1) as usize] += 1;
    }
    // Each frequency ≈ 1/3 (std ≈ 0.0019; bound 0.012).
    for &c in &counts {
        let f = c as f64 / n as f64;
        assert!((f - 1.0 / 3.0).abs() < 0.012, "frequencies {counts:?}");
    }
    // Consecutive coefficients are not correlated: the 9 pairs are ≈ 1/9 each.
    let mut pairs = [0usize; 9];
    for w in v.chunks_exact(2) {
        pairs[((w[0] + 1) * 3 + w[1] + 1) as usize] += 1;
    }
    let expect = (n / 2) as f64 / 9.0;
    for &p in &pairs {
        assert!(
            (p as f64 - expect).abs() < 6.0 * expect.sqrt(),
            "pairs {pairs:?}"
        );
    }
    assert!(ternary(&mut Prng::from_seed(seed(2)), 0).is_empty());
}

#[test]
fn ternary_hamming_weight_and_signs() {
    let mut rng = Prng::from_seed(seed(8));
    for (n, h) in [
        (1, 0),
        (1, 1),
        (16, 16),
        (1024, 64),
        (4096, 192),
        (4096, 4096),
    ] {
        let v = ternary_hamming(&mut rng, n, h).unwrap();
        assert_eq!(v.len(), n);
        assert!(v.iter().all(|x| (-1..=1).contains(x)));
        assert_eq!(v.iter().filter(|&&x| x != 0).count(), h, "n = {n}, h = {h}");
    }
    // Reproducible.
    let a = ternary_hamming(&mut Prng::from_seed(seed(9)), 2048, 100).unwrap();
    assert_eq!(
        a,
        ternary_hamming(&mut Prng::from_seed(seed(9)), 2048, 100).unwrap()
    );

    // Signs balanced: 40 000 non-zero entries, +1 count within 5σ (σ = 100).
    let mut plus = 0usize;
    let mut total = 0usize;
    for _ in 0..20 {
        let v = ternary_hamming(&mut rng, 4096, 2000).unwrap();
        plus += v.iter().filter(|&&x| x == 1).count();
        total += v.iter().filter(|&&x| x != 0).count();
    }
    assert_eq!(total, 40_000);
    assert!((plus as f64 - 20_000.0).abs() < 500.0, "plus = {plus}");

    // Positions uniform: n = 64, h = 8, 8000 draws → each position hit ≈ 1000 times (σ ≈ 29).
    let mut hits = [0usize; 64];
    for _ in 0..8000 {
        let v = ternary_hamming(&mut rng, 64, 8).unwrap();
        for (i, &x) in v.iter().enumerate() {
            hits[i] += (x != 0) as usize;
        }
    }
    assert!(hits.iter().all(|&c| (850..=1150).contains(&c)), "{hits:?}");

    assert!(matches!(
        ternary_hamming(&mut rng, 8, 9),
        Err(MathError::InvalidArgument(_))
    ));
}

fn mean_var(v: &[i64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<i64>() as f64 / n;
    let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
    (mean, var)
}

#[test]
fn gaussian_statistics() {
    let n = 1 << 16;
    let mut rng = Prng::from_seed(seed(10));
    let v = gaussian(&mut rng, n, DEFAULT_SIGMA, DEFAULT_BOUND).unwrap();
    let (mean, var) = mean_var(&v);
    // std of the mean ≈ 0.0125; relative std of the variance ≈ 0.55%.
    assert!(mean.abs() < 0.07, "mean {mean}");
    let s2 = DEFAULT_SIGMA * DEFAULT_SIGMA;
    assert!((var / s2 - 1.0).abs() < 0.03, "variance {var} vs {s2}");
    assert!(v.iter().all(|x| x.abs() <= 19));
    // P(0) = 1/Σρ ≈ 0.12467 (std of the frequency ≈ 0.0013).
    let zeros = v.iter().filter(|&&x| x == 0).count() as f64 / n as f64;
    assert!((zeros - 0.124_67).abs() < 0.007, "P(0) = {zeros}");
    // Symmetric: P(x > 0) ≈ P(x < 0).
    let pos = v.iter().filter(|&&x| x > 0).count() as f64;
    let neg = v.iter().filter(|&&x| x < 0).count() as f64;
    assert!(
        (pos - neg).abs() < 6.0 * (pos + neg).sqrt(),
        "{pos} vs {neg}"
    );

    // Other parameters: a wide and a narrow one, with a tight truncation.
    for (sigma, bound) in [(10.0, 60.0), (1.0, 6.0), (3.2, 4.0)] {
        let v = gaussian(&mut rng, 1 << 14, sigma, bound).unwrap();
        let (mean, var) = mean_var(&v);
        assert!(v.iter().all(|x| x.abs() as f64 <= bound));
        assert!(
            mean.abs() < 6.0 * sigma / 128.0,
            "sigma {sigma}: mean {mean}"
        );
        // Exact variance of the truncated distribution.
        let b = bound.floor() as i64;
        let w: Vec<f64> = (-b..=b)
            .map(|x| (-(x * x) as f64 / (2.0 * sigma * sigma)).exp())
            .collect();
        let total: f64 = w.iter().sum();
        let exact: f64 = (-b..=b)
            .zip(&w)
            .map(|(x, p)| (x * x) as f64 * p / total)
            .sum();
        assert!(
            (var / exact - 1.0).abs() < 0.06,
            "sigma {sigma}: {var} vs {exact}"
        );
    }
    // A bound of 4 at σ = 3.2 must actually hit ±4.
    let v = gaussian(&mut rng, 1 << 12, 3.2, 4.0).unwrap();
    assert!(v.contains(&4) && v.contains(&-4));
}

#[test]
fn gaussian_reproducible_and_errors() {
    let a = gaussian(&mut Prng::from_seed(seed(11)), 4096, 3.2, 19.2).unwrap();
    assert_eq!(
        a,
        gaussian(&mut Prng::from_seed(seed(11)), 4096, 3.2, 19.2).unwrap()
    );
    assert_ne!(
        a,
        gaussian(&mut Prng::from_seed(seed(12)), 4096, 3.2, 19.2).unwrap()
    );
    let mut rng = Prng::from_seed(seed(13));
    for (sigma, bound) in [
        (0.0, 6.0),
        (-1.0, 6.0),
        (f64::NAN, 6.0),
        (f64::INFINITY, 6.0),
        (3.2, f64::NAN),
        (3.2, 2.0),
        (0.5, 0.9),
        (3.2, MAX_GAUSSIAN_BOUND + 1.0),
        (3.2, f64::INFINITY),
    ] {
        assert!(
            matches!(
                gaussian(&mut rng, 8, sigma, bound),
                Err(MathError::InvalidArgument(_))
            ),
            "sigma {sigma}, bound {bound} must be refused"
        );
    }
}

/// The shared tables are `gaussian_cdt`'s words for every pair, after the cache has cycled
/// (more pairs than it keeps), and bad pairs are refused as `gaussian_cdt` refuses them.
#[test]
fn shared_gaussian_cdt_is_the_computed_table() {
    let pairs: Vec<(f64, f64)> = (0..12)
        .map(|i| (1.5 + 0.37 * i as f64, 9.0 + 2.0 * i as f64))
        .chain([(DEFAULT_SIGMA, DEFAULT_BOUND)])
        .collect();
    for round in 0..2 {
        for &(sigma, bound) in &pairs {
            let shared = gaussian_cdt_shared(sigma, bound).unwrap();
            let fresh = gaussian_cdt(sigma, bound).unwrap();
            assert_eq!(&shared[..], &fresh[..], "round {round}, sigma {sigma}");
        }
    }
    assert!(gaussian_cdt_shared(-1.0, DEFAULT_BOUND).is_err());
    assert!(gaussian_cdt_shared(DEFAULT_SIGMA, f64::NAN).is_err());
    // A refused pair leaves nothing behind: the next call refuses it again.
    assert!(gaussian_cdt_shared(-1.0, DEFAULT_BOUND).is_err());
}

#[test]
fn gaussian_cdt_is_accurate_to_64_bits() {
    for (sigma, bound) in [(DEFAULT_SIGMA, DEFAULT_BOUND), (1.5, 9.0), (8.0, 48.0)] {
        let t = gaussian_cdt(sigma, bound).unwrap();
        let b = bound.floor() as usize;
        assert_eq!(t.len(), 2 * b);
        assert!(t.windows(2).all(|w| w[0] <= w[1]));
        // Symmetry P(X ≤ -k) = 1 - P(X ≤ k - 1): T_t + T_{2B-1-t} = 2^64 up to two roundings.
        // An f64-computed table misses this by ~2^10 in the middle entries.
        for i in 0..b {
            let sum = t[i] as u128 + t[2 * b - 1 - i] as u128;
            let diff = sum as i128 - (1i128 << 64);
            assert!(diff.abs() <= 2, "sigma {sigma} entry {i}: off by {diff}");
        }
        // Against an f64 computation (53 bits): agreement to 2^-50.
        let w: Vec<f64> = (-(b as i64)..=b as i64)
            .map(|x| (-(x * x) as f64 / (2.0 * sigma * sigma)).exp())
            .collect();
        let total: f64 = w.iter().sum();
        let mut acc = 0.0;
        for (i, &entry) in t.iter().enumerate() {
            acc += w[i] / total;
            let approx = acc * 2f64.powi(64);
            assert!(
                (entry as f64 - approx).abs() <= 2f64.powi(14).max(approx * 1e-14),
                "entry {i}: {entry} vs {approx}"
            );
        }
    }
}

#[test]
fn lift_signed_matches_reduce_i64() {
    let qs = [Q61, Q60, Q50, 12_289, 3, 2];
    let ms = moduli(&qs);
    let mut rng = Prng::from_seed(seed(14));
    for n in [1usize, 7, 512] {
        let mut coeffs: Vec<i64> = (0..n)
            .map(|i| match i % 4 {
                0 => rng.next_u64() as i64,                      // anything
                1 => (rng.next_u64() % 41) as i64 - 20,          // small, both signs
                2 => -((rng.next_u64() >> 2) as i64),            // large negative
                _ => (rng.next_u64() % Q61) as i64 - Q61 as i64, // near -q
            })
            .collect();
        if n >= 7 {
            coeffs[..6].copy_from_slice(&[i64::MIN, i64::MAX, 0, -1, -(Q61 as i64), Q61 as i64]);
        }
        let lifted = lift_signed(&coeffs, &ms);
        assert_eq!(lifted.len(), n * qs.len());
        for (l, m) in ms.iter().enumerate() {
            for (i, &c) in coeffs.iter().enumerate() {
                assert_eq!(
                    lifted[l * n + i],
                    m.reduce_i64(c),
                    "q = {} c = {c}",
                    m.value()
                );
            }
        }
    }
    assert!(lift_signed(&[], &ms).is_empty());
    assert!(lift_signed(&[1, 2], &[]).is_empty());
}

/// The `i`-th 64-bit word of the keystream `(seed, stream)`, straight from the block function.
fn word_at(seed: &[u8; 32], stream: u64, i: usize) -> u64 {
    let w = chacha20_block(seed, stream, (i / 8) as u64);
    let s = i % 8;
    w[2 * s] as u64 | (w[2 * s + 1] as u64) << 32
}

/// Lengths that straddle ChaCha blocks (8 words) and the parallel chunks (4096 coefficients).
const COUNTER_LENGTHS: [usize; 9] = [0, 1, 7, 8, 9, 4095, 4096, 4097, 12_345];

#[test]
fn counter_samplers_equal_the_stream_samplers_on_stream_0() {
    let mut seeds = Prng::from_seed(seed(20));
    for n in COUNTER_LENGTHS {
        let s = seeds.fresh_seed();
        assert_eq!(
            ternary_from_seed(&s, 0, n),
            ternary(&mut Prng::from_seed(s), n),
            "ternary n = {n}"
        );
        for (sigma, bound) in [(DEFAULT_SIGMA, DEFAULT_BOUND), (1.0, 6.0), (10.0, 60.0)] {
            assert_eq!(
                gaussian_from_seed(&s, 0, n, sigma, bound).unwrap(),
                gaussian(&mut Prng::from_seed(s), n, sigma, bound).unwrap(),
                "gaussian n = {n} sigma = {sigma}"
            );
        }
    }
}

/// Coefficient `i` is a function of `(seed, stream, i)` alone: recomputed from the block
/// function and an independent (binary-search) reading of the CDT, on streams other than 0.
#[test]
fn counter_samplers_are_position_based() {
    let mut seeds = Prng::from_seed(seed(21));
    let table = gaussian_cdt(DEFAULT_SIGMA, DEFAULT_BOUND).unwrap();
    let b = DEFAULT_BOUND.floor() as i64;
    for (n, stream) in [
        (9usize, 1u64),
        (4097, 5),
        (9000, u64::MAX),
        (20_000, 1 << 40),
    ] {
        let s = seeds.fresh_seed();
        let t = ternary_from_seed(&s, stream, n);
        let g = gaussian_from_seed(&s, stream, n, DEFAULT_SIGMA, DEFAULT_BOUND).unwrap();
        assert_eq!((t.len(), g.len()), (n, n));
        for i in 0..n {
            let r = word_at(&s, stream, i);
            assert_eq!(t[i], ((r as u128 * 3) >> 64) as i64 - 1, "ternary {i}");
            let want = table.partition_point(|&e| e <= r) as i64 - b;
            assert_eq!(g[i], want, "gaussian {i} of stream {stream}");
        }
        // A prefix is the same sampler on fewer coefficients.
        assert_eq!(ternary_from_seed(&s, stream, n / 2), t[..n / 2]);
        assert_eq!(
            gaussian_from_seed(&s, stream, n / 3, DEFAULT_SIGMA, DEFAULT_BOUND).unwrap(),
            g[..n / 3]
        );
        // Other streams and seeds give other samples.
        assert_ne!(ternary_from_seed(&s, stream ^ 1, n), t);
        assert_ne!(
            gaussian_from_seed(&s, stream ^ 1, n, DEFAULT_SIGMA, DEFAULT_BOUND).unwrap(),
            g
        );
        let other = seeds.fresh_seed();
        assert_ne!(
            gaussian_from_seed(&other, stream, n, DEFAULT_SIGMA, DEFAULT_BOUND).unwrap(),
            g
        );
    }
}

#[test]
fn gaussian_from_seed_statistics() {
    let mut seeds = Prng::from_seed(seed(22));
    let n = 1 << 16;
    // Default parameters on a few random seeds and streams.
    for stream in [0u64, 3, u64::MAX] {
        let s = seeds.fresh_seed();
        let v = gaussian_from_seed(&s, stream, n, DEFAULT_SIGMA, DEFAULT_BOUND).unwrap();
        let (mean, var) = mean_var(&v);
        // std of the mean ≈ 0.0125; relative std of the variance ≈ 0.55%.
        assert!(mean.abs() < 0.07, "stream {stream}: mean {mean}");
        let s2 = DEFAULT_SIGMA * DEFAULT_SIGMA;
        assert!(
            (var / s2 - 1.0).abs() < 0.03,
            "stream {stream}: variance {var} vs {s2}"
        );
        assert!(v.iter().all(|x| x.abs() <= 19));
        let zeros = v.iter().filter(|&&x| x == 0).count() as f64 / n as f64;
        assert!((zeros - 0.124_67).abs() < 0.007, "P(0) = {zeros}");
        let pos = v.iter().filter(|&&x| x > 0).count() as f64;
        let neg = v.iter().filter(|&&x| x < 0).count() as f64;
        assert!(
            (pos - neg).abs() < 6.0 * (pos + neg).sqrt(),
            "{pos} vs {neg}"
        );
    }
    // Other parameters, against the exact variance of the truncated distribution.
    for (sigma, bound) in [(10.0, 60.0), (1.0, 6.0), (3.2, 4.0), (2.5, 7.9)] {
        let s = seeds.fresh_seed();
        let v = gaussian_from_seed(&s, 9, 1 << 14, sigma, bound).unwrap();
        let (mean, var) = mean_var(&v);
        let b = bound.floor() as i64;
        assert!(v.iter().all(|x| x.abs() <= b), "sigma {sigma}: tail cut");
        assert!(
            mean.abs() < 6.0 * sigma / 128.0,
            "sigma {sigma}: mean {mean}"
        );
        let w: Vec<f64> = (-b..=b)
            .map(|x| (-(x * x) as f64 / (2.0 * sigma * sigma)).exp())
            .collect();
        let total: f64 = w.iter().sum();
        let exact: f64 = (-b..=b)
            .zip(&w)
            .map(|(x, p)| (x * x) as f64 * p / total)
            .sum();
        assert!(
            (var / exact - 1.0).abs() < 0.06,
            "sigma {sigma}: {var} vs {exact}"
        );
    }
    // A tight cut is reached on both sides.
    let v = gaussian_from_seed(&seeds.fresh_seed(), 1, 1 << 12, 3.2, 4.0).unwrap();
    assert!(v.contains(&4) && v.contains(&-4));
}

#[test]
fn ternary_from_seed_distribution() {
    let mut seeds = Prng::from_seed(seed(23));
    let n = 60_000;
    for stream in [1u64, 1 << 63] {
        let v = ternary_from_seed(&seeds.fresh_seed(), stream, n);
        let mut counts = [0usize; 3];
        for &x in &v {
            assert!((-1..=1).contains(&x));
            counts[(x + 1) as usize] += 1;
        }
        for &c in &counts {
            let f = c as f64 / n as f64;
            assert!((f - 1.0 / 3.0).abs() < 0.012, "frequencies {counts:?}");
        }
    }
}

#[test]
fn gaussian_from_seed_errors() {
    let s = seed(24);
    for (sigma, bound) in [
        (0.0, 6.0),
        (-1.0, 6.0),
        (f64::NAN, 6.0),
        (3.2, f64::NAN),
        (3.2, 2.0),
        (3.2, MAX_GAUSSIAN_BOUND + 1.0),
        (3.2, f64::INFINITY),
    ] {
        assert!(
            matches!(
                gaussian_from_seed(&s, 0, 8, sigma, bound),
                Err(MathError::InvalidArgument(_))
            ),
            "sigma {sigma}, bound {bound} must be refused"
        );
    }
}
