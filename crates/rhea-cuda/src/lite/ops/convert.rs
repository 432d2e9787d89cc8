//! The centred base conversion of the all-data mode (`lite_ops_bconv`): [`LiteConverter`] and
//! [`convert_centered`].

use super::*;

/// A `rhea_math` [`BaseConverter`]'s tables on the device, for [`convert_centered`].
#[derive(Debug)]
pub struct LiteConverter {
    from_mods: Arc<DeviceModuli>,
    to_mods: Arc<DeviceModuli>,
    /// `[q̂_i^{-1}]_{q_i}` (L), `1/q_i` as f64 bits (L), `[q̂_i]_{p_j}` at `i·K + j` (L·K),
    /// `[Q]_{p_j}` (K).
    consts: DeviceBuffer,
}

impl LiteConverter {
    /// Uploads `conv`'s tables.
    ///
    /// Errors: [`CudaError::InvalidArgument`] for a source basis of more than
    /// [`MAX_CONVERT_INPUTS`] moduli.
    pub fn new(dev: &Arc<GpuDevice>, conv: &BaseConverter) -> Result<Self> {
        let (l, k) = (conv.from().len(), conv.to().len());
        if l == 0 || l > MAX_CONVERT_INPUTS || k == 0 {
            return Err(CudaError::InvalidArgument(format!(
                "a centred conversion from {l} to {k} moduli (1..={MAX_CONVERT_INPUTS} inputs, \
                 at least one target)"
            )));
        }
        let mut consts = Vec::with_capacity(2 * l + l * k + k);
        consts.extend_from_slice(conv.from().q_hat_inv_mod_q());
        consts.extend(conv.q_inv_f64().iter().map(|x| x.to_bits()));
        consts.extend_from_slice(conv.q_hat_mod_p());
        consts.extend_from_slice(conv.q_mod_p());
        Ok(LiteConverter {
            from_mods: DeviceModuli::new(dev, conv.from().moduli())?,
            to_mods: DeviceModuli::new(dev, conv.to().moduli())?,
            consts: dev.upload(&consts)?,
        })
    }

    /// The number of source moduli `L`.
    pub fn from_len(&self) -> usize {
        self.from_mods.len()
    }

    /// The number of target moduli `K`.
    pub fn to_len(&self) -> usize {
        self.to_mods.len()
    }

    /// The device the tables live on.
    pub fn device(&self) -> &Arc<GpuDevice> {
        self.consts.device()
    }
}

/// Launch arguments of `lite_ops_convert` (`struct LiteConvArgs`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct ConvArgs {
    input: u64,
    out: u64,
    from_mods: u64,
    to_mods: u64,
    qhat_inv: u64,
    q_inv: u64,
    qhat_mod_p: u64,
    q_mod_p: u64,
    targets: u64,
    from_len: u32,
    to_len: u32,
    ntargets: u32,
    log_n: u32,
    flags: u32,
    pad: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for ConvArgs {}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<ConvArgs>() == 96);
    assert!(offset_of!(ConvArgs, from_len) == 72);
    assert!(offset_of!(ConvArgs, flags) == 88);
};

/// Threads per block of the conversion for `l` inputs: the `t_i` of two coefficients per thread
/// (`16·l` bytes) fit in [`CONVERT_SHARED_BYTES`]; a power of two from 32 to 256.
pub(super) fn convert_threads(l: usize) -> u32 {
    let t = (CONVERT_SHARED_BYTES / (16 * l.max(1))).clamp(32, 256);
    1 << t.ilog2()
}

/// `BaseConverter::convert_centered_rows`: `input` = `from_len` rows of `n` words (coefficient
/// form, canonical, from the `Src`'s offset); `targets` pairs `(j, row)`: output row `row` of
/// `out` (from its offset) receives target `j`, word for word. The input may overlap the
/// output (each thread reads its coefficient pair of every input row before it writes).
///
/// Errors: [`CudaError::InvalidArgument`] for a target index `j ≥ to_len`, an output row named
/// twice, `n` not a power of two ≥ 2, an odd offset, a protected operand not in
/// [`LiteForm::Encrypted`], or buffers on another device; [`CudaError::Shape`] for an input
/// shorter than `from_len · n` words or an output row beyond the output.
pub fn convert_centered(
    session: &LiteSession,
    conv: &LiteConverter,
    input: Src,
    out: Dst,
    targets: &[(usize, usize)],
    n: usize,
) -> Result<()> {
    if !n.is_power_of_two() || n < 2 {
        return Err(CudaError::InvalidArgument(format!(
            "a centred conversion of N = {n} (a power of two ≥ 2)"
        )));
    }
    let dev = conv.device();
    let o = out.view("convert_centered (out)", dev)?;
    let l = conv.from_len();
    let in_words = l
        .checked_mul(n)
        .ok_or_else(|| CudaError::Shape(format!("{l} rows of {n} words overflow")))?;
    let vi = input.view("convert_centered (input)", dev, &o)?;
    need("convert_centered (input)", &vi, in_words)?;
    let mut seen = std::collections::HashSet::new();
    let mut tg = Vec::with_capacity(2 * targets.len());
    for &(j, row) in targets {
        if j >= conv.to_len() {
            return Err(CudaError::InvalidArgument(format!(
                "convert_centered: target index {j} outside 0..{}",
                conv.to_len()
            )));
        }
        if !seen.insert(row) {
            return Err(CudaError::InvalidArgument(format!(
                "convert_centered: output row {row} named twice"
            )));
        }
        let end = row
            .checked_add(1)
            .and_then(|r| r.checked_mul(n))
            .ok_or_else(|| CudaError::Shape(format!("output row {row} overflows")))?;
        need("convert_centered (out)", &o, end)?;
        tg.push(j as u64);
        tg.push(row as u64);
    }
    if targets.is_empty() {
        return Ok(());
    }
    let tg = dev.upload(&tg)?;
    let k = conv.to_len();
    let c = conv.consts.device_ptr();
    let args = ConvArgs {
        input: vi.ptr,
        out: o.ptr,
        from_mods: conv.from_mods.device_ptr(),
        to_mods: conv.to_mods.device_ptr(),
        qhat_inv: c,
        q_inv: c + 8 * l as u64,
        qhat_mod_p: c + 16 * l as u64,
        q_mod_p: c + 8 * (2 * l + l * k) as u64,
        targets: tg.device_ptr(),
        from_len: l as u32,
        to_len: k as u32,
        ntargets: targets.len() as u32,
        log_n: n.trailing_zeros(),
        flags: u32::from(o.protected) | u32::from(vi.protected) << 1,
        pad: 0,
    };
    let threads = convert_threads(l);
    let pairs = n / 2;
    let blocks = pairs
        .div_ceil(threads as usize)
        .clamp(1, dev.multiprocessor_count().max(1) as usize * 8);
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: (16 * l * threads as usize) as u32,
    };
    launch_keyed_source(dev, session, &LITE_OPS, "lite_ops_convert", cfg, &args)
}
