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
//! | [`ternary_from_seed`] (polynomial `p` on stream `stream + p`) | [`rhea_math::sampler::ternary_from_seed`]`(seed, stream + p, n)` lifted by [`rhea_math::sampler::lift_signed`]; for stream 0 that is [`rhea_math::sampler::ternary`] on a fresh `Prng::from_seed(seed)` |
//! | [`gaussian_from_seed`] (polynomial `p` on stream `stream + p`) | [`rhea_math::sampler::gaussian_from_seed`]`(seed, stream + p, n, sigma, bound)` lifted by [`rhea_math::sampler::lift_signed`] |
//!
//! Ternary and Gaussian: coefficient `i` takes the `i`-th 64-bit draw `r` of the stream (block
//! `i/8`, words `2(i%8)`, `2(i%8)+1`, low word first) and is `⌊3r / 2^64⌋ − 1 ∈ {−1, 0, 1}`,
//! respectively the constant-time CDT sample `#{t : r ≥ T_t} − ⌊bound⌋` of
//! [`rhea_math::sampler::gaussian_cdt`]; either is written to every limb as a canonical residue
//! (`x < 0 ↦ q + x`). The Gaussian kernel receives the CDT in its launch arguments, so it takes
//! tables of at most [`MAX_GAUSSIAN_TABLE`] entries (`bound < 129`: `σ < 21.5` at the usual
//! `6σ` cut).

use std::sync::Arc;

use cudarc::driver::{DeviceRepr, LaunchConfig};

use crate::buffer::DeviceBuffer;
use crate::device::GpuDevice;
use crate::elementwise::{DeviceModuli, RnsLayout};
use crate::error::{CudaError, Result};
use crate::launch::{launch_dependent, param};
use crate::registry::{KernelSource, COMMON_CUH};

/// `kernels/sample.cu`: ChaCha20 uniform, ternary and discrete Gaussian sampling.
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
    limbs_per_block: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for SampleArgs {}

// The layout of `struct SampleArgs` in `kernels/sample.cu`, which asserts the same numbers
// (`static_assert`): a field added, moved or resized on one side only fails the build.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<SampleArgs>() == 80);
    assert!(align_of::<SampleArgs>() == 8);
    assert!(offset_of!(SampleArgs, key) == 0);
    assert!(offset_of!(SampleArgs, stream) == 32);
    assert!(offset_of!(SampleArgs, n) == 40);
    assert!(offset_of!(SampleArgs, out) == 48);
    assert!(offset_of!(SampleArgs, moduli) == 56);
    assert!(offset_of!(SampleArgs, limbs) == 64);
    assert!(offset_of!(SampleArgs, polys) == 68);
    assert!(offset_of!(SampleArgs, mod_offset) == 72);
    assert!(offset_of!(SampleArgs, limbs_per_block) == 76);
};

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

/// The grid's x dimension for `threads_total` threads per polynomial in blocks of `block`.
fn grid_x(layout: &RnsLayout, threads_total: usize, block: u32) -> Result<u32> {
    let grid_x = threads_total.div_ceil(block as usize);
    if grid_x > i32::MAX as usize {
        return Err(CudaError::Shape(format!(
            "{layout:?} is too large for one launch"
        )));
    }
    Ok(grid_x as u32)
}

/// The common launch arguments (the caller wipes `key` after the launch).
fn sample_args(
    out: &mut DeviceBuffer,
    seed: &[u8; 32],
    stream: u64,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> SampleArgs {
    SampleArgs {
        key: key_words(seed),
        stream,
        n: layout.degree as u64,
        out: out.device_ptr(),
        moduli: moduli.device_ptr(),
        limbs: layout.limbs as u32,
        polys: layout.polys as u32,
        mod_offset: layout.first_modulus as u32,
        limbs_per_block: 0,
    }
}

/// Launches `kernel` of [`SAMPLE`] with the one argument block `args`, then wipes (best effort)
/// the copy of the key in it, `key(args)`, on the host stack.
///
/// # Safety
///
/// `args` must be the kernel's argument struct, built from [`sample_args`] for a buffer and
/// moduli table that [`check`] accepted, and the kernel must guard every thread of `cfg` past
/// the layout.
unsafe fn run<A: DeviceRepr>(
    dev: &GpuDevice,
    kernel: &str,
    args: &mut A,
    key: fn(&mut A) -> &mut [u32; 8],
    cfg: LaunchConfig,
) -> Result<()> {
    let result = dev.function(&SAMPLE, kernel).and_then(|f| {
        let mut params = [param(&*args)];
        // SAFETY (the caller's contract): `args` matches the kernel's one argument struct and
        // lives across the call; the output holds `polys · limbs · N` words and the moduli
        // table covers the limbs; the driver copies the argument block before it returns; all
        // work is ordered on the device's one stream, and the kernels read nothing but the
        // moduli table (a host upload) and store only after pdl_wait().
        unsafe { launch_dependent(dev, &f, cfg, &mut params) }
    });
    // SAFETY: `key(args)` is a valid, aligned, exclusively borrowed array.
    unsafe { std::ptr::write_volatile(key(args), [0u32; 8]) };
    result
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
    let cfg = LaunchConfig {
        grid_dim: (
            grid_x(layout, blocks_per_poly, THREADS)?,
            layout.polys as u32,
            1,
        ),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut args = sample_args(out, seed, stream, layout, moduli);
    // SAFETY: `args` is `struct SampleArgs`, for the buffer and table `check` accepted; the
    // kernels return early for every thread past `blocks_per_poly`.
    unsafe { run(&dev, kernel, &mut args, |a| &mut a.key, cfg) }
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
/// `(seed, stream + p)` ([`rhea_math::sampler::ternary_from_seed`]), lifted to every limb as canonical
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
    let dev = check(out, stream, layout, moduli)?;
    let (cfg, limbs_per_block) = sliced_config(layout)?;
    let mut args = sample_args(out, seed, stream, layout, moduli);
    args.limbs_per_block = limbs_per_block;
    // SAFETY: `args` is `struct SampleArgs`, for the buffer and table `check` accepted; the
    // kernel guards every coefficient past N and every limb past `limbs`, and keeps all threads
    // for its `__syncthreads`.
    unsafe { run(&dev, "sample_ternary", &mut args, |a| &mut a.key, cfg) }
}

/// Threads per block of `sample_ternary` and `sample_gaussian` (`SAMPLE_THREADS` in
/// `sample.cu`): one ChaCha block (8 coefficients) each.
const SAMPLE_THREADS: u32 = 128;

/// About how many blocks a ternary or Gaussian launch aims for (a few per SM), by slicing the
/// limbs along the grid's z dimension.
const SLICED_TARGET_BLOCKS: usize = 512;

/// The most limbs one block of a sliced launch writes.
const MAX_LIMBS_PER_BLOCK: usize = 8;

/// The grid of `sample_ternary` / `sample_gaussian` for `layout` and the limbs each block
/// writes: `(⌈N/8/SAMPLE_THREADS⌉, polys, slices)`, with slices of at most
/// [`MAX_LIMBS_PER_BLOCK`] limbs, as thin as it takes to reach about
/// [`SLICED_TARGET_BLOCKS`] blocks (each slice recomputes its samples: a few hundred
/// instructions per thread against the stores it spreads).
fn sliced_config(layout: &RnsLayout) -> Result<(LaunchConfig, u32)> {
    let gx = grid_x(layout, layout.degree.div_ceil(8), SAMPLE_THREADS)?;
    let xy = gx as usize * layout.polys;
    let slices_wanted = SLICED_TARGET_BLOCKS.div_ceil(xy).max(1);
    let per_block = layout
        .limbs
        .div_ceil(slices_wanted)
        .clamp(1, MAX_LIMBS_PER_BLOCK);
    let slices = layout.limbs.div_ceil(per_block);
    if slices > 65535 {
        return Err(CudaError::Shape(format!(
            "{} limbs exceed one launch",
            layout.limbs
        )));
    }
    let cfg = LaunchConfig {
        grid_dim: (gx, layout.polys as u32, slices as u32),
        block_dim: (SAMPLE_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    Ok((cfg, per_block as u32))
}

/// The most CDT entries the Gaussian kernel takes (`2·⌊bound⌋ ≤ 256`, i.e. `bound < 129`):
/// the table travels in the launch arguments (2 KiB of the 4 KiB parameter space).
pub const MAX_GAUSSIAN_TABLE: usize = 256;

/// Launch arguments of `sample_gaussian` (`struct GaussianArgs` in `sample.cu`).
#[repr(C)]
#[derive(Clone, Copy)]
struct GaussianArgs {
    base: SampleArgs,
    entries: u32,
    bound: u32,
    table: [u64; MAX_GAUSSIAN_TABLE],
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct (`SampleArgs` is 80 bytes,
// so `table` starts at byte 88 on both sides, 8-aligned).
unsafe impl DeviceRepr for GaussianArgs {}

// The layout of `struct GaussianArgs` in `kernels/sample.cu`, which asserts the same numbers
// (`static_assert`): a field added, moved or resized on one side only fails the build.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<GaussianArgs>() == 2136);
    assert!(align_of::<GaussianArgs>() == 8);
    assert!(offset_of!(GaussianArgs, base) == 0);
    assert!(offset_of!(GaussianArgs, entries) == 80);
    assert!(offset_of!(GaussianArgs, bound) == 84);
    assert!(offset_of!(GaussianArgs, table) == 88);
};

/// Whether the Gaussian kernel takes the table of `bound` (`2·⌊bound⌋ ≤`
/// [`MAX_GAUSSIAN_TABLE`]); a bound it refuses has to be sampled on the host
/// ([`rhea_math::sampler::gaussian_from_seed`], the same words).
pub fn gaussian_fits(bound: f64) -> bool {
    bound.is_finite() && bound >= 0.0 && 2.0 * bound.floor() <= MAX_GAUSSIAN_TABLE as f64
}

/// Fills `out` (`[polys][limbs][N]` of `layout`) with a discrete Gaussian polynomial per `p`
/// drawn from `(seed, stream + p)`: polynomial `p` equals
/// [`rhea_math::sampler::gaussian_from_seed`]`(seed, stream + p, N, sigma, bound)` lifted by
/// [`rhea_math::sampler::lift_signed`] to the moduli of `layout`'s limbs, word for word. The CDT
/// is computed on the host once per `(sigma, bound)` ([`rhea_math::sampler::gaussian_cdt_shared`]) and passed in the launch
/// arguments; the kernel is constant-time in the samples (whole-table scans, branch-free lift).
///
/// Errors: [`CudaError::Math`] for a `sigma` or `bound` that `gaussian_cdt` refuses;
/// [`CudaError::InvalidArgument`] for a table of more than [`MAX_GAUSSIAN_TABLE`] entries (see
/// [`gaussian_fits`]); otherwise as [`uniform_from_seed`].
pub fn gaussian_from_seed(
    out: &mut DeviceBuffer,
    seed: &[u8; 32],
    stream: u64,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
    sigma: f64,
    bound: f64,
) -> Result<()> {
    let dev = check(out, stream, layout, moduli)?;
    let cdt = rhea_math::sampler::gaussian_cdt_shared(sigma, bound)?;
    if cdt.len() > MAX_GAUSSIAN_TABLE {
        return Err(CudaError::InvalidArgument(format!(
            "a Gaussian tail cut of {bound} needs a table of {} entries; the kernel takes at most \
             {MAX_GAUSSIAN_TABLE}",
            cdt.len()
        )));
    }
    let (cfg, limbs_per_block) = sliced_config(layout)?;
    let mut table = [0u64; MAX_GAUSSIAN_TABLE];
    table[..cdt.len()].copy_from_slice(&cdt);
    let mut base = sample_args(out, seed, stream, layout, moduli);
    base.limbs_per_block = limbs_per_block;
    let mut args = GaussianArgs {
        base,
        entries: cdt.len() as u32,
        bound: (cdt.len() / 2) as u32,
        table,
    };
    // SAFETY: `args` is `struct GaussianArgs` around `sample_args` for the buffer and table
    // `check` accepted, with `entries ≤ GAUSSIAN_MAX_TABLE`; the kernel guards every coefficient
    // past N and every limb past `limbs`, and keeps all threads for its `__syncthreads`.
    unsafe { run(&dev, "sample_gaussian", &mut args, |a| &mut a.base.key, cfg) }
}
