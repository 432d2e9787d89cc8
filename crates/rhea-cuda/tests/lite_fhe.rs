//! The protected mode's kernels (`kernels/lite_fhe.cu`, `rhea_cuda::lite::fhe`) against host
//! modular arithmetic on random data, and the pool's raw memory dump.
//!
//! `lite_fhe_kernels_compile` needs NVRTC (`scripts/check-kernels.sh` runs it); the others need
//! a GPU. All are `#[ignore]`d: `--include-ignored` runs them, and then a missing GPU or NVRTC
//! fails them. The FHE-level tests (keys and decryption bit-identical with the unprotected path,
//! the raw-memory test) are in `crates/rhea/tests/gpu_protected.rs`.

mod common;

use common::{assert_words, cubin_has, primes, require_gpu, require_nvrtc, rng};
use rand::Rng;
use rhea_cuda::lite::fhe::{self, FheShape, RowTerm, LITE_FHE, LITE_FHE_KERNEL_NAMES};
use rhea_cuda::lite::{LiteBuffer, LiteForm, LiteSession};
use rhea_cuda::{registry, DeviceModuli};
use rhea_math::Modulus;

const N: usize = 1 << 12;
const LIMBS: usize = 3;

fn random_poly(r: &mut impl Rng, mods: &[Modulus]) -> Vec<u64> {
    mods.iter()
        .flat_map(|m| {
            (0..N)
                .map(|_| r.random_range(0..m.value()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `f(limb modulus, i)` over every word.
fn per_word(mods: &[Modulus], f: impl Fn(&Modulus, usize) -> u64) -> Vec<u64> {
    (0..mods.len() * N).map(|i| f(&mods[i / N], i)).collect()
}

#[test]
#[ignore = "needs NVRTC (run with --include-ignored; scripts/check-kernels.sh and scripts/gpu-run.sh do)"]
fn lite_fhe_kernels_compile() {
    require_nvrtc("lite_fhe_kernels_compile");
    let cubin = registry::compile(&LITE_FHE, "sm_90").unwrap_or_else(|e| panic!("{e}"));
    let mut names = registry::cubin_kernel_names(&cubin).unwrap();
    names.sort();
    let mut want: Vec<String> = LITE_FHE_KERNEL_NAMES
        .iter()
        .map(|s| s.to_string())
        .collect();
    want.sort();
    assert_eq!(names, want, "the kernels of lite_fhe.cu");
    for n in LITE_FHE_KERNEL_NAMES {
        assert!(cubin_has(&cubin, n), "{n} missing from the CUBIN");
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn protected_kernels_equal_host_arithmetic() {
    let dev = require_gpu("protected_kernels_equal_host_arithmetic");
    let mut r = rng("protected_kernels_equal_host_arithmetic");
    let mods = primes(60, LIMBS + 1, N); // one more modulus than limbs: prefixes are read
    let table = DeviceModuli::new(&dev, &mods).unwrap();
    let session = LiteSession::new().unwrap();
    let shape = FheShape {
        moduli: &table,
        limbs: LIMBS,
        n: N,
    };
    let m = &mods[..LIMBS];
    // s over one limb more than the operations (as a key over Q ∪ P read over Q).
    let s_long = random_poly(&mut r, &mods);
    let s = &s_long[..LIMBS * N];
    let s_prot = session.upload(&dev, &s_long, LiteForm::Encrypted).unwrap();
    let (c0, c1, c2) = (
        random_poly(&mut r, m),
        random_poly(&mut r, m),
        random_poly(&mut r, m),
    );
    let (d0, d1, d2) = (
        dev.upload(&c0).unwrap(),
        dev.upload(&c1).unwrap(),
        dev.upload(&c2).unwrap(),
    );

    // Decryption, 2 and 3 components.
    let mut out = LiteBuffer::alloc(&dev, LIMBS * N, LiteForm::Encrypted).unwrap();
    fhe::decrypt(&session, &mut out, &[&d0, &d1], &s_prot, &shape).unwrap();
    let want = per_word(m, |q, i| q.add(c0[i], q.mul(c1[i], s[i])));
    assert_words(&session.download(&out).unwrap(), &want, "c0 + c1·s");
    // The result is ciphertext in memory.
    let raw = out.raw().to_host().unwrap();
    assert!(raw.iter().zip(&want).all(|(a, b)| a != b), "m in memory");
    fhe::decrypt(&session, &mut out, &[&d0, &d1, &d2], &s_prot, &shape).unwrap();
    let want = per_word(m, |q, i| {
        q.add(c0[i], q.mul(q.add(c1[i], q.mul(c2[i], s[i])), s[i]))
    });
    assert_words(&session.download(&out).unwrap(), &want, "c0 + c1·s + c2·s²");
    // Components protected too (decrypt_protected), 3 then 2 components.
    let (p0, p1, p2) = (
        session.upload(&dev, &c0, LiteForm::Encrypted).unwrap(),
        session.upload(&dev, &c1, LiteForm::Encrypted).unwrap(),
        session.upload(&dev, &c2, LiteForm::Encrypted).unwrap(),
    );
    let mut out_p = LiteBuffer::alloc(&dev, LIMBS * N, LiteForm::Encrypted).unwrap();
    fhe::decrypt_protected(&session, &mut out_p, &[&p0, &p1, &p2], &s_prot, &shape).unwrap();
    assert_words(
        &session.download(&out_p).unwrap(),
        &want,
        "c0 + c1·s + c2·s² (protected components)",
    );
    fhe::decrypt_protected(&session, &mut out_p, &[&p0, &p1], &s_prot, &shape).unwrap();
    let want2 = per_word(m, |q, i| q.add(c0[i], q.mul(c1[i], s[i])));
    assert_words(
        &session.download(&out_p).unwrap(),
        &want2,
        "c0 + c1·s (protected components)",
    );
    let raw = out_p.raw().to_host().unwrap();
    assert!(raw.iter().zip(&want2).all(|(a, b)| a != b), "m in memory");
    // A plain component or a single component is refused.
    let plain_c = session.upload(&dev, &c0, LiteForm::Plain).unwrap();
    assert!(
        fhe::decrypt_protected(&session, &mut out_p, &[&plain_c, &p1], &s_prot, &shape).is_err()
    );
    assert!(fhe::decrypt_protected(&session, &mut out_p, &[&p0], &s_prot, &shape).is_err());

    // Key rows: none, s', s².
    let a = random_poly(&mut r, m);
    let e = random_poly(&mut r, m);
    let sp = random_poly(&mut r, m);
    let f: Vec<u64> = m.iter().map(|q| r.random_range(0..q.value())).collect();
    let (da, df) = (dev.upload(&a).unwrap(), dev.upload(&f).unwrap());
    let e_prot = session.upload(&dev, &e, LiteForm::Encrypted).unwrap();
    let sp_prot = session.upload(&dev, &sp, LiteForm::Encrypted).unwrap();
    let mut b = dev.alloc(LIMBS * N).unwrap();
    let base = |q: &Modulus, i: usize| q.sub(e[i], q.mul(a[i], s[i]));
    fhe::key_row(
        &session,
        &mut b,
        &da,
        &e_prot,
        &s_prot,
        RowTerm::None,
        &shape,
    )
    .unwrap();
    assert_words(&b.to_host().unwrap(), &per_word(m, base), "e − a·s");
    let term = RowTerm::Key {
        from: &sp_prot,
        factors: &df,
    };
    fhe::key_row(&session, &mut b, &da, &e_prot, &s_prot, term, &shape).unwrap();
    let want = per_word(m, |q, i| q.add(base(q, i), q.mul(f[i / N], sp[i])));
    assert_words(&b.to_host().unwrap(), &want, "e − a·s + f·s'");
    let term = RowTerm::SecretSquared { factors: &df };
    fhe::key_row(&session, &mut b, &da, &e_prot, &s_prot, term, &shape).unwrap();
    let want = per_word(m, |q, i| {
        q.add(base(q, i), q.mul(f[i / N], q.mul(s[i], s[i])))
    });
    assert_words(&b.to_host().unwrap(), &want, "e − a·s + f·s²");

    // Plaintext add and multiply, in place.
    let pt = random_poly(&mut r, m);
    let pt_prot = session.upload(&dev, &pt, LiteForm::Encrypted).unwrap();
    let mut c = dev.upload(&c0).unwrap();
    fhe::plain_add(&session, &mut c, &pt_prot, &shape).unwrap();
    let sum = per_word(m, |q, i| q.add(c0[i], pt[i]));
    assert_words(&c.to_host().unwrap(), &sum, "c + pt");
    fhe::plain_mul(&session, &mut c, &pt_prot, &shape).unwrap();
    let prod = per_word(m, |q, i| q.mul(sum[i], pt[i]));
    assert_words(&c.to_host().unwrap(), &prod, "(c + pt)·pt");

    // Wrong forms are refused.
    let padded = session.upload(&dev, &pt, LiteForm::Padded).unwrap();
    assert!(fhe::plain_add(&session, &mut c, &padded, &shape).is_err());
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn raw_memory_dump_sees_live_and_cached_buffers() {
    let dev = require_gpu("raw_memory_dump_sees_live_and_cached_buffers");
    let mut r = rng("raw_memory_dump_sees_live_and_cached_buffers");
    let live: Vec<u64> = (0..1000).map(|_| r.random()).collect();
    let freed: Vec<u64> = (0..1001).map(|_| r.random()).collect();
    let a = dev.upload(&live).unwrap();
    drop(dev.upload(&freed).unwrap());
    let dump = dev.raw_memory_dump().unwrap();
    let find = |w: &[u64]| {
        dump.iter()
            .find(|reg| reg.words.windows(w.len()).any(|x| x == w))
    };
    let hit = find(&live).expect("a live buffer's words");
    assert!(hit.live && hit.ptr == a.device_ptr());
    let hit = find(&freed).expect("a cached buffer's words");
    assert!(!hit.live);
}
