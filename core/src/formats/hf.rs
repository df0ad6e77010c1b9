//! The text formats of GPT-2 and Hugging Face: a vocabulary of strings in the GPT-2 byte alphabet
//! (`encoder.json`, `vocab.json`, `tokenizer.json`'s `model.vocab`) and a list of merges
//! (`vocab.bpe`, `merges.txt`, `model.merges`).
//!
//! The Python package parses the JSON and owns the policy (which file is which, what the errors
//! say about paths); this module does the per-token work that sits on the construction path:
//! decoding the byte alphabet, resolving merges to ids, checking them. It parses into plain
//! values ([`PairVocabulary`], ranks and specials); encoders are built from them in
//! [`crate::build`].

use rustc_hash::{FxHashMap, FxHashSet};

use crate::bytes::byte_map::bytes_to_unicode;
use crate::merge::pair::NONE;
use crate::vocab::RankMap;
use crate::vocab::pair_vocab::MissingByte;
use crate::vocab::pair_vocab::PairVocabulary;
use crate::{Error, Rank};

/// Ordinary tokens with their ranks.
pub type Ranks = Vec<(Vec<u8>, Rank)>;
/// Special tokens with their ids.
pub type Specials = Vec<(String, Rank)>;

/// Merges as strings, with where each came from (for error messages).
#[derive(Debug, Clone, Default)]
pub struct MergeList {
    pub merges: Vec<(String, String)>,
    /// 1-based line of each merge in its file; `None` for a JSON list (then errors name the index).
    pub lines: Option<Vec<usize>>,
}

impl MergeList {
    /// Where merge `i` is, for messages: `line 12` or `model.merges[11]` (a `tokenizer.json`).
    pub fn locate(&self, i: usize) -> String {
        match self.lines.as_ref().and_then(|l| l.get(i)) {
            Some(line) => format!("line {line}"),
            None => format!("model.merges[{i}]"),
        }
    }
}

/// Parse a merges file (`merges.txt`, `vocab.bpe`): one `left right` per line.
///
/// Lines starting with `#version` are headers (as `tokenizers` reads them; ollama's Llama 3.2
/// file has none). Other lines starting with `#` are real merges (`# #`). CRLF endings and blank
/// lines are accepted. Anything else malformed is an error naming the line.
pub fn parse_merges(data: &[u8]) -> Result<MergeList, Error> {
    let mut out = MergeList {
        merges: Vec::with_capacity(data.len() / 10),
        lines: Some(Vec::new()),
    };
    let mut lines = Vec::with_capacity(data.len() / 10);
    for (index, raw) in data.split(|&b| b == b'\n').enumerate() {
        let lineno = index + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.iter().all(u8::is_ascii_whitespace) || raw.starts_with(b"#version") {
            continue;
        }
        let line = std::str::from_utf8(raw)
            .map_err(|e| Error::InvalidVocabulary(format!("line {lineno}: not UTF-8 ({e})")))?;
        let mut halves = line.split(' ');
        match (halves.next(), halves.next(), halves.next()) {
            (Some(left), Some(right), None) if !left.is_empty() && !right.is_empty() => {
                out.merges.push((left.to_owned(), right.to_owned()));
                lines.push(lineno);
            }
            _ => {
                let shown: String = line.chars().take(80).collect();
                return Err(Error::InvalidVocabulary(format!(
                    "line {lineno}: expected two tokens separated by one space, got {shown:?}"
                )));
            }
        }
    }
    if out.merges.is_empty() {
        return Err(Error::InvalidVocabulary("the file holds no merges".into()));
    }
    out.lines = Some(lines);
    Ok(out)
}

/// The inverse of the GPT-2 byte map, built once and used for a whole vocabulary.
struct ByteDecoder {
    byte_of: [u16; 324],
}

impl ByteDecoder {
    fn new() -> Self {
        let mut byte_of = [u16::MAX; 324];
        for (b, c) in bytes_to_unicode().iter().enumerate() {
            if let Some(slot) = byte_of.get_mut(*c as usize) {
                *slot = b as u16;
            }
        }
        Self { byte_of }
    }

    /// The bytes of `text`, or the first character outside the map.
    fn decode(&self, text: &str) -> Result<Vec<u8>, char> {
        let mut out = Vec::with_capacity(text.len());
        for c in text.chars() {
            match self.byte_of.get(c as usize) {
                Some(&b) if b != u16::MAX => out.push(b as u8),
                _ => return Err(c),
            }
        }
        Ok(out)
    }

    fn token_bytes(&self, text: &str) -> (Vec<u8>, bool) {
        match self.decode(text) {
            Ok(bytes) => (bytes, true),
            Err(_) => (text.as_bytes().to_vec(), false),
        }
    }
}

/// A vocabulary string's bytes: decoded from the GPT-2 alphabet when every character is in it
/// (`true`), else its own UTF-8 (`false`) — the rule of `tokenizers`' `ByteLevel` decoder.
pub fn token_bytes(text: &str) -> (Vec<u8>, bool) {
    ByteDecoder::new().token_bytes(text)
}

/// The longest token text a merge may make. Building the encoder merges each token that merges
/// make once, from its bytes, at about 50 bytes of memory per byte; this keeps that cost within
/// a small multiple of the file (real vocabularies' longest tokens have a few hundred bytes).
pub const MAX_MERGED_TOKEN_LEN: usize = 1 << 20;

/// Resolve a Hugging Face vocabulary and its merges to ids (`tokenizers`' `BPE` model).
///
/// A merge `(a, b)` makes the token `a + b`; all three must be in the vocabulary. Ids must be
/// unique. Duplicate merges keep their last line, as in `tokenizers`. A merged token may have at
/// most [`MAX_MERGED_TOKEN_LEN`] bytes of text.
pub fn pair_vocabulary(
    vocab: &[(String, Rank)],
    merges: &MergeList,
) -> Result<PairVocabulary, Error> {
    let mut id_of: FxHashMap<&str, Rank> = FxHashMap::default();
    id_of.reserve(vocab.len());
    let mut token_of: FxHashMap<Rank, &str> = FxHashMap::default();
    token_of.reserve(vocab.len());
    let mut tokens = Vec::with_capacity(vocab.len());
    let decoder = ByteDecoder::new();
    for (text, id) in vocab {
        if let Some(other) = token_of.insert(*id, text) {
            return Err(Error::InvalidVocabulary(format!(
                "id {id} is given to {other:?} and {text:?}"
            )));
        }
        if id_of.insert(text, *id).is_some() {
            return Err(Error::InvalidVocabulary(format!(
                "token {text:?} appears twice"
            )));
        }
        let (bytes, in_alphabet) = decoder.token_bytes(text);
        tokens.push((bytes, *id, in_alphabet));
    }
    let mut resolved = Vec::with_capacity(merges.merges.len());
    let mut merged = String::new();
    for (i, (left, right)) in merges.merges.iter().enumerate() {
        let find = |t: &str, what: &str| {
            id_of.get(t).copied().ok_or_else(|| {
                Error::InvalidVocabulary(format!(
                    "{}: merge {left:?} {right:?}: {what} {t:?} is not in the vocabulary",
                    merges.locate(i)
                ))
            })
        };
        let l = find(left, "token")?;
        let r = find(right, "token")?;
        if left.len() + right.len() > MAX_MERGED_TOKEN_LEN {
            return Err(Error::InvalidVocabulary(format!(
                "{}: merge makes a token of {} bytes of text; a token made by merges may have at \
                 most {MAX_MERGED_TOKEN_LEN} (1 MiB)",
                merges.locate(i),
                left.len() + right.len()
            )));
        }
        merged.clear();
        merged.push_str(left);
        merged.push_str(right);
        let m = find(&merged, "the merged token")?;
        resolved.push((l, r, m));
    }
    Ok(PairVocabulary {
        vocab: tokens,
        merges: resolved,
        ignore_merges: false,
        missing: MissingByte::Drop,
        byte_fallback: false,
    })
}

/// Ranks and special tokens from GPT-2 files (`encoder.json` + `vocab.bpe`), read as tiktoken
/// reads them: the ids of `encoder.json` are the ranks of tiktoken's rule.
///
/// The ranks are the 256 single bytes and every token a merge makes; the other entries (GPT-2's
/// `<|endoftext|>`) are returned as special tokens. Checks, each an error naming the merge's
/// line: all 256 bytes present; every merge's halves and result in the vocabulary; merges listed
/// in the order of the ids they make (what makes ranks equal merge priorities); every token a
/// merge makes is made by at least one merge of two tokens with lower ids (Llama 3.2's file
/// also lists merges from higher ids, which are harmless).
pub fn gpt2_ranks(
    encoder: &[(String, Rank)],
    merges: &MergeList,
) -> Result<(Ranks, Specials), Error> {
    let decoder = ByteDecoder::new();
    let decode_chars = |t: &str| decoder.decode(t);
    let mut id_of: FxHashMap<Vec<u8>, Rank> = FxHashMap::default();
    id_of.reserve(encoder.len());
    let mut token_of: FxHashMap<Rank, &str> = FxHashMap::default();
    for (text, id) in encoder {
        if let Some(other) = token_of.insert(*id, text) {
            return Err(Error::InvalidVocabulary(format!(
                "id {id} is given to {other:?} and {text:?}"
            )));
        }
        if let Ok(bytes) = decode_chars(text) {
            id_of.insert(bytes, *id);
        }
    }
    let missing: Vec<u8> = (0..=255u8)
        .filter(|b| !id_of.contains_key(&[*b][..]))
        .collect();
    if let Some(first) = missing.first() {
        return Err(Error::InvalidVocabulary(format!(
            "lacks {} of the 256 single-byte tokens, e.g. 0x{first:02X}",
            missing.len()
        )));
    }
    let mut ranks: RankMap = (0..=255u8).map(|b| (vec![b], id_of[&[b][..]])).collect();
    let mut first_merge: Vec<(usize, Vec<u8>)> = Vec::new();
    let mut seen: FxHashSet<Vec<u8>> = FxHashSet::default();
    let mut from_lower: FxHashSet<Vec<u8>> = FxHashSet::default();
    let mut last_rank: Option<Rank> = None;
    for (i, (left, right)) in merges.merges.iter().enumerate() {
        let at = merges.locate(i);
        let decode = |t: &str| {
            decode_chars(t).map_err(|c| {
                Error::InvalidVocabulary(format!(
                    "{at}: character {c:?} (U+{:04X}) of {t:?} is not in the GPT-2 byte map",
                    c as u32
                ))
            })
        };
        let (l, r) = (decode(left)?, decode(right)?);
        let mut m = l.clone();
        m.extend_from_slice(&r);
        let id = |part: &[u8]| {
            id_of.get(part).copied().ok_or_else(|| {
                Error::InvalidVocabulary(format!(
                    "{at}: merge {left:?} {right:?} needs token {:?}, which is not in the vocabulary",
                    crate::bytes::byte_map::encode_bytes(part)
                ))
            })
        };
        let (lid, rid, rank) = (id(&l)?, id(&r)?, id(&m)?);
        if let Some(last) = last_rank.filter(|&last| rank < last) {
            return Err(Error::InvalidVocabulary(format!(
                "{at}: merge {left:?} {right:?} makes id {rank} after a merge that made id {last}: \
                 merges must come in the order of the ids (ranks) they make"
            )));
        }
        last_rank = Some(rank);
        if seen.insert(m.clone()) {
            first_merge.push((i, m.clone()));
        }
        if lid < rank && rid < rank {
            from_lower.insert(m.clone());
        }
        ranks.insert(m, rank);
    }
    for (i, m) in &first_merge {
        if !from_lower.contains(m) {
            let (left, right) = &merges.merges[*i];
            return Err(Error::InvalidVocabulary(format!(
                "{}: merge {left:?} {right:?} makes id {}, but no merge makes it from two tokens \
                 of lower id, so BPE could never produce it",
                merges.locate(*i),
                ranks.get(m).copied().unwrap_or(NONE)
            )));
        }
    }
    let rank_ids: FxHashSet<Rank> = ranks.values().copied().collect();
    let specials = encoder
        .iter()
        .filter(|(_, id)| !rank_ids.contains(id))
        .map(|(t, id)| (t.clone(), *id))
        .collect();
    Ok((ranks.into_iter().collect(), specials))
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;
    use crate::bytes::byte_map::encode_bytes;

    #[test]
    fn merges_file_lines() {
        let parsed =
            parse_merges(b"#version: 0.2\r\n# #\r\n\r\nab c\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            parsed.merges,
            vec![("#".into(), "#".into()), ("ab".into(), "c".into())]
        );
        assert_eq!(parsed.locate(1), "line 4");
        let err = parse_merges(b"a b\nabc\n")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("line 2"), "{err}");
        assert!(parse_merges(b"#version: 0.2\n").is_err());
        assert!(
            parse_merges(b"a b\n\xff c\n")
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
                .contains("line 2")
        );
    }

    fn byte_vocab() -> Vec<(String, Rank)> {
        (0..=255u8)
            .map(|b| (encode_bytes(&[b]), Rank::from(b)))
            .collect()
    }

    #[test]
    fn pair_vocabulary_resolves_and_reports() {
        let mut vocab = byte_vocab();
        vocab.push(("ab".into(), 300));
        let merges = MergeList {
            merges: vec![("a".into(), "b".into())],
            lines: None,
        };
        let pv = pair_vocabulary(&vocab, &merges).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(pv.merges, vec![(97, 98, 300)]);
        let bad = MergeList {
            merges: vec![("a".into(), "q".into())],
            lines: Some(vec![7]),
        };
        let err = pair_vocabulary(&vocab, &bad)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("line 7") && err.contains("aq"), "{err}");
        vocab.push(("zz".into(), 300));
        assert!(pair_vocabulary(&vocab, &merges).is_err());
    }

    #[test]
    fn a_merged_token_may_have_at_most_a_mebibyte() {
        let half = "a".repeat(MAX_MERGED_TOKEN_LEN / 2);
        let mut vocab = byte_vocab();
        vocab.push((half.clone(), 256));
        vocab.push((half.repeat(2), 257));
        vocab.push((half.repeat(2) + "a", 258));
        let merges = |pairs: &[(&str, &str)]| MergeList {
            merges: pairs
                .iter()
                .map(|(l, r)| (l.to_string(), r.to_string()))
                .collect(),
            lines: None,
        };
        let at_limit = merges(&[(&half, &half)]);
        assert!(pair_vocabulary(&vocab, &at_limit).is_ok());
        let whole = half.repeat(2);
        let over = merges(&[(&half, &half), (&whole, "a")]);
        let err = pair_vocabulary(&vocab, &over)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("model.merges[1]") && err.contains("1048577"),
            "{err}"
        );
    }

    #[test]
    fn gpt2_ranks_checks_order() {
        let mut vocab = byte_vocab();
        vocab.extend([
            ("ab".into(), 256),
            ("abc".into(), 257),
            ("<|end|>".into(), 258),
        ]);
        let merges = MergeList {
            merges: vec![("a".into(), "b".into()), ("ab".into(), "c".into())],
            lines: None,
        };
        let (ranks, specials) = gpt2_ranks(&vocab, &merges).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ranks.len(), 258);
        assert_eq!(specials, vec![("<|end|>".to_string(), 258)]);
        let swapped = MergeList {
            merges: vec![("ab".into(), "c".into()), ("a".into(), "b".into())],
            lines: None,
        };
        assert!(gpt2_ranks(&vocab, &swapped).is_err());
    }
}
