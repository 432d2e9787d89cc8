//! LITE's overheads: each benchmark kernel plain and through LITE with the seed's optimisations
//! off and on (masked shuffle, delayed shuffle, selective padding, partial encryption), timed
//! by CUDA events (median of the samples; each sample the mean of `inner` launches), as a table
//! and JSON. Every LITE result is first checked against the plain kernel's (decrypted on the
//! host); a mismatch fails the run.
//!
//! ```text
//! cargo run --release -p rhea-cuda --example lite_bench -- [OUT.json] [--quick]
//!     [--degree N] [--limbs L] [--rows R] [--nnz-per-row K]
//! ```
//!
//! Kernels (see `kernels/lite.cu` and `docs/lite.md`): regular = element-wise `a·b + c mod q`
//! over `L` limbs of `N` words (60-bit primes) and one radix-2 NTT stage (distance N/4) over the
//! same shape; irregular = the NTT-domain automorphism gather
//! over `L` rows of `N` words, and a CSR SpMV mod a 61-bit prime with `R` rows and columns and
//! 0..2K entries per row (K on average).

use std::process::ExitCode;
use std::sync::Arc;

use cudarc::driver::sys::CUevent_flags;
use rhea_cuda::lite::{
    self, CsrMatrix, DeviceCsr, EwAccess, LiteBuffer, LiteForm, LiteSession, MulAdd, Shuffle,
};
use rhea_cuda::{DeviceModuli, GpuDevice, Result};

struct Config {
    degree: usize,
    limbs: usize,
    rows: usize,
    nnz_per_row: usize,
    warmup: usize,
    samples: usize,
    inner: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            degree: 1 << 16,
            limbs: 32,
            rows: 1 << 18,
            nnz_per_row: 16,
            warmup: 5,
            samples: 25,
            inner: 3,
        }
    }
}

/// One row of the report.
struct Row {
    kernel: &'static str,
    variant: String,
    masked: Option<bool>,
    delayed: Option<bool>,
    padding: &'static str,
    inputs_encrypted: bool,
    outputs_encrypted: bool,
    median_us: f64,
    min_us: f64,
    plain_us: f64,
}

impl Row {
    fn overhead_pct(&self) -> f64 {
        100.0 * (self.median_us / self.plain_us - 1.0)
    }
}

/// Median and minimum time of one call of `op` in µs (CUDA events around `inner` calls).
fn time(
    dev: &Arc<GpuDevice>,
    cfg: &Config,
    mut op: impl FnMut() -> Result<()>,
) -> Result<(f64, f64)> {
    for _ in 0..cfg.warmup {
        op()?;
    }
    dev.synchronize()?;
    let (ctx, stream) = (dev.context(), dev.stream());
    let mut t = Vec::with_capacity(cfg.samples);
    for _ in 0..cfg.samples.max(1) {
        let start = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        let stop = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        start.record(stream)?;
        for _ in 0..cfg.inner.max(1) {
            op()?;
        }
        stop.record(stream)?;
        stop.synchronize()?;
        t.push(start.elapsed_ms(&stop)? as f64 * 1e3 / cfg.inner.max(1) as f64);
    }
    t.sort_by(f64::total_cmp);
    Ok((t[t.len() / 2], t[0]))
}

/// SplitMix64 words below `q`.
fn fill(q: u64, count: usize, seed: u64) -> Vec<u64> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x1234_5678;
    (0..count)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % q
        })
        .collect()
}

fn padding_name(input: LiteForm, output: LiteForm) -> &'static str {
    match (input == LiteForm::Padded, output == LiteForm::Padded) {
        (true, true) => "all",
        (false, true) => "written",
        (true, false) => "read",
        (false, false) => "none",
    }
}

fn check(what: &str, got: &[u64], want: &[u64]) -> std::result::Result<(), String> {
    if got == want {
        Ok(())
    } else {
        let i = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
        Err(format!("{what}: differs from the plain kernel at word {i}"))
    }
}

type Outcome = std::result::Result<Vec<Row>, String>;

fn elementwise(dev: &Arc<GpuDevice>, s: &LiteSession, cfg: &Config) -> Result<Outcome> {
    let (n, limbs) = (cfg.degree, cfg.limbs);
    let moduli = rhea_cuda::ntt::bench_primes(60, n, limbs)?;
    let table = DeviceModuli::new(dev, &moduli)?;
    let gen = |seed: u64| -> Vec<u64> {
        let mut v = Vec::with_capacity(n * limbs);
        for (l, q) in moduli.iter().enumerate() {
            v.extend(fill(q.value(), n, seed * 1000 + l as u64));
        }
        v
    };
    let (a, b, c) = (gen(1), gen(2), gen(3));
    let up = |f: LiteForm| -> Result<[LiteBuffer; 3]> {
        Ok([
            s.upload(dev, &a, f)?,
            s.upload(dev, &b, f)?,
            s.upload(dev, &c, f)?,
        ])
    };
    let (plain_in, enc_in) = (up(LiteForm::Plain)?, up(LiteForm::Encrypted)?);
    fn op<'a>(
        ins: &'a [LiteBuffer; 3],
        table: &'a DeviceModuli,
        n: usize,
        limbs: usize,
    ) -> MulAdd<'a> {
        MulAdd {
            a: &ins[0],
            b: &ins[1],
            c: &ins[2],
            moduli: table,
            degree: n,
            limbs,
        }
    }
    let mut rows = Vec::new();
    // Plain: the reference result and time (the faster of one word and two words per thread).
    let mut want = Vec::new();
    let mut plain_us = f64::INFINITY;
    let mut plain_rows = Vec::new();
    for (access, name) in [
        (EwAccess::Word, "plain, 1 word/thread"),
        (EwAccess::V4, "plain, 2 words/thread"),
    ] {
        let mut out = LiteBuffer::alloc(dev, n * limbs, LiteForm::Plain)?;
        let o = op(&plain_in, &table, n, limbs);
        lite::mul_add(s, &mut out, &o, access, Shuffle::NAIVE)?;
        let got = s.download(&out)?;
        if want.is_empty() {
            want = got;
        } else if let Err(e) = check(name, &got, &want) {
            return Ok(Err(e));
        }
        let (med, min) = time(dev, cfg, || {
            lite::mul_add(s, &mut out, &o, access, Shuffle::NAIVE)
        })?;
        plain_us = plain_us.min(med);
        plain_rows.push((name, med, min));
    }
    for (name, med, min) in plain_rows {
        rows.push(Row {
            kernel: "elementwise",
            variant: name.into(),
            masked: None,
            delayed: None,
            padding: "none",
            inputs_encrypted: false,
            outputs_encrypted: false,
            median_us: med,
            min_us: min,
            plain_us,
        });
    }
    use LiteForm::{Encrypted as E, Plain as P};
    let sh = |masked, delayed| Shuffle { masked, delayed };
    let variants = [
        (
            EwAccess::Word,
            sh(false, false),
            E,
            E,
            "LITE word, naive (full mask)",
        ),
        (EwAccess::Word, sh(true, false), E, E, "LITE word, masked"),
        (EwAccess::Word, sh(false, true), E, E, "LITE word, delayed"),
        (
            EwAccess::Word,
            sh(true, true),
            E,
            E,
            "LITE word, masked + delayed",
        ),
        (
            EwAccess::Word,
            sh(true, true),
            E,
            P,
            "LITE word, inputs only",
        ),
        (
            EwAccess::Word,
            sh(true, true),
            P,
            E,
            "LITE word, outputs only",
        ),
        (EwAccess::V4, sh(true, false), E, E, "LITE v4"),
        (EwAccess::V4, sh(true, true), E, E, "LITE v4, delayed"),
        (EwAccess::V4, sh(true, true), E, P, "LITE v4, inputs only"),
        (EwAccess::V4, sh(true, true), P, E, "LITE v4, outputs only"),
    ];
    for (access, shuffle, fin, fout, name) in variants {
        let ins = if fin == P { &plain_in } else { &enc_in };
        let o = op(ins, &table, n, limbs);
        let mut out = LiteBuffer::alloc(dev, n * limbs, fout)?;
        lite::mul_add(s, &mut out, &o, access, shuffle)?;
        if let Err(e) = check(name, &s.download(&out)?, &want) {
            return Ok(Err(e));
        }
        let (med, min) = time(dev, cfg, || lite::mul_add(s, &mut out, &o, access, shuffle))?;
        rows.push(Row {
            kernel: "elementwise",
            variant: name.into(),
            masked: (access == EwAccess::Word).then_some(shuffle.masked),
            delayed: Some(shuffle.delayed),
            padding: "none",
            inputs_encrypted: fin == E,
            outputs_encrypted: fout == E,
            median_us: med,
            min_us: min,
            plain_us,
        });
    }
    Ok(Ok(rows))
}

fn ntt_stage(dev: &Arc<GpuDevice>, s: &LiteSession, cfg: &Config) -> Result<Outcome> {
    let (n, limbs) = (cfg.degree, cfg.limbs);
    let h = n / 4;
    let groups = n / (2 * h);
    let moduli = rhea_cuda::ntt::bench_primes(60, n, limbs)?;
    let table = DeviceModuli::new(dev, &moduli)?;
    let mut x = Vec::with_capacity(n * limbs);
    let mut tw = Vec::with_capacity(groups * limbs);
    for (l, q) in moduli.iter().enumerate() {
        x.extend(fill(q.value(), n, 20 + l as u64));
        tw.extend(fill(q.value(), groups, 90 + l as u64));
    }
    let twb = dev.upload(&tw)?;
    use LiteForm::{Encrypted as E, Plain as P};
    let variants = [
        (P, P, true, "plain, 2 butterflies/thread"),
        (E, E, false, "LITE v4"),
        (E, E, true, "LITE v4, delayed"),
        (E, P, true, "LITE v4, inputs only"),
        (P, E, true, "LITE v4, outputs only"),
    ];
    let (mut rows, mut want, mut plain_us) = (Vec::new(), Vec::new(), f64::NAN);
    for (fin, fout, delayed, name) in variants {
        let input = s.upload(dev, &x, fin)?;
        let op = lite::NttStage {
            input: &input,
            twiddles: &twb,
            moduli: &table,
            degree: n,
            limbs,
            half: h,
        };
        let mut out = LiteBuffer::alloc(dev, n * limbs, fout)?;
        lite::ntt_stage(s, &mut out, &op, delayed)?;
        let got = s.download(&out)?;
        if want.is_empty() {
            want = got;
        } else if let Err(e) = check(name, &got, &want) {
            return Ok(Err(e));
        }
        let (med, min) = time(dev, cfg, || lite::ntt_stage(s, &mut out, &op, delayed))?;
        let lite = fin != P || fout != P;
        if !lite {
            plain_us = med;
        }
        rows.push(Row {
            kernel: "ntt_stage",
            variant: name.into(),
            masked: None,
            delayed: lite.then_some(delayed),
            padding: "none",
            inputs_encrypted: fin == E,
            outputs_encrypted: fout == E,
            median_us: med,
            min_us: min,
            plain_us,
        });
    }
    Ok(Ok(rows))
}

fn gather(dev: &Arc<GpuDevice>, s: &LiteSession, cfg: &Config) -> Result<Outcome> {
    let (n, rows_n) = (cfg.degree, cfg.limbs);
    let data = fill(u64::MAX, n * rows_n, 7);
    let g = rhea_cuda::automorphism::rotation_galois(3, n)?;
    let plain_in = s.upload(dev, &data, LiteForm::Plain)?;
    let mut out = LiteBuffer::alloc(dev, n * rows_n, LiteForm::Plain)?;
    lite::gather(s, &mut out, &plain_in, g, n, rows_n, true)?;
    let want = s.download(&out)?;
    let (plain_us, plain_min) = time(dev, cfg, || {
        lite::gather(s, &mut out, &plain_in, g, n, rows_n, true)
    })?;
    let mut rows = vec![Row {
        kernel: "gather",
        variant: "plain".into(),
        masked: None,
        delayed: None,
        padding: "none",
        inputs_encrypted: false,
        outputs_encrypted: false,
        median_us: plain_us,
        min_us: plain_min,
        plain_us,
    }];
    use LiteForm::{Encrypted as E, Padded as D, Plain as P};
    let variants = [
        (D, D, false, "LITE naive (full padding, full mask)"),
        (D, D, true, "LITE full padding, masked"),
        (E, D, true, "LITE selective padding (output)"),
        (E, E, true, "LITE no padding"),
        (E, P, true, "LITE inputs only"),
        (P, E, true, "LITE outputs only"),
    ];
    for (fin, fout, masked, name) in variants {
        let inb = s.upload(dev, &data, fin)?;
        let mut out = LiteBuffer::alloc(dev, n * rows_n, fout)?;
        lite::gather(s, &mut out, &inb, g, n, rows_n, masked)?;
        if let Err(e) = check(name, &s.download(&out)?, &want) {
            return Ok(Err(e));
        }
        let (med, min) = time(dev, cfg, || {
            lite::gather(s, &mut out, &inb, g, n, rows_n, masked)
        })?;
        rows.push(Row {
            kernel: "gather",
            variant: name.into(),
            masked: Some(masked),
            delayed: None,
            padding: padding_name(fin, fout),
            inputs_encrypted: fin != P,
            outputs_encrypted: fout != P,
            median_us: med,
            min_us: min,
            plain_us,
        });
    }
    Ok(Ok(rows))
}

fn spmv(dev: &Arc<GpuDevice>, s: &LiteSession, cfg: &Config) -> Result<Outcome> {
    let q = rhea_cuda::ntt::bench_primes(61, 1 << 10, 1)?[0];
    let table = DeviceModuli::new(dev, &[q])?;
    let (rows_n, k) = (cfg.rows, cfg.nnz_per_row.max(1));
    let lens = fill(2 * k as u64 + 1, rows_n, 11);
    let mut row_ptr = vec![0u64];
    for l in &lens {
        row_ptr.push(row_ptr.last().unwrap() + l);
    }
    let nnz = *row_ptr.last().unwrap() as usize;
    let col = fill(rows_n as u64, nnz, 12);
    let val = fill(q.value(), nnz, 13);
    let m = CsrMatrix::new(row_ptr, col, val, rows_n)?;
    let x = fill(q.value(), rows_n, 14);
    let want = m.mul_vec(&x, &q)?;
    use LiteForm::{Encrypted as E, Padded as D, Plain as P};
    let sh = |masked, delayed| Shuffle { masked, delayed };
    let mut rows = Vec::new();
    let mut plain_us = f64::NAN;
    let variants = [
        (P, P, sh(true, true), "plain"),
        (
            D,
            D,
            sh(false, false),
            "LITE naive (full padding, full mask)",
        ),
        (D, D, sh(true, false), "LITE full padding, masked"),
        (E, D, sh(true, false), "LITE selective padding, masked"),
        (E, D, sh(false, true), "LITE selective padding, delayed"),
        (
            E,
            D,
            sh(true, true),
            "LITE selective padding, masked + delayed",
        ),
        (E, E, sh(true, true), "LITE no padding, masked + delayed"),
        (E, P, sh(true, true), "LITE inputs only"),
        (P, D, sh(true, true), "LITE outputs only"),
    ];
    for (fin, fout, shuffle, name) in variants {
        let a = DeviceCsr::upload(s, dev, &m, fin)?;
        let xb = s.upload(dev, &x, fin)?;
        let mut y = LiteBuffer::alloc(dev, rows_n, fout)?;
        lite::spmv(s, &mut y, &a, &xb, &table, shuffle)?;
        if let Err(e) = check(name, &s.download(&y)?, &want) {
            return Ok(Err(e));
        }
        let (med, min) = time(dev, cfg, || lite::spmv(s, &mut y, &a, &xb, &table, shuffle))?;
        if fin == P && fout == P {
            plain_us = med;
        }
        let lite = fin != P || fout != P;
        rows.push(Row {
            kernel: "spmv",
            variant: name.into(),
            masked: lite.then_some(shuffle.masked),
            delayed: lite.then_some(shuffle.delayed),
            padding: padding_name(fin, fout),
            inputs_encrypted: fin != P,
            outputs_encrypted: fout != P,
            median_us: med,
            min_us: min,
            plain_us,
        });
    }
    Ok(Ok(rows))
}

fn opt(b: Option<bool>) -> &'static str {
    match b {
        Some(true) => "on",
        Some(false) => "off",
        None => "-",
    }
}

fn table(rows: &[Row]) -> String {
    let mut t = format!(
        "{:<12} {:<44} {:>6} {:>7} {:>8} {:>4} {:>4} {:>11} {:>10} {:>10}\n",
        "kernel",
        "variant",
        "masked",
        "delayed",
        "padding",
        "enc in",
        "out",
        "median µs",
        "min µs",
        "overhead"
    );
    for r in rows {
        t += &format!(
            "{:<12} {:<44} {:>6} {:>7} {:>8} {:>4} {:>4} {:>11.1} {:>10.1} {:>9.1}%\n",
            r.kernel,
            r.variant,
            opt(r.masked),
            opt(r.delayed),
            r.padding,
            if r.inputs_encrypted { "yes" } else { "no" },
            if r.outputs_encrypted { "yes" } else { "no" },
            r.median_us,
            r.min_us,
            r.overhead_pct()
        );
    }
    t
}

fn json(dev: &GpuDevice, cfg: &Config, rows: &[Row]) -> String {
    let results: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "kernel": r.kernel,
                "variant": r.variant,
                "masked_shuffle": r.masked,
                "delayed_shuffle": r.delayed,
                "padding": r.padding,
                "inputs_encrypted": r.inputs_encrypted,
                "outputs_encrypted": r.outputs_encrypted,
                "median_us": r.median_us,
                "min_us": r.min_us,
                "plain_median_us": r.plain_us,
                "overhead_pct": r.overhead_pct(),
            })
        })
        .collect();
    let v = serde_json::json!({
        "benchmark": "lite",
        "device": dev.name(),
        "config": {
            "degree": cfg.degree,
            "limbs_or_rows": cfg.limbs,
            "spmv_rows": cfg.rows,
            "spmv_nnz_per_row": cfg.nnz_per_row,
            "samples": cfg.samples,
            "launches_per_sample": cfg.inner,
            "statistic": "median over samples of CUDA-event time per launch",
        },
        "results": results,
    });
    serde_json::to_string_pretty(&v).unwrap_or_default()
}

fn main() -> ExitCode {
    let mut cfg = Config::default();
    let mut out: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = |what: &str| -> usize {
            args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| {
                eprintln!("{what} needs a number");
                std::process::exit(2)
            })
        };
        match a.as_str() {
            "--quick" => {
                cfg.samples = 21;
                cfg.inner = 1;
                cfg.warmup = 2;
                cfg.limbs = 8;
                cfg.rows = 1 << 16;
            }
            "--degree" => cfg.degree = num("--degree"),
            "--limbs" => cfg.limbs = num("--limbs"),
            "--rows" => cfg.rows = num("--rows"),
            "--nnz-per-row" => cfg.nnz_per_row = num("--nnz-per-row"),
            "-h" | "--help" => {
                println!(
                    "lite_bench [OUT.json] [--quick] [--degree N] [--limbs L] [--rows R] [--nnz-per-row K]"
                );
                return ExitCode::SUCCESS;
            }
            path => out = Some(path.to_string()),
        }
    }
    let dev = match GpuDevice::new(0) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("lite_bench: no GPU: {e}");
            return ExitCode::from(3);
        }
    };
    let session = match LiteSession::new() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("lite_bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "device: {}; element-wise and gather: {} × 2^{}; SpMV: {} rows, {} entries per row on average",
        dev.name(),
        cfg.limbs,
        cfg.degree.trailing_zeros(),
        cfg.rows,
        cfg.nnz_per_row
    );
    let mut rows = Vec::new();
    for suite in [elementwise, ntt_stage, gather, spmv] {
        match suite(&dev, &session, &cfg) {
            Ok(Ok(r)) => rows.extend(r),
            Ok(Err(mismatch)) => {
                eprintln!("lite_bench: WRONG RESULT: {mismatch}");
                return ExitCode::FAILURE;
            }
            Err(e) => {
                eprintln!("lite_bench: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    print!("{}", table(&rows));
    if let Some(path) = out {
        if let Err(e) = std::fs::write(&path, json(&dev, &cfg, &rows)) {
            eprintln!("lite_bench: cannot write {path}: {e}");
            return ExitCode::FAILURE;
        }
        println!("wrote {path}");
    }
    ExitCode::SUCCESS
}
