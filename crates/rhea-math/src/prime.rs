//! NTT-friendly prime generation.
