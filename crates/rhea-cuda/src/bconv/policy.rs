//! Which conversion kernel runs for a shape: the tiles ([`BconvTile`]), the register-input limits
//! and the shared-memory size of a launch.

use super::*;

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
    /// accumulator (`bconv_rin_c2*`; up to 16 input limbs, `_l16` kernels above 12; otherwise
    /// the register-tiled choice).
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
    pub(super) fn columns_per_block(self, outputs: usize, blocks: usize, sms: u32) -> u32 {
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
    /// (bench-history §10, `gpu_bench --suite bconv`): `J8C2` is the fastest at every
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
    /// Measured on an H100 (bench-history §10): 7 → 25 limbs, 2 polys, `J7C2` 45.7 µs against
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
    pub(super) fn multi_kernel(self, narrow: bool, inputs: usize) -> Option<String> {
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

    /// The centred conversion kernel of this tile for `inputs` input limbs (only centred
    /// conversions are instantiated in `bconv.cu`).
    pub(super) fn kernel(self, narrow: bool, inputs: usize) -> String {
        let (j, c) = self.shape().unwrap_or((8, 2));
        let narrow = if narrow { "_narrow" } else { "" };
        if self.is_rin() {
            return format!("bconv_rin_c{c}{narrow}_centered{}", rin_suffix(inputs));
        }
        format!(
            "bconv_matmul_j{j}_c{c}{}{narrow}_centered",
            if self == BconvTile::J8C2U8 { "_u8" } else { "" },
        )
    }
}

/// The register-input tile `BconvTile::Auto` picks where one serves.
pub(super) const RIN_DEFAULT: BconvTile = BconvTile::RinC2;

/// The most output columns one block of a register-input tile walks. Measured on an H100 at the
/// deep preset: 16 against 8, 12 and 25 in session 9 (mul+relin 0.343 against 0.350, 0.345,
/// 0.350 ms); after the later kernels, 32 (a ModUp digit's every output in one block) against 16
/// (bench-history §19: mul+relin 0.305–0.306 against 0.306–0.308 ms over 4 rounds, rotate
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
pub(super) const RIN_MAX_INPUTS: usize = 16;

/// The register-input kernels' name suffix for `l` input limbs.
fn rin_suffix(l: usize) -> &'static str {
    if l > RIN_NARROW_INPUTS {
        "_l16"
    } else {
        ""
    }
}

impl DeviceBaseConverter {
    /// Whether every modulus of both bases is below `2^32`, so that the kernel multiplies
    /// 32 × 32 → 64 bits (the `_narrow` kernels) instead of 64 × 64 → 128.
    pub fn is_narrow(&self) -> bool {
        self.narrow
    }

    /// Dynamic shared memory of one block of a `j`-column tile: the table slice (as words and,
    /// for the register-input tiles' two-part sums, as doubles), the input constants, the output
    /// moduli and the input moduli's inverses (the centred correction).
    pub(super) fn shared_bytes(&self, j: u32, rin: bool) -> u32 {
        let (l, j) = (self.l, j as usize);
        let table = if rin { 2 * l * j } else { l * j };
        ((table + 4 * l + 4 * j) * 8) as u32
    }
}
