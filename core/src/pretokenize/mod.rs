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

/// The backtracking steps one match call of the general engine may take. Each call either
/// fails or ends a match, after which the next one starts at least one character further on
/// (an empty match included), so a text of `n` characters costs at most `n + 1` calls: the work
/// is linear in the text, and a pattern that backtracks exponentially (`(?:(a)|\1){1,19}b`)
/// fails at the first call with an error instead of running for minutes.
pub const BACKTRACK_LIMIT: usize = 100_000;

/// A greedy run counts one step per character, so a match longer than [`BACKTRACK_LIMIT`] (a
/// megabyte of one letter under a pattern without a scanner) is retried with doubling limits,
/// all retries of one text together taking at most this many steps per byte of it: the work
/// stays linear, and such a run costs about four steps per character in retries.
pub const RETRY_STEPS_PER_BYTE: usize = 16;

/// The hand-written scanners, one per well-known pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scanner {
    Gpt2,
    Cl100k,
    O200k,
    Llama3,
    Tekken,
    Qwen2,
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
            .backtrack_limit(BACKTRACK_LIMIT)
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
    /// between matches is skipped (a `tokenizer.json` stage may mean to leave it out).
    #[inline]
    pub fn split<'t>(&self, text: &'t str, f: impl FnMut(&'t str)) -> Result<(), Error> {
        // Scanners end pieces on character boundaries; checked, never trusted.
        self.cut::<false, _>(text, |s, e| text.get(s..e), |m| m.as_str(), f)
    }

    /// [`Self::split`] for a model whose pieces must cover the text (a rank encoder, a
    /// trainer): text the pattern leaves between matches is an [`Error::Pattern`] naming its
    /// offset, never dropped (tiktoken drops it). The known patterns cover every text.
    #[inline]
    pub fn split_covering<'t>(&self, text: &'t str, f: impl FnMut(&'t str)) -> Result<(), Error> {
        self.cut::<true, _>(text, |s, e| text.get(s..e), |m| m.as_str(), f)
    }

    /// [`Self::split_covering`], each piece as its bytes (what the encoder needs; the scanners
    /// then skip checking character boundaries).
    #[inline]
    pub fn split_bytes<'t>(&self, text: &'t str, f: impl FnMut(&'t [u8])) -> Result<(), Error> {
        let b = text.as_bytes();
        self.cut::<true, _>(text, |s, e| b.get(s..e), |m| m.as_str().as_bytes(), f)
    }

    /// The pieces of `text`, made by `piece(start, end)` for a scanner and by `of_match` for
    /// the regex engine.
    #[inline(always)]
    fn cut<'t, const COVER: bool, T>(
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
                Scanner::Tekken => blocks::walk::<{ blocks::TEKKEN }, T>(b, piece, f, |b, i| {
                    scanners::tekken(cls, b, i)
                }),
                Scanner::Qwen2 => blocks::walk::<{ blocks::QWEN2 }, T>(b, piece, f, |b, i| {
                    scanners::qwen2(cls, b, i)
                }),
            },
            Engine::Regex(regex) => {
                let mut retries = Retries::new(&self.pattern, text.len());
                // fancy-regex's own iteration, with a retry where a call runs out of steps.
                let mut at = 0;
                let mut last_end = None;
                let mut covered = 0;
                while at <= text.len() {
                    let found = match regex.find_from_pos(text, at) {
                        Err(e) if out_of_steps(&e) => retries.find(text, at)?,
                        found => found.map_err(|e| match_failed(&self.pattern, at, &e))?,
                    };
                    let Some(m) = found else { break };
                    if m.start() == m.end() {
                        at = m.end() + text[m.end()..].chars().next().map_or(1, char::len_utf8);
                        if last_end == Some(m.end()) {
                            continue; // no empty match right after a match
                        }
                    } else {
                        at = m.end();
                    }
                    last_end = Some(m.end());
                    if COVER {
                        if m.start() > covered {
                            return Err(unmatched(&self.pattern, text, covered, m.start()));
                        }
                        covered = covered.max(m.end());
                    }
                    f(of_match(m));
                }
                if COVER && covered < text.len() {
                    return Err(unmatched(&self.pattern, text, covered, text.len()));
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

fn out_of_steps(e: &fancy_regex::Error) -> bool {
    matches!(
        e,
        fancy_regex::Error::RuntimeError(fancy_regex::RuntimeError::BacktrackLimitExceeded)
    )
}

/// The retries of one text's match calls that ran out of steps: each with twice the last
/// limit, every limit tried charged to the text's budget of [`RETRY_STEPS_PER_BYTE`] per byte.
struct Retries<'p> {
    pattern: &'p str,
    budget: usize,
    limit: usize,
}

impl<'p> Retries<'p> {
    fn new(pattern: &'p str, text_len: usize) -> Self {
        Self {
            pattern,
            budget: text_len.saturating_mul(RETRY_STEPS_PER_BYTE),
            limit: BACKTRACK_LIMIT,
        }
    }

    fn find<'t>(
        &mut self,
        text: &'t str,
        at: usize,
    ) -> Result<Option<fancy_regex::Match<'t>>, Error> {
        loop {
            let limit = self.limit.saturating_mul(2);
            if limit > self.budget {
                let e = fancy_regex::RuntimeError::BacktrackLimitExceeded;
                return Err(match_failed(
                    self.pattern,
                    at,
                    &fancy_regex::Error::RuntimeError(e),
                ));
            }
            self.budget -= limit;
            self.limit = limit;
            // Compiled again for each long match: rare, and a millisecond or so.
            let regex = fancy_regex::RegexBuilder::new(self.pattern)
                .backtrack_limit(limit)
                .build()
                .map_err(|e| Error::Pattern(format!("cannot compile {:?}: {e}", self.pattern)))?;
            match regex.find_from_pos(text, at) {
                Err(e) if out_of_steps(&e) => {}
                found => {
                    // The text's next retry starts at the limit that sufficed.
                    self.limit = limit / 2;
                    return found.map_err(|e| match_failed(self.pattern, at, &e));
                }
            }
        }
    }
}

/// The error of a match call of `pattern` that started at byte `offset` of the text.
fn match_failed(pattern: &str, offset: usize, e: &fancy_regex::Error) -> Error {
    Error::Pattern(format!(
        "matching {pattern:?} failed at byte offset {offset} of the text: {e} (the pattern \
         backtracks too much; at most {BACKTRACK_LIMIT} steps per match, and \
         {RETRY_STEPS_PER_BYTE} per byte of the text for longer matches)"
    ))
}

/// The error of text from byte `start` to `end` that `pattern` does not match.
fn unmatched(pattern: &str, text: &str, start: usize, end: usize) -> Error {
    let gap = text.get(start..end).unwrap_or_default();
    let shown: String = gap.chars().take(20).collect();
    let more = if shown.len() < gap.len() { "..." } else { "" };
    Error::Pattern(format!(
        "{pattern:?} does not match the text at byte offset {start} ({shown:?}{more}): that \
         text would be dropped; use a pattern that matches every character (end it with \
         `|\\s+|.` for example)"
    ))
}

/// Whether the scanner for this pattern is implemented (the rest fall back to the regex engine).
fn scanner_available(scanner: Scanner) -> bool {
    match scanner {
        Scanner::Gpt2
        | Scanner::Cl100k
        | Scanner::O200k
        | Scanner::Llama3
        | Scanner::Tekken
        | Scanner::Qwen2 => true,
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

    /// Issue 31 point 2: a pattern that backtracks exponentially took 21-58 s on 1000 letters
    /// under the old per-call limit of ten million steps; now the first call fails, naming the
    /// pattern and the offset.
    #[test]
    fn exponential_backtracking_fails_fast_with_the_pattern_and_offset() {
        let pattern = r"(?:(a)|\1){1,19}b|.";
        let p = Pretokenizer::new(pattern).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.scanner(), None);
        for text in ["a".repeat(1000), format!("xyz{}", "a".repeat(3000))] {
            let start = std::time::Instant::now();
            let Err(Error::Pattern(msg)) = p.pieces(&text) else {
                panic!("no error for {} bytes", text.len());
            };
            assert!(start.elapsed().as_secs() < 5, "{:?}", start.elapsed());
            assert!(msg.contains(&format!("{pattern:?}")), "{msg}");
            let offset = if text.starts_with('x') { 3 } else { 0 };
            assert!(msg.contains(&format!("byte offset {offset} ")), "{msg}");
        }
        // Within the bound the same pattern still matches.
        assert_eq!(p.pieces("aab").unwrap_or_default(), vec!["aab"]);
    }

    /// A match longer than the per-call limit (a pattern without a scanner; Qwen2's, run on the
    /// regex engine) is found by the retries, with the pieces a limitless engine gives.
    #[test]
    fn long_runs_under_a_pattern_without_scanner_are_retried() {
        let qwen2 = patterns::QWEN2;
        let p = Pretokenizer::with_regex(qwen2).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.scanner(), None);
        let unlimited = fancy_regex::RegexBuilder::new(qwen2)
            .backtrack_limit(usize::MAX)
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let run = 300_000;
        let texts = [
            "a".repeat(run),
            format!("x {} y{}z", "b".repeat(run), " ".repeat(run)),
            format!("{}!{}", "é".repeat(run / 2), "a".repeat(run)),
        ];
        for text in &texts {
            let ours = p.pieces(text).unwrap_or_else(|e| panic!("{e}"));
            let want: Vec<&str> = unlimited
                .find_iter(text)
                .map(|m| m.map(|m| m.as_str()).unwrap_or_default())
                .collect();
            assert_eq!(ours, want);
        }
    }

    /// Real tokenizer patterns on long runs stay within the bound.
    #[test]
    fn tokenizer_patterns_on_long_runs_stay_within_the_limit() {
        let qwen2 = patterns::QWEN2;
        for pattern in [patterns::GPT2, qwen2] {
            let p = Pretokenizer::with_regex(pattern).unwrap_or_else(|e| panic!("{e}"));
            for text in [
                " ".repeat(100_000) + "a",
                "\t\n ".repeat(20_000) + "x",
                "a".repeat(200_000),
            ] {
                let pieces = p.pieces(&text).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(pieces.concat(), text);
            }
        }
    }

    /// Issue 30 point 6: text a pattern leaves between its matches is an error naming its
    /// offset where the pieces must cover the text, and skipped where a stage means it.
    #[test]
    fn unmatched_text_is_an_error_where_pieces_must_cover_the_text() {
        let p = Pretokenizer::new("[a-z]+").unwrap_or_else(|e| panic!("{e}"));
        for (text, offset, gap) in [
            ("abc 12 def", 3, "\" 12 \""),
            ("ab!", 2, "\"!\""),
            ("€x", 0, "\"€\""),
        ] {
            let Err(Error::Pattern(msg)) = p.split_covering(text, |_| {}) else {
                panic!("no error for {text:?}");
            };
            assert!(
                msg.contains(&format!("byte offset {offset} ({gap}")),
                "{msg}"
            );
            let Err(Error::Pattern(_)) = p.split_bytes(text, |_| {}) else {
                panic!("no error for {text:?}");
            };
            assert!(p.split(text, |_| {}).is_ok());
        }
        assert_eq!(p.pieces("abc 12").unwrap_or_default(), vec!["abc"]);
        let empty = Pretokenizer::new(r"\s*").unwrap_or_else(|e| panic!("{e}"));
        assert!(empty.split_covering("  x", |_| {}).is_err());
        let mut all = Vec::new();
        let covering = Pretokenizer::new(r"[a-z]+|\s+|.").unwrap_or_else(|e| panic!("{e}"));
        assert!(
            covering
                .split_covering("abc 12 def", |p| all.push(p))
                .is_ok()
        );
        assert_eq!(all.concat(), "abc 12 def");
    }

    #[test]
    fn bad_pattern_is_an_error() {
        assert!(matches!(
            Pretokenizer::new("(unclosed"),
            Err(Error::Pattern(_))
        ));
    }
}
