//! BGV objects: round trips in every compression mode, bit for bit (keys through the BGV
//! codec, plaintexts, fresh secret- and public-key encryptions, products, switched
//! ciphertexts), exact decryption after loading, BGV parameters, and BGV-specific field checks.

mod serial_common;

use rhea::bgv::{
    self, BgvContext, BgvParameters, BgvParametersLiteral, Decryptor, Encoder, Encryptor,
    Evaluator, KeyGenerator,
};
use rhea::rlwe::{GaloisKeys, RelinearizationKey};
use rhea::serial::{
    inspect, read_parameters, write_parameters, Codec, Compression, SchemeParameters, SerialError,
    Summary,
};
use rhea::unstable::HasRing;
use rhea::Device;
use serial_common::*;

fn bgv_sets() -> Vec<BgvParameters> {
    vec![
        BgvParametersLiteral::test_n12_levels5_insecure()
            .build()
            .unwrap(),
        BgvParametersLiteral::he_booster_n13_logqp218()
            .build()
            .unwrap(),
    ]
}

fn assert_ct_eq(ring: &rhea::unstable::RnsRing, a: &bgv::Ciphertext, b: &bgv::Ciphertext) {
    assert_eq!(a.level(), b.level());
    assert_eq!(a.len(), b.len());
    assert_eq!(a.factor(), b.factor());
    assert_eq!(
        a.noise_bound_bits().to_bits(),
        b.noise_bound_bits().to_bits()
    );
    assert_eq!(a.params_id(), b.params_id());
    assert_eq!(a.seed(), b.seed());
    assert_eq!(all_words(ring, a.parts()), all_words(ring, b.parts()));
}

#[test]
fn bgv_objects_round_trip_bit_exactly_and_decrypt_exactly() {
    for params in bgv_sets() {
        let ctx = BgvContext::new(&params, Device::Cpu).unwrap();
        let ring = ctx.ring();
        let mut kg = KeyGenerator::from_seed(&ctx, [3; 32]);
        let sk = kg.secret_key().unwrap();
        let pk = kg.public_key(&sk).unwrap();
        let rlk = kg.relinearization_key(&sk).unwrap();
        let gk = kg.galois_keys(&sk, &[1, 5], true).unwrap();
        let encoder = Encoder::new(&ctx).unwrap();
        let values: Vec<u64> = (0..encoder.slots() as u64)
            .map(|i| (i * 31 + 7) % 65537)
            .collect();
        let pt = encoder.encode(&values).unwrap();
        let ct_sk = Encryptor::with_secret_key(&ctx, &sk)
            .unwrap()
            .with_seed([4; 32])
            .encrypt(&pt)
            .unwrap();
        assert!(ct_sk.seed().is_some());
        let ct_pk = Encryptor::new(&ctx, &pk)
            .unwrap()
            .with_seed([5; 32])
            .encrypt(&pt)
            .unwrap();
        assert!(ct_pk.seed().is_none());
        let eval = Evaluator::new(&ctx);
        let ct3 = eval.mul_no_relin(&ct_sk, &ct_pk).unwrap();
        let ct_low = eval.mod_switch(&ct_pk).unwrap(); // factor ≠ 1 in general
        assert!(ct_low.seed().is_none());
        let codec = Codec::from(&ctx);
        let dec = Decryptor::new(&ctx, &sk).unwrap();
        for c in ALL {
            let bytes = codec.to_bytes(&pk, c).unwrap();
            assert_eq!(bytes.len() as u64, codec.size(&pk, c).unwrap());
            let pk2: rhea::rlwe::PublicKey = codec.from_bytes(&bytes).unwrap();
            assert_eq!(
                codec.to_bytes(&pk2, Compression::NONE).unwrap(),
                codec.to_bytes(&pk, Compression::NONE).unwrap()
            );

            let rlk2: RelinearizationKey =
                codec.from_bytes(&codec.to_bytes(&rlk, c).unwrap()).unwrap();
            for (a, b) in rlk2.key().parts().iter().zip(rlk.key().parts()) {
                assert_eq!(all_words(ring, a), all_words(ring, b));
            }
            let gk2: GaloisKeys = codec.from_bytes(&codec.to_bytes(&gk, c).unwrap()).unwrap();
            assert_eq!(gk2.elements(), gk.elements());
            for g in gk.elements() {
                for (a, b) in gk2
                    .get(g)
                    .unwrap()
                    .parts()
                    .iter()
                    .zip(gk.get(g).unwrap().parts())
                {
                    assert_eq!(all_words(ring, a), all_words(ring, b));
                }
            }

            let pt2: bgv::Plaintext = codec.from_bytes(&codec.to_bytes(&pt, c).unwrap()).unwrap();
            assert_eq!(words(ring, pt2.poly()), words(ring, pt.poly()));
            assert_eq!(pt2.log_norm().to_bits(), pt.log_norm().to_bits());
            assert_eq!(pt2.level(), pt.level());

            for ct in [&ct_sk, &ct_pk, &ct3, &ct_low] {
                let bytes = codec.to_bytes(ct, c).unwrap();
                assert_eq!(bytes.len() as u64, codec.size(ct, c).unwrap());
                let back: bgv::Ciphertext = codec.from_bytes(&bytes).unwrap();
                assert_ct_eq(ring, &back, ct);
                assert_eq!(codec.to_bytes(&back, c).unwrap(), bytes);
                let got = encoder.decode(&dec.decrypt(&back).unwrap()).unwrap();
                let want = encoder.decode(&dec.decrypt(ct).unwrap()).unwrap();
                assert_eq!(got, want);
            }
            let got = encoder
                .decode(
                    &dec.decrypt(
                        &codec
                            .from_bytes::<bgv::Ciphertext>(&codec.to_bytes(&ct_sk, c).unwrap())
                            .unwrap(),
                    )
                    .unwrap(),
                )
                .unwrap();
            assert_eq!(got, values);
        }
        // Seeded fresh secret-key encryptions are about half the size.
        let r = codec.size(&ct_sk, Compression::SEEDED).unwrap() as f64
            / codec.size(&ct_sk, Compression::NONE).unwrap() as f64;
        assert!(r > 0.5 && r < 0.51, "{r}");
        // Secret key.
        let mut b = Vec::new();
        codec.write_secret_key(&mut b, &sk).unwrap();
        let sk2 = codec.read_secret_key(&b[..]).unwrap();
        let dec2 = Decryptor::new(&ctx, &sk2).unwrap();
        assert_eq!(
            encoder.decode(&dec2.decrypt(&ct3).unwrap()).unwrap(),
            encoder.decode(&dec.decrypt(&ct3).unwrap()).unwrap()
        );
        // Inspect.
        let info = inspect(&codec.to_bytes(&ct_low, Compression::PACKED).unwrap()[..]).unwrap();
        match info.summary {
            Summary::BgvCiphertext {
                level,
                components,
                factor,
                has_seed,
                ..
            } => {
                assert_eq!(level, params.max_level() - 1);
                assert_eq!(components, 2);
                assert_eq!(factor, ct_low.factor());
                assert!(!has_seed);
            }
            other => panic!("{other:?}"),
        }
        // Parameters.
        let sp = SchemeParameters::from(&params);
        let mut b = Vec::new();
        write_parameters(&mut b, &sp).unwrap();
        let back = read_parameters(&b[..]).unwrap();
        assert_eq!(back.digest(), sp.digest());
        match back {
            SchemeParameters::Bgv(p) => {
                assert_eq!(p.literal(), params.literal());
                assert_eq!(p.id(), params.id());
            }
            SchemeParameters::Ckks(_) => panic!("scheme changed"),
        }
        match inspect(&b[..]).unwrap().summary {
            Summary::Parameters {
                t,
                log_default_scale,
                ..
            } => {
                assert_eq!(t, Some(params.t()));
                assert_eq!(log_default_scale, None);
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn bgv_fields_and_schemes_are_checked() {
    let params = bgv_sets().remove(0);
    let ctx = BgvContext::new(&params, Device::Cpu).unwrap();
    let mut kg = KeyGenerator::from_seed(&ctx, [8; 32]);
    let sk = kg.secret_key().unwrap();
    let encoder = Encoder::new(&ctx).unwrap();
    let ct = Encryptor::with_secret_key(&ctx, &sk)
        .unwrap()
        .encrypt(&encoder.encode(&[1, 2, 3]).unwrap())
        .unwrap();
    let codec = Codec::from(&ctx);
    let bytes = codec.to_bytes(&ct, Compression::SEEDED_PACKED).unwrap();
    // The correction factor must be a unit modulo t.
    let factor_at = 56 + 2 + 1;
    for f in [0u64, params.t(), params.t() + 1] {
        let mut bad = bytes.clone();
        bad[factor_at..factor_at + 8].copy_from_slice(&f.to_le_bytes());
        reseal(&mut bad);
        let r = codec.from_bytes::<bgv::Ciphertext>(&bad);
        assert!(
            matches!(r, Err(SerialError::Malformed(_))),
            "factor {f}: {r:?}"
        );
    }
    // A NaN noise bound.
    let mut bad = bytes.clone();
    bad[factor_at + 8..factor_at + 16].copy_from_slice(&f64::NAN.to_bits().to_le_bytes());
    reseal(&mut bad);
    assert!(matches!(
        codec.from_bytes::<bgv::Ciphertext>(&bad),
        Err(SerialError::Malformed(_))
    ));
    // A BGV ciphertext is not a CKKS ciphertext, and a CKKS codec refuses BGV objects.
    let err = codec
        .from_bytes::<rhea::ckks::Ciphertext>(&bytes)
        .unwrap_err();
    assert!(matches!(err, SerialError::WrongKind { .. }), "{err:?}");
    let (_, ckks_params) = ckks_sets().remove(0);
    let ckks_codec = Codec::new(ckks_params, Device::Cpu).unwrap();
    let err = ckks_codec.to_bytes(&ct, Compression::NONE).unwrap_err();
    assert!(matches!(err, SerialError::Unsupported(_)), "{err:?}");
    let err = ckks_codec
        .from_bytes::<bgv::Ciphertext>(&bytes)
        .unwrap_err();
    assert!(
        matches!(err, SerialError::ParametersMismatch { .. }),
        "{err:?}"
    );
    // Keys of the CKKS and BGV parameters are not interchangeable, even on the same ring.
    let mut ckks_kg = rhea::ckks::KeyGenerator::from_seed(
        &rhea::ckks::CkksContext::new(ckks_codec.params_ckks(), Device::Cpu).unwrap(),
        [1; 32],
    );
    let ckks_sk = ckks_kg.secret_key().unwrap();
    assert!(codec.write_secret_key(Vec::new(), &ckks_sk).is_err());
}

trait CkksParamsOf {
    fn params_ckks(&self) -> &rhea::params::CkksParameters;
}

impl CkksParamsOf for Codec {
    fn params_ckks(&self) -> &rhea::params::CkksParameters {
        match self.params() {
            SchemeParameters::Ckks(p) => p,
            SchemeParameters::Bgv(_) => panic!("not CKKS"),
        }
    }
}
