//! `DeviceNttTables::forward_rows_keyswitch` (the ModUp's forward row phase fused with the
//! key-switching inner product) against the host, word for word: `rhea_math`'s forward NTT of
//! every converted limb, the digits' own limbs taken from the input, and exact `u128` sums of the
//! products with the key, at N = 2^12 … 2^17, 1 to 4 digits (a last digit shorter than the
//! others, a digit of one limb), full and lower levels, 60- and 30-bit primes. The converted
//! buffers' own limbs hold random words that must not be read. Bad arguments are typed errors.
//!
//! The GPU tests are `#[ignore]`d; `--include-ignored` runs them, and then a missing GPU fails.

mod common;

use std::ops::Range;

use common::{assert_words, primes, random_rns, require_gpu, rng};
use rhea_cuda::ntt::{DeviceNttTables, NttRun};
use rhea_cuda::ntt_keyswitch::KsDigit;
use rhea_cuda::CudaError;
use rhea_math::ntt::NttTable;
use rhea_math::Modulus;

/// One case: `N = 2^log_n`, `|Q| = q_full` primes of `bits` bits then `pl` P primes, `level`
/// active Q limbs split into digits of `alpha` limbs.
struct Case {
    log_n: u32,
    bits: u32,
    q_full: usize,
    pl: usize,
    level: usize,
    alpha: usize,
}

fn digit_ranges(level: usize, alpha: usize) -> Vec<Range<usize>> {
    (0..level.div_ceil(alpha))
        .map(|d| d * alpha..((d + 1) * alpha).min(level))
        .collect()
}

/// The prime of output limb `i` (`Q_ℓ ∪ P`) in the full list.
fn kl(i: usize, level: usize, q_full: usize) -> usize {
    if i < level {
        i
    } else {
        q_full + (i - level)
    }
}

fn run_case(c: &Case) {
    let test = format!(
        "fused ModUp rows + inner product 2^{} {}-bit |Q|={} |P|={} level {} alpha {}",
        c.log_n, c.bits, c.q_full, c.pl, c.level, c.alpha
    );
    let dev = require_gpu(&test);
    let n = 1usize << c.log_n;
    let full = c.q_full + c.pl;
    let moduli: Vec<Modulus> = primes(c.bits, full, n);
    let tables = DeviceNttTables::from_moduli(&dev, &moduli, n).unwrap();
    let table = dev.moduli(&moduli).unwrap();
    let host_ntt: Vec<NttTable> = moduli
        .iter()
        .map(|&m| NttTable::new(m, n).unwrap())
        .collect();
    let (level, q_full) = (c.level, c.q_full);
    let width = level + c.pl;
    let active: Vec<Modulus> = (0..width).map(|i| moduli[kl(i, level, q_full)]).collect();
    let ranges = digit_ranges(level, c.alpha);
    let mut r = rng(&test);

    let input = random_rns(&mut r, &active[..level], n, 1);
    // Coefficient-form converted digits, random on every limb (own limbs too: never read).
    let conv: Vec<Vec<u64>> = ranges
        .iter()
        .map(|_| random_rns(&mut r, &active, n, 1))
        .collect();
    let keys: Vec<[Vec<u64>; 2]> = ranges
        .iter()
        .map(|_| {
            [
                random_rns(&mut r, &moduli, n, 1),
                random_rns(&mut r, &moduli, n, 1),
            ]
        })
        .collect();

    // Host oracle.
    let mut want = vec![0u64; 2 * width * n];
    for i in 0..width {
        let t = kl(i, level, q_full);
        let q = moduli[t].value() as u128;
        let mut x_d: Vec<Vec<u64>> = Vec::with_capacity(ranges.len());
        for (d, own) in ranges.iter().enumerate() {
            if own.contains(&i) {
                x_d.push(input[i * n..(i + 1) * n].to_vec());
            } else {
                let mut v = conv[d][i * n..(i + 1) * n].to_vec();
                host_ntt[t].forward(&mut v).unwrap();
                x_d.push(v);
            }
        }
        for part in 0..2 {
            for k in 0..n {
                let mut acc = 0u128;
                for (d, x) in x_d.iter().enumerate() {
                    acc += x[k] as u128 * keys[d][part][t * n + k] as u128;
                }
                want[(part * width + i) * n + k] = (acc % q) as u64;
            }
        }
    }

    // Device: the column phase of the runs in place, then the fused row phase.
    let x = dev.upload(&input).unwrap();
    let mut conv_bufs: Vec<_> = conv.iter().map(|h| dev.upload(h).unwrap()).collect();
    let key_bufs: Vec<_> = keys
        .iter()
        .map(|[b, a]| (dev.upload(b).unwrap(), dev.upload(a).unwrap()))
        .collect();
    let mut runs = Vec::new();
    for (d, own) in ranges.iter().enumerate() {
        let (s, e) = (own.start, own.end);
        for (first, limbs, tbl) in [(0, s, 0), (e, level - e, e), (level, c.pl, q_full)] {
            if limbs > 0 {
                runs.push(NttRun {
                    buf: d,
                    first_limb: first,
                    limbs,
                    table: tbl,
                });
            }
        }
    }
    {
        let mut bufs: Vec<_> = conv_bufs.iter_mut().collect();
        tables.forward_columns_runs(&mut bufs, &runs).unwrap();
    }
    let digits: Vec<KsDigit<'_>> = ranges
        .iter()
        .zip(&conv_bufs)
        .zip(&key_bufs)
        .map(|((own, cb), (kb, ka))| KsDigit {
            converted: cb,
            own: own.clone(),
            key_b: kb,
            key_a: ka,
        })
        .collect();
    let mut out = dev.alloc(2 * width * n).unwrap();
    tables
        .forward_rows_keyswitch(&x, level, q_full, &table, &digits, &mut out)
        .unwrap();
    assert!(want.iter().any(|&w| w != 0));
    assert_words(&dev.download(&out).unwrap(), &want, &test);
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn fused_rows_and_inner_product_match_the_host() {
    let cases = [
        // The deep preset's shape at its top level: 3 digits of 9, 9 and 7 limbs.
        Case {
            log_n: 16,
            bits: 60,
            q_full: 25,
            pl: 7,
            level: 25,
            alpha: 9,
        },
        // Lower levels: two digits (the second of one limb), one digit.
        Case {
            log_n: 16,
            bits: 60,
            q_full: 25,
            pl: 7,
            level: 10,
            alpha: 9,
        },
        Case {
            log_n: 16,
            bits: 60,
            q_full: 25,
            pl: 7,
            level: 4,
            alpha: 9,
        },
        // Four digits (the most one launch takes), every N of the fast kernels.
        Case {
            log_n: 12,
            bits: 60,
            q_full: 8,
            pl: 2,
            level: 8,
            alpha: 2,
        },
        Case {
            log_n: 13,
            bits: 30,
            q_full: 7,
            pl: 2,
            level: 7,
            alpha: 2,
        },
        Case {
            log_n: 14,
            bits: 60,
            q_full: 6,
            pl: 1,
            level: 6,
            alpha: 2,
        },
        Case {
            log_n: 15,
            bits: 60,
            q_full: 8,
            pl: 1,
            level: 5,
            alpha: 2,
        },
        Case {
            log_n: 17,
            bits: 60,
            q_full: 9,
            pl: 3,
            level: 9,
            alpha: 3,
        },
    ];
    for c in &cases {
        run_case(c);
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn bad_arguments_are_typed_errors() {
    let test = "fused ModUp rows + inner product errors";
    let dev = require_gpu(test);
    let n = 1usize << 12;
    let (q_full, pl) = (4usize, 2usize);
    let moduli = primes(60, q_full + pl, n);
    let tables = DeviceNttTables::from_moduli(&dev, &moduli, n).unwrap();
    let table = dev.moduli(&moduli).unwrap();
    let level = 4;
    let width = level + pl;
    let x = dev.alloc_zeroed(level * n).unwrap();
    let conv = dev.alloc_zeroed(width * n).unwrap();
    let kb = dev.alloc_zeroed((q_full + pl) * n).unwrap();
    let ka = dev.alloc_zeroed((q_full + pl) * n).unwrap();
    let digit = |own: Range<usize>| KsDigit {
        converted: &conv,
        own,
        key_b: &kb,
        key_a: &ka,
    };
    let mut out = dev.alloc(2 * width * n).unwrap();
    // No digits, too many digits.
    let res = tables.forward_rows_keyswitch(&x, level, q_full, &table, &[], &mut out);
    assert!(matches!(res, Err(CudaError::InvalidArgument(_))), "{res:?}");
    let five: Vec<_> = (0..5).map(|_| digit(0..1)).collect();
    let res = tables.forward_rows_keyswitch(&x, level, q_full, &table, &five, &mut out);
    assert!(matches!(res, Err(CudaError::InvalidArgument(_))), "{res:?}");
    // A level above |Q|.
    let res = tables.forward_rows_keyswitch(&x, 5, q_full, &table, &[digit(0..2)], &mut out);
    assert!(matches!(res, Err(CudaError::InvalidArgument(_))), "{res:?}");
    // Own limbs outside the level.
    let res = tables.forward_rows_keyswitch(&x, level, q_full, &table, &[digit(2..5)], &mut out);
    assert!(matches!(res, Err(CudaError::Shape(_))), "{res:?}");
    // A short output, a short key.
    let mut short = dev.alloc(width * n).unwrap();
    let res = tables.forward_rows_keyswitch(&x, level, q_full, &table, &[digit(0..2)], &mut short);
    assert!(matches!(res, Err(CudaError::Shape(_))), "{res:?}");
    let short_key = dev.alloc_zeroed(q_full * n).unwrap();
    let d = KsDigit {
        converted: &conv,
        own: 0..2,
        key_b: &short_key,
        key_a: &ka,
    };
    let res = tables.forward_rows_keyswitch(&x, level, q_full, &table, &[d], &mut out);
    assert!(matches!(res, Err(CudaError::Shape(_))), "{res:?}");
    // A moduli table of other primes.
    let other = dev.moduli(&primes(50, q_full + pl, n)).unwrap();
    let res = tables.forward_rows_keyswitch(&x, level, q_full, &other, &[digit(0..2)], &mut out);
    assert!(matches!(res, Err(CudaError::InvalidArgument(_))), "{res:?}");
    // The converted limbs are consumed (dropped from L2 as they are read): sharing memory with
    // the input, a key or another digit is a typed error.
    let big = dev.alloc_zeroed((q_full + pl) * n).unwrap();
    for (converted, key_b) in [(&big, &big), (&kb, &kb)] {
        let d = KsDigit {
            converted,
            own: 0..2,
            key_b,
            key_a: &ka,
        };
        let res = tables.forward_rows_keyswitch(&x, level, q_full, &table, &[d], &mut out);
        assert!(matches!(res, Err(CudaError::Shape(_))), "{res:?}");
    }
    let wide_x = dev.alloc_zeroed(width * n).unwrap();
    let d = KsDigit {
        converted: &wide_x,
        own: 0..2,
        key_b: &kb,
        key_a: &ka,
    };
    let res = tables.forward_rows_keyswitch(&wide_x, level, q_full, &table, &[d], &mut out);
    assert!(matches!(res, Err(CudaError::Shape(_))), "{res:?}");
    let two = [digit(0..2), digit(2..4)];
    let res = tables.forward_rows_keyswitch(&x, level, q_full, &table, &two, &mut out);
    assert!(matches!(res, Err(CudaError::Shape(_))), "{res:?}");
}
