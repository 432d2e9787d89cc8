//! RNS bases: CRT round trips against `num-bigint`, constants, polynomial helpers, errors.

#[path = "rns_helpers.rs"]
mod helpers;

use helpers::*;
use num_bigint::{BigInt, BigUint};
use num_traits::{One, Zero};
use rhea_math::basis::Basis;
use rhea_math::MathError;

/// Bases of 1..=8 limbs with primes of 30..=61 bits (some mixed).
fn bases() -> Vec<Basis> {
    vec![
        basis(30, 1, &[]),
        basis(61, 1, &[]),
        basis(61, 2, &[]),
        basis(36, 3, &[]),
        basis(45, 4, &[]),
        basis(50, 5, &[]),
        basis(59, 6, &[]),
        basis(60, 7, &[]),
        basis(61, 8, &[]),
        mixed_basis(&[30, 61, 40, 55, 33, 60, 47, 58], &[]),
    ]
}

#[test]
fn rns_basis_is_send_sync_clone() {
    fn check<T: Send + Sync + Clone + std::fmt::Debug>() {}
    check::<Basis>();
}

#[test]
fn crt_round_trip_against_bigint() {
    let mut rng = rng(1);
    for b in bases() {
        let q = b.product().clone();
        let expected_q = b.values().iter().fold(BigUint::one(), |acc, &v| acc * v);
        assert_eq!(q, expected_q);
        for _ in 0..50 {
            let x = random_below(&mut rng, &q);
            let r = b.decompose(&x);
            let want: Vec<u64> = b.values().iter().map(|&m| big_mod(&x, m)).collect();
            assert_eq!(r, want);
            assert_eq!(b.reconstruct(&r).unwrap(), x);
            // Integers above Q wrap modulo Q.
            let big = &x + &q * 12345u32 + &q * &q;
            assert_eq!(b.reconstruct(&b.decompose(&big)).unwrap(), x);
        }
        let top = &q - 1u8;
        assert_eq!(b.reconstruct(&b.decompose(&top)).unwrap(), top);
        assert_eq!(b.reconstruct(&vec![0; b.len()]).unwrap(), BigUint::zero());
    }
}

#[test]
fn centered_round_trip_including_the_ends() {
    let mut rng = rng(2);
    for b in bases() {
        let q = BigInt::from(b.product().clone());
        let half: BigInt = &q / 2; // Q odd: the range is [-(Q-1)/2, (Q-1)/2]
        for _ in 0..50 {
            let x = random_centered(&mut rng, b.product());
            let r = b.decompose_signed(&x);
            let want: Vec<u64> = b.values().iter().map(|&m| big_mod_signed(&x, m)).collect();
            assert_eq!(r, want);
            assert_eq!(b.reconstruct_centered(&r).unwrap(), x);
        }
        for x in [
            half.clone(),
            -half.clone(),
            &half - 1,
            1 - &half,
            BigInt::from(-1),
            BigInt::from(1),
            BigInt::zero(),
        ] {
            assert_eq!(b.reconstruct_centered(&b.decompose_signed(&x)).unwrap(), x);
        }
        // (Q+1)/2 is outside (-Q/2, Q/2]: it comes back as (Q+1)/2 - Q.
        let over = &half + 1;
        assert_eq!(
            b.reconstruct_centered(&b.decompose_signed(&over)).unwrap(),
            &over - &q
        );
    }
}

#[test]
fn centered_tie_with_an_even_modulus() {
    // Q = 2^20 · 97 is even: Q/2 stays positive, -Q/2 maps to +Q/2.
    let b = Basis::new(&[1 << 20, 97]).unwrap();
    let half = BigInt::from(b.product().clone()) / 2;
    assert_eq!(
        b.reconstruct_centered(&b.decompose_signed(&half)).unwrap(),
        half
    );
    assert_eq!(
        b.reconstruct_centered(&b.decompose_signed(&-half.clone()))
            .unwrap(),
        half
    );
    let below = 1 - &half;
    assert_eq!(
        b.reconstruct_centered(&b.decompose_signed(&below)).unwrap(),
        below
    );
}

#[test]
fn crt_constants() {
    for b in bases() {
        assert_eq!(b.q_hat_inv_mod_q().len(), b.len());
        for (i, m) in b.moduli().iter().enumerate() {
            let q = m.value();
            let q_hat = b.product() / q;
            assert_eq!(b.q_hat()[i], q_hat);
            let w = b.q_hat_inv_mod_q()[i];
            assert!(w < q);
            assert_eq!(big_mod(&(q_hat * w), q), 1 % q);
            let shoup = (((w as u128) << 64) / q as u128) as u64;
            assert_eq!(b.q_hat_inv_mod_q_shoup()[i], shoup);
        }
    }
}

#[test]
fn prefix_slice_concat() {
    let q = basis(50, 6, &[]);
    let p = basis(61, 3, &q.values());
    for k in 1..=q.len() {
        let pre = q.prefix(k).unwrap();
        assert_eq!(pre.values(), q.values()[..k].to_vec());
        assert_eq!(pre, Basis::new(&q.values()[..k]).unwrap());
    }
    let s = q.slice(2..5).unwrap();
    assert_eq!(s, Basis::new(&q.values()[2..5]).unwrap());
    let qp = q.concat(&p).unwrap();
    assert_eq!(qp.len(), 9);
    assert_eq!(qp.values()[..6], q.values()[..]);
    assert_eq!(qp.values()[6..], p.values()[..]);
    assert_eq!(qp.product(), &(q.product() * p.product()));
    assert_eq!(qp.modulus(7).value(), p.values()[1]);
    assert!(qp.get(9).is_none());
    assert!(!qp.is_empty());

    assert!(matches!(q.prefix(0), Err(MathError::InvalidArgument(_))));
    assert!(matches!(q.prefix(7), Err(MathError::InvalidArgument(_))));
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = q.slice(4..2);
    assert!(matches!(reversed, Err(MathError::InvalidArgument(_))));
    assert!(matches!(q.slice(3..3), Err(MathError::InvalidArgument(_))));
    assert!(matches!(q.concat(&q), Err(MathError::InvalidBasis(_))));
    assert!(matches!(
        q.concat(&q.slice(2..3).unwrap()),
        Err(MathError::InvalidBasis(_))
    ));
}

#[test]
fn bad_bases_are_typed_errors() {
    assert!(matches!(Basis::new(&[]), Err(MathError::InvalidBasis(_))));
    assert!(matches!(
        Basis::new(&[97, 193, 97]),
        Err(MathError::InvalidBasis(_))
    ));
    assert!(matches!(
        Basis::new(&[15, 97, 21]),
        Err(MathError::InvalidBasis(_))
    ));
    assert!(matches!(
        Basis::new(&[1 << 20, 6]),
        Err(MathError::InvalidBasis(_))
    ));
    assert!(matches!(
        Basis::new(&[97, 1]),
        Err(MathError::InvalidModulus { value: 1, .. })
    ));
    assert!(matches!(
        Basis::new(&[0]),
        Err(MathError::InvalidModulus { value: 0, .. })
    ));
    assert!(matches!(
        Basis::new(&[97, 1 << 61]),
        Err(MathError::InvalidModulus { .. })
    ));
    // Coprime composite moduli are fine.
    assert!(Basis::new(&[15, 77, 1 << 10]).is_ok());
}

#[test]
fn residue_checks_are_typed_errors() {
    let b = basis(40, 3, &[]);
    assert!(matches!(
        b.reconstruct(&[1, 2]),
        Err(MathError::ShapeMismatch(_))
    ));
    assert!(matches!(
        b.reconstruct_centered(&[1, 2, 3, 4]),
        Err(MathError::ShapeMismatch(_))
    ));
    let q0 = b.values()[0];
    assert!(matches!(
        b.reconstruct(&[q0, 0, 0]),
        Err(MathError::InvalidArgument(_))
    ));
    assert!(matches!(
        b.poly_reconstruct_centered(&[0; 7], 2),
        Err(MathError::ShapeMismatch(_))
    ));
    assert!(matches!(
        b.poly_reconstruct_centered(&[], 0),
        Err(MathError::InvalidArgument(_))
    ));
    let mut data = vec![1u64; 6];
    data[3] = b.values()[1];
    assert!(matches!(
        b.poly_reconstruct_centered(&data, 2),
        Err(MathError::InvalidArgument(_))
    ));
}

#[test]
fn polynomial_helpers() {
    let mut rng = rng(3);
    for b in bases() {
        for n in [1usize, 8, 64] {
            // Small signed coefficients, including the i64 extremes.
            let mut coeffs: Vec<i64> = (0..n)
                .map(|k| ((k as i64).wrapping_mul(0x9e37_79b9_7f4a_7c15u64 as i64) >> 3) ^ 1)
                .collect();
            coeffs[0] = i64::MIN;
            if n > 1 {
                coeffs[n - 1] = i64::MAX;
            }
            let data = b.poly_from_signed(&coeffs);
            assert_eq!(data.len(), b.len() * n);
            let big: Vec<BigInt> = coeffs.iter().map(|&c| BigInt::from(c)).collect();
            for (i, m) in b.values().into_iter().enumerate() {
                for k in 0..n {
                    assert_eq!(data[i * n + k], big_mod_signed(&big[k], m));
                }
            }
            assert_eq!(b.poly_from_bigints(&big), data);
            let back = b.poly_reconstruct_centered(&data, n).unwrap();
            if b.product().bits() > 65 {
                assert_eq!(back, big);
            }
            for (k, x) in back.iter().enumerate() {
                assert_eq!(b.decompose_signed(x), column(&data, n, k));
            }

            // Big centered coefficients round-trip exactly.
            let xs: Vec<BigInt> = (0..n)
                .map(|_| random_centered(&mut rng, b.product()))
                .collect();
            let data = b.poly_from_bigints(&xs);
            assert_eq!(b.poly_reconstruct_centered(&data, n).unwrap(), xs);
            let unsigned = b.poly_reconstruct(&data, n).unwrap();
            for (u, x) in unsigned.iter().zip(&xs) {
                let q = BigInt::from(b.product().clone());
                assert_eq!(BigInt::from(u.clone()), ((x % &q) + &q) % &q);
            }
        }
        assert!(b.poly_from_signed(&[]).is_empty());
    }
}
