//! Raw encoder throughput without Python: `cargo run --release -p bytepair-core --example
//! encode_speed -- [cl100k|o200k|llama3] [english|code|multilingual]`. Reads `BYTEPAIR_SHARED` (default `../shared`).

use std::time::Instant;

use bytepair_core::pretokenize::patterns;
use bytepair_core::{Encoder, RankEncoder};

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
    let enc = RankEncoder::new(ranks, [], pattern)?;
    // An optional second argument picks one category and skips the worst-case inputs.
    let only = std::env::args().nth(2);
    for category in ["english", "code", "multilingual"] {
        if only.as_deref().is_some_and(|c| c != category) {
            continue;
        }
        let mut docs = Vec::new();
        for entry in std::fs::read_dir(format!("{shared}/corpus/{category}"))? {
            let text = std::fs::read_to_string(entry?.path())?;
            docs.extend(text.split("\n\n").map(str::to_owned));
        }
        let bytes: usize = docs.iter().map(String::len).sum();
        // Best of three: the first pass also builds the tables of the linear-time merge.
        let mut secs = f64::INFINITY;
        let mut n = 0;
        for _ in 0..3 {
            let start = Instant::now();
            n = 0;
            for d in &docs {
                n += enc.encode_ordinary(d)?.len();
            }
            secs = secs.min(start.elapsed().as_secs_f64());
        }
        println!(
            "{category}: {:.1} MB/s ({n} tokens)",
            bytes as f64 / secs / 1e6
        );
    }
    if only.is_some() {
        return Ok(());
    }
    let prose: String = std::fs::read_to_string(format!(
        "{shared}/corpus/english/gutenberg_2600_tolstoy_war_and_peace.txt"
    ))?;
    let t = Instant::now();
    enc.encode_ordinary(&prose)?;
    let base = t.elapsed().as_secs_f64() / prose.len() as f64;
    let mut seed: u64 = 1;
    let random: String = (0..1_000_000)
        .map(|_| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            char::from(b'a' + ((seed >> 33) % 26) as u8)
        })
        .collect();
    let mut inputs = vec![
        ("1M spaces".to_owned(), " ".repeat(1_000_000)),
        ("random letters 1 MB".to_owned(), random),
    ];
    // The long-run files of the edge corpus.
    for file in [
        "run_letter_a_500k.txt",
        "ws_spaces_200k.txt",
        "ws_spaces_word_spaces_300k.txt",
        "ws_newlines_lf_150k.txt",
        "ws_tabs_150k.txt",
        "digits_long_runs.txt",
        "runs_letters_various_scripts.txt",
        "base64_hex_blobs.txt",
    ] {
        let text = std::fs::read_to_string(format!("{shared}/corpus/edge/{file}"))?;
        inputs.push((file.to_owned(), text));
    }
    for (label, text) in inputs {
        // Best of three: the first long piece also builds the tables of the linear-time merge.
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let t = Instant::now();
            enc.encode_ordinary(&text)?;
            best = best.min(t.elapsed().as_secs_f64());
        }
        let per = best / text.len() as f64;
        println!(
            "{label}: {:.1} ns/byte, {:.1}x prose",
            per * 1e9,
            per / base
        );
    }
    Ok(())
}
