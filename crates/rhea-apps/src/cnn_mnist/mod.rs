//! **CNN-MNIST**: seed 003's (HE-Booster's) encrypted CNN inference on 28 × 28 images — conv
//! 5 × 5 × 5 stride 2 (→ 845), `x²`, dense 845 → 100, `x²`, dense 100 → 10 — in two layouts:
//!
//! - [`Layout::Seed`] (the seed's, [`seed`]): **one pixel per BGV ciphertext, 784 ciphertexts**;
//!   every layer is plaintext-scalar multiplications and ciphertext additions (the op counts of
//!   the seed's Table 7), the activations squarings. The slots carry a batch of images (one
//!   image a slot): one run of the network is the latency of one image *and* of a whole batch
//!   of `N` images. BGV computes the quantised integer network **exactly**: the decrypted logits
//!   equal the integer plaintext inference's, digit for digit.
//! - [`Layout::Packed`] (ours, [`packed`]): whole images in CKKS slots (1024 slots an image,
//!   `N/2048` images a group), a convolution-ready input (25 ciphertexts, one per kernel tap:
//!   the convolution is 25 slot-wise products, no rotation), the dense layers as
//!   baby-step/giant-step [`rhea::ckks::LinearTransform`]s (the hidden one by the hybrid
//!   diagonal method): 25 ciphertexts instead of 784, so far lower latency per batch; compared
//!   with the `f64` network by argmax agreement and error in bits.
//!
//! ```no_run
//! use rhea_apps::cnn_mnist::{self, CnnConfig, Layout, Size};
//! use rhea::Device;
//!
//! let report = cnn_mnist::run(Device::Cpu, &CnnConfig::new(Size::Small, Layout::Seed))?;
//! println!("{}", report.table());
//! assert_eq!(report.argmax_agreement, 1.0);
//! assert_eq!(report.exact_logits, Some(true));
//! # Ok::<(), rhea::Error>(())
//! ```
//!
//! **Data** ([`data`]): synthetic, deterministic 28 × 28 "digits" (seven-segment figures with
//! random stroke, slant, shift and noise; pixels `0..=255`); **not MNIST**, nothing downloaded.
//! **Weights** ([`plain`]): trained at run time in plain Rust `f64` (mini-batch SGD, a few
//! seconds), then, for BGV, quantised to integers small enough that every logit stays below
//! `t/2` (the bit widths are chosen on the training images; the encrypted batch is checked
//! before anything is encrypted, a typed error otherwise).
//!
//! **Sizes.** [`Size::Paper`]: seed layout at `N = 2^14` (16384 images a batch), a 43-bit
//! batching `t` like the seed's, `Q = 60 + 5×50` bits, `P = 60`: log QP ≈ 370 ≤ 438, 128-bit
//! (the seed's `N = 8192` with a 330-bit `Q` is not 128-bit secure); packed layout at
//! `N = 2^14`, `Q = 60 + 5×40`, 8 images a group of 25 ciphertexts, 128-bit. [`Size::Small`]: the same code
//! and the full 28 × 28, 784-ciphertext structure at `N = 2^12` (**INSECURE**): 4096 images a
//! seed batch, 2 a packed group.

use crate::chart::ChartEntry;
use serde::Serialize;

pub mod data;
pub mod packed;
pub mod plain;
mod primes;
mod report;
pub mod seed;

pub use primes::batching_prime_below;

pub use report::{CnnReport, QuantReport, TimingReport, TrainingReport};

pub use crate::Size;
use rhea::bgv::BgvParameters;
use rhea::params::{BgvParametersLiteral, CkksParameters, CkksParametersLiteral};
use rhea::{Device, Error, Result};

use data::{Generator, Images, PIXELS};
use plain::{argmax, Model, QuantModel, CONV_OUT, HIDDEN, TAPS};

/// HE-Booster's figure (seed 003, Table 8): seconds per image in the seed's layout, one
/// RTX 3070.
pub const HE_BOOSTER_S_PER_IMAGE: f64 = 4.2;
/// The GPU of that figure.
pub const HE_BOOSTER_GPU: &str = "RTX 3070";

/// Which layout to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// The seed's: one pixel per BGV ciphertext, images across the slots.
    Seed,
    /// Ours: images packed in CKKS slots, layers as linear transforms.
    Packed,
}

impl Layout {
    /// `seed` or `packed`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "seed" => Ok(Layout::Seed),
            "packed" => Ok(Layout::Packed),
            other => Err(Error::InvalidInput(format!(
                "unknown layout `{other}` (use seed or packed)"
            ))),
        }
    }

    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Seed => "seed",
            Layout::Packed => "packed",
        }
    }
}

/// Homomorphic operations of one inference (the seed's Table 7 columns, plus ours).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OpCounts {
    /// Plaintext-ciphertext multiplications (scalar weights; diagonal products when packed).
    pub pt_ct_mults: u64,
    /// Plaintext-ciphertext additions (biases).
    pub pt_ct_adds: u64,
    /// Ciphertext-ciphertext additions.
    pub ct_ct_adds: u64,
    /// Ciphertext-ciphertext multiplications (the squarings).
    pub ct_ct_mults: u64,
    /// Key switchings (relinearisations, and the packed layout's rotations as the library
    /// counts them).
    pub keyswitches: u64,
    /// Modulus switches beyond the squarings' own (seed layout).
    pub mod_switches: u64,
}

/// The seed's Table 7 op columns (total: 955 PT-CT adds, 105670 CT-CT adds, 106625 PT-CT
/// mults, 945 CT-CT mults).
pub const SEED_TABLE7: OpCounts = OpCounts {
    pt_ct_mults: 106_625,
    pt_ct_adds: 955,
    ct_ct_adds: 105_670,
    ct_ct_mults: 945,
    keyswitches: 0,
    mod_switches: 0,
};

/// Seconds spent in each stage of one inference.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Stages {
    /// The convolution (with its biases).
    pub conv: f64,
    /// The first squaring (and the seed layout's extra switches).
    pub act1: f64,
    /// Dense 845 → 100.
    pub dense1: f64,
    /// The second squaring.
    pub act2: f64,
    /// Dense 100 → 10.
    pub dense2: f64,
}

impl Stages {
    /// The whole inference.
    pub fn total(&self) -> f64 {
        self.conv + self.act1 + self.dense1 + self.act2 + self.dense2
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct CnnConfig {
    /// The size.
    pub size: Size,
    /// The layout.
    pub layout: Layout,
    /// Training images (synthetic).
    pub train_images: usize,
    /// Training epochs.
    pub epochs: usize,
    /// The SGD learning rate.
    pub learning_rate: f64,
    /// Held-out images for the f64 (and quantised) accuracy.
    pub held_out_images: usize,
    /// Images encrypted (`None`: a full batch — the slot count for the seed layout, one
    /// ciphertext's worth for the packed).
    pub images: Option<usize>,
    /// Bits of the BGV plaintext modulus `t` (the largest batching prime below `2^bits`).
    pub plaintext_bits: u32,
    /// Bits of headroom below `t/2` the quantisation keeps on the training images.
    pub headroom_bits: u32,
    /// Seed layout: multiply the taps on the zero padding too (by an encryption of zero), so
    /// that the op counts are exactly the seed's Table 7 (645 more multiplications and
    /// additions).
    pub padding_taps: bool,
    /// The data set's (and the training's) seed.
    pub data_seed: u64,
    /// The keys' and encryptions' seed (`None`: the operating system's randomness).
    pub key_seed: Option<[u8; 32]>,
}

impl CnnConfig {
    /// The defaults: 2000 training images, 4 epochs from 0.03 (decaying), 2000 held-out images, a 43-bit
    /// `t` (the seed's), one bit of headroom, padding taps skipped.
    pub fn new(size: Size, layout: Layout) -> Self {
        Self {
            size,
            layout,
            train_images: 2000,
            epochs: 4,
            learning_rate: 0.03,
            held_out_images: 2000,
            images: None,
            plaintext_bits: 43,
            headroom_bits: 1,
            padding_taps: false,
            data_seed: 2026,
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

    fn log_n(&self) -> u32 {
        match self.size {
            Size::Small => 12,
            Size::Paper => 14,
        }
    }

    /// The BGV parameters of the seed layout and their description.
    pub fn bgv_parameters(&self) -> Result<(BgvParameters, String)> {
        let log_n = self.log_n();
        let t = batching_prime_below(self.plaintext_bits, log_n).ok_or_else(|| {
            Error::InvalidInput(format!(
                "cnn-mnist: no batching prime below 2^{} at N = 2^{log_n}",
                self.plaintext_bits
            ))
        })?;
        let mut lit = BgvParametersLiteral::he_booster_n13_logqp218();
        lit.log_n = log_n;
        lit.log_q = vec![60, 50, 50, 50, 50, 50];
        lit.log_p = vec![60];
        lit.t = t;
        lit.log_t = 0;
        lit.dnum = 6;
        let name = match self.size {
            Size::Paper => format!("BGV N = 2^{log_n}, Q = 60 + 5×50, P = 60, t = {t}"),
            Size::Small => {
                lit = lit.insecure_allow_below_128_bits();
                format!("BGV N = 2^{log_n}, Q = 60 + 5×50, P = 60, t = {t} (INSECURE)")
            }
        };
        Ok((lit.build()?, name))
    }

    /// The CKKS parameters of the packed layout and their description.
    pub fn ckks_parameters(&self) -> Result<(CkksParameters, String)> {
        let log_n = self.log_n();
        let mut lit = CkksParametersLiteral::n14_logqp400_levels7();
        lit.log_n = log_n;
        lit.log_q = vec![60, 40, 40, 40, 40, 40];
        lit.log_p = vec![60];
        let mut lit = lit.with_dnum(3);
        let name = match self.size {
            Size::Paper => format!("CKKS N = 2^{log_n}, Q = 60 + 5×40, Δ = 2^40, dnum 3"),
            Size::Small => {
                lit = lit.insecure_allow_below_128_bits();
                format!("CKKS N = 2^{log_n}, Q = 60 + 5×40, Δ = 2^40, dnum 3 (INSECURE)")
            }
        };
        Ok((lit.build()?, name))
    }

    fn check(&self) -> Result<()> {
        let bad = |what: String| Err(Error::InvalidInput(format!("cnn-mnist: {what}")));
        if self.train_images < 10 || self.epochs == 0 {
            return bad("at least 10 training images and one epoch".into());
        }
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return bad(format!("learning rate {}", self.learning_rate));
        }
        if self.held_out_images == 0 || self.images == Some(0) {
            return bad("at least one held-out and one encrypted image".into());
        }
        if !(20..=59).contains(&self.plaintext_bits) {
            return bad(format!(
                "plaintext bits {} (20 to 59: t must stay below the 60-bit q_0)",
                self.plaintext_bits
            ));
        }
        Ok(())
    }
}

/// The plan of a run: what it will do and need, checked before anything of the batch is
/// encrypted.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// The layout.
    pub layout: Layout,
    /// The parameters' description.
    pub parameters: String,
    /// `log2 N`.
    pub log_n: u32,
    /// `log2(QP)`.
    pub log_qp: f64,
    /// 128-bit security.
    pub secure_128: bool,
    /// Levels of a fresh ciphertext.
    pub levels: usize,
    /// Levels the network consumes (the seed layout's after its switches).
    pub levels_used: usize,
    /// Images one run of the network infers (the seed layout's slot count; the packed
    /// layout's images a group).
    pub batch: usize,
    /// Ciphertexts encrypted for the run's images (784 for the seed layout, 25 a group for
    /// the packed).
    pub input_ciphertexts: usize,
    /// The op counts one batch will take (the seed layout's exactly; the packed layout's
    /// plaintext products are its diagonals).
    pub ops: OpCounts,
    /// Rotation keys (packed).
    pub rotation_keys: usize,
    /// Bootstraps (none: the depth fits the chain).
    pub bootstraps: usize,
    /// The largest memory one batch holds at a time, estimated (ciphertexts, keys, packed
    /// diagonals), bytes.
    pub memory_bytes: u64,
    /// The BGV plaintext modulus (seed layout).
    pub t: Option<u64>,
    /// The noise budget left after the rehearsal of the heaviest path (seed layout), bits.
    pub rehearsal_budget_bits: Option<u32>,
}

/// The seed layout's op counts at this geometry.
pub fn seed_op_counts(padding_taps: bool) -> OpCounts {
    let conv_taps: u64 = (0..plain::CONV_SIDE * plain::CONV_SIDE)
        .flat_map(|pos| (0..TAPS).map(move |t| plain::tap_pixel(pos, t)))
        .filter(|p| padding_taps || p.is_some())
        .count() as u64
        * plain::FILTERS as u64;
    let (c, h, k) = (CONV_OUT as u64, HIDDEN as u64, data::CLASSES as u64);
    OpCounts {
        pt_ct_mults: conv_taps + c * h + h * k,
        pt_ct_adds: c + h + k,
        ct_ct_adds: (conv_taps - c) + (c - 1) * h + (h - 1) * k,
        ct_ct_mults: c + h,
        keyswitches: c + h,
        mod_switches: 0,
    }
}

/// Plans a run of `config` for the model `q` (seed) / `model` (packed), on `device` (the seed
/// layout's noise rehearsal runs there).
fn plan_with(
    config: &CnnConfig,
    device: Device,
    model: &Model,
    q: Option<&QuantModel>,
) -> Result<Plan> {
    match config.layout {
        Layout::Seed => {
            let q = q.ok_or_else(|| Error::InvalidInput("cnn-mnist: no quantised model".into()))?;
            let (params, name) = config.bgv_parameters()?;
            let (budget, levels) = seed::rehearse(&params, device, q)?;
            let n = params.n() as u64;
            let limbs = |level: usize| params.q_limbs_at_level(level) as u64;
            let ct = |level: usize| 2 * n * limbs(level) * 8;
            let top = params.max_level();
            let inputs = PIXELS + usize::from(config.padding_taps);
            // Peak: the inputs and the conv outputs at the top level, and the relinearisation
            // key (dnum × 2 × (Q + P limbs)).
            let key =
                params.dnum() as u64 * 2 * n * (limbs(top) + params.p_primes().len() as u64) * 8;
            Ok(Plan {
                layout: config.layout,
                parameters: name,
                log_n: params.log_n(),
                log_qp: params.log_qp(),
                secure_128: params.security().meets_128_bits,
                levels: top,
                levels_used: top - levels[2],
                batch: params.slots(),
                input_ciphertexts: inputs,
                ops: seed_op_counts(config.padding_taps),
                rotation_keys: 0,
                bootstraps: 0,
                memory_bytes: (inputs + CONV_OUT) as u64 * ct(top) + key,
                t: Some(params.t()),
                rehearsal_budget_bits: Some(budget),
            })
        }
        Layout::Packed => {
            let (params, name) = config.ckks_parameters()?;
            let layers = packed::Layers::new(model, params.slots())?;
            let top = params.default_level();
            if top < 5 {
                return Err(Error::InvalidInput(format!(
                    "cnn-mnist: the packed network needs 5 levels, the parameters have {top}"
                )));
            }
            let n = params.n() as u64;
            let limbs = |level: usize| params.q_limbs_at_level(level) as u64;
            let p = params.p_primes().len() as u64;
            let key = params.dnum() as u64 * 2 * n * (limbs(top) + p) * 8;
            let steps = layers.rotations();
            // Encoded plaintexts: the 25 tap weights at the top level, the dense transforms'
            // diagonals 2 and 4 levels down (Q and P limbs, for hoisting).
            let diag_bytes: u64 = TAPS as u64 * n * limbs(top) * 8
                + layers
                    .lts
                    .iter()
                    .enumerate()
                    .map(|(i, lt)| {
                        lt.diagonal_count() as u64 * n * (limbs(top - 2 - 2 * i) + p) * 8
                    })
                    .sum::<u64>();
            let per_ct = params.slots() / packed::BLOCK;
            let batch = config.images.unwrap_or(per_ct);
            let groups = batch.div_ceil(per_ct.max(1)) as u64;
            let products = layers.products();
            Ok(Plan {
                layout: config.layout,
                parameters: name,
                log_n: params.log_n(),
                log_qp: params.log_qp(),
                secure_128: params.security().meets_128_bits,
                levels: top,
                levels_used: 5,
                batch: per_ct,
                input_ciphertexts: (groups as usize) * TAPS,
                ops: OpCounts {
                    pt_ct_mults: groups * products,
                    pt_ct_adds: 3 * groups,
                    ct_ct_adds: groups * products.saturating_sub(3),
                    ct_ct_mults: 2 * groups,
                    keyswitches: groups * layers.keyswitches(),
                    mod_switches: 0,
                },
                rotation_keys: steps.len(),
                bootstraps: 0,
                memory_bytes: (steps.len() as u64 + 1) * key
                    + diag_bytes
                    + (TAPS as u64 + 4) * groups * 2 * n * limbs(top) * 8,
                t: None,
                rehearsal_budget_bits: None,
            })
        }
    }
}

/// The trained model, its quantisation (seed layout) and the data.
struct Prepared {
    model: Model,
    quant: Option<QuantModel>,
    train_s: f64,
    held_out: Images,
    batch: Images,
}

fn prepare(config: &CnnConfig, batch_size: usize) -> Result<Prepared> {
    config.check()?;
    let mut generator = Generator::new(config.data_seed);
    let train = generator.images(config.train_images);
    let held_out = generator.images(config.held_out_images);
    let batch = generator.images(batch_size);
    let start = std::time::Instant::now();
    let model = Model::train(
        &train,
        config.epochs,
        16,
        config.learning_rate,
        config.data_seed,
    );
    let train_s = start.elapsed().as_secs_f64();
    let quant = match config.layout {
        Layout::Packed => None,
        Layout::Seed => {
            let log_n = config.log_n();
            let t = batching_prime_below(config.plaintext_bits, log_n).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "cnn-mnist: no batching prime below 2^{}",
                    config.plaintext_bits
                ))
            })?;
            let calibration = Images {
                pixels: train.pixels[..train.len().min(300)].to_vec(),
                labels: train.labels[..train.len().min(300)].to_vec(),
            };
            let q = QuantModel::fit(&model, &calibration, t, config.headroom_bits).ok_or_else(
                || {
                    Error::InvalidInput(format!(
                        "cnn-mnist: no quantisation keeps the logits below t/2 = 2^{:.1} (raise \
                         the plaintext bits)",
                        (t as f64 / 2.0).log2()
                    ))
                },
            )?;
            // Every logit of the encrypted batch must be below t/2: BGV then returns it exactly.
            let m = q.magnitudes(&batch);
            if m.logits >= (t / 2) as i128 {
                return Err(Error::InvalidInput(format!(
                    "cnn-mnist: a logit of the batch reaches 2^{:.1}, beyond t/2 = 2^{:.1}: it \
                     would wrap modulo t (raise the headroom or the plaintext bits)",
                    (m.logits as f64).log2(),
                    (t as f64 / 2.0).log2()
                )));
            }
            Some(q)
        }
    };
    Ok(Prepared {
        model,
        quant,
        train_s,
        held_out,
        batch,
    })
}

fn batch_size(config: &CnnConfig) -> Result<usize> {
    let slots = match config.layout {
        Layout::Seed => 1usize << config.log_n(),
        Layout::Packed => (1usize << (config.log_n() - 1)) / packed::BLOCK,
    };
    let n = config.images.unwrap_or(slots);
    if config.layout == Layout::Seed && n > slots {
        return Err(Error::InvalidInput(format!(
            "cnn-mnist: {n} images for a batch of {slots} slots"
        )));
    }
    Ok(n)
}

/// The plan of `config` (trains the model, quantises it, and for the seed layout rehearses the
/// heaviest path's noise on one ciphertext on `device`); encrypts nothing of the batch.
pub fn plan(device: Device, config: &CnnConfig) -> Result<Plan> {
    let p = prepare(config, batch_size(config)?.min(64))?;
    plan_with(config, device, &p.model, p.quant.as_ref())
}

/// Runs CNN-MNIST on `device`: data, training, plan, encryption, inference on ciphertexts,
/// comparison with the plaintext reference.
///
/// Errors: [`Error::InvalidInput`] for a bad configuration, a quantisation that cannot keep the
/// logits below `t/2`, or a failed noise rehearsal; the library's errors.
pub fn run(device: Device, config: &CnnConfig) -> Result<CnnReport> {
    let batch_size = batch_size(config)?;
    let prep = prepare(config, batch_size)?;
    let plan = plan_with(config, device, &prep.model, prep.quant.as_ref())?;
    let accuracy_f64 = prep.model.accuracy(&prep.held_out);
    let labels = &prep.batch.labels;
    let n = prep.batch.len();
    let data = format!(
        "synthetic 28×28 seven-segment digits, pixels 0..=255, 10 classes (data seed {}); not MNIST",
        config.data_seed
    );
    let (timing, ops, enc_argmax, ref_argmax, exact, error_bits, budget, levels, quantisation) =
        match config.layout {
            Layout::Seed => {
                let q = prep
                    .quant
                    .as_ref()
                    .ok_or_else(|| Error::InvalidInput("cnn-mnist: no quantised model".into()))?;
                let (params, _) = config.bgv_parameters()?;
                let out = seed::infer(
                    &params,
                    device,
                    config.key_seed,
                    q,
                    &prep.batch.pixels,
                    config.padding_taps,
                )?;
                let reference: Vec<Vec<i128>> =
                    prep.batch.pixels.iter().map(|p| q.logits(p).0).collect();
                let exact = out
                    .logits
                    .iter()
                    .zip(&reference)
                    .all(|(a, b)| a.iter().zip(b).all(|(&x, &y)| x as i128 == y));
                let latency = out.stages.total();
                let m = q.magnitudes(&prep.batch);
                (
                    timing(
                        out.keygen_s,
                        out.encrypt_s,
                        0.0,
                        out.decrypt_s,
                        out.stages,
                        n,
                        latency,
                    ),
                    out.ops,
                    out.logits.iter().map(|l| argmax(l)).collect::<Vec<_>>(),
                    reference.iter().map(|l| argmax(l)).collect::<Vec<_>>(),
                    Some(exact),
                    None,
                    out.noise_budget_bits,
                    Some(out.levels),
                    Some(QuantReport {
                        input_bits: q.input_bits,
                        weight_bits: q.weight_bits,
                        logit_scale: q.logit_scale,
                        max_logit_bits: (m.logits.max(1) as f64).log2(),
                        t_bits: (params.t() as f64).log2(),
                        accuracy_quantised: q.accuracy(&prep.held_out),
                    }),
                )
            }
            Layout::Packed => {
                let (params, _) = config.ckks_parameters()?;
                let out = packed::infer(
                    &params,
                    device,
                    config.key_seed,
                    &prep.model,
                    &prep.batch.pixels,
                )?;
                let reference: Vec<Vec<f64>> = prep
                    .batch
                    .pixels
                    .iter()
                    .map(|p| prep.model.logits(p))
                    .collect();
                let (mut err, mut big) = (0.0f64, 0.0f64);
                for (a, b) in out.logits.iter().zip(&reference) {
                    for (x, y) in a.iter().zip(b) {
                        err = err.max((x - y).abs());
                        big = big.max(y.abs());
                    }
                }
                let latency = out.stages.total();
                (
                    timing(
                        out.keygen_s,
                        out.encrypt_s,
                        out.warm_up_s,
                        out.decrypt_s,
                        out.stages,
                        n,
                        latency,
                    ),
                    out.ops,
                    out.logits.iter().map(|l| argmax(l)).collect::<Vec<_>>(),
                    reference.iter().map(|l| argmax(l)).collect::<Vec<_>>(),
                    None,
                    Some(-(err / big.max(1e-300)).log2()),
                    None,
                    None,
                    None,
                )
            }
        };
    let frac = |f: &dyn Fn(usize) -> bool| (0..n).filter(|&i| f(i)).count() as f64 / n as f64;
    let chart = ChartEntry {
        app: format!("cnn-mnist ({} layout)", config.layout.name()),
        what: format!(
            "{} size, latency of one inference of {n} image{}",
            config.size.name(),
            if n == 1 { "" } else { "s" }
        ),
        rhea_ms: 1000.0 * timing.latency_s,
        device: device.name(),
        peers: vec![(
            format!("HE-Booster, {HE_BOOSTER_GPU}, one image (seed 003)"),
            1000.0 * HE_BOOSTER_S_PER_IMAGE,
        )],
    };
    Ok(CnnReport {
        chart,
        app: "cnn-mnist".into(),
        size: config.size,
        layout: config.layout,
        device: device.to_string(),
        plan,
        data,
        training: TrainingReport {
            images: config.train_images,
            epochs: config.epochs,
            learning_rate: config.learning_rate,
            seconds: prep.train_s,
        },
        accuracy_f64,
        quantisation,
        images: n,
        ops,
        seed_table7: SEED_TABLE7,
        accuracy_encrypted: frac(&|i| enc_argmax[i] == labels[i]),
        accuracy_reference: frac(&|i| ref_argmax[i] == labels[i]),
        argmax_agreement: frac(&|i| enc_argmax[i] == ref_argmax[i]),
        exact_logits: exact,
        error_bits,
        noise_budget_bits: budget,
        levels,
        timing,
        he_booster_s_per_image: HE_BOOSTER_S_PER_IMAGE,
    })
}

fn timing(
    keygen_s: f64,
    encrypt_s: f64,
    warm_up_s: f64,
    decrypt_s: f64,
    stages: Stages,
    images: usize,
    latency: f64,
) -> TimingReport {
    TimingReport {
        keygen_s,
        encrypt_s,
        warm_up_s,
        latency_s: latency,
        stages,
        decrypt_s,
        images_per_s: images as f64 / latency.max(1e-12),
        amortised_ms_per_image: 1e3 * latency / images.max(1) as f64,
        bootstraps: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::primes::is_prime;
    use super::*;

    #[test]
    fn the_seed_op_counts_are_table_7s_with_the_padding_taps() {
        assert_eq!(seed_op_counts(true).pt_ct_mults, SEED_TABLE7.pt_ct_mults);
        assert_eq!(seed_op_counts(true).ct_ct_adds, SEED_TABLE7.ct_ct_adds);
        assert_eq!(seed_op_counts(true).pt_ct_adds, SEED_TABLE7.pt_ct_adds);
        assert_eq!(seed_op_counts(true).ct_ct_mults, SEED_TABLE7.ct_ct_mults);
        // Without them, 645 fewer multiplications and additions.
        assert_eq!(
            seed_op_counts(false).pt_ct_mults,
            SEED_TABLE7.pt_ct_mults - 645
        );
        assert_eq!(
            seed_op_counts(false).ct_ct_adds,
            SEED_TABLE7.ct_ct_adds - 645
        );
    }

    #[test]
    fn batching_primes_are_prime_of_the_right_size_and_class() {
        for log_n in [12, 13, 14] {
            let t = batching_prime_below(43, log_n).unwrap();
            assert!((1 << 42..1 << 43).contains(&t));
            assert_eq!(t % (2 << log_n), 1);
            assert!(is_prime(t));
        }
        assert!(is_prime(65537) && !is_prime(65535) && !is_prime(1));
        // 7·2^14 + 1, the largest 17-bit prime ≡ 1 (mod 2^13); 65537 at N = 2^15.
        assert_eq!(batching_prime_below(17, 12), Some(114_689));
        assert_eq!(batching_prime_below(17, 15), Some(65_537));
    }

    #[test]
    fn paper_parameters_are_128_bit_and_small_ones_are_flagged() {
        let c = CnnConfig::new(Size::Paper, Layout::Seed);
        let (p, _) = c.bgv_parameters().unwrap();
        assert!(p.security().meets_128_bits);
        assert_eq!((p.log_n(), p.max_level()), (14, 5));
        let (p, _) = CnnConfig::new(Size::Paper, Layout::Packed)
            .ckks_parameters()
            .unwrap();
        assert!(p.security().meets_128_bits);
        assert_eq!(p.slots() / packed::BLOCK, 8);
        let (p, name) = CnnConfig::new(Size::Small, Layout::Seed)
            .bgv_parameters()
            .unwrap();
        assert!(!p.security().meets_128_bits && name.contains("INSECURE"));
    }

    #[test]
    fn bad_configurations_are_refused() {
        let mut c = CnnConfig::new(Size::Small, Layout::Seed);
        c.plaintext_bits = 62;
        assert!(run(Device::Cpu, &c).is_err());
        let mut c = CnnConfig::new(Size::Small, Layout::Seed);
        c.images = Some(1 << 13);
        assert!(run(Device::Cpu, &c)
            .unwrap_err()
            .to_string()
            .contains("slots"));
        assert!(Layout::parse("diagonal").is_err());
    }
}
