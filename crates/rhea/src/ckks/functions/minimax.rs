//! Odd minimax approximations of the sign function by the Remez exchange algorithm, for the
//! minimax composites of Lee, Lee, Kim and No ("Minimax approximation of sign function by
//! composite polynomial for homomorphic comparison", IEEE TDSC 2021).
//!
//! The odd polynomial `p` of degree `d` minimising `max |p(x) − 1|` over `[a, 1]` (`0 < a < 1`)
//! is, by symmetry, the minimax approximation of `sign` on `[−1, −a] ∪ [a, 1]`. It is computed
//! in the odd Chebyshev basis `T_1, T_3, …, T_d` of `[−1, 1]` (well conditioned at every
//! degree), with reference points exchanged until the error equioscillates.

use crate::error::{Error, Result};

/// An odd minimax approximation of 1 on `[a, 1]`.
pub(super) struct OddMinimax {
    /// Chebyshev coefficients on `[−1, 1]`, all `d + 1` of them (even ones zero).
    pub coeffs: Vec<f64>,
    /// `max |p(x) − 1|` over `[a, 1]` (dense grid, extrema refined).
    pub error: f64,
}

/// `Σ c_k T_k(x)` by Clenshaw's recurrence.
pub(super) fn clenshaw(c: &[f64], x: f64) -> f64 {
    let (mut b1, mut b2) = (0.0, 0.0);
    for &ck in c.iter().skip(1).rev() {
        let b0 = 2.0 * x * b1 - b2 + ck;
        b2 = b1;
        b1 = b0;
    }
    x * b1 - b2 + c[0]
}

/// `T_k(x)` for `k = 0..=n`.
fn chebyshev_t(n: usize, x: f64) -> Vec<f64> {
    let mut t = vec![1.0, x];
    for k in 2..=n {
        t.push(2.0 * x * t[k - 1] - t[k - 2]);
    }
    t.truncate(n + 1);
    t
}

/// The grid the error is searched on: uniform and geometric points of `[a, 1]` (the error of a
/// sign approximation oscillates fastest near `a`).
fn grid(a: f64) -> Vec<f64> {
    const N: usize = 6000;
    let mut g: Vec<f64> = (0..=N)
        .map(|i| a + (1.0 - a) * i as f64 / N as f64)
        .chain((0..=N).map(|i| a * (1.0 / a).powf(i as f64 / N as f64)))
        .map(|x: f64| x.clamp(a, 1.0))
        .collect();
    g.sort_by(f64::total_cmp);
    g.dedup();
    g
}

/// The point of `[lo, hi]` where `|e|` is largest, by golden-section search (`|e|` is
/// unimodal between the grid neighbours of a grid maximum).
fn refine(e: &impl Fn(f64) -> f64, lo: f64, hi: f64) -> f64 {
    let r = 0.5 * (5f64.sqrt() - 1.0);
    let (mut a, mut b) = (lo, hi);
    for _ in 0..60 {
        let c = b - r * (b - a);
        let d = a + r * (b - a);
        if e(c).abs() >= e(d).abs() {
            b = d;
        } else {
            a = c;
        }
    }
    0.5 * (a + b)
}

/// Alternating extrema of `e` on the grid: per maximal run of one sign, the point of largest
/// `|e|` (refined between its grid neighbours).
fn alternating_extrema(e: &impl Fn(f64) -> f64, g: &[f64]) -> Vec<f64> {
    let vals: Vec<f64> = g.iter().map(|&x| e(x)).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < g.len() {
        let s = vals[i] >= 0.0;
        let mut best = i;
        let mut j = i;
        while j < g.len() && (vals[j] >= 0.0) == s {
            if vals[j].abs() > vals[best].abs() {
                best = j;
            }
            j += 1;
        }
        let lo = g[best.saturating_sub(1)];
        let hi = g[(best + 1).min(g.len() - 1)];
        let x = refine(e, lo, hi);
        out.push(if e(x).abs() > vals[best].abs() {
            x
        } else {
            g[best]
        });
        i = j;
    }
    out
}

/// Solves `m·x = rhs` by Gaussian elimination with partial pivoting.
fn solve(mut m: Vec<Vec<f64>>, mut rhs: Vec<f64>) -> Option<Vec<f64>> {
    let n = rhs.len();
    for col in 0..n {
        let piv = (col..n).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))?;
        if m[piv][col].abs() < 1e-300 {
            return None;
        }
        m.swap(col, piv);
        rhs.swap(col, piv);
        let (top, rest) = m.split_at_mut(col + 1);
        let pivot_row = &top[col];
        for (r, row) in rest.iter_mut().enumerate() {
            let f = row[col] / pivot_row[col];
            for (x, p) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                *x -= f * p;
            }
            rhs[col + 1 + r] -= f * rhs[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| m[row][k] * x[k]).sum();
        x[row] = (rhs[row] - s) / m[row][row];
    }
    Some(x)
}

/// The odd minimax polynomial of degree `degree` (odd, ≥ 1) for 1 on `[a, 1]`.
pub(super) fn odd_sign_minimax(a: f64, degree: usize) -> Result<OddMinimax> {
    if degree % 2 == 0 || !(a > 0.0 && a < 1.0) {
        return Err(Error::InvalidInput(format!(
            "minimax sign: needs an odd degree and 0 < a < 1 (degree {degree}, a = {a})"
        )));
    }
    let m = degree.div_ceil(2); // basis T_1, T_3, …, T_degree
    let g = grid(a);
    let to_coeffs = |c: &[f64]| {
        let mut full = vec![0.0; degree + 1];
        for (j, &v) in c.iter().enumerate() {
            full[2 * j + 1] = v;
        }
        full
    };
    // Initial reference: p(x) = x·q(x²) with q of degree m − 1 in u = x² on [a², 1]: the
    // Chebyshev extrema of [a², 1] in u, mapped back by x = √u.
    let a2 = a * a;
    let mut reference: Vec<f64> = (0..=m)
        .map(|i| {
            let t = (1.0 - (std::f64::consts::PI * i as f64 / m as f64).cos()) / 2.0;
            (a2 + (1.0 - a2) * t).sqrt().clamp(a, 1.0)
        })
        .collect();
    let mut best: Option<OddMinimax> = None;
    for _ in 0..80 {
        let rows: Vec<Vec<f64>> = reference
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let t = chebyshev_t(degree, x);
                let mut row: Vec<f64> = (0..m).map(|j| t[2 * j + 1]).collect();
                row.push(if i % 2 == 0 { 1.0 } else { -1.0 });
                row
            })
            .collect();
        let Some(sol) = solve(rows, vec![1.0; m + 1]) else {
            break;
        };
        let coeffs = to_coeffs(&sol[..m]);
        let e = |x: f64| clenshaw(&coeffs, x) - 1.0;
        let ext = alternating_extrema(&e, &g);
        let error = ext.iter().map(|&x| e(x).abs()).fold(0.0, f64::max);
        let level = sol[m].abs();
        // Converged, or at the f64 floor (where the extrema are rounding noise).
        let done = (error - level) <= 1e-9 * error || error < 1e-13;
        if best.as_ref().map_or(true, |b| error < b.error) {
            best = Some(OddMinimax {
                coeffs: coeffs.clone(),
                error,
            });
        }
        if done || ext.len() < m + 1 {
            break;
        }
        // Keep m + 1 alternating points: drop from the ends the smaller one.
        let mut ext = ext;
        while ext.len() > m + 1 {
            if e(ext[0]).abs() < e(ext[ext.len() - 1]).abs() {
                ext.remove(0);
            } else {
                ext.pop();
            }
        }
        reference = ext;
    }
    match best {
        Some(b) if b.error < 1.0 => Ok(b),
        _ => Err(Error::InvalidInput(format!(
            "minimax sign: the Remez iteration did not converge (degree {degree}, a = {a})"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equioscillates_and_beats_perturbations() {
        for &(a, d) in &[(0.25, 7usize), (1.0 / 64.0, 15), (0.5, 3), (1e-3, 31)] {
            let mm = odd_sign_minimax(a, d).unwrap();
            assert!(mm.error > 0.0 && mm.error < 1.0, "{a} {d}: {}", mm.error);
            // The error equioscillates: at least (d + 1)/2 + 1 alternating extrema of size
            // close to the maximum.
            let e = |x: f64| clenshaw(&mm.coeffs, x) - 1.0;
            let ext = alternating_extrema(&e, &grid(a));
            let big = ext
                .iter()
                .filter(|&&x| e(x).abs() > 0.999 * mm.error)
                .count();
            assert!(big > d.div_ceil(2), "{a} {d}: {big} of {}", ext.len());
            // Odd: p(−x) = −p(x).
            assert!((clenshaw(&mm.coeffs, -0.7) + clenshaw(&mm.coeffs, 0.7)).abs() < 1e-12);
            eprintln!(
                "minimax sign a = {a}, degree {d}: error 2^{:.2}",
                mm.error.log2()
            );
        }
    }
}
