//! `rhea bench linalg` and `rhea bench poly`: the CKKS linear-algebra and polynomial machinery
//! (issue 33) timed at a preset's top level, each case with its precision, levels and key
//! switches.
//!
//! - **latency_ms**: the median wall time of one call over `reps` calls (after one warm-up), the
//!   device synchronised inside the timed region.
//! - **precision_bits**: −log2 of the largest absolute error over all slots against the same
//!   computation in `f64` (the same matrix, the same polynomial — not the function it
//!   approximates: that error is reported apart, as `approx_error_bits`), inputs uniform in the
//!   case's domain ([−1, 1] unless the case says otherwise).
//! - **levels_used**: input level − output level.
//! - **keyswitches**: counted by the backend (`CkksContext::keyswitches`) over one call.
//!
//! Inputs and matrices are drawn from a seeded generator (`ChaCha8`, seed 33), so every run
//! sees the same data.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rhea::ckks::functions::{InvSqrt, Inverse, Sign};
use rhea::ckks::{
    Ciphertext, CkksContext, Complex64, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator,
    LinearTransform, Plaintext, Polynomial,
};
use rhea::Device;
use serde::Serialize;

use crate::bench_ops::median_ms;

/// One measured case.
#[derive(Debug, Serialize)]
pub struct CaseResult {
    /// Short name of the case (`lt64`, `sigmoid63`, …).
    pub case: String,
    /// What the case computes.
    pub detail: String,
    /// Median latency of one call, ms.
    pub latency_ms: f64,
    /// −log2 of the max absolute error against the same computation in `f64`.
    pub precision_bits: f64,
    /// −log2 of the max absolute error of the approximation itself (polynomial against the
    /// function), where there is one.
    pub approx_error_bits: Option<f64>,
    /// Levels consumed.
    pub levels_used: usize,
    /// Key switchings of one call, counted by the backend.
    pub keyswitches: u64,
    /// The device that ran.
    pub device: String,
}

/// The result of one `rhea bench linalg|poly` run.
#[derive(Debug, Serialize)]
pub struct MachineryReport {
    /// `linalg` or `poly`.
    pub suite: &'static str,
    /// The preset.
    pub preset: String,
    /// The slots of the ciphertexts.
    pub slots: usize,
    /// The device.
    pub device: String,
    /// Timed repetitions per case.
    pub reps: usize,
    /// The cases.
    pub cases: Vec<CaseResult>,
}

impl MachineryReport {
    /// A plain-text table of the cases.
    pub fn table(&self) -> String {
        let mut out = format!(
            "rhea bench {} — preset {}, {} slots, device {}, median of {} calls\n",
            self.suite, self.preset, self.slots, self.device, self.reps
        );
        out.push_str(&format!(
            "{:<14} {:>11} {:>9} {:>8} {:>7} {:>6}  {}\n",
            "case", "latency ms", "bits", "approx", "levels", "ks", "what"
        ));
        for c in &self.cases {
            out.push_str(&format!(
                "{:<14} {:>11.3} {:>9.1} {:>8} {:>7} {:>6}  {}\n",
                c.case,
                c.latency_ms,
                c.precision_bits,
                c.approx_error_bits
                    .map_or("-".to_string(), |b| format!("{b:.1}")),
                c.levels_used,
                c.keyswitches,
                c.detail
            ));
        }
        out
    }
}

/// Keys, encoder and evaluator at a preset on a device.
struct Bench {
    ctx: CkksContext,
    encoder: Encoder,
    encryptor: Encryptor,
    decryptor: Decryptor,
    eval: Evaluator,
    device: Device,
    rng: ChaCha8Rng,
    reps: usize,
}

impl Bench {
    fn new(preset: &str, device: Device, reps: usize, rotations: &[i64]) -> Result<Self, String> {
        let literal = crate::files::ckks_literal(preset).map_err(|e| e.to_string())?;
        let build = || -> rhea::Result<Self> {
            let params = literal.build()?;
            let ctx = CkksContext::new(&params, device)?;
            let mut keygen = KeyGenerator::from_seed(&ctx, [33; 32]);
            let sk = keygen.secret_key()?;
            let pk = keygen.public_key(&sk)?;
            let rlk = keygen.relinearization_key(&sk)?;
            let mut steps: Vec<i64> = rotations.to_vec();
            steps.sort_unstable();
            steps.dedup();
            let gk = keygen.galois_keys(&sk, &steps, false)?;
            Ok(Self {
                encoder: Encoder::new(&ctx)?,
                encryptor: Encryptor::new(&ctx, &pk)?.with_seed([34; 32]),
                decryptor: Decryptor::new(&ctx, &sk)?,
                eval: Evaluator::new(&ctx)
                    .with_auto_rescale(false)
                    .with_relinearization_key(rlk)?
                    .with_galois_keys(gk)?,
                ctx,
                device,
                rng: ChaCha8Rng::seed_from_u64(33),
                reps,
            })
        };
        build().map_err(|e| e.to_string())
    }

    fn slots(&self) -> usize {
        self.encoder.slots()
    }

    fn uniform(&mut self, len: usize, lo: f64, hi: f64) -> Vec<f64> {
        (0..len).map(|_| self.rng.random_range(lo..hi)).collect()
    }

    fn encrypt(&self, values: &[f64]) -> rhea::Result<Ciphertext> {
        self.encryptor.encrypt(&self.encoder.encode(values)?)
    }

    fn decrypt(&self, ct: &Ciphertext) -> rhea::Result<Vec<Complex64>> {
        self.encoder.decode_complex(&self.decryptor.decrypt(ct)?)
    }

    /// Times `f` on `input`, counts its key switches, and measures the precision of its output
    /// against `want`.
    fn case(
        &self,
        case: &str,
        detail: String,
        input: &Ciphertext,
        want: &[Complex64],
        approx_error: Option<f64>,
        f: &dyn Fn(&Ciphertext) -> rhea::Result<Ciphertext>,
    ) -> rhea::Result<CaseResult> {
        let before = self.ctx.keyswitches();
        let out = f(input)?;
        self.device.synchronize()?;
        let keyswitches = self.ctx.keyswitches() - before;
        let got = self.decrypt(&out)?;
        let err = got
            .iter()
            .zip(want)
            .map(|(g, w)| (g - w).norm())
            .fold(0.0f64, f64::max);
        let latency_ms = median_ms(self.reps, || {
            f(input)?;
            self.device.synchronize()
        })?;
        Ok(CaseResult {
            case: case.to_string(),
            detail,
            latency_ms,
            precision_bits: -err.log2(),
            approx_error_bits: approx_error.map(|e| -e.log2()),
            levels_used: input.level() - out.level(),
            keyswitches,
            device: self.device.name(),
        })
    }
}

fn complex(v: &[f64]) -> Vec<Complex64> {
    v.iter().map(|&x| Complex64::new(x, 0.0)).collect()
}

/// Runs the linear-algebra cases: a 64-diagonal transform by baby-step/giant-step with double
/// hoisting, the same transform with one rotation per diagonal, a dense 256×256 matrix–vector
/// product on a replicated 256-vector at full slots, the sum of all slots and an inner product.
pub fn run_linalg(preset: &str, device: Device, reps: usize) -> Result<MachineryReport, String> {
    let literal = crate::files::ckks_literal(preset).map_err(|e| e.to_string())?;
    let slots = 1usize << (literal.log_n - 1);
    let fail = |e: rhea::Error| e.to_string();
    // The transforms first (without keys), to know their rotations.
    let mut rng = ChaCha8Rng::seed_from_u64(35);
    let diagonals: Vec<(i64, Vec<f64>)> = (0..64)
        .map(|k| (k, (0..slots).map(|_| rng.random_range(-1.0..1.0)).collect()))
        .collect();
    let lt64 = LinearTransform::from_diagonals(slots, diagonals.clone()).map_err(fail)?;
    let dense: Vec<Vec<f64>> = (0..256)
        .map(|_| {
            (0..256)
                .map(|_| rng.random_range(-1.0..1.0) / 16.0)
                .collect()
        })
        .collect();
    let mat256 = LinearTransform::from_dense_replicated(slots, &dense).map_err(fail)?;
    // The same transform at other baby-step counts (the default minimises a cost in which a
    // giant step counts 4 baby steps).
    let variants: Vec<LinearTransform> = [4, 8, 32]
        .into_iter()
        .map(|n1| {
            LinearTransform::from_diagonals(slots, diagonals.clone())
                .and_then(|lt| lt.with_baby_steps(n1))
        })
        .collect::<rhea::Result<_>>()
        .map_err(fail)?;
    let naive_steps: Vec<i64> = (1..64).collect();
    let mut steps = lt64.rotations();
    for v in &variants {
        steps.extend(v.rotations());
    }
    steps.extend(mat256.rotations());
    steps.extend(&naive_steps);
    steps.extend(Evaluator::sum_slots_rotations(slots));
    steps.extend(Evaluator::inner_product_rotations(slots));
    let mut b = Bench::new(preset, device, reps, &steps)?;
    let run = |b: &mut Bench| -> rhea::Result<Vec<CaseResult>> {
        let x = b.uniform(slots, -1.0, 1.0);
        let y = b.uniform(slots, -1.0, 1.0);
        let (cx, cy) = (b.encrypt(&x)?, b.encrypt(&y)?);
        let mut cases = Vec::new();

        let want = lt64.apply(&complex(&x))?;
        cases.push(b.case(
            "lt64",
            format!(
                "64-diagonal transform, BSGS {}x{}, double hoisting",
                lt64.baby_steps(),
                lt64.giant_steps()
            ),
            &cx,
            &want,
            None,
            &|ct| b.eval.linear_transform(ct, &lt64),
        )?);

        for v in &variants {
            cases.push(b.case(
                &format!("lt64_n1_{}", v.baby_steps()),
                format!("the same, BSGS {}x{}", v.baby_steps(), v.giant_steps()),
                &cx,
                &want,
                None,
                &|ct| b.eval.linear_transform(ct, v),
            )?);
        }

        // One rotation per diagonal: the diagonals encoded once at the input's level and at
        // scale q_ℓ, so that the rescaled sum keeps the input's scale (as the transform does).
        let level = cx.level();
        let q_top = b.ctx.params().q_primes()[level] as f64;
        let plain: Vec<Plaintext> = diagonals
            .iter()
            .map(|(_, d)| b.encoder.encode_at(d, level, q_top))
            .collect::<rhea::Result<_>>()?;
        cases.push(b.case(
            "lt64_naive",
            "the same transform, one rotation per diagonal".into(),
            &cx,
            &want,
            None,
            &|ct| {
                let mut acc = b.eval.mul_plain(ct, &plain[0])?;
                for (k, pt) in plain.iter().enumerate().skip(1) {
                    let mut r = b.eval.rotate(ct, k as i64)?;
                    b.eval.mul_plain_assign(&mut r, pt)?;
                    b.eval.add_assign(&mut acc, &r)?;
                }
                b.eval.rescale(&acc)
            },
        )?);

        let v256: Vec<f64> = (0..slots).map(|i| x[i % 256]).collect();
        let c256 = b.encrypt(&v256)?;
        let want = mat256.apply(&complex(&v256))?;
        cases.push(b.case(
            "matvec256",
            format!(
                "dense 256x256 matrix x replicated vector, {} diagonals, BSGS {}x{}",
                mat256.diagonal_count(),
                mat256.baby_steps(),
                mat256.giant_steps()
            ),
            &c256,
            &want,
            None,
            &|ct| b.eval.linear_transform(ct, &mat256),
        )?);

        let total: f64 = x.iter().sum();
        cases.push(b.case(
            "sum_slots",
            format!("sum of all {slots} slots into every slot"),
            &cx,
            &vec![Complex64::new(total, 0.0); slots],
            None,
            &|ct| b.eval.sum_slots(ct),
        )?);
        let dot: f64 = x.iter().zip(&y).map(|(a, c)| a * c).sum();
        cases.push(b.case(
            "inner_product",
            format!("inner product of two {slots}-vectors"),
            &cx,
            &vec![Complex64::new(dot, 0.0); slots],
            None,
            &|ct| b.eval.inner_product(ct, &cy),
        )?);
        Ok(cases)
    };
    let cases = run(&mut b).map_err(fail)?;
    Ok(MachineryReport {
        suite: "linalg",
        preset: preset.to_string(),
        slots,
        device: device.name(),
        reps,
        cases,
    })
}

/// A smooth function fitted by Chebyshev interpolation.
struct Smooth {
    name: &'static str,
    detail: &'static str,
    f: fn(f64) -> f64,
    domain: (f64, f64),
    degree: usize,
}

/// A homomorphic evaluation `(evaluator, input, target scale) → output`.
type Homomorphic<'a> = Box<dyn Fn(&Evaluator, &Ciphertext, f64) -> rhea::Result<Ciphertext> + 'a>;

/// A standard function: its homomorphic evaluation and its own `f64` computation.
struct Function<'a> {
    name: &'static str,
    detail: &'static str,
    depth: usize,
    approx: f64,
    domain: (f64, f64),
    run: Homomorphic<'a>,
    plain: Box<dyn Fn(f64) -> f64 + 'a>,
}

/// Runs the polynomial cases: sigmoid on [−8, 8] at degree 63, exp on [−1, 1] at degree 15 and
/// tanh on [−4, 4] at degree 31 (Chebyshev interpolants), inputs uniform on the interval; then
/// sign (minimax composite), 1/x and 1/√x on their domains, where the preset has the levels.
pub fn run_poly(preset: &str, device: Device, reps: usize) -> Result<MachineryReport, String> {
    let fail = |e: rhea::Error| e.to_string();
    let mut b = Bench::new(preset, device, reps, &[])?;
    let slots = b.slots();
    let smooth = [
        Smooth {
            name: "sigmoid63",
            detail: "sigmoid on [-8, 8], degree 63",
            f: |x| 1.0 / (1.0 + (-x).exp()),
            domain: (-8.0, 8.0),
            degree: 63,
        },
        Smooth {
            name: "exp15",
            detail: "exp on [-1, 1], degree 15",
            f: f64::exp,
            domain: (-1.0, 1.0),
            degree: 15,
        },
        Smooth {
            name: "tanh31",
            detail: "tanh on [-4, 4], degree 31",
            f: f64::tanh,
            domain: (-4.0, 4.0),
            degree: 31,
        },
    ];
    let mut cases = Vec::new();
    for Smooth {
        name,
        detail,
        f,
        domain: (lo, hi),
        degree,
    } in smooth
    {
        let fit = Polynomial::interpolate(f, lo, hi, degree).map_err(fail)?;
        let x = b.uniform(slots, lo, hi);
        let ct = b.encrypt(&x).map_err(fail)?;
        let want: Vec<Complex64> = x
            .iter()
            .map(|&v| Complex64::new(fit.polynomial.evaluate(v), 0.0))
            .collect();
        let target = ct.scale();
        let p = &fit.polynomial;
        cases.push(
            b.case(
                name,
                format!("{detail}, depth {}", p.depth()),
                &ct,
                &want,
                Some(fit.max_error),
                &|c| b.eval.evaluate_polynomial(c, p, target),
            )
            .map_err(fail)?,
        );
    }
    // The standard functions built on it, each against its own f64 computation.
    let top = b.ctx.params().max_level();
    let sign = Sign::minimax(15, 8, 1.0 / 16.0).map_err(fail)?;
    let inverse = Inverse::new(1.0, 4.0, 5).map_err(fail)?;
    let inv_sqrt = InvSqrt::new(1.0, 4.0, 1, 3).map_err(fail)?;
    let functions: Vec<Function<'_>> = vec![
        Function {
            name: "sign",
            detail: "sign, minimax composite 15x2, |x| in [1/16, 1], 8-bit precision",
            depth: sign.depth(),
            approx: sign.max_error(),
            domain: (-1.0, 1.0),
            run: Box::new(|e, c, t| sign.sign(e, c, t)),
            plain: Box::new(|x| sign.evaluate_plain(x)),
        },
        Function {
            name: "inverse",
            detail: "1/x on [1, 4], Goldschmidt, 5 iterations",
            depth: inverse.depth(),
            approx: inverse.approximation_error(),
            domain: (1.0, 4.0),
            run: Box::new(|e, c, t| inverse.evaluate(e, c, t)),
            plain: Box::new(|x| inverse.evaluate_plain(x)),
        },
        Function {
            name: "inv_sqrt",
            detail: "1/sqrt(x) on [1, 4], linear guess, 3 Newton steps",
            depth: inv_sqrt.depth(),
            approx: inv_sqrt.approximation_error(),
            domain: (1.0, 4.0),
            run: Box::new(|e, c, t| inv_sqrt.evaluate(e, c, t)),
            plain: Box::new(|x| inv_sqrt.evaluate_plain(x)),
        },
    ];
    for Function {
        name,
        detail,
        depth,
        approx,
        domain: (lo, hi),
        run,
        plain,
    } in functions
    {
        if depth > top {
            eprintln!(
                "rhea bench poly: {name} needs {depth} levels, the preset has {top}: skipped"
            );
            continue;
        }
        let mut x = b.uniform(slots, lo, hi);
        if name == "sign" {
            // Inputs away from 0 by the gap: |x| in [1/16, 1].
            for v in &mut x {
                *v = v.signum() * (1.0 / 16.0 + v.abs() * (15.0 / 16.0));
            }
        }
        let ct = b.encrypt(&x).map_err(fail)?;
        let want: Vec<Complex64> = x.iter().map(|&v| Complex64::new(plain(v), 0.0)).collect();
        let target = ct.scale();
        cases.push(
            b.case(
                name,
                format!("{detail}, depth {depth}"),
                &ct,
                &want,
                Some(approx),
                &|c| run(&b.eval, c, target),
            )
            .map_err(fail)?,
        );
    }
    Ok(MachineryReport {
        suite: "poly",
        preset: preset.to_string(),
        slots,
        device: device.name(),
        reps,
        cases,
    })
}
