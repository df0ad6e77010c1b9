//! Unicode character classes for the scanners, with exactly the tables the regex engine uses.
//!
//! The scanners must classify every character as `fancy-regex` does, which delegates character
//! classes to `regex-syntax`. So the tables are not written by hand: at first use we parse the
//! very class expressions of the patterns (`\p{L}`, `\s`, `[^\r\n\p{L}\p{N}]`, ...) with
//! `regex_syntax::parse` and read the ranges of the resulting Unicode classes. A character's
//! classes become one byte of flag bits ([`L`], [`N`], ...).
//!
//! Lookup: ASCII through a 128-entry table; any other code point through a two-level table
//! (`index[cp >> 7]` names a 128-byte block; identical blocks are stored once, so the 0x110000
//! code points fit in ~70 KB instead of 1.1 MB).
//!
//! Case-insensitive contractions (`(?i:'s|'t|...)`) fold with `regex-syntax`'s simple case
//! folding, as the engine does: besides ASCII case, 's' also matches 'ſ' (U+017F) and 'k' the
//! Kelvin sign 'K' (U+212A). The fold table is derived from `regex-syntax` too.

use std::fmt;
use std::sync::OnceLock;

use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, HirKind};

/// `\p{L}`: letters.
pub(crate) const L: u8 = 1;
/// `\p{N}`: numbers.
pub(crate) const N: u8 = 1 << 1;
/// `\s`: Unicode White_Space.
pub(crate) const S: u8 = 1 << 2;
/// `[^\s\p{L}\p{N}]`: everything else ("punctuation", symbols, marks, controls, ...).
pub(crate) const P: u8 = 1 << 3;
/// `[^\r\n\p{L}\p{N}]`: the optional one-character prefix of a word.
pub(crate) const PRE: u8 = 1 << 4;
/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`: o200k's "upper-ish" class.
pub(crate) const UP: u8 = 1 << 5;
/// `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`: o200k's "lower-ish" class.
pub(crate) const LO: u8 = 1 << 6;
/// `[\r\n]`.
pub(crate) const CRLF: u8 = 1 << 7;

/// The class expressions, as the patterns spell them, and the flag each one sets.
const CLASS_EXPRESSIONS: [(&str, u8); 8] = [
    (r"\p{L}", L),
    (r"\p{N}", N),
    (r"\s", S),
    (r"[^\s\p{L}\p{N}]", P),
    (r"[^\r\n\p{L}\p{N}]", PRE),
    (r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", UP),
    (r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", LO),
    (r"[\r\n]", CRLF),
];

const BLOCK_BITS: u32 = 7;
const BLOCK: usize = 1 << BLOCK_BITS;
const CODE_POINTS: usize = 0x11_0000;

/// The classification tables (built once, shared by every scanner).
pub(crate) struct Classes {
    ascii: [u8; 128],
    /// Block number of each 128-code-point block.
    index: Vec<u16>,
    /// The distinct blocks, `BLOCK` bytes each.
    blocks: Vec<u8>,
    /// For ASCII characters: the lowercase ASCII letter whose simple case fold class holds it
    /// (0 for non-letters).
    ascii_fold: [u8; 128],
    /// The non-ASCII characters in the simple case fold class of an ASCII letter, with it.
    other_fold: Vec<(char, u8)>,
}

impl fmt::Debug for Classes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Classes")
            .field("blocks", &(self.blocks.len() / BLOCK))
            .field("other_fold", &self.other_fold)
            .finish_non_exhaustive()
    }
}

/// The tables, built at first use; `None` only if `regex-syntax` could not give them (it always
/// can: the scanners are then simply not used and the regex engine takes over).
pub(crate) fn get() -> Option<&'static Classes> {
    static CLASSES: OnceLock<Option<Classes>> = OnceLock::new();
    CLASSES.get_or_init(Classes::build).as_ref()
}

/// The Unicode class that `regex-syntax` makes of `expr`.
fn unicode_class(expr: &str) -> Option<ClassUnicode> {
    let hir = regex_syntax::parse(expr).ok()?;
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => Some(class.clone()),
        _ => None,
    }
}

impl Classes {
    fn build() -> Option<Self> {
        let mut flat = vec![0u8; CODE_POINTS];
        for (expr, flag) in CLASS_EXPRESSIONS {
            for range in unicode_class(expr)?.ranges() {
                let (start, end) = (range.start() as usize, range.end() as usize);
                for slot in flat.get_mut(start..=end)? {
                    *slot |= flag;
                }
            }
        }

        let mut ascii = [0u8; 128];
        ascii.copy_from_slice(flat.get(..128)?);

        let mut index = Vec::with_capacity(CODE_POINTS / BLOCK);
        let mut blocks: Vec<u8> = Vec::new();
        let mut seen: rustc_hash::FxHashMap<&[u8], u16> = rustc_hash::FxHashMap::default();
        for block in flat.chunks_exact(BLOCK) {
            let next = u16::try_from(seen.len()).ok()?;
            let id = *seen.entry(block).or_insert_with(|| {
                blocks.extend_from_slice(block);
                next
            });
            index.push(id);
        }

        let mut ascii_fold = [0u8; 128];
        let mut other_fold = Vec::new();
        for letter in b'a'..=b'z' {
            let c = char::from(letter);
            let mut class = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
            class.try_case_fold_simple().ok()?;
            for range in class.ranges() {
                for member in range.start()..=range.end() {
                    match u8::try_from(member) {
                        Ok(b) if b < 0x80 => *ascii_fold.get_mut(usize::from(b))? = letter,
                        _ => other_fold.push((member, letter)),
                    }
                }
            }
        }
        Some(Self {
            ascii,
            index,
            blocks,
            ascii_fold,
            other_fold,
        })
    }

    /// The flags of code point `cp`.
    #[inline(always)]
    pub(crate) fn of_code_point(&self, cp: u32) -> u8 {
        let block = self
            .index
            .get((cp >> BLOCK_BITS) as usize)
            .copied()
            .unwrap_or(0);
        let at = (usize::from(block) << BLOCK_BITS) | (cp as usize & (BLOCK - 1));
        self.blocks.get(at).copied().unwrap_or(0)
    }

    /// The flags of a character.
    #[cfg(test)]
    pub(crate) fn of(&self, c: char) -> u8 {
        self.of_code_point(u32::from(c))
    }

    /// The flags and byte length of the character that starts at `i` of the UTF-8 text `b`, or
    /// `None` at the end. `i` must be a character boundary (it always is: scanners only step by
    /// whole characters).
    #[inline(always)]
    pub(crate) fn at(&self, b: &[u8], i: usize) -> Option<(u8, usize)> {
        let &b0 = b.get(i)?;
        if b0 < 0x80 {
            return Some((self.ascii[usize::from(b0)], 1));
        }
        let (cp, len) = decode_non_ascii(b, i, b0);
        Some((self.of_code_point(cp), len))
    }

    /// The end of the longest run of characters from `i` that each have a flag of `mask`.
    ///
    /// Letter runs (`L`, `UP`, `LO`: the bulk of most text) first go eight ASCII bytes at a time
    /// ([`ascii_letters`]): a short word then costs one step and no mispredicted loop exit.
    #[inline(always)]
    pub(crate) fn run(&self, b: &[u8], mut i: usize, mask: u8) -> usize {
        let letters = match mask {
            L => Some(AsciiLetters::Both),
            UP => Some(AsciiLetters::Upper),
            LO => Some(AsciiLetters::Lower),
            _ => None,
        };
        loop {
            if let Some(letters) = letters {
                while let Some(chunk) = b.get(i..i + 8).and_then(|c| <[u8; 8]>::try_from(c).ok()) {
                    let n = ascii_letters(u64::from_le_bytes(chunk), letters);
                    i += n;
                    if n < 8 {
                        break;
                    }
                }
            }
            // One character: the end of the text, a non-member, or a member the fast path
            // does not know (non-ASCII, or within the last eight bytes).
            let Some(&b0) = b.get(i) else { return i };
            if b0 < 0x80 {
                if self.ascii[usize::from(b0)] & mask == 0 {
                    return i;
                }
                i += 1;
            } else {
                // The rest of a non-ASCII stretch without going back to the ASCII fast path,
                // which would fail at every character of other scripts.
                let mut lead = b0;
                loop {
                    let (cp, len) = decode_non_ascii(b, i, lead);
                    if self.of_code_point(cp) & mask == 0 {
                        return i;
                    }
                    i += len;
                    match b.get(i) {
                        Some(&next) if next >= 0x80 => lead = next,
                        _ => break,
                    }
                }
            }
        }
    }

    /// The end of the run of at most `max` characters from `i` that each have a flag of `mask`.
    #[inline(always)]
    pub(crate) fn run_at_most(&self, b: &[u8], mut i: usize, mask: u8, max: usize) -> usize {
        for _ in 0..max {
            match self.at(b, i) {
                Some((flags, len)) if flags & mask != 0 => i += len,
                _ => break,
            }
        }
        i
    }

    /// The lowercase ASCII letter whose simple case fold class holds the character at `i`, with
    /// the character's end; `None` for any other character or at the end.
    #[inline]
    pub(crate) fn folded_letter(&self, b: &[u8], i: usize) -> Option<(u8, usize)> {
        let &b0 = b.get(i)?;
        if b0 < 0x80 {
            let letter = self.ascii_fold[usize::from(b0)];
            return (letter != 0).then_some((letter, i + 1));
        }
        let (cp, len) = decode_non_ascii(b, i, b0);
        let c = char::from_u32(cp)?;
        self.other_fold
            .iter()
            .find(|(member, _)| *member == c)
            .map(|&(_, letter)| (letter, i + len))
    }
}

/// Which ASCII letters [`ascii_letters`] counts: those of `\p{L}` ([A-Za-z]), of the upper-ish
/// class ([A-Z]) or of the lower-ish class ([a-z]). A test checks these against the tables.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum AsciiLetters {
    Both,
    Upper,
    Lower,
}

/// How many of the eight bytes of `w` (little-endian: first byte lowest), from the first, are
/// ASCII letters of the kind asked. SWAR: each byte's high bit says "in range"; bytes are masked
/// to 7 bits first, so the additions never carry into the next byte.
#[inline(always)]
fn ascii_letters(w: u64, letters: AsciiLetters) -> usize {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const ONES: u64 = 0x0101_0101_0101_0101;
    let (x, lo, hi) = match letters {
        AsciiLetters::Both => ((w | (ONES * 0x20)) & !HIGH, b'a', b'z'),
        AsciiLetters::Upper => (w & !HIGH, b'A', b'Z'),
        AsciiLetters::Lower => (w & !HIGH, b'a', b'z'),
    };
    let at_least_lo = x + ONES * u64::from(0x80 - lo);
    let above_hi = x + ONES * u64::from(0x80 - (hi + 1));
    let inside = at_least_lo & !above_hi & !w & HIGH;
    let outside = !inside & HIGH;
    (outside.trailing_zeros() / 8) as usize
}

/// The code point and length of the multi-byte UTF-8 character that starts with `b0` at `i`.
/// The text is valid UTF-8, so the continuation bytes are there; reading past the end (never
/// happens) gives a wrong character, not a panic.
#[inline(always)]
fn decode_non_ascii(b: &[u8], i: usize, b0: u8) -> (u32, usize) {
    let cont = |k: usize| b.get(i + k).map_or(0, |&x| u32::from(x & 0x3F));
    if b0 < 0xE0 {
        ((u32::from(b0 & 0x1F) << 6) | cont(1), 2)
    } else if b0 < 0xF0 {
        ((u32::from(b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2), 3)
    } else {
        (
            (u32::from(b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3),
            4,
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn classes() -> &'static Classes {
        get().expect("regex-syntax gives the class tables")
    }

    /// Every code point's flags agree with the regex engine's own matching of the same
    /// expressions, and decoding through `at` agrees with `of`.
    #[test]
    fn tables_agree_with_the_regex_engine_on_every_code_point() {
        let cls = classes();
        let all: String = (0..0x11_0000u32).filter_map(char::from_u32).collect();
        for (expr, flag) in CLASS_EXPRESSIONS {
            let re = fancy_regex::Regex::new(expr).unwrap();
            let matched: Vec<char> = re
                .find_iter(&all)
                .map(|m| m.unwrap().as_str().chars().next().unwrap())
                .collect();
            let ours: Vec<char> = all.chars().filter(|&c| cls.of(c) & flag != 0).collect();
            let differ: Vec<String> = ours
                .iter()
                .zip(&matched)
                .filter(|(a, b)| a != b)
                .take(5)
                .map(|(a, b)| format!("U+{:04X}/U+{:04X}", u32::from(*a), u32::from(*b)))
                .collect();
            assert!(
                ours.len() == matched.len() && differ.is_empty(),
                "{expr}: {differ:?}"
            );
        }
        let bytes = all.as_bytes();
        let mut i = 0;
        for c in all.chars() {
            assert_eq!(
                cls.at(bytes, i),
                Some((cls.of(c), c.len_utf8())),
                "U+{:04X}",
                u32::from(c)
            );
            i += c.len_utf8();
        }
        assert_eq!(cls.at(bytes, i), None);
    }

    #[test]
    fn known_characters() {
        let cls = classes();
        let flags = |c: char| cls.of(c);
        assert_eq!(flags('a'), L | LO);
        assert_eq!(flags('A'), L | UP);
        assert_eq!(flags('ǅ'), L | UP); // Lt
        assert_eq!(flags('ʰ'), L | UP | LO); // Lm
        assert_eq!(flags('中'), L | UP | LO); // Lo
        assert_eq!(flags('\u{301}'), P | PRE | UP | LO); // Mn
        assert_eq!(flags('7'), N);
        assert_eq!(flags('٣'), N);
        assert_eq!(flags('½'), N);
        assert_eq!(flags(' '), S | PRE);
        assert_eq!(flags('\u{a0}'), S | PRE);
        assert_eq!(flags('\u{3000}'), S | PRE);
        assert_eq!(flags('\n'), S | CRLF);
        assert_eq!(flags('\r'), S | CRLF);
        assert_eq!(flags('\u{85}'), S | PRE);
        assert_eq!(flags('\u{1c}'), P | PRE); // not White_Space, unlike Python's str.isspace
        assert_eq!(flags('\''), P | PRE);
        assert_eq!(flags('😀'), P | PRE);
    }

    #[test]
    fn folds_follow_simple_case_folding() {
        let cls = classes();
        let fold = |s: &str| {
            cls.folded_letter(s.as_bytes(), 0)
                .map(|(l, end)| (char::from(l), end))
        };
        assert_eq!(fold("s"), Some(('s', 1)));
        assert_eq!(fold("S"), Some(('s', 1)));
        assert_eq!(fold("ſ"), Some(('s', 2)));
        assert_eq!(fold("\u{212a}"), Some(('k', 3)));
        assert_eq!(fold("k"), Some(('k', 1)));
        assert_eq!(fold("T"), Some(('t', 1)));
        assert_eq!(fold("'"), None);
        assert_eq!(fold("é"), None);
        assert_eq!(fold(""), None);
        let mut others: Vec<(char, char)> = cls
            .other_fold
            .iter()
            .map(|&(c, l)| (c, char::from(l)))
            .collect();
        others.sort_unstable();
        assert_eq!(others, vec![('ſ', 's'), ('\u{212a}', 'k')]);
    }

    /// The eight-bytes-at-a-time letter count agrees with the tables, byte by byte.
    #[test]
    fn ascii_letters_agree_with_the_tables() {
        let cls = classes();
        for (letters, flag) in [
            (AsciiLetters::Both, L),
            (AsciiLetters::Upper, UP),
            (AsciiLetters::Lower, LO),
        ] {
            for byte in 0..=255u8 {
                let member = byte < 0x80 && cls.ascii[usize::from(byte)] & flag != 0;
                for pos in 0..8 {
                    // `byte` at `pos`, members before it, and a non-member or anything after.
                    for filler in [b'a', b'A', b'z', b'Z', b'@', b'[', b'`', b'{', 0xC3] {
                        let mut w = [b'm'; 8];
                        if letters == AsciiLetters::Upper {
                            w = [b'M'; 8];
                        }
                        w[pos] = byte;
                        for rest in w.iter_mut().skip(pos + 1) {
                            *rest = filler;
                        }
                        let n = ascii_letters(u64::from_le_bytes(w), letters);
                        let expected = w
                            .iter()
                            .take_while(|&&x| x < 0x80 && cls.ascii[usize::from(x)] & flag != 0)
                            .count();
                        assert_eq!(n, expected, "{letters:?} {w:?}");
                        assert!(n >= pos && (n > pos) == member);
                    }
                }
            }
        }
    }

    #[test]
    fn table_is_compact() {
        let cls = classes();
        assert!(
            cls.blocks.len() < 200 * 1024,
            "{} bytes of blocks",
            cls.blocks.len()
        );
    }
}
