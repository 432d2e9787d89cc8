//! On-device sampling from a seeded, counter-based ChaCha20 (`kernels/sample.cu`).
//!
//! The keystream is exactly [`rhea_math::sampler`]'s (key = the 32-byte seed, 64-bit stream id,
//! 64-bit block counter; see [`rhea_math::sampler::chacha20_block`]). Every GPU thread computes
//! the ChaCha20 block(s) it needs from `(seed, stream, counter)` alone, so the uniform half of a
//! ciphertext or key is regenerated on the device from its seed, bit for bit:
//!
//! | wrapper | twin |
//! |---|---|
//! | [`uniform_from_seed`] (polynomial `p` on stream `stream + p`) | [`rhea_math::sampler::uniform_poly_from_seed`]`(seed, stream + p, moduli, n)` |
//! | [`ternary_from_seed`] (polynomial `p` on stream `stream + p`) | [`host::ternary_from_seed`] lifted by [`rhea_math::sampler::lift_signed`]; for stream 0 that is [`rhea_math::sampler::ternary`] on a fresh `Prng::from_seed(seed)` |
//!
//! Ternary: coefficient `i` takes the `i`-th 64-bit draw `r` of the stream (block `i/8`, words
//! `2(i%8)`, `2(i%8)+1`, low word first) and is `⌊3r / 2^64⌋ − 1 ∈ {−1, 0, 1}`, written to every
//! limb as a canonical residue (`−1 ↦ q − 1`).

use std::sync::Arc;

use cudarc::driver::{DeviceRepr, LaunchConfig, PushKernelArg};

use crate::buffer::DeviceBuffer;
use crate::device::GpuDevice;
use crate::elementwise::{DeviceModuli, RnsLayout};
use crate::error::{CudaError, Result};
use crate::registry::{KernelSource, COMMON_CUH};

/// `kernels/sample.cu`: ChaCha20 uniform and ternary sampling.
pub const SAMPLE: KernelSource = KernelSource {
    name: "sample",
    source: include_str!("../kernels/sample.cu"),
    headers: &[COMMON_CUH],
};

/// Threads per block.
const THREADS: u32 = 128;

/// Launch arguments (`struct SampleArgs` in `sample.cu`).
#[repr(C)]
#[derive(Clone, Copy)]
struct SampleArgs {
    key: [u32; 8],
    stream: u64,
    n: u64,
    out: u64,
    moduli: u64,
    limbs: u32,
    polys: u32,
    mod_offset: u32,
    pad: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for SampleArgs {}

/// The seed as the eight little-endian key words of the ChaCha20 state (`w4..w11`).
fn key_words(seed: &[u8; 32]) -> [u32; 8] {
    let mut key = [0u32; 8];
    for (w, c) in key.iter_mut().zip(seed.chunks_exact(4)) {
        *w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    key
}

fn check(
    out: &DeviceBuffer,
    stream: u64,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<Arc<GpuDevice>> {
    out.check_same_device(moduli.buffer())?;
    if layout.degree == 0 || layout.limbs == 0 || layout.polys == 0 {
        return Err(CudaError::Shape(format!("empty layout {layout:?}")));
    }
    if out.len() != layout.words() {
        return Err(CudaError::Shape(format!(
            "the output has {} words; the layout {layout:?} needs {}",
            out.len(),
            layout.words()
        )));
    }
    if layout.first_modulus + layout.limbs > moduli.len() {
        return Err(CudaError::Shape(format!(
            "limbs {}..{} need moduli the table of {} does not have",
            layout.first_modulus,
            layout.first_modulus + layout.limbs,
            moduli.len()
        )));
    }
    if layout.polys > 65535 {
        return Err(CudaError::Shape(format!(
            "{} polynomials exceed one launch (65535)",
            layout.polys
        )));
    }
    if stream.checked_add(layout.polys as u64 - 1).is_none() {
        return Err(CudaError::InvalidArgument(format!(
            "streams {stream} + 0..{} overflow 64 bits",
            layout.polys
        )));
    }
    Ok(out.device().clone())
}

fn launch(
    kernel: &str,
    out: &mut DeviceBuffer,
    seed: &[u8; 32],
    stream: u64,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
    blocks_per_poly: usize,
) -> Result<()> {
    let dev = check(out, stream, layout, moduli)?;
    let grid_x = blocks_per_poly.div_ceil(THREADS as usize);
    if grid_x > i32::MAX as usize {
        return Err(CudaError::Shape(format!(
            "{layout:?} is too large for one launch"
        )));
    }
    let mut args = SampleArgs {
        key: key_words(seed),
        stream,
        n: layout.degree as u64,
        out: out.device_ptr(),
        moduli: moduli.device_ptr(),
        limbs: layout.limbs as u32,
        polys: layout.polys as u32,
        mod_offset: layout.first_modulus as u32,
        pad: 0,
    };
    let cfg = LaunchConfig {
        grid_dim: (grid_x as u32, layout.polys as u32, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let f = dev.function(&SAMPLE, kernel)?;
    let result = {
        let mut b = dev.stream().launch_builder(&f);
        b.arg(&args);
        // SAFETY: `args` matches `struct SampleArgs`; `out` holds `polys · limbs · N` words and
        // the moduli table covers the limbs (checked above); cuLaunchKernel copies the argument
        // block before it returns; all work is ordered on the device's one stream.
        unsafe { b.launch(cfg) }
    };
    // Best-effort wipe of the key copy on the host stack (the driver has copied it).
    // SAFETY: `args.key` is a valid, aligned, exclusively borrowed array.
    unsafe { std::ptr::write_volatile(&mut args.key, [0u32; 8]) };
    result?;
    Ok(())
}

/// Fills `out` (`[polys][limbs][N]` of `layout`) with uniform residues regenerated from `seed`:
/// polynomial `p` equals [`rhea_math::sampler::uniform_poly_from_seed`]`(seed, stream + p,
/// &moduli[first_modulus..first_modulus + limbs], N)`, word for word.
///
/// Errors: [`CudaError::Shape`] for a buffer that does not match `layout`, or a moduli table
/// that is too short; [`CudaError::InvalidArgument`] if `stream + polys − 1` overflows.
pub fn uniform_from_seed(
    out: &mut DeviceBuffer,
    seed: &[u8; 32],
    stream: u64,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    let blocks = (layout.limbs * layout.degree).div_ceil(4);
    launch("sample_uniform", out, seed, stream, layout, moduli, blocks)
}

/// Fills `out` (`[polys][limbs][N]` of `layout`) with a ternary polynomial per `p` drawn from
/// `(seed, stream + p)` ([`host::ternary_from_seed`]), lifted to every limb as canonical
/// residues (`−1 ↦ q − 1`).
///
/// Errors as [`uniform_from_seed`].
pub fn ternary_from_seed(
    out: &mut DeviceBuffer,
    seed: &[u8; 32],
    stream: u64,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    let blocks = layout.degree.div_ceil(8);
    launch("sample_ternary", out, seed, stream, layout, moduli, blocks)
}

/// Host references of the counter-based samplers.
pub mod host {
    use rhea_math::sampler::chacha20_block;

    /// `n` ternary coefficients from `(seed, stream)`: coefficient `i` is `⌊3r / 2^64⌋ − 1` with
    /// `r` the `i`-th 64-bit word of the keystream (block `i/8`, words `2(i%8)`, `2(i%8)+1`, low
    /// word first). For stream 0 this equals `rhea_math::sampler::ternary` on a fresh
    /// `Prng::from_seed(seed)`.
    pub fn ternary_from_seed(seed: &[u8; 32], stream: u64, n: usize) -> Vec<i64> {
        let mut out = Vec::with_capacity(n);
        let mut block = 0u64;
        while out.len() < n {
            let w = chacha20_block(seed, stream, block);
            for s in 0..8 {
                if out.len() == n {
                    break;
                }
                let r = w[2 * s] as u64 | (w[2 * s + 1] as u64) << 32;
                out.push(((r as u128 * 3) >> 64) as i64 - 1);
            }
            block += 1;
        }
        out
    }
}
