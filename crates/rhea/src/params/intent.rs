//! Parameters by intent: a CKKS or BGV parameter set derived from what the computation needs
//! (multiplicative depth, precision or plaintext size, slots, security level) instead of a list
//! of prime sizes.
//!
//! ```
//! use rhea::params::{CkksParameters, Security};
//! // Depth 2 at 40-bit scale: the smallest ring with 128-bit security is N = 2^13.
//! let params = CkksParameters::for_depth(2).scale_bits(40).build()?;
//! assert_eq!((params.log_n(), params.levels()), (13, 2));
//! assert!(params.security().meets_128_bits);
//! println!("{}", params.describe()); // N, slots, every prime, log Q, log P, log QP, dnum, ...
//!
//! // Asking for more than any ring can give says what to relax.
//! let err = CkksParameters::for_depth(60).scale_bits(40).log_n(16).build().unwrap_err();
//! assert!(err.to_string().contains("lower the depth to"));
//! # Ok::<(), rhea::Error>(())
//! ```
//!
//! # How a chain is derived (deterministic: the same intent gives the same primes)
//!
//! **CKKS** (`depth`, `scale_bits` Δ, optional `slots` or `log_n`, `security`): `Q` is a first
//! prime of `min(scale_bits + 20, 60)` bits (what is left at level 0: the scale plus 20 bits for
//! the integer part and precision of the final decryption; [`CkksIntent::first_prime_bits`]
//! overrides it) followed by `depth` primes of `scale_bits` bits, one per rescaling, so the set
//! has exactly `depth` levels. The special primes `P` cover the largest key-switching digit:
//! `k = ⌈digit bits / 60⌉` primes of `⌈digit bits / k⌉` bits each. The ring degree is the
//! smallest `N ≥ 2·slots` (`N ≥ 2^10`) for which some number of digits `dnum` gives a
//! `log2(Q·P)` at least one bit below the HE standard's bound for the asked security (the bit
//! absorbs the primes' distance from `2^bits`); at that `N`, the fewest digits that fit (fewest
//! converted limbs and smallest keys). [`CkksIntent::dnum`] fixes the number of digits instead.
//!
//! **BGV** (`depth`, a plaintext modulus `t` or its size in bits, optional `slots` or `log_n`,
//! `security`): with a size `b`, `t` is the smallest `b`-bit prime `≡ 1 (mod 2N)` (batching with
//! `N` slots; 65537 for the default of 17 bits at `N ≤ 2^15`). The primes are sized with the
//! noise model of [`crate::bgv`] (canonical-norm bounds, `D = 6`): every level budgets for a sum
//! of four terms followed by one multiplication with relinearisation and modulus switch, each
//! middle prime bringing the noise back to the modulus-switching floor `t·R`; the first prime
//! keeps the final result decryptable after one more key switching (a rotation) and a sum of
//! four, with 3 bits to spare. A rotation costs about `log2(8·|Q|)` bits of a level's budget:
//! [`BgvIntent::margin_bits`] adds bits to every prime for programs that rotate at every level
//! (the evaluator refuses an operation that would exhaust the budget, it never decrypts
//! wrongly). `P` and `N` are chosen as for CKKS.

use std::fmt;
use std::str::FromStr;

use rhea_math::prime::{is_ntt_friendly, is_prime};
use rhea_math::MathError;

use super::{BgvParameters, BgvParametersLiteral, CkksParameters, CkksParametersLiteral};
use super::{SecretDistribution, Security};
use crate::error::{Error, Result};

/// The default scale of [`CkksIntent`], in bits.
pub const DEFAULT_SCALE_BITS: u32 = 40;
/// The default size of BGV's plaintext modulus in [`BgvIntent`] (`t = 65537` for `N ≤ 2^15`).
pub const DEFAULT_PLAINTEXT_BITS: u32 = 17;
/// Bits the default first CKKS prime has above the scale (integer part and final precision).
pub const FIRST_PRIME_EXTRA_BITS: u32 = 20;
/// The largest prime size the derivation uses (first prime, special primes).
pub const MAX_PRIME_BITS: u32 = 60;
/// The smallest scale (CKKS) the derivation accepts, in bits.
pub const MIN_SCALE_BITS: u32 = 20;
/// The ring degrees the security tables cover: `2^MIN_LOG_N ..= 2^MAX_LOG_N`.
const MIN_LOG_N: u32 = 10;
const MAX_LOG_N: u32 = 17;

/// Why an intent has no parameter set. Each variant says what to relax.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IntentError {
    /// A field of the intent outside its domain.
    #[error("{field} = {value} is outside {allowed}")]
    OutOfRange {
        /// The field (`scale_bits`, `slots`, ...).
        field: &'static str,
        /// The value asked for.
        value: u64,
        /// What is allowed.
        allowed: String,
    },
    /// The chain needs a larger `log2(Q·P)` than the security table allows at every ring degree
    /// the intent admits.
    #[error(
        "{intent} needs log QP ≈ {needed_log_qp} > {max_log_qp} allowed at N = 2^{log_n} for \
         {security} security; {advice}"
    )]
    ChainTooLarge {
        /// The intent, in words (`CKKS depth 60 at scale 2^40`).
        intent: String,
        /// The smallest nominal `log2(Q·P)` of the chain at `N = 2^log_n` (over all `dnum`).
        needed_log_qp: u32,
        /// The largest ring degree the intent admits.
        log_n: u32,
        /// The table's bound there.
        max_log_qp: u32,
        /// The security level asked for.
        security: Security,
        /// What to relax (depth, scale or plaintext bits, ring degree, security).
        advice: String,
    },
    /// Batching needs a prime `t ≡ 1 (mod 2N)` and none of the asked size exists at this degree.
    #[error(
        "no {bits}-bit prime t ≡ 1 (mod 2N) exists at N = 2^{log_n}, and batching needs one; \
         {advice}"
    )]
    NoBatchingModulus {
        /// The plaintext bits asked for.
        bits: u32,
        /// The ring degree.
        log_n: u32,
        /// What to ask for instead.
        advice: String,
    },
    /// An explicit plaintext modulus that does not allow the slots asked for.
    #[error(
        "t = {t} does not allow batching at N = 2^{log_n} (slots need a prime t ≡ 1 mod {}); \
         ask for plaintext bits instead of an explicit t, or do not ask for slots (coefficient \
         encoding)",
        2u64 << log_n
    )]
    NotBatching {
        /// The plaintext modulus.
        t: u64,
        /// The ring degree.
        log_n: u32,
    },
    /// A BGV plaintext modulus too large for the noise at this ring degree: the primes would
    /// need more than 60 bits.
    #[error(
        "a {t_bits:.1}-bit plaintext modulus needs {prime_bits}-bit primes at N = 2^{log_n} \
         (at most {MAX_PRIME_BITS}); lower the plaintext bits"
    )]
    PlaintextTooLarge {
        /// `log2 t`.
        t_bits: f64,
        /// The prime size the noise needs.
        prime_bits: u32,
        /// The ring degree.
        log_n: u32,
    },
    /// Not enough NTT-friendly primes of a size exist at the derived ring degree.
    #[error(
        "not enough {bits}-bit primes ≡ 1 (mod 2N) at N = 2^{log_n} for {count} primes; raise \
         the scale (or plaintext) bits"
    )]
    NotEnoughPrimes {
        /// The prime size.
        bits: u32,
        /// The ring degree.
        log_n: u32,
        /// How many were needed.
        count: usize,
    },
    /// An intent string that cannot be parsed ([`CkksIntent::from_str`],
    /// [`BgvIntent::from_str`]).
    #[error("cannot parse the parameter intent `{input}`: {reason}")]
    Parse {
        /// The text.
        input: String,
        /// What is wrong, and the accepted keys.
        reason: String,
    },
}

/// The derived shape of a chain: prime sizes, digits and ring degree.
#[derive(Clone, Debug, PartialEq)]
struct Chain {
    log_n: u32,
    log_q: Vec<u32>,
    log_p: Vec<u32>,
    dnum: usize,
}

/// The special primes for `dnum` digits of the `Q` sizes `log_q`: `k = ⌈w/60⌉` primes of
/// `⌈w/k⌉` bits, `w` the largest digit's bits.
fn p_bits_for(log_q: &[u32], dnum: usize) -> Vec<u32> {
    let widest = rhea_math::bconv::digit_ranges(log_q.len(), dnum)
        .into_iter()
        .map(|r| log_q[r].iter().sum::<u32>())
        .max()
        .unwrap_or(0)
        .max(1);
    let k = widest.div_ceil(MAX_PRIME_BITS);
    vec![widest.div_ceil(k); k as usize]
}

/// The fewest digits (or `dnum`) whose chain fits `bound - 1`: `Ok((P sizes, dnum))`, or
/// `Err(smallest nominal log QP over the digits tried)`.
fn fit_digits(
    log_q: &[u32],
    dnum: Option<usize>,
    bound: u32,
) -> std::result::Result<(Vec<u32>, usize), u32> {
    let q: u32 = log_q.iter().sum();
    let tries: Vec<usize> = match dnum {
        Some(d) => vec![d],
        None => (1..=log_q.len()).collect(),
    };
    let mut least = u32::MAX;
    for d in tries {
        let p = p_bits_for(log_q, d);
        let total = q + p.iter().sum::<u32>();
        if total < bound {
            return Ok((p, d));
        }
        least = least.min(total);
    }
    Err(least)
}

/// The ring degrees an intent admits, smallest first.
fn degrees(
    fixed: Option<u32>,
    slots: Option<usize>,
    slots_per_n: u32,
) -> std::result::Result<std::ops::RangeInclusive<u32>, IntentError> {
    if let Some(l) = fixed {
        if !(MIN_LOG_N..=MAX_LOG_N).contains(&l) {
            return Err(IntentError::OutOfRange {
                field: "log_n",
                value: l as u64,
                allowed: format!("{MIN_LOG_N}..={MAX_LOG_N} (the security tables' rows)"),
            });
        }
    }
    let from_slots = match slots {
        None => MIN_LOG_N,
        Some(s) => {
            let max = 1usize << (MAX_LOG_N - slots_per_n);
            if s == 0 || !s.is_power_of_two() || s > max {
                return Err(IntentError::OutOfRange {
                    field: "slots",
                    value: s as u64,
                    allowed: format!("powers of two in 1..={max}"),
                });
            }
            (s.trailing_zeros() + slots_per_n).max(MIN_LOG_N)
        }
    };
    match fixed {
        Some(l) if l < from_slots => Err(IntentError::OutOfRange {
            field: "log_n",
            value: l as u64,
            allowed: format!("{from_slots}..={MAX_LOG_N} for the slots asked"),
        }),
        Some(l) => Ok(l..=l),
        None => Ok(from_slots..=MAX_LOG_N),
    }
}

fn bound(security: Security, log_n: u32) -> u32 {
    security.max_log_qp(log_n).unwrap_or(0)
}

/// Maps the prime generator's shortage to the intent's error.
fn primes_error(e: Error, log_n: u32) -> Error {
    match e {
        Error::Math(MathError::NotEnoughPrimes { count, bits, .. }) => {
            IntentError::NotEnoughPrimes { bits, log_n, count }.into()
        }
        other => other,
    }
}

// ---------------------------------------------------------------------------------- CKKS

/// CKKS parameters by intent (see the [module docs](self) for the derivation); made by
/// [`CkksParameters::for_depth`].
///
/// ```
/// use rhea::params::{CkksParameters, Security};
/// let params = CkksParameters::for_depth(10)
///     .scale_bits(40)
///     .slots(1 << 14)
///     .security(Security::Bits128)
///     .build()?;
/// assert_eq!(params.levels(), 10);
/// assert_eq!(params.slots(), 1 << 14); // N = 2^15: the slots ask for it
/// # Ok::<(), rhea::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CkksIntent {
    depth: usize,
    scale_bits: u32,
    first_prime_bits: Option<u32>,
    slots: Option<usize>,
    log_n: Option<u32>,
    dnum: Option<usize>,
    security: Security,
}

impl CkksParameters {
    /// Parameters by intent: `depth` multiplications (each followed by a rescaling), at a
    /// 40-bit scale, 128-bit security and the smallest ring that allows them, until the
    /// builder's methods say otherwise. [`CkksIntent::build`] derives and validates the set.
    pub fn for_depth(depth: usize) -> CkksIntent {
        CkksIntent {
            depth,
            scale_bits: DEFAULT_SCALE_BITS,
            first_prime_bits: None,
            slots: None,
            log_n: None,
            dnum: None,
            security: Security::Bits128,
        }
    }
}

impl CkksIntent {
    /// The scale `Δ = 2^bits` (the size of the rescaling primes): precision. `20..=59`.
    pub fn scale_bits(mut self, bits: u32) -> Self {
        self.scale_bits = bits;
        self
    }

    /// The size of the first prime (what is left at level 0), instead of
    /// `min(scale_bits + 20, 60)`; above the scale, at most 60.
    pub fn first_prime_bits(mut self, bits: u32) -> Self {
        self.first_prime_bits = Some(bits);
        self
    }

    /// At least `slots` complex slots (a power of two): `N ≥ 2·slots`.
    pub fn slots(mut self, slots: usize) -> Self {
        self.slots = Some(slots);
        self
    }

    /// Exactly this ring degree `N = 2^log_n` (`10..=17`) instead of the smallest that fits.
    pub fn log_n(mut self, log_n: u32) -> Self {
        self.log_n = Some(log_n);
        self
    }

    /// Exactly `dnum` key-switching digits instead of the fewest that fit.
    pub fn dnum(mut self, dnum: usize) -> Self {
        self.dnum = Some(dnum);
        self
    }

    /// The security level to reach (128 bits by default).
    pub fn security(mut self, security: Security) -> Self {
        self.security = security;
        self
    }

    fn first_bits(&self) -> u32 {
        self.first_prime_bits
            .unwrap_or((self.scale_bits + FIRST_PRIME_EXTRA_BITS).min(MAX_PRIME_BITS))
    }

    fn log_q(&self, depth: usize, scale: u32) -> Vec<u32> {
        let mut q = vec![self.first_bits().max(scale + 1)];
        q.resize(depth + 1, scale);
        q
    }

    fn check_fields(&self) -> std::result::Result<(), IntentError> {
        if !(MIN_SCALE_BITS..MAX_PRIME_BITS).contains(&self.scale_bits) {
            return Err(IntentError::OutOfRange {
                field: "scale_bits",
                value: self.scale_bits as u64,
                allowed: format!("{MIN_SCALE_BITS}..={}", MAX_PRIME_BITS - 1),
            });
        }
        let first = self.first_bits();
        if first <= self.scale_bits || first > MAX_PRIME_BITS {
            return Err(IntentError::OutOfRange {
                field: "first_prime_bits",
                value: first as u64,
                allowed: format!(
                    "{}..={MAX_PRIME_BITS} (above the scale)",
                    self.scale_bits + 1
                ),
            });
        }
        if self.depth > 200 {
            return Err(IntentError::OutOfRange {
                field: "depth",
                value: self.depth as u64,
                allowed: "0..=200".into(),
            });
        }
        if let Some(d) = self.dnum {
            if d == 0 || d > self.depth + 1 {
                return Err(IntentError::OutOfRange {
                    field: "dnum",
                    value: d as u64,
                    allowed: format!("1..={} (the number of Q primes)", self.depth + 1),
                });
            }
        }
        Ok(())
    }

    /// The chain at the smallest admitted degree, or the typed error with advice.
    fn chain(&self) -> std::result::Result<Chain, IntentError> {
        self.check_fields()?;
        let range = degrees(self.log_n, self.slots, 1)?;
        let log_q = self.log_q(self.depth, self.scale_bits);
        let mut needed = 0;
        for log_n in range.clone() {
            match fit_digits(&log_q, self.dnum, bound(self.security, log_n)) {
                Ok((log_p, dnum)) => {
                    return Ok(Chain {
                        log_n,
                        log_q,
                        log_p,
                        dnum,
                    })
                }
                Err(least) => needed = least,
            }
        }
        let top = *range.end();
        let fits = |depth: usize, scale: u32, log_n: u32| {
            fit_digits(
                &self.log_q(depth, scale),
                self.dnum,
                bound(self.security, log_n),
            )
            .is_ok()
        };
        let mut advice = Vec::new();
        if let Some(d) = (0..self.depth)
            .rev()
            .find(|&d| fits(d, self.scale_bits, top))
        {
            advice.push(format!("lower the depth to {d}"));
        }
        if let Some(s) = (MIN_SCALE_BITS..self.scale_bits)
            .rev()
            .find(|&s| fits(self.depth, s, top))
        {
            advice.push(format!("the scale to 2^{s}"));
        }
        if let Some(l) = (top + 1..=MAX_LOG_N).find(|&l| fits(self.depth, self.scale_bits, l)) {
            advice.push(format!("allow N = 2^{l}"));
        }
        if let Some(s) = Security::ALL
            .into_iter()
            .filter(|s| *s < self.security)
            .find(|&s| fit_digits(&log_q, self.dnum, bound(s, top)).is_ok())
        {
            advice.push(format!("ask for {s} security"));
        }
        if self.dnum.is_some() {
            advice.push("let the number of digits (dnum) be chosen".into());
        }
        Err(IntentError::ChainTooLarge {
            intent: format!(
                "CKKS depth {} at scale 2^{} (first prime {} bits)",
                self.depth,
                self.scale_bits,
                self.first_bits()
            ),
            needed_log_qp: needed,
            log_n: top,
            max_log_qp: bound(self.security, top),
            security: self.security,
            advice: advice_text(advice),
        })
    }

    /// The derived literal (prime sizes, `dnum`, `N`), before prime generation and validation:
    /// to inspect, save as JSON, or adjust before building.
    pub fn literal(&self) -> Result<CkksParametersLiteral> {
        let c = self.chain()?;
        let mut lit = CkksParametersLiteral::n13_logqp200_levels2();
        lit.log_n = c.log_n;
        lit.log_q = c.log_q;
        lit.log_p = c.log_p;
        lit.log_default_scale = self.scale_bits;
        lit.dnum = c.dnum;
        lit.secret = SecretDistribution::Ternary;
        Ok(lit)
    }

    /// Derives, generates the primes and validates (128-bit check included) the parameters.
    ///
    /// Errors: [`Error::ParameterIntent`] when no set fits the intent (what to relax is in the
    /// message), and the errors of [`CkksParameters::new`].
    pub fn build(&self) -> Result<CkksParameters> {
        let lit = self.literal()?;
        lit.build().map_err(|e| primes_error(e, lit.log_n))
    }
}

impl fmt::Display for CkksIntent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "depth={},scale_bits={}", self.depth, self.scale_bits)?;
        if let Some(b) = self.first_prime_bits {
            write!(f, ",first_prime_bits={b}")?;
        }
        if let Some(s) = self.slots {
            write!(f, ",slots={s}")?;
        }
        if let Some(l) = self.log_n {
            write!(f, ",log_n={l}")?;
        }
        if let Some(d) = self.dnum {
            write!(f, ",dnum={d}")?;
        }
        write!(f, ",security={}", self.security.bits())
    }
}

/// Splits `key=value,key=value` and hands each pair to `set`.
fn parse_pairs(
    input: &str,
    keys: &[&str],
    mut set: impl FnMut(&str, u64) -> std::result::Result<(), String>,
) -> std::result::Result<(), IntentError> {
    let err = |reason: String| IntentError::Parse {
        input: input.to_string(),
        reason,
    };
    let list = keys.join(", ");
    let mut depth = false;
    for pair in input.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| err(format!("`{pair}` is not key=value (keys: {list})")))?;
        let (k, v) = (k.trim(), v.trim());
        if !keys.contains(&k) {
            return Err(err(format!("unknown key `{k}` (keys: {list})")));
        }
        let value = match v.strip_prefix("2^") {
            Some(e) => e
                .parse::<u32>()
                .ok()
                .and_then(|e| 1u64.checked_shl(e).filter(|_| e < 64)),
            None => v.parse::<u64>().ok(),
        }
        .ok_or_else(|| err(format!("`{v}` is not a number (or 2^k) for `{k}`")))?;
        depth |= k == "depth";
        set(k, value).map_err(err)?;
    }
    if !depth {
        return Err(err(format!("`depth` is required (keys: {list})")));
    }
    Ok(())
}

fn security_from(value: u64) -> std::result::Result<Security, String> {
    u32::try_from(value)
        .ok()
        .and_then(Security::from_bits)
        .ok_or_else(|| format!("security = {value}: use 128, 192 or 256"))
}

fn small<T: TryFrom<u64>>(k: &str, v: u64) -> std::result::Result<T, String> {
    T::try_from(v).map_err(|_| format!("{k} = {v} is too large"))
}

impl FromStr for CkksIntent {
    type Err = Error;

    /// Parses `depth=10,scale_bits=40,slots=2^14,security=128` (also `first_prime_bits`,
    /// `log_n`, `dnum`; `depth` is required, the others default as in
    /// [`CkksParameters::for_depth`]), the form [`CkksIntent`]'s `Display` writes.
    ///
    /// ```
    /// use rhea::params::CkksIntent;
    /// let intent: CkksIntent = "depth=3,scale_bits=45,slots=2^12".parse()?;
    /// assert_eq!(intent.build()?.levels(), 3);
    /// assert_eq!(intent.to_string().parse::<CkksIntent>()?, intent);
    /// # Ok::<(), rhea::Error>(())
    /// ```
    fn from_str(s: &str) -> Result<Self> {
        const KEYS: &[&str] = &[
            "depth",
            "scale_bits",
            "first_prime_bits",
            "slots",
            "log_n",
            "dnum",
            "security",
        ];
        let mut it = CkksParameters::for_depth(0);
        parse_pairs(s, KEYS, |k, v| {
            match k {
                "depth" => it.depth = small(k, v)?,
                "scale_bits" => it.scale_bits = small(k, v)?,
                "first_prime_bits" => it.first_prime_bits = Some(small(k, v)?),
                "slots" => it.slots = Some(small(k, v)?),
                "log_n" => it.log_n = Some(small(k, v)?),
                "dnum" => it.dnum = Some(small(k, v)?),
                "security" => it.security = security_from(v)?,
                other => return Err(format!("unknown key `{other}`")),
            }
            Ok(())
        })?;
        Ok(it)
    }
}

fn advice_text(options: Vec<String>) -> String {
    match options.len() {
        0 => "no single change fits; relax several of depth, precision, slots and security".into(),
        1 => options[0].clone(),
        _ => {
            let (last, rest) = options.split_last().unwrap_or((&options[0], &[]));
            format!("{}, or {last}", rest.join(", "))
        }
    }
}

// ----------------------------------------------------------------------------------- BGV

/// The plaintext modulus of a [`BgvIntent`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlaintextModulus {
    /// The smallest `b`-bit prime `t ≡ 1 (mod 2N)` (batching with `N` slots).
    Bits(u32),
    /// Exactly this `t` (coefficient encoding, or batching when it is a prime `≡ 1 mod 2N`).
    Value(u64),
}

/// BGV parameters by intent (see the [module docs](self) for the derivation); made by
/// [`BgvParameters::for_depth`].
///
/// ```
/// use rhea::params::BgvParameters;
/// let params = BgvParameters::for_depth(4).plaintext_bits(20).slots(1 << 13).build()?;
/// assert_eq!(params.levels(), 4);
/// assert!(params.batching() && params.t() > 1 << 19 && params.t() < 1 << 20);
/// # Ok::<(), rhea::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BgvIntent {
    depth: usize,
    plaintext: PlaintextModulus,
    margin_bits: u32,
    slots: Option<usize>,
    log_n: Option<u32>,
    dnum: Option<usize>,
    security: Security,
}

impl BgvParameters {
    /// Parameters by intent: `depth` multiplications (each followed by a modulus switch), a
    /// 17-bit batching plaintext modulus, 128-bit security and the smallest ring that allows
    /// them, until the builder's methods say otherwise. [`BgvIntent::build`] derives and
    /// validates the set.
    pub fn for_depth(depth: usize) -> BgvIntent {
        BgvIntent {
            depth,
            plaintext: PlaintextModulus::Bits(DEFAULT_PLAINTEXT_BITS),
            margin_bits: 0,
            slots: None,
            log_n: None,
            dnum: None,
            security: Security::Bits128,
        }
    }
}

/// The canonical-norm constant of the noise model (`crate::bgv::noise`).
const NOISE_D: f64 = 6.0;
/// Bits every level budgets for additions (a sum of four terms).
const ADD_BITS: f64 = 2.0;
/// Bits the final result keeps below `q_0 / 2` beyond the level's budget.
const FINAL_MARGIN_BITS: f64 = 3.0;

fn log_add(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    hi + (1.0 + (lo - hi).exp2()).log2()
}

/// `(first, middle)` prime sizes for `q_count` Q primes at `N = 2^log_n` and `log2 t`, by the
/// noise model of `crate::bgv::noise` (ternary secret, error width `sigma`; key switching with
/// `P ≥` every digit), with `margin` more bits of noise allowed at every level.
fn bgv_prime_bits(log_n: u32, log_t: f64, q_count: usize, sigma: f64, margin: f64) -> (u32, u32) {
    let n = (log_n as f64).exp2();
    let var_s: f64 = 2.0 / 3.0;
    let d = NOISE_D;
    // The rounding of a modulus switch, times t: the floor every switch brings the noise to.
    let log_round = (d * (n / 12.0).sqrt() + d * d * n * (var_s / 12.0).sqrt()).log2();
    let floor = log_t + log_round;
    // The bound after a switch (also above a fresh public-key encryption).
    let x = floor + 1.5;
    // One key switching: Σ_j c_j·Q_j/P ≤ |Q| when P covers every digit.
    let ks = log_t
        + log_add(
            (d * d * n * sigma * q_count as f64 / 3f64.sqrt()).log2(),
            log_round,
        );
    let input = x + ADD_BITS + margin;
    let before_switch = log_add(2.0 * input, ks);
    let middle = (before_switch - floor).ceil() as u32;
    let last = log_add(x, ks) + ADD_BITS + margin;
    let first = (last + 1.0 + FINAL_MARGIN_BITS).ceil() as u32;
    (first, middle)
}

/// The smallest `bits`-bit prime `≡ 1 (mod 2N)`.
fn batching_prime(bits: u32, log_n: u32) -> Option<u64> {
    if !(2..=61).contains(&bits) {
        return None;
    }
    let step = 2u64 << log_n;
    let lo = 1u64 << (bits - 1);
    let hi = 1u64 << bits;
    let mut c = (lo - 1).div_ceil(step) * step + 1;
    while c < hi {
        if is_prime(c) {
            return Some(c);
        }
        c += step;
    }
    None
}

impl BgvIntent {
    /// A batching plaintext modulus of `bits` bits: the smallest prime `t ≡ 1 (mod 2N)` in
    /// `[2^(bits-1), 2^bits)` (17 bits by default: 65537 for `N ≤ 2^15`).
    pub fn plaintext_bits(mut self, bits: u32) -> Self {
        self.plaintext = PlaintextModulus::Bits(bits);
        self
    }

    /// Exactly this plaintext modulus (any `t ≥ 2` for coefficient encoding; slots need a prime
    /// `t ≡ 1 (mod 2N)`).
    pub fn plaintext_modulus(mut self, t: u64) -> Self {
        self.plaintext = PlaintextModulus::Value(t);
        self
    }

    /// Allows `bits` more bits of noise at every level (the first prime grows by `bits`, the
    /// others by twice that): room for rotations or long sums between multiplications (4 bits
    /// fit a rotation and an addition per level at small rings). `0..=20`, 0 by default.
    pub fn margin_bits(mut self, bits: u32) -> Self {
        self.margin_bits = bits;
        self
    }

    /// At least `slots` slots (a power of two; BGV has `N` slots): `N ≥ slots`, and `t` must
    /// allow batching.
    pub fn slots(mut self, slots: usize) -> Self {
        self.slots = Some(slots);
        self
    }

    /// Exactly this ring degree `N = 2^log_n` (`10..=17`) instead of the smallest that fits.
    pub fn log_n(mut self, log_n: u32) -> Self {
        self.log_n = Some(log_n);
        self
    }

    /// Exactly `dnum` key-switching digits instead of the fewest that fit.
    pub fn dnum(mut self, dnum: usize) -> Self {
        self.dnum = Some(dnum);
        self
    }

    /// The security level to reach (128 bits by default).
    pub fn security(mut self, security: Security) -> Self {
        self.security = security;
        self
    }

    fn check_fields(&self) -> std::result::Result<(), IntentError> {
        if self.depth > 200 {
            return Err(IntentError::OutOfRange {
                field: "depth",
                value: self.depth as u64,
                allowed: "0..=200".into(),
            });
        }
        if self.margin_bits > 20 {
            return Err(IntentError::OutOfRange {
                field: "margin_bits",
                value: self.margin_bits as u64,
                allowed: "0..=20".into(),
            });
        }
        match self.plaintext {
            PlaintextModulus::Bits(b) if !(2..=MAX_PRIME_BITS).contains(&b) => {
                return Err(IntentError::OutOfRange {
                    field: "plaintext_bits",
                    value: b as u64,
                    allowed: format!("2..={MAX_PRIME_BITS}"),
                })
            }
            PlaintextModulus::Value(t) if !(2..1 << MAX_PRIME_BITS).contains(&t) => {
                return Err(IntentError::OutOfRange {
                    field: "t",
                    value: t,
                    allowed: format!("2..2^{MAX_PRIME_BITS}"),
                })
            }
            _ => {}
        }
        if let Some(d) = self.dnum {
            if d == 0 || d > self.depth + 1 {
                return Err(IntentError::OutOfRange {
                    field: "dnum",
                    value: d as u64,
                    allowed: format!("1..={} (the number of Q primes)", self.depth + 1),
                });
            }
        }
        Ok(())
    }

    /// `t` at `N = 2^log_n`.
    fn t_at(&self, log_n: u32) -> std::result::Result<u64, IntentError> {
        match self.plaintext {
            PlaintextModulus::Bits(bits) => batching_prime(bits, log_n).ok_or_else(|| {
                let advice = match (bits + 1..=MAX_PRIME_BITS)
                    .find_map(|b| batching_prime(b, log_n).map(|t| (b, t)))
                {
                    Some((b, t)) => format!(
                        "ask for at least {b} plaintext bits (t = {t}), fewer slots, or an \
                         explicit t without slots (coefficient encoding)"
                    ),
                    None => "ask for fewer slots".into(),
                };
                IntentError::NoBatchingModulus {
                    bits,
                    log_n,
                    advice,
                }
            }),
            PlaintextModulus::Value(t) => {
                if self.slots.is_some() && !is_ntt_friendly(t, 1 << log_n) {
                    return Err(IntentError::NotBatching { t, log_n });
                }
                Ok(t)
            }
        }
    }

    /// The `Q` sizes for `depth` at `N = 2^log_n` and `t`.
    fn log_q(
        &self,
        depth: usize,
        log_n: u32,
        t: u64,
    ) -> std::result::Result<Vec<u32>, IntentError> {
        let log_t = (t as f64).log2();
        let (first, middle) = bgv_prime_bits(
            log_n,
            log_t,
            depth + 1,
            crate::params::default_sigma(),
            self.margin_bits as f64,
        );
        let widest = if depth > 0 { first.max(middle) } else { first };
        if widest > MAX_PRIME_BITS {
            return Err(IntentError::PlaintextTooLarge {
                t_bits: log_t,
                prime_bits: widest,
                log_n,
            });
        }
        let mut q = vec![first];
        q.resize(depth + 1, middle);
        Ok(q)
    }

    fn chain(&self) -> std::result::Result<(Chain, u64), IntentError> {
        self.check_fields()?;
        let range = degrees(self.log_n, self.slots, 0)?;
        let mut needed = 0;
        let mut last_err = None;
        let mut top = *range.start();
        for log_n in range.clone() {
            // No batching prime at this degree: none at larger ones either.
            let t = match self.t_at(log_n) {
                Ok(t) => t,
                Err(e) => {
                    if needed == 0 {
                        return Err(e);
                    }
                    break;
                }
            };
            top = log_n;
            let log_q = match self.log_q(self.depth, log_n, t) {
                Ok(q) => q,
                Err(e) => {
                    last_err = Some(e);
                    continue;
                }
            };
            match fit_digits(&log_q, self.dnum, bound(self.security, log_n)) {
                Ok((log_p, dnum)) => {
                    let chain = Chain {
                        log_n,
                        log_q,
                        log_p,
                        dnum,
                    };
                    return Ok((chain, t));
                }
                Err(least) => needed = least,
            }
        }
        if needed == 0 {
            if let Some(e) = last_err {
                return Err(e);
            }
        }
        let fits = |depth: usize, log_n: u32, s: Security| {
            self.t_at(log_n)
                .and_then(|t| self.log_q(depth, log_n, t))
                .is_ok_and(|q| fit_digits(&q, self.dnum, bound(s, log_n)).is_ok())
        };
        let mut advice = Vec::new();
        if let Some(d) = (0..self.depth).rev().find(|&d| fits(d, top, self.security)) {
            advice.push(format!("lower the depth to {d}"));
        }
        if let PlaintextModulus::Bits(bits) = self.plaintext {
            let smaller = (2..bits).rev().find(|&b| {
                let it = self.clone().plaintext_bits(b);
                it.t_at(top)
                    .and_then(|t| it.log_q(self.depth, top, t))
                    .is_ok_and(|q| fit_digits(&q, self.dnum, bound(self.security, top)).is_ok())
            });
            if let Some(b) = smaller {
                advice.push(format!("the plaintext modulus to {b} bits"));
            }
        }
        if let Some(l) = (top + 1..=MAX_LOG_N).find(|&l| fits(self.depth, l, self.security)) {
            advice.push(format!("allow N = 2^{l}"));
        }
        if let PlaintextModulus::Bits(bits) = self.plaintext {
            // The ring stopped growing for want of a batching prime of this size.
            if top < *range.end() && self.t_at(top + 1).is_err() {
                if let Some(b) =
                    (bits + 1..=MAX_PRIME_BITS).find(|&b| batching_prime(b, top + 1).is_some())
                {
                    advice.push(format!(
                        "a plaintext modulus of at least {b} bits (batching at N = 2^{})",
                        top + 1
                    ));
                }
            }
        }
        if let Some(s) = Security::ALL
            .into_iter()
            .filter(|s| *s < self.security)
            .find(|&s| fits(self.depth, top, s))
        {
            advice.push(format!("ask for {s} security"));
        }
        if self.dnum.is_some() {
            advice.push("let the number of digits (dnum) be chosen".into());
        }
        let t = match self.plaintext {
            PlaintextModulus::Bits(b) => format!("a {b}-bit t"),
            PlaintextModulus::Value(t) => format!("t = {t}"),
        };
        Err(IntentError::ChainTooLarge {
            intent: format!("BGV depth {} with {t}", self.depth),
            needed_log_qp: needed,
            log_n: top,
            max_log_qp: bound(self.security, top),
            security: self.security,
            advice: advice_text(advice),
        })
    }

    /// The derived literal (prime sizes, explicit `t`, `dnum`, `N`), before prime generation and
    /// validation.
    pub fn literal(&self) -> Result<BgvParametersLiteral> {
        let (c, t) = self.chain()?;
        let mut lit = BgvParametersLiteral::he_booster_n13_logqp218();
        lit.log_n = c.log_n;
        lit.log_q = c.log_q;
        lit.log_p = c.log_p;
        lit.t = t;
        lit.log_t = 0;
        lit.dnum = c.dnum;
        lit.secret = SecretDistribution::Ternary;
        Ok(lit)
    }

    /// Derives, generates the primes and validates (128-bit check included) the parameters.
    ///
    /// Errors: [`Error::ParameterIntent`] when no set fits the intent (what to relax is in the
    /// message), and the errors of [`BgvParameters::new`].
    pub fn build(&self) -> Result<BgvParameters> {
        let lit = self.literal()?;
        lit.build().map_err(|e| primes_error(e, lit.log_n))
    }
}

impl fmt::Display for BgvIntent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "depth={}", self.depth)?;
        match self.plaintext {
            PlaintextModulus::Bits(b) => write!(f, ",plaintext_bits={b}")?,
            PlaintextModulus::Value(t) => write!(f, ",t={t}")?,
        }
        if self.margin_bits > 0 {
            write!(f, ",margin_bits={}", self.margin_bits)?;
        }
        if let Some(s) = self.slots {
            write!(f, ",slots={s}")?;
        }
        if let Some(l) = self.log_n {
            write!(f, ",log_n={l}")?;
        }
        if let Some(d) = self.dnum {
            write!(f, ",dnum={d}")?;
        }
        write!(f, ",security={}", self.security.bits())
    }
}

impl FromStr for BgvIntent {
    type Err = Error;

    /// Parses `depth=4,plaintext_bits=20,slots=2^13,security=128` (or `t=65537` instead of
    /// `plaintext_bits`; also `margin_bits`, `log_n`, `dnum`; `depth` is required), the form
    /// [`BgvIntent`]'s `Display` writes.
    ///
    /// ```
    /// use rhea::params::BgvIntent;
    /// let intent: BgvIntent = "depth=2,t=65537,slots=2^12".parse()?;
    /// let params = intent.build()?;
    /// assert_eq!((params.levels(), params.t()), (2, 65537));
    /// # Ok::<(), rhea::Error>(())
    /// ```
    fn from_str(s: &str) -> Result<Self> {
        const KEYS: &[&str] = &[
            "depth",
            "plaintext_bits",
            "t",
            "margin_bits",
            "slots",
            "log_n",
            "dnum",
            "security",
        ];
        let mut it = BgvParameters::for_depth(0);
        parse_pairs(s, KEYS, |k, v| {
            match k {
                "depth" => it.depth = small(k, v)?,
                "plaintext_bits" | "t_bits" => it.plaintext = PlaintextModulus::Bits(small(k, v)?),
                "t" => it.plaintext = PlaintextModulus::Value(v),
                "margin_bits" => it.margin_bits = small(k, v)?,
                "slots" => it.slots = Some(small(k, v)?),
                "log_n" => it.log_n = Some(small(k, v)?),
                "dnum" => it.dnum = Some(small(k, v)?),
                "security" => it.security = security_from(v)?,
                other => return Err(format!("unknown key `{other}`")),
            }
            Ok(())
        })?;
        Ok(it)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bgv::noise::NoiseModel;

    #[test]
    fn p_covers_the_widest_digit_with_primes_of_at_most_60_bits() {
        assert_eq!(p_bits_for(&[60, 40, 40], 3), vec![60]);
        assert_eq!(p_bits_for(&[60, 40, 40], 1), vec![47, 47, 47]);
        assert_eq!(p_bits_for(&[60, 40, 40], 2), vec![50, 50]);
        let mut q = vec![60];
        q.extend([40; 24]);
        // Digits of 13 and 12 primes: 540 bits, 9 × 60 (the deep preset with two digits).
        assert_eq!(p_bits_for(&q, 2), vec![60; 9]);
    }

    #[test]
    fn batching_primes_have_the_asked_bits() {
        assert_eq!(batching_prime(17, 13), Some(65537));
        assert_eq!(batching_prime(17, 15), Some(65537));
        assert_eq!(batching_prime(17, 16), None); // 65537 is not ≡ 1 mod 2^17
        for (bits, log_n) in [(20, 13), (30, 16), (40, 17), (21, 16)] {
            let t = batching_prime(bits, log_n).unwrap();
            assert!(t >= 1 << (bits - 1) && t < 1 << bits);
            assert!(is_ntt_friendly(t, 1 << log_n));
        }
    }

    /// The closed-form sizing against the evaluator's own noise model: from a public-key
    /// encryption at the top level, a sum of four and a squaring (relinearisation, switch) at
    /// every level, then a rotation and a sum of four, and the result below `q_0 / 2` by the
    /// margin.
    #[test]
    fn bgv_sizing_agrees_with_the_noise_model() {
        for (depth, bits, log_n) in [(1, 17, 12), (3, 17, 13), (5, 20, 14), (8, 30, 15)] {
            let it = BgvParameters::for_depth(depth)
                .plaintext_bits(bits)
                .slots(1 << log_n);
            let params = it.build().unwrap();
            let model = NoiseModel::new(&params);
            let n = params.n() as f64;
            let t = params.t() as f64;
            let msg = (6.0 * (n / 12.0).sqrt() * t).log2();
            let mut b = model.fresh_pk(msg);
            for level in (1..=depth).rev() {
                // A sum of four, then the squaring with relinearisation.
                let input = b + 2.0;
                let prod = log_add(2.0 * input, model.key_switch(level));
                assert!(prod < model.log_modulus(level) - 1.0, "level {level}");
                b = model.mod_switch(prod, level, 2);
            }
            let last = log_add(b, model.key_switch(0)) + 2.0;
            assert!(
                last < model.log_modulus(0) - 1.0 - 2.0,
                "depth {depth}: final {last} vs q_0 {}",
                model.log_modulus(0)
            );
        }
    }
}
