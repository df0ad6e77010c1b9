//! Hand-written scanners: the pieces of the well-known patterns without a regex engine.
//!
//! Each scanner takes the text (as UTF-8 bytes) and the byte offset `i < len` where a piece
//! starts, and returns the end of the match that the pattern's regex makes at `i`. A backtracking
//! regex engine (fancy-regex, Python's `regex`; and regex-automata's leftmost-first semantics,
//! which are defined to agree with them) tries the alternatives in order and takes the first one
//! that can match; inside an alternative, greedy quantifiers try the longest repetition first and
//! give characters back one at a time; possessive ones (`++`, `?+`) never give back. The comment
//! above each scanner derives, alternative by alternative, what that search ends with, so that
//! each scanner looks at every character a bounded number of times (linear time on any input).
//!
//! Notation: `L` = `\p{L}`, `N` = `\p{N}`, `S` = `\s`, `P` = `[^\s\p{L}\p{N}]`,
//! `PRE` = `[^\r\n\p{L}\p{N}]`, `U` = `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`,
//! `W` = `[\p{Ll}\p{Lm}\p{Lo}\p{M}]` (flags of [`super::classes`]). `L`, `N`, `S`, `P` partition
//! the characters, so every character starts a match of every pattern (`\s` or `\s+` is the last
//! alternative and the others cover `L`, `N`, `P`): no text is ever skipped, and every piece is at
//! least one character long.

use super::classes::{CRLF, Classes, L, LO, N, P, PRE, S, UP};

/// The whitespace run that starts at `i`: its end, the start of its last character, and the
/// position just after its last `\r` or `\n` (if it has one).
struct WsRun {
    end: usize,
    last_start: usize,
    after_newline: Option<usize>,
}

#[inline(always)]
fn ws_run(cls: &Classes, b: &[u8], i: usize) -> WsRun {
    let mut run = WsRun {
        end: i,
        last_start: i,
        after_newline: None,
    };
    while let Some((flags, len)) = cls.at(b, run.end) {
        if flags & S == 0 {
            break;
        }
        run.last_start = run.end;
        run.end += len;
        if flags & CRLF != 0 {
            run.after_newline = Some(run.end);
        }
    }
    run
}

/// `'(?:[sdmt]|ll|ve|re)` at `i` (case-sensitive: GPT-2). The alternatives start with distinct
/// letters, so their order does not matter.
#[inline]
fn contraction_exact(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'\'') {
        return None;
    }
    match (b.get(i + 1), b.get(i + 2)) {
        (Some(b's' | b'd' | b'm' | b't'), _) => Some(i + 2),
        (Some(b'l'), Some(b'l')) | (Some(b'v' | b'r'), Some(b'e')) => Some(i + 3),
        _ => None,
    }
}

/// `'(?i:[sdmt]|ll|ve|re)` at `i`, which is the same set of strings as
/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` (no alternative is a prefix of another, so order does not
/// matter). Letters compare by simple case folding, as the regex engine does: `'ſ` (U+017F) is a
/// contraction, `'ß` is not.
#[inline]
fn contraction_folded(cls: &Classes, b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'\'') {
        return None;
    }
    let (first, end) = cls.folded_letter(b, i + 1)?;
    let second = match first {
        b's' | b'd' | b'm' | b't' => return Some(end),
        b'l' => b'l',
        b'v' | b'r' => b'e',
        _ => return None,
    };
    let (letter, end) = cls.folded_letter(b, end)?;
    (letter == second).then_some(end)
}

/// After a punctuation run: `[\r\n]*`, or `[\r\n/]*` with `slash` (o200k).
#[inline(always)]
fn newline_tail(b: &[u8], mut i: usize, slash: bool) -> usize {
    while let Some(&x) = b.get(i) {
        if x == b'\r' || x == b'\n' || (slash && x == b'/') {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// The start of the `P` run of ` ?[^\s\p{L}\p{N}]+`: `i` if it is `P`, `i + 1` if `i` is a
/// space followed by `P` (the optional space is dropped again when no `P` follows it).
#[inline(always)]
fn punct_start(cls: &Classes, b: &[u8], i: usize, f0: u8) -> Option<usize> {
    if f0 & P != 0 {
        return Some(i);
    }
    if b.get(i) == Some(&b' ') && cls.at(b, i + 1).is_some_and(|(f1, _)| f1 & P != 0) {
        return Some(i + 1);
    }
    None
}

/// `[^\r\n\p{L}\p{N}]?\p{L}+` (cl100k with possessive quantifiers, Llama 3 without: the same).
/// A letter at `i` starts the run (it is not `PRE`, so the optional prefix is empty). A `PRE`
/// character followed by a letter is the prefix. A `PRE` character not followed by a letter:
/// with the prefix the letters are missing, without it `i` itself is not a letter: no match
/// (so possessiveness changes nothing here).
#[inline(always)]
fn prefixed_letters(cls: &Classes, b: &[u8], i: usize, f0: u8, l0: usize) -> Option<usize> {
    if f0 & L != 0 {
        return Some(cls.run(b, i, L));
    }
    if f0 & PRE != 0 && cls.at(b, i + l0).is_some_and(|(f1, _)| f1 & L != 0) {
        return Some(cls.run(b, i + l0, L));
    }
    None
}

/// GPT-2, r50k, p50k, whisper: both spellings,
/// `'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s` and
/// `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`.
///
/// - (1) A contraction (case-sensitive) wins first.
/// - (2-4) ` ?X+` for X in L, N, P: the optional space is taken only when an X follows it (else the
///   engine drops it and `i` itself, a space, is not X). The run is maximal; nothing after it
///   can fail, so possessive or not gives the same end.
/// - (5-7) Otherwise `i` is whitespace (S) and the maximal run `[i, end)` follows. At the end
///   of the text, `\s++$` (or `\s+(?!\S)`, whose lookahead holds at the end) takes it all. Else
///   the run is followed by a non-space, so `\s+(?!\S)` must give back the last character (a
///   space before it is followed by that whitespace character): the piece is `[i, last_start)`
///   when that is not empty. A single whitespace character followed by a non-space is the last
///   alternative, one character (`\s` or `\s+`: the same).
// Inlined into the one loop that calls it (`blocks::walk`): no call and register saves per piece.
#[inline(always)]
pub(crate) fn gpt2(cls: &Classes, b: &[u8], i: usize) -> usize {
    let Some((f0, _)) = cls.at(b, i) else {
        return i;
    };
    if let Some(end) = contraction_exact(b, i) {
        return end;
    }
    if b.get(i) == Some(&b' ') {
        if let Some((f1, _)) = cls.at(b, i + 1) {
            // L, N, S, P partition the characters: at most one of these bits is set.
            let class = f1 & (L | N | P);
            if class != 0 {
                return cls.run(b, i + 1, class);
            }
        }
    }
    let class = f0 & (L | N | P);
    if class != 0 {
        return cls.run(b, i, class);
    }
    let ws = ws_run(cls, b, i);
    if ws.end == b.len() {
        ws.end
    } else if ws.last_start > i {
        ws.last_start
    } else {
        ws.end
    }
}

/// cl100k_base:
/// `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`
///
/// - (1) A contraction, letters compared by simple case folding.
/// - (2) `[^\r\n\p{L}\p{N}]?+\p{L}++`: see [`prefixed_letters`]; e.g. `'hello`, ` world`, `\tx`,
///   `(word` (but `((word` gives `((` by 4. then `word`).
/// - (3) One to three digits (`\p{N}`, so also `½`, `٣`, `Ⅻ`).
/// - (4) An optional space, a maximal P run, then any `\r`/`\n` run.
/// - (5-8) `i` is whitespace; `[i, end)` is the maximal run. `\s++$`: all of it at the end of the
///   text. `\s*[\r\n]`: the greedy `\s*` gives back characters until a `\r`/`\n` follows, so the
///   piece ends just after the run's last newline, if it has one. `\s+(?!\S)`: all but the last
///   character (the run is followed by a non-space), if that leaves any. `\s`: one character.
// Inlined into the one loop that calls it (`blocks::walk`): no call and register saves per piece.
#[inline(always)]
pub(crate) fn cl100k(cls: &Classes, b: &[u8], i: usize) -> usize {
    let Some((f0, l0)) = cls.at(b, i) else {
        return i;
    };
    if let Some(end) = contraction_folded(cls, b, i) {
        return end;
    }
    if let Some(end) = prefixed_letters(cls, b, i, f0, l0) {
        return end;
    }
    if f0 & N != 0 {
        return cls.run_at_most(b, i, N, 3);
    }
    if let Some(start) = punct_start(cls, b, i, f0) {
        return newline_tail(b, cls.run(b, start, P), false);
    }
    let ws = ws_run(cls, b, i);
    if ws.end == b.len() {
        ws.end
    } else if let Some(end) = ws.after_newline {
        end
    } else if ws.last_start > i {
        ws.last_start
    } else {
        ws.end
    }
}

/// The whitespace alternatives `\s*[\r\n]+|\s+(?!\S)|\s+` of Llama 3 and o200k (no `\s++$`).
/// `[i, end)` is the maximal whitespace run. `\s*[\r\n]+`: the greedy `\s*` gives back until a
/// newline follows, i.e. to the run's last newline, and `[\r\n]+` takes it (the next character
/// is not a newline, it being the last one): the piece ends after the last newline, even at the
/// end of the text (`"\n  "` at the end is `"\n"`, `"  "`). `\s+(?!\S)`: the whole run at the end
/// of the text, else all but its last character. `\s+`: the single whitespace character left.
#[inline(always)]
fn whitespace_newline_first(cls: &Classes, b: &[u8], i: usize) -> usize {
    let ws = ws_run(cls, b, i);
    if let Some(end) = ws.after_newline {
        end
    } else if ws.end == b.len() {
        ws.end
    } else if ws.last_start > i {
        ws.last_start
    } else {
        ws.end
    }
}

/// Llama 3 (and OLMo 2):
/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
///
/// As cl100k for the first four alternatives (the quantifiers are not possessive, but nothing
/// after them can fail, so no backtracking happens); the whitespace ones are
/// [`whitespace_newline_first`].
// Inlined into the one loop that calls it (`blocks::walk`): no call and register saves per piece.
#[inline(always)]
pub(crate) fn llama3(cls: &Classes, b: &[u8], i: usize) -> usize {
    llama3_family::<3>(cls, b, i)
}

/// Qwen2 (Qwen2.5, Qwen3): Llama 3's pattern with `\p{N}` (one digit) for `\p{N}{1,3}`.
#[inline(always)]
pub(crate) fn qwen2(cls: &Classes, b: &[u8], i: usize) -> usize {
    llama3_family::<1>(cls, b, i)
}

/// Llama 3's alternatives with digits in groups of at most `DIGITS`.
#[inline(always)]
fn llama3_family<const DIGITS: usize>(cls: &Classes, b: &[u8], i: usize) -> usize {
    let Some((f0, l0)) = cls.at(b, i) else {
        return i;
    };
    if let Some(end) = contraction_folded(cls, b, i) {
        return end;
    }
    if let Some(end) = prefixed_letters(cls, b, i, f0, l0) {
        return end;
    }
    if f0 & N != 0 {
        return cls.run_at_most(b, i, N, DIGITS);
    }
    if let Some(start) = punct_start(cls, b, i, f0) {
        return newline_tail(b, cls.run(b, start, P), false);
    }
    whitespace_newline_first(cls, b, i)
}

/// o200k's word alternatives from `p` (after the optional prefix), first form: `U*W+C?`.
///
/// `U*` greedily takes the maximal U run `[p, u)`. If the character at `u` is W (it is then Ll:
/// the U run stopped there), `W+` takes the maximal W run from `u`. Otherwise `U*` gives back
/// characters until a W character follows: the last character of `[p, u)` that is in both U and
/// W (Lm, Lo or M) is where `W+` starts, and `W+` ends just after it (what follows it is in U
/// only, or is `u`, not W). With no such character, this form fails from `p`.
/// Without `C` (tekken) there is no contraction to take at the end.
#[inline(always)]
fn upper_then_lower<const C: bool>(cls: &Classes, b: &[u8], p: usize) -> Option<usize> {
    let mut u = p;
    let mut after_both = None;
    let mut next = cls.at(b, u);
    while let Some((flags, len)) = next {
        if flags & UP == 0 {
            break;
        }
        u += len;
        if flags & LO != 0 {
            after_both = Some(u);
        }
        next = cls.at(b, u);
    }
    let end = match next {
        Some((flags, _)) if flags & LO != 0 => cls.run(b, u, LO),
        _ => after_both?,
    };
    Some(contraction_after::<C>(cls, b, end))
}

/// Second form from `p`: `U+W*C?`: the maximal U run (not empty), then the maximal W run.
#[inline(always)]
fn upper_then_any<const C: bool>(cls: &Classes, b: &[u8], p: usize) -> Option<usize> {
    let u = cls.run(b, p, UP);
    if u == p {
        return None;
    }
    let end = cls.run(b, u, LO);
    Some(contraction_after::<C>(cls, b, end))
}

/// The end of a word at `end` and its optional contraction, when the pattern has one (`C`).
#[inline(always)]
fn contraction_after<const C: bool>(cls: &Classes, b: &[u8], end: usize) -> usize {
    if C {
        contraction_folded(cls, b, end).unwrap_or(end)
    } else {
        end
    }
}

/// o200k_base (and Llama 4):
/// `[^\r\n\p{L}\p{N}]?[U]*[W]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[U]+[W]*(?i:...)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
/// with `U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`, `W = [\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
///
/// - (1-2) The word forms. The engine tries, for the first form, the prefix taken (when `i` is
///   PRE) and then not taken, and only then the second form, again prefix first. The optional
///   contraction at the end never fails, so each try succeeds exactly when its letter part does
///   ([`upper_then_lower`], [`upper_then_any`]). Note the overlaps: marks (M) are PRE *and* U
///   *and* W, so a mark can be the prefix or a letter; Lm and Lo are both U and W. Examples:
///   `中A` gives `中` (U* gives back `A`, then `中` is the W), `A` ; `\u{301}A` gives `\u{301}`
///   (with the mark as prefix, `A` alone has no W; without it the mark is the W), `A`.
/// - (3) One to three digits.
/// - (4) An optional space, a maximal P run, then any run of `\r`, `\n`, `/`.
/// - (5-7) [`whitespace_newline_first`].
// Inlined into the one loop that calls it (`blocks::walk`): no call and register saves per piece.
#[inline(always)]
pub(crate) fn o200k(cls: &Classes, b: &[u8], i: usize) -> usize {
    o200k_family::<true, 3>(cls, b, i)
}

/// Mistral's tekken: o200k's pattern without the contractions and with `\p{N}` (one digit)
/// instead of `\p{N}{1,3}`:
/// `[^\r\n\p{L}\p{N}]?[U]*[W]+|[^\r\n\p{L}\p{N}]?[U]+[W]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`.
/// Dropping the contraction changes nothing else: it never failed, so it never made the engine
/// backtrack into the letters.
#[inline(always)]
pub(crate) fn tekken(cls: &Classes, b: &[u8], i: usize) -> usize {
    o200k_family::<false, 1>(cls, b, i)
}

/// o200k's alternatives, with contractions after words when `C`, and digits in groups of at
/// most `DIGITS`.
#[inline(always)]
fn o200k_family<const C: bool, const DIGITS: usize>(cls: &Classes, b: &[u8], i: usize) -> usize {
    let Some((f0, l0)) = cls.at(b, i) else {
        return i;
    };
    if let Some(end) = o200k_word::<C>(cls, b, i, f0, l0) {
        return end;
    }
    if f0 & N != 0 {
        return cls.run_at_most(b, i, N, DIGITS);
    }
    if let Some(start) = punct_start(cls, b, i, f0) {
        return newline_tail(b, cls.run(b, start, P), true);
    }
    whitespace_newline_first(cls, b, i)
}

#[inline(always)]
fn o200k_word<const C: bool>(
    cls: &Classes,
    b: &[u8],
    i: usize,
    f0: u8,
    l0: usize,
) -> Option<usize> {
    let prefix = f0 & PRE != 0;
    let letter = f0 & (UP | LO) != 0;
    if !prefix && !letter {
        return None;
    }
    if prefix {
        if let Some(end) = upper_then_lower::<C>(cls, b, i + l0) {
            return Some(end);
        }
    }
    if letter {
        if let Some(end) = upper_then_lower::<C>(cls, b, i) {
            return Some(end);
        }
    }
    if prefix {
        if let Some(end) = upper_then_any::<C>(cls, b, i + l0) {
            return Some(end);
        }
    }
    if letter {
        upper_then_any::<C>(cls, b, i)
    } else {
        None
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::super::{Pretokenizer, Scanner, patterns};

    fn pieces(pattern: &str, text: &str) -> Vec<String> {
        let p = Pretokenizer::new(pattern).unwrap();
        assert!(p.scanner().is_some());
        p.pieces(text)
            .unwrap()
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn recognised_patterns_use_scanners() {
        for (pattern, scanner) in [
            (patterns::GPT2, Scanner::Gpt2),
            (patterns::GPT2_ORIGINAL, Scanner::Gpt2),
            (patterns::CL100K, Scanner::Cl100k),
            (patterns::O200K, Scanner::O200k),
            (patterns::LLAMA3, Scanner::Llama3),
            (patterns::TEKKEN, Scanner::Tekken),
            (patterns::QWEN2, Scanner::Qwen2),
        ] {
            assert_eq!(Pretokenizer::new(pattern).unwrap().scanner(), Some(scanner));
        }
        assert_eq!(Pretokenizer::new(r"\w+|\s+").unwrap().scanner(), None);
    }

    #[test]
    fn gpt2_examples() {
        let p = |t| pieces(patterns::GPT2, t);
        assert_eq!(
            p("Hello world's  end"),
            ["Hello", " world", "'s", " ", " end"]
        );
        assert_eq!(
            p("I'LL 123  \n\n x  "),
            ["I", "'", "LL", " 123", "  \n\n", " x", "  "]
        );
        assert_eq!(p("a\u{301}b ,,x"), ["a", "\u{301}", "b", " ,,", "x"]);
    }

    #[test]
    fn cl100k_examples() {
        let p = |t| pieces(patterns::CL100K, t);
        assert_eq!(
            p("I'LL don'ſ 12345"),
            ["I", "'LL", " don", "'ſ", " ", "123", "45"]
        );
        assert_eq!(
            p("((word 'quoted' \tx"),
            ["((", "word", " '", "quoted", "'", " ", "\tx"]
        );
        assert_eq!(p("a  \n  \n b \n "), ["a", "  \n  \n", " b", " \n "]);
        assert_eq!(p("x!!\r\n\r\ny  z"), ["x", "!!\r\n\r\n", "y", " ", " z"]);
    }

    #[test]
    fn llama3_examples() {
        let p = |t| pieces(patterns::LLAMA3, t);
        assert_eq!(p("a \n  "), ["a", " \n", "  "]);
        assert_eq!(p("WE'RE 1234"), ["WE", "'RE", " ", "123", "4"]);
    }

    #[test]
    fn o200k_examples() {
        let p = |t| pieces(patterns::O200K, t);
        assert_eq!(
            p("HelloWorld DON'T don't"),
            ["Hello", "World", " DON'T", " don't"]
        );
        assert_eq!(p("中A"), ["中", "A"]);
        assert_eq!(p("\u{301}A"), ["\u{301}", "A"]);
        assert_eq!(p("a/b!/\n/c"), ["a", "/b", "!/\n/", "c"]);
        assert_eq!(p("x \n  "), ["x", " \n", "  "]);
    }

    #[test]
    fn tekken_examples() {
        let p = |t| pieces(patterns::TEKKEN, t);
        assert_eq!(
            p("HelloWorld DON'T don't 2024"),
            [
                "Hello", "World", " DON", "'T", " don", "'t", " ", "2", "0", "2", "4"
            ]
        );
        assert_eq!(p("中A"), ["中", "A"]);
        assert_eq!(p("a/b!/\n/c"), ["a", "/b", "!/\n/", "c"]);
    }

    #[test]
    fn qwen2_examples() {
        let p = |t| pieces(patterns::QWEN2, t);
        assert_eq!(
            p("HelloWorld don't 2024"),
            ["HelloWorld", " don", "'t", " ", "2", "0", "2", "4"]
        );
        assert_eq!(p("x \n  "), ["x", " \n", "  "]);
    }
}
