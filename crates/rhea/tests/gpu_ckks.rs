//! CKKS end to end on the GPU: the same scheme code on `Device::Cuda(0)` and `Device::Cpu`, from
//! the same seeds, gives the same ciphertext words for every operation, decrypts correctly, and
//! moves no byte between host and device during evaluation.
//!
//! Every test is `#[ignore]`d, so a machine without a GPU lists them as ignored, never as
//! passed; `cargo test -- --include-ignored` (what `scripts/gpu-run.sh` runs) runs them, and then
//! a missing GPU is a failure.

use std::time::Instant;

use num_complex::Complex64;
use rhea::ckks::{
    Ciphertext, CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator, Plaintext,
};
use rhea::params::{CkksParameters, CkksParametersLiteral};
use rhea::rlwe::{PublicKey, SecretKey};
use rhea::unstable::HasRing;
use rhea::Device;
use std::sync::{Mutex, MutexGuard};

const GPU: Device = Device::Cuda(0);

/// Serialises the tests of this binary on the GPU: the device's host↔device byte counters are
/// per device, so a test that checks them must not see another test's uploads.
static GPU_LOCK: Mutex<()> = Mutex::new(());

/// GPU 0, held exclusively for the test while the guard lives, for a test marked
/// `#[ignore = "needs a CUDA GPU ..."]` (run with `--include-ignored`, as `scripts/gpu-run.sh`
/// does): a missing GPU is a failure.
#[track_caller]
fn require_gpu(test: &str) -> MutexGuard<'static, ()> {
    if let Err(e) = GPU.check_supported() {
        panic!(
            "{test}: needs a CUDA GPU, and none is usable ({e}); GPU tests are #[ignore]d: run \
             them on a GPU machine (scripts/gpu-run.sh), or leave out --include-ignored"
        );
    }
    // A test that panicked while holding the lock leaves nothing inconsistent behind.
    GPU_LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Seeded keys, an encoder, evaluators (auto-rescale and manual) on one device.
struct Keys {
    ctx: CkksContext,
    sk: SecretKey,
    pk: PublicKey,
    encoder: Encoder,
    eval: Evaluator,
    manual: Evaluator,
}

impl Keys {
    fn new(params: &CkksParameters, device: Device, steps: &[i64]) -> Keys {
        let ctx = CkksContext::new(params, device).expect("context");
        let mut keygen = KeyGenerator::from_seed(&ctx, [42; 32]);
        let sk = keygen.secret_key().unwrap();
        let pk = keygen.public_key(&sk).unwrap();
        let rlk = std::sync::Arc::new(keygen.relinearization_key(&sk).unwrap());
        let gk = std::sync::Arc::new(keygen.galois_keys(&sk, steps, true).unwrap());
        let encoder = Encoder::new(&ctx).unwrap();
        let eval = Evaluator::new(&ctx)
            .with_relinearization_key(rlk.clone())
            .unwrap()
            .with_galois_keys(gk.clone())
            .unwrap();
        let manual = Evaluator::new(&ctx)
            .with_relinearization_key(rlk)
            .unwrap()
            .with_galois_keys(gk)
            .unwrap()
            .with_auto_rescale(false);
        Keys {
            ctx,
            sk,
            pk,
            encoder,
            eval,
            manual,
        }
    }

    fn encode(&self, z: &[Complex64]) -> Plaintext {
        self.encoder.encode_complex(z).unwrap()
    }

    fn encrypt_pk(&self, z: &[Complex64], seed: u8) -> Ciphertext {
        Encryptor::new(&self.ctx, &self.pk)
            .unwrap()
            .with_seed([seed; 32])
            .encrypt(&self.encode(z))
            .unwrap()
    }

    fn encrypt_sk(&self, z: &[Complex64], seed: u8) -> Ciphertext {
        Encryptor::with_secret_key(&self.ctx, &self.sk)
            .unwrap()
            .with_seed([seed; 32])
            .encrypt(&self.encode(z))
            .unwrap()
    }

    fn decrypt(&self, ct: &Ciphertext) -> Vec<Complex64> {
        let pt = Decryptor::new(&self.ctx, &self.sk)
            .unwrap()
            .decrypt(ct)
            .unwrap();
        self.encoder.decode_complex(&pt).unwrap()
    }

    /// Level, scale and every word of every component.
    fn words(&self, ct: &Ciphertext) -> (usize, u64, Vec<Vec<u64>>) {
        let parts = ct
            .parts()
            .iter()
            .map(|p| self.ctx.ring().download(p).unwrap())
            .collect();
        (ct.level(), ct.scale().to_bits(), parts)
    }
}

/// Deterministic complex inputs with parts in `[-1, 1)` (integer arithmetic only).
fn input(n: usize, salt: u64) -> Vec<Complex64> {
    let mut s = 0x9e37_79b9_7f4a_7c15u64 ^ salt;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    (0..n).map(|_| Complex64::new(next(), next())).collect()
}

fn rot(v: &[Complex64], k: i64) -> Vec<Complex64> {
    let n = v.len() as i64;
    (0..n).map(|i| v[(i + k).rem_euclid(n) as usize]).collect()
}

fn zip(
    a: &[Complex64],
    b: &[Complex64],
    f: impl Fn(Complex64, Complex64) -> Complex64,
) -> Vec<Complex64> {
    a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()
}

fn map(a: &[Complex64], f: impl Fn(Complex64) -> Complex64) -> Vec<Complex64> {
    a.iter().map(|&x| f(x)).collect()
}

fn max_err(got: &[Complex64], want: &[Complex64]) -> f64 {
    got.iter()
        .zip(want)
        .map(|(g, w)| (g - w).norm())
        .fold(0.0, f64::max)
}

/// One result: name, ciphertext, expected slots.
type Named = (&'static str, Ciphertext, Vec<Complex64>);

/// Every evaluator operation on `k`'s device, with the expected slot values.
fn program(k: &Keys) -> Vec<Named> {
    let n = k.encoder.slots();
    let (x, y, z) = (input(n, 1), input(n, 2), input(n, 3));
    let cx = k.encrypt_pk(&x, 7);
    let cy = k.encrypt_pk(&y, 8);
    let cz = k.encrypt_sk(&z, 9);
    let py = k.encode(&y);
    let (e, m) = (&k.eval, &k.manual);
    let mut out: Vec<Named> = Vec::new();
    let prod = zip(&x, &y, |a, b| a * b);

    out.push(("encrypt_pk", cx.try_clone().unwrap(), x.clone()));
    out.push(("encrypt_sk", cz.try_clone().unwrap(), z.clone()));
    out.push(("add", e.add(&cx, &cy).unwrap(), zip(&x, &y, |a, b| a + b)));
    out.push(("sub", e.sub(&cx, &cz).unwrap(), zip(&x, &z, |a, b| a - b)));
    out.push(("neg", e.neg(&cx).unwrap(), map(&x, |a| -a)));
    out.push((
        "add_const",
        e.add_const(&cx, 0.375).unwrap(),
        map(&x, |a| a + 0.375),
    ));
    out.push((
        "sub_const",
        e.sub_const(&cx, 0.5).unwrap(),
        map(&x, |a| a - 0.5),
    ));
    out.push((
        "mul_const",
        e.mul_const(&cx, -0.75).unwrap(),
        map(&x, |a| a * -0.75),
    ));
    out.push(("mul_int", e.mul_int(&cx, 3).unwrap(), map(&x, |a| a * 3.0)));
    out.push((
        "add_plain",
        e.add_plain(&cx, &py).unwrap(),
        zip(&x, &y, |a, b| a + b),
    ));
    out.push((
        "sub_plain",
        e.sub_plain(&cx, &py).unwrap(),
        zip(&x, &y, |a, b| a - b),
    ));
    out.push(("mul_plain", e.mul_plain(&cx, &py).unwrap(), prod.clone()));
    out.push((
        "mul (relin, rescale)",
        e.mul(&cx, &cy).unwrap(),
        prod.clone(),
    ));
    let t = m.mul_no_relin(&cx, &cy).unwrap();
    assert_eq!(t.len(), 3);
    let r = m.relinearize(&t).unwrap();
    out.push((
        "mul_no_relin + relinearize",
        r.try_clone().unwrap(),
        prod.clone(),
    ));
    out.push(("rescale", m.rescale(&r).unwrap(), prod.clone()));
    out.push(("square", e.square(&cx).unwrap(), map(&x, |a| a * a)));
    out.push(("drop_to_level", e.drop_to_level(&cx, 1).unwrap(), x.clone()));
    out.push(("rotate 1", e.rotate(&cx, 1).unwrap(), rot(&x, 1)));
    out.push(("rotate -3", e.rotate(&cx, -3).unwrap(), rot(&x, -3)));
    out.push((
        "conjugate",
        e.conjugate(&cx).unwrap(),
        map(&x, |a| a.conj()),
    ));
    let steps = [1i64, 2, -3];
    for (s, c) in steps.iter().zip(e.rotate_hoisted(&cy, &steps).unwrap()) {
        out.push(("rotate_hoisted", c, rot(&y, *s)));
    }
    let lower = e.rotate(&e.mul(&cx, &cy).unwrap(), 2).unwrap();
    out.push(("rotate at a lower level", lower, rot(&prod, 2)));
    out.push(("mul_relin", e.mul_relin(&cx, &cy).unwrap(), prod.clone()));
    out.push((
        "mul_relin_rescale",
        e.mul_relin_rescale(&cx, &cz).unwrap(),
        zip(&x, &z, |a, b| a * b),
    ));
    out.push((
        "square_relin_rescale",
        e.square_relin_rescale(&cy).unwrap(),
        map(&y, |a| a * a),
    ));
    out.push((
        "mul_relin_rescale + add",
        e.add(&e.mul_relin_rescale(&cx, &cy).unwrap(), &cz).unwrap(),
        zip(&prod, &z, |a, b| a + b),
    ));
    out
}

/// Runs [`program`] on the CPU and the GPU and compares every ciphertext word for word; checks
/// that the GPU results decrypt to the expected values.
fn compare(test: &str, lit: CkksParametersLiteral, tolerance: f64) {
    let _gpu = require_gpu(test);
    let params = lit.build().unwrap();
    let steps = [1i64, 2, -3];
    let cpu = Keys::new(&params, Device::Cpu, &steps);
    let gpu = Keys::new(&params, GPU, &steps);
    assert_eq!(gpu.ctx.device(), GPU);
    let start = Instant::now();
    let on_cpu = program(&cpu);
    let cpu_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let on_gpu = program(&gpu);
    GPU.synchronize().unwrap();
    let gpu_s = start.elapsed().as_secs_f64();
    assert_eq!(on_cpu.len(), on_gpu.len());
    for ((name, c, want), (_, g, _)) in on_cpu.iter().zip(&on_gpu) {
        assert_eq!(g.device(), GPU, "{name}");
        assert_eq!(
            cpu.words(c),
            gpu.words(g),
            "{test}: `{name}` differs between CPU and GPU"
        );
        let err = max_err(&gpu.decrypt(g), want);
        assert!(
            err < tolerance,
            "{test}: `{name}` decrypts with error {err:e}"
        );
    }
    println!(
        "{test}: {} operations bit-identical on {} and cpu (program: cpu {cpu_s:.2} s, gpu \
         {gpu_s:.2} s)",
        on_gpu.len(),
        GPU.name()
    );
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn gpu_ckks_ops_match_cpu_n13_levels10() {
    compare(
        "gpu_ckks_ops_match_cpu_n13_levels10",
        CkksParametersLiteral::test_n13_levels10_insecure(),
        1e-5,
    );
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn gpu_ckks_ops_match_cpu_n13_levels2() {
    compare(
        "gpu_ckks_ops_match_cpu_n13_levels2",
        CkksParametersLiteral::n13_logqp200_levels2(),
        1e-5,
    );
}

/// The key generation itself is bit-identical: every key word agrees.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn gpu_ckks_keys_match_cpu() {
    let _gpu = require_gpu("gpu_ckks_keys_match_cpu");
    let params = CkksParametersLiteral::n13_logqp200_levels2()
        .build()
        .unwrap();
    let (cpu, gpu) = (
        Keys::new(&params, Device::Cpu, &[1]),
        Keys::new(&params, GPU, &[1]),
    );
    let dl = |k: &Keys, p: &rhea::backend::Poly| k.ctx.ring().download(p).unwrap();
    let rlk = |k: &Keys| {
        let mut ctx_keygen = KeyGenerator::from_seed(&k.ctx, [42; 32]);
        let sk = ctx_keygen.secret_key().unwrap();
        let _ = ctx_keygen.public_key(&sk).unwrap();
        let rlk = ctx_keygen.relinearization_key(&sk).unwrap();
        rlk.key()
            .parts()
            .iter()
            .flatten()
            .map(|p| dl(k, p))
            .collect::<Vec<_>>()
    };
    assert_eq!(rlk(&cpu), rlk(&gpu));
}

/// A long evaluation (10 × mul + relinearize + rescale, rotate, add, constants) moves no byte
/// between host and device, and equals the CPU's words.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn gpu_ckks_long_evaluation_moves_no_bytes() {
    let test = "gpu_ckks_long_evaluation_moves_no_bytes";
    let _gpu = require_gpu(test);
    let params = CkksParametersLiteral::test_n13_levels10_insecure()
        .build()
        .unwrap();
    let run = |k: &Keys, check_bytes: bool| -> (Ciphertext, Vec<Complex64>) {
        let n = k.encoder.slots();
        let x = input(n, 11);
        let y = map(&input(n, 12), |a| a * 0.4);
        let cx = k.encrypt_pk(&x, 1);
        let cy = k.encrypt_pk(&y, 2);
        let dev = k.ctx.device();
        let before = (dev.bytes_to_device().unwrap(), dev.bytes_to_host().unwrap());
        let e = &k.eval;
        let (mut acc, mut want) = (cx.try_clone().unwrap(), x.clone());
        for i in 0..10 {
            let step = 1 + i % 3;
            let t = e.mul(&acc, &cy).unwrap();
            let tw = zip(&want, &y, |a, b| a * b);
            let r = e.rotate(&t, step).unwrap();
            let s = e.add(&r, &t).unwrap();
            acc = e.add_const(&s, 0.125).unwrap();
            want = map(&zip(&rot(&tw, step), &tw, |a, b| a + b), |a| a + 0.125);
        }
        assert_eq!(acc.level(), 0);
        let acc = e.sub(&acc, &e.neg(&cx).unwrap()).unwrap();
        let want = zip(&want, &x, |a, b| a + b);
        let after = (dev.bytes_to_device().unwrap(), dev.bytes_to_host().unwrap());
        if check_bytes {
            assert_eq!(
                before, after,
                "{test}: evaluation moved bytes (to device, to host): {before:?} → {after:?}"
            );
        }
        (acc, want)
    };
    let cpu = Keys::new(&params, Device::Cpu, &[1, 2, 3]);
    let gpu = Keys::new(&params, GPU, &[1, 2, 3]);
    let (c, _) = run(&cpu, false);
    let (g, want) = run(&gpu, true);
    assert_eq!(cpu.words(&c), gpu.words(&g), "{test}: CPU and GPU differ");
    let err = max_err(&gpu.decrypt(&g), &want);
    assert!(err < 1e-3, "{test}: error {err:e}");
    println!(
        "{test}: level {} reached, error {err:.2e}, no host↔device bytes",
        g.level()
    );
}

/// One case at N = 2^16 (the deep 128-bit presets, with 3 key-switching digits and with 2):
/// encryption, mul + relinearize + rescale, rotation, hoisted rotations, bit for bit against the
/// CPU.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn gpu_ckks_n16_matches_cpu() {
    let _gpu = require_gpu("gpu_ckks_n16_matches_cpu");
    for (name, literal) in [
        (
            "n16_logqp1440_levels24",
            CkksParametersLiteral::n16_logqp1440_levels24(),
        ),
        (
            "n16_logqp1560_levels24",
            CkksParametersLiteral::n16_logqp1560_levels24(),
        ),
    ] {
        let test = format!("gpu_ckks_n16_matches_cpu ({name})");
        n16_case(&test, &literal.build().unwrap());
    }
}

fn n16_case(test: &str, params: &rhea::params::CkksParameters) {
    let run = |k: &Keys| -> Vec<Named> {
        let n = k.encoder.slots();
        let (x, y) = (input(n, 21), input(n, 22));
        let cx = k.encrypt_pk(&x, 3);
        let cy = k.encrypt_pk(&y, 4);
        let e = &k.eval;
        let prod = zip(&x, &y, |a, b| a * b);
        let xy = e.mul(&cx, &cy).unwrap();
        let r = e.rotate(&xy, 1).unwrap();
        let h = e.rotate_hoisted(&cx, &[1, -1]).unwrap();
        vec![
            ("encrypt", cx.try_clone().unwrap(), x.clone()),
            ("mul", xy.try_clone().unwrap(), prod.clone()),
            ("rotate", r, rot(&prod, 1)),
            (
                "conjugate",
                e.conjugate(&cy).unwrap(),
                map(&y, |a| a.conj()),
            ),
            (
                "add",
                e.add(&xy, &cx).unwrap(),
                zip(&prod, &x, |a, b| a + b),
            ),
            ("hoisted -1", h.into_iter().nth(1).unwrap(), rot(&x, -1)),
        ]
    };
    let cpu = Keys::new(params, Device::Cpu, &[1, -1]);
    let on_cpu = run(&cpu);
    let gpu = Keys::new(params, GPU, &[1, -1]);
    let on_gpu = run(&gpu);
    for ((name, c, want), (_, g, _)) in on_cpu.iter().zip(&on_gpu) {
        assert_eq!(cpu.words(c), gpu.words(g), "{test}: `{name}` differs");
        let err = max_err(&gpu.decrypt(g), want);
        assert!(err < 1e-4, "{test}: `{name}` decrypts with error {err:e}");
    }
    println!(
        "{test}: {} operations bit-identical at N = 2^16",
        on_gpu.len()
    );
}

/// Mixing devices is a typed error, not a panic.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn gpu_ckks_mixing_devices_is_an_error() {
    let _gpu = require_gpu("gpu_ckks_mixing_devices_is_an_error");
    let params = CkksParametersLiteral::n13_logqp200_levels2()
        .build()
        .unwrap();
    let cpu = Keys::new(&params, Device::Cpu, &[]);
    let gpu = Keys::new(&params, GPU, &[]);
    let n = cpu.encoder.slots();
    let a = cpu.encrypt_pk(&input(n, 1), 1);
    let b = gpu.encrypt_pk(&input(n, 1), 1);
    let err = gpu.eval.add(&b, &a).unwrap_err();
    assert!(
        matches!(err, rhea::Error::DeviceMismatch { .. }),
        "unexpected error {err}"
    );
}

/// Medians (after warm-up) of the main operations at N = 2^16 on the GPU. Prints, asserts
/// nothing about speed. `cargo test --release -p rhea --test gpu_ckks -- --ignored --nocapture
/// gpu_ckks_timings_n16`.
#[test]
#[ignore = "needs a CUDA GPU; prints timings at N = 2^16 (scripts/gpu-run.sh skips it)"]
fn gpu_ckks_timings_n16() {
    let _gpu = require_gpu("gpu_ckks_timings_n16");
    let params = CkksParametersLiteral::n16_logqp1440_levels24()
        .build()
        .unwrap();
    let k = Keys::new(&params, GPU, &[1]);
    let n = k.encoder.slots();
    let cx = k.encrypt_pk(&input(n, 1), 1);
    let cy = k.encrypt_pk(&input(n, 2), 2);
    let prod = k.manual.mul_relin(&cx, &cy).unwrap();
    let time = |what: &str, f: &dyn Fn() -> Ciphertext| {
        for _ in 0..3 {
            drop(f());
        }
        GPU.synchronize().unwrap();
        let mut t: Vec<f64> = (0..25)
            .map(|_| {
                let s = Instant::now();
                let c = f();
                GPU.synchronize().unwrap();
                let e = s.elapsed().as_secs_f64() * 1e3;
                drop(c);
                e
            })
            .collect();
        t.sort_by(f64::total_cmp);
        println!(
            "  {what:<40} median {:>8.3} ms  (min {:.3}, max {:.3}, 25 runs)",
            t[12], t[0], t[24]
        );
    };
    println!(
        "GPU timings, {} , N = 2^16, level {} ({} Q + {} P primes, dnum {}):",
        GPU.name(),
        cx.level(),
        params.ring().q_len(),
        params.ring().p_len(),
        params.dnum()
    );
    time("mul + relinearize (mul_relin)", &|| {
        k.manual.mul_relin(&cx, &cy).unwrap()
    });
    time("mul + relinearize + rescale (mul)", &|| {
        k.eval.mul(&cx, &cy).unwrap()
    });
    time("rescale", &|| k.manual.rescale(&prod).unwrap());
    time("rotate by 1", &|| k.eval.rotate(&cx, 1).unwrap());
    time("add", &|| k.eval.add(&cx, &cy).unwrap());
}
