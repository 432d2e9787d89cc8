//! The paper-comparison suites of `rhea bench`:
//!
//! - `seal-routines` (seed 000): MulLin, MulLinRS, SqrLinRS, MulLinRSModSwAdd and Rotate at
//!   `N = 2^15`, 8 limbs ([`CkksParametersLiteral::n15_logqp400_levels7`]);
//! - `he-booster` (seed 003): BGV and CKKS HEADD / HEMUL / HEROT / ReScale at
//!   `log N / log QP = 13/218, 14/438, 15/881`;
//! - `matmul` (seed 000): encrypted element-wise polynomial matrix multiplication
//!   `C[i][j] = Σ_k A[i][k] ⊙ B[k][j]`, every entry a CKKS ciphertext of a full slot vector at
//!   `N = 2^13`, end to end (encode, encrypt, compute, decrypt, decode), checked against `f64`.
//!
//! Timed operations run once to warm up, then `reps` times; the median is reported. GPU work is
//! asynchronous, so every timed region ends with `device.synchronize()`.

use std::time::Instant;

use rand::Rng;
use rhea::bgv::{self, BgvParametersLiteral};
use rhea::ckks::{CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator};
use rhea::params::CkksParametersLiteral;
use rhea::Device;
use serde::Serialize;

use crate::bench_ops::{median_ms, stream_ms, OpTiming, SchemeBenchReport};

/// Times `f` (followed by a device synchronisation) and appends the median latency and the
/// back-to-back mean to `ops`.
fn time_op(
    ops: &mut Vec<OpTiming>,
    device: Device,
    reps: usize,
    op: &'static str,
    mut f: impl FnMut() -> rhea::Result<()>,
) -> rhea::Result<()> {
    let median_ms = median_ms(reps, || {
        f()?;
        device.synchronize()
    })?;
    let stream_ms = stream_ms(reps, &mut f, || device.synchronize())?;
    ops.push(OpTiming {
        op,
        level: None,
        median_ms,
        stream_ms,
    });
    Ok(())
}

fn random_vec(rng: &mut impl Rng, n: usize) -> Vec<f64> {
    (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
}

// ---------------------------------------------------------------------------- seal-routines

/// Runs the seed-000 SEAL routines at `N = 2^15`, 8 limbs, on fresh top-level ciphertexts:
/// MulLin (mul + relinearise), MulLinRS (+ rescale), SqrLinRS (square + relinearise + rescale),
/// MulLinRSModSwAdd (MulLinRS, then the top-level addend, encrypted at the product's scale,
/// switched down to the product's level and added) and Rotate (by one slot).
pub fn run_seal_routines(device: Device, reps: usize) -> Result<SchemeBenchReport, String> {
    let inner = || -> rhea::Result<SchemeBenchReport> {
        let params = CkksParametersLiteral::n15_logqp400_levels7().build()?;
        let ctx = CkksContext::new(&params, device)?;
        let mut keygen = KeyGenerator::new(&ctx)?;
        let sk = keygen.secret_key()?;
        let pk = keygen.public_key(&sk)?;
        let rlk = keygen.relinearization_key(&sk)?;
        let gk = keygen.galois_keys(&sk, &[1], false)?;
        let encoder = Encoder::new(&ctx)?;
        let encryptor = Encryptor::new(&ctx, &pk)?;
        let eval = Evaluator::new(&ctx)
            .with_auto_rescale(false)
            .with_relinearization_key(rlk)?
            .with_galois_keys(gk)?;
        let mut rng = rand::rng();
        let n = encoder.slots();
        let ca = encryptor.encrypt(&encoder.encode(&random_vec(&mut rng, n))?)?;
        let cb = encryptor.encrypt(&encoder.encode(&random_vec(&mut rng, n))?)?;
        // The addend is encrypted at the top level and at the product's scale (SEAL's pattern:
        // the scales match), so MulLinRSModSwAdd switches it down by dropping a limb only.
        let product_scale = eval.mul_relin_rescale(&ca, &cb)?.scale();
        let cc = encryptor.encrypt(&encoder.encode_at(
            &random_vec(&mut rng, n),
            params.max_level(),
            product_scale,
        )?)?;
        let mut ops = Vec::new();
        time_op(&mut ops, device, reps, "MulLin", || {
            eval.mul_relin(&ca, &cb).map(drop)
        })?;
        time_op(&mut ops, device, reps, "MulLinRS", || {
            eval.mul_relin_rescale(&ca, &cb).map(drop)
        })?;
        time_op(&mut ops, device, reps, "SqrLinRS", || {
            eval.square_relin_rescale(&ca).map(drop)
        })?;
        time_op(&mut ops, device, reps, "MulLinRSModSwAdd", || {
            eval.mul_relin_rescale(&ca, &cb)
                .and_then(|p| eval.add(&p, &cc))
                .map(drop)
        })?;
        time_op(&mut ops, device, reps, "Rotate", || {
            eval.rotate(&ca, 1).map(drop)
        })?;
        Ok(SchemeBenchReport {
            scheme: "ckks",
            preset: "n15_logqp400_levels7".to_string(),
            params: params.to_string(),
            device: device.name(),
            reps,
            ops,
        })
    };
    inner().map_err(|e| e.to_string())
}

// ---------------------------------------------------------------------------- he-booster

/// The result of `rhea bench he-booster`: one report per scheme and parameter set.
#[derive(Debug, Serialize)]
pub struct HeBoosterReport {
    /// The device that ran.
    pub device: String,
    /// Repetitions per operation.
    pub reps: usize,
    /// BGV then CKKS at each of the three sizes.
    pub sets: Vec<SchemeBenchReport>,
}

impl HeBoosterReport {
    /// A short table: one block per scheme and set.
    pub fn table(&self) -> String {
        let mut s = format!(
            "rhea bench he-booster on {} ({} reps, median)\n",
            self.device, self.reps
        );
        for set in &self.sets {
            s += &set.table();
        }
        s
    }
}

/// CKKS literals at HE-Booster's sizes (built here, not library presets): every `Q` prime its
/// own key-switching digit (`dnum = |Q|`), one special prime, `Δ = 2^40`, inside the same
/// 128-bit `log QP` budgets as the BGV sets.
///
/// (`P` must be at least the largest digit, here the first prime.)
///
/// - `13/218`: `Q = 45 + 3×40`, `P = 50` (log QP ≈ 215, levels 0..=3);
/// - `14/438`: `Q = 55 + 8×40`, `P = 60` (log QP ≈ 435, levels 0..=8);
/// - `15/881`: `Q = 60 + 18×40`, `P = 61` (log QP ≈ 841, levels 0..=18).
pub fn he_booster_ckks_literals() -> Vec<(&'static str, CkksParametersLiteral)> {
    let lit = |log_n: u32, first: u32, rest: usize, p: u32| {
        let mut l = CkksParametersLiteral::n13_logqp200_levels2();
        l.log_n = log_n;
        l.log_q = std::iter::once(first)
            .chain(std::iter::repeat(40).take(rest))
            .collect();
        l.log_p = vec![p];
        l.log_default_scale = 40;
        l.dnum = rest + 1;
        l
    };
    vec![
        ("he_booster_ckks_n13_logqp218", lit(13, 45, 3, 50)),
        ("he_booster_ckks_n14_logqp438", lit(14, 55, 8, 60)),
        ("he_booster_ckks_n15_logqp881", lit(15, 60, 18, 61)),
    ]
}

fn he_booster_bgv(
    name: &str,
    literal: &BgvParametersLiteral,
    device: Device,
    reps: usize,
) -> rhea::Result<SchemeBenchReport> {
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
    let mut vals = || -> Vec<u64> { (0..slots).map(|_| rng.random_range(0..t)).collect() };
    let cx = encryptor.encrypt(&encoder.encode(&vals())?)?;
    let cy = encryptor.encrypt(&encoder.encode(&vals())?)?;
    let product = eval.mul(&cx, &cy)?;
    let mut ops = Vec::new();
    time_op(&mut ops, device, reps, "HEADD", || {
        eval.add(&cx, &cy).map(drop)
    })?;
    time_op(&mut ops, device, reps, "HEMUL", || {
        eval.mul(&cx, &cy).map(drop)
    })?;
    time_op(&mut ops, device, reps, "HEROT", || {
        eval.rotate_rows(&cx, 1).map(drop)
    })?;
    time_op(&mut ops, device, reps, "ReScale", || {
        eval.mod_switch(&product).map(drop)
    })?;
    Ok(SchemeBenchReport {
        scheme: "bgv",
        preset: name.to_string(),
        params: params.to_string(),
        device: device.name(),
        reps,
        ops,
    })
}

fn he_booster_ckks(
    name: &str,
    literal: &CkksParametersLiteral,
    device: Device,
    reps: usize,
) -> rhea::Result<SchemeBenchReport> {
    let params = literal.build()?;
    let ctx = CkksContext::new(&params, device)?;
    let mut keygen = KeyGenerator::new(&ctx)?;
    let sk = keygen.secret_key()?;
    let pk = keygen.public_key(&sk)?;
    let rlk = keygen.relinearization_key(&sk)?;
    let gk = keygen.galois_keys(&sk, &[1], false)?;
    let encoder = Encoder::new(&ctx)?;
    let encryptor = Encryptor::new(&ctx, &pk)?;
    let eval = Evaluator::new(&ctx)
        .with_auto_rescale(false)
        .with_relinearization_key(rlk)?
        .with_galois_keys(gk)?;
    let mut rng = rand::rng();
    let n = encoder.slots();
    let cx = encryptor.encrypt(&encoder.encode(&random_vec(&mut rng, n))?)?;
    let cy = encryptor.encrypt(&encoder.encode(&random_vec(&mut rng, n))?)?;
    let product = eval.mul(&cx, &cy)?;
    let mut ops = Vec::new();
    time_op(&mut ops, device, reps, "HEADD", || {
        eval.add(&cx, &cy).map(drop)
    })?;
    time_op(&mut ops, device, reps, "HEMUL", || {
        eval.mul(&cx, &cy).map(drop)
    })?;
    time_op(&mut ops, device, reps, "HEROT", || {
        eval.rotate(&cx, 1).map(drop)
    })?;
    time_op(&mut ops, device, reps, "ReScale", || {
        eval.rescale(&product).map(drop)
    })?;
    Ok(SchemeBenchReport {
        scheme: "ckks",
        preset: name.to_string(),
        params: params.to_string(),
        device: device.name(),
        reps,
        ops,
    })
}

/// Runs HE-Booster's operations (seed 003) for BGV and CKKS at `log N / log QP = 13/218, 14/438,
/// 15/881`, on fresh top-level ciphertexts: HEADD (add), HEMUL (tensor + relinearisation, no
/// rescale), HEROT (rotation by one: BGV row rotation, CKKS slot rotation) and ReScale (BGV
/// modulus switch, CKKS rescale, of a product).
pub fn run_he_booster(device: Device, reps: usize) -> Result<HeBoosterReport, String> {
    let inner = || -> rhea::Result<HeBoosterReport> {
        let bgv_sets = [
            (
                "he_booster_n13_logqp218",
                BgvParametersLiteral::he_booster_n13_logqp218(),
            ),
            (
                "he_booster_n14_logqp438",
                BgvParametersLiteral::he_booster_n14_logqp438(),
            ),
            (
                "he_booster_n15_logqp881",
                BgvParametersLiteral::he_booster_n15_logqp881(),
            ),
        ];
        let mut sets = Vec::new();
        for ((bgv_name, bgv_lit), (ckks_name, ckks_lit)) in
            bgv_sets.iter().zip(he_booster_ckks_literals())
        {
            sets.push(he_booster_bgv(bgv_name, bgv_lit, device, reps)?);
            sets.push(he_booster_ckks(ckks_name, &ckks_lit, device, reps)?);
        }
        Ok(HeBoosterReport {
            device: device.name(),
            reps,
            sets,
        })
    };
    inner().map_err(|e| e.to_string())
}

// ---------------------------------------------------------------------------- matmul

/// Parses a matrix-product shape `MxKxN` (`A` is `M×K`, `B` is `K×N`).
pub fn parse_shape(s: &str) -> Result<(usize, usize, usize), String> {
    let dims: Vec<usize> = s
        .split('x')
        .map(|d| d.trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("bad shape `{s}` (use MxKxN, e.g. 100x100x1)"))?;
    match dims[..] {
        [m, k, n] if m > 0 && k > 0 && n > 0 => Ok((m, k, n)),
        _ => Err(format!(
            "bad shape `{s}` (use MxKxN with positive sizes, e.g. 100x100x1)"
        )),
    }
}

/// One end-to-end encrypted matrix product.
#[derive(Debug, Serialize)]
pub struct MatmulRun {
    /// `[M, K, N]`: `A` is `M×K`, `B` is `K×N`, `C` is `M×N`.
    pub shape: [usize; 3],
    /// Ciphertext multiplications (`M·K·N`).
    pub ct_mults: usize,
    /// Encoding of the `M·K + K·N` input vectors, ms.
    pub encode_ms: f64,
    /// Encryption of the inputs, ms.
    pub encrypt_ms: f64,
    /// The product: `mul_no_relin` + `add` per term, one relinearisation and one rescale per
    /// output, ms.
    pub compute_ms: f64,
    /// Decryption of the `M·N` outputs, ms.
    pub decrypt_ms: f64,
    /// Decoding of the outputs, ms.
    pub decode_ms: f64,
    /// Wall time of all the phases together, ms.
    pub total_ms: f64,
    /// Largest absolute error against the `f64` product, over all slots of all outputs.
    pub max_abs_error: f64,
    /// `−log2(max_abs_error)`.
    pub precision_bits: f64,
}

/// The result of `rhea bench matmul`.
#[derive(Debug, Serialize)]
pub struct MatmulReport {
    /// The preset's name.
    pub preset: String,
    /// The parameters, as displayed.
    pub params: String,
    /// The device that ran.
    pub device: String,
    /// Slots per ciphertext (a full vector).
    pub slots: usize,
    /// How the inner products are evaluated.
    pub method: &'static str,
    /// One entry per shape.
    pub runs: Vec<MatmulRun>,
}

impl MatmulReport {
    /// A short table.
    pub fn table(&self) -> String {
        let mut s = format!(
            "rhea bench matmul — {} on {}, {} slots per ciphertext\n  {}\n  {}\n",
            self.preset, self.device, self.slots, self.params, self.method
        );
        s += &format!(
            "  {:<10} {:>7} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>10}\n",
            "shape",
            "mults",
            "encode ms",
            "encrypt ms",
            "compute ms",
            "decrypt ms",
            "decode ms",
            "total ms",
            "prec bits"
        );
        for r in &self.runs {
            s += &format!(
                "  {:<10} {:>7} {:>11.1} {:>11.1} {:>11.1} {:>11.1} {:>11.1} {:>11.1} {:>10.1}\n",
                format!("{}x{}x{}", r.shape[0], r.shape[1], r.shape[2]),
                r.ct_mults,
                r.encode_ms,
                r.encrypt_ms,
                r.compute_ms,
                r.decrypt_ms,
                r.decode_ms,
                r.total_ms,
                r.precision_bits
            );
        }
        s
    }
}

/// Runs the seed-000 encrypted matrix product at `N = 2^13`
/// ([`CkksParametersLiteral::n13_logqp200_levels2`]) for each shape, end to end. Every entry of
/// `A` and `B` is a fresh top-level ciphertext of a full random vector in `[-1, 1)`; each output
/// is `Σ_k mul_no_relin(A[i][k], B[k][j])` accumulated with `add` (3-component ciphertexts),
/// then relinearised once and rescaled once. Each shape runs once, after a one-element warm-up.
pub fn run_matmul(
    device: Device,
    shapes: &[(usize, usize, usize)],
) -> Result<MatmulReport, String> {
    let inner = || -> rhea::Result<MatmulReport> {
        let params = CkksParametersLiteral::n13_logqp200_levels2().build()?;
        let ctx = CkksContext::new(&params, device)?;
        let mut keygen = KeyGenerator::new(&ctx)?;
        let sk = keygen.secret_key()?;
        let pk = keygen.public_key(&sk)?;
        let rlk = keygen.relinearization_key(&sk)?;
        let encoder = Encoder::new(&ctx)?;
        let encryptor = Encryptor::new(&ctx, &pk)?;
        let decryptor = Decryptor::new(&ctx, &sk)?;
        let eval = Evaluator::new(&ctx)
            .with_auto_rescale(false)
            .with_relinearization_key(rlk)?;
        let slots = encoder.slots();
        let mut rng = rand::rng();

        // Warm-up (GPU kernel compilation, allocator): one element through every phase.
        {
            let x = encryptor.encrypt(&encoder.encode(&random_vec(&mut rng, slots))?)?;
            let t = eval.mul_no_relin(&x, &x)?;
            let t = eval.add(&t, &eval.mul_no_relin(&x, &x)?)?;
            let y = eval.rescale(&eval.relinearize(&t)?)?;
            encoder.decode(&decryptor.decrypt(&y)?)?;
            device.synchronize()?;
        }

        let mut runs = Vec::new();
        for &(m, k, n) in shapes {
            let a: Vec<Vec<f64>> = (0..m * k).map(|_| random_vec(&mut rng, slots)).collect();
            let b: Vec<Vec<f64>> = (0..k * n).map(|_| random_vec(&mut rng, slots)).collect();
            let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
            let start = Instant::now();

            let t = Instant::now();
            let pa = encoder.encode_batch(&a)?;
            let pb = encoder.encode_batch(&b)?;
            device.synchronize()?;
            let encode_ms = ms(t);

            let t = Instant::now();
            let ca = pa
                .iter()
                .map(|p| encryptor.encrypt(p))
                .collect::<rhea::Result<Vec<_>>>()?;
            let cb = pb
                .iter()
                .map(|p| encryptor.encrypt(p))
                .collect::<rhea::Result<Vec<_>>>()?;
            device.synchronize()?;
            let encrypt_ms = ms(t);
            drop((pa, pb));

            let t = Instant::now();
            let mut cc = Vec::with_capacity(m * n);
            for i in 0..m {
                for j in 0..n {
                    let mut acc = eval.mul_no_relin(&ca[i * k], &cb[j])?;
                    for kk in 1..k {
                        let term = eval.mul_no_relin(&ca[i * k + kk], &cb[kk * n + j])?;
                        acc = eval.add(&acc, &term)?;
                    }
                    cc.push(eval.rescale(&eval.relinearize(&acc)?)?);
                }
            }
            device.synchronize()?;
            let compute_ms = ms(t);
            drop((ca, cb));

            let t = Instant::now();
            let pc = cc
                .iter()
                .map(|c| decryptor.decrypt(c))
                .collect::<rhea::Result<Vec<_>>>()?;
            device.synchronize()?;
            let decrypt_ms = ms(t);

            let t = Instant::now();
            let c = pc
                .iter()
                .map(|p| encoder.decode(p))
                .collect::<rhea::Result<Vec<_>>>()?;
            let decode_ms = ms(t);
            let total_ms = ms(start);

            let mut max_abs_error = 0.0f64;
            for i in 0..m {
                for j in 0..n {
                    let got = &c[i * n + j];
                    for (s, g) in got.iter().enumerate() {
                        let want: f64 = (0..k).map(|kk| a[i * k + kk][s] * b[kk * n + j][s]).sum();
                        max_abs_error = max_abs_error.max((g - want).abs());
                    }
                }
            }
            runs.push(MatmulRun {
                shape: [m, k, n],
                ct_mults: m * k * n,
                encode_ms,
                encrypt_ms,
                compute_ms,
                decrypt_ms,
                decode_ms,
                total_ms,
                max_abs_error,
                precision_bits: -max_abs_error.log2(),
            });
        }
        Ok(MatmulReport {
            preset: "n13_logqp200_levels2".to_string(),
            params: params.to_string(),
            device: device.name(),
            slots,
            method: "C[i][j] = rescale(relinearize(Σ_k mul_no_relin(A[i][k], B[k][j]))): \
                     3-component accumulation, one relinearisation and one rescale per output",
            runs,
        })
    };
    inner().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse_and_reject() {
        assert_eq!(parse_shape("100x100x1"), Ok((100, 100, 1)));
        assert_eq!(parse_shape("10x9x8"), Ok((10, 9, 8)));
        for bad in ["", "10x9", "10x9x8x7", "0x1x1", "ax1x1", "10x-1x2"] {
            assert!(parse_shape(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn he_booster_ckks_literals_fit_their_budgets() {
        for ((name, lit), budget) in he_booster_ckks_literals().iter().zip([218.0, 438.0, 881.0]) {
            let p = lit.build().unwrap_or_else(|e| panic!("{name}: {e}"));
            let log_qp = p.log_q() + p.log_p();
            assert!(log_qp <= budget, "{name}: log QP {log_qp} > {budget}");
            assert!(p.security().meets_128_bits, "{name}");
            assert_eq!(p.dnum(), p.q_primes().len(), "{name}");
        }
    }

    #[test]
    fn matmul_small_is_correct_on_cpu() {
        let report = run_matmul(Device::Cpu, &[(2, 3, 2)]).unwrap();
        let run = &report.runs[0];
        assert_eq!(run.ct_mults, 12);
        assert!(run.precision_bits > 15.0, "{}", run.precision_bits);
    }
}
