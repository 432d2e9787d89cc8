//! [`KsPlan`]: what one GPU of a group computes in one partitioned key switching — which limbs
//! it converts, copies and transforms, and which ModDown columns it owns. Host-only; the GPU
//! path (`keyswitch.rs`) follows it, and the test below runs it with host arithmetic against
//! the CPU backend's key switching, so the limb bookkeeping is checked on any machine.

use std::ops::Range;

use super::LimbPartition;

/// One digit's part of a [`KsPlan`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DigitPlan {
    /// Local limbs that are the digit's own limbs: copied from the NTT-form input (same local
    /// index in the input and in the digit's buffer), never converted.
    pub own: Range<usize>,
    /// Local limb ranges forward-transformed after the conversion, each with its first local
    /// NTT table (the GPU's tables are its `Q` limbs of the full chain then its `P` limbs, in
    /// its local order: local `Q` limb `j` has table `j`, `P` limb `m` table `q_full + m`).
    pub runs: Vec<(Range<usize>, usize)>,
}

/// GPU `k`'s share of one key switching at `ell` active `Q` limbs. Its local limbs are its
/// active `Q` limbs `aq` (increasing) then its `P` limbs `pr` (`nq + np` of them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KsPlan {
    /// The GPU's active `Q` limbs (global indices, increasing; a prefix of `q_all`).
    pub aq: Vec<usize>,
    /// All the GPU's `Q` limbs of the full chain (its local NTT tables `0..q_full`).
    pub q_all: Vec<usize>,
    /// The GPU's `P` limbs (indices into `P`).
    pub pr: Range<usize>,
    /// The number of `Q` limbs of the full chain.
    pub q_len: usize,
    /// The ModUp's targets: `(limb of Q_ell ∪ P, local limb)` for every local limb.
    pub targets: Vec<(usize, usize)>,
    /// Per active digit.
    pub digits: Vec<DigitPlan>,
    /// The ModDown's conversion columns: `(Q limb, local limb)`.
    pub moddown_columns: Vec<(usize, usize)>,
    /// Whether this GPU folds the ModUp's first-step factors `q̂_i^{-1}` into the inverse NTT
    /// of its own limbs before the all-gather (the fast NTT, and active limbs to fold into).
    pub folds_own: bool,
    /// Whether the all-gathered input this GPU converts holds the first step's products: the
    /// group's rule, the same on every GPU (every owner folds with the fast NTT), whatever
    /// this GPU holds. A GPU without active limbs still converts its `P` limbs from limbs
    /// that the others folded (issue 37: reading this per GPU broke strided-2 at one level).
    pub input_scaled: bool,
}

impl KsPlan {
    /// The plan of GPU `k` at `ell` limbs for the digits `digits` (`Q` limb ranges of the full
    /// chain, as [`crate::unstable::KeySwitchPlan::digits`]) of a chain of `q_len` limbs;
    /// `fold`: whether the group folds the ModUp's first step into the inverse NTT (the fast
    /// NTT kernels, the same for every GPU of a group: they depend on `N` only).
    pub fn new(
        part: &LimbPartition,
        digits: &[Range<usize>],
        q_len: usize,
        ell: usize,
        k: usize,
        fold: bool,
    ) -> Self {
        let (aq, pr) = (part.q_active(k, ell).to_vec(), part.p_range(k));
        let q_all = part.q_limbs(k).to_vec();
        let (nq, q_full) = (aq.len(), q_all.len());
        let targets = aq
            .iter()
            .enumerate()
            .map(|(j, &i)| (i, j))
            .chain(pr.clone().enumerate().map(|(j, i)| (ell + i, nq + j)))
            .collect();
        let digits = digits
            .iter()
            .filter(|r| r.start < ell)
            .map(|r| {
                // The local limbs of the digit: contiguous, as `aq` increases.
                let s = aq.partition_point(|&i| i < r.start);
                let e = aq.partition_point(|&i| i < r.end.min(ell));
                let mut runs = Vec::new();
                for q in [0..s, e..nq] {
                    if !q.is_empty() {
                        let t = q.start;
                        runs.push((q, t));
                    }
                }
                if !pr.is_empty() {
                    runs.push((nq..nq + pr.len(), q_full));
                }
                DigitPlan { own: s..e, runs }
            })
            .collect();
        let moddown_columns = aq.iter().enumerate().map(|(j, &i)| (i, j)).collect();
        Self {
            folds_own: fold && !aq.is_empty(),
            input_scaled: fold,
            aq,
            q_all,
            pr,
            q_len,
            targets,
            digits,
            moddown_columns,
        }
    }

    /// Active `Q` limbs held.
    pub fn nq(&self) -> usize {
        self.aq.len()
    }

    /// `P` limbs held.
    pub fn np(&self) -> usize {
        self.pr.len()
    }

    /// All local limbs.
    pub fn width(&self) -> usize {
        self.nq() + self.np()
    }

    /// `Q` limbs of the full chain held (the local table index of the first `P` limb).
    pub fn q_full(&self) -> usize {
        self.q_all.len()
    }

    /// The limb of `Q ∪ P` (full chain, `P` limb `j` at `q_len + j`) of local limb `j`.
    #[cfg(test)]
    pub fn global(&self, j: usize) -> usize {
        if j < self.nq() {
            self.aq[j]
        } else {
            self.q_len + self.pr.start + (j - self.nq())
        }
    }

    /// The limb of `Q ∪ P` (full chain) whose NTT table is local table `t`.
    #[cfg(test)]
    pub fn table_global(&self, t: usize) -> usize {
        if t < self.q_full() {
            self.q_all[t]
        } else {
            self.q_len + self.pr.start + (t - self.q_full())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cuda::multi::PartitionKind;
    use crate::backend::{Device, Form, Poly};
    use crate::params::CkksParametersLiteral;
    use crate::unstable::RnsRing;
    use rand::{Rng, SeedableRng};

    fn random_poly(ring: &RnsRing, shape: crate::backend::PolyShape, r: &mut impl Rng) -> Poly {
        let mut w = Vec::with_capacity(shape.words());
        for i in 0..shape.limbs() {
            let q = ring.modulus(&shape, i).value();
            w.extend((0..shape.n).map(|_| r.random_range(1..q)));
        }
        ring.upload(Device::Cpu, w, shape, Form::Ntt).unwrap()
    }

    /// The partitioned key switching run with host arithmetic by the plans of every GPU
    /// (exchanges simulated by shared host arrays) gives the CPU backend's words.
    /// With `fold`, the owners' first-step folding is tracked limb by limb and every
    /// conversion checks that its input is in the form it expects (scaled or not).
    fn simulate(
        ring: &RnsRing,
        gpus: usize,
        kind: PartitionKind,
        ell: usize,
        fold: bool,
        seed: u64,
    ) {
        let mut r = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
        let (n, lq, pl) = (ring.n(), ring.q_len(), ring.p_len());
        let full = ring.full_shape();
        let d = random_poly(ring, ring.shape_q(ell), &mut r);
        let adds = [
            random_poly(ring, ring.shape_q(ell), &mut r),
            random_poly(ring, ring.shape_q(ell), &mut r),
        ];
        let key: Vec<[Poly; 2]> = (0..ring.dnum())
            .map(|_| {
                [
                    random_poly(ring, full, &mut r),
                    random_poly(ring, full, &mut r),
                ]
            })
            .collect();
        let want = ring
            .keyswitch_poly(&d, &key, [Some(&adds[0]), Some(&adds[1])], false)
            .unwrap()
            .map(|p| ring.download(&p).unwrap());
        let dw = ring.download(&d).unwrap();
        let aw = adds.each_ref().map(|a| ring.download(a).unwrap());
        let kw: Vec<[Vec<u64>; 2]> = key
            .iter()
            .map(|[b, a]| [ring.download(b).unwrap(), ring.download(a).unwrap()])
            .collect();
        let table = |t: usize| ring.ntt_table(&full, t);
        let modulus = |t: usize| *table(t).modulus();
        let limb = |w: &[u64], i: usize| w[i * n..(i + 1) * n].to_vec();
        // The all-gathered coefficient-form input.
        let mut coeff = Vec::with_capacity(ell * n);
        for i in 0..ell {
            let mut x = limb(&dw, i);
            table(i).inverse(&mut x).unwrap();
            coeff.extend(x);
        }
        let part = LimbPartition::with_kind(lq, pl, gpus, kind).unwrap();
        let plans: Vec<KsPlan> = (0..gpus)
            .map(|k| KsPlan::new(&part, ring.digits(), lq, ell, k, fold))
            .collect();
        // Per limb of the all-gathered input, whether its owner folded the first step into it
        // (the arithmetic below is the unfolded one; a conversion is only right if it reads
        // the input in the form its owner wrote).
        let mut scaled = vec![None; ell];
        for p in &plans {
            for &i in &p.aq {
                assert!(scaled[i].is_none(), "limb {i} owned twice");
                scaled[i] = Some(p.folds_own);
            }
        }
        // ModUp, inner product, P limbs out to the shared `[2][|P|][N]`.
        let mup = ring.keyswitch_plan().mod_up();
        let mut pc = vec![0u64; 2 * pl * n];
        let mut accs = Vec::new();
        for p in &plans {
            let global = |j: usize| p.global(j);
            let mut acc = [vec![0u64; p.width() * n], vec![0u64; p.width() * n]];
            for (dg, dp) in p.digits.iter().enumerate() {
                let own = &ring.digits()[dg];
                let own = own.start..own.end.min(ell);
                let mut full_out = vec![0u64; (ell + pl) * n];
                let input = &coeff[own.start * n..own.end * n];
                if !p.targets.is_empty() {
                    for (i, s) in scaled.iter().enumerate().take(own.end).skip(own.start) {
                        assert_eq!(
                            *s,
                            Some(p.input_scaled),
                            "{gpus} GPU(s) ({kind}) at {ell} limbs, fold {fold}: limb {i} \
                             converted as scaled = {}, its owner wrote {s:?}",
                            p.input_scaled
                        );
                    }
                }
                mup.apply_centered(dg, ell, input, &mut full_out, n)
                    .unwrap();
                let mut o = vec![0u64; p.width() * n];
                for &(src, j) in &p.targets {
                    o[j * n..(j + 1) * n].copy_from_slice(&full_out[src * n..(src + 1) * n]);
                }
                // The input's local limbs are its limbs `aq` (the GPU's part of `d`).
                for j in dp.own.clone() {
                    o[j * n..(j + 1) * n].copy_from_slice(&limb(&dw, p.aq[j]));
                }
                for (range, t0) in &dp.runs {
                    for (j, t) in range.clone().zip(*t0..) {
                        let t = p.table_global(t);
                        assert_eq!(t, global(j), "local table of local limb {j}");
                        table(t).forward(&mut o[j * n..(j + 1) * n]).unwrap();
                    }
                }
                for (c, a) in acc.iter_mut().enumerate() {
                    for j in 0..p.width() {
                        let m = modulus(global(j));
                        let kl = limb(&kw[dg][c], global(j));
                        for x in 0..n {
                            let v = m.mul(o[j * n + x], kl[x]);
                            a[j * n + x] = m.add(a[j * n + x], v);
                        }
                    }
                }
            }
            for (c, a) in acc.iter().enumerate() {
                for m in 0..p.np() {
                    let j = p.nq() + m;
                    let mut x = a[j * n..(j + 1) * n].to_vec();
                    table(lq + p.pr.start + m).inverse(&mut x).unwrap();
                    let at = (c * pl + p.pr.start + m) * n;
                    pc[at..at + n].copy_from_slice(&x);
                }
            }
            accs.push(acc);
        }
        // ModDown on each GPU's own Q limbs.
        let conv = ring.keyswitch_plan().mod_down_converter(ell);
        let p_inv = ring.keyswitch_plan().mod_down().p_inv_mod_q();
        // Each GPU writes its own limbs; the gather puts them back at their places.
        let mut got = [vec![0u64; ell * n], vec![0u64; ell * n]];
        let mut written = vec![0usize; ell];
        for (p, acc) in plans.iter().zip(&accs) {
            for c in 0..2 {
                let mut y_full = vec![0u64; ell * n];
                conv.convert_centered(&pc[c * pl * n..(c + 1) * pl * n], &mut y_full, n)
                    .unwrap();
                for &(i, j) in &p.moddown_columns {
                    let mut y = limb(&y_full, i);
                    table(i).forward(&mut y).unwrap();
                    let m = modulus(i);
                    for x in 0..n {
                        let u = m.mul(m.sub(acc[c][j * n + x], y[x]), p_inv[i]);
                        got[c][i * n + x] = m.add(u, aw[c][i * n + x]);
                    }
                    written[i] += 1;
                }
            }
        }
        assert!(want[0].iter().any(|&w| w != 0));
        assert!(
            written.iter().all(|&w| w == 2),
            "every limb once per half: {written:?}"
        );
        assert_eq!(got, want, "{gpus} GPU(s) ({kind}) at {ell} limbs");
    }

    #[test]
    fn plans_reproduce_the_cpu_key_switching() {
        let mut log_q = vec![60];
        log_q.extend([40; 6]);
        let lit = CkksParametersLiteral {
            log_n: 10,
            log_q,
            log_p: vec![61, 61, 61],
            q: vec![],
            p: vec![],
            log_default_scale: 40,
            dnum: 3,
            secret: Default::default(),
            error_std_dev: 3.2,
            allow_insecure_below_128_bits: false,
        }
        .insecure_allow_below_128_bits();
        let params = lit.build().unwrap();
        let ring = params.ring();
        let kinds = [
            PartitionKind::Strided { block: 1 },
            PartitionKind::Strided { block: 2 },
            PartitionKind::Contiguous,
        ];
        for gpus in [1, 2, 3, 4, 7] {
            for kind in kinds {
                if LimbPartition::with_kind(7, 3, gpus, kind).is_err() {
                    continue; // blocks of 2 over 4 or 7 GPUs of 7 limbs
                }
                // At 2 limbs, blocks of 2 put both on GPU 0: GPU 1 converts its P limbs from
                // a 2-limb digit that GPU 0 folded (`q̂^{-1} ≠ 1`).
                for ell in [7, 4, 2, 1] {
                    for fold in [false, true] {
                        simulate(ring, gpus, kind, ell, fold, (gpus * 100 + ell) as u64);
                    }
                }
            }
        }
    }

    #[test]
    fn a_gpu_without_active_limbs_still_owns_its_p_limbs() {
        // Strided: GPU 1 holds Q limbs 1, 3, 5, none active at one limb.
        let part = LimbPartition::new(7, 3, 2).unwrap();
        let digits = [0..3, 3..6, 6..7];
        let p = KsPlan::new(&part, &digits, 7, 1, 1, true);
        assert!(p.aq.is_empty());
        // It folds nothing itself, yet reads the others' folded limbs as folded.
        assert!(!p.folds_own && p.input_scaled);
        let owner = KsPlan::new(&part, &digits, 7, 1, 0, true);
        assert!(owner.folds_own && owner.input_scaled);
        assert!(!KsPlan::new(&part, &digits, 7, 1, 1, false).input_scaled);
        assert_eq!(p.q_all, vec![1, 3, 5]);
        // Its one P limb (P index 2) is limb 1 + 2 of Q_1 ∪ P, local table 3 (limb 7 + 2).
        assert_eq!(p.targets, vec![(1 + 2, 0)]);
        assert_eq!(p.digits.len(), 1);
        assert_eq!(p.digits[0].runs, vec![(0..1, 3)]);
        assert_eq!(p.table_global(3), 7 + 2);
        assert!(p.digits[0].own.is_empty());
        assert!(p.moddown_columns.is_empty());
    }

    #[test]
    fn strided_plans_split_the_digits_by_local_limb() {
        // 7 limbs over 2 GPUs, GPU 0 holds 0, 2, 4, 6; at 7 limbs digit 1 (3..6) owns its
        // local limb 2 (limb 4): limbs 0, 2 before it and 6 after it are converted.
        let part = LimbPartition::new(7, 3, 2).unwrap();
        let p = KsPlan::new(&part, &[0..3, 3..6, 6..7], 7, 7, 0, true);
        assert_eq!(p.aq, vec![0, 2, 4, 6]);
        assert_eq!(p.digits[1].own, 2..3);
        assert_eq!(p.digits[1].runs, vec![(0..2, 0), (3..4, 3), (4..6, 4)]);
        assert_eq!(p.moddown_columns, vec![(0, 0), (2, 1), (4, 2), (6, 3)]);
        assert_eq!((p.global(3), p.global(4)), (6, 7));
    }
}
