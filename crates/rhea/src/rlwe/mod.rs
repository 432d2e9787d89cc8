//! The scheme-agnostic RLWE core, shared by CKKS (and BGV later): keys, encryption under a public
//! or secret key, decryption to a plaintext polynomial, hybrid (GHS, `dnum` digits) key
//! switching, relinearisation and Galois automorphisms, with hoisting.
//!
//! Ciphertexts here are plain component lists (`c_0, c_1[, c_2]`, NTT form, no `P` limbs,
//! decrypting to `Σ c_i·s^i`); the schemes add their metadata (scale, plaintext modulus, slots).
//! Everything is written against the backend primitives only.
//!
//! Conventions: the Galois element of a rotation by `k` slots (to the left) is `5^k mod 2N`,
//! complex conjugation is `2N - 1`. The key for element `g` switches `s` to `σ_{g^{-1}}(s)`, so a
//! rotation is `(σ_g(c_0 + u_0), σ_g(u_1))` with `(u_0, u_1) = KeySwitch(c_1)`: the ModUp of
//! `c_1` does not depend on `g`, and hoisted rotations share it — a plain rotation is the same
//! code with one element, so both agree bit for bit.

mod facade;
mod keys;
mod protected;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rhea_math::sampler::{self, Prng};
use zeroize::Zeroize;

use crate::backend::{Device, Form, Poly, RnsRing};
use crate::error::{Error, Result};
use crate::params::{RlweCore, SecretDistribution};

pub(crate) use facade::{
    check_degree, check_two_components, ciphertext_component_accessors, clone_polys,
    transfer_polys, Aligned, EncryptorCore, EvaluationKeys,
};
pub(crate) use keys::check_galois_element;
pub use keys::{GaloisKeys, KeySwitchKey, PublicKey, RelinearizationKey, SecretKey};
pub(crate) use protected::{ProtectedEncryptorCore, ProtectedKeyGenCore};
pub use protected::{ProtectedSecretKey, Protection};

/// What the RLWE core needs to know: the ring, the secret and error distributions, the device,
/// and the id of the parameters (checked on every key and ciphertext). Cheap to clone.
///
/// Public for its Galois-element arithmetic and as the target of the keys' `to_device`; the
/// core's operations (key generation, encryption, key switching) are reached through the
/// schemes' `KeyGenerator`, `Encryptor`, `Decryptor` and `Evaluator`.
#[derive(Clone, Debug)]
pub struct RlweContext {
    ring: Arc<RnsRing>,
    secret: SecretDistribution,
    sigma: f64,
    params_id: u64,
    device: Device,
    /// Key switchings run through this context and its clones ([`RlweContext::keyswitches`]).
    keyswitches: Arc<AtomicU64>,
}

impl RlweContext {
    /// A context over `ring` on `device` (which must be supported by this build).
    pub(crate) fn new(
        ring: Arc<RnsRing>,
        secret: SecretDistribution,
        sigma: f64,
        params_id: u64,
        device: Device,
    ) -> Result<Self> {
        device.check_supported()?;
        // Upload the ring's device tables now, so that evaluation never does.
        ring.prepare(device)?;
        Ok(Self {
            ring,
            secret,
            sigma,
            params_id,
            device,
            keyswitches: Arc::new(AtomicU64::new(0)),
        })
    }

    /// How many key switchings (inner products of a decomposed polynomial with a key:
    /// relinearisations, rotations, conjugations, the baby and giant steps of linear transforms)
    /// ran through this context and its clones since it was created, on either device. Counted
    /// where they run, so that a routine's key-switching cost is measured, not computed.
    pub fn keyswitches(&self) -> u64 {
        self.keyswitches.load(Ordering::Relaxed)
    }

    /// This context, counting its key switchings in `other`'s counter (bootstrapping's
    /// encapsulation context over `q_0·p_0` counts in its main context's).
    pub(crate) fn sharing_keyswitch_count(mut self, other: &RlweContext) -> Self {
        self.keyswitches = other.keyswitches.clone();
        self
    }

    pub(crate) fn count_keyswitch(&self) {
        self.keyswitches.fetch_add(1, Ordering::Relaxed);
    }

    /// The context of a validated parameter set (CKKS's or BGV's): its ring, distributions and
    /// id, on `device`.
    pub(crate) fn for_params(core: &RlweCore, device: Device) -> Result<Self> {
        Self::new(
            core.ring.clone(),
            core.secret,
            core.error_std_dev,
            core.id,
            device,
        )
    }

    /// The ring and its primitives (outside the crate: [`crate::unstable::HasRing`]).
    pub(crate) fn ring(&self) -> &RnsRing {
        &self.ring
    }

    /// The device everything is created on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The id of the parameters.
    pub fn params_id(&self) -> u64 {
        self.params_id
    }

    /// Fails unless `id` is this context's parameter id.
    pub fn check_id(&self, op: &'static str, id: u64) -> Result<()> {
        if id == self.params_id {
            Ok(())
        } else {
            Err(Error::ParametersMismatch {
                op,
                lhs: self.params_id,
                rhs: id,
            })
        }
    }

    // ------------------------------------------------------------------ Galois elements

    /// The Galois element of a rotation by `step` slots to the left: `5^step mod 2N` (negative
    /// steps rotate right).
    pub fn galois_element_for_rotation(&self, step: i64) -> u64 {
        let n = self.ring.n() as u64;
        let two_n = 2 * n;
        let order = (n / 2) as i64; // the order of 5 modulo 2N
        let e = step.rem_euclid(order.max(1)) as u64;
        pow_mod(5, e, two_n)
    }

    /// The Galois element of complex conjugation, `2N - 1`.
    pub fn galois_element_for_conjugation(&self) -> u64 {
        2 * self.ring.n() as u64 - 1
    }

    /// `g^{-1} mod 2N` (the unit group has order `N`, so `g^{-1} = g^{N-1}`).
    pub fn galois_inverse(&self, g: u64) -> u64 {
        let n = self.ring.n() as u64;
        pow_mod(g, n - 1, 2 * n)
    }

    // ------------------------------------------------------------------ key generation

    /// A fresh secret key from the parameters' distribution.
    pub(crate) fn gen_secret_key(&self, rng: &mut Prng) -> Result<SecretKey> {
        self.gen_secret_key_from(self.secret, rng)
    }

    /// A fresh secret key from `secret` (bootstrapping's sparse ephemeral secret is drawn with
    /// a Hamming weight whatever the parameters' distribution).
    pub(crate) fn gen_secret_key_from(
        &self,
        secret: SecretDistribution,
        rng: &mut Prng,
    ) -> Result<SecretKey> {
        let n = self.ring.n();
        let mut coeffs = match secret {
            SecretDistribution::Ternary => sampler::ternary(rng, n),
            SecretDistribution::HammingWeight(h) => sampler::ternary_hamming(rng, n, h)?,
        };
        let built = (|| -> Result<(Poly, Poly)> {
            let mut s_q = self.ring.from_signed(
                self.device,
                &coeffs,
                self.ring.shape_q(self.ring.q_len()),
            )?;
            let mut s_qp = self
                .ring
                .from_signed(self.device, &coeffs, self.ring.full_shape())?;
            self.ring.ntt_forward(&mut s_q)?;
            self.ring.ntt_forward(&mut s_qp)?;
            Ok((s_q, s_qp))
        })();
        coeffs.zeroize();
        let (s_q, s_qp) = built?;
        Ok(SecretKey {
            s_q,
            s_qp,
            params_id: self.params_id,
        })
    }

    /// The public key `(-a·s + e, a)` over `Q ∪ P` (so that encryption can run over `Q ∪ P` and
    /// divide its noise by `P`), `a` from a fresh seed.
    pub(crate) fn gen_public_key(&self, sk: &SecretKey, rng: &mut Prng) -> Result<PublicKey> {
        self.check_id("gen_public_key", sk.params_id)?;
        let shape = self.ring.full_shape();
        let seed = rng.fresh_seed();
        let a = self
            .ring
            .sample_uniform_from_seed(self.device, &seed, 0, shape)?;
        let mut b = self
            .ring
            .sample_gaussian(self.device, rng, self.sigma, shape)?;
        self.ring.mul_sub_assign(&mut b, &a, &sk.s_qp)?;
        Ok(PublicKey {
            parts: [b, a],
            seed,
            params_id: self.params_id,
        })
    }

    /// A key-switching key from `s_from` (over `Q ∪ P`, NTT form) to the secret `s_to` (same
    /// shape): digit `j` is `(-a_j·s_to + e_j + [P]_{q_i}·s_from on the Q primes i of digit j,
    /// a_j)`.
    pub(crate) fn gen_keyswitch_key(
        &self,
        s_to: &Poly,
        s_from: &Poly,
        rng: &mut Prng,
    ) -> Result<KeySwitchKey> {
        let ring = &self.ring;
        let full = ring.full_shape();
        let seed = rng.fresh_seed();
        let mut parts = Vec::with_capacity(ring.dnum());
        for (j, digit) in ring.digits().iter().enumerate() {
            let a = ring.sample_uniform_from_seed(self.device, &seed, j as u64, full)?;
            let mut b = ring.sample_gaussian(self.device, rng, self.sigma, full)?;
            ring.mul_sub_assign(&mut b, &a, s_to)?;
            let gadget: Vec<u64> = (0..full.limbs())
                .map(|i| {
                    if digit.contains(&i) {
                        ring.p_mod_q()[i]
                    } else {
                        0
                    }
                })
                .collect();
            ring.mul_scalar_add_assign(&mut b, s_from, &gadget)?;
            parts.push([b, a]);
        }
        Ok(KeySwitchKey {
            parts,
            seed,
            params_id: self.params_id,
        })
    }

    /// The relinearisation key (switches `s²` to `s`).
    pub(crate) fn gen_relinearization_key(
        &self,
        sk: &SecretKey,
        rng: &mut Prng,
    ) -> Result<RelinearizationKey> {
        self.check_id("gen_relinearization_key", sk.params_id)?;
        let mut s2 = self.ring.mul(&sk.s_qp, &sk.s_qp)?;
        let key = self.gen_keyswitch_key(&sk.s_qp, &s2, rng);
        s2.zeroize();
        Ok(RelinearizationKey(key?))
    }

    /// The Galois key for element `g` (switches `s` to `σ_{g^{-1}}(s)`).
    ///
    /// Errors: [`Error::InvalidGaloisElement`] unless `g` is odd and below `2N`.
    pub(crate) fn gen_galois_key(
        &self,
        sk: &SecretKey,
        g: u64,
        rng: &mut Prng,
    ) -> Result<KeySwitchKey> {
        self.check_id("gen_galois_key", sk.params_id)?;
        keys::check_galois_element(g, self.ring.n())?;
        let g_inv = self.galois_inverse(g);
        let mut s_to = self.ring.automorphism(&sk.s_qp, g_inv)?;
        let key = self.gen_keyswitch_key(&s_to, &sk.s_qp, rng);
        s_to.zeroize();
        key
    }

    /// Galois keys for rotations by each of `steps` slots (multiples of the rotation period need
    /// no key and are skipped) and, if `conjugation`, for the element `2N − 1` (CKKS's complex
    /// conjugation, BGV's column swap). Each distinct element gets one key.
    pub(crate) fn gen_galois_keys(
        &self,
        sk: &SecretKey,
        steps: &[i64],
        conjugation: bool,
        rng: &mut Prng,
    ) -> Result<GaloisKeys> {
        let mut keys = GaloisKeys::empty(self.params_id());
        for g in self.galois_elements(steps, conjugation) {
            keys.insert(g, self.gen_galois_key(sk, g, rng)?)?;
        }
        Ok(keys)
    }

    /// The distinct Galois elements of [`RlweContext::gen_galois_keys`] in the order their keys
    /// are generated: the rotations by `steps` (skipping the identity), then `2N − 1` if
    /// `conjugation`; the protected generator uses the same list, hence the same draws.
    pub(crate) fn galois_elements(&self, steps: &[i64], conjugation: bool) -> Vec<u64> {
        let rotations = steps
            .iter()
            .map(|&k| self.galois_element_for_rotation(k))
            .filter(|&g| g != 1);
        let conjugation = conjugation.then(|| self.galois_element_for_conjugation());
        let mut elements: Vec<u64> = Vec::new();
        for g in rotations.chain(conjugation) {
            if !elements.contains(&g) {
                elements.push(g);
            }
        }
        elements
    }

    // ------------------------------------------------------------------ encryption

    /// Encrypts the NTT-form plaintext polynomial `m` (Q limbs only, any level `ℓ`) under the
    /// public key. The encryption of zero `(v·b + e_0, v·a + e_1)` (`v` ternary, `e_0, e_1`
    /// Gaussian) is formed over `Q_ℓ ∪ P` and divided by `P` (ModDown), which shrinks its noise
    /// to the rounding noise; then `m` is added ([`RnsRing::encrypt_zero_moddown`]: a key
    /// switching of the one "digit" `v` with the public key as its key).
    pub(crate) fn encrypt_pk(&self, pk: &PublicKey, m: &Poly, rng: &mut Prng) -> Result<Vec<Poly>> {
        self.check_id("encrypt", pk.params_id)?;
        m.expect_form("encrypt", Form::Ntt)?;
        let ell = m.q_limbs();
        let [c0, c1] = self.ring.encrypt_zero_moddown(
            self.device,
            rng,
            self.sigma,
            ell,
            &pk.parts,
            Some(m),
        )?;
        Ok(vec![c0, c1])
    }

    /// Encrypts `m` under the secret key: `(-a·s + e + m, a)`, `a` from `(seed, stream 0)` with
    /// a fresh seed (returned, so the ciphertext can ship as `(c_0, seed)`).
    pub(crate) fn encrypt_sk(
        &self,
        sk: &SecretKey,
        m: &Poly,
        rng: &mut Prng,
    ) -> Result<(Vec<Poly>, [u8; 32])> {
        self.check_id("encrypt", sk.params_id)?;
        let ring = &self.ring;
        let shape = m.shape();
        let seed = rng.fresh_seed();
        let a = ring.sample_uniform_from_seed(self.device, &seed, 0, shape)?;
        let mut c0 = ring.sample_gaussian(self.device, rng, self.sigma, shape)?;
        ring.mul_sub_assign(&mut c0, &a, &sk.s_q)?;
        ring.add_assign(&mut c0, m)?;
        Ok((vec![c0, a], seed))
    }

    /// Decrypts the components `c_0, …, c_k` (NTT form, same shape) to `Σ c_i·s^i` (NTT form).
    pub(crate) fn decrypt(&self, sk: &SecretKey, cs: &[Poly]) -> Result<Poly> {
        self.check_id("decrypt", sk.params_id)?;
        let ring = &self.ring;
        let (last, rest) = cs.split_last().ok_or_else(|| {
            Error::InvalidInput("decrypt: a ciphertext needs at least one component".into())
        })?;
        // Horner: ((c_k·s + c_{k-1})·s + …)·s + c_0.
        let mut acc = last.try_clone()?;
        for c in rest.iter().rev() {
            ring.mul_assign(&mut acc, &sk.s_q)?;
            ring.add_assign(&mut acc, c)?;
        }
        Ok(acc)
    }

    // ------------------------------------------------------------------ key switching

    /// The ModUp digits of `d` (NTT form, Q limbs): the part of key switching that does not
    /// depend on the key, shared by hoisted key switchings.
    pub(crate) fn decompose(&self, d: &Poly) -> Result<Vec<Poly>> {
        self.ring.mod_up(d)
    }

    /// Key switching of one polynomial, returning `(u_0, u_1)` over `d`'s Q limbs with
    /// `u_0 + u_1·s ≈ d·s'`: [`RlweContext::decompose`] then `ModDown(Σ_j d_j · key_j)`
    /// ([`RnsRing::keyswitch_moddown`]), bit for bit (on the GPU with the ModUp's row phase and
    /// the inner product fused: [`RnsRing::keyswitch_poly`]). The tests' reference.
    #[cfg(test)]
    pub(crate) fn keyswitch(&self, d: &Poly, key: &KeySwitchKey) -> Result<[Poly; 2]> {
        self.check_id("key switch", key.params_id)?;
        self.ring.keyswitch_poly(d, &key.parts, [None, None], false)
    }

    /// Key switching of a 2-component ciphertext to `key`'s target secret: `(c_0 + u_0, u_1)`
    /// with `(u_0, u_1) = KeySwitch(c_1)` (one fused key switching, counted).
    pub(crate) fn switch_key(&self, cs: &[Poly], key: &KeySwitchKey) -> Result<Vec<Poly>> {
        check_two_parts(cs)?;
        self.check_id("key switch", key.params_id)?;
        self.count_keyswitch();
        let [c0, c1] = self
            .ring
            .keyswitch_poly(&cs[1], &key.parts, [Some(&cs[0]), None], false)?;
        Ok(vec![c0, c1])
    }

    /// Relinearises `(c_0, c_1, c_2)` to `(c_0 + u_0, c_1 + u_1)` with `(u_0, u_1) =
    /// KeySwitch_{s²→s}(c_2)`.
    pub(crate) fn relinearize(&self, cs: &[Poly], rlk: &RelinearizationKey) -> Result<Vec<Poly>> {
        self.relinearize_with(cs, rlk, false)
    }

    /// [`RlweContext::relinearize`] followed by the rescale of both parts by the last prime,
    /// merged on the GPU ([`RnsRing::keyswitch_moddown_rescale`]; bit-identical to the two
    /// steps). The parts must have at least 2 Q limbs.
    pub(crate) fn relinearize_rescale(
        &self,
        cs: &[Poly],
        rlk: &RelinearizationKey,
    ) -> Result<Vec<Poly>> {
        self.relinearize_with(cs, rlk, true)
    }

    fn relinearize_with(
        &self,
        cs: &[Poly],
        rlk: &RelinearizationKey,
        rescale: bool,
    ) -> Result<Vec<Poly>> {
        if cs.len() != 3 {
            return Err(Error::CiphertextDegree {
                op: "relinearize",
                expected: 3,
                found: cs.len(),
                hint: "only a product of two 2-component ciphertexts needs relinearization",
            });
        }
        self.check_id("key switch", rlk.0.params_id)?;
        self.count_keyswitch();
        let adds = [Some(&cs[0]), Some(&cs[1])];
        let [c0, c1] = self
            .ring
            .keyswitch_poly(&cs[2], &rlk.0.parts, adds, rescale)?;
        Ok(vec![c0, c1])
    }

    /// The automorphism `σ_g` of a 2-component ciphertext, from the precomputed digits of its
    /// `c_1` ([`RlweContext::decompose`]): `(σ_g(c_0 + u_0), σ_g(u_1))`.
    pub(crate) fn automorphism_hoisted(
        &self,
        c0: &Poly,
        digits: &[Poly],
        g: u64,
        key: &KeySwitchKey,
    ) -> Result<Vec<Poly>> {
        self.check_id("key switch", key.params_id)?;
        self.count_keyswitch();
        let parts =
            self.ring
                .keyswitch_moddown_automorphism(digits, &key.parts, [Some(c0), None], g)?;
        Ok(parts.into())
    }

    /// The automorphism `σ_g` of a 2-component ciphertext kept in the extended basis
    /// `Q_ℓ ∪ P`, from the precomputed digits of its `c_1` ([`RlweContext::decompose`]) and
    /// `P·c_0` ([`RnsRing::lift_times_p`]): `(σ_g(P·c_0 + u_0), σ_g(u_1))`, no ModDown. Sums of
    /// such results (times plaintexts lifted to `Q_ℓ ∪ P`) share one ModDown, which gives
    /// exactly what the sum of the [`RlweContext::automorphism_hoisted`] results would give
    /// up to the ModDown rounding (one rounding instead of one per term).
    pub(crate) fn automorphism_hoisted_extended(
        &self,
        c0_times_p: &Poly,
        digits: &[Poly],
        g: u64,
        key: &KeySwitchKey,
    ) -> Result<[Poly; 2]> {
        self.check_id("key switch", key.params_id)?;
        self.count_keyswitch();
        let [mut u0, u1] = self.ring.keyswitch_inner_product(digits, &key.parts)?;
        self.ring.add_assign(&mut u0, c0_times_p)?;
        Ok([
            self.ring.automorphism(&u0, g)?,
            self.ring.automorphism(&u1, g)?,
        ])
    }

    /// The automorphism `σ_g` of a 2-component ciphertext: one key switching of `c_1`
    /// ([`RnsRing::keyswitch_poly`]), bit-identical to [`RlweContext::decompose`] then
    /// [`RlweContext::automorphism_hoisted`].
    pub(crate) fn automorphism(
        &self,
        cs: &[Poly],
        g: u64,
        key: &KeySwitchKey,
    ) -> Result<Vec<Poly>> {
        check_two_parts(cs)?;
        self.check_id("key switch", key.params_id)?;
        self.count_keyswitch();
        let parts =
            self.ring
                .keyswitch_poly_automorphism(&cs[1], &key.parts, [Some(&cs[0]), None], g)?;
        Ok(parts.into())
    }

    /// The automorphisms `σ_g` of one 2-component ciphertext for several `(g, key)` pairs, in
    /// order; `None` for a pair without a key (the identity, `g = 1`: nothing to switch). A single
    /// keyed pair is one [`RlweContext::automorphism`] (on the GPU the ModUp's last NTT phase
    /// fused with the inner product); several share one [`RlweContext::decompose`] of `c_1`
    /// (hoisting). Bit-identical either way.
    pub(crate) fn automorphisms(
        &self,
        cs: &[Poly],
        plan: &[(u64, Option<&KeySwitchKey>)],
    ) -> Result<Vec<Option<Vec<Poly>>>> {
        check_two_parts(cs)?;
        let keyed = plan.iter().filter(|(_, k)| k.is_some()).count();
        let digits = if keyed > 1 {
            Some(self.decompose(&cs[1])?)
        } else {
            None
        };
        plan.iter()
            .map(|&(g, key)| {
                let Some(key) = key else {
                    return Ok(None);
                };
                let parts = match &digits {
                    Some(d) => self.automorphism_hoisted(&cs[0], d, g, key)?,
                    None => self.automorphism(cs, g, key)?,
                };
                Ok(Some(parts))
            })
            .collect()
    }
}

impl AsRef<RlweContext> for RlweContext {
    fn as_ref(&self) -> &RlweContext {
        self
    }
}

/// [`Error::CiphertextDegree`] unless `cs` has the two components an automorphism takes.
fn check_two_parts(cs: &[Poly]) -> Result<()> {
    if cs.len() != 2 {
        return Err(Error::CiphertextDegree {
            op: "automorphism",
            expected: 2,
            found: cs.len(),
            hint: "relinearize the ciphertext first",
        });
    }
    Ok(())
}

/// `base^exp mod m` for small `m` (`m < 2^32`).
fn pow_mod(base: u64, mut exp: u64, m: u64) -> u64 {
    let mut r = 1 % m;
    let mut b = base % m;
    while exp > 0 {
        if exp & 1 == 1 {
            r = r * b % m;
        }
        b = b * b % m;
        exp >>= 1;
    }
    r
}

#[cfg(test)]
mod tests;

/// Checks that a polynomial list is a ciphertext: NTT form, Q limbs only, one shape.
pub(crate) fn check_components(op: &'static str, cs: &[Poly]) -> Result<()> {
    let first = cs.first().ok_or_else(|| {
        Error::InvalidInput(format!("`{op}`: a ciphertext needs at least one component"))
    })?;
    for c in cs {
        c.expect_form(op, Form::Ntt)?;
        if c.shape() != first.shape() || c.p_limbs() != 0 {
            return Err(Error::ShapeMismatch {
                op,
                lhs: c.shape(),
                rhs: first.shape(),
            });
        }
    }
    Ok(())
}
