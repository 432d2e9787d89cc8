//! The noise model: a cheap heuristic upper bound, in bits, on the canonical-embedding norm of
//! a ciphertext's phase, updated by every operation.
//!
//! Every ciphertext carries `log2 B`, where `B` bounds `‖v‖_can`, `v = [f·m]_t + t·e` the
//! phase over the integers (see the module docs of [`crate::bgv`]). The canonical norm bounds
//! the coefficient norm (`‖v‖_∞ ≤ ‖v‖_can`) and is sub-multiplicative
//! (`‖a·b‖_can ≤ ‖a‖_can·‖b‖_can`) and invariant under automorphisms, so products, rotations and
//! sums compose exactly. The fresh terms are the usual high-probability estimates of
//! Costache–Smart and Kim–Polyakov–Zucca ("Revisiting homomorphic encryption schemes for finite
//! fields", 2021): a polynomial with independent coefficients of variance `V` has
//! `‖a‖_can ≤ D·sqrt(N·V)` with `D = 6`. With these, the bound holds with overwhelming
//! probability for random-looking messages; the exact check is the measured budget at
//! decryption ([`crate::bgv::Decryptor::decrypt`]), which is authoritative.
//!
//! Terms (hat space, i.e. before the factor `t`; `σ` the error width, `V_s` the secret's variance,
//! `R = D·sqrt(N/12) + D²·N·sqrt(V_s/12)` the bound on `r_0 + r_1·s` for rounding errors
//! `|r_i| ≤ 1/2`):
//!
//! - secret-key encryption: `‖m‖ + t·D·σ·sqrt(N)`;
//! - public-key encryption: `‖m‖ + t·((D²·N·σ·sqrt(2/3) + D·σ·sqrt(N) + D²·N·σ·sqrt(V_s)) / P + R)`;
//! - modulus switching by `q`: `B/q + t·R` (3 components: `R + D·sqrt(N/12)·(D·sqrt(N·V_s))²`);
//! - key switching at `ℓ` Q limbs: `t·(Σ_j D²·N·σ·c_j·Q_j / (sqrt(3)·P) + R)` over the active
//!   digits `j` (`Q_j` the product of their `c_j` active primes; ModUp's fast conversion leaves
//!   values below `c_j·Q_j`);
//! - plaintexts: `min(‖m‖_1, D·t·sqrt(N/12))` (exact `ℓ_1` norm, or the uniform estimate).

use super::BgvParameters;
use crate::params::SecretDistribution;

/// The constant `D` of the canonical-norm estimates.
const D: f64 = 6.0;

/// `log2(2^a + 2^b)`, with `-∞` as the neutral element.
pub(crate) fn log_add(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if lo == f64::NEG_INFINITY {
        return hi;
    }
    hi + (1.0 + (lo - hi).exp2()).log2()
}

/// `log2 |x|` for a small integer (`-∞` for zero).
pub(crate) fn log_abs(x: i64) -> f64 {
    if x == 0 {
        f64::NEG_INFINITY
    } else {
        (x.unsigned_abs() as f64).log2()
    }
}

/// The precomputed terms of the noise model for one parameter set (all `log2`).
#[derive(Clone, Debug)]
pub(crate) struct NoiseModel {
    /// `log2 t`.
    log_t: f64,
    /// `log2 N`.
    log_n: f64,
    /// `log2 (D·σ·sqrt(N))`: a fresh Gaussian error.
    log_gauss: f64,
    /// `log2 (D·sqrt(N·V_s))`: the secret.
    log_s: f64,
    /// `log2 R`: rounding terms `r_0 + r_1·s`.
    log_round: f64,
    /// `log2` of the fresh public-key encryption noise (before `‖m‖`).
    log_fresh_pk: f64,
    /// `log2 q_i` of every Q prime.
    log_q: Vec<f64>,
    /// `log2 Q_ℓ` for `ℓ + 1 = 1..=|Q|` limbs (index `ℓ`).
    log_q_level: Vec<f64>,
    /// Key-switching noise at `ℓ + 1` Q limbs (index `ℓ`).
    log_ks: Vec<f64>,
}

/// The terms every bound starts from (not in `log2`).
struct Terms {
    n: f64,
    sigma: f64,
    var_s: f64,
    log_t: f64,
    /// `D·σ·sqrt(N)`: a fresh Gaussian error.
    gauss: f64,
    /// `D·sqrt(N·V_s)`: the secret.
    s: f64,
    /// `R`: rounding terms `r_0 + r_1·s`.
    round: f64,
}

impl Terms {
    fn new(params: &BgvParameters) -> Self {
        let n = params.n() as f64;
        let sigma = params.error_std_dev();
        let var_s = match params.secret() {
            SecretDistribution::Ternary => 2.0 / 3.0,
            SecretDistribution::HammingWeight(h) => h as f64 / n,
        };
        Self {
            n,
            sigma,
            var_s,
            log_t: (params.t() as f64).log2(),
            gauss: D * sigma * n.sqrt(),
            s: D * (n * var_s).sqrt(),
            round: D * (n / 12.0).sqrt() + D * D * n * (var_s / 12.0).sqrt(),
        }
    }
}

/// The smallest bound (`log2`) any ciphertext of `params` can carry:
/// `log2 t + min(log2(D·σ·sqrt(N)), log2 R)`. Every fresh encryption starts at or above it
/// (`t·D·σ·sqrt(N)` or `t·R`), a modulus switch never goes below `t·R`, and no other operation
/// lowers a bound below its smallest operand's. A ciphertext read from a file has its stored
/// bound raised to at least this, so a crafted bound (say `-∞`) cannot switch the noise checks
/// off.
pub(crate) fn min_ciphertext_bound(params: &BgvParameters) -> f64 {
    let t = Terms::new(params);
    t.log_t + t.gauss.min(t.round).log2()
}

/// The bound (`log2`) the model uses for a plaintext of `params` whose centred coefficients have
/// `ℓ_1` norm `l1` (see [`NoiseModel::plaintext`]).
pub(crate) fn plaintext_bound(params: &BgvParameters, l1: f64) -> f64 {
    plaintext_log((params.n() as f64).log2(), (params.t() as f64).log2(), l1)
}

fn plaintext_log(log_n: f64, log_t: f64, l1: f64) -> f64 {
    let estimate = (D * (2f64.powf(log_n) / 12.0).sqrt()).log2() + log_t;
    if l1 <= 0.0 {
        0.0
    } else {
        l1.log2().min(estimate)
    }
}

impl NoiseModel {
    pub(crate) fn new(params: &BgvParameters) -> Self {
        let Terms {
            n,
            sigma,
            var_s,
            log_t,
            gauss,
            s,
            round,
        } = Terms::new(params);
        let log_p = params.log_p();
        let pk =
            (D * D * n * sigma * (2.0f64 / 3.0).sqrt() + gauss + D * D * n * sigma * var_s.sqrt())
                .log2()
                - log_p;
        let log_fresh_pk = log_t + log_add(pk, round.log2());
        let log_q: Vec<f64> = params
            .q_primes()
            .iter()
            .map(|&q| (q as f64).log2())
            .collect();
        let log_q_level = log_q
            .iter()
            .scan(0.0, |acc, &x| {
                *acc += x;
                Some(*acc)
            })
            .collect();
        let ring = params.ring();
        let plan = ring.keyswitch_plan().mod_up();
        let log_ks = (1..=log_q.len())
            .map(|limbs| {
                let mut acc = f64::NEG_INFINITY;
                for j in 0..ring.active_digits(limbs) {
                    if let Ok(r) = plan.digit_limbs(j, limbs) {
                        let c = r.len() as f64;
                        let log_qj: f64 = log_q[r].iter().sum();
                        let term = (D * D * n * sigma * c / 3f64.sqrt()).log2() + log_qj - log_p;
                        acc = log_add(acc, term);
                    }
                }
                log_t + log_add(acc, round.log2())
            })
            .collect();
        Self {
            log_t,
            log_n: n.log2(),
            log_gauss: gauss.log2(),
            log_s: s.log2(),
            log_round: round.log2(),
            log_fresh_pk,
            log_q,
            log_q_level,
            log_ks,
        }
    }

    /// `log2 Q_ℓ` at `level`.
    pub(crate) fn log_modulus(&self, level: usize) -> f64 {
        self.log_q_level[level]
    }

    /// The bound after a secret-key encryption of a message of norm `2^log_m`.
    pub(crate) fn fresh_sk(&self, log_m: f64) -> f64 {
        log_add(log_m, self.log_t + self.log_gauss)
    }

    /// The bound after a public-key encryption of a message of norm `2^log_m`.
    pub(crate) fn fresh_pk(&self, log_m: f64) -> f64 {
        log_add(log_m, self.log_fresh_pk)
    }

    /// The bound after switching a `components`-part ciphertext at `level` down one level.
    pub(crate) fn mod_switch(&self, log_b: f64, level: usize, components: usize) -> f64 {
        let mut round = self.log_round;
        if components > 2 {
            round = log_add(
                round,
                (D * (2f64.powf(self.log_n) / 12.0).sqrt()).log2() + 2.0 * self.log_s,
            );
        }
        log_add(log_b - self.log_q[level], self.log_t + round)
    }

    /// The noise that one key switching adds at `level`.
    pub(crate) fn key_switch(&self, level: usize) -> f64 {
        self.log_ks[level]
    }

    /// The `ℓ_1`-or-estimate bound of a plaintext whose centred coefficients have `ℓ_1` norm
    /// `l1` (see the module docs).
    pub(crate) fn plaintext(&self, l1: f64) -> f64 {
        plaintext_log(self.log_n, self.log_t, l1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_arithmetic() {
        assert!((log_add(3.0, 3.0) - 4.0).abs() < 1e-12);
        assert_eq!(log_add(f64::NEG_INFINITY, 5.0), 5.0);
        assert!((log_add(10.0, 0.0) - (1025f64).log2()).abs() < 1e-12);
        assert_eq!(log_abs(0), f64::NEG_INFINITY);
        assert_eq!(log_abs(-8), 3.0);
    }

    /// No operation of the model produces a bound below `min_ciphertext_bound`, the floor a
    /// ciphertext read from a file is raised to.
    #[test]
    fn the_floor_is_below_every_fresh_and_switched_bound() {
        for lit in [
            crate::bgv::BgvParametersLiteral::test_n12_levels5_insecure(),
            crate::bgv::BgvParametersLiteral::he_booster_n13_logqp218(),
        ] {
            let params = lit.build().unwrap();
            let model = NoiseModel::new(&params);
            let floor = min_ciphertext_bound(&params);
            assert!(floor.is_finite() && floor > model.log_t, "{floor}");
            let zero = f64::NEG_INFINITY;
            let mut lowest = model.fresh_sk(zero).min(model.fresh_pk(zero));
            for level in 1..params.q_primes().len() {
                for parts in [2, 3] {
                    lowest = lowest.min(model.mod_switch(zero, level, parts));
                    lowest = lowest.min(model.mod_switch(floor, level, parts));
                }
                lowest = lowest.min(model.key_switch(level));
            }
            assert!(lowest >= floor, "{lowest} < {floor}");
            // Tight: the secret-key or the switching term is the floor itself.
            assert!(lowest - floor < 1e-9, "{lowest} vs {floor}");
            assert_eq!(model.plaintext(37.0), plaintext_bound(&params, 37.0));
        }
    }
}
