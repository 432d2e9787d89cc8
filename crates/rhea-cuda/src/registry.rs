//! The kernel registry: embedded CUDA sources, NVRTC compilation and the on-disk cache.
//!
//! Every kernel source is a `kernels/*.cu` file embedded with `include_str!`, together with the
//! headers (`kernels/*.cuh`) it includes, as a [`KernelSource`]. [`all_kernel_sources`] lists them
//! all. A source is compiled by NVRTC for the device's own architecture (`sm_90` on H100/H200) to
//! a CUBIN, with [`compile_options`], and the CUBIN is cached on disk under a SHA-256 of the source,
//! its headers, the options and the NVRTC version ([`cache_key`]). The cache directory is
//! `$RHEA_KERNEL_CACHE`, else `$XDG_CACHE_HOME/rhea/kernels`, else `~/.cache/rhea/kernels`;
//! `RHEA_KERNEL_CACHE=off` disables it. Loaded modules are cached per device in memory by
//! [`crate::GpuDevice::module`].
//!
//! Compilation needs only NVRTC (`libnvrtc`), not a GPU: [`compile_all`] checks every kernel for
//! a given architecture on a CPU-only machine (CI runs it through `scripts/check-kernels.sh`).
//!
//! To add a kernel file: write `kernels/foo.cu` (it may `#include "common.cuh"`), add a
//! `pub const FOO: KernelSource` below listing the headers it includes, and add it to
//! [`ALL_KERNEL_SOURCES`]. The `kernels_compile` test then covers it.

use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::OnceLock;

use cudarc::nvrtc::sys::{self as nvrtc, nvrtcResult};
use sha2::{Digest, Sha256};

use crate::error::{CudaError, Result};

/// A header that kernel sources `#include` by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The include name, e.g. `common.cuh`.
    pub name: &'static str,
    /// The header text.
    pub source: &'static str,
}

/// One CUDA translation unit: a named `.cu` source and the headers it includes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelSource {
    /// The module name (the file stem), unique among all sources.
    pub name: &'static str,
    /// The `.cu` text.
    pub source: &'static str,
    /// Every header the source includes, directly or indirectly.
    pub headers: &'static [Header],
}

/// `kernels/common.cuh`: device-side modular arithmetic shared by all kernels.
pub const COMMON_CUH: Header = Header {
    name: "common.cuh",
    source: include_str!("../kernels/common.cuh"),
};

/// `kernels/elementwise.cu`: element-wise RNS arithmetic over `[poly][limb][N]` buffers.
pub const ELEMENTWISE: KernelSource = KernelSource {
    name: "elementwise",
    source: include_str!("../kernels/elementwise.cu"),
    headers: &[COMMON_CUH],
};

/// `kernels/arith_selftest.cu`: runs each `common.cuh` function on arrays (tests only).
pub const ARITH_SELFTEST: KernelSource = KernelSource {
    name: "arith_selftest",
    source: include_str!("../kernels/arith_selftest.cu"),
    headers: &[COMMON_CUH],
};

/// Every kernel source of the crate (add new ones here).
pub static ALL_KERNEL_SOURCES: &[KernelSource] = &[
    ELEMENTWISE,
    ARITH_SELFTEST,
    crate::ntt::NTT_BY_DEGREE[0],
    crate::ntt::NTT_BY_DEGREE[1],
    crate::ntt::NTT_BY_DEGREE[2],
    crate::ntt::NTT_BY_DEGREE[3],
    crate::ntt::NTT_BY_DEGREE[4],
    crate::ntt::NTT_BY_DEGREE[5],
    crate::ntt_keyswitch::NTT_KEYSWITCH_BY_DEGREE[0],
    crate::ntt_keyswitch::NTT_KEYSWITCH_BY_DEGREE[1],
    crate::ntt_keyswitch::NTT_KEYSWITCH_BY_DEGREE[2],
    crate::ntt_keyswitch::NTT_KEYSWITCH_BY_DEGREE[3],
    crate::ntt_keyswitch::NTT_KEYSWITCH_BY_DEGREE[4],
    crate::ntt_keyswitch::NTT_KEYSWITCH_BY_DEGREE[5],
    crate::bconv::BCONV,
    crate::automorphism::AUTOMORPHISM,
    crate::sample::SAMPLE,
    crate::fused::FUSED,
    crate::lite::LITE,
    crate::lite::fhe::LITE_FHE,
    crate::lite::ops::LITE_OPS,
];

/// Every kernel source of the crate.
pub fn all_kernel_sources() -> &'static [KernelSource] {
    ALL_KERNEL_SOURCES
}

/// The source named `name`, if any.
pub fn kernel_source(name: &str) -> Option<&'static KernelSource> {
    ALL_KERNEL_SOURCES.iter().find(|s| s.name == name)
}

/// The NVRTC options used for an architecture such as `sm_90`. With the developer feature
/// `dev-kernel-defines` only, plus one `-D` per entry of the comma-separated environment
/// variable `RHEA_NVRTC_DEFINES` (kernel experiments, e.g. `NTT_MIN_BLOCKS=10`; they enter the
/// cache key like every option).
pub fn compile_options(arch: &str) -> Vec<String> {
    #[cfg_attr(not(feature = "dev-kernel-defines"), allow(unused_mut))]
    let mut o = vec![
        format!("--gpu-architecture={arch}"),
        "-std=c++17".into(),
        "--device-int128".into(),
        "-default-device".into(),
    ];
    #[cfg(feature = "dev-kernel-defines")]
    if let Ok(defs) = std::env::var("RHEA_NVRTC_DEFINES") {
        o.extend(
            defs.split(',')
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(|d| format!("-D{d}")),
        );
    }
    o
}

/// The cache key of a source compiled with `options` by NVRTC `nvrtc_version`: the hex SHA-256
/// of the name, source, every header (name and text), the options and the version.
pub fn cache_key(source: &KernelSource, options: &[String], nvrtc_version: (i32, i32)) -> String {
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(b"rhea-kernel-cache-v1");
    field(source.name.as_bytes());
    field(source.source.as_bytes());
    for hdr in source.headers {
        field(hdr.name.as_bytes());
        field(hdr.source.as_bytes());
    }
    for o in options {
        field(o.as_bytes());
    }
    field(format!("nvrtc {}.{}", nvrtc_version.0, nvrtc_version.1).as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The on-disk cache directory, or `None` when disabled (`RHEA_KERNEL_CACHE=off`) or when no
/// home directory is known.
pub fn cache_dir() -> Option<PathBuf> {
    let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(dir) = nonempty("RHEA_KERNEL_CACHE") {
        if dir == "off" || dir == "0" {
            return None;
        }
        return Some(PathBuf::from(dir));
    }
    if let Some(x) = nonempty("XDG_CACHE_HOME") {
        return Some(PathBuf::from(x).join("rhea").join("kernels"));
    }
    nonempty("HOME").map(|h| PathBuf::from(h).join(".cache").join("rhea").join("kernels"))
}

fn nvrtc_guard<T>(what: &str, f: impl FnOnce() -> T) -> Result<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".into());
        CudaError::NvrtcMissing(format!("{what}: {msg}"))
    })
}

/// The NVRTC version `(major, minor)`, loading `libnvrtc` on first use.
///
/// Errors: [`CudaError::NvrtcMissing`] when the library cannot be loaded.
pub fn nvrtc_version() -> Result<(i32, i32)> {
    static STATE: OnceLock<Result<(i32, i32)>> = OnceLock::new();
    STATE
        .get_or_init(|| {
            // SAFETY: only tries to dlopen the library names cudarc knows.
            let present = nvrtc_guard("probing libnvrtc", || unsafe { nvrtc::is_culib_present() })?;
            if !present {
                return Err(CudaError::NvrtcMissing(
                    "libnvrtc could not be loaded (add its directory to LD_LIBRARY_PATH)".into(),
                ));
            }
            let (mut major, mut minor) = (0, 0);
            // SAFETY: nvrtcVersion writes two ints through valid pointers.
            let r = nvrtc_guard("nvrtcVersion", || unsafe {
                nvrtc::nvrtcVersion(&mut major, &mut minor)
            })?;
            if r != nvrtcResult::NVRTC_SUCCESS {
                return Err(CudaError::NvrtcMissing(format!(
                    "nvrtcVersion failed: {r:?}"
                )));
            }
            Ok((major, minor))
        })
        .clone()
}

/// Whether NVRTC can be loaded on this machine.
pub fn nvrtc_available() -> bool {
    nvrtc_version().is_ok()
}

fn check_arch(arch: &str) -> Result<()> {
    let digits = arch
        .strip_prefix("sm_")
        .or_else(|| arch.strip_prefix("compute_"))
        .map(|r| r.trim_end_matches(['a', 'f']));
    match digits {
        Some(d) if !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) => Ok(()),
        _ => Err(CudaError::InvalidArgument(format!(
            "`{arch}` is not a GPU architecture like sm_90 or compute_90"
        ))),
    }
}

struct Program(nvrtc::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the program was created by nvrtcCreateProgram and is destroyed once.
        unsafe {
            let _ = nvrtc::nvrtcDestroyProgram(&mut self.0);
        }
    }
}

fn nvrtc_err(call: &str, r: nvrtcResult) -> CudaError {
    CudaError::Nvrtc(format!("{call} failed: {r:?}"))
}

/// Compiles `source` for `arch` with NVRTC (no cache): a CUBIN for `sm_XY`, or NUL-terminated
/// PTX for a virtual `compute_XY` architecture.
///
/// Errors: [`CudaError::NvrtcMissing`] without NVRTC; [`CudaError::Compile`] with the full log
/// when NVRTC rejects the source.
pub fn compile(source: &KernelSource, arch: &str) -> Result<Vec<u8>> {
    check_arch(arch)?;
    nvrtc_version()?;
    let options = compile_options(arch);
    nvrtc_guard("NVRTC compilation", || {
        compile_inner(source, arch, &options)
    })?
}

fn cstring(s: &str, what: &str) -> Result<CString> {
    CString::new(s).map_err(|_| CudaError::InvalidArgument(format!("{what} contains a NUL byte")))
}

fn compile_inner(source: &KernelSource, arch: &str, options: &[String]) -> Result<Vec<u8>> {
    let src = cstring(source.source, source.name)?;
    let name = cstring(&format!("{}.cu", source.name), source.name)?;
    let hdr_src: Vec<CString> = source
        .headers
        .iter()
        .map(|h| cstring(h.source, h.name))
        .collect::<Result<_>>()?;
    let hdr_names: Vec<CString> = source
        .headers
        .iter()
        .map(|h| cstring(h.name, h.name))
        .collect::<Result<_>>()?;
    let hdr_src_ptrs: Vec<*const c_char> = hdr_src.iter().map(|c| c.as_ptr()).collect();
    let hdr_name_ptrs: Vec<*const c_char> = hdr_names.iter().map(|c| c.as_ptr()).collect();
    let opts: Vec<CString> = options
        .iter()
        .map(|o| cstring(o, "option"))
        .collect::<Result<_>>()?;
    let opt_ptrs: Vec<*const c_char> = opts.iter().map(|c| c.as_ptr()).collect();

    let mut prog = Program(std::ptr::null_mut());
    // SAFETY: every pointer refers to a live NUL-terminated string owned above; the arrays have
    // exactly `headers.len()` entries.
    let r = unsafe {
        nvrtc::nvrtcCreateProgram(
            &mut prog.0,
            src.as_ptr(),
            name.as_ptr(),
            hdr_src_ptrs.len() as i32,
            hdr_src_ptrs.as_ptr(),
            hdr_name_ptrs.as_ptr(),
        )
    };
    if r != nvrtcResult::NVRTC_SUCCESS {
        return Err(nvrtc_err("nvrtcCreateProgram", r));
    }
    // SAFETY: `prog.0` is a valid program; the option array is valid for the call.
    let r = unsafe { nvrtc::nvrtcCompileProgram(prog.0, opt_ptrs.len() as i32, opt_ptrs.as_ptr()) };
    if r != nvrtcResult::NVRTC_SUCCESS {
        let log = program_log(&prog).unwrap_or_else(|e| format!("(no log: {e})"));
        return Err(CudaError::Compile {
            kernel: source.name.to_string(),
            log: format!("{r:?} with options {options:?}\n{log}"),
        });
    }
    if arch.starts_with("sm_") {
        let mut size = 0usize;
        // SAFETY: valid program, valid out-pointer.
        let r = unsafe { nvrtc::nvrtcGetCUBINSize(prog.0, &mut size) };
        if r != nvrtcResult::NVRTC_SUCCESS {
            return Err(nvrtc_err("nvrtcGetCUBINSize", r));
        }
        let mut cubin = vec![0u8; size];
        // SAFETY: the buffer holds exactly the `size` bytes NVRTC reported.
        let r = unsafe { nvrtc::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr() as *mut c_char) };
        if r != nvrtcResult::NVRTC_SUCCESS {
            return Err(nvrtc_err("nvrtcGetCUBIN", r));
        }
        Ok(cubin)
    } else {
        let mut size = 0usize;
        // SAFETY: valid program, valid out-pointer.
        let r = unsafe { nvrtc::nvrtcGetPTXSize(prog.0, &mut size) };
        if r != nvrtcResult::NVRTC_SUCCESS {
            return Err(nvrtc_err("nvrtcGetPTXSize", r));
        }
        let mut ptx = vec![0u8; size];
        // SAFETY: the buffer holds exactly the `size` bytes NVRTC reported (NUL included).
        let r = unsafe { nvrtc::nvrtcGetPTX(prog.0, ptx.as_mut_ptr() as *mut c_char) };
        if r != nvrtcResult::NVRTC_SUCCESS {
            return Err(nvrtc_err("nvrtcGetPTX", r));
        }
        Ok(ptx)
    }
}

fn program_log(prog: &Program) -> Result<String> {
    let mut size = 0usize;
    // SAFETY: valid program, valid out-pointer.
    let r = unsafe { nvrtc::nvrtcGetProgramLogSize(prog.0, &mut size) };
    if r != nvrtcResult::NVRTC_SUCCESS {
        return Err(nvrtc_err("nvrtcGetProgramLogSize", r));
    }
    let mut log = vec![0u8; size.max(1)];
    // SAFETY: the buffer holds at least the `size` bytes NVRTC reported.
    let r = unsafe { nvrtc::nvrtcGetProgramLog(prog.0, log.as_mut_ptr() as *mut c_char) };
    if r != nvrtcResult::NVRTC_SUCCESS {
        return Err(nvrtc_err("nvrtcGetProgramLog", r));
    }
    while log.last() == Some(&0) {
        log.pop();
    }
    Ok(String::from_utf8_lossy(&log).into_owned())
}

/// The compiled image of `source` for `arch`, from the disk cache when present, else compiled
/// and stored there (best effort: a cache that cannot be written is skipped).
pub fn compiled_image(source: &KernelSource, arch: &str) -> Result<Vec<u8>> {
    check_arch(arch)?;
    let version = nvrtc_version()?;
    let key = cache_key(source, &compile_options(arch), version);
    let ext = if arch.starts_with("sm_") {
        "cubin"
    } else {
        "ptx"
    };
    let path = cache_dir().map(|d| d.join(format!("{}-{arch}-{key}.{ext}", source.name)));
    if let Some(p) = &path {
        if let Ok(bytes) = std::fs::read(p) {
            if !bytes.is_empty() {
                return Ok(bytes);
            }
        }
    }
    let image = compile(source, arch)?;
    if let Some(p) = &path {
        let _ = store(p, &image);
    }
    Ok(image)
}

fn store(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    // Write to a unique temporary name, then rename: readers never see a partial file.
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// Compiles every kernel source for `arch` (e.g. `sm_90`) with NVRTC, bypassing the cache; needs
/// no GPU. Returns each source's name and image size in bytes.
pub fn compile_all(arch: &str) -> Result<Vec<(String, usize)>> {
    all_kernel_sources()
        .iter()
        .map(|s| compile(s, arch).map(|img| (s.name.to_string(), img.len())))
        .collect()
}

/// The kernel entry points of a CUBIN `image` (an ELF file, as [`compile`] returns for an `sm_`
/// architecture): the names of its `.text.<kernel>` sections, sorted. Counts what a module
/// compiles (`examples/kernel_census.rs`).
///
/// Errors: [`CudaError::InvalidArgument`] when `image` is not a 64-bit little-endian ELF file or
/// its section table lies outside it.
pub fn cubin_kernel_names(image: &[u8]) -> Result<Vec<String>> {
    let bad = |what: &str| CudaError::InvalidArgument(format!("not a CUBIN: {what}"));
    if image.len() < 64 || &image[..4] != b"\x7fELF" || image[4] != 2 || image[5] != 1 {
        return Err(bad("no 64-bit little-endian ELF header"));
    }
    let u16_at = |o: usize| -> Result<usize> {
        let b = image.get(o..o + 2).ok_or_else(|| bad("truncated"))?;
        Ok(u16::from_le_bytes([b[0], b[1]]) as usize)
    };
    let u32_at = |o: usize| -> Result<usize> {
        let b = image.get(o..o + 4).ok_or_else(|| bad("truncated"))?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let u64_at = |o: usize| -> Result<usize> {
        let b = image.get(o..o + 8).ok_or_else(|| bad("truncated"))?;
        let mut w = [0u8; 8];
        w.copy_from_slice(b);
        usize::try_from(u64::from_le_bytes(w)).map_err(|_| bad("offset overflows"))
    };
    let (shoff, shentsize, shnum, shstrndx) =
        (u64_at(0x28)?, u16_at(0x3A)?, u16_at(0x3C)?, u16_at(0x3E)?);
    let header = |i: usize| shoff.checked_add(i.checked_mul(shentsize)?);
    let strtab = header(shstrndx).ok_or_else(|| bad("section table overflows"))?;
    let (str_off, str_size) = (u64_at(strtab + 0x18)?, u64_at(strtab + 0x20)?);
    let names = str_off
        .checked_add(str_size)
        .and_then(|end| image.get(str_off..end))
        .ok_or_else(|| bad("section names outside the image"))?;
    let mut out = Vec::new();
    for i in 0..shnum {
        let h = header(i).ok_or_else(|| bad("section table overflows"))?;
        let at = u32_at(h)?;
        let rest = names
            .get(at..)
            .ok_or_else(|| bad("section name outside its table"))?;
        let name = &rest[..rest.iter().position(|&c| c == 0).unwrap_or(rest.len())];
        if let Some(k) = name.strip_prefix(b".text.") {
            out.push(String::from_utf8_lossy(k).into_owned());
        }
    }
    out.sort_unstable();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_names_are_checked() {
        assert!(check_arch("sm_90").is_ok());
        assert!(check_arch("sm_90a").is_ok());
        assert!(check_arch("compute_90").is_ok());
        assert!(check_arch("sm_").is_err());
        assert!(check_arch("90").is_err());
        assert!(check_arch("sm_9x").is_err());
        assert!(matches!(
            compile(&ELEMENTWISE, "gfx90a"),
            Err(CudaError::InvalidArgument(_))
        ));
    }

    #[test]
    fn a_non_elf_image_is_not_a_cubin() {
        assert!(
            cubin_kernel_names(b"not an ELF file at all, long enough to have a header......")
                .is_err()
        );
        assert!(cubin_kernel_names(&[]).is_err());
    }

    #[test]
    fn sources_are_unique_and_headers_present() {
        let mut names: Vec<_> = all_kernel_sources().iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all_kernel_sources().len());
        for s in all_kernel_sources() {
            for line in s.source.lines() {
                if let Some(inc) = line.trim().strip_prefix("#include \"") {
                    let inc = inc.trim_end_matches('"');
                    assert!(
                        s.headers.iter().any(|h| h.name == inc),
                        "{} includes {inc}, which is not in its header list",
                        s.name
                    );
                }
            }
        }
    }
}
