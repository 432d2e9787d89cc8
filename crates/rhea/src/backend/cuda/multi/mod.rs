//! Latency mode over several GPUs (issue 37): one key switching split across a group of GPUs
//! by limb, the key-switching keys partitioned the same way, the exchanges through NCCL.
//!
//! Every polynomial of a [`GpuGroup`] is split by one [`LimbPartition`]: GPU `k` holds its `Q`
//! limbs (by default limb `i` on GPU `i mod K`, balanced at every level; [`PartitionKind`]) of
//! whatever level the polynomial has, contiguously in increasing order, and, for the
//! key-switching keys (over the full `Q ∪ P`), its range of the `P` limbs too. Each GPU keeps
//! NTT tables and moduli of its own primes in that order. A key switching of `d` (NTT form,
//! level `ℓ`) then runs as (`keyswitch.rs`):
//!
//! 1. each GPU inverse-transforms its own limbs of `d` into its chunk of an exchange buffer
//!    (`[rank][share][N]`, `share` the largest GPU's count of active limbs);
//! 2. one NCCL all-gather of equal chunks gives every GPU all `ℓ` coefficient-form limbs, which
//!    a few strided copies put back in natural order (one per GPU and block length);
//! 3. each GPU converts every digit to its own target limbs only (its `Q` limbs outside the
//!    digit and its `P` limbs: the same conversion columns as one GPU computes, hence the same
//!    words), transforms them and forms the inner product with its part of the key, the
//!    digit's own limbs read from its part of `d` (the single-GPU path's fused kernels);
//! 4. each GPU inverse-transforms its `P` limbs of both halves into its chunks; one NCCL group of
//!    two all-gathers (one per half) gives every GPU all `P` limbs, in `P`'s order where the
//!    GPUs' ranges start at multiples of the largest (two GPUs, equal shares: read in place),
//!    copied there otherwise; each converts `P` to its own `Q` limbs, transforms, and finishes
//!    `(x − y) · P^{-1}` (plus the addends, then the rotation's permutation) on its own limbs.
//!
//! Every step is the single-GPU path's exact residue arithmetic on a subset of the limbs, so the
//! results are bit-identical to one GPU and to the CPU. Per GPU and key switching, the bytes
//! received are `(ℓ − ℓ_k) · N · 8` (ModUp) plus `2 · (|P| − |P_k|) · N · 8` (ModDown)
//! ([`LimbPartition::keyswitch_traffic`]; where the shares differ the all-gathers also move
//! the padding of the shorter chunks, which the counters leave out). A group of one GPU needs
//! no NCCL. With [`GpuGroup::set_overlap`], the ModUp's exchange is the digit-by-digit
//! broadcasts of `NcclGroup::all_gather_v_pipelined` into natural order instead.
//!
//! Hoisted rotations ([`GpuGroup::rotate_many`]) split the key switching there: steps 1–2 (and
//! each GPU's forward NTT of its converted limbs, its digits' own limbs copied in) once for all
//! the rotations, then per Galois element the inner product with its key (the unfused kernel:
//! the shared digits are only read) and step 4 with that element's permutation — one ModUp
//! exchange and one ModDown exchange per element instead of one of each per rotation, the
//! words of the single-GPU rotations (whose keys also switch before the permutation, so one
//! ModUp of `c_1` serves every element).
//!
//! A rescale ([`GpuGroup::rescale`], [`GpuGroup::mul_relin_rescale`]; `rescale.rs`) moves one
//! limb per component: the GPU owning limb `ℓ − 1` inverse-transforms it, broadcasts it (one
//! NCCL broadcast rooted there, `components · N · 8` bytes to each other GPU), and every GPU
//! lifts it to its own limbs below `ℓ − 1` and finishes `(x_i − NTT_i(lift)) · q_{ℓ-1}^{-1}`
//! there with its local tables (the single-GPU fused launch), the words of
//! `Evaluator::rescale`.
//!
//! The element-wise operations (`arith.rs`: additions, negation, integer and constant products,
//! constants, plaintext operands split like a ciphertext's component, dropped levels) need no
//! exchange: each GPU works on its own limbs with its own moduli.
//!
//! **A GPU that fails mid-operation** gives a typed error, not a hang: an operation that
//! issues collectives returns while its work runs, but first waits, with a deadline, for the
//! previous operation's (`NcclGroup::pace`: at most two operations in flight), and `gather`,
//! `synchronize` and the drop wait for all of it (`NcclGroup::wait`): events on the GPUs'
//! streams and the communicators' asynchronous errors polled, never an unbounded
//! synchronization ([`GpuGroup::set_collective_timeout`], 60 s by default). A failure surfaces
//! at the operation during which it happened or at the next one (or the next wait). A GPU
//! whose context dies (a faulting kernel) while its peers wait in a collective, a GPU stuck
//! past the deadline, or an NCCL error: every communicator is aborted on a thread of its own
//! (the peers' NCCL kernels exit; the caller does not wait for a stuck GPU), the operation
//! returns [`Error::GroupFailed`] naming the GPU (or
//! [`Error::CollectiveTimeout`]), and every later call of the group returns that error at once
//! ([`GpuGroup::failure`]). Drop the group and build a new one over the GPUs that still work
//! (docs/multi-gpu.md). A failure before any collective (out of memory on one GPU) only fails
//! the operation: the group works on.
//!
//! **Unstable** (reached as `rhea::unstable::multi`): the API may change with issue 37's other
//! parts (the throughput mode's device lists, bootstrapping over a group).

use std::sync::Arc;
use std::time::Duration;

use rhea_cuda::nccl::{NcclGroup, DEFAULT_TIMEOUT};
use rhea_cuda::ntt::DeviceNttTables;
use rhea_cuda::{DeviceBuffer, DeviceModuli};

use super::GpuRing;
use crate::ckks::{CkksContext, Evaluator};
use crate::error::{Error, Result};
use crate::Device;

mod arith;
mod keyswitch;
mod objects;
mod partition;
mod plan;
mod relin_rotate;
mod rescale;

pub use arith::PartitionedPlaintext;
use objects::check_operand;
pub use objects::{PartitionedCiphertext, PartitionedGaloisKeys, PartitionedKey};
pub use partition::{KeySwitchTraffic, LimbPartition, PartitionKind};

/// Per-GPU tables of the group beyond the ring's own (`GpuRing`).
struct LocalTables {
    /// The moduli of the GPU's limbs: its `Q` limbs of the full chain, then its `P` range.
    moduli: Arc<DeviceModuli>,
    /// The NTT tables of the same limbs, in the same order (local table `j` for local limb
    /// `j`): the ring's host tables of those primes, so the words are the ring's. With them a
    /// GPU's limbs are contiguous runs whatever the partition (a strided partition's limbs
    /// are not consecutive primes of the chain).
    ntt: DeviceNttTables,
    /// `(P^{-1} mod q_i, shoup)` pairs for the GPU's `Q` limbs (the ModDown's last factor), by
    /// local table index.
    p_inv_w: DeviceBuffer,
    /// Per level (`ℓ − 1`), the ModUp conversions' first-step factors `q̂_i^{-1}` of the GPU's
    /// active limbs folded into the inverse NTT's last stage
    /// (`DeviceNttTables::scaled_inverse_words`, local tables), as the single-GPU path's
    /// `mod_up_inverse`; `None` where the GPU holds no active limb; empty without the fast NTT.
    mod_up_inverse: Vec<Option<DeviceBuffer>>,
    /// The ModDown conversion's first-step factors `p̂_j^{-1}` on the GPU's `P` tables (1 on its
    /// `Q` tables), folded the same way; `None` without the fast NTT.
    mod_down_inverse: Option<DeviceBuffer>,
    /// `rescale_w[ℓ − 2]` (`ℓ` in `2..=|Q|`): `(q_{ℓ-1}^{-1} mod q_i, shoup)` pairs of the GPU's
    /// limbs `i < ℓ − 1` (the limbs a rescale at `ℓ` keeps: a prefix of its `Q` limbs), by
    /// local table index, as the ring's `rescale_w`; `None` where it keeps none.
    rescale_w: Vec<Option<DeviceBuffer>>,
}

/// Which group split a partitioned object: the partition rule and the GPUs in rank order. With
/// the parameters (checked by their id) they fix every GPU's limbs, so two objects of equal
/// splits hold the same limbs on the same GPUs; a ciphertext of another split can have the
/// same buffer lengths (strided and contiguous over 2 GPUs hold equally many limbs at the top)
/// and would be read as other limbs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Split {
    kind: PartitionKind,
    devices: Vec<Device>,
}

impl std::fmt::Display for Split {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} over ", self.kind)?;
        for (k, d) in self.devices.iter().enumerate() {
            write!(f, "{}{d}", if k == 0 { "" } else { ", " })?;
        }
        Ok(())
    }
}

impl Split {
    /// [`Error::GroupMismatch`] unless `found` (the split of `what`, an operand of `op`) is
    /// this one.
    fn check(&self, op: &'static str, what: &'static str, found: &Split) -> Result<()> {
        if self == found {
            return Ok(());
        }
        Err(Error::GroupMismatch {
            op,
            what,
            expected: self.to_string(),
            found: found.to_string(),
        })
    }
}

/// A group of GPUs that runs one CKKS operation at a time split across all of them (latency
/// mode), with keys partitioned by limb so that a key set larger than one card fits.
///
/// ```no_run
/// use rhea::ckks::{CkksContext, Encoder, Encryptor, KeyGenerator};
/// use rhea::params::CkksParametersLiteral;
/// use rhea::unstable::multi::GpuGroup;
/// use rhea::Device;
///
/// let params = CkksParametersLiteral::n13_logqp200_levels2().build()?;
/// let ctx = CkksContext::new(&params, Device::Cpu)?;
/// let mut keygen = KeyGenerator::from_seed(&ctx, [1; 32]);
/// let sk = keygen.secret_key()?;
/// let rlk = keygen.relinearization_key(&sk)?;
/// let ct = Encryptor::with_secret_key(&ctx, &sk)?.encrypt(&Encoder::new(&ctx)?.encode(&[0.5])?)?;
///
/// let group = GpuGroup::new(&ctx, &Device::all_gpus())?; // keys and ciphertexts split by limb
/// let rlk = group.partition_relinearization_key(&rlk)?;
/// let x = group.scatter(&ct)?;
/// let y = group.mul_relin(&x, &x, &rlk)?;
/// let back = group.gather(&y, &ctx)?; // a CPU ciphertext, the words of `Evaluator::mul_relin`
/// let z = group.rescale(&y)?; // one level down: `Evaluator::rescale`'s words
/// let w = group.mul_relin_rescale(&x, &x, &rlk)?; // the same words as `z`
/// assert_eq!(w.level(), z.level());
/// # Ok::<(), rhea::Error>(())
/// ```
pub struct GpuGroup {
    ctx: CkksContext,
    eval: Evaluator,
    devices: Vec<Device>,
    /// The partition rule and the devices, recorded in every object the group splits.
    split: Split,
    rings: Vec<Arc<GpuRing>>,
    local: Vec<LocalTables>,
    part: LimbPartition,
    comm: Option<NcclGroup>,
    /// Whether the ModUp's all-gather overlaps the conversions digit by digit.
    overlap: bool,
    /// The deadline of the group's waits (also set on `comm`).
    timeout: Duration,
}

impl std::fmt::Debug for GpuGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuGroup")
            .field("devices", &self.devices)
            .field("partition", &self.part)
            .finish_non_exhaustive()
    }
}

impl GpuGroup {
    /// A group of the GPUs `devices` (in rank order) for the parameters of `ctx` (a context on
    /// any device: the group's results are those of every device). The ring's tables are
    /// uploaded to every GPU; with two or more GPUs, one NCCL communicator per GPU is created.
    ///
    /// Errors: [`Error::InvalidInput`] for no device, a CPU device, a GPU given twice or more
    /// GPUs than `Q` limbs; [`Error::DeviceNotSupported`] for a GPU that is not usable;
    /// [`Error::Gpu`] with [`rhea_cuda::CudaError::Nccl`] when NCCL is missing or fails.
    pub fn new(ctx: &CkksContext, devices: &[Device]) -> Result<Self> {
        Self::with_partition(ctx, devices, PartitionKind::Strided { block: 1 })
    }

    /// [`GpuGroup::new`] with the limbs split by `kind` (the default is the strided split,
    /// balanced at every level; [`PartitionKind::Contiguous`] is the first one, kept for
    /// comparison).
    ///
    /// Errors: as [`GpuGroup::new`], plus [`Error::InvalidInput`] for a `kind` that cannot
    /// split the chain over the GPUs ([`LimbPartition::with_kind`]).
    pub fn with_partition(
        ctx: &CkksContext,
        devices: &[Device],
        kind: PartitionKind,
    ) -> Result<Self> {
        let ring = ctx.ring();
        let part = LimbPartition::with_kind(ring.q_len(), ring.p_len(), devices.len(), kind)?;
        let mut rings = Vec::with_capacity(devices.len());
        for (i, d) in devices.iter().enumerate() {
            let Device::Cuda(index) = *d else {
                return Err(Error::InvalidInput(
                    "a GPU group holds GPUs only (Device::Cuda)".into(),
                ));
            };
            if devices[..i].contains(d) {
                return Err(Error::InvalidInput(format!(
                    "GPU {index} given twice to a group"
                )));
            }
            d.check_supported()?;
            rings.push(ring.gpu_ring(index)?);
        }
        let md = ring.keyswitch_plan().mod_down();
        let (q, p) = (ring.q().moduli(), ring.p().moduli());
        let full = ring.full_shape();
        let local = rings
            .iter()
            .enumerate()
            .map(|(k, g)| {
                let (ql, pr) = (part.q_limbs(k), part.p_range(k));
                let list: Vec<_> = ql
                    .iter()
                    .map(|&i| q[i])
                    .chain(p[pr.clone()].iter().copied())
                    .collect();
                let moduli = rhea_cuda::DeviceModuli::new(g.device(), &list)?;
                let tables: Vec<_> = ql
                    .iter()
                    .copied()
                    .chain(pr.map(|j| ring.q_len() + j))
                    .map(|t| ring.ntt_table(&full, t).clone())
                    .collect();
                let ntt = DeviceNttTables::new(g.device(), &tables)?;
                let pick = |w: &[u64]| -> Vec<u64> { ql.iter().map(|&i| w[i]).collect() };
                let pairs =
                    super::shoup_pairs(&pick(md.p_inv_mod_q()), &pick(md.p_inv_mod_q_shoup()));
                let p_inv_w = g.device().upload(&pairs)?;
                let (mut mod_up_inverse, mut mod_down_inverse) = (Vec::new(), None);
                if ntt.has_fast_kernels() {
                    for ell in 1..=ring.q_len() {
                        let f = g.mod_up.first_step_factors(ell)?;
                        let active: Vec<u64> =
                            ql.iter().take_while(|&&i| i < ell).map(|&i| f[i]).collect();
                        mod_up_inverse.push(if active.is_empty() {
                            None
                        } else {
                            Some(g.device().upload(&ntt.scaled_inverse_words(&active)?)?)
                        });
                    }
                    let q_hat_inv = ring
                        .keyswitch_plan()
                        .mod_down_converter(ring.q_len())
                        .q_hat_inv_mod_q()
                        .to_vec();
                    let mut f = vec![1u64; ql.len()];
                    f.extend_from_slice(&q_hat_inv[part.p_range(k)]);
                    mod_down_inverse = Some(g.device().upload(&ntt.scaled_inverse_words(&f)?)?);
                }
                // The rescale's `q_{ℓ-1}^{-1}` of the kept limbs, per level: a rescale uploads
                // nothing.
                let rs = ring.rescaler();
                let rescale_w = (2..=ring.q_len())
                    .map(|ell| {
                        let kept = part.q_active(k, ell - 1);
                        if kept.is_empty() {
                            return Ok(None);
                        }
                        let (w, ws) = (rs.q_last_inv_mod_q(ell)?, rs.q_last_inv_mod_q_shoup(ell)?);
                        let pick = |v: &[u64]| -> Vec<u64> { kept.iter().map(|&i| v[i]).collect() };
                        let pairs = super::shoup_pairs(&pick(w), &pick(ws));
                        Ok(Some(g.device().upload(&pairs)?))
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(LocalTables {
                    moduli,
                    ntt,
                    p_inv_w,
                    mod_up_inverse,
                    mod_down_inverse,
                    rescale_w,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let comm = if devices.len() > 1 {
            let devs: Vec<_> = rings.iter().map(|g| g.device().clone()).collect();
            Some(NcclGroup::new(&devs)?)
        } else {
            None
        };
        Ok(Self {
            ctx: ctx.clone(),
            eval: Evaluator::new(ctx),
            devices: devices.to_vec(),
            split: Split {
                kind,
                devices: devices.to_vec(),
            },
            rings,
            local,
            part,
            comm,
            overlap: false,
            timeout: DEFAULT_TIMEOUT,
        })
    }

    /// How long the group waits for its work (an operation's collectives and kernels) before
    /// it gives the group up ([`Error::CollectiveTimeout`]); 60 s unless set
    /// ([`rhea_cuda::nccl::DEFAULT_TIMEOUT`]).
    pub fn collective_timeout(&self) -> Duration {
        self.timeout
    }

    /// Sets the deadline of the group's waits ([`GpuGroup::collective_timeout`]). Choose it
    /// above the longest operation the group runs (milliseconds at Rhea's sizes, more on a
    /// shared or throttled GPU): a deadline too short aborts a healthy group. A group of one
    /// GPU has no collectives and never waits with it.
    pub fn set_collective_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
        if let Some(c) = &mut self.comm {
            c.set_timeout(timeout);
        }
    }

    /// The failure that ended this group ([`Error::GroupFailed`],
    /// [`Error::CollectiveTimeout`]), if one did: every call of the group returns it.
    pub fn failure(&self) -> Option<Error> {
        let e = self.comm.as_ref()?.failure()?;
        Some(rhea_cuda::CudaError::Nccl(e).into())
    }

    /// [`GpuGroup::failure`] as an error: `Ok` for a working group.
    fn ensure_healthy(&self) -> Result<()> {
        self.failure().map_or(Ok(()), Err)
    }

    /// Runs `body`, an operation that may queue collectives, on a working group. On success it
    /// paces the host (`NcclGroup::pace`: waits, with the deadline, for the previous operation's
    /// work, so the host stays at most one operation ahead); when `body` failed (it may have
    /// queued collectives before it failed) it waits for all the group's work with the
    /// deadline (`NcclGroup::wait`), and a failed wait's error (the group now failed) wins over
    /// `body`'s, which the dead GPU may have caused. A group of one GPU runs `body` alone.
    fn guarded<T>(&self, body: impl FnOnce() -> Result<T>) -> Result<T> {
        let Some(comm) = &self.comm else {
            return body();
        };
        self.ensure_healthy()?;
        match body() {
            // Returns while the work runs; waits for the previous operation's (at most two
            // operations in flight).
            Ok(v) => {
                comm.pace()?;
                Ok(v)
            }
            Err(e) => {
                comm.wait()?;
                Err(e)
            }
        }
    }

    /// The GPUs, in rank order.
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// The number of GPUs.
    pub fn gpus(&self) -> usize {
        self.devices.len()
    }

    /// The split of the limbs.
    pub fn partition(&self) -> &LimbPartition {
        &self.part
    }

    /// With `on`, the ModUp's all-gather runs digit by digit on a second stream of each GPU,
    /// each digit's conversion starting as soon as its limbs have arrived while the next
    /// digit's move (`NcclGroup::all_gather_v_pipelined`); off (the default), one all-gather,
    /// then the conversions. The same words either way; nothing changes for a group of one.
    pub fn set_overlap(&mut self, on: bool) {
        self.overlap = on;
    }

    /// Whether the ModUp's exchange overlaps the conversions ([`GpuGroup::set_overlap`]).
    pub fn overlap(&self) -> bool {
        self.overlap
    }

    /// Per GPU, the bytes of one key switching at `level` received through NCCL (the model,
    /// which the NCCL counters match: [`GpuGroup::nccl_bytes_received`]).
    pub fn keyswitch_traffic(&self, level: usize) -> Vec<KeySwitchTraffic> {
        self.part.keyswitch_traffic(level + 1, self.ctx.ring().n())
    }

    /// Per GPU, the bytes received through NCCL since the group was made or last reset.
    pub fn nccl_bytes_received(&self) -> Vec<u64> {
        (0..self.gpus())
            .map(|k| self.comm.as_ref().map_or(0, |c| c.bytes_received(k)))
            .collect()
    }

    /// Sets the NCCL byte counters to zero.
    pub fn reset_nccl_counters(&self) {
        if let Some(c) = &self.comm {
            c.reset_counters();
        }
    }

    /// Waits for every GPU of the group: with two or more GPUs, within the deadline
    /// ([`GpuGroup::collective_timeout`]).
    ///
    /// Errors: [`Error::GroupFailed`], [`Error::CollectiveTimeout`] (the group is failed);
    /// device errors.
    pub fn synchronize(&self) -> Result<()> {
        if let Some(comm) = &self.comm {
            return Ok(comm.wait()?);
        }
        for g in &self.rings {
            g.device().synchronize()?;
        }
        Ok(())
    }

    /// `ct` an operand of `op` of `parts` components: of the group's parameters and split
    /// ([`Error::GroupMismatch`] otherwise), each GPU's buffer as long as its limbs at the
    /// ciphertext's level.
    fn check(&self, op: &'static str, ct: &PartitionedCiphertext, parts: usize) -> Result<()> {
        self.ctx.rlwe().check_id(op, ct.params_id)?;
        check_operand(
            op,
            &self.split,
            &self.part,
            self.ctx.ring().n(),
            ct,
            Some(parts),
        )
    }

    /// `key` (an operand of `op`) of the group's parameters and split.
    fn check_key(&self, op: &'static str, key: &PartitionedKey) -> Result<()> {
        self.ctx.rlwe().check_id(op, key.params_id)?;
        self.split.check(op, "the key", &key.split)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(kind: PartitionKind, devices: &[usize]) -> Split {
        Split {
            kind,
            devices: devices.iter().map(|&i| Device::Cuda(i)).collect(),
        }
    }

    /// A ciphertext of no buffers (no GPU needed) recorded as made by `split`.
    fn empty(split: Split, ell: usize) -> PartitionedCiphertext {
        PartitionedCiphertext {
            parts: Vec::new(),
            ell,
            scale: 1.0,
            slots: 1,
            params_id: 7,
            split,
        }
    }

    /// The gap this closes: strided and contiguous over 2 GPUs give every GPU as many limbs at
    /// the top level (a ciphertext of one would pass every length check of the other) but
    /// different limbs; the recorded split tells them apart, as it does other GPUs or another
    /// rank order, before anything else is looked at.
    #[test]
    fn another_split_is_a_group_mismatch() {
        let strided = PartitionKind::Strided { block: 1 };
        let contiguous = PartitionKind::Contiguous;
        let (s, c) = (
            LimbPartition::with_kind(6, 2, 2, strided).unwrap(),
            LimbPartition::with_kind(6, 2, 2, contiguous).unwrap(),
        );
        for k in 0..2 {
            assert_eq!(s.q_active(k, 6).len(), c.q_active(k, 6).len());
            assert_ne!(s.q_active(k, 6), c.q_active(k, 6));
        }
        let group = split(strided, &[0, 1]);
        for (other, text) in [
            (split(contiguous, &[0, 1]), "contiguous over cuda:0, cuda:1"),
            (
                split(PartitionKind::Strided { block: 2 }, &[0, 1]),
                "strided-2 over cuda:0, cuda:1",
            ),
            (split(strided, &[1, 0]), "strided over cuda:1, cuda:0"),
            (split(strided, &[0]), "strided over cuda:0"),
        ] {
            let e = check_operand("rotate", &group, &s, 1 << 12, &empty(other, 6), Some(2))
                .unwrap_err();
            match &e {
                Error::GroupMismatch {
                    op: "rotate",
                    what: "the ciphertext",
                    expected,
                    found,
                } => {
                    assert_eq!(expected, "strided over cuda:0, cuda:1");
                    assert_eq!(found, text);
                }
                other => panic!("{other:?}"),
            }
            assert!(e.to_string().contains(text), "{e}");
        }
        // The same split passes on to the shape checks (here: no components).
        let e = check_operand(
            "rotate",
            &group,
            &s,
            1 << 12,
            &empty(group.clone(), 6),
            Some(2),
        )
        .unwrap_err();
        assert!(matches!(e, Error::InvalidInput(_)), "{e}");
        let e = check_operand(
            "gather",
            &group,
            &s,
            1 << 12,
            &empty(group.clone(), 6),
            None,
        )
        .unwrap_err();
        assert!(matches!(e, Error::InvalidInput(_)), "{e}");
        // Keys are checked by the same rule.
        assert!(group.check("mul_relin", "the key", &group.clone()).is_ok());
        let e = group
            .check("mul_relin", "the key", &split(contiguous, &[0, 1]))
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::GroupMismatch {
                    what: "the key",
                    ..
                }
            ),
            "{e}"
        );
    }
}
