//! Several sums of products sharing their right operands (`fused_sums_of_products` in
//! `kernels/fused.cu`): `out_{s,c} = Σ_t left_{s,t} ⊙ right_{t,c}` (`c = 0, 1`), each right
//! operand read once for all the sums. The giant steps of a baby-step giant-step linear
//! transform are such sums over the baby steps; one giant step at a time would read every baby
//! step once per giant step.
//!
//! Every word is the canonical residue of the exact sum, so it equals any other exact
//! evaluation (the host oracle: the per-term multiply-accumulate, `rhea`'s CPU
//! `sum_of_products`).

use cudarc::driver::{DeviceRepr, LaunchConfig};

use crate::buffer::DeviceBuffer;
use crate::elementwise::DeviceModuli;
use crate::error::{CudaError, Result};
use crate::fused::{check_dev, check_len, check_n, FUSED};
use crate::launch::{launch_dependent, param};

/// The most right operands one launch reads (more are accumulated by further launches).
pub const MAX_TERMS: usize = 16;
/// The most sums one launch writes (more take further launches).
pub const MAX_SUMS: usize = 4;

const THREADS: u32 = 256;

#[repr(C)]
#[derive(Clone, Copy)]
struct SumsArgs {
    n: u64,
    moduli: u64,
    terms: u32,
    sums: u32,
    accumulate: u32,
    pad: u32,
    right0: [u64; MAX_TERMS],
    right1: [u64; MAX_TERMS],
    left: [[u64; MAX_TERMS]; MAX_SUMS],
    out0: [u64; MAX_SUMS],
    out1: [u64; MAX_SUMS],
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for SumsArgs {}

// The layout of `struct SumsArgs` in `kernels/fused.cu`, which asserts the same numbers
// (`static_assert`): a field added, moved or resized on one side only fails the build.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<SumsArgs>() == 864);
    assert!(align_of::<SumsArgs>() == 8);
    assert!(offset_of!(SumsArgs, terms) == 16);
    assert!(offset_of!(SumsArgs, right0) == 32);
    assert!(offset_of!(SumsArgs, right1) == 160);
    assert!(offset_of!(SumsArgs, left) == 288);
    assert!(offset_of!(SumsArgs, out0) == 800);
    assert!(offset_of!(SumsArgs, out1) == 832);
};

/// `outs[s] = (Σ_t left[s][t] ⊙ right[t].0, Σ_t left[s][t] ⊙ right[t].1)` modulo row `i`'s
/// modulus on each of `rows` rows of `n` words (`left[s][t] = None`: the term is not in sum
/// `s`; a sum without terms is zero). Any number of terms and sums: launches of at most
/// [`MAX_TERMS`] × [`MAX_SUMS`], later term chunks adding to the earlier ones.
///
/// Errors: [`CudaError::Shape`] for short buffers, too few moduli or `left` rows that are not
/// `right.len()` long; [`CudaError::InvalidArgument`] for no terms, no sums, `outs` and `left`
/// of different lengths or a bad `n`; [`CudaError::DeviceMismatch`].
pub fn sums_of_products(
    moduli: &DeviceModuli,
    rows: usize,
    n: usize,
    right: &[(&DeviceBuffer, &DeviceBuffer)],
    left: &[Vec<Option<&DeviceBuffer>>],
    outs: &mut [(&mut DeviceBuffer, &mut DeviceBuffer)],
) -> Result<()> {
    check_n(n)?;
    if right.is_empty() || left.is_empty() || outs.len() != left.len() {
        return Err(CudaError::InvalidArgument(format!(
            "sums_of_products: {} right operands, {} sums, {} outputs",
            right.len(),
            left.len(),
            outs.len()
        )));
    }
    if rows == 0 || rows > 65535 || rows > moduli.len() {
        return Err(CudaError::Shape(format!(
            "sums_of_products: {rows} rows with {} moduli",
            moduli.len()
        )));
    }
    let dev = outs[0].0.device().clone();
    let words = rows * n;
    for (a, b) in right {
        for x in [*a, *b] {
            check_dev(&dev, x)?;
            check_len("a right operand", x, words)?;
        }
    }
    for row in left {
        if row.len() != right.len() {
            return Err(CudaError::Shape(format!(
                "sums_of_products: a sum of {} terms over {} right operands",
                row.len(),
                right.len()
            )));
        }
        for x in row.iter().flatten() {
            check_dev(&dev, x)?;
            check_len("a left operand", x, words)?;
        }
    }
    for (o0, o1) in outs.iter() {
        for x in [&**o0, &**o1] {
            check_dev(&dev, x)?;
            check_len("an output", x, words)?;
        }
    }
    let cfg = LaunchConfig {
        grid_dim: ((n / 2).div_ceil(THREADS as usize) as u32, rows as u32, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let f = dev.function(&FUSED, "fused_sums_of_products")?;
    for s0 in (0..left.len()).step_by(MAX_SUMS) {
        let s1 = (s0 + MAX_SUMS).min(left.len());
        for t0 in (0..right.len()).step_by(MAX_TERMS) {
            let t1 = (t0 + MAX_TERMS).min(right.len());
            let mut args = SumsArgs {
                n: n as u64,
                moduli: moduli.device_ptr(),
                terms: (t1 - t0) as u32,
                sums: (s1 - s0) as u32,
                accumulate: u32::from(t0 > 0),
                pad: 0,
                right0: [0; MAX_TERMS],
                right1: [0; MAX_TERMS],
                left: [[0; MAX_TERMS]; MAX_SUMS],
                out0: [0; MAX_SUMS],
                out1: [0; MAX_SUMS],
            };
            for (t, (a, b)) in right[t0..t1].iter().enumerate() {
                args.right0[t] = a.device_ptr();
                args.right1[t] = b.device_ptr();
            }
            for (s, row) in left[s0..s1].iter().enumerate() {
                for (t, x) in row[t0..t1].iter().enumerate() {
                    args.left[s][t] = x.map_or(0, |b| b.device_ptr());
                }
                args.out0[s] = outs[s0 + s].0.device_ptr();
                args.out1[s] = outs[s0 + s].1.device_ptr();
            }
            let mut params = [param(&args)];
            // SAFETY: the one parameter is `struct SumsArgs` by value (#[repr(C)] like its CUDA
            // twin), pointing to a local that lives across the call; every operand and output
            // holds `rows · n` words (checked), the outputs are distinct `&mut` buffers (so they
            // alias no operand), the moduli table holds `rows` records; all work is ordered on
            // the device's one stream, and before pdl_wait() the kernel reads only the moduli
            // table (a host upload).
            unsafe { launch_dependent(&dev, &f, cfg, &mut params)? };
        }
    }
    Ok(())
}
