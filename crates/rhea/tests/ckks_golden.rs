//! Golden digest: seeded key generation and a short operation sequence must give exactly these
//! ciphertext words. Any change to sampling, prime generation, NTT tables, key switching,
//! rescaling, encoding or the operation semantics changes the digest and fails this test; if the
//! change is intended, recompute the digest and say why in the commit.

use rhea::ckks::{Ciphertext, CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator};
use rhea::params::CkksParametersLiteral;
use rhea::unstable::HasRing;
use rhea::Device;
use sha2::{Digest, Sha256};

const GOLDEN: &str = "c23169efe7705e5055a1e23d0ca484893972f81970a7d2d5b4455e0c95bfce8d";

fn digest(ctx: &CkksContext, ct: &Ciphertext) -> String {
    let mut h = Sha256::new();
    h.update((ct.level() as u64).to_le_bytes());
    h.update(ct.scale().to_bits().to_le_bytes());
    for p in ct.parts() {
        for w in ctx.ring().download(p).unwrap() {
            h.update(w.to_le_bytes());
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn seeded_sequence_has_the_committed_digest() {
    let params = CkksParametersLiteral::test_n13_levels10_insecure()
        .build()
        .unwrap();
    let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [42; 32]);
    let sk = keygen.secret_key().unwrap();
    let pk = keygen.public_key(&sk).unwrap();
    let rlk = keygen.relinearization_key(&sk).unwrap();
    let gk = keygen.galois_keys(&sk, &[1], false).unwrap();
    let encoder = Encoder::new(&ctx).unwrap();
    let encryptor = Encryptor::new(&ctx, &pk).unwrap().with_seed([7; 32]);
    let eval = Evaluator::new(&ctx)
        .with_relinearization_key(rlk)
        .unwrap()
        .with_galois_keys(gk)
        .unwrap();
    // Inputs from integer arithmetic only (no libm), so they are the same everywhere.
    let n = encoder.slots();
    let x: Vec<f64> = (0..n)
        .map(|i| ((i * 7919) % 2001) as f64 / 1000.0 - 1.0)
        .collect();
    let y: Vec<f64> = (0..n)
        .map(|i| ((i * 104_729) % 1999) as f64 / 999.0 - 1.0)
        .collect();
    let cx = encryptor.encrypt(&encoder.encode(&x).unwrap()).unwrap();
    let cy = encryptor.encrypt(&encoder.encode(&y).unwrap()).unwrap();
    // x·y + rotate(x, 1), then times 0.5 and squared.
    let xy = eval.mul(&cx, &cy).unwrap();
    let r = eval.rotate(&cx, 1).unwrap();
    let s = eval.add(&xy, &r).unwrap();
    let h = eval.mul_const(&s, 0.5).unwrap();
    let out = eval.square(&h).unwrap();
    assert_eq!(out.level(), 7);
    // The sequence is meaningful: it decrypts to ((x·y + rot(x, 1)) / 2)².
    let dec = encoder
        .decode(&Decryptor::new(&ctx, &sk).unwrap().decrypt(&out).unwrap())
        .unwrap();
    let err = (0..n)
        .map(|i| {
            let v = (x[i] * y[i] + x[(i + 1) % n]) / 2.0;
            (dec[i] - v * v).abs()
        })
        .fold(0.0f64, f64::max);
    assert!(err < 2f64.powi(-20), "error {err:e}");
    let got = digest(&ctx, &out);
    assert_eq!(got, GOLDEN, "golden digest changed");
}
