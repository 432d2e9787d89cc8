//! [`Poly`]: an RNS polynomial on a device.

use std::fmt;

use zeroize::Zeroize;

use super::Device;
use crate::error::{Error, Result};

/// Which RNS basis a polynomial lives in, and its ring degree.
///
/// The limbs are a prefix of the `Q` primes (`q_limbs` of them, `1 ≤ q_limbs ≤ |Q|`) followed by
/// either none or all of the `P` (key-switching) primes: `p_limbs ∈ {0, |P|}`. Limb `i` is
/// reduced modulo `q_i` for `i < q_limbs` and modulo `p_{i - q_limbs}` after that.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PolyShape {
    /// The ring degree `N`.
    pub n: usize,
    /// How many `Q` limbs (a prefix of the `Q` chain).
    pub q_limbs: usize,
    /// How many `P` limbs (`0` or all of them).
    pub p_limbs: usize,
}

impl PolyShape {
    /// A shape over the first `q_limbs` primes of `Q`, without `P`.
    pub fn q(n: usize, q_limbs: usize) -> Self {
        Self {
            n,
            q_limbs,
            p_limbs: 0,
        }
    }

    /// A shape over the first `q_limbs` primes of `Q` followed by `p_limbs` primes of `P`.
    pub fn qp(n: usize, q_limbs: usize, p_limbs: usize) -> Self {
        Self {
            n,
            q_limbs,
            p_limbs,
        }
    }

    /// The total number of limbs.
    pub fn limbs(&self) -> usize {
        self.q_limbs + self.p_limbs
    }

    /// The number of words of a polynomial of this shape (`limbs · N`).
    pub fn words(&self) -> usize {
        self.limbs() * self.n
    }
}

impl fmt::Display for PolyShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "N = {}, {} Q limb(s) + {} P limb(s)",
            self.n, self.q_limbs, self.p_limbs
        )
    }
}

/// The representation of a polynomial.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// Coefficients, natural order.
    Coefficient,
    /// Evaluations at the odd powers of `ψ`, bit-reversed order (the forward NTT's output:
    /// entry `i` holds `a(ψ^(2·bitrev(i)+1))`).
    Ntt,
}

impl fmt::Display for Form {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Form::Coefficient => write!(f, "coefficient"),
            Form::Ntt => write!(f, "NTT (evaluation)"),
        }
    }
}

/// The words of a polynomial, on the device that holds them. Primitives match on this enum and
/// call the implementation of that device. Crate-internal: a `Poly`'s words are reached only
/// through the primitives.
pub(crate) enum Storage {
    /// Host memory, `[limb][N]`, canonical residues.
    Cpu(Vec<u64>),
    /// Memory of a CUDA GPU (pooled), `[limb][N]`, canonical residues.
    Cuda(rhea_cuda::DeviceBuffer),
}

impl Storage {
    /// The device holding these words.
    pub fn device(&self) -> Device {
        match self {
            Storage::Cpu(_) => Device::Cpu,
            Storage::Cuda(b) => Device::Cuda(b.device().index()),
        }
    }

    fn try_clone(&self) -> Result<Storage> {
        match self {
            Storage::Cpu(v) => Ok(Storage::Cpu(super::cpu::copy(v))),
            Storage::Cuda(b) => Ok(Storage::Cuda(b.try_clone()?)),
        }
    }
}

/// An RNS polynomial on a device: one contiguous `[limb][N]` buffer of canonical residues, its
/// [`PolyShape`] (which limbs of `Q ∪ P`) and its [`Form`].
///
/// A `Poly` is created and transformed only through the backend primitives (the methods of
/// [`RnsRing`](crate::unstable::RnsRing)); scheme code never touches the words.
pub struct Poly {
    pub(crate) storage: Storage,
    pub(crate) shape: PolyShape,
    pub(crate) form: Form,
}

impl Poly {
    /// A polynomial on a GPU.
    pub(crate) fn cuda(buf: rhea_cuda::DeviceBuffer, shape: PolyShape, form: Form) -> Poly {
        Poly {
            storage: Storage::Cuda(buf),
            shape,
            form,
        }
    }

    /// The ring degree `N`.
    pub fn n(&self) -> usize {
        self.shape.n
    }

    /// The shape (degree and limbs).
    pub fn shape(&self) -> PolyShape {
        self.shape
    }

    /// The number of `Q` limbs.
    pub fn q_limbs(&self) -> usize {
        self.shape.q_limbs
    }

    /// The number of `P` limbs.
    pub fn p_limbs(&self) -> usize {
        self.shape.p_limbs
    }

    /// The representation.
    pub fn form(&self) -> Form {
        self.form
    }

    /// The device holding the words.
    pub fn device(&self) -> Device {
        self.storage.device()
    }

    /// A copy on the same device (a device copy can fail, hence the `Result`).
    pub fn try_clone(&self) -> Result<Poly> {
        Ok(Poly {
            storage: self.storage.try_clone()?,
            shape: self.shape,
            form: self.form,
        })
    }

    /// Overwrites the words with zeros (secret material).
    pub(crate) fn zeroize(&mut self) {
        match &mut self.storage {
            Storage::Cpu(v) => v.zeroize(),
            // Best effort: a failed device memset leaves the words to the pool (device memory
            // is not readable by other processes).
            Storage::Cuda(b) => {
                let _ = b.fill_zero();
            }
        }
    }

    pub(crate) fn expect_form(&self, op: &'static str, expected: Form) -> Result<()> {
        if self.form == expected {
            Ok(())
        } else {
            Err(Error::FormMismatch {
                op,
                expected,
                found: self.form,
            })
        }
    }
}

/// A copy on the same device: [`Poly::try_clone`], for code that wants `Clone`.
///
/// # Panics
///
/// If the device cannot hold the copy (GPU out of memory), as `Vec::clone` aborts when the
/// host is; call [`Poly::try_clone`] to get [`Error::DeviceOutOfMemory`] instead.
impl Clone for Poly {
    fn clone(&self) -> Self {
        match self.try_clone() {
            Ok(p) => p,
            Err(e) => panic!("Poly::clone: {e} (use try_clone to handle this error)"),
        }
    }
}

/// A CPU polynomial's buffer goes back to the CPU backend's pool, so that the next primitive's
/// result reuses mapped (and usually cached) memory instead of faulting in fresh pages.
impl Drop for Poly {
    fn drop(&mut self) {
        if let Storage::Cpu(v) = &mut self.storage {
            super::cpu::recycle(std::mem::take(v));
        }
    }
}

impl fmt::Debug for Poly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Poly")
            .field("device", &self.device())
            .field("shape", &self.shape)
            .field("form", &self.form)
            .finish_non_exhaustive()
    }
}
