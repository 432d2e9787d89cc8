//! HELR: logistic-regression training on encrypted data (Han et al., AAAI 2019; seed 004), checked
//! against the same training in f64. The same program as `rhea app helr`.
//!
//! ```text
//! cargo run --release -p rhea-apps --example helr -- [--device cpu|cuda:N|best] [--size small|paper]
//!                                                     [--iterations N] [--degree 3|5] [--json FILE]
//! ```
//!
//! The small size (N = 2^12, INSECURE, batches of 64) runs on a CPU in a few minutes; the paper's
//! (N = 2^16, 128-bit, batches of 1024) is for the GPU.

use rhea::{Device, Error, Result};
use rhea_apps::helr::{self, HelrConfig, Size};

fn main() -> Result<()> {
    let mut device = Device::best();
    let mut config = HelrConfig::new(Size::Small);
    let mut json = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| Error::InvalidInput(format!("{a} needs a value")))
        };
        let number = |s: String| {
            s.parse::<usize>()
                .map_err(|e| Error::InvalidInput(format!("{s}: {e}")))
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
            "--size" => {
                let iterations = config.iterations;
                config = HelrConfig::new(Size::parse(&value()?)?);
                config.iterations = iterations;
            }
            "--iterations" => config.iterations = number(value()?)?,
            "--degree" => config.sigmoid_degree = number(value()?)?,
            "--json" => json = Some(value()?),
            other => {
                return Err(Error::InvalidInput(format!(
                    "unknown argument {other} (usage: helr [--device D] [--size small|paper] \
                     [--iterations N] [--degree 3|5] [--json FILE])"
                )))
            }
        }
    }
    let report = helr::run(device, &config)?;
    print!("{}", report.table());
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| Error::InvalidInput(format!("JSON: {e}")))?;
        std::fs::write(&path, text).map_err(|e| Error::InvalidInput(format!("{path}: {e}")))?;
    }
    Ok(())
}
