//! `rhea bench ckks` / `rhea bench bgv`: time the basic operations of a scheme at a named preset on
//! a chosen device.
//!
//! Each operation runs once to warm up, then `reps` times; the median is reported. The peer runs
//! (`bench/openfhe_ckks.py` on the CPU, DESILO on the GPU) use the same operations at matched N,
//! levels and dnum, in the same command (see `bench/cpu-vs-openfhe.sh`).

use std::time::Instant;

use rand::Rng;
use rhea::ckks::{CkksContext, Encoder, Encryptor, Evaluator, KeyGenerator};
use rhea::Device;
use serde::Serialize;

/// One timed operation.
#[derive(Debug, Serialize)]
pub struct OpTiming {
    /// The operation.
    pub op: &'static str,
    /// The ciphertext level the operation ran at (`None`: the preset's top level).
    pub level: Option<usize>,
    /// Median wall time in milliseconds of one call, the device synchronised inside the timed
    /// region (the latency of one operation, host work included).
    pub median_ms: f64,
    /// Mean time in milliseconds of one call among `reps` calls issued back to back and
    /// synchronised once at the end (the throughput figure; on the GPU the host enqueues the
    /// next call while the device runs the previous one, as DESILO's benchmark measures).
    pub stream_ms: f64,
}

/// The result of one `rhea bench ckks` or `rhea bench bgv` run.
#[derive(Debug, Serialize)]
pub struct SchemeBenchReport {
    /// `ckks` or `bgv`.
    pub scheme: &'static str,
    /// The preset's name.
    pub preset: String,
    /// The parameters, as displayed.
    pub params: String,
    /// The device that ran.
    pub device: String,
    /// Repetitions per operation.
    pub reps: usize,
    /// The timings.
    pub ops: Vec<OpTiming>,
}

/// Runs `f` once to warm up, then `reps` times back to back followed by `sync` once; returns the
/// mean wall time per call in milliseconds.
pub(crate) fn stream_ms(
    reps: usize,
    mut f: impl FnMut() -> rhea::Result<()>,
    sync: impl Fn() -> rhea::Result<()>,
) -> rhea::Result<f64> {
    f()?;
    sync()?;
    let start = Instant::now();
    for _ in 0..reps.max(1) {
        f()?;
    }
    sync()?;
    Ok(start.elapsed().as_secs_f64() * 1e3 / reps.max(1) as f64)
}

/// Times `f` twice over if `sel` selects `op` — the median latency (device synchronised inside
/// each call) and the back-to-back mean — and appends the row to `ops`.
fn time_selected(
    ops: &mut Vec<OpTiming>,
    sel: &SuiteSelection,
    device: Device,
    reps: usize,
    op: &'static str,
    level: Option<usize>,
    f: &mut dyn FnMut() -> rhea::Result<()>,
) -> rhea::Result<()> {
    if !selected(&sel.only, op) {
        return Ok(());
    }
    let sync = || device.synchronize();
    let median_ms = median_ms(reps, || {
        f()?;
        sync()
    })?;
    #[cfg(feature = "dev-kernel-defines")]
    let timeline = KernelTimeline::start(device, op, level)?;
    let stream_ms = stream_ms(reps, &mut *f, sync)?;
    #[cfg(feature = "dev-kernel-defines")]
    if let Some(t) = timeline {
        t.write()?;
    }
    ops.push(OpTiming {
        op,
        level,
        median_ms,
        stream_ms,
    });
    Ok(())
}

/// The kernels' block timeline of one operation's back-to-back runs, a diagnostic: with
/// `RHEA_TIMELINE_OUT=DIR` on a CUDA device and the kernels compiled with
/// `RHEA_NVRTC_DEFINES=KERNEL_TIMELINE=<records>`, `DIR/<op>[-<level>].tsv` (`DIR` made if missing)
/// gets one line per block (source, grid, grid y, threads, SM, block, block y, start and end ns;
/// see `rhea_cuda::timeline`). Only with the developer feature `dev-kernel-defines`.
#[cfg(feature = "dev-kernel-defines")]
struct KernelTimeline {
    dev: std::sync::Arc<rhea_cuda::GpuDevice>,
    path: std::path::PathBuf,
}

#[cfg(feature = "dev-kernel-defines")]
impl KernelTimeline {
    /// Restarts the recording when a timeline is asked for (the device is the context's own:
    /// `GpuDevice::new` shares the live one).
    fn start(device: Device, op: &str, level: Option<usize>) -> rhea::Result<Option<Self>> {
        let (Some(dir), Device::Cuda(i)) = (std::env::var_os("RHEA_TIMELINE_OUT"), device) else {
            return Ok(None);
        };
        let fail = rhea::Error::from;
        let dev = rhea_cuda::GpuDevice::new(i).map_err(fail)?;
        if rhea_cuda::timeline::take_timeline(&dev)
            .map_err(fail)?
            .is_none()
        {
            return Err(rhea::Error::InvalidParameters(
                "RHEA_TIMELINE_OUT needs RHEA_NVRTC_DEFINES=KERNEL_TIMELINE=<records>".into(),
            ));
        }
        // The directory is made here, before the runs, so that a path that cannot hold it fails
        // at once rather than after the measurement.
        std::fs::create_dir_all(&dir).map_err(|e| {
            rhea::Error::InvalidInput(format!(
                "RHEA_TIMELINE_OUT: {}: {e}",
                std::path::Path::new(&dir).display()
            ))
        })?;
        let name = match level {
            Some(l) => format!("{op}-{l}.tsv"),
            None => format!("{op}.tsv"),
        };
        Ok(Some(Self {
            dev,
            path: std::path::Path::new(&dir).join(name),
        }))
    }

    /// Writes the blocks recorded since [`KernelTimeline::start`].
    fn write(self) -> rhea::Result<()> {
        let records = rhea_cuda::timeline::take_timeline(&self.dev)
            .map_err(rhea::Error::from)?
            .unwrap_or_default();
        let mut text =
            String::from("source\tgrid\tgrid_y\tthreads\tsm\tblock\tblock_y\tstart_ns\tend_ns\n");
        for r in &records {
            text.push_str(&format!(
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
                r.source,
                r.grid,
                r.grid_y,
                r.threads,
                r.sm,
                r.block,
                r.block_y,
                r.start_ns,
                r.end_ns
            ));
        }
        // A directory that cannot take the file is the caller's input, not the device's fault.
        std::fs::write(&self.path, text).map_err(|e| {
            rhea::Error::InvalidInput(format!("RHEA_TIMELINE_OUT: {}: {e}", self.path.display()))
        })
    }
}

/// Whether `op` is selected by `only` (empty: everything).
fn selected(only: &[String], op: &str) -> bool {
    only.is_empty() || only.iter().any(|o| o == op)
}

/// Runs `f` once to warm up, then `reps` times; returns the median wall time in milliseconds.
pub(crate) fn median_ms(reps: usize, mut f: impl FnMut() -> rhea::Result<()>) -> rhea::Result<f64> {
    f()?;
    let mut samples = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Instant::now();
        f()?;
        samples.push(start.elapsed().as_secs_f64() * 1e3);
    }
    samples.sort_by(f64::total_cmp);
    Ok(samples[samples.len() / 2])
}

/// Which operations and levels a scheme suite runs.
#[derive(Debug, Clone, Default)]
pub struct SuiteSelection {
    /// Only these operations (empty: all).
    pub only: Vec<String>,
    /// The levels to run at (empty: the preset's top level only).
    pub levels: Vec<usize>,
    /// Overrides the preset's number of key-switching digits (`P` resized to cover the largest
    /// digit: `CkksParametersLiteral::with_dnum`). CKKS only.
    pub dnum: Option<usize>,
}

/// Runs the CKKS suite: encode, encrypt, add, mul+relin (no rescale), mul+relin+rescale, square,
/// rescale, key switch, rotate by 1, 4 hoisted rotations — at the top level and at every level in
/// `sel.levels`.
pub fn run_ckks(
    preset_name: &str,
    device: Device,
    reps: usize,
    sel: &SuiteSelection,
) -> Result<SchemeBenchReport, String> {
    let mut literal = crate::files::ckks_literal(preset_name).map_err(|e| e.to_string())?;
    if let Some(dnum) = sel.dnum {
        literal = literal.with_dnum(dnum);
    }
    let inner = || -> rhea::Result<SchemeBenchReport> {
        let params = literal.build()?;
        let ctx = CkksContext::new(&params, device)?;
        let mut keygen = KeyGenerator::new(&ctx)?;
        let sk = keygen.secret_key()?;
        let pk = keygen.public_key(&sk)?;
        let rlk = keygen.relinearization_key(&sk)?;
        let gk = keygen.galois_keys(&sk, &[1, 2, 3, 4], false)?;
        let encoder = Encoder::new(&ctx)?;
        let encryptor = Encryptor::new(&ctx, &pk)?;
        let eval = Evaluator::new(&ctx)
            .with_auto_rescale(false)
            .with_relinearization_key(rlk)?
            .with_galois_keys(gk)?;
        let mut rng = rand::rng();
        let n = encoder.slots();
        let x: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let y: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let px = encoder.encode(&x)?;
        let top_x = encryptor.encrypt(&px)?;
        let top_y = encryptor.encrypt(&encoder.encode(&y)?)?;
        // GPU work is asynchronous: wait for it inside the timed region.
        let mut ops = Vec::new();
        let mut time =
            |op: &'static str, level: Option<usize>, f: &mut dyn FnMut() -> rhea::Result<()>| {
                time_selected(&mut ops, sel, device, reps, op, level, f)
            };
        time("encode", None, &mut || encoder.encode(&x).map(drop))?;
        time("encrypt", None, &mut || encryptor.encrypt(&px).map(drop))?;
        let mut levels: Vec<Option<usize>> = vec![None];
        levels.extend(sel.levels.iter().map(|&l| Some(l)));
        for level in levels {
            let (cx, cy) = match level {
                None => (top_x.try_clone()?, top_y.try_clone()?),
                Some(l) => (
                    eval.drop_to_level(&top_x, l)?,
                    eval.drop_to_level(&top_y, l)?,
                ),
            };
            let product = eval.mul(&cx, &cy)?;
            let c2 = eval.mul_no_relin(&cx, &cy)?;
            time("add", level, &mut || eval.add(&cx, &cy).map(drop))?;
            time("mul_relin", level, &mut || eval.mul(&cx, &cy).map(drop))?;
            time("mul_relin_rescale", level, &mut || {
                eval.mul_relin_rescale(&cx, &cy).map(drop)
            })?;
            time("square", level, &mut || eval.square(&cx).map(drop))?;
            time("relinearize", level, &mut || {
                eval.relinearize(&c2).map(drop)
            })?;
            time("rescale", level, &mut || eval.rescale(&product).map(drop))?;
            time("rotate1", level, &mut || eval.rotate(&cx, 1).map(drop))?;
            time("hoisted4", level, &mut || {
                eval.rotate_hoisted(&cx, &[1, 2, 3, 4]).map(drop)
            })?;
        }
        Ok(SchemeBenchReport {
            scheme: "ckks",
            preset: preset_name.to_string(),
            params: params.to_string(),
            device: device.name(),
            reps,
            ops,
        })
    };
    inner().map_err(|e| e.to_string())
}

impl SchemeBenchReport {
    /// A short table.
    pub fn table(&self) -> String {
        let mut s = format!(
            "rhea bench {} — {} on {}\n  {}\n",
            self.scheme, self.preset, self.device, self.params
        );
        s += &format!(
            "  {:<18} {:>6} {:>12} {:>12}\n",
            "op", "level", "latency ms", "stream ms"
        );
        for op in &self.ops {
            let level = op.level.map_or("top".to_string(), |l| l.to_string());
            s += &format!(
                "  {:<18} {:>6} {:>12.3} {:>12.3}\n",
                op.op, level, op.median_ms, op.stream_ms
            );
        }
        s
    }
}

/// Runs the BGV suite (HE-Booster's operations): encode, encrypt, HEADD, HEMUL (with relinearisation, no
/// modulus switch), modulus switch, HEROT (row rotation by 1).
pub fn run_bgv(
    preset_name: &str,
    device: Device,
    reps: usize,
    sel: &SuiteSelection,
) -> Result<SchemeBenchReport, String> {
    if sel.dnum.is_some() {
        return Err("--dnum applies to the ckks suite only".to_string());
    }
    let literal = crate::files::bgv_literal(preset_name).map_err(|e| e.to_string())?;
    let inner = || -> rhea::Result<SchemeBenchReport> {
        use rhea::bgv;
        let params = literal.build()?;
        let ctx = bgv::BgvContext::new(&params, device)?;
        let mut keygen = bgv::KeyGenerator::new(&ctx)?;
        let sk = keygen.secret_key()?;
        let pk = keygen.public_key(&sk)?;
        let rlk = keygen.relinearization_key(&sk)?;
        let gk = keygen.galois_keys(&sk, &[1], false)?;
        let encoder = bgv::Encoder::new(&ctx)?;
        let encryptor = bgv::Encryptor::new(&ctx, &pk)?;
        let eval = bgv::Evaluator::new(&ctx)
            .with_auto_mod_switch(false)
            .with_relinearization_key(rlk)?
            .with_galois_keys(gk)?;
        let t = params.t();
        let mut rng = rand::rng();
        let slots = encoder.slots();
        let x: Vec<u64> = (0..slots).map(|_| rng.random_range(0..t)).collect();
        let y: Vec<u64> = (0..slots).map(|_| rng.random_range(0..t)).collect();
        let px = encoder.encode(&x)?;
        let cx = encryptor.encrypt(&px)?;
        let cy = encryptor.encrypt(&encoder.encode(&y)?)?;
        let product = eval.mul(&cx, &cy)?;
        let mut ops = Vec::new();
        let mut time = |op: &'static str, f: &mut dyn FnMut() -> rhea::Result<()>| {
            time_selected(&mut ops, sel, device, reps, op, None, f)
        };
        time("encode", &mut || encoder.encode(&x).map(drop))?;
        time("encrypt", &mut || encryptor.encrypt(&px).map(drop))?;
        time("add", &mut || eval.add(&cx, &cy).map(drop))?;
        time("mul_relin", &mut || eval.mul(&cx, &cy).map(drop))?;
        time("mod_switch", &mut || eval.mod_switch(&product).map(drop))?;
        time("rotate1", &mut || eval.rotate_rows(&cx, 1).map(drop))?;
        Ok(SchemeBenchReport {
            scheme: "bgv",
            preset: preset_name.to_string(),
            params: format!("{params}"),
            device: device.name(),
            reps,
            ops,
        })
    };
    inner().map_err(|e| e.to_string())
}
