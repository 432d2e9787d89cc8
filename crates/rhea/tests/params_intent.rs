//! Parameters by intent: the derived sets have exactly the asked depth, the smallest ring that
//! meets the security level, and work end to end; impossible intents are typed errors that say
//! what to relax; CKKS and BGV parameters answer the same questions with the same names.

mod bgv_common;
mod common;

use rhea::params::{
    BgvIntent, BgvParameters, BgvParametersLiteral, CkksIntent, CkksParameters,
    CkksParametersLiteral, IntentError, Security,
};
use rhea::Error;

/// The smallest nominal `log2(Q·P)` of a chain of sizes `log_q` over every digit count: one
/// digit per prime, so `P` is a single prime as large as the largest `Q` prime.
fn least_log_qp(log_q: &[u32]) -> u32 {
    log_q.iter().sum::<u32>() + log_q.iter().max().unwrap()
}

fn bound(s: Security, log_n: u32) -> u32 {
    s.max_log_qp(log_n).unwrap()
}

/// The grid: every derived literal has `depth` levels at the asked scale, enough slots, fits the
/// 128-bit table with the bit of margin, and the next smaller ring could not hold the chain.
#[test]
fn ckks_intents_have_the_asked_depth_and_the_smallest_ring() {
    let mut derived = 0;
    for depth in 1..=30 {
        for scale in [30, 35, 40, 45, 50] {
            for log_slots in [10, 12, 14, 16] {
                let it = CkksParameters::for_depth(depth)
                    .scale_bits(scale)
                    .slots(1 << log_slots);
                let lit = match it.literal() {
                    Ok(lit) => lit,
                    Err(e) => panic!("{it}: {e}"),
                };
                derived += 1;
                assert_eq!(lit.log_q.len(), depth + 1, "{it}");
                assert_eq!(lit.log_default_scale, scale);
                assert!(lit.log_q[1..].iter().all(|&b| b == scale));
                assert_eq!(lit.log_q[0], (scale + 20).min(60));
                assert!(lit.log_n > log_slots, "{it}: N = 2^{} too small", lit.log_n);
                assert!(lit.log_p.iter().all(|&b| (20..=60).contains(&b)));
                let qp: u32 = lit.log_q.iter().chain(&lit.log_p).sum();
                assert!(qp < bound(Security::Bits128, lit.log_n), "{it}: {qp}");
                // P covers the largest digit.
                let widest = rhea::unstable::math::bconv::digit_ranges(lit.log_q.len(), lit.dnum)
                    .into_iter()
                    .map(|r| lit.log_q[r].iter().sum::<u32>())
                    .max()
                    .unwrap();
                assert!(lit.log_p.iter().sum::<u32>() >= widest, "{it}");
                // Smallest N: one step down either loses slots or cannot hold the chain.
                let smaller = lit.log_n - 1;
                if smaller > log_slots && smaller >= 10 {
                    assert!(
                        least_log_qp(&lit.log_q) + 1 > bound(Security::Bits128, smaller),
                        "{it}: N = 2^{smaller} would do"
                    );
                }
                // The fewest digits: one digit fewer does not fit.
                if lit.dnum > 1 {
                    let fewer = it.clone().dnum(lit.dnum - 1).log_n(lit.log_n).literal();
                    assert!(fewer.is_err(), "{it}: dnum {} fits", lit.dnum - 1);
                }
            }
        }
    }
    assert_eq!(derived, 30 * 5 * 4);
}

/// A sample of the grid built for real: primes generated, 128-bit validation, exact depth.
#[test]
fn ckks_intents_build_and_validate() {
    for depth in [1, 5, 10, 20, 30] {
        for scale in [30, 40, 50] {
            for slots in [1 << 10, 1 << 16] {
                let it = CkksParameters::for_depth(depth)
                    .scale_bits(scale)
                    .slots(slots);
                let p = it.build().unwrap_or_else(|e| panic!("{it}: {e}"));
                assert_eq!(p.levels(), depth);
                assert_eq!(p.max_level(), depth);
                assert!(p.slots() >= slots);
                assert!(p.security().meets_128_bits, "{it}: {}", p.security());
                assert!(p.security_level() >= Some(Security::Bits128));
                assert_eq!(p.log_default_scale(), scale);
                assert_eq!(p.literal().q.len(), depth + 1);
                // Deterministic: the same intent gives the same primes.
                assert_eq!(it.build().unwrap().id(), p.id());
            }
        }
    }
}

/// The named presets are what the intents derive, prime for prime.
#[test]
fn small_presets_are_intents() {
    let two = CkksParameters::for_depth(2).literal().unwrap();
    assert_eq!(two, CkksParametersLiteral::n13_logqp200_levels2());
    let seven = CkksParameters::for_depth(7).literal().unwrap();
    assert_eq!(seven, CkksParametersLiteral::n14_logqp400_levels7());
    let deep = CkksParameters::for_depth(24).literal().unwrap();
    assert_eq!(deep, CkksParametersLiteral::n16_logqp1560_levels24());
    assert_eq!(
        CkksParameters::for_depth(2).build().unwrap().id(),
        CkksParametersLiteral::n13_logqp200_levels2()
            .build()
            .unwrap()
            .id()
    );
}

#[test]
fn higher_security_levels_take_larger_rings_and_are_met() {
    let mut rings = Vec::new();
    for s in Security::ALL {
        let it = CkksParameters::for_depth(5).security(s);
        let p = it.build().unwrap();
        assert!(
            p.security_level() >= Some(s),
            "{s}: {:?}",
            p.security_level()
        );
        assert!(p.log_qp() < s.max_log_qp(p.log_n()).unwrap() as f64);
        // The smallest ring for this level: the next smaller one cannot hold the chain.
        let q = it.literal().unwrap().log_q;
        assert!(least_log_qp(&q) + 1 > bound(s, p.log_n() - 1), "{s}");
        rings.push(p.log_n());
        let b = BgvParameters::for_depth(3).security(s).build().unwrap();
        assert!(b.security_level() >= Some(s));
    }
    // Depth 5 at a 40-bit scale (log Q = 260): 2^14 for 128 bits, 2^15 for 192 and 256.
    assert_eq!(rings, vec![14, 15, 15]);
}

fn intent_error(r: rhea::Result<impl std::fmt::Debug>) -> IntentError {
    match r {
        Err(Error::ParameterIntent(e)) => e,
        other => panic!("expected an intent error, got {other:?}"),
    }
}

#[test]
fn impossible_ckks_intents_say_what_to_relax() {
    // Too deep for N = 2^16: needs ~2500 bits, 1747 allowed; N = 2^17 would fit.
    let e = intent_error(CkksParameters::for_depth(60).log_n(16).build());
    let msg = e.to_string();
    match &e {
        IntentError::ChainTooLarge {
            needed_log_qp,
            log_n,
            max_log_qp,
            security,
            ..
        } => {
            assert_eq!(
                (*log_n, *max_log_qp, *security),
                (16, 1747, Security::Bits128)
            );
            assert!(*needed_log_qp > 2400, "{msg}");
        }
        other => panic!("{other:?}"),
    }
    for part in [
        "depth 60 at scale 2^40",
        "1747 allowed at N = 2^16",
        "lower the depth to",
        "the scale to 2^",
        "allow N = 2^17",
    ] {
        assert!(msg.contains(part), "`{part}` not in: {msg}");
    }
    // The advice is right: the depth it names fits, one more does not.
    let d: usize = msg
        .split("lower the depth to ")
        .nth(1)
        .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|s| s.parse().ok())
        .unwrap();
    assert!(CkksParameters::for_depth(d).log_n(16).literal().is_ok());
    assert!(CkksParameters::for_depth(d + 1)
        .log_n(16)
        .literal()
        .is_err());

    // Beyond every ring: no N to allow.
    let msg = intent_error(CkksParameters::for_depth(120).build()).to_string();
    assert!(
        msg.contains("N = 2^17") && !msg.contains("allow N"),
        "{msg}"
    );

    // 256 bits at a fixed ring: ask for less, or a larger ring.
    let msg = intent_error(
        CkksParameters::for_depth(5)
            .log_n(14)
            .security(Security::Bits256)
            .build(),
    )
    .to_string();
    assert!(msg.contains("ask for 128-bit security"), "{msg}");
    assert!(msg.contains("allow N = 2^15"), "{msg}");

    // Fields outside their domain.
    for (r, field) in [
        (
            CkksParameters::for_depth(3).scale_bits(70).build(),
            "scale_bits",
        ),
        (
            CkksParameters::for_depth(3).scale_bits(10).build(),
            "scale_bits",
        ),
        (
            CkksParameters::for_depth(3).first_prime_bits(40).build(),
            "first_prime_bits",
        ),
        (CkksParameters::for_depth(3).slots(3).build(), "slots"),
        (CkksParameters::for_depth(3).slots(1 << 17).build(), "slots"),
        (
            CkksParameters::for_depth(3)
                .slots(1 << 14)
                .log_n(13)
                .build(),
            "log_n",
        ),
        (CkksParameters::for_depth(3).log_n(9).build(), "log_n"),
        (CkksParameters::for_depth(3).dnum(5).build(), "dnum"),
    ] {
        match intent_error(r) {
            IntentError::OutOfRange { field: f, .. } => assert_eq!(f, field),
            other => panic!("{field}: {other:?}"),
        }
    }
}

#[test]
fn impossible_bgv_intents_say_what_to_relax() {
    // 65537 does not batch at N = 2^16 and no 17-bit prime does.
    let msg = intent_error(BgvParameters::for_depth(3).slots(1 << 16).build()).to_string();
    assert!(
        msg.contains("no 17-bit prime") && msg.contains("plaintext bits"),
        "{msg}"
    );
    let e = intent_error(
        BgvParameters::for_depth(3)
            .plaintext_modulus(256)
            .slots(1 << 13)
            .build(),
    );
    assert!(
        matches!(e, IntentError::NotBatching { t: 256, .. }),
        "{e:?}"
    );
    // Coefficient encoding with the same t is fine.
    let p = BgvParameters::for_depth(3)
        .plaintext_modulus(256)
        .build()
        .unwrap();
    assert!(!p.batching() && p.t() == 256 && p.levels() == 3);
    // Too deep: the 17-bit t batches up to N = 2^15, a larger t would allow 2^16.
    let e = intent_error(BgvParameters::for_depth(60).build());
    assert!(
        matches!(e, IntentError::ChainTooLarge { log_n: 15, .. }),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(msg.contains("lower the depth to"), "{msg}");
    assert!(
        msg.contains("at least 20 bits (batching at N = 2^16)"),
        "{msg}"
    );
    // A plaintext too large for any prime at this ring.
    let e = intent_error(BgvParameters::for_depth(2).plaintext_bits(45).build());
    assert!(
        matches!(e, IntentError::PlaintextTooLarge { .. }),
        "{e:?}: {e}"
    );
}

#[test]
fn bgv_intents_have_the_asked_depth_and_a_batching_t() {
    for depth in [1, 2, 4, 8, 12] {
        for bits in [17, 20, 30] {
            for log_slots in [12, 14, 15] {
                let it = BgvParameters::for_depth(depth)
                    .plaintext_bits(bits)
                    .slots(1 << log_slots);
                let lit = match it.literal() {
                    Ok(l) => l,
                    // Large t and deep chains may need more than 60-bit primes or N = 2^18.
                    Err(Error::ParameterIntent(
                        IntentError::PlaintextTooLarge { .. } | IntentError::ChainTooLarge { .. },
                    )) if bits == 30 => continue,
                    Err(e) => panic!("{it}: {e}"),
                };
                assert_eq!(lit.log_q.len(), depth + 1, "{it}");
                assert!(lit.log_n >= log_slots);
                assert!(
                    lit.t >= 1 << (bits - 1) && lit.t < 1 << bits,
                    "{it}: t = {}",
                    lit.t
                );
                assert_eq!(
                    lit.t % (2 << lit.log_n),
                    1,
                    "{it}: t = {} does not batch",
                    lit.t
                );
                let qp: u32 = lit.log_q.iter().chain(&lit.log_p).sum();
                assert!(qp < bound(Security::Bits128, lit.log_n));
                if lit.log_n > log_slots.max(10) {
                    assert!(least_log_qp(&lit.log_q) + 1 > bound(Security::Bits128, lit.log_n - 1));
                }
            }
        }
    }
    let p = BgvParameters::for_depth(3).build().unwrap();
    assert_eq!((p.t(), p.log_n(), p.levels()), (65537, 13, 3));
    assert!(p.batching() && p.security().meets_128_bits);
}

/// An intent-built CKKS set on the CPU: `depth` squarings with rescaling, then decryption with
/// at least 20 bits of precision at a 40-bit scale, and no level left.
#[test]
fn ckks_intent_works_end_to_end() {
    let depth = 3;
    let it = CkksParameters::for_depth(depth).scale_bits(40);
    let lit = it.literal().unwrap();
    let s = common::setup(lit, &[], false, 7);
    let params = s.ctx.params().clone();
    assert_eq!((params.levels(), params.log_n()), (depth, 14));
    let x: Vec<f64> = common::random_vec(s.slots(), 11)
        .into_iter()
        .map(|v| 0.75 + v / 4.0)
        .collect();
    let mut ct = s.encrypt(&x, 3);
    let mut want = x.clone();
    for _ in 0..depth {
        ct = s.eval.square(&ct).unwrap();
        want.iter_mut().for_each(|w| *w *= *w);
    }
    assert_eq!(ct.level(), 0);
    let got = s.decrypt(&ct);
    let bits = common::precision_bits(&got, &want);
    assert!(bits >= 20.0, "precision {bits:.1} bits");
    // Exactly the asked depth: one more multiplication has no level left.
    assert!(matches!(
        s.eval.square(&ct),
        Err(Error::LevelUnderflow { .. })
    ));
}

/// An intent-built BGV set on the CPU: `depth` exact multiplications of fresh ciphertexts (and
/// `depth` squarings), down to level 0; with a margin, a rotation at every level as well.
#[test]
fn bgv_intent_does_depth_exact_multiplications() {
    let depth = 3;
    let lit = BgvParameters::for_depth(depth)
        .slots(1 << 12)
        .literal()
        .unwrap();
    assert_eq!((lit.t, lit.log_n), (65537, 13));
    let s = bgv_common::setup(lit, &[1], false, false, 5);
    let p = bgv_common::Plain { t: s.t() };
    let mut rng = bgv_common::Rng(99);
    let top = s.ctx.params().levels();
    assert_eq!(top, depth);
    let x0 = rng.values(s.n(), s.t());
    let (mut ct, mut want) = (s.encrypt(&x0, top, 1), x0.clone());
    let (mut sq, mut sq_want) = (s.encrypt(&x0, top, 2), x0);
    for i in 0..depth {
        let xi = rng.values(s.n(), s.t());
        let fresh = s.encrypt(&xi, top, 3 + i as u8);
        ct = s.eval.mul(&ct, &fresh).unwrap();
        want = p.mul(&want, &xi);
        assert_eq!(s.decrypt(&ct), want, "product {}", i + 1);
        sq = s.eval.square(&sq).unwrap();
        sq_want = p.mul(&sq_want, &sq_want);
        assert_eq!(s.decrypt(&sq), sq_want, "square {}", i + 1);
    }
    assert_eq!((ct.level(), sq.level()), (0, 0));

    // With margin bits, a rotation and a sum at every level fit too.
    let lit = BgvParameters::for_depth(depth)
        .margin_bits(4)
        .literal()
        .unwrap();
    let s = bgv_common::setup(lit, &[1], false, false, 6);
    let x = rng.values(s.n(), s.t());
    let mut ct = s.encrypt(&x, depth, 1);
    let mut want = x;
    for _ in 0..depth {
        let rot = s.eval.rotate_rows(&ct, 1).unwrap();
        let sum = s.eval.add(&ct, &rot).unwrap();
        ct = s.eval.square(&sum).unwrap();
        let half = want.len() / 2;
        let rotated: Vec<u64> = (0..want.len())
            .map(|j| {
                let (row, col) = (j / half, j % half);
                want[row * half + (col + 1) % half]
            })
            .collect();
        let summed = p.add(&want, &rotated);
        want = p.mul(&summed, &summed);
    }
    assert_eq!(s.decrypt(&ct), want);
}

/// `describe` prints the derived chain prime by prime.
#[test]
fn describe_prints_the_chain() {
    let p = CkksParameters::for_depth(4).scale_bits(45).build().unwrap();
    let d = p.describe();
    for part in [
        "CKKS parameters",
        &format!("N = 2^{}", p.log_n()),
        &format!("{} complex", p.slots()),
        "depth         4",
        "Δ = 2^45",
        "q_4",
        "p_0",
        "log QP",
        "dnum",
        "128-bit",
        "highest level",
    ] {
        assert!(d.contains(part), "`{part}` not in:\n{d}");
    }
    for q in p.q_primes().iter().chain(p.p_primes()) {
        assert!(d.contains(&q.to_string()), "{q} not in:\n{d}");
    }
    let b = BgvParameters::for_depth(2).build().unwrap().describe();
    assert!(b.contains("BGV parameters") && b.contains("t = 65537") && b.contains("q_2"));
}

/// Both schemes' parameters answer the same questions with the same names, and the old path
/// `rhea::bgv::BgvParameters` is the same type.
#[test]
fn both_schemes_have_the_same_shape() {
    fn old_path(p: &rhea::bgv::BgvParameters) -> usize {
        p.levels()
    }
    let c = CkksParametersLiteral::n13_logqp200_levels2()
        .build()
        .unwrap();
    let b = BgvParametersLiteral::he_booster_n13_logqp218()
        .build()
        .unwrap();
    assert_eq!(old_path(&b), 3);
    macro_rules! shape {
        ($p:expr) => {{
            let p = &$p;
            assert_eq!(p.n(), 1 << p.log_n());
            assert_eq!(p.levels(), p.q_primes().len() - 1);
            assert!((p.log_qp() - p.log_q() - p.log_p()).abs() < 1e-9);
            assert!((p.log_qp() - p.security().log_qp).abs() < 1e-9);
            assert!(p.dnum() >= 1 && p.security().meets_128_bits);
            assert_eq!(p.security_level(), Some(Security::Bits128));
            assert!(p.slots() > 0 && p.id() != 0 && !p.describe().is_empty());
            assert!(!p.literal().q.is_empty());
        }};
    }
    shape!(c);
    shape!(b);
    assert_eq!((c.slots(), b.slots()), (4096, 8192));
    // Presets by name, with their purpose, for both.
    for p in CkksParametersLiteral::presets() {
        assert_eq!(CkksParametersLiteral::by_name(p.name), Some(p.literal));
        assert!(!p.purpose.is_empty());
    }
    for p in BgvParametersLiteral::presets() {
        assert_eq!(BgvParametersLiteral::by_name(p.name), Some(p.literal));
    }
    assert_eq!(CkksParametersLiteral::by_name("nope"), None);
    // `with_dnum` for both.
    let b2 = BgvParametersLiteral::he_booster_n13_logqp218().with_dnum(2);
    assert_eq!(b2.log_p, vec![44, 44]);
}

#[test]
fn intents_parse_and_print() {
    let e = "depth=3,colour=red".parse::<CkksIntent>().unwrap_err();
    assert!(e.to_string().contains("unknown key `colour`"), "{e}");
    let c: CkksIntent = "depth=10, scale_bits=45, slots=2^14, security=192"
        .parse()
        .unwrap();
    assert_eq!(
        c,
        CkksParameters::for_depth(10)
            .scale_bits(45)
            .slots(1 << 14)
            .security(Security::Bits192)
    );
    assert_eq!(c.to_string().parse::<CkksIntent>().unwrap(), c);
    let b: BgvIntent = "depth=4,t=65537,slots=4096,dnum=5,margin_bits=2"
        .parse()
        .unwrap();
    assert_eq!(b.to_string().parse::<BgvIntent>().unwrap(), b);
    assert_eq!(
        b,
        BgvParameters::for_depth(4)
            .plaintext_modulus(65537)
            .slots(4096)
            .dnum(5)
            .margin_bits(2)
    );
    for bad in [
        "scale_bits=40",
        "depth=3,scale=abc",
        "depth=3,colour=red",
        "depth",
        "depth=3,security=100",
        "depth=2^70",
    ] {
        let e = bad.parse::<CkksIntent>().unwrap_err().to_string();
        assert!(e.contains(bad), "{e}");
        assert!(
            matches!(
                bad.parse::<CkksIntent>(),
                Err(Error::ParameterIntent(IntentError::Parse { .. }))
            ),
            "{bad}"
        );
    }
}
