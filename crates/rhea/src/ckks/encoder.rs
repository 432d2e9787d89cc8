//! The CKKS encoder: complex (or real) slot vectors ↔ plaintext polynomials, through the special
//! FFT of `rhea_math::fft`.

use num_complex::Complex64;
use rayon::prelude::*;
use rhea_math::fft::SpecialFft;
use rhea_math::Modulus;

use super::{CkksContext, Plaintext};
use crate::backend::{Device, Form, Poly, PolyShape};
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
        let host = self.encode_words(values, level, scale, false)?;
        self.finish(host, scale)
    }

    /// The NTT-form polynomials of many complex vectors at `level` and `scale` over the extended
    /// basis `Q_ℓ ∪ P` (plaintexts that multiply key-switching results before their ModDown:
    /// the linear transforms' diagonals), on the context's device; the host part in parallel,
    /// a bounded number of polynomials at a time.
    pub(crate) fn encode_extended_batch<V: AsRef<[Complex64]> + Sync>(
        &self,
        values: &[V],
        level: usize,
        scale: f64,
    ) -> Result<Vec<Poly>> {
        let mut out = Vec::with_capacity(values.len());
        for chunk in values.chunks(64) {
            let host = chunk
                .par_iter()
                .map(|v| self.encode_words(v.as_ref(), level, scale, true))
                .collect::<Result<Vec<_>>>()?;
            for h in host {
                out.push(self.finish(h, scale)?.poly);
            }
        }
        Ok(out)
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
                self.encode_words(&z, level, scale, false)
            })
            .collect::<Result<Vec<_>>>()?;
        host.into_iter().map(|h| self.finish(h, scale)).collect()
    }

    /// The host part of an encoding: the coefficient-form residues (`[limb][N]` words) of the
    /// plaintext of `values` at `level` and `scale`, and their shape; for a GPU context, when
    /// every coefficient lies below `q_0 / 2` in magnitude (any scale up to ~2^58 with values
    /// near 1), only their residues modulo `q_0`, which the device lifts to every limb (1/ℓ of
    /// the host reductions and of the upload). `extended`: over `Q_ℓ ∪ P` (never lifted).
    fn encode_words(
        &self,
        values: &[Complex64],
        level: usize,
        scale: f64,
        extended: bool,
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
        let mut z = values.to_vec();
        z.resize(self.slots, Complex64::new(0.0, 0.0));

        let coeffs = self.fft.encode_to_real(&z)?;
        let max = coeffs.iter().fold(0.0f64, |m, c| m.max(c.abs()));
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
        let half = moduli[0].value() / 2;
        let on_gpu = !extended && matches!(self.ctx.device(), Device::Cuda(_));
        // The coefficients below 2^50 (`F64_PATH_MAX_LOG`) round and reduce in 64-bit words;
        // the others come as 128-bit integers from the double-double transform.
        let (lifted, words) = if log_max < F64_PATH_MAX_LOG {
            let ints: Vec<i64> = coeffs.iter().map(|&c| round_half_away(c * scale)).collect();
            let lifted = on_gpu && ints.iter().all(|v| v.unsigned_abs() <= half);
            let limbs = if lifted { &moduli[..1] } else { &moduli[..] };
            (lifted, residues(&ints, limbs, n, gap, Modulus::reduce_i64))
        } else {
            let ints = self.fft.encode_scaled_i128(&z, scale)?;
            let lifted = on_gpu && ints.iter().all(|v| v.unsigned_abs() <= u128::from(half));
            let limbs = if lifted { &moduli[..1] } else { &moduli[..] };
            (lifted, residues(&ints, limbs, n, gap, Modulus::reduce_i128))
        };
        Ok(HostWords {
            words,
            shape,
            lifted,
        })
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
    use super::round_half_away;

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
