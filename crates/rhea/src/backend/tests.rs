//! Conformance of the primitives: every NTT-domain primitive equals its coefficient-domain
//! `rhea-math` reference conjugated by the NTT, bit for bit, on random inputs at several sizes.

use rhea_math::ntt::negacyclic_mul_naive;
use rhea_math::prime::generate_ntt_primes;

use super::*;
use crate::error::Error;

/// A ring of degree `n` with `lq` Q primes (first 50 bits, then 40) and `lp` 55-bit P primes.
fn ring(n: usize, lq: usize, lp: usize, dnum: usize) -> RnsRing {
    let mut q = generate_ntt_primes(50, n, 1, &[]).unwrap();
    q.extend(generate_ntt_primes(40, n, lq - 1, &q).unwrap());
    let p = generate_ntt_primes(55, n, lp, &q).unwrap();
    RnsRing::new(n, &q, &p, dnum).unwrap()
}

fn random(ring: &RnsRing, shape: PolyShape, form: Form, stream: u64) -> Poly {
    let mut p = ring
        .sample_uniform_from_seed(Device::Cpu, &[7u8; 32], stream, shape)
        .unwrap();
    p.form = form;
    p
}

/// A random key-switching key (`dnum` pairs over the full shape), streams from `stream`.
fn random_key(ring: &RnsRing, full: PolyShape, dnum: usize, stream: u64) -> Vec<[Poly; 2]> {
    (0..dnum as u64)
        .map(|j| {
            [
                random(ring, full, Form::Ntt, stream + 2 * j),
                random(ring, full, Form::Ntt, stream + 1 + 2 * j),
            ]
        })
        .collect()
}

fn words(ring: &RnsRing, p: &Poly) -> Vec<u64> {
    ring.download(p).unwrap()
}

const SIZES: [(usize, usize, usize, usize); 3] = [(16, 3, 1, 3), (256, 5, 2, 3), (2048, 6, 3, 2)];

#[test]
fn ntt_product_is_the_negacyclic_product() {
    for (n, lq, lp, dnum) in SIZES {
        let r = ring(n, lq, lp, dnum);
        let shape = r.shape_qp(lq);
        let a = random(&r, shape, Form::Coefficient, 1);
        let b = random(&r, shape, Form::Coefficient, 2);
        let (mut fa, mut fb) = (a.try_clone().unwrap(), b.try_clone().unwrap());
        r.ntt_forward(&mut fa).unwrap();
        r.ntt_forward(&mut fb).unwrap();
        r.mul_assign(&mut fa, &fb).unwrap();
        r.ntt_inverse(&mut fa).unwrap();
        let (wa, wb, wc) = (words(&r, &a), words(&r, &b), words(&r, &fa));
        for i in 0..shape.limbs() {
            let q = r.modulus(&shape, i);
            let s = i * n..(i + 1) * n;
            let expect = negacyclic_mul_naive(&wa[s.clone()], &wb[s.clone()], q).unwrap();
            assert_eq!(&wc[s], &expect[..], "n = {n}, limb {i}");
        }
    }
}

#[test]
fn automorphism_in_ntt_form_matches_coefficient_form() {
    for (n, lq, lp, dnum) in SIZES {
        let r = ring(n, lq, lp, dnum);
        let shape = r.shape_q(lq);
        let a = random(&r, shape, Form::Coefficient, 3);
        for g in [5u64, 25, 2 * n as u64 - 1, 3, (2 * n as u64) + 5] {
            let want = {
                let mut c = r.automorphism(&a, g).unwrap();
                r.ntt_forward(&mut c).unwrap();
                words(&r, &c)
            };
            let mut fa = a.try_clone().unwrap();
            r.ntt_forward(&mut fa).unwrap();
            let got = r.automorphism(&fa, g).unwrap();
            assert_eq!(words(&r, &got), want, "n = {n}, g = {g}");
        }
        assert!(matches!(r.automorphism(&a, 4), Err(Error::InvalidInput(_))));
    }
}

#[test]
fn automorphisms_compose() {
    let r = ring(256, 2, 1, 2);
    let shape = r.shape_q(2);
    let a = random(&r, shape, Form::Ntt, 4);
    let two_n = 512u64;
    let ab = r.automorphism(&r.automorphism(&a, 5).unwrap(), 25).unwrap();
    let direct = r.automorphism(&a, 125 % two_n).unwrap();
    assert_eq!(words(&r, &ab), words(&r, &direct));
    // g and its inverse modulo 2N cancel.
    let g_inv = (1..two_n)
        .step_by(2)
        .find(|x| (x * 5) % two_n == 1)
        .unwrap();
    let back = r
        .automorphism(&r.automorphism(&a, 5).unwrap(), g_inv)
        .unwrap();
    assert_eq!(words(&r, &back), words(&r, &a));
}

#[test]
fn rescale_in_ntt_form_matches_coefficient_form() {
    for (n, lq, lp, dnum) in SIZES {
        let r = ring(n, lq, lp, dnum);
        for ell in 2..=lq {
            let a = random(&r, r.shape_q(ell), Form::Coefficient, 5 + ell as u64);
            let want = r.rescale(&a).unwrap();
            let mut fa = a.try_clone().unwrap();
            r.ntt_forward(&mut fa).unwrap();
            let mut got = r.rescale(&fa).unwrap();
            assert_eq!(got.shape(), r.shape_q(ell - 1));
            r.ntt_inverse(&mut got).unwrap();
            assert_eq!(words(&r, &got), words(&r, &want), "n = {n}, ell = {ell}");
        }
    }
}

/// ModDown of `x + NTT(e)` with `e` left in coefficient form: the words of the composition, at
/// every level (random `x` in NTT form, random `e` of every residue, not small).
#[test]
fn mod_down_adding_a_coefficient_addend_is_the_composition() {
    for (n, lq, lp, dnum) in SIZES {
        let r = ring(n, lq, lp, dnum);
        for ell in 1..=lq {
            let x = random(&r, r.shape_qp(ell), Form::Ntt, 40 + ell as u64);
            let e = random(&r, r.shape_qp(ell), Form::Coefficient, 60 + ell as u64);
            assert!(words(&r, &e).iter().any(|&w| w != 0));
            let got = r.mod_down_adding(&x, &e).unwrap();
            let mut en = e.try_clone().unwrap();
            r.ntt_forward(&mut en).unwrap();
            let mut sum = x.try_clone().unwrap();
            r.add_assign(&mut sum, &en).unwrap();
            let want = r.mod_down(&sum).unwrap();
            assert_eq!(words(&r, &got), words(&r, &want), "n = {n}, level {ell}");
            assert_ne!(words(&r, &got), words(&r, &r.mod_down(&x).unwrap()));
        }
    }
}

#[test]
fn mod_down_in_ntt_form_is_exact_rounding() {
    use num_bigint::BigInt;
    use num_traits::Zero;
    for (n, lq, lp, dnum) in SIZES {
        let r = ring(n, lq, lp, dnum);
        for ell in 1..=lq {
            let a = random(&r, r.shape_qp(ell), Form::Coefficient, 20 + ell as u64);
            let wa = words(&r, &a);
            let mut fa = a.try_clone().unwrap();
            r.ntt_forward(&mut fa).unwrap();
            let mut got = r.mod_down(&fa).unwrap();
            r.ntt_inverse(&mut got).unwrap();
            let got = words(&r, &got);
            // Reference with big integers: the centred x over Q_ℓ·P, rounded x / P, reduced.
            let qp: Vec<u64> = (0..ell + lp)
                .map(|i| r.modulus(&fa.shape(), i).value())
                .collect();
            let basis = rhea_math::basis::Basis::new(&qp).unwrap();
            let xs = basis.poly_reconstruct_centered(&wa, n).unwrap();
            let p_big: BigInt = r.p().values().iter().map(|&v| BigInt::from(v)).product();
            let half = &p_big / 2;
            for (k, x) in xs.iter().enumerate().take(64) {
                // round(x / P) with ties away from zero never happens (P odd).
                let num = if x >= &BigInt::zero() {
                    x + &half
                } else {
                    x - &half
                };
                let q: BigInt = &num / &p_big;
                for i in 0..ell {
                    let m = BigInt::from(r.modulus(&r.shape_q(ell), i).value());
                    let want = ((&q % &m) + &m) % &m;
                    assert_eq!(
                        BigInt::from(got[i * n + k]),
                        want,
                        "n = {n}, ell = {ell}, k = {k}"
                    );
                }
            }
        }
    }
}

#[test]
fn mod_up_in_ntt_form_is_the_centred_digit() {
    use num_bigint::BigInt;
    for (n, lq, lp, dnum) in SIZES {
        let r = ring(n, lq, lp, dnum);
        for ell in 1..=lq {
            let a = random(&r, r.shape_q(ell), Form::Coefficient, 40 + ell as u64);
            let wa = words(&r, &a);
            let mut fa = a.try_clone().unwrap();
            r.ntt_forward(&mut fa).unwrap();
            let digits = r.mod_up(&fa).unwrap();
            assert_eq!(digits.len(), r.active_digits(ell));
            let shape = r.shape_qp(ell);
            for (d, got) in digits.into_iter().enumerate() {
                let lim = r.keyswitch_plan().mod_up().digit_limbs(d, ell).unwrap();
                let mut got = got;
                r.ntt_inverse(&mut got).unwrap();
                let got = words(&r, &got);
                // Reference: the centred integer of the digit's limbs, reduced modulo every limb.
                let dq: Vec<u64> = lim.clone().map(|i| r.modulus(&shape, i).value()).collect();
                let basis = rhea_math::basis::Basis::new(&dq).unwrap();
                let xs = basis
                    .poly_reconstruct_centered(&wa[lim.start * n..lim.end * n], n)
                    .unwrap();
                for (k, x) in xs.iter().enumerate().take(64) {
                    for i in 0..shape.limbs() {
                        let m = BigInt::from(r.modulus(&shape, i).value());
                        let want = ((x % &m) + &m) % &m;
                        assert_eq!(
                            BigInt::from(got[i * n + k]),
                            want,
                            "n = {n}, ell = {ell}, digit {d}, limb {i}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn inner_product_matches_mul_add() {
    for (n, lq, lp, dnum) in SIZES {
        let r = ring(n, lq, lp, dnum);
        let full = r.full_shape();
        let key = random_key(&r, full, dnum, 100);
        for ell in 1..=lq {
            let a = random(&r, r.shape_q(ell), Form::Ntt, 60 + ell as u64);
            let digits = r.mod_up(&a).unwrap();
            let [g0, g1] = r.keyswitch_inner_product(&digits, &key).unwrap();
            // Reference: restrict each key part to Q_ℓ ∪ P by hand, then mul-add.
            let shape = r.shape_qp(ell);
            let restrict = |p: &Poly| {
                let w = words(&r, p);
                let mut v = w[..ell * n].to_vec();
                v.extend_from_slice(&w[lq * n..]);
                r.upload(Device::Cpu, v, shape, Form::Ntt).unwrap()
            };
            let mut w0 = r.zero(Device::Cpu, shape, Form::Ntt).unwrap();
            let mut w1 = r.zero(Device::Cpu, shape, Form::Ntt).unwrap();
            for (d, [b, a]) in digits.iter().zip(&key) {
                r.mul_add_assign(&mut w0, d, &restrict(b)).unwrap();
                r.mul_add_assign(&mut w1, d, &restrict(a)).unwrap();
            }
            assert_eq!(words(&r, &g0), words(&r, &w0), "n = {n}, ell = {ell}");
            assert_eq!(words(&r, &g1), words(&r, &w1), "n = {n}, ell = {ell}");
        }
    }
}

#[test]
fn element_wise_ops_and_scalars() {
    let n = 256;
    let r = ring(n, 3, 1, 3);
    let shape = r.shape_q(3);
    let a = random(&r, shape, Form::Ntt, 200);
    let b = random(&r, shape, Form::Ntt, 201);
    let (wa, wb) = (words(&r, &a), words(&r, &b));
    let sum = r.add(&a, &b).unwrap();
    let diff = r.sub(&a, &b).unwrap();
    let mut neg = a.try_clone().unwrap();
    r.neg_assign(&mut neg).unwrap();
    let mut from = a.try_clone().unwrap();
    r.sub_from_assign(&mut from, &b).unwrap();
    let scalars: Vec<u64> = (0..3).map(|i| 12345 + i).collect();
    let mut sc = a.try_clone().unwrap();
    r.mul_scalar_assign(&mut sc, &scalars).unwrap();
    let mut acc = b.try_clone().unwrap();
    r.mul_scalar_add_assign(&mut acc, &a, &scalars).unwrap();
    let mut ms = b.try_clone().unwrap();
    r.mul_sub_assign(&mut ms, &a, &a).unwrap();
    let mut cst = a.try_clone().unwrap();
    r.add_scalar_assign(&mut cst, &scalars).unwrap();
    for (i, &c) in scalars.iter().enumerate() {
        let q = r.modulus(&shape, i);
        for k in 0..n {
            let j = i * n + k;
            assert_eq!(words(&r, &sum)[j], q.add(wa[j], wb[j]));
            assert_eq!(words(&r, &diff)[j], q.sub(wa[j], wb[j]));
            assert_eq!(words(&r, &neg)[j], q.neg(wa[j]));
            assert_eq!(words(&r, &from)[j], q.sub(wb[j], wa[j]));
            assert_eq!(words(&r, &sc)[j], q.mul(wa[j], c));
            assert_eq!(words(&r, &acc)[j], q.mul_add(wa[j], c, wb[j]));
            assert_eq!(words(&r, &ms)[j], q.sub(wb[j], q.mul(wa[j], wa[j])));
            assert_eq!(words(&r, &cst)[j], q.add(wa[j], c));
        }
    }
    // A higher-level operand is read as a view of its first limbs.
    let low = r.drop_q_limbs(&a, 2).unwrap();
    let s2 = r.add(&low, &b).unwrap();
    assert_eq!(words(&r, &s2), words(&r, &sum)[..2 * n].to_vec());
}

#[test]
fn mismatches_are_typed_errors() {
    let r = ring(16, 3, 1, 3);
    let a = random(&r, r.shape_q(2), Form::Ntt, 1);
    let b = random(&r, r.shape_q(3), Form::Coefficient, 2);
    let c = random(&r, r.shape_qp(2), Form::Ntt, 3);
    let mut x = a.try_clone().unwrap();
    assert!(matches!(
        r.add_assign(&mut x, &b),
        Err(Error::FormMismatch { .. })
    ));
    // A lower-level operand cannot stand in for a higher-level one.
    let mut y = random(&r, r.shape_q(3), Form::Ntt, 4);
    assert!(matches!(
        r.add_assign(&mut y, &a),
        Err(Error::ShapeMismatch { .. })
    ));
    assert!(matches!(
        r.add_assign(&mut x, &c),
        Err(Error::ShapeMismatch { .. })
    ));
    assert!(matches!(
        r.mul_scalar_assign(&mut x, &[1]),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(r.rescale(&c), Err(Error::ShapeMismatch { .. })));
    assert!(matches!(
        r.ntt_forward(&mut x),
        Err(Error::FormMismatch { .. })
    ));
    assert!(matches!(
        r.upload(Device::Cpu, vec![0; 5], r.shape_q(1), Form::Ntt),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        r.zero(Device::Cuda(999), r.shape_q(1), Form::Ntt),
        Err(Error::DeviceNotSupported { .. } | Error::Gpu(_))
    ));
    let too_big = vec![u64::MAX; 16];
    assert!(r
        .upload(Device::Cpu, too_big, r.shape_q(1), Form::Ntt)
        .is_err());
}

#[test]
fn centred_download_matches_big_integers() {
    use num_traits::ToPrimitive;
    for (n, lq, lp, dnum) in SIZES {
        let r = ring(n, lq, lp, dnum);
        for ell in 1..=lq {
            let shape = r.shape_q(ell);
            // Random residues (values spread over all of Q), then small signed values.
            let a = random(&r, shape, Form::Coefficient, 300 + ell as u64);
            let small: Vec<i64> = (0..n as i64)
                .map(|k| (k * 7919 % 2001 - 1000) << 20)
                .collect();
            let b = r.from_signed(Device::Cpu, &small, shape).unwrap();
            let basis = r.q().prefix(ell).unwrap();
            for p in [&a, &b] {
                let got = r.download_centered_f64(p).unwrap();
                let want = basis.poly_reconstruct_centered(&words(&r, p), n).unwrap();
                for (g, w) in got.iter().zip(&want) {
                    let w = w.to_f64().unwrap();
                    assert!(
                        (g - w).abs() <= w.abs() * 1e-15,
                        "n = {n}, ell = {ell}: {g} vs {w}"
                    );
                }
            }
            let got = r.download_centered_f64(&b).unwrap();
            assert!(got.iter().zip(&small).all(|(g, s)| *g == *s as f64));
        }
    }
}

/// `keyswitch_moddown_with` one digit and the inner addends is public-key encryption's old
/// sequence word for word: `m + ModDown(e_0 + v·b)`, `ModDown(e_1 + v·a)` with `b, a` dropped to
/// the level (the CPU composition; `gpu_backend` compares the GPU path with it).
#[test]
fn keyswitch_moddown_with_one_digit_is_encryption() {
    let (n, lq, lp, dnum) = (256, 4, 2, 2);
    let r = ring(n, lq, lp, dnum);
    let full = r.full_shape();
    let pk = random_key(&r, full, 1, 700);
    for ell in 1..=lq {
        let shape = r.shape_qp(ell);
        let v = random(&r, shape, Form::Ntt, 710 + ell as u64);
        let e0 = random(&r, shape, Form::Ntt, 720 + ell as u64);
        let e1 = random(&r, shape, Form::Ntt, 730 + ell as u64);
        let m = random(&r, r.shape_q(ell), Form::Ntt, 740 + ell as u64);
        let got = r
            .keyswitch_moddown_with(
                std::slice::from_ref(&v),
                &pk,
                [Some(&e0), Some(&e1)],
                [Some(&m), None],
            )
            .unwrap();
        let mut want = Vec::new();
        for (c, e) in [&e0, &e1].into_iter().enumerate() {
            let k = r.drop_q_limbs(&pk[0][c], ell).unwrap();
            let mut x = e.try_clone().unwrap();
            r.mul_add_assign(&mut x, &v, &k).unwrap();
            let mut u = r.mod_down(&x).unwrap();
            if c == 0 {
                r.add_assign(&mut u, &m).unwrap();
            }
            want.push(u);
        }
        for c in 0..2 {
            assert_eq!(
                words(&r, &got[c]),
                words(&r, &want[c]),
                "ell = {ell}, c = {c}"
            );
        }
        // An inner addend of the wrong shape is a typed error.
        let bad = random(&r, r.shape_q(ell), Form::Ntt, 750);
        let res = r.keyswitch_moddown_with(
            std::slice::from_ref(&v),
            &pk,
            [Some(&bad), None],
            [None, None],
        );
        assert!(res.is_err(), "ell = {ell}: {res:?}");
    }
}

/// The merged key-switching tail equals the composition of the unfused primitives: the inner
/// product as `mul_add_assign`s of the digits with the key restricted to `Q_ℓ ∪ P` by hand,
/// `mod_down` of each half, the addends by `add_assign`, then `rescale` (not the fused
/// `keyswitch_moddown`, which the CPU path of `keyswitch_moddown_rescale` itself calls). The
/// GPU tests (`gpu_backend`) compare the fused device path with the CPU. A single Q limb is a
/// typed error, not a panic.
#[test]
fn keyswitch_moddown_rescale_is_the_composition() {
    let (n, lq, lp, dnum) = (256, 5, 2, 3);
    let r = ring(n, lq, lp, dnum);
    let full = r.full_shape();
    let key = random_key(&r, full, dnum, 300);
    for ell in 1..=lq {
        let d = random(&r, r.shape_q(ell), Form::Ntt, 400 + ell as u64);
        let c0 = random(&r, r.shape_q(ell), Form::Ntt, 500 + ell as u64);
        let c1 = random(&r, r.shape_q(ell), Form::Ntt, 600 + ell as u64);
        let digits = r.mod_up(&d).unwrap();
        // Both addend patterns the evaluator uses: relinearisation adds c_0 only; a key
        // switching of a whole ciphertext adds both halves.
        for adds in [[Some(&c0), None], [Some(&c0), Some(&c1)]] {
            let got = r.keyswitch_moddown_rescale(&digits, &key, adds);
            if ell == 1 {
                assert!(matches!(got, Err(Error::InvalidInput(_))), "{got:?}");
                continue;
            }
            let got = got.unwrap();
            // The inner product by hand over Q_ℓ ∪ P.
            let shape = r.shape_qp(ell);
            let restrict = |p: &Poly| {
                let w = words(&r, p);
                let mut v = w[..ell * n].to_vec();
                v.extend_from_slice(&w[lq * n..]);
                r.upload(Device::Cpu, v, shape, Form::Ntt).unwrap()
            };
            let mut acc = [
                r.zero(Device::Cpu, shape, Form::Ntt).unwrap(),
                r.zero(Device::Cpu, shape, Form::Ntt).unwrap(),
            ];
            for (dj, kj) in digits.iter().zip(&key) {
                for c in 0..2 {
                    r.mul_add_assign(&mut acc[c], dj, &restrict(&kj[c]))
                        .unwrap();
                }
            }
            for c in 0..2 {
                let mut u = r.mod_down(&acc[c]).unwrap();
                if let Some(x) = adds[c] {
                    r.add_assign(&mut u, x).unwrap();
                }
                let want = r.rescale(&u).unwrap();
                assert_eq!(
                    words(&r, &got[c]),
                    words(&r, &want),
                    "ell = {ell}, c = {c}, addends {}",
                    adds.iter().filter(|a| a.is_some()).count()
                );
                assert_eq!(got[c].shape(), r.shape_q(ell - 1));
            }
        }
    }
}

#[test]
fn sums_of_products_are_the_sums_over_their_present_terms() {
    let (n, lq, lp, dnum) = SIZES[0];
    let r = ring(n, lq, lp, dnum);
    let shape = r.shape_qp(lq);
    let right: Vec<[Poly; 2]> = (0..4)
        .map(|i| {
            [
                random(&r, shape, Form::Ntt, 300 + 2 * i),
                random(&r, shape, Form::Ntt, 301 + 2 * i),
            ]
        })
        .collect();
    let left: Vec<Poly> = (0..3)
        .map(|i| random(&r, shape, Form::Ntt, 400 + i))
        .collect();
    let rr: Vec<[&Poly; 2]> = right.iter().map(|[a, b]| [a, b]).collect();
    // sum 0: terms 0 and 2; sum 1: term 3 only
    let rows = vec![
        vec![Some(&left[0]), None, Some(&left[1]), None],
        vec![None, None, None, Some(&left[2])],
    ];
    let got = r.sums_of_products(&rr, &rows).unwrap();
    for c in 0..2 {
        let mut want0 = r.mul(&left[0], &right[0][c]).unwrap();
        r.mul_add_assign(&mut want0, &left[1], &right[2][c])
            .unwrap();
        assert_eq!(words(&r, &got[0][c]), words(&r, &want0));
        let want1 = r.mul(&left[2], &right[3][c]).unwrap();
        assert_eq!(words(&r, &got[1][c]), words(&r, &want1));
        assert_ne!(words(&r, &got[0][c]), words(&r, &got[1][c]));
    }
    // Bad input: no right operands, no sums, a short row, a sum without terms, mixed shapes.
    let other = random(&r, r.shape_qp(lq - 1), Form::Ntt, 9);
    assert!(r.sums_of_products(&[], &rows).is_err());
    assert!(r.sums_of_products(&rr, &[]).is_err());
    assert!(r.sums_of_products(&rr, &[vec![Some(&left[0])]]).is_err());
    assert!(r.sums_of_products(&rr, &[vec![None; 4]]).is_err());
    assert!(r
        .sums_of_products(&rr, &[vec![Some(&other), None, None, None]])
        .is_err());
}

#[test]
fn sum_of_products_is_the_sum_of_the_products() {
    for (n, lq, lp, dnum) in SIZES {
        let r = ring(n, lq, lp, dnum);
        // Extended shapes at the top and a lower level, a Q-only shape; 1, 5 and 40 terms.
        for (shape, terms) in [
            (r.shape_qp(lq), 5),
            (r.shape_qp(lq - 1), 40),
            (r.shape_q(lq - 1), 1),
        ] {
            let xs: Vec<Poly> = (0..terms)
                .map(|i| random(&r, shape, Form::Ntt, 100 + 3 * i as u64))
                .collect();
            let ys: Vec<[Poly; 2]> = (0..terms)
                .map(|i| {
                    [
                        random(&r, shape, Form::Ntt, 101 + 3 * i as u64),
                        random(&r, shape, Form::Ntt, 102 + 3 * i as u64),
                    ]
                })
                .collect();
            let a: Vec<&Poly> = xs.iter().collect();
            let b: Vec<[&Poly; 2]> = ys.iter().map(|[y0, y1]| [y0, y1]).collect();
            let got = r.sum_of_products(&a, &b).unwrap();
            for c in 0..2 {
                let mut want = r.mul(&xs[0], &ys[0][c]).unwrap();
                for (x, y) in xs.iter().zip(&ys).skip(1) {
                    r.mul_add_assign(&mut want, x, &y[c]).unwrap();
                }
                assert_eq!(words(&r, &got[c]), words(&r, &want), "n={n} {shape:?} {c}");
                assert!(words(&r, &want).iter().any(|&w| w != 0));
            }
        }
        // Bad input: no terms, unequal counts, mixed shapes.
        let x = random(&r, r.shape_qp(lq), Form::Ntt, 1);
        let y = random(&r, r.shape_qp(lq - 1), Form::Ntt, 2);
        assert!(r.sum_of_products(&[], &[]).is_err());
        assert!(r.sum_of_products(&[&x, &x], &[[&x, &x]]).is_err());
        assert!(r.sum_of_products(&[&x], &[[&y, &x]]).is_err());
    }
}

/// `lift` to an extended shape is the centred lift of every word to every `Q ∪ P` limb;
/// `lift_many` gives the same words; bad input is refused.
#[test]
fn lift_and_lift_many_give_the_centred_residues() {
    for (n, lq, lp, dnum) in SIZES {
        let r = ring(n, lq, lp, dnum);
        let q0 = *r.modulus(&r.shape_q(1), 0);
        let lows: Vec<Poly> = (0..3)
            .map(|s| random(&r, r.shape_q(1), Form::Coefficient, 60 + s))
            .collect();
        let shape = r.shape_qp(lq.min(2));
        let many = r
            .lift_many(&lows.iter().collect::<Vec<_>>(), shape)
            .unwrap();
        for (low, m) in lows.iter().zip(&many) {
            let one = r.lift(low, shape).unwrap();
            assert_eq!(words(&r, &one), words(&r, m));
            let (w0, w) = (words(&r, low), words(&r, &one));
            for i in 0..shape.limbs() {
                let qi = r.modulus(&shape, i);
                for k in 0..n {
                    assert_eq!(w[i * n + k], qi.reduce_i64(q0.center(w0[k])), "limb {i}");
                }
            }
        }
        let mut ntt = lows[0].try_clone().unwrap();
        r.ntt_forward(&mut ntt).unwrap();
        assert!(r.lift(&ntt, shape).is_err(), "NTT form");
        assert!(r.lift(&many[0], shape).is_err(), "several limbs");
        assert!(
            r.lift_many(&[&lows[0], &ntt], shape).is_err(),
            "one bad of two"
        );
    }
}

#[test]
fn mod_raise_lifts_the_centred_coefficients() {
    for (n, lq, lp, dnum) in SIZES {
        let r = ring(n, lq, lp, dnum);
        let low = random(&r, r.shape_q(1), Form::Coefficient, 50);
        let q0 = *r.modulus(&r.shape_q(1), 0);
        let words0 = words(&r, &low);
        // Both halves of the centred range occur.
        assert!(
            words0.iter().any(|&w| w > q0.value() / 2)
                && words0.iter().any(|&w| w < q0.value() / 2)
        );
        let up = r.mod_raise(&low, lq).unwrap();
        assert_eq!(up.shape(), r.shape_q(lq));
        let w = words(&r, &up);
        for i in 0..lq {
            let qi = r.modulus(&up.shape(), i);
            for k in 0..n {
                assert_eq!(
                    w[i * n + k],
                    qi.reduce_i64(q0.center(words0[k])),
                    "limb {i} coeff {k}"
                );
            }
        }
        // In NTT form: the raise of the transform is the transform of the raise.
        let mut low_ntt = low.try_clone().unwrap();
        r.ntt_forward(&mut low_ntt).unwrap();
        let mut want = up.try_clone().unwrap();
        r.ntt_forward(&mut want).unwrap();
        assert_eq!(
            words(&r, &r.mod_raise(&low_ntt, lq).unwrap()),
            words(&r, &want)
        );
        // Bad input: two limbs in, no limb or too many out.
        assert!(r.mod_raise(&up, lq).is_err());
        assert!(r.mod_raise(&low, 0).is_err());
        assert!(r.mod_raise(&low, lq + 1).is_err());
    }
}
