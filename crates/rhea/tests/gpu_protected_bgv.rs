//! LITE's protected mode for BGV (issue 38, `docs/lite.md`) on the GPU:
//!
//! - `bgv_protected_mode_is_bit_identical`: BGV's façade (keys, secret- and public-key
//!   encryption, decryption and noise budget, mul+relin exact) gives the words of the
//!   unprotected GPU path and of the CPU.
//! - `bgv_protected_plaintext_operands_are_bit_identical`: `ProtectedPlaintext::add_to` /
//!   `multiply` give the words of `add_plain` / `mul_plain` on the GPU and the CPU.
//! - `bgv_raw_memory_*`: the raw-memory search of `gpu_protected.rs` for BGV, adding `t^{-1}·m`
//!   and the decryption's phase `Σ ĉ_i·s^i` and `t` times it: none in a protected context, the
//!   secrets found in an unprotected one (so the search can fail).
//!
//! Every test is `#[ignore]`d: a machine without a GPU lists them as ignored;
//! `--include-ignored` runs them, and then a missing GPU is a failure.

mod protected_common;

use std::collections::HashSet;
use std::sync::Arc;

use rhea::bgv::{self, BgvContext};
use rhea::rlwe::{KeySwitchKey, Protection};
use rhea::unstable::math::sampler::Prng;
use rhea::unstable::{public_key_parts, secret_key_poly, HasRing};
use rhea::Device;

use protected_common::{distinctive_in, require_gpu, search_device_memory, Found, GPU};

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

/// Protected plaintext operands: `ProtectedPlaintext::add_to` / `multiply` on GPU ciphertexts
/// equal `Evaluator::add_plain` / `mul_plain` with the unprotected plaintext on the GPU and on
/// the CPU (words, factor, noise bound), in auto and manual mode, at three levels, for fresh
/// ciphertexts and products switched down (factor ≠ 1), with the plaintext at, above and below
/// the ciphertext's level; they decrypt (protected) to `a + m` and `a·m` mod t exactly. An
/// evaluator or a ciphertext on the CPU and a plaintext of other parameters are refused.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn bgv_protected_plaintext_operands_are_bit_identical() {
    let _gpu = require_gpu("bgv_protected_plaintext_operands_are_bit_identical");
    let params = bgv_params();
    let gpu = BgvContext::new(&params, GPU).unwrap();
    let cpu = BgvContext::new(&params, Device::Cpu).unwrap();
    let t = params.t();
    let protection = Protection::new(&gpu).unwrap();
    let mut kp = bgv::ProtectedKeyGenerator::from_seed(&gpu, &protection, [31; 32]).unwrap();
    let psk = Arc::new(kp.secret_key().unwrap());
    let rlk = Arc::new(kp.relinearization_key(&psk).unwrap());
    let rlk_c = Arc::new(rlk.to_device(&cpu).unwrap());
    let mode = |ctx: &BgvContext, rlk: &Arc<rhea::rlwe::RelinearizationKey>, auto: bool| {
        bgv::Evaluator::new(ctx)
            .with_relinearization_key(rlk.clone())
            .unwrap()
            .with_auto_mod_switch(auto)
    };
    let encoder = bgv::Encoder::new(&cpu).unwrap();
    let enc = bgv::ProtectedEncryptor::new(&gpu, psk.clone()).unwrap();
    let pdec = bgv::ProtectedDecryptor::new(&gpu, psk.clone()).unwrap();
    let slots = encoder.slots();
    let op_t = |a: &[u64], b: &[u64], mul: bool| -> Vec<u64> {
        a.iter()
            .zip(b)
            .map(|(&x, &y)| {
                let (x, y) = (x as u128, y as u128);
                (if mul { x * y } else { x + y } % t as u128) as u64
            })
            .collect()
    };
    let mut checked = 0;
    let top = params.max_level();
    for (k, level) in [top, 3, 1].into_iter().enumerate() {
        let k = k as u64;
        let (xs, zs, ys) = (
            random_mod_t(slots, t, 600 + k),
            random_mod_t(slots, t, 700 + k),
            random_mod_t(slots, t, 800 + k),
        );
        let protect = |v: &[u64], l: usize| {
            let pt = encoder.encode_at(v, l).unwrap();
            bgv::ProtectedPlaintext::new(&gpu, &protection, &pt).unwrap()
        };
        let x = enc.encrypt(&protect(&xs, level)).unwrap();
        let z = enc.encrypt(&protect(&zs, level)).unwrap();
        let w = mode(&gpu, &rlk, true).mul(&x, &z).unwrap();
        assert_ne!(w.factor(), 1, "a product switched down");
        let xz = op_t(&xs, &zs, true);
        for pt_level in [level, level - 1] {
            let pt = encoder.encode_at(&ys, pt_level).unwrap();
            let pt_gpu = pt.to_device(&gpu).unwrap();
            let ppt = bgv::ProtectedPlaintext::new(&gpu, &protection, &pt).unwrap();
            for (ct, msg) in [(&x, &xs), (&w, &xz)] {
                let ct_c = ct.to_device(&cpu).unwrap();
                for auto in [true, false] {
                    let (eg, ec) = (mode(&gpu, &rlk, auto), mode(&cpu, &rlk_c, auto));
                    let what = format!("level {level}, plaintext at {pt_level}, auto {auto}");
                    let cases = [
                        (
                            ppt.add_to(&eg, ct),
                            eg.add_plain(ct, &pt_gpu),
                            ec.add_plain(&ct_c, &pt),
                            false,
                        ),
                        (
                            ppt.multiply(&eg, ct),
                            eg.mul_plain(ct, &pt_gpu),
                            ec.mul_plain(&ct_c, &pt),
                            true,
                        ),
                    ];
                    for (got, want, want_c, mul) in cases {
                        let (got, want, want_c) = match (got, want, want_c) {
                            (Ok(a), Ok(b), Ok(c)) => (a, b, c),
                            (Err(_), Err(_), Err(_)) => continue, // the noise check, alike
                            (a, b, c) => panic!("{what}: {a:?} / {b:?} / {c:?}"),
                        };
                        let words = bgv_ct_words(&gpu, &got);
                        assert_eq!(words, bgv_ct_words(&gpu, &want), "{what}, mul {mul}");
                        assert_eq!(words, bgv_ct_words(&cpu, &want_c), "{what}, mul {mul} CPU");
                        assert_eq!((got.factor(), got.level()), (want.factor(), want.level()));
                        assert_eq!(got.noise_bound_bits(), want.noise_bound_bits());
                        let d = pdec.decrypt(&got).unwrap();
                        assert_eq!(
                            encoder.decode(&d).unwrap(),
                            op_t(msg, &ys, mul),
                            "{what}, mul {mul}"
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked >= 40, "{checked} results compared");

    // Errors: a CPU evaluator, a CPU ciphertext, a plaintext of other parameters.
    let ppt =
        bgv::ProtectedPlaintext::new(&gpu, &protection, &encoder.encode(&[5]).unwrap()).unwrap();
    let x = enc.encrypt(&ppt).unwrap();
    let (eg, ec) = (mode(&gpu, &rlk, true), mode(&cpu, &rlk_c, true));
    let x_c = x.to_device(&cpu).unwrap();
    for r in [
        ppt.add_to(&ec, &x),
        ppt.multiply(&ec, &x),
        ppt.add_to(&eg, &x_c),
        ppt.multiply(&eg, &x_c),
    ] {
        assert!(
            matches!(r, Err(rhea::Error::DeviceMismatch { .. })),
            "{r:?}"
        );
    }
    let other_params = bgv::BgvParametersLiteral::he_booster_n13_logqp218()
        .build()
        .unwrap();
    let other_gpu = BgvContext::new(&other_params, GPU).unwrap();
    let other_cpu = BgvContext::new(&other_params, Device::Cpu).unwrap();
    let other_protection = Protection::new(&other_gpu).unwrap();
    let foreign = bgv::ProtectedPlaintext::new(
        &other_gpu,
        &other_protection,
        &bgv::Encoder::new(&other_cpu).unwrap().encode(&[5]).unwrap(),
    )
    .unwrap();
    for r in [foreign.add_to(&eg, &x), foreign.multiply(&eg, &x)] {
        assert!(
            matches!(r, Err(rhea::Error::ParametersMismatch { .. })),
            "{r:?}"
        );
    }
}

/// BGV's raw-memory search: keys (secret, public, relinearisation, one row rotation), a
/// secret- and a public-key encryption, a mul+relin, a rotation, a plaintext product and a
/// plaintext sum (`ProtectedPlaintext::multiply` / `add_to`, or `mul_plain` / `add_plain`
/// unprotected) and a decryption on the GPU,
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
        // Plaintext operands: x·m_x + m_y, the plaintexts read only in registers.
        let z = eval
            .add(
                &z,
                &ppy.add_to(&eval, &ppx.multiply(&eval, &x).unwrap())
                    .unwrap(),
            )
            .unwrap();
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
        let z = eval
            .add(
                &z,
                &eval
                    .add_plain(&eval.mul_plain(&x, &gx).unwrap(), &gy)
                    .unwrap(),
            )
            .unwrap();
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

    let found = search_device_memory(
        if protected {
            "BGV protected"
        } else {
            "BGV unprotected"
        },
        [&secret, &plain, &dec, &ephemeral],
        &runs,
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
