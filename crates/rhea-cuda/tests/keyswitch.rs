//! The fused key-switching inner product against the per-term `mul_add` sum on the host, word
//! for word, plus its timing at N = 2^16, 24 + 7 limbs, dnum 3 against the memory floor
//! (printed, not asserted).
//!
//! The GPU tests are `#[ignore]`d; `--include-ignored` runs them, and then a missing GPU fails.

mod common;

use common::{
    assert_words, cubin_has, disjoint_primes, random_nonzero, require_gpu, require_nvrtc, rng,
    time_us,
};
use rand::Rng;
use rhea_cuda::keyswitch::{DeviceKeySwitch, KEYSWITCH};
use rhea_cuda::{registry, CudaError};
use rhea_math::Modulus;

const DEGREE_MAX: usize = 1 << 16;

#[test]
#[ignore = "needs NVRTC (run with --include-ignored; scripts/check-kernels.sh and scripts/gpu-run.sh do)"]
fn keyswitch_kernel_compiles() {
    require_nvrtc("keyswitch_kernel_compiles");
    let cubin = registry::compile(&KEYSWITCH, "sm_90").unwrap_or_else(|e| panic!("{e}"));
    assert!(cubin_has(&cubin, "keyswitch_inner_product"));
}

/// Canonical random non-zero `[limb][n]` data over `moduli`.
fn limbs(rng: &mut impl Rng, moduli: &[&Modulus], n: usize) -> Vec<u64> {
    moduli
        .iter()
        .flat_map(|m| random_nonzero(rng, m.value(), n))
        .collect()
}

/// The host sum: for each output limb, `Σ_d` of `mul_add` terms in digit order.
fn host_inner_product(
    q: &[Modulus],
    p: &[Modulus],
    level: usize,
    digits: &[u64],
    key: &[u64],
    count: usize,
    n: usize,
) -> Vec<u64> {
    let (l, k) = (q.len(), p.len());
    let (width, full) = (level + k, l + k);
    let mut out = vec![0u64; 2 * width * n];
    for i in 0..width {
        let (kl, m) = if i < level {
            (i, q[i])
        } else {
            (l + i - level, p[i - level])
        };
        for c in 0..2 {
            for t in 0..n {
                let mut acc = 0u64;
                for d in 0..count {
                    let x = digits[(d * width + i) * n + t];
                    let y = key[((2 * d + c) * full + kl) * n + t];
                    acc = m.mul_add(x, y, acc);
                }
                out[(c * width + i) * n + t] = acc;
            }
        }
    }
    out
}

/// Random digits `[count][level + K][n]` and a full key `[parts][2][L + K][n]`.
fn operands(
    rng: &mut impl Rng,
    q: &[Modulus],
    p: &[Modulus],
    level: usize,
    count: usize,
    parts: usize,
    n: usize,
) -> (Vec<u64>, Vec<u64>) {
    let at_level: Vec<&Modulus> = q[..level].iter().chain(p).collect();
    let full: Vec<&Modulus> = q.iter().chain(p).collect();
    let digits = (0..count).flat_map(|_| limbs(rng, &at_level, n)).collect();
    let key = (0..2 * parts).flat_map(|_| limbs(rng, &full, n)).collect();
    (digits, key)
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn inner_product_matches_host() {
    let dev = require_gpu("inner_product_matches_host");
    let mut rng = rng("inner_product_matches_host");
    // (log N, L, K, bits Q, bits P, dnum (key parts), levels and digit counts)
    type Case = (
        u32,
        usize,
        usize,
        u32,
        u32,
        usize,
        &'static [(usize, usize)],
    );
    let cases: [Case; 7] = [
        (12, 6, 2, 50, 60, 1, &[(6, 1), (2, 1)]),
        (12, 6, 2, 30, 30, 2, &[(6, 2), (3, 1)]),
        (12, 6, 2, 60, 61, 3, &[(6, 3), (4, 2), (1, 1)]),
        (12, 6, 2, 50, 50, 6, &[(6, 6), (5, 5)]), // dnum = L
        (12, 70, 1, 30, 30, 70, &[(70, 70), (64, 64)]), // more than 63 digits: folds
        (16, 24, 7, 50, 60, 3, &[(24, 3), (13, 2)]),
        (16, 8, 2, 30, 30, 8, &[(8, 8)]),
    ];
    for (log_n, l, k, bq, bp, dnum, runs) in cases {
        let n = 1usize << log_n;
        let (q, p) = disjoint_primes(bq, l, bp, k, DEGREE_MAX);
        let ks = DeviceKeySwitch::new(&dev, &q, &p).unwrap();
        for &(level, count) in runs {
            let (digits, key) = operands(&mut rng, &q, &p, level, count, dnum, n);
            // Host check on a subsample of coefficients would be weaker; compute all (small).
            let want = host_inner_product(&q, &p, level, &digits, &key, count, n);
            let dd = dev.upload(&digits).unwrap();
            let dk = dev.upload(&key).unwrap();
            let mut dout = dev.alloc(2 * (level + k) * n).unwrap();
            ks.inner_product(level, &dd, &dk, &mut dout, n).unwrap();
            let case = format!(
                "N=2^{log_n} L={l} K={k} {bq}/{bp} bits dnum={dnum} level={level} count={count}"
            );
            assert_words(&dev.download(&dout).unwrap(), &want, &case);
            println!("ok: inner product {case}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn inner_product_bad_shapes_are_errors() {
    let dev = require_gpu("inner_product_bad_shapes_are_errors");
    let (q, p) = disjoint_primes(30, 3, 30, 1, DEGREE_MAX);
    let ks = DeviceKeySwitch::new(&dev, &q, &p).unwrap();
    let n = 16;
    let digits = dev.alloc(2 * 3 * n).unwrap(); // level 2: width 3, two digits
    let key = dev.alloc(2 * 2 * 4 * n).unwrap();
    let mut out = dev.alloc(2 * 3 * n).unwrap();
    assert!(ks.inner_product(2, &digits, &key, &mut out, n).is_ok());
    let short_key = dev.alloc(2 * 4 * n).unwrap(); // one part for two digits
    assert!(matches!(
        ks.inner_product(2, &digits, &short_key, &mut out, n),
        Err(CudaError::Shape(_))
    ));
    assert!(matches!(
        ks.inner_product(2, &dev.alloc(7 * n).unwrap(), &key, &mut out, n),
        Err(CudaError::Shape(_))
    ));
    assert!(matches!(
        ks.inner_product(2, &digits, &key, &mut dev.alloc(5 * n).unwrap(), n),
        Err(CudaError::Shape(_))
    ));
    assert!(matches!(
        ks.inner_product(0, &digits, &key, &mut out, n),
        Err(CudaError::InvalidArgument(_))
    ));
    assert!(matches!(
        ks.inner_product(4, &digits, &key, &mut out, n),
        Err(CudaError::InvalidArgument(_))
    ));
    assert!(matches!(
        DeviceKeySwitch::new(&dev, &q, &[]),
        Err(CudaError::InvalidArgument(_))
    ));
    dev.synchronize().unwrap();
}

/// N = 2^16, L = 24, K = 7, dnum = 3, full level: the inner product against the memory floor
/// (digits + key read once, output written once; a D2D copy moving the same bytes).
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn inner_product_timing_n16_24_7_dnum3() {
    let dev = require_gpu("inner_product_timing_n16_24_7_dnum3");
    let mut rng = rng("inner_product_timing");
    let n = 1 << 16;
    let (l, k, dnum) = (24, 7, 3);
    let iters = 100;
    println!(
        "device: {} ({} SMs)",
        dev.name(),
        dev.multiprocessor_count()
    );
    let width = l + k;
    let words = (3 * dnum + 2) * width * n; // read digits + 2 key parts' worth, write 2
    let bytes = (words * 8) as f64;
    let src = dev.upload(&vec![1u64; words / 2]).unwrap();
    let mut dst = dev.alloc(words / 2).unwrap();
    let copy_us = time_us(&dev, iters, || src.copy_into(&mut dst).unwrap());
    let copy_bw = bytes / copy_us / 1e6;
    println!(
        "floor: {:.1} MB moved; D2D copy of the same bytes {copy_us:.2} us ({copy_bw:.2} TB/s)",
        bytes / 1e6
    );
    for (bq, bp) in [(50u32, 60u32), (30, 30)] {
        let (q, p) = disjoint_primes(bq, l, bp, k, DEGREE_MAX);
        let ks = DeviceKeySwitch::new(&dev, &q, &p).unwrap();
        let (digits, key) = operands(&mut rng, &q, &p, l, dnum, dnum, n);
        let dd = dev.upload(&digits).unwrap();
        let dk = dev.upload(&key).unwrap();
        let mut dout = dev.alloc(2 * width * n).unwrap();
        let us = time_us(&dev, iters, || {
            ks.inner_product(l, &dd, &dk, &mut dout, n).unwrap()
        });
        // Spot-check the timed output on a few coefficients.
        let got = dev.download(&dout).unwrap();
        let mut rng2 = rng.clone();
        for _ in 0..64 {
            let i = rng2.random_range(0..width);
            let t = rng2.random_range(0..n);
            let (kl, m) = if i < l { (i, q[i]) } else { (i, p[i - l]) };
            for c in 0..2 {
                let mut acc = 0u64;
                for d in 0..dnum {
                    acc = m.mul_add(
                        digits[(d * width + i) * n + t],
                        key[((2 * d + c) * width + kl) * n + t],
                        acc,
                    );
                }
                assert_eq!(got[(c * width + i) * n + t], acc);
            }
        }
        println!(
            "keyswitch inner product {bq}/{bp}-bit N=2^16 L+K={l}+{k} dnum={dnum}: {us:.2} us \
             ({:.2} TB/s effective, {:.2}x the copy floor {copy_us:.2} us)",
            bytes / us / 1e6,
            us / copy_us
        );
    }
}
