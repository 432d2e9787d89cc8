//! `kernels/common.cuh` against `rhea_math::Modulus`, bit for bit, on full-range random inputs:
//! `kernels/arith_selftest.cu` runs each function of `common.cuh` on arrays.
#![allow(unsafe_code)] // one kernel launch, with its SAFETY comment

mod common;

use std::sync::Arc;

use common::require_gpu;
use cudarc::driver::PushKernelArg;
use rand::Rng;
use rhea_cuda::registry::ARITH_SELFTEST;
use rhea_cuda::{GpuDevice, Result};
use rhea_math::Modulus;

/// A function of `common.cuh` (the operand roles of `a`, `b`, `c` are given per variant).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
enum ArithOp {
    /// `barrett_reduce(hi = a, lo = b)`; twin `reduce_u128`.
    Barrett = 0,
    /// `reduce_u64(a)`; twin `reduce`.
    ReduceU64 = 1,
    /// `mod_mul(a, b)`; twin `mul`.
    Mul = 2,
    /// `mod_mul_add(a, b, c)`; twin `mul_add`.
    MulAdd = 3,
    /// `shoup_mul_lazy(a, w = b, w_shoup = c)`; twin `mul_shoup_lazy`.
    ShoupLazy = 4,
    /// `shoup_mul(a, w = b, w_shoup = c)`; twin `mul_shoup`.
    Shoup = 5,
    /// `montgomery_mul(a, b)`; twin `Montgomery::mul`.
    MontMul = 6,
    /// `montgomery_reduce(hi = a, lo = b)`; twin `Montgomery::reduce`.
    MontReduce = 7,
    /// `mod_pow(a, b)`; twin `pow`.
    Pow = 8,
    /// `mod_add(a, b)`; twin `add`.
    Add = 9,
    /// `mod_sub(a, b)`; twin `sub`.
    Sub = 10,
    /// `mod_neg(a)`; twin `neg`.
    Neg = 11,
}

/// Runs `op` on `a[i], b[i], c[i]` modulo `modulus` on the device; all three slices must have
/// the same length.
fn run(
    dev: &Arc<GpuDevice>,
    op: ArithOp,
    modulus: &Modulus,
    a: &[u64],
    b: &[u64],
    c: &[u64],
) -> Result<Vec<u64>> {
    let n = a.len();
    assert!(b.len() == n && c.len() == n, "operand lengths differ");
    let moduli = dev.moduli(std::slice::from_ref(modulus))?;
    let (da, db, dc) = (dev.upload(a)?, dev.upload(b)?, dev.upload(c)?);
    let out = dev.alloc(n)?;
    let f = dev.function(&ARITH_SELFTEST, "arith_selftest")?;
    let cfg = dev.grid_stride_config(n, 256);
    let (op, n64) = (op as u32, n as u64);
    let (po, pa, pb, pc, pm) = (
        out.device_ptr(),
        da.device_ptr(),
        db.device_ptr(),
        dc.device_ptr(),
        moduli.device_ptr(),
    );
    let mut l = dev.stream().launch_builder(&f);
    l.arg(&op)
        .arg(&po)
        .arg(&pa)
        .arg(&pb)
        .arg(&pc)
        .arg(&n64)
        .arg(&pm);
    // SAFETY: the arguments match `arith_selftest`'s signature; every buffer holds `n` words
    // (the table one modulus) and lives until the download below has synchronised the stream.
    unsafe { l.launch(cfg) }?;
    out.to_host()
}

const COUNT: usize = 1 << 16;

fn moduli() -> Vec<Modulus> {
    let mut v = common::primes(61, 1, 1 << 16);
    v.extend(common::primes(30, 1, 1 << 16));
    for q in [
        2u64,
        3,
        65537,
        (1 << 61) - 1,
        1 << 40,
        0x1fff_ffff_ffe0_0001,
    ] {
        v.push(Modulus::new(q).unwrap());
    }
    v
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn common_cuh_matches_modulus() {
    let dev = require_gpu("common_cuh_matches_modulus");
    let mut rng = common::rng("common_cuh_matches_modulus");
    for m in moduli() {
        let q = m.value();
        let any: Vec<u64> = (0..COUNT).map(|_| rng.random()).collect();
        let any2: Vec<u64> = (0..COUNT).map(|_| rng.random()).collect();
        let any3: Vec<u64> = (0..COUNT).map(|_| rng.random()).collect();
        let red: Vec<u64> = (0..COUNT).map(|_| rng.random_range(0..q)).collect();
        let red2: Vec<u64> = (0..COUNT).map(|_| rng.random_range(0..q)).collect();
        let shoup: Vec<u64> = red2.iter().map(|&w| m.shoup(w)).collect();
        let zero = vec![0u64; COUNT];

        let check = |op: ArithOp, a: &[u64], b: &[u64], c: &[u64], f: &dyn Fn(usize) -> u64| {
            let got = run(&dev, op, &m, a, b, c).unwrap();
            for (i, g) in got.iter().enumerate() {
                assert_eq!(
                    *g,
                    f(i),
                    "{op:?} mod {q} at {i}: a={} b={} c={}",
                    a[i],
                    b[i],
                    c[i]
                );
            }
        };
        check(ArithOp::Barrett, &any, &any2, &zero, &|i| {
            m.reduce_u128(((any[i] as u128) << 64) | any2[i] as u128)
        });
        check(ArithOp::ReduceU64, &any, &zero, &zero, &|i| {
            m.reduce(any[i])
        });
        check(ArithOp::Mul, &any, &any2, &zero, &|i| {
            m.mul(any[i], any2[i])
        });
        check(ArithOp::MulAdd, &any, &any2, &any3, &|i| {
            m.mul_add(any[i], any2[i], any3[i])
        });
        check(ArithOp::ShoupLazy, &any, &red2, &shoup, &|i| {
            m.mul_shoup_lazy(any[i], red2[i], shoup[i])
        });
        check(ArithOp::Shoup, &any, &red2, &shoup, &|i| {
            m.mul_shoup(any[i], red2[i], shoup[i])
        });
        check(ArithOp::Add, &red, &red2, &zero, &|i| {
            m.add(red[i], red2[i])
        });
        check(ArithOp::Sub, &red, &red2, &zero, &|i| {
            m.sub(red[i], red2[i])
        });
        check(ArithOp::Neg, &red, &zero, &zero, &|i| m.neg(red[i]));
        let small_exp: Vec<u64> = any2.iter().map(|e| e >> 40).collect();
        check(ArithOp::Pow, &any, &small_exp, &zero, &|i| {
            m.pow(any[i], small_exp[i])
        });
        if let Ok(mg) = m.montgomery() {
            check(ArithOp::MontMul, &red, &red2, &zero, &|i| {
                mg.mul(red[i], red2[i])
            });
            // t < q · 2^64: high word below q.
            check(ArithOp::MontReduce, &red, &any, &zero, &|i| {
                mg.reduce(((red[i] as u128) << 64) | any[i] as u128)
            });
        }
    }
}
