//! Typed errors on misuse, every dnum end to end, and concurrent evaluation from several threads.

mod common;

use common::*;
use rhea::ckks::{
    Ciphertext, CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator, Plaintext,
};
use rhea::params::{CkksParameters, CkksParametersLiteral};
use rhea::rlwe::{GaloisKeys, PublicKey, RelinearizationKey, SecretKey};
use rhea::unstable::HasRing;
use rhea::{Device, Error};

fn test_setup(steps: &[i64]) -> Setup {
    setup(
        CkksParametersLiteral::test_n13_levels10_insecure(),
        steps,
        false,
        3,
    )
}

#[test]
fn public_types_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<CkksParameters>();
    check::<CkksContext>();
    check::<Encoder>();
    check::<Encryptor>();
    check::<Decryptor>();
    check::<Evaluator>();
    check::<Ciphertext>();
    check::<Plaintext>();
    check::<SecretKey>();
    check::<PublicKey>();
    check::<RelinearizationKey>();
    check::<GaloisKeys>();
}

#[test]
fn misuse_is_a_typed_error_that_says_what_to_do() {
    let s = test_setup(&[1]);
    let n = s.slots();
    let x = random_vec(n, 1);
    let ct = s.encrypt(&x, 1);

    // A rotation without its key.
    let err = s.eval.rotate(&ct, 3).unwrap_err();
    assert!(matches!(err, Error::MissingRotationKey { step: 3, .. }));
    assert!(err.to_string().contains("galois_keys"), "{err}");
    let err = s.eval.rotate_hoisted(&ct, &[1, 2]).unwrap_err();
    assert!(matches!(err, Error::MissingRotationKey { step: 2, .. }));
    assert!(matches!(
        s.eval.conjugate(&ct),
        Err(Error::MissingConjugationKey { .. })
    ));
    // A multiplication without the relinearisation key.
    let bare = Evaluator::new(&s.ctx);
    let err = bare.mul(&ct, &ct).unwrap_err();
    assert!(matches!(err, Error::MissingRelinearizationKey { .. }));
    assert!(err.to_string().contains("relinearization_key"));

    // Level underflow.
    let low = s.eval.drop_to_level(&ct, 0).unwrap();
    let err = s.eval.rescale(&low).unwrap_err();
    assert!(matches!(
        err,
        Error::LevelUnderflow {
            level: 0,
            needed: 1,
            ..
        }
    ));
    assert!(err.to_string().contains("more Q primes"));
    assert!(matches!(
        s.eval.mul(&low, &low),
        Err(Error::LevelUnderflow { .. })
    ));
    assert!(matches!(
        s.eval.mul_const(&low, 0.5),
        Err(Error::LevelUnderflow { .. })
    ));
    assert!(matches!(
        s.eval.drop_to_level(&low, 1),
        Err(Error::InvalidInput(_))
    ));

    // Scale overflow: in manual mode at level 0 the product's scale 2^80 exceeds q_0 (60 bits).
    let manual = Evaluator::new(&s.ctx)
        .with_auto_rescale(false)
        .with_relinearization_key(
            KeyGenerator::from_seed(&s.ctx, [3; 32])
                .relinearization_key(&s.sk)
                .unwrap(),
        )
        .unwrap();
    let err = manual.mul(&low, &low).unwrap_err();
    assert!(matches!(err, Error::ScaleOverflow { .. }));
    assert!(err.to_string().contains("rescale"));
    assert!(matches!(
        s.encoder.encode_at(&x, 0, 2f64.powi(70)),
        Err(Error::ScaleOverflow { .. })
    ));

    // Same level, scales in an integer ratio: reconciled exactly without spending a level, in
    // both modes.
    let a = manual.mul_const(&ct, 0.5).unwrap(); // scale 2^80
    let b = s.encrypt(&x, 2); // scale 2^40
    for ev in [&manual, &s.eval] {
        let sum = ev.add(&a, &b).unwrap();
        assert_eq!((sum.level(), sum.scale()), (a.level(), a.scale()));
        let want: Vec<f64> = x.iter().map(|v| 1.5 * v).collect();
        let got = s.decrypt(&sum);
        assert!(got.iter().zip(&want).all(|(g, w)| (g - w).abs() < 1e-6));
    }
    // A ratio that is not an integer is refused in both modes, never aligned by silently
    // spending a level.
    let odd = manual.mul_const_with_scale(&ct, 0.5, 1000.5).unwrap();
    for ev in [&manual, &s.eval] {
        let err = ev.add(&odd, &b).unwrap_err();
        assert!(matches!(err, Error::ScaleMismatch { .. }));
        assert!(err.to_string().contains("drop_to_level_and_scale"));
    }
    let pt = s.encoder.encode_at(&x, 10, 2f64.powi(41)).unwrap();
    assert!(matches!(
        s.eval.add_plain(&ct, &pt),
        Err(Error::ScaleMismatch { .. })
    ));

    // A 3-component ciphertext cannot be rotated.
    let t = s.eval.mul_no_relin(&ct, &ct).unwrap();
    assert!(matches!(
        s.eval.rotate(&t, 1),
        Err(Error::CiphertextDegree { found: 3, .. })
    ));

    // Bad inputs.
    assert!(matches!(
        s.encoder.encode(&vec![0.0; n + 1]),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        s.encoder.encode(&[f64::NAN]),
        Err(Error::InvalidInput(_))
    ));
    assert!(Encoder::with_slots(&s.ctx, 3).is_err());
    let sparse = Encoder::with_slots(&s.ctx, 16).unwrap();
    let st = s
        .encryptor(5)
        .encrypt(&sparse.encode(&x[..16]).unwrap())
        .unwrap();
    assert!(matches!(
        s.eval.add(&st, &ct),
        Err(Error::SlotMismatch { .. })
    ));

    // A GPU that is not there (an ordinal no machine has).
    assert!(matches!(
        CkksContext::new(s.ctx.params(), Device::Cuda(999)),
        Err(Error::DeviceNotSupported { .. } | Error::Gpu(_))
    ));
}

#[test]
fn objects_of_other_parameters_are_refused() {
    let s = test_setup(&[]);
    let other = setup(CkksParametersLiteral::n13_logqp200_levels2(), &[], false, 4);
    let ct = s.encrypt(&random_vec(8, 2), 1);
    let ct_other = other.encrypt(&random_vec(8, 2), 1);
    assert!(matches!(
        s.eval.add(&ct, &ct_other),
        Err(Error::ParametersMismatch { .. })
    ));
    assert!(matches!(
        other.eval.rotate(&ct, 0),
        Err(Error::ParametersMismatch { .. })
    ));
    assert!(matches!(
        Encryptor::new(&s.ctx, &other.pk),
        Err(Error::ParametersMismatch { .. })
    ));
    assert!(matches!(
        Decryptor::new(&s.ctx, &other.sk),
        Err(Error::ParametersMismatch { .. })
    ));
    let rlk = KeyGenerator::from_seed(&other.ctx, [1; 32])
        .relinearization_key(&other.sk)
        .unwrap();
    assert!(matches!(
        Evaluator::new(&s.ctx).with_relinearization_key(rlk),
        Err(Error::ParametersMismatch { .. })
    ));
    assert!(matches!(
        s.encoder.decode(&other.encoder.encode(&[1.0]).unwrap()),
        Err(Error::ParametersMismatch { .. })
    ));
}

#[test]
fn every_dnum_end_to_end() {
    // Three Q primes (60 + 40 + 40 bits) and P = 3 × 60 bits, large enough for one digit.
    for dnum in 1..=3 {
        let mut lit = CkksParametersLiteral::n13_logqp200_levels2();
        lit.log_p = vec![60, 60, 60];
        lit.dnum = dnum;
        let s = setup(lit.insecure_allow_below_128_bits(), &[1, -2], true, 5);
        let n = s.slots();
        let (x, y) = (random_vec(n, 10), random_vec(n, 11));
        let (cx, cy) = (s.encrypt(&x, 1), s.encrypt(&y, 2));
        let prod = s.eval.mul(&cx, &cy).unwrap();
        let want: Vec<f64> = (0..n).map(|i| x[i] * y[i]).collect();
        let bits = precision_bits(&s.decrypt(&prod), &want);
        assert!(bits >= 24.0, "dnum {dnum}: mul {bits:.1} bits");
        for k in [1, -2] {
            let r = s.eval.rotate(&prod, k).unwrap();
            let bits = precision_bits(&s.decrypt(&r), &rotate_plain(&want, k));
            assert!(bits >= 24.0, "dnum {dnum}: rotate {k} {bits:.1} bits");
        }
        let c = s.eval.conjugate(&cx).unwrap();
        assert!(precision_bits(&s.decrypt(&c), &x) >= 25.0);
    }
}

#[test]
fn concurrent_evaluation_matches_sequential_bit_for_bit() {
    let s = test_setup(&[1, 2]);
    let n = s.slots();
    let inputs: Vec<(Vec<f64>, Ciphertext, Ciphertext)> = (0..4u8)
        .map(|t| {
            let (x, y) = (random_vec(n, 100 + t as u64), random_vec(n, 200 + t as u64));
            let (cx, cy) = (s.encrypt(&x, 10 + t), s.encrypt(&y, 20 + t));
            let want: Vec<f64> = (0..n).map(|i| x[i] * y[i]).collect();
            (rotate_plain(&want, 1), cx, cy)
        })
        .collect();
    let work = |cx: &Ciphertext, cy: &Ciphertext| {
        let p = s.eval.mul(cx, cy).unwrap();
        s.eval.rotate(&p, 1).unwrap()
    };
    let sequential: Vec<Ciphertext> = inputs.iter().map(|(_, a, b)| work(a, b)).collect();
    let encryptor = s.encryptor(99);
    let setup = &s;
    let parallel: Vec<Ciphertext> = std::thread::scope(|scope| {
        let handles: Vec<_> = inputs
            .iter()
            .map(|(_, a, b)| {
                let enc = &encryptor;
                scope.spawn(move || {
                    // Encrypt concurrently too (one encryptor shared by all threads).
                    let _ = enc.encrypt(&setup.encoder.encode(&[1.0]).unwrap()).unwrap();
                    work(a, b)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let ring = s.ctx.ring();
    for ((want, _, _), (seq, par)) in inputs.iter().zip(sequential.iter().zip(&parallel)) {
        for (a, b) in seq.parts().iter().zip(par.parts()) {
            assert_eq!(ring.download(a).unwrap(), ring.download(b).unwrap());
        }
        assert!(precision_bits(&s.decrypt(par), want) >= 24.0);
    }
}
