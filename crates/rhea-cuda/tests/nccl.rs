//! The pieces of the multi-GPU key switching in `rhea-cuda`: base conversions to a subset of
//! the output limbs (against the full conversions, word for word, on random non-zero inputs),
//! the strided limb copies (`DeviceBuffer::copy_rows`), and the NCCL collectives
//! (`all_gather_v`, `all_gather`, `all_to_all`) on every GPU of the machine.
//!
//! The GPU tests are `#[ignore]`d; `--include-ignored` runs them, and then a missing GPU fails.
//! The collectives' test needs two GPUs and NCCL: with fewer GPUs it says so and passes, unless
//! `RHEA_REQUIRE_GPU=1` (then it fails). NCCL is loaded as `libnccl.so`: source
//! `scripts/nccl-env.sh` first where only `libnccl.so.2` is installed.

mod common;

use common::{assert_words, basis, disjoint_primes, random_rns, require_gpu, rng};
use rhea_cuda::bconv::{DeviceBaseConverter, DeviceModUp};
use rhea_cuda::nccl::{Gather, NcclGroup};
use rhea_cuda::{DeviceBuffer, GpuDevice};
use rhea_math::bconv::{BaseConverter, ModUp};

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn conversions_to_a_subset_of_limbs_match_the_full_ones() {
    let test = "bconv subsets";
    let dev = require_gpu(test);
    let mut r = rng(test);
    for (log_n, q_len, p_len, dnum) in [(12u32, 7usize, 3usize, 3usize), (14, 12, 4, 4)] {
        let n = 1usize << log_n;
        let (q, p) = disjoint_primes(50, q_len, 61, p_len, n);
        let (qb, pb) = (basis(&q), basis(&p));
        let modup = ModUp::new(&qb, &pb, dnum).unwrap();
        let dmu = DeviceModUp::new(&dev, &modup).unwrap();
        for level in [q_len, q_len / 2 + 1] {
            let input = dev.upload(&random_rns(&mut r, &q[..level], n, 1)).unwrap();
            for digit in 0..modup.active_digits(level) {
                let mut full = dev.alloc((level + p_len) * n).unwrap();
                dmu.convert_centered(digit, level, &input, &mut full, n)
                    .unwrap();
                let full = full.to_host().unwrap();
                // A slice of the Q limbs and of the P limbs, written reversed into a small buffer.
                let targets: Vec<(usize, usize)> = (1..level.min(4))
                    .chain(level + 1..level + p_len)
                    .rev()
                    .enumerate()
                    .map(|(o, limb)| (limb, o))
                    .collect();
                let mut sub = dev.alloc(targets.len() * n).unwrap();
                sub.fill_zero().unwrap();
                dmu.convert_centered_subset(digit, level, &input, &mut sub, &targets, n)
                    .unwrap();
                let sub = sub.to_host().unwrap();
                let own = modup.digit_limbs(digit, level).unwrap();
                for &(limb, o) in &targets {
                    let got = &sub[o * n..(o + 1) * n];
                    if own.contains(&limb) {
                        assert!(got.iter().all(|&x| x == 0), "own limb {limb} was written");
                    } else {
                        let what = format!("2^{log_n} level {level} digit {digit} limb {limb}");
                        assert_words(got, &full[limb * n..(limb + 1) * n], &what);
                    }
                }
            }
            // Every digit at once (one launch per five), plain and from a pre-scaled input
            // (`t_i = x_i · q̂_i^{-1}`, what the group's inverse NTT leaves): the per-digit
            // subsets' words.
            let targets: Vec<(usize, usize)> = (0..level)
                .step_by(2)
                .chain(level..level + p_len)
                .enumerate()
                .map(|(o, limb)| (limb, o))
                .collect();
            let digits = modup.active_digits(level);
            let mut one_by_one = Vec::new();
            for digit in 0..digits {
                let mut sub = dev.alloc(targets.len() * n).unwrap();
                sub.fill_zero().unwrap();
                dmu.convert_centered_subset(digit, level, &input, &mut sub, &targets, n)
                    .unwrap();
                one_by_one.push(sub.to_host().unwrap());
            }
            let f = dmu.first_step_factors(level).unwrap();
            let x = input.to_host().unwrap();
            let t: Vec<u64> = x
                .iter()
                .enumerate()
                .map(|(w, &v)| {
                    let i = w / n;
                    (v as u128 * f[i] as u128 % q[i].value() as u128) as u64
                })
                .collect();
            let t = dev.upload(&t).unwrap();
            for (scaled, src) in [(false, &input), (true, &t)] {
                let mut outs: Vec<_> = (0..digits)
                    .map(|_| {
                        let mut b = dev.alloc(targets.len() * n).unwrap();
                        b.fill_zero().unwrap();
                        b
                    })
                    .collect();
                let mut jobs: Vec<_> = outs.iter_mut().enumerate().collect();
                dmu.convert_centered_subset_many(level, src, &mut jobs, &targets, n, scaled)
                    .unwrap();
                for (digit, o) in outs.iter().enumerate() {
                    let what = format!("2^{log_n} level {level} digit {digit}, scaled {scaled}");
                    assert_words(&o.to_host().unwrap(), &one_by_one[digit], &what);
                }
            }
            // ModDown's conversion P -> Q_level, two polynomials read strided, three columns.
            let conv = BaseConverter::new(&pb, &qb.prefix(level).unwrap()).unwrap();
            let dconv = DeviceBaseConverter::new(&dev, &conv).unwrap();
            let src = dev.upload(&random_rns(&mut r, &p, n, 2)).unwrap();
            let mut whole = dev.alloc(2 * level * n).unwrap();
            dconv
                .convert_centered_strided(&mut whole, &src, 0, p_len * n, 2, n)
                .unwrap();
            let whole = whole.to_host().unwrap();
            let cols = [(level - 1, 0), (0, 1), (level / 2, 2)];
            let mut part = dev.alloc(2 * 3 * n).unwrap();
            dconv
                .convert_centered_columns(&mut part, &src, 0, p_len * n, 2, n, &cols)
                .unwrap();
            let part = part.to_host().unwrap();
            // The same from a pre-scaled input (`x_j · p̂_j^{-1}`).
            let (hx, qhi) = (src.to_host().unwrap(), conv.q_hat_inv_mod_q());
            let ts: Vec<u64> = hx
                .iter()
                .enumerate()
                .map(|(w, &v)| {
                    let j = (w / n) % p_len;
                    (v as u128 * qhi[j] as u128 % p[j].value() as u128) as u64
                })
                .collect();
            let ts = dev.upload(&ts).unwrap();
            let mut part_s = dev.alloc(2 * 3 * n).unwrap();
            dconv
                .convert_scaled_centered_columns(&mut part_s, &ts, 0, p_len * n, 2, n, &cols)
                .unwrap();
            assert_words(&part_s.to_host().unwrap(), &part, "scaled ModDown columns");
            for poly in 0..2 {
                for &(j, o) in &cols {
                    let got = &part[(poly * 3 + o) * n..(poly * 3 + o + 1) * n];
                    let want = &whole[(poly * level + j) * n..(poly * level + j + 1) * n];
                    assert_words(got, want, &format!("ModDown column {j} of poly {poly}"));
                }
            }
            // Bad targets are shape errors, not launches.
            let mut small = dev.alloc(n).unwrap();
            assert!(dmu
                .convert_centered_subset(0, level, &input, &mut small, &[(level, 1)], n)
                .is_err());
            assert!(dconv
                .convert_centered_columns(&mut small, &src, 0, p_len * n, 1, n, &[(level, 0)])
                .is_err());
        }
    }
}

/// Every GPU of the machine when there are at least two, or `None` (with the reason printed)
/// unless `RHEA_REQUIRE_GPU=1`, which makes too few GPUs a failure.
fn two_or_more_gpus(test: &str) -> Option<Vec<std::sync::Arc<GpuDevice>>> {
    let count = GpuDevice::count();
    if count < 2 {
        if std::env::var("RHEA_REQUIRE_GPU").as_deref() == Ok("1") {
            panic!("{test}: needs 2 GPUs, the machine has {count} (RHEA_REQUIRE_GPU=1)");
        }
        eprintln!("{test}: skipped, needs 2 GPUs and the machine has {count}");
        return None;
    }
    Some((0..count).map(|i| GpuDevice::new(i).unwrap()).collect())
}

#[test]
#[ignore = "needs 2+ CUDA GPUs and NCCL (run with --include-ignored; see scripts/nccl-env.sh)"]
fn nccl_collectives_move_the_right_words() {
    let test = "nccl collectives";
    let Some(devs) = two_or_more_gpus(test) else {
        return;
    };
    let k = devs.len();
    let group = NcclGroup::new(&devs).expect("NCCL group (is libnccl.so on LD_LIBRARY_PATH?)");
    assert_eq!(group.len(), k);
    // all_gather_v: rank r owns words [start_r, end_r) of 1000, uneven, one rank two ranges.
    let total = 1000usize;
    let mut cuts: Vec<usize> = (0..=k).map(|r| r * total / k + r % 2).collect();
    cuts[k] = total;
    cuts[0] = 0;
    let want: Vec<u64> = (0..total as u64).map(|x| x * 0x9E37_79B9 + 7).collect();
    let mut bufs: Vec<_> = devs
        .iter()
        .enumerate()
        .map(|(r, d)| {
            let mut host = vec![u64::MAX; total];
            host[cuts[r]..cuts[r + 1]].copy_from_slice(&want[cuts[r]..cuts[r + 1]]);
            d.upload(&host).unwrap()
        })
        .collect();
    let mut ranges: Vec<Vec<std::ops::Range<usize>>> = (0..k)
        .map(|r| std::iter::once(cuts[r]..cuts[r + 1]).collect())
        .collect();
    // Rank 0's range split in two (and an empty one): the same words move.
    let c = (cuts[0] + cuts[1]) / 2;
    ranges[0] = vec![cuts[0]..c, c..c, c..cuts[1]];
    {
        let mut refs: Vec<_> = bufs.iter_mut().collect();
        group.all_gather_v(&mut refs, &ranges).unwrap();
    }
    for (r, b) in bufs.iter().enumerate() {
        assert_words(
            &b.to_host().unwrap(),
            &want,
            &format!("all_gather_v on rank {r}"),
        );
        let own = (cuts[r + 1] - cuts[r]) as u64;
        assert_eq!(group.bytes_received(r), (total as u64 - own) * 8);
    }
    // all_gather: two gathers of equal chunks in one group, in place at an offset, odd ranks'
    // payloads one word short (padding moves, uncounted); the words around them untouched.
    let (chunk, off) = (128usize, 40usize);
    let len = off + 2 * k * chunk + 5;
    let word = |g: usize, r: usize, i: usize| {
        (1u64 << 62) | ((g as u64) << 40) | ((r as u64) << 20) | i as u64
    };
    let mut gbufs: Vec<_> = devs
        .iter()
        .enumerate()
        .map(|(r, d)| {
            let mut host = vec![u64::MAX; len];
            for g in 0..2 {
                for i in 0..chunk {
                    host[off + (g * k + r) * chunk + i] = word(g, r, i);
                }
            }
            d.upload(&host).unwrap()
        })
        .collect();
    let payload: Vec<usize> = (0..k).map(|r| chunk - r % 2).collect();
    let gathers: Vec<Gather> = (0..2)
        .map(|g| Gather {
            offset: off + g * k * chunk,
            count: chunk,
            payload: payload.clone(),
        })
        .collect();
    group.reset_counters();
    {
        let mut refs: Vec<_> = gbufs.iter_mut().collect();
        group.all_gather(&mut refs, &gathers).unwrap();
    }
    let mut want = vec![u64::MAX; len];
    for g in 0..2 {
        for r in 0..k {
            for i in 0..chunk {
                want[off + (g * k + r) * chunk + i] = word(g, r, i);
            }
        }
    }
    for (r, b) in gbufs.iter().enumerate() {
        assert_words(
            &b.to_host().unwrap(),
            &want,
            &format!("all_gather on rank {r}"),
        );
        let others: usize = (0..k).filter(|&x| x != r).map(|x| payload[x]).sum();
        assert_eq!(group.bytes_received(r), 2 * others as u64 * 8);
    }
    // A payload above its chunk, or chunks past a buffer: typed errors.
    let mut bad = gathers[0].clone();
    bad.payload[0] = chunk + 1;
    let mut refs: Vec<_> = gbufs.iter_mut().collect();
    assert!(group.all_gather(&mut refs, &[bad]).is_err());
    let past = Gather {
        offset: len - k * chunk + 1,
        count: chunk,
        payload: payload.clone(),
    };
    assert!(group.all_gather(&mut refs, &[past]).is_err());
    drop(refs);
    // all_to_all: block j of rank r holds (r, j); afterwards block r of rank j holds it.
    let block = 300usize;
    let send: Vec<_> = devs
        .iter()
        .enumerate()
        .map(|(r, d)| {
            let host: Vec<u64> = (0..k * block)
                .map(|i| ((r as u64) << 32) | ((i / block) as u64 ^ (((i % block) as u64) << 16)))
                .collect();
            d.upload(&host).unwrap()
        })
        .collect();
    let mut recv: Vec<_> = devs.iter().map(|d| d.alloc(k * block).unwrap()).collect();
    {
        let s: Vec<_> = send.iter().collect();
        let mut rr: Vec<_> = recv.iter_mut().collect();
        group.all_to_all(&s, &mut rr, block).unwrap();
    }
    for (j, b) in recv.iter().enumerate() {
        let got = b.to_host().unwrap();
        for r in 0..k {
            let want: Vec<u64> = (0..block)
                .map(|i| ((r as u64) << 32) | (j as u64 ^ ((i as u64) << 16)))
                .collect();
            assert_words(
                &got[r * block..(r + 1) * block],
                &want,
                &format!("a2a {r}->{j}"),
            );
        }
    }
    // A buffer of the wrong device is a typed error, not a hang.
    let mut swapped: Vec<_> = bufs.iter_mut().rev().collect();
    assert!(group.all_gather_v(&mut swapped, &ranges).is_err());
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn copy_rows_moves_strided_rows() {
    // The multi-GPU key switching's read-back of a rank-major all-gather: rows of limbs from
    // one pitch to another in one call.
    let dev = require_gpu("copy_rows");
    let src: Vec<u64> = (0..100u64).map(|x| x * 0x9E37_79B9 + 3).collect();
    let s = dev.upload(&src).unwrap();
    let mut d = dev.upload(&vec![u64::MAX; 100]).unwrap();
    // 3 rows of 4 words: from 3, 13, 23 to 50, 57, 64.
    DeviceBuffer::copy_rows(&s, 3, 10, &mut d, 50, 7, 4, 3).unwrap();
    let mut want = vec![u64::MAX; 100];
    for i in 0..3 {
        want[50 + 7 * i..54 + 7 * i].copy_from_slice(&src[3 + 10 * i..7 + 10 * i]);
    }
    // One row is a plain copy.
    DeviceBuffer::copy_rows(&s, 90, 1, &mut d, 0, 1, 5, 1).unwrap();
    want[..5].copy_from_slice(&src[90..95]);
    assert_words(&d.to_host().unwrap(), &want, "copy_rows");
    // Past the end, or a pitch below the row: typed errors.
    assert!(DeviceBuffer::copy_rows(&s, 3, 10, &mut d, 90, 7, 4, 3).is_err());
    assert!(DeviceBuffer::copy_rows(&s, 3, 3, &mut d, 0, 7, 4, 3).is_err());
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn inner_product_on_a_slice_of_the_basis() {
    // A GPU of a group holds a slice of Q ∪ P: at a low level no active Q limb (level 0), or
    // no P limb at all. The fused inner product takes both; words against host arithmetic.
    use rhea_cuda::fused;
    let test = "ks inner product on a slice";
    let dev = require_gpu(test);
    let mut r = rng(test);
    let n = 1usize << 12;
    let moduli = common::primes(60, 4, n);
    for (q_full, p_len, level) in [(2usize, 2usize, 0usize), (4, 0, 3), (3, 1, 3)] {
        let table = dev.moduli(&moduli[..q_full + p_len]).unwrap();
        let width = level + p_len;
        let rows: Vec<usize> = (0..level).chain(q_full..q_full + p_len).collect();
        let digits = 2;
        let host_d: Vec<Vec<u64>> = (0..digits)
            .map(|_| {
                let ms: Vec<_> = rows.iter().map(|&i| moduli[i]).collect();
                random_rns(&mut r, &ms, n, 1)
            })
            .collect();
        let host_k: Vec<[Vec<u64>; 2]> = (0..digits)
            .map(|_| {
                let ms = &moduli[..q_full + p_len];
                [random_rns(&mut r, ms, n, 1), random_rns(&mut r, ms, n, 1)]
            })
            .collect();
        let d: Vec<_> = host_d.iter().map(|h| dev.upload(h).unwrap()).collect();
        let k: Vec<_> = host_k
            .iter()
            .map(|[b, a]| (dev.upload(b).unwrap(), dev.upload(a).unwrap()))
            .collect();
        let (dr, kr): (Vec<_>, Vec<_>) =
            (d.iter().collect(), k.iter().map(|(b, a)| (b, a)).collect());
        let mut o0 = dev.alloc(width * n).unwrap();
        let mut o1 = dev.alloc(width * n).unwrap();
        fused::ks_inner_product(&table, level, q_full, &dr, &kr, &mut o0, &mut o1, n).unwrap();
        for (c, o) in [o0, o1].iter().enumerate() {
            let got = o.to_host().unwrap();
            let mut want = vec![0u64; width * n];
            for (i, &row) in rows.iter().enumerate() {
                let q = moduli[row].value() as u128;
                for x in 0..n {
                    let mut acc = 0u128;
                    for dg in 0..digits {
                        let kv = host_k[dg][c][row * n + x] as u128;
                        acc = (acc + host_d[dg][i * n + x] as u128 * kv) % q;
                    }
                    want[i * n + x] = acc as u64;
                }
            }
            let what = format!("q_full {q_full}, |P| {p_len}, level {level}, half {c}");
            assert_words(&got, &want, &what);
        }
    }
    // No output limb at all is refused.
    let table = dev.moduli(&moduli[..2]).unwrap();
    let (mut a, mut b) = (dev.alloc(n).unwrap(), dev.alloc(n).unwrap());
    let x = dev.alloc(2 * n).unwrap();
    assert!(fused::ks_inner_product(&table, 0, 2, &[&x], &[(&x, &x)], &mut a, &mut b, n).is_err());
}
