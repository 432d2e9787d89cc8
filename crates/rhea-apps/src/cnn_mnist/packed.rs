//! The packed layout (ours) on CKKS: whole images in the slots, `slots / 1024` images a
//! ciphertext group, each image in a block of 1024 slots, with three ideas:
//!
//! - **Convolution-ready input** (as LoLa and CryptoNets encode it): the client encrypts, for
//!   each of the 25 kernel taps `k`, one ciphertext whose slot `1024·b + 169·f + pos` holds the
//!   pixel (over 255) under tap `k` of output position `pos` of image `b` (0 on the padding;
//!   the same for every filter `f`). The convolution is then 25 slot-wise plaintext products
//!   and additions, one rescaling and a bias: no rotation.
//! - **Dense 845 → 100 by the hybrid diagonal method** inside each block: the 100 × 845 matrix,
//!   padded to 128 × 1024, as 128 block-cyclic diagonals (255 slot diagonals: a block-cyclic
//!   rotation is two slot rotations) in one baby-step/giant-step [`LinearTransform`], then a
//!   `rotate_and_sum(128, 8)` adds the eight partial sums: hidden unit `h` of image `b` in slot
//!   `1024·b + h` (the block's other slots hold partial sums the next layer ignores).
//! - **Dense 100 → 10** as one block-diagonal transform
//!   ([`LinearTransform::from_block_diagonal`], 109 diagonals).
//!
//! The activations are squarings. Five levels: conv, square, dense, square, dense. The logits
//! of image `b` land in slots `1024·b .. 1024·b + 10`.
//!
//! CKKS, not BGV, here: the library has the hoisted baby-step/giant-step transform for CKKS
//! only, and BGV's slot-wise plaintext products would cost about `log2(N·t)` bits of noise each
//! (a level per layer at a 43-bit `t`) where CKKS rescales.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Instant;

use rhea::ckks::{
    Ciphertext, CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator,
    LinearTransform, Plaintext,
};
use rhea::params::CkksParameters;
use rhea::{Device, Error, Result};

use super::data::CLASSES;
use super::plain::{tap_pixel, Model, CONV_OUT, CONV_SIDE, FILTERS, HIDDEN, TAPS};
use super::{OpCounts, Stages};

/// The slots of one image's block.
pub const BLOCK: usize = 1024;
/// The hidden layer's rows, padded (a power of two dividing [`BLOCK`]).
pub const HIDDEN_PAD: usize = 128;

/// The layers: the convolution's 25 tap weights and the two dense transforms, with the
/// biases (block-local).
pub(super) struct Layers {
    /// Tap `k`'s weight at block slot `169·f + pos`: `w1[f][k]`.
    pub taps: Vec<Vec<f64>>,
    /// Dense 845 → 100 (hybrid, before the `rotate_and_sum(128, 8)`) and dense 100 → 10.
    pub lts: [LinearTransform; 2],
    /// The bias of each layer, `BLOCK` values (zero beyond the layer's outputs).
    pub biases: [Vec<f64>; 3],
    slots: usize,
}

impl Layers {
    pub fn new(model: &Model, slots: usize) -> Result<Self> {
        let area = CONV_SIDE * CONV_SIDE;
        let taps = (0..TAPS)
            .map(|k| {
                let mut w = vec![0.0; BLOCK];
                for f in 0..FILTERS {
                    w[f * area..(f + 1) * area].fill(model.w1[f][k]);
                }
                w
            })
            .collect();
        let mut b1 = vec![0.0; BLOCK];
        for f in 0..FILTERS {
            b1[f * area..(f + 1) * area].fill(model.b1[f]);
        }
        // The hybrid diagonals: slot s = 1024·b + r reads column c = (r + k) mod 1024 of row
        // r mod 128 from slot s + k when r + k < 1024 (diagonal k), else from s + k − 1024
        // (diagonal k − 1024).
        let entry = |r: usize, c: usize| -> f64 {
            let h = r % HIDDEN_PAD;
            if h < HIDDEN && c < CONV_OUT {
                model.w2[h][c]
            } else {
                0.0
            }
        };
        let mut diagonals: Vec<(i64, Vec<f64>)> = Vec::new();
        for k in 0..HIDDEN_PAD {
            let mut near = vec![0.0; slots];
            let mut wrap = vec![0.0; slots];
            for s in 0..slots {
                let r = s % BLOCK;
                if r + k < BLOCK {
                    near[s] = entry(r, r + k);
                } else {
                    wrap[s] = entry(r, r + k - BLOCK);
                }
            }
            if near.iter().any(|&x| x != 0.0) {
                diagonals.push((k as i64, near));
            }
            if wrap.iter().any(|&x| x != 0.0) {
                diagonals.push((k as i64 - BLOCK as i64, wrap));
            }
        }
        let dense1 = LinearTransform::from_diagonals(slots, diagonals)?;
        let mut b2 = vec![0.0; BLOCK];
        b2[..HIDDEN].copy_from_slice(&model.b2);
        let mut dense2 = vec![vec![0.0f64; BLOCK]; BLOCK];
        let mut b3 = vec![0.0; BLOCK];
        for c in 0..CLASSES {
            dense2[c][..HIDDEN].copy_from_slice(&model.w3[c]);
            b3[c] = model.b3[c];
        }
        Ok(Self {
            taps,
            lts: [
                dense1,
                LinearTransform::from_block_diagonal(slots, &[dense2])?,
            ],
            biases: [b1, b2, b3],
            slots,
        })
    }

    /// Every rotation step the layers need.
    pub fn rotations(&self) -> Vec<i64> {
        let mut steps: Vec<i64> = self.lts.iter().flat_map(|lt| lt.rotations()).collect();
        steps.extend(Evaluator::rotate_and_sum_rotations(
            self.slots,
            HIDDEN_PAD as i64,
            BLOCK / HIDDEN_PAD,
        ));
        steps.sort_unstable();
        steps.dedup();
        steps
    }

    /// Slot-wise plaintext products of one inference (per ciphertext group).
    pub fn products(&self) -> u64 {
        TAPS as u64
            + self
                .lts
                .iter()
                .map(|lt| lt.diagonal_count() as u64)
                .sum::<u64>()
    }

    /// Key switchings of one inference (per ciphertext group): the transforms, the sum of the
    /// partial sums, two relinearisations.
    pub fn keyswitches(&self) -> u64 {
        self.lts
            .iter()
            .map(|lt| lt.keyswitches() as u64)
            .sum::<u64>()
            + Evaluator::rotate_and_sum_rotations(self.slots, HIDDEN_PAD as i64, BLOCK / HIDDEN_PAD)
                .len() as u64
            + 2
    }
}

/// What the encrypted inference gives back.
pub(super) struct Outcome {
    /// The decrypted logits, `[image][class]`.
    pub logits: Vec<Vec<f64>>,
    pub keygen_s: f64,
    pub encrypt_s: f64,
    pub warm_up_s: f64,
    pub decrypt_s: f64,
    pub stages: Stages,
    pub ops: OpCounts,
}

struct Engine<'a> {
    eval: Evaluator,
    /// Without automatic rescaling: the convolution's 25 products, rescaled once.
    manual: Evaluator,
    encoder: Encoder,
    layers: &'a Layers,
    /// The tap weights, encoded once at the fresh level.
    taps: Vec<Plaintext>,
    /// Each layer's bias, encoded at the level and scale it was last added at.
    biases: RefCell<[Option<Plaintext>; 3]>,
    slots: usize,
}

impl Engine<'_> {
    /// Adds `layer`'s bias (in every block) to `ct`, encoded once per level and scale.
    fn add_bias(&self, layer: usize, ct: &Ciphertext) -> Result<Ciphertext> {
        let mut cache = self.biases.borrow_mut();
        let fresh = match &cache[layer] {
            Some(pt) => pt.level() != ct.level() || pt.scale() != ct.scale(),
            None => true,
        };
        if fresh {
            let values: Vec<f64> = (0..self.slots)
                .map(|s| self.layers.biases[layer][s % BLOCK])
                .collect();
            cache[layer] = Some(self.encoder.encode_at(&values, ct.level(), ct.scale())?);
        }
        let pt = cache[layer]
            .as_ref()
            .ok_or_else(|| Error::InvalidInput("cnn-mnist: no bias".into()))?;
        self.eval.add_plain(ct, pt)
    }

    /// The network on one group of 25 tap ciphertexts, each stage timed.
    fn network(&self, x: &[Ciphertext], stages: &mut Stages) -> Result<Ciphertext> {
        let device = self.eval.context().device();
        let mut clock = Instant::now();
        let mut lap = |acc: &mut f64| -> Result<()> {
            device.synchronize()?;
            *acc += clock.elapsed().as_secs_f64();
            clock = Instant::now();
            Ok(())
        };
        let mut acc: Option<Ciphertext> = None;
        for (ct, w) in x.iter().zip(&self.taps) {
            let term = self.manual.mul_plain(ct, w)?;
            match acc.as_mut() {
                None => acc = Some(term),
                Some(a) => self.manual.add_assign(a, &term)?,
            }
        }
        let acc = acc.ok_or_else(|| Error::InvalidInput("cnn-mnist: no tap".into()))?;
        let y = self.add_bias(0, &self.manual.rescale(&acc)?)?;
        lap(&mut stages.conv)?;
        let a = self.eval.square(&y)?;
        lap(&mut stages.act1)?;
        let z = self.eval.linear_transform(&a, &self.layers.lts[0])?;
        let z = self
            .eval
            .rotate_and_sum(&z, HIDDEN_PAD as i64, BLOCK / HIDDEN_PAD)?;
        let z = self.add_bias(1, &z)?;
        lap(&mut stages.dense1)?;
        let a2 = self.eval.square(&z)?;
        lap(&mut stages.act2)?;
        let out = self.eval.linear_transform(&a2, &self.layers.lts[1])?;
        let out = self.add_bias(2, &out)?;
        lap(&mut stages.dense2)?;
        Ok(out)
    }
}

/// The 25 tap ciphertexts' slot values for a group of images (the client's encoding).
pub(super) fn tap_values(images: &[Vec<u8>], slots: usize) -> Vec<Vec<f64>> {
    let area = CONV_SIDE * CONV_SIDE;
    (0..TAPS)
        .map(|k| {
            let mut values = vec![0.0; slots];
            for (b, img) in images.iter().enumerate().take(slots / BLOCK) {
                for pos in 0..area {
                    if let Some(p) = tap_pixel(pos, k) {
                        let v = img.get(p).copied().unwrap_or(0) as f64 / 255.0;
                        for f in 0..FILTERS {
                            values[b * BLOCK + f * area + pos] = v;
                        }
                    }
                }
            }
            values
        })
        .collect()
}

/// Runs the packed layout on `images` (`slots / 1024` a group of 25 ciphertexts).
pub(super) fn infer(
    params: &CkksParameters,
    device: Device,
    key_seed: Option<[u8; 32]>,
    model: &Model,
    images: &[Vec<u8>],
) -> Result<Outcome> {
    let slots = params.slots();
    let per_ct = slots / BLOCK;
    if per_ct == 0 || images.is_empty() {
        return Err(Error::InvalidInput(format!(
            "cnn-mnist: the packed layout needs at least {BLOCK} slots and one image ({slots} \
             slots, {} images)",
            images.len()
        )));
    }
    let layers = Layers::new(model, slots)?;
    let ctx = CkksContext::new(params, device)?;
    let start = Instant::now();
    let mut keygen = match key_seed {
        Some(seed) => KeyGenerator::from_seed(&ctx, seed),
        None => KeyGenerator::new(&ctx)?,
    };
    let sk = Arc::new(keygen.secret_key()?);
    let rlk = keygen.relinearization_key(&sk)?;
    let steps = layers.rotations();
    let gk = keygen.galois_keys(&sk, &steps, false)?;
    let eval = Evaluator::new(&ctx)
        .with_relinearization_key(rlk)?
        .with_galois_keys(gk)?;
    device.synchronize()?;
    let keygen_s = start.elapsed().as_secs_f64();
    let encoder = Encoder::new(&ctx)?;
    let mut encryptor = Encryptor::with_secret_key(&ctx, sk.clone())?;
    if let Some(mut seed) = key_seed {
        seed[31] ^= 0x5a;
        encryptor = encryptor.with_seed(seed);
    }
    let decryptor = Decryptor::new(&ctx, sk)?;
    let top = params.max_level();
    let taps = layers
        .taps
        .iter()
        .map(|w| {
            let values: Vec<f64> = (0..slots).map(|s| w[s % BLOCK]).collect();
            encoder.encode_at(&values, top, params.default_scale())
        })
        .collect::<Result<Vec<_>>>()?;
    let engine = Engine {
        eval,
        manual: Evaluator::new(&ctx).with_auto_rescale(false),
        encoder,
        layers: &layers,
        taps,
        biases: RefCell::new([None, None, None]),
        slots,
    };

    let start = Instant::now();
    let groups = images
        .chunks(per_ct)
        .map(|chunk| {
            tap_values(chunk, slots)
                .iter()
                .map(|v| encryptor.encrypt(&engine.encoder.encode(v)?))
                .collect::<Result<Vec<_>>>()
        })
        .collect::<Result<Vec<_>>>()?;
    device.synchronize()?;
    let encrypt_s = start.elapsed().as_secs_f64();

    // Warm-up, untimed: encodes and caches every diagonal (and compiles a GPU's kernels).
    let start = Instant::now();
    engine.network(&groups[0], &mut Stages::default())?;
    let warm_up_s = start.elapsed().as_secs_f64();

    let mut stages = Stages::default();
    let before = ctx.keyswitches();
    let outs = groups
        .iter()
        .map(|g| engine.network(g, &mut stages))
        .collect::<Result<Vec<_>>>()?;
    let keyswitches = ctx.keyswitches() - before;

    let start = Instant::now();
    let mut logits = Vec::with_capacity(images.len());
    for (k, out) in outs.iter().enumerate() {
        let values = engine.encoder.decode(&decryptor.decrypt(out)?)?;
        for b in 0..per_ct.min(images.len() - k * per_ct) {
            logits.push(values[b * BLOCK..b * BLOCK + CLASSES].to_vec());
        }
    }
    let decrypt_s = start.elapsed().as_secs_f64();
    let n = groups.len() as u64;
    let products = layers.products();
    Ok(Outcome {
        logits,
        keygen_s,
        encrypt_s,
        warm_up_s,
        decrypt_s,
        stages,
        ops: OpCounts {
            pt_ct_mults: n * products,
            pt_ct_adds: 3 * n,
            ct_ct_adds: n * products.saturating_sub(3),
            ct_ct_mults: 2 * n,
            keyswitches,
            mod_switches: 0,
        },
    })
}
