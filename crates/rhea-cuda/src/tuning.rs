//! Per-device tuning: the choices that depend on the device and not on the data, made once
//! when a [`GpuDevice`](crate::GpuDevice) is opened ([`Tuning::for_compute_capability`]) and
//! fixed for its life. No setting here changes a computed word: every choice picks between
//! kernels that are bit-identical (the tests run both). `rhea info` prints them.
//!
//! Replaces the `RHEA_PDL` and `RHEA_NTT_F64` / `RHEA_NTT_F64_INV` environment variables of
//! earlier versions (no environment variable changes what the library computes or how).

/// The tuning a device runs with ([`GpuDevice::tuning`](crate::GpuDevice::tuning)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tuning {
    /// Kernels written for it are launched with programmatic dependent launch (each starts
    /// while the previous one drains; `launch.rs`, `docs/cuda-backend.md`): compute capability
    /// 9.0 or later, where the hardware has it.
    pub programmatic_dependent_launch: bool,
    /// The forward NTTs with a fused epilogue (the ModDown's, the rescale's) run the rows whose
    /// prime is below 2^46 with FP64 butterflies (`kernels/fp64.cuh`), beside the integer rows.
    /// On: measured faster on the H100 (BENCHMARKS.md), the same words. A table set can
    /// override it ([`DeviceNttTables::set_fp64_rows`](crate::ntt::DeviceNttTables::set_fp64_rows)).
    pub fp64_forward_rows: bool,
    /// The ModUp's scaled inverse NTT runs the rows whose prime is below 2^46 with FP64
    /// butterflies. On, as [`Tuning::fp64_forward_rows`]; a table set can override it
    /// ([`DeviceNttTables::set_fp64_inverse`](crate::ntt::DeviceNttTables::set_fp64_inverse)).
    pub fp64_inverse_rows: bool,
}

impl Tuning {
    /// The measured defaults for a device of compute capability `(major, minor)`: PDL from 9.0;
    /// FP64 rows on (measured on the H100; the default everywhere, since the words do not
    /// depend on it).
    pub fn for_compute_capability(major: u32, _minor: u32) -> Self {
        Self {
            programmatic_dependent_launch: major >= 9,
            fp64_forward_rows: true,
            fp64_inverse_rows: true,
        }
    }
}

impl std::fmt::Display for Tuning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let on = |b: bool| if b { "on" } else { "off" };
        write!(
            f,
            "PDL {}, FP64 NTT rows: forward {}, inverse {}",
            on(self.programmatic_dependent_launch),
            on(self.fp64_forward_rows),
            on(self.fp64_inverse_rows)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pdl_starts_at_compute_capability_9() {
        assert!(!Tuning::for_compute_capability(8, 9).programmatic_dependent_launch);
        assert!(Tuning::for_compute_capability(9, 0).programmatic_dependent_launch);
        assert!(Tuning::for_compute_capability(10, 0).programmatic_dependent_launch);
        let t = Tuning::for_compute_capability(9, 0);
        assert_eq!(
            t.to_string(),
            "PDL on, FP64 NTT rows: forward on, inverse on"
        );
    }
}
