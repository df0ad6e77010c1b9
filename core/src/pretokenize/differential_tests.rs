//! Differential tests: every scanner against `fancy-regex` (the engine tiktoken uses) running the
//! same pattern, on generated strings over tricky characters and on the shared corpus.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rayon::prelude::*;
use std::time::Instant;

use super::{Pretokenizer, patterns};
use crate::test_data::{corpus_files, shared};

/// Every named pattern, each of which has a scanner.
const PATTERNS: [(&str, &str); 7] = patterns::NAMED;

struct Pair {
    name: &'static str,
    scanner: Pretokenizer,
    regex: Pretokenizer,
}

fn pairs() -> Vec<Pair> {
    PATTERNS
        .iter()
        .map(|&(name, pattern)| {
            let scanner = Pretokenizer::new(pattern).unwrap();
            assert!(scanner.scanner().is_some(), "{name} has no scanner");
            Pair {
                name,
                scanner,
                regex: Pretokenizer::with_regex(pattern).unwrap(),
            }
        })
        .collect()
}

/// The first difference between two piece lists, described with its context.
fn first_difference(text: &str, ours: &[&str], theirs: &[&str]) -> Option<String> {
    let mut offset = 0;
    for (k, (a, b)) in ours.iter().zip(theirs).enumerate() {
        if a != b {
            let from = k.saturating_sub(3);
            let context: String = text[offset..].chars().take(40).collect();
            return Some(format!(
                "piece {k} at byte {offset}: scanner {a:?}, regex {b:?}\n  \
                 scanner {:?}\n  regex   {:?}\n  text from there: {context:?}",
                &ours[from..(k + 3).min(ours.len())],
                &theirs[from..(k + 3).min(theirs.len())],
            ));
        }
        offset += a.len();
    }
    (ours.len() != theirs.len()).then(|| {
        format!(
            "{} pieces from the scanner, {} from the regex",
            ours.len(),
            theirs.len()
        )
    })
}

fn check(pair: &Pair, text: &str) {
    let ours = pair.scanner.pieces(text).unwrap();
    let theirs = pair.regex.pieces(text).unwrap();
    if let Some(diff) = first_difference(text, &ours, &theirs) {
        panic!("{}: {text:?}\n{diff}", pair.name);
    }
}

/// Characters where the patterns' classes and alternatives meet: each whitespace kind, letters of
/// every case class (Lu, Ll, Lt 'ǅ', Lm 'ʰ', Lo '中'), a combining mark, numbers (Nd, Nd Arabic,
/// No '½'), the apostrophe and contraction letters with their case folds ('ſ' folds to 's',
/// Kelvin 'K' to 'k'), punctuation, '/', an emoji.
const SMALL_ALPHABET: [char; 20] = [
    ' ', '\t', '\n', '\r', '\u{a0}', 'a', 'A', 'ǅ', 'ʰ', '中', '\u{301}', '7', '½', '\'', 's', 'T',
    'ſ', '\u{212a}', '.', '/',
];

/// Strings for random texts: characters and whole contractions in every case.
const BIG_ALPHABET: &[&str] = &[
    " ",
    " ",
    " ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\u{a0}",
    "\u{3000}",
    "\u{85}",
    "\u{2028}",
    "\u{b}",
    "\u{1c}",
    "\u{200b}",
    "\u{200d}",
    "a",
    "b",
    "z",
    "A",
    "Q",
    "Z",
    "é",
    "É",
    "ß",
    "ǅ",
    "ʰ",
    "ー",
    "中",
    "ひ",
    "한",
    "\u{301}",
    "\u{94d}",
    "\u{e49}",
    "7",
    "0",
    "٣",
    "½",
    "Ⅻ",
    "'",
    "'",
    "s",
    "S",
    "t",
    "T",
    "ſ",
    "\u{212a}",
    "k",
    "l",
    "L",
    "e",
    "E",
    "r",
    "R",
    "v",
    "V",
    "m",
    "M",
    "d",
    "D",
    "'s",
    "'S",
    "'t",
    "'ll",
    "'LL",
    "'lL",
    "'ve",
    "'VE",
    "'re",
    "'Re",
    "'m",
    "'D",
    "'ſ",
    ".",
    ",",
    "!",
    "(",
    ")",
    "/",
    "//",
    "-",
    "_",
    "\"",
    "😀",
    "👍🏽",
    "\u{1f1fa}\u{1f1f8}",
    "\u{0}",
];

/// A small linear congruential generator: deterministic, no dependency.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

#[test]
fn every_short_string_over_tricky_characters() {
    let pairs = pairs();
    let k = SMALL_ALPHABET.len();
    let mut text = String::new();
    for len in 1..=4u32 {
        for mut code in 0..k.pow(len) {
            text.clear();
            for _ in 0..len {
                text.push(SMALL_ALPHABET[code % k]);
                code /= k;
            }
            for pair in &pairs {
                check(pair, &text);
            }
        }
    }
}

#[test]
fn random_strings_over_tricky_characters() {
    let pairs = pairs();
    let mut rng = Lcg(0x5eed);
    let mut text = String::new();
    for round in 0..30_000 {
        text.clear();
        // Mostly short texts; every tenth a longer one.
        let len = if round % 10 == 0 {
            1 + rng.below(200)
        } else {
            1 + rng.below(12)
        };
        // Bias each text towards a few strings, so runs (of spaces, letters, marks) happen.
        let favourites: Vec<&str> = (0..4)
            .map(|_| BIG_ALPHABET[rng.below(BIG_ALPHABET.len())])
            .collect();
        for _ in 0..len {
            let s = if rng.below(2) == 0 {
                favourites[rng.below(favourites.len())]
            } else {
                BIG_ALPHABET[rng.below(BIG_ALPHABET.len())]
            };
            text.push_str(s);
        }
        for pair in &pairs {
            check(pair, &text);
        }
    }
}

/// Random code points from all planes (assigned or not), in runs of one general kind.
#[test]
fn random_code_points() {
    let pairs = pairs();
    let mut rng = Lcg(42);
    let mut text = String::new();
    for _ in 0..3_000 {
        text.clear();
        for _ in 0..1 + rng.below(30) {
            let cp = match rng.below(4) {
                0 => rng.below(0x80),
                1 => rng.below(0x3000),
                2 => rng.below(0x1_0000),
                _ => rng.below(0x11_0000),
            };
            let c = char::from_u32(cp as u32).unwrap_or('\u{fffd}');
            for _ in 0..1 + rng.below(3) {
                text.push(c);
            }
        }
        for pair in &pairs {
            check(pair, &text);
        }
    }
}

/// Compare on a text where the regex engine may fail: `fancy-regex` gives up on very long
/// whitespace runs (its backtracking stack holds 1M entries; tiktoken then fails too). Then the
/// regex is run piece by piece (`find_from_pos` from each piece start, as `find_iter` does) and
/// the pieces it cannot produce are only checked to be whitespace. Returns how many those were.
fn check_allowing_regex_failures(pair: &Pair, text: &str) -> usize {
    let ours = pair.scanner.pieces(text).unwrap();
    let Err(_) = pair.regex.pieces(text) else {
        check(pair, text);
        return 0;
    };
    let regex = fancy_regex::RegexBuilder::new(pair.regex.pattern())
        .backtrack_limit(10_000_000)
        .build()
        .unwrap();
    let mut failures = 0;
    let mut start = 0;
    for piece in ours {
        let end = start + piece.len();
        match regex.find_from_pos(text, start) {
            Ok(Some(m)) => assert_eq!(
                (m.start(), m.end()),
                (start, end),
                "{}: scanner {piece:?}, regex {:?} at byte {start}",
                pair.name,
                m.as_str()
            ),
            Ok(None) => panic!("{}: no regex match from byte {start}", pair.name),
            Err(_) => {
                assert!(
                    piece.chars().all(char::is_whitespace),
                    "{}: {piece:?}",
                    pair.name
                );
                failures += 1;
            }
        }
        start = end;
    }
    failures
}

#[test]
fn every_corpus_file() {
    let Some(shared) = shared() else { return };
    let pairs = pairs();
    let files = corpus_files(&shared);
    assert!(files.len() > 50, "only {} corpus files", files.len());
    // Files in parallel: the regex engine is slow in debug builds.
    files.par_iter().for_each(|file| {
        let bytes = std::fs::read(file).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for pair in &pairs {
            let start = Instant::now();
            let failures = check_allowing_regex_failures(pair, &text);
            let elapsed = start.elapsed();
            if failures > 0 || elapsed.as_secs_f64() > 5.0 {
                eprintln!(
                    "{} on {}: {elapsed:.1?}, {failures} piece(s) the regex engine cannot match",
                    pair.name,
                    file.display()
                );
            }
        }
    });
}

/// Long runs in which a backtracking engine could go quadratic: the scanners must stay linear
/// (this checks the piece counts; timings are printed, not asserted). The regex engine itself
/// fails on some of them (its stack is too small for a million spaces), so the expected counts
/// are worked out by hand, per pattern: gpt2, gpt2_original, cl100k, o200k, llama3, tekken,
/// qwen2.
#[test]
fn long_runs_are_linear() {
    let mut rng = Lcg(7);
    let random_letters: String = (0..1 << 20)
        .map(|_| char::from(if rng.below(2) == 0 { b'a' } else { b'A' } + rng.below(26) as u8))
        .collect();
    let digits = 500_000usize.div_ceil(3);
    let cases: Vec<(&str, String, Option<[usize; 7]>)> = vec![
        ("1M spaces", " ".repeat(1 << 20), Some([1; 7])),
        // All but the last space, then " x".
        ("1M spaces then x", " ".repeat(1 << 20) + "x", Some([2; 7])),
        // gpt2: the last tab alone (only a space joins a word); the others: "\tx" (tab is PRE).
        (
            "1M tabs then x",
            "\t".repeat(1 << 20) + "x",
            Some([3, 3, 2, 2, 2, 2, 2]),
        ),
        ("500k 'a'", "a".repeat(500_000), Some([1; 7])),
        ("500k 'A'", "A".repeat(500_000), Some([1; 7])),
        // Marks are P for the first four; o200k takes the first as the prefix, the rest as U*
        // giving back the last one as the W.
        ("500k marks", "\u{301}".repeat(500_000), Some([1; 7])),
        // o200k: U* takes everything, gives back the last 'A' so that the last '中' is the W.
        (
            "250k '中A'",
            "中A".repeat(250_000),
            Some([1, 1, 1, 2, 1, 2, 1]),
        ),
        ("250k 'A中'", "A中".repeat(250_000), Some([1; 7])),
        (
            "500k digits",
            "7".repeat(500_000),
            Some([1, 1, digits, digits, digits, 500_000, 500_000]),
        ),
        // gpt2: all but the last "\n", then "\n", then "x"; the others end at the last newline.
        (
            "250k ' \\n' then x",
            " \n".repeat(250_000) + "x",
            Some([3, 3, 2, 2, 2, 2, 2]),
        ),
        ("1 MB random letters", random_letters, None),
    ];
    for (name, text, expected) in &cases {
        for (k, (pattern_name, pattern)) in PATTERNS.into_iter().enumerate() {
            let scanner = Pretokenizer::new(pattern).unwrap();
            let start = Instant::now();
            let n = scanner.pieces(text).unwrap().len();
            let took = start.elapsed();
            let by_regex = Pretokenizer::with_regex(pattern)
                .unwrap()
                .pieces(text)
                .map(|p| p.len());
            let expected = match (expected, by_regex) {
                (Some(counts), Ok(m)) => {
                    assert_eq!(
                        counts[k], m,
                        "{pattern_name} on {name}: the regex disagrees"
                    );
                    m
                }
                (Some(counts), Err(_)) => counts[k],
                (None, by_regex) => by_regex.unwrap(),
            };
            assert_eq!(n, expected, "{pattern_name} on {name}");
            eprintln!("{pattern_name} on {name}: {n} pieces in {took:.1?}");
        }
    }
}
