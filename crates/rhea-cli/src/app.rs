//! `rhea app NAME`: whole applications on encrypted data (the `rhea-apps` crate), each checked
//! against the same computation in f64.

use rhea_apps::chart::ChartEntry;
use rhea_apps::helr::{self, HelrConfig, Size};
use rhea_apps::resnet20::{self, ResnetConfig};

/// The applications `rhea app` knows.
pub const APPS: &[&str] = &["helr", "resnet20"];

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
    /// Where to write the report as JSON.
    pub json: Option<&'a std::path::Path>,
}

/// Runs the application, prints its report and writes it as JSON when asked.
pub fn run(options: &AppOptions<'_>) -> Result<(), Box<dyn std::error::Error>> {
    match options.name {
        "helr" => {
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
        "resnet20" => {
            if options.iterations.is_some() {
                return Err("resnet20 has no iterations (one inference)".into());
            }
            let mut config = ResnetConfig::new(Size::parse(options.size)?);
            if let Some(seed) = options.seed {
                config = config.with_seed(seed);
            }
            let report = resnet20::run(options.device, &config)?;
            print!("{}", report.table());
            if let Some(path) = options.json {
                std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
            }
            Ok(())
        }
        other => Err(format!("unknown application `{other}` (known: {})", APPS.join(", ")).into()),
    }
}

/// `rhea app-chart`: reads the `chart` entry of each report and writes the SVG.
pub fn chart(
    reports: &[std::path::PathBuf],
    svg: &std::path::Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut entries = Vec::with_capacity(reports.len());
    for path in reports {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("app-chart: cannot read {}: {e}", path.display()))?;
        let report: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("app-chart: {} is not JSON: {e}", path.display()))?;
        let entry = report.get("chart").cloned().ok_or_else(|| {
            format!(
                "app-chart: {} has no `chart` entry (write it with `rhea app NAME --json FILE`)",
                path.display()
            )
        })?;
        entries.push(serde_json::from_value::<ChartEntry>(entry).map_err(|e| {
            format!(
                "app-chart: the `chart` entry of {} is malformed: {e}",
                path.display()
            )
        })?);
    }
    std::fs::write(svg, rhea_apps::chart::svg(&entries))?;
    println!(
        "app-chart: {} applications -> {}",
        entries.len(),
        svg.display()
    );
    Ok(())
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
            json: None,
        };
        let err = run(&options("resnet99", "small")).unwrap_err().to_string();
        assert!(
            err.contains("unknown application") && err.contains("helr"),
            "{err}"
        );
        let err = run(&options("helr", "huge")).unwrap_err().to_string();
        assert!(err.contains("unknown size"), "{err}");
        let mut bad = options("resnet20", "huge");
        bad.iterations = None;
        let err = run(&bad).unwrap_err().to_string();
        assert!(err.contains("unknown size"), "{err}");
        let err = run(&options("resnet20", "small")).unwrap_err().to_string();
        assert!(err.contains("no iterations"), "{err}");
    }

    #[test]
    fn the_chart_reads_each_reports_entry_and_refuses_a_report_without_one() {
        let dir = std::env::temp_dir().join(format!("rhea-app-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("helr.json");
        let entry = ChartEntry {
            app: "helr".into(),
            what: "paper size, ms per iteration".into(),
            rhea_ms: 29.2,
            device: "cuda:0".into(),
            peers: vec![("Cheddar".into(), 40.7)],
        };
        let report = serde_json::json!({ "app": "helr", "chart": entry });
        std::fs::write(&good, report.to_string()).unwrap();
        let svg = dir.join("apps.svg");
        chart(std::slice::from_ref(&good), &svg).unwrap();
        let doc = std::fs::read_to_string(&svg).unwrap();
        assert!(doc.contains("29.2 ms") && doc.contains("40.7 ms"), "{doc}");
        let bad = dir.join("bad.json");
        std::fs::write(&bad, r#"{"app": "helr"}"#).unwrap();
        let err = chart(&[good, bad], &svg).unwrap_err().to_string();
        assert!(err.contains("no `chart` entry"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
