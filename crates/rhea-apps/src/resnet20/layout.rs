//! The multiplexed layout (Lee et al., ICML 2022) and the network's layers as slot → slot linear
//! maps.
//!
//! **Layout.** The spatial grid stays `W × W` (`W` = the input's width) in the slots whatever
//! the stride: a tensor of stride `s` (its grid `W/s × W/s`) keeps only every `s`-th pixel, and
//! the `s²` positions of each `s × s` cell hold `s²` channels. Channel `c` at pixel `(y, x)`
//! lives at slot
//!
//! `(c div s²)·W² + (s·y + (c mod s²) div s)·W + (s·x + (c mod s²) mod s)`,
//!
//! so a tensor of `C` channels spans `⌈C/s²⌉·W²` slots. The slot vector holds `slots / period`
//! copies of one period (the largest span of the network, a power of two), and every map below
//! is the same in each copy (block-diagonal).
//!
//! **Maps.** With that layout a 3 × 3 convolution (padding 1, stride 1 or 2, any channel
//! counts), the option-A shortcut (subsampling, channels zero-padded on both sides) and the
//! average pool + dense layer are sparse slot → slot matrices whose non-zeros lie on diagonals
//! `k = (in − out) mod slots` that do not depend on the pixel: a few hundred to about 1 600 per
//! layer at the paper's size. [`SlotMap`] lists a map's entries within one period (structural:
//! an entry per weight and pixel, even where the weight is 0, so that the diagonal set depends
//! only on the shapes), and [`SlotMap::diagonals`] groups them into the diagonals of a
//! [`LinearTransform`].

use std::collections::{BTreeMap, BTreeSet};

use rhea::ckks::LinearTransform;
use rhea::{Error, Result};
use serde::Serialize;

/// Where a tensor of `channels` channels at `stride` lives in the slots (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Mux {
    /// The input's width `W` (the slot grid is `W × W`).
    pub width: usize,
    /// The stride `s` (1, 2, 4, …): the tensor's grid is `W/s × W/s`.
    pub stride: usize,
    /// Channels.
    pub channels: usize,
}

impl Mux {
    /// The tensor's side, `W/s`.
    pub fn side(&self) -> usize {
        self.width / self.stride
    }

    /// Channels a `W × W` block holds, `s²`.
    pub fn per_block(&self) -> usize {
        self.stride * self.stride
    }

    /// `W × W` blocks, `⌈C/s²⌉`.
    pub fn blocks(&self) -> usize {
        self.channels.div_ceil(self.per_block())
    }

    /// Slots the tensor spans, `blocks · W²`.
    pub fn span(&self) -> usize {
        self.blocks() * self.width * self.width
    }

    /// The slot of channel `c` at pixel `(y, x)` (within one period).
    pub fn slot(&self, c: usize, y: usize, x: usize) -> usize {
        let (s, w) = (self.stride, self.width);
        let r = c % (s * s);
        (c / (s * s)) * w * w + (s * y + r / s) * w + s * x + r % s
    }

    /// The index of `(c, y, x)` in a channel-major tensor (`[c][y][x]`).
    pub fn index(&self, c: usize, y: usize, x: usize) -> usize {
        (c * self.side() + y) * self.side() + x
    }

    /// Values a tensor has, `C · side²`.
    pub fn len(&self) -> usize {
        self.channels * self.side() * self.side()
    }

    /// Whether the tensor is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The slot vector (`slots` values, `slots / period` copies) of a channel-major tensor.
    ///
    /// Errors: [`Error::InvalidInput`] for a tensor of another length or a period that does not
    /// hold the span or divide `slots`.
    pub fn pack(&self, tensor: &[f64], period: usize, slots: usize) -> Result<Vec<f64>> {
        check_period(self.span(), period, slots)?;
        if tensor.len() != self.len() {
            return Err(Error::InvalidInput(format!(
                "resnet20: a tensor of {} values for a layout of {}",
                tensor.len(),
                self.len()
            )));
        }
        let mut out = vec![0.0; slots];
        for copy in 0..slots / period {
            for c in 0..self.channels {
                for y in 0..self.side() {
                    for x in 0..self.side() {
                        out[copy * period + self.slot(c, y, x)] = tensor[self.index(c, y, x)];
                    }
                }
            }
        }
        Ok(out)
    }

    /// The channel-major tensor read from the first copy of a slot vector.
    pub fn unpack(&self, slots: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.len()];
        for c in 0..self.channels {
            for y in 0..self.side() {
                for x in 0..self.side() {
                    out[self.index(c, y, x)] = slots[self.slot(c, y, x)];
                }
            }
        }
        out
    }
}

fn check_period(span: usize, period: usize, slots: usize) -> Result<()> {
    if period == 0 || span > period || slots % period != 0 {
        return Err(Error::InvalidInput(format!(
            "resnet20: period {period} must hold the span {span} and divide the {slots} slots"
        )));
    }
    Ok(())
}

/// A sparse slot → slot linear map within one period: `out[o] = Σ w · in[i]` over its entries
/// `(o, i, w)`.
#[derive(Clone, Debug, Default)]
pub struct SlotMap {
    /// `(output slot, input slot, weight)`, slots within one period.
    pub entries: Vec<(usize, usize, f64)>,
}

impl SlotMap {
    /// The 3 × 3 convolution (padding 1, `stride` 1 or 2) from `input` to `output`, weights
    /// `w[co][ci][ky][kx]` times `factor` (no bias: it is added apart).
    ///
    /// Errors: [`Error::InvalidInput`] for shapes that do not match.
    pub fn conv3x3(
        input: Mux,
        output: Mux,
        stride: usize,
        weights: &[f64],
        factor: f64,
    ) -> Result<Self> {
        let (ci_n, co_n) = (input.channels, output.channels);
        if input.width != output.width
            || output.side() * stride != input.side()
            || weights.len() != co_n * ci_n * 9
        {
            return Err(Error::InvalidInput(format!(
                "resnet20: a 3×3 convolution of stride {stride} from {input:?} to {output:?} \
                 with {} weights",
                weights.len()
            )));
        }
        let side_in = input.side() as i64;
        let mut entries = Vec::with_capacity(co_n * ci_n * 9 * output.side() * output.side());
        for co in 0..co_n {
            for y in 0..output.side() {
                for x in 0..output.side() {
                    let o = output.slot(co, y, x);
                    for ci in 0..ci_n {
                        for ky in 0..3 {
                            let iy = (stride * y + ky) as i64 - 1;
                            if iy < 0 || iy >= side_in {
                                continue;
                            }
                            for kx in 0..3 {
                                let ix = (stride * x + kx) as i64 - 1;
                                if ix < 0 || ix >= side_in {
                                    continue;
                                }
                                let w = weights[((co * ci_n + ci) * 3 + ky) * 3 + kx];
                                entries.push((
                                    o,
                                    input.slot(ci, iy as usize, ix as usize),
                                    w * factor,
                                ));
                            }
                        }
                    }
                }
            }
        }
        Ok(Self { entries })
    }

    /// The option-A shortcut: every `stride`-th pixel of each input channel `c` to output
    /// channel `c + (C_out − C_in)/2` (the new channels zero on both sides), times `factor`; at
    /// stride 1 with equal channels, the identity times `factor`.
    ///
    /// Errors: [`Error::InvalidInput`] for shapes that do not match.
    pub fn shortcut(input: Mux, output: Mux, stride: usize, factor: f64) -> Result<Self> {
        if input.width != output.width
            || output.side() * stride != input.side()
            || output.channels < input.channels
        {
            return Err(Error::InvalidInput(format!(
                "resnet20: a shortcut of stride {stride} from {input:?} to {output:?}"
            )));
        }
        let shift = (output.channels - input.channels) / 2;
        let mut entries = Vec::with_capacity(input.channels * output.side() * output.side());
        for c in 0..input.channels {
            for y in 0..output.side() {
                for x in 0..output.side() {
                    entries.push((
                        output.slot(c + shift, y, x),
                        input.slot(c, stride * y, stride * x),
                        factor,
                    ));
                }
            }
        }
        Ok(Self { entries })
    }

    /// The dense layer `logits = fc · mean(input)` on the output of the pooling sums
    /// ([`pool_sums`]: channel `c`'s total at `input.slot(c, 0, 0)`), times `factor`:
    /// logit `o` at slot `o`. `fc[o][c]`, `classes × C` values.
    ///
    /// Errors: [`Error::InvalidInput`] for a matrix of another size.
    pub fn pool_dense(input: Mux, fc: &[f64], classes: usize, factor: f64) -> Result<Self> {
        let c_n = input.channels;
        if fc.len() != classes * c_n || classes == 0 {
            return Err(Error::InvalidInput(format!(
                "resnet20: a dense layer of {} weights for {classes} × {c_n}",
                fc.len()
            )));
        }
        let pixels = (input.side() * input.side()) as f64;
        let mut entries = Vec::with_capacity(classes * c_n);
        for o in 0..classes {
            for c in 0..c_n {
                entries.push((o, input.slot(c, 0, 0), fc[o * c_n + c] * factor / pixels));
            }
        }
        Ok(Self { entries })
    }

    /// The diagonal indices `(in − out) mod slots` (the same in every copy).
    pub fn diagonal_indices(&self, slots: usize) -> BTreeSet<usize> {
        self.entries
            .iter()
            .map(|&(o, i, _)| (i + slots - o % slots) % slots)
            .collect()
    }

    /// The diagonals, replicated over the `slots / period` copies: `diag_k[o] = M[o][o + k]`.
    ///
    /// Errors: [`Error::InvalidInput`] for a period that does not divide `slots` or an entry
    /// outside it.
    pub fn diagonals(&self, period: usize, slots: usize) -> Result<Vec<(i64, Vec<f64>)>> {
        check_period(1, period, slots)?;
        let mut map: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
        for &(o, i, w) in &self.entries {
            if o >= period || i >= period {
                return Err(Error::InvalidInput(format!(
                    "resnet20: an entry ({o}, {i}) outside the period {period}"
                )));
            }
            let k = (i + slots - o) % slots;
            let d = map.entry(k).or_insert_with(|| vec![0.0; slots]);
            for copy in 0..slots / period {
                d[copy * period + o] += w;
            }
        }
        Ok(map.into_iter().map(|(k, d)| (k as i64, d)).collect())
    }

    /// The map as a [`LinearTransform`] on `slots` slots.
    ///
    /// Errors: as [`SlotMap::diagonals`] and [`LinearTransform::from_diagonals`].
    pub fn transform(&self, period: usize, slots: usize) -> Result<LinearTransform> {
        LinearTransform::from_diagonals(slots, self.diagonals(period, slots)?)
    }

    /// The map applied in `f64` to one period's worth of slots (the reference of the
    /// transform on the first copy).
    pub fn apply(&self, input: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; input.len()];
        for &(o, i, w) in &self.entries {
            out[o] += w * input[i];
        }
        out
    }
}

/// The rotations of the pooling sums: `rotate_and_sum(stride s, count W/s)` over `x`, then
/// `rotate_and_sum(stride s·W, count W/s)` over `y` — channel `c`'s total lands at
/// `input.slot(c, 0, 0)`. The `(stride, count)` pairs.
pub fn pool_sums(input: Mux) -> [(i64, usize); 2] {
    let (s, w) = (input.stride, input.width);
    [(s as i64, w / s), ((s * w) as i64, w / s)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhea::ckks::Complex64;

    /// Deterministic values in (−1, 1).
    fn values(n: usize, seed: u64) -> Vec<f64> {
        let mut h = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                h ^= h << 13;
                h ^= h >> 7;
                h ^= h << 17;
                (h >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
            })
            .collect()
    }

    /// The direct convolution (padding 1) of a channel-major tensor.
    fn conv_direct(
        x: &[f64],
        c_in: usize,
        side: usize,
        w: &[f64],
        c_out: usize,
        stride: usize,
    ) -> Vec<f64> {
        let so = side / stride;
        let mut out = vec![0.0; c_out * so * so];
        for co in 0..c_out {
            for y in 0..so {
                for xx in 0..so {
                    let mut acc = 0.0;
                    for ci in 0..c_in {
                        for ky in 0..3 {
                            for kx in 0..3 {
                                let iy = (stride * y + ky) as i64 - 1;
                                let ix = (stride * xx + kx) as i64 - 1;
                                if iy < 0 || ix < 0 || iy >= side as i64 || ix >= side as i64 {
                                    continue;
                                }
                                acc += w[((co * c_in + ci) * 3 + ky) * 3 + kx]
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

    /// Packs, applies the map's diagonals as a `LinearTransform` in f64 (every copy) and
    /// compares every copy with `want`; also checks the padding slots stay 0.
    fn check_map(map: &SlotMap, input: Mux, x: &[f64], output: Mux, want: &[f64]) {
        let (period, slots) = (256, 1024);
        let packed = input.pack(x, period, slots).unwrap();
        let lt = map.transform(period, slots).unwrap();
        let v: Vec<Complex64> = packed.iter().map(|&r| Complex64::new(r, 0.0)).collect();
        let got: Vec<f64> = lt.apply(&v).unwrap().iter().map(|z| z.re).collect();
        let expected = output.pack(want, period, slots).unwrap();
        let err = got
            .iter()
            .zip(&expected)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(err < 1e-12, "largest error {err}");
        // The sparse map on one period agrees too.
        let once = map.apply(&packed[..period]);
        assert_eq!(output.unpack(&once), output.unpack(&expected[..period]));
        assert!(want.iter().any(|&w| w.abs() > 0.1));
    }

    #[test]
    fn slots_of_the_multiplexed_layout_are_distinct_and_within_the_span() {
        for (stride, channels) in [(1, 3), (1, 4), (2, 8), (2, 7), (4, 16), (4, 5)] {
            let m = Mux {
                width: 8,
                stride,
                channels,
            };
            let mut seen = std::collections::HashSet::new();
            for c in 0..channels {
                for y in 0..m.side() {
                    for x in 0..m.side() {
                        let s = m.slot(c, y, x);
                        assert!(s < m.span());
                        assert!(seen.insert(s), "slot {s} twice");
                    }
                }
            }
        }
        // Lee et al.'s example: at stride 2, channels 0..3 fill each 2 × 2 cell.
        let m = Mux {
            width: 8,
            stride: 2,
            channels: 8,
        };
        assert_eq!(
            [
                m.slot(0, 0, 0),
                m.slot(1, 0, 0),
                m.slot(2, 0, 0),
                m.slot(3, 0, 0)
            ],
            [0, 1, 8, 9]
        );
        assert_eq!(m.slot(4, 0, 0), 64);
        assert_eq!(m.slot(0, 1, 1), 2 * 8 + 2);
    }

    #[test]
    fn multiplexed_convolutions_match_direct_convolution() {
        // (c_in, stride_in, c_out, conv stride): the network's kinds at width 8.
        for (c_in, s_in, c_out, stride) in [
            (3, 1, 4, 1),
            (4, 1, 4, 1),
            (4, 1, 8, 2),
            (8, 2, 8, 1),
            (8, 2, 16, 2),
            (16, 4, 16, 1),
        ] {
            let input = Mux {
                width: 8,
                stride: s_in,
                channels: c_in,
            };
            let output = Mux {
                width: 8,
                stride: s_in * stride,
                channels: c_out,
            };
            let x = values(input.len(), 1 + c_in as u64);
            let w = values(c_out * c_in * 9, 7 + c_out as u64);
            let want: Vec<f64> = conv_direct(&x, c_in, input.side(), &w, c_out, stride)
                .iter()
                .map(|v| 0.5 * v)
                .collect();
            let map = SlotMap::conv3x3(input, output, stride, &w, 0.5).unwrap();
            check_map(&map, input, &x, output, &want);
        }
    }

    #[test]
    fn the_option_a_shortcut_subsamples_and_pads_channels() {
        let input = Mux {
            width: 8,
            stride: 1,
            channels: 4,
        };
        let output = Mux {
            width: 8,
            stride: 2,
            channels: 8,
        };
        let x = values(input.len(), 3);
        let mut want = vec![0.0; output.len()];
        for c in 0..4 {
            for y in 0..4 {
                for xx in 0..4 {
                    want[output.index(c + 2, y, xx)] = 2.0 * x[input.index(c, 2 * y, 2 * xx)];
                }
            }
        }
        let map = SlotMap::shortcut(input, output, 2, 2.0).unwrap();
        check_map(&map, input, &x, output, &want);
        // The identity at stride 1.
        let map = SlotMap::shortcut(output, output, 1, 1.0).unwrap();
        assert_eq!(map.diagonal_indices(1024).len(), 1);
    }

    #[test]
    fn pooling_sums_and_the_dense_layer_give_the_logits() {
        let input = Mux {
            width: 8,
            stride: 4,
            channels: 16,
        };
        let x = values(input.len(), 5);
        let fc = values(10 * 16, 9);
        let (period, slots) = (64, 256);
        let mut v = input.pack(&x, period, slots).unwrap();
        for (stride, count) in pool_sums(input) {
            // rotate_and_sum in f64: slot t gets Σ_i v[t + i·stride].
            v = (0..slots)
                .map(|t| {
                    (0..count)
                        .map(|i| v[(t + i * stride as usize) % slots])
                        .sum()
                })
                .collect();
        }
        let map = SlotMap::pool_dense(input, &fc, 10, 1.0).unwrap();
        let lt = map.transform(period, slots).unwrap();
        let z: Vec<Complex64> = v.iter().map(|&r| Complex64::new(r, 0.0)).collect();
        let got = lt.apply(&z).unwrap();
        for o in 0..10 {
            let want: f64 = (0..16)
                .map(|c| {
                    let side = input.side();
                    let mean: f64 = (0..side)
                        .flat_map(|y| (0..side).map(move |xx| (y, xx)))
                        .map(|(y, xx)| x[input.index(c, y, xx)])
                        .sum::<f64>()
                        / (side * side) as f64;
                    fc[o * 16 + c] * mean
                })
                .sum();
            assert!((got[o].re - want).abs() < 1e-12, "logit {o}");
        }
    }

    #[test]
    fn diagonal_counts_at_the_papers_width() {
        // Stage 3 of ResNet-20 (64 channels at stride 4 on 32 × 32): 7 block offsets × 15 × 15.
        let m = Mux {
            width: 32,
            stride: 4,
            channels: 64,
        };
        let w = vec![1.0; 64 * 64 * 9];
        let map = SlotMap::conv3x3(m, m, 1, &w, 1.0).unwrap();
        assert_eq!(map.diagonal_indices(1 << 15).len(), 7 * 15 * 15);
        // Stage 1 (16 channels, stride 1): 31 channel offsets × 9.
        let m = Mux {
            width: 32,
            stride: 1,
            channels: 16,
        };
        let map = SlotMap::conv3x3(m, m, 1, &vec![1.0; 16 * 16 * 9], 1.0).unwrap();
        assert_eq!(map.diagonal_indices(1 << 15).len(), 31 * 9);
    }

    #[test]
    fn bad_shapes_are_refused() {
        let m = Mux {
            width: 8,
            stride: 1,
            channels: 4,
        };
        assert!(SlotMap::conv3x3(m, m, 1, &[1.0; 3], 1.0).is_err());
        assert!(m.pack(&[0.0; 3], 256, 1024).is_err());
        assert!(m.pack(&vec![0.0; m.len()], 100, 1024).is_err());
        assert!(SlotMap::pool_dense(m, &[1.0; 3], 10, 1.0).is_err());
    }
}
