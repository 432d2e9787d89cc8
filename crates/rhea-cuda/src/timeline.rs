//! The NTT kernels' block timeline, a diagnostic: with `RHEA_NVRTC_DEFINES=NTT_TIMELINE=<records>`
//! every block of every `ntt.cu` kernel records which SM ran it and when it started and ended
//! (`%globaltimer`, ns), so that a stream of launches can be laid out block by block — what
//! overlapped, where SMs sat idle. Without the define the kernels record nothing and
//! [`take_ntt_timeline`] returns `None`.

use std::sync::Arc;

use crate::device::GpuDevice;
use crate::error::Result;
use crate::ntt::NTT;

/// One block of one NTT kernel launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRecord {
    /// The launch's `gridDim.x`.
    pub grid: u32,
    /// The launch's `blockDim.x`.
    pub threads: u32,
    /// The SM that ran the block.
    pub sm: u32,
    /// The block's `blockIdx.x`.
    pub block: u32,
    /// `%globaltimer` when thread 0 entered the kernel, ns.
    pub start_ns: u64,
    /// `%globaltimer` when thread 0 left it, ns.
    pub end_ns: u64,
}

/// The blocks recorded since the last call (at most the compiled-in capacity; later blocks are
/// dropped), and the recording restarted. `None` when the NTT kernels were compiled without
/// `NTT_TIMELINE`. Synchronises the device's stream.
///
/// Errors: [`crate::CudaError`] from the driver (module load, copies).
pub fn take_ntt_timeline(dev: &Arc<GpuDevice>) -> Result<Option<Vec<BlockRecord>>> {
    let module = dev.module(&NTT)?;
    let stream = dev.stream();
    let Ok(count) = module.get_global("ntt_tl_n", stream) else {
        return Ok(None);
    };
    let records = module.get_global("ntt_tl", stream)?;
    let mut n = [0u8; 4];
    stream.memcpy_dtoh(&count, &mut n)?;
    let capacity = records.len() / 32;
    let n = (u32::from_le_bytes(n) as usize).min(capacity);
    // Only the recorded blocks (the buffer holds the whole capacity).
    let mut bytes = vec![0u8; 32 * n];
    if n > 0 {
        stream.memcpy_dtoh(&records.slice(..32 * n), &mut bytes)?;
    }
    let mut count = count;
    stream.memcpy_htod(&[0u8; 4], &mut count)?;
    stream.synchronize()?;
    let word = |i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[8 * i..8 * i + 8]);
        u64::from_le_bytes(w)
    };
    Ok(Some(
        (0..n)
            .map(|r| {
                let meta = word(4 * r);
                BlockRecord {
                    grid: (meta >> 32) as u32,
                    threads: ((meta >> 16) & 0xffff) as u32,
                    sm: (meta & 0xffff) as u32,
                    block: word(4 * r + 1) as u32,
                    start_ns: word(4 * r + 2),
                    end_ns: word(4 * r + 3),
                }
            })
            .collect(),
    ))
}
