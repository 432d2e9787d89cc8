//! The standard functions of `rhea::ckks::functions` on the CPU (N = 2^13, 10 levels,
//! Δ = 2^40, inputs uniform on each function's domain): the homomorphic result against the
//! same computation in `f64` (≥ 20 bits), the approximation error against the true function
//! (reported separately), the depth consumed equal to the documented depth, the output scale
//! exactly the target, and typed errors.

mod common;

use std::sync::OnceLock;

use common::{precision_bits, random_vec, setup, Setup};
use rhea::ckks::functions::{InvSqrt, Inverse, Sign, SignConstruction, SmoothFunction, Sqrt};
use rhea::ckks::{Ciphertext, Evaluator};
use rhea::params::CkksParametersLiteral;
use rhea::Error;

fn fixture() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        setup(
            CkksParametersLiteral::test_n13_levels10_insecure(),
            &[],
            false,
            5,
        )
    })
}

/// `n` values uniform on `[lo, hi]`.
fn uniform(n: usize, lo: f64, hi: f64, seed: u64) -> Vec<f64> {
    random_vec(n, seed)
        .into_iter()
        .map(|u| lo + (hi - lo) * (u + 1.0) / 2.0)
        .collect()
}

/// `n` values uniform on `[−1, −gap] ∪ [gap, 1]`.
fn uniform_with_gap(n: usize, gap: f64, seed: u64) -> Vec<f64> {
    random_vec(n, seed)
        .into_iter()
        .map(|u| u.signum() * (gap + (1.0 - gap) * u.abs()))
        .collect()
}

/// Encrypts `xs` at the top level and Δ, applies `f` with target Δ, checks the level consumed
/// and the exact scale, and returns the decryption.
fn run(
    xs: &[f64],
    depth: usize,
    f: impl Fn(&Evaluator, &Ciphertext, f64) -> rhea::Result<Ciphertext>,
) -> Vec<f64> {
    let s = fixture();
    let ct = s.encrypt(xs, 11);
    let delta = ct.scale();
    let out = f(&s.eval, &ct, delta).unwrap();
    assert_eq!(out.level(), ct.level() - depth, "levels consumed");
    assert_eq!(out.scale(), delta, "output scale");
    s.decrypt(&out)
}

fn report(name: &str, depth: usize, he_bits: f64, approx_error: f64) {
    eprintln!(
        "{name}: depth {depth}, HE vs f64 {he_bits:.1} bits, approximation error 2^{:.1}",
        approx_error.log2()
    );
}

// ------------------------------------------------------------------ inverse, sqrt

#[test]
fn inverse_by_goldschmidt() {
    let s = fixture();
    let inv = Inverse::new(1.0, 4.0, 5).unwrap();
    assert_eq!(inv.depth(), 7);
    let xs = uniform(s.slots(), 1.0, 4.0, 1);
    let got = run(&xs, inv.depth(), |e, c, t| inv.evaluate(e, c, t));
    let want: Vec<f64> = xs.iter().map(|&x| inv.evaluate_plain(x)).collect();
    let bits = precision_bits(&got, &want);
    report(
        "1/x on [1, 4], 5 iterations",
        inv.depth(),
        bits,
        inv.approximation_error(),
    );
    assert!(bits >= 20.0, "{bits}");
    assert!(inv.approximation_error() < 2f64.powi(-38));
    // Against the true function too (the approximation error is far below the HE error).
    let truth: Vec<f64> = xs.iter().map(|x| 1.0 / x).collect();
    assert!(precision_bits(&got, &truth) >= 20.0);
}

#[test]
fn inverse_iterations_for_a_precision() {
    let s = fixture();
    let inv = Inverse::with_precision(0.125, 1.0, 20).unwrap();
    // |b| = 7/9: 2^(n+1)·log2(9/7) ≥ 20 first at n = 5.
    assert_eq!(inv.iterations(), 5);
    assert!(inv.approximation_error() <= 8.0 * 2f64.powi(-20));
    let fewer = Inverse::new(0.125, 1.0, 4).unwrap();
    assert!(fewer.approximation_error() > 8.0 * 2f64.powi(-20));
    let xs = uniform(s.slots(), 0.125, 1.0, 2);
    let got = run(&xs, inv.depth(), |e, c, t| inv.evaluate(e, c, t));
    let want: Vec<f64> = xs.iter().map(|&x| inv.evaluate_plain(x)).collect();
    let bits = precision_bits(&got, &want);
    report(
        "1/x on [1/8, 1], 5 iterations",
        inv.depth(),
        bits,
        inv.approximation_error(),
    );
    assert!(bits >= 20.0, "{bits}");
    // No iteration: the linear guess 2c − c²x, one level.
    let lin = Inverse::new(0.125, 1.0, 0).unwrap();
    assert_eq!(lin.depth(), 1);
    let got = run(&xs, 1, |e, c, t| lin.evaluate(e, c, t));
    let want: Vec<f64> = xs.iter().map(|&x| lin.evaluate_plain(x)).collect();
    assert!(precision_bits(&got, &want) >= 20.0);
}

#[test]
fn inverse_square_root_and_square_root_by_newton() {
    let s = fixture();
    let xs = uniform(s.slots(), 1.0, 4.0, 3);
    let isq = InvSqrt::new(1.0, 4.0, 1, 3).unwrap();
    assert_eq!(isq.depth(), 7);
    let got = run(&xs, isq.depth(), |e, c, t| isq.evaluate(e, c, t));
    let want: Vec<f64> = xs.iter().map(|&x| isq.evaluate_plain(x)).collect();
    let bits = precision_bits(&got, &want);
    report(
        "1/sqrt(x) on [1, 4], linear guess, 3 steps",
        isq.depth(),
        bits,
        isq.approximation_error(),
    );
    assert!(bits >= 20.0, "{bits}");
    assert!(isq.approximation_error() < 2f64.powi(-22));

    let sq = Sqrt::new(1.0, 4.0, 1, 3).unwrap();
    assert_eq!(sq.depth(), 8);
    let got = run(&xs, sq.depth(), |e, c, t| sq.evaluate(e, c, t));
    let want: Vec<f64> = xs.iter().map(|&x| sq.evaluate_plain(x)).collect();
    let bits = precision_bits(&got, &want);
    report(
        "sqrt(x) on [1, 4], linear guess, 3 steps",
        sq.depth(),
        bits,
        sq.approximation_error(),
    );
    assert!(bits >= 20.0, "{bits}");
    assert!(sq.approximation_error() < 2f64.powi(-22));
    let truth: Vec<f64> = xs.iter().map(|x| x.sqrt()).collect();
    assert!(precision_bits(&got, &truth) >= 20.0);
}

#[test]
fn inverse_square_root_with_a_polynomial_guess() {
    let s = fixture();
    let xs = uniform(s.slots(), 0.0625, 1.0, 4);
    let isq = InvSqrt::new(0.0625, 1.0, 7, 2).unwrap();
    // Degree 7 on [1/16, 1]: 3 + 1 (interval map) levels, then 2 per step.
    assert_eq!(isq.depth(), 8);
    let got = run(&xs, isq.depth(), |e, c, t| isq.evaluate(e, c, t));
    let want: Vec<f64> = xs.iter().map(|&x| isq.evaluate_plain(x)).collect();
    let bits = precision_bits(&got, &want);
    report(
        "1/sqrt(x) on [1/16, 1], degree-7 guess, 2 steps",
        isq.depth(),
        bits,
        isq.approximation_error(),
    );
    assert!(bits >= 20.0, "{bits}");
    assert!(isq.approximation_error() < 2f64.powi(-20));
}

// ------------------------------------------------------------------ smooth functions

fn smooth_case(f: &SmoothFunction, a: f64, b: f64, depth: usize, seed: u64) {
    let s = fixture();
    assert_eq!(f.depth(), depth, "{}", f.name());
    let xs = uniform(s.slots(), a, b, seed);
    let got = run(&xs, depth, |e, c, t| f.evaluate(e, c, t));
    let want: Vec<f64> = xs.iter().map(|&x| f.evaluate_plain(x)).collect();
    let bits = precision_bits(&got, &want);
    report(
        &format!(
            "{} on [{a}, {b}], degree {}",
            f.name(),
            f.polynomial().degree()
        ),
        depth,
        bits,
        f.fit_error(),
    );
    assert!(bits >= 20.0, "{}: {bits}", f.name());
}

#[test]
fn sigmoid_exp_tanh_by_chebyshev_interpolation() {
    let sig = SmoothFunction::sigmoid(-8.0, 8.0, 63).unwrap();
    assert!(sig.fit_error() < 2f64.powi(-35), "{}", sig.fit_error());
    smooth_case(&sig, -8.0, 8.0, 7, 5);
    let exp = SmoothFunction::exp(-2.0, 2.0, 15).unwrap();
    assert!(exp.fit_error() < 2f64.powi(-42), "{}", exp.fit_error());
    smooth_case(&exp, -2.0, 2.0, 5, 6);
    let tanh = SmoothFunction::tanh(-4.0, 4.0, 31).unwrap();
    assert!(tanh.fit_error() < 2f64.powi(-17), "{}", tanh.fit_error());
    smooth_case(&tanh, -4.0, 4.0, 6, 7);
    // On [−1, 1] no interval map: degree 15 costs 4 levels.
    let t1 = SmoothFunction::tanh(-1.0, 1.0, 15).unwrap();
    smooth_case(&t1, -1.0, 1.0, 4, 8);
}

// ------------------------------------------------------------------ sign, ReLU, max

#[test]
fn sign_relu_and_max_by_composite_polynomials() {
    let s = fixture();
    // α = 8 bits at ε = 1/8: g_3 ∘ then f_3 ∘ f_3, 3 levels each: 9 levels (ReLU, max: 10).
    let sign = Sign::cheon_kim_kim_lee(3, 8, 0.125).unwrap();
    assert_eq!(
        sign.construction(),
        SignConstruction::CheonKimKimLee {
            n: 3,
            g_count: 1,
            f_count: 2
        }
    );
    assert_eq!(sign.depth(), 9);
    let xs = uniform_with_gap(s.slots(), 0.125, 9);
    let got = run(&xs, 9, |e, c, t| sign.sign(e, c, t));
    let want: Vec<f64> = xs.iter().map(|&x| sign.evaluate_plain(x)).collect();
    let bits = precision_bits(&got, &want);
    report("sign, α = 8, ε = 1/8", 9, bits, sign.max_error());
    assert!(bits >= 20.0, "{bits}");
    let truth: Vec<f64> = xs.iter().map(|x| x.signum()).collect();
    assert!(precision_bits(&got, &truth) >= 8.0);

    let got = run(&xs, 10, |e, c, t| sign.relu(e, c, t));
    let want: Vec<f64> = xs.iter().map(|&x| sign.relu_plain(x)).collect();
    let bits = precision_bits(&got, &want);
    report("ReLU, α = 8, ε = 1/8", 10, bits, sign.max_error());
    assert!(bits >= 20.0, "{bits}");
    let truth: Vec<f64> = xs.iter().map(|x| x.max(0.0)).collect();
    assert!(precision_bits(&got, &truth) >= 8.0);

    // max(a, b) with a − b = the gapped values: a = m + d/2, b = m − d/2, m ∈ [−1/2, 1/2].
    let ms = uniform(s.slots(), -0.5, 0.5, 10);
    let as_: Vec<f64> = ms.iter().zip(&xs).map(|(m, d)| m + d / 2.0).collect();
    let bs: Vec<f64> = ms.iter().zip(&xs).map(|(m, d)| m - d / 2.0).collect();
    let (ca, cb) = (s.encrypt(&as_, 12), s.encrypt(&bs, 13));
    let out = sign.max(&s.eval, &ca, &cb, ca.scale()).unwrap();
    assert_eq!(out.level(), ca.level() - sign.depth() - 1);
    assert_eq!(out.scale(), ca.scale());
    let got = s.decrypt(&out);
    let want: Vec<f64> = as_
        .iter()
        .zip(&bs)
        .map(|(&a, &b)| sign.max_plain(a, b))
        .collect();
    let bits = precision_bits(&got, &want);
    report("max, α = 8, ε = 1/8", 10, bits, sign.max_error());
    assert!(bits >= 20.0, "{bits}");
}

#[test]
fn sign_at_a_small_depth_and_higher_precision() {
    let s = fixture();
    // ε = 1/4, α = 20: one minimax stage of degree 63 (6 levels), error 2^−25.6.
    let sign = Sign::new(20, 0.25).unwrap();
    assert_eq!(
        sign.construction(),
        SignConstruction::Minimax {
            degree: 63,
            stages: 1
        }
    );
    assert_eq!(sign.depth(), 6);
    assert!(sign.max_error() <= 2f64.powi(-20));
    let xs = uniform_with_gap(s.slots(), 0.25, 14);
    let got = run(&xs, 6, |e, c, t| sign.sign(e, c, t));
    let want: Vec<f64> = xs.iter().map(|&x| sign.evaluate_plain(x)).collect();
    let bits = precision_bits(&got, &want);
    report("sign (minimax), α = 20, ε = 1/4", 6, bits, sign.max_error());
    assert!(bits >= 20.0, "{bits}");
}

#[test]
fn minimax_composite_of_two_stages_with_relu() {
    let s = fixture();
    // ε = 1/16, α = 8: two minimax stages of degree 15 (the first normalised), 8 levels.
    let sign = Sign::new(8, 1.0 / 16.0).unwrap();
    assert_eq!(
        sign.construction(),
        SignConstruction::Minimax {
            degree: 15,
            stages: 2
        }
    );
    assert_eq!(sign.depth(), 8);
    let xs = uniform_with_gap(s.slots(), 1.0 / 16.0, 19);
    let got = run(&xs, 8, |e, c, t| sign.sign(e, c, t));
    let want: Vec<f64> = xs.iter().map(|&x| sign.evaluate_plain(x)).collect();
    let bits = precision_bits(&got, &want);
    report(
        "sign (minimax 15 x 2), α = 8, ε = 1/16",
        8,
        bits,
        sign.max_error(),
    );
    assert!(bits >= 20.0, "{bits}");
    let truth: Vec<f64> = xs.iter().map(|x| x.signum()).collect();
    assert!(precision_bits(&got, &truth) >= 8.0);
    let got = run(&xs, 9, |e, c, t| sign.relu(e, c, t));
    let want: Vec<f64> = xs.iter().map(|&x| sign.relu_plain(x)).collect();
    let bits = precision_bits(&got, &want);
    report(
        "ReLU (minimax 15 x 2), α = 8, ε = 1/16",
        9,
        bits,
        sign.max_error(),
    );
    assert!(bits >= 20.0, "{bits}");
}

#[test]
fn any_target_scale_is_hit_exactly() {
    let s = fixture();
    let target = 1.2345 * 2f64.powi(36);
    let xs = uniform(s.slots(), 1.0, 2.0, 17);
    let ct = s.encrypt(&xs, 18);
    let inv = Inverse::new(1.0, 2.0, 3).unwrap();
    let sq = Sqrt::new(1.0, 2.0, 1, 2).unwrap();
    let sign = Sign::new(6, 0.5).unwrap();
    let outs = [
        (inv.evaluate(&s.eval, &ct, target).unwrap(), inv.depth()),
        (sq.evaluate(&s.eval, &ct, target).unwrap(), sq.depth()),
        (
            sign.relu(&s.eval, &s.eval.sub_const(&ct, 1.5).unwrap(), target)
                .unwrap(),
            sign.depth() + 1,
        ),
    ];
    let wants: [Vec<f64>; 3] = [
        xs.iter().map(|&x| inv.evaluate_plain(x)).collect(),
        xs.iter().map(|&x| sq.evaluate_plain(x)).collect(),
        xs.iter().map(|&x| sign.relu_plain(x - 1.5)).collect(),
    ];
    for ((out, depth), want) in outs.iter().zip(&wants) {
        assert_eq!(out.scale(), target);
        assert_eq!(out.level(), ct.level() - depth);
        let bits = precision_bits(&s.decrypt(out), want);
        assert!(bits >= 20.0, "{bits}");
    }
}

// ------------------------------------------------------------------ errors

#[test]
fn bad_intervals_and_missing_levels_are_typed_errors() {
    let s = fixture();
    for (lo, hi) in [(-1.0, 1.0), (0.0, 1.0), (2.0, 1.0), (1.0, f64::INFINITY)] {
        assert!(matches!(
            Inverse::new(lo, hi, 3),
            Err(Error::InvalidInput(_))
        ));
        assert!(matches!(
            InvSqrt::new(lo, hi, 1, 3),
            Err(Error::InvalidInput(_))
        ));
        assert!(matches!(
            Sqrt::new(lo, hi, 1, 3),
            Err(Error::InvalidInput(_))
        ));
    }
    assert!(matches!(
        Inverse::new(1.0, 2.0, 31),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        InvSqrt::new(1.0, 2.0, 0, 1),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        SmoothFunction::exp(1.0, 1.0, 7),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        SmoothFunction::exp(-1.0, 1.0, 0),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(Sign::new(8, 0.0), Err(Error::InvalidInput(_))));

    let xs = uniform(s.slots(), 1.0, 2.0, 15);
    let ct = s.encrypt(&xs, 16);
    let low = s.eval.drop_to_level(&ct, 4).unwrap();
    let inv = Inverse::new(1.0, 2.0, 4).unwrap(); // depth 6
    match inv.evaluate(&s.eval, &low, low.scale()) {
        Err(Error::LevelUnderflow { level, needed, .. }) => assert_eq!((level, needed), (4, 6)),
        other => panic!(
            "expected LevelUnderflow, got {:?}",
            other.map(|c| c.level())
        ),
    }
    let sq = Sqrt::new(1.0, 2.0, 1, 2).unwrap(); // depth 6
    assert!(matches!(
        sq.evaluate(&s.eval, &low, low.scale()),
        Err(Error::LevelUnderflow { needed: 6, .. })
    ));
    let sign = Sign::cheon_kim_kim_lee(3, 8, 0.125).unwrap(); // depth 9, ReLU 10
    let nine = s.eval.drop_to_level(&ct, 9).unwrap();
    assert!(matches!(
        sign.relu(&s.eval, &nine, nine.scale()),
        Err(Error::LevelUnderflow { needed: 10, .. })
    ));
    let sig = SmoothFunction::sigmoid(-8.0, 8.0, 63).unwrap(); // depth 7
    assert!(matches!(
        sig.evaluate(&s.eval, &low, low.scale()),
        Err(Error::LevelUnderflow { needed: 7, .. })
    ));
    assert!(matches!(
        inv.evaluate(&s.eval, &ct, 0.5),
        Err(Error::InvalidScale { .. })
    ));
}
