//! The `rhea` command-line tool.
fn main() {
    println!("rhea {}", env!("CARGO_PKG_VERSION"));
}
