//! BGV noise budget and errors: exhaustion is reported (by the evaluator's tracker, and by the
//! measured budget at decryption) instead of a wrong answer; mismatched parameters, missing keys
//! and bad inputs are typed errors; an HE-Booster preset works end to end; evaluation from
//! several threads agrees with sequential evaluation.

mod bgv_common;

use bgv_common::{is_noise_exhausted, setup, Plain, Rng};
use rhea::bgv::{BgvContext, BgvParametersLiteral, Decryptor, Encoder, Evaluator};
use rhea::unstable::HasRing;
use rhea::{Device, Error};

#[test]
fn the_tracker_refuses_an_operation_that_would_exhaust_the_budget() {
    let s = setup(
        BgvParametersLiteral::test_n12_levels5_insecure(),
        &[1],
        false,
        false,
        1,
    );
    let (n, t) = (s.n(), s.t());
    let p = Plain { t };
    let mut rng = Rng(1);
    let v = rng.values(n, t);
    let mut ct = s.encrypt(&v, 0, 1);
    let mut plain = v.clone();
    // Multiply by large constants at level 0 until the tracker refuses; every accepted result
    // decrypts exactly and has a budget at least the estimate.
    let mut steps = 0;
    let err = loop {
        match s.eval.mul_const(&ct, 30_001) {
            Ok(next) => {
                plain = p.mul_const(&plain, 30_001);
                assert_eq!(s.decrypt(&next), plain, "step {steps}");
                ct = next;
                steps += 1;
                assert!(steps < 10, "the tracker never refused");
            }
            Err(e) => break e,
        }
    };
    assert!(steps >= 1, "the first multiplication fits");
    match err {
        Error::NoiseBudgetExhausted {
            op: "mul_const",
            level: 0,
            log_noise,
            log_modulus,
        } => assert!(log_noise >= log_modulus - 1.0 && log_modulus < 61.0),
        other => panic!("expected the noise-budget error, got {other:?}"),
    }
    // A product at level 0 of two fresh ciphertexts does not fit in one 60-bit prime either.
    let a = s.encrypt(&v, 0, 2);
    let e = s.eval.mul(&a, &a).unwrap_err();
    assert!(is_noise_exhausted(&e), "{e}");
    // The same product one level up fits, and the switch brings it to level 0.
    let a1 = s.encrypt(&v, 1, 3);
    let sq = s.eval.square(&a1).unwrap();
    assert_eq!(sq.level(), 0);
    assert_eq!(s.decrypt(&sq), p.mul(&v, &v));
    assert!(s.eval.estimated_budget(&sq) > 0);
}

#[test]
fn decryption_reports_an_exhausted_budget_instead_of_a_wrong_answer() {
    let s = setup(
        BgvParametersLiteral::test_n12_levels5_insecure(),
        &[],
        false,
        false,
        2,
    );
    let unchecked = s.manual().with_noise_check(false);
    let (n, t) = (s.n(), s.t());
    let p = Plain { t };
    let dec = s.decryptor();
    let mut rng = Rng(2);
    let v = rng.values(n, t);
    let mut ct = s.encrypt(&v, 0, 1);
    let mut plain = v;
    let fresh = dec
        .noise_budget(&ct)
        .unwrap()
        .expect("a fresh budget is known");
    assert!(fresh > 20, "fresh budget {fresh}");
    let mut last_budget = Some(fresh);
    let mut exhausted = false;
    for step in 0..12 {
        ct = unchecked.mul_const(&ct, -32_000).unwrap();
        plain = p.mul_const(&plain, -32_000);
        let budget = dec.noise_budget(&ct).unwrap();
        match (last_budget, budget) {
            (Some(last), Some(b)) => assert!(b <= last, "the budget never grows"),
            (None, Some(b)) => panic!("step {step}: an unknown budget became known ({b})"),
            _ => {}
        }
        // Known exactly while the tracked bound is below Q_ℓ/2 (the estimate is non-negative).
        assert_eq!(
            budget.is_some(),
            unchecked.estimated_budget(&ct) >= 0,
            "step {step}: budget {budget:?}, {ct:?}"
        );
        last_budget = budget;
        match dec.decrypt(&ct) {
            Ok(d) => {
                assert_eq!(d.noise_budget(), budget);
                if let Some(b) = budget {
                    assert!(b > 0);
                    assert_eq!(s.encoder.decode(&d).unwrap(), plain, "step {step}");
                }
            }
            Err(e) => {
                // The tracked bound is an upper bound: it passed Q_ℓ/2 first, so the budget is
                // reported unknown, never as a number it cannot know.
                assert_eq!(budget, None);
                assert!(
                    matches!(
                        e,
                        Error::NoiseBudgetExhausted {
                            op: "decrypt",
                            level: 0,
                            ..
                        }
                    ),
                    "{e}"
                );
                exhausted = true;
                break;
            }
        }
    }
    assert!(exhausted, "the budget was never exhausted");
    // The checked evaluator would have refused long before.
    assert!(s.eval.estimated_budget(&ct) < 0);
}

#[test]
fn mismatched_parameters_missing_keys_and_bad_inputs_are_typed_errors() {
    let a = setup(
        BgvParametersLiteral::test_n12_levels5_insecure(),
        &[],
        false,
        false,
        3,
    );
    let mut lit = BgvParametersLiteral::test_n12_levels5_insecure();
    lit.t = 0;
    lit.log_t = 20; // same ring size, another t: other parameters
    let b = setup(lit, &[], false, false, 4);
    assert_ne!(a.ctx.params().id(), b.ctx.params().id());
    let mut rng = Rng(3);
    let ca = a.encrypt(&rng.values(a.n(), a.t()), 5, 1);
    let cb = b.encrypt(&rng.values(b.n(), b.t()), 5, 2);
    let pa = a.encoder.encode(&[1, 2, 3]).unwrap();
    let mismatch = |e: Error| assert!(matches!(e, Error::ParametersMismatch { .. }), "{e}");
    mismatch(a.eval.add(&ca, &cb).unwrap_err());
    mismatch(a.eval.mul(&cb, &ca).unwrap_err());
    mismatch(b.eval.add_plain(&cb, &pa).unwrap_err());
    mismatch(b.eval.mul_plain(&cb, &pa).unwrap_err());
    mismatch(b.eval.rotate_columns(&ca).unwrap_err());
    mismatch(a.decryptor().decrypt(&cb).map(|_| ()).unwrap_err());
    mismatch(Decryptor::new(&b.ctx, &a.sk).map(|_| ()).unwrap_err());
    mismatch(
        rhea::bgv::Encryptor::new(&b.ctx, &a.pk)
            .map(|_| ())
            .unwrap_err(),
    );
    let d = a.decryptor().decrypt(&ca).unwrap();
    mismatch(b.encoder.decode(&d).unwrap_err());
    // BGV and CKKS parameters never mix either.
    let ckks = rhea::params::CkksParametersLiteral::n13_logqp200_levels2()
        .build()
        .unwrap();
    assert_ne!(ckks.id(), a.ctx.params().id());

    // Missing keys.
    let bare = Evaluator::new(&a.ctx);
    assert!(matches!(
        bare.mul(&ca, &ca),
        Err(Error::MissingRelinearizationKey { .. })
    ));
    assert!(matches!(
        bare.rotate_rows(&ca, 1),
        Err(Error::MissingRotationKey { step: 1, .. })
    ));
    assert!(matches!(
        bare.rotate_columns(&ca),
        Err(Error::MissingConjugationKey { .. })
    ));
    // Levels and shapes.
    let low = a.eval.mod_switch_to_level(&ca, 0).unwrap();
    assert!(matches!(
        a.eval.mod_switch(&low),
        Err(Error::LevelUnderflow { .. })
    ));
    assert!(matches!(
        a.eval.mod_switch_to_level(&low, 1),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        a.eval.drop_to_level(&low, 2),
        Err(Error::InvalidInput(_))
    ));
    let three = a.eval.mul_no_relin(&ca, &ca).unwrap();
    assert!(matches!(
        a.eval.mul(&three, &ca),
        Err(Error::CiphertextDegree { .. })
    ));
    assert!(matches!(
        a.eval.rotate_rows(&three, 1),
        Err(Error::CiphertextDegree { .. })
    ));
    // Encoder inputs.
    assert!(matches!(
        a.encoder.encode(&[a.t()]),
        Err(Error::PlaintextOutOfRange { .. })
    ));
    assert!(matches!(
        a.encoder.encode_at(&[1], 9),
        Err(Error::InvalidInput(_))
    ));
    // A GPU this build cannot use.
    assert!(BgvContext::new(a.ctx.params(), Device::Cuda(999)).is_err());
}

#[test]
fn he_booster_n13_preset_end_to_end() {
    let steps = [1i64, -3];
    let s = setup(
        BgvParametersLiteral::he_booster_n13_logqp218(),
        &steps,
        true,
        false,
        5,
    );
    let params = s.ctx.params();
    assert!(params.security().meets_128_bits);
    assert!(params.log_q() + params.log_p() <= 218.0);
    let (n, t) = (s.n(), s.t());
    assert_eq!((n, t, params.max_level()), (8192, 65537, 3));
    let p = Plain { t };
    let mut rng = Rng(5);
    let x = rng.values(n, t);
    let y = rng.values(n, t);
    let cx = s.encrypt(&x, 3, 1);
    let cy = s.encrypt(&y, 3, 2);
    // Depth 3: ((x·y)·x + rot(y, 1))·y at level 0, then a rotation and a column swap there.
    let mut ct = s.eval.mul(&cx, &cy).unwrap();
    let mut plain = p.mul(&x, &y);
    ct = s.eval.mul(&ct, &cx).unwrap();
    plain = p.mul(&plain, &x);
    ct = s
        .eval
        .add(&ct, &s.eval.rotate_rows(&cy, 1).unwrap())
        .unwrap();
    plain = p.add(&plain, &p.rotate_rows(&y, 1));
    ct = s.eval.mul(&ct, &cy).unwrap();
    plain = p.mul(&plain, &y);
    assert_eq!(ct.level(), 0);
    assert_eq!(s.decrypt(&ct), plain);
    let r = s
        .eval
        .rotate_columns(&s.eval.rotate_rows(&ct, -3).unwrap())
        .unwrap();
    let want = p.rotate_columns(&p.rotate_rows(&plain, -3));
    assert_eq!(s.decrypt(&r), want);
    let budget = s
        .decryptor()
        .noise_budget(&r)
        .unwrap()
        .expect("checked: known");
    eprintln!(
        "HE-Booster 13/218: level-0 budget {budget} bits measured, {} estimated",
        s.eval.estimated_budget(&r)
    );
}

#[test]
fn concurrent_evaluation_matches_sequential() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Evaluator>();
    assert_send_sync::<BgvContext>();
    assert_send_sync::<Encoder>();
    assert_send_sync::<rhea::bgv::Ciphertext>();
    let s = setup(
        BgvParametersLiteral::test_n12_levels5_insecure(),
        &[1],
        false,
        false,
        6,
    );
    let mut rng = Rng(6);
    let inputs: Vec<_> = (0..4)
        .map(|k| s.encrypt(&rng.values(s.n(), s.t()), 5, k))
        .collect();
    let work = |c: &rhea::bgv::Ciphertext| {
        let sq = s.eval.square(c).unwrap();
        s.eval.rotate_rows(&sq, 1).unwrap()
    };
    let sequential: Vec<_> = inputs.iter().map(work).collect();
    let parallel: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = inputs.iter().map(|c| scope.spawn(|| work(c))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let ring = s.ctx.ring();
    for (a, b) in sequential.iter().zip(&parallel) {
        for (x, y) in a.parts().iter().zip(b.parts()) {
            assert_eq!(ring.download(x).unwrap(), ring.download(y).unwrap());
        }
    }
}
