//! Base conversion, ModUp, ModDown and rescaling, checked exactly against `num-bigint`.

#[path = "rns_helpers.rs"]
mod helpers;

use helpers::*;
use num_bigint::{BigInt, BigUint};
use num_traits::{ToPrimitive, Zero};
use rhea_math::basis::Basis;
use rhea_math::bconv::{rescale_by_last, BaseConverter, ModDown, ModUp, Rescaler};
use rhea_math::MathError;

/// `(from, to)` pairs: 1..=8 limbs, primes of 30..=61 bits, mixed sizes.
fn pairs() -> Vec<(Basis, Basis)> {
    let mut out = Vec::new();
    for (lf, bf, lt, bt) in [
        (1, 30, 1, 61),
        (2, 61, 3, 61),
        (3, 36, 2, 50),
        (4, 45, 4, 59),
        (5, 61, 1, 30),
        (8, 60, 8, 61),
        (7, 50, 5, 40),
    ] {
        let from = basis(bf, lf, &[]);
        let to = basis(bt, lt, &from.values());
        out.push((from, to));
    }
    let from = mixed_basis(&[61, 30, 45, 59, 33, 60], &[]);
    let to = mixed_basis(&[31, 61, 52], &from.values());
    out.push((from, to));
    out
}

#[test]
fn rns_bconv_types_are_send_sync_clone() {
    fn check<T: Send + Sync + Clone + std::fmt::Debug>() {}
    check::<BaseConverter>();
    check::<ModUp>();
    check::<ModDown>();
    check::<Rescaler>();
}

#[test]
fn converter_tables() {
    for (from, to) in pairs() {
        let conv = BaseConverter::new(&from, &to).unwrap();
        let k = to.len();
        assert_eq!(conv.q_hat_mod_p().len(), from.len() * k);
        assert_eq!(conv.q_hat_inv_mod_q(), from.q_hat_inv_mod_q());
        assert_eq!(conv.q_hat_inv_mod_q_shoup(), from.q_hat_inv_mod_q_shoup());
        for (i, q) in from.values().into_iter().enumerate() {
            for (j, p) in to.values().into_iter().enumerate() {
                assert_eq!(
                    conv.q_hat_mod_p()[i * k + j],
                    big_mod(&(from.product() / q), p)
                );
            }
        }
        for (j, p) in to.values().into_iter().enumerate() {
            assert_eq!(conv.q_mod_p()[j], big_mod(from.product(), p));
        }
    }
}

/// Checks `out ≡ x + u·Q (mod p_j)` with one `0 ≤ u < L` for all `j`, for every coefficient.
fn assert_approx(from: &Basis, to: &Basis, xs: &[BigUint], out: &[u64]) {
    let n = xs.len();
    for (k, x) in xs.iter().enumerate() {
        let got = column(out, n, k);
        let u = (0..from.len()).find(|&u| {
            let v = x + from.product() * u;
            to.values()
                .iter()
                .zip(&got)
                .all(|(&p, &g)| big_mod(&v, p) == g)
        });
        assert!(
            u.is_some(),
            "coefficient {k}: {got:?} is not x + u·Q for any 0 ≤ u < L"
        );
        for (&p, &g) in to.values().iter().zip(&got) {
            assert!(g < p);
        }
    }
}

#[test]
fn convert_approx_is_x_plus_small_multiple_of_q() {
    let mut rng = rng(10);
    for (from, to) in pairs() {
        let conv = BaseConverter::new(&from, &to).unwrap();
        for n in [1usize, 16, 300] {
            let (xs, input) = random_poly(&mut rng, &from, from.product(), n);
            let mut out = vec![0u64; to.len() * n];
            conv.convert_approx(&input, &mut out, n).unwrap();
            assert_approx(&from, &to, &xs, &out);
        }
    }
}

#[test]
fn convert_approx_with_many_source_limbs_folds_the_accumulator() {
    // 70 source limbs of 61 bits: more than 63 products of up to 122 bits per accumulator.
    let mut rng = rng(11);
    let from = basis(61, 70, &[]);
    let to = basis(61, 3, &from.values());
    let conv = BaseConverter::new(&from, &to).unwrap();
    let n = 5;
    let (mut xs, mut input) = random_poly(&mut rng, &from, from.product(), n);
    // Coefficient 0: all residues q_i - 1 (x = Q - 1), the largest t_i.
    xs[0] = from.product() - 1u8;
    for (i, q) in from.values().into_iter().enumerate() {
        input[i * n] = q - 1;
    }
    let mut out = vec![0u64; to.len() * n];
    conv.convert_approx(&input, &mut out, n).unwrap();
    assert_approx(&from, &to, &xs, &out);
    let mut exact = vec![0u64; to.len() * n];
    conv.convert_exact(&input, &mut exact, n).unwrap();
    assert_exact(&from, &to, &xs, &exact);
}

/// Checks `out ≡ centered(x) (mod p_j)` exactly.
fn assert_exact(from: &Basis, to: &Basis, xs: &[BigUint], out: &[u64]) {
    let n = xs.len();
    let q = BigInt::from(from.product().clone());
    for (k, x) in xs.iter().enumerate() {
        let mut c = BigInt::from(x.clone());
        if &c * 2 > q {
            c -= &q;
        }
        let want: Vec<u64> = to.values().iter().map(|&p| big_mod_signed(&c, p)).collect();
        assert_eq!(
            column(out, n, k),
            want,
            "coefficient {k}, centered value {c}"
        );
    }
}

/// Random values plus the hard ones: 0, ±1, ±(Q-1)/2 and their neighbours (the f64 tie zone).
fn hard_values(rng: &mut rand_chacha::ChaCha8Rng, q: &BigUint, n: usize) -> Vec<BigUint> {
    let half = q / 2u8;
    let mut xs = vec![
        BigUint::zero(),
        BigUint::from(1u8),
        q - 1u8,
        half.clone(),
        &half + 1u8,
        &half - 1u8,
        &half + 2u8,
        q - 2u8,
    ];
    xs.retain(|x| x < q);
    while xs.len() < n {
        xs.push(random_below(rng, q));
    }
    xs
}

#[test]
fn convert_exact_gives_the_centered_value() {
    let mut rng = rng(12);
    for (from, to) in pairs() {
        let conv = BaseConverter::new(&from, &to).unwrap();
        for n in [8usize, 40, 300] {
            let xs = hard_values(&mut rng, from.product(), n);
            let input = residues_of(&from, &xs);
            let mut out = vec![0u64; to.len() * n];
            conv.convert_exact(&input, &mut out, n).unwrap();
            assert_exact(&from, &to, &xs, &out);
        }
    }
}

#[test]
fn convert_exact_with_an_even_product_keeps_half_positive() {
    let from = Basis::new(&[1 << 20, 97, 65537]).unwrap();
    let to = basis(61, 2, &[]);
    let conv = BaseConverter::new(&from, &to).unwrap();
    let xs = hard_values(&mut rng(13), from.product(), 16);
    let input = residues_of(&from, &xs);
    let mut out = vec![0u64; to.len() * 16];
    conv.convert_exact(&input, &mut out, 16).unwrap();
    assert_exact(&from, &to, &xs, &out);
}

#[test]
fn converter_errors_are_typed() {
    let from = basis(50, 3, &[]);
    let to = basis(61, 2, &from.values());
    assert!(matches!(
        BaseConverter::new(&from, &from.slice(1..2).unwrap()),
        Err(MathError::InvalidBasis(_))
    ));
    assert!(matches!(
        BaseConverter::new(&Basis::new(&[15]).unwrap(), &Basis::new(&[21]).unwrap()),
        Err(MathError::InvalidBasis(_))
    ));
    let conv = BaseConverter::new(&from, &to).unwrap();
    let mut out = vec![0u64; 2 * 4];
    assert!(matches!(
        conv.convert_approx(&[0; 11], &mut out, 4),
        Err(MathError::ShapeMismatch(_))
    ));
    assert!(matches!(
        conv.convert_exact(&[0; 12], &mut out[..7], 4),
        Err(MathError::ShapeMismatch(_))
    ));
    assert!(matches!(
        conv.convert_approx(&[], &mut [], 0),
        Err(MathError::InvalidArgument(_))
    ));
}

#[test]
fn modup_extends_every_digit_at_every_level() {
    let mut rng = rng(20);
    for (l, k, dnum, qbits, pbits) in [
        (1usize, 1usize, 1usize, 40u32, 61u32),
        (3, 1, 3, 50, 61),
        (5, 2, 3, 45, 60),
        (8, 3, 3, 59, 61),
        (7, 4, 2, 36, 50),
        (6, 2, 6, 30, 45),
        (6, 2, 4, 40, 61),
        (7, 2, 3, 40, 61),
    ] {
        let q = basis(qbits, l, &[]);
        let p = basis(pbits, k, &q.values());
        let modup = ModUp::new(&q, &p, dnum).unwrap();
        assert_eq!(modup.dnum(), dnum);
        let alpha = l.div_ceil(dnum);
        assert_eq!(modup.alpha(), alpha);
        let digits = modup.digits().to_vec();
        assert_eq!(digits.len(), dnum);
        assert_eq!(digits[0].start, 0);
        assert_eq!(digits[dnum - 1].end, l);
        assert_eq!(digits[0].len(), alpha);
        for w in digits.windows(2) {
            assert_eq!(w[0].end, w[1].start);
            assert!(w[0].len() == w[1].len() || w[0].len() == w[1].len() + 1);
        }
        let n = 12;
        for level in 1..=l {
            let q_l = q.prefix(level).unwrap();
            let ext = q_l.concat(&p).unwrap();
            let (_, poly) = random_poly(&mut rng, &q_l, q_l.product(), n);
            assert_eq!(
                modup.active_digits(level),
                digits.iter().filter(|r| r.start < level).count()
            );
            for (d, full) in digits.iter().enumerate().take(modup.active_digits(level)) {
                let r = modup.digit_limbs(d, level).unwrap();
                assert_eq!(r.start, full.start);
                assert_eq!(r.end, full.end.min(level));
                let c = r.len();
                let input = &poly[r.start * n..r.end * n];
                let mut out = vec![0u64; (level + k) * n];
                modup.apply(d, level, input, &mut out, n).unwrap();
                assert_eq!(&out[r.start * n..r.end * n], input, "own limbs are copied");
                let digit_basis = q.slice(r.clone()).unwrap();
                let q_d = digit_basis.product();
                let x_d = digit_basis.poly_reconstruct(input, n).unwrap();
                let v = ext.poly_reconstruct(&out, n).unwrap();
                for (kk, (x, v)) in x_d.iter().zip(&v).enumerate() {
                    assert!(v >= x, "level {level} digit {d} coefficient {kk}");
                    let diff = v - x;
                    assert!((&diff % q_d).is_zero());
                    let u = (diff / q_d).to_usize().unwrap();
                    assert!(u < c, "u = {u} not below {c}");
                }
            }
            assert!(matches!(
                modup.apply(modup.active_digits(level), level, &[], &mut [], n),
                Err(MathError::InvalidArgument(_))
            ));
        }
    }
}

#[test]
fn modup_errors_are_typed() {
    let q = basis(50, 5, &[]);
    let p = basis(61, 2, &q.values());
    assert!(matches!(
        ModUp::new(&q, &p, 0),
        Err(MathError::InvalidArgument(_))
    ));
    assert!(matches!(
        ModUp::new(&q, &p, 6),
        Err(MathError::InvalidArgument(_))
    ));
    // 5 limbs in 4 digits: sizes 2, 1, 1, 1.
    let four = ModUp::new(&q, &p, 4).unwrap();
    assert_eq!(four.digits(), &[0..2, 2..3, 3..4, 4..5]);
    assert_eq!(four.alpha(), 2);
    assert!(matches!(
        ModUp::new(&q, &q.slice(4..5).unwrap(), 1),
        Err(MathError::InvalidBasis(_))
    ));
    let modup = ModUp::new(&q, &p, 3).unwrap(); // digits [0,2), [2,4), [4,5)
    let n = 4;
    let mut out = vec![0u64; (3 + 2) * n];
    assert!(modup.apply(1, 3, &[0; 4], &mut out, n).is_ok()); // clipped to limb 2 only
    assert!(matches!(
        modup.apply(1, 3, &[0; 8], &mut out, n),
        Err(MathError::ShapeMismatch(_))
    ));
    assert!(matches!(
        modup.apply(0, 3, &[0; 8], &mut out[..19], n),
        Err(MathError::ShapeMismatch(_))
    ));
    assert!(matches!(
        modup.apply(2, 3, &[0; 4], &mut out, n),
        Err(MathError::InvalidArgument(_))
    ));
    assert!(matches!(
        modup.apply(0, 0, &[], &mut [], n),
        Err(MathError::InvalidArgument(_))
    ));
    assert!(matches!(
        modup.apply(0, 6, &[0; 8], &mut out, n),
        Err(MathError::InvalidArgument(_))
    ));
    assert!(matches!(
        modup.converter(3, 5),
        Err(MathError::InvalidArgument(_))
    ));
    let conv = modup.converter(1, 3).unwrap();
    assert_eq!(conv.from().values(), q.values()[2..3].to_vec());
    let mut to = q.values();
    to.remove(2);
    to.extend(p.values());
    assert_eq!(conv.to().values(), to);
}

#[test]
fn moddown_is_floor_division_up_to_the_approximation() {
    let mut rng = rng(30);
    for (l, k, qbits, pbits) in [
        (1usize, 1usize, 40u32, 61u32),
        (3, 2, 50, 61),
        (5, 3, 45, 60),
        (8, 4, 59, 61),
        (4, 8, 36, 30),
    ] {
        let q = basis(qbits, l, &[]);
        let p = basis(pbits, k, &q.values());
        let moddown = ModDown::new(&q, &p).unwrap();
        for (i, m) in q.values().into_iter().enumerate() {
            assert_eq!(big_mod(&(p.product() * moddown.p_inv_mod_q()[i]), m), 1);
        }
        let n = 20;
        for level in 1..=l {
            let q_l = q.prefix(level).unwrap();
            let ext = q_l.concat(&p).unwrap();
            let (mut xs, _) = random_poly(&mut rng, &ext, ext.product(), n);
            xs[0] = ext.product() - 1u8;
            xs[1] = p.product() - 1u8;
            xs[2] = p.product().clone();
            let input = residues_of(&ext, &xs);
            let mut out = vec![0u64; level * n];
            moddown.apply(level, &input, &mut out, n).unwrap();
            let got = q_l.poly_reconstruct(&out, n).unwrap();
            for (kk, (x, g)) in xs.iter().zip(&got).enumerate() {
                let floor = x / p.product();
                // (floor(x/P) - out) mod Q_ℓ must be the same u ∈ [0, |P|) everywhere.
                let u = (floor + q_l.product() - g) % q_l.product();
                let u = u.to_usize().unwrap_or(usize::MAX);
                assert!(
                    u < k,
                    "level {level} coefficient {kk}: error {u} not below {k}"
                );
            }
        }
    }
}

#[test]
fn moddown_errors_are_typed() {
    let q = basis(50, 3, &[]);
    let p = basis(61, 2, &q.values());
    assert!(matches!(
        ModDown::new(&q, &q),
        Err(MathError::InvalidBasis(_))
    ));
    let md = ModDown::new(&q, &p).unwrap();
    let n = 4;
    let mut out = vec![0u64; 2 * n];
    assert!(md.apply(2, &[0; 16], &mut out, n).is_ok());
    assert!(matches!(
        md.apply(2, &[0; 12], &mut out, n),
        Err(MathError::ShapeMismatch(_))
    ));
    assert!(matches!(
        md.apply(2, &[0; 16], &mut out[..4], n),
        Err(MathError::ShapeMismatch(_))
    ));
    assert!(matches!(
        md.apply(0, &[], &mut [], n),
        Err(MathError::InvalidArgument(_))
    ));
    assert!(matches!(
        md.apply(4, &[0; 24], &mut [0; 16], n),
        Err(MathError::InvalidArgument(_))
    ));
}

/// `round(x / d)` for a signed `x` and odd `d > 0` (no ties), by `num-bigint` alone.
fn round_div(x: &BigInt, d: u64) -> BigInt {
    let two_d = BigInt::from(2 * d as u128);
    if x.sign() == num_bigint::Sign::Minus {
        let m: BigInt = (-x * 2 + d) / two_d;
        -m
    } else {
        (x * 2 + d) / two_d
    }
}

#[test]
fn rescale_is_exact_rounding() {
    let mut rng = rng(40);
    for (l, bits) in [(2usize, 61u32), (3, 30), (5, 45), (8, 60)] {
        let mut q = basis(bits, l, &[]);
        if l == 5 {
            q = mixed_basis(&[61, 30, 50, 36, 59], &[]);
        }
        let rescaler = Rescaler::new(&q).unwrap();
        let n = 24;
        for level in 2..=l {
            let q_l = q.prefix(level).unwrap();
            let lower = q.prefix(level - 1).unwrap();
            let last = q.values()[level - 1];
            for (i, m) in lower.values().into_iter().enumerate() {
                let inv = rescaler.q_last_inv_mod_q(level).unwrap()[i];
                assert_eq!(big_mod(&BigUint::from(inv as u128 * last as u128), m), 1);
                assert_eq!(rescaler.half_mod_q(level).unwrap()[i], (last / 2) % m);
                let shoup = (((inv as u128) << 64) / m as u128) as u64;
                assert_eq!(rescaler.q_last_inv_mod_q_shoup(level).unwrap()[i], shoup);
            }
            let mut xs = hard_values(&mut rng, q_l.product(), n);
            // Exact ties of the floor: multiples of q_last and ± half of it.
            xs[8] = BigUint::from(last) * 12345u32;
            xs[9] = BigUint::from(last / 2);
            xs[10] = BigUint::from(last / 2 + 1);
            let input = residues_of(&q_l, &xs);
            let mut out = vec![0u64; (level - 1) * n];
            rescaler.apply(level, &input, &mut out, n).unwrap();
            let mut out2 = vec![0u64; (level - 1) * n];
            rescale_by_last(&q, level, &input, &mut out2, n).unwrap();
            assert_eq!(out, out2);
            let got = lower.poly_reconstruct(&out, n).unwrap();
            let got_c = lower.poly_reconstruct_centered(&out, n).unwrap();
            let q_low = BigInt::from(lower.product().clone());
            for (kk, x) in xs.iter().enumerate() {
                // Unsigned: floor((x + ⌊q_l/2⌋) / q_l) mod Q_{ℓ-1}.
                let want = ((x + last / 2) / last) % lower.product();
                assert_eq!(got[kk], want, "level {level} coefficient {kk}");
                // Centered: round(x_c / q_l), the same residues.
                let mut xc = BigInt::from(x.clone());
                if &xc * 2 > BigInt::from(q_l.product().clone()) {
                    xc -= BigInt::from(q_l.product().clone());
                }
                let r = round_div(&xc, last);
                assert!(
                    ((&got_c[kk] - &r) % &q_low).is_zero(),
                    "centered, coefficient {kk}"
                );
                assert_eq!(
                    got_c[kk], r,
                    "the rounded centered value is itself centered"
                );
            }
        }
    }
}

#[test]
fn rescale_errors_are_typed() {
    let q = basis(50, 3, &[]);
    let r = Rescaler::new(&q).unwrap();
    let n = 4;
    assert!(r.apply(3, &[0; 12], &mut [0; 8], n).is_ok());
    assert!(matches!(
        r.apply(1, &[0; 4], &mut [], n),
        Err(MathError::InvalidArgument(_))
    ));
    assert!(matches!(
        r.apply(4, &[0; 16], &mut [0; 12], n),
        Err(MathError::InvalidArgument(_))
    ));
    assert!(matches!(
        r.apply(3, &[0; 11], &mut [0; 8], n),
        Err(MathError::ShapeMismatch(_))
    ));
    assert!(matches!(
        r.apply(3, &[0; 12], &mut [0; 12], n),
        Err(MathError::ShapeMismatch(_))
    ));
    assert!(matches!(
        r.apply(2, &[], &mut [], 0),
        Err(MathError::InvalidArgument(_))
    ));
    assert!(matches!(
        r.q_last_inv_mod_q(1),
        Err(MathError::InvalidArgument(_))
    ));
    assert!(matches!(
        rescale_by_last(&q, 0, &[], &mut [], n),
        Err(MathError::InvalidArgument(_))
    ));
    let single = Rescaler::new(&basis(40, 1, &[])).unwrap();
    assert!(matches!(
        single.apply(1, &[0; 4], &mut [], n),
        Err(MathError::InvalidArgument(_))
    ));
}

/// Every `dnum` in `1..=L` is accepted; digit sizes differ by at most one, larger first.
#[test]
fn modup_partition_is_even_for_every_dnum() {
    for l in 1..=13usize {
        let q = basis(40, l, &[]);
        let p = basis(61, 1, &q.values());
        for dnum in 1..=l {
            let modup = ModUp::new(&q, &p, dnum).unwrap();
            let sizes: Vec<usize> = modup.digits().iter().map(|r| r.len()).collect();
            assert_eq!(sizes.iter().sum::<usize>(), l);
            assert_eq!(sizes[0], l.div_ceil(dnum), "L = {l}, dnum = {dnum}");
            assert_eq!(*sizes.last().unwrap(), l / dnum, "L = {l}, dnum = {dnum}");
            assert!(sizes.windows(2).all(|w| w[0] >= w[1] && w[0] - w[1] <= 1));
            assert_eq!(modup.active_digits(l), dnum);
        }
    }
}

/// `y` is the centred value of `x` modulo every `p_j`, or (only when `|x| ≥ (1/2 − δ)·Q`) the
/// centred value `± Q`, the same shift for every `j`. Returns how many coefficients were shifted.
fn assert_centered(from: &Basis, to: &Basis, xs: &[BigUint], out: &[u64], delta: f64) -> usize {
    let n = xs.len();
    let q = BigInt::from(from.product().clone());
    let mut shifted = 0;
    for (k, x) in xs.iter().enumerate() {
        let mut c = BigInt::from(x.clone());
        if &c * 2 > q {
            c -= &q;
        }
        let got = column(out, n, k);
        let want = |e: i32| -> Vec<u64> {
            let v = &c + &q * e;
            to.values().iter().map(|&p| big_mod_signed(&v, p)).collect()
        };
        if got == want(0) {
            continue;
        }
        assert!(
            got == want(1) || got == want(-1),
            "coefficient {k}: not the centred value {c} up to ±Q"
        );
        // Only near ±Q/2: |c| ≥ (1/2 − δ)·Q, i.e. Q − 2|c| ≤ 2δ·Q.
        let gap = (q.magnitude() - c.magnitude() * 2u8).to_f64().unwrap() / q.to_f64().unwrap();
        assert!(
            gap <= 2.0 * delta,
            "coefficient {k}: ±Q shift far from ±Q/2 ({c})"
        );
        shifted += 1;
    }
    shifted
}

#[test]
fn convert_centered_is_exact_away_from_half_q() {
    let mut rng = rng(14);
    for (from, to) in pairs() {
        let conv = BaseConverter::new(&from, &to).unwrap();
        for n in [8usize, 40, 300] {
            let xs = hard_values(&mut rng, from.product(), n);
            let input = residues_of(&from, &xs);
            let mut out = vec![0u64; to.len() * n];
            conv.convert_centered(&input, &mut out, n).unwrap();
            assert_centered(&from, &to, &xs, &out, conv.exact_window());
            // Random values (|x| < (1/2 − δ)·Q with overwhelming probability) are exact, and
            // equal to `convert_exact` word for word.
            let (ys, input) = random_poly(&mut rng, &from, from.product(), n);
            conv.convert_centered(&input, &mut out, n).unwrap();
            assert_eq!(
                assert_centered(&from, &to, &ys, &out, conv.exact_window()),
                0
            );
            let mut exact = vec![0u64; to.len() * n];
            conv.convert_exact(&input, &mut exact, n).unwrap();
            assert_eq!(out, exact);
        }
    }
    let conv = BaseConverter::new(&pairs()[0].0, &pairs()[0].1).unwrap();
    let mut out = vec![0u64; 4];
    assert!(matches!(
        conv.convert_centered(&[0; 3], &mut out, 4),
        Err(MathError::ShapeMismatch(_))
    ));
}

/// The `f64` correction near the tie is the plain one: a value just at `(Q−1)/2 + 1` over many
/// limbs lands within the window, where `convert_centered` may differ from `convert_exact` by
/// exactly `±Q` and nothing else.
#[test]
fn convert_centered_near_half_q_is_off_by_q_at_most() {
    let from = basis(61, 12, &[]);
    let to = basis(59, 3, &from.values());
    let conv = BaseConverter::new(&from, &to).unwrap();
    let q = from.product().clone();
    let half = &q / 2u8;
    let mut xs = Vec::new();
    for d in 0u32..64 {
        xs.push(&half + d);
        xs.push(&half - d);
        xs.push(&q - &half + d);
    }
    let n = xs.len();
    let input = residues_of(&from, &xs);
    let mut out = vec![0u64; to.len() * n];
    conv.convert_centered(&input, &mut out, n).unwrap();
    assert_centered(&from, &to, &xs, &out, conv.exact_window());
}

#[test]
fn modup_apply_centered_gives_the_centered_digit() {
    let mut rng = rng(21);
    for (l, k, dnum, qbits, pbits) in [
        (1usize, 1usize, 1usize, 40u32, 61u32),
        (4, 2, 1, 50, 61),
        (5, 2, 3, 45, 60),
        (6, 2, 4, 30, 45),
        (7, 3, 2, 59, 61),
        (6, 1, 6, 60, 61),
    ] {
        let q = basis(qbits, l, &[]);
        let p = basis(pbits, k, &q.values());
        let modup = ModUp::new(&q, &p, dnum).unwrap();
        let n = 24;
        for level in 1..=l {
            let q_l = q.prefix(level).unwrap();
            let ext = q_l.concat(&p).unwrap();
            let (_, poly) = random_poly(&mut rng, &q_l, q_l.product(), n);
            for d in 0..modup.active_digits(level) {
                let r = modup.digit_limbs(d, level).unwrap();
                let input = &poly[r.start * n..r.end * n];
                let mut out = vec![0u64; (level + k) * n];
                modup.apply_centered(d, level, input, &mut out, n).unwrap();
                assert_eq!(&out[r.start * n..r.end * n], input, "own limbs are copied");
                let digit_basis = q.slice(r.clone()).unwrap();
                let x_d = digit_basis.poly_reconstruct_centered(input, n).unwrap();
                let v = ext.poly_reconstruct_centered(&out, n).unwrap();
                assert_eq!(v, x_d, "level {level} digit {d}: the centred digit");
                // The same composition as the converter of this (digit, level).
                let conv = modup.converter(d, level).unwrap();
                let mut conv_out = vec![0u64; conv.to().len() * n];
                conv.convert_centered(input, &mut conv_out, n).unwrap();
                let mut col = 0;
                for limb in 0..level + k {
                    if r.contains(&limb) {
                        continue;
                    }
                    let c = if limb < r.start {
                        limb
                    } else if limb < level {
                        limb - r.len()
                    } else {
                        l - r.len() + (limb - level)
                    };
                    assert_eq!(
                        &out[limb * n..(limb + 1) * n],
                        &conv_out[c * n..(c + 1) * n]
                    );
                    col += 1;
                }
                assert_eq!(col, level + k - r.len());
            }
        }
    }
}

#[test]
fn moddown_apply_rounded_is_round_to_nearest() {
    let mut rng = rng(31);
    for (l, k, qbits, pbits) in [
        (1usize, 1usize, 40u32, 61u32),
        (3, 2, 50, 61),
        (5, 3, 45, 60),
        (4, 8, 36, 30),
    ] {
        let q = basis(qbits, l, &[]);
        let p = basis(pbits, k, &q.values());
        let moddown = ModDown::new(&q, &p).unwrap();
        let pp = BigInt::from(p.product().clone());
        let delta = moddown.converter().exact_window();
        let n = 20;
        for level in 1..=l {
            let q_l = q.prefix(level).unwrap();
            let ext = q_l.concat(&p).unwrap();
            let (mut xs, _) = random_poly(&mut rng, &ext, ext.product(), n);
            xs[0] = ext.product() - 1u8;
            xs[1] = p.product() - 1u8;
            xs[2] = p.product().clone();
            xs[3] = p.product() / 2u8; // x_P = (P-1)/2: rounds down
            xs[4] = p.product() / 2u8 + 1u8; // x_P = (P+1)/2: rounds up
            let input = residues_of(&ext, &xs);
            let mut out = vec![0u64; level * n];
            moddown.apply_rounded(level, &input, &mut out, n).unwrap();
            let got = q_l.poly_reconstruct(&out, n).unwrap();
            let ql = BigInt::from(q_l.product().clone());
            for (kk, (x, g)) in xs.iter().zip(&got).enumerate() {
                let x = BigInt::from(x.clone());
                // round(x / P), halves down (P is odd: no ties).
                let r = (&x * 2 + &pp) / (&pp * 2);
                let diff: BigInt = (BigInt::from(g.clone()) - &r) % &ql;
                let diff = if diff.sign() == num_bigint::Sign::Minus {
                    diff + &ql
                } else {
                    diff
                };
                if diff.is_zero() {
                    continue;
                }
                // Off by one only when [x]_P is within δ·P of ±P/2.
                let xp: BigInt = &x % &pp;
                let dist: BigInt = &xp * 2 - &pp;
                let gap = dist.magnitude().to_f64().unwrap();
                assert!(
                    gap <= 2.0 * delta * pp.to_f64().unwrap()
                        && (diff == BigInt::from(1) || diff == &ql - 1),
                    "level {level} coefficient {kk}: not round(x/P)"
                );
            }
            // The composition: (x − convert_centered(x_P)) · P^{-1} on the first ℓ columns.
            let conv = moddown.converter();
            let mut y = vec![0u64; q.len() * n];
            conv.convert_centered(&input[level * n..], &mut y, n)
                .unwrap();
            for i in 0..level {
                let m = q.modulus(i);
                for t in 0..n {
                    let want = m.mul(
                        m.sub(input[i * n + t], y[i * n + t]),
                        moddown.p_inv_mod_q()[i],
                    );
                    assert_eq!(out[i * n + t], want);
                }
            }
        }
    }
}
