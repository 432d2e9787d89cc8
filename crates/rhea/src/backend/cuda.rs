//! The CUDA implementation of the primitives, on `rhea_cuda::DeviceBuffer`s (`[limb][N]`).
//!
//! Every function here is the body of one primitive of [`super::ops`] for `Storage::Cuda`
//! operands; shapes and forms are checked by the caller. Each one computes exactly the canonical
//! words of its CPU twin in [`super::cpu`]:
//!
//! - element-wise arithmetic, NTTs, automorphisms and the key-switching inner product are exact
//!   residue arithmetic, so any correct kernel gives the CPU's words;
//! - ModUp and ModDown use the centred conversion with the deterministic `f64` correction
//!   (`DeviceBaseConverter::convert_centered`, twin of `BaseConverter::convert_centered`), composed
//!   with the NTTs exactly as on the CPU;
//! - rescaling is `rhea-math`'s exact `round(x / q_last)`: the `DeviceRescaler` kernel in
//!   coefficient form; in NTT form only the last limb is inverse-transformed, and the centred
//!   lift of it is subtracted in the NTT domain (the same integer, hence the same words);
//! - the key-switching inner product is one fused launch reading the digits and the key's
//!   polynomials in place (`rhea_cuda::fused`), ModDown ends in one fused subtract-multiply;
//! - uniform sampling regenerates the host's ChaCha20 stream on the device.
//!
//! All device tables of a ring (NTT twiddles of `Q ∪ P`, moduli tables of every shape, the ModUp
//! and ModDown converters of every level, the rescaler) are uploaded once, when the ring is first
//! used on the device ([`GpuRing::new`]); afterwards no primitive copies anything between host and
//! device except [`RnsRing::upload`](super::RnsRing::upload) and
//! [`RnsRing::download`](super::RnsRing::download). Work is queued on the device's one stream
//! and nothing waits for it, except downloads.

use std::sync::Arc;

use rhea_cuda::bconv::{DeviceBaseConverter, DeviceModUp, DeviceRescaler};
use rhea_cuda::ntt::{
    DeviceNttTables, EpilogueRun, LiftAddFactors, LiftRun, NttAlgorithm, NttBatch, NttDirection,
    NttRun, MAX_RUNS,
};
use rhea_cuda::ntt_keyswitch::{self, KsDigit};
use rhea_cuda::{automorphism, elementwise as ew, fused, sample};
use rhea_cuda::{CudaError, DeviceBuffer, DeviceModuli, GpuDevice, RnsLayout};

use super::{PolyShape, RnsRing};
use crate::error::{Error, Result};

/// Keeps GPU errors typed: out-of-memory and a too-old GPU become their own variants, the host
/// arithmetic's errors [`Error::Math`], everything else [`Error::Gpu`] with the `CudaError`.
impl From<CudaError> for Error {
    fn from(e: CudaError) -> Self {
        match e {
            CudaError::Math(m) => Error::Math(m),
            CudaError::OutOfMemory {
                device,
                requested_bytes,
                free_bytes,
            } => Error::DeviceOutOfMemory {
                requested: requested_bytes,
                free: free_bytes,
                device,
            },
            CudaError::UnsupportedComputeCapability {
                index,
                name,
                found,
                minimum,
            } => Error::UnsupportedComputeCapability {
                device: index,
                name,
                found,
                minimum,
            },
            e => Error::Gpu(e),
        }
    }
}

/// A second operand: the caller's buffer, a view of its first limbs (a higher-level operand
/// read at a lower level: limbs outermost, so no copy), or a device copy (a key's `Q_ℓ ∪ P`
/// limbs, not a prefix).
enum Operand<'a> {
    Borrowed(&'a DeviceBuffer),
    View(rhea_cuda::PrefixView<'a>),
    Owned(DeviceBuffer),
}

impl std::ops::Deref for Operand<'_> {
    type Target = DeviceBuffer;
    fn deref(&self) -> &DeviceBuffer {
        match self {
            Operand::Borrowed(b) => b,
            Operand::View(v) => v,
            Operand::Owned(b) => b,
        }
    }
}

/// The device tables of one [`RnsRing`] on one GPU.
pub(crate) struct GpuRing {
    dev: Arc<GpuDevice>,
    /// `|Q|`.
    q_len: usize,
    /// NTT tables, `Q` primes then `P` primes.
    ntt: DeviceNttTables,
    /// Every modulus of `Q ∪ P` in order: limb `j` of a shape without `P`, or of the full
    /// shape, uses modulus `j`.
    full: Arc<DeviceModuli>,
    /// `qp[ℓ - 1]`: the moduli of `Q_ℓ ∪ P`.
    qp: Vec<Arc<DeviceModuli>>,
    /// ModUp of every digit, its converters uploaded (and its kernels compiled) at creation.
    mod_up: DeviceModUp,
    /// `mod_down[ℓ - 1]`: the twin of `RnsRing::mod_down_converter(ℓ)`.
    mod_down: Vec<DeviceBaseConverter>,
    rescaler: DeviceRescaler,
    /// `(P^{-1} mod q_i, shoup)` pairs for every Q prime (the ModDown tail).
    mod_down_w: DeviceBuffer,
    /// `rescale_w[ℓ - 2]`: `(q_{ℓ-1}^{-1} mod q_i, shoup)` pairs for `i < ℓ - 1`.
    rescale_w: Vec<DeviceBuffer>,
    /// `(P mod q_i, shoup)` pairs for every Q prime (the merged ModDown-rescale).
    p_mod_q_w: DeviceBuffer,
    /// `(q_i − 1, shoup)` pairs (`−1 mod q_i`) for every Q prime: the factor with which a
    /// public-key encryption's errors enter its ModDown's forward NTT.
    neg_one_w: DeviceBuffer,
    /// The Q primes.
    q_values: Vec<u64>,
    /// `mod_up_inverse[ℓ - 1]`: the ModUp's inverse NTT at level `ℓ` with the conversions'
    /// first step `q̂_i^{-1}` folded in ([`DeviceNttTables::scaled_inverse_words`]); empty
    /// without the fast NTT.
    mod_up_inverse: Vec<DeviceBuffer>,
    /// The ModDown's inverse NTT of the P limbs with its conversion's first step `p̂_j^{-1}`
    /// folded in (words for every table, the Q tables' factor 1); `None` as `mod_up_inverse`.
    mod_down_inverse: Option<DeviceBuffer>,
}

/// `(w_i, shoup(w_i))` pairs, interleaved.
fn shoup_pairs(w: &[u64], ws: &[u64]) -> Vec<u64> {
    w.iter().zip(ws).flat_map(|(&a, &b)| [a, b]).collect()
}

impl std::fmt::Debug for GpuRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuRing")
            .field("device", &self.dev.index())
            .field("q_len", &self.q_len)
            .finish_non_exhaustive()
    }
}

/// What a GPU key switching ([`GpuRing::keyswitch_poly`]) does after its ModDown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KsTail {
    /// Nothing more: the results in NTT form over `Q_ℓ`.
    Plain,
    /// The rescale by the last prime, merged with the ModDown.
    Rescale,
    /// The automorphism `σ_g` (odd `g`), written by the ModDown's last kernel.
    Automorphism(u64),
}

impl GpuRing {
    /// Uploads every table of `ring` to `dev`.
    pub(crate) fn new(ring: &RnsRing, dev: Arc<GpuDevice>) -> Result<Self> {
        let l = ring.q_len();
        let full_shape = ring.full_shape();
        let tables: Vec<_> = (0..full_shape.limbs())
            .map(|i| ring.ntt_table(&full_shape, i).clone())
            .collect();
        let ntt = DeviceNttTables::new(&dev, &tables)?;
        let full = dev.moduli(&ring.moduli(&full_shape))?;
        let qp = (1..=l)
            .map(|ell| dev.moduli(&ring.moduli(&ring.shape_qp(ell))))
            .collect::<rhea_cuda::Result<Vec<_>>>()?;
        let mod_up = DeviceModUp::new(&dev, ring.mod_up_plan())?;
        // `DeviceModUp` uploads the converter of a (digit, active length) on first use: use each
        // once now, on scratch buffers, so that evaluation never uploads.
        let (n, pl) = (ring.n(), ring.p_len());
        for (d, r) in ring.digits().iter().enumerate() {
            for ell in r.start + 1..=r.end {
                let input = dev.alloc_zeroed(ell * n)?;
                let mut out = dev.alloc((ell + pl) * n)?;
                mod_up.apply_centered(d, ell, &input, &mut out, n)?;
            }
        }
        let mod_down = (1..=l)
            .map(|ell| DeviceBaseConverter::new(&dev, ring.mod_down_converter(ell)))
            .collect::<rhea_cuda::Result<Vec<_>>>()?;
        let rescaler = DeviceRescaler::new(&dev, ring.rescaler())?;
        let md = ring.mod_down_plan();
        let mod_down_w = dev.upload(&shoup_pairs(md.p_inv_mod_q(), md.p_inv_mod_q_shoup()))?;
        let rs = ring.rescaler();
        let rescale_w = (2..=l)
            .map(|ell| {
                let pairs = shoup_pairs(rs.q_last_inv_mod_q(ell)?, rs.q_last_inv_mod_q_shoup(ell)?);
                Ok(dev.upload(&pairs)?)
            })
            .collect::<Result<Vec<_>>>()?;
        let q_values = ring.q().values().to_vec();
        let p_mod_q = ring.mod_down_converter(l).q_mod_p();
        let p_mod_q_shoup: Vec<u64> = ring
            .q()
            .moduli()
            .iter()
            .zip(p_mod_q)
            .map(|(m, &w)| m.shoup(w))
            .collect();
        let p_mod_q_w = dev.upload(&shoup_pairs(p_mod_q, &p_mod_q_shoup))?;
        let neg_one: Vec<u64> = ring
            .q()
            .moduli()
            .iter()
            .flat_map(|m| [m.value() - 1, m.shoup(m.value() - 1)])
            .collect();
        let neg_one_w = dev.upload(&neg_one)?;
        let mod_up_inverse = if ntt.has_fast_kernels() {
            (1..=l)
                .map(|ell| {
                    let words = ntt.scaled_inverse_words(&mod_up.first_step_factors(ell)?)?;
                    Ok(dev.upload(&words)?)
                })
                .collect::<Result<Vec<_>>>()?
        } else {
            Vec::new()
        };
        let mod_down_inverse = if ntt.has_fast_kernels() {
            let mut f = vec![1u64; full_shape.limbs()];
            f[l..].copy_from_slice(ring.mod_down_converter(l).q_hat_inv_mod_q());
            Some(dev.upload(&ntt.scaled_inverse_words(&f)?)?)
        } else {
            None
        };
        Ok(Self {
            dev,
            q_len: l,
            ntt,
            full,
            qp,
            mod_up,
            mod_down,
            rescaler,
            mod_down_w,
            rescale_w,
            p_mod_q_w,
            neg_one_w,
            q_values,
            mod_up_inverse,
            mod_down_inverse,
        })
    }

    /// The device.
    pub(crate) fn device(&self) -> &Arc<GpuDevice> {
        &self.dev
    }

    /// `[limbs][N]` words: limb `i` the centred lift of `t` (`N` words canonical modulo `q_0`)
    /// modulo `q_i` (one launch; `RnsRing::upload_lifted`).
    pub(crate) fn lift_first_limb(&self, t: &DeviceBuffer, limbs: usize) -> Result<DeviceBuffer> {
        let n = t.len();
        if limbs == 0 || limbs > self.q_len {
            return Err(Error::InvalidInput(format!(
                "lift to {limbs} limbs of {} Q primes",
                self.q_len
            )));
        }
        let mut out = self.alloc(limbs * n)?;
        fused::rescale_lift(&mut out, t, self.q_values[0], &self.full, limbs, n)?;
        Ok(out)
    }

    /// Whether [`GpuRing::encrypt_zero_moddown`] serves public-key encryption: the two-kernel
    /// NTT serves this degree.
    pub(crate) fn lifted_encryption(&self) -> bool {
        self.ntt.has_fast_kernels()
    }

    fn moduli(&self, shape: &PolyShape) -> &DeviceModuli {
        if shape.p_limbs == 0 || shape.q_limbs == self.q_len {
            &self.full
        } else {
            &self.qp[shape.q_limbs - 1]
        }
    }

    fn layout(shape: &PolyShape) -> RnsLayout {
        RnsLayout::new(shape.n, shape.limbs(), 1)
    }

    /// `b` read as a polynomial of `shape`: itself, or a view of its first `shape.words()` words
    /// (a higher-level Q-only polynomial read at a lower level, without copying).
    fn operand<'a>(&self, b: &'a DeviceBuffer, shape: &PolyShape) -> Result<Operand<'a>> {
        let words = shape.words();
        if b.len() == words {
            return Ok(Operand::Borrowed(b));
        }
        Ok(Operand::View(b.prefix(words)?))
    }

    /// A new uninitialised buffer of `words` words.
    pub(crate) fn alloc(&self, words: usize) -> Result<DeviceBuffer> {
        Ok(self.dev.alloc(words)?)
    }

    // ------------------------------------------------------------------ element-wise

    pub(crate) fn add(
        &self,
        shape: &PolyShape,
        a: &mut DeviceBuffer,
        b: &DeviceBuffer,
    ) -> Result<()> {
        let b = self.operand(b, shape)?;
        Ok(ew::add_assign(
            a,
            &b,
            &Self::layout(shape),
            self.moduli(shape),
        )?)
    }

    pub(crate) fn sub(
        &self,
        shape: &PolyShape,
        a: &mut DeviceBuffer,
        b: &DeviceBuffer,
    ) -> Result<()> {
        let b = self.operand(b, shape)?;
        Ok(ew::sub_assign(
            a,
            &b,
            &Self::layout(shape),
            self.moduli(shape),
        )?)
    }

    /// `a = b - a` (negate, then add: the same canonical residues).
    pub(crate) fn sub_from(
        &self,
        shape: &PolyShape,
        a: &mut DeviceBuffer,
        b: &DeviceBuffer,
    ) -> Result<()> {
        self.neg(shape, a)?;
        self.add(shape, a, b)
    }

    pub(crate) fn neg(&self, shape: &PolyShape, a: &mut DeviceBuffer) -> Result<()> {
        Ok(ew::neg_assign(a, &Self::layout(shape), self.moduli(shape))?)
    }

    pub(crate) fn mul(
        &self,
        shape: &PolyShape,
        a: &mut DeviceBuffer,
        b: &DeviceBuffer,
    ) -> Result<()> {
        let b = self.operand(b, shape)?;
        Ok(ew::mul_assign(
            a,
            &b,
            &Self::layout(shape),
            self.moduli(shape),
        )?)
    }

    /// `a · b` into a new buffer of `shape` (`a`, `b` full or higher-level views).
    pub(crate) fn mul_new(
        &self,
        shape: &PolyShape,
        a: &DeviceBuffer,
        b: &DeviceBuffer,
    ) -> Result<DeviceBuffer> {
        let a = self.operand(a, shape)?;
        let b = self.operand(b, shape)?;
        let mut out = self.alloc(shape.words())?;
        ew::mul(&mut out, &a, &b, &Self::layout(shape), self.moduli(shape))?;
        Ok(out)
    }

    /// `a ± b` into a new buffer of `shape`.
    pub(crate) fn add_sub_new(
        &self,
        shape: &PolyShape,
        a: &DeviceBuffer,
        b: &DeviceBuffer,
        sub: bool,
    ) -> Result<DeviceBuffer> {
        let a = self.operand(a, shape)?;
        let b = self.operand(b, shape)?;
        let mut out = self.alloc(shape.words())?;
        let (layout, m) = (Self::layout(shape), self.moduli(shape));
        if sub {
            ew::sub(&mut out, &a, &b, &layout, m)?;
        } else {
            ew::add(&mut out, &a, &b, &layout, m)?;
        }
        Ok(out)
    }

    pub(crate) fn mul_add(
        &self,
        shape: &PolyShape,
        acc: &mut DeviceBuffer,
        a: &DeviceBuffer,
        b: &DeviceBuffer,
    ) -> Result<()> {
        let a = self.operand(a, shape)?;
        let b = self.operand(b, shape)?;
        Ok(ew::mul_add_assign(
            acc,
            &a,
            &b,
            &Self::layout(shape),
            self.moduli(shape),
        )?)
    }

    /// `acc -= a · b` (the product into a scratch buffer, then a subtraction).
    pub(crate) fn mul_sub(
        &self,
        shape: &PolyShape,
        acc: &mut DeviceBuffer,
        a: &DeviceBuffer,
        b: &DeviceBuffer,
    ) -> Result<()> {
        let t = self.mul_new(shape, a, b)?;
        Ok(ew::sub_assign(
            acc,
            &t,
            &Self::layout(shape),
            self.moduli(shape),
        )?)
    }

    pub(crate) fn mul_scalar(
        &self,
        shape: &PolyShape,
        a: &mut DeviceBuffer,
        scalars: &[u64],
    ) -> Result<()> {
        Ok(ew::mul_scalar_assign(
            a,
            scalars,
            &Self::layout(shape),
            self.moduli(shape),
        )?)
    }

    /// `acc += a · c_i`, returned as a new buffer (the kernel writes `a · c_i + acc` out of
    /// place).
    pub(crate) fn mul_scalar_add(
        &self,
        shape: &PolyShape,
        acc: &DeviceBuffer,
        a: &DeviceBuffer,
        scalars: &[u64],
    ) -> Result<DeviceBuffer> {
        let a = self.operand(a, shape)?;
        let mut out = self.alloc(shape.words())?;
        ew::mul_scalar_add(
            &mut out,
            &a,
            scalars,
            acc,
            &Self::layout(shape),
            self.moduli(shape),
        )?;
        Ok(out)
    }

    /// Adds `c_i` to every word of limb `i`.
    pub(crate) fn add_scalar_all(
        &self,
        shape: &PolyShape,
        a: &mut DeviceBuffer,
        scalars: &[u64],
    ) -> Result<()> {
        Ok(ew::add_scalar_assign(
            a,
            scalars,
            &Self::layout(shape),
            self.moduli(shape),
        )?)
    }

    /// Adds `c_i` to the constant coefficient of limb `i` of a coefficient-form polynomial:
    /// the constant `c` is `c` at every NTT evaluation, so this is the NTT-domain addition
    /// conjugated by the NTT (exact, nothing leaves the device).
    pub(crate) fn add_scalar_coeff0(
        &self,
        shape: &PolyShape,
        a: &mut DeviceBuffer,
        scalars: &[u64],
    ) -> Result<()> {
        let limbs = shape.limbs();
        self.ntt(shape, a, 0..limbs, NttDirection::Forward)?;
        self.add_scalar_all(shape, a, scalars)?;
        self.ntt(shape, a, 0..limbs, NttDirection::Inverse)
    }

    // ------------------------------------------------------------------ transforms

    /// NTT of the limbs `range` of a polynomial of `shape` (Q limbs use tables `0..`, P limbs
    /// tables `|Q|..`).
    pub(crate) fn ntt(
        &self,
        shape: &PolyShape,
        a: &mut DeviceBuffer,
        range: std::ops::Range<usize>,
        dir: NttDirection,
    ) -> Result<()> {
        let limbs = shape.limbs();
        let q_end = range.end.min(shape.q_limbs);
        if range.start < q_end && range.end > shape.q_limbs && self.ntt.has_fast_kernels() {
            // Q and P limbs both: one grouped launch per phase instead of two.
            return self.ntt_many(&mut [(shape, a)], range, dir);
        }
        if range.start < q_end {
            let batch = NttBatch::limb_range(1, limbs, range.start, q_end - range.start);
            self.ntt.transform(a, &batch, dir, NttAlgorithm::Fast)?;
        }
        let p_start = range.start.max(shape.q_limbs);
        if p_start < range.end {
            let batch = NttBatch::limb_range(1, limbs, p_start, range.end - p_start)
                .with_first_table(self.q_len - shape.q_limbs);
            self.ntt.transform(a, &batch, dir, NttAlgorithm::Fast)?;
        }
        Ok(())
    }

    /// NTT of the limbs `range` of several polynomials (each with its shape), in one grouped
    /// launch per phase for every [`MAX_RUNS`] runs of consecutive limbs with one table range
    /// (the Q part and the P part of each polynomial).
    pub(crate) fn ntt_many(
        &self,
        polys: &mut [(&PolyShape, &mut DeviceBuffer)],
        range: std::ops::Range<usize>,
        dir: NttDirection,
    ) -> Result<()> {
        let mut runs = Vec::with_capacity(2 * polys.len());
        for (i, (shape, _)) in polys.iter().enumerate() {
            let q_end = range.end.min(shape.q_limbs);
            if range.start < q_end {
                runs.push(NttRun {
                    buf: i,
                    first_limb: range.start,
                    limbs: q_end - range.start,
                    table: range.start,
                });
            }
            let p_start = range.start.max(shape.q_limbs);
            if p_start < range.end.min(shape.limbs()) {
                runs.push(NttRun {
                    buf: i,
                    first_limb: p_start,
                    limbs: range.end.min(shape.limbs()) - p_start,
                    table: self.q_len + (p_start - shape.q_limbs),
                });
            }
        }
        let mut bufs: Vec<&mut DeviceBuffer> = polys.iter_mut().map(|(_, b)| &mut **b).collect();
        for chunk in runs.chunks(MAX_RUNS) {
            self.ntt.transform_runs(&mut bufs, chunk, dir)?;
        }
        Ok(())
    }

    /// `σ_g` into a new buffer, in the NTT domain (a permutation) or the coefficient domain.
    pub(crate) fn automorphism(
        &self,
        shape: &PolyShape,
        a: &DeviceBuffer,
        g: u64,
        ntt_form: bool,
    ) -> Result<DeviceBuffer> {
        let mut out = self.alloc(shape.words())?;
        let layout = Self::layout(shape);
        if ntt_form {
            automorphism::apply_ntt(&mut out, a, g, &layout)?;
        } else {
            automorphism::apply_coeff(&mut out, a, g, &layout, self.moduli(shape))?;
        }
        Ok(out)
    }

    // ------------------------------------------------------------------ basis changes

    /// Keeps the first `q_limbs` Q limbs and the P limbs of a polynomial of `shape`.
    pub(crate) fn truncate(
        &self,
        shape: &PolyShape,
        a: &DeviceBuffer,
        q_limbs: usize,
    ) -> Result<DeviceBuffer> {
        let n = shape.n;
        let mut out = self.alloc((q_limbs + shape.p_limbs) * n)?;
        DeviceBuffer::copy_region(a, 0, &mut out, 0, q_limbs * n)?;
        DeviceBuffer::copy_region(
            a,
            shape.q_limbs * n,
            &mut out,
            q_limbs * n,
            shape.p_limbs * n,
        )?;
        Ok(out)
    }

    /// ModUp of every active digit of a level-`ℓ` NTT-form polynomial (the twin of
    /// `cpu::mod_up_digits`): one inverse NTT; per digit, the centred conversion of the digit's
    /// limbs to the other limbs of `Q_ℓ ∪ P` (`DeviceModUp::apply_centered`, one launch), the
    /// forward NTT of those converted limbs only, and the digit's own limbs copied from the
    /// NTT-form input (the forward NTT of the whole would give back exactly those words).
    pub(crate) fn mod_up(
        &self,
        ring: &RnsRing,
        ell: usize,
        input: &DeviceBuffer,
    ) -> Result<Vec<DeviceBuffer>> {
        let n = ring.n();
        let (mut outs, runs) = self.mod_up_converted(ring, ell, input)?;
        for (d, o) in outs.iter_mut().enumerate() {
            let own = Self::own_limbs(ring, d, ell);
            DeviceBuffer::copy_region(input, own.start * n, o, own.start * n, own.len() * n)?;
        }
        // One grouped forward transform (per MAX_RUNS runs) over every digit.
        for chunk in runs.chunks(MAX_RUNS) {
            let mut bufs: Vec<&mut DeviceBuffer> = outs.iter_mut().collect();
            self.ntt
                .transform_runs(&mut bufs, chunk, NttDirection::Forward)?;
        }
        Ok(outs)
    }

    /// Digit `d`'s own Q limbs at level `ℓ`.
    fn own_limbs(ring: &RnsRing, d: usize, ell: usize) -> std::ops::Range<usize> {
        let r = &ring.digits()[d];
        r.start..r.end.min(ell)
    }

    /// The first part of a ModUp: one inverse NTT of `input`, then every active digit's
    /// centred conversion to the other limbs of `Q_ℓ ∪ P` (coefficient form, one
    /// `[Q_ℓ ∪ P][N]` buffer per digit, its own limbs left unwritten), and the runs of converted
    /// limbs a forward transform must cover (per digit: the Q limbs before and after its own,
    /// tables = limb index, and the P limbs, tables from `|Q|`).
    fn mod_up_converted(
        &self,
        ring: &RnsRing,
        ell: usize,
        input: &DeviceBuffer,
    ) -> Result<(Vec<DeviceBuffer>, Vec<NttRun>)> {
        let n = ring.n();
        let shape_q = ring.shape_q(ell);
        let shape_qp = ring.shape_qp(ell);
        // The inverse NTT, with the conversions' first step folded in where it can be (then
        // out of place: the input stays as it is, with no copy).
        let scaled = self.mod_up_inverse.get(ell - 1);
        let coeff = match scaled {
            Some(f) => {
                let mut coeff = self.alloc(input.len())?;
                self.ntt.inverse_scaled_from(input, &mut coeff, 1, ell, f)?;
                coeff
            }
            None => {
                let mut coeff = input.try_clone()?;
                self.ntt(&shape_q, &mut coeff, 0..ell, NttDirection::Inverse)?;
                coeff
            }
        };
        let pl = shape_qp.p_limbs;
        let digits = ring.active_digits(ell);
        let mut converted = (0..digits)
            .map(|_| self.alloc(shape_qp.words()))
            .collect::<Result<Vec<_>>>()?;
        {
            // Every digit's conversion, five digits per launch.
            let mut jobs: Vec<(usize, &mut DeviceBuffer)> =
                converted.iter_mut().enumerate().collect();
            self.mod_up
                .convert_centered_many_with(ell, &coeff, &mut jobs, n, scaled.is_some())?;
        }
        let mut runs = Vec::new();
        for d in 0..digits {
            let own = Self::own_limbs(ring, d, ell);
            let (s, e) = (own.start, own.end);
            for (first, limbs, table) in [(0, s, 0), (e, ell - e, e), (ell, pl, self.q_len)] {
                if limbs > 0 {
                    runs.push(NttRun {
                        buf: d,
                        first_limb: first,
                        limbs,
                        table,
                    });
                }
            }
        }
        Ok((converted, runs))
    }

    /// Key switching of one NTT-form polynomial `input` over `Q_ℓ`, to the end: the twin of
    /// [`GpuRing::mod_up`] then [`GpuRing::keyswitch_moddown`] (no inner addends; with
    /// [`KsTail::Automorphism`] its results permuted) or, with [`KsTail::Rescale`],
    /// [`GpuRing::keyswitch_moddown_rescale`], bit for bit. The ModUp's forward row
    /// phase and the inner product run as one kernel
    /// ([`DeviceNttTables::forward_rows_keyswitch`]): the digits' transformed limbs never go
    /// through device memory and their own limbs are read from `input` (no copies). Launches:
    /// inverse NTT (2), conversion (1), column phase (1 per 24 runs), fused rows and inner
    /// product (1), then the ModDown tail. Beyond `ntt_keyswitch::MAX_DIGITS` digits, or
    /// without the fast NTT, the composition.
    pub(crate) fn keyswitch_poly(
        &self,
        ring: &RnsRing,
        ell: usize,
        input: &DeviceBuffer,
        keys: &[(&DeviceBuffer, &DeviceBuffer)],
        adds: [Option<&DeviceBuffer>; 2],
        tail: KsTail,
    ) -> Result<[DeviceBuffer; 2]> {
        let n = ring.n();
        let rescale = tail == KsTail::Rescale;
        let galois = match tail {
            KsTail::Automorphism(g) => Some(g),
            _ => None,
        };
        if rescale && ell < 2 {
            return Err(Error::InvalidInput(format!(
                "keyswitch_moddown_rescale at {ell} limb(s): rescaling needs 2"
            )));
        }
        let digits = ring.active_digits(ell);
        if !self.ntt.has_fast_kernels() || digits > ntt_keyswitch::MAX_DIGITS {
            let ds = self.mod_up(ring, ell, input)?;
            let refs: Vec<&DeviceBuffer> = ds.iter().collect();
            return if rescale {
                self.keyswitch_moddown_rescale(ring, ell, &refs, keys, adds)
            } else {
                self.keyswitch_moddown(ring, ell, &refs, keys, [None, None], adds, galois)
            };
        }
        if keys.len() < digits {
            return Err(Error::InvalidInput(format!(
                "key switching: {} key parts for {digits} digits",
                keys.len()
            )));
        }
        let (mut converted, runs) = self.mod_up_converted(ring, ell, input)?;
        for chunk in runs.chunks(MAX_RUNS) {
            let mut bufs: Vec<&mut DeviceBuffer> = converted.iter_mut().collect();
            self.ntt.forward_columns_runs(&mut bufs, chunk)?;
        }
        let kd: Vec<KsDigit<'_>> = converted
            .iter()
            .zip(keys)
            .enumerate()
            .map(|(d, (c, (b, a)))| KsDigit {
                converted: c,
                own: Self::own_limbs(ring, d, ell),
                key_b: b,
                key_a: a,
            })
            .collect();
        let width = ell + ring.p_len();
        let mut acc = self.alloc(2 * width * n)?;
        self.ntt
            .forward_rows_keyswitch(input, ell, self.q_len, &self.full, &kd, &mut acc)?;
        drop(kd);
        drop(converted);
        if rescale {
            self.moddown_rescale_from_inner(ring, ell, acc, adds, n)
        } else {
            self.moddown_from_inner(ell, acc, adds, n, galois)
        }
    }

    /// The end of a key switching, fused (the twin of `cpu::inner_product`, the optional
    /// `inner` additions, `cpu::mod_down` of both halves, then the optional `adds`): the inner
    /// product of the ModUp `digits` with the key, plus `inner_c`, into one `[2][Q_ℓ ∪ P][N]`
    /// accumulator; the inverse NTT of both halves' P limbs (one launch per phase); the centred
    /// conversion `P → Q_ℓ` of both (one launch); and one forward NTT of both whose epilogue
    /// writes `[add_c +] (x_c − y_c) · P^{-1}` into the two results, permuted by `σ_g` for
    /// `galois = Some(g)` (a rotation's automorphism).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn keyswitch_moddown(
        &self,
        ring: &RnsRing,
        ell: usize,
        digits: &[&DeviceBuffer],
        keys: &[(&DeviceBuffer, &DeviceBuffer)],
        inner: [Option<&DeviceBuffer>; 2],
        adds: [Option<&DeviceBuffer>; 2],
        galois: Option<u64>,
    ) -> Result<[DeviceBuffer; 2]> {
        let n = ring.n();
        if !self.ntt.has_fast_kernels() {
            // Small rings (N < 2^12): the composition.
            let (a0, a1) = self.inner_product_plus(ring, ell, digits, keys, inner)?;
            let shape_q = ring.shape_q(ell);
            let [mut o0, mut o1] = [
                self.mod_down(ring, ell, &a0)?,
                self.mod_down(ring, ell, &a1)?,
            ];
            self.add_each(&shape_q, [&mut o0, &mut o1], adds)?;
            let Some(g) = galois else {
                return Ok([o0, o1]);
            };
            return Ok([
                self.automorphism(&shape_q, &o0, g, true)?,
                self.automorphism(&shape_q, &o1, g, true)?,
            ]);
        }
        let pl = ring.p_len();
        let width = ell + pl;
        let mut acc = self.alloc(2 * width * n)?;
        if digits.len() <= fused::MAX_DIGITS {
            fused::ks_inner_product_pair(
                &self.full, ell, self.q_len, digits, keys, inner, &mut acc, n,
            )?;
        } else {
            let (a0, a1) = self.inner_product_plus(ring, ell, digits, keys, inner)?;
            DeviceBuffer::copy_region(&a0, 0, &mut acc, 0, width * n)?;
            DeviceBuffer::copy_region(&a1, 0, &mut acc, width * n, width * n)?;
        }
        self.moddown_from_inner(ell, acc, adds, n, galois)
    }

    /// The ModDown of both halves of a key switching's inner product `acc` (`[2][Q_ℓ ∪ P][N]`,
    /// NTT form), plus the addends: the tail of [`GpuRing::keyswitch_moddown`].
    fn moddown_from_inner(
        &self,
        ell: usize,
        acc: DeviceBuffer,
        adds: [Option<&DeviceBuffer>; 2],
        n: usize,
        galois: Option<u64>,
    ) -> Result<[DeviceBuffer; 2]> {
        self.moddown_from_inner_lifting(ell, acc, adds, n, galois, None)
    }

    /// [`GpuRing::moddown_from_inner`]; with `errors = Some(e)`, each half's result also
    /// carries `+ e_c · P^{-1}` on its Q limbs for the small coefficient-form `e_c` given by
    /// limb 0 of `e[c]` (canonical mod `q_0`): `x + NTT(e) − NTT(y) = x − NTT(y − e)`, so the
    /// forward NTT's column kernel subtracts the centred lift of `e_c` from the conversion as it
    /// reads it, and `e` is never transformed over Q. No automorphism with errors.
    fn moddown_from_inner_lifting(
        &self,
        ell: usize,
        mut acc: DeviceBuffer,
        adds: [Option<&DeviceBuffer>; 2],
        n: usize,
        galois: Option<u64>,
        errors: Option<[&DeviceBuffer; 2]>,
    ) -> Result<[DeviceBuffer; 2]> {
        if errors.is_some() && galois.is_some() {
            return Err(Error::InvalidInput(
                "a ModDown with lifted errors takes no automorphism".into(),
            ));
        }
        let pl = self.ntt.len() - self.q_len;
        let width = ell + pl;
        let batch = NttBatch::limb_range(2, width, ell, pl).with_first_table(self.q_len - ell);
        let mut y = self.alloc(2 * ell * n)?;
        let conv = &self.mod_down[ell - 1];
        // The inverse NTT, with the conversion's first step folded in where it can be.
        if let Some(f) = &self.mod_down_inverse {
            self.ntt.inverse_scaled(&mut acc, &batch, f)?;
            conv.convert_scaled_centered_strided(&mut y, &acc, ell * n, width * n, 2, n)?;
        } else {
            self.ntt
                .transform(&mut acc, &batch, NttDirection::Inverse, NttAlgorithm::Fast)?;
            conv.convert_centered_strided(&mut y, &acc, ell * n, width * n, 2, n)?;
        }
        let mut o0 = self.alloc(ell * n)?;
        let mut o1 = self.alloc(ell * n)?;
        let runs = [0, 1].map(|c| NttRun {
            buf: 0,
            first_limb: c * ell,
            limbs: ell,
            table: 0,
        });
        let epi = [0, 1].map(|c| EpilogueRun {
            out: c,
            out_limb: 0,
            x: &acc,
            x_limb: c * width,
            c: adds[c].map(|a| (a, 0)),
        });
        if let Some(e) = errors {
            let lift = e.map(|src| LiftRun { src, limb: 0 });
            self.ntt.forward_runs_lift_add_epilogue(
                &lift,
                self.ntt.moduli()[0],
                &self.full,
                &mut [&mut y],
                &runs,
                &mut [&mut o0, &mut o1],
                &epi,
                LiftAddFactors {
                    lift_factor: &self.neg_one_w,
                    w: &self.mod_down_w,
                    w2: None,
                },
            )?;
            return Ok([o0, o1]);
        }
        // The accumulator is read for the last time.
        self.ntt.forward_runs_epilogue_consuming_x(
            &mut [&mut y],
            &runs,
            &mut [&mut o0, &mut o1],
            &epi,
            &self.mod_down_w,
            galois,
        )?;
        Ok([o0, o1])
    }

    /// The core of a public-key encryption at level `ℓ`, on the device: `(add + ModDown(v·b +
    /// e_0), ModDown(v·a + e_1))` for the key `(b, a)` (full `Q ∪ P` basis), bit for bit the
    /// transformed `v`, `e_0`, `e_1` through [`GpuRing::keyswitch_moddown`] with the errors as
    /// inner addends. `v` (coefficient form over `Q_ℓ ∪ P`) is transformed in place; each
    /// error `e[c]` comes in coefficient form over `Q_1 ∪ P` (the same small integers on every
    /// limb) and only its `P` limbs are transformed (in place): they enter the inner product,
    /// while its `Q` part enters the ModDown's forward NTT lifted from limb 0
    /// ([`GpuRing::moddown_from_inner_lifting`]). So `2 ℓ` of the encryption's limb-NTTs are
    /// saved. Launches: one grouped forward NTT, the inner product, the ModDown (3 + 2).
    pub(crate) fn encrypt_zero_moddown(
        &self,
        ring: &RnsRing,
        ell: usize,
        v: &mut DeviceBuffer,
        e: [&mut DeviceBuffer; 2],
        key: (&DeviceBuffer, &DeviceBuffer),
        add: Option<&DeviceBuffer>,
    ) -> Result<[DeviceBuffer; 2]> {
        let n = ring.n();
        let pl = ring.p_len();
        if !self.ntt.has_fast_kernels() || ell == 0 || ell > self.q_len {
            return Err(Error::InvalidInput(format!(
                "encrypt_zero_moddown at level {ell} of {} (needs the fast NTT)",
                self.q_len
            )));
        }
        let [e0, e1] = e;
        let runs = [
            NttRun {
                buf: 0,
                first_limb: 0,
                limbs: ell,
                table: 0,
            },
            NttRun {
                buf: 0,
                first_limb: ell,
                limbs: pl,
                table: self.q_len,
            },
            NttRun {
                buf: 1,
                first_limb: 1,
                limbs: pl,
                table: self.q_len,
            },
            NttRun {
                buf: 2,
                first_limb: 1,
                limbs: pl,
                table: self.q_len,
            },
        ];
        self.ntt
            .transform_runs(&mut [v, e0, e1], &runs, NttDirection::Forward)?;
        let width = ell + pl;
        let mut acc = self.alloc(2 * width * n)?;
        let adds = fused::KsAddends {
            bufs: [Some((&*e0, 1)), Some((&*e1, 1))],
            first_limb: ell,
        };
        fused::ks_inner_product_pair_with(
            &self.full,
            ell,
            self.q_len,
            &[&*v],
            &[key],
            adds,
            &mut acc,
            n,
        )?;
        self.moddown_from_inner_lifting(ell, acc, [add, None], n, None, Some([&*e0, &*e1]))
    }

    /// [`GpuRing::keyswitch_moddown`] followed by the rescale of both results, merged (the
    /// twin of `RnsRing::rescale_many` of `RnsRing::keyswitch_moddown`, bit for bit; `ℓ ≥ 2`).
    /// With `x_c` the inner product, `y_c` the conversion of its P limbs and `a_c` the addend,
    /// the ModDown gives `u_c = a_c + (x_c − NTT(y_c)) · P^{-1}` and the rescale needs only its
    /// last limb in coefficient form, `z_c = INTT(a_c) + (INTT(x_c) − y_c) · P^{-1}` mod
    /// `q_{ℓ-1}` (linearity), to write `(u_c − NTT(lift(z_c))) · q_{ℓ-1}^{-1}` =
    /// `(a_c + (x_c − NTT(y_c + P · lift(z_c))) · P^{-1}) · q_{ℓ-1}^{-1}`: one forward NTT of
    /// `ℓ − 1` limbs per half instead of `ℓ` for the ModDown and `ℓ − 1` for the rescale.
    /// Launches: inner product; one grouped inverse NTT (both halves' P limbs and last limbs,
    /// the addends' last limbs); one conversion; one small kernel for `z`; one forward NTT whose
    /// column kernel adds `P · lift(z)` and whose row kernel's epilogue applies both factors.
    pub(crate) fn keyswitch_moddown_rescale(
        &self,
        ring: &RnsRing,
        ell: usize,
        digits: &[&DeviceBuffer],
        keys: &[(&DeviceBuffer, &DeviceBuffer)],
        adds: [Option<&DeviceBuffer>; 2],
    ) -> Result<[DeviceBuffer; 2]> {
        let n = ring.n();
        if ell < 2 {
            return Err(Error::InvalidInput(format!(
                "keyswitch_moddown_rescale at {ell} limb(s): rescaling needs 2"
            )));
        }
        if !self.ntt.has_fast_kernels() || digits.len() > fused::MAX_DIGITS {
            let [a, b] =
                self.keyswitch_moddown(ring, ell, digits, keys, [None, None], adds, None)?;
            return self
                .rescale_ntt_many(ring, ell, &[&a, &b])?
                .try_into()
                .map_err(|_| Error::InvalidInput("rescale: missing output".into()));
        }
        let width = ell + ring.p_len();
        let mut acc = self.alloc(2 * width * n)?;
        let none = [None, None];
        fused::ks_inner_product_pair(&self.full, ell, self.q_len, digits, keys, none, &mut acc, n)?;
        self.moddown_rescale_from_inner(ring, ell, acc, adds, n)
    }

    /// The merged ModDown and rescale of both halves of a key switching's inner product `acc`
    /// (`[2][Q_ℓ ∪ P][N]`, NTT form, `ℓ ≥ 2`), plus the addends: the tail of
    /// [`GpuRing::keyswitch_moddown_rescale`].
    fn moddown_rescale_from_inner(
        &self,
        ring: &RnsRing,
        ell: usize,
        mut acc: DeviceBuffer,
        adds: [Option<&DeviceBuffer>; 2],
        n: usize,
    ) -> Result<[DeviceBuffer; 2]> {
        let pl = self.ntt.len() - self.q_len;
        let width = ell + pl;
        let last = ell - 1;
        // The addends' last limbs, inverse-transformed into `t` (z's first term).
        let mut t = self.alloc(2 * n)?;
        let mut runs = Vec::with_capacity(6);
        let mut sources = Vec::with_capacity(6);
        for (c, add) in adds.iter().enumerate() {
            runs.push(NttRun {
                buf: 0,
                first_limb: c * width + ell,
                limbs: pl,
                table: self.q_len,
            });
            runs.push(NttRun {
                buf: 0,
                first_limb: c * width + last,
                limbs: 1,
                table: last,
            });
            sources.extend([None, None]);
            if let Some(a) = add {
                runs.push(NttRun {
                    buf: 1,
                    first_limb: c,
                    limbs: 1,
                    table: last,
                });
                sources.push(Some((*a, last)));
            }
        }
        // The inverse NTT: the addends' limbs read where they lie, the conversion's first
        // step folded into the P limbs' (the Q limbs' factor is 1) where it can be.
        let mut y = self.alloc(2 * ell * n)?;
        let conv = &self.mod_down[ell - 1];
        if self.ntt.has_fast_kernels() {
            let f = self.mod_down_inverse.as_ref();
            self.ntt
                .inverse_runs_from(&mut [&mut acc, &mut t], &runs, &sources, f)?;
        } else {
            for (r, src) in runs.iter().zip(&sources) {
                if let Some((a, limb)) = src {
                    DeviceBuffer::copy_region(a, limb * n, &mut t, r.first_limb * n, n)?;
                }
            }
            self.ntt
                .transform_runs(&mut [&mut acc, &mut t], &runs, NttDirection::Inverse)?;
        }
        if self.mod_down_inverse.is_some() {
            conv.convert_scaled_centered_strided(&mut y, &acc, ell * n, width * n, 2, n)?;
        } else {
            conv.convert_centered_strided(&mut y, &acc, ell * n, width * n, 2, n)?;
        }
        let q_last = self.ntt.moduli()[last];
        let p_inv = ring.mod_down_plan().p_inv_mod_q()[last];
        let rows = [0, 1].map(|c| {
            (
                fused::Limb {
                    buf: &acc,
                    limb: c * width + last,
                },
                fused::Limb {
                    buf: &y,
                    limb: c * ell + last,
                },
                adds[c].is_some(),
            )
        });
        fused::moddown_rows(&mut t, &rows, q_last, p_inv, n)?;
        let mut o0 = self.alloc(last * n)?;
        let mut o1 = self.alloc(last * n)?;
        let runs = [0, 1].map(|c| NttRun {
            buf: 0,
            first_limb: c * ell,
            limbs: last,
            table: 0,
        });
        let lift = [0, 1].map(|c| LiftRun { src: &t, limb: c });
        let epi = [0, 1].map(|c| EpilogueRun {
            out: c,
            out_limb: 0,
            x: &acc,
            x_limb: c * width,
            c: adds[c].map(|a| (a, 0)),
        });
        self.ntt.forward_runs_lift_add_epilogue(
            &lift,
            q_last,
            &self.full,
            &mut [&mut y],
            &runs,
            &mut [&mut o0, &mut o1],
            &epi,
            LiftAddFactors {
                lift_factor: &self.p_mod_q_w,
                w: &self.mod_down_w,
                w2: Some(&self.rescale_w[ell - 2]),
            },
        )?;
        Ok([o0, o1])
    }

    /// Rescaling of several NTT-form polynomials of level `ℓ` at once (a ciphertext's parts):
    /// the inverse NTT of every last limb in one launch per phase, then one forward NTT whose
    /// column kernel lifts those limbs centred to the `ℓ - 1` primes as it reads them and whose
    /// row kernel's epilogue writes `(x_i − NTT_i(lift)) · q_{ℓ-1}^{-1}` (the twin of
    /// [`GpuRing::rescale`] on each part).
    pub(crate) fn rescale_ntt_many(
        &self,
        ring: &RnsRing,
        ell: usize,
        inputs: &[&DeviceBuffer],
    ) -> Result<Vec<DeviceBuffer>> {
        let n = ring.n();
        let k = inputs.len();
        if !self.ntt.has_fast_kernels() {
            return inputs
                .iter()
                .map(|x| self.rescale_ntt_composed(ring, ell, x))
                .collect();
        }
        if k == 0 || k > MAX_RUNS {
            return Err(Error::InvalidInput(format!(
                "rescale of {k} polynomials at once (1..={MAX_RUNS})"
            )));
        }
        // The inverse NTT of every input's last limb into `t`, read in place (no copies).
        let mut t = self.alloc(k * n)?;
        let last: Vec<NttRun> = (0..k)
            .map(|i| NttRun {
                buf: 0,
                first_limb: i,
                limbs: 1,
                table: ell - 1,
            })
            .collect();
        let sources: Vec<_> = inputs.iter().map(|x| Some((*x, ell - 1))).collect();
        self.ntt
            .inverse_runs_from(&mut [&mut t], &last, &sources, None)?;
        // The centred lift of each INTT'd last limb to the ell - 1 primes is fused into the
        // forward column kernel, which writes its output to `scratch`.
        let q_last = self.ntt.moduli()[ell - 1];
        let lift: Vec<LiftRun<'_>> = (0..k).map(|i| LiftRun { src: &t, limb: i }).collect();
        let mut scratch = (0..k)
            .map(|_| self.alloc((ell - 1) * n))
            .collect::<Result<Vec<_>>>()?;
        let mut outs = (0..k)
            .map(|_| self.alloc((ell - 1) * n))
            .collect::<Result<Vec<_>>>()?;
        let runs: Vec<NttRun> = (0..k)
            .map(|i| NttRun {
                buf: i,
                first_limb: 0,
                limbs: ell - 1,
                table: 0,
            })
            .collect();
        let epi: Vec<EpilogueRun<'_>> = inputs
            .iter()
            .enumerate()
            .map(|(i, x)| EpilogueRun {
                out: i,
                out_limb: 0,
                x,
                x_limb: 0,
                c: None,
            })
            .collect();
        let mut srcs: Vec<&mut DeviceBuffer> = scratch.iter_mut().collect();
        let mut dsts: Vec<&mut DeviceBuffer> = outs.iter_mut().collect();
        self.ntt.forward_runs_lifted_epilogue(
            &lift,
            q_last,
            &self.full,
            &mut srcs,
            &runs,
            &mut dsts,
            &epi,
            &self.rescale_w[ell - 2],
        )?;
        Ok(outs)
    }

    /// The tensor product of two 2-component ciphertexts of `shape`, one fused pass.
    pub(crate) fn tensor(
        &self,
        shape: &PolyShape,
        a: [&DeviceBuffer; 2],
        b: [&DeviceBuffer; 2],
    ) -> Result<[DeviceBuffer; 3]> {
        let words = shape.words();
        let mut d0 = self.alloc(words)?;
        let mut d1 = self.alloc(words)?;
        let mut d2 = self.alloc(words)?;
        fused::tensor(
            a,
            b,
            [&mut d0, &mut d1, &mut d2],
            self.moduli(shape),
            shape.limbs(),
            shape.n,
        )?;
        Ok([d0, d1, d2])
    }

    /// ModDown of a level-`ℓ` NTT-form polynomial over `Q_ℓ ∪ P` to `Q_ℓ` (the twin of
    /// `cpu::mod_down`): inverse NTT of the P limbs, centred conversion `P → Q_ℓ`, forward NTT,
    /// then `(x_i - y_i) · P^{-1} mod q_i` (one fused launch, in place on `y`).
    pub(crate) fn mod_down(
        &self,
        ring: &RnsRing,
        ell: usize,
        input: &DeviceBuffer,
    ) -> Result<DeviceBuffer> {
        let n = ring.n();
        let pl = ring.p_len();
        let shape_q = ring.shape_q(ell);
        let mut xp = self.alloc(pl * n)?;
        DeviceBuffer::copy_region(input, ell * n, &mut xp, 0, pl * n)?;
        let batch = NttBatch::all(1, pl).with_first_table(self.q_len);
        self.ntt
            .transform(&mut xp, &batch, NttDirection::Inverse, NttAlgorithm::Fast)?;
        let mut y = self.alloc(ell * n)?;
        self.mod_down[ell - 1].convert_centered(&mut y, &xp, n)?;
        self.ntt(&shape_q, &mut y, 0..ell, NttDirection::Forward)?;
        fused::sub_mul_scalar_assign(&mut y, input, &self.mod_down_w, &self.full, 0, ell, n)?;
        Ok(y)
    }

    /// Rescaling of a level-`ℓ` polynomial by its last prime (`round(x / q_{ℓ-1})`), in either
    /// form. In coefficient form: the `DeviceRescaler` kernel. In NTT form, only the last limb
    /// leaves the NTT domain: with `c` the centred lift of its coefficients (`x = q_{ℓ-1}·k + c`,
    /// `|c| ≤ ⌊q_{ℓ-1}/2⌋`, so `k = round(x / q_{ℓ-1})`, the `Rescaler`'s integer exactly),
    /// `NTT(k)_i = (x_i − NTT_i([c]_{q_i})) · q_{ℓ-1}^{-1}`: [`GpuRing::rescale_ntt_many`] of
    /// the one polynomial (one-limb inverse NTT, then the lift and the subtract-multiply fused
    /// into the forward NTT).
    pub(crate) fn rescale(
        &self,
        ring: &RnsRing,
        ell: usize,
        input: &DeviceBuffer,
        ntt_form: bool,
    ) -> Result<DeviceBuffer> {
        if ntt_form {
            let mut outs = self.rescale_ntt_many(ring, ell, &[input])?;
            return outs
                .pop()
                .ok_or_else(|| Error::InvalidInput("rescale: no output".into()));
        }
        let mut out = self.alloc((ell - 1) * ring.n())?;
        self.rescaler.apply(ell, input, &mut out, ring.n())?;
        Ok(out)
    }

    /// The NTT-form rescale of one polynomial as separate launches (one-limb inverse NTT, lift,
    /// forward NTT, subtract-multiply): the path for degrees without the fused NTT kernels.
    fn rescale_ntt_composed(
        &self,
        ring: &RnsRing,
        ell: usize,
        input: &DeviceBuffer,
    ) -> Result<DeviceBuffer> {
        let n = ring.n();
        let mut out = self.alloc((ell - 1) * n)?;
        {
            let mut t = self.alloc(n)?;
            DeviceBuffer::copy_region(input, (ell - 1) * n, &mut t, 0, n)?;
            let batch = NttBatch::all(1, 1).with_first_table(ell - 1);
            self.ntt
                .transform(&mut t, &batch, NttDirection::Inverse, NttAlgorithm::Fast)?;
            let q_last = self.q_values[ell - 1];
            fused::rescale_lift(&mut out, &t, q_last, &self.full, ell - 1, n)?;
            self.ntt(
                &ring.shape_q(ell - 1),
                &mut out,
                0..ell - 1,
                NttDirection::Forward,
            )?;
            let w = &self.rescale_w[ell - 2];
            fused::sub_mul_scalar_assign(&mut out, input, w, &self.full, 0, ell - 1, n)?;
        }
        Ok(out)
    }

    /// [`GpuRing::inner_product`] with `inner_c` added to half `c` (the unfused path of
    /// [`GpuRing::keyswitch_moddown`]).
    fn inner_product_plus(
        &self,
        ring: &RnsRing,
        ell: usize,
        digits: &[&DeviceBuffer],
        keys: &[(&DeviceBuffer, &DeviceBuffer)],
        inner: [Option<&DeviceBuffer>; 2],
    ) -> Result<(DeviceBuffer, DeviceBuffer)> {
        let (mut a0, mut a1) = self.inner_product(ring, ell, digits, keys)?;
        self.add_each(&ring.shape_qp(ell), [&mut a0, &mut a1], inner)?;
        Ok((a0, a1))
    }

    /// `outs[c] += addends[c]` for each given addend (shape `shape`).
    fn add_each(
        &self,
        shape: &PolyShape,
        outs: [&mut DeviceBuffer; 2],
        addends: [Option<&DeviceBuffer>; 2],
    ) -> Result<()> {
        for (o, c) in outs.into_iter().zip(addends) {
            if let Some(c) = c {
                self.add(shape, o, c)?;
            }
        }
        Ok(())
    }

    /// The key-switching inner product over `Q_ℓ ∪ P` (the twin of `cpu::inner_product`): the
    /// key's limbs of `Q_ℓ ∪ P` (its first `ℓ` and its last `|P|` limbs) times the digits,
    /// accumulated: one fused launch reading the key in place at any level
    /// (`fused::ks_inner_product`); element-wise per digit beyond `fused::MAX_DIGITS` digits.
    pub(crate) fn inner_product(
        &self,
        ring: &RnsRing,
        ell: usize,
        digits: &[&DeviceBuffer],
        keys: &[(&DeviceBuffer, &DeviceBuffer)],
    ) -> Result<(DeviceBuffer, DeviceBuffer)> {
        let shape = ring.shape_qp(ell);
        let mut acc0 = self.alloc(shape.words())?;
        let mut acc1 = self.alloc(shape.words())?;
        if digits.len() <= fused::MAX_DIGITS {
            fused::ks_inner_product(
                &self.full,
                ell,
                self.q_len,
                digits,
                keys,
                &mut acc0,
                &mut acc1,
                ring.n(),
            )?;
            return Ok((acc0, acc1));
        }
        let layout = Self::layout(&shape);
        let m = self.moduli(&shape);
        for (j, (d, (b, a))) in digits.iter().zip(keys).enumerate() {
            let (b, a) = (self.key_limbs(ring, b, ell)?, self.key_limbs(ring, a, ell)?);
            if j == 0 {
                ew::mul(&mut acc0, d, &b, &layout, m)?;
                ew::mul(&mut acc1, d, &a, &layout, m)?;
            } else {
                ew::mul_add_assign(&mut acc0, d, &b, &layout, m)?;
                ew::mul_add_assign(&mut acc1, d, &a, &layout, m)?;
            }
        }
        Ok((acc0, acc1))
    }

    /// The limbs of `Q_ℓ ∪ P` of a key polynomial stored over the full `Q ∪ P`.
    fn key_limbs<'a>(
        &self,
        ring: &RnsRing,
        k: &'a DeviceBuffer,
        ell: usize,
    ) -> Result<Operand<'a>> {
        if ell == self.q_len {
            Ok(Operand::Borrowed(k))
        } else {
            Ok(Operand::Owned(self.truncate(&ring.full_shape(), k, ell)?))
        }
    }

    // ------------------------------------------------------------------ sampling

    /// A uniform polynomial of `shape` from `(seed, stream)` (the host's stream, on the device).
    pub(crate) fn uniform(
        &self,
        shape: &PolyShape,
        seed: &[u8; 32],
        stream: u64,
    ) -> Result<DeviceBuffer> {
        let mut out = self.alloc(shape.words())?;
        sample::uniform_from_seed(
            &mut out,
            seed,
            stream,
            &Self::layout(shape),
            self.moduli(shape),
        )?;
        Ok(out)
    }

    /// A ternary polynomial of `shape` (coefficient form) from `(seed, 0)`: the words of
    /// `rhea_math::sampler::ternary_from_seed(seed, 0, N)` lifted to every limb, on the device.
    pub(crate) fn ternary(&self, shape: &PolyShape, seed: &[u8; 32]) -> Result<DeviceBuffer> {
        let mut out = self.alloc(shape.words())?;
        sample::ternary_from_seed(&mut out, seed, 0, &Self::layout(shape), self.moduli(shape))?;
        Ok(out)
    }

    /// A discrete Gaussian polynomial of `shape` (coefficient form) from `(seed, 0)`: the words
    /// of `rhea_math::sampler::gaussian_from_seed(seed, 0, N, sigma, bound)` lifted to every
    /// limb, on the device (`bound` must satisfy `sample::gaussian_fits`).
    pub(crate) fn gaussian(
        &self,
        shape: &PolyShape,
        seed: &[u8; 32],
        sigma: f64,
        bound: f64,
    ) -> Result<DeviceBuffer> {
        let mut out = self.alloc(shape.words())?;
        sample::gaussian_from_seed(
            &mut out,
            seed,
            0,
            &Self::layout(shape),
            self.moduli(shape),
            sigma,
            bound,
        )?;
        Ok(out)
    }
}
