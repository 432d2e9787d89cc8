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

/// One strided copy of limbs: `rows` rows of `limbs` limbs, row `i` from limb
/// `src + i·src_pitch` to limb `dst + i·dst_pitch` (pitches in limbs, at least `limbs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RowCopy {
    /// The first source limb.
    pub src: usize,
    /// Source limbs from row to row.
    pub src_pitch: usize,
    /// The first target limb.
    pub dst: usize,
    /// Target limbs from row to row.
    pub dst_pitch: usize,
    /// Limbs per row.
    pub limbs: usize,
    /// Rows.
    pub rows: usize,
}

impl RowCopy {
    /// `(source limb, target limb)` of every limb copied.
    #[cfg(test)]
    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.rows).flat_map(move |i| {
            (0..self.limbs).map(move |j| {
                (
                    self.src + i * self.src_pitch + j,
                    self.dst + i * self.dst_pitch + j,
                )
            })
        })
    }
}

/// The copies that take a GPU's limbs from its chunk of a rank-major all-gather (local limb `j`
/// at limb `base + j`) to their places in the natural order: `runs` are the GPU's maximal runs
/// of consecutive limbs, `(local limbs, first limb)` increasing ([`LimbPartition::q_runs`]).
/// Runs of one length at one spacing become one strided copy (a strided partition's blocks:
/// one copy per GPU, two with a shorter last block; a contiguous one: one).
pub(crate) fn run_copies(runs: &[(Range<usize>, usize)], base: usize) -> Vec<RowCopy> {
    let mut out: Vec<RowCopy> = Vec::new();
    for (l, t) in runs {
        let (src, len, t) = (base + l.start, l.len(), *t);
        if len == 0 {
            continue;
        }
        if let Some(c) = out.last_mut() {
            if c.limbs == len && src == c.src + c.rows * c.src_pitch {
                let step = if c.rows == 1 {
                    t.checked_sub(c.dst)
                } else {
                    Some(c.dst_pitch)
                };
                if let Some(step) = step.filter(|&s| s >= len && t == c.dst + c.rows * s) {
                    c.dst_pitch = step;
                    c.rows += 1;
                    continue;
                }
            }
        }
        out.push(RowCopy {
            src,
            src_pitch: len,
            dst: t,
            dst_pitch: len,
            limbs: len,
            rows: 1,
        });
    }
    out
}

/// The layout of the ModUp's all-gather at `ell` limbs: every GPU's active limbs as one chunk
/// of the largest share (`[rank][share][N]`, the shorter shares padded), and per GPU the copies
/// back to the natural order `[ell][N]` (GPU `k`'s chunk at limb `k · share`).
pub(crate) fn modup_gather(part: &LimbPartition, ell: usize) -> (usize, Vec<Vec<RowCopy>>) {
    let share = (0..part.gpus())
        .map(|k| part.q_active(k, ell).len())
        .max()
        .unwrap_or(0);
    let copies = (0..part.gpus())
        .map(|k| run_copies(&part.q_runs(k, ell), k * share))
        .collect();
    (share, copies)
}

/// The layout of the ModDown's all-gather: per half `c` of `[2]`, every GPU's `P` limbs as one
/// chunk of the largest share `s` (`[2][rank][s][N]`); `None` where that is already `[2][·][N]`
/// in `P`'s order from limb 0 of each half (every GPU's range starts at `k · s`: two GPUs, or
/// equal shares), else the copies to `[2][|P|][N]`.
pub(crate) fn moddown_gather(part: &LimbPartition) -> (usize, Option<Vec<RowCopy>>) {
    let gpus = part.gpus();
    let share = (0..gpus).map(|k| part.p_range(k).len()).max().unwrap_or(0);
    let natural = (0..gpus).all(|k| {
        let r = part.p_range(k);
        r.is_empty() || r.start == k * share
    });
    if natural {
        return (share, None);
    }
    let copies = (0..gpus)
        .filter(|&k| !part.p_range(k).is_empty())
        .map(|k| {
            let r = part.p_range(k);
            RowCopy {
                src: k * share,
                src_pitch: gpus * share,
                dst: r.start,
                dst_pitch: part.p_len(),
                limbs: r.len(),
                rows: 2,
            }
        })
        .collect();
    (share, Some(copies))
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
        let part = LimbPartition::with_kind(lq, pl, gpus, kind).unwrap();
        // The all-gathered coefficient-form input as the GPUs get it: each GPU's limbs in its
        // chunk of `[rank][share][N]` (padding: a marker), then every chunk copied back to
        // the natural order by the copies of `modup_gather`.
        let (share, up_copies) = modup_gather(&part, ell);
        let mut gathered = vec![u64::MAX; gpus * share * n];
        for k in 0..gpus {
            for (j, &i) in part.q_active(k, ell).iter().enumerate() {
                let mut x = limb(&dw, i);
                table(i).inverse(&mut x).unwrap();
                gathered[(k * share + j) * n..(k * share + j + 1) * n].copy_from_slice(&x);
            }
        }
        let mut coeff = vec![u64::MAX; ell * n];
        for c in up_copies.concat() {
            for (s, t) in c.pairs() {
                coeff[t * n..(t + 1) * n].copy_from_slice(&gathered[s * n..(s + 1) * n]);
            }
        }
        assert!(
            !coeff.contains(&u64::MAX),
            "a limb left out of the ModUp's input"
        );
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
        // ModUp, inner product, P limbs out to the gathered `[2][rank][p_share][N]`.
        let mup = ring.keyswitch_plan().mod_up();
        let (p_share, p_copies) = moddown_gather(&part);
        let p_rows = gpus * p_share;
        let mut pg = vec![u64::MAX; 2 * p_rows * n];
        let mut accs = Vec::new();
        for (k, p) in plans.iter().enumerate() {
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
                    let at = (c * p_rows + k * p_share + m) * n;
                    pg[at..at + n].copy_from_slice(&x);
                }
            }
            accs.push(acc);
        }
        // The ModDown's input as the GPUs read it: in place (`[2][p_rows][N]`, the first `|P|`
        // limbs of each half) or copied to `[2][|P|][N]`.
        let (pc, p_stride) = match &p_copies {
            None => (pg, p_rows * n),
            Some(copies) => {
                let mut pc = vec![u64::MAX; 2 * pl * n];
                for c in copies {
                    for (s, t) in c.pairs() {
                        pc[t * n..(t + 1) * n].copy_from_slice(&pg[s * n..(s + 1) * n]);
                    }
                }
                (pc, pl * n)
            }
        };
        for c in 0..2 {
            let half = &pc[c * p_stride..c * p_stride + pl * n];
            assert!(
                !half.contains(&u64::MAX),
                "a P limb left out of the ModDown's input"
            );
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
                let half = &pc[c * p_stride..c * p_stride + pl * n];
                conv.convert_centered(half, &mut y_full, n).unwrap();
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

    /// The rank-major all-gathers read back in the natural order, for every partition.
    #[test]
    fn gathered_chunks_go_back_to_the_natural_order() {
        let kinds = [
            PartitionKind::Strided { block: 1 },
            PartitionKind::Strided { block: 2 },
            PartitionKind::Strided { block: 4 },
            PartitionKind::Contiguous,
        ];
        for (q_len, p_len) in [(39, 10), (14, 5), (7, 3), (6, 2)] {
            for gpus in 1..=5 {
                for kind in kinds {
                    let Ok(part) = LimbPartition::with_kind(q_len, p_len, gpus, kind) else {
                        continue;
                    };
                    for ell in 1..=q_len {
                        let (share, copies) = modup_gather(&part, ell);
                        let mut natural = vec![None; ell];
                        for (k, cs) in copies.iter().enumerate() {
                            // The gathered buffer: GPU k's local limb j at k·share + j.
                            let chunk = k * share..(k + 1) * share;
                            let aq = part.q_active(k, ell);
                            for c in cs {
                                for (s, d) in c.pairs() {
                                    assert!(chunk.contains(&s) && s - chunk.start < aq.len());
                                    assert!(natural[d].replace(aq[s - chunk.start]).is_none());
                                }
                            }
                        }
                        let want: Vec<_> = (0..ell).map(Some).collect();
                        assert_eq!(natural, want, "{kind}, {gpus} GPUs, {ell} limbs");
                        // Uniform blocks: at most two copies per GPU.
                        if kind != PartitionKind::Contiguous {
                            assert!(copies.iter().all(|c| c.len() <= 2), "{copies:?}");
                        }
                    }
                    let (share, copies) = moddown_gather(&part);
                    let mut natural = vec![None; 2 * p_len];
                    for k in 0..gpus {
                        for c in 0..2 {
                            for (j, i) in part.p_range(k).enumerate() {
                                let at = (c * gpus + k) * share + j;
                                match &copies {
                                    None => {
                                        // Read in place, `[2][gpus · share]`.
                                        assert_eq!(at, c * gpus * share + i);
                                        natural[c * p_len + i] = Some(at);
                                    }
                                    Some(_) => natural[c * p_len + i] = Some(at),
                                }
                            }
                        }
                    }
                    if let Some(cs) = copies {
                        let mut got = vec![None; 2 * p_len];
                        for c in &cs {
                            for (s, d) in c.pairs() {
                                assert!(got[d].replace(s).is_none());
                            }
                        }
                        assert_eq!(got, natural, "{gpus} GPUs, {p_len} P limbs");
                    }
                    assert!(natural.iter().all(Option::is_some));
                }
            }
        }
        // The bench's case: 2 GPUs, strided, 25 limbs: one copy per GPU, P read in place.
        let part = LimbPartition::new(39, 10, 2).unwrap();
        let (share, copies) = modup_gather(&part, 25);
        assert_eq!(share, 13);
        let one = |src, dst, rows| RowCopy {
            src,
            src_pitch: 1,
            dst,
            dst_pitch: 2,
            limbs: 1,
            rows,
        };
        assert_eq!(copies, vec![vec![one(0, 0, 13)], vec![one(13, 1, 12)]]);
        assert_eq!(moddown_gather(&part), (5, None));
        // 4 GPUs, 10 P limbs (3, 3, 2, 2): copied.
        let four = LimbPartition::new(39, 10, 4).unwrap();
        assert!(moddown_gather(&four).1.is_some());
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
