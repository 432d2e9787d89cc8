//! End-to-end bootstrapping on the CPU: a ciphertext at its lowest bootstrappable level (3,
//! SlotToCoeff's levels at the bottom of the chain) refreshed to a higher level, its slots kept
//! up to the bootstrapping error. INSECURE small ring (N = 2^12) with the chain the pipeline
//! needs: 40-bit primes for SlotToCoeff (3) at the bottom, the levels left to the user, 60-bit
//! primes for EvalMod (8 with the default degree-60 cosine, 10 with an arcsine) and CoeffToSlot
//! (3 levels).

mod common;

use common::{precision_bits_complex, random_complex};
use rhea::ckks::bootstrap::{BootstrapConfig, BootstrapPreset, Bootstrapper};
use rhea::ckks::{
    CkksContext, Decryptor, DiagonalStorage, Encoder, Encryptor, Evaluator, KeyGenerator,
    RotationKeys,
};
use rhea::params::CkksParametersLiteral;
use rhea::unstable::HasRing;
use rhea::Device;

fn literal() -> CkksParametersLiteral {
    let mut log_q = vec![60, 40, 40, 40, 40];
    log_q.extend([60; 13]);
    CkksParametersLiteral {
        log_n: 12,
        log_q,
        log_p: vec![61; 5],
        log_default_scale: 40,
        dnum: 4,
        ..CkksParametersLiteral::test_n13_levels10_insecure()
    }
}

#[test]
fn bootstrapping_refreshes_a_ciphertext_at_the_input_level() {
    let params = literal().build().unwrap();
    let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [21; 32]);
    let sk = keygen.secret_key().unwrap();
    // (cosine degree, double angles, arcsine degree, levels used, bits at least). Measured
    // (min): 23.1 bits with the defaults (degree 60, 2 double angles), 23.1 with degree 40 and 3
    // double angles (one level more), 17.2 at degree 30 with 3 (its fit error, times 4 per
    // double angle, is then the largest error), 20.5 with an arcsine (a loss at this ratio).
    for (degree, double_angles, arcsine, depth, min_bits) in [
        (60, 2, None, 14, 22.5),
        (40, 3, None, 15, 22.5),
        (30, 3, None, 14, 16.5),
        (60, 2, Some(3), 16, 20.0),
    ] {
        let mut config = BootstrapConfig::full_slots(&ctx);
        config.eval_mod.degree = degree;
        config.eval_mod.double_angles = double_angles;
        config.eval_mod.arcsine_degree = arcsine;
        assert_eq!(config.depth(), depth);
        let boot = Bootstrapper::new(&ctx, &mut keygen, &sk, config).unwrap();
        assert_eq!(boot.depth(), depth);
        assert_eq!(boot.input_level(), 3);
        assert_eq!(boot.output_level(), 17 - (depth - 3));
        let encoder = Encoder::new(&ctx).unwrap();
        let z = random_complex(encoder.slots(), 77);
        let ct = Encryptor::with_secret_key(&ctx, &sk)
            .unwrap()
            .with_seed([8; 32])
            .encrypt(&encoder.encode_complex(&z).unwrap())
            .unwrap();
        let low = Evaluator::new(&ctx).drop_to_level(&ct, 3).unwrap();
        let before = ctx.keyswitches();
        let out = boot.bootstrap(&low).unwrap();
        let keyswitches = ctx.keyswitches() - before;
        assert_eq!(
            (out.level(), out.scale()),
            (17 - (depth - 3), boot.output_scale())
        );
        let got = encoder
            .decode_complex(&Decryptor::new(&ctx, &sk).unwrap().decrypt(&out).unwrap())
            .unwrap();
        let bits = precision_bits_complex(&got, &z);
        eprintln!(
            "cosine degree {degree}, {double_angles} double angles, arcsine {arcsine:?}: \
             {bits:.1} bits, {keyswitches} key switchings"
        );
        assert!(
            bits >= min_bits,
            "degree {degree}, arcsine {arcsine:?}: {bits:.1} bits"
        );
    }
}

/// The smaller-key option: CoeffToSlot and SlotToCoeff with chained baby steps need a few
/// rotation keys per DFT level (9 in all here instead of 25), the bootstrap as precise.
#[test]
fn fewest_rotation_keys_bootstrap() {
    let params = literal().build().unwrap();
    let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [22; 32]);
    let sk = keygen.secret_key().unwrap();
    let encoder = Encoder::new(&ctx).unwrap();
    let z = random_complex(encoder.slots(), 79);
    let ct = Encryptor::with_secret_key(&ctx, &sk)
        .unwrap()
        .with_seed([7; 32])
        .encrypt(&encoder.encode_complex(&z).unwrap())
        .unwrap();
    let mut results = Vec::new();
    for keys in [RotationKeys::PerBabyStep, RotationKeys::Fewest] {
        let mut config = BootstrapConfig::full_slots(&ctx);
        config.rotation_keys = keys;
        let boot = Bootstrapper::new(&ctx, &mut keygen, &sk, config).unwrap();
        let before = ctx.keyswitches();
        let out = boot.bootstrap(&ct).unwrap();
        let keyswitches = ctx.keyswitches() - before;
        assert_eq!(out.level(), boot.output_level());
        let got = encoder
            .decode_complex(&Decryptor::new(&ctx, &sk).unwrap().decrypt(&out).unwrap())
            .unwrap();
        let bits = precision_bits_complex(&got, &z);
        eprintln!(
            "{keys:?}: {} rotation keys, {:.1} MB of keys, {keyswitches} key switchings, \
             {bits:.1} bits",
            boot.rotations().len(),
            boot.key_bytes() as f64 / 1e6
        );
        assert!(bits >= 22.0, "{keys:?}: {bits:.1} bits");
        results.push((boot.rotations().len(), boot.key_bytes()));
    }
    let (full, fewest) = (results[0], results[1]);
    assert_eq!(fewest.0, 9, "three per DFT level");
    assert!(fewest.0 * 2 < full.0, "{fewest:?} against {full:?}");
    assert!(fewest.1 * 2 < full.1, "{fewest:?} against {full:?}");
}

/// One bootstrap from fixed seeds on `device`, the DFT's baby steps and matrices as given:
/// (precision bits, the result's words).
fn seeded_bootstrap(
    device: Device,
    keys: RotationKeys,
    storage: DiagonalStorage,
) -> (f64, Vec<Vec<u64>>, u64) {
    let params = literal().build().unwrap();
    let ctx = CkksContext::new(&params, device).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [21; 32]);
    let sk = keygen.secret_key().unwrap();
    let mut config = BootstrapConfig::full_slots(&ctx);
    config.rotation_keys = keys;
    config.diagonal_storage = storage;
    let boot = Bootstrapper::new(&ctx, &mut keygen, &sk, config).unwrap();
    let encoder = Encoder::new(&ctx).unwrap();
    let z = random_complex(encoder.slots(), 78);
    let ct = Encryptor::with_secret_key(&ctx, &sk)
        .unwrap()
        .with_seed([9; 32])
        .encrypt(&encoder.encode_complex(&z).unwrap())
        .unwrap();
    let low = Evaluator::new(&ctx).drop_to_level(&ct, 3).unwrap();
    let out = boot.bootstrap(&low).unwrap();
    let got = encoder
        .decode_complex(&Decryptor::new(&ctx, &sk).unwrap().decrypt(&out).unwrap())
        .unwrap();
    let words: Vec<Vec<u64>> = out
        .parts()
        .iter()
        .map(|p| ctx.ring().download(p).unwrap())
        .collect();
    (precision_bits_complex(&got, &z), words, boot.matrix_bytes())
}

/// Compact DFT matrices (one limb a diagonal, expanded at each bootstrap) give the words of
/// whole ones.
#[test]
fn compact_dft_matrices_bootstrap_to_the_same_words() {
    let keys = RotationKeys::PerBabyStep;
    let (bits, full, full_bytes) = seeded_bootstrap(Device::Cpu, keys, DiagonalStorage::Full);
    let (_, compact, compact_bytes) = seeded_bootstrap(Device::Cpu, keys, DiagonalStorage::Compact);
    assert!(bits >= 16.0, "{bits:.1} bits");
    assert!(full == compact, "compact matrices change the words");
    eprintln!("DFT matrices: {full_bytes} bytes whole, {compact_bytes} compact");
    // Every diagonal lifts: one limb instead of ~10 to ~20 (Q_ℓ ∪ P at CoeffToSlot's and
    // SlotToCoeff's levels).
    assert!(
        compact_bytes * 8 < full_bytes,
        "{compact_bytes} of {full_bytes}"
    );
}

/// The same bootstrapping on the GPU, from the same seeds: the same words as on the CPU.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn bootstrapping_on_the_gpu_matches_the_cpu() {
    for (keys, storage) in [
        (RotationKeys::PerBabyStep, DiagonalStorage::Full),
        (RotationKeys::Fewest, DiagonalStorage::Full),
        (RotationKeys::PerBabyStep, DiagonalStorage::Compact),
    ] {
        let (cpu_bits, cpu, _) = seeded_bootstrap(Device::Cpu, keys, DiagonalStorage::Full);
        let (gpu_bits, gpu, _) = seeded_bootstrap(Device::Cuda(0), keys, storage);
        eprintln!(
            "bootstrapping ({keys:?}, {storage:?} on the GPU): CPU {cpu_bits:.1} bits, GPU \
             {gpu_bits:.1} bits"
        );
        assert!(gpu_bits >= 16.0);
        assert!(
            cpu == gpu,
            "{keys:?}, {storage:?}: the GPU's words differ from the CPU's"
        );
    }
}

/// The insecure preset (the 128-bit chain's layout at N = 2^12): a fresh encryption sits at the
/// user's top level; bootstrapped from the lowest level it accepts (SlotToCoeff's 3), it comes
/// back there, at `Δ`.
#[test]
fn the_insecure_preset_bootstraps_to_the_users_top_level() {
    let preset = BootstrapPreset::by_name("boot_test_n12_insecure").unwrap();
    let params = preset.params.build().unwrap();
    let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [22; 32]);
    let sk = keygen.secret_key().unwrap();
    let depth = preset.config.depth();
    let mut reports = Vec::new();
    let boot = Bootstrapper::new_with_progress(&ctx, &mut keygen, &sk, preset.config, &mut |p| {
        reports.push(p)
    })
    .unwrap();
    // One report per key (the two encapsulation keys come together), in order, the last with
    // every key and all their bytes.
    let last = *reports.last().unwrap();
    assert_eq!(reports.len(), last.total - 1);
    assert!(reports
        .windows(2)
        .all(|w| w[0].done < w[1].done && w[0].bytes < w[1].bytes));
    assert_eq!(last.total, boot.rotations().len() + 4);
    assert_eq!(boot.keyswitch_keys(), last.total);
    assert_eq!(last.bytes, boot.key_bytes());
    assert_eq!(boot.depth(), depth);
    assert_eq!(boot.output_level(), params.default_level());
    assert_eq!(boot.input_level(), 3);
    assert_eq!(boot.user_levels(), 2);
    let encoder = Encoder::new(&ctx).unwrap();
    let z = random_complex(encoder.slots(), 79);
    let ct = Encryptor::with_secret_key(&ctx, &sk)
        .unwrap()
        .with_seed([10; 32])
        .encrypt(&encoder.encode_complex(&z).unwrap())
        .unwrap();
    assert_eq!(ct.level(), params.default_level());
    let low = Evaluator::new(&ctx).drop_to_level(&ct, 3).unwrap();
    let (out, stages) = boot.bootstrap_with_stages(&low).unwrap();
    assert_eq!(
        (out.level(), out.scale()),
        (params.default_level(), params.default_scale())
    );
    let got = encoder
        .decode_complex(&Decryptor::new(&ctx, &sk).unwrap().decrypt(&out).unwrap())
        .unwrap();
    let bits = precision_bits_complex(&got, &z);
    eprintln!("{}: {bits:.1} bits, {stages:?}", preset.name);
    assert!(bits >= 20.0, "{bits:.1} bits");
    assert!(stages.total() > std::time::Duration::ZERO);
}

/// The 128-bit presets (N = 2^16 and 2^17) on the GPU: full slots (complex values uniform in
/// the unit square), from level 3 (the lowest it accepts) back to the user's top level at Δ = 2^40. Prints the precision (min
/// and mean), the stage times and the key switchings; asserts the precision and that nothing
/// fell back from a fused path.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn the_128_bit_presets_bootstrap_on_the_gpu() {
    for name in ["boot_n16_levels13", "boot_n17_levels24"] {
        bootstrap_preset_on_the_gpu(name);
    }
}

fn bootstrap_preset_on_the_gpu(name: &str) {
    let preset = BootstrapPreset::by_name(name).unwrap();
    let params = preset.params.build().unwrap();
    assert!(params.security().meets_128_bits);
    let device = Device::Cuda(0);
    let ctx = CkksContext::new(&params, device).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [23; 32]);
    let sk = keygen.secret_key().unwrap();
    let t = std::time::Instant::now();
    let boot = Bootstrapper::new(&ctx, &mut keygen, &sk, preset.config).unwrap();
    eprintln!("key generation: {:.1} s", t.elapsed().as_secs_f64());
    assert_eq!(boot.output_level(), params.default_level());
    let encoder = Encoder::new(&ctx).unwrap();
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    let z = random_complex(encoder.slots(), 80);
    let ct = Encryptor::with_secret_key(&ctx, &sk)
        .unwrap()
        .with_seed([11; 32])
        .encrypt(&encoder.encode_complex(&z).unwrap())
        .unwrap();
    let low = Evaluator::new(&ctx).drop_to_level(&ct, 3).unwrap();
    let fallbacks = device.fused_fallbacks();
    // Warm-up: kernels compiled, matrices encoded. A warm bootstrap is then queued entirely
    // on the device: no byte moved, no host wait.
    boot.bootstrap(&low).unwrap();
    device.synchronize().unwrap();
    let counters = || {
        (
            device.bytes_to_device().unwrap(),
            device.bytes_to_host().unwrap(),
            device.host_waits().unwrap(),
        )
    };
    let before = counters();
    let mut out = boot.bootstrap(&low).unwrap();
    assert_eq!(counters(), before, "(to device, to host, host waits)");
    for _ in 0..3 {
        let before = ctx.keyswitches();
        let (o, stages) = boot.bootstrap_with_stages(&low).unwrap();
        eprintln!(
            "stages {stages:?} total {:.2} ms, {} key switchings",
            stages.total().as_secs_f64() * 1e3,
            ctx.keyswitches() - before
        );
        out = o;
    }
    let reps = 5;
    device.synchronize().unwrap();
    let t = std::time::Instant::now();
    for _ in 0..reps {
        out = boot.bootstrap(&low).unwrap();
    }
    device.synchronize().unwrap();
    eprintln!(
        "bootstrap: {:.2} ms (mean of {reps}, not synchronised between calls)",
        t.elapsed().as_secs_f64() * 1e3 / reps as f64
    );
    assert_eq!(device.fused_fallbacks(), fallbacks);
    assert_eq!(
        (out.level(), out.scale()),
        (params.default_level(), params.default_scale())
    );
    let got = encoder.decode_complex(&dec.decrypt(&out).unwrap()).unwrap();
    let errs: Vec<f64> = got.iter().zip(&z).map(|(g, w)| (g - w).norm()).collect();
    let mean = -(errs.iter().sum::<f64>() / errs.len() as f64).log2();
    let min = precision_bits_complex(&got, &z);
    eprintln!("{name}: precision min {min:.2} bits, mean {mean:.2} bits");
    assert!(min >= 20.0, "{name}: {min:.1} bits");
}

fn encrypt_at(
    ctx: &CkksContext,
    sk: &rhea::rlwe::SecretKey,
    encoder: &Encoder,
    z: &[rhea::ckks::Complex64],
    seed: u8,
) -> rhea::ckks::Ciphertext {
    let ct = Encryptor::with_secret_key(ctx, sk)
        .unwrap()
        .with_seed([seed; 32])
        .encrypt(&encoder.encode_complex(z).unwrap())
        .unwrap();
    Evaluator::new(ctx).drop_to_level(&ct, 3).unwrap()
}

/// Sparse slots (256 and 32 of 2048), the real-input variant and two real vectors in one
/// bootstrapping, at the insecure preset.
#[test]
fn sparse_slots_real_inputs_and_two_real_vectors() {
    use rhea::ckks::Complex64;
    let preset = BootstrapPreset::by_name("boot_test_n12_insecure").unwrap();
    let params = preset.params.build().unwrap();
    let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [24; 32]);
    let sk = keygen.secret_key().unwrap();
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    for slots in [256, 32] {
        let mut config = preset.config.clone();
        config.slots = slots;
        let boot = Bootstrapper::new(&ctx, &mut keygen, &sk, config).unwrap();
        let encoder = Encoder::with_slots(&ctx, slots).unwrap();
        let z = random_complex(slots, 81);
        let out = boot
            .bootstrap(&encrypt_at(&ctx, &sk, &encoder, &z, 12))
            .unwrap();
        assert_eq!(out.level(), params.default_level());
        let got = encoder.decode_complex(&dec.decrypt(&out).unwrap()).unwrap();
        let bits = precision_bits_complex(&got, &z);
        eprintln!("{slots} slots: {bits:.1} bits");
        assert!(bits >= 20.0, "{slots} slots: {bits:.1} bits");
    }
    let boot = Bootstrapper::new(&ctx, &mut keygen, &sk, preset.config.clone()).unwrap();
    let encoder = Encoder::new(&ctx).unwrap();
    let real = |seed| -> Vec<Complex64> {
        random_complex(encoder.slots(), seed)
            .iter()
            .map(|c| Complex64::new(c.re, 0.0))
            .collect()
    };
    let (x, y) = (real(82), real(83));
    let decode =
        |ct: &rhea::ckks::Ciphertext| encoder.decode_complex(&dec.decrypt(ct).unwrap()).unwrap();
    let ct = encrypt_at(&ctx, &sk, &encoder, &x, 13);
    let max_im = |v: &[Complex64]| v.iter().map(|c| c.im.abs()).fold(0.0f64, f64::max);
    let plain_out = decode(&boot.bootstrap(&ct).unwrap());
    let plain = precision_bits_complex(&plain_out, &x);
    let out = boot.bootstrap_real(&ct).unwrap();
    assert_eq!(
        (out.level(), out.scale()),
        (params.default_level(), params.default_scale())
    );
    let removed_out = decode(&out);
    let removed = precision_bits_complex(&removed_out, &x);
    let (im_before, im_after) = (max_im(&plain_out), max_im(&removed_out));
    eprintln!(
        "real input: {plain:.1} bits (max |Im| 2^{:.1}), imaginary part removed: {removed:.1} \
         bits (max |Im| 2^{:.1})",
        im_before.log2(),
        im_after.log2()
    );
    assert!(removed >= 20.0, "{plain:.1} → {removed:.1}");
    // What is left of the imaginary part is the sum's decryption noise. Measured: 2^-27.1 →
    // 2^-27.6, 23.9 → 23.8 bits: at this chain the plain bootstrap's imaginary error on real
    // data is already at that noise.
    assert!(
        im_after < 2f64.powi(-25) && im_after <= im_before * 1.5,
        "2^{:.1} → 2^{:.1}",
        im_before.log2(),
        im_after.log2()
    );
    let cy = encrypt_at(&ctx, &sk, &encoder, &y, 14);
    let (a, b) = boot.bootstrap_two_real(&ct, &cy).unwrap();
    for (out, want, name) in [(&a, &x, "first"), (&b, &y, "second")] {
        assert_eq!(
            (out.level(), out.scale()),
            (params.default_level(), params.default_scale())
        );
        let bits = precision_bits_complex(&decode(out), want);
        eprintln!("two real vectors, {name}: {bits:.1} bits");
        assert!(bits >= 20.0, "{name}: {bits:.1} bits");
    }
    // Operands of different scales cannot share a bootstrapping.
    let scaled = Encryptor::with_secret_key(&ctx, &sk)
        .unwrap()
        .encrypt(&encoder.encode_complex_at(&y, 3, 2f64.powi(30)).unwrap())
        .unwrap();
    assert!(matches!(
        boot.bootstrap_two_real(&ct, &scaled),
        Err(rhea::Error::ScaleMismatch { .. })
    ));
}

/// Many ciphertexts at once: `bootstrap_many` gives each one's own bootstrap (the same words);
/// `bootstrap_many_real` pairs ciphertexts of equal scales (two per bootstrapping: three of
/// the same scale and one of another cost three bootstrappings' key switchings, not four);
/// a bad ciphertext anywhere fails the call before any work.
#[test]
fn many_ciphertexts_at_once() {
    use rhea::ckks::Complex64;
    let preset = BootstrapPreset::by_name("boot_test_n12_insecure").unwrap();
    let params = preset.params.build().unwrap();
    let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [25; 32]);
    let sk = keygen.secret_key().unwrap();
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    let boot = Bootstrapper::new(&ctx, &mut keygen, &sk, preset.config.clone()).unwrap();
    let encoder = Encoder::new(&ctx).unwrap();
    let words = |ct: &rhea::ckks::Ciphertext| -> Vec<Vec<u64>> {
        ct.parts()
            .iter()
            .map(|p| ctx.ring().download(p).unwrap())
            .collect()
    };
    let zs: Vec<Vec<Complex64>> = (0..2)
        .map(|t| random_complex(encoder.slots(), 90 + t))
        .collect();
    let cts: Vec<_> = zs
        .iter()
        .enumerate()
        .map(|(t, z)| encrypt_at(&ctx, &sk, &encoder, z, 30 + t as u8))
        .collect();
    let many = boot.bootstrap_many(&cts).unwrap();
    for (ct, out) in cts.iter().zip(&many) {
        assert_eq!(words(out), words(&boot.bootstrap(ct).unwrap()));
    }

    // Real slots: three at Δ, one at 2^36 (no partner of its scale).
    let reals: Vec<Vec<Complex64>> = (0..4)
        .map(|t| {
            random_complex(encoder.slots(), 95 + t)
                .iter()
                .map(|c| Complex64::new(c.re, 0.0))
                .collect()
        })
        .collect();
    let enc = Encryptor::with_secret_key(&ctx, &sk).unwrap();
    let mut cts: Vec<_> = reals[..3]
        .iter()
        .enumerate()
        .map(|(t, z)| encrypt_at(&ctx, &sk, &encoder, z, 40 + t as u8))
        .collect();
    let odd = enc
        .encrypt(
            &encoder
                .encode_complex_at(&reals[3], 3, 2f64.powi(36))
                .unwrap(),
        )
        .unwrap();
    cts.insert(1, odd);
    let want = [&reals[0], &reals[3], &reals[1], &reals[2]];
    let before = ctx.keyswitches();
    boot.bootstrap_real(&cts[0]).unwrap();
    let one = ctx.keyswitches() - before;
    let before = ctx.keyswitches();
    boot.bootstrap_two_real(&cts[0], &cts[2]).unwrap();
    let pair = ctx.keyswitches() - before;
    let before = ctx.keyswitches();
    let fresh = boot.bootstrap_many_real(&cts).unwrap();
    let used = ctx.keyswitches() - before;
    eprintln!(
        "four real ciphertexts: {used} key switchings (one bootstrap_real: {one}, a pair: \
         {pair})"
    );
    // One pair (one CoeffToSlot, two EvalMods) and two alone.
    assert!(pair < 2 * one, "a pair {pair}, one {one}");
    assert_eq!(used, pair + 2 * one);
    for (out, z) in fresh.iter().zip(want) {
        assert_eq!(out.level(), boot.output_level());
        let got = encoder.decode_complex(&dec.decrypt(out).unwrap()).unwrap();
        let bits = precision_bits_complex(&got, z);
        assert!(bits >= 20.0, "{bits:.1} bits");
    }

    // One of other slots: an error, and nothing ran.
    let sparse = Encryptor::with_secret_key(&ctx, &sk)
        .unwrap()
        .encrypt(
            &Encoder::with_slots(&ctx, 64)
                .unwrap()
                .encode(&[0.25; 64])
                .unwrap(),
        )
        .unwrap();
    let before = ctx.keyswitches();
    assert!(matches!(
        boot.bootstrap_many(&[cts[0].clone(), sparse.clone()]),
        Err(rhea::Error::SlotMismatch { .. })
    ));
    assert!(matches!(
        boot.bootstrap_many_real(&[cts[0].clone(), sparse]),
        Err(rhea::Error::SlotMismatch { .. })
    ));
    // Below SlotToCoeff's levels: a typed error, whichever entry point.
    let eval = Evaluator::new(&ctx);
    let below = eval.drop_to_level(&cts[0], boot.input_level() - 1).unwrap();
    let underflow = |r: rhea::Result<_>| {
        matches!(
            r,
            Err(rhea::Error::LevelUnderflow {
                level: 2,
                needed: 3,
                ..
            })
        )
    };
    assert!(underflow(boot.bootstrap(&below).map(|_| ())));
    assert!(underflow(boot.bootstrap_real(&below).map(|_| ())));
    assert!(underflow(
        boot.bootstrap_two_real(&cts[0], &below).map(|_| ())
    ));
    assert!(underflow(
        boot.bootstrap_many_real(&[cts[0].clone(), below])
            .map(|_| ())
    ));
    assert_eq!(ctx.keyswitches(), before, "work ran before the error");
}
