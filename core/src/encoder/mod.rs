//! The whole encoder: a vocabulary of ranked byte strings, special tokens, a pre-tokenizer.
//!
//! It is immutable once built, so one instance is shared freely between threads.

use std::collections::hash_map::Entry;

use aho_corasick::{AhoCorasick, MatchKind};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::merge::MergeTable;
use crate::merge::cache::{self as piece_cache, encode_cached};
use crate::vocab::RankMap;
use crate::{Error, Pretokenizer, Rank};

mod pairs;
pub use pairs::{AddedEntry, PairVocabulary};

/// Ids at or above this cannot be stored densely; no real vocabulary comes close.
const MAX_ID: Rank = 1 << 28;
/// Ids below this may be sparse (a toy vocabulary with a special token at 100257 is fine)...
const FREE_ID_SPACE: usize = 1 << 20;
/// ...above it, the id space may be at most this many times the number of tokens, so that a
/// file claiming one huge rank is an error instead of a table of hundreds of megabytes.
const MAX_IDS_PER_TOKEN: usize = 4;

/// About how many ids [`CoreEncoder::count_ordinary`] holds before adding them to its count.
const COUNT_BUFFER: usize = 48;

/// Check, before allocating anything indexed by id, that `n_tokens` tokens with ids below
/// `id_bound` are dense enough: decoding uses tables indexed by id (5 bytes per id), so a file
/// that claims one huge id must be an error, not hundreds of megabytes.
pub fn check_id_space(n_tokens: usize, id_bound: usize) -> Result<(), Error> {
    if id_bound
        > n_tokens
            .saturating_mul(MAX_IDS_PER_TOKEN)
            .max(FREE_ID_SPACE)
    {
        return Err(Error::InvalidVocabulary(format!(
            "ids run up to {} but there are only {n_tokens} tokens; ids must be nearly \
             contiguous (below {FREE_ID_SPACE}, or at most {MAX_IDS_PER_TOKEN} ids per token)",
            id_bound.saturating_sub(1),
        )));
    }
    Ok(())
}

/// A byte-level BPE encoder.
#[derive(Debug, Clone)]
pub struct CoreEncoder {
    ranks: RankMap,
    /// The same tokens laid out for fast lookups on the encode path.
    table: MergeTable,
    /// Names this encoder in the per-thread piece cache.
    owner: u32,
    byte_ranks: [Rank; 256],
    /// Token bytes by id, ordinary and special: `bytes[offsets[id]..offsets[id + 1]]`, with
    /// `present[id]` false for ids that are no token.
    offsets: Vec<u32>,
    bytes: Vec<u8>,
    present: Vec<bool>,
    specials: FxHashMap<String, Rank>,
    pretokenizer: Pretokenizer,
    /// Set for vocabularies merged by pair priority (Hugging Face files, see `encoder/pairs.rs`);
    /// `None` is tiktoken's rank rule with `pretokenizer`.
    pairs: Option<Box<pairs::PairMode>>,
}

/// A set of special tokens to recognise in text, compiled for fast search.
#[derive(Debug, Clone)]
pub struct SpecialMatcher {
    automaton: Option<AhoCorasick>,
    ids: Vec<Rank>,
    /// The distinct first bytes of the tokens, when there are at most three (`<` for every
    /// tiktoken encoding): a `memchr` for them settles most texts before the automaton starts.
    first_bytes: Vec<u8>,
}

impl SpecialMatcher {
    /// The first special token in `text` at or after `from`, as (start, end, id).
    #[inline]
    pub fn find(&self, text: &str, from: usize) -> Option<(usize, usize, Rank)> {
        let automaton = self.automaton.as_ref()?;
        let rest = text.as_bytes().get(from..)?;
        // No token can start before the first of its first bytes. Checked on every encode with
        // the default arguments, once per call: starting the automaton cost more than this
        // scan of a paragraph.
        let skip = match self.first_bytes[..] {
            [a] => memchr::memchr(a, rest)?,
            [a, b] => memchr::memchr2(a, b, rest)?,
            [a, b, c] => memchr::memchr3(a, b, c, rest)?,
            _ => 0,
        };
        let start = from + skip;
        let m = automaton.find(text.get(start..)?)?;
        Some((
            start + m.start(),
            start + m.end(),
            self.ids[m.pattern().as_usize()],
        ))
    }

    /// Whether no special token can match.
    pub fn is_empty(&self) -> bool {
        self.automaton.is_none()
    }
}

impl CoreEncoder {
    /// Build and validate an encoder. Every single byte must be a token; ranks and token bytes
    /// must be unique, and special tokens may not reuse an ordinary id or each other's.
    pub fn new(
        ranks: impl IntoIterator<Item = (Vec<u8>, Rank)>,
        specials: impl IntoIterator<Item = (String, Rank)>,
        pattern: &str,
    ) -> Result<Self, Error> {
        let pretokenizer = Pretokenizer::new(pattern)?;
        Self::with_pretokenizer(ranks, specials, pretokenizer)
    }

    /// As [`CoreEncoder::new`], with a pre-tokenizer already built.
    pub fn with_pretokenizer(
        ranks: impl IntoIterator<Item = (Vec<u8>, Rank)>,
        specials: impl IntoIterator<Item = (String, Rank)>,
        pretokenizer: Pretokenizer,
    ) -> Result<Self, Error> {
        let ranks = ranks.into_iter();
        let mut map = RankMap::with_capacity_and_hasher(ranks.size_hint().0, Default::default());
        for (token, rank) in ranks {
            if rank >= MAX_ID {
                return Err(Error::InvalidVocabulary(format!(
                    "rank {rank} of token {:?} is too large (ids must be below {MAX_ID})",
                    String::from_utf8_lossy(&token)
                )));
            }
            if token.is_empty() {
                return Err(Error::InvalidVocabulary(format!(
                    "rank {rank} has an empty token"
                )));
            }
            // The token moves into the map (a vocabulary is 200k small allocations; a copy of
            // each was a fifth of the construction time).
            match map.entry(token) {
                Entry::Occupied(taken) => {
                    return Err(Error::InvalidVocabulary(format!(
                        "token {:?} has two ranks: {} and {rank}",
                        String::from_utf8_lossy(taken.key()),
                        taken.get()
                    )));
                }
                Entry::Vacant(free) => {
                    free.insert(rank);
                }
            }
        }
        let mut byte_ranks = [0; 256];
        for b in 0..=255u8 {
            byte_ranks[usize::from(b)] = *map.get(&[b][..]).ok_or_else(|| {
                Error::InvalidVocabulary(format!(
                    "the single byte 0x{b:02X} is not a token; a byte-level vocabulary needs all 256"
                ))
            })?;
        }

        let specials: Vec<(String, Rank)> = specials.into_iter().collect();
        for (text, id) in &specials {
            if *id >= MAX_ID {
                return Err(Error::InvalidVocabulary(format!(
                    "special token {text:?} has id {id}, too large (ids must be below {MAX_ID})"
                )));
            }
            if text.is_empty() {
                return Err(Error::InvalidVocabulary(format!(
                    "special token {id} is empty"
                )));
            }
        }

        // Every token, ordinary and special, by id. Kept as a list and sorted, never as a table
        // indexed by id: a file claiming one huge rank must not allocate gigabytes.
        let mut by_id: Vec<(Rank, bool, &[u8])> = map
            .iter()
            .map(|(token, &rank)| (rank, false, token.as_slice()))
            .chain(
                specials
                    .iter()
                    .map(|(text, id)| (*id, true, text.as_bytes())),
            )
            .collect();
        // Ordinary tokens sort before specials of the same id, so a clash names the special.
        by_id.sort_unstable();
        for pair in by_id.windows(2) {
            let ((id, _, first), (_, special, second)) = match pair {
                [a, b] if a.0 == b.0 => (a, b),
                _ => continue,
            };
            return Err(Error::InvalidVocabulary(if *special {
                format!(
                    "special token {:?} has id {id}, which is already taken",
                    String::from_utf8_lossy(second)
                )
            } else {
                format!(
                    "rank {id} is given to two tokens: {:?} and {:?}",
                    String::from_utf8_lossy(first),
                    String::from_utf8_lossy(second)
                )
            }));
        }
        let id_bound = by_id.last().map_or(0, |t| t.0 as usize + 1);
        check_id_space(by_id.len(), id_bound)?;

        let mut offsets = Vec::with_capacity(id_bound + 1);
        let mut bytes = Vec::with_capacity(by_id.iter().map(|t| t.2.len()).sum());
        let mut present = Vec::with_capacity(id_bound);
        let mut tokens = by_id.iter().peekable();
        for id in 0..id_bound {
            offsets.push(bytes.len() as u32);
            match tokens.next_if(|t| t.0 as usize == id) {
                Some((_, _, t)) => {
                    present.push(true);
                    bytes.extend_from_slice(t);
                }
                None => present.push(false),
            }
        }
        offsets.push(bytes.len() as u32);
        if bytes.len() > u32::MAX as usize {
            return Err(Error::InvalidVocabulary(
                "tokens total more than 4 GiB".into(),
            ));
        }
        drop(by_id);
        let special_map = specials.into_iter().collect();
        Ok(Self {
            table: MergeTable::new(&map, &byte_ranks),
            owner: piece_cache::new_owner(),
            ranks: map,
            byte_ranks,
            offsets,
            bytes,
            present,
            specials: special_map,
            pretokenizer,
            pairs: None,
        })
    }

    /// The pre-tokenizer in use.
    pub fn pretokenizer(&self) -> &Pretokenizer {
        &self.pretokenizer
    }

    /// Ordinary tokens (bytes to rank).
    pub fn ranks(&self) -> &RankMap {
        &self.ranks
    }

    /// Special tokens (text to id).
    pub fn specials(&self) -> &FxHashMap<String, Rank> {
        &self.specials
    }

    /// One past the highest id in use.
    pub fn id_bound(&self) -> usize {
        self.present.len()
    }

    /// Compile a matcher for the named special tokens (all must exist).
    pub fn special_matcher<'a>(
        &self,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<SpecialMatcher, Error> {
        let mut seen = FxHashSet::default();
        let mut patterns = Vec::new();
        let mut ids = Vec::new();
        for name in names {
            let id = *self.specials.get(name).ok_or_else(|| {
                Error::InvalidArgument(format!("{name:?} is not a special token of this encoding"))
            })?;
            if seen.insert(name) {
                patterns.push(name);
                ids.push(id);
            }
        }
        if patterns.is_empty() {
            return Ok(SpecialMatcher {
                automaton: None,
                ids,
                first_bytes: Vec::new(),
            });
        }
        // Leftmost-longest: where two specials start at the same place, the longer one wins.
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .map_err(|e| Error::InvalidArgument(format!("cannot index special tokens: {e}")))?;
        let mut first_bytes: Vec<u8> = patterns.iter().filter_map(|p| p.bytes().next()).collect();
        first_bytes.sort_unstable();
        first_bytes.dedup();
        if first_bytes.len() > 3 {
            first_bytes.clear();
        }
        Ok(SpecialMatcher {
            automaton: Some(automaton),
            ids,
            first_bytes,
        })
    }

    /// Encode text with no special-token handling: special-looking text is ordinary text.
    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<Rank>, Error> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        self.encode_ordinary_into(text, &mut out)?;
        Ok(out)
    }

    /// Append the ids of `text` (no special tokens) to `out`.
    #[inline]
    pub fn encode_ordinary_into(&self, text: &str, out: &mut Vec<Rank>) -> Result<(), Error> {
        if let Some(p) = &self.pairs {
            return p
                .pipeline
                .split(text, |piece| p.model.encode_piece(piece, out));
        }
        self.encode_pieces(text, out, |_| {})
    }

    /// The encoder's loop (byte-level tables, no special tokens): each piece's ids appended to
    /// `out`, then `after(out)`.
    #[inline(always)]
    fn encode_pieces(
        &self,
        text: &str,
        out: &mut Vec<Rank>,
        mut after: impl FnMut(&mut Vec<Rank>),
    ) -> Result<(), Error> {
        piece_cache::with_cache(|mut cache| {
            self.pretokenizer.split_bytes(text, |bytes| {
                encode_cached(
                    &mut cache,
                    self.owner,
                    text.as_bytes(),
                    bytes,
                    &self.table,
                    &self.byte_ranks,
                    out,
                );
                after(out);
            })
        })
    }

    /// The number of ids of `text` (no special tokens), without building them.
    pub fn count_ordinary(&self, text: &str) -> Result<usize, Error> {
        let mut n = 0;
        if let Some(p) = &self.pairs {
            p.pipeline
                .split(text, |piece| n += p.model.count_piece(piece))?;
            return Ok(n);
        }
        // The ids go through a small buffer, emptied into the count as it fills: the loop of
        // `encode_ordinary_into`, which took 0.83 of the time of counting each piece's ids where
        // they were found (o200k, English), holding a few dozen ids at a time, never the list.
        let mut ids = Vec::with_capacity(COUNT_BUFFER);
        self.encode_pieces(text, &mut ids, |ids| {
            if ids.len() >= COUNT_BUFFER {
                n += ids.len();
                ids.clear();
            }
        })?;
        Ok(n + ids.len())
    }

    /// Encode text, turning the specials of `allowed` into their ids; all other text is ordinary.
    pub fn encode(&self, text: &str, allowed: &SpecialMatcher) -> Result<Vec<Rank>, Error> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        self.encode_into(text, allowed, &mut out)?;
        Ok(out)
    }

    /// Append the ids `encode` would return to `out`.
    pub fn encode_into(
        &self,
        text: &str,
        allowed: &SpecialMatcher,
        out: &mut Vec<Rank>,
    ) -> Result<(), Error> {
        let mut start = 0;
        while let Some((s, e, id)) = allowed.find(text, start) {
            self.encode_ordinary_into(&text[start..s], out)?;
            out.push(id);
            start = e;
        }
        self.encode_ordinary_into(&text[start..], out)
    }

    /// The number of ids `encode` would return.
    pub fn count(&self, text: &str, allowed: &SpecialMatcher) -> Result<usize, Error> {
        let mut n = 0;
        let mut start = 0;
        while let Some((s, e, _)) = allowed.find(text, start) {
            n += self.count_ordinary(&text[start..s])? + 1;
            start = e;
        }
        Ok(n + self.count_ordinary(&text[start..])?)
    }

    /// The bytes of one token (ordinary or special).
    #[inline]
    pub fn token_bytes(&self, id: Rank) -> Option<&[u8]> {
        let i = id as usize;
        if *self.present.get(i)? {
            Some(&self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize])
        } else {
            None
        }
    }

    /// The ordinary token whose bytes are exactly `bytes`, or the special token spelled so.
    pub fn encode_single_token(&self, bytes: &[u8]) -> Option<Rank> {
        if let Some(&r) = self.ranks.get(bytes) {
            return Some(r);
        }
        std::str::from_utf8(bytes)
            .ok()
            .and_then(|s| self.specials.get(s).copied())
    }

    /// Concatenate the bytes of `ids`; the first unknown id is an error.
    pub fn decode_bytes(&self, ids: &[Rank]) -> Result<Vec<u8>, Error> {
        let mut out = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            out.extend_from_slice(
                self.token_bytes(id)
                    .ok_or(Error::UnknownId(u64::from(id)))?,
            );
        }
        Ok(out)
    }

    /// Encode bytes that may not be UTF-8: valid stretches go through the pre-tokenizer, the
    /// invalid bytes in between become single-byte tokens.
    pub fn encode_bytes(&self, data: &[u8]) -> Result<Vec<Rank>, Error> {
        let mut out = Vec::with_capacity(data.len() / 3 + 1);
        for chunk in data.utf8_chunks() {
            self.encode_ordinary_into(chunk.valid(), &mut out)?;
            if let Some(p) = &self.pairs {
                for &b in chunk.invalid() {
                    p.model.encode_piece(&[b], &mut out);
                }
                continue;
            }
            out.extend(
                chunk
                    .invalid()
                    .iter()
                    .map(|&b| self.byte_ranks[usize::from(b)]),
            );
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretokenize::patterns;

    fn tiny() -> CoreEncoder {
        let mut ranks: Vec<(Vec<u8>, Rank)> =
            (0..=255u8).map(|b| (vec![b], u32::from(b))).collect();
        for (i, t) in [
            &b"he"[..],
            b"ll",
            b"hell",
            b"hello",
            b" w",
            b"or",
            b" wor",
            b"ld",
        ]
        .iter()
        .enumerate()
        {
            ranks.push((t.to_vec(), 256 + i as Rank));
        }
        CoreEncoder::new(ranks, [("<|end|>".to_string(), 300)], patterns::GPT2)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn encodes_and_decodes() {
        let enc = tiny();
        let ids = enc.encode_ordinary("hello world").unwrap_or_default();
        assert_eq!(ids, vec![259, 262, 263]);
        assert_eq!(enc.count_ordinary("hello world"), Ok(3));
        assert_eq!(enc.decode_bytes(&ids), Ok(b"hello world".to_vec()));
        assert_eq!(enc.decode_bytes(&[999]), Err(Error::UnknownId(999)));
    }

    #[test]
    fn specials_only_when_allowed() {
        let enc = tiny();
        let none = enc.special_matcher([]).unwrap_or_else(|e| panic!("{e}"));
        let all = enc
            .special_matcher(["<|end|>"])
            .unwrap_or_else(|e| panic!("{e}"));
        let text = "hello<|end|>";
        assert!(!enc.encode(text, &none).unwrap_or_default().contains(&300));
        assert_eq!(enc.encode(text, &all).unwrap_or_default(), vec![259, 300]);
        assert_eq!(enc.count(text, &all), Ok(2));
        assert!(enc.special_matcher(["<|nope|>"]).is_err());
    }

    /// The first-byte prefilter never changes what `find` returns: against a naive search,
    /// for sets of tokens with one, two, three and more distinct first bytes (multi-byte ones
    /// too), from every start.
    #[test]
    fn special_search_equals_a_naive_search() {
        let specials = ["<|a|>", "<|ab|>", "[x]", "{y}", "«z»", "éé", "<|"];
        let ranks: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], u32::from(b))).collect();
        let named = specials
            .iter()
            .enumerate()
            .map(|(i, s)| (s.to_string(), 1000 + i as Rank));
        let enc = CoreEncoder::new(ranks, named, patterns::GPT2).unwrap_or_else(|e| panic!("{e}"));
        let text = "x < <| <|a <|a|> [x] {y} éé «z» <|ab|> «« {y<|a|>";
        for take in 1..=specials.len() {
            let names = &specials[..take];
            let matcher = enc
                .special_matcher(names.iter().copied())
                .unwrap_or_else(|e| panic!("{e}"));
            for from in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
                // Leftmost, then longest.
                let naive = (from..text.len())
                    .filter_map(|start| {
                        names
                            .iter()
                            .filter(|n| text.as_bytes()[start..].starts_with(n.as_bytes()))
                            .max_by_key(|n| n.len())
                            .map(|n| (start, start + n.len(), enc.specials()[*n]))
                    })
                    .next();
                assert_eq!(matcher.find(text, from), naive, "{names:?} from {from}");
            }
        }
    }

    #[test]
    fn rejects_bad_vocabularies() {
        let missing: Vec<(Vec<u8>, Rank)> = (0..=254u8).map(|b| (vec![b], u32::from(b))).collect();
        assert!(CoreEncoder::new(missing, [], patterns::GPT2).is_err());
        let mut dup: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], u32::from(b))).collect();
        dup.push((b"ab".to_vec(), 5));
        assert!(CoreEncoder::new(dup, [], patterns::GPT2).is_err());
        let base: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], u32::from(b))).collect();
        assert!(CoreEncoder::new(base, [("<s>".to_string(), 3)], patterns::GPT2).is_err());
    }

    #[test]
    fn huge_sparse_ids_are_rejected_without_allocating() {
        // A hostile-file case: one line claiming rank 2^28 - 1 used to allocate a 6 GiB table
        // before any other check ran (now a regression seed of the `tiktoken_parse` fuzz target).
        let bytes = || (0..=255u8).map(|b| (vec![b], u32::from(b)));
        let huge = bytes().chain([(b"ab".to_vec(), MAX_ID - 1)]);
        let err = CoreEncoder::new(huge, [], patterns::GPT2)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("nearly contiguous"), "{err}");
        let special = CoreEncoder::new(bytes(), [("<s>".to_string(), MAX_ID - 1)], patterns::GPT2);
        assert!(special.is_err());
        // Sparse but small id spaces stay fine (a toy vocabulary with cl100k's special id).
        let toy = CoreEncoder::new(bytes(), [("<s>".to_string(), 100_257)], patterns::GPT2)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(toy.id_bound(), 100_258);
        assert_eq!(toy.token_bytes(100_257), Some(&b"<s>"[..]));
        assert_eq!(toy.token_bytes(100_256), None);
    }

    #[test]
    fn whole_piece_token_needs_no_merge_path() {
        // From the `encode` fuzz target: with "aaa" a token but not "aa", a piece "aaa" is that
        // one token (tiktoken checks the whole piece first), while "aaaa" has no merge at all.
        let ranks = (0..=255u8)
            .map(|b| (vec![b], u32::from(b)))
            .chain([(b"aaa".to_vec(), 256)]);
        let enc = CoreEncoder::new(ranks, [], patterns::GPT2).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(enc.encode_ordinary("aaa"), Ok(vec![256]));
        assert_eq!(enc.encode_ordinary("aaaa"), Ok(vec![97; 4]));
        assert_eq!(enc.count_ordinary("aaa aaaa"), Ok(1 + 5));
    }

    #[test]
    fn clashing_ids_are_named() {
        let bytes = || (0..=255u8).map(|b| (vec![b], u32::from(b)));
        let two = bytes().chain([(b"ab".to_vec(), 7)]);
        let err = CoreEncoder::new(two, [], patterns::GPT2)
            .err()
            .map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("rank 7 is given to two tokens")));
        let special = CoreEncoder::new(bytes(), [("<s>".to_string(), 7)], patterns::GPT2);
        let err = special.err().map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("\"<s>\" has id 7, which is already taken")));
    }

    #[test]
    fn invalid_utf8_bytes() {
        let enc = tiny();
        assert_eq!(
            enc.encode_bytes(b"he\xffll").unwrap_or_default(),
            vec![256, 255, 257]
        );
    }
}
