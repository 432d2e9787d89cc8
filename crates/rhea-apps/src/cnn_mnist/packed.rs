//! The packed layout (ours) on CKKS: whole images in the slots, `slots / 1024` images a
//! ciphertext, each in a block of 1024 slots (pixel `p` of image `b` at slot `1024·b + p`), and
//! each layer one [`LinearTransform`] — the same 1024 × 1024 block matrix on every block
//! ([`LinearTransform::from_block_diagonal`]: the layer's matrix in the block's top-left corner,
//! baby-step/giant-step with hoisting) — plus a bias plaintext; the activations are squarings.
//! Five levels: transform, square, transform, square, transform. The logits of image `b` land in
//! slots `1024·b .. 1024·b + 10`.
//!
//! CKKS, not BGV, here: the library has the hoisted baby-step/giant-step transform for CKKS
//! only, and BGV's slot-wise plaintext products would cost about `log2(N·t)` bits of noise each
//! (a level per layer at a 43-bit `t`) where CKKS rescales.

use std::sync::Arc;
use std::time::Instant;

use rhea::ckks::{
    Ciphertext, CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator,
    LinearTransform, Plaintext,
};
use rhea::params::CkksParameters;
use rhea::{Device, Error, Result};

use super::data::{CLASSES, PIXELS};
use super::plain::{tap_pixel, Model, CONV_OUT, CONV_SIDE, FILTERS, HIDDEN, TAPS};
use super::{OpCounts, Stages};

/// The slots of one image's block.
pub const BLOCK: usize = 1024;

/// The three layers as block transforms on `slots` slots, with their biases (block-local).
pub(super) struct Layers {
    pub lts: [LinearTransform; 3],
    /// The bias of each layer, `BLOCK` values (zero beyond the layer's outputs).
    pub biases: [Vec<f64>; 3],
}

impl Layers {
    pub fn new(model: &Model, slots: usize) -> Result<Self> {
        let mut conv = vec![vec![0.0f64; BLOCK]; BLOCK];
        let mut b1 = vec![0.0; BLOCK];
        for f in 0..FILTERS {
            for pos in 0..CONV_SIDE * CONV_SIDE {
                let o = f * CONV_SIDE * CONV_SIDE + pos;
                b1[o] = model.b1[f];
                for tap in 0..TAPS {
                    if let Some(p) = tap_pixel(pos, tap) {
                        // The pixels arrive over 255.
                        conv[o][p] = model.w1[f][tap];
                    }
                }
            }
        }
        let mut dense1 = vec![vec![0.0f64; BLOCK]; BLOCK];
        let mut b2 = vec![0.0; BLOCK];
        for h in 0..HIDDEN {
            dense1[h][..CONV_OUT].copy_from_slice(&model.w2[h]);
            b2[h] = model.b2[h];
        }
        let mut dense2 = vec![vec![0.0f64; BLOCK]; BLOCK];
        let mut b3 = vec![0.0; BLOCK];
        for c in 0..CLASSES {
            dense2[c][..HIDDEN].copy_from_slice(&model.w3[c]);
            b3[c] = model.b3[c];
        }
        Ok(Self {
            lts: [
                LinearTransform::from_block_diagonal(slots, &[conv])?,
                LinearTransform::from_block_diagonal(slots, &[dense1])?,
                LinearTransform::from_block_diagonal(slots, &[dense2])?,
            ],
            biases: [b1, b2, b3],
        })
    }

    /// Every rotation step the three transforms need.
    pub fn rotations(&self) -> Vec<i64> {
        let mut steps: Vec<i64> = self.lts.iter().flat_map(|lt| lt.rotations()).collect();
        steps.sort_unstable();
        steps.dedup();
        steps
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
    encoder: Encoder,
    layers: &'a Layers,
    slots: usize,
}

impl Engine<'_> {
    /// The bias of `layer` in every block, at `ct`'s level and scale.
    fn bias(&self, layer: usize, ct: &Ciphertext) -> Result<Plaintext> {
        let values: Vec<f64> = (0..self.slots)
            .map(|s| self.layers.biases[layer][s % BLOCK])
            .collect();
        self.encoder.encode_at(&values, ct.level(), ct.scale())
    }

    fn layer(&self, layer: usize, ct: &Ciphertext) -> Result<Ciphertext> {
        let y = self.eval.linear_transform(ct, &self.layers.lts[layer])?;
        let b = self.bias(layer, &y)?;
        self.eval.add_plain(&y, &b)
    }

    /// The network on one ciphertext, each stage timed (biases encoded beforehand).
    fn network(&self, ct: &Ciphertext, stages: &mut Stages) -> Result<Ciphertext> {
        let device = self.eval.context().device();
        let mut clock = Instant::now();
        let mut lap = |acc: &mut f64| -> Result<()> {
            device.synchronize()?;
            *acc += clock.elapsed().as_secs_f64();
            clock = Instant::now();
            Ok(())
        };
        let y = self.layer(0, ct)?;
        lap(&mut stages.conv)?;
        let a = self.eval.square(&y)?;
        lap(&mut stages.act1)?;
        let z = self.layer(1, &a)?;
        lap(&mut stages.dense1)?;
        let a2 = self.eval.square(&z)?;
        lap(&mut stages.act2)?;
        let out = self.layer(2, &a2)?;
        lap(&mut stages.dense2)?;
        Ok(out)
    }
}

/// Runs the packed layout on `images` (`slots / 1024` a ciphertext).
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
    let engine = Engine {
        eval,
        encoder,
        layers: &layers,
        slots,
    };

    let start = Instant::now();
    let cts = images
        .chunks(per_ct)
        .map(|chunk| {
            let mut values = vec![0.0; slots];
            for (b, img) in chunk.iter().enumerate() {
                for (p, &px) in img.iter().enumerate().take(PIXELS) {
                    values[b * BLOCK + p] = px as f64 / 255.0;
                }
            }
            encryptor.encrypt(&engine.encoder.encode(&values)?)
        })
        .collect::<Result<Vec<_>>>()?;
    device.synchronize()?;
    let encrypt_s = start.elapsed().as_secs_f64();

    // Warm-up, untimed: encodes and caches every diagonal (and compiles a GPU's kernels).
    let start = Instant::now();
    engine.network(&cts[0], &mut Stages::default())?;
    let warm_up_s = start.elapsed().as_secs_f64();

    let mut stages = Stages::default();
    let before = ctx.keyswitches();
    let outs = cts
        .iter()
        .map(|ct| engine.network(ct, &mut stages))
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
    let n = cts.len() as u64;
    let diagonals: u64 = layers.lts.iter().map(|lt| lt.diagonal_count() as u64).sum();
    Ok(Outcome {
        logits,
        keygen_s,
        encrypt_s,
        warm_up_s,
        decrypt_s,
        stages,
        ops: OpCounts {
            pt_ct_mults: n * diagonals,
            pt_ct_adds: 3 * n,
            ct_ct_adds: n * diagonals.saturating_sub(3),
            ct_ct_mults: 2 * n,
            keyswitches,
            mod_switches: 0,
        },
    })
}
