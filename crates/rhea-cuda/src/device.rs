//! A CUDA device: its context, its one ordered stream, its memory pool, its loaded kernels and
//! its host↔device byte counters.
//!
//! [`GpuDevice::new`] returns the same shared `Arc<GpuDevice>` for an index as long as one is
//! alive, so every user of a GPU in the process shares one stream, one pool and one module cache.
//!
//! All work is queued on the device's main stream and runs in the order it was issued; the host
//! waits only in [`GpuDevice::synchronize`] and in downloads. cudarc's per-buffer event tracking
//! is switched off (one stream orders everything), so a launch costs one driver call.
//!
//! Without a driver (no `libcuda`, a stub library, or no GPU) every constructor returns
//! [`CudaError::NoDriver`]; nothing panics.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream, LaunchConfig};

use crate::buffer::DeviceBuffer;
use crate::error::{CudaError, Result};
use crate::pool::{MemoryPool, PoolStats};
use crate::registry::{self, KernelSource};
use crate::tuning::Tuning;

/// Runs `f`, turning a panic inside cudarc (a missing library or symbol) into `NoDriver`.
pub(crate) fn guard<T>(what: &str, f: impl FnOnce() -> T) -> Result<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".into());
        CudaError::NoDriver(format!("{what}: {msg}"))
    })
}

/// Loads `libcuda` and runs `cuInit` once per process; later calls return the cached outcome.
pub(crate) fn driver_ready() -> Result<()> {
    static STATE: OnceLock<Result<()>> = OnceLock::new();
    STATE
        .get_or_init(|| {
            // SAFETY: only tries to dlopen the library names cudarc knows; no symbol is called.
            let present = guard("probing libcuda", || unsafe {
                cudarc::driver::sys::is_culib_present()
            })?;
            if !present {
                return Err(CudaError::NoDriver(
                    "libcuda could not be loaded (no NVIDIA driver on this machine?)".into(),
                ));
            }
            match guard("cuInit", cudarc::driver::result::init)? {
                Ok(()) => Ok(()),
                Err(e) => Err(CudaError::NoDriver(CudaError::from(e).to_string())),
            }
        })
        .clone()
}

/// The lowest compute capability Rhea's kernels run on: 7.5 (Turing). The kernels use
/// `__nanosleep` (sm_70+), and the CUDA 13 NVRTC they are compiled with targets sm_75 and newer
/// only; features of newer GPUs (`cp.async` on sm_80+, programmatic dependent launch on sm_90+)
/// are compiled in only where the device has them. Tested on sm_90 (H100, H200). Opening an
/// older device is [`CudaError::UnsupportedComputeCapability`], not a kernel compile failure.
pub const MIN_COMPUTE_CAPABILITY: (u32, u32) = (7, 5);

/// [`CudaError::UnsupportedComputeCapability`] when `found` is below
/// [`MIN_COMPUTE_CAPABILITY`].
pub fn check_compute_capability(index: usize, name: &str, found: (u32, u32)) -> Result<()> {
    if found < MIN_COMPUTE_CAPABILITY {
        return Err(CudaError::UnsupportedComputeCapability {
            index,
            name: name.to_string(),
            found,
            minimum: MIN_COMPUTE_CAPABILITY,
        });
    }
    Ok(())
}

fn device_registry() -> &'static Mutex<HashMap<usize, Weak<GpuDevice>>> {
    static DEVICES: OnceLock<Mutex<HashMap<usize, Weak<GpuDevice>>>> = OnceLock::new();
    DEVICES.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Static facts about a device, read once when it is opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The device ordinal.
    pub index: usize,
    /// The marketing name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Compute capability `(major, minor)`: `(9, 0)` on H100/H200.
    pub compute_capability: (u32, u32),
    /// Total device memory in bytes.
    pub total_memory: usize,
    /// Number of streaming multiprocessors.
    pub multiprocessor_count: u32,
    /// L2 cache size in bytes.
    pub l2_cache_bytes: u32,
    /// Largest shared memory a block may opt into, in bytes.
    pub max_shared_memory_per_block_optin: u32,
    /// Largest number of threads in one block.
    pub max_threads_per_block: u32,
}

/// One allocation of a device's memory pool as [`GpuDevice::raw_memory_dump`] read it.
#[derive(Clone, Debug)]
pub struct RawRegion {
    /// Its device address.
    pub ptr: u64,
    /// Whether a buffer holds it (else it is cached for reuse).
    pub live: bool,
    /// Its words, as they were in device memory.
    pub words: Vec<u64>,
}

/// One CUDA device with its main stream, memory pool, kernel-module cache and transfer counters.
///
/// ```no_run
/// use rhea_cuda::GpuDevice;
/// let dev = GpuDevice::new(0)?;
/// let buf = dev.upload(&[1, 2, 3])?;
/// assert_eq!(dev.download(&buf)?, vec![1, 2, 3]);
/// # Ok::<(), rhea_cuda::CudaError>(())
/// ```
pub struct GpuDevice {
    info: DeviceInfo,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    pub(crate) pool: MemoryPool,
    to_device: AtomicU64,
    to_host: AtomicU64,
    /// Host waits for the main stream ([`GpuDevice::synchronize`], downloads included).
    host_waits: AtomicU64,
    modules: Mutex<HashMap<&'static str, Arc<CudaModule>>>,
    functions: Mutex<HashMap<(&'static str, String), CudaFunction>>,
    pub(crate) moduli_cache: Mutex<crate::elementwise::ModuliCache>,
    tuning: Tuning,
    /// Taken by every dependent launch, and held across launches that must be adjacent on the
    /// stream ([`crate::launch::hold_launches`]).
    pub(crate) launch_lock: Mutex<()>,
}

impl std::fmt::Debug for GpuDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuDevice")
            .field("info", &self.info)
            .field("bytes_to_device", &self.bytes_to_device())
            .field("bytes_to_host", &self.bytes_to_host())
            .finish_non_exhaustive()
    }
}

impl GpuDevice {
    /// Opens device `index` (or returns the already open one).
    ///
    /// Errors: [`CudaError::NoDriver`] without a usable driver, [`CudaError::NoDevice`] for an
    /// ordinal the driver does not have, [`CudaError::UnsupportedComputeCapability`] for a
    /// device older than [`MIN_COMPUTE_CAPABILITY`], [`CudaError::Driver`] for anything else.
    pub fn new(index: usize) -> Result<Arc<GpuDevice>> {
        driver_ready()?;
        let count = Self::count();
        if index >= count {
            return Err(CudaError::NoDevice { index, count });
        }
        let mut devices = device_registry()
            .lock()
            .map_err(|_| CudaError::Driver("device registry lock poisoned".into()))?;
        if let Some(dev) = devices.get(&index).and_then(Weak::upgrade) {
            return Ok(dev);
        }
        let dev = Arc::new(Self::open(index)?);
        devices.insert(index, Arc::downgrade(&dev));
        Ok(dev)
    }

    fn open(index: usize) -> Result<GpuDevice> {
        let ctx = guard("opening the CUDA context", || CudaContext::new(index))??;
        // SAFETY: called before any allocation or stream exists on this context object. All work
        // of a GpuDevice is ordered on its single stream, so cudarc's per-buffer events are
        // unnecessary (see the module documentation).
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream()?;
        let attr = |a: CUdevice_attribute| -> Result<u32> { Ok(ctx.attribute(a)?.max(0) as u32) };
        let (major, minor) = ctx.compute_capability()?;
        let compute_capability = (major.max(0) as u32, minor.max(0) as u32);
        let name = ctx.name()?;
        check_compute_capability(index, &name, compute_capability)?;
        let info = DeviceInfo {
            index,
            name,
            compute_capability,
            total_memory: ctx.total_mem()?,
            multiprocessor_count: attr(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )?,
            l2_cache_bytes: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
            max_shared_memory_per_block_optin: attr(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )?,
            max_threads_per_block: attr(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            )?,
        };
        Ok(GpuDevice {
            info,
            ctx,
            stream,
            pool: MemoryPool::default(),
            to_device: AtomicU64::new(0),
            to_host: AtomicU64::new(0),
            host_waits: AtomicU64::new(0),
            modules: Mutex::new(HashMap::new()),
            functions: Mutex::new(HashMap::new()),
            moduli_cache: Mutex::new(HashMap::new()),
            launch_lock: Mutex::new(()),
            tuning: Tuning::for_compute_capability(major.max(0) as u32, minor.max(0) as u32),
        })
    }

    /// The number of CUDA devices; 0 when there is no driver or no GPU (never panics).
    pub fn count() -> usize {
        if driver_ready().is_err() {
            return 0;
        }
        match guard(
            "cuDeviceGetCount",
            cudarc::driver::result::device::get_count,
        ) {
            Ok(Ok(n)) => n.max(0) as usize,
            _ => 0,
        }
    }

    /// Whether at least one CUDA device can be opened.
    pub fn is_available() -> bool {
        Self::count() > 0
    }

    /// The device ordinal.
    pub fn index(&self) -> usize {
        self.info.index
    }

    /// Static facts about the device.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The device name.
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// Compute capability `(major, minor)`.
    pub fn compute_capability(&self) -> (u32, u32) {
        self.info.compute_capability
    }

    /// Whether kernels written for it are launched with programmatic dependent launch (PDL,
    /// `launch.rs`): [`Tuning::programmatic_dependent_launch`], compute capability 9.0 or later.
    pub fn uses_pdl(&self) -> bool {
        self.tuning.programmatic_dependent_launch
    }

    /// The device's tuning, chosen from its compute capability when it was opened.
    pub fn tuning(&self) -> &Tuning {
        &self.tuning
    }

    /// The NVRTC architecture of this device, e.g. `sm_90`.
    pub fn arch(&self) -> String {
        let (major, minor) = self.info.compute_capability;
        format!("sm_{major}{minor}")
    }

    /// Number of streaming multiprocessors.
    pub fn multiprocessor_count(&self) -> u32 {
        self.info.multiprocessor_count
    }

    /// Total device memory in bytes.
    pub fn total_memory(&self) -> usize {
        self.info.total_memory
    }

    /// Free device memory in bytes, as the driver reports it now (memory cached by the pool
    /// counts as used).
    pub fn free_memory(&self) -> Result<usize> {
        Ok(self.ctx.mem_get_info()?.0)
    }

    /// The cudarc context (for code of this crate that needs the driver directly).
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The main stream: every launch and copy of this device is queued here, in order.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Blocks until all work queued on the main stream has finished; reports asynchronous
    /// kernel faults.
    pub fn synchronize(&self) -> Result<()> {
        self.host_waits.fetch_add(1, Ordering::Relaxed);
        self.stream.synchronize()?;
        Ok(())
    }

    /// How many times the host waited for the main stream ([`GpuDevice::synchronize`], which
    /// every download goes through) since the device was opened: a test or benchmark can check
    /// that a computation never stops the host.
    pub fn host_waits(&self) -> u64 {
        self.host_waits.load(Ordering::Relaxed)
    }

    /// Bytes copied host → device since the last reset.
    pub fn bytes_to_device(&self) -> u64 {
        self.to_device.load(Ordering::Relaxed)
    }

    /// Bytes copied device → host since the last reset.
    pub fn bytes_to_host(&self) -> u64 {
        self.to_host.load(Ordering::Relaxed)
    }

    /// Sets both transfer counters to zero.
    pub fn reset_transfer_counters(&self) {
        self.to_device.store(0, Ordering::Relaxed);
        self.to_host.store(0, Ordering::Relaxed);
    }

    pub(crate) fn count_to_device(&self, bytes: usize) {
        self.to_device.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    pub(crate) fn count_to_host(&self, bytes: usize) {
        self.to_host.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Bytes held by the memory pool: buffers in use plus buffers cached for reuse.
    pub fn pool_bytes(&self) -> usize {
        let s = self.pool.stats();
        s.in_use_bytes + s.cached_bytes
    }

    /// Detailed pool statistics.
    pub fn pool_stats(&self) -> PoolStats {
        self.pool.stats()
    }

    /// Restarts the pool's peak of bytes in use ([`PoolStats::peak_in_use_bytes`]) from now.
    pub fn reset_peak(&self) {
        self.pool.reset_peak();
    }

    /// Frees every cached (unused) buffer of the pool back to the driver.
    pub fn trim(&self) {
        self.pool.trim();
    }

    /// **For tests of what device memory holds** (LITE's raw-memory test, `docs/lite.md`): a
    /// copy of every allocation of this device's memory pool — the buffers in use (keys,
    /// ciphertexts, the ring's tables, a LITE buffer's ciphertext) and the freed ones cached for
    /// reuse, whose words are whatever their last user left — after the stream's work is done.
    /// This is the device memory Rhea reaches; the driver's own memory (modules, launch
    /// parameters) is not in it.
    ///
    /// Call it while no other thread uses the device: a buffer dropped meanwhile is still read
    /// (it stays allocated in the pool's cache), but a concurrent [`GpuDevice::trim`] would free
    /// memory being read. Errors: the driver's.
    pub fn raw_memory_dump(&self) -> Result<Vec<RawRegion>> {
        self.synchronize()?;
        let regions = self.pool.regions(|s| {
            let (ptr, _sync) = cudarc::driver::DevicePtr::device_ptr(s, self.stream());
            ptr
        });
        self.context().bind_to_thread()?;
        regions
            .into_iter()
            .map(|r| {
                let mut words = vec![0u64; r.words];
                // SAFETY: `r.ptr .. r.ptr + 8·r.words` is one allocation of this device that the
                // pool holds (live or cached; the pool frees only on trim, which the caller does
                // not run meanwhile); the copy is synchronous.
                unsafe { cudarc::driver::result::memcpy_dtoh_sync(&mut words, r.ptr) }?;
                Ok(RawRegion {
                    ptr: r.ptr,
                    live: r.live,
                    words,
                })
            })
            .collect()
    }

    /// Allocates an uninitialised buffer of `words` u64 words from the pool.
    pub fn alloc(self: &Arc<Self>, words: usize) -> Result<DeviceBuffer> {
        DeviceBuffer::alloc(self, words)
    }

    /// Allocates a buffer of `words` zero words (the memset is queued on the stream).
    pub fn alloc_zeroed(self: &Arc<Self>, words: usize) -> Result<DeviceBuffer> {
        let mut b = DeviceBuffer::alloc(self, words)?;
        b.fill_zero()?;
        Ok(b)
    }

    /// Copies `data` to a new device buffer (counted in [`GpuDevice::bytes_to_device`]).
    pub fn upload(self: &Arc<Self>, data: &[u64]) -> Result<DeviceBuffer> {
        let mut b = DeviceBuffer::alloc(self, data.len())?;
        b.copy_from_host(data)?;
        Ok(b)
    }

    /// Copies a device buffer to a new host vector; waits for the stream (counted in
    /// [`GpuDevice::bytes_to_host`]).
    pub fn download(&self, buf: &DeviceBuffer) -> Result<Vec<u64>> {
        buf.to_host()
    }

    /// The compiled module of `source` on this device: compiled (or read from the disk cache)
    /// and loaded on first use, then cached for the device's lifetime.
    pub fn module(&self, source: &'static KernelSource) -> Result<Arc<CudaModule>> {
        let mut modules = self
            .modules
            .lock()
            .map_err(|_| CudaError::Driver("module cache lock poisoned".into()))?;
        if let Some(m) = modules.get(source.name) {
            return Ok(m.clone());
        }
        let image = registry::compiled_image(source, &self.arch())?;
        let module = self
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(image))?;
        modules.insert(source.name, module.clone());
        Ok(module)
    }

    /// The modules loaded so far, by source name (none is loaded here).
    ///
    /// Errors: [`CudaError::Driver`] when the module cache's lock is poisoned.
    #[cfg(feature = "dev-kernel-defines")]
    pub(crate) fn loaded_modules(&self) -> Result<Vec<(&'static str, Arc<CudaModule>)>> {
        let modules = self
            .modules
            .lock()
            .map_err(|_| CudaError::Driver("module cache lock poisoned".into()))?;
        Ok(modules.iter().map(|(&k, m)| (k, m.clone())).collect())
    }

    /// The kernel `function` of `source`, loaded on first use and cached.
    pub fn function(&self, source: &'static KernelSource, function: &str) -> Result<CudaFunction> {
        let key = (source.name, function.to_string());
        if let Some(f) = self
            .functions
            .lock()
            .map_err(|_| CudaError::Driver("function cache lock poisoned".into()))?
            .get(&key)
        {
            return Ok(f.clone());
        }
        let module = self.module(source)?;
        let f = module
            .load_function(function)
            .map_err(|_| CudaError::MissingFunction {
                module: source.name.into(),
                function: function.into(),
            })?;
        self.functions
            .lock()
            .map_err(|_| CudaError::Driver("function cache lock poisoned".into()))?
            .insert(key, f.clone());
        Ok(f)
    }

    /// A launch configuration for a grid-stride kernel over `work_items` items with `block`
    /// threads per block: enough blocks to cover the items, at most 32 per multiprocessor.
    pub fn grid_stride_config(&self, work_items: usize, block: u32) -> LaunchConfig {
        let block = block.max(32);
        let needed = work_items.div_ceil(block as usize).max(1);
        let cap = (self.info.multiprocessor_count.max(1) as usize) * 32;
        LaunchConfig {
            grid_dim: (needed.min(cap) as u32, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        }
    }
}
