//! RNN: inference of a plain recurrent network (128 units, 200 steps, bootstrapping every 3) on
//! encrypted word embeddings (Podschwadt and Takabi, PrivateNLP 2020; seed 004), checked against
//! the same network in f64. The same program as `rhea app rnn`.
//!
//! ```text
//! cargo run --release -p rhea-apps --example rnn -- [--device cpu|cuda:N|best] [--size small|paper]
//!                                                    [--iterations N] [--degree 3|5|7] [--json FILE]
//! ```
//!
//! The small size (N = 2^12, INSECURE, 64 units × 16 sequences, 9 steps) runs on a CPU in well
//! under a minute; the paper's (N = 2^16, 128-bit, 128 units × 32 sequences, 200 steps) is for
//! the GPU.

use rhea::{Device, Error, Result};
use rhea_apps::rnn::{self, RnnConfig, Size};

fn main() -> Result<()> {
    let mut device = Device::best();
    let mut size = Size::Small;
    let (mut iterations, mut degree) = (None, None);
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
            "--size" => size = Size::parse(&value()?)?,
            "--iterations" => iterations = Some(number(value()?)?),
            "--degree" => degree = Some(number(value()?)?),
            "--json" => json = Some(value()?),
            other => {
                return Err(Error::InvalidInput(format!(
                    "unknown argument {other} (usage: rnn [--device D] [--size small|paper] \
                     [--iterations N] [--degree 3|5|7] [--json FILE])"
                )))
            }
        }
    }
    // The size sets the steps (9 or 200); --iterations and --degree override, in any order.
    let mut config = RnnConfig::new(size);
    if let Some(n) = iterations {
        config.iterations = n;
    }
    if let Some(d) = degree {
        config.tanh_degree = d;
    }
    let report = rnn::run(device, &config)?;
    print!("{}", report.table());
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| Error::InvalidInput(format!("JSON: {e}")))?;
        std::fs::write(&path, text).map_err(|e| Error::InvalidInput(format!("{path}: {e}")))?;
    }
    Ok(())
}
