//! Launching LITE's kernels, and its test kernels: XTS and ECB on the device, and the memory
//! form through each entry point.

use super::*;

// ---- launches ----------------------------------------------------------------------------------

pub(super) fn grid_stride(dev: &GpuDevice, items: usize) -> LaunchConfig {
    let blocks = items.div_ceil(THREADS as usize).clamp(
        1,
        (dev.multiprocessor_count().max(1) as usize) * BLOCKS_PER_SM,
    );
    LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

pub(super) fn one_per_thread(items: usize) -> Result<LaunchConfig> {
    let blocks = items.next_multiple_of(32).div_ceil(THREADS as usize).max(1);
    if blocks > i32::MAX as usize {
        return Err(CudaError::Shape(format!("{items} items exceed one launch")));
    }
    Ok(LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    })
}

pub(super) fn checked_name(name: String) -> Result<&'static str> {
    LITE_KERNEL_NAMES
        .iter()
        .copied()
        .find(|n| *n == name)
        .ok_or_else(|| {
            CudaError::InvalidArgument(format!(
                "the LITE kernel variant `{name}` is not instantiated in kernels/lite.cu"
            ))
        })
}

/// Launches a LITE kernel with the session's keys and `args` (its two parameters).
pub(super) fn launch_keyed<A: DeviceRepr>(
    dev: &Arc<GpuDevice>,
    session: &LiteSession,
    kernel: &str,
    cfg: LaunchConfig,
    args: &A,
) -> Result<()> {
    launch_keyed_source(dev, session, &LITE, kernel, cfg, args)
}

/// Launches kernel `kernel` of `source` (a LITE module: its kernels take `(const LiteKeys,
/// const Args)`) with the session's keys and `args`.
pub(super) fn launch_keyed_source<A: DeviceRepr>(
    dev: &Arc<GpuDevice>,
    session: &LiteSession,
    source: &'static KernelSource,
    kernel: &str,
    cfg: LaunchConfig,
    args: &A,
) -> Result<()> {
    let f = dev.function(source, kernel)?;
    let mut params = [param(session.schedules()), param(args)];
    // SAFETY: the kernel's parameters are `const LiteKeys` (the #[repr(C)] KeySchedules, 528
    // bytes) and its argument struct (#[repr(C)] twin of the CUDA struct, layouts asserted on
    // both sides), pointing to values that live across the call; every caller checked that the
    // buffers the arguments name hold the words the kernel touches; all work is ordered on the
    // device's one stream and the kernels touch no operand before pdl_wait().
    unsafe { launch_dependent(dev, &f, cfg, &mut params) }
}

/// Launches a plain kernel (no keys) with `args`.
pub(super) fn launch_plain<A: DeviceRepr>(
    dev: &Arc<GpuDevice>,
    kernel: &str,
    cfg: LaunchConfig,
    args: &A,
) -> Result<()> {
    let f = dev.function(&LITE, kernel)?;
    let mut params = [param(args)];
    // SAFETY: as in launch_keyed, for a kernel whose one parameter is the argument struct.
    unsafe { launch_dependent(dev, &f, cfg, &mut params) }
}

/// Launch arguments of the test kernels `lite_test_xts` / `lite_test_ecb` (`struct XtsTestArgs`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct XtsTestArgs {
    data: u64,
    tweaks: u64,
    blocks: u64,
    unit_blocks: u32,
    decrypt: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for XtsTestArgs {}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<XtsTestArgs>() == 32);
    assert!(offset_of!(XtsTestArgs, blocks) == 16);
    assert!(offset_of!(XtsTestArgs, unit_blocks) == 24);
    assert!(offset_of!(XtsTestArgs, decrypt) == 28);
};

/// XTS-AES-128 on the device, in place (test kernel `lite_test_xts`): `data` holds data units of
/// `unit_bytes` bytes (a positive multiple of 16), unit `u` with tweak value `tweaks[u]`; the
/// bytes of the units are the words' little-endian bytes in order.
///
/// Errors: [`CudaError::InvalidArgument`] for a bad unit size; [`CudaError::Shape`] when `data`
/// does not hold `tweaks.len()` units.
pub fn xts_on_device(
    session: &LiteSession,
    data: &mut DeviceBuffer,
    unit_bytes: usize,
    tweaks: &[u128],
    dir: Direction,
) -> Result<()> {
    if unit_bytes == 0 || unit_bytes % 16 != 0 || unit_bytes / 16 > u32::MAX as usize {
        return Err(CudaError::InvalidArgument(format!(
            "an XTS data unit of {unit_bytes} bytes (a positive multiple of 16)"
        )));
    }
    let blocks = tweaks.len() * unit_bytes / 16;
    if data.len() != 2 * blocks {
        return Err(CudaError::Shape(format!(
            "{} units of {unit_bytes} bytes need {} words; the buffer has {}",
            tweaks.len(),
            2 * blocks,
            data.len()
        )));
    }
    if blocks == 0 {
        return Ok(());
    }
    let dev = data.device().clone();
    let tw: Vec<u64> = tweaks
        .iter()
        .flat_map(|&t| [t as u64, (t >> 64) as u64])
        .collect();
    let tw = dev.upload(&tw)?;
    let args = XtsTestArgs {
        data: data.device_ptr(),
        tweaks: tw.device_ptr(),
        blocks: blocks as u64,
        unit_blocks: (unit_bytes / 16) as u32,
        decrypt: u32::from(dir == Direction::Decrypt),
    };
    launch_keyed(
        &dev,
        session,
        "lite_test_xts",
        grid_stride(&dev, blocks),
        &args,
    )?;
    dev.synchronize()
}

/// AES-128 ECB with key 1 on the device, in place, every 16-byte block of `data` (test kernel
/// `lite_test_ecb`, for the FIPS-197 known answers).
///
/// Errors: [`CudaError::Shape`] for an odd number of words.
pub fn ecb_on_device(session: &LiteSession, data: &mut DeviceBuffer, dir: Direction) -> Result<()> {
    if data.len() % 2 != 0 {
        return Err(CudaError::Shape(format!(
            "AES blocks are two words; the buffer has {}",
            data.len()
        )));
    }
    let dev = data.device().clone();
    let blocks = data.len() / 2;
    if blocks == 0 {
        return Ok(());
    }
    let args = XtsTestArgs {
        data: data.device_ptr(),
        tweaks: 0,
        blocks: blocks as u64,
        unit_blocks: 1,
        decrypt: u32::from(dir == Direction::Decrypt),
    };
    launch_keyed(
        &dev,
        session,
        "lite_test_ecb",
        grid_stride(&dev, blocks),
        &args,
    )
}

/// An entry point of the device library, for [`transcode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryPoint {
    /// `lite_encrypt<u32>` / `lite_decrypt<u32>`: four lanes per 16-byte block.
    Word32 {
        /// The shuffle mask from `__ballot_sync` (else the full mask: every lane calls).
        masked: bool,
    },
    /// `lite_encrypt<u64>` / `lite_decrypt<u64>`: two lanes per 16-byte block.
    Word64 {
        /// The shuffle mask from `__ballot_sync` (else the full mask: every lane calls).
        masked: bool,
    },
    /// `lite_encrypt_v4` / `lite_decrypt_v4`: one 16-byte block per thread.
    V4,
}

impl EntryPoint {
    /// Bytes of one item (the word the entry point moves per thread).
    pub fn item_bytes(self) -> usize {
        match self {
            EntryPoint::Word32 { .. } => 4,
            EntryPoint::Word64 { .. } => 8,
            EntryPoint::V4 => 16,
        }
    }

    /// The u64 words of device buffer that a [`transcode`] of `items` items reads and writes:
    /// whole blocks, and with the full mask whole warps (every lane of the last warp calls).
    pub fn buffer_words(self, items: usize) -> usize {
        let per_warp = match self {
            EntryPoint::Word32 { masked: false } | EntryPoint::Word64 { masked: false } => 32,
            EntryPoint::Word32 { masked: true } => 4,
            EntryPoint::Word64 { masked: true } => 2,
            EntryPoint::V4 => 1,
        };
        (items.next_multiple_of(per_warp) * self.item_bytes()).div_ceil(8)
    }

    pub(super) fn kernel(self, dir: Direction) -> String {
        let d = match dir {
            Direction::Encrypt => "encrypt",
            Direction::Decrypt => "decrypt",
        };
        match self {
            EntryPoint::Word32 { masked } | EntryPoint::Word64 { masked } => format!(
                "lite_test_word{}_{d}_{}",
                8 * self.item_bytes(),
                if masked { "masked" } else { "full" }
            ),
            EntryPoint::V4 => format!("lite_test_v4_{d}"),
        }
    }
}

/// Launch arguments of the memory-form test kernels (`struct MemTestArgs`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct MemTestArgs {
    input: u64,
    out: u64,
    n: u64,
    skip: u32,
    pad: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for MemTestArgs {}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<MemTestArgs>() == 32);
    assert!(offset_of!(MemTestArgs, n) == 16);
    assert!(offset_of!(MemTestArgs, skip) == 24);
};

/// The memory form through one entry point (test kernels `lite_test_*`): item `i` (a word of
/// the entry point's size, or a block) of `input` is encrypted into `out` (`Encrypt`: `input`
/// plaintext, `out` then holds LITE ciphertext at its own addresses) or decrypted from `input`
/// (`Decrypt`: `input` ciphertext at its addresses, `out` plaintext).
///
/// With a masked word entry point and `skip > 0`, item `i` with `i % skip == skip - 1` is left
/// out (its lane is absent from the mask): a decryption does not write it, an encryption keeps
/// its plaintext (read-modify-write of its block); so are the words past `items` in the last
/// block. With a full-mask word entry point every lane of a warp calls, so the items are whole
/// warps: `items` rounded up to 32 are encrypted or decrypted, in both directions. Both buffers
/// hold at least [`EntryPoint::buffer_words`]`(items)` words; the kernel touches no word past them.
///
/// Errors: [`CudaError::InvalidArgument`] for `skip > 0` without a masked word entry point;
/// [`CudaError::Shape`] for short buffers.
pub fn transcode(
    session: &LiteSession,
    entry: EntryPoint,
    dir: Direction,
    input: &DeviceBuffer,
    out: &mut DeviceBuffer,
    items: usize,
    skip: u32,
) -> Result<()> {
    input.check_same_device(out)?;
    let masked = matches!(
        entry,
        EntryPoint::Word32 { masked: true } | EntryPoint::Word64 { masked: true }
    );
    if skip > 0 && !masked {
        return Err(CudaError::InvalidArgument(
            "items can be left out only by a masked word-granular entry point".into(),
        ));
    }
    let need = entry.buffer_words(items);
    if input.len() < need || out.len() < need {
        return Err(CudaError::Shape(format!(
            "{items} items through {entry:?} need buffers of {need} words; got {} and {}",
            input.len(),
            out.len()
        )));
    }
    if items == 0 {
        return Ok(());
    }
    let dev = input.device().clone();
    let args = MemTestArgs {
        input: input.device_ptr(),
        out: out.device_ptr(),
        n: items as u64,
        skip,
        pad: 0,
    };
    let kernel = checked_name(entry.kernel(dir))?;
    let cfg = match entry {
        EntryPoint::V4 => grid_stride(&dev, items),
        _ => one_per_thread(items)?,
    };
    launch_keyed(&dev, session, kernel, cfg, &args)
}
