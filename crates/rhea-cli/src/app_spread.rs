//! `rhea app NAME --gpus K`: an application's runs spread over `K` GPUs in throughput mode
//! (issue 37) — one independent run per GPU, each on its own host thread with its own keys
//! (the same seed: the same words on every GPU), all started together; one GPU alone first, in
//! the same process, as the baseline. An untimed round on every GPU comes before both (kernels
//! compiled and loaded, allocator pools filled), so that neither pays the first run's costs.

use std::sync::Barrier;
use std::time::Instant;

use serde::Serialize;

use rhea::Device;

use crate::app::{run_on, AppOptions, AppRun};

/// One GPU's run in a [`SpreadRow`].
#[derive(Debug, Serialize)]
pub struct GpuRun {
    /// The device (`cuda:N`).
    pub device: String,
    /// The whole run (keys, encryption, the application, decryption and its checks), s.
    pub wall_s: f64,
    /// The application's own timed figure ([`SpreadReport::what`]), ms.
    pub app_ms: f64,
}

/// The runs on `gpus` GPUs at once.
#[derive(Debug, Serialize)]
pub struct SpreadRow {
    /// GPUs, one run each.
    pub gpus: usize,
    /// From the start of the runs to the end of the last, s.
    pub wall_s: f64,
    /// Whole runs an hour over the GPUs (`3600 · gpus / wall_s`).
    pub runs_per_hour: f64,
    /// Each GPU's run.
    pub per_gpu: Vec<GpuRun>,
}

/// What `rhea app NAME --gpus K` reports (JSON with `--json`).
#[derive(Debug, Serialize)]
pub struct SpreadReport {
    /// The application.
    pub app: String,
    /// The size.
    pub size: String,
    /// The seed of every run's keys and encryptions.
    pub seed: u64,
    /// What the application's timed figure (`app_ms`) measures.
    pub what: String,
    /// One GPU alone, then `K` GPUs at once.
    pub rows: Vec<SpreadRow>,
    /// Runs an hour on `K` GPUs over runs an hour on one.
    pub speedup: f64,
    /// The application's timed figure, summed as throughput (`Σ 1/app_ms` over the `K` GPUs
    /// over `1/app_ms` alone): what the timed section alone scales by.
    pub app_speedup: f64,
    /// Whether every run (the warm-up's too) gave the same results (each report without its
    /// device, plan, chart entry and times: digests of the output ciphertexts' words, decrypted
    /// values, accuracies).
    pub identical_results: bool,
    /// The report of the run on one GPU alone.
    pub one_gpu_report: serde_json::Value,
}

impl SpreadReport {
    /// A plain-text table.
    pub fn table(&self) -> String {
        let mut out = format!(
            "rhea app {} --gpus {} — {} size, seed {}: one independent run per GPU, started \
             together (throughput mode)\n{:<5} {:>9} {:>11}  app ms per GPU ({})\n",
            self.app,
            self.rows.last().map_or(1, |r| r.gpus),
            self.size,
            self.seed,
            "GPUs",
            "wall s",
            "runs/hour",
            self.what
        );
        for r in &self.rows {
            let per: Vec<String> = r
                .per_gpu
                .iter()
                .map(|g| format!("{:.2}", g.app_ms))
                .collect();
            out.push_str(&format!(
                "{:<5} {:>9.2} {:>11.0}  {}\n",
                r.gpus,
                r.wall_s,
                r.runs_per_hour,
                per.join(" / ")
            ));
        }
        out.push_str(&format!(
            "speedup (runs an hour): {:.2}×; the timed section: {:.2}×; results identical on \
             every GPU: {}\n",
            self.speedup, self.app_speedup, self.identical_results
        ));
        out
    }
}

/// A report without what may differ between two runs of the same seed on two GPUs: its
/// device, plan (memory), chart entry and timing, and every time at any depth (`seconds`,
/// `…_s`, `…_ms`).
fn results_of(report: &serde_json::Value) -> serde_json::Value {
    fn strip_times(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                map.retain(|k, _| k != "seconds" && !k.ends_with("_s") && !k.ends_with("_ms"));
                map.values_mut().for_each(strip_times);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip_times),
            _ => {}
        }
    }
    let mut r = report.clone();
    if let Some(map) = r.as_object_mut() {
        for key in ["device", "timing", "plan", "chart"] {
            map.remove(key);
        }
    }
    strip_times(&mut r);
    r
}

/// Runs `options`'s application on GPU 0 alone, then on the first `gpus` GPUs at once (one
/// run each, its own thread, started together after a barrier).
///
/// Errors: `gpus` of 0 or more than the machine has; any run's error (naming its GPU).
pub fn run_spread(options: &AppOptions<'_>, gpus: usize) -> Result<SpreadReport, String> {
    let all = Device::all_gpus();
    if gpus == 0 || gpus > all.len() {
        return Err(format!(
            "rhea app --gpus {gpus}: this machine has {} usable GPU(s)",
            all.len()
        ));
    }
    let seed = options.seed.unwrap_or_else(rand::random);
    let options = AppOptions {
        seed: Some(seed),
        json: None,
        ..*options
    };
    // The warm-up round (untimed), one GPU alone, then all of them.
    let mut counts = vec![gpus, 1];
    if gpus > 1 {
        counts.push(gpus);
    }
    let mut rows = Vec::new();
    let mut reports: Vec<serde_json::Value> = Vec::new();
    let mut what = String::new();
    for (round, k) in counts.into_iter().enumerate() {
        let barrier = Barrier::new(k);
        let start = Instant::now();
        let runs: Vec<Result<(AppRun, f64), String>> = std::thread::scope(|s| {
            let handles: Vec<_> = all[..k]
                .iter()
                .map(|&d| {
                    let (options, barrier) = (&options, &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        let t = Instant::now();
                        run_on(options, d)
                            .map(|r| (r, t.elapsed().as_secs_f64()))
                            .map_err(|e| format!("{}: {e}", d.name()))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err("a GPU's thread panicked".into()))
                })
                .collect()
        });
        let wall_s = start.elapsed().as_secs_f64();
        let runs = runs.into_iter().collect::<Result<Vec<_>, _>>()?;
        if round == 0 {
            reports.extend(runs.into_iter().map(|(run, _)| run.report));
            continue;
        }
        let mut per_gpu = Vec::with_capacity(k);
        for ((run, took), d) in runs.into_iter().zip(&all[..k]) {
            per_gpu.push(GpuRun {
                device: d.name(),
                wall_s: took,
                app_ms: run.app_ms,
            });
            what = run.what;
            reports.push(run.report);
        }
        rows.push(SpreadRow {
            gpus: k,
            wall_s,
            runs_per_hour: 3600.0 * k as f64 / wall_s,
            per_gpu,
        });
    }
    let (one, last) = (&rows[0], &rows[rows.len() - 1]);
    let rate = |r: &SpreadRow| r.per_gpu.iter().map(|g| 1.0 / g.app_ms).sum::<f64>();
    let first = results_of(&reports[0]);
    let identical_results = reports.iter().all(|r| results_of(r) == first);
    Ok(SpreadReport {
        app: options.name.to_string(),
        size: options.size.to_string(),
        seed,
        what,
        speedup: last.runs_per_hour / one.runs_per_hour,
        app_speedup: rate(last) / rate(one),
        identical_results,
        one_gpu_report: reports.swap_remove(gpus),
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_results_leave_out_device_times_plan_and_chart_only() {
        let a = serde_json::json!({
            "app": "helr", "device": "cuda:0", "timing": {"s": 1.0}, "plan": {"b": 2},
            "chart": {"rhea_ms": 3.0}, "weights_digest": "ab12"
        });
        let mut b = a.clone();
        b["device"] = "cuda:1".into();
        b["timing"]["s"] = 2.0.into();
        b["training"] = serde_json::json!({"epochs": 4, "seconds": 2.5, "train_s": 1.0});
        let mut a = a;
        a["training"] = serde_json::json!({"epochs": 4, "seconds": 2.2, "train_s": 0.9});
        assert_eq!(results_of(&a), results_of(&b));
        b["weights_digest"] = "ab13".into();
        assert_ne!(
            results_of(&a),
            results_of(&b),
            "a result that differs is seen"
        );
    }

    #[test]
    fn more_gpus_than_the_machine_has_is_an_error() {
        let options = AppOptions {
            name: "helr",
            device: Device::Cpu,
            size: "small",
            iterations: None,
            seed: None,
            layout: None,
            maps_gib: None,
            json: None,
        };
        let too_many = Device::all_gpus().len() + 1;
        let err = run_spread(&options, too_many).unwrap_err();
        assert!(err.contains("usable GPU"), "{err}");
        assert!(run_spread(&options, 0).unwrap_err().contains("usable GPU"));
    }
}
