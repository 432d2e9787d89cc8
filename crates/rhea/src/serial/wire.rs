//! The byte level of the format: the header, the checksummed sink and source, scalar fields and
//! the (optionally bit-packed) polynomial words. See `docs/format.md`.

use std::io::{self, Read, Write};

use sha2::{Digest, Sha256};

use super::{ObjectKind, Result, SerialError};

/// The eight magic bytes every object starts with.
pub(crate) const MAGIC: [u8; 8] = *b"RHEAFHE\0";
/// The size of the fixed header.
pub(crate) const HEADER_LEN: u64 = 56;
/// The size of the SHA-256 trailer.
pub(crate) const TRAILER_LEN: u64 = 32;
/// Header flag: the uniform halves are given by their seeds.
pub(crate) const FLAG_SEEDED: u32 = 1;
/// Header flag: every limb's words are packed to the bit width of its prime.
pub(crate) const FLAG_PACKED: u32 = 2;

/// The fixed 56-byte header.
#[derive(Clone, Copy, Debug)]
pub struct Header {
    pub(crate) version: u16,
    pub(crate) kind: u16,
    pub(crate) flags: u32,
    pub(crate) digest: [u8; 32],
    pub(crate) payload_len: u64,
}

impl Header {
    pub(crate) fn to_bytes(self) -> [u8; HEADER_LEN as usize] {
        let mut b = [0u8; HEADER_LEN as usize];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..10].copy_from_slice(&self.version.to_le_bytes());
        b[10..12].copy_from_slice(&self.kind.to_le_bytes());
        b[12..16].copy_from_slice(&self.flags.to_le_bytes());
        b[16..48].copy_from_slice(&self.digest);
        b[48..56].copy_from_slice(&self.payload_len.to_le_bytes());
        b
    }

    /// Parses and checks the magic and the version (the rest is checked by the caller, who
    /// knows what it expects).
    pub(crate) fn parse(b: &[u8; HEADER_LEN as usize]) -> Result<Header> {
        let mut magic = [0u8; 8];
        magic.copy_from_slice(&b[0..8]);
        if magic != MAGIC {
            return Err(SerialError::BadMagic { found: magic });
        }
        let version = u16::from_le_bytes([b[8], b[9]]);
        if version != super::FORMAT_VERSION {
            return Err(SerialError::UnsupportedVersion {
                found: version,
                supported: super::FORMAT_VERSION,
            });
        }
        let mut digest = [0u8; 32];
        digest.copy_from_slice(&b[16..48]);
        let mut len = [0u8; 8];
        len.copy_from_slice(&b[48..56]);
        Ok(Header {
            version,
            kind: u16::from_le_bytes([b[10], b[11]]),
            flags: u32::from_le_bytes([b[12], b[13], b[14], b[15]]),
            digest,
            payload_len: u64::from_le_bytes(len),
        })
    }
}

/// A writer that hashes and counts everything written through it.
pub struct Sink<W: Write> {
    inner: W,
    hasher: Sha256,
    written: u64,
}

impl<W: Write> Sink<W> {
    pub(crate) fn new(inner: W) -> Self {
        Self {
            inner,
            hasher: Sha256::new(),
            written: 0,
        }
    }

    pub(crate) fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.inner.write_all(bytes)?;
        self.hasher.update(bytes);
        self.written += bytes.len() as u64;
        Ok(())
    }

    pub(crate) fn u8(&mut self, x: u8) -> Result<()> {
        self.put(&[x])
    }

    pub(crate) fn u16(&mut self, x: u16) -> Result<()> {
        self.put(&x.to_le_bytes())
    }

    pub(crate) fn u32(&mut self, x: u32) -> Result<()> {
        self.put(&x.to_le_bytes())
    }

    pub(crate) fn u64(&mut self, x: u64) -> Result<()> {
        self.put(&x.to_le_bytes())
    }

    pub(crate) fn f64(&mut self, x: f64) -> Result<()> {
        self.u64(x.to_bits())
    }

    /// The words of one polynomial, limb by limb (`primes[i]` is limb `i`'s modulus).
    pub(crate) fn words(
        &mut self,
        words: &[u64],
        n: usize,
        primes: &[u64],
        packed: bool,
    ) -> Result<()> {
        let mut buf = Vec::new();
        for (limb, &q) in words.chunks(n).zip(primes) {
            buf.clear();
            if packed {
                pack_limb(limb, bit_width(q), &mut buf);
            } else {
                buf.reserve(8 * n);
                for &x in limb {
                    buf.extend_from_slice(&x.to_le_bytes());
                }
            }
            self.put(&buf)?;
        }
        Ok(())
    }

    /// Writes the SHA-256 of everything so far (not hashed itself) and returns the byte count.
    pub(crate) fn finish(mut self) -> Result<u64> {
        let digest: [u8; 32] = self.hasher.finalize_reset().into();
        self.inner.write_all(&digest)?;
        self.inner.flush()?;
        Ok(self.written + TRAILER_LEN)
    }

    pub(crate) fn written(&self) -> u64 {
        self.written
    }
}

/// A reader that hashes and counts everything read through it, and refuses to read past the
/// end of the declared payload.
pub struct Source<R: Read> {
    inner: R,
    hasher: Sha256,
    read: u64,
    limit: u64,
}

fn io_err(e: io::Error, what: &'static str) -> SerialError {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        SerialError::Truncated { what }
    } else {
        SerialError::Io(e)
    }
}

impl<R: Read> Source<R> {
    pub(crate) fn new(inner: R) -> Self {
        Self {
            inner,
            hasher: Sha256::new(),
            read: 0,
            limit: HEADER_LEN,
        }
    }

    /// Reads and checks the header (magic, version, known flags), then allows reading its
    /// payload.
    pub(crate) fn header(&mut self) -> Result<Header> {
        let mut b = [0u8; HEADER_LEN as usize];
        self.take(&mut b, "the header")?;
        let h = Header::parse(&b)?;
        if h.flags & !(FLAG_SEEDED | FLAG_PACKED) != 0 {
            return Err(SerialError::malformed(format!(
                "unknown header flags {:#x}",
                h.flags
            )));
        }
        self.limit = HEADER_LEN
            .checked_add(h.payload_len)
            .ok_or_else(|| SerialError::malformed("payload length overflows"))?;
        Ok(h)
    }

    pub(crate) fn take(&mut self, buf: &mut [u8], what: &'static str) -> Result<()> {
        let end = self.read + buf.len() as u64;
        if end > self.limit {
            return Err(SerialError::malformed(format!(
                "{what} runs past the end of the declared payload ({} bytes)",
                self.limit.saturating_sub(HEADER_LEN)
            )));
        }
        self.inner.read_exact(buf).map_err(|e| io_err(e, what))?;
        self.hasher.update(&*buf);
        self.read = end;
        Ok(())
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8> {
        let mut b = [0u8; 1];
        self.take(&mut b, what)?;
        Ok(b[0])
    }

    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16> {
        let mut b = [0u8; 2];
        self.take(&mut b, what)?;
        Ok(u16::from_le_bytes(b))
    }

    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32> {
        let mut b = [0u8; 4];
        self.take(&mut b, what)?;
        Ok(u32::from_le_bytes(b))
    }

    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64> {
        let mut b = [0u8; 8];
        self.take(&mut b, what)?;
        Ok(u64::from_le_bytes(b))
    }

    pub(crate) fn f64(&mut self, what: &'static str) -> Result<f64> {
        Ok(f64::from_bits(self.u64(what)?))
    }

    pub(crate) fn array32(&mut self, what: &'static str) -> Result<[u8; 32]> {
        let mut b = [0u8; 32];
        self.take(&mut b, what)?;
        Ok(b)
    }

    /// A boolean byte (`0` or `1`).
    pub(crate) fn flag(&mut self, what: &'static str) -> Result<bool> {
        match self.u8(what)? {
            0 => Ok(false),
            1 => Ok(true),
            x => Err(SerialError::malformed(format!("{what} is {x}, not 0 or 1"))),
        }
    }

    /// The words of one polynomial (`primes.len()` limbs of `n` words), each checked to be a
    /// canonical residue of its limb's prime.
    pub(crate) fn words(
        &mut self,
        n: usize,
        primes: &[u64],
        packed: bool,
        what: &'static str,
    ) -> Result<Vec<u64>> {
        // The caller has checked that the payload holds these words, so the allocation is
        // bounded by the declared (and already consumed-from) payload length.
        let mut out = Vec::with_capacity(n * primes.len());
        let mut buf = Vec::new();
        for (i, &q) in primes.iter().enumerate() {
            let start = out.len();
            if packed {
                let w = bit_width(q);
                buf.resize(packed_limb_bytes(n, w) as usize, 0);
                self.take(&mut buf, what)?;
                unpack_limb(&buf, w, n, &mut out)
                    .map_err(|m| SerialError::malformed(format!("{what}, limb {i}: {m}")))?;
            } else {
                buf.resize(8 * n, 0);
                self.take(&mut buf, what)?;
                out.extend(
                    buf.chunks_exact(8).map(|c| {
                        u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
                    }),
                );
            }
            if let Some(k) = out[start..].iter().position(|&x| x >= q) {
                return Err(SerialError::malformed(format!(
                    "{what}: word {k} of limb {i} is not reduced modulo {q}"
                )));
            }
        }
        Ok(out)
    }

    /// Reads and discards `len` bytes (still hashed).
    pub(crate) fn skip(&mut self, mut len: u64, what: &'static str) -> Result<()> {
        let mut buf = vec![0u8; 1 << 16];
        while len > 0 {
            let k = len.min(buf.len() as u64) as usize;
            self.take(&mut buf[..k], what)?;
            len -= k as u64;
        }
        Ok(())
    }

    /// Checks that the whole payload was consumed, then reads and checks the trailer.
    pub(crate) fn finish(mut self) -> Result<u64> {
        if self.read != self.limit {
            return Err(SerialError::malformed(format!(
                "{} unread byte(s) at the end of the payload",
                self.limit - self.read
            )));
        }
        let want: [u8; 32] = self.hasher.finalize_reset().into();
        let mut got = [0u8; 32];
        self.inner
            .read_exact(&mut got)
            .map_err(|e| io_err(e, "the checksum"))?;
        if got != want {
            return Err(SerialError::ChecksumMismatch);
        }
        Ok(self.read + TRAILER_LEN)
    }

    /// How many payload bytes are left.
    pub(crate) fn remaining(&self) -> u64 {
        self.limit - self.read
    }
}

/// `⌈log2 q⌉` for a prime `q > 2` (its bit length): the width of a packed word.
pub(crate) fn bit_width(q: u64) -> u32 {
    64 - q.leading_zeros()
}

/// The bytes of one packed limb of `n` words of `w` bits.
pub(crate) fn packed_limb_bytes(n: usize, w: u32) -> u64 {
    (n as u64 * w as u64).div_ceil(8)
}

/// The bytes of the words of a polynomial over `primes`.
pub(crate) fn poly_bytes(n: usize, primes: &[u64], packed: bool) -> u64 {
    primes
        .iter()
        .map(|&q| {
            if packed {
                packed_limb_bytes(n, bit_width(q))
            } else {
                8 * n as u64
            }
        })
        .sum()
}

/// Packs `words` (each `< 2^w`) as a little-endian bit stream: word `j` occupies bits
/// `j·w .. (j+1)·w` (least significant bit first); the last byte is zero-padded.
pub(crate) fn pack_limb(words: &[u64], w: u32, out: &mut Vec<u8>) {
    out.reserve(packed_limb_bytes(words.len(), w) as usize);
    let mut acc: u128 = 0;
    let mut bits = 0u32;
    for &x in words {
        acc |= (x as u128) << bits;
        bits += w;
        if bits >= 64 {
            out.extend_from_slice(&(acc as u64).to_le_bytes());
            acc >>= 64;
            bits -= 64;
        }
    }
    let tail = bits.div_ceil(8) as usize;
    out.extend_from_slice(&(acc as u64).to_le_bytes()[..tail]);
}

/// The inverse of [`pack_limb`]: `n` words of `w` bits; the padding bits must be zero.
pub(crate) fn unpack_limb(
    bytes: &[u8],
    w: u32,
    n: usize,
    out: &mut Vec<u64>,
) -> std::result::Result<(), String> {
    let mask: u128 = (1u128 << w) - 1;
    let mut acc: u128 = 0;
    let mut bits = 0u32;
    let mut chunks = bytes.chunks(8);
    for _ in 0..n {
        if bits < w {
            let c = chunks.next().ok_or("packed limb too short")?;
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            acc |= (u64::from_le_bytes(b) as u128) << bits;
            bits += 8 * c.len() as u32;
            if bits < w {
                return Err("packed limb too short".into());
            }
        }
        out.push((acc & mask) as u64);
        acc >>= w;
        bits -= w;
    }
    if chunks.next().is_some() || acc != 0 {
        return Err("non-zero padding bits after the last packed word".into());
    }
    Ok(())
}

/// The kind code as an enum, or the unknown-kind error.
pub(crate) fn kind_of(code: u16) -> Result<ObjectKind> {
    ObjectKind::from_code(code).ok_or(SerialError::UnknownKind(code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_round_trips_at_every_width() {
        let mut state = 0x1234_5678_9abc_def0u64;
        for w in [2u32, 17, 31, 36, 40, 50, 59, 60, 61, 63] {
            for n in [4usize, 8, 12, 64, 1000] {
                let words: Vec<u64> = (0..n)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        (state >> 3) & ((1u64 << w) - 1)
                    })
                    .collect();
                let mut bytes = Vec::new();
                pack_limb(&words, w, &mut bytes);
                assert_eq!(bytes.len() as u64, packed_limb_bytes(n, w));
                let mut back = Vec::new();
                unpack_limb(&bytes, w, n, &mut back).unwrap();
                assert_eq!(back, words, "w = {w}, n = {n}");
                // A set padding bit is refused (when there is padding).
                if (n as u64 * w as u64) % 8 != 0 {
                    let mut bad = bytes.clone();
                    *bad.last_mut().unwrap() |= 0x80;
                    assert!(unpack_limb(&bad, w, n, &mut Vec::new()).is_err());
                }
                assert!(unpack_limb(&bytes[..bytes.len() - 1], w, n, &mut Vec::new()).is_err());
            }
        }
    }

    #[test]
    fn bit_width_is_the_ceiling_log() {
        assert_eq!(bit_width(3), 2);
        assert_eq!(bit_width(65537), 17);
        assert_eq!(bit_width((1u64 << 60) + 1), 61);
        assert_eq!(bit_width((1u64 << 60) - 1), 60);
    }
}
