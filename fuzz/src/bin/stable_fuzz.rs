//! A stable-Rust fuzz loop for machines without nightly (where `cargo fuzz` cannot run): mutates
//! the seed corpus with a seeded PRNG for a given time, runs every input through
//! `rhea_fuzz::run` under `catch_unwind`, keeps inputs that reach a new outcome (reader and
//! error message without its numbers: a crude coverage signal), and reports the number of inputs,
//! the outcome histogram and any panic (saved under `artifacts/stable/`).
//!
//! ```text
//! cargo run --release --bin stable_fuzz -- [seconds = 600] [seed = 1]
//! ```

use std::collections::{BTreeMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const INTERESTING: [u64; 12] = [
    0,
    1,
    2,
    3,
    4,
    0x7f,
    0x80,
    0xff,
    0x7fff,
    0xffff,
    0xffff_ffff,
    u64::MAX,
];

fn mutate(rng: &mut Rng, input: &mut Vec<u8>, pool: &[Vec<u8>]) {
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        let len = input.len();
        match rng.below(13) {
            0 if len > 1 => {
                let i = 1 + rng.below(len - 1);
                input[i] ^= 1 << rng.below(8);
            }
            1 if len > 1 => {
                let i = 1 + rng.below(len - 1);
                input[i] = rng.next() as u8;
            }
            2 | 3 if len > 9 => {
                let width = [1usize, 2, 4, 8][rng.below(4)];
                let i = 1 + rng.below(len - width);
                let v = if rng.below(3) == 0 {
                    let mut b = [0u8; 8];
                    b[..width].copy_from_slice(&input[i..i + width]);
                    let old = u64::from_le_bytes(b);
                    if rng.below(2) == 0 {
                        old.wrapping_add(1 + rng.below(8) as u64)
                    } else {
                        old.wrapping_sub(1 + rng.below(8) as u64)
                    }
                } else {
                    INTERESTING[rng.below(INTERESTING.len())]
                };
                input[i..i + width].copy_from_slice(&v.to_le_bytes()[..width]);
            }
            4 if len > 1 => input.truncate(1 + rng.below(len)),
            5 => {
                for _ in 0..1 + rng.below(64) {
                    input.push(rng.next() as u8);
                }
            }
            6 if len > 2 => {
                let a = 1 + rng.below(len - 1);
                let b = (a + 1 + rng.below(64)).min(len);
                input.drain(a..b);
            }
            7 if len > 2 => {
                let a = 1 + rng.below(len - 1);
                let b = (a + 1 + rng.below(64)).min(len);
                let copy = input[a..b].to_vec();
                let at = 1 + rng.below(len - 1);
                input.splice(at..at, copy);
            }
            8 if len > 1 => {
                let other = &pool[rng.below(pool.len())];
                if other.len() > 1 {
                    let at = 1 + rng.below(len - 1);
                    let from = 1 + rng.below(other.len() - 1);
                    input.truncate(at);
                    input.extend_from_slice(&other[from..]);
                }
            }
            9 if len > 57 => {
                // Header fields: version, kind, flags, a digest byte, the payload length.
                let (at, width) =
                    [(9, 2), (11, 2), (13, 4), (17 + rng.below(32), 1), (49, 8)][rng.below(5)];
                let v = INTERESTING[rng.below(INTERESTING.len())];
                input[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
            }
            10 if len > 57 + 16 => {
                // The first payload fields (level, counts, slots, scale, flags, primes).
                let width = [1usize, 2, 4, 8][rng.below(4)];
                let at = 57 + rng.below(64.min(len - 57 - width));
                let v = INTERESTING[rng.below(INTERESTING.len())];
                input[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
            }
            11 if len > 0 => {
                // Another reader or reader flags.
                input[0] = (input[0] & 0x80) | (rng.next() as u8 & 0x7f);
            }
            _ => {}
        }
    }
    if input.is_empty() {
        input.push(0);
    }
    // Half of the inputs get their checksum recomputed (bit 7 of the selector).
    if rng.below(2) == 0 {
        input[0] |= 0x80;
    } else {
        input[0] &= 0x7f;
    }
}

/// The outcome key: reader, outcome and, for field errors, the message without its numbers.
fn key(input: &[u8], r: &Result<(), rhea::serial::SerialError>) -> String {
    use rhea::serial::SerialError as E;
    let reader = input.first().map_or(0, |s| s & 0x4f);
    let detail = match r {
        Err(e @ (E::Malformed(_) | E::Truncated { .. } | E::Rhea(_) | E::Unsupported(_))) => e
            .to_string()
            .split_whitespace()
            .filter(|w| !w.chars().any(|c| c.is_ascii_digit()))
            .take(12)
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    };
    format!("{reader}:{}:{detail}", rhea_fuzz::label(r))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let secs: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(600);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut rng = Rng(seed.max(1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);

    // Silence the default panic message for caught panics; they are reported below.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        eprintln!("PANIC: {info}");
        let _ = &default_hook;
    }));

    let mut pool = rhea_fuzz::seed_corpus();
    let seeds = pool.len();
    // The seeds themselves must all be accepted.
    for s in &pool {
        let r = rhea_fuzz::run(s);
        assert!(r.is_ok(), "seed input rejected: {r:?}");
    }
    let mut seen: HashSet<String> = HashSet::new();
    let mut histogram: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut panics = 0u64;
    let start = Instant::now();
    let deadline = start + Duration::from_secs(secs);
    let mut last_report = start;
    let mut inputs = 0u64;
    while Instant::now() < deadline {
        for _ in 0..64 {
            let base = &pool[rng.below(pool.len())];
            let mut input = base.clone();
            mutate(&mut rng, &mut input, &pool);
            let r = catch_unwind(AssertUnwindSafe(|| rhea_fuzz::run(&input)));
            inputs += 1;
            match r {
                Ok(r) => {
                    *histogram.entry(rhea_fuzz::label(&r)).or_default() += 1;
                    if seen.insert(key(&input, &r)) {
                        if pool.len() < 4096 {
                            pool.push(input);
                        } else {
                            let i = seeds + rng.below(pool.len() - seeds);
                            pool[i] = input;
                        }
                    }
                }
                Err(_) => {
                    panics += 1;
                    let dir = "artifacts/stable";
                    let _ = std::fs::create_dir_all(dir);
                    let _ = std::fs::write(format!("{dir}/crash-{panics}"), &input);
                }
            }
        }
        if last_report.elapsed() >= Duration::from_secs(30) {
            last_report = Instant::now();
            println!(
                "{:>6.0} s: {inputs} inputs ({:.0}/s), pool {}, outcomes {}, panics {panics}",
                start.elapsed().as_secs_f64(),
                inputs as f64 / start.elapsed().as_secs_f64(),
                pool.len(),
                seen.len()
            );
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    println!(
        "done: {inputs} inputs in {elapsed:.0} s ({:.0}/s) from {seeds} seeds; pool {}, \
         distinct outcomes {}; panics {panics}",
        inputs as f64 / elapsed,
        pool.len(),
        seen.len()
    );
    for (k, v) in &histogram {
        println!("  {k:<20} {v}");
    }
    if panics > 0 {
        std::process::exit(1);
    }
}
