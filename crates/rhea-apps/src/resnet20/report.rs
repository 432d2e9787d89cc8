//! What a ResNet-20 run reports: where the time went and the comparison with f64.

use serde::Serialize;

use super::plain::Arch;
use super::{Plan, CHEDDAR_A100_S, CHEDDAR_H100_S};
use crate::chart::ChartEntry;
use crate::helr::ParametersReport;
use crate::size::Size;

/// Where the time went (ms unless named otherwise).
#[derive(Clone, Debug, Serialize)]
pub struct TimingReport {
    /// Key generation (the maps' rotations, relinearisation, the bootstrapper's), seconds.
    pub keygen_s: f64,
    /// Building the maps' diagonals on the host, seconds.
    pub build_s: f64,
    /// Encoding and encrypting the image.
    pub encrypt_ms: f64,
    /// The untimed warm-up inference (it encodes every map's diagonals, whole or compact),
    /// seconds.
    pub warm_up_s: f64,
    /// The inference: bootstrapping, maps (the compact ones' expansion included), ReLUs, the
    /// rest.
    pub latency_ms: f64,
    /// Bootstraps.
    pub bootstraps: usize,
    /// All bootstrapping.
    pub bootstrap_ms: f64,
    /// The mean bootstrap.
    pub bootstrap_mean_ms: f64,
    /// The linear maps (convolutions, shortcuts, biases, pooling + dense).
    pub linear_ms: f64,
    /// The ReLUs (and the drops to the maps' level).
    pub relu_ms: f64,
    /// Everything else (decryption apart).
    pub other_ms: f64,
    /// Key switchings of the maps' evaluations (bootstrapping and the ReLUs apart).
    pub keyswitches: u64,
    /// Bytes of the bootstrapper's keys.
    pub bootstrap_key_bytes: u64,
    /// Bytes of the maps' rotation keys.
    pub rotation_key_bytes: u64,
}

/// What `rhea app resnet20` reports (JSON with `--json`).
#[derive(Clone, Debug, Serialize)]
pub struct ResnetReport {
    /// `resnet20`.
    pub app: String,
    /// The size.
    pub size: Size,
    /// The device.
    pub device: String,
    /// The parameters.
    pub parameters: ParametersReport,
    /// The network.
    pub arch: Arch,
    /// What the weights and the image are.
    pub data: String,
    /// The plan.
    pub plan: Plan,
    /// The ReLU bounds `B` of the convolutions.
    pub relu_bounds: Vec<f64>,
    /// The times.
    pub timing: TimingReport,
    /// The decrypted logits.
    pub logits_encrypted: Vec<f64>,
    /// The same network (polynomial ReLU, same bounds) in `f64`.
    pub logits_f64: Vec<f64>,
    /// The network with the exact ReLU in `f64`.
    pub logits_exact_relu: Vec<f64>,
    /// `−log2 max |encrypted − f64|` over the logits.
    pub logit_error_bits: f64,
    /// The largest `|logit|` of the f64 run.
    pub logit_max_abs: f64,
    /// The encrypted argmax equals the f64 one.
    pub argmax_agrees: bool,
    /// The encrypted argmax equals the exact-ReLU network's.
    pub argmax_agrees_exact_relu: bool,
    /// The class the encrypted inference gives.
    pub argmax: usize,
    /// `−log2 max |f64 polynomial − exact ReLU|` over the logits (the approximation's cost).
    pub polynomial_vs_exact_bits: f64,
    /// The latency (encodings included) against Cheddar's, for the results chart (`rhea app-chart`).
    pub chart: ChartEntry,
}

impl ResnetReport {
    /// A human-readable summary.
    pub fn table(&self) -> String {
        let t = &self.timing;
        let p = &self.parameters;
        let pl = &self.plan;
        let mut s = String::new();
        s += &format!(
            "ResNet-20 ({} size) on {}: N = 2^{}, {}{}\n",
            self.size.name(),
            self.device,
            p.log_n,
            p.preset,
            if p.secure_128 { ", 128-bit" } else { "" }
        );
        s += &format!(
            "  {}×{}×{} input, stages {:?} × {} blocks; multiplexed layout, period {} ({} \
             copies); {} maps, {} diagonals, {} rotation keys\n",
            self.arch.width,
            self.arch.width,
            self.arch.in_channels,
            self.arch.stages,
            self.arch.blocks,
            pl.period,
            pl.copies,
            pl.maps.len(),
            pl.total_diagonals,
            pl.rotation_keys
        );
        s += &format!(
            "  ReLU: {} (ε = 2^{:.0}, {} bits), {} levels; maps at level {}; {} after a bootstrap\n",
            pl.sign,
            pl.sign_gap.log2(),
            pl.sign_precision_bits,
            pl.relu_depth,
            pl.conv_level,
            pl.levels_after_bootstrap
        );
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        s += &format!(
            "  device memory of the maps: {:.1} GiB of whole diagonals over Q ({} of {} maps), {:.1} \
             GiB of compact ones, {:.1} GiB for the largest compact map expanded, {:.1} GiB of \
             rotation keys; bootstrapping's keys {:.1} GiB\n",
            gib(pl.whole_diagonals_bytes),
            pl.maps.iter().filter(|m| m.whole).count(),
            pl.maps.len(),
            gib(pl.compact_diagonals_bytes),
            gib(pl.largest_map_bytes),
            gib(t.rotation_key_bytes),
            gib(t.bootstrap_key_bytes)
        );
        s += &format!(
            "  keys {:.1} s, maps built {:.1} s, encryption {:.1} ms, warm-up {:.1} s\n",
            t.keygen_s, t.build_s, t.encrypt_ms, t.warm_up_s
        );
        s += &format!("  latency {:>9.1} ms\n", t.latency_ms);
        s += &format!(
            "  stages: bootstrapping {:.1} ms ({} × {:.1} ms: the floor), linear {:.1} ms, \
             ReLU {:.1} ms, other {:.1} ms; {} key switchings\n",
            t.bootstrap_ms,
            t.bootstraps,
            t.bootstrap_mean_ms,
            t.linear_ms,
            t.relu_ms,
            t.other_ms,
            t.keyswitches
        );
        if self.size == Size::Paper {
            s += &format!(
                "  Cheddar: {CHEDDAR_H100_S} s on an H100 PCIe (about 0.8 s expected on an SXM \
                 card), {CHEDDAR_A100_S} s on an A100 80GB\n"
            );
        }
        s += &format!(
            "  logits: {:.1} bits against f64 (largest |logit| {:.3}); argmax {} ({} f64, {} \
             exact ReLU); polynomial vs exact ReLU {:.1} bits\n",
            self.logit_error_bits,
            self.logit_max_abs,
            self.argmax,
            if self.argmax_agrees {
                "agrees with"
            } else {
                "DIFFERS from"
            },
            if self.argmax_agrees_exact_relu {
                "agrees with"
            } else {
                "differs from"
            },
            self.polynomial_vs_exact_bits
        );
        s
    }
}
