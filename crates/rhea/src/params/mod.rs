//! Parameters of both schemes, in one place and one shape: a serde-able literal (what the user
//! writes: [`CkksParametersLiteral`], [`BgvParametersLiteral`]) becomes validated, immutable,
//! `Arc`-shared parameters ([`CkksParameters`], [`BgvParameters`]) with every table precomputed.
//! Three ways to get a set, for either scheme:
//!
//! - a named preset, an associated function of the literal with a self-describing name
//!   (`CkksParametersLiteral::n16_logqp1440_levels24()`; [`CkksParametersLiteral::presets`]
//!   lists them with their purpose), then `build()`;
//! - by intent (depth, precision or plaintext size, slots, security level):
//!   [`CkksParameters::for_depth`], [`BgvParameters::for_depth`] (see [`intent`]);
//! - a literal written by hand or read from JSON, then `build()`.
//!
//! Both parameter types answer the same questions with the same names: [`CkksParameters::n`],
//! `log_n`, `slots`, `levels` (the multiplicative depth), `q_primes`, `p_primes`, `log_q`,
//! `log_p`, `log_qp`, `dnum`, `secret`, `security`, `security_level`, `id`, `literal`, and
//! `describe` (the whole chain, prime by prime).
//!
//! ```
//! use rhea::params::CkksParametersLiteral;
//! // A named preset: N = 2^13, log QP = 200, 2 levels, 128-bit secure.
//! let params = CkksParametersLiteral::n13_logqp200_levels2().build()?;
//! assert_eq!(params.max_level(), 2);
//! assert!(params.security().meets_128_bits);
//! println!("{params}");
//!
//! // Parameters below 128 bits are refused unless the caller opts in, visibly.
//! let mut lit = CkksParametersLiteral::n13_logqp200_levels2();
//! lit.log_q = vec![60, 50, 50]; // log QP = 220 > 218
//! assert!(lit.build().is_err());
//! let insecure = lit.insecure_allow_below_128_bits().build()?;
//! assert!(insecure.to_string().contains("INSECURE"));
//! # Ok::<(), rhea::Error>(())
//! ```

mod bgv;
pub mod intent;
mod security;

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::backend::RnsRing;
use crate::error::{Error, Result};

pub use bgv::{BgvParameters, BgvParametersLiteral, DEFAULT_PLAINTEXT_MODULUS};
pub use intent::{
    BgvIntent, CkksIntent, IntentError, PlaintextModulus, DEFAULT_PLAINTEXT_BITS,
    DEFAULT_SCALE_BITS, FIRST_PRIME_EXTRA_BITS, MAX_PRIME_BITS, MIN_SCALE_BITS,
};
pub use security::{
    max_log_qp_128, security_level, sparse_secret_is_128_bit, sparse_secret_max_log_q_128,
    Security, SecurityReport, HE_STANDARD_128_CLASSIC_TERNARY, HE_STANDARD_192_CLASSIC_TERNARY,
    HE_STANDARD_256_CLASSIC_TERNARY, SPARSE_SECRET_MIN_WEIGHT,
};

/// A named parameter preset: the name of the literal's constructor, what the set is for, and
/// the literal. `CkksParametersLiteral::presets()` and `BgvParametersLiteral::presets()` list
/// them; `by_name(name)` finds one.
#[derive(Clone, Debug, PartialEq)]
pub struct Preset<L> {
    /// The constructor's name (`n13_logqp200_levels2`).
    pub name: &'static str,
    /// What the set is for.
    pub purpose: &'static str,
    /// The literal.
    pub literal: L,
}

/// The distribution of the secret key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SecretDistribution {
    /// Uniform over `{-1, 0, 1}^N` (what the HE standard tables assume).
    #[default]
    Ternary,
    /// Exactly `h` non-zero coefficients, each `±1` (sparse; needs the insecure opt-in until a
    /// sparse security table is added).
    HammingWeight(usize),
}

impl fmt::Display for SecretDistribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SecretDistribution::Ternary => write!(f, "uniform ternary"),
            SecretDistribution::HammingWeight(h) => write!(f, "ternary, Hamming weight {h}"),
        }
    }
}

/// The default error width (serde default of both parameter literals).
pub(crate) fn default_sigma() -> f64 {
    rhea_math::sampler::DEFAULT_SIGMA
}

/// CKKS parameters as the user writes them (JSON-friendly, unchecked).
///
/// Give the ciphertext chain `Q` either as bit sizes (`log_q`, first prime first; primes are then
/// generated deterministically, NTT-friendly and as close to `2^bits` as possible, alternately
/// above and below) or as explicit primes (`q`); the same for the key-switching primes `P`
/// (`log_p` or `p`). [`CkksParametersLiteral::build`] validates everything.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CkksParametersLiteral {
    /// `log2 N`, the ring degree (`N/2` complex slots).
    pub log_n: u32,
    /// Bit sizes of the `Q` primes, `q_0` first (`q_0` is the last prime left at level 0).
    #[serde(default)]
    pub log_q: Vec<u32>,
    /// Bit sizes of the `P` (key-switching) primes.
    #[serde(default)]
    pub log_p: Vec<u32>,
    /// Explicit `Q` primes (instead of `log_q`).
    #[serde(default)]
    pub q: Vec<u64>,
    /// Explicit `P` primes (instead of `log_p`).
    #[serde(default)]
    pub p: Vec<u64>,
    /// log2 of the default scale `Δ` (encoding precision).
    pub log_default_scale: u32,
    /// Number of key-switching digits (hybrid / GHS key switching): `1 ≤ dnum ≤ |Q|`.
    pub dnum: usize,
    /// The secret-key distribution.
    #[serde(default)]
    pub secret: SecretDistribution,
    /// Standard deviation of the error distribution (default 3.2, as in the HE standard).
    #[serde(default = "default_sigma")]
    pub error_std_dev: f64,
    /// Accept parameters below 128-bit security (recorded on the parameters, printed by their
    /// `Display`). Set it with [`CkksParametersLiteral::insecure_allow_below_128_bits`].
    #[serde(default)]
    pub allow_insecure_below_128_bits: bool,
}

impl CkksParametersLiteral {
    /// Opts in to parameters below 128-bit security (for tests and experiments only). The
    /// resulting parameters say `INSECURE` when printed.
    pub fn insecure_allow_below_128_bits(mut self) -> Self {
        self.allow_insecure_below_128_bits = true;
        self
    }

    /// Sets the number of key-switching digits and, when `P` is given as bit sizes, resizes `P`
    /// to the fewest primes of its largest size (60 bits when none is given) that cover the
    /// largest digit (the condition [`CkksParameters::new`] checks). Fewer digits mean fewer
    /// converted limbs and a smaller key but a larger `P`, so a larger log QP; explicit `P`
    /// primes are kept as they are. [`CkksParametersLiteral::build`] validates the result
    /// (security included).
    ///
    /// ```
    /// use rhea::params::CkksParametersLiteral;
    /// // The deep preset with 2 digits (13 and 12 primes, the largest 540 bits): 9 × 60-bit P.
    /// let lit = CkksParametersLiteral::n16_logqp1440_levels24().with_dnum(2);
    /// assert_eq!((lit.dnum, lit.log_p.len()), (2, 9));
    /// # Ok::<(), rhea::Error>(())
    /// ```
    pub fn with_dnum(mut self, dnum: usize) -> Self {
        self.dnum = dnum;
        if self.p.is_empty() {
            self.log_p = p_sizes_for_dnum(&self.log_q, &self.q, &self.log_p, dnum);
        }
        self
    }

    /// The named presets, with what each is for (the constructors of this type).
    pub fn presets() -> Vec<Preset<Self>> {
        let p = |name, purpose, literal| Preset {
            name,
            purpose,
            literal,
        };
        vec![
            p(
                "n13_logqp200_levels2",
                "small and fast: examples, tests, two multiplications",
                Self::n13_logqp200_levels2(),
            ),
            p(
                "test_n13_levels10_insecure",
                "INSECURE test set: ten multiplications at a small ring",
                Self::test_n13_levels10_insecure(),
            ),
            p(
                "n14_logqp400_levels7",
                "seven multiplications (DESILO-comparable small set)",
                Self::n14_logqp400_levels7(),
            ),
            p(
                "n15_logqp400_levels7",
                "seven multiplications at 16384 slots (the polynomial matrix-multiply benchmark set)",
                Self::n15_logqp400_levels7(),
            ),
            p(
                "n16_logqp1440_levels24",
                "deep: 24 multiplications, 3 key-switching digits",
                Self::n16_logqp1440_levels24(),
            ),
            p(
                "n16_logqp1560_levels24",
                "deep: 24 multiplications, 2 digits (faster key switching)",
                Self::n16_logqp1560_levels24(),
            ),
            p(
                "n16_logqp1426_levels20",
                "deep at a 50-bit scale: 20 multiplications (OpenFHE-comparable)",
                Self::n16_logqp1426_levels20(),
            ),
            p(
                "n16_logqp1520_levels26",
                "deepest: 26 multiplications (DESILO-comparable deep set)",
                Self::n16_logqp1520_levels26(),
            ),
        ]
    }

    /// The preset named `name` (see [`CkksParametersLiteral::presets`]), or `None`.
    pub fn by_name(name: &str) -> Option<Self> {
        Self::presets()
            .into_iter()
            .find(|p| p.name == name)
            .map(|p| p.literal)
    }

    /// Validates the literal into [`CkksParameters`] (same as [`CkksParameters::new`]).
    pub fn build(&self) -> Result<CkksParameters> {
        CkksParameters::new(self)
    }

    fn preset(log_n: u32, log_q: Vec<u32>, log_p: Vec<u32>, scale: u32, dnum: usize) -> Self {
        Self {
            log_n,
            log_q,
            log_p,
            q: Vec::new(),
            p: Vec::new(),
            log_default_scale: scale,
            dnum,
            secret: SecretDistribution::Ternary,
            error_std_dev: default_sigma(),
            allow_insecure_below_128_bits: false,
        }
    }

    /// `N = 2^13`, `Q = 60 + 2×40` bits (3 primes, levels 0..=2), `P = 60` bits, `dnum = 3`,
    /// `Δ = 2^40`; log QP ≈ 200 ≤ 218: 128-bit secure. A small set for examples and tests.
    pub fn n13_logqp200_levels2() -> Self {
        Self::preset(13, vec![60, 40, 40], vec![60], 40, 3)
    }

    /// **Insecure** test set: `N = 2^13`, `Q = 60 + 10×40` bits (11 primes, levels 0..=10),
    /// `P = 2×60` bits, `dnum = 6`, `Δ = 2^40`; log QP ≈ 580 > 218, so it carries the explicit
    /// opt-in. Deep enough for ten chained multiplications at a ring small enough for fast tests.
    pub fn test_n13_levels10_insecure() -> Self {
        let mut q = vec![60];
        q.extend([40; 10]);
        Self::preset(13, q, vec![60, 60], 40, 6).insecure_allow_below_128_bits()
    }

    /// The SEAL-comparable set (the CLI's `seal-routines` benchmark): `N = 2^15`, 8 `Q` limbs (`60 + 7×40` bits, levels 0..=7), one 60-bit
    /// special prime `P`, `dnum = 8` (SEAL-style: every Q prime its own digit), `Δ = 2^40`;
    /// log QP ≈ 400 ≤ 881: 128-bit secure.
    pub fn n15_logqp400_levels7() -> Self {
        let mut q = vec![60];
        q.extend([40; 7]);
        Self::preset(15, q, vec![60], 40, 8)
    }

    /// DESILO-comparable small set: `N = 2^14`, `Q = 60 + 7×40` bits (8 primes, levels 0..=7),
    /// one 60-bit special prime, `dnum = 8` (every Q prime its own digit), `Δ = 2^40`;
    /// log QP ≈ 400 ≤ 438: 128-bit secure.
    pub fn n14_logqp400_levels7() -> Self {
        let mut q = vec![60];
        q.extend([40; 7]);
        Self::preset(14, q, vec![60], 40, 8)
    }

    /// DESILO-comparable deep set: `N = 2^16`, `Q = 60 + 26×40` bits (27 primes, levels
    /// 0..=26), `P = 7×60` bits, `dnum = 3` (digits of 9 primes, the largest 380 bits < 420),
    /// `Δ = 2^40`; log QP ≈ 1520 ≤ 1747: 128-bit secure.
    pub fn n16_logqp1520_levels26() -> Self {
        let mut q = vec![60];
        q.extend([40; 26]);
        Self::preset(16, q, vec![60; 7], 40, 3)
    }

    /// Deep set: `N = 2^16`, `Q = 60 + 24×40` bits (25 primes, levels 0..=24), `P = 7×60` bits,
    /// `dnum = 3` (digits of 9, 8 and 8 primes; the largest is 380 bits < 420), `Δ = 2^40`;
    /// log QP ≈ 1440 ≤ 1747: 128-bit secure.
    pub fn n16_logqp1440_levels24() -> Self {
        let mut q = vec![60];
        q.extend([40; 24]);
        Self::preset(16, q, vec![60; 7], 40, 3)
    }

    /// Deep set with two key-switching digits: `N = 2^16`, `Q = 60 + 24×40` bits (25 primes,
    /// levels 0..=24, as [`CkksParametersLiteral::n16_logqp1440_levels24`]), `P = 9×60` bits,
    /// `dnum = 2` (digits of 13 and 12 primes; the largest is 540 bits ≤ 540), `Δ = 2^40`;
    /// log QP ≈ 1560 ≤ 1747: 128-bit secure. The same depth and scale as the three-digit set with
    /// faster key switching (fewer converted limbs: 43 against 71) and a smaller switching key
    /// (136 limbs against 192), paid for with a larger log QP and a slower public-key
    /// encryption (it works over `Q ∪ P`). On an H100 mul+relin takes 0.283 ms against 0.306
    /// (bench-history §20).
    pub fn n16_logqp1560_levels24() -> Self {
        let mut q = vec![60];
        q.extend([40; 24]);
        Self::preset(16, q, vec![60; 9], 40, 2)
    }

    /// OpenFHE-comparable deep set: `N = 2^16`, `Q = 60 + 20×50` bits (21 primes, levels 0..=20),
    /// `P = 6×61` bits, `dnum = 3` (digits of 7 primes, the largest 360 bits < 366),
    /// `Δ = 2^50`; log QP ≈ 1426 ≤ 1747: 128-bit secure. Matches the shape OpenFHE picks for
    /// depth 20 with 50-bit scaling primes and a 60-bit first prime.
    pub fn n16_logqp1426_levels20() -> Self {
        let mut q = vec![60];
        q.extend([50; 20]);
        Self::preset(16, q, vec![61; 6], 50, 3)
    }
}

/// The `P` sizes of [`CkksParametersLiteral::with_dnum`] (and BGV's): the fewest primes of the
/// largest given `P` size (60 bits when none is given) that cover the largest of `dnum` digits
/// of the `Q` sizes (`log_q`, or the explicit primes' sizes).
pub(crate) fn p_sizes_for_dnum(log_q: &[u32], q: &[u64], log_p: &[u32], dnum: usize) -> Vec<u32> {
    let bits: Vec<u32> = if log_q.is_empty() {
        q.iter().map(|&q| 64 - q.leading_zeros()).collect()
    } else {
        log_q.to_vec()
    };
    let widest = rhea_math::bconv::digit_ranges(bits.len(), dnum.min(bits.len()))
        .into_iter()
        .map(|r| bits[r].iter().sum::<u32>())
        .max()
        .unwrap_or(0);
    // A size of 0 (invalid; `build` says so) must not divide by zero here.
    let size = log_p.iter().copied().max().filter(|&b| b > 0).unwrap_or(60);
    vec![size; widest.div_ceil(size) as usize]
}

/// Generates the primes for the bit sizes of `Q` then `P`, deterministically: for each distinct
/// bit size in order of first appearance, all primes of that size at once (closest to `2^bits`,
/// alternately above and below), excluding primes already taken; then handed out in order.
pub(crate) fn resolve_primes(
    n: usize,
    log_q: &[u32],
    log_p: &[u32],
    taken: &[u64],
) -> Result<Vec<u64>> {
    let sizes: Vec<u32> = log_q.iter().chain(log_p).copied().collect();
    let mut order: Vec<u32> = Vec::new();
    for &b in &sizes {
        if !order.contains(&b) {
            order.push(b);
        }
    }
    let mut exclude = taken.to_vec();
    let mut pools = std::collections::HashMap::new();
    for b in order {
        let count = sizes.iter().filter(|&&x| x == b).count();
        let primes = rhea_math::prime::generate_ntt_primes(b, n, count, &exclude)?;
        exclude.extend(&primes);
        pools.insert(b, primes.into_iter());
    }
    Ok(sizes
        .iter()
        .map(|b| pools.get_mut(b).and_then(|it| it.next()).unwrap_or(0))
        .collect())
}

/// Reorders the generated `Q` primes of `scale_bits` bits (all but the first prime) so that the
/// scale of every level in the auto-rescale mode stays at `Δ = 2^scale_bits`: from the top
/// level down, the prime divided out at level `ℓ` is the remaining one nearest `Δ_ℓ²/Δ`, so
/// that `Δ_{ℓ−1} = Δ_ℓ²/q_ℓ` returns to `Δ` as closely as the primes allow. The same primes
/// (so the same `log Q` and security), in another order. Generated in the order of
/// [`resolve_primes`] (nearest to `2^bits`, alternately above and below), the scale of a chain of
/// 24 squarings would drift by about 100 bits at `N = 2^16`; ordered, it stays within `2^-12`
/// bits of `Δ` at every preset (`params::tests::auto_rescale_scales_stay_at_delta`).
fn order_for_stable_scale(q: &mut [u64], log_q: &[u32], scale_bits: u32) {
    let delta = (scale_bits as f64).exp2();
    let slots: Vec<usize> = (1..q.len()).filter(|&i| log_q[i] == scale_bits).collect();
    let mut pool: Vec<u64> = slots.iter().map(|&i| q[i]).collect();
    let mut ratio = 1.0f64; // Δ_ℓ / Δ
    for &level in slots.iter().rev() {
        let target = ratio * ratio * delta;
        let nearest = (0..pool.len())
            .min_by(|&a, &b| {
                let da = (pool[a] as f64 - target).abs();
                let db = (pool[b] as f64 - target).abs();
                da.total_cmp(&db)
            })
            .unwrap_or(0);
        q[level] = pool.swap_remove(nearest);
        // Levels of other sizes keep the scale (see `CkksParameters::scale_at_level`).
        ratio = ratio * ratio * delta / q[level] as f64;
    }
}

/// `log2` of a product of primes.
pub(crate) fn log2_product(primes: &[u64]) -> f64 {
    primes.iter().map(|&p| (p as f64).log2()).sum()
}

/// `N = 2^log_n`, or [`Error::InvalidParameters`] for a degree the NTT does not support.
pub(crate) fn ring_degree(log_n: u32) -> Result<usize> {
    if !(2..=rhea_math::ntt::MAX_LOG_DEGREE).contains(&log_n) {
        return Err(Error::InvalidParameters(format!(
            "log_n = {} outside 2..={}",
            log_n,
            rhea_math::ntt::MAX_LOG_DEGREE
        )));
    }
    Ok(1usize << log_n)
}

/// The scheme-independent fields of a parameter literal (CKKS and BGV share them), plus what
/// the scheme adds to the parameter fingerprint.
pub(crate) struct RlweSpec<'a> {
    pub(crate) log_n: u32,
    pub(crate) log_q: &'a [u32],
    pub(crate) log_p: &'a [u32],
    pub(crate) q: &'a [u64],
    pub(crate) p: &'a [u64],
    pub(crate) dnum: usize,
    pub(crate) secret: SecretDistribution,
    pub(crate) error_std_dev: f64,
    pub(crate) allow_insecure: bool,
    /// Values no generated prime may take (BGV's plaintext modulus).
    pub(crate) exclude: &'a [u64],
    /// The fingerprint's domain tag (`rhea-<scheme>-params-v1`).
    pub(crate) id_tag: &'a [u8],
    /// Scheme bytes hashed right after `dnum` (BGV: `t`).
    pub(crate) id_after_dnum: &'a [u8],
    /// Scheme bytes hashed last (CKKS: `log_default_scale`).
    pub(crate) id_last: &'a [u8],
    /// CKKS: the default scale's bits. The generated `Q` primes of that size (after the first)
    /// are ordered so that the auto-rescale scale of every level stays at `Δ`
    /// ([`order_for_stable_scale`]).
    pub(crate) stable_scale_bits: Option<u32>,
}

/// The validated scheme-independent part of a parameter set, stored inside both
/// [`CkksParameters`] and `BgvParameters`: the primes, the ring with its tables, the security
/// report, the fingerprint and the literal's shared fields. The shared accessors
/// ([`rlwe_parameter_accessors`]) read it.
pub(crate) struct RlweCore {
    pub(crate) log_n: u32,
    pub(crate) q: Vec<u64>,
    pub(crate) p: Vec<u64>,
    pub(crate) ring: Arc<RnsRing>,
    pub(crate) dnum: usize,
    pub(crate) secret: SecretDistribution,
    pub(crate) error_std_dev: f64,
    pub(crate) security: SecurityReport,
    pub(crate) id: u64,
}

/// The 64-bit fingerprint of a validated parameter set: the first 8 bytes (little endian) of
/// SHA-256 over the tag, `log_n`, the `Q` then `P` primes, `|Q|`, `dnum`, the scheme's
/// `after_dnum` bytes, the secret distribution, the error width and the scheme's `last` bytes.
/// (The layout is fixed: serialised objects and golden digests depend on it.)
fn fingerprint(spec: &RlweSpec<'_>, q: &[u64], p: &[u64]) -> u64 {
    let mut h = Sha256::new();
    h.update(spec.id_tag);
    h.update(spec.log_n.to_le_bytes());
    for &x in q.iter().chain(p) {
        h.update(x.to_le_bytes());
    }
    h.update((q.len() as u64).to_le_bytes());
    h.update((spec.dnum as u64).to_le_bytes());
    h.update(spec.id_after_dnum);
    h.update(match spec.secret {
        SecretDistribution::Ternary => 0u64.to_le_bytes(),
        SecretDistribution::HammingWeight(w) => (1 + w as u64).to_le_bytes(),
    });
    h.update(spec.error_std_dev.to_bits().to_le_bytes());
    h.update(spec.id_last);
    let digest = h.finalize();
    u64::from_le_bytes(digest[..8].try_into().unwrap_or([0; 8]))
}

/// Validates `spec` (degree, primes, `dnum`, error width, Hamming weight, `P` against the
/// key-switching digits), builds the ring and computes the fingerprint; `scheme_check` sees the
/// resolved `Q` and `P` primes and runs before the security check, which comes last.
pub(crate) fn validate_rlwe(
    spec: &RlweSpec<'_>,
    scheme_check: impl FnOnce(&[u64], &[u64]) -> Result<()>,
) -> Result<RlweCore> {
    let n = ring_degree(spec.log_n)?;
    let pick = |name: &str, bits: &[u32], primes: &[u64]| -> Result<bool> {
        match (bits.is_empty(), primes.is_empty()) {
            (false, true) => Ok(true),
            (true, false) => Ok(false),
            (true, true) => Err(Error::InvalidParameters(format!(
                "give the {name} primes as bit sizes (log_{name}) or explicit primes ({name})"
            ))),
            (false, false) => Err(Error::InvalidParameters(format!(
                "give the {name} primes either as bit sizes (log_{name}) or as explicit \
                 primes ({name}), not both"
            ))),
        }
    };
    let q_from_bits = pick("q", spec.log_q, spec.q)?;
    let p_from_bits = pick("p", spec.log_p, spec.p)?;
    let mut explicit: Vec<u64> = spec.q.iter().chain(spec.p).copied().collect();
    explicit.extend(spec.exclude);
    let generated = resolve_primes(
        n,
        if q_from_bits { spec.log_q } else { &[] },
        if p_from_bits { spec.log_p } else { &[] },
        &explicit,
    )?;
    let (gq, gp) = generated.split_at(if q_from_bits { spec.log_q.len() } else { 0 });
    let q: Vec<u64> = if q_from_bits {
        let mut q = gq.to_vec();
        if let Some(bits) = spec.stable_scale_bits {
            order_for_stable_scale(&mut q, spec.log_q, bits);
        }
        q
    } else {
        spec.q.to_vec()
    };
    let p: Vec<u64> = if p_from_bits {
        gp.to_vec()
    } else {
        spec.p.to_vec()
    };

    if spec.dnum == 0 || spec.dnum > q.len() {
        return Err(Error::InvalidParameters(format!(
            "dnum = {} must be in 1..={} (the number of Q primes)",
            spec.dnum,
            q.len()
        )));
    }
    if !(spec.error_std_dev.is_finite() && spec.error_std_dev > 0.0) {
        return Err(Error::InvalidParameters(format!(
            "error_std_dev = {} must be positive",
            spec.error_std_dev
        )));
    }
    if let SecretDistribution::HammingWeight(h) = spec.secret {
        if h == 0 || h > n {
            return Err(Error::InvalidParameters(format!(
                "Hamming weight {h} must be in 1..={n}"
            )));
        }
    }
    let ring = RnsRing::new(n, &q, &p, spec.dnum)?;

    // P must cover the largest digit, or key switching amplifies the noise by Q_j / P.
    let log_p = log2_product(&p);
    let (worst, worst_bits) = ring
        .digits()
        .iter()
        .map(|r| (r.clone(), log2_product(&q[r.clone()])))
        .fold((0..0, 0.0f64), |a, b| if b.1 > a.1 { b } else { a });
    if log_p + 1.0 < worst_bits {
        return Err(Error::InvalidParameters(format!(
            "P ({log_p:.1} bits) is smaller than the largest key-switching digit (Q primes \
             {worst:?}, {worst_bits:.1} bits): add P primes or raise dnum"
        )));
    }
    scheme_check(&q, &p)?;

    let log_qp = log2_product(&q) + log_p;
    let sparse = matches!(spec.secret, SecretDistribution::HammingWeight(_));
    let security = SecurityReport::check(spec.log_n, log_qp, sparse, spec.allow_insecure);
    if !security.meets_128_bits && !spec.allow_insecure {
        return Err(Error::InsecureParameters {
            reason: security.reason.clone(),
        });
    }
    Ok(RlweCore {
        log_n: spec.log_n,
        id: fingerprint(spec, &q, &p),
        q,
        p,
        ring: Arc::new(ring),
        dnum: spec.dnum,
        secret: spec.secret,
        error_std_dev: spec.error_std_dev,
        security,
    })
}

/// The accessors CKKS's and BGV's parameter types share, reading the [`RlweCore`] at
/// `self.inner.core`: `ring`, `n`, `log_n`, `q_primes`, `p_primes`, `max_level`,
/// `q_limbs_at_level`, `dnum`, `secret`, `error_std_dev`, `security`, `log_q_at_level`, `log_q`,
/// `log_p`, `log_qp`, `levels`, `security_level`, and the crate-internal `core`. Invoked inside the type's `impl` block.
macro_rules! rlwe_parameter_accessors {
    () => {
        /// The scheme-independent validated part (crate-internal).
        pub(crate) fn core(&self) -> &$crate::params::RlweCore {
            &self.inner.core
        }

        /// The RNS ring with its tables (what the backend primitives run on; outside the
        /// crate: [`crate::unstable::HasRing`]).
        pub(crate) fn ring(&self) -> &std::sync::Arc<$crate::backend::RnsRing> {
            &self.inner.core.ring
        }

        /// The ring degree `N`.
        pub fn n(&self) -> usize {
            self.inner.core.ring.n()
        }

        /// `log2 N`.
        pub fn log_n(&self) -> u32 {
            self.inner.core.log_n
        }

        /// The `Q` primes, `q_0` first.
        pub fn q_primes(&self) -> &[u64] {
            &self.inner.core.q
        }

        /// The `P` primes.
        pub fn p_primes(&self) -> &[u64] {
            &self.inner.core.p
        }

        /// The highest level, `|Q| - 1` (a level-`ℓ` ciphertext has `ℓ + 1` Q limbs).
        pub fn max_level(&self) -> usize {
            self.inner.core.q.len() - 1
        }

        /// The number of Q limbs of a level-`level` ciphertext.
        pub fn q_limbs_at_level(&self, level: usize) -> usize {
            level + 1
        }

        /// The number of key-switching digits.
        pub fn dnum(&self) -> usize {
            self.inner.core.dnum
        }

        /// The secret distribution.
        pub fn secret(&self) -> $crate::params::SecretDistribution {
            self.inner.core.secret
        }

        /// The error standard deviation.
        pub fn error_std_dev(&self) -> f64 {
            self.inner.core.error_std_dev
        }

        /// The outcome of the security check.
        pub fn security(&self) -> &$crate::params::SecurityReport {
            &self.inner.core.security
        }

        /// `log2` of the modulus `Q_ℓ = q_0 ⋯ q_ℓ` at `level`.
        pub fn log_q_at_level(&self, level: usize) -> f64 {
            let q = &self.inner.core.q;
            $crate::params::log2_product(&q[..(level + 1).min(q.len())])
        }

        /// `log2 Q` (all primes).
        pub fn log_q(&self) -> f64 {
            $crate::params::log2_product(&self.inner.core.q)
        }

        /// `log2 P`.
        pub fn log_p(&self) -> f64 {
            $crate::params::log2_product(&self.inner.core.p)
        }

        /// `log2(Q·P)`, what the security tables bound.
        pub fn log_qp(&self) -> f64 {
            self.log_q() + self.log_p()
        }

        /// The multiplicative depth: how many multiplications (each followed by a rescaling or
        /// modulus switch) a fresh top-level ciphertext allows, `|Q| - 1` (the same number as
        /// `max_level`).
        pub fn levels(&self) -> usize {
            self.max_level()
        }

        /// The highest security level of the HE standard tables these parameters meet, or
        /// `None` below 128 bits (with the insecure opt-in) or with a sparse secret.
        pub fn security_level(&self) -> Option<$crate::params::Security> {
            match self.secret() {
                $crate::params::SecretDistribution::Ternary => {
                    $crate::params::security_level(self.log_n(), self.log_qp())
                }
                $crate::params::SecretDistribution::HammingWeight(_) => None,
            }
        }
    };
}
pub(crate) use rlwe_parameter_accessors;

/// Validated, immutable CKKS parameters with every table precomputed; cheap to clone (an `Arc`).
#[derive(Clone)]
pub struct CkksParameters {
    inner: Arc<Inner>,
}

struct Inner {
    literal: CkksParametersLiteral,
    core: RlweCore,
    default_scale: f64,
}

impl CkksParameters {
    /// Validates `literal` and precomputes every table.
    ///
    /// Errors: [`Error::InvalidParameters`] for inconsistent fields (both or neither of `log_q`
    /// and `q`, a bad `dnum`, a `P` too small for the key-switching digits, a scale not below the
    /// first prime, a bad Hamming weight or error width), the `rhea-math` errors for primes that
    /// cannot be generated or are not NTT-friendly, and [`Error::InsecureParameters`] below 128
    /// bits without the opt-in.
    pub fn new(literal: &CkksParametersLiteral) -> Result<Self> {
        let lit = literal;
        let spec = RlweSpec {
            log_n: lit.log_n,
            log_q: &lit.log_q,
            log_p: &lit.log_p,
            q: &lit.q,
            p: &lit.p,
            dnum: lit.dnum,
            secret: lit.secret,
            error_std_dev: lit.error_std_dev,
            allow_insecure: lit.allow_insecure_below_128_bits,
            exclude: &[],
            id_tag: b"rhea-ckks-params-v1",
            id_after_dnum: &[],
            id_last: &lit.log_default_scale.to_le_bytes(),
            stable_scale_bits: Some(lit.log_default_scale),
        };
        let core = validate_rlwe(&spec, |q, _| {
            let log_q0 = (q[0] as f64).log2();
            if lit.log_default_scale == 0 || lit.log_default_scale as f64 >= log_q0 {
                return Err(Error::InvalidParameters(format!(
                    "the default scale 2^{} must be at least 2 and below the first Q prime \
                     ({log_q0:.1} bits), which is what is left at level 0",
                    lit.log_default_scale
                )));
            }
            Ok(())
        })?;

        let mut literal = lit.clone();
        literal.q = core.q.clone();
        literal.p = core.p.clone();
        literal.log_q.clear();
        literal.log_p.clear();
        Ok(Self {
            inner: Arc::new(Inner {
                literal,
                core,
                default_scale: (lit.log_default_scale as f64).exp2(),
            }),
        })
    }

    /// The resolved literal (explicit primes), e.g. to save and rebuild the exact same set.
    pub fn literal(&self) -> &CkksParametersLiteral {
        &self.inner.literal
    }

    rlwe_parameter_accessors!();

    /// The number of complex slots with full packing, `N/2`.
    pub fn max_slots(&self) -> usize {
        self.n() / 2
    }

    /// The number of slots with full packing, `N/2` complex slots (the same as
    /// [`CkksParameters::max_slots`]; BGV's `slots` is `N`).
    pub fn slots(&self) -> usize {
        self.max_slots()
    }

    /// `log2` of the default scale `Δ`.
    pub fn log_default_scale(&self) -> u32 {
        self.inner.literal.log_default_scale
    }

    /// The whole parameter set, one item a line: `N` and slots, depth, scale, every `Q` and `P`
    /// prime with its size, log Q, log P, log QP, the key-switching digits, the secret and
    /// the security estimate.
    ///
    /// ```
    /// use rhea::params::CkksParametersLiteral;
    /// let text = CkksParametersLiteral::n13_logqp200_levels2().build()?.describe();
    /// assert!(text.contains("log QP") && text.contains("q_2") && text.contains("dnum"));
    /// # Ok::<(), rhea::Error>(())
    /// ```
    pub fn describe(&self) -> String {
        describe_set(
            "CKKS",
            self.core(),
            &[
                ("slots", format!("{} complex (N/2)", self.slots())),
                ("scale", format!("Δ = 2^{}", self.log_default_scale())),
            ],
            self.security_level(),
            self.id(),
        )
    }

    /// The default scale `Δ`.
    pub fn default_scale(&self) -> f64 {
        self.inner.default_scale
    }

    /// The scale of `level` in the auto-rescale mode (see [`crate::ckks::Evaluator`]): `Δ` at
    /// the top level, then `Δ_{ℓ−1} = Δ_ℓ² / q_ℓ`, the scale a product of two ciphertexts at
    /// `(ℓ, Δ_ℓ)` lands on after rescaling. Encode plaintexts for a level at this scale to keep a
    /// circuit on one scale per level. `None` above the top level.
    ///
    /// A level whose prime is not of the scale's size (`log2 q_ℓ ≠ log2 Δ`, rounded: the
    /// bootstrapping levels of a bootstrappable chain, above [`CkksParameters::default_level`])
    /// keeps the scale: such a level is consumed by a product with a constant encoded at its
    /// prime (a linear transform's diagonals), which leaves the scale unchanged.
    ///
    /// ```
    /// use rhea::params::CkksParametersLiteral;
    /// let p = CkksParametersLiteral::test_n13_levels10_insecure().build()?;
    /// assert_eq!(p.scale_at_level(10), Some(2f64.powi(40)));
    /// let q10 = p.q_primes()[10] as f64;
    /// assert_eq!(p.scale_at_level(9), Some(2f64.powi(80) / q10));
    /// # Ok::<(), rhea::Error>(())
    /// ```
    pub fn scale_at_level(&self, level: usize) -> Option<f64> {
        let top = self.max_level();
        if level > top {
            return None;
        }
        let q = self.q_primes();
        let mut scale = self.default_scale();
        for l in (level + 1..=top).rev() {
            if self.is_scale_sized(l) {
                scale = scale * scale / q[l] as f64;
            }
        }
        Some(scale)
    }

    /// The level fresh encodings go to ([`crate::ckks::Encoder::encode`]): the highest level
    /// whose prime has the scale's size (`log2 q_ℓ = log2 Δ`, rounded). That is the top level
    /// for a chain of one prime size after `q_0` (every preset but the bootstrappable ones);
    /// in a bootstrappable chain, whose top primes are sized for bootstrapping
    /// ([`crate::ckks::bootstrap::BootstrapPreset`]), it is the level a bootstrapped ciphertext
    /// comes back at, so that every product of the user's circuit divides by a prime of `Δ`'s
    /// size. The top level when no prime has the scale's size.
    ///
    /// ```
    /// use rhea::params::CkksParametersLiteral;
    /// let p = CkksParametersLiteral::n16_logqp1560_levels24().build()?;
    /// assert_eq!(p.default_level(), p.max_level());
    /// // 60 + 40×3 for the user, then two 55-bit primes reserved for a routine.
    /// let mut lit = CkksParametersLiteral::n13_logqp200_levels2();
    /// lit.log_q = vec![60, 40, 40, 40, 55, 55];
    /// lit.dnum = 6;
    /// let p = lit.insecure_allow_below_128_bits().build()?;
    /// assert_eq!((p.max_level(), p.default_level()), (5, 3));
    /// assert_eq!(p.scale_at_level(3), Some(2f64.powi(40)));
    /// # Ok::<(), rhea::Error>(())
    /// ```
    pub fn default_level(&self) -> usize {
        (1..=self.max_level())
            .rev()
            .find(|&l| self.is_scale_sized(l))
            .unwrap_or(self.max_level())
    }

    /// Whether the prime of `level` has the default scale's size (rounded `log2`).
    fn is_scale_sized(&self, level: usize) -> bool {
        let bits = (self.q_primes()[level] as f64).log2().round();
        bits == self.log_default_scale() as f64
    }

    /// A 64-bit fingerprint of the parameters; every ciphertext, plaintext and key carries it.
    pub fn id(&self) -> u64 {
        self.inner.core.id
    }
}

/// `60 + 40×2`-style description of prime sizes.
pub(crate) fn describe_bits(primes: &[u64]) -> String {
    let mut parts: Vec<(u32, usize)> = Vec::new();
    for &p in primes {
        let b = (p as f64).log2().round() as u32;
        match parts.last_mut() {
            Some((lb, c)) if *lb == b => *c += 1,
            _ => parts.push((b, 1)),
        }
    }
    parts
        .iter()
        .map(|&(b, c)| {
            if c == 1 {
                b.to_string()
            } else {
                format!("{b}×{c}")
            }
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

/// The multi-line description of both schemes' `describe`: `scheme_lines` come after `N`.
pub(crate) fn describe_set(
    scheme: &str,
    core: &RlweCore,
    scheme_lines: &[(&str, String)],
    level: Option<Security>,
    id: u64,
) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let line = |s: &mut String, k: &str, v: &str| {
        let _ = writeln!(s, "  {k:<14}{v}");
    };
    let _ = writeln!(s, "{scheme} parameters (id {id:016x})");
    line(
        &mut s,
        "ring degree",
        &format!("N = 2^{} = {}", core.log_n, 1usize << core.log_n),
    );
    for (k, v) in scheme_lines {
        line(&mut s, k, v);
    }
    let depth = core.q.len() - 1;
    line(
        &mut s,
        "depth",
        &format!("{depth} (levels {depth} down to 0)"),
    );
    let log_q = log2_product(&core.q);
    let log_p = log2_product(&core.p);
    let primes = |s: &mut String, name: &str, ps: &[u64]| {
        for (i, &p) in ps.iter().enumerate() {
            line(
                s,
                &format!("  {name}_{i}"),
                &format!("{p:>20}  {:.2} bits", (p as f64).log2()),
            );
        }
    };
    line(
        &mut s,
        "log Q",
        &format!(
            "{log_q:.1} ({} primes: {})",
            core.q.len(),
            describe_bits(&core.q)
        ),
    );
    primes(&mut s, "q", &core.q);
    line(
        &mut s,
        "log P",
        &format!(
            "{log_p:.1} ({} primes: {})",
            core.p.len(),
            describe_bits(&core.p)
        ),
    );
    primes(&mut s, "p", &core.p);
    line(&mut s, "log QP", &format!("{:.1}", log_q + log_p));
    let digits = core.ring.digits();
    let widest = digits
        .iter()
        .map(|r| log2_product(&core.q[r.clone()]))
        .fold(0.0f64, f64::max);
    let sizes: Vec<String> = digits.iter().map(|r| r.len().to_string()).collect();
    line(
        &mut s,
        "dnum",
        &format!(
            "{} key-switching digits of {} Q primes (largest {widest:.1} bits, P {log_p:.1})",
            core.dnum,
            sizes.join(", ")
        ),
    );
    line(
        &mut s,
        "secret",
        &format!("{}, error σ = {}", core.secret, core.error_std_dev),
    );
    line(&mut s, "security", &core.security.to_string());
    let highest = match level {
        Some(l) => format!("{l} (HE standard tables, uniform ternary, classical)"),
        None => "below 128 bits or not covered by the tables".to_string(),
    };
    line(&mut s, "highest level", &highest);
    s
}

impl fmt::Display for CkksParameters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CKKS N = 2^{}, log Q = {:.1} (bits {}), log P = {:.1} (bits {}), \
             dnum = {}, levels 0..={}, Δ = 2^{}, secret {}, security: {}",
            self.log_n(),
            self.log_q(),
            describe_bits(self.q_primes()),
            self.log_p(),
            describe_bits(self.p_primes()),
            self.dnum(),
            self.max_level(),
            self.inner.literal.log_default_scale,
            self.secret(),
            self.security()
        )
    }
}

impl fmt::Debug for CkksParameters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CkksParameters({self})")
    }
}

impl PartialEq for CkksParameters {
    fn eq(&self, other: &Self) -> bool {
        self.id() == other.id()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_validate_and_describe_themselves() {
        let p = CkksParametersLiteral::n13_logqp200_levels2()
            .build()
            .unwrap();
        assert!(p.security().meets_128_bits);
        assert_eq!(p.max_level(), 2);
        assert_eq!(p.q_primes().len(), 3);
        assert!(p.to_string().contains("128-bit"));
        let t = CkksParametersLiteral::test_n13_levels10_insecure()
            .build()
            .unwrap();
        assert!(!t.security().meets_128_bits);
        assert!(t.security().insecure_opt_in);
        assert!(t.to_string().contains("INSECURE"));
        assert_eq!(t.max_level(), 10);
    }

    #[test]
    fn auto_rescale_scales_stay_at_delta() {
        for preset in CkksParametersLiteral::presets() {
            let params = preset.literal.build().unwrap();
            let log_delta = params.default_scale().log2();
            for level in 0..=params.max_level() {
                let drift = params.scale_at_level(level).unwrap().log2() - log_delta;
                assert!(
                    drift.abs() < 2f64.powi(-12),
                    "{} level {level}: {drift:e}",
                    preset.name
                );
            }
        }
    }

    #[test]
    fn deep_presets_fit_the_table() {
        // Only the prime generation and the checks, not the tables: build the literal's numbers.
        for lit in [
            CkksParametersLiteral::n15_logqp400_levels7(),
            CkksParametersLiteral::n16_logqp1440_levels24(),
            CkksParametersLiteral::n16_logqp1560_levels24(),
            CkksParametersLiteral::n16_logqp1426_levels20(),
            CkksParametersLiteral::n16_logqp1520_levels26(),
            CkksParametersLiteral::n14_logqp400_levels7(),
        ] {
            let n = 1usize << lit.log_n;
            let primes = resolve_primes(n, &lit.log_q, &lit.log_p, &[]).unwrap();
            let log_qp = log2_product(&primes);
            assert!(
                log_qp <= max_log_qp_128(lit.log_n).unwrap() as f64,
                "{log_qp}"
            );
        }
    }

    #[test]
    fn primes_are_distinct_and_sized() {
        let primes = resolve_primes(1 << 13, &[60, 40, 40, 40], &[60, 60], &[]).unwrap();
        let mut sorted = primes.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 6);
        for (p, b) in primes.iter().zip([60u32, 40, 40, 40, 60, 60]) {
            assert!(((*p as f64).log2() - b as f64).abs() < 0.01);
        }
    }

    #[test]
    fn bad_literals_are_refused_with_a_reason() {
        let base = CkksParametersLiteral::n13_logqp200_levels2();
        let mut l = base.clone();
        l.log_q = vec![60, 50, 50];
        assert!(matches!(l.build(), Err(Error::InsecureParameters { .. })));
        let mut l = base.clone();
        l.dnum = 4;
        assert!(matches!(l.build(), Err(Error::InvalidParameters(_))));
        let mut l = base.clone();
        l.dnum = 1; // one 140-bit digit, P has 60 bits
        assert!(matches!(l.build(), Err(Error::InvalidParameters(m)) if m.contains("digit")));
        let mut l = base.clone();
        l.log_default_scale = 61;
        assert!(matches!(l.build(), Err(Error::InvalidParameters(_))));
        let mut l = base.clone();
        l.q = vec![12289];
        assert!(matches!(l.build(), Err(Error::InvalidParameters(_))));
        let mut l = base.clone();
        l.secret = SecretDistribution::HammingWeight(64);
        assert!(matches!(l.build(), Err(Error::InsecureParameters { .. })));
        assert!(l.insecure_allow_below_128_bits().build().is_ok());
        let mut l = base;
        l.log_q.clear();
        l.q = vec![12289, 40961];
        assert!(l.build().is_err()); // not NTT-friendly for N = 2^13
    }

    #[test]
    fn with_dnum_sizes_p_for_the_largest_digit() {
        // Deep preset: 25 Q primes (60 + 24 × 40 bits).
        let deep = CkksParametersLiteral::n16_logqp1440_levels24;
        for (dnum, p_primes) in [(1, 17), (2, 9), (3, 7), (4, 5), (25, 1)] {
            let lit = deep().with_dnum(dnum);
            assert_eq!((lit.dnum, lit.log_p.clone()), (dnum, vec![60; p_primes]));
        }
        assert_eq!(
            deep().with_dnum(2),
            CkksParametersLiteral::n16_logqp1560_levels24()
        );
        // Two digits build, 128-bit secure (log QP ≈ 1560 ≤ 1747) ...
        let two = deep().with_dnum(2).build().unwrap();
        assert_eq!(two.dnum(), 2);
        assert!(two.security().meets_128_bits);
        // ... one digit does not (log QP ≈ 2040).
        assert!(matches!(
            deep().with_dnum(1).build(),
            Err(Error::InsecureParameters { .. })
        ));
        // A zero P size is not a division by zero.
        let mut zero = CkksParametersLiteral::n13_logqp200_levels2();
        zero.log_p = vec![0];
        assert_eq!(zero.with_dnum(2).log_p, vec![60, 60]); // digits 60 + 40, 40
                                                           // Explicit P primes are kept.
        let mut explicit = CkksParametersLiteral::n13_logqp200_levels2();
        explicit.log_p.clear();
        explicit.p = vec![1_152_921_504_606_748_673];
        assert_eq!(explicit.clone().with_dnum(1).p, explicit.p);
    }

    #[test]
    fn literal_round_trips_through_json_and_rebuilds_identically() {
        let p = CkksParametersLiteral::n13_logqp200_levels2()
            .build()
            .unwrap();
        let json = serde_json::to_string(p.literal()).unwrap();
        let back: CkksParametersLiteral = serde_json::from_str(&json).unwrap();
        let p2 = back.build().unwrap();
        assert_eq!(p.q_primes(), p2.q_primes());
        assert_eq!(p.id(), p2.id());
        let minimal = r#"{"log_n": 13, "log_q": [60, 40, 40], "log_p": [60],
                          "log_default_scale": 40, "dnum": 3}"#;
        let l: CkksParametersLiteral = serde_json::from_str(minimal).unwrap();
        assert_eq!(l.build().unwrap().id(), p.id());
    }
}
