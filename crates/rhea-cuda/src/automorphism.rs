//! Galois automorphisms `X ↦ X^g` (`g` odd, taken mod `2N`) on `[poly][limb][N]` device buffers
//! (`kernels/automorphism.cu`), by index arithmetic: no permutation tables.
//!
//! - [`apply_ntt`]: NTT domain, in the bit-reversed evaluation order of [`rhea_math::ntt`] (entry
//!   `i` holds `a(ψ^(2·brv(i)+1))`). Since `(a∘σ_g)(ψ^e) = a(ψ^(e·g))`, entry `i` of the result is
//!   entry `j = brv(((2·brv(i)+1)·g mod 2N − 1)/2)` of the input ([`host::ntt_source_index`]).
//!   A permutation of every limb (no arithmetic), so the moduli are not needed.
//! - [`apply_coeff`]: coefficient domain, `a(X^g) = Σ_i a_i X^(i·g mod 2N)` with `X^N = −1`
//!   (a sign flip for exponents `≥ N`).
//!
//! Twin: for every limb, `forward_ntt(apply_coeff(a)) = apply_ntt(forward_ntt(a))` with
//! [`rhea_math::ntt::NttTable::forward`]; [`host`] holds both maps on the CPU.
//!
//! One launch covers every polynomial and limb of the buffer: each thread computes its source
//! index once and moves that word for 4 rows. Out of place only (`out` and `input` are distinct
//! buffers). Launched with programmatic dependent launch (`launch.rs`): the index
//! arithmetic overlaps the previous kernel's tail.

use std::sync::Arc;

use cudarc::driver::{DeviceRepr, LaunchConfig};

use crate::buffer::DeviceBuffer;
use crate::device::GpuDevice;
use crate::elementwise::{DeviceModuli, RnsLayout};
use crate::error::{CudaError, Result};
use crate::launch::{launch_dependent, param};
use crate::registry::{KernelSource, COMMON_CUH};

/// `kernels/automorphism.cu`: NTT- and coefficient-domain automorphisms.
pub const AUTOMORPHISM: KernelSource = KernelSource {
    name: "automorphism",
    source: include_str!("../kernels/automorphism.cu"),
    headers: &[COMMON_CUH],
};

/// Rows (limbs of polynomials) moved by each thread (`AUTO_ROWS_PER_BLOCK`).
const ROWS_PER_BLOCK: usize = 4;

/// Threads per block.
const THREADS: u32 = 256;

/// Launch arguments (`struct AutoArgs` in `automorphism.cu`).
#[repr(C)]
#[derive(Clone, Copy)]
struct AutoArgs {
    n: u64,
    g: u64,
    input: u64,
    out: u64,
    moduli: u64,
    log_n: u32,
    rows: u32,
    limbs: u32,
    mod_offset: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for AutoArgs {}

// The layout of `struct AutoArgs` in `kernels/automorphism.cu`, which asserts the same numbers
// (`static_assert`): a field added, moved or resized on one side only fails the build.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<AutoArgs>() == 56);
    assert!(align_of::<AutoArgs>() == 8);
    assert!(offset_of!(AutoArgs, n) == 0);
    assert!(offset_of!(AutoArgs, g) == 8);
    assert!(offset_of!(AutoArgs, input) == 16);
    assert!(offset_of!(AutoArgs, out) == 24);
    assert!(offset_of!(AutoArgs, moduli) == 32);
    assert!(offset_of!(AutoArgs, log_n) == 40);
    assert!(offset_of!(AutoArgs, rows) == 44);
    assert!(offset_of!(AutoArgs, limbs) == 48);
    assert!(offset_of!(AutoArgs, mod_offset) == 52);
};

/// `g mod 2N`, checked odd, for a power-of-two `N ≥ 1`.
fn galois_mod(galois: u64, n: usize) -> Result<u64> {
    if n == 0 || !n.is_power_of_two() {
        return Err(CudaError::InvalidArgument(format!(
            "automorphisms need a power-of-two degree, got {n}"
        )));
    }
    if galois % 2 == 0 {
        return Err(CudaError::InvalidArgument(format!(
            "the Galois element must be odd, got {galois}"
        )));
    }
    Ok(galois & (2 * n as u64 - 1))
}

/// The Galois element `5^steps mod 2N` of a slot rotation by `steps` (negative: to the right),
/// and `2N − 1` for the conjugation is [`conjugation_galois`].
pub fn rotation_galois(steps: i64, n: usize) -> Result<u64> {
    galois_mod(1, n)?;
    let two_n = 2 * n as u64;
    // 5 has order N/2 modulo 2N (N ≥ 4); reduce the exponent accordingly.
    let order = (n as i64 / 2).max(1);
    let e = steps.rem_euclid(order) as u64;
    let (mut r, mut b, mut e) = (1u64, 5 % two_n, e);
    while e > 0 {
        if e & 1 == 1 {
            r = r * b % two_n;
        }
        b = b * b % two_n;
        e >>= 1;
    }
    Ok(r)
}

/// The Galois element `2N − 1` of complex conjugation (`X ↦ X^{-1}`).
pub fn conjugation_galois(n: usize) -> Result<u64> {
    galois_mod(1, n)?;
    Ok(2 * n as u64 - 1)
}

/// The inverse of an odd `g` modulo a power of two `m` (Newton iteration).
fn inverse_mod_pow2(g: u64, m: u64) -> u64 {
    let mut x = g; // correct to 3 bits for odd g
    for _ in 0..6 {
        x = x.wrapping_mul(2u64.wrapping_sub(g.wrapping_mul(x)));
    }
    x & (m - 1)
}

fn check_shape(
    what: &str,
    out: &DeviceBuffer,
    input: &DeviceBuffer,
    layout: &RnsLayout,
) -> Result<Arc<GpuDevice>> {
    input.check_same_device(out)?;
    if layout.degree == 0 || layout.limbs == 0 || layout.polys == 0 {
        return Err(CudaError::Shape(format!("empty layout {layout:?}")));
    }
    for (name, b) in [("input", input), ("output", out)] {
        if b.len() != layout.words() {
            return Err(CudaError::Shape(format!(
                "{what} {name} has {} words; the layout {layout:?} needs {}",
                b.len(),
                layout.words()
            )));
        }
    }
    let rows = layout.polys * layout.limbs;
    if rows.div_ceil(ROWS_PER_BLOCK) > 65535 || rows > u32::MAX as usize {
        return Err(CudaError::Shape(format!(
            "{} polynomials × {} limbs exceed one launch",
            layout.polys, layout.limbs
        )));
    }
    Ok(input.device().clone())
}

fn launch(kernel: &str, dev: &Arc<GpuDevice>, args: AutoArgs, layout: &RnsLayout) -> Result<()> {
    let rows = layout.polys * layout.limbs;
    let cfg = LaunchConfig {
        grid_dim: (
            layout.degree.div_ceil(THREADS as usize) as u32,
            rows.div_ceil(ROWS_PER_BLOCK) as u32,
            1,
        ),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let f = dev.function(&AUTOMORPHISM, kernel)?;
    let mut params = [param(&args)];
    // SAFETY: the one parameter is `struct AutoArgs` by value (#[repr(C)] like its CUDA twin),
    // pointing to a local that lives across the call; both buffers hold `rows · N` words
    // (checked by the caller), the moduli table covers `mod_offset + limbs` entries when it is
    // read; all work is ordered on the device's one stream, and the kernels touch no memory
    // before pdl_wait().
    unsafe { launch_dependent(dev, &f, cfg, &mut params) }
}

/// `out = σ_g(input)` in the NTT domain (bit-reversed evaluation order), every polynomial and
/// limb of `layout` in one launch. `layout.first_modulus` is ignored (a pure permutation).
///
/// Errors: [`CudaError::InvalidArgument`] for an even `g` or a degree that is not a power of
/// two; [`CudaError::Shape`] for buffers that do not match `layout`.
pub fn apply_ntt(
    out: &mut DeviceBuffer,
    input: &DeviceBuffer,
    galois: u64,
    layout: &RnsLayout,
) -> Result<()> {
    let g = galois_mod(galois, layout.degree)?;
    let dev = check_shape("NTT automorphism", out, input, layout)?;
    let args = AutoArgs {
        n: layout.degree as u64,
        g,
        input: input.device_ptr(),
        out: out.device_ptr(),
        moduli: 0,
        log_n: layout.degree.trailing_zeros(),
        rows: (layout.polys * layout.limbs) as u32,
        limbs: layout.limbs as u32,
        mod_offset: 0,
    };
    launch("automorphism_ntt", &dev, args, layout)
}

/// `out = input(X^g)` in the coefficient domain (canonical inputs), every polynomial and limb of
/// `layout` in one launch; limb `j` is negated modulo `moduli[first_modulus + j]`.
///
/// Errors as [`apply_ntt`], and [`CudaError::Shape`] when the moduli table is too short.
pub fn apply_coeff(
    out: &mut DeviceBuffer,
    input: &DeviceBuffer,
    galois: u64,
    layout: &RnsLayout,
    moduli: &DeviceModuli,
) -> Result<()> {
    let g = galois_mod(galois, layout.degree)?;
    let dev = check_shape("coefficient automorphism", out, input, layout)?;
    input.check_same_device(moduli.buffer())?;
    if layout.first_modulus + layout.limbs > moduli.len() {
        return Err(CudaError::Shape(format!(
            "limbs {}..{} need moduli the table of {} does not have",
            layout.first_modulus,
            layout.first_modulus + layout.limbs,
            moduli.len()
        )));
    }
    let two_n = 2 * layout.degree as u64;
    let args = AutoArgs {
        n: layout.degree as u64,
        g: inverse_mod_pow2(g, two_n),
        input: input.device_ptr(),
        out: out.device_ptr(),
        moduli: moduli.device_ptr(),
        log_n: layout.degree.trailing_zeros(),
        rows: (layout.polys * layout.limbs) as u32,
        limbs: layout.limbs as u32,
        mod_offset: layout.first_modulus as u32,
    };
    launch("automorphism_coeff", &dev, args, layout)
}

/// The same maps on the CPU, on one `N`-word limb (for tests and host fallbacks).
pub mod host {
    use rhea_math::ntt::bit_reverse;
    use rhea_math::Modulus;

    /// The input index that entry `i` of the NTT-domain result takes:
    /// `brv(((2·brv(i)+1)·g mod 2N − 1)/2)` on `log_n` bits (`g` odd).
    pub fn ntt_source_index(i: usize, galois: u64, log_n: u32) -> usize {
        let two_n = 2u64 << log_n;
        let e = ((2 * bit_reverse(i, log_n) as u64 + 1) * (galois % two_n)) % two_n;
        bit_reverse(((e - 1) / 2) as usize, log_n)
    }

    /// `σ_g` of one NTT-domain limb (`a.len()` a power of two, `g` odd).
    pub fn apply_ntt(a: &[u64], galois: u64) -> Vec<u64> {
        let log_n = a.len().trailing_zeros();
        (0..a.len())
            .map(|i| a[ntt_source_index(i, galois, log_n)])
            .collect()
    }

    /// `a(X^g)` of one coefficient-domain limb modulo `q` (scatter form: coefficient `i` goes to
    /// `i·g mod 2N`, negated when that is `≥ N`).
    pub fn apply_coeff(a: &[u64], galois: u64, q: &Modulus) -> Vec<u64> {
        let n = a.len() as u64;
        let mut out = vec![0u64; a.len()];
        for (i, &x) in a.iter().enumerate() {
            let e = (i as u64 * (galois % (2 * n))) % (2 * n);
            if e < n {
                out[e as usize] = x;
            } else {
                out[(e - n) as usize] = q.neg(x);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_mod_pow2_inverts() {
        for m in [2u64, 8, 1 << 13, 1 << 18] {
            for g in (1..200u64).step_by(2) {
                assert_eq!((g * inverse_mod_pow2(g, m)) % m, 1 % m, "g = {g}, m = {m}");
            }
        }
    }

    #[test]
    fn galois_elements() {
        assert_eq!(rotation_galois(0, 16).unwrap(), 1);
        assert_eq!(rotation_galois(1, 16).unwrap(), 5);
        assert_eq!(rotation_galois(2, 16).unwrap(), 25);
        // 5^-1 · 5 = 1 mod 32
        assert_eq!((rotation_galois(-1, 16).unwrap() * 5) % 32, 1);
        assert_eq!(conjugation_galois(16).unwrap(), 31);
        assert!(galois_mod(4, 16).is_err());
        assert!(galois_mod(3, 12).is_err());
    }

    #[test]
    fn host_maps_agree_through_the_ntt() {
        use rhea_math::ntt::NttTable;
        use rhea_math::prime::generate_ntt_primes;
        use rhea_math::Modulus;
        let n = 64;
        let q = Modulus::new(generate_ntt_primes(30, n, 1, &[]).unwrap()[0]).unwrap();
        let table = NttTable::new(q, n).unwrap();
        let a: Vec<u64> = (0..n as u64).map(|i| (i * 7919 + 3) % q.value()).collect();
        for g in [3u64, 5, 25, 127] {
            let mut lhs = host::apply_coeff(&a, g, &q);
            table.forward(&mut lhs).unwrap();
            let mut fa = a.clone();
            table.forward(&mut fa).unwrap();
            assert_eq!(lhs, host::apply_ntt(&fa, g), "g = {g}");
        }
    }
}
