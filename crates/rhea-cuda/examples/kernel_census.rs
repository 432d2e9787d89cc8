//! Counts the kernels each module compiles and times its cold NVRTC compile (no cache, no GPU).
//!
//! ```text
//! kernel_census [--arch sm_90] [--list] [--degree LOG_N] [--all | MODULE...]
//! ```
//! Without module names: the modules a program's first CKKS key generation, encryption,
//! multiplication with relinearisation and decryption load on a GPU at N = 2^16 (`elementwise`,
//! `sample`, `ntt_16`, `bconv`, `ntt_keyswitch_16`, `fused`; `--degree LOG_N` for another). Each is compiled with NVRTC for the architecture
//! (bypassing the disk cache) and its kernel entry points are read from the CUBIN's
//! `.text.<kernel>` sections ([`rhea_cuda::registry::cubin_kernel_names`]). `--list` prints the
//! names too. Needs only `libnvrtc` (`scripts/check-kernels.sh` installs it).

use std::time::Instant;

use rhea_cuda::registry::{self, all_kernel_sources, cubin_kernel_names};

/// The modules a first CKKS mul+relin at `N = 2^log_n` loads (with key generation, encryption
/// and decryption).
fn first_mul_relin(log_n: u32) -> Vec<String> {
    vec![
        "elementwise".into(),
        "sample".into(),
        rhea_cuda::ntt::ntt_source(log_n).name.into(),
        "bconv".into(),
        rhea_cuda::ntt_keyswitch::ntt_keyswitch_source(log_n)
            .name
            .into(),
        "fused".into(),
    ]
}

fn main() {
    let mut arch = "sm_90".to_string();
    let mut names: Vec<String> = Vec::new();
    let mut list = false;
    let mut log_n = 16;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--arch" => arch = args.next().unwrap_or_else(|| usage("--arch needs a value")),
            "--all" => {
                names = all_kernel_sources()
                    .iter()
                    .map(|s| s.name.to_string())
                    .collect()
            }
            "--list" => list = true,
            "--degree" => {
                log_n = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| usage("--degree needs log2 N"))
            }
            "-h" | "--help" => usage(""),
            m => names.push(m.to_string()),
        }
    }
    if names.is_empty() {
        names = first_mul_relin(log_n);
    }
    let (mut kernels, mut seconds) = (0, 0.0);
    println!("{:<16} {:>8} {:>10}", "module", "kernels", "compile s");
    for name in &names {
        let Some(src) = registry::kernel_source(name) else {
            usage(&format!("no kernel source named {name}"))
        };
        let t = Instant::now();
        let image = registry::compile(src, &arch).unwrap_or_else(|e| fail(&e.to_string()));
        let dt = t.elapsed().as_secs_f64();
        let entries = cubin_kernel_names(&image).unwrap_or_else(|e| fail(&e.to_string()));
        println!("{:<16} {:>8} {:>10.2}", name, entries.len(), dt);
        if list {
            for e in &entries {
                println!("    {e}");
            }
        }
        kernels += entries.len();
        seconds += dt;
    }
    println!("{:<16} {:>8} {:>10.2}", "total", kernels, seconds);
}

fn usage(msg: &str) -> ! {
    if !msg.is_empty() {
        eprintln!("kernel_census: {msg}");
    }
    eprintln!("kernel_census [--arch sm_90] [--list] [--degree LOG_N] [--all | MODULE...]");
    std::process::exit(2)
}

fn fail(msg: &str) -> ! {
    eprintln!("kernel_census: {msg}");
    std::process::exit(1)
}
