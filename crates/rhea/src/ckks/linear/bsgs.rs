//! The evaluation of a [`LinearTransform`]: baby-step/giant-step with double hoisting (or, for
//! [`DiagonalStorage::QOnly`], single hoisting over `Q_ℓ`).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::storage::{DiagonalStorage, Encodings};
use super::transform::{CacheKey, Plan, RotationKeys};
use super::LinearTransform;
use crate::backend::Poly;
use crate::ckks::{Ciphertext, Encoder, Evaluator};
use crate::error::{Error, Result};
use crate::rlwe::{check_two_components, KeySwitchKey};

/// A rotation's Galois element and key (`None` for the identity).
type Rot<'a> = Option<(u64, &'a KeySwitchKey)>;

/// One transform ready to run on one ciphertext: its giant-step chains with the rotation of
/// each link and its encoded diagonals.
struct Ready<'a> {
    lt: &'a LinearTransform,
    chains: Vec<Vec<(usize, Rot<'a>)>>,
    pts: Arc<Encodings>,
}

impl Evaluator {
    /// `M·v` for the plaintext matrix `M` of `lt` and the encrypted slot vector `v` of `ct`:
    /// one level consumed, the scale kept **exactly** (the diagonals are encoded at the scale
    /// `q_ℓ`, the prime the final rescaling divides by), `lt.keyswitches()` key switchings
    /// (`baby + giant − 2` at most). In either rescaling mode.
    ///
    /// Baby-step/giant-step with double hoisting (see the [module docs](crate::ckks::linear)):
    /// one ModUp of `c_1` shared by every baby rotation, the baby results and the per-giant sums
    /// kept over `Q_ℓ ∪ P`, one ModDown of `c_1` per non-zero giant step and one of the total
    /// (with [`DiagonalStorage::QOnly`]: each baby result brought down to `Q_ℓ`, the giant steps
    /// plain rotations over `Q_ℓ`).
    /// The diagonals are encoded at the first evaluation at a level (on this evaluator's device)
    /// and cached in `lt`.
    ///
    /// Errors: [`Error::SlotMismatch`] when `ct` has not `lt.slots()` slots,
    /// [`Error::LevelUnderflow`] at level 0, [`Error::MissingRotationKey`] naming the first
    /// rotation step of `lt.rotations()` without a key, [`Error::ParametersMismatch`] for a
    /// ciphertext of other parameters, [`Error::CiphertextDegree`] for a 3-component one,
    /// [`Error::ScaleOverflow`] if `scale · q_ℓ` does not fit at the level.
    pub fn linear_transform(&self, ct: &Ciphertext, lt: &LinearTransform) -> Result<Ciphertext> {
        let mut out = self.linear_transforms(ct, &[lt])?;
        out.pop()
            .ok_or_else(|| Error::InvalidInput("linear_transform: no result".into()))
    }

    /// Several transforms of one ciphertext (the channels of a layer, the real and imaginary
    /// parts of a product), each as [`Evaluator::linear_transform`] and bit-identical to it,
    /// sharing the ModUp of `c_1` and the baby rotations: the key switchings are the distinct
    /// non-zero baby steps of all the transforms plus each one's non-zero giant steps (and
    /// final sums), fewer than the transforms' [`LinearTransform::keyswitches`] added up when
    /// their baby steps overlap (same `n1`).
    ///
    /// Errors: as [`Evaluator::linear_transform`], for the first transform that fails (before
    /// any work).
    pub fn linear_transforms(
        &self,
        ct: &Ciphertext,
        lts: &[&LinearTransform],
    ) -> Result<Vec<Ciphertext>> {
        // The groups that share their baby steps: every hoisted transform, and chained
        // transforms with the same baby steps (a chain's gaps are its own transform's keys),
        // apart for baby steps over `Q_ℓ ∪ P` and over `Q_ℓ` ([`DiagonalStorage::QOnly`]).
        type GroupKey<'a> = (Option<&'a [usize]>, bool);
        let mut groups: Vec<(GroupKey<'_>, Vec<usize>)> = Vec::new();
        for (t, lt) in lts.iter().enumerate() {
            let key = (
                (lt.rotation_keys() == RotationKeys::Fewest).then(|| lt.plan().babies.as_slice()),
                lt.diagonal_storage() == DiagonalStorage::QOnly,
            );
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, ix)) => ix.push(t),
                None => groups.push((key, vec![t])),
            }
        }
        if groups.len() <= 1 {
            return self.linear_transforms_sharing_babies(ct, lts);
        }
        // Several groups: every transform's slots and keys checked before any group runs.
        for lt in lts {
            if ct.slots != lt.slots() {
                return Err(Error::SlotMismatch {
                    expected: lt.slots(),
                    found: ct.slots,
                });
            }
            for s in lt.rotations() {
                self.rotation_for(s as usize, lt.slots())?;
            }
        }
        let mut out: Vec<Option<Ciphertext>> = (0..lts.len()).map(|_| None).collect();
        for (_, ix) in &groups {
            let group: Vec<&LinearTransform> = ix.iter().map(|&t| lts[t]).collect();
            for (&t, c) in ix
                .iter()
                .zip(self.linear_transforms_sharing_babies(ct, &group)?)
            {
                out[t] = Some(c);
            }
        }
        out.into_iter()
            .map(|c| c.ok_or_else(|| Error::InvalidInput("linear_transforms: no result".into())))
            .collect()
    }

    /// [`Evaluator::linear_transforms`] for transforms that share their baby steps: all hoisted,
    /// or all chained over the same baby steps; all with their products over `Q_ℓ ∪ P`, or all
    /// over `Q_ℓ` ([`DiagonalStorage::QOnly`]).
    fn linear_transforms_sharing_babies(
        &self,
        ct: &Ciphertext,
        lts: &[&LinearTransform],
    ) -> Result<Vec<Ciphertext>> {
        const OP: &str = "linear_transform";
        self.check(OP, ct)?;
        check_two_components(OP, ct.parts.len())?;
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
        if lts.is_empty() {
            return Ok(Vec::new());
        }
        // Every key and every encoding first: nothing runs unless everything can.
        let chained = lts[0].rotation_keys() == RotationKeys::Fewest;
        let q_only = lts[0].diagonal_storage() == DiagonalStorage::QOnly;
        let mut babies: BTreeMap<usize, Rot<'_>> = BTreeMap::new();
        let mut ready = Vec::with_capacity(lts.len());
        for &lt in lts {
            if ct.slots != lt.slots() {
                return Err(Error::SlotMismatch {
                    expected: lt.slots(),
                    found: ct.slots,
                });
            }
            let plan = lt.plan();
            for &i in &plan.babies {
                babies.entry(i).or_insert(None);
            }
            let chains = plan
                .chains
                .iter()
                .map(|chain| {
                    chain
                        .iter()
                        .map(|l| Ok((l.giant, self.rotation_for(l.step, lt.slots())?)))
                        .collect::<Result<Vec<_>>>()
                })
                .collect::<Result<Vec<_>>>()?;
            if let Some((stride, count)) = lt.post_sum() {
                for s in Self::rotate_and_sum_rotations(lt.slots(), stride as i64, count) {
                    self.rotation_for(s as usize, lt.slots())?;
                }
            }
            ready.push(Ready {
                lt,
                chains,
                pts: Arc::new(Encodings(Vec::new())),
            });
        }
        // The rotation reaching each baby step: from the input (hoisted) or from the previous
        // baby step (chained: the group's transforms have the same baby steps).
        if chained {
            for (i, step) in lts[0].plan().baby_rotations(ct.slots) {
                babies.insert(i, self.rotation_for(step, ct.slots)?);
            }
        } else {
            for (&i, rot) in babies.iter_mut().filter(|(&i, _)| i != 0) {
                *rot = self.rotation_for(i, ct.slots)?;
            }
        }
        let key = CacheKey {
            params_id: ct.params_id,
            level,
            device: ctx.device(),
        };
        for r in &mut ready {
            let lt = r.lt;
            r.pts = lt.encoded(key, |storage| {
                Encoder::with_slots(ctx, lt.slots())?.encode_extended_batch(
                    &lt.prerotated(),
                    level,
                    pt_scale,
                    storage,
                )
            })?;
        }
        let babies: Vec<(usize, Rot<'_>)> = babies.into_iter().collect();
        let parts = self.on_pool(|| -> Result<Vec<Vec<Poly>>> {
            let baby = if chained {
                self.chained_baby_steps(ct, &babies, q_only)?
            } else {
                self.baby_steps(ct, &babies, q_only)?
            };
            ready
                .iter()
                .map(|r| {
                    let pts = r.pts.expand(ctx.ring())?;
                    self.giant_steps(&baby, r.lt.plan(), &r.chains, &pts.giants(), q_only)
                })
                .collect()
        })?;
        parts
            .into_iter()
            .zip(&ready)
            .map(|(parts, r)| {
                let out = Ciphertext {
                    parts,
                    scale: ct.scale,
                    slots: ct.slots,
                    params_id: ct.params_id,
                    seed: None,
                };
                match r.lt.post_sum() {
                    Some((stride, count)) => self.rotate_and_sum(&out, stride as i64, count),
                    None => Ok(out),
                }
            })
            .collect()
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

    /// The baby steps, indexed by step. Over `Q_ℓ ∪ P` (`q_only` false): `(P·c_0, P·c_1)` for
    /// the identity, `(σ_g(P·c_0 + u_0), σ_g(u_1))` from one shared ModUp of `c_1` for the
    /// others. Over `Q_ℓ` (`q_only`): `(c_0, c_1)` and the hoisted rotations, each with its
    /// ModDown.
    fn baby_steps(
        &self,
        ct: &Ciphertext,
        babies: &[(usize, Rot<'_>)],
        q_only: bool,
    ) -> Result<Vec<Option<[Poly; 2]>>> {
        let rlwe = self.context().rlwe();
        let ring = self.context().ring();
        let (c0, c1) = (&ct.parts[0], &ct.parts[1]);
        let c0p = if q_only {
            None
        } else {
            Some(ring.lift_times_p(c0)?)
        };
        let digits = if babies.iter().any(|(_, r)| r.is_some()) {
            Some(rlwe.decompose(c1)?)
        } else {
            None
        };
        let len = babies.iter().map(|&(i, _)| i + 1).max().unwrap_or(0);
        let mut baby: Vec<Option<[Poly; 2]>> = (0..len).map(|_| None).collect();
        for &(i, rot) in babies {
            baby[i] = Some(match (rot, &digits, &c0p) {
                (Some((g, key)), Some(d), Some(c0p)) => {
                    rlwe.automorphism_hoisted_extended(c0p, d, g, key)?
                }
                (Some((g, key)), Some(d), None) => pair(rlwe.automorphism_hoisted(c0, d, g, key)?)?,
                (_, _, Some(c0p)) => [c0p.try_clone()?, ring.lift_times_p(c1)?],
                (_, _, None) => [c0.try_clone()?, c1.try_clone()?],
            });
        }
        Ok(baby)
    }

    /// The baby steps as [`Evaluator::baby_steps`] gives them, each rotated from the previous
    /// one (`babies` ascending, each with the rotation by its gap): one full key switching per
    /// non-zero baby step, with the keys of [`RotationKeys::Fewest`].
    fn chained_baby_steps(
        &self,
        ct: &Ciphertext,
        babies: &[(usize, Rot<'_>)],
        q_only: bool,
    ) -> Result<Vec<Option<[Poly; 2]>>> {
        let ring = self.context().ring();
        let len = babies.iter().map(|&(i, _)| i + 1).max().unwrap_or(0);
        let mut baby: Vec<Option<[Poly; 2]>> = (0..len).map(|_| None).collect();
        let mut cur = if q_only {
            [ct.parts[0].try_clone()?, ct.parts[1].try_clone()?]
        } else {
            [
                ring.lift_times_p(&ct.parts[0])?,
                ring.lift_times_p(&ct.parts[1])?,
            ]
        };
        for &(i, rot) in babies {
            if let Some(rot) = rot {
                cur = self.rotate_pair(&cur, rot, q_only)?;
            }
            baby[i] = Some([cur[0].try_clone()?, cur[1].try_clone()?]);
        }
        Ok(baby)
    }

    /// `rot_g` of a pair: over `Q_ℓ` (`q_only`) a plain rotation; over `Q_ℓ ∪ P`, a pair that
    /// stands for `(a_0/P, a_1/P)`: `a_1` down to `Q_ℓ` (ModDown), decomposed and key-switched,
    /// the result kept over `Q_ℓ ∪ P` (`a_0` is already `P` times a `c_0`).
    fn rotate_pair(
        &self,
        a: &[Poly; 2],
        (g, key): (u64, &KeySwitchKey),
        q_only: bool,
    ) -> Result<[Poly; 2]> {
        let rlwe = self.context().rlwe();
        if q_only {
            return pair(rlwe.automorphism(a, g, key)?);
        }
        let a1 = self.context().ring().mod_down(&a[1])?;
        let d = rlwe.decompose(&a1)?;
        rlwe.automorphism_hoisted_extended(&a[0], &d, g, key)
    }

    /// The giant steps of one transform from the baby steps; returns the rescaled parts. The
    /// giant steps' plaintext products are summed over the baby steps' basis, all of them in
    /// one pass ([`crate::backend::RnsRing::sums_of_products`]: on the GPU each baby step and
    /// diagonal read once); the giant steps are chained by Horner's rule ([`Plan::chains`]),
    /// each link a rotation of the running sum ([`Evaluator::rotate_pair`]); every chain and the
    /// step `j = 0` are summed, then (over `Q_ℓ ∪ P`) one ModDown of each part, and the
    /// rescaling.
    fn giant_steps(
        &self,
        baby: &[Option<[Poly; 2]>],
        plan: &Plan,
        chains: &[Vec<(usize, Rot<'_>)>],
        pts: &[Vec<&Poly>],
        q_only: bool,
    ) -> Result<Vec<Poly>> {
        let ring = self.context().ring();
        // Every giant step's products in one pass over the baby steps (each read once).
        let giants: Vec<usize> = plan
            .giant_zero
            .into_iter()
            .chain(chains.iter().flatten().map(|&(giant, _)| giant))
            .collect();
        let present: Vec<usize> = (0..baby.len()).filter(|&i| baby[i].is_some()).collect();
        let right: Vec<[&Poly; 2]> = present
            .iter()
            .filter_map(|&i| baby[i].as_ref().map(|b| [&b[0], &b[1]]))
            .collect();
        let mut left: Vec<Vec<Option<&Poly>>> = Vec::with_capacity(giants.len());
        for &giant in &giants {
            let g = plan.giants.get(giant).ok_or_else(|| {
                Error::InvalidInput(format!("linear_transform: giant step {giant} missing"))
            })?;
            let pts = pts.get(giant).ok_or_else(|| {
                Error::InvalidInput(format!("linear_transform: diagonals of {giant} missing"))
            })?;
            let mut row = vec![None; right.len()];
            for (&(i, _), &pt) in g.terms.iter().zip(pts) {
                let t = present.binary_search(&i).map_err(|_| {
                    Error::InvalidInput(format!("linear_transform: baby step {i} missing"))
                })?;
                row[t] = Some(pt);
            }
            left.push(row);
        }
        let mut sums: Vec<Option<[Poly; 2]>> = ring
            .sums_of_products(&right, &left)?
            .into_iter()
            .map(Some)
            .collect();
        let mut products = |giant: usize| -> Result<[Poly; 2]> {
            giants
                .iter()
                .position(|&g| g == giant)
                .and_then(|k| sums[k].take())
                .ok_or_else(|| {
                    Error::InvalidInput(format!("linear_transform: giant step {giant} reused"))
                })
        };
        let mut total: Option<[Poly; 2]> = plan.giant_zero.map(&mut products).transpose()?;
        for chain in chains {
            let mut acc: Option<[Poly; 2]> = None;
            for &(giant, rot) in chain.iter().rev() {
                let mut sum = products(giant)?;
                if let Some([a0, a1]) = &acc {
                    ring.add_assign(&mut sum[0], a0)?;
                    ring.add_assign(&mut sum[1], a1)?;
                }
                acc = Some(match rot {
                    Some(rot) => self.rotate_pair(&sum, rot, q_only)?,
                    None => sum,
                });
            }
            match (&mut total, acc) {
                (_, None) => {}
                (None, acc) => total = acc,
                (Some([t0, t1]), Some([a0, a1])) => {
                    ring.add_assign(t0, &a0)?;
                    ring.add_assign(t1, &a1)?;
                }
            }
        }
        let [t0, t1] = total.ok_or_else(|| {
            Error::InvalidInput("linear_transform: a transform without diagonals".into())
        })?;
        if q_only {
            return ring.rescale_many(&[t0, t1]);
        }
        let down = [ring.mod_down(&t0)?, ring.mod_down(&t1)?];
        ring.rescale_many(&down)
    }
}

/// The two parts of a rotated ciphertext as a pair.
fn pair(parts: Vec<Poly>) -> Result<[Poly; 2]> {
    let found = parts.len();
    <[Poly; 2]>::try_from(parts).map_err(|_| Error::CiphertextDegree {
        op: "linear_transform",
        expected: 2,
        found,
        hint: "a rotation returned another number of parts",
    })
}
