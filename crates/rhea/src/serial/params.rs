//! Parameter objects and the canonical parameter encoding whose SHA-256 every header carries.

use std::io::{Read, Write};

use sha2::{Digest, Sha256};

use super::wire::{self, Header, Sink, Source};
use super::{emit, ObjectKind, Result, Scheme, SchemeParameters, SerialError, MAX_PRIMES};
use crate::bgv::BgvParametersLiteral;
use crate::params::{CkksParametersLiteral, SecretDistribution};

/// The fields of a parameter set, as the format stores them.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Fields {
    pub(crate) scheme: Scheme,
    pub(crate) log_n: u32,
    pub(crate) q: Vec<u64>,
    pub(crate) p: Vec<u64>,
    pub(crate) dnum: usize,
    pub(crate) secret: SecretDistribution,
    pub(crate) sigma: f64,
    /// CKKS: `log2` of the default scale; BGV: the plaintext modulus `t`.
    pub(crate) extra: u64,
    pub(crate) insecure: bool,
}

impl Fields {
    pub(crate) fn of(params: &SchemeParameters) -> Fields {
        match params {
            SchemeParameters::Ckks(p) => {
                let lit = p.literal();
                Fields {
                    scheme: Scheme::Ckks,
                    log_n: p.log_n(),
                    q: p.q_primes().to_vec(),
                    p: p.p_primes().to_vec(),
                    dnum: p.dnum(),
                    secret: p.secret(),
                    sigma: p.error_std_dev(),
                    extra: lit.log_default_scale as u64,
                    insecure: lit.allow_insecure_below_128_bits,
                }
            }
            SchemeParameters::Bgv(p) => Fields {
                scheme: Scheme::Bgv,
                log_n: p.log_n(),
                q: p.q_primes().to_vec(),
                p: p.p_primes().to_vec(),
                dnum: p.dnum(),
                secret: p.secret(),
                sigma: p.error_std_dev(),
                extra: p.t(),
                insecure: p.literal().allow_insecure_below_128_bits,
            },
        }
    }

    /// The canonical encoding (what the digest hashes; the payload without the opt-in byte).
    pub(crate) fn canonical(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(canonical_len(self.scheme, self.q.len(), self.p.len()));
        b.push(match self.scheme {
            Scheme::Ckks => 1,
            Scheme::Bgv => 2,
        });
        b.push(self.log_n as u8);
        b.extend_from_slice(&(self.q.len() as u16).to_le_bytes());
        b.extend_from_slice(&(self.p.len() as u16).to_le_bytes());
        for &x in self.q.iter().chain(&self.p) {
            b.extend_from_slice(&x.to_le_bytes());
        }
        b.extend_from_slice(&(self.dnum as u16).to_le_bytes());
        let (kind, h) = match self.secret {
            SecretDistribution::Ternary => (0u8, 0u32),
            SecretDistribution::HammingWeight(h) => (1u8, h as u32),
        };
        b.push(kind);
        b.extend_from_slice(&h.to_le_bytes());
        b.extend_from_slice(&self.sigma.to_bits().to_le_bytes());
        match self.scheme {
            Scheme::Ckks => b.extend_from_slice(&(self.extra as u32).to_le_bytes()),
            Scheme::Bgv => b.extend_from_slice(&self.extra.to_le_bytes()),
        }
        b
    }

    /// Builds (and so validates) the parameters.
    pub(crate) fn build(&self) -> Result<SchemeParameters> {
        Ok(match self.scheme {
            Scheme::Ckks => SchemeParameters::Ckks(
                CkksParametersLiteral {
                    log_n: self.log_n,
                    log_q: Vec::new(),
                    log_p: Vec::new(),
                    q: self.q.clone(),
                    p: self.p.clone(),
                    log_default_scale: self.extra as u32,
                    dnum: self.dnum,
                    secret: self.secret,
                    error_std_dev: self.sigma,
                    allow_insecure_below_128_bits: self.insecure,
                }
                .build()?,
            ),
            Scheme::Bgv => SchemeParameters::Bgv(
                BgvParametersLiteral {
                    log_n: self.log_n,
                    log_q: Vec::new(),
                    log_p: Vec::new(),
                    q: self.q.clone(),
                    p: self.p.clone(),
                    t: self.extra,
                    log_t: 0,
                    dnum: self.dnum,
                    secret: self.secret,
                    error_std_dev: self.sigma,
                    allow_insecure_below_128_bits: self.insecure,
                }
                .build()?,
            ),
        })
    }
}

/// The length of the canonical encoding.
fn canonical_len(scheme: Scheme, nq: usize, np: usize) -> usize {
    let extra = match scheme {
        Scheme::Ckks => 4,
        Scheme::Bgv => 8,
    };
    1 + 1 + 2 + 2 + 8 * (nq + np) + 2 + 1 + 4 + 8 + extra
}

/// The canonical encoding of `params`.
pub(crate) fn canonical(params: &SchemeParameters) -> Vec<u8> {
    Fields::of(params).canonical()
}

/// SHA-256.
pub(crate) fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// The number of bytes [`write_parameters`] writes for `params`.
pub fn parameters_size(params: &SchemeParameters) -> u64 {
    let f = Fields::of(params);
    wire::HEADER_LEN + canonical_len(f.scheme, f.q.len(), f.p.len()) as u64 + 1 + wire::TRAILER_LEN
}

/// Writes a parameter set (self-describing: its header's digest is its own).
///
/// ```
/// use rhea::params::CkksParametersLiteral;
/// use rhea::serial::{read_parameters, write_parameters, SchemeParameters};
/// let params: SchemeParameters = CkksParametersLiteral::n13_logqp200_levels2().build()?.into();
/// let mut bytes = Vec::new();
/// write_parameters(&mut bytes, &params)?;
/// let back = read_parameters(&bytes[..])?;
/// assert_eq!(back.digest(), params.digest());
/// assert_eq!(back.id(), params.id());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_parameters<W: Write>(w: W, params: &SchemeParameters) -> Result<u64> {
    let f = Fields::of(params);
    let canon = f.canonical();
    let payload_len = canon.len() as u64 + 1;
    emit(
        w,
        ObjectKind::Parameters,
        0,
        digest(&canon),
        payload_len,
        |s: &mut Sink<W>| {
            s.put(&canon)?;
            s.u8(f.insecure as u8)
        },
    )
}

/// Reads a parameter set and validates it (rebuilding every table); its digest must match the
/// header.
///
/// Errors: those of [`crate::serial::Codec::read`], and [`SerialError::Rhea`] for parameters
/// the library refuses (invalid, or below 128-bit security without the recorded opt-in).
pub fn read_parameters<R: Read>(r: R) -> Result<SchemeParameters> {
    let mut s = Source::new(r);
    let (fields, header_digest) = read_fields(&mut s)?;
    s.finish()?;
    let params = fields.build()?;
    let d = params.digest();
    if d != header_digest {
        return Err(SerialError::ParametersMismatch {
            expected: d,
            found: header_digest,
        });
    }
    Ok(params)
}

/// Reads the header and the fields of a parameter object (no validation beyond the format).
pub(crate) fn read_fields<R: Read>(s: &mut Source<R>) -> Result<(Fields, [u8; 32])> {
    let h = s.header()?;
    let kind = wire::kind_of(h.kind)?;
    if kind != ObjectKind::Parameters {
        return Err(SerialError::WrongKind {
            expected: ObjectKind::Parameters,
            found: kind,
        });
    }
    Ok((fields_after_header(s, &h)?, h.digest))
}

/// The fields of a parameter object whose header `h` has been read; checks the flags and that
/// the header's digest is the digest of the fields.
pub(crate) fn fields_after_header<R: Read>(s: &mut Source<R>, h: &Header) -> Result<Fields> {
    if h.flags != 0 {
        return Err(SerialError::malformed(format!(
            "flags {:#x} are not allowed for parameters",
            h.flags
        )));
    }
    let fields = read_payload(s)?;
    let d = digest(&fields.canonical());
    if d != h.digest {
        return Err(SerialError::ParametersMismatch {
            expected: d,
            found: h.digest,
        });
    }
    Ok(fields)
}

fn read_payload<R: Read>(s: &mut Source<R>) -> Result<Fields> {
    let scheme = match s.u8("the scheme")? {
        1 => Scheme::Ckks,
        2 => Scheme::Bgv,
        x => return Err(SerialError::malformed(format!("unknown scheme code {x}"))),
    };
    let log_n = s.u8("log N")? as u32;
    if !(2..=rhea_math::ntt::MAX_LOG_DEGREE).contains(&log_n) {
        return Err(SerialError::malformed(format!(
            "log N = {log_n} outside 2..={}",
            rhea_math::ntt::MAX_LOG_DEGREE
        )));
    }
    let nq = s.u16("the number of Q primes")? as usize;
    let np = s.u16("the number of P primes")? as usize;
    if nq == 0 || nq + np > MAX_PRIMES {
        return Err(SerialError::malformed(format!(
            "{nq} Q and {np} P primes (need 1 ≤ |Q| and |Q| + |P| ≤ {MAX_PRIMES})"
        )));
    }
    let want = canonical_len(scheme, nq, np) as u64 + 1;
    let have = s.remaining() + 6;
    if have != want {
        return Err(SerialError::malformed(format!(
            "a parameter payload of {have} bytes for {nq} + {np} primes (expected {want})"
        )));
    }
    let mut q = Vec::with_capacity(nq);
    for _ in 0..nq {
        q.push(s.u64("a Q prime")?);
    }
    let mut p = Vec::with_capacity(np);
    for _ in 0..np {
        p.push(s.u64("a P prime")?);
    }
    let dnum = s.u16("dnum")? as usize;
    let secret = match (
        s.u8("the secret distribution")?,
        s.u32("the Hamming weight")?,
    ) {
        (0, 0) => SecretDistribution::Ternary,
        (1, h) if h > 0 => SecretDistribution::HammingWeight(h as usize),
        (k, h) => {
            return Err(SerialError::malformed(format!(
                "secret distribution code {k} with weight {h}"
            )))
        }
    };
    let sigma = s.f64("the error standard deviation")?;
    let extra = match scheme {
        Scheme::Ckks => s.u32("the default scale")? as u64,
        Scheme::Bgv => s.u64("the plaintext modulus")?,
    };
    let insecure = s.flag("the insecure opt-in")?;
    Ok(Fields {
        scheme,
        log_n,
        q,
        p,
        dnum,
        secret,
        sigma,
        extra,
        insecure,
    })
}
