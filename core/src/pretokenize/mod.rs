//! Pre-tokenization: cutting text into the pieces that are merged independently.
//!
//! Every model defines its pieces by a regex. The well-known patterns (GPT-2/r50k/p50k, cl100k,
//! o200k, Llama 3) get hand-written scanners that give exactly the regex's pieces, much faster
//! and in linear time; any other pattern goes through `fancy-regex` (which supports the lookahead
//! these patterns use). [`Pretokenizer::new`] picks the scanner when it recognises the pattern.

mod blocks;
mod classes;
#[cfg(test)]
mod differential_tests;
pub mod patterns;
pub mod pipeline;
mod scanners;

use crate::Error;
use classes::Classes;

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
    /// A scanner, with the character tables it reads.
    Scanner(Scanner, &'static Classes),
    Regex(Box<fancy_regex::Regex>),
}

impl Pretokenizer {
    /// Compile `pattern`, using a hand-written scanner when it is one of the known patterns.
    pub fn new(pattern: &str) -> Result<Self, Error> {
        match (patterns::recognise(pattern), classes::get()) {
            (Some(scanner), Some(classes)) if scanner_available(scanner) => Ok(Self {
                pattern: pattern.to_owned(),
                engine: Engine::Scanner(scanner, classes),
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
            Engine::Scanner(s, _) => Some(s),
            Engine::Regex(_) => None,
        }
    }

    /// Call `f` with each piece of `text`, in order. Pieces are the pattern's matches; text
    /// between matches (which the known patterns never leave) is skipped, as tiktoken does.
    #[inline]
    pub fn split<'t>(&self, text: &'t str, mut f: impl FnMut(&'t str)) -> Result<(), Error> {
        match &self.engine {
            // One loop per scanner, so the dispatch happens once per text, not once per piece.
            Engine::Scanner(scanner, cls) => match scanner {
                Scanner::Gpt2 => scan_all(text, f, |b, i| scanners::gpt2(cls, b, i)),
                Scanner::Cl100k => {
                    blocks::scan::<{ blocks::CL100K }>(text, f, |b, i| scanners::cl100k(cls, b, i))
                }
                Scanner::O200k => {
                    blocks::scan::<{ blocks::O200K }>(text, f, |b, i| scanners::o200k(cls, b, i))
                }
                Scanner::Llama3 => {
                    blocks::scan::<{ blocks::LLAMA3 }>(text, f, |b, i| scanners::llama3(cls, b, i))
                }
            },
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

    /// [`Self::split`], each piece as its bytes (what the encoder needs; the block scanners then
    /// skip checking character boundaries).
    #[inline]
    pub fn split_bytes<'t>(&self, text: &'t str, mut f: impl FnMut(&'t [u8])) -> Result<(), Error> {
        match &self.engine {
            Engine::Scanner(scanner, cls) => match scanner {
                Scanner::Cl100k => blocks::scan_bytes::<{ blocks::CL100K }>(text, f, |b, i| {
                    scanners::cl100k(cls, b, i)
                }),
                Scanner::O200k => blocks::scan_bytes::<{ blocks::O200K }>(text, f, |b, i| {
                    scanners::o200k(cls, b, i)
                }),
                Scanner::Llama3 => blocks::scan_bytes::<{ blocks::LLAMA3 }>(text, f, |b, i| {
                    scanners::llama3(cls, b, i)
                }),
                Scanner::Gpt2 => self.split(text, |p| f(p.as_bytes())),
            },
            Engine::Regex(_) => self.split(text, |p| f(p.as_bytes())),
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
fn scanner_available(scanner: Scanner) -> bool {
    match scanner {
        Scanner::Gpt2 | Scanner::Cl100k | Scanner::O200k | Scanner::Llama3 => true,
    }
}

/// Cut all of `text` with `next` (a scanner: piece start -> piece end).
#[inline(always)]
fn scan_all<'t>(
    text: &'t str,
    mut f: impl FnMut(&'t str),
    next: impl Fn(&[u8], usize) -> usize,
) -> Result<(), Error> {
    let b = text.as_bytes();
    let mut start = 0;
    while start < b.len() {
        let end = next(b, start);
        // Scanners end pieces on character boundaries, after `start`; checked, never trusted.
        match text.get(start..end) {
            Some(piece) if end > start => f(piece),
            _ => {
                return Err(Error::Pattern(format!(
                    "scanner stopped at byte {start} (a bug)"
                )));
            }
        }
        start = end;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::panic)]
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
