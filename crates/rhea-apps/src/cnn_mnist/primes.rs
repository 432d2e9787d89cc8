//! The plaintext modulus of the seed layout: a prime `t ≡ 1 (mod 2N)` of a given size (BGV
//! batching), tested by `rhea-math`'s deterministic Miller-Rabin.

pub(super) use rhea::unstable::math::prime::is_prime;

/// The largest prime `t < 2^bits` with `t ≡ 1 (mod 2N)` (`N = 2^log_n`): a `bits`-bit
/// batching plaintext modulus.
pub fn batching_prime_below(bits: u32, log_n: u32) -> Option<u64> {
    let step = 2u64 << log_n;
    let hi = 1u64.checked_shl(bits)?;
    let lo = hi >> 1;
    let mut c = (hi - 1) / step * step + 1;
    while c > lo {
        if is_prime(c) {
            return Some(c);
        }
        c -= step;
    }
    None
}
