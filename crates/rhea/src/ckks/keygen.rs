//! Key generation, encryption and decryption for CKKS.

use std::sync::{Arc, Mutex};

use rhea_math::sampler::Prng;

use super::{Ciphertext, CkksContext, NoiseFlooding, Plaintext};
use crate::error::{Error, Result};
use crate::rlwe::{
    EncryptorCore, GaloisKeys, KeySwitchKey, PublicKey, RelinearizationKey, SecretKey,
};

/// Generates keys from a ChaCha20 CSPRNG (OS-seeded, or explicitly seeded for reproducible
/// tests).
pub struct KeyGenerator {
    pub(crate) ctx: CkksContext,
    pub(crate) prng: Prng,
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
/// CSPRNG sits behind a mutex, so one encryptor serves several threads. It owns (a shared
/// reference to) its key, so it can be stored and moved freely.
///
/// ```
/// use std::sync::Arc;
/// use rhea::ckks::{CkksContext, Encoder, Encryptor, KeyGenerator};
/// use rhea::params::CkksParametersLiteral;
/// use rhea::Device;
///
/// let ctx = CkksContext::new(&CkksParametersLiteral::n13_logqp200_levels2().build()?, Device::Cpu)?;
/// let mut keygen = KeyGenerator::new(&ctx)?;
/// let sk = keygen.secret_key()?;
/// let pk = Arc::new(keygen.public_key(&sk)?);
/// let by_ref = Encryptor::new(&ctx, &*pk)?; // copies the key
/// let shared = Encryptor::new(&ctx, pk.clone())?; // shares it
/// let symmetric = Encryptor::with_secret_key(&ctx, sk)?; // takes it
/// let pt = Encoder::new(&ctx)?.encode(&[1.0])?;
/// for e in [&by_ref, &shared, &symmetric] {
///     assert_eq!(e.encrypt(&pt)?.level(), pt.level());
/// }
/// # Ok::<(), rhea::Error>(())
/// ```
pub struct Encryptor {
    ctx: CkksContext,
    core: EncryptorCore,
}

impl Encryptor {
    /// A public-key encryptor (OS-seeded randomness). `pk` is the key (moved), an
    /// `Arc<PublicKey>` (shared) or a `&PublicKey` (copied).
    pub fn new(ctx: &CkksContext, pk: impl Into<Arc<PublicKey>>) -> Result<Self> {
        Ok(Self {
            core: EncryptorCore::public(ctx.rlwe(), pk.into())?,
            ctx: ctx.clone(),
        })
    }

    /// A secret-key encryptor (OS-seeded randomness); its ciphertexts have a seeded uniform half.
    /// `sk` is the key, an `Arc<SecretKey>` or a `&SecretKey` (copied).
    pub fn with_secret_key(ctx: &CkksContext, sk: impl Into<Arc<SecretKey>>) -> Result<Self> {
        Ok(Self {
            core: EncryptorCore::secret(ctx.rlwe(), sk.into())?,
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

/// The noise-flooding setting of a decryptor and its CSPRNG.
struct Flooding {
    config: NoiseFlooding,
    prng: Mutex<Prng>,
}

/// Decrypts ciphertexts (of 2 or 3 components) to plaintexts; optionally with noise flooding
/// ([`Decryptor::with_noise_flooding`]) for results that are shared. Owns (a shared reference
/// to) its secret key; `Send + Sync`.
pub struct Decryptor {
    ctx: CkksContext,
    sk: Arc<SecretKey>,
    flooding: Option<Flooding>,
}

impl Decryptor {
    /// A decryptor for `sk`: the key (moved), an `Arc<SecretKey>` (shared) or a `&SecretKey`
    /// (copied; the copy is zeroised on drop like the original).
    pub fn new(ctx: &CkksContext, sk: impl Into<Arc<SecretKey>>) -> Result<Self> {
        let sk = sk.into();
        ctx.rlwe().check_id("Decryptor::new", sk.params_id())?;
        Ok(Self {
            ctx: ctx.clone(),
            sk,
            flooding: None,
        })
    }

    /// The same decryptor adding fresh flooding noise ([`NoiseFlooding`]: when it is needed,
    /// how much, what it costs) to every decryption, from an OS-seeded CSPRNG.
    pub fn with_noise_flooding(self, flooding: NoiseFlooding) -> Result<Self> {
        Ok(Self {
            flooding: Some(Flooding {
                config: flooding,
                prng: Mutex::new(Prng::from_os()?),
            }),
            ..self
        })
    }

    /// Replaces the flooding noise's randomness with an explicitly seeded stream (reproducible
    /// tests only; a no-op without flooding).
    pub fn with_flooding_seed(self, seed: [u8; 32]) -> Self {
        Self {
            flooding: self.flooding.map(|f| Flooding {
                config: f.config,
                prng: Mutex::new(Prng::from_seed(seed)),
            }),
            ..self
        }
    }

    /// The noise flooding applied, if any.
    pub fn noise_flooding(&self) -> Option<&NoiseFlooding> {
        self.flooding.as_ref().map(|f| &f.config)
    }

    /// `Σ c_i·s^i` as a plaintext at the ciphertext's level, scale and slot count; with noise
    /// flooding, plus a fresh flooding polynomial (so two decryptions of one ciphertext differ).
    ///
    /// Errors: [`Error::ParametersMismatch`], [`Error::CiphertextDegree`]; with flooding,
    /// [`Error::InvalidParameters`] when the flooding noise could wrap modulo `Q_ℓ` at the
    /// ciphertext's level.
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<Plaintext> {
        self.ctx.rlwe().check_id("decrypt", ct.params_id)?;
        let mut poly = self.ctx.rlwe().decrypt(&self.sk, &ct.parts)?;
        if let Some(flooding) = &self.flooding {
            self.flood(flooding, &mut poly)?;
        }
        Ok(Plaintext {
            poly,
            scale: ct.scale,
            slots: ct.slots,
            params_id: ct.params_id,
        })
    }

    /// Adds a fresh flooding polynomial to the phase `v` (NTT form).
    fn flood(&self, flooding: &Flooding, v: &mut crate::backend::Poly) -> Result<()> {
        let ring = self.ctx.ring();
        let shape = v.shape();
        let log_q: f64 = ring
            .moduli(&shape)
            .iter()
            .map(|q| (q.value() as f64).log2())
            .sum();
        // The phase is Δ·m + e; the flooding may take at most a quarter of Q_ℓ / 2 on top.
        let log_bound = flooding.config.coefficient_bound().log2();
        if log_bound > log_q - 3.0 {
            return Err(Error::InvalidParameters(format!(
                "noise flooding with σ = 2^{:.1} could wrap modulo Q_ℓ = 2^{log_q:.1} at level                  {}; decrypt at a higher level or choose a smaller σ",
                flooding.config.log2_sigma(),
                shape.q_limbs - 1
            )));
        }
        let seed = {
            let mut prng = flooding.prng.lock().map_err(|_| {
                Error::InvalidInput("the decryptor's CSPRNG lock is poisoned".into())
            })?;
            zeroize::Zeroizing::new(prng.fresh_seed())
        };
        let mut coeffs = flooding.config.sample(&seed, ring.n())?;
        let noise = ring.from_signed(v.device(), &coeffs, shape);
        zeroize::Zeroize::zeroize(&mut coeffs);
        let mut noise = noise?;
        ring.ntt_forward(&mut noise)?;
        ring.add_assign(v, &noise)
    }
}
