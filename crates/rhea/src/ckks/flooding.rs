//! Noise flooding for CKKS decryption ([`NoiseFlooding`]), for results that are shared.

use rhea_math::sampler;

use crate::error::{Error, Result};

/// `η_ε(Z)` for `ε = 2^-64`, rounded up: `sqrt(ln(2 + 2/ε) / π) ≈ 3.787`. The combination of
/// two discrete Gaussians below is within statistical distance `O(ε)` of a discrete Gaussian
/// when each input's parameter is at least `√2 · z_max · η` (Micciancio–Walter 2017, Thm. 3).
const SMOOTHING: f64 = 3.8;

/// The smallest base parameter the combination tree is planned for (the actual base parameter
/// lies in `[BASE_SIGMA_MIN, ~2.6·BASE_SIGMA_MIN]`, so its CDT table stays short).
const BASE_SIGMA_MIN: f64 = 24.0;

/// Up to this `σ`, the flooding noise is one constant-time CDT sample.
const DIRECT_SIGMA_MAX: f64 = 128.0;

/// The largest `log2 σ` accepted: the samples (up to about `9σ`) and the intermediate products
/// stay far inside `i64`.
pub const MAX_LOG2_SIGMA: f64 = 50.0;

/// Noise flooding for CKKS decryption: the [`Decryptor`](super::Decryptor) adds a fresh discrete
/// Gaussian of parameter `σ` (standard deviation `σ`, tails cut at `6σ` per base sample) to every
/// coefficient of the decrypted phase `Σ c_i·s^i` before returning it.
///
/// # When you need it
///
/// A CKKS decryption returns the message *plus the ciphertext's noise*, and that noise is a
/// function of the secret key. Whoever sees decrypted results of ciphertexts they also hold can
/// recover the key from a few of them (Li and Micciancio, *On the security of homomorphic
/// encryption on approximate numbers*, EUROCRYPT 2021): plain CKKS is IND-CPA, not IND-CPA^D.
/// Flood the decryption whenever a decrypted result leaves the key owner — sent back to the
/// party that computed on it, published, or given to anyone who may hold the ciphertexts (the
/// threshold and client–server settings). Results that stay with the key owner need none.
///
/// # How much
///
/// The noise must hide the ciphertext's own noise `e` (per coefficient, `|e| ≤ B`): the
/// statistical distance between `D_σ` and `D_σ + e` over `N` coefficients and `q` decryptions
/// falls below `2^-s` for `σ ≈ 2^{s/2}·sqrt(N·q)·B` (Li, Micciancio, Schultz, Sorrell,
/// CRYPTO 2022; OpenFHE's `NOISE_FLOODING_DECRYPT` uses the same rule).
/// [`NoiseFlooding::for_noise_bound`] computes that `σ`; [`NoiseFlooding::with_log2_sigma`]
/// takes it directly.
///
/// # What it costs
///
/// Precision: the decoded slots carry an extra error of root-mean-square magnitude
/// `σ·sqrt(N)/Δ` ([`NoiseFlooding::slot_error_rms`]), so about `log2 Δ − log2 σ − log2(N)/2`
/// bits remain. Encode with a scale `Δ` large enough for both the flooding and the precision you
/// need (e.g. `σ = 2^30` at `N = 2^16` costs 38 bits: keep `Δ ≥ 2^58` for 20 bits). Time: one
/// Gaussian polynomial sampled on the host per decryption (a few ms to tens of ms at `N = 2^16`).
/// Decryption errors if the noise could wrap modulo `Q_ℓ` (decrypt at a higher level, or
/// flood less).
///
/// # Sampling
///
/// `σ ≤ 128`: one constant-time CDT sample ([`rhea_math::sampler::gaussian_from_seed`]).
/// Larger `σ`: the constant-time combination of Micciancio and Walter (CRYPTO 2017): samples of
/// a small base Gaussian (`σ_0 ∈ [24, 63]`, CDT) are combined pairwise as `z·x_1 + (z−1)·x_2`
/// over `L` levels (`2^L` base samples per coefficient, `L = 4` for `σ = 2^40`), each `z` below
/// the smoothing bound of its inputs; the result is a discrete Gaussian of parameter exactly
/// `σ_0·Π sqrt(z² + (z−1)²) = σ` up to statistical distance `< 2^-60`.
///
/// ```
/// use rhea::ckks::{CkksContext, Decryptor, Encoder, Encryptor, KeyGenerator, NoiseFlooding};
/// use rhea::params::CkksParametersLiteral;
/// use rhea::Device;
///
/// let params = CkksParametersLiteral::n13_logqp200_levels2().build()?; // N = 2^13, Δ = 2^40
/// let ctx = CkksContext::new(&params, Device::Cpu)?;
/// let mut keygen = KeyGenerator::new(&ctx)?;
/// let sk = keygen.secret_key()?;
/// let encryptor = Encryptor::new(&ctx, &keygen.public_key(&sk)?)?;
/// let encoder = Encoder::new(&ctx)?;
/// let ct = encryptor.encrypt(&encoder.encode(&[1.5, -2.0])?)?;
///
/// // Hide a noise of up to 2^5 per coefficient with 30 bits of statistical security, for one
/// // shared decryption: σ = 2^(15 + 13/2 + 5) = 2^26.5.
/// let flooding = NoiseFlooding::for_noise_bound(5.0, 30, 1, params.n())?;
/// assert!((flooding.log2_sigma() - 26.5).abs() < 1e-9);
/// let decryptor = Decryptor::new(&ctx, &sk)?.with_noise_flooding(flooding.clone())?;
/// let out = encoder.decode(&decryptor.decrypt(&ct)?)?;
/// // The slots carry an extra error of about σ·sqrt(N)/Δ = 2^(26.5 + 6.5 − 40) = 2^-7.
/// let rms = flooding.slot_error_rms(params.n(), params.default_scale());
/// assert!((rms.log2() + 7.0).abs() < 1e-9);
/// assert!((out[0] - 1.5).abs() < 6.0 * rms && (out[1] + 2.0).abs() < 6.0 * rms);
/// # Ok::<(), rhea::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct NoiseFlooding {
    sigma: f64,
    plan: Plan,
}

/// How the samples are drawn.
#[derive(Clone, Debug, PartialEq)]
enum Plan {
    /// One CDT sample of parameter `σ`.
    Direct,
    /// Base samples of parameter `base` combined as `z·x_1 + (z−1)·x_2`, level by level.
    Tree { base: f64, z: Vec<i64> },
}

/// `sqrt(z² + (z−1)²)`: the factor one combination level multiplies `σ` by.
fn factor(z: i64) -> f64 {
    let z = z as f64;
    (z * z + (z - 1.0) * (z - 1.0)).sqrt()
}

/// The largest `z ≥ 2` with `factor(z) ≤ r` (2 when even that is above `r`).
fn largest_z_below(r: f64) -> i64 {
    // factor(z) ≈ √2·z − 1/√2; start from the estimate and correct.
    let mut z = ((r / std::f64::consts::SQRT_2) + 0.5).floor().max(2.0) as i64;
    while z > 2 && factor(z) > r {
        z -= 1;
    }
    while factor(z + 1) <= r {
        z += 1;
    }
    z
}

impl NoiseFlooding {
    /// Flooding with a discrete Gaussian of parameter `σ = 2^log2_sigma` (its standard
    /// deviation).
    ///
    /// Errors: [`Error::InvalidParameters`] for a `log2_sigma` not in `[0, 50]`.
    pub fn with_log2_sigma(log2_sigma: f64) -> Result<Self> {
        if !(0.0..=MAX_LOG2_SIGMA).contains(&log2_sigma) {
            return Err(Error::InvalidParameters(format!(
                "noise flooding: log2 σ = {log2_sigma} is outside [0, {MAX_LOG2_SIGMA}]; \
                 choose σ between 1 and 2^{MAX_LOG2_SIGMA}"
            )));
        }
        let sigma = log2_sigma.exp2();
        if sigma <= DIRECT_SIGMA_MAX {
            return Ok(Self {
                sigma,
                plan: Plan::Direct,
            });
        }
        // Plan the levels for the smallest base parameter (each z within the smoothing bound
        // of its inputs, which only grows with a larger base), then set the base so that the
        // product is exactly σ: the floors below make it at least BASE_SIGMA_MIN.
        let mut z = Vec::new();
        let mut cur = BASE_SIGMA_MIN;
        loop {
            let remaining = sigma / cur;
            let z_max = (cur / (std::f64::consts::SQRT_2 * SMOOTHING)).floor() as i64;
            debug_assert!(z_max >= 2);
            if factor(z_max) >= remaining {
                z.push(largest_z_below(remaining));
                break;
            }
            // Leave the last level at least factor(2) to do.
            let zi = if remaining / factor(z_max) < factor(2) {
                largest_z_below(remaining / factor(2))
            } else {
                z_max
            };
            z.push(zi);
            cur *= factor(zi);
        }
        let product: f64 = z.iter().map(|&zi| factor(zi)).product();
        Ok(Self {
            sigma,
            plan: Plan::Tree {
                base: sigma / product,
                z,
            },
        })
    }

    /// The flooding that hides a ciphertext noise of up to `2^log2_noise_bound` per coefficient
    /// with `statistical_security` bits over `queries` shared decryptions at ring degree `n`:
    /// `σ = 2^{s/2} · sqrt(n · queries) · 2^log2_noise_bound` (see the type's documentation).
    /// A bound on the noise is e.g. `log2` of the largest coefficient of the difference between
    /// the decrypted phase and the re-encoded result, measured on representative inputs, plus a
    /// margin.
    ///
    /// Errors: [`Error::InvalidParameters`] when the resulting `σ` is above `2^50`, or for a
    /// zero `n` or `queries`.
    pub fn for_noise_bound(
        log2_noise_bound: f64,
        statistical_security: u32,
        queries: u64,
        n: usize,
    ) -> Result<Self> {
        if n == 0 || queries == 0 || !log2_noise_bound.is_finite() {
            return Err(Error::InvalidParameters(format!(
                "noise flooding: need n > 0, queries > 0 and a finite noise bound (got n = {n}, \
                 queries = {queries}, log2 bound = {log2_noise_bound})"
            )));
        }
        let log2_sigma = statistical_security as f64 / 2.0
            + 0.5 * ((n as f64).log2() + (queries as f64).log2())
            + log2_noise_bound;
        Self::with_log2_sigma(log2_sigma.max(0.0))
    }

    /// The parameter `σ` (standard deviation) of the flooding noise per coefficient.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// `log2 σ`.
    pub fn log2_sigma(&self) -> f64 {
        self.sigma.log2()
    }

    /// The root-mean-square magnitude of the error flooding adds to each decoded slot at ring
    /// degree `n` and scale `scale`: `σ·sqrt(n)/scale`. The largest slot error over many slots
    /// is a few times this (below 6× with overwhelming probability at practical sizes).
    pub fn slot_error_rms(&self, n: usize, scale: f64) -> f64 {
        self.sigma * (n as f64).sqrt() / scale
    }

    /// A bound that every flooding coefficient stays below: `9σ` (base samples are cut at `6σ_0`
    /// and combined; a sum reaching `9σ` has probability below `2^-58`).
    pub(crate) fn coefficient_bound(&self) -> f64 {
        9.0 * self.sigma
    }

    /// `n` flooding coefficients from `seed` (the streams of the seed's ChaCha20 keystream).
    pub(crate) fn sample(&self, seed: &[u8; 32], n: usize) -> Result<Vec<i64>> {
        match &self.plan {
            Plan::Direct => Ok(sampler::gaussian_from_seed(
                seed,
                0,
                n,
                self.sigma,
                (6.0 * self.sigma).max(1.0),
            )?),
            Plan::Tree { base, z } => {
                let leaves = 1u64 << z.len();
                let mut level = (0..leaves)
                    .map(|stream| sampler::gaussian_from_seed(seed, stream, n, *base, 6.0 * base))
                    .collect::<rhea_math::Result<Vec<_>>>()?;
                for &zi in z {
                    level = level
                        .chunks_exact(2)
                        .map(|pair| {
                            pair[0]
                                .iter()
                                .zip(&pair[1])
                                .map(|(&a, &b)| zi * a + (zi - 1) * b)
                                .collect()
                        })
                        .collect();
                }
                Ok(level.pop().unwrap_or_default())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(x: &[i64]) -> (f64, f64) {
        let n = x.len() as f64;
        let mean = x.iter().map(|&v| v as f64).sum::<f64>() / n;
        let var = x.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n;
        (mean, var.sqrt())
    }

    #[test]
    fn plans_hit_sigma_and_respect_the_smoothing_bound() {
        for log2 in [0.0, 5.0, 7.0, 7.01, 8.0, 10.3, 13.0, 20.0, 31.5, 40.0, 50.0] {
            let f = NoiseFlooding::with_log2_sigma(log2).unwrap();
            assert!((f.log2_sigma() - log2).abs() < 1e-9);
            if let Plan::Tree { base, z } = &f.plan {
                assert!(
                    *base >= BASE_SIGMA_MIN - 1e-9 && *base < 64.0,
                    "{log2}: base {base}"
                );
                let mut cur = *base;
                for &zi in z {
                    assert!(zi >= 2);
                    assert!(
                        std::f64::consts::SQRT_2 * zi as f64 * SMOOTHING <= cur,
                        "{log2}: z = {zi} above the smoothing bound of σ = {cur}"
                    );
                    cur *= factor(zi);
                }
                assert!((cur / f.sigma() - 1.0).abs() < 1e-9);
                assert!(z.len() <= 5, "{log2}: {} levels", z.len());
            }
        }
        assert!(NoiseFlooding::with_log2_sigma(50.5).is_err());
        assert!(NoiseFlooding::with_log2_sigma(-1.0).is_err());
        assert!(NoiseFlooding::with_log2_sigma(f64::NAN).is_err());
    }

    #[test]
    fn samples_have_the_stated_deviation() {
        let n = 1 << 14;
        for (log2, seed) in [(6.0, 1u8), (12.0, 2), (30.0, 3), (45.0, 4)] {
            let f = NoiseFlooding::with_log2_sigma(log2).unwrap();
            let x = f.sample(&[seed; 32], n).unwrap();
            let (mean, sd) = stats(&x);
            let sigma = f.sigma();
            // The standard error of the sample deviation is σ/sqrt(2n) ≈ 0.55 %.
            assert!(
                (sd / sigma - 1.0).abs() < 0.03,
                "log2 σ {log2}: sd {sd} vs σ {sigma}"
            );
            assert!(mean.abs() < 5.0 * sigma / (n as f64).sqrt(), "mean {mean}");
            let within = x.iter().filter(|&&v| (v as f64).abs() <= sigma).count() as f64;
            assert!(
                (within / n as f64 - 0.6827).abs() < 0.02,
                "1σ mass {}",
                within / n as f64
            );
            let max = x.iter().map(|v| v.unsigned_abs()).max().unwrap() as f64;
            assert!(
                max < f.coefficient_bound() && max > 2.0 * sigma,
                "max {max}"
            );
            // Different seeds, different noise.
            assert_ne!(x, f.sample(&[seed + 100; 32], n).unwrap());
        }
    }

    #[test]
    fn for_noise_bound_follows_the_rule() {
        let f = NoiseFlooding::for_noise_bound(10.0, 30, 1 << 10, 1 << 16).unwrap();
        assert!((f.log2_sigma() - (15.0 + 13.0 + 10.0)).abs() < 1e-9);
        assert!(NoiseFlooding::for_noise_bound(30.0, 40, 1, 1 << 16).is_err());
        assert!(NoiseFlooding::for_noise_bound(1.0, 30, 0, 1 << 16).is_err());
    }
}
