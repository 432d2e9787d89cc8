//! Element-wise primitives: additions, products, scalars and the tensor product.

use super::*;

impl GpuRing {
    pub(crate) fn add(
        &self,
        shape: &PolyShape,
        a: &mut DeviceBuffer,
        b: &DeviceBuffer,
    ) -> Result<()> {
        let b = self.operand(b, shape)?;
        Ok(ew::add_assign(
            a,
            &b,
            &Self::layout(shape),
            self.moduli(shape),
        )?)
    }

    pub(crate) fn sub(
        &self,
        shape: &PolyShape,
        a: &mut DeviceBuffer,
        b: &DeviceBuffer,
    ) -> Result<()> {
        let b = self.operand(b, shape)?;
        Ok(ew::sub_assign(
            a,
            &b,
            &Self::layout(shape),
            self.moduli(shape),
        )?)
    }

    /// `a = b - a` (negate, then add: the same canonical residues).
    pub(crate) fn sub_from(
        &self,
        shape: &PolyShape,
        a: &mut DeviceBuffer,
        b: &DeviceBuffer,
    ) -> Result<()> {
        self.neg(shape, a)?;
        self.add(shape, a, b)
    }

    pub(crate) fn neg(&self, shape: &PolyShape, a: &mut DeviceBuffer) -> Result<()> {
        Ok(ew::neg_assign(a, &Self::layout(shape), self.moduli(shape))?)
    }

    pub(crate) fn mul(
        &self,
        shape: &PolyShape,
        a: &mut DeviceBuffer,
        b: &DeviceBuffer,
    ) -> Result<()> {
        let b = self.operand(b, shape)?;
        Ok(ew::mul_assign(
            a,
            &b,
            &Self::layout(shape),
            self.moduli(shape),
        )?)
    }

    /// `a · b` into a new buffer of `shape` (`a`, `b` full or higher-level views).
    pub(crate) fn mul_new(
        &self,
        shape: &PolyShape,
        a: &DeviceBuffer,
        b: &DeviceBuffer,
    ) -> Result<DeviceBuffer> {
        let a = self.operand(a, shape)?;
        let b = self.operand(b, shape)?;
        let mut out = self.alloc(shape.words())?;
        ew::mul(&mut out, &a, &b, &Self::layout(shape), self.moduli(shape))?;
        Ok(out)
    }

    /// `a ± b` into a new buffer of `shape`.
    pub(crate) fn add_sub_new(
        &self,
        shape: &PolyShape,
        a: &DeviceBuffer,
        b: &DeviceBuffer,
        sub: bool,
    ) -> Result<DeviceBuffer> {
        let a = self.operand(a, shape)?;
        let b = self.operand(b, shape)?;
        let mut out = self.alloc(shape.words())?;
        let (layout, m) = (Self::layout(shape), self.moduli(shape));
        if sub {
            ew::sub(&mut out, &a, &b, &layout, m)?;
        } else {
            ew::add(&mut out, &a, &b, &layout, m)?;
        }
        Ok(out)
    }

    pub(crate) fn mul_add(
        &self,
        shape: &PolyShape,
        acc: &mut DeviceBuffer,
        a: &DeviceBuffer,
        b: &DeviceBuffer,
    ) -> Result<()> {
        let a = self.operand(a, shape)?;
        let b = self.operand(b, shape)?;
        Ok(ew::mul_add_assign(
            acc,
            &a,
            &b,
            &Self::layout(shape),
            self.moduli(shape),
        )?)
    }

    /// `acc -= a · b` (the product into a scratch buffer, then a subtraction).
    pub(crate) fn mul_sub(
        &self,
        shape: &PolyShape,
        acc: &mut DeviceBuffer,
        a: &DeviceBuffer,
        b: &DeviceBuffer,
    ) -> Result<()> {
        let t = self.mul_new(shape, a, b)?;
        Ok(ew::sub_assign(
            acc,
            &t,
            &Self::layout(shape),
            self.moduli(shape),
        )?)
    }

    pub(crate) fn mul_scalar(
        &self,
        shape: &PolyShape,
        a: &mut DeviceBuffer,
        scalars: &[u64],
    ) -> Result<()> {
        Ok(ew::mul_scalar_assign(
            a,
            scalars,
            &Self::layout(shape),
            self.moduli(shape),
        )?)
    }

    /// `acc += a · c_i`, returned as a new buffer (the kernel writes `a · c_i + acc` out of
    /// place).
    pub(crate) fn mul_scalar_add(
        &self,
        shape: &PolyShape,
        acc: &DeviceBuffer,
        a: &DeviceBuffer,
        scalars: &[u64],
    ) -> Result<DeviceBuffer> {
        let a = self.operand(a, shape)?;
        let mut out = self.alloc(shape.words())?;
        ew::mul_scalar_add(
            &mut out,
            &a,
            scalars,
            acc,
            &Self::layout(shape),
            self.moduli(shape),
        )?;
        Ok(out)
    }

    /// Adds `c_i` to every word of limb `i`.
    pub(crate) fn add_scalar_all(
        &self,
        shape: &PolyShape,
        a: &mut DeviceBuffer,
        scalars: &[u64],
    ) -> Result<()> {
        Ok(ew::add_scalar_assign(
            a,
            scalars,
            &Self::layout(shape),
            self.moduli(shape),
        )?)
    }

    /// Adds `c_i` to the constant coefficient of limb `i` of a coefficient-form polynomial:
    /// the constant `c` is `c` at every NTT evaluation, so this is the NTT-domain addition
    /// conjugated by the NTT (exact, nothing leaves the device).
    pub(crate) fn add_scalar_coeff0(
        &self,
        shape: &PolyShape,
        a: &mut DeviceBuffer,
        scalars: &[u64],
    ) -> Result<()> {
        let limbs = shape.limbs();
        self.ntt(shape, a, 0..limbs, NttDirection::Forward)?;
        self.add_scalar_all(shape, a, scalars)?;
        self.ntt(shape, a, 0..limbs, NttDirection::Inverse)
    }

    /// The tensor product of two 2-component ciphertexts of `shape`, one fused pass.
    pub(crate) fn tensor(
        &self,
        shape: &PolyShape,
        a: [&DeviceBuffer; 2],
        b: [&DeviceBuffer; 2],
    ) -> Result<[DeviceBuffer; 3]> {
        let words = shape.words();
        let mut d0 = self.alloc(words)?;
        let mut d1 = self.alloc(words)?;
        let mut d2 = self.alloc(words)?;
        fused::tensor(
            a,
            b,
            [&mut d0, &mut d1, &mut d2],
            self.moduli(shape),
            shape.limbs(),
            shape.n,
        )?;
        Ok([d0, d1, d2])
    }

    /// Several sums of products over the same right operands (`RnsRing::sums_of_products`):
    /// `out_s = (Σ_t left[s][t] ⊙ right[t].0, Σ_t left[s][t] ⊙ right[t].1)`, each right operand
    /// read once for all the sums (`rhea_cuda::sums_of_products`).
    pub(crate) fn sums_of_products(
        &self,
        shape: &PolyShape,
        right: &[(&DeviceBuffer, &DeviceBuffer)],
        left: &[Vec<Option<&DeviceBuffer>>],
    ) -> Result<Vec<(DeviceBuffer, DeviceBuffer)>> {
        let words = shape.words();
        let mut outs = Vec::with_capacity(left.len());
        for _ in left {
            outs.push((self.alloc(words)?, self.alloc(words)?));
        }
        let mut refs: Vec<(&mut DeviceBuffer, &mut DeviceBuffer)> =
            outs.iter_mut().map(|(a, b)| (a, b)).collect();
        rhea_cuda::sums_of_products::sums_of_products(
            self.moduli(shape),
            shape.limbs(),
            shape.n,
            right,
            left,
            &mut refs,
        )?;
        Ok(outs)
    }
}
