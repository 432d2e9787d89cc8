//! Runs the device arithmetic of `kernels/common.cuh` on arrays, for bit-exact tests against
//! `rhea_math::Modulus` (`kernels/arith_selftest.cu`). Not needed by library users.

use std::sync::Arc;

use cudarc::driver::PushKernelArg;
use rhea_math::Modulus;

use crate::device::GpuDevice;
use crate::error::{CudaError, Result};
use crate::registry::ARITH_SELFTEST;

/// A function of `common.cuh` (the operand roles of `a`, `b`, `c` are given per variant).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ArithOp {
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
pub fn run(
    dev: &Arc<GpuDevice>,
    op: ArithOp,
    modulus: &Modulus,
    a: &[u64],
    b: &[u64],
    c: &[u64],
) -> Result<Vec<u64>> {
    let n = a.len();
    if b.len() != n || c.len() != n {
        return Err(CudaError::Shape(format!(
            "operand lengths {}, {}, {} differ",
            n,
            b.len(),
            c.len()
        )));
    }
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
