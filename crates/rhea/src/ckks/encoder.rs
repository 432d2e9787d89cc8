//! The CKKS encoder: complex (or real) slot vectors ↔ plaintext polynomials, through the special
//! FFT of `rhea_math::fft`.

use num_complex::Complex64;
use rayon::prelude::*;
use rhea_math::fft::SpecialFft;
use rhea_math::Modulus;

use super::linear::{DiagonalStorage, StoredDiagonal};
use super::{CkksContext, Plaintext};
use crate::backend::{Device, Form, PolyShape};
use crate::error::{Error, Result};

/// The host part of an encoding: the residues of the plaintext's coefficients and its shape.
struct HostWords {
    /// `[limb][N]` residues, or (`lifted`) one limb of residues modulo `q_0` of coefficients
    /// below `q_0 / 2` in magnitude, lifted to every limb on the device.
    words: Vec<u64>,
    shape: PolyShape,
    lifted: bool,
}

/// Below this `log2(scale · max|coefficient|)` the encoder rounds `f64` coefficients; above it, it
/// runs the double-double transform (`SpecialFft::encode_scaled_i128`).
const F64_PATH_MAX_LOG: f64 = 50.0;

/// `x.round()` (half away from zero) as an integer, for `|x| < 2^52`: the truncation (one
/// `cvttsd2si`) corrected by the fractional part `x - trunc(x)`, which is exact in that range —
/// 3–4× faster than `f64::round` (a libm call on baseline x86-64) and the conversion to `i128`
/// it replaces (bench-history §23).
#[inline]
fn round_half_away(x: f64) -> i64 {
    let t = x as i64;
    let f = x - t as f64;
    t + i64::from(f >= 0.5) - i64::from(f <= -0.5)
}

/// The `[limb][N]` residues of the integer coefficients `ints` (coefficient `k` at `k · gap`,
/// the others zero) modulo each of `limbs`.
fn residues<T: Copy>(
    ints: &[T],
    limbs: &[Modulus],
    n: usize,
    gap: usize,
    reduce: impl Fn(&Modulus, T) -> u64,
) -> Vec<u64> {
    let mut words = vec![0u64; limbs.len() * n];
    for (q, limb) in limbs.iter().zip(words.chunks_exact_mut(n)) {
        for (k, &v) in ints.iter().enumerate() {
            limb[k * gap] = reduce(q, v);
        }
    }
    words
}

/// Checks a user-given CKKS scale: a finite number of at least 1 ([`Error::InvalidScale`]
/// otherwise). Below 1 the rounding to integers erases the message; zero, negative, NaN and
/// infinite scales encode nothing.
pub(crate) fn check_scale(op: &'static str, scale: f64) -> Result<()> {
    if scale.is_finite() && scale >= 1.0 {
        Ok(())
    } else {
        Err(Error::InvalidScale { op, scale })
    }
}

/// Checks a stored CKKS scale (of a plaintext or ciphertext read from a file) as the encoder
/// and the evaluator check the scales they make: [`check_scale`], and a message of magnitude
/// about 1 at that scale fits below `Q_ℓ / 2` ([`Error::ScaleOverflow`] otherwise).
pub(crate) fn check_stored_scale(op: &'static str, scale: f64, log_modulus: f64) -> Result<()> {
    check_scale(op, scale)?;
    let log_scale = scale.log2();
    if log_scale + 1.0 >= log_modulus {
        return Err(Error::ScaleOverflow {
            op,
            log_scale,
            log_modulus,
        });
    }
    Ok(())
}

/// Encodes slot vectors into plaintexts and decodes them back, for a fixed number of slots
/// (`N/2` by default, or any smaller power of two: sparse packing in the subring
/// `Z[X^{N/(2·slots)}]`).
pub struct Encoder {
    ctx: CkksContext,
    slots: usize,
    fft: SpecialFft,
}

impl Encoder {
    /// An encoder with full packing (`N/2` slots).
    pub fn new(ctx: &CkksContext) -> Result<Self> {
        Self::with_slots(ctx, ctx.params().max_slots())
    }

    /// An encoder with `slots` slots (a power of two, at most `N/2`).
    pub fn with_slots(ctx: &CkksContext, slots: usize) -> Result<Self> {
        if !slots.is_power_of_two() || slots > ctx.params().max_slots() {
            return Err(Error::InvalidInput(format!(
                "slots = {slots} must be a power of two at most N/2 = {}",
                ctx.params().max_slots()
            )));
        }
        Ok(Self {
            ctx: ctx.clone(),
            slots,
            fft: SpecialFft::new(slots)?,
        })
    }

    /// The number of slots.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Encodes real values (at most `slots`, zero-padded) at the default level
    /// ([`crate::params::CkksParameters::default_level`]: the top level but for bootstrappable
    /// chains) and the default scale.
    pub fn encode(&self, values: &[f64]) -> Result<Plaintext> {
        let p = self.ctx.params();
        self.encode_at(values, p.default_level(), p.default_scale())
    }

    /// Encodes real values at `level` with `scale`.
    ///
    /// Errors: as [`Encoder::encode_complex_at`]; in particular [`Error::InvalidScale`] for a
    /// scale below 1, zero, negative, NaN or infinite.
    ///
    /// ```
    /// use rhea::ckks::{CkksContext, Encoder};
    /// use rhea::params::CkksParametersLiteral;
    /// use rhea::{Device, Error};
    ///
    /// let params = CkksParametersLiteral::n13_logqp200_levels2().build()?;
    /// let encoder = Encoder::new(&CkksContext::new(&params, Device::Cpu)?)?;
    /// let pt = encoder.encode_at(&[0.5], params.max_level(), 2f64.powi(30))?;
    /// assert!((encoder.decode(&pt)?[0] - 0.5).abs() < 1e-6);
    /// let err = encoder.encode_at(&[0.5], params.max_level(), 0.5).unwrap_err();
    /// assert!(matches!(err, Error::InvalidScale { .. }));
    /// # Ok::<(), rhea::Error>(())
    /// ```
    pub fn encode_at(&self, values: &[f64], level: usize, scale: f64) -> Result<Plaintext> {
        let z: Vec<Complex64> = values.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        self.encode_complex_at(&z, level, scale)
    }

    /// Encodes complex values (at most `slots`, zero-padded) at the default level and scale
    /// (as [`Encoder::encode`]).
    pub fn encode_complex(&self, values: &[Complex64]) -> Result<Plaintext> {
        let p = self.ctx.params();
        self.encode_complex_at(values, p.default_level(), p.default_scale())
    }

    /// Encodes complex values at `level` with `scale`.
    ///
    /// Errors: [`Error::InvalidInput`] for too many or non-finite values or a level above the
    /// maximum; [`Error::InvalidScale`] for a scale below 1, zero, negative, NaN or infinite;
    /// [`Error::ScaleOverflow`] if the scaled message does not
    /// fit below the modulus at `level`.
    pub fn encode_complex_at(
        &self,
        values: &[Complex64],
        level: usize,
        scale: f64,
    ) -> Result<Plaintext> {
        let host = self.encode_words(values, level, scale, false, self.lifts())?;
        self.finish(host, scale)
    }

    /// The plaintexts of many complex vectors at `level` and `scale` over the extended basis
    /// `Q_ℓ ∪ P` (plaintexts that multiply key-switching results before their ModDown: the
    /// linear transforms' diagonals), on the context's device, stored as `storage` says: NTT
    /// form, or (compact) the `q_0` residues of the coefficients when they lie below `q_0 / 2`,
    /// or ([`DiagonalStorage::QOnly`]) NTT form over `Q_ℓ` alone.
    /// On the CPU, each one's host part and device part in parallel; on a GPU, the host parts
    /// of a bounded number of polynomials at a time in parallel, while the previous ones are
    /// uploaded (lifted on the device from their `q_0` residues when their coefficients allow)
    /// and transformed.
    pub(crate) fn encode_extended_batch<V: AsRef<[Complex64]> + Sync>(
        &self,
        values: &[V],
        level: usize,
        scale: f64,
        storage: DiagonalStorage,
    ) -> Result<Vec<StoredDiagonal>> {
        let compact = storage == DiagonalStorage::Compact;
        let extended = storage != DiagonalStorage::QOnly;
        let one = |v: &V| {
            let lift = compact || self.lifts();
            self.encode_words(v.as_ref(), level, scale, extended, lift)
        };
        let store = |h: HostWords| -> Result<StoredDiagonal> {
            if compact && h.lifted {
                let ring = self.ctx.ring();
                let limb0 = ring.upload(
                    self.ctx.device(),
                    h.words,
                    ring.shape_q(1),
                    Form::Coefficient,
                )?;
                return Ok(StoredDiagonal::Compact {
                    limb0,
                    shape: h.shape,
                });
            }
            Ok(StoredDiagonal::Full(self.finish(h, scale)?.poly))
        };
        if self.ctx.device() == Device::Cpu {
            return values.par_iter().map(|v| store(one(v)?)).collect();
        }
        let host = |chunk: &[V]| chunk.par_iter().map(one).collect::<Result<Vec<_>>>();
        let mut chunks = values.chunks(64);
        let mut out = Vec::with_capacity(values.len());
        let mut pending = match chunks.next() {
            Some(c) => host(c)?,
            None => return Ok(out),
        };
        loop {
            let next = chunks.next();
            // The device part of this chunk (uploads that block the calling thread while they
            // stage, kernels queued) beside the host part of the next.
            let (done, ahead) = rayon::join(
                || pending.into_iter().map(store).collect::<Result<Vec<_>>>(),
                || next.map(host).transpose(),
            );
            out.extend(done?);
            match ahead? {
                Some(h) => pending = h,
                None => return Ok(out),
            }
        }
    }

    /// Encodes many real vectors (each at most `slots` values, zero-padded) at the top level
    /// and default scale: the host part (special FFT, rounding, residues) of all of them in
    /// parallel on the CPU's threads, then each plaintext uploaded and transformed on the
    /// context's device. Equal, plaintext for plaintext, to [`Encoder::encode`] of each.
    ///
    /// ```
    /// use rhea::ckks::{CkksContext, Encoder};
    /// use rhea::params::CkksParametersLiteral;
    /// use rhea::Device;
    ///
    /// let params = CkksParametersLiteral::n13_logqp200_levels2().build()?;
    /// let ctx = CkksContext::new(&params, Device::Cpu)?;
    /// let encoder = Encoder::new(&ctx)?;
    /// let rows = vec![vec![0.5, -0.25], vec![1.0; 4]];
    /// let pts = encoder.encode_batch(&rows)?;
    /// assert_eq!(pts.len(), 2);
    /// assert!((encoder.decode(&pts[1])?[3] - 1.0).abs() < 1e-6);
    /// # Ok::<(), rhea::Error>(())
    /// ```
    ///
    /// Errors: as [`Encoder::encode`], for the first vector (in order) that fails.
    pub fn encode_batch<V: AsRef<[f64]> + Sync>(&self, values: &[V]) -> Result<Vec<Plaintext>> {
        let p = self.ctx.params();
        let (level, scale) = (p.default_level(), p.default_scale());
        let host = values
            .par_iter()
            .map(|v| {
                let z: Vec<Complex64> =
                    v.as_ref().iter().map(|&x| Complex64::new(x, 0.0)).collect();
                self.encode_words(&z, level, scale, false, self.lifts())
            })
            .collect::<Result<Vec<_>>>()?;
        host.into_iter().map(|h| self.finish(h, scale)).collect()
    }

    /// The host part of an encoding: the coefficient-form residues (`[limb][N]` words) of the
    /// plaintext of `values` at `level` and `scale`, and their shape; for a GPU context, when
    /// every coefficient lies below `q_0 / 2` in magnitude (any scale up to ~2^58 with values
    /// near 1), only their residues modulo `q_0`, which the device lifts to every limb (1/ℓ of
    /// the host reductions and of the upload). `extended`: over `Q_ℓ ∪ P` (lifted the same way,
    /// to the `P` limbs too). `lift`: whether lifting is allowed ([`Encoder::lifts`]; the words
    /// of the polynomial are the same either way).
    fn encode_words(
        &self,
        values: &[Complex64],
        level: usize,
        scale: f64,
        extended: bool,
        lift: bool,
    ) -> Result<HostWords> {
        let params = self.ctx.params();
        if values.len() > self.slots {
            return Err(Error::InvalidInput(format!(
                "{} values for {} slots; use an encoder with more slots",
                values.len(),
                self.slots
            )));
        }
        if level > params.max_level() {
            return Err(Error::InvalidInput(format!(
                "level {level} above the maximum level {}",
                params.max_level()
            )));
        }
        check_scale("encode", scale)?;
        if let Some(v) = values
            .iter()
            .find(|v| !(v.re.is_finite() && v.im.is_finite()))
        {
            return Err(Error::InvalidInput(format!(
                "non-finite value {v} to encode"
            )));
        }
        let mut z = Vec::with_capacity(self.slots);
        z.extend_from_slice(values);
        z.resize(self.slots, Complex64::new(0.0, 0.0));
        // `SpecialFft::encode_to_real` in place: coefficient `k < slots` is `Re z_k`, coefficient
        // `slots + k` is `Im z_k`.
        self.fft.inverse(&mut z)?;
        let coeffs = || z.iter().map(|c| c.re).chain(z.iter().map(|c| c.im));
        let max = coeffs().fold(0.0f64, |m, c| m.max(c.abs()));
        let log_max = (scale * max).log2();
        let log_q = params.log_q_at_level(level);
        if log_max + 1.0 >= log_q {
            return Err(Error::ScaleOverflow {
                op: "encode",
                log_scale: log_max,
                log_modulus: log_q,
            });
        }
        let n = params.n();
        let gap = n / (2 * self.slots);
        let ring = self.ctx.ring();
        let limbs = params.q_limbs_at_level(level);
        let shape = if extended {
            ring.shape_qp(limbs)
        } else {
            ring.shape_q(limbs)
        };
        let moduli = ring.moduli(&shape);
        let q0 = moduli[0].value();
        let half = q0 / 2;
        // The coefficients below 2^50 (`F64_PATH_MAX_LOG`) round and reduce in 64-bit words;
        // the others come as 128-bit integers from the double-double transform.
        let (lifted, words) = if log_max < F64_PATH_MAX_LOG {
            // Rounding is monotone in `|c|`, so the largest rounded magnitude is that of `max`.
            if lift && round_half_away(scale * max).unsigned_abs() <= half {
                // Only the residues modulo `q_0` (`Modulus::reduce_i64` of integers below
                // `q_0 / 2` in magnitude), in the one pass that rounds.
                let mut words = vec![0u64; n];
                for (k, c) in coeffs().enumerate() {
                    let v = round_half_away(c * scale);
                    words[k * gap] = if v < 0 {
                        (v + q0 as i64) as u64
                    } else {
                        v as u64
                    };
                }
                (true, words)
            } else {
                let ints: Vec<i64> = coeffs().map(|c| round_half_away(c * scale)).collect();
                (false, residues(&ints, &moduli, n, gap, Modulus::reduce_i64))
            }
        } else {
            let mut z = values.to_vec();
            z.resize(self.slots, Complex64::new(0.0, 0.0));
            let ints = self.fft.encode_scaled_i128(&z, scale)?;
            let lifted = lift && ints.iter().all(|v| v.unsigned_abs() <= u128::from(half));
            let limbs = if lifted { &moduli[..1] } else { &moduli[..] };
            (lifted, residues(&ints, limbs, n, gap, Modulus::reduce_i128))
        };
        Ok(HostWords {
            words,
            shape,
            lifted,
        })
    }

    /// Whether encodings lift small coefficients from their `q_0` residues on the device: on a
    /// GPU, where it saves the upload of the other limbs (on the CPU the host lift costs what
    /// the reductions it replaces do).
    fn lifts(&self) -> bool {
        matches!(self.ctx.device(), Device::Cuda(_))
    }

    /// The device part of an encoding: upload the residues (or the one limb, lifted on the
    /// device), forward NTT.
    fn finish(&self, host: HostWords, scale: f64) -> Result<Plaintext> {
        let ring = self.ctx.ring();
        let device = self.ctx.device();
        let HostWords {
            words,
            shape,
            lifted,
        } = host;
        let mut poly = if lifted {
            ring.upload_lifted(device, words, shape)?
        } else {
            ring.upload(device, words, shape, Form::Coefficient)?
        };
        ring.ntt_forward(&mut poly)?;
        Ok(Plaintext {
            poly,
            scale,
            slots: self.slots,
            params_id: self.ctx.params().id(),
        })
    }

    /// Decodes to complex slot values.
    pub fn decode_complex(&self, pt: &Plaintext) -> Result<Vec<Complex64>> {
        let params = self.ctx.params();
        if pt.params_id != params.id() {
            return Err(Error::ParametersMismatch {
                op: "decode",
                lhs: params.id(),
                rhs: pt.params_id,
            });
        }
        if pt.slots != self.slots {
            return Err(Error::SlotMismatch {
                expected: self.slots,
                found: pt.slots,
            });
        }
        let ring = self.ctx.ring();
        let mut coeff = pt.poly.try_clone()?;
        ring.ntt_inverse(&mut coeff)?;
        let ints = ring.download_centered_f64(&coeff)?;
        let n = params.n();
        let gap = n / (2 * self.slots);
        let inv = 1.0 / pt.scale;
        let real: Vec<f64> = (0..2 * self.slots).map(|k| ints[k * gap] * inv).collect();
        Ok(self.fft.decode_from_real(&real)?)
    }

    /// Decodes to real slot values (the real parts).
    pub fn decode(&self, pt: &Plaintext) -> Result<Vec<f64>> {
        Ok(self.decode_complex(pt)?.iter().map(|z| z.re).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lifted encoding (the `q_0` residues of the rounded coefficients, lifted to every limb
    /// by `RnsRing::upload_lifted`, the host lift the GPU's kernel is tested against) gives the
    /// words of the full residues, bit for bit: over `Q_ℓ` and over `Q_ℓ ∪ P`, full and sparse
    /// slots, the `f64` path and the 128-bit path, and (not lifted) coefficients beyond `q_0 / 2`.
    #[test]
    fn lifted_encoding_gives_the_full_residues_words() {
        let preset = crate::ckks::bootstrap::BootstrapPreset::by_name("boot_test_n12_insecure")
            .expect("preset");
        let params = preset.params.build().unwrap();
        let ctx = CkksContext::new(&params, Device::Cpu).unwrap();
        let ring = ctx.ring();
        assert!(params.q_primes()[0] > 1 << 55, "q_0 of the test chain");
        let mut s = 0x243f_6a88_85a3_08d3u64;
        let mut rnd = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let q1 = params.q_primes()[1] as f64;
        // (level, scale, magnitude of the values, lifted): the linear maps' diagonals at level 1
        // (scale q_1, the f64 path), large values, the 128-bit path below and beyond q_0 / 2.
        let cases = [
            (1, q1, 1.0, true),
            (1, q1, 1000.0, true),
            (2, 2f64.powi(56), 1.0, true),
            (2, 2f64.powi(66), 1.0, false),
        ];
        let mut lifted_cases = 0;
        for slots in [params.n() / 2, 16] {
            let enc = Encoder::with_slots(&ctx, slots).unwrap();
            for &(level, scale, mag, lifts) in &cases {
                let v: Vec<Complex64> = (0..slots)
                    .map(|_| Complex64::new(mag * rnd(), mag * rnd()))
                    .collect();
                for extended in [true, false] {
                    let what = format!("slots {slots}, level {level}, scale 2^{:.1}, |v| ≤ {mag}, extended {extended}", scale.log2());
                    let full = enc.encode_words(&v, level, scale, extended, false).unwrap();
                    assert!(!full.lifted, "{what}");
                    let lifted = enc.encode_words(&v, level, scale, extended, true).unwrap();
                    assert_eq!(lifted.lifted, lifts, "{what}: lifted");
                    assert_eq!(lifted.shape, full.shape, "{what}: shape");
                    if lifts {
                        assert_eq!(lifted.words.len(), params.n(), "{what}: one limb");
                        lifted_cases += 1;
                    }
                    let a = enc.finish(full, scale).unwrap();
                    let b = enc.finish(lifted, scale).unwrap();
                    let (wa, wb) = (
                        ring.download(&a.poly).unwrap(),
                        ring.download(&b.poly).unwrap(),
                    );
                    assert!(
                        wa.iter().filter(|&&w| w != 0).count() >= 2 * slots,
                        "{what}: words"
                    );
                    assert!(
                        wa == wb,
                        "{what}: first differing word {:?}",
                        wa.iter().zip(&wb).position(|(x, y)| x != y)
                    );
                }
            }
        }
        assert_eq!(lifted_cases, 12);
    }

    /// Equal to `f64::round` on ties, near-ties, both signs and magnitudes up to 2^51.
    #[test]
    fn round_half_away_is_f64_round() {
        let mut xs = vec![
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            -2.5,
            0.49999999999999994,
            -0.49999999999999994,
        ];
        xs.extend([
            3.0,
            -7.0,
            1e-300,
            -1e-300,
            2f64.powi(51) - 0.5,
            -(2f64.powi(51) - 0.5),
        ]);
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let mag = 2f64.powi((s % 52) as i32);
            let unit = (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
            xs.push(unit * mag);
            // Exact halves at every magnitude.
            xs.push(((s >> 12) % (1 << 40)) as f64 + if s & 1 == 0 { 0.5 } else { -0.5 });
        }
        for x in xs {
            assert_eq!(round_half_away(x), x.round() as i64, "{x:e}");
        }
    }
}
