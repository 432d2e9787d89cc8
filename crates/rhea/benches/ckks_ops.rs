//! CKKS operation benchmarks on the CPU backend, at the deep N = 2^16 preset (25 levels, dnum 3)
//! and the OpenFHE-comparable N = 2^16 preset (21 levels of 50 bits), at the top level.
//!
//! `cargo bench -p rhea --bench ckks_ops` (set `RAYON_NUM_THREADS` to pin the core count; the
//! preset can be narrowed with a criterion filter, e.g. `-- levels20`).

use std::time::Duration;

use criterion::{criterion_main, Criterion};
use rhea::ckks::{CkksContext, Encoder, Encryptor, Evaluator, KeyGenerator};
use rhea::params::CkksParametersLiteral;
use rhea::unstable::HasRing;
use rhea::Device;

fn bench_preset(c: &mut Criterion, name: &str, lit: CkksParametersLiteral) {
    let params = lit.build().expect("parameters");
    let ctx = CkksContext::new(&params, Device::Cpu).expect("context");
    let mut keygen = KeyGenerator::from_seed(&ctx, [1; 32]);
    let sk = keygen.secret_key().unwrap();
    let pk = keygen.public_key(&sk).unwrap();
    let rlk = keygen.relinearization_key(&sk).unwrap();
    let gk = keygen.galois_keys(&sk, &[1, 2, 3, 4], false).unwrap();
    let encoder = Encoder::new(&ctx).unwrap();
    let encryptor = Encryptor::new(&ctx, &pk).unwrap().with_seed([2; 32]);
    let eval = Evaluator::new(&ctx)
        .with_relinearization_key(rlk)
        .unwrap()
        .with_galois_keys(gk)
        .unwrap();
    let n = encoder.slots();
    let x: Vec<f64> = (0..n).map(|i| (i % 97) as f64 / 97.0).collect();
    let pt = encoder.encode(&x).unwrap();
    let cx = encryptor.encrypt(&pt).unwrap();
    let cy = encryptor.encrypt(&pt).unwrap();
    let lin = eval.mul_relin(&cx, &cy).unwrap();

    let mut g = c.benchmark_group(name);
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    g.bench_function("encode", |b| b.iter(|| encoder.encode(&x).unwrap()));
    g.bench_function("encrypt_pk", |b| b.iter(|| encryptor.encrypt(&pt).unwrap()));
    g.bench_function("add", |b| b.iter(|| eval.add(&cx, &cy).unwrap()));
    g.bench_function("mul_relin (mul + relin)", |b| {
        b.iter(|| eval.mul_relin(&cx, &cy).unwrap())
    });
    g.bench_function("mul_relin_rescale (mul + relin + rescale)", |b| {
        b.iter(|| eval.mul_relin_rescale(&cx, &cy).unwrap())
    });
    g.bench_function("rescale", |b| b.iter(|| eval.rescale(&lin).unwrap()));
    g.bench_function("rotate 1", |b| b.iter(|| eval.rotate(&cx, 1).unwrap()));
    g.bench_function("rotate_hoisted 1..=4", |b| {
        b.iter(|| eval.rotate_hoisted(&cx, &[1, 2, 3, 4]).unwrap())
    });
    let ring = ctx.ring();
    g.bench_function("primitive mod_up (all digits)", |b| {
        b.iter(|| ring.mod_up(&cx.parts()[1]).unwrap())
    });
    g.finish();
}

fn benches() {
    let mut c = Criterion::default().configure_from_args();
    bench_preset(
        &mut c,
        "n16_logqp1440_levels24",
        CkksParametersLiteral::n16_logqp1440_levels24(),
    );
    bench_preset(
        &mut c,
        "n16_logqp1560_levels24",
        CkksParametersLiteral::n16_logqp1560_levels24(),
    );
    bench_preset(
        &mut c,
        "n16_logqp1426_levels20",
        CkksParametersLiteral::n16_logqp1426_levels20(),
    );
}

criterion_main!(benches);
