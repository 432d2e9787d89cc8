//! The public object API: encryptors and decryptors own their keys (no borrow to keep alive),
//! ciphertexts, plaintexts and keys are `Clone`, and one call moves any of them to the device of
//! another context (`to_device`), words unchanged.
//!
//! The GPU test is ignored by a plain `cargo test` and fails without a GPU when run
//! (`--include-ignored`, as `scripts/gpu-run.sh` does).

use std::sync::Arc;

use rhea::bgv::{self, BgvContext, BgvParametersLiteral};
use rhea::ckks::{self, CkksContext};
use rhea::params::CkksParametersLiteral;
use rhea::unstable::HasRing;
use rhea::{Device, Error};

/// Everything CKKS needs, built once and owned: no lifetime ties the encryptor or the
/// decryptor to the keys.
struct Client {
    ctx: CkksContext,
    encoder: ckks::Encoder,
    encryptor: ckks::Encryptor,
    decryptor: ckks::Decryptor,
}

fn client(device: Device, seed: u8) -> (Client, rhea::rlwe::SecretKey, rhea::rlwe::PublicKey) {
    let params = CkksParametersLiteral::n13_logqp200_levels2()
        .build()
        .unwrap();
    let ctx = CkksContext::new(&params, device).unwrap();
    let mut keygen = ckks::KeyGenerator::from_seed(&ctx, [seed; 32]);
    let sk = keygen.secret_key().unwrap();
    let pk = keygen.public_key(&sk).unwrap();
    let client = Client {
        encoder: ckks::Encoder::new(&ctx).unwrap(),
        encryptor: ckks::Encryptor::new(&ctx, &pk)
            .unwrap()
            .with_seed([seed; 32]),
        decryptor: ckks::Decryptor::new(&ctx, &sk).unwrap(),
        ctx,
    };
    (client, sk, pk)
}

fn words(ring: &rhea::unstable::RnsRing, parts: &[rhea::backend::Poly]) -> Vec<Vec<u64>> {
    parts.iter().map(|p| ring.download(p).unwrap()).collect()
}

#[test]
fn encryptors_and_decryptors_own_their_keys_and_move_between_threads() {
    let (c, sk, pk) = client(Device::Cpu, 1);
    drop((sk, pk)); // the client keeps working without them
    let ct = c
        .encryptor
        .encrypt(&c.encoder.encode(&[1.5, -0.25]).unwrap())
        .unwrap();
    let out = std::thread::spawn(move || {
        let pt = c.decryptor.decrypt(&ct).unwrap();
        c.encoder.decode(&pt).unwrap()
    })
    .join()
    .unwrap();
    assert!((out[0] - 1.5).abs() < 1e-6 && (out[1] + 0.25).abs() < 1e-6);

    // A shared key (Arc) and a moved key work as well.
    let (c, sk, pk) = client(Device::Cpu, 2);
    let sk = Arc::new(sk);
    let dec = ckks::Decryptor::new(&c.ctx, sk.clone()).unwrap();
    let enc = ckks::Encryptor::new(&c.ctx, pk).unwrap();
    let sym = ckks::Encryptor::with_secret_key(&c.ctx, sk).unwrap();
    for e in [&enc, &sym] {
        let ct = e.encrypt(&c.encoder.encode(&[0.75]).unwrap()).unwrap();
        assert!((c.encoder.decode(&dec.decrypt(&ct).unwrap()).unwrap()[0] - 0.75).abs() < 1e-6);
    }
}

#[test]
fn ciphertexts_plaintexts_and_keys_are_clone() {
    let (c, sk, pk) = client(Device::Cpu, 3);
    let ring = c.ctx.ring();
    let pt = c.encoder.encode(&[2.0, 3.0]).unwrap();
    let ct = c.encryptor.encrypt(&pt).unwrap();
    let (ct2, pt2) = (ct.clone(), pt.clone());
    assert_eq!(words(ring, ct.parts()), words(ring, ct2.parts()));
    assert_eq!(
        (ct2.scale(), ct2.level(), ct2.slots()),
        (ct.scale(), ct.level(), ct.slots())
    );
    assert_eq!(
        ring.download(pt.poly()).unwrap(),
        ring.download(pt2.poly()).unwrap()
    );
    // A cloned secret key decrypts; a cloned public key encrypts.
    let sk2 = sk.clone();
    drop(sk);
    let dec = ckks::Decryptor::new(&c.ctx, sk2).unwrap();
    let ct3 = ckks::Encryptor::new(&c.ctx, pk.clone())
        .unwrap()
        .encrypt(&pt2)
        .unwrap();
    for x in [&ct2, &ct3] {
        let out = c.encoder.decode(&dec.decrypt(x).unwrap()).unwrap();
        assert!((out[0] - 2.0).abs() < 1e-6 && (out[1] - 3.0).abs() < 1e-6);
    }
    // Evaluation keys too.
    let mut keygen = ckks::KeyGenerator::from_seed(&c.ctx, [9; 32]);
    let sk = keygen.secret_key().unwrap();
    let rlk = keygen.relinearization_key(&sk).unwrap();
    let gk = keygen.galois_keys(&sk, &[1, 2], false).unwrap();
    let (rlk2, gk2) = (rlk.clone(), gk.clone());
    assert_eq!(gk2.elements(), gk.elements());
    assert_eq!(
        words(ring, &rlk.key().parts()[0]),
        words(ring, &rlk2.key().parts()[0])
    );
}

#[test]
fn objects_move_to_another_context_in_one_call() {
    // Two contexts of the same parameters, built independently: objects move between them.
    let (c, sk, pk) = client(Device::Cpu, 4);
    let (other, _, _) = client(Device::Cpu, 5);
    let ring = c.ctx.ring();
    let pt = c.encoder.encode(&[0.5, 4.0]).unwrap();
    let ct = c.encryptor.encrypt(&pt).unwrap();
    let ct_moved = ct.to_device(&other.ctx).unwrap();
    assert_eq!(words(ring, ct.parts()), words(ring, ct_moved.parts()));
    assert_eq!(ct_moved.seed(), ct.seed());
    let pt_moved = pt.to_device(&other.ctx).unwrap();
    assert_eq!(
        ring.download(pt.poly()).unwrap(),
        ring.download(pt_moved.poly()).unwrap()
    );
    let sk_moved = sk.to_device(&other.ctx).unwrap();
    assert_eq!(sk_moved.device(), Device::Cpu);
    let pk_moved = pk.to_device(&other.ctx).unwrap();
    let dec = ckks::Decryptor::new(&other.ctx, sk_moved).unwrap();
    let ct2 = ckks::Encryptor::new(&other.ctx, pk_moved)
        .unwrap()
        .encrypt(&pt_moved)
        .unwrap();
    for x in [&ct_moved, &ct2] {
        let out = other.encoder.decode(&dec.decrypt(x).unwrap()).unwrap();
        assert!((out[0] - 0.5).abs() < 1e-6 && (out[1] - 4.0).abs() < 1e-6);
    }

    // A context of other parameters refuses them.
    let params = CkksParametersLiteral::test_n13_levels10_insecure()
        .build()
        .unwrap();
    let foreign = CkksContext::new(&params, Device::Cpu).unwrap();
    assert!(matches!(
        ct.to_device(&foreign),
        Err(Error::ParametersMismatch { .. })
    ));
    assert!(matches!(
        sk.to_device(&foreign),
        Err(Error::ParametersMismatch { .. })
    ));

    // BGV objects and evaluation keys, the same way.
    let params = BgvParametersLiteral::test_n12_levels5_insecure()
        .build()
        .unwrap();
    let (a, b) = (
        BgvContext::new(&params, Device::Cpu).unwrap(),
        BgvContext::new(&params, Device::Cpu).unwrap(),
    );
    let mut keygen = bgv::KeyGenerator::from_seed(&a, [6; 32]);
    let sk = keygen.secret_key().unwrap();
    let rlk = keygen.relinearization_key(&sk).unwrap();
    let gk = keygen.galois_keys(&sk, &[1], true).unwrap();
    let encoder = bgv::Encoder::new(&a).unwrap();
    let ct = bgv::Encryptor::with_secret_key(&a, &sk)
        .unwrap()
        .encrypt(&encoder.encode(&[3, 4, 5]).unwrap())
        .unwrap();
    let eval = bgv::Evaluator::new(&b)
        .with_relinearization_key(rlk.to_device(&b).unwrap())
        .unwrap()
        .with_galois_keys(gk.to_device(&b).unwrap())
        .unwrap();
    let ct_b = ct.to_device(&b).unwrap();
    let sq = eval.mul(&ct_b, &ct_b).unwrap();
    let rot = eval.rotate_rows(&sq, 1).unwrap();
    let dec = bgv::Decryptor::new(&b, sk.to_device(&b).unwrap()).unwrap();
    assert_eq!(
        &encoder.decode(&dec.decrypt(&rot).unwrap()).unwrap()[..2],
        &[16, 25]
    );
    let pt = encoder.encode(&[7]).unwrap().to_device(&b).unwrap();
    assert_eq!(pt.level(), ct_b.level());
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn objects_move_between_cpu_and_gpu() {
    let gpu = Device::Cuda(0);
    if let Err(e) = gpu.check_supported() {
        panic!("this test needs a CUDA GPU: {e}");
    }
    let (cpu, sk, pk) = client(Device::Cpu, 11);
    let params = cpu.ctx.params().clone();
    let gctx = CkksContext::new(&params, gpu).unwrap();
    let ring = cpu.ctx.ring();
    let mut keygen = ckks::KeyGenerator::from_seed(&cpu.ctx, [12; 32]);
    let rlk = keygen.relinearization_key(&sk).unwrap();
    let gk = keygen.galois_keys(&sk, &[1], false).unwrap();
    let x = cpu
        .encryptor
        .encrypt(&cpu.encoder.encode(&[1.5, 2.0, 3.0]).unwrap())
        .unwrap();

    // CPU -> GPU -> CPU: words unchanged.
    let xg = x.to_device(&gctx).unwrap();
    assert_eq!(xg.device(), gpu);
    let back = xg.to_device(&cpu.ctx).unwrap();
    assert_eq!(back.device(), Device::Cpu);
    assert_eq!(words(ring, x.parts()), words(ring, back.parts()));

    // The same evaluation on both devices, with keys moved over: the same words.
    let (rlk_g, gk_g) = (rlk.to_device(&gctx).unwrap(), gk.to_device(&gctx).unwrap());
    assert_eq!(rlk_g.device(), gpu);
    let run = |ctx: &CkksContext, rlk, gk, x: &ckks::Ciphertext| {
        let e = ckks::Evaluator::new(ctx)
            .with_relinearization_key(rlk)
            .unwrap()
            .with_galois_keys(gk)
            .unwrap();
        e.rotate(&e.mul(x, x).unwrap(), 1).unwrap()
    };
    let on_cpu = run(&cpu.ctx, rlk, gk, &x);
    let on_gpu = run(&gctx, rlk_g, gk_g, &xg).to_device(&cpu.ctx).unwrap();
    assert_eq!(words(ring, on_cpu.parts()), words(ring, on_gpu.parts()));

    // Keys and plaintexts on the GPU encrypt and decrypt there.
    let sk_g = sk.to_device(&gctx).unwrap();
    let pk_g = pk.to_device(&gctx).unwrap();
    assert_eq!((sk_g.device(), pk_g.device()), (gpu, gpu));
    let pt_g = cpu
        .encoder
        .encode(&[0.5])
        .unwrap()
        .to_device(&gctx)
        .unwrap();
    let ct_g = ckks::Encryptor::new(&gctx, pk_g)
        .unwrap()
        .encrypt(&pt_g)
        .unwrap();
    let dec = ckks::Decryptor::new(&gctx, sk_g).unwrap();
    let pt = dec.decrypt(&ct_g).unwrap().to_device(&cpu.ctx).unwrap();
    assert!((cpu.encoder.decode(&pt).unwrap()[0] - 0.5).abs() < 1e-6);
}
