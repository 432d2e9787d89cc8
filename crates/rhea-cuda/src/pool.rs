//! The binned device-memory pool (the seeds' "memory cache").
//!
//! Buffers are binned by their exact size in u64 words. A freed [`crate::DeviceBuffer`] goes
//! back to its bin and the next allocation of the same size takes it without a driver call.
//! FHE workloads allocate a handful of distinct sizes (one per limb count and component count),
//! so exact bins hit almost always. Reuse is safe without events because every GpuDevice orders
//! all its work on one stream: work queued after the reuse runs after work queued before the free.
//!
//! [`MemoryPool::trim`] (also [`crate::GpuDevice::trim`]) returns the cached buffers to the
//! driver; an allocation that fails for lack of memory trims and retries once before it reports
//! [`crate::CudaError::OutOfMemory`].
//!
//! The pool also knows the address and size of every buffer it has handed out and not yet got
//! back, so that [`crate::GpuDevice::raw_memory_dump`] can read every word of device memory that
//! Rhea holds, live or cached: the raw-memory test of LITE's protected mode (issue 38,
//! `docs/lite.md`) searches it for secrets.

use std::collections::HashMap;
use std::sync::Mutex;

use cudarc::driver::CudaSlice;

/// Pool statistics, in bytes and buffer counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Bytes of buffers currently handed out.
    pub in_use_bytes: usize,
    /// The most bytes handed out at once since the pool was made or
    /// [`MemoryPool::reset_peak`]: what the work needed, cached buffers apart.
    pub peak_in_use_bytes: usize,
    /// Bytes of freed buffers kept for reuse.
    pub cached_bytes: usize,
    /// Number of cached buffers.
    pub cached_buffers: usize,
    /// Allocations served from the cache.
    pub hits: u64,
    /// Allocations that went to the driver.
    pub misses: u64,
}

#[derive(Default)]
struct Inner {
    bins: HashMap<usize, Vec<CudaSlice<u64>>>,
    /// Buffers handed out: device address → words.
    live: HashMap<u64, usize>,
    stats: PoolStats,
}

/// One allocation of the pool, for [`MemoryPool::regions`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Region {
    pub ptr: u64,
    pub words: usize,
    pub live: bool,
}

/// A per-device cache of freed buffers, binned by word count.
#[derive(Default)]
pub struct MemoryPool {
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for MemoryPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryPool")
            .field("stats", &self.stats())
            .finish()
    }
}

impl MemoryPool {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A poisoned lock only means another thread panicked while holding it; the maps are
        // still consistent (every mutation is a single push/pop), so keep going.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes a cached buffer of exactly `words` words, if any, and marks it in use.
    pub(crate) fn take(&self, words: usize) -> Option<CudaSlice<u64>> {
        let mut inner = self.lock();
        let slice = inner.bins.get_mut(&words).and_then(Vec::pop)?;
        inner.stats.cached_bytes -= words * 8;
        inner.stats.cached_buffers -= 1;
        inner.stats.in_use_bytes += words * 8;
        inner.stats.peak_in_use_bytes = inner.stats.peak_in_use_bytes.max(inner.stats.in_use_bytes);
        inner.stats.hits += 1;
        Some(slice)
    }

    /// Records a fresh allocation from the driver.
    pub(crate) fn record_new(&self, words: usize) {
        let mut inner = self.lock();
        inner.stats.in_use_bytes += words * 8;
        inner.stats.peak_in_use_bytes = inner.stats.peak_in_use_bytes.max(inner.stats.in_use_bytes);
        inner.stats.misses += 1;
    }

    /// Records that the buffer at `ptr` of `words` words is handed out.
    pub(crate) fn mark_live(&self, ptr: u64, words: usize) {
        self.lock().live.insert(ptr, words);
    }

    /// Returns a buffer (at device address `ptr`) to its bin.
    pub(crate) fn give_back(&self, slice: CudaSlice<u64>, ptr: u64) {
        let words = slice.len();
        let mut inner = self.lock();
        inner.live.remove(&ptr);
        inner.stats.in_use_bytes = inner.stats.in_use_bytes.saturating_sub(words * 8);
        inner.stats.cached_bytes += words * 8;
        inner.stats.cached_buffers += 1;
        inner.bins.entry(words).or_default().push(slice);
    }

    /// Frees every cached buffer (stream-ordered frees on the device's stream).
    pub fn trim(&self) {
        let drained: Vec<CudaSlice<u64>> = {
            let mut inner = self.lock();
            inner.stats.cached_bytes = 0;
            inner.stats.cached_buffers = 0;
            inner.bins.drain().flat_map(|(_, v)| v).collect()
        };
        drop(drained);
    }

    /// Restarts [`PoolStats::peak_in_use_bytes`] from the bytes in use now.
    pub fn reset_peak(&self) {
        let mut inner = self.lock();
        inner.stats.peak_in_use_bytes = inner.stats.in_use_bytes;
    }

    /// Every allocation the pool holds: the buffers handed out (live) and the cached ones, with
    /// their device addresses (`address` gives a cached slice's).
    pub(crate) fn regions(&self, address: impl Fn(&CudaSlice<u64>) -> u64) -> Vec<Region> {
        let inner = self.lock();
        let live = inner.live.iter().map(|(&ptr, &words)| Region {
            ptr,
            words,
            live: true,
        });
        let cached = inner.bins.values().flatten().map(|s| Region {
            ptr: address(s),
            words: s.len(),
            live: false,
        });
        let mut all: Vec<Region> = live.chain(cached).collect();
        all.sort_by_key(|r| r.ptr);
        all
    }

    /// Current statistics.
    pub fn stats(&self) -> PoolStats {
        self.lock().stats
    }
}
