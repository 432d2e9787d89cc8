//! The 128-bit security check.
//!
//! Source of the bounds: the Homomorphic Encryption Standard (Albrecht et al., 2018,
//! homomorphicencryption.org), Table 1, uniform ternary secret, classical 128-bit security, for
//! `N = 2^10 … 2^15`; the `N = 2^16` and `2^17` rows (which the standard lacks) are OpenFHE's
//! estimator-derived extension, `HEStd_128_classic` for `HEStd_ternary` in
//! `openfhe-development/src/core/lib/lattice/stdlatticeparms.cpp` (1747 and 3523 bits; HEIR cites
//! the same values from that file). Those are a little below the naive doubling of the `2^15` row
//! (1762) that some tables use, so they are the stricter choice.
//!
//! The 192- and 256-bit rows ([`HE_STANDARD_192_CLASSIC_TERNARY`],
//! [`HE_STANDARD_256_CLASSIC_TERNARY`]) come from the same two sources (the standard's Table 1 up
//! to `2^15`, OpenFHE's `HEStd_192_classic`/`HEStd_256_classic` ternary rows for `2^16` and
//! `2^17`). Validation ([`SecurityReport::check`]) enforces 128 bits; the higher levels are what
//! parameters by intent ([`crate::params::CkksIntent`], [`crate::params::BgvIntent`]) can aim
//! for, and [`security_level`] reports the highest level a set meets.
//!
//! Sparse secrets (fixed Hamming weight) are weaker than uniform ternary ones and the table does
//! not cover them: as the secret of a parameter set they are accepted only with the explicit
//! insecure opt-in until a sparse table (from the lattice estimator) is added. The one sparse
//! secret the library draws itself, bootstrapping's ephemeral secret, is the RLWE secret of a
//! single key kept over the small modulus `q_0·p_0`; [`sparse_secret_is_128_bit`] bounds that
//! case (a citation plus a sanity bound, documented there).

use std::fmt;

use serde::{Deserialize, Serialize};

/// `(log2 N, largest log2(Q·P))` for 128-bit classical security with a uniform ternary secret.
pub const HE_STANDARD_128_CLASSIC_TERNARY: [(u32, u32); 8] = [
    (10, 27),
    (11, 54),
    (12, 109),
    (13, 218),
    (14, 438),
    (15, 881),
    (16, 1747),
    (17, 3523),
];

/// `(log2 N, largest log2(Q·P))` for 192-bit classical security with a uniform ternary secret.
pub const HE_STANDARD_192_CLASSIC_TERNARY: [(u32, u32); 8] = [
    (10, 19),
    (11, 37),
    (12, 75),
    (13, 152),
    (14, 305),
    (15, 611),
    (16, 1199),
    (17, 2411),
];

/// `(log2 N, largest log2(Q·P))` for 256-bit classical security with a uniform ternary secret.
pub const HE_STANDARD_256_CLASSIC_TERNARY: [(u32, u32); 8] = [
    (10, 14),
    (11, 29),
    (12, 58),
    (13, 118),
    (14, 237),
    (15, 476),
    (16, 929),
    (17, 1866),
];

/// A classical security level of the HE standard tables (uniform ternary secret).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub enum Security {
    /// 128-bit classical security (the default, and what validation enforces).
    #[default]
    Bits128,
    /// 192-bit classical security.
    Bits192,
    /// 256-bit classical security.
    Bits256,
}

impl Security {
    /// The levels, weakest first.
    pub const ALL: [Security; 3] = [Security::Bits128, Security::Bits192, Security::Bits256];

    /// The level in bits (128, 192 or 256).
    pub fn bits(self) -> u32 {
        match self {
            Security::Bits128 => 128,
            Security::Bits192 => 192,
            Security::Bits256 => 256,
        }
    }

    /// The level of `bits` (128, 192 or 256), or `None`.
    pub fn from_bits(bits: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.bits() == bits)
    }

    /// The table of this level: `(log2 N, largest log2(Q·P))`, `N = 2^10 ..= 2^17`.
    pub fn table(self) -> &'static [(u32, u32); 8] {
        match self {
            Security::Bits128 => &HE_STANDARD_128_CLASSIC_TERNARY,
            Security::Bits192 => &HE_STANDARD_192_CLASSIC_TERNARY,
            Security::Bits256 => &HE_STANDARD_256_CLASSIC_TERNARY,
        }
    }

    /// The largest `log2(Q·P)` at this level for `N = 2^log_n` (uniform ternary secret), or
    /// `None` outside the table.
    ///
    /// ```
    /// use rhea::params::Security;
    /// assert_eq!(Security::Bits128.max_log_qp(16), Some(1747));
    /// assert_eq!(Security::Bits256.max_log_qp(13), Some(118));
    /// assert_eq!(Security::Bits192.max_log_qp(18), None);
    /// ```
    pub fn max_log_qp(self, log_n: u32) -> Option<u32> {
        self.table()
            .iter()
            .find(|(l, _)| *l == log_n)
            .map(|(_, b)| *b)
    }
}

impl fmt::Display for Security {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-bit", self.bits())
    }
}

/// The highest level of the tables that `N = 2^log_n`, `log2(Q·P) = log_qp` meets with a
/// uniform ternary secret, or `None` below 128 bits or outside the tables. (Sparse secrets are
/// not covered: the caller passes only ternary sets here.)
pub fn security_level(log_n: u32, log_qp: f64) -> Option<Security> {
    Security::ALL
        .into_iter()
        .rev()
        .find(|s| s.max_log_qp(log_n).is_some_and(|m| log_qp <= m as f64))
}

/// The largest `log2(Q·P)` with 128-bit classical security at `N = 2^log_n` (uniform ternary
/// secret), or `None` outside the table.
pub fn max_log_qp_128(log_n: u32) -> Option<u32> {
    HE_STANDARD_128_CLASSIC_TERNARY
        .iter()
        .find(|(l, _)| *l == log_n)
        .map(|(_, b)| *b)
}

/// The smallest Hamming weight [`sparse_secret_max_log_q_128`] covers (bootstrapping's usual
/// ephemeral weight).
pub const SPARSE_SECRET_MIN_WEIGHT: usize = 32;

/// The largest `log2 q` this library accepts as 128-bit secure for an RLWE sample under a
/// sparse ternary secret of Hamming weight `weight` at `N = 2^log_n`: the uniform-ternary
/// 128-bit bound of the ring of degree `N/4` ([`max_log_qp_128`]`(log_n − 2)`), for
/// `weight ≥ 32` and `N = 2^14 ..= 2^17`; `None` otherwise (no claim is made there).
///
/// | `N`  | `2^14` | `2^15` | `2^16` | `2^17` |
/// |------|--------|--------|--------|--------|
/// | bound (bits) | 109 | 218 | 438 | 881 |
///
/// What the bound rests on (a citation plus a sanity bound, **not** a run of the lattice
/// estimator):
///
/// 1. **Citation.** Bossuat, Troncoso-Pastoriza and Hubaux, "Bootstrapping for approximate
///    homomorphic encryption with negligible failure-probability by using sparse-secret
///    encapsulation" (ACNS 2022, ePrint 2022/024), and Lattigo's default bootstrapping
///    parameters built on it (`N16QP1546H192H32`, `N16QP1547H192H32`, `N16QP1553H192H32`,
///    `N15QP768H192H32`: `EphemeralSecretWeight: 32`, the dense→sparse key generated over the
///    parameters `Q[:1], P[:1]` in `genEncapsulationEvaluationKeysNew`) put the weight-32
///    secret in one RLWE sample modulo `q_0·p_0`, about 120 bits at `N = 2^16` (and `2^15`),
///    and state 128-bit security for those sets.
/// 2. **Sanity bound.** A hybrid attacker who guesses that all `h ≥ 32` non-zero coefficients
///    lie in a chosen `1/2^j` of the positions (probability about `2^{−h·j} ≤ 2^{−32 j}`) and
///    drops the other coordinates is left with an instance of dimension `N/2^j` at the same
///    modulus. Requiring `log q` to be at most the HE standard's uniform-ternary 128-bit bound
///    of dimension `N/4` makes that reduced instance no easier than a 128-bit standard one for
///    `j ≤ 2` (the bound grows with the dimension); at `N = 2^16`, `j = 2` leaves dimension
///    `2^14` with bound 438 bits against the ≈ 121 of `q_0·p_0`, and `j = 1` (dimension `2^15`,
///    881 bits) more so. It does not analyse guesses with `j ≥ 3` combined with lattice
///    reduction, nor the reduced instance's own sparsity: it rules out the crude versions of
///    the attack, and the 128-bit claim itself is the citation's.
///
/// Below weight 32 the guess costs too little for the argument, and below `N = 2^14` the
/// citation has no parameter set (and the `N/4` bound, 54 bits at `2^13`, is below any
/// `q_0·p_0`): both give `None`.
///
/// ```
/// use rhea::params::sparse_secret_max_log_q_128;
/// assert_eq!(sparse_secret_max_log_q_128(16, 32), Some(438));
/// assert_eq!(sparse_secret_max_log_q_128(16, 16), None);
/// assert_eq!(sparse_secret_max_log_q_128(13, 32), None);
/// ```
pub fn sparse_secret_max_log_q_128(log_n: u32, weight: usize) -> Option<u32> {
    if weight < SPARSE_SECRET_MIN_WEIGHT || !(14..=17).contains(&log_n) {
        return None;
    }
    max_log_qp_128(log_n - 2)
}

/// Whether an RLWE sample modulo `q` (`log2 q = log_q`) under a sparse ternary secret of
/// Hamming weight `weight` at `N = 2^log_n` is accepted as 128-bit secure: `log_q` at most
/// [`sparse_secret_max_log_q_128`] (see there for the source and the argument). Bootstrapping's
/// encapsulation keys ([`crate::ckks::bootstrap::EncapsulationKeys`]) check their modulus
/// `q_0·p_0` with it.
///
/// ```
/// use rhea::params::sparse_secret_is_128_bit;
/// assert!(sparse_secret_is_128_bit(16, 32, 121.0));
/// assert!(!sparse_secret_is_128_bit(16, 32, 500.0));
/// assert!(!sparse_secret_is_128_bit(13, 32, 100.0));
/// ```
pub fn sparse_secret_is_128_bit(log_n: u32, weight: usize, log_q: f64) -> bool {
    sparse_secret_max_log_q_128(log_n, weight).is_some_and(|m| log_q <= m as f64)
}

/// The outcome of the security check, kept on the parameters and printed by their `Display`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SecurityReport {
    /// `log2(Q·P)` of the parameters.
    pub log_qp: f64,
    /// The table's bound at this `N` (`None` when `N` is outside the table).
    pub max_log_qp: Option<u32>,
    /// Whether the parameters meet 128-bit security by the table (uniform ternary secret only).
    pub meets_128_bits: bool,
    /// Whether the caller opted in to parameters below 128 bits.
    pub insecure_opt_in: bool,
    /// Why the check failed (empty when it passed).
    pub reason: String,
}

impl SecurityReport {
    /// Runs the check for `N = 2^log_n`, `log2(Q·P) = log_qp`, and the secret kind.
    pub fn check(log_n: u32, log_qp: f64, sparse_secret: bool, insecure_opt_in: bool) -> Self {
        let max = max_log_qp_128(log_n);
        let reason = match max {
            None => format!(
                "N = 2^{log_n} is outside the HE standard table (2^10 ..= 2^17) at 128 bits"
            ),
            Some(_) if sparse_secret => "a sparse (fixed Hamming weight) secret is not covered \
                                         by the uniform-ternary table"
                .to_string(),
            Some(m) if log_qp > m as f64 => format!(
                "log2(Q·P) = {log_qp:.1} exceeds {m}, the 128-bit bound at N = 2^{log_n} \
                 (HE standard, uniform ternary secret, classical)"
            ),
            Some(_) => String::new(),
        };
        Self {
            log_qp,
            max_log_qp: max,
            meets_128_bits: reason.is_empty(),
            insecure_opt_in,
            reason,
        }
    }
}

impl fmt::Display for SecurityReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.meets_128_bits, self.max_log_qp) {
            (true, Some(m)) => write!(
                f,
                "128-bit (HE standard, uniform ternary, classical: log QP {:.1} ≤ {m})",
                self.log_qp
            ),
            _ => write!(
                f,
                "INSECURE, below 128 bits, explicitly allowed by the caller ({})",
                self.reason
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_bounds() {
        assert_eq!(max_log_qp_128(13), Some(218));
        assert_eq!(max_log_qp_128(16), Some(1747));
        assert_eq!(max_log_qp_128(9), None);
        assert!(SecurityReport::check(13, 200.0, false, false).meets_128_bits);
        let r = SecurityReport::check(13, 219.0, false, false);
        assert!(!r.meets_128_bits && r.reason.contains("218"));
        assert!(!SecurityReport::check(16, 1000.0, true, true).meets_128_bits);
        assert!(!SecurityReport::check(5, 10.0, false, true).meets_128_bits);
    }

    #[test]
    fn higher_levels_are_stricter_and_reported() {
        for log_n in 10..=17 {
            let [a, b, c] = Security::ALL.map(|s| s.max_log_qp(log_n).unwrap());
            assert!(a > b && b > c, "2^{log_n}: {a} {b} {c}");
        }
        assert_eq!(max_log_qp_128(15), Security::Bits128.max_log_qp(15));
        assert_eq!(security_level(13, 200.0), Some(Security::Bits128));
        assert_eq!(security_level(13, 152.0), Some(Security::Bits192));
        assert_eq!(security_level(13, 118.0), Some(Security::Bits256));
        assert_eq!(security_level(13, 218.5), None);
        assert_eq!(security_level(9, 10.0), None);
        assert_eq!(Security::from_bits(192), Some(Security::Bits192));
        assert_eq!(Security::from_bits(100), None);
        assert_eq!(Security::Bits256.to_string(), "256-bit");
    }

    #[test]
    fn sparse_secret_bound_is_the_ternary_bound_of_a_quarter_ring() {
        // The table: N/4's uniform-ternary bound, from 2^14 to 2^17 only.
        let bounds: Vec<_> = (12..=18)
            .map(|l| sparse_secret_max_log_q_128(l, 32))
            .collect();
        assert_eq!(
            bounds,
            [None, None, Some(109), Some(218), Some(438), Some(881), None]
        );
        // Lattigo's q_0·p_0 (≈ 121 bits) at N = 2^16 and 2^15, not at 2^14.
        assert!(sparse_secret_is_128_bit(16, 32, 121.0));
        assert!(sparse_secret_is_128_bit(15, 32, 121.0));
        assert!(!sparse_secret_is_128_bit(14, 32, 121.0));
        // The boundary is inclusive: 438 passes, 438.1 fails, and so does a q_0·P of 500 bits.
        assert!(sparse_secret_is_128_bit(16, 32, 438.0));
        assert!(!sparse_secret_is_128_bit(16, 32, 438.1));
        assert!(!sparse_secret_is_128_bit(16, 32, 500.0));
        // Weights below 32 and small rings are never accepted; larger weights are.
        assert!(!sparse_secret_is_128_bit(16, 31, 100.0));
        assert!(sparse_secret_is_128_bit(16, 192, 121.0));
        assert!(!sparse_secret_is_128_bit(13, 32, 50.0));
        assert!(!sparse_secret_is_128_bit(18, 32, 121.0));
    }
}
