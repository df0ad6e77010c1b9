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
//!   contains; a cut goes between any two characters that no piece has side by side.

use super::SentencePieceEncoder;
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

fn class(c: char, space: char) -> usize {
    if c == space {
        SPACE
    } else if c.is_ascii() {
        c as usize
    } else {
        OTHER
    }
}

/// Which adjacent classes some string of `strings` has side by side (`[a * CLASSES + b]`), and
/// whether some has another character before `space` / `space` before another character.
pub(super) fn adjacent_pairs<S: AsRef<str>>(
    strings: impl Iterator<Item = S>,
    space: char,
) -> (Box<[bool]>, bool, bool) {
    let mut table = vec![false; CLASSES * CLASSES].into_boxed_slice();
    let (mut before, mut after) = (false, false);
    for s in strings {
        let mut prev: Option<char> = None;
        for c in s.as_ref().chars() {
            if let Some(p) = prev {
                before |= p != space && c == space;
                after |= p == space && c != space;
                let (a, b) = (class(p, space), class(c, space));
                if a < OTHER && b < OTHER {
                    table[a * CLASSES + b] = true;
                }
            }
            prev = Some(c);
        }
    }
    (table, before, after)
}

impl SentencePieceEncoder {
    /// Call `f` on each chunk of `norm`, in order.
    pub(super) fn for_each_chunk(&self, norm: &str, mut f: impl FnMut(&str)) {
        let joinable = self.joinable.as_deref();
        if self.cut == Cut::Nowhere && joinable.is_none() {
            f(norm);
            return;
        }
        let mut buf = [0u8; 4];
        let space = self.cut_char.encode_utf8(&mut buf).as_bytes();
        let bytes = norm.as_bytes();
        let mut start = 0;
        let mut prev = OTHER;
        let mut at = 0;
        while at < bytes.len() {
            let b = bytes[at];
            let (c, len) = if b == space[0] && bytes[at..].starts_with(space) {
                (SPACE, space.len())
            } else if b < 0x80 {
                (usize::from(b), 1)
            } else {
                (OTHER, char_len(b))
            };
            if at > start {
                let by_space = match self.cut {
                    Cut::Nowhere => false,
                    Cut::BeforeSpace => c == SPACE && prev != SPACE,
                    Cut::AfterSpace => prev == SPACE && c != SPACE,
                    Cut::EverySpace => c == SPACE,
                };
                let by_pair =
                    prev < OTHER && c < OTHER && joinable.is_some_and(|t| !t[prev * CLASSES + c]);
                if by_space || by_pair {
                    f(&norm[start..at]);
                    start = at;
                }
            }
            prev = c;
            at += len;
        }
        if start < bytes.len() {
            f(&norm[start..]);
        }
    }
}
