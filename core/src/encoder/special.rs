//! Special tokens found in text: one compiled search for a set of them.

use aho_corasick::{AhoCorasick, MatchKind};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::{Error, Rank};

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
        // the default arguments, once per call: a `memchr` over a paragraph is cheaper than
        // starting the automaton.
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

    /// Compile a matcher for the named special tokens (all must exist).
    pub fn new<'a>(
        specials: &FxHashMap<String, Rank>,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<Self, Error> {
        let mut seen = FxHashSet::default();
        let mut patterns = Vec::new();
        let mut ids = Vec::new();
        for name in names {
            let id = *specials.get(name).ok_or_else(|| {
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
}
