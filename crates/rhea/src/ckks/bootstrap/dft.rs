//! [`HomomorphicDft`]: CoeffToSlot (`U^{-1}`) and SlotToCoeff (`U`) as a few sparse-diagonal
//! [`LinearTransform`]s, one level each.
//! See [`HomomorphicDft`] for the factorisation, the coefficient order and the cost.

use std::collections::BTreeMap;

use num_complex::Complex64;
use rhea_math::fft::DoubleDouble;

use crate::ckks::{Ciphertext, DiagonalStorage, Evaluator, LinearTransform, RotationKeys};
use crate::error::{Error, Result};

/// The largest slot count (that of `rhea_math::fft::SpecialFft`).
const MAX_SLOTS: usize = 1 << 16;

/// Which way a [`HomomorphicDft`] goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DftDirection {
    /// CoeffToSlot: `z ↦ factor · U^{-1} z` (the encode direction; output in bit-reversed
    /// order).
    CoeffToSlot,
    /// SlotToCoeff: `w ↦ factor · U · P w` (the decode direction; input in bit-reversed order).
    SlotToCoeff,
}

/// `k` with its low `log2 slots` bits reversed: the slot that holds `c_k` after CoeffToSlot
/// (and must hold it before SlotToCoeff). `slots` a power of two, `k < slots` (higher bits of
/// `k` are ignored).
pub fn bit_reverse_index(k: usize, slots: usize) -> usize {
    debug_assert!(slots.is_power_of_two());
    let bits = slots.trailing_zeros();
    if bits == 0 {
        return 0;
    }
    (k & (slots - 1)).reverse_bits() >> (usize::BITS - bits)
}

/// CoeffToSlot or SlotToCoeff for `slots` slots as `levels` [`LinearTransform`]s applied in
/// order.
///
/// # The factorisation
///
/// The decode matrix `U[j][k] = ξ_j^k` (`ξ_j = ζ_{4n}^{5^j mod 4n}`, what
/// [`rhea_math::fft::SpecialFft::forward`] computes) is the special FFT: a bit-reversal `P`
/// followed by `log2 n` radix-2 butterfly stages,
///
/// ```text
/// U = S_{n/2} ··· S_2 · S_1 · P,        U^{-1} = P · S_1^{-1} · S_2^{-1} ··· S_{n/2}^{-1},
/// ```
///
/// where the stage `S_h` (stride `h`) maps, for each row `r` with `i = r mod h`,
/// `t_{h,i} = ζ_{8h}^{5^i mod 8h}`:
/// row `r` with `r mod 2h < h`: `v[r] + t_{h,i}·v[r+h]`; otherwise `v[r−h] − t_{h,i}·v[r]`.
/// So `S_h` has the three diagonals `0, +h, −h` (two when `h = n/2`), and so has
/// `S_h^{-1}` (`(v[r] + v[r+h])/2`, resp. `conj(t_{h,i})·(v[r−h] − v[r])/2`).
///
/// The bit-reversal `P` is **not** evaluated: it is absorbed into the slot order of the
/// intermediate vector `c` (the packed coefficients), see [Order](#order). The `log2 n` stages
/// are merged into `levels` consecutive groups (one [`LinearTransform`] each, so one level each);
/// a group of `s` stages of strides `h, 2h, …, 2^{s−1}h` has the diagonals `k·h`,
/// `|k| < 2^s`: at most `2^{s+1} − 1`, only `2^s` when it holds the stride `n/2`. When
/// `log2 n` is not a multiple of `levels`, the larger groups are the ones with the largest
/// strides (they are the cheaper). CoeffToSlot applies the stages from the largest stride to
/// the smallest, SlotToCoeff from the smallest to the largest (as in Lattigo and Cheddar).
///
/// # Order
///
/// With `c_k = m_{k·g} + i·m_{(k+n)·g}` (`g = N/(2n)`) the packed coefficients of the
/// plaintext polynomial `m` and `Δ` its scale, the slots are `z = U·c/Δ`. Both directions use
/// **bit-reversed order** for `c`: `c_k` sits in slot [`HomomorphicDft::index`]`(k)` =
/// `bit_reverse(k)` (a bit reversal on `log2 n` bits, its own inverse):
///
/// * CoeffToSlot of a ciphertext with slots `z` gives slots `w` with
///   `w[index(k)] = factor · (U^{-1} z)_k`, i.e. for a fresh encryption of `m` at scale `Δ`,
///   `w[index(k)] = factor · c_k / Δ`.
/// * SlotToCoeff of a ciphertext with slots `w` gives slots `factor · U·c` where
///   `c_k = w[index(k)]`: its plaintext polynomial (at the kept scale `Δ`) has
///   `m_{k·g} ≈ Δ · Re(factor · w[index(k)])` and `m_{(k+n)·g} ≈ Δ · Im(factor · w[index(k)])`.
///
/// Slot-wise steps between the two (EvalMod) do not care about the order, so CoeffToSlot
/// followed by SlotToCoeff (with factors multiplying to 1) is the identity on the slots.
///
/// # Cost
///
/// Depth: `levels` (each transform rescales once; the scale is kept exactly). The Galois keys
/// are [`HomomorphicDft::rotations`]; the key switchings per evaluation
/// [`HomomorphicDft::keyswitches`].
///
/// # Example
///
/// ```
/// use rhea::ckks::bootstrap::{DftDirection, HomomorphicDft};
/// use rhea::ckks::Complex64;
///
/// let cts = HomomorphicDft::new(16, DftDirection::CoeffToSlot, 2, 1.0)?;
/// let stc = HomomorphicDft::new(16, DftDirection::SlotToCoeff, 2, 1.0)?;
/// assert_eq!(cts.depth(), 2);
/// let z: Vec<Complex64> = (0..16).map(|j| Complex64::new(j as f64, 1.0)).collect();
/// let back = stc.apply(&cts.apply(&z)?)?;
/// for (a, b) in back.iter().zip(&z) {
///     assert!((a - b).norm() < 1e-12);
/// }
/// # Ok::<(), rhea::Error>(())
/// ```
#[derive(Debug)]
pub struct HomomorphicDft {
    slots: usize,
    direction: DftDirection,
    factor: Complex64,
    /// Stages per transform, in application order.
    group_sizes: Vec<usize>,
    transforms: Vec<LinearTransform>,
}

impl HomomorphicDft {
    /// The transform for `slots` slots (a power of two, `2 ≤ slots ≤ 2^16`; at most `N/2` for
    /// the ring it is evaluated in) in `direction`, split into `levels` transforms
    /// (`1 ≤ levels ≤ log2 slots`), with the constant `factor` (real or complex, finite,
    /// non-zero) multiplied in: each transform carries `factor^{1/levels}` (principal root).
    ///
    /// Errors: [`Error::InvalidInput`] for a slot count, level count or factor out of range.
    pub fn new(
        slots: usize,
        direction: DftDirection,
        levels: usize,
        factor: impl Into<Complex64>,
    ) -> Result<Self> {
        let factor = factor.into();
        if !slots.is_power_of_two() || !(2..=MAX_SLOTS).contains(&slots) {
            return Err(Error::InvalidInput(format!(
                "HomomorphicDft: slots = {slots} must be a power of two in 2..={MAX_SLOTS}"
            )));
        }
        let stages = slots.trailing_zeros() as usize;
        if levels == 0 || levels > stages {
            return Err(Error::InvalidInput(format!(
                "HomomorphicDft: levels = {levels} must be in 1..={stages} for {slots} slots"
            )));
        }
        if !(factor.re.is_finite() && factor.im.is_finite()) || factor.norm() == 0.0 {
            return Err(Error::InvalidInput(format!(
                "HomomorphicDft: the factor {factor} must be finite and non-zero"
            )));
        }
        let group_sizes = group_sizes(stages, levels, direction);
        // Strides in application order.
        let strides: Vec<usize> = match direction {
            DftDirection::CoeffToSlot => (0..stages).rev().map(|s| 1 << s).collect(),
            DftDirection::SlotToCoeff => (0..stages).map(|s| 1 << s).collect(),
        };
        let per_level = if levels == 1 {
            factor
        } else {
            factor.powf(1.0 / levels as f64)
        };
        let mut transforms = Vec::with_capacity(levels);
        let mut next = 0;
        for &size in &group_sizes {
            let mut m: Option<Diagonals> = None;
            for &h in &strides[next..next + size] {
                let s = stage(slots, h, direction)?;
                m = Some(match m {
                    None => s,
                    Some(m) => product(slots, &s, &m),
                });
            }
            next += size;
            let diagonals = m
                .unwrap_or_default()
                .into_iter()
                .filter(|(_, d)| d.iter().any(|z| z.norm_sqr() != 0.0))
                .map(|(k, d)| (k as i64, d.into_iter().map(|z| z * per_level).collect()));
            transforms.push(LinearTransform::from_diagonals::<Complex64, _>(
                slots, diagonals,
            )?);
        }
        Ok(Self {
            slots,
            direction,
            factor,
            group_sizes,
            transforms,
        })
    }

    /// CoeffToSlot: [`HomomorphicDft::new`] with [`DftDirection::CoeffToSlot`].
    pub fn coeff_to_slot(
        slots: usize,
        levels: usize,
        factor: impl Into<Complex64>,
    ) -> Result<Self> {
        Self::new(slots, DftDirection::CoeffToSlot, levels, factor)
    }

    /// SlotToCoeff: [`HomomorphicDft::new`] with [`DftDirection::SlotToCoeff`].
    pub fn slot_to_coeff(
        slots: usize,
        levels: usize,
        factor: impl Into<Complex64>,
    ) -> Result<Self> {
        Self::new(slots, DftDirection::SlotToCoeff, levels, factor)
    }

    /// The same DFT with every transform reaching its baby steps as `keys` says
    /// ([`LinearTransform::with_rotation_keys`]).
    pub fn with_rotation_keys(mut self, keys: RotationKeys) -> Self {
        self.transforms = self
            .transforms
            .into_iter()
            .map(|lt| lt.with_rotation_keys(keys))
            .collect();
        self
    }

    /// The same DFT with every transform keeping its encoded diagonals as `storage` says
    /// ([`LinearTransform::with_diagonal_storage`]).
    pub fn with_diagonal_storage(mut self, storage: DiagonalStorage) -> Self {
        self.transforms = self
            .transforms
            .into_iter()
            .map(|lt| lt.with_diagonal_storage(storage))
            .collect();
        self
    }

    /// The slot count.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The direction.
    pub fn direction(&self) -> DftDirection {
        self.direction
    }

    /// The constant multiplied in (as given).
    pub fn factor(&self) -> Complex64 {
        self.factor
    }

    /// The levels consumed: one per transform.
    pub fn depth(&self) -> usize {
        self.transforms.len()
    }

    /// How many butterfly stages each transform merges, in application order (they add up to
    /// `log2 slots`).
    pub fn stages_per_level(&self) -> &[usize] {
        &self.group_sizes
    }

    /// The transforms, to apply in this order.
    pub fn transforms(&self) -> &[LinearTransform] {
        &self.transforms
    }

    /// The transforms, to apply in this order (by value).
    pub fn into_transforms(self) -> Vec<LinearTransform> {
        self.transforms
    }

    /// The slot holding the packed coefficient `c_k` (`k < slots`) after CoeffToSlot, and
    /// where SlotToCoeff reads it: `bit_reverse(k)` on `log2 slots` bits
    /// ([`bit_reverse_index`]; its own inverse, so also the `k` a slot holds).
    pub fn index(&self, k: usize) -> usize {
        bit_reverse_index(k, self.slots)
    }

    /// The rotation steps whose Galois keys an evaluation needs (the union of the transforms'
    /// [`LinearTransform::rotations`]), ascending.
    pub fn rotations(&self) -> Vec<i64> {
        let mut steps: Vec<i64> = self
            .transforms
            .iter()
            .flat_map(LinearTransform::rotations)
            .collect();
        steps.sort_unstable();
        steps.dedup();
        steps
    }

    /// The key switchings of one evaluation (the transforms' [`LinearTransform::keyswitches`]
    /// added up).
    pub fn keyswitches(&self) -> usize {
        self.transforms
            .iter()
            .map(LinearTransform::keyswitches)
            .sum()
    }

    /// The diagonal count of each transform, in application order.
    pub fn diagonal_counts(&self) -> Vec<usize> {
        self.transforms
            .iter()
            .map(LinearTransform::diagonal_count)
            .collect()
    }

    /// The transforms applied in order to a slot vector in `f64` (the plaintext reference of
    /// [`HomomorphicDft::evaluate`]).
    ///
    /// Errors: [`Error::InvalidInput`] for a vector of another length.
    pub fn apply(&self, v: &[Complex64]) -> Result<Vec<Complex64>> {
        let mut out = v.to_vec();
        for lt in &self.transforms {
            out = lt.apply(&out)?;
        }
        Ok(out)
    }

    /// Evaluates the transforms in order on `ct` (with `slots` slots, at level ≥ `depth()`):
    /// the result is `depth()` levels lower, at the same scale.
    ///
    /// Errors (before any work): [`Error::SlotMismatch`] for a ciphertext with another slot
    /// count, [`Error::LevelUnderflow`] below level `depth()`; then those of
    /// [`Evaluator::linear_transform`] (a missing Galois key, other parameters, …).
    pub fn evaluate(&self, eval: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext> {
        if ct.slots() != self.slots {
            return Err(Error::SlotMismatch {
                expected: self.slots,
                found: ct.slots(),
            });
        }
        if ct.level() < self.depth() {
            return Err(Error::LevelUnderflow {
                op: "HomomorphicDft::evaluate",
                level: ct.level(),
                needed: self.depth(),
            });
        }
        let mut out: Option<Ciphertext> = None;
        for lt in &self.transforms {
            out = Some(eval.linear_transform(out.as_ref().unwrap_or(ct), lt)?);
        }
        out.ok_or_else(|| Error::InvalidInput("HomomorphicDft: no transform".into()))
    }
}

/// Diagonals by index in `[0, slots)`.
type Diagonals = BTreeMap<usize, Vec<Complex64>>;

/// `stages` split into `levels` consecutive groups in application order, sizes differing by at
/// most one, the larger ones at the large-stride end.
fn group_sizes(stages: usize, levels: usize, direction: DftDirection) -> Vec<usize> {
    let (base, rem) = (stages / levels, stages % levels);
    let mut sizes: Vec<usize> = (0..levels).map(|g| base + usize::from(g < rem)).collect();
    if direction == DftDirection::SlotToCoeff {
        sizes.reverse();
    }
    sizes
}

/// `t_{h,i} = ζ_{8h}^{5^i mod 8h}` for `i < h` (the special FFT's twiddles).
fn twiddles(h: usize) -> Result<Vec<Complex64>> {
    let m = 8 * h;
    let mut e = 1usize;
    let mut out = Vec::with_capacity(h);
    for _ in 0..h {
        let (c, s) = DoubleDouble::cos_sin_turns(e as u64, m as u64)?;
        out.push(Complex64::new(c.to_f64(), s.to_f64()));
        e = (e * 5) % m;
    }
    Ok(out)
}

/// The diagonals of the butterfly stage of stride `h` (`S_h` for SlotToCoeff, `S_h^{-1}` for
/// CoeffToSlot).
fn stage(n: usize, h: usize, direction: DftDirection) -> Result<Diagonals> {
    let t = twiddles(h)?;
    let zero = Complex64::new(0.0, 0.0);
    let one = Complex64::new(1.0, 0.0);
    let half = Complex64::new(0.5, 0.0);
    let (mut d0, mut dp, mut dm) = (vec![zero; n], vec![zero; n], vec![zero; n]);
    for r in 0..n {
        let ti = t[r % h];
        let low = r % (2 * h) < h;
        match (direction, low) {
            (DftDirection::SlotToCoeff, true) => {
                d0[r] = one;
                dp[r] = ti;
            }
            (DftDirection::SlotToCoeff, false) => {
                dm[r] = one;
                d0[r] = -ti;
            }
            (DftDirection::CoeffToSlot, true) => {
                d0[r] = half;
                dp[r] = half;
            }
            (DftDirection::CoeffToSlot, false) => {
                let w = ti.conj() * 0.5;
                dm[r] = w;
                d0[r] = -w;
            }
        }
    }
    let mut out = Diagonals::new();
    out.insert(0, d0);
    // +h and −h coincide when h = n/2; their rows are disjoint, so adding is exact.
    for (k, d) in [(h, dp), (n - h, dm)] {
        match out.get_mut(&k) {
            Some(acc) => acc.iter_mut().zip(d).for_each(|(a, b)| *a += b),
            None => {
                out.insert(k, d);
            }
        }
    }
    Ok(out)
}

/// The diagonals of `A·B`: `(A·B)_{a+b}[i] += A_a[i] · B_b[i + a]`.
fn product(n: usize, a: &Diagonals, b: &Diagonals) -> Diagonals {
    let mut out = Diagonals::new();
    for (&ka, da) in a {
        for (&kb, db) in b {
            let acc = out
                .entry((ka + kb) % n)
                .or_insert_with(|| vec![Complex64::new(0.0, 0.0); n]);
            for (i, (x, &y)) in acc.iter_mut().zip(da).enumerate() {
                if y.re != 0.0 || y.im != 0.0 {
                    *x += y * db[(i + ka) % n];
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_sizes_put_the_extra_stages_at_the_large_strides() {
        assert_eq!(group_sizes(12, 3, DftDirection::CoeffToSlot), [4, 4, 4]);
        assert_eq!(group_sizes(8, 3, DftDirection::CoeffToSlot), [3, 3, 2]);
        assert_eq!(group_sizes(8, 3, DftDirection::SlotToCoeff), [2, 3, 3]);
        assert_eq!(group_sizes(5, 5, DftDirection::SlotToCoeff), [1; 5]);
    }

    #[test]
    fn bit_reversal() {
        assert_eq!(bit_reverse_index(1, 8), 4);
        assert_eq!(bit_reverse_index(6, 8), 3);
        assert_eq!(bit_reverse_index(1, 2), 1);
        for k in 0..64 {
            assert_eq!(bit_reverse_index(bit_reverse_index(k, 64), 64), k);
        }
    }

    #[test]
    fn diagonal_counts_of_merged_stages() {
        // 4096 slots, 3 levels of 4 stages: strides 2048..256 (16 diagonals), 128..16 and
        // 8..1 (31 each).
        let cts = HomomorphicDft::coeff_to_slot(4096, 3, 1.0).unwrap();
        assert_eq!(cts.diagonal_counts(), [16, 31, 31]);
        let stc = HomomorphicDft::slot_to_coeff(4096, 3, 1.0).unwrap();
        assert_eq!(stc.diagonal_counts(), [31, 31, 16]);
    }
}
