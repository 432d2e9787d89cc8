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
                    with_user_levels(p.params, 13).with_dnum(7).build()?,
                    p.config,
                    "boot_test_n12_insecure with 13 user levels (INSECURE)".to_string(),
                ))
            }
        }
    }
}

/// `literal` with 40-bit primes inserted after `q_0` up to `levels` user levels of 40 bits.
fn with_user_levels(mut literal: CkksParametersLiteral, levels: usize) -> CkksParametersLiteral {
    let user = literal
        .log_q
        .iter()
        .skip(1)
        .take_while(|&&b| b == 40)
        .count();
    let extra = levels.saturating_sub(user);
    literal
        .log_q
        .splice(1..1, std::iter::repeat(40).take(extra));
    literal
}
