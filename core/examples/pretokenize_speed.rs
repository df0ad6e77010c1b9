//! Pre-tokenizer throughput: the hand-written scanners against fancy-regex (what tiktoken uses)
//! on the shared corpus, per pattern. Run it with a release build:
//!
//! ```text
//! cargo run --release -p bytepair-core --example pretokenize_speed [--scanner-only] [FOLDER]...
//! ```
//!
//! `FOLDER`s are corpus folders (default: `english`, `code`, `multilingual`).
//!
//! `--scanner-only` skips the (slow) regex engine, for profiling the scanners.
//!
//! The shared data folder is `BYTEPAIR_SHARED` (default `../shared` beside the workspace).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bytepair_core::Pretokenizer;
use bytepair_core::pretokenize::patterns;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let shared = std::env::var_os("BYTEPAIR_SHARED").map_or_else(
        || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared")),
        PathBuf::from,
    );
    let mut folders: Vec<String> = std::env::args().skip(1).collect();
    let scanner_only = folders.iter().any(|a| a == "--scanner-only");
    folders.retain(|a| a != "--scanner-only");
    if folders.is_empty() {
        folders = vec!["english".into(), "code".into(), "multilingual".into()];
    }
    let cases = [
        ("gpt2", patterns::GPT2),
        ("cl100k", patterns::CL100K),
        ("o200k", patterns::O200K),
        ("llama3", patterns::LLAMA3),
    ];
    for folder in folders {
        let mut text = String::new();
        let mut paths: Vec<PathBuf> = std::fs::read_dir(shared.join("corpus").join(&folder))?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()?;
        paths.sort();
        for path in paths {
            text.push_str(&String::from_utf8_lossy(&std::fs::read(path)?));
        }
        let mb = text.len() as f64 / 1e6;
        println!("{folder}: {mb:.1} MB");
        println!(
            "  {:<8} {:>14} {:>14} {:>8} {:>10}",
            "pattern", "scanner MB/s", "regex MB/s", "speedup", "pieces"
        );
        for (name, pattern) in cases {
            let scanner = Pretokenizer::new(pattern)?;
            let regex = Pretokenizer::with_regex(pattern)?;
            let (scanner_time, pieces) = best_of(5, || count(&scanner, &text))?;
            let s = mb / scanner_time.as_secs_f64();
            if scanner_only {
                println!("  {name:<8} {s:>14.0} {:>14} {:>8} {pieces:>10}", "-", "-");
                continue;
            }
            let (regex_time, regex_pieces) = best_of(1, || count(&regex, &text))?;
            assert_eq!(pieces, regex_pieces, "{name}: piece counts differ");
            let r = mb / regex_time.as_secs_f64();
            println!(
                "  {name:<8} {s:>14.0} {r:>14.1} {:>7.0}x {pieces:>10}",
                s / r
            );
        }
    }
    Ok(())
}

fn count(p: &Pretokenizer, text: &str) -> Result<usize, bytepair_core::Error> {
    let mut n = 0usize;
    p.split(text, |piece| n += usize::from(!piece.is_empty()))?;
    Ok(n)
}

fn best_of<T>(
    runs: usize,
    mut f: impl FnMut() -> Result<T, bytepair_core::Error>,
) -> Result<(Duration, T), bytepair_core::Error> {
    let mut best: Option<(Duration, T)> = None;
    for _ in 0..runs {
        let start = Instant::now();
        let out = f()?;
        let took = start.elapsed();
        if best.as_ref().is_none_or(|(b, _)| took < *b) {
            best = Some((took, out));
        }
    }
    best.ok_or_else(|| bytepair_core::Error::Pattern("no runs".into()))
}
