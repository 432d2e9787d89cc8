//! [`Bootstrapper`]: the whole pipeline, from a ciphertext at any level to a refreshed one.

use std::sync::Arc;

use super::dft::HomomorphicDft;
use super::encapsulation::EncapsulationKeys;
use super::evalmod::{EvalMod, EvalModParams};
use crate::backend::Poly;
use crate::ckks::{
    Ciphertext, CkksContext, DiagonalStorage, Evaluator, KeyGenerator, LinearTransform,
    ProtectedKeyGenerator, RotationKeys,
};
use crate::error::{Error, Result};
use crate::rlwe::{GaloisKeys, ProtectedSecretKey, RelinearizationKey, SecretKey};

/// A key generator and its secret key, unprotected or in LITE's protected mode: the two ways
/// [`Bootstrapper`]'s one list of keys is generated (the same draws, so the same keys).
trait KeySource {
    fn relinearization_key(&mut self) -> Result<RelinearizationKey>;
    fn galois_keys(&mut self, steps: &[i64], conjugation: bool) -> Result<GaloisKeys>;
    fn encapsulation_keys(&mut self, weight: usize) -> Result<EncapsulationKeys>;
}

impl KeySource for (&mut KeyGenerator, &SecretKey) {
    fn relinearization_key(&mut self) -> Result<RelinearizationKey> {
        self.0.relinearization_key(self.1)
    }

    fn galois_keys(&mut self, steps: &[i64], conjugation: bool) -> Result<GaloisKeys> {
        self.0.galois_keys(self.1, steps, conjugation)
    }

    fn encapsulation_keys(&mut self, weight: usize) -> Result<EncapsulationKeys> {
        self.0.encapsulation_keys(self.1, weight)
    }
}

impl KeySource for (&mut ProtectedKeyGenerator, &ProtectedSecretKey) {
    fn relinearization_key(&mut self) -> Result<RelinearizationKey> {
        self.0.relinearization_key(self.1)
    }

    fn galois_keys(&mut self, steps: &[i64], conjugation: bool) -> Result<GaloisKeys> {
        self.0.galois_keys(self.1, steps, conjugation)
    }

    fn encapsulation_keys(&mut self, weight: usize) -> Result<EncapsulationKeys> {
        self.0.encapsulation_keys(self.1, weight)
    }
}

/// What a [`Bootstrapper`] is built from.
#[derive(Clone, Debug)]
pub struct BootstrapConfig {
    /// The slots of the ciphertexts it refreshes (a power of two, at most `N/2`).
    pub slots: usize,
    /// Levels of CoeffToSlot (each one [`crate::ckks::LinearTransform`]).
    pub coeff_to_slot_levels: usize,
    /// Levels of SlotToCoeff.
    pub slot_to_coeff_levels: usize,
    /// EvalMod's `K`, degree and double angles (its factor and input normalisation are set by
    /// the bootstrapper).
    pub eval_mod: EvalModParams,
    /// The Hamming weight of the sparse ephemeral secret.
    pub sparse_weight: usize,
    /// `log2(q_0 / S)` for the scale `S` the coefficients are brought to before ModRaise. After
    /// SlotToCoeff the coefficients are the slots' real and imaginary parts, so for slots of
    /// magnitude up to 1 EvalMod sees `|t| ≤ 2^-message_ratio_bits`: the larger the ratio, the
    /// smaller `sin(2πt)/(2π) ≈ t`'s relative error (`(2πt)²/6`), the larger EvalMod's noise
    /// against the message.
    pub message_ratio_bits: u32,
    /// How CoeffToSlot and SlotToCoeff reach their baby steps: [`RotationKeys::PerBabyStep`]
    /// (the default, the fastest) or [`RotationKeys::Fewest`] (a few keys per DFT level, for
    /// cards with less memory: about a third of the Galois keys' bytes at N = 2^16, each baby
    /// step a full key switching).
    pub rotation_keys: RotationKeys,
    /// How CoeffToSlot's and SlotToCoeff's encoded matrices are kept: whole
    /// ([`DiagonalStorage::Full`], the default, the fastest) or compact
    /// ([`DiagonalStorage::Compact`]: one limb per diagonal instead of `ℓ + 1 + |P|`, expanded
    /// at each bootstrap; for cards where the matrices do not fit whole, e.g. N = 2^17).
    pub diagonal_storage: DiagonalStorage,
}

impl BootstrapConfig {
    /// Full slots (`N/2`), CoeffToSlot and SlotToCoeff in 3 levels each, EvalMod with `K = 16`, a
    /// cosine of degree 60 and 2 double angles (no arcsine), a sparse secret of weight 32 and a
    /// message ratio of 2^12: 11 levels at the top of the chain, 3 at the
    /// bottom.
    ///
    /// EvalMod's noise against the message is the floor of the precision (measured at N = 2^16
    /// with SlotToCoeff last: 60-bit instead of 58-bit EvalMod primes, and 2 double angles — each
    /// multiplies the noise by up to 4 — with a degree-60 cosine instead of 3 with degree 40,
    /// the same 6 levels, gave 2 bits each). At N = 2^12 the cosine's fit error was the floor at
    /// degree 30 with 3 double angles (15.0 bits).
    pub fn full_slots(ctx: &CkksContext) -> Self {
        Self::full_slots_of(ctx.params().log_n())
    }

    /// [`BootstrapConfig::full_slots`] for the ring degree `N = 2^log_n` (`N/2` slots).
    pub fn full_slots_of(log_n: u32) -> Self {
        let message_ratio_bits = MESSAGE_RATIO_BITS;
        let log_slots = log_n.saturating_sub(1);
        Self {
            slots: 1usize << log_slots,
            coeff_to_slot_levels: 3,
            slot_to_coeff_levels: 3,
            eval_mod: EvalModParams {
                degree: 60,
                double_angles: 2,
                eps_max: (-(message_ratio_bits as f64)).exp2(),
                ..EvalModParams::default()
            },
            sparse_weight: 32,
            message_ratio_bits,
            rotation_keys: RotationKeys::PerBabyStep,
            diagonal_storage: DiagonalStorage::Full,
        }
    }
}

/// The default [`BootstrapConfig::message_ratio_bits`].
const MESSAGE_RATIO_BITS: u32 = 12;

impl BootstrapConfig {
    /// The levels the pipeline consumes in all: [`BootstrapConfig::top_depth`] +
    /// [`BootstrapConfig::bottom_depth`]; what [`Bootstrapper::depth`] reports once built.
    pub fn depth(&self) -> usize {
        self.top_depth() + self.bottom_depth()
    }

    /// The levels at the top of the chain, above the user's: CoeffToSlot's and EvalMod's (the
    /// cosine's `⌈log2(degree + 1)⌉`, one per double angle, the arcsine's). A bootstrap lands
    /// this many levels below the top.
    pub fn top_depth(&self) -> usize {
        let log = |d: usize| (usize::BITS - d.leading_zeros()) as usize; // ⌈log2(d + 1)⌉
        let p = &self.eval_mod;
        let eval_mod = log(p.degree) + p.double_angles + p.arcsine_degree.map_or(0, log);
        self.coeff_to_slot_levels + eval_mod
    }

    /// The levels at the bottom of the chain, below the user's: SlotToCoeff's. The lowest level
    /// a ciphertext can be bootstrapped from ([`Bootstrapper::input_level`]).
    pub fn bottom_depth(&self) -> usize {
        self.slot_to_coeff_levels
    }
}

/// Key generation's progress ([`Bootstrapper::new_with_progress`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyProgress {
    /// Keys generated so far.
    pub done: usize,
    /// Keys in all.
    pub total: usize,
    /// Bytes of the keys generated so far (in memory, on the context's device).
    pub bytes: u64,
}

/// The time of each stage of one bootstrap ([`Bootstrapper::bootstrap_with_stages`]), in the
/// order they run: SlotToCoeff, ModRaise, CoeffToSlot, EvalMod.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BootstrapStages {
    /// SlotToCoeff, at the bottom of the chain (down to level 0).
    pub slot_to_coeff: std::time::Duration,
    /// The scale-up, the switch to the sparse secret, ModRaise, the switch back (and the subring
    /// sum for sparse slots).
    pub mod_raise: std::time::Duration,
    /// CoeffToSlot.
    pub coeff_to_slot: std::time::Duration,
    /// The real/imaginary split, EvalMod on both halves (one for a real bootstrap), the
    /// recombination.
    pub eval_mod: std::time::Duration,
}

impl BootstrapStages {
    /// The sum of the stages.
    pub fn total(&self) -> std::time::Duration {
        self.slot_to_coeff + self.mod_raise + self.coeff_to_slot + self.eval_mod
    }
}

/// Refreshes CKKS ciphertexts, in six steps — SlotToCoeff first, at the bottom of the chain:
///
/// 1. SlotToCoeff ([`HomomorphicDft`]) from level [`Bootstrapper::input_level`] down to level
///    0: the slots go into the coefficients (`m_{k·g} = Re z_j`, `m_{(k+n)·g} = Im z_j` for
///    `j = bit_reverse(k)`, at the input's scale). Run there, on 1 + 3 primes instead of above
///    the user's levels, it costs a fraction of what it would after EvalMod, and EvalMod's output
///    is the result: its noise is not summed over `n` slots by a later transform.
/// 2. Scale up by an integer `k` so that the coefficients fill about
///    `q_0 / 2^{message_ratio_bits}` (the larger the message against `q_0`, the smaller the
///    relative error of `sin(2πε)/(2π) ≈ ε`, the better the precision — up to the point where
///    `|ε| = |m|/q_0` stops being small). Switch to the sparse ephemeral secret
///    ([`Evaluator::encapsulate`]), raise to the top level ([`Evaluator::mod_raise`]:
///    `m + q_0·I`), switch back ([`Evaluator::decapsulate`]).
/// 3. For sparse slots (`n < N/2`), sum the automorphisms that fix the slots' subring
///    (rotations by `n, 2n, …, N/4`): the coefficients outside it cancel, those on it are
///    multiplied by `N/(2n)` (divided out in CoeffToSlot).
/// 4. CoeffToSlot ([`HomomorphicDft`]): the inverse of step 1, so slot `j` holds
///    `(m + q_0·I)_{k·g} / q_0` in its real part (`(m + q_0·I)_{(k+n)·g} / q_0` in its imaginary
///    part), divided by `K` so that EvalMod's cosine needs no interval map.
/// 5. The real and imaginary parts apart (conjugation, and a multiplication by `∓i` that is a
///    monomial `X^{N/2}`: no level), EvalMod ([`EvalMod`]) on each: `≈ m / S` for the scaled-up
///    scale `S`, i.e. `Re z_j` and `Im z_j`, landing exactly on the output level's scale `Δ`;
///    recombined. For real slots ([`Bootstrapper::bootstrap_real`]) the imaginary part is
///    dropped and EvalMod runs once.
///
/// The raised ciphertext's recorded scale is the prime of EvalMod's first level (the
/// CoeffToSlot matrices are built for it, and EvalMod's powers then keep scales near their
/// primes), and EvalMod's output factor is `q_0 / S` for the actual `S`: whatever the input's
/// scale, the output is at exactly [`Bootstrapper::output_scale`].
///
/// The linear maps commute with nothing in between, so SlotToCoeff can run first: the same
/// matrices, the same levels in all, the same levels for the user; only the chain's layout
/// (SlotToCoeff's primes at the bottom) and the lowest level a bootstrap accepts
/// ([`Bootstrapper::input_level`]) differ from the order CoeffToSlot, EvalMod, SlotToCoeff.
pub struct Bootstrapper {
    ctx: CkksContext,
    config: BootstrapConfig,
    eval: Evaluator,
    keys: EncapsulationKeys,
    cts: HomomorphicDft,
    eval_mod: EvalMod,
    stc: HomomorphicDft,
    /// The scale SlotToCoeff's level-0 output is brought to (by an integer) before ModRaise:
    /// `q_0` over `2^{message_ratio_bits}`.
    message_scale: f64,
    /// The raised ciphertext's recorded scale (the CoeffToSlot factor is built for it).
    raised_scale: f64,
    /// `−X^{N/2}` (`−i` in every slot) at EvalMod's input level and `X^{N/2}` at its output
    /// level, NTT form on the context's device: made once, so that a bootstrap uploads nothing.
    minus_i: Poly,
    plus_i: Poly,
    /// `X^{N/2}` at the input level (two real vectors packed into one bootstrapping).
    plus_i_input: Poly,
    /// The rotation steps of the Galois keys (conjugation apart).
    rotations: Vec<i64>,
    /// Bytes of the relinearisation and Galois keys.
    evaluation_key_bytes: u64,
    /// The number of Galois keys (conjugation included).
    galois_keys: usize,
}

impl Bootstrapper {
    /// Builds the transforms and generates every key the pipeline needs from `sk` with
    /// `keygen` (relinearisation, the rotations of the two transforms and of the subring sum,
    /// conjugation, the encapsulation keys).
    ///
    /// Errors: [`Error::InvalidInput`] for a slot count that is not a power of two up to
    /// `N/2`, or parameters with fewer levels than [`Bootstrapper::depth`] (say how many).
    /// The chain's layout is the caller's: SlotToCoeff divides by the primes of levels
    /// `1..=bottom_depth`, CoeffToSlot and EvalMod by the top ones
    /// ([`BootstrapPreset`](super::BootstrapPreset) lays chains out so).
    pub fn new(
        ctx: &CkksContext,
        keygen: &mut KeyGenerator,
        sk: &SecretKey,
        config: BootstrapConfig,
    ) -> Result<Self> {
        Self::new_with_progress(ctx, keygen, sk, config, &mut |_| {})
    }

    /// [`Bootstrapper::new`], calling `progress` after each key it generates (with the keys
    /// done, the keys in all and the bytes so far): key generation at N = 2^16 takes about
    /// 0.5 s on an H100 and minutes on a CPU. The same keys as [`Bootstrapper::new`].
    ///
    /// ```no_run
    /// use rhea::ckks::bootstrap::{BootstrapPreset, Bootstrapper};
    /// use rhea::ckks::{CkksContext, KeyGenerator};
    /// use rhea::Device;
    ///
    /// let preset = BootstrapPreset::by_name("boot_test_n12_insecure").unwrap();
    /// let ctx = CkksContext::new(&preset.params.build()?, Device::Cpu)?;
    /// let mut keygen = KeyGenerator::new(&ctx)?;
    /// let sk = keygen.secret_key()?;
    /// let boot = Bootstrapper::new_with_progress(&ctx, &mut keygen, &sk, preset.config, &mut |p| {
    ///     eprint!("\rkeys {}/{} ({:.2} GB)", p.done, p.total, p.bytes as f64 / 1e9)
    /// })?;
    /// # Ok::<(), rhea::Error>(())
    /// ```
    pub fn new_with_progress(
        ctx: &CkksContext,
        keygen: &mut KeyGenerator,
        sk: &SecretKey,
        config: BootstrapConfig,
        progress: &mut dyn FnMut(KeyProgress),
    ) -> Result<Self> {
        Self::with_keys_from(ctx, &mut (keygen, sk), config, progress)
    }

    /// [`Bootstrapper::new`] in LITE's protected mode (`docs/lite.md`): every key is made by
    /// the protected generator, so neither `sk` nor the ephemeral sparse secret of the
    /// encapsulation keys is ever in device memory in the clear. The same keys, word for word,
    /// as [`Bootstrapper::new`] with a [`KeyGenerator`] of the same seed and state (the same
    /// draws in the same order), hence the same bootstraps.
    ///
    /// Errors: as [`Bootstrapper::new`]; a key of other parameters or of another GPU.
    pub fn new_protected(
        ctx: &CkksContext,
        keygen: &mut ProtectedKeyGenerator,
        sk: &ProtectedSecretKey,
        config: BootstrapConfig,
    ) -> Result<Self> {
        Self::new_protected_with_progress(ctx, keygen, sk, config, &mut |_| {})
    }

    /// [`Bootstrapper::new_protected`] with the progress of
    /// [`Bootstrapper::new_with_progress`].
    pub fn new_protected_with_progress(
        ctx: &CkksContext,
        keygen: &mut ProtectedKeyGenerator,
        sk: &ProtectedSecretKey,
        config: BootstrapConfig,
        progress: &mut dyn FnMut(KeyProgress),
    ) -> Result<Self> {
        Self::with_keys_from(ctx, &mut (keygen, sk), config, progress)
    }

    /// The pipeline, with every key it needs generated by `keys` (the one list of keys, in
    /// the order that fixes the draws).
    fn with_keys_from(
        ctx: &CkksContext,
        keys: &mut dyn KeySource,
        config: BootstrapConfig,
        progress: &mut dyn FnMut(KeyProgress),
    ) -> Result<Self> {
        let params = ctx.params();
        let (n, half) = (config.slots, params.slots());
        if !n.is_power_of_two() || n < 2 || n > half {
            return Err(Error::InvalidInput(format!(
                "Bootstrapper: {n} slots (a power of two in 2..={half})"
            )));
        }
        let q0 = params.q_primes()[0] as f64;
        // After SlotToCoeff the coefficients are the slots' parts, whatever the slot count.
        let message_scale = (q0.log2().floor() - config.message_ratio_bits as f64).exp2();
        let top = params.max_level();
        if config.coeff_to_slot_levels > top {
            return Err(Error::InvalidInput(format!(
                "Bootstrapper: {} CoeffToSlot levels with {top} levels in all",
                config.coeff_to_slot_levels
            )));
        }
        // The raised ciphertext is recorded at the prime of EvalMod's first level, so that
        // EvalMod's powers keep a scale near their levels' primes (each squaring rescaled by
        // one): the cosine's powers neither vanish nor overflow.
        let raised_scale = params.q_primes()[top - config.coeff_to_slot_levels] as f64;
        let eval_mod = EvalMod::new(EvalModParams {
            normalized_input: true,
            factor: 1.0,
            ..config.eval_mod.clone()
        })?;
        // CoeffToSlot: (m + q0·I)/q0 / (2(K + 1/4)) from slots decoded at the raised scale (the
        // 1/2 for the real/imaginary split, the 1/(K + 1/4) for EvalMod's normalized input);
        // a subring sum multiplied the coefficients by N/(2n).
        let cts_factor = raised_scale / q0 / (2.0 * eval_mod.input_divisor()) / (half / n) as f64;
        let cts = HomomorphicDft::coeff_to_slot(n, config.coeff_to_slot_levels, cts_factor)?
            .with_rotation_keys(config.rotation_keys)
            .with_diagonal_storage(config.diagonal_storage);
        let stc = HomomorphicDft::slot_to_coeff(n, config.slot_to_coeff_levels, 1.0)?
            .with_rotation_keys(config.rotation_keys)
            .with_diagonal_storage(config.diagonal_storage);
        let depth = cts.depth() + eval_mod.depth() + stc.depth();
        if depth > params.max_level() {
            return Err(Error::InvalidInput(format!(
                "Bootstrapper: the pipeline needs {depth} levels (CoeffToSlot {}, EvalMod {}, \
                 SlotToCoeff {}), the parameters have {}",
                cts.depth(),
                eval_mod.depth(),
                stc.depth(),
                params.max_level()
            )));
        }
        let mut steps = cts.rotations();
        steps.extend(stc.rotations());
        steps.extend(Self::subring_steps(n, half));
        steps.sort_unstable();
        steps.dedup();
        // One key at a time, for the progress: relinearisation, conjugation, the rotations,
        // the two encapsulation keys.
        let total = steps.len() + 4;
        let mut report = |done: usize, bytes: u64| progress(KeyProgress { done, total, bytes });
        let rlk: Arc<RelinearizationKey> = Arc::new(keys.relinearization_key()?);
        let mut bytes = rlk.key().size_bytes();
        report(1, bytes);
        let mut gk = keys.galois_keys(&[], true)?;
        bytes += gk.size_bytes();
        report(2, bytes);
        for (i, &step) in steps.iter().enumerate() {
            let key = keys.galois_keys(&[step], false)?;
            bytes += key.size_bytes();
            gk.extend(key)?;
            report(3 + i, bytes);
        }
        let evaluation_key_bytes = rlk.key().size_bytes() + gk.size_bytes();
        let galois_keys = gk.len();
        let keys = keys.encapsulation_keys(config.sparse_weight)?;
        report(total, evaluation_key_bytes + keys.size_bytes());
        let mid = top - cts.depth();
        let plain = Evaluator::new(ctx);
        let minus_i = plain.const_poly(mid, 0, -1)?;
        let plus_i = plain.const_poly(mid - eval_mod.depth(), 0, 1)?;
        let plus_i_input = plain.const_poly(stc.depth(), 0, 1)?;
        let eval = Evaluator::new(ctx)
            .with_auto_rescale(false)
            .with_relinearization_key(rlk)?
            .with_galois_keys(gk)?;
        Ok(Self {
            ctx: ctx.clone(),
            config,
            eval,
            keys,
            cts,
            eval_mod,
            stc,
            message_scale,
            raised_scale,
            minus_i,
            plus_i,
            plus_i_input,
            rotations: steps,
            evaluation_key_bytes,
            galois_keys,
        })
    }

    /// The rotation steps of the subring sum for `n` of `half` slots: `n, 2n, …, half/2`.
    fn subring_steps(n: usize, half: usize) -> Vec<i64> {
        let mut steps = Vec::new();
        let mut s = n;
        while s < half {
            steps.push(s as i64);
            s *= 2;
        }
        steps
    }

    /// The levels the pipeline consumes in all: SlotToCoeff's at the bottom of the chain,
    /// CoeffToSlot's and EvalMod's at the top.
    pub fn depth(&self) -> usize {
        self.cts.depth() + self.eval_mod.depth() + self.stc.depth()
    }

    /// The level of a refreshed ciphertext: the top level less CoeffToSlot's and EvalMod's.
    pub fn output_level(&self) -> usize {
        self.ctx.params().max_level() - self.cts.depth() - self.eval_mod.depth()
    }

    /// The lowest level a ciphertext can be bootstrapped from: SlotToCoeff's levels, at the
    /// bottom of the chain. A refreshed ciphertext has `output_level() − input_level()`
    /// multiplications before it needs the next bootstrap.
    pub fn input_level(&self) -> usize {
        self.stc.depth()
    }

    /// The levels a refreshed ciphertext has for the user's computation:
    /// [`Bootstrapper::output_level`] − [`Bootstrapper::input_level`].
    pub fn user_levels(&self) -> usize {
        self.output_level() - self.input_level()
    }

    /// The scale of a refreshed ciphertext: the parameters' default scale `Δ` (EvalMod lands on
    /// it exactly).
    pub fn output_scale(&self) -> f64 {
        self.ctx.params().default_scale()
    }

    /// The configuration.
    pub fn config(&self) -> &BootstrapConfig {
        &self.config
    }

    /// The context it bootstraps ciphertexts of.
    pub fn context(&self) -> &CkksContext {
        &self.ctx
    }

    /// The rotation steps it holds Galois keys for (besides conjugation): those of CoeffToSlot,
    /// SlotToCoeff and, for sparse slots, the subring sum.
    pub fn rotations(&self) -> &[i64] {
        &self.rotations
    }

    /// The key-switching keys it holds: relinearisation, the Galois keys (one per distinct
    /// rotation, and conjugation), and the two encapsulation keys.
    pub fn keyswitch_keys(&self) -> usize {
        1 + self.galois_keys + 2
    }

    /// The bytes of every key it holds in memory (on its context's device).
    pub fn key_bytes(&self) -> u64 {
        self.evaluation_key_bytes + self.keys.size_bytes()
    }

    /// The bytes CoeffToSlot's and SlotToCoeff's encoded matrices hold (on the context's
    /// device; 0 before the first bootstrap encodes them): whole or compact as
    /// [`BootstrapConfig::diagonal_storage`] says.
    pub fn matrix_bytes(&self) -> u64 {
        let dft = |d: &HomomorphicDft| -> u64 {
            d.transforms()
                .iter()
                .map(LinearTransform::cached_bytes)
                .sum()
        };
        dft(&self.cts) + dft(&self.stc)
    }

    /// `ct` refreshed: at [`Bootstrapper::output_level`] with [`Bootstrapper::output_scale`],
    /// holding the same slots up to the bootstrapping error. `ct` may be at any level from
    /// [`Bootstrapper::input_level`] up.
    ///
    /// Errors: a ciphertext of other parameters or slots, a 3-component one,
    /// [`Error::LevelUnderflow`] below [`Bootstrapper::input_level`].
    pub fn bootstrap(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        Ok(self.run(ct, Parts::Complex, &mut |_| Ok(()))?.0)
    }

    /// A ciphertext of real slots refreshed with its imaginary part removed (the input's, and
    /// the bootstrapping error's): the result's imaginary part is the decryption noise, so it
    /// cannot grow through later polynomials on real data. After SlotToCoeff the imaginary
    /// parts are coefficients of their own, so EvalMod runs on the real part only: about 30 %
    /// less time than [`Bootstrapper::bootstrap`] at N = 2^16, the same levels.
    ///
    /// Errors: as [`Bootstrapper::bootstrap`].
    pub fn bootstrap_real(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        Ok(self.run(ct, Parts::Real, &mut |_| Ok(()))?.0)
    }

    /// Two ciphertexts of real slots refreshed by one bootstrapping: packed as `a + i·b` (a
    /// product by the monomial `X^{N/2}`, exact and without a level), bootstrapped, and the real
    /// and imaginary parts' EvalMod outputs returned apart — no recombination, no split. The
    /// cost of one [`Bootstrapper::bootstrap`] for two ciphertexts; both come back at
    /// [`Bootstrapper::output_level`] with `Δ`, their imaginary parts removed as by
    /// [`Bootstrapper::bootstrap_real`].
    ///
    /// Errors: as [`Bootstrapper::bootstrap`]; [`Error::ScaleMismatch`] when `a` and `b` do not
    /// have the same scale at [`Bootstrapper::input_level`].
    pub fn bootstrap_two_real(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
    ) -> Result<(Ciphertext, Ciphertext)> {
        let e = &self.eval;
        self.check_input(a)?;
        self.check_input(b)?;
        let low = self.input_level();
        let (a0, mut ib0) = (e.drop_to_level(a, low)?, e.drop_to_level(b, low)?);
        if a0.scale != ib0.scale {
            return Err(Error::ScaleMismatch {
                op: "bootstrap_two_real",
                lhs_log_scale: a0.scale.log2(),
                rhs_log_scale: ib0.scale.log2(),
            });
        }
        self.mul_by_monomial(&mut ib0, &self.plus_i_input)?;
        let packed = e.add(&a0, &ib0)?;
        match self.run(&packed, Parts::Split, &mut |_| Ok(()))? {
            (re, Some(im)) => Ok((re, im)),
            (_, None) => Err(Error::InvalidInput(
                "bootstrap_two_real: the pipeline returned one part".into(),
            )),
        }
    }

    /// [`Bootstrapper::bootstrap`] with the time of each stage: the device is synchronised at
    /// every stage's end (a benchmark's view; [`Bootstrapper::bootstrap`] does not wait).
    ///
    /// Errors: as [`Bootstrapper::bootstrap`]; a failed device synchronisation.
    pub fn bootstrap_with_stages(&self, ct: &Ciphertext) -> Result<(Ciphertext, BootstrapStages)> {
        let device = self.ctx.device();
        let mut stages = BootstrapStages::default();
        device.synchronize()?;
        let mut last = std::time::Instant::now();
        let (out, _) = self.run(ct, Parts::Complex, &mut |stage| {
            device.synchronize()?;
            let now = std::time::Instant::now();
            let slot = match stage {
                Stage::ModRaise => &mut stages.mod_raise,
                Stage::CoeffToSlot => &mut stages.coeff_to_slot,
                Stage::EvalMod => &mut stages.eval_mod,
                Stage::SlotToCoeff => &mut stages.slot_to_coeff,
            };
            *slot = now - last;
            last = now;
            Ok(())
        })?;
        Ok((out, stages))
    }

    /// The pipeline; `parts` says what it returns: the complex slots or the real parts, and
    /// `None`; or the real parts and the imaginary parts apart ([`Parts::Split`]).
    /// `done(stage)` is called as each stage ends.
    fn run(
        &self,
        ct: &Ciphertext,
        parts: Parts,
        done: &mut dyn FnMut(Stage) -> Result<()>,
    ) -> Result<(Ciphertext, Option<Ciphertext>)> {
        let e = &self.eval;
        self.check_input(ct)?;
        let params = self.ctx.params();
        let q0 = params.q_primes()[0] as f64;
        // 1. SlotToCoeff at the bottom of the chain: down to level 0, at the input's scale.
        let low = e.drop_to_level(ct, self.input_level())?;
        let coeffs = self.stc.evaluate(e, &low)?;
        done(Stage::SlotToCoeff)?;
        // 2. Scaled up by an integer towards the message scale; ModRaise under the sparse
        //    secret.
        let k = (self.message_scale / coeffs.scale).floor().max(1.0);
        let actual_scale = coeffs.scale * k;
        let coeffs = if k > 1.0 {
            e.mul_int(&coeffs, k as i64)?
        } else {
            coeffs
        };
        let sparse = e.encapsulate(&coeffs, &self.keys)?;
        let mut raised = e.mod_raise(&sparse, params.max_level())?;
        raised = e.decapsulate(&raised, &self.keys)?;
        raised.scale = self.raised_scale;
        // 3. Subring sum for sparse slots.
        for step in Self::subring_steps(self.config.slots, params.slots()) {
            let r = e.rotate(&raised, step)?;
            e.add_assign(&mut raised, &r)?;
        }
        done(Stage::ModRaise)?;
        // 4. CoeffToSlot.
        let w = self.cts.evaluate(e, &raised)?;
        done(Stage::CoeffToSlot)?;
        // 5. Real and imaginary parts, EvalMod on each. With w = (a + i·b)/2 (the 1/2 from
        //    CoeffToSlot): a = w + conj w and b = −i·(w − conj w).
        let target = self.output_scale();
        let factor = q0 / actual_scale;
        let conj = e.conjugate(&w)?;
        let twice_re = e.add(&w, &conj)?;
        let re = self
            .eval_mod
            .evaluate_with_factor(e, &twice_re, target, factor)?;
        if parts == Parts::Real {
            done(Stage::EvalMod)?;
            return Ok((re, None));
        }
        let mut twice_im = e.sub(&w, &conj)?;
        self.mul_by_monomial(&mut twice_im, &self.minus_i)?;
        let mut im = self
            .eval_mod
            .evaluate_with_factor(e, &twice_im, target, factor)?;
        if parts == Parts::Split {
            done(Stage::EvalMod)?;
            return Ok((re, Some(im)));
        }
        self.mul_by_monomial(&mut im, &self.plus_i)?;
        let slots = e.add(&re, &im)?;
        done(Stage::EvalMod)?;
        Ok((slots, None))
    }

    /// What every bootstrap checks first: `ct` of this bootstrapper's parameters and slots.
    pub(super) fn check_input(&self, ct: &Ciphertext) -> Result<()> {
        self.ctx.rlwe().check_id("bootstrap", ct.params_id)?;
        crate::rlwe::check_two_components("bootstrap", ct.parts.len())?;
        if ct.slots != self.config.slots {
            return Err(Error::SlotMismatch {
                expected: self.config.slots,
                found: ct.slots,
            });
        }
        if ct.level() < self.input_level() {
            return Err(Error::LevelUnderflow {
                op: "bootstrap",
                level: ct.level(),
                needed: self.input_level(),
            });
        }
        Ok(())
    }

    /// `ct ← ±i · ct`: the product by the precomputed monomial `±X^{N/2}` of `ct`'s level (`±i` in
    /// every slot), exact and without a level.
    fn mul_by_monomial(&self, ct: &mut Ciphertext, mono: &Poly) -> Result<()> {
        let ring = self.ctx.ring();
        for p in &mut ct.parts {
            ring.mul_assign(p, mono)?;
        }
        ct.seed = None;
        Ok(())
    }
}

/// The stages [`Bootstrapper::bootstrap_with_stages`] times.
#[derive(Clone, Copy, Debug)]
enum Stage {
    SlotToCoeff,
    ModRaise,
    CoeffToSlot,
    EvalMod,
}

/// What [`Bootstrapper::run`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Parts {
    /// One ciphertext, the complex slots.
    Complex,
    /// One ciphertext, the real parts (EvalMod once).
    Real,
    /// Two ciphertexts: the real parts and the imaginary parts, each as real slots.
    Split,
}

impl std::fmt::Debug for Bootstrapper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bootstrapper")
            .field("config", &self.config)
            .field("depth", &self.depth())
            .field("input_level", &self.input_level())
            .field("output_level", &self.output_level())
            .finish()
    }
}
