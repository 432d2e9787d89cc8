//! NTT benchmark: rhea-math's scalar NTT against `concrete-ntt` (`prime64::Plan`), same prime, same
//! sizes, same run.
//!
//! Groups are `ntt_forward/N` and `ntt_inverse/N`, each with the functions `rhea` and `concrete`, so
//! the ratio reads directly off consecutive lines. The prime is the 60-bit NTT-friendly prime nearest
//! 2^60 for N = 2^17 (so it serves every size).
//!
//! The two libraries do not compute exactly the same thing, which is fine for timing:
//! - both take natural-order input and give bit-reversed, canonical (`[0, q)`) forward output, but
//!   with different roots of unity, so the outputs are permutations/scalings of each other;
//! - rhea's inverse includes the multiplication by `N^-1` (folded into its last stage), concrete's
//!   `inv` does not: `concrete+normalize` adds its separate `normalize` pass, the like-for-like figure;
//! - concrete-ntt (without its `nightly` feature) dispatches at run time to AVX2 code; rhea-math has
//!   no `unsafe` and so no intrinsics, only scalar code.

use criterion::{criterion_main, BenchmarkId, Criterion, Throughput};
use rhea_math::ntt::NttTable;
use rhea_math::prime::generate_ntt_primes;
use rhea_math::Modulus;
use std::time::Duration;

fn inputs(n: usize, q: u64) -> Vec<u64> {
    // A cheap deterministic pseudo-random polynomial in [0, q).
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % q
        })
        .collect()
}

fn bench_ntt(c: &mut Criterion) {
    let q = generate_ntt_primes(60, 1 << 17, 1, &[]).expect("a 60-bit prime")[0];
    for &log_n in &[14u32, 16, 17] {
        let n = 1usize << log_n;
        let table = NttTable::new(Modulus::new(q).expect("q < 2^61"), n).expect("NTT table");
        let plan = concrete_ntt::prime64::Plan::try_new(n, q).expect("concrete plan");
        let data = inputs(n, q);

        let mut group = c.benchmark_group("ntt_forward");
        group
            .sample_size(20)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .throughput(Throughput::Elements(n as u64));
        let mut buf = data.clone();
        group.bench_function(BenchmarkId::new("rhea", n), |b| {
            b.iter(|| table.forward(&mut buf).expect("length"))
        });
        let mut buf = data.clone();
        group.bench_function(BenchmarkId::new("concrete", n), |b| {
            b.iter(|| plan.fwd(&mut buf))
        });
        group.finish();

        let mut group = c.benchmark_group("ntt_inverse");
        group
            .sample_size(20)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .throughput(Throughput::Elements(n as u64));
        let mut buf = data.clone();
        group.bench_function(BenchmarkId::new("rhea", n), |b| {
            b.iter(|| table.inverse(&mut buf).expect("length"))
        });
        let mut buf = data.clone();
        group.bench_function(BenchmarkId::new("concrete", n), |b| {
            b.iter(|| plan.inv(&mut buf))
        });
        let mut buf = data.clone();
        group.bench_function(BenchmarkId::new("concrete+normalize", n), |b| {
            b.iter(|| {
                plan.inv(&mut buf);
                plan.normalize(&mut buf);
            })
        });
        group.finish();
    }
}

/// The criterion group, in a private module: the macro-generated `benches` function has no doc.
mod group {
    criterion::criterion_group!(benches, super::bench_ntt);
}
criterion_main!(group::benches);
