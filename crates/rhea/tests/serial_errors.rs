//! Bad input gives typed errors: truncated, corrupted, wrong-version, wrong-kind and
//! wrong-parameter objects, and every out-of-range field (with a valid checksum, so the field
//! check itself is what fires).

mod serial_common;

use rhea::ckks::{self};
use rhea::rlwe::{GaloisKeys, PublicKey, RelinearizationKey};
use rhea::serial::{
    read_parameters, write_parameters, Codec, Compression, ObjectKind, SchemeParameters,
    SerialError,
};
use rhea::unstable::HasRing;
use serial_common::*;

const HEADER: usize = 56;

fn fixture() -> CkksFixture {
    let (_, params) = ckks_sets().remove(2);
    ckks_fixture(&params, 21)
}

fn read_ct(codec: &Codec, bytes: &[u8]) -> Result<ckks::Ciphertext, SerialError> {
    codec.from_bytes(bytes)
}

#[test]
fn truncated_inputs_are_truncated_errors() {
    let f = fixture();
    for c in ALL {
        let bytes = f.codec.to_bytes(&f.ct_sk, c).unwrap();
        let len = bytes.len();
        for cut in [
            0,
            1,
            7,
            8,
            30,
            HEADER - 1,
            HEADER,
            HEADER + 1,
            HEADER + 20,
            len / 2,
            len - 33,
            len - 32,
            len - 1,
        ] {
            let err = read_ct(&f.codec, &bytes[..cut]).unwrap_err();
            assert!(
                matches!(err, SerialError::Truncated { .. }),
                "cut at {cut} of {len}: {err:?}"
            );
        }
        let bytes = f.codec.to_bytes(&f.gk, c).unwrap();
        for cut in [HEADER + 3, HEADER + 4 + 12, bytes.len() - 100] {
            let err = f.codec.from_bytes::<GaloisKeys>(&bytes[..cut]).unwrap_err();
            assert!(matches!(err, SerialError::Truncated { .. }), "{err:?}");
        }
    }
    let mut sk = Vec::new();
    f.codec.write_secret_key(&mut sk, &f.sk).unwrap();
    let err = f
        .codec
        .read_secret_key(&sk[..sk.len() - 40])
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(err, SerialError::Truncated { .. }), "{err:?}");
    let mut p = Vec::new();
    write_parameters(&mut p, f.codec.params()).unwrap();
    let err = read_parameters(&p[..p.len() - 1]).unwrap_err();
    assert!(matches!(err, SerialError::Truncated { .. }), "{err:?}");
}

#[test]
fn corrupted_data_fails_the_checksum() {
    let f = fixture();
    for c in ALL {
        let bytes = f.codec.to_bytes(&f.ct_sk, c).unwrap();
        // Flip the lowest bit of a word in the middle of c_0 (raw mode: the word stays below
        // q, so only the checksum can notice), a bit of the seed, and a bit of the trailer.
        let mid = if c.packed {
            bytes.len() - 32 - 1000
        } else {
            // an 8-byte-aligned word start inside the data
            let data_start = HEADER + 2 + 1 + 4 + 8 + 33;
            data_start + 8 * 100
        };
        for pos in [mid, HEADER + 2 + 1 + 4 + 8 + 1 + 5, bytes.len() - 5] {
            let mut bad = bytes.clone();
            bad[pos] ^= 1;
            let err = read_ct(&f.codec, &bad).unwrap_err();
            assert!(
                matches!(
                    err,
                    SerialError::ChecksumMismatch | SerialError::Malformed(_)
                ),
                "{c:?} flip at {pos}: {err:?}"
            );
            if !c.packed && pos != HEADER + 2 + 1 + 4 + 8 + 1 + 5 {
                assert!(matches!(err, SerialError::ChecksumMismatch), "{err:?}");
            }
        }
    }
    // The seed of a seeded key: regeneration gives another `a`, the checksum catches it.
    let mut bytes = f.codec.to_bytes(&f.pk, Compression::SEEDED).unwrap();
    bytes[HEADER] ^= 0x80;
    let err = f.codec.from_bytes::<PublicKey>(&bytes).unwrap_err();
    assert!(matches!(err, SerialError::ChecksumMismatch), "{err:?}");
}

#[test]
fn wrong_magic_version_kind_and_flags_are_typed() {
    let f = fixture();
    let bytes = f.codec.to_bytes(&f.pk, Compression::SEEDED_PACKED).unwrap();

    let mut bad = bytes.clone();
    bad[0] = b'X';
    let err = f.codec.from_bytes::<PublicKey>(&bad).unwrap_err();
    assert!(
        matches!(err, SerialError::BadMagic { found } if &found[1..] == b"HEAFHE\0"),
        "{err:?}"
    );

    let mut bad = bytes.clone();
    bad[8..10].copy_from_slice(&2u16.to_le_bytes());
    reseal(&mut bad);
    let err = f.codec.from_bytes::<PublicKey>(&bad).unwrap_err();
    assert!(
        matches!(
            err,
            SerialError::UnsupportedVersion {
                found: 2,
                supported: 1
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("version 2"));

    let mut bad = bytes.clone();
    bad[10..12].copy_from_slice(&99u16.to_le_bytes());
    reseal(&mut bad);
    let err = f.codec.from_bytes::<PublicKey>(&bad).unwrap_err();
    assert!(matches!(err, SerialError::UnknownKind(99)), "{err:?}");

    let err = f
        .codec
        .from_bytes::<RelinearizationKey>(&bytes)
        .unwrap_err();
    assert!(
        matches!(
            err,
            SerialError::WrongKind {
                expected: ObjectKind::RelinearizationKey,
                found: ObjectKind::PublicKey
            }
        ),
        "{err:?}"
    );
    // A secret key is not read by the generic reader, nor a public key as a secret key.
    let mut sk = Vec::new();
    f.codec.write_secret_key(&mut sk, &f.sk).unwrap();
    let err = f.codec.from_bytes::<PublicKey>(&sk).unwrap_err();
    assert!(matches!(err, SerialError::WrongKind { .. }), "{err:?}");
    let err = f.codec.read_secret_key(&bytes[..]).map(|_| ()).unwrap_err();
    assert!(matches!(err, SerialError::WrongKind { .. }), "{err:?}");

    for flags in [4u32, 0x8000_0000] {
        let mut bad = bytes.clone();
        bad[12..16].copy_from_slice(&flags.to_le_bytes());
        reseal(&mut bad);
        let err = f.codec.from_bytes::<PublicKey>(&bad).unwrap_err();
        assert!(matches!(err, SerialError::Malformed(_)), "{err:?}");
    }
    // A plaintext cannot be "seeded".
    let mut bad = f.codec.to_bytes(&f.pt, Compression::NONE).unwrap();
    bad[12] = 1;
    reseal(&mut bad);
    let err = f.codec.from_bytes::<ckks::Plaintext>(&bad).unwrap_err();
    assert!(matches!(err, SerialError::Malformed(_)), "{err:?}");
}

#[test]
fn objects_of_other_parameters_are_refused() {
    let sets = ckks_sets();
    let a = ckks_fixture(&sets[0].1, 1);
    let b = ckks_fixture(&sets[2].1, 1);
    let bytes = a.codec.to_bytes(&a.ct_sk, Compression::SEEDED).unwrap();
    let err = read_ct(&b.codec, &bytes).unwrap_err();
    match err {
        SerialError::ParametersMismatch { expected, found } => {
            assert_eq!(expected, b.codec.digest());
            assert_eq!(found, a.codec.digest());
        }
        other => panic!("{other:?}"),
    }
    let err = b.codec.read_secret_key(
        &{
            let mut v = Vec::new();
            a.codec.write_secret_key(&mut v, &a.sk).unwrap();
            v
        }[..],
    );
    assert!(matches!(err, Err(SerialError::ParametersMismatch { .. })));
    // Writing an object with a codec of other parameters is refused too.
    let err = b.codec.to_bytes(&a.rlk, Compression::NONE).unwrap_err();
    assert!(
        matches!(
            err,
            SerialError::Rhea(rhea::Error::ParametersMismatch { .. })
        ),
        "{err:?}"
    );
    let err = b.codec.write_secret_key(Vec::new(), &a.sk).unwrap_err();
    assert!(matches!(
        err,
        SerialError::Rhea(rhea::Error::ParametersMismatch { .. })
    ));
    // Same primes, another scale: still other parameters.
    let mut lit = sets[0].1.literal().clone();
    lit.log_default_scale = 39;
    let other = Codec::new(lit.build().unwrap(), rhea::Device::Cpu).unwrap();
    assert_ne!(other.digest(), a.codec.digest());
    assert!(matches!(
        read_ct(&other, &bytes),
        Err(SerialError::ParametersMismatch { .. })
    ));
}

/// Offsets in a CKKS ciphertext payload.
const LEVEL: usize = HEADER;
const COMPONENTS: usize = HEADER + 2;
const SLOTS: usize = HEADER + 3;
const SCALE: usize = HEADER + 7;
const HAS_SEED: usize = HEADER + 15;

fn edited(bytes: &[u8], at: usize, value: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at..at + value.len()].copy_from_slice(value);
    reseal(&mut b);
    b
}

fn assert_malformed<T: std::fmt::Debug>(r: Result<T, SerialError>, what: &str) {
    match r {
        Err(SerialError::Malformed(m)) => assert!(!m.is_empty()),
        other => panic!("{what}: expected Malformed, got {other:?}"),
    }
}

#[test]
fn out_of_range_fields_are_malformed_even_with_a_valid_checksum() {
    let f = fixture();
    let codec = &f.codec;
    let max_level = codec.params().max_level() as u16;
    for c in ALL {
        let ct = codec.to_bytes(&f.ct_sk, c).unwrap();
        assert_malformed(
            read_ct(codec, &edited(&ct, LEVEL, &(max_level + 1).to_le_bytes())),
            "level",
        );
        assert_malformed(
            read_ct(codec, &edited(&ct, COMPONENTS, &[4])),
            "4 components",
        );
        assert_malformed(
            read_ct(codec, &edited(&ct, COMPONENTS, &[1])),
            "1 component",
        );
        assert_malformed(
            read_ct(codec, &edited(&ct, COMPONENTS, &[3])),
            "seeded 3 components",
        );
        assert_malformed(
            read_ct(codec, &edited(&ct, SLOTS, &3u32.to_le_bytes())),
            "3 slots",
        );
        assert_malformed(
            read_ct(codec, &edited(&ct, SLOTS, &(1u32 << 20).to_le_bytes())),
            "2^20 slots",
        );
        assert_malformed(
            read_ct(
                codec,
                &edited(&ct, SCALE, &f64::NAN.to_bits().to_le_bytes()),
            ),
            "NaN scale",
        );
        assert_malformed(
            read_ct(
                codec,
                &edited(&ct, SCALE, &(-1.0f64).to_bits().to_le_bytes()),
            ),
            "negative scale",
        );
        assert_malformed(
            read_ct(codec, &edited(&ct, HAS_SEED, &[2])),
            "seed marker 2",
        );
        // The payload length in the header disagrees with the fields.
        let len = u64::from_le_bytes(ct[48..56].try_into().unwrap());
        let r = read_ct(codec, &edited(&ct, 48, &(len - 8).to_le_bytes()));
        assert!(matches!(r, Err(SerialError::Malformed(_))), "{r:?}");
        // Trailing bytes after the object.
        let mut long = ct.clone();
        long.push(0);
        assert_malformed(read_ct(codec, &long), "trailing byte");
        // A lower level with the same length fails the length check.
        if max_level > 0 {
            assert_malformed(
                read_ct(codec, &edited(&ct, LEVEL, &(max_level - 1).to_le_bytes())),
                "level - 1",
            );
        }
    }
    // A word that is not a canonical residue (raw mode: all-ones).
    let ct = codec.to_bytes(&f.ct_pk, Compression::NONE).unwrap();
    let data = HAS_SEED + 1;
    assert_malformed(
        read_ct(codec, &edited(&ct, data + 8 * 5, &[0xff; 8])),
        "non-canonical word",
    );
    // A stored c_1 that does not match its seed.
    let ct = codec.to_bytes(&f.ct_sk, Compression::NONE).unwrap();
    let n = codec.params().ring().n();
    let limbs = f.ct_sk.level() + 1;
    let c1 = HAS_SEED + 1 + 32 + 8 * n * limbs;
    let word = u64::from_le_bytes(ct[c1..c1 + 8].try_into().unwrap());
    let r = read_ct(codec, &edited(&ct, c1, &(word ^ 1).to_le_bytes()));
    match r {
        Err(SerialError::Malformed(m)) => assert!(m.contains("seed"), "{m}"),
        other => panic!("{other:?}"),
    }
    // Packed: non-zero padding or a value ≥ q in a packed limb.
    let ct = codec.to_bytes(&f.ct_pk, Compression::PACKED).unwrap();
    let q0 = codec.params().ring().q().moduli()[0].value();
    let w = 64 - q0.leading_zeros();
    let mut v = (q0 + 1).to_le_bytes().to_vec(); // first word := q0 + 1 (fits in w bits)
    v.truncate((w as usize).div_ceil(8));
    let mut bad = ct.clone();
    let data = HAS_SEED + 1;
    // Overwrite the low w bits of the first packed word, keeping the bits of the next word.
    let mut acc = u128::from_le_bytes({
        let mut b = [0u8; 16];
        b.copy_from_slice(&bad[data..data + 16]);
        b
    });
    acc = (acc & !((1u128 << w) - 1)) | (q0 as u128 + 1);
    bad[data..data + 16].copy_from_slice(&acc.to_le_bytes());
    reseal(&mut bad);
    assert_malformed(read_ct(codec, &bad), "packed word ≥ q");
}

#[test]
fn key_and_secret_fields_are_checked() {
    let f = fixture();
    let codec = &f.codec;
    // Key-switching keys: a wrong digit count.
    let rlk = codec.to_bytes(&f.rlk, Compression::SEEDED).unwrap();
    assert_malformed(
        codec.from_bytes::<RelinearizationKey>(&edited(&rlk, HEADER, &5u16.to_le_bytes())),
        "dnum",
    );
    // Galois keys: an even element, an element ≥ 2N, unsorted elements, too many keys.
    let gk = codec.to_bytes(&f.gk, Compression::SEEDED).unwrap();
    let two_n = 2 * codec.params().ring().n() as u64;
    let e0 = HEADER + 4;
    // (Not a Galois element: the typed error of the library, as when generating.)
    for g in [4u64, two_n + 1] {
        let r = codec.from_bytes::<GaloisKeys>(&edited(&gk, e0, &g.to_le_bytes()));
        assert!(
            matches!(
                r,
                Err(SerialError::Rhea(rhea::Error::InvalidGaloisElement { element, .. }))
                    if element == g
            ),
            "{g}: {r:?}"
        );
    }
    let els = f.gk.elements();
    let mut swapped = gk.clone();
    swapped[e0..e0 + 8].copy_from_slice(&els[1].to_le_bytes());
    swapped[e0 + 8..e0 + 16].copy_from_slice(&els[0].to_le_bytes());
    reseal(&mut swapped);
    assert_malformed(codec.from_bytes::<GaloisKeys>(&swapped), "unsorted");
    assert_malformed(
        codec.from_bytes::<GaloisKeys>(&edited(&gk, HEADER, &u32::MAX.to_le_bytes())),
        "count",
    );
    assert_malformed(
        codec.from_bytes::<GaloisKeys>(&edited(&gk, HEADER, &2u32.to_le_bytes())),
        "count vs length",
    );
    // Secret key: a coefficient outside {-1, 0, 1}; the wrong Hamming weight (sparse set).
    let mut sk = Vec::new();
    codec.write_secret_key(&mut sk, &f.sk).unwrap();
    let bad = edited(&sk, HEADER + 3, &[2]);
    assert_malformed(codec.read_secret_key(&bad[..]).map(|_| ()), "coefficient 2");
    let zero_at = sk[HEADER..sk.len() - 32]
        .iter()
        .position(|&b| b == 0)
        .unwrap()
        + HEADER;
    let bad = edited(&sk, zero_at, &[1]);
    assert_malformed(
        codec.read_secret_key(&bad[..]).map(|_| ()),
        "Hamming weight",
    );
}

#[test]
fn parameter_objects_are_checked() {
    let (_, params) = ckks_sets().remove(0);
    let sp = SchemeParameters::from(&params);
    let mut bytes = Vec::new();
    write_parameters(&mut bytes, &sp).unwrap();
    // A field edit without fixing the digest: the digest no longer matches.
    let bad = edited(&bytes, HEADER + 1, &[12]);
    assert!(matches!(
        read_parameters(&bad[..]),
        Err(SerialError::ParametersMismatch { .. })
    ));
    // With the digest fixed, the library's validation speaks (dnum = 0).
    let fix = |b: &mut Vec<u8>| {
        let end = b.len() - 32 - 1; // canonical encoding = payload without the opt-in byte
        let d: [u8; 32] = <sha2::Sha256 as sha2::Digest>::digest(&b[HEADER..end]).into();
        b[16..48].copy_from_slice(&d);
        reseal(b);
    };
    let nprimes = params.q_primes().len() + params.p_primes().len();
    let dnum_at = HEADER + 6 + 8 * nprimes;
    let mut bad = bytes.clone();
    bad[dnum_at..dnum_at + 2].copy_from_slice(&0u16.to_le_bytes());
    fix(&mut bad);
    assert!(
        matches!(
            read_parameters(&bad[..]),
            Err(SerialError::Rhea(rhea::Error::InvalidParameters(_)))
        ),
        "{:?}",
        read_parameters(&bad[..])
    );
    // A prime that is not prime.
    let mut bad = bytes.clone();
    bad[HEADER + 6..HEADER + 14].copy_from_slice(&(params.q_primes()[0] + 2).to_le_bytes());
    fix(&mut bad);
    assert!(matches!(
        read_parameters(&bad[..]),
        Err(SerialError::Rhea(_))
    ));
    // Unknown scheme, log N out of range, too many primes, bad secret code, opt-in byte 2.
    for (at, v) in [
        (HEADER, vec![3u8]),
        (HEADER + 1, vec![18u8]),
        (HEADER + 1, vec![1u8]),
        (HEADER + 2, 300u16.to_le_bytes().to_vec()),
        (HEADER + 2, 0u16.to_le_bytes().to_vec()),
        (dnum_at + 2, vec![7u8]),
        (bytes.len() - 33, vec![2u8]),
    ] {
        let mut bad = bytes.clone();
        bad[at..at + v.len()].copy_from_slice(&v);
        fix(&mut bad);
        assert_malformed(read_parameters(&bad[..]), &format!("field at {at}"));
    }
    // Insecure parameters without the recorded opt-in are refused by validation.
    let (_, deep) = ckks_sets().remove(1);
    let mut bytes = Vec::new();
    write_parameters(&mut bytes, &SchemeParameters::from(&deep)).unwrap();
    let mut bad = bytes.clone();
    let at = bad.len() - 33;
    bad[at] = 0;
    reseal(&mut bad);
    assert!(matches!(
        read_parameters(&bad[..]),
        Err(SerialError::Rhea(rhea::Error::InsecureParameters { .. }))
    ));
    // A key file is not a parameter file.
    let f = fixture();
    let pk = f.codec.to_bytes(&f.pk, Compression::NONE).unwrap();
    assert!(matches!(
        read_parameters(&pk[..]),
        Err(SerialError::WrongKind { .. })
    ));
}

#[test]
fn io_errors_other_than_eof_are_io_errors() {
    struct Failing;
    impl std::io::Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
    }
    impl std::io::Write for Failing {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let f = fixture();
    assert!(matches!(
        f.codec.read::<PublicKey, _>(Failing),
        Err(SerialError::Io(_))
    ));
    assert!(matches!(
        f.codec.write(Failing, &f.pk, Compression::NONE),
        Err(SerialError::Io(_))
    ));
}
