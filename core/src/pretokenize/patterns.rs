//! The pre-tokenizer patterns of the well-known vocabularies, as their libraries spell them.
//! They are written only here: the bindings export [`NAMED`] and `bytepair.patterns` reads it.

use super::Scanner;

/// GPT-2, r50k_base, p50k_base (tiktoken's spelling, with possessive quantifiers).
pub const GPT2: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
/// The original GPT-2 spelling (openai/gpt-2, whisper, Hugging Face ByteLevel): same pieces.
pub const GPT2_ORIGINAL: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
/// cl100k_base.
pub const CL100K: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
/// o200k_base (and Llama 4).
pub const O200K: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
);
/// Llama 3 (and OLMo 2).
pub const LLAMA3: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// Mistral's tekken (its `tekken.json` files' `config.pattern`): o200k without contractions,
/// one digit per piece.
pub const TEKKEN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*",
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
);
/// Qwen2 (and Qwen2.5, Qwen3): Llama 3's pattern with one digit per piece.
pub const QWEN2: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Every pattern above by its name in `bytepair.patterns` (lower case), for the bindings.
pub const NAMED: [(&str, &str); 7] = [
    ("gpt2", GPT2),
    ("gpt2_original", GPT2_ORIGINAL),
    ("cl100k", CL100K),
    ("o200k", O200K),
    ("llama3", LLAMA3),
    ("tekken", TEKKEN),
    ("qwen2", QWEN2),
];

/// The scanner that gives exactly this pattern's pieces, if there is one.
pub fn recognise(pattern: &str) -> Option<Scanner> {
    match pattern {
        GPT2 | GPT2_ORIGINAL => Some(Scanner::Gpt2),
        CL100K => Some(Scanner::Cl100k),
        O200K => Some(Scanner::O200k),
        LLAMA3 => Some(Scanner::Llama3),
        TEKKEN => Some(Scanner::Tekken),
        QWEN2 => Some(Scanner::Qwen2),
        _ => None,
    }
}
