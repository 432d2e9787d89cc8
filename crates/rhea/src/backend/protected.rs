//! The primitives of LITE's protected mode (issue 38, `docs/lite.md` "Protected mode"): RNS
//! polynomials held on a GPU as AES-XTS ciphertext ([`ProtectedPoly`]) and the element-wise
//! steps that read them, decrypting only in registers (`rhea_cuda::lite::fhe`).
//!
//! A protected polynomial is created from host words only ([`RnsRing::protect`]: encrypted on
//! the host with its device address and uploaded as ciphertext), so its plaintext never exists
//! in device memory. The results are either public (key rows, ciphertext components: plain
//! [`Poly`]s on the GPU) or protected and decrypted on the host ([`RnsRing::lite_decrypt`]). Every
//! result has exactly the canonical words of the unprotected primitive it replaces.

use std::sync::Arc;

use rhea_cuda::lite::fhe::{self, FheShape, RowTerm};
use rhea_cuda::lite::{LiteBuffer, LiteForm, LiteSession};
use rhea_cuda::{DeviceBuffer, GpuDevice};

use super::{Device, Form, Poly, PolyShape, RnsRing, Storage};
use crate::error::{Error, Result};

/// An RNS polynomial on a GPU held as LITE ciphertext (dense XTS blocks bound to their device
/// addresses), with its shape and form. Only the session that protected it can read it.
pub struct ProtectedPoly {
    pub(crate) buf: LiteBuffer,
    pub(crate) shape: PolyShape,
    pub(crate) form: Form,
    pub(crate) device: usize,
}

impl std::fmt::Debug for ProtectedPoly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProtectedPoly")
            .field("shape", &self.shape)
            .field("form", &self.form)
            .field("device", &Device::Cuda(self.device))
            .finish()
    }
}

impl ProtectedPoly {
    /// The shape.
    pub fn shape(&self) -> PolyShape {
        self.shape
    }

    /// The device holding the ciphertext.
    pub fn device(&self) -> Device {
        Device::Cuda(self.device)
    }
}

/// The third term of [`RnsRing::lite_key_row`]: `f_l·x`.
pub(crate) enum LiteTerm<'a> {
    /// None: `e − a·s`.
    None,
    /// `f_l·x`, `x` protected.
    Times(&'a ProtectedPoly, &'a [u64]),
    /// `f_l·s²`.
    TimesSecretSquared(&'a [u64]),
}

pub(super) fn gpu_buf<'a>(op: &'static str, p: &'a Poly) -> Result<&'a DeviceBuffer> {
    match &p.storage {
        Storage::Cuda(b) => Ok(b),
        Storage::Cpu(_) => Err(Error::DeviceMismatch {
            op,
            lhs: Device::Cuda(0),
            rhs: Device::Cpu,
        }),
    }
}

/// A protected decryption takes 2 or 3 components.
pub(super) fn check_decrypt_degree(op: &'static str, components: usize) -> Result<()> {
    if (2..=3).contains(&components) {
        return Ok(());
    }
    Err(Error::CiphertextDegree {
        op,
        expected: 2,
        found: components,
        hint: "protected decryption takes 2 or 3 components: relinearize first",
    })
}

impl RnsRing {
    /// The GPU's device and the shape of a protected operation over `shape` (Q limbs only, or
    /// the full `Q ∪ P`: a prefix of the ring's moduli table).
    pub(super) fn lite_device(
        &self,
        op: &'static str,
        index: usize,
        shape: &PolyShape,
    ) -> Result<Arc<GpuDevice>> {
        self.check_shape(op, shape)?;
        if shape.p_limbs != 0 && shape.q_limbs != self.q_len() {
            return Err(Error::ShapeMismatch {
                op,
                lhs: *shape,
                rhs: self.full_shape(),
            });
        }
        Ok(self.gpu_ring(index)?.device().clone())
    }

    pub(super) fn with_lite_shape<T>(
        &self,
        index: usize,
        shape: &PolyShape,
        f: impl FnOnce(&FheShape) -> rhea_cuda::Result<T>,
    ) -> Result<T> {
        let gpu = self.gpu_ring(index)?;
        let s = FheShape {
            moduli: gpu.lite_moduli(),
            limbs: shape.limbs(),
            n: shape.n,
        };
        Ok(f(&s)?)
    }

    /// `host` (a polynomial in host memory) protected on GPU `index`: encrypted on the host with
    /// the new buffer's device address and uploaded as ciphertext (no plaintext word crosses
    /// the bus).
    ///
    /// Errors: [`Error::InvalidInput`] for a polynomial that is not in host memory (its words
    /// would already be plaintext on a device); the device's errors.
    pub(crate) fn protect(
        &self,
        session: &LiteSession,
        index: usize,
        host: &Poly,
    ) -> Result<ProtectedPoly> {
        let Storage::Cpu(words) = &host.storage else {
            return Err(Error::InvalidInput(
                "protect: the polynomial is on a GPU already; protected data must come from host \
                 memory (encode or generate it on a CPU context)"
                    .into(),
            ));
        };
        let dev = self.lite_device("protect", index, &host.shape)?;
        Ok(ProtectedPoly {
            buf: session.upload(&dev, words, LiteForm::Encrypted)?,
            shape: host.shape,
            form: host.form,
            device: index,
        })
    }

    pub(super) fn check_protected(
        &self,
        op: &'static str,
        p: &ProtectedPoly,
        index: usize,
        shape: &PolyShape,
    ) -> Result<()> {
        if p.device != index {
            return Err(Error::DeviceMismatch {
                op,
                lhs: Device::Cuda(index),
                rhs: p.device(),
            });
        }
        if p.form != Form::Ntt {
            return Err(Error::FormMismatch {
                op,
                expected: Form::Ntt,
                found: p.form,
            });
        }
        // The protected operand is read as a prefix: it must cover `shape`'s limbs with the same
        // moduli (Q-only prefixes of the full basis, or the full basis itself).
        let covers = p.shape.n == shape.n
            && (p.shape == *shape || (shape.p_limbs == 0 && p.shape.q_limbs >= shape.q_limbs));
        if !covers {
            return Err(Error::ShapeMismatch {
                op,
                lhs: *shape,
                rhs: p.shape,
            });
        }
        Ok(())
    }

    /// `e − a·s + f_l·x` (see [`LiteTerm`]) over `a`'s shape on its GPU: `a` plain (public),
    /// `e`, `s` (and `x`) protected; the result plain (a public key or key-switching key half,
    /// or a secret-key ciphertext's `c0`), the words of the unprotected
    /// `mul_sub_assign` / `mul_scalar_add_assign` sequence.
    pub(crate) fn lite_key_row(
        &self,
        session: &LiteSession,
        a: &Poly,
        e: &ProtectedPoly,
        s: &ProtectedPoly,
        term: LiteTerm,
    ) -> Result<Poly> {
        const OP: &str = "protected key row";
        let shape = a.shape;
        let Device::Cuda(index) = a.device() else {
            return Err(Error::DeviceMismatch {
                op: OP,
                lhs: Device::Cuda(e.device),
                rhs: Device::Cpu,
            });
        };
        a.expect_form(OP, Form::Ntt)?;
        let dev = self.lite_device(OP, index, &shape)?;
        for p in [e, s] {
            self.check_protected(OP, p, index, &shape)?;
        }
        let factors = |f: &[u64]| -> Result<DeviceBuffer> {
            if f.len() != shape.limbs() {
                return Err(Error::InvalidInput(format!(
                    "{OP}: {} factors for {} limbs",
                    f.len(),
                    shape.limbs()
                )));
            }
            Ok(dev.upload(f)?)
        };
        let mut out = dev.alloc(shape.words())?;
        let a_buf = gpu_buf(OP, a)?;
        match term {
            LiteTerm::None => self.with_lite_shape(index, &shape, |fs| {
                fhe::key_row(session, &mut out, a_buf, &e.buf, &s.buf, RowTerm::None, fs)
            })?,
            LiteTerm::Times(x, f) => {
                self.check_protected(OP, x, index, &shape)?;
                let f = factors(f)?;
                self.with_lite_shape(index, &shape, |fs| {
                    let term = RowTerm::Key {
                        from: &x.buf,
                        factors: &f,
                    };
                    fhe::key_row(session, &mut out, a_buf, &e.buf, &s.buf, term, fs)
                })?
            }
            LiteTerm::TimesSecretSquared(f) => {
                let f = factors(f)?;
                self.with_lite_shape(index, &shape, |fs| {
                    let term = RowTerm::SecretSquared { factors: &f };
                    fhe::key_row(session, &mut out, a_buf, &e.buf, &s.buf, term, fs)
                })?
            }
        }
        Ok(Poly::cuda(out, shape, Form::Ntt))
    }

    /// Protected decryption: `c0 + c1·s (+ c2·s²)` computed on the GPU with `s` protected, the
    /// result written there as ciphertext, downloaded and decrypted on the host: a polynomial
    /// in host memory (NTT form, the words of the unprotected decryption).
    pub(crate) fn lite_decrypt(
        &self,
        session: &LiteSession,
        cs: &[Poly],
        s: &ProtectedPoly,
    ) -> Result<Poly> {
        const OP: &str = "protected decrypt";
        check_decrypt_degree(OP, cs.len())?;
        let shape = cs[0].shape;
        let Device::Cuda(index) = cs[0].device() else {
            return Err(Error::DeviceMismatch {
                op: OP,
                lhs: Device::Cuda(s.device),
                rhs: Device::Cpu,
            });
        };
        self.check_protected(OP, s, index, &shape)?;
        let mut bufs = Vec::with_capacity(cs.len());
        for c in cs {
            c.expect_form(OP, Form::Ntt)?;
            if c.shape != shape {
                return Err(Error::ShapeMismatch {
                    op: OP,
                    lhs: shape,
                    rhs: c.shape,
                });
            }
            bufs.push(gpu_buf(OP, c)?);
        }
        self.lite_decrypt_to_host(session, index, &shape, |out, fs| {
            fhe::decrypt(session, out, &bufs, &s.buf, fs)
        })
    }

    /// The end of a protected decryption over `shape` on GPU `index`: `launch` writes the
    /// result into a protected buffer, which is downloaded as ciphertext and decrypted on the
    /// host; a polynomial in host memory.
    pub(super) fn lite_decrypt_to_host(
        &self,
        session: &LiteSession,
        index: usize,
        shape: &PolyShape,
        launch: impl FnOnce(&mut LiteBuffer, &FheShape) -> rhea_cuda::Result<()>,
    ) -> Result<Poly> {
        let dev = self.lite_device("protected decrypt", index, shape)?;
        let mut out = LiteBuffer::alloc(&dev, shape.words(), LiteForm::Encrypted)?;
        self.with_lite_shape(index, shape, |fs| launch(&mut out, fs))?;
        let words = session.download(&out)?;
        self.upload(Device::Cpu, words, *shape, Form::Ntt)
    }

    /// `c += pt` (`mul = false`) or `c *= pt` over `c`'s shape, `pt` protected, `c` plain on
    /// its GPU (a ciphertext component).
    pub(crate) fn lite_plain_assign(
        &self,
        session: &LiteSession,
        c: &mut Poly,
        pt: &ProtectedPoly,
        mul: bool,
    ) -> Result<()> {
        const OP: &str = "protected plaintext operation";
        let shape = c.shape;
        c.expect_form(OP, Form::Ntt)?;
        let Device::Cuda(index) = c.device() else {
            return Err(Error::DeviceMismatch {
                op: OP,
                lhs: Device::Cuda(pt.device),
                rhs: Device::Cpu,
            });
        };
        self.lite_device(OP, index, &shape)?;
        self.check_protected(OP, pt, index, &shape)?;
        let Storage::Cuda(buf) = &mut c.storage else {
            return Err(Error::DeviceMismatch {
                op: OP,
                lhs: Device::Cuda(index),
                rhs: Device::Cpu,
            });
        };
        self.with_lite_shape(index, &shape, |fs| {
            if mul {
                fhe::plain_mul(session, buf, &pt.buf, fs)
            } else {
                fhe::plain_add(session, buf, &pt.buf, fs)
            }
        })
    }
}
