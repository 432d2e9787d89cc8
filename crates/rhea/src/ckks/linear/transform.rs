//! [`LinearTransform`]: a plaintext matrix on the slots, stored by its non-zero diagonals, with
//! its baby-step/giant-step plan and the cache of its encoded diagonals.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use num_complex::Complex64;

use super::storage::{DiagonalStorage, Encodings, StoredDiagonal};
use crate::backend::Device;
use crate::error::{Error, Result};

/// Where the encoded diagonals of one evaluation live: the parameters, the level and the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct CacheKey {
    pub(super) params_id: u64,
    pub(super) level: usize,
    pub(super) device: Device,
}

/// How a [`LinearTransform`] reaches its baby-step rotations: the trade between the rotation
/// keys it needs (memory: about 180 MB each at N = 2^16 with 30 + 6 limbs) and its time.
/// The giant steps are the same in both: a chain by Horner's rule, one key per distinct gap
/// between consecutive giant steps (one for each direction of a band).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RotationKeys {
    /// Every baby rotation from one shared ModUp of the input (hoisted): one key per non-zero
    /// baby step. The fastest.
    #[default]
    PerBabyStep,
    /// Each baby rotation from the previous one: one key per distinct gap between baby steps
    /// (one for a band, or for a level of the bootstrapping DFT), each baby step a full key
    /// switching (a ModDown and a ModUp more than hoisted); the plan re-balances baby and
    /// giant steps for that cost. The fewest keys: a transform whose diagonals are a band
    /// needs three.
    Fewest,
}

/// The diagonals of one giant step `j`: the baby steps `i` they multiply and the diagonal
/// indices `k = j·n1 + i`.
#[derive(Clone, Debug)]
pub(super) struct Giant {
    /// `j`.
    pub(super) j: usize,
    /// `(i, k)` for each diagonal of this giant step, `i` ascending.
    pub(super) terms: Vec<(usize, usize)>,
}

/// One link of a chain of giant steps evaluated by Horner's rule: the giant step (its index
/// in [`Plan::giants`]) whose products are added to the running sum, then the rotation step
/// (in `[1, slots)`) applied to the sum: the gap to the previous (nearer) link of the chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Link {
    pub(super) giant: usize,
    pub(super) step: usize,
}

/// The baby-step/giant-step decomposition `k = j·n1 + i` of a set of diagonal indices.
#[derive(Clone, Debug)]
pub(super) struct Plan {
    /// The baby-step count `n1`.
    pub(super) n1: usize,
    /// The distinct baby steps `i` used (ascending; `0` included when used).
    pub(super) babies: Vec<usize>,
    /// The giant steps used (ascending `j`).
    pub(super) giants: Vec<Giant>,
    /// The giant step `j = 0`, if used (its products are not rotated).
    pub(super) giant_zero: Option<usize>,
    /// The other giant steps as chains (the forward rotations and the backward ones, each
    /// nearest first): `Σ_j rot_{s_j}(A_j)` for a chain of offsets `s_1, …, s_m` is
    /// `rot_{s_1}(A_1 + rot_{s_2 − s_1}(A_2 + … rot_{s_m − s_{m−1}}(A_m)))`: as many key
    /// switchings as giant steps, one key per distinct gap.
    pub(super) chains: Vec<Vec<Link>>,
    /// How the baby steps are reached.
    pub(super) keys: RotationKeys,
}

/// The cost of a giant step in hoisted baby steps, for choosing `n1`: measured on an H200 at
/// N = 2^16 with 25 + 9 limbs, a 64-diagonal transform took 5.97 / 3.85 / 3.21 / 3.90 ms at
/// `n1` = 4 / 8 / 16 / 32, which fits a baby step at ~0.07 ms and a giant step at ~0.30 ms
/// (the plaintext products, the same for every `n1`, aside); on the CPU `n1 = 16` is also
/// faster than the key-switch-minimal `n1 = 8` (~20 %). A chained baby step
/// ([`RotationKeys::Fewest`]) costs about what a giant step does.
const GIANT_COST: usize = 4;

impl Plan {
    /// The key switchings of an evaluation: one per non-zero baby step, one per non-zero giant.
    pub(super) fn keyswitches(&self) -> usize {
        self.babies.iter().filter(|&&i| i != 0).count()
            + self.giants.iter().filter(|g| g.j != 0).count()
    }

    /// The baby steps in evaluation order with the rotation that reaches each: from the
    /// input (step 0) for [`RotationKeys::PerBabyStep`], from the previous baby step for
    /// [`RotationKeys::Fewest`]. `(i, step)` for each non-zero baby step `i`, ascending.
    pub(super) fn baby_rotations(&self, slots: usize) -> Vec<(usize, usize)> {
        let mut prev = 0;
        self.babies
            .iter()
            .filter(|&&i| i != 0)
            .map(|&i| {
                let step = match self.keys {
                    RotationKeys::PerBabyStep => i,
                    RotationKeys::Fewest => i - prev,
                };
                prev = i;
                (i, step % slots)
            })
            .collect()
    }

    /// The rotation steps an evaluation uses (non-zero, in `[1, slots)`), unsorted.
    pub(super) fn steps(&self, slots: usize) -> impl Iterator<Item = usize> + '_ {
        self.baby_rotations(slots)
            .into_iter()
            .map(|(_, s)| s)
            .chain(self.chains.iter().flatten().map(|l| l.step))
    }

    fn with_n1(n1: usize, indices: &[usize], slots: usize, keys: RotationKeys) -> Self {
        let mut giants: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
        let mut babies = std::collections::BTreeSet::new();
        for &k in indices {
            let (j, i) = (k / n1, k % n1);
            babies.insert(i);
            giants.entry(j).or_default().push((i, k));
        }
        let giants: Vec<Giant> = giants
            .into_iter()
            .map(|(j, mut terms)| {
                terms.sort_unstable();
                Giant { j, terms }
            })
            .collect();
        // Signed offsets: a rotation past the middle goes the other way (a band's negative
        // diagonals); each direction is one chain, nearest first.
        let mut forward: Vec<(usize, i64)> = Vec::new();
        let mut backward: Vec<(usize, i64)> = Vec::new();
        let mut giant_zero = None;
        for (idx, g) in giants.iter().enumerate() {
            let r = (g.j * n1) % slots;
            if r == 0 {
                giant_zero = Some(idx);
            } else if 2 * r <= slots {
                forward.push((idx, r as i64));
            } else {
                backward.push((idx, r as i64 - slots as i64));
            }
        }
        forward.sort_by_key(|&(_, s)| s);
        backward.sort_by_key(|&(_, s)| -s);
        let chain = |offsets: Vec<(usize, i64)>| -> Vec<Link> {
            let mut prev = 0i64;
            offsets
                .into_iter()
                .map(|(giant, s)| {
                    let step = (s - prev).rem_euclid(slots as i64) as usize;
                    prev = s;
                    Link { giant, step }
                })
                .collect()
        };
        let chains: Vec<Vec<Link>> = [chain(forward), chain(backward)]
            .into_iter()
            .filter(|c| !c.is_empty())
            .collect();
        Plan {
            n1,
            babies: babies.into_iter().collect(),
            giants,
            giant_zero,
            chains,
            keys,
        }
    }

    /// The `n1` of least cost `b + w·g` for `b` non-zero baby and `g` non-zero giant steps
    /// (each a key switching: `b + g = #babies + #giants − 2` when both include 0), ties
    /// broken towards fewer key switchings. A hoisted baby step is an inner product and two
    /// automorphisms; a giant step (and a chained baby step) adds a ModDown and a ModUp to
    /// those: `w` is [`GIANT_COST`] for hoisted baby steps, 1 for chained ones.
    /// Tried: every `n1` up to `2⌈√slots⌉ + 2` and every power of two up to `slots`.
    fn choose(indices: &[usize], slots: usize, keys: RotationKeys) -> Self {
        let weight = match keys {
            RotationKeys::PerBabyStep => GIANT_COST,
            RotationKeys::Fewest => 1,
        };
        let cost = |n1: usize| -> (usize, usize) {
            let mut baby = vec![false; n1];
            let mut giant = vec![false; slots / n1 + 1];
            for &k in indices {
                baby[k % n1] = true;
                giant[k / n1] = true;
            }
            let b = baby.iter().skip(1).filter(|&&x| x).count();
            let g = giant.iter().skip(1).filter(|&&x| x).count();
            (b + weight * g, b + g)
        };
        let root = (slots as f64).sqrt().ceil() as usize;
        let mut candidates: Vec<usize> = (1..=(2 * root + 2).min(slots)).collect();
        candidates.extend((0..=slots.trailing_zeros()).map(|t| 1usize << t));
        candidates.sort_unstable();
        candidates.dedup();
        let best = candidates
            .into_iter()
            .min_by_key(|&n1| cost(n1))
            .unwrap_or(1);
        Self::with_n1(best, indices, slots, keys)
    }
}

/// A plaintext matrix `M` acting on the slot vector `v` of a ciphertext with `slots` slots:
/// `M·v = Σ_k diag_k ⊙ rot_k(v)`, stored by its diagonals `diag_k[i] = M[i][(i + k) mod slots]`.
///
/// Built from a dense matrix ([`LinearTransform::from_dense`], square or rectangular, real or
/// complex), from its diagonals ([`LinearTransform::from_diagonals`]) or from a block-diagonal
/// structure ([`LinearTransform::from_block_diagonal`]); evaluated by
/// [`Evaluator::linear_transform`](crate::ckks::Evaluator::linear_transform) with the
/// baby-step/giant-step plan chosen here ([`LinearTransform::baby_steps`],
/// [`LinearTransform::giant_steps`]), which needs the rotation keys of
/// [`LinearTransform::rotations`].
///
/// The diagonals are encoded lazily, at the level (and on the device) of the first evaluation
/// there, and kept: a second evaluation at that level encodes nothing
/// ([`LinearTransform::cached_levels`], [`LinearTransform::encodings`]); on a GPU they stay
/// resident, whole or compact ([`LinearTransform::with_diagonal_storage`]). `Send + Sync`:
/// one transform serves many threads.
pub struct LinearTransform {
    slots: usize,
    /// The non-zero diagonals by index `k ∈ [0, slots)`.
    diagonals: BTreeMap<usize, Vec<Complex64>>,
    plan: Plan,
    /// A `rotate_and_sum(stride, count)` after the diagonal sum (the wide case of
    /// [`LinearTransform::from_dense_replicated`]).
    post_sum: Option<(usize, usize)>,
    /// How the encoded diagonals are kept.
    storage: DiagonalStorage,
    cache: Mutex<HashMap<CacheKey, Arc<Encodings>>>,
    /// How many times the diagonals were encoded ([`LinearTransform::encodings`]).
    encodings: AtomicU64,
}

impl std::fmt::Debug for LinearTransform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinearTransform")
            .field("slots", &self.slots)
            .field("diagonals", &self.diagonals.len())
            .field("baby_steps", &self.plan.n1)
            .field("giant_steps", &self.plan.giants.len())
            .finish()
    }
}

fn check_slots(slots: usize) -> Result<()> {
    if slots == 0 || !slots.is_power_of_two() {
        return Err(Error::InvalidInput(format!(
            "LinearTransform: slots = {slots} must be a power of two"
        )));
    }
    Ok(())
}

fn check_finite(what: &str, z: Complex64) -> Result<()> {
    if z.re.is_finite() && z.im.is_finite() {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "LinearTransform: non-finite entry {z} in {what}"
        )))
    }
}

impl LinearTransform {
    /// The transform of the matrix given by its diagonals: `(k, diag_k)` with `k` in
    /// `(−slots, slots)` (a negative `k` is `slots − |k|`) and `diag_k[i] = M[i][(i + k) mod
    /// slots]`, `slots` values each (real `f64` or [`Complex64`]).
    ///
    /// Errors: [`Error::InvalidInput`] for `slots` not a power of two, no diagonal, an index out
    /// of range or given twice (also as `k` and `k − slots`), a diagonal of another length, a
    /// non-finite entry.
    pub fn from_diagonals<T, D>(slots: usize, diagonals: D) -> Result<Self>
    where
        T: Copy + Into<Complex64>,
        D: IntoIterator<Item = (i64, Vec<T>)>,
    {
        check_slots(slots)?;
        let mut map = BTreeMap::new();
        for (k, diag) in diagonals {
            let s = slots as i64;
            if k <= -s || k >= s {
                return Err(Error::InvalidInput(format!(
                    "LinearTransform: diagonal index {k} outside (−{slots}, {slots})"
                )));
            }
            if diag.len() != slots {
                return Err(Error::InvalidInput(format!(
                    "LinearTransform: diagonal {k} has {} values for {slots} slots",
                    diag.len()
                )));
            }
            let d: Vec<Complex64> = diag.into_iter().map(Into::into).collect();
            for &z in &d {
                check_finite("a diagonal", z)?;
            }
            let idx = k.rem_euclid(s) as usize;
            if map.insert(idx, d).is_some() {
                return Err(Error::InvalidInput(format!(
                    "LinearTransform: diagonal {idx} given twice (as {idx} and {})",
                    idx as i64 - s
                )));
            }
        }
        Self::from_map(slots, map)
    }

    /// The transform of a dense `m × n` matrix (`rows[r][c]`, real `f64` or [`Complex64`]),
    /// `m` and `n` at most `slots` (`m = n = slots`: the square case): it reads the input from
    /// slots `0..n` (the other slots are ignored) and writes `M·v` to slots `0..m` (the other
    /// slots get 0). The matrix is embedded in the top-left corner of a `slots × slots` one, so
    /// a rectangular matrix has at most `m + n − 1` non-zero diagonals; all-zero diagonals are
    /// dropped.
    ///
    /// Errors: [`Error::InvalidInput`] for `slots` not a power of two, an empty or ragged
    /// matrix, one larger than `slots`, a non-finite entry, an all-zero matrix.
    pub fn from_dense<T, R>(slots: usize, rows: &[R]) -> Result<Self>
    where
        T: Copy + Into<Complex64>,
        R: AsRef<[T]>,
    {
        check_slots(slots)?;
        let m = rows.len();
        let n = rows.first().map_or(0, |r| r.as_ref().len());
        if m == 0 || n == 0 || m > slots || n > slots {
            return Err(Error::InvalidInput(format!(
                "LinearTransform::from_dense: a {m} × {n} matrix for {slots} slots (each side \
                 from 1 to the slot count)"
            )));
        }
        if let Some(r) = rows.iter().position(|r| r.as_ref().len() != n) {
            return Err(Error::InvalidInput(format!(
                "LinearTransform::from_dense: row {r} has {} entries, row 0 has {n}",
                rows[r].as_ref().len()
            )));
        }
        let entries = rows.iter().enumerate().flat_map(|(r, row)| {
            row.as_ref()
                .iter()
                .enumerate()
                .map(move |(c, &x)| (r, c, x.into()))
        });
        Self::from_entries(slots, entries)
    }

    /// The transform of a dense `m × n` matrix (real `f64` or [`Complex64`]) for an input
    /// **replicated** with period `n` (slot `c` holds `v[c mod n]`, e.g. an encoding of `v`
    /// tiled over the slots, or `v` in slots `0..n` spread by
    /// [`Evaluator::rotate_and_sum`](crate::ckks::Evaluator::rotate_and_sum)`(ct, -n, slots/n)`):
    /// the hybrid diagonal method, with fewer diagonals than [`LinearTransform::from_dense`]'s
    /// `m + n − 1`. `M·v` lands in slots `0..m`.
    ///
    /// - `m ≥ n` (tall or square): `n` diagonals `diag_k[r] = M[r][(r + k) mod n]`; the slots
    ///   from `m` on get 0.
    /// - `m < n` (wide, `m` dividing `n`): `m` diagonals `diag_k[r] = M[r mod m][(r + k) mod n]`
    ///   (`r < n`), then the `n/m` partial sums are added by a
    ///   `rotate_and_sum(m, n/m)` inside the evaluation (`log2(n/m)` more key switchings, listed
    ///   in [`LinearTransform::rotations`] and [`LinearTransform::keyswitches`]); the slots from
    ///   `m` on hold partial sums (mask them if they matter).
    ///
    /// Errors: [`Error::InvalidInput`] for `slots` not a power of two, an empty or ragged
    /// matrix, `n` not a power of two dividing `slots`, `m > slots`, a wide `m` not dividing
    /// `n`, a non-finite entry, an all-zero matrix.
    pub fn from_dense_replicated<T, R>(slots: usize, rows: &[R]) -> Result<Self>
    where
        T: Copy + Into<Complex64>,
        R: AsRef<[T]>,
    {
        check_slots(slots)?;
        let m = rows.len();
        let n = rows.first().map_or(0, |r| r.as_ref().len());
        if m == 0 || n == 0 || m > slots || slots % n != 0 || (m < n && n % m != 0) {
            return Err(Error::InvalidInput(format!(
                "LinearTransform::from_dense_replicated: a {m} × {n} matrix for {slots} slots                  (n must divide the slot count, m be at most it, and divide n if smaller)"
            )));
        }
        if let Some(r) = rows.iter().position(|r| r.as_ref().len() != n) {
            return Err(Error::InvalidInput(format!(
                "LinearTransform::from_dense_replicated: row {r} has {} entries, row 0 has {n}",
                rows[r].as_ref().len()
            )));
        }
        let at = |r: usize, c: usize| -> Complex64 { rows[r].as_ref()[c].into() };
        let (count, len) = if m >= n { (n, m) } else { (m, n) };
        let mut map = BTreeMap::new();
        for k in 0..count {
            let mut d = vec![Complex64::new(0.0, 0.0); slots];
            for (r, x) in d.iter_mut().enumerate().take(len) {
                *x = at(r % m, (r + k) % n);
                check_finite("the matrix", *x)?;
            }
            if d.iter().any(|z| *z != Complex64::new(0.0, 0.0)) {
                map.insert(k, d);
            }
        }
        let mut lt = Self::from_map(slots, map)?;
        if m < n {
            lt.post_sum = Some((m, n / m));
        }
        Ok(lt)
    }

    /// A block-diagonal transform: the slots split into `slots / d` consecutive blocks of `d`
    /// slots, block `t` multiplied by the `d × d` matrix `blocks[t]`, or by `blocks[0]` in every
    /// block when one matrix is given (the same small matrix on many packed vectors: a batch of
    /// HELR samples, the channels of a CNN layer). At most `2d − 1` diagonals, whatever the slot
    /// count.
    ///
    /// Errors: [`Error::InvalidInput`] for `slots` not a power of two, a block size `d` (the
    /// matrices' side) that does not divide `slots`, a block count other than 1 or `slots / d`,
    /// non-square or unequal blocks, a non-finite entry, all-zero blocks.
    pub fn from_block_diagonal<T, R>(slots: usize, blocks: &[Vec<R>]) -> Result<Self>
    where
        T: Copy + Into<Complex64>,
        R: AsRef<[T]>,
    {
        check_slots(slots)?;
        let d = blocks.first().map_or(0, Vec::len);
        if d == 0 || slots % d != 0 {
            return Err(Error::InvalidInput(format!(
                "LinearTransform::from_block_diagonal: block side {d} must divide {slots} slots"
            )));
        }
        let count = slots / d;
        if blocks.len() != 1 && blocks.len() != count {
            return Err(Error::InvalidInput(format!(
                "LinearTransform::from_block_diagonal: {} blocks for {count} blocks of {d} slots \
                 (give 1 to repeat it, or {count})",
                blocks.len()
            )));
        }
        for (t, b) in blocks.iter().enumerate() {
            if b.len() != d || b.iter().any(|r| r.as_ref().len() != d) {
                return Err(Error::InvalidInput(format!(
                    "LinearTransform::from_block_diagonal: block {t} is not {d} × {d}"
                )));
            }
        }
        let entries = (0..count).flat_map(|t| {
            let b = &blocks[if blocks.len() == 1 { 0 } else { t }];
            b.iter().enumerate().flat_map(move |(r, row)| {
                row.as_ref()
                    .iter()
                    .enumerate()
                    .map(move |(c, &x)| (t * d + r, t * d + c, x.into()))
            })
        });
        Self::from_entries(slots, entries)
    }

    /// From `(row, column, value)` entries of a `slots × slots` matrix (each position once).
    fn from_entries(
        slots: usize,
        entries: impl Iterator<Item = (usize, usize, Complex64)>,
    ) -> Result<Self> {
        let mut map: BTreeMap<usize, Vec<Complex64>> = BTreeMap::new();
        for (r, c, z) in entries {
            check_finite("the matrix", z)?;
            if z == Complex64::new(0.0, 0.0) {
                continue;
            }
            let k = (c + slots - r) % slots;
            map.entry(k)
                .or_insert_with(|| vec![Complex64::new(0.0, 0.0); slots])[r] = z;
        }
        Self::from_map(slots, map)
    }

    fn from_map(slots: usize, diagonals: BTreeMap<usize, Vec<Complex64>>) -> Result<Self> {
        if diagonals.is_empty() {
            return Err(Error::InvalidInput(
                "LinearTransform: no non-zero diagonal (the zero matrix)".into(),
            ));
        }
        let indices: Vec<usize> = diagonals.keys().copied().collect();
        let plan = Plan::choose(&indices, slots, RotationKeys::default());
        Ok(Self {
            slots,
            diagonals,
            plan,
            post_sum: None,
            storage: DiagonalStorage::default(),
            cache: Mutex::new(HashMap::new()),
            encodings: AtomicU64::new(0),
        })
    }

    /// The same transform with the baby-step count `n1` forced (the constructors choose the
    /// `n1` with the fewest key switchings; a larger `n1` trades giant steps, each a ModUp and a
    /// ModDown besides its key switching, for cheaper hoisted baby steps). Drops the cache.
    ///
    /// Errors: [`Error::InvalidInput`] unless `1 ≤ n1 ≤ slots`.
    pub fn with_baby_steps(mut self, n1: usize) -> Result<Self> {
        if n1 == 0 || n1 > self.slots {
            return Err(Error::InvalidInput(format!(
                "LinearTransform::with_baby_steps: n1 = {n1} outside [1, {}]",
                self.slots
            )));
        }
        let indices: Vec<usize> = self.diagonals.keys().copied().collect();
        self.plan = Plan::with_n1(n1, &indices, self.slots, self.plan.keys);
        self.clear_cache();
        Ok(self)
    }

    /// The same transform reaching its baby steps as `keys` says ([`RotationKeys::Fewest`]:
    /// fewer rotation keys, more time), with the `n1` of least cost for that mode re-chosen
    /// (a later [`LinearTransform::with_baby_steps`] keeps the mode). The key switchings stay
    /// one per non-zero baby and giant step. Drops the cache.
    ///
    /// ```
    /// use rhea::ckks::{LinearTransform, RotationKeys};
    /// // A band of 63 diagonals (−31..=31) on 4096 slots.
    /// let band = (-31i64..=31).map(|k| (k, vec![1.0 + k as f64 / 64.0; 4096]));
    /// let lt = LinearTransform::from_diagonals(4096, band)?;
    /// let fewest = LinearTransform::from_diagonals(
    ///     4096,
    ///     (-31i64..=31).map(|k| (k, vec![1.0 + k as f64 / 64.0; 4096])),
    /// )?
    /// .with_rotation_keys(RotationKeys::Fewest);
    /// assert!(lt.rotations().len() > 10);
    /// assert_eq!(fewest.rotations().len(), 3); // +1, +8 and −8
    /// # Ok::<(), rhea::Error>(())
    /// ```
    pub fn with_rotation_keys(mut self, keys: RotationKeys) -> Self {
        let indices: Vec<usize> = self.diagonals.keys().copied().collect();
        self.plan = Plan::choose(&indices, self.slots, keys);
        self.clear_cache();
        self
    }

    /// The same transform keeping its encoded diagonals as `storage` says
    /// ([`DiagonalStorage::Compact`]: about one limb per diagonal instead of `ℓ + 1 + |P|`, for
    /// a lift and an NTT per diagonal at each evaluation; the same results). Drops the cache.
    pub fn with_diagonal_storage(mut self, storage: DiagonalStorage) -> Self {
        self.storage = storage;
        self.clear_cache();
        self
    }

    /// How the encoded diagonals are kept ([`LinearTransform::with_diagonal_storage`]).
    pub fn diagonal_storage(&self) -> DiagonalStorage {
        self.storage
    }

    /// Bytes the cached encodings hold (device memory on a GPU; every level and device).
    pub fn cached_bytes(&self) -> u64 {
        self.lock().values().map(|e| e.bytes()).sum()
    }

    /// How the baby steps are reached ([`LinearTransform::with_rotation_keys`]).
    pub fn rotation_keys(&self) -> RotationKeys {
        self.plan.keys
    }

    /// The slot count of the ciphertexts this transform applies to.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// How many diagonals it has (non-zero ones, for the dense and block constructors).
    pub fn diagonal_count(&self) -> usize {
        self.diagonals.len()
    }

    /// The diagonal indices, ascending in `[0, slots)`.
    pub fn diagonal_indices(&self) -> Vec<usize> {
        self.diagonals.keys().copied().collect()
    }

    /// The baby-step count `n1` of the plan: diagonal `k` is reached as the baby rotation
    /// `k mod n1` followed by the giant rotation `n1·⌊k / n1⌋`.
    pub fn baby_steps(&self) -> usize {
        self.plan.n1
    }

    /// How many giant steps the plan has (distinct `⌊k / n1⌋`, the step 0 included).
    pub fn giant_steps(&self) -> usize {
        self.plan.giants.len()
    }

    /// The key switchings one evaluation runs: one per non-zero baby rotation and one per
    /// non-zero giant rotation (`baby + giant − 2` for a plan using both steps 0), plus the
    /// rotations of a wide [`LinearTransform::from_dense_replicated`]'s final sum.
    pub fn keyswitches(&self) -> usize {
        self.plan.keyswitches()
            + self.post_sum.map_or(0, |(stride, count)| {
                crate::ckks::Evaluator::rotate_and_sum_rotations(self.slots, stride as i64, count)
                    .len()
            })
    }

    /// The rotation steps (in `[1, slots)`) whose Galois keys an evaluation needs, ascending:
    /// the baby steps `i` used (or, with [`RotationKeys::Fewest`], the gaps between them) and
    /// the gaps between consecutive giant steps `j·n1` in each direction (the giant steps are
    /// chained by Horner's rule: a band needs two, `+n1` and `−n1`). Generate exactly these:
    /// `keygen.galois_keys(&sk, &lt.rotations(), false)`.
    pub fn rotations(&self) -> Vec<i64> {
        let mut steps: Vec<i64> = self.plan.steps(self.slots).map(|s| s as i64).collect();
        if let Some((stride, count)) = self.post_sum {
            steps.extend(crate::ckks::Evaluator::rotate_and_sum_rotations(
                self.slots,
                stride as i64,
                count,
            ));
        }
        steps.sort_unstable();
        steps.dedup();
        steps
    }

    /// The levels at which encoded diagonals are cached (on any device), ascending: after an
    /// evaluation at level `ℓ`, `ℓ` is listed and the next evaluation there encodes nothing.
    pub fn cached_levels(&self) -> Vec<usize> {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let mut levels: Vec<usize> = cache.keys().map(|k| k.level).collect();
        levels.sort_unstable();
        levels.dedup();
        levels
    }

    /// How many times this transform's diagonals were encoded (each time all of them, for one
    /// level and device): one per `(level, device)` evaluated at, however many evaluations ran
    /// there (two threads evaluating a fresh transform at once may both encode; one result is
    /// kept).
    pub fn encodings(&self) -> u64 {
        self.encodings.load(Ordering::Relaxed)
    }

    /// Drops every cached encoding (frees their memory; the next evaluation encodes again).
    pub fn clear_cache(&self) {
        self.cache.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// `M·v` in `f64` for a slot vector `v` (`slots` values): the plaintext reference of an
    /// evaluation.
    ///
    /// Errors: [`Error::InvalidInput`] for a vector of another length.
    pub fn apply(&self, v: &[Complex64]) -> Result<Vec<Complex64>> {
        if v.len() != self.slots {
            return Err(Error::InvalidInput(format!(
                "LinearTransform::apply: {} values for {} slots",
                v.len(),
                self.slots
            )));
        }
        let n = self.slots;
        let mut out = vec![Complex64::new(0.0, 0.0); n];
        for (&k, d) in &self.diagonals {
            for (i, o) in out.iter_mut().enumerate() {
                *o += d[i] * v[(i + k) % n];
            }
        }
        if let Some((stride, count)) = self.post_sum {
            out = (0..n)
                .map(|i| (0..count).map(|t| out[(i + t * stride) % n]).sum())
                .collect();
        }
        Ok(out)
    }

    pub(super) fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The `rotate_and_sum(stride, count)` that follows the diagonal sum, if any.
    pub(super) fn post_sum(&self) -> Option<(usize, usize)> {
        self.post_sum
    }

    /// The diagonals of each giant step `j` pre-rotated by `−j·n1`, in plan order (what gets
    /// encoded).
    pub(super) fn prerotated(&self) -> Vec<Vec<Complex64>> {
        let n = self.slots;
        let mut out = Vec::with_capacity(self.diagonals.len());
        for g in &self.plan.giants {
            let shift = g.j * self.plan.n1;
            for &(_, k) in &g.terms {
                let d = &self.diagonals[&k];
                out.push((0..n).map(|t| d[(t + n - shift) % n]).collect());
            }
        }
        out
    }

    /// The cached encoding at `key`, or `encode(storage)`'s (then cached). The lock is not held
    /// while encoding (which runs on the CPU pool): two first evaluations racing may both
    /// encode, and the first to finish is kept.
    pub(super) fn encoded(
        &self,
        key: CacheKey,
        encode: impl FnOnce(DiagonalStorage) -> Result<Vec<StoredDiagonal>>,
    ) -> Result<Arc<Encodings>> {
        if let Some(e) = self.lock().get(&key) {
            return Ok(e.clone());
        }
        let mut flat = encode(self.storage)?.into_iter();
        self.encodings.fetch_add(1, Ordering::Relaxed);
        let grouped: Vec<Vec<StoredDiagonal>> = self
            .plan
            .giants
            .iter()
            .map(|g| flat.by_ref().take(g.terms.len()).collect())
            .collect();
        let mut cache = self.lock();
        Ok(cache
            .entry(key)
            .or_insert_with(|| Arc::new(Encodings(grouped)))
            .clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<CacheKey, Arc<Encodings>>> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }
}
