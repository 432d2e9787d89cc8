//! Samplers over a seedable CSPRNG.
