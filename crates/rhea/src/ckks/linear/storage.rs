//! How a [`LinearTransform`](super::LinearTransform) keeps its encoded diagonals between
//! evaluations: whole (NTT form over `Q_ℓ ∪ P`, or over `Q_ℓ` alone) or compact (one limb each,
//! expanded where used).

use crate::backend::{Poly, PolyShape, RnsRing};
use crate::error::Result;

/// How a [`LinearTransform`](super::LinearTransform) stores its encoded diagonals
/// ([`LinearTransform::with_diagonal_storage`](super::LinearTransform::with_diagonal_storage)).
///
/// A diagonal evaluated at level `ℓ` is a plaintext over `Q_ℓ ∪ P`: `ℓ + 1 + |P|` limbs of `N`
/// words (4 MiB at N = 2^16 with 2 + 6 limbs, 21 MiB with 36 + 6). Its coefficients are the
/// rounded `Δ·IDFT(diagonal)`, small integers: when they lie below `q_0 / 2` in magnitude —
/// what the encoder checks, true of diagonals near 1 at scales up to ~2^58 — their residues
/// modulo `q_0` determine every other limb.
///
/// ```
/// use rhea::ckks::{DiagonalStorage, LinearTransform};
/// let band = (-3i64..=3).map(|k| (k, vec![0.25 + k as f64 / 16.0; 1024]));
/// let lt = LinearTransform::from_diagonals(1024, band)?
///     .with_diagonal_storage(DiagonalStorage::Compact);
/// assert_eq!(lt.diagonal_storage(), DiagonalStorage::Compact);
/// # Ok::<(), rhea::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DiagonalStorage {
    /// The NTT-form encodings over `Q_ℓ ∪ P`, ready to multiply: the baby steps stay over
    /// `Q_ℓ ∪ P` (double hoisting, one ModDown per giant step): the fastest evaluation where
    /// `Q_ℓ` is most of the basis (bootstrapping's transforms at the top of the chain).
    #[default]
    Full,
    /// The NTT-form encodings over `Q_ℓ` only, ready to multiply: each baby rotation is brought
    /// down to `Q_ℓ` (its ModDown fused with the key switching, as a plain rotation) before the
    /// products, and the giant steps rotate ciphertexts over `Q_ℓ`. `(ℓ + 1)/(ℓ + 1 + |P|)` of
    /// [`DiagonalStorage::Full`]'s memory — 5/12 at level 4 with 7 special primes — for a
    /// ModDown per baby step instead of per giant step: for transforms at the bottom of the
    /// chain, where `P` is most of the basis and the diagonals are many. The results are those
    /// of a baby-step/giant-step evaluation with one rounding per baby step (not the same words
    /// as `Full`, which rounds once; the same precision up to that rounding).
    QOnly,
    /// The coefficients' residues modulo `q_0` (one limb, coefficient form) of each diagonal
    /// whose coefficients allow it (the others whole), lifted to every limb and transformed on
    /// the device at each evaluation and dropped after it: `1/(ℓ + 1 + |P|)` of the memory, for
    /// a lift and a forward NTT per diagonal per evaluation. The same words are multiplied, so
    /// the results are those of [`DiagonalStorage::Full`].
    Compact,
}

impl DiagonalStorage {
    /// Every storage, in the order of [`DiagonalStorage::name`]'s documentation.
    pub const ALL: [DiagonalStorage; 3] = [Self::Full, Self::QOnly, Self::Compact];

    /// The name the command line and Python use: `"whole"`, `"q-only"` or `"compact"`.
    ///
    /// ```
    /// use rhea::ckks::DiagonalStorage;
    /// assert_eq!(DiagonalStorage::QOnly.name(), "q-only");
    /// assert_eq!(DiagonalStorage::from_name("whole"), Some(DiagonalStorage::Full));
    /// assert_eq!(DiagonalStorage::from_name("dense"), None);
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Self::Full => "whole",
            Self::QOnly => "q-only",
            Self::Compact => "compact",
        }
    }

    /// The storage called `name` ([`DiagonalStorage::name`]), or `None`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// One encoded diagonal as cached.
pub(crate) enum StoredDiagonal {
    /// Ready to multiply: NTT form over `Q_ℓ ∪ P` (or `Q_ℓ` for [`DiagonalStorage::QOnly`]).
    Full(Poly),
    /// The `q_0` residues (one Q limb, coefficient form) of coefficients below `q_0 / 2` in
    /// magnitude, and the shape they expand to.
    Compact { limb0: Poly, shape: PolyShape },
}

impl StoredDiagonal {
    fn full(&self) -> Option<&Poly> {
        match self {
            Self::Full(p) => Some(p),
            Self::Compact { .. } => None,
        }
    }

    fn words(&self) -> u64 {
        match self {
            Self::Full(p) => p.shape().words() as u64,
            Self::Compact { limb0, .. } => limb0.shape().words() as u64,
        }
    }
}

/// A compact diagonal's one limb and where it sits: giant step, term.
type Placed<'a> = (usize, usize, &'a Poly);

/// The encoded diagonals of one evaluation's level and device, grouped by giant step.
pub(super) struct Encodings(pub(super) Vec<Vec<StoredDiagonal>>);

/// The diagonals of [`Encodings`] ready to multiply: the compact ones expanded for this
/// evaluation (dropped with it), the whole ones borrowed.
pub(super) struct Expanded<'a> {
    stored: &'a Encodings,
    expanded: Vec<Vec<Option<Poly>>>,
}

impl Encodings {
    /// Bytes of device (or host) memory the stored diagonals hold.
    pub(super) fn bytes(&self) -> u64 {
        self.0
            .iter()
            .flatten()
            .map(StoredDiagonal::words)
            .sum::<u64>()
            * 8
    }

    /// Every diagonal ready to multiply: the compact ones lifted on their device
    /// ([`RnsRing::lift_many`]: sixteen a launch on a GPU), then transformed together
    /// ([`RnsRing::ntt_forward_many`]: one grouped launch per phase for a dozen diagonals).
    pub(super) fn expand<'a>(&'a self, ring: &RnsRing) -> Result<Expanded<'a>> {
        let mut expanded: Vec<Vec<Option<Poly>>> = self
            .0
            .iter()
            .map(|g| g.iter().map(|_| None).collect())
            .collect();
        // The compact diagonals by the shape they expand to (one shape for one evaluation).
        let mut by_shape: Vec<(PolyShape, Vec<Placed<'_>>)> = Vec::new();
        for (g, giant) in self.0.iter().enumerate() {
            for (t, d) in giant.iter().enumerate() {
                if let StoredDiagonal::Compact { limb0, shape } = d {
                    match by_shape.iter_mut().find(|(s, _)| s == shape) {
                        Some((_, list)) => list.push((g, t, limb0)),
                        None => by_shape.push((*shape, vec![(g, t, limb0)])),
                    }
                }
            }
        }
        for (shape, list) in by_shape {
            let limbs: Vec<&Poly> = list.iter().map(|&(_, _, p)| p).collect();
            let lifted = ring.lift_many(&limbs, shape)?;
            for ((g, t, _), p) in list.into_iter().zip(lifted) {
                expanded[g][t] = Some(p);
            }
        }
        let mut lifted: Vec<&mut Poly> = expanded.iter_mut().flatten().flatten().collect();
        ring.ntt_forward_many(&mut lifted)?;
        Ok(Expanded {
            stored: self,
            expanded,
        })
    }
}

impl Expanded<'_> {
    /// The diagonals of each giant step, in plan order.
    pub(super) fn giants(&self) -> Vec<Vec<&Poly>> {
        self.stored
            .0
            .iter()
            .zip(&self.expanded)
            .map(|(stored, expanded)| {
                stored
                    .iter()
                    .zip(expanded)
                    .filter_map(|(s, e)| e.as_ref().or_else(|| s.full()))
                    .collect()
            })
            .collect()
    }
}
