//! ResNet-20: inference of one encrypted 32 × 32 × 3 image (Lee et al., ICML 2022; seed 004),
//! checked against the same network in f64. The same program as `rhea app resnet20`.
//!
//! ```text
//! cargo run --release -p rhea-apps --example resnet20 -- [--device cpu|cuda:N|best]
//!                                                         [--size small|paper] [--json FILE]
//! ```
//!
//! The small size (8 × 8 × 3, N = 2^12, INSECURE) runs on a CPU in about a minute; the paper's
//! (N = 2^16, 128-bit) is for the GPU.

use rhea::{Device, Error, Result};
use rhea_apps::resnet20::{self, ResnetConfig, Size};

fn main() -> Result<()> {
    let mut device = Device::best();
    let mut config = ResnetConfig::new(Size::Small);
    let mut json = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| Error::InvalidInput(format!("{a} needs a value")))
        };
        match a.as_str() {
            "--device" => {
                device = match value()?.as_str() {
                    "cpu" => Device::Cpu,
                    "best" => Device::best(),
                    other => other
                        .strip_prefix("cuda:")
                        .and_then(|i| i.parse().ok())
                        .map(Device::Cuda)
                        .ok_or_else(|| Error::InvalidInput(format!("unknown device {other}")))?,
                }
            }
            "--size" => config = ResnetConfig::new(Size::parse(&value()?)?),
            "--json" => json = Some(value()?),
            other => {
                return Err(Error::InvalidInput(format!(
                    "unknown argument {other} (usage: resnet20 [--device D] [--size small|paper] \
                     [--json FILE])"
                )))
            }
        }
    }
    let report = resnet20::run(device, &config)?;
    print!("{}", report.table());
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| Error::InvalidInput(format!("JSON: {e}")))?;
        std::fs::write(&path, text).map_err(|e| Error::InvalidInput(format!("{path}: {e}")))?;
    }
    Ok(())
}
