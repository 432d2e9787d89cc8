//! The payloads of keys, plaintexts and ciphertexts (`docs/format.md`, §4).

use std::collections::BTreeMap;
use std::io::{Read, Write};

use rhea_math::sampler;
use zeroize::{Zeroize, Zeroizing};

use super::wire::{self, Sink, Source, FLAG_PACKED, FLAG_SEEDED};
use super::{Codec, Compression, ObjectKind, Result, Scheme, SerialError, Serializable};
use crate::backend::{Form, Poly, PolyShape, RnsRing};
use crate::params::SecretDistribution;
use crate::rlwe::{GaloisKeys, KeySwitchKey, PublicKey, RelinearizationKey, SecretKey};
use crate::{bgv, ckks};

/// What a serialisable object implements (sealed: the trait is public but unnameable outside
/// the crate).
pub trait Object: Sized {
    /// The header's kind.
    const KIND: ObjectKind;
    /// The header flags a reader accepts for this kind.
    const ALLOWED_FLAGS: u32;
    /// Checks that the object belongs to the codec's parameters and scheme.
    fn check(&self, codec: &Codec) -> Result<()>;
    /// The header flags for a requested compression (what will actually be applied).
    fn flags(&self, c: Compression) -> u32;
    /// The payload length with these flags.
    fn payload_len(&self, codec: &Codec, flags: u32) -> u64;
    /// Writes the payload.
    fn write_payload<W: Write>(&self, codec: &Codec, flags: u32, s: &mut Sink<W>) -> Result<()>;
    /// Reads the payload (the header has been checked).
    fn read_payload<R: Read>(codec: &Codec, flags: u32, s: &mut Source<R>) -> Result<Self>;
}

// ---------------------------------------------------------------------- helpers

fn primes(ring: &RnsRing, shape: &PolyShape) -> Vec<u64> {
    ring.moduli(shape).iter().map(|m| m.value()).collect()
}

fn poly_len(ring: &RnsRing, shape: &PolyShape, packed: bool) -> u64 {
    wire::poly_bytes(shape.n, &primes(ring, shape), packed)
}

fn seeded(flags: u32) -> bool {
    flags & FLAG_SEEDED != 0
}

fn packed(flags: u32) -> bool {
    flags & FLAG_PACKED != 0
}

fn check_id(op: &'static str, codec: &Codec, id: u64) -> Result<()> {
    let want = codec.params().id();
    if id == want {
        Ok(())
    } else {
        Err(crate::Error::ParametersMismatch {
            op,
            lhs: want,
            rhs: id,
        }
        .into())
    }
}

fn check_scheme(codec: &Codec, scheme: Scheme, what: &str) -> Result<()> {
    let have = codec.params().scheme();
    if have == scheme {
        Ok(())
    } else {
        Err(SerialError::Unsupported(format!(
            "{what} with a codec of {have} parameters"
        )))
    }
}

/// Fails unless exactly `want` payload bytes are left (checked before any large read, so a
/// forged length cannot make the reader allocate or read more than the parameters allow).
fn expect_remaining<R: Read>(s: &Source<R>, want: u64, what: &str) -> Result<()> {
    let have = s.remaining();
    if have == want {
        Ok(())
    } else {
        Err(SerialError::malformed(format!(
            "{what}: {have} payload bytes left where the fields announce {want}"
        )))
    }
}

fn write_poly<W: Write>(
    codec: &Codec,
    s: &mut Sink<W>,
    p: &Poly,
    shape: PolyShape,
    packed: bool,
) -> Result<()> {
    if p.shape() != shape || p.form() != Form::Ntt {
        return Err(SerialError::Unsupported(format!(
            "a polynomial of shape {} in {} form where shape {shape} in NTT form is expected",
            p.shape(),
            p.form()
        )));
    }
    let ring = codec.ring();
    let words = ring.download(p)?;
    s.words(&words, shape.n, &primes(ring, &shape), packed)
}

fn read_poly<R: Read>(
    codec: &Codec,
    s: &mut Source<R>,
    shape: PolyShape,
    packed: bool,
    what: &'static str,
) -> Result<Poly> {
    let ring = codec.ring();
    let words = s.words(shape.n, &primes(ring, &shape), packed, what)?;
    Ok(ring.upload(codec.device(), words, shape, Form::Ntt)?)
}

/// Reads a stored uniform half and checks it against its seed (so the object can later be
/// written seeded without changing it).
fn read_uniform_checked<R: Read>(
    codec: &Codec,
    s: &mut Source<R>,
    shape: PolyShape,
    packed: bool,
    seed: &[u8; 32],
    stream: u64,
    what: &'static str,
) -> Result<Poly> {
    let ring = codec.ring();
    let words = s.words(shape.n, &primes(ring, &shape), packed, what)?;
    let expected = sampler::uniform_poly_from_seed(seed, stream, &ring.moduli(&shape), shape.n);
    if words != expected {
        return Err(SerialError::malformed(format!(
            "{what} does not match its seed"
        )));
    }
    Ok(ring.upload(codec.device(), words, shape, Form::Ntt)?)
}

/// Regenerates a uniform half from its seed on the codec's device.
fn regenerate(codec: &Codec, shape: PolyShape, seed: &[u8; 32], stream: u64) -> Result<Poly> {
    Ok(codec
        .ring()
        .sample_uniform_from_seed(codec.device(), seed, stream, shape)?)
}

fn level_shape(codec: &Codec, level: usize) -> Result<PolyShape> {
    let max = codec.params().max_level();
    if level > max {
        return Err(SerialError::malformed(format!(
            "level {level} above the parameters' maximum level {max}"
        )));
    }
    Ok(codec.ring().shape_q(level + 1))
}

fn compression_flags(c: Compression, can_seed: bool) -> u32 {
    let mut f = 0;
    if c.seeded && can_seed {
        f |= FLAG_SEEDED;
    }
    if c.packed {
        f |= FLAG_PACKED;
    }
    f
}

// ---------------------------------------------------------------------- public key

impl Object for PublicKey {
    const KIND: ObjectKind = ObjectKind::PublicKey;
    const ALLOWED_FLAGS: u32 = FLAG_SEEDED | FLAG_PACKED;

    fn check(&self, codec: &Codec) -> Result<()> {
        check_id("serialise public key", codec, self.params_id)
    }

    fn flags(&self, c: Compression) -> u32 {
        compression_flags(c, true)
    }

    fn payload_len(&self, codec: &Codec, flags: u32) -> u64 {
        let ring = codec.ring();
        let halves = if seeded(flags) { 1 } else { 2 };
        32 + halves * poly_len(ring, &ring.full_shape(), packed(flags))
    }

    fn write_payload<W: Write>(&self, codec: &Codec, flags: u32, s: &mut Sink<W>) -> Result<()> {
        let full = codec.ring().full_shape();
        s.put(&self.seed)?;
        write_poly(codec, s, &self.parts[0], full, packed(flags))?;
        if !seeded(flags) {
            write_poly(codec, s, &self.parts[1], full, packed(flags))?;
        }
        Ok(())
    }

    fn read_payload<R: Read>(codec: &Codec, flags: u32, s: &mut Source<R>) -> Result<Self> {
        let ring = codec.ring();
        let full = ring.full_shape();
        let halves = if seeded(flags) { 1 } else { 2 };
        expect_remaining(
            s,
            32 + halves * poly_len(ring, &full, packed(flags)),
            "public key",
        )?;
        let seed = s.array32("the public key's seed")?;
        let b = read_poly(codec, s, full, packed(flags), "the public key's b")?;
        let a = if seeded(flags) {
            regenerate(codec, full, &seed, 0)?
        } else {
            read_uniform_checked(
                codec,
                s,
                full,
                packed(flags),
                &seed,
                0,
                "the public key's a",
            )?
        };
        Ok(PublicKey {
            parts: [b, a],
            seed,
            params_id: codec.params().id(),
        })
    }
}

impl Serializable for PublicKey {}

// ---------------------------------------------------------------------- key-switching keys

fn ksk_len(codec: &Codec, flags: u32) -> u64 {
    let ring = codec.ring();
    let halves = if seeded(flags) { 1 } else { 2 };
    2 + 32 + ring.dnum() as u64 * halves * poly_len(ring, &ring.full_shape(), packed(flags))
}

fn write_ksk<W: Write>(
    codec: &Codec,
    key: &KeySwitchKey,
    flags: u32,
    s: &mut Sink<W>,
) -> Result<()> {
    check_id("serialise key-switching key", codec, key.params_id)?;
    let ring = codec.ring();
    if key.parts.len() != ring.dnum() {
        return Err(SerialError::Unsupported(format!(
            "a key-switching key of {} digits for parameters with dnum = {}",
            key.parts.len(),
            ring.dnum()
        )));
    }
    let full = ring.full_shape();
    s.u16(key.parts.len() as u16)?;
    s.put(&key.seed)?;
    for [b, a] in &key.parts {
        write_poly(codec, s, b, full, packed(flags))?;
        if !seeded(flags) {
            write_poly(codec, s, a, full, packed(flags))?;
        }
    }
    Ok(())
}

fn read_ksk<R: Read>(codec: &Codec, flags: u32, s: &mut Source<R>) -> Result<KeySwitchKey> {
    let ring = codec.ring();
    let dnum = s.u16("the number of key-switching digits")? as usize;
    if dnum != ring.dnum() {
        return Err(SerialError::malformed(format!(
            "a key-switching key of {dnum} digits for parameters with dnum = {}",
            ring.dnum()
        )));
    }
    let seed = s.array32("a key-switching key's seed")?;
    let full = ring.full_shape();
    let mut parts = Vec::with_capacity(dnum);
    for j in 0..dnum {
        let b = read_poly(codec, s, full, packed(flags), "a key-switching key's b")?;
        let a = if seeded(flags) {
            regenerate(codec, full, &seed, j as u64)?
        } else {
            read_uniform_checked(
                codec,
                s,
                full,
                packed(flags),
                &seed,
                j as u64,
                "a key-switching key's a",
            )?
        };
        parts.push([b, a]);
    }
    Ok(KeySwitchKey {
        parts,
        seed,
        params_id: codec.params().id(),
    })
}

impl Object for RelinearizationKey {
    const KIND: ObjectKind = ObjectKind::RelinearizationKey;
    const ALLOWED_FLAGS: u32 = FLAG_SEEDED | FLAG_PACKED;

    fn check(&self, codec: &Codec) -> Result<()> {
        check_id("serialise relinearization key", codec, self.0.params_id)
    }

    fn flags(&self, c: Compression) -> u32 {
        compression_flags(c, true)
    }

    fn payload_len(&self, codec: &Codec, flags: u32) -> u64 {
        ksk_len(codec, flags)
    }

    fn write_payload<W: Write>(&self, codec: &Codec, flags: u32, s: &mut Sink<W>) -> Result<()> {
        write_ksk(codec, &self.0, flags, s)
    }

    fn read_payload<R: Read>(codec: &Codec, flags: u32, s: &mut Source<R>) -> Result<Self> {
        expect_remaining(s, ksk_len(codec, flags), "relinearization key")?;
        Ok(RelinearizationKey(read_ksk(codec, flags, s)?))
    }
}

impl Serializable for RelinearizationKey {}

impl Object for GaloisKeys {
    const KIND: ObjectKind = ObjectKind::GaloisKeys;
    const ALLOWED_FLAGS: u32 = FLAG_SEEDED | FLAG_PACKED;

    fn check(&self, codec: &Codec) -> Result<()> {
        check_id("serialise Galois keys", codec, self.params_id)?;
        for k in self.keys.values() {
            check_id("serialise Galois keys", codec, k.params_id)?;
        }
        Ok(())
    }

    fn flags(&self, c: Compression) -> u32 {
        compression_flags(c, true)
    }

    fn payload_len(&self, codec: &Codec, flags: u32) -> u64 {
        let k = self.keys.len() as u64;
        4 + 8 * k + k * ksk_len(codec, flags)
    }

    fn write_payload<W: Write>(&self, codec: &Codec, flags: u32, s: &mut Sink<W>) -> Result<()> {
        let count = u32::try_from(self.keys.len())
            .map_err(|_| SerialError::Unsupported("more than 2^32 Galois keys".into()))?;
        s.u32(count)?;
        for &g in self.keys.keys() {
            s.u64(g)?;
        }
        for key in self.keys.values() {
            write_ksk(codec, key, flags, s)?;
        }
        Ok(())
    }

    fn read_payload<R: Read>(codec: &Codec, flags: u32, s: &mut Source<R>) -> Result<Self> {
        read_galois_keys(codec, flags, s, |_| true)
    }
}

impl Serializable for GaloisKeys {}

pub(crate) fn read_galois_keys<R: Read>(
    codec: &Codec,
    flags: u32,
    s: &mut Source<R>,
    mut keep: impl FnMut(u64) -> bool,
) -> Result<GaloisKeys> {
    let n = codec.ring().n() as u64;
    let count = s.u32("the number of Galois keys")? as u64;
    if count > n {
        return Err(SerialError::malformed(format!(
            "{count} Galois keys, but there are only {n} Galois elements"
        )));
    }
    let body = ksk_len(codec, flags);
    expect_remaining(s, 8 * count + count * body, "Galois keys")?;
    let mut elements = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let g = s.u64("a Galois element")?;
        crate::rlwe::check_galois_element(g, n as usize)?;
        if elements.last().is_some_and(|&last| g <= last) {
            return Err(SerialError::malformed(
                "Galois elements are not strictly increasing",
            ));
        }
        elements.push(g);
    }
    let mut keys = BTreeMap::new();
    for g in elements {
        if keep(g) {
            keys.insert(g, read_ksk(codec, flags, s)?);
        } else {
            s.skip(body, "a skipped Galois key")?;
        }
    }
    Ok(GaloisKeys {
        keys,
        params_id: codec.params().id(),
    })
}

// ---------------------------------------------------------------------- secret key

pub(crate) fn write_secret_key<W: Write>(codec: &Codec, w: W, sk: &SecretKey) -> Result<u64> {
    check_id("write_secret_key", codec, sk.params_id)?;
    let ring = codec.ring();
    let n = ring.n();
    let mut tmp = ring.drop_q_limbs(&sk.s_q, 1)?;
    let words = ring
        .ntt_inverse(&mut tmp)
        .and_then(|()| ring.download(&tmp));
    tmp.zeroize();
    let mut words = Zeroizing::new(words?);
    let q0 = ring.q().moduli()[0].value();
    let mut bytes = Zeroizing::new(vec![0u8; n]);
    for (b, w) in bytes.iter_mut().zip(words.iter()) {
        *b = match *w {
            0 => 0,
            1 => 1,
            x if x == q0 - 1 => 0xff,
            _ => {
                return Err(SerialError::Unsupported(
                    "a secret key with coefficients outside {-1, 0, 1}".into(),
                ))
            }
        };
    }
    words.zeroize();
    codec.write_with(w, ObjectKind::SecretKey, 0, n as u64, |s| s.put(&bytes))
}

pub(crate) fn read_secret_key<R: Read>(codec: &Codec, s: &mut Source<R>) -> Result<SecretKey> {
    let ring = codec.ring();
    let n = ring.n();
    expect_remaining(s, n as u64, "secret key")?;
    let mut bytes = Zeroizing::new(vec![0u8; n]);
    s.take(&mut bytes, "the secret key")?;
    let mut coeffs = Zeroizing::new(Vec::with_capacity(n));
    for &b in bytes.iter() {
        coeffs.push(match b {
            0 => 0i64,
            1 => 1,
            0xff => -1,
            x => {
                return Err(SerialError::malformed(format!(
                    "secret coefficient byte {x:#04x} is not -1, 0 or 1"
                )))
            }
        });
    }
    if let SecretDistribution::HammingWeight(h) = codec.params().secret() {
        let weight = coeffs.iter().filter(|&&c| c != 0).count();
        if weight != h {
            return Err(SerialError::malformed(format!(
                "a secret of Hamming weight {weight} for parameters with weight {h}"
            )));
        }
    }
    let device = codec.device();
    let mut s_q = ring.from_signed(device, &coeffs, ring.shape_q(ring.q_len()))?;
    let mut s_qp = ring.from_signed(device, &coeffs, ring.full_shape())?;
    let done = ring
        .ntt_forward(&mut s_q)
        .and_then(|()| ring.ntt_forward(&mut s_qp));
    let sk = SecretKey {
        s_q,
        s_qp,
        params_id: codec.params().id(),
    };
    done?;
    Ok(sk)
}

// ---------------------------------------------------------------------- CKKS

/// A stored CKKS scale, checked as the encoder checks one (`ckks::check_stored_scale`):
/// finite, at least 1, and a message of magnitude about 1 at that scale below `Q_ℓ / 2` at the
/// object's level. [`SerialError::Malformed`] otherwise.
fn check_scale(codec: &Codec, level: usize, scale: f64) -> Result<f64> {
    let log_q = match codec.params() {
        super::SchemeParameters::Ckks(p) => p.log_q_at_level(level),
        super::SchemeParameters::Bgv(_) => {
            return Err(SerialError::Unsupported(
                "a CKKS scale with BGV parameters".into(),
            ))
        }
    };
    match ckks::check_stored_scale("read", scale, log_q) {
        Ok(()) => Ok(scale),
        Err(crate::Error::ScaleOverflow { log_scale, .. }) => Err(SerialError::malformed(format!(
            "the scale 2^{log_scale:.2} does not fit below the modulus 2^{log_q:.2} at level \
             {level}"
        ))),
        Err(_) => Err(SerialError::malformed(format!(
            "the scale {scale:e} is not a finite number of at least 1"
        ))),
    }
}

fn check_slots(codec: &Codec, slots: u32) -> Result<usize> {
    let max = codec.ring().n() / 2;
    let slots = slots as usize;
    if slots.is_power_of_two() && slots <= max {
        Ok(slots)
    } else {
        Err(SerialError::malformed(format!(
            "{slots} slots: not a power of two at most N/2 = {max}"
        )))
    }
}

/// A plaintext polynomial must be over Q limbs only, in NTT form.
fn check_plain_poly(p: &Poly) -> Result<()> {
    if p.p_limbs() != 0 || p.form() != Form::Ntt {
        return Err(SerialError::Unsupported(format!(
            "a plaintext of shape {} in {} form (expected Q limbs in NTT form)",
            p.shape(),
            p.form()
        )));
    }
    Ok(())
}

fn level_of(level: u16) -> usize {
    level as usize
}

impl Object for ckks::Plaintext {
    const KIND: ObjectKind = ObjectKind::CkksPlaintext;
    const ALLOWED_FLAGS: u32 = FLAG_PACKED;

    fn check(&self, codec: &Codec) -> Result<()> {
        check_scheme(codec, Scheme::Ckks, "a CKKS plaintext")?;
        check_id("serialise plaintext", codec, self.params_id)?;
        check_plain_poly(&self.poly)
    }

    fn flags(&self, c: Compression) -> u32 {
        compression_flags(c, false)
    }

    fn payload_len(&self, codec: &Codec, flags: u32) -> u64 {
        2 + 4 + 8 + poly_len(codec.ring(), &self.poly.shape(), packed(flags))
    }

    fn write_payload<W: Write>(&self, codec: &Codec, flags: u32, s: &mut Sink<W>) -> Result<()> {
        let shape = codec.ring().shape_q(self.poly.q_limbs());
        s.u16(self.level() as u16)?;
        s.u32(self.slots as u32)?;
        s.f64(self.scale)?;
        write_poly(codec, s, &self.poly, shape, packed(flags))
    }

    fn read_payload<R: Read>(codec: &Codec, flags: u32, s: &mut Source<R>) -> Result<Self> {
        check_scheme(codec, Scheme::Ckks, "a CKKS plaintext")?;
        let level = level_of(s.u16("the level")?);
        let shape = level_shape(codec, level)?;
        let slots = check_slots(codec, s.u32("the slot count")?)?;
        let scale = check_scale(codec, level, s.f64("the scale")?)?;
        expect_remaining(
            s,
            poly_len(codec.ring(), &shape, packed(flags)),
            "CKKS plaintext",
        )?;
        let poly = read_poly(codec, s, shape, packed(flags), "the plaintext")?;
        Ok(ckks::Plaintext {
            poly,
            scale,
            slots,
            params_id: codec.params().id(),
        })
    }
}

impl Serializable for ckks::Plaintext {}

/// The common part of both schemes' ciphertexts: components, optional seed of `c_1`.
fn ct_len(codec: &Codec, shape: &PolyShape, parts: usize, has_seed: bool, flags: u32) -> u64 {
    let stored = if seeded(flags) { parts - 1 } else { parts };
    (if has_seed { 33 } else { 1 }) + stored as u64 * poly_len(codec.ring(), shape, packed(flags))
}

fn write_ct_parts<W: Write>(
    codec: &Codec,
    parts: &[Poly],
    seed: Option<&[u8; 32]>,
    flags: u32,
    s: &mut Sink<W>,
) -> Result<()> {
    let shape = codec.ring().shape_q(parts[0].q_limbs());
    match seed {
        Some(seed) => {
            s.u8(1)?;
            s.put(seed)?;
        }
        None => s.u8(0)?,
    }
    for (i, p) in parts.iter().enumerate() {
        if i == 1 && seeded(flags) {
            continue;
        }
        write_poly(codec, s, p, shape, packed(flags))?;
    }
    Ok(())
}

/// Reads `has_seed`, the seed and the components (the level and component count are read by
/// the caller, `fixed` is the size of the scheme fields after them).
fn read_ct_parts<R: Read>(
    codec: &Codec,
    flags: u32,
    s: &mut Source<R>,
    shape: PolyShape,
    components: usize,
) -> Result<(Vec<Poly>, Option<[u8; 32]>)> {
    let has_seed = s.flag("the seed marker")?;
    if has_seed && components != 2 {
        return Err(SerialError::malformed(format!(
            "a seeded ciphertext of {components} components (only fresh 2-component \
             encryptions have a seed)"
        )));
    }
    if seeded(flags) && !has_seed {
        return Err(SerialError::malformed(
            "the header says seeded but the ciphertext has no seed",
        ));
    }
    let want = ct_len(codec, &shape, components, has_seed, flags) - 1;
    expect_remaining(s, want, "ciphertext")?;
    let seed = if has_seed {
        Some(s.array32("the ciphertext's seed")?)
    } else {
        None
    };
    let mut parts = Vec::with_capacity(components);
    for i in 0..components {
        let p = match (i, &seed) {
            (1, Some(seed)) if seeded(flags) => regenerate(codec, shape, seed, 0)?,
            (1, Some(seed)) => {
                read_uniform_checked(codec, s, shape, packed(flags), seed, 0, "c_1")?
            }
            _ => read_poly(codec, s, shape, packed(flags), "a ciphertext component")?,
        };
        parts.push(p);
    }
    Ok((parts, seed))
}

fn read_components<R: Read>(s: &mut Source<R>) -> Result<usize> {
    match s.u8("the number of components")? {
        c @ (2 | 3) => Ok(c as usize),
        c => Err(SerialError::malformed(format!(
            "{c} ciphertext components (expected 2 or 3)"
        ))),
    }
}

impl Object for ckks::Ciphertext {
    const KIND: ObjectKind = ObjectKind::CkksCiphertext;
    const ALLOWED_FLAGS: u32 = FLAG_SEEDED | FLAG_PACKED;

    fn check(&self, codec: &Codec) -> Result<()> {
        check_scheme(codec, Scheme::Ckks, "a CKKS ciphertext")?;
        check_id("serialise ciphertext", codec, self.params_id)?;
        crate::rlwe::check_components("serialise ciphertext", &self.parts)?;
        if !(2..=3).contains(&self.parts.len()) {
            return Err(SerialError::Unsupported(format!(
                "a ciphertext of {} components",
                self.parts.len()
            )));
        }
        Ok(())
    }

    fn flags(&self, c: Compression) -> u32 {
        compression_flags(c, self.seed.is_some() && self.parts.len() == 2)
    }

    fn payload_len(&self, codec: &Codec, flags: u32) -> u64 {
        let shape = self.parts[0].shape();
        2 + 1 + 4 + 8 + ct_len(codec, &shape, self.parts.len(), self.seed.is_some(), flags)
    }

    fn write_payload<W: Write>(&self, codec: &Codec, flags: u32, s: &mut Sink<W>) -> Result<()> {
        s.u16(self.level() as u16)?;
        s.u8(self.parts.len() as u8)?;
        s.u32(self.slots as u32)?;
        s.f64(self.scale)?;
        write_ct_parts(codec, &self.parts, self.seed.as_ref(), flags, s)
    }

    fn read_payload<R: Read>(codec: &Codec, flags: u32, s: &mut Source<R>) -> Result<Self> {
        check_scheme(codec, Scheme::Ckks, "a CKKS ciphertext")?;
        let level = level_of(s.u16("the level")?);
        let shape = level_shape(codec, level)?;
        let components = read_components(s)?;
        let slots = check_slots(codec, s.u32("the slot count")?)?;
        let scale = check_scale(codec, level, s.f64("the scale")?)?;
        let (parts, seed) = read_ct_parts(codec, flags, s, shape, components)?;
        Ok(ckks::Ciphertext {
            parts,
            scale,
            slots,
            params_id: codec.params().id(),
            seed,
        })
    }
}

impl Serializable for ckks::Ciphertext {}

// ---------------------------------------------------------------------- BGV

fn check_log(x: f64, what: &str) -> Result<f64> {
    if x.is_nan() || x == f64::INFINITY {
        Err(SerialError::malformed(format!("{what} is {x}")))
    } else {
        Ok(x)
    }
}

impl Object for bgv::Plaintext {
    const KIND: ObjectKind = ObjectKind::BgvPlaintext;
    const ALLOWED_FLAGS: u32 = FLAG_PACKED;

    fn check(&self, codec: &Codec) -> Result<()> {
        check_scheme(codec, Scheme::Bgv, "a BGV plaintext")?;
        check_id("serialise plaintext", codec, self.params_id)?;
        check_plain_poly(&self.poly)
    }

    fn flags(&self, c: Compression) -> u32 {
        compression_flags(c, false)
    }

    fn payload_len(&self, codec: &Codec, flags: u32) -> u64 {
        2 + 8 + poly_len(codec.ring(), &self.poly.shape(), packed(flags))
    }

    fn write_payload<W: Write>(&self, codec: &Codec, flags: u32, s: &mut Sink<W>) -> Result<()> {
        let shape = codec.ring().shape_q(self.poly.q_limbs());
        s.u16(self.level() as u16)?;
        s.f64(self.log_norm)?;
        write_poly(codec, s, &self.poly, shape, packed(flags))
    }

    fn read_payload<R: Read>(codec: &Codec, flags: u32, s: &mut Source<R>) -> Result<Self> {
        check_scheme(codec, Scheme::Bgv, "a BGV plaintext")?;
        let shape = level_shape(codec, level_of(s.u16("the level")?))?;
        let log_norm = check_log(s.f64("the norm bound")?, "the norm bound")?;
        expect_remaining(
            s,
            poly_len(codec.ring(), &shape, packed(flags)),
            "BGV plaintext",
        )?;
        let poly = read_poly(codec, s, shape, packed(flags), "the plaintext")?;
        // The stored bound is not trusted: a smaller one would let `mul_plain` understate the
        // noise. The bound of the coefficients actually read is used (or the stored one, if
        // larger).
        let log_norm = log_norm.max(bgv_plaintext_bound(codec, &poly)?);
        Ok(bgv::Plaintext {
            poly,
            log_norm,
            params_id: codec.params().id(),
        })
    }
}

impl Serializable for bgv::Plaintext {}

fn bgv_params(codec: &Codec) -> Result<&bgv::BgvParameters> {
    match codec.params() {
        super::SchemeParameters::Bgv(p) => Ok(p),
        super::SchemeParameters::Ckks(_) => Err(SerialError::Unsupported(
            "a BGV object with CKKS parameters".into(),
        )),
    }
}

/// A BGV ciphertext's stored noise bound, not trusted blindly: NaN and infinities (`-∞` would
/// switch every noise check off) are refused, and a finite bound below the smallest one any
/// ciphertext of these parameters can carry is raised to it
/// ([`bgv::noise::min_ciphertext_bound`]). A large bound is kept: it only makes the checks
/// stricter (and decryption reports an unknown budget past `Q_ℓ / 2`).
fn check_noise_bound(codec: &Codec, log_noise: f64) -> Result<f64> {
    if !log_noise.is_finite() {
        return Err(SerialError::malformed(format!(
            "the noise bound 2^{log_noise} is not finite"
        )));
    }
    Ok(log_noise.max(bgv::noise::min_ciphertext_bound(bgv_params(codec)?)))
}

/// The noise model's bound of a BGV plaintext read from a file, from its coefficients: each
/// limb must hold the same centred integer in `(-t/2, t/2]` (the encoder's lift), else the
/// object is malformed.
fn bgv_plaintext_bound(codec: &Codec, poly: &Poly) -> Result<f64> {
    let params = bgv_params(codec)?;
    let t = params.t();
    let ring = codec.ring();
    let n = ring.n();
    let mut coeff = poly.try_clone()?;
    ring.ntt_inverse(&mut coeff)?;
    let words = ring.download(&coeff)?;
    let moduli = ring.moduli(&coeff.shape());
    let (first, rest) = words.split_at(n);
    let mut l1 = 0.0f64;
    for (k, &w) in first.iter().enumerate() {
        let c = moduli[0].center(w);
        if 2 * i128::from(c) > i128::from(t) || 2 * i128::from(c) <= -i128::from(t) {
            return Err(SerialError::malformed(format!(
                "BGV plaintext coefficient {k} is {c}, outside (-t/2, t/2] for t = {t}"
            )));
        }
        for (i, limb) in rest.chunks_exact(n).enumerate() {
            if limb[k] != moduli[i + 1].reduce_i64(c) {
                return Err(SerialError::malformed(format!(
                    "BGV plaintext coefficient {k} differs between limb 0 and limb {}",
                    i + 1
                )));
            }
        }
        l1 += c.unsigned_abs() as f64;
    }
    Ok(bgv::noise::plaintext_bound(params, l1))
}

fn bgv_t(codec: &Codec) -> u64 {
    match codec.params() {
        super::SchemeParameters::Bgv(p) => p.t(),
        super::SchemeParameters::Ckks(_) => 0,
    }
}

impl Object for bgv::Ciphertext {
    const KIND: ObjectKind = ObjectKind::BgvCiphertext;
    const ALLOWED_FLAGS: u32 = FLAG_SEEDED | FLAG_PACKED;

    fn check(&self, codec: &Codec) -> Result<()> {
        check_scheme(codec, Scheme::Bgv, "a BGV ciphertext")?;
        check_id("serialise ciphertext", codec, self.params_id)?;
        crate::rlwe::check_components("serialise ciphertext", &self.parts)?;
        if !(2..=3).contains(&self.parts.len()) {
            return Err(SerialError::Unsupported(format!(
                "a ciphertext of {} components",
                self.parts.len()
            )));
        }
        Ok(())
    }

    fn flags(&self, c: Compression) -> u32 {
        compression_flags(c, self.seed.as_ref().is_some() && self.parts.len() == 2)
    }

    fn payload_len(&self, codec: &Codec, flags: u32) -> u64 {
        let shape = self.parts[0].shape();
        2 + 1
            + 8
            + 8
            + ct_len(
                codec,
                &shape,
                self.parts.len(),
                self.seed.as_ref().is_some(),
                flags,
            )
    }

    fn write_payload<W: Write>(&self, codec: &Codec, flags: u32, s: &mut Sink<W>) -> Result<()> {
        s.u16(self.level() as u16)?;
        s.u8(self.parts.len() as u8)?;
        s.u64(self.factor)?;
        s.f64(self.log_noise)?;
        write_ct_parts(codec, &self.parts, self.seed.as_ref(), flags, s)
    }

    fn read_payload<R: Read>(codec: &Codec, flags: u32, s: &mut Source<R>) -> Result<Self> {
        check_scheme(codec, Scheme::Bgv, "a BGV ciphertext")?;
        let shape = level_shape(codec, level_of(s.u16("the level")?))?;
        let components = read_components(s)?;
        let factor = s.u64("the correction factor")?;
        let t = bgv_t(codec);
        if factor == 0 || factor >= t || gcd(factor, t) != 1 {
            return Err(SerialError::malformed(format!(
                "correction factor {factor} is not a unit modulo t = {t}"
            )));
        }
        let log_noise = check_noise_bound(codec, s.f64("the noise bound")?)?;
        let (parts, seed) = read_ct_parts(codec, flags, s, shape, components)?;
        Ok(bgv::Ciphertext {
            parts,
            factor,
            log_noise,
            params_id: codec.params().id(),
            seed,
        })
    }
}

impl Serializable for bgv::Ciphertext {}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}
