//! Compiles one kernel source with NVRTC for `sm_90` and writes the CUBIN, for reading the
//! machine code (`scripts/sass.sh` runs this, then `nvdisasm` from the `nvidia-cuda-nvdisasm`
//! wheel). Needs libnvrtc, no GPU.
//!
//!   cargo run --release -p rhea-cuda --example sass -- bconv /tmp/bconv.cubin

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(name), Some(out)) = (args.next(), args.next()) else {
        eprintln!("usage: sass SOURCE OUT.cubin (sources: {})", names());
        return ExitCode::FAILURE;
    };
    let Some(src) = rhea_cuda::registry::ALL_KERNEL_SOURCES
        .iter()
        .find(|s| s.name == name)
    else {
        eprintln!("unknown source `{name}` (sources: {})", names());
        return ExitCode::FAILURE;
    };
    match rhea_cuda::registry::compile(src, "sm_90") {
        Ok(cubin) => match std::fs::write(&out, cubin) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{out}: {e}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn names() -> String {
    rhea_cuda::registry::ALL_KERNEL_SOURCES
        .iter()
        .map(|s| s.name)
        .collect::<Vec<_>>()
        .join(", ")
}
