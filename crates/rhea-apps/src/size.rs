//! The two sizes every application runs at.

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
}
