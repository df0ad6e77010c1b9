//! Added tokens: the strings a Hugging Face tokenizer finds in text *before* normalizing and
//! pre-tokenizing it, exactly as `tokenizers`' `AddedVocabulary` does.
//!
//! Two passes, because each added token says whether it matches the raw text or the normalized
//! text (`normalized`):
//! 1. the tokens with `normalized: false` are searched in the raw text;
//! 2. the text between their matches is normalized (by the caller), and the tokens with
//!    `normalized: true` are searched in it, spelled as the normalizer rewrites them.
//!
//! What remains is pre-tokenized and merged. Each pass is one leftmost-longest Aho-Corasick scan;
//! a match is then filtered and widened by the token's flags (`single_word`, `lstrip`, `rstrip`)
//! with the same rules, in the same order, as `tokenizers` 0.23. A match that the caller disables
//! (a special token that is not allowed) is skipped *after* it was found, so it still hides any
//! token overlapping it: that is what `tokenizers` does with `encode_special_tokens = true`.

use aho_corasick::{AhoCorasick, MatchKind};

use crate::{Error, Rank};

/// One added token of a Hugging Face tokenizer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedToken {
    /// The text as written in `tokenizer.json`.
    pub content: String,
    /// What the token is searched for: `content`, or for a `normalized` token the content as the
    /// normalizer rewrites it.
    pub pattern: String,
    pub id: Rank,
    pub special: bool,
    /// Only matches where it is not inside a word (`\w` on neither side).
    pub single_word: bool,
    /// The whitespace before it belongs to the token.
    pub lstrip: bool,
    /// The whitespace after it belongs to the token.
    pub rstrip: bool,
    /// Searched in the normalized text (second pass) rather than the raw text (first pass).
    pub normalized: bool,
}

/// A stretch of text between added tokens, or an added token's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment<'t> {
    Text(&'t str),
    Token(Rank),
}

/// The added tokens, compiled for the two passes.
#[derive(Debug, Clone)]
pub struct AddedVocabulary {
    tokens: Vec<AddedToken>,
    raw: Option<Pass>,
    normalized: Option<Pass>,
    word: Option<Box<fancy_regex::Regex>>,
}

#[derive(Debug, Clone)]
struct Pass {
    automaton: AhoCorasick,
    /// Pattern index -> token index.
    token: Vec<usize>,
}

impl AddedVocabulary {
    /// Compile `tokens` (in the order `tokenizers` searches them: special tokens first, then the
    /// others, each in file order; among equal patterns the first wins).
    pub fn new(tokens: Vec<AddedToken>) -> Result<Self, Error> {
        let build = |normalized: bool| -> Result<Option<Pass>, Error> {
            let chosen: Vec<usize> = (0..tokens.len())
                .filter(|&i| tokens[i].normalized == normalized && !tokens[i].pattern.is_empty())
                .collect();
            if chosen.is_empty() {
                return Ok(None);
            }
            let automaton = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(chosen.iter().map(|&i| tokens[i].pattern.as_str()))
                .map_err(|e| Error::InvalidVocabulary(format!("cannot index added tokens: {e}")))?;
            Ok(Some(Pass {
                automaton,
                token: chosen,
            }))
        };
        let raw = build(false)?;
        let normalized = build(true)?;
        let word = if tokens.iter().any(|t| t.single_word) {
            let re = fancy_regex::Regex::new(r"\w")
                .map_err(|e| Error::Pattern(format!("cannot compile \\w: {e}")))?;
            Some(Box::new(re))
        } else {
            None
        };
        Ok(Self {
            tokens,
            raw,
            normalized,
            word,
        })
    }

    /// The tokens, in search order.
    pub fn tokens(&self) -> &[AddedToken] {
        &self.tokens
    }

    /// Which tokens to recognise: every non-special token, and the special tokens that `allowed`
    /// accepts (by content).
    pub fn enabled(&self, mut allowed: impl FnMut(&str) -> bool) -> Vec<bool> {
        self.tokens
            .iter()
            .map(|t| !t.special || allowed(&t.content))
            .collect()
    }

    fn is_word_char(&self, c: Option<char>) -> bool {
        match (c, &self.word) {
            (Some(c), Some(re)) => {
                let mut buf = [0u8; 4];
                re.is_match(c.encode_utf8(&mut buf)).unwrap_or(false)
            }
            _ => false,
        }
    }

    /// Cut `text` at the tokens of one pass (`normalized` picks the second), calling `f` with the
    /// text between them and with their ids, in order. `enabled[i]` says whether token `i` counts.
    pub fn split<'t>(
        &self,
        text: &'t str,
        normalized: bool,
        enabled: &[bool],
        mut f: impl FnMut(Segment<'t>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let pass = if normalized {
            &self.normalized
        } else {
            &self.raw
        };
        let Some(pass) = pass else {
            if !text.is_empty() {
                f(Segment::Text(text))?;
            }
            return Ok(());
        };
        let mut done = 0;
        for m in pass.automaton.find_iter(text) {
            let Some(&index) = pass.token.get(m.pattern().as_usize()) else {
                continue;
            };
            let Some(token) = self.tokens.get(index) else {
                continue;
            };
            if !enabled.get(index).copied().unwrap_or(true) {
                continue;
            }
            let (mut start, mut stop) = (m.start(), m.end());
            if token.single_word {
                let before = text[..start].chars().next_back();
                let after = text[stop..].chars().next();
                if self.is_word_char(before) || self.is_word_char(after) {
                    continue;
                }
            }
            if token.lstrip {
                let head = &text[..start];
                let spaces: usize = head
                    .chars()
                    .rev()
                    .take_while(|c| c.is_whitespace())
                    .map(char::len_utf8)
                    .sum();
                // Spaces that an earlier token already took stay with it.
                start = (start - spaces).max(done);
            }
            if token.rstrip {
                stop += text[stop..]
                    .chars()
                    .take_while(|c| c.is_whitespace())
                    .map(char::len_utf8)
                    .sum::<usize>();
            }
            if done < start {
                f(Segment::Text(&text[done..start]))?;
            }
            f(Segment::Token(token.id))?;
            done = stop;
        }
        if done < text.len() {
            f(Segment::Text(&text[done..]))?;
        }
        Ok(())
    }

    /// Encode `text` with both passes (or only the second, when the caller already did the first
    /// and normalized what was left): added tokens become their ids, the rest goes to
    /// `encode_text` (the model's pre-tokenizer and merges).
    pub fn encode_into(
        &self,
        text: &str,
        enabled: &[bool],
        first_pass: bool,
        out: &mut Vec<Rank>,
        mut encode_text: impl FnMut(&str, &mut Vec<Rank>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut second = |segment: Segment<'_>| -> Result<(), Error> {
            match segment {
                Segment::Token(id) => {
                    out.push(id);
                    Ok(())
                }
                Segment::Text(t) => self.split(t, true, enabled, |s| match s {
                    Segment::Token(id) => {
                        out.push(id);
                        Ok(())
                    }
                    Segment::Text(t) => encode_text(t, out),
                }),
            }
        };
        if first_pass {
            self.split(text, false, enabled, second)
        } else {
            second(Segment::Text(text))
        }
    }
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;

    fn token(content: &str, id: Rank) -> AddedToken {
        AddedToken {
            content: content.into(),
            pattern: content.into(),
            id,
            special: true,
            single_word: false,
            lstrip: false,
            rstrip: false,
            normalized: false,
        }
    }

    fn segments(v: &AddedVocabulary, text: &str, normalized: bool) -> Vec<String> {
        let enabled = v.enabled(|_| true);
        let mut out = Vec::new();
        v.split(text, normalized, &enabled, |s| {
            out.push(match s {
                Segment::Text(t) => t.to_owned(),
                Segment::Token(id) => format!("#{id}"),
            });
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
        out
    }

    #[test]
    fn flags_follow_tokenizers() {
        // The cases of tokenizers' own tests (added_vocabulary.rs), without the normalizer.
        let mut mask = token("<mask>", 0);
        mask.single_word = true;
        let v = AddedVocabulary::new(vec![mask]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            segments(&v, "<mask> My name <mask> A<mask> <mask>ony <mask>", false),
            ["#0", " My name ", "#0", " A<mask> <mask>ony ", "#0"]
        );
        let mut mask = token("<mask>", 0);
        (mask.single_word, mask.lstrip, mask.rstrip) = (true, true, true);
        let v = AddedVocabulary::new(vec![mask]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            segments(&v, "Hi <mask> there\t<mask>\t<mask>\u{2000}", false),
            ["Hi", "#0", "there", "#0", "#0"]
        );
    }

    #[test]
    fn passes_are_separate_and_longest_wins() {
        let mut normalized = token("ab", 1);
        normalized.normalized = true;
        let v = AddedVocabulary::new(vec![token("<s>", 0), token("<s><s>", 2), normalized])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(segments(&v, "x<s><s>ab<s>", false), ["x", "#2", "ab", "#0"]);
        assert_eq!(segments(&v, "xab", true), ["x", "#1"]);
        let disabled = v.enabled(|c| c != "<s><s>");
        let mut out = Vec::new();
        v.split("<s><s>", false, &disabled, |s| {
            out.push(s);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
        // The disabled longer match still hides the shorter ones inside it.
        assert_eq!(out, vec![Segment::Text("<s><s>")]);
    }
}
