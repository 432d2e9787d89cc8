//! The fuzzing harness of `rhea::serial`'s readers, shared by the cargo-fuzz target
//! (`fuzz_targets/readers.rs`), the seed-corpus generator and the stable-Rust mutation loop.
//!
//! An input is one selector byte followed by the bytes given to a reader:
//!
//! - bits 0–3 pick the reader: 0 public key, 1 relinearisation key, 2 Galois keys, 3 Galois
//!   keys filtered, 4 CKKS plaintext, 5 CKKS ciphertext, 6 BGV plaintext, 7 BGV ciphertext,
//!   8 secret key, 9 parameters, 10 `inspect`, 11 a stream of objects (`inspect` until the
//!   input is used up), 12–15 as 0–3;
//! - bit 5 feeds the reader three bytes at a time (short reads);
//! - bit 6 uses the BGV parameters for the key readers (0–3, 8);
//! - bit 7 recomputes the SHA-256 trailer (and, for parameter objects, the header digest)
//!   before reading, so that mutations reach the field checks behind the checksum.
//!
//! The properties checked: no panic, and every accepted input re-encodes to exactly the same
//! bytes (the format is canonical).

use std::io::Read;
use std::sync::OnceLock;

use rhea::bgv::{self, BgvContext, BgvParametersLiteral};
use rhea::ckks::{self, CkksContext};
use rhea::params::CkksParametersLiteral;
use rhea::rlwe::{GaloisKeys, PublicKey, RelinearizationKey};
use rhea::serial::{inspect, read_parameters, write_parameters, Codec, Compression, SerialError};
use rhea::Device;
use sha2::{Digest, Sha256};
use rhea::unstable::HasRing;

/// The two tiny parameter sets the readers are fuzzed with.
pub struct Harness {
    /// CKKS, N = 32, 2 + 1 primes, dnum 2.
    pub ckks: Codec,
    /// BGV, N = 32, 2 + 1 primes, dnum 2, t = 257.
    pub bgv: Codec,
    /// The CKKS context.
    pub ckks_ctx: CkksContext,
    /// The BGV context.
    pub bgv_ctx: BgvContext,
}

/// The parameters of [`Harness`] (N = 32, insecure: for fuzzing only).
pub fn harness() -> &'static Harness {
    static H: OnceLock<Harness> = OnceLock::new();
    H.get_or_init(|| {
        let mut c = CkksParametersLiteral::n13_logqp200_levels2();
        c.log_n = 5;
        c.log_q = vec![40, 30];
        c.log_p = vec![40];
        c.log_default_scale = 25;
        c.dnum = 2;
        let c = c
            .insecure_allow_below_128_bits()
            .build()
            .expect("CKKS parameters");
        let b = BgvParametersLiteral {
            log_n: 5,
            log_q: vec![40, 30],
            log_p: vec![40],
            q: vec![],
            p: vec![],
            t: 257,
            log_t: 0,
            dnum: 2,
            secret: Default::default(),
            error_std_dev: 3.2,
            allow_insecure_below_128_bits: true,
        }
        .build()
        .expect("BGV parameters");
        let ckks_ctx = CkksContext::new(&c, Device::Cpu).expect("context");
        let bgv_ctx = BgvContext::new(&b, Device::Cpu).expect("context");
        Harness {
            ckks: Codec::from(&ckks_ctx),
            bgv: Codec::from(&bgv_ctx),
            ckks_ctx,
            bgv_ctx,
        }
    })
}

/// Recomputes the SHA-256 trailer.
pub fn reseal(bytes: &mut [u8]) {
    if bytes.len() < 32 {
        return;
    }
    let n = bytes.len() - 32;
    let d: [u8; 32] = Sha256::digest(&bytes[..n]).into();
    bytes[n..].copy_from_slice(&d);
}

/// For a parameter object: sets the header digest to the SHA-256 of the payload's canonical
/// part (all but its last byte), then reseals.
pub fn fix_parameter_digest(bytes: &mut [u8]) {
    if bytes.len() < 56 + 1 + 32 {
        return reseal(bytes);
    }
    let end = bytes.len() - 33;
    let d: [u8; 32] = Sha256::digest(&bytes[56..end]).into();
    bytes[16..48].copy_from_slice(&d);
    reseal(bytes);
}

struct Trickle<'a>(&'a [u8]);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = buf.len().min(3).min(self.0.len());
        buf[..k].copy_from_slice(&self.0[..k]);
        self.0 = &self.0[k..];
        Ok(k)
    }
}

/// The name of an outcome, for the stable loop's histogram.
pub fn label(r: &Result<(), SerialError>) -> &'static str {
    match r {
        Ok(()) => "accepted",
        Err(SerialError::Io(_)) => "Io",
        Err(SerialError::Truncated { .. }) => "Truncated",
        Err(SerialError::BadMagic { .. }) => "BadMagic",
        Err(SerialError::UnsupportedVersion { .. }) => "UnsupportedVersion",
        Err(SerialError::UnknownKind(_)) => "UnknownKind",
        Err(SerialError::WrongKind { .. }) => "WrongKind",
        Err(SerialError::ParametersMismatch { .. }) => "ParametersMismatch",
        Err(SerialError::ChecksumMismatch) => "ChecksumMismatch",
        Err(SerialError::Malformed(_)) => "Malformed",
        Err(SerialError::Unsupported(_)) => "Unsupported",
        Err(SerialError::Rhea(_)) => "Rhea",
        Err(_) => "other",
    }
}

fn compression_of(bytes: &[u8]) -> Compression {
    let flags = bytes.get(12).copied().unwrap_or(0);
    Compression {
        seeded: flags & 1 != 0,
        packed: flags & 2 != 0,
    }
}

/// Reads `input` as `T` (exactly) and, if accepted, checks that it re-encodes identically.
fn exact<T: rhea::serial::Serializable>(
    codec: &Codec,
    input: &[u8],
    trickle: bool,
) -> Result<(), SerialError> {
    let obj: T = if trickle {
        let mut r = Trickle(input);
        let obj = codec.read(&mut r)?;
        if !r.0.is_empty() {
            return Err(SerialError::Malformed("trailing bytes".into()));
        }
        obj
    } else {
        codec.from_bytes(input)?
    };
    let again = codec
        .to_bytes(&obj, compression_of(input))
        .expect("an accepted object writes");
    assert_eq!(
        again, input,
        "an accepted object must re-encode identically"
    );
    Ok(())
}

/// Runs one fuzz input (see the crate docs). Panics only on a bug.
pub fn run(data: &[u8]) -> Result<(), SerialError> {
    let Some((&sel, rest)) = data.split_first() else {
        return Ok(());
    };
    let h = harness();
    let reader = sel & 0x0f;
    let trickle = sel & 0x20 != 0;
    let key_codec = if sel & 0x40 != 0 { &h.bgv } else { &h.ckks };
    let mut owned;
    let input: &[u8] = if sel & 0x80 != 0 {
        owned = rest.to_vec();
        if reader == 9 {
            fix_parameter_digest(&mut owned);
        } else {
            reseal(&mut owned);
        }
        &owned
    } else {
        rest
    };
    match reader {
        0 | 12 => exact::<PublicKey>(key_codec, input, trickle),
        1 | 13 => exact::<RelinearizationKey>(key_codec, input, trickle),
        2 | 14 => exact::<GaloisKeys>(key_codec, input, trickle),
        3 | 15 => key_codec
            .read_galois_keys_filtered(input, |g| g % 4 == 1)
            .map(|k| assert!(k.elements().iter().all(|g| g % 4 == 1))),
        4 => exact::<ckks::Plaintext>(&h.ckks, input, trickle),
        5 => exact::<ckks::Ciphertext>(&h.ckks, input, trickle),
        6 => exact::<bgv::Plaintext>(&h.bgv, input, trickle),
        7 => exact::<bgv::Ciphertext>(&h.bgv, input, trickle),
        8 => {
            let sk = key_codec.read_secret_key(input)?;
            let mut again = Vec::new();
            key_codec
                .write_secret_key(&mut again, &sk)
                .expect("an accepted secret key writes");
            assert_eq!(again.len(), 56 + key_codec.params().ring().n() + 32);
            assert_eq!(again[..], input[..again.len()], "secret key re-encodes");
            Ok(())
        }
        9 => {
            let p = read_parameters(input)?;
            let mut again = Vec::new();
            write_parameters(&mut again, &p).expect("accepted parameters write");
            assert_eq!(again[..], input[..again.len()], "parameters re-encode");
            Ok(())
        }
        10 => {
            let info = inspect(input)?;
            assert!(info.size as usize <= input.len());
            Ok(())
        }
        _ => {
            let mut r = input;
            let mut total = 0u64;
            while !r.is_empty() {
                let info = inspect(&mut r)?;
                total += info.size;
            }
            assert_eq!(total as usize, input.len());
            Ok(())
        }
    }
}

/// Valid encodings of every object in every mode, each prefixed with the selector byte of its
/// reader: the seed corpus.
pub fn seed_corpus() -> Vec<Vec<u8>> {
    use rhea::serial::SchemeParameters;
    let h = harness();
    let modes = [
        Compression::NONE,
        Compression::SEEDED,
        Compression::PACKED,
        Compression::SEEDED_PACKED,
    ];
    let mut out = Vec::new();
    let mut push = |sel: u8, bytes: Vec<u8>| {
        let mut v = vec![sel];
        v.extend(bytes);
        out.push(v);
    };
    // CKKS.
    {
        let ctx = &h.ckks_ctx;
        let codec = &h.ckks;
        let mut kg = ckks::KeyGenerator::from_seed(ctx, [1; 32]);
        let sk = kg.secret_key().unwrap();
        let pk = kg.public_key(&sk).unwrap();
        let rlk = kg.relinearization_key(&sk).unwrap();
        let gk = kg.galois_keys(&sk, &[1, 2, -1], true).unwrap();
        let enc = ckks::Encoder::new(ctx).unwrap();
        let pt = enc.encode(&[1.0, -2.0, 3.5]).unwrap();
        let ct_sk = ckks::Encryptor::with_secret_key(ctx, &sk)
            .unwrap()
            .with_seed([2; 32])
            .encrypt(&pt)
            .unwrap();
        let ct_pk = ckks::Encryptor::new(ctx, &pk)
            .unwrap()
            .with_seed([3; 32])
            .encrypt(&pt)
            .unwrap();
        let ct3 = ckks::Evaluator::new(ctx)
            .mul_no_relin(&ct_sk, &ct_pk)
            .unwrap();
        for c in modes {
            push(0, codec.to_bytes(&pk, c).unwrap());
            push(1, codec.to_bytes(&rlk, c).unwrap());
            push(2, codec.to_bytes(&gk, c).unwrap());
            push(3, codec.to_bytes(&gk, c).unwrap());
            push(4, codec.to_bytes(&pt, c).unwrap());
            push(5, codec.to_bytes(&ct_sk, c).unwrap());
            push(5, codec.to_bytes(&ct_pk, c).unwrap());
            push(5, codec.to_bytes(&ct3, c).unwrap());
            push(10, codec.to_bytes(&ct_sk, c).unwrap());
        }
        let mut b = Vec::new();
        codec.write_secret_key(&mut b, &sk).unwrap();
        push(8, b);
        let mut b = Vec::new();
        write_parameters(&mut b, codec.params()).unwrap();
        push(9, b.clone());
        let mut stream = b;
        stream.extend(codec.to_bytes(&ct_sk, Compression::SEEDED_PACKED).unwrap());
        stream.extend(codec.to_bytes(&gk, Compression::SEEDED).unwrap());
        push(11, stream);
        let _ = SchemeParameters::from(ctx.params());
    }
    // BGV.
    {
        let ctx = &h.bgv_ctx;
        let codec = &h.bgv;
        let mut kg = bgv::KeyGenerator::from_seed(ctx, [4; 32]);
        let sk = kg.secret_key().unwrap();
        let pk = kg.public_key(&sk).unwrap();
        let rlk = kg.relinearization_key(&sk).unwrap();
        let gk = kg.galois_keys(&sk, &[1], true).unwrap();
        let enc = bgv::Encoder::new(ctx).unwrap();
        let pt = enc.encode(&[1, 2, 3, 250]).unwrap();
        let ct_sk = bgv::Encryptor::with_secret_key(ctx, &sk)
            .unwrap()
            .with_seed([5; 32])
            .encrypt(&pt)
            .unwrap();
        let ct_pk = bgv::Encryptor::new(ctx, &pk)
            .unwrap()
            .with_seed([6; 32])
            .encrypt(&pt)
            .unwrap();
        let ct3 = bgv::Evaluator::new(ctx)
            .mul_no_relin(&ct_sk, &ct_pk)
            .unwrap();
        for c in modes {
            push(0x40, codec.to_bytes(&pk, c).unwrap());
            push(0x41, codec.to_bytes(&rlk, c).unwrap());
            push(0x42, codec.to_bytes(&gk, c).unwrap());
            push(6, codec.to_bytes(&pt, c).unwrap());
            push(7, codec.to_bytes(&ct_sk, c).unwrap());
            push(7, codec.to_bytes(&ct_pk, c).unwrap());
            push(7, codec.to_bytes(&ct3, c).unwrap());
        }
        let mut b = Vec::new();
        codec.write_secret_key(&mut b, &sk).unwrap();
        push(0x48, b);
        let mut b = Vec::new();
        write_parameters(&mut b, codec.params()).unwrap();
        push(9, b);
    }
    out
}
