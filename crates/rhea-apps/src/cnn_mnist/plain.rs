//! The network in the clear: its geometry, the `f64` model and its training, the quantised
//! integer model the BGV layout computes exactly, and the plaintext inference of both.
//!
//! **Network** (seed 003's "five-layer CNN"): conv of [`FILTERS`] filters 5 × 5, stride 2, zero
//! padding of one pixel (28 × 28 → 5 × 13 × 13 = 845; taps that fall on the padding are zero),
//! `x²`, dense 845 → 100, `x²`, dense 100 → 10. Inputs are the pixels over 255.
//!
//! **Training**: mini-batch SGD with momentum on the softmax cross-entropy, deterministic from a
//! seed (initialisation and order), gradients clipped to a norm of [`CLIP`].
//!
//! **Quantisation** (for BGV, exact integers modulo `t`): pixels to `b_x` bits
//! (`round(p·(2^{b_x} − 1)/255)`), each layer's weights to signed `b_w`-bit integers
//! (`round(w·s_l)`, `s_l = (2^{b_w−1} − 1)/max|w_l|`), each bias to the scale of its layer's
//! products. The integer network computes `c·(the f64 network)` up to rounding, with
//! `c = s_3·(s_2·(s_1·(2^{b_x}−1))²)²`; its logits are exact integers, and BGV reproduces them
//! exactly when every logit is below `t/2` in magnitude (the products wrap modulo `t` in
//! between, harmlessly: the whole network is a polynomial over `Z_t`).

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

use super::data::{Images, CLASSES, SIDE};

/// Filters of the convolution.
pub const FILTERS: usize = 5;
/// The kernel side.
pub const KERNEL: usize = 5;
/// Taps of a kernel.
pub const TAPS: usize = KERNEL * KERNEL;
/// The convolution's output side (13).
pub const CONV_SIDE: usize = 13;
/// Outputs of the convolution (845).
pub const CONV_OUT: usize = FILTERS * CONV_SIDE * CONV_SIDE;
/// Units of the hidden dense layer.
pub const HIDDEN: usize = 100;
/// The learning rate's factor from one epoch to the next.
pub const DECAY: f64 = 0.6;
/// The gradient-norm clip of the training.
pub const CLIP: f64 = 5.0;

/// The input pixel under tap `tap` of conv output position `pos` (`i·13 + j`), or `None` on
/// the zero padding.
pub fn tap_pixel(pos: usize, tap: usize) -> Option<usize> {
    let (i, j) = (pos / CONV_SIDE, pos % CONV_SIDE);
    let (di, dj) = (tap / KERNEL, tap % KERNEL);
    let r = (2 * i + di).checked_sub(1)?;
    let c = (2 * j + dj).checked_sub(1)?;
    (r < SIDE && c < SIDE).then_some(r * SIDE + c)
}

/// The `f64` network.
#[derive(Clone, Debug)]
pub struct Model {
    /// Conv kernels, `FILTERS × TAPS`.
    pub w1: Vec<Vec<f64>>,
    /// Conv biases.
    pub b1: Vec<f64>,
    /// Dense 845 → 100, `HIDDEN × CONV_OUT`.
    pub w2: Vec<Vec<f64>>,
    /// Its biases.
    pub b2: Vec<f64>,
    /// Dense 100 → 10, `CLASSES × HIDDEN`.
    pub w3: Vec<Vec<f64>>,
    /// Its biases.
    pub b3: Vec<f64>,
}

/// The activations of one forward pass.
struct Pass {
    y1: Vec<f64>,
    a1: Vec<f64>,
    z: Vec<f64>,
    a2: Vec<f64>,
    out: Vec<f64>,
}

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u = ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64).max(1e-300);
    let v = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

fn matrix(rng: &mut ChaCha8Rng, rows: usize, cols: usize, std: f64) -> Vec<Vec<f64>> {
    (0..rows)
        .map(|_| (0..cols).map(|_| std * normal(rng)).collect())
        .collect()
}

/// The argmax (the first of equal maxima).
pub fn argmax<T: PartialOrd + Copy>(v: &[T]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best
}

/// The pixels over 255.
pub fn normalised(pixels: &[u8]) -> Vec<f64> {
    pixels.iter().map(|&p| p as f64 / 255.0).collect()
}

impl Model {
    /// A random initialisation from `seed`.
    pub fn init(seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        Self {
            w1: matrix(&mut rng, FILTERS, TAPS, 0.2),
            b1: vec![0.0; FILTERS],
            w2: matrix(&mut rng, HIDDEN, CONV_OUT, 0.5 / (CONV_OUT as f64).sqrt()),
            b2: vec![0.0; HIDDEN],
            w3: matrix(&mut rng, CLASSES, HIDDEN, 1.0 / (HIDDEN as f64).sqrt()),
            b3: vec![0.0; CLASSES],
        }
    }

    fn pass(&self, x: &[f64]) -> Pass {
        let mut y1 = vec![0.0; CONV_OUT];
        for f in 0..FILTERS {
            for pos in 0..CONV_SIDE * CONV_SIDE {
                let mut s = self.b1[f];
                for tap in 0..TAPS {
                    if let Some(p) = tap_pixel(pos, tap) {
                        s += self.w1[f][tap] * x[p];
                    }
                }
                y1[f * CONV_SIDE * CONV_SIDE + pos] = s;
            }
        }
        let a1: Vec<f64> = y1.iter().map(|v| v * v).collect();
        let z: Vec<f64> = self
            .w2
            .iter()
            .zip(&self.b2)
            .map(|(row, b)| b + row.iter().zip(&a1).map(|(w, a)| w * a).sum::<f64>())
            .collect();
        let a2: Vec<f64> = z.iter().map(|v| v * v).collect();
        let out = self
            .w3
            .iter()
            .zip(&self.b3)
            .map(|(row, b)| b + row.iter().zip(&a2).map(|(w, a)| w * a).sum::<f64>())
            .collect();
        Pass { y1, a1, z, a2, out }
    }

    /// The logits of an image (pixels `0..=255`).
    pub fn logits(&self, pixels: &[u8]) -> Vec<f64> {
        self.pass(&normalised(pixels)).out
    }

    /// The fraction of `images` classified right.
    pub fn accuracy(&self, images: &Images) -> f64 {
        let right = images
            .pixels
            .iter()
            .zip(&images.labels)
            .filter(|(p, &l)| argmax(&self.logits(p)) == l)
            .count();
        right as f64 / images.len().max(1) as f64
    }

    /// Trains from `Model::init(seed)` on `images`: `epochs` passes of mini-batches of `batch`
    /// in an order shuffled by `seed`, learning rate `lr` times [`DECAY`] each epoch, momentum
    /// 0.9.
    pub fn train(images: &Images, epochs: usize, batch: usize, lr: f64, seed: u64) -> Self {
        let mut model = Self::init(seed);
        let mut velocity = Self::zeros();
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
        let inputs: Vec<Vec<f64>> = images.pixels.iter().map(|p| normalised(p)).collect();
        let mut order: Vec<usize> = (0..images.len()).collect();
        for epoch in 0..epochs {
            let lr = lr * DECAY.powi(epoch as i32);
            for i in (1..order.len()).rev() {
                let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                order.swap(i, j);
            }
            for chunk in order.chunks(batch.max(1)) {
                let mut grad = Self::zeros();
                for &k in chunk {
                    model.accumulate(&inputs[k], images.labels[k], &mut grad);
                }
                let norm = grad.norm() / chunk.len() as f64;
                let factor = if norm > CLIP { CLIP / norm } else { 1.0 };
                let step = lr * factor / chunk.len() as f64;
                velocity.axpby(0.9, &grad, step);
                model.axpby(1.0, &velocity, -1.0);
            }
        }
        model
    }

    fn zeros() -> Self {
        Self {
            w1: vec![vec![0.0; TAPS]; FILTERS],
            b1: vec![0.0; FILTERS],
            w2: vec![vec![0.0; CONV_OUT]; HIDDEN],
            b2: vec![0.0; HIDDEN],
            w3: vec![vec![0.0; HIDDEN]; CLASSES],
            b3: vec![0.0; CLASSES],
        }
    }

    fn parts_mut(&mut self) -> Vec<&mut Vec<f64>> {
        let mut v: Vec<&mut Vec<f64>> = Vec::new();
        v.extend(self.w1.iter_mut());
        v.push(&mut self.b1);
        v.extend(self.w2.iter_mut());
        v.push(&mut self.b2);
        v.extend(self.w3.iter_mut());
        v.push(&mut self.b3);
        v
    }

    fn parts(&self) -> Vec<&Vec<f64>> {
        let mut v: Vec<&Vec<f64>> = Vec::new();
        v.extend(self.w1.iter());
        v.push(&self.b1);
        v.extend(self.w2.iter());
        v.push(&self.b2);
        v.extend(self.w3.iter());
        v.push(&self.b3);
        v
    }

    fn norm(&self) -> f64 {
        self.parts()
            .iter()
            .flat_map(|p| p.iter())
            .map(|x| x * x)
            .sum::<f64>()
            .sqrt()
    }

    /// `self = a·self + b·other`.
    fn axpby(&mut self, a: f64, other: &Self, b: f64) {
        for (p, q) in self.parts_mut().into_iter().zip(other.parts()) {
            for (x, y) in p.iter_mut().zip(q) {
                *x = a * *x + b * y;
            }
        }
    }

    /// Adds the gradient of the cross-entropy at `(x, label)` to `grad`.
    fn accumulate(&self, x: &[f64], label: usize, grad: &mut Self) {
        let p = self.pass(x);
        let max = p.out.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let exps: Vec<f64> = p.out.iter().map(|o| (o - max).exp()).collect();
        let total: f64 = exps.iter().sum();
        let g_out: Vec<f64> = exps
            .iter()
            .enumerate()
            .map(|(c, e)| e / total - if c == label { 1.0 } else { 0.0 })
            .collect();
        let mut g_a2 = vec![0.0; HIDDEN];
        for (c, &g) in g_out.iter().enumerate() {
            grad.b3[c] += g;
            for ((gw, ga), (&a, &w)) in grad.w3[c]
                .iter_mut()
                .zip(g_a2.iter_mut())
                .zip(p.a2.iter().zip(&self.w3[c]))
            {
                *gw += g * a;
                *ga += w * g;
            }
        }
        let g_z: Vec<f64> = (0..HIDDEN).map(|h| 2.0 * p.z[h] * g_a2[h]).collect();
        let mut g_a1 = vec![0.0; CONV_OUT];
        for (h, &g) in g_z.iter().enumerate() {
            grad.b2[h] += g;
            for ((gw, ga), (&a, &w)) in grad.w2[h]
                .iter_mut()
                .zip(g_a1.iter_mut())
                .zip(p.a1.iter().zip(&self.w2[h]))
            {
                *gw += g * a;
                *ga += w * g;
            }
        }
        for f in 0..FILTERS {
            for pos in 0..CONV_SIDE * CONV_SIDE {
                let o = f * CONV_SIDE * CONV_SIDE + pos;
                let g = 2.0 * p.y1[o] * g_a1[o];
                grad.b1[f] += g;
                for tap in 0..TAPS {
                    if let Some(px) = tap_pixel(pos, tap) {
                        grad.w1[f][tap] += g * x[px];
                    }
                }
            }
        }
    }
}

/// The quantised integer network (see the module docs).
#[derive(Clone, Debug)]
pub struct QuantModel {
    /// Input bits `b_x`: pixels become `0..=2^{b_x} − 1`.
    pub input_bits: u32,
    /// Weight bits (signed) of the conv, the hidden dense and the output dense layers.
    pub weight_bits: [u32; 3],
    /// Conv kernels.
    pub w1: Vec<Vec<i64>>,
    /// Conv biases.
    pub b1: Vec<i64>,
    /// Dense 845 → 100.
    pub w2: Vec<Vec<i64>>,
    /// Its biases.
    pub b2: Vec<i64>,
    /// Dense 100 → 10.
    pub w3: Vec<Vec<i64>>,
    /// Its biases.
    pub b3: Vec<i64>,
    /// The integer logits are about this times the f64 model's.
    pub logit_scale: f64,
}

/// The largest magnitudes an integer inference reached.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Magnitudes {
    /// Conv outputs.
    pub conv: i128,
    /// Their squares.
    pub act1: i128,
    /// Hidden dense outputs.
    pub dense1: i128,
    /// Their squares.
    pub act2: i128,
    /// Logits.
    pub logits: i128,
}

impl Magnitudes {
    fn merge(&mut self, o: &Magnitudes) {
        self.conv = self.conv.max(o.conv);
        self.act1 = self.act1.max(o.act1);
        self.dense1 = self.dense1.max(o.dense1);
        self.act2 = self.act2.max(o.act2);
        self.logits = self.logits.max(o.logits);
    }
}

fn quantise_matrix(w: &[Vec<f64>], bits: u32) -> (Vec<Vec<i64>>, f64) {
    let max = w
        .iter()
        .flat_map(|r| r.iter())
        .fold(0.0f64, |m, x| m.max(x.abs()));
    let s = ((1i64 << (bits - 1)) - 1) as f64 / max.max(1e-300);
    let q = w
        .iter()
        .map(|r| r.iter().map(|x| (x * s).round() as i64).collect())
        .collect();
    (q, s)
}

impl QuantModel {
    /// `model` with `input_bits`-bit pixels and `weight_bits`-bit weights in its three layers
    /// (each 2 to 16).
    pub fn new(model: &Model, input_bits: u32, weight_bits: [u32; 3]) -> Self {
        let levels = ((1i64 << input_bits) - 1) as f64;
        let (w1, s1) = quantise_matrix(&model.w1, weight_bits[0]);
        let c1 = s1 * levels;
        let (w2, s2) = quantise_matrix(&model.w2, weight_bits[1]);
        let c2 = s2 * c1 * c1;
        let (w3, s3) = quantise_matrix(&model.w3, weight_bits[2]);
        let c3 = s3 * c2 * c2;
        let bias = |b: &[f64], c: f64| b.iter().map(|x| (x * c).round() as i64).collect();
        Self {
            input_bits,
            weight_bits,
            w1,
            b1: bias(&model.b1, c1),
            w2,
            b2: bias(&model.b2, c2),
            w3,
            b3: bias(&model.b3, c3),
            logit_scale: c3,
        }
    }

    /// A pixel `0..=255` quantised.
    pub fn input(&self, pixel: u8) -> i64 {
        let levels = (1i64 << self.input_bits) - 1;
        (pixel as i64 * levels + 127) / 255
    }

    /// The integer logits of an image and the magnitudes reached on the way.
    pub fn logits(&self, pixels: &[u8]) -> (Vec<i128>, Magnitudes) {
        let x: Vec<i128> = pixels.iter().map(|&p| self.input(p) as i128).collect();
        let mut m = Magnitudes::default();
        let mut a1 = vec![0i128; CONV_OUT];
        for f in 0..FILTERS {
            for pos in 0..CONV_SIDE * CONV_SIDE {
                let mut s = self.b1[f] as i128;
                for tap in 0..TAPS {
                    if let Some(p) = tap_pixel(pos, tap) {
                        s += self.w1[f][tap] as i128 * x[p];
                    }
                }
                m.conv = m.conv.max(s.abs());
                a1[f * CONV_SIDE * CONV_SIDE + pos] = s * s;
            }
        }
        m.act1 = a1.iter().copied().max().unwrap_or(0);
        let mut a2 = vec![0i128; HIDDEN];
        for (h, row) in self.w2.iter().enumerate() {
            let s = self.b2[h] as i128
                + row
                    .iter()
                    .zip(&a1)
                    .map(|(&w, &a)| w as i128 * a)
                    .sum::<i128>();
            m.dense1 = m.dense1.max(s.abs());
            a2[h] = s.saturating_mul(s);
        }
        m.act2 = a2.iter().copied().max().unwrap_or(0);
        let out: Vec<i128> = self
            .w3
            .iter()
            .zip(&self.b3)
            .map(|(row, &b)| {
                b as i128
                    + row
                        .iter()
                        .zip(&a2)
                        .map(|(&w, &a)| (w as i128).saturating_mul(a))
                        .fold(0i128, i128::saturating_add)
            })
            .collect();
        m.logits = out.iter().map(|v| v.abs()).max().unwrap_or(0);
        (out, m)
    }

    /// The largest magnitudes over `images`.
    pub fn magnitudes(&self, images: &Images) -> Magnitudes {
        let mut m = Magnitudes::default();
        for p in &images.pixels {
            m.merge(&self.logits(p).1);
        }
        m
    }

    /// The fraction of `images` classified right.
    pub fn accuracy(&self, images: &Images) -> f64 {
        let right = images
            .pixels
            .iter()
            .zip(&images.labels)
            .filter(|(p, &l)| argmax(&self.logits(p).0) == l)
            .count();
        right as f64 / images.len().max(1) as f64
    }

    /// The largest magnitudes over `images` and the fraction classified right.
    pub fn evaluate(&self, images: &Images) -> (Magnitudes, f64) {
        let mut m = Magnitudes::default();
        let mut right = 0;
        for (p, &l) in images.pixels.iter().zip(&images.labels) {
            let (logits, mi) = self.logits(p);
            m.merge(&mi);
            right += usize::from(argmax(&logits) == l);
        }
        (m, right as f64 / images.len().max(1) as f64)
    }

    /// The quantisation of `model` whose logits over `calibration` stay below `t/2` by
    /// `headroom_bits` and that classifies `calibration` best: the bit widths near the limit
    /// (predicted from a 4-bit quantisation: the logits grow by 4 bits a pixel or conv-weight
    /// bit, 2 a hidden-weight bit, 1 an output-weight bit), each checked; `None` when none fits.
    pub fn fit(model: &Model, calibration: &Images, t: u64, headroom_bits: u32) -> Option<Self> {
        let limit = (t / 2) as i128 >> headroom_bits;
        let limit_bits = (limit as f64).log2();
        let base = Self::new(model, 4, [4; 3]).magnitudes(calibration).logits;
        let base_bits = (base.max(1) as f64).log2();
        let mut candidates = Vec::new();
        for bx in 2..=6u32 {
            for b1 in 2..=6u32 {
                for b2 in 2..=8u32 {
                    for b3 in 2..=8u32 {
                        let d = |b: u32| b as f64 - 4.0;
                        let pred = base_bits + 4.0 * d(bx) + 4.0 * d(b1) + 2.0 * d(b2) + d(b3);
                        if pred <= limit_bits + 0.5 && pred > limit_bits - 2.5 {
                            candidates.push((pred, bx, [b1, b2, b3]));
                        }
                    }
                }
            }
        }
        candidates.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut best: Option<(f64, Self)> = None;
        for (_, bx, bw) in candidates {
            let q = Self::new(model, bx, bw);
            let (m, acc) = q.evaluate(calibration);
            if m.logits < limit && best.as_ref().map_or(true, |(a, _)| acc > *a) {
                best = Some((acc, q));
            }
        }
        best.map(|(_, q)| q).or_else(|| {
            (2..=8)
                .rev()
                .map(|b| Self::new(model, b, [b; 3]))
                .find(|q| q.magnitudes(calibration).logits < limit)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cnn_mnist::data::Generator;

    #[test]
    fn the_geometry_is_the_seeds() {
        assert_eq!(CONV_OUT, 845);
        // Position (0, 0): only taps with di, dj ≥ 1 land on the image; the first is pixel 0.
        assert_eq!(tap_pixel(0, 0), None);
        assert_eq!(tap_pixel(0, KERNEL + 1), Some(0));
        // The last position reaches the last pixel.
        assert_eq!(
            tap_pixel(CONV_SIDE * CONV_SIDE - 1, TAPS - 1),
            Some(crate::cnn_mnist::data::PIXELS - 1)
        );
        let padded = (0..CONV_SIDE * CONV_SIDE)
            .flat_map(|pos| (0..TAPS).map(move |t| tap_pixel(pos, t)))
            .filter(Option::is_none)
            .count();
        assert_eq!(padded, 129); // 13·5 + 13·5 − 1 per filter
    }

    #[test]
    fn a_short_training_learns_and_the_quantised_model_follows() {
        let mut g = Generator::new(1);
        let train = g.images(300);
        let test = g.images(100);
        let model = Model::train(&train, 3, 10, 0.03, 3);
        let acc = model.accuracy(&test);
        // Chance is 10 %.
        assert!(acc > 0.4, "{acc}");
        let q = QuantModel::new(&model, 6, [6; 3]);
        let (logits, m) = q.logits(&test.pixels[0]);
        let f = model.logits(&test.pixels[0]);
        // The integer logits are the f64 ones times the scale, up to quantisation.
        let rel = (logits[0] as f64 / q.logit_scale - f[0]).abs() / f[0].abs().max(1.0);
        assert!(rel < 0.5, "{rel}");
        assert!(m.logits > 0 && m.act2 >= m.dense1);
    }
}
