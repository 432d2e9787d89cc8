//! Homomorphic evaluation of [`Polynomial`]s on CKKS ciphertexts: the baby-step/giant-step
//! tree of [`super::plan`] walked top-down with exact scales (see the [module docs](super)).
//!
//! Every operation used is mode-independent (`mul_no_relin`, relinearise-and-rescale,
//! `rescale`, `mul_int`, constants at an explicit scale, and ring-level multiply-adds), so the
//! words are the same in auto-rescale and manual mode, on the CPU and the GPU.

use std::collections::{BTreeMap, BTreeSet};

use super::plan::{closure, factors, Node, Plan};
use super::{PolyBasis, Polynomial};
use crate::ckks::{Ciphertext, Evaluator};
use crate::error::{Error, Result};
use crate::rlwe::check_two_components;

const OP: &str = "evaluate_polynomial";

/// The powers of one input in one basis: `B_i` (`T_i` or `x^i`) at level
/// `base_level − ⌈log2 i⌉`, two components each.
struct Powers {
    basis: PolyBasis,
    chebyshev: bool,
    base_level: usize,
    /// What the plans of this basis read directly (filled before the powers are computed).
    wanted: BTreeSet<usize>,
    map: BTreeMap<usize, Ciphertext>,
}

impl Powers {
    fn get(&self, i: usize) -> Result<&Ciphertext> {
        self.map.get(&i).ok_or_else(|| {
            Error::InvalidInput(format!(
                "{OP}: internal error: power {i} of the basis was not computed"
            ))
        })
    }
}

/// A node's value before its last rescaling: a constant, or a ciphertext (2 or 3 components)
/// one level above the node's target level, at the target scale times that level's prime.
enum Pre {
    Const(f64),
    Ct(Ciphertext),
}

impl Evaluator {
    /// `p(x)` in every slot, landing at level `ct.level() − p.depth()` with scale exactly
    /// `target_scale`.
    ///
    /// Baby-step/giant-step evaluation (Bossuat et al., Eurocrypt 2021, Alg. 2): the powers
    /// `B_i` (`T_i` or `x^i`) of the baby and giant steps are computed once, the polynomial is
    /// split recursively as `q·B_(2^j) + r`, and every node's level and scale are chosen
    /// top-down so that each product-and-rescale lands exactly where its parent needs it
    /// (constants are encoded at the scale that makes the sum exact; no level is spent aligning
    /// scales). [`Polynomial::depth`] levels, [`Polynomial::ciphertext_products`] ciphertext
    /// products, [`Polynomial::relinearizations`] relinearisations; `ct` may be at any level
    /// `≥ depth` and any scale up to about the primes (typically `Δ`).
    /// The result is the same, word for word, in auto-rescale and manual mode (rescaling is
    /// controlled here, not by the mode), and on the CPU and the GPU.
    ///
    /// ```
    /// # use rhea::ckks::*; use rhea::params::CkksParametersLiteral; use rhea::Device;
    /// # let params = CkksParametersLiteral::test_n13_levels10_insecure().build()?;
    /// # let ctx = CkksContext::new(&params, Device::Cpu)?;
    /// # let mut keygen = KeyGenerator::from_seed(&ctx, [1; 32]);
    /// # let sk = keygen.secret_key()?;
    /// # let (encoder, encryptor, decryptor) =
    /// #     (Encoder::new(&ctx)?, Encryptor::with_secret_key(&ctx, &sk)?, Decryptor::new(&ctx, &sk)?);
    /// let eval = Evaluator::new(&ctx).with_relinearization_key(keygen.relinearization_key(&sk)?)?;
    /// // 1 − x/2 + x³/4, on the monomial basis: depth ⌈log2 4⌉ = 2.
    /// let p = Polynomial::monomial(vec![1.0, -0.5, 0.0, 0.25])?;
    /// let ct = encryptor.encrypt(&encoder.encode(&[0.5, -0.8])?)?;
    /// let out = eval.evaluate_polynomial(&ct, &p, 2f64.powi(40))?;
    /// assert_eq!((ct.level() - out.level(), out.scale()), (2, 2f64.powi(40)));
    /// let got = encoder.decode(&decryptor.decrypt(&out)?)?;
    /// assert!((got[0] - p.evaluate(0.5)).abs() < 1e-6 && (got[1] - p.evaluate(-0.8)).abs() < 1e-6);
    /// # Ok::<(), rhea::Error>(())
    /// ```
    ///
    /// Errors: [`Error::LevelUnderflow`] when `ct` has fewer than [`Polynomial::depth`] levels
    /// left; [`Error::MissingRelinearizationKey`] when the polynomial needs a ciphertext product
    /// (degree ≥ 2) and the evaluator has no relinearisation key; [`Error::InvalidScale`] for a
    /// target scale below 1 or not finite; [`Error::ScaleOverflow`] when the target scale does
    /// not fit at the output level; [`Error::CiphertextDegree`] for a 3-component input;
    /// [`Error::ParametersMismatch`] for a ciphertext of other parameters; [`Error::InvalidInput`]
    /// when a coefficient scaled to an integer does not fit in 126 bits.
    pub fn evaluate_polynomial(
        &self,
        ct: &Ciphertext,
        p: &Polynomial,
        target_scale: f64,
    ) -> Result<Ciphertext> {
        let mut out = self.evaluate_polynomials(ct, &[p], target_scale)?;
        out.pop()
            .ok_or_else(|| Error::InvalidInput(format!("{OP}: internal error: no result")))
    }

    /// Several polynomials of one input, sharing the powers they have in common (polynomials in
    /// the same basis and on the same interval share `T_1` and every `T_i`): each result is
    /// word for word that of [`Evaluator::evaluate_polynomial`] alone, for fewer products.
    ///
    /// Errors: those of [`Evaluator::evaluate_polynomial`] (the level check is against the
    /// deepest polynomial), and [`Error::InvalidInput`] for an empty list.
    pub fn evaluate_polynomials(
        &self,
        ct: &Ciphertext,
        ps: &[&Polynomial],
        target_scale: f64,
    ) -> Result<Vec<Ciphertext>> {
        if ps.is_empty() {
            return Err(Error::InvalidInput(
                "evaluate_polynomials: the list of polynomials is empty".into(),
            ));
        }
        self.check(OP, ct)?;
        check_two_components(OP, ct.parts.len())?;
        crate::ckks::encoder::check_scale(OP, target_scale)?;
        let needed = ps.iter().map(|p| p.depth()).max().unwrap_or(0);
        // With a bootstrapper (`Evaluator::with_bootstrapper`), too few levels: refreshed.
        let ct = &*self.refreshed_for_depth(OP, ct, needed)?;
        if ct.level() < needed {
            return Err(Error::LevelUnderflow {
                op: OP,
                level: ct.level(),
                needed,
            });
        }
        let plans: Vec<Option<Plan>> = ps
            .iter()
            .map(|p| (p.degree() > 0).then(|| Plan::new(p.coefficients(), is_chebyshev(p))))
            .collect();
        let products = plans
            .iter()
            .zip(ps)
            .filter_map(|(plan, p)| plan.as_ref().map(|pl| pl.products(is_chebyshev(p))))
            .sum::<usize>();
        if products > 0 {
            self.keys.rlk(OP)?;
        }
        for p in ps {
            self.output_fits(target_scale, ct.level() - p.depth())?;
        }
        self.on_pool(|| self.evaluate_planned(ct, ps, &plans, target_scale))
    }

    fn evaluate_planned(
        &self,
        ct: &Ciphertext,
        ps: &[&Polynomial],
        plans: &[Option<Plan>],
        target_scale: f64,
    ) -> Result<Vec<Ciphertext>> {
        let mut groups: Vec<Powers> = Vec::new();
        for (p, plan) in ps.iter().zip(plans) {
            let Some(plan) = plan else { continue };
            let g = match groups.iter().position(|g| g.basis == p.basis()) {
                Some(g) => g,
                None => {
                    groups.push(self.base_power(ct, p)?);
                    groups.len() - 1
                }
            };
            groups[g].wanted.extend(plan.direct.iter().copied());
        }
        for g in &mut groups {
            for i in closure(&g.wanted, g.chebyshev) {
                if !g.map.contains_key(&i) {
                    let power = self.compute_power(g, i)?;
                    g.map.insert(i, power);
                }
            }
        }
        let mut out = Vec::with_capacity(ps.len());
        for (p, plan) in ps.iter().zip(plans) {
            out.push(match plan {
                None => self.constant_ciphertext(ct, p.coefficients()[0], target_scale)?,
                Some(plan) => {
                    let g = groups
                        .iter()
                        .find(|g| g.basis == p.basis())
                        .ok_or_else(|| {
                            Error::InvalidInput(format!("{OP}: internal error: no basis"))
                        })?;
                    self.post(g, &plan.root, g.base_level - plan.budget, target_scale)?
                }
            });
        }
        Ok(out)
    }

    /// `B_1`: the input itself, or the input mapped from `[a, b]` onto `[−1, 1]` by
    /// `y = αx + β` (one level; `y` lands on the scale `Δ` exactly: `α` is encoded at the
    /// scale `Δ·q_L / s_x`, `β` added before the rescaling by `q_L`).
    fn base_power(&self, ct: &Ciphertext, p: &Polynomial) -> Result<Powers> {
        let y = match p.basis() {
            PolyBasis::Chebyshev { a, b } if p.needs_interval_map() => {
                let (alpha, beta) = (2.0 / (b - a), -(a + b) / (b - a));
                let delta = self.context().params().default_scale();
                let pre = delta * self.q_prime(ct.level())?;
                let mut y = self.mul_const_with_scale(ct, alpha, pre / ct.scale)?;
                y.scale = pre;
                self.add_const_assign(&mut y, beta)?;
                let mut y = self.rescale(&y)?;
                y.scale = delta;
                y
            }
            _ => ct.try_clone()?,
        };
        let base_level = y.level();
        let mut map = BTreeMap::new();
        map.insert(1, y);
        Ok(Powers {
            basis: p.basis(),
            chebyshev: is_chebyshev(p),
            base_level,
            wanted: BTreeSet::new(),
            map,
        })
    }

    /// `B_i` from its factors: `x^m·x^n`, or `T_i = 2·T_m·T_n − T_(m−n)` with the subtracted
    /// term multiplied by the integer `round(s_m·s_n / s_(m−n))` so that it lands on the
    /// product's scale before the one relinearisation-and-rescaling (constant `−1` when
    /// `m = n`).
    ///
    /// A product whose rescaled scale would fall below `Δ/2` (an input scale well below the
    /// primes, whose squares would shrink towards 1) is first multiplied by the integer
    /// `k = ⌊Δ·q / (s_m·s_n)⌋` and its scale by `k`: the value is unchanged, the scale brought
    /// back to about `Δ` without a level. At the usual scales (`Δ ≈ q`) `k ≤ 1` and nothing is
    /// done.
    fn compute_power(&self, pw: &Powers, i: usize) -> Result<Ciphertext> {
        let (m, n) = factors(i);
        let mut prod = self.mul_no_relin(pw.get(m)?, pw.get(n)?)?;
        let delta = self.context().params().default_scale();
        let k = (delta * self.q_prime(prod.level())? / prod.scale).floor();
        let k = if k >= 2.0 {
            k.min((1u64 << 40) as f64) as i64
        } else {
            1
        };
        prod.scale *= k as f64;
        // The 2 of `2·T_m·T_n` and `k` in one pass.
        let factor = if pw.chebyshev { 2 * k } else { k };
        if factor > 1 {
            self.mul_int_assign(&mut prod, factor)?;
        }
        if pw.chebyshev {
            if m == n {
                self.add_const_assign(&mut prod, -1.0)?;
            } else {
                let t = pw.get(m - n)?;
                let k = Self::round_i128(OP, -prod.scale / t.scale)?;
                self.mul_int_add_into(&mut prod, t, k)?;
            }
        }
        self.relinearize_maybe_rescale(&prod, true)
    }

    /// `acc += k·t` part by part, `t` at `acc`'s level or above (read as a view).
    fn mul_int_add_into(&self, acc: &mut Ciphertext, t: &Ciphertext, k: i128) -> Result<()> {
        let ring = self.context().ring();
        let scalars = ring.scalar_from_i128(k, &acc.parts[0].shape());
        for (a, b) in acc.parts.iter_mut().zip(&t.parts) {
            ring.mul_scalar_add_assign(a, b, &scalars)?;
        }
        acc.seed = None;
        Ok(())
    }

    /// `a += b` for two pre-forms at one level and one scale (a 3-component `b` makes `a` one).
    fn add_same(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        let ring = self.context().ring();
        for (x, y) in a.parts.iter_mut().zip(&b.parts) {
            ring.add_assign(x, y)?;
        }
        for y in &b.parts[a.parts.len().min(b.parts.len())..] {
            a.parts.push(y.try_clone()?);
        }
        Ok(())
    }

    /// `Σ c_i·B_i` (non-zero `c_i`, `i ≥ 1`) at `level` and scale exactly `scale`: each `B_i`
    /// (at `level` or above) times the integer `round(c_i · scale / s_i)`, summed without a
    /// copy per term; `c0` added at `scale`. `None` when every `c_i` is zero.
    fn lincomb(
        &self,
        pw: &Powers,
        level: usize,
        scale: f64,
        terms: impl Iterator<Item = (usize, f64)>,
        c0: f64,
    ) -> Result<Option<Ciphertext>> {
        let ring = self.context().ring();
        let limbs = self.context().params().q_limbs_at_level(level);
        let mut acc: Option<Ciphertext> = None;
        for (i, c) in terms.filter(|&(_, c)| c != 0.0) {
            let t = pw.get(i)?;
            let k = Self::round_i128(OP, c * scale / t.scale)?;
            match &mut acc {
                Some(acc) => self.mul_int_add_into(acc, t, k)?,
                None => {
                    let mut parts = Vec::with_capacity(2);
                    for part in &t.parts {
                        let mut part = ring.drop_q_limbs(part, limbs)?;
                        let scalars = ring.scalar_from_i128(k, &part.shape());
                        ring.mul_scalar_assign(&mut part, &scalars)?;
                        parts.push(part);
                    }
                    acc = Some(Ciphertext {
                        parts,
                        scale,
                        slots: t.slots,
                        params_id: t.params_id,
                        seed: None,
                    });
                }
            }
        }
        if let Some(acc) = &mut acc {
            if c0 != 0.0 {
                self.add_const_assign(acc, c0)?;
            }
        }
        Ok(acc)
    }

    /// A node before its last rescaling, for the target (`level`, `scale`): at `level + 1`,
    /// scale `P = scale · q_(level+1)`.
    ///
    /// A leaf is a linear combination at `(level + 1, P)`. A split `q·B_g + r` evaluates `q` to
    /// `(level + 1, P / s_g)` (so that its product with `B_g` has scale `P`), multiplies
    /// without relinearising, and adds `r` before its own last rescaling, at the same
    /// `(level + 1, P)`: one relinearisation and one rescaling for the sum.
    fn pre(&self, pw: &Powers, node: &Node, level: usize, scale: f64) -> Result<Pre> {
        if let Node::Const(c) = node {
            return Ok(Pre::Const(*c));
        }
        let p = scale * self.q_prime(level + 1)?;
        match node {
            Node::Const(c) => Ok(Pre::Const(*c)),
            Node::Leaf(c) => {
                let terms = c.iter().copied().enumerate().skip(1);
                Ok(match self.lincomb(pw, level + 1, p, terms, c[0])? {
                    Some(ct) => Pre::Ct(ct),
                    None => Pre::Const(c[0]),
                })
            }
            Node::Split { giant, q, r } => {
                let mut acc = match &**q {
                    Node::Const(c) => {
                        self.lincomb(pw, level + 1, p, std::iter::once((*giant, *c)), 0.0)?
                    }
                    q => {
                        let t = pw.get(*giant)?;
                        let q_scale = p / t.scale;
                        crate::ckks::encoder::check_scale(OP, q_scale)?;
                        let q = self.post(pw, q, level + 1, q_scale)?;
                        let mut prod = self.mul_no_relin(&q, t)?;
                        prod.scale = p;
                        Some(prod)
                    }
                };
                match (self.pre(pw, r, level, scale)?, &mut acc) {
                    (Pre::Const(c), Some(a)) => {
                        if c != 0.0 {
                            self.add_const_assign(a, c)?;
                        }
                    }
                    (Pre::Const(c), None) => return Ok(Pre::Const(c)),
                    (Pre::Ct(r), Some(a)) => self.add_same(a, &r)?,
                    (Pre::Ct(r), None) => acc = Some(r),
                }
                Ok(match acc {
                    Some(a) => Pre::Ct(a),
                    None => Pre::Const(0.0),
                })
            }
        }
    }

    /// A node (degree ≥ 1) at `level` with scale exactly `scale`: [`Evaluator::pre`], then
    /// one relinearisation (if 3 components) and rescaling.
    fn post(&self, pw: &Powers, node: &Node, level: usize, scale: f64) -> Result<Ciphertext> {
        match self.pre(pw, node, level, scale)? {
            Pre::Ct(ct) => {
                let mut out = if ct.parts.len() == 3 {
                    self.relinearize_maybe_rescale(&ct, true)?
                } else {
                    self.rescale(&ct)?
                };
                out.scale = scale;
                Ok(out)
            }
            Pre::Const(_) => Err(Error::InvalidInput(format!(
                "{OP}: internal error: a node of positive degree evaluated to a constant"
            ))),
        }
    }

    /// The constant `c` as a ciphertext at `ct`'s level and scale `scale` (a degree-0
    /// polynomial: no level used).
    fn constant_ciphertext(&self, ct: &Ciphertext, c: f64, scale: f64) -> Result<Ciphertext> {
        let mut out = self.mul_int(ct, 0)?;
        out.scale = scale;
        self.add_const_assign(&mut out, c)?;
        Ok(out)
    }

    fn q_prime(&self, level: usize) -> Result<f64> {
        let q = self.context().params().q_primes().get(level).copied();
        q.map(|q| q as f64).ok_or_else(|| {
            Error::InvalidInput(format!("{OP}: internal error: no prime at level {level}"))
        })
    }

    /// Fails unless a message of magnitude about 1 at `scale` fits below `Q_level / 2`.
    fn output_fits(&self, scale: f64, level: usize) -> Result<()> {
        let log_modulus = self.context().params().log_q_at_level(level);
        let log_scale = scale.log2();
        if log_scale + 1.0 >= log_modulus {
            return Err(Error::ScaleOverflow {
                op: OP,
                log_scale,
                log_modulus,
            });
        }
        Ok(())
    }
}

fn is_chebyshev(p: &Polynomial) -> bool {
    matches!(p.basis(), PolyBasis::Chebyshev { .. })
}
