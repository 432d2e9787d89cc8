//! Counts the kernels each module compiles and times its cold NVRTC compile (no cache, no GPU).
//!
//! ```text
//! kernel_census [--arch sm_90] [--all | MODULE...]
//! ```
//! Without module names: the modules a program's first CKKS key generation, encryption,
//! multiplication with relinearisation and decryption load on a GPU (`elementwise`, `sample`,
//! `ntt`, `bconv`, `ntt_keyswitch`, `fused`). Each is compiled with NVRTC for the architecture
//! (bypassing the disk cache) and its kernel entry points are read from the CUBIN's
//! `.text.<kernel>` sections ([`rhea_cuda::registry::cubin_kernel_names`]). `--list` prints the
//! names too. Needs only `libnvrtc` (`scripts/check-kernels.sh` installs it).

use std::time::Instant;

use rhea_cuda::registry::{self, all_kernel_sources, cubin_kernel_names};

/// The modules a first CKKS mul+relin loads (with key generation, encryption and decryption).
const FIRST_MUL_RELIN: &[&str] = &[
    "elementwise",
    "sample",
    "ntt",
    "bconv",
    "ntt_keyswitch",
    "fused",
];

fn main() {
    let mut arch = "sm_90".to_string();
    let mut names: Vec<String> = Vec::new();
    let mut list = false;
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
            "-h" | "--help" => usage(""),
            m => names.push(m.to_string()),
        }
    }
    if names.is_empty() {
        names = FIRST_MUL_RELIN.iter().map(|s| s.to_string()).collect();
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
    eprintln!("kernel_census [--arch sm_90] [--list] [--all | MODULE...]");
    std::process::exit(2)
}

fn fail(msg: &str) -> ! {
    eprintln!("kernel_census: {msg}");
    std::process::exit(1)
}
