//! The CKKS special FFT.
