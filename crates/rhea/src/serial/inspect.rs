//! Describing an object without its parameters: kind, flags, level, scale, size.

use std::fmt;
use std::io::Read;

use super::params::{self, Fields};
use super::wire::{self, Source, FLAG_PACKED, FLAG_SEEDED};
use super::{ObjectKind, Result, Scheme, SerialError};
use crate::params::SecretDistribution;

/// What [`inspect`] found in an object.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectInfo {
    /// The object kind.
    pub kind: ObjectKind,
    /// The format version.
    pub version: u16,
    /// Whether the uniform halves are stored as seeds.
    pub seeded: bool,
    /// Whether the words are bit-packed.
    pub packed: bool,
    /// The digest of the parameters the object belongs to.
    pub params_digest: [u8; 32],
    /// The total size in bytes (header, payload and checksum).
    pub size: u64,
    /// The kind-specific fields.
    pub summary: Summary,
}

/// The kind-specific fields of an object, as far as they can be read without its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum Summary {
    /// A parameter set.
    Parameters {
        /// The scheme.
        scheme: Scheme,
        /// `log2 N`.
        log_n: u32,
        /// The `Q` primes.
        q_primes: Vec<u64>,
        /// The `P` primes.
        p_primes: Vec<u64>,
        /// The number of key-switching digits.
        dnum: usize,
        /// The secret distribution.
        secret: SecretDistribution,
        /// CKKS: `log2` of the default scale.
        log_default_scale: Option<u32>,
        /// BGV: the plaintext modulus.
        t: Option<u64>,
        /// Whether the set carries the below-128-bit opt-in.
        insecure: bool,
    },
    /// A public key.
    PublicKey,
    /// A secret key.
    SecretKey,
    /// A relinearisation key.
    RelinearizationKey {
        /// The number of key-switching digits.
        dnum: usize,
    },
    /// A set of Galois keys.
    GaloisKeys {
        /// The Galois elements, increasing.
        elements: Vec<u64>,
    },
    /// A CKKS plaintext.
    CkksPlaintext {
        /// The level.
        level: usize,
        /// The slot count.
        slots: usize,
        /// The scale.
        scale: f64,
    },
    /// A CKKS ciphertext.
    CkksCiphertext {
        /// The level.
        level: usize,
        /// The number of components.
        components: usize,
        /// The slot count.
        slots: usize,
        /// The scale.
        scale: f64,
        /// Whether it carries the seed of its `c_1` (a fresh secret-key encryption).
        has_seed: bool,
    },
    /// A BGV plaintext.
    BgvPlaintext {
        /// The level.
        level: usize,
    },
    /// A BGV ciphertext.
    BgvCiphertext {
        /// The level.
        level: usize,
        /// The number of components.
        components: usize,
        /// The correction factor.
        factor: u64,
        /// `log2` of the tracked noise bound.
        log_noise: f64,
        /// Whether it carries the seed of its `c_1`.
        has_seed: bool,
    },
}

/// Reads one object of any kind from `r` (consuming exactly its bytes), checks its framing and
/// checksum, and describes it. Needs no parameters, so it cannot check the payload against
/// them: [`super::Codec::read`] does that.
pub fn inspect<R: Read>(r: R) -> Result<ObjectInfo> {
    let mut s = Source::new(r);
    let h = s.header()?;
    let kind = wire::kind_of(h.kind)?;
    let summary = match kind {
        ObjectKind::Parameters => {
            let f: Fields = params::fields_after_header(&mut s, &h)?;
            Summary::Parameters {
                scheme: f.scheme,
                log_n: f.log_n,
                q_primes: f.q,
                p_primes: f.p,
                dnum: f.dnum,
                secret: f.secret,
                log_default_scale: (f.scheme == Scheme::Ckks).then_some(f.extra as u32),
                t: (f.scheme == Scheme::Bgv).then_some(f.extra),
                insecure: f.insecure,
            }
        }
        ObjectKind::PublicKey => Summary::PublicKey,
        ObjectKind::SecretKey => Summary::SecretKey,
        ObjectKind::RelinearizationKey => Summary::RelinearizationKey {
            dnum: s.u16("the number of key-switching digits")? as usize,
        },
        ObjectKind::GaloisKeys => {
            let count = s.u32("the number of Galois keys")? as u64;
            if count.saturating_mul(8) > s.remaining() {
                return Err(SerialError::malformed(format!(
                    "{count} Galois elements do not fit in the payload"
                )));
            }
            // Not pre-allocated beyond a little: the count is not yet backed by bytes read.
            let mut elements = Vec::with_capacity(count.min(1 << 10) as usize);
            for _ in 0..count {
                elements.push(s.u64("a Galois element")?);
            }
            Summary::GaloisKeys { elements }
        }
        ObjectKind::CkksPlaintext => Summary::CkksPlaintext {
            level: s.u16("the level")? as usize,
            slots: s.u32("the slot count")? as usize,
            scale: s.f64("the scale")?,
        },
        ObjectKind::CkksCiphertext => Summary::CkksCiphertext {
            level: s.u16("the level")? as usize,
            components: s.u8("the number of components")? as usize,
            slots: s.u32("the slot count")? as usize,
            scale: s.f64("the scale")?,
            has_seed: s.flag("the seed marker")?,
        },
        ObjectKind::BgvPlaintext => Summary::BgvPlaintext {
            level: s.u16("the level")? as usize,
        },
        ObjectKind::BgvCiphertext => Summary::BgvCiphertext {
            level: s.u16("the level")? as usize,
            components: s.u8("the number of components")? as usize,
            factor: s.u64("the correction factor")?,
            log_noise: s.f64("the noise bound")?,
            has_seed: s.flag("the seed marker")?,
        },
    };
    s.skip(s.remaining(), "the payload")?;
    let size = s.finish()?;
    Ok(ObjectInfo {
        kind,
        version: h.version,
        seeded: h.flags & FLAG_SEEDED != 0,
        packed: h.flags & FLAG_PACKED != 0,
        params_digest: h.digest,
        size,
        summary,
    })
}

fn log2_product(primes: &[u64]) -> f64 {
    primes.iter().map(|&p| (p as f64).log2()).sum()
}

impl fmt::Display for ObjectInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let first = self.kind.to_string();
        let mut chars = first.chars();
        let name: String = match chars.next() {
            Some(c) => c.to_uppercase().chain(chars).collect(),
            None => String::new(),
        };
        match &self.summary {
            Summary::Parameters {
                scheme,
                log_n,
                q_primes,
                p_primes,
                dnum,
                secret,
                log_default_scale,
                t,
                insecure,
            } => {
                write!(
                    f,
                    "{scheme} parameters: N = 2^{log_n}, {} Q primes (log Q = {:.1}), {} P primes \
                     (log P = {:.1}), dnum = {dnum}, secret {secret}",
                    q_primes.len(),
                    log2_product(q_primes),
                    p_primes.len(),
                    log2_product(p_primes)
                )?;
                if let Some(s) = log_default_scale {
                    write!(f, ", default scale 2^{s}")?;
                }
                if let Some(t) = t {
                    write!(f, ", t = {t}")?;
                }
                if *insecure {
                    write!(f, ", INSECURE opt-in")?;
                }
            }
            Summary::PublicKey | Summary::SecretKey => write!(f, "{name}")?,
            Summary::RelinearizationKey { dnum } => write!(f, "{name}: {dnum} digit(s)")?,
            Summary::GaloisKeys { elements } => write!(
                f,
                "{name}: {} key(s), elements {elements:?}",
                elements.len()
            )?,
            Summary::CkksPlaintext {
                level,
                slots,
                scale,
            } => write!(
                f,
                "{name}: level {level}, scale 2^{:.2}, {slots} slots",
                scale.log2()
            )?,
            Summary::CkksCiphertext {
                level,
                components,
                slots,
                scale,
                has_seed,
            } => {
                write!(
                    f,
                    "{name}: level {level}, {components} components, scale 2^{:.2}, {slots} slots",
                    scale.log2()
                )?;
                if *has_seed {
                    write!(f, ", fresh secret-key encryption (seeded c_1)")?;
                }
            }
            Summary::BgvPlaintext { level } => write!(f, "{name}: level {level}")?,
            Summary::BgvCiphertext {
                level,
                components,
                factor,
                log_noise,
                has_seed,
            } => {
                write!(
                    f,
                    "{name}: level {level}, {components} components, correction factor \
                     {factor}, noise bound 2^{log_noise:.1}"
                )?;
                if *has_seed {
                    write!(f, ", fresh secret-key encryption (seeded c_1)")?;
                }
            }
        }
        let mut storage = Vec::new();
        if self.seeded {
            storage.push("seeded");
        }
        if self.packed {
            storage.push("packed");
        }
        if storage.is_empty() {
            storage.push("plain");
        }
        let digest: String = self.params_digest[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        write!(
            f,
            "\n  {} bytes ({}), format version {}, parameters {digest}…",
            self.size,
            storage.join(" + "),
            self.version
        )
    }
}
