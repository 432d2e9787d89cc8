//! Device sampling from a seed against `rhea_math::sampler`, word for word.

mod common;

use common::{cubin_has, primes, require_gpu, require_nvrtc, rng, time_us};
use rand::Rng;
use rhea_cuda::sample::{self, SAMPLE};
use rhea_cuda::CudaError;
use rhea_cuda::{registry, RnsLayout};
use rhea_math::sampler::{
    self as host_sampler, gaussian_from_seed, lift_signed, ternary_from_seed,
    uniform_poly_from_seed, Prng, DEFAULT_BOUND, DEFAULT_SIGMA,
};

#[test]
#[ignore = "needs NVRTC (run with --include-ignored; scripts/check-kernels.sh and scripts/gpu-run.sh do)"]
fn sample_kernels_compile() {
    require_nvrtc("sample_kernels_compile");
    let cubin = registry::compile(&SAMPLE, "sm_90").unwrap_or_else(|e| panic!("{e}"));
    for f in ["sample_uniform", "sample_ternary", "sample_gaussian"] {
        assert!(cubin_has(&cubin, f), "{f} missing from the CUBIN");
    }
}

/// The counter-based ternary reference (`rhea_math::sampler::ternary_from_seed`, the twin of the
/// kernel) equals the stream-based `rhea_math::sampler::ternary` on a fresh generator (stream 0),
/// and differs between streams.
#[test]
fn host_ternary_is_the_stream_sampler() {
    let mut r = rng("host_ternary_is_the_stream_sampler");
    for n in [1usize, 7, 8, 9, 1000, 4096] {
        let seed: [u8; 32] = r.random();
        let want = host_sampler::ternary(&mut Prng::from_seed(seed), n);
        assert_eq!(ternary_from_seed(&seed, 0, n), want, "n = {n}");
        assert!(want.iter().all(|c| (-1..=1).contains(c)));
    }
    let seed: [u8; 32] = r.random();
    assert_ne!(
        ternary_from_seed(&seed, 0, 256),
        ternary_from_seed(&seed, 1, 256)
    );
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn uniform_matches_uniform_poly_from_seed() {
    let dev = require_gpu("uniform_matches_uniform_poly_from_seed");
    let mut r = rng("uniform_matches_uniform_poly_from_seed");
    // (N, limbs, bits, polys, stream, first modulus)
    let cases = [
        (1usize << 12, 1usize, 61u32, 1usize, 0u64, 0usize),
        (1 << 12, 33, 30, 2, 7, 0),
        (1 << 16, 8, 61, 3, 1 << 40, 0),
        (1 << 16, 3, 30, 1, u64::MAX, 0),
        (1 << 17, 3, 61, 2, 12345, 2),
        (1000, 3, 30, 2, 1, 1), // N not a multiple of 4: blocks straddle limbs
    ];
    for (n, limbs, bits, polys, stream, first) in cases {
        let all = primes(bits, first + limbs, 1 << 12);
        let dmod = dev.moduli(&all).unwrap();
        let moduli = &all[first..];
        let seed: [u8; 32] = r.random();
        let layout = RnsLayout::new(n, limbs, polys).with_first_modulus(first);
        let mut out = dev.alloc(layout.words()).unwrap();
        let case = format!("N={n} limbs={limbs} {bits} bits polys={polys} stream={stream}");
        if stream.checked_add(polys as u64 - 1).is_none() {
            assert!(sample::uniform_from_seed(&mut out, &seed, stream, &layout, &dmod).is_err());
            let layout = RnsLayout::new(n, limbs, 1).with_first_modulus(first);
            let mut out = dev.alloc(layout.words()).unwrap();
            sample::uniform_from_seed(&mut out, &seed, stream, &layout, &dmod).unwrap();
            let want = uniform_poly_from_seed(&seed, stream, moduli, n);
            assert_eq!(dev.download(&out).unwrap(), want, "{case}");
            continue;
        }
        sample::uniform_from_seed(&mut out, &seed, stream, &layout, &dmod).unwrap();
        let got = dev.download(&out).unwrap();
        let mut want = Vec::with_capacity(got.len());
        for p in 0..polys {
            want.extend(uniform_poly_from_seed(&seed, stream + p as u64, moduli, n));
        }
        assert_eq!(got.len(), want.len());
        if let Some(i) = got.iter().zip(&want).position(|(g, w)| g != w) {
            panic!(
                "{case}: first mismatch at word {i}: GPU {}, host {}",
                got[i], want[i]
            );
        }
        assert!(got.iter().any(|&v| v != 0));
        println!("ok: uniform {case}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn ternary_matches_host() {
    let dev = require_gpu("ternary_matches_host");
    let mut r = rng("ternary_matches_host");
    // (N, limbs, bits, polys, stream)
    let cases = [
        (1usize << 12, 1usize, 61u32, 1usize, 0u64),
        (1 << 12, 33, 30, 2, 0),
        (1 << 16, 8, 61, 1, 0),
        (1 << 16, 3, 30, 3, 99),
        (1 << 17, 3, 61, 1, 0),
        (1001, 2, 30, 2, 5), // N not a multiple of 8
        // Limb slices of 5 (the last of 4), and of 3 over two polynomials (the last of 1).
        (1 << 16, 34, 61, 1, 0),
        (1 << 16, 10, 60, 2, 7),
    ];
    for (n, limbs, bits, polys, stream) in cases {
        let moduli = primes(bits, limbs, 1 << 12);
        let dmod = dev.moduli(&moduli).unwrap();
        let seed: [u8; 32] = r.random();
        let layout = RnsLayout::new(n, limbs, polys);
        let mut out = dev.alloc(layout.words()).unwrap();
        sample::ternary_from_seed(&mut out, &seed, stream, &layout, &dmod).unwrap();
        let got = dev.download(&out).unwrap();
        let mut want = Vec::with_capacity(got.len());
        for p in 0..polys {
            let s = stream + p as u64;
            let coeffs = if s == 0 {
                host_sampler::ternary(&mut Prng::from_seed(seed), n)
            } else {
                ternary_from_seed(&seed, s, n)
            };
            want.extend(lift_signed(&coeffs, &moduli));
        }
        let case = format!("N={n} limbs={limbs} {bits} bits polys={polys} stream={stream}");
        assert_eq!(got, want, "{case}");
        // All three values occur.
        let q0 = moduli[0].value();
        for v in [0, 1, q0 - 1] {
            assert!(got[..n].contains(&v), "{case}: value {v} never drawn");
        }
        println!("ok: ternary {case}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn gaussian_matches_host() {
    let dev = require_gpu("gaussian_matches_host");
    let mut r = rng("gaussian_matches_host");
    // (N, limbs, bits, polys, stream, first modulus, sigma, bound)
    let cases = [
        (
            1usize << 12,
            1usize,
            61u32,
            1usize,
            0u64,
            0usize,
            DEFAULT_SIGMA,
            DEFAULT_BOUND,
        ),
        (1 << 12, 33, 30, 2, 0, 0, DEFAULT_SIGMA, DEFAULT_BOUND),
        (1 << 16, 32, 50, 1, 0, 0, DEFAULT_SIGMA, DEFAULT_BOUND),
        (1 << 16, 3, 30, 3, 99, 1, 10.0, 60.0),
        (1 << 17, 9, 61, 1, 1 << 40, 0, 1.0, 6.0),
        (1 << 12, 2, 40, 1, 7, 0, 21.0, 128.9), // the largest table the kernel takes
        (1001, 2, 30, 2, 5, 2, 3.2, 4.0),       // N not a multiple of 8, a tight cut
        (1000, 17, 30, 1, 3, 0, DEFAULT_SIGMA, DEFAULT_BOUND), // limb slices of one
        // Limb slices of 3 over two polynomials (the last of 1), from a later modulus.
        (1 << 16, 10, 60, 2, 0, 3, DEFAULT_SIGMA, DEFAULT_BOUND),
    ];
    for (n, limbs, bits, polys, stream, first, sigma, bound) in cases {
        let all = primes(bits, first + limbs, 1 << 12);
        let dmod = dev.moduli(&all).unwrap();
        let moduli = &all[first..];
        let seed: [u8; 32] = r.random();
        let layout = RnsLayout::new(n, limbs, polys).with_first_modulus(first);
        let mut out = dev.alloc(layout.words()).unwrap();
        assert!(sample::gaussian_fits(bound));
        sample::gaussian_from_seed(&mut out, &seed, stream, &layout, &dmod, sigma, bound).unwrap();
        let got = dev.download(&out).unwrap();
        let mut want = Vec::with_capacity(got.len());
        for p in 0..polys {
            let coeffs = gaussian_from_seed(&seed, stream + p as u64, n, sigma, bound).unwrap();
            want.extend(lift_signed(&coeffs, moduli));
        }
        let case = format!(
            "N={n} limbs={limbs} {bits} bits polys={polys} stream={stream} first={first} \
             sigma={sigma} bound={bound}"
        );
        assert_eq!(got.len(), want.len());
        if let Some(i) = got.iter().zip(&want).position(|(g, w)| g != w) {
            panic!(
                "{case}: first mismatch at word {i}: GPU {}, host {}",
                got[i], want[i]
            );
        }
        // Both signs and zero occur in the first limb.
        let q0 = moduli[0].value();
        assert!(got[..n].contains(&0), "{case}: 0 never drawn");
        assert!(got[..n].iter().any(|&v| (1..q0 / 2).contains(&v)), "{case}");
        assert!(got[..n].iter().any(|&v| v > q0 / 2), "{case}");
        println!("ok: gaussian {case}");
    }
    // Refused: a table the kernel cannot take, parameters the CDT refuses, a bad shape.
    let moduli = primes(40, 2, 1 << 12);
    let dmod = dev.moduli(&moduli).unwrap();
    let layout = RnsLayout::new(1 << 12, 2, 1);
    let mut out = dev.alloc(layout.words()).unwrap();
    let seed: [u8; 32] = r.random();
    assert!(!sample::gaussian_fits(129.0));
    assert!(matches!(
        sample::gaussian_from_seed(&mut out, &seed, 0, &layout, &dmod, 21.5, 129.0),
        Err(CudaError::InvalidArgument(_))
    ));
    for (sigma, bound) in [(0.0, 6.0), (f64::NAN, 6.0), (3.2, 2.0)] {
        assert!(matches!(
            sample::gaussian_from_seed(&mut out, &seed, 0, &layout, &dmod, sigma, bound),
            Err(CudaError::Math(_))
        ));
    }
    let wrong = RnsLayout::new(1 << 12, 3, 1);
    assert!(matches!(
        sample::gaussian_from_seed(&mut out, &seed, 0, &wrong, &dmod, 3.2, 19.2),
        Err(CudaError::Shape(_))
    ));
}

/// Times the regeneration of a 30-limb uniform polynomial, a ternary and a Gaussian one at N = 2^16
/// (printed, not asserted).
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn sample_timing_n16() {
    let dev = require_gpu("sample_timing_n16");
    let (n, limbs) = (1usize << 16, 30);
    let moduli = primes(61, limbs, n);
    let dmod = dev.moduli(&moduli).unwrap();
    let layout = RnsLayout::new(n, limbs, 1);
    let mut out = dev.alloc(layout.words()).unwrap();
    let seed = [7u8; 32];
    let uni = time_us(&dev, 100, || {
        sample::uniform_from_seed(&mut out, &seed, 0, &layout, &dmod).unwrap()
    });
    let ter = time_us(&dev, 100, || {
        sample::ternary_from_seed(&mut out, &seed, 0, &layout, &dmod).unwrap()
    });
    let gau = time_us(&dev, 100, || {
        sample::gaussian_from_seed(
            &mut out,
            &seed,
            0,
            &layout,
            &dmod,
            DEFAULT_SIGMA,
            DEFAULT_BOUND,
        )
        .unwrap()
    });
    println!(
        "sampling 30 limbs N=2^16 on {}: uniform {uni:.2} us, ternary {ter:.2} us, \
         gaussian {gau:.2} us",
        dev.name()
    );
}
