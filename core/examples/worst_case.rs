//! Time (or profile) the merge on a megabyte of random letters, one piece, or on a file:
//! `cargo run --release -p bytepair-core --example worst_case -- [cl100k|o200k|llama3] [file]`.
//! Reads `BYTEPAIR_SHARED` (default `../shared`).

use std::time::Instant;

use bytepair_core::CoreEncoder;
use bytepair_core::pretokenize::patterns;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let shared = std::env::var("BYTEPAIR_SHARED").unwrap_or_else(|_| "../shared".into());
    let which = std::env::args().nth(1).unwrap_or_else(|| "cl100k".into());
    let (file, pattern) = match which.as_str() {
        "o200k" => ("o200k_base/o200k_base.tiktoken", patterns::O200K),
        "llama3" => ("llama3/tokenizer.model", patterns::LLAMA3),
        _ => ("cl100k_base/cl100k_base.tiktoken", patterns::CL100K),
    };
    let data = std::fs::read(format!("{shared}/vocab/{file}"))?;
    let ranks = bytepair_core::formats::tiktoken::parse(&data)?;
    let enc = CoreEncoder::new(ranks, [], pattern)?;
    let mut seed: u64 = 1;
    let mut random: String = (0..1_000_000)
        .map(|_| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            char::from(b'a' + ((seed >> 33) % 26) as u8)
        })
        .collect();
    if let Some(file) = std::env::args().nth(2) {
        random = std::fs::read_to_string(file)?;
    }
    let mut best = f64::INFINITY;
    for _ in 0..20 {
        let t = Instant::now();
        enc.encode_ordinary(&random)?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!("{:.1} ns/byte", best * 1e9 / random.len() as f64);
    Ok(())
}
