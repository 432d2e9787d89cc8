//! Linear transforms (baby-step/giant-step, double hoisting) and slot utilities against `f64`:
//! precision, levels, exact scales, counted key switchings, the diagonal cache, typed errors,
//! and (ignored without one) the GPU's words equal to the CPU's.

mod common;

use common::{precision_bits, precision_bits_complex, random_complex, random_vec};
use num_complex::Complex64;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rhea::ckks::{
    Ciphertext, CkksContext, Decryptor, DiagonalStorage, Encoder, Encryptor, Evaluator,
    KeyGenerator, LinearTransform, RotationKeys,
};
use rhea::params::CkksParametersLiteral;
use rhea::rlwe::{PublicKey, SecretKey};
use rhea::unstable::HasRing;
use rhea::{Device, Error};

/// The precision every transform must reach at Δ = 2^40 (bits against `f64`).
const MIN_BITS: f64 = 20.0;

struct Fx {
    ctx: CkksContext,
    sk: SecretKey,
    pk: PublicKey,
    eval: Evaluator,
}

/// Keys from a fixed seed: rotations by `steps`, the relinearisation key.
fn fixture(device: Device, steps: &[i64]) -> Fx {
    let params = CkksParametersLiteral::test_n13_levels10_insecure()
        .build()
        .unwrap();
    let ctx = CkksContext::new(&params, device).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [3; 32]);
    let sk = keygen.secret_key().unwrap();
    let pk = keygen.public_key(&sk).unwrap();
    let rlk = keygen.relinearization_key(&sk).unwrap();
    let gk = keygen.galois_keys(&sk, steps, false).unwrap();
    let eval = Evaluator::new(&ctx)
        .with_relinearization_key(rlk)
        .unwrap()
        .with_galois_keys(gk)
        .unwrap();
    Fx { ctx, sk, pk, eval }
}

impl Fx {
    fn encoder(&self, slots: usize) -> Encoder {
        Encoder::with_slots(&self.ctx, slots).unwrap()
    }

    fn encrypt(&self, slots: usize, v: &[Complex64]) -> Ciphertext {
        let pt = self.encoder(slots).encode_complex(v).unwrap();
        Encryptor::new(&self.ctx, &self.pk)
            .unwrap()
            .with_seed([5; 32])
            .encrypt(&pt)
            .unwrap()
    }

    fn encrypt_real(&self, slots: usize, v: &[f64]) -> Ciphertext {
        let z: Vec<Complex64> = v.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        self.encrypt(slots, &z)
    }

    fn decrypt(&self, ct: &Ciphertext) -> Vec<Complex64> {
        let pt = Decryptor::new(&self.ctx, &self.sk)
            .unwrap()
            .decrypt(ct)
            .unwrap();
        self.encoder(ct.slots()).decode_complex(&pt).unwrap()
    }

    /// The words of a ciphertext's parts (downloaded from its device).
    fn words(&self, ct: &Ciphertext) -> Vec<Vec<u64>> {
        ct.parts()
            .iter()
            .map(|p| self.ctx.ring().download(p).unwrap())
            .collect()
    }

    fn decrypt_real(&self, ct: &Ciphertext) -> Vec<f64> {
        self.decrypt(ct).iter().map(|z| z.re).collect()
    }

    /// Evaluates `lt` on `ct` checking the level, the exact scale and the counted key
    /// switchings; returns the result.
    fn transform(&self, ct: &Ciphertext, lt: &LinearTransform) -> Ciphertext {
        let before = self.ctx.keyswitches();
        let out = self.eval.linear_transform(ct, lt).unwrap();
        let counted = self.ctx.keyswitches() - before;
        assert_eq!(counted, lt.keyswitches() as u64, "counted key switchings");
        assert!(
            counted <= lt.diagonal_count() as u64,
            "{counted} key switchings"
        );
        assert_eq!(out.level(), ct.level() - 1, "one level");
        assert_eq!(out.scale(), ct.scale(), "the scale kept exactly");
        out
    }
}

fn real(v: &[f64]) -> Vec<Complex64> {
    v.iter().map(|&x| Complex64::new(x, 0.0)).collect()
}

fn random_matrix(m: usize, n: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..m)
        .map(|_| (0..n).map(|_| rng.random_range(-1.0..1.0)).collect())
        .collect()
}

/// `M·v` for a dense `m × n` matrix and the first `n` values of `v`, zero-padded to `slots`.
fn matvec(m: &[Vec<f64>], v: &[f64], slots: usize) -> Vec<f64> {
    let mut out = vec![0.0; slots];
    for (r, row) in m.iter().enumerate() {
        out[r] = row.iter().zip(v).map(|(a, b)| a * b).sum();
    }
    out
}

/// A transform of the 64 diagonals −32..32 with random entries in [−1, 1).
fn random_band(slots: usize, seed: u64) -> LinearTransform {
    let mut rng = StdRng::seed_from_u64(seed);
    let diags: Vec<(i64, Vec<f64>)> = (-32..32)
        .map(|k| (k, (0..slots).map(|_| rng.random_range(-1.0..1.0)).collect()))
        .collect();
    LinearTransform::from_diagonals(slots, diags).unwrap()
}

/// A random transform of 64 diagonals (a band −32..32 around the main diagonal) at full slots:
/// precision, `baby + giant − 2` key switchings, the diagonals cached at the level used, a
/// second evaluation encoding nothing and giving the same words.
#[test]
fn banded_64_diagonals_full_slots() {
    let slots = 4096;
    let mut rng = StdRng::seed_from_u64(11);
    let diags: Vec<(i64, Vec<f64>)> = (-32..32)
        .map(|k| {
            let d: Vec<f64> = (0..slots).map(|_| rng.random_range(-1.0..1.0)).collect();
            (k, d)
        })
        .collect();
    let lt = LinearTransform::from_diagonals(slots, diags).unwrap();
    assert_eq!(lt.diagonal_count(), 64);
    assert_eq!(lt.keyswitches(), lt.baby_steps() + lt.giant_steps() - 2);
    // n1 = 16 (a giant step costs ~4 baby steps): 15 baby + 3 giant key switchings.
    assert!(lt.keyswitches() <= 18, "{lt:?}");
    let fx = fixture(Device::Cpu, &lt.rotations());
    let v = random_vec(slots, 1);
    let ct = fx.encrypt_real(slots, &v);
    assert!(lt.cached_levels().is_empty());
    let out = fx.transform(&ct, &lt);
    assert_eq!(lt.cached_levels(), vec![ct.level()]);
    assert_eq!(lt.encodings(), 1);
    let want: Vec<f64> = lt.apply(&real(&v)).unwrap().iter().map(|z| z.re).collect();
    let bits = precision_bits(&fx.decrypt_real(&out), &want);
    assert!(bits >= MIN_BITS, "{bits:.1} bits");
    eprintln!("banded 64 diagonals: {bits:.1} bits");

    // Again at the same level: nothing new encoded, the same words.
    let again = fx.transform(&ct, &lt);
    assert_eq!(lt.cached_levels(), vec![ct.level()]);
    assert_eq!(lt.encodings(), 1, "the second evaluation encoded again");
    assert_eq!(fx.words(&again), fx.words(&out));

    // At a lower level: a second encoding, also exact.
    let low = fx.eval.drop_to_level(&ct, 3).unwrap();
    let out_low = fx.transform(&low, &lt);
    assert_eq!(lt.cached_levels(), vec![3, ct.level()]);
    assert_eq!(lt.encodings(), 2);
    let bits = precision_bits(&fx.decrypt_real(&out_low), &want);
    assert!(bits >= MIN_BITS, "{bits:.1} bits at level 3");
    eprintln!("banded 64 diagonals: {bits:.1} bits at level 3");
    lt.clear_cache();
    assert!(lt.cached_levels().is_empty());
}

/// Two transforms of one input sharing the ModUp and the baby steps: the words of separate
/// evaluations, fewer key switchings than both.
#[test]
fn transforms_sharing_baby_steps() {
    let slots = 4096;
    let band = |seed: u64| random_band(slots, seed);
    let (a, b) = (band(13), band(14));
    assert_eq!(a.baby_steps(), b.baby_steps());
    let fx = fixture(Device::Cpu, &a.rotations());
    let ct = fx.encrypt_real(slots, &random_vec(slots, 16));
    let (ya, yb) = (fx.transform(&ct, &a), fx.transform(&ct, &b));
    let before = fx.ctx.keyswitches();
    let both = fx.eval.linear_transforms(&ct, &[&a, &b]).unwrap();
    let shared = fx.ctx.keyswitches() - before;
    let babies = (a.baby_steps() - 1) as u64;
    assert_eq!(shared, (a.keyswitches() + b.keyswitches()) as u64 - babies);
    assert_eq!(fx.words(&both[0]), fx.words(&ya));
    assert_eq!(fx.words(&both[1]), fx.words(&yb));
    let other = LinearTransform::from_dense(64, &random_matrix(64, 64, 1)).unwrap();
    assert!(matches!(
        fx.eval.linear_transforms(&ct, &[&a, &other]),
        Err(Error::SlotMismatch { .. })
    ));
    assert!(fx.eval.linear_transforms(&ct, &[]).unwrap().is_empty());
}

/// `RotationKeys::Fewest`: a 64-diagonal band needs three rotation keys (the baby gap 1 and the
/// giant gaps ±n1) instead of one per baby step, runs one key switching per baby and giant
/// step, and is as precise; in one `linear_transforms` call with a hoisted transform each gives
/// the words of its own evaluation.
#[test]
fn fewest_rotation_keys() {
    let slots = 4096;
    let band = |seed: u64| random_band(slots, seed);
    let hoisted = band(31);
    let fewest = band(32).with_rotation_keys(RotationKeys::Fewest);
    assert_eq!(fewest.rotation_keys(), RotationKeys::Fewest);
    let n1 = fewest.baby_steps() as i64;
    assert_eq!(fewest.rotations(), vec![1, n1, slots as i64 - n1]);
    assert!(hoisted.rotations().len() > 10, "{:?}", hoisted.rotations());
    assert_eq!(
        fewest.keyswitches(),
        fewest.baby_steps() + fewest.giant_steps() - 2
    );
    let mut steps = hoisted.rotations();
    steps.extend(fewest.rotations());
    let fx = fixture(Device::Cpu, &steps);
    let only_fewest = fixture(Device::Cpu, &fewest.rotations());
    let v = random_vec(slots, 33);
    let ct = fx.encrypt_real(slots, &v);
    let out = only_fewest.transform(&only_fewest.encrypt_real(slots, &v), &fewest);
    let want: Vec<f64> = fewest
        .apply(&real(&v))
        .unwrap()
        .iter()
        .map(|z| z.re)
        .collect();
    let bits = precision_bits(&only_fewest.decrypt_real(&out), &want);
    assert!(bits >= MIN_BITS, "{bits:.1} bits");
    eprintln!("banded 64 diagonals, fewest keys: {bits:.1} bits");
    // Without the baby gap's key: the missing step is named.
    let no_baby = fixture(Device::Cpu, &[n1, slots as i64 - n1]);
    assert!(matches!(
        no_baby
            .eval
            .linear_transform(&no_baby.encrypt_real(slots, &v), &fewest),
        Err(Error::MissingRotationKey { .. })
    ));
    // Mixed modes in one call.
    let (yh, yf) = (fx.transform(&ct, &hoisted), fx.transform(&ct, &fewest));
    let both = fx
        .eval
        .linear_transforms(&ct, &[&fewest, &hoisted])
        .unwrap();
    assert_eq!(fx.words(&both[0]), fx.words(&yf));
    assert_eq!(fx.words(&both[1]), fx.words(&yh));

    // Two chained transforms with other baby steps ({0, 3} and {0, 1}): each runs its own
    // chain, so the keys each lists suffice (a shared chain {0, 1, 3} would need a gap of 2).
    let chained = |ks: [i64; 2]| {
        LinearTransform::from_diagonals(slots, ks.map(|k| (k, vec![0.5; slots])))
            .unwrap()
            .with_rotation_keys(RotationKeys::Fewest)
            .with_baby_steps(4)
            .unwrap()
    };
    let (a, b) = (chained([0, 3]), chained([0, 1]));
    assert_eq!((a.rotations(), b.rotations()), (vec![3], vec![1]));
    let fx = fixture(Device::Cpu, &[1, 3]);
    let ct = fx.encrypt_real(slots, &v);
    let (ya, yb) = (fx.transform(&ct, &a), fx.transform(&ct, &b));
    let both = fx.eval.linear_transforms(&ct, &[&a, &b]).unwrap();
    assert_eq!(fx.words(&both[0]), fx.words(&ya));
    assert_eq!(fx.words(&both[1]), fx.words(&yb));
}

/// 64 diagonals at random positions: still correct; a random set has little structure for the
/// baby/giant split to use, and one hoisted rotation per diagonal (every step a baby step, one
/// ModUp and one ModDown in all) is then the cheapest plan.
#[test]
fn scattered_64_diagonals() {
    let slots = 4096;
    let mut rng = StdRng::seed_from_u64(12);
    let mut idx = std::collections::BTreeSet::new();
    while idx.len() < 64 {
        idx.insert(rng.random_range(0..slots as i64));
    }
    let diags: Vec<(i64, Vec<f64>)> = idx
        .into_iter()
        .map(|k| (k, (0..slots).map(|_| rng.random_range(-1.0..1.0)).collect()))
        .collect();
    let lt = LinearTransform::from_diagonals(slots, diags).unwrap();
    assert!(lt.keyswitches() <= 64, "{lt:?}");
    let fx = fixture(Device::Cpu, &lt.rotations());
    let v = random_vec(slots, 2);
    let out = fx.transform(&fx.encrypt_real(slots, &v), &lt);
    let want: Vec<f64> = lt.apply(&real(&v)).unwrap().iter().map(|z| z.re).collect();
    let bits = precision_bits(&fx.decrypt_real(&out), &want);
    assert!(bits >= MIN_BITS, "{bits:.1} bits");
    eprintln!("scattered 64 diagonals: {bits:.1} bits");
}

/// A dense 256 × 256 matrix at sparse 256 slots.
#[test]
fn dense_256_sparse_slots() {
    let slots = 256;
    let m = random_matrix(slots, slots, 21);
    let lt = LinearTransform::from_dense(slots, &m).unwrap();
    assert_eq!(lt.diagonal_count(), 256);
    assert_eq!(lt.keyswitches(), lt.baby_steps() + lt.giant_steps() - 2);
    assert!(lt.keyswitches() <= 38, "{lt:?}");
    let fx = fixture(Device::Cpu, &lt.rotations());
    let v = random_vec(slots, 3);
    let out = fx.transform(&fx.encrypt_real(slots, &v), &lt);
    let bits = precision_bits(&fx.decrypt_real(&out), &matvec(&m, &v, slots));
    assert!(bits >= MIN_BITS, "{bits:.1} bits");
    eprintln!("dense 256 at 256 slots: {bits:.1} bits");
}

/// A dense 1024 × 1024 matrix filling all 1024 slots (sparse packing), at level 1.
#[test]
fn dense_1024_full_matrix() {
    let slots = 1024;
    let m = random_matrix(slots, slots, 22);
    let lt = LinearTransform::from_dense(slots, &m).unwrap();
    assert_eq!(lt.diagonal_count(), 1024);
    let fx = fixture(Device::Cpu, &lt.rotations());
    let v = random_vec(slots, 4);
    let ct = fx
        .eval
        .drop_to_level(&fx.encrypt_real(slots, &v), 1)
        .unwrap();
    let out = fx.transform(&ct, &lt);
    assert_eq!(out.level(), 0);
    let bits = precision_bits(&fx.decrypt_real(&out), &matvec(&m, &v, slots));
    assert!(bits >= MIN_BITS, "{bits:.1} bits");
    eprintln!("dense 1024 at 1024 slots: {bits:.1} bits");
}

/// Complex entries on complex inputs.
#[test]
fn complex_matrix() {
    let slots = 64;
    let mut rng = StdRng::seed_from_u64(31);
    let m: Vec<Vec<Complex64>> = (0..slots)
        .map(|_| {
            (0..slots)
                .map(|_| Complex64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)))
                .collect()
        })
        .collect();
    let lt = LinearTransform::from_dense(slots, &m).unwrap();
    let fx = fixture(Device::Cpu, &lt.rotations());
    let v = random_complex(slots, 5);
    let out = fx.transform(&fx.encrypt(slots, &v), &lt);
    let want: Vec<Complex64> = m
        .iter()
        .map(|row| row.iter().zip(&v).map(|(a, b)| a * b).sum())
        .collect();
    let bits = precision_bits_complex(&fx.decrypt(&out), &want);
    assert!(bits >= MIN_BITS, "{bits:.1} bits");
    eprintln!("complex 64: {bits:.1} bits");
}

/// Rectangular matrices (wide and tall) embedded in 256 slots: `m + n − 1` diagonals, the
/// result in slots `0..m`, zeros elsewhere, the input beyond `n` ignored.
#[test]
fn rectangular_matrices() {
    let slots = 256;
    let fx = fixture(Device::Cpu, &(1..slots as i64).collect::<Vec<_>>());
    for (rows, cols) in [(32, 128), (128, 16)] {
        let m = random_matrix(rows, cols, (rows * cols) as u64);
        let lt = LinearTransform::from_dense(slots, &m).unwrap();
        assert_eq!(lt.diagonal_count(), rows + cols - 1);
        let v = random_vec(slots, 6); // slots beyond `cols` hold garbage: ignored
        let out = fx.transform(&fx.encrypt_real(slots, &v), &lt);
        let bits = precision_bits(&fx.decrypt_real(&out), &matvec(&m, &v, slots));
        assert!(bits >= MIN_BITS, "{rows} × {cols}: {bits:.1} bits");
        eprintln!("{rows} × {cols}: {bits:.1} bits");
    }
}

/// The hybrid method on an input replicated with period `n`: tall (`n` diagonals), square
/// below the slot count (`n` diagonals, not `2n − 1`), wide (`m` diagonals and a
/// `rotate_and_sum`, its key switchings counted too); `M·v` in slots `0..m`.
#[test]
fn rectangular_replicated_input() {
    let slots = 256;
    let fx = fixture(Device::Cpu, &(1..slots as i64).collect::<Vec<_>>());
    for (rows, cols, diagonals) in [(256, 64, 64), (64, 64, 64), (16, 128, 16)] {
        let m = random_matrix(rows, cols, (7 * rows + cols) as u64);
        let lt = LinearTransform::from_dense_replicated(slots, &m).unwrap();
        assert_eq!(lt.diagonal_count(), diagonals, "{rows} × {cols}");
        let v = random_vec(cols, 14);
        let tiled: Vec<f64> = (0..slots).map(|c| v[c % cols]).collect();
        let out = fx.transform(&fx.encrypt_real(slots, &tiled), &lt);
        let got = fx.decrypt_real(&out);
        let want = matvec(&m, &v, slots);
        let bits = precision_bits(&got[..rows], &want[..rows]);
        assert!(bits >= MIN_BITS, "{rows} × {cols}: {bits:.1} bits");
        eprintln!("{rows} × {cols}: {bits:.1} bits");
        // The f64 reference of the transform agrees on the result slots.
        let reference = lt.apply(&real(&tiled)).unwrap();
        assert!((0..rows).all(|r| (reference[r].re - want[r]).abs() < 1e-9));
    }
}

/// Block-diagonal transforms: one 16 × 16 block repeated over 4096 slots (31 diagonals), and
/// independent 8 × 8 blocks over 64 slots.
#[test]
fn block_diagonal() {
    let slots = 4096;
    let block = random_matrix(16, 16, 41);
    let lt = LinearTransform::from_block_diagonal(slots, std::slice::from_ref(&block)).unwrap();
    assert_eq!(lt.diagonal_count(), 31);
    let fx = fixture(Device::Cpu, &lt.rotations());
    let v = random_vec(slots, 7);
    let out = fx.transform(&fx.encrypt_real(slots, &v), &lt);
    let want: Vec<f64> = (0..slots)
        .map(|r| {
            let (t, i) = (r / 16, r % 16);
            (0..16).map(|c| block[i][c] * v[t * 16 + c]).sum()
        })
        .collect();
    let bits = precision_bits(&fx.decrypt_real(&out), &want);
    assert!(bits >= MIN_BITS, "repeated block: {bits:.1} bits");
    eprintln!("repeated block: {bits:.1} bits");

    let slots = 64;
    let blocks: Vec<Vec<Vec<f64>>> = (0..8).map(|t| random_matrix(8, 8, 50 + t)).collect();
    let lt = LinearTransform::from_block_diagonal(slots, &blocks).unwrap();
    let fx = fixture(Device::Cpu, &lt.rotations());
    let v = random_vec(slots, 8);
    let out = fx.transform(&fx.encrypt_real(slots, &v), &lt);
    let want: Vec<f64> = (0..slots)
        .map(|r| {
            let (t, i) = (r / 8, r % 8);
            (0..8).map(|c| blocks[t][i][c] * v[t * 8 + c]).sum()
        })
        .collect();
    let bits = precision_bits(&fx.decrypt_real(&out), &want);
    assert!(bits >= MIN_BITS, "independent blocks: {bits:.1} bits");
    eprintln!("independent blocks: {bits:.1} bits");
}

/// A negative diagonal index is `slots − |k|`; the dense and diagonal constructors agree.
#[test]
fn constructors_agree() {
    let slots = 8;
    let m = random_matrix(slots, slots, 61);
    let dense = LinearTransform::from_dense(slots, &m).unwrap();
    let diags: Vec<(i64, Vec<f64>)> = (0..slots as i64)
        .map(|k| {
            let k = if k >= 4 { k - slots as i64 } else { k };
            let d = (0..slots)
                .map(|i| m[i][(i as i64 + k).rem_euclid(slots as i64) as usize])
                .collect();
            (k, d)
        })
        .collect();
    let by_diag = LinearTransform::from_diagonals(slots, diags).unwrap();
    assert_eq!(dense.diagonal_indices(), by_diag.diagonal_indices());
    let v = random_complex(slots, 9);
    let (a, b) = (dense.apply(&v).unwrap(), by_diag.apply(&v).unwrap());
    assert!(a.iter().zip(&b).all(|(x, y)| (x - y).norm() < 1e-12));
    let want: Vec<Complex64> = m
        .iter()
        .map(|row| row.iter().zip(&v).map(|(a, b)| b * a).sum())
        .collect();
    assert!(a.iter().zip(&want).all(|(x, y)| (x - y).norm() < 1e-12));
}

#[test]
fn slot_utilities() {
    let slots = 256;
    let mut steps = Evaluator::sum_slots_rotations(slots);
    steps.extend(Evaluator::rotate_and_sum_rotations(slots, 3, 5));
    steps.extend(Evaluator::rotate_and_sum_rotations(slots, -16, 16));
    let fx = fixture(Device::Cpu, &steps);
    let v = random_vec(slots, 10);
    let w = random_vec(slots, 11);
    let ct = fx.encrypt_real(slots, &v);

    let before = fx.ctx.keyswitches();
    let s = fx.eval.sum_slots(&ct).unwrap();
    assert_eq!(fx.ctx.keyswitches() - before, 8);
    assert_eq!((s.level(), s.scale()), (ct.level(), ct.scale()));
    let total: f64 = v.iter().sum();
    let bits = precision_bits(&fx.decrypt_real(&s), &vec![total; slots]);
    assert!(bits >= MIN_BITS, "sum_slots: {bits:.1} bits");
    eprintln!("sum_slots: {bits:.1} bits");

    for (stride, count) in [(3i64, 5usize), (-16, 16)] {
        let r = fx.eval.rotate_and_sum(&ct, stride, count).unwrap();
        let want: Vec<f64> = (0..slots as i64)
            .map(|t| {
                (0..count as i64)
                    .map(|i| v[(t + i * stride).rem_euclid(slots as i64) as usize])
                    .sum()
            })
            .collect();
        let bits = precision_bits(&fx.decrypt_real(&r), &want);
        assert!(
            bits >= MIN_BITS,
            "rotate_and_sum({stride}, {count}): {bits:.1} bits"
        );
    }

    let rep = fx.eval.replicate(&ct, 37).unwrap();
    assert_eq!((rep.level(), rep.scale()), (ct.level() - 1, ct.scale()));
    let bits = precision_bits(&fx.decrypt_real(&rep), &vec![v[37]; slots]);
    assert!(bits >= MIN_BITS, "replicate: {bits:.1} bits");
    eprintln!("replicate: {bits:.1} bits");

    let cw = fx.encrypt_real(slots, &w);
    let ip = fx.eval.inner_product(&ct, &cw).unwrap();
    assert_eq!(ip.level(), ct.level() - 1);
    let dot: f64 = v.iter().zip(&w).map(|(a, b)| a * b).sum();
    let bits = precision_bits(&fx.decrypt_real(&ip), &vec![dot; slots]);
    assert!(bits >= MIN_BITS, "inner_product: {bits:.1} bits");
    eprintln!("inner_product: {bits:.1} bits");
}

#[test]
fn transforms_are_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<LinearTransform>();
}

/// Threads sharing one fresh transform: the same words from each, one cached encoding.
#[test]
fn shared_between_threads() {
    let slots = 64;
    let lt = LinearTransform::from_dense(slots, &random_matrix(slots, slots, 91)).unwrap();
    let fx = fixture(Device::Cpu, &lt.rotations());
    let ct = fx.encrypt_real(slots, &random_vec(slots, 15));
    let outs: Vec<Vec<Vec<u64>>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| s.spawn(|| fx.words(&fx.eval.linear_transform(&ct, &lt).unwrap())))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(outs.windows(2).all(|w| w[0] == w[1]));
    assert!((1..=4).contains(&lt.encodings()));
    assert_eq!(lt.cached_levels(), vec![ct.level()]);
}

#[test]
fn typed_errors() {
    let slots = 64;
    let m = random_matrix(slots, slots, 71);
    let lt = LinearTransform::from_dense(slots, &m).unwrap();
    let fx = fixture(Device::Cpu, &lt.rotations());
    let v = random_vec(slots, 12);
    let ct = fx.encrypt_real(slots, &v);

    // Wrong slot count.
    let other = fx.encrypt_real(128, &v);
    assert!(matches!(
        fx.eval.linear_transform(&other, &lt),
        Err(Error::SlotMismatch {
            expected: 64,
            found: 128
        })
    ));
    // Level 0.
    let bottom = fx.eval.drop_to_level(&ct, 0).unwrap();
    assert!(matches!(
        fx.eval.linear_transform(&bottom, &lt),
        Err(Error::LevelUnderflow { level: 0, .. })
    ));
    // A missing rotation key names the step.
    let steps = lt.rotations();
    let partial = fixture(Device::Cpu, &steps[1..]);
    match partial.eval.linear_transform(&ct, &lt) {
        Err(Error::MissingRotationKey { step, .. }) => assert_eq!(step, steps[0]),
        other => panic!("expected a missing rotation key, got {other:?}"),
    }
    let bare = Evaluator::new(&fx.ctx);
    assert!(matches!(
        bare.sum_slots(&ct),
        Err(Error::MissingRotationKey { .. })
    ));
    assert!(matches!(
        bare.replicate(&ct, 1),
        Err(Error::MissingRotationKey { .. })
    ));
    assert!(matches!(
        fx.eval.replicate(&ct, slots),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        fx.eval.rotate_and_sum(&ct, 1, 0),
        Err(Error::InvalidInput(_))
    ));
    // A ciphertext of other parameters.
    let params2 = CkksParametersLiteral::n13_logqp200_levels2()
        .build()
        .unwrap();
    let ctx2 = CkksContext::new(&params2, Device::Cpu).unwrap();
    let mut kg2 = KeyGenerator::from_seed(&ctx2, [1; 32]);
    let sk2 = kg2.secret_key().unwrap();
    let pk2 = kg2.public_key(&sk2).unwrap();
    let ct2 = Encryptor::new(&ctx2, &pk2)
        .unwrap()
        .encrypt(
            &Encoder::with_slots(&ctx2, slots)
                .unwrap()
                .encode(&v)
                .unwrap(),
        )
        .unwrap();
    assert!(matches!(
        fx.eval.linear_transform(&ct2, &lt),
        Err(Error::ParametersMismatch { .. })
    ));
    // A 3-component ciphertext.
    let t = fx.eval.mul_no_relin(&ct, &ct).unwrap();
    assert!(matches!(
        fx.eval.linear_transform(&t, &lt),
        Err(Error::CiphertextDegree { .. })
    ));

    // Constructors.
    let bad = |r: rhea::Result<LinearTransform>| matches!(r, Err(Error::InvalidInput(_)));
    assert!(bad(LinearTransform::from_dense_replicated(
        64,
        &random_matrix(8, 12, 1)
    )));
    assert!(bad(LinearTransform::from_dense_replicated(
        64,
        &random_matrix(3, 8, 1)
    )));
    assert!(bad(LinearTransform::from_dense_replicated(
        8,
        &random_matrix(16, 8, 1)
    )));
    assert!(bad(
        LinearTransform::from_dense(64, &m).and_then(|lt| lt.with_baby_steps(0))
    ));
    assert!(bad(LinearTransform::from_dense::<f64, Vec<f64>>(64, &[])));
    assert!(bad(LinearTransform::from_dense(48, &m)));
    assert!(bad(LinearTransform::from_dense(32, &m)));
    assert!(bad(LinearTransform::from_dense(
        64,
        &[vec![1.0; 3], vec![1.0; 2]]
    )));
    assert!(bad(LinearTransform::from_dense(64, &vec![vec![0.0; 4]; 4])));
    assert!(bad(LinearTransform::from_dense(
        64,
        &vec![vec![f64::NAN; 4]; 4]
    )));
    assert!(bad(LinearTransform::from_diagonals(
        8,
        [(1, vec![1.0; 8]), (-7, vec![1.0; 8])]
    )));
    assert!(bad(LinearTransform::from_diagonals(8, [(8, vec![1.0; 8])])));
    assert!(bad(LinearTransform::from_diagonals(8, [(0, vec![1.0; 7])])));
    assert!(bad(LinearTransform::from_block_diagonal(
        64,
        &[random_matrix(3, 3, 1)]
    )));
    assert!(bad(LinearTransform::from_block_diagonal(
        64,
        &[random_matrix(8, 8, 1), random_matrix(8, 8, 2)]
    )));
}

/// Compactly stored diagonals (one limb each, expanded at every evaluation) give the words of
/// whole ones, at a fraction of the memory; a diagonal whose coefficients pass `q_0 / 2` stays
/// whole, and the results still agree.
#[test]
fn compact_diagonals_give_the_full_words() {
    compact_matches_full(Device::Cpu);
}

fn compact_matches_full(device: Device) {
    let slots = 4096;
    let band = || random_band(slots, 91);
    let full = band();
    let compact = band().with_diagonal_storage(DiagonalStorage::Compact);
    assert_eq!(full.diagonal_storage(), DiagonalStorage::Full);
    // One diagonal ~2^30: its coefficients at the scale q_ℓ (~2^40) exceed q_0 / 2.
    let mixed = || {
        let mut rng = StdRng::seed_from_u64(92);
        let diags: Vec<(i64, Vec<f64>)> = (-4..4)
            .map(|k| {
                let big = if k == 1 { 1e9 } else { 1.0 };
                (
                    k,
                    (0..slots)
                        .map(|_| big * rng.random_range(-1.0..1.0))
                        .collect(),
                )
            })
            .collect();
        LinearTransform::from_diagonals(slots, diags).unwrap()
    };
    let (mixed_full, mixed_compact) = (
        mixed(),
        mixed().with_diagonal_storage(DiagonalStorage::Compact),
    );
    let mut steps = full.rotations();
    steps.extend(mixed_full.rotations());
    let fx = fixture(device, &steps);
    let v = random_vec(slots, 93);
    let ct = fx.encrypt_real(slots, &v);
    for (what, a, b) in [
        ("band", &full, &compact),
        ("mixed", &mixed_full, &mixed_compact),
    ] {
        let (ya, yb) = (fx.transform(&ct, a), fx.transform(&ct, b));
        assert_eq!(fx.words(&ya), fx.words(&yb), "{what}: compact against full");
        let again = fx.transform(&ct, b);
        assert_eq!(fx.words(&again), fx.words(&ya), "{what}: compact, cached");
        assert_eq!(b.encodings(), 1, "{what}: encoded once");
    }
    // Level 10 extended by P: every whole diagonal holds `limbs` limbs, a compact one one.
    let limbs = (full.cached_bytes() / (full.diagonal_count() as u64 * 8 * 8192)) as usize;
    assert!(limbs > 2, "{limbs} limbs a diagonal");
    assert_eq!(
        compact.cached_bytes() * limbs as u64,
        full.cached_bytes(),
        "one limb a diagonal"
    );
    let d = mixed_full.diagonal_count() as u64;
    assert_eq!(
        mixed_compact.cached_bytes(),
        (d - 1 + limbs as u64) * 8 * 8192,
        "the large diagonal stays whole"
    );
    let bits = precision_bits(
        &fx.decrypt_real(&fx.transform(&ct, &compact)),
        &full_apply(&full, &v),
    );
    assert!(bits >= MIN_BITS, "{bits:.1} bits");
}

/// Diagonals kept over `Q_ℓ` only (each baby step brought down before the products): the same
/// precision as whole ones over `Q_ℓ ∪ P`, `(ℓ + 1)/(ℓ + 1 + |P|)` of their memory, the same key
/// switchings, hoisted or chained, and alone or beside other transforms in one call the same
/// words.
#[test]
fn q_only_diagonals() {
    q_only_matches_f64(Device::Cpu);
}

fn q_only_matches_f64(device: Device) -> Vec<Vec<Vec<u64>>> {
    let slots = 4096;
    let full = random_band(slots, 94);
    let q_only = random_band(slots, 94).with_diagonal_storage(DiagonalStorage::QOnly);
    let chained = random_band(slots, 95)
        .with_rotation_keys(RotationKeys::Fewest)
        .with_diagonal_storage(DiagonalStorage::QOnly);
    let mut steps = full.rotations();
    steps.extend(chained.rotations());
    let fx = fixture(device, &steps);
    let v = random_vec(slots, 96);
    let ct = fx.encrypt_real(slots, &v);
    let (yf, yq, yc) = (
        fx.transform(&ct, &full),
        fx.transform(&ct, &q_only),
        fx.transform(&ct, &chained),
    );
    for (what, y, lt) in [
        ("full", &yf, &full),
        ("q-only", &yq, &q_only),
        ("chained", &yc, &chained),
    ] {
        let bits = precision_bits(&fx.decrypt_real(y), &full_apply(lt, &v));
        assert!(bits >= MIN_BITS, "{what}: {bits:.1} bits");
    }
    assert_ne!(
        fx.words(&yf),
        fx.words(&yq),
        "one rounding per baby step, not one in all"
    );
    // Level 10: 11 Q limbs a diagonal instead of 11 + |P|.
    let q = (fx.ctx.params().max_level() + 1) as u64;
    let p = fx.ctx.params().p_primes().len() as u64;
    assert_eq!(q_only.cached_bytes() * (q + p), full.cached_bytes() * q);
    // In one call beside a transform over Q ∪ P: each its own words.
    let both = fx
        .eval
        .linear_transforms(&ct, &[&full, &q_only, &chained])
        .unwrap();
    for (got, want) in both.iter().zip([&yf, &yq, &yc]) {
        assert_eq!(fx.words(got), fx.words(want), "linear_transforms");
    }
    vec![fx.words(&yq), fx.words(&yc)]
}

/// `lt` applied to the real vector `v` in `f64` (real parts).
fn full_apply(lt: &LinearTransform, v: &[f64]) -> Vec<f64> {
    lt.apply(&real(v)).unwrap().iter().map(|z| z.re).collect()
}

/// The transform and the slot utilities on the GPU give the CPU's words (same keys, same
/// encryption seed).
fn gpu_matches_cpu(device: Device) {
    let slots = 256;
    let m = random_matrix(slots, slots, 81);
    let lt = LinearTransform::from_dense(slots, &m).unwrap();
    let wide = LinearTransform::from_dense_replicated(slots, &random_matrix(16, 128, 82)).unwrap();
    let fewest = LinearTransform::from_dense(slots, &random_matrix(slots, slots, 83))
        .unwrap()
        .with_rotation_keys(RotationKeys::Fewest);
    let mut steps = lt.rotations();
    steps.extend(wide.rotations());
    steps.extend(fewest.rotations());
    steps.extend(Evaluator::sum_slots_rotations(slots));
    let cpu = fixture(Device::Cpu, &steps);
    let gpu = fixture(device, &steps);
    let v = random_vec(slots, 13);
    let (a, b) = (cpu.encrypt_real(slots, &v), gpu.encrypt_real(slots, &v));
    let words = |ct: &Ciphertext| cpu.words(ct);
    assert_eq!(words(&a), words(&b), "the encryptions");
    let (ya, yb) = (cpu.transform(&a, &lt), gpu.transform(&b, &lt));
    assert_eq!(words(&ya), words(&yb), "linear_transform");
    assert_eq!(lt.encodings(), 2, "one encoding per device");
    let again = gpu.transform(&b, &lt);
    assert_eq!(lt.encodings(), 2, "the GPU's diagonals stay resident");
    assert_eq!(words(&again), words(&yb), "cached diagonals");
    let (sa, sb) = (
        cpu.eval.sum_slots(&ya).unwrap(),
        gpu.eval.sum_slots(&yb).unwrap(),
    );
    assert_eq!(words(&sa), words(&sb), "sum_slots");
    let (wa, wb) = (cpu.transform(&a, &wide), gpu.transform(&b, &wide));
    assert_eq!(words(&wa), words(&wb), "a wide replicated transform");
    let (fa, fb) = (cpu.transform(&a, &fewest), gpu.transform(&b, &fewest));
    assert_eq!(words(&fa), words(&fb), "chained baby steps (fewest keys)");
    let bits = precision_bits(&gpu.decrypt_real(&yb), &matvec(&m, &v, slots));
    assert!(bits >= MIN_BITS, "{bits:.1} bits");
    eprintln!("gpu dense 256: {bits:.1} bits");
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn gpu_matches_cpu_on_the_gpu() {
    let device = Device::Cuda(0);
    if let Err(e) = device.check_supported() {
        panic!("this test needs a CUDA GPU: {e}");
    }
    let before = device.fused_fallbacks();
    gpu_matches_cpu(device);
    compact_matches_full(device);
    assert_eq!(
        q_only_matches_f64(device),
        q_only_matches_f64(Device::Cpu),
        "q-only diagonals, hoisted and chained: the GPU's words are the CPU's"
    );
    assert_eq!(device.fused_fallbacks(), before, "a fused path fell back");
}
