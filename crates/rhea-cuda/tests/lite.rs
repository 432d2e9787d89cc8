//! LITE (AES-XTS memory encryption inside kernels) against its CPU oracle: RustCrypto's `aes`
//! and `xts-mode` crates and the IEEE 1619-2007 XTS-AES-128 vectors.
//!
//! CPU tests (run everywhere): the host XTS of `rhea_cuda::lite` on the IEEE vectors and against
//! the crates; LITE's memory form is `xts-mode` with 16-byte sectors numbered `address / 16`.
//! GPU tests (`#[ignore]`d: `--include-ignored` on a GPU machine, `scripts/gpu-run.sh`, where a
//! missing GPU fails them): the IEEE vectors and FIPS-197 on the device, the memory form through
//! all four entry points bit-exact with the oracle on random data at several sizes, uploads and
//! downloads, and every LITE variant of the benchmark kernels equal to the plain kernel.

mod common;
#[path = "common/xts_vectors.rs"]
mod xts_vectors;

use aes::cipher::{BlockDecrypt, BlockEncrypt, KeyInit};
use aes::Aes128;
use common::{assert_words, cubin_has, primes, require_gpu, require_nvrtc, rng};
use rand::Rng;
use rhea_cuda::lite::{
    self, CsrMatrix, DeviceCsr, Direction, EntryPoint, EwAccess, LiteBuffer, LiteForm, LiteSession,
    MulAdd, Shuffle, LITE, LITE_KERNEL_NAMES,
};
use rhea_cuda::{registry, DeviceBuffer, DeviceModuli, GpuDevice};
use rhea_math::Modulus;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard};
use xts_mode::{get_tweak_default, Xts128};
use xts_vectors::IEEE1619_XTS_AES128;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

fn key16(s: &str) -> [u8; 16] {
    hex(s).try_into().unwrap()
}

fn xts(k1: &[u8; 16], k2: &[u8; 16]) -> Xts128<Aes128> {
    Xts128::new(Aes128::new(k1.into()), Aes128::new(k2.into()))
}

fn words_to_bytes(w: &[u64]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn bytes_to_words(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The oracle of LITE's memory form: `words` at device address `addr`, XTS with 16-byte
/// sectors numbered `addr / 16`.
fn oracle(k1: &[u8; 16], k2: &[u8; 16], words: &[u64], addr: u64, dir: Direction) -> Vec<u64> {
    let mut bytes = words_to_bytes(words);
    let x = xts(k1, k2);
    match dir {
        Direction::Encrypt => {
            x.encrypt_area(&mut bytes, 16, (addr / 16) as u128, get_tweak_default)
        }
        Direction::Decrypt => {
            x.decrypt_area(&mut bytes, 16, (addr / 16) as u128, get_tweak_default)
        }
    }
    bytes_to_words(&bytes)
}

/// The GPU tests of this binary run in parallel on one shared device, hence one pair of
/// transfer counters: each holds a read guard of `TRANSFERS` while it runs (and moves data), and
/// `lite_buffers_move_ciphertext` counts its uploads under the write guard, so no other test's
/// copy lands between its two readings of `bytes_to_device`.
static TRANSFERS: RwLock<()> = RwLock::new(());

/// The device for a GPU test that moves data (see [`TRANSFERS`]).
fn gpu(test: &str) -> (Arc<GpuDevice>, RwLockReadGuard<'static, ()>) {
    let guard = TRANSFERS.read().unwrap_or_else(PoisonError::into_inner);
    (require_gpu(test), guard)
}

fn random_keys(r: &mut impl Rng) -> ([u8; 16], [u8; 16]) {
    (r.random(), r.random())
}

// ---- CPU ---------------------------------------------------------------------------------------

#[test]
fn ieee_1619_vectors_host_and_crates() {
    assert_eq!(IEEE1619_XTS_AES128.len(), 9);
    for v in IEEE1619_XTS_AES128 {
        let (k1, k2) = (key16(v.key1), key16(v.key2));
        let (ptx, ctx) = (hex(v.ptx), hex(v.ctx));
        assert_eq!(ptx.len(), ctx.len(), "vector {}", v.number);
        assert!(ptx.len() == 32 || ptx.len() == 512, "vector {}", v.number);
        // The crates (the oracle) agree with the standard.
        let mut c = ptx.clone();
        xts(&k1, &k2).encrypt_sector(&mut c, get_tweak_default(v.dusn));
        assert_eq!(c, ctx, "xts-mode, vector {}", v.number);
        // The host XTS of rhea_cuda::lite.
        let s = LiteSession::from_keys(&k1, &k2);
        let mut c = ptx.clone();
        s.encrypt_unit(&mut c, v.dusn).unwrap();
        assert_eq!(c, ctx, "rhea_cuda::lite encrypt, vector {}", v.number);
        s.decrypt_unit(&mut c, v.dusn).unwrap();
        assert_eq!(c, ptx, "rhea_cuda::lite decrypt, vector {}", v.number);
    }
}

#[test]
fn host_aes_matches_the_aes_crate() {
    let mut r = rng("host_aes_matches_the_aes_crate");
    for _ in 0..200 {
        let key: [u8; 16] = r.random();
        let block: [u8; 16] = r.random();
        let enc = lite::expand_encrypt_key(&key);
        let dec = lite::expand_decrypt_key(&enc);
        let cipher = Aes128::new(&key.into());
        let mut want = block.into();
        cipher.encrypt_block(&mut want);
        let got = lite::aes_encrypt_block(&enc, &block);
        assert_eq!(got[..], want[..]);
        let mut back = want;
        cipher.decrypt_block(&mut back);
        assert_eq!(lite::aes_decrypt_block(&dec, &got)[..], back[..]);
        assert_eq!(back[..], block[..]);
    }
}

#[test]
fn memory_form_is_xts_with_16_byte_sectors() {
    let mut r = rng("memory_form_is_xts_with_16_byte_sectors");
    for words in [2usize, 4, 34, 1000, 70_000] {
        let (k1, k2) = random_keys(&mut r);
        let s = LiteSession::from_keys(&k1, &k2);
        let addr = r.random_range(0u64..1 << 47) & !15;
        let data: Vec<u64> = (0..words).map(|_| r.random()).collect();
        let mut w = data.clone();
        s.encrypt_words(&mut w, addr).unwrap();
        assert_words(
            &w,
            &oracle(&k1, &k2, &data, addr, Direction::Encrypt),
            "encrypt",
        );
        assert!(w.iter().zip(&data).all(|(c, p)| c != p));
        s.decrypt_words(&mut w, addr).unwrap();
        assert_words(&w, &data, "decrypt");
        // The same data one block further on encrypts differently (the address is the tweak).
        let mut moved = data.clone();
        s.encrypt_words(&mut moved, addr + 16).unwrap();
        assert_ne!(
            moved[..2],
            oracle(&k1, &k2, &data, addr, Direction::Encrypt)[..2]
        );
    }
}

// ---- GPU ---------------------------------------------------------------------------------------

#[test]
#[ignore = "needs NVRTC (run with --include-ignored; scripts/check-kernels.sh and scripts/gpu-run.sh do)"]
fn lite_kernels_compile() {
    require_nvrtc("lite_kernels_compile");
    let cubin = registry::compile(&LITE, "sm_90").unwrap_or_else(|e| panic!("{e}"));
    let mut names = registry::cubin_kernel_names(&cubin).unwrap();
    names.sort();
    let mut want: Vec<String> = LITE_KERNEL_NAMES.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(names, want, "the kernels of lite.cu");
    for n in LITE_KERNEL_NAMES {
        assert!(cubin_has(&cubin, n), "{n} missing from the CUBIN");
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn lite_ieee_vectors_and_fips197_on_the_device() {
    let (dev, _transfers) = gpu("lite_ieee_vectors_and_fips197_on_the_device");
    for v in IEEE1619_XTS_AES128 {
        let s = LiteSession::from_keys(&key16(v.key1), &key16(v.key2));
        let ptx = bytes_to_words(&hex(v.ptx));
        let ctx = bytes_to_words(&hex(v.ctx));
        let unit = 8 * ptx.len();
        // The vector twice, as two data units with tweak values dusn and dusn + 1.
        let mut two = ptx.clone();
        two.extend(&ptx);
        let mut buf = dev.upload(&two).unwrap();
        lite::xts_on_device(
            &s,
            &mut buf,
            unit,
            &[v.dusn, v.dusn + 1],
            Direction::Encrypt,
        )
        .unwrap();
        let got = buf.to_host().unwrap();
        assert_words(
            &got[..ctx.len()],
            &ctx,
            &format!("IEEE vector {}", v.number),
        );
        let mut second = words_to_bytes(&ptx);
        s.encrypt_unit(&mut second, v.dusn + 1).unwrap();
        assert_words(&got[ctx.len()..], &bytes_to_words(&second), "second unit");
        lite::xts_on_device(
            &s,
            &mut buf,
            unit,
            &[v.dusn, v.dusn + 1],
            Direction::Decrypt,
        )
        .unwrap();
        assert_words(&buf.to_host().unwrap(), &two, "decrypted");
    }
    // FIPS-197 Appendix C.1, ECB with key 1.
    let key = key16("000102030405060708090a0b0c0d0e0f");
    let s = LiteSession::from_keys(&key, &[0; 16]);
    let pt = bytes_to_words(&hex("00112233445566778899aabbccddeeff"));
    let mut buf = dev.upload(&pt).unwrap();
    lite::ecb_on_device(&s, &mut buf, Direction::Encrypt).unwrap();
    assert_eq!(
        words_to_bytes(&buf.to_host().unwrap()),
        hex("69c4e0d86a7b0430d8cdb78070b4c55a")
    );
    lite::ecb_on_device(&s, &mut buf, Direction::Decrypt).unwrap();
    assert_eq!(buf.to_host().unwrap(), pt);
}

/// The plaintext words of a buffer whose items of `bytes` bytes are replaced by `new`'s where
/// `written(i)`.
fn merge_items(
    old: &[u64],
    new: &[u64],
    bytes: usize,
    written: impl Fn(usize) -> bool,
) -> Vec<u64> {
    let (mut o, n) = (words_to_bytes(old), words_to_bytes(new));
    for i in 0..o.len() / bytes {
        if written(i) {
            o[i * bytes..(i + 1) * bytes].copy_from_slice(&n[i * bytes..(i + 1) * bytes]);
        }
    }
    bytes_to_words(&o)
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn lite_entry_points_are_bit_exact_with_the_oracle() {
    let (dev, _transfers) = gpu("lite_entry_points_are_bit_exact_with_the_oracle");
    let mut r = rng("lite_entry_points_are_bit_exact_with_the_oracle");
    let entries = [
        EntryPoint::V4,
        EntryPoint::Word64 { masked: true },
        EntryPoint::Word64 { masked: false },
        EntryPoint::Word32 { masked: true },
        EntryPoint::Word32 { masked: false },
    ];
    for bytes in [16usize, 48, 1 << 10, (1 << 16) + 48, 1 << 23] {
        let (k1, k2) = random_keys(&mut r);
        let s = LiteSession::from_keys(&k1, &k2);
        for entry in entries {
            let items = bytes / entry.item_bytes();
            let words = entry.buffer_words(items);
            let data: Vec<u64> = (0..words).map(|_| r.random()).collect();
            let input = dev.upload(&data).unwrap();
            let mut out = DeviceBuffer::alloc(&dev, words).unwrap();
            let what = format!("{entry:?}, {bytes} bytes");
            // Encrypt: the ciphertext of `data` at `out`'s own addresses.
            lite::transcode(&s, entry, Direction::Encrypt, &input, &mut out, items, 0).unwrap();
            let got = out.to_host().unwrap();
            let want = oracle(&k1, &k2, &data, out.device_ptr(), Direction::Encrypt);
            assert_words(&got, &want, &format!("{what}: encryption"));
            // Decrypt it back.
            let mut back = DeviceBuffer::alloc(&dev, words).unwrap();
            lite::transcode(&s, entry, Direction::Decrypt, &out, &mut back, items, 0).unwrap();
            assert_words(
                &back.to_host().unwrap(),
                &data,
                &format!("{what}: decryption"),
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn lite_masked_entry_points_handle_partial_groups() {
    let (dev, _transfers) = gpu("lite_masked_entry_points_handle_partial_groups");
    let mut r = rng("lite_masked_entry_points_handle_partial_groups");
    let (k1, k2) = random_keys(&mut r);
    let s = LiteSession::from_keys(&k1, &k2);
    for entry in [
        EntryPoint::Word32 { masked: true },
        EntryPoint::Word64 { masked: true },
    ] {
        let size = entry.item_bytes();
        for (items, skip) in [
            (1usize, 0u32),
            (3, 0),
            (61, 3),
            (1000, 7),
            (4099, 5),
            (4096, 2),
        ] {
            let words = entry.buffer_words(items);
            let what = format!("{entry:?}, {items} items, skip {skip}");
            let left_out = |i: usize| i >= items || (skip > 0 && i as u32 % skip == skip - 1);
            let new: Vec<u64> = (0..words).map(|_| r.random()).collect();
            let old: Vec<u64> = (0..words).map(|_| r.random()).collect();
            // Encrypt into a buffer holding the ciphertext of `old`: left-out items keep it.
            let input = dev.upload(&new).unwrap();
            let mut out = DeviceBuffer::alloc(&dev, words).unwrap();
            out.copy_from_host(&oracle(
                &k1,
                &k2,
                &old,
                out.device_ptr(),
                Direction::Encrypt,
            ))
            .unwrap();
            lite::transcode(&s, entry, Direction::Encrypt, &input, &mut out, items, skip).unwrap();
            let want = merge_items(&old, &new, size, |i| !left_out(i));
            let got = oracle(
                &k1,
                &k2,
                &out.to_host().unwrap(),
                out.device_ptr(),
                Direction::Decrypt,
            );
            assert_words(&got, &want, &format!("{what}: encryption"));
            // Decrypt into a buffer of `old`: left-out items are not written.
            let ct = dev
                .upload(&vec![0; words])
                .and_then(|mut b| {
                    let c = oracle(&k1, &k2, &new, b.device_ptr(), Direction::Encrypt);
                    b.copy_from_host(&c).map(|_| b)
                })
                .unwrap();
            let mut plain = dev.upload(&old).unwrap();
            lite::transcode(&s, entry, Direction::Decrypt, &ct, &mut plain, items, skip).unwrap();
            assert_words(
                &plain.to_host().unwrap(),
                &want,
                &format!("{what}: decryption"),
            );
        }
    }
    // Leaving items out needs a masked word entry point.
    let b = dev.upload(&[1, 2]).unwrap();
    let mut o = dev.upload(&[1, 2]).unwrap();
    assert!(lite::transcode(&s, EntryPoint::V4, Direction::Encrypt, &b, &mut o, 1, 2).is_err());
    assert!(
        lite::transcode(
            &s,
            EntryPoint::Word64 { masked: false },
            Direction::Encrypt,
            &b,
            &mut o,
            2,
            0
        )
        .is_err(),
        "a full-mask launch needs whole warps of words"
    );
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn lite_buffers_move_ciphertext() {
    let dev = require_gpu("lite_buffers_move_ciphertext");
    let mut r = rng("lite_buffers_move_ciphertext");
    let (k1, k2) = random_keys(&mut r);
    let s = LiteSession::from_keys(&k1, &k2);
    for len in [1usize, 2, 7, 4096, 100_001] {
        let data: Vec<u64> = (0..len).map(|_| r.random()).collect();
        for form in [LiteForm::Plain, LiteForm::Encrypted, LiteForm::Padded] {
            let b = {
                // No other test's copy between the two readings (they hold read guards).
                let _counting = TRANSFERS.write().unwrap_or_else(PoisonError::into_inner);
                let before = dev.bytes_to_device();
                let b = s.upload(&dev, &data, form).unwrap();
                assert_eq!(
                    dev.bytes_to_device() - before,
                    8 * form.physical_words(len) as u64,
                    "{form:?}, {len} words: bytes uploaded"
                );
                b
            };
            let raw = b.raw().to_host().unwrap();
            let plain = match form {
                LiteForm::Plain => data.clone(),
                LiteForm::Encrypted => {
                    let mut v = data.clone();
                    v.resize(form.physical_words(len), 0);
                    v
                }
                LiteForm::Padded => data.iter().flat_map(|&w| [w, 0]).collect(),
            };
            let want = match form {
                LiteForm::Plain => plain,
                _ => oracle(&k1, &k2, &plain, b.raw().device_ptr(), Direction::Encrypt),
            };
            assert_words(
                &raw,
                &want,
                &format!("{form:?}, {len} words: what crossed the bus"),
            );
            assert_words(
                &s.download(&b).unwrap(),
                &data,
                &format!("{form:?}: download"),
            );
        }
    }
    // A session from the CSPRNG round-trips too, and another session cannot read its buffers.
    let a = LiteSession::new().unwrap();
    let other = LiteSession::new().unwrap();
    let data: Vec<u64> = (1..=64).collect();
    let b = a.upload(&dev, &data, LiteForm::Encrypted).unwrap();
    assert_eq!(a.download(&b).unwrap(), data);
    assert_ne!(other.download(&b).unwrap(), data);
}

fn ew_variants() -> Vec<(EwAccess, Shuffle, LiteForm, LiteForm)> {
    use LiteForm::{Encrypted as E, Plain as P};
    let s = |masked, delayed| Shuffle { masked, delayed };
    vec![
        (EwAccess::Word, s(false, false), E, E),
        (EwAccess::Word, s(true, false), E, E),
        (EwAccess::Word, s(false, true), E, E),
        (EwAccess::Word, s(true, true), E, E),
        (EwAccess::Word, s(true, true), E, P),
        (EwAccess::Word, s(true, true), P, E),
        (EwAccess::V4, s(true, false), E, E),
        (EwAccess::V4, s(true, true), E, E),
        (EwAccess::V4, s(true, true), E, P),
        (EwAccess::V4, s(true, true), P, E),
    ]
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn lite_elementwise_matches_plain() {
    let (dev, _transfers) = gpu("lite_elementwise_matches_plain");
    let mut r = rng("lite_elementwise_matches_plain");
    let s = LiteSession::new().unwrap();
    for (log_n, limbs, bits) in [(10u32, 3usize, 61u32), (13, 5, 30)] {
        let n = 1usize << log_n;
        let moduli = primes(bits, limbs, n);
        let table = DeviceModuli::new(&dev, &moduli).unwrap();
        let gen = |r: &mut rand_chacha::ChaCha20Rng| -> Vec<u64> {
            (0..n * limbs)
                .map(|i| r.random_range(1..moduli[i / n].value()))
                .collect()
        };
        let (a, b, c) = (gen(&mut r), gen(&mut r), gen(&mut r));
        let want: Vec<u64> = (0..n * limbs)
            .map(|i| moduli[i / n].mul_add(a[i], b[i], c[i]))
            .collect();
        let up = |f: LiteForm| [&a, &b, &c].map(|v| s.upload(&dev, v, f).unwrap());
        let plain_in = up(LiteForm::Plain);
        let enc_in = up(LiteForm::Encrypted);
        for access in [EwAccess::Word, EwAccess::V4] {
            let mut out = LiteBuffer::alloc(&dev, n * limbs, LiteForm::Plain).unwrap();
            let op = MulAdd {
                a: &plain_in[0],
                b: &plain_in[1],
                c: &plain_in[2],
                moduli: &table,
                degree: n,
                limbs,
            };
            lite::mul_add(&s, &mut out, &op, access, Shuffle::NAIVE).unwrap();
            assert_words(
                &s.download(&out).unwrap(),
                &want,
                &format!("plain {access:?}"),
            );
        }
        for (access, shuffle, fin, fout) in ew_variants() {
            let ins = if fin == LiteForm::Plain {
                &plain_in
            } else {
                &enc_in
            };
            let op = MulAdd {
                a: &ins[0],
                b: &ins[1],
                c: &ins[2],
                moduli: &table,
                degree: n,
                limbs,
            };
            let mut out = LiteBuffer::alloc(&dev, n * limbs, fout).unwrap();
            lite::mul_add(&s, &mut out, &op, access, shuffle).unwrap();
            let what = format!("LITE {access:?} {shuffle:?} {fin:?} -> {fout:?}, N 2^{log_n}");
            assert_words(&s.download(&out).unwrap(), &want, &what);
            if fout == LiteForm::Encrypted {
                let raw = out.raw().to_host().unwrap();
                assert!(
                    raw.iter().zip(&want).all(|(x, y)| x != y),
                    "{what}: stored plaintext"
                );
            }
        }
    }
}

/// One radix-2 stage on the host (the oracle of `lite::ntt_stage`).
fn host_ntt_stage(x: &[u64], tw: &[u64], moduli: &[Modulus], n: usize, h: usize) -> Vec<u64> {
    let mut out = vec![0u64; x.len()];
    let groups = n / (2 * h);
    for (l, q) in moduli.iter().enumerate() {
        for k in 0..n / 2 {
            let (g, j) = (k / h, k % h);
            let i0 = l * n + g * 2 * h + j;
            let wy = q.mul(x[i0 + h], tw[l * groups + g]);
            out[i0] = q.add(x[i0], wy);
            out[i0 + h] = q.sub(x[i0], wy);
        }
    }
    out
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn lite_ntt_stage_matches_plain_and_the_host() {
    let (dev, _transfers) = gpu("lite_ntt_stage_matches_plain_and_the_host");
    let mut r = rng("lite_ntt_stage_matches_plain_and_the_host");
    let s = LiteSession::new().unwrap();
    let (n, limbs) = (1usize << 12, 3usize);
    let moduli = primes(60, limbs, n);
    let table = DeviceModuli::new(&dev, &moduli).unwrap();
    let x: Vec<u64> = (0..n * limbs)
        .map(|i| r.random_range(1..moduli[i / n].value()))
        .collect();
    use LiteForm::{Encrypted as E, Plain as P};
    for h in [2usize, 64, n / 2] {
        let groups = n / (2 * h);
        let tw: Vec<u64> = (0..limbs * groups)
            .map(|i| r.random_range(1..moduli[i / groups].value()))
            .collect();
        let want = host_ntt_stage(&x, &tw, &moduli, n, h);
        let twb = dev.upload(&tw).unwrap();
        for (fin, fout, delayed) in [
            (P, P, true),
            (E, E, false),
            (E, E, true),
            (E, P, true),
            (P, E, true),
        ] {
            let input = s.upload(&dev, &x, fin).unwrap();
            let op = lite::NttStage {
                input: &input,
                twiddles: &twb,
                moduli: &table,
                degree: n,
                limbs,
                half: h,
            };
            let mut out = LiteBuffer::alloc(&dev, n * limbs, fout).unwrap();
            lite::ntt_stage(&s, &mut out, &op, delayed).unwrap();
            let what = format!("NTT stage h {h}, {fin:?} -> {fout:?}, delayed {delayed}");
            assert_words(&s.download(&out).unwrap(), &want, &what);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn lite_gather_matches_plain_and_the_automorphism() {
    let (dev, _transfers) = gpu("lite_gather_matches_plain_and_the_automorphism");
    let mut r = rng("lite_gather_matches_plain_and_the_automorphism");
    let s = LiteSession::new().unwrap();
    let (log_n, rows) = (12u32, 3usize);
    let n = 1usize << log_n;
    let data: Vec<u64> = (0..n * rows).map(|_| r.random()).collect();
    let g = rhea_cuda::automorphism::rotation_galois(5, n).unwrap();
    // Rhea's automorphism kernel on the same rows is the reference.
    let layout = rhea_cuda::RnsLayout::new(n, rows, 1);
    let input = dev.upload(&data).unwrap();
    let mut reference = DeviceBuffer::alloc(&dev, n * rows).unwrap();
    rhea_cuda::automorphism::apply_ntt(&mut reference, &input, g, &layout).unwrap();
    let want = reference.to_host().unwrap();
    use LiteForm::{Encrypted as E, Padded as D, Plain as P};
    for (fin, fout, masked) in [
        (P, P, true),
        (D, D, false),
        (D, D, true),
        (E, D, true),
        (E, E, true),
        (E, P, true),
        (P, E, true),
    ] {
        let inb = s.upload(&dev, &data, fin).unwrap();
        let mut out = LiteBuffer::alloc(&dev, n * rows, fout).unwrap();
        lite::gather(&s, &mut out, &inb, g, n, rows, masked).unwrap();
        assert_words(
            &s.download(&out).unwrap(),
            &want,
            &format!("gather {fin:?} -> {fout:?}, masked {masked}"),
        );
    }
}

/// A random CSR matrix: row lengths 0..2·avg, a few empty rows, entries below q.
fn random_csr(r: &mut impl Rng, rows: usize, cols: usize, avg: usize, q: u64) -> CsrMatrix {
    let mut row_ptr = vec![0u64];
    let (mut col, mut val) = (Vec::new(), Vec::new());
    for i in 0..rows {
        let len = if i % 17 == 5 {
            0
        } else {
            r.random_range(0..2 * avg + 1)
        };
        for _ in 0..len {
            col.push(r.random_range(0..cols as u64));
            val.push(r.random_range(0..q));
        }
        row_ptr.push(col.len() as u64);
    }
    CsrMatrix::new(row_ptr, col, val, cols).unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn lite_spmv_matches_plain_and_the_host() {
    let (dev, _transfers) = gpu("lite_spmv_matches_plain_and_the_host");
    let mut r = rng("lite_spmv_matches_plain_and_the_host");
    let s = LiteSession::new().unwrap();
    let q = primes(61, 1, 1 << 10)[0];
    let table = DeviceModuli::new(&dev, &[q]).unwrap();
    use LiteForm::{Encrypted as E, Padded as D, Plain as P};
    let sh = |masked, delayed| Shuffle { masked, delayed };
    for (rows, cols, avg) in [
        (1usize, 5usize, 3usize),
        (37, 53, 6),
        (1000, 700, 20),
        (20_001, 30_000, 9),
    ] {
        let m = random_csr(&mut r, rows, cols, avg, q.value());
        let x: Vec<u64> = (0..cols).map(|_| r.random_range(0..q.value())).collect();
        let want = m.mul_vec(&x, &q).unwrap();
        for (fin, fout, shuffle) in [
            (P, P, sh(true, true)),
            (D, D, sh(false, false)),
            (D, D, sh(true, false)),
            (E, D, sh(true, false)),
            (E, D, sh(false, true)),
            (E, D, sh(true, true)),
            (E, E, sh(true, true)),
            (E, P, sh(true, true)),
            (P, D, sh(true, true)),
        ] {
            let a = DeviceCsr::upload(&s, &dev, &m, fin).unwrap();
            let xb = s.upload(&dev, &x, fin).unwrap();
            let mut y = LiteBuffer::alloc(&dev, rows, fout).unwrap();
            lite::spmv(&s, &mut y, &a, &xb, &table, shuffle).unwrap();
            let what = format!("spmv {rows}×{cols} {fin:?} -> {fout:?} {shuffle:?}");
            assert_words(&s.download(&y).unwrap(), &want, &what);
        }
    }
}

/// A known answer of the memory form, shared with the CPU emulation of the device library
/// (`scripts/lite-emu/emu.cpp` checks `lite_encrypt_block_at` against the same words).
#[test]
fn memory_form_known_answer() {
    let k1: [u8; 16] = std::array::from_fn(|i| 7 * i as u8 + 1);
    let k2: [u8; 16] = std::array::from_fn(|i| 200 - i as u8);
    let data = [0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210];
    let want = [0x67c1_cc5c_6eb6_885f, 0xb862_41e1_44cc_9551];
    let addr = 0x7f12_3456_0010;
    assert_eq!(oracle(&k1, &k2, &data, addr, Direction::Encrypt), want);
    let mut w = data;
    LiteSession::from_keys(&k1, &k2)
        .encrypt_words(&mut w, addr)
        .unwrap();
    assert_eq!(w, want);
}
