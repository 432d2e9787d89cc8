//! **ResNet-20** inference of one encrypted 32 × 32 × 3 image (CIFAR-10's shape), as seed 004
//! (Cheddar) runs it after Lee et al., "Low-Complexity Deep Convolutional Neural Networks on
//! Fully Homomorphic Encryption Using Multiplexed Parallel Convolutions" (ICML 2022): three
//! stages of three basic blocks (16, 32, 64 channels; stride 2 at the start of the 2nd and 3rd),
//! option-A shortcuts (subsampling, channels zero-padded), batch normalisation folded into the
//! convolutions, global average pooling and a dense layer 64 → 10; ReLU by a composite minimax
//! polynomial; bootstrapping between layers. The 10 logits are compared with the same network
//! in `f64`.
//!
//! ```no_run
//! use rhea_apps::resnet20::{self, ResnetConfig, Size};
//! use rhea::Device;
//!
//! let report = resnet20::run(Device::Cpu, &ResnetConfig::new(Size::Small))?;
//! println!("{}", report.table());
//! assert!(report.argmax_agrees);
//! # Ok::<(), rhea::Error>(())
//! ```
//!
//! **How** ([`layout`], [`plan`]): the multiplexed layout keeps the 32 × 32 grid in the slots
//! (a stage of stride `s` keeps every `s`-th pixel and puts `s²` channels in each `s × s`
//! cell), so every convolution, shortcut and the pooling + dense layer is one slot → slot
//! [`rhea::ckks::LinearTransform`] (baby-step/giant-step, hoisted) built from the weights.
//! Each activation is: bootstrapping (real slots, [`Bootstrapper::bootstrap_real`]) to the 13
//! levels of `boot_n16_levels13` (levels 16 down to 3; SlotToCoeff's three levels lie below),
//! the ReLU (`B·relu_p(z/B)` with [`Sign::relu`], the bound `B` folded into the weights), a drop
//! to level 4 ([`conv_level`]: one above the bootstrapper's input level), and the next
//! convolution at level 4 (its diagonals encoded over 5 + |P| limbs: small and fast), which
//! brings the ciphertext to level 3, the lowest a bootstrap takes, for the next bootstrapping.
//! 19 bootstraps at the paper's size, one per convolution.
//!
//! **Weights and data** ([`plain`]): fixed-seed He-initialised weights with random batch
//! normalisations folded in, and a deterministic synthetic image — nothing trained or
//! downloaded. The reference is the same network in `f64` with the same polynomial ReLU and
//! bounds (what the ciphertexts compute); the exact-ReLU network's logits are reported too.
//!
//! **Sizes.** [`Size::Paper`]: ResNet-20 at `boot_n16_levels13` (N = 2^16, 2^15 slots, two
//! copies of the 16 × 1024-slot period). [`Size::Small`]: 8 × 8 × 3, stages 4/8/16 of one block
//! (7 convolutions, 7 bootstraps) at N = 2^12 (**INSECURE**), the same code.
//!
//! [`Bootstrapper::bootstrap_real`]: rhea::ckks::bootstrap::Bootstrapper::bootstrap_real
//! [`Sign::relu`]: rhea::ckks::functions::Sign::relu

use crate::chart::ChartEntry;
use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

pub mod encrypted;
pub mod layout;
pub mod plain;
mod report;

pub use report::{ResnetReport, TimingReport};

pub use crate::helr::ParametersReport;
pub use crate::Size;
use layout::{pool_sums, Mux, SlotMap};
use plain::{Arch, Weights};
use rhea::ckks::bootstrap::BootstrapConfig;
use rhea::ckks::functions::{Sign, SignConstruction};
use rhea::ckks::{Evaluator, LinearTransform};
use rhea::params::CkksParameters;
use rhea::{Device, Error, Result};

/// Cheddar's ResNet-20 on an H100 (PCIe), seed 004's README, seconds.
pub const CHEDDAR_H100_S: f64 = 1.05;
/// Cheddar's ResNet-20 on an A100 80GB, seed 004's Table 4, seconds.
pub const CHEDDAR_A100_S: f64 = 1.50;

/// The level the linear maps run at under `config`: one above the bootstrapper's input level
/// ([`BootstrapConfig::bottom_depth`], SlotToCoeff's levels), so that their output goes to
/// bootstrapping from the lowest level it takes. 4 at both sizes.
pub fn conv_level(config: &BootstrapConfig) -> usize {
    config.bottom_depth() + 1
}

/// What to run.
#[derive(Clone, Debug)]
pub struct ResnetConfig {
    /// The size.
    pub size: Size,
    /// The weights' seed.
    pub weight_seed: u64,
    /// The image's seed.
    pub image_seed: u64,
    /// The sign composite's precision `α` on `[ε, 1]` (bits).
    pub relu_precision_bits: u32,
    /// `B` over the layer's largest `|z|` in the `f64` run (> 1: the ciphertext's errors must
    /// not push `z/B` out of `[−1, 1]`).
    pub relu_margin: f64,
    /// Device memory for the maps' encoded diagonals (GiB): every map compact (one limb a
    /// diagonal, expanded at each use), then maps in order kept whole while they fit. `None`:
    /// what a GPU has room for beside the keys ([`cache_budget_for`]), 16 GiB on the CPU.
    pub cache_budget_gib: Option<f64>,
    /// The baby-step count `n1` of every map with more than 64 diagonals (`None`: each map's
    /// fewest key switchings). One `n1` for all keeps the union of the maps' rotation keys
    /// small (each key is 170 MB at N = 2^16).
    pub baby_steps: Option<usize>,
    /// The seed of the keys and the encryptions (`None`: the operating system's randomness).
    pub key_seed: Option<[u8; 32]>,
}

impl ResnetConfig {
    /// The run at `size`: seeds 20 and 36, `α = 10`, margin 1.25, the device's room for the
    /// diagonals, `n1 = 64`.
    pub fn new(size: Size) -> Self {
        Self {
            size,
            weight_seed: 20,
            image_seed: 36,
            relu_precision_bits: 10,
            relu_margin: 1.25,
            cache_budget_gib: None,
            baby_steps: Some(64),
            key_seed: None,
        }
    }

    /// This configuration with the keys and encryptions drawn from `seed`.
    pub fn with_seed(mut self, seed: u64) -> Self {
        let mut key = [0u8; 32];
        for chunk in key.chunks_mut(8) {
            chunk.copy_from_slice(&seed.to_le_bytes());
        }
        self.key_seed = Some(key);
        self
    }

    /// The network at this size.
    pub fn arch(&self) -> Arch {
        match self.size {
            Size::Paper => Arch::resnet20(),
            Size::Small => Arch::small(),
        }
    }

    /// The parameters, the bootstrapping configuration and the preset's name at this size.
    pub fn parameters(&self) -> Result<(CkksParameters, BootstrapConfig, String)> {
        self.size.bootstrappable_parameters()
    }

    fn check(&self) -> Result<()> {
        let bad = |what: String| Err(Error::InvalidInput(format!("resnet20: {what}")));
        if !(self.relu_margin.is_finite() && self.relu_margin > 1.0) {
            return bad(format!("ReLU margin {} (above 1)", self.relu_margin));
        }
        if let Some(b) = self.cache_budget_gib {
            if !(b.is_finite() && b >= 0.0) {
                return bad(format!("cache budget {b} GiB"));
            }
        }
        if !(4..=30).contains(&self.relu_precision_bits) {
            return bad(format!(
                "ReLU precision {} bits (4 to 30)",
                self.relu_precision_bits
            ));
        }
        Ok(())
    }
}

/// The ReLU's sign composite: the smallest gap `ε = 2^-g` (`g` from 8 down to 2) whose
/// least-depth composite at `α` bits fits `max_depth` levels.
///
/// Errors: [`Error::InvalidInput`] when none fits.
pub fn choose_sign(precision_bits: u32, max_depth: usize) -> Result<Sign> {
    for g in (2..=8).rev() {
        if let Ok(sign) = Sign::new(precision_bits, 2f64.powi(-g)) {
            if sign.depth() <= max_depth {
                return Ok(sign);
            }
        }
    }
    Err(Error::InvalidInput(format!(
        "resnet20: no sign composite of {precision_bits} bits fits {max_depth} levels"
    )))
}

/// One linear map of the network.
#[derive(Clone, Debug, Serialize)]
pub struct MapPlan {
    /// `conv0`, `s2b1 conv1`, `s2b1 shortcut`, `pool+dense`, …
    pub name: String,
    /// Non-zero diagonals.
    pub diagonals: usize,
    /// Key switchings of one evaluation.
    pub keyswitches: usize,
    /// The baby-step count `n1`.
    pub baby_steps: usize,
    /// Giant steps.
    pub giant_steps: usize,
    /// Whether its encoded diagonals stay whole on the device (NTT form over `Q_conv_level`
    /// alone, [`rhea::ckks::DiagonalStorage::QOnly`]); otherwise compact
    /// ([`rhea::ckks::DiagonalStorage::Compact`]: one limb each), expanded at each use.
    pub whole: bool,
}

/// The level plan and the resources of a run, computed without encrypting anything.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// Slots.
    pub slots: usize,
    /// The period of the multiplexed layout (the largest span, a power of two).
    pub period: usize,
    /// Copies of it in the slots.
    pub copies: usize,
    /// The layout of each convolution's output (and the input's first).
    pub layouts: Vec<Mux>,
    /// The linear maps in order.
    pub maps: Vec<MapPlan>,
    /// Diagonals of all maps.
    pub total_diagonals: usize,
    /// Distinct rotation steps (the maps' and the pooling's; bootstrapping's apart).
    pub rotation_keys: usize,
    /// Levels a bootstrap leaves: from [`Plan::top_level`] down to the bootstrapper's input
    /// level (`conv_level − 1`).
    pub levels_after_bootstrap: usize,
    /// The level a bootstrap lands on.
    pub top_level: usize,
    /// Levels a ReLU takes (the sign's depth + 1).
    pub relu_depth: usize,
    /// The level the maps run at ([`conv_level`]).
    pub conv_level: usize,
    /// Levels left unused between the ReLU and the map (dropped).
    pub spare_levels: usize,
    /// Bootstraps an inference (one a convolution).
    pub bootstraps: usize,
    /// Bytes of one whole encoded diagonal at the maps' level (over `Q_conv_level` alone:
    /// [`rhea::ckks::DiagonalStorage::QOnly`]).
    pub diagonal_bytes: u64,
    /// Bytes of one compact diagonal (its `q_0` residues: one limb).
    pub compact_diagonal_bytes: u64,
    /// Bytes of one compact diagonal expanded for its use (over `Q_conv_level ∪ P`).
    pub expanded_diagonal_bytes: u64,
    /// Bytes of all encoded diagonals, whole.
    pub all_diagonals_bytes: u64,
    /// Bytes of the diagonals kept whole.
    pub whole_diagonals_bytes: u64,
    /// Bytes of the diagonals kept compact.
    pub compact_diagonals_bytes: u64,
    /// The largest compact map expanded (bytes, while it is evaluated).
    pub largest_map_bytes: u64,
    /// Bytes of the maps' rotation keys (estimate: digits × 2 × (Q + P limbs) × N words).
    pub rotation_key_bytes: u64,
    /// The device memory the maps need besides bootstrapping's keys and the working
    /// ciphertexts: whole and compact diagonals, the largest compact map expanded, rotation
    /// keys (bytes).
    pub device_bytes_estimate: u64,
    /// The sign composite: construction.
    pub sign: String,
    /// Its gap `ε`.
    pub sign_gap: f64,
    /// Its precision (bits).
    pub sign_precision_bits: u32,
}

/// The network's maps with their bounds folded in, and the layouts.
pub(crate) struct Network {
    pub arch: Arch,
    pub layouts: Vec<Mux>,
    /// `(name, map)` in evaluation order: conv0, then per block conv1, conv2, shortcut, then
    /// pool+dense.
    pub maps: Vec<(String, SlotMap)>,
    /// Each convolution's bias over its bound, as a slot vector of one period.
    pub biases: Vec<Vec<f64>>,
    /// The dense layer's bias (the logits are not scaled).
    pub fc_bias: Vec<f64>,
    pub period: usize,
}

/// The maps for `bounds` (each convolution's ReLU bound `B`; the image's is 1).
pub(crate) fn network(arch: &Arch, weights: &Weights, bounds: &[f64]) -> Result<Network> {
    let convs = arch.convs();
    if bounds.len() != convs.len() || weights.convs.len() != convs.len() {
        return Err(Error::InvalidInput(format!(
            "resnet20: {} bounds and {} convolutions for {}",
            bounds.len(),
            weights.convs.len(),
            convs.len()
        )));
    }
    let input = Mux {
        width: arch.width,
        stride: 1,
        channels: arch.in_channels,
    };
    let mut layouts = vec![input];
    let mut stride = 1;
    for &(_, c_out, s) in &convs {
        stride *= s;
        layouts.push(Mux {
            width: arch.width,
            stride,
            channels: c_out,
        });
    }
    let period = layouts
        .iter()
        .map(|m| m.span())
        .max()
        .unwrap_or(1)
        .next_power_of_two();
    let bias = |k: usize| -> Result<Vec<f64>> {
        let m = layouts[k + 1];
        let mut t = vec![0.0; m.len()];
        for c in 0..m.channels {
            for y in 0..m.side() {
                for x in 0..m.side() {
                    t[m.index(c, y, x)] = weights.convs[k].b[c] / bounds[k];
                }
            }
        }
        m.pack(&t, period, period)
    };
    let conv = |k: usize, b_in: f64| -> Result<SlotMap> {
        let c = &weights.convs[k];
        SlotMap::conv3x3(layouts[k], layouts[k + 1], c.stride, &c.w, b_in / bounds[k])
    };
    let mut maps = vec![("conv0".to_string(), conv(0, 1.0)?)];
    let mut biases = vec![bias(0)?];
    let mut k = 1;
    for (s, _) in arch.stages.iter().enumerate() {
        for b in 0..arch.blocks {
            let name = format!("s{}b{}", s + 1, b + 1);
            let b_a = bounds[k - 1];
            maps.push((format!("{name} conv1"), conv(k, b_a)?));
            maps.push((format!("{name} conv2"), conv(k + 1, bounds[k])?));
            maps.push((
                format!("{name} shortcut"),
                SlotMap::shortcut(
                    layouts[k],
                    layouts[k + 2],
                    weights.convs[k].stride,
                    b_a / bounds[k + 1],
                )?,
            ));
            biases.push(bias(k)?);
            biases.push(bias(k + 1)?);
            k += 2;
        }
    }
    let last = layouts[convs.len()];
    maps.push((
        "pool+dense".to_string(),
        SlotMap::pool_dense(last, &weights.fc, arch.classes, bounds[convs.len() - 1])?,
    ));
    Ok(Network {
        arch: arch.clone(),
        layouts,
        maps,
        biases,
        fc_bias: weights.fc_bias.clone(),
        period,
    })
}

/// The rotation steps of the pooling sums.
pub(crate) fn pool_rotations(last: Mux, slots: usize) -> Vec<i64> {
    pool_sums(last)
        .iter()
        .flat_map(|&(stride, count)| Evaluator::rotate_and_sum_rotations(slots, stride, count))
        .collect()
}

/// The cache budget (GiB) when the configuration leaves it to the device.
const DEFAULT_CACHE_GIB: f64 = 16.0;
/// Bootstrapping's keys and encoded matrices at `boot_n16_levels13` (7.6 + 4.2 GiB, measured).
const BOOTSTRAP_GIB: f64 = 12.0;
const GIB: f64 = (1u64 << 30) as f64;

/// The budget (GiB) for the maps' encoded diagonals, whole and compact, on `device` for
/// `config`: the configuration's, or, when it has none, the GPU's total memory less the maps'
/// rotation keys, 12 GiB for bootstrapping's keys and matrices (7.6 + 4.2 GiB at
/// `boot_n16_levels13`), the largest map (expanded at its use when compact) and 8 GiB of
/// working memory (none when that is negative); 16 GiB on the CPU.
pub fn cache_budget_for(config: &ResnetConfig, device: Device) -> Result<f64> {
    budget_on(config, device, &plan(config)?)
}

/// [`cache_budget_for`] with `config`'s plan already made.
fn budget_on(config: &ResnetConfig, device: Device, plan: &Plan) -> Result<f64> {
    if let Some(b) = config.cache_budget_gib {
        return Ok(b);
    }
    let total = device.total_memory()? as f64 / GIB;
    Ok(if total == 0.0 {
        DEFAULT_CACHE_GIB
    } else {
        room_for_cache(total, plan)
    })
}

/// `total_gib` less the maps' rotation keys, 12 GiB for bootstrapping's keys and matrices, the
/// largest map expanded (in case it is compact) and 8 GiB of working memory (none when that is
/// negative).
fn room_for_cache(total_gib: f64, p: &Plan) -> f64 {
    let largest = p.maps.iter().map(|m| m.diagonals).max().unwrap_or(0) as f64
        * p.expanded_diagonal_bytes as f64
        / GIB;
    (total_gib - p.rotation_key_bytes as f64 / GIB - BOOTSTRAP_GIB - largest - 8.0).max(0.0)
}

/// The level plan, the maps' diagonals and key switchings, the rotation keys and the memory of
/// a run at `config`'s size, without encrypting anything (the transforms are built once per
/// distinct diagonal set, with placeholder values).
///
/// Errors: a configuration the level budget does not allow (no ReLU composite fits between a
/// bootstrap and the maps' level), the library's errors.
pub fn plan(config: &ResnetConfig) -> Result<Plan> {
    config.check()?;
    let arch = config.arch();
    let (params, boot, _) = config.parameters()?;
    let (top, floor) = crate::size::user_level_range("resnet20", &params, &boot)?;
    let conv = conv_level(&boot);
    let max_relu = top.saturating_sub(conv);
    let sign = choose_sign(config.relu_precision_bits, max_relu.saturating_sub(1))?;
    let relu_depth = sign.depth() + 1;
    let weights = Weights::generate(&arch, config.weight_seed);
    let net = network(&arch, &weights, &vec![1.0; arch.convs().len()])?;
    let slots = params.n() / 2;
    if net.period > slots {
        return Err(Error::InvalidInput(format!(
            "resnet20: the layout's period {} exceeds the {slots} slots",
            net.period
        )));
    }
    let n = params.n() as u64;
    let p_limbs = params.p_primes().len() as u64;
    // Whole diagonals over Q_conv alone (the products after each baby step's ModDown): at the
    // bottom of the chain P is most of the basis (H200, all 29 maps whole: 621 ms over Q
    // against 668 ms over Q ∪ P, 36 GiB against 87).
    let diagonal_bytes = (conv as u64 + 1) * n * 8;
    let expanded_diagonal_bytes = (conv as u64 + 1 + p_limbs) * n * 8;
    let key_bytes = params.dnum() as u64 * 2 * (params.max_level() as u64 + 1 + p_limbs) * n * 8;

    let mut seen: HashMap<Vec<usize>, (usize, usize, usize, Vec<i64>)> = HashMap::new();
    let mut steps: BTreeSet<i64> =
        pool_rotations(*net.layouts.last().unwrap_or(&net.layouts[0]), slots)
            .into_iter()
            .collect();
    let mut maps = Vec::new();
    let mut total = 0usize;
    for (name, map) in &net.maps {
        let idx: Vec<usize> = map.diagonal_indices(slots).into_iter().collect();
        let entry = match seen.get(&idx) {
            Some(e) => e.clone(),
            None => {
                let lt = shape(
                    LinearTransform::from_diagonals(
                        slots,
                        idx.iter().map(|&k| (k as i64, vec![1.0; slots])),
                    )?,
                    config.baby_steps,
                )?;
                let e = (
                    lt.keyswitches(),
                    lt.baby_steps(),
                    lt.giant_steps(),
                    lt.rotations(),
                );
                seen.insert(idx.clone(), e.clone());
                e
            }
        };
        steps.extend(entry.3.iter().copied());
        total += idx.len();
        maps.push(MapPlan {
            name: name.clone(),
            diagonals: idx.len(),
            keyswitches: entry.0,
            baby_steps: entry.1,
            giant_steps: entry.2,
            whole: false,
        });
    }
    let rotation_keys = steps.len();
    let mut plan = Plan {
        slots,
        period: net.period,
        copies: slots / net.period,
        layouts: net.layouts.clone(),
        maps,
        total_diagonals: total,
        rotation_keys,
        levels_after_bootstrap: top - floor,
        top_level: top,
        relu_depth,
        conv_level: conv,
        spare_levels: top - relu_depth - conv,
        bootstraps: arch.convs().len(),
        diagonal_bytes,
        compact_diagonal_bytes: n * 8,
        expanded_diagonal_bytes,
        all_diagonals_bytes: total as u64 * diagonal_bytes,
        whole_diagonals_bytes: 0,
        compact_diagonals_bytes: 0,
        largest_map_bytes: 0,
        rotation_key_bytes: rotation_keys as u64 * key_bytes,
        device_bytes_estimate: 0,
        sign: sign_name(&sign),
        sign_gap: sign.gap(),
        sign_precision_bits: sign.precision_bits(),
    };
    plan.set_cache_budget(config.cache_budget_gib.unwrap_or(DEFAULT_CACHE_GIB));
    Ok(plan)
}

impl Plan {
    /// Marks the maps whose diagonals stay whole under `budget_gib` for all encoded diagonals:
    /// every map at least compact, then maps made whole in order while the budget holds them;
    /// updates the memory figures.
    pub fn set_cache_budget(&mut self, budget_gib: f64) {
        let budget = (budget_gib.max(0.0) * GIB) as u64;
        let (whole_d, compact_d) = (self.diagonal_bytes, self.compact_diagonal_bytes);
        let expanded_d = self.expanded_diagonal_bytes;
        let all_compact: u64 =
            self.maps.iter().map(|m| m.diagonals as u64).sum::<u64>() * compact_d;
        let (mut used, mut whole, mut compact, mut largest) = (all_compact, 0u64, 0u64, 0u64);
        for m in &mut self.maps {
            let d = m.diagonals as u64;
            m.whole = used + d * (whole_d - compact_d) <= budget;
            if m.whole {
                used += d * (whole_d - compact_d);
                whole += d * whole_d;
            } else {
                compact += d * compact_d;
                largest = largest.max(d * expanded_d);
            }
        }
        self.whole_diagonals_bytes = whole;
        self.compact_diagonals_bytes = compact;
        self.largest_map_bytes = largest;
        self.device_bytes_estimate = whole + compact + largest + self.rotation_key_bytes;
    }
}

/// `lt` with `baby_steps` forced when it has more than 64 diagonals.
pub(crate) fn shape(lt: LinearTransform, baby_steps: Option<usize>) -> Result<LinearTransform> {
    match baby_steps {
        Some(n1) if lt.diagonal_count() > 64 => {
            let n1 = n1.min(lt.slots());
            lt.with_baby_steps(n1)
        }
        _ => Ok(lt),
    }
}

fn sign_name(sign: &Sign) -> String {
    match sign.construction() {
        SignConstruction::Minimax { degree, stages } => {
            format!(
                "minimax, {stages} stage(s) of degree {degree}, depth {}",
                sign.depth()
            )
        }
        SignConstruction::CheonKimKimLee {
            n,
            g_count,
            f_count,
        } => format!(
            "Cheon-Kim-Kim-Lee n = {n}, {g_count} g + {f_count} f, depth {}",
            sign.depth()
        ),
    }
}

/// Runs ResNet-20 on `device`: the f64 inferences, the encrypted one, the comparison.
///
/// Errors: [`Error::InvalidInput`] for a bad configuration or one the level budget does not
/// allow; the library's errors (device, memory).
pub fn run(device: Device, config: &ResnetConfig) -> Result<ResnetReport> {
    let mut plan = plan(config)?;
    plan.set_cache_budget(budget_on(config, device, &plan)?);
    let arch = config.arch();
    let (params, boot_config, preset) = config.parameters()?;
    let weights = Weights::generate(&arch, config.weight_seed);
    let image = plain::image(&arch, config.image_seed);
    let sign = choose_sign(config.relu_precision_bits, plan.relu_depth - 1)?;
    let relu = |x: f64| sign.relu_plain(x);
    let reference = plain::forward(
        &arch,
        &weights,
        &image,
        &plain::Relu::Polynomial {
            relu: &relu,
            margin: config.relu_margin,
        },
    );
    let exact = plain::forward(&arch, &weights, &image, &plain::Relu::Exact);
    let net = network(&arch, &weights, &reference.bounds)?;
    let out = encrypted::infer(&encrypted::Job {
        device,
        params: &params,
        boot_config: boot_config.clone(),
        net: &net,
        plan: &plan,
        sign: &sign,
        image: &image,
        baby_steps: config.baby_steps,
        key_seed: config.key_seed,
    })?;
    let err = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f64, f64::max)
    };
    let argmax = plain::argmax(&out.logits);
    let t = &out.timing;
    Ok(ResnetReport {
        chart: ChartEntry {
            app: "resnet20".into(),
            what: format!("{} size, latency of one image", config.size.name()),
            rhea_ms: t.latency_ms,
            device: device.name(),
            peers: vec![
                (
                    "Cheddar, H100 PCIe (seed 004)".into(),
                    1000.0 * CHEDDAR_H100_S,
                ),
                (
                    "Cheddar, A100 80GB (seed 004)".into(),
                    1000.0 * CHEDDAR_A100_S,
                ),
            ],
        },
        app: "resnet20".into(),
        size: config.size,
        device: device.to_string(),
        parameters: ParametersReport::new(preset, &params, &boot_config),
        arch: arch.clone(),
        data: format!(
            "fixed-seed weights (He-initialised, batch norm with random statistics folded in; \
             seed {}), a synthetic {}×{}×{} image (seed {}); nothing trained or downloaded",
            config.weight_seed, arch.width, arch.width, arch.in_channels, config.image_seed
        ),
        plan: plan.clone(),
        relu_bounds: reference.bounds.clone(),
        timing: t.clone(),
        logit_error_bits: -err(&out.logits, &reference.logits).log2(),
        logit_max_abs: reference.logits.iter().fold(0.0f64, |m, v| m.max(v.abs())),
        argmax_agrees: argmax == plain::argmax(&reference.logits),
        argmax_agrees_exact_relu: argmax == plain::argmax(&exact.logits),
        argmax,
        polynomial_vs_exact_bits: -err(&reference.logits, &exact.logits).log2(),
        logits_encrypted: out.logits,
        logits_f64: reference.logits,
        logits_exact_relu: exact.logits,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_budget_is_the_configurations_or_the_cards_room() {
        let mut c = ResnetConfig::new(Size::Paper);
        assert_eq!(
            cache_budget_for(&c, Device::Cpu).unwrap(),
            DEFAULT_CACHE_GIB
        );
        c.cache_budget_gib = Some(3.0);
        assert_eq!(cache_budget_for(&c, Device::Cpu).unwrap(), 3.0);
        let p = plan(&ResnetConfig::new(Size::Paper)).unwrap();
        // an 80 GB card: its 79.2 GiB less 13.1 GiB of map keys, 12 + 8 and the largest map
        let room = room_for_cache(79.2, &p);
        assert!((35.0..45.0).contains(&room), "{room}");
        assert_eq!(room_for_cache(24.0, &p), 0.0);
        c.cache_budget_gib = Some(-1.0);
        assert!(plan(&c).is_err());
    }

    #[test]
    fn the_paper_plan_fits_the_level_budget_and_the_card() {
        let plan = plan(&ResnetConfig::new(Size::Paper)).unwrap();
        eprintln!("{}", serde_json_like(&plan));
        assert_eq!(plan.slots, 1 << 15);
        assert_eq!(plan.period, 1 << 14);
        assert_eq!(plan.copies, 2);
        assert_eq!(plan.levels_after_bootstrap, 13);
        // Bootstraps land on level 16; the maps run at level 4, their outputs are bootstrapped
        // from level 3 (SlotToCoeff's three levels lie below).
        assert_eq!((plan.top_level, plan.conv_level), (16, 4));
        assert!(plan.relu_depth + plan.conv_level <= plan.top_level);
        assert_eq!(plan.bootstraps, 19);
        // conv0, 9 × (conv1, conv2, shortcut), pool+dense.
        assert_eq!(plan.maps.len(), 1 + 27 + 1);
        let stage3 = plan.maps.iter().find(|m| m.name == "s3b2 conv1").unwrap();
        assert_eq!(stage3.diagonals, 7 * 15 * 15);
        // One whole diagonal over Q_4 (5 limbs of 2^16 words): 2.5 MiB; a compact one expanded
        // over Q_4 ∪ P (5 + 7 limbs): 6 MiB.
        assert_eq!(plan.diagonal_bytes, 5 << 19);
        assert_eq!(plan.expanded_diagonal_bytes, 12 << 19);
        // Everything the maps need (whole and compact diagonals, the largest compact map
        // expanded, rotation keys)
        // leaves room on an 80 GB card for bootstrapping's keys and the ciphertexts.
        assert!(
            plan.device_bytes_estimate < 50 << 30,
            "{} GiB",
            plan.device_bytes_estimate >> 30
        );
        assert!(plan.sign_gap <= 1.0 / 16.0, "{}", plan.sign_gap);
        // One n1 (64) for every map: 79 rotation keys (184 with each map's own best n1).
        assert!(plan.rotation_keys <= 100, "{}", plan.rotation_keys);
        assert!(plan.maps.iter().any(|m| !m.whole));
        // Every map compact: 1/5 of the bytes.
        assert_eq!(plan.compact_diagonal_bytes * 5, plan.diagonal_bytes);
        // An 80 GB card holds every map whole (36.4 GiB).
        let mut on_80 = plan.clone();
        on_80.set_cache_budget(room_for_cache(79.2, &plan));
        assert!(on_80.maps.iter().all(|m| m.whole));
        assert_eq!(on_80.whole_diagonals_bytes, on_80.all_diagonals_bytes);
    }

    #[test]
    #[ignore = "an experiment: rotation keys and key switchings by baby-step count"]
    fn baby_step_choices_at_the_papers_size() {
        for n1 in [None, Some(16), Some(32), Some(64), Some(128)] {
            let mut c = ResnetConfig::new(Size::Paper);
            c.baby_steps = n1;
            let p = plan(&c).unwrap();
            let ks: usize = p.maps.iter().map(|m| m.keyswitches).sum();
            eprintln!("n1 {n1:?}: {} keys, {ks} key switchings", p.rotation_keys);
        }
    }

    #[test]
    fn the_small_plan_caches_everything() {
        let plan = plan(&ResnetConfig::new(Size::Small)).unwrap();
        assert_eq!(plan.slots, 2048);
        assert_eq!(plan.bootstraps, 7);
        assert!(plan.maps.iter().all(|m| m.whole));
        assert_eq!(plan.levels_after_bootstrap, 13);
        assert_eq!((plan.top_level, plan.conv_level), (16, 4));
    }

    #[test]
    fn bad_configurations_are_refused() {
        let mut c = ResnetConfig::new(Size::Small);
        c.relu_margin = 0.9;
        assert!(plan(&c).is_err());
        let mut c = ResnetConfig::new(Size::Small);
        c.relu_precision_bits = 60;
        assert!(run(Device::Cpu, &c).is_err());
    }

    fn serde_json_like(plan: &Plan) -> String {
        plan.maps
            .iter()
            .map(|m| {
                format!(
                    "{}: {} diagonals, {} key switchings ({} baby, {} giant){}\n",
                    m.name,
                    m.diagonals,
                    m.keyswitches,
                    m.baby_steps,
                    m.giant_steps,
                    if m.whole { "" } else { ", compact" }
                )
            })
            .collect::<String>()
            + &format!(
                "total {} diagonals, {} rotation keys ({} GiB), whole {} GiB, compact {} GiB, all \
                 {} GiB, sign {}\n",
                plan.total_diagonals,
                plan.rotation_keys,
                plan.rotation_key_bytes >> 30,
                plan.whole_diagonals_bytes >> 30,
                plan.compact_diagonals_bytes >> 30,
                plan.all_diagonals_bytes >> 30,
                plan.sign
            )
    }
}
