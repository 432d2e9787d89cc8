//! **HELR**: logistic-regression *training* on encrypted data, as seed 004 (Cheddar) runs it after
//! Han et al., "Logistic Regression on Homomorphically Encrypted Data at Scale" (AAAI 2019):
//! mini-batches of 1024 samples of 14 × 14 = 196 pixels, 32 iterations (a new batch each),
//! Nesterov's accelerated gradient, the sigmoid by a degree-3 least-squares polynomial on
//! `[−8, 8]`, bootstrapping in the loop (every two iterations: five levels an iteration, 13 after
//! a bootstrap). Measured: the time per iteration (bootstrapping included, and apart), and the
//! trained model against the same training in f64 — held-out accuracy of both, agreement of
//! their predictions, and the largest error of the encrypted weights in bits.
//!
//! ```no_run
//! use rhea_apps::helr::{self, HelrConfig, Size};
//! use rhea::Device;
//!
//! let report = helr::run(Device::Cpu, &HelrConfig::new(Size::Small))?;
//! println!("{}", report.table());
//! assert!((report.accuracy_encrypted - report.accuracy_f64).abs() < 0.02);
//! # Ok::<(), rhea::Error>(())
//! ```
//!
//! **Sizes.** [`Size::Paper`]: the 128-bit preset `boot_n16_levels13` (N = 2^16, 2^15 slots,
//! 13 levels of Δ = 2^40 after each bootstrap), 128 samples × 256 features (196 pixels, the bias,
//! zeros) a ciphertext, 8 ciphertexts a batch of 1024. [`Size::Small`]: the same chain layout and
//! code at N = 2^12 (**INSECURE**, for tests and CPUs: `boot_test_n12_insecure` with 13 user
//! levels instead of 2), 8 samples × 256 features a ciphertext, 8 ciphertexts a batch of 64.
//!
//! **Data** ([`data`]): synthetic, deterministic, two classes of 14 × 14 images with pixels in
//! `[0, 1]`; nothing is downloaded. **Training** ([`plain`]): from `w = v = 0`, for batch `t`
//! of `n` samples with rows `z_i = y_i·(1, x_i)`: `w' = v + (γ/n) Σ_i σ̃(−z_iᵀv) z_i`,
//! `v' = w' + β_t (w' − w)`, `γ = 0.1`, Nesterov's `β_t`. How the ciphertexts carry it: the
//! [`encrypted`] module's docs.

use serde::Serialize;

pub mod data;
pub mod encrypted;
pub mod plain;

use crate::chart::ChartEntry;
pub use crate::Size;
use rhea::ckks::bootstrap::BootstrapConfig;
use rhea::params::CkksParameters;
use rhea::{Device, Error, Result};

/// The Cheddar figure seed 004's README gives for HELR on an H100 (PCIe), ms per iteration.
pub const CHEDDAR_H100_MS_PER_ITERATION: f64 = 40.7;

/// What to run.
#[derive(Clone, Debug)]
pub struct HelrConfig {
    /// The size (parameters and batch).
    pub size: Size,
    /// Iterations, one batch each (32 in the seed).
    pub iterations: usize,
    /// The sigmoid polynomial's degree: odd, 1 to 7 (3 in Han et al.; 5 costs one level more
    /// an iteration and, with 13 levels, no more bootstraps).
    pub sigmoid_degree: usize,
    /// The interval `[−bound, bound]` of the least-squares fit (8 in Han et al.).
    pub sigmoid_bound: f64,
    /// The learning rate `γ`.
    pub learning_rate: f64,
    /// The ciphertexts hold the weights divided by this (bootstrapping refreshes values below
    /// 1); the f64 training's largest weight over it must stay below 0.9.
    pub weight_scale: f64,
    /// Held-out samples for the accuracy.
    pub test_samples: usize,
    /// The data set's seed.
    pub data_seed: u64,
    /// The seed of the keys and the encryptions (`None`: the operating system's randomness).
    /// With a seed, a run is reproducible word for word, on the CPU and the GPU alike.
    pub key_seed: Option<[u8; 32]>,
}

impl HelrConfig {
    /// The seed's run at `size`: 32 iterations, degree 3 on `[−8, 8]`, `γ = 0.1`, weights over
    /// 2, 2048 held-out samples.
    pub fn new(size: Size) -> Self {
        Self {
            size,
            iterations: 32,
            sigmoid_degree: 3,
            sigmoid_bound: 8.0,
            learning_rate: 0.1,
            weight_scale: 2.0,
            test_samples: 2048,
            data_seed: 2019,
            key_seed: None,
        }
    }

    /// This configuration with the keys and encryptions drawn from `seed` (its 8 little-endian
    /// bytes, four times): a reproducible run, the same words on every device
    /// (`rhea app helr --seed S`).
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
        let log_n = match self.size {
            Size::Small => 12,
            Size::Paper => 16,
        };
        Layout::new(log_n)
    }

    /// The parameters, the bootstrapping configuration and the preset's name at this size.
    pub fn parameters(&self) -> Result<(CkksParameters, BootstrapConfig, String)> {
        self.size.bootstrappable_parameters()
    }

    fn check(&self) -> Result<()> {
        let bad = |what: String| Err(Error::InvalidInput(format!("helr: {what}")));
        if self.iterations == 0 {
            return bad("at least one iteration".into());
        }
        if self.sigmoid_degree % 2 == 0 || self.sigmoid_degree > 7 {
            return bad(format!(
                "sigmoid degree {} (odd, 1 to 7)",
                self.sigmoid_degree
            ));
        }
        for (name, x) in [
            ("sigmoid bound", self.sigmoid_bound),
            ("learning rate", self.learning_rate),
            ("weight scale", self.weight_scale),
        ] {
            if !(x.is_finite() && x > 0.0) {
                return bad(format!("{name} {x} (positive and finite)"));
            }
        }
        if self.test_samples == 0 {
            return bad("at least one held-out sample".into());
        }
        Ok(())
    }
}

/// The packing (feature-major; see [`encrypted`]).
#[derive(Clone, Debug, Serialize)]
pub struct Layout {
    /// `log2 N`.
    pub log_n: u32,
    /// Slots (`N/2`).
    pub slots: usize,
    /// Real features: the bias and 196 pixels.
    pub features: usize,
    /// Features a ciphertext holds per sample (a power of two).
    pub padded_features: usize,
    /// Samples a ciphertext holds (`slots / padded_features`).
    pub samples_per_ciphertext: usize,
    /// Real ciphertexts a batch (8; they travel as 4 complex ones).
    pub ciphertexts_per_batch: usize,
    /// Samples a batch.
    pub batch: usize,
}

impl Layout {
    /// The layout at `N = 2^log_n`: 197 features padded to 256, 8 ciphertexts a batch.
    pub fn new(log_n: u32) -> Self {
        let slots = 1usize << (log_n - 1);
        let features = data::PIXELS + 1;
        let padded_features = features.next_power_of_two();
        let samples_per_ciphertext = slots / padded_features;
        let ciphertexts_per_batch = 8;
        Self {
            log_n,
            slots,
            features,
            padded_features,
            samples_per_ciphertext,
            ciphertexts_per_batch,
            batch: samples_per_ciphertext * ciphertexts_per_batch,
        }
    }
}

/// The parameters of a run.
#[derive(Clone, Debug, Serialize)]
pub struct ParametersReport {
    /// The preset.
    pub preset: String,
    /// `log2 N`.
    pub log_n: u32,
    /// `log2(QP)`.
    pub log_qp: f64,
    /// Whether they meet 128-bit security.
    pub secure_128: bool,
    /// Levels after a bootstrap (the user's): from [`ParametersReport::output_level`] down to
    /// [`ParametersReport::input_level`].
    pub user_levels: usize,
    /// The level a bootstrap lands on (fresh ciphertexts too).
    pub output_level: usize,
    /// The lowest level a ciphertext is bootstrapped from (SlotToCoeff's levels lie below it).
    pub input_level: usize,
    /// Levels the bootstrapping consumes (at the top of the chain and at its bottom).
    pub bootstrap_depth: usize,
    /// Key-switching digits.
    pub dnum: usize,
}

impl ParametersReport {
    /// The report of `params` (the preset `preset`) bootstrapped by `boot`: the user's levels
    /// run from the default level (where a bootstrap lands) down to `boot`'s bottom levels.
    pub fn new(preset: String, params: &CkksParameters, boot: &BootstrapConfig) -> Self {
        let (output_level, input_level) = (params.default_level(), boot.bottom_depth());
        Self {
            preset,
            log_n: params.log_n(),
            log_qp: params.log_qp(),
            secure_128: params.security().meets_128_bits,
            user_levels: output_level.saturating_sub(input_level),
            output_level,
            input_level,
            bootstrap_depth: boot.depth(),
            dnum: params.dnum(),
        }
    }
}

/// The training's settings.
#[derive(Clone, Debug, Serialize)]
pub struct TrainingReport {
    /// What the data is.
    pub data: String,
    /// Iterations (one batch each).
    pub iterations: usize,
    /// Training samples (`iterations × batch`).
    pub training_samples: usize,
    /// Held-out samples.
    pub test_samples: usize,
    /// The sigmoid polynomial's degree and interval.
    pub sigmoid_degree: usize,
    /// The fit's interval `[−bound, bound]`.
    pub sigmoid_bound: f64,
    /// Its coefficients, constant first.
    pub sigmoid_coefficients: Vec<f64>,
    /// The learning rate.
    pub learning_rate: f64,
    /// The optimiser.
    pub optimizer: String,
    /// The weights' divisor in the ciphertexts.
    pub weight_scale: f64,
    /// Levels an iteration consumes.
    pub levels_per_iteration: usize,
}

/// Where the time went.
#[derive(Clone, Debug, Serialize)]
pub struct TimingReport {
    /// Key generation (relinearisation, rotations, the bootstrapper's), seconds.
    pub keygen_s: f64,
    /// Encoding and encrypting every batch (the client's work), seconds.
    pub encrypt_s: f64,
    /// The untimed warm-up (one bootstrapping and one iteration, dropped), seconds.
    pub warm_up_s: f64,
    /// The whole training, bootstrappings included, ms per iteration.
    pub ms_per_iteration: f64,
    /// Each iteration, its bootstrapping (if it began with one) included, ms.
    pub iteration_ms: Vec<f64>,
    /// Bootstrappings (each refreshes `v` and `w` together).
    pub bootstraps: usize,
    /// Each bootstrapping, ms.
    pub bootstrap_ms: Vec<f64>,
    /// All bootstrappings, ms.
    pub bootstrap_ms_total: f64,
    /// Everything else of the training, ms.
    pub rest_ms_total: f64,
    /// The rest by stage, ms in all: `Z ⊙ v` and the sums over the features.
    pub inner_products_ms_total: f64,
    /// The sigmoid (conjugations, the polynomials), ms in all.
    pub sigmoid_ms_total: f64,
    /// The gradient (products by `Z`, sums over pairs and samples, mask, replication), ms.
    pub gradient_ms_total: f64,
    /// Nesterov's update, ms in all.
    pub update_ms_total: f64,
    /// Key switchings an iteration (bootstrappings apart).
    pub keyswitches_per_iteration: f64,
    /// Galois keys of the training (the bootstrapper's apart, conjugation included).
    pub galois_keys: usize,
    /// Bytes of the bootstrapper's keys.
    pub bootstrap_key_bytes: u64,
}

/// What `rhea app helr` reports (JSON with `--json`).
#[derive(Clone, Debug, Serialize)]
pub struct HelrReport {
    /// `helr`.
    pub app: String,
    /// The size.
    pub size: Size,
    /// The device (`cpu`, `cuda:0`).
    pub device: String,
    /// The parameters.
    pub parameters: ParametersReport,
    /// The packing.
    pub layout: Layout,
    /// The training.
    pub training: TrainingReport,
    /// The times.
    pub timing: TimingReport,
    /// Held-out accuracy of the model trained on ciphertexts.
    pub accuracy_encrypted: f64,
    /// Held-out accuracy of the same training in f64.
    pub accuracy_f64: f64,
    /// Held-out samples on which the two models predict the same class.
    pub prediction_agreement: f64,
    /// `−log2` of the largest `|w_enc − w_f64|` over the weights (every replica in the slots).
    pub weight_error_bits: f64,
    /// The largest `|w_f64|`.
    pub weight_max_abs: f64,
    /// The largest `|z_iᵀv|` of the f64 training (the polynomial is fitted on
    /// `[−bound, bound]`; beyond it both trainings use the same, worse, sigmoid).
    pub max_sigmoid_input: f64,
    /// FNV-1a of the final weight ciphertext's words (hex): equal on every device for a seeded
    /// run.
    pub weights_digest: String,
    /// The time per iteration against Cheddar's, for the results chart (`rhea app-chart`).
    pub chart: ChartEntry,
}

impl HelrReport {
    /// A human-readable summary.
    pub fn table(&self) -> String {
        let t = &self.timing;
        let p = &self.parameters;
        let l = &self.layout;
        let mut s = String::new();
        s += &format!(
            "HELR ({} size) on {}: N = 2^{}, {}{}\n",
            self.size.name(),
            self.device,
            p.log_n,
            p.preset,
            if p.secure_128 { ", 128-bit" } else { "" }
        );
        s += &format!(
            "  {} iterations, batches of {} ({} samples × {} features a ciphertext, {} \
             ciphertexts), {} levels an iteration, {} after a bootstrap\n",
            self.training.iterations,
            l.batch,
            l.samples_per_ciphertext,
            l.padded_features,
            l.ciphertexts_per_batch,
            self.training.levels_per_iteration,
            p.user_levels
        );
        s += &format!(
            "  keys {:.1} s, encryption {:.1} s, warm-up {:.1} s (one bootstrap and one \
             iteration, untimed)\n",
            t.keygen_s, t.encrypt_s, t.warm_up_s
        );
        let bootstraps = match t.bootstraps {
            0 => "no bootstrap".to_string(),
            b => format!(
                "{b} bootstrap{} of {:.1} ms",
                if b == 1 { "" } else { "s" },
                t.bootstrap_ms_total / b as f64
            ),
        };
        s += &format!(
            "  time per iteration  {:>9.1} ms  ({bootstraps}; {:.1} ms an iteration without \
             them; {:.0} key switchings an iteration)\n",
            t.ms_per_iteration,
            t.rest_ms_total / self.training.iterations as f64,
            t.keyswitches_per_iteration
        );
        let per = |x: f64| x / self.training.iterations as f64;
        s += &format!(
            "  an iteration's stages: bootstrapping {:.1} ms (amortised), inner products {:.1}, \
             sigmoid {:.1}, gradient {:.1}, update {:.1} ms; bootstrapping is {:.0} % of the \
             time\n",
            per(t.bootstrap_ms_total),
            per(t.inner_products_ms_total),
            per(t.sigmoid_ms_total),
            per(t.gradient_ms_total),
            per(t.update_ms_total),
            100.0 * t.bootstrap_ms_total / (t.bootstrap_ms_total + t.rest_ms_total).max(1e-9)
        );
        if self.size == Size::Paper {
            s += &format!(
                "  Cheddar (H100 PCIe, seed 004's README): {CHEDDAR_H100_MS_PER_ITERATION} ms \
                 per iteration\n"
            );
        }
        s += &format!(
            "  held-out accuracy   encrypted {:.2} %, f64 {:.2} % ({} samples; predictions \
             agree on {:.2} %)\n",
            100.0 * self.accuracy_encrypted,
            100.0 * self.accuracy_f64,
            self.training.test_samples,
            100.0 * self.prediction_agreement
        );
        s += &format!(
            "  weights             {:.1} bits against f64 (largest |w| {:.3}); largest sigmoid \
             input {:.2} (fit on ±{})\n",
            self.weight_error_bits,
            self.weight_max_abs,
            self.max_sigmoid_input,
            self.training.sigmoid_bound
        );
        s
    }
}

/// Runs HELR on `device`: generates the data, trains in f64, trains on ciphertexts, compares.
///
/// Errors: [`Error::InvalidInput`] for a bad configuration, or when the f64 training's weights
/// reach `0.9 × weight_scale` (raise [`HelrConfig::weight_scale`]: bootstrapping refreshes
/// values below 1); the library's errors (device, memory).
pub fn run(device: Device, config: &HelrConfig) -> Result<HelrReport> {
    config.check()?;
    let layout = config.layout();
    let (params, boot_config, preset) = config.parameters()?;

    let mut generator = data::Generator::new(config.data_seed);
    let batches: Vec<Vec<Vec<f64>>> = (0..config.iterations)
        .map(|_| generator.samples(layout.batch).z_rows())
        .collect();
    let test = generator.samples(config.test_samples);

    let sigmoid = plain::sigmoid_least_squares(config.sigmoid_degree, config.sigmoid_bound);
    let reference = plain::train(&batches, &sigmoid, config.learning_rate);
    if reference.max_weight >= 0.9 * config.weight_scale {
        return Err(Error::InvalidInput(format!(
            "helr: the weights reach {:.3} in f64, too close to the weight scale {} (the \
             ciphertexts hold w / scale, which bootstrapping needs below 1): raise it",
            reference.max_weight, config.weight_scale
        )));
    }

    let job = encrypted::Job {
        device,
        params: &params,
        boot_config: boot_config.clone(),
        layout: layout.clone(),
        batches: &batches,
        sigmoid: &sigmoid,
        learning_rate: config.learning_rate,
        weight_scale: config.weight_scale,
        key_seed: config.key_seed,
    };
    let out = encrypted::train(&job)?;

    let s = layout.samples_per_ciphertext;
    let w_enc: Vec<f64> = (0..layout.features).map(|f| out.slots[f * s]).collect();
    let max_err = out
        .slots
        .iter()
        .enumerate()
        .map(|(slot, &got)| {
            let want = reference.w.get(slot / s).copied().unwrap_or(0.0);
            (got - want).abs()
        })
        .fold(0.0f64, f64::max);
    let weight_max_abs = reference.w.iter().fold(0.0f64, |m, w| m.max(w.abs()));
    let train_ms: f64 = out.iteration_ms.iter().sum();
    let bootstrap_ms_total: f64 = out.bootstrap_ms.iter().sum();
    let ms_per_iteration = train_ms / config.iterations as f64;
    Ok(HelrReport {
        chart: ChartEntry {
            app: "helr".into(),
            what: format!("{} size, ms per iteration", config.size.name()),
            rhea_ms: ms_per_iteration,
            device: device.name(),
            peers: vec![(
                "Cheddar, H100 PCIe (seed 004)".into(),
                CHEDDAR_H100_MS_PER_ITERATION,
            )],
        },
        app: "helr".into(),
        size: config.size,
        device: device.to_string(),
        parameters: ParametersReport::new(preset, &params, &boot_config),
        layout: layout.clone(),
        training: TrainingReport {
            data: format!(
                "synthetic: two classes of 14×14 images, pixels in [0, 1] (data seed {})",
                config.data_seed
            ),
            iterations: config.iterations,
            training_samples: config.iterations * layout.batch,
            test_samples: config.test_samples,
            sigmoid_degree: config.sigmoid_degree,
            sigmoid_bound: config.sigmoid_bound,
            sigmoid_coefficients: sigmoid.clone(),
            learning_rate: config.learning_rate,
            optimizer: "Nesterov's accelerated gradient (Han et al.)".into(),
            weight_scale: config.weight_scale,
            levels_per_iteration: out.levels_per_iteration,
        },
        timing: TimingReport {
            keygen_s: out.keygen_s,
            encrypt_s: out.encrypt_s,
            warm_up_s: out.warm_up_s,
            ms_per_iteration,
            iteration_ms: out.iteration_ms.clone(),
            bootstraps: out.bootstrap_ms.len(),
            bootstrap_ms: out.bootstrap_ms.clone(),
            bootstrap_ms_total,
            rest_ms_total: train_ms - bootstrap_ms_total,
            inner_products_ms_total: out.stages.inner_products,
            sigmoid_ms_total: out.stages.sigmoid,
            gradient_ms_total: out.stages.gradient,
            update_ms_total: out.stages.update,
            keyswitches_per_iteration: out.keyswitches as f64 / config.iterations as f64,
            galois_keys: out.galois_keys,
            bootstrap_key_bytes: out.bootstrap_key_bytes,
        },
        accuracy_encrypted: plain::accuracy(&w_enc, &test),
        accuracy_f64: plain::accuracy(&reference.w, &test),
        prediction_agreement: plain::agreement(&w_enc, &reference.w, &test),
        weight_error_bits: -max_err.log2(),
        weight_max_abs,
        max_sigmoid_input: reference.max_sigmoid_input,
        weights_digest: format!("{:016x}", out.digest),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_have_the_papers_shape() {
        let paper = HelrConfig::new(Size::Paper).layout();
        assert_eq!(
            (
                paper.samples_per_ciphertext,
                paper.padded_features,
                paper.batch
            ),
            (128, 256, 1024)
        );
        let small = HelrConfig::new(Size::Small).layout();
        assert_eq!((small.samples_per_ciphertext, small.batch), (8, 64));
    }

    #[test]
    fn the_small_chain_leaves_13_levels_after_bootstrapping() {
        let (params, config, _) = HelrConfig::new(Size::Small).parameters().unwrap();
        // A bootstrap lands on level 16 and takes ciphertexts from level 3 (SlotToCoeff's
        // three levels lie below): 13 levels for the iterations.
        assert_eq!(params.default_level(), 16);
        assert_eq!(params.max_level() - config.top_depth(), 16);
        assert_eq!(config.bottom_depth(), 3);
        assert_eq!(params.log_n(), 12);
    }

    #[test]
    fn bad_configurations_are_refused() {
        let mut c = HelrConfig::new(Size::Small);
        c.sigmoid_degree = 4;
        assert!(run(Device::Cpu, &c).is_err());
        let mut c = HelrConfig::new(Size::Small);
        c.iterations = 0;
        assert!(run(Device::Cpu, &c).is_err());
        let mut c = HelrConfig::new(Size::Small);
        c.weight_scale = 0.1;
        let err = run(Device::Cpu, &c).unwrap_err().to_string();
        assert!(err.contains("weight scale"), "{err}");
        assert!(Size::parse("huge").is_err());
    }
}
