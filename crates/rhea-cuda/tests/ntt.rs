//! The GPU NTT against its twin `rhea_math::ntt::NttTable`, bit for bit, on random non-zero
//! inputs: fast (every compiled split) and naive, forward, inverse, round trip, limb ranges,
//! N = 2^12 … 2^17, 1 to 9 limbs, 1 to 3 polynomials, 30- to 61-bit primes; grouped runs, the
//! fused epilogue and the centred-lift prologue (rescaling). Also compiles the kernels with NVRTC
//! (no GPU needed).

mod common;

use common::{primes, random_rns, require_gpu, require_nvrtc, rng};
use rhea_cuda::ntt::{
    splits, DeviceNttTables, NttAlgorithm, NttBatch, NttDirection, NttSplit, NTT,
};
use rhea_cuda::registry;
use rhea_cuda::CudaError;
use rhea_math::ntt::NttTable;
use rhea_math::Modulus;

#[test]
#[ignore = "needs NVRTC (run with --include-ignored; scripts/check-kernels.sh and scripts/gpu-run.sh do)"]
fn ntt_kernels_compile_for_sm90() {
    require_nvrtc("ntt_kernels_compile_for_sm90");
    let cubin = registry::compile(&NTT, "sm_90").unwrap_or_else(|e| panic!("{e}"));
    assert!(!cubin.is_empty());
    let ptx = registry::compile(&NTT, "compute_90").unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&ptx);
    let mut names = vec![
        "ntt_naive_fwd_stage".to_string(),
        "ntt_naive_inv_stage".to_string(),
        "ntt_bf_fwd_throughput".to_string(),
        "ntt_bf_inv_throughput".to_string(),
        "ntt_bf32_fwd_throughput".to_string(),
        "ntt_bf32_inv_throughput".to_string(),
        "ntt_bff64_fwd_throughput".to_string(),
        "ntt_bff64_inv_throughput".to_string(),
    ];
    for log_n in 12..=17 {
        for s in splits(log_n) {
            for d in ["fwd", "inv"] {
                let dd = if s.derived_twiddles { "d" } else { "" };
                names.push(format!(
                    "ntt_{d}_cols_{log_n}_{}_{}",
                    s.log_n1, s.cols_per_block
                ));
                names.push(format!("ntt_{d}_rows{dd}_{log_n}_{}", s.log_n1));
            }
            names.push(format!("ntt_fwd_rowsde_{log_n}_{}", s.log_n1));
            names.push(format!("ntt_fwd_rowsef_{log_n}_{}", s.log_n1));
            for l in ["colsl", "colslf", "colsla", "colslaf", "colsf"] {
                names.push(format!(
                    "ntt_fwd_{l}_{log_n}_{}_{}",
                    s.log_n1, s.cols_per_block
                ));
            }
        }
    }
    for f in names {
        assert!(
            text.contains(&format!(".entry {f}(")),
            "{f} missing from PTX"
        );
    }
}

/// Distinct NTT-friendly primes for `degree`, one per entry of `bits`.
fn moduli_for(bits: &[u32], degree: usize) -> Vec<Modulus> {
    let mut out: Vec<Modulus> = Vec::new();
    for &b in bits {
        let taken = out.iter().filter(|m| m.bits() == b).count();
        out.push(primes(b, taken + 1, degree)[taken]);
    }
    out
}

fn host_tables(moduli: &[Modulus], degree: usize) -> Vec<NttTable> {
    moduli
        .iter()
        .map(|&m| NttTable::new(m, degree).unwrap())
        .collect()
}

/// The CPU transform of limbs `start .. start + count` of every polynomial, limb `j` with
/// `tables[first_table + j]`.
fn cpu_transform(
    tables: &[NttTable],
    data: &[u64],
    batch: &NttBatch,
    dir: NttDirection,
) -> Vec<u64> {
    let n = tables[0].degree();
    let mut out = data.to_vec();
    for p in 0..batch.polys {
        for j in batch.start..batch.start + batch.count {
            let off = (p * batch.limbs + j) * n;
            let t = &tables[batch.first_table + j];
            let limb = &mut out[off..off + n];
            match dir {
                NttDirection::Forward => t.forward(limb).unwrap(),
                NttDirection::Inverse => t.inverse(limb).unwrap(),
            }
        }
    }
    out
}

/// The factor words `(w_t, shoup(w_t))` per table that the epilogue and prologue factors take.
fn shoup_pairs(moduli: &[Modulus], w: &[u64]) -> Vec<u64> {
    moduli
        .iter()
        .zip(w)
        .flat_map(|(m, &wi)| [wi, m.shoup(wi)])
        .collect()
}

fn assert_same(got: &[u64], want: &[u64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        let bad = got.iter().zip(want).filter(|(a, b)| a != b).count();
        panic!(
            "{what}: {bad} of {} words differ; first at {i}: got {}, want {}",
            got.len(),
            got[i],
            want[i]
        );
    }
}

fn algorithms(log_n: u32) -> Vec<(String, NttAlgorithm)> {
    let mut v = vec![("fast".to_string(), NttAlgorithm::Fast)];
    for s in splits(log_n) {
        v.push((
            format!("split {}", s.label(log_n)),
            NttAlgorithm::FastSplit(s),
        ));
    }
    v.push(("naive".to_string(), NttAlgorithm::Naive));
    v
}

/// Forward and inverse of every algorithm against the CPU, and the round trip.
fn check_case(log_n: u32, bits: &[u32], polys: usize) {
    let test = format!("ntt 2^{log_n} {bits:?} x{polys}");
    let dev = require_gpu(&test);
    let degree = 1usize << log_n;
    let moduli = moduli_for(bits, degree);
    let tables = host_tables(&moduli, degree);
    let gpu = DeviceNttTables::new(&dev, &tables).unwrap();
    let limbs = bits.len();
    let batch = NttBatch::all(polys, limbs);
    let mut r = rng(&test);
    for dir in [NttDirection::Forward, NttDirection::Inverse] {
        for (name, alg) in algorithms(log_n) {
            // Fresh inputs for every algorithm.
            let input = random_rns(&mut r, &moduli, degree, polys);
            let want = cpu_transform(&tables, &input, &batch, dir);
            let mut buf = dev.upload(&input).unwrap();
            gpu.transform(&mut buf, &batch, dir, alg).unwrap();
            let got = dev.download(&buf).unwrap();
            assert_same(&got, &want, &format!("{test} {dir:?} {name}"));
        }
    }
    // Round trip through the public entry points.
    let input = random_rns(&mut r, &moduli, degree, polys);
    let mut buf = dev.upload(&input).unwrap();
    gpu.forward(&mut buf, polys, limbs).unwrap();
    let mid = dev.download(&buf).unwrap();
    assert_ne!(mid, input, "{test}: the forward transform changed nothing");
    gpu.inverse(&mut buf, polys, limbs).unwrap();
    assert_same(
        &dev.download(&buf).unwrap(),
        &input,
        &format!("{test} round trip"),
    );
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn ntt_4096() {
    check_case(12, &[30], 1);
    check_case(12, &[50, 60, 61], 2);
    check_case(12, &[30, 50, 60, 61, 61, 60, 50, 30], 3);
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn ntt_8192() {
    check_case(13, &[61], 1);
    check_case(13, &[30, 50, 60, 61, 30, 50, 60, 61, 60], 2);
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn ntt_16384() {
    check_case(14, &[60, 61, 50], 3);
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn ntt_32768() {
    check_case(15, &[30, 50, 60], 1);
    check_case(15, &[60, 61, 60, 61, 60, 61, 60, 61], 2);
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn ntt_65536() {
    check_case(16, &[60], 1);
    check_case(16, &[30, 50, 61], 3);
    check_case(16, &[60, 60, 60, 60, 61, 61, 61, 61], 2);
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn ntt_131072() {
    check_case(17, &[61, 30, 50], 2);
    check_case(17, &[60, 60, 61, 61, 50, 50, 30, 30], 1);
}

/// Transforms launched back to back with no host synchronisation between them (each may start
/// while the previous one drains: programmatic dependent launch): a chain of forward and inverse
/// transforms over the whole batch, and over alternating halves of it, must still equal the CPU's
/// chain, i.e. every kernel must see all of the previous kernel's writes.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn back_to_back_transforms_see_each_others_writes() {
    for (log_n, limbs, polys) in [
        (16u32, 32usize, 1usize),
        (17, 6, 2),
        (14, 24, 3),
        (12, 9, 2),
    ] {
        let test = format!("ntt chain 2^{log_n} x{limbs} x{polys}");
        let dev = require_gpu(&test);
        let degree = 1usize << log_n;
        let bits: Vec<u32> = (0..limbs).map(|i| [61, 50, 40, 60][i % 4]).collect();
        let moduli = moduli_for(&bits, degree);
        let tables = host_tables(&moduli, degree);
        let gpu = DeviceNttTables::new(&dev, &tables).unwrap();
        let mut r = rng(&test);
        let input = random_rns(&mut r, &moduli, degree, polys);
        let all = NttBatch::all(polys, limbs);
        let low = NttBatch {
            count: limbs / 2,
            ..NttBatch::all(polys, limbs)
        };
        let high = NttBatch {
            start: limbs / 2,
            count: limbs - limbs / 2,
            ..NttBatch::all(polys, limbs)
        };
        use NttDirection::{Forward, Inverse};
        let chain = [
            (&all, Forward),
            (&low, Inverse),
            (&low, Forward),
            (&all, Inverse),
            (&high, Forward),
            (&all, Forward),
            (&all, Inverse),
            (&high, Inverse),
            (&all, Forward),
        ];
        let mut want = input.clone();
        let mut buf = dev.upload(&input).unwrap();
        for (batch, dir) in chain {
            want = cpu_transform(&tables, &want, batch, dir);
            gpu.transform(&mut buf, batch, dir, NttAlgorithm::Fast)
                .unwrap();
        }
        assert_ne!(want, input, "{test}: the chain changed nothing");
        assert_same(&dev.download(&buf).unwrap(), &want, &test);
    }
}

/// The row flags (`ntt_dep_wait`: the second kernel of a transform starts on a row once the
/// first has finished it) cover launches of up to 4096 rows; larger ones wait for the whole first
/// kernel. Launches at the limit, just above it and small ones, back to back on one table set with
/// no host synchronisation, must each equal the CPU (flags of one launch never release another's
/// rows).
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn row_flags_hold_at_their_limit_and_beyond() {
    let test = "ntt row flags 2^12";
    let dev = require_gpu(test);
    let degree = 1usize << 12;
    let moduli = moduli_for(&[60], degree);
    let tables = host_tables(&moduli, degree);
    let gpu = DeviceNttTables::new(&dev, &tables).unwrap();
    let mut r = rng(test);
    use NttDirection::{Forward, Inverse};
    // 4096 rows (flagged), 4097 (not), 3 (flagged).
    let sizes = [4096usize, 4097, 3];
    let inputs: Vec<Vec<u64>> = sizes
        .iter()
        .map(|&polys| random_rns(&mut r, &moduli, degree, polys))
        .collect();
    let mut want = inputs.clone();
    let mut bufs: Vec<_> = inputs.iter().map(|x| dev.upload(x).unwrap()).collect();
    // Net one forward transform, so that the result differs from the input.
    for dir in [Forward, Forward, Inverse, Forward, Inverse] {
        for (k, &polys) in sizes.iter().enumerate() {
            let batch = NttBatch::all(polys, 1);
            want[k] = cpu_transform(&tables, &want[k], &batch, dir);
            gpu.transform(&mut bufs[k], &batch, dir, NttAlgorithm::Fast)
                .unwrap();
        }
    }
    for (k, &polys) in sizes.iter().enumerate() {
        assert_ne!(want[k], inputs[k], "{test}: the chain changed nothing");
        let got = dev.download(&bufs[k]).unwrap();
        assert_same(&got, &want[k], &format!("{test} x{polys}"));
    }
}

/// Transforms from several host threads at once on one device, through one shared table set
/// and through a table set per thread: every thread's chain must equal the CPU's. With row flags
/// a flagged pair's two kernels must be adjacent on the device's one stream (the second does not
/// wait for the kernel before it), which the launch hold guarantees against other threads.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn row_flags_hold_under_concurrent_threads() {
    let test = "ntt row flags threads";
    let dev = require_gpu(test);
    let (log_n, limbs) = (14u32, 6usize);
    let degree = 1usize << log_n;
    let moduli = moduli_for(&[60, 50, 40, 60, 61, 30], degree);
    let tables = host_tables(&moduli, degree);
    let shared = DeviceNttTables::new(&dev, &tables).unwrap();
    use NttDirection::{Forward, Inverse};
    std::thread::scope(|scope| {
        for t in 0..4usize {
            let (dev, moduli, tables, shared) = (&dev, &moduli, &tables, &shared);
            scope.spawn(move || {
                let own = DeviceNttTables::new(dev, tables).unwrap();
                let gpu = if t % 2 == 0 { shared } else { &own };
                let name = format!("{test} {t}");
                let mut r = rng(&name);
                let polys = 1 + t;
                let input = random_rns(&mut r, moduli, degree, polys);
                let batch = NttBatch::all(polys, limbs);
                let mut want = input.clone();
                let mut buf = dev.upload(&input).unwrap();
                for k in 0..40 {
                    let dir = if k % 3 == 2 { Inverse } else { Forward };
                    want = cpu_transform(tables, &want, &batch, dir);
                    gpu.transform(&mut buf, &batch, dir, NttAlgorithm::Fast)
                        .unwrap();
                }
                assert_ne!(want, input, "{name}: the chain changed nothing");
                assert_same(&dev.download(&buf).unwrap(), &want, &name);
            });
        }
    });
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn naive_serves_small_degrees() {
    let dev = require_gpu("naive_serves_small_degrees");
    let mut r = rng("naive_serves_small_degrees");
    for log_n in [1u32, 2, 3, 5, 8, 11] {
        let degree = 1usize << log_n;
        let moduli = moduli_for(&[30, 61], degree);
        let tables = host_tables(&moduli, degree);
        let gpu = DeviceNttTables::new(&dev, &tables).unwrap();
        assert!(splits(log_n).is_empty());
        for dir in [NttDirection::Forward, NttDirection::Inverse] {
            let input = random_rns(&mut r, &moduli, degree, 2);
            let batch = NttBatch::all(2, 2);
            let want = cpu_transform(&tables, &input, &batch, dir);
            let mut buf = dev.upload(&input).unwrap();
            // Fast falls back to naive outside 2^12 … 2^17.
            gpu.transform(&mut buf, &batch, dir, NttAlgorithm::Fast)
                .unwrap();
            assert_same(
                &dev.download(&buf).unwrap(),
                &want,
                &format!("2^{log_n} {dir:?}"),
            );
        }
    }
}

/// The NTT benchmark runs end to end on a small case, with its arithmetic-floor row (the
/// butterflies alone in registers), which must be faster than the whole transform.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn ntt_bench_reports_the_arithmetic_floor() {
    use rhea_cuda::ntt::{bench_ntt, NttBenchCase, NttBenchOptions};
    let dev = require_gpu("ntt_bench_reports_the_arithmetic_floor");
    let opts = NttBenchOptions {
        cases: vec![NttBenchCase {
            name: "small".into(),
            log_degree: 14,
            limbs: 4,
            polys: 1,
            prime_bits: 60,
        }],
        warmup: 1,
        samples: 3,
        all_splits: false,
        naive: false,
        phases: true,
    };
    let report = bench_ntt(&dev, &opts).unwrap();
    let row = |alg: &str, dir: &str| {
        report
            .rows
            .iter()
            .find(|r| r.algorithm.starts_with(alg) && r.direction == dir)
            .unwrap_or_else(|| panic!("no {alg} {dir} row"))
    };
    // The rows are reported and self-consistent (rates are the case's 4 limb-NTTs over the
    // median). How the floor compares with the transform is a measurement, not a test: at this
    // small size both are dominated by the launch, and either may come out ahead.
    for dir in ["forward", "inverse"] {
        for alg in ["arith floor 2x32", "arith floor (registers)", "fast"] {
            let r = row(alg, dir);
            assert!(r.median_us > 0.0, "{alg} {dir}: {} us", r.median_us);
            let rate = 4.0 / (r.median_us * 1e-6);
            assert!(
                (r.limb_ntts_per_s - rate).abs() <= 1e-6 * rate,
                "{alg} {dir}: {} limb-NTT/s for {} us",
                r.limb_ntts_per_s,
                r.median_us
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn limb_ranges_touch_only_their_limbs() {
    let dev = require_gpu("limb_ranges_touch_only_their_limbs");
    let mut r = rng("limb_ranges_touch_only_their_limbs");
    for log_n in [12u32, 16] {
        let degree = 1usize << log_n;
        let moduli = moduli_for(&[30, 50, 60, 61, 60, 50, 30, 61, 60], degree);
        let tables = host_tables(&moduli, degree);
        let gpu = DeviceNttTables::new(&dev, &tables).unwrap();
        // Limbs 2..5 of 3 polynomials of 7 limbs (limb j uses table j).
        let (polys, limbs) = (3, 7);
        let buf_moduli = &moduli[..limbs];
        for dir in [NttDirection::Forward, NttDirection::Inverse] {
            for (name, alg) in algorithms(log_n) {
                let batch = NttBatch::limb_range(polys, limbs, 2, 3);
                let input = random_rns(&mut r, buf_moduli, degree, polys);
                let want = cpu_transform(&tables, &input, &batch, dir);
                let mut buf = dev.upload(&input).unwrap();
                gpu.transform(&mut buf, &batch, dir, alg).unwrap();
                assert_same(
                    &dev.download(&buf).unwrap(),
                    &want,
                    &format!("2^{log_n} limbs 2..5 {dir:?} {name}"),
                );
            }
        }
        // The convenience entry points, and a buffer of "P" limbs served by tables 6..9.
        let input = random_rns(&mut r, buf_moduli, degree, polys);
        let mut buf = dev.upload(&input).unwrap();
        gpu.forward_limbs(&mut buf, polys, limbs, 4, 3).unwrap();
        let batch = NttBatch::limb_range(polys, limbs, 4, 3);
        let want = cpu_transform(&tables, &input, &batch, NttDirection::Forward);
        assert_same(&dev.download(&buf).unwrap(), &want, "forward_limbs");
        gpu.inverse_limbs(&mut buf, polys, limbs, 4, 3).unwrap();
        assert_same(&dev.download(&buf).unwrap(), &input, "inverse_limbs");

        let p_moduli = &moduli[6..9];
        let input = random_rns(&mut r, p_moduli, degree, 2);
        let batch = NttBatch::all(2, 3).with_first_table(6);
        let want = cpu_transform(&tables, &input, &batch, NttDirection::Forward);
        let mut buf = dev.upload(&input).unwrap();
        gpu.transform(&mut buf, &batch, NttDirection::Forward, NttAlgorithm::Fast)
            .unwrap();
        assert_same(&dev.download(&buf).unwrap(), &want, "first_table 6");
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn bad_batches_are_errors() {
    let dev = require_gpu("bad_batches_are_errors");
    let degree = 1 << 12;
    let moduli = moduli_for(&[50, 60, 61], degree);
    let tables = host_tables(&moduli, degree);
    let gpu = DeviceNttTables::new(&dev, &tables).unwrap();
    let mut buf = dev.alloc_zeroed(2 * 3 * degree).unwrap();
    let fwd = NttDirection::Forward;
    let fast = NttAlgorithm::Fast;
    let shape = |r: rhea_cuda::Result<()>| matches!(r, Err(CudaError::Shape(_)));
    assert!(shape(gpu.forward(&mut buf, 2, 2)), "wrong length");
    assert!(shape(gpu.forward(&mut buf, 4, 2)), "wrong length");
    assert!(
        shape(gpu.forward_limbs(&mut buf, 2, 3, 2, 2)),
        "range past the limbs"
    );
    assert!(
        shape(gpu.forward_limbs(&mut buf, 2, 3, 0, 0)),
        "empty range"
    );
    assert!(shape(gpu.transform(
        &mut buf,
        &NttBatch::all(2, 3).with_first_table(1),
        fwd,
        fast
    )));
    let mut big = dev.alloc_zeroed(4 * degree).unwrap();
    assert!(shape(gpu.forward(&mut big, 1, 4)), "more limbs than tables");
    let bad_split = NttAlgorithm::FastSplit(NttSplit {
        log_n1: 5,
        cols_per_block: 3,
        derived_twiddles: false,
    });
    assert!(matches!(
        gpu.transform(&mut buf, &NttBatch::all(2, 3), fwd, bad_split),
        Err(CudaError::InvalidArgument(_))
    ));
    assert!(matches!(
        DeviceNttTables::new(&dev, &[]),
        Err(CudaError::InvalidArgument(_))
    ));
    let other = NttTable::new(moduli[0], degree / 2).unwrap();
    assert!(matches!(
        DeviceNttTables::new(&dev, &[tables[0].clone(), other]),
        Err(CudaError::Shape(_))
    ));
    // Nothing was written by the refused calls.
    assert!(dev.download(&buf).unwrap().iter().all(|&x| x == 0));
}

/// The CPU transform of `count` limbs of `data` (a `[limb][N]` buffer) from limb `first`, limb
/// `first + j` with `tables[table + j]`.
fn cpu_run(
    tables: &[NttTable],
    data: &mut [u64],
    first: usize,
    count: usize,
    table: usize,
    dir: NttDirection,
) {
    let n = tables[0].degree();
    for j in 0..count {
        let limb = &mut data[(first + j) * n..(first + j + 1) * n];
        match dir {
            NttDirection::Forward => tables[table + j].forward(limb).unwrap(),
            NttDirection::Inverse => tables[table + j].inverse(limb).unwrap(),
        }
    }
}

/// Grouped transforms: several runs with holes over several buffers, tables not equal to the
/// limb index (the ModUp and ModDown shapes), both directions, bit for bit against the CPU; the
/// limbs outside the runs are untouched.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn grouped_runs_match_the_cpu() {
    use rhea_cuda::ntt::NttRun;
    for (log_n, bits) in [
        (12u32, vec![30u32, 50, 60, 61, 40, 60]),
        (16, vec![60, 40, 40, 40, 40, 60, 60]),
        (17, vec![50, 61, 30, 60]),
    ] {
        let test = format!("grouped runs 2^{log_n}");
        let dev = require_gpu(&test);
        let degree = 1usize << log_n;
        let moduli = moduli_for(&bits, degree);
        let tables = host_tables(&moduli, degree);
        let gpu = DeviceNttTables::new(&dev, &tables).unwrap();
        let l = bits.len();
        let mut r = rng(&test);
        // Buffer 0: l limbs, runs [0, 1) and [3, l) (a hole at 1..3); buffer 1: 3 limbs whose
        // limb j uses table l - 3 + j; buffer 2: one limb with table 2.
        let runs = [
            NttRun {
                buf: 0,
                first_limb: 0,
                limbs: 1,
                table: 0,
            },
            NttRun {
                buf: 0,
                first_limb: 3,
                limbs: l - 3,
                table: 3,
            },
            NttRun {
                buf: 1,
                first_limb: 0,
                limbs: 3,
                table: l - 3,
            },
            NttRun {
                buf: 2,
                first_limb: 0,
                limbs: 1,
                table: 2,
            },
        ];
        for dir in [NttDirection::Forward, NttDirection::Inverse] {
            let host: Vec<Vec<u64>> = [l, 3, 1]
                .iter()
                .map(|&k| random_rns(&mut r, &moduli[..k], degree, 1))
                .collect();
            // Inputs must be canonical for their table: regenerate buffer 1 and 2 per table.
            let mut host = host;
            host[1] = random_rns(&mut r, &moduli[l - 3..], degree, 1);
            host[2] = random_rns(&mut r, &moduli[2..3], degree, 1);
            let mut want = host.clone();
            for run in &runs {
                cpu_run(
                    &tables,
                    &mut want[run.buf],
                    run.first_limb,
                    run.limbs,
                    run.table,
                    dir,
                );
            }
            let mut b0 = dev.upload(&host[0]).unwrap();
            let mut b1 = dev.upload(&host[1]).unwrap();
            let mut b2 = dev.upload(&host[2]).unwrap();
            gpu.transform_runs(&mut [&mut b0, &mut b1, &mut b2], &runs, dir)
                .unwrap();
            for (k, b) in [&b0, &b1, &b2].iter().enumerate() {
                assert_same(
                    &dev.download(b).unwrap(),
                    &want[k],
                    &format!("{test} {dir:?} buffer {k}"),
                );
            }
        }
        // Overlapping runs and runs outside their buffer are typed errors.
        let mut b0 = dev.upload(&random_rns(&mut r, &moduli, degree, 1)).unwrap();
        let overlap = [
            NttRun {
                buf: 0,
                first_limb: 0,
                limbs: 2,
                table: 0,
            },
            NttRun {
                buf: 0,
                first_limb: 1,
                limbs: 1,
                table: 1,
            },
        ];
        assert!(matches!(
            gpu.transform_runs(&mut [&mut b0], &overlap, NttDirection::Forward),
            Err(CudaError::Shape(_))
        ));
        let outside = [NttRun {
            buf: 0,
            first_limb: l - 1,
            limbs: 2,
            table: 0,
        }];
        assert!(matches!(
            gpu.transform_runs(&mut [&mut b0], &outside, NttDirection::Forward),
            Err(CudaError::Shape(_))
        ));
    }
}

/// The fused forward epilogue `[c +] (x − NTT(run)) · w`, with and without `c`, against the CPU
/// composition, at N = 2^13, 2^16 and 2^17.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn forward_epilogue_matches_the_cpu() {
    use rhea_cuda::ntt::{EpilogueRun, NttRun};
    for (log_n, bits) in [
        (13u32, vec![60u32, 40, 50, 61, 30]),
        (16, vec![60, 40, 40, 60, 60]),
        (17, vec![61, 50, 30, 60, 40]),
        (16, vec![40, 46, 30, 46, 40]),
    ] {
        let test = format!("ntt epilogue 2^{log_n} {bits:?}");
        let dev = require_gpu(&test);
        let degree = 1usize << log_n;
        let n = degree;
        let moduli = moduli_for(&bits, degree);
        let tables = host_tables(&moduli, degree);
        let gpu = DeviceNttTables::new(&dev, &tables).unwrap();
        // The same words with the FP64 rows off and on (the path under test is the one taken).
        for fp64_on in [false, true] {
            gpu.set_fp64_rows(fp64_on);
            let test = format!("{test}, FP64 rows {fp64_on}");
            let l = bits.len();
            let mut r = rng(&test);
            // Two sources of 2 limbs each: source 0 limbs use tables 0..2, source 1 tables 2..4.
            let src_host = [
                random_rns(&mut r, &moduli[0..2], degree, 1),
                random_rns(&mut r, &moduli[2..4], degree, 1),
            ];
            // x and c over all l limbs (operand limb t uses modulus t); w random per table.
            let x_host = random_rns(&mut r, &moduli, degree, 1);
            let c_host = random_rns(&mut r, &moduli, degree, 1);
            let w: Vec<u64> = moduli
                .iter()
                .map(|m| 1 + (x_host[7] % (m.value() - 1)))
                .collect();
            let pairs = shoup_pairs(&moduli, &w);
            let runs = [
                NttRun {
                    buf: 0,
                    first_limb: 0,
                    limbs: 2,
                    table: 0,
                },
                NttRun {
                    buf: 1,
                    first_limb: 0,
                    limbs: 2,
                    table: 2,
                },
            ];
            let eligible = moduli[..4].iter().any(|m| m.value() < 1 << 46);
            assert_eq!(
                gpu.epilogue_takes_fp64(None, &runs),
                fp64_on && eligible,
                "{test}"
            );
            let mut s0 = dev.upload(&src_host[0]).unwrap();
            let mut s1 = dev.upload(&src_host[1]).unwrap();
            let x = dev.upload(&x_host).unwrap();
            let c = dev.upload(&c_host).unwrap();
            let wd = dev.upload(&pairs).unwrap();
            let mut out0 = dev.alloc(2 * n).unwrap();
            let mut out1 = dev.alloc(3 * n).unwrap();
            let epi = [
                EpilogueRun {
                    out: 0,
                    out_limb: 0,
                    x: &x,
                    x_limb: 0,
                    c: None,
                },
                EpilogueRun {
                    out: 1,
                    out_limb: 1,
                    x: &x,
                    x_limb: 2,
                    c: Some((&c, 2)),
                },
            ];
            out1.copy_from_host(&vec![7u64; 3 * n]).unwrap();
            gpu.forward_runs_epilogue(
                &mut [&mut s0, &mut s1],
                &runs,
                &mut [&mut out0, &mut out1],
                &epi,
                &wd,
            )
            .unwrap();
            // The CPU composition.
            let mut want0 = vec![0u64; 2 * n];
            let mut want1 = vec![7u64; 3 * n];
            for (run, src) in runs.iter().zip(&src_host) {
                let mut v = src.clone();
                cpu_run(
                    &tables,
                    &mut v,
                    0,
                    run.limbs,
                    run.table,
                    NttDirection::Forward,
                );
                for j in 0..run.limbs {
                    let t = run.table + j;
                    let m = &moduli[t];
                    for k in 0..n {
                        let d = m.mul(m.sub(x_host[t * n + k], v[j * n + k]), w[t]);
                        if run.buf == 0 {
                            want0[j * n + k] = d;
                        } else {
                            want1[(1 + j) * n + k] = m.add(c_host[t * n + k], d);
                        }
                    }
                }
            }
            assert_same(
                &dev.download(&out0).unwrap(),
                &want0,
                &format!("{test} no add"),
            );
            assert_same(
                &dev.download(&out1).unwrap(),
                &want1,
                &format!("{test} with add"),
            );
            assert!(l >= 4);
            // With an automorphism: the same results, each limb permuted by σ_g as
            // automorphism_ntt's gather out[i] = in[bitrev(((2 bitrev(i) + 1) g mod 2N − 1) / 2)].
            for g in [5u64.pow(3) % (2 * n as u64), 2 * n as u64 - 1] {
                let mut s0 = dev.upload(&src_host[0]).unwrap();
                let mut s1 = dev.upload(&src_host[1]).unwrap();
                out1.copy_from_host(&vec![7u64; 3 * n]).unwrap();
                gpu.forward_runs_epilogue_automorphism(
                    &mut [&mut s0, &mut s1],
                    &runs,
                    &mut [&mut out0, &mut out1],
                    &epi,
                    &wd,
                    Some(g),
                )
                .unwrap();
                let br = |i: usize| i.reverse_bits() >> (usize::BITS - log_n);
                let perm = |want: &[u64], first: usize| {
                    let mut p = want.to_vec();
                    for limb in first..want.len() / n {
                        for i in 0..n {
                            let e = ((2 * br(i) as u64 + 1) * g) % (2 * n as u64);
                            p[limb * n + i] = want[limb * n + br(((e - 1) / 2) as usize)];
                        }
                    }
                    p
                };
                assert_same(
                    &dev.download(&out0).unwrap(),
                    &perm(&want0, 0),
                    &format!("{test} no add, sigma_{g}"),
                );
                assert_same(
                    &dev.download(&out1).unwrap(),
                    &perm(&want1, 1),
                    &format!("{test} with add, sigma_{g}"),
                );
            }
            // Consuming x (its lines dropped from L2 once read): the same results, from a copy of x
            // whose words are undefined afterwards.
            let mut s0 = dev.upload(&src_host[0]).unwrap();
            let mut s1 = dev.upload(&src_host[1]).unwrap();
            let x_dead = dev.upload(&x_host).unwrap();
            let epi_dead = epi.map(|e| EpilogueRun { x: &x_dead, ..e });
            out1.copy_from_host(&vec![7u64; 3 * n]).unwrap();
            gpu.forward_runs_epilogue_consuming_x(
                &mut [&mut s0, &mut s1],
                &runs,
                &mut [&mut out0, &mut out1],
                &epi_dead,
                &wd,
                None,
            )
            .unwrap();
            assert_same(
                &dev.download(&out0).unwrap(),
                &want0,
                &format!("{test} no add, x consumed"),
            );
            assert_same(
                &dev.download(&out1).unwrap(),
                &want1,
                &format!("{test} with add, x consumed"),
            );
            // A consumed x shared by two runs, or by a run's x and an addend, is a typed error.
            let same_x = [
                epi_dead[0],
                EpilogueRun {
                    x_limb: 1,
                    ..epi_dead[1]
                },
            ];
            let x_as_c = [
                epi_dead[0],
                EpilogueRun {
                    c: Some((&x_dead, 0)),
                    ..epi_dead[1]
                },
            ];
            for bad in [same_x, x_as_c] {
                let mut s0 = dev.upload(&src_host[0]).unwrap();
                let mut s1 = dev.upload(&src_host[1]).unwrap();
                assert!(matches!(
                    gpu.forward_runs_epilogue_consuming_x(
                        &mut [&mut s0, &mut s1],
                        &runs,
                        &mut [&mut out0, &mut out1],
                        &bad,
                        &wd,
                        None,
                    ),
                    Err(CudaError::Shape(_))
                ));
            }
            let mut s0 = dev.upload(&src_host[0]).unwrap();
            assert!(matches!(
                gpu.forward_runs_epilogue_automorphism(
                    &mut [&mut s0],
                    &runs[..1],
                    &mut [&mut out0],
                    &epi[..1],
                    &wd,
                    Some(4)
                ),
                Err(CudaError::InvalidArgument(_))
            ));
            // A mismatched epilogue list is a typed error.
            let mut s0 = dev.upload(&src_host[0]).unwrap();
            assert!(matches!(
                gpu.forward_runs_epilogue(&mut [&mut s0], &runs[..1], &mut [&mut out0], &[], &wd),
                Err(CudaError::Shape(_))
            ));
        }
    }
}

/// The ModDown's shape: both polynomials' runs over the same tables (the row kernel pairs their
/// rows, `ntt_fwd_rowse{d,f}_*_p`), the second with an addend, in a deep-preset-like prime mix
/// (a 60-bit first prime, 40-bit others) and with 46-bit primes, FP64 rows off and on.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn paired_epilogue_rows_match_the_cpu() {
    use rand::Rng;
    use rhea_cuda::ntt::{EpilogueRun, NttRun};
    for (log_n, bits) in [
        (16u32, vec![60u32, 40, 40, 40, 40, 40]),
        (15, vec![46, 46, 40, 60, 46]),
    ] {
        let test = format!("ntt paired epilogue 2^{log_n}");
        let dev = require_gpu(&test);
        let n = 1usize << log_n;
        let moduli = moduli_for(&bits, n);
        let tables = host_tables(&moduli, n);
        let gpu = DeviceNttTables::new(&dev, &tables).unwrap();
        let l = bits.len();
        for fp64_on in [false, true] {
            gpu.set_fp64_rows(fp64_on);
            let test = format!("{test}, FP64 rows {fp64_on}");
            let mut r = rng(&test);
            // One buffer holding both polynomials' l limbs; x and c likewise.
            let src_host = random_rns(&mut r, &moduli, n, 2);
            let x_host = random_rns(&mut r, &moduli, n, 2);
            let c_host = random_rns(&mut r, &moduli, n, 1);
            let w: Vec<u64> = moduli
                .iter()
                .map(|m| 1 + r.random_range(0..m.value() - 1))
                .collect();
            let pairs = shoup_pairs(&moduli, &w);
            let runs = [0, 1].map(|p| NttRun {
                buf: 0,
                first_limb: p * l,
                limbs: l,
                table: 0,
            });
            assert_eq!(gpu.epilogue_takes_fp64(None, &runs), fp64_on, "{test}");
            let mut src = dev.upload(&src_host).unwrap();
            let x = dev.upload(&x_host).unwrap();
            let c = dev.upload(&c_host).unwrap();
            let wd = dev.upload(&pairs).unwrap();
            let mut out0 = dev.alloc(l * n).unwrap();
            let mut out1 = dev.alloc(l * n).unwrap();
            let epi = [0, 1].map(|p| EpilogueRun {
                out: p,
                out_limb: 0,
                x: &x,
                x_limb: p * l,
                c: (p == 1).then_some((&c, 0)),
            });
            gpu.forward_runs_epilogue(
                &mut [&mut src],
                &runs,
                &mut [&mut out0, &mut out1],
                &epi,
                &wd,
            )
            .unwrap();
            let mut v = src_host.clone();
            cpu_run(&tables, &mut v, 0, l, 0, NttDirection::Forward);
            cpu_run(&tables, &mut v, l, l, 0, NttDirection::Forward);
            for (p, out) in [&out0, &out1].into_iter().enumerate() {
                let mut want = vec![0u64; l * n];
                for t in 0..l {
                    let m = &moduli[t];
                    for k in 0..n {
                        let i = (p * l + t) * n + k;
                        let d = m.mul(m.sub(x_host[i], v[i]), w[t]);
                        want[t * n + k] = if p == 1 {
                            m.add(c_host[t * n + k], d)
                        } else {
                            d
                        };
                    }
                }
                assert_same(
                    &dev.download(out).unwrap(),
                    &want,
                    &format!("{test} polynomial {p}"),
                );
            }
        }
    }
}

/// The centred lift of `t` (canonical modulo the odd `q_last`) to `m`, with rhea_math's
/// semantics: `t` if `t ≤ ⌊q_last/2⌋`, else `t − q_last`, reduced modulo `m`.
fn lift_centred(t: u64, q_last: u64, m: &Modulus) -> u64 {
    if t <= q_last / 2 {
        m.reduce(t)
    } else {
        m.reduce_i128(t as i128 - q_last as i128)
    }
}

/// The CPU twin of one lifted epilogue run over `tables[range]`: limb `j` is
/// `[c +] (x − NTT(lift(t))) · w` modulo that table's prime, with `t` one limb canonical modulo
/// `q_last`, `x` and `c` holding the run's limbs from their start and `w` indexed by table.
fn lifted_epilogue_cpu(
    tables: &[NttTable],
    range: std::ops::Range<usize>,
    t: &[u64],
    q_last: u64,
    x: &[u64],
    c: Option<&[u64]>,
    w: &[u64],
) -> Vec<u64> {
    let n = t.len();
    let mut out = vec![0u64; range.len() * n];
    for (j, tb) in range.enumerate() {
        let m = tables[tb].modulus();
        let mut v: Vec<u64> = t.iter().map(|&tk| lift_centred(tk, q_last, m)).collect();
        tables[tb].forward(&mut v).unwrap();
        for k in 0..n {
            let d = m.mul(m.sub(x[j * n + k], v[k]), w[tb]);
            out[j * n + k] = c.map_or(d, |c| m.add(c[j * n + k], d));
        }
    }
    out
}

/// The shapes of the lifted-prologue tests: every N = 2^12 … 2^17, the last prime of each list
/// is `q_last` (above, below and between the others). Primes below 2^46 (30 to 46 bits) take
/// FP64 rows (`set_fp64_rows`) when `q_last` does; the last two cases are the deep CKKS preset's
/// shape (a 60-bit `q_0`, 40-bit scaling primes) and 46-bit primes, at the FP64 bound.
fn lift_cases() -> [(u32, Vec<u32>); 8] {
    [
        (12u32, vec![30u32, 50, 60, 40, 61]),
        (13, vec![61, 60, 50, 30]),
        (14, vec![40, 61, 30, 50]),
        (15, vec![61, 50, 30, 60, 45]),
        (16, vec![60, 40, 61, 30, 50, 60]),
        (17, vec![61, 50, 60, 40, 30]),
        (16, vec![60, 40, 40, 40, 40, 40, 40]),
        (17, vec![46, 60, 46, 40, 46]),
    ]
}

/// Two random limbs canonical modulo `q_last`, with the lift's boundary words
/// (`q_last / 2`, `q_last / 2 ± 1`, `q_last - 1`, `1`) planted in both.
fn lifted_limbs(r: &mut impl rand::Rng, q_last: Modulus, n: usize) -> Vec<u64> {
    let ql = q_last.value();
    let mut t = random_rns(r, &[q_last, q_last], n, 1);
    for (i, w) in [ql / 2, ql / 2 + 1, ql - 1, 1, ql / 2 - 1]
        .into_iter()
        .enumerate()
    {
        t[3 * i + 5] = w;
        t[n + 7 * i + 2] = w;
    }
    t
}

/// The forward transform with the centred-lift prologue and the fused epilogue (rescaling in the
/// NTT domain) against the CPU composition (lift, `NttTable::forward`, `[c +] (x − v) · w`), at
/// every N = 2^12 … 2^17 (each default shape's `ntt_fwd_colsl_*`), with `q_last` above, below and
/// between the other primes; the lifted limbs include the boundary words around `q_last / 2`.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn lifted_epilogue_matches_the_cpu() {
    use rand::Rng;
    use rhea_cuda::ntt::{EpilogueRun, LiftRun, NttRun};
    use rhea_cuda::DeviceModuli;
    // The last prime of each list is q_last.
    for (log_n, bits) in lift_cases() {
        let test = format!("ntt lifted epilogue 2^{log_n}");
        let dev = require_gpu(&test);
        let n = 1usize << log_n;
        let moduli = moduli_for(&bits, n);
        let tables = host_tables(&moduli, n);
        let gpu = DeviceNttTables::new(&dev, &tables).unwrap();
        let dm = DeviceModuli::new(&dev, &moduli).unwrap();
        let l = bits.len();
        let q_last = moduli[l - 1];
        let ql = q_last.value();
        let mut r = rng(&test);
        // Two lifted limbs (canonical mod q_last), with the lift's boundary words.
        let t_host = lifted_limbs(&mut r, q_last, n);
        // x and c over the l - 1 primes below q_last; w random per table.
        let x_host = random_rns(&mut r, &moduli[..l - 1], n, 1);
        let c_host = random_rns(&mut r, &moduli[..l - 1], n, 1);
        let w: Vec<u64> = moduli
            .iter()
            .map(|m| r.random_range(1..m.value()))
            .collect();
        let pairs = shoup_pairs(&moduli, &w);
        // Run 0: the rescale shape, l - 1 limbs of scratch 0 (tables 0..l-1) from lifted limb
        // 1. Run 1: limbs 1..3 of scratch 1 (tables 1..3), from lifted limb 0, with the add.
        let runs = [
            NttRun {
                buf: 0,
                first_limb: 0,
                limbs: l - 1,
                table: 0,
            },
            NttRun {
                buf: 1,
                first_limb: 1,
                limbs: 2,
                table: 1,
            },
        ];
        let t = dev.upload(&t_host).unwrap();
        let lift = [LiftRun { src: &t, limb: 1 }, LiftRun { src: &t, limb: 0 }];
        let x = dev.upload(&x_host).unwrap();
        let c = dev.upload(&c_host).unwrap();
        let wd = dev.upload(&pairs).unwrap();
        // The CPU composition (run 1's output limb 2 keeps its 7s).
        let limb = |b: &[u64], i: usize| b[i * n..(i + 1) * n].to_vec();
        let want0 =
            lifted_epilogue_cpu(&tables, 0..l - 1, &limb(&t_host, 1), ql, &x_host, None, &w);
        let mut want1 = vec![7u64; 3 * n];
        want1[..2 * n].copy_from_slice(&lifted_epilogue_cpu(
            &tables,
            1..3,
            &limb(&t_host, 0),
            ql,
            &x_host[n..],
            Some(&c_host[n..]),
            &w,
        ));
        // Scratch starts as garbage: the prologue must not read it.
        let mut s0 = dev
            .upload(&random_rns(&mut r, &moduli[..l - 1], n, 1))
            .unwrap();
        let mut s1 = dev.upload(&random_rns(&mut r, &moduli[..3], n, 1)).unwrap();
        let mut out0 = dev.alloc((l - 1) * n).unwrap();
        let mut out1 = dev.alloc(3 * n).unwrap();
        out1.copy_from_host(&vec![7u64; 3 * n]).unwrap();
        let epi = [
            EpilogueRun {
                out: 0,
                out_limb: 0,
                x: &x,
                x_limb: 0,
                c: None,
            },
            EpilogueRun {
                out: 1,
                out_limb: 0,
                x: &x,
                x_limb: 1,
                c: Some((&c, 1)),
            },
        ];
        // The same words with every choice of FP64 rows.
        for fp64_on in [false, true] {
            gpu.set_fp64_rows(fp64_on);
            // The FP64 rows run where they can (the path under test is the one taken).
            let fp64 =
                fp64_on && ql < 1 << 46 && moduli[..l - 1].iter().any(|m| m.value() < 1 << 46);
            assert_eq!(
                gpu.epilogue_takes_fp64(Some(q_last), &runs),
                fp64,
                "{test} FP64 rows {fp64_on}"
            );
            // Each pass writes every output word anew.
            out0.copy_from_host(&vec![7u64; (l - 1) * n]).unwrap();
            out1.copy_from_host(&vec![7u64; 3 * n]).unwrap();
            gpu.forward_runs_lifted_epilogue(
                &lift,
                q_last,
                &dm,
                &mut [&mut s0, &mut s1],
                &runs,
                &mut [&mut out0, &mut out1],
                &epi,
                &wd,
            )
            .unwrap();
            assert_same(
                &dev.download(&out0).unwrap(),
                &want0,
                &format!("{test} rescale run, FP64 rows {fp64_on}"),
            );
            assert_same(
                &dev.download(&out1).unwrap(),
                &want1,
                &format!("{test} run with add, FP64 rows {fp64_on}"),
            );
        }
        // Typed errors, nothing launched.
        let shape = |res: rhea_cuda::Result<()>| matches!(res, Err(CudaError::Shape(_)));
        let one = &runs[..1];
        let e1 = &epi[..1];
        let mut o = dev.alloc((l - 1) * n).unwrap();
        // No lifted source for the run.
        assert!(shape(gpu.forward_runs_lifted_epilogue(
            &[],
            q_last,
            &dm,
            &mut [&mut s0],
            one,
            &mut [&mut o],
            e1,
            &wd
        )));
        // A lifted limb outside its buffer.
        assert!(shape(gpu.forward_runs_lifted_epilogue(
            &[LiftRun { src: &t, limb: 2 }],
            q_last,
            &dm,
            &mut [&mut s0],
            one,
            &mut [&mut o],
            e1,
            &wd
        )));
        // A moduli table that does not list the runs' primes.
        let wrong = DeviceModuli::new(&dev, &moduli[1..]).unwrap();
        assert!(shape(gpu.forward_runs_lifted_epilogue(
            &lift[..1],
            q_last,
            &wrong,
            &mut [&mut s0],
            one,
            &mut [&mut o],
            e1,
            &wd
        )));
        // An even q_last.
        let even = Modulus::new(ql - 1).unwrap();
        assert!(matches!(
            gpu.forward_runs_lifted_epilogue(
                &lift[..1],
                even,
                &dm,
                &mut [&mut s0],
                one,
                &mut [&mut o],
                e1,
                &wd
            ),
            Err(CudaError::InvalidArgument(_))
        ));
    }
}

/// The rescale of a ciphertext: both polynomials' last limbs lifted to the same `l − 1` primes
/// (the rows pair up), `out_p = [c +] (x_p − NTT(lift(t_p))) · w`, against the CPU composition,
/// with the FP64 rows off and on, at every N = 2^12 … 2^17 with 3 to 24 pairs of rows (the deep
/// preset's shape among them); the lifted limbs with the lift's boundary words.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn paired_lifted_epilogue_matches_the_cpu() {
    use rand::Rng;
    use rhea_cuda::ntt::{EpilogueRun, LiftRun, NttRun};
    use rhea_cuda::DeviceModuli;
    let mut deep = vec![60u32];
    deep.extend([40u32; 25]);
    for (log_n, bits) in [
        (12u32, vec![60u32, 40, 40, 40]),
        (13, vec![40, 30, 46, 40, 40, 40, 40]),
        (14, vec![60, 40, 40, 40, 40, 40]),
        (15, vec![46, 60, 40, 30, 45]),
        (16, deep),
        (17, vec![60, 40, 40, 40, 40, 40, 40, 40, 40, 40]),
    ] {
        let test = format!("ntt paired lifted epilogue 2^{log_n}, {} limbs", bits.len());
        let dev = require_gpu(&test);
        let n = 1usize << log_n;
        let moduli = moduli_for(&bits, n);
        let tables = host_tables(&moduli, n);
        let gpu = DeviceNttTables::new(&dev, &tables).unwrap();
        let dm = DeviceModuli::new(&dev, &moduli).unwrap();
        let l = bits.len();
        let below = &moduli[..l - 1];
        let q_last = moduli[l - 1];
        let ql = q_last.value();
        let mut r = rng(&test);
        let t_host = lifted_limbs(&mut r, q_last, n);
        let x_host = random_rns(&mut r, below, n, 2);
        let c_host = random_rns(&mut r, below, n, 1);
        let w: Vec<u64> = moduli
            .iter()
            .map(|m| r.random_range(1..m.value()))
            .collect();
        let wd = dev.upload(&shoup_pairs(&moduli, &w)).unwrap();
        let runs = [0, 1].map(|p| NttRun {
            buf: p,
            first_limb: 0,
            limbs: l - 1,
            table: 0,
        });
        let t = dev.upload(&t_host).unwrap();
        let lift = [0, 1].map(|p| LiftRun { src: &t, limb: p });
        let x = dev.upload(&x_host).unwrap();
        let c = dev.upload(&c_host).unwrap();
        let epi = [0, 1].map(|p| EpilogueRun {
            out: p,
            out_limb: 0,
            x: &x,
            x_limb: p * (l - 1),
            c: (p == 1).then_some((&c, 0)),
        });
        let want: Vec<Vec<u64>> = (0..2)
            .map(|p| {
                lifted_epilogue_cpu(
                    &tables,
                    0..l - 1,
                    &t_host[p * n..(p + 1) * n],
                    ql,
                    &x_host[p * (l - 1) * n..],
                    (p == 1).then_some(&c_host[..]),
                    &w,
                )
            })
            .collect();
        for fp64_on in [false, true] {
            gpu.set_fp64_rows(fp64_on);
            let test = format!("{test}, FP64 rows {fp64_on}");
            assert_eq!(
                gpu.epilogue_takes_fp64(Some(q_last), &runs),
                fp64_on,
                "{test}"
            );
            // Scratch starts as garbage: the prologue must not read it.
            let mut s0 = dev.upload(&random_rns(&mut r, below, n, 1)).unwrap();
            let mut s1 = dev.upload(&random_rns(&mut r, below, n, 1)).unwrap();
            let mut out0 = dev.upload(&vec![7u64; (l - 1) * n]).unwrap();
            let mut out1 = dev.upload(&vec![7u64; (l - 1) * n]).unwrap();
            gpu.forward_runs_lifted_epilogue(
                &lift,
                q_last,
                &dm,
                &mut [&mut s0, &mut s1],
                &runs,
                &mut [&mut out0, &mut out1],
                &epi,
                &wd,
            )
            .unwrap();
            for (p, out) in [&out0, &out1].into_iter().enumerate() {
                assert_same(
                    &dev.download(out).unwrap(),
                    &want[p],
                    &format!("{test} polynomial {p}"),
                );
            }
        }
    }
}

/// The lift-and-add prologue with the two-factor epilogue (the merged ModDown-rescale) against
/// the CPU composition: `v = NTT(run + F · lift(t))`, `out = ([c +] (x − v) · w) · w2`, at every
/// N = 2^12 … 2^17, the runs' own contents random (they are read now), the lifted limbs with
/// the lift's boundary words; plus the typed error for a short factor table.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn lift_add_epilogue_matches_the_cpu() {
    use rand::Rng;
    use rhea_cuda::ntt::{EpilogueRun, LiftAddFactors, LiftRun, NttRun};
    use rhea_cuda::DeviceModuli;
    for (log_n, bits) in lift_cases() {
        let test = format!("ntt lift-add epilogue 2^{log_n}");
        let dev = require_gpu(&test);
        let n = 1usize << log_n;
        let moduli = moduli_for(&bits, n);
        let tables = host_tables(&moduli, n);
        let gpu = DeviceNttTables::new(&dev, &tables).unwrap();
        // The same words with the FP64 rows off and on (the path under test is the one taken).
        for fp64_on in [false, true] {
            gpu.set_fp64_rows(fp64_on);
            let test = format!("{test}, FP64 rows {fp64_on}");
            let dm = DeviceModuli::new(&dev, &moduli).unwrap();
            let l = bits.len();
            let q_last = moduli[l - 1];
            let ql = q_last.value();
            let mut r = rng(&test);
            let t_host = lifted_limbs(&mut r, q_last, n);
            let below = &moduli[..l - 1];
            let y_host = [0, 1].map(|_| random_rns(&mut r, below, n, 1));
            let x_host = random_rns(&mut r, below, n, 1);
            let c_host = random_rns(&mut r, below, n, 1);
            let pick = |r: &mut rand_chacha::ChaCha20Rng| -> (Vec<u64>, Vec<u64>) {
                let w: Vec<u64> = moduli
                    .iter()
                    .map(|m| r.random_range(1..m.value()))
                    .collect();
                let pairs = shoup_pairs(&moduli, &w);
                (w, pairs)
            };
            let (f, f_pairs) = pick(&mut r);
            let (w, w_pairs) = pick(&mut r);
            let (w2, w2_pairs) = pick(&mut r);
            let runs = [
                NttRun {
                    buf: 0,
                    first_limb: 0,
                    limbs: l - 1,
                    table: 0,
                },
                NttRun {
                    buf: 1,
                    first_limb: 0,
                    limbs: l - 1,
                    table: 0,
                },
            ];
            let fp64 = fp64_on && ql < 1 << 46 && below.iter().any(|m| m.value() < 1 << 46);
            assert_eq!(gpu.epilogue_takes_fp64(Some(q_last), &runs), fp64, "{test}");
            let t = dev.upload(&t_host).unwrap();
            let lift = [LiftRun { src: &t, limb: 0 }, LiftRun { src: &t, limb: 1 }];
            let x = dev.upload(&x_host).unwrap();
            let c = dev.upload(&c_host).unwrap();
            let (fd, wd, w2d) = (
                dev.upload(&f_pairs).unwrap(),
                dev.upload(&w_pairs).unwrap(),
                dev.upload(&w2_pairs).unwrap(),
            );
            let mut y0 = dev.upload(&y_host[0]).unwrap();
            let mut y1 = dev.upload(&y_host[1]).unwrap();
            let mut out0 = dev.alloc((l - 1) * n).unwrap();
            let mut out1 = dev.alloc((l - 1) * n).unwrap();
            let epi = [
                EpilogueRun {
                    out: 0,
                    out_limb: 0,
                    x: &x,
                    x_limb: 0,
                    c: Some((&c, 0)),
                },
                EpilogueRun {
                    out: 1,
                    out_limb: 0,
                    x: &x,
                    x_limb: 0,
                    c: None,
                },
            ];
            // With the second factor (the merged ModDown-rescale) and without it (the ModDown of
            // a public-key encryption, the errors' Q limbs lifted in).
            for second in [true, false] {
                let factors = LiftAddFactors {
                    lift_factor: &fd,
                    w: &wd,
                    w2: second.then_some(&w2d),
                };
                let mut y0 = dev.upload(&y_host[0]).unwrap();
                let mut y1 = dev.upload(&y_host[1]).unwrap();
                gpu.forward_runs_lift_add_epilogue(
                    &lift,
                    q_last,
                    &dm,
                    &mut [&mut y0, &mut y1],
                    &runs,
                    &mut [&mut out0, &mut out1],
                    &epi,
                    factors,
                )
                .unwrap();
                for g in 0..2 {
                    let src = &t_host[g * n..(g + 1) * n];
                    let mut want = vec![0u64; (l - 1) * n];
                    for tb in 0..l - 1 {
                        let m = &moduli[tb];
                        let mut v: Vec<u64> = src
                            .iter()
                            .zip(&y_host[g][tb * n..(tb + 1) * n])
                            .map(|(&tk, &yk)| m.add(yk, m.mul(f[tb], lift_centred(tk, ql, m))))
                            .collect();
                        tables[tb].forward(&mut v).unwrap();
                        for k in 0..n {
                            let mut d = m.mul(m.sub(x_host[tb * n + k], v[k]), w[tb]);
                            if g == 0 {
                                d = m.add(c_host[tb * n + k], d);
                            }
                            want[tb * n + k] = if second { m.mul(d, w2[tb]) } else { d };
                        }
                    }
                    let got = dev.download(if g == 0 { &out0 } else { &out1 }).unwrap();
                    assert_same(
                        &got,
                        &want,
                        &format!("{test} run {g}, second factor {second}"),
                    );
                }
            }
            let factors = LiftAddFactors {
                lift_factor: &fd,
                w: &wd,
                w2: Some(&w2d),
            };
            // A second factor table too short for the runs' tables: a typed error.
            let short = dev.upload(&w2_pairs[..2]).unwrap();
            let res = gpu.forward_runs_lift_add_epilogue(
                &lift,
                q_last,
                &dm,
                &mut [&mut y0, &mut y1],
                &runs,
                &mut [&mut out0, &mut out1],
                &epi,
                LiftAddFactors {
                    w2: Some(&short),
                    ..factors
                },
            );
            assert!(matches!(res, Err(CudaError::Shape(_))), "{res:?}");
        }
    }
}

/// The largest values the lazy butterflies can meet: 61-bit primes (the largest the library
/// takes, closest to 2^61) and inputs at q - 1, q - 2, alternating with 1, so that the lazy
/// forward values approach their bound 6q (just below 2^64) and the Shoup quotient's dropped
/// partial product is largest; every algorithm, forward and inverse, against the CPU.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn extreme_inputs_on_61_bit_primes_match_the_cpu() {
    for log_n in [12u32, 16, 17] {
        let test = format!("ntt extreme inputs 2^{log_n}");
        let dev = require_gpu(&test);
        let degree = 1usize << log_n;
        let moduli = primes(61, 3, degree);
        assert!(moduli
            .iter()
            .all(|m| m.value() > (1u64 << 60) + (1u64 << 59)));
        let tables = host_tables(&moduli, degree);
        let gpu = DeviceNttTables::new(&dev, &tables).unwrap();
        let batch = NttBatch::all(1, moduli.len());
        let patterns: [fn(u64, usize) -> u64; 3] = [
            |q, _| q - 1,
            |q, k| if k % 2 == 0 { q - 1 } else { 1 },
            |q, k| {
                if k % 3 == 0 {
                    q - 2
                } else {
                    q - 1 - (k as u64 % 7)
                }
            },
        ];
        for (p, pat) in patterns.iter().enumerate() {
            let data: Vec<u64> = moduli
                .iter()
                .flat_map(|m| (0..degree).map(move |k| pat(m.value(), k)))
                .collect();
            for dir in [NttDirection::Forward, NttDirection::Inverse] {
                let want = cpu_transform(&tables, &data, &batch, dir);
                for (name, alg) in algorithms(log_n) {
                    let mut buf = dev.upload(&data).unwrap();
                    gpu.transform(&mut buf, &batch, dir, alg).unwrap();
                    let what = format!("{test} pattern {p} {dir:?} {name}");
                    assert_same(&dev.download(&buf).unwrap(), &want, &what);
                }
            }
        }
    }
}

/// The inverse transform with a factor per limb folded into its last stage (the ModUp's first
/// conversion step) against the CPU inverse followed by the multiplication, at N = 2^12, 2^16
/// and 2^17, one and two polynomials, 30- to 61-bit primes, in place, out of place and as
/// grouped runs over two buffers; the grouped inverse with per-run sources (unscaled) beside it;
/// short factor lists, mismatched buffers and bad sources are typed errors.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn scaled_inverse_matches_the_cpu() {
    use rhea_cuda::ntt::NttRun;
    for (log_n, bits, polys) in [
        (12u32, vec![61u32, 30, 50], 2usize),
        (16, vec![60, 40, 40, 61, 30], 1),
        (17, vec![40, 61, 50], 2),
    ] {
        let test = format!("scaled inverse 2^{log_n}");
        let dev = require_gpu(&test);
        let n = 1usize << log_n;
        let moduli = moduli_for(&bits, n);
        let tables = host_tables(&moduli, n);
        let gpu = DeviceNttTables::new(&dev, &tables).unwrap();
        let l = bits.len();
        let mut r = rng(&test);
        let x = random_rns(&mut r, &moduli, n, polys);
        // Factors: random, plus 1 and q − 1.
        let mut f: Vec<u64> = moduli
            .iter()
            .map(|m| 1 + rand::Rng::random_range(&mut r, 0..m.value() - 1))
            .collect();
        f[0] = 1;
        f[l - 1] = moduli[l - 1].value() - 1;
        let words = dev.upload(&gpu.scaled_inverse_words(&f).unwrap()).unwrap();
        let mut d = dev.upload(&x).unwrap();
        gpu.inverse_scaled(&mut d, &NttBatch::all(polys, l), &words)
            .unwrap();
        let mut want = x.clone();
        for p in 0..polys {
            let v = &mut want[p * l * n..(p + 1) * l * n];
            cpu_run(&tables, v, 0, l, 0, NttDirection::Inverse);
            for j in 0..l {
                for w in &mut v[j * n..(j + 1) * n] {
                    *w = moduli[j].mul(*w, f[j]);
                }
            }
        }
        assert_same(&dev.download(&d).unwrap(), &want, &test);
        // Out of place: the same words, the source untouched, with the FP64 rows off and on
        // (the primes below 2^46 take them where the derived-twiddle split serves the shape).
        for fp64_on in [false, true] {
            gpu.set_fp64_inverse(fp64_on);
            let derived =
                rhea_cuda::ntt::default_split(log_n, polys).is_some_and(|s| s.derived_twiddles);
            assert_eq!(
                gpu.inverse_takes_fp64(polys, l),
                fp64_on && derived,
                "{test} FP64 inverse {fp64_on}"
            );
            let src = dev.upload(&x).unwrap();
            let mut dst = dev.upload(&vec![7u64; x.len()]).unwrap();
            gpu.inverse_scaled_from(&src, &mut dst, polys, l, &words)
                .unwrap();
            let what = format!("{test} from, FP64 inverse {fp64_on}");
            assert_same(&dev.download(&dst).unwrap(), &want, &what);
            assert_same(
                &dev.download(&src).unwrap(),
                &x,
                &format!("{what}: source kept"),
            );
        }
        // A limb range (limbs 1.., tables 1..), limb 0 untouched: the batch form.
        let mut d = dev.upload(&x).unwrap();
        let batch = NttBatch::limb_range(polys, l, 1, l - 1);
        gpu.inverse_scaled(&mut d, &batch, &words).unwrap();
        let mut want_range = x.clone();
        for p in 0..polys {
            let v = &mut want_range[p * l * n..(p + 1) * l * n];
            cpu_run(&tables, v, 1, l - 1, 1, NttDirection::Inverse);
            for j in 1..l {
                for w in &mut v[j * n..(j + 1) * n] {
                    *w = moduli[j].mul(*w, f[j]);
                }
            }
        }
        assert_same(
            &dev.download(&d).unwrap(),
            &want_range,
            &format!("{test} range"),
        );
        // Grouped runs: limbs 1 .. l − 1 of the first polynomial of `x` (tables 1 ..) and a
        // one-limb buffer with table l − 1; everything else untouched.
        let y = random_rns(&mut r, &moduli[l - 1..], n, 1);
        let (mut dx, mut dy) = (dev.upload(&x).unwrap(), dev.upload(&y).unwrap());
        let runs = [
            NttRun {
                buf: 0,
                first_limb: 1,
                limbs: l - 2,
                table: 1,
            },
            NttRun {
                buf: 1,
                first_limb: 0,
                limbs: 1,
                table: l - 1,
            },
        ];
        gpu.inverse_runs_from(&mut [&mut dx, &mut dy], &runs, &[None, None], Some(&words))
            .unwrap();
        let mut want_x = x.clone();
        cpu_run(
            &tables,
            &mut want_x[..l * n],
            1,
            l - 2,
            1,
            NttDirection::Inverse,
        );
        for j in 1..l - 1 {
            for w in &mut want_x[j * n..(j + 1) * n] {
                *w = moduli[j].mul(*w, f[j]);
            }
        }
        let mut want_y = y.clone();
        cpu_run(&tables, &mut want_y, 0, 1, l - 1, NttDirection::Inverse);
        for w in &mut want_y {
            *w = moduli[l - 1].mul(*w, f[l - 1]);
        }
        assert_same(
            &dev.download(&dx).unwrap(),
            &want_x,
            &format!("{test} runs"),
        );
        assert_same(
            &dev.download(&dy).unwrap(),
            &want_y,
            &format!("{test} runs, 2nd"),
        );
        // Out of place where a run has a source (the rescale's last limbs): limb 0 of `t` from
        // `y` (table l − 1), limb 1 of `t` from limb 1 of `x` (table 1), and limbs 2 .. of a
        // copy of `x` in place; the sources untouched.
        let (sx, sy) = (dev.upload(&x).unwrap(), dev.upload(&y).unwrap());
        let mut dt = dev.alloc(2 * n).unwrap();
        let mut dz = dev.upload(&x).unwrap();
        let from_runs = [
            NttRun {
                buf: 0,
                first_limb: 0,
                limbs: 1,
                table: l - 1,
            },
            NttRun {
                buf: 0,
                first_limb: 1,
                limbs: 1,
                table: 1,
            },
            NttRun {
                buf: 1,
                first_limb: 2,
                limbs: l - 2,
                table: 2,
            },
        ];
        let sources = [Some((&sy, 0)), Some((&sx, 1)), None];
        // The expected words: limb 0 of `t` is y's inverse (table l − 1), limb 1 x's limb 1's
        // (table 1); z's limbs 2 .. inverse-transformed `times` times; each times f[t] if scaled.
        let expect = |z: &mut Vec<u64>, times: usize, scaled: bool| -> Vec<u64> {
            let mut t = [&y[..n], &x[n..2 * n]].concat();
            for (limb, table) in [(0, l - 1), (1, 1)] {
                cpu_run(
                    &tables,
                    &mut t[limb * n..],
                    0,
                    1,
                    table,
                    NttDirection::Inverse,
                );
            }
            for j in 2..l {
                for _ in 0..times {
                    cpu_run(&tables, &mut z[j * n..], 0, 1, j, NttDirection::Inverse);
                }
            }
            if scaled {
                for (limb, table) in [(0, l - 1), (1, 1)] {
                    t[limb * n..(limb + 1) * n]
                        .iter_mut()
                        .for_each(|w| *w = moduli[table].mul(*w, f[table]));
                }
                for j in 2..l {
                    z[j * n..(j + 1) * n]
                        .iter_mut()
                        .for_each(|w| *w = moduli[j].mul(*w, f[j]));
                }
            }
            t
        };
        for (scaled, times) in [(false, 1), (true, 2)] {
            let factors = scaled.then_some(&words);
            gpu.inverse_runs_from(&mut [&mut dt, &mut dz], &from_runs, &sources, factors)
                .unwrap();
            // dz is transformed in place, so the scaled pass runs over the unscaled pass's output.
            let mut want_z = x.clone();
            let want_t = expect(&mut want_z, times, scaled);
            let what = format!("{test} from runs, scaled {scaled}");
            assert_same(&dev.download(&dt).unwrap(), &want_t, &what);
            assert_same(
                &dev.download(&dz).unwrap(),
                &want_z,
                &format!("{what}, in place"),
            );
            assert_same(&dev.download(&sx).unwrap(), &x, &format!("{what}, source"));
            assert_same(
                &dev.download(&sy).unwrap(),
                &y,
                &format!("{what}, source 2"),
            );
        }
        let short_from = dev.upload(&vec![0u64; 4 * (l - 1)]).unwrap();
        assert!(matches!(
            gpu.inverse_runs_from(
                &mut [&mut dt, &mut dz],
                &from_runs,
                &sources,
                Some(&short_from)
            ),
            Err(CudaError::Shape(_))
        ));
        assert!(matches!(
            gpu.inverse_runs_from(&mut [&mut dt, &mut dz], &from_runs, &sources[..2], None),
            Err(CudaError::Shape(_))
        ));
        let beyond = [Some((&sy, 1)), Some((&sx, 1)), None];
        assert!(matches!(
            gpu.inverse_runs_from(&mut [&mut dt, &mut dz], &from_runs, &beyond, None),
            Err(CudaError::Shape(_))
        ));
        let short_runs = dev.upload(&vec![0u64; 4 * (l - 1)]).unwrap();
        assert!(matches!(
            gpu.inverse_runs_from(
                &mut [&mut dx, &mut dy],
                &runs,
                &[None, None],
                Some(&short_runs)
            ),
            Err(CudaError::Shape(_))
        ));
        let src = dev.upload(&x).unwrap();
        let mut other = dev.alloc(x.len() + n).unwrap();
        assert!(matches!(
            gpu.inverse_scaled_from(&src, &mut other, polys, l, &words),
            Err(CudaError::Shape(_))
        ));
        let short = dev.upload(&vec![0u64; 4 * (l - 1)]).unwrap();
        assert!(matches!(
            gpu.inverse_scaled(&mut d, &NttBatch::all(polys, l), &short),
            Err(CudaError::Shape(_))
        ));
        assert!(matches!(
            gpu.scaled_inverse_words(&vec![1; l + 1]),
            Err(CudaError::Shape(_))
        ));
    }
}
