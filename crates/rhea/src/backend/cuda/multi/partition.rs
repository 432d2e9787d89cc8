//! [`LimbPartition`]: which GPU of a group owns which limbs of `Q ∪ P`, and the communication
//! volume of one partitioned key switching (host-only arithmetic, tested on any machine).

use std::ops::Range;

use crate::error::{Error, Result};

/// How the `Q` limbs are dealt to the GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PartitionKind {
    /// Blocks of `block` consecutive limbs dealt round-robin: limb `i` on GPU `(i / block) mod
    /// K`. With `block = 1` (the default, [`LimbPartition::new`]) every GPU holds `⌈ℓ/K⌉` or
    /// `⌊ℓ/K⌋` of the `ℓ` limbs at every level, so the key switching's `Q` work is balanced
    /// whatever the level.
    Strided {
        /// Consecutive limbs per block.
        block: usize,
    },
    /// One contiguous near-equal range of the full chain per GPU (the first GPUs one more):
    /// at a level `ℓ` below the top the last GPUs hold fewer limbs, or none.
    Contiguous,
}

impl std::fmt::Display for PartitionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Strided { block: 1 } => write!(f, "strided"),
            Self::Strided { block } => write!(f, "strided-{block}"),
            Self::Contiguous => write!(f, "contiguous"),
        }
    }
}

/// The split of a ring's limbs over `K` GPUs. GPU `k` owns a set of the `Q` limbs of the full
/// chain ([`LimbPartition::q_limbs`], by the rule of its [`PartitionKind`]) and a contiguous
/// range of the `P` limbs ([`LimbPartition::p_range`], as even as the count allows, the first
/// GPUs one more). Each GPU stores its limbs contiguously, in increasing order: its `Q` limbs,
/// then (key-switching keys, over `Q ∪ P`) its `P` limbs. Every polynomial of the group
/// (ciphertext parts at any level, keys) is split by this one rule, so each limb's arithmetic
/// happens on the GPU that holds its key limbs. At a level of `ℓ` active limbs a GPU holds its
/// limbs below `ℓ` ([`LimbPartition::q_active`]), a prefix of its local limbs: dropping the
/// top limb (a rescale, a lower level) drops the last local limb of one GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimbPartition {
    kind: PartitionKind,
    q_len: usize,
    /// Per GPU, its `Q` limbs of the full chain, increasing.
    q: Vec<Vec<usize>>,
    p: Vec<Range<usize>>,
}

/// `len` items in `k` contiguous near-equal ranges, the longer ones first.
fn split(len: usize, k: usize) -> Vec<Range<usize>> {
    let (base, extra) = (len / k, len % k);
    let mut start = 0;
    (0..k)
        .map(|i| {
            let l = base + usize::from(i < extra);
            let r = start..start + l;
            start += l;
            r
        })
        .collect()
}

impl LimbPartition {
    /// The strided partition (limb `i` on GPU `i mod K`, balanced at every level) of `q_len`
    /// Q limbs and `p_len` P limbs over `gpus` GPUs: [`LimbPartition::with_kind`] with
    /// [`PartitionKind::Strided`] `{ block: 1 }`.
    ///
    /// Errors: [`Error::InvalidInput`] for no GPU, or more GPUs than Q limbs (a GPU would own
    /// no ciphertext limb at any level).
    pub fn new(q_len: usize, p_len: usize, gpus: usize) -> Result<Self> {
        Self::with_kind(q_len, p_len, gpus, PartitionKind::Strided { block: 1 })
    }

    /// The partition of `q_len` Q limbs and `p_len` P limbs over `gpus` GPUs by `kind`.
    ///
    /// Errors: [`Error::InvalidInput`] for no GPU, more GPUs than Q limbs, a block of 0 limbs,
    /// or blocks so large that a GPU would own no `Q` limb.
    pub fn with_kind(q_len: usize, p_len: usize, gpus: usize, kind: PartitionKind) -> Result<Self> {
        if gpus == 0 || gpus > q_len {
            return Err(Error::InvalidInput(format!(
                "a limb partition over {gpus} GPU(s) of {q_len} Q limbs (1..={q_len} GPUs)"
            )));
        }
        let q: Vec<Vec<usize>> = match kind {
            PartitionKind::Contiguous => split(q_len, gpus)
                .into_iter()
                .map(|r| r.collect())
                .collect(),
            PartitionKind::Strided { block } => {
                if block == 0 || block * (gpus - 1) >= q_len {
                    return Err(Error::InvalidInput(format!(
                        "a strided limb partition of {q_len} Q limbs over {gpus} GPU(s) in \
                         blocks of {block} (a block is 1 limb or more, and every GPU needs one)"
                    )));
                }
                (0..gpus)
                    .map(|k| (0..q_len).filter(|i| (i / block) % gpus == k).collect())
                    .collect()
            }
        };
        Ok(Self {
            kind,
            q_len,
            q,
            p: split(p_len, gpus),
        })
    }

    /// The rule of the split.
    pub fn kind(&self) -> PartitionKind {
        self.kind
    }

    /// The number of GPUs.
    pub fn gpus(&self) -> usize {
        self.q.len()
    }

    /// GPU `k`'s Q limbs of the full chain, increasing (its local limb `j` is `q_limbs(k)[j]`).
    pub fn q_limbs(&self, k: usize) -> &[usize] {
        &self.q[k]
    }

    /// GPU `k`'s P limbs (indices into `P`).
    pub fn p_range(&self, k: usize) -> Range<usize> {
        self.p[k].clone()
    }

    /// GPU `k`'s Q limbs at `ell` active Q limbs (possibly none): a prefix of
    /// [`LimbPartition::q_limbs`].
    pub fn q_active(&self, k: usize, ell: usize) -> &[usize] {
        let q = &self.q[k];
        &q[..q.partition_point(|&i| i < ell)]
    }

    /// GPU `k`'s active Q limbs at `ell` as maximal runs of consecutive limbs: `(local limbs,
    /// first global limb)` (one run for a contiguous partition, one per block for a strided one).
    pub fn q_runs(&self, k: usize, ell: usize) -> Vec<(Range<usize>, usize)> {
        consecutive_runs(self.q_active(k, ell))
    }

    /// The GPU holding Q limb `i` and its local index there.
    pub fn owner_of_q(&self, i: usize) -> Option<(usize, usize)> {
        self.q
            .iter()
            .enumerate()
            .find_map(|(k, q)| q.binary_search(&i).ok().map(|j| (k, j)))
    }

    /// The number of `P` limbs.
    pub fn p_len(&self) -> usize {
        self.p.last().map_or(0, |r| r.end)
    }

    /// The number of `Q` limbs of the full chain.
    pub fn q_len(&self) -> usize {
        self.q_len
    }

    /// The communication of one key switching at `ell` Q limbs, per GPU.
    pub fn keyswitch_traffic(&self, ell: usize, n: usize) -> Vec<KeySwitchTraffic> {
        let pl = self.p_len();
        (0..self.gpus())
            .map(|k| {
                let own_q = self.q_active(k, ell).len();
                let own_p = self.p_range(k).len();
                KeySwitchTraffic {
                    modup_bytes: ((ell - own_q) * n * 8) as u64,
                    moddown_bytes: (2 * (pl - own_p) * n * 8) as u64,
                }
            })
            .collect()
    }
}

/// Maximal runs of consecutive values in the increasing list `limbs`: `(positions, first value)`.
pub(crate) fn consecutive_runs(limbs: &[usize]) -> Vec<(Range<usize>, usize)> {
    let mut runs: Vec<(Range<usize>, usize)> = Vec::new();
    for (j, &i) in limbs.iter().enumerate() {
        match runs.last_mut() {
            Some((r, first)) if *first + r.len() == i => r.end = j + 1,
            _ => runs.push((j..j + 1, i)),
        }
    }
    runs
}

/// The bytes one GPU receives in one partitioned key switching: the other GPUs' coefficient-form
/// input limbs before the ModUp (`(ℓ − ℓ_k) · N · 8`), and the other GPUs' coefficient-form `P`
/// limbs of both inner-product halves before the ModDown (`2 · (|P| − |P_k|) · N · 8`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KeySwitchTraffic {
    /// Received for the ModUp (the all-gather of the input).
    pub modup_bytes: u64,
    /// Received for the ModDown (the all-gather of the `P` limbs).
    pub moddown_bytes: u64,
}

impl KeySwitchTraffic {
    /// Both exchanges.
    pub fn total(&self) -> u64 {
        self.modup_bytes + self.moddown_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every limb on exactly one GPU, each GPU's limbs increasing.
    fn check_cover(p: &LimbPartition) {
        let mut seen = vec![0; p.q_len()];
        for k in 0..p.gpus() {
            assert!(p.q_limbs(k).windows(2).all(|w| w[0] < w[1]));
            for (j, &i) in p.q_limbs(k).iter().enumerate() {
                seen[i] += 1;
                assert_eq!(p.owner_of_q(i), Some((k, j)));
            }
        }
        assert!(seen.iter().all(|&s| s == 1), "{seen:?}");
    }

    #[test]
    fn contiguous_ranges_cover_every_limb_once_and_evenly() {
        let p = LimbPartition::with_kind(39, 10, 4, PartitionKind::Contiguous).unwrap();
        check_cover(&p);
        let q: Vec<_> = (0..4).map(|k| p.q_runs(k, 39)).collect();
        assert_eq!(
            q,
            vec![
                vec![(0..10, 0)],
                vec![(0..10, 10)],
                vec![(0..10, 20)],
                vec![(0..9, 30)]
            ]
        );
        let pr: Vec<_> = (0..4).map(|k| p.p_range(k)).collect();
        assert_eq!(pr, vec![0..3, 3..6, 6..8, 8..10]);
        assert_eq!((p.q_len(), p.p_len(), p.gpus()), (39, 10, 4));
        // At 15 limbs the last two GPUs hold no Q limb.
        assert_eq!(p.q_active(1, 15), &[10, 11, 12, 13, 14]);
        assert!(p.q_active(2, 15).is_empty() && p.q_active(3, 15).is_empty());
        assert_eq!(p.kind().to_string(), "contiguous");
    }

    #[test]
    fn strided_is_balanced_at_every_level() {
        for (q_len, gpus) in [(39, 2), (39, 4), (7, 3), (25, 7), (5, 5)] {
            let p = LimbPartition::new(q_len, 10, gpus).unwrap();
            check_cover(&p);
            for ell in 1..=q_len {
                let counts: Vec<_> = (0..gpus).map(|k| p.q_active(k, ell).len()).collect();
                let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
                assert!(
                    hi - lo <= 1,
                    "{q_len} limbs, {gpus} GPUs, level {ell}: {counts:?}"
                );
                assert_eq!(counts.iter().sum::<usize>(), ell);
            }
        }
        let p = LimbPartition::new(39, 10, 2).unwrap();
        // Level 24 (25 limbs): 13 and 12, not the contiguous split's 20 and 5.
        assert_eq!(p.q_active(0, 25).len(), 13);
        assert_eq!(p.q_active(1, 25).len(), 12);
        assert_eq!(&p.q_limbs(1)[..3], &[1, 3, 5]);
        assert_eq!(p.q_runs(1, 6), vec![(0..1, 1), (1..2, 3), (2..3, 5)]);
        // Dropping the top limb drops the last local limb of its owner.
        assert_eq!(p.q_active(0, 25).last(), Some(&24));
        assert_eq!(p.q_active(0, 24).last(), Some(&22));
        assert_eq!(p.kind().to_string(), "strided");
        // Blocks of 4 over 2 GPUs: 0..4 on GPU 0, 4..8 on GPU 1, 8..12 on GPU 0, ...
        let b = LimbPartition::with_kind(39, 10, 2, PartitionKind::Strided { block: 4 }).unwrap();
        check_cover(&b);
        assert_eq!(b.q_runs(0, 13), vec![(0..4, 0), (4..8, 8)]);
        assert_eq!(b.q_runs(1, 13), vec![(0..4, 4), (4..5, 12)]);
        assert_eq!(b.kind().to_string(), "strided-4");
        // A group of one: everything on GPU 0, one run.
        let one = LimbPartition::new(39, 10, 1).unwrap();
        assert_eq!(one.q_runs(0, 25), vec![(0..25, 0)]);
    }

    #[test]
    fn bad_partitions_are_errors() {
        // More GPUs than P limbs: some own none (allowed), none own two ranges.
        let p = LimbPartition::new(8, 1, 3).unwrap();
        assert_eq!(p.p_range(0), 0..1);
        assert!(p.p_range(2).is_empty());
        assert!(LimbPartition::new(3, 1, 4).is_err());
        assert!(LimbPartition::new(3, 1, 0).is_err());
        let strided = |block| PartitionKind::Strided { block };
        assert!(LimbPartition::with_kind(8, 1, 2, strided(0)).is_err());
        // Blocks of 8 over 2 GPUs of 8 limbs: GPU 1 would own nothing.
        assert!(LimbPartition::with_kind(8, 1, 2, strided(8)).is_err());
        assert!(LimbPartition::with_kind(8, 1, 2, strided(7)).is_ok());
    }

    #[test]
    fn traffic_is_what_the_others_own() {
        // N = 2^17, 39 Q limbs, 10 P limbs, 2 GPUs strided: at the top GPU 0 owns 20 + 5,
        // GPU 1 19 + 5; at 25 limbs (level 24) 13 and 12.
        let p = LimbPartition::new(39, 10, 2).unwrap();
        let n = 1 << 17;
        let mib = n as u64 * 8;
        let t = p.keyswitch_traffic(39, n);
        assert_eq!(t[0].modup_bytes, 19 * mib);
        assert_eq!(t[1].modup_bytes, 20 * mib);
        assert_eq!(t[0].moddown_bytes, 2 * 5 * mib);
        assert_eq!(t[1].total(), (20 + 10) * mib);
        let t = p.keyswitch_traffic(25, n);
        assert_eq!([t[0].total(), t[1].total()], [22 * mib, 23 * mib]);
        // The contiguous split at level 24: GPU 0 receives 5 + 10, GPU 1 20 + 10.
        let c = LimbPartition::with_kind(39, 10, 2, PartitionKind::Contiguous).unwrap();
        let t = c.keyswitch_traffic(25, n);
        assert_eq!([t[0].total(), t[1].total()], [15 * mib, 30 * mib]);
        // One GPU: nothing moves.
        let one = LimbPartition::new(39, 10, 1).unwrap();
        assert_eq!(one.keyswitch_traffic(39, n)[0].total(), 0);
    }
}
