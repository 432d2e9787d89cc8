//! The BGV encoder: batch encoding (`N` slots, a `2 × N/2` matrix) through the NTT modulo `t`,
//! and coefficient encoding.

use super::{BgvContext, Decrypted, Plaintext};
use crate::error::{Error, Result};

/// Encodes integer vectors into plaintexts and decodes decryptions back.
///
/// **Batching** (when `t` is a prime `≡ 1 (mod 2N)`): a vector of `N` values modulo `t` is a
/// `2 × N/2` matrix, slot `s = r·N/2 + j` (row `r ∈ {0, 1}`, column `j`) holding `m(ψ^e)` for
/// `e = (-1)^r · 5^j mod 2N` (`ψ` a primitive `2N`-th root of unity modulo `t`). Products and sums
/// of plaintexts act slot by slot; [`super::Evaluator::rotate_rows`] by `k` moves column `j + k`
/// of each row to column `j` (cyclically), and [`super::Evaluator::rotate_columns`] swaps the two
/// rows.
///
/// **Coefficient encoding**: the values are the coefficients of `m` (any `t ≥ 2`).
///
/// ```
/// use rhea::bgv::{BgvContext, BgvParametersLiteral, Encoder};
/// let params = BgvParametersLiteral::test_n12_levels5_insecure().build()?;
/// let ctx = BgvContext::new(&params, rhea::Device::best())?;
/// let encoder = Encoder::new(&ctx)?;
/// let coeffs = encoder.slots_to_coeffs(&[1, 2, 3])?;
/// assert_eq!(&encoder.coeffs_to_slots(&coeffs)?[..4], &[1, 2, 3, 0]);
/// # Ok::<(), rhea::Error>(())
/// ```
pub struct Encoder {
    ctx: BgvContext,
}

impl Encoder {
    /// An encoder for `ctx` (batching is available when [`super::BgvParameters::batching`]).
    pub fn new(ctx: &BgvContext) -> Result<Self> {
        Ok(Self { ctx: ctx.clone() })
    }

    /// The number of slots, `N`.
    pub fn slots(&self) -> usize {
        self.ctx.params().n()
    }

    fn batch(&self) -> Result<&super::context::BatchTables> {
        self.ctx.tables.batch.as_ref().ok_or_else(|| {
            Error::InvalidParameters(format!(
                "batching needs a prime plaintext modulus t ≡ 1 (mod 2N = {}), t = {} is not; \
                 use coefficient encoding (`Encoder::encode_coeffs`) or such a t (e.g. `log_t`)",
                2 * self.ctx.params().n(),
                self.ctx.t()
            ))
        })
    }

    fn check_values(&self, values: &[u64]) -> Result<Vec<u64>> {
        let n = self.ctx.params().n();
        let t = self.ctx.t();
        if values.len() > n {
            return Err(Error::InvalidInput(format!(
                "{} values for N = {n} slots",
                values.len()
            )));
        }
        if let Some(i) = values.iter().position(|&v| v >= t) {
            return Err(Error::PlaintextOutOfRange {
                value: values[i].into(),
                index: i,
                t,
                range: "[0, t)",
            });
        }
        let mut out = values.to_vec();
        out.resize(n, 0);
        Ok(out)
    }

    /// The coefficients (in `[0, t)`) of the polynomial whose slots hold `values` (at most `N`
    /// values in `[0, t)`, zero-padded): the inverse NTT modulo `t`.
    pub fn slots_to_coeffs(&self, values: &[u64]) -> Result<Vec<u64>> {
        let b = self.batch()?;
        let values = self.check_values(values)?;
        let mut evals = vec![0u64; values.len()];
        for (s, &v) in values.iter().enumerate() {
            evals[b.index[s]] = v;
        }
        b.ntt.inverse(&mut evals)?;
        Ok(evals)
    }

    /// The slot values of the polynomial with coefficients `coeffs` (`N` values in `[0, t)`): the
    /// forward NTT modulo `t`.
    pub fn coeffs_to_slots(&self, coeffs: &[u64]) -> Result<Vec<u64>> {
        let b = self.batch()?;
        let mut evals = self.check_values(coeffs)?;
        b.ntt.forward(&mut evals)?;
        Ok(b.index.iter().map(|&i| evals[i]).collect())
    }

    /// Batch-encodes `values` (at most `N`, each in `[0, t)`, zero-padded) at the top level.
    pub fn encode(&self, values: &[u64]) -> Result<Plaintext> {
        self.encode_at(values, self.ctx.params().max_level())
    }

    /// Batch-encodes `values` at `level`.
    ///
    /// Errors: [`Error::InvalidParameters`] without batching, [`Error::PlaintextOutOfRange`]
    /// for a value not below `t`, [`Error::InvalidInput`] for too many values or a level above
    /// the maximum.
    pub fn encode_at(&self, values: &[u64], level: usize) -> Result<Plaintext> {
        let coeffs = self.slots_to_coeffs(values)?;
        self.lift(&coeffs, level)
    }

    /// Batch-encodes signed values, each in `(-t/2, t/2]` (the range [`Encoder::decode_signed`]
    /// returns), at `level`.
    ///
    /// Errors: [`Error::PlaintextOutOfRange`] for a value outside `(-t/2, t/2]` (values are
    /// never reduced silently: a value that wraps modulo `t` decrypts to another number), and
    /// the errors of [`Encoder::encode_at`].
    ///
    /// ```
    /// use rhea::bgv::{BgvContext, BgvParametersLiteral, Encoder};
    /// let params = BgvParametersLiteral::test_n12_levels5_insecure().build()?;
    /// let ctx = BgvContext::new(&params, rhea::Device::Cpu)?;
    /// let encoder = Encoder::new(&ctx)?;
    /// let half = (ctx.t() / 2) as i64;
    /// assert!(encoder.encode_signed_at(&[-half, half, -1], 0).is_ok());
    /// assert!(matches!(
    ///     encoder.encode_signed_at(&[half + 1], 0),
    ///     Err(rhea::Error::PlaintextOutOfRange { index: 0, .. })
    /// ));
    /// # Ok::<(), rhea::Error>(())
    /// ```
    pub fn encode_signed_at(&self, values: &[i64], level: usize) -> Result<Plaintext> {
        let t = &self.ctx.tables.t;
        let tv = i128::from(t.value());
        if let Some(i) = values.iter().position(|&x| {
            let twice = 2 * i128::from(x);
            twice <= -tv || twice > tv
        }) {
            return Err(Error::PlaintextOutOfRange {
                value: values[i].into(),
                index: i,
                t: t.value(),
                range: "(-t/2, t/2]",
            });
        }
        let v: Vec<u64> = values.iter().map(|&x| t.reduce_i64(x)).collect();
        self.encode_at(&v, level)
    }

    /// Coefficient-encodes `coeffs` (at most `N`, each in `[0, t)`, zero-padded) at `level`.
    pub fn encode_coeffs(&self, coeffs: &[u64], level: usize) -> Result<Plaintext> {
        let coeffs = self.check_values(coeffs)?;
        self.lift(&coeffs, level)
    }

    /// Lifts `m mod t` (`N` canonical coefficients) to its centred representative over the Q
    /// limbs of `level`, NTT form.
    fn lift(&self, coeffs: &[u64], level: usize) -> Result<Plaintext> {
        let params = self.ctx.params();
        if level > params.max_level() {
            return Err(Error::InvalidInput(format!(
                "level {level} is above the maximum level {}",
                params.max_level()
            )));
        }
        let t = &self.ctx.tables.t;
        let centred: Vec<i64> = coeffs.iter().map(|&c| t.center(c)).collect();
        let l1: f64 = centred.iter().map(|&c| c.unsigned_abs() as f64).sum();
        let ring = self.ctx.ring();
        let mut poly = ring.from_signed(self.ctx.device(), &centred, self.ctx.shape_at(level))?;
        ring.ntt_forward(&mut poly)?;
        Ok(Plaintext {
            poly,
            log_norm: self.ctx.noise.plaintext(l1),
            params_id: params.id(),
        })
    }

    fn check_decrypted(&self, d: &Decrypted) -> Result<()> {
        self.ctx.rlwe().check_id("decode", d.params_id)
    }

    /// The `N` slot values (in `[0, t)`) of a decryption.
    pub fn decode(&self, d: &Decrypted) -> Result<Vec<u64>> {
        self.check_decrypted(d)?;
        self.coeffs_to_slots(&d.coeffs)
    }

    /// The `N` slot values of a decryption, centred in `(-t/2, t/2]`.
    pub fn decode_signed(&self, d: &Decrypted) -> Result<Vec<i64>> {
        let t = &self.ctx.tables.t;
        Ok(self.decode(d)?.iter().map(|&x| t.center(x)).collect())
    }

    /// The `N` coefficients (in `[0, t)`) of a decryption (coefficient encoding).
    pub fn decode_coeffs(&self, d: &Decrypted) -> Result<Vec<u64>> {
        self.check_decrypted(d)?;
        Ok(d.coeffs.clone())
    }
}
