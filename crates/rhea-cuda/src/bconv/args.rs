//! The launch arguments packed for the kernels (`struct BconvArgs`, `BconvMulti`, `RescaleArgs`
//! in `bconv.cu`).

use super::*;

/// Launch arguments of the conversion kernel (`struct BconvArgs` in `bconv.cu`).
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct BconvArgs {
    pub(super) n: u64,
    pub(super) in_stride: u64,
    pub(super) out_stride: u64,
    pub(super) aux_stride: u64,
    pub(super) input: u64,
    pub(super) out: u64,
    pub(super) aux: u64,
    pub(super) from_mod: u64,
    pub(super) to_mod: u64,
    pub(super) q_hat_inv: u64,
    pub(super) q_hat_inv_shoup: u64,
    pub(super) q_hat_mod_p: u64,
    pub(super) epi_w: u64,
    pub(super) epi_ws: u64,
    pub(super) q_inv_f64: u64,
    pub(super) q_mod_p: u64,
    pub(super) from_count: u32,
    pub(super) table_stride: u32,
    pub(super) count: u32,
    pub(super) flags: u32,
    pub(super) copy_first: u32,
    pub(super) group: u32,
    pub(super) col: [u32; MAX_PLAN],
    pub(super) out_limb: [u32; MAX_PLAN],
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for BconvArgs {}

// The layout of `struct BconvArgs` in `kernels/bconv.cu`, which asserts the same numbers
// (`static_assert`): a field added, moved or resized on one side only fails the build.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<BconvArgs>() == 664);
    assert!(align_of::<BconvArgs>() == 8);
    assert!(offset_of!(BconvArgs, n) == 0);
    assert!(offset_of!(BconvArgs, in_stride) == 8);
    assert!(offset_of!(BconvArgs, out_stride) == 16);
    assert!(offset_of!(BconvArgs, aux_stride) == 24);
    assert!(offset_of!(BconvArgs, input) == 32);
    assert!(offset_of!(BconvArgs, out) == 40);
    assert!(offset_of!(BconvArgs, aux) == 48);
    assert!(offset_of!(BconvArgs, from_mod) == 56);
    assert!(offset_of!(BconvArgs, to_mod) == 64);
    assert!(offset_of!(BconvArgs, q_hat_inv) == 72);
    assert!(offset_of!(BconvArgs, q_hat_inv_shoup) == 80);
    assert!(offset_of!(BconvArgs, q_hat_mod_p) == 88);
    assert!(offset_of!(BconvArgs, epi_w) == 96);
    assert!(offset_of!(BconvArgs, epi_ws) == 104);
    assert!(offset_of!(BconvArgs, q_inv_f64) == 112);
    assert!(offset_of!(BconvArgs, q_mod_p) == 120);
    assert!(offset_of!(BconvArgs, from_count) == 128);
    assert!(offset_of!(BconvArgs, table_stride) == 132);
    assert!(offset_of!(BconvArgs, count) == 136);
    assert!(offset_of!(BconvArgs, flags) == 140);
    assert!(offset_of!(BconvArgs, copy_first) == 144);
    assert!(offset_of!(BconvArgs, group) == 148);
    assert!(offset_of!(BconvArgs, col) == 152);
    assert!(offset_of!(BconvArgs, out_limb) == 408);
};

/// Conversions of one polynomial each in one launch (`struct BconvMulti` in `bconv.cu`).
pub(super) const MAX_MULTI: usize = 5;

#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct BconvMulti {
    pub(super) a: [BconvArgs; MAX_MULTI],
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for BconvMulti {}

// The layout of `struct BconvMulti` in `kernels/bconv.cu`, which asserts the same numbers
// (`static_assert`): a field added, moved or resized on one side only fails the build.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<BconvMulti>() == 3320);
    assert!(align_of::<BconvMulti>() == 8);
    assert!(offset_of!(BconvMulti, a) == 0);
};

/// Launch arguments of `bconv_rescale_last` (`struct RescaleArgs`).
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct RescaleArgs {
    pub(super) n: u64,
    pub(super) in_stride: u64,
    pub(super) out_stride: u64,
    pub(super) input: u64,
    pub(super) out: u64,
    pub(super) moduli: u64,
    pub(super) inv: u64,
    pub(super) inv_shoup: u64,
    pub(super) half: u64,
    pub(super) level: u32,
    pub(super) pad: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for RescaleArgs {}

// The layout of `struct RescaleArgs` in `kernels/bconv.cu`, which asserts the same numbers
// (`static_assert`): a field added, moved or resized on one side only fails the build.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<RescaleArgs>() == 80);
    assert!(align_of::<RescaleArgs>() == 8);
    assert!(offset_of!(RescaleArgs, n) == 0);
    assert!(offset_of!(RescaleArgs, in_stride) == 8);
    assert!(offset_of!(RescaleArgs, out_stride) == 16);
    assert!(offset_of!(RescaleArgs, input) == 24);
    assert!(offset_of!(RescaleArgs, out) == 32);
    assert!(offset_of!(RescaleArgs, moduli) == 40);
    assert!(offset_of!(RescaleArgs, inv) == 48);
    assert!(offset_of!(RescaleArgs, inv_shoup) == 56);
    assert!(offset_of!(RescaleArgs, half) == 64);
    assert!(offset_of!(RescaleArgs, level) == 72);
    assert!(offset_of!(RescaleArgs, pad) == 76);
};

impl DeviceBaseConverter {
    /// The launch arguments of one plan chunk (at most [`MAX_PLAN`] entries).
    pub(super) fn args(
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
}
