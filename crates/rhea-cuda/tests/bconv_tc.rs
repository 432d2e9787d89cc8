//! The tensor-core conversion (`bconv_tc`) against its twin `BaseConverter::convert_approx`, bit
//! for bit, on random non-zero inputs: 1 to 32 input limbs, 1 to 25 outputs, 30- and 61-bit
//! primes (the largest products), N = 2^12, 2^16 and 2^17; bad shapes are typed errors.

mod common;

use common::{assert_words, basis, disjoint_primes, gpu_or_skip, random_rns, rng};
use rhea_cuda::bconv::DeviceBaseConverter;
use rhea_cuda::bconv_tc::{TensorConverter, TC_MAX_INPUTS};
use rhea_cuda::CudaError;
use rhea_math::bconv::BaseConverter;

const DEGREE_MAX: usize = 1 << 17;

#[test]
fn tensor_conversion_matches_convert_approx() {
    let Some(dev) = gpu_or_skip("tensor_conversion_matches_convert_approx") else {
        return;
    };
    let mut rng = rng("tensor_conversion_matches_convert_approx");
    // (log N, L, K, bits of the source primes, bits of the target primes)
    let cases = [
        (12, 1, 1, 61, 61),
        (12, 1, 3, 30, 61),
        (12, 5, 9, 61, 30),
        (12, 32, 7, 61, 61),
        (16, 9, 23, 60, 60),
        (16, 7, 25, 61, 61),
        (16, 30, 8, 60, 60),
        (17, 3, 17, 61, 61),
    ];
    for (log_n, l, k, bf, bt) in cases {
        let n = 1usize << log_n;
        let case = format!("N=2^{log_n} L={l} K={k} ({bf}->{bt} bits)");
        let (from, to) = disjoint_primes(bf, l, bt, k, DEGREE_MAX);
        let conv = BaseConverter::new(&basis(&from), &basis(&to)).unwrap();
        let x = random_rns(&mut rng, &from, n, 1);
        let mut want = vec![0u64; k * n];
        conv.convert_approx(&x, &mut want, n).unwrap();
        let dconv = DeviceBaseConverter::new(&dev, &conv).unwrap();
        let tc = TensorConverter::new(&dconv, &conv).unwrap();
        let dx = dev.upload(&x).unwrap();
        let mut t = dev.alloc(l * n).unwrap();
        dconv.scale_by_q_hat_inv(&mut t, &dx, n).unwrap();
        let mut out = dev.alloc(k * n).unwrap();
        tc.convert_scaled(&mut out, &t, n).unwrap();
        let got = dev.download(&out).unwrap();
        assert!(got.iter().any(|&w| w != 0), "{case}: all zero");
        assert_words(&got, &want, &case);
        // The integer-pipe kernel on the same scaled input agrees too.
        let mut y = dev.alloc(k * n).unwrap();
        dconv.convert_scaled(&mut y, &t, n).unwrap();
        assert_words(
            &dev.download(&y).unwrap(),
            &want,
            &format!("{case} integer pipe"),
        );
    }
}

#[test]
fn tensor_conversion_bad_shapes_are_errors() {
    let Some(dev) = gpu_or_skip("tensor_conversion_bad_shapes_are_errors") else {
        return;
    };
    let n = 1usize << 12;
    let (from, to) = disjoint_primes(60, 3, 60, 2, n);
    let conv = BaseConverter::new(&basis(&from), &basis(&to)).unwrap();
    let dconv = DeviceBaseConverter::new(&dev, &conv).unwrap();
    let tc = TensorConverter::new(&dconv, &conv).unwrap();
    let t = dev.alloc(3 * n).unwrap();
    let mut out = dev.alloc(2 * n).unwrap();
    let shape = |r: rhea_cuda::Result<()>| matches!(r, Err(CudaError::Shape(_)));
    assert!(
        shape(tc.convert_scaled(&mut out, &t, n - 64)),
        "n does not match"
    );
    let t_odd = dev.alloc(3 * 96).unwrap();
    let mut out_odd = dev.alloc(2 * 96).unwrap();
    assert!(
        shape(tc.convert_scaled(&mut out_odd, &t_odd, 96)),
        "n not a multiple of 64"
    );
    let mut short = dev.alloc(n).unwrap();
    assert!(shape(tc.convert_scaled(&mut short, &t, n)), "short output");

    let (big_from, big_to) = disjoint_primes(60, TC_MAX_INPUTS + 1, 60, 2, n);
    let big = BaseConverter::new(&basis(&big_from), &basis(&big_to)).unwrap();
    let dbig = DeviceBaseConverter::new(&dev, &big).unwrap();
    assert!(matches!(
        TensorConverter::new(&dbig, &big),
        Err(CudaError::InvalidArgument(_))
    ));
    assert!(matches!(
        TensorConverter::new(&dconv, &big),
        Err(CudaError::InvalidArgument(_))
    ));
}
