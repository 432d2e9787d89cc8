//! BGV encoding and slot layout: batch round trips, the `2 × N/2` matrix under rotations and the
//! column swap, the inner sum, coefficient encoding with a non-batching `t`, and the modulus
//! switch checked word for word against the `rhea-math` oracle.

mod bgv_common;

use bgv_common::{setup, Plain, Rng};
use rhea::bgv::{BgvContext, BgvParametersLiteral, Decryptor, Encoder, Encryptor, KeyGenerator};
use rhea::unstable::math::bgv_rescale::BgvRescaler;
use rhea::unstable::math::Modulus;
use rhea::unstable::HasRing;
use rhea::{Device, Error};

/// `m(X^g) mod (X^N + 1, t)` on coefficients.
fn automorphism(m: &[u64], g: u64, t: u64) -> Vec<u64> {
    let n = m.len();
    let mut out = vec![0u64; n];
    for (i, &c) in m.iter().enumerate() {
        let e = (i as u64 * g) % (2 * n as u64);
        let (j, neg) = if e >= n as u64 {
            (e as usize - n, true)
        } else {
            (e as usize, false)
        };
        out[j] = if neg { (t - c) % t } else { c };
    }
    out
}

/// The negacyclic product modulo `t`, naively.
fn negacyclic(a: &[u64], b: &[u64], t: u64) -> Vec<u64> {
    let n = a.len();
    let mut out = vec![0u128; n];
    let t128 = t as u128;
    for (i, &x) in a.iter().enumerate() {
        for (j, &y) in b.iter().enumerate() {
            let p = x as u128 * y as u128 % t128;
            let k = i + j;
            if k < n {
                out[k] = (out[k] + p) % t128;
            } else {
                out[k - n] = (out[k - n] + t128 - p) % t128;
            }
        }
    }
    out.into_iter().map(|x| x as u64).collect()
}

#[test]
fn batch_encoding_round_trips_and_acts_slot_by_slot() {
    let params = BgvParametersLiteral::test_n12_levels5_insecure()
        .build()
        .unwrap();
    let ctx = BgvContext::new(&params, Device::Cpu).unwrap();
    let enc = Encoder::new(&ctx).unwrap();
    let (n, t) = (params.n(), params.t());
    let p = Plain { t };
    let mut rng = Rng(1);
    for _ in 0..3 {
        let v = rng.values(n, t);
        let m = enc.slots_to_coeffs(&v).unwrap();
        assert_eq!(enc.coeffs_to_slots(&m).unwrap(), v);
        // Slot-wise sums and products are coefficient sums and negacyclic products.
        let w = rng.values(n, t);
        let mw = enc.slots_to_coeffs(&w).unwrap();
        assert_eq!(enc.coeffs_to_slots(&p.add(&m, &mw)).unwrap(), p.add(&v, &w));
        let prod = negacyclic(&m[..], &mw[..], t);
        assert_eq!(enc.coeffs_to_slots(&prod).unwrap(), p.mul(&v, &w));
        // The layout: X ↦ X^(5^k) rotates the rows left by k, X ↦ X^(2N-1) swaps them.
        for k in [1i64, 3, -1, (n / 2 - 1) as i64] {
            let g = ctx.rlwe().galois_element_for_rotation(k);
            let rotated = enc.coeffs_to_slots(&automorphism(&m, g, t)).unwrap();
            assert_eq!(rotated, p.rotate_rows(&v, k), "rotation by {k}");
        }
        let swapped = enc
            .coeffs_to_slots(&automorphism(&m, 2 * n as u64 - 1, t))
            .unwrap();
        assert_eq!(swapped, p.rotate_columns(&v));
    }
    // Zero padding and bad inputs.
    let m = enc.slots_to_coeffs(&[5, 6]).unwrap();
    let slots = enc.coeffs_to_slots(&m).unwrap();
    assert_eq!(&slots[..3], &[5, 6, 0]);
    assert!(slots[3..].iter().all(|&x| x == 0));
    assert!(matches!(
        enc.slots_to_coeffs(&[t]),
        Err(Error::PlaintextOutOfRange { .. })
    ));
    assert!(matches!(
        enc.slots_to_coeffs(&vec![1; n + 1]),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        enc.encode_at(&[1], 6),
        Err(Error::InvalidInput(_))
    ));
}

#[test]
fn encrypted_rotations_follow_the_slot_matrix() {
    let steps = [1i64, -1, 3, 2047];
    let s = setup(
        BgvParametersLiteral::test_n12_levels5_insecure(),
        &steps,
        true,
        true,
        5,
    );
    let (n, t) = (s.n(), s.t());
    let p = Plain { t };
    // Distinct values: slot s holds s + 1.
    let v: Vec<u64> = (1..=n as u64).collect();
    let ct = s.encrypt(&v, 3, 1);
    assert_eq!(s.decrypt(&ct), v);
    for k in steps {
        let r = s.eval.rotate_rows(&ct, k).unwrap();
        let got = s.decrypt(&r);
        assert_eq!(got, p.rotate_rows(&v, k), "rotation by {k}");
        // Slot j of each row now holds what slot j + k held.
        let half = n / 2;
        let src = (5i64 + k).rem_euclid(half as i64) as u64;
        assert_eq!(got[5], src + 1);
        assert_eq!(got[half + 5], half as u64 + src + 1);
    }
    let sw = s.eval.rotate_columns(&ct).unwrap();
    let got = s.decrypt(&sw);
    assert_eq!(got[0], n as u64 / 2 + 1);
    assert_eq!(got, p.rotate_columns(&v));
    // Rotations by N/2 (a full row) are the identity and need no key.
    let same = s.eval.rotate_rows(&ct, n as i64 / 2).unwrap();
    assert_eq!(s.decrypt(&same), v);
    // A missing key is a typed error naming the step.
    match s.eval.rotate_rows(&ct, 17) {
        Err(Error::MissingRotationKey { step: 17, .. }) => {}
        other => panic!("expected a missing-key error, got {other:?}"),
    }

    // The inner sum, at several levels and with a correction factor.
    let mut rng = Rng(7);
    for level in [5usize, 2, 0] {
        let v = rng.values(n, t);
        let ct = s
            .eval
            .mod_switch_to_level(&s.encrypt(&v, 5, 2), level)
            .unwrap();
        let sum = s.eval.inner_sum(&ct).unwrap();
        assert_eq!(s.decrypt(&sum), p.inner_sum(&v), "level {level}");
    }
}

#[test]
fn coefficient_encoding_with_a_non_batching_modulus() {
    let mut lit = BgvParametersLiteral::test_n12_levels5_insecure();
    lit.t = 256;
    lit.log_n = 10; // small ring: the naive product below is quadratic
    let params = lit.build().unwrap();
    assert!(!params.batching());
    let ctx = BgvContext::new(&params, Device::Cpu).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [9; 32]);
    let sk = keygen.secret_key().unwrap();
    let pk = keygen.public_key(&sk).unwrap();
    let rlk = keygen.relinearization_key(&sk).unwrap();
    let eval = rhea::bgv::Evaluator::new(&ctx)
        .with_relinearization_key(rlk)
        .unwrap();
    let enc = Encoder::new(&ctx).unwrap();
    let encryptor = Encryptor::new(&ctx, &pk).unwrap().with_seed([3; 32]);
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    let (n, t) = (params.n(), params.t());
    let mut rng = Rng(3);
    let a = rng.values(n, t);
    let b = rng.values(n, t);
    let ca = encryptor
        .encrypt(&enc.encode_coeffs(&a, 5).unwrap())
        .unwrap();
    let cb = encryptor
        .encrypt(&enc.encode_coeffs(&b, 4).unwrap())
        .unwrap();
    let prod = eval.mul(&ca, &cb).unwrap();
    let want = negacyclic(&a, &b, t);
    assert_eq!(
        enc.decode_coeffs(&dec.decrypt(&prod).unwrap()).unwrap(),
        want
    );
    // With a factor (after the switch) plus a fresh operand and constants: exact mod 256.
    let sum = eval.add(&prod, &ca).unwrap();
    let sum = eval
        .mul_const(&eval.add_const(&sum, 200).unwrap(), 3)
        .unwrap();
    let mut expect: Vec<u64> = want.iter().zip(&a).map(|(x, y)| (x + y) % t).collect();
    expect[0] = (expect[0] + 200) % t;
    let expect: Vec<u64> = expect.iter().map(|x| x * 3 % t).collect();
    assert_eq!(
        enc.decode_coeffs(&dec.decrypt(&sum).unwrap()).unwrap(),
        expect
    );
    // Batching is refused with a reason.
    match enc.encode(&[1, 2]) {
        Err(Error::InvalidParameters(m)) => assert!(m.contains("batching"), "{m}"),
        other => panic!("expected a batching error, got {other:?}"),
    }
}

/// The evaluator's modulus switch (the core's rescale of `ĉ = t^{-1}·c`) is exactly the BGV
/// switch of `c` computed by `rhea_math::bgv_rescale`, word for word, at every level.
#[test]
fn mod_switch_equals_the_bgv_rescale_oracle() {
    let s = setup(
        BgvParametersLiteral::test_n12_levels5_insecure(),
        &[],
        false,
        false,
        6,
    );
    let ring = s.ctx.ring();
    let n = s.n();
    let t = s.t();
    let q = s.ctx.params().q_primes().to_vec();
    let oracle = BgvRescaler::new(ring.q(), t).unwrap();
    let mut rng = Rng(8);
    let mut ct = s.encrypt(&rng.values(n, t), 5, 4);
    // Make the phase large and the factor non-trivial first.
    ct = s.eval.square(&ct).unwrap();
    while ct.level() > 0 {
        let next = s.eval.mod_switch(&ct).unwrap();
        let limbs = ct.level() + 1;
        for (before, after) in ct.parts().iter().zip(next.parts()) {
            // c = t·ĉ in coefficient form.
            let to_c = |p: &rhea::backend::Poly, limbs: usize| {
                let mut p = p.try_clone().unwrap();
                ring.ntt_inverse(&mut p).unwrap();
                let mut w = ring.download(&p).unwrap();
                for (i, limb) in w.chunks_mut(n).enumerate() {
                    let m = Modulus::new(q[i]).unwrap();
                    let tm = m.reduce(t);
                    limb.iter_mut().for_each(|x| *x = m.mul(*x, tm));
                }
                assert_eq!(w.len(), limbs * n);
                w
            };
            let c = to_c(before, limbs);
            let mut want = vec![0u64; (limbs - 1) * n];
            oracle.apply(limbs, &c, &mut want, n).unwrap();
            assert_eq!(to_c(after, limbs - 1), want, "level {}", ct.level());
        }
        ct = next;
    }
}
