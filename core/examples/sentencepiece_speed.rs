//! SentencePiece BPE throughput without Python: `cargo run --release -p bytepair-core --example
//! sentencepiece_speed -- [english|code|multilingual|FILE]` on Llama 2's `.model`, one call per
//! paragraph. Reads `BYTEPAIR_SHARED` (default `../shared`).

use std::time::Instant;

use bytepair_core::encoder::sentencepiece::{
    PieceKind, Prepend, SentencePieceEncoder, SentencePieceSpec,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let shared = std::env::var("BYTEPAIR_SHARED").unwrap_or_else(|_| "../shared".into());
    let data = std::fs::read(format!("{shared}/vocab/llama2/tokenizer.model"))?;
    let model = bytepair_core::formats::sentencepiece::parse(&data)?;
    let pieces = model
        .pieces
        .iter()
        .map(|(p, s, k)| {
            (
                p.clone(),
                *s,
                PieceKind::from_number(*k).unwrap_or(PieceKind::Normal),
            )
        })
        .collect();
    let mut spec = SentencePieceSpec::new(pieces);
    spec.byte_fallback = model.trainer.byte_fallback;
    spec.unk_id = Some(model.trainer.unk_id as u32);
    spec.prepend = if model.normalizer.add_dummy_prefix {
        Prepend::Always
    } else {
        Prepend::Never
    };
    spec.remove_extra_whitespaces = model.normalizer.remove_extra_whitespaces;
    spec.escape_whitespaces = model.normalizer.escape_whitespaces;
    if !model.normalizer.precompiled_charsmap.is_empty() {
        spec.precompiled_charsmap = Some(model.normalizer.precompiled_charsmap.clone());
    }
    let enc = SentencePieceEncoder::new(spec)?;
    let only = std::env::args().nth(1);
    let mut inputs = vec!["english", "code", "multilingual"];
    if let Some(file) = only.as_deref().filter(|o| o.contains('/')) {
        inputs = vec![file];
    }
    for category in inputs {
        if only.as_deref().is_some_and(|c| c != category) {
            continue;
        }
        let mut paths = Vec::new();
        if category.contains('/') {
            paths.push(std::path::PathBuf::from(category));
        } else {
            for entry in std::fs::read_dir(format!("{shared}/corpus/{category}"))? {
                paths.push(entry?.path());
            }
        }
        let mut docs = Vec::new();
        for path in paths {
            let text = std::fs::read_to_string(path)?;
            docs.extend(text.split("\n\n").map(str::to_owned));
        }
        let bytes: usize = docs.iter().map(String::len).sum();
        let mut secs = f64::INFINITY;
        let mut n = 0;
        for _ in 0..3 {
            let start = Instant::now();
            n = 0;
            let mut out = Vec::new();
            for d in &docs {
                out.clear();
                enc.encode_segment(d, true, &mut out);
                n += out.len();
            }
            secs = secs.min(start.elapsed().as_secs_f64());
        }
        println!(
            "{category}: {:.1} MB/s ({n} tokens)",
            bytes as f64 / secs / 1e6
        );
    }
    Ok(())
}
