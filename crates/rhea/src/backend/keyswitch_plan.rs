//! [`KeySwitchPlan`]: the hybrid key-switching plan of one ring, computed once on the host and
//! consumed by both backends.

use std::ops::Range;

use rhea_math::basis::Basis;
use rhea_math::bconv::{BaseConverter, ModDown, ModUp};

use crate::error::Result;

/// Everything hybrid key switching needs besides the NTT tables, for every level of one
/// `Q ∪ P` ring with `dnum` digits: the digits and, per (digit, active length), the ModUp
/// converter with its output layout ([`ModUp::output_columns`]); per level the ModDown
/// conversion `P → Q_ℓ`; `P^{-1} mod q_i` and `[P]_{q_i}` (the keys' gadget factor).
///
/// Built once with its [`RnsRing`](crate::unstable::RnsRing). The CPU backend reads these tables
/// directly; a GPU uploads the same objects when the ring is first used there
/// (`rhea_cuda::bconv::DeviceModUp` wraps the [`ModUp`], the ModDown converters are copied per
/// level), so both run one plan, word for word.
#[derive(Clone, Debug)]
pub struct KeySwitchPlan {
    mod_up: ModUp,
    mod_down: ModDown,
    /// `mod_down_conv[ℓ - 1]`: the fast conversion `P → {q_0..q_{ℓ-1}}`.
    mod_down_conv: Vec<BaseConverter>,
    /// `[P]_{q_i}` for every Q prime.
    p_mod_q: Vec<u64>,
}

impl KeySwitchPlan {
    /// The plan for the chain `q`, the special primes `p` and `dnum` digits.
    ///
    /// Errors: the `rhea-math` errors for bases that are not coprime or a `dnum` outside
    /// `1..=|Q|`.
    pub(crate) fn new(q: &Basis, p: &Basis, dnum: usize) -> Result<Self> {
        let mod_up = ModUp::new(q, p, dnum)?;
        let mod_down = ModDown::new(q, p)?;
        let mod_down_conv = (1..=q.len())
            .map(|l| BaseConverter::new(p, &q.prefix(l)?))
            .collect::<rhea_math::Result<Vec<_>>>()?;
        let p_mod_q = q
            .moduli()
            .iter()
            .map(|m| {
                p.values()
                    .iter()
                    .fold(1u64, |acc, &pi| m.mul(acc, m.reduce(pi)))
            })
            .collect();
        Ok(Self {
            mod_up,
            mod_down,
            mod_down_conv,
            p_mod_q,
        })
    }

    /// The number of digits.
    pub fn dnum(&self) -> usize {
        self.mod_up.dnum()
    }

    /// The `Q` limb ranges of the digits.
    pub fn digits(&self) -> &[Range<usize>] {
        self.mod_up.digits()
    }

    /// The number of digits with an active limb when `q_limbs` Q limbs are active.
    pub fn active_digits(&self, q_limbs: usize) -> usize {
        self.mod_up.active_digits(q_limbs)
    }

    /// ModUp: digits, converters and their output layout.
    pub fn mod_up(&self) -> &ModUp {
        &self.mod_up
    }

    /// ModDown's `P^{-1} mod q_i` tables.
    pub fn mod_down(&self) -> &ModDown {
        &self.mod_down
    }

    /// The fast conversion `P → Q_ℓ` ModDown uses at `q_limbs = ℓ` (`1 ≤ ℓ ≤ |Q|`).
    pub fn mod_down_converter(&self, q_limbs: usize) -> &BaseConverter {
        &self.mod_down_conv[q_limbs - 1]
    }

    /// `[P]_{q_i}` for every Q prime.
    pub fn p_mod_q(&self) -> &[u64] {
        &self.p_mod_q
    }
}
