//! The kernels' block timeline, a diagnostic: with `RHEA_NVRTC_DEFINES=KERNEL_TIMELINE=<records>`
//! every block of every kernel records which SM ran it and when it started and ended
//! (`%globaltimer`, ns), so that a stream of launches can be laid out block by block — what
//! overlapped, where SMs sat idle, how long each kernel took at the stream's own clocks. Each
//! kernel source's module keeps its own records ([`BlockRecord::source`] says whose). Without the
//! define the kernels record nothing and [`take_timeline`] returns `None`.

use std::sync::Arc;

use crate::device::GpuDevice;
use crate::error::Result;

/// One block of one kernel launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRecord {
    /// The kernel source (`KernelSource::name`, such as `"ntt"` or `"bconv"`).
    pub source: &'static str,
    /// The launch's `gridDim.x`.
    pub grid: u32,
    /// The launch's `gridDim.y`.
    pub grid_y: u32,
    /// The launch's `blockDim.x`.
    pub threads: u32,
    /// The SM that ran the block.
    pub sm: u32,
    /// The block's `blockIdx.x`.
    pub block: u32,
    /// The block's `blockIdx.y`.
    pub block_y: u32,
    /// `%globaltimer` when thread 0 entered the kernel, ns.
    pub start_ns: u64,
    /// `%globaltimer` when thread 0 left it, ns.
    pub end_ns: u64,
}

/// The blocks recorded since the last call by every module loaded on `dev` (each at most the
/// compiled-in capacity; later blocks are dropped), ordered by start, and the recording
/// restarted. `None` when the kernels were compiled without `KERNEL_TIMELINE`. Loads the NTT
/// module if it is not loaded yet; synchronises the device's stream.
///
/// Errors: [`crate::CudaError`] from the driver (module load, copies).
pub fn take_timeline(dev: &Arc<GpuDevice>) -> Result<Option<Vec<BlockRecord>>> {
    let stream = dev.stream();
    // The element-wise module is the probe: every source is compiled with the same defines.
    if dev
        .module(&crate::registry::ELEMENTWISE)?
        .get_global("rhea_tl_n", stream)
        .is_err()
    {
        return Ok(None);
    }
    let mut out = Vec::new();
    for (source, module) in dev.loaded_modules()? {
        let Ok(mut count) = module.get_global("rhea_tl_n", stream) else {
            continue;
        };
        let records = module.get_global("rhea_tl", stream)?;
        let mut n = [0u8; 4];
        stream.memcpy_dtoh(&count, &mut n)?;
        let capacity = records.len() / 32;
        let n = (u32::from_le_bytes(n) as usize).min(capacity);
        // Only the recorded blocks (the buffer holds the whole capacity).
        let mut bytes = vec![0u8; 32 * n];
        if n > 0 {
            stream.memcpy_dtoh(&records.slice(..32 * n), &mut bytes)?;
        }
        stream.memcpy_htod(&[0u8; 4], &mut count)?;
        stream.synchronize()?;
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[8 * i..8 * i + 8]);
            u64::from_le_bytes(w)
        };
        out.extend((0..n).map(|r| {
            let (meta, index) = (word(4 * r), word(4 * r + 1));
            BlockRecord {
                source,
                grid: (meta >> 32) as u32,
                grid_y: ((index >> 32) & 0xffff) as u32,
                threads: ((meta >> 16) & 0xffff) as u32,
                sm: (meta & 0xffff) as u32,
                block: index as u32,
                block_y: (index >> 48) as u32,
                start_ns: word(4 * r + 2),
                end_ns: word(4 * r + 3),
            }
        }));
    }
    out.sort_by_key(|b| (b.start_ns, b.end_ns));
    Ok(Some(out))
}
