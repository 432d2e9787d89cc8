//! The kernels' block timeline (`rhea_cuda::timeline`): nothing without `KERNEL_TIMELINE`
//! compiled in; with it (`RHEA_NVRTC_DEFINES=KERNEL_TIMELINE=<records>`), every block of a
//! transform's launches and of an element-wise launch once, under its own source, on a real SM,
//! ending after it started.

#![cfg(feature = "dev-kernel-defines")]

mod common;

use std::collections::HashMap;

use common::{primes, random_rns, require_gpu, rng};
use rhea_cuda::elementwise::{self as ew, DeviceModuli, RnsLayout};
use rhea_cuda::ntt::DeviceNttTables;
use rhea_cuda::timeline::take_timeline;

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn the_timeline_records_every_block_when_compiled_in() {
    let dev = require_gpu("timeline");
    let compiled_in =
        std::env::var("RHEA_NVRTC_DEFINES").is_ok_and(|d| d.contains("KERNEL_TIMELINE"));
    let n = 1usize << 14;
    let moduli = primes(50, 3, n);
    let gpu = DeviceNttTables::from_moduli(&dev, &moduli, n).unwrap();
    let mut buf = dev
        .upload(&random_rns(&mut rng("ntt timeline"), &moduli, n, 2))
        .unwrap();
    let layout = RnsLayout::new(n, 3, 2);
    let table = DeviceModuli::new(&dev, &moduli).unwrap();
    let other = dev
        .upload(&random_rns(&mut rng("timeline b"), &moduli, n, 2))
        .unwrap();
    let mut sum = dev.alloc(layout.words()).unwrap();
    // Restart the recording, then one forward transform of 2 × 3 limbs and one addition.
    let restarted = take_timeline(&dev).unwrap();
    assert_eq!(restarted.is_some(), compiled_in);
    gpu.forward(&mut buf, 2, 3).unwrap();
    ew::add(&mut sum, &buf, &other, &layout, &table).unwrap();
    let Some(blocks) = take_timeline(&dev).unwrap() else {
        assert!(!compiled_in, "compiled in, but no timeline");
        return;
    };
    assert!(!blocks.is_empty());
    assert!(blocks.windows(2).all(|w| w[0].start_ns <= w[1].start_ns));
    let mut seen: HashMap<(&str, u32, u32, u32, u32, u32), u32> = HashMap::new();
    for b in &blocks {
        assert!(
            b.block < b.grid && b.block_y < b.grid_y && b.threads > 0,
            "{b:?}"
        );
        assert!(b.sm < dev.multiprocessor_count(), "{b:?}");
        assert!(b.end_ns >= b.start_ns, "{b:?}");
        *seen
            .entry((b.source, b.grid, b.grid_y, b.threads, b.block, b.block_y))
            .or_default() += 1;
    }
    // Each shape's blocks are whole launches: every index as often as the shape was launched.
    let mut launches: HashMap<(&str, u32, u32, u32), Vec<u32>> = HashMap::new();
    for (&(source, grid, grid_y, threads, _, _), &count) in &seen {
        launches
            .entry((source, grid, grid_y, threads))
            .or_default()
            .push(count);
    }
    for ((source, grid, grid_y, threads), counts) in &launches {
        assert_eq!(
            counts.len() as u32,
            grid * grid_y,
            "{source} {grid} x {grid_y} x {threads}: missing block indices"
        );
        assert!(
            counts.windows(2).all(|w| w[0] == w[1]),
            "{source} {grid} x {threads}: {counts:?}"
        );
    }
    // Both sources recorded, each under its own name.
    for source in ["ntt", "elementwise"] {
        assert!(
            launches.keys().any(|k| k.0 == source),
            "no {source} blocks: {:?}",
            launches.keys()
        );
    }
    // Recording restarted: nothing since.
    assert_eq!(take_timeline(&dev).unwrap().map(|b| b.len()), Some(0));
}
