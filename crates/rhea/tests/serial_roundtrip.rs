//! Round trips of every serialisable object, in every compression mode, bit for bit; size
//! queries; streaming several objects through one stream; selective Galois-key loading;
//! `inspect`.

mod serial_common;

use rhea::ckks::{self, Decryptor, Encryptor};
use rhea::rlwe::{GaloisKeys, PublicKey, RelinearizationKey};
use rhea::serial::{
    inspect, parameters_size, read_parameters, write_parameters, Codec, Compression, ObjectKind,
    SchemeParameters, Summary,
};
use rhea::unstable::HasRing;
use serial_common::*;

fn assert_ct_eq(ring: &rhea::unstable::RnsRing, a: &ckks::Ciphertext, b: &ckks::Ciphertext) {
    assert_eq!(a.level(), b.level());
    assert_eq!(a.len(), b.len());
    assert_eq!(a.scale().to_bits(), b.scale().to_bits());
    assert_eq!(a.slots(), b.slots());
    assert_eq!(a.params_id(), b.params_id());
    assert_eq!(a.seed(), b.seed());
    assert_eq!(all_words(ring, a.parts()), all_words(ring, b.parts()));
}

fn assert_ksk_eq(
    ring: &rhea::unstable::RnsRing,
    a: &rhea::rlwe::KeySwitchKey,
    b: &rhea::rlwe::KeySwitchKey,
) {
    assert_eq!(a.seed(), b.seed());
    assert_eq!(a.dnum(), b.dnum());
    assert_eq!(a.params_id(), b.params_id());
    for (pa, pb) in a.parts().iter().zip(b.parts()) {
        assert_eq!(all_words(ring, pa), all_words(ring, pb));
    }
}

/// Writes `obj`, checks the size query, reads it back.
fn round_trip<T: rhea::serial::Serializable>(codec: &Codec, obj: &T, c: Compression) -> (T, u64) {
    let size = codec.size(obj, c).unwrap();
    let mut bytes = Vec::new();
    let written = codec.write(&mut bytes, obj, c).unwrap();
    assert_eq!(written, size);
    assert_eq!(bytes.len() as u64, size);
    let back: T = codec.from_bytes(&bytes).unwrap();
    // Re-serialising the loaded object gives the same bytes.
    assert_eq!(codec.to_bytes(&back, c).unwrap(), bytes);
    (back, size)
}

#[test]
fn ckks_objects_round_trip_bit_exactly_in_every_mode() {
    for (name, params) in ckks_sets() {
        let f = ckks_fixture(&params, 7);
        let ring = f.ctx.ring();
        let codec = &f.codec;
        for c in ALL {
            // Public key: the same seeded encryption under the original and the loaded key.
            let (pk, _) = round_trip(codec, &f.pk, c);
            assert_eq!(pk.seed(), f.pk.seed());
            let enc = |k: &PublicKey| {
                Encryptor::new(&f.ctx, k)
                    .unwrap()
                    .with_seed([9; 32])
                    .encrypt(&f.pt)
                    .unwrap()
            };
            assert_ct_eq(ring, &enc(&pk), &enc(&f.pk));
            assert_eq!(
                codec.to_bytes(&pk, Compression::NONE).unwrap(),
                codec.to_bytes(&f.pk, Compression::NONE).unwrap()
            );

            let (rlk, _) = round_trip::<RelinearizationKey>(codec, &f.rlk, c);
            assert_ksk_eq(ring, rlk.key(), f.rlk.key());

            let (gk, _) = round_trip::<GaloisKeys>(codec, &f.gk, c);
            assert_eq!(gk.elements(), f.gk.elements());
            assert_eq!(gk.len(), 3);
            for g in f.gk.elements() {
                assert_ksk_eq(ring, gk.get(g).unwrap(), f.gk.get(g).unwrap());
            }

            let (pt, _) = round_trip(codec, &f.pt, c);
            assert_eq!(pt.level(), f.pt.level());
            assert_eq!(pt.scale().to_bits(), f.pt.scale().to_bits());
            assert_eq!(pt.slots(), f.pt.slots());
            assert_eq!(words(ring, pt.poly()), words(ring, f.pt.poly()));

            for ct in [&f.ct_sk, &f.ct_pk, &f.ct3, &f.ct_low] {
                let (back, _) = round_trip(codec, ct, c);
                assert_ct_eq(ring, &back, ct);
            }
        }
        // Functional: the loaded secret key decrypts to the same words.
        let mut sk_bytes = Vec::new();
        let n = codec.write_secret_key(&mut sk_bytes, &f.sk).unwrap();
        assert_eq!(n, codec.secret_key_size());
        assert_eq!(sk_bytes.len() as u64, n);
        let sk = codec.read_secret_key(&sk_bytes[..]).unwrap();
        let mut again = Vec::new();
        codec.write_secret_key(&mut again, &sk).unwrap();
        assert_eq!(again, sk_bytes, "{name}");
        for ct in [&f.ct_sk, &f.ct3] {
            let a = Decryptor::new(&f.ctx, &f.sk).unwrap().decrypt(ct).unwrap();
            let b = Decryptor::new(&f.ctx, &sk).unwrap().decrypt(ct).unwrap();
            assert_eq!(words(ring, a.poly()), words(ring, b.poly()), "{name}");
        }
    }
}

#[test]
fn seeded_objects_are_half_the_size_and_others_are_stored_whole() {
    for (name, params) in ckks_sets() {
        let f = ckks_fixture(&params, 3);
        let codec = &f.codec;
        let ratio = |obj_plain: u64, obj_seeded: u64| obj_seeded as f64 / obj_plain as f64;
        let pk = ratio(
            codec.size(&f.pk, Compression::NONE).unwrap(),
            codec.size(&f.pk, Compression::SEEDED).unwrap(),
        );
        let rlk = ratio(
            codec.size(&f.rlk, Compression::NONE).unwrap(),
            codec.size(&f.rlk, Compression::SEEDED).unwrap(),
        );
        let gk = ratio(
            codec.size(&f.gk, Compression::NONE).unwrap(),
            codec.size(&f.gk, Compression::SEEDED).unwrap(),
        );
        let ct = ratio(
            codec.size(&f.ct_sk, Compression::NONE).unwrap(),
            codec.size(&f.ct_sk, Compression::SEEDED).unwrap(),
        );
        for r in [pk, rlk, gk, ct] {
            assert!(r > 0.5 && r < 0.51, "{name}: seeded/plain = {r}");
        }
        // Packing shrinks by the primes' bit widths (every prime here is at most 61 bits).
        let packed = codec.size(&f.ct_sk, Compression::PACKED).unwrap();
        let plain = codec.size(&f.ct_sk, Compression::NONE).unwrap();
        assert!((packed as f64) < 0.96 * plain as f64, "{name}");
        // A public-key encryption and an evaluated ciphertext have no seeded half.
        for ct in [&f.ct_pk, &f.ct3, &f.ct_low] {
            assert_eq!(
                codec.size(ct, Compression::SEEDED).unwrap(),
                codec.size(ct, Compression::NONE).unwrap()
            );
            let info = inspect(&codec.to_bytes(ct, Compression::SEEDED).unwrap()[..]).unwrap();
            assert!(!info.seeded);
        }
    }
}

#[test]
fn several_objects_stream_through_one_reader_in_small_chunks() {
    let (_, params) = ckks_sets().remove(0);
    let f = ckks_fixture(&params, 11);
    let codec = &f.codec;
    let sp = SchemeParameters::from(&params);
    for chunk in [1usize, 7, 4096] {
        let mut w = TrickleWriter {
            out: Vec::new(),
            chunk,
        };
        let mut total = write_parameters(&mut w, &sp).unwrap();
        assert_eq!(total, parameters_size(&sp));
        total += codec
            .write(&mut w, &f.pk, Compression::SEEDED_PACKED)
            .unwrap();
        total += codec.write(&mut w, &f.rlk, Compression::SEEDED).unwrap();
        total += codec.write(&mut w, &f.gk, Compression::PACKED).unwrap();
        total += codec.write(&mut w, &f.ct_sk, Compression::NONE).unwrap();
        total += codec.write_secret_key(&mut w, &f.sk).unwrap();
        assert_eq!(total, w.out.len() as u64);

        let mut r = Trickle {
            data: &w.out,
            chunk,
        };
        let p = read_parameters(&mut r).unwrap();
        assert_eq!(p.digest(), codec.digest());
        let _pk: PublicKey = codec.read(&mut r).unwrap();
        let rlk: RelinearizationKey = codec.read(&mut r).unwrap();
        let gk: GaloisKeys = codec.read(&mut r).unwrap();
        let ct: ckks::Ciphertext = codec.read(&mut r).unwrap();
        let _sk = codec.read_secret_key(&mut r).unwrap();
        assert!(r.data.is_empty());
        let ring = f.ctx.ring();
        assert_ksk_eq(ring, rlk.key(), f.rlk.key());
        assert_eq!(gk.elements(), f.gk.elements());
        assert_ct_eq(ring, &ct, &f.ct_sk);
    }
}

#[test]
fn galois_keys_can_be_loaded_selectively() {
    let (_, params) = ckks_sets().remove(0);
    let f = ckks_fixture(&params, 5);
    let codec = &f.codec;
    let all = f.gk.elements();
    let wanted = all[1];
    for c in ALL {
        let bytes = codec.to_bytes(&f.gk, c).unwrap();
        let some = codec
            .read_galois_keys_filtered(&bytes[..], |g| g == wanted)
            .unwrap();
        assert_eq!(some.elements(), vec![wanted]);
        assert_ksk_eq(
            f.ctx.ring(),
            some.get(wanted).unwrap(),
            f.gk.get(wanted).unwrap(),
        );
        let none = codec
            .read_galois_keys_filtered(&bytes[..], |_| false)
            .unwrap();
        assert!(none.is_empty());
    }
}

#[test]
fn inspect_describes_every_kind() {
    let (_, params) = ckks_sets().remove(1);
    let f = ckks_fixture(&params, 2);
    let codec = &f.codec;
    let mut pbytes = Vec::new();
    write_parameters(&mut pbytes, &SchemeParameters::from(&params)).unwrap();
    let info = inspect(&pbytes[..]).unwrap();
    assert_eq!(info.kind, ObjectKind::Parameters);
    assert_eq!(info.params_digest, codec.digest());
    match &info.summary {
        Summary::Parameters {
            log_n,
            q_primes,
            p_primes,
            log_default_scale,
            insecure,
            ..
        } => {
            assert_eq!(*log_n, 13);
            assert_eq!(q_primes, params.q_primes());
            assert_eq!(p_primes, params.p_primes());
            assert_eq!(*log_default_scale, Some(40));
            assert!(*insecure);
        }
        other => panic!("{other:?}"),
    }
    assert!(info.to_string().contains("CKKS parameters"));

    let bytes = codec
        .to_bytes(&f.ct_sk, Compression::SEEDED_PACKED)
        .unwrap();
    let info = inspect(&bytes[..]).unwrap();
    assert_eq!(info.size, bytes.len() as u64);
    assert!(info.seeded && info.packed);
    assert_eq!(
        info.summary,
        Summary::CkksCiphertext {
            level: 10,
            components: 2,
            slots: f.ct_sk.slots(),
            scale: f.ct_sk.scale(),
            has_seed: true,
        }
    );
    let text = info.to_string();
    assert!(
        text.contains("level 10") && text.contains("seeded + packed"),
        "{text}"
    );

    let info = inspect(&codec.to_bytes(&f.ct3, Compression::NONE).unwrap()[..]).unwrap();
    assert!(matches!(
        info.summary,
        Summary::CkksCiphertext {
            components: 3,
            has_seed: false,
            ..
        }
    ));
    let info = inspect(&codec.to_bytes(&f.gk, Compression::NONE).unwrap()[..]).unwrap();
    assert_eq!(
        info.summary,
        Summary::GaloisKeys {
            elements: f.gk.elements()
        }
    );
    let info = inspect(&codec.to_bytes(&f.rlk, Compression::NONE).unwrap()[..]).unwrap();
    assert_eq!(info.summary, Summary::RelinearizationKey { dnum: 6 });
    let info = inspect(&codec.to_bytes(&f.pk, Compression::NONE).unwrap()[..]).unwrap();
    assert_eq!(info.summary, Summary::PublicKey);
    let info = inspect(&codec.to_bytes(&f.pt, Compression::PACKED).unwrap()[..]).unwrap();
    assert_eq!(info.kind, ObjectKind::CkksPlaintext);
    let mut sk = Vec::new();
    codec.write_secret_key(&mut sk, &f.sk).unwrap();
    assert_eq!(inspect(&sk[..]).unwrap().summary, Summary::SecretKey);
}

#[test]
fn parameters_round_trip() {
    for (_, params) in ckks_sets() {
        let sp = SchemeParameters::from(&params);
        let mut bytes = Vec::new();
        let n = write_parameters(&mut bytes, &sp).unwrap();
        assert_eq!(n, bytes.len() as u64);
        let back = read_parameters(&bytes[..]).unwrap();
        assert_eq!(back.digest(), sp.digest());
        assert_eq!(back.id(), sp.id());
        match back {
            SchemeParameters::Ckks(p) => assert_eq!(p.literal(), params.literal()),
            SchemeParameters::Bgv(_) => panic!("scheme changed"),
        }
    }
    // Different parameters have different digests.
    let sets = ckks_sets();
    let d: Vec<_> = sets
        .iter()
        .map(|(_, p)| SchemeParameters::from(p).digest())
        .collect();
    assert!(d[0] != d[1] && d[1] != d[2] && d[0] != d[2]);
}

/// Test vectors (also in `docs/format.md`): the parameter digest of a preset, a complete
/// parameter object, and the SHA-256 of serialised objects from fixed seeds. A change here is a
/// format change (or a change of key generation): bump `FORMAT_VERSION` and keep reading 1.
#[test]
fn golden_test_vectors() {
    use sha2::{Digest, Sha256};
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let params = rhea::params::CkksParametersLiteral::n13_logqp200_levels2()
        .build()
        .unwrap();
    let sp = SchemeParameters::from(&params);
    assert_eq!(
        hex(&sp.digest()),
        "7740ab538c82da475af8888da4d911a4bf29923fa7c3cb2b08698a9133edf820"
    );
    let mut p = Vec::new();
    write_parameters(&mut p, &sp).unwrap();
    assert_eq!(
        hex(&p),
        "524845414648450001000100000000007740ab538c82da475af8888da4d911a4bf29923fa7c3cb2b08698a\
         9133edf8203a00000000000000010d0300010001c0ffffffffff0f018004000001000001c0fdffff000000\
         0140020000000010030000000000009a9999999999094028000000009a23f8068a14f183ce38053a277b2e\
         23f52d9ebf90971c009791d67b8ebe20ea"
    );
    let f = ckks_fixture(&params, 7);
    for (bytes, len, sha) in [
        (
            f.codec.to_bytes(&f.pk, Compression::SEEDED_PACKED).unwrap(),
            206968,
            "da596c3dce0270e5ea92b8aef733741de03340565652742aeb7b99a536d935c5",
        ),
        (
            f.codec
                .to_bytes(&f.rlk, Compression::SEEDED_PACKED)
                .unwrap(),
            620666,
            "af44206bae68bfe2b2157c875e9dd09786184c07c2e6cb340c1e5d22dc3c703b",
        ),
        (
            f.codec
                .to_bytes(&f.ct_sk, Compression::SEEDED_PACKED)
                .unwrap(),
            144520,
            "2df354db58edce37bbd15b0584cec615d09b8a66e7a23657419a82bf9fa92ea7",
        ),
        (
            f.codec.to_bytes(&f.ct_sk, Compression::NONE).unwrap(),
            393352,
            "ca11e654bb594e38f6933df1d5b442362d3211cf7888d587b910cf6679bb4b7e",
        ),
    ] {
        assert_eq!(bytes.len(), len);
        assert_eq!(hex(&Sha256::digest(&bytes)), sha);
    }
}
