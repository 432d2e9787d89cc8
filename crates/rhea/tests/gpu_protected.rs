//! LITE's protected mode (issue 38, `docs/lite.md` "Protected mode") on the GPU:
//!
//! - `protected_mode_is_bit_identical`: keys (secret, public, relinearisation, Galois) from one
//!   seed, decryptions (2 and 3 components), secret-key encryptions and plaintext operands give
//!   the words of the unprotected GPU path and of the CPU.
//! - `protected_public_key_encryption_*`: public-key encryption of a protected plaintext
//!   (`ProtectedEncryptor::with_public_key`) gives the words of `Encryptor::new` on the GPU and
//!   on the CPU for the same seed, at two levels of two shapes (the insecure N = 2^13 test set
//!   and the deep N = 2^16 preset), decrypts (protected) to the message, and refuses a foreign
//!   session, a key of other parameters and a CPU context.
//! - `raw_memory_*`: after key generation, a secret-key and a public-key encryption, a mul+relin
//!   and a decryption, every word of device memory the pool holds (live and cached buffers) is
//!   searched for the secret key (NTT form over `Q ∪ P`, and coefficient form as 32-word runs,
//!   every limb), the encoded plaintext, the decrypted plaintext and the public-key encryption's
//!   ephemeral secrets (`v`, `e_0`, `e_1` in NTT form over `Q ∪ P`): a protected context shows
//!   none of them; the same steps unprotected show the first three (so the search can fail; the
//!   ephemeral count is printed there, not asserted: the unprotected GPU path zeroises `v`).
//!
//! - `protected_bootstrapping_keys_are_bit_identical`: `Bootstrapper::new_protected` makes the
//!   keys of `Bootstrapper::new` (same bootstrap words from one seed), with no word of `s` in
//!   device memory.
//!
//! BGV's protected mode: `gpu_protected_bgv.rs`.
//!
//! Every test is `#[ignore]`d: a machine without a GPU lists them as ignored;
//! `--include-ignored` runs them, and then a missing GPU is a failure.

mod protected_common;

use std::collections::HashSet;
use std::sync::Arc;

use rhea::backend::Poly;
use rhea::ckks::{
    Ciphertext, CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator, Plaintext,
    ProtectedDecryptor, ProtectedEncryptor, ProtectedKeyGenerator, ProtectedPlaintext,
};
use rhea::params::{CkksParameters, CkksParametersLiteral};
use rhea::rlwe::{KeySwitchKey, Protection};
use rhea::unstable::math::sampler::Prng;
use rhea::unstable::{public_key_parts, secret_key_poly, HasRing};
use rhea::Device;

use protected_common::{distinctive_in, require_gpu, search_device_memory, Found, GPU};

/// 11 Q primes, 2 P primes, 6 digits: every key-switching digit shape.
fn params() -> CkksParameters {
    CkksParametersLiteral::test_n13_levels10_insecure()
        .build()
        .unwrap()
}

fn words(ctx: &CkksContext, p: &Poly) -> Vec<u64> {
    ctx.ring().download(p).unwrap()
}

fn ct_words(ctx: &CkksContext, ct: &Ciphertext) -> Vec<Vec<u64>> {
    ct.parts().iter().map(|p| words(ctx, p)).collect()
}

fn ksk_words(ctx: &CkksContext, k: &KeySwitchKey) -> Vec<Vec<u64>> {
    k.parts().iter().flatten().map(|p| words(ctx, p)).collect()
}

fn message(n: usize, salt: f64) -> Vec<f64> {
    (0..n)
        .map(|i| (i as f64 * 0.37 + salt).sin() * 0.9)
        .collect()
}

/// Runs everywhere: the protected mode is for GPU contexts.
#[test]
fn protection_needs_a_gpu_context() {
    let cpu = CkksContext::new(&params(), Device::Cpu).unwrap();
    assert!(matches!(
        Protection::new(&cpu),
        Err(rhea::Error::InvalidInput(_))
    ));
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn protected_mode_is_bit_identical() {
    let _gpu = require_gpu("protected_mode_is_bit_identical");
    let params = params();
    let gpu = CkksContext::new(&params, GPU).unwrap();
    let cpu = CkksContext::new(&params, Device::Cpu).unwrap();
    let seed = [7u8; 32];
    let (steps, conj) = (&[1i64, -3][..], true);

    let mut kg = KeyGenerator::from_seed(&gpu, seed);
    let sk = kg.secret_key().unwrap();
    let pk = kg.public_key(&sk).unwrap();
    let rlk = kg.relinearization_key(&sk).unwrap();
    let gk = kg.galois_keys(&sk, steps, conj).unwrap();
    let mut kc = KeyGenerator::from_seed(&cpu, seed);
    let sk_c = kc.secret_key().unwrap();
    let pk_c = kc.public_key(&sk_c).unwrap();
    let rlk_c = kc.relinearization_key(&sk_c).unwrap();
    let gk_c = kc.galois_keys(&sk_c, steps, conj).unwrap();
    let protection = Protection::new(&gpu).unwrap();
    let mut kp = ProtectedKeyGenerator::from_seed(&gpu, &protection, seed).unwrap();
    let psk = kp.secret_key().unwrap();
    let ppk = kp.public_key(&psk).unwrap();
    let prlk = kp.relinearization_key(&psk).unwrap();
    let pgk = kp.galois_keys(&psk, steps, conj).unwrap();

    let s = words(&gpu, secret_key_poly(&sk));
    assert_eq!(
        words(&cpu, secret_key_poly(psk.host_key())),
        s,
        "secret key"
    );
    assert_eq!(words(&cpu, secret_key_poly(&sk_c)), s, "secret key (CPU)");
    for i in 0..2 {
        let want = words(&gpu, &public_key_parts(&pk)[i]);
        assert_eq!(words(&gpu, &public_key_parts(&ppk)[i]), want, "pk[{i}]");
        assert_eq!(
            words(&cpu, &public_key_parts(&pk_c)[i]),
            want,
            "pk[{i}] (CPU)"
        );
    }
    assert_eq!(ppk.seed(), pk.seed());
    let want = ksk_words(&gpu, rlk.key());
    assert_eq!(ksk_words(&gpu, prlk.key()), want, "relinearisation key");
    assert_eq!(
        ksk_words(&cpu, rlk_c.key()),
        want,
        "relinearisation key (CPU)"
    );
    assert_eq!(pgk.elements(), gk.elements());
    assert_eq!(gk.len(), 3);
    for g in gk.elements() {
        let want = ksk_words(&gpu, gk.get(g).unwrap());
        assert_eq!(ksk_words(&gpu, pgk.get(g).unwrap()), want, "Galois key {g}");
        assert_eq!(
            ksk_words(&cpu, gk_c.get(g).unwrap()),
            want,
            "Galois key {g} (CPU)"
        );
    }

    // Plaintexts: encoded on the host, protected, encrypted with the secret key.
    let enc_host = Encoder::new(&cpu).unwrap();
    let m = message(enc_host.slots(), 0.5);
    let pt_host = enc_host.encode(&m).unwrap();
    let pt_gpu = pt_host.to_device(&gpu).unwrap();
    let ppt = ProtectedPlaintext::new(&gpu, &protection, &pt_host).unwrap();
    assert!(ProtectedPlaintext::new(&gpu, &protection, &pt_gpu).is_err());
    let eseed = [9u8; 32];
    let ct = Encryptor::with_secret_key(&gpu, &sk)
        .unwrap()
        .with_seed(eseed)
        .encrypt(&pt_gpu)
        .unwrap();
    let pct = ProtectedEncryptor::new(&gpu, psk)
        .unwrap()
        .with_seed(eseed)
        .encrypt(&ppt)
        .unwrap();
    let ct_c = Encryptor::with_secret_key(&cpu, &sk_c)
        .unwrap()
        .with_seed(eseed)
        .encrypt(&pt_host)
        .unwrap();
    assert_eq!(ct_words(&gpu, &pct), ct_words(&gpu, &ct), "sk encryption");
    assert_eq!(
        ct_words(&cpu, &ct_c),
        ct_words(&gpu, &ct),
        "sk encryption (CPU)"
    );
    assert_eq!(pct.seed(), ct.seed());
    // A plaintext of another session cannot be encrypted with this key.
    let other = Protection::new(&gpu).unwrap();
    assert!(!other.is_same_session(&protection));
    let foreign = ProtectedPlaintext::new(&gpu, &other, &pt_host).unwrap();
    let psk2 = kp_key_from(&gpu, &protection, seed);
    assert!(ProtectedEncryptor::new(&gpu, psk2)
        .unwrap()
        .encrypt(&foreign)
        .is_err());

    // Plaintext operands.
    let manual = Evaluator::new(&gpu).with_auto_rescale(false);
    assert_eq!(
        ct_words(&gpu, &ppt.add_to(&gpu, &ct).unwrap()),
        ct_words(&gpu, &manual.add_plain(&ct, &pt_gpu).unwrap()),
        "ct + pt"
    );
    let prod = ppt.multiply(&gpu, &ct).unwrap();
    let want = manual.mul_plain(&ct, &pt_gpu).unwrap();
    assert_eq!(ct_words(&gpu, &prod), ct_words(&gpu, &want), "ct · pt");
    assert_eq!(prod.scale(), want.scale());

    // Decryption of 2 and 3 components, against the unprotected GPU and the CPU.
    let psk = kp_key_from(&gpu, &protection, seed);
    let dec = Decryptor::new(&gpu, &sk).unwrap();
    let dec_c = Decryptor::new(&cpu, &sk_c).unwrap();
    let pdec = ProtectedDecryptor::new(&gpu, psk).unwrap();
    let eval = Evaluator::new(&gpu).with_relinearization_key(prlk).unwrap();
    let three = eval.mul_no_relin(&ct, &ct).unwrap();
    assert_eq!(three.len(), 3);
    for (what, c) in [("2 components", &ct), ("3 components", &three)] {
        let got = pdec.decrypt(c).unwrap();
        assert_eq!(
            got.device(),
            Device::Cpu,
            "{what}: the result is in host memory"
        );
        let want = words(&gpu, dec.decrypt(c).unwrap().poly());
        assert_eq!(words(&cpu, got.poly()), want, "{what}");
        let c_cpu = c.to_device(&cpu).unwrap();
        assert_eq!(
            words(&cpu, dec_c.decrypt(&c_cpu).unwrap().poly()),
            want,
            "{what} (CPU)"
        );
    }
    // And the values: decode on the host.
    let out = enc_host.decode(&pdec.decrypt(&ct).unwrap()).unwrap();
    let err = out
        .iter()
        .zip(&m)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(err < 1e-6, "decrypted values off by {err}");
    let sq = eval.mul(&ct, &ct).unwrap();
    let out = enc_host.decode(&pdec.decrypt(&sq).unwrap()).unwrap();
    let err = out
        .iter()
        .zip(&m)
        .map(|(a, b)| (a - b * b).abs())
        .fold(0.0, f64::max);
    assert!(err < 1e-4, "x² off by {err}");
}

/// The protected secret key of `seed` again (a second generator from the same seed).
fn kp_key_from(
    gpu: &CkksContext,
    protection: &Protection,
    seed: [u8; 32],
) -> rhea::rlwe::ProtectedSecretKey {
    ProtectedKeyGenerator::from_seed(gpu, protection, seed)
        .unwrap()
        .secret_key()
        .unwrap()
}

/// Public-key encryption of protected plaintexts at `levels` of `params`, keys from `seed`:
/// the words of `Encryptor::new` on the GPU and on the CPU, and the message after a protected
/// decryption.
fn check_protected_public_key_encryption(
    what: &str,
    params: &CkksParameters,
    levels: &[usize],
    seed: u8,
) {
    let gpu = CkksContext::new(params, GPU).unwrap();
    let cpu = CkksContext::new(params, Device::Cpu).unwrap();
    let kseed = [seed; 32];
    let mut kg = KeyGenerator::from_seed(&gpu, kseed);
    let sk = kg.secret_key().unwrap();
    let pk = kg.public_key(&sk).unwrap();
    let mut kc = KeyGenerator::from_seed(&cpu, kseed);
    let sk_c = kc.secret_key().unwrap();
    let pk_c = kc.public_key(&sk_c).unwrap();
    let protection = Protection::new(&gpu).unwrap();
    let mut kp = ProtectedKeyGenerator::from_seed(&gpu, &protection, kseed).unwrap();
    let psk = Arc::new(kp.secret_key().unwrap());
    let ppk = kp.public_key(&psk).unwrap();
    for i in 0..2 {
        assert_eq!(
            words(&gpu, &public_key_parts(&ppk)[i]),
            words(&gpu, &public_key_parts(&pk)[i]),
            "{what}: pk[{i}]"
        );
    }
    let enc_host = Encoder::new(&cpu).unwrap();
    let pdec = ProtectedDecryptor::new(&gpu, psk.clone()).unwrap();
    // The protected generator's key on the GPU, and the CPU's copy of the same key: either works.
    let keys = [("GPU key", &ppk), ("CPU key", &pk_c)];
    for (k, &level) in levels.iter().enumerate() {
        let m = message(enc_host.slots(), 0.3 + k as f64);
        let pt_host = enc_host
            .encode_at(&m, level, params.default_scale())
            .unwrap();
        let pt_gpu = pt_host.to_device(&gpu).unwrap();
        let ppt = ProtectedPlaintext::new(&gpu, &protection, &pt_host).unwrap();
        let eseed = [seed.wrapping_add(1 + k as u8); 32];
        let ct = Encryptor::new(&gpu, &pk)
            .unwrap()
            .with_seed(eseed)
            .encrypt(&pt_gpu)
            .unwrap();
        let ct_c = Encryptor::new(&cpu, &pk_c)
            .unwrap()
            .with_seed(eseed)
            .encrypt(&pt_host)
            .unwrap();
        let want = ct_words(&gpu, &ct);
        assert_eq!(want.len(), 2);
        assert_eq!(
            ct_words(&cpu, &ct_c),
            want,
            "{what}, level {level}: unprotected GPU against CPU"
        );
        for (key, pk_used) in keys {
            let penc = ProtectedEncryptor::with_public_key(&gpu, pk_used, &protection)
                .unwrap()
                .with_seed(eseed);
            assert!(!penc.uses_secret_key());
            let pct = penc.encrypt(&ppt).unwrap();
            assert_eq!(pct.device(), GPU, "{what}: a GPU ciphertext");
            assert_eq!(pct.level(), level);
            assert_eq!(pct.scale(), pt_host.scale());
            assert_eq!(pct.slots(), ct.slots());
            assert!(pct.seed().is_none(), "a public-key encryption has no seed");
            assert_eq!(
                ct_words(&gpu, &pct),
                want,
                "{what}, level {level}, {key}: protected against unprotected"
            );
            // Decryption (protected) gives the message.
            let out = enc_host.decode(&pdec.decrypt(&pct).unwrap()).unwrap();
            let err = out
                .iter()
                .zip(&m)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(
                err < 1e-5,
                "{what}, level {level}, {key}: decrypted values off by {err}"
            );
        }
        // Another seed gives other words (the comparisons above can fail).
        let other = ProtectedEncryptor::with_public_key(&gpu, &ppk, &protection)
            .unwrap()
            .with_seed([!eseed[0]; 32])
            .encrypt(&ppt)
            .unwrap();
        let other = ct_words(&gpu, &other);
        assert_ne!(other[0], want[0], "{what}, level {level}: another seed");
        assert_ne!(other[1], want[1], "{what}, level {level}: another seed");
    }

    // Errors: a plaintext of another session, a key of other parameters, a CPU context.
    let pt_host = enc_host.encode(&message(enc_host.slots(), 0.1)).unwrap();
    let other = Protection::new(&gpu).unwrap();
    let foreign = ProtectedPlaintext::new(&gpu, &other, &pt_host).unwrap();
    let penc = ProtectedEncryptor::with_public_key(&gpu, &ppk, &protection).unwrap();
    assert!(matches!(
        penc.encrypt(&foreign),
        Err(rhea::Error::InvalidInput(_))
    ));
    let small = CkksParametersLiteral::n13_logqp200_levels2()
        .build()
        .unwrap();
    let small_cpu = CkksContext::new(&small, Device::Cpu).unwrap();
    let mut ks = KeyGenerator::from_seed(&small_cpu, kseed);
    let small_sk = ks.secret_key().unwrap();
    let small_pk = ks.public_key(&small_sk).unwrap();
    assert!(matches!(
        ProtectedEncryptor::with_public_key(&gpu, &small_pk, &protection),
        Err(rhea::Error::ParametersMismatch { .. })
    ));
    assert!(matches!(
        ProtectedEncryptor::with_public_key(&cpu, &pk_c, &protection),
        Err(rhea::Error::DeviceMismatch { .. })
    ));
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn protected_public_key_encryption_is_bit_identical() {
    let _gpu = require_gpu("protected_public_key_encryption_is_bit_identical");
    check_protected_public_key_encryption("N = 2^13, 11 + 2 limbs", &params(), &[10, 3, 0], 31);
}

/// The deep preset of the benchmark: N = 2^16, 25 Q + 9 P limbs, dnum 2.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn protected_public_key_encryption_is_bit_identical_n16() {
    let _gpu = require_gpu("protected_public_key_encryption_is_bit_identical_n16");
    let params = CkksParametersLiteral::n16_logqp1560_levels24()
        .build()
        .unwrap();
    check_protected_public_key_encryption("N = 2^16, 25 + 9 limbs", &params, &[24, 1], 41);
}

/// [`distinctive_in`] of a CKKS context's polynomial.
fn distinctive(ctx: &CkksContext, p: &Poly) -> HashSet<[u64; 2]> {
    distinctive_in(ctx.ring(), p)
}

/// Generates keys, encrypts (secret and public key), multiplies and decrypts on the GPU, protected
/// or not, then searches every pool allocation for the secrets.
fn secrets_in_device_memory(protected: bool, seed: [u8; 32], salt: f64) -> Found {
    let params = params();
    let gpu = CkksContext::new(&params, GPU).unwrap();
    let cpu = CkksContext::new(&params, Device::Cpu).unwrap();
    let enc_host = Encoder::new(&cpu).unwrap();
    let m = message(enc_host.slots(), salt);
    let pt_host: Plaintext = enc_host.encode(&m).unwrap();
    // The public-key encryption's seed: its v, e_0, e_1 are redrawn on the host below.
    let eseed = [seed[0] ^ 0x33; 32];
    // Everything a user would hold stays alive until the search (live buffers are searched too).
    let mut keep: Vec<Box<dyn std::any::Any>> = Vec::new();
    let (s_host, decrypted);
    if protected {
        let protection = Protection::new(&gpu).unwrap();
        let mut kg = ProtectedKeyGenerator::from_seed(&gpu, &protection, seed).unwrap();
        let sk = std::sync::Arc::new(kg.secret_key().unwrap());
        let pk = kg.public_key(&sk).unwrap();
        let rlk = kg.relinearization_key(&sk).unwrap();
        let gk = kg.galois_keys(&sk, &[1], false).unwrap();
        let ppt = ProtectedPlaintext::new(&gpu, &protection, &pt_host).unwrap();
        let ct = ProtectedEncryptor::new(&gpu, sk.clone())
            .unwrap()
            .encrypt(&ppt)
            .unwrap();
        let pct = ProtectedEncryptor::with_public_key(&gpu, &pk, &protection)
            .unwrap()
            .with_seed(eseed)
            .encrypt(&ppt)
            .unwrap();
        let eval = Evaluator::new(&gpu)
            .with_relinearization_key(rlk)
            .unwrap()
            .with_galois_keys(gk)
            .unwrap();
        let ct = eval.rotate(&eval.mul(&ct, &ct).unwrap(), 1).unwrap();
        decrypted = ProtectedDecryptor::new(&gpu, sk.clone())
            .unwrap()
            .decrypt(&ct)
            .unwrap();
        s_host = secret_key_poly(sk.host_key()).try_clone().unwrap();
        keep.extend([
            Box::new(sk) as Box<dyn std::any::Any>,
            Box::new(ct),
            Box::new(ppt),
            Box::new(pk),
            Box::new(pct),
        ]);
    } else {
        let mut kg = KeyGenerator::from_seed(&gpu, seed);
        let sk = kg.secret_key().unwrap();
        let pk = kg.public_key(&sk).unwrap();
        let rlk = kg.relinearization_key(&sk).unwrap();
        let gk = kg.galois_keys(&sk, &[1], false).unwrap();
        let pt_gpu = pt_host.to_device(&gpu).unwrap();
        let ct = Encryptor::with_secret_key(&gpu, &sk)
            .unwrap()
            .encrypt(&pt_gpu)
            .unwrap();
        let pct = Encryptor::new(&gpu, &pk)
            .unwrap()
            .with_seed(eseed)
            .encrypt(&pt_gpu)
            .unwrap();
        let eval = Evaluator::new(&gpu)
            .with_relinearization_key(rlk)
            .unwrap()
            .with_galois_keys(gk)
            .unwrap();
        let ct = eval.rotate(&eval.mul(&ct, &ct).unwrap(), 1).unwrap();
        let d = Decryptor::new(&gpu, &sk).unwrap().decrypt(&ct).unwrap();
        decrypted = d.to_device(&cpu).unwrap();
        s_host = secret_key_poly(&sk).try_clone().unwrap();
        keep.extend([
            Box::new(sk) as Box<dyn std::any::Any>,
            Box::new(ct),
            Box::new(pt_gpu),
            Box::new(d),
            Box::new(pk),
            Box::new(pct),
        ]);
    }
    // Host copies of what to look for.
    let s_host = cpu.ring().download(&s_host).unwrap();
    let shape = cpu.ring().full_shape();
    let s_poly = cpu
        .ring()
        .upload(Device::Cpu, s_host, shape, rhea::backend::Form::Ntt)
        .unwrap();
    let secret = distinctive(&cpu, &s_poly);
    let plain = distinctive(&cpu, pt_host.poly());
    let dec = distinctive(&cpu, decrypted.poly());
    assert!(secret.len() > shape.words() / 8 && plain.len() > 1000 && dec.len() > 1000);
    let mut coeff = s_poly;
    cpu.ring().ntt_inverse(&mut coeff).unwrap();
    let coeff = words(&cpu, &coeff);
    let runs: HashSet<&[u64]> = coeff
        .chunks(32)
        .filter(|r| r.iter().filter(|&&x| x != 0).count() >= 8)
        .collect();
    assert!(runs.len() > coeff.len() / 64);
    // The public-key encryption's v, e_0, e_1 over Q_ℓ ∪ P, redrawn from its seed in its order.
    let qp = cpu.ring().shape_qp(pt_host.level() + 1);
    let mut rng = Prng::from_seed(eseed);
    let sigma = params.error_std_dev();
    let v = cpu
        .ring()
        .sample_ternary(Device::Cpu, &mut rng, qp)
        .unwrap();
    let e0 = cpu
        .ring()
        .sample_gaussian(Device::Cpu, &mut rng, sigma, qp)
        .unwrap();
    let e1 = cpu
        .ring()
        .sample_gaussian(Device::Cpu, &mut rng, sigma, qp)
        .unwrap();
    let ephemeral: HashSet<[u64; 2]> = [v, e0, e1]
        .iter()
        .flat_map(|p| distinctive(&cpu, p))
        .collect();
    assert!(ephemeral.len() > qp.words() / 2, "{}", ephemeral.len());

    let found = search_device_memory(
        if protected {
            "protected"
        } else {
            "unprotected"
        },
        [&secret, &plain, &dec, &ephemeral],
        &runs,
    );
    drop(keep);
    found
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn raw_memory_of_a_protected_context_holds_no_secret() {
    let _gpu = require_gpu("raw_memory_of_a_protected_context_holds_no_secret");
    let f = secrets_in_device_memory(true, [21; 32], 0.25);
    assert!(f.bytes > 1 << 20, "{f:?}");
    assert_eq!(f.secret_ntt, 0, "secret-key words in device memory: {f:?}");
    assert_eq!(
        f.secret_coeff_runs, 0,
        "secret-key runs in device memory: {f:?}"
    );
    assert_eq!(f.plaintext, 0, "plaintext words in device memory: {f:?}");
    assert_eq!(f.decrypted, 0, "decrypted words in device memory: {f:?}");
    assert_eq!(
        f.ephemeral, 0,
        "public-key encryption randomness in device memory: {f:?}"
    );
}

/// The same search unprotected finds the secrets: the test above can fail.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn raw_memory_of_an_unprotected_context_shows_the_secrets() {
    let _gpu = require_gpu("raw_memory_of_an_unprotected_context_shows_the_secrets");
    let f = secrets_in_device_memory(false, [22; 32], 0.75);
    assert!(f.secret_ntt > 1000, "{f:?}");
    assert!(f.plaintext > 1000, "{f:?}");
    assert!(f.decrypted > 1000, "{f:?}");
}

// ---------------------------------------------------------------------------------------- BGV

/// Bootstrapping keys in protected mode (`Bootstrapper::new_protected`: relinearisation,
/// conjugation, every rotation, the two encapsulation keys with the sparse secret protected):
/// from one seed, the same keys as `Bootstrapper::new`'s, so the same bootstrap words of one
/// ciphertext; the generators' streams stay aligned (their next public keys agree); the
/// protected decryption of the result gives the message.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn protected_bootstrapping_keys_are_bit_identical() {
    use rhea::ckks::bootstrap::{BootstrapPreset, Bootstrapper};
    let _gpu = require_gpu("protected_bootstrapping_keys_are_bit_identical");
    let preset = BootstrapPreset::by_name("boot_test_n12_insecure").unwrap();
    let params = preset.params.build().unwrap();
    let gpu = CkksContext::new(&params, GPU).unwrap();
    let cpu = CkksContext::new(&params, Device::Cpu).unwrap();
    let seed = [27u8; 32];
    // Protected first: then device memory holds no key of this seed in the clear (the
    // unprotected generator below puts `s` there).
    let protection = Protection::new(&gpu).unwrap();
    let mut kp = ProtectedKeyGenerator::from_seed(&gpu, &protection, seed).unwrap();
    let psk = Arc::new(kp.secret_key().unwrap());
    let mut reports = 0;
    let pboot = Bootstrapper::new_protected_with_progress(
        &gpu,
        &mut kp,
        &psk,
        preset.config.clone(),
        &mut |_| reports += 1,
    )
    .unwrap();
    assert!(reports > 4);
    let secret = distinctive(&cpu, secret_key_poly(psk.host_key()));
    assert!(secret.len() > 1000);
    let dump = rhea::unstable::cuda::GpuDevice::new(0)
        .unwrap()
        .raw_memory_dump()
        .unwrap();
    let found = dump
        .iter()
        .flat_map(|r| r.words.chunks_exact(2))
        .filter(|b| secret.contains(&[b[0], b[1]]))
        .count();
    assert_eq!(
        found, 0,
        "secret-key words in device memory after the protected keys"
    );
    drop(dump);
    let mut kg = KeyGenerator::from_seed(&gpu, seed);
    let sk = kg.secret_key().unwrap();
    let boot = Bootstrapper::new(&gpu, &mut kg, &sk, preset.config.clone()).unwrap();
    assert_eq!(pboot.keyswitch_keys(), boot.keyswitch_keys());
    assert_eq!(pboot.key_bytes(), boot.key_bytes());
    assert_eq!(pboot.rotations(), boot.rotations());
    let pk = kg.public_key(&sk).unwrap();
    let ppk = kp.public_key(&psk).unwrap();
    for i in 0..2 {
        assert_eq!(
            words(&gpu, &public_key_parts(&ppk)[i]),
            words(&gpu, &public_key_parts(&pk)[i]),
            "the next key after the bootstrapping keys: pk[{i}]"
        );
    }

    let enc_host = Encoder::new(&cpu).unwrap();
    let m = message(enc_host.slots(), 0.6);
    let pt = enc_host.encode(&m).unwrap();
    let ct = Encryptor::with_secret_key(&gpu, &sk)
        .unwrap()
        .with_seed([28; 32])
        .encrypt(&pt.to_device(&gpu).unwrap())
        .unwrap();
    let low = Evaluator::new(&gpu)
        .drop_to_level(&ct, boot.input_level())
        .unwrap();
    let out = boot.bootstrap(&low).unwrap();
    let pout = pboot.bootstrap(&low).unwrap();
    assert_eq!(
        ct_words(&gpu, &pout),
        ct_words(&gpu, &out),
        "bootstrap words"
    );
    let got = enc_host
        .decode(
            &ProtectedDecryptor::new(&gpu, psk)
                .unwrap()
                .decrypt(&pout)
                .unwrap(),
        )
        .unwrap();
    let err = got
        .iter()
        .zip(&m)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(err < 1e-3, "bootstrapped values off by {err}");
    // A generator of another seed gives other keys: the comparison above can fail.
    let mut ko = ProtectedKeyGenerator::from_seed(&gpu, &protection, seed).unwrap();
    let osk = ko.secret_key().unwrap();
    let mut ko = ProtectedKeyGenerator::from_seed(&gpu, &protection, [29; 32]).unwrap();
    let oboot = Bootstrapper::new_protected(&gpu, &mut ko, &osk, preset.config).unwrap();
    assert_ne!(
        ct_words(&gpu, &oboot.bootstrap(&low).unwrap()),
        ct_words(&gpu, &out),
        "keys of another stream"
    );
}
