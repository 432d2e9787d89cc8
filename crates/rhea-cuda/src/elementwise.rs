//! Element-wise RNS arithmetic on `[poly][limb][N]` device buffers (`kernels/elementwise.cu`).
//!
//! Limb `j` of every polynomial is reduced modulo `moduli[first_modulus + j]`. One launch covers
//! all polynomials and limbs of the operands (a whole ciphertext). Operands `a` and `out` hold
//! exactly `polys · limbs · N` words; a second or third operand may instead hold one polynomial
//! (`limbs · N` words), which is then used for every polynomial (ciphertext × plaintext).
//! Inputs must be canonical (`< q`); outputs are canonical.
//!
//! Each function's twin is the `rhea_math::Modulus` operation applied word by word:
//!
//! | function | per word | twin |
//! |---|---|---|
//! | [`add`], [`add_assign`] | `a + b` | `Modulus::add` |
//! | [`sub`], [`sub_assign`] | `a - b` | `Modulus::sub` |
//! | [`neg`], [`neg_assign`] | `-a` | `Modulus::neg` |
//! | [`mul`], [`mul_assign`] | `a · b` | `Modulus::mul` |
//! | [`mul_add`], [`mul_add_assign`] | `a · b + c` | `Modulus::mul_add` |
//! | [`mul_scalar`], [`mul_scalar_assign`] | `a · w_j` | `Modulus::mul_shoup` |
//! | [`add_scalar`], [`add_scalar_assign`] | `a + w_j` | `Modulus::add` |
//! | [`mul_scalar_add`] | `a · w_j + b` | `mul_shoup` then `add` |
//!
//! Per-limb scalars travel in the launch's parameter block (no upload, nothing counted as a
//! host↔device transfer); more than 128 limbs are split over several launches.
//!
//! Every kernel is launched with programmatic dependent launch (`launch.rs`): its prologue
//! (row pointers, the limb's modulus) overlaps the previous kernel's tail, and it waits for that
//! kernel before it reads an operand.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use cudarc::driver::{DeviceRepr, LaunchConfig};
use rhea_math::Modulus;

use crate::buffer::DeviceBuffer;
use crate::device::GpuDevice;
use crate::error::{CudaError, Result};
use crate::launch::{launch_dependent, param};
use crate::registry::ELEMENTWISE;

/// The most limbs one scalar launch carries (`RHEA_MAX_SCALAR_LIMBS` in `elementwise.cu`).
pub const MAX_SCALAR_LIMBS: usize = 128;

/// Threads per block of the element-wise kernels.
const BLOCK: u32 = 256;

/// The words per modulus in a [`DeviceModuli`] table (`struct RheaModulus` in `common.cuh`).
pub const MODULUS_WORDS: usize = 4;

/// A table of moduli constants on a device, in the layout of `struct RheaModulus`
/// (`kernels/common.cuh`): per modulus `[q, barrett_hi, barrett_lo, -q⁻¹ mod 2^64 (0 if q even)]`.
///
/// Built once per distinct modulus list and cached per device ([`DeviceModuli::new`] returns the
/// live table for the same list), so kernels of every engineer can share it.
pub struct DeviceModuli {
    moduli: Vec<Modulus>,
    buffer: DeviceBuffer,
}

impl std::fmt::Debug for DeviceModuli {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceModuli")
            .field(
                "moduli",
                &self.moduli.iter().map(|m| m.value()).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl DeviceModuli {
    /// The device table for `moduli` (uploaded on first use, then shared while alive).
    pub fn new(device: &Arc<GpuDevice>, moduli: &[Modulus]) -> Result<Arc<DeviceModuli>> {
        if moduli.is_empty() {
            return Err(CudaError::InvalidArgument("an empty list of moduli".into()));
        }
        let key: Vec<u64> = moduli.iter().map(|m| m.value()).collect();
        let mut cache = device
            .moduli_cache
            .lock()
            .map_err(|_| CudaError::Driver("moduli cache lock poisoned".into()))?;
        if let Some(t) = cache.get(&key).and_then(Weak::upgrade) {
            return Ok(t);
        }
        let table = Arc::new(DeviceModuli {
            moduli: moduli.to_vec(),
            buffer: device.upload(&Self::table_words(moduli))?,
        });
        cache.retain(|_, w| w.strong_count() > 0);
        cache.insert(key, Arc::downgrade(&table));
        Ok(table)
    }

    /// The host words of the table for `moduli` (what [`DeviceModuli::new`] uploads).
    pub fn table_words(moduli: &[Modulus]) -> Vec<u64> {
        moduli
            .iter()
            .flat_map(|m| {
                let (hi, lo) = m.barrett_ratio();
                let mont = m.montgomery().map(|mg| mg.q_inv_neg()).unwrap_or(0);
                [m.value(), hi, lo, mont]
            })
            .collect()
    }

    /// The moduli, in table order.
    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }

    /// The number of moduli.
    pub fn len(&self) -> usize {
        self.moduli.len()
    }

    /// Whether the table is empty (never, by construction).
    pub fn is_empty(&self) -> bool {
        self.moduli.is_empty()
    }

    /// The device buffer (`4 · len` words).
    pub fn buffer(&self) -> &DeviceBuffer {
        &self.buffer
    }

    /// The device address of the table, for kernel arguments (`const RheaModulus*`).
    pub fn device_ptr(&self) -> u64 {
        self.buffer.device_ptr()
    }
}

/// The shape of an element-wise operation: `polys` polynomials of `limbs` limbs of `degree`
/// words each, limb `j` reduced modulo `moduli[first_modulus + j]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RnsLayout {
    /// Words per limb (the ring degree N).
    pub degree: usize,
    /// Limbs per polynomial.
    pub limbs: usize,
    /// Polynomials (ciphertext components, or a batch).
    pub polys: usize,
    /// The index in the moduli table of the modulus of limb 0.
    pub first_modulus: usize,
}

impl RnsLayout {
    /// A layout whose limb `j` uses modulus `j`.
    pub fn new(degree: usize, limbs: usize, polys: usize) -> Self {
        Self {
            degree,
            limbs,
            polys,
            first_modulus: 0,
        }
    }

    /// The same layout with limb `j` using modulus `first + j`.
    pub fn with_first_modulus(self, first: usize) -> Self {
        Self {
            first_modulus: first,
            ..self
        }
    }

    /// Words of one polynomial (`limbs · degree`).
    pub fn poly_words(&self) -> usize {
        self.limbs * self.degree
    }

    /// Words of all polynomials (`polys · limbs · degree`).
    pub fn words(&self) -> usize {
        self.polys * self.poly_words()
    }

    fn check(&self, moduli: &DeviceModuli) -> Result<()> {
        if self.degree == 0 || self.limbs == 0 || self.polys == 0 {
            return Err(CudaError::Shape(format!("empty layout {self:?}")));
        }
        if self.first_modulus + self.limbs > moduli.len() {
            return Err(CudaError::Shape(format!(
                "limbs {}..{} need moduli the table of {} does not have",
                self.first_modulus,
                self.first_modulus + self.limbs,
                moduli.len()
            )));
        }
        if !matches!(self.polys.checked_mul(self.limbs), Some(r) if r <= 65535) {
            return Err(CudaError::Shape(format!(
                "{} polynomials × {} limbs exceed one launch (65535 rows)",
                self.polys, self.limbs
            )));
        }
        Ok(())
    }
}

/// Launch layout, passed by value (`struct EwLayout` in `elementwise.cu`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct EwLayout {
    n: u64,
    limb_count: u32,
    limb_begin: u32,
    mod_offset: u32,
    pad: u32,
    stride_out: u64,
    stride_a: u64,
    stride_b: u64,
    stride_c: u64,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for EwLayout {}

// The layout of `struct EwLayout` in `kernels/elementwise.cu`, which asserts the same numbers
// (`static_assert`): a field added, moved or resized on one side only fails the build.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<EwLayout>() == 56);
    assert!(align_of::<EwLayout>() == 8);
    assert!(offset_of!(EwLayout, n) == 0);
    assert!(offset_of!(EwLayout, limb_count) == 8);
    assert!(offset_of!(EwLayout, limb_begin) == 12);
    assert!(offset_of!(EwLayout, mod_offset) == 16);
    assert!(offset_of!(EwLayout, pad) == 20);
    assert!(offset_of!(EwLayout, stride_out) == 24);
    assert!(offset_of!(EwLayout, stride_a) == 32);
    assert!(offset_of!(EwLayout, stride_b) == 40);
    assert!(offset_of!(EwLayout, stride_c) == 48);
};

/// Per-limb scalars with Shoup companions (`struct ScalarTable` in `elementwise.cu`).
#[repr(C)]
#[derive(Clone, Copy)]
struct ScalarTable {
    w: [u64; MAX_SCALAR_LIMBS],
    w_shoup: [u64; MAX_SCALAR_LIMBS],
}

// SAFETY: plain `#[repr(C)]` integer arrays, the layout of the CUDA struct.
unsafe impl DeviceRepr for ScalarTable {}

// The layout of `struct ScalarTable` in `kernels/elementwise.cu`, which asserts the same numbers
// (`static_assert`): a field added, moved or resized on one side only fails the build.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<ScalarTable>() == 2048);
    assert!(align_of::<ScalarTable>() == 8);
    assert!(offset_of!(ScalarTable, w) == 0);
    assert!(offset_of!(ScalarTable, w_shoup) == 1024);
};

/// The stride of a "second" operand: a full `[polys][limbs][N]` buffer or one broadcast poly.
fn operand_stride(name: &str, buf: &DeviceBuffer, layout: &RnsLayout) -> Result<u64> {
    if buf.len() == layout.words() {
        Ok(layout.poly_words() as u64)
    } else if buf.len() == layout.poly_words() {
        Ok(0)
    } else {
        Err(CudaError::Shape(format!(
            "operand `{name}` has {} words; the layout {layout:?} needs {} (or {} for one \
             broadcast polynomial)",
            buf.len(),
            layout.words(),
            layout.poly_words()
        )))
    }
}

fn full_operand(name: &str, buf: &DeviceBuffer, layout: &RnsLayout) -> Result<()> {
    if buf.len() == layout.words() {
        Ok(())
    } else {
        Err(CudaError::Shape(format!(
            "operand `{name}` has {} words; the layout {layout:?} needs {}",
            buf.len(),
            layout.words()
        )))
    }
}

fn launch_config(layout: &RnsLayout, rows: usize) -> LaunchConfig {
    // One 16-byte vector (even N) or one word (odd N) per thread; the kernel grid-strides if
    // a row needs more than 65535 blocks.
    let per_row = if layout.degree % 2 == 0 {
        layout.degree / 2
    } else {
        layout.degree
    };
    let blocks_x = per_row.div_ceil(BLOCK as usize).clamp(1, 65535);
    LaunchConfig {
        grid_dim: (blocks_x as u32, rows as u32, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Raw operands of one launch: device addresses (0 = absent) and polynomial strides.
struct Operands {
    out: u64,
    a: u64,
    b: u64,
    c: u64,
    stride_b: u64,
    stride_c: u64,
}

fn launch_plain(
    kernel: &str,
    dev: &Arc<GpuDevice>,
    ops: &Operands,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    let f = dev.function(&ELEMENTWISE, kernel)?;
    let lay = EwLayout {
        n: layout.degree as u64,
        limb_count: layout.limbs as u32,
        limb_begin: 0,
        mod_offset: layout.first_modulus as u32,
        pad: 0,
        stride_out: layout.poly_words() as u64,
        stride_a: layout.poly_words() as u64,
        stride_b: ops.stride_b,
        stride_c: ops.stride_c,
    };
    let table = moduli.device_ptr();
    let cfg = launch_config(layout, layout.polys * layout.limbs);
    let mut params = [
        param(&lay),
        param(&ops.out),
        param(&ops.a),
        param(&ops.b),
        param(&ops.c),
        param(&table),
    ];
    // SAFETY: the parameters are EW_PLAIN_ARGS in order (the EwLayout struct by value,
    // #[repr(C)] like its CUDA twin, then five device addresses), each pointing to a value that
    // lives across the call (the driver only reads them); every address is a live allocation of
    // this device whose size was checked against `layout`; all work is ordered on the device's
    // one stream, and before pdl_wait() the kernel reads only the moduli table (a host upload).
    unsafe { launch_dependent(dev, &f, cfg, &mut params) }
}

fn launch_scalar(
    kernel: &str,
    dev: &Arc<GpuDevice>,
    ops: &Operands,
    scalars: &[u64],
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    if scalars.len() != layout.limbs {
        return Err(CudaError::Shape(format!(
            "{} scalars for {} limbs",
            scalars.len(),
            layout.limbs
        )));
    }
    let f = dev.function(&ELEMENTWISE, kernel)?;
    let table = moduli.device_ptr();
    let mods = &moduli.moduli()[layout.first_modulus..layout.first_modulus + layout.limbs];
    for begin in (0..layout.limbs).step_by(MAX_SCALAR_LIMBS) {
        let count = (layout.limbs - begin).min(MAX_SCALAR_LIMBS);
        let mut t = ScalarTable {
            w: [0; MAX_SCALAR_LIMBS],
            w_shoup: [0; MAX_SCALAR_LIMBS],
        };
        for j in 0..count {
            let m = &mods[begin + j];
            let w = m.reduce(scalars[begin + j]);
            t.w[j] = w;
            t.w_shoup[j] = m.shoup(w);
        }
        let lay = EwLayout {
            n: layout.degree as u64,
            limb_count: count as u32,
            limb_begin: begin as u32,
            mod_offset: layout.first_modulus as u32,
            pad: 0,
            stride_out: layout.poly_words() as u64,
            stride_a: layout.poly_words() as u64,
            stride_b: ops.stride_b,
            stride_c: 0,
        };
        let cfg = launch_config(layout, layout.polys * count);
        let mut params = [
            param(&lay),
            param(&ops.out),
            param(&ops.a),
            param(&ops.b),
            param(&table),
            param(&t),
        ];
        // SAFETY: as in `launch_plain`, with the signature EW_SCALAR_ARGS (the ScalarTable
        // struct by value last, #[repr(C)] like its CUDA twin); the scalar table is copied into
        // the launch's parameter block by the driver; the scalars are read from it before
        // pdl_wait(), and from memory only the moduli table (a host upload).
        unsafe { launch_dependent(dev, &f, cfg, &mut params) }?;
    }
    Ok(())
}

fn same_device(bufs: &[&DeviceBuffer], moduli: &DeviceModuli) -> Result<Arc<GpuDevice>> {
    let first = bufs[0];
    for b in &bufs[1..] {
        first.check_same_device(b)?;
    }
    first.check_same_device(moduli.buffer())?;
    Ok(first.device().clone())
}

fn binary(
    kernel: &str,
    out: u64,
    out_buf: &DeviceBuffer,
    a: &DeviceBuffer,
    b: &DeviceBuffer,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    layout.check(moduli)?;
    let dev = same_device(&[out_buf, a, b], moduli)?;
    full_operand("out", out_buf, layout)?;
    full_operand("a", a, layout)?;
    let stride_b = operand_stride("b", b, layout)?;
    let ops = Operands {
        out,
        a: a.device_ptr(),
        b: b.device_ptr(),
        c: 0,
        stride_b,
        stride_c: 0,
    };
    launch_plain(kernel, &dev, &ops, layout, moduli)
}

/// `out = a + b` (mod each limb's modulus).
pub fn add(
    out: &mut DeviceBuffer,
    a: &DeviceBuffer,
    b: &DeviceBuffer,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    binary("ew_add", out.device_ptr(), out, a, b, layout, moduli)
}

/// `a += b`.
pub fn add_assign(
    a: &mut DeviceBuffer,
    b: &DeviceBuffer,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    binary("ew_add", a.device_ptr(), a, a, b, layout, moduli)
}

/// `out = a - b`.
pub fn sub(
    out: &mut DeviceBuffer,
    a: &DeviceBuffer,
    b: &DeviceBuffer,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    binary("ew_sub", out.device_ptr(), out, a, b, layout, moduli)
}

/// `a -= b`.
pub fn sub_assign(
    a: &mut DeviceBuffer,
    b: &DeviceBuffer,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    binary("ew_sub", a.device_ptr(), a, a, b, layout, moduli)
}

/// `out = a · b`.
pub fn mul(
    out: &mut DeviceBuffer,
    a: &DeviceBuffer,
    b: &DeviceBuffer,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    binary("ew_mul", out.device_ptr(), out, a, b, layout, moduli)
}

/// `a *= b`.
pub fn mul_assign(
    a: &mut DeviceBuffer,
    b: &DeviceBuffer,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    binary("ew_mul", a.device_ptr(), a, a, b, layout, moduli)
}

fn unary(
    out: u64,
    out_buf: &DeviceBuffer,
    a: &DeviceBuffer,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    layout.check(moduli)?;
    let dev = same_device(&[out_buf, a], moduli)?;
    full_operand("out", out_buf, layout)?;
    full_operand("a", a, layout)?;
    let ops = Operands {
        out,
        a: a.device_ptr(),
        b: 0,
        c: 0,
        stride_b: 0,
        stride_c: 0,
    };
    launch_plain("ew_neg", &dev, &ops, layout, moduli)
}

/// `out = -a`.
pub fn neg(
    out: &mut DeviceBuffer,
    a: &DeviceBuffer,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    unary(out.device_ptr(), out, a, layout, moduli)
}

/// `a = -a`.
pub fn neg_assign(a: &mut DeviceBuffer, layout: &RnsLayout, moduli: &DeviceModuli) -> Result<()> {
    unary(a.device_ptr(), a, a, layout, moduli)
}

#[allow(clippy::too_many_arguments)]
fn ternary(
    out: u64,
    out_buf: &DeviceBuffer,
    a: &DeviceBuffer,
    b: &DeviceBuffer,
    c: &DeviceBuffer,
    stride_c_full_only: bool,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    layout.check(moduli)?;
    let dev = same_device(&[out_buf, a, b, c], moduli)?;
    full_operand("out", out_buf, layout)?;
    full_operand("a", a, layout)?;
    let stride_b = operand_stride("b", b, layout)?;
    let stride_c = if stride_c_full_only {
        full_operand("c", c, layout)?;
        layout.poly_words() as u64
    } else {
        operand_stride("c", c, layout)?
    };
    let ops = Operands {
        out,
        a: a.device_ptr(),
        b: b.device_ptr(),
        c: c.device_ptr(),
        stride_b,
        stride_c,
    };
    launch_plain("ew_mul_add", &dev, &ops, layout, moduli)
}

/// `out = a · b + c` (one reduction of the 128-bit `a·b + c`).
pub fn mul_add(
    out: &mut DeviceBuffer,
    a: &DeviceBuffer,
    b: &DeviceBuffer,
    c: &DeviceBuffer,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    ternary(out.device_ptr(), out, a, b, c, false, layout, moduli)
}

/// `acc += a · b` (the accumulation of an inner product).
pub fn mul_add_assign(
    acc: &mut DeviceBuffer,
    a: &DeviceBuffer,
    b: &DeviceBuffer,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    ternary(acc.device_ptr(), acc, a, b, acc, true, layout, moduli)
}

#[allow(clippy::too_many_arguments)]
fn scalar_op(
    kernel: &str,
    out: u64,
    out_buf: &DeviceBuffer,
    a: &DeviceBuffer,
    b: Option<&DeviceBuffer>,
    scalars: &[u64],
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    layout.check(moduli)?;
    let dev = match b {
        Some(b) => same_device(&[out_buf, a, b], moduli)?,
        None => same_device(&[out_buf, a], moduli)?,
    };
    full_operand("out", out_buf, layout)?;
    full_operand("a", a, layout)?;
    let (bp, stride_b) = match b {
        Some(b) => (b.device_ptr(), operand_stride("b", b, layout)?),
        None => (0, 0),
    };
    let ops = Operands {
        out,
        a: a.device_ptr(),
        b: bp,
        c: 0,
        stride_b,
        stride_c: 0,
    };
    launch_scalar(kernel, &dev, &ops, scalars, layout, moduli)
}

/// `out = a · w_j` for every word of limb `j` (`scalars[j]`, reduced mod `q_j`; Shoup multiply).
pub fn mul_scalar(
    out: &mut DeviceBuffer,
    a: &DeviceBuffer,
    scalars: &[u64],
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    scalar_op(
        "ew_mul_scalar",
        out.device_ptr(),
        out,
        a,
        None,
        scalars,
        layout,
        moduli,
    )
}

/// `a *= w_j` per limb.
pub fn mul_scalar_assign(
    a: &mut DeviceBuffer,
    scalars: &[u64],
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    scalar_op(
        "ew_mul_scalar",
        a.device_ptr(),
        a,
        a,
        None,
        scalars,
        layout,
        moduli,
    )
}

/// `out = a + w_j` per limb (`scalars[j]` reduced mod `q_j`).
pub fn add_scalar(
    out: &mut DeviceBuffer,
    a: &DeviceBuffer,
    scalars: &[u64],
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    scalar_op(
        "ew_add_scalar",
        out.device_ptr(),
        out,
        a,
        None,
        scalars,
        layout,
        moduli,
    )
}

/// `a += w_j` per limb.
pub fn add_scalar_assign(
    a: &mut DeviceBuffer,
    scalars: &[u64],
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    scalar_op(
        "ew_add_scalar",
        a.device_ptr(),
        a,
        a,
        None,
        scalars,
        layout,
        moduli,
    )
}

/// `out = a · w_j + b` per limb (`b` full or one broadcast polynomial).
pub fn mul_scalar_add(
    out: &mut DeviceBuffer,
    a: &DeviceBuffer,
    scalars: &[u64],
    b: &DeviceBuffer,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    scalar_op(
        "ew_mul_scalar_add",
        out.device_ptr(),
        out,
        a,
        Some(b),
        scalars,
        layout,
        moduli,
    )
}

/// Host twins of the kernels (the test oracle), on the same `[poly][limb][N]` layout.
pub mod host {
    use super::*;

    fn for_each(
        layout: &RnsLayout,
        moduli: &[Modulus],
        out: &mut [u64],
        mut f: impl FnMut(&Modulus, usize, usize, usize) -> u64,
    ) {
        for p in 0..layout.polys {
            for j in 0..layout.limbs {
                let m = &moduli[layout.first_modulus + j];
                for i in 0..layout.degree {
                    let k = (p * layout.limbs + j) * layout.degree + i;
                    out[k] = f(m, p, j, i);
                }
            }
        }
    }

    fn at(buf: &[u64], layout: &RnsLayout, p: usize, j: usize, i: usize) -> u64 {
        let p = if buf.len() == layout.words() { p } else { 0 };
        buf[(p * layout.limbs + j) * layout.degree + i]
    }

    /// Applies `op(m, a, b, c)` word by word; `b` and `c` may be one broadcast polynomial.
    pub fn apply(
        layout: &RnsLayout,
        moduli: &[Modulus],
        a: &[u64],
        b: &[u64],
        c: &[u64],
        op: impl Fn(&Modulus, u64, u64, u64) -> u64,
    ) -> Vec<u64> {
        let mut out = vec![0u64; layout.words()];
        for_each(layout, moduli, &mut out, |m, p, j, i| {
            let x = at(a, layout, p, j, i);
            let y = if b.is_empty() {
                0
            } else {
                at(b, layout, p, j, i)
            };
            let z = if c.is_empty() {
                0
            } else {
                at(c, layout, p, j, i)
            };
            op(m, x, y, z)
        });
        out
    }

    /// Applies `op(m, a, w_j, b)` word by word with per-limb scalars.
    pub fn apply_scalar(
        layout: &RnsLayout,
        moduli: &[Modulus],
        a: &[u64],
        scalars: &[u64],
        b: &[u64],
        op: impl Fn(&Modulus, u64, u64, u64) -> u64,
    ) -> Vec<u64> {
        let mut out = vec![0u64; layout.words()];
        for_each(layout, moduli, &mut out, |m, p, j, i| {
            let x = at(a, layout, p, j, i);
            let y = if b.is_empty() {
                0
            } else {
                at(b, layout, p, j, i)
            };
            op(m, x, m.reduce(scalars[j]), y)
        });
        out
    }
}

impl GpuDevice {
    /// The shared moduli table for `moduli` on this device (see [`DeviceModuli::new`]).
    pub fn moduli(self: &Arc<Self>, moduli: &[Modulus]) -> Result<Arc<DeviceModuli>> {
        DeviceModuli::new(self, moduli)
    }
}

/// The per-device cache of moduli tables, keyed by the moduli values.
pub(crate) type ModuliCache = HashMap<Vec<u64>, Weak<DeviceModuli>>;
