//! Tests of the CKKS special FFT against the `O(n²)` embedding, of its sparse-slot and rotation
//! semantics, and of the double-double path against an `O(n²)` double-double evaluation.

use num_complex::Complex64;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rhea_math::fft::{naive_embedding, DoubleDouble, SpecialFft, MAX_SLOTS};
use rhea_math::MathError;

fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

fn random_slots(r: &mut StdRng, n: usize) -> Vec<Complex64> {
    (0..n)
        .map(|_| Complex64::new(r.random_range(-1.0..1.0), r.random_range(-1.0..1.0)))
        .collect()
}

fn max_err(a: &[Complex64], b: &[Complex64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).norm())
        .fold(0.0, f64::max)
}

#[test]
fn new_validates_slots() {
    for bad in [0usize, 3, 6, MAX_SLOTS * 2] {
        assert!(matches!(
            SpecialFft::new(bad),
            Err(MathError::InvalidArgument(_))
        ));
    }
    let f = SpecialFft::new(8).unwrap();
    assert_eq!(f.slots(), 8);
    assert_eq!(f.rotation_group(), &[1, 5, 25, 29, 17, 21, 9, 13]);
    let mut wrong = vec![Complex64::new(1.0, 0.0); 4];
    assert!(matches!(
        f.forward(&mut wrong),
        Err(MathError::ShapeMismatch(_))
    ));
    assert!(matches!(
        f.inverse(&mut wrong),
        Err(MathError::ShapeMismatch(_))
    ));
    assert!(f.encode_to_real(&wrong).is_err());
    assert!(f.decode_from_real(&[0.0; 8]).is_err());
}

#[test]
fn forward_inverse_roundtrip_at_2_15() {
    let n = 1 << 15;
    let f = SpecialFft::new(n).unwrap();
    let mut r = rng(1);
    let z = random_slots(&mut r, n);
    let mut v = z.clone();
    f.inverse(&mut v).unwrap();
    f.forward(&mut v).unwrap();
    let norm = z.iter().map(|x| x.norm()).fold(0.0, f64::max);
    let rel = max_err(&v, &z) / norm;
    assert!(rel < 1e-12, "forward∘inverse relative error {rel:e}");
    let mut w = z.clone();
    f.forward(&mut w).unwrap();
    f.inverse(&mut w).unwrap();
    let rel = max_err(&w, &z) / norm;
    assert!(rel < 1e-12, "inverse∘forward relative error {rel:e}");
}

#[test]
fn decode_matches_naive_embedding() {
    let mut r = rng(2);
    for log_n in [0u32, 1, 2, 3, 6, 9] {
        let n = 1usize << log_n;
        let f = SpecialFft::new(n).unwrap();
        let coeffs: Vec<f64> = (0..2 * n)
            .map(|_| r.random_range(-1000.0..1000.0))
            .collect();
        let fast = f.decode_from_real(&coeffs).unwrap();
        let slow = naive_embedding(&coeffs, n);
        let err = max_err(&fast, &slow);
        assert!(err < 1e-9 * (2 * n) as f64, "n = {n}: error {err:e}");
        // And the encoder inverts it.
        let back = f.encode_to_real(&slow).unwrap();
        let e = back
            .iter()
            .zip(&coeffs)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(e < 1e-9, "n = {n}: re-encode error {e:e}");
    }
}

#[test]
fn encode_decode_roundtrip_and_naive_check() {
    let mut r = rng(3);
    for n in [1usize, 16, 128, 1024] {
        let f = SpecialFft::new(n).unwrap();
        let z = random_slots(&mut r, n);
        let m = f.encode_to_real(&z).unwrap();
        assert_eq!(m.len(), 2 * n);
        assert!(max_err(&f.decode_from_real(&m).unwrap(), &z) < 1e-13);
        if n <= 128 {
            assert!(max_err(&naive_embedding(&m, n), &z) < 1e-12, "n = {n}");
        }
    }
}

#[test]
fn known_answers() {
    let n = 16;
    let f = SpecialFft::new(n).unwrap();
    // A constant slot vector encodes the constant polynomial.
    let m = f
        .encode_to_real(&vec![Complex64::new(2.5, 0.0); n])
        .unwrap();
    assert!((m[0] - 2.5).abs() < 1e-15);
    assert!(m[1..].iter().all(|x| x.abs() < 1e-15));
    // The monomial X decodes to ζ^{5^j}, and X^n to ζ^{n·5^j} = i.
    let mut x = vec![0.0; 2 * n];
    x[1] = 1.0;
    let z = f.decode_from_real(&x).unwrap();
    for (j, v) in z.iter().enumerate() {
        let e = f.rotation_group()[j] as f64;
        let want = Complex64::from_polar(1.0, std::f64::consts::TAU * e / (4 * n) as f64);
        assert!((v - want).norm() < 1e-15, "slot {j}");
    }
    let mut xn = vec![0.0; 2 * n];
    xn[n] = 1.0;
    let z = f.decode_from_real(&xn).unwrap();
    assert!(z
        .iter()
        .all(|v| (v - Complex64::new(0.0, 1.0)).norm() < 1e-15));
}

#[test]
fn automorphism_x_to_x5_rotates_slots() {
    let mut r = rng(4);
    for n in [4usize, 64, 512] {
        let f = SpecialFft::new(n).unwrap();
        let d = 2 * n;
        let m: Vec<f64> = (0..d).map(|_| r.random_range(-1.0..1.0)).collect();
        // m(X^5) mod X^d + 1.
        let mut m5 = vec![0.0; d];
        for (k, &c) in m.iter().enumerate() {
            let e = (5 * k) % (2 * d);
            if e < d {
                m5[e] += c;
            } else {
                m5[e - d] -= c;
            }
        }
        let z = f.decode_from_real(&m).unwrap();
        let z5 = f.decode_from_real(&m5).unwrap();
        for j in 0..n {
            assert!((z5[j] - z[(j + 1) % n]).norm() < 1e-12, "n = {n} slot {j}");
        }
    }
}

#[test]
fn sparse_slots_in_a_larger_ring() {
    let mut r = rng(5);
    let big_n = 256; // ring degree N
    for n in [1usize, 4, 32, 128] {
        let f = SpecialFft::new(n).unwrap();
        let z = random_slots(&mut r, n);
        let m = f.encode_to_real(&z).unwrap();
        let gap = big_n / (2 * n);
        let mut full = vec![0.0; big_n];
        for (k, &c) in m.iter().enumerate() {
            full[k * gap] = c;
        }
        let got = naive_embedding(&full, n);
        assert!(
            max_err(&got, &z) < 1e-12,
            "n = {n}: {:e}",
            max_err(&got, &z)
        );
        // Slots of the full ring at the same 5^j points (sparse slots repeat n-periodically).
        let all = naive_embedding(&full, big_n / 2);
        for (j, v) in all.iter().enumerate() {
            assert!((v - z[j % n]).norm() < 1e-12);
        }
    }
}

#[test]
fn non_finite_inputs_are_refused() {
    let f = SpecialFft::new(4).unwrap();
    let mut z = vec![Complex64::new(0.5, 0.5); 4];
    z[2] = Complex64::new(f64::NAN, 0.0);
    assert!(matches!(
        f.encode_to_real(&z),
        Err(MathError::InvalidArgument(_))
    ));
    assert!(matches!(
        f.encode_scaled_i128(&z, 1.0),
        Err(MathError::InvalidArgument(_))
    ));
    let mut c = vec![0.0; 8];
    c[3] = f64::INFINITY;
    assert!(matches!(
        f.decode_from_real(&c),
        Err(MathError::InvalidArgument(_))
    ));
    let ok = vec![Complex64::new(0.5, 0.5); 4];
    for scale in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(f.encode_scaled_i128(&ok, scale).is_err(), "scale {scale}");
    }
    // Overflow of i128: |Δ · m| ≥ 2^127.
    assert!(matches!(
        f.encode_scaled_i128(&ok, 2f64.powi(130)),
        Err(MathError::InvalidArgument(_))
    ));
    assert!(f.encode_scaled_i128(&ok, 2f64.powi(120)).is_ok());
    assert!(f.encode_scaled_i128(&ok[..2], 1.0).is_err());
}

// ---------------------------------------------------------------- double-double

fn dd_close(a: DoubleDouble, b: DoubleDouble, tol: f64) -> bool {
    (a - b).abs().to_f64() <= tol
}

#[test]
fn double_double_trig_and_exp() {
    let half = DoubleDouble::from_f64(0.5);
    // Exact known values through the power-of-two and the general (division) paths.
    let (c, s) = DoubleDouble::cos_sin_turns(1, 12).unwrap(); // 30°
    assert!(dd_close(s, half, 1e-31), "sin 30° = {s:?}");
    let (c6, _) = DoubleDouble::cos_sin_turns(1, 6).unwrap(); // 60°
    assert!(dd_close(c6, half, 1e-31));
    assert!((c.to_f64() - 0.75f64.sqrt()).abs() < 2e-16);
    assert!(dd_close(c * c, DoubleDouble::from_f64(0.75), 1e-31));
    let (c8, s8) = DoubleDouble::cos_sin_turns(1, 8).unwrap(); // 45°
    let sqrt_half =
        DoubleDouble::from_parts(std::f64::consts::FRAC_1_SQRT_2, -4.833646656726457e-17);
    assert!(dd_close(c8, sqrt_half, 1e-31) && dd_close(s8, sqrt_half, 1e-31));
    // Quadrants, large numerators, and the Pythagorean and double-angle identities.
    for (num, den) in [
        (3u64, 8u64),
        (5, 8),
        (7, 8),
        (1, 1 << 18),
        (12345, 1 << 18),
        (77, 1000),
    ] {
        for k in [0u64, 1, 1 << 40] {
            let (c, s) = DoubleDouble::cos_sin_turns(num + k * den, den).unwrap();
            let angle = std::f64::consts::TAU * num as f64 / den as f64;
            assert!((c.to_f64() - angle.cos()).abs() < 1e-15);
            assert!((s.to_f64() - angle.sin()).abs() < 1e-15);
            assert!(dd_close(c * c + s * s, DoubleDouble::ONE, 1e-30));
            let (c2, s2) = DoubleDouble::cos_sin_turns(2 * num, den).unwrap();
            assert!(dd_close(c2, c * c - s * s, 1e-30), "{num}/{den}");
            assert!(dd_close(s2, (c * s).mul_f64(2.0), 1e-30), "{num}/{den}");
        }
    }
    assert!(DoubleDouble::cos_sin_turns(1, 0).is_err());

    let e = DoubleDouble::ONE.exp().unwrap();
    let e_ref = DoubleDouble::from_parts(std::f64::consts::E, 1.4456468917292502e-16);
    assert!(dd_close(e, e_ref, 1e-30), "{e:?}");
    for x in [-300.0, -20.25, -0.001, 3.5, 500.0] {
        let a = DoubleDouble::from_f64(x);
        let p = a.exp().unwrap() * (-a).exp().unwrap();
        assert!(dd_close(p, DoubleDouble::ONE, 1e-29), "x = {x}");
    }
    assert_eq!(
        DoubleDouble::from_f64(-800.0).exp().unwrap(),
        DoubleDouble::ZERO
    );
    assert!(DoubleDouble::from_f64(710.0).exp().is_err());
}

#[test]
fn double_double_rounding() {
    let big = DoubleDouble::from_i128((1i128 << 100) + 12345);
    assert_eq!(big.round_to_i128(), Some((1i128 << 100) + 12345));
    let neg = DoubleDouble::from_i128(-(1i128 << 90) - 7);
    assert_eq!(neg.round_to_i128(), Some(-(1i128 << 90) - 7));
    // 2^80 + 0.75 rounds up, 2^80 - 0.25 rounds to 2^80.
    let x = DoubleDouble::from_parts(2f64.powi(80), 0.75);
    assert_eq!(x.round_to_i128(), Some((1i128 << 80) + 1));
    let y = DoubleDouble::from_parts(2f64.powi(80), -0.25);
    assert_eq!(y.round_to_i128(), Some(1i128 << 80));
    // Ties go away from zero, decided on the exact value hi + lo.
    assert_eq!(DoubleDouble::from_f64(-2.5).round_to_i128(), Some(-3));
    assert_eq!(DoubleDouble::from_f64(2.5).round_to_i128(), Some(3));
    assert_eq!(
        DoubleDouble::from_parts(2.5, -1e-20).round_to_i128(),
        Some(2)
    );
    assert_eq!(
        DoubleDouble::from_parts(-2.5, 1e-20).round_to_i128(),
        Some(-2)
    );
    assert_eq!(
        DoubleDouble::from_parts(-2.5, -1e-20).round_to_i128(),
        Some(-3)
    );
    let p80 = 2f64.powi(80);
    assert_eq!(
        DoubleDouble::from_parts(p80, 0.5).round_to_i128(),
        Some((1i128 << 80) + 1)
    );
    assert_eq!(
        DoubleDouble::from_parts(-p80, 0.5).round_to_i128(),
        Some(-(1i128 << 80))
    );
    assert_eq!(
        DoubleDouble::from_parts(-p80, -0.5).round_to_i128(),
        Some(-(1i128 << 80) - 1)
    );
    assert_eq!(
        DoubleDouble::from_parts(-p80, -1.25).round_to_i128(),
        Some(-(1i128 << 80) - 1)
    );
    assert_eq!(DoubleDouble::from_f64(0.3).round_to_i128(), Some(0));
    assert_eq!(DoubleDouble::from_f64(-0.7).round_to_i128(), Some(-1));
    assert_eq!(DoubleDouble::from_f64(2f64.powi(127)).round_to_i128(), None);
    assert_eq!(DoubleDouble::from_f64(f64::NAN).round_to_i128(), None);
}

/// `round(Δ · c)` by the `O(n²)` definition `c_k = (1/n) Σ_j z_j ζ^{-5^j k}`, all in
/// double-double.
fn naive_encode_dd(z: &[Complex64], scale: f64) -> Vec<i128> {
    let n = z.len();
    let m = 4 * n as u64;
    let roots: Vec<(DoubleDouble, DoubleDouble)> = (0..m)
        .map(|e| DoubleDouble::cos_sin_turns(e, m).unwrap())
        .collect();
    let mut re_out = Vec::with_capacity(n);
    let mut im_out = Vec::with_capacity(n);
    for k in 0..n as u64 {
        let mut re = DoubleDouble::ZERO;
        let mut im = DoubleDouble::ZERO;
        let mut g = 1u64;
        for v in z {
            let (c, s) = roots[((g * k) % m) as usize];
            // v · conj(ζ^e) = (a + ib)(c - is)
            let (a, b) = (DoubleDouble::from_f64(v.re), DoubleDouble::from_f64(v.im));
            re = re + a * c + b * s;
            im = im + b * c - a * s;
            g = (g * 5) % m;
        }
        let f = scale / n as f64;
        re_out.push(re.mul_f64(f).round_to_i128().unwrap());
        im_out.push(im.mul_f64(f).round_to_i128().unwrap());
    }
    re_out.extend(im_out);
    re_out
}

#[test]
fn scaled_encoding_beats_f64() {
    let mut r = rng(6);
    for n in [1usize, 8, 64, 256] {
        let f = SpecialFft::new(n).unwrap();
        let z = random_slots(&mut r, n);
        for log_scale in [20, 70, 80, 100] {
            let scale = 2f64.powi(log_scale);
            let got = f.encode_scaled_i128(&z, scale).unwrap();
            let want = naive_encode_dd(&z, scale);
            let err = got
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs())
                .max()
                .unwrap();
            assert!(err <= 1, "n = {n} Δ = 2^{log_scale}: error {err}");
            if log_scale == 20 {
                // At small scales the f64 encoder gives the same integers (up to rounding ties).
                let f64_path: Vec<i128> = f
                    .encode_to_real(&z)
                    .unwrap()
                    .iter()
                    .map(|x| (x * scale).round() as i128)
                    .collect();
                let e = f64_path
                    .iter()
                    .zip(&want)
                    .map(|(a, b)| (a - b).abs())
                    .max()
                    .unwrap();
                assert!(e <= 1, "n = {n}: f64 path at 2^20 off by {e}");
            }
            if log_scale == 70 && n >= 8 {
                // The f64 path is off by many units at 2^70 (53-bit mantissa).
                let f64_path: Vec<i128> = f
                    .encode_to_real(&z)
                    .unwrap()
                    .iter()
                    .map(|x| (x * scale).round() as i128)
                    .collect();
                let e = f64_path
                    .iter()
                    .zip(&want)
                    .map(|(a, b)| (a - b).abs())
                    .max()
                    .unwrap();
                assert!(e > 1 << 8, "n = {n}: f64 path error only {e}");
            }
        }
    }
}

#[test]
fn scaled_encoding_at_2_15_roundtrips() {
    // At the full size the O(n²) reference is too slow; check instead that decoding the
    // integers (divided by Δ) returns z to the f64 limit, and the integers agree with the f64
    // path to its own precision.
    let n = 1 << 15;
    let f = SpecialFft::new(n).unwrap();
    let z = random_slots(&mut rng(7), n);
    let scale = 2f64.powi(80);
    let ints = f.encode_scaled_i128(&z, scale).unwrap();
    let coeffs: Vec<f64> = ints.iter().map(|&x| x as f64 / scale).collect();
    assert!(max_err(&f.decode_from_real(&coeffs).unwrap(), &z) < 1e-12);
    let approx = f.encode_to_real(&z).unwrap();
    for (&i, &a) in ints.iter().zip(&approx) {
        assert!((i as f64 - a * scale).abs() <= 2f64.powi(80 - 40));
    }
}
