//! Where BGV HEMUL / HEROT spend their time on the CPU: each stage of the key-switching path
//! timed alone (min and median of many calls), at one of HE-Booster's presets.
//!
//! ```text
//! cargo run --release -p rhea --example bgv_stages -- [13|14|15] [REPS] [STAGE]
//! ```

use std::time::Instant;

use rand::Rng;
use rhea::bgv::{BgvContext, BgvParametersLiteral, Encoder, Encryptor, Evaluator, KeyGenerator};
use rhea::unstable::HasRing;
use rhea::{Device, Result};

/// Runs `f` `reps` times (after one warm-up) and prints the min and median in ms; with a
/// stage filter (the third argument) only the stages whose name contains it run.
fn time(name: &str, reps: usize, mut f: impl FnMut() -> Result<()>) -> Result<()> {
    if let Some(only) = std::env::args().nth(3) {
        if !name.contains(&only) {
            return Ok(());
        }
    }
    f()?;
    let mut s = Vec::with_capacity(reps);
    let cpu0 = cpu_seconds();
    for _ in 0..reps {
        let t = Instant::now();
        f()?;
        s.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let cpu = (cpu_seconds() - cpu0) * 1e3 / reps as f64;
    s.sort_by(f64::total_cmp);
    println!(
        "  {name:<28} min {:>8.3} ms   median {:>8.3} ms   cpu {cpu:>8.3} ms",
        s[0],
        s[reps / 2]
    );
    Ok(())
}

/// User + system CPU time of the process so far (all threads), from `/proc/self/stat` (clock
/// ticks of 10 ms: use enough repetitions), `0` where that file is missing.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// FNV-1a over the words of every part of every ciphertext (a bit-identity check between
/// builds: `bgv_stages digest`).
fn digest(ring: &rhea::unstable::RnsRing, cts: &[rhea::bgv::Ciphertext]) -> Result<u64> {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for ct in cts {
        for p in ct.parts() {
            for w in ring.download(p)? {
                for b in w.to_le_bytes() {
                    h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
                }
            }
        }
        h ^= ct.factor();
    }
    Ok(h)
}

/// Seeded keys and ciphertexts at every preset, then HEMUL (auto mod switch), HEROT, hoisted
/// rotations, the column swap, a 3-part product relinearised later, additions with different
/// factors and mod switches down to level 0; prints one digest per preset.
fn digests() -> Result<()> {
    for (name, lit) in [
        ("13", BgvParametersLiteral::he_booster_n13_logqp218()),
        ("14", BgvParametersLiteral::he_booster_n14_logqp438()),
        ("15", BgvParametersLiteral::he_booster_n15_logqp881()),
        ("test12", BgvParametersLiteral::test_n12_levels5_insecure()),
    ] {
        let params = lit.build()?;
        let ctx = BgvContext::new(&params, Device::Cpu)?;
        let mut keygen = KeyGenerator::from_seed(&ctx, [7u8; 32]);
        let sk = keygen.secret_key()?;
        let pk = keygen.public_key(&sk)?;
        let rlk = keygen.relinearization_key(&sk)?;
        let gk = keygen.galois_keys(&sk, &[1, -3, 5], true)?;
        let encoder = Encoder::new(&ctx)?;
        let encryptor = Encryptor::new(&ctx, &pk)?.with_seed([9u8; 32]);
        let t = params.t();
        let x: Vec<u64> = (0..encoder.slots() as u64)
            .map(|i| (i * 7919 + 13) % t)
            .collect();
        let y: Vec<u64> = (0..encoder.slots() as u64)
            .map(|i| (i * i + 5) % t)
            .collect();
        let cx = encryptor.encrypt(&encoder.encode(&x)?)?;
        let cy = encryptor.encrypt(&encoder.encode(&y)?)?;
        let eval = Evaluator::new(&ctx)
            .with_relinearization_key(rlk)?
            .with_galois_keys(gk)?;
        let manual = Evaluator::new(&ctx).with_auto_mod_switch(false);
        let mut out = vec![eval.mul(&cx, &cy)?];
        out.push(eval.rotate_rows(&cx, 1)?);
        out.extend(eval.rotate_rows_hoisted(&cy, &[1, -3, 5])?);
        out.push(eval.rotate_columns(&cx)?);
        let three = manual.mul_no_relin(&cx, &cy)?;
        out.push(eval.relinearize(&three)?);
        let switched = eval.mod_switch(&cy)?;
        out.push(eval.add(&out[0], &switched)?);
        out.push(eval.sub(&cx, &out[1])?);
        out.push(eval.mod_switch_to_level(&cx, 0)?);
        out.push(eval.square(&out[0])?);
        println!("digest {name}: {:016x}", digest(ctx.ring(), &out)?);
    }
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("digest") {
        return digests();
    }
    let set = args.get(1).map_or("13", String::as_str);
    let reps: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(50);
    let lit = match set {
        "14" => BgvParametersLiteral::he_booster_n14_logqp438(),
        "15" => BgvParametersLiteral::he_booster_n15_logqp881(),
        _ => BgvParametersLiteral::he_booster_n13_logqp218(),
    };
    let params = lit.build()?;
    println!("{params}");
    let ctx = BgvContext::new(&params, Device::Cpu)?;
    let mut keygen = KeyGenerator::new(&ctx)?;
    let sk = keygen.secret_key()?;
    let pk = keygen.public_key(&sk)?;
    let rlk = keygen.relinearization_key(&sk)?;
    let gk = keygen.galois_keys(&sk, &[1], false)?;
    let encoder = Encoder::new(&ctx)?;
    let encryptor = Encryptor::new(&ctx, &pk)?;
    let t = params.t();
    let mut rng = rand::rng();
    let x: Vec<u64> = (0..encoder.slots())
        .map(|_| rng.random_range(0..t))
        .collect();
    let cx = encryptor.encrypt(&encoder.encode(&x)?)?;
    let cy = encryptor.encrypt(&encoder.encode(&x)?)?;
    let rlk_parts = rlk.key().parts().to_vec_clone()?;
    let eval = Evaluator::new(&ctx)
        .with_auto_mod_switch(false)
        .with_relinearization_key(rlk)?
        .with_galois_keys(gk)?;
    let ring = ctx.ring();
    let rlwe = ctx.rlwe();
    let prod = eval.mul_no_relin(&cx, &cy)?;
    let c2 = &prod.parts()[2];
    let digits = ring.mod_up(c2)?;
    let [acc0, _acc1] = ring.keyswitch_inner_product(&digits, &rlk_parts)?;
    let g = rlwe.galois_element_for_rotation(1);

    time("HEMUL (mul + relin)", reps, || eval.mul(&cx, &cy).map(drop))?;
    time("HEROT (rotate 1)", reps, || {
        eval.rotate_rows(&cx, 1).map(drop)
    })?;
    time("tensor (mul_no_relin)", reps, || {
        eval.mul_no_relin(&cx, &cy).map(drop)
    })?;
    time("relinearize", reps, || eval.relinearize(&prod).map(drop))?;
    time("  mod_up (decompose)", reps, || ring.mod_up(c2).map(drop))?;
    time("  inner product", reps, || {
        ring.keyswitch_inner_product(&digits, &rlk_parts).map(drop)
    })?;
    time("  mod_down (one half)", reps, || {
        ring.mod_down(&acc0).map(drop)
    })?;
    time("  keyswitch_moddown", reps, || {
        ring.keyswitch_moddown(&digits, &rlk_parts, [Some(c2), Some(c2)])
            .map(drop)
    })?;
    time("automorphism (one part)", reps, || {
        ring.automorphism(c2, g).map(drop)
    })?;
    time("mod_switch", reps, || eval.mod_switch(&cx).map(drop))?;
    let mut p = c2.try_clone()?;
    time("NTT inverse+forward (all)", reps, || {
        ring.ntt_inverse(&mut p)?;
        ring.ntt_forward(&mut p)
    })?;
    Ok(())
}

/// Deep copies of a key's digit pairs (the harness needs owned `[Poly; 2]`s).
trait CloneParts {
    fn to_vec_clone(&self) -> Result<Vec<[rhea::backend::Poly; 2]>>;
}

impl CloneParts for [[rhea::backend::Poly; 2]] {
    fn to_vec_clone(&self) -> Result<Vec<[rhea::backend::Poly; 2]>> {
        self.iter()
            .map(|[b, a]| Ok([b.try_clone()?, a.try_clone()?]))
            .collect()
    }
}
