//! [`RnsRing`]: the precomputed tables of one `Q ∪ P` RNS ring, shared by every primitive.

use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use rhea_math::basis::Basis;
use rhea_math::bconv::Rescaler;
use rhea_math::ntt::NttTable;
use rhea_math::Modulus;

use super::all_data::AllDataPlan;
use super::cuda::GpuRing;
use super::keyswitch_plan::KeySwitchPlan;
use super::{Device, PolyShape};
use crate::error::{Error, Result};

/// The ring `Z_{Q·P}[X]/(X^N + 1)` in RNS form, with every table the primitives need:
/// the NTT tables of each prime, the hybrid key-switching plans (ModUp per digit, ModDown per
/// level), and the rescaling tables.
///
/// Scheme-agnostic: CKKS and BGV parameters both hold one behind an `Arc`. The primitives are
/// its methods (see [`crate::backend`]). The device copies of these tables hang off this struct
/// too: they are uploaded to a GPU the first time the ring is used there
/// ([`RnsRing::prepare`]), and reused by every primitive afterwards.
pub struct RnsRing {
    n: usize,
    log_n: u32,
    q: Basis,
    p: Basis,
    /// NTT tables, `Q` primes then `P` primes.
    ntt: Vec<NttTable>,
    /// Digits, ModUp and ModDown tables, `[P]_{q_i}`.
    keyswitch: KeySwitchPlan,
    rescaler: Rescaler,
    /// The device tables, one entry per GPU the ring has been used on.
    gpu: Mutex<Vec<Arc<GpuRing>>>,
    /// The all-data mode's tables (LITE), one entry per GPU it has been used on.
    all_data: Mutex<Vec<Arc<AllDataPlan>>>,
}

impl RnsRing {
    /// Builds the tables for degree `n` over the primes `q` (the ciphertext chain, in order) and
    /// `p` (the key-switching primes), with `dnum` key-switching digits.
    ///
    /// Errors: the `rhea-math` errors for non-NTT-friendly or repeated primes, a bad degree, or a
    /// `dnum` that does not split `Q` into `dnum` non-empty digits; [`Error::InvalidParameters`]
    /// for an empty `Q` or `P`.
    pub fn new(n: usize, q: &[u64], p: &[u64], dnum: usize) -> Result<Self> {
        if q.is_empty() || p.is_empty() {
            return Err(Error::InvalidParameters(
                "the ring needs at least one Q prime and one P prime".into(),
            ));
        }
        let all: Vec<u64> = q.iter().chain(p).copied().collect();
        // Validates distinctness and coprimality of Q ∪ P at once.
        Basis::new(&all)?;
        let qb = Basis::new(q)?;
        let pb = Basis::new(p)?;
        let ntt = all
            .iter()
            .map(|&v| NttTable::new(Modulus::new(v)?, n))
            .collect::<rhea_math::Result<Vec<_>>>()?;
        let keyswitch = KeySwitchPlan::new(&qb, &pb, dnum)?;
        let rescaler = Rescaler::new(&qb)?;
        Ok(Self {
            n,
            log_n: n.trailing_zeros(),
            q: qb,
            p: pb,
            ntt,
            keyswitch,
            rescaler,
            gpu: Mutex::new(Vec::new()),
            all_data: Mutex::new(Vec::new()),
        })
    }

    /// Makes the ring usable on `device`: on a GPU, uploads every table the primitives need
    /// (NTT twiddles, moduli, ModUp/ModDown converters of every level, rescaling tables) unless
    /// that was done already; nothing on the CPU. Every primitive calls it, so an explicit call
    /// only moves the one-time upload to a chosen moment (contexts call it on creation, so that
    /// evaluation never uploads).
    ///
    /// Errors: [`Error::DeviceNotSupported`] without a usable GPU; device errors.
    pub fn prepare(&self, device: Device) -> Result<()> {
        match device {
            Device::Cpu => Ok(()),
            Device::Cuda(i) => self.gpu_ring(i).map(|_| ()),
        }
    }

    /// The device tables on GPU `index`, uploaded on first use.
    pub(crate) fn gpu_ring(&self, index: usize) -> Result<Arc<GpuRing>> {
        let mut cache = self.gpu.lock().map_err(|_| {
            Error::Gpu(rhea_cuda::CudaError::Driver(
                "the ring's device-table cache lock is poisoned".into(),
            ))
        })?;
        if let Some(g) = cache.iter().find(|g| g.device().index() == index) {
            return Ok(g.clone());
        }
        let dev = super::device::gpu(index)?;
        let g = Arc::new(GpuRing::new(self, dev)?);
        cache.push(g.clone());
        Ok(g)
    }

    /// The all-data mode's tables on GPU `index` (LITE, `backend::all_data`), uploaded on
    /// first use and shared by every protected evaluator of the ring.
    pub(crate) fn all_data_plan(&self, index: usize) -> Result<Arc<AllDataPlan>> {
        let mut cache = self.all_data.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = cache.iter().find(|p| p.device() == Device::Cuda(index)) {
            return Ok(p.clone());
        }
        let p = Arc::new(AllDataPlan::new(self, index)?);
        cache.push(p.clone());
        Ok(p)
    }

    /// The ring degree `N`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// `log2 N`.
    pub fn log_n(&self) -> u32 {
        self.log_n
    }

    /// The ciphertext basis `Q`.
    pub fn q(&self) -> &Basis {
        &self.q
    }

    /// The key-switching basis `P`.
    pub fn p(&self) -> &Basis {
        &self.p
    }

    /// `|Q|`.
    pub fn q_len(&self) -> usize {
        self.q.len()
    }

    /// `|P|`.
    pub fn p_len(&self) -> usize {
        self.p.len()
    }

    /// The key-switching plan: digits, ModUp and ModDown tables of every level.
    pub fn keyswitch_plan(&self) -> &KeySwitchPlan {
        &self.keyswitch
    }

    /// The number of key-switching digits.
    pub fn dnum(&self) -> usize {
        self.keyswitch.dnum()
    }

    /// The `Q` limb ranges of the key-switching digits.
    pub fn digits(&self) -> &[Range<usize>] {
        self.keyswitch.digits()
    }

    /// The number of digits with an active limb when `q_limbs` Q limbs are active.
    pub fn active_digits(&self, q_limbs: usize) -> usize {
        self.keyswitch.active_digits(q_limbs)
    }

    /// `[P]_{q_i}` for every Q prime.
    pub fn p_mod_q(&self) -> &[u64] {
        self.keyswitch.p_mod_q()
    }

    /// The rescaling tables.
    pub fn rescaler(&self) -> &Rescaler {
        &self.rescaler
    }

    /// The full shape `Q ∪ P` (what keys are stored over).
    pub fn full_shape(&self) -> PolyShape {
        PolyShape::qp(self.n, self.q.len(), self.p.len())
    }

    /// The shape of the first `q_limbs` Q primes.
    pub fn shape_q(&self, q_limbs: usize) -> PolyShape {
        PolyShape::q(self.n, q_limbs)
    }

    /// The shape of the first `q_limbs` Q primes extended by `P`.
    pub fn shape_qp(&self, q_limbs: usize) -> PolyShape {
        PolyShape::qp(self.n, q_limbs, self.p.len())
    }

    /// Index into the `Q ∪ P` prime list of limb `i` of a polynomial of this shape.
    #[inline]
    pub(crate) fn prime_index(&self, shape: &PolyShape, i: usize) -> usize {
        if i < shape.q_limbs {
            i
        } else {
            self.q.len() + (i - shape.q_limbs)
        }
    }

    /// The modulus of limb `i` of a polynomial of this shape.
    #[inline]
    pub fn modulus(&self, shape: &PolyShape, i: usize) -> &Modulus {
        let j = self.prime_index(shape, i);
        self.ntt[j].modulus()
    }

    /// The NTT table of limb `i` of a polynomial of this shape.
    #[inline]
    pub fn ntt_table(&self, shape: &PolyShape, i: usize) -> &NttTable {
        &self.ntt[self.prime_index(shape, i)]
    }

    /// The NTT tables of every prime, `Q` then `P` (the full shape's limbs).
    pub(crate) fn ntt_tables(&self) -> &[NttTable] {
        &self.ntt
    }

    /// The moduli of every limb of a polynomial of this shape.
    pub fn moduli(&self, shape: &PolyShape) -> Vec<Modulus> {
        (0..shape.limbs())
            .map(|i| *self.modulus(shape, i))
            .collect()
    }

    /// Checks that `shape` is a valid shape of this ring.
    pub fn check_shape(&self, op: &'static str, shape: &PolyShape) -> Result<()> {
        let ok = shape.n == self.n
            && shape.q_limbs >= 1
            && shape.q_limbs <= self.q.len()
            && (shape.p_limbs == 0 || shape.p_limbs == self.p.len());
        if ok {
            Ok(())
        } else {
            Err(Error::ShapeMismatch {
                op,
                lhs: *shape,
                rhs: self.full_shape(),
            })
        }
    }
}

impl fmt::Debug for RnsRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RnsRing")
            .field("n", &self.n)
            .field("q", &self.q.values())
            .field("p", &self.p.values())
            .field("dnum", &self.dnum())
            .finish()
    }
}
