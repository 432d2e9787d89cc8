//! `rhea app NAME`: whole applications on encrypted data (the `rhea-apps` crate), each checked
//! against the same computation in f64.

use rhea_apps::cnn_mnist::{self, CnnConfig, Layout};
use rhea_apps::helr::{self, HelrConfig, Size};

/// The applications `rhea app` knows.
pub const APPS: &[&str] = &["helr", "cnn-mnist"];

/// What `rhea app` was asked for.
pub struct AppOptions<'a> {
    /// The application.
    pub name: &'a str,
    /// The device.
    pub device: rhea::Device,
    /// `small` or `paper`.
    pub size: &'a str,
    /// Iterations (the application's default when `None`).
    pub iterations: Option<usize>,
    /// The seed of the keys and encryptions (reproducible runs).
    pub seed: Option<u64>,
    /// The layout (`cnn-mnist`: `seed` or `packed`; `None`: `seed`).
    pub layout: Option<&'a str>,
    /// Where to write the report as JSON.
    pub json: Option<&'a std::path::Path>,
}

/// Runs the application, prints its report and writes it as JSON when asked.
pub fn run(options: &AppOptions<'_>) -> Result<(), Box<dyn std::error::Error>> {
    match options.name {
        "helr" => {
            if options.layout.is_some() {
                return Err("--layout is for cnn-mnist".into());
            }
            let mut config = HelrConfig::new(Size::parse(options.size)?);
            if let Some(iterations) = options.iterations {
                config.iterations = iterations;
            }
            if let Some(seed) = options.seed {
                config = config.with_seed(seed);
            }
            let report = helr::run(options.device, &config)?;
            print!("{}", report.table());
            if let Some(path) = options.json {
                std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
            }
            Ok(())
        }
        "cnn-mnist" => {
            let layout = Layout::parse(options.layout.unwrap_or("seed"))?;
            let mut config = CnnConfig::new(Size::parse(options.size)?, layout);
            if options.iterations.is_some() {
                return Err("--iterations is for helr (cnn-mnist runs one inference)".into());
            }
            if let Some(seed) = options.seed {
                config = config.with_seed(seed);
            }
            let report = cnn_mnist::run(options.device, &config)?;
            print!("{}", report.table());
            if let Some(path) = options.json {
                std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
            }
            Ok(())
        }
        other => Err(format!("unknown application `{other}` (known: {})", APPS.join(", ")).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_application_or_size_is_refused() {
        let options = |name, size| AppOptions {
            name,
            device: rhea::Device::Cpu,
            size,
            iterations: Some(1),
            seed: None,
            layout: None,
            json: None,
        };
        let err = run(&options("resnet99", "small")).unwrap_err().to_string();
        assert!(
            err.contains("unknown application") && err.contains("helr"),
            "{err}"
        );
        let err = run(&options("helr", "huge")).unwrap_err().to_string();
        assert!(err.contains("unknown size"), "{err}");
        let err = run(&options("cnn-mnist", "huge")).unwrap_err().to_string();
        assert!(err.contains("unknown size"), "{err}");
        let mut bad_layout = options("cnn-mnist", "small");
        bad_layout.layout = Some("diagonal");
        bad_layout.iterations = None;
        let err = run(&bad_layout).unwrap_err().to_string();
        assert!(err.contains("unknown layout"), "{err}");
    }
}
