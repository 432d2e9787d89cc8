//! **RNN**: inference of a plain recurrent network on encrypted word embeddings, as seed 004
//! (Cheddar) runs it after Podschwadt and Takabi, "Classification of Encrypted Word Embeddings
//! using RNNs" (PrivateNLP 2020): one RNN layer of 128 units,
//! `h_t = tanh(W_x x_t + W_h h_{t−1} + b)`, over 200 time steps, 32 sequences of 128-dimensional
//! embeddings batched in one ciphertext, bootstrapping every three steps, then a dense layer to
//! two classes. `tanh` is a degree-7 least-squares polynomial on `[−4, 4]`; the f64 reference
//! runs the same network with the same polynomial. Measured: the latency (total, per step, by
//! stage, against the bootstrap floor), and the encrypted result against f64 — the final hidden
//! state and the logits in bits, and the argmax agreement over the sequences.
//!
//! ```no_run
//! use rhea_apps::rnn::{self, RnnConfig, Size};
//! use rhea::Device;
//!
//! let report = rnn::run(Device::Cpu, &RnnConfig::new(Size::Small))?;
//! println!("{}", report.table());
//! assert_eq!(report.argmax_agreement, report.layout.batch);
//! # Ok::<(), rhea::Error>(())
//! ```
//!
//! **Sizes.** [`Size::Paper`]: the 128-bit preset `boot_n16_levels13` (N = 2^16, 13 levels of
//! Δ = 2^40 after each bootstrap) with ciphertexts of 4096 slots (32 sequences × 128 units: a
//! sparse packing, bootstrapped as such), 200 steps. [`Size::Small`]: the same chain layout and
//! code at N = 2^12 (**INSECURE**, `boot_test_n12_insecure` with 13 user levels), 16 sequences
//! × 64 units (1024 of 2048 slots, sparse too), 9 steps.
//!
//! **Levels.** A step takes 1 level for the matrix–vector products and 3 for the degree-7
//! polynomial (`⌈log2 8⌉`): 4 a step, 12 for three steps, within the 13 a bootstrap leaves
//! (from its output level 16 down to its input level 3, SlotToCoeff's levels lying below;
//! [`plan`] checks it; degree 15 would take 5 a step, 15 for three, too many). The steps after
//! a bootstrap start at levels 16, 12 and 8; the state is bootstrapped from level 4. The dense
//! layer takes one more level after the last step.
//!
//! **Data** ([`data`]): synthetic and deterministic (a toy sentiment task: sequences of
//! embeddings of neutral words and of their class's words); weights of a fixed seed, `W_h` at
//! spectral norm 0.8; the dense layer trained in f64 (class centroids of the final hidden
//! states of 128 training sequences). Nothing is downloaded. How the ciphertexts carry it: the
//! [`encrypted`] module's docs.

use crate::chart::ChartEntry;
use serde::Serialize;

pub mod data;
pub mod encrypted;
pub mod plain;
mod report;

pub use report::{NetworkReport, ParametersReport, RnnReport, TimingReport};

pub use crate::Size;
use rhea::ckks::bootstrap::{BootstrapConfig, HomomorphicDft};
use rhea::ckks::{LinearTransform, Polynomial};
use rhea::params::CkksParameters;
use rhea::{Device, Error, Result};

/// Seed 004's RNN figure (Cheddar, Table 4): 4.33 s on an A100 80GB.
pub const CHEDDAR_A100_80GB_S: f64 = 4.33;

/// What to run.
#[derive(Clone, Debug)]
pub struct RnnConfig {
    /// The size (parameters and shapes).
    pub size: Size,
    /// Time steps (200 in the seed).
    pub iterations: usize,
    /// Units of the RNN layer (128 in the seed); also the embeddings' dimension (128).
    pub units: usize,
    /// Sequences batched in one ciphertext (32 in the seed); `units × batch` is the slot count
    /// of the ciphertexts (a power of two, at most `N/2`).
    pub batch: usize,
    /// Classes of the dense output layer.
    pub classes: usize,
    /// Steps between bootstraps (3 in the seed).
    pub iterations_per_bootstrap: usize,
    /// The tanh polynomial's degree: odd, 3 to 7.
    pub tanh_degree: usize,
    /// The fit's interval `[−bound, bound]`; the f64 run's pre-activations must stay inside.
    pub tanh_bound: f64,
    /// `‖W_h‖₂` (below 1).
    pub recurrent_norm: f64,
    /// The standard deviation of each pre-activation's input part `W_x x_t` (about).
    pub input_gain: f64,
    /// Labelled sequences the dense layer is trained on (in f64).
    pub training_sequences: usize,
    /// The data's and weights' seed.
    pub data_seed: u64,
    /// The seed of the keys and the encryptions (`None`: the operating system's randomness).
    /// With a seed, a run is reproducible word for word, on the CPU and the GPU alike.
    pub key_seed: Option<[u8; 32]>,
}

impl RnnConfig {
    /// The seed's run at `size`: 200 steps, 128 units, 32 sequences ([`Size::Paper`]) or 9
    /// steps, 64 units, 16 sequences ([`Size::Small`]); bootstrapping every 3 steps; tanh of
    /// degree 7 on `[−4, 4]`; `‖W_h‖₂ = 0.8`, input gain 0.5; 2 classes.
    pub fn new(size: Size) -> Self {
        let (iterations, units, batch) = match size {
            Size::Paper => (200, 128, 32),
            Size::Small => (9, 64, 16),
        };
        Self {
            size,
            iterations,
            units,
            batch,
            classes: 2,
            iterations_per_bootstrap: 3,
            tanh_degree: 7,
            tanh_bound: 4.0,
            recurrent_norm: 0.8,
            input_gain: 0.5,
            training_sequences: 128,
            data_seed: 2020,
            key_seed: None,
        }
    }

    /// This configuration with the keys and encryptions drawn from `seed` (its 8 little-endian
    /// bytes, four times): a reproducible run, the same words on every device.
    pub fn with_seed(mut self, seed: u64) -> Self {
        let mut key = [0u8; 32];
        for chunk in key.chunks_mut(8) {
            chunk.copy_from_slice(&seed.to_le_bytes());
        }
        self.key_seed = Some(key);
        self
    }

    /// The packing at this size.
    pub fn layout(&self) -> Layout {
        Layout {
            log_n: match self.size {
                Size::Small => 12,
                Size::Paper => 16,
            },
            units: self.units,
            batch: self.batch,
            slots: self.units * self.batch,
        }
    }

    /// The parameters, the bootstrapping configuration (at the layout's slot count) and the
    /// preset's name at this size.
    pub fn parameters(&self) -> Result<(CkksParameters, BootstrapConfig, String)> {
        let (params, mut config, name) = self.size.bootstrappable_parameters()?;
        config.slots = self.layout().slots;
        Ok((params, config, name))
    }

    /// The tanh polynomial (monomial coefficients, constant first).
    pub fn tanh(&self) -> Vec<f64> {
        plain::tanh_least_squares(self.tanh_degree, self.tanh_bound)
    }

    /// The recurrent layer's weights.
    pub fn weights(&self) -> data::RnnWeights {
        data::RnnWeights::new(
            self.data_seed,
            self.units,
            self.units,
            self.recurrent_norm,
            self.input_gain,
        )
    }

    fn check(&self) -> Result<()> {
        let bad = |what: String| Err(Error::InvalidInput(format!("rnn: {what}")));
        if self.iterations == 0 {
            return bad("at least one step".into());
        }
        if self.iterations_per_bootstrap == 0 {
            return bad("at least one step between bootstraps".into());
        }
        if self.tanh_degree % 2 == 0 || !(3..=7).contains(&self.tanh_degree) {
            return bad(format!("tanh degree {} (odd, 3 to 7)", self.tanh_degree));
        }
        let slots = self.units * self.batch;
        let half = 1usize << (self.layout().log_n - 1);
        if self.units < 2 || self.batch == 0 || !slots.is_power_of_two() || slots > half {
            return bad(format!(
                "{} units × {} sequences = {slots} slots (a power of two, at most {half})",
                self.units, self.batch
            ));
        }
        if !(2..=self.units).contains(&self.classes) {
            return bad(format!("{} classes (2 to the units)", self.classes));
        }
        for (name, x) in [
            ("tanh bound", self.tanh_bound),
            ("input gain", self.input_gain),
        ] {
            if !(x.is_finite() && x > 0.0) {
                return bad(format!("{name} {x} (positive and finite)"));
            }
        }
        if !(self.recurrent_norm > 0.0 && self.recurrent_norm < 1.0) {
            return bad(format!(
                "recurrent norm {} (in (0, 1): a stable recurrence)",
                self.recurrent_norm
            ));
        }
        if self.training_sequences < self.classes {
            return bad("at least one training sequence a class".into());
        }
        Ok(())
    }
}

/// The packing: slot `u·batch + b` holds unit `u` (or embedding entry `u`) of sequence `b`.
#[derive(Clone, Debug, Serialize)]
pub struct Layout {
    /// `log2 N`.
    pub log_n: u32,
    /// Units (and the embeddings' dimension).
    pub units: usize,
    /// Sequences a ciphertext.
    pub batch: usize,
    /// Slots of the ciphertexts (`units × batch`; sparse when below `N/2`).
    pub slots: usize,
}

/// The recurrent transform: `(W_h − i·W_x)/2 ⊗ I_batch` on the layout, by its `units`
/// diagonals `k·batch` (cyclic over the `units × batch` slots). Applied to `z = h + i·x`, its
/// output `y` has `y + ȳ = W_h h + W_x x` (see [`encrypted`]).
pub fn recurrent_transform(weights: &data::RnnWeights, layout: &Layout) -> Result<LinearTransform> {
    let (units, batch) = (layout.units, layout.batch);
    let diagonals = (0..units).map(|k| {
        let d: Vec<rhea::ckks::Complex64> = (0..layout.slots)
            .map(|s| {
                let u = s / batch;
                let c = (u + k) % units;
                rhea::ckks::Complex64::new(weights.w_h[u][c] / 2.0, -weights.w_x[u][c] / 2.0)
            })
            .collect();
        ((k * batch) as i64, d)
    });
    LinearTransform::from_diagonals(layout.slots, diagonals)
}

/// The dense layer's transform: `W_o` (padded with zero rows to `units × units`) `⊗ I_batch`;
/// logit `c` of sequence `b` lands in slot `c·batch + b`.
pub fn output_transform(w_o: &[Vec<f64>], layout: &Layout) -> Result<LinearTransform> {
    let (units, batch) = (layout.units, layout.batch);
    let diagonals = (0..units).filter_map(|k| {
        let d: Vec<f64> = (0..layout.slots)
            .map(|s| {
                let u = s / batch;
                w_o.get(u).map_or(0.0, |row| row[(u + k) % units])
            })
            .collect();
        d.iter()
            .any(|&x| x != 0.0)
            .then_some(((k * batch) as i64, d))
    });
    LinearTransform::from_diagonals(layout.slots, diagonals)
}

/// The run's plan, computed without keys or encryptions: the level budget, the bootstraps, the
/// keys and a device-memory estimate ([`plan`]).
#[derive(Clone, Debug, Serialize)]
pub struct RnnPlan {
    /// Levels after a bootstrap: from [`RnnPlan::top_level`] down to [`RnnPlan::input_level`].
    pub user_levels: usize,
    /// The level a bootstrap lands on (fresh ciphertexts are there too).
    pub top_level: usize,
    /// The lowest level the state may reach: the bootstrapper's input level (SlotToCoeff's
    /// levels lie below it).
    pub input_level: usize,
    /// Levels the bootstrapping consumes (at the top of the chain and at its bottom).
    pub bootstrap_depth: usize,
    /// Levels a step consumes: 1 (the products) + the polynomial's depth.
    pub levels_per_iteration: usize,
    /// Levels of the steps between two bootstraps (`levels_per_iteration ×
    /// iterations_per_bootstrap`, at most `user_levels`).
    pub levels_between_bootstraps: usize,
    /// The level each step starts at, by its position after a bootstrap.
    pub step_levels: Vec<usize>,
    /// Bootstraps of the run (before steps `k, 2k, …`, and one before the dense layer if the
    /// last step leaves no level above [`RnnPlan::input_level`]).
    pub bootstraps: usize,
    /// The dense layer's input level.
    pub output_level: usize,
    /// The recurrent transform's diagonals, baby and giant steps, key switchings.
    pub recurrent_diagonals: usize,
    /// Its baby steps.
    pub recurrent_baby_steps: usize,
    /// Its giant steps.
    pub recurrent_giant_steps: usize,
    /// Its key switchings.
    pub recurrent_keyswitches: usize,
    /// The dense layer's key switchings.
    pub output_keyswitches: usize,
    /// Key switchings a step: the transform's, one conjugation, the polynomial's
    /// relinearisations.
    pub keyswitches_per_iteration: usize,
    /// Galois keys of the network's evaluator (rotations and conjugation).
    pub galois_keys: usize,
    /// Key-switching keys of the bootstrapper (relinearisation, conjugation, rotations, two
    /// encapsulation keys).
    pub bootstrap_keys: usize,
    /// Bytes of one key-switching key.
    pub key_bytes_each: u64,
    /// Input ciphertexts (one a step) and their bytes (each at the level it is used at).
    pub input_ciphertexts: usize,
    /// Their bytes.
    pub input_bytes: u64,
    /// The cached diagonals of the two transforms (recurrent at 3 levels, dense at 1), bytes.
    pub transform_cache_bytes: u64,
    /// Estimate of the device memory: keys (network's, bootstrapper's), inputs, transforms'
    /// caches, and the bootstrapper's own DFT caches (approximated by its keys' share).
    pub device_bytes_estimate: u64,
}

/// The plan of `config`'s run (see [`RnnPlan`]), without keys or encryptions: quick at the
/// paper's size. [`run`] follows it.
///
/// Errors: [`Error::InvalidInput`] for a bad configuration, or when the steps between two
/// bootstraps need more levels than a bootstrap leaves.
pub fn plan(config: &RnnConfig) -> Result<RnnPlan> {
    config.check()?;
    let layout = config.layout();
    let (params, boot_config, _) = config.parameters()?;
    let (top, floor) = crate::size::user_level_range("rnn", &params, &boot_config)?;
    let user_levels = top - floor;
    let tanh = Polynomial::monomial(config.tanh())?;
    let levels_per_iteration = 1 + tanh.depth();
    let k = config.iterations_per_bootstrap;
    let levels_between_bootstraps = levels_per_iteration * k;
    if levels_between_bootstraps > user_levels {
        return Err(Error::InvalidInput(format!(
            "rnn: {k} steps of {levels_per_iteration} levels (1 + the degree-{} tanh's {}) need \
             {levels_between_bootstraps} levels between bootstraps, a bootstrap leaves \
             {user_levels}: lower the degree or the steps between bootstraps",
            config.tanh_degree,
            tanh.depth()
        )));
    }
    let step_levels: Vec<usize> = (0..k).map(|p| top - levels_per_iteration * p).collect();
    let last_out = top - levels_per_iteration * ((config.iterations - 1) % k + 1);
    // The dense layer takes one level and stays above the floor, like every step.
    let extra = usize::from(last_out < floor + 1);
    let output_level = if extra == 1 { top } else { last_out };
    let bootstraps = (config.iterations - 1) / k + extra;

    let weights = config.weights();
    let recurrent = recurrent_transform(&weights, &layout)?;
    let ones = vec![vec![1.0; layout.units]; config.classes];
    let output = output_transform(&ones, &layout)?;
    let mut steps = recurrent.rotations();
    steps.extend(output.rotations());
    steps.sort_unstable();
    steps.dedup();
    let galois_keys = steps.len() + 1;

    let n = 1u64 << params.log_n();
    let half = params.slots();
    let q_limbs = params.max_level() as u64 + 1;
    let p_limbs = params.p_primes().len() as u64;
    let key_bytes_each = 2 * params.dnum() as u64 * (q_limbs + p_limbs) * n * 8;
    let mut boot_steps =
        HomomorphicDft::coeff_to_slot(layout.slots, boot_config.coeff_to_slot_levels, 1.0)?
            .rotations();
    boot_steps.extend(
        HomomorphicDft::slot_to_coeff(layout.slots, boot_config.slot_to_coeff_levels, 1.0)?
            .rotations(),
    );
    let mut s = layout.slots;
    while s < half {
        boot_steps.push(s as i64);
        s *= 2;
    }
    boot_steps.sort_unstable();
    boot_steps.dedup();
    let bootstrap_keys = 1 + 1 + boot_steps.len() + 2;
    let ct_bytes = |level: usize| 2 * (level as u64 + 1) * n * 8;
    let input_bytes = (0..config.iterations)
        .map(|t| ct_bytes(step_levels[t % k]))
        .sum();
    let ext = |level: usize| (level as u64 + 1 + p_limbs) * n * 8;
    let transform_cache_bytes = step_levels
        .iter()
        .map(|&l| recurrent.diagonal_count() as u64 * ext(l))
        .sum::<u64>()
        + output.diagonal_count() as u64 * ext(output_level);
    let keys = (galois_keys as u64 + 1 + bootstrap_keys as u64) * key_bytes_each;
    // The bootstrapper's DFT diagonals, cached at its top levels: about as many as its
    // rotations times its baby-step share, bounded here by its keys' bytes.
    let boot_cache = bootstrap_keys as u64 * key_bytes_each;
    let keyswitches_per_iteration = recurrent.keyswitches() + 1 + tanh.relinearizations();
    Ok(RnnPlan {
        user_levels,
        top_level: top,
        input_level: floor,
        bootstrap_depth: boot_config.depth(),
        levels_per_iteration,
        levels_between_bootstraps,
        step_levels,
        bootstraps,
        output_level,
        recurrent_diagonals: recurrent.diagonal_count(),
        recurrent_baby_steps: recurrent.baby_steps(),
        recurrent_giant_steps: recurrent.giant_steps(),
        recurrent_keyswitches: recurrent.keyswitches(),
        output_keyswitches: output.keyswitches(),
        keyswitches_per_iteration,
        galois_keys,
        bootstrap_keys,
        key_bytes_each,
        input_ciphertexts: config.iterations,
        input_bytes,
        transform_cache_bytes,
        device_bytes_estimate: keys + input_bytes + transform_cache_bytes + boot_cache,
    })
}

/// Runs the RNN on `device`: generates the data and weights, trains the dense layer and runs
/// the network in f64, runs it on ciphertexts, compares.
///
/// Errors: [`Error::InvalidInput`] for a bad configuration, a level plan that does not fit
/// ([`plan`]), or an f64 run whose pre-activations leave the tanh interval or whose hidden
/// state reaches 1.05 in magnitude (bootstrapping refreshes values up to about 1); the
/// library's errors (device, memory).
pub fn run(device: Device, config: &RnnConfig) -> Result<RnnReport> {
    let plan = plan(config)?;
    let layout = config.layout();
    let (params, boot_config, preset) = config.parameters()?;
    let tanh = config.tanh();
    let weights = config.weights();

    let mut generator = data::Generator::new(config.data_seed, config.units);
    let train = generator.sequences(config.training_sequences, config.iterations);
    let test = generator.sequences(config.batch, config.iterations);
    let trained = plain::forward(&weights, &tanh, &train, config.iterations);
    let readout = plain::train_readout(&trained.hidden, &train.labels, config.classes);
    let reference = plain::forward(&weights, &tanh, &test, config.iterations);
    let max_pre = reference.max_preactivation.max(trained.max_preactivation);
    if max_pre > config.tanh_bound {
        return Err(Error::InvalidInput(format!(
            "rnn: a pre-activation of the f64 run reaches {max_pre:.3}, outside the tanh \
             interval ±{} (widen it or lower the weights)",
            config.tanh_bound
        )));
    }
    if reference.max_hidden >= 1.05 {
        return Err(Error::InvalidInput(format!(
            "rnn: the hidden state reaches {:.3} in f64 (bootstrapping refreshes values up to \
             about 1)",
            reference.max_hidden
        )));
    }
    let logits_f64 = readout.logits(&reference.hidden);

    let job = encrypted::Job {
        device,
        params: &params,
        boot_config: boot_config.clone(),
        layout: layout.clone(),
        plan: &plan,
        weights: &weights,
        readout: &readout,
        tanh: &tanh,
        data: &test,
        iterations: config.iterations,
        iterations_per_bootstrap: config.iterations_per_bootstrap,
        key_seed: config.key_seed,
    };
    let out = encrypted::infer(&job)?;

    let max_err = |a: &[Vec<f64>], b: &[Vec<f64>]| {
        a.iter()
            .zip(b)
            .flat_map(|(x, y)| x.iter().zip(y).map(|(p, q)| (p - q).abs()))
            .fold(0.0f64, f64::max)
    };
    let hidden_err = max_err(&out.hidden, &reference.hidden);
    let logits_err = max_err(&out.logits, &logits_f64);
    let argmax_agreement = out
        .logits
        .iter()
        .zip(&logits_f64)
        .filter(|(e, f)| plain::argmax(e) == plain::argmax(f))
        .count();
    let min_logit_margin = logits_f64
        .iter()
        .map(|l| {
            let mut v = l.clone();
            v.sort_by(|a, b| b.total_cmp(a));
            v[0] - v.get(1).copied().unwrap_or(f64::NEG_INFINITY)
        })
        .fold(f64::INFINITY, f64::min);
    let accuracy = |logits: &[Vec<f64>]| {
        logits
            .iter()
            .zip(&test.labels)
            .filter(|(l, &c)| plain::argmax(l) == c)
            .count() as f64
            / test.labels.len() as f64
    };
    let total_ms = out.total_ms;
    let bootstraps = out.bootstrap_ms.len();
    let bootstrap_ms_total: f64 = out.bootstrap_ms.iter().sum();
    let bootstrap_ms_mean = bootstrap_ms_total / bootstraps.max(1) as f64;
    let st = out.stages;
    Ok(RnnReport {
        chart: ChartEntry {
            app: "rnn".into(),
            what: format!(
                "{} size, {} steps, latency",
                config.size.name(),
                config.iterations
            ),
            rhea_ms: total_ms,
            device: device.name(),
            peers: vec![(
                "Cheddar, A100 80GB (seed 004)".into(),
                1000.0 * CHEDDAR_A100_80GB_S,
            )],
        },
        app: "rnn".into(),
        size: config.size,
        device: device.to_string(),
        parameters: ParametersReport {
            preset,
            log_n: params.log_n(),
            log_qp: params.log_qp(),
            secure_128: params.security().meets_128_bits,
            user_levels: plan.user_levels,
            bootstrap_depth: boot_config.depth(),
            dnum: params.dnum(),
            bootstrap_slots: boot_config.slots,
        },
        layout: layout.clone(),
        network: NetworkReport {
            data: format!(
                "synthetic word-embedding sequences, two classes ({} neutral and {} class words \
                 a class, class words with probability {}; data seed {}); weights of the same \
                 seed",
                data::NEUTRAL_WORDS,
                data::CLASS_WORDS,
                data::CLASS_WORD_PROBABILITY,
                config.data_seed
            ),
            iterations: config.iterations,
            iterations_per_bootstrap: config.iterations_per_bootstrap,
            units: config.units,
            classes: config.classes,
            tanh_degree: config.tanh_degree,
            tanh_bound: config.tanh_bound,
            tanh_coefficients: tanh.clone(),
            tanh_fit_error: plain::tanh_fit_error(&tanh, config.tanh_bound),
            recurrent_norm: weights.recurrent_norm,
            readout: format!(
                "class centroids of the f64 final states of {} training sequences",
                config.training_sequences
            ),
            input_ciphertexts: config.iterations,
        },
        plan: plan.clone(),
        timing: TimingReport {
            keygen_s: out.keygen_s,
            encrypt_s: out.encrypt_s,
            warm_up_s: out.warm_up_s,
            total_ms,
            ms_per_iteration: total_ms / config.iterations as f64,
            bootstraps,
            bootstrap_ms_mean,
            bootstrap_ms_total,
            bootstrap_floor_ms: bootstraps as f64 * bootstrap_ms_mean,
            linear_ms_total: st.linear,
            activation_ms_total: st.activation,
            output_ms: st.output,
            other_ms: total_ms - bootstrap_ms_total - st.linear - st.activation - st.output,
            keyswitches_per_iteration: out.keyswitches as f64 / config.iterations as f64,
            bootstrap_key_bytes: out.bootstrap_key_bytes,
        },
        hidden_error_bits: -hidden_err.log2(),
        logits_error_bits: -logits_err.log2(),
        argmax_agreement,
        min_logit_margin,
        accuracy_encrypted: accuracy(&out.logits),
        accuracy_f64: accuracy(&logits_f64),
        max_preactivation: max_pre,
        max_hidden: reference.max_hidden.max(trained.max_hidden),
        logits_digest: format!("{:016x}", out.digest),
        cheddar_a100_80gb_s: CHEDDAR_A100_80GB_S,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's level budget and keys, without encrypting anything.
    #[test]
    fn the_paper_plan_fits_three_steps_between_bootstraps() {
        let config = RnnConfig::new(Size::Paper);
        let plan = plan(&config).unwrap();
        eprintln!("{plan:#?}");
        assert_eq!(plan.user_levels, 13);
        // From level 16 down to 3 (SlotToCoeff's three levels lie below).
        assert_eq!((plan.top_level, plan.input_level), (16, 3));
        assert_eq!(plan.levels_per_iteration, 4); // 1 + ⌈log2 8⌉
        assert!(plan.levels_between_bootstraps <= plan.user_levels);
        assert_eq!(plan.step_levels, vec![16, 12, 8]);
        // Before steps 3, 6, …, 198; the last step (199, the second after a bootstrap) leaves
        // the dense layer level 16 − 8 = 8, 5 above the floor.
        assert_eq!(plan.bootstraps, 66);
        assert_eq!(plan.output_level, 8);
        assert_eq!(plan.recurrent_diagonals, 128);
        assert!(
            plan.recurrent_keyswitches <= 24,
            "{}",
            plan.recurrent_keyswitches
        );
        assert_eq!(plan.input_ciphertexts, 200);
        // Fits an 80 GB card with room.
        assert!(
            plan.device_bytes_estimate < 40 << 30,
            "{}",
            plan.device_bytes_estimate
        );
        let (params, boot, _) = config.parameters().unwrap();
        assert!(params.security().meets_128_bits);
        assert_eq!(boot.slots, 4096);
        assert_eq!(params.max_level() - boot.top_depth(), 16);
        assert_eq!(params.default_level(), 16);
        assert_eq!(boot.bottom_depth(), 3);
        // Degree 9 is refused (4 levels: it would fit, but 7 is the largest of depth 3), and
        // four steps between bootstraps would need 16 levels.
        let mut c = RnnConfig::new(Size::Paper);
        c.tanh_degree = 9;
        assert!(plan_err(&c).contains("tanh degree"));
        let mut c = RnnConfig::new(Size::Paper);
        c.iterations_per_bootstrap = 4;
        assert!(plan_err(&c).contains("levels between bootstraps"));
    }

    fn plan_err(c: &RnnConfig) -> String {
        plan(c).unwrap_err().to_string()
    }

    #[test]
    fn the_small_plan_is_the_same_schedule() {
        let config = RnnConfig::new(Size::Small);
        let plan = plan(&config).unwrap();
        assert_eq!(plan.user_levels, 13);
        assert_eq!((plan.top_level, plan.input_level), (16, 3));
        assert_eq!(plan.step_levels, vec![16, 12, 8]);
        // 9 steps: bootstraps before steps 3 and 6; step 8 leaves level 4, one above the floor.
        assert_eq!(plan.bootstraps, 2);
        assert_eq!(plan.output_level, 4);
        let (params, boot, _) = config.parameters().unwrap();
        assert_eq!(params.log_n(), 12);
        assert_eq!(boot.slots, 1024);
    }

    /// The transforms compute `(W_h h + W_x x)/2 ± …` and the dense layer on the layout.
    #[test]
    fn transforms_match_the_matrices_on_the_layout() {
        let layout = Layout {
            log_n: 12,
            units: 8,
            batch: 4,
            slots: 32,
        };
        let w = data::RnnWeights::new(1, 8, 8, 0.8, 0.5);
        let lt = recurrent_transform(&w, &layout).unwrap();
        let mut g = data::Gaussian::new(9);
        let h: Vec<Vec<f64>> = (0..4)
            .map(|_| (0..8).map(|_| g.normal()).collect())
            .collect();
        let x: Vec<Vec<f64>> = (0..4)
            .map(|_| (0..8).map(|_| g.normal()).collect())
            .collect();
        let z: Vec<rhea::ckks::Complex64> = (0..32)
            .map(|s| rhea::ckks::Complex64::new(h[s % 4][s / 4], x[s % 4][s / 4]))
            .collect();
        let y = lt.apply(&z).unwrap();
        for (s, ys) in y.iter().enumerate() {
            let (u, b) = (s / 4, s % 4);
            let want = data::dot(&w.w_h[u], &h[b]) + data::dot(&w.w_x[u], &x[b]);
            assert!((2.0 * ys.re - want).abs() < 1e-12, "{s}");
        }
        let w_o = vec![
            vec![1.0, -2.0, 0.5, 0.0, 1.0, 3.0, -1.0, 0.25],
            vec![0.5; 8],
        ];
        let out = output_transform(&w_o, &layout).unwrap();
        let hz: Vec<rhea::ckks::Complex64> = z
            .iter()
            .map(|c| rhea::ckks::Complex64::new(c.re, 0.0))
            .collect();
        let y = out.apply(&hz).unwrap();
        for b in 0..4 {
            for c in 0..2 {
                let want = data::dot(&w_o[c], &h[b]);
                assert!((y[c * 4 + b].re - want).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn bad_configurations_are_refused() {
        let mut c = RnnConfig::new(Size::Small);
        c.tanh_degree = 4;
        assert!(run(Device::Cpu, &c).is_err());
        let mut c = RnnConfig::new(Size::Small);
        c.batch = 48;
        assert!(run(Device::Cpu, &c)
            .unwrap_err()
            .to_string()
            .contains("slots"));
        let mut c = RnnConfig::new(Size::Small);
        c.recurrent_norm = 1.2;
        assert!(run(Device::Cpu, &c).is_err());
        let mut c = RnnConfig::new(Size::Small);
        c.tanh_bound = 0.5;
        let err = run(Device::Cpu, &c).unwrap_err().to_string();
        assert!(err.contains("outside the tanh interval"), "{err}");
    }
}
