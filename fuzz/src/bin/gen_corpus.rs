//! Writes the seed corpus (valid encodings of every object in every mode, with the selector
//! byte of their reader) to `corpus/readers` (or the directory given).

fn main() -> std::io::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "corpus/readers".to_string());
    std::fs::create_dir_all(&dir)?;
    let corpus = rhea_fuzz::seed_corpus();
    for (i, input) in corpus.iter().enumerate() {
        std::fs::write(format!("{dir}/seed-{i:03}"), input)?;
    }
    println!("{} seed inputs written to {dir}", corpus.len());
    Ok(())
}
