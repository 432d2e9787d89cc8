//! Bootstrapping many ciphertexts at once: [`Bootstrapper::bootstrap_many`] and, for real
//! slots, two per bootstrapping ([`Bootstrapper::bootstrap_many_real`]).

use super::Bootstrapper;
use crate::ckks::Ciphertext;
use crate::error::{Error, Result};

impl Bootstrapper {
    /// Every ciphertext of `cts` refreshed as [`Bootstrapper::bootstrap`] refreshes it (the
    /// same words), in order. All are checked before any work: one of other parameters or
    /// slots, or with three components, fails the call and nothing runs. The transforms'
    /// matrices and the keys are resident and shared; each ciphertext costs one bootstrapping
    /// (for real slots, [`Bootstrapper::bootstrap_many_real`] halves that).
    ///
    /// Errors: as [`Bootstrapper::bootstrap`], for the first ciphertext that fails.
    pub fn bootstrap_many(&self, cts: &[Ciphertext]) -> Result<Vec<Ciphertext>> {
        for ct in cts {
            self.check_input(ct)?;
        }
        cts.iter().map(|ct| self.bootstrap(ct)).collect()
    }

    /// Ciphertexts of real slots refreshed two per bootstrapping
    /// ([`Bootstrapper::bootstrap_two_real`]: packed as `a + i·b`), the imaginary parts removed:
    /// `⌈k/2⌉` bootstrappings for `k` ciphertexts, in order. Two ciphertexts are paired when
    /// their scales are equal (each pair with the first later one of the same scale); one left
    /// without a partner goes through [`Bootstrapper::bootstrap_real`]. All are checked before
    /// any work.
    ///
    /// ```
    /// use rhea::ckks::bootstrap::{BootstrapPreset, Bootstrapper};
    /// use rhea::ckks::{CkksContext, Decryptor, Encoder, Encryptor, KeyGenerator};
    /// use rhea::Device;
    ///
    /// let preset = BootstrapPreset::by_name("boot_test_n12_insecure").unwrap(); // INSECURE
    /// let ctx = CkksContext::new(&preset.params.build()?, Device::Cpu)?;
    /// let mut keygen = KeyGenerator::from_seed(&ctx, [1; 32]);
    /// let sk = keygen.secret_key()?;
    /// let boot = Bootstrapper::new(&ctx, &mut keygen, &sk, preset.config)?;
    /// let (encoder, encryptor) = (Encoder::new(&ctx)?, Encryptor::with_secret_key(&ctx, &sk)?);
    /// let inputs: Vec<Vec<f64>> = (0..3)
    ///     .map(|t| (0..encoder.slots()).map(|i| ((i * 7 + t) % 19) as f64 / 19.0 - 0.5).collect())
    ///     .collect();
    /// let cts = inputs
    ///     .iter()
    ///     .map(|x| encryptor.encrypt(&encoder.encode(x)?))
    ///     .collect::<Result<Vec<_>, _>>()?;
    /// let before = ctx.keyswitches();
    /// let fresh = boot.bootstrap_many_real(&cts)?; // two bootstrappings for three
    /// let decryptor = Decryptor::new(&ctx, &sk)?;
    /// for (ct, x) in fresh.iter().zip(&inputs) {
    ///     assert_eq!(ct.level(), boot.output_level());
    ///     let got = encoder.decode(&decryptor.decrypt(ct)?)?;
    ///     let err = got.iter().zip(x).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
    ///     assert!(err < 1e-4, "{err}");
    /// }
    /// # Ok::<(), rhea::Error>(())
    /// ```
    ///
    /// Errors: as [`Bootstrapper::bootstrap`], for the first ciphertext that fails.
    pub fn bootstrap_many_real(&self, cts: &[Ciphertext]) -> Result<Vec<Ciphertext>> {
        for ct in cts {
            self.check_input(ct)?;
        }
        let mut out: Vec<Option<Ciphertext>> = (0..cts.len()).map(|_| None).collect();
        let mut paired = vec![false; cts.len()];
        for a in 0..cts.len() {
            if paired[a] {
                continue;
            }
            paired[a] = true;
            let partner = (a + 1..cts.len()).find(|&b| !paired[b] && cts[b].scale == cts[a].scale);
            match partner {
                Some(b) => {
                    paired[b] = true;
                    let (ra, rb) = self.bootstrap_two_real(&cts[a], &cts[b])?;
                    out[a] = Some(ra);
                    out[b] = Some(rb);
                }
                None => out[a] = Some(self.bootstrap_real(&cts[a])?),
            }
        }
        out.into_iter()
            .map(|c| {
                c.ok_or_else(|| {
                    Error::InvalidInput("bootstrap_many_real: a ciphertext left".into())
                })
            })
            .collect()
    }
}
