//! The CKKS evaluator: homomorphic arithmetic, rescaling, level and scale management, rotations.

use std::sync::Arc;

use num_complex::Complex64;

use super::{Ciphertext, CkksContext, Plaintext};
use crate::backend::{Poly, RnsRing};
use crate::error::{Error, Result};
use crate::rlwe::{
    check_degree, check_two_components, clone_polys, EvaluationKeys, GaloisKeys, RelinearizationKey,
};

mod assign;
mod auto_bootstrap;

/// Two scales are treated as equal when they differ by at most this relative amount (far below
/// CKKS noise; covers `f64` rounding of scale bookkeeping along different paths).
const SCALE_TOLERANCE: f64 = 1e-12;

/// The smallest integer factor accepted when aligning a scale by "multiply by an integer, then
/// rescale" (the alignment's relative error is at most `1 / (2·factor)`).
const MIN_ALIGN_FACTOR: f64 = (1u64 << 20) as f64;

/// [`Error::ScaleOverflow`] unless a message at `scale` (and one bit of sign) fits below
/// the modulus of `level`.
pub(crate) fn check_scale_fits(
    params: &crate::params::CkksParameters,
    op: &'static str,
    scale: f64,
    level: usize,
) -> Result<()> {
    let log_q = params.log_q_at_level(level);
    let log_scale = scale.log2();
    if !scale.is_finite() || log_scale + 1.0 >= log_q {
        return Err(Error::ScaleOverflow {
            op,
            log_scale,
            log_modulus: log_q,
        });
    }
    Ok(())
}

pub(crate) fn scales_match(a: f64, b: f64) -> bool {
    (a / b - 1.0).abs() <= SCALE_TOLERANCE
}

/// A ciphertext that is either the caller's or an aligned (lowered) copy.
type Aligned<'a> = crate::rlwe::Aligned<'a, Ciphertext>;

/// Evaluates CKKS operations. Immutable and `Send + Sync`: one evaluator serves many threads.
///
/// **Scale management.** Every ciphertext carries its level and scale, and the recorded scale is
/// the true one. In the default *auto-rescale* mode every multiplication (by a ciphertext,
/// plaintext or non-integer constant) is followed by a rescaling, and every product of operands
/// at one level and scale `s` lands on the same scale `s²/q_ℓ` (a constant is encoded at `s`
/// for that): a level of a circuit built from fresh ciphertexts has one scale (`Δ` at the top,
/// then `Δ_{ℓ−1} = Δ_ℓ²/q_ℓ`), so its additions never need aligning. In *manual* mode
/// ([`Evaluator::with_auto_rescale`]`(false)`) nothing is rescaled unless asked
/// ([`Evaluator::rescale`]). In both modes an addition of operands at different levels brings
/// the higher one down and onto the other's scale with one rescaling (multiply by an integer
/// `≈ target·q/scale`, then rescale: relative error `≤ 2^-21`, typically `2^-41`), which spends
/// no level the result would have kept. Operands at the **same level** with different scales are
/// reconciled without spending a level when the ratio of their scales is an integer (the smaller
/// is multiplied by it, exactly); otherwise the addition is an [`Error::ScaleMismatch`], never a
/// silently spent level: bring one operand onto the other's scale yourself
/// ([`Evaluator::drop_to_level_and_scale`], [`Evaluator::mul_const_with_scale`]), or encode
/// plaintexts at the ciphertext's level and scale ([`Encoder::encode_at`](super::Encoder::encode_at)).
/// Polynomial evaluation and linear transforms choose their intermediate scales so that their
/// results land exactly on the requested scale.
///
/// **Operations.** [`add`](Evaluator::add)/[`sub`](Evaluator::sub)/[`neg`](Evaluator::neg) of
/// ciphertexts, plaintexts ([`add_plain`](Evaluator::add_plain), ...) and constants
/// ([`add_const`](Evaluator::add_const), ...); multiplication by a plaintext, a constant, an
/// integer, a ciphertext with or without relinearisation, squaring; rescaling, dropping levels;
/// rotations, conjugation and hoisted rotations; and products whose rescaling does not depend on
/// the mode: [`mul_relin`](Evaluator::mul_relin) (never rescaled),
/// [`mul_relin_rescale`](Evaluator::mul_relin_rescale) and
/// [`square_relin_rescale`](Evaluator::square_relin_rescale) (always rescaled).
///
/// **Bootstrapping (opt-in).** With a [`Bootstrapper`](super::bootstrap::Bootstrapper)
/// ([`Evaluator::with_bootstrapper`]), an operand at level 0 of an operation that would rescale
/// it (the products above that rescale, and polynomial evaluation without enough levels) is
/// refreshed first; [`Evaluator::bootstraps`] counts the refreshes. Without one, running out of
/// levels is an [`Error::LevelUnderflow`].
pub struct Evaluator {
    ctx: CkksContext,
    pub(crate) keys: EvaluationKeys,
    auto_rescale: bool,
    /// Automatic bootstrapping ([`Evaluator::with_bootstrapper`]); `None`: off.
    auto_bootstrap: Option<auto_bootstrap::AutoBootstrap>,
}

impl Evaluator {
    /// An evaluator without keys, in auto-rescale mode.
    pub fn new(ctx: &CkksContext) -> Self {
        Self {
            ctx: ctx.clone(),
            keys: EvaluationKeys::default(),
            auto_rescale: true,
            auto_bootstrap: None,
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

    /// Adds Galois keys (needed by rotations and conjugation).
    pub fn with_galois_keys(mut self, keys: impl Into<Arc<GaloisKeys>>) -> Result<Self> {
        self.keys.set_galois_keys(self.ctx.rlwe(), keys.into())?;
        Ok(self)
    }

    /// Turns auto-rescaling on (the default) or off (manual mode).
    pub fn with_auto_rescale(mut self, on: bool) -> Self {
        self.auto_rescale = on;
        self
    }

    /// Whether auto-rescaling is on.
    pub fn auto_rescale(&self) -> bool {
        self.auto_rescale
    }

    /// The context.
    pub fn context(&self) -> &CkksContext {
        &self.ctx
    }

    // ------------------------------------------------------------------ helpers

    fn ring(&self) -> &RnsRing {
        self.ctx.ring()
    }

    pub(crate) fn check(&self, op: &'static str, ct: &Ciphertext) -> Result<()> {
        self.ctx.rlwe().check_id(op, ct.params_id)?;
        check_degree(
            op,
            ct.parts.len(),
            "a CKKS ciphertext has 2 components (3 before relinearization)",
        )
    }

    fn check_pair(&self, op: &'static str, a: &Ciphertext, b: &Ciphertext) -> Result<()> {
        self.check(op, a)?;
        self.check(op, b)?;
        if a.slots != b.slots {
            return Err(Error::SlotMismatch {
                expected: a.slots,
                found: b.slots,
            });
        }
        Ok(())
    }

    fn check_plain(&self, op: &'static str, ct: &Ciphertext, pt: &Plaintext) -> Result<()> {
        self.check(op, ct)?;
        self.ctx.rlwe().check_id(op, pt.params_id)?;
        if ct.slots != pt.slots {
            return Err(Error::SlotMismatch {
                expected: ct.slots,
                found: pt.slots,
            });
        }
        Ok(())
    }

    /// Fails unless a message of magnitude about 1 at `scale` fits below `Q_level / 2`.
    pub(crate) fn check_fits(&self, op: &'static str, scale: f64, level: usize) -> Result<()> {
        check_scale_fits(self.ctx.params(), op, scale, level)
    }

    fn underflow(op: &'static str, ct: &Ciphertext, needed: usize) -> Result<()> {
        if ct.level() < needed {
            return Err(Error::LevelUnderflow {
                op,
                level: ct.level(),
                needed,
            });
        }
        Ok(())
    }

    pub(crate) fn wrap(&self, template: &Ciphertext, parts: Vec<Poly>, scale: f64) -> Ciphertext {
        Ciphertext {
            parts,
            scale,
            slots: template.slots,
            params_id: template.params_id,
            seed: None,
        }
    }

    /// The constant polynomial `re + im·X^{N/2}` (which encodes `re + i·im` in every slot) in
    /// NTT form at `level`.
    pub(crate) fn const_poly(&self, level: usize, re: i128, im: i128) -> Result<Poly> {
        let ring = self.ring();
        let n = ring.n();
        let mut coeffs = vec![0i128; n];
        coeffs[0] = re;
        coeffs[n / 2] = im;
        let shape = ring.shape_q(self.ctx.params().q_limbs_at_level(level));
        let mut p = ring.from_i128(self.ctx.device(), &coeffs, shape)?;
        ring.ntt_forward(&mut p)?;
        Ok(p)
    }

    pub(crate) fn round_i128(op: &'static str, x: f64) -> Result<i128> {
        if !x.is_finite() || x.abs() >= 2f64.powi(126) {
            return Err(Error::InvalidInput(format!(
                "`{op}`: the scaled constant {x:e} does not fit in 126 bits; use a smaller \
                 constant or scale"
            )));
        }
        Ok(x.round() as i128)
    }

    // ------------------------------------------------------------------ levels and scales

    /// Runs `f` on the CPU pool with its workers polling through the operation
    /// ([`crate::backend::on_pool`]): each CPU primitive is a parallel loop, and from outside
    /// the pool every one of them would hand its work over and put the caller to sleep. On a GPU
    /// `f` runs directly. The words are the same either way.
    pub(crate) fn on_pool<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        crate::backend::on_pool(self.ctx.device(), f)
    }

    /// Divides by the last prime of the level: level − 1, scale / `q_level`.
    ///
    /// Errors: [`Error::LevelUnderflow`] at level 0.
    pub fn rescale(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.check("rescale", ct)?;
        Self::underflow("rescale", ct, 1)?;
        let q_last = self.ctx.params().q_primes()[ct.level()] as f64;
        let parts = self.on_pool(|| self.ring().rescale_many(&ct.parts))?;
        Ok(self.wrap(ct, parts, ct.scale / q_last))
    }

    /// Drops limbs down to `level` (modulus switching without rescaling: the scale is kept).
    pub fn drop_to_level(&self, ct: &Ciphertext, level: usize) -> Result<Ciphertext> {
        let limbs = self.drop_target_limbs(ct, level)?;
        let parts = ct
            .parts
            .iter()
            .map(|p| self.ring().drop_q_limbs(p, limbs))
            .collect::<Result<Vec<_>>>()?;
        Ok(self.wrap(ct, parts, ct.scale))
    }

    /// Brings `ct` down to `level` (strictly below its own) **and** to `scale`: drops to
    /// `level + 1`, multiplies by the integer `c = round(scale · q_{level+1} / ct.scale)` and
    /// rescales. The recorded scale is `scale` (the true one differs by a relative
    /// `≤ 1/(2c)`).
    ///
    /// Errors: [`Error::LevelUnderflow`] if `level ≥ ct.level()`, [`Error::InvalidScale`] for a
    /// target scale below 1, zero, negative, NaN or infinite, [`Error::InvalidInput`] if
    /// `c < 2^20` (the alignment would lose precision) or `c ≥ 2^126`.
    pub fn drop_to_level_and_scale(
        &self,
        ct: &Ciphertext,
        level: usize,
        scale: f64,
    ) -> Result<Ciphertext> {
        const OP: &str = "drop_to_level_and_scale";
        self.check(OP, ct)?;
        super::encoder::check_scale(OP, scale)?;
        if level >= ct.level() {
            return Err(Error::LevelUnderflow {
                op: OP,
                level: ct.level(),
                needed: 1,
            });
        }
        let q = self.ctx.params().q_primes()[level + 1] as f64;
        let c = scale * q / ct.scale;
        if c.is_nan() || c < MIN_ALIGN_FACTOR {
            return Err(Error::InvalidInput(format!(
                "{OP}: cannot bring scale 2^{:.3} to 2^{:.3} with one rescaling (factor {c:e} is \
                 below 2^20); rescale the operand first",
                ct.scale.log2(),
                scale.log2()
            )));
        }
        let k = Self::round_i128(OP, c)?;
        let tmp = self.drop_to_level(ct, level + 1)?;
        let scalars = self.ring().scalar_from_i128(k, &tmp.parts[0].shape());
        let parts = tmp
            .parts
            .iter()
            .map(|p| {
                let mut p = p.try_clone()?;
                self.ring().mul_scalar_assign(&mut p, &scalars)?;
                self.ring().rescale(&p)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(self.wrap(ct, parts, scale))
    }

    /// Aligns two operands of an addition (see the type docs).
    fn align_add<'a>(
        &self,
        op: &'static str,
        a: &'a Ciphertext,
        b: &'a Ciphertext,
    ) -> Result<(Aligned<'a>, Aligned<'a>)> {
        let (la, lb) = (a.level(), b.level());
        if la == lb {
            if scales_match(a.scale, b.scale) {
                return Ok((Aligned::Borrowed(a), Aligned::Borrowed(b)));
            }
            // An integer ratio of scales: multiply the smaller by it (exact, no level).
            let (hi, lo) = if a.scale > b.scale { (a, b) } else { (b, a) };
            let ratio = hi.scale / lo.scale;
            let k = ratio.round();
            if k >= 2.0 && k < 2f64.powi(62) && scales_match(lo.scale * k, hi.scale) {
                let raised = self.mul_int(lo, k as i64)?;
                let raised = Ciphertext {
                    scale: hi.scale,
                    ..raised
                };
                return Ok(if a.scale > b.scale {
                    (Aligned::Borrowed(a), Aligned::Owned(raised))
                } else {
                    (Aligned::Owned(raised), Aligned::Borrowed(b))
                });
            }
            return Err(Error::ScaleMismatch {
                op,
                lhs_log_scale: a.scale.log2(),
                rhs_log_scale: b.scale.log2(),
            });
        }
        let bring_down = |hi: &Ciphertext, lo: &Ciphertext| {
            if scales_match(hi.scale, lo.scale) {
                self.drop_to_level(hi, lo.level())
            } else {
                self.drop_to_level_and_scale(hi, lo.level(), lo.scale)
            }
        };
        if la > lb {
            Ok((Aligned::Owned(bring_down(a, b)?), Aligned::Borrowed(b)))
        } else {
            Ok((Aligned::Borrowed(a), Aligned::Owned(bring_down(b, a)?)))
        }
    }

    /// Brings the higher operand of a product down to the other's level. With `level_scales`
    /// (auto-rescale [`Evaluator::mul`]) an operand at its level's scale ([`crate::params::CkksParameters::scale_at_level`]) is
    /// brought onto the lower level's scale with the one rescaling the lost levels allow, so the
    /// product lands on the scale of its level too; otherwise (manual mode, the mode-independent
    /// products, or another scale) levels are dropped and the scale kept.
    fn align_mul<'a>(
        &self,
        a: &'a Ciphertext,
        b: &'a Ciphertext,
        level_scales: bool,
    ) -> Result<(Aligned<'a>, Aligned<'a>)> {
        let (la, lb) = (a.level(), b.level());
        let bring_down = |hi: &Ciphertext, level: usize| {
            let params = self.ctx.params();
            if level_scales {
                if let (Some(own), Some(target)) = (
                    params.scale_at_level(hi.level()),
                    params.scale_at_level(level),
                ) {
                    if scales_match(hi.scale, own) && !scales_match(own, target) {
                        return self.drop_to_level_and_scale(hi, level, target);
                    }
                }
            }
            self.drop_to_level(hi, level)
        };
        Ok(match la.cmp(&lb) {
            std::cmp::Ordering::Equal => (Aligned::Borrowed(a), Aligned::Borrowed(b)),
            std::cmp::Ordering::Greater => {
                (Aligned::Owned(bring_down(a, lb)?), Aligned::Borrowed(b))
            }
            std::cmp::Ordering::Less => (Aligned::Borrowed(a), Aligned::Owned(bring_down(b, la)?)),
        })
    }

    fn maybe_rescale(&self, ct: Ciphertext) -> Result<Ciphertext> {
        if self.auto_rescale {
            self.rescale(&ct)
        } else {
            Ok(ct)
        }
    }

    // ------------------------------------------------------------------ additive

    /// `a + b` (levels and scales aligned automatically; a 3-component operand gives a
    /// 3-component result).
    pub fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.check_pair("add", a, b)?;
        let (a, b) = self.align_add("add", a, b)?;
        let ring = self.ring();
        // One pass per part (read a, read b, write the sum), not a copy followed by an in-place add.
        let mut parts = Vec::with_capacity(a.parts.len().max(b.parts.len()));
        for (pa, pb) in a.parts.iter().zip(&b.parts) {
            parts.push(ring.add(pa, pb)?);
        }
        let longer = if a.parts.len() >= b.parts.len() {
            &a.parts
        } else {
            &b.parts
        };
        for p in &longer[parts.len()..] {
            parts.push(p.try_clone()?);
        }
        Ok(self.wrap(&a, parts, a.scale))
    }

    /// `a - b` (aligned like [`Evaluator::add`]).
    pub fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.check_pair("sub", a, b)?;
        let (a, b) = self.align_add("sub", a, b)?;
        let ring = self.ring();
        let mut parts = Vec::with_capacity(a.parts.len().max(b.parts.len()));
        for (pa, pb) in a.parts.iter().zip(&b.parts) {
            parts.push(ring.sub(pa, pb)?);
        }
        // At most one of the two tails is non-empty (a 3-component operand's third part).
        let common = parts.len();
        for pa in &a.parts[common..] {
            parts.push(pa.try_clone()?);
        }
        for pb in &b.parts[common..] {
            let mut p = pb.try_clone()?;
            ring.neg_assign(&mut p)?;
            parts.push(p);
        }
        Ok(self.wrap(&a, parts, a.scale))
    }

    /// `-a`.
    pub fn neg(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.check("neg", a)?;
        let mut parts = clone_polys(&a.parts)?;
        for p in &mut parts {
            self.ring().neg_assign(p)?;
        }
        Ok(self.wrap(a, parts, a.scale))
    }

    fn plain_operand<'a>(
        &self,
        op: &'static str,
        ct: &'a Ciphertext,
        pt: &Plaintext,
    ) -> Result<Aligned<'a>> {
        self.check_plain(op, ct, pt)?;
        if pt.level() < ct.level() {
            Ok(Aligned::Owned(self.drop_to_level(ct, pt.level())?))
        } else {
            Ok(Aligned::Borrowed(ct))
        }
    }

    /// `ct + pt` (the plaintext must have the ciphertext's scale; a plaintext at a higher level is
    /// read at the ciphertext's level).
    pub fn add_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.add_sub_plain("add_plain", ct, pt, false)
    }

    /// `ct - pt` (as [`Evaluator::add_plain`]).
    pub fn sub_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.add_sub_plain("sub_plain", ct, pt, true)
    }

    fn add_sub_plain(
        &self,
        op: &'static str,
        ct: &Ciphertext,
        pt: &Plaintext,
        sub: bool,
    ) -> Result<Ciphertext> {
        let ct = self.plain_operand(op, ct, pt)?;
        if !scales_match(ct.scale, pt.scale) {
            return Err(Error::ScaleMismatch {
                op,
                lhs_log_scale: ct.scale.log2(),
                rhs_log_scale: pt.scale.log2(),
            });
        }
        let mut parts = clone_polys(&ct.parts)?;
        if sub {
            self.ring().sub_assign(&mut parts[0], &pt.poly)?;
        } else {
            self.ring().add_assign(&mut parts[0], &pt.poly)?;
        }
        Ok(self.wrap(&ct, parts, ct.scale))
    }

    /// `ct + c` in every slot (real constant).
    pub fn add_const(&self, ct: &Ciphertext, c: f64) -> Result<Ciphertext> {
        self.check("add_const", ct)?;
        let k = Self::round_i128("add_const", c * ct.scale)?;
        let mut parts = clone_polys(&ct.parts)?;
        let scalars = self.ring().scalar_from_i128(k, &parts[0].shape());
        self.ring().add_scalar_assign(&mut parts[0], &scalars)?;
        Ok(self.wrap(ct, parts, ct.scale))
    }

    /// `ct + c` in every slot (complex constant).
    pub fn add_const_complex(&self, ct: &Ciphertext, c: Complex64) -> Result<Ciphertext> {
        self.check("add_const_complex", ct)?;
        let re = Self::round_i128("add_const_complex", c.re * ct.scale)?;
        let im = Self::round_i128("add_const_complex", c.im * ct.scale)?;
        let k = self.const_poly(ct.level(), re, im)?;
        let mut parts = clone_polys(&ct.parts)?;
        self.ring().add_assign(&mut parts[0], &k)?;
        Ok(self.wrap(ct, parts, ct.scale))
    }

    /// `ct - c` in every slot (real constant).
    pub fn sub_const(&self, ct: &Ciphertext, c: f64) -> Result<Ciphertext> {
        self.add_const(ct, -c)
    }

    // ------------------------------------------------------------------ multiplicative

    /// `k · ct` for an integer `k` (no scale change, no level used).
    pub fn mul_int(&self, ct: &Ciphertext, k: i64) -> Result<Ciphertext> {
        self.check("mul_int", ct)?;
        let mut parts = clone_polys(&ct.parts)?;
        let scalars = self.ring().scalar_from_i128(k as i128, &parts[0].shape());
        for p in &mut parts {
            self.ring().mul_scalar_assign(p, &scalars)?;
        }
        Ok(self.wrap(ct, parts, ct.scale))
    }

    /// `c · ct` for a real constant `c`. Auto-rescale: `c` is encoded at `ct`'s scale `s` and
    /// the product rescaled, so the result lands on `s²/q_ℓ` one level down, where a product of
    /// two ciphertexts at scale `s` lands (see the type docs). Manual: `c` is encoded at the
    /// default scale `Δ` and the result has scale `Δ·s`, not rescaled.
    pub fn mul_const(&self, ct: &Ciphertext, c: f64) -> Result<Ciphertext> {
        let ct = &*self.refreshed("mul_const", ct, self.auto_rescale)?;
        self.check("mul_const", ct)?;
        if self.auto_rescale {
            Self::underflow("mul_const", ct, 1)?;
            let out = self.mul_const_with_scale(ct, c, ct.scale)?;
            self.rescale(&out)
        } else {
            self.mul_const_with_scale(ct, c, self.ctx.params().default_scale())
        }
    }

    /// `c · ct` with `c` encoded as `round(c · scale)`: the result's scale is `ct.scale · scale`,
    /// and it is never rescaled (in either mode).
    ///
    /// Errors: [`Error::InvalidScale`] for a scale below 1, zero, negative, NaN or infinite;
    /// [`Error::ScaleOverflow`] when the product's scale does not fit below the modulus.
    pub fn mul_const_with_scale(&self, ct: &Ciphertext, c: f64, scale: f64) -> Result<Ciphertext> {
        let (k, new_scale) = self.mul_const_with_scale_checks(ct, c, scale)?;
        let mut parts = clone_polys(&ct.parts)?;
        let scalars = self.ring().scalar_from_i128(k, &parts[0].shape());
        for p in &mut parts {
            self.ring().mul_scalar_assign(p, &scalars)?;
        }
        Ok(self.wrap(ct, parts, new_scale))
    }

    /// `c · ct` for a complex constant `c` (scale handling as [`Evaluator::mul_const`]).
    pub fn mul_const_complex(&self, ct: &Ciphertext, c: Complex64) -> Result<Ciphertext> {
        const OP: &str = "mul_const_complex";
        let ct = &*self.refreshed(OP, ct, self.auto_rescale)?;
        self.check(OP, ct)?;
        let scale = if self.auto_rescale {
            Self::underflow(OP, ct, 1)?;
            ct.scale
        } else {
            self.ctx.params().default_scale()
        };
        let new_scale = ct.scale * scale;
        self.check_fits(OP, new_scale, ct.level())?;
        let re = Self::round_i128(OP, c.re * scale)?;
        let im = Self::round_i128(OP, c.im * scale)?;
        let k = self.const_poly(ct.level(), re, im)?;
        let mut parts = clone_polys(&ct.parts)?;
        for p in &mut parts {
            self.ring().mul_assign(p, &k)?;
        }
        self.maybe_rescale(self.wrap(ct, parts, new_scale))
    }

    /// `ct · pt` (scale `ct.scale · pt.scale`; rescaled in auto mode).
    pub fn mul_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        const OP: &str = "mul_plain";
        let ct = &*self.refreshed(
            OP,
            ct,
            self.auto_rescale && self.plaintext_above_bootstrap_input(pt.level()),
        )?;
        let ct = self.plain_operand(OP, ct, pt)?;
        if self.auto_rescale {
            Self::underflow(OP, &ct, 1)?;
        }
        let scale = ct.scale * pt.scale;
        self.check_fits(OP, scale, ct.level())?;
        let mut parts = clone_polys(&ct.parts)?;
        for p in &mut parts {
            self.ring().mul_assign(p, &pt.poly)?;
        }
        self.maybe_rescale(self.wrap(&ct, parts, scale))
    }

    /// The tensor product `(a_0 b_0, a_0 b_1 + a_1 b_0, a_1 b_1)` of two 2-component
    /// ciphertexts (levels aligned), with the scale checks.
    fn tensor(
        &self,
        op: &'static str,
        a: &Ciphertext,
        b: &Ciphertext,
        rescale_after: bool,
    ) -> Result<Ciphertext> {
        self.check_pair(op, a, b)?;
        check_two_components(op, a.parts.len())?;
        check_two_components(op, b.parts.len())?;
        // Only the mode-dependent product lands on the level's scale; the others drop levels.
        let (a, b) = self.align_mul(a, b, op == "mul" && self.auto_rescale)?;
        if rescale_after {
            Self::underflow(op, &a, 1)?;
        }
        let scale = a.scale * b.scale;
        self.check_fits(op, scale, a.level())?;
        let ring = self.ring();
        let [d0, d1, d2] = ring.tensor([&a.parts[0], &a.parts[1]], [&b.parts[0], &b.parts[1]])?;
        Ok(self.wrap(&a, vec![d0, d1, d2], scale))
    }

    /// `(a_0², 2 a_0 a_1, a_1²)`.
    fn tensor_square(
        &self,
        op: &'static str,
        a: &Ciphertext,
        rescale_after: bool,
    ) -> Result<Ciphertext> {
        self.check(op, a)?;
        check_two_components(op, a.parts.len())?;
        if rescale_after {
            Self::underflow(op, a, 1)?;
        }
        let scale = a.scale * a.scale;
        self.check_fits(op, scale, a.level())?;
        let ring = self.ring();
        let parts = [&a.parts[0], &a.parts[1]];
        let [d0, d1, d2] = ring.tensor(parts, parts)?;
        Ok(self.wrap(a, vec![d0, d1, d2], scale))
    }

    /// Relinearises a 3-component ciphertext to 2 components (a 2-component one is copied).
    pub fn relinearize(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.check("relinearize", ct)?;
        if ct.parts.len() == 2 {
            return ct.try_clone();
        }
        let rlk = self.keys.rlk("relinearize")?;
        let parts = self.on_pool(|| self.ctx.rlwe().relinearize(&ct.parts, rlk))?;
        Ok(self.wrap(ct, parts, ct.scale))
    }

    /// Relinearises a 3-component `t` and, if `rescale`, rescales it: the two merged into one
    /// key switching whose ModDown and rescale share their NTTs
    /// ([`crate::rlwe::RlweContext::relinearize_rescale`]), bit-identical to
    /// [`Evaluator::relinearize`] then [`Evaluator::rescale`].
    pub(crate) fn relinearize_maybe_rescale(
        &self,
        t: &Ciphertext,
        rescale: bool,
    ) -> Result<Ciphertext> {
        if !rescale || t.parts.len() != 3 {
            let r = self.relinearize(t)?;
            return if rescale { self.rescale(&r) } else { Ok(r) };
        }
        self.check("relinearize", t)?;
        Self::underflow("rescale", t, 1)?;
        let rlk = self.keys.rlk("relinearize")?;
        let q_last = self.ctx.params().q_primes()[t.level()] as f64;
        let parts = self.on_pool(|| self.ctx.rlwe().relinearize_rescale(&t.parts, rlk))?;
        Ok(self.wrap(t, parts, t.scale / q_last))
    }

    /// `a · b` with relinearisation (rescaled in auto mode).
    pub fn mul(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.keys.rlk("mul")?;
        let (a, b) = self.refreshed_pair("mul", a, b, self.auto_rescale)?;
        let (a, b) = (&*a, &*b);
        self.on_pool(|| {
            let t = self.tensor("mul", a, b, self.auto_rescale)?;
            self.relinearize_maybe_rescale(&t, self.auto_rescale)
        })
    }

    /// `a · b` without relinearisation: a 3-component ciphertext at scale `a.scale · b.scale`,
    /// **never rescaled** (in either mode), to be summed with others, relinearised once
    /// ([`Evaluator::relinearize`]) and then rescaled ([`Evaluator::rescale`]). Rescaling before
    /// relinearising would multiply the rounding error by `s²` (about 6 bits lost at N = 2^13).
    pub fn mul_no_relin(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.on_pool(|| self.tensor("mul_no_relin", a, b, false))
    }

    /// `a²` with relinearisation (rescaled in auto mode).
    pub fn square(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.keys.rlk("square")?;
        let a = &*self.refreshed("square", a, self.auto_rescale)?;
        self.on_pool(|| {
            let t = self.tensor_square("square", a, self.auto_rescale)?;
            self.relinearize_maybe_rescale(&t, self.auto_rescale)
        })
    }

    // ------------------------------------------------------------------ mode-independent products

    /// Multiply and relinearise, never rescaled (in either mode).
    pub fn mul_relin(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.keys.rlk("mul_relin")?;
        self.on_pool(|| {
            let t = self.tensor("mul_relin", a, b, false)?;
            self.relinearize(&t)
        })
    }

    /// Multiply, relinearise and rescale (in either mode).
    pub fn mul_relin_rescale(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.keys.rlk("mul_relin_rescale")?;
        let (a, b) = self.refreshed_pair("mul_relin_rescale", a, b, true)?;
        let (a, b) = (&*a, &*b);
        self.on_pool(|| {
            let t = self.tensor("mul_relin_rescale", a, b, true)?;
            self.relinearize_maybe_rescale(&t, true)
        })
    }

    /// Square, relinearise and rescale (in either mode).
    pub fn square_relin_rescale(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.keys.rlk("square_relin_rescale")?;
        let a = &*self.refreshed("square_relin_rescale", a, true)?;
        self.on_pool(|| {
            let t = self.tensor_square("square_relin_rescale", a, true)?;
            self.relinearize_maybe_rescale(&t, true)
        })
    }

    // ------------------------------------------------------------------ rotations

    /// Rotates the slots left by `step` (right for negative `step`).
    ///
    /// Errors: [`Error::MissingRotationKey`] if the Galois key of `step` was not given.
    pub fn rotate(&self, ct: &Ciphertext, step: i64) -> Result<Ciphertext> {
        Ok(self.rotate_hoisted(ct, &[step])?.remove(0))
    }

    /// Rotations of one ciphertext by several steps sharing one ModUp (hoisting; one rotation
    /// with a key takes the unshared, fused path: `RlweContext::automorphisms`); the results are
    /// bit-for-bit those of [`Evaluator::rotate`].
    pub fn rotate_hoisted(&self, ct: &Ciphertext, steps: &[i64]) -> Result<Vec<Ciphertext>> {
        self.check("rotate", ct)?;
        check_two_components("rotate", ct.parts.len())?;
        let rlwe = self.ctx.rlwe();
        let plan = self.keys.rotation_plan(rlwe, steps)?;
        self.on_pool(|| {
            rlwe.automorphisms(&ct.parts, &plan)?
                .into_iter()
                .map(|parts| match parts {
                    None => ct.try_clone(),
                    Some(parts) => Ok(self.wrap(ct, parts, ct.scale)),
                })
                .collect()
        })
    }

    /// Complex conjugation of every slot.
    ///
    /// Errors: [`Error::MissingConjugationKey`] without the conjugation key.
    pub fn conjugate(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.check("conjugate", ct)?;
        check_two_components("conjugate", ct.parts.len())?;
        let rlwe = self.ctx.rlwe();
        let g = rlwe.galois_element_for_conjugation();
        let key = self.keys.galois_key(g, None)?;
        let parts = self.on_pool(|| rlwe.automorphism(&ct.parts, g, key))?;
        Ok(self.wrap(ct, parts, ct.scale))
    }
}
