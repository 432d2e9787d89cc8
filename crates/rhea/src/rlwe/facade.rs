//! Pieces the scheme façades (CKKS and BGV) share on top of the RLWE core: the evaluation keys an
//! evaluator holds, the key and randomness of an encryptor, component checks, and the macro
//! that stamps the scheme-independent ciphertext accessors. Nothing here is public API.

use std::ops::Deref;
use std::sync::{Arc, Mutex};

use rhea_math::sampler::Prng;

use super::{GaloisKeys, KeySwitchKey, PublicKey, RelinearizationKey, RlweContext, SecretKey};
use crate::backend::Poly;
use crate::error::{Error, Result};

/// Copies every component (same device).
pub(crate) fn clone_polys(parts: &[Poly]) -> Result<Vec<Poly>> {
    parts.iter().map(Poly::try_clone).collect()
}

/// Copies every component onto `rlwe`'s device, after checking `params_id` is `rlwe`'s
/// (`op` names the call in the error).
pub(crate) fn transfer_polys(
    rlwe: &RlweContext,
    op: &'static str,
    params_id: u64,
    parts: &[Poly],
) -> Result<Vec<Poly>> {
    rlwe.check_id(op, params_id)?;
    parts
        .iter()
        .map(|p| rlwe.ring().transfer(p, rlwe.device()))
        .collect()
}

/// Fails unless a ciphertext has 2 or 3 components; `hint` names the scheme's rule.
pub(crate) fn check_degree(op: &'static str, found: usize, hint: &'static str) -> Result<()> {
    if !(2..=3).contains(&found) {
        return Err(Error::CiphertextDegree {
            op,
            expected: 2,
            found,
            hint,
        });
    }
    Ok(())
}

/// Fails unless a ciphertext has exactly 2 components (it must be relinearised first).
pub(crate) fn check_two_components(op: &'static str, found: usize) -> Result<()> {
    if found != 2 {
        return Err(Error::CiphertextDegree {
            op,
            expected: 2,
            found,
            hint: "relinearize it first (Evaluator::relinearize)",
        });
    }
    Ok(())
}

/// An operand that is either the caller's or an aligned (lowered) copy.
pub(crate) enum Aligned<'a, T> {
    /// The caller's value, unchanged.
    Borrowed(&'a T),
    /// A new value (e.g. brought to a lower level).
    Owned(T),
}

impl<T> Deref for Aligned<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        match self {
            Aligned::Borrowed(c) => c,
            Aligned::Owned(c) => c,
        }
    }
}

/// The optional relinearisation and Galois keys of an evaluator, with the lookups that turn a
/// missing key into the typed error.
#[derive(Default)]
pub(crate) struct EvaluationKeys {
    rlk: Option<Arc<RelinearizationKey>>,
    galois: Option<Arc<GaloisKeys>>,
}

impl EvaluationKeys {
    /// Sets the relinearisation key after checking it belongs to `rlwe`'s parameters.
    pub(crate) fn set_relinearization_key(
        &mut self,
        rlwe: &RlweContext,
        rlk: Arc<RelinearizationKey>,
    ) -> Result<()> {
        rlwe.check_id("with_relinearization_key", rlk.key().params_id())?;
        self.rlk = Some(rlk);
        Ok(())
    }

    /// Sets the Galois keys after checking they belong to `rlwe`'s parameters.
    pub(crate) fn set_galois_keys(
        &mut self,
        rlwe: &RlweContext,
        keys: Arc<GaloisKeys>,
    ) -> Result<()> {
        rlwe.check_id("with_galois_keys", keys.params_id())?;
        self.galois = Some(keys);
        Ok(())
    }

    /// The relinearisation key, or [`Error::MissingRelinearizationKey`] for `op`.
    pub(crate) fn rlk(&self, op: &'static str) -> Result<&RelinearizationKey> {
        self.rlk
            .as_deref()
            .ok_or(Error::MissingRelinearizationKey { op })
    }

    /// The key for Galois element `g`, or [`Error::MissingRotationKey`] (a rotation by `step`)
    /// / [`Error::MissingConjugationKey`] (`step` is `None`).
    pub(crate) fn galois_key(&self, g: u64, step: Option<i64>) -> Result<&KeySwitchKey> {
        let missing = || match step {
            Some(step) => Error::MissingRotationKey {
                step,
                galois_element: g,
            },
            None => Error::MissingConjugationKey { galois_element: g },
        };
        self.galois
            .as_deref()
            .and_then(|k| k.get(g))
            .ok_or_else(missing)
    }

    /// The rotations by `steps` as [`RlweContext::automorphisms`] takes them: each step's Galois
    /// element with its key, `None` for a step that is the identity (`g = 1`). Errors: the first
    /// missing key, as [`EvaluationKeys::galois_key`].
    pub(crate) fn rotation_plan(
        &self,
        rlwe: &RlweContext,
        steps: &[i64],
    ) -> Result<Vec<(u64, Option<&KeySwitchKey>)>> {
        steps
            .iter()
            .map(|&step| {
                let g = rlwe.galois_element_for_rotation(step);
                if g == 1 {
                    Ok((g, None))
                } else {
                    Ok((g, Some(self.galois_key(g, Some(step))?)))
                }
            })
            .collect()
    }
}

/// The key an encryptor encrypts under.
enum EncryptionKey {
    Public(Arc<PublicKey>),
    Secret(Arc<SecretKey>),
}

/// The key and the mutex-guarded CSPRNG of an encryptor (`Send + Sync`): public- or secret-key
/// encryption of an NTT-form polynomial through the RLWE core.
pub(crate) struct EncryptorCore {
    key: EncryptionKey,
    prng: Mutex<Prng>,
}

impl EncryptorCore {
    /// A public-key encryptor (OS-seeded), after checking `pk` belongs to `rlwe`'s parameters.
    pub(crate) fn public(rlwe: &RlweContext, pk: Arc<PublicKey>) -> Result<Self> {
        rlwe.check_id("Encryptor::new", pk.params_id())?;
        Ok(Self {
            key: EncryptionKey::Public(pk),
            prng: Mutex::new(Prng::from_os()?),
        })
    }

    /// A secret-key encryptor (OS-seeded), after checking `sk` belongs to `rlwe`'s parameters.
    pub(crate) fn secret(rlwe: &RlweContext, sk: Arc<SecretKey>) -> Result<Self> {
        rlwe.check_id("Encryptor::with_secret_key", sk.params_id())?;
        Ok(Self {
            key: EncryptionKey::Secret(sk),
            prng: Mutex::new(Prng::from_os()?),
        })
    }

    /// The same key with an explicitly seeded stream (reproducible tests only).
    pub(crate) fn with_seed(self, seed: [u8; 32]) -> Self {
        Self {
            prng: Mutex::new(Prng::from_seed(seed)),
            ..self
        }
    }

    /// Whether it encrypts under a secret key (a public key otherwise).
    pub(crate) fn uses_secret_key(&self) -> bool {
        matches!(self.key, EncryptionKey::Secret(_))
    }

    /// Encrypts `m` ([`RlweContext::encrypt_pk`] or [`RlweContext::encrypt_sk`]): the
    /// components, and the seed of the uniform half for a secret-key encryption (`None` under
    /// a public key).
    pub(crate) fn encrypt(
        &self,
        rlwe: &RlweContext,
        m: &Poly,
    ) -> Result<(Vec<Poly>, Option<[u8; 32]>)> {
        let mut prng = self
            .prng
            .lock()
            .map_err(|_| Error::InvalidInput("the encryptor's CSPRNG lock is poisoned".into()))?;
        match &self.key {
            EncryptionKey::Public(pk) => Ok((rlwe.encrypt_pk(pk, m, &mut prng)?, None)),
            EncryptionKey::Secret(sk) => {
                let (parts, seed) = rlwe.encrypt_sk(sk, m, &mut prng)?;
                Ok((parts, Some(seed)))
            }
        }
    }
}

/// The scheme-independent accessors of a ciphertext type with the fields `parts: Vec<Poly>`
/// and `params_id: u64` (CKKS's and BGV's): `len`, `is_empty`, `params_id`, `device`. Invoked
/// inside the type's `impl` block.
macro_rules! ciphertext_component_accessors {
    () => {
        /// The number of components (2, or 3 after a multiplication without relinearisation).
        pub fn len(&self) -> usize {
            self.parts.len()
        }

        /// Always false: a ciphertext has at least two components.
        pub fn is_empty(&self) -> bool {
            self.parts.is_empty()
        }

        /// The id of the parameters.
        pub fn params_id(&self) -> u64 {
            self.params_id
        }

        /// The device holding the components.
        pub fn device(&self) -> $crate::backend::Device {
            self.parts[0].device()
        }
    };
}
pub(crate) use ciphertext_component_accessors;
