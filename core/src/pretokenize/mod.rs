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
    pub fn split<'t>(&self, text: &'t str, f: impl FnMut(&'t str)) -> Result<(), Error> {
        // Scanners end pieces on character boundaries; checked, never trusted.
        self.cut(text, |s, e| text.get(s..e), |m| m.as_str(), f)
    }

    /// [`Self::split`], each piece as its bytes (what the encoder needs; the scanners then skip
    /// checking character boundaries).
    #[inline]
    pub fn split_bytes<'t>(&self, text: &'t str, f: impl FnMut(&'t [u8])) -> Result<(), Error> {
        let b = text.as_bytes();
        self.cut(text, |s, e| b.get(s..e), |m| m.as_str().as_bytes(), f)
    }

    /// The pieces of `text`, made by `piece(start, end)` for a scanner and by `of_match` for
    /// the regex engine.
    #[inline(always)]
    fn cut<'t, T>(
        &self,
        text: &'t str,
        piece: impl Fn(usize, usize) -> Option<T>,
        of_match: impl Fn(fancy_regex::Match<'t>) -> T,
        mut f: impl FnMut(T),
    ) -> Result<(), Error> {
        let b = text.as_bytes();
        match &self.engine {
            // One loop per scanner, so the dispatch happens once per text, not once per piece.
            Engine::Scanner(scanner, cls) => match scanner {
                Scanner::Gpt2 => blocks::walk::<{ blocks::GPT2 }, T>(b, piece, f, |b, i| {
                    scanners::gpt2(cls, b, i)
                }),
                Scanner::Cl100k => blocks::walk::<{ blocks::CL100K }, T>(b, piece, f, |b, i| {
                    scanners::cl100k(cls, b, i)
                }),
                Scanner::O200k => blocks::walk::<{ blocks::O200K }, T>(b, piece, f, |b, i| {
                    scanners::o200k(cls, b, i)
                }),
                Scanner::Llama3 => blocks::walk::<{ blocks::LLAMA3 }, T>(b, piece, f, |b, i| {
                    scanners::llama3(cls, b, i)
                }),
            },
            Engine::Regex(regex) => {
                for m in regex.find_iter(text) {
                    let m = m.map_err(|e| {
                        Error::Pattern(format!("matching {:?} failed: {e}", self.pattern))
                    })?;
                    f(of_match(m));
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
fn scanner_available(scanner: Scanner) -> bool {
    match scanner {
        Scanner::Gpt2 | Scanner::Cl100k | Scanner::O200k | Scanner::Llama3 => true,
    }
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
