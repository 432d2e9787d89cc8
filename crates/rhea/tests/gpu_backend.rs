//! The backend primitives on the GPU against the CPU, word for word, on random inputs: the
//! NTT-domain rescale (every level), ModUp, ModDown and the key-switching inner product (every
//! level, so every digit boundary and the key read in place below the top level), the fused
//! key-switching tails (ModDown with the additions, and merged with the rescale) against their
//! compositions, at several sizes, including more digits than the fused inner product takes in
//! one launch.
//!
//! Every test is `#[ignore]`d, so a machine without a GPU lists them as ignored, never as
//! passed; `cargo test -- --include-ignored` (what `scripts/gpu-run.sh` runs) runs them, and then
//! a missing GPU is a failure.

use rhea::backend::{Form, Poly, PolyShape};
use rhea::unstable::math::prime::generate_ntt_primes;
use rhea::unstable::math::sampler::Prng;
use rhea::unstable::RnsRing;
use rhea::Device;

const GPU: Device = Device::Cuda(0);

/// Checks that GPU 0 is usable, for a test marked `#[ignore = "needs a CUDA GPU ..."]` (run
/// with `--include-ignored`, as `scripts/gpu-run.sh` does): a missing GPU is a failure.
#[track_caller]
fn require_gpu(test: &str) {
    if let Err(e) = GPU.check_supported() {
        panic!(
            "{test}: needs a CUDA GPU, and none is usable ({e}); GPU tests are #[ignore]d: run \
             them on a GPU machine (scripts/gpu-run.sh), or leave out --include-ignored"
        );
    }
}

/// `lq` Q primes (the first 60 bits, then `q_bits`) and `lp` 61-bit P primes.
fn ring(n: usize, lq: usize, lp: usize, dnum: usize, q_bits: u32) -> RnsRing {
    let mut q = generate_ntt_primes(60, n, 1, &[]).unwrap();
    q.extend(generate_ntt_primes(q_bits, n, lq - 1, &q).unwrap());
    let p = generate_ntt_primes(61, n, lp, &q).unwrap();
    RnsRing::new(n, &q, &p, dnum).unwrap()
}

/// The same random NTT-form polynomial on the CPU and on the GPU.
fn pair(ring: &RnsRing, shape: PolyShape, stream: u64) -> (Poly, Poly) {
    let c = ring
        .sample_uniform_from_seed(Device::Cpu, &[stream as u8 ^ 0x5a; 32], stream, shape)
        .unwrap();
    let words = ring.download(&c).unwrap();
    assert!(words.iter().any(|&w| w != 0));
    let g = ring.upload(GPU, words, shape, Form::Ntt).unwrap();
    (c, g)
}

fn same(ring: &RnsRing, what: &str, cpu: &Poly, gpu: &Poly) {
    assert_eq!(cpu.shape(), gpu.shape(), "{what}: shapes");
    let (c, g) = (ring.download(cpu).unwrap(), ring.download(gpu).unwrap());
    let first = c.iter().zip(&g).position(|(a, b)| a != b);
    assert!(first.is_none(), "{what}: first differing word {first:?}");
}

/// The optional addends of a key switching.
type Adds<'a> = [Option<&'a Poly>; 2];

/// `upload_lifted` and `from_signed` on the GPU (one limb lifted on the device) against the
/// CPU's host lift, at the edges of the centred range, over `Q_ℓ` and over `Q_ℓ ∪ P` (an
/// extended encoding's shape: the `P` primes exceed `q_0`); bad inputs as errors.
fn check_lifts(test: &str, ring: &RnsRing) {
    let n = ring.n();
    let levels = [1, ring.q_len() / 2 + 1, ring.q_len()];
    let shapes = levels
        .iter()
        .flat_map(|&ell| [ring.shape_q(ell), ring.shape_qp(ell)]);
    for shape in shapes {
        let ell = format!("{shape}");
        let q0 = ring.moduli(&shape)[0];
        let (q, half) = (q0.value(), q0.value() / 2);
        // Edges first (0, ±1, ±⌊q_0/2⌋), then residues spread over [0, q_0).
        let edges = [0, 1, q - 1, half, half + 1, half - 1, half + 2];
        let limb0: Vec<u64> = (0..n as u64)
            .map(|k| match edges.get(k as usize) {
                Some(&e) => e,
                None => k.wrapping_mul(0x9e37_79b9_7f4a_7c15) % q,
            })
            .collect();
        let cpu = ring
            .upload_lifted(Device::Cpu, limb0.clone(), shape)
            .unwrap();
        let gpu = ring.upload_lifted(GPU, limb0.clone(), shape).unwrap();
        same(ring, &format!("{test}: upload_lifted at {ell}"), &cpu, &gpu);
        // The host lift the CPU path must equal: the centred integers through from_i128.
        let ints: Vec<i128> = limb0
            .iter()
            .map(|&t| {
                if t > half {
                    t as i128 - q as i128
                } else {
                    t as i128
                }
            })
            .collect();
        let want = ring.from_i128(Device::Cpu, &ints, shape).unwrap();
        same(
            ring,
            &format!("{test}: upload_lifted at {ell}, CPU"),
            &want,
            &cpu,
        );
        // from_signed: inside the range (lifted on the device) and beyond it (the host path).
        for top in [half as i64, half as i64 + 1] {
            let signed: Vec<i64> = (0..n as i64)
                .map(|k| if k % 3 == 0 { top } else { -top + k })
                .collect();
            let c = ring.from_signed(Device::Cpu, &signed, shape).unwrap();
            let g = ring.from_signed(GPU, &signed, shape).unwrap();
            same(
                ring,
                &format!("{test}: from_signed up to {top} at {ell}"),
                &c,
                &g,
            );
        }
        // lift_many: 19 limbs on the device (two launches of up to 16), each the CPU's lift.
        let limbs: Vec<Vec<u64>> = (0..19u64)
            .map(|j| {
                limb0
                    .iter()
                    .map(|&t| (t + j * 0x1234_5678_9abc) % q)
                    .collect()
            })
            .collect();
        let up = |dev: Device| -> Vec<Poly> {
            limbs
                .iter()
                .map(|l| {
                    ring.upload(dev, l.clone(), ring.shape_q(1), Form::Coefficient)
                        .unwrap()
                })
                .collect()
        };
        let (on_cpu, on_gpu) = (up(Device::Cpu), up(GPU));
        let many = ring
            .lift_many(&on_gpu.iter().collect::<Vec<_>>(), shape)
            .unwrap();
        assert_eq!(many.len(), 19);
        for (j, (c, g)) in on_cpu.iter().zip(&many).enumerate() {
            let want = ring.lift(c, shape).unwrap();
            same(ring, &format!("{test}: lift_many {j} at {ell}"), &want, g);
        }
        let mut bad = limb0.clone();
        bad[3] = q;
        assert!(
            ring.upload_lifted(GPU, bad, shape).is_err(),
            "{test}: unreduced word"
        );
        assert!(
            ring.upload_lifted(GPU, limb0[..n - 1].to_vec(), shape)
                .is_err(),
            "{test}: short"
        );
    }
}

fn check_ring(test: &str, ring: &RnsRing) {
    check_lifts(test, ring);
    let full = ring.full_shape();
    let mut stream = 1;
    let mut next = || {
        stream += 1;
        stream
    };
    let key: Vec<[(Poly, Poly); 2]> = (0..ring.dnum())
        .map(|_| [pair(ring, full, next()), pair(ring, full, next())])
        .collect();
    let key_cpu: Vec<[Poly; 2]> = key
        .iter()
        .map(|[b, a]| [b.0.try_clone().unwrap(), a.0.try_clone().unwrap()])
        .collect();
    let key_gpu: Vec<[Poly; 2]> = key
        .iter()
        .map(|[b, a]| [b.1.try_clone().unwrap(), a.1.try_clone().unwrap()])
        .collect();
    // Levels outside 1..=|Q| and a key of another shape: typed errors, before any sampling.
    for ell in [0, ring.q_len() + 1] {
        let res = ring.encrypt_zero_moddown(
            GPU,
            &mut Prng::from_seed([1; 32]),
            3.2,
            ell,
            &key_gpu[0],
            None,
        );
        assert!(res.is_err(), "{test}: encryption at level {ell}");
    }
    let short_key = [
        pair(ring, ring.shape_qp(1), next()).1,
        pair(ring, ring.shape_qp(1), next()).1,
    ];
    let res =
        ring.encrypt_zero_moddown(GPU, &mut Prng::from_seed([1; 32]), 3.2, 1, &short_key, None);
    assert!(res.is_err(), "{test}: encryption under a key over Q_1 ∪ P");
    for ell in 1..=ring.q_len() {
        // The dot product of a linear transform's giant step, in Q_ℓ ∪ P (fused launches of 16
        // terms) and in Q_ℓ (element-wise), with 3 and 19 terms.
        for (shape, terms) in [
            (ring.shape_qp(ell), 3),
            (ring.shape_qp(ell), 19),
            (ring.shape_q(ell), 3),
        ] {
            let xs: Vec<(Poly, Poly)> = (0..terms).map(|_| pair(ring, shape, next())).collect();
            let ys: Vec<[(Poly, Poly); 2]> = (0..terms)
                .map(|_| [pair(ring, shape, next()), pair(ring, shape, next())])
                .collect();
            fn pick(p: &(Poly, Poly), gpu: bool) -> &Poly {
                if gpu {
                    &p.1
                } else {
                    &p.0
                }
            }
            let run = |gpu: bool| {
                let a: Vec<&Poly> = xs.iter().map(|x| pick(x, gpu)).collect();
                let b: Vec<[&Poly; 2]> = ys
                    .iter()
                    .map(|[y0, y1]| [pick(y0, gpu), pick(y1, gpu)])
                    .collect();
                ring.sum_of_products(&a, &b).unwrap()
            };
            let (want, got) = (run(false), run(true));
            for c in 0..2 {
                let what = format!("{test}: sum_of_products {c} ({terms} terms, {shape:?})");
                same(ring, &what, &want[c], &got[c]);
            }
        }
        // All giant steps of a transform at once (each baby step read once): 3 sums of 5
        // terms, and 11 sums (two launches of at most 8) of 19 terms (two launches of at most
        // 16), some terms absent, in Q_ℓ ∪ P and in Q_ℓ.
        for (shape, sums, terms) in [
            (ring.shape_qp(ell), 3, 5),
            (ring.shape_qp(ell), 11, 19),
            (ring.shape_q(ell), 3, 5),
        ] {
            let rights: Vec<[(Poly, Poly); 2]> = (0..terms)
                .map(|_| [pair(ring, shape, next()), pair(ring, shape, next())])
                .collect();
            let lefts: Vec<Vec<Option<(Poly, Poly)>>> = (0..sums)
                .map(|s| {
                    (0..terms)
                        .map(|t| ((s + 2 * t) % 5 != 3).then(|| pair(ring, shape, next())))
                        .collect()
                })
                .collect();
            fn choose(p: &(Poly, Poly), gpu: bool) -> &Poly {
                if gpu {
                    &p.1
                } else {
                    &p.0
                }
            }
            let run = |gpu: bool| {
                let right: Vec<[&Poly; 2]> = rights
                    .iter()
                    .map(|[a, b]| [choose(a, gpu), choose(b, gpu)])
                    .collect();
                let left: Vec<Vec<Option<&Poly>>> = lefts
                    .iter()
                    .map(|row| {
                        row.iter()
                            .map(|x| x.as_ref().map(|p| choose(p, gpu)))
                            .collect()
                    })
                    .collect();
                ring.sums_of_products(&right, &left).unwrap()
            };
            let (want, got) = (run(false), run(true));
            assert_eq!(want.len(), sums);
            for (s, (w, g)) in want.iter().zip(&got).enumerate() {
                for c in 0..2 {
                    let what =
                        format!("{test}: sums_of_products sum {s}/{sums} part {c} ({terms} terms, {shape:?})");
                    same(ring, &what, &w[c], &g[c]);
                }
            }
        }
        let (xc, xg) = pair(ring, ring.shape_q(ell), next());
        if ell == 1 {
            // ModRaise of a one-limb polynomial (NTT form) to every level.
            for up in 1..=ring.q_len() {
                let (rc, rg) = (
                    ring.mod_raise(&xc, up).unwrap(),
                    ring.mod_raise(&xg, up).unwrap(),
                );
                same(ring, &format!("{test}: mod_raise to {up}"), &rc, &rg);
            }
        }
        if ell >= 2 {
            let (rc, rg) = (ring.rescale(&xc).unwrap(), ring.rescale(&xg).unwrap());
            same(ring, &format!("{test}: rescale at {ell}"), &rc, &rg);
        }
        // Several polynomials transformed together (Q ∪ P and Q shapes mixed) against one
        // CPU transform each.
        {
            let mut cpu = Vec::new();
            let mut gpu = Vec::new();
            for shape in [ring.shape_qp(ell), ring.shape_q(ell), ring.shape_qp(ell)] {
                let (c, g) = pair(ring, shape, next());
                let to_coeff = |mut p: Poly| {
                    ring.ntt_inverse(&mut p).unwrap();
                    p
                };
                cpu.push(to_coeff(c));
                gpu.push(to_coeff(g));
            }
            // The inverse transforms (the GPU groups the Q and P limbs of one polynomial).
            for (j, (c, g)) in cpu.iter().zip(&gpu).enumerate() {
                same(ring, &format!("{test}: ntt_inverse {j} at {ell}"), c, g);
            }
            let mut want: Vec<Poly> = cpu.iter().map(|p| p.try_clone().unwrap()).collect();
            for p in &mut want {
                ring.ntt_forward(p).unwrap();
            }
            let mut refs: Vec<&mut Poly> = gpu.iter_mut().collect();
            ring.ntt_forward_many(&mut refs).unwrap();
            for (j, (w, g)) in want.iter().zip(&gpu).enumerate() {
                same(
                    ring,
                    &format!("{test}: ntt_forward_many {j} at {ell}"),
                    w,
                    g,
                );
            }
            let mut cpu_refs: Vec<&mut Poly> = cpu.iter_mut().collect();
            ring.ntt_forward_many(&mut cpu_refs).unwrap();
            for (j, (w, c)) in want.iter().zip(&cpu).enumerate() {
                same(
                    ring,
                    &format!("{test}: ntt_forward_many {j} at {ell}, CPU"),
                    w,
                    c,
                );
            }
        }
        let (dc, dg) = (ring.mod_up(&xc).unwrap(), ring.mod_up(&xg).unwrap());
        assert_eq!(dc.len(), dg.len());
        for (j, (c, g)) in dc.iter().zip(&dg).enumerate() {
            same(ring, &format!("{test}: mod_up digit {j} at {ell}"), c, g);
        }
        let ic = ring.keyswitch_inner_product(&dc, &key_cpu).unwrap();
        let ig = ring.keyswitch_inner_product(&dg, &key_gpu).unwrap();
        for c in 0..2 {
            same(
                ring,
                &format!("{test}: inner product {c} at {ell}"),
                &ic[c],
                &ig[c],
            );
            let (mc, mg) = (
                ring.mod_down(&ic[c]).unwrap(),
                ring.mod_down(&ig[c]).unwrap(),
            );
            same(ring, &format!("{test}: mod_down {c} at {ell}"), &mc, &mg);
        }
        // The fused key-switching tails against the CPU composition: with both addends, with
        // one (a rotation) and with none; merged with the rescale where ell >= 2.
        let (a0c, a0g) = pair(ring, ring.shape_q(ell), next());
        let (a1c, a1g) = pair(ring, ring.shape_q(ell), next());
        // A public-key encryption's core from one seed (its own samples; on the GPU the errors'
        // Q part enters the ModDown untransformed) against the CPU's composition, with the
        // message added and without.
        for (k, (mc, mg)) in [(Some(&a0c), Some(&a0g)), (None, None)]
            .into_iter()
            .enumerate()
        {
            let seed = [ell as u8 ^ 0x3c; 32];
            let enc = |dev, key, m| {
                ring.encrypt_zero_moddown(dev, &mut Prng::from_seed(seed), 3.2, ell, key, m)
                    .unwrap()
            };
            let cpu = enc(Device::Cpu, &key_cpu[0], mc);
            let got = enc(GPU, &key_gpu[0], mg);
            for c in 0..2 {
                let what = format!("{test}: encrypt_zero_moddown {c} (message {k}) at {ell}");
                same(ring, &what, &cpu[c], &got[c]);
            }
        }
        let adds: [(Adds, Adds); 3] = [
            ([Some(&a0c), Some(&a1c)], [Some(&a0g), Some(&a1g)]),
            ([Some(&a0c), None], [Some(&a0g), None]),
            ([None, None], [None, None]),
        ];
        for (k, (ac, ag)) in adds.iter().enumerate() {
            let mut want: Vec<Poly> = (0..2)
                .map(|c| {
                    let mut u = ring.mod_down(&ic[c]).unwrap();
                    if let Some(a) = ac[c] {
                        ring.add_assign(&mut u, a).unwrap();
                    }
                    u
                })
                .collect();
            let got = ring.keyswitch_moddown(&dg, &key_gpu, *ag).unwrap();
            for c in 0..2 {
                let what = format!("{test}: keyswitch_moddown {c} (adds {k}) at {ell}");
                same(ring, &what, &want[c], &got[c]);
            }
            // Key switching from the polynomial itself (on the GPU the ModUp's row phase and the
            // inner product fused, up to 4 digits; the composition beyond).
            let got = ring.keyswitch_poly(&xg, &key_gpu, *ag, false).unwrap();
            let cpu = ring.keyswitch_poly(&xc, &key_cpu, *ac, false).unwrap();
            for c in 0..2 {
                let what = format!("{test}: keyswitch_poly {c} (adds {k}) at {ell}");
                same(ring, &what, &want[c], &got[c]);
                same(ring, &format!("{what}, CPU"), &want[c], &cpu[c]);
            }
            // The same followed by an automorphism (a rotation): on the GPU written permuted by
            // the ModDown's last kernel, on the CPU the composition.
            let g = 25 % (2 * ring.n() as u64);
            let perm: Vec<Poly> = want
                .iter()
                .map(|u| ring.automorphism(u, g).unwrap())
                .collect();
            let got = ring
                .keyswitch_poly_automorphism(&xg, &key_gpu, *ag, g)
                .unwrap();
            let cpu = ring
                .keyswitch_poly_automorphism(&xc, &key_cpu, *ac, g)
                .unwrap();
            let hoisted = ring
                .keyswitch_moddown_automorphism(&dg, &key_gpu, *ag, g)
                .unwrap();
            for c in 0..2 {
                let what = format!("{test}: keyswitch_poly_automorphism {c} (adds {k}) at {ell}");
                same(ring, &what, &perm[c], &got[c]);
                same(ring, &format!("{what}, CPU"), &perm[c], &cpu[c]);
                same(ring, &format!("{what}, hoisted"), &perm[c], &hoisted[c]);
            }
            // With addends inside the ModDown too (public-key encryption's errors): one digit
            // here is enough, the inner product is the same launch.
            let (e0c, e0g) = pair(ring, ring.shape_qp(ell), next());
            let (e1c, e1g) = pair(ring, ring.shape_qp(ell), next());
            let inner_c = [Some(&e0c), Some(&e1c)];
            let inner_g = [Some(&e0g), Some(&e1g)];
            let cpu = ring
                .keyswitch_moddown_with(&dc, &key_cpu, inner_c, *ac)
                .unwrap();
            let got = ring
                .keyswitch_moddown_with(&dg, &key_gpu, inner_g, *ag)
                .unwrap();
            for c in 0..2 {
                let mut x = ic[c].try_clone().unwrap();
                ring.add_assign(&mut x, inner_c[c].unwrap()).unwrap();
                let mut u = ring.mod_down(&x).unwrap();
                if let Some(a) = ac[c] {
                    ring.add_assign(&mut u, a).unwrap();
                }
                let what = format!("{test}: keyswitch_moddown_with {c} (adds {k}) at {ell}");
                same(ring, &what, &u, &got[c]);
                same(ring, &format!("{what}, CPU"), &u, &cpu[c]);
            }
            if ell >= 2 {
                want = want.iter().map(|u| ring.rescale(u).unwrap()).collect();
                let got = ring.keyswitch_moddown_rescale(&dg, &key_gpu, *ag).unwrap();
                let cpu = ring.keyswitch_moddown_rescale(&dc, &key_cpu, *ac).unwrap();
                for c in 0..2 {
                    let what = format!("{test}: keyswitch_moddown_rescale {c} (adds {k}) at {ell}");
                    same(ring, &what, &want[c], &got[c]);
                    same(ring, &format!("{what}, CPU"), &want[c], &cpu[c]);
                }
                let got = ring.keyswitch_poly(&xg, &key_gpu, *ag, true).unwrap();
                for c in 0..2 {
                    let what = format!("{test}: keyswitch_poly + rescale {c} (adds {k}) at {ell}");
                    same(ring, &what, &want[c], &got[c]);
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn gpu_primitives_match_cpu_small_rings() {
    require_gpu("gpu_primitives_match_cpu_small_rings");
    // (n, |Q|, |P|, dnum, Q bits)
    for (n, lq, lp, dnum, bits) in [
        (1024, 6, 2, 3, 50),
        (2048, 9, 3, 3, 58),
        (4096, 5, 2, 1, 45),
        (1024, 18, 1, 18, 40),
        // Digits of 2: 5 at the top level (beyond the fused launch's 4), 4 and fewer below.
        (8192, 10, 2, 5, 50),
    ] {
        let r = ring(n, lq, lp, dnum, bits);
        check_ring(&format!("n={n} Q={lq} P={lp} dnum={dnum}"), &r);
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn gpu_primitives_match_cpu_n16() {
    require_gpu("gpu_primitives_match_cpu_n16");
    let r = ring(1 << 16, 6, 3, 3, 55);
    check_ring("n=2^16", &r);
}
