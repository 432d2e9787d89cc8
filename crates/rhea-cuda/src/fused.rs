//! Fused kernels of the backend's key switching and rescaling (`kernels/fused.cu`), on
//! operands held in separate buffers, so that nothing is stacked or copied first.
//!
//! - [`ks_inner_product`]: `out_c = Σ_d digit_d ⊙ key_{d,c}` (`c = 0, 1`) in one launch, the
//!   digits and key polynomials passed as pointer lists (nothing stacked).
//! - [`sub_mul_scalar_assign`]: `y_i = (x_i − y_i) · w_i mod q_i` (the tail of ModDown and of
//!   the NTT-domain rescale).
//! - [`rescale_lift`]: the centred lift of one limb modulo `q_last` to each of `limbs` primes.
//! - [`tensor`]: the product of two 2-component ciphertexts before relinearisation
//!   `(a0 b0, a0 b1 + a1 b0, a1 b1)`, one pass.
//! - [`ks_inner_product_pair`]: [`ks_inner_product`] into one `[2][width][n]` buffer (what the
//!   fused ModDown of both halves reads).
//! - [`moddown_rows`]: `t_r = [t_r +] (x_r − y_r) · w mod q` on a few single limbs modulo one
//!   prime (the last limb of a ModDown in coefficient form, for the merged ModDown-rescale).
//!
//! Every result is the canonical residue of an exact expression, so it equals any other exact
//! evaluation word for word (the host oracles are `rhea_math`'s `ModDown`/`Rescaler` and the
//! per-term multiply-accumulate).
//!
//! Every kernel is launched with programmatic dependent launch (`launch.rs`): it starts
//! while the previous kernel drains and waits for it before it reads any operand buffer.

use std::sync::Arc;

use cudarc::driver::{DeviceRepr, LaunchConfig};

use crate::buffer::DeviceBuffer;
use crate::device::GpuDevice;
use crate::elementwise::DeviceModuli;
use crate::error::{CudaError, Result};
use crate::launch::{launch_dependent, param};
use crate::registry::{KernelSource, COMMON_CUH};

/// `kernels/fused.cu`.
pub const FUSED: KernelSource = KernelSource {
    name: "fused",
    source: include_str!("../kernels/fused.cu"),
    headers: &[COMMON_CUH],
};

/// The most digits [`ks_inner_product`] takes in one launch.
pub const MAX_DIGITS: usize = 16;

const THREADS: u32 = 256;

#[repr(C)]
#[derive(Clone, Copy)]
struct KsPtrArgs {
    n: u64,
    out0: u64,
    out1: u64,
    moduli: u64,
    add0: u64,
    add1: u64,
    count: u32,
    level: u32,
    q_full: u32,
    add_first: u32,
    digits: [u64; MAX_DIGITS],
    key_b: [u64; MAX_DIGITS],
    key_a: [u64; MAX_DIGITS],
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for KsPtrArgs {}

// The layout of `struct KsPtrArgs` in `kernels/fused.cu`, which asserts the same numbers
// (`static_assert`): a field added, moved or resized on one side only fails the build.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<KsPtrArgs>() == 448);
    assert!(align_of::<KsPtrArgs>() == 8);
    assert!(offset_of!(KsPtrArgs, n) == 0);
    assert!(offset_of!(KsPtrArgs, out0) == 8);
    assert!(offset_of!(KsPtrArgs, out1) == 16);
    assert!(offset_of!(KsPtrArgs, moduli) == 24);
    assert!(offset_of!(KsPtrArgs, add0) == 32);
    assert!(offset_of!(KsPtrArgs, add1) == 40);
    assert!(offset_of!(KsPtrArgs, count) == 48);
    assert!(offset_of!(KsPtrArgs, level) == 52);
    assert!(offset_of!(KsPtrArgs, q_full) == 56);
    assert!(offset_of!(KsPtrArgs, add_first) == 60);
    assert!(offset_of!(KsPtrArgs, digits) == 64);
    assert!(offset_of!(KsPtrArgs, key_b) == 192);
    assert!(offset_of!(KsPtrArgs, key_a) == 320);
};

#[repr(C)]
#[derive(Clone, Copy)]
struct SubMulArgs {
    n: u64,
    y: u64,
    x: u64,
    w: u64,
    moduli: u64,
    limbs: u32,
    mod_offset: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for SubMulArgs {}

// The layout of `struct SubMulArgs` in `kernels/fused.cu`, which asserts the same numbers
// (`static_assert`): a field added, moved or resized on one side only fails the build.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<SubMulArgs>() == 48);
    assert!(align_of::<SubMulArgs>() == 8);
    assert!(offset_of!(SubMulArgs, n) == 0);
    assert!(offset_of!(SubMulArgs, y) == 8);
    assert!(offset_of!(SubMulArgs, x) == 16);
    assert!(offset_of!(SubMulArgs, w) == 24);
    assert!(offset_of!(SubMulArgs, moduli) == 32);
    assert!(offset_of!(SubMulArgs, limbs) == 40);
    assert!(offset_of!(SubMulArgs, mod_offset) == 44);
};

#[repr(C)]
#[derive(Clone, Copy)]
struct LiftArgs {
    n: u64,
    out: u64,
    t: u64,
    moduli: u64,
    q_last: u64,
    limbs: u32,
    pad: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for LiftArgs {}

// The layout of `struct LiftArgs` in `kernels/fused.cu`, which asserts the same numbers
// (`static_assert`): a field added, moved or resized on one side only fails the build.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<LiftArgs>() == 48);
    assert!(align_of::<LiftArgs>() == 8);
    assert!(offset_of!(LiftArgs, n) == 0);
    assert!(offset_of!(LiftArgs, out) == 8);
    assert!(offset_of!(LiftArgs, t) == 16);
    assert!(offset_of!(LiftArgs, moduli) == 24);
    assert!(offset_of!(LiftArgs, q_last) == 32);
    assert!(offset_of!(LiftArgs, limbs) == 40);
    assert!(offset_of!(LiftArgs, pad) == 44);
};

pub(crate) fn check_n(n: usize) -> Result<()> {
    if n == 0 || n % 2 != 0 {
        return Err(CudaError::InvalidArgument(format!(
            "the ring degree must be even and positive, got {n}"
        )));
    }
    Ok(())
}

pub(crate) fn check_dev(dev: &Arc<GpuDevice>, b: &DeviceBuffer) -> Result<()> {
    if b.device().index() != dev.index() {
        return Err(CudaError::DeviceMismatch(dev.index(), b.device().index()));
    }
    Ok(())
}

pub(crate) fn check_len(what: &str, b: &DeviceBuffer, min: usize) -> Result<()> {
    if b.len() < min {
        return Err(CudaError::Shape(format!(
            "{what} has {} words, needs at least {min}",
            b.len()
        )));
    }
    Ok(())
}

fn grid(n: usize, rows: usize) -> Result<LaunchConfig> {
    if rows == 0 || rows > 65535 {
        return Err(CudaError::Shape(format!("{rows} limbs: not in 1..=65535")));
    }
    Ok(LaunchConfig {
        grid_dim: ((n / 2).div_ceil(THREADS as usize) as u32, rows as u32, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// The key-switching inner product at `level` active Q limbs over `Q_level ∪ P`:
/// `out0 = Σ_d digits[d] ⊙ keys[d].0`, `out1 = Σ_d digits[d] ⊙ keys[d].1`. Each digit is
/// `[level + p_len][n]`, each key polynomial `[q_full + p_len][n]` (full level: its first
/// `level` and last `p_len` limbs are read), the outputs `[level + p_len][n]`. `moduli` is the
/// full `Q ∪ P` list (`q_full + p_len` records). Every input word must be canonical. One launch.
///
/// Errors: [`CudaError::InvalidArgument`] for no digits, more than [`MAX_DIGITS`], fewer keys
/// than digits, a level above `q_full`, no output limb at all or a bad `n` (a level of 0 or no
/// `P` moduli are allowed: a slice of the basis held by one GPU of a group, whose limbs at a
/// low level may all be `P` limbs, or all `Q` limbs); [`CudaError::Shape`] for short
/// buffers; [`CudaError::DeviceMismatch`].
#[allow(clippy::too_many_arguments)]
pub fn ks_inner_product(
    moduli: &DeviceModuli,
    level: usize,
    q_full: usize,
    digits: &[&DeviceBuffer],
    keys: &[(&DeviceBuffer, &DeviceBuffer)],
    out0: &mut DeviceBuffer,
    out1: &mut DeviceBuffer,
    n: usize,
) -> Result<()> {
    let width = ks_width(moduli, level, q_full)?;
    check_dev(out0.device(), out1)?;
    check_len("out0", out0, width * n)?;
    check_len("out1", out1, width * n)?;
    let (p0, p1) = (out0.device_ptr(), out1.device_ptr());
    ks_launch(
        moduli,
        level,
        q_full,
        digits,
        keys,
        KsAddends::none(),
        out0.device(),
        p0,
        p1,
        n,
    )
}

/// [`ks_inner_product`] into one buffer `out` of `[2][width][n]` words (`width = level + p_len`):
/// `out_0` first, then `out_1`; each plus its addend when given (`adds[c]`, `[width][n]`
/// canonical words: `out_c = add_c + Σ_d digit_d ⊙ key_{d,c}`, the noise of a public-key
/// encryption before its ModDown).
///
/// Errors: those of [`ks_inner_product`], and [`CudaError::Shape`] for a short addend.
#[allow(clippy::too_many_arguments)]
pub fn ks_inner_product_pair(
    moduli: &DeviceModuli,
    level: usize,
    q_full: usize,
    digits: &[&DeviceBuffer],
    keys: &[(&DeviceBuffer, &DeviceBuffer)],
    adds: [Option<&DeviceBuffer>; 2],
    out: &mut DeviceBuffer,
    n: usize,
) -> Result<()> {
    let adds = KsAddends {
        bufs: adds.map(|a| a.map(|b| (b, 0))),
        first_limb: 0,
    };
    ks_inner_product_pair_with(moduli, level, q_full, digits, keys, adds, out, n)
}

/// The addends of [`ks_inner_product_pair_with`]: output limb `first_limb + j` (of either
/// half) gets limb `start + j` of its buffer `(buffer, start)`, for every `j` below
/// `width − first_limb`; the limbs below `first_limb` get none.
#[derive(Clone, Copy)]
pub struct KsAddends<'a> {
    /// Per half: the addend buffer and its limb for output limb `first_limb`, or none.
    pub bufs: [Option<(&'a DeviceBuffer, usize)>; 2],
    /// The first output limb with an addend.
    pub first_limb: usize,
}

impl KsAddends<'_> {
    /// No addends.
    pub fn none() -> Self {
        KsAddends {
            bufs: [None, None],
            first_limb: 0,
        }
    }
}

/// [`ks_inner_product_pair`] with addends on a tail of the limbs only, read from inside larger
/// buffers: with `adds.first_limb = level`, the `P` limbs alone (a public-key encryption whose
/// errors enter the `Q` limbs elsewhere). Canonical words.
///
/// Errors: those of [`ks_inner_product_pair`], and [`CudaError::Shape`] for a first limb
/// beyond `width` or an addend buffer too short for its limbs.
#[allow(clippy::too_many_arguments)]
pub fn ks_inner_product_pair_with(
    moduli: &DeviceModuli,
    level: usize,
    q_full: usize,
    digits: &[&DeviceBuffer],
    keys: &[(&DeviceBuffer, &DeviceBuffer)],
    adds: KsAddends<'_>,
    out: &mut DeviceBuffer,
    n: usize,
) -> Result<()> {
    let width = ks_width(moduli, level, q_full)?;
    check_len("out", out, 2 * width * n)?;
    let p0 = out.device_ptr();
    let p1 = p0 + (width * n * 8) as u64;
    ks_launch(
        moduli,
        level,
        q_full,
        digits,
        keys,
        adds,
        out.device(),
        p0,
        p1,
        n,
    )
}

/// `level + p_len` after checking the level against the moduli.
fn ks_width(moduli: &DeviceModuli, level: usize, q_full: usize) -> Result<usize> {
    let full = moduli.len();
    if q_full > full || level > q_full || level + full - q_full == 0 {
        return Err(CudaError::InvalidArgument(format!(
            "level {level} with |Q| = {q_full} and {full} moduli"
        )));
    }
    Ok(level + full - q_full)
}

/// The launch of [`ks_inner_product`] on checked outputs at `out0`, `out1`.
#[allow(clippy::too_many_arguments)]
fn ks_launch(
    moduli: &DeviceModuli,
    level: usize,
    q_full: usize,
    digits: &[&DeviceBuffer],
    keys: &[(&DeviceBuffer, &DeviceBuffer)],
    adds: KsAddends<'_>,
    dev: &Arc<GpuDevice>,
    out0: u64,
    out1: u64,
    n: usize,
) -> Result<()> {
    check_n(n)?;
    let count = digits.len();
    if count == 0 || count > MAX_DIGITS || keys.len() < count {
        return Err(CudaError::InvalidArgument(format!(
            "{count} digits and {} keys (1..={MAX_DIGITS} digits, a key per digit)",
            keys.len()
        )));
    }
    let width = ks_width(moduli, level, q_full)?;
    let full = moduli.len();
    let dev = dev.clone();
    let mut args = KsPtrArgs {
        n: n as u64,
        out0,
        out1,
        moduli: moduli.device_ptr(),
        add0: 0,
        add1: 0,
        count: count as u32,
        level: level as u32,
        q_full: q_full as u32,
        add_first: adds.first_limb as u32,
        digits: [0; MAX_DIGITS],
        key_b: [0; MAX_DIGITS],
        key_a: [0; MAX_DIGITS],
    };
    for (d, (x, (b, a))) in digits.iter().zip(keys).enumerate() {
        for (buf, min) in [(*x, width * n), (*b, full * n), (*a, full * n)] {
            check_dev(&dev, buf)?;
            check_len("a key-switching operand", buf, min)?;
        }
        args.digits[d] = x.device_ptr();
        args.key_b[d] = b.device_ptr();
        args.key_a[d] = a.device_ptr();
    }
    if adds.first_limb >= width && adds.bufs.iter().any(Option::is_some) {
        return Err(CudaError::Shape(format!(
            "inner-product addends from limb {} of {width}",
            adds.first_limb
        )));
    }
    for (c, add) in adds.bufs.iter().enumerate() {
        if let Some((x, start)) = add {
            check_dev(&dev, x)?;
            let limbs = width - adds.first_limb;
            check_len("an inner-product addend", x, (start + limbs) * n)?;
            let p = x.device_ptr() + (start * n * 8) as u64;
            if c == 0 {
                args.add0 = p;
            } else {
                args.add1 = p;
            }
        }
    }
    let cfg = grid(n, width)?;
    let f = dev.function(&FUSED, "fused_ks_inner_product")?;
    let mut params = [param(&args)];
    // SAFETY: the one parameter is `struct KsPtrArgs` by value (#[repr(C)] like its CUDA twin),
    // pointing to a local that lives across the call; every buffer was checked to hold the words
    // the kernel reads or writes (`width` rows of `n`, key rows below `full`, each addend's
    // `width - add_first` rows from its start limb), the moduli table
    // holds `full` records; all work is ordered on the device's one stream, and before
    // pdl_wait() the kernel reads only the moduli table (a host upload).
    unsafe { launch_dependent(&dev, &f, cfg, &mut params) }
}

/// `y_i = (x_i − y_i) · w_i mod q_i` for the first `limbs` limbs (`[limbs][n]`; `x` may be
/// longer, only its first `limbs · n` words are read). `w` is a device table `[limbs][2]` of
/// `(w_i, shoup(w_i))` with `w_i < q_i`; limb `i` uses modulus `mod_offset + i` of `moduli`.
///
/// Errors: [`CudaError::Shape`] for short buffers or tables; [`CudaError::DeviceMismatch`].
pub fn sub_mul_scalar_assign(
    y: &mut DeviceBuffer,
    x: &DeviceBuffer,
    w: &DeviceBuffer,
    moduli: &DeviceModuli,
    mod_offset: usize,
    limbs: usize,
    n: usize,
) -> Result<()> {
    check_n(n)?;
    let dev = y.device().clone();
    check_dev(&dev, x)?;
    check_dev(&dev, w)?;
    check_len("y", y, limbs * n)?;
    check_len("x", x, limbs * n)?;
    check_len("the scalar table", w, 2 * limbs)?;
    if mod_offset + limbs > moduli.len() {
        return Err(CudaError::Shape(format!(
            "moduli {mod_offset}..{} of {}",
            mod_offset + limbs,
            moduli.len()
        )));
    }
    let args = SubMulArgs {
        n: n as u64,
        y: y.device_ptr(),
        x: x.device_ptr(),
        w: w.device_ptr(),
        moduli: moduli.device_ptr(),
        limbs: limbs as u32,
        mod_offset: mod_offset as u32,
    };
    let cfg = grid(n, limbs)?;
    let f = dev.function(&FUSED, "fused_sub_mul_scalar")?;
    let mut params = [param(&args)];
    // SAFETY: the one parameter is `struct SubMulArgs` by value (#[repr(C)] like its CUDA twin),
    // pointing to a local that lives across the call; `x`, `y` hold `limbs · n` words, `w` holds
    // `2 · limbs`, the moduli table `mod_offset + limbs` records; one ordered stream, and before
    // pdl_wait() the kernel reads only the moduli table (a host upload; `w` after it).
    unsafe { launch_dependent(&dev, &f, cfg, &mut params) }
}

/// `out_i = [c]_{q_i}` for `i < limbs`, word by word, where `c ∈ [−⌊q_last/2⌋, ⌊q_last/2⌋]`
/// is the centred representative of the word of `t` (`[n]`, canonical modulo the odd
/// `q_last`); limb `i` uses modulus `i` of `moduli`. `out` is `[limbs][n]`.
///
/// Errors: [`CudaError::Shape`] for short buffers; [`CudaError::DeviceMismatch`].
pub fn rescale_lift(
    out: &mut DeviceBuffer,
    t: &DeviceBuffer,
    q_last: u64,
    moduli: &DeviceModuli,
    limbs: usize,
    n: usize,
) -> Result<()> {
    check_n(n)?;
    let dev = out.device().clone();
    check_dev(&dev, t)?;
    check_len("out", out, limbs * n)?;
    check_len("t", t, n)?;
    if limbs > moduli.len() {
        return Err(CudaError::Shape(format!(
            "{limbs} limbs but {} moduli",
            moduli.len()
        )));
    }
    let args = LiftArgs {
        n: n as u64,
        out: out.device_ptr(),
        t: t.device_ptr(),
        moduli: moduli.device_ptr(),
        q_last,
        limbs: limbs as u32,
        pad: 0,
    };
    let cfg = grid(n, limbs)?;
    let f = dev.function(&FUSED, "fused_rescale_lift")?;
    let mut params = [param(&args)];
    // SAFETY: the one parameter is `struct LiftArgs` by value (#[repr(C)] like its CUDA twin),
    // pointing to a local that lives across the call; `out` holds `limbs · n` words, `t` holds
    // `n`, the moduli table `limbs` records or more; one ordered stream, and before pdl_wait()
    // the kernel reads only the moduli table (a host upload).
    unsafe { launch_dependent(&dev, &f, cfg, &mut params) }
}

/// The most limbs one [`rescale_lift_many`] launch lifts (more take further launches).
pub const MAX_LIFTS: usize = 16;

#[repr(C)]
#[derive(Clone, Copy)]
struct LiftManyArgs {
    n: u64,
    moduli: u64,
    q_last: u64,
    limbs: u32,
    count: u32,
    out: [u64; MAX_LIFTS],
    t: [u64; MAX_LIFTS],
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for LiftManyArgs {}

// The layout of `struct LiftManyArgs` in `kernels/fused.cu`, which asserts the same numbers.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<LiftManyArgs>() == 288);
    assert!(align_of::<LiftManyArgs>() == 8);
    assert!(offset_of!(LiftManyArgs, q_last) == 16);
    assert!(offset_of!(LiftManyArgs, count) == 28);
    assert!(offset_of!(LiftManyArgs, out) == 32);
    assert!(offset_of!(LiftManyArgs, t) == 160);
};

/// [`rescale_lift`] of many limbs: `outs[j]` (`[limbs][n]`) receives the lift of `ts[j]`
/// (`[n]`), [`MAX_LIFTS`] of them a launch — the same words as one [`rescale_lift`] each.
///
/// Errors: [`CudaError::Shape`] for lists of different lengths, short buffers, or more limbs
/// than moduli; [`CudaError::DeviceMismatch`].
pub fn rescale_lift_many(
    outs: &mut [&mut DeviceBuffer],
    ts: &[&DeviceBuffer],
    q_last: u64,
    moduli: &DeviceModuli,
    limbs: usize,
    n: usize,
) -> Result<()> {
    check_n(n)?;
    if outs.len() != ts.len() {
        return Err(CudaError::Shape(format!(
            "{} outputs for {} lifted limbs",
            outs.len(),
            ts.len()
        )));
    }
    if limbs > moduli.len() {
        return Err(CudaError::Shape(format!(
            "{limbs} limbs but {} moduli",
            moduli.len()
        )));
    }
    let Some(first) = outs.first() else {
        return Ok(());
    };
    let dev = first.device().clone();
    for (out, t) in outs.iter().zip(ts) {
        check_dev(&dev, out)?;
        check_dev(&dev, t)?;
        check_len("out", out, limbs * n)?;
        check_len("t", t, n)?;
    }
    let f = dev.function(&FUSED, "fused_rescale_lift_many")?;
    for (outs, ts) in outs.chunks_mut(MAX_LIFTS).zip(ts.chunks(MAX_LIFTS)) {
        let mut args = LiftManyArgs {
            n: n as u64,
            moduli: moduli.device_ptr(),
            q_last,
            limbs: limbs as u32,
            count: outs.len() as u32,
            out: [0; MAX_LIFTS],
            t: [0; MAX_LIFTS],
        };
        for (j, (o, t)) in outs.iter().zip(ts).enumerate() {
            args.out[j] = o.device_ptr();
            args.t[j] = t.device_ptr();
        }
        let mut cfg = grid(n, limbs)?;
        cfg.grid_dim.2 = outs.len() as u32;
        let mut params = [param(&args)];
        // SAFETY: the one parameter is `struct LiftManyArgs` by value (#[repr(C)] like its CUDA
        // twin), pointing to a local that lives across the call; each of the `count` outputs
        // holds `limbs · n` words and each input `n` (checked above), the moduli table `limbs`
        // records or more; the grid's z covers exactly `count`; one ordered stream, and before
        // pdl_wait() the kernel reads only the moduli table (a host upload).
        unsafe { launch_dependent(&dev, &f, cfg, &mut params)? };
    }
    Ok(())
}

#[repr(C)]
#[derive(Clone, Copy)]
struct TensorArgs {
    n: u64,
    a0: u64,
    a1: u64,
    b0: u64,
    b1: u64,
    d0: u64,
    d1: u64,
    d2: u64,
    moduli: u64,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for TensorArgs {}

// The layout of `struct TensorArgs` in `kernels/fused.cu`, which asserts the same numbers
// (`static_assert`): a field added, moved or resized on one side only fails the build.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<TensorArgs>() == 72);
    assert!(align_of::<TensorArgs>() == 8);
    assert!(offset_of!(TensorArgs, n) == 0);
    assert!(offset_of!(TensorArgs, a0) == 8);
    assert!(offset_of!(TensorArgs, a1) == 16);
    assert!(offset_of!(TensorArgs, b0) == 24);
    assert!(offset_of!(TensorArgs, b1) == 32);
    assert!(offset_of!(TensorArgs, d0) == 40);
    assert!(offset_of!(TensorArgs, d1) == 48);
    assert!(offset_of!(TensorArgs, d2) == 56);
    assert!(offset_of!(TensorArgs, moduli) == 64);
};

/// The tensor product of two 2-component ciphertexts over `limbs` limbs (`[limbs][n]` each,
/// limb `i` modulo `moduli[i]`): `d0 = a0·b0`, `d1 = a0·b1 + a1·b0`, `d2 = a1·b1` (element-wise,
/// canonical), one pass. `a` and `b` may be the same ciphertext (squaring).
///
/// Errors: [`CudaError::Shape`] for short buffers or too few moduli;
/// [`CudaError::DeviceMismatch`]; [`CudaError::InvalidArgument`] for a bad `n`.
#[allow(clippy::too_many_arguments)]
pub fn tensor(
    a: [&DeviceBuffer; 2],
    b: [&DeviceBuffer; 2],
    d: [&mut DeviceBuffer; 3],
    moduli: &DeviceModuli,
    limbs: usize,
    n: usize,
) -> Result<()> {
    check_n(n)?;
    let [d0, d1, d2] = d;
    let dev = d0.device().clone();
    for x in a.iter().chain(b.iter()) {
        check_dev(&dev, x)?;
        check_len("a tensor input", x, limbs * n)?;
    }
    for x in [&*d0, &*d1, &*d2] {
        check_dev(&dev, x)?;
        check_len("a tensor output", x, limbs * n)?;
    }
    if limbs > moduli.len() {
        return Err(CudaError::Shape(format!(
            "{limbs} limbs with {} moduli",
            moduli.len()
        )));
    }
    let args = TensorArgs {
        n: n as u64,
        a0: a[0].device_ptr(),
        a1: a[1].device_ptr(),
        b0: b[0].device_ptr(),
        b1: b[1].device_ptr(),
        d0: d0.device_ptr(),
        d1: d1.device_ptr(),
        d2: d2.device_ptr(),
        moduli: moduli.device_ptr(),
    };
    let cfg = grid(n, limbs)?;
    let f = dev.function(&FUSED, "fused_tensor")?;
    let mut params = [param(&args)];
    // SAFETY: the one parameter is `struct TensorArgs` by value (#[repr(C)] like its CUDA twin),
    // pointing to a local that lives across the call; the four inputs and three outputs hold
    // `limbs · n` words each (checked; outputs are distinct `&mut` buffers, so they do not alias
    // each other or the inputs), the moduli table holds `limbs` records; all work is ordered on
    // the device's one stream, and before pdl_wait() the kernel reads only the moduli table (a
    // host upload).
    unsafe { launch_dependent(&dev, &f, cfg, &mut params) }
}

/// The most rows [`moddown_rows`] takes.
pub const MAX_MODDOWN_ROWS: usize = 4;

#[repr(C)]
#[derive(Clone, Copy)]
struct ModDownRowsArgs {
    n: u64,
    q: u64,
    w: u64,
    w_shoup: u64,
    rows: u32,
    add_mask: u32,
    t: [u64; MAX_MODDOWN_ROWS],
    x: [u64; MAX_MODDOWN_ROWS],
    y: [u64; MAX_MODDOWN_ROWS],
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for ModDownRowsArgs {}

// The layout of `struct ModDownRowsArgs` in `kernels/fused.cu`, which asserts the same numbers
// (`static_assert`): a field added, moved or resized on one side only fails the build.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<ModDownRowsArgs>() == 136);
    assert!(align_of::<ModDownRowsArgs>() == 8);
    assert!(offset_of!(ModDownRowsArgs, n) == 0);
    assert!(offset_of!(ModDownRowsArgs, q) == 8);
    assert!(offset_of!(ModDownRowsArgs, w) == 16);
    assert!(offset_of!(ModDownRowsArgs, w_shoup) == 24);
    assert!(offset_of!(ModDownRowsArgs, rows) == 32);
    assert!(offset_of!(ModDownRowsArgs, add_mask) == 36);
    assert!(offset_of!(ModDownRowsArgs, t) == 40);
    assert!(offset_of!(ModDownRowsArgs, x) == 72);
    assert!(offset_of!(ModDownRowsArgs, y) == 104);
};

/// One limb of a device buffer: words `limb · n .. (limb + 1) · n` of `buf`.
#[derive(Clone, Copy, Debug)]
pub struct Limb<'a> {
    /// The buffer.
    pub buf: &'a DeviceBuffer,
    /// The limb's index in it.
    pub limb: usize,
}

/// For each row `r < rows.len()` (at most [`MAX_MODDOWN_ROWS`]):
/// `t_r = [t_r +] (x_r − y_r) · w mod q`, where `t` is `[rows][n]`, `x_r`, `y_r` are single
/// limbs (canonical modulo `q`), `w < q`, and `t_r` is added when `rows[r].2` is true (else only
/// written). The last limb of a ModDown in coefficient form:
/// `INTT(c) + (INTT(x) − conv(INTT(x_P))) · P^{-1}`.
///
/// Errors: [`CudaError::Shape`] for short buffers or a bad row count;
/// [`CudaError::DeviceMismatch`]; [`CudaError::InvalidArgument`] for `w ≥ q`.
pub fn moddown_rows(
    t: &mut DeviceBuffer,
    rows: &[(Limb<'_>, Limb<'_>, bool)],
    q: rhea_math::Modulus,
    w: u64,
    n: usize,
) -> Result<()> {
    check_n(n)?;
    let dev = t.device().clone();
    if rows.is_empty() || rows.len() > MAX_MODDOWN_ROWS {
        return Err(CudaError::Shape(format!(
            "{} rows: not in 1..={MAX_MODDOWN_ROWS}",
            rows.len()
        )));
    }
    if w >= q.value() {
        return Err(CudaError::InvalidArgument(format!(
            "factor {w} is not below the modulus {}",
            q.value()
        )));
    }
    check_len("t", t, rows.len() * n)?;
    let mut args = ModDownRowsArgs {
        n: n as u64,
        q: q.value(),
        w,
        w_shoup: q.shoup(w),
        rows: rows.len() as u32,
        add_mask: 0,
        t: [0; MAX_MODDOWN_ROWS],
        x: [0; MAX_MODDOWN_ROWS],
        y: [0; MAX_MODDOWN_ROWS],
    };
    for (r, (x, y, add)) in rows.iter().enumerate() {
        for (what, l) in [("x", x), ("y", y)] {
            check_dev(&dev, l.buf)?;
            check_len(what, l.buf, (l.limb + 1) * n)?;
        }
        args.t[r] = t.device_ptr() + (r * n * 8) as u64;
        args.x[r] = x.buf.device_ptr() + (x.limb * n * 8) as u64;
        args.y[r] = y.buf.device_ptr() + (y.limb * n * 8) as u64;
        if *add {
            args.add_mask |= 1 << r;
        }
    }
    let cfg = grid(n, rows.len())?;
    let f = dev.function(&FUSED, "fused_moddown_rows")?;
    let mut params = [param(&args)];
    // SAFETY: the one parameter is `struct ModDownRowsArgs` by value (#[repr(C)] like its CUDA
    // twin), pointing to a local that lives across the call; `t` holds `rows · n` words and every
    // `x`, `y` limb lies inside its buffer (checked); `t` is `&mut`, so it aliases no `x`, `y`;
    // one ordered stream, and the kernel touches no memory before pdl_wait().
    unsafe { launch_dependent(&dev, &f, cfg, &mut params) }
}
