//! The inference on ciphertexts.
//!
//! One image, its `W × W × 3` pixels packed in the multiplexed layout (replicated over the
//! slots), encrypted at the maps' level ([`super::conv_level`]: 4, one above the
//! bootstrapper's input level 3). Then, for every convolution: the map (a [`LinearTransform`]
//! at level 4, to level 3), its bias (a plaintext), and the activation —
//! [`Bootstrapper::bootstrap_real`] (from level 3 to the bootstrap's output level),
//! [`Sign::relu`] at the exact scale of its output level, a drop to level 4. A block's second
//! convolution adds the shortcut's map of the block's input (both at level 4 with the same
//! scale, so their outputs add exactly). At the end the pooling sums (`rotate_and_sum` twice, no level) and the dense
//! layer's map give the logits at slots `0..classes`.
//!
//! Every map's diagonals are encoded during the warm-up inference (untimed) and stay on the
//! device: whole where the plan says so — over `Q_ℓ` alone ([`DiagonalStorage::QOnly`]: at the
//! maps' level the special primes are most of the basis) — the others compact
//! ([`DiagonalStorage::Compact`]: one limb a diagonal, expanded on the device at each use,
//! inside the timed map).

use std::sync::Arc;
use std::time::Instant;

use rhea::ckks::bootstrap::{BootstrapConfig, Bootstrapper};
use rhea::ckks::functions::Sign;
use rhea::ckks::{
    Ciphertext, CkksContext, Decryptor, DiagonalStorage, Encoder, Encryptor, Evaluator,
    KeyGenerator, LinearTransform,
};
use rhea::params::CkksParameters;
use rhea::{Device, Error, Result};

use super::{layout::pool_sums, pool_rotations, Network, Plan, TimingReport};

/// The inputs of [`infer`].
pub(crate) struct Job<'a> {
    pub device: Device,
    pub params: &'a CkksParameters,
    pub boot_config: BootstrapConfig,
    pub net: &'a Network,
    pub plan: &'a Plan,
    pub sign: &'a Sign,
    pub image: &'a [f64],
    pub baby_steps: Option<usize>,
    pub key_seed: Option<[u8; 32]>,
}

/// What [`infer`] gives back.
pub(crate) struct Outcome {
    pub logits: Vec<f64>,
    pub timing: TimingReport,
}

#[derive(Default)]
struct Stages {
    bootstrap: f64,
    bootstraps: usize,
    linear: f64,
    relu: f64,
    other: f64,
    keyswitches: u64,
}

struct Runner<'a> {
    ctx: CkksContext,
    eval: Evaluator,
    boot: Bootstrapper,
    encoder: Encoder,
    job: &'a Job<'a>,
    transforms: Vec<LinearTransform>,
}

impl Runner<'_> {
    fn sync_ms(&self, start: Instant) -> Result<f64> {
        self.ctx.device().synchronize()?;
        Ok(start.elapsed().as_secs_f64() * 1e3)
    }

    /// Map `i` on `ct` (timed into `linear`).
    fn map(&self, i: usize, ct: &Ciphertext, st: &mut Stages) -> Result<Ciphertext> {
        let before = self.ctx.keyswitches();
        let start = Instant::now();
        let out = self.eval.linear_transform(ct, &self.transforms[i])?;
        st.linear += self.sync_ms(start)?;
        st.keyswitches += self.ctx.keyswitches() - before;
        Ok(out)
    }

    /// Adds convolution `k`'s bias (over its bound) at the ciphertext's level and scale.
    fn bias(&self, k: usize, ct: &Ciphertext, st: &mut Stages) -> Result<Ciphertext> {
        let start = Instant::now();
        let slots = self.encoder.slots();
        let b = &self.job.net.biases[k];
        let values: Vec<f64> = (0..slots).map(|i| b[i % b.len()]).collect();
        let pt = self.encoder.encode_at(&values, ct.level(), ct.scale())?;
        let out = self.eval.add_plain(ct, &pt)?;
        st.linear += self.sync_ms(start)?;
        Ok(out)
    }

    /// Bootstrapping, the ReLU, the drop to the maps' level.
    fn activate(&self, ct: &Ciphertext, st: &mut Stages) -> Result<Ciphertext> {
        let start = Instant::now();
        let fresh = self.boot.bootstrap_real(ct)?;
        st.bootstrap += self.sync_ms(start)?;
        st.bootstraps += 1;
        let start = Instant::now();
        let params = self.ctx.params();
        let conv_level = self.job.plan.conv_level;
        let level = fresh
            .level()
            .checked_sub(self.job.plan.relu_depth)
            .filter(|&l| l >= conv_level)
            .ok_or(Error::LevelUnderflow {
                op: "resnet20 ReLU",
                level: fresh.level(),
                needed: self.job.plan.relu_depth + conv_level,
            })?;
        let scale = params
            .scale_at_level(level)
            .ok_or_else(|| Error::InvalidInput(format!("resnet20: no scale at level {level}")))?;
        let mut out = self.job.sign.relu(&self.eval, &fresh, scale)?;
        if out.level() > conv_level {
            out = self.eval.drop_to_level(&out, conv_level)?;
        }
        st.relu += self.sync_ms(start)?;
        Ok(out)
    }

    /// The inference from the encrypted image to the logits' ciphertext.
    fn forward(&self, x: &Ciphertext, st: &mut Stages) -> Result<Ciphertext> {
        let net = self.job.net;
        let z = self.map(0, x, st)?;
        let z = self.bias(0, &z, st)?;
        let mut a = self.activate(&z, st)?;
        let (mut k, mut m) = (1, 1);
        for _ in 0..net.arch.stages.len() * net.arch.blocks {
            let z1 = self.map(m, &a, st)?;
            let z1 = self.bias(k, &z1, st)?;
            let y = self.activate(&z1, st)?;
            let z2 = self.map(m + 1, &y, st)?;
            let sc = self.map(m + 2, &a, st)?;
            let start = Instant::now();
            let z2 = self.eval.add(&z2, &sc)?;
            st.linear += self.sync_ms(start)?;
            let z2 = self.bias(k + 1, &z2, st)?;
            a = self.activate(&z2, st)?;
            k += 2;
            m += 3;
        }
        let start = Instant::now();
        let last = *net.layouts.last().unwrap_or(&net.layouts[0]);
        for (stride, count) in pool_sums(last) {
            a = self.eval.rotate_and_sum(&a, stride, count)?;
        }
        st.other += self.sync_ms(start)?;
        let logits = self.map(m, &a, st)?;
        let start = Instant::now();
        let slots = self.encoder.slots();
        let mut bias = vec![0.0; slots];
        for (o, &b) in self.job.net.fc_bias.iter().enumerate() {
            bias[o] = b;
        }
        let pt = self
            .encoder
            .encode_at(&bias, logits.level(), logits.scale())?;
        let out = self.eval.add_plain(&logits, &pt)?;
        st.linear += self.sync_ms(start)?;
        Ok(out)
    }
}

/// Runs the inference (see the module docs).
pub(crate) fn infer(job: &Job<'_>) -> Result<Outcome> {
    let device = job.device;
    let net = job.net;
    let ctx = CkksContext::new(job.params, device)?;
    let slots = job.params.n() / 2;

    let start = Instant::now();
    let transforms = net
        .maps
        .iter()
        .zip(&job.plan.maps)
        .map(|((_, m), mp)| {
            let lt = super::shape(m.transform(net.period, slots)?, job.baby_steps)?;
            Ok(lt.with_diagonal_storage(if mp.whole {
                DiagonalStorage::QOnly
            } else {
                DiagonalStorage::Compact
            }))
        })
        .collect::<Result<Vec<_>>>()?;
    let build_s = start.elapsed().as_secs_f64();
    let mut steps: Vec<i64> = transforms.iter().flat_map(|lt| lt.rotations()).collect();
    steps.extend(pool_rotations(
        *net.layouts.last().unwrap_or(&net.layouts[0]),
        slots,
    ));
    steps.sort_unstable();
    steps.dedup();

    let start = Instant::now();
    let mut keygen = match job.key_seed {
        Some(seed) => KeyGenerator::from_seed(&ctx, seed),
        None => KeyGenerator::new(&ctx)?,
    };
    let sk = Arc::new(keygen.secret_key()?);
    let rlk = keygen.relinearization_key(&sk)?;
    let gk = keygen.galois_keys(&sk, &steps, false)?;
    let rotation_key_bytes = gk.size_bytes();
    let boot = Bootstrapper::new(&ctx, &mut keygen, &sk, job.boot_config.clone())?;
    let eval = Evaluator::new(&ctx)
        .with_relinearization_key(rlk)?
        .with_galois_keys(gk)?;
    device.synchronize()?;
    let keygen_s = start.elapsed().as_secs_f64();

    let encoder = Encoder::new(&ctx)?;
    let mut encryptor = Encryptor::with_secret_key(&ctx, sk.clone())?;
    if let Some(mut seed) = job.key_seed {
        seed[31] ^= 0x5a;
        encryptor = encryptor.with_seed(seed);
    }
    let decryptor = Decryptor::new(&ctx, sk)?;
    let conv_level = job.plan.conv_level;
    if conv_level != boot.input_level() + 1 || job.plan.top_level != boot.output_level() {
        return Err(Error::InvalidInput(format!(
            "resnet20: the plan has bootstraps land on level {} and maps at level {conv_level}, \
             the bootstrapper lands on {} and takes ciphertexts from level {}",
            job.plan.top_level,
            boot.output_level(),
            boot.input_level()
        )));
    }
    let scale = job
        .params
        .scale_at_level(conv_level)
        .ok_or_else(|| Error::InvalidInput("resnet20: no scale at the maps' level".into()))?;

    let start = Instant::now();
    let packed = net.layouts[0].pack(job.image, net.period, slots)?;
    let x = encryptor.encrypt(&encoder.encode_at(&packed, conv_level, scale)?)?;
    device.synchronize()?;
    let encrypt_ms = start.elapsed().as_secs_f64() * 1e3;

    let runner = Runner {
        ctx: ctx.clone(),
        eval,
        boot,
        encoder,
        job,
        transforms,
    };
    // Warm-up (untimed, dropped): a whole inference; it encodes every map.
    let start = Instant::now();
    runner.forward(&x, &mut Stages::default())?;
    device.synchronize()?;
    let warm_up_s = start.elapsed().as_secs_f64();

    let mut st = Stages::default();
    let out = runner.forward(&x, &mut st)?;
    device.synchronize()?;
    let decoded = runner.encoder.decode(&decryptor.decrypt(&out)?)?;
    let logits = decoded[..net.arch.classes].to_vec();

    let latency_ms = st.bootstrap + st.linear + st.relu + st.other;
    Ok(Outcome {
        logits,
        timing: TimingReport {
            keygen_s,
            build_s,
            encrypt_ms,
            warm_up_s,
            latency_ms,
            bootstraps: st.bootstraps,
            bootstrap_ms: st.bootstrap,
            bootstrap_mean_ms: st.bootstrap / st.bootstraps.max(1) as f64,
            linear_ms: st.linear,
            relu_ms: st.relu,
            other_ms: st.other,
            keyswitches: st.keyswitches,
            bootstrap_key_bytes: runner.boot.key_bytes(),
            rotation_key_bytes,
        },
    })
}
