//! Shared helpers of the protected-mode GPU tests (`gpu_protected`, `gpu_protected_bgv`).
#![allow(dead_code)]

use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard};

use rhea::backend::Poly;
use rhea::unstable::cuda::GpuDevice;
use rhea::unstable::RnsRing;
use rhea::Device;

pub const GPU: Device = Device::Cuda(0);

/// One test at a time on the GPU: the raw-memory tests read the whole pool.
static GPU_LOCK: Mutex<()> = Mutex::new(());

#[track_caller]
pub fn require_gpu(test: &str) -> MutexGuard<'static, ()> {
    if let Err(e) = GPU.check_supported() {
        panic!(
            "{test}: needs a CUDA GPU, and none is usable ({e}); GPU tests are #[ignore]d: run \
             them on a GPU machine (scripts/gpu-run.sh), or leave out --include-ignored"
        );
    }
    GPU_LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the raw-memory search found.
#[derive(Debug, Default)]
pub struct Found {
    /// 16-byte blocks of `s` (NTT form, over `Q ∪ P`) found, of the distinct ones searched.
    pub secret_ntt: usize,
    /// 32-word runs of `s` in coefficient form found.
    pub secret_coeff_runs: usize,
    /// Blocks of the encoded plaintext found.
    pub plaintext: usize,
    /// Blocks of the decrypted plaintext found.
    pub decrypted: usize,
    /// Blocks of a public-key encryption's `v`, `e_0`, `e_1` (NTT form over `Q_ℓ ∪ P`) found.
    pub ephemeral: usize,
    /// Bytes of device memory searched.
    pub bytes: usize,
}

/// The 16-byte blocks of `p` (host copy: aligned pairs of words of one limb) worth searching
/// for: both words at least 2^32 from 0 and from the limb's modulus (small integers and their
/// negatives are everywhere). Pairs, not words: with ~40-bit primes a single word of a searched
/// set of 10^5 turns up by chance in ~10^7 words of ciphertext (one such match was measured),
/// a pair does not (~2^-80 a block).
pub fn distinctive_in(ring: &RnsRing, p: &Poly) -> HashSet<[u64; 2]> {
    let shape = p.shape();
    let w = ring.download(p).unwrap();
    w.chunks(shape.n)
        .enumerate()
        .flat_map(|(i, limb)| {
            let q = ring.modulus(&shape, i).value();
            let ok = move |x: u64| x >= 1 << 32 && x <= q - (1 << 32);
            limb.chunks_exact(2)
                .filter(move |b| ok(b[0]) && ok(b[1]))
                .map(|b| [b[0], b[1]])
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Every word the pool of GPU 0 holds (live and cached buffers) searched for the 16-byte blocks
/// of `blocks` — the secret key (NTT form), the plaintexts, the decryption's values and a
/// public-key encryption's ephemeral secrets, in [`Found`]'s order — and for the secret key's
/// 32-word coefficient runs `runs`; the counts printed under `label`.
pub fn search_device_memory(
    label: &str,
    blocks: [&HashSet<[u64; 2]>; 4],
    runs: &HashSet<&[u64]>,
) -> Found {
    let dump = GpuDevice::new(0).unwrap().raw_memory_dump().unwrap();
    let mut found = Found::default();
    let mut sets: [HashSet<[u64; 2]>; 4] = Default::default();
    for region in &dump {
        found.bytes += 8 * region.words.len();
        for b in region.words.chunks_exact(2) {
            let w = [b[0], b[1]];
            for (set, hits) in blocks.iter().zip(sets.iter_mut()) {
                if set.contains(&w) {
                    hits.insert(w);
                }
            }
        }
        found.secret_coeff_runs += region
            .words
            .chunks_exact(32)
            .filter(|c| runs.contains(c))
            .count();
    }
    [
        found.secret_ntt,
        found.plaintext,
        found.decrypted,
        found.ephemeral,
    ] = sets.map(|s| s.len());
    let [secret, plain, dec, ephemeral] = blocks.map(|b| b.len());
    println!(
        "{label}: {found:?} (searched {secret} distinct secret blocks, {plain} plaintext, {dec} \
         decryption, {ephemeral} ephemeral, {} runs; {} regions)",
        runs.len(),
        dump.len()
    );
    found
}
