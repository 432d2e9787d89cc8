//! The training in the clear: the sigmoid's polynomial, the schedule, and the f64 reference that
//! the encrypted training is compared with (the same polynomial, learning rate and momentum).

use super::data::Samples;
pub use crate::fit::eval_poly;
use crate::fit::odd_least_squares;

/// The least-squares polynomial of the sigmoid `1/(1 + e^{−t})` on `[−bound, bound]`, of odd
/// degree `degree` (3 or 5): `1/2 + Σ_{odd k} a_k t^k` (`σ − 1/2` is odd, so the even
/// coefficients of the fit vanish and are left out), fitted on a uniform grid of 4001 points (the
/// continuous least-squares fit up to grid effects). Han et al. (AAAI 2019) use degree 3 on
/// `[−8, 8]`: `0.5 + 0.15012·t − 0.0015930·t³`.
///
/// Returns the monomial coefficients, constant first (`degree + 1` of them).
pub fn sigmoid_least_squares(degree: usize, bound: f64) -> Vec<f64> {
    let mut coeffs = odd_least_squares(|t| 1.0 / (1.0 + (-t).exp()) - 0.5, degree, bound);
    coeffs[0] = 0.5;
    coeffs
}

/// The coefficients of `p(−t)` for `p` = `coeffs`.
pub fn reflect(coeffs: &[f64]) -> Vec<f64> {
    coeffs
        .iter()
        .enumerate()
        .map(|(k, &c)| if k % 2 == 1 { -c } else { c })
        .collect()
}

/// Nesterov's momentum of iteration `t` (0-based): `β_t = (λ_t − 1)/λ_{t+1}` with `λ_0 = 1`,
/// `λ_{t+1} = (1 + √(1 + 4λ_t²))/2` (0, 0.28, 0.43, 0.53, … → 1), the schedule of Kim et al.'s
/// and Han et al.'s NAG (their `η_t = −β_t`, one step later).
pub fn momentum(t: usize) -> f64 {
    let mut lambda = 1.0f64;
    for _ in 0..t {
        lambda = (1.0 + (1.0 + 4.0 * lambda * lambda).sqrt()) / 2.0;
    }
    let next = (1.0 + (1.0 + 4.0 * lambda * lambda).sqrt()) / 2.0;
    (lambda - 1.0) / next
}

/// The result of training in the clear.
#[derive(Clone, Debug)]
pub struct PlainTraining {
    /// The weights after the last iteration (bias first).
    pub w: Vec<f64>,
    /// The largest `|w_j|` and `|v_j|` over all iterations (the encrypted weights must stay in
    /// the bootstrapping's range once divided by the weight scale).
    pub max_weight: f64,
    /// The largest `|z_iᵀ v|` over all iterations (the sigmoid's input; the polynomial is fitted
    /// on a bounded interval).
    pub max_sigmoid_input: f64,
}

/// Han et al.'s training in f64: for each batch `B_t` of `n` samples (rows `z_i = y_i·(1, x_i)`),
/// `g = (γ/n) Σ_i p(z_iᵀ v) z_i` with `p(t) = σ̃(−t)` (the polynomial sigmoid), then
/// `w' = v + g`, `v' = w' + β_t (w' − w)`, from `w = v = 0`. Gradient ascent on the
/// log-likelihood with Nesterov's momentum ([`momentum`]).
pub fn train(batches: &[Vec<Vec<f64>>], sigmoid: &[f64], learning_rate: f64) -> PlainTraining {
    let p = reflect(sigmoid);
    let features = batches
        .first()
        .and_then(|b| b.first())
        .map_or(0, |z| z.len());
    let mut w = vec![0.0; features];
    let mut v = vec![0.0; features];
    let (mut max_weight, mut max_input) = (0.0f64, 0.0f64);
    for (t, batch) in batches.iter().enumerate() {
        let n = batch.len() as f64;
        let mut g = vec![0.0; features];
        for z in batch {
            let dot: f64 = z.iter().zip(&v).map(|(a, b)| a * b).sum();
            max_input = max_input.max(dot.abs());
            let s = eval_poly(&p, dot);
            for (gj, zj) in g.iter_mut().zip(z) {
                *gj += s * zj;
            }
        }
        let beta = momentum(t);
        for j in 0..features {
            let w_new = v[j] + learning_rate / n * g[j];
            v[j] = w_new + beta * (w_new - w[j]);
            w[j] = w_new;
            max_weight = max_weight.max(w[j].abs()).max(v[j].abs());
        }
    }
    PlainTraining {
        w,
        max_weight,
        max_sigmoid_input: max_input,
    }
}

/// The fraction of `samples` that `w` (bias first) classifies right: `sign(w_0 + wᵀx) = y`.
pub fn accuracy(w: &[f64], samples: &Samples) -> f64 {
    let right = samples
        .x
        .iter()
        .zip(&samples.y)
        .filter(|(x, &y)| {
            let score = w[0] + x.iter().zip(&w[1..]).map(|(a, b)| a * b).sum::<f64>();
            (score >= 0.0) == (y > 0.0)
        })
        .count();
    right as f64 / samples.len().max(1) as f64
}

/// The fraction of `samples` on which `a` and `b` predict the same class.
pub fn agreement(a: &[f64], b: &[f64], samples: &Samples) -> f64 {
    let same = samples
        .x
        .iter()
        .filter(|x| {
            let score = |w: &[f64]| w[0] + x.iter().zip(&w[1..]).map(|(p, q)| p * q).sum::<f64>();
            (score(a) >= 0.0) == (score(b) >= 0.0)
        })
        .count();
    same as f64 / samples.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_degree_3_fit_on_minus_8_8_is_han_et_al_s() {
        let c = sigmoid_least_squares(3, 8.0);
        assert_eq!(c.len(), 4);
        assert_eq!((c[0], c[2]), (0.5, 0.0));
        assert!((c[1] - 0.15012).abs() < 2e-4, "{c:?}");
        assert!((c[3] + 0.0015930).abs() < 2e-5, "{c:?}");
        // And it is a fit: within 0.12 of the sigmoid on the interval.
        let err = (0..=160)
            .map(|i| {
                let t = -8.0 + 0.1 * i as f64;
                (eval_poly(&c, t) - 1.0 / (1.0 + (-t).exp())).abs()
            })
            .fold(0.0, f64::max);
        assert!(err < 0.12, "{err}");
        let c5 = sigmoid_least_squares(5, 8.0);
        let err5 = (0..=160)
            .map(|i| {
                let t = -8.0 + 0.1 * i as f64;
                (eval_poly(&c5, t) - 1.0 / (1.0 + (-t).exp())).abs()
            })
            .fold(0.0, f64::max);
        assert!(err5 < err, "{err5} {err}");
    }

    #[test]
    fn momentum_follows_nesterov() {
        assert_eq!(momentum(0), 0.0);
        assert!((momentum(1) - 0.2818).abs() < 1e-3, "{}", momentum(1));
        assert!((1..40).all(|t| momentum(t) > momentum(t - 1) && momentum(t) < 1.0));
    }

    #[test]
    fn plain_training_learns_the_synthetic_classes() {
        let mut gen = super::super::data::Generator::new(2019);
        let batches: Vec<Vec<Vec<f64>>> = (0..16).map(|_| gen.samples(256).z_rows()).collect();
        let test = gen.samples(1000);
        let sigmoid = sigmoid_least_squares(3, 8.0);
        let zero = accuracy(&[0.0; 197], &test);
        let trained = train(&batches, &sigmoid, 0.1);
        let acc = accuracy(&trained.w, &test);
        assert!(acc > 0.85 && acc > zero + 0.2, "{acc} (untrained {zero})");
    }
}
