//! Helpers shared by the fuzz targets: turning fuzz bytes into tricky text, and the oracles.

use bytepair_core::vocab::RankMap;
use bytepair_core::{Encoder, Rank, RankEncoder};

/// Strings where the pre-tokenizer patterns' classes and alternatives meet (each whitespace kind,
/// letters of every case class, marks, digits, contractions in both cases, punctuation, CRLF), and
/// the pieces of special tokens. Random bytes alone rarely reach these.
pub const ALPHABET: &[&str] = &[
    " ",
    " ",
    "  ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\u{a0}",
    "\u{3000}",
    "\u{85}",
    "\u{2028}",
    "\u{b}",
    "\u{1c}",
    "\u{200b}",
    "\u{200d}",
    "a",
    "b",
    "z",
    "A",
    "Z",
    "é",
    "É",
    "ß",
    "ǅ",
    "ʰ",
    "ー",
    "中",
    "한",
    "\u{301}",
    "\u{94d}",
    "7",
    "0",
    "٣",
    "½",
    "'",
    "'s",
    "'S",
    "'ll",
    "'LL",
    "'re",
    "'Ve",
    "ſ",
    "\u{212a}",
    ".",
    ",",
    "/",
    "!",
    "-",
    "_",
    "😀",
    "\u{1f3fb}",
    "<|",
    "|>",
    "<|endoftext|>",
    "<|im_start|>",
    "endoftext",
    "\u{fffd}",
];

/// Text from fuzz bytes. The first byte picks how: the rest as (lossy) UTF-8, or each byte as an
/// index into [`ALPHABET`].
pub fn text_from(data: &[u8]) -> String {
    match data.split_first() {
        None => String::new(),
        Some((mode, rest)) if mode & 1 == 0 => String::from_utf8_lossy(rest).into_owned(),
        Some((_, rest)) => rest
            .iter()
            .map(|&b| ALPHABET[usize::from(b) % ALPHABET.len()])
            .collect(),
    }
}

/// The textbook rank-greedy merge, quadratic and obviously right: the oracle of `encode`.
/// Repeatedly join the adjacent pair whose concatenation has the lowest rank (leftmost on ties).
pub fn naive_merge(piece: &[u8], ranks: &RankMap) -> Vec<Rank> {
    let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
    loop {
        let mut best: Option<(Rank, usize)> = None;
        for i in 0..parts.len().saturating_sub(1) {
            let joined = [parts[i].as_slice(), parts[i + 1].as_slice()].concat();
            match ranks.get(&joined) {
                Some(&r) if best.is_none_or(|(b, _)| r < b) => best = Some((r, i)),
                _ => {}
            }
        }
        let Some((_, i)) = best else { break };
        let right = parts.remove(i + 1);
        parts[i].extend(right);
    }
    parts.iter().map(|p| ranks[p]).collect()
}

/// Encode `text` the slow way: the encoder's own pre-tokenizer, then per piece tiktoken's rule: a
/// piece that is itself a token is that token, any other goes through [`naive_merge`]. (On a real
/// vocabulary every token is reachable by merges, so the first case changes nothing; on the
/// arbitrary vocabularies made here it does: "aaa" without "aa" is one token, as in tiktoken.)
pub fn naive_encode(encoder: &RankEncoder, text: &str) -> Vec<Rank> {
    let mut out = Vec::new();
    let pieces = encoder.pretokenizer().pieces(text).unwrap_or_default();
    for piece in pieces {
        match encoder.ranks().get(piece.as_bytes()) {
            Some(&rank) => out.push(rank),
            None => out.extend(naive_merge(piece.as_bytes(), encoder.ranks())),
        }
    }
    out
}

/// The 256 single bytes at ranks 0..=255, then `tokens` (duplicates and tokens shorter than two
/// bytes skipped).
pub fn vocabulary(tokens: impl IntoIterator<Item = Vec<u8>>) -> Vec<(Vec<u8>, Rank)> {
    let mut ranks: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], Rank::from(b))).collect();
    let mut seen: std::collections::HashSet<Vec<u8>> = ranks.iter().map(|t| t.0.clone()).collect();
    for token in tokens {
        if token.len() >= 2 && seen.insert(token.clone()) {
            let rank = ranks.len() as Rank;
            ranks.push((token, rank));
        }
    }
    ranks
}

/// A small vocabulary with many overlapping merges: every substring of 2 to 6 bytes of a few
/// sentences, in order of first appearance (so shorter, earlier pieces get lower ranks).
pub fn toy_vocabulary() -> Vec<(Vec<u8>, Rank)> {
    const TEXT: &str = "the cat sat on the mat. Hello world! it's 2024, don't panic \
                        héllo wörld 中文 <|endoftext|> aaaa    \n\n\t";
    let bytes = TEXT.as_bytes();
    let mut tokens = Vec::new();
    for len in 2..=6 {
        for window in bytes.windows(len) {
            tokens.push(window.to_vec());
        }
    }
    vocabulary(tokens)
}
