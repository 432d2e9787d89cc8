//! Automatic bootstrapping in the evaluator (`Evaluator::with_bootstrapper`), on the CPU with
//! the INSECURE N = 2^12 bootstrappable preset (2 levels left to the user, levels 5 down to 3,
//! SlotToCoeff's three below them): circuits deeper than the chain run, each operand that would
//! be rescaled below level 3 refreshed first; without a bootstrapper the same circuits fail where
//! they run out of levels, as before.

mod common;

use std::sync::{Arc, OnceLock};

use common::{precision_bits, random_vec};
use rhea::ckks::bootstrap::{BootstrapPreset, Bootstrapper};
use rhea::ckks::{
    Ciphertext, CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator, Polynomial,
};
use rhea::params::CkksParametersLiteral;
use rhea::rlwe::RelinearizationKey;
use rhea::{Device, Error};

/// Everything built once for the file (the bootstrapper's keys take a few seconds).
struct Fixture {
    ctx: CkksContext,
    encoder: Encoder,
    encryptor: Encryptor,
    decryptor: Decryptor,
    rlk: Arc<RelinearizationKey>,
    boot: Arc<Bootstrapper>,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let preset = BootstrapPreset::by_name("boot_test_n12_insecure").unwrap();
        let params = preset.params.build().unwrap();
        let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
        let mut keygen = KeyGenerator::from_seed(&ctx, [34; 32]);
        let sk = keygen.secret_key().unwrap();
        let rlk = Arc::new(keygen.relinearization_key(&sk).unwrap());
        let boot = Bootstrapper::new(&ctx, &mut keygen, &sk, preset.config).unwrap();
        assert_eq!(boot.output_level(), params.default_level());
        assert_eq!((params.default_level(), boot.input_level()), (5, B));
        Fixture {
            encoder: Encoder::new(&ctx).unwrap(),
            encryptor: Encryptor::with_secret_key(&ctx, &sk)
                .unwrap()
                .with_seed([7; 32]),
            decryptor: Decryptor::new(&ctx, &sk).unwrap(),
            ctx,
            rlk,
            boot: Arc::new(boot),
        }
    })
}

impl Fixture {
    fn eval(&self) -> Evaluator {
        Evaluator::new(&self.ctx)
            .with_relinearization_key(self.rlk.clone())
            .unwrap()
    }

    fn auto_eval(&self) -> Evaluator {
        self.eval().with_bootstrapper(self.boot.clone()).unwrap()
    }

    fn encrypt(&self, x: &[f64]) -> Ciphertext {
        self.encryptor
            .encrypt(&self.encoder.encode(x).unwrap())
            .unwrap()
    }

    fn decrypt(&self, ct: &Ciphertext) -> Vec<f64> {
        self.encoder
            .decode(&self.decryptor.decrypt(ct).unwrap())
            .unwrap()
    }
}

/// Whether `err` is `LevelUnderflow` at `level` needing `needed`.
fn is_underflow(err: &Error, level: usize, needed: usize) -> bool {
    matches!(err, Error::LevelUnderflow { level: l, needed: n, .. } if *l == level && *n == needed)
}

/// `x ↦ x²/2 + 1/4` (two levels: the square, the product by 1/2), by the value-returning forms
/// on even steps and the `_assign` forms on odd ones.
fn step(eval: &Evaluator, x: &mut Ciphertext, i: usize) -> rhea::Result<()> {
    if i % 2 == 0 {
        let y = eval.mul_const(&eval.square(x)?, 0.5)?;
        *x = eval.add_const(&y, 0.25)?;
    } else {
        eval.square_assign(x)?;
        eval.mul_const_assign(x, 0.5)?;
        eval.add_const_assign(x, 0.25)?;
    }
    Ok(())
}

const STEPS: usize = 12;

/// The bootstrapper's input level: SlotToCoeff's levels at the bottom of the chain.
const B: usize = 3;

#[test]
fn a_circuit_deeper_than_the_chain_runs_with_automatic_bootstrapping() {
    let f = fixture();
    let eval = f.auto_eval();
    assert_eq!(eval.bootstraps(), 0);
    let mut want = random_vec(f.encoder.slots(), 34); // uniform in [-1, 1)
    let mut x = f.encrypt(&want);
    let start = std::time::Instant::now();
    for i in 0..STEPS {
        step(&eval, &mut x, i).unwrap();
        for w in &mut want {
            *w = *w * *w / 2.0 + 0.25;
        }
        // Two levels a step from level 5: every step after the first starts at level 3 and
        // bootstraps its input back to level 5 first.
        assert_eq!(x.level(), B, "step {i}");
        assert_eq!(eval.bootstraps(), i, "step {i}");
    }
    let bits = precision_bits(&f.decrypt(&x), &want);
    eprintln!(
        "{STEPS} steps of x²/2 + 1/4 (depth {}): {} bootstraps, {bits:.1} bits, {:.1} s",
        2 * STEPS,
        eval.bootstraps(),
        start.elapsed().as_secs_f64()
    );
    assert_eq!(eval.bootstraps(), STEPS - 1);
    assert!(bits >= 18.0, "{bits:.1} bits");
}

#[test]
fn without_a_bootstrapper_the_circuit_runs_out_of_levels_as_before() {
    let f = fixture();
    let eval = f.eval();
    assert!(eval.bootstrapper().is_none());
    let mut x = f.encrypt(&random_vec(f.encoder.slots(), 35));
    step(&eval, &mut x, 0).unwrap();
    assert_eq!(x.level(), B);
    // Below the user's levels the chain goes on (SlotToCoeff's primes) down to level 0.
    x = eval.drop_to_level(&x, 0).unwrap();
    let before = f.decrypt(&x);
    for i in [0, 1] {
        // The value-returning and the in-place square: the same typed error, the operand kept.
        let err = step(&eval, &mut x, i).unwrap_err();
        assert!(
            matches!(
                err,
                Error::LevelUnderflow {
                    op: "square",
                    level: 0,
                    needed: 1
                }
            ),
            "{err:?}"
        );
    }
    assert_eq!(f.decrypt(&x), before);
    let err = eval.mul_const(&x, 0.5).unwrap_err();
    assert!(
        matches!(err, Error::LevelUnderflow { level: 0, .. }),
        "{err:?}"
    );
    assert_eq!(eval.bootstraps(), 0);
}

#[test]
fn a_bootstrapper_of_other_parameters_is_refused() {
    let f = fixture();
    let params = CkksParametersLiteral::test_n13_levels10_insecure()
        .build()
        .unwrap();
    let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
    let Err(err) = Evaluator::new(&ctx).with_bootstrapper(f.boot.clone()) else {
        panic!("a bootstrapper of other parameters was accepted");
    };
    assert!(matches!(err, Error::ParametersMismatch { .. }), "{err:?}");
}

/// Products of two operands, plaintext products, manual mode's rescaling products and
/// polynomial evaluation: which operands are refreshed, and the results' values.
#[test]
fn each_operand_at_the_input_level_is_refreshed_once() {
    let f = fixture();
    let n = f.encoder.slots();
    let (a, b) = (random_vec(n, 36), random_vec(n, 37));
    let eval = f.auto_eval();
    let low = |x: &[f64]| eval.drop_to_level(&f.encrypt(x), B).unwrap();
    let (ca, cb) = (low(&a), low(&b));
    let check = |ct: &Ciphertext, want: &[f64], what: &str| {
        let bits = precision_bits(&f.decrypt(ct), want);
        eprintln!("{what}: {bits:.1} bits, level {}", ct.level());
        assert!(bits >= 18.0, "{what}: {bits:.1} bits");
    };
    let prod: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x * y).collect();

    // Two operands at the input level: both refreshed.
    let ab = eval.mul(&ca, &cb).unwrap();
    assert_eq!((eval.bootstraps(), ab.level()), (2, B + 1));
    check(&ab, &prod, "mul, both at the input level");
    // One there, one above: only the one; the refreshed one is brought down to level B + 1.
    let top_b = f.encrypt(&b);
    let one = eval.drop_to_level(&top_b, B + 1).unwrap();
    let ab = eval.mul(&ca, &one).unwrap();
    assert_eq!((eval.bootstraps(), ab.level()), (3, B));
    check(&ab, &prod, "mul, one at the input level");
    // A ciphertext times itself: one bootstrap.
    let aa = eval.mul(&ca, &ca).unwrap();
    assert_eq!((eval.bootstraps(), aa.level()), (4, B + 1));
    let sq: Vec<f64> = a.iter().map(|x| x * x).collect();
    check(&aa, &sq, "mul(x, x)");
    // A plaintext product (the in-place form).
    let mut c = ca.try_clone().unwrap();
    eval.mul_plain_assign(&mut c, &f.encoder.encode(&b).unwrap())
        .unwrap();
    assert_eq!((eval.bootstraps(), c.level()), (5, B + 1));
    check(&c, &prod, "mul_plain_assign");
    // … but not with a plaintext at the input level (no level to gain): the product goes
    // below it, as without a bootstrapper.
    let pt_low = f
        .encoder
        .encode_at(&b, B, f.ctx.params().default_scale())
        .unwrap();
    let below = eval.mul_plain(&ca, &pt_low).unwrap();
    assert_eq!((eval.bootstraps(), below.level()), (5, B - 1));
    // A ciphertext taken below the input level by hand cannot be refreshed: the bootstrap's
    // typed error.
    let err = eval.mul(&below, &below).unwrap_err();
    assert!(is_underflow(&err, 2, 3), "{err:?}");
    assert_eq!(eval.bootstraps(), 5);
    // Manual mode: the unrescaled product does not trigger (it does not consume a level),
    // the rescaling one does.
    let manual = f.auto_eval().with_auto_rescale(false);
    let unrescaled = manual.mul(&ca, &cb).unwrap();
    assert_eq!((manual.bootstraps(), unrescaled.level()), (0, B));
    let r = manual.mul_relin_rescale(&ca, &cb).unwrap();
    assert_eq!((manual.bootstraps(), r.level()), (2, B + 1));
    check(&r, &prod, "mul_relin_rescale (manual mode)");
    let r = manual.square_relin_rescale(&ca).unwrap();
    assert_eq!((manual.bootstraps(), r.level()), (3, B + 1));
    check(&r, &sq, "square_relin_rescale (manual mode)");
    // A complex constant (auto-rescale mode).
    let c = eval
        .mul_const_complex(&cb, rhea::ckks::Complex64::new(0.5, 0.0))
        .unwrap();
    assert_eq!((eval.bootstraps(), c.level()), (6, B + 1));
    let half: Vec<f64> = b.iter().map(|y| y / 2.0).collect();
    check(&c, &half, "mul_const_complex");
    // A polynomial of depth 2 on an input one level above the input level: refreshed to level
    // 5 first (evaluated as it is, it would land below the input level).
    let p = Polynomial::monomial(vec![0.25, 0.0, 0.5]).unwrap();
    let x1 = eval.drop_to_level(&f.encrypt(&a), B + 1).unwrap();
    let before = eval.bootstraps();
    let px = eval.evaluate_polynomial(&x1, &p, 2f64.powi(40)).unwrap();
    assert_eq!((eval.bootstraps() - before, px.level()), (1, B));
    let want: Vec<f64> = a.iter().map(|&x| p.evaluate(x)).collect();
    check(&px, &want, "evaluate_polynomial");
    // Depth 3 > the 2 levels a bootstrap leaves: evaluated as it is (its level check passes:
    // level 4 ≥ 3), no bootstrap.
    let p3 = Polynomial::monomial(vec![0.25, 0.0, 0.5, 0.0, 0.1]).unwrap();
    let p3x = eval.evaluate_polynomial(&x1, &p3, 2f64.powi(40)).unwrap();
    assert_eq!((eval.bootstraps() - before, p3x.level()), (1, B + 1 - 3));
    // From level 2 it cannot be evaluated at all: the error of old, no bootstrap wasted.
    let err = eval
        .evaluate_polynomial(&eval.drop_to_level(&x1, 2).unwrap(), &p3, 2f64.powi(40))
        .unwrap_err();
    assert!(is_underflow(&err, 2, 3), "{err:?}");
    assert_eq!(eval.bootstraps() - before, 1);
}
