//! The network in the clear: the tanh polynomial, the f64 reference the encrypted inference is
//! compared with (the same weights and the **same** polynomial tanh), and the output layer's
//! training.

use super::data::{dot, RnnWeights, Sequences};
pub use crate::fit::eval_poly;
use crate::fit::odd_least_squares;

/// The least-squares odd polynomial of `tanh` on `[−bound, bound]`, of odd degree `degree`
/// (`tanh` is odd, so the even coefficients of the fit vanish and are left out), fitted on a
/// uniform grid of 4001 points. Degree 7 on `[−4, 4]`:
/// `0.8675·x − 0.13106·x³ + 0.010611·x⁵ − 0.00030592·x⁷`, within 0.064 of `tanh` there and at
/// most 1.027 in absolute value.
///
/// Returns the monomial coefficients, constant first (`degree + 1` of them).
pub fn tanh_least_squares(degree: usize, bound: f64) -> Vec<f64> {
    odd_least_squares(f64::tanh, degree, bound)
}

/// `max |p(x)|` over `[−bound, bound]` (a grid of 4001 points).
pub fn max_abs_on(coeffs: &[f64], bound: f64) -> f64 {
    (0..=4000)
        .map(|i| eval_poly(coeffs, -bound + 2.0 * bound * i as f64 / 4000.0).abs())
        .fold(0.0, f64::max)
}

/// `max |p(x) − tanh(x)|` over `[−bound, bound]` (a grid of 4001 points).
pub fn tanh_fit_error(coeffs: &[f64], bound: f64) -> f64 {
    (0..=4000)
        .map(|i| {
            let x = -bound + 2.0 * bound * i as f64 / 4000.0;
            (eval_poly(coeffs, x) - x.tanh()).abs()
        })
        .fold(0.0, f64::max)
}

/// The recurrence of one batch in f64.
#[derive(Clone, Debug)]
pub struct Forward {
    /// The final hidden state `h_T` of each sequence (`units` values).
    pub hidden: Vec<Vec<f64>>,
    /// The largest `|W_h h_{t−1} + W_x x_t + b|` over every unit, step and sequence.
    pub max_preactivation: f64,
    /// The largest `|h_t|`.
    pub max_hidden: f64,
}

/// `h_t = p(W_h h_{t−1} + W_x x_t + b)` from `h_0 = 0` over the first `steps` words of every
/// sequence, with the polynomial `tanh` `p` (monomial coefficients).
pub fn forward(weights: &RnnWeights, tanh: &[f64], data: &Sequences, steps: usize) -> Forward {
    let units = weights.w_h.len();
    let mut max_preactivation = 0.0f64;
    let mut max_hidden = 0.0f64;
    let hidden = data
        .x
        .iter()
        .map(|seq| {
            let mut h = vec![0.0; units];
            for x in seq.iter().take(steps) {
                h = (0..units)
                    .map(|u| {
                        let a =
                            dot(&weights.w_h[u], &h) + dot(&weights.w_x[u], x) + weights.bias[u];
                        max_preactivation = max_preactivation.max(a.abs());
                        let y = eval_poly(tanh, a);
                        max_hidden = max_hidden.max(y.abs());
                        y
                    })
                    .collect();
            }
            h
        })
        .collect();
    Forward {
        hidden,
        max_preactivation,
        max_hidden,
    }
}

/// The dense output layer: `logits = W_o h + b_o`.
#[derive(Clone, Debug)]
pub struct Readout {
    /// `W_o` (`classes × units`).
    pub w: Vec<Vec<f64>>,
    /// `b_o` (`classes`).
    pub b: Vec<f64>,
}

impl Readout {
    /// The logits of each hidden state.
    pub fn logits(&self, hidden: &[Vec<f64>]) -> Vec<Vec<f64>> {
        hidden
            .iter()
            .map(|h| {
                self.w
                    .iter()
                    .zip(&self.b)
                    .map(|(w, b)| dot(w, h) + b)
                    .collect()
            })
            .collect()
    }
}

/// The output layer trained in f64 on the final hidden states of labelled training sequences
/// (classes `0..classes`): the nearest-centroid classifier in linear form,
/// `logit_c(h) = (μ_c − μ)·(h − μ)` for the class means `μ_c` and their mean `μ` (the
/// argmax is the nearest centroid up to the centroids' norms; closed form, deterministic).
pub fn train_readout(hidden: &[Vec<f64>], labels: &[usize], classes: usize) -> Readout {
    let units = hidden.first().map_or(0, Vec::len);
    let mut means = vec![vec![0.0; units]; classes];
    let mut counts = vec![0usize; classes];
    for (h, &c) in hidden.iter().zip(labels) {
        if c < classes {
            counts[c] += 1;
            for (m, x) in means[c].iter_mut().zip(h) {
                *m += x;
            }
        }
    }
    for (m, &n) in means.iter_mut().zip(&counts) {
        for x in m.iter_mut() {
            *x /= n.max(1) as f64;
        }
    }
    let mu: Vec<f64> = (0..units)
        .map(|u| means.iter().map(|m| m[u]).sum::<f64>() / classes as f64)
        .collect();
    let w: Vec<Vec<f64>> = means
        .iter()
        .map(|m| m.iter().zip(&mu).map(|(a, b)| a - b).collect())
        .collect();
    let b = w.iter().map(|row| -dot(row, &mu)).collect();
    Readout { w, b }
}

/// The index of the largest value (the first on ties).
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
    use super::super::data::Generator;
    use super::*;

    #[test]
    fn the_tanh_fit_is_odd_close_and_bounded() {
        let p = tanh_least_squares(7, 4.0);
        assert_eq!(p.len(), 8);
        assert!(p.iter().step_by(2).all(|&c| c == 0.0));
        assert!((p[1] - 0.8675).abs() < 1e-3, "{p:?}");
        let err = tanh_fit_error(&p, 4.0);
        assert!(err > 0.05 && err < 0.07, "{err}");
        assert!(max_abs_on(&p, 4.0) < 1.03);
        let p3 = tanh_least_squares(3, 2.0);
        assert!(
            (p3[1] - 0.8664).abs() < 1e-3 && (p3[3] + 0.10563).abs() < 1e-4,
            "{p3:?}"
        );
    }

    #[test]
    fn the_readout_separates_the_classes_in_f64() {
        let (units, steps) = (32, 40);
        let weights = RnnWeights::new(5, units, units, 0.8, 0.5);
        let tanh = tanh_least_squares(7, 4.0);
        let mut gen = Generator::new(5, units);
        let train = gen.sequences(64, steps);
        let test = gen.sequences(64, steps);
        let f = forward(&weights, &tanh, &train, steps);
        assert!(f.max_preactivation < 4.0, "{}", f.max_preactivation);
        let readout = train_readout(&f.hidden, &train.labels, 2);
        let logits = readout.logits(&forward(&weights, &tanh, &test, steps).hidden);
        let correct = logits
            .iter()
            .zip(&test.labels)
            .filter(|(l, &c)| argmax(l) == c)
            .count();
        assert!(correct >= 48, "{correct} of 64");
    }
}
