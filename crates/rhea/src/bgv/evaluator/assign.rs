//! The BGV evaluator's in-place forms (`*_assign`): the result replaces the first operand.
//!
//! Additions of ciphertexts at one level with one factor, negation, and additions and
//! multiplications by integer constants update the operand's polynomials in place (no copy);
//! the other operations replace the operand with their result. Every form gives exactly the
//! words, factor and noise bound of its value-returning twin, whose bookkeeping it shares, and
//! an error (a failed check, an exhausted noise budget) leaves the operand unchanged.

use super::*;

impl Evaluator {
    fn add_signed_assign(
        &self,
        op: &'static str,
        a: &mut Ciphertext,
        b: &Ciphertext,
        sign: i64,
    ) -> Result<()> {
        self.check(op, a)?;
        self.check(op, b)?;
        if a.level() == b.level()
            && a.factor == b.factor
            && self.ring().parts_combine_in_place(op, &a.parts, &b.parts)
        {
            let (_, _, log_noise) = self.add_terms(op, a, b)?;
            for (x, y) in a.parts.iter_mut().zip(&b.parts) {
                if sign < 0 {
                    self.ring().sub_assign(x, y)?;
                } else {
                    self.ring().add_assign(x, y)?;
                }
            }
            a.log_noise = log_noise;
            a.seed = None;
            return Ok(());
        }
        *a = self.add_signed(op, a, b, sign)?;
        Ok(())
    }

    /// `a += b` (as [`Evaluator::add`]; in place when `b` is at `a`'s level with `a`'s factor
    /// and has no more components).
    ///
    /// ```
    /// # use rhea::bgv::*; use rhea::params::BgvParametersLiteral; use rhea::Device;
    /// # let params = BgvParametersLiteral::he_booster_n13_logqp218().build()?;
    /// # let ctx = BgvContext::new(&params, Device::Cpu)?;
    /// # let mut keygen = KeyGenerator::from_seed(&ctx, [1; 32]);
    /// # let sk = keygen.secret_key()?;
    /// # let (encoder, encryptor, decryptor) =
    /// #     (Encoder::new(&ctx)?, Encryptor::with_secret_key(&ctx, &sk)?, Decryptor::new(&ctx, &sk)?);
    /// let eval = Evaluator::new(&ctx);
    /// let mut acc = encryptor.encrypt(&encoder.encode(&[1, 2])?)?;
    /// let x = encryptor.encrypt(&encoder.encode(&[10, 20])?)?;
    /// for _ in 0..3 {
    ///     eval.add_assign(&mut acc, &x)?; // no ciphertext allocated per step
    /// }
    /// assert_eq!(&encoder.decode(&decryptor.decrypt(&acc)?)?[..2], &[31, 62]);
    /// # Ok::<(), rhea::Error>(())
    /// ```
    pub fn add_assign(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.add_signed_assign("add", a, b, 1)
    }

    /// `a -= b` (as [`Evaluator::sub`]; in place as [`Evaluator::add_assign`]).
    pub fn sub_assign(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.add_signed_assign("sub", a, b, -1)
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

    /// `ct += c` for an integer `c` (as [`Evaluator::add_const`]), in place.
    pub fn add_const_assign(&self, ct: &mut Ciphertext, c: i64) -> Result<()> {
        self.add_const_signed_assign("add_const", ct, c)
    }

    /// `ct -= c` for an integer `c` (as [`Evaluator::sub_const`]), in place.
    pub fn sub_const_assign(&self, ct: &mut Ciphertext, c: i64) -> Result<()> {
        let t = &self.ctx.tables.t;
        let neg = t.center(t.neg(t.reduce_i64(c)));
        self.add_const_signed_assign("sub_const", ct, neg)
    }

    fn add_const_signed_assign(&self, op: &'static str, ct: &mut Ciphertext, c: i64) -> Result<()> {
        let (fc, log_noise) = self.add_const_terms(op, ct, c)?;
        let limbs = ct.parts[0].q_limbs();
        self.ring()
            .add_scalar_assign(&mut ct.parts[0], &self.ctx.t_inv_times(fc, limbs))?;
        ct.log_noise = log_noise;
        ct.seed = None;
        Ok(())
    }

    /// `ct *= c` for an integer `c` (as [`Evaluator::mul_const`]; no level spent), in place.
    pub fn mul_const_assign(&self, ct: &mut Ciphertext, c: i64) -> Result<()> {
        let (c, log_noise) = self.mul_const_terms(ct, c)?;
        if c != 1 {
            let scalars = self.int_scalars(c, ct.parts[0].q_limbs());
            for p in &mut ct.parts {
                self.ring().mul_scalar_assign(p, &scalars)?;
            }
        }
        ct.log_noise = log_noise;
        ct.seed = None;
        Ok(())
    }

    /// `ct += pt` (as [`Evaluator::add_plain`]), replacing `ct`.
    pub fn add_plain_assign(&self, ct: &mut Ciphertext, pt: &Plaintext) -> Result<()> {
        *ct = self.add_plain(ct, pt)?;
        Ok(())
    }

    /// `ct -= pt` (as [`Evaluator::sub_plain`]), replacing `ct`.
    pub fn sub_plain_assign(&self, ct: &mut Ciphertext, pt: &Plaintext) -> Result<()> {
        *ct = self.sub_plain(ct, pt)?;
        Ok(())
    }

    /// `ct *= pt` (as [`Evaluator::mul_plain`]), replacing `ct`.
    pub fn mul_plain_assign(&self, ct: &mut Ciphertext, pt: &Plaintext) -> Result<()> {
        *ct = self.mul_plain(ct, pt)?;
        Ok(())
    }

    /// `a *= b` with relinearisation (as [`Evaluator::mul`]), replacing `a`.
    pub fn mul_assign(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        *a = self.mul(a, b)?;
        Ok(())
    }

    /// `a = a²` with relinearisation (as [`Evaluator::square`]), replacing `a`.
    pub fn square_assign(&self, a: &mut Ciphertext) -> Result<()> {
        *a = self.square(a)?;
        Ok(())
    }

    /// Relinearises a 3-component ciphertext (as [`Evaluator::relinearize`]), replacing it.
    pub fn relinearize_assign(&self, ct: &mut Ciphertext) -> Result<()> {
        *ct = self.relinearize(ct)?;
        Ok(())
    }

    /// One modulus switch (as [`Evaluator::mod_switch`]), replacing `ct`.
    pub fn mod_switch_assign(&self, ct: &mut Ciphertext) -> Result<()> {
        *ct = self.mod_switch(ct)?;
        Ok(())
    }

    /// Rotates the rows by `step` slots (as [`Evaluator::rotate_rows`]), replacing `ct`.
    pub fn rotate_rows_assign(&self, ct: &mut Ciphertext, step: i64) -> Result<()> {
        *ct = self.rotate_rows(ct, step)?;
        Ok(())
    }

    /// Swaps the two rows (as [`Evaluator::rotate_columns`]), replacing `ct`.
    pub fn rotate_columns_assign(&self, ct: &mut Ciphertext) -> Result<()> {
        *ct = self.rotate_columns(ct)?;
        Ok(())
    }
}
