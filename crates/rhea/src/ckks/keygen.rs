//! Key generation, encryption and decryption for CKKS.

use rhea_math::sampler::Prng;

use super::{Ciphertext, CkksContext, Plaintext};
use crate::error::Result;
use crate::rlwe::{
    EncryptorCore, GaloisKeys, KeySwitchKey, PublicKey, RelinearizationKey, SecretKey,
};

/// Generates keys from a ChaCha20 CSPRNG (OS-seeded, or explicitly seeded for reproducible
/// tests).
pub struct KeyGenerator {
    ctx: CkksContext,
    prng: Prng,
}

impl KeyGenerator {
    /// A generator seeded from the operating system.
    pub fn new(ctx: &CkksContext) -> Result<Self> {
        Ok(Self {
            ctx: ctx.clone(),
            prng: Prng::from_os()?,
        })
    }

    /// A generator with an explicit seed: the same seed gives the same keys, word for word
    /// (for tests and golden digests; never reuse a seed for real keys).
    pub fn from_seed(ctx: &CkksContext, seed: [u8; 32]) -> Self {
        Self {
            ctx: ctx.clone(),
            prng: Prng::from_seed(seed),
        }
    }

    /// A fresh secret key.
    pub fn secret_key(&mut self) -> Result<SecretKey> {
        self.ctx.rlwe().gen_secret_key(&mut self.prng)
    }

    /// The public key of `sk`.
    pub fn public_key(&mut self, sk: &SecretKey) -> Result<PublicKey> {
        self.ctx.rlwe().gen_public_key(sk, &mut self.prng)
    }

    /// The relinearisation key of `sk`.
    pub fn relinearization_key(&mut self, sk: &SecretKey) -> Result<RelinearizationKey> {
        self.ctx.rlwe().gen_relinearization_key(sk, &mut self.prng)
    }

    /// Galois keys for rotations by each of `steps` slots (left for positive steps, right for
    /// negative ones) and, if `conjugation`, for complex conjugation. Steps that are multiples of
    /// `N/2` (no-op rotations) need no key and are skipped.
    pub fn galois_keys(
        &mut self,
        sk: &SecretKey,
        steps: &[i64],
        conjugation: bool,
    ) -> Result<GaloisKeys> {
        self.ctx
            .rlwe()
            .gen_galois_keys(sk, steps, conjugation, &mut self.prng)
    }

    /// The Galois key for one Galois element `g` (odd, below `2N`; otherwise
    /// [`crate::Error::InvalidGaloisElement`]).
    pub fn galois_key_for_element(&mut self, sk: &SecretKey, g: u64) -> Result<KeySwitchKey> {
        self.ctx.rlwe().gen_galois_key(sk, g, &mut self.prng)
    }
}

/// Encrypts plaintexts under a public key or (symmetrically) a secret key. `Send + Sync`: the
/// CSPRNG sits behind a mutex, so one encryptor serves several threads.
pub struct Encryptor<'k> {
    ctx: CkksContext,
    core: EncryptorCore<'k>,
}

impl<'k> Encryptor<'k> {
    /// A public-key encryptor (OS-seeded randomness).
    pub fn new(ctx: &CkksContext, pk: &'k PublicKey) -> Result<Self> {
        Ok(Self {
            core: EncryptorCore::public(ctx.rlwe(), pk)?,
            ctx: ctx.clone(),
        })
    }

    /// A secret-key encryptor (OS-seeded randomness); its ciphertexts have a seeded uniform half.
    pub fn with_secret_key(ctx: &CkksContext, sk: &'k SecretKey) -> Result<Self> {
        Ok(Self {
            core: EncryptorCore::secret(ctx.rlwe(), sk)?,
            ctx: ctx.clone(),
        })
    }

    /// Replaces the randomness with an explicitly seeded stream (reproducible tests only).
    pub fn with_seed(self, seed: [u8; 32]) -> Self {
        Self {
            ctx: self.ctx,
            core: self.core.with_seed(seed),
        }
    }

    /// Encrypts `pt` at its level and scale.
    pub fn encrypt(&self, pt: &Plaintext) -> Result<Ciphertext> {
        self.ctx.rlwe().check_id("encrypt", pt.params_id)?;
        let (parts, seed) = self.core.encrypt(self.ctx.rlwe(), &pt.poly)?;
        Ok(Ciphertext {
            parts,
            scale: pt.scale,
            slots: pt.slots,
            params_id: pt.params_id,
            seed,
        })
    }
}

/// Decrypts ciphertexts (of 2 or 3 components) to plaintexts.
pub struct Decryptor<'k> {
    ctx: CkksContext,
    sk: &'k SecretKey,
}

impl<'k> Decryptor<'k> {
    /// A decryptor for `sk`.
    pub fn new(ctx: &CkksContext, sk: &'k SecretKey) -> Result<Self> {
        ctx.rlwe().check_id("Decryptor::new", sk.params_id())?;
        Ok(Self {
            ctx: ctx.clone(),
            sk,
        })
    }

    /// `Σ c_i·s^i` as a plaintext at the ciphertext's level, scale and slot count.
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<Plaintext> {
        self.ctx.rlwe().check_id("decrypt", ct.params_id)?;
        let poly = self.ctx.rlwe().decrypt(self.sk, &ct.parts)?;
        Ok(Plaintext {
            poly,
            scale: ct.scale,
            slots: ct.slots,
            params_id: ct.params_id,
        })
    }
}
