//! What a [`GpuGroup`] splits by limb — keys, rotation keys and ciphertexts — and the moves
//! between whole and split: [`GpuGroup::partition_key`] (and the relinearisation and rotation
//! keys), [`GpuGroup::scatter`], [`GpuGroup::gather`], with the checks every group operation
//! makes of a split operand.

use std::collections::BTreeMap;

use rhea_cuda::DeviceBuffer;

use super::{GpuGroup, LimbPartition, PartitionKind, Split};
use crate::backend::Form;
use crate::ckks::{Ciphertext, CkksContext};
use crate::error::{Error, Result};
use crate::rlwe::{GaloisKeys, KeySwitchKey, RelinearizationKey};
use crate::Device;

/// A key-switching key split by limb over a [`GpuGroup`]: GPU `k` holds, for every digit, the
/// key's `Q` limbs it owns and its `P` limbs (`[|Q_k| + |P_k|][N]` per polynomial).
pub struct PartitionedKey {
    pub(super) params_id: u64,
    /// The group split that made it.
    pub(super) split: Split,
    /// `parts[k][d]`: GPU `k`'s limbs of digit `d`'s `(b, a)`.
    pub(super) parts: Vec<Vec<[DeviceBuffer; 2]>>,
}

impl std::fmt::Debug for PartitionedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartitionedKey")
            .field("split", &self.split.to_string())
            .field("digits", &self.parts.first().map_or(0, Vec::len))
            .field("bytes_per_gpu", &self.bytes_per_gpu())
            .finish()
    }
}

impl PartitionedKey {
    /// The bytes each GPU holds.
    pub fn bytes_per_gpu(&self) -> Vec<u64> {
        self.parts
            .iter()
            .map(|ds| {
                ds.iter()
                    .flat_map(|p| p.iter())
                    .map(|b| b.size_bytes() as u64)
                    .sum()
            })
            .collect()
    }
}

/// Rotation keys (and the conjugation key) split by limb over a [`GpuGroup`], by Galois
/// element.
#[derive(Debug, Default)]
pub struct PartitionedGaloisKeys {
    pub(super) keys: BTreeMap<u64, PartitionedKey>,
}

impl PartitionedGaloisKeys {
    /// The bytes each GPU holds, all keys together.
    pub fn bytes_per_gpu(&self) -> Vec<u64> {
        let mut total: Vec<u64> = Vec::new();
        for k in self.keys.values() {
            let b = k.bytes_per_gpu();
            total.resize(b.len().max(total.len()), 0);
            for (t, x) in total.iter_mut().zip(b) {
                *t += x;
            }
        }
        total
    }

    /// The Galois elements held.
    pub fn elements(&self) -> Vec<u64> {
        self.keys.keys().copied().collect()
    }

    /// The keys of `self` and of `other` in one set (for an element both hold, `self`'s).
    pub fn with(mut self, other: PartitionedGaloisKeys) -> Self {
        for (g, key) in other.keys {
            self.keys.entry(g).or_insert(key);
        }
        self
    }
}

/// A CKKS ciphertext split by limb over a [`GpuGroup`]: component `c`'s `Q` limbs that GPU `k`
/// owns (below the level) on GPU `k`, in increasing order, NTT form.
pub struct PartitionedCiphertext {
    /// `parts[c][k]`: GPU `k`'s limbs of component `c`.
    pub(super) parts: Vec<Vec<DeviceBuffer>>,
    /// Active `Q` limbs (`level + 1`).
    pub(super) ell: usize,
    pub(super) scale: f64,
    pub(super) slots: usize,
    pub(super) params_id: u64,
    /// The split of the group that made it: another group's (another partition rule, other
    /// GPUs) is refused, even where the buffer lengths agree.
    pub(super) split: Split,
}

impl std::fmt::Debug for PartitionedCiphertext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartitionedCiphertext")
            .field("level", &self.level())
            .field("components", &self.parts.len())
            .field("split", &self.split.to_string())
            .finish()
    }
}

impl PartitionedCiphertext {
    /// The level (`Q` limbs − 1).
    pub fn level(&self) -> usize {
        self.ell - 1
    }

    /// The scale `Δ`.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The number of components.
    pub fn components(&self) -> usize {
        self.parts.len()
    }

    /// The partition rule of the group that split it (only a group of the same rule and
    /// GPUs takes it).
    pub fn partition_kind(&self) -> PartitionKind {
        self.split.kind
    }

    /// The GPUs of the group that split it, in rank order.
    pub fn devices(&self) -> &[Device] {
        &self.split.devices
    }
}

impl PartitionedCiphertext {
    /// A ciphertext of no components with `self`'s level, scale, slots, parameters and split
    /// (for struct update: `PartitionedCiphertext { parts, ..ct.like() }`).
    pub(super) fn like(&self) -> PartitionedCiphertext {
        PartitionedCiphertext {
            parts: Vec::new(),
            ell: self.ell,
            scale: self.scale,
            slots: self.slots,
            params_id: self.params_id,
            split: self.split.clone(),
        }
    }
}

impl GpuGroup {
    /// `key` split by limb over the group: each GPU receives only its limbs (the whole key is
    /// never on one GPU; a key on the CPU or on any GPU will do).
    ///
    /// Errors: [`Error::ParametersMismatch`] for a key of other parameters; device errors.
    pub fn partition_key(&self, key: &KeySwitchKey) -> Result<PartitionedKey> {
        self.ensure_healthy()?;
        let rlwe = self.ctx.rlwe();
        rlwe.check_id("partition a key", key.params_id())?;
        let ring = self.ctx.ring();
        let (n, lq) = (ring.n(), ring.q_len());
        let mut parts: Vec<Vec<[DeviceBuffer; 2]>> = (0..self.gpus()).map(|_| Vec::new()).collect();
        for pair in key.parts() {
            let words = [ring.download(&pair[0])?, ring.download(&pair[1])?];
            for (k, out) in parts.iter_mut().enumerate() {
                let (ql, pr) = (self.part.q_limbs(k), self.part.p_range(k));
                let dev = self.rings[k].device();
                let local = |w: &[u64]| -> Vec<u64> {
                    let mut v = Vec::with_capacity((ql.len() + pr.len()) * n);
                    for &i in ql {
                        v.extend_from_slice(&w[i * n..(i + 1) * n]);
                    }
                    v.extend_from_slice(&w[(lq + pr.start) * n..(lq + pr.end) * n]);
                    v
                };
                out.push([
                    dev.upload(&local(&words[0]))?,
                    dev.upload(&local(&words[1]))?,
                ]);
            }
        }
        Ok(PartitionedKey {
            params_id: key.params_id(),
            split: self.split.clone(),
            parts,
        })
    }

    /// The relinearisation key split by limb ([`GpuGroup::partition_key`]).
    ///
    /// Errors: as [`GpuGroup::partition_key`].
    pub fn partition_relinearization_key(
        &self,
        rlk: &RelinearizationKey,
    ) -> Result<PartitionedKey> {
        self.partition_key(rlk.key())
    }

    /// The rotation keys of `steps` split by limb.
    ///
    /// Errors: [`Error::MissingRotationKey`] for a step without a key in `keys`; as
    /// [`GpuGroup::partition_key`].
    pub fn partition_rotation_keys(
        &self,
        keys: &GaloisKeys,
        steps: &[i64],
    ) -> Result<PartitionedGaloisKeys> {
        let mut out = PartitionedGaloisKeys::default();
        for &step in steps {
            let g = self.ctx.rlwe().galois_element_for_rotation(step);
            if g == 1 || out.keys.contains_key(&g) {
                continue;
            }
            let key = keys.get(g).ok_or(Error::MissingRotationKey {
                step,
                galois_element: g,
            })?;
            out.keys.insert(g, self.partition_key(key)?);
        }
        Ok(out)
    }

    /// The conjugation key of `keys` split by limb over the group, in a set of its own (for
    /// [`GpuGroup::conjugate`]; [`PartitionedGaloisKeys::with`] merges sets).
    ///
    /// Errors: [`Error::MissingConjugationKey`] when `keys` has none; as
    /// [`GpuGroup::partition_key`].
    pub fn partition_conjugation_key(&self, keys: &GaloisKeys) -> Result<PartitionedGaloisKeys> {
        let g = self.ctx.rlwe().galois_element_for_conjugation();
        let key = keys
            .get(g)
            .ok_or(Error::MissingConjugationKey { galois_element: g })?;
        let mut out = PartitionedGaloisKeys::default();
        out.keys.insert(g, self.partition_key(key)?);
        Ok(out)
    }

    /// `ct` (on the CPU or any GPU) split by limb over the group.
    ///
    /// Errors: [`Error::ParametersMismatch`] for another parameter set; device errors.
    pub fn scatter(&self, ct: &Ciphertext) -> Result<PartitionedCiphertext> {
        self.ensure_healthy()?;
        self.ctx
            .rlwe()
            .check_id("scatter a ciphertext", ct.params_id)?;
        let ell = ct.level() + 1;
        let parts = ct
            .parts()
            .iter()
            .map(|p| {
                p.expect_form("scatter", Form::Ntt)?;
                self.split_q_limbs(&self.ctx.ring().download(p)?, ell)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(PartitionedCiphertext {
            parts,
            ell,
            scale: ct.scale,
            slots: ct.slots,
            params_id: ct.params_id,
            split: self.split.clone(),
        })
    }

    /// The `Q` limbs below `ell` of one polynomial's words (`[limb][N]`, the whole chain's
    /// order) split over the group: GPU `k` receives the limbs it owns, in increasing order.
    ///
    /// Errors: device errors.
    pub(super) fn split_q_limbs(&self, words: &[u64], ell: usize) -> Result<Vec<DeviceBuffer>> {
        let n = self.ctx.ring().n();
        (0..self.gpus())
            .map(|k| {
                let own = self.part.q_active(k, ell);
                let mut local = Vec::with_capacity(own.len() * n);
                for &i in own {
                    local.extend_from_slice(&words[i * n..(i + 1) * n]);
                }
                Ok(self.rings[k].device().upload(&local)?)
            })
            .collect()
    }

    /// `ct` whole again, on the device of `ctx` (a context of the group's parameters).
    ///
    /// Errors: [`Error::ParametersMismatch`] for another parameter set;
    /// [`Error::GroupMismatch`] for a ciphertext that another split made; device errors.
    pub fn gather(&self, ct: &PartitionedCiphertext, ctx: &CkksContext) -> Result<Ciphertext> {
        const OP: &str = "gather a ciphertext";
        ctx.rlwe().check_id(OP, ct.params_id)?;
        self.ctx.rlwe().check_id(OP, ct.params_id)?;
        // The downloads below wait for the GPUs without a deadline: first wait with one.
        if let Some(comm) = &self.comm {
            comm.wait()?;
        }
        let n = self.ctx.ring().n();
        check_operand(OP, &self.split, &self.part, n, ct, None)?;
        let ring = ctx.ring();
        let shape = ring.shape_q(ct.ell);
        let parts = ct
            .parts
            .iter()
            .map(|bufs| {
                let n = ring.n();
                let mut words = vec![0u64; shape.words()];
                for (k, b) in bufs.iter().enumerate() {
                    let local = b.to_host()?;
                    let own = self.part.q_active(k, ct.ell);
                    if local.len() != own.len() * n {
                        return Err(Error::InvalidInput(format!(
                            "gather: GPU {k} holds {} words, {} limbs expected",
                            local.len(),
                            own.len()
                        )));
                    }
                    for (j, &i) in own.iter().enumerate() {
                        words[i * n..(i + 1) * n].copy_from_slice(&local[j * n..(j + 1) * n]);
                    }
                }
                ring.upload(ctx.device(), words, shape, Form::Ntt)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Ciphertext {
            parts,
            scale: ct.scale,
            slots: ct.slots,
            params_id: ct.params_id,
            seed: None,
        })
    }
}

/// A copy of `parts` (`[component][GPU]`) on the same GPUs.
pub(super) fn clone_parts(parts: &[Vec<DeviceBuffer>]) -> Result<Vec<Vec<DeviceBuffer>>> {
    parts
        .iter()
        .map(|bufs| {
            bufs.iter()
                .map(|b| Ok(b.try_clone()?))
                .collect::<Result<Vec<_>>>()
        })
        .collect()
}
/// The checks of a partitioned operand of `op` that need no GPU: `ct` made by a group of
/// `split` ([`Error::GroupMismatch`] otherwise), of `components` components where given and
/// at least one, split over every GPU of `part` with each GPU's buffer as long as its limbs at
/// the ciphertext's level (`n` words each) and a level the chain has ([`Error::InvalidInput`]
/// otherwise).
pub(super) fn check_operand(
    op: &'static str,
    split: &Split,
    part: &LimbPartition,
    n: usize,
    ct: &PartitionedCiphertext,
    components: Option<usize>,
) -> Result<()> {
    split.check(op, "the ciphertext", &ct.split)?;
    let lengths_ok = |bufs: &Vec<DeviceBuffer>| {
        bufs.len() == part.gpus()
            && bufs
                .iter()
                .enumerate()
                .all(|(k, b)| b.len() == part.q_active(k, ct.ell).len() * n)
    };
    let count_ok = components.map_or(!ct.parts.is_empty(), |c| ct.parts.len() == c);
    if !count_ok || ct.ell == 0 || ct.ell > part.q_len() || !ct.parts.iter().all(lengths_ok) {
        return Err(Error::InvalidInput(format!(
            "{op}: a ciphertext of {} component(s) at {} limbs not split as this group of {} \
             GPU(s) splits its limbs ({}){}",
            ct.parts.len(),
            ct.ell,
            part.gpus(),
            part.kind(),
            components.map_or(String::new(), |c| format!("; {c} components expected")),
        )));
    }
    Ok(())
}
