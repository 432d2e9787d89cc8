//! The runtime layer: device discovery and errors, buffers, the pool, transfer counters, the
//! registry's cache keys.

mod common;

use std::sync::{Arc, Mutex, MutexGuard};

use common::require_gpu;
use rhea_cuda::registry::{self, cache_key, compile_options, KernelSource};
use rhea_cuda::{CudaError, DeviceBuffer, GpuDevice};

/// The device's buffer pool is shared by the tests of this binary, which run on several
/// threads: the tests that allocate hold this lock, so that the pool test sees only its own
/// buffers when it checks what a trim leaves.
fn pool_lock() -> MutexGuard<'static, ()> {
    static POOL: Mutex<()> = Mutex::new(());
    POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[test]
fn no_gpu_is_an_error_not_a_panic() {
    let count = GpuDevice::count();
    assert_eq!(GpuDevice::is_available(), count > 0);
    match GpuDevice::new(count) {
        Err(CudaError::NoDriver(msg)) => {
            assert_eq!(count, 0);
            assert!(!msg.is_empty());
        }
        Err(CudaError::NoDevice { index, count: c }) => {
            assert_eq!((index, c), (count, count));
        }
        other => panic!("device {count} of {count} should not open: {other:?}"),
    }
    if count == 0 {
        assert!(matches!(GpuDevice::new(0), Err(CudaError::NoDriver(_))));
    }
}

#[test]
fn cache_keys_cover_every_input() {
    const A: KernelSource = KernelSource {
        name: "a",
        source: "x",
        headers: &[],
    };
    let opts = compile_options("sm_90");
    let k = cache_key(&A, &opts, (13, 0));
    assert_eq!(k.len(), 64);
    assert!(k.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(k, cache_key(&A, &opts, (13, 0)), "the key is deterministic");
    let other_src = KernelSource { source: "y", ..A };
    let other_name = KernelSource { name: "b", ..A };
    let with_header = KernelSource {
        headers: &[registry::COMMON_CUH],
        ..A
    };
    let keys = [
        cache_key(&other_src, &opts, (13, 0)),
        cache_key(&other_name, &opts, (13, 0)),
        cache_key(&with_header, &opts, (13, 0)),
        cache_key(&A, &compile_options("sm_80"), (13, 0)),
        cache_key(&A, &opts, (13, 1)),
    ];
    for (i, ki) in keys.iter().enumerate() {
        assert_ne!(ki, &k, "changing input {i} must change the key");
    }
    // Field boundaries are unambiguous: ("ab","") and ("a","b") differ.
    let s1 = KernelSource {
        name: "ab",
        source: "",
        headers: &[],
    };
    let s2 = KernelSource {
        name: "a",
        source: "b",
        headers: &[],
    };
    assert_ne!(
        cache_key(&s1, &opts, (13, 0)),
        cache_key(&s2, &opts, (13, 0))
    );
    assert!(compile_options("sm_90").contains(&"--gpu-architecture=sm_90".to_string()));
}

#[test]
fn every_kernel_source_is_listed_once() {
    let names: Vec<_> = registry::all_kernel_sources()
        .iter()
        .map(|s| s.name)
        .collect();
    assert!(names.contains(&"elementwise"));
    for n in &names {
        assert_eq!(registry::kernel_source(n).map(|s| s.name), Some(*n));
    }
    assert!(registry::kernel_source("nope").is_none());
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn device_properties() {
    let _pool = pool_lock();
    let dev = require_gpu("device_properties");
    println!("{:?}", dev.info());
    assert!(!dev.name().is_empty());
    let (major, _) = dev.compute_capability();
    assert!(
        major >= 7,
        "compute capability {:?}",
        dev.compute_capability()
    );
    assert!(dev.arch().starts_with("sm_"));
    assert!(dev.multiprocessor_count() > 0);
    let free = dev.free_memory().unwrap();
    assert!(free > 0 && free <= dev.total_memory());
    assert!(
        Arc::ptr_eq(&dev, &GpuDevice::new(0).unwrap()),
        "one GpuDevice per index"
    );
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn upload_download_and_counters() {
    let _pool = pool_lock();
    let dev = require_gpu("upload_download_and_counters");
    let mut rng = common::rng("upload_download_and_counters");
    let data = common::random_nonzero(&mut rng, u64::MAX, 10_001);
    let before_d = dev.bytes_to_device();
    let before_h = dev.bytes_to_host();
    let buf = dev.upload(&data).unwrap();
    assert_eq!(buf.len(), data.len());
    assert_eq!(dev.download(&buf).unwrap(), data);
    // Other tests may run concurrently on the shared device: counters only grow.
    assert!(dev.bytes_to_device() - before_d >= 8 * 10_001);
    assert!(dev.bytes_to_host() - before_h >= 8 * 10_001);

    let mut copy = dev.alloc(data.len()).unwrap();
    buf.copy_into(&mut copy).unwrap();
    let mut host = vec![0u64; data.len()];
    copy.to_host_into(&mut host).unwrap();
    assert_eq!(host, data);

    let mut part = vec![0u64; 100];
    buf.to_host_range_into(500, &mut part).unwrap();
    assert_eq!(part, data[500..600]);
    let mut region = dev.alloc_zeroed(300).unwrap();
    DeviceBuffer::copy_region(&buf, 10, &mut region, 100, 200).unwrap();
    let r = region.to_host().unwrap();
    assert!(r[..100].iter().all(|&x| x == 0));
    assert_eq!(r[100..300], data[10..210]);
    region.copy_from_host_at(0, &[7, 8, 9]).unwrap();
    assert_eq!(region.to_host().unwrap()[..4], [7, 8, 9, 0]);

    let cloned = buf.try_clone().unwrap();
    assert_eq!(cloned.to_host().unwrap(), data);
    let mut z = buf.try_clone().unwrap();
    z.fill_zero().unwrap();
    assert!(z.to_host().unwrap().iter().all(|&x| x == 0));

    // Shape errors, never panics.
    let mut small = vec![0u64; 3];
    assert!(matches!(
        buf.to_host_into(&mut small),
        Err(CudaError::Shape(_))
    ));
    assert!(matches!(
        copy.copy_from_host(&small),
        Err(CudaError::Shape(_))
    ));
    assert!(matches!(
        buf.copy_into(&mut region),
        Err(CudaError::Shape(_))
    ));
    assert!(matches!(
        DeviceBuffer::copy_region(&buf, 10_000, &mut region, 0, 2),
        Err(CudaError::Shape(_))
    ));
    assert!(matches!(
        buf.device_ptr_at(10_002),
        Err(CudaError::Shape(_))
    ));

    // Empty buffers work.
    let empty = dev.upload(&[]).unwrap();
    assert!(empty.is_empty());
    assert_eq!(dev.download(&empty).unwrap(), Vec::<u64>::new());
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn pool_reuses_exact_bins_and_trims() {
    let _pool = pool_lock();
    let dev = require_gpu("pool_reuses_exact_bins_and_trims");
    // A size no other test uses, so concurrent tests cannot take this bin.
    let words = 12_345 * 7;
    dev.reset_peak();
    let base = dev.pool_stats().in_use_bytes;
    let b = dev.alloc(words).unwrap();
    let ptr = b.device_ptr();
    let hits = dev.pool_stats().hits;
    assert!(dev.pool_bytes() >= words * 8);
    drop(b);
    assert!(dev.pool_stats().cached_bytes >= words * 8);
    let again = dev.alloc(words).unwrap();
    assert_eq!(again.device_ptr(), ptr, "the freed buffer is reused");
    assert!(dev.pool_stats().hits > hits);
    drop(again);
    let peak = dev.pool_stats().peak_in_use_bytes;
    assert!(
        peak >= base + words * 8,
        "the peak counts the buffer once live"
    );
    dev.trim();
    let s = dev.pool_stats();
    assert_eq!(s.cached_buffers, 0);
    assert_eq!(s.cached_bytes, 0);
    assert_eq!(s.peak_in_use_bytes, peak, "trimming keeps the peak");
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn out_of_memory_is_typed() {
    let _pool = pool_lock();
    let dev = require_gpu("out_of_memory_is_typed");
    let words = dev.total_memory() / 8 * 2;
    match dev.alloc(words) {
        Err(CudaError::OutOfMemory {
            device,
            requested_bytes,
            free_bytes,
        }) => {
            assert_eq!(requested_bytes, words * 8);
            assert_eq!(device, dev.index());
            // cuMemGetInfo answers after a failed allocation; the free memory is below the ask.
            assert!(
                free_bytes.is_some_and(|f| f < requested_bytes),
                "{free_bytes:?}"
            );
        }
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    // The device still works afterwards.
    let b = dev.upload(&[1, 2, 3]).unwrap();
    assert_eq!(dev.download(&b).unwrap(), [1, 2, 3]);
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn concurrent_use_from_threads() {
    let _pool = pool_lock();
    let dev = require_gpu("concurrent_use_from_threads");
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let dev = dev.clone();
            s.spawn(move || {
                for k in 0..20u64 {
                    let data: Vec<u64> = (0..1000 + t * 10 + k).map(|i| i * t + k).collect();
                    let b = dev.upload(&data).unwrap();
                    assert_eq!(dev.download(&b).unwrap(), data);
                }
            });
        }
    });
}
