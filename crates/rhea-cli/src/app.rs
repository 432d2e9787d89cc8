//! `rhea app NAME`: whole applications on encrypted data (the `rhea-apps` crate), each checked
//! against the same computation in f64; `rhea app-chart`: their results chart.

use serde::Serialize;

use rhea_apps::chart::ChartEntry;
use rhea_apps::cnn_mnist::{self, CnnConfig, Layout};
use rhea_apps::helr::{self, HelrConfig, Size};
use rhea_apps::resnet20::{self, ResnetConfig};
use rhea_apps::rnn::{self, RnnConfig};

/// The applications `rhea app` knows.
pub const APPS: &[&str] = &["helr", "resnet20", "rnn", "cnn-mnist"];

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
    /// `resnet20`: device memory for the maps' encoded diagonals, GiB (`None`: what the card
    /// has room for).
    pub maps_gib: Option<f64>,
    /// Where to write the report as JSON.
    pub json: Option<&'a std::path::Path>,
}

impl AppOptions<'_> {
    /// An error unless the application takes `--iterations` or it was not given.
    fn no_iterations(&self, why: &str) -> Result<(), Box<dyn std::error::Error>> {
        match self.iterations {
            Some(_) => Err(format!("{} has no iterations ({why})", self.name).into()),
            None => Ok(()),
        }
    }

    /// An error unless the application takes `--layout` or it was not given.
    fn no_layout(&self) -> Result<(), Box<dyn std::error::Error>> {
        match self.layout {
            Some(_) => Err(format!("--layout is for cnn-mnist, not {}", self.name).into()),
            None => Ok(()),
        }
    }

    /// An error unless the application takes `--maps-gib` or it was not given.
    fn no_maps_gib(&self) -> Result<(), Box<dyn std::error::Error>> {
        match self.maps_gib {
            Some(_) => Err(format!("--maps-gib is for resnet20, not {}", self.name).into()),
            None => Ok(()),
        }
    }
}

/// One run of an application: its report as text and as JSON, and its own timed figure.
pub struct AppRun {
    /// The report's table.
    pub table: String,
    /// The report.
    pub report: serde_json::Value,
    /// The application's timed figure (its chart entry's: ms per iteration for `helr`, per
    /// inference for the others).
    pub app_ms: f64,
    /// What `app_ms` measures.
    pub what: String,
}

impl AppRun {
    fn of(
        table: String,
        report: &impl Serialize,
        chart: &ChartEntry,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        Ok(AppRun {
            table,
            report: serde_json::to_value(report)?,
            app_ms: chart.rhea_ms,
            what: chart.what.clone(),
        })
    }
}

/// Runs the application, prints its report and writes it as JSON when asked.
pub fn run(options: &AppOptions<'_>) -> Result<(), Box<dyn std::error::Error>> {
    let run = run_boxed(options, options.device)?;
    print!("{}", run.table);
    if let Some(path) = options.json {
        std::fs::write(path, serde_json::to_string_pretty(&run.report)?)?;
    }
    Ok(())
}

/// Runs the application on `device` (not `options.device`) and returns its report; prints
/// nothing.
pub fn run_on(
    options: &AppOptions<'_>,
    device: rhea::Device,
) -> Result<AppRun, Box<dyn std::error::Error + Send + Sync>> {
    run_boxed(options, device).map_err(|e| e.to_string().into())
}

fn run_boxed(
    options: &AppOptions<'_>,
    device: rhea::Device,
) -> Result<AppRun, Box<dyn std::error::Error>> {
    let size = || Size::parse(options.size);
    match options.name {
        "helr" => {
            options.no_layout()?;
            options.no_maps_gib()?;
            let mut config = HelrConfig::new(size()?);
            if let Some(iterations) = options.iterations {
                config.iterations = iterations;
            }
            if let Some(seed) = options.seed {
                config = config.with_seed(seed);
            }
            let report = helr::run(device, &config)?;
            AppRun::of(report.table(), &report, &report.chart)
        }
        "resnet20" => {
            options.no_layout()?;
            let mut config = ResnetConfig::new(size()?);
            options.no_iterations("one inference")?;
            if options.maps_gib.is_some() {
                config.cache_budget_gib = options.maps_gib;
            }
            if let Some(seed) = options.seed {
                config = config.with_seed(seed);
            }
            let report = resnet20::run(device, &config)?;
            AppRun::of(report.table(), &report, &report.chart)
        }
        "rnn" => {
            options.no_layout()?;
            options.no_maps_gib()?;
            let mut config = RnnConfig::new(size()?);
            if let Some(iterations) = options.iterations {
                config.iterations = iterations;
            }
            if let Some(seed) = options.seed {
                config = config.with_seed(seed);
            }
            let report = rnn::run(device, &config)?;
            AppRun::of(report.table(), &report, &report.chart)
        }
        "cnn-mnist" => {
            let layout = Layout::parse(options.layout.unwrap_or("seed"))?;
            let mut config = CnnConfig::new(size()?, layout);
            options.no_iterations("one inference")?;
            options.no_maps_gib()?;
            if let Some(seed) = options.seed {
                config = config.with_seed(seed);
            }
            let report = cnn_mnist::run(device, &config)?;
            AppRun::of(report.table(), &report, &report.chart)
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

    fn options<'a>(name: &'a str, size: &'a str) -> AppOptions<'a> {
        AppOptions {
            name,
            device: rhea::Device::Cpu,
            size,
            iterations: None,
            seed: None,
            layout: None,
            maps_gib: None,
            json: None,
        }
    }

    fn refused(o: &AppOptions<'_>, what: &str) {
        let err = run(o).unwrap_err().to_string();
        assert!(err.contains(what), "{}: {err}", o.name);
    }

    #[test]
    fn an_unknown_application_size_or_option_is_refused() {
        let err = run(&options("resnet99", "small")).unwrap_err().to_string();
        assert!(
            err.contains("unknown application") && err.contains("cnn-mnist"),
            "{err}"
        );
        for app in APPS {
            refused(&options(app, "huge"), "unknown size");
        }
        for app in ["resnet20", "cnn-mnist"] {
            let mut o = options(app, "small");
            o.iterations = Some(1);
            refused(&o, "no iterations");
        }
        for app in ["helr", "resnet20", "rnn"] {
            let mut o = options(app, "small");
            o.layout = Some("packed");
            refused(&o, "--layout is for cnn-mnist");
        }
        let mut o = options("cnn-mnist", "small");
        o.layout = Some("diagonal");
        refused(&o, "unknown layout");
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
