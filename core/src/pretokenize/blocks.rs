//! The pieces of o200k, cl100k, Llama 3, tekken and Qwen2 64 bytes at a time: where ASCII text is cut, found
//! with bit masks, not one character at a time.
//!
//! The scalar scanners ([`super::scanners`]) decide each piece with a few branches on the
//! classes of its characters; in English text those branches are taken or not with little
//! pattern, and their mispredictions are a large part of the scanner's time. Here a
//! block of 64 bytes that starts where a piece starts is classified with SIMD compares (one bit
//! per byte and class), and the starts of all its pieces come out of a fixed sequence of bit
//! operations. The encoder then walks the start bits.
//!
//! Only starts that the block can prove are used: a start may depend on up to two characters
//! after it (a contraction `'ll`), and where a whitespace run ends depends on what follows it,
//! so the proven region stops two bytes before the first byte that is not ASCII (or the end of
//! the block) and before a whitespace run that reaches it. The piece that begins at the last
//! proven start is not emitted; the next block starts there. Whatever a block cannot decide
//! (non-ASCII text, a piece longer than the block) goes to the scalar scanner, one piece at a
//! time, so the two always agree (and differential tests check that they do, on the corpus and
//! on random text).
//!
//! The rules, for ASCII (`P` is anything but a letter, digit or whitespace):
//! - A word is an optional prefix character and a letter run. The prefix (any character but a
//!   letter, digit, `\r` or `\n`) is taken when it begins a piece: a space or tab always does (it
//!   is the last character of its whitespace run), punctuation does unless it continues a
//!   punctuation run, follows a space (` ?P+` takes both) or is absorbed by the tail of a
//!   punctuation run. o200k cuts a letter run where an upper-case letter follows a lower-case one
//!   (its words are `[U]*[W]+|[U]+[W]*`, with `U` = `[A-Z]`, `W` = `[a-z]` in ASCII; `\p{Lm}`,
//!   `\p{Lo}` and marks, which make those forms subtle, are not ASCII).
//! - Contractions (`'s`, `'t`, `'m`, `'d`, `'re`, `'ve`, `'ll`, any case): o200k's belong to the
//!   word whose letters they follow; cl100k's and Llama 3's are pieces of their own wherever an
//!   apostrophe begins a piece. Either way the character after one starts a piece.
//! - Digits: groups of three from the start of the run.
//! - Punctuation: ` ?P+` and a tail: `[\r\n]*`, or `[\r\n/]*` for o200k.
//! - Whitespace (not absorbed by a tail): a run is cut after its last newline, and its last
//!   character (if a space or tab) is a piece of its own or the prefix of what follows; at the end
//!   of the text cl100k keeps a whole run together (`\s++$`).

/// One bit per byte of a block (bit `i` is byte `i`), per class.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct Masks {
    /// `[A-Z]`
    upper: u64,
    /// `[a-z]`
    lower: u64,
    /// `[0-9]`
    digit: u64,
    /// `' '`
    space: u64,
    /// `\r`, `\n`
    newline: u64,
    /// `\t`, `\n`, `\x0b`, `\x0c`, `\r`, `' '` (Unicode White_Space in ASCII)
    white: u64,
    /// `'`
    apostrophe: u64,
    /// `/`
    slash: u64,
    /// bytes of non-ASCII characters
    high: u64,
}

/// The classes of 64 bytes, with SSE2 (every x86_64 CPU has it).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(unsafe_code)]
fn classify(block: &[u8; 64]) -> Masks {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi8, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8,
        _mm_or_si128, _mm_set1_epi8,
    };
    let mut m = Masks::default();
    for (k, chunk) in block.chunks_exact(16).enumerate() {
        let shift = 16 * k;
        // SAFETY: SSE2 is part of x86_64 (the intrinsics are `unsafe` only because that is a
        // target feature); the load reads the 16 bytes of `chunk`, with no alignment needed.
        unsafe {
            let v = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
            let bits = |x: __m128i| u64::from(_mm_movemask_epi8(x) as u16) << shift;
            let eq = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
            // `lo <= v < lo + n` as one signed compare: move `lo` to -128.
            let within = |lo: u8, n: u8| {
                let moved = _mm_add_epi8(v, _mm_set1_epi8(128u8.wrapping_sub(lo) as i8));
                _mm_cmplt_epi8(moved, _mm_set1_epi8(128u8.wrapping_add(n) as i8))
            };
            m.upper |= bits(within(b'A', 26));
            m.lower |= bits(within(b'a', 26));
            m.digit |= bits(within(b'0', 10));
            m.space |= bits(eq(b' '));
            m.newline |= bits(_mm_or_si128(eq(b'\r'), eq(b'\n')));
            m.white |= bits(_mm_or_si128(within(b'\t', 5), eq(b' ')));
            m.apostrophe |= bits(eq(b'\''));
            m.slash |= bits(eq(b'/'));
            m.high |= bits(v);
        }
    }
    m
}

/// The same classes, a byte at a time (the tests' reference; on other architectures, where it
/// would cost more than the blocks save, [`walk`] leaves all text to the scalar scanner).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn classify_bytes(block: &[u8; 64]) -> Masks {
    let mut m = Masks::default();
    for (i, &b) in block.iter().enumerate() {
        let bit = 1u64 << i;
        let set = |mask: &mut u64, yes: bool| {
            if yes {
                *mask |= bit;
            }
        };
        set(&mut m.upper, b.is_ascii_uppercase());
        set(&mut m.lower, b.is_ascii_lowercase());
        set(&mut m.digit, b.is_ascii_digit());
        set(&mut m.space, b == b' ');
        set(&mut m.newline, b == b'\r' || b == b'\n');
        set(&mut m.white, matches!(b, b'\t'..=b'\r' | b' '));
        set(&mut m.apostrophe, b == b'\'');
        set(&mut m.slash, b == b'/');
        set(&mut m.high, b >= 0x80);
    }
    m
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn classify(block: &[u8; 64]) -> Masks {
    classify_bytes(block)
}

/// Bits `i` such that `seed` has bit `j >= i` and `through` has every bit in `i..j`: each seed
/// bit spread down over the run of `through` bits just below it (Kogge-Stone, six steps).
#[inline(always)]
fn spread_down(seed: u64, through: u64) -> u64 {
    let (mut reach, mut pass) = (seed, through);
    for step in [1, 2, 4, 8, 16, 32] {
        reach |= pass & (reach >> step);
        pass &= pass >> step;
    }
    reach
}

/// The same upwards: bits `j` such that `seed` has bit `i <= j` and `through` every bit in
/// `i+1..=j`. (An addition would carry a seed up a run only if no other seed were in it.)
#[inline(always)]
fn spread_up(seed: u64, through: u64) -> u64 {
    let (mut reach, mut pass) = (seed, through);
    for step in [1, 2, 4, 8, 16, 32] {
        reach |= pass & (reach << step);
        pass &= pass << step;
    }
    reach
}

/// Which pattern's pieces [`block_starts`] finds.
pub(super) const O200K: u8 = 0;
pub(super) const CL100K: u8 = 1;
pub(super) const LLAMA3: u8 = 2;
/// GPT-2's pattern (` ?\p{L}+` words, contractions first), which has no block rules: its
/// scalar scanner cuts all text.
pub(super) const GPT2: u8 = 3;
/// Mistral's tekken: o200k's rules without contractions, one digit per piece.
pub(super) const TEKKEN: u8 = 4;
/// Qwen2: Llama 3's rules, one digit per piece.
pub(super) const QWEN2: u8 = 5;

/// Whether pattern `R` has o200k's words (`[U]*[W]+|[U]+[W]*`) and punctuation tail `[\r\n/]*`.
const fn o200k_words(r: u8) -> bool {
    r == O200K || r == TEKKEN
}

/// The starts of the pieces of pattern `R` in `block`, which begins where a piece begins: bit
/// `i` is set when a piece starts at byte `i`. Only bits below the returned count are proven.
/// When the text ends inside the block, at `end` (the bytes after it are not ASCII, so unknown),
/// the end is where the last piece ends: its bit is set and proven too.
#[inline(always)]
fn block_starts<const R: u8>(block: &[u8; 64], m: &Masks, end: Option<u32>) -> (u64, u32) {
    let letter = m.upper | m.lower;
    let tab = m.white & !m.newline & !m.space;
    let punct = !(letter | m.digit | m.white | m.high);

    // The tail of a punctuation run: from a newline right after punctuation.
    let tail_chars = if o200k_words(R) {
        m.newline | m.slash
    } else {
        m.newline
    };
    let tail_start = m.newline & (punct << 1);
    let tail = if tail_start == 0 {
        0
    } else {
        spread_up(tail_start, tail_chars)
    };
    let punct = punct & !tail;

    // Contractions, checked byte by byte (a few per block at most): for o200k an apostrophe
    // after a letter, for the others one that begins a piece (it neither continues punctuation
    // nor follows a space).
    let (mut one, mut two) = (0u64, 0u64);
    let after = if R == O200K {
        letter << 1
    } else {
        !(punct << 1) & !(m.space << 1)
    };
    // Tekken has no contractions: its apostrophes are punctuation.
    let mut candidates = if R == TEKKEN {
        0
    } else {
        m.apostrophe & after & ((1 << 62) - 1)
    };
    while candidates != 0 {
        let q = candidates.trailing_zeros() as usize;
        candidates &= candidates - 1;
        // `| 0x20` lower-cases ASCII letters and maps no other byte onto one.
        let (first, second) = (block[q + 1] | 0x20, block[q + 2] | 0x20);
        match (first, second) {
            (b's' | b't' | b'm' | b'd', _) => one |= 1 << q,
            (b'r' | b'v', b'e') | (b'l', b'l') => two |= 1 << q,
            _ => {}
        }
    }
    let contraction = one | two;
    let contraction_letters = (contraction << 1) | (two << 2);
    let after_contraction = (one << 2) | (two << 3);

    // A punctuation run's first character (for o200k not a contraction's apostrophe, which
    // belongs to the word before it)...
    let mut punct_run = punct & !(punct << 1);
    if R == O200K {
        punct_run &= !contraction;
    }
    // ...starts a piece unless a space before it does (` ?P+`); then it can be a prefix.
    let punct_start = punct_run & !(m.space << 1);

    let word = letter & !(letter << 1) & !contraction_letters;
    let prefixed = word & ((m.space | tab | punct_start) << 1);
    let camel = if o200k_words(R) {
        m.upper & (m.lower << 1) & !contraction_letters
    } else {
        0
    };

    let digits = if R == TEKKEN || R == QWEN2 {
        m.digit
    } else {
        let three_digits = m.digit & (m.digit << 1) & (m.digit << 2);
        let mut group = m.digit & !(m.digit << 1);
        let mut digits = group;
        while group != 0 {
            group = (group << 3) & three_digits;
            digits |= group;
        }
        digits
    };

    let white = m.white & !tail;
    let blank = white & !m.newline;
    let white_newline = white & m.newline;
    // A newline followed, within its run, by blanks and another newline is not the last one.
    let last_newline = white_newline & !(spread_down(white_newline, blank) >> 1);
    let white_firsts = (white & !(white << 1)) | ((last_newline << 1) & white);
    let white_lasts = (m.space | tab) & white & !(white >> 1);

    let starts = 1
        | (word & !prefixed)
        | (prefixed >> 1)
        | camel
        | after_contraction
        | digits
        | punct_start
        | ((tail << 1) & !tail)
        | white_firsts
        | white_lasts;

    // An o200k contraction right after another one's letters (`x's's`) is one only if those
    // letters are a word's; rare enough to leave to the scalar scanner.
    let chained = if R == O200K {
        contraction & ((one << 2) | (two << 3))
    } else {
        0
    };
    let chain_cut = if chained == 0 {
        64
    } else {
        chained.trailing_zeros()
    };
    let known = m.high.trailing_zeros();
    if let Some(end) = end.filter(|&end| end == known) {
        let last = 1u64 << end >> 1;
        let starts = if R == CL100K {
            // `\s++$`: the whitespace run that ends the text is one piece.
            let run = (white << (64 - end)).leading_ones();
            let inside = ((1u64 << end) - 1) & !((1u64 << (end + 1 - run.max(1))) - 1);
            starts & !inside
        } else {
            // `\s+(?!\S)` takes all of a whitespace run at the end: its last blank is not cut
            // off (but a newline before it still ends a piece).
            (starts & !(white_lasts & last)) | (white_firsts & last)
        };
        return (starts | (1 << end), chain_cut.min(end + 1));
    }

    // What is proven: two bytes before the first unknown one (the end of the block or the first
    // byte that is not ASCII), and not into a whitespace run that reaches the unknown part.
    let mut proven = known.saturating_sub(2).min(62).min(chain_cut);
    if known > 0 && (white >> (known - 1)) & 1 == 1 {
        let run = (white << (64 - known)).leading_ones();
        proven = proven.min(known - run);
    }
    (starts, proven)
}

/// Cut `b` (the bytes of a text) with pattern `R`: blocks where they can decide (on x86_64), the
/// pattern's scalar scanner (`scalar`: piece start -> piece end) where they cannot. `f` gets
/// what `piece(start, end)` makes of each piece, in order; `None` there (a piece that is not a
/// `str`, a scanner bug) is an error.
#[inline(always)]
pub(super) fn walk<const R: u8, T>(
    b: &[u8],
    piece: impl Fn(usize, usize) -> Option<T>,
    mut f: impl FnMut(T),
    scalar: impl Fn(&[u8], usize) -> usize,
) -> Result<(), crate::Error> {
    let emit = |start, end| {
        let made = piece(start, end).ok_or_else(|| {
            crate::Error::Pattern(format!(
                "scanner ended a piece at byte {end}, inside a character or past the text (a bug)"
            ))
        })?;
        f(made);
        Ok(())
    };
    scan_with::<R>(b, emit, scalar, R != GPT2 && cfg!(target_arch = "x86_64"))
}

/// The loop behind [`walk`]: `emit(start, end)` for each piece, in order, with the blocks used
/// only if `blocks` (tests use them on every architecture).
#[inline(always)]
fn scan_with<const R: u8>(
    b: &[u8],
    mut emit: impl FnMut(usize, usize) -> Result<(), crate::Error>,
    scalar: impl Fn(&[u8], usize) -> usize,
    blocks: bool,
) -> Result<(), crate::Error> {
    let mut start = 0;
    let mut padded;
    while start < b.len() {
        let rest = &b[start..];
        // Text that is not ASCII goes to the scalar scanner without trying a block (a block
        // would find too little to prove, and multilingual text would pay for one per piece).
        if blocks && ascii_ahead(rest) {
            let (block, end) = match rest.first_chunk::<64>() {
                Some(block) => (block, None),
                None => {
                    // The end of the text: padded with bytes that are not ASCII.
                    padded = [0xFF; 64];
                    padded[..rest.len()].copy_from_slice(rest);
                    (&padded, Some(rest.len() as u32))
                }
            };
            let masks = classify(block);
            let (starts, proven) = block_starts::<R>(block, &masks, end);
            let usable = starts & (u64::MAX >> (64 - proven.max(1)));
            // At least two starts: at least one whole piece.
            if usable & (usable - 1) != 0 {
                let mut from = 0usize;
                let mut next = usable & (usable - 1);
                while next != 0 {
                    let to = next.trailing_zeros() as usize;
                    next &= next - 1;
                    emit(start + from, start + to)?;
                    from = to;
                }
                start += from;
                continue;
            }
        }
        let end = scalar(b, start);
        if end <= start {
            return Err(crate::Error::Pattern(format!(
                "scanner stopped at byte {start} (a bug)"
            )));
        }
        emit(start, end)?;
        start = end;
    }
    Ok(())
}

/// Whether the next 16 bytes (or all that is left, if fewer) are ASCII.
#[inline(always)]
fn ascii_ahead(rest: &[u8]) -> bool {
    match rest.first_chunk::<16>() {
        Some(head) => u128::from_le_bytes(*head) & (u128::MAX / 255 * 0x80) == 0,
        None => rest.is_ascii(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::pretokenize::classes::{L, LO, N, P, S, UP};
    use crate::pretokenize::{classes, scanners};

    #[test]
    fn classes_agree_with_the_tables() {
        let cls = classes::get().unwrap();
        let mut block = [0u8; 64];
        for first in (0..256).step_by(64) {
            for (i, slot) in block.iter_mut().enumerate() {
                *slot = (first + i) as u8;
            }
            let m = classify(&block);
            assert_eq!(m, classify_bytes(&block));
            for (i, &b) in block.iter().enumerate() {
                let bit = |mask: u64| (mask >> i) & 1 == 1;
                if b >= 0x80 {
                    assert!(bit(m.high));
                    continue;
                }
                let (flags, _) = cls.at(&block, i).unwrap();
                assert_eq!(bit(m.upper | m.lower), flags & L != 0, "{b}");
                assert_eq!(bit(m.upper), flags & UP != 0, "{b}");
                assert_eq!(bit(m.lower), flags & LO != 0, "{b}");
                assert_eq!(bit(m.digit), flags & N != 0, "{b}");
                assert_eq!(bit(m.white), flags & S != 0, "{b}");
                let punct = !bit(m.upper | m.lower | m.digit | m.white);
                assert_eq!(punct, flags & P != 0, "{b}");
            }
        }
    }

    type Scalar = fn(&classes::Classes, &[u8], usize) -> usize;

    const SCANNERS: [(u8, Scalar); 5] = [
        (O200K, scanners::o200k),
        (CL100K, scanners::cl100k),
        (LLAMA3, scanners::llama3),
        (TEKKEN, scanners::tekken),
        (QWEN2, scanners::qwen2),
    ];

    fn scalar_pieces(scalar: Scalar, text: &str) -> Vec<&str> {
        let cls = classes::get().unwrap();
        let b = text.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            let end = scalar(cls, b, i);
            out.push(&text[i..end]);
            i = end;
        }
        out
    }

    /// [`scan_with`] for the pattern `rules`, blocks on (whatever the architecture).
    fn walk_blocks(
        rules: u8,
        b: &[u8],
        emit: impl FnMut(usize, usize) -> Result<(), crate::Error>,
        next: impl Fn(&[u8], usize) -> usize,
    ) {
        match rules {
            O200K => scan_with::<O200K>(b, emit, next, true),
            CL100K => scan_with::<CL100K>(b, emit, next, true),
            TEKKEN => scan_with::<TEKKEN>(b, emit, next, true),
            QWEN2 => scan_with::<QWEN2>(b, emit, next, true),
            _ => scan_with::<LLAMA3>(b, emit, next, true),
        }
        .unwrap();
    }

    fn block_pieces(rules: u8, scalar: Scalar, text: &str) -> Vec<&str> {
        let cls = classes::get().unwrap();
        let mut out = Vec::new();
        let push = |start: usize, end: usize| {
            out.push(&text[start..end]);
            Ok(())
        };
        walk_blocks(rules, text.as_bytes(), push, |b, i| scalar(cls, b, i));
        out
    }

    /// Random texts from pieces that exercise every rule, compared with the scalar scanner.
    #[test]
    fn blocks_cut_as_the_scalar_scanner_does() {
        const PARTS: &[&str] = &[
            "a",
            "b",
            "s",
            "t",
            "e",
            "l",
            "r",
            "v",
            "m",
            "d",
            "x",
            "A",
            "B",
            "S",
            "T",
            "E",
            "L",
            "R",
            "V",
            "M",
            "D",
            "X",
            "'",
            "'s",
            "'S",
            "'t",
            "'re",
            "'RE",
            "'ve",
            "'ll",
            "'Ll",
            "'m",
            "'d",
            "'r",
            "'l",
            " ",
            "  ",
            "\t",
            "\n",
            "\r\n",
            "\x0b",
            "\x0c",
            "/",
            "//",
            ".",
            ",",
            "(",
            "!",
            "-",
            "\"",
            "0",
            "1",
            "12",
            "123",
            "4567",
            "\u{0}",
            "\x7f",
            "é",
            "中",
            "\u{a0}",
            "\u{2028}",
            "ſ",
            " a",
            " The",
            "word",
            "Word",
            "WORD",
            "camelCase",
            "ABCdef",
            "don't",
            "WE'RE",
            "\n\n",
            " \n ",
            "\t ",
            "!\n/",
            "a/b",
        ];
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut text = String::new();
        for round in 0..40_000 {
            text.clear();
            let len = 1 + next(if round % 4 == 0 { 200 } else { 60 });
            // Few distinct parts per text, so that runs form.
            let favourites: Vec<&str> = (0..3).map(|_| PARTS[next(PARTS.len())]).collect();
            for _ in 0..len {
                let part = if next(3) == 0 {
                    PARTS[next(PARTS.len())]
                } else {
                    favourites[next(favourites.len())]
                };
                text.push_str(part);
            }
            for (rules, scalar) in SCANNERS {
                let (ours, theirs) = (
                    block_pieces(rules, scalar, &text),
                    scalar_pieces(scalar, &text),
                );
                assert_eq!(ours, theirs, "{rules} {text:?}");
            }
        }
    }

    /// The blocks, not the scalar scanner, cut nearly all of ASCII prose.
    #[test]
    fn blocks_decide_ascii_prose() {
        let cls = classes::get().unwrap();
        let text =
            "It's 12345 o'clock; THEY'RE here. HelloWorld (quoted) x  \n  y!\n/z ".repeat(50);
        for (rules, scalar) in SCANNERS {
            let (mut pieces, scalar_calls) = (0, std::cell::Cell::new(0));
            let next = |b: &[u8], i| {
                scalar_calls.set(scalar_calls.get() + 1);
                scalar(cls, b, i)
            };
            let push = |_, _| {
                pieces += 1;
                Ok(())
            };
            walk_blocks(rules, text.as_bytes(), push, next);
            let scalar_calls = scalar_calls.get();
            assert!(
                pieces > 1000 && scalar_calls * 50 < pieces,
                "{rules}: {scalar_calls} of {pieces}"
            );
        }
    }

    #[test]
    fn blocks_cut_prose_and_code() {
        let prose = "It's 12345 o'clock; THEY'RE here. HelloWorld \t(quoted) x  \n  y!\n/z ";
        let code = "fn main() {\n    let x = a/b; // it's\r\n\t\treturn 0x1F;\n}\n\n";
        for (rules, scalar) in SCANNERS {
            for text in [prose.repeat(20), code.repeat(20)] {
                let ours = block_pieces(rules, scalar, &text);
                assert_eq!(ours, scalar_pieces(scalar, &text), "{rules}");
            }
        }
    }
}
