//! What `rhea app rnn` reports: the parameters, the network, the times, the errors.

use super::*;

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
    /// Levels after a bootstrap (the user's).
    pub user_levels: usize,
    /// Levels the bootstrapping consumes.
    pub bootstrap_depth: usize,
    /// Key-switching digits.
    pub dnum: usize,
    /// Slots the bootstrapping refreshes (the ciphertexts').
    pub bootstrap_slots: usize,
}

/// The network and its data.
#[derive(Clone, Debug, Serialize)]
pub struct NetworkReport {
    /// What the data is.
    pub data: String,
    /// Time steps.
    pub iterations: usize,
    /// Steps between bootstraps.
    pub iterations_per_bootstrap: usize,
    /// Units (= the embeddings' dimension).
    pub units: usize,
    /// Classes.
    pub classes: usize,
    /// The tanh polynomial's degree.
    pub tanh_degree: usize,
    /// Its interval `[−bound, bound]`.
    pub tanh_bound: f64,
    /// Its coefficients, constant first.
    pub tanh_coefficients: Vec<f64>,
    /// `max |p − tanh|` on the interval.
    pub tanh_fit_error: f64,
    /// `‖W_h‖₂` (the spectral radius is at most this).
    pub recurrent_norm: f64,
    /// How the dense layer was trained.
    pub readout: String,
    /// Input ciphertexts (one a step, `i·x_t` of every sequence).
    pub input_ciphertexts: usize,
}

/// Where the time went.
#[derive(Clone, Debug, Serialize)]
pub struct TimingReport {
    /// Key generation (the network's and the bootstrapper's keys), seconds.
    pub keygen_s: f64,
    /// Encoding and encrypting every step's embeddings (the client's work), seconds.
    pub encrypt_s: f64,
    /// The untimed warm-up (one bootstrap, three steps, the dense layer, dropped), seconds.
    pub warm_up_s: f64,
    /// The inference, from the encrypted inputs to the encrypted logits, ms.
    pub total_ms: f64,
    /// `total_ms` over the steps.
    pub ms_per_iteration: f64,
    /// Bootstraps.
    pub bootstraps: usize,
    /// Their mean time, ms.
    pub bootstrap_ms_mean: f64,
    /// All of them, ms.
    pub bootstrap_ms_total: f64,
    /// `bootstraps × bootstrap_ms_mean`: what the run cannot go below with this bootstrapping.
    pub bootstrap_floor_ms: f64,
    /// The matrix–vector products (the transform, the conjugation, the bias), ms in all.
    pub linear_ms_total: f64,
    /// The tanh polynomials, ms in all.
    pub activation_ms_total: f64,
    /// The dense layer, ms.
    pub output_ms: f64,
    /// The rest (the loop's synchronisations), ms.
    pub other_ms: f64,
    /// Key switchings a step (bootstraps apart).
    pub keyswitches_per_iteration: f64,
    /// Bytes of the bootstrapper's keys.
    pub bootstrap_key_bytes: u64,
}

/// What `rhea app rnn` reports (JSON with `--json`).
#[derive(Clone, Debug, Serialize)]
pub struct RnnReport {
    /// `rnn`.
    pub app: String,
    /// The size.
    pub size: Size,
    /// The device (`cpu`, `cuda:0`).
    pub device: String,
    /// The parameters.
    pub parameters: ParametersReport,
    /// The packing.
    pub layout: Layout,
    /// The network.
    pub network: NetworkReport,
    /// The plan (levels, keys, memory).
    pub plan: RnnPlan,
    /// The times.
    pub timing: TimingReport,
    /// `−log2` of the largest `|h_T,enc − h_T,f64|` over every unit and sequence.
    pub hidden_error_bits: f64,
    /// `−log2` of the largest logit error.
    pub logits_error_bits: f64,
    /// Sequences whose encrypted logits have the f64 logits' argmax.
    pub argmax_agreement: usize,
    /// The smallest gap between the two largest f64 logits of a sequence.
    pub min_logit_margin: f64,
    /// Accuracy of the encrypted inference on the batch's labels (synthetic data).
    pub accuracy_encrypted: f64,
    /// Accuracy of the f64 inference on them.
    pub accuracy_f64: f64,
    /// The largest `|pre-activation|` of the f64 run (inside the tanh interval).
    pub max_preactivation: f64,
    /// The largest `|h_t|` of the f64 run (what bootstrapping refreshes).
    pub max_hidden: f64,
    /// FNV-1a of the logits ciphertext's words (hex): equal on every device for a seeded run.
    pub logits_digest: String,
    /// The seed's figure for this workload: Cheddar's 4.33 s on an A100 80GB (Table 4).
    pub cheddar_a100_80gb_s: f64,
    /// The latency against Cheddar's, for the results chart (`rhea app-chart`).
    pub chart: ChartEntry,
}

impl RnnReport {
    /// A human-readable summary.
    pub fn table(&self) -> String {
        let t = &self.timing;
        let p = &self.parameters;
        let l = &self.layout;
        let n = &self.network;
        let iters = n.iterations as f64;
        let mut s = String::new();
        s += &format!(
            "RNN ({} size) on {}: N = 2^{}, {}{}\n",
            self.size.name(),
            self.device,
            p.log_n,
            p.preset,
            if p.secure_128 { ", 128-bit" } else { "" }
        );
        s += &format!(
            "  {} units, {} sequences a ciphertext ({} slots), {} steps, bootstrapping every {} \
             ({} levels a step, {} after a bootstrap); tanh of degree {} on ±{}\n",
            l.units,
            l.batch,
            l.slots,
            n.iterations,
            n.iterations_per_bootstrap,
            self.plan.levels_per_iteration,
            p.user_levels,
            n.tanh_degree,
            n.tanh_bound
        );
        s += &format!(
            "  keys {:.1} s, encryption of {} inputs {:.1} s, warm-up {:.1} s (untimed)\n",
            t.keygen_s, n.input_ciphertexts, t.encrypt_s, t.warm_up_s
        );
        s += &format!(
            "  latency             {:>9.1} ms  ({:.2} ms a step; {} bootstrap{} of {:.1} ms = \
             floor {:.1} ms, {:.0} %)\n",
            t.total_ms,
            t.ms_per_iteration,
            t.bootstraps,
            if t.bootstraps == 1 { "" } else { "s" },
            t.bootstrap_ms_mean,
            t.bootstrap_floor_ms,
            100.0 * t.bootstrap_ms_total / t.total_ms.max(1e-9)
        );
        s += &format!(
            "  stages              bootstrapping {:.1} ms, linear {:.1} ms ({:.2} a step), tanh \
             {:.1} ms ({:.2} a step), dense layer {:.1} ms, other {:.1} ms; {:.0} key \
             switchings a step\n",
            t.bootstrap_ms_total,
            t.linear_ms_total,
            t.linear_ms_total / iters,
            t.activation_ms_total,
            t.activation_ms_total / iters,
            t.output_ms,
            t.other_ms,
            t.keyswitches_per_iteration
        );
        if self.size == Size::Paper {
            s += &format!("  Cheddar (A100 80GB, seed 004's Table 4): {CHEDDAR_A100_80GB_S} s\n");
        }
        s += &format!(
            "  against f64         hidden state {:.1} bits, logits {:.1} bits; argmax agrees on \
             {} of {} (smallest f64 margin {:.3})\n",
            self.hidden_error_bits,
            self.logits_error_bits,
            self.argmax_agreement,
            l.batch,
            self.min_logit_margin
        );
        s += &format!(
            "  accuracy            encrypted {:.2} %, f64 {:.2} % (the batch's synthetic \
             labels); largest pre-activation {:.3} (fit on ±{}), largest |h| {:.3}\n",
            100.0 * self.accuracy_encrypted,
            100.0 * self.accuracy_f64,
            self.max_preactivation,
            n.tanh_bound,
            self.max_hidden
        );
        s
    }
}
