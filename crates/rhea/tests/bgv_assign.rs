//! The BGV evaluator's in-place forms (`*_assign`) give exactly the words, factor and noise
//! bound of their value-returning twins (compared through the serialised ciphertext, which
//! carries all three), and leave the operand unchanged when they fail; on the CPU and (ignored
//! without one) on the GPU.

use rhea::bgv::{BgvContext, Ciphertext, Encoder, Encryptor, Evaluator, KeyGenerator};
use rhea::params::BgvParametersLiteral;
use rhea::serial::{Codec, Compression};
use rhea::{Device, Error};

fn assign_forms_match_value_forms(device: Device) {
    let params = BgvParametersLiteral::he_booster_n13_logqp218()
        .build()
        .unwrap();
    let ctx = BgvContext::new(&params, device).unwrap();
    let codec = Codec::new(params.clone(), device).unwrap();
    let bytes = |ct: &Ciphertext| codec.to_bytes(ct, Compression::NONE).unwrap();
    let same = |what: &str, got: &Ciphertext, want: &Ciphertext| {
        assert_eq!(got.level(), want.level(), "{what}: level");
        assert!(
            bytes(got) == bytes(want),
            "{what}: in-place and value forms differ"
        );
    };
    let mut keygen = KeyGenerator::from_seed(&ctx, [4; 32]);
    let sk = keygen.secret_key().unwrap();
    let pk = keygen.public_key(&sk).unwrap();
    let rlk = keygen.relinearization_key(&sk).unwrap();
    let gk = keygen.galois_keys(&sk, &[1, -2], true).unwrap();
    let e = Evaluator::new(&ctx)
        .with_relinearization_key(rlk)
        .unwrap()
        .with_galois_keys(gk)
        .unwrap();
    let encoder = Encoder::new(&ctx).unwrap();
    let encryptor = Encryptor::new(&ctx, &pk).unwrap().with_seed([6; 32]);
    let n = encoder.slots() as u64;
    let xs: Vec<u64> = (0..n).map(|i| (i * 37 + 5) % 1000).collect();
    let ys: Vec<u64> = (0..n).map(|i| (i * 11 + 3) % 500).collect();
    let x = encryptor.encrypt(&encoder.encode(&xs).unwrap()).unwrap();
    let y = encryptor.encrypt(&encoder.encode(&ys).unwrap()).unwrap();
    let pt = encoder.encode(&ys).unwrap();

    let mut a = x.clone();
    e.add_assign(&mut a, &y).unwrap();
    same("add", &a, &e.add(&x, &y).unwrap());
    let mut a = x.clone();
    e.sub_assign(&mut a, &y).unwrap();
    same("sub", &a, &e.sub(&x, &y).unwrap());
    let mut a = x.clone();
    e.neg_assign(&mut a).unwrap();
    same("neg", &a, &e.neg(&x).unwrap());
    let mut a = x.clone();
    e.add_const_assign(&mut a, 12345).unwrap();
    same("add_const", &a, &e.add_const(&x, 12345).unwrap());
    let mut a = x.clone();
    e.sub_const_assign(&mut a, -77).unwrap();
    same("sub_const", &a, &e.sub_const(&x, -77).unwrap());
    let mut a = x.clone();
    e.mul_const_assign(&mut a, -3).unwrap();
    same("mul_const", &a, &e.mul_const(&x, -3).unwrap());
    let mut a = x.clone();
    e.add_plain_assign(&mut a, &pt).unwrap();
    same("add_plain", &a, &e.add_plain(&x, &pt).unwrap());
    let mut a = x.clone();
    e.sub_plain_assign(&mut a, &pt).unwrap();
    same("sub_plain", &a, &e.sub_plain(&x, &pt).unwrap());
    let mut a = x.clone();
    e.mul_plain_assign(&mut a, &pt).unwrap();
    same("mul_plain", &a, &e.mul_plain(&x, &pt).unwrap());
    let mut a = x.clone();
    e.mul_assign(&mut a, &y).unwrap();
    let p = e.mul(&x, &y).unwrap();
    same("mul", &a, &p);
    let mut a = x.clone();
    e.square_assign(&mut a).unwrap();
    same("square", &a, &e.square(&x).unwrap());
    let mut a = x.clone();
    e.rotate_rows_assign(&mut a, -2).unwrap();
    same("rotate_rows", &a, &e.rotate_rows(&x, -2).unwrap());
    let mut a = x.clone();
    e.rotate_columns_assign(&mut a).unwrap();
    same("rotate_columns", &a, &e.rotate_columns(&x).unwrap());
    let mut a = x.clone();
    e.mod_switch_assign(&mut a).unwrap();
    same("mod_switch", &a, &e.mod_switch(&x).unwrap());
    let t = e.mul_no_relin(&x, &y).unwrap();
    let mut a = t.clone();
    e.relinearize_assign(&mut a).unwrap();
    same("relinearize", &a, &e.relinearize(&t).unwrap());

    // Different levels (and so factors) take the aligning path and still agree.
    let mut a = p.clone();
    e.add_assign(&mut a, &x).unwrap();
    same("add across levels", &a, &e.add(&p, &x).unwrap());
    let mut a = x.clone();
    e.sub_assign(&mut a, &p).unwrap();
    same("sub across levels", &a, &e.sub(&x, &p).unwrap());

    // An accumulation gives the value chain's words.
    let mut acc = x.clone();
    let mut want = x.clone();
    for k in 2..6 {
        e.add_assign(&mut acc, &y).unwrap();
        e.mul_const_assign(&mut acc, k).unwrap();
        want = e.mul_const(&e.add(&want, &y).unwrap(), k).unwrap();
    }
    same("accumulation", &acc, &want);

    // Failures leave the operand unchanged.
    let mut a = x.clone();
    let before = bytes(&a);
    let bottom = e.mod_switch_to_level(&x, 0).unwrap();
    assert!(matches!(
        e.mod_switch_assign(&mut bottom.clone()),
        Err(Error::LevelUnderflow { .. })
    ));
    assert!(Evaluator::new(&ctx).rotate_rows_assign(&mut a, 1).is_err()); // no Galois keys
    assert_eq!(bytes(&a), before);
}

#[test]
fn assign_forms_match_value_forms_on_the_cpu() {
    assign_forms_match_value_forms(Device::Cpu);
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn assign_forms_match_value_forms_on_the_gpu() {
    let device = Device::Cuda(0);
    if let Err(e) = device.check_supported() {
        panic!("this test needs a CUDA GPU: {e}");
    }
    let before = device.fused_fallbacks();
    assign_forms_match_value_forms(device);
    assert_eq!(device.fused_fallbacks(), before, "a fused path fell back");
}
