//! Sampling on the device: uniform, ternary and Gaussian polynomials.

use super::*;

impl GpuRing {
    /// A uniform polynomial of `shape` from `(seed, stream)` (the host's stream, on the device).
    pub(crate) fn uniform(
        &self,
        shape: &PolyShape,
        seed: &[u8; 32],
        stream: u64,
    ) -> Result<DeviceBuffer> {
        let mut out = self.alloc(shape.words())?;
        sample::uniform_from_seed(
            &mut out,
            seed,
            stream,
            &Self::layout(shape),
            self.moduli(shape),
        )?;
        Ok(out)
    }

    /// A ternary polynomial of `shape` (coefficient form) from `(seed, 0)`: the words of
    /// `rhea_math::sampler::ternary_from_seed(seed, 0, N)` lifted to every limb, on the device.
    pub(crate) fn ternary(&self, shape: &PolyShape, seed: &[u8; 32]) -> Result<DeviceBuffer> {
        let mut out = self.alloc(shape.words())?;
        sample::ternary_from_seed(&mut out, seed, 0, &Self::layout(shape), self.moduli(shape))?;
        Ok(out)
    }

    /// A discrete Gaussian polynomial of `shape` (coefficient form) from `(seed, 0)`: the words
    /// of `rhea_math::sampler::gaussian_from_seed(seed, 0, N, sigma, bound)` lifted to every
    /// limb, on the device (`bound` must satisfy `sample::gaussian_fits`).
    pub(crate) fn gaussian(
        &self,
        shape: &PolyShape,
        seed: &[u8; 32],
        sigma: f64,
        bound: f64,
    ) -> Result<DeviceBuffer> {
        let mut out = self.alloc(shape.words())?;
        sample::gaussian_from_seed(
            &mut out,
            seed,
            0,
            &Self::layout(shape),
            self.moduli(shape),
            sigma,
            bound,
        )?;
        Ok(out)
    }
}
