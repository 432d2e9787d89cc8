//! The BGV evaluator: exact arithmetic on encrypted integers modulo `t`.

use std::sync::Arc;

use super::noise::{log_abs, log_add};
use super::{BgvContext, Ciphertext, Plaintext};
use crate::backend::{Poly, RnsRing};
use crate::error::{Error, Result};
use crate::rlwe::{
    check_degree, check_two_components, clone_polys, EvaluationKeys, GaloisKeys, RelinearizationKey,
};

mod assign;
mod protected_plain;

pub(super) use protected_plain::PlainInfo;

/// A ciphertext that is either the caller's or an aligned (lowered) copy.
type Aligned<'a> = crate::rlwe::Aligned<'a, Ciphertext>;

/// `gcd(a, b)` for non-negative `a`, `b`.
fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Small multipliers `(r_a, r_b)` with `r_a·f_a ≡ r_b·f_b (mod t)` and `r_b` invertible modulo
/// `t`, minimising the bound `|r_a|·2^{log_a} + |r_b|·2^{log_b}` of the sum of the two scaled
/// operands. The candidates are the remainders of the extended Euclidean algorithm on
/// `(t, x = f_b·f_a^{-1} mod t)`: each `r_k ≡ u_k·x (mod t)`, with `|r_k|` decreasing from `x`
/// and `|u_k|` increasing to about `t/x`, so `|r_k|·|u_k| ≤ t` (the best is near `sqrt(t)` each
/// when the operands' noises are equal).
pub(crate) fn balance(t: u64, x: u64, log_a: f64, log_b: f64) -> (i64, i64) {
    let tt = t as i128;
    let (mut r0, mut r1) = (tt, x as i128);
    let (mut u0, mut u1) = (0i128, 1i128);
    let mut best = (x as i64, 1i64);
    let mut best_cost = f64::INFINITY;
    while r1 != 0 {
        if gcd(u1.unsigned_abs(), t as u128) == 1 {
            let cost = log_add(log_a + log_abs(r1 as i64), log_b + log_abs(u1 as i64));
            if cost < best_cost {
                best_cost = cost;
                best = (r1 as i64, u1 as i64);
            }
        }
        let q = r0 / r1;
        (r0, r1) = (r1, r0 - q * r1);
        (u0, u1) = (u1, u0 - q * u1);
    }
    best
}

/// Evaluates BGV operations. Immutable and `Send + Sync`: one evaluator serves many threads.
///
/// **Levels.** Operands at different levels are brought to the lower level automatically, one
/// level at a time, by a modulus switch when that lowers the noise bound and by dropping the
/// last limb otherwise (both are exact for BGV). In the default *auto* mode every
/// multiplication (by a ciphertext or a plaintext) is followed by one modulus switch, so a
/// ciphertext at level `ℓ` supports `ℓ` further multiplicative levels; in *manual* mode
/// ([`Evaluator::with_auto_mod_switch`]`(false)`) only [`Evaluator::mod_switch`] and its
/// relatives switch.
///
/// **Correction factors.** Modulus switching multiplies the message by `q_ℓ^{-1} mod t`; the
/// factor is tracked on the ciphertext ([`Ciphertext::factor`]) and divided out at decryption.
/// Adding operands whose factors differ multiplies them by small integers `r_a`, `r_b` with
/// `r_a·f_a ≡ r_b·f_b (mod t)` (about `sqrt(t)` each), which costs about `log2(t)/2` bits of
/// noise.
///
/// **Noise.** Every operation updates the noise bound (see [`crate::bgv`]) and fails with
/// [`Error::NoiseBudgetExhausted`] instead of producing a ciphertext whose bound reaches
/// `Q_ℓ / 2`; [`Evaluator::with_noise_check`]`(false)` turns this off (then only decryption
/// checks).
///
/// **Operations.** [`add`](Evaluator::add)/[`sub`](Evaluator::sub)/[`neg`](Evaluator::neg) with
/// ciphertexts, plaintexts ([`add_plain`](Evaluator::add_plain), ...) and constants
/// ([`add_const`](Evaluator::add_const), ...); multiplication by a plaintext, a constant and a
/// ciphertext (with relinearisation, or without: [`mul_no_relin`](Evaluator::mul_no_relin)),
/// squaring; [`mod_switch`](Evaluator::mod_switch),
/// [`mod_switch_to_level`](Evaluator::mod_switch_to_level),
/// [`drop_to_level`](Evaluator::drop_to_level); row rotations
/// ([`rotate_rows`](Evaluator::rotate_rows), hoisted:
/// [`rotate_rows_hoisted`](Evaluator::rotate_rows_hoisted)), the column swap
/// ([`rotate_columns`](Evaluator::rotate_columns)) and [`inner_sum`](Evaluator::inner_sum).
pub struct Evaluator {
    ctx: BgvContext,
    keys: EvaluationKeys,
    auto_mod_switch: bool,
    check_noise: bool,
}

impl Evaluator {
    /// An evaluator without keys, in auto mode, with noise checks.
    pub fn new(ctx: &BgvContext) -> Self {
        Self {
            ctx: ctx.clone(),
            keys: EvaluationKeys::default(),
            auto_mod_switch: true,
            check_noise: true,
        }
    }

    /// Adds the relinearisation key (needed by ciphertext multiplication).
    pub fn with_relinearization_key(
        mut self,
        rlk: impl Into<Arc<RelinearizationKey>>,
    ) -> Result<Self> {
        self.keys
            .set_relinearization_key(self.ctx.rlwe(), rlk.into())?;
        Ok(self)
    }

    /// Adds Galois keys (needed by rotations, the column swap and the inner sum).
    pub fn with_galois_keys(mut self, keys: impl Into<Arc<GaloisKeys>>) -> Result<Self> {
        self.keys.set_galois_keys(self.ctx.rlwe(), keys.into())?;
        Ok(self)
    }

    /// Turns the automatic modulus switch after each multiplication on (the default) or off.
    pub fn with_auto_mod_switch(mut self, on: bool) -> Self {
        self.auto_mod_switch = on;
        self
    }

    /// Turns the noise-bound check of every operation on (the default) or off. Off, a
    /// computation that exhausts the budget is only detected when decrypting.
    pub fn with_noise_check(mut self, on: bool) -> Self {
        self.check_noise = on;
        self
    }

    /// Whether the automatic modulus switch is on.
    pub fn auto_mod_switch(&self) -> bool {
        self.auto_mod_switch
    }

    /// The context.
    pub fn context(&self) -> &BgvContext {
        &self.ctx
    }

    /// The estimated noise budget of `ct` in bits from its tracked bound,
    /// `⌊log2(Q_ℓ / 2) − log2 B⌋` (negative when the bound has passed `Q_ℓ / 2`).
    pub fn estimated_budget(&self, ct: &Ciphertext) -> i64 {
        (self.ctx.noise.log_modulus(ct.level()) - 1.0 - ct.log_noise).floor() as i64
    }

    // ------------------------------------------------------------------ helpers

    fn ring(&self) -> &RnsRing {
        self.ctx.ring()
    }

    /// Runs `f` on a thread of the rayon pool when the context is on the CPU. Every CPU
    /// primitive is a parallel loop; called from a thread outside the pool, each one hands its
    /// work to the pool and puts the caller to sleep until it is done (two context switches
    /// per primitive, a few dozen per key switching). Run from a worker, the primitives split
    /// their work with the other workers directly. The words are the same either way.
    fn on_pool<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        crate::backend::on_pool(self.ctx.device(), f)
    }

    fn check(&self, op: &'static str, ct: &Ciphertext) -> Result<()> {
        self.ctx.rlwe().check_id(op, ct.params_id)?;
        check_degree(
            op,
            ct.parts.len(),
            "a BGV ciphertext has 2 components (3 before relinearization)",
        )
    }

    /// Fails (when checks are on) unless a phase of bound `2^log_b` fits below `Q_level / 2`.
    fn check_bound(&self, op: &'static str, log_b: f64, level: usize) -> Result<()> {
        let log_q = self.ctx.noise.log_modulus(level);
        // NaN counts as exhausted.
        let fits = log_b < log_q - 1.0;
        if self.check_noise && !fits {
            return Err(Error::NoiseBudgetExhausted {
                op,
                level,
                log_noise: log_b,
                log_modulus: log_q,
            });
        }
        Ok(())
    }

    fn wrap(
        &self,
        template: &Ciphertext,
        parts: Vec<Poly>,
        factor: u64,
        log_noise: f64,
    ) -> Ciphertext {
        Ciphertext {
            parts,
            factor,
            log_noise,
            params_id: template.params_id,
            seed: None,
        }
    }

    /// `k mod q_i` for every limb of a level-`level` polynomial.
    fn int_scalars(&self, k: i64, limbs: usize) -> Vec<u64> {
        self.ring()
            .scalar_from_i128(k as i128, &self.ring().shape_q(limbs))
    }

    /// `parts · k` (a small signed integer), in place.
    fn scale_parts(&self, parts: &mut [Poly], k: i64) -> Result<()> {
        if k == 1 {
            return Ok(());
        }
        let scalars = self.int_scalars(k, parts[0].q_limbs());
        for p in parts.iter_mut() {
            self.ring().mul_scalar_assign(p, &scalars)?;
        }
        Ok(())
    }

    /// The centred representative of `x mod t`.
    fn centred(&self, x: i64) -> i64 {
        let t = &self.ctx.tables.t;
        t.center(t.reduce_i64(x))
    }

    fn mod_switch_unchecked(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        let parts = self.on_pool(|| self.ring().rescale_many(&ct.parts))?;
        let (factor, log_noise) = self.switched(ct.factor, ct.log_noise, ct.level(), parts.len());
        Ok(self.wrap(ct, parts, factor, log_noise))
    }

    /// The factor and noise bound after switching a ciphertext of `parts` parts down from
    /// `level`: the factor times `q_level^{-1} mod t`, the bound of the noise model.
    fn switched(&self, factor: u64, log_noise: f64, level: usize, parts: usize) -> (u64, f64) {
        let t = &self.ctx.tables.t;
        (
            t.mul(factor, self.ctx.tables.q_inv_mod_t[level]),
            self.ctx.noise.mod_switch(log_noise, level, parts),
        )
    }

    /// Brings `ct` down to `level`, one level at a time, switching when that lowers the noise
    /// bound and dropping the last limb otherwise.
    fn lower_to(&self, ct: &Ciphertext, level: usize) -> Result<Ciphertext> {
        let mut cur = ct.try_clone()?;
        while cur.level() > level {
            let l = cur.level();
            let switched = self.ctx.noise.mod_switch(cur.log_noise, l, cur.parts.len());
            cur = if switched < cur.log_noise {
                self.mod_switch_unchecked(&cur)?
            } else {
                self.drop_unchecked(&cur, l - 1)?
            };
        }
        Ok(cur)
    }

    fn drop_unchecked(&self, ct: &Ciphertext, level: usize) -> Result<Ciphertext> {
        let limbs = self.ctx.params().q_limbs_at_level(level);
        let parts = ct
            .parts
            .iter()
            .map(|p| self.ring().drop_q_limbs(p, limbs))
            .collect::<Result<Vec<_>>>()?;
        Ok(self.wrap(ct, parts, ct.factor, ct.log_noise))
    }

    fn align<'a>(
        &self,
        a: &'a Ciphertext,
        b: &'a Ciphertext,
    ) -> Result<(Aligned<'a>, Aligned<'a>)> {
        Ok(match a.level().cmp(&b.level()) {
            std::cmp::Ordering::Equal => (Aligned::Borrowed(a), Aligned::Borrowed(b)),
            std::cmp::Ordering::Greater => (
                Aligned::Owned(self.lower_to(a, b.level())?),
                Aligned::Borrowed(b),
            ),
            std::cmp::Ordering::Less => (
                Aligned::Borrowed(a),
                Aligned::Owned(self.lower_to(b, a.level())?),
            ),
        })
    }

    /// `ct` at a level not above `pt`'s (a plaintext at a higher level is read as a view).
    fn align_plain<'a>(&self, ct: &'a Ciphertext, pt: &Plaintext) -> Result<Aligned<'a>> {
        if ct.level() > pt.level() {
            Ok(Aligned::Owned(self.lower_to(ct, pt.level())?))
        } else {
            Ok(Aligned::Borrowed(ct))
        }
    }

    fn check_plain(&self, op: &'static str, ct: &Ciphertext, pt: &Plaintext) -> Result<()> {
        self.check(op, ct)?;
        self.ctx.rlwe().check_id(op, pt.params_id)
    }

    fn maybe_switch(&self, ct: Ciphertext) -> Result<Ciphertext> {
        if self.auto_mod_switch && ct.level() > 0 {
            self.mod_switch_unchecked(&ct)
        } else {
            Ok(ct)
        }
    }

    // ------------------------------------------------------------------ levels

    /// Switches `ct` down one level: `ĉ ↦ round(ĉ / q_ℓ)` (the RLWE core's rescale; on the BGV
    /// ciphertext `c = t·ĉ` this is the modulus switch with the `t`-correction, see
    /// [`rhea_math::bgv_rescale`]). The factor is multiplied by `q_ℓ^{-1} mod t`.
    ///
    /// Errors: [`Error::LevelUnderflow`] at level 0.
    pub fn mod_switch(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.check("mod_switch", ct)?;
        if ct.level() == 0 {
            return Err(Error::LevelUnderflow {
                op: "mod_switch",
                level: 0,
                needed: 1,
            });
        }
        let out = self.mod_switch_unchecked(ct)?;
        self.check_bound("mod_switch", out.log_noise, out.level())?;
        Ok(out)
    }

    /// Switches `ct` down to `level` (one [`Evaluator::mod_switch`] per level).
    pub fn mod_switch_to_level(&self, ct: &Ciphertext, level: usize) -> Result<Ciphertext> {
        self.check("mod_switch_to_level", ct)?;
        if level > ct.level() {
            return Err(Error::InvalidInput(format!(
                "mod_switch_to_level: target level {level} is above the ciphertext's level {}",
                ct.level()
            )));
        }
        let mut cur = ct.try_clone()?;
        while cur.level() > level {
            cur = self.mod_switch_unchecked(&cur)?;
        }
        self.check_bound("mod_switch_to_level", cur.log_noise, level)?;
        Ok(cur)
    }

    /// Drops limbs down to `level` without dividing (the noise and the factor are kept; the
    /// budget shrinks with the modulus).
    pub fn drop_to_level(&self, ct: &Ciphertext, level: usize) -> Result<Ciphertext> {
        self.check("drop_to_level", ct)?;
        if level > ct.level() {
            return Err(Error::InvalidInput(format!(
                "drop_to_level: target level {level} is above the ciphertext's level {}",
                ct.level()
            )));
        }
        let out = self.drop_unchecked(ct, level)?;
        self.check_bound("drop_to_level", out.log_noise, level)?;
        Ok(out)
    }

    // ------------------------------------------------------------------ additive

    /// `a + b` (levels and factors matched automatically; a 3-component operand gives a
    /// 3-component result).
    pub fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.add_signed("add", a, b, 1)
    }

    /// `a - b` (matched like [`Evaluator::add`]).
    pub fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.add_signed("sub", a, b, -1)
    }

    fn add_signed(
        &self,
        op: &'static str,
        a: &Ciphertext,
        b: &Ciphertext,
        sign: i64,
    ) -> Result<Ciphertext> {
        self.check(op, a)?;
        self.check(op, b)?;
        let (a, b) = self.align(a, b)?;
        let t = &self.ctx.tables.t;
        let (ra, rb, log_noise) = self.add_terms(op, &a, &b)?;
        let ring = self.ring();
        let parts = if (ra, rb) == (1, 1) {
            // Equal factors: one pass per common part (read a, read b, write the result), not
            // two copies followed by an in-place add.
            let mut parts = Vec::with_capacity(a.parts.len().max(b.parts.len()));
            for (pa, pb) in a.parts.iter().zip(&b.parts) {
                parts.push(if sign < 0 {
                    ring.sub(pa, pb)?
                } else {
                    ring.add(pa, pb)?
                });
            }
            // At most one of the two tails is non-empty (a 3-component operand's third part).
            let common = parts.len();
            for pa in &a.parts[common..] {
                parts.push(pa.try_clone()?);
            }
            let mut tail: Vec<Poly> = b.parts[common..]
                .iter()
                .map(Poly::try_clone)
                .collect::<Result<_>>()?;
            if !tail.is_empty() {
                self.scale_parts(&mut tail, sign)?;
            }
            parts.extend(tail);
            parts
        } else {
            let mut parts = clone_polys(&a.parts)?;
            self.scale_parts(&mut parts, ra)?;
            let mut pb = clone_polys(&b.parts)?;
            self.scale_parts(&mut pb, sign * rb)?;
            for (i, q) in pb.into_iter().enumerate() {
                match parts.get_mut(i) {
                    Some(p) => ring.add_assign(p, &q)?,
                    None => parts.push(q),
                }
            }
            parts
        };
        let factor = t.mul(a.factor, t.reduce_i64(ra));
        Ok(self.wrap(&a, parts, factor, log_noise))
    }

    /// The bookkeeping of `a ± b` at one level: the multipliers `(r_a, r_b)` that match the
    /// factors (`(1, 1)` for equal ones) and the result's noise bound, checked.
    fn add_terms(
        &self,
        op: &'static str,
        a: &Ciphertext,
        b: &Ciphertext,
    ) -> Result<(i64, i64, f64)> {
        let t = &self.ctx.tables.t;
        let (ra, rb) = if a.factor == b.factor {
            (1, 1)
        } else {
            let x = t.mul(b.factor, t.inv(a.factor)?);
            balance(t.value(), x, a.log_noise, b.log_noise)
        };
        let log_noise = log_add(a.log_noise + log_abs(ra), b.log_noise + log_abs(rb));
        self.check_bound(op, log_noise, a.level())?;
        Ok((ra, rb, log_noise))
    }

    /// `-a`.
    pub fn neg(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.check("neg", a)?;
        let mut parts = clone_polys(&a.parts)?;
        for p in &mut parts {
            self.ring().neg_assign(p)?;
        }
        Ok(self.wrap(a, parts, a.factor, a.log_noise))
    }

    /// `ct + pt` (the ciphertext is brought down to the plaintext's level if it is above).
    pub fn add_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.add_plain_signed("add_plain", ct, pt, 1)
    }

    /// `ct - pt`.
    pub fn sub_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.add_plain_signed("sub_plain", ct, pt, -1)
    }

    fn add_plain_signed(
        &self,
        op: &'static str,
        ct: &Ciphertext,
        pt: &Plaintext,
        sign: i64,
    ) -> Result<Ciphertext> {
        self.check_plain(op, ct, pt)?;
        let ct = self.align_plain(ct, pt)?;
        let t = &self.ctx.tables.t;
        // ct·r_c + (t^{-1}·r_p)·m with r_c·f ≡ r_p (mod t): the plaintext has factor 1.
        let (rc, rp) = if ct.factor == 1 {
            (1, 1)
        } else {
            balance(t.value(), t.inv(ct.factor)?, ct.log_noise, pt.log_norm)
        };
        let log_noise = log_add(ct.log_noise + log_abs(rc), pt.log_norm + log_abs(rp));
        self.check_bound(op, log_noise, ct.level())?;
        let mut parts = clone_polys(&ct.parts)?;
        self.scale_parts(&mut parts, rc)?;
        let limbs = parts[0].q_limbs();
        let scalars = self.ctx.t_inv_times(sign * rp, limbs);
        self.ring()
            .mul_scalar_add_assign(&mut parts[0], &pt.poly, &scalars)?;
        let factor = t.mul(ct.factor, t.reduce_i64(rc));
        Ok(self.wrap(&ct, parts, factor, log_noise))
    }

    /// `ct + c` for an integer `c` (reduced modulo `t`), added to every slot (the constant
    /// coefficient).
    pub fn add_const(&self, ct: &Ciphertext, c: i64) -> Result<Ciphertext> {
        self.add_const_signed("add_const", ct, c)
    }

    /// `ct - c`.
    pub fn sub_const(&self, ct: &Ciphertext, c: i64) -> Result<Ciphertext> {
        let t = &self.ctx.tables.t;
        let neg = t.center(t.neg(t.reduce_i64(c)));
        self.add_const_signed("sub_const", ct, neg)
    }

    fn add_const_signed(&self, op: &'static str, ct: &Ciphertext, c: i64) -> Result<Ciphertext> {
        let (fc, log_noise) = self.add_const_terms(op, ct, c)?;
        let mut parts = clone_polys(&ct.parts)?;
        let limbs = parts[0].q_limbs();
        self.ring()
            .add_scalar_assign(&mut parts[0], &self.ctx.t_inv_times(fc, limbs))?;
        Ok(self.wrap(ct, parts, ct.factor, log_noise))
    }

    /// The bookkeeping of `ct + c`: the phase gains `[f·c]_t` (so `ĉ_0` gains `t^{-1}·[f·c]_t`),
    /// and the result's noise bound, checked.
    fn add_const_terms(&self, op: &'static str, ct: &Ciphertext, c: i64) -> Result<(i64, f64)> {
        self.check(op, ct)?;
        let t = &self.ctx.tables.t;
        let fc = t.center(t.mul(ct.factor, t.reduce_i64(c)));
        let log_noise = log_add(ct.log_noise, log_abs(fc));
        self.check_bound(op, log_noise, ct.level())?;
        Ok((fc, log_noise))
    }

    /// The bookkeeping of `ct · c`: `c` centred modulo `t`, and the result's noise bound,
    /// checked.
    fn mul_const_terms(&self, ct: &Ciphertext, c: i64) -> Result<(i64, f64)> {
        self.check("mul_const", ct)?;
        let c = self.centred(c);
        let log_noise = ct.log_noise + log_abs(c).max(0.0);
        self.check_bound("mul_const", log_noise, ct.level())?;
        Ok((c, log_noise))
    }

    // ------------------------------------------------------------------ multiplicative

    /// `ct · c` for an integer `c` (reduced modulo `t`, centred), in every slot. No level is
    /// spent.
    pub fn mul_const(&self, ct: &Ciphertext, c: i64) -> Result<Ciphertext> {
        let (c, log_noise) = self.mul_const_terms(ct, c)?;
        let mut parts = clone_polys(&ct.parts)?;
        if c != 1 {
            let scalars = self.int_scalars(c, parts[0].q_limbs());
            for p in &mut parts {
                self.ring().mul_scalar_assign(p, &scalars)?;
            }
        }
        Ok(self.wrap(ct, parts, ct.factor, log_noise))
    }

    /// `ct · pt`, slot by slot (then one modulus switch in auto mode).
    pub fn mul_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.check_plain("mul_plain", ct, pt)?;
        let ct = self.align_plain(ct, pt)?;
        let log_noise = ct.log_noise + pt.log_norm;
        self.check_bound("mul_plain", log_noise, ct.level())?;
        let mut parts = clone_polys(&ct.parts)?;
        for p in &mut parts {
            self.ring().mul_assign(p, &pt.poly)?;
        }
        let out = self.wrap(&ct, parts, ct.factor, log_noise);
        self.maybe_switch(out)
    }

    /// The tensor product `t·(â ⊗ b̂)` of two 2-component ciphertexts at one level (3
    /// components); the factor `t` keeps the `t^{-1}` representation.
    fn tensor(&self, a: &Ciphertext, b: &Ciphertext, op: &'static str) -> Result<Ciphertext> {
        check_two_components(op, a.parts.len())?;
        check_two_components(op, b.parts.len())?;
        let (a, b) = self.align(a, b)?;
        let log_noise = a.log_noise + b.log_noise;
        self.check_bound(op, log_noise, a.level())?;
        let ring = self.ring();
        let mut ta = clone_polys(&a.parts)?;
        let ts = self.ctx.t_scalars(ta[0].q_limbs());
        for p in &mut ta {
            ring.mul_scalar_assign(p, &ts)?;
        }
        let [d0, d1, d2] = ring.tensor([&ta[0], &ta[1]], [&b.parts[0], &b.parts[1]])?;
        let t = &self.ctx.tables.t;
        Ok(self.wrap(&a, vec![d0, d1, d2], t.mul(a.factor, b.factor), log_noise))
    }

    /// `a · b` without relinearisation (3 components; no modulus switch).
    pub fn mul_no_relin(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.check("mul_no_relin", a)?;
        self.check("mul_no_relin", b)?;
        self.tensor(a, b, "mul_no_relin")
    }

    /// Relinearises a 3-component ciphertext back to 2 components (key switching of `ĉ_2`
    /// from `s²` to `s`).
    ///
    /// Errors: [`Error::MissingRelinearizationKey`] without the key.
    pub fn relinearize(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.check("relinearize", ct)?;
        if ct.parts.len() == 2 {
            return ct.try_clone();
        }
        let rlk = self.keys.rlk("relinearize")?;
        let log_noise = log_add(ct.log_noise, self.ctx.noise.key_switch(ct.level()));
        self.check_bound("relinearize", log_noise, ct.level())?;
        let parts = self.on_pool(|| self.ctx.rlwe().relinearize(&ct.parts, rlk))?;
        Ok(self.wrap(ct, parts, ct.factor, log_noise))
    }

    /// `a · b`, slot by slot: tensor product, relinearisation, then one modulus switch in auto
    /// mode.
    ///
    /// Errors: [`Error::MissingRelinearizationKey`] without the key,
    /// [`Error::NoiseBudgetExhausted`] when the product's bound reaches `Q_ℓ / 2`.
    pub fn mul(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.check("mul", a)?;
        self.check("mul", b)?;
        self.keys.rlk("mul")?;
        self.on_pool(|| {
            let prod = self.tensor(a, b, "mul")?;
            if self.auto_mod_switch && prod.level() > 0 && prod.parts.len() == 3 {
                return self.relinearize_switch(&prod);
            }
            let out = self.relinearize(&prod)?;
            self.maybe_switch(out)
        })
    }

    /// [`Evaluator::relinearize`] then the modulus switch of auto mode, as one key switching
    /// whose ModDown and switch share their NTTs on the GPU
    /// ([`crate::rlwe::RlweContext::relinearize_rescale`]); the same words, factor and noise
    /// bound as the two steps.
    fn relinearize_switch(&self, prod: &Ciphertext) -> Result<Ciphertext> {
        let rlk = self.keys.rlk("relinearize")?;
        let level = prod.level();
        let log_noise = log_add(prod.log_noise, self.ctx.noise.key_switch(level));
        self.check_bound("relinearize", log_noise, level)?;
        let parts = self.ctx.rlwe().relinearize_rescale(&prod.parts, rlk)?;
        let (factor, log_noise) = self.switched(prod.factor, log_noise, level, parts.len());
        Ok(self.wrap(prod, parts, factor, log_noise))
    }

    /// `a²` (like [`Evaluator::mul`]).
    pub fn square(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.mul(a, a)
    }

    // ------------------------------------------------------------------ rotations

    fn automorphism(
        &self,
        op: &'static str,
        ct: &Ciphertext,
        g: u64,
        step: Option<i64>,
    ) -> Result<Ciphertext> {
        self.check(op, ct)?;
        check_two_components(op, ct.parts.len())?;
        if g == 1 {
            return ct.try_clone();
        }
        let key = self.keys.galois_key(g, step)?;
        let log_noise = log_add(ct.log_noise, self.ctx.noise.key_switch(ct.level()));
        self.check_bound(op, log_noise, ct.level())?;
        let parts = self.on_pool(|| self.ctx.rlwe().automorphism(&ct.parts, g, key))?;
        Ok(self.wrap(ct, parts, ct.factor, log_noise))
    }

    /// Rotates both rows of the `2 × N/2` slot matrix by `step` columns to the left (slot `j`
    /// receives slot `j + step`, cyclically within its row; negative steps rotate right).
    ///
    /// Errors: [`Error::MissingRotationKey`] without the key for `step`.
    pub fn rotate_rows(&self, ct: &Ciphertext, step: i64) -> Result<Ciphertext> {
        let g = self.ctx.rlwe().galois_element_for_rotation(step);
        self.automorphism("rotate_rows", ct, g, Some(step))
    }

    /// Swaps the two rows of the slot matrix (the Galois element `2N - 1`).
    ///
    /// Errors: [`Error::MissingConjugationKey`] without the column-swap key (generate it with
    /// `KeyGenerator::galois_keys(&sk, &[], true)`).
    pub fn rotate_columns(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        let g = self.ctx.rlwe().galois_element_for_conjugation();
        self.automorphism("rotate_columns", ct, g, None)
    }

    /// Row rotations of one ciphertext by several steps, sharing one decomposition of `ĉ_1`
    /// (hoisting; a single keyed step takes the unshared, fused path: `RlweContext::automorphisms`);
    /// equal, word for word, to separate [`Evaluator::rotate_rows`] calls.
    pub fn rotate_rows_hoisted(&self, ct: &Ciphertext, steps: &[i64]) -> Result<Vec<Ciphertext>> {
        const OP: &str = "rotate_rows_hoisted";
        self.check(OP, ct)?;
        check_two_components(OP, ct.parts.len())?;
        let rlwe = self.ctx.rlwe();
        let log_noise = log_add(ct.log_noise, self.ctx.noise.key_switch(ct.level()));
        let plan = self.keys.rotation_plan(rlwe, steps)?;
        if plan.iter().any(|(_, k)| k.is_some()) {
            self.check_bound(OP, log_noise, ct.level())?;
        }
        self.on_pool(|| {
            rlwe.automorphisms(&ct.parts, &plan)?
                .into_iter()
                .map(|parts| match parts {
                    None => ct.try_clone(),
                    Some(parts) => Ok(self.wrap(ct, parts, ct.factor, log_noise)),
                })
                .collect()
        })
    }

    /// The sum of all `N` slots, in every slot: `log2(N/2)` row rotations by `1, 2, 4, …` with
    /// additions, then the column swap and one more addition. Keys:
    /// `KeyGenerator::inner_sum_keys`.
    pub fn inner_sum(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.check("inner_sum", ct)?;
        let half = self.ctx.params().n() / 2;
        let mut acc = ct.try_clone()?;
        let mut step = 1usize;
        while step < half {
            let rotated = self.rotate_rows(&acc, step as i64)?;
            acc = self.add(&acc, &rotated)?;
            step <<= 1;
        }
        let swapped = self.rotate_columns(&acc)?;
        self.add(&acc, &swapped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balance_finds_small_multipliers() {
        let t = 65537u64;
        for x in [2u64, 3, 1000, 32768, 65536, 12345, 40000] {
            let (ra, rb) = balance(t, x, 30.0, 30.0);
            assert_eq!(
                (ra as i128 - x as i128 * rb as i128).rem_euclid(t as i128),
                0,
                "x = {x}"
            );
            assert!(rb != 0 && ra != 0);
            // |r_a|·|r_b| ≤ t, and with equal noises the larger is at most about sqrt(t)·2^?.
            assert!((ra.unsigned_abs() as u128) * (rb.unsigned_abs() as u128) <= t as u128);
        }
        // Unequal noises lean on the quieter operand.
        let (ra, rb) = balance(t, 12345, 10.0, 40.0);
        assert_eq!(rb.abs(), 1);
        assert_eq!(ra, 12345);
        // A composite t: r_b must stay invertible.
        let (ra, rb) = balance(256, 3, 20.0, 20.0);
        assert_eq!((ra - 3 * rb).rem_euclid(256), 0);
        assert!(rb % 2 != 0);
    }
}
