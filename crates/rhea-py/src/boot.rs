//! Bootstrapping: `rhea.ckks.BootstrapPreset` and `rhea.ckks.Bootstrapper`.

use std::sync::Arc;

use pyo3::prelude::*;
use rhea::ckks::bootstrap::{
    BootstrapConfig, BootstrapPreset as RPreset, Bootstrapper as RBootstrapper,
};

use rhea::ckks::{DiagonalStorage, RotationKeys};

use crate::ckks::{lock, CkksContext, CkksKeyGenerator};
use crate::ckks_eval::Ciphertext;
use crate::errors::{invalid, run};
use crate::keys::SecretKey;
use crate::params::CkksParameters;

/// A named bootstrappable parameter set with its pipeline: ``BootstrapPreset.by_name(name)``
/// (names from ``BootstrapPreset.names()``); ``params`` builds the parameters.
#[pyclass(module = "rhea.ckks", frozen)]
pub struct BootstrapPreset {
    inner: RPreset,
}

#[pymethods]
impl BootstrapPreset {
    /// The presets as ``(name, purpose)`` pairs (the 128-bit ones first).
    #[staticmethod]
    fn presets() -> Vec<(&'static str, &'static str)> {
        RPreset::all()
            .into_iter()
            .map(|p| (p.name, p.purpose))
            .collect()
    }
    /// The preset ``name``.
    #[staticmethod]
    fn by_name(py: Python<'_>, name: &str) -> PyResult<Self> {
        RPreset::by_name(name)
            .map(|inner| Self { inner })
            .ok_or_else(|| {
                let names: Vec<_> = RPreset::all().iter().map(|p| p.name).collect();
                invalid(
                    py,
                    format!(
                        "no bootstrapping preset named {name:?}; the presets are {}",
                        names.join(", ")
                    ),
                )
            })
    }
    /// The name.
    #[getter]
    fn name(&self) -> &'static str {
        self.inner.name
    }
    /// What it is for.
    #[getter]
    fn purpose(&self) -> &'static str {
        self.inner.purpose
    }
    /// The levels the pipeline consumes.
    #[getter]
    fn depth(&self) -> usize {
        self.inner.config.depth()
    }
    /// The parameters, validated.
    #[getter]
    fn params(&self, py: Python<'_>) -> PyResult<CkksParameters> {
        let lit = &self.inner.params;
        Ok(CkksParameters {
            inner: run(py, || lit.build())?,
        })
    }
    fn __repr__(&self) -> String {
        format!(
            "BootstrapPreset({:?}: {})",
            self.inner.name, self.inner.purpose
        )
    }
}

/// Refreshes ciphertexts at ``input_level`` or above to ``output_level`` (SlotToCoeff runs first,
/// on the chain's lowest levels: a ciphertext below ``input_level`` cannot be refreshed). Built from a context, its key
/// generator and secret key (it generates every key it needs: relinearisation, rotations,
/// conjugation, encapsulation), and the pipeline of ``preset`` (default: full slots).
/// Give it to an ``Evaluator(..., bootstrapper=boot)`` for automatic bootstrapping.
/// ``fewest_keys`` (a few rotation keys per DFT level) and ``compact_matrices`` (one limb per
/// DFT diagonal, expanded at each bootstrap) trade time for memory on smaller cards.
#[pyclass(module = "rhea.ckks", frozen)]
pub struct Bootstrapper {
    pub(crate) inner: Arc<RBootstrapper>,
}

#[pymethods]
impl Bootstrapper {
    #[new]
    #[pyo3(signature = (ctx, keygen, sk, preset = None, *, fewest_keys = false, compact_matrices = false))]
    fn new(
        py: Python<'_>,
        ctx: &CkksContext,
        keygen: &CkksKeyGenerator,
        sk: &SecretKey,
        preset: Option<&BootstrapPreset>,
        fewest_keys: bool,
        compact_matrices: bool,
    ) -> PyResult<Self> {
        let c = &ctx.inner;
        let mut config = match preset {
            Some(p) => p.inner.config.clone(),
            None => BootstrapConfig::full_slots(c),
        };
        if fewest_keys {
            config.rotation_keys = RotationKeys::Fewest;
        }
        if compact_matrices {
            config.diagonal_storage = DiagonalStorage::Compact;
        }
        let (kg, sk) = (&keygen.inner, &*sk.inner);
        let b = run(py, move || RBootstrapper::new(c, &mut lock(kg), sk, config))?;
        Ok(Self { inner: Arc::new(b) })
    }
    /// A fresh ciphertext at ``output_level`` with the message of ``ct`` (complex slots).
    fn bootstrap(&self, py: Python<'_>, ct: PyRef<'_, Ciphertext>) -> PyResult<Ciphertext> {
        let (b, c) = (&*self.inner, &ct.inner);
        let out = run(py, || b.bootstrap(c))?;
        Ok(Ciphertext::new(out, ct.eval.clone()))
    }
    /// ``bootstrap`` for a message known to be real (cheaper).
    fn bootstrap_real(&self, py: Python<'_>, ct: PyRef<'_, Ciphertext>) -> PyResult<Ciphertext> {
        let (b, c) = (&*self.inner, &ct.inner);
        let out = run(py, || b.bootstrap_real(c))?;
        Ok(Ciphertext::new(out, ct.eval.clone()))
    }
    /// Two ciphertexts of real slots refreshed by one bootstrapping (same scale needed).
    fn bootstrap_two_real(
        &self,
        py: Python<'_>,
        a: PyRef<'_, Ciphertext>,
        b: PyRef<'_, Ciphertext>,
    ) -> PyResult<(Ciphertext, Ciphertext)> {
        let (boot, x, y) = (&*self.inner, &a.inner, &b.inner);
        let (ra, rb) = run(py, || boot.bootstrap_two_real(x, y))?;
        Ok((
            Ciphertext::new(ra, a.eval.clone()),
            Ciphertext::new(rb, b.eval.clone()),
        ))
    }
    /// Every ciphertext of ``cts`` bootstrapped (all checked before any work).
    fn bootstrap_many(
        &self,
        py: Python<'_>,
        cts: Vec<PyRef<'_, Ciphertext>>,
    ) -> PyResult<Vec<Ciphertext>> {
        self.many(py, &cts, RBootstrapper::bootstrap_many)
    }
    /// Ciphertexts of real slots, two per bootstrapping (pairs of equal scales).
    fn bootstrap_many_real(
        &self,
        py: Python<'_>,
        cts: Vec<PyRef<'_, Ciphertext>>,
    ) -> PyResult<Vec<Ciphertext>> {
        self.many(py, &cts, RBootstrapper::bootstrap_many_real)
    }
    /// The levels a bootstrap consumes.
    #[getter]
    fn depth(&self) -> usize {
        self.inner.depth()
    }
    /// The level of a refreshed ciphertext.
    #[getter]
    fn output_level(&self) -> usize {
        self.inner.output_level()
    }
    /// The lowest level a ciphertext can be bootstrapped from (SlotToCoeff's levels).
    #[getter]
    fn input_level(&self) -> usize {
        self.inner.input_level()
    }
    /// The levels a refreshed ciphertext has for the user: ``output_level - input_level``.
    #[getter]
    fn user_levels(&self) -> usize {
        self.inner.user_levels()
    }
    /// The scale of a refreshed ciphertext.
    #[getter]
    fn output_scale(&self) -> f64 {
        self.inner.output_scale()
    }
    /// The bytes of its evaluation keys.
    #[getter]
    fn key_bytes(&self) -> u64 {
        self.inner.key_bytes()
    }
    /// The bytes of its encoded DFT matrices (0 before the first bootstrap encodes them).
    #[getter]
    fn matrix_bytes(&self) -> u64 {
        self.inner.matrix_bytes()
    }
    fn __repr__(&self) -> String {
        format!(
            "Bootstrapper(depth={}, output_level={}, input_level={}, key_bytes={})",
            self.inner.depth(),
            self.inner.output_level(),
            self.inner.input_level(),
            self.inner.key_bytes()
        )
    }
}

impl Bootstrapper {
    /// `f` (one of the batch bootstraps) on `cts`, the GIL released; each result keeps its
    /// input's evaluator.
    fn many(
        &self,
        py: Python<'_>,
        cts: &[PyRef<'_, Ciphertext>],
        f: fn(
            &RBootstrapper,
            &[rhea::ckks::Ciphertext],
        ) -> rhea::Result<Vec<rhea::ckks::Ciphertext>>,
    ) -> PyResult<Vec<Ciphertext>> {
        let inputs: Vec<_> = cts.iter().map(|c| c.inner.clone()).collect();
        let boot = &*self.inner;
        let outs = run(py, || f(boot, &inputs))?;
        Ok(outs
            .into_iter()
            .zip(cts)
            .map(|(o, c)| Ciphertext::new(o, c.eval.clone()))
            .collect())
    }
}

/// Registers the classes of this module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<BootstrapPreset>()?;
    m.add_class::<Bootstrapper>()?;
    Ok(())
}
