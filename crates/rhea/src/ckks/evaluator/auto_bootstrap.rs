//! Automatic bootstrapping (opt-in): [`Evaluator::with_bootstrapper`], whose docs say exactly
//! when an operand is refreshed, and [`Evaluator::bootstraps`].

use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::ckks::bootstrap::Bootstrapper;

/// The bootstrapper of an evaluator and the number of refreshes it made.
pub(super) struct AutoBootstrap {
    bootstrapper: Arc<Bootstrapper>,
    count: AtomicUsize,
}

impl Evaluator {
    /// Turns automatic bootstrapping on: an operand that would be rescaled below the lowest level
    /// a bootstrap accepts ([`Bootstrapper::input_level`], SlotToCoeff's levels at the bottom of
    /// the chain) is first refreshed by `bootstrapper`. Opt-in: without it, running out of levels is the
    /// [`Error::LevelUnderflow`] it always was.
    ///
    /// **When it triggers.** Exactly when an operation that ends with a rescaling (it consumes
    /// one level) is given a ciphertext operand at **[`Bootstrapper::input_level`] or below**
    /// (below, the bootstrap fails with [`Error::LevelUnderflow`]: a ciphertext taken there by
    /// hand cannot be refreshed):
    ///
    /// - in auto-rescale mode (the default): [`Evaluator::mul`], [`Evaluator::square`],
    ///   [`Evaluator::mul_const`], [`Evaluator::mul_const_complex`], [`Evaluator::mul_plain`]
    ///   and their `_assign` forms;
    /// - in either mode: [`Evaluator::mul_relin_rescale`] and
    ///   [`Evaluator::square_relin_rescale`];
    /// - and [`Evaluator::evaluate_polynomial`] / [`Evaluator::evaluate_polynomials`]: an input
    ///   with fewer levels above [`Bootstrapper::input_level`] than the (deepest) polynomial's
    ///   [`depth`](crate::ckks::Polynomial::depth) is refreshed first when
    ///   [`Bootstrapper::user_levels`] are enough (so that the result can be refreshed in turn).
    ///
    /// Each operand at the input level is replaced by its bootstrap, at [`Bootstrapper::output_level`]
    /// with scale [`Bootstrapper::output_scale`] `= Δ` (in a bootstrappable preset: where a fresh
    /// encryption sits, [`CkksParameters::default_level`](crate::params::CkksParameters::default_level)),
    /// then the operation proceeds as usual (an operand at a lower level brings the refreshed one
    /// down, as for any two operands). A ciphertext multiplied by itself (`mul(&x, &x)`) is
    /// bootstrapped once; a 3-component operand is relinearised first. [`Evaluator::mul_plain`]
    /// with a plaintext at or below the input level does not trigger (the product would be there
    /// anyway).
    ///
    /// **What does not trigger:** operations that consume no level (additions, rotations,
    /// [`Evaluator::mul_int`], [`Evaluator::mul_relin`], [`Evaluator::mul_no_relin`],
    /// [`Evaluator::mul_const_with_scale`], and every product in manual mode); an explicit
    /// [`Evaluator::rescale`] (in manual mode you manage levels: call
    /// [`Bootstrapper::bootstrap`] yourself); [`LinearTransform`](crate::ckks::LinearTransform)s
    /// and the [`functions`](crate::ckks::functions), which check their whole depth up front and
    /// fail with [`Error::LevelUnderflow`] (refresh their input with [`Bootstrapper::bootstrap`]
    /// first). [`Evaluator::bootstraps`] counts the refreshes.
    ///
    /// The bootstrapper holds an evaluator of its own, without a bootstrapper: there is no
    /// reference cycle, and a bootstrap never triggers another.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use rhea::ckks::bootstrap::{BootstrapPreset, Bootstrapper};
    /// use rhea::ckks::*;
    /// use rhea::Device;
    ///
    /// // INSECURE test preset (N = 2^12, 2 levels left to the user): a few seconds on a CPU.
    /// let preset = BootstrapPreset::by_name("boot_test_n12_insecure").unwrap();
    /// let ctx = CkksContext::new(&preset.params.build()?, Device::Cpu)?;
    /// let mut keygen = KeyGenerator::new(&ctx)?;
    /// let sk = keygen.secret_key()?;
    /// let boot = Bootstrapper::new(&ctx, &mut keygen, &sk, preset.config)?;
    /// let eval = Evaluator::new(&ctx)
    ///     .with_relinearization_key(keygen.relinearization_key(&sk)?)?
    ///     .with_bootstrapper(Arc::new(boot))?;
    /// let (encoder, encryptor) = (Encoder::new(&ctx)?, Encryptor::with_secret_key(&ctx, &sk)?);
    /// let mut x = encryptor.encrypt(&encoder.encode(&[0.5, -0.25])?)?;
    /// for _ in 0..4 {
    ///     // x ← x²/2 + 1/4: two levels a step, more than the chain has.
    ///     x = eval.mul_const(&eval.square(&x)?, 0.5)?;
    ///     eval.add_const_assign(&mut x, 0.25)?;
    /// }
    /// assert_eq!(eval.bootstraps(), 3); // before steps 2, 3 and 4
    /// let got = encoder.decode(&Decryptor::new(&ctx, &sk)?.decrypt(&x)?)?;
    /// let want = (0..4).fold(0.5f64, |x, _| x * x / 2.0 + 0.25);
    /// assert!((got[0] - want).abs() < 1e-4);
    /// # Ok::<(), rhea::Error>(())
    /// ```
    ///
    /// Errors: [`Error::ParametersMismatch`] for a bootstrapper built for other parameters;
    /// [`Error::InvalidInput`] for one that leaves no level to the user
    /// ([`Bootstrapper::user_levels`] 0: a refreshed operand could not be rescaled either).
    /// Once on, an operation that refreshes an operand also
    /// fails with the bootstrap's errors, e.g. [`Error::SlotMismatch`] for a ciphertext whose
    /// slot count is not the bootstrapper's ([`BootstrapConfig::slots`](crate::ckks::bootstrap::BootstrapConfig::slots)).
    pub fn with_bootstrapper(mut self, bootstrapper: Arc<Bootstrapper>) -> Result<Self> {
        const OP: &str = "with_bootstrapper";
        self.ctx
            .rlwe()
            .check_id(OP, bootstrapper.context().params().id())?;
        let (top, depth) = (self.ctx.params().max_level(), bootstrapper.depth());
        if bootstrapper.user_levels() == 0 {
            return Err(Error::InvalidInput(format!(
                "{OP}: the bootstrapper consumes every level ({depth} of {top}): a refreshed \
                 ciphertext could not be multiplied; use parameters with levels left to the user"
            )));
        }
        self.auto_bootstrap = Some(AutoBootstrap {
            bootstrapper,
            count: AtomicUsize::new(0),
        });
        Ok(self)
    }

    /// The bootstrapper of automatic bootstrapping, if one was given
    /// ([`Evaluator::with_bootstrapper`]).
    pub fn bootstrapper(&self) -> Option<&Arc<Bootstrapper>> {
        self.auto_bootstrap.as_ref().map(|a| &a.bootstrapper)
    }

    /// How many operands automatic bootstrapping has refreshed so far (0 without a
    /// bootstrapper; explicit [`Bootstrapper::bootstrap`] calls are not counted).
    pub fn bootstraps(&self) -> usize {
        self.auto_bootstrap
            .as_ref()
            .map_or(0, |a| a.count.load(Ordering::Relaxed))
    }

    /// `ct` refreshed by the bootstrapper when `rescales` (the operation consumes a level), a
    /// bootstrapper was given and `ct` is at its input level or below; `ct` itself otherwise.
    pub(super) fn refreshed<'a>(
        &self,
        op: &'static str,
        ct: &'a Ciphertext,
        rescales: bool,
    ) -> Result<Aligned<'a>> {
        match &self.auto_bootstrap {
            Some(auto) if rescales && ct.level() <= auto.bootstrapper.input_level() => {
                Ok(Aligned::Owned(self.refresh(op, auto, ct)?))
            }
            _ => Ok(Aligned::Borrowed(ct)),
        }
    }

    /// The two operands of a product that rescales, each refreshed as by
    /// [`Evaluator::refreshed`]; one ciphertext passed twice is bootstrapped once.
    pub(super) fn refreshed_pair<'a>(
        &self,
        op: &'static str,
        a: &'a Ciphertext,
        b: &'a Ciphertext,
        rescales: bool,
    ) -> Result<(Aligned<'a>, Aligned<'a>)> {
        if std::ptr::eq(a, b) {
            let a = self.refreshed(op, a, rescales)?;
            let b = match &a {
                Aligned::Borrowed(a) => Aligned::Borrowed(*a),
                Aligned::Owned(a) => Aligned::Owned(a.try_clone()?),
            };
            return Ok((a, b));
        }
        Ok((
            self.refreshed(op, a, rescales)?,
            self.refreshed(op, b, rescales)?,
        ))
    }

    /// Whether [`Evaluator::refreshed`] would refresh `ct` (the `_assign` forms then take their
    /// value-returning twin, so that an error leaves the operand unchanged).
    pub(super) fn would_refresh(&self, ct: &Ciphertext, rescales: bool) -> bool {
        self.auto_bootstrap
            .as_ref()
            .is_some_and(|a| rescales && ct.level() <= a.bootstrapper.input_level())
    }

    /// Whether a refreshed operand would gain a level in a product with a plaintext at
    /// `plain_level`: the plaintext is above the bootstrapper's input level (true without a
    /// bootstrapper, where nothing is refreshed anyway).
    pub(super) fn plaintext_above_bootstrap_input(&self, plain_level: usize) -> bool {
        self.auto_bootstrap
            .as_ref()
            .map_or(true, |a| plain_level > a.bootstrapper.input_level())
    }

    /// The input of a polynomial evaluation of depth `needed`: refreshed when it has fewer
    /// levels above the bootstrapper's input level and a refreshed one has enough (otherwise
    /// `ct` itself, and the caller's level check fails as without a bootstrapper).
    pub(crate) fn refreshed_for_depth<'a>(
        &self,
        op: &'static str,
        ct: &'a Ciphertext,
        needed: usize,
    ) -> Result<Aligned<'a>> {
        match &self.auto_bootstrap {
            Some(auto)
                if ct.level() < needed + auto.bootstrapper.input_level()
                    && auto.bootstrapper.user_levels() >= needed =>
            {
                Ok(Aligned::Owned(self.refresh(op, auto, ct)?))
            }
            _ => Ok(Aligned::Borrowed(ct)),
        }
    }

    /// One bootstrap (a 3-component `ct` relinearised first), counted.
    fn refresh(
        &self,
        op: &'static str,
        auto: &AutoBootstrap,
        ct: &Ciphertext,
    ) -> Result<Ciphertext> {
        self.check(op, ct)?;
        let out = if ct.parts.len() == 3 {
            auto.bootstrapper.bootstrap(&self.relinearize(ct)?)?
        } else {
            auto.bootstrapper.bootstrap(ct)?
        };
        auto.count.fetch_add(1, Ordering::Relaxed);
        Ok(out)
    }
}
