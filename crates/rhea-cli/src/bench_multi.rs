//! `rhea bench multi --gpus K`: throughput of independent work spread over several GPUs (issue
//! 37's throughput mode) — bootstrapping and mul+relin at a bootstrappable preset, with one GPU
//! as the baseline in the same run.
//!
//! Each GPU gets its own context, the same keys (generated from one seed on each device: the
//! words are identical, so a ciphertext could move between them) and its own host thread; the
//! threads start together, each enqueues `reps` operations on its GPU's stream and waits once.
//! Throughput is the operations of all GPUs over the slowest GPU's wall time. The refreshed
//! ciphertexts of every GPU are compared word for word with GPU 0's.

use std::sync::Barrier;
use std::time::Instant;

use rhea::ckks::bootstrap::{BootstrapPreset, Bootstrapper};
use rhea::ckks::{CkksContext, Complex64, Encoder, Encryptor, Evaluator, KeyGenerator};
use rhea::unstable::HasRing;
use rhea::Device;
use serde::Serialize;

/// One GPU count's result.
#[derive(Debug, Serialize)]
pub struct MultiRow {
    /// GPUs used.
    pub gpus: usize,
    /// Bootstraps per second over all GPUs.
    pub bootstraps_per_s: f64,
    /// mul+relin (with rescale) per second over all GPUs.
    pub mul_relin_per_s: f64,
    /// Each GPU's wall time for its bootstraps, ms.
    pub bootstrap_wall_ms: Vec<f64>,
    /// Each GPU's wall time for its mul+relins, ms.
    pub mul_relin_wall_ms: Vec<f64>,
}

/// The result of `rhea bench multi`.
#[derive(Debug, Serialize)]
pub struct MultiReport {
    /// The preset.
    pub preset: String,
    /// Bootstraps per GPU per timed run.
    pub reps: usize,
    /// The devices of the largest run.
    pub devices: Vec<String>,
    /// One GPU, then all of them.
    pub rows: Vec<MultiRow>,
    /// Throughput of the largest run over one GPU's: bootstrapping.
    pub bootstrap_speedup: f64,
    /// The same for mul+relin.
    pub mul_relin_speedup: f64,
    /// Whether every GPU's refreshed ciphertext had GPU 0's words.
    pub identical_words: bool,
}

impl MultiReport {
    /// A plain-text table.
    pub fn table(&self) -> String {
        let mut out = format!(
            "rhea bench multi — preset {}, {} bootstraps and {} mul+relin per GPU\n{:<6} {:>14} {:>16}\n",
            self.preset,
            self.reps,
            self.reps * MUL_PER_BOOT,
            "GPUs",
            "bootstraps/s",
            "mul+relin/s"
        );
        for r in &self.rows {
            out.push_str(&format!(
                "{:<6} {:>14.1} {:>16.0}\n",
                r.gpus, r.bootstraps_per_s, r.mul_relin_per_s
            ));
        }
        out.push_str(&format!(
            "speedup: bootstrapping {:.2}×, mul+relin {:.2}×; words identical on every GPU: {}\n",
            self.bootstrap_speedup, self.mul_relin_speedup, self.identical_words
        ));
        out
    }
}

/// mul+relin operations timed per bootstrap.
const MUL_PER_BOOT: usize = 20;

/// What one GPU measured: its bootstraps' and mul+relins' wall times (ms) and the words of its
/// first refreshed ciphertext.
type GpuRun = (f64, f64, Vec<Vec<u64>>);

fn run_gpu(
    device: Device,
    preset: &BootstrapPreset,
    reps: usize,
    start: &Barrier,
) -> rhea::Result<GpuRun> {
    let params = preset.params.build()?;
    let ctx = CkksContext::new(&params, device)?;
    let mut keygen = KeyGenerator::from_seed(&ctx, [37; 32]);
    let sk = keygen.secret_key()?;
    let boot = Bootstrapper::new(&ctx, &mut keygen, &sk, preset.config.clone())?;
    let eval = Evaluator::new(&ctx).with_relinearization_key(keygen.relinearization_key(&sk)?)?;
    let encoder = Encoder::new(&ctx)?;
    let z: Vec<Complex64> = (0..encoder.slots())
        .map(|i| Complex64::new((i % 17) as f64 / 17.0 - 0.5, (i % 5) as f64 / 10.0))
        .collect();
    let ct = Encryptor::with_secret_key(&ctx, &sk)?
        .with_seed([38; 32])
        .encrypt(&encoder.encode_complex(&z)?)?;
    let low = eval.drop_to_level(&ct, 0)?;
    // Warm-up: kernels compiled, matrices encoded.
    let first = boot.bootstrap(&low)?;
    let words = first
        .parts()
        .iter()
        .map(|p| ctx.ring().download(p))
        .collect::<rhea::Result<Vec<_>>>()?;
    eval.mul_relin(&ct, &ct)?;
    device.synchronize()?;
    start.wait();
    let t = Instant::now();
    for _ in 0..reps {
        boot.bootstrap(&low)?;
    }
    device.synchronize()?;
    let boot_ms = t.elapsed().as_secs_f64() * 1e3;
    start.wait();
    let t = Instant::now();
    for _ in 0..reps * MUL_PER_BOOT {
        eval.mul_relin(&ct, &ct)?;
    }
    device.synchronize()?;
    let mul_ms = t.elapsed().as_secs_f64() * 1e3;
    Ok((boot_ms, mul_ms, words))
}

/// Runs the benchmark on `gpus` GPUs (and on one, first).
pub fn run_multi(preset: &str, gpus: usize, reps: usize) -> Result<MultiReport, String> {
    let all = Device::all_gpus();
    if gpus == 0 || gpus > all.len() {
        return Err(format!(
            "rhea bench multi: --gpus {gpus}, but this machine has {} usable GPU(s)",
            all.len()
        ));
    }
    let preset = BootstrapPreset::by_name(preset).ok_or_else(|| {
        format!("rhea bench multi: unknown bootstrapping preset `{preset}` (`rhea bench boot --preset list`)")
    })?;
    let reps = reps.max(1);
    let mut rows = Vec::new();
    let mut identical = true;
    let mut counts = vec![1];
    if gpus > 1 {
        counts.push(gpus);
    }
    for k in counts {
        let barrier = Barrier::new(k);
        let runs: Vec<rhea::Result<GpuRun>> = std::thread::scope(|s| {
            let handles: Vec<_> = all[..k]
                .iter()
                .map(|&d| {
                    let (preset, barrier) = (&preset, &barrier);
                    s.spawn(move || run_gpu(d, preset, reps, barrier))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(rhea::Error::InvalidInput("a GPU thread panicked".into()))
                    })
                })
                .collect()
        });
        let runs = runs
            .into_iter()
            .collect::<rhea::Result<Vec<_>>>()
            .map_err(|e| format!("rhea bench multi ({k} GPUs): {e}"))?;
        identical &= runs.iter().all(|r| r.2 == runs[0].2);
        let slowest = |f: fn(&GpuRun) -> f64| runs.iter().map(f).fold(0.0, f64::max);
        rows.push(MultiRow {
            gpus: k,
            bootstraps_per_s: (k * reps) as f64 / (slowest(|r| r.0) / 1e3),
            mul_relin_per_s: (k * reps * MUL_PER_BOOT) as f64 / (slowest(|r| r.1) / 1e3),
            bootstrap_wall_ms: runs.iter().map(|r| r.0).collect(),
            mul_relin_wall_ms: runs.iter().map(|r| r.1).collect(),
        });
    }
    let (one, last) = (&rows[0], &rows[rows.len() - 1]);
    Ok(MultiReport {
        preset: preset.name.to_string(),
        reps,
        devices: all[..gpus].iter().map(Device::name).collect(),
        bootstrap_speedup: last.bootstraps_per_s / one.bootstraps_per_s,
        mul_relin_speedup: last.mul_relin_per_s / one.mul_relin_per_s,
        identical_words: identical,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without a usable GPU for the count asked, a clear error (on this CPU machine: any count).
    #[test]
    fn asking_for_more_gpus_than_there_are_is_an_error() {
        let have = Device::all_gpus().len();
        let err = run_multi("boot_n16_levels13", have + 1, 1).unwrap_err();
        assert!(err.contains("usable GPU"), "{err}");
        assert!(run_multi("boot_n16_levels13", 0, 1).is_err());
    }
}
