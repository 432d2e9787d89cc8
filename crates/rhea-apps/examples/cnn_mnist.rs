//! CNN-MNIST: seed 003's encrypted CNN inference on 28 × 28 images (synthetic digits, not MNIST),
//! in the seed's layout (one pixel per BGV ciphertext, images across the slots; exact) or a
//! packed CKKS layout, checked against the same network in the clear. The same program as
//! `rhea app cnn-mnist`.
//!
//! ```text
//! cargo run --release -p rhea-apps --example cnn_mnist -- [--device cpu|cuda:N|best]
//!     [--size small|paper] [--layout seed|packed] [--images N] [--padding-taps] [--plan]
//!     [--json FILE]
//! ```

use rhea::{Device, Error, Result};
use rhea_apps::cnn_mnist::{self, CnnConfig, Layout, Size};

fn main() -> Result<()> {
    let mut device = Device::best();
    let mut size = Size::Small;
    let mut layout = Layout::Seed;
    let mut images = None;
    let mut padding_taps = false;
    let mut plan_only = false;
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
            "--size" => size = Size::parse(&value()?)?,
            "--layout" => layout = Layout::parse(&value()?)?,
            "--images" => {
                let v = value()?;
                images = Some(
                    v.parse::<usize>()
                        .map_err(|e| Error::InvalidInput(format!("{v}: {e}")))?,
                )
            }
            "--padding-taps" => padding_taps = true,
            "--plan" => plan_only = true,
            "--json" => json = Some(value()?),
            other => {
                return Err(Error::InvalidInput(format!(
                    "unknown argument {other} (usage: cnn_mnist [--device D] [--size small|paper] \
                     [--layout seed|packed] [--images N] [--padding-taps] [--plan] [--json FILE])"
                )))
            }
        }
    }
    let mut config = CnnConfig::new(size, layout);
    config.images = images;
    config.padding_taps = padding_taps;
    let text = if plan_only {
        let plan = cnn_mnist::plan(device, &config)?;
        println!("{plan:#?}");
        serde_json::to_string_pretty(&plan)
    } else {
        let report = cnn_mnist::run(device, &config)?;
        print!("{}", report.table());
        serde_json::to_string_pretty(&report)
    }
    .map_err(|e| Error::InvalidInput(format!("JSON: {e}")))?;
    if let Some(path) = json {
        std::fs::write(&path, text).map_err(|e| Error::InvalidInput(format!("{path}: {e}")))?;
    }
    Ok(())
}
