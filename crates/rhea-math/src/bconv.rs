//! Fast base conversion, ModUp, ModDown and rescaling.
