//! Base conversion, ModUp, ModDown and rescale kernels (`kernels/bconv.cu`) on
//! `[poly][limb][N]` coefficient-domain device buffers.
//!
//! Every wrapper has a twin in [`rhea_math::bconv`] and writes exactly its canonical output, word
//! for word:
//!
//! | wrapper | twin |
//! |---|---|
//! | [`DeviceBaseConverter::convert_centered`] | [`BaseConverter::convert_centered`] |
//! | [`DeviceModUp::apply_centered`] | [`ModUp::apply_centered`] |
//! | [`DeviceRescaler::apply`] | [`Rescaler::apply`] |
//!
//! Only the centred conversions are instantiated (the `_centered` kernels; production never ran
//! the approximate ones, [`BaseConverter::convert_approx`]). They also sum `t_i · (1/q_i)` in `f64`, in index order
//! with `__dmul_rn`/`__dadd_rn` (never contracted into an FMA), exactly as the host does, and
//! subtract `v · [Q]_{p_j}` with `v` that sum rounded half down: the same `v` as the host for
//! every input, hence the same words.
//!
//! # The conversion kernel
//!
//! `y_j = (Σ_i t_i · [q̂_i]_{p_j}) mod p_j` with `t_i = [x_i · q̂_i^{-1}]_{q_i}` is a matrix
//! product of the `L × K` table by the `L × N` limbs. A block of 128 threads takes `128·C`
//! coefficients of one polynomial and `J` output columns ([`BconvTile`]); it stages the `L × J`
//! table slice, the input-limb constants and the `J` output moduli in shared memory; each thread
//! keeps `J × C` 128-bit accumulators in registers, folds them (Barrett) every 63 input limbs and
//! reduces each once at the end. When every modulus of both bases is below `2^32` the products
//! are 32 × 32 → 64-bit multiplies ([`DeviceBaseConverter::is_narrow`]). The first step
//! (`x_i · q̂_i^{-1}`, Shoup) is fused into the load of the input, or done beforehand by an
//! inverse NTT that multiplies by [`DeviceBaseConverter::q_hat_inv_mod_q`] in its last stage
//! and skipped (`scaled = true` of [`DeviceBaseConverter::convert_centered_with`]).
//!
//! Which table columns a launch computes and which output limb each lands in is a *plan*, carried
//! in the launch's parameter block (at most [`MAX_PLAN`] columns per launch; longer plans take
//! several launches). ModUp's plan skips the digit's own limbs, which the same launch copies
//! (reduced). (The kernels' ModDown epilogue, `FLAG_MODDOWN`, is not launched since the fused
//! ModDown tails of `fused.rs`/`ntt.rs` replaced `DeviceModDown`.)
//!
//! Shapes: the ring degree `N` must be even (power-of-two degrees are); the number of
//! polynomials is inferred from the buffer lengths (batch along the first axis, at most 65535).
//! Inputs may be any `u64` (read modulo their limb's modulus, like the host), outputs are
//! canonical.
//!
//! Every kernel is launched with programmatic dependent launch (`launch.rs`): it starts
//! while the previous kernel drains, reads (and stages) its host-uploaded tables, then waits for
//! that kernel before it reads the input.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{DeviceRepr, LaunchConfig};
use rhea_math::bconv::{BaseConverter, ModUp, Rescaler};
use rhea_math::Modulus;

use crate::buffer::DeviceBuffer;
use crate::device::GpuDevice;
use crate::elementwise::DeviceModuli;
use crate::error::{CudaError, Result};
use crate::launch::{launch_dependent, param};
use crate::registry::{KernelSource, COMMON_CUH};

mod args;
mod converter;
mod modup;
mod policy;
mod rescale;
use args::{BconvMulti, RescaleArgs, MAX_MULTI};
pub use policy::BconvTile;
use policy::{RIN_DEFAULT, RIN_MAX_INPUTS};

#[cfg(test)]
mod tests;

/// `kernels/bconv.cu`: base conversion, ModUp, ModDown, rescale.
pub const BCONV: KernelSource = KernelSource {
    name: "bconv",
    source: include_str!("../../kernels/bconv.cu"),
    headers: &[COMMON_CUH, crate::fp64::FP64_CUH],
};

/// The most output columns one conversion launch computes (`BCONV_MAX_PLAN` in `bconv.cu`).
pub const MAX_PLAN: usize = 64;

/// The largest source basis the conversion kernel accepts (its table slice lives in shared
/// memory: `(J + 3)·L + 4·J` words per block; the register-input tiles, at most 16 inputs, hold
/// each entry twice).
pub const MAX_FROM_LIMBS: usize = 256;

/// Threads per block of the conversion kernel (`__launch_bounds__(128)`).
const THREADS: u32 = 128;

/// Threads per block of the rescale kernel.
const SIMPLE_THREADS: u32 = 256;

const FLAG_SCALED: u32 = 1;
const FLAG_COPY: u32 = 4;

/// The number of polynomials of a `[polys][limbs][n]` buffer of `len` words.
fn polys_of(what: &str, len: usize, limbs: usize, n: usize) -> Result<usize> {
    let per = limbs * n;
    if per == 0 || len == 0 || len % per != 0 {
        return Err(CudaError::Shape(format!(
            "{what} has {len} words, not a positive multiple of {limbs} limbs × N = {n}"
        )));
    }
    let polys = len / per;
    if polys > 65535 {
        return Err(CudaError::Shape(format!(
            "{what} holds {polys} polynomials; one launch takes at most 65535"
        )));
    }
    Ok(polys)
}

fn check_degree(n: usize) -> Result<()> {
    if n == 0 || n % 2 != 0 {
        return Err(CudaError::InvalidArgument(format!(
            "the ring degree must be even and positive, got {n}"
        )));
    }
    Ok(())
}

fn check_len(what: &str, len: usize, want: usize) -> Result<()> {
    if len != want {
        return Err(CudaError::Shape(format!(
            "{what} has {len} words; expected {want}"
        )));
    }
    Ok(())
}

fn check_device(dev: &Arc<GpuDevice>, bufs: &[&DeviceBuffer]) -> Result<()> {
    for b in bufs {
        if b.device().index() != dev.index() {
            return Err(CudaError::DeviceMismatch(dev.index(), b.device().index()));
        }
    }
    Ok(())
}

/// Where the kernel reads and writes: raw device addresses and polynomial strides in words.
#[derive(Clone, Copy)]
struct Io {
    n: usize,
    polys: usize,
    input: u64,
    in_stride: usize,
    out: u64,
    out_stride: usize,
}

/// A [`BaseConverter`] on a device: its tables uploaded once, the conversion kernels ready.
pub struct DeviceBaseConverter {
    device: Arc<GpuDevice>,
    from: Arc<DeviceModuli>,
    to: Arc<DeviceModuli>,
    /// `[q̂_i^{-1} (L) | Shoup companions (L) | [q̂_i]_{p_j} (L × K, row-major [i][j]) |
    /// 1/q_i as f64 bits (L) | Q mod p_j (K)]`.
    tables: DeviceBuffer,
    q_hat_inv: Vec<u64>,
    q_hat_inv_shoup: Vec<u64>,
    l: usize,
    k: usize,
    narrow: bool,
}

impl std::fmt::Debug for DeviceBaseConverter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBaseConverter")
            .field("device", &self.device.index())
            .field("from_len", &self.l)
            .field("to_len", &self.k)
            .field("narrow", &self.narrow)
            .finish()
    }
}

/// [`ModUp`] on a device: extends one digit of a level-`ℓ` polynomial to `Q_ℓ ∪ P`.
///
/// The converters of each (digit, active length) are uploaded on first use and cached.
pub struct DeviceModUp {
    device: Arc<GpuDevice>,
    modup: ModUp,
    converters: Mutex<HashMap<(usize, usize), Arc<DeviceBaseConverter>>>,
}

impl std::fmt::Debug for DeviceModUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceModUp")
            .field("device", &self.device.index())
            .field("q_len", &self.modup.q().len())
            .field("p_len", &self.modup.p().len())
            .field("dnum", &self.modup.dnum())
            .finish()
    }
}

/// [`Rescaler`] on a device: divide by the last active prime with rounding.
pub struct DeviceRescaler {
    device: Arc<GpuDevice>,
    moduli: Arc<DeviceModuli>,
    /// Per level `ℓ = 2..=L`, at `offsets[ℓ - 2]`: `[q_l^{-1} mod q_i | Shoup | ⌊q_l/2⌋ mod q_i]`,
    /// each `ℓ - 1` words.
    tables: DeviceBuffer,
    offsets: Vec<usize>,
    len: usize,
}

impl std::fmt::Debug for DeviceRescaler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceRescaler")
            .field("device", &self.device.index())
            .field("len", &self.len)
            .finish()
    }
}
