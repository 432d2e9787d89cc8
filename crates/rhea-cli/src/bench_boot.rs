//! `rhea bench boot`: CKKS bootstrapping (issue 34) at a bootstrappable preset — latency, the
//! time of each stage, precision, the levels left, the keys it needs.
//!
//! - **latency_ms**: the median wall time of one [`Bootstrapper::bootstrap`] over `reps` calls
//!   (after warm-up), the device synchronised inside the timed region; the input at the lowest
//!   level a bootstrap accepts ([`Bootstrapper::input_level`]). **latency_real_ms**: the same
//!   for [`Bootstrapper::bootstrap_real`] (real slots: EvalMod once).
//! - **stages_ms**: one [`Bootstrapper::bootstrap_with_stages`] call (the device synchronised at
//!   each stage's end, so their sum is a little above an unsynchronised bootstrap).
//! - **precision**: inputs uniform in the unit square (real and imaginary parts in [−1, 1]),
//!   encrypted at the user's top level ([`CkksParameters::default_level`]) and dropped to
//!   [`Bootstrapper::input_level`]; the absolute error of slot `j` is `|decode(bootstrap(ct))_j − z_j|` (complex modulus).
//!   `precision_bits_min` is −log2 of the largest error over all slots; `precision_bits_mean`
//!   is −log2 of the **mean** absolute error (not the mean of the slots' −log2 errors, which
//!   the slots that happen to land very close would inflate). The `_real` figures are a second
//!   run, [`Bootstrapper::bootstrap_real`] on real inputs (imaginary parts 0), whose output is
//!   read as a real decoder reads it: the error is `|Re(decode_j) − x_j|`.
//! - **levels_left**: the levels a refreshed ciphertext has for the user at the scale Δ
//!   ([`Bootstrapper::user_levels`]: from [`Bootstrapper::output_level`] down to
//!   [`Bootstrapper::input_level`]); **depth**: the levels the pipeline consumes (SlotToCoeff's
//!   at the bottom of the chain, CoeffToSlot's and EvalMod's at the top).
//! - **key_bytes**: the bytes of every evaluation key the bootstrapper holds (see
//!   [`key_bytes`]); **keyswitches**, **fused_fallbacks**, **bytes_to_device**,
//!   **bytes_to_host**, **host_waits** (synchronisations and downloads): counted by the backend
//!   over one (warm) bootstrap.
//!
//! Inputs come from a seeded generator (`ChaCha8`, seed 34) and keys from a seeded key
//! generator, so every run sees the same data.
//!
//! [`CkksParameters::default_level`]: rhea::params::CkksParameters::default_level

use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rhea::ckks::bootstrap::{BootstrapPreset, Bootstrapper};
use rhea::ckks::{
    CkksContext, Complex64, Decryptor, DiagonalStorage, Encoder, Encryptor, Evaluator,
    KeyGenerator, RotationKeys,
};
use rhea::Device;
use serde::Serialize;

use crate::bench_ops::median_ms;

/// The time of each bootstrapping stage, ms, in the order they run.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct StagesMs {
    /// SlotToCoeff, at the bottom of the chain (down to level 0).
    pub slot_to_coeff: f64,
    /// The scale-up, the switch to the sparse secret, ModRaise, the switch back.
    pub mod_raise: f64,
    /// CoeffToSlot.
    pub coeff_to_slot: f64,
    /// The real/imaginary split and EvalMod on both halves.
    pub eval_mod: f64,
}

impl StagesMs {
    /// The sum of the stages.
    pub fn total(&self) -> f64 {
        self.mod_raise + self.coeff_to_slot + self.eval_mod + self.slot_to_coeff
    }
}

/// The result of one `rhea bench boot` run.
#[derive(Debug, Serialize)]
pub struct BootReport {
    /// The preset's name.
    pub preset: String,
    /// The ring degree `N`.
    pub n: usize,
    /// The slots bootstrapped.
    pub slots: usize,
    /// log2 of `Q·P`.
    pub log_qp: f64,
    /// Whether the parameters meet 128-bit security.
    pub secure_128: bool,
    /// Median latency of one bootstrap, ms.
    pub latency_ms: f64,
    /// Median latency of one bootstrap of real slots ([`Bootstrapper::bootstrap_real`]), ms.
    pub latency_real_ms: f64,
    /// One bootstrap's stages, ms (synchronised at each stage's end).
    pub stages_ms: StagesMs,
    /// −log2 of the mean absolute error over the slots (complex inputs).
    pub precision_bits_mean: f64,
    /// −log2 of the largest absolute error over the slots (complex inputs).
    pub precision_bits_min: f64,
    /// −log2 of the mean absolute error of the real parts (real inputs).
    pub precision_bits_mean_real: f64,
    /// −log2 of the largest absolute error of the real parts (real inputs).
    pub precision_bits_min_real: f64,
    /// The levels a refreshed ciphertext has for the user (at the scale Δ).
    pub levels_left: usize,
    /// The level of a refreshed ciphertext.
    pub output_level: usize,
    /// The lowest level a ciphertext is bootstrapped from.
    pub input_level: usize,
    /// log2 of the refreshed ciphertext's scale.
    pub output_scale_bits: f64,
    /// The levels the pipeline consumes.
    pub depth: usize,
    /// Bytes of every evaluation key the bootstrapper holds.
    pub key_bytes: u64,
    /// `per-baby-step` or `fewest` (`--keys`).
    pub rotation_keys: String,
    /// `whole`, `q-only` or `compact` (`--diagonals`): how the DFT matrices are kept.
    pub diagonals: String,
    /// Bytes of the encoded DFT matrices after the runs.
    pub matrix_bytes: u64,
    /// Device memory this process holds after the runs (total − free, as the driver reports
    /// it: keys, encoded matrices, the pool's cached buffers, the CUDA context); 0 on the CPU.
    pub device_memory_bytes: u64,
    /// The most bytes of device buffers live at once during the process (keys, matrices,
    /// ciphertexts, temporaries; the pool's cached buffers and the CUDA context apart): the
    /// memory a card needs for this bootstrapping; 0 on the CPU.
    pub device_peak_bytes: u64,
    /// How many key-switching keys that is (relinearisation, Galois, the two encapsulation
    /// keys).
    pub keyswitch_keys: usize,
    /// Of which Galois keys (rotations and conjugation).
    pub galois_keys: usize,
    /// Seconds to build the bootstrapper (its key generation, the transforms' matrices).
    pub keygen_s: f64,
    /// Key switchings of one bootstrap.
    pub keyswitches: u64,
    /// Fused GPU primitives that ran as their composition during one bootstrap.
    pub fused_fallbacks: u64,
    /// Bytes copied host → device during one bootstrap.
    pub bytes_to_device: u64,
    /// Bytes copied device → host during one bootstrap.
    pub bytes_to_host: u64,
    /// Host waits for the device during that bootstrap (synchronisations and downloads).
    pub host_waits: u64,
    /// The device that ran.
    pub device: String,
    /// Timed repetitions.
    pub reps: usize,
}

impl BootReport {
    /// A plain-text table of the results.
    pub fn table(&self) -> String {
        let total = self.latency_ms;
        let staged = self.stages_ms.total();
        let mut out = format!(
            "rhea bench boot — preset {} (N = 2^{}, log QP {:.0}, {}), {} slots, device {}, \
             median of {} calls\n",
            self.preset,
            self.n.trailing_zeros(),
            self.log_qp,
            if self.secure_128 {
                "128-bit"
            } else {
                "INSECURE"
            },
            self.slots,
            self.device,
            self.reps
        );
        let mut row = |k: &str, v: String| out.push_str(&format!("{k:<26} {v}\n"));
        row("latency_ms", format!("{total:.3}"));
        row(
            "latency_real_ms",
            format!("{:.3} (real slots: EvalMod once)", self.latency_real_ms),
        );
        let pct = |x: f64| {
            if staged > 0.0 {
                100.0 * x / staged
            } else {
                0.0
            }
        };
        let s = &self.stages_ms;
        for (name, ms) in [
            ("  slot_to_coeff", s.slot_to_coeff),
            ("  mod_raise", s.mod_raise),
            ("  coeff_to_slot", s.coeff_to_slot),
            ("  eval_mod", s.eval_mod),
        ] {
            row(name, format!("{ms:.3} ms ({:.1} %)", pct(ms)));
        }
        row(
            "  stages, synchronised",
            format!("{staged:.3} ms (one call)"),
        );
        row(
            "precision bits min/mean",
            format!(
                "{:.1} / {:.1} (complex)",
                self.precision_bits_min, self.precision_bits_mean
            ),
        );
        row(
            "",
            format!(
                "{:.1} / {:.1} (real)",
                self.precision_bits_min_real, self.precision_bits_mean_real
            ),
        );
        row(
            "levels_left",
            format!(
                "{} (levels {} down to {}, scale 2^{:.1})",
                self.levels_left, self.output_level, self.input_level, self.output_scale_bits
            ),
        );
        row("depth", self.depth.to_string());
        row(
            "key_bytes",
            format!(
                "{} ({:.2} GB; {} key-switching keys, {} of them Galois)",
                self.key_bytes,
                self.key_bytes as f64 / 1e9,
                self.keyswitch_keys,
                self.galois_keys
            ),
        );
        row("rotation keys", self.rotation_keys.clone());
        row(
            "DFT matrices",
            format!(
                "{} ({:.2} GB encoded)",
                self.diagonals,
                self.matrix_bytes as f64 / 1e9
            ),
        );
        if self.device_memory_bytes > 0 {
            row(
                "device memory held",
                format!(
                    "{:.2} GB ({:.2} GB of buffers live at the peak)",
                    self.device_memory_bytes as f64 / 1e9,
                    self.device_peak_bytes as f64 / 1e9
                ),
            );
        }
        row("key generation", format!("{:.2} s", self.keygen_s));
        row("keyswitches", self.keyswitches.to_string());
        row("fused_fallbacks", self.fused_fallbacks.to_string());
        row(
            "transfers (one bootstrap)",
            format!(
                "{} B to device, {} B to host",
                self.bytes_to_device, self.bytes_to_host
            ),
        );
        row("host waits (one bootstrap)", self.host_waits.to_string());
        out
    }
}

/// What `rhea bench boot` runs.
#[derive(Debug, Clone)]
pub struct BootOptions {
    /// A [`BootstrapPreset`] name.
    pub preset: String,
    /// The device.
    pub device: Device,
    /// Timed repetitions.
    pub reps: usize,
    /// The slots to bootstrap (default: the preset's, full slots).
    pub slots: Option<usize>,
    /// How CoeffToSlot and SlotToCoeff reach their baby steps (the key memory / time trade).
    pub rotation_keys: RotationKeys,
    /// How CoeffToSlot's and SlotToCoeff's matrices are kept (the memory / time trade).
    pub diagonal_storage: DiagonalStorage,
}

/// `--diagonals`: `whole`, `q-only` or `compact`.
pub fn parse_diagonal_storage(s: &str) -> Result<DiagonalStorage, String> {
    DiagonalStorage::from_name(s).ok_or_else(|| {
        format!(
            "rhea bench boot: --diagonals {s}: expected `whole` (the fastest), `q-only` (whole \
             over Q only, the products after each baby step's ModDown) or `compact` (one limb a \
             diagonal, expanded at each bootstrap)"
        )
    })
}

/// `--keys`: `per-baby-step` or `fewest`.
pub fn parse_rotation_keys(s: &str) -> Result<RotationKeys, String> {
    match s {
        "per-baby-step" => Ok(RotationKeys::PerBabyStep),
        "fewest" => Ok(RotationKeys::Fewest),
        other => Err(format!(
            "rhea bench boot: --keys {other}: expected `per-baby-step` (the fastest) or `fewest` \
             (the least key memory)"
        )),
    }
}

/// The bootstrappable presets, one a line: name, N, slots, log QP, levels left, security,
/// purpose (`rhea bench boot --preset list`).
pub fn list_presets() -> Result<String, String> {
    let mut out = format!(
        "{:<24} {:>6} {:>6} {:>7} {:>11} {:<9} purpose\n",
        "preset", "N", "slots", "log QP", "levels left", "security"
    );
    for p in BootstrapPreset::all() {
        let params = p.params.build().map_err(|e| e.to_string())?;
        out.push_str(&format!(
            "{:<24} {:>6} {:>6} {:>7.0} {:>11} {:<9} {}\n",
            p.name,
            format!("2^{}", params.log_n()),
            p.config.slots,
            params.log_qp(),
            params.max_level().saturating_sub(p.config.depth()),
            if params.security().meets_128_bits {
                "128-bit"
            } else {
                "INSECURE"
            },
            p.purpose
        ));
    }
    Ok(out)
}

/// The preset named `name`, or an error that lists the known ones.
fn preset(name: &str) -> Result<BootstrapPreset, String> {
    BootstrapPreset::by_name(name).ok_or_else(|| {
        let names: Vec<&str> = BootstrapPreset::all().iter().map(|p| p.name).collect();
        format!(
            "unknown bootstrapping preset `{name}` (known: {}; `--preset list` describes them)",
            names.join(", ")
        )
    })
}

/// −log2 of the largest and of the mean of `errors`: `(min bits, mean bits)`.
fn precision_bits(errors: &[f64]) -> (f64, f64) {
    let max = errors.iter().copied().fold(0.0f64, f64::max);
    let mean = errors.iter().sum::<f64>() / errors.len().max(1) as f64;
    (-max.log2(), -mean.log2())
}

/// Runs the benchmark (see the module's documentation). `progress` lines (key generation time)
/// go to stderr as they happen.
pub fn run_boot(opts: &BootOptions) -> Result<BootReport, String> {
    let preset = preset(&opts.preset)?;
    if opts.reps == 0 {
        return Err("rhea bench boot: --reps must be at least 1".into());
    }
    let run = || -> rhea::Result<BootReport> {
        let device = opts.device;
        let params = preset.params.build()?;
        let mut config = preset.config.clone();
        if let Some(s) = opts.slots {
            config.slots = s;
        }
        config.rotation_keys = opts.rotation_keys;
        config.diagonal_storage = opts.diagonal_storage;
        let ctx = CkksContext::new(&params, device)?;
        let mut keygen = KeyGenerator::from_seed(&ctx, [34; 32]);
        let sk = keygen.secret_key()?;
        let pk = keygen.public_key(&sk)?;
        let start = Instant::now();
        let boot =
            Bootstrapper::new_with_progress(&ctx, &mut keygen, &sk, config.clone(), &mut |p| {
                if start.elapsed().as_secs_f64() > 1.0 {
                    eprint!(
                        "\rrhea bench boot: keys {}/{} ({:.2} GB)",
                        p.done,
                        p.total,
                        p.bytes as f64 / 1e9
                    );
                }
            })?;
        if start.elapsed().as_secs_f64() > 1.0 {
            eprintln!();
        }
        device.synchronize()?;
        let keygen_s = start.elapsed().as_secs_f64();
        eprintln!("rhea bench boot: key generation: {keygen_s:.2} s");
        let (keyswitch_keys, galois_keys, key_bytes) = (
            boot.keyswitch_keys(),
            boot.keyswitch_keys() - 3,
            boot.key_bytes(),
        );

        let encoder = Encoder::with_slots(&ctx, config.slots)?;
        let encryptor = Encryptor::new(&ctx, &pk)?.with_seed([35; 32]);
        let decryptor = Decryptor::new(&ctx, &sk)?;
        let eval = Evaluator::new(&ctx);
        let mut rng = ChaCha8Rng::seed_from_u64(34);
        let slots = encoder.slots();

        // Complex inputs: warm-up and precision, then one counted bootstrap.
        let z: Vec<Complex64> = (0..slots)
            .map(|_| Complex64::new(rng.random_range(-1.0..=1.0), rng.random_range(-1.0..=1.0)))
            .collect();
        let ct = encryptor.encrypt(&encoder.encode_complex(&z)?)?;
        let low = eval.drop_to_level(&ct, boot.input_level())?;
        let out = boot.bootstrap(&low)?;
        device.synchronize()?;
        let got = encoder.decode_complex(&decryptor.decrypt(&out)?)?;
        let errors: Vec<f64> = got.iter().zip(&z).map(|(g, w)| (g - w).norm()).collect();
        let (precision_bits_min, precision_bits_mean) = precision_bits(&errors);
        let levels_left = out.level() - boot.input_level();
        let output_scale_bits = out.scale().log2();

        let (ks0, fb0) = (ctx.keyswitches(), device.fused_fallbacks());
        let (up0, down0) = (device.bytes_to_device()?, device.bytes_to_host()?);
        let waits0 = device.host_waits()?;
        boot.bootstrap(&low)?;
        let host_waits = device.host_waits()? - waits0;
        device.synchronize()?;
        let keyswitches = ctx.keyswitches() - ks0;
        let fused_fallbacks = device.fused_fallbacks() - fb0;
        let bytes_to_device = device.bytes_to_device()? - up0;
        let bytes_to_host = device.bytes_to_host()? - down0;

        let latency_ms = median_ms(opts.reps, || {
            boot.bootstrap(&low)?;
            device.synchronize()
        })?;
        let (_, stages) = boot.bootstrap_with_stages(&low)?;
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let stages_ms = StagesMs {
            slot_to_coeff: ms(stages.slot_to_coeff),
            mod_raise: ms(stages.mod_raise),
            coeff_to_slot: ms(stages.coeff_to_slot),
            eval_mod: ms(stages.eval_mod),
        };

        // Real inputs through bootstrap_real, read back as real parts.
        let x: Vec<f64> = (0..slots).map(|_| rng.random_range(-1.0..=1.0)).collect();
        let ct = encryptor.encrypt(&encoder.encode(&x)?)?;
        let low_real = eval.drop_to_level(&ct, boot.input_level())?;
        let out = boot.bootstrap_real(&low_real)?;
        let latency_real_ms = median_ms(opts.reps, || {
            boot.bootstrap_real(&low_real)?;
            device.synchronize()
        })?;
        let got = encoder.decode(&decryptor.decrypt(&out)?)?;
        let errors: Vec<f64> = got.iter().zip(&x).map(|(g, w)| (g - w).abs()).collect();
        let (precision_bits_min_real, precision_bits_mean_real) = precision_bits(&errors);

        Ok(BootReport {
            preset: preset.name.to_string(),
            n: params.n(),
            slots,
            log_qp: params.log_qp(),
            secure_128: params.security().meets_128_bits,
            latency_ms,
            latency_real_ms,
            stages_ms,
            precision_bits_mean,
            precision_bits_min,
            precision_bits_mean_real,
            precision_bits_min_real,
            levels_left,
            output_level: boot.output_level(),
            input_level: boot.input_level(),
            output_scale_bits,
            depth: boot.depth(),
            key_bytes,
            rotation_keys: match opts.rotation_keys {
                RotationKeys::PerBabyStep => "per-baby-step",
                RotationKeys::Fewest => "fewest",
            }
            .to_string(),
            diagonals: opts.diagonal_storage.name().to_string(),
            matrix_bytes: boot.matrix_bytes(),
            device_memory_bytes: device.memory_in_use()?,
            device_peak_bytes: device.buffer_peak_bytes()?,
            keyswitch_keys,
            galois_keys,
            keygen_s,
            keyswitches,
            fused_fallbacks,
            bytes_to_device,
            bytes_to_host,
            host_waits,
            device: device.name(),
            reps: opts.reps,
        })
    };
    run().map_err(|e| format!("rhea bench boot ({}): {e}", preset.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(reps: usize) -> BootOptions {
        BootOptions {
            preset: "boot_test_n12_insecure".into(),
            device: Device::Cpu,
            reps,
            slots: None,
            rotation_keys: RotationKeys::PerBabyStep,
            diagonal_storage: DiagonalStorage::Full,
        }
    }

    #[test]
    fn the_insecure_preset_bootstraps_with_its_precision_levels_and_keys() {
        let report = run_boot(&options(1)).unwrap();
        let json: serde_json::Value = serde_json::to_value(&report).unwrap();
        eprintln!("{}", report.table());
        let f = |k: &str| {
            json[k]
                .as_f64()
                .unwrap_or_else(|| panic!("{k} missing: {json}"))
        };
        assert_eq!(json["preset"], "boot_test_n12_insecure");
        assert_eq!(f("n"), 4096.0);
        assert_eq!(f("slots"), 2048.0);
        for k in [
            "precision_bits_min",
            "precision_bits_mean",
            "precision_bits_min_real",
            "precision_bits_mean_real",
        ] {
            assert!(f(k) >= 20.0 && f(k) < 60.0, "{k} = {}", f(k));
        }
        // The mean error is below the largest.
        assert!(f("precision_bits_mean") > f("precision_bits_min"), "{json}");
        assert_eq!(f("levels_left"), 2.0);
        assert_eq!((f("output_level"), f("input_level")), (5.0, 3.0));
        assert!(f("latency_real_ms") > 0.0);
        assert_eq!(f("output_scale_bits"), 40.0);
        assert_eq!(f("depth"), 14.0);
        assert!(f("key_bytes") > 0.0 && f("keygen_s") > 0.0);
        assert!(f("keyswitches") > 10.0, "{json}");
        assert_eq!(f("fused_fallbacks"), 0.0);
        assert_eq!(f("host_waits"), 0.0);
        assert_eq!(f("reps"), 1.0);
        assert!(!json["device"].as_str().unwrap().is_empty());
        let stages = &json["stages_ms"];
        // Every stage timed (no ratio between timings asserted: the machine may be shared).
        for k in ["mod_raise", "coeff_to_slot", "eval_mod", "slot_to_coeff"] {
            let v = stages[k].as_f64().unwrap();
            assert!(v > 0.0 && v.is_finite(), "{k}: {stages}");
        }
        assert!(f("latency_ms") > 0.0);
    }

    /// The bootstrapper's key count and bytes are those of the keys a key generator makes for
    /// its rotations: one relinearisation key, the Galois keys (conjugation included), two
    /// encapsulation keys.
    #[test]
    fn key_bytes_count_the_keys_the_bootstrapper_holds() {
        let p = BootstrapPreset::by_name("boot_test_n12_insecure").unwrap();
        let params = p.params.build().unwrap();
        let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
        let mut keygen = KeyGenerator::from_seed(&ctx, [1; 32]);
        let sk = keygen.secret_key().unwrap();
        let boot = Bootstrapper::new(&ctx, &mut keygen, &sk, p.config.clone()).unwrap();
        let gk = keygen.galois_keys(&sk, boot.rotations(), true).unwrap();
        assert_eq!(boot.keyswitch_keys(), gk.len() + 3);
        let rlk = keygen.relinearization_key(&sk).unwrap();
        assert!(boot.key_bytes() > (gk.size_bytes() + rlk.key().size_bytes()));
        assert!(boot.key_bytes() < (gk.size_bytes() + rlk.key().size_bytes()) * 2);
    }

    #[test]
    fn an_unknown_preset_lists_the_bootstrappable_ones() {
        let err = run_boot(&BootOptions {
            preset: "boot_n99".into(),
            ..options(1)
        })
        .unwrap_err();
        assert!(
            err.contains("unknown")
                && err.contains("boot_n99")
                && err.contains("boot_n16_levels13"),
            "{err}"
        );
        let listing = list_presets().unwrap();
        for p in BootstrapPreset::all() {
            assert!(listing.contains(p.name), "{listing}");
        }
        assert!(listing.contains("INSECURE") && listing.contains("128-bit"));
    }
}
