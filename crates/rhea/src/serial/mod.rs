//! Serialisation: a versioned, documented binary format for parameters, keys, plaintexts and
//! ciphertexts of both schemes, with seeded (half-size) and bit-packed objects.
//!
//! The byte-level specification is `docs/format.md`. In short, every object is
//!
//! ```text
//! header (56 bytes): magic "RHEAFHE\0" | format version u16 | object kind u16 | flags u32
//!                    | SHA-256 digest of the parameters (32 bytes) | payload length u64
//! payload            (little-endian, described per kind)
//! trailer (32 bytes): SHA-256 of header and payload
//! ```
//!
//! and a reader checks all of it: the magic, the version, the kind, the parameter digest
//! against the parameters it is given, every length and field, that every word is a canonical
//! residue, and the checksum. Failures are typed ([`SerialError`]), never panics.
//!
//! **Seeded objects.** The public key, every key-switching key (relinearisation and Galois) and
//! fresh secret-key encryptions have a uniform half regenerated from a 32-byte seed. With
//! [`Compression::seeded`] they are stored as `(seed, the other half)`; loading regenerates the
//! uniform half with the same counter-based ChaCha20 sampler on the target device
//! ([`RnsRing::sample_uniform_from_seed`](crate::backend::RnsRing::sample_uniform_from_seed)),
//! bit for bit. Public-key encryptions have no seeded half (`c_1 = v·a + e_1` involves secret
//! randomness) and are stored whole, as are evaluated ciphertexts.
//!
//! **Packing.** With [`Compression::packed`] each limb's words are packed to the bit width of
//! the limb's prime (`⌈log2 q_i⌉` bits instead of 64).
//!
//! **Streaming.** [`Codec::write`] and [`Codec::read`] work on any [`std::io::Write`] /
//! [`std::io::Read`] and hold at most one polynomial in transit, so a large key set never needs
//! two copies in memory; several objects can follow each other in one stream. Sizes are known
//! before writing ([`Codec::size`]).
//!
//! **Secret keys** are never written by the generic calls: only [`Codec::write_secret_key`]
//! and [`Codec::read_secret_key`] handle them.
//!
//! ```
//! use rhea::ckks::{CkksContext, Encoder, Encryptor, KeyGenerator, Ciphertext};
//! use rhea::params::CkksParametersLiteral;
//! use rhea::serial::{Codec, Compression};
//! use rhea::Device;
//!
//! let params = CkksParametersLiteral::n13_logqp200_levels2().build()?;
//! let ctx = CkksContext::new(&params, Device::Cpu)?;
//! let mut keygen = KeyGenerator::new(&ctx)?;
//! let sk = keygen.secret_key()?;
//! let ct = Encryptor::with_secret_key(&ctx, &sk)?.encrypt(&Encoder::new(&ctx)?.encode(&[1.0])?)?;
//!
//! let codec = Codec::from(&ctx);
//! let plain = codec.size(&ct, Compression::NONE)?;
//! let small = codec.size(&ct, Compression::SEEDED_PACKED)?;
//! assert!(small * 2 < plain); // seeded and packed: less than half
//!
//! let mut bytes = Vec::new();
//! codec.write(&mut bytes, &ct, Compression::SEEDED_PACKED)?;
//! assert_eq!(bytes.len() as u64, small);
//! let back: Ciphertext = codec.read(&bytes[..])?;
//! assert_eq!(back.level(), ct.level());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod inspect;
mod objects;
mod params;
mod wire;

use std::fmt;
use std::io::{Read, Write};
use std::sync::Arc;

use thiserror::Error;

use crate::backend::{Device, RnsRing};
use crate::bgv::{BgvContext, BgvParameters};
use crate::ckks::CkksContext;
use crate::params::{CkksParameters, SecretDistribution};
use crate::rlwe::{GaloisKeys, SecretKey};

pub use inspect::{inspect, ObjectInfo, Summary};
pub use params::{parameters_size, read_parameters, write_parameters};

/// The format version this build writes and reads.
pub const FORMAT_VERSION: u16 = 1;

/// The most primes (`|Q| + |P|`) a serialised parameter set may have.
pub const MAX_PRIMES: usize = 256;

/// What went wrong while writing or reading an object.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SerialError {
    /// An I/O error other than a premature end of the input.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The input ended before the object did.
    #[error("truncated input: it ends inside {what}")]
    Truncated {
        /// The part of the object being read.
        what: &'static str,
    },
    /// The input does not start with the magic bytes `RHEAFHE\0`.
    #[error("not a Rhea object: the magic bytes are {found:02x?}, not \"RHEAFHE\\0\"")]
    BadMagic {
        /// The first eight bytes found.
        found: [u8; 8],
    },
    /// A format version this build cannot read.
    #[error(
        "format version {found} is not supported (this build reads version {supported}); \
         re-export the object with a matching version of Rhea"
    )]
    UnsupportedVersion {
        /// The version in the header.
        found: u16,
        /// The version this build reads.
        supported: u16,
    },
    /// An object-kind code this build does not know.
    #[error("unknown object kind {0}")]
    UnknownKind(u16),
    /// A valid object of another kind than the one asked for.
    #[error("expected {expected}, found {found}")]
    WrongKind {
        /// The kind asked for.
        expected: ObjectKind,
        /// The kind in the header.
        found: ObjectKind,
    },
    /// The object belongs to other parameters than the ones it is read (or written) with.
    #[error(
        "the object belongs to other parameters (digest {}…, expected {}…); load it with the \
         parameters it was created with",
        hex8(found),
        hex8(expected)
    )]
    ParametersMismatch {
        /// The digest of the parameters used for reading.
        expected: [u8; 32],
        /// The digest in the object's header.
        found: [u8; 32],
    },
    /// The trailer's SHA-256 does not match the bytes read: the object is corrupted.
    #[error("checksum mismatch: the object is corrupted")]
    ChecksumMismatch,
    /// A field that is out of range or inconsistent with the rest of the object.
    #[error("malformed object: {0}")]
    Malformed(String),
    /// An object that cannot be written in this format (for example with a codec of the other
    /// scheme).
    #[error("cannot serialise: {0}")]
    Unsupported(String),
    /// An error of the library (invalid parameters in a parameter object, a device that cannot
    /// be used, ...).
    #[error(transparent)]
    Rhea(#[from] crate::Error),
}

impl SerialError {
    pub(crate) fn malformed(m: impl Into<String>) -> Self {
        SerialError::Malformed(m.into())
    }
}

fn hex8(d: &[u8; 32]) -> String {
    d[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The result type of this module.
pub type Result<T> = std::result::Result<T, SerialError>;

/// The kind of a serialised object (the header's `kind` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum ObjectKind {
    /// A parameter set (CKKS or BGV).
    Parameters = 1,
    /// An RLWE public key.
    PublicKey = 2,
    /// An RLWE secret key (written only by [`Codec::write_secret_key`]).
    SecretKey = 3,
    /// A relinearisation key.
    RelinearizationKey = 4,
    /// A set of Galois keys.
    GaloisKeys = 5,
    /// A CKKS plaintext.
    CkksPlaintext = 6,
    /// A CKKS ciphertext.
    CkksCiphertext = 7,
    /// A BGV plaintext.
    BgvPlaintext = 8,
    /// A BGV ciphertext.
    BgvCiphertext = 9,
}

impl ObjectKind {
    /// The kind with this code, if any.
    pub fn from_code(code: u16) -> Option<Self> {
        use ObjectKind::*;
        Some(match code {
            1 => Parameters,
            2 => PublicKey,
            3 => SecretKey,
            4 => RelinearizationKey,
            5 => GaloisKeys,
            6 => CkksPlaintext,
            7 => CkksCiphertext,
            8 => BgvPlaintext,
            9 => BgvCiphertext,
            _ => return None,
        })
    }

    /// The code in the header.
    pub fn code(self) -> u16 {
        self as u16
    }
}

impl fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            ObjectKind::Parameters => "parameters",
            ObjectKind::PublicKey => "a public key",
            ObjectKind::SecretKey => "a secret key",
            ObjectKind::RelinearizationKey => "a relinearization key",
            ObjectKind::GaloisKeys => "Galois keys",
            ObjectKind::CkksPlaintext => "a CKKS plaintext",
            ObjectKind::CkksCiphertext => "a CKKS ciphertext",
            ObjectKind::BgvPlaintext => "a BGV plaintext",
            ObjectKind::BgvCiphertext => "a BGV ciphertext",
        };
        f.write_str(s)
    }
}

/// How to store an object: seeded (uniform halves as their seeds) and/or packed (words to the
/// bit width of their prime). Both are lossless; loading gives back the object bit for bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Compression {
    /// Store the uniform halves of seeded objects (public key, key-switching keys, fresh
    /// secret-key encryptions) as their 32-byte seed. Objects without a seeded half are stored
    /// whole.
    pub seeded: bool,
    /// Pack each limb's words to `⌈log2 q_i⌉` bits.
    pub packed: bool,
}

impl Compression {
    /// Every word stored as 64 bits, every half stored.
    pub const NONE: Self = Self {
        seeded: false,
        packed: false,
    };
    /// Uniform halves as seeds; words as 64 bits.
    pub const SEEDED: Self = Self {
        seeded: true,
        packed: false,
    };
    /// Every half stored; words packed.
    pub const PACKED: Self = Self {
        seeded: false,
        packed: true,
    };
    /// Uniform halves as seeds and words packed: the smallest form.
    pub const SEEDED_PACKED: Self = Self {
        seeded: true,
        packed: true,
    };
}

/// The scheme of a parameter set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// CKKS (approximate arithmetic).
    Ckks,
    /// BGV (exact arithmetic modulo `t`).
    Bgv,
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Scheme::Ckks => "CKKS",
            Scheme::Bgv => "BGV",
        })
    }
}

/// Validated parameters of either scheme: what a serialised object is bound to.
#[derive(Clone, Debug)]
pub enum SchemeParameters {
    /// CKKS parameters.
    Ckks(CkksParameters),
    /// BGV parameters.
    Bgv(BgvParameters),
}

impl From<CkksParameters> for SchemeParameters {
    fn from(p: CkksParameters) -> Self {
        SchemeParameters::Ckks(p)
    }
}

impl From<&CkksParameters> for SchemeParameters {
    fn from(p: &CkksParameters) -> Self {
        SchemeParameters::Ckks(p.clone())
    }
}

impl From<BgvParameters> for SchemeParameters {
    fn from(p: BgvParameters) -> Self {
        SchemeParameters::Bgv(p)
    }
}

impl From<&BgvParameters> for SchemeParameters {
    fn from(p: &BgvParameters) -> Self {
        SchemeParameters::Bgv(p.clone())
    }
}

impl SchemeParameters {
    /// The scheme.
    pub fn scheme(&self) -> Scheme {
        match self {
            SchemeParameters::Ckks(_) => Scheme::Ckks,
            SchemeParameters::Bgv(_) => Scheme::Bgv,
        }
    }

    /// The SHA-256 digest of the canonical encoding of the parameters (`docs/format.md`): the
    /// value every object's header carries.
    pub fn digest(&self) -> [u8; 32] {
        params::digest(&params::canonical(self))
    }

    /// The parameters' 64-bit id (what in-memory objects carry).
    pub fn id(&self) -> u64 {
        match self {
            SchemeParameters::Ckks(p) => p.id(),
            SchemeParameters::Bgv(p) => p.id(),
        }
    }

    /// The RNS ring (outside the crate: [`crate::unstable::HasRing`]).
    pub(crate) fn ring(&self) -> &Arc<RnsRing> {
        match self {
            SchemeParameters::Ckks(p) => p.ring(),
            SchemeParameters::Bgv(p) => p.ring(),
        }
    }

    /// The secret distribution.
    pub fn secret(&self) -> SecretDistribution {
        match self {
            SchemeParameters::Ckks(p) => p.secret(),
            SchemeParameters::Bgv(p) => p.secret(),
        }
    }

    /// The highest level.
    pub fn max_level(&self) -> usize {
        match self {
            SchemeParameters::Ckks(p) => p.max_level(),
            SchemeParameters::Bgv(p) => p.max_level(),
        }
    }
}

impl fmt::Display for SchemeParameters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemeParameters::Ckks(p) => p.fmt(f),
            SchemeParameters::Bgv(p) => p.fmt(f),
        }
    }
}

/// Writes one object: header, payload (`body`, which must write exactly `payload_len` bytes),
/// trailer. Returns the number of bytes written.
pub(crate) fn emit<W: Write>(
    w: W,
    kind: ObjectKind,
    flags: u32,
    digest: [u8; 32],
    payload_len: u64,
    body: impl FnOnce(&mut wire::Sink<W>) -> Result<()>,
) -> Result<u64> {
    let mut s = wire::Sink::new(w);
    let header = wire::Header {
        version: FORMAT_VERSION,
        kind: kind.code(),
        flags,
        digest,
        payload_len,
    };
    s.put(&header.to_bytes())?;
    body(&mut s)?;
    if s.written() != wire::HEADER_LEN + payload_len {
        return Err(SerialError::Unsupported(format!(
            "internal error: {kind} payload of {} bytes, {payload_len} announced",
            s.written() - wire::HEADER_LEN
        )));
    }
    s.finish()
}

/// An object that [`Codec::write`] and [`Codec::read`] handle: the public key, the
/// relinearisation key, Galois keys, and the plaintexts and ciphertexts of both schemes.
/// (Sealed; secret keys deliberately are not among them.)
pub trait Serializable: objects::Object {}

/// Writes and reads objects of one parameter set, loading them onto one device.
///
/// Cheap to clone. Build it from a context (`Codec::from(&ctx)`) or from parameters and a
/// device ([`Codec::new`]).
#[derive(Clone, Debug)]
pub struct Codec {
    params: SchemeParameters,
    digest: [u8; 32],
    device: Device,
}

impl From<&CkksContext> for Codec {
    fn from(ctx: &CkksContext) -> Self {
        let params = SchemeParameters::Ckks(ctx.params().clone());
        Self {
            digest: params.digest(),
            params,
            device: ctx.device(),
        }
    }
}

impl From<&BgvContext> for Codec {
    fn from(ctx: &BgvContext) -> Self {
        let params = SchemeParameters::Bgv(ctx.params().clone());
        Self {
            digest: params.digest(),
            params,
            device: ctx.device(),
        }
    }
}

impl Codec {
    /// A codec for `params` that loads objects onto `device`.
    ///
    /// Errors: [`SerialError::Rhea`] if the device is not usable by this build.
    pub fn new(params: impl Into<SchemeParameters>, device: Device) -> Result<Self> {
        device.check_supported()?;
        let params = params.into();
        Ok(Self {
            digest: params.digest(),
            params,
            device,
        })
    }

    /// The same codec, loading onto `device`.
    pub fn with_device(self, device: Device) -> Result<Self> {
        device.check_supported()?;
        Ok(Self { device, ..self })
    }

    /// The parameters.
    pub fn params(&self) -> &SchemeParameters {
        &self.params
    }

    /// The digest of the parameters (what headers must carry).
    pub fn digest(&self) -> [u8; 32] {
        self.digest
    }

    /// The device objects are loaded onto.
    pub fn device(&self) -> Device {
        self.device
    }

    pub(crate) fn ring(&self) -> &RnsRing {
        self.params.ring()
    }

    /// The exact number of bytes [`Codec::write`] will write for `obj` with `compression`.
    pub fn size<T: Serializable>(&self, obj: &T, compression: Compression) -> Result<u64> {
        obj.check(self)?;
        let flags = obj.flags(compression);
        Ok(wire::HEADER_LEN + obj.payload_len(self, flags) + wire::TRAILER_LEN)
    }

    /// Writes `obj` to `w` and returns the number of bytes written.
    ///
    /// Errors: [`SerialError::Rhea`] (a [`crate::Error::ParametersMismatch`]) for an object of
    /// other parameters, [`SerialError::Unsupported`] for an object of the other scheme,
    /// [`SerialError::Io`] for I/O errors.
    pub fn write<T: Serializable, W: Write>(
        &self,
        w: W,
        obj: &T,
        compression: Compression,
    ) -> Result<u64> {
        obj.check(self)?;
        let flags = obj.flags(compression);
        let payload_len = obj.payload_len(self, flags);
        self.write_with(w, T::KIND, flags, payload_len, |s| {
            obj.write_payload(self, flags, s)
        })
    }

    pub(crate) fn write_with<W: Write>(
        &self,
        w: W,
        kind: ObjectKind,
        flags: u32,
        payload_len: u64,
        body: impl FnOnce(&mut wire::Sink<W>) -> Result<()>,
    ) -> Result<u64> {
        emit(w, kind, flags, self.digest, payload_len, body)
    }

    /// The object serialised into a new buffer.
    pub fn to_bytes<T: Serializable>(&self, obj: &T, compression: Compression) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.size(obj, compression)? as usize);
        self.write(&mut out, obj, compression)?;
        Ok(out)
    }

    /// Reads one object of type `T` from `r`, checking everything (`docs/format.md`), and loads
    /// it onto the codec's device. Reads exactly the object's bytes, so objects can follow each
    /// other in one stream.
    ///
    /// Errors: [`SerialError::Truncated`], [`SerialError::BadMagic`],
    /// [`SerialError::UnsupportedVersion`], [`SerialError::UnknownKind`],
    /// [`SerialError::WrongKind`], [`SerialError::ParametersMismatch`],
    /// [`SerialError::Malformed`], [`SerialError::ChecksumMismatch`], [`SerialError::Io`].
    pub fn read<T: Serializable, R: Read>(&self, r: R) -> Result<T> {
        let mut s = wire::Source::new(r);
        let flags = self.open(&mut s, T::KIND, T::ALLOWED_FLAGS)?;
        let obj = T::read_payload(self, flags, &mut s)?;
        s.finish()?;
        Ok(obj)
    }

    /// Reads one object from a buffer that must hold exactly that object.
    pub fn from_bytes<T: Serializable>(&self, bytes: &[u8]) -> Result<T> {
        let mut r = bytes;
        let obj = self.read(&mut r)?;
        if !r.is_empty() {
            return Err(SerialError::malformed(format!(
                "{} trailing byte(s) after the object",
                r.len()
            )));
        }
        Ok(obj)
    }

    /// Reads and checks the header: kind, parameter digest, flags. Returns the flags.
    fn open<R: Read>(
        &self,
        s: &mut wire::Source<R>,
        kind: ObjectKind,
        allowed_flags: u32,
    ) -> Result<u32> {
        let h = s.header()?;
        let found = wire::kind_of(h.kind)?;
        if found != kind {
            return Err(SerialError::WrongKind {
                expected: kind,
                found,
            });
        }
        if h.digest != self.digest {
            return Err(SerialError::ParametersMismatch {
                expected: self.digest,
                found: h.digest,
            });
        }
        if h.flags & !allowed_flags != 0 {
            return Err(SerialError::malformed(format!(
                "flags {:#x} are not allowed for {kind}",
                h.flags
            )));
        }
        Ok(h.flags)
    }

    // ------------------------------------------------------------------ secret keys

    /// The number of bytes [`Codec::write_secret_key`] writes.
    pub fn secret_key_size(&self) -> u64 {
        wire::HEADER_LEN + self.ring().n() as u64 + wire::TRAILER_LEN
    }

    /// Writes the **secret key** (its `N` ternary coefficients, one signed byte each). This is
    /// the only call that serialises a secret key; keep the output private.
    ///
    /// Errors: [`SerialError::Rhea`] for a key of other parameters;
    /// [`SerialError::Unsupported`] for a key whose coefficients are not in `{-1, 0, 1}`.
    pub fn write_secret_key<W: Write>(&self, w: W, sk: &SecretKey) -> Result<u64> {
        objects::write_secret_key(self, w, sk)
    }

    /// Reads a secret key written by [`Codec::write_secret_key`] (every coefficient checked to
    /// be in `{-1, 0, 1}`, and the Hamming weight for sparse secrets).
    pub fn read_secret_key<R: Read>(&self, r: R) -> Result<SecretKey> {
        let mut s = wire::Source::new(r);
        self.open(&mut s, ObjectKind::SecretKey, 0)?;
        let sk = objects::read_secret_key(self, &mut s)?;
        s.finish()?;
        Ok(sk)
    }

    // ------------------------------------------------------------------ Galois keys

    /// Reads a Galois key set but keeps only the keys whose Galois element passes `keep` (the
    /// others are read past, still checksummed): load just the rotations a program needs.
    pub fn read_galois_keys_filtered<R: Read>(
        &self,
        r: R,
        keep: impl FnMut(u64) -> bool,
    ) -> Result<GaloisKeys> {
        let mut s = wire::Source::new(r);
        let flags = self.open(
            &mut s,
            ObjectKind::GaloisKeys,
            wire::FLAG_SEEDED | wire::FLAG_PACKED,
        )?;
        let keys = objects::read_galois_keys(self, flags, &mut s, keep)?;
        s.finish()?;
        Ok(keys)
    }
}
