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

/// The bit sizes of a bootstrappable chain's primes besides the user's (40 bits, `Δ`).
#[derive(Clone, Copy, Debug)]
struct PipelineBits {
    /// SlotToCoeff's, at the bottom of the chain: its diagonals are encoded at the prime it
    /// divides by, so the scale stays the input's; not `Δ`'s size, which marks them as
    /// bootstrapping levels.
    slot_to_coeff: u32,
    /// EvalMod's: the cosine's powers live at about these scales; the larger, the smaller the
    /// rescaling error against the message (58 bits instead of 60 cost 2 bits of precision at
    /// N = 2^16 with SlotToCoeff last).
    eval_mod: u32,
    /// CoeffToSlot's (its diagonals' precision: at N = 2^16 with 7 special primes, 48 / 50 /
    /// 53-bit primes gave 19.1 / 20.9 / 21.1 bits min, H100).
    coeff_to_slot: u32,
}

/// The sizes of the chains with room to spare under the 128-bit bound.
const ROOMY: PipelineBits = PipelineBits {
    slot_to_coeff: 42,
    eval_mod: 60,
    coeff_to_slot: 56,
};

/// N = 2^16's: 7 special primes (4 key-switching digits instead of 5, the ModUps' NTTs and the
/// keys' bytes about 18 % fewer) fit the 1747-bit bound only if the chain gives up 61 bits:
/// SlotToCoeff's primes (at the bottom, where its diagonals need no more) and a few bits of
/// EvalMod's and CoeffToSlot's. Measured on the H100 against [`ROOMY`] with 6 special primes
/// and 5 digits: 28.1 → 26.3 ms, 21.2 / 24.0 → 21.1 / 23.8 bits, keys 8.20 → 6.75 GB.
const N16: PipelineBits = PipelineBits {
    slot_to_coeff: 36,
    eval_mod: 59,
    coeff_to_slot: 53,
};

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

    /// `N = 2^16`, full slots (2^15), 128-bit: `q_0` 60 bits, SlotToCoeff 3 × 36, 13 user levels
    /// of 40 bits (`Δ = 2^40`), EvalMod 8 × 59, CoeffToSlot 3 × 53 bits; `P` 7 × 61
    /// bits, 4 key-switching digits (each at most 7 primes, ≤ 420 bits); log QP ≈ 1746 ≤ 1747.
    /// The pipeline: [`BootstrapConfig::full_slots_of`] (CoeffToSlot 3, EvalMod 8, SlotToCoeff 3
    /// levels).
    pub fn n16_levels13() -> Self {
        let config = BootstrapConfig::full_slots_of(16);
        Self {
            name: "boot_n16_levels13",
            purpose: "bootstrapping at N = 2^16, full slots, 13 levels of Δ = 2^40 left (128-bit)",
            params: chain(&config, 16, 13, N16, vec![61; 7], 4),
            config,
        }
    }

    /// `N = 2^17`, full slots (2^16), 128-bit: `q_0` 60 bits, SlotToCoeff 3 × 42, 24 user levels
    /// of 40 bits, EvalMod 8 × 60, CoeffToSlot 3 × 56 bits; `P` 10 × 61 bits, 4
    /// digits (each at most 10 primes, ≤ 600 bits); log QP ≈ 2404 ≤ 3523.
    pub fn n17_levels24() -> Self {
        // The default message ratio: 20.5 bits min at 2^12, 20.2 at 2^11, 20.0 at 2^13 (H100).
        let config = BootstrapConfig::full_slots_of(17);
        Self {
            name: "boot_n17_levels24",
            purpose: "bootstrapping at N = 2^17, full slots, 24 levels of Δ = 2^40 left (128-bit)",
            params: chain(&config, 17, 24, ROOMY, vec![61; 10], 4),
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
            params: chain(&config, 12, 2, ROOMY, vec![61; 5], 4).insecure_allow_below_128_bits(),
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
            params: chain(&config, 14, 4, ROOMY, vec![61; 5], 4).insecure_allow_below_128_bits(),
            config,
        }
    }
}

/// The bootstrappable chain at `N = 2^log_n` with `user_levels` levels of 40 bits for the user
/// and the pipeline's primes of `bits`.
fn chain(
    config: &BootstrapConfig,
    log_n: u32,
    user_levels: usize,
    bits: PipelineBits,
    log_p: Vec<u32>,
    dnum: usize,
) -> CkksParametersLiteral {
    let mut log_q = vec![60];
    log_q.extend(std::iter::repeat(bits.slot_to_coeff).take(config.slot_to_coeff_levels));
    log_q.extend(std::iter::repeat(40).take(user_levels));
    let eval_mod_levels =
        config.depth() - config.coeff_to_slot_levels - config.slot_to_coeff_levels;
    log_q.extend(std::iter::repeat(bits.eval_mod).take(eval_mod_levels));
    log_q.extend(std::iter::repeat(bits.coeff_to_slot).take(config.coeff_to_slot_levels));
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
