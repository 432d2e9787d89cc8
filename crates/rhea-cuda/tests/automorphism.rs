//! NTT- and coefficient-domain automorphisms against the CPU: `a(X^g)` computed on the host in
//! the coefficient domain, then `rhea_math::ntt` forward, must equal the GPU automorphism of the
//! forward NTT of `a`, word for word.

mod common;

use common::{cubin_has, primes, random_rns, require_gpu, require_nvrtc, rng, time_us};
use rand::Rng;
use rhea_cuda::automorphism::{self, AUTOMORPHISM};
use rhea_cuda::{registry, CudaError, RnsLayout};
use rhea_math::ntt::NttTable;
use rhea_math::Modulus;

#[test]
#[ignore = "needs NVRTC (run with --include-ignored; scripts/check-kernels.sh and scripts/gpu-run.sh do)"]
fn automorphism_kernels_compile() {
    require_nvrtc("automorphism_kernels_compile");
    let cubin = registry::compile(&AUTOMORPHISM, "sm_90").unwrap_or_else(|e| panic!("{e}"));
    for f in ["automorphism_ntt", "automorphism_coeff"] {
        assert!(cubin_has(&cubin, f), "{f} missing from the CUBIN");
    }
}

/// `a(X^g)` of one limb, written independently of the crate's host helpers.
fn coeff_automorphism(a: &[u64], g: u64, q: &Modulus) -> Vec<u64> {
    let n = a.len();
    let two_n = 2 * n as u64;
    let mut out = vec![u64::MAX; n];
    for (i, &x) in a.iter().enumerate() {
        let e = (i as u64 * g) % two_n;
        if (e as usize) < n {
            out[e as usize] = x;
        } else {
            out[e as usize - n] = q.neg(x);
        }
    }
    assert!(out.iter().all(|&v| v != u64::MAX), "not a permutation");
    out
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn automorphisms_match_the_ntt() {
    let dev = require_gpu("automorphisms_match_the_ntt");
    let mut rng = rng("automorphisms_match_the_ntt");
    // (log N, limbs, bits, polys)
    let cases = [
        (12, 1, 61, 1),
        (12, 33, 30, 2),
        (16, 8, 61, 2),
        (16, 3, 30, 1),
        (17, 3, 61, 1),
        (17, 1, 30, 3),
    ];
    for (log_n, limbs, bits, polys) in cases {
        let n = 1usize << log_n;
        let moduli = primes(bits, limbs, n);
        let tables: Vec<NttTable> = moduli
            .iter()
            .map(|&q| NttTable::new(q, n).unwrap())
            .collect();
        let dmod = dev.moduli(&moduli).unwrap();
        let layout = RnsLayout::new(n, limbs, polys);
        let a = random_rns(&mut rng, &moduli, n, polys);
        let mut fa = a.clone();
        for (r, row) in fa.chunks_mut(n).enumerate() {
            tables[r % limbs].forward(row).unwrap();
        }
        let da = dev.upload(&a).unwrap();
        let dfa = dev.upload(&fa).unwrap();
        let mut out = dev.alloc(layout.words()).unwrap();
        let two_n = 2 * n as u64;
        let mut gs = vec![
            5,
            automorphism::rotation_galois(7, n).unwrap(),
            automorphism::rotation_galois(-3, n).unwrap(),
            automorphism::conjugation_galois(n).unwrap(),
            3,
            two_n + 5, // reduced mod 2N
        ];
        gs.push(rng.random_range(0..n as u64) * 2 + 1);
        for g in gs {
            let mut want_coeff = Vec::with_capacity(a.len());
            for (r, row) in a.chunks(n).enumerate() {
                want_coeff.extend(coeff_automorphism(row, g % two_n, &moduli[r % limbs]));
            }
            let mut want_ntt = want_coeff.clone();
            for (r, row) in want_ntt.chunks_mut(n).enumerate() {
                tables[r % limbs].forward(row).unwrap();
            }
            let case = format!("N=2^{log_n} limbs={limbs} {bits} bits polys={polys} g={g}");

            automorphism::apply_ntt(&mut out, &dfa, g, &layout).unwrap();
            let got = dev.download(&out).unwrap();
            assert_eq!(got, want_ntt, "NTT domain, {case}");

            automorphism::apply_coeff(&mut out, &da, g, &layout, &dmod).unwrap();
            let got = dev.download(&out).unwrap();
            assert_eq!(got, want_coeff, "coefficient domain, {case}");

            // The host helpers of the crate agree with the oracle too.
            let h: Vec<u64> = fa
                .chunks(n)
                .flat_map(|row| automorphism::host::apply_ntt(row, g))
                .collect();
            assert_eq!(h, want_ntt, "host helper, {case}");
        }
        println!("ok: N=2^{log_n} limbs={limbs} {bits} bits polys={polys}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn automorphism_errors() {
    let dev = require_gpu("automorphism_errors");
    let n = 64;
    let layout = RnsLayout::new(n, 2, 1);
    let a = dev.alloc(layout.words()).unwrap();
    let mut out = dev.alloc(layout.words()).unwrap();
    assert!(matches!(
        automorphism::apply_ntt(&mut out, &a, 4, &layout),
        Err(CudaError::InvalidArgument(_))
    ));
    assert!(matches!(
        automorphism::apply_ntt(&mut dev.alloc(n).unwrap(), &a, 5, &layout),
        Err(CudaError::Shape(_))
    ));
    let odd = RnsLayout::new(48, 1, 1);
    assert!(matches!(
        automorphism::apply_ntt(
            &mut dev.alloc(48).unwrap(),
            &dev.alloc(48).unwrap(),
            5,
            &odd
        ),
        Err(CudaError::InvalidArgument(_))
    ));
    let moduli = primes(30, 1, n);
    let dmod = dev.moduli(&moduli).unwrap();
    assert!(matches!(
        automorphism::apply_coeff(&mut out, &a, 5, &layout, &dmod),
        Err(CudaError::Shape(_))
    ));
}

/// Times the NTT-domain automorphism of a ciphertext (2 × 30 limbs, N = 2^16) against a
/// device-to-device copy of the same buffer (printed, not asserted).
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn automorphism_timing_n16() {
    let dev = require_gpu("automorphism_timing_n16");
    let mut rng = rng("automorphism_timing_n16");
    let (n, limbs, polys) = (1usize << 16, 30, 2);
    let moduli = primes(61, limbs, n);
    let layout = RnsLayout::new(n, limbs, polys);
    let a = dev
        .upload(&random_rns(&mut rng, &moduli, n, polys))
        .unwrap();
    let mut out = dev.alloc(layout.words()).unwrap();
    let g = automorphism::rotation_galois(1, n).unwrap();
    let copy = time_us(&dev, 100, || a.copy_into(&mut out).unwrap());
    let ntt = time_us(&dev, 100, || {
        automorphism::apply_ntt(&mut out, &a, g, &layout).unwrap()
    });
    let dmod = dev.moduli(&moduli).unwrap();
    let coeff = time_us(&dev, 100, || {
        automorphism::apply_coeff(&mut out, &a, g, &layout, &dmod).unwrap()
    });
    println!(
        "automorphism 2 x 30 limbs N=2^16 on {}: NTT domain {ntt:.2} us, coefficient domain \
         {coeff:.2} us, D2D copy {copy:.2} us",
        dev.name()
    );
}
