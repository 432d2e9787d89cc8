//! Unit tests of the host side of LITE (no GPU needed).

use super::*;

fn hex16(s: &str) -> [u8; 16] {
    std::array::from_fn(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
}

#[test]
fn aes128_fips197_known_answer() {
    // FIPS-197 Appendix C.1.
    let key = hex16("000102030405060708090a0b0c0d0e0f");
    let pt = hex16("00112233445566778899aabbccddeeff");
    let ct = hex16("69c4e0d86a7b0430d8cdb78070b4c55a");
    let enc = expand_encrypt_key(&key);
    assert_eq!(aes_encrypt_block(&enc, &pt), ct);
    assert_eq!(aes_decrypt_block(&expand_decrypt_key(&enc), &ct), pt);
    // FIPS-197 Appendix A.1: the last round key of 2b7e1516...
    let enc = expand_encrypt_key(&hex16("2b7e151628aed2a6abf7158809cf4f3c"));
    assert_eq!(
        enc[40..44],
        [0xd014f9a8, 0xc9ee2589, 0xe13f0cc8, 0xb6630ca6]
    );
}

#[test]
fn tables_are_openssls() {
    assert_eq!(SBOX[0x00], 0x63);
    assert_eq!(SBOX[0x53], 0xed);
    assert_eq!(INV_SBOX[0x63], 0x00);
    assert_eq!(TE0[0], 0xc663_63a5);
    assert_eq!(TE0[255], 0x2c16_163a);
    assert_eq!(TD0[0], 0x51f4_a750);
    assert_eq!(TD0[255], 0xd0b8_5742);
}

/// The literal tables of `lite_aes_xts.cuh` (`LITE_TE0`, `LITE_TD0`, `LITE_TD4`) equal the
/// host's, entry by entry.
#[test]
fn device_tables_equal_the_host_tables() {
    let src = LITE_AES_XTS_CUH.source;
    let table = |name: &str| -> Vec<u64> {
        let start = src.find(&format!("{name}[256] = {{")).expect(name);
        let body = &src[start..];
        let body = &body[body.find('{').unwrap() + 1..body.find("};").unwrap()];
        body.split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| {
                u64::from_str_radix(t.trim_start_matches("0x").trim_end_matches('u'), 16).unwrap()
            })
            .collect()
    };
    let te: Vec<u64> = TE0.iter().map(|&x| x as u64).collect();
    let td: Vec<u64> = TD0.iter().map(|&x| x as u64).collect();
    let td4: Vec<u64> = INV_SBOX.iter().map(|&x| x as u64).collect();
    assert_eq!(table("LITE_TE0"), te);
    assert_eq!(table("LITE_TD0"), td);
    assert_eq!(table("LITE_TD4"), td4);
}

#[test]
fn sessions_differ_and_round_trip() {
    let a = LiteSession::new().unwrap();
    let b = LiteSession::new().unwrap();
    assert_ne!(a.schedules().k1_enc, b.schedules().k1_enc);
    assert_ne!(a.schedules().k1_enc[..4], a.schedules().k2_enc[..4]);
    let plain: Vec<u64> = (0..64)
        .map(|i| 0x0123_4567_89ab_cdefu64.wrapping_mul(i + 1))
        .collect();
    let mut w = plain.clone();
    a.encrypt_words(&mut w, 0x7000_0000_0000).unwrap();
    assert!(w.iter().zip(&plain).all(|(x, y)| x != y));
    let mut w2 = plain.clone();
    b.encrypt_words(&mut w2, 0x7000_0000_0000).unwrap();
    assert_ne!(w, w2);
    a.decrypt_words(&mut w, 0x7000_0000_0000).unwrap();
    assert_eq!(w, plain);
    assert!(format!("{a:?}").contains(".."));
}

#[test]
fn the_same_plaintext_at_another_address_differs() {
    let s = LiteSession::from_keys(&[7; 16], &[9; 16]);
    let mut w = vec![5u64, 6, 5, 6];
    s.encrypt_words(&mut w, 0x1000).unwrap();
    assert_ne!(w[..2], w[2..], "blocks at different addresses must differ");
    let mut moved = w[2..].to_vec();
    s.decrypt_words(&mut moved, 0x1000).unwrap();
    assert_ne!(
        moved,
        [5, 6],
        "ciphertext moved to another address must not decrypt"
    );
}

#[test]
fn bad_memory_form_arguments_are_errors() {
    let s = LiteSession::from_keys(&[1; 16], &[2; 16]);
    assert!(s.encrypt_words(&mut [1, 2], 0x1008).is_err());
    assert!(s.encrypt_words(&mut [1, 2, 3], 0x1000).is_err());
    assert!(s.encrypt_words(&mut [1, 2], u64::MAX - 15).is_err());
    assert!(s.encrypt_unit(&mut [0u8; 15], 0).is_err());
    assert!(s.encrypt_unit(&mut [], 0).is_err());
}

#[test]
fn large_buffers_use_threads_and_agree() {
    let s = LiteSession::from_keys(&[3; 16], &[4; 16]);
    let plain: Vec<u64> = (0..(1u64 << 17) + 6).map(|i| i * 0x9e37_79b9).collect();
    let mut big = plain.clone();
    s.encrypt_words(&mut big, 0x2000_0000).unwrap();
    // The same blocks one chunk at a time (below the threading threshold).
    for (k, chunk) in plain.chunks(1024).enumerate() {
        let mut c = chunk.to_vec();
        s.encrypt_words(&mut c, 0x2000_0000 + 8 * 1024 * k as u64)
            .unwrap();
        assert_eq!(c, big[1024 * k..1024 * k + chunk.len()]);
    }
}

#[test]
fn kernel_names_are_unique_and_variants_resolve() {
    let mut n = LITE_KERNEL_NAMES.to_vec();
    n.sort_unstable();
    n.dedup();
    assert_eq!(n.len(), LITE_KERNEL_NAMES.len());
    use LiteForm::*;
    let enc = Encrypted;
    assert_eq!(
        mul_add_kernel(enc, enc, EwAccess::Word, Shuffle::NAIVE).unwrap(),
        "lite_ew_word_m0_d0_i1_o1"
    );
    assert_eq!(
        mul_add_kernel(Plain, Plain, EwAccess::V4, Shuffle::NAIVE).unwrap(),
        "lite_ew_plain_v2"
    );
    assert!(mul_add_kernel(Padded, enc, EwAccess::Word, Shuffle::NAIVE).is_err());
    assert_eq!(
        mul_add_kernel(enc, Plain, EwAccess::Word, Shuffle::NAIVE).unwrap(),
        "lite_ew_word_m0_d0_i1_o0"
    );
    assert_eq!(
        spmv_kernel(enc, Plain, Shuffle::OPTIMISED).unwrap(),
        "lite_spmv_m1_d1_pi0_po0_i1_o0",
        "the benchmark's `inputs only` SpMV"
    );
    assert_eq!(
        gather_kernel(enc, Padded, true).unwrap(),
        "lite_gather_m1_pi0_po1_i1_o1"
    );
    assert_eq!(
        spmv_kernel(enc, Padded, Shuffle::OPTIMISED).unwrap(),
        "lite_spmv_m1_d1_pi0_po1_i1_o1"
    );
    assert_eq!(
        spmv_kernel(Padded, enc, Shuffle::OPTIMISED).unwrap(),
        "lite_spmv_m1_d1_pi1_po0_i1_o1"
    );
}

/// Every kernel name the Rust side can form (the `*_kernel` choices for every operand form
/// and option, the test kernels of every entry point) is in [`LITE_KERNEL_NAMES`], and every
/// listed name is one of them. With the NVRTC test `lite_kernels_compile` (the CUBIN's
/// kernels are exactly [`LITE_KERNEL_NAMES`]) no request can name a kernel that `lite.cu`
/// does not instantiate.
#[test]
fn every_variant_the_rust_side_can_name_is_listed() {
    use std::collections::BTreeSet;
    use LiteForm::*;
    let forms = [Plain, Encrypted, Padded];
    let shuffles = [false, true]
        .into_iter()
        .flat_map(|masked| [false, true].map(|delayed| Shuffle { masked, delayed }));
    let shuffles: Vec<Shuffle> = shuffles.collect();
    let mut named = BTreeSet::new();
    let mut take = |what: String, r: Result<&'static str>| match r {
        Ok(n) => {
            named.insert(n);
        }
        Err(e) => panic!("{what}: {e}"),
    };
    for entry in [
        EntryPoint::V4,
        EntryPoint::Word32 { masked: false },
        EntryPoint::Word32 { masked: true },
        EntryPoint::Word64 { masked: false },
        EntryPoint::Word64 { masked: true },
    ] {
        for dir in [Direction::Encrypt, Direction::Decrypt] {
            take(
                format!("{entry:?} {dir:?}"),
                checked_name(entry.kernel(dir)),
            );
        }
    }
    take("xts".into(), checked_name("lite_test_xts".into()));
    take("ecb".into(), checked_name("lite_test_ecb".into()));
    for fi in forms {
        for fo in forms {
            for &sh in &shuffles {
                let what = format!("{fi:?} -> {fo:?} {sh:?}");
                for access in [EwAccess::Word, EwAccess::V4] {
                    let r = mul_add_kernel(fi, fo, access, sh);
                    if fi == Padded || fo == Padded {
                        assert!(r.is_err(), "mul_add {access:?} {what}: padded operands");
                    } else {
                        take(format!("mul_add {access:?} {what}"), r);
                    }
                }
                let r = ntt_stage_kernel(fi, fo, sh.delayed);
                if fi == Padded || fo == Padded {
                    assert!(r.is_err(), "ntt_stage {what}: padded operands");
                } else {
                    take(format!("ntt_stage {what}"), r);
                }
                take(format!("gather {what}"), gather_kernel(fi, fo, sh.masked));
                take(format!("spmv {what}"), spmv_kernel(fi, fo, sh));
            }
        }
    }
    let listed: BTreeSet<&str> = LITE_KERNEL_NAMES.iter().copied().collect();
    assert_eq!(
        listed, named,
        "LITE_KERNEL_NAMES must be exactly the kernels the Rust side can request"
    );
    assert_eq!(named.len(), 89);
}

#[test]
fn csr_matrices_are_checked() {
    assert!(CsrMatrix::new(vec![0, 2], vec![0, 1], vec![3, 4], 2).is_ok());
    assert!(CsrMatrix::new(vec![], vec![], vec![], 1).is_err());
    assert!(CsrMatrix::new(vec![1, 2], vec![0, 1], vec![3, 4], 2).is_err());
    assert!(CsrMatrix::new(vec![0, 2, 1], vec![0, 1], vec![3, 4], 2).is_err());
    assert!(CsrMatrix::new(vec![0, 2], vec![0, 2], vec![3, 4], 2).is_err());
    assert!(CsrMatrix::new(vec![0, 2], vec![0, 1], vec![3], 2).is_err());
    let q = rhea_math::Modulus::new(97).unwrap();
    let m = CsrMatrix::new(vec![0, 2, 2, 3], vec![0, 1, 1], vec![3, 4, 5], 2).unwrap();
    assert_eq!(
        m.mul_vec(&[10, 20], &q).unwrap(),
        vec![(30 + 80) % 97, 0, 100 % 97]
    );
}
