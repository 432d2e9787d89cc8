//! CKKS semantics: precision in bits against an f64 evaluation, at the N = 2^13 test preset
//! (and one N = 2^15 case).

mod common;

use common::*;
use num_complex::Complex64;
use rhea::ckks::{Decryptor, Encoder, Encryptor, Evaluator};
use rhea::params::CkksParametersLiteral;
use rhea::unstable::HasRing;

fn test_setup(steps: &[i64], conjugation: bool) -> Setup {
    setup(
        CkksParametersLiteral::test_n13_levels10_insecure(),
        steps,
        conjugation,
        1,
    )
}

/// Fresh encryption at Δ = 2^40, N = 2^13. A secret-key encryption carries only the Gaussian
/// error `e` (slot error ≈ σ·sqrt(N/2)/Δ ≈ 2^-32.3 std, ≈ 2^-30.3 max over 4096 slots): ≥ 30
/// bits. A public-key encryption (formed over Q ∪ P and divided by P) carries the rounding
/// noise `r_0 + r_1·s` of that division, ≈ 2^-27.5 max: ≥ 26 bits.
#[test]
fn fresh_encryption_precision() {
    let s = test_setup(&[], false);
    let n = s.slots();
    let x = random_vec(n, 10);
    // Secret key.
    let enc = Encryptor::with_secret_key(&s.ctx, &s.sk)
        .unwrap()
        .with_seed([3; 32]);
    let ct = enc.encrypt(&s.encoder.encode(&x).unwrap()).unwrap();
    let bits = precision_bits(&s.decrypt(&ct), &x);
    assert!(bits >= 30.0, "secret-key encryption: {bits:.1} bits");
    // Public key.
    let ct = s.encrypt(&x, 1);
    assert_eq!(ct.level(), 10);
    assert_eq!(ct.scale(), 2f64.powi(40));
    let bits = precision_bits(&s.decrypt(&ct), &x);
    assert!(bits >= 26.0, "public-key encryption: {bits:.1} bits");
    // Complex values, at a lower level.
    let z = random_complex(n, 11);
    let pt = s.encoder.encode_complex_at(&z, 3, 2f64.powi(40)).unwrap();
    let ct = s.encryptor(2).encrypt(&pt).unwrap();
    assert_eq!(ct.level(), 3);
    let bits = precision_bits_complex(&s.decrypt_complex(&ct), &z);
    assert!(bits >= 25.5, "complex: {bits:.1} bits");
}

#[test]
fn encoding_round_trip_is_precise_at_several_scales() {
    let s = test_setup(&[], false);
    let x = random_complex(s.slots(), 12);
    for log_scale in [30, 40, 55, 90] {
        let pt = s
            .encoder
            .encode_complex_at(&x, 10, 2f64.powi(log_scale))
            .unwrap();
        let back = s.encoder.decode_complex(&pt).unwrap();
        let bits = precision_bits_complex(&back, &x);
        let want = (log_scale as f64 - 14.0).min(40.0);
        assert!(bits >= want, "Δ = 2^{log_scale}: {bits:.1} bits");
    }
}

#[test]
fn ten_chained_multiply_rescale_steps_keep_20_bits() {
    let s = test_setup(&[], false);
    let n = s.slots();
    // Values of modulus near 1 so the product neither vanishes nor blows up.
    let mut want: Vec<f64> = random_vec(n, 20).iter().map(|v| 0.9 + 0.1 * v).collect();
    let mut acc = s.encrypt(&want, 3);
    for step in 0..10u8 {
        let y: Vec<f64> = random_vec(n, 100 + step as u64)
            .iter()
            .map(|v| 1.0 + 0.1 * v)
            .collect();
        let cy = s.encrypt(&y, 50 + step);
        acc = s.eval.mul(&acc, &cy).unwrap();
        want.iter_mut().zip(&y).for_each(|(w, y)| *w *= y);
        assert_eq!(acc.level(), 9 - step as usize);
    }
    let bits = precision_bits(&s.decrypt(&acc), &want);
    assert!(bits >= 20.0, "after 10 mul-rescale steps: {bits:.1} bits");
    // Squaring chain (the scale doubles its drift each time; it is tracked exactly).
    let x: Vec<f64> = random_vec(n, 21).iter().map(|v| 0.95 + 0.05 * v).collect();
    let mut c = s.encrypt(&x, 4);
    let mut w = x.clone();
    for _ in 0..10 {
        c = s.eval.square(&c).unwrap();
        w.iter_mut().for_each(|v| *v *= *v);
    }
    // x^1024 amplifies the input error 1024-fold (d(x^1024) = 1024·x^1023·dx): 10 bits fewer
    // than a fresh ciphertext, measured 19.2 bits.
    let bits = precision_bits(&s.decrypt(&c), &w);
    assert!(bits >= 17.0, "after 10 squarings: {bits:.1} bits");
}

#[test]
fn additive_and_constant_operations() {
    let s = test_setup(&[], false);
    let n = s.slots();
    let (x, y) = (random_vec(n, 30), random_vec(n, 31));
    let (cx, cy) = (s.encrypt(&x, 5), s.encrypt(&y, 6));
    let e = &s.eval;
    let check = |ct: &rhea::ckks::Ciphertext, f: &dyn Fn(f64, f64) -> f64, what: &str, min: f64| {
        let want: Vec<f64> = x.iter().zip(&y).map(|(a, b)| f(*a, *b)).collect();
        let bits = precision_bits(&s.decrypt(ct), &want);
        assert!(bits >= min, "{what}: {bits:.1} bits");
    };
    check(&e.add(&cx, &cy).unwrap(), &|a, b| a + b, "add", 25.0);
    check(&e.sub(&cx, &cy).unwrap(), &|a, b| a - b, "sub", 25.0);
    check(&e.neg(&cx).unwrap(), &|a, _| -a, "neg", 26.0);
    check(
        &e.add_const(&cx, 0.75).unwrap(),
        &|a, _| a + 0.75,
        "add_const",
        26.0,
    );
    check(
        &e.sub_const(&cx, 0.5).unwrap(),
        &|a, _| a - 0.5,
        "sub_const",
        26.0,
    );
    check(
        &e.mul_int(&cx, -3).unwrap(),
        &|a, _| -3.0 * a,
        "mul_int",
        24.0,
    );
    let mc = e.mul_const(&cx, 1.37).unwrap();
    assert_eq!(mc.level(), 9);
    // The constant lands where a product of two fresh ciphertexts does: the level's scale.
    assert_eq!(mc.scale(), s.ctx.params().scale_at_level(9).unwrap());
    check(&mc, &|a, _| 1.37 * a, "mul_const", 25.0);
    let py = s.encoder.encode(&y).unwrap();
    check(
        &e.add_plain(&cx, &py).unwrap(),
        &|a, b| a + b,
        "add_plain",
        26.0,
    );
    check(
        &e.sub_plain(&cx, &py).unwrap(),
        &|a, b| a - b,
        "sub_plain",
        26.0,
    );
    check(
        &e.mul_plain(&cx, &py).unwrap(),
        &|a, b| a * b,
        "mul_plain",
        25.0,
    );
    // Complex constants.
    let c = Complex64::new(0.25, -0.5);
    let z: Vec<Complex64> = x.iter().map(|&a| Complex64::new(a, 0.0)).collect();
    let got = s.decrypt_complex(&e.add_const_complex(&cx, c).unwrap());
    let want: Vec<Complex64> = z.iter().map(|a| a + c).collect();
    assert!(precision_bits_complex(&got, &want) >= 25.5);
    let got = s.decrypt_complex(&e.mul_const_complex(&cx, c).unwrap());
    let want: Vec<Complex64> = z.iter().map(|a| a * c).collect();
    assert!(precision_bits_complex(&got, &want) >= 25.0);
}

#[test]
fn levels_and_scales_are_aligned_automatically() {
    let s = test_setup(&[], false);
    let n = s.slots();
    let (x, y, z) = (random_vec(n, 40), random_vec(n, 41), random_vec(n, 42));
    let (cx, cy, cz) = (s.encrypt(&x, 7), s.encrypt(&y, 8), s.encrypt(&z, 9));
    let e = &s.eval;
    // x·y is at level 9 with scale Δ²/q_10, z at level 10 with Δ: z is brought down and onto
    // the product's scale.
    let xy = e.mul(&cx, &cy).unwrap();
    assert_eq!(xy.level(), 9);
    assert_ne!(xy.scale(), cz.scale());
    let sum = e.add(&xy, &cz).unwrap();
    assert_eq!(sum.level(), 9);
    let want: Vec<f64> = (0..n).map(|i| x[i] * y[i] + z[i]).collect();
    let bits = precision_bits(&s.decrypt(&sum), &want);
    assert!(bits >= 25.0, "x·y + z: {bits:.1} bits");
    // The other order, and a subtraction.
    let diff = e.sub(&cz, &xy).unwrap();
    let want: Vec<f64> = (0..n).map(|i| z[i] - x[i] * y[i]).collect();
    assert!(precision_bits(&s.decrypt(&diff), &want) >= 25.0);
    // x·c lands where x·y does (scale Δ²/q_10 at level 9): the sum needs no alignment and
    // spends no level.
    let xc = e.mul_const(&cx, 0.5).unwrap();
    assert_eq!(xc.level(), 9);
    assert_eq!(xc.scale(), xy.scale());
    let mixed = e.add(&xy, &xc).unwrap();
    assert_eq!(mixed.level(), 9);
    let want: Vec<f64> = (0..n).map(|i| x[i] * y[i] + 0.5 * x[i]).collect();
    assert!(precision_bits(&s.decrypt(&mixed), &want) >= 25.0);
    // Multiplying operands at different levels.
    let prod = e.mul(&xy, &cz).unwrap();
    assert_eq!(prod.level(), 8);
    let want: Vec<f64> = (0..n).map(|i| x[i] * y[i] * z[i]).collect();
    assert!(precision_bits(&s.decrypt(&prod), &want) >= 24.0);
    // Dropping levels keeps the value.
    let dropped = e.drop_to_level(&cx, 2).unwrap();
    assert_eq!(dropped.level(), 2);
    assert!(precision_bits(&s.decrypt(&dropped), &x) >= 26.0);
}

#[test]
fn manual_mode_composes_to_auto_mode_bit_for_bit() {
    let s = test_setup(&[], false);
    let n = s.slots();
    let (x, y) = (random_vec(n, 50), random_vec(n, 51));
    let (cx, cy) = (s.encrypt(&x, 10), s.encrypt(&y, 11));
    let manual = Evaluator::new(&s.ctx).with_auto_rescale(false);
    // Manual mode needs the key too; reuse the auto evaluator's tensor via mul_relin.
    let lin = s.eval.mul_relin(&cx, &cy).unwrap();
    assert_eq!(lin.level(), 10);
    assert_eq!(lin.scale(), cx.scale() * cy.scale());
    let rs = manual.rescale(&lin).unwrap();
    let auto = s.eval.mul(&cx, &cy).unwrap();
    let words = |c: &rhea::ckks::Ciphertext| -> Vec<Vec<u64>> {
        c.parts()
            .iter()
            .map(|p| s.ctx.ring().download(p).unwrap())
            .collect()
    };
    assert_eq!(words(&rs), words(&auto));
    assert_eq!(rs.scale(), auto.scale());
    assert_eq!(
        words(&s.eval.mul_relin_rescale(&cx, &cy).unwrap()),
        words(&auto)
    );
    // Without relinearisation: 3 components, decryptable, relinearised and rescaled later.
    let t1 = s.eval.mul_no_relin(&cx, &cy).unwrap();
    let t2 = s.eval.mul_no_relin(&cx, &cx).unwrap();
    assert_eq!((t1.len(), t1.level()), (3, 10));
    let sum3 = s.eval.add(&t1, &t2).unwrap();
    let want: Vec<f64> = (0..n).map(|i| x[i] * y[i] + x[i] * x[i]).collect();
    let bits = precision_bits(&s.decrypt(&sum3), &want);
    assert!(bits >= 25.0, "3 components: {bits:.1} bits");
    let relin = s.eval.relinearize(&sum3).unwrap();
    assert_eq!(relin.len(), 2);
    let done = s.eval.rescale(&relin).unwrap();
    let bits = precision_bits(&s.decrypt(&done), &want);
    assert!(bits >= 25.0, "relinearized and rescaled: {bits:.1} bits");
    // Manual mode: the scale grows until rescaled.
    let m = manual.mul_const(&cx, 2.0).unwrap();
    assert_eq!(m.level(), 10);
    assert_eq!(m.scale(), cx.scale() * 2f64.powi(40));
    let want: Vec<f64> = x.iter().map(|v| 2.0 * v).collect();
    assert!(precision_bits(&s.decrypt(&m), &want) >= 25.0);
}

#[test]
fn mode_independent_products() {
    let s = test_setup(&[1, 5], false);
    let n = s.slots();
    let (x, y, z) = (random_vec(n, 60), random_vec(n, 61), random_vec(n, 62));
    let (cx, cy, cz) = (s.encrypt(&x, 12), s.encrypt(&y, 13), s.encrypt(&z, 14));
    let e = &s.eval;
    let sq = e.square_relin_rescale(&cx).unwrap();
    let want: Vec<f64> = x.iter().map(|v| v * v).collect();
    assert!(precision_bits(&s.decrypt(&sq), &want) >= 25.0);
    assert_eq!(sq.level(), 9);
    let r = e.add(&e.mul_relin_rescale(&cx, &cy).unwrap(), &cz).unwrap();
    assert_eq!(r.level(), 9);
    let want: Vec<f64> = (0..n).map(|i| x[i] * y[i] + z[i]).collect();
    assert!(precision_bits(&s.decrypt(&r), &want) >= 25.0);
    let rot = e.rotate(&cx, 5).unwrap();
    assert!(precision_bits(&s.decrypt(&rot), &rotate_plain(&x, 5)) >= 25.0);
}

#[test]
fn rotations_and_conjugation_are_correct_up_to_noise() {
    let steps = [1, 2, -1, 7, 100, -300];
    let s = test_setup(&steps, true);
    let n = s.slots();
    let z = random_complex(n, 70);
    let ct = s
        .encryptor(15)
        .encrypt(&s.encoder.encode_complex(&z).unwrap())
        .unwrap();
    for &k in &steps {
        let r = s.eval.rotate(&ct, k).unwrap();
        let bits = precision_bits_complex(&s.decrypt_complex(&r), &rotate_plain(&z, k));
        assert!(bits >= 25.0, "rotate by {k}: {bits:.1} bits");
    }
    // Rotation by 0 or by a multiple of the slot count is the identity (no key needed).
    let r0 = s.eval.rotate(&ct, n as i64).unwrap();
    assert!(precision_bits_complex(&s.decrypt_complex(&r0), &z) >= 25.5);
    let c = s.eval.conjugate(&ct).unwrap();
    let want: Vec<Complex64> = z.iter().map(|v| v.conj()).collect();
    let bits = precision_bits_complex(&s.decrypt_complex(&c), &want);
    assert!(bits >= 25.0, "conjugate: {bits:.1} bits");
    // Rotations compose, also at a lower level.
    let low = s.eval.drop_to_level(&ct, 1).unwrap();
    let r = s.eval.rotate(&s.eval.rotate(&low, 1).unwrap(), 1).unwrap();
    let direct = s.eval.rotate(&low, 2).unwrap();
    let (a, b) = (s.decrypt_complex(&r), s.decrypt_complex(&direct));
    assert!(precision_bits_complex(&a, &rotate_plain(&z, 2)) >= 24.5);
    assert!(precision_bits_complex(&b, &rotate_plain(&z, 2)) >= 24.5);
}

#[test]
fn hoisted_rotations_equal_plain_rotations_bit_for_bit() {
    let steps = [1, 3, -2, 64, 0];
    let s = test_setup(&steps, false);
    let x = random_vec(s.slots(), 80);
    let ct = s.eval.mul(&s.encrypt(&x, 16), &s.encrypt(&x, 17)).unwrap();
    let hoisted = s.eval.rotate_hoisted(&ct, &steps).unwrap();
    assert_eq!(hoisted.len(), steps.len());
    for (h, &k) in hoisted.iter().zip(&steps) {
        let plain = s.eval.rotate(&ct, k).unwrap();
        for (a, b) in h.parts().iter().zip(plain.parts()) {
            assert_eq!(
                s.ctx.ring().download(a).unwrap(),
                s.ctx.ring().download(b).unwrap(),
                "step {k}"
            );
        }
        let want: Vec<f64> = rotate_plain(&x, k).iter().map(|v| v * v).collect();
        assert!(precision_bits(&s.decrypt(h), &want) >= 25.0);
    }
}

#[test]
fn sparse_slots_encode_rotate_and_multiply() {
    let s = test_setup(&[1, -3], false);
    let enc = Encoder::with_slots(&s.ctx, 64).unwrap();
    let x = random_vec(64, 90);
    let ct = s.encryptor(18).encrypt(&enc.encode(&x).unwrap()).unwrap();
    assert_eq!(ct.slots(), 64);
    let dec = Decryptor::new(&s.ctx, &s.sk).unwrap();
    let out = |c: &rhea::ckks::Ciphertext| enc.decode(&dec.decrypt(c).unwrap()).unwrap();
    assert!(precision_bits(&out(&ct), &x) >= 30.0);
    for k in [1, -3] {
        let r = s.eval.rotate(&ct, k).unwrap();
        assert!(precision_bits(&out(&r), &rotate_plain(&x, k)) >= 25.0);
    }
    let sq = s.eval.square(&ct).unwrap();
    let want: Vec<f64> = x.iter().map(|v| v * v).collect();
    assert!(precision_bits(&out(&sq), &want) >= 25.0);
    // A full-slot encoder refuses a sparse plaintext with a typed error.
    assert!(s.encoder.decode(&dec.decrypt(&ct).unwrap()).is_err());
}

#[test]
fn seal_comparable_preset_at_n_2_15() {
    let s = setup(
        CkksParametersLiteral::n15_logqp400_levels7(),
        &[1],
        false,
        2,
    );
    assert!(s.ctx.params().security().meets_128_bits);
    let n = s.slots();
    let (x, y, z) = (random_vec(n, 95), random_vec(n, 96), random_vec(n, 97));
    let (cx, cy, cz) = (s.encrypt(&x, 19), s.encrypt(&y, 20), s.encrypt(&z, 21));
    let e = &s.eval;
    let r = e.add(&e.mul_relin_rescale(&cx, &cy).unwrap(), &cz).unwrap();
    let r = e.rotate(&r, 1).unwrap();
    let want: Vec<f64> = rotate_plain(&(0..n).map(|i| x[i] * y[i] + z[i]).collect::<Vec<_>>(), 1);
    // Here P (one 60-bit prime) is no larger than the first digit (q_0, 60 bits), so key
    // switching adds about sqrt(N/3)·σ of noise per coefficient: ≈ 22.6 bits after a rotation.
    let bits = precision_bits(&s.decrypt(&r), &want);
    assert!(bits >= 22.0, "n15_logqp400_levels7: {bits:.1} bits");
}

/// `encode_batch` (host part in parallel) equals `encode` of each vector word for word, keeps
/// the order, and reports a bad vector as the typed error `encode` gives.
#[test]
fn encode_batch_equals_encode() {
    let s = test_setup(&[], false);
    let n = s.slots();
    let rows: Vec<Vec<f64>> = (0..9).map(|i| random_vec(n - i, 40 + i as u64)).collect();
    let batch = s.encoder.encode_batch(&rows).unwrap();
    assert_eq!(batch.len(), rows.len());
    let ring = s.ctx.ring();
    for (row, pt) in rows.iter().zip(&batch) {
        let one = s.encoder.encode(row).unwrap();
        assert_eq!(
            ring.download(one.poly()).unwrap(),
            ring.download(pt.poly()).unwrap()
        );
        assert_eq!(one.scale(), pt.scale());
    }
    let mut bad = rows.clone();
    bad[5][3] = f64::NAN;
    assert!(matches!(
        s.encoder.encode_batch(&bad),
        Err(rhea::Error::InvalidInput(_))
    ));
    bad[5] = vec![0.5; n + 1];
    assert!(s.encoder.encode_batch(&bad).is_err());
}
