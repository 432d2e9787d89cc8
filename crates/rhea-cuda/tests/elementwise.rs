//! Element-wise kernels against their `rhea_math::Modulus` twins, bit for bit, at several
//! degrees, limb counts, batch sizes and prime sizes.

mod common;

use std::sync::Arc;

use common::{random_rns, require_gpu};
use rhea_cuda::elementwise::{self as ew, host};
use rhea_cuda::{CudaError, DeviceBuffer, GpuDevice, RnsLayout};
use rhea_math::Modulus;

struct Case {
    degree: usize,
    limbs: usize,
    polys: usize,
    bits: u32,
}

const CASES: &[Case] = &[
    Case {
        degree: 1 << 12,
        limbs: 1,
        polys: 1,
        bits: 61,
    },
    Case {
        degree: 1 << 12,
        limbs: 3,
        polys: 2,
        bits: 30,
    },
    Case {
        degree: 1 << 12,
        limbs: 30,
        polys: 3,
        bits: 61,
    },
    Case {
        degree: 1 << 16,
        limbs: 3,
        polys: 2,
        bits: 61,
    },
    Case {
        degree: 1 << 16,
        limbs: 30,
        polys: 2,
        bits: 30,
    },
    Case {
        degree: 1 << 17,
        limbs: 1,
        polys: 3,
        bits: 30,
    },
    Case {
        degree: 1 << 17,
        limbs: 30,
        polys: 2,
        bits: 61,
    },
    // Even degree that is not a multiple of the vector pair: the tail of the vector loop.
    Case {
        degree: 4098,
        limbs: 3,
        polys: 2,
        bits: 61,
    },
    // Odd degree: the scalar (non-vector) path.
    Case {
        degree: 3,
        limbs: 3,
        polys: 2,
        bits: 61,
    },
];

fn check(name: &str, got: &DeviceBuffer, want: &[u64]) {
    let got = got.to_host().unwrap();
    assert_eq!(got.len(), want.len(), "{name}: length");
    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{name}: word {i} is {} but the host twin gives {}",
            got[i], want[i]
        );
    }
}

fn run_case(dev: &Arc<GpuDevice>, c: &Case, seed: &str) {
    let tag = format!("N={} L={} P={} {}-bit", c.degree, c.limbs, c.polys, c.bits);
    let mut rng = common::rng(seed);
    let moduli: Vec<Modulus> = common::primes(c.bits, c.limbs, c.degree.max(2));
    let table = dev.moduli(&moduli).unwrap();
    let layout = RnsLayout::new(c.degree, c.limbs, c.polys);
    let a = random_rns(&mut rng, &moduli, c.degree, c.polys);
    let b = random_rns(&mut rng, &moduli, c.degree, c.polys);
    let cc = random_rns(&mut rng, &moduli, c.degree, c.polys);
    let pt = random_rns(&mut rng, &moduli, c.degree, 1); // one broadcast polynomial
    let scal = common::random_nonzero(&mut rng, u64::MAX, c.limbs); // reduced by the wrapper
    let (da, db, dc, dpt) = (
        dev.upload(&a).unwrap(),
        dev.upload(&b).unwrap(),
        dev.upload(&cc).unwrap(),
        dev.upload(&pt).unwrap(),
    );
    let mut out = dev.alloc(layout.words()).unwrap();
    let none: &[u64] = &[];
    let h = |x: &[u64], y: &[u64], z: &[u64], f: &dyn Fn(&Modulus, u64, u64, u64) -> u64| {
        host::apply(&layout, &moduli, x, y, z, f)
    };
    let hs = |x: &[u64], y: &[u64], f: &dyn Fn(&Modulus, u64, u64, u64) -> u64| {
        host::apply_scalar(&layout, &moduli, x, &scal, y, f)
    };

    ew::add(&mut out, &da, &db, &layout, &table).unwrap();
    check(
        &format!("add {tag}"),
        &out,
        &h(&a, &b, none, &|m, x, y, _| m.add(x, y)),
    );
    ew::sub(&mut out, &da, &db, &layout, &table).unwrap();
    check(
        &format!("sub {tag}"),
        &out,
        &h(&a, &b, none, &|m, x, y, _| m.sub(x, y)),
    );
    ew::neg(&mut out, &da, &layout, &table).unwrap();
    check(
        &format!("neg {tag}"),
        &out,
        &h(&a, none, none, &|m, x, _, _| m.neg(x)),
    );
    ew::mul(&mut out, &da, &db, &layout, &table).unwrap();
    let prod = h(&a, &b, none, &|m, x, y, _| m.mul(x, y));
    check(&format!("mul {tag}"), &out, &prod);
    ew::mul(&mut out, &da, &dpt, &layout, &table).unwrap();
    check(
        &format!("mul broadcast {tag}"),
        &out,
        &h(&a, &pt, none, &|m, x, y, _| m.mul(x, y)),
    );
    ew::mul_add(&mut out, &da, &db, &dc, &layout, &table).unwrap();
    let fma = h(&a, &b, &cc, &|m, x, y, z| m.mul_add(x, y, z));
    check(&format!("mul_add {tag}"), &out, &fma);
    ew::mul_add(&mut out, &da, &dpt, &dc, &layout, &table).unwrap();
    check(
        &format!("mul_add broadcast {tag}"),
        &out,
        &h(&a, &pt, &cc, &|m, x, y, z| m.mul_add(x, y, z)),
    );
    ew::mul_scalar(&mut out, &da, &scal, &layout, &table).unwrap();
    let ms = hs(&a, none, &|m, x, w, _| m.mul_shoup(x, w, m.shoup(w)));
    assert_eq!(
        ms,
        hs(&a, none, &|m, x, w, _| m.mul(x, w)),
        "Shoup twin = Barrett"
    );
    check(&format!("mul_scalar {tag}"), &out, &ms);
    ew::add_scalar(&mut out, &da, &scal, &layout, &table).unwrap();
    check(
        &format!("add_scalar {tag}"),
        &out,
        &hs(&a, none, &|m, x, w, _| m.add(x, w)),
    );
    ew::mul_scalar_add(&mut out, &da, &scal, &db, &layout, &table).unwrap();
    check(
        &format!("mul_scalar_add {tag}"),
        &out,
        &hs(&a, &b, &|m, x, w, y| {
            m.add(m.mul_shoup(x, w, m.shoup(w)), y)
        }),
    );

    // In-place variants.
    let mut acc = da.try_clone().unwrap();
    ew::add_assign(&mut acc, &db, &layout, &table).unwrap();
    let mut want = h(&a, &b, none, &|m, x, y, _| m.add(x, y));
    check(&format!("add_assign {tag}"), &acc, &want);
    ew::sub_assign(&mut acc, &dc, &layout, &table).unwrap();
    want = h(&want, &cc, none, &|m, x, y, _| m.sub(x, y));
    check(&format!("sub_assign {tag}"), &acc, &want);
    ew::mul_assign(&mut acc, &dpt, &layout, &table).unwrap();
    want = h(&want, &pt, none, &|m, x, y, _| m.mul(x, y));
    check(&format!("mul_assign {tag}"), &acc, &want);
    ew::neg_assign(&mut acc, &layout, &table).unwrap();
    want = h(&want, none, none, &|m, x, _, _| m.neg(x));
    check(&format!("neg_assign {tag}"), &acc, &want);
    ew::mul_add_assign(&mut acc, &da, &db, &layout, &table).unwrap();
    want = h(&a, &b, &want, &|m, x, y, z| m.mul_add(x, y, z));
    check(&format!("mul_add_assign {tag}"), &acc, &want);
    ew::mul_scalar_assign(&mut acc, &scal, &layout, &table).unwrap();
    want = host::apply_scalar(&layout, &moduli, &want, &scal, none, |m, x, w, _| {
        m.mul(x, w)
    });
    check(&format!("mul_scalar_assign {tag}"), &acc, &want);
    ew::add_scalar_assign(&mut acc, &scal, &layout, &table).unwrap();
    want = host::apply_scalar(&layout, &moduli, &want, &scal, none, |m, x, w, _| {
        m.add(x, w)
    });
    check(&format!("add_scalar_assign {tag}"), &acc, &want);
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn elementwise_matches_modulus() {
    let dev = require_gpu("elementwise_matches_modulus");
    for (i, c) in CASES.iter().enumerate() {
        run_case(&dev, c, &format!("elementwise case {i}"));
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn a_sub_range_of_moduli_and_many_scalar_limbs() {
    let dev = require_gpu("a_sub_range_of_moduli_and_many_scalar_limbs");
    let mut rng = common::rng("sub-range");
    // 140 limbs: the scalar kernels take two launches (128 + 12 limbs).
    let (degree, limbs, polys) = (64usize, 140usize, 2usize);
    let moduli = common::primes(50, limbs + 2, degree);
    let table = dev.moduli(&moduli).unwrap();
    let layout = RnsLayout::new(degree, limbs, polys).with_first_modulus(2);
    let used = &moduli[2..];
    let a = random_rns(&mut rng, used, degree, polys);
    let b = random_rns(&mut rng, used, degree, polys);
    let scal = common::random_nonzero(&mut rng, u64::MAX, limbs);
    let (da, db) = (dev.upload(&a).unwrap(), dev.upload(&b).unwrap());
    let mut out = dev.alloc(layout.words()).unwrap();
    ew::mul(&mut out, &da, &db, &layout, &table).unwrap();
    check(
        "mul sub-range",
        &out,
        &host::apply(&layout, &moduli, &a, &b, &[], |m, x, y, _| m.mul(x, y)),
    );
    ew::mul_scalar_add(&mut out, &da, &scal, &db, &layout, &table).unwrap();
    check(
        "mul_scalar_add 140 limbs",
        &out,
        &host::apply_scalar(&layout, &moduli, &a, &scal, &b, |m, x, w, y| {
            m.add(m.mul(x, w), y)
        }),
    );
}

/// Kernels launched back to back with no host synchronisation between them (each may start
/// while the previous one drains: programmatic dependent launch), in place and across two
/// buffers, so that every kernel reads what the previous one wrote (read after write) and
/// overwrites what it read (write after read): the chain must equal the host's.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn back_to_back_launches_see_each_others_writes() {
    let dev = require_gpu("elementwise back_to_back_launches_see_each_others_writes");
    let (degree, limbs, polys) = (1usize << 16, 8usize, 2usize);
    let mut rng = common::rng("elementwise chain");
    let moduli = common::primes(61, limbs, degree);
    let table = dev.moduli(&moduli).unwrap();
    let layout = RnsLayout::new(degree, limbs, polys);
    let a = random_rns(&mut rng, &moduli, degree, polys);
    let b = random_rns(&mut rng, &moduli, degree, polys);
    let scal = common::random_nonzero(&mut rng, u64::MAX, limbs);
    let (da, db) = (dev.upload(&a).unwrap(), dev.upload(&b).unwrap());
    let mut acc = da.try_clone().unwrap();
    let mut tmp = dev.alloc(layout.words()).unwrap();
    let none: &[u64] = &[];
    let h = |x: &[u64], y: &[u64], z: &[u64], f: &dyn Fn(&Modulus, u64, u64, u64) -> u64| {
        host::apply(&layout, &moduli, x, y, z, f)
    };
    let (mut want_acc, mut want_tmp) = (a.clone(), vec![0u64; layout.words()]);
    for _ in 0..6 {
        ew::add_assign(&mut acc, &db, &layout, &table).unwrap();
        want_acc = h(&want_acc, &b, none, &|m, x, y, _| m.add(x, y));
        ew::sub(&mut tmp, &acc, &da, &layout, &table).unwrap();
        want_tmp = h(&want_acc, &a, none, &|m, x, y, _| m.sub(x, y));
        ew::mul_add_assign(&mut acc, &tmp, &db, &layout, &table).unwrap();
        want_acc = h(&want_tmp, &b, &want_acc, &|m, x, y, z| m.mul_add(x, y, z));
        ew::neg_assign(&mut tmp, &layout, &table).unwrap();
        want_tmp = h(&want_tmp, none, none, &|m, x, _, _| m.neg(x));
        ew::mul_scalar_assign(&mut tmp, &scal, &layout, &table).unwrap();
        want_tmp = host::apply_scalar(&layout, &moduli, &want_tmp, &scal, none, |m, x, w, _| {
            m.mul(x, w)
        });
        ew::add_assign(&mut acc, &tmp, &layout, &table).unwrap();
        want_acc = h(&want_acc, &want_tmp, none, &|m, x, y, _| m.add(x, y));
        ew::mul_assign(&mut tmp, &acc, &layout, &table).unwrap();
        want_tmp = h(&want_tmp, &want_acc, none, &|m, x, y, _| m.mul(x, y));
    }
    check("chain acc", &acc, &want_acc);
    check("chain tmp", &tmp, &want_tmp);
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn evaluation_moves_no_host_bytes() {
    let dev = require_gpu("evaluation_moves_no_host_bytes");
    let moduli = common::primes(61, 4, 1 << 12);
    let layout = RnsLayout::new(1 << 12, 4, 2);
    let mut rng = common::rng("no host bytes");
    let table = dev.moduli(&moduli).unwrap();
    let da = dev
        .upload(&random_rns(&mut rng, &moduli, 1 << 12, 2))
        .unwrap();
    let mut out = dev.alloc(layout.words()).unwrap();
    // Compile and load the module first (not a transfer, but keep the window clean).
    ew::mul(&mut out, &da, &da, &layout, &table).unwrap();
    dev.synchronize().unwrap();
    // The counters are per device and other tests run concurrently; this test checks the
    // wrappers themselves: run them with a private counter snapshot loop until a quiet window.
    for _ in 0..50 {
        let (d0, h0) = (dev.bytes_to_device(), dev.bytes_to_host());
        for _ in 0..10 {
            ew::mul_add_assign(&mut out, &da, &da, &layout, &table).unwrap();
            ew::mul_scalar_assign(&mut out, &[3, 5, 7, 11], &layout, &table).unwrap();
            ew::add_assign(&mut out, &da, &layout, &table).unwrap();
        }
        dev.synchronize().unwrap();
        if (dev.bytes_to_device(), dev.bytes_to_host()) == (d0, h0) {
            return;
        }
    }
    panic!("element-wise evaluation moved host bytes in every window");
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn shape_errors_are_typed() {
    let dev = require_gpu("shape_errors_are_typed");
    let moduli = common::primes(61, 2, 16);
    let table = dev.moduli(&moduli).unwrap();
    let layout = RnsLayout::new(16, 2, 2);
    let a = dev.alloc_zeroed(layout.words()).unwrap();
    let short = dev.alloc_zeroed(layout.words() - 1).unwrap();
    let mut out = dev.alloc_zeroed(layout.words()).unwrap();
    let shape = |r: rhea_cuda::Result<()>| matches!(r, Err(CudaError::Shape(_)));
    assert!(shape(ew::add(&mut out, &a, &short, &layout, &table)));
    assert!(shape(ew::add(&mut out, &short, &a, &layout, &table)));
    let mut short_out = dev.alloc_zeroed(layout.words() - 1).unwrap();
    assert!(shape(ew::neg(&mut short_out, &a, &layout, &table)));
    assert!(shape(ew::mul_scalar(&mut out, &a, &[1], &layout, &table)));
    let too_many = RnsLayout::new(16, 3, 2);
    assert!(shape(ew::add(&mut out, &a, &a, &too_many, &table)));
    assert!(shape(ew::add(
        &mut out,
        &a,
        &a,
        &layout.with_first_modulus(1),
        &table
    )));
    assert!(shape(ew::add(
        &mut out,
        &a,
        &a,
        &RnsLayout::new(0, 2, 2),
        &table
    )));
    assert!(matches!(
        dev.moduli(&[]),
        Err(CudaError::InvalidArgument(_))
    ));
    // The moduli table is shared while alive.
    assert!(Arc::ptr_eq(&table, &dev.moduli(&moduli).unwrap()));
}
