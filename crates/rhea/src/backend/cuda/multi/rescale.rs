//! Rescaling over a group: `round(x / q_{ℓ-1})` of a partitioned NTT-form ciphertext, the
//! single-GPU `GpuRing::rescale_ntt_many` split by limb.
//!
//! 1. The GPU that owns limb `ℓ − 1` (its last active local limb) inverse-transforms that limb
//!    of every component into `t` (`[component][N]`, its local table of the limb; read in place
//!    by the fast kernels, copied first for the small rings).
//! 2. `t` goes to every other GPU: `NcclGroup::all_gather_v` with the owner's one range and
//!    none from the others, which is one NCCL group of in-place `ncclBroadcast`s rooted at the
//!    owner (no new collective: the byte counters count `components · N · 8` per other GPU).
//! 3. Each GPU, on its own limbs `i < ℓ − 1` only (a prefix of its local limbs, so local tables
//!    and moduli `0..kept`): the centred lift of `t` to `q_i`, the forward NTT, then
//!    `(x_i − NTT_i(lift)) · q_{ℓ-1}^{-1} mod q_i` (the pairs precomputed per level and GPU,
//!    `LocalTables::rescale_w`). With the fast NTT one launch per phase
//!    (`forward_runs_lifted_epilogue`, the single-GPU fusion); otherwise lift, NTT and
//!    subtract-multiply as separate launches (`rescale_ntt_composed`'s steps).
//!
//! The same exact residue arithmetic as one GPU on a subset of the limbs, so the same words.

use rhea_cuda::fused;
use rhea_cuda::ntt::{EpilogueRun, LiftRun, NttDirection, NttRun, MAX_RUNS};
use rhea_cuda::DeviceBuffer;

use super::{GpuGroup, PartitionedCiphertext, PartitionedKey};
use crate::error::{Error, Result};

impl GpuGroup {
    /// The rescale by the last prime `q_{ℓ-1}` (`round(x / q_{ℓ-1})`, one level down): the
    /// words of [`crate::ckks::Evaluator::rescale`] on one device, with the scale divided by
    /// `q_{ℓ-1}` as it does. The last limb's GPU inverse-transforms it and broadcasts it (one
    /// NCCL broadcast of `components · N` words); every GPU then rescales its own limbs. Any
    /// number of components (a 3-component product too).
    ///
    /// Errors: [`Error::LevelUnderflow`] at level 0; [`Error::ParametersMismatch`] for another
    /// parameter set; [`Error::GroupMismatch`] for a ciphertext another group split (another
    /// partition rule or other GPUs); [`Error::InvalidInput`] for one whose buffers do not
    /// hold this group's limbs; device and NCCL errors.
    pub fn rescale(&self, ct: &PartitionedCiphertext) -> Result<PartitionedCiphertext> {
        self.guarded(|| self.rescale_queued(ct))
    }

    /// [`GpuGroup::rescale`] without the final wait.
    fn rescale_queued(&self, ct: &PartitionedCiphertext) -> Result<PartitionedCiphertext> {
        self.check_rescalable("rescale", ct)?;
        let q_last = self.ctx.params().q_primes()[ct.level()] as f64;
        let mut parts = Vec::with_capacity(ct.parts.len());
        for chunk in ct.parts.chunks(MAX_RUNS) {
            parts.extend(self.rescale_parts(ct.ell, chunk)?);
        }
        Ok(PartitionedCiphertext {
            parts,
            ell: ct.ell - 1,
            scale: ct.scale / q_last,
            slots: ct.slots,
            params_id: ct.params_id,
            split: self.split.clone(),
        })
    }

    /// `a · b` relinearised and rescaled: [`GpuGroup::mul_relin`] then [`GpuGroup::rescale`],
    /// the words of [`crate::ckks::Evaluator::mul_relin_rescale`] on one device (scale
    /// `a.scale · b.scale / q_{ℓ-1}`).
    ///
    /// Errors: [`Error::LevelUnderflow`] at level 0 (before any work); as
    /// [`GpuGroup::mul_relin`].
    pub fn mul_relin_rescale(
        &self,
        a: &PartitionedCiphertext,
        b: &PartitionedCiphertext,
        rlk: &PartitionedKey,
    ) -> Result<PartitionedCiphertext> {
        const OP: &str = "mul_relin_rescale";
        self.check(OP, a, 2)?;
        self.check(OP, b, 2)?;
        let level = a.level().min(b.level());
        if level < 1 {
            return Err(Error::LevelUnderflow {
                op: OP,
                level,
                needed: 1,
            });
        }
        self.guarded(|| {
            let prod = self.mul_relin_queued(a, b, rlk)?;
            self.rescale_queued(&prod)
        })
    }

    /// The parameters, the split (the group's split, every component on every GPU with the
    /// limbs the partition gives it at the ciphertext's level) and the level (at least 1) of a
    /// rescale's input.
    fn check_rescalable(&self, op: &'static str, ct: &PartitionedCiphertext) -> Result<()> {
        self.ctx.rlwe().check_id(op, ct.params_id)?;
        let n = self.ctx.ring().n();
        super::check_operand(op, &self.split, &self.part, n, ct, None)?;
        if ct.ell < 2 {
            return Err(Error::LevelUnderflow {
                op,
                level: ct.level(),
                needed: 1,
            });
        }
        Ok(())
    }

    /// The rescale of `comps` (`comps[c][k]`: GPU `k`'s limbs of component `c`, at `ell ≥ 2`
    /// limbs, at most [`MAX_RUNS`] components), as `[c][k]` at `ell − 1` limbs (module docs).
    fn rescale_parts(
        &self,
        ell: usize,
        comps: &[Vec<DeviceBuffer>],
    ) -> Result<Vec<Vec<DeviceBuffer>>> {
        let ring = self.ctx.ring();
        let n = ring.n();
        let m = comps.len();
        let last = ell - 1;
        // The owner of limb `ℓ − 1` and its local index there: its last active limb.
        let (owner, j) = self
            .part
            .owner_of_q(last)
            .filter(|&(k, j)| j + 1 == self.part.q_active(k, ell).len())
            .ok_or_else(|| {
                Error::InvalidInput(format!("rescale: no GPU holds limb {last} as its last"))
            })?;
        // 1. The owner's inverse NTT of limb `j` of every component into `t` (`[m][N]`).
        let mut ts = Vec::with_capacity(self.gpus());
        for (k, g) in self.rings.iter().enumerate() {
            let mut t = g.alloc(m * n)?;
            if k == owner {
                let ntt = &self.local[k].ntt;
                let runs: Vec<NttRun> = (0..m)
                    .map(|c| NttRun {
                        buf: 0,
                        first_limb: c,
                        limbs: 1,
                        table: j,
                    })
                    .collect();
                if ntt.has_fast_kernels() {
                    let sources: Vec<_> = comps.iter().map(|p| Some((&p[k], j))).collect();
                    ntt.inverse_runs_from(&mut [&mut t], &runs, &sources, None)?;
                } else {
                    for (c, p) in comps.iter().enumerate() {
                        DeviceBuffer::copy_region(&p[k], j * n, &mut t, c * n, n)?;
                    }
                    ntt.transform_runs(&mut [&mut t], &runs, NttDirection::Inverse)?;
                }
            }
            ts.push(t);
        }
        // 2. To every GPU: one broadcast rooted at the owner (the others contribute nothing).
        if let Some(comm) = &self.comm {
            // The whole of the owner's `t` (one word range), nothing from the others.
            let whole: std::ops::Range<usize> = 0..m * n;
            let ranges: Vec<Vec<std::ops::Range<usize>>> = (0..self.gpus())
                .map(|k| Vec::from_iter((k == owner).then(|| whole.clone())))
                .collect();
            let mut refs: Vec<&mut DeviceBuffer> = ts.iter_mut().collect();
            comm.all_gather_v(&mut refs, &ranges)?;
        }
        // 3. Each GPU's kept limbs (the limbs below `ℓ − 1`: its first `kept` local limbs).
        let q_last = ring.q().moduli()[last];
        let mut out: Vec<Vec<DeviceBuffer>> = (0..m).map(|_| Vec::new()).collect();
        for (k, g) in self.rings.iter().enumerate() {
            let kept = self.part.q_active(k, last).len();
            let mut res = (0..m)
                .map(|_| g.alloc(kept * n))
                .collect::<Result<Vec<_>>>()?;
            if kept > 0 {
                let loc = &self.local[k];
                let w = loc.rescale_w[ell - 2].as_ref().ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "rescale: GPU {k} keeps {kept} limb(s) at {ell} limbs but has no factors"
                    ))
                })?;
                let runs: Vec<NttRun> = (0..m)
                    .map(|c| NttRun {
                        buf: c,
                        first_limb: 0,
                        limbs: kept,
                        table: 0,
                    })
                    .collect();
                if loc.ntt.has_fast_kernels() {
                    // Lift, NTT and `(x − ·) · q_{ℓ-1}^{-1}` in one launch per phase, the
                    // local moduli (entry `t` is local table `t`'s prime).
                    let lift: Vec<LiftRun<'_>> = (0..m)
                        .map(|c| LiftRun {
                            src: &ts[k],
                            limb: c,
                        })
                        .collect();
                    let mut scratch = (0..m)
                        .map(|_| g.alloc(kept * n))
                        .collect::<Result<Vec<_>>>()?;
                    let epi: Vec<EpilogueRun<'_>> = comps
                        .iter()
                        .enumerate()
                        .map(|(c, p)| EpilogueRun {
                            out: c,
                            out_limb: 0,
                            x: &p[k],
                            x_limb: 0,
                            c: None,
                        })
                        .collect();
                    let mut srcs: Vec<&mut DeviceBuffer> = scratch.iter_mut().collect();
                    let mut dsts: Vec<&mut DeviceBuffer> = res.iter_mut().collect();
                    loc.ntt.forward_runs_lifted_epilogue(
                        &lift,
                        q_last,
                        &loc.moduli,
                        &mut srcs,
                        &runs,
                        &mut dsts,
                        &epi,
                        w,
                    )?;
                } else {
                    let mut tc = g.alloc(n)?;
                    for (c, r) in res.iter_mut().enumerate() {
                        DeviceBuffer::copy_region(&ts[k], c * n, &mut tc, 0, n)?;
                        fused::rescale_lift(r, &tc, q_last.value(), &loc.moduli, kept, n)?;
                    }
                    {
                        let mut bufs: Vec<&mut DeviceBuffer> = res.iter_mut().collect();
                        loc.ntt
                            .transform_runs(&mut bufs, &runs, NttDirection::Forward)?;
                    }
                    for (r, p) in res.iter_mut().zip(comps) {
                        fused::sub_mul_scalar_assign(r, &p[k], w, &loc.moduli, 0, kept, n)?;
                    }
                }
            }
            for (o, r) in out.iter_mut().zip(res) {
                o.push(r);
            }
        }
        Ok(out)
    }
}
