//! LITE's all-data mode (issue 38, `docs/lite.md` "The all-data mode") on the GPU:
//!
//! - `all_data_is_bit_identical` (the insecure N = 2^13 set: 11 Q primes, 2 P primes, 6 digits,
//!   every digit shape) and `all_data_is_bit_identical_n16` (the deep preset, N = 2^16, 25 Q +
//!   9 P limbs, dnum 2): `protect` (from the GPU and from host memory), `add`, `sub`,
//!   `mul_relin`, `rescale`, `rotate` (two steps), `add_plain`/`mul_plain` with a protected
//!   plaintext, `try_clone` and `unprotect` give the words of the
//!   unprotected GPU evaluator and of the CPU evaluator, at the top level and lower; the
//!   protected decryption of an all-data ciphertext gives the words of the protected decryption
//!   of the plain one and decodes to the message; bad operands (another session, another level,
//!   3 components, a missing key) are typed errors.
//! - `all_data_raw_memory`: ciphertexts encrypted on the host and protected from there, then
//!   multiplied, rescaled, rotated and decrypted in the all-data mode: no 16-byte block of the
//!   input ciphertexts, of the tensor product's `a1·b1`, of the results or of the decrypted
//!   plaintext is anywhere in the device memory the pool holds; the same steps with the
//!   unprotected evaluator show them (so the search can fail).
//!
//! Every test is `#[ignore]`d: a machine without a GPU lists them as ignored;
//! `--include-ignored` runs them, and then a missing GPU is a failure.

mod protected_common;

use std::collections::HashSet;
use std::sync::Arc;

use rhea::ckks::{
    Ciphertext, CkksContext, Encoder, Encryptor, Evaluator, KeyGenerator, ProtectedCiphertext,
    ProtectedDecryptor, ProtectedEvaluator, ProtectedKeyGenerator, ProtectedPlaintext,
};
use rhea::params::{CkksParameters, CkksParametersLiteral};
use rhea::rlwe::Protection;
use rhea::unstable::HasRing;
use rhea::Device;

use protected_common::{distinctive_in, require_gpu, search_device_memory, GPU};

fn ct_words(ctx: &CkksContext, ct: &Ciphertext) -> Vec<Vec<u64>> {
    ct.parts()
        .iter()
        .map(|p| ctx.ring().download(p).unwrap())
        .collect()
}

fn message(n: usize, salt: f64) -> Vec<f64> {
    (0..n)
        .map(|i| (i as f64 * 0.37 + salt).sin() * 0.9)
        .collect()
}

/// Every operation of the all-data evaluator against the unprotected GPU and CPU evaluators.
fn check_bit_identical(params: &CkksParameters, levels: &[usize]) {
    let gpu = CkksContext::new(params, GPU).unwrap();
    let cpu = CkksContext::new(params, Device::Cpu).unwrap();
    let seed = [21u8; 32];
    let steps = [1i64, -3];
    let protection = Protection::new(&gpu).unwrap();
    let mut kp = ProtectedKeyGenerator::from_seed(&gpu, &protection, seed).unwrap();
    let psk = Arc::new(kp.secret_key().unwrap());
    let rlk = kp.relinearization_key(&psk).unwrap();
    let gk = kp.galois_keys(&psk, &steps, false).unwrap();
    let mut kc = KeyGenerator::from_seed(&cpu, seed);
    let sk_c = kc.secret_key().unwrap();
    let rlk_c = kc.relinearization_key(&sk_c).unwrap();
    let gk_c = kc.galois_keys(&sk_c, &steps, false).unwrap();

    let eval = Evaluator::new(&gpu)
        .with_auto_rescale(false)
        .with_relinearization_key(rlk.clone())
        .unwrap()
        .with_galois_keys(gk.clone())
        .unwrap();
    let eval_c = Evaluator::new(&cpu)
        .with_auto_rescale(false)
        .with_relinearization_key(rlk_c)
        .unwrap()
        .with_galois_keys(gk_c)
        .unwrap();
    let all = ProtectedEvaluator::new(&gpu, &protection)
        .unwrap()
        .with_relinearization_key(rlk)
        .unwrap()
        .with_galois_keys(gk)
        .unwrap();
    let pdec = ProtectedDecryptor::new(&gpu, psk.clone()).unwrap();

    let enc = Encoder::new(&cpu).unwrap();
    let (m1, m2) = (message(enc.slots(), 0.5), message(enc.slots(), 1.9));
    let encrypt = |m: &[f64], s: u8| {
        Encryptor::with_secret_key(&cpu, psk.host_key())
            .unwrap()
            .with_seed([s; 32])
            .encrypt(&enc.encode(m).unwrap())
            .unwrap()
    };
    let (a_host, b_host) = (encrypt(&m1, 1), encrypt(&m2, 2));
    let same =
        |what: &str, p: &ProtectedCiphertext, want_gpu: &Ciphertext, want_cpu: &Ciphertext| {
            let got = ct_words(&gpu, &all.unprotect(p).unwrap());
            assert_eq!(got, ct_words(&gpu, want_gpu), "{what}: all-data vs GPU");
            assert_eq!(got, ct_words(&cpu, want_cpu), "{what}: all-data vs CPU");
            assert_eq!(p.scale(), want_gpu.scale(), "{what}: scale");
            assert_eq!(p.level(), want_gpu.level(), "{what}: level");
        };
    for &level in levels {
        let a_c = eval_c.drop_to_level(&a_host, level).unwrap();
        let b_c = eval_c.drop_to_level(&b_host, level).unwrap();
        let (a, b) = (a_c.to_device(&gpu).unwrap(), b_c.to_device(&gpu).unwrap());
        // From host memory and from the GPU: the same protected words.
        let pa = all.protect(&a_c).unwrap();
        let pb = all.protect(&b).unwrap();
        same("protect (host)", &pa, &a, &a_c);
        same("protect (GPU)", &pb, &b, &b_c);

        let what = format!("add at level {level}");
        same(
            &what,
            &all.add(&pa, &pb).unwrap(),
            &eval.add(&a, &b).unwrap(),
            &eval_c.add(&a_c, &b_c).unwrap(),
        );
        let what = format!("sub at level {level}");
        same(
            &what,
            &all.sub(&pa, &pb).unwrap(),
            &eval.sub(&a, &b).unwrap(),
            &eval_c.sub(&a_c, &b_c).unwrap(),
        );
        if level == 0 {
            // No room for a product at level 0: the same typed error as the evaluator's.
            assert!(matches!(
                all.mul_relin(&pa, &pb),
                Err(rhea::Error::ScaleOverflow { .. })
            ));
            assert!(matches!(
                eval.mul_relin(&a, &b),
                Err(rhea::Error::ScaleOverflow { .. })
            ));
        } else {
            let prod = all.mul_relin(&pa, &pb).unwrap();
            let want = eval.mul_relin(&a, &b).unwrap();
            let want_c = eval_c.mul_relin(&a_c, &b_c).unwrap();
            same(
                &format!("mul_relin at level {level}"),
                &prod,
                &want,
                &want_c,
            );
            let r = all.rescale(&prod).unwrap();
            same(
                &format!("rescale at level {level}"),
                &r,
                &eval.rescale(&want).unwrap(),
                &eval_c.rescale(&want_c).unwrap(),
            );
            // The product decrypts (protected, all-data) to the words of the protected
            // decryption of the plain ciphertext, and to m1·m2.
            let got = pdec.decrypt_protected(&r).unwrap();
            let plain = pdec.decrypt(&eval.rescale(&want).unwrap()).unwrap();
            assert_eq!(
                cpu.ring().download(got.poly()).unwrap(),
                cpu.ring().download(plain.poly()).unwrap(),
                "decrypt_protected at level {level}"
            );
            let z = enc.decode(&got).unwrap();
            let err = z
                .iter()
                .zip(m1.iter().zip(&m2))
                .map(|(z, (x, y))| (z - x * y).abs())
                .fold(0.0, f64::max);
            assert!(err < 1e-4, "m1·m2 at level {level}: error {err}");
        }
        // Protected plaintext operands.
        let pt_host = enc.encode_at(&m2, level, a.scale()).unwrap();
        let pt_gpu = pt_host.to_device(&gpu).unwrap();
        let ppt = ProtectedPlaintext::new(&gpu, &protection, &pt_host).unwrap();
        same(
            &format!("add_plain at level {level}"),
            &all.add_plain(&pa, &ppt).unwrap(),
            &eval.add_plain(&a, &pt_gpu).unwrap(),
            &eval_c.add_plain(&a_c, &pt_host).unwrap(),
        );
        if level > 0 {
            same(
                &format!("mul_plain at level {level}"),
                &all.mul_plain(&pa, &ppt).unwrap(),
                &eval.mul_plain(&a, &pt_gpu).unwrap(),
                &eval_c.mul_plain(&a_c, &pt_host).unwrap(),
            );
        }
        same(
            &format!("try_clone at level {level}"),
            &all.try_clone(&pa).unwrap(),
            &a,
            &a_c,
        );
        for step in steps {
            same(
                &format!("rotate {step} at level {level}"),
                &all.rotate(&pa, step).unwrap(),
                &eval.rotate(&a, step).unwrap(),
                &eval_c.rotate(&a_c, step).unwrap(),
            );
        }
    }

    // Bad operands.
    let top = levels[0];
    let pa = all
        .protect(&eval_c.drop_to_level(&a_host, top).unwrap())
        .unwrap();
    if top > 0 {
        let low = all
            .protect(&eval_c.drop_to_level(&b_host, top - 1).unwrap())
            .unwrap();
        assert!(all.add(&pa, &low).is_err(), "levels differ");
        assert!(matches!(
            all.rotate(&pa, 5),
            Err(rhea::Error::MissingRotationKey { step: 5, .. })
        ));
    }
    let other = Protection::new(&gpu).unwrap();
    let foreign = ProtectedEvaluator::new(&gpu, &other).unwrap();
    assert!(foreign.add(&pa, &pa).is_err(), "another session");
    assert!(foreign.unprotect(&pa).is_err(), "another session");
    let no_keys = ProtectedEvaluator::new(&gpu, &protection).unwrap();
    assert!(matches!(
        no_keys.mul_relin(&pa, &pa),
        Err(rhea::Error::MissingRelinearizationKey { .. })
    ));
    assert!(
        ProtectedEvaluator::new(&cpu, &protection).is_err(),
        "a CPU context"
    );
    let m = enc.decode(&pdec.decrypt_protected(&pa).unwrap()).unwrap();
    let err = m
        .iter()
        .zip(&m1)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    assert!(
        err < 1e-5,
        "decrypt_protected of a fresh ciphertext: error {err}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn all_data_is_bit_identical() {
    let _gpu = require_gpu("all_data_is_bit_identical");
    let params = CkksParametersLiteral::test_n13_levels10_insecure()
        .build()
        .unwrap();
    check_bit_identical(&params, &[10, 5, 0]);
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn all_data_is_bit_identical_n16() {
    let _gpu = require_gpu("all_data_is_bit_identical_n16");
    let params = CkksParametersLiteral::n16_logqp1560_levels24()
        .build()
        .unwrap();
    check_bit_identical(&params, &[24, 9]);
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn all_data_raw_memory() {
    let _gpu = require_gpu("all_data_raw_memory");
    let params = CkksParametersLiteral::test_n13_levels10_insecure()
        .build()
        .unwrap();
    let gpu = CkksContext::new(&params, GPU).unwrap();
    let cpu = CkksContext::new(&params, Device::Cpu).unwrap();
    let ring = cpu.ring();
    let enc = Encoder::new(&cpu).unwrap();
    let (m1, m2) = (message(enc.slots(), 0.2), message(enc.slots(), 2.4));

    let run = |protected: bool, seed: u8| {
        let protection = Protection::new(&gpu).unwrap();
        let mut kp = ProtectedKeyGenerator::from_seed(&gpu, &protection, [seed; 32]).unwrap();
        let psk = Arc::new(kp.secret_key().unwrap());
        let rlk = kp.relinearization_key(&psk).unwrap();
        let gk = kp.galois_keys(&psk, &[1], false).unwrap();
        let encrypt = |m: &[f64], s: u8| {
            Encryptor::with_secret_key(&cpu, psk.host_key())
                .unwrap()
                .with_seed([s; 32])
                .encrypt(&enc.encode(m).unwrap())
                .unwrap()
        };
        let (a, b) = (encrypt(&m1, seed + 1), encrypt(&m2, seed + 2));
        // What must not be in device memory, computed on the host: the inputs, a1·b1, the
        // product, its rescale and rotation, and the decrypted plaintext.
        let mut eval_c = Evaluator::new(&cpu)
            .with_auto_rescale(false)
            .with_relinearization_key(kp_host_rlk(&cpu, seed))
            .unwrap();
        eval_c = eval_c.with_galois_keys(kp_host_gk(&cpu, seed)).unwrap();
        let prod = eval_c.mul_relin(&a, &b).unwrap();
        let resc = eval_c.rescale(&prod).unwrap();
        let rot = eval_c.rotate(&resc, 1).unwrap();
        let mut blocks = HashSet::new();
        for ct in [&a, &b, &prod, &resc, &rot] {
            for p in ct.parts() {
                blocks.extend(distinctive_in(ring, p));
            }
        }
        blocks.extend(distinctive_in(
            ring,
            &ring.mul(&a.parts()[1], &b.parts()[1]).unwrap(),
        ));
        let dec = ProtectedDecryptor::new(&gpu, psk.clone()).unwrap();
        let decrypted = if protected {
            let all = ProtectedEvaluator::new(&gpu, &protection)
                .unwrap()
                .with_relinearization_key(rlk)
                .unwrap()
                .with_galois_keys(gk)
                .unwrap();
            let (pa, pb) = (all.protect(&a).unwrap(), all.protect(&b).unwrap());
            let r = all
                .rotate(&all.rescale(&all.mul_relin(&pa, &pb).unwrap()).unwrap(), 1)
                .unwrap();
            dec.decrypt_protected(&r).unwrap()
        } else {
            let eval = Evaluator::new(&gpu)
                .with_auto_rescale(false)
                .with_relinearization_key(rlk)
                .unwrap()
                .with_galois_keys(gk)
                .unwrap();
            let (ga, gb) = (a.to_device(&gpu).unwrap(), b.to_device(&gpu).unwrap());
            let r = eval
                .rotate(
                    &eval.rescale(&eval.mul_relin(&ga, &gb).unwrap()).unwrap(),
                    1,
                )
                .unwrap();
            dec.decrypt(&r).unwrap()
        };
        let dec_blocks = distinctive_in(ring, decrypted.poly());
        let none = HashSet::new();
        let label = if protected { "all-data" } else { "unprotected" };
        let found =
            search_device_memory(label, [&none, &blocks, &dec_blocks, &none], &HashSet::new());
        (found, blocks.len(), dec_blocks.len())
    };
    let (found, searched, dec) = run(true, 40);
    assert!(
        searched > 1000 && dec > 100,
        "{searched} / {dec} blocks searched"
    );
    assert_eq!(
        found.plaintext, 0,
        "ciphertext blocks in device memory (all-data mode)"
    );
    assert_eq!(
        found.decrypted, 0,
        "decrypted blocks in device memory (all-data mode)"
    );
    let (found, _, _) = run(false, 60);
    assert!(
        found.plaintext > 100,
        "the unprotected path's ciphertexts must be found: {found:?}"
    );
}

/// The relinearisation key of [`ProtectedKeyGenerator::from_seed`]'s stream, made on the host.
fn kp_host_rlk(cpu: &CkksContext, seed: u8) -> rhea::rlwe::RelinearizationKey {
    let mut kg = KeyGenerator::from_seed(cpu, [seed; 32]);
    let sk = kg.secret_key().unwrap();
    kg.relinearization_key(&sk).unwrap()
}

/// The Galois key for step 1 of the same stream (after the relinearisation key).
fn kp_host_gk(cpu: &CkksContext, seed: u8) -> rhea::rlwe::GaloisKeys {
    let mut kg = KeyGenerator::from_seed(cpu, [seed; 32]);
    let sk = kg.secret_key().unwrap();
    kg.relinearization_key(&sk).unwrap();
    kg.galois_keys(&sk, &[1], false).unwrap()
}
