//! Least-squares polynomial fits in the clear (the activations' polynomials of the
//! applications), and polynomial evaluation.

/// The least-squares odd polynomial `Σ_{odd k ≤ degree} a_k t^k` of `f` on `[−bound, bound]`
/// (for an odd `f`, or the odd part of one: the even coefficients of the fit vanish and are left
/// out), fitted on a uniform grid of 4001 points — the continuous fit up to grid effects. The
/// normal equations are solved in `u = t/bound ∈ [−1, 1]` (better conditioned), then
/// `a_k = b_k / bound^k`.
///
/// Returns the monomial coefficients, constant first (`degree + 1` of them, the even ones 0).
///
/// ```
/// let p = rhea_apps::fit::odd_least_squares(f64::tanh, 7, 4.0);
/// assert_eq!(p.len(), 8);
/// assert!((rhea_apps::fit::eval_poly(&p, 1.0) - 1f64.tanh()).abs() < 0.07);
/// ```
pub fn odd_least_squares(f: impl Fn(f64) -> f64, degree: usize, bound: f64) -> Vec<f64> {
    let odd: Vec<usize> = (1..=degree).step_by(2).collect();
    let m = odd.len();
    let grid = 4001;
    let mut gram = vec![vec![0.0; m]; m];
    let mut rhs = vec![0.0; m];
    for i in 0..grid {
        let u = -1.0 + 2.0 * i as f64 / (grid - 1) as f64;
        let target = f(u * bound);
        for (r, &kr) in odd.iter().enumerate() {
            let ur = u.powi(kr as i32);
            rhs[r] += ur * target;
            for (c, &kc) in odd.iter().enumerate() {
                gram[r][c] += ur * u.powi(kc as i32);
            }
        }
    }
    let b = solve(gram, rhs);
    let mut coeffs = vec![0.0; degree + 1];
    for (j, &k) in odd.iter().enumerate() {
        coeffs[k] = b[j] / bound.powi(k as i32);
    }
    coeffs
}

/// `Σ c_k t^k` (Horner).
pub fn eval_poly(coeffs: &[f64], t: f64) -> f64 {
    coeffs.iter().rev().fold(0.0, |acc, &c| acc * t + c)
}

/// Gaussian elimination with partial pivoting (a small, well-conditioned system).
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n)
            .max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))
            .unwrap_or(col);
        a.swap(col, pivot);
        b.swap(col, pivot);
        let pivot_row = a[col].clone();
        for row in col + 1..n {
            let f = a[row][col] / pivot_row[col];
            for (x, p) in a[row].iter_mut().zip(&pivot_row).skip(col) {
                *x -= f * p;
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    x
}
