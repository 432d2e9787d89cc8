//! The partitioned key switching and the element-wise work around it (the tensor product).

use std::ops::Range;
use std::time::Instant;

use rhea_cuda::elementwise as ew;
use rhea_cuda::nccl::Gather;
use rhea_cuda::ntt::{DeviceNttTables, EpilogueRun, NttDirection, NttRun, MAX_RUNS};
use rhea_cuda::ntt_keyswitch::{self, KsDigit};
use rhea_cuda::{automorphism, fused, DeviceBuffer, RnsLayout};

use super::plan::{self, KsPlan, RowCopy};
use super::{GpuGroup, PartitionedCiphertext, PartitionedKey};
use crate::error::{Error, Result};

/// Per rank, the word ranges it contributes to an all-gather.
type Exchange = Vec<Vec<Range<usize>>>;

/// `runs` transformed on `bufs` in direction `dir` with the tables `ntt`, [`MAX_RUNS`] per
/// launch; nothing for none.
fn transform(
    ntt: &DeviceNttTables,
    bufs: &mut [&mut DeviceBuffer],
    runs: &[NttRun],
    dir: NttDirection,
) -> Result<()> {
    for chunk in runs.chunks(MAX_RUNS) {
        ntt.transform_runs(bufs, chunk, dir)?;
    }
    Ok(())
}

/// `copies` (in limbs of `n` words) from `src` to `dst`: one strided copy each.
fn copy_limbs(
    src: &DeviceBuffer,
    dst: &mut DeviceBuffer,
    copies: &[RowCopy],
    n: usize,
) -> Result<()> {
    for c in copies {
        DeviceBuffer::copy_rows(
            src,
            c.src * n,
            c.src_pitch * n,
            dst,
            c.dst * n,
            c.dst_pitch * n,
            c.limbs * n,
            c.rows,
        )?;
    }
    Ok(())
}

/// The forward NTT runs of every digit's converted limbs (`plan`): digit `d` is buffer `d`.
fn digit_runs(plan: &KsPlan) -> Vec<NttRun> {
    plan.digits
        .iter()
        .enumerate()
        .flat_map(|(dg, dp)| {
            dp.runs.iter().map(move |(r, table)| NttRun {
                buf: dg,
                first_limb: r.start,
                limbs: r.len(),
                table: *table,
            })
        })
        .collect()
}

/// The key-independent half of a partitioned key switching ([`GpuGroup::decompose`]): per
/// GPU, its plan and every active digit over its limbs (`[width][N]` each; none for a GPU
/// without limbs).
pub(super) struct Decomposed {
    /// Active `Q` limbs of the input.
    ell: usize,
    plans: Vec<KsPlan>,
    /// `convs[k][digit]`.
    convs: Vec<Vec<DeviceBuffer>>,
    /// Finished in NTT form for several inner products (hoisting), or in coefficient form for
    /// one fused inner product that spends them.
    shared: bool,
}

impl GpuGroup {
    /// `(a_0 b_0, a_0 b_1 + a_1 b_0, a_1 b_1)`, limb by limb on each GPU (no communication), one
    /// fused launch per GPU.
    pub(super) fn tensor(
        &self,
        a: &PartitionedCiphertext,
        b: &PartitionedCiphertext,
    ) -> Result<[Vec<DeviceBuffer>; 3]> {
        let n = self.ctx.ring().n();
        let mut out: [Vec<DeviceBuffer>; 3] = Default::default();
        for k in 0..self.gpus() {
            let g = &self.rings[k];
            let nq = self.part.q_active(k, a.ell).len();
            let m = &self.local[k].moduli;
            let mut d = [g.alloc(nq * n)?, g.alloc(nq * n)?, g.alloc(nq * n)?];
            if nq > 0 {
                // One pass (the single-GPU path's fused tensor kernel); the local moduli's
                // first `nq` are the active limbs'.
                let (pa, pb) = (&a.parts, &b.parts);
                let [d0, d1, d2] = &mut d;
                fused::tensor(
                    [&pa[0][k], &pa[1][k]],
                    [&pb[0][k], &pb[1][k]],
                    [d0, d1, d2],
                    m,
                    nq,
                    n,
                )?;
            }
            for (o, x) in out.iter_mut().zip(d) {
                o.push(x);
            }
        }
        Ok(out)
    }

    /// The ModUp's all-gather at `ell` limbs (each GPU's active limbs, one chunk of `share`
    /// limbs per GPU) and the ModDown's (each GPU's `P` limbs of each half, one chunk of
    /// `p_share` per GPU and half), as `NcclGroup::all_gather`
    /// requests over buffers `[rank][share][N]` and `[2][rank][p_share][N]`.
    fn gathers(&self, ell: usize, share: usize, p_share: usize) -> (Gather, [Gather; 2]) {
        let n = self.ctx.ring().n();
        let gpus = self.gpus();
        let up = Gather {
            offset: 0,
            count: share * n,
            payload: (0..gpus)
                .map(|k| self.part.q_active(k, ell).len() * n)
                .collect(),
        };
        let p_payload: Vec<usize> = (0..gpus).map(|k| self.part.p_range(k).len() * n).collect();
        let down = [0, 1].map(|c| Gather {
            offset: c * gpus * p_share * n,
            count: p_share * n,
            payload: p_payload.clone(),
        });
        (up, down)
    }

    /// One key switching of `d` (NTT form over `Q_ell`, split by limb): `(u_0 + add_0, u_1 +
    /// add_1)`, permuted by `σ_g` for `galois = Some(g)`, split by limb: the words of the
    /// single-GPU `keyswitch_poly` (relinearisation's adds `c_0, c_1`; a rotation's `c_0` and
    /// its automorphism), bit for bit. [`GpuGroup::decompose`] for one use (the inner
    /// product then fuses the forward NTT's row phase), then [`GpuGroup::keyswitch_from`].
    pub(super) fn keyswitch(
        &self,
        ell: usize,
        d: &[DeviceBuffer],
        key: &PartitionedKey,
        adds: [Option<&[DeviceBuffer]>; 2],
        galois: Option<u64>,
    ) -> Result<[Vec<DeviceBuffer>; 2]> {
        let digits = self.check_decomposable(ell, d)?;
        self.check_key_digits(key, digits)?;
        let mut dec = self.decompose(ell, d, false)?;
        self.keyswitch_from(&mut dec, d, key, adds, galois)
    }

    /// The number of active digits at `ell` limbs, once `ell` and `d` (one buffer per GPU)
    /// are checked ([`Error::InvalidInput`]).
    pub(super) fn check_decomposable(&self, ell: usize, d: &[DeviceBuffer]) -> Result<usize> {
        let ring = self.ctx.ring();
        if ell == 0 || ell > ring.q_len() || d.len() != self.gpus() {
            return Err(Error::InvalidInput(format!(
                "partitioned key switching at {ell} limbs over {} buffers",
                d.len()
            )));
        }
        let digits = ring.active_digits(ell);
        if digits > fused::MAX_DIGITS {
            return Err(Error::InvalidInput(format!(
                "partitioned key switching: {digits} digits (at most {})",
                fused::MAX_DIGITS,
            )));
        }
        Ok(digits)
    }

    /// `key` split over this group's GPU count with at least `digits` digits on every GPU
    /// ([`Error::InvalidInput`] otherwise).
    pub(super) fn check_key_digits(&self, key: &PartitionedKey, digits: usize) -> Result<()> {
        if key.parts.len() != self.gpus() {
            return Err(Error::InvalidInput(
                "a key partitioned for another group".into(),
            ));
        }
        if key.parts.iter().any(|p| p.len() < digits) {
            return Err(Error::InvalidInput(format!(
                "partitioned key switching: {digits} digits, a key of {}",
                key.parts.first().map_or(0, Vec::len)
            )));
        }
        Ok(())
    }

    /// The ModUp of `d` (NTT form over `Q_ell`, split by limb; checked by
    /// [`GpuGroup::check_decomposable`]): the part of a key switching that does not depend on
    /// the key. Each GPU inverse-transforms its limbs, one NCCL all-gather (or, overlapped, one
    /// per digit) gives every GPU all of them, and each converts every digit to its own limbs.
    /// With `shared` (hoisting: several keys will read the result), each GPU also finishes its
    /// digits in NTT form — the digit's own limbs copied from `d`, the converted ones
    /// forward-transformed — so that the inner products only read them; otherwise the digits
    /// stay in coefficient form for one fused inner product that consumes them.
    ///
    /// Collectives, the same on every GPU in this order: the ModUp's one all-gather (or its
    /// per-digit stages); none for a group of one.
    pub(super) fn decompose(
        &self,
        ell: usize,
        d: &[DeviceBuffer],
        shared: bool,
    ) -> Result<Decomposed> {
        let ring = self.ctx.ring();
        let (n, lq) = (ring.n(), ring.q_len());
        let digits = ring.active_digits(ell);
        let gpus = self.gpus();
        let fold = self.folds_mod_up();
        // The exchange (module docs): without overlap, one all-gather of equal chunks,
        // rank-major, read back through a few strided copies; with the ModUp overlapped, its
        // all-gather moves digit by digit into the natural order.
        let pipelined = self.overlap && self.comm.is_some();
        let (share, up_copies) = plan::modup_gather(&self.part, ell);
        let (up, _) = self.gathers(ell, share, 0);
        let plans: Vec<KsPlan> = (0..self.gpus())
            .map(|k| KsPlan::new(&self.part, ring.digits(), lq, ell, k, fold))
            .collect();
        // 1. Each GPU's limbs inverse-transformed into its chunk of the gathered buffer
        //    (`[rank][share][N]`, one run, local tables), or (overlapped) into their places of a
        //    full-width buffer (one run per block of consecutive limbs); the fast kernels read
        //    the input in place, the small rings copy first. A group of one: the same layout.
        let mut coeff = Vec::with_capacity(gpus);
        for (k, g) in self.rings.iter().enumerate() {
            let ntt = &self.local[k].ntt;
            let nq = plans[k].nq();
            let (len, places) = if pipelined {
                (ell * n, self.part.q_runs(k, ell))
            } else if nq > 0 {
                (gpus * share * n, vec![(0..nq, k * share)])
            } else {
                (gpus * share * n, Vec::new())
            };
            let mut c = g.alloc(len)?;
            let runs: Vec<NttRun> = places
                .iter()
                .map(|(r, first)| NttRun {
                    buf: 0,
                    first_limb: *first,
                    limbs: r.len(),
                    table: r.start,
                })
                .collect();
            if ntt.has_fast_kernels() {
                // The ModUp's first step folded in (the single-GPU path's `mod_up_inverse`),
                // by the plan: every GPU's conversions read the gathered limbs as folded.
                let f = self.local[k].mod_up_inverse[ell - 1].as_ref();
                if f.is_some() != plans[k].folds_own {
                    return Err(Error::InvalidInput(format!(
                        "GPU {k}: ModUp first-step factors {} at {ell} limbs, the plan \
                         says {}",
                        if f.is_some() { "present" } else { "absent" },
                        plans[k].folds_own
                    )));
                }
                let sources: Vec<_> = places.iter().map(|(r, _)| Some((&d[k], r.start))).collect();
                for (rs, ss) in runs.chunks(MAX_RUNS).zip(sources.chunks(MAX_RUNS)) {
                    ntt.inverse_runs_from(&mut [&mut c], rs, ss, f)?;
                }
            } else {
                for (r, first) in &places {
                    DeviceBuffer::copy_region(&d[k], r.start * n, &mut c, first * n, r.len() * n)?;
                }
                transform(ntt, &mut [&mut c], &runs, NttDirection::Inverse)?;
            }
            coeff.push(c);
        }
        // 2. Every GPU gets every limb, and converts every digit to its own limbs: after the
        //    whole all-gather, or (overlapped) digit by digit as each digit's limbs arrive while
        //    the next digit's move (NCCL on a second stream).
        let mut convs = plans
            .iter()
            .zip(&self.rings)
            .map(|(p, g)| {
                let count = if p.width() > 0 { p.digits.len() } else { 0 };
                (0..count)
                    .map(|_| g.alloc(p.width() * n))
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        match &self.comm {
            Some(comm) if self.overlap => {
                let stages: Vec<Exchange> =
                    (0..digits).map(|dg| self.digit_ranges(ell, dg)).collect();
                let mut refs: Vec<&mut DeviceBuffer> = coeff.iter_mut().collect();
                comm.all_gather_v_pipelined(&mut refs, &stages, |dg, coeffs| -> Result<()> {
                    for (k, plan) in plans.iter().enumerate() {
                        self.convert_digits(k, ell, plan, coeffs[k], &mut convs[k], Some(dg))?;
                    }
                    Ok(())
                })?;
            }
            comm => {
                if let Some(comm) = comm {
                    let mut refs: Vec<&mut DeviceBuffer> = coeff.iter_mut().collect();
                    comm.all_gather(&mut refs, std::slice::from_ref(&up))?;
                    drop(refs);
                    // Back to the natural order `[ell][N]` the conversions read: every
                    // rank's chunk on every GPU.
                    let all: Vec<RowCopy> = up_copies.concat();
                    for (k, c) in coeff.iter_mut().enumerate() {
                        let mut natural = self.rings[k].alloc(ell * n)?;
                        copy_limbs(c, &mut natural, &all, n)?;
                        *c = natural;
                    }
                }
                for (k, plan) in plans.iter().enumerate() {
                    self.convert_digits(k, ell, plan, &coeff[k], &mut convs[k], None)?;
                }
            }
        }
        drop(coeff);
        // 3. (Shared) the digits finished in NTT form on each GPU (no communication).
        if shared {
            for (k, plan) in plans.iter().enumerate() {
                if !convs[k].is_empty() {
                    self.finish_digits(k, plan, &mut convs[k], &d[k])?;
                }
            }
        }
        Ok(Decomposed {
            ell,
            plans,
            convs,
            shared,
        })
    }

    /// The key-dependent part of a key switching of `d` from its ModUp `dec`
    /// ([`GpuGroup::decompose`] of the same `d`; `key` checked by
    /// [`GpuGroup::check_key_digits`]): each GPU's inner product with its part of `key`, the
    /// ModDown's exchange of the `P` limbs, and the ModDown to each GPU's own limbs with the
    /// addends and the automorphism `σ_g` for `galois = Some(g)` ([`GpuGroup::keyswitch`]).
    /// A shared `dec` is only read (any number of keys may follow); an unshared one is spent.
    ///
    /// Collectives, the same on every GPU in this order: one NCCL group of two all-gathers
    /// (the `P` limbs of both halves); none for a group of one.
    pub(super) fn keyswitch_from(
        &self,
        dec: &mut Decomposed,
        d: &[DeviceBuffer],
        key: &PartitionedKey,
        adds: [Option<&[DeviceBuffer]>; 2],
        galois: Option<u64>,
    ) -> Result<[Vec<DeviceBuffer>; 2]> {
        let ring = self.ctx.ring();
        let (n, pl) = (ring.n(), ring.p_len());
        let (ell, gpus) = (dec.ell, self.gpus());
        if dec.plans.len() != gpus || dec.convs.len() != gpus || d.len() != gpus {
            return Err(Error::InvalidInput("a ModUp of another group".into()));
        }
        self.check_key_digits(key, ring.active_digits(ell))?;
        if !dec.shared
            && dec
                .convs
                .iter()
                .zip(&dec.plans)
                .any(|(c, p)| p.width() > 0 && c.is_empty())
        {
            return Err(Error::InvalidInput(
                "a ModUp for one key switching, used twice".into(),
            ));
        }
        // The ModDown's exchange: one all-gather per half, read in place where the ranks'
        // `P` ranges start at `k · p_share`.
        let (p_share, p_copies) = plan::moddown_gather(&self.part);
        let p_rows = gpus * p_share;
        let (_, down) = self.gathers(ell, 0, p_share);
        // 3. The inner product with each GPU's part of the key (`[2][width][N]`), and the
        //    inverse NTT of its P limbs into `[2][|P|][N]`.
        let mut accs = Vec::with_capacity(gpus);
        let mut pcs = Vec::with_capacity(gpus);
        for (k, g) in self.rings.iter().enumerate() {
            let plan = &dec.plans[k];
            let (nq, np, width) = (plan.nq(), plan.np(), plan.width());
            let loc = &self.local[k];
            let mut acc = g.alloc(2 * width * n)?;
            if width > 0 {
                if dec.shared {
                    self.inner_product_ntt(k, plan, &dec.convs[k], key, &mut acc)?;
                } else {
                    // Spent here (the fused row phase consumes the conversions).
                    let mut conv = std::mem::take(&mut dec.convs[k]);
                    self.inner_product(k, plan, &mut conv, &d[k], key, &mut acc)?;
                }
            }
            // The P limbs of both halves, inverse-transformed, into the GPU's chunks of
            // `[2][rank][p_share][N]` (read in place by the fast kernels; copied first for the
            // small rings).
            let at = |c: usize| c * p_rows + k * p_share;
            let mut pc = g.alloc(2 * p_rows * n)?;
            if np > 0 {
                let runs: Vec<NttRun> = (0..2)
                    .map(|c| NttRun {
                        buf: 0,
                        first_limb: at(c),
                        limbs: np,
                        table: plan.q_full(),
                    })
                    .collect();
                if loc.ntt.has_fast_kernels() {
                    // The ModDown conversion's first step folded in, as on one GPU.
                    let sources = [Some((&acc, nq)), Some((&acc, width + nq))];
                    let f = loc.mod_down_inverse.as_ref();
                    loc.ntt
                        .inverse_runs_from(&mut [&mut pc], &runs, &sources, f)?;
                } else {
                    for c in 0..2 {
                        let (from, to) = ((c * width + nq) * n, at(c) * n);
                        DeviceBuffer::copy_region(&acc, from, &mut pc, to, np * n)?;
                    }
                    transform(&loc.ntt, &mut [&mut pc], &runs, NttDirection::Inverse)?;
                }
            }
            accs.push(acc);
            pcs.push(pc);
        }
        // 4. Every GPU gets every P limb: `[2][rank][p_share][N]`, which is `[2][·][N]` in `P`'s
        //    order where the ranges start at `k · p_share` (read in place, stride `p_rows`),
        //    else copied to `[2][|P|][N]`.
        if let Some(comm) = &self.comm {
            let mut refs: Vec<&mut DeviceBuffer> = pcs.iter_mut().collect();
            comm.all_gather(&mut refs, &down)?;
        }
        let p_stride = match &p_copies {
            None => p_rows * n,
            Some(copies) => {
                for (k, pc) in pcs.iter_mut().enumerate() {
                    let mut natural = self.rings[k].alloc(2 * pl * n)?;
                    copy_limbs(pc, &mut natural, copies, n)?;
                    *pc = natural;
                }
                pl * n
            }
        };
        // 5. ModDown to each GPU's own Q limbs (both halves in one conversion), the addends,
        //    the automorphism.
        let mut out: [Vec<DeviceBuffer>; 2] = Default::default();
        for ((k, g), plan) in self.rings.iter().enumerate().zip(&dec.plans) {
            let (nq, width) = (plan.nq(), plan.width());
            let mut res = [g.alloc(nq * n)?, g.alloc(nq * n)?];
            if nq > 0 {
                let mut y = g.alloc(2 * nq * n)?;
                let cols = &plan.moddown_columns;
                let conv = &g.mod_down[ell - 1];
                if self.local[k].mod_down_inverse.is_some() {
                    conv.convert_scaled_centered_columns(&mut y, &pcs[k], 0, p_stride, 2, n, cols)?;
                } else {
                    conv.convert_centered_columns(&mut y, &pcs[k], 0, p_stride, 2, n, cols)?;
                }
                let adds_k = [adds[0].map(|a| &a[k]), adds[1].map(|a| &a[k])];
                res = self.moddown_tail(k, nq, width, y, &accs[k], adds_k, galois)?;
            }
            let [y0, y1] = res;
            out[0].push(y0);
            out[1].push(y1);
        }
        Ok(out)
    }

    /// Whether the group folds the ModUp's first-step factors into the inverse NTT of each
    /// GPU's own limbs (the fast NTT kernels on every GPU; they depend on `N` only).
    fn folds_mod_up(&self) -> bool {
        self.local.iter().all(|l| l.ntt.has_fast_kernels())
    }

    /// The word ranges of digit `dg`'s limbs (at `ell` limbs) that each GPU holds: one stage of
    /// the overlapped ModUp all-gather.
    fn digit_ranges(&self, ell: usize, dg: usize) -> Vec<Vec<Range<usize>>> {
        let n = self.ctx.ring().n();
        let r = &self.ctx.ring().digits()[dg];
        let (s, e) = (r.start, r.end.min(ell));
        (0..self.gpus())
            .map(|k| {
                self.part
                    .q_runs(k, ell)
                    .into_iter()
                    .filter_map(|(loc, first)| {
                        let (a, b) = (first.max(s), (first + loc.len()).min(e));
                        (a < b).then(|| a * n..b * n)
                    })
                    .collect()
            })
            .collect()
    }

    /// GPU `k`'s ModUp conversions (`plan`): digit `only`, or every digit (five per launch),
    /// from the all-gathered coefficient-form `coeff` to the GPU's limbs outside the digit,
    /// into `conv[digit]` (`[width][N]` each; none for a GPU without limbs). The input holds
    /// the first step's products where the inverse NTT folded them in.
    fn convert_digits(
        &self,
        k: usize,
        ell: usize,
        plan: &KsPlan,
        coeff: &DeviceBuffer,
        conv: &mut [DeviceBuffer],
        only: Option<usize>,
    ) -> Result<()> {
        if conv.is_empty() {
            return Ok(());
        }
        let g = &self.rings[k];
        // The group's rule, not whether this GPU folded anything: a GPU without active limbs
        // converts limbs the others folded.
        let scaled = plan.input_scaled;
        let mut jobs: Vec<(usize, &mut DeviceBuffer)> = conv
            .iter_mut()
            .enumerate()
            .filter(|(dg, _)| only.map_or(true, |o| o == *dg))
            .collect();
        let n = self.ctx.ring().n();
        g.mod_up
            .convert_centered_subset_many(ell, coeff, &mut jobs, &plan.targets, n, scaled)?;
        Ok(())
    }

    /// GPU `k`'s inner product (`plan`, at least one local limb): every digit's conversion
    /// `conv[digit]` transformed and summed against the GPU's part of `key`, with the digit's
    /// own limbs taken from the GPU's part of the NTT-form input `d_k`, into `acc`
    /// (`[2][width][N]`). With the fast NTT and at most `ntt_keyswitch::MAX_DIGITS` digits, the
    /// single-GPU path's fusion on the GPU's own limbs and tables: the column phase of the
    /// forward NTT, then one kernel for its row phase and the inner product (no transformed
    /// limb written, the own limbs read from `d_k` in place; `conv` is spent). Otherwise the
    /// composition ([`GpuGroup::finish_digits`], then [`GpuGroup::inner_product_ntt`]).
    fn inner_product(
        &self,
        k: usize,
        plan: &KsPlan,
        conv: &mut [DeviceBuffer],
        d_k: &DeviceBuffer,
        key: &PartitionedKey,
        acc: &mut DeviceBuffer,
    ) -> Result<()> {
        let loc = &self.local[k];
        let (nq, np, q_full) = (plan.nq(), plan.np(), plan.q_full());
        let digits = plan.digits.len();
        let fuse =
            loc.ntt.has_fast_kernels() && digits <= ntt_keyswitch::MAX_DIGITS && nq > 0 && np > 0;
        if !fuse {
            self.finish_digits(k, plan, conv, d_k)?;
            return self.inner_product_ntt(k, plan, conv, key, acc);
        }
        let runs = digit_runs(plan);
        for chunk in runs.chunks(MAX_RUNS) {
            let mut bufs: Vec<&mut DeviceBuffer> = conv.iter_mut().collect();
            loc.ntt.forward_columns_runs(&mut bufs, chunk)?;
        }
        let kd: Vec<KsDigit<'_>> = conv
            .iter()
            .zip(&plan.digits)
            .zip(&key.parts[k])
            .map(|((c, dp), [b, a])| KsDigit {
                converted: c,
                own: dp.own.clone(),
                key_b: b,
                key_a: a,
            })
            .collect();
        Ok(loc
            .ntt
            .forward_rows_keyswitch(d_k, nq, q_full, &loc.moduli, &kd, acc)?)
    }

    /// GPU `k`'s digits (`plan`, at least one local limb) finished in NTT form, in place: each
    /// digit's own limbs copied from the NTT-form input `d_k` (same local index), its
    /// converted limbs forward-transformed (local tables). What the single GPU's ModUp returns
    /// (`RnsRing::mod_up`), on this GPU's limbs: read by any number of
    /// [`GpuGroup::inner_product_ntt`]s.
    fn finish_digits(
        &self,
        k: usize,
        plan: &KsPlan,
        conv: &mut [DeviceBuffer],
        d_k: &DeviceBuffer,
    ) -> Result<()> {
        let n = self.ctx.ring().n();
        for (dg, dp) in plan.digits.iter().enumerate() {
            let own = dp.own.start * n..dp.own.end * n;
            DeviceBuffer::copy_region(d_k, own.start, &mut conv[dg], own.start, own.len())?;
        }
        let runs = digit_runs(plan);
        let mut bufs: Vec<&mut DeviceBuffer> = conv.iter_mut().collect();
        transform(&self.local[k].ntt, &mut bufs, &runs, NttDirection::Forward)
    }

    /// GPU `k`'s inner product of its NTT-form digits `conv` ([`GpuGroup::finish_digits`],
    /// only read) with its part of `key`, into `acc` (`[2][width][N]`).
    fn inner_product_ntt(
        &self,
        k: usize,
        plan: &KsPlan,
        conv: &[DeviceBuffer],
        key: &PartitionedKey,
        acc: &mut DeviceBuffer,
    ) -> Result<()> {
        let loc = &self.local[k];
        let n = self.ctx.ring().n();
        let digits = plan.digits.len();
        let keys: Vec<(&DeviceBuffer, &DeviceBuffer)> =
            key.parts[k][..digits].iter().map(|[b, a]| (b, a)).collect();
        let refs: Vec<&DeviceBuffer> = conv.iter().collect();
        let none = [None, None];
        let (nq, q_full) = (plan.nq(), plan.q_full());
        fused::ks_inner_product_pair(&loc.moduli, nq, q_full, &refs, &keys, none, acc, n)?;
        Ok(())
    }

    /// The end of GPU `k`'s ModDown on its `nq` own (active) `Q` limbs: `y` (the conversions,
    /// coefficient form, `[2][nq][N]`) forward-transformed, then `[add_c +] (x_c − y_c)·P^{-1}`
    /// with `x_c` the inner product's `Q` limbs (`x` is `[2][width][N]`), permuted by `σ_g` for
    /// `galois = Some(g)`. With the fast NTT one launch per phase (the single-GPU ModDown's
    /// fused epilogue, the accumulator read for the last time); otherwise the composition
    /// (NTT, subtract-multiply, add, automorphism), the same words.
    #[allow(clippy::too_many_arguments)]
    fn moddown_tail(
        &self,
        k: usize,
        nq: usize,
        width: usize,
        mut y: DeviceBuffer,
        x: &DeviceBuffer,
        adds: [Option<&DeviceBuffer>; 2],
        galois: Option<u64>,
    ) -> Result<[DeviceBuffer; 2]> {
        let (g, loc) = (&self.rings[k], &self.local[k]);
        let n = self.ctx.ring().n();
        // Local tables: the GPU's active Q limbs are its first local tables.
        let runs: Vec<NttRun> = (0..2)
            .map(|c| NttRun {
                buf: 0,
                first_limb: c * nq,
                limbs: nq,
                table: 0,
            })
            .collect();
        if loc.ntt.has_fast_kernels() {
            let mut o = [g.alloc(nq * n)?, g.alloc(nq * n)?];
            let epi: Vec<EpilogueRun<'_>> = (0..2)
                .map(|c| EpilogueRun {
                    out: c,
                    out_limb: 0,
                    x,
                    x_limb: c * width,
                    c: adds[c].map(|a| (a, 0)),
                })
                .collect();
            let [o0, o1] = &mut o;
            // `w` by local table index: `P^{-1} mod q_i` pairs of the GPU's Q limbs.
            loc.ntt.forward_runs_epilogue_consuming_x(
                &mut [&mut y],
                &runs,
                &mut [o0, o1],
                &epi,
                &loc.p_inv_w,
                galois,
            )?;
            return Ok(o);
        }
        transform(&loc.ntt, &mut [&mut y], &runs, NttDirection::Forward)?;
        let lay = RnsLayout::new(n, nq, 1);
        let mut res = [g.alloc(nq * n)?, g.alloc(nq * n)?];
        for (c, r) in res.iter_mut().enumerate() {
            let mut xc = g.alloc(nq * n)?;
            DeviceBuffer::copy_region(x, c * width * n, &mut xc, 0, nq * n)?;
            DeviceBuffer::copy_region(&y, c * nq * n, r, 0, nq * n)?;
            fused::sub_mul_scalar_assign(r, &xc, &loc.p_inv_w, &loc.moduli, 0, nq, n)?;
            if let Some(add) = adds[c] {
                ew::add_assign(r, add, &lay, &loc.moduli)?;
            }
        }
        if let Some(gal) = galois {
            for r in res.iter_mut() {
                let mut o = g.alloc(nq * n)?;
                automorphism::apply_ntt(&mut o, r, gal, &lay)?;
                *r = o;
            }
        }
        Ok(res)
    }

    /// The two NCCL exchanges of one key switching at `level`, alone, `reps` times on scratch
    /// buffers: the mean milliseconds of one pair (the communication beside a latency-mode
    /// operation's time); 0 for a group of one GPU.
    ///
    /// Errors: device and NCCL errors.
    pub fn time_keyswitch_exchanges(&self, level: usize, reps: usize) -> Result<f64> {
        let ring = self.ctx.ring();
        let (n, ell) = (ring.n(), level + 1);
        let Some(comm) = self.comm.as_ref().filter(|_| reps > 0) else {
            return Ok(0.0);
        };
        let (share, _) = plan::modup_gather(&self.part, ell);
        let (p_share, _) = plan::moddown_gather(&self.part);
        let (up, down) = self.gathers(ell, share, p_share);
        let mut a = Vec::with_capacity(self.gpus());
        let mut b = Vec::with_capacity(self.gpus());
        for g in &self.rings {
            a.push(g.device().alloc_zeroed(self.gpus() * share * n)?);
            b.push(g.device().alloc_zeroed(2 * self.gpus() * p_share * n)?);
        }
        let exchange = |a: &mut [DeviceBuffer], b: &mut [DeviceBuffer]| -> Result<()> {
            let mut ra: Vec<&mut DeviceBuffer> = a.iter_mut().collect();
            comm.all_gather(&mut ra, std::slice::from_ref(&up))?;
            let mut rb: Vec<&mut DeviceBuffer> = b.iter_mut().collect();
            comm.all_gather(&mut rb, &down)?;
            Ok(())
        };
        // Once untimed (NCCL sets up its channels on first use).
        exchange(&mut a, &mut b)?;
        self.synchronize()?;
        let t = Instant::now();
        for _ in 0..reps {
            exchange(&mut a, &mut b)?;
        }
        self.synchronize()?;
        Ok(t.elapsed().as_secs_f64() * 1e3 / reps as f64)
    }
}
