//! Cutting normalized text into chunks that merge independently.
//!
//! A merge joins adjacent symbols into a piece that spells both, and a user-defined piece is
//! matched whole; so a cut between characters `a` and `b` is crossed only by a piece containing
//! `ab`. If no piece (merge result, for the rank rule) contains `ab`, the merges on either side
//! are the same with the cut as without it, in the same relative order. The vocabulary decides
//! at build time which cuts are safe:
//! - the whitespace rule: no piece has another character before the whitespace character (cut
//!   before each one that follows another character), or none after it (cut after);
//! - the pair rule, for ASCII and the whitespace character: a table of the pairs some piece
//!   contains; a cut goes between any two characters that no piece has side by side. Any other
//!   character that no piece of two or more characters contains is cut off on both sides (most
//!   letters of the scripts a vocabulary hardly covers, which would otherwise make a sentence
//!   one long chunk of failed lookups).

use super::SentencePieceEncoder;
use super::char_table::code_point;
use super::merge::char_len;

/// Where the whitespace rule cuts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cut {
    Nowhere,
    /// Before a whitespace character that follows another character.
    BeforeSpace,
    /// After a whitespace character that precedes another character.
    AfterSpace,
    /// Before every whitespace character (Metaspace's `split`: each word is merged alone).
    EverySpace,
}

/// Character classes of the pair rule: ASCII bytes are themselves, then these.
const SPACE: usize = 128;
const OTHER: usize = 129;
const CLASSES: usize = 129;
/// A character outside the table that no string of two or more characters contains.
const LONE: usize = 130;
/// What [`SentencePieceEncoder::for_each_chunk`] passes for a chunk that is no lone character.
pub(super) const NOT_LONE: u32 = u32::MAX;
/// Characters from this code point on are never taken for lone (the bit set stops here).
const LONE_LIMIT: usize = 0x3_0000;

/// What the pair rule cuts by.
#[derive(Debug, Clone)]
pub(super) struct PairRule {
    /// `[a * CLASSES + b]`: some string has classes `a` and `b` side by side.
    pairs: Box<[bool]>,
    /// Bit `c`: character `c` (not ASCII, below `LONE_LIMIT`) is in a string of two or more.
    joins: Box<[u64]>,
}

impl PairRule {
    #[inline(always)]
    pub(super) fn is_lone(&self, c: u32) -> bool {
        let c = c as usize;
        c < LONE_LIMIT && self.joins[c / 64] & (1 << (c % 64)) == 0
    }
}

fn class(c: char, space: char) -> usize {
    if c == space {
        SPACE
    } else if c.is_ascii() {
        c as usize
    } else {
        OTHER
    }
}

/// The pair rule of `strings` (what merges can make), and whether some string has another
/// character before `space` / `space` before another character.
pub(super) fn adjacent_pairs<S: AsRef<str>>(
    strings: impl Iterator<Item = S>,
    space: char,
) -> (PairRule, bool, bool) {
    let mut pairs = vec![false; CLASSES * CLASSES].into_boxed_slice();
    let mut joins = vec![0u64; LONE_LIMIT / 64].into_boxed_slice();
    let mut mark = |c: char| {
        if (c as usize) < LONE_LIMIT {
            joins[c as usize / 64] |= 1 << (c as usize % 64);
        }
    };
    let (mut before, mut after) = (false, false);
    for s in strings {
        let mut prev: Option<char> = None;
        for c in s.as_ref().chars() {
            if let Some(p) = prev {
                before |= p != space && c == space;
                after |= p == space && c != space;
                let (a, b) = (class(p, space), class(c, space));
                if a < OTHER && b < OTHER {
                    pairs[a * CLASSES + b] = true;
                }
                mark(p);
                mark(c);
            }
            prev = Some(c);
        }
    }
    (PairRule { pairs, joins }, before, after)
}

impl SentencePieceEncoder {
    /// Call `f` on each chunk of `norm`, in order, with the code point of a chunk that is one
    /// lone character ([`NOT_LONE`] for the others).
    pub(super) fn for_each_chunk(&self, norm: &str, mut f: impl FnMut(&str, u32)) {
        let joinable = self.joinable.as_ref();
        if self.cut == Cut::Nowhere && joinable.is_none() {
            f(norm, NOT_LONE);
            return;
        }
        let space = self.cut_char as u32;
        let bytes = norm.as_bytes();
        let mut start = 0;
        let mut prev = OTHER;
        let mut at = 0;
        while at < bytes.len() {
            let b = bytes[at];
            let (c, len) = if b < 0x80 {
                (
                    if u32::from(b) == space {
                        SPACE
                    } else {
                        usize::from(b)
                    },
                    1,
                )
            } else {
                let len = char_len(b);
                let code = code_point(&bytes[at..], len);
                if code != space && joinable.is_some_and(|rule| rule.is_lone(code)) {
                    // Cut on both sides: the chunk before it, then the character alone.
                    if at > start {
                        f(&norm[start..at], NOT_LONE);
                    }
                    f(&norm[at..at + len], code);
                    at += len;
                    start = at;
                    prev = LONE;
                    continue;
                }
                (if code == space { SPACE } else { OTHER }, len)
            };
            if at > start {
                let by_space = match self.cut {
                    Cut::Nowhere => false,
                    Cut::BeforeSpace => c == SPACE && prev != SPACE,
                    Cut::AfterSpace => prev == SPACE && c != SPACE,
                    Cut::EverySpace => c == SPACE,
                };
                let by_pair = prev == LONE
                    || c == LONE
                    || prev < OTHER
                        && c < OTHER
                        && joinable.is_some_and(|rule| !rule.pairs[prev * CLASSES + c]);
                if by_space || by_pair {
                    f(&norm[start..at], NOT_LONE);
                    start = at;
                }
            }
            prev = c;
            at += len;
        }
        if start < bytes.len() {
            f(&norm[start..], NOT_LONE);
        }
    }
}
