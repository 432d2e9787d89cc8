//! CKKS decryption with noise flooding (`Decryptor::with_noise_flooding`): fresh noise per
//! decryption, results within the documented precision, and flooding noise of the documented
//! magnitude (measured on the coefficients of the decrypted phase).

use num_complex::Complex64;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rhea::ckks::{CkksContext, Decryptor, Encoder, Encryptor, KeyGenerator, NoiseFlooding};
use rhea::params::CkksParametersLiteral;
use rhea::unstable::HasRing;
use rhea::{Device, Error};

struct Setup {
    ctx: CkksContext,
    plain: Decryptor,
    encryptor: Encryptor,
    encoder: Encoder,
    sk: rhea::rlwe::SecretKey,
}

fn setup() -> Setup {
    let params = CkksParametersLiteral::n13_logqp200_levels2()
        .build()
        .unwrap();
    let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [7; 32]);
    let sk = keygen.secret_key().unwrap();
    let pk = keygen.public_key(&sk).unwrap();
    Setup {
        plain: Decryptor::new(&ctx, &sk).unwrap(),
        encryptor: Encryptor::new(&ctx, pk).unwrap().with_seed([8; 32]),
        encoder: Encoder::new(&ctx).unwrap(),
        ctx,
        sk,
    }
}

fn values(seed: u64, n: usize) -> Vec<Complex64> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| Complex64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)))
        .collect()
}

#[test]
fn two_flooded_decryptions_differ_and_both_decode_within_the_stated_precision() {
    let s = setup();
    let n = s.ctx.params().n();
    let scale = s.ctx.params().default_scale();
    let want = values(1, s.encoder.slots());
    let ct = s
        .encryptor
        .encrypt(&s.encoder.encode_complex(&want).unwrap())
        .unwrap();
    let flooding = NoiseFlooding::with_log2_sigma(18.0).unwrap();
    let rms = flooding.slot_error_rms(n, scale);
    assert!((rms - 2f64.powf(18.0 + 6.5 - 40.0)).abs() < 1e-12);
    let dec = Decryptor::new(&s.ctx, &s.sk)
        .unwrap()
        .with_noise_flooding(flooding.clone())
        .unwrap();
    assert_eq!(dec.noise_flooding(), Some(&flooding));
    let a = dec.decrypt(&ct).unwrap();
    let b = dec.decrypt(&ct).unwrap();
    let ring = s.ctx.ring();
    let (wa, wb) = (
        ring.download(a.poly()).unwrap(),
        ring.download(b.poly()).unwrap(),
    );
    assert_ne!(wa, wb, "two flooded decryptions gave the same words");
    let plain = s
        .encoder
        .decode_complex(&s.plain.decrypt(&ct).unwrap())
        .unwrap();
    let plain_err = plain
        .iter()
        .zip(&want)
        .map(|(g, w)| (g - w).norm())
        .fold(0.0, f64::max);
    assert!(plain_err < 1e-6, "{plain_err}");
    for pt in [&a, &b] {
        let got = s.encoder.decode_complex(pt).unwrap();
        let errs: Vec<f64> = got.iter().zip(&want).map(|(g, w)| (g - w).norm()).collect();
        let max = errs.iter().copied().fold(0.0, f64::max);
        let mean_sq = errs.iter().map(|e| e * e).sum::<f64>() / errs.len() as f64;
        // Documented: rms σ·sqrt(N)/Δ, max a few times that (below 6x).
        assert!(
            max < 6.0 * rms + plain_err,
            "max slot error {max:e} vs rms {rms:e}"
        );
        assert!(
            (mean_sq.sqrt() / rms - 1.0).abs() < 0.1,
            "rms slot error {:e} vs stated {rms:e}",
            mean_sq.sqrt()
        );
        // The flooding is far above the plain decryption error: it is really there.
        assert!(max > 10.0 * plain_err, "{max:e} vs {plain_err:e}");
    }
}

#[test]
fn flooding_noise_has_the_documented_magnitude() {
    let s = setup();
    let ring = s.ctx.ring();
    let ct = s
        .encryptor
        .encrypt(&s.encoder.encode_complex(&values(2, 16)).unwrap())
        .unwrap();
    let plain = s.plain.decrypt(&ct).unwrap();
    for log2_sigma in [5.0, 20.0, 33.0] {
        let f = NoiseFlooding::with_log2_sigma(log2_sigma).unwrap();
        let dec = Decryptor::new(&s.ctx, &s.sk)
            .unwrap()
            .with_noise_flooding(f.clone())
            .unwrap()
            .with_flooding_seed([log2_sigma as u8; 32]);
        let flooded = dec.decrypt(&ct).unwrap();
        // The flooding polynomial itself: the difference of the phases, in coefficients.
        let mut diff = ring.sub(flooded.poly(), plain.poly()).unwrap();
        ring.ntt_inverse(&mut diff).unwrap();
        let x = ring.download_centered_f64(&diff).unwrap();
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        let sd = (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
        let sigma = f.sigma();
        assert!(
            (sd / sigma - 1.0).abs() < 0.04,
            "log2 σ {log2_sigma}: sd {sd:e} vs σ {sigma:e}"
        );
        assert!(mean.abs() < 5.0 * sigma / n.sqrt(), "mean {mean:e}");
        let within = x.iter().filter(|v| v.abs() <= sigma).count() as f64 / n;
        assert!((within - 0.6827).abs() < 0.025, "1σ mass {within}");
        assert!(x.iter().all(|v| v.fract() == 0.0), "integer noise");
        assert!(x.iter().all(|v| v.abs() < 9.0 * sigma));
    }
}

#[test]
fn flooding_that_would_wrap_is_refused_and_bad_sigmas_are_errors() {
    // q_0 of 50 bits: σ = 2^45 fits below Q at the top level (≈ 2^130), not at level 0.
    let mut lit = CkksParametersLiteral::n13_logqp200_levels2();
    lit.log_q = vec![50, 40, 40];
    let params = lit.build().unwrap();
    let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [3; 32]);
    let sk = keygen.secret_key().unwrap();
    let encryptor = Encryptor::with_secret_key(&ctx, &sk).unwrap();
    let encoder = Encoder::new(&ctx).unwrap();
    let ct = encryptor
        .encrypt(&encoder.encode(&[0.25, 0.5]).unwrap())
        .unwrap();
    let dec = Decryptor::new(&ctx, sk)
        .unwrap()
        .with_noise_flooding(NoiseFlooding::with_log2_sigma(45.0).unwrap())
        .unwrap();
    assert!(dec.decrypt(&ct).is_ok());
    let low = rhea::ckks::Evaluator::new(&ctx)
        .drop_to_level(&ct, 0)
        .unwrap();
    let err = dec.decrypt(&low).unwrap_err();
    assert!(matches!(err, Error::InvalidParameters(_)), "{err}");
    assert!(err.to_string().contains("higher level"), "{err}");
    assert!(NoiseFlooding::with_log2_sigma(60.0).is_err());
    assert!(NoiseFlooding::with_log2_sigma(f64::INFINITY).is_err());
}

/// On a GPU, a flooded decryption gives the words of the CPU's from the same flooding seed
/// (the flooding polynomial is sampled on the host and lifted on the device). Ignored without
/// `--include-ignored`; fails without a GPU.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn flooded_decryption_on_the_gpu_matches_the_cpu() {
    let gpu = Device::Cuda(0);
    if let Err(e) = gpu.check_supported() {
        panic!("this test needs a CUDA GPU: {e}");
    }
    let s = setup();
    let gctx = CkksContext::new(s.ctx.params(), gpu).unwrap();
    let ct = s
        .encryptor
        .encrypt(&s.encoder.encode_complex(&values(3, 64)).unwrap())
        .unwrap();
    for log2_sigma in [6.0, 30.0] {
        let flooding = NoiseFlooding::with_log2_sigma(log2_sigma).unwrap();
        let decrypt = |ctx: &CkksContext, ct: &rhea::ckks::Ciphertext| {
            let dec = Decryptor::new(ctx, s.sk.to_device(ctx).unwrap())
                .unwrap()
                .with_noise_flooding(flooding.clone())
                .unwrap()
                .with_flooding_seed([9; 32]);
            let pt = dec.decrypt(ct).unwrap();
            s.ctx.ring().download(pt.poly()).unwrap()
        };
        let on_cpu = decrypt(&s.ctx, &ct);
        let on_gpu = decrypt(&gctx, &ct.to_device(&gctx).unwrap());
        assert_eq!(on_cpu, on_gpu, "log2 σ {log2_sigma}");
    }
}
