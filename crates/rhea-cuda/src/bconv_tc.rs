//! The base conversion's matrix product on the tensor cores: exact INT8 `mma` over byte-split
//! operands (`kernels/bconv_tc.cu`). A prototype beside the integer-pipe kernels of
//! [`crate::bconv`]: it computes the second step of a conversion (`out_j = Σ_i t_i · [q̂_i]_{p_j}
//! mod p_j` from `t_i = [x_i · q̂_i^{-1}]_{q_i}`), bit-exact with
//! [`rhea_math::bconv::BaseConverter::convert_approx`], for one polynomial of up to
//! [`TC_MAX_INPUTS`] input limbs.
//!
//! ```no_run
//! # fn main() -> rhea_cuda::Result<()> {
//! use rhea_cuda::bconv::DeviceBaseConverter;
//! use rhea_cuda::bconv_tc::TensorConverter;
//! use rhea_math::basis::Basis;
//! use rhea_math::bconv::BaseConverter;
//! let dev = rhea_cuda::GpuDevice::new(0)?;
//! let n = 1 << 12;
//! let vals = rhea_math::prime::generate_ntt_primes(60, n, 5, &[]).unwrap();
//! let (from, to) = (Basis::new(&vals[..2]).unwrap(), Basis::new(&vals[2..]).unwrap());
//! let conv = BaseConverter::new(&from, &to).unwrap();
//! let dconv = DeviceBaseConverter::new(&dev, &conv)?;
//! let tc = TensorConverter::new(&dconv, &conv)?;
//! let x = dev.upload(&vec![7u64; 2 * n])?;
//! let mut t = dev.alloc(2 * n)?;
//! dconv.scale_by_q_hat_inv(&mut t, &x, n)?;
//! let mut out = dev.alloc(3 * n)?;
//! tc.convert_scaled(&mut out, &t, n)?;
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use cudarc::driver::{LaunchConfig, PushKernelArg};
use rhea_math::bconv::BaseConverter;

use crate::bconv::DeviceBaseConverter;
use crate::buffer::DeviceBuffer;
use crate::device::GpuDevice;
use crate::elementwise::DeviceModuli;
use crate::error::{CudaError, Result};
use crate::registry::{KernelSource, COMMON_CUH};

/// `kernels/bconv_tc.cu`.
pub const BCONV_TC: KernelSource = KernelSource {
    name: "bconv_tc",
    source: include_str!("../kernels/bconv_tc.cu"),
    headers: &[COMMON_CUH],
};

/// The most input limbs (`TC_MAX_STEPS` × 4 in the kernel).
pub const TC_MAX_INPUTS: usize = 32;

/// Coefficients per block of the kernel (4 warps × 16).
const COEFFS_PER_BLOCK: usize = 64;

/// A base conversion's matrix product on the tensor cores, with its B fragments on the device.
pub struct TensorConverter {
    device: Arc<GpuDevice>,
    to: Arc<DeviceModuli>,
    frag: DeviceBuffer,
    l: usize,
    k: usize,
    steps: usize,
    jtiles: usize,
}

impl std::fmt::Debug for TensorConverter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TensorConverter")
            .field("device", &self.device.index())
            .field("from_len", &self.l)
            .field("to_len", &self.k)
            .finish()
    }
}

/// The B fragments, in register order: for output tile `jt` (8 primes), byte plane `b`, mma step
/// `s` (4 input limbs) and lane (`g = lane / 4`, `h = lane % 4`), two words whose bytes `e` are
/// byte `b` of `C[i, a][j] = 2^{8a} · [q̂_i]_{p_j} mod p_j` with `j = 8 jt + g`, `i = 4s + h/2`
/// (`+ 2` for the second word), `a = 4 (h mod 2) + e`; zero outside the bases.
pub fn fragments(conv: &BaseConverter) -> Vec<u64> {
    let (l, k) = (conv.from().len(), conv.to().len());
    let steps = l.div_ceil(4);
    let jtiles = k.div_ceil(8);
    let qhat = conv.q_hat_mod_p();
    let to: Vec<u64> = conv.to().moduli().iter().map(|m| m.value()).collect();
    let c_byte = |i: usize, a: usize, j: usize, b: usize| -> u32 {
        if i >= l || j >= k {
            return 0;
        }
        let p = to[j] as u128;
        let c = ((qhat[i * k + j] as u128) << (8 * a)) % p;
        ((c >> (8 * b)) & 0xff) as u32
    };
    let mut out = Vec::with_capacity(jtiles * 8 * steps * 32);
    for jt in 0..jtiles {
        for b in 0..8 {
            for s in 0..steps {
                for lane in 0..32 {
                    let (g, h) = (lane / 4, lane % 4);
                    let j = 8 * jt + g;
                    let word = |i: usize| -> u64 {
                        (0..4).fold(0u64, |w, e| {
                            w | (c_byte(i, 4 * (h % 2) + e, j, b) as u64) << (8 * e)
                        })
                    };
                    let i0 = 4 * s + h / 2;
                    out.push(word(i0) | word(i0 + 2) << 32);
                }
            }
        }
    }
    out
}

impl TensorConverter {
    /// Builds the B fragments of `conv` (whose device twin `dconv` supplies the output moduli).
    ///
    /// Errors: [`CudaError::InvalidArgument`] for more than [`TC_MAX_INPUTS`] input limbs or a
    /// `dconv` of another shape; device errors.
    pub fn new(dconv: &DeviceBaseConverter, conv: &BaseConverter) -> Result<Self> {
        let (l, k) = (conv.from().len(), conv.to().len());
        if l > TC_MAX_INPUTS || l != dconv.from_len() || k != dconv.to_len() {
            return Err(CudaError::InvalidArgument(format!(
                "tensor-core conversion of {l} -> {k} limbs (device converter {} -> {}, at most \
                 {TC_MAX_INPUTS} inputs)",
                dconv.from_len(),
                dconv.to_len()
            )));
        }
        let device = dconv.device().clone();
        let frag = device.upload(&fragments(conv))?;
        Ok(Self {
            to: dconv.to_moduli().clone(),
            device,
            frag,
            l,
            k,
            steps: l.div_ceil(4),
            jtiles: k.div_ceil(8),
        })
    }

    /// Output tiles of 8 primes run side by side (`gridDim.y`): all of them, unless
    /// `RHEA_BCONV_TC_TILES` says how many (for tuning; read each call).
    fn grid_tiles(&self) -> u32 {
        let all = self.jtiles as u32;
        std::env::var("RHEA_BCONV_TC_TILES")
            .ok()
            .and_then(|v| v.parse::<u32>().ok())
            .map_or(all, |t| t.clamp(1, all))
    }

    /// `out = [k][n]` from `t = [l][n]` (`t_i` canonical mod `q_i`, already times `q̂_i^{-1}`):
    /// `out_j = Σ_i t_i · [q̂_i]_{p_j} mod p_j`, canonical.
    ///
    /// Errors: [`CudaError::Shape`] unless `n` is a multiple of 64 and the buffers hold `l × n`
    /// and `k × n` words; [`CudaError::DeviceMismatch`]; device errors.
    pub fn convert_scaled(&self, out: &mut DeviceBuffer, t: &DeviceBuffer, n: usize) -> Result<()> {
        for b in [&*out, t] {
            if !Arc::ptr_eq(b.device(), &self.device) {
                return Err(CudaError::DeviceMismatch(
                    b.device().index(),
                    self.device.index(),
                ));
            }
        }
        if n == 0 || n % COEFFS_PER_BLOCK != 0 || t.len() != self.l * n || out.len() != self.k * n {
            return Err(CudaError::Shape(format!(
                "tensor-core conversion {} -> {} limbs of n = {n} (a multiple of \
                 {COEFFS_PER_BLOCK}): got {} input and {} output words",
                self.l,
                self.k,
                t.len(),
                out.len()
            )));
        }
        let f = self.device.function(&BCONV_TC, "bconv_tc_scaled")?;
        let cfg = LaunchConfig {
            grid_dim: ((n / COEFFS_PER_BLOCK) as u32, self.grid_tiles(), 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 0,
        };
        let (o, tp, fp, mp) = (
            out.device_ptr(),
            t.device_ptr(),
            self.frag.device_ptr(),
            self.to.device_ptr(),
        );
        let (n64, l, k, steps, jt) = (
            n as u64,
            self.l as u32,
            self.k as u32,
            self.steps as u32,
            self.jtiles as u32,
        );
        let stream = self.device.stream();
        let mut b = stream.launch_builder(&f);
        b.arg(&o).arg(&tp).arg(&fp).arg(&mp);
        b.arg(&n64).arg(&l).arg(&k).arg(&steps).arg(&jt);
        // SAFETY: the arguments match bconv_tc_scaled's signature; `t` holds l × n words and
        // `out` k × n (checked), `frag` jtiles × 8 × steps × 32 fragments and `to` the k output
        // moduli (built together), all on this device; n is a multiple of 64, so every block's
        // 64 coefficients are in range; the one stream orders the work.
        unsafe { b.launch(cfg) }?;
        Ok(())
    }
}
