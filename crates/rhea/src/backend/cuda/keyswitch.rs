//! Key switching: the fused inner products and the ModDown tails (plain, lifted, rescaling).

use super::*;

impl GpuRing {
    /// Key switching of one NTT-form polynomial `input` over `Q_ℓ`, to the end: the twin of
    /// [`GpuRing::mod_up`] then [`GpuRing::keyswitch_moddown`] (no inner addends; with
    /// [`KsTail::Automorphism`] its results permuted) or, with [`KsTail::Rescale`],
    /// [`GpuRing::keyswitch_moddown_rescale`], bit for bit. The ModUp's forward row
    /// phase and the inner product run as one kernel
    /// ([`DeviceNttTables::forward_rows_keyswitch`]): the digits' transformed limbs never go
    /// through device memory and their own limbs are read from `input` (no copies). Launches:
    /// inverse NTT (2), conversion (1), column phase (1 per 24 runs), fused rows and inner
    /// product (1), then the ModDown tail. Beyond `ntt_keyswitch::MAX_DIGITS` digits, or
    /// without the fast NTT, the composition.
    pub(crate) fn keyswitch_poly(
        &self,
        ring: &RnsRing,
        ell: usize,
        input: &DeviceBuffer,
        keys: &[(&DeviceBuffer, &DeviceBuffer)],
        adds: [Option<&DeviceBuffer>; 2],
        tail: KsTail,
    ) -> Result<[DeviceBuffer; 2]> {
        let n = ring.n();
        let rescale = tail == KsTail::Rescale;
        let galois = match tail {
            KsTail::Automorphism(g) => Some(g),
            _ => None,
        };
        if rescale && ell < 2 {
            return Err(Error::InvalidInput(format!(
                "keyswitch_moddown_rescale at {ell} limb(s): rescaling needs 2"
            )));
        }
        let digits = ring.active_digits(ell);
        if !self.ntt.has_fast_kernels() || digits > ntt_keyswitch::MAX_DIGITS {
            let ds = self.mod_up(ring, ell, input)?;
            let refs: Vec<&DeviceBuffer> = ds.iter().collect();
            return if rescale {
                self.keyswitch_moddown_rescale(ring, ell, &refs, keys, adds)
            } else {
                self.keyswitch_moddown(ring, ell, &refs, keys, [None, None], adds, galois)
            };
        }
        if keys.len() < digits {
            return Err(Error::InvalidInput(format!(
                "key switching: {} key parts for {digits} digits",
                keys.len()
            )));
        }
        let (mut converted, runs) = self.mod_up_converted(ring, ell, input)?;
        for chunk in runs.chunks(MAX_RUNS) {
            let mut bufs: Vec<&mut DeviceBuffer> = converted.iter_mut().collect();
            self.ntt.forward_columns_runs(&mut bufs, chunk)?;
        }
        let kd: Vec<KsDigit<'_>> = converted
            .iter()
            .zip(keys)
            .enumerate()
            .map(|(d, (c, (b, a)))| KsDigit {
                converted: c,
                own: Self::own_limbs(ring, d, ell),
                key_b: b,
                key_a: a,
            })
            .collect();
        let width = ell + ring.p_len();
        let mut acc = self.alloc(2 * width * n)?;
        self.ntt
            .forward_rows_keyswitch(input, ell, self.q_len, &self.full, &kd, &mut acc)?;
        drop(kd);
        drop(converted);
        if rescale {
            self.moddown_rescale_from_inner(ring, ell, acc, adds, n)
        } else {
            self.moddown_from_inner(ell, acc, adds, n, galois)
        }
    }

    /// The end of a key switching, fused (the twin of `cpu::inner_product`, the optional
    /// `inner` additions, `cpu::mod_down` of both halves, then the optional `adds`): the inner
    /// product of the ModUp `digits` with the key, plus `inner_c`, into one `[2][Q_ℓ ∪ P][N]`
    /// accumulator; the inverse NTT of both halves' P limbs (one launch per phase); the centred
    /// conversion `P → Q_ℓ` of both (one launch); and one forward NTT of both whose epilogue
    /// writes `[add_c +] (x_c − y_c) · P^{-1}` into the two results, permuted by `σ_g` for
    /// `galois = Some(g)` (a rotation's automorphism).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn keyswitch_moddown(
        &self,
        ring: &RnsRing,
        ell: usize,
        digits: &[&DeviceBuffer],
        keys: &[(&DeviceBuffer, &DeviceBuffer)],
        inner: [Option<&DeviceBuffer>; 2],
        adds: [Option<&DeviceBuffer>; 2],
        galois: Option<u64>,
    ) -> Result<[DeviceBuffer; 2]> {
        let n = ring.n();
        if !self.ntt.has_fast_kernels() {
            // Small rings (N < 2^12): the composition.
            let (a0, a1) = self.inner_product_plus(ring, ell, digits, keys, inner)?;
            let shape_q = ring.shape_q(ell);
            let [mut o0, mut o1] = [
                self.mod_down(ring, ell, &a0)?,
                self.mod_down(ring, ell, &a1)?,
            ];
            self.add_each(&shape_q, [&mut o0, &mut o1], adds)?;
            let Some(g) = galois else {
                return Ok([o0, o1]);
            };
            return Ok([
                self.automorphism(&shape_q, &o0, g, true)?,
                self.automorphism(&shape_q, &o1, g, true)?,
            ]);
        }
        let pl = ring.p_len();
        let width = ell + pl;
        let mut acc = self.alloc(2 * width * n)?;
        if digits.len() <= fused::MAX_DIGITS {
            fused::ks_inner_product_pair(
                &self.full, ell, self.q_len, digits, keys, inner, &mut acc, n,
            )?;
        } else {
            let (a0, a1) = self.inner_product_plus(ring, ell, digits, keys, inner)?;
            DeviceBuffer::copy_region(&a0, 0, &mut acc, 0, width * n)?;
            DeviceBuffer::copy_region(&a1, 0, &mut acc, width * n, width * n)?;
        }
        self.moddown_from_inner(ell, acc, adds, n, galois)
    }

    /// The ModDown of both halves of a key switching's inner product `acc` (`[2][Q_ℓ ∪ P][N]`,
    /// NTT form), plus the addends: the tail of [`GpuRing::keyswitch_moddown`].
    fn moddown_from_inner(
        &self,
        ell: usize,
        acc: DeviceBuffer,
        adds: [Option<&DeviceBuffer>; 2],
        n: usize,
        galois: Option<u64>,
    ) -> Result<[DeviceBuffer; 2]> {
        self.moddown_from_inner_lifting(ell, acc, adds, n, galois, None)
    }

    /// [`GpuRing::moddown_from_inner`]; with `errors = Some(e)`, each half's result also
    /// carries `+ e_c · P^{-1}` on its Q limbs for the small coefficient-form `e_c` given by
    /// limb 0 of `e[c]` (canonical mod `q_0`): `x + NTT(e) − NTT(y) = x − NTT(y − e)`, so the
    /// forward NTT's column kernel subtracts the centred lift of `e_c` from the conversion as it
    /// reads it, and `e` is never transformed over Q. No automorphism with errors.
    fn moddown_from_inner_lifting(
        &self,
        ell: usize,
        mut acc: DeviceBuffer,
        adds: [Option<&DeviceBuffer>; 2],
        n: usize,
        galois: Option<u64>,
        errors: Option<[&DeviceBuffer; 2]>,
    ) -> Result<[DeviceBuffer; 2]> {
        if errors.is_some() && galois.is_some() {
            return Err(Error::InvalidInput(
                "a ModDown with lifted errors takes no automorphism".into(),
            ));
        }
        let pl = self.ntt.len() - self.q_len;
        let width = ell + pl;
        let batch = NttBatch::limb_range(2, width, ell, pl).with_first_table(self.q_len - ell);
        let mut y = self.alloc(2 * ell * n)?;
        let conv = &self.mod_down[ell - 1];
        // The inverse NTT, with the conversion's first step folded in where it can be.
        if let Some(f) = &self.mod_down_inverse {
            self.ntt.inverse_scaled(&mut acc, &batch, f)?;
            conv.convert_scaled_centered_strided(&mut y, &acc, ell * n, width * n, 2, n)?;
        } else {
            self.ntt
                .transform(&mut acc, &batch, NttDirection::Inverse, NttAlgorithm::Fast)?;
            conv.convert_centered_strided(&mut y, &acc, ell * n, width * n, 2, n)?;
        }
        let mut o0 = self.alloc(ell * n)?;
        let mut o1 = self.alloc(ell * n)?;
        let runs = [0, 1].map(|c| NttRun {
            buf: 0,
            first_limb: c * ell,
            limbs: ell,
            table: 0,
        });
        let epi = [0, 1].map(|c| EpilogueRun {
            out: c,
            out_limb: 0,
            x: &acc,
            x_limb: c * width,
            c: adds[c].map(|a| (a, 0)),
        });
        if let Some(e) = errors {
            let lift = e.map(|src| LiftRun { src, limb: 0 });
            self.ntt.forward_runs_lift_add_epilogue(
                &lift,
                self.ntt.moduli()[0],
                &self.full,
                &mut [&mut y],
                &runs,
                &mut [&mut o0, &mut o1],
                &epi,
                LiftAddFactors {
                    lift_factor: &self.neg_one_w,
                    w: &self.mod_down_w,
                    w2: None,
                },
            )?;
            return Ok([o0, o1]);
        }
        // The accumulator is read for the last time.
        self.ntt.forward_runs_epilogue_consuming_x(
            &mut [&mut y],
            &runs,
            &mut [&mut o0, &mut o1],
            &epi,
            &self.mod_down_w,
            galois,
        )?;
        Ok([o0, o1])
    }

    /// The core of a public-key encryption at level `ℓ`, on the device: `(add + ModDown(v·b +
    /// e_0), ModDown(v·a + e_1))` for the key `(b, a)` (full `Q ∪ P` basis), bit for bit the
    /// transformed `v`, `e_0`, `e_1` through [`GpuRing::keyswitch_moddown`] with the errors as
    /// inner addends. `v` (coefficient form over `Q_ℓ ∪ P`) is transformed in place; each
    /// error `e[c]` comes in coefficient form over `Q_1 ∪ P` (the same small integers on every
    /// limb) and only its `P` limbs are transformed (in place): they enter the inner product,
    /// while its `Q` part enters the ModDown's forward NTT lifted from limb 0
    /// ([`GpuRing::moddown_from_inner_lifting`]). So `2 ℓ` of the encryption's limb-NTTs are
    /// saved. Launches: one grouped forward NTT, the inner product, the ModDown (3 + 2).
    pub(crate) fn encrypt_zero_moddown(
        &self,
        ring: &RnsRing,
        ell: usize,
        v: &mut DeviceBuffer,
        e: [&mut DeviceBuffer; 2],
        key: (&DeviceBuffer, &DeviceBuffer),
        add: Option<&DeviceBuffer>,
    ) -> Result<[DeviceBuffer; 2]> {
        let n = ring.n();
        let pl = ring.p_len();
        if !self.ntt.has_fast_kernels() || ell == 0 || ell > self.q_len {
            return Err(Error::InvalidInput(format!(
                "encrypt_zero_moddown at level {ell} of {} (needs the fast NTT)",
                self.q_len
            )));
        }
        let [e0, e1] = e;
        let runs = [
            NttRun {
                buf: 0,
                first_limb: 0,
                limbs: ell,
                table: 0,
            },
            NttRun {
                buf: 0,
                first_limb: ell,
                limbs: pl,
                table: self.q_len,
            },
            NttRun {
                buf: 1,
                first_limb: 1,
                limbs: pl,
                table: self.q_len,
            },
            NttRun {
                buf: 2,
                first_limb: 1,
                limbs: pl,
                table: self.q_len,
            },
        ];
        self.ntt
            .transform_runs(&mut [v, e0, e1], &runs, NttDirection::Forward)?;
        let width = ell + pl;
        let mut acc = self.alloc(2 * width * n)?;
        let adds = fused::KsAddends {
            bufs: [Some((&*e0, 1)), Some((&*e1, 1))],
            first_limb: ell,
        };
        fused::ks_inner_product_pair_with(
            &self.full,
            ell,
            self.q_len,
            &[&*v],
            &[key],
            adds,
            &mut acc,
            n,
        )?;
        self.moddown_from_inner_lifting(ell, acc, [add, None], n, None, Some([&*e0, &*e1]))
    }

    /// [`GpuRing::keyswitch_moddown`] followed by the rescale of both results, merged (the
    /// twin of `RnsRing::rescale_many` of `RnsRing::keyswitch_moddown`, bit for bit; `ℓ ≥ 2`).
    /// With `x_c` the inner product, `y_c` the conversion of its P limbs and `a_c` the addend,
    /// the ModDown gives `u_c = a_c + (x_c − NTT(y_c)) · P^{-1}` and the rescale needs only its
    /// last limb in coefficient form, `z_c = INTT(a_c) + (INTT(x_c) − y_c) · P^{-1}` mod
    /// `q_{ℓ-1}` (linearity), to write `(u_c − NTT(lift(z_c))) · q_{ℓ-1}^{-1}` =
    /// `(a_c + (x_c − NTT(y_c + P · lift(z_c))) · P^{-1}) · q_{ℓ-1}^{-1}`: one forward NTT of
    /// `ℓ − 1` limbs per half instead of `ℓ` for the ModDown and `ℓ − 1` for the rescale.
    /// Launches: inner product; one grouped inverse NTT (both halves' P limbs and last limbs,
    /// the addends' last limbs); one conversion; one small kernel for `z`; one forward NTT whose
    /// column kernel adds `P · lift(z)` and whose row kernel's epilogue applies both factors.
    pub(crate) fn keyswitch_moddown_rescale(
        &self,
        ring: &RnsRing,
        ell: usize,
        digits: &[&DeviceBuffer],
        keys: &[(&DeviceBuffer, &DeviceBuffer)],
        adds: [Option<&DeviceBuffer>; 2],
    ) -> Result<[DeviceBuffer; 2]> {
        let n = ring.n();
        if ell < 2 {
            return Err(Error::InvalidInput(format!(
                "keyswitch_moddown_rescale at {ell} limb(s): rescaling needs 2"
            )));
        }
        if !self.ntt.has_fast_kernels() || digits.len() > fused::MAX_DIGITS {
            let [a, b] =
                self.keyswitch_moddown(ring, ell, digits, keys, [None, None], adds, None)?;
            return self
                .rescale_ntt_many(ring, ell, &[&a, &b])?
                .try_into()
                .map_err(|_| Error::InvalidInput("rescale: missing output".into()));
        }
        let width = ell + ring.p_len();
        let mut acc = self.alloc(2 * width * n)?;
        let none = [None, None];
        fused::ks_inner_product_pair(&self.full, ell, self.q_len, digits, keys, none, &mut acc, n)?;
        self.moddown_rescale_from_inner(ring, ell, acc, adds, n)
    }

    /// The merged ModDown and rescale of both halves of a key switching's inner product `acc`
    /// (`[2][Q_ℓ ∪ P][N]`, NTT form, `ℓ ≥ 2`), plus the addends: the tail of
    /// [`GpuRing::keyswitch_moddown_rescale`].
    fn moddown_rescale_from_inner(
        &self,
        ring: &RnsRing,
        ell: usize,
        mut acc: DeviceBuffer,
        adds: [Option<&DeviceBuffer>; 2],
        n: usize,
    ) -> Result<[DeviceBuffer; 2]> {
        let pl = self.ntt.len() - self.q_len;
        let width = ell + pl;
        let last = ell - 1;
        // The addends' last limbs, inverse-transformed into `t` (z's first term).
        let mut t = self.alloc(2 * n)?;
        let mut runs = Vec::with_capacity(6);
        let mut sources = Vec::with_capacity(6);
        for (c, add) in adds.iter().enumerate() {
            runs.push(NttRun {
                buf: 0,
                first_limb: c * width + ell,
                limbs: pl,
                table: self.q_len,
            });
            runs.push(NttRun {
                buf: 0,
                first_limb: c * width + last,
                limbs: 1,
                table: last,
            });
            sources.extend([None, None]);
            if let Some(a) = add {
                runs.push(NttRun {
                    buf: 1,
                    first_limb: c,
                    limbs: 1,
                    table: last,
                });
                sources.push(Some((*a, last)));
            }
        }
        // The inverse NTT: the addends' limbs read where they lie, the conversion's first
        // step folded into the P limbs' (the Q limbs' factor is 1) where it can be.
        let mut y = self.alloc(2 * ell * n)?;
        let conv = &self.mod_down[ell - 1];
        if self.ntt.has_fast_kernels() {
            let f = self.mod_down_inverse.as_ref();
            self.ntt
                .inverse_runs_from(&mut [&mut acc, &mut t], &runs, &sources, f)?;
        } else {
            for (r, src) in runs.iter().zip(&sources) {
                if let Some((a, limb)) = src {
                    DeviceBuffer::copy_region(a, limb * n, &mut t, r.first_limb * n, n)?;
                }
            }
            self.ntt
                .transform_runs(&mut [&mut acc, &mut t], &runs, NttDirection::Inverse)?;
        }
        if self.mod_down_inverse.is_some() {
            conv.convert_scaled_centered_strided(&mut y, &acc, ell * n, width * n, 2, n)?;
        } else {
            conv.convert_centered_strided(&mut y, &acc, ell * n, width * n, 2, n)?;
        }
        let q_last = self.ntt.moduli()[last];
        let p_inv = ring.keyswitch_plan().mod_down().p_inv_mod_q()[last];
        let rows = [0, 1].map(|c| {
            (
                fused::Limb {
                    buf: &acc,
                    limb: c * width + last,
                },
                fused::Limb {
                    buf: &y,
                    limb: c * ell + last,
                },
                adds[c].is_some(),
            )
        });
        fused::moddown_rows(&mut t, &rows, q_last, p_inv, n)?;
        let mut o0 = self.alloc(last * n)?;
        let mut o1 = self.alloc(last * n)?;
        let runs = [0, 1].map(|c| NttRun {
            buf: 0,
            first_limb: c * ell,
            limbs: last,
            table: 0,
        });
        let lift = [0, 1].map(|c| LiftRun { src: &t, limb: c });
        let epi = [0, 1].map(|c| EpilogueRun {
            out: c,
            out_limb: 0,
            x: &acc,
            x_limb: c * width,
            c: adds[c].map(|a| (a, 0)),
        });
        self.ntt.forward_runs_lift_add_epilogue(
            &lift,
            q_last,
            &self.full,
            &mut [&mut y],
            &runs,
            &mut [&mut o0, &mut o1],
            &epi,
            LiftAddFactors {
                lift_factor: &self.p_mod_q_w,
                w: &self.mod_down_w,
                w2: Some(&self.rescale_w[ell - 2]),
            },
        )?;
        Ok([o0, o1])
    }

    /// [`GpuRing::inner_product`] with `inner_c` added to half `c` (the unfused path of
    /// [`GpuRing::keyswitch_moddown`]).
    fn inner_product_plus(
        &self,
        ring: &RnsRing,
        ell: usize,
        digits: &[&DeviceBuffer],
        keys: &[(&DeviceBuffer, &DeviceBuffer)],
        inner: [Option<&DeviceBuffer>; 2],
    ) -> Result<(DeviceBuffer, DeviceBuffer)> {
        let (mut a0, mut a1) = self.inner_product(ring, ell, digits, keys)?;
        self.add_each(&ring.shape_qp(ell), [&mut a0, &mut a1], inner)?;
        Ok((a0, a1))
    }

    /// `outs[c] += addends[c]` for each given addend (shape `shape`).
    fn add_each(
        &self,
        shape: &PolyShape,
        outs: [&mut DeviceBuffer; 2],
        addends: [Option<&DeviceBuffer>; 2],
    ) -> Result<()> {
        for (o, c) in outs.into_iter().zip(addends) {
            if let Some(c) = c {
                self.add(shape, o, c)?;
            }
        }
        Ok(())
    }

    /// The key-switching inner product over `Q_ℓ ∪ P` (the twin of `cpu::inner_product`): the
    /// key's limbs of `Q_ℓ ∪ P` (its first `ℓ` and its last `|P|` limbs) times the digits,
    /// accumulated: one fused launch reading the key in place at any level
    /// (`fused::ks_inner_product`); element-wise per digit beyond `fused::MAX_DIGITS` digits.
    pub(crate) fn inner_product(
        &self,
        ring: &RnsRing,
        ell: usize,
        digits: &[&DeviceBuffer],
        keys: &[(&DeviceBuffer, &DeviceBuffer)],
    ) -> Result<(DeviceBuffer, DeviceBuffer)> {
        let shape = ring.shape_qp(ell);
        let mut acc0 = self.alloc(shape.words())?;
        let mut acc1 = self.alloc(shape.words())?;
        if digits.len() <= fused::MAX_DIGITS {
            fused::ks_inner_product(
                &self.full,
                ell,
                self.q_len,
                digits,
                keys,
                &mut acc0,
                &mut acc1,
                ring.n(),
            )?;
            return Ok((acc0, acc1));
        }
        let layout = Self::layout(&shape);
        let m = self.moduli(&shape);
        for (j, (d, (b, a))) in digits.iter().zip(keys).enumerate() {
            let (b, a) = (self.key_limbs(ring, b, ell)?, self.key_limbs(ring, a, ell)?);
            if j == 0 {
                ew::mul(&mut acc0, d, &b, &layout, m)?;
                ew::mul(&mut acc1, d, &a, &layout, m)?;
            } else {
                ew::mul_add_assign(&mut acc0, d, &b, &layout, m)?;
                ew::mul_add_assign(&mut acc1, d, &a, &layout, m)?;
            }
        }
        Ok((acc0, acc1))
    }

    /// The limbs of `Q_ℓ ∪ P` of a key polynomial stored over the full `Q ∪ P`.
    fn key_limbs<'a>(
        &self,
        ring: &RnsRing,
        k: &'a DeviceBuffer,
        ell: usize,
    ) -> Result<Operand<'a>> {
        if ell == self.q_len {
            Ok(Operand::Borrowed(k))
        } else {
            Ok(Operand::Owned(self.truncate(&ring.full_shape(), k, ell)?))
        }
    }
}
