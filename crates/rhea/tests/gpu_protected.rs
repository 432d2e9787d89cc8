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
//! - `bgv_protected_mode_is_bit_identical`, `bgv_raw_memory_*`: the same for BGV's façade
//!   (keys, secret- and public-key encryption, decryption and noise budget, mul+relin exact; the
//!   search adds `t^{-1}·m` and the decryption's phase `Σ ĉ_i·s^i` and `t` times it).
//! - `protected_bootstrapping_keys_are_bit_identical`: `Bootstrapper::new_protected` makes the
//!   keys of `Bootstrapper::new` (same bootstrap words from one seed), with no word of `s` in
//!   device memory.
//!
//! Every test is `#[ignore]`d: a machine without a GPU lists them as ignored;
//! `--include-ignored` runs them, and then a missing GPU is a failure.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

use rhea::backend::Poly;
use rhea::bgv::{self, BgvContext};
use rhea::ckks::{
    Ciphertext, CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator, Plaintext,
    ProtectedDecryptor, ProtectedEncryptor, ProtectedKeyGenerator, ProtectedPlaintext,
};
use rhea::params::{CkksParameters, CkksParametersLiteral};
use rhea::rlwe::{KeySwitchKey, Protection};
use rhea::unstable::math::sampler::Prng;
use rhea::unstable::{public_key_parts, secret_key_poly, HasRing};
use rhea::Device;

const GPU: Device = Device::Cuda(0);

/// One test at a time on the GPU: the raw-memory tests read the whole pool.
static GPU_LOCK: Mutex<()> = Mutex::new(());

#[track_caller]
fn require_gpu(test: &str) -> MutexGuard<'static, ()> {
    if let Err(e) = GPU.check_supported() {
        panic!(
            "{test}: needs a CUDA GPU, and none is usable ({e}); GPU tests are #[ignore]d: run \
             them on a GPU machine (scripts/gpu-run.sh), or leave out --include-ignored"
        );
    }
    GPU_LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

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

/// What the raw-memory search found.
#[derive(Debug, Default)]
struct Found {
    /// 16-byte blocks of `s` (NTT form, over `Q ∪ P`) found, of the distinct ones searched.
    secret_ntt: usize,
    /// 32-word runs of `s` in coefficient form found.
    secret_coeff_runs: usize,
    /// Blocks of the encoded plaintext found.
    plaintext: usize,
    /// Blocks of the decrypted plaintext found.
    decrypted: usize,
    /// Blocks of a public-key encryption's `v`, `e_0`, `e_1` (NTT form over `Q_ℓ ∪ P`) found.
    ephemeral: usize,
    /// Bytes of device memory searched.
    bytes: usize,
}

/// The 16-byte blocks of `p` (host copy: aligned pairs of words of one limb) worth searching
/// for: both words at least 2^32 from 0 and from the limb's modulus (small integers and their
/// negatives are everywhere). Pairs, not words: with ~40-bit primes a single word of a searched
/// set of 10^5 turns up by chance in ~10^7 words of ciphertext (one such match was measured),
/// a pair does not (~2^-80 a block).
fn distinctive(ctx: &CkksContext, p: &Poly) -> HashSet<[u64; 2]> {
    distinctive_in(ctx.ring(), p)
}

/// [`distinctive`] for a polynomial of any ring's (a BGV context's).
fn distinctive_in(ring: &rhea::unstable::RnsRing, p: &Poly) -> HashSet<[u64; 2]> {
    let shape = p.shape();
    let w = ring.download(p).unwrap();
    w.chunks(shape.n)
        .enumerate()
        .flat_map(|(i, limb)| {
            let q = ring.modulus(&shape, i).value();
            let ok = move |x: u64| x >= 1 << 32 && x <= q - (1 << 32);
            limb.chunks_exact(2)
                .filter(move |b| ok(b[0]) && ok(b[1]))
                .map(|b| [b[0], b[1]])
                .collect::<Vec<_>>()
        })
        .collect()
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

    let dev = rhea::unstable::cuda::GpuDevice::new(0).unwrap();
    let dump = dev.raw_memory_dump().unwrap();
    let mut found = Found::default();
    let (mut fs, mut fp, mut fd, mut fe) = (
        HashSet::new(),
        HashSet::new(),
        HashSet::new(),
        HashSet::new(),
    );
    for region in &dump {
        found.bytes += 8 * region.words.len();
        for b in region.words.chunks_exact(2) {
            let w = [b[0], b[1]];
            if secret.contains(&w) {
                fs.insert(w);
            }
            if plain.contains(&w) {
                fp.insert(w);
            }
            if dec.contains(&w) {
                fd.insert(w);
            }
            if ephemeral.contains(&w) {
                fe.insert(w);
            }
        }
        found.secret_coeff_runs += region
            .words
            .chunks_exact(32)
            .filter(|c| runs.contains(c))
            .count();
    }
    (
        found.secret_ntt,
        found.plaintext,
        found.decrypted,
        found.ephemeral,
    ) = (fs.len(), fp.len(), fd.len(), fe.len());
    println!(
        "{}: {found:?} (searched {} distinct secret blocks, {} plaintext, {} decrypted, {} \
         ephemeral, {} runs; {} regions)",
        if protected {
            "protected"
        } else {
            "unprotected"
        },
        secret.len(),
        plain.len(),
        dec.len(),
        ephemeral.len(),
        runs.len(),
        dump.len()
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

fn bgv_params() -> bgv::BgvParameters {
    bgv::BgvParametersLiteral::test_n12_levels5_insecure()
        .build()
        .unwrap()
}

fn bgv_ct_words(ctx: &BgvContext, ct: &bgv::Ciphertext) -> Vec<Vec<u64>> {
    ct.parts()
        .iter()
        .map(|p| ctx.ring().download(p).unwrap())
        .collect()
}

/// `n` pseudo-random values modulo `t` (splitmix64 from `seed`).
fn random_mod_t(n: usize, t: u64, seed: u64) -> Vec<u64> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % t
        })
        .collect()
}

/// BGV in protected mode: keys from one seed equal the unprotected GPU's and the CPU's words;
/// secret- and public-key encryptions of protected plaintexts equal `Encryptor`'s (same seed)
/// at two levels; protected decryption equals `Decryptor`'s result (noise budget included) and
/// gives the messages; a mul+relin of protected encryptions decrypts to the product exactly;
/// 3 components decrypt too; a foreign session and a GPU plaintext are refused.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn bgv_protected_mode_is_bit_identical() {
    let _gpu = require_gpu("bgv_protected_mode_is_bit_identical");
    let params = bgv_params();
    let gpu = BgvContext::new(&params, GPU).unwrap();
    let cpu = BgvContext::new(&params, Device::Cpu).unwrap();
    let seed = [17u8; 32];
    let (steps, swap) = (&[1i64, -2][..], true);

    let mut kg = bgv::KeyGenerator::from_seed(&gpu, seed);
    let sk = kg.secret_key().unwrap();
    let pk = kg.public_key(&sk).unwrap();
    let rlk = kg.relinearization_key(&sk).unwrap();
    let gk = kg.galois_keys(&sk, steps, swap).unwrap();
    let mut kc = bgv::KeyGenerator::from_seed(&cpu, seed);
    let sk_c = kc.secret_key().unwrap();
    let pk_c = kc.public_key(&sk_c).unwrap();
    let rlk_c = kc.relinearization_key(&sk_c).unwrap();
    let gk_c = kc.galois_keys(&sk_c, steps, swap).unwrap();
    let protection = Protection::new(&gpu).unwrap();
    let mut kp = bgv::ProtectedKeyGenerator::from_seed(&gpu, &protection, seed).unwrap();
    let psk = Arc::new(kp.secret_key().unwrap());
    let ppk = kp.public_key(&psk).unwrap();
    let prlk = kp.relinearization_key(&psk).unwrap();
    let pgk = kp.galois_keys(&psk, steps, swap).unwrap();

    let (rg, rc) = (gpu.ring(), cpu.ring());
    let s = rg.download(secret_key_poly(&sk)).unwrap();
    assert_eq!(rc.download(secret_key_poly(psk.host_key())).unwrap(), s);
    assert_eq!(rc.download(secret_key_poly(&sk_c)).unwrap(), s, "CPU");
    for i in 0..2 {
        let want = rg.download(&public_key_parts(&pk)[i]).unwrap();
        assert_eq!(
            rg.download(&public_key_parts(&ppk)[i]).unwrap(),
            want,
            "pk[{i}]"
        );
        assert_eq!(
            rc.download(&public_key_parts(&pk_c)[i]).unwrap(),
            want,
            "pk[{i}] CPU"
        );
    }
    let ksk = |r: &rhea::unstable::RnsRing, k: &KeySwitchKey| -> Vec<Vec<u64>> {
        k.parts()
            .iter()
            .flatten()
            .map(|p| r.download(p).unwrap())
            .collect()
    };
    let want = ksk(rg, rlk.key());
    assert_eq!(ksk(rg, prlk.key()), want, "relinearisation key");
    assert_eq!(ksk(rc, rlk_c.key()), want, "relinearisation key (CPU)");
    assert_eq!(pgk.elements(), gk.elements());
    assert_eq!(gk.len(), 3);
    for g in gk.elements() {
        let want = ksk(rg, gk.get(g).unwrap());
        assert_eq!(ksk(rg, pgk.get(g).unwrap()), want, "Galois key {g}");
        assert_eq!(ksk(rc, gk_c.get(g).unwrap()), want, "Galois key {g} (CPU)");
    }

    let encoder = bgv::Encoder::new(&cpu).unwrap();
    let t = params.t();
    let dec = bgv::Decryptor::new(&gpu, &sk).unwrap();
    let pdec = bgv::ProtectedDecryptor::new(&gpu, psk.clone()).unwrap();
    let eval = bgv::Evaluator::new(&gpu)
        .with_relinearization_key(prlk)
        .unwrap();
    for (k, level) in [params.max_level(), 1].into_iter().enumerate() {
        let eseed = [40 + k as u8; 32];
        let xs = random_mod_t(encoder.slots(), t, 7 + k as u64);
        let ys = random_mod_t(encoder.slots(), t, 70 + k as u64);
        let (px, py) = (
            encoder.encode_at(&xs, level).unwrap(),
            encoder.encode_at(&ys, level).unwrap(),
        );
        let (ppx, ppy) = (
            bgv::ProtectedPlaintext::new(&gpu, &protection, &px).unwrap(),
            bgv::ProtectedPlaintext::new(&gpu, &protection, &py).unwrap(),
        );
        assert_eq!(ppx.level(), level);
        // Secret key.
        let want = bgv::Encryptor::with_secret_key(&gpu, &sk)
            .unwrap()
            .with_seed(eseed)
            .encrypt(&px.to_device(&gpu).unwrap())
            .unwrap();
        let x = bgv::ProtectedEncryptor::new(&gpu, psk.clone())
            .unwrap()
            .with_seed(eseed)
            .encrypt(&ppx)
            .unwrap();
        assert_eq!(
            bgv_ct_words(&gpu, &x),
            bgv_ct_words(&gpu, &want),
            "level {level}: sk"
        );
        assert_eq!(x.seed(), want.seed());
        assert_eq!(x.noise_bound_bits(), want.noise_bound_bits());
        // Public key (the GPU's and the CPU's copy of the key).
        let want = bgv::Encryptor::new(&gpu, &pk)
            .unwrap()
            .with_seed(eseed)
            .encrypt(&py.to_device(&gpu).unwrap())
            .unwrap();
        let want_c = bgv::Encryptor::new(&cpu, &pk_c)
            .unwrap()
            .with_seed(eseed)
            .encrypt(&py)
            .unwrap();
        assert_eq!(bgv_ct_words(&cpu, &want_c), bgv_ct_words(&gpu, &want));
        let mut y = None;
        for key in [&ppk, &pk_c] {
            let penc = bgv::ProtectedEncryptor::with_public_key(&gpu, key, &protection)
                .unwrap()
                .with_seed(eseed);
            assert!(!penc.uses_secret_key());
            let c = penc.encrypt(&ppy).unwrap();
            assert_eq!(
                bgv_ct_words(&gpu, &c),
                bgv_ct_words(&gpu, &want),
                "level {level}: pk"
            );
            assert!(c.seed().is_none());
            assert_eq!(c.noise_bound_bits(), want.noise_bound_bits());
            y = Some(c);
        }
        let y = y.unwrap();
        // Decryption: the Decryptor's result, and the messages.
        for (ct, msg) in [(&x, &xs), (&y, &ys)] {
            let d = pdec.decrypt(ct).unwrap();
            assert_eq!(d, dec.decrypt(ct).unwrap(), "level {level}");
            assert_eq!(&encoder.decode(&d).unwrap(), msg, "level {level}");
            assert_eq!(
                pdec.noise_budget(ct).unwrap(),
                dec.noise_budget(ct).unwrap()
            );
        }
        // mul+relin on protected encryptions, and 3 components.
        let prod: Vec<u64> = xs
            .iter()
            .zip(&ys)
            .map(|(&a, &b)| ((a as u128 * b as u128) % t as u128) as u64)
            .collect();
        let z = eval.mul(&x, &y).unwrap();
        let d = pdec.decrypt(&z).unwrap();
        assert_eq!(d, dec.decrypt(&z).unwrap(), "level {level}: x·y");
        assert_eq!(encoder.decode(&d).unwrap(), prod, "level {level}: x·y");
        let three = eval.mul_no_relin(&x, &y).unwrap();
        assert_eq!(three.len(), 3);
        let d = pdec.decrypt(&three).unwrap();
        assert_eq!(
            d,
            dec.decrypt(&three).unwrap(),
            "level {level}: 3 components"
        );
        assert_eq!(encoder.decode(&d).unwrap(), prod);
    }

    // Errors: a plaintext of another session, a plaintext on the GPU, a CPU context.
    let pt = encoder.encode(&random_mod_t(8, t, 1)).unwrap();
    let other = Protection::new(&gpu).unwrap();
    let foreign = bgv::ProtectedPlaintext::new(&gpu, &other, &pt).unwrap();
    assert!(matches!(
        bgv::ProtectedEncryptor::new(&gpu, psk.clone())
            .unwrap()
            .encrypt(&foreign),
        Err(rhea::Error::InvalidInput(_))
    ));
    assert!(matches!(
        bgv::ProtectedEncryptor::with_public_key(&gpu, &ppk, &protection)
            .unwrap()
            .encrypt(&foreign),
        Err(rhea::Error::InvalidInput(_))
    ));
    assert!(matches!(
        bgv::ProtectedPlaintext::new(&gpu, &protection, &pt.to_device(&gpu).unwrap()),
        Err(rhea::Error::InvalidInput(_))
    ));
    assert!(matches!(
        bgv::ProtectedKeyGenerator::new(&cpu, &protection),
        Err(rhea::Error::DeviceMismatch { .. })
    ));
    assert!(matches!(
        bgv::ProtectedEncryptor::with_public_key(&cpu, &pk_c, &protection),
        Err(rhea::Error::DeviceMismatch { .. })
    ));
}

/// BGV's raw-memory search: keys (secret, public, relinearisation, one row rotation), a
/// secret- and a public-key encryption, a mul+relin, a rotation and a decryption on the GPU,
/// protected or not, then every pool allocation searched for `s` (NTT over `Q ∪ P`, and
/// coefficient runs), the encoded plaintexts `m` and what the RLWE core encrypts for them
/// (`t^{-1}·m`), the decryption's RLWE phase `Σ ĉ_i·s^i` (NTT form, recomputed on the host) and
/// `t` times it, and the public-key encryption's `v`, `e_0`, `e_1`.
fn bgv_secrets_in_device_memory(protected: bool, seed: [u8; 32]) -> Found {
    let params = bgv_params();
    let gpu = BgvContext::new(&params, GPU).unwrap();
    let cpu = BgvContext::new(&params, Device::Cpu).unwrap();
    let rc = cpu.ring();
    let encoder = bgv::Encoder::new(&cpu).unwrap();
    let t = params.t();
    let px = encoder
        .encode(&random_mod_t(encoder.slots(), t, seed[0] as u64))
        .unwrap();
    let py = encoder
        .encode(&random_mod_t(encoder.slots(), t, 1000 + seed[0] as u64))
        .unwrap();
    let eseed = [seed[0] ^ 0x44; 32];
    let mut keep: Vec<Box<dyn std::any::Any>> = Vec::new();
    let (s_host, out) = if protected {
        let protection = Protection::new(&gpu).unwrap();
        let mut kg = bgv::ProtectedKeyGenerator::from_seed(&gpu, &protection, seed).unwrap();
        let sk = Arc::new(kg.secret_key().unwrap());
        let pk = kg.public_key(&sk).unwrap();
        let rlk = kg.relinearization_key(&sk).unwrap();
        let gk = kg.galois_keys(&sk, &[1], false).unwrap();
        let ppx = bgv::ProtectedPlaintext::new(&gpu, &protection, &px).unwrap();
        let ppy = bgv::ProtectedPlaintext::new(&gpu, &protection, &py).unwrap();
        let x = bgv::ProtectedEncryptor::new(&gpu, sk.clone())
            .unwrap()
            .encrypt(&ppx)
            .unwrap();
        let y = bgv::ProtectedEncryptor::with_public_key(&gpu, &pk, &protection)
            .unwrap()
            .with_seed(eseed)
            .encrypt(&ppy)
            .unwrap();
        let eval = bgv::Evaluator::new(&gpu)
            .with_relinearization_key(rlk)
            .unwrap()
            .with_galois_keys(gk)
            .unwrap();
        let z = eval.rotate_rows(&eval.mul(&x, &y).unwrap(), 1).unwrap();
        let d = bgv::ProtectedDecryptor::new(&gpu, sk.clone())
            .unwrap()
            .decrypt(&z)
            .unwrap();
        let s = secret_key_poly(sk.host_key()).try_clone().unwrap();
        let out = z.to_device(&cpu).unwrap();
        keep.extend([
            Box::new(sk) as Box<dyn std::any::Any>,
            Box::new(pk),
            Box::new(ppx),
            Box::new(ppy),
            Box::new(y),
            Box::new(z),
            Box::new(d),
        ]);
        (s, out)
    } else {
        let mut kg = bgv::KeyGenerator::from_seed(&gpu, seed);
        let sk = kg.secret_key().unwrap();
        let pk = kg.public_key(&sk).unwrap();
        let rlk = kg.relinearization_key(&sk).unwrap();
        let gk = kg.galois_keys(&sk, &[1], false).unwrap();
        let (gx, gy) = (px.to_device(&gpu).unwrap(), py.to_device(&gpu).unwrap());
        let x = bgv::Encryptor::with_secret_key(&gpu, &sk)
            .unwrap()
            .encrypt(&gx)
            .unwrap();
        let y = bgv::Encryptor::new(&gpu, &pk)
            .unwrap()
            .with_seed(eseed)
            .encrypt(&gy)
            .unwrap();
        let eval = bgv::Evaluator::new(&gpu)
            .with_relinearization_key(rlk)
            .unwrap()
            .with_galois_keys(gk)
            .unwrap();
        let z = eval.rotate_rows(&eval.mul(&x, &y).unwrap(), 1).unwrap();
        let d = bgv::Decryptor::new(&gpu, &sk).unwrap().decrypt(&z).unwrap();
        let s = rc
            .upload(
                Device::Cpu,
                gpu.ring().download(secret_key_poly(&sk)).unwrap(),
                rc.full_shape(),
                rhea::backend::Form::Ntt,
            )
            .unwrap();
        let out = z.to_device(&cpu).unwrap();
        keep.extend([
            Box::new(sk) as Box<dyn std::any::Any>,
            Box::new(pk),
            Box::new(gx),
            Box::new(gy),
            Box::new(y),
            Box::new(z),
            Box::new(d),
        ]);
        (s, out)
    };
    let secret = distinctive_in(rc, &s_host);
    let n = rc.n();
    let mut coeff = s_host.try_clone().unwrap();
    rc.ntt_inverse(&mut coeff).unwrap();
    let coeff = rc.download(&coeff).unwrap();
    let runs: HashSet<&[u64]> = coeff
        .chunks(32)
        .filter(|r| r.iter().filter(|&&x| x != 0).count() >= 8)
        .collect();
    // m and t^{-1}·m (per limb t^{-1} mod q_i).
    let mut plain = HashSet::new();
    for pt in [&px, &py] {
        let shape = pt.poly().shape();
        let t_inv: Vec<u64> = (0..shape.limbs())
            .map(|i| {
                let q = rc.modulus(&shape, i);
                q.inv(q.reduce(t)).unwrap()
            })
            .collect();
        let mut lifted = pt.poly().try_clone().unwrap();
        rc.mul_scalar_assign(&mut lifted, &t_inv).unwrap();
        plain.extend(distinctive_in(rc, pt.poly()));
        plain.extend(distinctive_in(rc, &lifted));
    }
    // The decryption's phase: w = ĉ_0 + ĉ_1·s over the output's limbs, and t·w.
    let limbs = out.parts()[0].shape().q_limbs;
    let shape = rc.shape_q(limbs);
    let s_words = rc.download(&s_host).unwrap();
    let s_q = rc
        .upload(
            Device::Cpu,
            s_words[..limbs * n].to_vec(),
            shape,
            rhea::backend::Form::Ntt,
        )
        .unwrap();
    let mut w = rc.mul(&out.parts()[1], &s_q).unwrap();
    rc.add_assign(&mut w, &out.parts()[0]).unwrap();
    let mut dec = distinctive_in(rc, &w);
    let t_mod: Vec<u64> = (0..limbs)
        .map(|i| rc.modulus(&shape, i).reduce(t))
        .collect();
    rc.mul_scalar_assign(&mut w, &t_mod).unwrap();
    dec.extend(distinctive_in(rc, &w));
    // The public-key encryption's v, e_0, e_1 over Q_ℓ ∪ P (ℓ the top level).
    let qp = rc.shape_qp(py.level() + 1);
    let mut rng = Prng::from_seed(eseed);
    let sigma = params.error_std_dev();
    let v = rc.sample_ternary(Device::Cpu, &mut rng, qp).unwrap();
    let e0 = rc
        .sample_gaussian(Device::Cpu, &mut rng, sigma, qp)
        .unwrap();
    let e1 = rc
        .sample_gaussian(Device::Cpu, &mut rng, sigma, qp)
        .unwrap();
    let ephemeral: HashSet<[u64; 2]> = [v, e0, e1]
        .iter()
        .flat_map(|p| distinctive_in(rc, p))
        .collect();
    assert!(
        secret.len() > rc.full_shape().words() / 8,
        "{}",
        secret.len()
    );
    assert!(plain.len() > 1000 && dec.len() > 1000 && ephemeral.len() > 1000);
    assert!(runs.len() > coeff.len() / 64);

    let dev = rhea::unstable::cuda::GpuDevice::new(0).unwrap();
    let dump = dev.raw_memory_dump().unwrap();
    let mut found = Found::default();
    let mut sets: [HashSet<[u64; 2]>; 4] = Default::default();
    for region in &dump {
        found.bytes += 8 * region.words.len();
        for b in region.words.chunks_exact(2) {
            let w = [b[0], b[1]];
            for (k, set) in [&secret, &plain, &dec, &ephemeral].into_iter().enumerate() {
                if set.contains(&w) {
                    sets[k].insert(w);
                }
            }
        }
        found.secret_coeff_runs += region
            .words
            .chunks_exact(32)
            .filter(|c| runs.contains(c))
            .count();
    }
    [
        found.secret_ntt,
        found.plaintext,
        found.decrypted,
        found.ephemeral,
    ] = sets.map(|s| s.len());
    println!(
        "BGV {}: {found:?} (searched {} secret blocks, {} plaintext, {} phase, {} ephemeral, {} \
         runs; {} regions)",
        if protected {
            "protected"
        } else {
            "unprotected"
        },
        secret.len(),
        plain.len(),
        dec.len(),
        ephemeral.len(),
        runs.len(),
        dump.len()
    );
    drop(keep);
    found
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn bgv_raw_memory_of_a_protected_context_holds_no_secret() {
    let _gpu = require_gpu("bgv_raw_memory_of_a_protected_context_holds_no_secret");
    let f = bgv_secrets_in_device_memory(true, [23; 32]);
    assert!(f.bytes > 1 << 20, "{f:?}");
    assert_eq!(f.secret_ntt, 0, "secret-key words in device memory: {f:?}");
    assert_eq!(
        f.secret_coeff_runs, 0,
        "secret-key runs in device memory: {f:?}"
    );
    assert_eq!(f.plaintext, 0, "plaintext words in device memory: {f:?}");
    assert_eq!(
        f.decrypted, 0,
        "decryption phase words in device memory: {f:?}"
    );
    assert_eq!(f.ephemeral, 0, "public-key encryption randomness: {f:?}");
}

/// The same search unprotected finds the key and the plaintexts: the test above can fail (the
/// phase and the ephemerals are printed, not asserted: the unprotected path overwrites or
/// zeroises some of them in place).
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn bgv_raw_memory_of_an_unprotected_context_shows_the_secrets() {
    let _gpu = require_gpu("bgv_raw_memory_of_an_unprotected_context_shows_the_secrets");
    let f = bgv_secrets_in_device_memory(false, [24; 32]);
    assert!(f.secret_ntt > 1000, "{f:?}");
    assert!(f.plaintext > 1000, "{f:?}");
}

// ------------------------------------------------------------------------------ bootstrapping

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
