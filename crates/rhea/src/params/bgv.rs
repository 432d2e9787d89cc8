//! BGV parameters: a serde-able [`BgvParametersLiteral`] becomes validated, immutable,
//! `Arc`-shared [`BgvParameters`] over the same [`RnsRing`] type as CKKS.

use std::fmt;
use std::sync::Arc;

use rhea_math::prime::{generate_ntt_primes, is_ntt_friendly};

use super::{
    default_sigma, describe_bits, describe_set, p_sizes_for_dnum, ring_degree,
    rlwe_parameter_accessors, validate_rlwe, Preset, RlweCore, RlweSpec, SecretDistribution,
};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The plaintext modulus of every preset: the Fermat prime `65537 = 2^16 + 1`, which is
/// `≡ 1 (mod 2N)` for every `N ≤ 2^15` (full batching).
pub const DEFAULT_PLAINTEXT_MODULUS: u64 = 65_537;

/// BGV parameters as the user writes them (JSON-friendly, unchecked).
///
/// The ciphertext chain `Q` and the key-switching primes `P` are given as bit sizes (`log_q`,
/// `log_p`; primes are generated deterministically, NTT-friendly, as close to `2^bits` as possible)
/// or as explicit primes (`q`, `p`), exactly as for CKKS. The plaintext modulus is either explicit
/// (`t`) or generated (`log_t`: the NTT-friendly prime `t ≡ 1 (mod 2N)` closest to `2^log_t`, so
/// that batching is available). [`BgvParametersLiteral::build`] validates everything.
///
/// ```
/// use rhea::params::BgvParametersLiteral;
/// let lit: BgvParametersLiteral = serde_json::from_str(
///     r#"{"log_n": 13, "log_q": [44, 43, 43, 43], "log_p": [44], "t": 65537, "dnum": 4}"#,
/// ).unwrap();
/// let params = lit.build()?;
/// assert_eq!(params.max_level(), 3);
/// assert!(params.batching());
/// # Ok::<(), rhea::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BgvParametersLiteral {
    /// `log2 N`, the ring degree (`N` slots with batching).
    pub log_n: u32,
    /// Bit sizes of the `Q` primes, `q_0` first (`q_0` is what is left at level 0).
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
    /// The plaintext modulus `t` (`0`: generate it from `log_t`). Batching needs a prime
    /// `t ≡ 1 (mod 2N)`; any `t ≥ 2` coprime to `Q·P` works with coefficient encoding.
    #[serde(default)]
    pub t: u64,
    /// Bit size of a generated batching-friendly plaintext modulus (instead of `t`).
    #[serde(default)]
    pub log_t: u32,
    /// Number of key-switching digits (hybrid key switching): `1 ≤ dnum ≤ |Q|`.
    pub dnum: usize,
    /// The secret-key distribution.
    #[serde(default)]
    pub secret: SecretDistribution,
    /// Standard deviation of the error distribution (default 3.2, as in the HE standard).
    #[serde(default = "crate::params::default_sigma")]
    pub error_std_dev: f64,
    /// Accept parameters below 128-bit security (recorded, and printed by `Display`). Set it
    /// with [`BgvParametersLiteral::insecure_allow_below_128_bits`].
    #[serde(default)]
    pub allow_insecure_below_128_bits: bool,
}

impl BgvParametersLiteral {
    /// Opts in to parameters below 128-bit security (for tests and experiments only). The
    /// resulting parameters say `INSECURE` when printed.
    pub fn insecure_allow_below_128_bits(mut self) -> Self {
        self.allow_insecure_below_128_bits = true;
        self
    }

    /// Sets the number of key-switching digits and, when `P` is given as bit sizes, resizes `P`
    /// to the fewest primes of its largest size (60 bits when none is given) that cover the
    /// largest digit, as [`crate::params::CkksParametersLiteral::with_dnum`] does.
    ///
    /// ```
    /// use rhea::params::BgvParametersLiteral;
    /// // HE-Booster's (13, 218) set with 2 digits of 2 primes (87 bits): 2 × 44-bit P.
    /// let lit = BgvParametersLiteral::he_booster_n13_logqp218().with_dnum(2);
    /// assert_eq!((lit.dnum, lit.log_p.clone()), (2, vec![44, 44]));
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
                "he_booster_n13_logqp218",
                "small: three multiplications, 8192 slots, t = 65537 (HE-Booster set 1)",
                Self::he_booster_n13_logqp218(),
            ),
            p(
                "he_booster_n14_logqp438",
                "seven multiplications, 16384 slots, t = 65537 (HE-Booster set 2)",
                Self::he_booster_n14_logqp438(),
            ),
            p(
                "he_booster_n15_logqp881",
                "fourteen multiplications, 32768 slots, t = 65537 (HE-Booster set 3)",
                Self::he_booster_n15_logqp881(),
            ),
            p(
                "n16_logqp1717_batching",
                "deep: 27 levels, 65536 slots, a 21-bit batching t",
                Self::n16_logqp1717_batching(),
            ),
            p(
                "test_n12_levels5_insecure",
                "INSECURE test set: five levels at a small ring",
                Self::test_n12_levels5_insecure(),
            ),
        ]
    }

    /// The preset named `name` (see [`BgvParametersLiteral::presets`]), or `None`.
    pub fn by_name(name: &str) -> Option<Self> {
        Self::presets()
            .into_iter()
            .find(|p| p.name == name)
            .map(|p| p.literal)
    }

    /// Validates the literal into [`BgvParameters`] (same as [`BgvParameters::new`]).
    pub fn build(&self) -> Result<BgvParameters> {
        BgvParameters::new(self)
    }

    fn preset(log_n: u32, log_q: Vec<u32>, log_p: Vec<u32>, t: u64, dnum: usize) -> Self {
        Self {
            log_n,
            log_q,
            log_p,
            q: Vec::new(),
            p: Vec::new(),
            t,
            log_t: 0,
            dnum,
            secret: SecretDistribution::Ternary,
            error_std_dev: default_sigma(),
            allow_insecure_below_128_bits: false,
        }
    }

    /// HE-Booster's first set, `(log N, log QP) = (13, 218)`: `Q = 44 + 3×43` bits (4 primes,
    /// levels 0..=3), `P = 44` bits, `dnum = 4` (each Q prime its own digit), `t = 65537` (full
    /// batching, 8192 slots); log QP ≈ 217 ≤ 218: 128-bit secure.
    pub fn he_booster_n13_logqp218() -> Self {
        Self::preset(
            13,
            vec![44, 43, 43, 43],
            vec![44],
            DEFAULT_PLAINTEXT_MODULUS,
            4,
        )
    }

    /// HE-Booster's second set, `(14, 438)`: `Q = 50 + 7×48` bits (8 primes, levels 0..=7),
    /// `P = 50` bits, `dnum = 8`, `t = 65537`; log QP ≈ 436 ≤ 438: 128-bit secure.
    pub fn he_booster_n14_logqp438() -> Self {
        let mut q = vec![50];
        q.extend([48; 7]);
        Self::preset(14, q, vec![50], DEFAULT_PLAINTEXT_MODULUS, 8)
    }

    /// HE-Booster's third set, `(15, 881)`: `Q = 15×55` bits (15 primes, levels 0..=14),
    /// `P = 55` bits, `dnum = 15`, `t = 65537`; log QP ≈ 880 ≤ 881: 128-bit secure.
    pub fn he_booster_n15_logqp881() -> Self {
        Self::preset(15, vec![55; 15], vec![55], DEFAULT_PLAINTEXT_MODULUS, 15)
    }

    /// A deep set with a generated batching prime: `N = 2^16`, `log_t = 20`, i.e. `t` the prime
    /// `≡ 1 (mod 2^17)` closest to `2^20`, `t = 1179649 = 9·2^17 + 1` (65537 is not
    /// `≡ 1 mod 2N` at this degree),
    /// `Q = 58 + 27×55` bits (28 primes, levels 0..=27), `P = 3×58` bits, `dnum = 10` (digits of
    /// 3 primes, at most 168 bits < 174); log QP ≈ 1717 ≤ 1747: 128-bit secure.
    pub fn n16_logqp1717_batching() -> Self {
        let mut q = vec![58];
        q.extend([55; 27]);
        let mut lit = Self::preset(16, q, vec![58; 3], 0, 10);
        lit.log_t = 20;
        lit
    }

    /// **Insecure** test set: `N = 2^12`, `Q = 60 + 5×45` bits (6 primes, levels 0..=5),
    /// `P = 60` bits, `dnum = 6`, `t = 65537`; log QP ≈ 345 > 109, so it carries the explicit
    /// opt-in. Five multiplicative levels at a ring small enough for fast tests.
    pub fn test_n12_levels5_insecure() -> Self {
        let mut q = vec![60];
        q.extend([45; 5]);
        Self::preset(12, q, vec![60], DEFAULT_PLAINTEXT_MODULUS, 6).insecure_allow_below_128_bits()
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Validated, immutable BGV parameters with every table precomputed; cheap to clone (an `Arc`).
#[derive(Clone)]
pub struct BgvParameters {
    inner: Arc<Inner>,
}

struct Inner {
    literal: BgvParametersLiteral,
    core: RlweCore,
    t: u64,
    batching: bool,
}

impl BgvParameters {
    /// Validates `literal` and precomputes every table.
    ///
    /// Errors: [`Error::InvalidParameters`] for inconsistent fields (both or neither of `log_q`
    /// and `q`, of `t` and `log_t`; a bad `dnum`; a `P` too small for the key-switching digits;
    /// `t < 2`, `t` sharing a factor with a prime of `Q·P`, or `t` not below `q_0`; a bad
    /// Hamming weight or error width), the `rhea-math` errors for primes that cannot be generated
    /// or are not NTT-friendly, and [`Error::InsecureParameters`] below 128 bits without the
    /// opt-in.
    pub fn new(literal: &BgvParametersLiteral) -> Result<Self> {
        let lit = literal;
        let n = ring_degree(lit.log_n)?;
        let t = match (lit.t, lit.log_t) {
            (0, 0) => {
                return Err(Error::InvalidParameters(
                    "give the plaintext modulus as `t` or as a bit size `log_t`".into(),
                ))
            }
            (0, bits) => generate_ntt_primes(bits, n, 1, &[])?[0],
            (t, 0) => t,
            _ => {
                return Err(Error::InvalidParameters(
                    "give the plaintext modulus either as `t` or as `log_t`, not both".into(),
                ))
            }
        };
        if t < 2 || t >> rhea_math::MAX_MODULUS_BITS != 0 {
            return Err(Error::InvalidParameters(format!(
                "the plaintext modulus t = {t} must be in 2..2^61"
            )));
        }
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
            exclude: &[t],
            id_tag: b"rhea-bgv-params-v1",
            id_after_dnum: &t.to_le_bytes(),
            id_last: &[],
            stable_scale_bits: None,
        };
        let core = validate_rlwe(&spec, |q, p| {
            if let Some(&bad) = q.iter().chain(p).find(|&&x| gcd(x, t) != 1) {
                return Err(Error::InvalidParameters(format!(
                    "the plaintext modulus t = {t} shares a factor with the prime {bad} of Q·P"
                )));
            }
            if t >= q[0] {
                return Err(Error::InvalidParameters(format!(
                    "the plaintext modulus t = {t} must be far below the first Q prime {} (what \
                     is left at level 0)",
                    q[0]
                )));
            }
            Ok(())
        })?;

        let mut literal = lit.clone();
        literal.q = core.q.clone();
        literal.p = core.p.clone();
        literal.log_q.clear();
        literal.log_p.clear();
        literal.t = t;
        literal.log_t = 0;
        Ok(Self {
            inner: Arc::new(Inner {
                literal,
                core,
                t,
                batching: is_ntt_friendly(t, n),
            }),
        })
    }

    /// The resolved literal (explicit primes and `t`), to save and rebuild the exact same set.
    pub fn literal(&self) -> &BgvParametersLiteral {
        &self.inner.literal
    }

    rlwe_parameter_accessors!();

    /// The plaintext modulus `t`.
    pub fn t(&self) -> u64 {
        self.inner.t
    }

    /// Whether batching (`N` slots) is available: `t` is a prime `≡ 1 (mod 2N)`.
    pub fn batching(&self) -> bool {
        self.inner.batching
    }

    /// The number of slots with batching, `N` (a `2 × N/2` matrix).
    pub fn slots(&self) -> usize {
        self.n()
    }

    /// A 64-bit fingerprint of the parameters (including `t`); every ciphertext, plaintext and
    /// key carries it.
    pub fn id(&self) -> u64 {
        self.inner.core.id
    }

    /// The whole parameter set, one item a line: `N` and slots, `t`, depth, every `Q` and `P`
    /// prime with its size, log Q, log P, log QP, the key-switching digits, the secret and the
    /// security estimate.
    ///
    /// ```
    /// use rhea::params::BgvParametersLiteral;
    /// let text = BgvParametersLiteral::he_booster_n13_logqp218().build()?.describe();
    /// assert!(text.contains("t = 65537") && text.contains("q_3") && text.contains("log QP"));
    /// # Ok::<(), rhea::Error>(())
    /// ```
    pub fn describe(&self) -> String {
        let slots = if self.batching() {
            format!("{} (a 2 × {} matrix)", self.slots(), self.slots() / 2)
        } else {
            "none: coefficient encoding only (t is not a prime ≡ 1 mod 2N)".to_string()
        };
        describe_set(
            "BGV",
            self.core(),
            &[
                ("slots", slots),
                (
                    "plaintext",
                    format!("t = {} ({:.2} bits)", self.t(), (self.t() as f64).log2()),
                ),
            ],
            self.security_level(),
            self.id(),
        )
    }
}

impl fmt::Display for BgvParameters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "BGV N = 2^{}, t = {} ({}), log Q = {:.1} (bits {}), log P = {:.1} (bits {}), \
             dnum = {}, levels 0..={}, secret {}, security: {}",
            self.log_n(),
            self.t(),
            if self.batching() {
                "batching"
            } else {
                "coefficient encoding only"
            },
            self.log_q(),
            describe_bits(self.q_primes()),
            self.log_p(),
            describe_bits(self.p_primes()),
            self.dnum(),
            self.max_level(),
            self.secret(),
            self.security()
        )
    }
}

impl fmt::Debug for BgvParameters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BgvParameters({self})")
    }
}

impl PartialEq for BgvParameters {
    fn eq(&self, other: &Self) -> bool {
        self.id() == other.id()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{log2_product, max_log_qp_128, resolve_primes};

    #[test]
    fn presets_fit_the_security_table() {
        // Prime generation and the log QP sum only (no tables for the large rings).
        for (lit, slack) in [
            (BgvParametersLiteral::he_booster_n13_logqp218(), 4.0),
            (BgvParametersLiteral::he_booster_n14_logqp438(), 4.0),
            (BgvParametersLiteral::he_booster_n15_logqp881(), 4.0),
            (BgvParametersLiteral::n16_logqp1717_batching(), 32.0),
        ] {
            let n = 1usize << lit.log_n;
            let t = if lit.t != 0 {
                lit.t
            } else {
                generate_ntt_primes(lit.log_t, n, 1, &[]).unwrap()[0]
            };
            assert!(is_ntt_friendly(t, n), "t = {t} must allow batching");
            let primes = resolve_primes(n, &lit.log_q, &lit.log_p, &[t]).unwrap();
            let log_qp = log2_product(&primes);
            let max = max_log_qp_128(lit.log_n).unwrap() as f64;
            assert!(log_qp <= max, "log QP {log_qp} > {max}");
            assert!(
                log_qp > max - slack,
                "log QP {log_qp} wastes the budget {max}"
            );
            // The digits fit below P (what `build` checks, without the tables).
            let (nq, np) = (lit.log_q.len(), lit.log_p.len());
            let alpha = nq.div_ceil(lit.dnum);
            let log_p = log2_product(&primes[nq..nq + np]);
            for d in primes[..nq].chunks(alpha) {
                assert!(log2_product(d) <= log_p + 1.0);
            }
        }
    }

    #[test]
    fn small_preset_builds_and_describes_itself() {
        let p = BgvParametersLiteral::he_booster_n13_logqp218()
            .build()
            .unwrap();
        assert!(p.security().meets_128_bits);
        assert_eq!((p.max_level(), p.t(), p.slots()), (3, 65537, 8192));
        assert!(p.batching());
        let s = p.to_string();
        assert!(
            s.contains("t = 65537 (batching)") && s.contains("128-bit"),
            "{s}"
        );
        let json = serde_json::to_string(p.literal()).unwrap();
        let back: BgvParametersLiteral = serde_json::from_str(&json).unwrap();
        assert_eq!(back.build().unwrap().id(), p.id());
    }

    #[test]
    fn bad_literals_are_refused_with_a_reason() {
        let base = BgvParametersLiteral::test_n12_levels5_insecure();
        assert!(base.build().is_ok());
        let mut l = base.clone();
        l.allow_insecure_below_128_bits = false;
        assert!(matches!(l.build(), Err(Error::InsecureParameters { .. })));
        let mut l = base.clone();
        l.t = 0;
        assert!(matches!(l.build(), Err(Error::InvalidParameters(_))));
        let mut l = base.clone();
        l.log_t = 17;
        assert!(matches!(l.build(), Err(Error::InvalidParameters(_))));
        let mut l = base.clone();
        l.t = 1;
        assert!(matches!(l.build(), Err(Error::InvalidParameters(_))));
        let mut l = base.clone();
        l.t = 1 << 61;
        assert!(matches!(l.build(), Err(Error::InvalidParameters(_))));
        // t sharing a factor with an explicit prime.
        let p0 = base.build().unwrap().q_primes()[1];
        let mut l = base.clone();
        l.t = 3 * p0;
        assert!(matches!(l.build(), Err(Error::InvalidParameters(m)) if m.contains("factor")));
        let mut l = base.clone();
        l.dnum = 7;
        assert!(matches!(l.build(), Err(Error::InvalidParameters(_))));
        let mut l = base.clone();
        l.dnum = 1; // one 285-bit digit, P has 60 bits
        assert!(matches!(l.build(), Err(Error::InvalidParameters(m)) if m.contains("digit")));
        // A plaintext modulus that is not a batching prime still builds (coefficient encoding).
        let mut l = base.clone();
        l.t = 256;
        let p = l.build().unwrap();
        assert!(!p.batching());
        assert_ne!(p.id(), base.build().unwrap().id());
        // A generated batching prime.
        let mut l = base;
        l.t = 0;
        l.log_t = 30;
        let p = l.build().unwrap();
        assert!(p.batching() && p.t() > 1 << 29 && p.t() < 1 << 31);
    }
}
