//! Bad input found when Rhea was tried as a new user would (issue 32): each case is a typed
//! error (or a conservative value), never garbage.
//!
//! - CKKS scales below 1, zero, negative, NaN or infinite (`encode_at`, `mul_const_with_scale`,
//!   `drop_to_level_and_scale`), and such scales in files;
//! - BGV signed values outside `(-t/2, t/2]` and unsigned values outside `[0, t)`;
//! - a BGV ciphertext file whose noise bound would switch the noise checks off, and a BGV
//!   plaintext file whose norm bound understates its coefficients;
//! - decryption with the noise checks off reports an unknown budget, not a number;
//! - Galois elements that are not in the Galois group, generated or read.

mod serial_common;

use rhea::bgv::{self, BgvContext, BgvParametersLiteral};
use rhea::ckks::{self, CkksContext};
use rhea::params::CkksParametersLiteral;
use rhea::rlwe::GaloisKeys;
use rhea::serial::{Codec, Compression, SerialError};
use rhea::{Device, Error};
use serial_common::reseal;

const HEADER: usize = 56;

fn edited(bytes: &[u8], at: usize, value: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at..at + value.len()].copy_from_slice(value);
    reseal(&mut b);
    b
}

const BAD_SCALES: [f64; 8] = [
    0.5,
    0.999_999,
    0.0,
    -0.0,
    -1_099_511_627_776.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
];

struct Ckks {
    ctx: CkksContext,
    sk: rhea::rlwe::SecretKey,
    encoder: ckks::Encoder,
}

fn ckks_setup() -> Ckks {
    let params = CkksParametersLiteral::n13_logqp200_levels2()
        .build()
        .unwrap();
    let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
    let sk = ckks::KeyGenerator::from_seed(&ctx, [7; 32])
        .secret_key()
        .unwrap();
    let encoder = ckks::Encoder::new(&ctx).unwrap();
    Ckks { ctx, sk, encoder }
}

impl Ckks {
    fn encrypt(&self, values: &[f64]) -> ckks::Ciphertext {
        ckks::Encryptor::with_secret_key(&self.ctx, &self.sk)
            .unwrap()
            .encrypt(&self.encoder.encode(values).unwrap())
            .unwrap()
    }

    fn decrypt(&self, ct: &ckks::Ciphertext) -> Vec<f64> {
        let pt = ckks::Decryptor::new(&self.ctx, &self.sk)
            .unwrap()
            .decrypt(ct)
            .unwrap();
        self.encoder.decode(&pt).unwrap()
    }
}

#[test]
fn ckks_encode_refuses_scales_below_one_and_non_finite() {
    let s = ckks_setup();
    let top = s.ctx.params().max_level();
    for scale in BAD_SCALES {
        let err = s.encoder.encode_at(&[0.25, -1.5], top, scale).unwrap_err();
        assert!(
            matches!(err, Error::InvalidScale { op: "encode", scale: x } if x.to_bits() == scale.to_bits()),
            "scale {scale}: {err:?}"
        );
        assert!(err.to_string().contains("at least 1"), "{err}");
        let err = s
            .encoder
            .encode_complex_at(&[ckks::Complex64::new(1.0, 2.0)], top, scale)
            .unwrap_err();
        assert!(matches!(err, Error::InvalidScale { .. }), "{err:?}");
    }
    // A scale of exactly 1 is valid (coarse, but what was asked): integers survive it.
    let pt = s.encoder.encode_at(&[3.0, -2.0], top, 1.0).unwrap();
    assert_eq!(pt.scale(), 1.0);
    // A scale that does not fit below the modulus is a scale overflow.
    let ones = vec![1.0; s.encoder.slots()];
    let err = s.encoder.encode_at(&ones, 0, 2f64.powi(70)).unwrap_err();
    assert!(matches!(err, Error::ScaleOverflow { .. }), "{err:?}");
}

#[test]
fn ckks_mul_const_with_scale_refuses_scales_below_one_and_non_finite() {
    let s = ckks_setup();
    let ct = s.encrypt(&[0.5, -0.75]);
    let manual = ckks::Evaluator::new(&s.ctx).with_auto_rescale(false);
    for ev in [ckks::Evaluator::new(&s.ctx), manual] {
        for scale in BAD_SCALES {
            let err = ev.mul_const_with_scale(&ct, 2.0, scale).unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::InvalidScale {
                        op: "mul_const_with_scale",
                        ..
                    }
                ),
                "scale {scale}: {err:?}"
            );
        }
        // The same call with a valid scale works and is right.
        let out = ev.mul_const_with_scale(&ct, 2.0, 2f64.powi(20)).unwrap();
        assert_eq!(out.scale(), ct.scale() * 2f64.powi(20));
        let got = s.decrypt(&out);
        assert!(
            (got[0] - 1.0).abs() < 1e-3 && (got[1] + 1.5).abs() < 1e-3,
            "{got:?}"
        );
    }
}

#[test]
fn ckks_drop_to_level_and_scale_refuses_bad_target_scales() {
    let s = ckks_setup();
    let ct = s.encrypt(&[0.5]);
    let ev = ckks::Evaluator::new(&s.ctx);
    for scale in BAD_SCALES {
        let err = ev.drop_to_level_and_scale(&ct, 0, scale).unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidScale {
                    op: "drop_to_level_and_scale",
                    ..
                }
            ),
            "scale {scale}: {err:?}"
        );
    }
}

#[test]
fn a_ckks_file_with_a_bad_scale_is_refused_like_an_encoding() {
    let s = ckks_setup();
    let codec = Codec::from(&s.ctx);
    let ct = s.encrypt(&[1.0, 2.0]);
    let pt = s.encoder.encode(&[1.0, 2.0]).unwrap();
    // CKKS ciphertext: level u16, components u8, slots u32, scale f64.
    const CT_SCALE: usize = HEADER + 2 + 1 + 4;
    // CKKS plaintext: level u16, slots u32, scale f64.
    const PT_SCALE: usize = HEADER + 2 + 4;
    let log_q_top = s.ctx.params().log_q_at_level(ct.level());
    let too_big = (log_q_top + 1.0).exp2();
    for c in [Compression::NONE, Compression::SEEDED_PACKED] {
        let ct_bytes = codec.to_bytes(&ct, c).unwrap();
        let pt_bytes = codec.to_bytes(&pt, c).unwrap();
        // The unedited objects load.
        let back: ckks::Ciphertext = codec.from_bytes(&ct_bytes).unwrap();
        assert_eq!(back.scale(), ct.scale());
        for scale in BAD_SCALES.iter().copied().chain([too_big, f64::MAX]) {
            let bad = edited(&ct_bytes, CT_SCALE, &scale.to_le_bytes());
            let r = codec.from_bytes::<ckks::Ciphertext>(&bad);
            match r {
                Err(SerialError::Malformed(m)) => assert!(m.contains("scale"), "{m}"),
                other => panic!("ciphertext scale {scale}: {other:?}"),
            }
            let bad = edited(&pt_bytes, PT_SCALE, &scale.to_le_bytes());
            let r = codec.from_bytes::<ckks::Plaintext>(&bad);
            assert!(
                matches!(r, Err(SerialError::Malformed(_))),
                "plaintext scale {scale}: {r:?}"
            );
        }
    }
}

// ---------------------------------------------------------------------- BGV

struct Bgv {
    ctx: BgvContext,
    sk: rhea::rlwe::SecretKey,
    encoder: bgv::Encoder,
}

fn bgv_setup() -> Bgv {
    let params = BgvParametersLiteral::test_n12_levels5_insecure()
        .build()
        .unwrap();
    let ctx = BgvContext::new(&params, Device::Cpu).unwrap();
    let sk = bgv::KeyGenerator::from_seed(&ctx, [9; 32])
        .secret_key()
        .unwrap();
    let encoder = bgv::Encoder::new(&ctx).unwrap();
    Bgv { ctx, sk, encoder }
}

impl Bgv {
    fn encrypt(&self, values: &[i64]) -> bgv::Ciphertext {
        let pt = self
            .encoder
            .encode_signed_at(values, self.ctx.params().max_level())
            .unwrap();
        bgv::Encryptor::with_secret_key(&self.ctx, &self.sk)
            .unwrap()
            .encrypt(&pt)
            .unwrap()
    }

    fn decryptor(&self) -> bgv::Decryptor {
        bgv::Decryptor::new(&self.ctx, &self.sk).unwrap()
    }
}

#[test]
fn bgv_values_outside_the_plaintext_range_are_refused_not_reduced() {
    let s = bgv_setup();
    let t = s.ctx.t();
    assert_eq!(t % 2, 1, "the test assumes an odd t");
    let half = (t / 2) as i64; // (t-1)/2: the largest value of (-t/2, t/2]
    let top = s.ctx.params().max_level();
    for (values, index) in [
        (vec![1, half + 1], 1usize),
        (vec![-half - 1], 0),
        (vec![0, 0, t as i64], 2),
        (vec![i64::MAX], 0),
        (vec![i64::MIN], 0),
    ] {
        let err = s.encoder.encode_signed_at(&values, top).unwrap_err();
        match err {
            Error::PlaintextOutOfRange {
                value,
                index: i,
                t: tt,
                range,
            } => {
                assert_eq!((value, i, tt), (i128::from(values[index]), index, t));
                assert_eq!(range, "(-t/2, t/2]");
            }
            other => panic!("{values:?}: {other:?}"),
        }
    }
    // The ends of the range encode and decode back to themselves.
    let edge = [half, -half, 0, -1, 1];
    let ct = s.encrypt(&edge);
    let d = s.decryptor().decrypt(&ct).unwrap();
    assert_eq!(&s.encoder.decode_signed(&d).unwrap()[..5], &edge);
    // Unsigned values: [0, t).
    let err = s.encoder.encode(&[3, t]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::PlaintextOutOfRange {
                index: 1,
                range: "[0, t)",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(s.encoder.encode(&[t - 1]).is_ok());
    let err = s.encoder.encode_coeffs(&[u64::MAX], 0).unwrap_err();
    assert!(matches!(err, Error::PlaintextOutOfRange { .. }), "{err:?}");
}

/// BGV ciphertext payload: level u16, components u8, factor u64, noise bound f64.
const BGV_NOISE: usize = HEADER + 2 + 1 + 8;

#[test]
fn a_crafted_bgv_noise_bound_cannot_switch_the_noise_checks_off() {
    let s = bgv_setup();
    let codec = Codec::from(&s.ctx);
    let ct = s.encrypt(&[3, -4, 5]);
    let honest = ct.noise_bound_bits();
    let bytes = codec.to_bytes(&ct, Compression::SEEDED_PACKED).unwrap();
    // Infinite and NaN bounds are refused.
    for bound in [f64::NEG_INFINITY, f64::INFINITY, f64::NAN] {
        let r =
            codec.from_bytes::<bgv::Ciphertext>(&edited(&bytes, BGV_NOISE, &bound.to_le_bytes()));
        assert!(
            matches!(r, Err(SerialError::Malformed(_))),
            "{bound}: {r:?}"
        );
    }
    // A finite bound below what any ciphertext can carry is raised to that floor.
    let crafted: bgv::Ciphertext = codec
        .from_bytes(&edited(&bytes, BGV_NOISE, &(-1.0e300f64).to_le_bytes()))
        .unwrap();
    let floor = crafted.noise_bound_bits();
    assert!(floor.is_finite() && floor > 10.0, "floor {floor}");
    assert!(
        floor <= honest,
        "floor {floor} above the honest bound {honest}"
    );
    // The honest bound round-trips unchanged.
    let back: bgv::Ciphertext = codec.from_bytes(&bytes).unwrap();
    assert_eq!(back.noise_bound_bits().to_bits(), honest.to_bits());
    // With the checks on, squaring the crafted ciphertext is still refused once the budget is
    // used up (a bound of -1e300 would have let every product through).
    let ev = bgv::Evaluator::new(&s.ctx).with_auto_mod_switch(false);
    let mut x = crafted;
    let mut refused = false;
    for _ in 0..40 {
        match ev.mul_const(&x, 30_000) {
            Ok(y) => x = y,
            Err(e) => {
                assert!(matches!(e, Error::NoiseBudgetExhausted { .. }), "{e:?}");
                refused = true;
                break;
            }
        }
    }
    assert!(refused, "the noise checks never fired");
}

#[test]
fn a_crafted_bgv_plaintext_norm_is_recomputed_from_its_coefficients() {
    let s = bgv_setup();
    let codec = Codec::from(&s.ctx);
    let t = s.ctx.t() as i64;
    let values: Vec<i64> = (0..64).map(|i| (i * 997 % t) - t / 2).collect();
    let pt = s.encoder.encode_signed_at(&values, 1).unwrap();
    let honest = pt.log_norm();
    assert!(honest > 10.0, "{honest}");
    let bytes = codec.to_bytes(&pt, Compression::NONE).unwrap();
    let back: bgv::Plaintext = codec.from_bytes(&bytes).unwrap();
    assert_eq!(back.log_norm().to_bits(), honest.to_bits());
    // BGV plaintext payload: level u16, norm bound f64.
    let norm_at = HEADER + 2;
    for lie in [0.0f64, -1.0e300, f64::NEG_INFINITY] {
        let crafted: bgv::Plaintext = codec
            .from_bytes(&edited(&bytes, norm_at, &lie.to_le_bytes()))
            .unwrap();
        assert_eq!(crafted.log_norm().to_bits(), honest.to_bits(), "lie {lie}");
    }
    // Editing one NTT-form word of limb 0 changes every coefficient of limb 0: the limbs no
    // longer hold one centred integer in (-t/2, t/2], which is not a plaintext Rhea makes.
    let first_word = norm_at + 8;
    let mut bad = bytes.clone();
    bad[first_word] ^= 0x01;
    reseal(&mut bad);
    let r = codec.from_bytes::<bgv::Plaintext>(&bad);
    assert!(matches!(r, Err(SerialError::Malformed(_))), "{r:?}");
}

#[test]
fn with_the_noise_checks_off_decryption_reports_an_unknown_budget() {
    let s = bgv_setup();
    let unchecked = bgv::Evaluator::new(&s.ctx)
        .with_auto_mod_switch(false)
        .with_noise_check(false);
    let dec = s.decryptor();
    let mut ct = s.encrypt(&[1, 2, 3]);
    let fresh = dec.noise_budget(&ct).unwrap();
    assert!(matches!(fresh, Some(b) if b > 20), "{fresh:?}");
    assert_eq!(dec.decrypt(&ct).unwrap().noise_budget(), fresh);
    // Multiply until the tracked bound passes Q/2 (the checked evaluator would refuse).
    while unchecked.estimated_budget(&ct) >= 0 {
        ct = unchecked.mul_const(&ct, 3).unwrap();
    }
    assert!(
        bgv::Evaluator::new(&s.ctx).mul_const(&ct, 1).is_err(),
        "the checked evaluator refuses it"
    );
    assert_eq!(dec.noise_budget(&ct).unwrap(), None);
    match dec.decrypt(&ct) {
        Ok(d) => assert_eq!(d.noise_budget(), None, "a budget it cannot know"),
        Err(e) => assert!(matches!(e, Error::NoiseBudgetExhausted { .. }), "{e:?}"),
    }
}

// ---------------------------------------------------------------------- Galois elements

#[test]
fn galois_elements_outside_the_group_are_refused_when_generating_and_reading() {
    let s = ckks_setup();
    let n = s.ctx.params().n() as u64;
    let mut kg = ckks::KeyGenerator::from_seed(&s.ctx, [5; 32]);
    for g in [0, 2, 4, 2 * n, 2 * n + 1, 4 * n - 1, u64::MAX] {
        let err = kg.galois_key_for_element(&s.sk, g).unwrap_err();
        assert!(
            matches!(err, Error::InvalidGaloisElement { element, two_n } if element == g && two_n == 2 * n),
            "{g}: {err:?}"
        );
    }
    // Valid elements: the group's odd residues (rotation and conjugation elements among them).
    let key = kg.galois_key_for_element(&s.sk, 3).unwrap();
    let mut set = GaloisKeys::empty(s.ctx.params().id());
    let err = set.insert(4, key).unwrap_err();
    assert!(
        matches!(err, Error::InvalidGaloisElement { element: 4, .. }),
        "{err:?}"
    );
    let key = kg.galois_key_for_element(&s.sk, 3).unwrap();
    let err = set.insert(2 * n + 3, key).unwrap_err();
    assert!(matches!(err, Error::InvalidGaloisElement { .. }), "{err:?}");
    let key = kg.galois_key_for_element(&s.sk, 3).unwrap();
    set.insert(3, key).unwrap();
    assert_eq!(set.elements(), vec![3]);

    // Reading: a key set whose element is edited to an even number or one above 2N.
    let codec = Codec::from(&s.ctx);
    let gk = ckks::KeyGenerator::from_seed(&s.ctx, [7; 32])
        .galois_keys(&s.sk, &[1], false)
        .unwrap();
    let bytes = codec.to_bytes(&gk, Compression::SEEDED_PACKED).unwrap();
    let back: GaloisKeys = codec.from_bytes(&bytes).unwrap();
    assert_eq!(back.elements(), vec![5]);
    // Payload: count u32, then the elements (u64 each).
    let element_at = HEADER + 4;
    for g in [4u64, 2 * n + 5, 2 * n] {
        let r = codec.from_bytes::<GaloisKeys>(&edited(&bytes, element_at, &g.to_le_bytes()));
        assert!(
            matches!(r, Err(SerialError::Rhea(Error::InvalidGaloisElement { element, .. })) if element == g),
            "{g}: {r:?}"
        );
    }
}
