//! Linear algebra on the slots: plaintext-matrix × encrypted-vector products
//! ([`LinearTransform`], [`Evaluator::linear_transform`](crate::ckks::Evaluator::linear_transform))
//! and slot utilities (sums over slots, replication, inner products:
//! [`Evaluator::sum_slots`](crate::ckks::Evaluator::sum_slots) and its neighbours).
//!
//! # The diagonal method
//!
//! A `slots × slots` matrix `M` acts on the slot vector `v` as `M·v = Σ_k diag_k ⊙ rot_k(v)`
//! with `diag_k[i] = M[i][(i + k) mod slots]` and `rot_k` the left rotation by `k`. A transform
//! keeps only its non-zero diagonals: a dense `m × n` matrix has at most `m + n − 1`, a
//! block-diagonal one with `d × d` blocks at most `2d − 1`, a banded one its band.
//!
//! Constructors: [`LinearTransform::from_dense`] (any `m × n` matrix, `m, n ≤ slots`, embedded
//! in the top-left corner: input read from slots `0..n`, output in `0..m`),
//! [`LinearTransform::from_dense_replicated`] (the hybrid method for an input replicated with
//! period `n`: `min(m, n)` diagonals), [`LinearTransform::from_block_diagonal`] (one block
//! repeated or independent blocks: a batch of small products) and
//! [`LinearTransform::from_diagonals`].
//!
//! # Baby-step/giant-step and double hoisting
//!
//! Writing `k = j·n1 + i` (`0 ≤ i < n1`),
//! `M·v = Σ_j rot_{j·n1}( Σ_i rot_{−j·n1}(diag_{j·n1+i}) ⊙ rot_i(v) )`: the `n1` baby rotations
//! `rot_i(v)` are shared by every giant step and the diagonals are pre-rotated in the clear, so
//! `D` diagonals cost `(#baby − 1) + (#giant − 1)` key switchings instead of `D − 1`, with `n1`
//! chosen per transform to minimise that count (about `2√D` for a contiguous band).
//! The evaluation ([`Evaluator::linear_transform`](crate::ckks::Evaluator::linear_transform)) is
//! doubly hoisted:
//!
//! - **one ModUp** of `c_1` serves every baby rotation; the baby results are kept in the
//!   extended basis `Q_ℓ ∪ P` (no ModDown), the identity as `(P·c_0, P·c_1)`;
//! - the diagonals are encoded over `Q_ℓ ∪ P` and each giant step's inner sum is a plain
//!   multiply-accumulate there (`2·D` plaintext products in all);
//! - the giant steps are chained by Horner's rule, forward and backward from `j = 0`:
//!   `Σ_j rot_{s_j}(A_j) = rot_{s_1}(A_1 + rot_{s_2−s_1}(A_2 + …))`; each link brings only the
//!   running sum's `c_1` down (**one ModDown**), key-switches it (**one ModUp** and one inner
//!   product) and keeps the rotated result in `Q_ℓ ∪ P`. As many key switchings as non-zero
//!   giant steps, but one rotation key per distinct gap (`+n1` and `−n1` for a band) instead
//!   of one per giant step;
//! - **two ModDowns** of the total and one rescaling end it.
//!
//! [`RotationKeys::Fewest`] ([`LinearTransform::with_rotation_keys`]) chains the baby steps
//! too (each from the previous one, a full key switching each): a band then needs three
//! rotation keys, for cards without room for one per baby step (bootstrapping at N = 2^16
//! holds 9 rotation keys instead of 43).
//!
//! [`DiagonalStorage::QOnly`] ([`LinearTransform::with_diagonal_storage`]) hoists singly
//! instead: one ModUp still serves every baby rotation, but each baby result is brought down
//! to `Q_ℓ` (its ModDown fused with the key switching), the diagonals are encoded over `Q_ℓ`
//! alone and the giant links are plain rotations — `b + g` ModDowns instead of `g + 2`, for
//! `(ℓ + 1)/(ℓ + 1 + |P|)` of the diagonals' memory and products over `Q_ℓ`: the better trade
//! low in the chain with many diagonals (ResNet-20's maps at 5 + 7 limbs: 2.4× less memory and
//! 20 % faster, H200), the worse one high in it (bootstrapping's DFTs, measured).
//!
//! In all, for `b` non-zero baby steps and `g` non-zero giant steps: `b + g` key switchings
//! (counted by [`CkksContext::keyswitches`](crate::ckks::CkksContext::keyswitches)),
//! `1 + g` ModUps, `g + 2` ModDowns, `2·D` plaintext products over `Q_ℓ ∪ P`, one rescaling.
//! The baby results occupy `2·(b + 1)` polynomials over `Q_ℓ ∪ P` during the evaluation.
//! Several transforms of one input
//! ([`Evaluator::linear_transforms`](crate::ckks::Evaluator::linear_transforms)) share the ModUp
//! and the baby steps.
//!
//! Measured on this repository's 2-core CPU (N = 2^13, level 10, a 64-diagonal band): about
//! 3.7× faster than one hoisted rotation per diagonal (each with its own ModDown); keeping the
//! giant results in `Q_ℓ ∪ P` (`g + 2` ModDowns) is about 1.45× faster than bringing each giant
//! sum down before a plain rotation (`4g`).
//! [`LinearTransform::with_baby_steps`] overrides the `n1` chosen (fewest key switchings):
//! where a ModUp costs several key-switching inner products, a larger `n1` (fewer giant
//! steps) can be faster despite more key switchings.
//!
//! # Level and scale
//!
//! A transform consumes exactly one level and returns the input's scale exactly: the diagonals
//! are encoded at the scale `q_ℓ`, the prime the final rescaling divides by. They are encoded
//! lazily, at the first evaluation at a level and on the evaluator's device, and cached in the
//! transform ([`LinearTransform::cached_levels`]); on a GPU they stay resident. Everything runs
//! on the backend's ring primitives, so the CPU and the GPU give the same words.
//!
//! # Slot utilities
//!
//! | operation | levels | key switchings | rotation steps |
//! |---|---|---|---|
//! | [`sum_slots`](crate::ckks::Evaluator::sum_slots) | 0 | `log2(slots)` | [`sum_slots_rotations`](crate::ckks::Evaluator::sum_slots_rotations) |
//! | [`rotate_and_sum`](crate::ckks::Evaluator::rotate_and_sum)`(ct, stride, count)` | 0 | `≤ ⌊log2 count⌋ + popcount(count) − 1` | [`rotate_and_sum_rotations`](crate::ckks::Evaluator::rotate_and_sum_rotations) |
//! | [`replicate`](crate::ckks::Evaluator::replicate)`(ct, slot)` | 1 | `log2(slots)` | [`replicate_rotations`](crate::ckks::Evaluator::replicate_rotations) |
//! | [`inner_product`](crate::ckks::Evaluator::inner_product)`(a, b)` | 1 | `1 + log2(slots)` | [`inner_product_rotations`](crate::ckks::Evaluator::inner_product_rotations) |
//! | [`linear_transform`](crate::ckks::Evaluator::linear_transform) | 1 | [`LinearTransform::keyswitches`] | [`LinearTransform::rotations`] |
//!
//! # Keys
//!
//! [`LinearTransform::rotations`] lists the rotation steps an evaluation needs, and the slot
//! utilities have companion functions ([`Evaluator::sum_slots_rotations`](crate::ckks::Evaluator::sum_slots_rotations), ...),
//! so that key generation asks for exactly those.
//!
//! ```
//! use rhea::ckks::{CkksContext, Encoder, Encryptor, Decryptor, Evaluator, KeyGenerator, LinearTransform};
//! use rhea::params::CkksParametersLiteral;
//! use rhea::Device;
//!
//! let params = CkksParametersLiteral::test_n13_levels10_insecure().build()?;
//! let ctx = CkksContext::new(&params, Device::Cpu)?;
//! let slots: usize = 16; // sparse packing
//! // A 16 × 16 tridiagonal matrix: 2 on the diagonal, −1 beside it.
//! let m: Vec<Vec<f64>> = (0..slots)
//!     .map(|r| (0..slots).map(|c| match r.abs_diff(c) { 0 => 2.0, 1 => -1.0, _ => 0.0 }).collect())
//!     .collect();
//! let lt = LinearTransform::from_dense(slots, &m)?;
//! assert_eq!(lt.diagonal_count(), 3);
//!
//! let mut keygen = KeyGenerator::from_seed(&ctx, [1; 32]);
//! let sk = keygen.secret_key()?;
//! let pk = keygen.public_key(&sk)?;
//! let gk = keygen.galois_keys(&sk, &lt.rotations(), false)?; // exactly the steps it needs
//! let eval = Evaluator::new(&ctx).with_galois_keys(gk)?;
//! let encoder = Encoder::with_slots(&ctx, slots)?;
//!
//! let v: Vec<f64> = (0..slots).map(|i| i as f64 / 16.0).collect();
//! let ct = Encryptor::new(&ctx, &pk)?.encrypt(&encoder.encode(&v)?)?;
//! let before = ctx.keyswitches();
//! let out = eval.linear_transform(&ct, &lt)?;
//! assert_eq!(ctx.keyswitches() - before, lt.keyswitches() as u64);
//! assert_eq!(out.level(), ct.level() - 1);
//! assert_eq!(out.scale(), ct.scale()); // exactly
//! let got = encoder.decode(&Decryptor::new(&ctx, &sk)?.decrypt(&out)?)?;
//! for r in 0..slots {
//!     let want: f64 = (0..slots).map(|c| m[r][c] * v[c]).sum();
//!     assert!((got[r] - want).abs() < 1e-6);
//! }
//! # Ok::<(), rhea::Error>(())
//! ```

mod bsgs;
mod slots;
mod storage;
mod transform;

pub use storage::DiagonalStorage;
pub(crate) use storage::StoredDiagonal;
pub use transform::{LinearTransform, RotationKeys};
