//! The fused kernels of `rhea_cuda::fused` against host arithmetic, word for word, on random
//! non-zero inputs: the tensor product (distinct operands and squaring) and the key-switching
//! inner product into one `[2][width][n]` buffer (against the two-buffer launch).
//!
//! The GPU tests are `#[ignore]`d; `--include-ignored` runs them, and then a missing GPU fails.

mod common;

use common::{assert_words, primes, random_rns, require_gpu, rng};
use rhea_cuda::{fused, CudaError};

fn mul(a: u64, b: u64, q: u64) -> u64 {
    ((a as u128 * b as u128) % q as u128) as u64
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn tensor_matches_host() {
    for (log_n, bits, limbs) in [(12u32, 61u32, 3usize), (16, 60, 5), (13, 30, 2)] {
        let test = format!("fused tensor 2^{log_n} {bits}-bit x{limbs}");
        let dev = require_gpu(&test);
        let n = 1usize << log_n;
        let moduli = primes(bits, limbs, n);
        let table = dev.moduli(&moduli).unwrap();
        let mut r = rng(&test);
        let host: Vec<Vec<u64>> = (0..4).map(|_| random_rns(&mut r, &moduli, n, 1)).collect();
        let bufs: Vec<_> = host.iter().map(|h| dev.upload(h).unwrap()).collect();
        for square in [false, true] {
            let (b0, b1) = if square { (0, 1) } else { (2, 3) };
            let mut d: Vec<_> = (0..3).map(|_| dev.alloc(limbs * n).unwrap()).collect();
            let [d0, d1, d2] = &mut d[..] else {
                unreachable!()
            };
            fused::tensor(
                [&bufs[0], &bufs[1]],
                [&bufs[b0], &bufs[b1]],
                [d0, d1, d2],
                &table,
                limbs,
                n,
            )
            .unwrap();
            let mut want = [
                vec![0u64; limbs * n],
                vec![0u64; limbs * n],
                vec![0u64; limbs * n],
            ];
            for (i, m) in moduli.iter().enumerate() {
                let q = m.value();
                for k in i * n..(i + 1) * n {
                    let (a0, a1, x0, x1) = (host[0][k], host[1][k], host[b0][k], host[b1][k]);
                    want[0][k] = mul(a0, x0, q);
                    want[1][k] = (mul(a0, x1, q) + mul(a1, x0, q)) % q;
                    want[2][k] = mul(a1, x1, q);
                }
            }
            for c in 0..3 {
                assert_words(
                    &dev.download(&d[c]).unwrap(),
                    &want[c],
                    &format!("{test} square={square} d{c}"),
                );
            }
        }
        // A short output is a typed error.
        let mut short = dev.alloc(n).unwrap();
        let mut o1 = dev.alloc(limbs * n).unwrap();
        let mut o2 = dev.alloc(limbs * n).unwrap();
        let res = fused::tensor(
            [&bufs[0], &bufs[1]],
            [&bufs[2], &bufs[3]],
            [&mut short, &mut o1, &mut o2],
            &table,
            limbs,
            n,
        );
        assert!(matches!(res, Err(CudaError::Shape(_))), "{test}: {res:?}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn ks_inner_product_pair_matches_two_buffers() {
    let test = "ks inner product pair";
    let dev = require_gpu(test);
    let n = 1usize << 13;
    // |Q| = 6 (level 4 active), |P| = 2, 3 digits.
    let moduli = primes(60, 8, n);
    let (q_full, level, pl) = (6usize, 4usize, 2usize);
    let table = dev.moduli(&moduli).unwrap();
    let width = level + pl;
    let mut r = rng(test);
    let active: Vec<_> = moduli[..level]
        .iter()
        .chain(&moduli[q_full..])
        .copied()
        .collect();
    let digits: Vec<_> = (0..3)
        .map(|_| dev.upload(&random_rns(&mut r, &active, n, 1)).unwrap())
        .collect();
    let keys: Vec<_> = (0..3)
        .map(|_| {
            (
                dev.upload(&random_rns(&mut r, &moduli, n, 1)).unwrap(),
                dev.upload(&random_rns(&mut r, &moduli, n, 1)).unwrap(),
            )
        })
        .collect();
    let ds: Vec<_> = digits.iter().collect();
    let ks: Vec<_> = keys.iter().map(|(b, a)| (b, a)).collect();
    let mut o0 = dev.alloc(width * n).unwrap();
    let mut o1 = dev.alloc(width * n).unwrap();
    fused::ks_inner_product(&table, level, q_full, &ds, &ks, &mut o0, &mut o1, n).unwrap();
    let mut pair = dev.alloc(2 * width * n).unwrap();
    let none = [None, None];
    fused::ks_inner_product_pair(&table, level, q_full, &ds, &ks, none, &mut pair, n).unwrap();
    let mut want = dev.download(&o0).unwrap();
    assert!(want.iter().any(|&w| w != 0));
    want.extend(dev.download(&o1).unwrap());
    assert_words(&dev.download(&pair).unwrap(), &want, test);

    // With addends (one, then both): out_c = add_c + Σ_d digit_d · key_{d,c} mod q, against
    // host additions of the launch without them.
    let host_adds: Vec<Vec<u64>> = (0..2).map(|_| random_rns(&mut r, &active, n, 1)).collect();
    let add_bufs: Vec<_> = host_adds.iter().map(|h| dev.upload(h).unwrap()).collect();
    for adds in [
        [None, Some(&add_bufs[1])],
        [Some(&add_bufs[0]), Some(&add_bufs[1])],
    ] {
        let mut got = dev.alloc(2 * width * n).unwrap();
        fused::ks_inner_product_pair(&table, level, q_full, &ds, &ks, adds, &mut got, n).unwrap();
        let mut expect = want.clone();
        for c in 0..2 {
            if adds[c].is_none() {
                continue;
            }
            for (i, m) in active.iter().enumerate() {
                for k in i * n..(i + 1) * n {
                    let w = &mut expect[c * width * n + k];
                    *w = (*w + host_adds[c][k]) % m.value();
                }
            }
        }
        assert_ne!(expect, want, "{test}: the addends changed nothing");
        assert_words(
            &dev.download(&got).unwrap(),
            &expect,
            &format!("{test} adds"),
        );
    }
    // Addends on the P limbs only, read from inside larger buffers (limb 1 on): a public-key
    // encryption's errors, whose Q part enters the ModDown elsewhere.
    let p_moduli = &moduli[q_full..];
    let host_tail: Vec<Vec<u64>> = (0..2)
        .map(|_| {
            random_rns(
                &mut r,
                &moduli[..1]
                    .iter()
                    .chain(p_moduli)
                    .copied()
                    .collect::<Vec<_>>(),
                n,
                1,
            )
        })
        .collect();
    let tail_bufs: Vec<_> = host_tail.iter().map(|h| dev.upload(h).unwrap()).collect();
    let tail = fused::KsAddends {
        bufs: [Some((&tail_bufs[0], 1)), Some((&tail_bufs[1], 1))],
        first_limb: level,
    };
    let mut got = dev.alloc(2 * width * n).unwrap();
    fused::ks_inner_product_pair_with(&table, level, q_full, &ds, &ks, tail, &mut got, n).unwrap();
    let mut expect = want.clone();
    for c in 0..2 {
        for (j, m) in p_moduli.iter().enumerate() {
            for k in 0..n {
                let w = &mut expect[(c * width + level + j) * n + k];
                *w = (*w + host_tail[c][(1 + j) * n + k]) % m.value();
            }
        }
    }
    assert_ne!(expect, want, "{test}: the P-limb addends changed nothing");
    assert_words(
        &dev.download(&got).unwrap(),
        &expect,
        &format!("{test} P-limb adds"),
    );
    // A start limb that leaves the addend short, and a first limb beyond the width: typed.
    for bad in [
        fused::KsAddends {
            bufs: [None, Some((&tail_bufs[1], 2))],
            first_limb: level,
        },
        fused::KsAddends {
            bufs: [Some((&tail_bufs[0], 0)), None],
            first_limb: width,
        },
    ] {
        let res =
            fused::ks_inner_product_pair_with(&table, level, q_full, &ds, &ks, bad, &mut got, n);
        assert!(matches!(res, Err(CudaError::Shape(_))), "{test}: {res:?}");
    }
    let mut short = dev.alloc(width * n).unwrap();
    let short_pair =
        fused::ks_inner_product_pair(&table, level, q_full, &ds, &ks, none, &mut short, n);
    assert!(short_pair.is_err());
    let short_limbs = dev.alloc((width - 1) * n).unwrap();
    let short_add = [Some(&short_limbs), None];
    let mut out = dev.alloc(2 * width * n).unwrap();
    let res = fused::ks_inner_product_pair(&table, level, q_full, &ds, &ks, short_add, &mut out, n);
    assert!(matches!(res, Err(CudaError::Shape(_))), "{test}: {res:?}");
}

/// `moddown_rows`: `t_r = [t_r +] (x_r − y_r) · w mod q` on single limbs taken from inside
/// larger buffers, rows with and without the add, against host arithmetic; bad rows and a
/// factor not below `q` are typed errors.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn moddown_rows_matches_host() {
    use rand::Rng;
    for (log_n, bits) in [(12u32, 61u32), (16, 50), (13, 30)] {
        let test = format!("fused moddown_rows 2^{log_n} {bits}-bit");
        let dev = require_gpu(&test);
        let n = 1usize << log_n;
        let m = primes(bits, 1, n)[0];
        let q = m.value();
        let mut r = rng(&test);
        let five = vec![m; 5];
        let xh = random_rns(&mut r, &five, n, 1);
        let yh = random_rns(&mut r, &five, n, 1);
        let th = random_rns(&mut r, &five[..3], n, 1);
        let (x, y) = (dev.upload(&xh).unwrap(), dev.upload(&yh).unwrap());
        let mut t = dev.upload(&th).unwrap();
        let w = r.random_range(1..q);
        // (x limb, y limb, add)
        let spec = [(4usize, 0usize, true), (1, 3, false), (2, 2, true)];
        let rows: Vec<_> = spec
            .iter()
            .map(|&(xl, yl, add)| {
                (
                    fused::Limb { buf: &x, limb: xl },
                    fused::Limb { buf: &y, limb: yl },
                    add,
                )
            })
            .collect();
        fused::moddown_rows(&mut t, &rows, m, w, n).unwrap();
        let mut want = th.clone();
        for (row, &(xl, yl, add)) in spec.iter().enumerate() {
            for k in 0..n {
                let d = mul((xh[xl * n + k] + q - yh[yl * n + k]) % q, w, q);
                let o = row * n + k;
                want[o] = if add { (th[o] + d) % q } else { d };
            }
        }
        assert_words(&dev.download(&t).unwrap(), &want, &test);
        let one = &rows[..1];
        let too_many: Vec<_> = (0..5).map(|_| rows[0]).collect();
        for res in [
            fused::moddown_rows(&mut t, &[], m, w, n),
            fused::moddown_rows(&mut t, &too_many, m, w, n),
            fused::moddown_rows(
                &mut t,
                &[(fused::Limb { buf: &x, limb: 5 }, rows[0].1, true)],
                m,
                w,
                n,
            ),
        ] {
            assert!(matches!(res, Err(CudaError::Shape(_))), "{test}: {res:?}");
        }
        let res = fused::moddown_rows(&mut t, one, m, q, n);
        assert!(
            matches!(res, Err(CudaError::InvalidArgument(_))),
            "{test}: {res:?}"
        );
    }
}
