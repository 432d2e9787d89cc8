//! Base conversion, ModUp, ModDown and rescale kernels (`kernels/bconv.cu`) on
//! `[poly][limb][N]` coefficient-domain device buffers.
//!
//! Every wrapper has a twin in [`rhea_math::bconv`] and writes exactly its canonical output, word
//! for word:
//!
//! | wrapper | twin |
//! |---|---|
//! | [`DeviceBaseConverter::convert`] (fused first step) | [`BaseConverter::convert_approx`] |
//! | [`DeviceBaseConverter::scale_by_q_hat_inv`] then [`DeviceBaseConverter::convert_scaled`] | the same, in two steps |
//! | [`DeviceModUp::apply`] | [`ModUp::apply`] |
//! | [`DeviceBaseConverter::convert_centered`] | [`BaseConverter::convert_centered`] |
//! | [`DeviceModUp::apply_centered`] | [`ModUp::apply_centered`] |
//! | [`DeviceRescaler::apply`] | [`Rescaler::apply`] |
//!
//! The centred variants (`_centered` kernels) also sum `t_i · (1/q_i)` in `f64`, in index order
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
//! are 32 × 32 → 64-bit multiplies ([`DeviceBaseConverter::is_narrow`]). The first step (`x_i · q̂_i^{-1}`, Shoup) is fused into the
//! load of the input, or done beforehand ([`DeviceBaseConverter::scale_by_q_hat_inv`], or by an
//! inverse NTT that multiplies by [`DeviceBaseConverter::q_hat_inv_mod_q`] in its last stage)
//! and skipped with [`DeviceBaseConverter::convert_scaled`].
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

/// `kernels/bconv.cu`: base conversion, ModUp, ModDown, rescale.
pub const BCONV: KernelSource = KernelSource {
    name: "bconv",
    source: include_str!("../kernels/bconv.cu"),
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

/// Threads per block of the scale and rescale kernels.
const SIMPLE_THREADS: u32 = 256;

const FLAG_SCALED: u32 = 1;
const FLAG_COPY: u32 = 4;

/// The register tile of the conversion kernel: `J` output columns × `C` coefficients per thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BconvTile {
    /// Chosen from the problem size (see [`BconvTile::choose`]).
    #[default]
    Auto,
    /// 4 outputs × 1 coefficient.
    J4C1,
    /// 8 outputs × 1 coefficient.
    J8C1,
    /// 8 outputs × 2 coefficients (16-byte loads), 4-limb load chunks, at most 168 registers
    /// (3 blocks per SM).
    J8C2,
    /// [`BconvTile::J8C2`] with 8-limb load chunks and no register cap (2 blocks per SM): as
    /// fast for many input limbs (chosen automatically above 16).
    J8C2U8,
    /// 7 outputs × 2 coefficients (25 outputs: four groups of 7 instead of 8 + 8 + 8 + 1).
    J7C2,
    /// 6 outputs × 2 coefficients.
    J6C2,
    /// 5 outputs × 2 coefficients (9 or 10 outputs: two groups of 5).
    J5C2,
    /// Inputs in registers, 2 coefficients per thread (16-byte loads): each thread loads its
    /// words of every input limb once and walks a group of up to 32 outputs with one
    /// accumulator (`bconv_rin_c2*`; up to 16 input limbs, `_l16` kernels above 12, plain and
    /// centred conversions; otherwise the register-tiled choice).
    RinC2,
}

impl BconvTile {
    /// Every concrete tile (for benchmarks and tests).
    pub const ALL: [BconvTile; 8] = [
        BconvTile::RinC2,
        BconvTile::J8C2U8,
        BconvTile::J4C1,
        BconvTile::J8C1,
        BconvTile::J8C2,
        BconvTile::J7C2,
        BconvTile::J6C2,
        BconvTile::J5C2,
    ];

    /// `(J, C)` of a concrete tile (`None` for [`BconvTile::Auto`]).
    pub fn shape(self) -> Option<(u32, u32)> {
        match self {
            BconvTile::Auto => None,
            BconvTile::J4C1 => Some((4, 1)),
            BconvTile::J8C1 => Some((8, 1)),
            BconvTile::J8C2 | BconvTile::J8C2U8 => Some((8, 2)),
            BconvTile::J7C2 => Some((7, 2)),
            BconvTile::J6C2 => Some((6, 2)),
            BconvTile::J5C2 => Some((5, 2)),
            BconvTile::RinC2 => Some((RIN_MAX_GROUP, 2)),
        }
    }

    /// Whether this is the register-input tile ([`BconvTile::RinC2`]).
    pub fn is_rin(self) -> bool {
        self == BconvTile::RinC2
    }

    /// Output columns per block (`blockIdx.z` groups) for `outputs` columns, when the launch
    /// has `blocks` blocks per group (coefficient blocks × polynomials or digits) on `sms`
    /// multiprocessors: `J` for the register-tiled tiles. The register-input ones split the
    /// outputs evenly into as few groups of at most [`RIN_MAX_GROUP`] as give the launch at
    /// least [`RIN_BLOCKS_PER_SM`] blocks per multiprocessor (each group recomputes the inputs'
    /// `t_i`, so fewer groups do less work, but too few blocks leave multiprocessors idle): at
    /// N = 2^16 a ModUp's three digits (768 blocks) take each digit's 23 or 25 outputs in one
    /// group, a two-polynomial ModDown 25 → 13, 12, one 9 → 23 conversion 8, 8, 7. The kernel
    /// reads the size from `BconvArgs::group`.
    fn columns_per_block(self, outputs: usize, blocks: usize, sms: u32) -> u32 {
        let (j, _) = self.shape().unwrap_or((8, 2));
        if self.is_rin() {
            let outputs = outputs.max(1);
            let fill = (RIN_BLOCKS_PER_SM * sms as usize).div_ceil(blocks.max(1));
            let groups = outputs.div_ceil(j as usize).max(fill).min(outputs);
            outputs.div_ceil(groups) as u32
        } else {
            j
        }
    }

    /// The concrete tile for `polys` polynomials of degree `n`, `outputs` output columns, on a
    /// device with `sms` multiprocessors: the widest tile ([`BconvTile::J8C2`], the most reuse
    /// of each loaded word) unless that leaves fewer than 128 threads per multiprocessor, then
    /// the first of `J8C1`, `J4C1` that does not (else `J4C1`). Measured on an H100 at N = 2^16
    /// (BENCHMARKS.md §10, `gpu_bench --suite bconv`): `J8C2` is the fastest at every
    /// key-switching shape (9 → 23: 24.8 µs, against 26.4 / 30.6 / 41.4 µs for `J8C1`, `J4C1`,
    /// `J2C1`), although it leaves only 3 warps per scheduler.
    pub fn choose(n: usize, polys: usize, outputs: usize, sms: u32) -> BconvTile {
        let target = sms.max(1) as usize * 128;
        for tile in [BconvTile::J8C2, BconvTile::J8C1, BconvTile::J4C1] {
            let (j, c) = tile.shape().unwrap_or((4, 1));
            let threads = n.div_ceil(c as usize) * polys * outputs.max(1).div_ceil(j as usize);
            if threads >= target {
                return if tile == BconvTile::J8C2 {
                    Self::fewest_empty_columns(outputs)
                } else {
                    tile
                };
            }
        }
        BconvTile::J4C1
    }

    /// The two-coefficient tile for `outputs` columns: as few groups as `J8C2` needs, split
    /// evenly, so with the fewest empty columns: 23 → `J8C2` (8 + 8 + 7), 25 → `J7C2` (4 × 7
    /// instead of 8 + 8 + 8 + 1), 17 → `J6C2`; `J8C2` when the even split is below 5 columns.
    /// Measured on an H100 (BENCHMARKS.md §10): 7 → 25 limbs, 2 polys, `J7C2` 45.7 µs against
    /// 48.5 (`J8C2`) and 46.9 (`J5C2`, no empty column but less reuse of each loaded word).
    fn fewest_empty_columns(outputs: usize) -> BconvTile {
        let groups = outputs.max(1).div_ceil(8);
        match outputs.max(1).div_ceil(groups) {
            7 => BconvTile::J7C2,
            6 => BconvTile::J6C2,
            5 => BconvTile::J5C2,
            _ => BconvTile::J8C2,
        }
    }

    /// The centred multi-conversion kernel of this tile (none for [`BconvTile::J8C2U8`]).
    fn multi_kernel(self, narrow: bool, inputs: usize) -> Option<String> {
        if self == BconvTile::J8C2U8 {
            return None;
        }
        let (j, c) = self.shape()?; // none for Auto
        let narrow = if narrow { "_narrow" } else { "" };
        Some(if self.is_rin() {
            format!(
                "bconv_multi_rin_c{c}{narrow}_centered{}",
                rin_suffix(inputs)
            )
        } else {
            format!("bconv_multi_j{j}_c{c}{narrow}_centered")
        })
    }

    fn kernel(self, narrow: bool, centered: bool, inputs: usize) -> String {
        let (j, c) = self.shape().unwrap_or((8, 2));
        let narrow = if narrow { "_narrow" } else { "" };
        let centered = if centered { "_centered" } else { "" };
        if self.is_rin() {
            return format!("bconv_rin_c{c}{narrow}{centered}{}", rin_suffix(inputs));
        }
        format!(
            "bconv_matmul_j{j}_c{c}{}{narrow}{centered}",
            if self == BconvTile::J8C2U8 { "_u8" } else { "" },
        )
    }
}

/// Launch arguments of the conversion kernel (`struct BconvArgs` in `bconv.cu`).
#[repr(C)]
#[derive(Clone, Copy)]
struct BconvArgs {
    n: u64,
    in_stride: u64,
    out_stride: u64,
    aux_stride: u64,
    input: u64,
    out: u64,
    aux: u64,
    from_mod: u64,
    to_mod: u64,
    q_hat_inv: u64,
    q_hat_inv_shoup: u64,
    q_hat_mod_p: u64,
    epi_w: u64,
    epi_ws: u64,
    q_inv_f64: u64,
    q_mod_p: u64,
    from_count: u32,
    table_stride: u32,
    count: u32,
    flags: u32,
    copy_first: u32,
    group: u32,
    col: [u32; MAX_PLAN],
    out_limb: [u32; MAX_PLAN],
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for BconvArgs {}

/// Conversions of one polynomial each in one launch (`struct BconvMulti` in `bconv.cu`).
const MAX_MULTI: usize = 5;

/// The register-input tile `BconvTile::Auto` picks where one serves.
const RIN_DEFAULT: BconvTile = BconvTile::RinC2;

/// The most output columns one block of a register-input tile walks. Measured on an H100 at the
/// deep preset: 16 against 8, 12 and 25 in session 9 (mul+relin 0.343 against 0.350, 0.345,
/// 0.350 ms); after the later kernels, 32 (a ModUp digit's every output in one block) against 16
/// (BENCHMARKS.md §19: mul+relin 0.305–0.306 against 0.306–0.308 ms over 4 rounds, rotate
/// 0.278–0.279 against 0.279–0.281). The launch still gets 4 blocks per SM
/// ([`BconvTile::columns_per_block`]), so small problems keep their smaller groups.
const RIN_MAX_GROUP: u32 = 32;

/// The blocks per multiprocessor a register-input launch is split into output groups for (see
/// [`BconvTile::columns_per_block`]).
const RIN_BLOCKS_PER_SM: usize = 4;

/// The most input limbs the usual register-input kernels hold (`BCONV_RIN_LMAX` in `bconv.cu`).
const RIN_NARROW_INPUTS: usize = 12;

/// The most input limbs a register-input tile holds: above [`RIN_NARROW_INPUTS`] the `_l16`
/// kernels (`BCONV_RIN_LMAX_WIDE`), whose larger register array would cost the smaller
/// conversions occupancy, so they keep the usual ones.
const RIN_MAX_INPUTS: usize = 16;

/// The register-input kernels' name suffix for `l` input limbs.
fn rin_suffix(l: usize) -> &'static str {
    if l > RIN_NARROW_INPUTS {
        "_l16"
    } else {
        ""
    }
}

#[repr(C)]
#[derive(Clone, Copy)]
struct BconvMulti {
    a: [BconvArgs; MAX_MULTI],
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for BconvMulti {}

/// Launch arguments of `bconv_scale` (`struct ScaleArgs`).
#[repr(C)]
#[derive(Clone, Copy)]
struct ScaleArgs {
    n: u64,
    in_stride: u64,
    out_stride: u64,
    input: u64,
    out: u64,
    from_mod: u64,
    q_hat_inv: u64,
    q_hat_inv_shoup: u64,
    from_count: u32,
    pad: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for ScaleArgs {}

/// Launch arguments of `bconv_rescale_last` (`struct RescaleArgs`).
#[repr(C)]
#[derive(Clone, Copy)]
struct RescaleArgs {
    n: u64,
    in_stride: u64,
    out_stride: u64,
    input: u64,
    out: u64,
    moduli: u64,
    inv: u64,
    inv_shoup: u64,
    half: u64,
    level: u32,
    pad: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for RescaleArgs {}

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

impl DeviceBaseConverter {
    /// Uploads the tables of `conv` to `device`.
    ///
    /// Errors: [`CudaError::InvalidArgument`] for a source basis of more than
    /// [`MAX_FROM_LIMBS`] limbs; driver errors.
    pub fn new(device: &Arc<GpuDevice>, conv: &BaseConverter) -> Result<Self> {
        let (l, k) = (conv.from().len(), conv.to().len());
        if l == 0 || k == 0 {
            return Err(CudaError::InvalidArgument("an empty basis".into()));
        }
        if l > MAX_FROM_LIMBS {
            return Err(CudaError::InvalidArgument(format!(
                "a source basis of {l} limbs exceeds {MAX_FROM_LIMBS}"
            )));
        }
        let from = DeviceModuli::new(device, conv.from().moduli())?;
        let to = DeviceModuli::new(device, conv.to().moduli())?;
        let mut words = Vec::with_capacity(2 * l + l * k);
        words.extend_from_slice(conv.q_hat_inv_mod_q());
        words.extend_from_slice(conv.q_hat_inv_mod_q_shoup());
        words.extend_from_slice(conv.q_hat_mod_p());
        words.extend(conv.q_inv_f64().iter().map(|x| x.to_bits()));
        words.extend_from_slice(conv.q_mod_p());
        let tables = device.upload(&words)?;
        let below_2_32 = |m: &Modulus| m.value() < 1 << 32;
        let narrow = conv.from().moduli().iter().all(below_2_32)
            && conv.to().moduli().iter().all(below_2_32);
        Ok(Self {
            device: device.clone(),
            from,
            to,
            tables,
            q_hat_inv: conv.q_hat_inv_mod_q().to_vec(),
            q_hat_inv_shoup: conv.q_hat_inv_mod_q_shoup().to_vec(),
            l,
            k,
            narrow,
        })
    }

    /// Whether every modulus of both bases is below `2^32`, so that the kernel multiplies
    /// 32 × 32 → 64 bits (the `_narrow` kernels) instead of 64 × 64 → 128.
    pub fn is_narrow(&self) -> bool {
        self.narrow
    }

    /// The device.
    pub fn device(&self) -> &Arc<GpuDevice> {
        &self.device
    }

    /// The number of source limbs `L`.
    pub fn from_len(&self) -> usize {
        self.l
    }

    /// The number of target limbs `K`.
    pub fn to_len(&self) -> usize {
        self.k
    }

    /// The source moduli on the device.
    pub fn from_moduli(&self) -> &Arc<DeviceModuli> {
        &self.from
    }

    /// The target moduli on the device.
    pub fn to_moduli(&self) -> &Arc<DeviceModuli> {
        &self.to
    }

    /// `q̂_i^{-1} mod q_i` per source limb: the per-limb constant of the first step, for a
    /// kernel (an inverse NTT) that fuses it and then calls
    /// [`DeviceBaseConverter::convert_scaled`].
    pub fn q_hat_inv_mod_q(&self) -> &[u64] {
        &self.q_hat_inv
    }

    /// Shoup companions of [`DeviceBaseConverter::q_hat_inv_mod_q`].
    pub fn q_hat_inv_mod_q_shoup(&self) -> &[u64] {
        &self.q_hat_inv_shoup
    }

    fn ptr(&self, offset: usize) -> Result<u64> {
        self.tables.device_ptr_at(offset)
    }

    /// The first step alone: `out[p][i] = [x[p][i] · q̂_i^{-1}]_{q_i}` (canonical), both
    /// `[polys][L][n]`.
    ///
    /// Errors: [`CudaError::Shape`] / [`CudaError::InvalidArgument`] for bad shapes.
    pub fn scale_by_q_hat_inv(
        &self,
        out: &mut DeviceBuffer,
        input: &DeviceBuffer,
        n: usize,
    ) -> Result<()> {
        check_degree(n)?;
        check_device(&self.device, &[out, input])?;
        let polys = polys_of("scale input", input.len(), self.l, n)?;
        check_len("scale output", out.len(), input.len())?;
        let args = ScaleArgs {
            n: n as u64,
            in_stride: (self.l * n) as u64,
            out_stride: (self.l * n) as u64,
            input: input.device_ptr(),
            out: out.device_ptr(),
            from_mod: self.from.device_ptr(),
            q_hat_inv: self.ptr(0)?,
            q_hat_inv_shoup: self.ptr(self.l)?,
            from_count: self.l as u32,
            pad: 0,
        };
        let rows = polys * self.l;
        if rows > 65535 {
            return Err(CudaError::Shape(format!(
                "{polys} polynomials × {} limbs exceed one launch (65535 rows)",
                self.l
            )));
        }
        let cfg = LaunchConfig {
            grid_dim: (
                (n / 2).div_ceil(SIMPLE_THREADS as usize).min(65535) as u32,
                rows as u32,
                1,
            ),
            block_dim: (SIMPLE_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let f = self.device.function(&BCONV, "bconv_scale")?;
        let mut params = [param(&args)];
        // SAFETY: the one parameter is `struct ScaleArgs` by value (#[repr(C)] like its CUDA
        // twin), pointing to a local that lives across the call; every address is a live
        // allocation of this device whose size was checked above; all work is ordered on the
        // device's one stream, and the kernel reads only the moduli and q̂ tables (host uploads)
        // before pdl_wait().
        unsafe { launch_dependent(&self.device, &f, cfg, &mut params) }
    }

    /// The fast base conversion of `input` (`[polys][L][n]`) into `out` (`[polys][K][n]`), the
    /// first step fused (twin: [`BaseConverter::convert_approx`]).
    pub fn convert(&self, out: &mut DeviceBuffer, input: &DeviceBuffer, n: usize) -> Result<()> {
        self.convert_with(out, input, n, false, BconvTile::Auto)
    }

    /// The conversion of an input that already holds `t_i = [x_i · q̂_i^{-1}]_{q_i}` (from
    /// [`DeviceBaseConverter::scale_by_q_hat_inv`] or a fused inverse NTT).
    pub fn convert_scaled(&self, out: &mut DeviceBuffer, t: &DeviceBuffer, n: usize) -> Result<()> {
        self.convert_with(out, t, n, true, BconvTile::Auto)
    }

    /// The centred conversion of `input` (`[polys][L][n]`) into `out` (`[polys][K][n]`), the
    /// first step fused (twin: [`BaseConverter::convert_centered`], word for word).
    pub fn convert_centered(
        &self,
        out: &mut DeviceBuffer,
        input: &DeviceBuffer,
        n: usize,
    ) -> Result<()> {
        self.convert_centered_with(out, input, n, false, BconvTile::Auto)
    }

    /// [`DeviceBaseConverter::convert_centered`] (`scaled = false`) or its variant on an input
    /// that already holds `t_i` (`scaled = true`), with an explicit register tile.
    pub fn convert_centered_with(
        &self,
        out: &mut DeviceBuffer,
        input: &DeviceBuffer,
        n: usize,
        scaled: bool,
        tile: BconvTile,
    ) -> Result<()> {
        self.convert_impl(out, input, n, scaled, true, tile)
    }

    /// [`DeviceBaseConverter::convert`] (`scaled = false`) or
    /// [`DeviceBaseConverter::convert_scaled`] (`scaled = true`) with an explicit register tile.
    pub fn convert_with(
        &self,
        out: &mut DeviceBuffer,
        input: &DeviceBuffer,
        n: usize,
        scaled: bool,
        tile: BconvTile,
    ) -> Result<()> {
        self.convert_impl(out, input, n, scaled, false, tile)
    }

    /// [`DeviceBaseConverter::convert_centered`] of `polys` polynomials read in place from a
    /// larger buffer: polynomial `p`'s `L` input limbs start at word `in_offset + p · in_stride`
    /// of `input` (the `P` limbs of a `[2][Q_ℓ ∪ P][n]` key-switching accumulator); the output is
    /// `[polys][K][n]`.
    ///
    /// Errors: [`CudaError::Shape`] when the rows leave `input` or `out` is short; device
    /// mismatch and launch errors.
    pub fn convert_centered_strided(
        &self,
        out: &mut DeviceBuffer,
        input: &DeviceBuffer,
        in_offset: usize,
        in_stride: usize,
        polys: usize,
        n: usize,
    ) -> Result<()> {
        self.strided_impl(out, input, (in_offset, in_stride), polys, n, false)
    }

    /// [`DeviceBaseConverter::convert_centered_strided`] of rows that already hold the first
    /// step's `t_i = x_i · q̂_i^{-1}` (e.g. an inverse NTT with those factors folded in).
    ///
    /// Errors: as `convert_centered_strided`.
    pub fn convert_scaled_centered_strided(
        &self,
        out: &mut DeviceBuffer,
        input: &DeviceBuffer,
        in_offset: usize,
        in_stride: usize,
        polys: usize,
        n: usize,
    ) -> Result<()> {
        self.strided_impl(out, input, (in_offset, in_stride), polys, n, true)
    }

    fn strided_impl(
        &self,
        out: &mut DeviceBuffer,
        input: &DeviceBuffer,
        (in_offset, in_stride): (usize, usize),
        polys: usize,
        n: usize,
        scaled: bool,
    ) -> Result<()> {
        check_degree(n)?;
        check_device(&self.device, &[out, input])?;
        let last = polys
            .checked_sub(1)
            .map(|p| in_offset + p * in_stride + self.l * n);
        if polys == 0 || !last.is_some_and(|end| end <= input.len()) || in_stride < self.l * n {
            return Err(CudaError::Shape(format!(
                "{polys} polynomials of {} limbs from word {in_offset} (stride {in_stride}) of a \
                 {}-word buffer",
                self.l,
                input.len()
            )));
        }
        check_len("conversion output", out.len(), polys * self.k * n)?;
        let plan: Vec<(u32, u32)> = (0..self.k as u32).map(|j| (j, j)).collect();
        let io = Io {
            n,
            polys,
            input: input.device_ptr() + (in_offset * 8) as u64,
            in_stride,
            out: out.device_ptr(),
            out_stride: self.k * n,
        };
        let flags = if scaled { FLAG_SCALED } else { 0 };
        self.launch_plan(&io, &plan, flags, 0, true, BconvTile::Auto)
    }

    fn convert_impl(
        &self,
        out: &mut DeviceBuffer,
        input: &DeviceBuffer,
        n: usize,
        scaled: bool,
        centered: bool,
        tile: BconvTile,
    ) -> Result<()> {
        check_degree(n)?;
        check_device(&self.device, &[out, input])?;
        let polys = polys_of("conversion input", input.len(), self.l, n)?;
        check_len("conversion output", out.len(), polys * self.k * n)?;
        let plan: Vec<(u32, u32)> = (0..self.k as u32).map(|j| (j, j)).collect();
        let io = Io {
            n,
            polys,
            input: input.device_ptr(),
            in_stride: self.l * n,
            out: out.device_ptr(),
            out_stride: self.k * n,
        };
        let flags = if scaled { FLAG_SCALED } else { 0 };
        self.launch_plan(&io, &plan, flags, 0, centered, tile)
    }

    /// Dynamic shared memory of one block of a `j`-column tile: the table slice (as words and,
    /// for the register-input tiles' two-part sums, as doubles), the input constants, the output
    /// moduli and, centred, the input moduli's inverses.
    fn shared_bytes(&self, j: u32, centered: bool, rin: bool) -> u32 {
        let (l, j) = (self.l, j as usize);
        let extra = if centered { l } else { 0 };
        let table = if rin { 2 * l * j } else { l * j };
        ((table + 3 * l + 4 * j + extra) * 8) as u32
    }

    /// The launch arguments of one plan chunk (at most [`MAX_PLAN`] entries).
    fn args(
        &self,
        io: &Io,
        chunk: &[(u32, u32)],
        flags: u32,
        copy_first: u32,
    ) -> Result<BconvArgs> {
        let l = self.l;
        let f64_off = 2 * l + l * self.k;
        let mut args = BconvArgs {
            n: io.n as u64,
            in_stride: io.in_stride as u64,
            out_stride: io.out_stride as u64,
            aux_stride: 0,
            input: io.input,
            out: io.out,
            aux: 0,
            from_mod: self.from.device_ptr(),
            to_mod: self.to.device_ptr(),
            q_hat_inv: self.ptr(0)?,
            q_hat_inv_shoup: self.ptr(l)?,
            q_hat_mod_p: self.ptr(2 * l)?,
            epi_w: 0,
            epi_ws: 0,
            q_inv_f64: self.ptr(f64_off)?,
            q_mod_p: self.ptr(f64_off + l)?,
            from_count: l as u32,
            table_stride: self.k as u32,
            count: chunk.len() as u32,
            flags,
            copy_first,
            group: 0,
            col: [0; MAX_PLAN],
            out_limb: [0; MAX_PLAN],
        };
        for (e, &(col, limb)) in chunk.iter().enumerate() {
            args.col[e] = col;
            args.out_limb[e] = limb;
        }
        Ok(args)
    }

    /// Launches the conversion for `plan` (`(table column, output limb)` pairs), in chunks of
    /// [`MAX_PLAN`]; `FLAG_COPY` applies to the first chunk only. `centered` selects the
    /// `_centered` kernels.
    #[allow(clippy::too_many_arguments)]
    fn launch_plan(
        &self,
        io: &Io,
        plan: &[(u32, u32)],
        flags: u32,
        copy_first: u32,
        centered: bool,
        tile: BconvTile,
    ) -> Result<()> {
        let rin_ok = self.l <= RIN_MAX_INPUTS && flags & FLAG_COPY == 0;
        let rin = Some(RIN_DEFAULT).filter(|_| rin_ok);
        let tile = match (tile, rin) {
            (BconvTile::Auto, Some(r)) => r,
            (BconvTile::Auto, None) => {
                let t = BconvTile::choose(
                    io.n,
                    io.polys,
                    plan.len(),
                    self.device.multiprocessor_count(),
                );
                // Many input limbs: the 8-limb load chunks of the uncapped variant (H100,
                // 30 -> 8 limbs: 22.6 us, as J8C2); key switching's 7-9 limbs prefer the
                // capped variant (H100, 9 -> 23: 24.8 against 29.2 us; BENCHMARKS.md §10).
                if t == BconvTile::J8C2 && self.l > 16 {
                    BconvTile::J8C2U8
                } else {
                    t
                }
            }
            // A register-input tile asked for where it does not serve: the register-tiled one.
            (t, _) if t.is_rin() && !rin_ok => BconvTile::J8C2,
            (t, _) => t,
        };
        let (_, c) = tile.shape().unwrap_or((8, 2));
        let f = self
            .device
            .function(&BCONV, &tile.kernel(self.narrow, centered, self.l))?;
        let chunks: Vec<&[(u32, u32)]> = if plan.is_empty() {
            vec![&[]]
        } else {
            plan.chunks(MAX_PLAN).collect()
        };
        for (ci, chunk) in chunks.into_iter().enumerate() {
            let chunk_flags = if ci == 0 { flags } else { flags & !FLAG_COPY };
            let mut args = self.args(io, chunk, chunk_flags, copy_first)?;
            let coeff_blocks = io.n.div_ceil((THREADS * c) as usize);
            let sms = self.device.multiprocessor_count();
            let j = tile.columns_per_block(chunk.len(), coeff_blocks * io.polys, sms);
            args.group = j;
            let groups = chunk.len().div_ceil(j as usize).max(1);
            let cfg = LaunchConfig {
                grid_dim: (coeff_blocks as u32, io.polys as u32, groups as u32),
                block_dim: (THREADS, 1, 1),
                shared_mem_bytes: self.shared_bytes(j, centered, tile.is_rin()),
            };
            let mut params = [param(&args)];
            // SAFETY: the one parameter is `struct BconvArgs` by value (#[repr(C)] like its CUDA
            // twin), pointing to a local that lives across the call; the callers checked every
            // buffer against the plan (input rows, output limbs, aux rows, table columns < K);
            // all work is ordered on the device's one stream, and before pdl_wait() the kernel
            // reads only this converter's tables and the moduli (uploaded by the host when they
            // were built, never written by a kernel).
            unsafe { launch_dependent(&self.device, &f, cfg, &mut params) }?;
        }
        Ok(())
    }
}

/// The conversion plan of a ModUp digit of `c` limbs from `start` at `level` (`|Q| = l`,
/// `|P| = pl`): every limb of `Q_level ∪ P` but the digit's own, as `(table column, output
/// limb)` pairs (the digit's table lists the other `Q` primes in order, then the `P` primes).
fn modup_plan(l: usize, pl: usize, start: usize, c: usize, level: usize) -> Vec<(u32, u32)> {
    (0..level + pl)
        .filter(|o| *o < start || *o >= start + c)
        .map(|o| {
            let col = if o < start {
                o
            } else if o < level {
                o - c
            } else {
                l - c + (o - level)
            };
            (col as u32, o as u32)
        })
        .collect()
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

impl DeviceModUp {
    /// Wraps `modup` for `device` (tables are uploaded lazily).
    pub fn new(device: &Arc<GpuDevice>, modup: &ModUp) -> Result<Self> {
        if modup.digits().iter().any(|d| d.len() > MAX_FROM_LIMBS) {
            return Err(CudaError::InvalidArgument(format!(
                "digits of more than {MAX_FROM_LIMBS} limbs are not supported"
            )));
        }
        Ok(Self {
            device: device.clone(),
            modup: modup.clone(),
            converters: Mutex::new(HashMap::new()),
        })
    }

    /// The host ModUp.
    pub fn host(&self) -> &ModUp {
        &self.modup
    }

    /// [`modup_plan`] for this ModUp's `|Q|` and `|P|`.
    fn plan(&self, start: usize, c: usize, level: usize) -> Vec<(u32, u32)> {
        modup_plan(self.modup.q().len(), self.modup.p().len(), start, c, level)
    }

    fn converter(&self, digit: usize, level: usize) -> Result<Arc<DeviceBaseConverter>> {
        let c = self.modup.digit_limbs(digit, level)?.len();
        let mut cache = self
            .converters
            .lock()
            .map_err(|_| CudaError::Driver("ModUp converter cache lock poisoned".into()))?;
        if let Some(conv) = cache.get(&(digit, c)) {
            return Ok(conv.clone());
        }
        let conv = Arc::new(DeviceBaseConverter::new(
            &self.device,
            self.modup.converter(digit, level)?,
        )?);
        cache.insert((digit, c), conv.clone());
        Ok(conv)
    }

    /// Extends digit `digit` of the level-`level` polynomials `input` (`[polys][level][n]`: the
    /// whole polynomials; the kernel reads the digit's active limbs from them) to
    /// `output` (`[polys][level + |P|][n]`, Q limbs then P limbs). The digit's own limbs are
    /// copied (reduced), all others converted (twin: [`ModUp::apply`] on the digit's limbs).
    ///
    /// Errors: as [`ModUp::digit_limbs`]; [`CudaError::Shape`] for buffers of the wrong length.
    pub fn apply(
        &self,
        digit: usize,
        level: usize,
        input: &DeviceBuffer,
        output: &mut DeviceBuffer,
        n: usize,
    ) -> Result<()> {
        self.apply_with(digit, level, input, output, n, BconvTile::Auto)
    }

    /// [`DeviceModUp::apply`] with the centred conversion (twin: [`ModUp::apply_centered`] on
    /// the digit's limbs, word for word): the digit's own limbs are copied (reduced), every
    /// other limb of `output` (`[polys][level + |P|][n]`) receives the centred digit value.
    /// One launch per [`MAX_PLAN`] output columns (one for `level + |P| − c ≤ 64`).
    ///
    /// Errors: as [`DeviceModUp::apply`].
    pub fn apply_centered(
        &self,
        digit: usize,
        level: usize,
        input: &DeviceBuffer,
        output: &mut DeviceBuffer,
        n: usize,
    ) -> Result<()> {
        self.extend(digit, level, input, output, None, n, true, BconvTile::Auto)
    }

    /// [`DeviceModUp::apply_centered`] without the copy of the digit's own limbs: only the other
    /// limbs of `output` are written (the key-switching path fills the own limbs from the
    /// NTT-form input instead, so the reduced coefficient-form copy would be overwritten).
    ///
    /// Errors: as [`DeviceModUp::apply`].
    pub fn convert_centered(
        &self,
        digit: usize,
        level: usize,
        input: &DeviceBuffer,
        output: &mut DeviceBuffer,
        n: usize,
    ) -> Result<()> {
        self.extend_flags(
            digit,
            level,
            input,
            output,
            None,
            n,
            true,
            BconvTile::Auto,
            0,
        )
    }

    /// The first step's factors at `level`: `q̂_i^{-1} mod q_i` for every limb `i < level`,
    /// `q̂_i` relative to the digit holding limb `i` (what the conversions multiply by first).
    ///
    /// Errors: [`CudaError::Shape`] for a level outside `1 ..= |Q|`.
    pub fn first_step_factors(&self, level: usize) -> Result<Vec<u64>> {
        let mut f = vec![0u64; level];
        for d in 0..self.modup.active_digits(level) {
            let r = self.modup.digit_limbs(d, level)?;
            let conv = self.modup.converter(d, level)?;
            f[r.clone()].copy_from_slice(&conv.q_hat_inv_mod_q()[..r.len()]);
        }
        Ok(f)
    }

    /// [`DeviceModUp::convert_centered`] of several digits of one level-`level` polynomial
    /// `input` (`[level][n]`), digit `d_i` into `outputs[i]` (`[level + |P|][n]` each), in one
    /// launch per five digits (each a kernel-parameter block of its own; blockIdx.y picks it)
    /// instead of one per digit. Words as [`DeviceModUp::convert_centered`] of each.
    ///
    /// Errors: as [`DeviceModUp::convert_centered`].
    pub fn convert_centered_many(
        &self,
        level: usize,
        input: &DeviceBuffer,
        outputs: &mut [(usize, &mut DeviceBuffer)],
        n: usize,
    ) -> Result<()> {
        self.convert_centered_many_with(level, input, outputs, n, false)
    }

    /// [`DeviceModUp::convert_centered_many`] of an input that already holds the first step's
    /// `t_i = x_i · q̂_i^{-1}` (`scaled`: e.g. an inverse NTT with the factors of
    /// [`DeviceModUp::first_step_factors`] folded in), or of the plain `x_i`.
    pub fn convert_centered_many_with(
        &self,
        level: usize,
        input: &DeviceBuffer,
        outputs: &mut [(usize, &mut DeviceBuffer)],
        n: usize,
        scaled: bool,
    ) -> Result<()> {
        let flags = if scaled { FLAG_SCALED } else { 0 };
        check_degree(n)?;
        let pl = self.modup.p().len();
        if polys_of("ModUp input", input.len(), level, n)? != 1 {
            return Err(CudaError::Shape(
                "convert_centered_many converts one polynomial".into(),
            ));
        }
        let mut jobs = Vec::with_capacity(outputs.len());
        for (digit, output) in outputs.iter() {
            check_device(&self.device, &[output, input])?;
            check_len("ModUp output", output.len(), (level + pl) * n)?;
            let r = self.modup.digit_limbs(*digit, level)?;
            let (start, c) = (r.start, r.len());
            let conv = self.converter(*digit, level)?;
            let plan = self.plan(start, c, level);
            let io = Io {
                n,
                polys: 1,
                input: input.device_ptr_at(start * n)?,
                in_stride: level * n,
                out: output.device_ptr(),
                out_stride: (level + pl) * n,
            };
            jobs.push((conv, plan, io));
        }
        let longest = jobs.iter().map(|(_, p, _)| p.len()).max().unwrap_or(0);
        let narrow = jobs.first().is_some_and(|(c, _, _)| c.narrow);
        let rin = Some(RIN_DEFAULT).filter(|_| jobs.iter().all(|(c, _, _)| c.l <= RIN_MAX_INPUTS));
        let tile = rin.unwrap_or_else(|| {
            BconvTile::choose(n, 1, longest, self.device.multiprocessor_count())
        });
        let widest = jobs.iter().map(|(c, _, _)| c.l).max().unwrap_or(0);
        let kernel = tile.multi_kernel(narrow, widest);
        let uniform = jobs
            .iter()
            .all(|(c, p, _)| c.narrow == narrow && c.l <= 16 && p.len() <= MAX_PLAN);
        let (Some(kernel), true) = (kernel, uniform) else {
            // Plans or tiles the multi kernel does not take: one launch per digit.
            for (conv, plan, io) in &jobs {
                conv.launch_plan(io, plan, flags, 0, true, BconvTile::Auto)?;
            }
            return Ok(());
        };
        let (_, c) = tile.shape().unwrap_or((8, 2));
        let f = self.device.function(&BCONV, &kernel)?;
        let (coeff_blocks, sms) = (
            n.div_ceil((THREADS * c) as usize),
            self.device.multiprocessor_count(),
        );
        for group in jobs.chunks(MAX_MULTI) {
            let group_of = |plan: &[(u32, u32)]| {
                tile.columns_per_block(plan.len(), coeff_blocks * group.len(), sms)
            };
            let args = group
                .iter()
                .map(|(conv, plan, io)| {
                    let mut a = conv.args(io, plan, flags, 0)?;
                    a.group = group_of(plan);
                    Ok(a)
                })
                .collect::<Result<Vec<_>>>()?;
            // Entries past the group repeat its first (never read: blockIdx.y < group.len()).
            let mut multi = BconvMulti {
                a: [args[0]; MAX_MULTI],
            };
            multi.a[..args.len()].copy_from_slice(&args);
            let shared = group
                .iter()
                .map(|(conv, plan, _)| conv.shared_bytes(group_of(plan), true, tile.is_rin()))
                .max();
            let groups = group
                .iter()
                .map(|(_, plan, _)| plan.len().div_ceil(group_of(plan) as usize))
                .max();
            let (shared, groups) = (shared.unwrap_or(0), groups.unwrap_or(1).max(1));
            let cfg = LaunchConfig {
                grid_dim: (coeff_blocks as u32, group.len() as u32, groups as u32),
                block_dim: (THREADS, 1, 1),
                shared_mem_bytes: shared,
            };
            let mut params = [param(&multi)];
            // SAFETY: the one parameter is `struct BconvMulti` by value (#[repr(C)] like its CUDA
            // twin), pointing to a local that lives across the call; blockIdx.y < group.len()
            // selects a filled entry; each entry's buffers were checked as in
            // `convert_centered` (input limbs of one level-`level` polynomial, an output of
            // `level + |P|` limbs, table columns below K); blocks past an entry's plan exit
            // before reading anything; all work is ordered on the device's one stream, and
            // before pdl_wait() the kernel reads only the converters' host-uploaded tables.
            unsafe { launch_dependent(&self.device, &f, cfg, &mut params) }?;
        }
        Ok(())
    }

    /// [`DeviceModUp::apply_centered`] writing into `output` from word `out_offset` on (e.g.
    /// digit `d` of a `[dnum][level + |P|][n]` buffer at `out_offset = d·(level + |P|)·n`, the
    /// stacked layout of the digits); `output` must hold
    /// `out_offset + polys·(level + |P|)·n` words or more. `input` is `[polys][level][n]`.
    ///
    /// Errors: as [`DeviceModUp::apply`]; [`CudaError::Shape`] if `output` is too short.
    pub fn apply_centered_at(
        &self,
        digit: usize,
        level: usize,
        input: &DeviceBuffer,
        output: &mut DeviceBuffer,
        out_offset: usize,
        n: usize,
    ) -> Result<()> {
        self.extend(
            digit,
            level,
            input,
            output,
            Some(out_offset),
            n,
            true,
            BconvTile::Auto,
        )
    }

    /// [`DeviceModUp::apply`] with an explicit register tile.
    pub fn apply_with(
        &self,
        digit: usize,
        level: usize,
        input: &DeviceBuffer,
        output: &mut DeviceBuffer,
        n: usize,
        tile: BconvTile,
    ) -> Result<()> {
        self.extend(digit, level, input, output, None, n, false, tile)
    }

    /// [`DeviceModUp::apply_centered`] with an explicit register tile.
    pub fn apply_centered_with(
        &self,
        digit: usize,
        level: usize,
        input: &DeviceBuffer,
        output: &mut DeviceBuffer,
        n: usize,
        tile: BconvTile,
    ) -> Result<()> {
        self.extend(digit, level, input, output, None, n, true, tile)
    }

    #[allow(clippy::too_many_arguments)]
    fn extend(
        &self,
        digit: usize,
        level: usize,
        input: &DeviceBuffer,
        output: &mut DeviceBuffer,
        out_offset: Option<usize>,
        n: usize,
        centered: bool,
        tile: BconvTile,
    ) -> Result<()> {
        self.extend_flags(
            digit, level, input, output, out_offset, n, centered, tile, FLAG_COPY,
        )
    }

    /// [`DeviceModUp::extend`] with the launch flags given (`FLAG_COPY` or 0).
    #[allow(clippy::too_many_arguments)]
    fn extend_flags(
        &self,
        digit: usize,
        level: usize,
        input: &DeviceBuffer,
        output: &mut DeviceBuffer,
        out_offset: Option<usize>,
        n: usize,
        centered: bool,
        tile: BconvTile,
        flags: u32,
    ) -> Result<()> {
        let at = out_offset.is_some();
        let out_offset = out_offset.unwrap_or(0);
        check_degree(n)?;
        check_device(&self.device, &[output, input])?;
        let r = self.modup.digit_limbs(digit, level)?;
        let (start, c) = (r.start, r.len());
        let pl = self.modup.p().len();
        let polys = polys_of("ModUp input", input.len(), level, n)?;
        let out_words = polys * (level + pl) * n;
        if !at {
            check_len("ModUp output", output.len(), out_words)?;
        } else if output.len() < out_offset + out_words {
            return Err(CudaError::Shape(format!(
                "ModUp output has {} words; {out_offset} + {out_words} needed",
                output.len()
            )));
        }
        let conv = self.converter(digit, level)?;
        let plan = self.plan(start, c, level);
        let io = Io {
            n,
            polys,
            input: input.device_ptr_at(start * n)?,
            in_stride: level * n,
            out: output.device_ptr_at(out_offset)?,
            out_stride: (level + pl) * n,
        };
        conv.launch_plan(&io, &plan, flags, start as u32, centered, tile)
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

impl DeviceRescaler {
    /// Uploads the tables of every level of `rescaler` to `device`.
    pub fn new(device: &Arc<GpuDevice>, rescaler: &Rescaler) -> Result<Self> {
        let basis = rescaler.basis();
        let len = basis.len();
        let moduli: Vec<Modulus> = basis.moduli().to_vec();
        let mut words = Vec::new();
        let mut offsets = Vec::new();
        for level in 2..=len {
            offsets.push(words.len());
            words.extend_from_slice(rescaler.q_last_inv_mod_q(level)?);
            words.extend_from_slice(rescaler.q_last_inv_mod_q_shoup(level)?);
            words.extend_from_slice(rescaler.half_mod_q(level)?);
        }
        if words.is_empty() {
            words.push(0);
        }
        Ok(Self {
            device: device.clone(),
            moduli: DeviceModuli::new(device, &moduli)?,
            tables: device.upload(&words)?,
            offsets,
            len,
        })
    }

    /// Rescales the level-`level` polynomials `input` (`[polys][level][n]`) into `output`
    /// (`[polys][level - 1][n]`) (twin: [`Rescaler::apply`]).
    ///
    /// Errors: [`CudaError::InvalidArgument`] for a level outside `2..=L` or a bad degree;
    /// [`CudaError::Shape`] for buffers of the wrong length.
    pub fn apply(
        &self,
        level: usize,
        input: &DeviceBuffer,
        output: &mut DeviceBuffer,
        n: usize,
    ) -> Result<()> {
        check_degree(n)?;
        check_device(&self.device, &[output, input])?;
        if level < 2 || level > self.len {
            return Err(CudaError::InvalidArgument(format!(
                "rescaling needs a level in 2..={}, got {level}",
                self.len
            )));
        }
        let polys = polys_of("rescale input", input.len(), level, n)?;
        check_len("rescale output", output.len(), polys * (level - 1) * n)?;
        let off = self.offsets[level - 2];
        let args = RescaleArgs {
            n: n as u64,
            in_stride: (level * n) as u64,
            out_stride: ((level - 1) * n) as u64,
            input: input.device_ptr(),
            out: output.device_ptr(),
            moduli: self.moduli.device_ptr(),
            inv: self.tables.device_ptr_at(off)?,
            inv_shoup: self.tables.device_ptr_at(off + level - 1)?,
            half: self.tables.device_ptr_at(off + 2 * (level - 1))?,
            level: level as u32,
            pad: 0,
        };
        let cfg = LaunchConfig {
            grid_dim: (n.div_ceil(SIMPLE_THREADS as usize) as u32, polys as u32, 1),
            block_dim: (SIMPLE_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let f = self.device.function(&BCONV, "bconv_rescale_last")?;
        let mut params = [param(&args)];
        // SAFETY: the one parameter is `struct RescaleArgs` by value (#[repr(C)] like its CUDA
        // twin), pointing to a local that lives across the call; buffer sizes were checked above
        // and the level's tables lie inside `tables`; all work is ordered on the device's one
        // stream, and before pdl_wait() the kernel reads only the moduli table (a host upload).
        unsafe { launch_dependent(&self.device, &f, cfg, &mut params) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_input_groups_fill_the_device_with_few_groups() {
        // N = 2^16, C = 2: 256 coefficient blocks; an H100 has 132 multiprocessors.
        let rin = BconvTile::RinC2;
        // A ModUp's three digits in one launch: one group each (768 blocks fill 4 per SM).
        assert_eq!(rin.columns_per_block(23, 3 * 256, 132), 23);
        assert_eq!(rin.columns_per_block(25, 3 * 256, 132), 25);
        // A two-polynomial ModDown: two groups; one polynomial: three.
        assert_eq!(rin.columns_per_block(25, 2 * 256, 132), 13);
        assert_eq!(rin.columns_per_block(23, 256, 132), 8);
        // Never more groups than outputs, never an empty plan's division by zero.
        assert_eq!(rin.columns_per_block(3, 8, 132), 1);
        assert_eq!(rin.columns_per_block(0, 0, 132), 1);
        // Many blocks: as few groups of at most RIN_MAX_GROUP as the outputs need.
        assert_eq!(rin.columns_per_block(40, 1 << 14, 132), 20);
        // The register-tiled tiles keep their J.
        assert_eq!(BconvTile::J7C2.columns_per_block(25, 256, 132), 7);
    }

    #[test]
    fn the_two_part_bound_is_the_kernels() {
        // fp64::two_part_high, tested at TWO_PART_MAX_LOG2, is the twin of bconv_f64acc_high,
        // which the kernel takes up to BCONV_F64ACC_MAX_LOG2: the two bounds must be one.
        let define = format!(
            "#define BCONV_F64ACC_MAX_LOG2 {}",
            crate::fp64::TWO_PART_MAX_LOG2
        );
        assert!(BCONV.source.contains(&define), "bconv.cu lacks `{define}`");
    }

    #[test]
    fn modup_plans_skip_the_digits_own_limbs() {
        // |Q| = 6, |P| = 2, digit of limbs 2..4 at level 5: outputs 0, 1, 4 (Q) and 5, 6 (P).
        assert_eq!(
            modup_plan(6, 2, 2, 2, 5),
            vec![(0, 0), (1, 1), (2, 4), (4, 5), (5, 6)]
        );
        // First and last digits.
        assert_eq!(modup_plan(4, 1, 0, 2, 4), vec![(0, 2), (1, 3), (2, 4)]);
        assert_eq!(
            modup_plan(4, 1, 3, 1, 4),
            vec![(0, 0), (1, 1), (2, 2), (3, 4)]
        );
    }

    #[test]
    fn the_tile_computes_few_empty_columns() {
        let (n, sms) = (1 << 16, 132);
        // ModUp of a 9-limb digit to 23 limbs: 8 + 8 + 7 with the widest tile.
        assert_eq!(BconvTile::choose(n, 1, 23, sms), BconvTile::J8C2);
        // ModDown to 25 limbs: four groups of 7, not 8 + 8 + 8 + 1.
        assert_eq!(BconvTile::choose(n, 2, 25, sms), BconvTile::J7C2);
        assert_eq!(BconvTile::choose(n, 2, 9, sms), BconvTile::J5C2);
        assert_eq!(BconvTile::choose(n, 1, 16, sms), BconvTile::J8C2);
        assert_eq!(BconvTile::choose(n, 1, 7, sms), BconvTile::J7C2);
        assert_eq!(BconvTile::choose(n, 1, 30, sms), BconvTile::J8C2);
        assert_eq!(BconvTile::choose(n, 1, 17, sms), BconvTile::J6C2);
        // Small problems keep the narrow tiles that fill the device.
        assert_eq!(BconvTile::choose(1 << 12, 1, 2, sms), BconvTile::J4C1);
        for tile in BconvTile::ALL {
            let (j, c) = tile.shape().unwrap();
            assert!(j as usize <= MAX_PLAN && c <= 2, "{tile:?}");
            let instances = if tile.is_rin() {
                vec![
                    format!("BCONV_RIN_INSTANCE({c}, BCONV_RIN_LMAX, )"),
                    format!("BCONV_RIN_INSTANCE({c}, BCONV_RIN_LMAX_WIDE, _l16)"),
                ]
            } else {
                vec![format!("BCONV_INSTANCE({j}, {c})")]
            };
            for instance in instances {
                assert!(BCONV.source.contains(&instance), "{tile:?}: {instance}");
            }
        }
    }
}
