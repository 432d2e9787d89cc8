//! LITE: AES-XTS memory encryption inside kernels (issue 38; the seed's S002 ch. 3, "LITE",
//! ICS'22). The host side of `kernels/lite_aes_xts.cuh`.
//!
//! Data that LITE protects stay encrypted in device memory and in the GPU's caches: a kernel
//! loads ciphertext, decrypts it in registers, computes, and encrypts what it stores. The cipher
//! is AES-128 in XTS mode (IEEE 1619) in its *memory form*: every 16-byte block of device memory
//! is its own data unit, whose tweak value is its device virtual address divided by 16, so
//!
//! ```text
//! C = AES_K1(P ⊕ T) ⊕ T,   T = AES_K2(addr / 16)   (addr: the block's CUdeviceptr, 16-aligned)
//! ```
//!
//! which is XTS-AES-128 with 16-byte sectors numbered `addr / 16` (the `xts-mode` crate with
//! `get_tweak_default`: the tests' oracle). Design, threat model and what is measured:
//! `docs/lite.md`.
//!
//! - [`LiteSession`]: the two AES-128 session keys from the OS CSPRNG (`getrandom`), kept only as
//!   their key schedules ([`KeySchedules`], computed here, bit-exact with the device's T-table
//!   AES), zeroised on drop. Host-side XTS: [`LiteSession::encrypt_unit`] (general data units,
//!   for the IEEE 1619 vectors) and [`LiteSession::encrypt_words`] (the memory form).
//! - [`LiteBuffer`]: a device buffer in one of three [`LiteForm`]s (plain, encrypted, encrypted
//!   and padded to one word per 16-byte block). [`LiteSession::upload`] encrypts on the host
//!   with the buffer's own device address and uploads the ciphertext unchanged (the seed's
//!   *unified encryption domain*: no plaintext crosses the bus); [`LiteSession::download`]
//!   downloads ciphertext and decrypts on the host.
//! - Test kernels: [`xts_on_device`], [`ecb_on_device`], [`transcode`] (the memory form through
//!   each entry point: [`EntryPoint`]).
//! - Benchmark kernels, plain and LITE: [`mul_add`] (regular: element-wise `a·b + c mod q`),
//!   [`ntt_stage`] (regular: one radix-2 NTT stage), [`gather`] (irregular: the NTT-domain automorphism permutation) and [`spmv`] (irregular:
//!   CSR sparse matrix–vector product mod q). The seed's optimisations are compile-time
//!   parameters of their kernels, chosen by [`Shuffle`] and by the operands' forms (padding,
//!   partial encryption); every instantiated variant is in [`LITE_KERNEL_NAMES`].
//!
//! The round keys travel in each launch's parameter block (528 bytes, `struct LiteKeys`); the
//! driver copies them into the launch, so they exist in the GPU's constant bank while a kernel
//! runs and in driver memory until it is reused; Rhea's own copies are zeroised.

use std::sync::Arc;

use cudarc::driver::{DeviceRepr, LaunchConfig};
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use crate::buffer::DeviceBuffer;
use crate::device::GpuDevice;
use crate::elementwise::DeviceModuli;
use crate::error::{CudaError, Result};
use crate::launch::{launch_dependent, param};
use crate::registry::{Header, KernelSource, COMMON_CUH};

/// `kernels/lite_aes_xts.cuh`: the LITE device library (AES-128, XTS, the four entry points).
pub const LITE_AES_XTS_CUH: Header = Header {
    name: "lite_aes_xts.cuh",
    source: include_str!("../kernels/lite_aes_xts.cuh"),
};

/// `kernels/lite.cu`: LITE's test and benchmark kernels.
pub const LITE: KernelSource = KernelSource {
    name: "lite",
    source: include_str!("../kernels/lite.cu"),
    headers: &[COMMON_CUH, LITE_AES_XTS_CUH],
};

/// Every kernel of `kernels/lite.cu` (the benchmark variants that are instantiated).
pub const LITE_KERNEL_NAMES: &[&str] = &[
    "lite_test_xts",
    "lite_test_ecb",
    "lite_test_v4_encrypt",
    "lite_test_v4_decrypt",
    "lite_test_word32_encrypt_masked",
    "lite_test_word32_decrypt_masked",
    "lite_test_word32_encrypt_full",
    "lite_test_word32_decrypt_full",
    "lite_test_word64_encrypt_masked",
    "lite_test_word64_decrypt_masked",
    "lite_test_word64_encrypt_full",
    "lite_test_word64_decrypt_full",
    "lite_ew_plain",
    "lite_ew_plain_v2",
    "lite_ew_word_m0_d0_i1_o1",
    "lite_ew_word_m0_d0_i1_o0",
    "lite_ew_word_m0_d0_i0_o1",
    "lite_ew_word_m0_d1_i1_o1",
    "lite_ew_word_m0_d1_i1_o0",
    "lite_ew_word_m0_d1_i0_o1",
    "lite_ew_word_m1_d0_i1_o1",
    "lite_ew_word_m1_d0_i1_o0",
    "lite_ew_word_m1_d0_i0_o1",
    "lite_ew_word_m1_d1_i1_o1",
    "lite_ew_word_m1_d1_i1_o0",
    "lite_ew_word_m1_d1_i0_o1",
    "lite_ew_v4_d0_i1_o1",
    "lite_ew_v4_d0_i1_o0",
    "lite_ew_v4_d0_i0_o1",
    "lite_ew_v4_d1_i1_o1",
    "lite_ew_v4_d1_i1_o0",
    "lite_ew_v4_d1_i0_o1",
    "lite_ntt_stage_plain",
    "lite_ntt_stage_v4_d0_i1_o1",
    "lite_ntt_stage_v4_d0_i1_o0",
    "lite_ntt_stage_v4_d0_i0_o1",
    "lite_ntt_stage_v4_d1_i1_o1",
    "lite_ntt_stage_v4_d1_i1_o0",
    "lite_ntt_stage_v4_d1_i0_o1",
    "lite_gather_plain",
    "lite_gather_m0_pi0_po0_i0_o1",
    "lite_gather_m0_pi0_po1_i0_o1",
    "lite_gather_m0_pi0_po0_i1_o0",
    "lite_gather_m0_pi0_po0_i1_o1",
    "lite_gather_m0_pi0_po1_i1_o1",
    "lite_gather_m0_pi1_po0_i1_o0",
    "lite_gather_m0_pi1_po0_i1_o1",
    "lite_gather_m0_pi1_po1_i1_o1",
    "lite_gather_m1_pi0_po0_i0_o1",
    "lite_gather_m1_pi0_po1_i0_o1",
    "lite_gather_m1_pi0_po0_i1_o0",
    "lite_gather_m1_pi0_po0_i1_o1",
    "lite_gather_m1_pi0_po1_i1_o1",
    "lite_gather_m1_pi1_po0_i1_o0",
    "lite_gather_m1_pi1_po0_i1_o1",
    "lite_gather_m1_pi1_po1_i1_o1",
    "lite_spmv_plain",
    "lite_spmv_m0_d0_pi0_po0_i0_o1",
    "lite_spmv_m0_d0_pi0_po1_i0_o1",
    "lite_spmv_m0_d0_pi0_po0_i1_o0",
    "lite_spmv_m0_d0_pi0_po0_i1_o1",
    "lite_spmv_m0_d0_pi0_po1_i1_o1",
    "lite_spmv_m0_d0_pi1_po0_i1_o0",
    "lite_spmv_m0_d0_pi1_po0_i1_o1",
    "lite_spmv_m0_d0_pi1_po1_i1_o1",
    "lite_spmv_m0_d1_pi0_po0_i0_o1",
    "lite_spmv_m0_d1_pi0_po1_i0_o1",
    "lite_spmv_m0_d1_pi0_po0_i1_o0",
    "lite_spmv_m0_d1_pi0_po0_i1_o1",
    "lite_spmv_m0_d1_pi0_po1_i1_o1",
    "lite_spmv_m0_d1_pi1_po0_i1_o0",
    "lite_spmv_m0_d1_pi1_po0_i1_o1",
    "lite_spmv_m0_d1_pi1_po1_i1_o1",
    "lite_spmv_m1_d0_pi0_po0_i0_o1",
    "lite_spmv_m1_d0_pi0_po1_i0_o1",
    "lite_spmv_m1_d0_pi0_po0_i1_o0",
    "lite_spmv_m1_d0_pi0_po0_i1_o1",
    "lite_spmv_m1_d0_pi0_po1_i1_o1",
    "lite_spmv_m1_d0_pi1_po0_i1_o0",
    "lite_spmv_m1_d0_pi1_po0_i1_o1",
    "lite_spmv_m1_d0_pi1_po1_i1_o1",
    "lite_spmv_m1_d1_pi0_po0_i0_o1",
    "lite_spmv_m1_d1_pi0_po1_i0_o1",
    "lite_spmv_m1_d1_pi0_po0_i1_o0",
    "lite_spmv_m1_d1_pi0_po0_i1_o1",
    "lite_spmv_m1_d1_pi0_po1_i1_o1",
    "lite_spmv_m1_d1_pi1_po0_i1_o0",
    "lite_spmv_m1_d1_pi1_po0_i1_o1",
    "lite_spmv_m1_d1_pi1_po1_i1_o1",
];

/// Threads per block of every LITE kernel.
const THREADS: u32 = 256;

/// Blocks per multiprocessor of a grid-stride launch (2048 threads: a full H100 SM).
const BLOCKS_PER_SM: usize = 8;

/// Lanes per row of the SpMV kernels (`LITE_SPMV_G` in `lite.cu`).
pub const SPMV_LANES_PER_ROW: usize = 8;

// ---- AES-128: tables and block functions (OpenSSL's T-table AES, as the device) -------------

const fn xtime(a: u8) -> u8 {
    (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 }
}

const fn gmul(mut a: u8, mut b: u8) -> u8 {
    let mut r = 0;
    while b != 0 {
        if b & 1 != 0 {
            r ^= a;
        }
        a = xtime(a);
        b >>= 1;
    }
    r
}

/// `a^254` in GF(2^8): the multiplicative inverse (0 for 0).
const fn ginv(a: u8) -> u8 {
    let (mut r, mut base, mut e) = (1u8, a, 254u32);
    while e > 0 {
        if e & 1 != 0 {
            r = gmul(r, base);
        }
        base = gmul(base, base);
        e >>= 1;
    }
    r
}

const fn build_sbox() -> [u8; 256] {
    let mut s = [0u8; 256];
    let mut x = 0;
    while x < 256 {
        let b = ginv(x as u8);
        s[x] = b ^ b.rotate_left(1) ^ b.rotate_left(2) ^ b.rotate_left(3) ^ b.rotate_left(4) ^ 0x63;
        x += 1;
    }
    s
}

const fn invert(s: &[u8; 256]) -> [u8; 256] {
    let mut inv = [0u8; 256];
    let mut x = 0;
    while x < 256 {
        inv[s[x] as usize] = x as u8;
        x += 1;
    }
    inv
}

/// The AES S-box.
pub const SBOX: [u8; 256] = build_sbox();
/// The inverse S-box (OpenSSL's `Td4`).
pub const INV_SBOX: [u8; 256] = invert(&SBOX);

const fn build_te0() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut x = 0;
    while x < 256 {
        let s = SBOX[x];
        t[x] = (gmul(s, 2) as u32) << 24 | (s as u32) << 16 | (s as u32) << 8 | gmul(s, 3) as u32;
        x += 1;
    }
    t
}

const fn build_td0() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut x = 0;
    while x < 256 {
        let s = INV_SBOX[x];
        t[x] = (gmul(s, 14) as u32) << 24
            | (gmul(s, 9) as u32) << 16
            | (gmul(s, 13) as u32) << 8
            | gmul(s, 11) as u32;
        x += 1;
    }
    t
}

/// OpenSSL's `Te0` (`Te1..Te3` are its rotations right by 8, 16, 24 bits).
pub const TE0: [u32; 256] = build_te0();
/// OpenSSL's `Td0` (`Td1..Td3` are its rotations right by 8, 16, 24 bits).
pub const TD0: [u32; 256] = build_td0();

#[inline(always)]
fn te(k: u32, x: u32) -> u32 {
    TE0[(x & 0xff) as usize].rotate_right(8 * k)
}

#[inline(always)]
fn td(k: u32, x: u32) -> u32 {
    TD0[(x & 0xff) as usize].rotate_right(8 * k)
}

const RCON: [u32; 10] = [
    0x0100_0000,
    0x0200_0000,
    0x0400_0000,
    0x0800_0000,
    0x1000_0000,
    0x2000_0000,
    0x4000_0000,
    0x8000_0000,
    0x1b00_0000,
    0x3600_0000,
];

fn sub_word(w: u32) -> u32 {
    u32::from_be_bytes(w.to_be_bytes().map(|b| SBOX[b as usize]))
}

/// The AES-128 encryption key schedule (OpenSSL's `AES_set_encrypt_key`: 44 big-endian words).
pub fn expand_encrypt_key(key: &[u8; 16]) -> [u32; 44] {
    let mut rk = [0u32; 44];
    for (i, w) in rk.iter_mut().take(4).enumerate() {
        *w = u32::from_be_bytes([key[4 * i], key[4 * i + 1], key[4 * i + 2], key[4 * i + 3]]);
    }
    for r in 0..10 {
        let t = rk[4 * r + 3];
        rk[4 * r + 4] = rk[4 * r] ^ sub_word(t.rotate_left(8)) ^ RCON[r];
        rk[4 * r + 5] = rk[4 * r + 1] ^ rk[4 * r + 4];
        rk[4 * r + 6] = rk[4 * r + 2] ^ rk[4 * r + 5];
        rk[4 * r + 7] = rk[4 * r + 3] ^ rk[4 * r + 6];
    }
    rk
}

/// The AES-128 decryption key schedule of an encryption schedule (OpenSSL's
/// `AES_set_decrypt_key`: the rounds in reverse order, InvMixColumns applied to rounds 1..9).
pub fn expand_decrypt_key(enc: &[u32; 44]) -> [u32; 44] {
    let mut rk = [0u32; 44];
    for r in 0..=10 {
        rk[4 * r..4 * r + 4].copy_from_slice(&enc[4 * (10 - r)..4 * (10 - r) + 4]);
    }
    for w in rk.iter_mut().take(40).skip(4) {
        let s = |shift: u32| SBOX[((*w >> shift) & 0xff) as usize] as u32;
        *w = td(0, s(24)) ^ td(1, s(16)) ^ td(2, s(8)) ^ td(3, s(0));
    }
    rk
}

fn block_words(b: &[u8; 16]) -> [u32; 4] {
    std::array::from_fn(|i| {
        u32::from_be_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
    })
}

fn words_block(w: [u32; 4]) -> [u8; 16] {
    let mut b = [0u8; 16];
    for (i, x) in w.iter().enumerate() {
        b[4 * i..4 * i + 4].copy_from_slice(&x.to_be_bytes());
    }
    b
}

/// AES-128 encryption of one block with an encryption schedule ([`expand_encrypt_key`]).
pub fn aes_encrypt_block(rk: &[u32; 44], block: &[u8; 16]) -> [u8; 16] {
    let w = block_words(block);
    let mut s = [w[0] ^ rk[0], w[1] ^ rk[1], w[2] ^ rk[2], w[3] ^ rk[3]];
    for r in 1..10 {
        let t: [u32; 4] = std::array::from_fn(|i| {
            te(0, s[i] >> 24)
                ^ te(1, s[(i + 1) % 4] >> 16)
                ^ te(2, s[(i + 2) % 4] >> 8)
                ^ te(3, s[(i + 3) % 4])
                ^ rk[4 * r + i]
        });
        s = t;
    }
    let out: [u32; 4] = std::array::from_fn(|i| {
        (te(2, s[i] >> 24) & 0xff00_0000)
            ^ (te(3, s[(i + 1) % 4] >> 16) & 0x00ff_0000)
            ^ (te(0, s[(i + 2) % 4] >> 8) & 0x0000_ff00)
            ^ (te(1, s[(i + 3) % 4]) & 0x0000_00ff)
            ^ rk[40 + i]
    });
    words_block(out)
}

/// AES-128 decryption of one block with a decryption schedule ([`expand_decrypt_key`]).
pub fn aes_decrypt_block(rk: &[u32; 44], block: &[u8; 16]) -> [u8; 16] {
    let w = block_words(block);
    let mut s = [w[0] ^ rk[0], w[1] ^ rk[1], w[2] ^ rk[2], w[3] ^ rk[3]];
    for r in 1..10 {
        let t: [u32; 4] = std::array::from_fn(|i| {
            td(0, s[i] >> 24)
                ^ td(1, s[(i + 3) % 4] >> 16)
                ^ td(2, s[(i + 2) % 4] >> 8)
                ^ td(3, s[(i + 1) % 4])
                ^ rk[4 * r + i]
        });
        s = t;
    }
    let inv = |x: u32| INV_SBOX[(x & 0xff) as usize] as u32;
    let out: [u32; 4] = std::array::from_fn(|i| {
        (inv(s[i] >> 24) << 24)
            ^ (inv(s[(i + 3) % 4] >> 16) << 16)
            ^ (inv(s[(i + 2) % 4] >> 8) << 8)
            ^ inv(s[(i + 1) % 4])
            ^ rk[40 + i]
    });
    words_block(out)
}

/// `t · α` in GF(2^128) on the 16-byte little-endian tweak (IEEE 1619 §5.2).
pub fn xts_mul_alpha(t: &[u8; 16]) -> [u8; 16] {
    let v = u128::from_le_bytes(*t);
    let r = (v << 1) ^ if v >> 127 != 0 { 0x87 } else { 0 };
    r.to_le_bytes()
}

// ---- keys --------------------------------------------------------------------------------------

/// The key schedules of a LITE session, the kernels' `struct LiteKeys` (528 bytes, passed by
/// value in the launch's parameter block). Zeroised on drop; never printed.
#[repr(C)]
#[derive(Zeroize, ZeroizeOnDrop)]
pub struct KeySchedules {
    /// Key 1 (data), encryption schedule.
    pub k1_enc: [u32; 44],
    /// Key 1 (data), decryption schedule.
    pub k1_dec: [u32; 44],
    /// Key 2 (tweak), encryption schedule.
    pub k2_enc: [u32; 44],
}

// SAFETY: `#[repr(C)]` arrays of u32, the layout of `struct LiteKeys` (asserted below and by
// `static_assert`s in lite_aes_xts.cuh).
unsafe impl DeviceRepr for KeySchedules {}

const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<KeySchedules>() == 528);
    assert!(align_of::<KeySchedules>() == 4);
    assert!(offset_of!(KeySchedules, k1_dec) == 176);
    assert!(offset_of!(KeySchedules, k2_enc) == 352);
};

impl std::fmt::Debug for KeySchedules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeySchedules(..)")
    }
}

impl KeySchedules {
    /// The schedules of key 1 (data) and key 2 (tweak).
    pub fn new(k1: &[u8; 16], k2: &[u8; 16]) -> Box<KeySchedules> {
        let mut s = Box::new(KeySchedules {
            k1_enc: expand_encrypt_key(k1),
            k1_dec: [0; 44],
            k2_enc: expand_encrypt_key(k2),
        });
        s.k1_dec = expand_decrypt_key(&s.k1_enc);
        s
    }
}

/// Encrypt or decrypt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Plaintext to ciphertext.
    Encrypt,
    /// Ciphertext to plaintext.
    Decrypt,
}

/// A LITE session: two AES-128 keys (key 1 encrypts data, key 2 tweaks), held only as their
/// schedules, on the heap, zeroised on drop.
///
/// ```
/// use rhea_cuda::lite::LiteSession;
/// let s = LiteSession::new().unwrap();
/// let mut words = vec![1u64, 2, 3, 4];
/// s.encrypt_words(&mut words, 0x7f00_0000_0100).unwrap();
/// assert_ne!(words, [1, 2, 3, 4]);
/// s.decrypt_words(&mut words, 0x7f00_0000_0100).unwrap();
/// assert_eq!(words, [1, 2, 3, 4]);
/// ```
pub struct LiteSession {
    keys: Box<KeySchedules>,
}

impl std::fmt::Debug for LiteSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LiteSession(..)")
    }
}

impl LiteSession {
    /// A session with fresh keys from the operating system's CSPRNG (two distinct keys).
    ///
    /// Errors: [`CudaError::Entropy`] when the OS cannot supply random bytes.
    pub fn new() -> Result<LiteSession> {
        let mut bytes = Zeroizing::new([0u8; 32]);
        loop {
            getrandom::fill(bytes.as_mut()).map_err(|e| CudaError::Entropy(e.to_string()))?;
            if bytes[..16] != bytes[16..] {
                break;
            }
        }
        let k1 = Zeroizing::new(<[u8; 16]>::try_from(&bytes[..16]).expect("16 bytes"));
        let k2 = Zeroizing::new(<[u8; 16]>::try_from(&bytes[16..]).expect("16 bytes"));
        Ok(Self::from_keys(&k1, &k2))
    }

    /// A session with the given keys (known-answer tests; key 1 may equal key 2 there, as in
    /// IEEE 1619's vector 1, though a real session's keys differ).
    pub fn from_keys(k1: &[u8; 16], k2: &[u8; 16]) -> LiteSession {
        LiteSession {
            keys: KeySchedules::new(k1, k2),
        }
    }

    /// The key schedules (what the kernels receive).
    pub fn schedules(&self) -> &KeySchedules {
        &self.keys
    }

    /// The XTS tweak `T_0 = AES_K2(value)` of a data unit with tweak value `value`.
    fn tweak(&self, value: u128) -> [u8; 16] {
        aes_encrypt_block(&self.keys.k2_enc, &value.to_le_bytes())
    }

    fn xts_block(&self, block: &mut [u8; 16], t: &[u8; 16], dir: Direction) {
        for (b, x) in block.iter_mut().zip(t) {
            *b ^= x;
        }
        *block = match dir {
            Direction::Encrypt => aes_encrypt_block(&self.keys.k1_enc, block),
            Direction::Decrypt => aes_decrypt_block(&self.keys.k1_dec, block),
        };
        for (b, x) in block.iter_mut().zip(t) {
            *b ^= x;
        }
    }

    fn xts_unit(&self, data: &mut [u8], tweak: u128, dir: Direction) -> Result<()> {
        if data.is_empty() || data.len() % 16 != 0 {
            return Err(CudaError::InvalidArgument(format!(
                "an XTS data unit of {} bytes: LITE needs a positive multiple of 16 (no ciphertext \
                 stealing)",
                data.len()
            )));
        }
        let mut t = self.tweak(tweak);
        for chunk in data.chunks_exact_mut(16) {
            let block: &mut [u8; 16] = chunk.try_into().expect("16-byte chunk");
            self.xts_block(block, &t, dir);
            t = xts_mul_alpha(&t);
        }
        Ok(())
    }

    /// XTS-AES-128 encryption of one data unit (IEEE 1619) in place: `data` is a positive
    /// multiple of 16 bytes, `tweak` the data unit's tweak value (encoded little-endian).
    ///
    /// Errors: [`CudaError::InvalidArgument`] for another length.
    pub fn encrypt_unit(&self, data: &mut [u8], tweak: u128) -> Result<()> {
        self.xts_unit(data, tweak, Direction::Encrypt)
    }

    /// XTS-AES-128 decryption of one data unit in place (see [`LiteSession::encrypt_unit`]).
    ///
    /// Errors: [`CudaError::InvalidArgument`] for a length that is not a positive multiple of 16.
    pub fn decrypt_unit(&self, data: &mut [u8], tweak: u128) -> Result<()> {
        self.xts_unit(data, tweak, Direction::Decrypt)
    }

    fn memory_form(&self, words: &mut [u64], addr: u64, dir: Direction) -> Result<()> {
        if addr % 16 != 0 || words.len() % 2 != 0 {
            return Err(CudaError::InvalidArgument(format!(
                "LITE's memory form needs whole 16-byte blocks at a 16-byte aligned address; got \
                 {} words at {addr:#x}",
                words.len()
            )));
        }
        if addr.checked_add(8 * words.len() as u64).is_none() {
            return Err(CudaError::InvalidArgument(format!(
                "{} words at {addr:#x} pass the end of the address space",
                words.len()
            )));
        }
        let work = |chunk: &mut [u64], at: u64| {
            let mut block = Zeroizing::new([0u8; 16]);
            for (k, pair) in chunk.chunks_exact_mut(2).enumerate() {
                block[..8].copy_from_slice(&pair[0].to_le_bytes());
                block[8..].copy_from_slice(&pair[1].to_le_bytes());
                let t = self.tweak(((at >> 4) + k as u64) as u128);
                self.xts_block(&mut block, &t, dir);
                pair[0] = u64::from_le_bytes(block[..8].try_into().expect("8 bytes"));
                pair[1] = u64::from_le_bytes(block[8..].try_into().expect("8 bytes"));
            }
        };
        // Large buffers (uploads of ciphertexts, benchmark operands) on every core.
        const PER_THREAD: usize = 1 << 15;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        if words.len() < 2 * PER_THREAD || threads == 1 {
            work(words, addr);
            return Ok(());
        }
        let chunk_words = words.len().div_ceil(threads).next_multiple_of(2);
        std::thread::scope(|s| {
            for (i, chunk) in words.chunks_mut(chunk_words).enumerate() {
                let at = addr + 8 * (i * chunk_words) as u64;
                let work = &work;
                s.spawn(move || work(chunk, at));
            }
        });
        Ok(())
    }

    /// Encrypts `words` in place into LITE's memory form for device address `addr` (where word
    /// 0 will live): 16-byte block `k` (words `2k`, `2k + 1`, little-endian bytes) is XTS data
    /// unit `addr / 16 + k`.
    ///
    /// Errors: [`CudaError::InvalidArgument`] when `addr` is not 16-byte aligned or the length
    /// is odd.
    pub fn encrypt_words(&self, words: &mut [u64], addr: u64) -> Result<()> {
        self.memory_form(words, addr, Direction::Encrypt)
    }

    /// Decrypts words of LITE's memory form read from device address `addr`, in place.
    ///
    /// Errors: as [`LiteSession::encrypt_words`].
    pub fn decrypt_words(&self, words: &mut [u64], addr: u64) -> Result<()> {
        self.memory_form(words, addr, Direction::Decrypt)
    }

    /// A new device buffer holding `data` in `form`: encrypted on the host with the buffer's
    /// own device address and uploaded as ciphertext (plain form: uploaded as it is).
    pub fn upload(&self, dev: &Arc<GpuDevice>, data: &[u64], form: LiteForm) -> Result<LiteBuffer> {
        let mut buf = LiteBuffer::alloc(dev, data.len(), form)?;
        self.write(&mut buf, data)?;
        Ok(buf)
    }

    /// Writes `data` (exactly [`LiteBuffer::len`] words) into `buf` in its form.
    ///
    /// Errors: [`CudaError::Shape`] for another length.
    pub fn write(&self, buf: &mut LiteBuffer, data: &[u64]) -> Result<()> {
        if data.len() != buf.len {
            return Err(CudaError::Shape(format!(
                "{} words into a LITE buffer of {}",
                data.len(),
                buf.len
            )));
        }
        let phys = buf.raw.len();
        let mut host = match buf.form {
            LiteForm::Plain => return buf.raw.copy_from_host(data),
            LiteForm::Encrypted => {
                let mut v = Zeroizing::new(vec![0u64; phys]);
                v[..data.len()].copy_from_slice(data);
                v
            }
            LiteForm::Padded => {
                let mut v = Zeroizing::new(vec![0u64; phys]);
                for (i, &w) in data.iter().enumerate() {
                    v[2 * i] = w;
                }
                v
            }
        };
        self.encrypt_words(&mut host, buf.raw.device_ptr())?;
        buf.raw.copy_from_host(&host)
    }

    /// The words of `buf`: downloaded as they are and, unless plain, decrypted on the host.
    pub fn download(&self, buf: &LiteBuffer) -> Result<Vec<u64>> {
        let mut host = buf.raw.to_host()?;
        if buf.form == LiteForm::Plain {
            return Ok(host);
        }
        self.decrypt_words(&mut host, buf.raw.device_ptr())?;
        match buf.form {
            LiteForm::Padded => Ok((0..buf.len).map(|i| host[2 * i]).collect()),
            _ => {
                host.truncate(buf.len);
                Ok(host)
            }
        }
    }
}

// ---- buffers -----------------------------------------------------------------------------------

/// How a [`LiteBuffer`] holds its words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LiteForm {
    /// Plaintext, dense (an unprotected operand: partial encryption).
    Plain,
    /// Ciphertext, dense: word `i` is half of 16-byte block `i / 2` (the length rounded up to
    /// whole blocks).
    Encrypted,
    /// Ciphertext, padded: word `i` alone in 16-byte block `i` (its first 8 bytes; the other 8
    /// are zero plaintext), so threads can write neighbouring words without sharing a block.
    Padded,
}

impl LiteForm {
    /// The device words that `len` words take in this form.
    pub fn physical_words(self, len: usize) -> usize {
        match self {
            LiteForm::Plain => len,
            LiteForm::Encrypted => len.next_multiple_of(2).max(2),
            LiteForm::Padded => 2 * len.max(1),
        }
    }

    fn encrypted(self) -> bool {
        self != LiteForm::Plain
    }
}

/// A device buffer of `len` u64 words in a [`LiteForm`]. Its ciphertext is bound to its device
/// address: copied elsewhere it no longer decrypts.
#[derive(Debug)]
pub struct LiteBuffer {
    raw: DeviceBuffer,
    len: usize,
    form: LiteForm,
}

impl LiteBuffer {
    /// Allocates a buffer of `len` words in `form`, its contents undefined (a kernel's output).
    pub fn alloc(dev: &Arc<GpuDevice>, len: usize, form: LiteForm) -> Result<LiteBuffer> {
        let raw = DeviceBuffer::alloc(dev, form.physical_words(len))?;
        if form.encrypted() && raw.device_ptr() % 16 != 0 {
            return Err(CudaError::Driver(format!(
                "a device allocation at {:#x} is not 16-byte aligned",
                raw.device_ptr()
            )));
        }
        Ok(LiteBuffer { raw, len, form })
    }

    /// The number of words.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no words.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The buffer's form.
    pub fn form(&self) -> LiteForm {
        self.form
    }

    /// The device buffer as it is (ciphertext unless plain; [`LiteForm::physical_words`] words).
    pub fn raw(&self) -> &DeviceBuffer {
        &self.raw
    }

    fn ptr(&self) -> u64 {
        self.raw.device_ptr()
    }
}

// ---- launches ----------------------------------------------------------------------------------

fn grid_stride(dev: &GpuDevice, items: usize) -> LaunchConfig {
    let blocks = items.div_ceil(THREADS as usize).clamp(
        1,
        (dev.multiprocessor_count().max(1) as usize) * BLOCKS_PER_SM,
    );
    LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn one_per_thread(items: usize) -> Result<LaunchConfig> {
    let blocks = items.next_multiple_of(32).div_ceil(THREADS as usize).max(1);
    if blocks > i32::MAX as usize {
        return Err(CudaError::Shape(format!("{items} items exceed one launch")));
    }
    Ok(LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    })
}

fn checked_name(name: String) -> Result<&'static str> {
    LITE_KERNEL_NAMES
        .iter()
        .copied()
        .find(|n| *n == name)
        .ok_or_else(|| {
            CudaError::InvalidArgument(format!(
                "the LITE kernel variant `{name}` is not instantiated in kernels/lite.cu"
            ))
        })
}

/// Launches a LITE kernel with the session's keys and `args` (its two parameters).
fn launch_keyed<A: DeviceRepr>(
    dev: &Arc<GpuDevice>,
    session: &LiteSession,
    kernel: &str,
    cfg: LaunchConfig,
    args: &A,
) -> Result<()> {
    let f = dev.function(&LITE, kernel)?;
    let mut params = [param(session.schedules()), param(args)];
    // SAFETY: the kernel's parameters are `const LiteKeys` (the #[repr(C)] KeySchedules, 528
    // bytes) and its argument struct (#[repr(C)] twin of the CUDA struct, layouts asserted on
    // both sides), pointing to values that live across the call; every caller checked that the
    // buffers the arguments name hold the words the kernel touches; all work is ordered on the
    // device's one stream and the kernels touch no operand before pdl_wait().
    unsafe { launch_dependent(dev, &f, cfg, &mut params) }
}

/// Launches a plain kernel (no keys) with `args`.
fn launch_plain<A: DeviceRepr>(
    dev: &Arc<GpuDevice>,
    kernel: &str,
    cfg: LaunchConfig,
    args: &A,
) -> Result<()> {
    let f = dev.function(&LITE, kernel)?;
    let mut params = [param(args)];
    // SAFETY: as in launch_keyed, for a kernel whose one parameter is the argument struct.
    unsafe { launch_dependent(dev, &f, cfg, &mut params) }
}

/// Launch arguments of the test kernels `lite_test_xts` / `lite_test_ecb` (`struct XtsTestArgs`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct XtsTestArgs {
    data: u64,
    tweaks: u64,
    blocks: u64,
    unit_blocks: u32,
    decrypt: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for XtsTestArgs {}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<XtsTestArgs>() == 32);
    assert!(offset_of!(XtsTestArgs, blocks) == 16);
    assert!(offset_of!(XtsTestArgs, unit_blocks) == 24);
    assert!(offset_of!(XtsTestArgs, decrypt) == 28);
};

/// XTS-AES-128 on the device, in place (test kernel `lite_test_xts`): `data` holds data units of
/// `unit_bytes` bytes (a positive multiple of 16), unit `u` with tweak value `tweaks[u]`; the
/// bytes of the units are the words' little-endian bytes in order.
///
/// Errors: [`CudaError::InvalidArgument`] for a bad unit size; [`CudaError::Shape`] when `data`
/// does not hold `tweaks.len()` units.
pub fn xts_on_device(
    session: &LiteSession,
    data: &mut DeviceBuffer,
    unit_bytes: usize,
    tweaks: &[u128],
    dir: Direction,
) -> Result<()> {
    if unit_bytes == 0 || unit_bytes % 16 != 0 || unit_bytes / 16 > u32::MAX as usize {
        return Err(CudaError::InvalidArgument(format!(
            "an XTS data unit of {unit_bytes} bytes (a positive multiple of 16)"
        )));
    }
    let blocks = tweaks.len() * unit_bytes / 16;
    if data.len() != 2 * blocks {
        return Err(CudaError::Shape(format!(
            "{} units of {unit_bytes} bytes need {} words; the buffer has {}",
            tweaks.len(),
            2 * blocks,
            data.len()
        )));
    }
    if blocks == 0 {
        return Ok(());
    }
    let dev = data.device().clone();
    let tw: Vec<u64> = tweaks
        .iter()
        .flat_map(|&t| [t as u64, (t >> 64) as u64])
        .collect();
    let tw = dev.upload(&tw)?;
    let args = XtsTestArgs {
        data: data.device_ptr(),
        tweaks: tw.device_ptr(),
        blocks: blocks as u64,
        unit_blocks: (unit_bytes / 16) as u32,
        decrypt: u32::from(dir == Direction::Decrypt),
    };
    launch_keyed(
        &dev,
        session,
        "lite_test_xts",
        grid_stride(&dev, blocks),
        &args,
    )?;
    dev.synchronize()
}

/// AES-128 ECB with key 1 on the device, in place, every 16-byte block of `data` (test kernel
/// `lite_test_ecb`, for the FIPS-197 known answers).
///
/// Errors: [`CudaError::Shape`] for an odd number of words.
pub fn ecb_on_device(session: &LiteSession, data: &mut DeviceBuffer, dir: Direction) -> Result<()> {
    if data.len() % 2 != 0 {
        return Err(CudaError::Shape(format!(
            "AES blocks are two words; the buffer has {}",
            data.len()
        )));
    }
    let dev = data.device().clone();
    let blocks = data.len() / 2;
    if blocks == 0 {
        return Ok(());
    }
    let args = XtsTestArgs {
        data: data.device_ptr(),
        tweaks: 0,
        blocks: blocks as u64,
        unit_blocks: 1,
        decrypt: u32::from(dir == Direction::Decrypt),
    };
    launch_keyed(
        &dev,
        session,
        "lite_test_ecb",
        grid_stride(&dev, blocks),
        &args,
    )
}

/// An entry point of the device library, for [`transcode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryPoint {
    /// `lite_encrypt<u32>` / `lite_decrypt<u32>`: four lanes per 16-byte block.
    Word32 {
        /// The shuffle mask from `__ballot_sync` (else the full mask: every lane calls).
        masked: bool,
    },
    /// `lite_encrypt<u64>` / `lite_decrypt<u64>`: two lanes per 16-byte block.
    Word64 {
        /// The shuffle mask from `__ballot_sync` (else the full mask: every lane calls).
        masked: bool,
    },
    /// `lite_encrypt_v4` / `lite_decrypt_v4`: one 16-byte block per thread.
    V4,
}

impl EntryPoint {
    /// Bytes of one item (the word the entry point moves per thread).
    pub fn item_bytes(self) -> usize {
        match self {
            EntryPoint::Word32 { .. } => 4,
            EntryPoint::Word64 { .. } => 8,
            EntryPoint::V4 => 16,
        }
    }

    /// The u64 words of device buffer that a [`transcode`] of `items` items reads and writes:
    /// whole blocks, and with the full mask whole warps (every lane of the last warp calls).
    pub fn buffer_words(self, items: usize) -> usize {
        let per_warp = match self {
            EntryPoint::Word32 { masked: false } | EntryPoint::Word64 { masked: false } => 32,
            EntryPoint::Word32 { masked: true } => 4,
            EntryPoint::Word64 { masked: true } => 2,
            EntryPoint::V4 => 1,
        };
        (items.next_multiple_of(per_warp) * self.item_bytes()).div_ceil(8)
    }

    fn kernel(self, dir: Direction) -> String {
        let d = match dir {
            Direction::Encrypt => "encrypt",
            Direction::Decrypt => "decrypt",
        };
        match self {
            EntryPoint::Word32 { masked } | EntryPoint::Word64 { masked } => format!(
                "lite_test_word{}_{d}_{}",
                8 * self.item_bytes(),
                if masked { "masked" } else { "full" }
            ),
            EntryPoint::V4 => format!("lite_test_v4_{d}"),
        }
    }
}

/// Launch arguments of the memory-form test kernels (`struct MemTestArgs`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct MemTestArgs {
    input: u64,
    out: u64,
    n: u64,
    skip: u32,
    pad: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for MemTestArgs {}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<MemTestArgs>() == 32);
    assert!(offset_of!(MemTestArgs, n) == 16);
    assert!(offset_of!(MemTestArgs, skip) == 24);
};

/// The memory form through one entry point (test kernels `lite_test_*`): item `i` (a word of
/// the entry point's size, or a block) of `input` is encrypted into `out` (`Encrypt`: `input`
/// plaintext, `out` then holds LITE ciphertext at its own addresses) or decrypted from `input`
/// (`Decrypt`: `input` ciphertext at its addresses, `out` plaintext).
///
/// With a masked word entry point and `skip > 0`, item `i` with `i % skip == skip - 1` is left
/// out (its lane is absent from the mask): a decryption does not write it, an encryption keeps
/// its plaintext (read-modify-write of its block); so are the words past `items` in the last
/// block. With a full-mask word entry point every lane of a warp calls, so the items are whole
/// warps: `items` rounded up to 32 are encrypted or decrypted, in both directions. Both buffers
/// hold at least [`EntryPoint::buffer_words`]`(items)` words; the kernel touches no word past them.
///
/// Errors: [`CudaError::InvalidArgument`] for `skip > 0` without a masked word entry point;
/// [`CudaError::Shape`] for short buffers.
pub fn transcode(
    session: &LiteSession,
    entry: EntryPoint,
    dir: Direction,
    input: &DeviceBuffer,
    out: &mut DeviceBuffer,
    items: usize,
    skip: u32,
) -> Result<()> {
    input.check_same_device(out)?;
    let masked = matches!(
        entry,
        EntryPoint::Word32 { masked: true } | EntryPoint::Word64 { masked: true }
    );
    if skip > 0 && !masked {
        return Err(CudaError::InvalidArgument(
            "items can be left out only by a masked word-granular entry point".into(),
        ));
    }
    let need = entry.buffer_words(items);
    if input.len() < need || out.len() < need {
        return Err(CudaError::Shape(format!(
            "{items} items through {entry:?} need buffers of {need} words; got {} and {}",
            input.len(),
            out.len()
        )));
    }
    if items == 0 {
        return Ok(());
    }
    let dev = input.device().clone();
    let args = MemTestArgs {
        input: input.device_ptr(),
        out: out.device_ptr(),
        n: items as u64,
        skip,
        pad: 0,
    };
    let kernel = checked_name(entry.kernel(dir))?;
    let cfg = match entry {
        EntryPoint::V4 => grid_stride(&dev, items),
        _ => one_per_thread(items)?,
    };
    launch_keyed(&dev, session, kernel, cfg, &args)
}

// ---- benchmark kernels -------------------------------------------------------------------------

/// The shuffle optimisations of a LITE kernel (compile-time parameters of its variants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shuffle {
    /// Masked shuffle: the participating lanes from `__ballot_sync` before the divergent code;
    /// off, every lane runs the warp's longest path (full-mask shuffles).
    pub masked: bool,
    /// Delayed shuffle: every load of an iteration is issued before the first decryption.
    pub delayed: bool,
}

impl Shuffle {
    /// Both optimisations on.
    pub const OPTIMISED: Shuffle = Shuffle {
        masked: true,
        delayed: true,
    };
    /// Both off (the seed's naive port).
    pub const NAIVE: Shuffle = Shuffle {
        masked: false,
        delayed: false,
    };
}

fn bit(b: bool) -> u8 {
    u8::from(b)
}

/// How the element-wise kernel reads and writes its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EwAccess {
    /// One word per thread: LITE's word-granular entry points (two lanes per block).
    Word,
    /// One 16-byte block (two words) per thread: the v4 entry points.
    V4,
}

/// The operands of [`mul_add`]: `out = a·b + c mod q_l` over `limbs` limbs of `degree` words
/// (`[limb][N]`), limb `l` reduced modulo `moduli[l]`; inputs canonical (`< q`).
#[derive(Clone, Copy, Debug)]
pub struct MulAdd<'a> {
    /// First factor.
    pub a: &'a LiteBuffer,
    /// Second factor.
    pub b: &'a LiteBuffer,
    /// Addend.
    pub c: &'a LiteBuffer,
    /// The limbs' moduli (at least `limbs`).
    pub moduli: &'a DeviceModuli,
    /// Words per limb, a power of two.
    pub degree: usize,
    /// Limbs.
    pub limbs: usize,
}

/// Launch arguments of the element-wise kernels (`struct LiteEwArgs`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct EwArgs {
    out: u64,
    a: u64,
    b: u64,
    c: u64,
    moduli: u64,
    words: u64,
    log_n: u32,
    pad: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for EwArgs {}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<EwArgs>() == 56);
    assert!(offset_of!(EwArgs, moduli) == 32);
    assert!(offset_of!(EwArgs, words) == 40);
    assert!(offset_of!(EwArgs, log_n) == 48);
};

/// The kernel [`mul_add`] launches for these forms, access and shuffle options.
///
/// Errors: [`CudaError::InvalidArgument`] for mixed or padded inputs, a padded output, or a
/// variant that is not instantiated.
pub fn mul_add_kernel(
    inputs: LiteForm,
    output: LiteForm,
    access: EwAccess,
    shuffle: Shuffle,
) -> Result<&'static str> {
    if inputs == LiteForm::Padded || output == LiteForm::Padded {
        return Err(CudaError::InvalidArgument(
            "the element-wise kernels read and write dense operands (no padding)".into(),
        ));
    }
    let (i, o) = (inputs.encrypted(), output.encrypted());
    let name = match (i || o, access) {
        (false, EwAccess::Word) => "lite_ew_plain".to_string(),
        (false, EwAccess::V4) => "lite_ew_plain_v2".to_string(),
        (true, EwAccess::Word) => format!(
            "lite_ew_word_m{}_d{}_i{}_o{}",
            bit(shuffle.masked),
            bit(shuffle.delayed),
            bit(i),
            bit(o)
        ),
        (true, EwAccess::V4) => {
            format!(
                "lite_ew_v4_d{}_i{}_o{}",
                bit(shuffle.delayed),
                bit(i),
                bit(o)
            )
        }
    };
    checked_name(name)
}

fn common_form(what: &str, bufs: &[&LiteBuffer]) -> Result<LiteForm> {
    let f = bufs[0].form;
    if bufs.iter().any(|b| b.form != f) {
        return Err(CudaError::InvalidArgument(format!(
            "the inputs of {what} must share one form (all plain, all encrypted or all padded)"
        )));
    }
    Ok(f)
}

fn check_len(what: &str, b: &LiteBuffer, len: usize) -> Result<()> {
    if b.len != len {
        return Err(CudaError::Shape(format!(
            "{what} has {} words; {len} needed",
            b.len
        )));
    }
    Ok(())
}

/// `out = a·b + c mod q` word by word (the regular benchmark), plain when every operand is
/// plain, else through LITE (inputs and output each encrypted or plain: partial encryption).
///
/// Errors: [`CudaError::Shape`] for operands of the wrong length, a degree that is not a power
/// of two or too few moduli; [`CudaError::InvalidArgument`] as [`mul_add_kernel`], or for the
/// full-mask word variant on a word count that is not a multiple of 32.
pub fn mul_add(
    session: &LiteSession,
    out: &mut LiteBuffer,
    op: &MulAdd<'_>,
    access: EwAccess,
    shuffle: Shuffle,
) -> Result<()> {
    let inputs = common_form("mul_add", &[op.a, op.b, op.c])?;
    let kernel = mul_add_kernel(inputs, out.form, access, shuffle)?;
    if op.degree < 2 || !op.degree.is_power_of_two() || op.limbs == 0 {
        return Err(CudaError::Shape(format!(
            "{} limbs of degree {} (a power of two ≥ 2)",
            op.limbs, op.degree
        )));
    }
    if op.moduli.len() < op.limbs {
        return Err(CudaError::Shape(format!(
            "{} limbs, {} moduli",
            op.limbs,
            op.moduli.len()
        )));
    }
    let words = op.degree * op.limbs;
    for (what, b) in [("a", op.a), ("b", op.b), ("c", op.c)] {
        check_len(what, b, words)?;
        b.raw.check_same_device(&out.raw)?;
    }
    check_len("out", out, words)?;
    let lite = inputs.encrypted() || out.form.encrypted();
    if lite && access == EwAccess::Word && !shuffle.masked && words % 32 != 0 {
        return Err(CudaError::InvalidArgument(format!(
            "the full-mask variant needs whole warps: {words} words is not a multiple of 32"
        )));
    }
    let dev = out.raw.device().clone();
    let args = EwArgs {
        out: out.ptr(),
        a: op.a.ptr(),
        b: op.b.ptr(),
        c: op.c.ptr(),
        moduli: op.moduli.device_ptr(),
        words: words as u64,
        log_n: op.degree.trailing_zeros(),
        pad: 0,
    };
    let items = match access {
        EwAccess::Word => words,
        EwAccess::V4 => words / 2,
    };
    let cfg = grid_stride(&dev, items);
    if lite {
        launch_keyed(&dev, session, kernel, cfg, &args)
    } else {
        launch_plain(&dev, kernel, cfg, &args)
    }
}

/// Launch arguments of the NTT-stage kernels (`struct LiteNttStageArgs`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct NttStageArgs {
    out: u64,
    input: u64,
    tw: u64,
    moduli: u64,
    words: u64,
    log_n: u32,
    log_h: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for NttStageArgs {}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<NttStageArgs>() == 48);
    assert!(offset_of!(NttStageArgs, words) == 32);
    assert!(offset_of!(NttStageArgs, log_h) == 44);
};

/// The operands of [`ntt_stage`]: one radix-2 Cooley–Tukey stage over `limbs` limbs of `degree`
/// words, out of place. In limb `l`, butterfly `(i, i + h)` of group `g = ⌊(i mod N) / 2h⌋`
/// gives `x + w·y` and `x − w·y` mod `q_l` with `w = twiddles[l · N / 2h + g]`; inputs and
/// twiddles below `q_l`. The twiddles are public and plain.
#[derive(Clone, Copy, Debug)]
pub struct NttStage<'a> {
    /// The input words.
    pub input: &'a LiteBuffer,
    /// `limbs · N / (2h)` plain twiddles.
    pub twiddles: &'a DeviceBuffer,
    /// The limbs' moduli (at least `limbs`).
    pub moduli: &'a DeviceModuli,
    /// Words per limb, a power of two.
    pub degree: usize,
    /// Limbs.
    pub limbs: usize,
    /// The butterfly distance `h`: a power of two, `2 ≤ h < N`.
    pub half: usize,
}

/// The kernel [`ntt_stage`] launches for these forms and delayed-shuffle option.
///
/// Errors: [`CudaError::InvalidArgument`] for a padded operand or a variant that is not
/// instantiated.
pub fn ntt_stage_kernel(input: LiteForm, output: LiteForm, delayed: bool) -> Result<&'static str> {
    if input == LiteForm::Padded || output == LiteForm::Padded {
        return Err(CudaError::InvalidArgument(
            "the NTT stage reads and writes dense operands (no padding)".into(),
        ));
    }
    let (i, o) = (input.encrypted(), output.encrypted());
    if !i && !o {
        return checked_name("lite_ntt_stage_plain".into());
    }
    checked_name(format!(
        "lite_ntt_stage_v4_d{}_i{}_o{}",
        bit(delayed),
        bit(i),
        bit(o)
    ))
}

/// One radix-2 NTT stage (the second regular benchmark; see [`NttStage`]): two butterflies,
/// i.e. a 16-byte block at `i` and one at `i + h`, per thread. Plain when both buffers are,
/// else through LITE's v4 entry points.
///
/// Errors: [`CudaError::Shape`] for operands of the wrong length, a degree or `h` out of range,
/// or too few moduli; [`CudaError::InvalidArgument`] as [`ntt_stage_kernel`].
pub fn ntt_stage(
    session: &LiteSession,
    out: &mut LiteBuffer,
    op: &NttStage<'_>,
    delayed: bool,
) -> Result<()> {
    let kernel = ntt_stage_kernel(op.input.form, out.form, delayed)?;
    let (n, h) = (op.degree, op.half);
    if !n.is_power_of_two() || !h.is_power_of_two() || h < 2 || h >= n || op.limbs == 0 {
        return Err(CudaError::Shape(format!(
            "an NTT stage of distance {h} over {} limbs of degree {n} (powers of two, 2 ≤ h < N)",
            op.limbs
        )));
    }
    if op.moduli.len() < op.limbs {
        return Err(CudaError::Shape(format!(
            "{} limbs, {} moduli",
            op.limbs,
            op.moduli.len()
        )));
    }
    let words = n * op.limbs;
    check_len("input", op.input, words)?;
    check_len("out", out, words)?;
    if op.twiddles.len() != op.limbs * n / (2 * h) {
        return Err(CudaError::Shape(format!(
            "{} twiddles; {} limbs of {} groups need {}",
            op.twiddles.len(),
            op.limbs,
            n / (2 * h),
            op.limbs * n / (2 * h)
        )));
    }
    op.input.raw.check_same_device(&out.raw)?;
    op.twiddles.check_same_device(&out.raw)?;
    let dev = out.raw.device().clone();
    let args = NttStageArgs {
        out: out.ptr(),
        input: op.input.ptr(),
        tw: op.twiddles.device_ptr(),
        moduli: op.moduli.device_ptr(),
        words: words as u64,
        log_n: n.trailing_zeros(),
        log_h: h.trailing_zeros(),
    };
    let cfg = grid_stride(&dev, words / 4);
    if op.input.form.encrypted() || out.form.encrypted() {
        launch_keyed(&dev, session, kernel, cfg, &args)
    } else {
        launch_plain(&dev, kernel, cfg, &args)
    }
}

/// Launch arguments of the gather kernels (`struct LiteGatherArgs`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct GatherArgs {
    out: u64,
    input: u64,
    n: u64,
    g: u64,
    words: u64,
    log_n: u32,
    pad: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for GatherArgs {}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<GatherArgs>() == 48);
    assert!(offset_of!(GatherArgs, words) == 32);
    assert!(offset_of!(GatherArgs, log_n) == 40);
};

/// The kernel [`gather`] launches for these forms and mask option.
///
/// Errors: [`CudaError::InvalidArgument`] for a variant that is not instantiated.
pub fn gather_kernel(input: LiteForm, output: LiteForm, masked: bool) -> Result<&'static str> {
    let (i, o) = (input.encrypted(), output.encrypted());
    if !i && !o {
        return checked_name("lite_gather_plain".into());
    }
    checked_name(format!(
        "lite_gather_m{}_pi{}_po{}_i{}_o{}",
        bit(masked),
        bit(input == LiteForm::Padded),
        bit(output == LiteForm::Padded),
        bit(i),
        bit(o)
    ))
}

/// The NTT-domain automorphism `σ_g` of `rows` rows of `degree` words as a gather (the
/// irregular benchmark): `out[r][i] = input[r][j(i)]`, `j` the index map of
/// [`crate::automorphism::apply_ntt`]. Plain when both buffers are; else through LITE, each
/// buffer plain, encrypted or padded (selective padding: only `out` padded).
///
/// Errors: [`CudaError::Shape`] for buffers that do not hold `rows · degree` words or a degree
/// that is not a power of two; [`CudaError::InvalidArgument`] for an even Galois element, or as
/// [`gather_kernel`].
pub fn gather(
    session: &LiteSession,
    out: &mut LiteBuffer,
    input: &LiteBuffer,
    galois: u64,
    degree: usize,
    rows: usize,
    masked: bool,
) -> Result<()> {
    let kernel = gather_kernel(input.form, out.form, masked)?;
    if degree < 2 || !degree.is_power_of_two() || rows == 0 {
        return Err(CudaError::Shape(format!(
            "{rows} rows of degree {degree} (a power of two ≥ 2)"
        )));
    }
    if galois % 2 == 0 {
        return Err(CudaError::InvalidArgument(format!(
            "the Galois element must be odd, got {galois}"
        )));
    }
    let words = degree * rows;
    check_len("input", input, words)?;
    check_len("out", out, words)?;
    input.raw.check_same_device(&out.raw)?;
    let lite = input.form.encrypted() || out.form.encrypted();
    if lite && !masked && words % 32 != 0 {
        return Err(CudaError::InvalidArgument(format!(
            "the full-mask variant needs whole warps: {words} words is not a multiple of 32"
        )));
    }
    let dev = out.raw.device().clone();
    let args = GatherArgs {
        out: out.ptr(),
        input: input.ptr(),
        n: degree as u64,
        g: galois & (2 * degree as u64 - 1),
        words: words as u64,
        log_n: degree.trailing_zeros(),
        pad: 0,
    };
    let cfg = grid_stride(&dev, words);
    if lite {
        launch_keyed(&dev, session, kernel, cfg, &args)
    } else {
        launch_plain(&dev, kernel, cfg, &args)
    }
}

/// A sparse matrix in CSR form with entries modulo a prime, checked on construction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsrMatrix {
    row_ptr: Vec<u64>,
    col: Vec<u64>,
    val: Vec<u64>,
    cols: usize,
}

impl CsrMatrix {
    /// A matrix of `row_ptr.len() - 1` rows and `cols` columns: row `r` holds entries
    /// `row_ptr[r] .. row_ptr[r + 1]` of `col` / `val`.
    ///
    /// Errors: [`CudaError::InvalidArgument`] when `row_ptr` is empty, does not start at 0,
    /// decreases or does not end at `col.len()`, when `col` and `val` differ in length, or a
    /// column index is `≥ cols`.
    pub fn new(row_ptr: Vec<u64>, col: Vec<u64>, val: Vec<u64>, cols: usize) -> Result<Self> {
        let bad = |m: String| Err(CudaError::InvalidArgument(format!("CSR matrix: {m}")));
        if row_ptr.first() != Some(&0) {
            return bad("row_ptr must start with 0".into());
        }
        if row_ptr.windows(2).any(|w| w[1] < w[0]) {
            return bad("row_ptr decreases".into());
        }
        if row_ptr.last() != Some(&(col.len() as u64)) || col.len() != val.len() {
            return bad(format!(
                "row_ptr ends at {:?}; {} column indices, {} values",
                row_ptr.last(),
                col.len(),
                val.len()
            ));
        }
        if let Some(c) = col.iter().find(|&&c| c >= cols as u64) {
            return bad(format!("column index {c} of a matrix of {cols} columns"));
        }
        Ok(Self {
            row_ptr,
            col,
            val,
            cols,
        })
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.row_ptr.len() - 1
    }

    /// Columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Stored entries.
    pub fn nnz(&self) -> usize {
        self.col.len()
    }

    /// `y = A·x mod q` on the host (the oracle of [`spmv`]); `x` has `cols` words `< q`.
    ///
    /// Errors: [`CudaError::Shape`] for a wrong length of `x`.
    pub fn mul_vec(&self, x: &[u64], q: &rhea_math::Modulus) -> Result<Vec<u64>> {
        if x.len() != self.cols {
            return Err(CudaError::Shape(format!(
                "x has {} words; the matrix {} columns",
                x.len(),
                self.cols
            )));
        }
        Ok(self
            .row_ptr
            .windows(2)
            .map(|w| {
                (w[0] as usize..w[1] as usize).fold(0, |acc, k| {
                    q.add(acc, q.mul(self.val[k], x[self.col[k] as usize]))
                })
            })
            .collect())
    }
}

/// A [`CsrMatrix`] on the device, its three arrays in one [`LiteForm`].
#[derive(Debug)]
pub struct DeviceCsr {
    row_ptr: LiteBuffer,
    col: LiteBuffer,
    val: LiteBuffer,
    rows: usize,
    cols: usize,
}

impl DeviceCsr {
    /// Uploads `m` in `form` (encrypted on the host unless plain).
    pub fn upload(
        session: &LiteSession,
        dev: &Arc<GpuDevice>,
        m: &CsrMatrix,
        form: LiteForm,
    ) -> Result<DeviceCsr> {
        Ok(DeviceCsr {
            row_ptr: session.upload(dev, &m.row_ptr, form)?,
            col: session.upload(dev, &m.col, form)?,
            val: session.upload(dev, &m.val, form)?,
            rows: m.rows(),
            cols: m.cols,
        })
    }

    /// The arrays' form.
    pub fn form(&self) -> LiteForm {
        self.row_ptr.form
    }
}

/// Launch arguments of the SpMV kernels (`struct LiteSpmvArgs`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct SpmvArgs {
    y: u64,
    row_ptr: u64,
    col: u64,
    val: u64,
    x: u64,
    modulus: u64,
    rows: u64,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for SpmvArgs {}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<SpmvArgs>() == 56);
    assert!(offset_of!(SpmvArgs, rows) == 48);
};

/// The kernel [`spmv`] launches for these forms and shuffle options.
///
/// Errors: [`CudaError::InvalidArgument`] for a variant that is not instantiated.
pub fn spmv_kernel(inputs: LiteForm, output: LiteForm, shuffle: Shuffle) -> Result<&'static str> {
    let (i, o) = (inputs.encrypted(), output.encrypted());
    if !i && !o {
        return checked_name("lite_spmv_plain".into());
    }
    checked_name(format!(
        "lite_spmv_m{}_d{}_pi{}_po{}_i{}_o{}",
        bit(shuffle.masked),
        bit(shuffle.delayed),
        bit(inputs == LiteForm::Padded),
        bit(output == LiteForm::Padded),
        bit(i),
        bit(o)
    ))
}

/// `y = A·x mod q` (`q = modulus.moduli()[0]`; entries and `x` below `q`), the second irregular
/// benchmark: [`SPMV_LANES_PER_ROW`] lanes per row. Plain when every operand is plain; else
/// through LITE, the matrix and `x` in one form, `y` in its own.
///
/// Errors: [`CudaError::Shape`] for `x` or `y` of the wrong length; [`CudaError::InvalidArgument`]
/// when `x` and the matrix differ in form, or as [`spmv_kernel`].
pub fn spmv(
    session: &LiteSession,
    y: &mut LiteBuffer,
    a: &DeviceCsr,
    x: &LiteBuffer,
    modulus: &DeviceModuli,
    shuffle: Shuffle,
) -> Result<()> {
    let inputs = common_form("spmv", &[&a.row_ptr, &a.col, &a.val, x])?;
    let kernel = spmv_kernel(inputs, y.form, shuffle)?;
    check_len("x", x, a.cols)?;
    check_len("y", y, a.rows)?;
    for b in [&a.row_ptr, &a.col, &a.val, x] {
        b.raw.check_same_device(&y.raw)?;
    }
    if a.rows == 0 {
        return Ok(());
    }
    let dev = y.raw.device().clone();
    let args = SpmvArgs {
        y: y.ptr(),
        row_ptr: a.row_ptr.ptr(),
        col: a.col.ptr(),
        val: a.val.ptr(),
        x: x.ptr(),
        modulus: modulus.device_ptr(),
        rows: a.rows as u64,
    };
    let cfg = grid_stride(&dev, a.rows * SPMV_LANES_PER_ROW);
    if inputs.encrypted() || y.form.encrypted() {
        launch_keyed(&dev, session, kernel, cfg, &args)
    } else {
        launch_plain(&dev, kernel, cfg, &args)
    }
}

#[cfg(test)]
mod tests {
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
                    u64::from_str_radix(t.trim_start_matches("0x").trim_end_matches('u'), 16)
                        .unwrap()
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
}
