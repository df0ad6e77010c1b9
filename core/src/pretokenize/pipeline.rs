//! A pre-tokenizer pipeline: the Hugging Face pre-tokenizers that byte-level BPE models use, as a
//! sequence of stages, each of which cuts every current piece further.
//!
//! A tiktoken encoding cuts text once, with one regex ([`Pretokenizer`]). A `tokenizer.json`
//! describes a sequence instead (`Sequence[Punctuation, ByteLevel, Digits, Split]` for Falcon), and
//! each step has a *behaviour* that says what becomes of the matches and of the text between them.
//! This module reproduces `tokenizers`' semantics step by step:
//!
//! - [`Matcher`]: what a stage finds in a piece: regex matches (a hand-written scanner when the
//!   pattern is a known one), a literal string, or single characters of a class (HF `Digits` is
//!   `char::is_numeric`, `Punctuation` is ASCII punctuation plus the Unicode `P*` table that
//!   `tokenizers` ships, which is older than Rust's and is copied below).
//! - [`Behavior`]: `tokenizers`' `SplitDelimiterBehavior`, applied to the list of
//!   `(range, is_match)` that covers the piece (matches and the gaps between them), after `invert`
//!   has swapped the two kinds.
//! - [`Stage::ByteLevel`]: prepends a space to pieces that lack one (`add_prefix_space`), cuts with
//!   the GPT-2 pattern (`use_regex`), then writes each byte as its GPT-2 character. Stages after it
//!   (Falcon's `Digits`) therefore look at those characters, not at the text: `½` arrives as `Â½`,
//!   and `½` is numeric, so `Digits` cuts the UTF-8 sequence in two. That is what `tokenizers` does,
//!   so it is what we do.
//!
//! Empty pieces are dropped after every stage, as `tokenizers` drops them.

use std::borrow::Cow;

use super::Pretokenizer;
use crate::Error;
use crate::bytes::byte_map;

/// What becomes of the matches of a stage (`tokenizers`' `SplitDelimiterBehavior`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behavior {
    /// Matches are dropped; the text between them stays.
    Removed,
    /// Every match and every gap is a piece of its own.
    Isolated,
    /// A match joins the piece before it.
    MergedWithPrevious,
    /// A match joins the piece after it.
    MergedWithNext,
    /// Adjacent matches join into one piece.
    Contiguous,
}

/// What a split stage looks for.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// The matches of a regex (a scanner when the pattern is a well-known one).
    Regex(Pretokenizer),
    /// Occurrences of a literal string (non-overlapping, leftmost first).
    Literal(String),
    /// Each character with a numeric general category (Nd, Nl, No), one match per character.
    Numeric,
    /// Each punctuation character, as `tokenizers`' `Punctuation` defines it.
    Punctuation,
}

/// One step of the pipeline.
#[derive(Debug, Clone)]
pub enum Stage {
    /// Cut each piece at the matcher's matches, then apply the behaviour.
    Split {
        matcher: Matcher,
        behavior: Behavior,
        invert: bool,
    },
    /// `tokenizers`' `ByteLevel` pre-tokenizer: optional space prefix, optional GPT-2 split
    /// (`regex`), then the byte map.
    ByteLevel {
        add_prefix_space: bool,
        regex: Option<Pretokenizer>,
    },
}

/// A sequence of stages ready to cut text into the pieces that are merged independently.
#[derive(Debug, Clone)]
pub struct Pipeline {
    stages: Vec<Stage>,
    fast: Fast,
    /// The GPT-2 character of each byte, and the byte of each such character below U+0144
    /// (`u16::MAX` for the others).
    forward: [char; 256],
    inverse: Box<[u16; 324]>,
}

/// The shapes that real files use most, run without building intermediate lists.
#[derive(Debug, Clone, Copy)]
enum Fast {
    General,
    /// One regex stage (index into `stages`): keep the matches, the gaps, or both.
    OneRegex {
        stage: usize,
        matches: bool,
        gaps: bool,
    },
}

impl Pipeline {
    /// Build from stages. More than one `ByteLevel` stage is an error: the second would map
    /// characters that are already bytes.
    pub fn new(stages: Vec<Stage>) -> Result<Self, Error> {
        let byte_levels = stages
            .iter()
            .filter(|s| matches!(s, Stage::ByteLevel { .. }))
            .count();
        if byte_levels > 1 {
            return Err(Error::InvalidArgument(
                "a pre-tokenizer pipeline may hold at most one ByteLevel stage".into(),
            ));
        }
        let fast = Self::fast_shape(&stages);
        let forward = byte_map::bytes_to_unicode();
        let mut inverse = Box::new([u16::MAX; 324]);
        for (b, c) in forward.iter().enumerate() {
            if let Some(slot) = inverse.get_mut(*c as usize) {
                *slot = b as u16;
            }
        }
        Ok(Self {
            stages,
            fast,
            forward,
            inverse,
        })
    }

    fn fast_shape(stages: &[Stage]) -> Fast {
        let plain_byte_level = |s: &Stage| {
            matches!(
                s,
                Stage::ByteLevel {
                    add_prefix_space: false,
                    regex: None
                }
            )
        };
        match stages {
            [
                Stage::ByteLevel {
                    add_prefix_space: false,
                    regex: Some(_),
                },
            ] => Fast::OneRegex {
                stage: 0,
                matches: true,
                gaps: true,
            },
            [
                Stage::Split {
                    matcher: Matcher::Regex(_),
                    behavior,
                    invert,
                },
                rest @ ..,
            ] if rest.len() <= 1 && rest.iter().all(plain_byte_level) => match (behavior, invert) {
                (Behavior::Isolated, _) => Fast::OneRegex {
                    stage: 0,
                    matches: true,
                    gaps: true,
                },
                (Behavior::Removed, true) => Fast::OneRegex {
                    stage: 0,
                    matches: true,
                    gaps: false,
                },
                (Behavior::Removed, false) => Fast::OneRegex {
                    stage: 0,
                    matches: false,
                    gaps: true,
                },
                _ => Fast::General,
            },
            _ => Fast::General,
        }
    }

    /// The stages.
    pub fn stages(&self) -> &[Stage] {
        &self.stages
    }

    /// The first regex in the pipeline (for reporting which scanner runs), if any.
    pub fn first_regex(&self) -> Option<&Pretokenizer> {
        self.stages.iter().find_map(|s| match s {
            Stage::Split {
                matcher: Matcher::Regex(p),
                ..
            } => Some(p),
            Stage::ByteLevel { regex: Some(p), .. } => Some(p),
            _ => None,
        })
    }

    /// Call `f` with the bytes of each piece of `text`, in order.
    pub fn split(&self, text: &str, mut f: impl FnMut(&[u8])) -> Result<(), Error> {
        if text.is_empty() {
            return Ok(());
        }
        if let Fast::OneRegex {
            stage,
            matches,
            gaps,
        } = self.fast
        {
            let regex = match self.stages.get(stage) {
                Some(Stage::Split {
                    matcher: Matcher::Regex(p),
                    ..
                })
                | Some(Stage::ByteLevel { regex: Some(p), .. }) => p,
                _ => {
                    return Err(Error::Pattern(
                        "pipeline fast path without a regex (a bug)".into(),
                    ));
                }
            };
            return regex_with_gaps(regex, text, |piece, is_match| {
                if !piece.is_empty() && (if is_match { matches } else { gaps }) {
                    f(piece.as_bytes());
                }
            });
        }

        let mut pieces: Vec<Cow<'_, str>> = vec![Cow::Borrowed(text)];
        let mut next: Vec<Cow<'_, str>> = Vec::new();
        let mut mapped = false;
        let n_stages = self.stages.len();
        for (i, stage) in self.stages.iter().enumerate() {
            match stage {
                Stage::Split {
                    matcher,
                    behavior,
                    invert,
                } => {
                    for piece in &pieces {
                        split_piece(
                            piece,
                            |s| find_matches(matcher, s),
                            *behavior,
                            *invert,
                            &mut next,
                        )?;
                    }
                }
                Stage::ByteLevel {
                    add_prefix_space,
                    regex,
                } => {
                    for piece in pieces.drain(..) {
                        let piece = if *add_prefix_space && !piece.starts_with(' ') {
                            Cow::Owned(format!(" {piece}"))
                        } else {
                            piece
                        };
                        match regex {
                            Some(r) => split_piece(
                                &piece,
                                |s| regex_matches(r, s),
                                Behavior::Isolated,
                                false,
                                &mut next,
                            )?,
                            None => next.push(piece),
                        }
                    }
                    // Later stages see the GPT-2 characters; if none follows, skip the detour.
                    if i + 1 < n_stages {
                        for piece in &mut next {
                            let mapped: String = piece
                                .bytes()
                                .map(|b| self.forward[usize::from(b)])
                                .collect();
                            *piece = Cow::Owned(mapped);
                        }
                        mapped = true;
                    }
                }
            }
            next.retain(|p| !p.is_empty());
            std::mem::swap(&mut pieces, &mut next);
            next.clear();
        }
        let mut buf = Vec::new();
        for piece in &pieces {
            if mapped {
                buf.clear();
                for c in piece.chars() {
                    match self.inverse.get(c as usize) {
                        Some(&b) if b != u16::MAX => buf.push(b as u8),
                        _ => {
                            return Err(Error::Pattern(format!(
                                "character {c:?} after ByteLevel is not a GPT-2 byte (a bug)"
                            )));
                        }
                    }
                }
                f(&buf);
            } else {
                f(piece.as_bytes());
            }
        }
        Ok(())
    }

    /// The pieces as byte vectors (for tests and small inputs).
    pub fn pieces(&self, text: &str) -> Result<Vec<Vec<u8>>, Error> {
        let mut out = Vec::new();
        self.split(text, |p| out.push(p.to_vec()))?;
        Ok(out)
    }
}

/// Call `f(slice, is_match)` for the matches of `regex` in `text` and the gaps between them, in
/// order (empty matches included, as `tokenizers` lists them).
fn regex_with_gaps<'t>(
    regex: &Pretokenizer,
    text: &'t str,
    mut f: impl FnMut(&'t str, bool),
) -> Result<(), Error> {
    let base = text.as_ptr() as usize;
    let mut prev = 0;
    regex.split(text, |m| {
        let start = (m.as_ptr() as usize).saturating_sub(base);
        if start > prev {
            if let Some(gap) = text.get(prev..start) {
                f(gap, false);
            }
        }
        f(m, true);
        prev = start + m.len();
    })?;
    if prev < text.len() {
        if let Some(gap) = text.get(prev..) {
            f(gap, false);
        }
    }
    Ok(())
}

/// The regex's matches and gaps as `(start, end, is_match)`.
fn regex_matches(regex: &Pretokenizer, s: &str) -> Result<Vec<(usize, usize, bool)>, Error> {
    let mut out = Vec::new();
    let base = s.as_ptr() as usize;
    regex_with_gaps(regex, s, |piece, is_match| {
        let start = (piece.as_ptr() as usize).saturating_sub(base);
        out.push((start, start + piece.len(), is_match));
    })?;
    Ok(out)
}

/// `(start, end, is_match)` covering `s`, as `tokenizers`' `Pattern::find_matches` gives them.
fn find_matches(matcher: &Matcher, s: &str) -> Result<Vec<(usize, usize, bool)>, Error> {
    let mut out = Vec::new();
    match matcher {
        Matcher::Regex(regex) => return regex_matches(regex, s),
        Matcher::Literal(lit) if lit.is_empty() => {
            // `tokenizers` makes a regex of the escaped string; an empty one matches (emptily)
            // at every character boundary, so each character becomes a gap of its own.
            let mut prev = 0;
            for (start, _) in s.char_indices().skip(1).chain([(s.len(), ' ')]) {
                out.push((prev, prev, true));
                out.push((prev, start, false));
                prev = start;
            }
            out.push((prev, prev, true));
        }
        Matcher::Literal(lit) => {
            let mut prev = 0;
            for (start, m) in s.match_indices(lit.as_str()) {
                if start > prev {
                    out.push((prev, start, false));
                }
                out.push((start, start + m.len(), true));
                prev = start + m.len();
            }
            if prev < s.len() {
                out.push((prev, s.len(), false));
            }
        }
        Matcher::Numeric | Matcher::Punctuation => {
            let test: fn(char) -> bool = match matcher {
                Matcher::Numeric => char::is_numeric,
                _ => is_hf_punctuation,
            };
            let mut prev = 0;
            for (start, c) in s.char_indices() {
                if test(c) {
                    if start > prev {
                        out.push((prev, start, false));
                    }
                    out.push((start, start + c.len_utf8(), true));
                    prev = start + c.len_utf8();
                }
            }
            if prev < s.len() {
                out.push((prev, s.len(), false));
            }
        }
    }
    Ok(out)
}

/// Apply `behavior` to the matches: the ranges of the resulting pieces (`tokenizers`'
/// `NormalizedString::split`, step by step).
fn apply_behavior(matches: Vec<(usize, usize, bool)>, behavior: Behavior) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(matches.len());
    match behavior {
        Behavior::Isolated => out.extend(matches.iter().map(|&(s, e, _)| (s, e))),
        Behavior::Removed => out.extend(matches.iter().filter(|m| !m.2).map(|&(s, e, _)| (s, e))),
        Behavior::Contiguous => {
            let mut previous_match = false;
            for (s, e, is_match) in matches {
                match out.last_mut() {
                    Some(last) if is_match == previous_match => last.1 = e,
                    _ => out.push((s, e)),
                }
                previous_match = is_match;
            }
        }
        Behavior::MergedWithPrevious => {
            let mut previous_match = false;
            for (s, e, is_match) in matches {
                match out.last_mut() {
                    Some(last) if is_match && !previous_match => last.1 = e,
                    _ => out.push((s, e)),
                }
                previous_match = is_match;
            }
        }
        Behavior::MergedWithNext => {
            let mut previous_match = false;
            for (s, e, is_match) in matches.into_iter().rev() {
                match out.last_mut() {
                    Some(last) if is_match && !previous_match => last.0 = s,
                    _ => out.push((s, e)),
                }
                previous_match = is_match;
            }
            out.reverse();
        }
    }
    out
}

/// Cut one piece with one split stage and append the parts to `out`.
// The `Cow` says whether the parts can borrow from the text (`'t`) or must be owned.
#[allow(clippy::ptr_arg)]
fn split_piece<'t>(
    piece: &Cow<'t, str>,
    find: impl Fn(&str) -> Result<Vec<(usize, usize, bool)>, Error>,
    behavior: Behavior,
    invert: bool,
    out: &mut Vec<Cow<'t, str>>,
) -> Result<(), Error> {
    let mut matches = find(piece)?;
    if invert {
        for m in &mut matches {
            m.2 = !m.2;
        }
    }
    for (s, e) in apply_behavior(matches, behavior) {
        let part = match piece {
            Cow::Borrowed(text) => text.get(s..e).map(Cow::Borrowed),
            Cow::Owned(text) => text.get(s..e).map(|t| Cow::Owned(t.to_owned())),
        };
        match part {
            Some(p) => out.push(p),
            None => {
                return Err(Error::Pattern(format!(
                    "split at {s}..{e} is not on a character boundary (a bug)"
                )));
            }
        }
    }
    Ok(())
}

/// `tokenizers`' `Punctuation` class: ASCII punctuation, or a character of a Unicode `P*`
/// category in the (older) Unicode tables of the `unicode_categories` crate it uses. Newer
/// punctuation (Newa, Garay, ...) is deliberately absent, and two characters that Unicode later
/// moved out of `P*` (U+166D, U+111C9) are present: the table reproduces `tokenizers` 0.23.
pub fn is_hf_punctuation(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_punctuation();
    }
    let cp = c as u32;
    HF_PUNCTUATION
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                std::cmp::Ordering::Less
            } else if lo > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Inclusive code point ranges, sorted (generated from `tokenizers.pre_tokenizers.Punctuation`
/// over every code point).
const HF_PUNCTUATION: &[(u32, u32)] = &[
    (0x0021, 0x002F),
    (0x003A, 0x0040),
    (0x005B, 0x0060),
    (0x007B, 0x007E),
    (0x00A1, 0x00A1),
    (0x00A7, 0x00A7),
    (0x00AB, 0x00AB),
    (0x00B6, 0x00B7),
    (0x00BB, 0x00BB),
    (0x00BF, 0x00BF),
    (0x037E, 0x037E),
    (0x0387, 0x0387),
    (0x055A, 0x055F),
    (0x0589, 0x058A),
    (0x05BE, 0x05BE),
    (0x05C0, 0x05C0),
    (0x05C3, 0x05C3),
    (0x05C6, 0x05C6),
    (0x05F3, 0x05F4),
    (0x0609, 0x060A),
    (0x060C, 0x060D),
    (0x061B, 0x061B),
    (0x061E, 0x061F),
    (0x066A, 0x066D),
    (0x06D4, 0x06D4),
    (0x0700, 0x070D),
    (0x07F7, 0x07F9),
    (0x0830, 0x083E),
    (0x085E, 0x085E),
    (0x0964, 0x0965),
    (0x0970, 0x0970),
    (0x0AF0, 0x0AF0),
    (0x0DF4, 0x0DF4),
    (0x0E4F, 0x0E4F),
    (0x0E5A, 0x0E5B),
    (0x0F04, 0x0F12),
    (0x0F14, 0x0F14),
    (0x0F3A, 0x0F3D),
    (0x0F85, 0x0F85),
    (0x0FD0, 0x0FD4),
    (0x0FD9, 0x0FDA),
    (0x104A, 0x104F),
    (0x10FB, 0x10FB),
    (0x1360, 0x1368),
    (0x1400, 0x1400),
    (0x166D, 0x166E),
    (0x169B, 0x169C),
    (0x16EB, 0x16ED),
    (0x1735, 0x1736),
    (0x17D4, 0x17D6),
    (0x17D8, 0x17DA),
    (0x1800, 0x180A),
    (0x1944, 0x1945),
    (0x1A1E, 0x1A1F),
    (0x1AA0, 0x1AA6),
    (0x1AA8, 0x1AAD),
    (0x1B5A, 0x1B60),
    (0x1BFC, 0x1BFF),
    (0x1C3B, 0x1C3F),
    (0x1C7E, 0x1C7F),
    (0x1CC0, 0x1CC7),
    (0x1CD3, 0x1CD3),
    (0x2010, 0x2027),
    (0x2030, 0x2043),
    (0x2045, 0x2051),
    (0x2053, 0x205E),
    (0x207D, 0x207E),
    (0x208D, 0x208E),
    (0x2308, 0x230B),
    (0x2329, 0x232A),
    (0x2768, 0x2775),
    (0x27C5, 0x27C6),
    (0x27E6, 0x27EF),
    (0x2983, 0x2998),
    (0x29D8, 0x29DB),
    (0x29FC, 0x29FD),
    (0x2CF9, 0x2CFC),
    (0x2CFE, 0x2CFF),
    (0x2D70, 0x2D70),
    (0x2E00, 0x2E2E),
    (0x2E30, 0x2E42),
    (0x3001, 0x3003),
    (0x3008, 0x3011),
    (0x3014, 0x301F),
    (0x3030, 0x3030),
    (0x303D, 0x303D),
    (0x30A0, 0x30A0),
    (0x30FB, 0x30FB),
    (0xA4FE, 0xA4FF),
    (0xA60D, 0xA60F),
    (0xA673, 0xA673),
    (0xA67E, 0xA67E),
    (0xA6F2, 0xA6F7),
    (0xA874, 0xA877),
    (0xA8CE, 0xA8CF),
    (0xA8F8, 0xA8FA),
    (0xA8FC, 0xA8FC),
    (0xA92E, 0xA92F),
    (0xA95F, 0xA95F),
    (0xA9C1, 0xA9CD),
    (0xA9DE, 0xA9DF),
    (0xAA5C, 0xAA5F),
    (0xAADE, 0xAADF),
    (0xAAF0, 0xAAF1),
    (0xABEB, 0xABEB),
    (0xFD3E, 0xFD3F),
    (0xFE10, 0xFE19),
    (0xFE30, 0xFE52),
    (0xFE54, 0xFE61),
    (0xFE63, 0xFE63),
    (0xFE68, 0xFE68),
    (0xFE6A, 0xFE6B),
    (0xFF01, 0xFF03),
    (0xFF05, 0xFF0A),
    (0xFF0C, 0xFF0F),
    (0xFF1A, 0xFF1B),
    (0xFF1F, 0xFF20),
    (0xFF3B, 0xFF3D),
    (0xFF3F, 0xFF3F),
    (0xFF5B, 0xFF5B),
    (0xFF5D, 0xFF5D),
    (0xFF5F, 0xFF65),
    (0x10100, 0x10102),
    (0x1039F, 0x1039F),
    (0x103D0, 0x103D0),
    (0x1056F, 0x1056F),
    (0x10857, 0x10857),
    (0x1091F, 0x1091F),
    (0x1093F, 0x1093F),
    (0x10A50, 0x10A58),
    (0x10A7F, 0x10A7F),
    (0x10AF0, 0x10AF6),
    (0x10B39, 0x10B3F),
    (0x10B99, 0x10B9C),
    (0x11047, 0x1104D),
    (0x110BB, 0x110BC),
    (0x110BE, 0x110C1),
    (0x11140, 0x11143),
    (0x11174, 0x11175),
    (0x111C5, 0x111C9),
    (0x111CD, 0x111CD),
    (0x111DB, 0x111DB),
    (0x111DD, 0x111DF),
    (0x11238, 0x1123D),
    (0x112A9, 0x112A9),
    (0x114C6, 0x114C6),
    (0x115C1, 0x115D7),
    (0x11641, 0x11643),
    (0x1173C, 0x1173E),
    (0x12470, 0x12474),
    (0x16A6E, 0x16A6F),
    (0x16AF5, 0x16AF5),
    (0x16B37, 0x16B3B),
    (0x16B44, 0x16B44),
    (0x1BC9F, 0x1BC9F),
    (0x1DA87, 0x1DA8B),
];

#[cfg(test)]
mod tests;
