//! The seed's layout on BGV: one pixel per ciphertext (784 ciphertexts), a batch of images
//! across the slots (image `s` in slot `s` of every ciphertext), every layer made of
//! plaintext-scalar multiplications ([`Evaluator::mul_const`]: the weight is the same integer in
//! every slot, so no level is spent and the noise grows by `|w|`), ciphertext additions and
//! constant additions (the biases); the activations are squarings (relinearised, then modulus
//! switched).
//!
//! **Levels.** Every ciphertext of a layer has the same history, hence the same level, noise
//! bound and correction factor (additions need no factor balancing). After each squaring's
//! automatic switch, the layer is switched down further while a switch lowers the tracked noise
//! bound by at least [`SWITCH_GAIN_BITS`] and levels remain for what follows (decided on the
//! first ciphertext, applied to all).

use std::sync::Arc;
use std::time::Instant;

use rhea::bgv::{
    BgvContext, BgvParameters, Ciphertext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator,
};
use rhea::{Device, Error, Result};

use super::data::{CLASSES, PIXELS};
use super::plain::{tap_pixel, QuantModel, CONV_OUT, CONV_SIDE, FILTERS, HIDDEN, TAPS};
use super::{OpCounts, Stages};

/// A switch is worth its level when it lowers the noise bound by at least this many bits.
pub const SWITCH_GAIN_BITS: f64 = 4.0;

/// What the encrypted inference gives back.
pub(super) struct Outcome {
    /// The decrypted logits, `[image][class]`.
    pub logits: Vec<Vec<i64>>,
    pub keygen_s: f64,
    pub encrypt_s: f64,
    pub decrypt_s: f64,
    pub stages: Stages,
    pub ops: OpCounts,
    /// The smallest noise budget of the 10 output ciphertexts (bits).
    pub noise_budget_bits: Option<u32>,
    /// Levels: fresh, after the first activation, after the second, of the logits.
    pub levels: [usize; 4],
}

/// The evaluation keys and helpers of one run.
pub(super) struct Engine {
    pub ctx: BgvContext,
    pub eval: Evaluator,
    pub encoder: Encoder,
    pub encryptor: Encryptor,
    pub decryptor: Decryptor,
}

impl Engine {
    pub fn new(params: &BgvParameters, device: Device, key_seed: Option<[u8; 32]>) -> Result<Self> {
        let ctx = BgvContext::new(params, device)?;
        let mut keygen = match key_seed {
            Some(seed) => KeyGenerator::from_seed(&ctx, seed),
            None => KeyGenerator::new(&ctx)?,
        };
        let sk = Arc::new(keygen.secret_key()?);
        let rlk = keygen.relinearization_key(&sk)?;
        let eval = Evaluator::new(&ctx).with_relinearization_key(rlk)?;
        let mut encryptor = Encryptor::with_secret_key(&ctx, sk.clone())?;
        if let Some(mut seed) = key_seed {
            seed[31] ^= 0x5a;
            encryptor = encryptor.with_seed(seed);
        }
        Ok(Self {
            encoder: Encoder::new(&ctx)?,
            decryptor: Decryptor::new(&ctx, sk)?,
            encryptor,
            eval,
            ctx,
        })
    }

    /// `Σ_k w_k·x_k + b` over ciphertexts (`None` entries are zero inputs: skipped unless `zero`
    /// stands in for them).
    fn dot(
        &self,
        inputs: &[Option<&Ciphertext>],
        weights: &[i64],
        bias: i64,
        ops: &mut OpCounts,
    ) -> Result<Ciphertext> {
        let mut acc: Option<Ciphertext> = None;
        for (x, &w) in inputs.iter().zip(weights) {
            let Some(x) = x else { continue };
            let term = self.eval.mul_const(x, w)?;
            ops.pt_ct_mults += 1;
            match acc.as_mut() {
                None => acc = Some(term),
                Some(a) => {
                    self.eval.add_assign(a, &term)?;
                    ops.ct_ct_adds += 1;
                }
            }
        }
        let mut acc =
            acc.ok_or_else(|| Error::InvalidInput("cnn-mnist: an output with no input".into()))?;
        self.eval.add_const_assign(&mut acc, bias)?;
        ops.pt_ct_adds += 1;
        Ok(acc)
    }

    /// The convolution: 845 ciphertexts from the 784 inputs (and `zero` for the padding taps
    /// when given: the seed's 25 multiplications an output).
    fn conv(
        &self,
        q: &QuantModel,
        x: &[Ciphertext],
        zero: Option<&Ciphertext>,
        ops: &mut OpCounts,
    ) -> Result<Vec<Ciphertext>> {
        let mut out = Vec::with_capacity(CONV_OUT);
        for f in 0..FILTERS {
            for pos in 0..CONV_SIDE * CONV_SIDE {
                let inputs: Vec<Option<&Ciphertext>> = (0..TAPS)
                    .map(|tap| tap_pixel(pos, tap).map(|p| &x[p]).or(zero))
                    .collect();
                out.push(self.dot(&inputs, &q.w1[f], q.b1[f], ops)?);
            }
        }
        Ok(out)
    }

    /// A dense layer.
    fn dense(
        &self,
        w: &[Vec<i64>],
        b: &[i64],
        x: &[Ciphertext],
        ops: &mut OpCounts,
    ) -> Result<Vec<Ciphertext>> {
        let inputs: Vec<Option<&Ciphertext>> = x.iter().map(Some).collect();
        w.iter()
            .zip(b)
            .map(|(row, &bias)| self.dot(&inputs, row, bias, ops))
            .collect()
    }

    /// The activation: each squared (with its switch), then the extra switches that pay, down
    /// to `keep_level` at the lowest.
    fn activation(
        &self,
        x: &[Ciphertext],
        keep_level: usize,
        ops: &mut OpCounts,
    ) -> Result<Vec<Ciphertext>> {
        let mut out = x
            .iter()
            .map(|c| {
                ops.ct_ct_mults += 1;
                ops.keyswitches += 1; // the relinearisation
                self.eval.square(c)
            })
            .collect::<Result<Vec<_>>>()?;
        let target = self.switch_target(&out[0], keep_level)?;
        if target < out[0].level() {
            for c in out.iter_mut() {
                ops.mod_switches += (c.level() - target) as u64;
                *c = self.eval.mod_switch_to_level(c, target)?;
            }
        }
        Ok(out)
    }

    /// The lowest level down to `keep_level` that each switch on the way improves by
    /// [`SWITCH_GAIN_BITS`].
    fn switch_target(&self, ct: &Ciphertext, keep_level: usize) -> Result<usize> {
        let mut c = ct.try_clone()?;
        while c.level() > keep_level {
            let s = self.eval.mod_switch(&c)?;
            if s.noise_bound_bits() > c.noise_bound_bits() - SWITCH_GAIN_BITS {
                break;
            }
            c = s;
        }
        Ok(c.level())
    }

    /// The network on ciphertexts: conv, square, dense, square, dense; each stage timed.
    pub fn network(
        &self,
        q: &QuantModel,
        x: &[Ciphertext],
        zero: Option<&Ciphertext>,
        ops: &mut OpCounts,
        stages: &mut Stages,
    ) -> Result<(Vec<Ciphertext>, [usize; 3])> {
        let device = self.ctx.device();
        let mut clock = Instant::now();
        let mut lap = |acc: &mut f64| -> Result<()> {
            device.synchronize()?;
            *acc += clock.elapsed().as_secs_f64();
            clock = Instant::now();
            Ok(())
        };
        let y1 = self.conv(q, x, zero, ops)?;
        lap(&mut stages.conv)?;
        let a1 = self.activation(&y1, 2, ops)?;
        drop(y1);
        lap(&mut stages.act1)?;
        let z = self.dense(&q.w2, &q.b2, &a1, ops)?;
        let level1 = a1[0].level();
        drop(a1);
        lap(&mut stages.dense1)?;
        let a2 = self.activation(&z, 1, ops)?;
        lap(&mut stages.act2)?;
        let out = self.dense(&q.w3, &q.b3, &a2, ops)?;
        lap(&mut stages.dense2)?;
        let levels = [level1, a2[0].level(), out[0].level()];
        Ok((out, levels))
    }
}

/// Runs the seed's layout on `images` (at most the slot count), returning the decrypted logits.
pub(super) fn infer(
    params: &BgvParameters,
    device: Device,
    key_seed: Option<[u8; 32]>,
    q: &QuantModel,
    images: &[Vec<u8>],
    padding_taps: bool,
) -> Result<Outcome> {
    let start = Instant::now();
    let engine = Engine::new(params, device, key_seed)?;
    device.synchronize()?;
    let keygen_s = start.elapsed().as_secs_f64();
    let slots = engine.encoder.slots();
    if images.is_empty() || images.len() > slots {
        return Err(Error::InvalidInput(format!(
            "cnn-mnist: {} images for {slots} slots",
            images.len()
        )));
    }

    // The client: one ciphertext per pixel, image s in slot s.
    let start = Instant::now();
    let mut x = Vec::with_capacity(PIXELS);
    for p in 0..PIXELS {
        let mut values = vec![0u64; slots];
        for (s, img) in images.iter().enumerate() {
            values[s] = q.input(img[p]) as u64;
        }
        x.push(engine.encryptor.encrypt(&engine.encoder.encode(&values)?)?);
    }
    let zero = if padding_taps {
        Some(
            engine
                .encryptor
                .encrypt(&engine.encoder.encode(&vec![0u64; slots])?)?,
        )
    } else {
        None
    };
    device.synchronize()?;
    let encrypt_s = start.elapsed().as_secs_f64();
    let fresh_level = x[0].level();

    let mut ops = OpCounts::default();
    let mut stages = Stages::default();
    let (out, levels) = engine.network(q, &x, zero.as_ref(), &mut ops, &mut stages)?;

    let start = Instant::now();
    let mut logits = vec![vec![0i64; CLASSES]; images.len()];
    let mut budget: Option<u32> = None;
    for (c, ct) in out.iter().enumerate() {
        let d = engine.decryptor.decrypt(ct)?;
        budget = match (budget, d.noise_budget()) {
            (None, b) => b,
            (Some(a), Some(b)) => Some(a.min(b)),
            (Some(a), None) => Some(a),
        };
        let values = engine.encoder.decode_signed(&d)?;
        for (s, row) in logits.iter_mut().enumerate() {
            row[c] = values[s];
        }
    }
    let decrypt_s = start.elapsed().as_secs_f64();
    Ok(Outcome {
        logits,
        keygen_s,
        encrypt_s,
        decrypt_s,
        stages,
        ops,
        noise_budget_bits: budget,
        levels: [fresh_level, levels[0], levels[1], levels[2]],
    })
}

/// The noise rehearsal of the plan: the network's heaviest path on one ciphertext at the run's
/// parameters — the conv filter and the dense rows with the largest `Σ|w|`, every input of a
/// layer the same ciphertext (so the noise bound grows as on the real path) — decrypted and
/// checked against the same arithmetic modulo `t`. Returns the final noise budget (bits) and the
/// levels after each activation.
pub(super) fn rehearse(
    params: &BgvParameters,
    device: Device,
    q: &QuantModel,
) -> Result<(u32, [usize; 3])> {
    let engine = Engine::new(params, device, Some([7u8; 32]))?;
    let t = params.t() as i128;
    let heaviest = |rows: &[Vec<i64>]| {
        (0..rows.len())
            .max_by_key(|&r| rows[r].iter().map(|w| w.unsigned_abs()).sum::<u64>())
            .unwrap_or(0)
    };
    let (f, h, c) = (heaviest(&q.w1), heaviest(&q.w2), heaviest(&q.w3));
    let pixel = 1i64;
    let slots = engine.encoder.slots();
    let x = engine
        .encryptor
        .encrypt(&engine.encoder.encode(&vec![pixel as u64; slots])?)?;
    let mut ops = OpCounts::default();
    let md = |v: i128| v.rem_euclid(t);
    // Conv (all 25 taps, as with the padding ciphertext), square.
    let inputs = vec![Some(&x); TAPS];
    let y = engine.dot(&inputs, &q.w1[f], q.b1[f], &mut ops)?;
    let y_val =
        md(q.w1[f].iter().map(|&w| w as i128).sum::<i128>() * pixel as i128 + q.b1[f] as i128);
    let a = engine.activation(&[y], 2, &mut ops)?.remove(0);
    let level1 = a.level();
    let a_val = md(y_val * y_val);
    let inputs = vec![Some(&a); CONV_OUT];
    let z = engine.dot(&inputs, &q.w2[h], q.b2[h], &mut ops)?;
    let z_val = md(md(q.w2[h].iter().map(|&w| w as i128).sum::<i128>()) * a_val + q.b2[h] as i128);
    let a2 = engine.activation(&[z], 1, &mut ops)?.remove(0);
    let level2 = a2.level();
    let a2_val = md(z_val * z_val);
    let inputs = vec![Some(&a2); HIDDEN];
    let out = engine.dot(&inputs, &q.w3[c], q.b3[c], &mut ops)?;
    let out_val =
        md(md(q.w3[c].iter().map(|&w| w as i128).sum::<i128>()) * a2_val + q.b3[c] as i128);
    let d = engine.decryptor.decrypt(&out)?;
    let budget = d.noise_budget().ok_or_else(|| {
        Error::InvalidInput("cnn-mnist: the rehearsal's noise budget is unknown".into())
    })?;
    let got = engine.encoder.decode(&d)?;
    if got.iter().any(|&v| v as i128 != out_val) {
        return Err(Error::InvalidInput(format!(
            "cnn-mnist: the noise rehearsal decrypted {} instead of {out_val} (budget {budget} \
             bits)",
            got[0]
        )));
    }
    Ok((budget, [level1, level2, out.level()]))
}
