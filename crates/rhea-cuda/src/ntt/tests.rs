//! Unit tests of the NTT module.

use super::bench::{median_min, splitmix};
use super::*;

#[test]
fn splits_cover_the_fast_range() {
    for log_n in MIN_FAST_LOG_DEGREE..=MAX_FAST_LOG_DEGREE {
        let sp = splits(log_n);
        assert!(!sp.is_empty(), "no split for 2^{log_n}");
        for s in &sp {
            let log_n2 = log_n - s.log_n1;
            assert!(s.log_n1 >= 3 && log_n2 >= 3, "{s:?} for 2^{log_n}");
            assert!((1u32 << log_n2) % s.cols_per_block == 0);
            assert!(((1u32 << s.log_n1) / 8) * s.cols_per_block <= 1024);
            // Every split is instantiated in ntt.cu.
            let cols = format!("NTT_COLS({log_n}, {}, {})", s.log_n1, s.cols_per_block);
            let rows = format!("NTT_ROWS({log_n}, {})", s.log_n1);
            assert!(NTT.source.contains(&cols), "{cols} missing from ntt.cu");
            assert!(NTT.source.contains(&rows), "{rows} missing from ntt.cu");
        }
    }
    assert!(splits(11).is_empty());
    assert!(splits(18).is_empty());
}

#[test]
fn bench_primes_have_the_requested_size() {
    let ps = bench_primes(60, 1 << 16, 4).unwrap();
    assert_eq!(ps.len(), 4);
    for w in ps.windows(2) {
        assert!(w[0].value() > w[1].value());
    }
    for p in &ps {
        assert_eq!(p.bits(), 60);
        assert!(rhea_math::prime::is_ntt_friendly(p.value(), 1 << 16));
    }
    assert!(bench_primes(62, 1 << 16, 1).is_err());
}

#[test]
fn galois_inverse_inverts_modulo_2n() {
    for g in [1u64, 3, 5, 25, (1 << 17) - 1, 12345] {
        let h = u64::from(galois_inverse(g, 1 << 16).unwrap());
        assert_eq!(g * h % (1 << 17), 1, "g = {g}");
    }
    assert!(galois_inverse(4, 1 << 16).is_err());
}

#[test]
fn twiddles_are_staged_in_launches_of_at_most_4096_rows() {
    // One limb, the 32 limbs of the NTT goal, the staging limit, and past it (the 1024 × 8
    // batch of seed 000 has 8192 rows and must not be staged: bench-history §23).
    for (polys, limbs, staged) in [(1, 1, 1), (1, 32, 1), (1024, 4, 1), (1024, 8, 0)] {
        let a = stage_twiddles(NttArgs::of(&NttBatch::all(polys, limbs)));
        assert_eq!(a.tw_staged, staged, "{polys} x {limbs}");
    }
    let mut a = NttArgs::of(&NttBatch::all(1, 32));
    a.rows = 4097;
    assert_eq!(stage_twiddles(a).tw_staged, 0);
}

#[test]
fn rows_pair_when_both_halves_use_the_same_tables() {
    // Strided: two polynomials of limbs 1..4 (tables 3..6 with first_table 2): paired.
    let mut a = NttArgs::of(&NttBatch::limb_range(2, 6, 1, 3).with_first_table(2));
    assert_eq!(
        (a.rows, a.table_of(0), a.table_of(3), a.table_of(5)),
        (6, 3, 3, 5)
    );
    assert_eq!(a.pairing(), 3);
    // One polynomial: nothing to pair.
    a = NttArgs::of(&NttBatch::all(1, 4));
    assert_eq!(a.pairing(), 0);
    // Grouped: runs of tables 5..8 and 5..8 pair; 5..8 and 6..9 do not; odd rows never.
    a = NttArgs {
        rows: 8,
        groups: 2,
        ..NttArgs::default()
    };
    a.row_start[..3].copy_from_slice(&[0, 4, 8]);
    a.table[..2].copy_from_slice(&[5, 5]);
    assert_eq!((a.table_of(3), a.table_of(4), a.table_of(7)), (8, 5, 8));
    assert_eq!(a.pairing(), 4);
    a.table[1] = 6;
    assert_eq!(a.pairing(), 0);
    a.rows = 7;
    a.table[1] = 5;
    assert_eq!(a.pairing(), 0);
}

#[test]
fn prime_words_fold_the_inverse_degree() {
    let q = bench_primes(50, 1 << 12, 1).unwrap()[0];
    let t = NttTable::new(q, 1 << 12).unwrap();
    let w = prime_words(&t);
    assert_eq!(w[0], q.value());
    assert_eq!(w[1], 2 * q.value());
    assert_eq!(q.mul(w[2], 1 << 12), 1);
    assert_eq!(w[3], q.shoup(w[2]));
    assert_eq!(w[4], q.mul(t.inv_root_powers()[1], w[2]));
    assert_eq!(w[5], q.shoup(w[4]));
    assert_eq!((w[7], w[6]), q.barrett_ratio());
}

/// The host twin of `tw_companion` (kernels/ntt.cuh), which gives the inverse's compact
/// twiddles their Shoup companions from the Barrett ratio in the prime's words.
fn tw_companion(w: u64, q: u64, r_hi: u64, r_lo: u64) -> u64 {
    let c = w
        .wrapping_mul(r_hi)
        .wrapping_add(((w as u128 * r_lo as u128) >> 64) as u64);
    let r = 0u64.wrapping_sub(c.wrapping_mul(q));
    if r >= q {
        c + 1
    } else {
        c
    }
}

#[test]
fn companions_from_the_barrett_ratio_are_the_shoup_words() {
    for (bits, degree) in [
        (61u32, 1usize << 17),
        (60, 1 << 16),
        (40, 1 << 16),
        (30, 1 << 12),
    ] {
        for q in bench_primes(bits, degree, 3).unwrap() {
            let (r_hi, r_lo) = q.barrett_ratio();
            let t = NttTable::new(q, degree).unwrap();
            let mut ws: Vec<u64> = vec![0, 1, 2, q.value() - 1, q.value() - 2, q.value() / 2];
            ws.extend(t.inv_root_powers().iter().step_by(997).copied());
            ws.extend(t.root_powers().iter().step_by(991).copied());
            for w in ws {
                assert_eq!(
                    tw_companion(w, q.value(), r_hi, r_lo),
                    q.shoup(w),
                    "q = {}, w = {w}",
                    q.value()
                );
            }
        }
    }
}

#[test]
fn compact_table_gathers_the_last_three_stages() {
    let q = bench_primes(60, 1 << 12, 1).unwrap()[0];
    let t = NttTable::new(q, 1 << 12).unwrap();
    let (w, ws) = (t.root_powers(), t.root_powers_shoup());
    let mut out = Vec::new();
    compact_last_stages(w, Some(ws), &mut out);
    let mut alone = Vec::new();
    compact_last_stages(w, None, &mut alone);
    let n = 1 << 12;
    assert_eq!(out.len(), 6 * n / 8);
    assert_eq!(alone.len(), 3 * n / 8);
    for g in [0, 1, 7, n / 8 - 1] {
        let e = &out[6 * g..6 * g + 6];
        assert_eq!((e[0], e[1]), (w[n / 8 + g], ws[n / 8 + g]));
        assert_eq!((e[2], e[3]), (w[n / 4 + 2 * g], ws[n / 4 + 2 * g]));
        assert_eq!((e[4], e[5]), (w[n / 2 + 4 * g], ws[n / 2 + 4 * g]));
        assert_eq!(alone[3 * g..3 * g + 3], [e[0], e[2], e[4]]);
    }
    // The derivation the kernels rely on: table[b + k] = table[b] · table[k] for 4 | b.
    for b in [n / 2 + 4 * 5, n / 4 + 4 * 6, n / 8 + 4 * 7] {
        for k in 1..4 {
            assert_eq!(w[b + k], q.mul(w[b], w[k]), "b = {b}, k = {k}");
        }
    }
    let mut tiny = Vec::new();
    compact_last_stages(&w[..4], Some(&ws[..4]), &mut tiny);
    assert!(tiny.is_empty());
}

#[test]
fn derived_splits_read_fewer_twiddles() {
    let one = default_split(16, 1).unwrap();
    let many = default_split(16, 64).unwrap();
    let (fwd, inv) = (NttDirection::Forward, NttDirection::Inverse);
    let whole = 3 * (1 << 16) * 16;
    assert_eq!(many.twiddle_bytes_read(1 << 16, 3, fwd), whole);
    assert_eq!(many.twiddle_bytes_read(1 << 16, 3, inv), whole);
    assert_eq!(2 * one.twiddle_bytes_read(1 << 16, 3, fwd), whole);
    assert_eq!(16 * one.twiddle_bytes_read(1 << 16, 3, inv), 5 * whole);
}

#[test]
fn default_split_derives_for_few_polynomials() {
    for log_n in MIN_FAST_LOG_DEGREE..=MAX_FAST_LOG_DEGREE {
        let one = default_split(log_n, 1).unwrap();
        let many = default_split(log_n, 64).unwrap();
        assert!(one.derived_twiddles && !many.derived_twiddles);
        assert_eq!(one.with_derived_twiddles(false), many);
        assert!(splits(log_n).contains(&one) && splits(log_n).contains(&many));
    }
    assert_eq!(default_split(11, 1), None);
}

/// The host twin of the prologue's `lift_lazy` (ntt.cuh), with `s1` the moduli table's
/// `ratio_hi`.
fn lift_lazy(t: u64, q_last: u64, m: &Modulus) -> u64 {
    let (q, s1) = (m.value(), m.barrett_ratio().0);
    let r = m.mul_shoup_lazy(q_last, 1, s1);
    let neg = q - if r >= q { r - q } else { r };
    m.mul_shoup_lazy(t, 1, s1) + if t > q_last >> 1 { neg } else { 0 }
}

#[test]
fn lazy_lift_is_the_centred_lift_below_three_q() {
    // ratio_hi is the Shoup companion of 1.
    for bits in [20, 30, 40, 50, 60, 61] {
        for m in bench_primes(bits, 1 << 12, 3).unwrap() {
            assert_eq!(m.barrett_ratio().0, m.shoup(1), "q = {}", m.value());
        }
    }
    let mut seed = 0x11F7u64;
    for (qb, lb) in [
        (30, 61),
        (61, 30),
        (50, 50),
        (60, 61),
        (61, 60),
        (40, 20),
        (20, 61),
    ] {
        let q = bench_primes(qb, 1 << 12, 1).unwrap()[0];
        let ql = bench_primes(lb, 1 << 12, 2).unwrap()[1].value();
        let half = ql / 2;
        let edges = [0, 1, half - 1, half, half + 1, ql - 2, ql - 1];
        let randoms = (0..20_000).map(|_| splitmix(&mut seed) % ql);
        for t in edges.into_iter().chain(randoms) {
            let want = if t <= half {
                q.reduce(t)
            } else {
                q.reduce_i128(t as i128 - ql as i128)
            };
            let got = lift_lazy(t, ql, &q);
            assert!(
                got < 3 * q.value(),
                "t = {t}, q = {}, q_last = {ql}",
                q.value()
            );
            assert_eq!(
                got % q.value(),
                want,
                "t = {t}, q = {}, q_last = {ql}",
                q.value()
            );
        }
    }
}

#[test]
fn median_of_samples() {
    assert_eq!(median_min(vec![3.0, 1.0, 2.0]), (2.0, 1.0));
    assert_eq!(median_min(vec![4.0, 1.0, 2.0, 3.0]), (2.5, 1.0));
}
