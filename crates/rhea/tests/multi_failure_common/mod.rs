//! Shared setup of the multi-GPU failure tests (`gpu_multi_failure`, `gpu_multi_dying`,
//! `gpu_multi_stuck`): the two GPUs (or the reason to skip), an insecure N = 2^14 parameter set
//! with 6 `Q` and 2 `P` primes, seeded keys and a ciphertext of a seeded message, and the
//! words the CPU's `Evaluator::mul_relin` gives for it.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use rhea::ckks::{Ciphertext, CkksContext, Encoder, Encryptor, Evaluator, KeyGenerator};
use rhea::params::{CkksParameters, CkksParametersLiteral};
use rhea::rlwe::RelinearizationKey;
use rhea::unstable::multi::{GpuGroup, PartitionedCiphertext, PartitionedKey};
use rhea::unstable::HasRing;
use rhea::{Device, Error};

/// The first two GPUs, or `None` (said) on a machine with fewer, unless `RHEA_REQUIRE_GPU=1`
/// (then it panics).
pub fn two_gpus() -> Option<[Device; 2]> {
    let all = Device::all_gpus();
    if all.len() < 2 {
        assert_ne!(
            std::env::var("RHEA_REQUIRE_GPU").as_deref(),
            Ok("1"),
            "needs two GPUs, the machine has {} (RHEA_REQUIRE_GPU=1)",
            all.len()
        );
        eprintln!("skipped: needs two GPUs, the machine has {}", all.len());
        return None;
    }
    Some([all[0], all[1]])
}

/// What a failure test starts from (on the CPU).
pub struct Failing {
    pub params: CkksParameters,
    pub cpu: CkksContext,
    pub rlk: RelinearizationKey,
    /// A ciphertext of a seeded message at the top level.
    pub a: Ciphertext,
    /// The CPU's `mul_relin(a, a)` words.
    pub want: Vec<Vec<u64>>,
}

/// The words of `ct`, read on the CPU context `cpu`.
pub fn words(cpu: &CkksContext, ct: &Ciphertext) -> Vec<Vec<u64>> {
    let back = ct.to_device(cpu).unwrap();
    back.parts()
        .iter()
        .map(|p| cpu.ring().download(p).unwrap())
        .collect()
}

/// Keys from `[seed; 32]`, the encryption from `[seed + 1; 32]`, the message
/// `(i · stride mod modulus) / modulus − 1/2`.
pub fn failing(seed: u8, stride: usize, modulus: usize) -> Failing {
    let params = CkksParametersLiteral {
        log_n: 14,
        log_q: vec![60, 40, 40, 40, 40, 40],
        log_p: vec![61, 61],
        q: Vec::new(),
        p: Vec::new(),
        log_default_scale: 40,
        dnum: 3,
        ..CkksParametersLiteral::n13_logqp200_levels2()
    }
    .insecure_allow_below_128_bits()
    .build()
    .unwrap();
    let cpu = CkksContext::new(&params, Device::Cpu).unwrap();
    let mut keygen = KeyGenerator::from_seed(&cpu, [seed; 32]);
    let sk = keygen.secret_key().unwrap();
    let rlk = keygen.relinearization_key(&sk).unwrap();
    let encoder = Encoder::new(&cpu).unwrap();
    let enc = Encryptor::with_secret_key(&cpu, &sk)
        .unwrap()
        .with_seed([seed + 1; 32]);
    let x: Vec<f64> = (0..encoder.slots())
        .map(|i| ((i * stride % modulus) as f64) / modulus as f64 - 0.5)
        .collect();
    let a = enc.encrypt(&encoder.encode(&x).unwrap()).unwrap();
    let eval = Evaluator::new(&cpu)
        .with_relinearization_key(rlk.clone())
        .unwrap();
    let want = words(&cpu, &eval.mul_relin(&a, &a).unwrap());
    assert!(want[0].iter().any(|&w| w != 0), "a tautology: zero words");
    Failing {
        params,
        cpu,
        rlk,
        a,
        want,
    }
}

/// A failed group answers at once, every call, with its failure, which `failed` (the failed
/// operation's result) returned: `mul_relin`, `rescale`, `synchronize` and `scatter` of `a`
/// (`ga` its split), all within half a second.
pub fn assert_refuses_at_once(
    group: &GpuGroup,
    failed: Result<PartitionedCiphertext, Error>,
    a: &Ciphertext,
    ga: &PartitionedCiphertext,
    key: &PartitionedKey,
) {
    let failure = group.failure().expect("the group is failed");
    assert_eq!(Err(failure.clone()), failed.map(|_| ()));
    let start = Instant::now();
    assert_eq!(
        group.mul_relin(ga, ga, key).map(|_| ()),
        Err(failure.clone())
    );
    assert_eq!(group.rescale(ga).map(|_| ()), Err(failure.clone()));
    assert_eq!(group.synchronize(), Err(failure.clone()));
    assert_eq!(group.scatter(a).map(|_| ()), Err(failure.clone()));
    assert!(
        start.elapsed() < Duration::from_millis(500),
        "a failed group's calls took {:?}",
        start.elapsed()
    );
}
