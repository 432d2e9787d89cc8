//! Rhea quick start: CKKS at N = 2^16 (25 levels, 128-bit secure).
//!
//! Encrypts two random vectors, evaluates `x·y + rotate(x, 1)` and a degree-7 polynomial of `x`,
//! decrypts, and prints the precision in bits against an f64 evaluation, the time of each step and
//! the device that ran it: `Device::best()`, the GPU when one is usable, else the CPU (the same
//! code runs on both, with bit-identical ciphertexts).
//!
//! ```text
//! cargo run --release -p rhea --example quickstart
//! ```

use std::time::Instant;

use rand::Rng;
use rhea::ckks::{Ciphertext, CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator};
use rhea::params::CkksParametersLiteral;
use rhea::{Device, Result};

/// Times one step (waiting for the device's queued work) and prints it.
fn step<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let device = Device::best();
    let start = Instant::now();
    let out = f()?;
    device.synchronize()?;
    println!(
        "  {what:<44} {:>9.1} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    Ok(out)
}

/// `-log2(max |got - want|)`.
fn precision_bits(got: &[f64], want: &[f64]) -> f64 {
    let err = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0f64, f64::max);
    -err.log2()
}

/// Coefficients of the degree-7 polynomial `p(t) = Σ c_k t^k`.
const POLY: [f64; 8] = [0.5, 0.75, -0.3, 0.25, -0.1, 0.05, -0.02, 0.01];

fn main() -> Result<()> {
    let device = Device::best();
    println!("Rhea quick start — device: {}", device.name());

    let params = step("validate parameters, precompute tables", || {
        CkksParametersLiteral::n16_logqp1560_levels24().build()
    })?;
    println!("  {params}");
    let ctx = step("context (uploads the ring's tables to the device)", || {
        CkksContext::new(&params, device)
    })?;

    let mut keygen = KeyGenerator::new(&ctx)?;
    let sk = step("secret key", || keygen.secret_key())?;
    let pk = step("public key", || keygen.public_key(&sk))?;
    let rlk = step("relinearization key", || keygen.relinearization_key(&sk))?;
    let gk = step("rotation key (step 1)", || {
        keygen.galois_keys(&sk, &[1], false)
    })?;

    let encoder = Encoder::new(&ctx)?;
    let encryptor = Encryptor::new(&ctx, &pk)?;
    let decryptor = Decryptor::new(&ctx, &sk)?;
    let eval = Evaluator::new(&ctx)
        .with_relinearization_key(rlk)?
        .with_galois_keys(gk)?;

    let n = encoder.slots();
    let mut rng = rand::rng();
    let x: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let y: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    println!("  {n} slots, inputs uniform in [-1, 1)");

    let cx = step("encode + encrypt x", || {
        encryptor.encrypt(&encoder.encode(&x)?)
    })?;
    let cy = step("encode + encrypt y", || {
        encryptor.encrypt(&encoder.encode(&y)?)
    })?;

    // x·y + rotate(x, 1)
    let xy = step("x·y (mul, relinearize, rescale)", || eval.mul(&cx, &cy))?;
    let rx = step("rotate(x, 1)", || eval.rotate(&cx, 1))?;
    let z = step("x·y + rotate(x, 1) (aligns levels)", || eval.add(&xy, &rx))?;

    // p(x) of degree 7: powers by squaring (depth 3), then Σ c_k x^k.
    let start = Instant::now();
    let p = step("degree-7 polynomial p(x)", || {
        let x2 = eval.square(&cx)?;
        let x3 = eval.mul(&x2, &cx)?;
        let x4 = eval.square(&x2)?;
        let x5 = eval.mul(&x4, &cx)?;
        let x6 = eval.mul(&x4, &x2)?;
        let x7 = eval.mul(&x4, &x3)?;
        let powers: [&Ciphertext; 7] = [&cx, &x2, &x3, &x4, &x5, &x6, &x7];
        let mut acc = eval.mul_const(powers[6], POLY[7])?;
        for k in (1..7).rev() {
            acc = eval.add(&acc, &eval.mul_const(powers[k - 1], POLY[k])?)?;
        }
        eval.add_const(&acc, POLY[0])
    })?;
    device.synchronize()?;
    let eval_ms = start.elapsed().as_secs_f64() * 1e3;

    let z_out = step("decrypt + decode x·y + rotate(x, 1)", || {
        encoder.decode(&decryptor.decrypt(&z)?)
    })?;
    let p_out = step("decrypt + decode p(x)", || {
        encoder.decode(&decryptor.decrypt(&p)?)
    })?;

    let z_want: Vec<f64> = (0..n).map(|i| x[i] * y[i] + x[(i + 1) % n]).collect();
    let p_want: Vec<f64> = x
        .iter()
        .map(|&t| POLY.iter().rev().fold(0.0, |acc, c| acc * t + c))
        .collect();
    println!();
    println!(
        "  x·y + rotate(x, 1): precision {:.1} bits (level {}, scale 2^{:.2})",
        precision_bits(&z_out, &z_want),
        z.level(),
        z.log_scale()
    );
    println!(
        "  p(x), degree 7:     precision {:.1} bits (level {}, scale 2^{:.2}, {:.0} ms)",
        precision_bits(&p_out, &p_want),
        p.level(),
        p.log_scale(),
        eval_ms
    );
    println!("  ran on: {}", device.name());
    Ok(())
}
