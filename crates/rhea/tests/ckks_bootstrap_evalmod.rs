//! EvalMod, the homomorphic "mod 1" of bootstrapping, on the CPU (N = 2^13, 10 levels of 40
//! bits, Δ = 2^40): inputs `t = I + ε` with random integers `|I| < K` and `|ε| ≤ 2^−6`,
//! encrypted at Δ. The homomorphic result against the same computation in `f64` (≥ 20 bits
//! relative to the output's magnitude), against `factor·ε` within the approximation error plus
//! the HE error, the depth consumed exactly `depth()`, the output scale exactly the target,
//! typed errors; and (ignored without one) the GPU's words equal to the CPU's.

mod common;

use std::sync::{Arc, OnceLock};

use common::{setup, Setup};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rhea::ckks::bootstrap::{EvalMod, EvalModParams};
use rhea::ckks::{Ciphertext, CkksContext, Encoder, Encryptor, Evaluator, KeyGenerator};
use rhea::params::CkksParametersLiteral;
use rhea::serial::{Codec, Compression};
use rhea::{Device, Error};

const EPS: f64 = 1.0 / 64.0;

/// The test set: N = 2^13, 10 levels of 40 bits, Δ = 2^40.
fn fixture() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        setup(
            CkksParametersLiteral::test_n13_levels10_insecure(),
            &[],
            false,
            9,
        )
    })
}

/// The same with 55-bit primes and Δ = 2^55, as bootstrapping gives EvalMod (Lattigo's
/// default runs it on 60-bit primes): the double angles amplify the absolute noise, and at
/// Δ = 2^40 an output of magnitude 2^−6 keeps only about 13 bits.
fn fixture55() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let mut lit = CkksParametersLiteral::test_n13_levels10_insecure();
        lit.log_q = std::iter::once(60).chain([55; 10]).collect();
        lit.log_default_scale = 55;
        setup(lit, &[], false, 9)
    })
}

/// `n` values `I + ε`, `I` uniform among the integers of `(−K, K)`, `ε` uniform on
/// `[−EPS, EPS]`; returns `(t, ε)`.
fn inputs(n: usize, k: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let k = k as i64;
    (0..n)
        .map(|_| {
            let i = rng.random_range(-(k - 1)..k) as f64;
            let e = rng.random_range(-EPS..=EPS);
            (i + e, e)
        })
        .unzip()
}

fn evalmod(k: usize, degree: usize, r: usize, arcsine: Option<usize>, factor: f64) -> EvalMod {
    EvalMod::new(EvalModParams {
        k,
        degree,
        double_angles: r,
        arcsine_degree: arcsine,
        factor,
        eps_max: EPS,
        normalized_input: false,
    })
    .unwrap()
}

/// Encrypts `ts` (divided by `K + 1/4` for a normalized input) at the top level and Δ, evaluates with
/// `target` (`None`: Δ), checks the depth and the exact scale, compares with `evaluate_plain`
/// (at least `min_bits` relative to the output magnitude) and with `factor·ε` (within the
/// approximation error plus the HE error). Returns the relative precision in bits.
fn check(s: &Setup, name: &str, m: &EvalMod, target: Option<f64>, min_bits: f64, seed: u64) -> f64 {
    let target = target.unwrap_or(s.ctx.params().default_scale());
    let p = m.params();
    let (ts, eps) = inputs(s.slots(), p.k, seed);
    let encrypted: Vec<f64> = if p.normalized_input {
        ts.iter().map(|t| t / m.input_divisor()).collect()
    } else {
        ts.clone()
    };
    let ct = s.encrypt(&encrypted, 3);
    let out = m.evaluate(&s.eval, &ct, target).unwrap();
    assert_eq!(
        ct.level() - out.level(),
        m.depth(),
        "{name}: levels consumed"
    );
    assert_eq!(out.scale(), target, "{name}: output scale");
    let got = s.decrypt(&out);
    let want: Vec<f64> = ts.iter().map(|&t| m.evaluate_plain(t)).collect();
    let magnitude = want.iter().fold(0.0f64, |a, w| a.max(w.abs()));
    let he_err = got
        .iter()
        .zip(&want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0f64, f64::max);
    let bits = -(he_err / magnitude).log2();
    let true_err = got
        .iter()
        .zip(&eps)
        .map(|(g, e)| (g - p.factor * e).abs())
        .fold(0.0f64, f64::max);
    eprintln!(
        "{name}, Δ = 2^{}: depth {}, HE vs f64 {bits:.1} bits (absolute 2^{:.1}, output magnitude 2^{:.1}), \
         vs factor·ε 2^{:.1}, approximation error 2^{:.1}",
        s.ctx.params().default_scale().log2(),
        m.depth(),
        he_err.log2(),
        magnitude.log2(),
        true_err.log2(),
        m.approximation_error().log2()
    );
    assert!(bits >= min_bits, "{name}: {bits:.1} bits");
    assert!(
        true_err <= m.approximation_error() + he_err * 1.01,
        "{name}: 2^{:.1} against factor·ε",
        true_err.log2()
    );
    bits
}

#[test]
fn bootstrapping_default_k16_degree30_three_double_angles() {
    let m = evalmod(16, 30, 3, None, 1.0);
    assert_eq!(m.depth(), 9);
    let name = "K = 16, d = 30, r = 3";
    check(fixture(), name, &m, None, 12.0, 1);
    check(fixture55(), name, &m, None, 20.0, 1);
}

#[test]
fn normalized_input_with_arcsine_uses_all_ten_levels() {
    let m = EvalMod::new(EvalModParams {
        arcsine_degree: Some(3),
        eps_max: EPS,
        normalized_input: true,
        ..EvalModParams::default()
    })
    .unwrap();
    assert_eq!(m.depth(), 5 + 3 + 2);
    assert!(m.approximation_error() < 2f64.powi(-25));
    let name = "K = 16, d = 30, r = 3, arcsine 3, input t/K";
    check(fixture(), name, &m, None, 12.0, 2);
    check(fixture55(), name, &m, None, 20.0, 2);
}

#[test]
fn a_negative_factor_and_another_target_scale() {
    // The factor (and its sign) is folded into the arcsine polynomial; the output lands on
    // 2^45 exactly.
    let m = evalmod(8, 31, 2, Some(3), -1000.0);
    assert_eq!(m.depth(), 6 + 2 + 2);
    let name = "K = 8, d = 31, r = 2, arcsine 3, factor −1000";
    check(fixture(), name, &m, Some(2f64.powi(45)), 14.0, 3);
    check(fixture55(), name, &m, Some(2f64.powi(45)), 20.0, 3);
    // Without arcsine the factor is folded into the last double angle.
    let m = evalmod(8, 15, 3, None, -1000.0);
    assert_eq!(m.depth(), 5 + 3);
    let name = "K = 8, d = 15, r = 3, factor −1000";
    check(fixture(), name, &m, Some(2f64.powi(35)), 12.0, 4);
    check(fixture55(), name, &m, Some(2f64.powi(50)), 20.0, 4);
}

#[test]
fn typed_errors() {
    let s = fixture();
    let m = evalmod(16, 30, 3, None, 1.0);
    let (ts, _) = inputs(8, 16, 5);
    let ct = s.encrypt(&ts, 6);
    // Too few levels, reported before anything is computed.
    let low = s.eval.drop_to_level(&ct, m.depth() - 1).unwrap();
    match m.evaluate(&s.eval, &low, ct.scale()) {
        Err(Error::LevelUnderflow { level, needed, .. }) => {
            assert_eq!((level, needed), (m.depth() - 1, m.depth()))
        }
        other => panic!("expected LevelUnderflow, got {other:?}"),
    }
    assert!(m
        .evaluate(
            &s.eval,
            &s.eval.drop_to_level(&ct, m.depth()).unwrap(),
            ct.scale()
        )
        .is_ok());
    // A bad target scale.
    for t in [0.5, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            m.evaluate(&s.eval, &ct, t),
            Err(Error::InvalidScale { .. })
        ));
    }
    // A factor far too large for the target scale: a planned scale does not fit.
    let huge = evalmod(16, 30, 3, None, 2f64.powi(200));
    assert!(matches!(
        huge.evaluate(&s.eval, &ct, ct.scale()),
        Err(Error::ScaleOverflow { .. })
    ));
    // No relinearisation key.
    let bare = Evaluator::new(&s.ctx);
    assert!(matches!(
        m.evaluate(&bare, &ct, ct.scale()),
        Err(Error::MissingRelinearizationKey { .. })
    ));
    // Bad parameters.
    for p in [
        EvalModParams {
            k: 0,
            ..EvalModParams::default()
        },
        EvalModParams {
            degree: 0,
            ..EvalModParams::default()
        },
        EvalModParams {
            arcsine_degree: Some(6),
            ..EvalModParams::default()
        },
        EvalModParams {
            factor: f64::INFINITY,
            ..EvalModParams::default()
        },
        EvalModParams {
            eps_max: 0.5,
            ..EvalModParams::default()
        },
    ] {
        assert!(matches!(EvalMod::new(p), Err(Error::InvalidInput(_))));
    }
}

// ------------------------------------------------------------------ GPU

struct Twin {
    ctx: CkksContext,
    encoder: Encoder,
    encryptor: Encryptor,
    eval: Evaluator,
    manual: Evaluator,
    codec: Codec,
}

fn twin(device: Device) -> Twin {
    let params = CkksParametersLiteral::test_n13_levels10_insecure()
        .build()
        .unwrap();
    let ctx = CkksContext::new(&params, device).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [21; 32]);
    let sk = keygen.secret_key().unwrap();
    let pk = keygen.public_key(&sk).unwrap();
    let rlk = Arc::new(keygen.relinearization_key(&sk).unwrap());
    let eval = Evaluator::new(&ctx)
        .with_relinearization_key(rlk.clone())
        .unwrap();
    let manual = Evaluator::new(&ctx)
        .with_relinearization_key(rlk)
        .unwrap()
        .with_auto_rescale(false);
    Twin {
        encoder: Encoder::new(&ctx).unwrap(),
        encryptor: Encryptor::new(&ctx, &pk).unwrap().with_seed([22; 32]),
        codec: Codec::new(params, device).unwrap(),
        ctx,
        eval,
        manual,
    }
}

impl Twin {
    fn encrypt(&self, values: &[f64]) -> Ciphertext {
        self.encryptor
            .encrypt(&self.encoder.encode(values).unwrap())
            .unwrap()
    }

    fn bytes(&self, ct: &Ciphertext) -> Vec<u8> {
        self.codec.to_bytes(ct, Compression::NONE).unwrap()
    }
}

#[test]
fn auto_rescale_and_manual_mode_give_the_same_words() {
    let cpu = twin(Device::Cpu);
    let (ts, _) = inputs(cpu.encoder.slots(), 8, 8);
    let ct = cpu.encrypt(&ts);
    let m = evalmod(8, 31, 2, Some(3), -1000.0);
    let delta = cpu.ctx.params().default_scale();
    let a = m.evaluate(&cpu.eval, &ct, delta).unwrap();
    let b = m.evaluate(&cpu.manual, &ct, delta).unwrap();
    assert_eq!((a.level(), a.scale()), (b.level(), b.scale()));
    assert!(cpu.bytes(&a) == cpu.bytes(&b), "the modes' words differ");
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn evalmod_on_the_gpu_matches_the_cpu() {
    let device = Device::Cuda(0);
    if let Err(e) = device.check_supported() {
        panic!("this test needs a CUDA GPU: {e}");
    }
    let before = device.fused_fallbacks();
    let (cpu, gpu) = (twin(Device::Cpu), twin(device));
    let (ts, _) = inputs(cpu.encoder.slots(), 16, 7);
    let (a, b) = (cpu.encrypt(&ts), gpu.encrypt(&ts));
    assert!(cpu.bytes(&a) == gpu.bytes(&b), "inputs differ");
    for m in [
        evalmod(16, 30, 3, None, 1.0),
        evalmod(8, 31, 2, Some(3), -1000.0),
    ] {
        let delta = cpu.ctx.params().default_scale();
        let x = m.evaluate(&cpu.eval, &a, delta).unwrap();
        let y = m.evaluate(&gpu.eval, &b, delta).unwrap();
        assert_eq!((x.level(), x.scale()), (y.level(), y.scale()));
        assert!(
            cpu.bytes(&x) == gpu.bytes(&y),
            "GPU words differ from the CPU's"
        );
    }
    assert_eq!(device.fused_fallbacks(), before, "a fused path fell back");
}
