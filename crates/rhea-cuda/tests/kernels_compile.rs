//! Compiles every kernel source with NVRTC for sm_90 (no GPU needed).
//!
//! Its tests are `#[ignore]`d (they need libnvrtc); `scripts/check-kernels.sh` installs the NVRTC
//! wheel and runs them with `--include-ignored`, where a missing NVRTC is a failure.

mod common;

use common::require_nvrtc;
use rhea_cuda::registry::{self, all_kernel_sources, KernelSource};
use rhea_cuda::CudaError;

#[test]
#[ignore = "needs NVRTC (run with --include-ignored; scripts/check-kernels.sh and scripts/gpu-run.sh do)"]
fn kernels_compile() {
    require_nvrtc("kernels_compile");
    let (major, minor) = registry::nvrtc_version().unwrap();
    println!("NVRTC {major}.{minor}");
    for src in all_kernel_sources() {
        let image = registry::compile(src, "sm_90").unwrap_or_else(|e| panic!("{e}"));
        let kernels = registry::cubin_kernel_names(&image).unwrap_or_else(|e| panic!("{e}"));
        println!(
            "  {}: {} bytes of sm_90 CUBIN, {} kernels",
            src.name,
            image.len(),
            kernels.len()
        );
        assert!(!kernels.is_empty(), "{} compiled no kernel", src.name);
        // A per-degree module (`ntt_16`, `ntt_keyswitch_16`) holds its own degree's kernels and
        // no other degree's.
        let degree = src
            .name
            .rsplit('_')
            .next()
            .and_then(|d| d.parse::<u32>().ok());
        if let Some(own) = degree {
            // A kernel's degree is the first number in its name (`ntt_fwd_cols_16_7_8`: 16).
            let degree_of = |k: &str| k.split('_').find_map(|t| t.parse::<u32>().ok());
            assert!(
                kernels.iter().any(|k| degree_of(k) == Some(own)),
                "{} holds no kernel of its degree",
                src.name
            );
            for k in &kernels {
                assert!(
                    !matches!(degree_of(k), Some(d) if d != own),
                    "{} holds {k}, of another degree",
                    src.name
                );
            }
        }
    }
    // The base conversions are only the centred ones (the approximate family, never launched
    // in production, was removed): every tile narrow or not, its multi-conversion twin, the
    // register-input tiles for up to 12 and 16 inputs, and the rescale.
    let bconv = registry::compile(&rhea_cuda::bconv::BCONV, "sm_90").unwrap();
    let mut bconv = registry::cubin_kernel_names(&bconv).unwrap();
    bconv.sort();
    let mut want = vec!["bconv_rescale_last".to_string()];
    for narrow in ["", "_narrow"] {
        for (j, c) in [(4, 1), (8, 1), (8, 2), (5, 2), (6, 2), (7, 2)] {
            want.push(format!("bconv_matmul_j{j}_c{c}{narrow}_centered"));
            want.push(format!("bconv_multi_j{j}_c{c}{narrow}_centered"));
        }
        want.push(format!("bconv_matmul_j8_c2_u8{narrow}_centered"));
        for l16 in ["", "_l16"] {
            want.push(format!("bconv_rin_c2{narrow}_centered{l16}"));
            want.push(format!("bconv_multi_rin_c2{narrow}_centered{l16}"));
        }
    }
    want.sort();
    assert_eq!(bconv, want, "the bconv module's kernels");

    // The virtual architecture yields PTX naming every entry point.
    let ptx = registry::compile(&registry::ELEMENTWISE, "compute_90").unwrap();
    let text = String::from_utf8_lossy(&ptx);
    for f in ["ew_add", "ew_mul_add", "ew_mul_scalar", "ew_mul_scalar_add"] {
        assert!(
            text.contains(&format!(".entry {f}(")),
            "{f} missing from PTX"
        );
    }
}

#[test]
#[ignore = "needs NVRTC (run with --include-ignored; scripts/check-kernels.sh and scripts/gpu-run.sh do)"]
fn compile_errors_carry_the_log() {
    require_nvrtc("compile_errors_carry_the_log");
    static BAD: KernelSource = KernelSource {
        name: "bad",
        source: "extern \"C\" __global__ void k(int* x) { x[0] = undefined_name; }",
        headers: &[],
    };
    match registry::compile(&BAD, "sm_90") {
        Err(CudaError::Compile { kernel, log }) => {
            assert_eq!(kernel, "bad");
            assert!(log.contains("undefined_name"), "log: {log}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}

#[test]
#[ignore = "needs NVRTC (run with --include-ignored; scripts/check-kernels.sh and scripts/gpu-run.sh do)"]
fn disk_cache_round_trip() {
    require_nvrtc("disk_cache_round_trip");
    // The key depends on every input.
    let opts = registry::compile_options("sm_90");
    let v = registry::nvrtc_version().unwrap();
    let k1 = registry::cache_key(&registry::ELEMENTWISE, &opts, v);
    let img1 = registry::compiled_image(&registry::ELEMENTWISE, "sm_90").unwrap();
    let img2 = registry::compiled_image(&registry::ELEMENTWISE, "sm_90").unwrap();
    assert_eq!(img1, img2);
    if let Some(dir) = registry::cache_dir() {
        let hit = std::fs::read_dir(&dir)
            .map(|d| {
                d.flatten()
                    .any(|e| e.file_name().to_string_lossy().contains(&k1))
            })
            .unwrap_or(false);
        assert!(hit, "no cache file for key {k1} in {}", dir.display());
    }
}
