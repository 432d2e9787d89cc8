//! The evaluation plan of a polynomial: the baby-step/giant-step tree, the powers it reads and
//! what it costs. Pure arithmetic on the coefficients (no ciphertexts), so that the homomorphic
//! evaluation ([`super::eval`]) only walks the tree, and [`super::Polynomial::depth`] and the
//! costs can be computed without keys.
//!
//! **Levels.** With `L` the level of `T_1` (the input, or the input mapped onto `[−1, 1]`), the
//! power `T_i` (or `x^i`) is computed at level `λ(i) = L − ⌈log2 i⌉`: `T_i` for
//! `2^(k−1) < i ≤ 2^k` is the product of `T_(2^(k−1))` (level `L − k + 1`) and `T_(i − 2^(k−1))`
//! (as high or higher), rescaled once. A node evaluated with *budget* `b` lands at level
//! `L − b`. It is first produced *before its last rescaling* (level `L − b + 1`, scale
//! `S·q_(L−b+1)` for the target scale `S`), so a leaf `Σ c_i T_i` may read every `T_i` with
//! `⌈log2 i⌉ ≤ b − 1`, and a split `q·T_(2^j) + r` needs `j ≤ b − 1`, `q` at budget `b − 1`
//! (its product with `T_(2^j)` is rescaled together with `r`) and `r` at budget `b`.
//!
//! **Splits.** A node of degree `d` is split at the largest power of two `2^j ≤ d` when it is
//! above the baby-step bound `2^l` or when, as a leaf, it would need more levels than its
//! budget (the leading chain of a degree `2^k − 1` polynomial, which has no slack). With the
//! top budget `⌈log2(d + 1)⌉` every node then fits: `q` and `r` have degree below `2^j` and
//! budgets at least `j`, and a leaf of degree 1 or 2 always fits its optimal budget. The
//! baby-step bound `l` is chosen by counting the ciphertext products of every `l`.

use std::collections::BTreeSet;

/// A node of the evaluation tree.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Node {
    /// A constant (no ciphertext): added to the parent's sum.
    Const(f64),
    /// `Σ c_i B_i` (`B_i` = `T_i` or `x^i`), degree ≥ 1: the constants times the powers, summed.
    Leaf(Vec<f64>),
    /// `q·B_giant + r`.
    Split {
        giant: usize,
        q: Box<Node>,
        r: Box<Node>,
    },
}

/// The plan of one polynomial: its tree, the baby-step bound and its costs.
#[derive(Clone, Debug)]
pub(super) struct Plan {
    /// The tree, to be evaluated with budget `budget`.
    pub root: Node,
    /// `⌈log2(d + 1)⌉`: the levels below `T_1`'s the result lands at.
    pub budget: usize,
    /// The powers the tree reads directly (leaf terms and giant steps).
    pub direct: BTreeSet<usize>,
}

/// `⌈log2(d + 1)⌉`: the bit length of `d`.
pub(super) fn bit_len(d: usize) -> usize {
    (usize::BITS - d.leading_zeros()) as usize
}

/// `⌈log2 i⌉` for `i ≥ 1`.
pub(super) fn ceil_log2(i: usize) -> usize {
    bit_len(i - 1)
}

/// The two factors of power `i ≥ 2`: `m = 2^(⌈log2 i⌉ − 1)` and `n = i − m` (`1 ≤ n ≤ m`);
/// `T_i = 2·T_m·T_n − T_(m−n)` and `x^i = x^m·x^n`.
pub(super) fn factors(i: usize) -> (usize, usize) {
    let m = 1 << (ceil_log2(i) - 1);
    (m, i - m)
}

/// The powers that must be computed to have every power of `direct`: the closure under
/// [`factors`] (and `m − n` in the Chebyshev basis), `1` included, ascending (each power's
/// factors come before it).
pub(super) fn closure(direct: &BTreeSet<usize>, chebyshev: bool) -> BTreeSet<usize> {
    let mut all = BTreeSet::new();
    let mut todo: Vec<usize> = direct.iter().copied().collect();
    todo.push(1);
    while let Some(i) = todo.pop() {
        if i == 0 || !all.insert(i) || i == 1 {
            continue;
        }
        let (m, n) = factors(i);
        todo.push(m);
        todo.push(n);
        if chebyshev && m > n {
            todo.push(m - n);
        }
    }
    all
}

fn trim(mut c: Vec<f64>) -> Vec<f64> {
    while c.len() > 1 && c.last() == Some(&0.0) {
        c.pop();
    }
    c
}

/// `p = q·B_g + r` with `g` a power of two, `g ≤ deg p < 2g`.
fn divide(c: &[f64], g: usize, chebyshev: bool) -> (Vec<f64>, Vec<f64>) {
    let d = c.len() - 1;
    let mut r = c[..g].to_vec();
    let mut q = c[g..].to_vec();
    if chebyshev {
        // T_(g+i) = 2·T_g·T_i − T_(g−i) for 1 ≤ i < g.
        for i in 1..=d - g {
            q[i] = 2.0 * c[g + i];
            r[g - i] -= c[g + i];
        }
    }
    (trim(q), trim(r))
}

/// The tree of `c` (trimmed, `c.len() ≥ 1`) at `budget` with baby-step bound `baby`.
fn build(c: Vec<f64>, budget: usize, baby: usize, chebyshev: bool) -> Node {
    let d = c.len() - 1;
    if d == 0 {
        return Node::Const(c[0]);
    }
    if d <= baby && ceil_log2(d) < budget {
        return Node::Leaf(c);
    }
    let g = 1 << (bit_len(d) - 1);
    debug_assert!(
        ceil_log2(g) < budget,
        "giant step {g} above budget {budget}"
    );
    let (q, r) = divide(&c, g, chebyshev);
    Node::Split {
        giant: g,
        q: Box::new(build(q, budget - 1, baby, chebyshev)),
        r: Box::new(build(r, budget, baby, chebyshev)),
    }
}

impl Node {
    /// Adds the powers this node reads directly to `set`.
    fn direct_powers(&self, set: &mut BTreeSet<usize>) {
        match self {
            Node::Const(_) => {}
            Node::Leaf(c) => set.extend((1..c.len()).filter(|&i| c[i] != 0.0)),
            Node::Split { giant, q, r } => {
                set.insert(*giant);
                q.direct_powers(set);
                r.direct_powers(set);
            }
        }
    }

    /// The ciphertext products (and relinearisations) of the giant steps: one per split whose
    /// quotient is not a constant.
    pub(super) fn giant_products(&self) -> usize {
        match self {
            Node::Const(_) | Node::Leaf(_) => 0,
            Node::Split { q, r, .. } => {
                usize::from(!matches!(**q, Node::Const(_)))
                    + q.giant_products()
                    + r.giant_products()
            }
        }
    }

    /// Whether the node's value before its last rescaling has 3 components (a giant-step
    /// product not yet relinearised, its own or one of its remainder chain's).
    fn three_parts(&self) -> bool {
        match self {
            Node::Const(_) | Node::Leaf(_) => false,
            Node::Split { q, r, .. } => !matches!(**q, Node::Const(_)) || r.three_parts(),
        }
    }

    /// The relinearisations of the giant steps when this node is brought to its level (one
    /// relinearisation for its whole sum, if it has 3 components) and of the quotients below it
    /// (each brought to its level before its product). Remainders are summed into their
    /// parent's value before it is relinearised: no relinearisation of their own.
    pub(super) fn giant_relinearizations(&self) -> usize {
        usize::from(self.three_parts()) + self.quotient_relinearizations()
    }

    fn quotient_relinearizations(&self) -> usize {
        match self {
            Node::Const(_) | Node::Leaf(_) => 0,
            Node::Split { q, r, .. } => {
                let own = match **q {
                    Node::Const(_) => 0,
                    ref q => q.giant_relinearizations(),
                };
                own + r.quotient_relinearizations()
            }
        }
    }

    /// The scalar multiply-adds (one per non-zero term of a leaf or constant quotient).
    fn scalar_terms(&self) -> usize {
        match self {
            Node::Const(_) => 0,
            Node::Leaf(c) => c[1..].iter().filter(|&&x| x != 0.0).count(),
            Node::Split { q, r, .. } => {
                usize::from(matches!(**q, Node::Const(_))) + q.scalar_terms() + r.scalar_terms()
            }
        }
    }
}

impl Plan {
    /// The plan of `Σ coeffs[i]·B_i` with the baby-step bound that needs the fewest
    /// relinearisations (key switchings, the dominant cost), then the fewest ciphertext
    /// products, then the fewest scalar terms, then the smallest bound.
    pub(super) fn new(coeffs: &[f64], chebyshev: bool) -> Self {
        let c = trim(coeffs.to_vec());
        let budget = bit_len(c.len() - 1);
        let mut best: Option<((usize, usize, usize), Plan)> = None;
        for l in 1..=budget.max(1) {
            let plan = Self::with_baby_log(&c, budget, l, chebyshev);
            let cost = (
                plan.relinearizations(chebyshev),
                plan.products(chebyshev),
                plan.root.scalar_terms(),
            );
            let better = match &best {
                None => true,
                Some((b, _)) => cost < *b,
            };
            if better {
                best = Some((cost, plan));
            }
        }
        best.map(|(_, p)| p).expect("at least one baby-step bound")
    }

    fn with_baby_log(c: &[f64], budget: usize, l: usize, chebyshev: bool) -> Self {
        let root = build(c.to_vec(), budget, 1 << l, chebyshev);
        let mut direct = BTreeSet::new();
        root.direct_powers(&mut direct);
        Plan {
            root,
            budget,
            direct,
        }
    }

    /// The powers to compute (beyond `B_1`): one ciphertext product each.
    pub(super) fn power_products(&self, chebyshev: bool) -> usize {
        closure(&self.direct, chebyshev).len() - 1
    }

    /// All ciphertext products (tensors) of this polynomial evaluated alone.
    pub(super) fn products(&self, chebyshev: bool) -> usize {
        self.power_products(chebyshev) + self.root.giant_products()
    }

    /// All relinearisations of this polynomial evaluated alone: one per power, and the giant
    /// steps' (fewer than their products: sums of products are relinearised once).
    pub(super) fn relinearizations(&self, chebyshev: bool) -> usize {
        self.power_products(chebyshev) + self.root.giant_relinearizations()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval_node(n: &Node, y: f64, cheb: bool) -> f64 {
        let basis = |i: usize| {
            if cheb {
                (i as f64 * y.acos()).cos()
            } else {
                y.powi(i as i32)
            }
        };
        match n {
            Node::Const(c) => *c,
            Node::Leaf(c) => c.iter().enumerate().map(|(i, c)| c * basis(i)).sum(),
            Node::Split { giant, q, r } => {
                eval_node(q, y, cheb) * basis(*giant) + eval_node(r, y, cheb)
            }
        }
    }

    /// The levels below `T_1` a node lands at, checking every read power is available one
    /// level above.
    fn check_levels(n: &Node, budget: usize) {
        match n {
            Node::Const(_) => {}
            Node::Leaf(c) => assert!(ceil_log2(c.len() - 1) < budget),
            Node::Split { giant, q, r } => {
                assert!(ceil_log2(*giant) < budget);
                check_levels(q, budget - 1);
                check_levels(r, budget);
            }
        }
    }

    fn coeffs(d: usize, parity: Option<usize>) -> Vec<f64> {
        (0..=d)
            .map(|i| match parity {
                Some(p) if i % 2 != p => 0.0,
                _ => 1.0 / (1.0 + i as f64) * if i % 3 == 0 { -1.0 } else { 1.0 },
            })
            .collect()
    }

    #[test]
    fn trees_reproduce_the_polynomial_at_the_optimal_depth() {
        for cheb in [false, true] {
            for d in (1..=70).chain([127, 128, 200, 255]) {
                for parity in [None, Some(d % 2)] {
                    let c = coeffs(d, parity);
                    let plan = Plan::new(&c, cheb);
                    assert_eq!(plan.budget, bit_len(d));
                    check_levels(&plan.root, plan.budget);
                    for &y in &[-0.9, -0.3, 0.2, 0.77] {
                        let want: f64 = c
                            .iter()
                            .enumerate()
                            .map(|(i, c)| {
                                c * if cheb {
                                    (i as f64 * f64::acos(y)).cos()
                                } else {
                                    y.powi(i as i32)
                                }
                            })
                            .sum();
                        let got = eval_node(&plan.root, y, cheb);
                        assert!((got - want).abs() < 1e-9, "d {d} cheb {cheb}: {got} {want}");
                    }
                }
            }
        }
    }

    #[test]
    fn odd_polynomials_compute_only_odd_powers_and_powers_of_two() {
        // Degree 63 with baby steps up to T_16: the odd polynomial computes the odd powers
        // 3, 5, ..., 15 (7 products), the dense one every power below 16 that is not a power of
        // two (11 products).
        let baby = |set: &BTreeSet<usize>| set.iter().filter(|i| !i.is_power_of_two()).count();
        let odd = Plan::with_baby_log(&coeffs(63, Some(1)), 6, 4, true);
        let dense = Plan::with_baby_log(&coeffs(63, None), 6, 4, true);
        let (odd_all, dense_all) = (closure(&odd.direct, true), closure(&dense.direct, true));
        assert!(
            odd_all.iter().all(|&i| i % 2 == 1 || i.is_power_of_two()),
            "{odd_all:?}"
        );
        assert_eq!((baby(&odd_all), baby(&dense_all)), (7, 11));
        // With the best baby-step bound of each, the odd polynomial needs fewer products.
        let (odd, dense) = (
            Plan::new(&coeffs(63, Some(1)), true),
            Plan::new(&coeffs(63, None), true),
        );
        // (The counts the module docs quote.)
        eprintln!(
            "odd: {} products, {} relinearisations; dense: {} products, {} relinearisations",
            odd.products(true),
            odd.relinearizations(true),
            dense.products(true),
            dense.relinearizations(true)
        );
        assert_eq!((odd.products(true), odd.relinearizations(true)), (17, 14));
        assert_eq!(
            (dense.products(true), dense.relinearizations(true)),
            (18, 15)
        );
    }

    #[test]
    fn factors_and_closure() {
        assert_eq!(factors(2), (1, 1));
        assert_eq!(factors(7), (4, 3));
        assert_eq!(factors(8), (4, 4));
        assert_eq!(factors(9), (8, 1));
        let set: BTreeSet<usize> = [5].into_iter().collect();
        assert_eq!(
            closure(&set, true).into_iter().collect::<Vec<_>>(),
            [1, 2, 3, 4, 5]
        );
        assert_eq!(
            closure(&set, false).into_iter().collect::<Vec<_>>(),
            [1, 2, 4, 5]
        );
    }
}
