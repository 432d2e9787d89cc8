//! The centred base conversion, centred ModUp kernels against their
//! `rhea_math::bconv` twins (`convert_centered`, `ModUp::apply_centered`,
//! `ModDown::apply_rounded`), word for word, on random non-zero inputs plus values next to
//! `±Q/2` (where the `f64` correction is closest to a tie).
//!
//! The GPU tests and the NVRTC test are `#[ignore]`d (a machine without them lists them as
//! ignored); `--include-ignored` runs them, and then a missing GPU or NVRTC is a failure.

mod common;

use common::{
    assert_words, basis, cubin_has, per_poly, primes, random_rns, require_gpu, require_nvrtc, rng,
};
use rand::Rng;
use rhea_cuda::bconv::{BconvTile, DeviceBaseConverter, DeviceModUp, BCONV};
use rhea_cuda::{registry, CudaError};
use rhea_math::bconv::{BaseConverter, ModUp};
use rhea_math::Modulus;

const DEGREE_MAX: usize = 1 << 16;

#[test]
#[ignore = "needs NVRTC (run with --include-ignored; scripts/check-kernels.sh and scripts/gpu-run.sh do)"]
fn centered_kernels_compile() {
    require_nvrtc("centered_kernels_compile");
    let cubin = registry::compile(&BCONV, "sm_90").unwrap_or_else(|e| panic!("{e}"));
    for (j, c) in [(4, 1), (8, 1), (8, 2), (7, 2), (6, 2), (5, 2)] {
        for narrow in ["", "_narrow"] {
            for kind in ["matmul", "multi"] {
                let f = format!("bconv_{kind}_j{j}_c{c}{narrow}_centered");
                assert!(cubin_has(&cubin, &f), "{f} missing from the CUBIN");
            }
        }
    }
}

/// Disjoint prime lists of the given sizes (bits per list).
fn disjoint(lists: &[(u32, usize)]) -> Vec<Vec<Modulus>> {
    let mut out: Vec<Vec<Modulus>> = Vec::new();
    for &(bits, count) in lists {
        let used: usize = out
            .iter()
            .flatten()
            .filter(|m| 64 - m.value().leading_zeros() == bits)
            .count();
        let all = primes(bits, used + count, DEGREE_MAX);
        out.push(all[used..].to_vec());
    }
    out
}

/// Random non-zero residues, with the first coefficients set next to `±Q/2` over `moduli`:
/// `(Q - 1)/2 + d ≡ (q_i - 1)/2 + d (mod q_i)` for small `d` (odd `Q`).
fn random_with_half(rng: &mut impl Rng, moduli: &[Modulus], n: usize, polys: usize) -> Vec<u64> {
    let mut x = random_rns(rng, moduli, n, polys);
    let special = n.min(64);
    for p in 0..polys {
        for (i, m) in moduli.iter().enumerate() {
            let q = m.value();
            for k in 0..special {
                let d = k as i64 - 32;
                let v = ((q - 1) / 2) as i64 + d;
                x[(p * moduli.len() + i) * n + k] = v.rem_euclid(q as i64) as u64;
            }
        }
    }
    x
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn convert_centered_matches_host() {
    let dev = require_gpu("convert_centered_matches_host");
    let mut rng = rng("convert_centered_matches_host");
    // (log N, L, K, bits from, bits to, polys)
    let cases = [
        (12, 1, 3, 61, 61, 1),
        (12, 3, 8, 30, 60, 2),
        (12, 8, 3, 60, 30, 1),
        (12, 70, 5, 50, 61, 1),  // L > 63: folded accumulators, long f64 sum
        (12, 12, 70, 30, 50, 1), // K > 64: two launches
        (16, 24, 7, 50, 60, 1),
        (16, 8, 30, 30, 30, 2),
        (12, 13, 9, 61, 61, 1), // 13-16 inputs: the `_l16` register-input kernels
        (14, 16, 20, 40, 60, 2),
    ];
    for (log_n, l, k, bf, bt, polys) in cases {
        let n = 1usize << log_n;
        let lists = disjoint(&[(bf, l), (bt, k)]);
        let (from, to) = (&lists[0], &lists[1]);
        let conv = BaseConverter::new(&basis(from), &basis(to)).unwrap();
        let x = random_with_half(&mut rng, from, n, polys);
        let want = per_poly(&x, l, k, n, |i, o| conv.convert_centered(i, o, n).unwrap());
        let d = DeviceBaseConverter::new(&dev, &conv).unwrap();
        let dx = dev.upload(&x).unwrap();
        let mut dy = dev.alloc(polys * k * n).unwrap();
        let case = format!("N=2^{log_n} L={l} K={k} ({bf}->{bt} bits) polys={polys}");
        d.convert_centered(&mut dy, &dx, n).unwrap();
        assert_words(&dev.download(&dy).unwrap(), &want, &format!("{case} auto"));
        for tile in BconvTile::ALL {
            dy.fill_zero().unwrap();
            d.convert_centered_with(&mut dy, &dx, n, false, tile)
                .unwrap();
            assert_words(
                &dev.download(&dy).unwrap(),
                &want,
                &format!("{case} {tile:?}"),
            );
        }
        // The scaled path: t_i = x_i · q̂_i^{-1} computed first (on the host).
        let inv = conv.q_hat_inv_mod_q();
        let t: Vec<u64> = x
            .chunks(n)
            .enumerate()
            .flat_map(|(r, row)| {
                let (q, w) = (&from[r % l], inv[r % l]);
                row.iter().map(move |&v| q.mul(v, w))
            })
            .collect();
        let dt = dev.upload(&t).unwrap();
        dy.fill_zero().unwrap();
        d.convert_centered_with(&mut dy, &dt, n, true, BconvTile::Auto)
            .unwrap();
        assert_words(
            &dev.download(&dy).unwrap(),
            &want,
            &format!("{case} scaled"),
        );
        // It is not the approximate conversion (the correction is applied).
        let approx = per_poly(&x, l, k, n, |i, o| conv.convert_approx(i, o, n).unwrap());
        assert_ne!(approx, want, "{case}: no correction applied");
        println!("ok: convert_centered {case}");
    }
}

/// The register-input tiles reduce with a Montgomery step whose bound is the sum of the input
/// moduli (< 2^65): 12 and 16 inputs of 61-bit primes (1.5 × 2^64, just below 2^65) with every
/// t_i = q_i − 1 or q_i − 2,
/// the largest sums and corrections, into 61- and 30-bit outputs, every tile.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn largest_sums_match_the_host() {
    let dev = require_gpu("largest_sums_match_the_host");
    let n = 1usize << 12;
    // 12 inputs: the usual register-input kernels; 16: the `_l16` ones at their bound
    // (16 × 61-bit sums < 2^65).
    for (l, bt, k) in [
        (12usize, 61u32, 5usize),
        (12, 30, 3),
        (16, 61, 4),
        (16, 30, 3),
    ] {
        let lists = disjoint(&[(61, l), (bt, k)]);
        let (from, to) = (&lists[0], &lists[1]);
        let conv = BaseConverter::new(&basis(from), &basis(to)).unwrap();
        // x_i = t_i · q̂_i mod q_i, so that the kernels' t_i = x_i · q̂_i^{-1} is q_i − 1 − (c % 2).
        let inv = conv.q_hat_inv_mod_q();
        let mut x = vec![0u64; from.len() * n];
        for (i, q) in from.iter().enumerate() {
            let q_hat = q.inv(inv[i]).unwrap();
            for c in 0..n {
                x[i * n + c] = q.mul(q.value() - 1 - (c as u64 % 2), q_hat);
            }
        }
        let mut centered = vec![0u64; k * n];
        conv.convert_centered(&x, &mut centered, n).unwrap();
        let d = DeviceBaseConverter::new(&dev, &conv).unwrap();
        let dx = dev.upload(&x).unwrap();
        let mut dy = dev.alloc(k * n).unwrap();
        for tile in BconvTile::ALL {
            let case = format!("{l} x 61 -> {k} x {bt} bits, {tile:?}");
            dy.fill_zero().unwrap();
            d.convert_centered_with(&mut dy, &dx, n, false, tile)
                .unwrap();
            assert_words(
                &dev.download(&dy).unwrap(),
                &centered,
                &format!("{case} centred"),
            );
        }
        println!("ok: largest sums, {l} x 61 -> {k} x {bt} bits");
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn modup_centered_matches_host() {
    let dev = require_gpu("modup_centered_matches_host");
    let mut rng = rng("modup_centered_matches_host");
    // (log N, |Q|, |P|, dnum, bits Q, bits P, polys, levels)
    type Case = (u32, usize, usize, usize, u32, u32, usize, &'static [usize]);
    let cases: [Case; 11] = [
        (13, 8, 1, 8, 50, 50, 1, &[8, 6]), // 8 single-limb digits: two multi-digit launches
        (12, 25, 9, 2, 40, 60, 1, &[25, 20, 13]), // digits 13, 12: the `_l16` multi kernel
        (12, 32, 4, 2, 30, 30, 2, &[32]),  // digits of 16
        (12, 6, 2, 1, 50, 60, 2, &[6, 3, 1]),
        (12, 6, 2, 2, 50, 60, 1, &[6, 4]),
        (12, 6, 2, 4, 30, 30, 1, &[6, 5, 2]), // uneven digits 2, 2, 1, 1
        (12, 7, 3, 3, 60, 61, 1, &[7, 6]),    // digits 3, 2, 2
        (12, 5, 2, 5, 60, 60, 1, &[5, 3]),    // dnum = L
        (12, 66, 4, 2, 30, 30, 1, &[66]),     // more than 64 converted limbs
        (16, 24, 7, 3, 50, 60, 1, &[24, 13]),
        (16, 12, 4, 12, 30, 30, 2, &[12]),
    ];
    for (log_n, ql, pl, dnum, bq, bp, polys, levels) in cases {
        let n = 1usize << log_n;
        let lists = disjoint(&[(bq, ql), (bp, pl)]);
        let (qm, pm) = (&lists[0], &lists[1]);
        let modup = ModUp::new(&basis(qm), &basis(pm), dnum).unwrap();
        let dmodup = DeviceModUp::new(&dev, &modup).unwrap();
        for &level in levels {
            let x = random_with_half(&mut rng, &qm[..level], n, polys);
            let dx = dev.upload(&x).unwrap();
            let width = level + pl;
            let active = modup.active_digits(level);
            let mut dy = dev.alloc(polys * width * n).unwrap();
            // All digits stacked [digit][polys][width][n] through apply_centered_at.
            let mut stacked = dev.alloc(active * polys * width * n).unwrap();
            let mut want_all = Vec::new();
            for digit in 0..active {
                let r = modup.digit_limbs(digit, level).unwrap();
                let want = per_poly(&x, level, width, n, |i, o| {
                    modup
                        .apply_centered(digit, level, &i[r.start * n..r.end * n], o, n)
                        .unwrap()
                });
                let case = format!(
                    "N=2^{log_n} |Q|={ql} |P|={pl} dnum={dnum} {bq}/{bp} bits level={level} \
                     digit={digit} polys={polys}"
                );
                dy.fill_zero().unwrap();
                dmodup
                    .apply_centered(digit, level, &dx, &mut dy, n)
                    .unwrap();
                assert_words(&dev.download(&dy).unwrap(), &want, &case);
                dy.fill_zero().unwrap();
                dmodup
                    .apply_centered_with(digit, level, &dx, &mut dy, n, BconvTile::J4C1)
                    .unwrap();
                assert_words(&dev.download(&dy).unwrap(), &want, &format!("{case} J4C1"));
                // convert_centered: the same other limbs, the digit's own limbs left untouched.
                let sentinel = vec![7u64; polys * width * n];
                dy.copy_from_host(&sentinel).unwrap();
                dmodup
                    .convert_centered(digit, level, &dx, &mut dy, n)
                    .unwrap();
                let mut want_other = want.clone();
                for p in 0..polys {
                    for o in r.start..r.end {
                        let at = (p * width + o) * n;
                        want_other[at..at + n].fill(7);
                    }
                }
                assert_words(
                    &dev.download(&dy).unwrap(),
                    &want_other,
                    &format!("{case} without the copy"),
                );
                dmodup
                    .apply_centered_at(
                        digit,
                        level,
                        &dx,
                        &mut stacked,
                        digit * polys * width * n,
                        n,
                    )
                    .unwrap();
                want_all.extend(want);
            }
            assert_words(
                &dev.download(&stacked).unwrap(),
                &want_all,
                &format!("N=2^{log_n} dnum={dnum} level={level}: stacked digits"),
            );
            // Every digit in one call (five per launch): the other limbs of each as
            // `convert_centered`, the own limbs untouched.
            if polys == 1 {
                let mut outs: Vec<_> = (0..active)
                    .map(|_| dev.upload(&vec![7u64; width * n]).unwrap())
                    .collect();
                let mut jobs: Vec<_> = outs.iter_mut().enumerate().collect();
                dmodup
                    .convert_centered_many(level, &dx, &mut jobs, n)
                    .unwrap();
                for (digit, out) in outs.iter().enumerate() {
                    let r = modup.digit_limbs(digit, level).unwrap();
                    let mut want = want_all[digit * width * n..(digit + 1) * width * n].to_vec();
                    for o in r.start..r.end {
                        want[o * n..(o + 1) * n].fill(7);
                    }
                    assert_words(
                        &dev.download(out).unwrap(),
                        &want,
                        &format!("N=2^{log_n} dnum={dnum} level={level} digit={digit}: many"),
                    );
                }
            }
            println!("ok: ModUp centred N=2^{log_n} |Q|={ql} |P|={pl} dnum={dnum} level={level}");
        }
    }
    // The offset output must fit.
    let lists = disjoint(&[(30, 4), (30, 1)]);
    let modup = ModUp::new(&basis(&lists[0]), &basis(&lists[1]), 2).unwrap();
    let dmodup = DeviceModUp::new(&dev, &modup).unwrap();
    let n = 16;
    let dx = dev.alloc(4 * n).unwrap();
    let mut out = dev.alloc(2 * 5 * n).unwrap();
    assert!(dmodup
        .apply_centered_at(1, 4, &dx, &mut out, 5 * n, n)
        .is_ok());
    assert!(matches!(
        dmodup.apply_centered_at(1, 4, &dx, &mut out, 5 * n + 1, n),
        Err(CudaError::Shape(_))
    ));
    dev.synchronize().unwrap();
}
