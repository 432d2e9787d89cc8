//! The inference on ciphertexts: keys, packing, one step, bootstrapping in the loop.
//!
//! **Packing.** Ciphertexts of `units × batch` slots (4096 = 128 × 32 at the paper's size: a
//! sparse packing at N = 2^16, bootstrapped at that slot count); slot `u·batch + b` holds unit
//! `u` of sequence `b`. The hidden state `h` is real. The client encrypts one ciphertext a
//! step, `i·x_t` — step `t`'s embeddings of every sequence in the imaginary parts (200 input
//! ciphertexts at the paper's size), each at the level and scale the step adds it at.
//!
//! **One step** (`h` at level `ℓ`, scale `Δ`):
//! 1. `z = h + i·x_t` (an addition), and `y = M z` for `M = (W_h − i·W_x)/2 ⊗ I_batch`: one
//!    [`LinearTransform`] of 128 diagonals `k·batch` (cyclic over the slots), baby-step/giant-step
//!    with hoisting, 1 level. `(A − iB)(h + ix) = Ah + Bx + i(Ax − Bh)`, so
//!    `a = y + ȳ = W_h h + W_x x_t` (one conjugation): both products in one transform, and the
//!    pre-activation real. Then `+ b` (a plaintext, encoded before the timed loop).
//! 2. `h' = p(a)`, the odd degree-7 tanh polynomial at the target scale `Δ`: 3 levels.
//!
//! Four levels a step, twelve for the three steps between bootstraps (13 left by one: from
//! the bootstrap's output level 16 down to its input level 3, below which SlotToCoeff runs).
//! The state is refreshed by [`Bootstrapper::bootstrap_real`] (the real-input variant: the
//! imaginary part, which the polynomial would otherwise carry along, is removed) before steps
//! `3, 6, …`. After the last step, the dense layer is one more transform, `W_o ⊗ I_batch`
//! (logit `c` of sequence `b` in slot `c·batch + b`), and its bias.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use rhea::ckks::bootstrap::{BootstrapConfig, Bootstrapper};
use rhea::ckks::{
    Ciphertext, CkksContext, Complex64, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator,
    LinearTransform, Plaintext, Polynomial,
};
use rhea::params::CkksParameters;
use rhea::unstable::HasRing;
use rhea::{Device, Error, Result};

use super::data::{RnnWeights, Sequences};
use super::plain::Readout;
use super::{output_transform, recurrent_transform, Layout, RnnPlan};

/// The inputs of [`infer`].
pub(super) struct Job<'a> {
    pub device: Device,
    pub params: &'a CkksParameters,
    pub boot_config: BootstrapConfig,
    pub layout: Layout,
    pub plan: &'a RnnPlan,
    pub weights: &'a RnnWeights,
    pub readout: &'a Readout,
    /// The tanh polynomial (monomial coefficients, constant first).
    pub tanh: &'a [f64],
    /// The batch (`batch` sequences of at least `iterations` words).
    pub data: &'a Sequences,
    pub iterations: usize,
    pub iterations_per_bootstrap: usize,
    pub key_seed: Option<[u8; 32]>,
}

/// Milliseconds spent in each stage (bootstrapping apart).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Stages {
    /// The transform, the conjugation, the bias.
    pub linear: f64,
    /// The tanh polynomials.
    pub activation: f64,
    /// The dense layer.
    pub output: f64,
}

/// What the encrypted inference gives back.
pub(super) struct Outcome {
    /// The decrypted final hidden state, `hidden[b][u]`.
    pub hidden: Vec<Vec<f64>>,
    /// The decrypted logits, `logits[b][c]`.
    pub logits: Vec<Vec<f64>>,
    /// FNV-1a of the logits ciphertext's words.
    pub digest: u64,
    pub keygen_s: f64,
    pub encrypt_s: f64,
    pub warm_up_s: f64,
    /// The inference (steps, bootstraps, dense layer), ms.
    pub total_ms: f64,
    /// Each bootstrap, ms.
    pub bootstrap_ms: Vec<f64>,
    pub stages: Stages,
    /// Key switchings of the steps (bootstraps apart).
    pub keyswitches: u64,
    pub bootstrap_key_bytes: u64,
}

/// FNV-1a, 64 bits.
fn fnv1a(words: impl Iterator<Item = u64>, mut h: u64) -> u64 {
    for w in words {
        for b in w.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x100_0000_01b3);
        }
    }
    h
}

struct Network {
    eval: Evaluator,
    boot: Bootstrapper,
    recurrent: LinearTransform,
    output: LinearTransform,
    tanh: Polynomial,
    /// `b` in every sequence's slots, by the level it is added at (scale `Δ`).
    biases: BTreeMap<usize, Plaintext>,
    /// `b_o`, at the dense layer's output level.
    output_bias: Plaintext,
    delta: f64,
    device: Device,
}

impl Network {
    fn timed(&self, acc: &mut f64, start: Instant) -> Result<()> {
        self.device.synchronize()?;
        *acc += start.elapsed().as_secs_f64() * 1e3;
        Ok(())
    }

    /// One step: `p(W_h h + W_x x + b)` from `h` and the encrypted `i·x`.
    fn step(&self, h: &Ciphertext, x: &Ciphertext, stages: &mut Stages) -> Result<Ciphertext> {
        let eval = &self.eval;
        let start = Instant::now();
        let z = eval.add(h, x)?;
        let y = eval.linear_transform(&z, &self.recurrent)?;
        let a = eval.add(&y, &eval.conjugate(&y)?)?;
        let bias = self.biases.get(&a.level()).ok_or(Error::LevelUnderflow {
            op: "rnn bias",
            level: a.level(),
            needed: self.boot.input_level() + self.tanh.depth(),
        })?;
        let a = eval.add_plain(&a, bias)?;
        self.timed(&mut stages.linear, start)?;
        let start = Instant::now();
        let h = eval.evaluate_polynomial(&a, &self.tanh, self.delta)?;
        self.timed(&mut stages.activation, start)?;
        Ok(h)
    }

    /// The dense layer (bootstrapping first if no level is left above the bootstrapper's input
    /// level): the logits ciphertext.
    fn dense(
        &self,
        h: &Ciphertext,
        bootstrap_ms: &mut Vec<f64>,
        stages: &mut Stages,
    ) -> Result<Ciphertext> {
        let h = if h.level() < self.boot.input_level() + 1 {
            let start = Instant::now();
            let out = self.boot.bootstrap_real(h)?;
            self.device.synchronize()?;
            bootstrap_ms.push(start.elapsed().as_secs_f64() * 1e3);
            out
        } else {
            h.try_clone()?
        };
        let start = Instant::now();
        let y = self.eval.linear_transform(&h, &self.output)?;
        let y = self.eval.add_plain(&y, &self.output_bias)?;
        self.timed(&mut stages.output, start)?;
        Ok(y)
    }
}

/// Runs the network on ciphertexts (see the module docs).
pub(super) fn infer(job: &Job<'_>) -> Result<Outcome> {
    let layout = &job.layout;
    let (units, batch, slots) = (layout.units, layout.batch, layout.slots);
    let params = job.params;
    let device = job.device;
    let k = job.iterations_per_bootstrap;
    if job.data.x.len() != batch || job.data.x.iter().any(|s| s.len() < job.iterations) {
        return Err(Error::InvalidInput(format!(
            "rnn: the batch has {} sequences, the layout {batch}, each of {} steps",
            job.data.x.len(),
            job.iterations
        )));
    }
    let recurrent = recurrent_transform(job.weights, layout)?;
    let output = output_transform(&job.readout.w, layout)?;
    let tanh = Polynomial::monomial(job.tanh.to_vec())?;

    let ctx = CkksContext::new(params, device)?;
    let start = Instant::now();
    let mut keygen = match job.key_seed {
        Some(seed) => KeyGenerator::from_seed(&ctx, seed),
        None => KeyGenerator::new(&ctx)?,
    };
    let sk = Arc::new(keygen.secret_key()?);
    let rlk = keygen.relinearization_key(&sk)?;
    let mut steps = recurrent.rotations();
    steps.extend(output.rotations());
    steps.sort_unstable();
    steps.dedup();
    let gk = keygen.galois_keys(&sk, &steps, true)?;
    let boot = Bootstrapper::new(&ctx, &mut keygen, &sk, job.boot_config.clone())?;
    let eval = Evaluator::new(&ctx)
        .with_relinearization_key(rlk)?
        .with_galois_keys(gk)?;
    device.synchronize()?;
    let keygen_s = start.elapsed().as_secs_f64();

    let top = boot.output_level();
    if top != job.plan.top_level || boot.input_level() != job.plan.input_level {
        return Err(Error::InvalidInput(format!(
            "rnn: the bootstrapper leaves levels {top} down to {}, the plan {} down to {}",
            boot.input_level(),
            job.plan.top_level,
            job.plan.input_level
        )));
    }
    let delta = params.default_scale();
    let encoder = Encoder::with_slots(&ctx, slots)?;
    let mut encryptor = Encryptor::with_secret_key(&ctx, sk.clone())?;
    if let Some(mut seed) = job.key_seed {
        seed[31] ^= 0x5a;
        encryptor = encryptor.with_seed(seed);
    }
    let decryptor = Decryptor::new(&ctx, sk)?;

    // The biases, at the levels the steps and the dense layer add them at.
    let mut bias_values = vec![0.0; slots];
    for (s, v) in bias_values.iter_mut().enumerate() {
        *v = job.weights.bias[s / batch];
    }
    let mut biases = BTreeMap::new();
    for &level in &job.plan.step_levels {
        let at = level - 1;
        biases.insert(at, encoder.encode_at(&bias_values, at, delta)?);
    }
    let mut out_bias = vec![0.0; slots];
    for (c, &b) in job.readout.b.iter().enumerate() {
        for v in &mut out_bias[c * batch..(c + 1) * batch] {
            *v = b;
        }
    }
    let output_bias = encoder.encode_at(&out_bias, job.plan.output_level - 1, delta)?;
    let net = Network {
        eval,
        boot,
        recurrent,
        output,
        tanh,
        biases,
        output_bias,
        delta,
        device,
    };

    // The client: every step's embeddings, i·x_t, at the level the step starts at.
    let start = Instant::now();
    let inputs = (0..job.iterations)
        .map(|t| {
            let mut values = vec![Complex64::new(0.0, 0.0); slots];
            for (b, seq) in job.data.x.iter().enumerate() {
                for u in 0..units {
                    values[u * batch + b].im = seq[t][u];
                }
            }
            let level = job.plan.step_levels[t % k];
            encryptor.encrypt(&encoder.encode_complex_at(&values, level, delta)?)
        })
        .collect::<Result<Vec<_>>>()?;
    let h0 = encryptor.encrypt(&encoder.encode_at(&vec![0.0; slots], top, delta)?)?;
    device.synchronize()?;
    let encrypt_s = start.elapsed().as_secs_f64();

    // Warm-up, untimed and dropped: one bootstrap, a cycle of steps, the dense layer (a GPU
    // compiles its kernels and fills its memory pool on first use; the transforms encode their
    // diagonals at each level once). Deterministic: a seeded run's words do not change.
    let start = Instant::now();
    {
        let mut scratch = Stages::default();
        let mut h = net.boot.bootstrap_real(&h0)?;
        let last = (job.iterations - 1) % k;
        for (p, x) in inputs.iter().take(k).enumerate() {
            h = net.step(&h, x, &mut scratch)?;
            if p == last {
                net.dense(&h, &mut Vec::new(), &mut scratch)?;
            }
        }
        device.synchronize()?;
    }
    let warm_up_s = start.elapsed().as_secs_f64();

    let mut stages = Stages::default();
    let mut bootstrap_ms = Vec::new();
    let mut keyswitches = 0;
    let start = Instant::now();
    let mut h = h0;
    for (t, x) in inputs.iter().enumerate() {
        if t > 0 && t % k == 0 {
            let boot_start = Instant::now();
            h = net.boot.bootstrap_real(&h)?;
            device.synchronize()?;
            bootstrap_ms.push(boot_start.elapsed().as_secs_f64() * 1e3);
        }
        let before = ctx.keyswitches();
        h = net.step(&h, x, &mut stages)?;
        keyswitches += ctx.keyswitches() - before;
    }
    let logits_ct = net.dense(&h, &mut bootstrap_ms, &mut stages)?;
    device.synchronize()?;
    let total_ms = start.elapsed().as_secs_f64() * 1e3;
    if bootstrap_ms.len() != job.plan.bootstraps {
        return Err(Error::InvalidInput(format!(
            "rnn: {} bootstraps ran, the plan has {}",
            bootstrap_ms.len(),
            job.plan.bootstraps
        )));
    }

    let digest = logits_ct
        .parts()
        .iter()
        .try_fold(0xcbf2_9ce4_8422_2325u64, |acc, p| {
            Ok::<_, Error>(fnv1a(ctx.ring().download(p)?.into_iter(), acc))
        })?;
    let h_slots = encoder.decode(&decryptor.decrypt(&h)?)?;
    let l_slots = encoder.decode(&decryptor.decrypt(&logits_ct)?)?;
    let hidden = (0..batch)
        .map(|b| (0..units).map(|u| h_slots[u * batch + b]).collect())
        .collect();
    let classes = job.readout.w.len();
    let logits = (0..batch)
        .map(|b| (0..classes).map(|c| l_slots[c * batch + b]).collect())
        .collect();
    Ok(Outcome {
        hidden,
        logits,
        digest,
        keygen_s,
        encrypt_s,
        warm_up_s,
        total_ms,
        bootstrap_ms,
        stages,
        keyswitches,
        bootstrap_key_bytes: net.boot.key_bytes(),
    })
}
