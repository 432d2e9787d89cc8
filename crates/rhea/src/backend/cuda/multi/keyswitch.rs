//! The partitioned key switching and the element-wise work around it (the tensor product).

use std::ops::Range;
use std::time::Instant;

use rhea_cuda::elementwise as ew;
use rhea_cuda::ntt::{DeviceNttTables, EpilogueRun, NttDirection, NttRun, MAX_RUNS};
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
    /// `(a_0 b_0, a_0 b_1 + a_1 b_0, a_1 b_1)`, limb by limb on each GPU (no communication).
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
            let lay = RnsLayout::new(n, nq, 1);
            let mut d = [g.alloc(nq * n)?, g.alloc(nq * n)?, g.alloc(nq * n)?];
            if nq > 0 {
                let (a0, a1, b0, b1) = (
                    &a.parts[0][k],
                    &a.parts[1][k],
                    &b.parts[0][k],
                    &b.parts[1][k],
                );
                ew::mul(&mut d[0], a0, b0, &lay, m)?;
                ew::mul(&mut d[1], a0, b1, &lay, m)?;
                ew::mul_add_assign(&mut d[1], a1, b0, &lay, m)?;
                ew::mul(&mut d[2], a1, b1, &lay, m)?;
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
                let sources: Vec<_> = blocks.iter().map(|(r, _)| Some((&d[k], r.start))).collect();
                for (rs, ss) in runs.chunks(MAX_RUNS).zip(sources.chunks(MAX_RUNS)) {
                    ntt.inverse_runs_from(&mut [&mut c], rs, ss, None)?;
                }
            } else {
                for (r, first) in &blocks {
                    DeviceBuffer::copy_region(&d[k], r.start * n, &mut c, first * n, r.len() * n)?;
                }
                transform(ntt, &mut [&mut c], &runs, NttDirection::Inverse)?;
            }
            coeff.push(c);
        }
        // 2. Every GPU gets every limb.
        self.all_gather(&mut coeff, |k| up[k].clone())?;
        // 3. ModUp to each GPU's own limbs, the inner product with its part of the key, and the
        //    inverse NTT of its P limbs.
        let mut accs = Vec::with_capacity(self.gpus());
        let mut pcs = Vec::with_capacity(self.gpus());
        for (k, g) in self.rings.iter().enumerate() {
            let plan = KsPlan::new(&self.part, ring.digits(), lq, ell, k);
            let (nq, np, width) = (plan.nq(), plan.np(), plan.width());
            let (pr, ntt) = (plan.pr.clone(), &self.local[k].ntt);
            let mut acc = [g.alloc(width * n)?, g.alloc(width * n)?];
            if width > 0 {
                let mut conv = Vec::with_capacity(digits);
                let mut runs = Vec::new();
                for (dg, dp) in plan.digits.iter().enumerate() {
                    let mut o = g.alloc(width * n)?;
                    g.mod_up.convert_centered_subset(
                        dg,
                        ell,
                        &coeff[k],
                        &mut o,
                        &plan.targets,
                        n,
                    )?;
                    let own = dp.own.start * n..dp.own.end * n;
                    DeviceBuffer::copy_region(&d[k], own.start, &mut o, own.start, own.len())?;
                    runs.extend(dp.runs.iter().map(|(r, table)| NttRun {
                        buf: dg,
                        first_limb: r.start,
                        limbs: r.len(),
                        table: *table,
                    }));
                    conv.push(o);
                }
                {
                    let mut bufs: Vec<&mut DeviceBuffer> = conv.iter_mut().collect();
                    transform(ntt, &mut bufs, &runs, NttDirection::Forward)?;
                }
                let refs: Vec<&DeviceBuffer> = conv.iter().collect();
                let keys: Vec<(&DeviceBuffer, &DeviceBuffer)> =
                    key.parts[k].iter().map(|[b, a]| (b, a)).collect();
                let [a0, a1] = &mut acc;
                let (m, q_full) = (&self.local[k].moduli, plan.q_full());
                fused::ks_inner_product(m, nq, q_full, &refs, &keys, a0, a1, n)?;
            }
            // The P limbs of both halves, inverse-transformed, into `[2][|P|][N]`.
            let mut pc = g.alloc(2 * pl * n)?;
            let runs: Vec<NttRun> = (0..2)
                .filter(|_| np > 0)
                .map(|c| NttRun {
                    buf: c,
                    first_limb: nq,
                    limbs: np,
                    table: plan.q_full(),
                })
                .collect();
            {
                let [a0, a1] = &mut acc;
                transform(ntt, &mut [a0, a1], &runs, NttDirection::Inverse)?;
            }
            for (c, a) in acc.iter().enumerate() {
                DeviceBuffer::copy_region(a, nq * n, &mut pc, (c * pl + pr.start) * n, np * n)?;
            }
            accs.push(acc);
            pcs.push(pc);
        }
        drop(coeff);
        // 4. Every GPU gets every P limb.
        self.all_gather(&mut pcs, |k| down[k].clone())?;
        // 5. ModDown to each GPU's own Q limbs, the addends, the automorphism.
        let mut out: [Vec<DeviceBuffer>; 2] = Default::default();
        for (k, g) in self.rings.iter().enumerate() {
            let plan = KsPlan::new(&self.part, ring.digits(), lq, ell, k);
            let nq = plan.nq();
            let mut y = [g.alloc(nq * n)?, g.alloc(nq * n)?];
            if nq > 0 {
                let cols = &plan.moddown_columns;
                let conv = &g.mod_down[ell - 1];
                for (c, yc) in y.iter_mut().enumerate() {
                    conv.convert_centered_columns(yc, &pcs[k], c * pl * n, pl * n, 1, n, cols)?;
                }
                let adds_k = [adds[0].map(|a| &a[k]), adds[1].map(|a| &a[k])];
                y = self.moddown_tail(k, nq, y, &accs[k], adds_k, galois)?;
            }
            let [y0, y1] = y;
            out[0].push(y0);
            out[1].push(y1);
        }
        Ok(out)
    }

    /// The end of GPU `k`'s ModDown on its `nq` own (active) `Q` limbs: `y` (the
    /// conversions, coefficient form, one buffer per half) forward-transformed, then
    /// `[add_c +] (x_c − y_c)·P^{-1}` with `x_c` the inner product's `Q` limbs, permuted by
    /// `σ_g` for `galois = Some(g)`. With the fast NTT one launch per phase (the single-GPU
    /// ModDown's fused epilogue); otherwise the composition (NTT, subtract-multiply, add,
    /// automorphism), the same words.
    #[allow(clippy::too_many_arguments)]
    fn moddown_tail(
        &self,
        k: usize,
        nq: usize,
        mut y: [DeviceBuffer; 2],
        x: &[DeviceBuffer; 2],
        adds: [Option<&DeviceBuffer>; 2],
        galois: Option<u64>,
    ) -> Result<[DeviceBuffer; 2]> {
        let (g, loc) = (&self.rings[k], &self.local[k]);
        let n = self.ctx.ring().n();
        // Local tables: the GPU's active Q limbs are its first local tables.
        let runs: Vec<NttRun> = (0..2)
            .map(|c| NttRun {
                buf: c,
                first_limb: 0,
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
                    x: &x[c],
                    x_limb: 0,
                    c: adds[c].map(|a| (a, 0)),
                })
                .collect();
            let ([y0, y1], [o0, o1]) = (&mut y, &mut o);
            // `w` by local table index: `P^{-1} mod q_i` pairs of the GPU's Q limbs.
            loc.ntt.forward_runs_epilogue_automorphism(
                &mut [y0, y1],
                &runs,
                &mut [o0, o1],
                &epi,
                &loc.p_inv_w,
                galois,
            )?;
            return Ok(o);
        }
        {
            let [y0, y1] = &mut y;
            transform(&loc.ntt, &mut [y0, y1], &runs, NttDirection::Forward)?;
        }
        let lay = RnsLayout::new(n, nq, 1);
        for (c, yc) in y.iter_mut().enumerate() {
            fused::sub_mul_scalar_assign(yc, &x[c], &loc.p_inv_w, &loc.moduli, 0, nq, n)?;
            if let Some(add) = adds[c] {
                ew::add_assign(yc, add, &lay, &loc.moduli)?;
            }
        }
        if let Some(gal) = galois {
            for yc in y.iter_mut() {
                let mut o = g.alloc(nq * n)?;
                automorphism::apply_ntt(&mut o, yc, gal, &lay)?;
                *yc = o;
            }
        }
        Ok(y)
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
