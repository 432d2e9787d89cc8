//! [`BgvContext`]: parameters, the RLWE core on a device, and the tables modulo `t`.

use std::sync::Arc;

use rhea_math::ntt::{bit_reverse, NttTable};
use rhea_math::Modulus;

use super::noise::NoiseModel;
use super::BgvParameters;
use crate::backend::{Device, PolyShape, RnsRing};
use crate::error::Result;
use crate::rlwe::RlweContext;

/// The batching tables: the NTT modulo `t` and the slot ↔ evaluation-point map.
#[derive(Debug)]
pub(crate) struct BatchTables {
    pub(crate) ntt: NttTable,
    /// `index[s]`: the position in the (bit-reversed) NTT output of slot `s`; slot
    /// `s = r·N/2 + j` is the evaluation at `ψ^e` with `e = (-1)^r · 5^j mod 2N`.
    pub(crate) index: Vec<usize>,
}

/// The constants modulo `t` and the per-limb scalars that BGV adds to the RLWE core.
#[derive(Debug)]
pub(crate) struct Tables {
    pub(crate) t: Modulus,
    /// `t mod q_i` for every Q prime.
    pub(crate) t_mod_q: Vec<u64>,
    /// `t^{-1} mod q_i` for every Q prime.
    pub(crate) t_inv_mod_q: Vec<u64>,
    /// `q_i^{-1} mod t` for every Q prime (the factor a modulus switch multiplies in).
    pub(crate) q_inv_mod_t: Vec<u64>,
    pub(crate) batch: Option<BatchTables>,
}

/// The parameters, the RLWE core on a device and the BGV tables: what every BGV object is built
/// from. Cheap to clone, `Send + Sync`.
///
/// ```
/// use rhea::{bgv::{BgvContext, BgvParametersLiteral}, Device};
/// let params = BgvParametersLiteral::test_n12_levels5_insecure().build()?;
/// let ctx = BgvContext::new(&params, Device::best())?;
/// assert_eq!(ctx.device(), Device::best()); // the GPU if there is one, else the CPU
/// assert!(BgvContext::new(&params, Device::Cuda(999)).is_err());
/// # Ok::<(), rhea::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct BgvContext {
    params: BgvParameters,
    rlwe: RlweContext,
    pub(crate) tables: Arc<Tables>,
    pub(crate) noise: Arc<NoiseModel>,
}

impl BgvContext {
    /// A context for `params` on `device` (errors if the device is not usable by this build).
    pub fn new(params: &BgvParameters, device: Device) -> Result<Self> {
        let rlwe = RlweContext::for_params(params.core(), device)?;
        let t = Modulus::new(params.t())?;
        let q_moduli = params
            .q_primes()
            .iter()
            .map(|&q| Modulus::new(q))
            .collect::<rhea_math::Result<Vec<_>>>()?;
        let t_mod_q: Vec<u64> = q_moduli.iter().map(|q| q.reduce(t.value())).collect();
        let t_inv_mod_q = q_moduli
            .iter()
            .zip(&t_mod_q)
            .map(|(q, &x)| q.inv(x))
            .collect::<rhea_math::Result<Vec<_>>>()?;
        let q_inv_mod_t = params
            .q_primes()
            .iter()
            .map(|&q| t.inv(t.reduce(q)))
            .collect::<rhea_math::Result<Vec<_>>>()?;
        let batch = if params.batching() {
            let n = params.n();
            let log_n = params.log_n();
            let two_n = 2 * n as u64;
            let mut index = vec![0usize; n];
            let mut g = 1u64;
            for j in 0..n / 2 {
                for (r, e) in [(0, g), (1, two_n - g)] {
                    index[r * n / 2 + j] = bit_reverse(((e - 1) / 2) as usize, log_n);
                }
                g = g * 5 % two_n;
            }
            Some(BatchTables {
                ntt: NttTable::new(t, n)?,
                index,
            })
        } else {
            None
        };
        Ok(Self {
            params: params.clone(),
            rlwe,
            tables: Arc::new(Tables {
                t,
                t_mod_q,
                t_inv_mod_q,
                q_inv_mod_t,
                batch,
            }),
            noise: Arc::new(NoiseModel::new(params)),
        })
    }

    /// The parameters.
    pub fn params(&self) -> &BgvParameters {
        &self.params
    }

    /// The RLWE core on the same ring and device (shared with CKKS: keys, encryption, key
    /// switching).
    pub fn rlwe(&self) -> &RlweContext {
        &self.rlwe
    }

    /// The ring and its primitives (outside the crate: [`crate::unstable::HasRing`]).
    pub(crate) fn ring(&self) -> &RnsRing {
        self.rlwe.ring()
    }

    /// The device.
    pub fn device(&self) -> Device {
        self.rlwe.device()
    }

    /// The plaintext modulus `t`.
    pub fn t(&self) -> u64 {
        self.tables.t.value()
    }

    /// The shape of a level-`level` polynomial.
    pub(crate) fn shape_at(&self, level: usize) -> PolyShape {
        self.ring().shape_q(self.params.q_limbs_at_level(level))
    }

    /// Per-limb scalars for the first `limbs` Q limbs: `x · t^{-1} mod q_i` for a small signed
    /// `x`.
    pub(crate) fn t_inv_times(&self, x: i64, limbs: usize) -> Vec<u64> {
        let ring = self.ring();
        let shape = ring.shape_q(limbs);
        (0..limbs)
            .map(|i| {
                let q = ring.modulus(&shape, i);
                q.mul(q.reduce_i64(x), self.tables.t_inv_mod_q[i])
            })
            .collect()
    }

    /// Per-limb scalars `t mod q_i` for the first `limbs` Q limbs.
    pub(crate) fn t_scalars(&self, limbs: usize) -> Vec<u64> {
        self.tables.t_mod_q[..limbs].to_vec()
    }
}

/// The RLWE core, so that keys move to this context's device with
/// [`SecretKey::to_device`](crate::rlwe::SecretKey::to_device) and the like.
impl AsRef<RlweContext> for BgvContext {
    fn as_ref(&self) -> &RlweContext {
        &self.rlwe
    }
}
