//! The network, its fixed-seed weights, the synthetic image, and the inference in `f64`.
//!
//! **Weights** (deterministic from a seed, nothing trained or downloaded): every 3 × 3
//! convolution He-initialised (`N(0, 2/fan_in)`), followed by a batch normalisation with
//! random statistics (`γ ∈ [0.8, 1.2]`, `β ∈ [−0.1, 0.1]`, mean `∈ [−0.1, 0.1]`, variance
//! `∈ [0.8, 1.2]`) folded into it (`w' = γ/σ · w`, `b' = β − γμ/σ`); the dense layer
//! `N(0, 1/64)` with a small bias. **Image**: smooth colour gradients and blobs plus noise,
//! pixels in `[0, 1]`.
//!
//! [`forward`] runs the network with a ReLU of choice: exactly, or as the ciphertexts do
//! (`B·p(z/B)` with the composite polynomial `p` and a per-layer bound `B` = the layer's
//! largest `|z|` times a margin, fixed on the run itself).

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use serde::Serialize;

/// The network's shape.
#[derive(Clone, Debug, Serialize)]
pub struct Arch {
    /// Input width (and height).
    pub width: usize,
    /// Input channels.
    pub in_channels: usize,
    /// Channels of each stage (stride 2 between stages).
    pub stages: Vec<usize>,
    /// Basic blocks a stage.
    pub blocks: usize,
    /// Classes.
    pub classes: usize,
}

impl Arch {
    /// ResNet-20 on CIFAR-10 shapes: 32 × 32 × 3, stages 16/32/64 of 3 blocks, 10 classes.
    pub fn resnet20() -> Self {
        Self {
            width: 32,
            in_channels: 3,
            stages: vec![16, 32, 64],
            blocks: 3,
            classes: 10,
        }
    }

    /// The small network of the same code: 8 × 8 × 3, stages 4/8/16 of 1 block, 10 classes.
    pub fn small() -> Self {
        Self {
            width: 8,
            in_channels: 3,
            stages: vec![4, 8, 16],
            blocks: 1,
            classes: 10,
        }
    }

    /// The convolutions in order: `(c_in, c_out, stride)`, the first one then two a block.
    pub fn convs(&self) -> Vec<(usize, usize, usize)> {
        let mut out = vec![(self.in_channels, self.stages[0], 1)];
        let mut c = self.stages[0];
        for (s, &ch) in self.stages.iter().enumerate() {
            for b in 0..self.blocks {
                let stride = if s > 0 && b == 0 { 2 } else { 1 };
                out.push((c, ch, stride));
                out.push((ch, ch, 1));
                c = ch;
            }
        }
        out
    }

    /// The stride of the last stage's grid.
    pub fn final_stride(&self) -> usize {
        1 << (self.stages.len() - 1)
    }

    /// Layers with weights (convolutions and the dense layer).
    pub fn layers(&self) -> usize {
        self.convs().len() + 1
    }
}

/// One convolution with its batch normalisation folded in.
#[derive(Clone, Debug)]
pub struct Conv {
    /// Input channels.
    pub c_in: usize,
    /// Output channels.
    pub c_out: usize,
    /// 1 or 2.
    pub stride: usize,
    /// `w[co][ci][ky][kx]`.
    pub w: Vec<f64>,
    /// One per output channel.
    pub b: Vec<f64>,
}

/// The weights.
#[derive(Clone, Debug)]
pub struct Weights {
    /// The convolutions, in [`Arch::convs`]'s order.
    pub convs: Vec<Conv>,
    /// The dense layer, `fc[o][c]`.
    pub fc: Vec<f64>,
    /// Its bias.
    pub fc_bias: Vec<f64>,
}

struct Rng(ChaCha8Rng);

impl Rng {
    fn uniform(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }
    fn normal(&mut self) -> f64 {
        let u = self.uniform().max(1e-300);
        let v = self.uniform();
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

impl Weights {
    /// Fixed-seed weights (see the module docs).
    pub fn generate(arch: &Arch, seed: u64) -> Self {
        let mut rng = Rng(ChaCha8Rng::seed_from_u64(seed));
        let convs = arch
            .convs()
            .into_iter()
            .map(|(c_in, c_out, stride)| {
                let std = (2.0 / (9 * c_in) as f64).sqrt();
                let mut w: Vec<f64> = (0..c_out * c_in * 9).map(|_| std * rng.normal()).collect();
                let mut b = vec![0.0; c_out];
                for (co, bias) in b.iter_mut().enumerate() {
                    let gamma = rng.range(0.8, 1.2);
                    let beta = rng.range(-0.1, 0.1);
                    let mean = rng.range(-0.1, 0.1);
                    let sigma = rng.range(0.8, 1.2).sqrt();
                    for v in &mut w[co * c_in * 9..(co + 1) * c_in * 9] {
                        *v *= gamma / sigma;
                    }
                    *bias = beta - gamma * mean / sigma;
                }
                Conv {
                    c_in,
                    c_out,
                    stride,
                    w,
                    b,
                }
            })
            .collect();
        let c = *arch.stages.last().unwrap_or(&1);
        let fc = (0..arch.classes * c)
            .map(|_| rng.normal() / (c as f64).sqrt())
            .collect();
        let fc_bias = (0..arch.classes).map(|_| rng.range(-0.1, 0.1)).collect();
        Self { convs, fc, fc_bias }
    }
}

/// A deterministic synthetic `C × W × W` image (channel-major), pixels in `[0, 1]`.
pub fn image(arch: &Arch, seed: u64) -> Vec<f64> {
    let mut rng = Rng(ChaCha8Rng::seed_from_u64(seed ^ 0x1a6e));
    let w = arch.width as f64;
    let blobs: Vec<(f64, f64, f64, f64)> = (0..4)
        .map(|_| {
            (
                rng.range(0.0, w),
                rng.range(0.0, w),
                rng.range(w / 8.0, w / 3.0),
                rng.range(-0.4, 0.4),
            )
        })
        .collect();
    let mut out = Vec::with_capacity(arch.in_channels * arch.width * arch.width);
    for c in 0..arch.in_channels {
        let (gx, gy) = (rng.range(-0.3, 0.3), rng.range(-0.3, 0.3));
        for y in 0..arch.width {
            for x in 0..arch.width {
                let (fy, fx) = (y as f64 / w, x as f64 / w);
                let mut v = 0.5 + gx * (fx - 0.5) + gy * (fy - 0.5);
                for (i, &(by, bx, r, a)) in blobs.iter().enumerate() {
                    let d2 = ((y as f64 - by).powi(2) + (x as f64 - bx).powi(2)) / (r * r);
                    let sign = if (i + c) % 2 == 0 { 1.0 } else { -0.5 };
                    v += sign * a * (-d2).exp();
                }
                v += 0.05 * rng.normal();
                out.push(v.clamp(0.0, 1.0));
            }
        }
    }
    out
}

/// How [`forward`] computes ReLU.
pub enum Relu<'a> {
    /// `max(z, 0)`.
    Exact,
    /// `B·p(z/B)`, `p` the given composite ReLU on `[−1, 1]` and `B` the layer's largest `|z|`
    /// times `margin`.
    Polynomial {
        /// The ReLU on `[−1, 1]` (e.g. [`rhea::ckks::functions::Sign::relu_plain`]).
        relu: &'a dyn Fn(f64) -> f64,
        /// `B / max |z|` (> 1).
        margin: f64,
    },
}

/// What [`forward`] gives back.
#[derive(Clone, Debug)]
pub struct Inference {
    /// The logits.
    pub logits: Vec<f64>,
    /// Each ReLU's bound `B` (one per convolution; with [`Relu::Exact`] the largest `|z|`).
    pub bounds: Vec<f64>,
    /// Each convolution's largest pre-activation `|z|`.
    pub max_pre_activation: Vec<f64>,
}

fn conv(x: &[f64], side: usize, c: &Conv) -> Vec<f64> {
    let so = side / c.stride;
    let mut out = vec![0.0; c.c_out * so * so];
    for co in 0..c.c_out {
        for y in 0..so {
            for xx in 0..so {
                let mut acc = c.b[co];
                for ci in 0..c.c_in {
                    for ky in 0..3 {
                        let iy = (c.stride * y + ky) as i64 - 1;
                        if iy < 0 || iy >= side as i64 {
                            continue;
                        }
                        for kx in 0..3 {
                            let ix = (c.stride * xx + kx) as i64 - 1;
                            if ix < 0 || ix >= side as i64 {
                                continue;
                            }
                            acc += c.w[((co * c.c_in + ci) * 3 + ky) * 3 + kx]
                                * x[(ci * side + iy as usize) * side + ix as usize];
                        }
                    }
                }
                out[(co * so + y) * so + xx] = acc;
            }
        }
    }
    out
}

/// Option A: every `stride`-th pixel, channels zero-padded on both sides to `c_out`.
fn shortcut(x: &[f64], c_in: usize, side: usize, c_out: usize, stride: usize) -> Vec<f64> {
    let so = side / stride;
    let shift = (c_out - c_in) / 2;
    let mut out = vec![0.0; c_out * so * so];
    for c in 0..c_in {
        for y in 0..so {
            for xx in 0..so {
                out[((c + shift) * so + y) * so + xx] =
                    x[(c * side + stride * y) * side + stride * xx];
            }
        }
    }
    out
}

/// The inference of `image` (see the module docs).
pub fn forward(arch: &Arch, weights: &Weights, image: &[f64], relu: &Relu<'_>) -> Inference {
    let mut bounds = Vec::new();
    let mut maxima = Vec::new();
    let mut activate = |z: Vec<f64>| -> Vec<f64> {
        let m = z.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        maxima.push(m);
        match relu {
            Relu::Exact => {
                bounds.push(m);
                z.into_iter().map(|v| v.max(0.0)).collect()
            }
            Relu::Polynomial { relu, margin } => {
                let b = (m * margin).max(1e-9);
                bounds.push(b);
                z.into_iter().map(|v| b * relu(v / b)).collect()
            }
        }
    };
    let mut side = arch.width;
    let c0 = &weights.convs[0];
    let mut a = activate(conv(image, side, c0));
    let mut c = c0.c_out;
    for pair in weights.convs[1..].chunks(2) {
        let (c1, c2) = (&pair[0], &pair[1]);
        let y = activate(conv(&a, side, c1));
        let side_out = side / c1.stride;
        let mut z = conv(&y, side_out, c2);
        let sc = shortcut(&a, c, side, c2.c_out, c1.stride);
        for (v, s) in z.iter_mut().zip(sc) {
            *v += s;
        }
        a = activate(z);
        side = side_out;
        c = c2.c_out;
    }
    let pixels = (side * side) as f64;
    let means: Vec<f64> = (0..c)
        .map(|ch| {
            a[ch * side * side..(ch + 1) * side * side]
                .iter()
                .sum::<f64>()
                / pixels
        })
        .collect();
    let logits = (0..arch.classes)
        .map(|o| {
            weights.fc_bias[o]
                + (0..c)
                    .map(|ch| weights.fc[o * c + ch] * means[ch])
                    .sum::<f64>()
        })
        .collect();
    Inference {
        logits,
        bounds,
        max_pre_activation: maxima,
    }
}

/// The index of the largest value.
pub fn argmax(v: &[f64]) -> usize {
    v.iter()
        .enumerate()
        .fold((0, f64::NEG_INFINITY), |(bi, bv), (i, &x)| {
            if x > bv {
                (i, x)
            } else {
                (bi, bv)
            }
        })
        .0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resnet20_has_19_convolutions_and_the_papers_strides() {
        let convs = Arch::resnet20().convs();
        assert_eq!(convs.len(), 19);
        assert_eq!(convs[0], (3, 16, 1));
        assert_eq!(convs[7], (16, 32, 2));
        assert_eq!(convs[13], (32, 64, 2));
        assert_eq!(convs[18], (64, 64, 1));
    }

    #[test]
    fn the_inference_is_deterministic_and_not_degenerate() {
        let arch = Arch::small();
        let w = Weights::generate(&arch, 4);
        let img = image(&arch, 4);
        assert!(img.iter().all(|&p| (0.0..=1.0).contains(&p)));
        let a = forward(&arch, &w, &img, &Relu::Exact);
        let b = forward(&arch, &w, &img, &Relu::Exact);
        assert_eq!(a.logits, b.logits);
        assert_eq!(a.bounds.len(), arch.convs().len());
        let spread = a.logits.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(spread > 0.05, "logits {:?}", a.logits);
        // A polynomial that is exactly ReLU gives the exact run's logits.
        let relu = |x: f64| x.max(0.0);
        let p = forward(
            &arch,
            &w,
            &img,
            &Relu::Polynomial {
                relu: &relu,
                margin: 1.5,
            },
        );
        for (x, y) in p.logits.iter().zip(&a.logits) {
            assert!((x - y).abs() < 1e-12);
        }
        assert!(p.bounds[0] > a.bounds[0]);
    }
}
