//! [`CkksContext`]: parameters plus the device everything is created on.

use crate::backend::{Device, RnsRing};
use crate::error::Result;
use crate::params::CkksParameters;
use crate::rlwe::RlweContext;

/// The parameters and the device: what every CKKS object is built from. Cheap to clone,
/// `Send + Sync`.
///
/// ```
/// use rhea::{ckks::CkksContext, params::CkksParametersLiteral, Device};
/// let params = CkksParametersLiteral::n13_logqp200_levels2().build()?;
/// let ctx = CkksContext::new(&params, Device::best())?; // the GPU if there is one
/// assert_eq!(ctx.device(), Device::best());
/// // Asking for a GPU that is not there is a typed error.
/// assert!(CkksContext::new(&params, Device::Cuda(999)).is_err());
/// # Ok::<(), rhea::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct CkksContext {
    params: CkksParameters,
    rlwe: RlweContext,
}

impl CkksContext {
    /// A context for `params` on `device` (errors if the device is not usable on this machine).
    /// On a GPU, the ring's tables are uploaded here, once per parameter set and device.
    pub fn new(params: &CkksParameters, device: Device) -> Result<Self> {
        let rlwe = RlweContext::for_params(params.core(), device)?;
        Ok(Self {
            params: params.clone(),
            rlwe,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &CkksParameters {
        &self.params
    }

    /// The RLWE core on the same ring and device.
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

    /// This context, counting its key switchings in `other`'s counter (see
    /// [`CkksContext::keyswitches`]).
    pub(crate) fn sharing_keyswitch_count(mut self, other: &CkksContext) -> Self {
        self.rlwe = self.rlwe.sharing_keyswitch_count(&other.rlwe);
        self
    }

    /// The key switchings run through this context and its clones (evaluators built from it
    /// included): see [`RlweContext::keyswitches`].
    pub fn keyswitches(&self) -> u64 {
        self.rlwe.keyswitches()
    }
}

/// The RLWE core, so that keys move to this context's device with
/// [`SecretKey::to_device`](crate::rlwe::SecretKey::to_device) and the like.
impl AsRef<RlweContext> for CkksContext {
    fn as_ref(&self) -> &RlweContext {
        &self.rlwe
    }
}
