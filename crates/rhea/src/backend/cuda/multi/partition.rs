//! [`LimbPartition`]: which GPU of a group owns which limbs of `Q ∪ P`, and the communication
//! volume of one partitioned key switching (host-only arithmetic, tested on any machine).

use std::ops::Range;

use crate::error::{Error, Result};

/// The split of a ring's limbs over `K` GPUs: GPU `k` owns the contiguous `Q` limbs
/// `q_range(k)` (of the full chain) and the contiguous `P` limbs `p_range(k)`, as even as the
/// counts allow (the first GPUs take one more when the count does not divide). Every polynomial
/// of the group (ciphertext parts at any level, key-switching keys over `Q ∪ P`) is split by
/// this one rule, so each limb's arithmetic happens on the GPU that holds its key limbs. At a
/// level `ℓ` a GPU holds the limbs of its range below `ℓ` ([`LimbPartition::q_active`]): the
/// last GPUs hold fewer (or none) at low levels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimbPartition {
    q: Vec<Range<usize>>,
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
    /// The partition of `q_len` Q limbs and `p_len` P limbs over `gpus` GPUs.
    ///
    /// Errors: [`Error::InvalidInput`] for no GPU, or more GPUs than Q limbs (a GPU would own
    /// no ciphertext limb at any level).
    pub fn new(q_len: usize, p_len: usize, gpus: usize) -> Result<Self> {
        if gpus == 0 || gpus > q_len {
            return Err(Error::InvalidInput(format!(
                "a limb partition over {gpus} GPU(s) of {q_len} Q limbs (1..={q_len} GPUs)"
            )));
        }
        Ok(Self {
            q: split(q_len, gpus),
            p: split(p_len, gpus),
        })
    }

    /// The number of GPUs.
    pub fn gpus(&self) -> usize {
        self.q.len()
    }

    /// GPU `k`'s Q limbs of the full chain.
    pub fn q_range(&self, k: usize) -> Range<usize> {
        self.q[k].clone()
    }

    /// GPU `k`'s P limbs (indices into `P`).
    pub fn p_range(&self, k: usize) -> Range<usize> {
        self.p[k].clone()
    }

    /// GPU `k`'s Q limbs at `ell` active Q limbs (possibly empty).
    pub fn q_active(&self, k: usize, ell: usize) -> Range<usize> {
        let r = &self.q[k];
        r.start.min(ell)..r.end.min(ell)
    }

    /// The number of `P` limbs.
    pub fn p_len(&self) -> usize {
        self.p.last().map_or(0, |r| r.end)
    }

    /// The number of `Q` limbs of the full chain.
    pub fn q_len(&self) -> usize {
        self.q.last().map_or(0, |r| r.end)
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

    #[test]
    fn ranges_cover_every_limb_once_and_evenly() {
        let p = LimbPartition::new(39, 10, 4).unwrap();
        let q: Vec<_> = (0..4).map(|k| p.q_range(k)).collect();
        assert_eq!(q, vec![0..10, 10..20, 20..30, 30..39]);
        let pr: Vec<_> = (0..4).map(|k| p.p_range(k)).collect();
        assert_eq!(pr, vec![0..3, 3..6, 6..8, 8..10]);
        assert_eq!((p.q_len(), p.p_len(), p.gpus()), (39, 10, 4));
        // At 15 limbs the last two GPUs hold no Q limb.
        assert_eq!(p.q_active(1, 15), 10..15);
        assert!(p.q_active(2, 15).is_empty() && p.q_active(3, 15).is_empty());
        // More GPUs than P limbs: some own none (allowed), none own two ranges.
        let p = LimbPartition::new(8, 1, 3).unwrap();
        assert_eq!(p.p_range(0), 0..1);
        assert!(p.p_range(2).is_empty());
        assert!(LimbPartition::new(3, 1, 4).is_err());
        assert!(LimbPartition::new(3, 1, 0).is_err());
    }

    #[test]
    fn traffic_is_what_the_others_own() {
        // N = 2^17, 39 Q limbs at the top, 10 P limbs, 2 GPUs: GPU 0 owns 20 + 5, GPU 1 19 + 5.
        let p = LimbPartition::new(39, 10, 2).unwrap();
        let n = 1 << 17;
        let t = p.keyswitch_traffic(39, n);
        assert_eq!(t[0].modup_bytes, 19 * n as u64 * 8);
        assert_eq!(t[1].modup_bytes, 20 * n as u64 * 8);
        assert_eq!(t[0].moddown_bytes, 2 * 5 * n as u64 * 8);
        assert_eq!(t[1].total(), (20 + 10) * n as u64 * 8);
        // One GPU: nothing moves.
        let one = LimbPartition::new(39, 10, 1).unwrap();
        assert_eq!(one.keyswitch_traffic(39, n)[0].total(), 0);
    }
}
