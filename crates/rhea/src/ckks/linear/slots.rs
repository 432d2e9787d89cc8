//! Slot utilities: sums over slots, replication, inner products.

use num_complex::Complex64;

use super::LinearTransform;
use crate::ckks::{Ciphertext, Evaluator};
use crate::error::{Error, Result};

/// The rotations of [`Evaluator::rotate_and_sum`], in evaluation order: `(step, doubling)` with
/// `doubling` for `acc ← acc + rot(acc)` and not for `res ← res + rot(acc)`; steps reduced to
/// `[0, slots)`.
fn rotate_and_sum_plan(slots: usize, stride: i64, count: usize) -> Vec<(i64, bool)> {
    let norm = |k: i64| k.rem_euclid(slots as i64);
    let mut plan = Vec::new();
    let mut offset = 0i64;
    let mut t = 0;
    while count >> t != 0 {
        if (count >> t) & 1 == 1 {
            plan.push((norm(offset.wrapping_mul(stride)), false));
            offset += 1 << t;
        }
        if count >> (t + 1) != 0 {
            plan.push((norm((1i64 << t).wrapping_mul(stride)), true));
        }
        t += 1;
    }
    plan
}

fn steps_of(plan: &[(i64, bool)]) -> Vec<i64> {
    let mut steps: Vec<i64> = plan.iter().map(|&(s, _)| s).filter(|&s| s != 0).collect();
    steps.sort_unstable();
    steps.dedup();
    steps
}

impl Evaluator {
    /// The rotation steps [`Evaluator::sum_slots`] needs at `slots` slots: `1, 2, 4, …,
    /// slots/2`.
    pub fn sum_slots_rotations(slots: usize) -> Vec<i64> {
        (0..slots.max(1).trailing_zeros())
            .map(|t| 1i64 << t)
            .collect()
    }

    /// Every slot gets the sum of all slots. No level, `log2(slots)` key switchings (rotations
    /// by [`Evaluator::sum_slots_rotations`]); scale and level kept.
    ///
    /// Errors: [`Error::MissingRotationKey`] for a missing step; those of
    /// [`Evaluator::rotate`].
    pub fn sum_slots(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.rotate_and_sum(ct, 1, ct.slots())
    }

    /// The rotation steps [`Evaluator::rotate_and_sum`]`(·, stride, count)` needs at `slots`
    /// slots (reduced to `[1, slots)`, ascending): `stride·2^t` for the doublings and
    /// `stride·o` for the offsets `o` of the set bits of `count`; at most `2·log2(count)`.
    pub fn rotate_and_sum_rotations(slots: usize, stride: i64, count: usize) -> Vec<i64> {
        if slots == 0 {
            return Vec::new();
        }
        steps_of(&rotate_and_sum_plan(slots, stride, count))
    }

    /// `Σ_{i < count} rot_{i·stride}(ct)` (left rotations; slot `t` gets `Σ_i ct[t + i·stride]`).
    /// No level; `⌊log2 count⌋ + popcount(count) − 1` key switchings at most (fewer when a step
    /// is a multiple of the slot count), for `count` a power of two `log2(count)`; the steps of
    /// [`Evaluator::rotate_and_sum_rotations`]. Scale and level kept.
    ///
    /// Errors: [`Error::InvalidInput`] for `count = 0`; [`Error::MissingRotationKey`] for a
    /// missing step; those of [`Evaluator::rotate`].
    pub fn rotate_and_sum(&self, ct: &Ciphertext, stride: i64, count: usize) -> Result<Ciphertext> {
        self.check("rotate_and_sum", ct)?;
        if count == 0 {
            return Err(Error::InvalidInput(
                "rotate_and_sum: count must be at least 1".into(),
            ));
        }
        let plan = rotate_and_sum_plan(ct.slots(), stride, count);
        // Fail before any work on a missing key.
        for s in steps_of(&plan) {
            self.rotation_for(s as usize, ct.slots())?;
        }
        let rot = |x: &Ciphertext, s: i64| self.rotate_slots(x, s);
        let mut acc = ct.try_clone()?;
        let mut res: Option<Ciphertext> = None;
        for (s, doubling) in plan {
            if doubling {
                let r = rot(&acc, s)?;
                acc = self.add(&acc, &r)?;
            } else {
                let r = rot(&acc, s)?;
                res = Some(match res {
                    None => r,
                    Some(x) => self.add(&x, &r)?,
                });
            }
        }
        res.ok_or_else(|| Error::InvalidInput("rotate_and_sum: empty plan".into()))
    }

    /// The rotation steps [`Evaluator::replicate`] needs (those of
    /// [`Evaluator::sum_slots_rotations`]).
    pub fn replicate_rotations(slots: usize) -> Vec<i64> {
        Self::sum_slots_rotations(slots)
    }

    /// Slot `slot`'s value copied to every slot: a mask (a one-diagonal
    /// [`LinearTransform`]: one level, the scale kept exactly, no key switching) then
    /// [`Evaluator::sum_slots`] (`log2(slots)` key switchings). One level in all.
    ///
    /// Errors: [`Error::InvalidInput`] for `slot ≥ slots`; [`Error::LevelUnderflow`] at level
    /// 0; [`Error::MissingRotationKey`] for a missing step.
    pub fn replicate(&self, ct: &Ciphertext, slot: usize) -> Result<Ciphertext> {
        self.check("replicate", ct)?;
        let slots = ct.slots();
        if slot >= slots {
            return Err(Error::InvalidInput(format!(
                "replicate: slot {slot} of {slots}"
            )));
        }
        for s in Self::replicate_rotations(slots) {
            self.rotation_for(s as usize, slots)?;
        }
        let mut mask = vec![Complex64::new(0.0, 0.0); slots];
        mask[slot] = Complex64::new(1.0, 0.0);
        let lt = LinearTransform::from_diagonals(slots, [(0, mask)])?;
        let masked = self.linear_transform(ct, &lt)?;
        self.sum_slots(&masked)
    }

    /// The rotation steps [`Evaluator::inner_product`] needs (those of
    /// [`Evaluator::sum_slots_rotations`]).
    pub fn inner_product_rotations(slots: usize) -> Vec<i64> {
        Self::sum_slots_rotations(slots)
    }

    /// `Σ_i a_i·b_i` in every slot: [`Evaluator::mul_relin_rescale`] then
    /// [`Evaluator::sum_slots`]. One level (below the lower operand's), scale `a.scale · b.scale
    /// / q_ℓ` (that of [`Evaluator::mul_relin_rescale`]), `1 + log2(slots)` key switchings;
    /// needs the relinearisation key.
    ///
    /// Errors: those of [`Evaluator::mul_relin_rescale`] and [`Evaluator::sum_slots`].
    pub fn inner_product(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.check("inner_product", a)?;
        self.check("inner_product", b)?;
        if a.slots() != b.slots() {
            return Err(Error::SlotMismatch {
                expected: a.slots(),
                found: b.slots(),
            });
        }
        for s in Self::inner_product_rotations(a.slots()) {
            self.rotation_for(s as usize, a.slots())?;
        }
        let p = self.mul_relin_rescale(a, b)?;
        self.sum_slots(&p)
    }
}

#[cfg(test)]
mod tests {
    use super::rotate_and_sum_plan;

    /// The plan sums exactly the rotations `0, stride, …, (count−1)·stride`.
    #[test]
    fn rotate_and_sum_plan_covers_each_offset_once() {
        for slots in [8usize, 64] {
            for stride in [1i64, 3, -2] {
                for count in 1..=20usize {
                    // Simulate on multisets of offsets.
                    let mut acc = vec![0i64];
                    let mut res: Vec<i64> = Vec::new();
                    for (s, doubling) in rotate_and_sum_plan(slots, stride, count) {
                        let shifted: Vec<i64> = acc.iter().map(|&o| o + s).collect();
                        if doubling {
                            acc.extend(shifted);
                        } else {
                            res.extend(shifted);
                        }
                    }
                    let m = slots as i64;
                    let mut got: Vec<i64> = res.iter().map(|o| o.rem_euclid(m)).collect();
                    let mut want: Vec<i64> = (0..count as i64)
                        .map(|i| (i * stride).rem_euclid(m))
                        .collect();
                    got.sort_unstable();
                    want.sort_unstable();
                    assert_eq!(got, want, "slots {slots} stride {stride} count {count}");
                }
            }
        }
    }
}
