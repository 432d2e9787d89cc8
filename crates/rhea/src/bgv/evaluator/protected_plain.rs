//! The evaluator's plaintext operations for a plaintext it cannot read: a protected plaintext
//! ([`crate::bgv::ProtectedPlaintext`], issue 38) is `t^{-1}·m mod Q_ℓ` held on the GPU as
//! LITE ciphertext, and the only thing a kernel can do with it is add it to, or multiply it
//! into, a plain polynomial (`lite_fhe_plain_add` / `_mul`), decrypting it in registers.
//!
//! The bookkeeping is [`Evaluator::add_plain`]'s and [`Evaluator::mul_plain`]'s, shared here
//! rather than copied into the façade: the ciphertext brought down to the plaintext's level (a
//! plaintext at a higher level read as its prefix, which for `t^{-1}·m` is `t^{-1}·m` at the
//! lower level: both are per-limb), the factor balancing, the noise bound and its check, the
//! modulus switch of auto mode. Only the step that reads the plaintext differs, and it is a
//! closure. What the unprotected path computes with `m` or with a scaled `t^{-1}` that the
//! kernels cannot apply is recomputed around that step on the ciphertext's (public) words, by
//! per-limb scalars: every result is the same canonical residue, so the same words.

use super::*;

/// What the evaluator knows of a plaintext it cannot read.
pub(in crate::bgv) struct PlainInfo {
    /// The plaintext's level.
    pub(in crate::bgv) level: usize,
    /// `log2` of the noise model's bound on `m`.
    pub(in crate::bgv) log_norm: f64,
    /// The id of its parameters.
    pub(in crate::bgv) params_id: u64,
}

impl Evaluator {
    /// `ct` checked, with the plaintext's parameters, and brought to a level not above the
    /// plaintext's (as [`Evaluator::add_plain`] and [`Evaluator::mul_plain`] do).
    fn align_lifted<'a>(
        &self,
        op: &'static str,
        ct: &'a Ciphertext,
        pt: &PlainInfo,
    ) -> Result<Aligned<'a>> {
        self.check(op, ct)?;
        self.ctx.rlwe().check_id(op, pt.params_id)?;
        if ct.level() > pt.level {
            Ok(Aligned::Owned(self.lower_to(ct, pt.level)?))
        } else {
            Ok(Aligned::Borrowed(ct))
        }
    }

    /// `ct + pt` for a plaintext reached only through `add`, which adds `t^{-1}·m` (over the
    /// polynomial's limbs) to a polynomial: the words, factor and noise bound of
    /// [`Evaluator::add_plain`].
    ///
    /// [`Evaluator::add_plain`] computes `r_c·ĉ_0 + (t^{-1}·r_p mod q_i)·m` (`r_c·f ≡ r_p (mod
    /// t)`, `(1, 1)` for a factor `f = 1`). `add` cannot scale the plaintext by `r_p`, so the
    /// ciphertext side is scaled around it instead: `ĉ_0 ← (r_c·r_p^{-1} mod q_i)·ĉ_0`, then
    /// `+ t^{-1}·m`, then `× r_p`, which is `r_c·ĉ_0 + r_p·t^{-1}·m (mod q_i)`, the same
    /// canonical residue (`0 < |r_p| < t < q_i`, so `r_p` is invertible modulo every prime).
    /// For `f = 1` (fresh ciphertexts, and whenever the factors agree) it is one kernel.
    pub(in crate::bgv) fn add_lifted_plain(
        &self,
        op: &'static str,
        ct: &Ciphertext,
        pt: &PlainInfo,
        add: impl FnOnce(&mut Poly) -> Result<()>,
    ) -> Result<Ciphertext> {
        let ct = self.align_lifted(op, ct, pt)?;
        let t = &self.ctx.tables.t;
        let (rc, rp) = if ct.factor == 1 {
            (1, 1)
        } else {
            balance(t.value(), t.inv(ct.factor)?, ct.log_noise, pt.log_norm)
        };
        let log_noise = log_add(ct.log_noise + log_abs(rc), pt.log_norm + log_abs(rp));
        self.check_bound(op, log_noise, ct.level())?;
        let mut parts = clone_polys(&ct.parts)?;
        self.scale_parts(&mut parts[1..], rc)?;
        if rp == 1 {
            self.scale_parts(&mut parts[..1], rc)?;
            add(&mut parts[0])?;
        } else {
            let limbs = parts[0].q_limbs();
            let shape = self.ring().shape_q(limbs);
            let rp_mod_q = self.int_scalars(rp, limbs);
            let pre = (0..limbs)
                .map(|i| {
                    let q = self.ring().modulus(&shape, i);
                    Ok(q.mul(q.reduce_i64(rc), q.inv(rp_mod_q[i])?))
                })
                .collect::<Result<Vec<u64>>>()?;
            self.ring().mul_scalar_assign(&mut parts[0], &pre)?;
            add(&mut parts[0])?;
            self.ring().mul_scalar_assign(&mut parts[0], &rp_mod_q)?;
        }
        let factor = t.mul(ct.factor, t.reduce_i64(rc));
        Ok(self.wrap(&ct, parts, factor, log_noise))
    }

    /// `ct · pt` for a plaintext reached only through `mul`, which multiplies a polynomial by
    /// `t^{-1}·m` (over its limbs): the words, factor and noise bound of
    /// [`Evaluator::mul_plain`] (then one modulus switch in auto mode).
    ///
    /// [`Evaluator::mul_plain`] computes `ĉ_i·m`; `mul` gives `ĉ_i·t^{-1}·m`, which is then
    /// multiplied by `t mod q_i`: the same canonical residues, one scalar pass per component
    /// more than the unprotected path (on ciphertext words, which are public).
    pub(in crate::bgv) fn mul_lifted_plain(
        &self,
        op: &'static str,
        ct: &Ciphertext,
        pt: &PlainInfo,
        mut mul: impl FnMut(&mut Poly) -> Result<()>,
    ) -> Result<Ciphertext> {
        let ct = self.align_lifted(op, ct, pt)?;
        let log_noise = ct.log_noise + pt.log_norm;
        self.check_bound(op, log_noise, ct.level())?;
        let mut parts = clone_polys(&ct.parts)?;
        let t_mod_q = self.ctx.t_scalars(parts[0].q_limbs());
        for p in &mut parts {
            mul(p)?;
            self.ring().mul_scalar_assign(p, &t_mod_q)?;
        }
        let out = self.wrap(&ct, parts, ct.factor, log_noise);
        self.maybe_switch(out)
    }
}
