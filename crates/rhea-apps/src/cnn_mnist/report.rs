//! What `rhea app cnn-mnist` reports: the training, the quantisation, the times, the checks.

use super::*;

/// The f64 training (at run time, deterministic).
#[derive(Clone, Debug, Serialize)]
pub struct TrainingReport {
    /// Training images (synthetic).
    pub images: usize,
    /// Epochs.
    pub epochs: usize,
    /// The initial learning rate.
    pub learning_rate: f64,
    /// Seconds.
    pub seconds: f64,
}

/// The quantisation (seed layout).
#[derive(Clone, Debug, Serialize)]
pub struct QuantReport {
    /// Pixel bits.
    pub input_bits: u32,
    /// Weight bits of the conv, hidden and output layers.
    pub weight_bits: [u32; 3],
    /// The integer logits are about this times the f64 ones.
    pub logit_scale: f64,
    /// `log2` of the largest integer logit on the encrypted batch (below `log2(t/2)`).
    pub max_logit_bits: f64,
    /// `log2(t)`.
    pub t_bits: f64,
    /// Held-out accuracy of the quantised integer network.
    pub accuracy_quantised: f64,
}

/// The times.
#[derive(Clone, Debug, Serialize)]
pub struct TimingReport {
    /// Key generation, s.
    pub keygen_s: f64,
    /// Encrypting the batch (the client's work), s.
    pub encrypt_s: f64,
    /// The untimed warm-up (packed: one inference), s.
    pub warm_up_s: f64,
    /// One inference of the batch on ciphertexts, s.
    pub latency_s: f64,
    /// Its stages.
    pub stages: Stages,
    /// Decrypting and decoding, s.
    pub decrypt_s: f64,
    /// Images per second (the batch over the latency).
    pub images_per_s: f64,
    /// The latency divided by the batch, ms.
    pub amortised_ms_per_image: f64,
    /// Bootstraps (none) and the bootstrap floor (0 s).
    pub bootstraps: usize,
}

/// What `rhea app cnn-mnist` reports (JSON with `--json`).
#[derive(Clone, Debug, Serialize)]
pub struct CnnReport {
    /// `cnn-mnist`.
    pub app: String,
    /// The size.
    pub size: Size,
    /// The layout.
    pub layout: Layout,
    /// The device.
    pub device: String,
    /// The plan (parameters, counts, memory).
    pub plan: Plan,
    /// What the data is.
    pub data: String,
    /// The f64 training.
    pub training: TrainingReport,
    /// Held-out accuracy of the f64 network (`held_out_images` images).
    pub accuracy_f64: f64,
    /// The quantisation (seed layout).
    pub quantisation: Option<QuantReport>,
    /// Images encrypted and inferred.
    pub images: usize,
    /// The op counts executed.
    pub ops: OpCounts,
    /// The seed's Table 7 columns.
    pub seed_table7: OpCounts,
    /// The times.
    pub timing: TimingReport,
    /// Accuracy of the encrypted inference on the encrypted images.
    pub accuracy_encrypted: f64,
    /// Accuracy of the plaintext reference (integer for BGV, f64 for CKKS) on the same images.
    pub accuracy_reference: f64,
    /// Images on which the encrypted argmax equals the reference's.
    pub argmax_agreement: f64,
    /// BGV: every decrypted logit equals the integer reference's.
    pub exact_logits: Option<bool>,
    /// CKKS: `−log2` of the largest logit error against f64 over the largest |logit|.
    pub error_bits: Option<f64>,
    /// BGV: the smallest noise budget left in the outputs, bits.
    pub noise_budget_bits: Option<u32>,
    /// BGV: the levels (fresh, after each activation, of the logits).
    pub levels: Option<[usize; 4]>,
    /// HE-Booster's figure, s per image (seed layout, RTX 3070).
    pub he_booster_s_per_image: f64,
    /// The latency of one inference against HE-Booster's, for the results chart (`rhea app-chart`).
    pub chart: ChartEntry,
}

impl CnnReport {
    /// A human-readable summary.
    pub fn table(&self) -> String {
        let p = &self.plan;
        let t = &self.timing;
        let st = &t.stages;
        let mut s = String::new();
        s += &format!(
            "CNN-MNIST ({} size, {} layout) on {}: {}{}\n",
            self.size.name(),
            self.layout.name(),
            self.device,
            p.parameters,
            if p.secure_128 { ", 128-bit" } else { "" }
        );
        s += &format!(
            "  data: {}\n  f64 network trained on {} images, {} epochs in {:.1} s: held-out \
             accuracy {:.2} %\n",
            self.data,
            self.training.images,
            self.training.epochs,
            self.training.seconds,
            100.0 * self.accuracy_f64
        );
        if let Some(q) = &self.quantisation {
            s += &format!(
                "  quantised: pixels {} bits, weights {:?} bits, t {:.1} bits, largest logit \
                 2^{:.1}: held-out accuracy {:.2} %\n",
                q.input_bits,
                q.weight_bits,
                q.t_bits,
                q.max_logit_bits,
                100.0 * q.accuracy_quantised
            );
        }
        s += &format!(
            "  batch of {} images in {} ciphertexts; keys {:.1} s, encryption {:.1} s, \
             decryption {:.2} s\n",
            self.images, p.input_ciphertexts, t.keygen_s, t.encrypt_s, t.decrypt_s
        );
        s += &format!(
            "  latency {:>9.3} s  (conv {:.3}, act {:.3}, dense {:.3}, act {:.3}, dense {:.3}); \
             {:.1} images/s, {:.3} ms an image amortised; no bootstrapping\n",
            t.latency_s,
            st.conv,
            st.act1,
            st.dense1,
            st.act2,
            st.dense2,
            t.images_per_s,
            t.amortised_ms_per_image
        );
        let o = &self.ops;
        let k = &self.seed_table7;
        s += &format!(
            "  ops: PT-CT mults {}, CT-CT adds {}, PT-CT adds {}, CT-CT mults {}{} (seed's \
             Table 7: {}, {}, {}, {})\n",
            o.pt_ct_mults,
            o.ct_ct_adds,
            o.pt_ct_adds,
            o.ct_ct_mults,
            if o.keyswitches > 0 {
                format!(", key switchings {}", o.keyswitches)
            } else {
                String::new()
            },
            k.pt_ct_mults,
            k.ct_ct_adds,
            k.pt_ct_adds,
            k.ct_ct_mults
        );
        s += &format!(
            "  HE-Booster (seed 003, {HE_BOOSTER_GPU}, seed layout): {} s per image\n",
            self.he_booster_s_per_image
        );
        s += &format!(
            "  encrypted accuracy {:.2} % (reference on the same images {:.2} %), argmax \
             agreement {:.2} %",
            100.0 * self.accuracy_encrypted,
            100.0 * self.accuracy_reference,
            100.0 * self.argmax_agreement
        );
        if let Some(exact) = self.exact_logits {
            s += &format!(
                ", logits {} the integer reference's (noise budget left {} bits)",
                if exact { "exactly" } else { "NOT" },
                self.noise_budget_bits
                    .map_or("?".to_string(), |b| b.to_string())
            );
        }
        if let Some(bits) = self.error_bits {
            s += &format!(", logits within 2^-{bits:.1} (relative) of f64");
        }
        s += "\n";
        s
    }
}
