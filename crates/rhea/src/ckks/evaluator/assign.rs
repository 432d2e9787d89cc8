//! The evaluator's in-place forms (`*_assign`): the result replaces the first operand.
//!
//! Where the operation allows it (additions, negation, multiplication by constants, integers and
//! plaintexts, dropping levels) the first operand's polynomials are updated in place, without
//! the copy the value-returning form makes; a polynomial evaluation or a linear transform that
//! accumulates into one ciphertext then allocates nothing per step. Operations that produce new
//! polynomials anyway (products with relinearisation, rescaling, rotations) replace the operand
//! with their result. Every form gives exactly the words of its value-returning twin.
//!
//! Errors leave the operand unchanged: every check (parameters, slots, levels, scales, devices)
//! runs before the first polynomial is touched.

use super::*;

impl Evaluator {
    /// `a += b` (as [`Evaluator::add`]; in place when `b` is at `a`'s level and scale and has
    /// no more components).
    ///
    /// ```
    /// # use rhea::ckks::*; use rhea::params::CkksParametersLiteral; use rhea::Device;
    /// # let params = CkksParametersLiteral::n13_logqp200_levels2().build()?;
    /// # let ctx = CkksContext::new(&params, Device::Cpu)?;
    /// # let mut keygen = KeyGenerator::from_seed(&ctx, [1; 32]);
    /// # let sk = keygen.secret_key()?;
    /// # let (encoder, encryptor, decryptor) =
    /// #     (Encoder::new(&ctx)?, Encryptor::with_secret_key(&ctx, &sk)?, Decryptor::new(&ctx, &sk)?);
    /// let eval = Evaluator::new(&ctx);
    /// let mut acc = encryptor.encrypt(&encoder.encode(&[1.0, 2.0])?)?;
    /// let x = encryptor.encrypt(&encoder.encode(&[0.5, 0.25])?)?;
    /// for _ in 0..3 {
    ///     eval.add_assign(&mut acc, &x)?; // no ciphertext allocated per step
    /// }
    /// let out = encoder.decode(&decryptor.decrypt(&acc)?)?;
    /// assert!((out[0] - 2.5).abs() < 1e-6 && (out[1] - 2.75).abs() < 1e-6);
    /// # Ok::<(), rhea::Error>(())
    /// ```
    pub fn add_assign(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.check_pair("add", a, b)?;
        if a.level() == b.level()
            && scales_match(a.scale, b.scale)
            && self
                .ring()
                .parts_combine_in_place("add", &a.parts, &b.parts)
        {
            for (x, y) in a.parts.iter_mut().zip(&b.parts) {
                self.ring().add_assign(x, y)?;
            }
            a.seed = None;
            return Ok(());
        }
        *a = self.add(a, b)?;
        Ok(())
    }

    /// `a -= b` (as [`Evaluator::sub`]; in place under the conditions of
    /// [`Evaluator::add_assign`]).
    pub fn sub_assign(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.check_pair("sub", a, b)?;
        if a.level() == b.level()
            && scales_match(a.scale, b.scale)
            && self
                .ring()
                .parts_combine_in_place("sub", &a.parts, &b.parts)
        {
            for (x, y) in a.parts.iter_mut().zip(&b.parts) {
                self.ring().sub_assign(x, y)?;
            }
            a.seed = None;
            return Ok(());
        }
        *a = self.sub(a, b)?;
        Ok(())
    }

    /// `a = -a`, in place.
    pub fn neg_assign(&self, a: &mut Ciphertext) -> Result<()> {
        self.check("neg", a)?;
        for p in &mut a.parts {
            self.ring().neg_assign(p)?;
        }
        a.seed = None;
        Ok(())
    }

    /// `ct += pt` (as [`Evaluator::add_plain`]; in place when `pt` is at `ct`'s level or above).
    pub fn add_plain_assign(&self, ct: &mut Ciphertext, pt: &Plaintext) -> Result<()> {
        self.add_sub_plain_assign("add_plain", ct, pt, false)
    }

    /// `ct -= pt` (as [`Evaluator::sub_plain`]; in place as [`Evaluator::add_plain_assign`]).
    pub fn sub_plain_assign(&self, ct: &mut Ciphertext, pt: &Plaintext) -> Result<()> {
        self.add_sub_plain_assign("sub_plain", ct, pt, true)
    }

    fn add_sub_plain_assign(
        &self,
        op: &'static str,
        ct: &mut Ciphertext,
        pt: &Plaintext,
        sub: bool,
    ) -> Result<()> {
        self.check_plain(op, ct, pt)?;
        if pt.level() >= ct.level()
            && scales_match(ct.scale, pt.scale)
            && self.ring().parts_combine_in_place(
                op,
                &ct.parts[..1],
                std::slice::from_ref(&pt.poly),
            )
        {
            if sub {
                self.ring().sub_assign(&mut ct.parts[0], &pt.poly)?;
            } else {
                self.ring().add_assign(&mut ct.parts[0], &pt.poly)?;
            }
            ct.seed = None;
            return Ok(());
        }
        *ct = self.add_sub_plain(op, ct, pt, sub)?;
        Ok(())
    }

    /// `ct += c` in every slot (real constant), in place.
    pub fn add_const_assign(&self, ct: &mut Ciphertext, c: f64) -> Result<()> {
        self.check("add_const", ct)?;
        let k = Self::round_i128("add_const", c * ct.scale)?;
        let scalars = self.ring().scalar_from_i128(k, &ct.parts[0].shape());
        self.ring().add_scalar_assign(&mut ct.parts[0], &scalars)?;
        ct.seed = None;
        Ok(())
    }

    /// `ct -= c` in every slot (real constant), in place.
    pub fn sub_const_assign(&self, ct: &mut Ciphertext, c: f64) -> Result<()> {
        self.add_const_assign(ct, -c)
    }

    /// `ct *= k` for an integer `k` (no scale change, no level used), in place.
    pub fn mul_int_assign(&self, ct: &mut Ciphertext, k: i64) -> Result<()> {
        self.check("mul_int", ct)?;
        let scalars = self
            .ring()
            .scalar_from_i128(k as i128, &ct.parts[0].shape());
        for p in &mut ct.parts {
            self.ring().mul_scalar_assign(p, &scalars)?;
        }
        ct.seed = None;
        Ok(())
    }

    /// `ct *= c` for a real constant `c` (scales and levels as [`Evaluator::mul_const`]): the
    /// product in place, then, in auto-rescale mode, the rescale.
    pub fn mul_const_assign(&self, ct: &mut Ciphertext, c: f64) -> Result<()> {
        const OP: &str = "mul_const";
        if self.would_refresh(ct, self.auto_rescale) {
            *ct = self.mul_const(ct, c)?;
            return Ok(());
        }
        self.check(OP, ct)?;
        let (scale, rescale) = if self.auto_rescale {
            Self::underflow(OP, ct, 1)?;
            (ct.scale, true)
        } else {
            (self.ctx.params().default_scale(), false)
        };
        self.mul_const_with_scale_assign(ct, c, scale)?;
        if rescale {
            self.rescale_assign(ct)?;
        }
        Ok(())
    }

    /// `ct *= round(c · scale)` (as [`Evaluator::mul_const_with_scale`]: the scale becomes
    /// `ct.scale · scale`, never rescaled), in place.
    pub fn mul_const_with_scale_assign(
        &self,
        ct: &mut Ciphertext,
        c: f64,
        scale: f64,
    ) -> Result<()> {
        let (k, new_scale) = self.mul_const_with_scale_checks(ct, c, scale)?;
        let scalars = self.ring().scalar_from_i128(k, &ct.parts[0].shape());
        for p in &mut ct.parts {
            self.ring().mul_scalar_assign(p, &scalars)?;
        }
        ct.scale = new_scale;
        ct.seed = None;
        Ok(())
    }

    /// The checks of [`Evaluator::mul_const_with_scale`] and its in-place form: the rounded
    /// constant and the new scale.
    pub(super) fn mul_const_with_scale_checks(
        &self,
        ct: &Ciphertext,
        c: f64,
        scale: f64,
    ) -> Result<(i128, f64)> {
        self.check("mul_const", ct)?;
        crate::ckks::encoder::check_scale("mul_const_with_scale", scale)?;
        let k = Self::round_i128("mul_const", c * scale)?;
        let new_scale = ct.scale * scale;
        self.check_fits("mul_const", new_scale, ct.level())?;
        Ok((k, new_scale))
    }

    /// `ct *= pt` (as [`Evaluator::mul_plain`]): the product in place when `pt` is at `ct`'s
    /// level or above, then, in auto-rescale mode, the rescale.
    pub fn mul_plain_assign(&self, ct: &mut Ciphertext, pt: &Plaintext) -> Result<()> {
        const OP: &str = "mul_plain";
        self.check_plain(OP, ct, pt)?;
        let parts_ok = ct
            .parts
            .iter()
            .all(|p| self.ring().check_binary(OP, p, &pt.poly).is_ok());
        let refresh = self.would_refresh(
            ct,
            self.auto_rescale && self.plaintext_above_bootstrap_input(pt.level()),
        );
        if pt.level() < ct.level() || !parts_ok || refresh {
            *ct = self.mul_plain(ct, pt)?;
            return Ok(());
        }
        if self.auto_rescale {
            Self::underflow(OP, ct, 1)?;
        }
        let scale = ct.scale * pt.scale;
        self.check_fits(OP, scale, ct.level())?;
        for p in &mut ct.parts {
            self.ring().mul_assign(p, &pt.poly)?;
        }
        ct.scale = scale;
        ct.seed = None;
        if self.auto_rescale {
            self.rescale_assign(ct)?;
        }
        Ok(())
    }

    /// `a *= b` with relinearisation (as [`Evaluator::mul`]).
    pub fn mul_assign(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        *a = self.mul(a, b)?;
        Ok(())
    }

    /// `a = a²` with relinearisation (as [`Evaluator::square`]).
    pub fn square_assign(&self, a: &mut Ciphertext) -> Result<()> {
        *a = self.square(a)?;
        Ok(())
    }

    /// Relinearises a 3-component ciphertext in place (a 2-component one is left as it is).
    pub fn relinearize_assign(&self, ct: &mut Ciphertext) -> Result<()> {
        self.check("relinearize", ct)?;
        if ct.parts.len() == 3 {
            *ct = self.relinearize(ct)?;
        }
        Ok(())
    }

    /// Rescales `ct` (as [`Evaluator::rescale`]), replacing it.
    pub fn rescale_assign(&self, ct: &mut Ciphertext) -> Result<()> {
        *ct = self.rescale(ct)?;
        Ok(())
    }

    /// Drops limbs down to `level` in place (as [`Evaluator::drop_to_level`]; on the GPU the
    /// kept limbs are not copied).
    pub fn drop_to_level_assign(&self, ct: &mut Ciphertext, level: usize) -> Result<()> {
        let limbs = self.drop_target_limbs(ct, level)?;
        for p in &mut ct.parts {
            self.ring().truncate_q_limbs(p, limbs)?;
        }
        ct.seed = None;
        Ok(())
    }

    /// The checks of [`Evaluator::drop_to_level`] and its in-place form: the Q limbs of `level`.
    pub(super) fn drop_target_limbs(&self, ct: &Ciphertext, level: usize) -> Result<usize> {
        self.check("drop_to_level", ct)?;
        if level > ct.level() {
            return Err(Error::InvalidInput(format!(
                "drop_to_level: target level {level} is above the ciphertext's level {}",
                ct.level()
            )));
        }
        Ok(self.ctx.params().q_limbs_at_level(level))
    }

    /// Rotates the slots left by `step` (as [`Evaluator::rotate`]), replacing `ct`.
    pub fn rotate_assign(&self, ct: &mut Ciphertext, step: i64) -> Result<()> {
        *ct = self.rotate(ct, step)?;
        Ok(())
    }

    /// Conjugates every slot (as [`Evaluator::conjugate`]), replacing `ct`.
    pub fn conjugate_assign(&self, ct: &mut Ciphertext) -> Result<()> {
        *ct = self.conjugate(ct)?;
        Ok(())
    }
}
