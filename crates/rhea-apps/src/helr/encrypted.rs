//! The training on ciphertexts: keys, packing, one iteration, bootstrapping in the loop.
//!
//! **Packing** (feature-major, `S` samples and `F` = 256 features a ciphertext, `S·F` slots):
//! slot `f·S + s` holds feature `f` of sample `s`. Two real ciphertexts of a batch travel as
//! one complex one, `Z = z_a + i·z_b`, so a batch of 8 real ciphertexts is 4 complex ones. The
//! weights `v` and `w` are real, each weight `f` replicated over its block of `S` slots, and
//! stored divided by the weight scale `κ` (what bootstrapping refreshes must stay below 1).
//!
//! **One iteration** (`v`, `w` at level `ℓ`):
//! 1. `Z ⊙ v`, then the sum over the features by `rotate_and_sum(stride S, count F)` — cyclic,
//!    since `S·F` is the slot count: every slot of sample `s` gets `T = t_a + i·t_b` (the inner
//!    products of the two samples the slot's complex pair holds, divided by `κ`). 1 level.
//! 2. `X_a = T + T̄ = 2 t_a/κ`, `X_b = T − T̄ = 2i t_b/κ` (one conjugation), and the sigmoid
//!    polynomial on each: `P_a = c·p(t_a)` and `Q_b = c·i·p(t_b)` with real coefficients (the
//!    polynomial is `1/2` plus odd powers, so `i·p(t_b)` is a real polynomial of `X_b` plus the
//!    constant `i·c/2`, a plaintext encoded for each iteration before the timed loop, so that
//!    nothing is uploaded in it). `c = (1 + β_t)/(2n)` is folded into the coefficients. 2 levels
//!    at degree 3 (3 at degree 5).
//! 3. `(P_a − Q_b)·Z`: its real part is `c·(p(t_a) z_a + p(t_b) z_b)`. 1 level.
//! 4. The sum over the pairs, the sum over the `S` samples of a block by
//!    `rotate_and_sum(stride 1, count S)` (the block's total lands in its first slot), the real
//!    part doubled (`Y + Ȳ`), a mask of `γ/κ` on the first slot of each real feature's block
//!    (zeros elsewhere), and the replication over the block by
//!    `rotate_and_sum(stride −1, count S)`: the step `G' = (1 + β_t)·γ/(nκ)·Σ_i p(z_iᵀv) z_i`.
//!    1 level. (Splitting the constant between the polynomial and the mask keeps the signal
//!    near 1 through the sums, well above the noise of each rescaling.)
//! 5. `v' = (1 + β_t)·v − β_t·w + G'` and `w' = v + G'/(1 + β_t)` (the latter one level below
//!    the former, off the critical path).
//!
//! Five levels an iteration at degree 3 (`v'` is 5 levels below `v`, `w'` 6): with the 13 levels
//! a bootstrap leaves (from its output level down to its input level, SlotToCoeff's three
//! levels lying below: 16 down to 3 at both sizes), two iterations between bootstraps, and `v`
//! and `w` are refreshed together by one bootstrapping (two real vectors,
//! [`Bootstrapper::bootstrap_two_real`]) from the level `w` reached.

use std::sync::Arc;
use std::time::Instant;

use rhea::ckks::bootstrap::{BootstrapConfig, Bootstrapper};
use rhea::ckks::{
    Ciphertext, CkksContext, Complex64, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator,
    Plaintext, Polynomial,
};
use rhea::params::CkksParameters;
use rhea::unstable::HasRing;
use rhea::{Device, Error, Result};

use super::plain::{momentum, reflect};
use super::Layout;

/// What the encrypted training gives back.
pub(super) struct Outcome {
    /// The decrypted weights `w` (times `κ`), every slot: weight `f` at slots `f·S .. f·S + S`.
    pub slots: Vec<f64>,
    /// FNV-1a of the final `w` ciphertext's words.
    pub digest: u64,
    pub keygen_s: f64,
    pub encrypt_s: f64,
    pub warm_up_s: f64,
    /// Each iteration's time, its bootstrapping (if it began with one) included.
    pub iteration_ms: Vec<f64>,
    /// Each bootstrapping's time.
    pub bootstrap_ms: Vec<f64>,
    /// The iterations' stages.
    pub stages: Stages,
    /// Key switchings of the iterations (bootstrappings apart).
    pub keyswitches: u64,
    /// Levels an iteration consumes on `v`.
    pub levels_per_iteration: usize,
    /// Galois keys of the evaluator (bootstrapper's apart) and the bytes of all keys.
    pub galois_keys: usize,
    pub bootstrap_key_bytes: u64,
}

/// The inputs of [`train`].
pub(super) struct Job<'a> {
    pub device: Device,
    pub params: &'a CkksParameters,
    pub boot_config: BootstrapConfig,
    pub layout: Layout,
    /// The training batches, rows `z_i = y_i·(1, x_i)`.
    pub batches: &'a [Vec<Vec<f64>>],
    /// The sigmoid polynomial (monomial coefficients, constant first; `1/2` + odd powers).
    pub sigmoid: &'a [f64],
    pub learning_rate: f64,
    pub weight_scale: f64,
    pub key_seed: Option<[u8; 32]>,
}

/// FNV-1a, 64 bits.
fn fnv1a(words: impl Iterator<Item = u64>, mut h: u64) -> u64 {
    for w in words {
        for b in w.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x100_0000_01b3);
        }
    }
    h
}

/// The rotation steps an iteration needs at `slots` slots (conjugation apart).
pub(super) fn rotation_steps(layout: &Layout) -> Vec<i64> {
    let (slots, s) = (layout.slots, layout.samples_per_ciphertext);
    let mut steps = Evaluator::rotate_and_sum_rotations(slots, s as i64, layout.padded_features);
    steps.extend(Evaluator::rotate_and_sum_rotations(slots, 1, s));
    steps.extend(Evaluator::rotate_and_sum_rotations(slots, -1, s));
    steps.sort_unstable();
    steps.dedup();
    steps
}

struct Trainer<'a> {
    ctx: CkksContext,
    eval: Evaluator,
    boot: Bootstrapper,
    layout: Layout,
    /// The mask (`γ/κ` on the first slot of each real feature's block), by level (above the
    /// bootstrapper's input level only).
    masks: Vec<Option<Plaintext>>,
    /// `i·c_t·p_0` in every slot for iteration `t`, at the level and scale it is added at.
    constants: Vec<Plaintext>,
    /// `p(t) = σ̃(−t)`, constant first.
    p: Vec<f64>,
    job: &'a Job<'a>,
}

impl Trainer<'_> {
    /// `P_a`'s and `Q_b`'s polynomials for the factor `c`: `c·p(κX/2)` and `c·i·p(κX/(2i))`
    /// without its constant `i·c·p_0` (added from [`Trainer::constants`]).
    fn polynomials(&self, c: f64) -> Result<(Polynomial, Polynomial)> {
        let half_kappa = self.job.weight_scale / 2.0;
        let mut a = Vec::with_capacity(self.p.len());
        let mut b = Vec::with_capacity(self.p.len());
        for (k, &pk) in self.p.iter().enumerate() {
            let scaled = c * pk * half_kappa.powi(k as i32);
            a.push(scaled);
            b.push(match k {
                0 => 0.0,
                k if k % 2 == 1 => {
                    if (k / 2) % 2 == 0 {
                        scaled
                    } else {
                        -scaled
                    }
                }
                _ if pk == 0.0 => 0.0,
                _ => {
                    return Err(Error::InvalidInput(format!(
                        "helr: the sigmoid polynomial has an even coefficient x^{k} (it must be \
                         1/2 plus odd powers)"
                    )))
                }
            });
        }
        Ok((Polynomial::monomial(a)?, Polynomial::monomial(b)?))
    }

    /// One iteration from `(v, w)`: `(v', w')`, each stage's time added to `stages` (the device
    /// synchronised at the end of each).
    fn iteration(
        &self,
        t: usize,
        v: &Ciphertext,
        w: &Ciphertext,
        batch: &[Ciphertext],
        stages: &mut Stages,
    ) -> Result<(Ciphertext, Ciphertext)> {
        let eval = &self.eval;
        let params = self.ctx.params();
        let device = self.ctx.device();
        let (s, f) = (
            self.layout.samples_per_ciphertext,
            self.layout.padded_features,
        );
        let beta = momentum(t);
        let n = self.layout.batch as f64;
        // The polynomial carries (1 + β)/(2n), the mask γ/κ: the signal stays near 1 through
        // the sums, above the noise each rescaling adds (folding all of it into the polynomial,
        // its outputs near 2^-16 against a noise near 2^-26 a slot, gave 17.6 bits instead of
        // 19.5 after one iteration at N = 2^16).
        let c = (1.0 + beta) / (2.0 * n);
        let (poly_a, poly_b) = self.polynomials(c)?;
        // `i·c·p_0`, encoded beforehand at the level this iteration adds it at (an
        // `add_const_complex` would build and upload a polynomial every time).
        let i_const = self
            .constants
            .get(t)
            .ok_or_else(|| Error::InvalidInput(format!("helr: no constant for iteration {t}")))?;
        let depth = poly_a.depth().max(poly_b.depth());
        let timed = |acc: &mut f64, start: Instant| -> Result<()> {
            device.synchronize()?;
            *acc += start.elapsed().as_secs_f64() * 1e3;
            Ok(())
        };

        // Inner products: T = t_a + i·t_b in every slot of each sample's pair.
        let start = Instant::now();
        let inner = batch
            .iter()
            .map(|z| eval.rotate_and_sum(&eval.mul(z, v)?, s as i64, f))
            .collect::<Result<Vec<_>>>()?;
        timed(&mut stages.inner_products, start)?;

        // The sigmoid of both halves: c·(p(t_a) − i·p(t_b)).
        let start = Instant::now();
        let factors = inner
            .iter()
            .map(|tt| {
                let conj = eval.conjugate(tt)?;
                let xa = eval.add(tt, &conj)?;
                let xb = eval.sub(tt, &conj)?;
                let level = xa.level().checked_sub(depth).ok_or(Error::LevelUnderflow {
                    op: "helr sigmoid",
                    level: xa.level(),
                    needed: depth,
                })?;
                let target = params.scale_at_level(level).ok_or_else(|| {
                    Error::InvalidInput(format!("helr: no scale at level {level}"))
                })?;
                let pa = eval.evaluate_polynomial(&xa, &poly_a, target)?;
                let qb = eval.evaluate_polynomial(&xb, &poly_b, target)?;
                let qb = eval.add_plain(&qb, i_const)?;
                eval.sub(&pa, &qb)
            })
            .collect::<Result<Vec<_>>>()?;
        timed(&mut stages.sigmoid, start)?;

        // The gradient step G', replicated over each feature's block.
        let start = Instant::now();
        let mut sum: Option<Ciphertext> = None;
        for (factor, z) in factors.iter().zip(batch) {
            let g = eval.mul(factor, z)?;
            sum = Some(match sum {
                None => g,
                Some(acc) => eval.add(&acc, &g)?,
            });
        }
        let sum = sum.ok_or_else(|| Error::InvalidInput("helr: an empty batch".into()))?;
        let y = eval.rotate_and_sum(&sum, 1, s)?;
        let y = eval.add(&y, &eval.conjugate(&y)?)?;
        let mask =
            self.masks
                .get(y.level())
                .and_then(|m| m.as_ref())
                .ok_or(Error::LevelUnderflow {
                    op: "helr mask",
                    level: y.level(),
                    needed: self.boot.input_level() + 1,
                })?;
        let step = eval.rotate_and_sum(&eval.mul_plain(&y, mask)?, -1, s)?;
        timed(&mut stages.gradient, start)?;

        // Nesterov's update.
        let start = Instant::now();
        let v_part = eval.mul_const(v, 1.0 + beta)?;
        let w_part = eval.mul_const(w, -beta)?;
        let v_new = eval.add(&eval.add(&v_part, &w_part)?, &step)?;
        let w_new = eval.add(v, &eval.mul_const(&step, 1.0 / (1.0 + beta))?)?;
        timed(&mut stages.update, start)?;
        Ok((v_new, w_new))
    }
}

/// Milliseconds spent in each stage of the iterations (bootstrapping apart).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Stages {
    /// `Z ⊙ v` and the sums over the features.
    pub inner_products: f64,
    /// The conjugations and the two polynomials of each pair.
    pub sigmoid: f64,
    /// The products by `Z`, the sums over the pairs and samples, the mask, the replication.
    pub gradient: f64,
    /// Nesterov's update of `v` and `w`.
    pub update: f64,
}

/// Trains on ciphertexts (see the module docs).
pub(super) fn train(job: &Job<'_>) -> Result<Outcome> {
    let layout = job.layout.clone();
    let params = job.params;
    let device = job.device;
    let ctx = CkksContext::new(params, device)?;
    let start = Instant::now();
    let mut keygen = match job.key_seed {
        Some(seed) => KeyGenerator::from_seed(&ctx, seed),
        None => KeyGenerator::new(&ctx)?,
    };
    let sk = Arc::new(keygen.secret_key()?);
    let rlk = keygen.relinearization_key(&sk)?;
    let steps = rotation_steps(&layout);
    let gk = keygen.galois_keys(&sk, &steps, true)?;
    let boot = Bootstrapper::new(&ctx, &mut keygen, &sk, job.boot_config.clone())?;
    let eval = Evaluator::new(&ctx)
        .with_relinearization_key(rlk)?
        .with_galois_keys(gk)?;
    device.synchronize()?;
    let keygen_s = start.elapsed().as_secs_f64();

    let encoder = Encoder::new(&ctx)?;
    if encoder.slots() != layout.slots {
        return Err(Error::InvalidInput(format!(
            "helr: the parameters have {} slots, the layout {}",
            encoder.slots(),
            layout.slots
        )));
    }
    let mut encryptor = Encryptor::with_secret_key(&ctx, sk.clone())?;
    if let Some(mut seed) = job.key_seed {
        seed[31] ^= 0x5a;
        encryptor = encryptor.with_seed(seed);
    }
    let decryptor = Decryptor::new(&ctx, sk)?;
    let (s, features) = (layout.samples_per_ciphertext, layout.features);

    // The masks, at every level an iteration may apply one: above the bootstrapper's input
    // level (the product takes one), up to its output level.
    let floor = boot.input_level();
    let mut mask_values = vec![0.0; layout.slots];
    for f in 0..features {
        mask_values[f * s] = job.learning_rate / job.weight_scale;
    }
    let masks = (0..=boot.output_level())
        .map(|level| match params.scale_at_level(level) {
            Some(scale) if level > floor => encoder.encode_at(&mask_values, level, scale).map(Some),
            _ => Ok(None),
        })
        .collect::<Result<Vec<_>>>()?;

    // The data, encrypted once (the client's work), two real ciphertexts a complex one.
    let start = Instant::now();
    let cts_per_batch = layout.ciphertexts_per_batch;
    let mut encrypted = Vec::with_capacity(job.batches.len());
    for batch in job.batches {
        if batch.len() != layout.batch {
            return Err(Error::InvalidInput(format!(
                "helr: a batch of {} samples, the layout has {}",
                batch.len(),
                layout.batch
            )));
        }
        let mut cts = Vec::with_capacity(cts_per_batch.div_ceil(2));
        for pair in 0..cts_per_batch.div_ceil(2) {
            let mut values = vec![Complex64::new(0.0, 0.0); layout.slots];
            for (part, k) in [2 * pair, 2 * pair + 1].into_iter().enumerate() {
                if k >= cts_per_batch {
                    continue;
                }
                for sample in 0..s {
                    let z = &batch[k * s + sample];
                    for (feature, &value) in z.iter().enumerate().take(features) {
                        let slot = &mut values[feature * s + sample];
                        if part == 0 {
                            slot.re = value;
                        } else {
                            slot.im = value;
                        }
                    }
                }
            }
            cts.push(encryptor.encrypt(&encoder.encode_complex(&values)?)?);
        }
        encrypted.push(cts);
    }
    let zeros = encoder.encode(&vec![0.0; layout.slots])?;
    let mut v = encryptor.encrypt(&zeros)?;
    let mut w = encryptor.encrypt(&zeros)?;
    device.synchronize()?;
    let encrypt_s = start.elapsed().as_secs_f64();

    // Levels an iteration takes from v (w' lands one lower), and the level it needs on entry:
    // w' must stay at or above the bootstrapper's input level.
    let depth = Polynomial::monomial(job.sigmoid.to_vec())?.depth();
    let levels_per_iteration = depth + 3;
    let needed = floor + levels_per_iteration + 1;
    let mut trainer = Trainer {
        ctx: ctx.clone(),
        eval,
        boot,
        layout: layout.clone(),
        masks,
        constants: Vec::new(),
        p: reflect(job.sigmoid),
        job,
    };
    let top = trainer.boot.output_level();
    if top < needed || v.level() != top {
        return Err(Error::InvalidInput(format!(
            "helr: an iteration needs {} levels, a bootstrap leaves {} (levels {top} down to \
             {floor}; fresh ciphertexts at level {})",
            needed - floor,
            top - floor,
            v.level()
        )));
    }
    // Each iteration's imaginary constant, at the level the schedule below reaches it.
    let mut level = top;
    for t in 0..encrypted.len() {
        if level < needed {
            level = top;
        }
        let at = level - 1 - depth;
        let scale = params
            .scale_at_level(at)
            .ok_or_else(|| Error::InvalidInput(format!("helr: no scale at level {at}")))?;
        let value = (1.0 + momentum(t)) / (2.0 * layout.batch as f64) * trainer.p[0];
        let values = vec![Complex64::new(0.0, value); layout.slots];
        trainer
            .constants
            .push(encoder.encode_complex_at(&values, at, scale)?);
        level -= levels_per_iteration;
    }
    let trainer = trainer;
    // Warm-up, untimed and dropped: one bootstrapping and one iteration (a GPU compiles its
    // kernels and fills its memory pool on first use). Deterministic: a seeded run's words do
    // not change.
    let start = Instant::now();
    {
        let (a, b) = trainer.boot.bootstrap_two_real(&v, &w)?;
        if let Some(batch) = encrypted.first() {
            trainer.iteration(0, &a, &b, batch, &mut Stages::default())?;
        }
        device.synchronize()?;
    }
    let warm_up_s = start.elapsed().as_secs_f64();
    let mut iteration_ms = Vec::with_capacity(encrypted.len());
    let mut bootstrap_ms = Vec::new();
    let mut keyswitches = 0;
    let mut stages = Stages::default();
    for (t, batch) in encrypted.iter().enumerate() {
        let start = Instant::now();
        if v.level() < needed || w.level() + 1 < needed {
            let boot_start = Instant::now();
            // One bootstrapping for both: the same level and scale first.
            let (hi, lo) = if v.level() >= w.level() {
                (&v, &w)
            } else {
                (&w, &v)
            };
            let hi = if hi.level() > lo.level() {
                trainer
                    .eval
                    .drop_to_level_and_scale(hi, lo.level(), lo.scale())?
            } else {
                hi.try_clone()?
            };
            let (a, b) = trainer.boot.bootstrap_two_real(&hi, lo)?;
            (v, w) = if v.level() >= w.level() {
                (a, b)
            } else {
                (b, a)
            };
            device.synchronize()?;
            bootstrap_ms.push(boot_start.elapsed().as_secs_f64() * 1e3);
        }
        let before = ctx.keyswitches();
        let (v_new, w_new) = trainer.iteration(t, &v, &w, batch, &mut stages)?;
        device.synchronize()?;
        keyswitches += ctx.keyswitches() - before;
        (v, w) = (v_new, w_new);
        iteration_ms.push(start.elapsed().as_secs_f64() * 1e3);
    }

    let digest = w
        .parts()
        .iter()
        .try_fold(0xcbf2_9ce4_8422_2325u64, |h, p| {
            Ok::<_, Error>(fnv1a(ctx.ring().download(p)?.into_iter(), h))
        })?;
    let decoded = encoder.decode(&decryptor.decrypt(&w)?)?;
    let slots = decoded.iter().map(|x| x * job.weight_scale).collect();
    Ok(Outcome {
        slots,
        digest,
        keygen_s,
        encrypt_s,
        warm_up_s,
        iteration_ms,
        bootstrap_ms,
        stages,
        keyswitches,
        levels_per_iteration,
        galois_keys: steps.len() + 1,
        bootstrap_key_bytes: trainer.boot.key_bytes(),
    })
}
