//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rhea_cuda::{registry, GpuDevice};
use rhea_math::basis::Basis;
use rhea_math::Modulus;

/// Device 0, for a test marked `#[ignore = "needs a CUDA GPU ..."]`: such a test runs only when
/// asked for (`--include-ignored`, as `scripts/gpu-run.sh` does), so a missing GPU is a failure
/// here, never a silent pass.
#[track_caller]
pub fn require_gpu(test: &str) -> Arc<GpuDevice> {
    match GpuDevice::new(0) {
        Ok(dev) => dev,
        Err(e) => panic!(
            "{test}: needs a CUDA GPU, and none is usable ({e}); GPU tests are #[ignore]d: run \
             them on a GPU machine (scripts/gpu-run.sh), or leave out --include-ignored"
        ),
    }
}

/// Checks that NVRTC can be loaded, for a test marked `#[ignore = "needs NVRTC ..."]` (run by
/// `scripts/check-kernels.sh` and `scripts/gpu-run.sh` with `--include-ignored`): a missing
/// NVRTC is a failure here, never a silent pass.
#[track_caller]
pub fn require_nvrtc(test: &str) {
    if let Err(e) = registry::nvrtc_version() {
        panic!(
            "{test}: needs NVRTC (libnvrtc.so of CUDA 13), and it cannot be loaded ({e}); \
             scripts/check-kernels.sh installs it in a venv"
        )
    }
}

/// Whether the entry point `name` is in the CUBIN string table (NUL-terminated).
pub fn cubin_has(cubin: &[u8], name: &str) -> bool {
    let sym = format!("{name}\0");
    cubin.windows(sym.len()).any(|w| w == sym.as_bytes())
}

/// Time of one call of `f` in microseconds: after at least 200 ms of warm-up calls (module
/// load, GPU clocks up to boost), the median over 5 repetitions of `iters` calls timed by CUDA
/// events. Inputs are not rotated, so sizes that fit in L2 (50-60 MB) measure L2 traffic.
pub fn time_us(dev: &GpuDevice, iters: usize, mut f: impl FnMut()) -> f64 {
    use cudarc::driver::sys::CUevent_flags;
    let warm = std::time::Instant::now();
    while warm.elapsed() < std::time::Duration::from_millis(200) {
        for _ in 0..20 {
            f();
        }
        dev.synchronize().unwrap();
    }
    let ev = || {
        dev.stream()
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .unwrap()
    };
    let mut runs: Vec<f64> = (0..5)
        .map(|_| {
            let start = ev();
            for _ in 0..iters {
                f();
            }
            let end = ev();
            start.elapsed_ms(&end).unwrap() as f64 * 1000.0 / iters as f64
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    runs[2]
}

/// Panics at the first word where the GPU result `got` differs from the host twin `want` (or
/// when the lengths differ).
#[track_caller]
pub fn assert_words(got: &[u64], want: &[u64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some((i, (g, w))) = got.iter().zip(want).enumerate().find(|(_, (g, w))| g != w) {
        panic!("{what}: first mismatch at word {i}: GPU {g}, host {w}");
    }
}

/// The host twin applied polynomial by polynomial to a `[polys][in_limbs][n]` buffer.
pub fn per_poly(
    input: &[u64],
    in_limbs: usize,
    out_limbs: usize,
    n: usize,
    mut f: impl FnMut(&[u64], &mut [u64]),
) -> Vec<u64> {
    let polys = input.len() / (in_limbs * n);
    let mut out = vec![0u64; polys * out_limbs * n];
    for p in 0..polys {
        f(
            &input[p * in_limbs * n..(p + 1) * in_limbs * n],
            &mut out[p * out_limbs * n..(p + 1) * out_limbs * n],
        );
    }
    out
}

/// The `rhea_math` basis of `m`.
pub fn basis(m: &[Modulus]) -> Basis {
    Basis::new(&m.iter().map(|q| q.value()).collect::<Vec<_>>()).unwrap()
}

/// A deterministic RNG per test (seeded from the name, so failures reproduce).
pub fn rng(test: &str) -> ChaCha20Rng {
    let mut seed = [0u8; 32];
    for (i, b) in test.bytes().enumerate() {
        seed[i % 32] ^= b;
    }
    ChaCha20Rng::from_seed(seed)
}

/// `count` words uniformly random and non-zero modulo `q`.
pub fn random_nonzero(rng: &mut impl Rng, q: u64, count: usize) -> Vec<u64> {
    (0..count).map(|_| rng.random_range(1..q)).collect()
}

/// Random non-zero `[poly][limb][N]` data for the given moduli.
pub fn random_rns(rng: &mut impl Rng, moduli: &[Modulus], degree: usize, polys: usize) -> Vec<u64> {
    let mut v = Vec::with_capacity(polys * moduli.len() * degree);
    for _ in 0..polys {
        for m in moduli {
            v.extend(random_nonzero(rng, m.value(), degree));
        }
    }
    v
}

/// `count` distinct NTT-friendly primes of `bits` bits for degree `degree` (q ≡ 1 mod 2N),
/// searched downward from 2^bits.
pub fn primes(bits: u32, count: usize, degree: usize) -> Vec<Modulus> {
    let step = 2 * degree as u64;
    let mut q = ((1u64 << bits) / step) * step + 1;
    let mut out = Vec::new();
    while out.len() < count {
        q -= step;
        if is_prime(q) {
            out.push(Modulus::new(q).expect("prime below 2^61"));
        }
    }
    out
}

/// Two disjoint lists of `a` primes of `bits_a` bits and `b` primes of `bits_b` bits, NTT-friendly
/// for degree `degree` (see [`primes`]).
pub fn disjoint_primes(
    bits_a: u32,
    a: usize,
    bits_b: u32,
    b: usize,
    degree: usize,
) -> (Vec<Modulus>, Vec<Modulus>) {
    if bits_a == bits_b {
        let all = primes(bits_a, a + b, degree);
        (all[..a].to_vec(), all[a..].to_vec())
    } else {
        (primes(bits_a, a, degree), primes(bits_b, b, degree))
    }
}

fn mul_mod(a: u64, b: u64, m: u64) -> u64 {
    ((a as u128 * b as u128) % m as u128) as u64
}

fn pow_mod(mut b: u64, mut e: u64, m: u64) -> u64 {
    let mut r = 1u64;
    b %= m;
    while e > 0 {
        if e & 1 == 1 {
            r = mul_mod(r, b, m);
        }
        b = mul_mod(b, b, m);
        e >>= 1;
    }
    r
}

/// Deterministic Miller–Rabin for 64-bit integers.
pub fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    for p in [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37] {
        if n % p == 0 {
            return n == p;
        }
    }
    let (mut d, mut s) = (n - 1, 0);
    while d % 2 == 0 {
        d /= 2;
        s += 1;
    }
    'witness: for a in [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37] {
        let mut x = pow_mod(a, d, n);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mul_mod(x, x, n);
            if x == n - 1 {
                continue 'witness;
            }
        }
        return false;
    }
    true
}
