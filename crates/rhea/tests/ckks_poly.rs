//! Homomorphic polynomial evaluation (`Evaluator::evaluate_polynomial[s]`): the depth is exactly
//! `Polynomial::depth`, the output scale exactly the target, the HE error against the same
//! polynomial in `f64` at least 20 bits at `Δ = 2^40`, auto-rescale and manual mode give the same
//! words, several polynomials share their powers (the same words as alone, fewer key switches),
//! bad inputs are typed errors, and (ignored without one) the GPU gives the CPU's words.

mod common;

use std::sync::Arc;

use common::{precision_bits, random_vec};
use rhea::ckks::{
    Ciphertext, CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator, Parity,
    Polynomial,
};
use rhea::params::{CkksParameters, CkksParametersLiteral};
use rhea::rlwe::SecretKey;
use rhea::serial::{Codec, Compression};
use rhea::{Device, Error};

struct Fixture {
    params: CkksParameters,
    ctx: CkksContext,
    sk: SecretKey,
    encoder: Encoder,
    encryptor: Encryptor,
    eval: Evaluator,
    manual: Evaluator,
    codec: Codec,
}

fn fixture(device: Device) -> Fixture {
    let params = CkksParametersLiteral::test_n13_levels10_insecure()
        .build()
        .unwrap();
    let ctx = CkksContext::new(&params, device).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [33; 32]);
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
    Fixture {
        codec: Codec::new(params.clone(), device).unwrap(),
        encoder: Encoder::new(&ctx).unwrap(),
        encryptor: Encryptor::new(&ctx, &pk).unwrap().with_seed([34; 32]),
        params,
        ctx,
        sk,
        eval,
        manual,
    }
}

impl Fixture {
    /// Values uniform in `[a, b)` (seeded), encrypted at the top level and scale `Δ`.
    fn input(&self, a: f64, b: f64, seed: u64) -> (Vec<f64>, Ciphertext) {
        let xs: Vec<f64> = random_vec(self.encoder.slots(), seed)
            .into_iter()
            .map(|u| a + (b - a) * (u + 1.0) / 2.0)
            .collect();
        let ct = self
            .encryptor
            .encrypt(&self.encoder.encode(&xs).unwrap())
            .unwrap();
        (xs, ct)
    }

    fn decrypt(&self, ct: &Ciphertext) -> Vec<f64> {
        let pt = Decryptor::new(&self.ctx, &self.sk)
            .unwrap()
            .decrypt(ct)
            .unwrap();
        self.encoder.decode(&pt).unwrap()
    }

    fn bytes(&self, ct: &Ciphertext) -> Vec<u8> {
        self.codec.to_bytes(ct, Compression::NONE).unwrap()
    }

    fn delta(&self) -> f64 {
        self.params.default_scale()
    }

    /// Evaluates `p` on `ct`, checks the depth and the exact scale, and returns the precision
    /// in bits against `p` in `f64`.
    fn check(&self, what: &str, p: &Polynomial, xs: &[f64], ct: &Ciphertext, scale: f64) -> f64 {
        let out = self.eval.evaluate_polynomial(ct, p, scale).unwrap();
        assert_eq!(
            ct.level() - out.level(),
            p.depth(),
            "{what}: levels used (degree {})",
            p.degree()
        );
        assert_eq!(
            out.scale(),
            scale,
            "{what}: the output scale is not the target"
        );
        let got = self.decrypt(&out);
        let want: Vec<f64> = xs.iter().map(|&x| p.evaluate(x)).collect();
        let noisy: Vec<f64> = self.decrypt(ct).iter().map(|&x| p.evaluate(x)).collect();
        eprintln!(
            "{what}, degree {}: {:.1} bits against the input, {:.1} against the decrypted input",
            p.degree(),
            precision_bits(&got, &want),
            precision_bits(&got, &noisy)
        );
        precision_bits(&got, &want)
    }
}

/// Coefficients from a seed, of magnitude at most `1/(1+i)^2` (like the Chebyshev coefficients
/// of a smooth function; with `O(1)` coefficients on `T_63` the polynomial's derivative, up to
/// `63^2` at the ends, multiplies the input's encryption noise by 2^12), zero off `parity`.
fn coeffs(degree: usize, parity: Parity, seed: u64) -> Vec<f64> {
    random_vec(degree + 1, seed)
        .into_iter()
        .enumerate()
        .map(|(i, c)| match parity {
            Parity::Even if i % 2 == 1 => 0.0,
            Parity::Odd if i % 2 == 0 => 0.0,
            // A non-zero leading coefficient, so the degree is `degree`.
            _ if i == degree => (0.5 + c.abs() / 2.0) / (1.0 + i as f64).powi(2),
            _ => c / (1.0 + i as f64).powi(2),
        })
        .collect()
}

#[test]
fn depth_is_as_documented_and_the_scale_exact_for_many_degrees() {
    let f = fixture(Device::Cpu);
    let (xs, ct) = f.input(-1.0, 1.0, 1);
    let (ys, ct_ab) = f.input(-2.0, 3.0, 2);
    let delta = f.delta();
    // A target that is not a power of two, to see it land exactly.
    let odd_scale = delta * 1.234_567_890_123;
    let mut worst: f64 = f64::INFINITY;
    for (k, &d) in [1usize, 2, 3, 7, 8, 15, 31, 63].iter().enumerate() {
        let parities: &[Parity] = match d % 2 {
            0 => &[Parity::Mixed, Parity::Even],
            _ => &[Parity::Mixed, Parity::Odd],
        };
        for (j, &parity) in parities.iter().enumerate() {
            let c = coeffs(d, parity, 100 + k as u64 * 10 + j as u64);
            let scale = if j == 0 { delta } else { odd_scale };
            let mono = Polynomial::monomial(c.clone()).unwrap();
            let cheb = Polynomial::chebyshev(c.clone(), -1.0, 1.0).unwrap();
            let mapped = Polynomial::chebyshev(c, -2.0, 3.0).unwrap();
            assert_eq!(mono.depth(), bits(d));
            assert_eq!(cheb.depth(), bits(d));
            assert_eq!(mapped.depth(), bits(d) + 1);
            if parity != Parity::Mixed {
                assert_eq!(mono.parity(), parity);
            }
            for (what, p, xs, ct) in [
                ("monomial", &mono, &xs, &ct),
                ("chebyshev", &cheb, &xs, &ct),
                ("chebyshev on [-2, 3]", &mapped, &ys, &ct_ab),
            ] {
                let bits = f.check(what, p, xs, ct, scale);
                worst = worst.min(bits);
                assert!(
                    bits >= 20.0,
                    "{what}, degree {d} {parity:?}: {bits:.1} bits"
                );
            }
        }
    }
    eprintln!("worst precision over the degrees: {worst:.1} bits");
}

fn bits(d: usize) -> usize {
    (usize::BITS - d.leading_zeros()) as usize
}

#[test]
fn precision_of_sigmoid_exp_a_random_cubic_and_an_odd_polynomial() {
    let f = fixture(Device::Cpu);
    let delta = f.delta();

    let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
    let fit = Polynomial::interpolate(sigmoid, -8.0, 8.0, 63).unwrap();
    let (xs, ct) = f.input(-8.0, 8.0, 3);
    let bits = f.check("sigmoid", &fit.polynomial, &xs, &ct, delta);
    eprintln!(
        "sigmoid on [-8, 8], degree 63: HE error {bits:.1} bits, fit error {:.1} bits, depth {}",
        -fit.max_error.log2(),
        fit.polynomial.depth()
    );
    assert!(bits >= 20.0, "sigmoid: {bits:.1} bits");
    assert_eq!(fit.polynomial.depth(), 7);
    let start = std::time::Instant::now();
    f.eval
        .evaluate_polynomial(&ct, &fit.polynomial, delta)
        .unwrap();
    eprintln!(
        "sigmoid degree 63 at N = 2^13 from level {}: {:.1} ms on the CPU",
        ct.level(),
        start.elapsed().as_secs_f64() * 1e3
    );
    // Without the rounding noise on the even coefficients: only odd powers, fewer products.
    let odd = fit.polynomial.truncated(1e-14).unwrap();
    let ks = f.ctx.keyswitches();
    let bits = f.check("sigmoid, truncated", &odd, &xs, &ct, delta);
    let used = f.ctx.keyswitches() - ks;
    eprintln!(
        "sigmoid: {} products and {} relinearisations, {} and {used} once truncated",
        fit.polynomial.ciphertext_products(),
        fit.polynomial.relinearizations(),
        odd.ciphertext_products(),
    );
    assert_eq!(used, odd.relinearizations() as u64);
    assert!(odd.relinearizations() < fit.polynomial.relinearizations());
    assert!(bits >= 20.0, "truncated sigmoid: {bits:.1} bits");

    let fit = Polynomial::interpolate(f64::exp, -1.0, 1.0, 15).unwrap();
    let (xs, ct) = f.input(-1.0, 1.0, 4);
    let bits = f.check("exp", &fit.polynomial, &xs, &ct, delta);
    eprintln!("exp on [-1, 1], degree 15: {bits:.1} bits");
    assert!(bits >= 20.0, "exp: {bits:.1} bits");
    assert_eq!(fit.polynomial.depth(), 4);

    let mono = Polynomial::monomial(random_vec(8, 5)).unwrap();
    assert_eq!(mono.degree(), 7);
    let bits = f.check("monomial of degree 7", &mono, &xs, &ct, delta);
    eprintln!("random monomial of degree 7 on [-1, 1]: {bits:.1} bits");
    assert!(bits >= 20.0, "monomial: {bits:.1} bits");

    // An odd polynomial: the odd part of a sign-like fit, degree 31.
    let fit = Polynomial::interpolate(|x: f64| (4.0 * x).tanh(), -1.0, 1.0, 31).unwrap();
    let odd: Vec<f64> = fit
        .polynomial
        .coefficients()
        .iter()
        .enumerate()
        .map(|(i, &c)| if i % 2 == 1 { c } else { 0.0 })
        .collect();
    let odd = Polynomial::chebyshev(odd, -1.0, 1.0).unwrap();
    assert_eq!(odd.parity(), Parity::Odd);
    let bits = f.check("odd tanh(4x)", &odd, &xs, &ct, delta);
    eprintln!("odd polynomial of degree 31: {bits:.1} bits");
    assert!(bits >= 20.0, "odd: {bits:.1} bits");
}

#[test]
fn auto_rescale_and_manual_mode_give_the_same_words() {
    let f = fixture(Device::Cpu);
    let (_, ct) = f.input(-8.0, 8.0, 6);
    let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
    let sig = Polynomial::interpolate(sigmoid, -8.0, 8.0, 63)
        .unwrap()
        .polynomial;
    let mono = Polynomial::monomial(vec![0.5, -0.25, 0.125, 0.3, 0.0, -0.01]).unwrap();
    for p in [&sig, &mono] {
        let a = f.eval.evaluate_polynomial(&ct, p, f.delta()).unwrap();
        let m = f.manual.evaluate_polynomial(&ct, p, f.delta()).unwrap();
        assert_eq!(a.level(), m.level());
        assert_eq!(a.scale(), m.scale());
        assert!(f.bytes(&a) == f.bytes(&m), "auto and manual words differ");
    }
}

#[test]
fn several_polynomials_share_their_powers() {
    let f = fixture(Device::Cpu);
    let (_, ct) = f.input(-8.0, 8.0, 7);
    let sig = Polynomial::interpolate(|x| 1.0 / (1.0 + (-x).exp()), -8.0, 8.0, 63)
        .unwrap()
        .polynomial;
    let tanh = Polynomial::interpolate(|x| (x / 2.0).tanh(), -8.0, 8.0, 31)
        .unwrap()
        .polynomial;
    let gauss = Polynomial::interpolate(|x| (-x * x / 8.0).exp(), -8.0, 8.0, 40)
        .unwrap()
        .polynomial;
    let ps = [&sig, &tanh, &gauss];
    let ks = f.ctx.keyswitches();
    let together = f.eval.evaluate_polynomials(&ct, &ps, f.delta()).unwrap();
    let shared = f.ctx.keyswitches() - ks;
    let mut alone_total = 0;
    for (p, t) in ps.iter().zip(&together) {
        let ks = f.ctx.keyswitches();
        let alone = f.eval.evaluate_polynomial(&ct, p, f.delta()).unwrap();
        // The documented count is what the backend counts.
        assert_eq!(f.ctx.keyswitches() - ks, p.relinearizations() as u64);
        alone_total += f.ctx.keyswitches() - ks;
        assert_eq!(alone.level(), t.level());
        assert_eq!(alone.scale(), t.scale());
        assert!(
            f.bytes(&alone) == f.bytes(t),
            "shared and alone words differ"
        );
    }
    eprintln!("relinearisations: {shared} shared, {alone_total} one by one");
    assert!(shared < alone_total, "{shared} vs {alone_total}");
    assert!(shared > 0);
}

#[test]
fn mixed_bases_and_constants_in_one_call_and_other_input_scales() {
    let f = fixture(Device::Cpu);
    let (xs, ct) = f.input(-1.0, 1.0, 11);
    let mono = Polynomial::monomial(coeffs(7, Parity::Mixed, 12)).unwrap();
    let cheb = Polynomial::chebyshev(coeffs(12, Parity::Even, 13), -1.0, 1.0).unwrap();
    let mapped = Polynomial::chebyshev(coeffs(9, Parity::Odd, 14), -1.5, 1.0).unwrap();
    let constant = Polynomial::chebyshev(vec![-0.3], -1.5, 1.0).unwrap();
    let ps = [&mono, &cheb, &constant, &mapped];
    let together = f.eval.evaluate_polynomials(&ct, &ps, f.delta()).unwrap();
    for (p, t) in ps.iter().zip(&together) {
        let alone = f.eval.evaluate_polynomial(&ct, p, f.delta()).unwrap();
        assert_eq!((alone.level(), alone.scale()), (t.level(), t.scale()));
        assert!(
            f.bytes(&alone) == f.bytes(t),
            "shared and alone words differ"
        );
        assert_eq!(ct.level() - t.level(), p.depth());
        let want: Vec<f64> = xs.iter().map(|&x| p.evaluate(x)).collect();
        let bits = precision_bits(&f.decrypt(t), &want);
        assert!(bits >= 20.0, "{bits:.1} bits");
    }

    // An input below the top level, at a scale other than Δ, to a target other than Δ.
    let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
    let p = Polynomial::interpolate(sigmoid, -8.0, 8.0, 31)
        .unwrap()
        .polynomial;
    let xs: Vec<f64> = xs.iter().map(|x| 8.0 * x).collect();
    for (in_scale, target) in [(2f64.powi(37), 2f64.powi(43)), (1.75e12, 3.3e11)] {
        let level = 7;
        let pt = f.encoder.encode_at(&xs, level, in_scale).unwrap();
        let ct = f.encryptor.encrypt(&pt).unwrap();
        assert_eq!((ct.level(), ct.scale()), (level, in_scale));
        let bits = f.check("sigmoid from another scale", &p, &xs, &ct, target);
        assert!(bits >= 20.0, "input scale {in_scale:e}: {bits:.1} bits");
    }
    // Without an interval map the powers' scales (squares over primes) are brought back to
    // about Δ: from an input at 2^33 they would otherwise fall below 1 by T_16.
    let xs: Vec<f64> = xs.iter().map(|x| x / 8.0).collect();
    let pt = f.encoder.encode_at(&xs, 9, 2f64.powi(33)).unwrap();
    let ct = f.encryptor.encrypt(&pt).unwrap();
    for p in [
        Polynomial::chebyshev(coeffs(31, Parity::Odd, 15), -1.0, 1.0).unwrap(),
        Polynomial::monomial(coeffs(20, Parity::Mixed, 16)).unwrap(),
    ] {
        let bits = f.check("from scale 2^33", &p, &xs, &ct, f.delta());
        assert!(bits >= 18.0, "input scale 2^33: {bits:.1} bits");
    }
}

#[test]
fn constants_and_degree_one_need_no_products() {
    let f = fixture(Device::Cpu);
    let no_keys = Evaluator::new(&f.ctx);
    let (xs, ct) = f.input(-1.0, 1.0, 8);
    let c = Polynomial::monomial(vec![0.75, 0.0]).unwrap();
    assert_eq!(c.depth(), 0);
    let out = no_keys.evaluate_polynomial(&ct, &c, f.delta()).unwrap();
    assert_eq!((out.level(), out.scale()), (ct.level(), f.delta()));
    let want = vec![0.75; xs.len()];
    assert!(precision_bits(&f.decrypt(&out), &want) > 30.0);
    // Degree 1 (and a map): no ciphertext product, so no relinearisation key needed.
    let line = Polynomial::chebyshev(vec![0.25, -0.5], -3.0, 5.0).unwrap();
    assert_eq!(line.depth(), 2);
    let out = no_keys.evaluate_polynomial(&ct, &line, f.delta()).unwrap();
    assert_eq!(ct.level() - out.level(), 2);
    let want: Vec<f64> = xs.iter().map(|&x| line.evaluate(x)).collect();
    assert!(precision_bits(&f.decrypt(&out), &want) > 25.0);
}

#[test]
fn bad_inputs_are_typed_errors() {
    let f = fixture(Device::Cpu);
    let (_, ct) = f.input(-1.0, 1.0, 9);
    let p = Polynomial::chebyshev(vec![0.1, 0.2, 0.3, 0.4], -2.0, 2.0).unwrap();
    assert_eq!(p.depth(), 3);
    let low = f.eval.drop_to_level(&ct, 2).unwrap();
    match f.eval.evaluate_polynomial(&low, &p, f.delta()) {
        Err(Error::LevelUnderflow { level, needed, .. }) => assert_eq!((level, needed), (2, 3)),
        other => panic!("expected LevelUnderflow, got {other:?}"),
    }
    // Exactly enough levels works, and lands at level 0.
    let three = f.eval.drop_to_level(&ct, 3).unwrap();
    let out = f.eval.evaluate_polynomial(&three, &p, f.delta()).unwrap();
    assert_eq!(out.level(), 0);
    let no_keys = Evaluator::new(&f.ctx);
    assert!(matches!(
        no_keys.evaluate_polynomial(&ct, &p, f.delta()),
        Err(Error::MissingRelinearizationKey { .. })
    ));
    assert!(matches!(
        f.eval.evaluate_polynomials(&ct, &[], f.delta()),
        Err(Error::InvalidInput(_))
    ));
    for bad in [0.0, 0.5, -1.0, f64::NAN, f64::INFINITY] {
        assert!(
            matches!(
                f.eval.evaluate_polynomial(&ct, &p, bad),
                Err(Error::InvalidScale { .. })
            ),
            "target scale {bad}"
        );
    }
    // A target scale that does not fit at the output level (level 0: a 60-bit prime).
    assert!(matches!(
        f.eval.evaluate_polynomial(&three, &p, 2f64.powi(70)),
        Err(Error::ScaleOverflow { .. })
    ));
    let three_parts = f.eval.mul_no_relin(&ct, &ct).unwrap();
    assert!(matches!(
        f.eval.evaluate_polynomial(&three_parts, &p, f.delta()),
        Err(Error::CiphertextDegree { .. })
    ));
    // A coefficient too large for an integer constant.
    let huge = Polynomial::monomial(vec![0.0, 1e30, 1.0]).unwrap();
    assert!(matches!(
        f.eval.evaluate_polynomial(&ct, &huge, f.delta()),
        Err(Error::InvalidInput(_))
    ));
}

fn gpu_matches_cpu(device: Device) {
    let cpu = fixture(Device::Cpu);
    let gpu = fixture(device);
    let sig = Polynomial::interpolate(|x| 1.0 / (1.0 + (-x).exp()), -8.0, 8.0, 63)
        .unwrap()
        .polynomial;
    let mono = Polynomial::monomial(random_vec(8, 5)).unwrap();
    let (xs, ct_cpu) = cpu.input(-8.0, 8.0, 10);
    let (_, ct_gpu) = gpu.input(-8.0, 8.0, 10);
    assert!(cpu.bytes(&ct_cpu) == gpu.bytes(&ct_gpu), "inputs differ");
    let a = cpu
        .eval
        .evaluate_polynomials(&ct_cpu, &[&sig, &mono], cpu.delta())
        .unwrap();
    let b = gpu
        .eval
        .evaluate_polynomials(&ct_gpu, &[&sig, &mono], gpu.delta())
        .unwrap();
    for (x, y) in a.iter().zip(&b) {
        assert_eq!((x.level(), x.scale()), (y.level(), y.scale()));
        assert!(
            cpu.bytes(x) == gpu.bytes(y),
            "GPU words differ from the CPU's"
        );
    }
    let want: Vec<f64> = xs.iter().map(|&x| sig.evaluate(x)).collect();
    let bits = precision_bits(&gpu.decrypt(&b[0]), &want);
    assert!(bits >= 20.0, "sigmoid on the GPU: {bits:.1} bits");
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn polynomial_evaluation_on_the_gpu_matches_the_cpu() {
    let device = Device::Cuda(0);
    if let Err(e) = device.check_supported() {
        panic!("this test needs a CUDA GPU: {e}");
    }
    let before = device.fused_fallbacks();
    gpu_matches_cpu(device);
    assert_eq!(device.fused_fallbacks(), before, "a fused path fell back");
}
