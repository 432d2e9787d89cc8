//! Creating a [`GpuRing`]: every device table of a ring uploaded once, and its accessors.

use super::*;

impl GpuRing {
    /// Uploads every table of `ring` to `dev`.
    pub(crate) fn new(ring: &RnsRing, dev: Arc<GpuDevice>) -> Result<Self> {
        let l = ring.q_len();
        let full_shape = ring.full_shape();
        let tables: Vec<_> = (0..full_shape.limbs())
            .map(|i| ring.ntt_table(&full_shape, i).clone())
            .collect();
        let ntt = DeviceNttTables::new(&dev, &tables)?;
        let full = dev.moduli(&ring.moduli(&full_shape))?;
        let qp = (1..=l)
            .map(|ell| dev.moduli(&ring.moduli(&ring.shape_qp(ell))))
            .collect::<rhea_cuda::Result<Vec<_>>>()?;
        let mod_up = DeviceModUp::new(&dev, ring.keyswitch_plan().mod_up())?;
        // `DeviceModUp` uploads the converter of a (digit, active length) on first use: use each
        // once now, on scratch buffers, so that evaluation never uploads.
        let (n, pl) = (ring.n(), ring.p_len());
        for (d, r) in ring.digits().iter().enumerate() {
            for ell in r.start + 1..=r.end {
                let input = dev.alloc_zeroed(ell * n)?;
                let mut out = dev.alloc((ell + pl) * n)?;
                mod_up.apply_centered(d, ell, &input, &mut out, n)?;
            }
        }
        let mod_down = (1..=l)
            .map(|ell| {
                DeviceBaseConverter::new(&dev, ring.keyswitch_plan().mod_down_converter(ell))
            })
            .collect::<rhea_cuda::Result<Vec<_>>>()?;
        let rescaler = DeviceRescaler::new(&dev, ring.rescaler())?;
        let md = ring.keyswitch_plan().mod_down();
        let mod_down_w = dev.upload(&shoup_pairs(md.p_inv_mod_q(), md.p_inv_mod_q_shoup()))?;
        let rs = ring.rescaler();
        let rescale_w = (2..=l)
            .map(|ell| {
                let pairs = shoup_pairs(rs.q_last_inv_mod_q(ell)?, rs.q_last_inv_mod_q_shoup(ell)?);
                Ok(dev.upload(&pairs)?)
            })
            .collect::<Result<Vec<_>>>()?;
        let q_values = ring.q().values().to_vec();
        let p_mod_q = ring.keyswitch_plan().mod_down_converter(l).q_mod_p();
        let p_mod_q_shoup: Vec<u64> = ring
            .q()
            .moduli()
            .iter()
            .zip(p_mod_q)
            .map(|(m, &w)| m.shoup(w))
            .collect();
        let p_mod_q_w = dev.upload(&shoup_pairs(p_mod_q, &p_mod_q_shoup))?;
        let neg_one: Vec<u64> = ring
            .q()
            .moduli()
            .iter()
            .flat_map(|m| [m.value() - 1, m.shoup(m.value() - 1)])
            .collect();
        let neg_one_w = dev.upload(&neg_one)?;
        let mod_up_inverse = if ntt.has_fast_kernels() {
            (1..=l)
                .map(|ell| {
                    let words = ntt.scaled_inverse_words(&mod_up.first_step_factors(ell)?)?;
                    Ok(dev.upload(&words)?)
                })
                .collect::<Result<Vec<_>>>()?
        } else {
            Vec::new()
        };
        let mod_down_inverse = if ntt.has_fast_kernels() {
            let mut f = vec![1u64; full_shape.limbs()];
            f[l..].copy_from_slice(
                ring.keyswitch_plan()
                    .mod_down_converter(l)
                    .q_hat_inv_mod_q(),
            );
            Some(dev.upload(&ntt.scaled_inverse_words(&f)?)?)
        } else {
            None
        };
        Ok(Self {
            dev,
            q_len: l,
            ntt,
            full,
            qp,
            mod_up,
            mod_down,
            rescaler,
            mod_down_w,
            rescale_w,
            p_mod_q_w,
            neg_one_w,
            q_values,
            mod_up_inverse,
            mod_down_inverse,
        })
    }

    /// The device.
    pub(crate) fn device(&self) -> &Arc<GpuDevice> {
        &self.dev
    }

    /// `[limbs][N]` words of `shape` (Q limbs, with or without the `P` limbs): limb `i` the
    /// centred lift of `t` (`N` words canonical modulo `q_0`) modulo the limb's prime (one
    /// launch; `RnsRing::upload_lifted`, `RnsRing::mod_raise`).
    pub(crate) fn lift_first_limb(
        &self,
        t: &DeviceBuffer,
        shape: &PolyShape,
    ) -> Result<DeviceBuffer> {
        let n = t.len();
        if shape.q_limbs == 0 || shape.q_limbs > self.q_len || n != shape.n {
            return Err(Error::InvalidInput(format!(
                "lift of {n} words to a polynomial of shape {shape} ({} Q primes)",
                self.q_len
            )));
        }
        let limbs = shape.limbs();
        let mut out = self.alloc(limbs * n)?;
        fused::rescale_lift(&mut out, t, self.q_values[0], self.moduli(shape), limbs, n)?;
        Ok(out)
    }

    /// [`GpuRing::lift_first_limb`] of many limbs into one shape, grouped launches.
    pub(crate) fn lift_first_limb_many(
        &self,
        ts: &[&DeviceBuffer],
        shape: &PolyShape,
    ) -> Result<Vec<DeviceBuffer>> {
        if shape.q_limbs == 0 || shape.q_limbs > self.q_len || ts.iter().any(|t| t.len() != shape.n)
        {
            return Err(Error::InvalidInput(format!(
                "lift of {} limbs to polynomials of shape {shape} ({} Q primes)",
                ts.len(),
                self.q_len
            )));
        }
        let (limbs, n) = (shape.limbs(), shape.n);
        let mut outs = ts
            .iter()
            .map(|_| self.alloc(limbs * n))
            .collect::<Result<Vec<_>>>()?;
        let mut refs: Vec<&mut DeviceBuffer> = outs.iter_mut().collect();
        fused::rescale_lift_many(
            &mut refs,
            ts,
            self.q_values[0],
            self.moduli(shape),
            limbs,
            n,
        )?;
        Ok(outs)
    }

    /// Whether [`GpuRing::encrypt_zero_moddown`] serves public-key encryption: the two-kernel
    /// NTT serves this degree.
    pub(crate) fn lifted_encryption(&self) -> bool {
        self.ntt.has_fast_kernels()
    }

    /// The moduli of `Q ∪ P` in order (limb `j` of a Q-only shape or of the full shape uses
    /// entry `j`): the table of the protected kernels (`rhea_cuda::lite::fhe`).
    pub(crate) fn lite_moduli(&self) -> &DeviceModuli {
        &self.full
    }

    pub(super) fn moduli(&self, shape: &PolyShape) -> &DeviceModuli {
        if shape.p_limbs == 0 || shape.q_limbs == self.q_len {
            &self.full
        } else {
            &self.qp[shape.q_limbs - 1]
        }
    }

    pub(super) fn layout(shape: &PolyShape) -> RnsLayout {
        RnsLayout::new(shape.n, shape.limbs(), 1)
    }

    /// `b` read as a polynomial of `shape`: itself, or a view of its first `shape.words()` words
    /// (a higher-level Q-only polynomial read at a lower level, without copying).
    pub(super) fn operand<'a>(
        &self,
        b: &'a DeviceBuffer,
        shape: &PolyShape,
    ) -> Result<Operand<'a>> {
        let words = shape.words();
        if b.len() == words {
            return Ok(Operand::Borrowed(b));
        }
        Ok(Operand::View(b.prefix(words)?))
    }

    /// A new uninitialised buffer of `words` words.
    pub(crate) fn alloc(&self, words: usize) -> Result<DeviceBuffer> {
        Ok(self.dev.alloc(words)?)
    }
}
