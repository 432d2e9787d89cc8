//! BGV decrypts exactly: random programs of additions, multiplications, rotations and their
//! plaintext/constant variants, on random inputs, give the same slots as the same program on
//! plain integers modulo `t`, at every step and down to the last level.

mod bgv_common;

use bgv_common::{is_noise_exhausted, setup, Plain, Rng, Setup};
use rhea::bgv::{BgvParametersLiteral, Ciphertext, Evaluator};
use rhea::unstable::HasRing;

/// Row-rotation steps with keys in these tests.
const STEPS: [i64; 5] = [1, 2, -1, 5, 1000];

struct Item {
    ct: Ciphertext,
    plain: Vec<u64>,
}

/// Checks that `ct` decrypts to `plain` (and that the tracked bound covers the measured noise).
fn check(s: &Setup, ct: &Ciphertext, plain: &[u64], what: &str) {
    let got = s.decrypt(ct);
    assert!(
        got == plain,
        "{what}: wrong decryption at level {}",
        ct.level()
    );
}

/// A fresh item: random values at `level`, public- or secret-key encrypted.
fn fresh(s: &Setup, rng: &mut Rng, level: usize) -> Item {
    let plain = rng.values(s.n(), s.t());
    let pt = s.encoder.encode_at(&plain, level).unwrap();
    let seed = rng.next() as u8;
    let ct = if rng.below(2) == 0 {
        s.encryptor(seed).encrypt(&pt).unwrap()
    } else {
        s.sk_encryptor(seed).encrypt(&pt).unwrap()
    };
    Item { ct, plain }
}

/// One random operation on pool items `i`, `j`; `None` when the evaluator refused it for lack of
/// noise budget (which only multiplications may do).
fn random_op(
    s: &Setup,
    eval: &Evaluator,
    rng: &mut Rng,
    pool: &[Item],
    i: usize,
    j: usize,
) -> Option<(Item, &'static str)> {
    let p = Plain { t: s.t() };
    let (a, b) = (&pool[i], &pool[j]);
    let t = s.t() as i64;
    let c = rng.below(s.t()) as i64 - t / 2;
    let op = rng.below(15);
    let result = match op {
        0 => eval
            .add(&a.ct, &b.ct)
            .map(|ct| (ct, p.add(&a.plain, &b.plain), "add")),
        1 => eval
            .sub(&a.ct, &b.ct)
            .map(|ct| (ct, p.sub(&a.plain, &b.plain), "sub")),
        2 => eval
            .mul(&a.ct, &b.ct)
            .map(|ct| (ct, p.mul(&a.plain, &b.plain), "mul")),
        3 => eval
            .square(&a.ct)
            .map(|ct| (ct, p.mul(&a.plain, &a.plain), "square")),
        4..=6 => {
            let v = rng.values(s.n(), s.t());
            let level = rng.below(s.ctx.params().max_level() as u64 + 1) as usize;
            let pt = s.encoder.encode_at(&v, level).unwrap();
            match op {
                4 => eval
                    .mul_plain(&a.ct, &pt)
                    .map(|ct| (ct, p.mul(&a.plain, &v), "mul_plain")),
                5 => eval
                    .add_plain(&a.ct, &pt)
                    .map(|ct| (ct, p.add(&a.plain, &v), "add_plain")),
                _ => eval
                    .sub_plain(&a.ct, &pt)
                    .map(|ct| (ct, p.sub(&a.plain, &v), "sub_plain")),
            }
        }
        7 => eval
            .mul_const(&a.ct, c)
            .map(|ct| (ct, p.mul_const(&a.plain, c), "mul_const")),
        8 => eval
            .add_const(&a.ct, c)
            .map(|ct| (ct, p.add_const(&a.plain, c), "add_const")),
        9 => eval
            .sub_const(&a.ct, c)
            .map(|ct| (ct, p.add_const(&a.plain, -c), "sub_const")),
        10 => {
            let k = STEPS[rng.below(STEPS.len() as u64) as usize];
            eval.rotate_rows(&a.ct, k)
                .map(|ct| (ct, p.rotate_rows(&a.plain, k), "rotate_rows"))
        }
        11 => eval
            .rotate_columns(&a.ct)
            .map(|ct| (ct, p.rotate_columns(&a.plain), "rotate_columns")),
        12 if a.ct.level() > 0 => eval
            .mod_switch(&a.ct)
            .map(|ct| (ct, a.plain.clone(), "mod_switch")),
        13 if a.ct.level() > 0 => {
            let level = rng.below(a.ct.level() as u64) as usize;
            eval.drop_to_level(&a.ct, level)
                .map(|ct| (ct, a.plain.clone(), "drop_to_level"))
        }
        _ => eval.neg(&a.ct).map(|ct| (ct, p.neg(&a.plain), "neg")),
    };
    match result {
        Ok((ct, plain, name)) => Some((Item { ct, plain }, name)),
        Err(e) if is_noise_exhausted(&e) => {
            // Multiplications may run out of budget; anything else only on an operand that is
            // nearly exhausted already (matching factors costs about log2(t)/2 bits, a key
            // switch a few more).
            let low = eval
                .estimated_budget(&a.ct)
                .min(eval.estimated_budget(&b.ct));
            assert!(
                matches!(op, 2 | 3 | 4 | 7 | 13) || low < 20,
                "op {op} refused with operand budgets ≥ {low}: {e}"
            );
            None
        }
        Err(e) => panic!("op {op} failed: {e}"),
    }
}

/// A random program on a pool of ciphertexts, each result checked by decryption; then one chain
/// driven down to level 0 and operated on there.
fn random_program(s: &Setup, eval: &Evaluator, seed: u64, ops: usize) {
    let mut rng = Rng(seed);
    let top = s.ctx.params().max_level();
    let mut pool: Vec<Item> = (0..4)
        .map(|k| fresh(s, &mut rng, if k == 3 { top - 1 } else { top }))
        .collect();
    let (mut refused, mut mixed_factors) = (0, 0);
    for step in 0..ops {
        let (i, j) = (
            rng.below(pool.len() as u64) as usize,
            rng.below(pool.len() as u64) as usize,
        );
        let Some((item, name)) = random_op(s, eval, &mut rng, &pool, i, j) else {
            refused += 1;
            continue;
        };
        if pool[i].ct.factor() != pool[j].ct.factor() {
            mixed_factors += 1;
        }
        check(
            s,
            &item.ct,
            &item.plain,
            &format!("seed {seed}, step {step}, {name}"),
        );
        if pool.len() < 6 {
            pool.push(item);
        } else {
            let k = rng.below(pool.len() as u64) as usize;
            pool[k] = item;
        }
        // Keep some fresh material around.
        if step % 8 == 7 {
            let k = rng.below(pool.len() as u64) as usize;
            pool[k] = fresh(s, &mut rng, top);
        }
    }

    // Down to the last level: multiply a chain by fresh ciphertexts until level 0.
    let p = Plain { t: s.t() };
    let mut acc = fresh(s, &mut rng, top);
    while acc.ct.level() > 0 {
        let other = fresh(s, &mut rng, top);
        let mut ct = eval.mul(&acc.ct, &other.ct).unwrap();
        if !eval.auto_mod_switch() {
            ct = eval.mod_switch(&ct).unwrap();
        }
        acc = Item {
            plain: p.mul(&acc.plain, &other.plain),
            ct,
        };
        check(s, &acc.ct, &acc.plain, &format!("seed {seed}, chain"));
    }
    assert_eq!(acc.ct.level(), 0);
    // Operations at level 0, with operands brought down from the pool's levels (a noisy pool
    // item may not fit in the last prime: then the addition is refused, never wrong).
    let mut added = 0;
    let mut total = Item {
        ct: acc.ct.try_clone().unwrap(),
        plain: acc.plain.clone(),
    };
    for item in &pool {
        match eval.add(&total.ct, &item.ct) {
            Ok(sum) => {
                assert_eq!(sum.level(), 0);
                total = Item {
                    plain: p.add(&total.plain, &item.plain),
                    ct: sum,
                };
                added += 1;
            }
            Err(e) => assert!(is_noise_exhausted(&e), "{e}"),
        }
    }
    check(s, &total.ct, &total.plain, "level 0: sums of the pool");
    let f = fresh(s, &mut rng, top);
    acc = Item {
        ct: eval.add(&acc.ct, &f.ct).unwrap(),
        plain: p.add(&acc.plain, &f.plain),
    };
    check(
        s,
        &acc.ct,
        &acc.plain,
        "level 0: sum with a fresh ciphertext",
    );
    let rot = eval.rotate_rows(&acc.ct, 1).unwrap();
    check(
        s,
        &rot,
        &p.rotate_rows(&acc.plain, 1),
        "level 0: rotate_rows",
    );
    let sw = eval.rotate_columns(&rot).unwrap();
    let plain = p.rotate_columns(&p.rotate_rows(&acc.plain, 1));
    check(s, &sw, &plain, "level 0: rotate_columns");
    let v = rng.values(s.n(), s.t());
    let pt = s.encoder.encode_at(&v, 0).unwrap();
    let ct = eval
        .mul_const(&eval.add_plain(&sw, &pt).unwrap(), 3)
        .unwrap();
    check(
        s,
        &ct,
        &p.mul_const(&p.add(&plain, &v), 3),
        "level 0: add_plain, mul_const",
    );
    eprintln!(
        "seed {seed}: {ops} ops, {refused} refused for budget, {mixed_factors} with mixed \
         factors; {added} of {} pool items added at level 0",
        pool.len()
    );
    assert!(refused < ops / 2, "too many refused operations: {refused}");
}

#[test]
fn random_programs_are_exact_down_to_the_last_level() {
    let s = setup(
        BgvParametersLiteral::test_n12_levels5_insecure(),
        &STEPS,
        true,
        false,
        1,
    );
    for seed in [11u64, 12, 13, 14] {
        random_program(&s, &s.eval, seed, 60);
    }
}

#[test]
fn random_program_is_exact_on_the_he_booster_n13_preset() {
    let s = setup(
        BgvParametersLiteral::he_booster_n13_logqp218(),
        &STEPS,
        true,
        false,
        7,
    );
    random_program(&s, &s.eval, 15, 40);
}

#[test]
fn random_programs_are_exact_in_manual_mode() {
    let s = setup(
        BgvParametersLiteral::test_n12_levels5_insecure(),
        &STEPS,
        true,
        false,
        2,
    );
    let manual = s.manual();
    random_program(&s, &manual, 21, 30);

    // Explicit switching with mismatched correction factors.
    let mut rng = Rng(22);
    let p = Plain { t: s.t() };
    let top = s.ctx.params().max_level();
    let (x, y) = (fresh(&s, &mut rng, top), fresh(&s, &mut rng, top));
    let prod = manual.mul(&x.ct, &y.ct).unwrap();
    assert_eq!(prod.level(), top, "manual mode does not switch");
    let switched = manual.mod_switch(&prod).unwrap();
    assert_eq!(switched.level(), top - 1);
    assert_ne!(
        switched.factor(),
        1,
        "switching multiplies the factor by q^-1 mod t"
    );
    let xy = p.mul(&x.plain, &y.plain);
    check(&s, &switched, &xy, "mod_switch");
    let dropped = manual.drop_to_level(&x.ct, top - 1).unwrap();
    assert_eq!(dropped.factor(), 1);
    let sum = manual.add(&switched, &dropped).unwrap();
    check(
        &s,
        &sum,
        &p.add(&xy, &x.plain),
        "factors matched by small multipliers",
    );
    let diff = manual.sub(&dropped, &switched).unwrap();
    check(
        &s,
        &diff,
        &p.sub(&x.plain, &xy),
        "sub with mismatched factors",
    );
    let low = manual.mod_switch_to_level(&sum, 0).unwrap();
    check(&s, &low, &p.add(&xy, &x.plain), "mod_switch_to_level 0");
    let plain_sum = manual
        .add_plain(&low, &s.encoder.encode_at(&y.plain, 2).unwrap())
        .unwrap();
    check(
        &s,
        &plain_sum,
        &p.add(&p.add(&xy, &x.plain), &y.plain),
        "plaintext added with a factor",
    );
    let c = manual.add_const(&low, -5).unwrap();
    check(
        &s,
        &c,
        &p.add_const(&p.add(&xy, &x.plain), -5),
        "constant added with a factor",
    );
}

#[test]
fn mul_without_relinearization_then_relinearize() {
    let s = setup(
        BgvParametersLiteral::test_n12_levels5_insecure(),
        &[],
        false,
        false,
        3,
    );
    let mut rng = Rng(31);
    let p = Plain { t: s.t() };
    let (x, y) = (fresh(&s, &mut rng, 5), fresh(&s, &mut rng, 3));
    let three = s.eval.mul_no_relin(&x.ct, &y.ct).unwrap();
    assert_eq!((three.len(), three.level()), (3, 3));
    let xy = p.mul(&x.plain, &y.plain);
    check(&s, &three, &xy, "3 components");
    let sum = s.eval.add(&three, &x.ct).unwrap();
    assert_eq!(sum.len(), 3);
    check(&s, &sum, &p.add(&xy, &x.plain), "3 + 2 components");
    let two = s.eval.relinearize(&sum).unwrap();
    assert_eq!(two.len(), 2);
    check(&s, &two, &p.add(&xy, &x.plain), "relinearized");
    let switched = s.eval.mod_switch(&three).unwrap();
    check(&s, &switched, &xy, "3 components switched");
    // Exactly the multiplication: relinearize(mul_no_relin) then switch = mul, word for word.
    let direct = s.eval.mul(&x.ct, &y.ct).unwrap();
    let via = s
        .eval
        .mod_switch(
            &s.eval
                .relinearize(&s.eval.mul_no_relin(&x.ct, &y.ct).unwrap())
                .unwrap(),
        )
        .unwrap();
    let ring = s.ctx.ring();
    for (a, b) in direct.parts().iter().zip(via.parts()) {
        assert_eq!(ring.download(a).unwrap(), ring.download(b).unwrap());
    }
}

#[test]
fn hoisted_rotations_equal_single_rotations() {
    let s = setup(
        BgvParametersLiteral::test_n12_levels5_insecure(),
        &STEPS,
        false,
        false,
        4,
    );
    let mut rng = Rng(41);
    let x = fresh(&s, &mut rng, 4);
    let hoisted = s.eval.rotate_rows_hoisted(&x.ct, &STEPS).unwrap();
    let ring = s.ctx.ring();
    let p = Plain { t: s.t() };
    for (h, &k) in hoisted.iter().zip(&STEPS) {
        let single = s.eval.rotate_rows(&x.ct, k).unwrap();
        for (a, b) in h.parts().iter().zip(single.parts()) {
            assert_eq!(
                ring.download(a).unwrap(),
                ring.download(b).unwrap(),
                "step {k}"
            );
        }
        check(&s, h, &p.rotate_rows(&x.plain, k), "hoisted");
    }
}
