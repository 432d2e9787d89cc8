//! Bootstrappable parameter sets: a prime chain laid out for [`Bootstrapper`]'s pipeline and the
//! [`BootstrapConfig`] that consumes it.
//!
//! A bootstrappable chain has, from the bottom: `q_0`, SlotToCoeff's primes (the pipeline's
//! first step runs at the bottom of the chain, where it is cheap), the user's levels (primes of
//! `Δ`'s size: [`CkksParameters::default_level`](crate::params::CkksParameters::default_level)
//! is the top one, where fresh encodings and bootstrapped ciphertexts live), then the primes
//! the rest of the pipeline divides by, top down: CoeffToSlot's and EvalMod's. Their sizes differ
//! from `Δ`'s on purpose — it is how the parameters know which levels are the user's.
//!
//! [`Bootstrapper`]: super::Bootstrapper

use super::BootstrapConfig;
use crate::params::CkksParametersLiteral;

/// The bit size of the SlotToCoeff primes, at the bottom of the chain: near `Δ = 2^40` (the
/// transform's diagonals are encoded at the prime it divides by, so the scale stays `Δ`), but
/// not `Δ`'s size, which marks them as bootstrapping levels.
const SLOT_TO_COEFF_BITS: u32 = 42;
/// EvalMod's primes: the cosine's powers live at about these scales; the larger, the smaller the
/// rescaling error against a message about `2^-7` of `q_0` (58 bits cost 2 bits of precision at
/// N = 2^16).
const EVAL_MOD_BITS: u32 = 60;
/// CoeffToSlot's primes (its diagonals' precision).
const COEFF_TO_SLOT_BITS: u32 = 56;

/// A named bootstrappable parameter set.
#[derive(Clone, Debug)]
pub struct BootstrapPreset {
    /// The name (`rhea bench boot --preset NAME`).
    pub name: &'static str,
    /// What it is for.
    pub purpose: &'static str,
    /// The parameters.
    pub params: CkksParametersLiteral,
    /// The pipeline that consumes the chain's top levels.
    pub config: BootstrapConfig,
}

impl BootstrapPreset {
    /// Every bootstrappable preset, the 128-bit ones first.
    ///
    /// ```
    /// use rhea::ckks::bootstrap::BootstrapPreset;
    /// let p = BootstrapPreset::by_name("boot_n16_levels13").unwrap();
    /// let params = p.params.build()?;
    /// assert!(params.security().meets_128_bits);
    /// // A bootstrap lands on level 16 and takes ciphertexts down to level 3 (SlotToCoeff's
    /// // three levels at the bottom): 13 levels of Δ = 2^40 for the user.
    /// assert_eq!(params.default_level(), 16);
    /// assert_eq!(params.max_level() - p.config.top_depth(), 16);
    /// assert_eq!(p.config.bottom_depth(), 3);
    /// # Ok::<(), rhea::Error>(())
    /// ```
    pub fn all() -> Vec<Self> {
        vec![
            Self::n16_levels13(),
            Self::n17_levels24(),
            Self::test_n12_insecure(),
            Self::test_n14_insecure(),
        ]
    }

    /// The preset named `name`, or `None`.
    pub fn by_name(name: &str) -> Option<Self> {
        Self::all().into_iter().find(|p| p.name == name)
    }

    /// `N = 2^16`, full slots (2^15), 128-bit: `q_0` 60 bits, SlotToCoeff 3 × 42, 13 user levels
    /// of 40 bits (`Δ = 2^40`), EvalMod 8 × 60, CoeffToSlot 3 × 56 bits; `P` 6 × 61
    /// bits, 5 key-switching digits (each at most 6 primes, ≤ 360 bits); log QP ≈ 1720 ≤ 1747.
    /// The pipeline: [`BootstrapConfig::full_slots_of`] (CoeffToSlot 3, EvalMod 8, SlotToCoeff 3
    /// levels).
    pub fn n16_levels13() -> Self {
        let config = BootstrapConfig::full_slots_of(16);
        Self {
            name: "boot_n16_levels13",
            purpose: "bootstrapping at N = 2^16, full slots, 13 levels of Δ = 2^40 left (128-bit)",
            params: chain(&config, 16, 13, vec![61; 6], 5),
            config,
        }
    }

    /// `N = 2^17`, full slots (2^16), 128-bit: `q_0` 60 bits, 24 user levels of 40 bits, the
    /// same bootstrapping primes as [`BootstrapPreset::n16_levels13`]; `P` 10 × 61 bits, 4
    /// digits (each at most 10 primes, ≤ 600 bits); log QP ≈ 2404 ≤ 3523.
    pub fn n17_levels24() -> Self {
        // The default message ratio: 20.5 bits min at 2^12, 20.2 at 2^11, 20.0 at 2^13 (H100).
        let config = BootstrapConfig::full_slots_of(17);
        Self {
            name: "boot_n17_levels24",
            purpose: "bootstrapping at N = 2^17, full slots, 24 levels of Δ = 2^40 left (128-bit)",
            params: chain(&config, 17, 24, vec![61; 10], 4),
            config,
        }
    }

    /// **INSECURE** (N = 2^12): the 128-bit chain's layout with 2 user levels, for tests and
    /// quick CPU runs.
    pub fn test_n12_insecure() -> Self {
        let config = BootstrapConfig::full_slots_of(12);
        Self {
            name: "boot_test_n12_insecure",
            purpose: "INSECURE: the bootstrapping pipeline at N = 2^12 (tests, CPU)",
            params: chain(&config, 12, 2, vec![61; 5], 4).insecure_allow_below_128_bits(),
            config,
        }
    }

    /// **INSECURE** (N = 2^14): the 128-bit chain's layout with 4 user levels, for CPU
    /// comparisons at a size other libraries also bootstrap.
    pub fn test_n14_insecure() -> Self {
        let config = BootstrapConfig::full_slots_of(14);
        Self {
            name: "boot_test_n14_insecure",
            purpose: "INSECURE: bootstrapping at N = 2^14 (CPU comparisons)",
            params: chain(&config, 14, 4, vec![61; 5], 4).insecure_allow_below_128_bits(),
            config,
        }
    }
}

/// The bootstrappable chain at `N = 2^log_n` with `user_levels` levels of 40 bits for the user.
fn chain(
    config: &BootstrapConfig,
    log_n: u32,
    user_levels: usize,
    log_p: Vec<u32>,
    dnum: usize,
) -> CkksParametersLiteral {
    let mut log_q = vec![60];
    log_q.extend(std::iter::repeat(SLOT_TO_COEFF_BITS).take(config.slot_to_coeff_levels));
    log_q.extend(std::iter::repeat(40).take(user_levels));
    let eval_mod_levels =
        config.depth() - config.coeff_to_slot_levels - config.slot_to_coeff_levels;
    log_q.extend(std::iter::repeat(EVAL_MOD_BITS).take(eval_mod_levels));
    log_q.extend(std::iter::repeat(COEFF_TO_SLOT_BITS).take(config.coeff_to_slot_levels));
    CkksParametersLiteral {
        log_n,
        log_q,
        log_p,
        q: Vec::new(),
        p: Vec::new(),
        log_default_scale: 40,
        dnum,
        ..CkksParametersLiteral::n13_logqp200_levels2()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_leave_their_user_levels_and_validate() {
        for preset in BootstrapPreset::all() {
            let params = preset.params.build().unwrap();
            let insecure = preset.name.contains("insecure");
            assert_eq!(
                params.security().meets_128_bits,
                !insecure,
                "{}",
                preset.name
            );
            assert_eq!(
                params.max_level() - preset.config.top_depth(),
                params.default_level(),
                "{}: a bootstrap must land on the user's top level",
                preset.name
            );
            // SlotToCoeff's primes sit right above q_0, below the user's.
            let bottom = preset.config.bottom_depth();
            let at_bottom = params.scale_at_level(bottom).unwrap().log2();
            assert!(
                (at_bottom - 40.0).abs() < 0.1,
                "{}: 2^{at_bottom}",
                preset.name
            );
            for l in 1..=bottom {
                assert_ne!(params.q_primes()[l].ilog2() + 1, 40, "{}", preset.name);
            }
            assert_eq!(
                params.scale_at_level(params.default_level()),
                Some(params.default_scale())
            );
        }
    }
}
