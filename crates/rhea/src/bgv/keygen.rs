//! Key generation, encryption and decryption for BGV, on the shared RLWE core.

use std::sync::Arc;

use num_bigint::{BigInt, BigUint};
use num_traits::ToPrimitive;
use rhea_math::sampler::Prng;

use super::{BgvContext, Ciphertext, Decrypted, Plaintext};
use crate::backend::Poly;
use crate::error::{Error, Result};
use crate::rlwe::{
    check_degree, EncryptorCore, GaloisKeys, PublicKey, RelinearizationKey, SecretKey,
};

/// Generates keys from a ChaCha20 CSPRNG (OS-seeded, or explicitly seeded for reproducible
/// tests). The keys are the RLWE core's, identical in form to CKKS keys (see [`crate::bgv`]).
pub struct KeyGenerator {
    ctx: BgvContext,
    prng: Prng,
}

impl KeyGenerator {
    /// A generator seeded from the operating system.
    pub fn new(ctx: &BgvContext) -> Result<Self> {
        Ok(Self {
            ctx: ctx.clone(),
            prng: Prng::from_os()?,
        })
    }

    /// A generator with an explicit seed (tests and golden digests only).
    pub fn from_seed(ctx: &BgvContext, seed: [u8; 32]) -> Self {
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

    /// Galois keys for row rotations by each of `steps` (left for positive steps; steps are
    /// taken modulo `N/2`, and multiples of `N/2` need no key) and, if `column_swap`, for the
    /// swap of the two rows.
    pub fn galois_keys(
        &mut self,
        sk: &SecretKey,
        steps: &[i64],
        column_swap: bool,
    ) -> Result<GaloisKeys> {
        self.ctx
            .rlwe()
            .gen_galois_keys(sk, steps, column_swap, &mut self.prng)
    }

    /// The Galois keys [`super::Evaluator::inner_sum`] needs: row rotations by `1, 2, 4, …, N/4`
    /// and the column swap.
    pub fn inner_sum_keys(&mut self, sk: &SecretKey) -> Result<GaloisKeys> {
        self.galois_keys(sk, &inner_sum_steps(&self.ctx), true)
    }
}

/// The row rotations [`super::Evaluator::inner_sum`] needs keys for: `1, 2, 4, …, N/4` (with
/// the column swap).
pub(super) fn inner_sum_steps(ctx: &BgvContext) -> Vec<i64> {
    let half = ctx.params().n() / 2;
    (0..)
        .map(|i| 1i64 << i)
        .take_while(|&s| (s as usize) < half)
        .collect()
}

/// Encrypts plaintexts under a public key or (symmetrically) a secret key. `Send + Sync`. It
/// owns (a shared reference to) its key, so it can be stored and moved freely.
pub struct Encryptor {
    ctx: BgvContext,
    core: EncryptorCore,
}

impl Encryptor {
    /// A public-key encryptor (OS-seeded randomness). `pk` is the key (moved), an
    /// `Arc<PublicKey>` (shared) or a `&PublicKey` (copied).
    pub fn new(ctx: &BgvContext, pk: impl Into<Arc<PublicKey>>) -> Result<Self> {
        Ok(Self {
            core: EncryptorCore::public(ctx.rlwe(), pk.into())?,
            ctx: ctx.clone(),
        })
    }

    /// A secret-key encryptor (OS-seeded randomness). `sk` is the key, an `Arc<SecretKey>` or a
    /// `&SecretKey` (copied).
    pub fn with_secret_key(ctx: &BgvContext, sk: impl Into<Arc<SecretKey>>) -> Result<Self> {
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

    /// Encrypts `pt` at its level (correction factor 1): the RLWE core encrypts
    /// `t^{-1}·m mod Q_ℓ`, whose error `e` becomes the BGV noise `t·e`.
    pub fn encrypt(&self, pt: &Plaintext) -> Result<Ciphertext> {
        let rlwe = self.ctx.rlwe();
        rlwe.check_id("encrypt", pt.params_id)?;
        let m = encryption_input(&self.ctx, &pt.poly)?;
        let (parts, seed) = self.core.encrypt(rlwe, &m)?;
        Ok(fresh_ciphertext(
            &self.ctx,
            pt.log_norm,
            pt.params_id,
            parts,
            seed,
            self.core.uses_secret_key(),
        ))
    }
}

/// What the RLWE core encrypts for the plaintext polynomial `m` (NTT form, level `ℓ`):
/// `t^{-1}·m mod Q_ℓ`, on `m`'s device (shared with the protected encryptor, which computes it
/// on the host and protects it).
pub(super) fn encryption_input(ctx: &BgvContext, m: &Poly) -> Result<Poly> {
    let mut m = m.try_clone()?;
    let t_inv = ctx.t_inv_times(1, m.q_limbs());
    ctx.ring().mul_scalar_assign(&mut m, &t_inv)?;
    Ok(m)
}

/// The fresh encryption (components `parts`) of a plaintext of norm bound `2^log_norm`:
/// correction factor 1 and the noise model's bound for a secret-key (`secret`) or public-key
/// encryption.
pub(super) fn fresh_ciphertext(
    ctx: &BgvContext,
    log_norm: f64,
    params_id: u64,
    parts: Vec<Poly>,
    seed: Option<[u8; 32]>,
    secret: bool,
) -> Ciphertext {
    let log_noise = if secret {
        ctx.noise.fresh_sk(log_norm)
    } else {
        ctx.noise.fresh_pk(log_norm)
    };
    Ciphertext {
        parts,
        factor: 1,
        log_noise,
        params_id,
        seed,
    }
}

/// `log2 x` for a big unsigned integer (`-∞` for zero), to about 53 bits of precision.
fn log2_big(x: &BigUint) -> f64 {
    let bits = x.bits();
    if bits == 0 {
        return f64::NEG_INFINITY;
    }
    let shift = bits.saturating_sub(64);
    let top = (x >> shift).to_u64().unwrap_or(u64::MAX);
    shift as f64 + (top as f64).log2()
}

/// Decrypts ciphertexts and measures their noise budget. Owns (a shared reference to) its
/// secret key; `Send + Sync`.
pub struct Decryptor {
    ctx: BgvContext,
    sk: Arc<SecretKey>,
}

/// The phase of a ciphertext over the integers: its coefficients centred modulo `Q_ℓ`.
pub(super) struct Phase {
    coeffs: Vec<BigInt>,
    budget: i64,
    /// `log2 ‖v‖_∞`.
    log_norm: f64,
}

/// `v = t · Σ ĉ_i·s^i`, centred modulo `Q_ℓ`, and `⌊log2(Q_ℓ / (2·‖v‖_∞))⌋`, from the RLWE
/// decryption `decrypt(ĉ) = Σ ĉ_i·s^i` (NTT form; on the context's device, or in host memory
/// for the protected decryptor, whose `Σ ĉ_i·s^i` never exists in device memory in the clear).
pub(super) fn phase(
    ctx: &BgvContext,
    op: &'static str,
    ct: &Ciphertext,
    decrypt: impl FnOnce(&[Poly]) -> Result<Poly>,
) -> Result<Phase> {
    let rlwe = ctx.rlwe();
    rlwe.check_id(op, ct.params_id)?;
    check_degree(
        op,
        ct.parts.len(),
        "a BGV ciphertext has 2 components (3 before relinearization)",
    )?;
    let ring = ctx.ring();
    let limbs = ct.parts[0].q_limbs();
    let mut v = decrypt(&ct.parts)?;
    ring.mul_scalar_assign(&mut v, &ctx.t_scalars(limbs))?;
    ring.ntt_inverse(&mut v)?;
    let words = ring.download(&v)?;
    let basis = ring.q().prefix(limbs)?;
    let coeffs = basis.poly_reconstruct_centered(&words, ring.n())?;
    let max = coeffs
        .iter()
        .map(|c| c.magnitude())
        .max()
        .cloned()
        .unwrap_or_default();
    let log_max = log2_big(&max).max(0.0);
    let log_q = ctx.noise.log_modulus(limbs - 1);
    let budget = (log_q - 1.0 - log_max).floor() as i64;
    Ok(Phase {
        coeffs,
        budget,
        log_norm: log_max,
    })
}

/// Whether the measured phase of `ct` can be trusted: the tracked bound on its noise is below
/// `Q_ℓ / 2`. Past it (only reachable with the evaluator's noise checks off,
/// [`super::Evaluator::with_noise_check`]`(false)`) the true phase may have wrapped modulo
/// `Q_ℓ`, and the measured one says nothing about it.
pub(super) fn budget_known(ctx: &BgvContext, ct: &Ciphertext) -> bool {
    ct.log_noise < ctx.noise.log_modulus(ct.level()) - 1.0
}

/// The noise budget reported for `ct` with the measured `phase` (see
/// [`Decryptor::noise_budget`]).
pub(super) fn reported_budget(ctx: &BgvContext, ct: &Ciphertext, phase: &Phase) -> Option<u32> {
    budget_known(ctx, ct).then_some(phase.budget.max(0) as u32)
}

/// `m mod t` from the phase of `ct` (correction factor divided out), after checking the
/// measured budget (see [`Decryptor::decrypt`]).
pub(super) fn decrypted(ctx: &BgvContext, ct: &Ciphertext, phase: Phase) -> Result<Decrypted> {
    if phase.budget <= 0 {
        let level = ct.level();
        return Err(Error::NoiseBudgetExhausted {
            op: "decrypt",
            level,
            log_noise: phase.log_norm,
            log_modulus: ctx.noise.log_modulus(level),
        });
    }
    let t = &ctx.tables.t;
    let f_inv = t.inv(ct.factor)?;
    let tb = BigUint::from(t.value());
    let coeffs = phase
        .coeffs
        .iter()
        .map(|c| {
            let r = (c.magnitude() % &tb).to_u64().unwrap_or(0);
            let r = if c.sign() == num_bigint::Sign::Minus {
                t.neg(r)
            } else {
                r
            };
            t.mul(r, f_inv)
        })
        .collect();
    Ok(Decrypted {
        coeffs,
        noise_budget: budget_known(ctx, ct).then_some(phase.budget as u32),
        level: ct.level(),
        params_id: ct.params_id,
    })
}

impl Decryptor {
    /// A decryptor for `sk`: the key (moved), an `Arc<SecretKey>` (shared) or a `&SecretKey`
    /// (copied; the copy is zeroised on drop like the original).
    pub fn new(ctx: &BgvContext, sk: impl Into<Arc<SecretKey>>) -> Result<Self> {
        let sk = sk.into();
        ctx.rlwe().check_id("Decryptor::new", sk.params_id())?;
        Ok(Self {
            ctx: ctx.clone(),
            sk,
        })
    }

    fn phase(&self, op: &'static str, ct: &Ciphertext) -> Result<Phase> {
        phase(&self.ctx, op, ct, |parts| {
            self.ctx.rlwe().decrypt(&self.sk, parts)
        })
    }

    /// The measured noise budget of `ct` in bits, `⌊log2(Q_ℓ / (2·‖v‖_∞))⌋` (`Some(0)` when
    /// exhausted: the decryption may be wrong), or `None` when it cannot be known: the tracked
    /// noise bound of `ct` has reached `Q_ℓ / 2` (with the evaluator's noise checks off), so the
    /// phase may have wrapped modulo `Q_ℓ` and a measured budget would be a guess.
    pub fn noise_budget(&self, ct: &Ciphertext) -> Result<Option<u32>> {
        let phase = self.phase("noise_budget", ct)?;
        Ok(reported_budget(&self.ctx, ct, &phase))
    }

    /// Decrypts `ct` to `m mod t`, checking the measured noise budget.
    ///
    /// The result's [`Decrypted::noise_budget`] is `None` when the budget cannot be known: the
    /// tracked bound of `ct` has reached `Q_ℓ / 2` (possible only with the evaluator's noise
    /// checks off), so the phase may have wrapped modulo `Q_ℓ` and the values may be wrong even
    /// though the measured phase looks small.
    ///
    /// Errors: [`Error::NoiseBudgetExhausted`] when the measured budget is `0` (the phase is
    /// within a factor 2 of `Q_ℓ / 2`, so the result cannot be trusted); the usual parameter and
    /// shape errors.
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<Decrypted> {
        let phase = self.phase("decrypt", ct)?;
        decrypted(&self.ctx, ct, phase)
    }
}
