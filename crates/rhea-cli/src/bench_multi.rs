//! `rhea bench multi --gpus K`: throughput of independent work spread over several GPUs (issue
//! 37's throughput mode) — bootstrapping and mul+relin at a bootstrappable preset, with one GPU
//! as the baseline in the same run.
//!
//! Each GPU gets its own context, the same keys (generated from one seed on each device: the
//! words are identical, so a ciphertext could move between them) and its own host thread; the
//! threads start together, each enqueues `reps` operations on its GPU's stream and waits once.
//! Throughput is the operations of all GPUs over the slowest GPU's wall time. The refreshed
//! ciphertexts of every GPU are compared word for word with GPU 0's.
//!
//! `--mode latency` ([`run_latency`]): one mul+relin, one rotation and one mul+relin+rescale
//! split by limb over the GPUs (`rhea::unstable::multi::GpuGroup`, NCCL between them), against
//! the single-GPU path in the same run, with the NCCL time and bytes of one key switching beside
//! them; and hoisted rotations ([`HOISTED_STEPS`], one shared ModUp: `Evaluator::rotate_hoisted`,
//! `GpuGroup::rotate_many`) against as many separate rotations, on one GPU and over the group.

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
    let low = eval.drop_to_level(&ct, boot.input_level())?;
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
    // 1, 2, 4, … GPUs below `gpus`, then `gpus`: the scaling curve in one run.
    let mut counts: Vec<usize> = std::iter::successors(Some(1usize), |k| Some(k * 2))
        .take_while(|&k| k < gpus)
        .collect();
    counts.push(gpus);
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

// ---------------------------------------------------------------------------------- latency

/// One configuration of `rhea bench multi --mode latency`.
#[derive(Debug, Serialize)]
pub struct LatencyRow {
    /// `single-gpu` (the fused single-GPU path, `Evaluator`) or `group` (latency mode).
    pub path: String,
    /// How the group split the limbs (`strided`, the default; `strided-4`, blocks of 4 limbs
    /// dealt round-robin; `contiguous`, the first split), `none` for the single-GPU path.
    pub partition: String,
    /// Whether the ModUp's exchange overlapped the conversions digit by digit
    /// (`GpuGroup::set_overlap`).
    pub overlap: bool,
    /// GPUs used.
    pub gpus: usize,
    /// Median wall time of one mul+relin (not rescaled), ms, the host waiting for the result.
    pub mul_relin_ms: f64,
    /// The host's share of one mul+relin: the median time for the call to return, ms, the
    /// GPUs idle before it (checks, allocations, kernel launches and NCCL calls for every
    /// GPU, from one host thread; the GPUs run behind it). Near `mul_relin_ms`, the host is
    /// the bottleneck.
    pub mul_relin_host_ms: f64,
    /// Median wall time of one rotation by one slot, ms.
    pub rotate_ms: f64,
    /// Median wall time of one mul+relin+rescale, ms (`Evaluator::mul_relin_rescale`, whose
    /// rescale shares the ModDown's NTTs; `GpuGroup::mul_relin_rescale`: `mul_relin`, then a
    /// rescale with one broadcast limb per component).
    pub mul_relin_rescale_ms: f64,
    /// The two NCCL all-gathers of one key switching alone (mean, ms); 0 without NCCL.
    pub nccl_ms_per_keyswitch: f64,
    /// Bytes each GPU received through NCCL in one mul+relin (one key switching), counted.
    pub nccl_bytes_per_keyswitch: Vec<u64>,
    /// Bytes of the relinearisation key on each GPU.
    pub relin_key_bytes_per_gpu: Vec<u64>,
    /// The `(Q, P)` limbs each GPU holds at the level run (its share of the work).
    pub limbs_per_gpu: Vec<(usize, usize)>,
}

/// The steps of the hoisted rotations of `rhea bench multi --mode latency` (a baby-step set).
pub const HOISTED_STEPS: [i64; 8] = [1, 2, 3, 4, 5, 6, 7, 8];

/// Hoisted rotations in `rhea bench multi --mode latency`: the rotations of one ciphertext by
/// every step of [`HOISTED_STEPS`] sharing one ModUp, against one separate rotation per step.
#[derive(Debug, Serialize)]
pub struct HoistedRow {
    /// `single-gpu` (`Evaluator::rotate_hoisted` against `Evaluator::rotate` per step) or
    /// `group` (`GpuGroup::rotate_many` against `GpuGroup::rotate` per step).
    pub path: String,
    /// The group's split (`none` for the single-GPU path).
    pub partition: String,
    /// GPUs used.
    pub gpus: usize,
    /// Median wall time of all the hoisted rotations (one call), ms.
    pub hoisted_ms: f64,
    /// Median wall time of the separate rotations, one per step in a row, ms.
    pub separate_ms: f64,
    /// `separate_ms / hoisted_ms`: what hoisting saves.
    pub saving: f64,
    /// Bytes each GPU received through NCCL in one call of the hoisted rotations (one ModUp
    /// exchange, one ModDown exchange per step).
    pub nccl_bytes: Vec<u64>,
}

/// The result of `rhea bench multi --mode latency`.
#[derive(Debug, Serialize)]
pub struct LatencyReport {
    /// The parameter preset (a bootstrappable preset's parameters).
    pub preset: String,
    /// log2 N.
    pub log_n: u32,
    /// Q primes (the ciphertexts' limbs at the top level).
    pub q_limbs: usize,
    /// P primes.
    pub p_limbs: usize,
    /// Key-switching digits.
    pub dnum: usize,
    /// The level the operations ran at (the top).
    pub level: usize,
    /// Timed repetitions per operation.
    pub reps: usize,
    /// The devices of the largest group.
    pub devices: Vec<String>,
    /// The default limb split of the groups (`strided`: limb `i` on GPU `i mod K`).
    pub partition: String,
    /// The single-GPU path, a group of one, of 2, 4, … GPUs below `--gpus` and of all `--gpus`
    /// (default split), then the largest group with the ModUp exchange overlapped, with blocks
    /// of 4 and with the contiguous split (the last three only for 2+ GPUs).
    pub rows: Vec<LatencyRow>,
    /// Single-GPU time over the largest group's (default split): mul+relin.
    pub mul_relin_speedup: f64,
    /// The same for the rotation.
    pub rotate_speedup: f64,
    /// The same for mul+relin+rescale.
    pub mul_relin_rescale_speedup: f64,
    /// The speedups of the default split with the ModUp exchange overlapped (mul+relin,
    /// rotation); `None` for one GPU.
    pub overlap_speedups: Option<(f64, f64)>,
    /// The steps of the hoisted rotations.
    pub hoisted_steps: Vec<i64>,
    /// Hoisted rotations: the single-GPU path, then each group of the default split (one, 2,
    /// 4, … and all `--gpus`).
    pub hoisted: Vec<HoistedRow>,
    /// Single-GPU time over the largest group's (default split) for the hoisted rotations.
    pub hoisted_speedup: f64,
    /// Whether every group's results (the hoisted rotations' too, each against one rotation
    /// on one GPU) had the single-GPU path's words.
    pub identical_words: bool,
    /// The preset's bootstrapping key set split over the `--gpus` GPUs (default split).
    pub bootstrapping_keys: BootKeySplit,
}

/// The bootstrapping key set of a preset (the relinearisation key and every Galois key a
/// `Bootstrapper` holds: its rotations and conjugation; not the two encapsulation keys)
/// partitioned by limb over a group: what each GPU holds against one GPU holding it all.
#[derive(Debug, Serialize)]
pub struct BootKeySplit {
    /// The rotation steps (CoeffToSlot, SlotToCoeff, the subring sum).
    pub rotations: Vec<i64>,
    /// Key-switching keys (the rotations', conjugation, relinearisation).
    pub keys: usize,
    /// Bytes on the one GPU that holds the whole set.
    pub bytes_one_gpu: u64,
    /// Bytes on each GPU of the group.
    pub bytes_per_gpu: Vec<u64>,
}

/// The key set of `preset`'s `Bootstrapper` generated one key at a time on `ctx`'s device and
/// partitioned over `group` (each key dropped from its device once split).
fn boot_key_split(
    preset: &BootstrapPreset,
    ctx: &CkksContext,
    keygen: &mut KeyGenerator,
    sk: &rhea::rlwe::SecretKey,
    group: &rhea::unstable::multi::GpuGroup,
) -> rhea::Result<BootKeySplit> {
    use rhea::ckks::bootstrap::HomomorphicDft;
    let cfg = &preset.config;
    let half = ctx.params().slots();
    let cts = HomomorphicDft::coeff_to_slot(cfg.slots, cfg.coeff_to_slot_levels, 1.0)?
        .with_rotation_keys(cfg.rotation_keys);
    let stc = HomomorphicDft::slot_to_coeff(cfg.slots, cfg.slot_to_coeff_levels, 1.0)?
        .with_rotation_keys(cfg.rotation_keys);
    let mut steps = cts.rotations();
    steps.extend(stc.rotations());
    let mut s = cfg.slots;
    while s < half {
        steps.push(s as i64);
        s *= 2;
    }
    steps.sort_unstable();
    steps.dedup();
    // Every split key is held to the end: the whole set lives across the group at once.
    let rlk = keygen.relinearization_key(sk)?;
    let mut one = rlk.key().size_bytes();
    let mut held = vec![group.partition_relinearization_key(&rlk)?];
    drop(rlk);
    let conj = keygen.galois_keys(sk, &[], true)?;
    one += conj.size_bytes();
    for g in conj.elements() {
        if let Some(key) = conj.get(g) {
            held.push(group.partition_key(key)?);
        }
    }
    drop(conj);
    let mut rotations = Vec::new();
    for &step in &steps {
        let gk = keygen.galois_keys(sk, &[step], false)?;
        one += gk.size_bytes();
        rotations.push(group.partition_rotation_keys(&gk, &[step])?);
    }
    let mut per_gpu = vec![0u64; group.gpus()];
    let parts = held.iter().map(|k| k.bytes_per_gpu());
    for b in parts.chain(rotations.iter().map(|r| r.bytes_per_gpu())) {
        for (t, x) in per_gpu.iter_mut().zip(b) {
            *t += x;
        }
    }
    let keys = held.len() + rotations.iter().map(|r| r.elements().len()).sum::<usize>();
    Ok(BootKeySplit {
        rotations: steps,
        keys,
        bytes_one_gpu: one,
        bytes_per_gpu: per_gpu,
    })
}

impl LatencyReport {
    /// A plain-text table.
    pub fn table(&self) -> String {
        let mut out = format!(
            "rhea bench multi --mode latency — {} (N = 2^{}, {} Q + {} P primes, dnum {}), \
             level {}, median of {}\n{:<11} {:<11} {:>7} {:>5} {:>13} {:>8} {:>11} {:>16} {:>14} {:>22} {:>14}\n",
            self.preset,
            self.log_n,
            self.q_limbs,
            self.p_limbs,
            self.dnum,
            self.level,
            self.reps,
            "path",
            "partition",
            "overlap",
            "GPUs",
            "mul+relin ms",
            "host ms",
            "rotate ms",
            "mul+relin+rs ms",
            "NCCL ms / ks",
            "NCCL MiB / ks per GPU",
            "(Q, P) limbs"
        );
        for r in &self.rows {
            let limbs: Vec<String> = r
                .limbs_per_gpu
                .iter()
                .map(|(q, p)| format!("({q},{p})"))
                .collect();
            out.push_str(&format!(
                "{:<11} {:<11} {:>7} {:>5} {:>13.3} {:>8.3} {:>11.3} {:>16.3} {:>14.3} {:>22} {:>14}\n",
                r.path,
                r.partition,
                if r.overlap { "yes" } else { "no" },
                r.gpus,
                r.mul_relin_ms,
                r.mul_relin_host_ms,
                r.rotate_ms,
                r.mul_relin_rescale_ms,
                r.nccl_ms_per_keyswitch,
                mib_per_gpu(&r.nccl_bytes_per_keyswitch),
                limbs.join(" ")
            ));
        }
        out.push_str(&format!(
            "speedup over one GPU: mul+relin {:.2}×, rotation {:.2}×, mul+relin+rescale {:.2}×; \
             words identical: {}\n",
            self.mul_relin_speedup,
            self.rotate_speedup,
            self.mul_relin_rescale_speedup,
            self.identical_words
        ));
        out.push_str(&format!(
            "hoisted rotations by {:?}:\n{:<11} {:<11} {:>5} {:>12} {:>13} {:>8} {:>18}\n",
            self.hoisted_steps,
            "path",
            "partition",
            "GPUs",
            "hoisted ms",
            "separate ms",
            "saving",
            "NCCL MiB per GPU"
        ));
        for h in &self.hoisted {
            out.push_str(&format!(
                "{:<11} {:<11} {:>5} {:>12.3} {:>13.3} {:>7.2}× {:>18}\n",
                h.path,
                h.partition,
                h.gpus,
                h.hoisted_ms,
                h.separate_ms,
                h.saving,
                mib_per_gpu(&h.nccl_bytes)
            ));
        }
        out.push_str(&format!(
            "hoisted rotations, speedup over one GPU: {:.2}×\n",
            self.hoisted_speedup
        ));
        if let Some((m, r)) = self.overlap_speedups {
            out.push_str(&format!(
                "with the ModUp exchange overlapped: mul+relin {m:.2}×, rotation {r:.2}×\n"
            ));
        }
        let b = &self.bootstrapping_keys;
        let gib = |x: u64| format!("{:.2}", x as f64 / (1u64 << 30) as f64);
        let per: Vec<String> = b.bytes_per_gpu.iter().map(|&x| gib(x)).collect();
        out.push_str(&format!(
            "bootstrapping key set ({} keys: relinearisation, conjugation, {} rotations): \
             {} GiB on one GPU, {} GiB per GPU split\n",
            b.keys,
            b.rotations.len(),
            gib(b.bytes_one_gpu),
            per.join(" / ")
        ));
        out
    }
}

/// The median of `reps` runs of `f`, each timed until `f` returns (the host's share), the
/// devices idle before each (`sync`), in ms.
fn median_host_ms(
    reps: usize,
    f: impl FnMut() -> rhea::Result<()>,
    sync: impl Fn() -> rhea::Result<()>,
) -> rhea::Result<f64> {
    median_timed(reps, f, sync, false)
}

/// The median of `reps` runs of `f`, each timed to its end (`sync`), in ms.
fn median_ms(
    reps: usize,
    f: impl FnMut() -> rhea::Result<()>,
    sync: impl Fn() -> rhea::Result<()>,
) -> rhea::Result<f64> {
    median_timed(reps, f, sync, true)
}

/// The median of `reps` runs of `f` after one untimed run, each timed until `f` returns and,
/// when `to_end`, the devices finish (`sync`); the devices are idle before each run.
fn median_timed(
    reps: usize,
    mut f: impl FnMut() -> rhea::Result<()>,
    sync: impl Fn() -> rhea::Result<()>,
    to_end: bool,
) -> rhea::Result<f64> {
    f()?;
    sync()?;
    let mut t: Vec<f64> = (0..reps.max(1))
        .map(|_| {
            let s = Instant::now();
            f()?;
            if to_end {
                sync()?;
            }
            let took = s.elapsed().as_secs_f64() * 1e3;
            sync()?;
            Ok(took)
        })
        .collect::<rhea::Result<_>>()?;
    t.sort_by(f64::total_cmp);
    Ok(t[t.len() / 2])
}

/// Runs `rhea bench multi --mode latency` on `gpus` GPUs at the parameters of the
/// bootstrappable preset `preset` (default `boot_n17_levels24`: N = 2^17, 39 Q primes).
pub fn run_latency(preset: &str, gpus: usize, reps: usize) -> Result<LatencyReport, String> {
    use rhea::unstable::multi::{GpuGroup, PartitionKind};
    let all = Device::all_gpus();
    if gpus == 0 || gpus > all.len() {
        return Err(format!(
            "rhea bench multi --mode latency: --gpus {gpus}, but this machine has {} usable GPU(s)",
            all.len()
        ));
    }
    let preset = BootstrapPreset::by_name(preset).ok_or_else(|| {
        format!("rhea bench multi: unknown preset `{preset}` (`rhea bench boot --preset list`)")
    })?;
    let err = |e: rhea::Error| format!("rhea bench multi --mode latency: {e}");
    let params = preset.params.build().map_err(err)?;
    let gpu0 = all[0];
    let ctx = CkksContext::new(&params, gpu0).map_err(err)?;
    let mut keygen = KeyGenerator::from_seed(&ctx, [37; 32]);
    let sk = keygen.secret_key().map_err(err)?;
    let rlk = keygen.relinearization_key(&sk).map_err(err)?;
    let gk = keygen
        .galois_keys(&sk, &HOISTED_STEPS, false)
        .map_err(err)?;
    let eval = Evaluator::new(&ctx)
        .with_relinearization_key(rlk.clone())
        .and_then(|e| e.with_galois_keys(gk.clone()))
        .map_err(err)?;
    let encoder = Encoder::new(&ctx).map_err(err)?;
    let z: Vec<Complex64> = (0..encoder.slots())
        .map(|i| Complex64::new((i % 17) as f64 / 17.0 - 0.5, (i % 5) as f64 / 10.0))
        .collect();
    let enc = Encryptor::with_secret_key(&ctx, &sk)
        .map_err(err)?
        .with_seed([38; 32]);
    let a = enc
        .encrypt(&encoder.encode_complex(&z).map_err(err)?)
        .map_err(err)?;
    let b = enc
        .encrypt(&encoder.encode_complex(&z).map_err(err)?)
        .map_err(err)?;
    let words = |ct: &rhea::ckks::Ciphertext| -> rhea::Result<Vec<Vec<u64>>> {
        ct.parts().iter().map(|p| ctx.ring().download(p)).collect()
    };
    let want_mul = words(&eval.mul_relin(&a, &b).map_err(err)?).map_err(err)?;
    let want_rot = words(&eval.rotate(&a, 1).map_err(err)?).map_err(err)?;
    let want_mrr = words(&eval.mul_relin_rescale(&a, &b).map_err(err)?).map_err(err)?;
    let steps = HOISTED_STEPS;
    let want_hoisted = steps
        .iter()
        .map(|&k| words(&eval.rotate(&a, k)?))
        .collect::<rhea::Result<Vec<_>>>()
        .map_err(err)?;
    let sync0 = || gpu0.synchronize();
    let rlk_bytes = rlk.key().size_bytes();
    let mut rows = vec![LatencyRow {
        path: "single-gpu".into(),
        partition: "none".into(),
        overlap: false,
        gpus: 1,
        mul_relin_ms: median_ms(reps, || eval.mul_relin(&a, &b).map(drop), sync0).map_err(err)?,
        mul_relin_host_ms: median_host_ms(reps, || eval.mul_relin(&a, &b).map(drop), sync0)
            .map_err(err)?,
        rotate_ms: median_ms(reps, || eval.rotate(&a, 1).map(drop), sync0).map_err(err)?,
        mul_relin_rescale_ms: median_ms(reps, || eval.mul_relin_rescale(&a, &b).map(drop), sync0)
            .map_err(err)?,
        nccl_ms_per_keyswitch: 0.0,
        nccl_bytes_per_keyswitch: vec![0],
        relin_key_bytes_per_gpu: vec![rlk_bytes],
        limbs_per_gpu: vec![(a.level() + 1, params.p_primes().len())],
    }];
    let mut identical = true;
    // The single GPU's hoisted rotations have its own rotations' words.
    for (h, w) in eval
        .rotate_hoisted(&a, &steps)
        .map_err(err)?
        .iter()
        .zip(&want_hoisted)
    {
        identical &= words(h).map_err(err)? == *w;
    }
    let single_hoisted =
        median_ms(reps, || eval.rotate_hoisted(&a, &steps).map(drop), sync0).map_err(err)?;
    let single_separate = median_ms(
        reps,
        || steps.iter().try_for_each(|&k| eval.rotate(&a, k).map(drop)),
        sync0,
    )
    .map_err(err)?;
    let mut hoisted = vec![HoistedRow {
        path: "single-gpu".into(),
        partition: "none".into(),
        gpus: 1,
        hoisted_ms: single_hoisted,
        separate_ms: single_separate,
        saving: single_separate / single_hoisted,
        nccl_bytes: vec![0],
    }];
    let default = PartitionKind::Strided { block: 1 };
    // A group of one, of 2, 4, … below `gpus` (default split), then of `gpus` in every split.
    let mut runs: Vec<(usize, PartitionKind, bool)> =
        std::iter::successors(Some(1usize), |k| Some(k * 2))
            .take_while(|&k| k < gpus)
            .map(|k| (k, default, false))
            .collect();
    runs.push((gpus, default, false));
    if gpus > 1 {
        runs.push((gpus, default, true));
        // Blocks of 4 limbs: balanced within a block; the same one all-gather per exchange,
        // fewer and longer read-back copies (the overlapped path: 4× fewer broadcasts).
        if 4 * (gpus - 1) < params.q_primes().len() {
            runs.push((gpus, PartitionKind::Strided { block: 4 }, false));
        }
        runs.push((gpus, PartitionKind::Contiguous, false));
    }
    for (k, kind, overlap) in runs {
        let mut group = GpuGroup::with_partition(&ctx, &all[..k], kind).map_err(err)?;
        group.set_overlap(overlap);
        let prlk = group.partition_relinearization_key(&rlk).map_err(err)?;
        let pgk = group.partition_rotation_keys(&gk, &[1]).map_err(err)?;
        let (pa, pb) = (
            group.scatter(&a).map_err(err)?,
            group.scatter(&b).map_err(err)?,
        );
        let sync = || group.synchronize();
        let mul =
            median_ms(reps, || group.mul_relin(&pa, &pb, &prlk).map(drop), sync).map_err(err)?;
        let mul_host = median_host_ms(reps, || group.mul_relin(&pa, &pb, &prlk).map(drop), sync)
            .map_err(err)?;
        let rot = median_ms(reps, || group.rotate(&pa, 1, &pgk).map(drop), sync).map_err(err)?;
        let mrr = median_ms(
            reps,
            || group.mul_relin_rescale(&pa, &pb, &prlk).map(drop),
            sync,
        )
        .map_err(err)?;
        group.reset_nccl_counters();
        let prod = group.mul_relin(&pa, &pb, &prlk).map_err(err)?;
        group.synchronize().map_err(err)?;
        let bytes = group.nccl_bytes_received();
        let rotated = group.rotate(&pa, 1, &pgk).map_err(err)?;
        identical &= words(&group.gather(&prod, &ctx).map_err(err)?).map_err(err)? == want_mul;
        identical &= words(&group.gather(&rotated, &ctx).map_err(err)?).map_err(err)? == want_rot;
        let rescaled = group.mul_relin_rescale(&pa, &pb, &prlk).map_err(err)?;
        identical &= words(&group.gather(&rescaled, &ctx).map_err(err)?).map_err(err)? == want_mrr;
        let nccl_ms = group
            .time_keyswitch_exchanges(a.level(), reps)
            .map_err(err)?;
        if kind == default && !overlap {
            // Hoisted rotations (their keys split only for these rows).
            let hk = group.partition_rotation_keys(&gk, &steps).map_err(err)?;
            let t_h = median_ms(reps, || group.rotate_many(&pa, &steps, &hk).map(drop), sync)
                .map_err(err)?;
            let t_s = median_ms(
                reps,
                || {
                    steps
                        .iter()
                        .try_for_each(|&s| group.rotate(&pa, s, &hk).map(drop))
                },
                sync,
            )
            .map_err(err)?;
            group.reset_nccl_counters();
            let many = group.rotate_many(&pa, &steps, &hk).map_err(err)?;
            group.synchronize().map_err(err)?;
            let nccl_bytes = group.nccl_bytes_received();
            for (r, w) in many.iter().zip(&want_hoisted) {
                identical &= words(&group.gather(r, &ctx).map_err(err)?).map_err(err)? == *w;
            }
            identical &= many.len() == steps.len();
            hoisted.push(HoistedRow {
                path: "group".into(),
                partition: kind.to_string(),
                gpus: k,
                hoisted_ms: t_h,
                separate_ms: t_s,
                saving: t_s / t_h,
                nccl_bytes,
            });
        }
        rows.push(LatencyRow {
            path: "group".into(),
            partition: kind.to_string(),
            overlap,
            gpus: k,
            mul_relin_ms: mul,
            mul_relin_host_ms: mul_host,
            rotate_ms: rot,
            mul_relin_rescale_ms: mrr,
            nccl_ms_per_keyswitch: nccl_ms,
            nccl_bytes_per_keyswitch: bytes,
            relin_key_bytes_per_gpu: prlk.bytes_per_gpu(),
            limbs_per_gpu: (0..k)
                .map(|g| {
                    let p = group.partition();
                    (p.q_active(g, a.level() + 1).len(), p.p_range(g).len())
                })
                .collect(),
        });
    }
    let group = GpuGroup::new(&ctx, &all[..gpus]).map_err(err)?;
    let boot_keys = boot_key_split(&preset, &ctx, &mut keygen, &sk, &group).map_err(err)?;
    drop(group);
    let group_row = |overlap: bool| {
        rows.iter().find(|r| {
            r.path == "group"
                && r.gpus == gpus
                && r.partition == default.to_string()
                && r.overlap == overlap
        })
    };
    let one = &rows[0];
    let last = group_row(false).ok_or("rhea bench multi: no row of the largest group")?;
    let hoisted_speedup = hoisted[0].hoisted_ms / hoisted[hoisted.len() - 1].hoisted_ms;
    let overlap_speedups = group_row(true).filter(|_| gpus > 1).map(|o| {
        (
            one.mul_relin_ms / o.mul_relin_ms,
            one.rotate_ms / o.rotate_ms,
        )
    });
    Ok(LatencyReport {
        preset: preset.name.to_string(),
        log_n: params.log_n(),
        q_limbs: params.q_primes().len(),
        p_limbs: params.p_primes().len(),
        dnum: params.dnum(),
        level: a.level(),
        reps: reps.max(1),
        devices: all[..gpus].iter().map(Device::name).collect(),
        partition: default.to_string(),
        mul_relin_speedup: one.mul_relin_ms / last.mul_relin_ms,
        rotate_speedup: one.rotate_ms / last.rotate_ms,
        mul_relin_rescale_speedup: one.mul_relin_rescale_ms / last.mul_relin_rescale_ms,
        overlap_speedups,
        hoisted_steps: steps.to_vec(),
        hoisted,
        hoisted_speedup,
        identical_words: identical,
        bootstrapping_keys: boot_keys,
        rows,
    })
}

/// Bytes per GPU as MiB with one decimal, `" / "` between GPUs.
fn mib_per_gpu(bytes: &[u64]) -> String {
    bytes
        .iter()
        .map(|&b| format!("{:.1}", b as f64 / (1u64 << 20) as f64))
        .collect::<Vec<_>>()
        .join(" / ")
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
        let err = run_latency("boot_n17_levels24", have + 1, 1).unwrap_err();
        assert!(err.contains("usable GPU"), "{err}");
    }
}
