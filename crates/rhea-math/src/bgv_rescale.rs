//! BGV modulus switching: division by the last prime (or by `P`) that keeps the plaintext modulo
//! `t`.
//!
//! A BGV ciphertext decrypts to `v = [m]_t + t·e` over `Q_ℓ`. Dividing `v` by a prime `q` with
//! the plain rounding of [`crate::bconv::Rescaler`] would add a rounding term that is not a
//! multiple of `t` and destroy `m`. The BGV variant subtracts instead the unique small
//! `δ ≡ x (mod q)` with `δ ≡ 0 (mod t)`:
//!
//! `δ = t · [x · t^{-1}]_q` (the residue centred in `(-q/2, q/2]`, so `|δ| ≤ t·q/2`),
//! `out = (x - δ) / q` (an exact division),
//!
//! so `out ≡ q^{-1} · x (mod t)`: the message is scaled by `q^{-1} mod t`, which the scheme tracks
//! (the ciphertext's correction factor), and the added error `δ / q` is at most `t/2` per
//! coefficient. The same holds for a division by the key-switching modulus `P` (hybrid key
//! switching's ModDown, [`BgvModDown`]); with the key-switching keys' errors multiplied by `t`
//! the factor `P^{-1}` cancels against the `P` of the keys, so key switching does not scale the
//! message.
//!
//! Both are the exact references (tested against big integers) for the fused GPU kernels. They
//! equal the compositions `t · Rescale(t^{-1} · x)` and `t · ModDown(t^{-1} · x)` of the plain
//! CKKS primitives with centred rounding, which is how scheme code may run them on a backend
//! without a fused kernel; a test checks that the two agree word for word.

use rayon::prelude::*;

use crate::basis::{check_poly, Basis};
use crate::bconv::BaseConverter;
use crate::error::{MathError, Result};
use crate::Modulus;

/// Checks `2 ≤ t` and `gcd(t, q) = 1` for every modulus of `basis`.
fn check_t(t: u64, basis: &Basis) -> Result<()> {
    if t < 2 {
        return Err(MathError::InvalidArgument(format!(
            "the plaintext modulus t = {t} must be at least 2"
        )));
    }
    for q in basis.moduli() {
        let (mut a, mut b) = (t, q.value());
        while b != 0 {
            (a, b) = (b, a % b);
        }
        if a != 1 {
            return Err(MathError::InvalidBasis(format!(
                "the plaintext modulus t = {t} is not coprime to the modulus {}",
                q.value()
            )));
        }
    }
    Ok(())
}

/// The tables of one level: division of `[ℓ][N]` by `q_{ℓ-1}`.
#[derive(Clone, Debug)]
struct Level {
    q_last: Modulus,
    /// `t^{-1} mod q_last`.
    t_inv: u64,
    /// `q_0 … q_{ℓ-2}`.
    lower: Vec<Modulus>,
    /// `q_last^{-1} mod q_i`.
    q_inv: Vec<u64>,
    /// `t · q_last^{-1} mod q_i`.
    t_q_inv: Vec<u64>,
}

impl Level {
    fn new(basis: &Basis, t: u64, level: usize) -> Result<Self> {
        let q_last = *basis.modulus(level - 1);
        let lower = basis.moduli()[..level - 1].to_vec();
        let q_inv = lower
            .iter()
            .map(|q| q.inv(q.reduce(q_last.value())))
            .collect::<Result<Vec<_>>>()?;
        let t_q_inv = lower
            .iter()
            .zip(&q_inv)
            .map(|(q, &w)| q.mul(q.reduce(t), w))
            .collect();
        Ok(Self {
            t_inv: q_last.inv(q_last.reduce(t))?,
            q_last,
            lower,
            q_inv,
            t_q_inv,
        })
    }
}

/// BGV modulus switching by the last active prime, with every level's tables precomputed.
///
/// For a level-`ℓ` polynomial `x` (`[ℓ][N]`, coefficient form, `2 ≤ ℓ ≤ L`) with last prime
/// `q = q_{ℓ-1}`, [`BgvRescaler::apply`] writes the `[ℓ-1][N]` polynomial
///
/// `out_i = (x_i - t · r) · q^{-1} mod q_i`, `r = [x_{ℓ-1} · t^{-1}]_q` centred in `(-q/2, q/2]`,
///
/// i.e. exactly `(x - δ) / q` with `δ = t·r` (see the module docs). The result does not depend on
/// the representative of `x` modulo `Q_ℓ` (`Q_ℓ / q = Q_{ℓ-1}`).
///
/// ```
/// use num_bigint::{BigInt, BigUint};
/// use rhea_math::{basis::Basis, bgv_rescale::BgvRescaler};
/// // Toy moduli, not secure: Q = 97 · 193, t = 17.
/// let basis = Basis::new(&[97, 193])?;
/// let rs = BgvRescaler::new(&basis, 17)?;
/// let x = 5_000u64;
/// let mut out = vec![0u64; 1];
/// rs.apply(2, &basis.decompose(&BigUint::from(x)), &mut out, 1)?;
/// // δ ≡ x (mod 193), δ ≡ 0 (mod 17), |δ| ≤ 17·193/2: δ = 17·[5000·17^{-1}]_193 = 17·33.
/// let delta = 17 * 33;
/// assert_eq!((x - delta) % 193, 0);
/// assert_eq!(out[0], (x - delta) / 193);
/// # Ok::<(), rhea_math::MathError>(())
/// ```
#[derive(Clone, Debug)]
pub struct BgvRescaler {
    basis: Basis,
    t: u64,
    /// `levels[ℓ - 2]` for `ℓ = 2..=L`.
    levels: Vec<Level>,
}

impl BgvRescaler {
    /// Precomputes the tables of every level `2..=basis.len()` for the plaintext modulus `t`.
    ///
    /// Errors: [`MathError::InvalidArgument`] for `t < 2`, [`MathError::InvalidBasis`] if `t`
    /// shares a factor with a modulus of `basis`.
    pub fn new(basis: &Basis, t: u64) -> Result<Self> {
        check_t(t, basis)?;
        let levels = (2..=basis.len())
            .map(|l| Level::new(basis, t, l))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            basis: basis.clone(),
            t,
            levels,
        })
    }

    /// The basis.
    pub fn basis(&self) -> &Basis {
        &self.basis
    }

    /// The plaintext modulus `t`.
    pub fn t(&self) -> u64 {
        self.t
    }

    fn level(&self, level: usize) -> Result<&Level> {
        level
            .checked_sub(2)
            .and_then(|i| self.levels.get(i))
            .ok_or_else(|| {
                MathError::InvalidArgument(format!(
                    "BGV modulus switching needs a level in 2..={}, got {level}",
                    self.basis.len()
                ))
            })
    }

    /// `t^{-1} mod q_{ℓ-1}` at `level` (`ℓ`).
    pub fn t_inv_mod_q_last(&self, level: usize) -> Result<u64> {
        Ok(self.level(level)?.t_inv)
    }

    /// `q_{ℓ-1}^{-1} mod q_i`, `i < ℓ - 1`.
    pub fn q_last_inv_mod_q(&self, level: usize) -> Result<&[u64]> {
        Ok(&self.level(level)?.q_inv)
    }

    /// `t · q_{ℓ-1}^{-1} mod q_i`, `i < ℓ - 1`.
    pub fn t_q_last_inv_mod_q(&self, level: usize) -> Result<&[u64]> {
        Ok(&self.level(level)?.t_q_inv)
    }

    /// Switches `input` (`[level][n]`) into `output` (`[level-1][n]`); see the type docs.
    ///
    /// Errors: [`MathError::InvalidArgument`] for a level outside `2..=L` or `n = 0`,
    /// [`MathError::ShapeMismatch`] for buffers of the wrong length.
    pub fn apply(&self, level: usize, input: &[u64], output: &mut [u64], n: usize) -> Result<()> {
        let lv = self.level(level)?;
        check_poly("BGV rescale input", input.len(), level, n)?;
        check_poly("BGV rescale output", output.len(), level - 1, n)?;
        let (x_low, x_last) = input.split_at((level - 1) * n);
        let ql = &lv.q_last;
        // r = [x_last · t^{-1}]_q, centred.
        let r: Vec<i64> = x_last
            .iter()
            .map(|&x| ql.center(ql.mul(ql.reduce(x), lv.t_inv)))
            .collect();
        output
            .par_chunks_mut(n)
            .zip(x_low.par_chunks(n))
            .enumerate()
            .for_each(|(i, (out, x))| {
                let q = &lv.lower[i];
                let (w, tw) = (lv.q_inv[i], lv.t_q_inv[i]);
                for ((o, &xi), &rk) in out.iter_mut().zip(x).zip(&r) {
                    *o = q.sub(q.mul(q.reduce(xi), w), q.mul(q.reduce_i64(rk), tw));
                }
            });
        Ok(())
    }
}

/// BGV ModDown: division of a polynomial over `Q_ℓ ∪ P` by `P`, keeping the plaintext modulo `t`.
///
/// For a level-`ℓ` input `x` (`[ℓ + |P|][N]`, Q limbs then P limbs, coefficient form) the output
/// (`[ℓ][N]`) is, for every `i < ℓ`,
///
/// `out_i = (x_i - t · y_i) · P^{-1} mod q_i`, `y = [x_P · t^{-1}]_P` centred in `(-P/2, P/2]`
/// and converted exactly to `q_i` ([`BaseConverter::convert_exact`]),
///
/// i.e. exactly `(x - δ) / P` with `δ = t·y ≡ x (mod P)`, `δ ≡ 0 (mod t)`, `|δ| ≤ t·P/2`.
#[derive(Clone, Debug)]
pub struct BgvModDown {
    q: Basis,
    p: Basis,
    t: u64,
    /// `conv[ℓ - 1]`: the exact conversion `P → {q_0, …, q_{ℓ-1}}`.
    conv: Vec<BaseConverter>,
    /// `t^{-1} mod p_j`.
    t_inv_mod_p: Vec<u64>,
    /// `P^{-1} mod q_i`.
    p_inv_mod_q: Vec<u64>,
    /// `t · P^{-1} mod q_i`.
    t_p_inv_mod_q: Vec<u64>,
}

impl BgvModDown {
    /// Precomputes the tables for `Q`, `P` and the plaintext modulus `t`.
    ///
    /// Errors: [`MathError::InvalidBasis`] if `Q` and `P` are not coprime or `t` shares a factor
    /// with one of their moduli, [`MathError::InvalidArgument`] for `t < 2`.
    pub fn new(q: &Basis, p: &Basis, t: u64) -> Result<Self> {
        check_t(t, q)?;
        check_t(t, p)?;
        let conv = (1..=q.len())
            .map(|l| BaseConverter::new(p, &q.prefix(l)?))
            .collect::<Result<Vec<_>>>()?;
        let t_inv_mod_p = p
            .moduli()
            .iter()
            .map(|m| m.inv(m.reduce(t)))
            .collect::<Result<Vec<_>>>()?;
        let p_inv_mod_q = q
            .moduli()
            .iter()
            .map(|m| {
                let pm = p
                    .values()
                    .iter()
                    .fold(1u64, |a, &pj| m.mul(a, m.reduce(pj)));
                m.inv(pm)
            })
            .collect::<Result<Vec<_>>>()?;
        let t_p_inv_mod_q = q
            .moduli()
            .iter()
            .zip(&p_inv_mod_q)
            .map(|(m, &w)| m.mul(m.reduce(t), w))
            .collect();
        Ok(Self {
            q: q.clone(),
            p: p.clone(),
            t,
            conv,
            t_inv_mod_p,
            p_inv_mod_q,
            t_p_inv_mod_q,
        })
    }

    /// The plaintext modulus `t`.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// `t^{-1} mod p_j`.
    pub fn t_inv_mod_p(&self) -> &[u64] {
        &self.t_inv_mod_p
    }

    /// `P^{-1} mod q_i`.
    pub fn p_inv_mod_q(&self) -> &[u64] {
        &self.p_inv_mod_q
    }

    /// `t · P^{-1} mod q_i`.
    pub fn t_p_inv_mod_q(&self) -> &[u64] {
        &self.t_p_inv_mod_q
    }

    /// Divides a level-`level` polynomial over `Q_ℓ ∪ P` by `P` (see the type docs).
    ///
    /// Errors: [`MathError::InvalidArgument`] for a level outside `1..=L` or `n = 0`,
    /// [`MathError::ShapeMismatch`] unless `input` is `[level + |P|][n]` and `output` `[level][n]`.
    pub fn apply(&self, level: usize, input: &[u64], output: &mut [u64], n: usize) -> Result<()> {
        if level == 0 || level > self.q.len() {
            return Err(MathError::InvalidArgument(format!(
                "level {level} outside 1..={}",
                self.q.len()
            )));
        }
        check_poly(
            "BGV ModDown input (level + P limbs)",
            input.len(),
            level + self.p.len(),
            n,
        )?;
        check_poly("BGV ModDown output (level limbs)", output.len(), level, n)?;
        let (x_q, x_p) = input.split_at(level * n);
        let mut y_p = vec![0u64; x_p.len()];
        y_p.par_chunks_mut(n)
            .zip(x_p.par_chunks(n))
            .enumerate()
            .for_each(|(j, (y, x))| {
                let p = self.p.modulus(j);
                let w = self.t_inv_mod_p[j];
                for (y, &x) in y.iter_mut().zip(x) {
                    *y = p.mul(p.reduce(x), w);
                }
            });
        self.conv[level - 1].convert_exact(&y_p, output, n)?;
        output
            .par_chunks_mut(n)
            .zip(x_q.par_chunks(n))
            .enumerate()
            .for_each(|(i, (out, x))| {
                let q = self.q.modulus(i);
                let (w, tw) = (self.p_inv_mod_q[i], self.t_p_inv_mod_q[i]);
                for (o, &xi) in out.iter_mut().zip(x) {
                    *o = q.sub(q.mul(q.reduce(xi), w), q.mul(*o, tw));
                }
            });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use num_bigint::BigInt;
    use num_traits::{Signed, Zero};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    use super::*;
    use crate::prime::generate_ntt_primes;

    fn centred(x: &BigInt, m: &BigInt) -> BigInt {
        let mut r = ((x % m) + m) % m;
        if BigInt::from(2) * &r > *m {
            r -= m;
        }
        r
    }

    /// A random polynomial over `basis`: its coefficients in `[0, Q)` as big integers and its
    /// `[limb][N]` residues; coefficients 0..4 are the edges `0`, `Q - 1`, `⌊Q/2⌋`, `⌊Q/2⌋ + 1`.
    fn random_poly(rng: &mut ChaCha20Rng, basis: &Basis, n: usize) -> (Vec<BigInt>, Vec<u64>) {
        let mut words = vec![0u64; basis.len() * n];
        for (i, q) in basis.moduli().iter().enumerate() {
            for w in &mut words[i * n..(i + 1) * n] {
                *w = rng.random_range(0..q.value());
            }
        }
        let mut xs: Vec<BigInt> = basis
            .poly_reconstruct(&words, n)
            .unwrap()
            .into_iter()
            .map(BigInt::from)
            .collect();
        let q = BigInt::from(basis.product().clone());
        xs[0] = BigInt::zero();
        xs[1] = &q - 1;
        xs[2] = &q / 2;
        xs[3] = &q / 2 + 1;
        let words = basis.poly_from_bigints(&xs);
        (xs, words)
    }

    #[test]
    fn rescale_matches_big_integers() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        for (n, bits, t) in [
            (16usize, vec![50u32, 40, 40], 65537u64),
            (64, vec![60, 59, 58, 61], 257),
            (32, vec![30, 31], (1 << 40) + 15),
            (8, vec![61, 61, 61, 61, 61], 3),
        ] {
            let mut primes: Vec<u64> = Vec::new();
            for b in &bits {
                let mut ex = primes.clone();
                ex.push(t);
                primes.extend(generate_ntt_primes(*b, n, 1, &ex).unwrap());
            }
            let basis = Basis::new(&primes).unwrap();
            let rs = BgvRescaler::new(&basis, t).unwrap();
            let tb = BigInt::from(t);
            for level in 2..=primes.len() {
                let lb = basis.prefix(level).unwrap();
                let (xs, words) = random_poly(&mut rng, &lb, n);
                let mut out = vec![0u64; (level - 1) * n];
                rs.apply(level, &words, &mut out, n).unwrap();
                let q = BigInt::from(primes[level - 1]);
                let t_inv = BigInt::from(
                    Modulus::new(primes[level - 1])
                        .unwrap()
                        .inv(t % primes[level - 1])
                        .unwrap(),
                );
                let expect: Vec<BigInt> = xs
                    .iter()
                    .map(|x| {
                        let delta = &tb * centred(&(x * &t_inv), &q);
                        assert!((x - &delta) % &q == BigInt::zero());
                        assert!(&delta % &tb == BigInt::zero());
                        assert!(BigInt::from(2) * delta.abs() <= &tb * &q);
                        (x - delta) / &q
                    })
                    .collect();
                let lower = basis.prefix(level - 1).unwrap();
                assert_eq!(
                    out,
                    lower.poly_from_bigints(&expect),
                    "level {level}, t {t}"
                );
            }
        }
    }

    #[test]
    fn mod_down_matches_big_integers() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        for (n, qb, pb, t) in [
            (16usize, vec![50u32, 40, 40], vec![55u32], 65537u64),
            (32, vec![60, 60, 60, 60], vec![61, 61], 786433),
            (8, vec![40, 40], vec![30, 30, 30], 2),
        ] {
            let mut primes: Vec<u64> = Vec::new();
            for b in qb.iter().chain(&pb) {
                let mut ex = primes.clone();
                ex.push(t);
                primes.extend(generate_ntt_primes(*b, n, 1, &ex).unwrap());
            }
            let (qv, pv) = primes.split_at(qb.len());
            let (q, p) = (Basis::new(qv).unwrap(), Basis::new(pv).unwrap());
            let md = BgvModDown::new(&q, &p, t).unwrap();
            let tb = BigInt::from(t);
            let pbig = BigInt::from(p.product().clone());
            let t_inv_p = tb.modinv(&pbig).unwrap();
            for level in 1..=qv.len() {
                let ql = q.prefix(level).unwrap();
                let full = ql.concat(&p).unwrap();
                let (xs, words) = random_poly(&mut rng, &full, n);
                let mut out = vec![0u64; level * n];
                md.apply(level, &words, &mut out, n).unwrap();
                let expect: Vec<BigInt> = xs
                    .iter()
                    .map(|x| {
                        let delta = &tb * centred(&(x * &t_inv_p), &pbig);
                        assert!((x - &delta) % &pbig == BigInt::zero());
                        assert!(BigInt::from(2) * delta.abs() <= &tb * &pbig);
                        (x - delta) / &pbig
                    })
                    .collect();
                assert_eq!(out, ql.poly_from_bigints(&expect), "level {level}, t {t}");
            }
        }
    }

    #[test]
    fn bad_inputs_are_typed_errors() {
        let basis = Basis::new(&[97, 193]).unwrap();
        assert!(matches!(
            BgvRescaler::new(&basis, 1),
            Err(MathError::InvalidArgument(_))
        ));
        assert!(matches!(
            BgvRescaler::new(&basis, 97 * 2),
            Err(MathError::InvalidBasis(_))
        ));
        let rs = BgvRescaler::new(&basis, 17).unwrap();
        let mut out = vec![0u64; 4];
        assert!(rs.apply(1, &[0; 4], &mut out, 4).is_err());
        assert!(rs.apply(2, &[0; 7], &mut out, 4).is_err());
        assert!(rs.apply(3, &[0; 12], &mut out, 4).is_err());
        let p = Basis::new(&[257]).unwrap();
        assert!(BgvModDown::new(&basis, &p, 257).is_err());
        let md = BgvModDown::new(&basis, &p, 17).unwrap();
        assert!(md.apply(0, &[0; 4], &mut out, 4).is_err());
        assert!(md.apply(1, &[0; 4], &mut out[..3], 2).is_err());
        assert!(md.apply(1, &[0; 4], &mut out[..2], 2).is_ok());
    }
}
