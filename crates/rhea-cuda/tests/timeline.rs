//! The NTT block timeline (`rhea_cuda::timeline`): nothing without `NTT_TIMELINE` compiled in;
//! with it (`RHEA_NVRTC_DEFINES=NTT_TIMELINE=<records>`), every block of a transform's launches
//! once, on a real SM, ending after it started.

mod common;

use std::collections::HashMap;

use common::{gpu_or_skip, primes, random_rns, rng};
use rhea_cuda::ntt::DeviceNttTables;
use rhea_cuda::timeline::take_ntt_timeline;

#[test]
fn the_ntt_timeline_records_every_block_when_compiled_in() {
    let Some(dev) = gpu_or_skip("ntt timeline") else {
        return;
    };
    let compiled_in = std::env::var("RHEA_NVRTC_DEFINES").is_ok_and(|d| d.contains("NTT_TIMELINE"));
    let n = 1usize << 14;
    let moduli = primes(50, 3, n);
    let gpu = DeviceNttTables::from_moduli(&dev, &moduli, n).unwrap();
    let mut buf = dev
        .upload(&random_rns(&mut rng("ntt timeline"), &moduli, n, 2))
        .unwrap();
    // Restart the recording, then one forward transform of 2 × 3 limbs.
    let restarted = take_ntt_timeline(&dev).unwrap();
    assert_eq!(restarted.is_some(), compiled_in);
    gpu.forward(&mut buf, 2, 3).unwrap();
    let Some(blocks) = take_ntt_timeline(&dev).unwrap() else {
        assert!(!compiled_in, "compiled in, but no timeline");
        return;
    };
    assert!(!blocks.is_empty());
    let mut seen: HashMap<(u32, u32, u32), u32> = HashMap::new();
    for b in &blocks {
        assert!(b.block < b.grid && b.threads > 0, "{b:?}");
        assert!(b.sm < dev.multiprocessor_count(), "{b:?}");
        assert!(b.end_ns >= b.start_ns, "{b:?}");
        *seen.entry((b.grid, b.threads, b.block)).or_default() += 1;
    }
    // Each shape's blocks are whole launches: every index as often as the shape was launched.
    let mut launches: HashMap<(u32, u32), Vec<u32>> = HashMap::new();
    for (&(grid, threads, _), &count) in &seen {
        launches.entry((grid, threads)).or_default().push(count);
    }
    for ((grid, threads), counts) in launches {
        assert_eq!(
            counts.len() as u32,
            grid,
            "{grid} x {threads}: missing block indices"
        );
        assert!(
            counts.windows(2).all(|w| w[0] == w[1]),
            "{grid} x {threads}: {counts:?}"
        );
    }
    // Recording restarted: nothing since.
    assert_eq!(take_ntt_timeline(&dev).unwrap().map(|b| b.len()), Some(0));
}
