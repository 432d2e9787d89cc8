//! NTT benchmark (placeholder until the NTT lands).
fn main() {}
