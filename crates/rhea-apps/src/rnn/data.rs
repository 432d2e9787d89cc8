//! The synthetic data and the fixed-seed weights, deterministic from a seed; nothing is
//! downloaded.
//!
//! **Sequences.** A vocabulary of [`NEUTRAL_WORDS`] neutral words and [`CLASS_WORDS`] words of
//! each of the two classes, each word an embedding of `dim` Gaussian entries (standard
//! deviation 1, like normalised word vectors of norm `√dim`); a class's words share a direction
//! (see [`CLASS_WORD_SPREAD`]). A sequence of class `c` draws each
//! of its words from `c`'s words with probability [`CLASS_WORD_PROBABILITY`], else from the
//! neutral ones: a toy sentiment task of the paper's shape (Podschwadt and Takabi classify
//! word-embedding sequences by sentiment).
//!
//! **Weights.** `W_h` has Gaussian entries rescaled to the spectral norm
//! [`RnnWeights::recurrent_norm`] (`‖W_h‖₂ < 1`: the spectral radius is below it and the
//! recurrence a contraction before the activation); `W_x` Gaussian with entries of standard
//! deviation `input_gain/√dim` (each pre-activation's input part has standard deviation about
//! `input_gain`); the bias Gaussian of standard deviation [`BIAS_STD`]. The dense output
//! layer is trained in f64 (see [`super::plain::train_readout`]).

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// Neutral words of the vocabulary.
pub const NEUTRAL_WORDS: usize = 64;
/// Words of each class.
pub const CLASS_WORDS: usize = 8;
/// The probability that a word of a sequence is one of its class's words.
pub const CLASS_WORD_PROBABILITY: f64 = 0.5;
/// A class's words are its direction plus their own part of this relative size (then
/// normalised to entries of standard deviation 1).
pub const CLASS_WORD_SPREAD: f64 = 0.5;
/// The standard deviation of the recurrent layer's bias.
pub const BIAS_STD: f64 = 0.1;

/// A deterministic Gaussian source (ChaCha8 and Box–Muller).
pub struct Gaussian(ChaCha8Rng);

impl Gaussian {
    /// From a seed.
    pub fn new(seed: u64) -> Self {
        Self(ChaCha8Rng::seed_from_u64(seed))
    }

    /// A uniform value in `[0, 1)`.
    pub fn uniform(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A standard normal value.
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform(); // (0, 1]
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// A `rows × cols` matrix of normal values times `std`.
    pub fn matrix(&mut self, rows: usize, cols: usize, std: f64) -> Vec<Vec<f64>> {
        (0..rows)
            .map(|_| (0..cols).map(|_| std * self.normal()).collect())
            .collect()
    }
}

/// Labelled sequences: `x[s][t]` is the embedding of word `t` of sequence `s`.
#[derive(Clone, Debug)]
pub struct Sequences {
    /// `x[sequence][step][dim]`.
    pub x: Vec<Vec<Vec<f64>>>,
    /// The class (0 or 1) of each sequence.
    pub labels: Vec<usize>,
}

/// The vocabulary and the sequence sampler.
pub struct Generator {
    rng: Gaussian,
    neutral: Vec<Vec<f64>>,
    class_words: [Vec<Vec<f64>>; 2],
}

impl Generator {
    /// The vocabulary of embeddings of `dim` entries drawn from `seed`.
    pub fn new(seed: u64, dim: usize) -> Self {
        let mut rng = Gaussian::new(seed);
        let neutral = rng.matrix(NEUTRAL_WORDS, dim, 1.0);
        let class = |rng: &mut Gaussian| {
            let direction: Vec<f64> = (0..dim).map(|_| rng.normal()).collect();
            let own = rng.matrix(CLASS_WORDS, dim, CLASS_WORD_SPREAD);
            let norm = (1.0 + CLASS_WORD_SPREAD * CLASS_WORD_SPREAD).sqrt();
            own.into_iter()
                .map(|w| {
                    w.iter()
                        .zip(&direction)
                        .map(|(a, d)| (a + d) / norm)
                        .collect()
                })
                .collect::<Vec<Vec<f64>>>()
        };
        let class_words = [class(&mut rng), class(&mut rng)];
        Self {
            rng,
            neutral,
            class_words,
        }
    }

    /// `count` sequences of `steps` words, classes alternating (0, 1, 0, …).
    pub fn sequences(&mut self, count: usize, steps: usize) -> Sequences {
        let mut x = Vec::with_capacity(count);
        let mut labels = Vec::with_capacity(count);
        for s in 0..count {
            let class = s % 2;
            let seq = (0..steps)
                .map(|_| {
                    let pick = self.rng.uniform();
                    let word = (self.rng.uniform() * 1e9) as usize;
                    if pick < CLASS_WORD_PROBABILITY {
                        self.class_words[class][word % CLASS_WORDS].clone()
                    } else {
                        self.neutral[word % NEUTRAL_WORDS].clone()
                    }
                })
                .collect();
            x.push(seq);
            labels.push(class);
        }
        Sequences { x, labels }
    }
}

/// The recurrent layer's weights (the output layer is trained apart).
#[derive(Clone, Debug)]
pub struct RnnWeights {
    /// `W_h` (`units × units`).
    pub w_h: Vec<Vec<f64>>,
    /// `W_x` (`units × dim`).
    pub w_x: Vec<Vec<f64>>,
    /// `b` (`units`).
    pub bias: Vec<f64>,
    /// `‖W_h‖₂` (the largest singular value; the spectral radius is at most this).
    pub recurrent_norm: f64,
}

impl RnnWeights {
    /// Fixed-seed weights: `W_h` rescaled to the spectral norm `recurrent_norm`, `W_x` with
    /// entries of standard deviation `input_gain/√dim`, `b` of [`BIAS_STD`].
    pub fn new(seed: u64, units: usize, dim: usize, recurrent_norm: f64, input_gain: f64) -> Self {
        let mut rng = Gaussian::new(seed ^ 0x9e37_79b9_7f4a_7c15);
        let mut w_h = rng.matrix(units, units, 1.0);
        let norm = spectral_norm(&w_h);
        for row in &mut w_h {
            for w in row.iter_mut() {
                *w *= recurrent_norm / norm;
            }
        }
        let w_x = rng.matrix(units, dim, input_gain / (dim as f64).sqrt());
        let bias = (0..units).map(|_| BIAS_STD * rng.normal()).collect();
        let recurrent_norm = spectral_norm(&w_h);
        Self {
            w_h,
            w_x,
            bias,
            recurrent_norm,
        }
    }
}

/// `‖A‖₂` by power iteration on `AᵀA` (200 steps from a fixed start: converged to far better
/// than the percent this is used at).
pub fn spectral_norm(a: &[Vec<f64>]) -> f64 {
    let cols = a.first().map_or(0, Vec::len);
    let mut v: Vec<f64> = (0..cols).map(|i| 1.0 + (i % 7) as f64 / 7.0).collect();
    let mut sigma = 0.0;
    for _ in 0..200 {
        let av: Vec<f64> = a.iter().map(|r| dot(r, &v)).collect();
        let mut atav = vec![0.0; cols];
        for (r, &x) in a.iter().zip(&av) {
            for (o, &w) in atav.iter_mut().zip(r) {
                *o += w * x;
            }
        }
        let n = dot(&atav, &atav).sqrt();
        if n == 0.0 {
            return 0.0;
        }
        sigma = n.sqrt(); // ‖AᵀA v‖ for a unit v → σ²
        v = atav.iter().map(|x| x / n).collect();
    }
    sigma
}

/// `Σ a_i b_i`.
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_have_the_asked_spectral_norm_and_data_is_deterministic() {
        let w = RnnWeights::new(7, 32, 32, 0.8, 0.5);
        assert!(
            (w.recurrent_norm - 0.8).abs() < 1e-6,
            "{}",
            w.recurrent_norm
        );
        // A diagonal matrix's norm is its largest entry.
        let d = vec![vec![0.5, 0.0], vec![0.0, -2.0]];
        assert!((spectral_norm(&d) - 2.0).abs() < 1e-9);
        let a = Generator::new(3, 16).sequences(4, 5);
        let b = Generator::new(3, 16).sequences(4, 5);
        assert_eq!(a.x, b.x);
        assert_eq!(a.labels, vec![0, 1, 0, 1]);
        assert_ne!(a.x[0], a.x[1]);
    }
}
