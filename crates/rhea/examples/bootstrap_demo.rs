//! Rhea bootstrapping demo: a computation deeper than the modulus chain, on encrypted data, with
//! automatic bootstrapping (`Evaluator::with_bootstrapper`).
//!
//! Encrypts values uniform in [−1, 1], runs 50 steps of `x ↦ x²/2 + 1/4` (two levels a step:
//! depth 100), and prints each step (level, scale, whether the evaluator bootstrapped its
//! input, time, precision against the same recurrence in `f64`), then the number of bootstraps,
//! the time per bootstrap and the final precision in bits. On the GPU (`Device::best()`) with
//! the 128-bit preset `boot_n16_levels13` (N = 2^16, 13 levels left to the user); on a CPU with
//! the **INSECURE** `boot_test_n12_insecure` (N = 2^12, 2 levels: one bootstrap a step, about a
//! second each), which is a demonstration of the mechanism, not of security.
//!
//! ```text
//! cargo run --release -p rhea --example bootstrap_demo [-- --preset NAME] [--steps N]
//! ```

use std::sync::Arc;
use std::time::Instant;

use rand::Rng;
use rhea::ckks::bootstrap::{BootstrapPreset, Bootstrapper};
use rhea::ckks::{CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator};
use rhea::{Device, Error, Result};

/// `-log2(max |got - want|)`.
fn precision_bits(got: &[f64], want: &[f64]) -> f64 {
    let err = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0f64, f64::max);
    -err.log2()
}

/// `--preset NAME` and `--steps N`.
fn args() -> Result<(Option<String>, usize)> {
    let mut preset = None;
    let mut steps = 50;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |what: &str| {
            it.next()
                .ok_or_else(|| Error::InvalidInput(format!("{a} needs {what}")))
        };
        match a.as_str() {
            "--preset" => preset = Some(value("a preset name")?),
            "--steps" => {
                steps = value("a number")?
                    .parse()
                    .map_err(|e| Error::InvalidInput(format!("--steps: {e}")))?
            }
            _ => {
                return Err(Error::InvalidInput(format!(
                    "unknown argument {a:?} (usage: bootstrap_demo [--preset NAME] [--steps N])"
                )))
            }
        }
    }
    Ok((preset, steps))
}

fn main() -> Result<()> {
    let (preset_name, steps) = args()?;
    let device = Device::best();
    let name = preset_name.unwrap_or_else(|| {
        if device.is_cpu() {
            "boot_test_n12_insecure".into()
        } else {
            "boot_n16_levels13".into()
        }
    });
    let preset = BootstrapPreset::by_name(&name).ok_or_else(|| {
        let names: Vec<_> = BootstrapPreset::all().iter().map(|p| p.name).collect();
        Error::InvalidInput(format!("no preset {name:?} (one of {names:?})"))
    })?;
    println!("Rhea bootstrapping demo — device: {}", device.name());
    let params = preset.params.build()?;
    let secure = params.security().meets_128_bits;
    println!("  preset {}: {}", preset.name, preset.purpose);
    if !secure {
        println!("  INSECURE parameters: a demonstration of the mechanism, not of security");
    }
    println!("  {params}");

    let start = Instant::now();
    let ctx = CkksContext::new(&params, device)?;
    let mut keygen = KeyGenerator::new(&ctx)?;
    let sk = keygen.secret_key()?;
    let pk = keygen.public_key(&sk)?;
    let rlk = keygen.relinearization_key(&sk)?;
    let boot = Arc::new(Bootstrapper::new_with_progress(
        &ctx,
        &mut keygen,
        &sk,
        preset.config,
        &mut |p| {
            // Progress once key generation takes more than a second (minutes on a CPU at 2^16).
            if start.elapsed().as_secs_f64() > 1.0 {
                eprint!(
                    "\r  keys {}/{} ({:.2} GB)",
                    p.done,
                    p.total,
                    p.bytes as f64 / 1e9
                );
            }
        },
    )?);
    if start.elapsed().as_secs_f64() > 1.0 {
        eprintln!();
    }
    device.synchronize()?;
    println!(
        "  keys and bootstrapper: {:.1} s (bootstrapping depth {}, {} levels left to the user; \
         {} keys, {:.2} GB)",
        start.elapsed().as_secs_f64(),
        boot.depth(),
        boot.user_levels(),
        boot.keyswitch_keys(),
        boot.key_bytes() as f64 / 1e9
    );

    let encoder = Encoder::new(&ctx)?;
    let encryptor = Encryptor::new(&ctx, &pk)?;
    let decryptor = Decryptor::new(&ctx, &sk)?;
    let eval = Evaluator::new(&ctx)
        .with_relinearization_key(rlk)?
        .with_bootstrapper(boot.clone())?;

    let n = encoder.slots();
    let mut rng = rand::rng();
    let mut want: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..=1.0)).collect();
    let mut x = encryptor.encrypt(&encoder.encode(&want)?)?;
    // One bootstrap first, untimed: the kernels compile and the transforms' diagonals are
    // encoded on first use.
    boot.bootstrap(&Evaluator::new(&ctx).drop_to_level(&x, boot.input_level())?)?;
    println!(
        "  {n} slots uniform in [-1, 1], at level {} (scale 2^{:.0}); {steps} steps of \
         x <- x²/2 + 1/4 (depth {})",
        x.level(),
        x.log_scale(),
        2 * steps
    );
    if device.is_cpu() {
        println!("  (on a CPU: one bootstrap a step, 0.5 to 1.5 s each on 2 cores)");
    }
    println!();
    println!("  step  level  bootstrapped      ms   bits");

    let (mut boot_ms, mut boot_steps, mut plain_ms, mut plain_steps) = (0.0, 0usize, 0.0, 0usize);
    for i in 1..=steps {
        let before = eval.bootstraps();
        let t = Instant::now();
        let y = eval.mul_const(&eval.square(&x)?, 0.5)?;
        x = eval.add_const(&y, 0.25)?;
        device.synchronize()?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let refreshed = eval.bootstraps() - before;
        if refreshed > 0 {
            boot_ms += ms;
            boot_steps += 1;
        } else {
            plain_ms += ms;
            plain_steps += 1;
        }
        for w in &mut want {
            *w = *w * *w / 2.0 + 0.25;
        }
        let bits = precision_bits(&encoder.decode(&decryptor.decrypt(&x)?)?, &want);
        println!(
            "  {i:>4}  {:>5}  {:>12}  {ms:>6.1}  {bits:>5.1}",
            x.level(),
            if refreshed > 0 { "yes" } else { "" }
        );
    }

    let got = encoder.decode(&decryptor.decrypt(&x)?)?;
    let count = eval.bootstraps();
    println!();
    println!(
        "  steps:               {steps} (multiplicative depth {})",
        2 * steps
    );
    println!("  bootstraps:          {count}");
    if count > 0 {
        // A step that bootstrapped costs a plain step plus its bootstrap(s).
        let plain = if plain_steps > 0 {
            plain_ms / plain_steps as f64
        } else {
            0.0
        };
        println!(
            "  time per bootstrap:  {:.1} ms (a plain step: {plain:.1} ms)",
            (boot_ms - boot_steps as f64 * plain) / count as f64
        );
    }
    println!(
        "  precision at the end: {:.1} bits against f64 (max abs error over {n} slots)",
        precision_bits(&got, &want)
    );
    println!(
        "  ran on: {}{}",
        device.name(),
        if secure {
            ""
        } else {
            " — INSECURE parameters"
        }
    );
    Ok(())
}
