//! The evaluator's in-place forms (`*_assign`) give exactly the words of their value-returning
//! twins, on the CPU and (ignored without one) on the GPU, and leave the operand unchanged when
//! they fail.

use rhea::ckks::{Ciphertext, CkksContext, Encoder, Encryptor, Evaluator, KeyGenerator};
use rhea::params::CkksParametersLiteral;
use rhea::serial::{Codec, Compression};
use rhea::{Device, Error};

struct Fixture {
    codec: Codec,
    encoder: Encoder,
    eval: Evaluator,
    manual: Evaluator,
    x: Ciphertext,
    y: Ciphertext,
}

fn fixture(device: Device) -> Fixture {
    let params = CkksParametersLiteral::n13_logqp200_levels2()
        .build()
        .unwrap();
    let ctx = CkksContext::new(&params, device).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [7; 32]);
    let sk = keygen.secret_key().unwrap();
    let pk = keygen.public_key(&sk).unwrap();
    let rlk = std::sync::Arc::new(keygen.relinearization_key(&sk).unwrap());
    let gk = keygen.galois_keys(&sk, &[1, -3], true).unwrap();
    let encoder = Encoder::new(&ctx).unwrap();
    let eval = Evaluator::new(&ctx)
        .with_relinearization_key(rlk.clone())
        .unwrap()
        .with_galois_keys(gk)
        .unwrap();
    let manual = Evaluator::new(&ctx)
        .with_relinearization_key(rlk)
        .unwrap()
        .with_auto_rescale(false);
    let encryptor = Encryptor::new(&ctx, &pk).unwrap().with_seed([9; 32]);
    let n = encoder.slots();
    let xs: Vec<f64> = (0..n)
        .map(|i| ((i * 37 % 101) as f64 / 50.0) - 1.0)
        .collect();
    let ys: Vec<f64> = (0..n)
        .map(|i| ((i * 53 % 89) as f64 / 44.0) - 1.0)
        .collect();
    let x = encryptor.encrypt(&encoder.encode(&xs).unwrap()).unwrap();
    let y = encryptor.encrypt(&encoder.encode(&ys).unwrap()).unwrap();
    Fixture {
        codec: Codec::new(params, device).unwrap(),
        encoder,
        eval,
        manual,
        x,
        y,
    }
}

impl Fixture {
    fn bytes(&self, ct: &Ciphertext) -> Vec<u8> {
        self.codec.to_bytes(ct, Compression::NONE).unwrap()
    }

    fn same(&self, what: &str, got: &Ciphertext, want: &Ciphertext) {
        assert_eq!(got.level(), want.level(), "{what}: level");
        assert_eq!(got.scale(), want.scale(), "{what}: scale");
        assert!(
            self.bytes(got) == self.bytes(want),
            "{what}: the in-place form's words differ from the value form's"
        );
    }

    fn copy(&self, ct: &Ciphertext) -> Ciphertext {
        ct.try_clone().unwrap()
    }
}

fn assign_forms_match_value_forms(device: Device) {
    let f = fixture(device);
    let (e, x, y) = (&f.eval, &f.x, &f.y);
    let pt = f.encoder.encode(&[0.25, -0.5, 0.75]).unwrap();

    let mut a = f.copy(x);
    e.add_assign(&mut a, y).unwrap();
    f.same("add", &a, &e.add(x, y).unwrap());
    let mut a = f.copy(x);
    e.sub_assign(&mut a, y).unwrap();
    f.same("sub", &a, &e.sub(x, y).unwrap());
    let mut a = f.copy(x);
    e.neg_assign(&mut a).unwrap();
    f.same("neg", &a, &e.neg(x).unwrap());
    let mut a = f.copy(x);
    e.add_plain_assign(&mut a, &pt).unwrap();
    f.same("add_plain", &a, &e.add_plain(x, &pt).unwrap());
    let mut a = f.copy(x);
    e.sub_plain_assign(&mut a, &pt).unwrap();
    f.same("sub_plain", &a, &e.sub_plain(x, &pt).unwrap());
    let mut a = f.copy(x);
    e.add_const_assign(&mut a, 0.375).unwrap();
    f.same("add_const", &a, &e.add_const(x, 0.375).unwrap());
    let mut a = f.copy(x);
    e.sub_const_assign(&mut a, 0.375).unwrap();
    f.same("sub_const", &a, &e.sub_const(x, 0.375).unwrap());
    let mut a = f.copy(x);
    e.mul_int_assign(&mut a, -7).unwrap();
    f.same("mul_int", &a, &e.mul_int(x, -7).unwrap());
    let mut a = f.copy(x);
    e.mul_const_assign(&mut a, 1.75).unwrap();
    f.same("mul_const (auto)", &a, &e.mul_const(x, 1.75).unwrap());
    let mut a = f.copy(x);
    f.manual.mul_const_assign(&mut a, -0.625).unwrap();
    f.same(
        "mul_const (manual)",
        &a,
        &f.manual.mul_const(x, -0.625).unwrap(),
    );
    let mut a = f.copy(x);
    e.mul_const_with_scale_assign(&mut a, 3.0, 1024.0).unwrap();
    f.same(
        "mul_const_with_scale",
        &a,
        &e.mul_const_with_scale(x, 3.0, 1024.0).unwrap(),
    );
    let mut a = f.copy(x);
    e.mul_plain_assign(&mut a, &pt).unwrap();
    f.same("mul_plain", &a, &e.mul_plain(x, &pt).unwrap());
    let mut a = f.copy(x);
    e.mul_assign(&mut a, y).unwrap();
    f.same("mul", &a, &e.mul(x, y).unwrap());
    let mut a = f.copy(x);
    e.square_assign(&mut a).unwrap();
    f.same("square", &a, &e.square(x).unwrap());
    let mut a = f.copy(x);
    e.rotate_assign(&mut a, -3).unwrap();
    f.same("rotate", &a, &e.rotate(x, -3).unwrap());
    let mut a = f.copy(x);
    e.conjugate_assign(&mut a).unwrap();
    f.same("conjugate", &a, &e.conjugate(x).unwrap());
    let mut a = f.manual.mul_no_relin(x, y).unwrap();
    let t = f.copy(&a);
    f.manual.relinearize_assign(&mut a).unwrap();
    f.same("relinearize", &a, &f.manual.relinearize(&t).unwrap());
    f.manual.rescale_assign(&mut a).unwrap();
    f.same(
        "rescale",
        &a,
        &f.manual
            .rescale(&f.manual.relinearize(&t).unwrap())
            .unwrap(),
    );
    let mut a = f.copy(x);
    e.drop_to_level_assign(&mut a, 1).unwrap();
    f.same("drop_to_level", &a, &e.drop_to_level(x, 1).unwrap());
    e.drop_to_level_assign(&mut a, 0).unwrap();
    f.same("drop_to_level twice", &a, &e.drop_to_level(x, 0).unwrap());

    // Operands at different levels and scales take the aligning path and still agree.
    let low = e.mul(x, y).unwrap();
    let mut a = f.copy(&low);
    e.add_assign(&mut a, x).unwrap();
    f.same("add across levels", &a, &e.add(&low, x).unwrap());
    let mut a = f.copy(x);
    e.sub_assign(&mut a, &low).unwrap();
    f.same("sub across levels", &a, &e.sub(x, &low).unwrap());
    let mut a = f.copy(&low);
    e.mul_plain_assign(&mut a, &pt).unwrap();
    f.same(
        "mul_plain, plaintext above",
        &a,
        &e.mul_plain(&low, &pt).unwrap(),
    );

    // An accumulation gives the value chain's words.
    let mut acc = f.copy(x);
    let mut want = f.copy(x);
    for k in 1..=4 {
        e.add_assign(&mut acc, y).unwrap();
        e.mul_int_assign(&mut acc, k).unwrap();
        want = e.mul_int(&e.add(&want, y).unwrap(), k).unwrap();
    }
    f.same("accumulation", &acc, &want);

    // Failures leave the operand unchanged.
    let before = f.bytes(x);
    let mut a = f.copy(x);
    let bottom = e.drop_to_level(x, 0).unwrap();
    let mut b = f.copy(&bottom);
    assert!(matches!(
        e.rescale_assign(&mut b),
        Err(Error::LevelUnderflow { .. })
    ));
    assert_eq!(f.bytes(&b), f.bytes(&bottom));
    assert!(e.drop_to_level_assign(&mut a, 5).is_err());
    assert!(f.manual.rotate_assign(&mut a, 1).is_err()); // no Galois keys
    assert!(e.add_const_assign(&mut a, f64::NAN).is_err());
    assert!(matches!(
        e.mul_const_with_scale_assign(&mut a, 2.0, 0.5),
        Err(Error::InvalidScale { .. })
    ));
    assert_eq!(f.bytes(&a), before);
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
