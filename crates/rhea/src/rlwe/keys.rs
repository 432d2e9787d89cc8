//! RLWE keys: secret, public, key-switching (relinearisation and Galois).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use super::RlweContext;
use crate::backend::Poly;
use crate::error::{Error, Result};

/// Every component of a key on `rlwe`'s device, after checking the key's parameters.
fn transfer_all<const K: usize>(
    rlwe: &RlweContext,
    op: &'static str,
    params_id: u64,
    parts: &[[Poly; K]],
) -> Result<Vec<[Poly; K]>> {
    rlwe.check_id(op, params_id)?;
    let ring = rlwe.ring();
    parts
        .iter()
        .map(|group| {
            let moved = group
                .iter()
                .map(|p| ring.transfer(p, rlwe.device()))
                .collect::<Result<Vec<_>>>()?;
            Ok(moved
                .try_into()
                .unwrap_or_else(|_| unreachable!("K polynomials in, K out")))
        })
        .collect()
}

/// `From<&Key> for Arc<Key>` (a clone), so that constructors taking `impl Into<Arc<Key>>` accept
/// the key, an `Arc` of it (shared, no copy) or a reference (copied).
macro_rules! arc_from_ref {
    ($($t:ty),*) => {$(
        impl From<&$t> for Arc<$t> {
            fn from(key: &$t) -> Self {
                Arc::new(key.clone())
            }
        }
    )*};
}
arc_from_ref!(
    SecretKey,
    PublicKey,
    KeySwitchKey,
    RelinearizationKey,
    GaloisKeys
);

/// The secret key `s`, in NTT form over `Q` and over `Q ∪ P`.
///
/// Zeroised on drop (every clone too); deliberately not `Debug` or serialisable with serde, so it
/// cannot leak into logs or files by accident (write it explicitly with
/// [`Codec::write_secret_key`](crate::serial::Codec::write_secret_key)):
///
/// ```compile_fail
/// fn leak(sk: &rhea::rlwe::SecretKey) { println!("{sk:?}"); } // no Debug
/// ```
/// ```compile_fail
/// fn save<T: serde::Serialize>(_: &T) {}
/// fn leak(sk: &rhea::rlwe::SecretKey) { save(sk) } // not serialisable
/// ```
///
/// `Clone` copies the key on its device (panicking only if that device is out of memory, as
/// `Vec::clone` aborts); [`SecretKey::to_device`] copies it to another device.
#[derive(Clone)]
pub struct SecretKey {
    /// `s` over all Q limbs (NTT form).
    pub(crate) s_q: Poly,
    /// `s` over `Q ∪ P` (NTT form), for key generation.
    pub(crate) s_qp: Poly,
    pub(crate) params_id: u64,
}

impl SecretKey {
    /// The id of the parameters the key belongs to.
    pub fn params_id(&self) -> u64 {
        self.params_id
    }

    /// The device holding the key.
    pub fn device(&self) -> crate::Device {
        self.s_q.device()
    }

    /// A copy of the key on the device of `ctx` (a [`crate::ckks::CkksContext`], a
    /// [`crate::bgv::BgvContext`] or an [`RlweContext`] of the same parameters). The words pass
    /// through host memory, which is zeroised afterwards.
    ///
    /// Errors: [`Error::ParametersMismatch`] for a context of other parameters; the device's
    /// errors.
    pub fn to_device(&self, ctx: &impl AsRef<RlweContext>) -> Result<SecretKey> {
        let rlwe = ctx.as_ref();
        rlwe.check_id("SecretKey::to_device", self.params_id)?;
        let ring = rlwe.ring();
        let mut s_q = ring.transfer(&self.s_q, rlwe.device())?;
        let s_qp = match ring.transfer(&self.s_qp, rlwe.device()) {
            Ok(p) => p,
            Err(e) => {
                s_q.zeroize();
                return Err(e);
            }
        };
        Ok(SecretKey {
            s_q,
            s_qp,
            params_id: self.params_id,
        })
    }
}

impl Drop for SecretKey {
    fn drop(&mut self) {
        self.s_q.zeroize();
        self.s_qp.zeroize();
    }
}

/// The public key `(b, a) = (-a·s + e, a)` over `Q ∪ P` (NTT form); `a` is regenerated from
/// `seed`, so the key can ship as `(b, seed)`.
#[derive(Clone)]
pub struct PublicKey {
    /// `[b, a]`: one key-switching "digit" pair, so encryption runs through the key-switching
    /// machinery ([`crate::backend::RnsRing::keyswitch_moddown_with`]).
    pub(crate) parts: [Poly; 2],
    pub(crate) seed: [u8; 32],
    pub(crate) params_id: u64,
}

impl PublicKey {
    /// The id of the parameters the key belongs to.
    pub fn params_id(&self) -> u64 {
        self.params_id
    }

    /// The seed of the uniform half `a`.
    pub fn seed(&self) -> &[u8; 32] {
        &self.seed
    }

    /// The device holding the key.
    pub fn device(&self) -> crate::Device {
        self.parts[0].device()
    }

    /// A copy of the key on the device of `ctx` (a CKKS or BGV context, or an [`RlweContext`],
    /// of the same parameters).
    ///
    /// Errors: [`Error::ParametersMismatch`] for a context of other parameters; the device's
    /// errors.
    pub fn to_device(&self, ctx: &impl AsRef<RlweContext>) -> Result<PublicKey> {
        let [parts] = transfer_all(
            ctx.as_ref(),
            "PublicKey::to_device",
            self.params_id,
            std::slice::from_ref(&self.parts),
        )?
        .try_into()
        .unwrap_or_else(|_| unreachable!("one pair in, one out"));
        Ok(PublicKey {
            parts,
            seed: self.seed,
            params_id: self.params_id,
        })
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PublicKey")
            .field("params_id", &format_args!("{:016x}", self.params_id))
            .finish_non_exhaustive()
    }
}

/// A hybrid (GHS) key-switching key from a secret `s'` to the secret `s`: for each digit `j`,
/// `(b_j, a_j) = (-a_j·s + e_j + P·g_j·s', a_j)` over `Q ∪ P` (NTT form), where `g_j` is the CRT
/// idempotent of digit `j` (`≡ 1` modulo its primes, `≡ 0` modulo the other Q primes). The
/// uniform halves come from `(seed, stream j)`.
#[derive(Clone)]
pub struct KeySwitchKey {
    pub(crate) parts: Vec<[Poly; 2]>,
    pub(crate) seed: [u8; 32],
    pub(crate) params_id: u64,
}

impl KeySwitchKey {
    /// The number of digits.
    pub fn dnum(&self) -> usize {
        self.parts.len()
    }

    /// The id of the parameters the key belongs to.
    pub fn params_id(&self) -> u64 {
        self.params_id
    }

    /// The seed of the uniform halves.
    pub fn seed(&self) -> &[u8; 32] {
        &self.seed
    }

    /// The digit pairs `[b_j, a_j]`.
    pub fn parts(&self) -> &[[Poly; 2]] {
        &self.parts
    }

    /// The bytes the key's words take in memory (64-bit words, both halves of every digit).
    pub fn size_bytes(&self) -> u64 {
        self.parts
            .iter()
            .flatten()
            .map(|p| p.shape().words() as u64 * 8)
            .sum()
    }

    /// The device holding the key.
    pub fn device(&self) -> crate::Device {
        self.parts[0][0].device()
    }

    /// A copy of the key on the device of `ctx` (a CKKS or BGV context, or an [`RlweContext`],
    /// of the same parameters).
    ///
    /// Errors: [`Error::ParametersMismatch`] for a context of other parameters; the device's
    /// errors.
    pub fn to_device(&self, ctx: &impl AsRef<RlweContext>) -> Result<KeySwitchKey> {
        Ok(KeySwitchKey {
            parts: transfer_all(
                ctx.as_ref(),
                "KeySwitchKey::to_device",
                self.params_id,
                &self.parts,
            )?,
            seed: self.seed,
            params_id: self.params_id,
        })
    }
}

impl fmt::Debug for KeySwitchKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeySwitchKey")
            .field("dnum", &self.parts.len())
            .field("params_id", &format_args!("{:016x}", self.params_id))
            .finish_non_exhaustive()
    }
}

/// The relinearisation key: switches `s²` to `s`.
#[derive(Clone, Debug)]
pub struct RelinearizationKey(pub(crate) KeySwitchKey);

impl RelinearizationKey {
    /// The underlying key-switching key.
    pub fn key(&self) -> &KeySwitchKey {
        &self.0
    }

    /// The device holding the key.
    pub fn device(&self) -> crate::Device {
        self.0.device()
    }

    /// A copy of the key on the device of `ctx` (see [`KeySwitchKey::to_device`]).
    pub fn to_device(&self, ctx: &impl AsRef<RlweContext>) -> Result<RelinearizationKey> {
        Ok(RelinearizationKey(self.0.to_device(ctx)?))
    }
}

/// Checks that `g` is a Galois element of `Z[X]/(X^N + 1)`: an odd residue below `2N` (the
/// Galois group is `(Z/2NZ)^*`, the odd residues). [`Error::InvalidGaloisElement`] otherwise.
pub(crate) fn check_galois_element(g: u64, n: usize) -> Result<()> {
    let two_n = 2 * n as u64;
    if g % 2 == 1 && g < two_n {
        Ok(())
    } else {
        Err(Error::InvalidGaloisElement { element: g, two_n })
    }
}

/// Galois keys, by Galois element. The key for element `g` switches `s` to `σ_{g^{-1}}(s)`
/// (key switching runs before the automorphism, so hoisting shares one ModUp).
#[derive(Clone, Debug)]
pub struct GaloisKeys {
    pub(crate) keys: BTreeMap<u64, KeySwitchKey>,
    pub(crate) params_id: u64,
}

impl GaloisKeys {
    /// An empty set for the parameters with this id.
    pub fn empty(params_id: u64) -> Self {
        Self {
            keys: BTreeMap::new(),
            params_id,
        }
    }

    /// The key for Galois element `g`, if present.
    pub fn get(&self, g: u64) -> Option<&KeySwitchKey> {
        self.keys.get(&g)
    }

    /// Whether the key for `g` is present.
    pub fn contains(&self, g: u64) -> bool {
        self.keys.contains_key(&g)
    }

    /// The Galois elements present.
    pub fn elements(&self) -> Vec<u64> {
        self.keys.keys().copied().collect()
    }

    /// Adds (or replaces) a key; errors if it belongs to other parameters
    /// ([`Error::ParametersMismatch`]) or if `g` is not a Galois element, odd and below `2N`
    /// ([`Error::InvalidGaloisElement`]).
    pub fn insert(&mut self, g: u64, key: KeySwitchKey) -> Result<()> {
        if let Some([b, _]) = key.parts.first() {
            check_galois_element(g, b.n())?;
        }
        if key.params_id != self.params_id {
            return Err(Error::ParametersMismatch {
                op: "GaloisKeys::insert",
                lhs: self.params_id,
                rhs: key.params_id,
            });
        }
        self.keys.insert(g, key);
        Ok(())
    }

    /// Moves every key of `other` into `self`.
    pub fn extend(&mut self, other: GaloisKeys) -> Result<()> {
        for (g, k) in other.keys {
            self.insert(g, k)?;
        }
        Ok(())
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// The bytes of all the keys' words in memory ([`KeySwitchKey::size_bytes`] summed).
    pub fn size_bytes(&self) -> u64 {
        self.keys.values().map(KeySwitchKey::size_bytes).sum()
    }

    /// Whether there is no key.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The id of the parameters the keys belong to.
    pub fn params_id(&self) -> u64 {
        self.params_id
    }

    /// A copy of every key on the device of `ctx` (see [`KeySwitchKey::to_device`]).
    pub fn to_device(&self, ctx: &impl AsRef<RlweContext>) -> Result<GaloisKeys> {
        ctx.as_ref()
            .check_id("GaloisKeys::to_device", self.params_id)?;
        let keys = self
            .keys
            .iter()
            .map(|(&g, k)| Ok((g, k.to_device(ctx)?)))
            .collect::<Result<_>>()?;
        Ok(GaloisKeys {
            keys,
            params_id: self.params_id,
        })
    }
}
