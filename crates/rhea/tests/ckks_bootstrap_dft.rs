//! The homomorphic DFTs of bootstrapping ([`HomomorphicDft`]): the factors against the special
//! FFT in `f64`, then encrypted at N = 2^13 (full 4096 and sparse 256 slots): SlotToCoeff then
//! CoeffToSlot is the identity, SlotToCoeff puts the slots into the polynomial's coefficients
//! (read from the decrypted plaintext), CoeffToSlot takes a plaintext's coefficients into the
//! slots, each at exactly `levels` levels and the input's scale; and (ignored without one) the
//! GPU's words equal to the CPU's.

mod common;

use common::{precision_bits_complex, random_complex};
use num_complex::Complex64;
use rhea::ckks::bootstrap::{bit_reverse_index, DftDirection, HomomorphicDft};
use rhea::ckks::{Ciphertext, CkksContext, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator};
use rhea::params::CkksParametersLiteral;
use rhea::rlwe::{PublicKey, SecretKey};
use rhea::unstable::math::fft::SpecialFft;
use rhea::unstable::HasRing;
use rhea::Device;

/// The precision the encrypted transforms must reach at Δ = 2^40 (bits, absolute, for values
/// of magnitude ≤ √2).
const MIN_BITS: f64 = 18.0;

/// `U·v` by the special FFT.
fn u_times(v: &[Complex64]) -> Vec<Complex64> {
    let mut out = v.to_vec();
    SpecialFft::new(v.len()).unwrap().forward(&mut out).unwrap();
    out
}

/// `U^{-1}·v` by the special FFT.
fn u_inv_times(v: &[Complex64]) -> Vec<Complex64> {
    let mut out = v.to_vec();
    SpecialFft::new(v.len()).unwrap().inverse(&mut out).unwrap();
    out
}

/// `v` permuted into bit-reversed order: `out[bitrev(k)] = v[k]`.
fn bit_reversed(v: &[Complex64]) -> Vec<Complex64> {
    let n = v.len();
    let mut out = vec![Complex64::new(0.0, 0.0); n];
    for (k, &x) in v.iter().enumerate() {
        out[bit_reverse_index(k, n)] = x;
    }
    out
}

/// What `dft` must compute in `f64`: `factor·P·U^{-1}·v` (CoeffToSlot) or `factor·U·P·v`
/// (SlotToCoeff).
fn reference(dft: &HomomorphicDft, v: &[Complex64]) -> Vec<Complex64> {
    let out = match dft.direction() {
        DftDirection::CoeffToSlot => bit_reversed(&u_inv_times(v)),
        DftDirection::SlotToCoeff => u_times(&bit_reversed(v)),
    };
    out.iter().map(|z| z * dft.factor()).collect()
}

/// `max |got − want| / max |want|`.
fn relative_error(got: &[Complex64], want: &[Complex64]) -> f64 {
    let err = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g - w).norm())
        .fold(0.0, f64::max);
    err / want.iter().map(|w| w.norm()).fold(0.0, f64::max)
}

/// The special FFT is the matrix of the conventions: `U[j][k] = ξ_j^k`,
/// `ξ_j = ζ_{4n}^{5^j mod 4n}`.
#[test]
fn special_fft_is_u() {
    for n in [4usize, 16, 64] {
        let v = random_complex(n, 1);
        let mut want = vec![Complex64::new(0.0, 0.0); n];
        let mut e = 1usize; // 5^j mod 4n
        for w in want.iter_mut() {
            for (k, &x) in v.iter().enumerate() {
                let angle = std::f64::consts::TAU * ((e * k) % (4 * n)) as f64 / (4 * n) as f64;
                *w += Complex64::from_polar(1.0, angle) * x;
            }
            e = (e * 5) % (4 * n);
        }
        assert!(relative_error(&u_times(&v), &want) < 1e-13, "n = {n}");
        assert!(relative_error(&u_inv_times(&want), &v) < 1e-13, "n = {n}");
    }
}

/// The factors applied in order are `factor·U·P` and `factor·P·U^{-1}` (relative error
/// ≤ 1e-9) for every level count at small `n` and a few at 4096 slots, real and complex
/// factors; each transform has at most `2^{s+1} − 1` diagonals for `s` merged stages.
#[test]
fn factors_multiply_to_the_dft() {
    let factors = [
        Complex64::new(1.0, 0.0),
        Complex64::new(-0.3, 1.7),
        Complex64::new(1.0 / std::f64::consts::TAU, 0.0),
    ];
    let cases: Vec<(usize, Vec<usize>)> = vec![
        (2, vec![1]),
        (4, (1..=2).collect()),
        (16, (1..=4).collect()),
        (256, (1..=8).collect()),
        (4096, vec![1, 2, 3, 4, 12]),
    ];
    let mut worst: f64 = 0.0;
    for (n, levels) in cases {
        for &levels in &levels {
            for (f, &factor) in factors.iter().enumerate() {
                if n == 4096 && levels == 1 && f > 0 {
                    continue; // the dense case once is enough
                }
                for direction in [DftDirection::CoeffToSlot, DftDirection::SlotToCoeff] {
                    let dft = HomomorphicDft::new(n, direction, levels, factor).unwrap();
                    assert_eq!(dft.depth(), levels);
                    assert_eq!(dft.transforms().len(), levels);
                    assert_eq!(
                        dft.stages_per_level().iter().sum::<usize>(),
                        n.trailing_zeros() as usize
                    );
                    for (lt, &s) in dft.transforms().iter().zip(dft.stages_per_level()) {
                        assert!(lt.diagonal_count() < 1 << (s + 1), "{s} stages");
                        assert_eq!(lt.slots(), n);
                    }
                    let v = random_complex(n, (n + levels) as u64);
                    let err = relative_error(&dft.apply(&v).unwrap(), &reference(&dft, &v));
                    assert!(
                        err <= 1e-9,
                        "n = {n}, levels = {levels}, {direction:?}, factor {factor}: {err:e}"
                    );
                    worst = worst.max(err);
                }
            }
        }
    }
    eprintln!("worst relative error of the factors: {worst:e}");
}

/// The two directions are inverse of each other whatever the level counts (factors `a` and
/// `1/a`), and the rotations are the union of the transforms'.
#[test]
fn directions_are_inverse_and_rotations_are_the_union() {
    let n = 1024;
    let a = Complex64::new(0.5, -2.0);
    let stc = HomomorphicDft::slot_to_coeff(n, 3, a).unwrap();
    let cts = HomomorphicDft::coeff_to_slot(n, 4, a.inv()).unwrap();
    let v = random_complex(n, 9);
    let back = cts.apply(&stc.apply(&v).unwrap()).unwrap();
    assert!(relative_error(&back, &v) < 1e-12);
    let mut union: Vec<i64> = cts
        .transforms()
        .iter()
        .flat_map(|lt| lt.rotations())
        .collect();
    union.sort_unstable();
    union.dedup();
    assert_eq!(cts.rotations(), union);
    assert!(!union.is_empty());
    assert_eq!(
        cts.keyswitches(),
        cts.transforms()
            .iter()
            .map(|lt| lt.keyswitches())
            .sum::<usize>()
    );
}

#[test]
fn out_of_range_arguments_are_typed_errors() {
    for (n, levels, factor) in [
        (1, 1, 1.0),
        (3, 1, 1.0),
        (1 << 17, 1, 1.0),
        (16, 0, 1.0),
        (16, 5, 1.0),
        (16, 2, 0.0),
        (16, 2, f64::NAN),
    ] {
        let r = HomomorphicDft::coeff_to_slot(n, levels, factor);
        assert!(
            matches!(r, Err(rhea::Error::InvalidInput(_))),
            "n = {n}, levels = {levels}, factor = {factor}: {r:?}"
        );
    }
}

struct Fx {
    ctx: CkksContext,
    sk: SecretKey,
    pk: PublicKey,
    eval: Evaluator,
}

/// Keys from a fixed seed for the rotations of `dfts`.
fn fixture(device: Device, dfts: &[&HomomorphicDft]) -> Fx {
    let params = CkksParametersLiteral::test_n13_levels10_insecure()
        .build()
        .unwrap();
    let ctx = CkksContext::new(&params, device).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [7; 32]);
    let sk = keygen.secret_key().unwrap();
    let pk = keygen.public_key(&sk).unwrap();
    let mut steps: Vec<i64> = dfts.iter().flat_map(|d| d.rotations()).collect();
    steps.sort_unstable();
    steps.dedup();
    let gk = keygen.galois_keys(&sk, &steps, false).unwrap();
    let eval = Evaluator::new(&ctx).with_galois_keys(gk).unwrap();
    Fx { ctx, sk, pk, eval }
}

impl Fx {
    fn encrypt(&self, slots: usize, v: &[Complex64]) -> Ciphertext {
        let pt = Encoder::with_slots(&self.ctx, slots)
            .unwrap()
            .encode_complex(v)
            .unwrap();
        Encryptor::new(&self.ctx, &self.pk)
            .unwrap()
            .with_seed([5; 32])
            .encrypt(&pt)
            .unwrap()
    }

    fn decrypt(&self, ct: &Ciphertext) -> Vec<Complex64> {
        let pt = Decryptor::new(&self.ctx, &self.sk)
            .unwrap()
            .decrypt(ct)
            .unwrap();
        Encoder::with_slots(&self.ctx, ct.slots())
            .unwrap()
            .decode_complex(&pt)
            .unwrap()
    }

    /// The decrypted plaintext polynomial's coefficients (centred), divided by the scale.
    fn coefficients(&self, ct: &Ciphertext) -> Vec<f64> {
        let pt = Decryptor::new(&self.ctx, &self.sk)
            .unwrap()
            .decrypt(ct)
            .unwrap();
        let ring = self.ctx.ring();
        let mut p = pt.poly().clone();
        ring.ntt_inverse(&mut p).unwrap();
        let scale = pt.scale();
        ring.download_centered_f64(&p)
            .unwrap()
            .into_iter()
            .map(|m| m / scale)
            .collect()
    }

    /// `c_k = (m_{k·g} + i·m_{(k+n)·g}) / Δ` of a ciphertext with `n` slots, and the largest
    /// `|m_j| / Δ` off the subring (`j` not a multiple of `g`).
    fn packed_coefficients(&self, ct: &Ciphertext) -> (Vec<Complex64>, f64) {
        let m = self.coefficients(ct);
        let n = ct.slots();
        let g = m.len() / (2 * n);
        let c = (0..n)
            .map(|k| Complex64::new(m[k * g], m[(k + n) * g]))
            .collect();
        let off = m
            .iter()
            .enumerate()
            .filter(|(j, _)| j % g != 0)
            .map(|(_, x)| x.abs())
            .fold(0.0, f64::max);
        (c, off)
    }

    /// Evaluates `dft` checking the levels, the exact scale and the counted key switchings.
    fn evaluate(&self, dft: &HomomorphicDft, ct: &Ciphertext) -> Ciphertext {
        let before = self.ctx.keyswitches();
        let out = dft.evaluate(&self.eval, ct).unwrap();
        assert_eq!(
            self.ctx.keyswitches() - before,
            dft.keyswitches() as u64,
            "counted key switchings"
        );
        assert_eq!(out.level(), ct.level() - dft.depth(), "depth");
        assert_eq!(out.scale(), ct.scale(), "the scale kept exactly");
        assert_eq!(out.slots(), ct.slots());
        out
    }
}

/// SlotToCoeff then CoeffToSlot gives the encrypted vector back, at full (4096) and sparse
/// (256) slots.
#[test]
fn slot_to_coeff_then_coeff_to_slot_is_the_identity() {
    for (n, stc_levels, cts_levels) in [(4096, 3, 3), (256, 2, 3)] {
        let stc = HomomorphicDft::slot_to_coeff(n, stc_levels, 1.0).unwrap();
        let cts = HomomorphicDft::coeff_to_slot(n, cts_levels, 1.0).unwrap();
        let fx = fixture(Device::Cpu, &[&stc, &cts]);
        let v = random_complex(n, 31);
        let ct = fx.encrypt(n, &v);
        let out = fx.evaluate(&cts, &fx.evaluate(&stc, &ct));
        assert_eq!(out.level(), ct.level() - stc_levels - cts_levels);
        let bits = precision_bits_complex(&fx.decrypt(&out), &v);
        eprintln!(
            "n = {n}: StC ({stc_levels} levels, diagonals {:?}) then CtS ({cts_levels} \
             levels, diagonals {:?}): {bits:.1} bits, {} rotation keys",
            stc.diagonal_counts(),
            cts.diagonal_counts(),
            {
                let mut r = stc.rotations();
                r.extend(cts.rotations());
                r.sort_unstable();
                r.dedup();
                r.len()
            }
        );
        assert!(bits >= MIN_BITS, "n = {n}: {bits:.1} bits");
    }
}

/// SlotToCoeff of an encryption of `w` decrypts to the polynomial with
/// `m_{k·g} / Δ = Re w[bitrev(k)]`, `m_{(k+n)·g} / Δ = Im w[bitrev(k)]` and ≈ 0 elsewhere:
/// the convention the bootstrapping pipeline relies on.
#[test]
fn slot_to_coeff_writes_the_coefficients() {
    for (n, levels) in [(4096, 3), (256, 2)] {
        let stc = HomomorphicDft::slot_to_coeff(n, levels, 1.0).unwrap();
        let fx = fixture(Device::Cpu, &[&stc]);
        let w = random_complex(n, 41);
        let out = fx.evaluate(&stc, &fx.encrypt(n, &w));
        let (c, off) = fx.packed_coefficients(&out);
        let want: Vec<Complex64> = (0..n).map(|k| w[stc.index(k)]).collect();
        let bits = precision_bits_complex(&c, &want);
        let off_bits = -off.log2();
        eprintln!(
            "n = {n}: StC coefficients {bits:.1} bits, off-subring ≤ 2^-{off_bits:.1} \
             (diagonals {:?}, {} rotation keys)",
            stc.diagonal_counts(),
            stc.rotations().len()
        );
        assert!(bits >= MIN_BITS, "n = {n}: {bits:.1} bits");
        assert!(
            off_bits >= MIN_BITS,
            "n = {n}: off-subring 2^-{off_bits:.1}"
        );
        // Typed errors before any work: another slot count, too low a level.
        let other = HomomorphicDft::slot_to_coeff(n / 2, levels, 1.0).unwrap();
        let before = fx.ctx.keyswitches();
        assert!(matches!(
            other.evaluate(&fx.eval, &fx.encrypt(n, &w)),
            Err(rhea::Error::SlotMismatch { .. })
        ));
        let low = fx
            .eval
            .drop_to_level(&fx.encrypt(n, &w), levels - 1)
            .unwrap();
        assert!(matches!(
            stc.evaluate(&fx.eval, &low),
            Err(rhea::Error::LevelUnderflow { .. })
        ));
        assert_eq!(fx.ctx.keyswitches(), before, "no work on an error");
    }
}

/// CoeffToSlot of a fresh encryption takes the plaintext polynomial's packed coefficients
/// `c_k` (read from the decryption) to slot `bitrev(k)`, times the factor.
#[test]
fn coeff_to_slot_reads_the_coefficients() {
    for (n, levels, factor) in [(4096, 4, 64.0), (256, 3, 16.0)] {
        let cts = HomomorphicDft::coeff_to_slot(n, levels, factor).unwrap();
        let fx = fixture(Device::Cpu, &[&cts]);
        let ct = fx.encrypt(n, &random_complex(n, 51));
        let (c, _) = fx.packed_coefficients(&ct);
        let start = std::time::Instant::now();
        let evaluated = fx.evaluate(&cts, &ct);
        let elapsed = start.elapsed();
        let out = fx.decrypt(&evaluated);
        let got: Vec<Complex64> = (0..n).map(|k| out[cts.index(k)]).collect();
        let want: Vec<Complex64> = c.iter().map(|z| z * factor).collect();
        let bits = precision_bits_complex(&got, &want);
        eprintln!(
            "n = {n}: CtS ({levels} levels, diagonals {:?}, {} rotation keys, factor \
             {factor}): {bits:.1} bits, {} key switchings, {elapsed:.2?} on the CPU (first \
             evaluation: diagonals encoded)",
            cts.diagonal_counts(),
            cts.rotations().len(),
            cts.keyswitches()
        );
        assert!(bits >= MIN_BITS, "n = {n}: {bits:.1} bits");
    }
}

/// One CoeffToSlot on the GPU gives the CPU's words (same keys, same encryption seed).
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn gpu_coeff_to_slot_matches_cpu() {
    let device = Device::Cuda(0);
    if let Err(e) = device.check_supported() {
        panic!("this test needs a CUDA GPU: {e}");
    }
    let before = device.fused_fallbacks();
    let n = 256;
    let cts = HomomorphicDft::coeff_to_slot(n, 3, 4.0).unwrap();
    let (cpu, gpu) = (fixture(Device::Cpu, &[&cts]), fixture(device, &[&cts]));
    let v = random_complex(n, 61);
    let (a, b) = (cpu.encrypt(n, &v), gpu.encrypt(n, &v));
    let words = |ct: &Ciphertext| -> Vec<Vec<u64>> {
        ct.parts()
            .iter()
            .map(|p| cpu.ctx.ring().download(p).unwrap())
            .collect()
    };
    assert_eq!(words(&a), words(&b), "the encryptions");
    let (ya, yb) = (cpu.evaluate(&cts, &a), gpu.evaluate(&cts, &b));
    assert_eq!(words(&ya), words(&yb), "CoeffToSlot");
    let want: Vec<Complex64> = cts.apply(&v).unwrap();
    let bits = precision_bits_complex(&gpu.decrypt(&yb), &want);
    assert!(bits >= MIN_BITS, "{bits:.1} bits");
    assert_eq!(device.fused_fallbacks(), before, "a fused path fell back");
}
