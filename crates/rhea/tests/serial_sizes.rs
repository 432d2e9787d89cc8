//! Sizes at N = 2^16 (`n16_logqp1440_levels24`: 25 Q primes of 60 + 24×40 bits, 7 P primes of
//! 60 bits, dnum = 3): a fresh ciphertext, the relinearisation key and one Galois key, plain vs
//! seeded vs seeded + packed. Slow (key generation at N = 2^16), so ignored by default:
//!
//! ```text
//! cargo test --release -p rhea --test serial_sizes -- --ignored --nocapture
//! ```

mod serial_common;

use rhea::ckks::{self, CkksContext, Encoder, Encryptor, KeyGenerator};
use rhea::params::CkksParametersLiteral;
use rhea::rlwe::{GaloisKeys, RelinearizationKey};
use rhea::serial::{Codec, Compression, Serializable};
use rhea::unstable::HasRing;
use rhea::Device;
use serial_common::*;

/// Counts bytes.
struct Count(u64);

impl std::io::Write for Count {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn row<T: Serializable>(codec: &Codec, name: &str, obj: &T) -> [u64; 4] {
    let sizes = [
        Compression::NONE,
        Compression::SEEDED,
        Compression::PACKED,
        Compression::SEEDED_PACKED,
    ]
    .map(|c| {
        let s = codec.size(obj, c).unwrap();
        let mut w = Count(0);
        assert_eq!(codec.write(&mut w, obj, c).unwrap(), s);
        assert_eq!(w.0, s);
        s
    });
    let mib = |x: u64| x as f64 / (1 << 20) as f64;
    println!(
        "| {name:<22} | {:>9.3} | {:>9.3} ({:.4}×) | {:>9.3} ({:.4}×) | {:>9.3} ({:.4}×) |",
        mib(sizes[0]),
        mib(sizes[1]),
        sizes[1] as f64 / sizes[0] as f64,
        mib(sizes[2]),
        sizes[2] as f64 / sizes[0] as f64,
        mib(sizes[3]),
        sizes[3] as f64 / sizes[0] as f64,
    );
    sizes
}

#[test]
#[ignore = "N = 2^16 key generation; run with --ignored --nocapture to print the sizes table"]
fn sizes_at_n16() {
    let params = CkksParametersLiteral::n16_logqp1440_levels24()
        .build()
        .unwrap();
    let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [1; 32]);
    let sk = keygen.secret_key().unwrap();
    let pk = keygen.public_key(&sk).unwrap();
    let rlk = keygen.relinearization_key(&sk).unwrap();
    let gk = keygen.galois_keys(&sk, &[1], false).unwrap();
    let pt = Encoder::new(&ctx).unwrap().encode(&[1.0, 2.0]).unwrap();
    let ct_sk = Encryptor::with_secret_key(&ctx, &sk)
        .unwrap()
        .encrypt(&pt)
        .unwrap();
    let ct_pk = Encryptor::new(&ctx, &pk).unwrap().encrypt(&pt).unwrap();
    let codec = Codec::from(&ctx);
    println!("{params}");
    println!(
        "| object                 | plain MiB | seeded MiB            | packed MiB            | \
         seeded+packed MiB     |"
    );
    println!("|---|---|---|---|---|");
    let ct = row(&codec, "fresh ciphertext (sk)", &ct_sk);
    row(&codec, "fresh ciphertext (pk)", &ct_pk);
    let r = row(&codec, "relinearization key", &rlk);
    let g = row(&codec, "Galois key (1 element)", &gk);
    row(&codec, "public key", &pk);
    for s in [ct, r, g] {
        assert!(s[1] as f64 <= 0.52 * s[0] as f64);
        assert!(s[3] < s[1]);
    }
    // The seeded + packed forms load back bit for bit at this size too.
    let ring = ctx.ring();
    let bytes = codec.to_bytes(&rlk, Compression::SEEDED_PACKED).unwrap();
    let back: RelinearizationKey = codec.from_bytes(&bytes).unwrap();
    for (a, b) in back.key().parts().iter().zip(rlk.key().parts()) {
        assert_eq!(all_words(ring, a), all_words(ring, b));
    }
    let bytes = codec.to_bytes(&gk, Compression::SEEDED_PACKED).unwrap();
    let back: GaloisKeys = codec.from_bytes(&bytes).unwrap();
    assert_eq!(back.elements(), gk.elements());
    let bytes = codec.to_bytes(&ct_sk, Compression::SEEDED_PACKED).unwrap();
    let back: ckks::Ciphertext = codec.from_bytes(&bytes).unwrap();
    assert_eq!(
        all_words(ring, back.parts()),
        all_words(ring, ct_sk.parts())
    );
}
