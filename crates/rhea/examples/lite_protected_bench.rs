//! LITE's protected mode against the unprotected GPU path (issue 38, `docs/lite.md` "Protected
//! mode"): key generation (secret, public, relinearisation and one rotation key), decryption and
//! mul+relin, and the all-data mode's add, mul+relin, rescale, rotation and decryption (the
//! ciphertexts protected too, `ProtectedEvaluator`) against the same unprotected operations, at a CKKS preset (default: the deep `n16_logqp1560_levels24`, N = 2^16), on GPU 0.
//! Each row is the median wall time of `REPS` runs after one warm-up, the device synchronised
//! after each run; the protected rows check their words against the unprotected ones first.
//!
//! ```text
//! cargo run --release -p rhea --example lite_protected_bench -- [PRESET] [REPS] [--json PATH]
//! ```

use std::time::Instant;

use rhea::ckks::{
    Ciphertext, CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator,
    ProtectedDecryptor, ProtectedEvaluator, ProtectedKeyGenerator,
};
use rhea::params::CkksParametersLiteral;
use rhea::rlwe::{Protection, PublicKey};
use rhea::unstable::{public_key_parts, HasRing};
use rhea::{Device, Error, Result};

const GPU: Device = Device::Cuda(0);

/// The median of `reps` timed runs of `f` (ms), after one warm-up, synchronising each.
fn median_ms(reps: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    GPU.synchronize()?;
    let mut s = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        f()?;
        GPU.synchronize()?;
        s.push(t.elapsed().as_secs_f64() * 1e3);
    }
    s.sort_by(f64::total_cmp);
    Ok(s[reps / 2])
}

fn preset(name: &str) -> Result<CkksParametersLiteral> {
    Ok(match name {
        "n16_logqp1560_levels24" => CkksParametersLiteral::n16_logqp1560_levels24(),
        "n16_logqp1440_levels24" => CkksParametersLiteral::n16_logqp1440_levels24(),
        "n16_logqp1520_levels26" => CkksParametersLiteral::n16_logqp1520_levels26(),
        "n15_logqp400_levels7" => CkksParametersLiteral::n15_logqp400_levels7(),
        "n14_logqp400_levels7" => CkksParametersLiteral::n14_logqp400_levels7(),
        "n13_logqp200_levels2" => CkksParametersLiteral::n13_logqp200_levels2(),
        other => {
            return Err(Error::InvalidInput(format!(
                "unknown preset `{other}` (n16_logqp1560_levels24, n16_logqp1440_levels24, \
                 n16_logqp1520_levels26, n15_logqp400_levels7, n14_logqp400_levels7, \
                 n13_logqp200_levels2)"
            )))
        }
    })
}

fn same_pk(ctx: &CkksContext, a: &PublicKey, b: &PublicKey) -> Result<bool> {
    for i in 0..2 {
        let r = ctx.ring();
        if r.download(&public_key_parts(a)[i])? != r.download(&public_key_parts(b)[i])? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args
        .iter()
        .position(|a| a == "--json")
        .and_then(|i| args.get(i + 1).cloned());
    let positional: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| !a.starts_with("--") && (*i == 0 || args[i - 1] != "--json"))
        .map(|(_, a)| a)
        .collect();
    let preset_name = positional
        .first()
        .map_or("n16_logqp1560_levels24", |s| s.as_str());
    let reps: usize = positional
        .get(1)
        .map_or(Ok(9), |s| s.parse())
        .map_err(|e| Error::InvalidInput(format!("REPS: {e}")))?;
    let params = preset(preset_name)?.build()?;
    let gpu = CkksContext::new(&params, GPU)?;
    let host = CkksContext::new(&params, Device::Cpu)?;
    println!(
        "LITE protected mode vs unprotected, {preset_name} (N = {}, {} Q + {} P limbs, dnum {}), \
         on {}, median of {reps}",
        params.n(),
        gpu.ring().q_len(),
        gpu.ring().p_len(),
        gpu.ring().dnum(),
        GPU.name()
    );
    let seed = [5u8; 32];
    let protection = Protection::new(&gpu)?;
    let mut rows: Vec<(String, f64, f64)> = Vec::new();

    // Key generation, step by step, from one seed each time (the same keys every run).
    let unprot = |step: usize| -> Result<()> {
        let mut kg = KeyGenerator::from_seed(&gpu, seed);
        let sk = kg.secret_key()?;
        if step >= 1 {
            kg.public_key(&sk)?;
        }
        if step >= 2 {
            kg.relinearization_key(&sk)?;
        }
        if step >= 3 {
            kg.galois_keys(&sk, &[1], false)?;
        }
        Ok(())
    };
    let prot = |step: usize| -> Result<()> {
        let mut kg = ProtectedKeyGenerator::from_seed(&gpu, &protection, seed)?;
        let sk = kg.secret_key()?;
        if step >= 1 {
            kg.public_key(&sk)?;
        }
        if step >= 2 {
            kg.relinearization_key(&sk)?;
        }
        if step >= 3 {
            kg.galois_keys(&sk, &[1], false)?;
        }
        Ok(())
    };
    let mut prev = (0.0, 0.0);
    for (step, name) in [
        "keygen: secret key",
        "keygen: + public key",
        "keygen: + relinearisation key",
        "keygen: + rotation key",
    ]
    .iter()
    .enumerate()
    {
        let u = median_ms(reps, || unprot(step))?;
        let p = median_ms(reps, || prot(step))?;
        let label = if step == 0 {
            name.to_string()
        } else {
            format!("{name} (difference)")
        };
        rows.push((label, u - prev.0, p - prev.1));
        prev = (u, p);
    }
    rows.push(("keygen: all four keys".into(), prev.0, prev.1));

    // The keys, once, and their agreement.
    let mut kg = KeyGenerator::from_seed(&gpu, seed);
    let sk = kg.secret_key()?;
    let pk = kg.public_key(&sk)?;
    let rlk = kg.relinearization_key(&sk)?;
    let mut kp = ProtectedKeyGenerator::from_seed(&gpu, &protection, seed)?;
    let psk = std::sync::Arc::new(kp.secret_key()?);
    let ppk = kp.public_key(&psk)?;
    let prlk = kp.relinearization_key(&psk)?;
    let pgk = kp.galois_keys(&psk, &[1], false)?;
    if !same_pk(&gpu, &pk, &ppk)? {
        return Err(Error::InvalidInput(
            "the protected public key differs from the unprotected one".into(),
        ));
    }

    // Decryption of a fresh top-level ciphertext (encrypted on the host: no plaintext on the
    // device in either case).
    let enc = Encoder::new(&host)?;
    let msg: Vec<f64> = (0..enc.slots()).map(|i| (i as f64 * 0.01).sin()).collect();
    let pk_host = pk.to_device(&host)?;
    let ct: Ciphertext = Encryptor::new(&host, &pk_host)?
        .encrypt(&enc.encode(&msg)?)?
        .to_device(&gpu)?;
    let dec = Decryptor::new(&gpu, &sk)?;
    let pdec = ProtectedDecryptor::new(&gpu, psk.clone())?;
    let want = gpu.ring().download(dec.decrypt(&ct)?.poly())?;
    if host.ring().download(pdec.decrypt(&ct)?.poly())? != want {
        return Err(Error::InvalidInput(
            "the protected decryption differs from the unprotected one".into(),
        ));
    }
    // The unprotected decryption leaves its plaintext on the device; the protected one brings
    // it to the host. Both rows end with the plaintext on the host (a download), as a user
    // decoding it would.
    let u = median_ms(reps, || {
        gpu.ring().download(dec.decrypt(&ct)?.poly())?;
        Ok(())
    })?;
    let p = median_ms(reps, || {
        pdec.decrypt(&ct)?;
        Ok(())
    })?;
    rows.push(("decrypt (to host words)".into(), u, p));

    // mul+relin: the evaluator is the same code in both contexts; only the key's origin differs.
    let eval = Evaluator::new(&gpu).with_relinearization_key(rlk)?;
    let peval = Evaluator::new(&gpu).with_relinearization_key(prlk.clone())?;
    let u = median_ms(reps.max(25), || eval.mul(&ct, &ct).map(drop))?;
    let p = median_ms(reps.max(25), || peval.mul(&ct, &ct).map(drop))?;
    rows.push(("mul+relin (+rescale)".into(), u, p));

    // The all-data mode: the ciphertexts themselves protected, every kernel of the operation
    // on XTS ciphertext (the unprotected evaluator in manual mode: the same operation).
    let manual = Evaluator::new(&gpu)
        .with_auto_rescale(false)
        .with_relinearization_key(prlk.clone())?
        .with_galois_keys(pgk.clone())?;
    let all = ProtectedEvaluator::new(&gpu, &protection)?
        .with_relinearization_key(prlk)?
        .with_galois_keys(pgk)?;
    let pct = all.protect(&ct)?;
    let prod = manual.mul_relin(&ct, &ct)?;
    let pprod = all.mul_relin(&pct, &pct)?;
    let words = |c: &Ciphertext| -> Result<Vec<Vec<u64>>> {
        c.parts().iter().map(|p| gpu.ring().download(p)).collect()
    };
    if words(&all.unprotect(&pprod)?)? != words(&prod)? {
        return Err(Error::InvalidInput(
            "the all-data mul+relin differs from the unprotected one".into(),
        ));
    }
    let reps_ops = reps.max(25);
    let u = median_ms(reps_ops, || manual.add(&ct, &ct).map(drop))?;
    let p = median_ms(reps_ops, || all.add(&pct, &pct).map(drop))?;
    rows.push(("all-data: add".into(), u, p));
    let u = median_ms(reps_ops, || manual.mul_relin(&ct, &ct).map(drop))?;
    let p = median_ms(reps_ops, || all.mul_relin(&pct, &pct).map(drop))?;
    rows.push(("all-data: mul+relin".into(), u, p));
    let u = median_ms(reps_ops, || manual.rescale(&prod).map(drop))?;
    let p = median_ms(reps_ops, || all.rescale(&pprod).map(drop))?;
    rows.push(("all-data: rescale".into(), u, p));
    let u = median_ms(reps_ops, || manual.rotate(&ct, 1).map(drop))?;
    let p = median_ms(reps_ops, || all.rotate(&pct, 1).map(drop))?;
    rows.push(("all-data: rotate".into(), u, p));
    let u = median_ms(reps, || {
        gpu.ring().download(dec.decrypt(&ct)?.poly())?;
        Ok(())
    })?;
    let p = median_ms(reps, || pdec.decrypt_protected(&pct).map(drop))?;
    rows.push(("all-data: decrypt (to host words)".into(), u, p));

    println!(
        "{:<40} {:>14} {:>14} {:>10}",
        "operation", "unprotected ms", "protected ms", "overhead"
    );
    let mut out = Vec::new();
    for (name, u, p) in &rows {
        println!(
            "{name:<40} {u:>14.3} {p:>14.3} {:>9.1}%",
            (p / u - 1.0) * 100.0
        );
        out.push(format!(
            "{{\"operation\": \"{name}\", \"unprotected_ms\": {u:.4}, \"protected_ms\": {p:.4}, \
             \"overhead_pct\": {:.2}}}",
            (p / u - 1.0) * 100.0
        ));
    }
    if let Some(path) = json {
        let text = format!(
            "{{\"preset\": \"{preset_name}\", \"device\": \"{}\", \"reps\": {reps}, \"rows\": [{}]}}\n",
            GPU.name(),
            out.join(", ")
        );
        std::fs::write(&path, text)
            .map_err(|e| Error::InvalidInput(format!("writing {path}: {e}")))?;
        println!("wrote {path}");
    }
    Ok(())
}
