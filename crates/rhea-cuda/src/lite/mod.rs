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
//! - [`fhe`]: the protected mode's kernels (`kernels/lite_fhe.cu`): decryption, key rows and
//!   plaintext operands of an RLWE scheme on protected buffers (used by `rhea`'s protected key
//!   generator, encryptor and decryptor), and [`fhe::decrypt_protected`] (the components
//!   protected too).
//! - [`ops`]: the all-data mode's primitives (`kernels/lite_ops.cu`): element-wise ops, the NTT,
//!   the centred base conversion and the automorphism on buffers plain or protected in any mix,
//!   word for word the host math.
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
    source: include_str!("../../kernels/lite_aes_xts.cuh"),
};

/// `kernels/lite.cu`: LITE's test and benchmark kernels.
pub const LITE: KernelSource = KernelSource {
    name: "lite",
    source: include_str!("../../kernels/lite.cu"),
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

mod aes;
mod bench;
pub mod fhe;
mod kernels;
pub mod ops;
#[cfg(test)]
mod tests;

pub use aes::*;
pub use bench::*;
pub use kernels::*;

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
