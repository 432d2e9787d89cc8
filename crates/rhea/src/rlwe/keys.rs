//! RLWE keys: secret, public, key-switching (relinearisation and Galois).

use std::collections::BTreeMap;
use std::fmt;

use crate::backend::Poly;
use crate::error::{Error, Result};

/// The secret key `s`, in NTT form over `Q` and over `Q ∪ P`.
///
/// Zeroised on drop; deliberately not `Debug`, `Clone` or serialisable, so it cannot leak into
/// logs or files by accident:
///
/// ```compile_fail
/// fn leak(sk: &rhea::rlwe::SecretKey) { println!("{sk:?}"); } // no Debug
/// ```
/// ```compile_fail
/// fn copy(sk: &rhea::rlwe::SecretKey) -> rhea::rlwe::SecretKey { sk.clone() } // no Clone
/// ```
/// ```compile_fail
/// fn save<T: serde::Serialize>(_: &T) {}
/// fn leak(sk: &rhea::rlwe::SecretKey) { save(sk) } // not serialisable
/// ```
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
}

impl Drop for SecretKey {
    fn drop(&mut self) {
        self.s_q.zeroize();
        self.s_qp.zeroize();
    }
}

/// The public key `(b, a) = (-a·s + e, a)` over `Q ∪ P` (NTT form); `a` is regenerated from
/// `seed`, so the key can ship as `(b, seed)`.
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
#[derive(Debug)]
pub struct RelinearizationKey(pub(crate) KeySwitchKey);

impl RelinearizationKey {
    /// The underlying key-switching key.
    pub fn key(&self) -> &KeySwitchKey {
        &self.0
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
#[derive(Debug)]
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

    /// Whether there is no key.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The id of the parameters the keys belong to.
    pub fn params_id(&self) -> u64 {
        self.params_id
    }
}
