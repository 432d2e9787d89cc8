//! The key-switching operations of a [`GpuGroup`]: [`GpuGroup::mul_relin`], [`GpuGroup::rotate`]
//! and the hoisted [`GpuGroup::rotate_many`], each split by limb over the group
//! (`keyswitch.rs` holds the key switching itself).

use super::objects::{clone_parts, PartitionedCiphertext, PartitionedGaloisKeys, PartitionedKey};
use super::GpuGroup;
use crate::error::{Error, Result};

impl GpuGroup {
    /// `a · b` relinearised, not rescaled: the words of [`Evaluator::mul_relin`](crate::ckks::Evaluator::mul_relin) on one device,
    /// with the key switching split over the group.
    ///
    /// Errors: [`Error::GroupMismatch`] for a ciphertext or key that another group split
    /// (another partition rule or other GPUs); [`Error::InvalidInput`] for operands of other
    /// shapes or levels; [`Error::ParametersMismatch`]; the evaluator's scale checks; device
    /// and NCCL errors; [`Error::GroupFailed`] (naming the GPU) or [`Error::CollectiveTimeout`]
    /// when a GPU fails or stops answering while the operation's work runs, and for every
    /// call once the group has failed ([`GpuGroup::failure`]).
    pub fn mul_relin(
        &self,
        a: &PartitionedCiphertext,
        b: &PartitionedCiphertext,
        rlk: &PartitionedKey,
    ) -> Result<PartitionedCiphertext> {
        self.guarded(|| self.mul_relin_queued(a, b, rlk))
    }

    /// [`GpuGroup::mul_relin`] without the final wait.
    pub(super) fn mul_relin_queued(
        &self,
        a: &PartitionedCiphertext,
        b: &PartitionedCiphertext,
        rlk: &PartitionedKey,
    ) -> Result<PartitionedCiphertext> {
        self.check("mul_relin", a, 2)?;
        self.check("mul_relin", b, 2)?;
        self.check_key("mul_relin", rlk)?;
        if a.ell != b.ell {
            return Err(Error::InvalidInput(format!(
                "mul_relin: levels {} and {} (bring them to one level first)",
                a.level(),
                b.level()
            )));
        }
        let scale = a.scale * b.scale;
        self.eval.check_fits("mul_relin", scale, a.level())?;
        let [d0, d1, d2] = self.tensor(a, b)?;
        let [c0, c1] = self.keyswitch(a.ell, &d2, rlk, [Some(&d0), Some(&d1)], None)?;
        Ok(PartitionedCiphertext {
            parts: vec![c0, c1],
            ell: a.ell,
            scale,
            slots: a.slots,
            params_id: a.params_id,
            split: self.split.clone(),
        })
    }

    /// The rotation of the slots by `step`: the words of [`Evaluator::rotate`](crate::ckks::Evaluator::rotate) on one device.
    /// Step 0 (or any multiple of `N/2`, Galois element 1) gives a copy.
    ///
    /// Errors: [`Error::MissingRotationKey`] without the step's key in `keys`; as
    /// [`GpuGroup::mul_relin`].
    pub fn rotate(
        &self,
        ct: &PartitionedCiphertext,
        step: i64,
        keys: &PartitionedGaloisKeys,
    ) -> Result<PartitionedCiphertext> {
        self.rotations("rotate", ct, &[step], keys)?
            .pop()
            .ok_or_else(|| Error::InvalidInput("rotate: no result".into()))
    }

    /// The rotations of the slots by each of `steps`, one result per step, in order, sharing
    /// one distributed ModUp of `c_1` (hoisting: one all-gather of the input limbs and one
    /// decomposition for all of them); each rotation then runs only its inner product, its
    /// ModDown (one exchange of the `P` limbs) and the permutation. Each result has the words
    /// of [`GpuGroup::rotate`] by its step and of [`Evaluator::rotate`](crate::ckks::Evaluator::rotate) (and
    /// [`Evaluator::rotate_hoisted`](crate::ckks::Evaluator::rotate_hoisted)) on one device. Steps with Galois element 1 (0, multiples
    /// of `N/2`) give copies; a repeated step (or one of the same element) is computed once
    /// and copied; with one keyed step this is [`GpuGroup::rotate`]. No steps, no results.
    ///
    /// ```no_run
    /// # use rhea::ckks::{CkksContext, Encoder, Encryptor, KeyGenerator};
    /// # use rhea::params::CkksParametersLiteral;
    /// # use rhea::unstable::multi::GpuGroup;
    /// # use rhea::Device;
    /// # let params = CkksParametersLiteral::n13_logqp200_levels2().build()?;
    /// # let ctx = CkksContext::new(&params, Device::Cpu)?;
    /// # let mut keygen = KeyGenerator::from_seed(&ctx, [1; 32]);
    /// # let sk = keygen.secret_key()?;
    /// # let ct = Encryptor::with_secret_key(&ctx, &sk)?.encrypt(&Encoder::new(&ctx)?.encode(&[0.5])?)?;
    /// let steps = [1, 2, -4, 0];
    /// let gk = keygen.galois_keys(&sk, &steps, false)?;
    /// let group = GpuGroup::new(&ctx, &Device::all_gpus())?;
    /// let keys = group.partition_rotation_keys(&gk, &steps)?;
    /// let x = group.scatter(&ct)?;
    /// let r = group.rotate_many(&x, &steps, &keys)?; // one ModUp, three ModDowns, one copy
    /// assert_eq!(r.len(), steps.len());
    /// # Ok::<(), rhea::Error>(())
    /// ```
    ///
    /// Errors (all before any GPU work): [`Error::MissingRotationKey`] for the first step
    /// without a key in `keys`; [`Error::GroupMismatch`] for a ciphertext or key that another
    /// group split; [`Error::InvalidInput`] for a ciphertext of other than 2 components or not
    /// of this group's limbs; [`Error::ParametersMismatch`]; then device and NCCL errors.
    pub fn rotate_many(
        &self,
        ct: &PartitionedCiphertext,
        steps: &[i64],
        keys: &PartitionedGaloisKeys,
    ) -> Result<Vec<PartitionedCiphertext>> {
        self.rotations("rotate_many", ct, steps, keys)
    }

    /// The complex conjugate of every slot: the words of
    /// [`Evaluator::conjugate`](crate::ckks::Evaluator::conjugate) on one device, the key
    /// switching split over the group as a rotation's.
    ///
    /// Errors: [`Error::MissingConjugationKey`] without the conjugation key in `keys`
    /// ([`GpuGroup::partition_conjugation_key`]); as [`GpuGroup::mul_relin`].
    pub fn conjugate(
        &self,
        ct: &PartitionedCiphertext,
        keys: &PartitionedGaloisKeys,
    ) -> Result<PartitionedCiphertext> {
        let g = self.ctx.rlwe().galois_element_for_conjugation();
        let missing = |_: usize| Error::MissingConjugationKey { galois_element: g };
        self.guarded(|| self.automorphisms("conjugate", ct, &[g], keys, missing))?
            .pop()
            .ok_or_else(|| Error::InvalidInput("conjugate: no result".into()))
    }

    /// [`GpuGroup::rotate_many`] as `op`.
    fn rotations(
        &self,
        op: &'static str,
        ct: &PartitionedCiphertext,
        steps: &[i64],
        keys: &PartitionedGaloisKeys,
    ) -> Result<Vec<PartitionedCiphertext>> {
        let rlwe = self.ctx.rlwe();
        let elements: Vec<u64> = steps
            .iter()
            .map(|&s| rlwe.galois_element_for_rotation(s))
            .collect();
        let missing = |i: usize| Error::MissingRotationKey {
            step: steps[i],
            galois_element: elements[i],
        };
        self.guarded(|| self.automorphisms(op, ct, &elements, keys, missing))
    }

    /// The automorphisms `σ_g` of `ct` for each of `elements` (one result each, in order), the
    /// key switchings sharing one ModUp; `missing(i)` is the error for element `i` without a
    /// key. The collectives, the same on every GPU in this order: none without a keyed element
    /// (element 1 is a copy); else the ModUp's all-gather (or its per-digit stages), then one
    /// ModDown exchange per distinct keyed element, in the order of their first appearance.
    /// Every check runs before the first. Does not wait for the work.
    fn automorphisms(
        &self,
        op: &'static str,
        ct: &PartitionedCiphertext,
        elements: &[u64],
        keys: &PartitionedGaloisKeys,
        missing: impl Fn(usize) -> Error,
    ) -> Result<Vec<PartitionedCiphertext>> {
        self.check(op, ct, 2)?;
        let plan = elements
            .iter()
            .enumerate()
            .map(|(i, &g)| {
                if g == 1 {
                    return Ok((g, None));
                }
                let key = keys.keys.get(&g).ok_or_else(|| missing(i))?;
                self.check_key(op, key)?;
                Ok((g, Some(key)))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut keyed: Vec<u64> = Vec::new();
        for (g, key) in &plan {
            if key.is_some() && !keyed.contains(g) {
                keyed.push(*g);
            }
        }
        let mut dec = None;
        if !keyed.is_empty() {
            let digits = self.check_decomposable(ct.ell, &ct.parts[1])?;
            for (_, key) in &plan {
                if let Some(key) = key {
                    self.check_key_digits(key, digits)?;
                }
            }
            // One element: the unshared ModUp, whose inner product fuses the forward NTT's
            // row phase (`rotate`'s path); several: the digits finished in NTT form once.
            dec = Some(self.decompose(ct.ell, &ct.parts[1], keyed.len() > 1)?);
        }
        let mut done: Vec<(u64, usize)> = Vec::new();
        let mut out: Vec<PartitionedCiphertext> = Vec::with_capacity(elements.len());
        for (g, key) in plan {
            let parts = match (key, dec.as_mut()) {
                (Some(key), Some(dec)) => match done.iter().find(|(h, _)| *h == g) {
                    Some(&(_, i)) => clone_parts(&out[i].parts)?,
                    None => {
                        let adds = [Some(&ct.parts[0][..]), None];
                        let d = &ct.parts[1];
                        let [c0, c1] = self.keyswitch_from(dec, d, key, adds, Some(g))?;
                        done.push((g, out.len()));
                        vec![c0, c1]
                    }
                },
                _ => clone_parts(&ct.parts)?,
            };
            out.push(PartitionedCiphertext {
                parts,
                ell: ct.ell,
                scale: ct.scale,
                slots: ct.slots,
                params_id: ct.params_id,
                split: self.split.clone(),
            });
        }
        Ok(out)
    }
}
