//! The evaluation of a [`LinearTransform`]: baby-step/giant-step with double hoisting.

use super::transform::{CacheKey, Giant};
use super::LinearTransform;
use crate::backend::Poly;
use crate::ckks::{Ciphertext, Encoder, Evaluator};
use crate::error::{Error, Result};
use crate::rlwe::{check_two_components, KeySwitchKey};

/// A rotation's Galois element and key (`None` for the identity).
type Rot<'a> = Option<(u64, &'a KeySwitchKey)>;

impl Evaluator {
    /// `M·v` for the plaintext matrix `M` of `lt` and the encrypted slot vector `v` of `ct`:
    /// one level consumed, the scale kept **exactly** (the diagonals are encoded at the scale
    /// `q_ℓ`, the prime the final rescaling divides by), `lt.keyswitches()` key switchings
    /// (`baby + giant − 2` at most). In either rescaling mode.
    ///
    /// Baby-step/giant-step with double hoisting (see the [module docs](crate::ckks::linear)):
    /// one ModUp of `c_1` shared by every baby rotation, the baby results and the per-giant sums
    /// kept over `Q_ℓ ∪ P`, one ModDown of `c_1` per non-zero giant step and one of the total.
    /// The diagonals are encoded at the first evaluation at a level (on this evaluator's device)
    /// and cached in `lt`.
    ///
    /// Errors: [`Error::SlotMismatch`] when `ct` has not `lt.slots()` slots,
    /// [`Error::LevelUnderflow`] at level 0, [`Error::MissingRotationKey`] naming the first
    /// rotation step of `lt.rotations()` without a key, [`Error::ParametersMismatch`] for a
    /// ciphertext of other parameters, [`Error::CiphertextDegree`] for a 3-component one,
    /// [`Error::ScaleOverflow`] if `scale · q_ℓ` does not fit at the level.
    pub fn linear_transform(&self, ct: &Ciphertext, lt: &LinearTransform) -> Result<Ciphertext> {
        const OP: &str = "linear_transform";
        self.check(OP, ct)?;
        check_two_components(OP, ct.parts.len())?;
        if ct.slots != lt.slots() {
            return Err(Error::SlotMismatch {
                expected: lt.slots(),
                found: ct.slots,
            });
        }
        let level = ct.level();
        if level == 0 {
            return Err(Error::LevelUnderflow {
                op: OP,
                level,
                needed: 1,
            });
        }
        let ctx = self.context();
        let pt_scale = ctx.params().q_primes()[level] as f64;
        self.check_fits(OP, ct.scale * pt_scale, level)?;
        let plan = lt.plan();
        let babies = plan
            .babies
            .iter()
            .map(|&i| Ok((i, self.rotation_for(i, lt.slots())?)))
            .collect::<Result<Vec<_>>>()?;
        let giants = plan
            .giants
            .iter()
            .map(|g| Ok((g, self.rotation_for(g.j * plan.n1, lt.slots())?)))
            .collect::<Result<Vec<_>>>()?;
        let key = CacheKey {
            params_id: ct.params_id,
            level,
            device: ctx.device(),
        };
        let pts = lt.encoded(key, || {
            Encoder::with_slots(ctx, lt.slots())?.encode_extended_batch(
                &lt.prerotated(),
                level,
                pt_scale,
            )
        })?;
        if let Some((stride, count)) = lt.post_sum() {
            for s in Self::rotate_and_sum_rotations(lt.slots(), stride as i64, count) {
                self.rotation_for(s as usize, lt.slots())?;
            }
        }
        let parts = self.on_pool(|| self.bsgs(ct, plan.n1, &babies, &giants, &pts))?;
        let out = Ciphertext {
            parts,
            scale: ct.scale,
            slots: ct.slots,
            params_id: ct.params_id,
            seed: None,
        };
        match lt.post_sum() {
            Some((stride, count)) => self.rotate_and_sum(&out, stride as i64, count),
            None => Ok(out),
        }
    }

    /// `ct` rotated left by `step` slots with the key [`Evaluator::rotation_for`] finds (a copy
    /// for a multiple of the slot count).
    pub(super) fn rotate_slots(&self, ct: &Ciphertext, step: i64) -> Result<Ciphertext> {
        let slots = ct.slots;
        match self.rotation_for(step.rem_euclid(slots as i64) as usize, slots)? {
            None => ct.try_clone(),
            Some((g, key)) => {
                let parts =
                    self.on_pool(|| self.context().rlwe().automorphism(&ct.parts, g, key))?;
                Ok(Ciphertext {
                    parts,
                    scale: ct.scale,
                    slots,
                    params_id: ct.params_id,
                    seed: None,
                })
            }
        }
    }

    /// The Galois element and key of a rotation by `step ∈ [0, slots)` (`None` for 0); for
    /// sparse slots a key for `step − slots` (the same rotation of the slots) is accepted too.
    /// Errors: [`Error::MissingRotationKey`] naming `step`.
    pub(super) fn rotation_for(&self, step: usize, slots: usize) -> Result<Rot<'_>> {
        let step = (step % slots) as i64;
        if step == 0 {
            return Ok(None);
        }
        let rlwe = self.context().rlwe();
        let g = rlwe.galois_element_for_rotation(step);
        match self.keys.galois_key(g, Some(step)) {
            Ok(k) => Ok(Some((g, k))),
            Err(e) => {
                let g2 = rlwe.galois_element_for_rotation(step - slots as i64);
                match self.keys.galois_key(g2, Some(step)) {
                    Ok(k) if g2 != g => Ok(Some((g2, k))),
                    _ => Err(e),
                }
            }
        }
    }

    /// The double-hoisted BSGS sum over the ring primitives (see
    /// [`Evaluator::linear_transform`]); returns the rescaled parts.
    fn bsgs(
        &self,
        ct: &Ciphertext,
        n1: usize,
        babies: &[(usize, Rot<'_>)],
        giants: &[(&Giant, Rot<'_>)],
        pts: &[Vec<Poly>],
    ) -> Result<Vec<Poly>> {
        let rlwe = self.context().rlwe();
        let ring = self.context().ring();
        let (c0, c1) = (&ct.parts[0], &ct.parts[1]);
        // Baby steps over Q_ℓ ∪ P: (P·c0, P·c1) for the identity, σ_g(P·c0 + u0), σ_g(u1)
        // from one shared ModUp of c1 for the others.
        let c0p = ring.lift_times_p(c0)?;
        let digits = if babies.iter().any(|(_, r)| r.is_some()) {
            Some(rlwe.decompose(c1)?)
        } else {
            None
        };
        let mut baby: Vec<Option<[Poly; 2]>> = (0..n1).map(|_| None).collect();
        for &(i, rot) in babies {
            baby[i] = Some(match (rot, &digits) {
                (Some((g, key)), Some(d)) => rlwe.automorphism_hoisted_extended(&c0p, d, g, key)?,
                _ => [c0p.try_clone()?, ring.lift_times_p(c1)?],
            });
        }
        // Giant steps: the plaintext products summed over Q_ℓ ∪ P; for j ≠ 0 the sum's c1 goes
        // down to Q_ℓ (ModDown) and is key-switched, its c0 stays over Q_ℓ ∪ P (it is already
        // P times a c0) and the rotated result too; every giant result is summed there.
        let mut total: Option<[Poly; 2]> = None;
        for ((giant, rot), pts) in giants.iter().zip(pts) {
            let mut acc: Option<[Poly; 2]> = None;
            for (&(i, _), pt) in giant.terms.iter().zip(pts) {
                let b = baby[i].as_ref().ok_or_else(|| {
                    Error::InvalidInput(format!("linear_transform: baby step {i} missing"))
                })?;
                match &mut acc {
                    None => acc = Some([ring.mul(&b[0], pt)?, ring.mul(&b[1], pt)?]),
                    Some([a0, a1]) => {
                        ring.mul_add_assign(a0, &b[0], pt)?;
                        ring.mul_add_assign(a1, &b[1], pt)?;
                    }
                }
            }
            let Some([a0, a1]) = acc else {
                continue;
            };
            let r = match rot {
                None => [a0, a1],
                Some((g, key)) => {
                    let a1 = ring.mod_down(&a1)?;
                    let d = rlwe.decompose(&a1)?;
                    rlwe.automorphism_hoisted_extended(&a0, &d, *g, key)?
                }
            };
            match &mut total {
                None => total = Some(r),
                Some([t0, t1]) => {
                    ring.add_assign(t0, &r[0])?;
                    ring.add_assign(t1, &r[1])?;
                }
            }
        }
        let [t0, t1] = total.ok_or_else(|| {
            Error::InvalidInput("linear_transform: a transform without diagonals".into())
        })?;
        let down = [ring.mod_down(&t0)?, ring.mod_down(&t1)?];
        ring.rescale_many(&down)
    }
}
