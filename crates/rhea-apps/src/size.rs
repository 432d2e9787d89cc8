//! The two sizes every application runs at.

use rhea::ckks::bootstrap::{BootstrapConfig, BootstrapPreset};
use rhea::params::{CkksParameters, CkksParametersLiteral};
use rhea::{Error, Result};
use serde::Serialize;

/// Which size of an application to run: the same code at a CPU-sized, insecure ring for CI,
/// or at the paper's 128-bit parameters for the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Size {
    /// INSECURE parameters (N = 2^12 or so) and a reduced workload: a CPU run of a few minutes,
    /// the same code path.
    Small,
    /// The paper's workload at 128-bit parameters (N = 2^16 and up): for the GPU.
    Paper,
}

impl Size {
    /// `small` or `paper`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "small" => Ok(Size::Small),
            "paper" => Ok(Size::Paper),
            other => Err(Error::InvalidInput(format!(
                "unknown size `{other}` (use small or paper)"
            ))),
        }
    }

    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            Size::Small => "small",
            Size::Paper => "paper",
        }
    }

    /// The bootstrappable CKKS parameters of the applications that bootstrap, their
    /// bootstrapping configuration and a name: `boot_n16_levels13` (N = 2^16, 128-bit, 13 levels
    /// of Δ = 2^40 after a bootstrap) for [`Size::Paper`]; for [`Size::Small`],
    /// `boot_test_n12_insecure`'s layout (N = 2^12, the same bootstrapping primes and pipeline,
    /// **INSECURE**) with 13 user levels of 40 bits and 7 key-switching digits (`P` resized to
    /// cover the largest).
    pub fn bootstrappable_parameters(self) -> Result<(CkksParameters, BootstrapConfig, String)> {
        let preset = |name: &str| {
            BootstrapPreset::by_name(name)
                .ok_or_else(|| Error::InvalidInput(format!("no preset {name}")))
        };
        match self {
            Size::Paper => {
                let name = "boot_n16_levels13";
                let p = preset(name)?;
                Ok((p.params.build()?, p.config, name.to_string()))
            }
            Size::Small => {
                let p = preset("boot_test_n12_insecure")?;
                Ok((
                    with_user_levels(p.params, p.config.bottom_depth(), 13)
                        .with_dnum(7)
                        .build()?,
                    p.config,
                    "boot_test_n12_insecure with 13 user levels (INSECURE)".to_string(),
                ))
            }
        }
    }
}

/// The user's levels of a bootstrappable chain, `(top, floor)`: a bootstrap lands on `top`
/// (`max_level − config.top_depth()`, CoeffToSlot's and EvalMod's primes lying above it) and
/// takes ciphertexts from `floor` up (`config.bottom_depth()`, SlotToCoeff's levels lying
/// below it): `top − floor` levels of computation between two bootstraps.
///
/// Errors: [`Error::InvalidInput`] (naming `app`) when the chain leaves no level between the two.
pub(crate) fn user_level_range(
    app: &str,
    params: &CkksParameters,
    config: &BootstrapConfig,
) -> Result<(usize, usize)> {
    let floor = config.bottom_depth();
    match params.max_level().checked_sub(config.top_depth()) {
        Some(top) if top > floor => Ok((top, floor)),
        _ => Err(Error::InvalidInput(format!(
            "{app}: the chain ({} levels) leaves no level between bootstrapping's {} at the top \
             and {floor} at the bottom",
            params.max_level(),
            config.top_depth()
        ))),
    }
}

/// `literal` with 40-bit primes added to its user levels (the run of 40-bit primes right above
/// `q_0` and the `bottom` SlotToCoeff primes) up to `levels` user levels of 40 bits.
fn with_user_levels(
    mut literal: CkksParametersLiteral,
    bottom: usize,
    levels: usize,
) -> CkksParametersLiteral {
    let start = (1 + bottom).min(literal.log_q.len());
    let user = literal.log_q[start..]
        .iter()
        .take_while(|&&b| b == 40)
        .count();
    let extra = levels.saturating_sub(user);
    literal
        .log_q
        .splice(start..start, std::iter::repeat(40).take(extra));
    literal
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both sizes: SlotToCoeff's primes right above `q_0`, then 13 user levels of 40 bits up to
    /// the level a bootstrap lands on.
    #[test]
    fn both_sizes_leave_13_user_levels_above_slot_to_coeff() {
        for size in [Size::Small, Size::Paper] {
            let (params, config, name) = size.bootstrappable_parameters().unwrap();
            let bottom = config.bottom_depth();
            assert_eq!(bottom, 3, "{name}");
            assert_eq!(
                params.max_level() - config.top_depth(),
                params.default_level()
            );
            assert_eq!(params.default_level() - bottom, 13, "{name}");
            for level in 1..=params.max_level() {
                let bits = (params.q_primes()[level] as f64).log2().round() as u32;
                let user = level > bottom && level <= params.default_level();
                assert_eq!(bits == 40, user, "{name}: level {level} has {bits} bits");
            }
        }
    }
}
