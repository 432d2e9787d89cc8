//! BGV on the GPU: the same scheme code on `Device::Cuda(0)` and `Device::Cpu`, from the same
//! seeds, gives the same ciphertext words for every operation and decrypts exactly.
//!
//! Every test is `#[ignore]`d, so a machine without a GPU lists them as ignored, never as
//! passed; `cargo test -- --include-ignored` (what `scripts/gpu-run.sh` runs) runs them, and then
//! a missing GPU is a failure.

mod bgv_common;

use bgv_common::{Plain, Rng};
use rhea::bgv::{
    BgvContext, BgvParameters, BgvParametersLiteral, Ciphertext, Decryptor, Encoder, Encryptor,
    Evaluator, KeyGenerator,
};
use rhea::rlwe::{PublicKey, SecretKey};
use rhea::unstable::HasRing;
use rhea::Device;

const GPU: Device = Device::Cuda(0);

/// Checks that GPU 0 is usable, for a test marked `#[ignore = "needs a CUDA GPU ..."]` (run
/// with `--include-ignored`, as `scripts/gpu-run.sh` does): a missing GPU is a failure.
#[track_caller]
fn require_gpu(test: &str) {
    if let Err(e) = GPU.check_supported() {
        panic!(
            "{test}: needs a CUDA GPU, and none is usable ({e}); GPU tests are #[ignore]d: run \
             them on a GPU machine (scripts/gpu-run.sh), or leave out --include-ignored"
        );
    }
}

/// Seeded keys, an encoder and an auto-mode evaluator on one device.
struct Keys {
    ctx: BgvContext,
    sk: SecretKey,
    pk: PublicKey,
    encoder: Encoder,
    eval: Evaluator,
}

impl Keys {
    fn new(params: &BgvParameters, device: Device, steps: &[i64]) -> Keys {
        let ctx = BgvContext::new(params, device).expect("context");
        let mut keygen = KeyGenerator::from_seed(&ctx, [42; 32]);
        let sk = keygen.secret_key().unwrap();
        let pk = keygen.public_key(&sk).unwrap();
        let rlk = keygen.relinearization_key(&sk).unwrap();
        let mut gk = keygen.galois_keys(&sk, steps, true).unwrap();
        gk.extend(keygen.inner_sum_keys(&sk).unwrap()).unwrap();
        let encoder = Encoder::new(&ctx).unwrap();
        let eval = Evaluator::new(&ctx)
            .with_relinearization_key(rlk)
            .unwrap()
            .with_galois_keys(gk)
            .unwrap();
        Keys {
            ctx,
            sk,
            pk,
            encoder,
            eval,
        }
    }

    fn encrypt(&self, v: &[u64], level: usize, seed: u8, public: bool) -> Ciphertext {
        let pt = self.encoder.encode_at(v, level).unwrap();
        let enc = if public {
            Encryptor::new(&self.ctx, &self.pk).unwrap()
        } else {
            Encryptor::with_secret_key(&self.ctx, &self.sk).unwrap()
        };
        enc.with_seed([seed; 32]).encrypt(&pt).unwrap()
    }

    fn decrypt(&self, ct: &Ciphertext) -> Vec<u64> {
        let d = Decryptor::new(&self.ctx, &self.sk)
            .unwrap()
            .decrypt(ct)
            .unwrap();
        self.encoder.decode(&d).unwrap()
    }

    /// Level, factor and every word of every component.
    fn words(&self, ct: &Ciphertext) -> (usize, u64, Vec<Vec<u64>>) {
        let parts = ct
            .parts()
            .iter()
            .map(|p| self.ctx.ring().download(p).unwrap())
            .collect();
        (ct.level(), ct.factor(), parts)
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn bgv_on_the_gpu_matches_the_cpu_word_for_word() {
    require_gpu("bgv_on_the_gpu_matches_the_cpu_word_for_word");
    let params = BgvParametersLiteral::test_n12_levels5_insecure()
        .build()
        .unwrap();
    let steps = [1i64, -3];
    let cpu = Keys::new(&params, Device::Cpu, &steps);
    let gpu = Keys::new(&params, GPU, &steps);
    let (n, t) = (params.n(), params.t());
    let p = Plain { t };
    let mut rng = Rng(1);
    let x = rng.values(n, t);
    let y = rng.values(n, t);
    let z = rng.values(n, t);
    // Each step: (name, ciphertext on the CPU, on the GPU, expected slots).
    let check = |name: &str, a: &Ciphertext, b: &Ciphertext, want: &[u64]| {
        assert_eq!(
            cpu.words(a),
            gpu.words(b),
            "{name}: CPU and GPU words differ"
        );
        assert_eq!(gpu.decrypt(b), want, "{name}: wrong decryption on the GPU");
    };
    let (cx, gx) = (cpu.encrypt(&x, 5, 1, true), gpu.encrypt(&x, 5, 1, true));
    check("encrypt pk", &cx, &gx, &x);
    let (cy, gy) = (cpu.encrypt(&y, 4, 2, false), gpu.encrypt(&y, 4, 2, false));
    check("encrypt sk", &cy, &gy, &y);
    let xy = p.mul(&x, &y);
    let (c, g) = (
        cpu.eval.mul(&cx, &cy).unwrap(),
        gpu.eval.mul(&gx, &gy).unwrap(),
    );
    check("mul (relinearize, switch)", &c, &g, &xy);
    let (c, g) = (
        cpu.eval.add(&c, &cx).unwrap(),
        gpu.eval.add(&g, &gx).unwrap(),
    );
    let want = p.add(&xy, &x);
    check("add with mismatched factors", &c, &g, &want);
    let pz = (
        cpu.encoder.encode_at(&z, 5).unwrap(),
        gpu.encoder.encode_at(&z, 5).unwrap(),
    );
    let (c, g) = (
        cpu.eval.add_plain(&c, &pz.0).unwrap(),
        gpu.eval.add_plain(&g, &pz.1).unwrap(),
    );
    let want = p.add(&want, &z);
    check("add_plain", &c, &g, &want);
    let (c, g) = (
        cpu.eval.mul_plain(&c, &pz.0).unwrap(),
        gpu.eval.mul_plain(&g, &pz.1).unwrap(),
    );
    let want = p.mul(&want, &z);
    check("mul_plain", &c, &g, &want);
    let (c, g) = (
        cpu.eval
            .mul_const(&cpu.eval.add_const(&c, -7).unwrap(), 12345)
            .unwrap(),
        gpu.eval
            .mul_const(&gpu.eval.add_const(&g, -7).unwrap(), 12345)
            .unwrap(),
    );
    let want = p.mul_const(&p.add_const(&want, -7), 12345);
    check("add_const, mul_const", &c, &g, &want);
    let (c, g) = (
        cpu.eval.rotate_rows(&c, -3).unwrap(),
        gpu.eval.rotate_rows(&g, -3).unwrap(),
    );
    let want = p.rotate_rows(&want, -3);
    check("rotate_rows", &c, &g, &want);
    let (c, g) = (
        cpu.eval.rotate_columns(&c).unwrap(),
        gpu.eval.rotate_columns(&g).unwrap(),
    );
    let want = p.rotate_columns(&want);
    check("rotate_columns", &c, &g, &want);
    let hc = cpu.eval.rotate_rows_hoisted(&cx, &steps).unwrap();
    let hg = gpu.eval.rotate_rows_hoisted(&gx, &steps).unwrap();
    for ((a, b), &k) in hc.iter().zip(&hg).zip(&steps) {
        check("rotate_rows_hoisted", a, b, &p.rotate_rows(&x, k));
    }
    let (c, g) = (
        cpu.eval.mod_switch_to_level(&c, 0).unwrap(),
        gpu.eval.mod_switch_to_level(&g, 0).unwrap(),
    );
    check("mod_switch_to_level 0", &c, &g, &want);
    let (c, g) = (
        cpu.eval.inner_sum(&c).unwrap(),
        gpu.eval.inner_sum(&g).unwrap(),
    );
    check("inner_sum at level 0", &c, &g, &p.inner_sum(&want));
    let budget = Decryptor::new(&gpu.ctx, &gpu.sk)
        .unwrap()
        .noise_budget(&g)
        .unwrap()
        .expect("noise checks on: the budget is known");
    println!("BGV on {}: level-0 budget {budget} bits", GPU.name());
}
