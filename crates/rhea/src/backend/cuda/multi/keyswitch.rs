//! The partitioned key switching and the element-wise work around it (the tensor product).

use std::ops::Range;
use std::time::Instant;

use rhea_cuda::elementwise as ew;
use rhea_cuda::ntt::{DeviceNttTables, EpilogueRun, NttDirection, NttRun, MAX_RUNS};
use rhea_cuda::ntt_keyswitch::{self, KsDigit};
use rhea_cuda::{automorphism, fused, DeviceBuffer, RnsLayout};

use super::plan::KsPlan;
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

    /// The all-gather of `ranges(k)` (word ranges of rank `k`'s own data) over `bufs`; nothing
    /// in a group of one GPU.
    fn all_gather(
        &self,
        bufs: &mut [DeviceBuffer],
        ranges: impl Fn(usize) -> Vec<Range<usize>>,
    ) -> Result<()> {
        let Some(comm) = &self.comm else {
            return Ok(());
        };
        let ranges: Vec<_> = (0..self.gpus()).map(ranges).collect();
        let mut refs: Vec<&mut DeviceBuffer> = bufs.iter_mut().collect();
        Ok(comm.all_gather_v(&mut refs, &ranges)?)
    }

    /// The word ranges of the ModUp's all-gather (each GPU's limbs of the level-`ell` input)
    /// and of the ModDown's (each GPU's `P` limbs of both halves, `[2][|P|][N]`).
    fn exchange_ranges(&self, ell: usize) -> (Exchange, Exchange) {
        let ring = self.ctx.ring();
        let (n, pl) = (ring.n(), ring.p_len());
        let up = (0..self.gpus())
            .map(|k| {
                self.part
                    .q_runs(k, ell)
                    .into_iter()
                    .map(|(r, first)| first * n..(first + r.len()) * n)
                    .collect()
            })
            .collect();
        let down = (0..self.gpus())
            .map(|k| {
                let r = self.part.p_range(k);
                (0..2)
                    .map(|c| (c * pl + r.start) * n..(c * pl + r.end) * n)
                    .collect()
            })
            .collect();
        (up, down)
    }

    /// One key switching of `d` (NTT form over `Q_ell`, split by limb): `(u_0 + add_0, u_1 +
    /// add_1)`, permuted by `σ_g` for `galois = Some(g)`, split by limb: the words of the
    /// single-GPU `keyswitch_poly` (relinearisation's adds `c_0, c_1`; a rotation's `c_0` and
    /// its automorphism), bit for bit.
    pub(super) fn keyswitch(
        &self,
        ell: usize,
        d: &[DeviceBuffer],
        key: &PartitionedKey,
        adds: [Option<&[DeviceBuffer]>; 2],
        galois: Option<u64>,
    ) -> Result<[Vec<DeviceBuffer>; 2]> {
        let ring = self.ctx.ring();
        let (n, lq, pl) = (ring.n(), ring.q_len(), ring.p_len());
        let digits = ring.active_digits(ell);
        if ell == 0 || ell > lq || d.len() != self.gpus() {
            return Err(Error::InvalidInput(format!(
                "partitioned key switching at {ell} limbs over {} buffers",
                d.len()
            )));
        }
        if digits > fused::MAX_DIGITS || key.parts.iter().any(|p| p.len() < digits) {
            return Err(Error::InvalidInput(format!(
                "partitioned key switching: {digits} digits (at most {}), a key of {}",
                fused::MAX_DIGITS,
                key.parts.first().map_or(0, Vec::len)
            )));
        }
        if key.parts.len() != self.gpus() {
            return Err(Error::InvalidInput(
                "a key partitioned for another group".into(),
            ));
        }
        let (up, down) = self.exchange_ranges(ell);
        let fold = self.folds_mod_up();
        let plans: Vec<KsPlan> = (0..self.gpus())
            .map(|k| KsPlan::new(&self.part, ring.digits(), lq, ell, k, fold))
            .collect();
        // 1. Each GPU's limbs inverse-transformed into their places in a full-width buffer
        //    (one run per block of consecutive limbs, local tables; the fast kernels read the
        //    input in place, the small rings copy first).
        let mut coeff = Vec::with_capacity(self.gpus());
        for (k, g) in self.rings.iter().enumerate() {
            let ntt = &self.local[k].ntt;
            let mut c = g.alloc(ell * n)?;
            let blocks = self.part.q_runs(k, ell);
            let runs: Vec<NttRun> = blocks
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
                let sources: Vec<_> = blocks.iter().map(|(r, _)| Some((&d[k], r.start))).collect();
                for (rs, ss) in runs.chunks(MAX_RUNS).zip(sources.chunks(MAX_RUNS)) {
                    ntt.inverse_runs_from(&mut [&mut c], rs, ss, f)?;
                }
            } else {
                for (r, first) in &blocks {
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
            _ => {
                self.all_gather(&mut coeff, |k| up[k].clone())?;
                for (k, plan) in plans.iter().enumerate() {
                    self.convert_digits(k, ell, plan, &coeff[k], &mut convs[k], None)?;
                }
            }
        }
        drop(coeff);
        // 3. The inner product with each GPU's part of the key (`[2][width][N]`), and the
        //    inverse NTT of its P limbs into `[2][|P|][N]`.
        let mut accs = Vec::with_capacity(self.gpus());
        let mut pcs = Vec::with_capacity(self.gpus());
        for ((k, g), (plan, mut conv)) in self.rings.iter().enumerate().zip(plans.iter().zip(convs))
        {
            let (nq, np, width) = (plan.nq(), plan.np(), plan.width());
            let (pr, loc) = (plan.pr.clone(), &self.local[k]);
            let mut acc = g.alloc(2 * width * n)?;
            if width > 0 {
                self.inner_product(k, plan, &mut conv, &d[k], key, &mut acc)?;
            }
            drop(conv);
            // The P limbs of both halves, inverse-transformed, into `[2][|P|][N]` (read in
            // place by the fast kernels; copied first for the small rings).
            let mut pc = g.alloc(2 * pl * n)?;
            if np > 0 {
                let runs: Vec<NttRun> = (0..2)
                    .map(|c| NttRun {
                        buf: 0,
                        first_limb: c * pl + pr.start,
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
                        let (from, to) = ((c * width + nq) * n, (c * pl + pr.start) * n);
                        DeviceBuffer::copy_region(&acc, from, &mut pc, to, np * n)?;
                    }
                    transform(&loc.ntt, &mut [&mut pc], &runs, NttDirection::Inverse)?;
                }
            }
            accs.push(acc);
            pcs.push(pc);
        }
        // 4. Every GPU gets every P limb.
        self.all_gather(&mut pcs, |k| down[k].clone())?;
        // 5. ModDown to each GPU's own Q limbs (both halves in one conversion), the addends,
        //    the automorphism.
        let mut out: [Vec<DeviceBuffer>; 2] = Default::default();
        for ((k, g), plan) in self.rings.iter().enumerate().zip(&plans) {
            let (nq, width) = (plan.nq(), plan.width());
            let mut res = [g.alloc(nq * n)?, g.alloc(nq * n)?];
            if nq > 0 {
                let mut y = g.alloc(2 * nq * n)?;
                let cols = &plan.moddown_columns;
                let conv = &g.mod_down[ell - 1];
                if self.local[k].mod_down_inverse.is_some() {
                    conv.convert_scaled_centered_columns(&mut y, &pcs[k], 0, pl * n, 2, n, cols)?;
                } else {
                    conv.convert_centered_columns(&mut y, &pcs[k], 0, pl * n, 2, n, cols)?;
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
    /// limb written, the own limbs read from `d_k` in place). Otherwise the composition (own
    /// limbs copied, full NTT, inner product).
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
        let n = self.ctx.ring().n();
        let (nq, np, q_full) = (plan.nq(), plan.np(), plan.q_full());
        let digits = plan.digits.len();
        let fuse =
            loc.ntt.has_fast_kernels() && digits <= ntt_keyswitch::MAX_DIGITS && nq > 0 && np > 0;
        let mut runs = Vec::new();
        for (dg, dp) in plan.digits.iter().enumerate() {
            if !fuse {
                let own = dp.own.start * n..dp.own.end * n;
                DeviceBuffer::copy_region(d_k, own.start, &mut conv[dg], own.start, own.len())?;
            }
            runs.extend(dp.runs.iter().map(|(r, table)| NttRun {
                buf: dg,
                first_limb: r.start,
                limbs: r.len(),
                table: *table,
            }));
        }
        let keys: Vec<(&DeviceBuffer, &DeviceBuffer)> =
            key.parts[k].iter().map(|[b, a]| (b, a)).collect();
        if fuse {
            for chunk in runs.chunks(MAX_RUNS) {
                let mut bufs: Vec<&mut DeviceBuffer> = conv.iter_mut().collect();
                loc.ntt.forward_columns_runs(&mut bufs, chunk)?;
            }
            let kd: Vec<KsDigit<'_>> = conv
                .iter()
                .zip(&plan.digits)
                .zip(&keys)
                .map(|((c, dp), (b, a))| KsDigit {
                    converted: c,
                    own: dp.own.clone(),
                    key_b: b,
                    key_a: a,
                })
                .collect();
            return Ok(loc
                .ntt
                .forward_rows_keyswitch(d_k, nq, q_full, &loc.moduli, &kd, acc)?);
        }
        {
            let mut bufs: Vec<&mut DeviceBuffer> = conv.iter_mut().collect();
            transform(&loc.ntt, &mut bufs, &runs, NttDirection::Forward)?;
        }
        let refs: Vec<&DeviceBuffer> = conv.iter().collect();
        let none = [None, None];
        let keys = &keys[..digits];
        fused::ks_inner_product_pair(&loc.moduli, nq, q_full, &refs, keys, none, acc, n)?;
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
        let (n, pl, ell) = (ring.n(), ring.p_len(), level + 1);
        if self.comm.is_none() || reps == 0 {
            return Ok(0.0);
        }
        let (up, down) = self.exchange_ranges(ell);
        let mut a = Vec::with_capacity(self.gpus());
        let mut b = Vec::with_capacity(self.gpus());
        for g in &self.rings {
            a.push(g.device().alloc_zeroed(ell * n)?);
            b.push(g.device().alloc_zeroed(2 * pl * n)?);
        }
        // Once untimed (NCCL sets up its channels on first use).
        self.all_gather(&mut a, |k| up[k].clone())?;
        self.all_gather(&mut b, |k| down[k].clone())?;
        self.synchronize()?;
        let t = Instant::now();
        for _ in 0..reps {
            self.all_gather(&mut a, |k| up[k].clone())?;
            self.all_gather(&mut b, |k| down[k].clone())?;
        }
        self.synchronize()?;
        Ok(t.elapsed().as_secs_f64() * 1e3 / reps as f64)
    }
}
