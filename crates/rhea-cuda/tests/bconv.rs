//! The rescale kernel against its `rhea_math::bconv` twin, word for word, the conversion's shape
//! checks, and the timing of the centred 30 → 8 conversion at N = 2^16 (printed, not asserted).
//! The centred conversion and ModUp are tested word for word in `bconv_centered.rs`.
//!
//! The GPU tests and the NVRTC test are `#[ignore]`d (a machine without them lists them as
//! ignored); `--include-ignored` runs them, and then a missing GPU or NVRTC is a failure.

mod common;

use common::{
    assert_words, basis, cubin_has, disjoint_primes, per_poly, primes, random_rns, require_gpu,
    require_nvrtc, rng, time_us,
};
use rhea_cuda::bconv::{BconvTile, DeviceBaseConverter, DeviceModUp, DeviceRescaler, BCONV};
use rhea_cuda::{registry, CudaError};
use rhea_math::bconv::{BaseConverter, ModUp, Rescaler};

#[test]
#[ignore = "needs NVRTC (run with --include-ignored; scripts/check-kernels.sh and scripts/gpu-run.sh do)"]
fn bconv_kernels_compile() {
    require_nvrtc("bconv_kernels_compile");
    let cubin = registry::compile(&BCONV, "sm_90").unwrap_or_else(|e| panic!("{e}"));
    for f in [
        "bconv_matmul_j8_c2_u8_centered",
        "bconv_matmul_j8_c2_u8_narrow_centered",
        "bconv_rin_c2_centered",
        "bconv_rin_c2_narrow_centered_l16",
        "bconv_multi_rin_c2_centered",
        "bconv_rescale_last",
    ] {
        assert!(cubin_has(&cubin, f), "{f} missing from the CUBIN");
    }
    // Only centred conversions are instantiated (production never launched the approximate
    // ones, which were removed).
    for f in [
        "bconv_matmul_j8_c2",
        "bconv_matmul_j8_c2_narrow",
        "bconv_matmul_j8_c2_u8",
        "bconv_rin_c2",
        "bconv_rin_c2_narrow_l16",
        "bconv_scale",
    ] {
        assert!(!cubin_has(&cubin, f), "{f} is still in the CUBIN");
    }
}

const DEGREE_MAX: usize = 1 << 17;

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn rescale_matches_host() {
    let dev = require_gpu("rescale_matches_host");
    let mut rng = rng("rescale_matches_host");
    // (log N, L, bits, polys, levels)
    let cases: [(u32, usize, u32, usize, &[usize]); 4] = [
        (12, 3, 61, 3, &[3, 2]),
        (16, 30, 30, 2, &[30, 16, 2]),
        (17, 8, 61, 1, &[8, 4]),
        (16, 2, 30, 1, &[2]),
    ];
    for (log_n, l, bits, polys, levels) in cases {
        let n = 1usize << log_n;
        let qm = primes(bits, l, DEGREE_MAX);
        let rescaler = Rescaler::new(&basis(&qm)).unwrap();
        let drs = DeviceRescaler::new(&dev, &rescaler).unwrap();
        for &level in levels {
            let x = random_rns(&mut rng, &qm[..level], n, polys);
            let want = per_poly(&x, level, level - 1, n, |i, o| {
                rescaler.apply(level, i, o, n).unwrap()
            });
            let dx = dev.upload(&x).unwrap();
            let mut dy = dev.alloc(polys * (level - 1) * n).unwrap();
            drs.apply(level, &dx, &mut dy, n).unwrap();
            let case = format!("N=2^{log_n} L={l} {bits} bits level={level} polys={polys}");
            assert_words(&dev.download(&dy).unwrap(), &want, &case);
            println!("ok: rescale {case}");
        }
        assert!(matches!(
            drs.apply(1, &dev.alloc(n).unwrap(), &mut dev.alloc(n).unwrap(), n),
            Err(CudaError::InvalidArgument(_))
        ));
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn bad_shapes_are_errors() {
    let dev = require_gpu("bad_shapes_are_errors");
    let (from, to) = disjoint_primes(30, 3, 30, 2, DEGREE_MAX);
    let conv = BaseConverter::new(&basis(&from), &basis(&to)).unwrap();
    let d = DeviceBaseConverter::new(&dev, &conv).unwrap();
    let n = 16;
    let x = dev.alloc(3 * n).unwrap();
    let mut y = dev.alloc(2 * n).unwrap();
    assert!(d.convert_centered(&mut y, &x, n).is_ok());
    assert!(matches!(
        d.convert_centered(&mut dev.alloc(3 * n).unwrap(), &x, n),
        Err(CudaError::Shape(_))
    ));
    assert!(matches!(
        d.convert_centered(&mut y, &dev.alloc(4 * n).unwrap(), n),
        Err(CudaError::Shape(_))
    ));
    assert!(matches!(
        d.convert_centered(&mut dev.alloc(30).unwrap(), &dev.alloc(45).unwrap(), 15),
        Err(CudaError::InvalidArgument(_))
    ));
    dev.synchronize().unwrap();
}

/// Times the centred base conversion 30 → 8 limbs at N = 2^16 against its memory floor (printed).
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn bconv_timing_n16_30_to_8() {
    let dev = require_gpu("bconv_timing_n16_30_to_8");
    let mut rng = rng("bconv_timing");
    let n = 1 << 16;
    let (l, k) = (30, 8);
    let iters = 200;
    println!(
        "device: {} ({} SMs)",
        dev.name(),
        dev.multiprocessor_count()
    );
    // The practical bandwidth: a device-to-device copy moving the same bytes (read + write).
    let words = (l + k) * n / 2;
    let src = dev.upload(&vec![1u64; words]).unwrap();
    let mut dst = dev.alloc(words).unwrap();
    let copy_us = time_us(&dev, iters, || src.copy_into(&mut dst).unwrap());
    let bytes = ((l + k) * n * 8) as f64;
    let copy_bw = bytes / copy_us / 1e6; // TB/s
    println!(
        "floor: {:.1} MB moved; D2D copy of the same bytes {copy_us:.2} us ({copy_bw:.2} TB/s); \
         at 3.35 TB/s (H100 SXM datasheet) {:.2} us",
        bytes / 1e6,
        bytes / 3.35e6
    );
    for bits in [30u32, 61] {
        let (from, to) = disjoint_primes(bits, l, bits, k, DEGREE_MAX);
        let conv = BaseConverter::new(&basis(&from), &basis(&to)).unwrap();
        let d = DeviceBaseConverter::new(&dev, &conv).unwrap();
        println!("{bits}-bit primes: narrow kernels = {}", d.is_narrow());
        for polys in [1usize, 2] {
            let x = random_rns(&mut rng, &from, n, polys);
            let want = per_poly(&x, l, k, n, |i, o| conv.convert_centered(i, o, n).unwrap());
            let dx = dev.upload(&x).unwrap();
            let mut dy = dev.alloc(polys * k * n).unwrap();
            let floor_us = polys as f64 * bytes / copy_bw / 1e6;
            let auto = BconvTile::choose(n, polys, k, dev.multiprocessor_count());
            for tile in [BconvTile::Auto].into_iter().chain(BconvTile::ALL) {
                let us = time_us(&dev, iters, || {
                    d.convert_centered_with(&mut dy, &dx, n, false, tile)
                        .unwrap()
                });
                assert_words(&dev.download(&dy).unwrap(), &want, "timed conversion");
                println!(
                    "bconv {bits}-bit {l}->{k} N=2^16 polys={polys} {tile:?}{}: {us:.2} us \
                     ({:.2}x the copy floor {floor_us:.2} us)",
                    if tile == BconvTile::Auto {
                        format!(" (= {auto:?})")
                    } else {
                        String::new()
                    },
                    us / floor_us
                );
            }
        }
    }
}

/// Times ModUp and rescale at N = 2^16 with |Q| = 30, |P| = 8 (printed, not asserted).
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn modswitch_timing_n16() {
    let dev = require_gpu("modswitch_timing_n16");
    let mut rng = rng("modswitch_timing");
    let n = 1 << 16;
    let (ql, pl, dnum) = (30, 8, 4);
    let iters = 100;
    for bits in [30u32, 61] {
        let (qm, pm) = disjoint_primes(bits, ql, bits, pl, DEGREE_MAX);
        let (qb, pb) = (basis(&qm), basis(&pm));
        let modup = DeviceModUp::new(&dev, &ModUp::new(&qb, &pb, dnum).unwrap()).unwrap();
        let rescaler = DeviceRescaler::new(&dev, &Rescaler::new(&qb).unwrap()).unwrap();
        let x = dev.upload(&random_rns(&mut rng, &qm, n, 1)).unwrap();
        let mut ext = dev.alloc((ql + pl) * n).unwrap();
        let up_us = time_us(&dev, iters, || {
            modup.apply_centered(0, ql, &x, &mut ext, n).unwrap()
        });
        let mut res = dev.alloc((ql - 1) * n).unwrap();
        let rs_us = time_us(&dev, iters, || rescaler.apply(ql, &x, &mut res, n).unwrap());
        println!(
            "{bits}-bit N=2^16 |Q|={ql} |P|={pl} dnum={dnum}: centred ModUp(digit 0, 8 -> 30 limbs) \
             {up_us:.2} us, rescale(30 -> 29) \
             {rs_us:.2} us"
        );
    }
}
