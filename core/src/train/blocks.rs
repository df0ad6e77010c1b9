//! Cutting long texts and files into blocks that are pre-tokenized independently (in parallel,
//! and in bounded memory for files).
//!
//! A cut must not change the pieces: the pieces of `text[..p]` followed by those of `text[p..]`
//! must be the pieces of `text`. For the built-in patterns (GPT-2, cl100k, o200k, Llama 3) two
//! kinds of places are safe, and [`CutRule::Exact`] cuts only there:
//!
//! - just after a `\n` that follows a non-space character and precedes a letter or digit
//!   (`"end.\nNext"` cuts before `N`): no piece of these patterns runs from a line break into a
//!   letter or digit, and the line break ends its piece whether or not the text ends there (the
//!   `\s++$` alternative then matches the same single `\n`);
//! - just before a single space between two ASCII letters (`"a b"` cuts before the space): letter
//!   runs stop at the space, and `" b..."` starts a piece either way.
//!
//! A custom pattern could match across such places, so for it [`CutRule::Never`] keeps in-memory
//! texts whole and [`CutRule::LineBreak`] cuts files just after a line break.
//!
//! If a block finds no safe place within [`SEARCH_BYTES`] of its target size (a megabyte of
//! text with neither), it is cut at a character boundary: the only place where a piece may change.

use std::io::Read;

use crate::Error;

/// Target size of a block: large enough that per-block overhead vanishes, small enough for
/// load balancing over threads.
pub const BLOCK_BYTES: usize = 1 << 20;
/// How far past the target size to look for a safe place before cutting anyway.
pub const SEARCH_BYTES: usize = 1 << 20;

/// Where long texts may be cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutRule {
    /// Only where the built-in patterns always end a piece (see the module docs).
    Exact,
    /// Just after any line break (files with a custom pattern).
    LineBreak,
    /// Never (in-memory texts with a custom pattern).
    Never,
}

impl CutRule {
    /// The rule for a pattern: [`CutRule::Exact`] for the built-in patterns, else `custom`.
    pub fn for_pattern(pattern: &str, custom: CutRule) -> CutRule {
        if crate::pretokenize::patterns::recognise(pattern).is_some() {
            CutRule::Exact
        } else {
            custom
        }
    }
}

/// Whether cutting `text` before byte `p` is safe under `rule` (`0 < p < text.len()`).
fn is_cut(text: &str, p: usize, rule: CutRule) -> bool {
    let bytes = text.as_bytes();
    let (Some(&before), Some(&at)) = (bytes.get(p.wrapping_sub(1)), bytes.get(p)) else {
        return false;
    };
    match rule {
        CutRule::Never => false,
        CutRule::LineBreak => before == b'\n',
        CutRule::Exact => {
            if at == b' ' {
                let after = bytes.get(p + 1).copied().unwrap_or(b' ');
                p >= 1 && before.is_ascii_alphabetic() && after.is_ascii_alphabetic()
            } else if before == b'\n' {
                let prev = text.get(..p - 1).and_then(|t| t.chars().next_back());
                let next = text.get(p..).and_then(|t| t.chars().next());
                matches!((prev, next), (Some(a), Some(b)) if !a.is_whitespace() && b.is_alphanumeric())
            } else {
                false
            }
        }
    }
}

/// The first safe cut in `from..limit`, if any.
fn find_cut(text: &str, from: usize, limit: usize, rule: CutRule) -> Option<usize> {
    if rule == CutRule::Never {
        return None;
    }
    let limit = limit.min(text.len());
    let bytes = text.as_bytes();
    (from.max(1)..limit).find(|&p| {
        // Cheap filter first: every safe cut sits at a space or just after a line break.
        (bytes[p] == b' ' || bytes[p - 1] == b'\n') && is_cut(text, p, rule)
    })
}

/// The largest character boundary `<= p` (and `> 0` when `p > 0`), for a forced cut.
fn char_boundary_at_or_before(text: &str, mut p: usize) -> usize {
    p = p.min(text.len());
    while p > 0 && !text.is_char_boundary(p) {
        p -= 1;
    }
    p
}

/// Cut `text` into blocks of about `block` bytes at safe places (see the module docs).
pub fn split_blocks(text: &str, block: usize, rule: CutRule) -> Vec<&str> {
    let block = block.max(1);
    let mut out = Vec::with_capacity(text.len() / block + 1);
    let mut start = 0;
    while rule != CutRule::Never && text.len() - start > block + SEARCH_BYTES {
        let target = start + block;
        let cut = find_cut(text, target, target + SEARCH_BYTES, rule)
            .unwrap_or_else(|| char_boundary_at_or_before(text, target + SEARCH_BYTES));
        if cut <= start {
            break;
        }
        out.push(&text[start..cut]);
        start = cut;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Reads a UTF-8 file (or any reader) as a sequence of texts cut at safe places, so that a
/// file of any size is counted in bounded memory. Line endings are kept as they are.
pub struct TextChunks<R> {
    reader: R,
    name: String,
    rule: CutRule,
    buf: Vec<u8>,
    /// Bytes of the input before `buf`.
    offset: u64,
    eof: bool,
}

impl<R: Read> TextChunks<R> {
    /// `name` is used in error messages (a file path).
    pub fn new(reader: R, name: impl Into<String>, rule: CutRule) -> Self {
        Self {
            reader,
            name: name.into(),
            rule,
            buf: Vec::new(),
            offset: 0,
            eof: false,
        }
    }

    /// Bytes handed out so far.
    pub fn bytes_read(&self) -> u64 {
        self.offset
    }

    fn fill(&mut self, want: usize) -> Result<(), Error> {
        while !self.eof && self.buf.len() < want {
            let old = self.buf.len();
            self.buf.resize(want, 0);
            match self.reader.read(&mut self.buf[old..]) {
                Ok(0) => {
                    self.buf.truncate(old);
                    self.eof = true;
                }
                Ok(n) => self.buf.truncate(old + n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => self.buf.truncate(old),
                Err(e) => {
                    self.buf.truncate(old);
                    return Err(Error::InvalidArgument(format!(
                        "cannot read {}: {e}",
                        self.name
                    )));
                }
            }
        }
        Ok(())
    }

    /// The next text of about `size` bytes (more when no safe cut comes sooner), or `None` at
    /// the end of the input. Invalid UTF-8 is an error naming the file and byte offset.
    pub fn next_text(&mut self, size: usize) -> Result<Option<String>, Error> {
        let size = size.max(1);
        self.fill(size + SEARCH_BYTES)?;
        if self.buf.is_empty() {
            return Ok(None);
        }
        let valid = match std::str::from_utf8(&self.buf) {
            Ok(_) => self.buf.len(),
            Err(e) if e.error_len().is_none() && !self.eof => e.valid_up_to(),
            Err(e) => {
                return Err(Error::InvalidArgument(format!(
                    "{} is not UTF-8: invalid byte at offset {} (decode it yourself, e.g. with \
                     errors=\"replace\", and pass the text instead)",
                    self.name,
                    self.offset + e.valid_up_to() as u64
                )));
            }
        };
        let text = std::str::from_utf8(&self.buf[..valid])
            .map_err(|e| Error::InvalidArgument(format!("{}: {e}", self.name)))?;
        let cut = if self.eof && valid == self.buf.len() && valid <= size + SEARCH_BYTES {
            valid
        } else {
            find_cut(text, size.min(valid), valid, self.rule)
                .unwrap_or_else(|| char_boundary_at_or_before(text, valid))
        };
        let cut = if cut == 0 { valid } else { cut };
        let rest = self.buf.split_off(cut);
        let chunk = std::mem::replace(&mut self.buf, rest);
        self.offset += chunk.len() as u64;
        String::from_utf8(chunk)
            .map(Some)
            .map_err(|e| Error::InvalidArgument(format!("{}: {e}", self.name)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::Pretokenizer;
    use crate::pretokenize::patterns;

    const SAMPLE: &str = "The cat sat.\nOn the mat, 12345 times!\n\n  Indented\tline\r\nCRLF end\nя тоже\n\
                          日本語\n// comment\n}\nfoo's bar  baz\n";

    #[test]
    fn exact_cuts_keep_the_pieces_of_every_builtin_pattern() {
        let text = SAMPLE.repeat(20);
        for pattern in [
            patterns::GPT2,
            patterns::CL100K,
            patterns::O200K,
            patterns::LLAMA3,
        ] {
            let pre = Pretokenizer::with_regex(pattern).unwrap();
            let whole = pre.pieces(&text).unwrap();
            let mut cuts = 0;
            for p in 1..text.len() {
                if text.is_char_boundary(p) && is_cut(&text, p, CutRule::Exact) {
                    cuts += 1;
                    let mut parts = pre.pieces(&text[..p]).unwrap();
                    parts.extend(pre.pieces(&text[p..]).unwrap());
                    assert_eq!(parts, whole, "cut at {p} changes the pieces of {pattern}");
                }
            }
            assert!(cuts > 100);
        }
    }

    #[test]
    fn split_blocks_covers_the_text() {
        let text = SAMPLE.repeat(200_000);
        let blocks = split_blocks(&text, 1000, CutRule::Exact);
        assert!(blocks.len() > 1000);
        assert_eq!(blocks.concat(), text);
        assert_eq!(
            split_blocks(&text, 1000, CutRule::Never),
            vec![text.as_str()]
        );
    }

    #[test]
    fn forced_cut_on_a_long_run() {
        let text = "ж".repeat(3 * SEARCH_BYTES);
        let blocks = split_blocks(&text, 10, CutRule::Exact);
        assert!(blocks.len() >= 2);
        assert_eq!(blocks.concat(), text);
    }

    #[test]
    fn text_chunks_reads_everything_and_reports_bad_utf8() {
        let text = SAMPLE.repeat(50_000);
        let mut chunks = TextChunks::new(text.as_bytes(), "mem", CutRule::Exact);
        let mut joined = String::new();
        let mut n = 0;
        while let Some(t) = chunks.next_text(100_000).unwrap() {
            joined.push_str(&t);
            n += 1;
        }
        assert!(n > 5);
        assert_eq!(joined, text);
        assert_eq!(chunks.bytes_read(), text.len() as u64);

        let mut bad = b"ok ".repeat(10);
        bad.push(0xFF);
        let err = TextChunks::new(&bad[..], "bad.txt", CutRule::LineBreak)
            .next_text(4)
            .unwrap_err();
        assert!(err.to_string().contains("bad.txt") && err.to_string().contains("offset 30"));
    }
}
