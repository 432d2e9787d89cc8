//! The fused key-switching inner product (`kernels/keyswitch.cu`): `Σ_d digit_d ⊙ key_{d,c}`
//! for both key components `c ∈ {0, 1}` in one pass, NTT domain (HE-Booster's FMAC, Phantom's
//! `key_switch_inner_prod_c2_and_evk`).
//!
//! # Layout
//!
//! With `L = |Q|`, `K = |P|`, a level `ℓ` (active Q limbs) and `w = ℓ + K`:
//!
//! - `digits`: `[count][w][N]`, the ModUp'd digits over `Q_ℓ ∪ P` (Q limbs `0..ℓ`, then the `K`
//!   P limbs), e.g. written by [`crate::bconv::DeviceModUp::apply_centered_at`] (coefficient
//!   domain) and then NTT'd;
//! - `key`: `[parts][2][L + K][N]`, the evaluation key at full level (part `d` = `(b_d, a_d)`,
//!   `parts ≥ count`): only its first `ℓ` Q limbs and all `K` P limbs are read;
//! - `out`: `[2][w][N]`, `out[c][i] = Σ_d digits[d][i] · key[d][c][kl(i)] mod p_i` with
//!   `kl(i) = i` for `i < ℓ` and `L + (i − ℓ)` for the P limbs.
//!
//! This is the layout of `rhea`'s CPU `inner_product` (`crates/rhea/src/backend/cpu.rs`: digits
//! over the level-`ℓ` shape, key components over the full shape, limb `i` read at the key's
//! limb `prime_index(i)`), with the digits and the key parts stacked into one buffer each and
//! the two outputs into one `[2][w][N]` buffer. Every input word must be canonical (below its
//! limb's prime), as the NTT outputs are.
//!
//! # Exactness
//!
//! Each output word is the exact sum of `count` products `< 2^122`, accumulated in 128 bits
//! (folded by Barrett every 63 digits) and reduced once: the canonical residue, equal word for
//! word to the CPU's per-term `u128` accumulation (or any per-term `mul_add` chain).
//!
//! The kernel is launched with programmatic dependent launch (`launch.rs`): it starts while
//! the previous kernel drains and waits for it before reading the digits and the key.

use std::sync::Arc;

use cudarc::driver::{DeviceRepr, LaunchConfig};
use rhea_math::Modulus;

use crate::buffer::DeviceBuffer;
use crate::device::GpuDevice;
use crate::elementwise::DeviceModuli;
use crate::error::{CudaError, Result};
use crate::launch::{launch_dependent, param};
use crate::registry::{KernelSource, COMMON_CUH};

/// `kernels/keyswitch.cu`: the fused key-switching inner product.
pub const KEYSWITCH: KernelSource = KernelSource {
    name: "keyswitch",
    source: include_str!("../kernels/keyswitch.cu"),
    headers: &[COMMON_CUH],
};

/// Threads per block (`__launch_bounds__(256)`).
const THREADS: u32 = 256;

/// Launch arguments (`struct KsArgs` in `keyswitch.cu`).
#[repr(C)]
#[derive(Clone, Copy)]
struct KsArgs {
    n: u64,
    digits: u64,
    key: u64,
    out: u64,
    moduli: u64,
    count: u32,
    width: u32,
    level: u32,
    q_full: u32,
    full: u32,
    pad: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for KsArgs {}

/// The key-switching inner product for one `Q ∪ P` chain on a device.
pub struct DeviceKeySwitch {
    device: Arc<GpuDevice>,
    moduli: Arc<DeviceModuli>,
    q_len: usize,
    p_len: usize,
}

impl std::fmt::Debug for DeviceKeySwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceKeySwitch")
            .field("device", &self.device.index())
            .field("q_len", &self.q_len)
            .field("p_len", &self.p_len)
            .finish()
    }
}

impl DeviceKeySwitch {
    /// The inner product over the full chain `q` (`L` primes, in order) and `p` (`K` primes).
    ///
    /// Errors: [`CudaError::InvalidArgument`] for an empty `q` or `p`; driver errors.
    pub fn new(device: &Arc<GpuDevice>, q: &[Modulus], p: &[Modulus]) -> Result<Self> {
        if q.is_empty() || p.is_empty() {
            return Err(CudaError::InvalidArgument(
                "key switching needs at least one Q and one P prime".into(),
            ));
        }
        let all: Vec<Modulus> = q.iter().chain(p).copied().collect();
        Ok(Self {
            device: device.clone(),
            moduli: DeviceModuli::new(device, &all)?,
            q_len: q.len(),
            p_len: p.len(),
        })
    }

    /// The device.
    pub fn device(&self) -> &Arc<GpuDevice> {
        &self.device
    }

    /// `L = |Q|`.
    pub fn q_len(&self) -> usize {
        self.q_len
    }

    /// `K = |P|`.
    pub fn p_len(&self) -> usize {
        self.p_len
    }

    /// `out[c] = Σ_d digits[d] ⊙ key[d][c]` for `c = 0, 1` at `level` (see the module docs for
    /// the layouts): `digits` is `[count][level + K][n]` (`count ≥ 1` inferred from its
    /// length), `key` is `[parts][2][L + K][n]` with `parts ≥ count` (only the first `count`
    /// parts are read), `out` is `[2][level + K][n]`. One launch.
    ///
    /// Errors: [`CudaError::InvalidArgument`] for a level outside `1..=L` or an odd or zero
    /// `n`; [`CudaError::Shape`] for buffers of the wrong length (or a key with fewer parts
    /// than digits); [`CudaError::DeviceMismatch`] for buffers of another device.
    pub fn inner_product(
        &self,
        level: usize,
        digits: &DeviceBuffer,
        key: &DeviceBuffer,
        out: &mut DeviceBuffer,
        n: usize,
    ) -> Result<()> {
        if n == 0 || n % 2 != 0 {
            return Err(CudaError::InvalidArgument(format!(
                "the ring degree must be even and positive, got {n}"
            )));
        }
        if level == 0 || level > self.q_len {
            return Err(CudaError::InvalidArgument(format!(
                "level {level} outside 1..={}",
                self.q_len
            )));
        }
        for b in [digits, key, &*out] {
            if b.device().index() != self.device.index() {
                return Err(CudaError::DeviceMismatch(
                    self.device.index(),
                    b.device().index(),
                ));
            }
        }
        let width = level + self.p_len;
        let full = self.q_len + self.p_len;
        let per_digit = width * n;
        if digits.is_empty() || digits.len() % per_digit != 0 {
            return Err(CudaError::Shape(format!(
                "key-switching digits have {} words, not a positive multiple of \
                 {width} limbs × N = {n}",
                digits.len()
            )));
        }
        let count = digits.len() / per_digit;
        let per_part = 2 * full * n;
        if key.len() % per_part != 0 || key.len() / per_part < count {
            return Err(CudaError::Shape(format!(
                "the key has {} words; expected a multiple of 2 × {full} limbs × N = {n} with \
                 at least {count} parts",
                key.len()
            )));
        }
        if out.len() != 2 * per_digit {
            return Err(CudaError::Shape(format!(
                "the key-switching output has {} words; expected 2 × {width} × {n}",
                out.len()
            )));
        }
        if width > 65535 {
            return Err(CudaError::Shape(format!(
                "{width} limbs exceed one launch (65535 rows)"
            )));
        }
        let args = KsArgs {
            n: n as u64,
            digits: digits.device_ptr(),
            key: key.device_ptr(),
            out: out.device_ptr(),
            moduli: self.moduli.device_ptr(),
            count: count as u32,
            width: width as u32,
            level: level as u32,
            q_full: self.q_len as u32,
            full: full as u32,
            pad: 0,
        };
        let cfg = LaunchConfig {
            grid_dim: ((n / 2).div_ceil(THREADS as usize) as u32, width as u32, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let f = self
            .device
            .function(&KEYSWITCH, "keyswitch_inner_product")?;
        let mut params = [param(&args)];
        // SAFETY: the one parameter is `struct KsArgs` by value (#[repr(C)] like its CUDA twin),
        // pointing to a local that lives across the call; the digit, key and output lengths were
        // checked against `count`, `width` and `full` above, and the moduli table holds `L + K`
        // records; all work is ordered on the device's one stream, and before pdl_wait() the
        // kernel reads only the moduli table (a host upload).
        unsafe { launch_dependent(&self.device, &f, cfg, &mut params) }
    }
}
