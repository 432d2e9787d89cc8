//! RLWE core: exact and noise-level properties of encryption and key switching.

use std::sync::Arc;

use rhea_math::prime::generate_ntt_primes;
use rhea_math::sampler::Prng;

use super::*;
use crate::backend::{Device, RnsRing};

fn ctx(n: usize, q_bits: &[u32], p_bits: &[u32], dnum: usize) -> RlweContext {
    let mut q = Vec::new();
    for &b in q_bits {
        let p = generate_ntt_primes(b, n, 1, &q).unwrap();
        q.extend(p);
    }
    let mut p = Vec::new();
    for &b in p_bits {
        let mut ex = q.clone();
        ex.extend(&p);
        p.extend(generate_ntt_primes(b, n, 1, &ex).unwrap());
    }
    let ring = RnsRing::new(n, &q, &p, dnum).unwrap();
    RlweContext::new(
        Arc::new(ring),
        SecretDistribution::Ternary,
        3.2,
        7,
        Device::Cpu,
    )
    .unwrap()
}

/// log2 of the largest centred coefficient of `a - b` (both NTT form, same shape).
fn log2_noise(c: &RlweContext, a: &Poly, b: &Poly) -> f64 {
    let mut d = c.ring().sub(a, b).unwrap();
    c.ring().ntt_inverse(&mut d).unwrap();
    let v = c.ring().download_centered_f64(&d).unwrap();
    v.iter().fold(0.0f64, |m, x| m.max(x.abs())).log2()
}

#[test]
fn keyswitch_is_correct_for_every_dnum() {
    let n = 1 << 10;
    // P (5 × 61 bits) exceeds the largest digit (all of Q at dnum = 1), so the noise is the
    // rounding floor of ModDown for every dnum. Digits are split evenly (sizes differ by at most
    // one prime), so every dnum from 1 to the number of Q primes is valid.
    let cases: [(&[u32], &[usize]); 2] = [
        (&[50, 40, 40], &[1, 2, 3]),
        (&[50, 40, 40, 40, 40, 40], &[1, 2, 3, 4, 5, 6]),
    ];
    for (q_bits, dnums) in cases {
        for &dnum in dnums {
            let c = ctx(n, q_bits, &[61, 61, 61, 61, 61], dnum);
            let mut rng = Prng::from_seed([dnum as u8; 32]);
            let sk = c.gen_secret_key(&mut rng).unwrap();
            let rlk = c.gen_relinearization_key(&sk, &mut rng).unwrap();
            for ell in (1..=q_bits.len()).rev() {
                let shape = c.ring().shape_q(ell);
                let d = c
                    .ring()
                    .sample_uniform_from_seed(Device::Cpu, &[9; 32], ell as u64, shape)
                    .unwrap();
                let [u0, u1] = c.keyswitch(&d, &rlk.0).unwrap();
                let got = c.decrypt(&sk, &[u0, u1]).unwrap();
                let s_l = c.ring().drop_q_limbs(&sk.s_q, ell).unwrap();
                let want = c
                    .ring()
                    .mul(&c.ring().mul(&d, &s_l).unwrap(), &s_l)
                    .unwrap();
                let bits = log2_noise(&c, &got, &want);
                // Rounding floor: |r_0 + r_1·s| with |r_i| ≤ 1/2, about 4σ of sqrt(N/18) ≈ 2^5.
                assert!(
                    bits < 7.0,
                    "{} Q primes, dnum {dnum}, {ell} limbs: noise 2^{bits:.1}",
                    q_bits.len()
                );
            }
        }
    }
}

#[test]
fn dnum_outside_one_to_l_is_a_typed_error() {
    let n = 1 << 10;
    let q = generate_ntt_primes(40, n, 6, &[]).unwrap();
    let p = generate_ntt_primes(61, n, 2, &q).unwrap();
    // The digits are split evenly, so every dnum in 1..=L works (4 digits of 2, 2, 1, 1 limbs).
    for dnum in 1..=6 {
        assert!(RnsRing::new(n, &q, &p, dnum).is_ok(), "dnum {dnum}");
    }
    assert!(RnsRing::new(n, &q, &p, 0).is_err());
    assert!(RnsRing::new(n, &q, &p, 7).is_err());
}

#[test]
fn encryption_noise_and_automorphisms() {
    let n = 1 << 11;
    let c = ctx(n, &[55, 45, 45], &[61, 61], 3);
    let mut rng = Prng::from_seed([1; 32]);
    let sk = c.gen_secret_key(&mut rng).unwrap();
    let pk = c.gen_public_key(&sk, &mut rng).unwrap();
    for ell in [3usize, 1] {
        let m = c
            .ring()
            .sample_uniform_from_seed(Device::Cpu, &[5; 32], 0, c.ring().shape_q(ell))
            .unwrap();
        // Secret key: the noise is one Gaussian, |e| ≤ 6σ < 2^4.3.
        let (ct, _) = c.encrypt_sk(&sk, &m, &mut rng).unwrap();
        assert!(log2_noise(&c, &c.decrypt(&sk, &ct).unwrap(), &m) < 4.3);
        // Public key over Q ∪ P, divided by P: the rounding floor.
        let ct = c.encrypt_pk(&pk, &m, &mut rng).unwrap();
        assert!(log2_noise(&c, &c.decrypt(&sk, &ct).unwrap(), &m) < 7.0);
        // σ_g of the ciphertext decrypts to σ_g(m), for rotations and conjugation; the hoisted
        // form shares one decomposition and is identical.
        let digits = c.decompose(&ct[1]).unwrap();
        for g in [
            c.galois_element_for_rotation(1),
            c.galois_element_for_rotation(-3),
            c.galois_element_for_conjugation(),
        ] {
            let key = c.gen_galois_key(&sk, g, &mut rng).unwrap();
            let rot = c.automorphism(&ct, g, &key).unwrap();
            let want = c.ring().automorphism(&m, g).unwrap();
            assert!(log2_noise(&c, &c.decrypt(&sk, &rot).unwrap(), &want) < 7.5);
            let hoisted = c.automorphism_hoisted(&ct[0], &digits, g, &key).unwrap();
            for (a, b) in rot.iter().zip(&hoisted) {
                assert_eq!(c.ring().download(a).unwrap(), c.ring().download(b).unwrap());
            }
        }
    }
    assert_eq!(c.galois_element_for_rotation(0), 1);
    assert_eq!(c.galois_element_for_rotation(n as i64 / 2), 1);
    let g = c.galois_element_for_rotation(7);
    assert_eq!(g * c.galois_inverse(g) % (2 * n as u64), 1);
}

#[test]
fn keys_of_other_parameters_are_refused() {
    let a = ctx(1 << 10, &[50, 40], &[61], 2);
    let b = RlweContext::new(
        a.ring.clone(),
        SecretDistribution::Ternary,
        3.2,
        8,
        Device::Cpu,
    )
    .unwrap();
    let mut rng = Prng::from_seed([2; 32]);
    let sk = a.gen_secret_key(&mut rng).unwrap();
    assert!(matches!(
        b.gen_public_key(&sk, &mut rng),
        Err(Error::ParametersMismatch { .. })
    ));
}
