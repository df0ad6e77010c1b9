//! Pre-tokenization: cutting text into the pieces that are merged independently.
//!
//! Every model defines its pieces by a regex. The well-known patterns (GPT-2/r50k/p50k, cl100k,
//! o200k, Llama 3) get hand-written scanners that give exactly the regex's pieces, much faster
//! and in linear time; any other pattern goes through `fancy-regex` (which supports the lookahead
//! these patterns use). [`Pretokenizer::new`] picks the scanner when it recognises the pattern.

pub mod patterns;

use crate::Error;

/// The hand-written scanners, one per well-known pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scanner {
    Gpt2,
    Cl100k,
    O200k,
    Llama3,
}

/// A pattern ready to split text.
#[derive(Debug, Clone)]
pub struct Pretokenizer {
    pattern: String,
    engine: Engine,
}

#[derive(Debug, Clone)]
enum Engine {
    Scanner(Scanner),
    Regex(Box<fancy_regex::Regex>),
}

impl Pretokenizer {
    /// Compile `pattern`, using a hand-written scanner when it is one of the known patterns.
    pub fn new(pattern: &str) -> Result<Self, Error> {
        match patterns::recognise(pattern) {
            Some(scanner) if scanner_available(scanner) => Ok(Self {
                pattern: pattern.to_owned(),
                engine: Engine::Scanner(scanner),
            }),
            _ => Self::with_regex(pattern),
        }
    }

    /// Compile `pattern` with the general regex engine, never a scanner (for differential tests).
    pub fn with_regex(pattern: &str) -> Result<Self, Error> {
        let regex = fancy_regex::RegexBuilder::new(pattern)
            // Far above what real text needs; a pathological pattern fails with an error, not a hang.
            .backtrack_limit(10_000_000)
            .build()
            .map_err(|e| Error::Pattern(format!("cannot compile {pattern:?}: {e}")))?;
        Ok(Self {
            pattern: pattern.to_owned(),
            engine: Engine::Regex(Box::new(regex)),
        })
    }

    /// The pattern this pre-tokenizer applies.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// The scanner in use, or `None` for the general regex engine.
    pub fn scanner(&self) -> Option<Scanner> {
        match self.engine {
            Engine::Scanner(s) => Some(s),
            Engine::Regex(_) => None,
        }
    }

    /// Call `f` with each piece of `text`, in order. Pieces are the pattern's matches; text
    /// between matches (which the known patterns never leave) is skipped, as tiktoken does.
    #[inline]
    pub fn split<'t>(&self, text: &'t str, mut f: impl FnMut(&'t str)) -> Result<(), Error> {
        match &self.engine {
            Engine::Scanner(scanner) => {
                let mut start = 0;
                while start < text.len() {
                    let end = scan_next(*scanner, text, start);
                    f(&text[start..end]);
                    start = end;
                }
                Ok(())
            }
            Engine::Regex(regex) => {
                for m in regex.find_iter(text) {
                    let m = m.map_err(|e| {
                        Error::Pattern(format!("matching {:?} failed: {e}", self.pattern))
                    })?;
                    f(m.as_str());
                }
                Ok(())
            }
        }
    }

    /// The pieces of `text` as a vector (convenient for tests and small inputs).
    pub fn pieces<'t>(&self, text: &'t str) -> Result<Vec<&'t str>, Error> {
        let mut out = Vec::new();
        self.split(text, |p| out.push(p))?;
        Ok(out)
    }
}

/// Whether the scanner for this pattern is implemented (the rest fall back to the regex engine).
fn scanner_available(_scanner: Scanner) -> bool {
    false
}

/// The end of the piece that starts at `start` (`start < text.len()`); always `> start`.
#[inline]
fn scan_next(_scanner: Scanner, text: &str, start: usize) -> usize {
    // Placeholder until the scanners land: one character per piece.
    let c = text[start..].chars().next().map_or(1, char::len_utf8);
    start + c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regex_engine_splits_gpt2() {
        let p = Pretokenizer::with_regex(patterns::GPT2).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            p.pieces("Hello world's  end").unwrap_or_default(),
            vec!["Hello", " world", "'s", " ", " end"]
        );
    }

    #[test]
    fn bad_pattern_is_an_error() {
        assert!(matches!(
            Pretokenizer::new("(unclosed"),
            Err(Error::Pattern(_))
        ));
    }
}
