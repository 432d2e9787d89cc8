//! The protected mode's kernels (`kernels/lite_fhe.cu`): the secret-dependent steps of an RLWE
//! scheme on LITE-protected buffers, per limb `mod q_l`, in NTT form.
//!
//! | launch | computes | protected (XTS ciphertext) | plain |
//! |---|---|---|---|
//! | [`decrypt`] | `m = c0 + c1·s (+ c2·s²)` | `s`, `m` | `c_i` |
//! | [`decrypt_protected`] | the same | `s`, `m`, `c_i` | |
//! | [`key_row`] | `b = e − a·s + f_l·x`, `x` = `s'`, `s²` or none | `e`, `s`, `s'` | `a`, `f`, `b` |
//! | [`plain_add`] / [`plain_mul`] | `c + pt` / `c · pt` | `pt` | `c`, result |
//!
//! A protected operand is a dense [`LiteForm::Encrypted`] [`LiteBuffer`]; one thread per 16-byte
//! block (two words of one limb) with the v4 entry points, every load issued before the first
//! decryption. The plaintext of `s`, `s'`, `e`, `s²`, `pt` and `m` exists only in registers.
//! Polynomials are `[limb][N]` words, limb `l` reduced modulo `moduli[l]` (a Q-only polynomial
//! at level `ℓ` uses the prefix of the ring's `Q ∪ P` table; a protected operand may be longer
//! than the operation: its prefix is read, e.g. `s` over `Q ∪ P` for a decryption over `Q_ℓ`).

use super::kernels::{grid_stride, launch_keyed_source};
use super::*;

/// `kernels/lite_fhe.cu`: the protected mode's kernels.
pub const LITE_FHE: KernelSource = KernelSource {
    name: "lite_fhe",
    source: include_str!("../../kernels/lite_fhe.cu"),
    headers: &[COMMON_CUH, LITE_AES_XTS_CUH],
};

/// Every kernel of `kernels/lite_fhe.cu`.
pub const LITE_FHE_KERNEL_NAMES: &[&str] = &[
    "lite_fhe_decrypt",
    "lite_fhe_key_row",
    "lite_fhe_plain_add",
    "lite_fhe_plain_mul",
];

/// Launch arguments of the protected kernels (`struct LiteFheArgs`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct FheArgs {
    out: u64,
    x0: u64,
    x1: u64,
    x2: u64,
    x3: u64,
    factors: u64,
    moduli: u64,
    words: u64,
    log_n: u32,
    flags: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for FheArgs {}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<FheArgs>() == 72);
    assert!(offset_of!(FheArgs, factors) == 40);
    assert!(offset_of!(FheArgs, moduli) == 48);
    assert!(offset_of!(FheArgs, words) == 56);
    assert!(offset_of!(FheArgs, log_n) == 64);
    assert!(offset_of!(FheArgs, flags) == 68);
};

/// The shape of a protected operation: `limbs` limbs of `n = 2^log_n` words, limb `l` modulo
/// `moduli[l]`.
#[derive(Clone, Copy, Debug)]
pub struct FheShape<'a> {
    /// The ring's moduli table (limb `l` uses entry `l`).
    pub moduli: &'a DeviceModuli,
    /// Limbs of the operation.
    pub limbs: usize,
    /// `N`, a power of two ≥ 2.
    pub n: usize,
}

impl FheShape<'_> {
    fn words(&self) -> usize {
        self.limbs * self.n
    }

    fn check(&self) -> Result<u32> {
        if !self.n.is_power_of_two() || self.n < 2 || self.limbs == 0 {
            return Err(CudaError::Shape(format!(
                "a protected operation over {} limbs of N = {} (N a power of two ≥ 2, limbs ≥ 1)",
                self.limbs, self.n
            )));
        }
        if self.limbs > self.moduli.len() {
            return Err(CudaError::Shape(format!(
                "{} limbs with a table of {} moduli",
                self.limbs,
                self.moduli.len()
            )));
        }
        Ok(self.n.trailing_zeros())
    }

    fn plain(&self, what: &str, b: &DeviceBuffer) -> Result<u64> {
        if b.len() < self.words() || !Arc::ptr_eq(b.device(), self.moduli.buffer().device()) {
            return Err(CudaError::Shape(format!(
                "{what}: a plain operand of {} words for {} limbs of N = {} (or on another device)",
                b.len(),
                self.limbs,
                self.n
            )));
        }
        if b.device_ptr() % 16 != 0 {
            return Err(CudaError::Driver(format!(
                "{what}: an operand at {:#x} is not 16-byte aligned",
                b.device_ptr()
            )));
        }
        Ok(b.device_ptr())
    }

    fn protected(&self, what: &str, b: &LiteBuffer) -> Result<u64> {
        if b.form() != LiteForm::Encrypted {
            return Err(CudaError::InvalidArgument(format!(
                "{what}: a protected operand must be LiteForm::Encrypted (dense); got {:?}",
                b.form()
            )));
        }
        if b.len() < self.words() {
            return Err(CudaError::Shape(format!(
                "{what}: {} protected words for {} limbs of N = {}",
                b.len(),
                self.limbs,
                self.n
            )));
        }
        self.plain(what, b.raw())
    }
}

fn launch(session: &LiteSession, kernel: &str, shape: &FheShape, args: FheArgs) -> Result<()> {
    let dev = shape.moduli.buffer().device();
    launch_keyed_source(
        dev,
        session,
        &LITE_FHE,
        kernel,
        grid_stride(dev, shape.words() / 2),
        &args,
    )
}

/// Protected decryption: `out = c0 + c1·s (+ c2·s²)` over `shape` (`cs` the ciphertext's 2 or 3
/// components, plain; `s` the secret key, protected, at least `shape`'s words; `out` protected).
///
/// Errors: [`CudaError::InvalidArgument`] for another number of components or an unprotected
/// `s`/`out`; [`CudaError::Shape`] for short operands.
pub fn decrypt(
    session: &LiteSession,
    out: &mut LiteBuffer,
    cs: &[&DeviceBuffer],
    s: &LiteBuffer,
    shape: &FheShape,
) -> Result<()> {
    check_components(cs.len())?;
    let c = cs
        .iter()
        .map(|c| shape.plain("decrypt", c))
        .collect::<Result<Vec<_>>>()?;
    decrypt_launch(session, out, &c, s, shape, 0)
}

/// [`decrypt`] with the ciphertext components protected too (the all-data mode: a ciphertext
/// whose components stay LITE ciphertext in device memory): `out = c0 + c1·s (+ c2·s²)` over
/// `shape`, `cs` the 2 or 3 components and `s` protected ([`LiteForm::Encrypted`]), `out`
/// protected. The `c_i` exist in the clear only in registers.
///
/// Errors: as [`decrypt`] ([`CudaError::InvalidArgument`] also for an unprotected component).
pub fn decrypt_protected(
    session: &LiteSession,
    out: &mut LiteBuffer,
    cs: &[&LiteBuffer],
    s: &LiteBuffer,
    shape: &FheShape,
) -> Result<()> {
    check_components(cs.len())?;
    let c = cs
        .iter()
        .map(|c| shape.protected("decrypt_protected (component)", c))
        .collect::<Result<Vec<_>>>()?;
    // Flag 2: the components are protected.
    decrypt_launch(session, out, &c, s, shape, 2)
}

fn check_components(count: usize) -> Result<()> {
    if (2..=3).contains(&count) {
        Ok(())
    } else {
        Err(CudaError::InvalidArgument(format!(
            "protected decryption of {count} components (2 or 3)"
        )))
    }
}

/// `lite_fhe_decrypt` on components at `c` (device addresses), `flags` as the kernel's.
fn decrypt_launch(
    session: &LiteSession,
    out: &mut LiteBuffer,
    c: &[u64],
    s: &LiteBuffer,
    shape: &FheShape,
    flags: u32,
) -> Result<()> {
    let log_n = shape.check()?;
    let args = FheArgs {
        out: shape.protected("decrypt (out)", out)?,
        x0: c[0],
        x1: c[1],
        x2: c.get(2).copied().unwrap_or(0),
        x3: shape.protected("decrypt (s)", s)?,
        moduli: shape.moduli.device_ptr(),
        words: shape.words() as u64,
        log_n,
        flags,
        ..Default::default()
    };
    launch(session, "lite_fhe_decrypt", shape, args)
}

/// The third term of a [`key_row`]: `f_l·x`.
#[derive(Clone, Copy, Debug)]
pub enum RowTerm<'a> {
    /// No term (a public key row: `b = e − a·s`).
    None,
    /// `f_l·s'`, `s'` protected (a key-switching key from `s'`; a secret-key encryption of `s'`
    /// = the protected plaintext with `f_l = 1`). `factors`: one plain word per limb, `< q_l`.
    Key {
        /// `s'`, protected.
        from: &'a LiteBuffer,
        /// `f_l`, one plain word per limb.
        factors: &'a DeviceBuffer,
    },
    /// `f_l·s²` (the relinearisation key: `s²` computed in registers from `s`).
    SecretSquared {
        /// `f_l`, one plain word per limb.
        factors: &'a DeviceBuffer,
    },
}

/// A key row `out = e − a·s + f_l·x` over `shape`: `a` plain (public, e.g. regenerated from a
/// seed), `e` and `s` protected, `out` plain (a public key or key-switching key half, or a
/// ciphertext's `c0`).
///
/// Errors: [`CudaError::InvalidArgument`] for an unprotected protected operand;
/// [`CudaError::Shape`] for short operands or a factor table shorter than the limbs.
pub fn key_row(
    session: &LiteSession,
    out: &mut DeviceBuffer,
    a: &DeviceBuffer,
    e: &LiteBuffer,
    s: &LiteBuffer,
    term: RowTerm,
    shape: &FheShape,
) -> Result<()> {
    let log_n = shape.check()?;
    let factors_ptr = |f: &DeviceBuffer| -> Result<u64> {
        if f.len() < shape.limbs || !Arc::ptr_eq(f.device(), out.device()) {
            return Err(CudaError::Shape(format!(
                "{} factors for {} limbs (or on another device)",
                f.len(),
                shape.limbs
            )));
        }
        Ok(f.device_ptr())
    };
    let (x3, factors, flags) = match term {
        RowTerm::None => (0, 0, 0),
        RowTerm::Key { from, factors } => (
            shape.protected("key_row (s')", from)?,
            factors_ptr(factors)?,
            0,
        ),
        RowTerm::SecretSquared { factors } => (0, factors_ptr(factors)?, 1),
    };
    let args = FheArgs {
        out: shape.plain("key_row (out)", out)?,
        x0: shape.plain("key_row (a)", a)?,
        x1: shape.protected("key_row (e)", e)?,
        x2: shape.protected("key_row (s)", s)?,
        x3,
        factors,
        moduli: shape.moduli.device_ptr(),
        words: shape.words() as u64,
        log_n,
        flags,
    };
    launch(session, "lite_fhe_key_row", shape, args)
}

fn plain_op(
    session: &LiteSession,
    kernel: &str,
    c: &mut DeviceBuffer,
    pt: &LiteBuffer,
    shape: &FheShape,
) -> Result<()> {
    let log_n = shape.check()?;
    let ptr = shape.plain(kernel, c)?;
    let args = FheArgs {
        out: ptr,
        x0: ptr,
        x1: shape.protected(kernel, pt)?,
        moduli: shape.moduli.device_ptr(),
        words: shape.words() as u64,
        log_n,
        ..Default::default()
    };
    launch(session, kernel, shape, args)
}

/// `c += pt` over `shape`, `pt` protected, `c` plain (a ciphertext component).
///
/// Errors: as [`key_row`].
pub fn plain_add(
    session: &LiteSession,
    c: &mut DeviceBuffer,
    pt: &LiteBuffer,
    shape: &FheShape,
) -> Result<()> {
    plain_op(session, "lite_fhe_plain_add", c, pt, shape)
}

/// `c *= pt` over `shape`, `pt` protected, `c` plain (a ciphertext component).
///
/// Errors: as [`key_row`].
pub fn plain_mul(
    session: &LiteSession,
    c: &mut DeviceBuffer,
    pt: &LiteBuffer,
    shape: &FheShape,
) -> Result<()> {
    plain_op(session, "lite_fhe_plain_mul", c, pt, shape)
}
