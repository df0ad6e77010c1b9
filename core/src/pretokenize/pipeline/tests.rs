#![allow(clippy::panic)]

use super::*;
use crate::pretokenize::patterns;

fn text_pieces(p: &Pipeline, text: &str) -> Vec<String> {
    p.pieces(text)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect()
}

fn split(matcher: Matcher, behavior: Behavior, invert: bool) -> Pipeline {
    Pipeline::new(vec![Stage::Split {
        matcher,
        behavior,
        invert,
    }])
    .unwrap_or_else(|e| panic!("{e}"))
}

fn lit(s: &str) -> Matcher {
    Matcher::Literal(s.to_owned())
}

#[test]
fn behaviours_match_tokenizers() {
    // Expected values are tokenizers 0.23's pre_tokenize_str on the same inputs.
    let p = split(lit("-"), Behavior::MergedWithPrevious, false);
    assert_eq!(text_pieces(&p, "a--b-"), ["a-", "-", "b-"]);
    let p = split(lit("-"), Behavior::MergedWithNext, false);
    assert_eq!(text_pieces(&p, "-a--b"), ["-a", "-", "-b"]);
    let p = split(lit("-"), Behavior::Contiguous, false);
    assert_eq!(text_pieces(&p, "a--b-c"), ["a", "--", "b", "-", "c"]);
    let p = split(lit("-"), Behavior::Removed, true);
    assert_eq!(text_pieces(&p, "a--b-c"), ["-", "-", "-"]);
    let p = split(lit("-"), Behavior::Isolated, false);
    assert_eq!(text_pieces(&p, "a--b"), ["a", "-", "-", "b"]);
}

#[test]
fn empty_literal_cuts_every_character() {
    // tokenizers escapes the string into a regex; the empty one matches between characters.
    let p = split(lit(""), Behavior::Isolated, false);
    assert_eq!(text_pieces(&p, "aé b"), ["a", "é", " ", "b"]);
    let p = split(lit(""), Behavior::Contiguous, false);
    assert_eq!(text_pieces(&p, "ab"), ["a", "b"]);
}

#[test]
fn regex_keeps_gaps_and_drops_empty_matches() {
    let re = Pretokenizer::with_regex("x*").unwrap_or_else(|e| panic!("{e}"));
    let p = split(Matcher::Regex(re), Behavior::Isolated, false);
    assert_eq!(text_pieces(&p, "abxxc"), ["a", "b", "xx", "c"]);
}

#[test]
fn byte_level_prefix_and_gpt2_split() {
    let re = Pretokenizer::new(patterns::GPT2_ORIGINAL).unwrap_or_else(|e| panic!("{e}"));
    let p = Pipeline::new(vec![Stage::ByteLevel {
        add_prefix_space: true,
        regex: Some(re),
    }])
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(text_pieces(&p, "ab cd"), [" ab", " cd"]);
    let ws = Pretokenizer::with_regex(r"\s").unwrap_or_else(|e| panic!("{e}"));
    let p = Pipeline::new(vec![
        Stage::Split {
            matcher: Matcher::Regex(ws),
            behavior: Behavior::Isolated,
            invert: false,
        },
        Stage::ByteLevel {
            add_prefix_space: true,
            regex: None,
        },
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(text_pieces(&p, "ab cd"), [" ab", " ", " cd"]);
}

#[test]
fn stages_after_byte_level_see_gpt2_characters() {
    // '½' is C2 BD, written "Â½"; '½' is numeric, so Digits cuts inside the character.
    let p = Pipeline::new(vec![
        Stage::ByteLevel {
            add_prefix_space: false,
            regex: None,
        },
        Stage::Split {
            matcher: Matcher::Numeric,
            behavior: Behavior::Isolated,
            invert: false,
        },
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    let pieces = p.pieces("a½").unwrap_or_default();
    assert_eq!(pieces, vec![b"a\xc2".to_vec(), b"\xbd".to_vec()]);
}

#[test]
fn punctuation_table() {
    assert!(is_hf_punctuation('!') && is_hf_punctuation('$') && is_hf_punctuation('«'));
    assert!(is_hf_punctuation('\u{166D}') && !is_hf_punctuation('\u{1144B}'));
    assert!(!is_hf_punctuation('a') && !is_hf_punctuation(' '));
    assert!(HF_PUNCTUATION.windows(2).all(|w| w[0].1 < w[1].0));
}

#[test]
fn fast_path_equals_general_path() {
    let re = Pretokenizer::new(patterns::LLAMA3).unwrap_or_else(|e| panic!("{e}"));
    let text = "Hello  world's 12345 \n\n  x";
    for (behavior, invert) in [
        (Behavior::Isolated, false),
        (Behavior::Removed, true),
        (Behavior::Removed, false),
    ] {
        let stages = vec![
            Stage::Split {
                matcher: Matcher::Regex(re.clone()),
                behavior,
                invert,
            },
            Stage::ByteLevel {
                add_prefix_space: false,
                regex: None,
            },
        ];
        let fast = Pipeline::new(stages.clone()).unwrap_or_else(|e| panic!("{e}"));
        let mut general = fast.clone();
        general.fast = Fast::General;
        assert_eq!(fast.pieces(text).ok(), general.pieces(text).ok());
    }
    assert!(
        Pipeline::new(vec![
            Stage::ByteLevel {
                add_prefix_space: false,
                regex: None
            },
            Stage::ByteLevel {
                add_prefix_space: false,
                regex: None
            },
        ])
        .is_err()
    );
}

/// Issue 31 point 2: the exponential pattern as a `Split` regex of a `tokenizer.json` fails fast
/// with the pattern named, in every behaviour (the fast one-regex path and the general one).
#[test]
fn exponential_split_regex_fails_fast() {
    let pattern = r"(?:(a)|\1){1,19}b|.";
    let text = "a".repeat(1000);
    for behavior in [
        Behavior::Isolated,
        Behavior::Removed,
        Behavior::MergedWithNext,
    ] {
        for invert in [false, true] {
            let regex = Pretokenizer::new(pattern).unwrap_or_else(|e| panic!("{e}"));
            let p = split(Matcher::Regex(regex), behavior, invert);
            let start = std::time::Instant::now();
            let Err(Error::Pattern(msg)) = p.pieces(&text) else {
                panic!("no error for {behavior:?} {invert}");
            };
            assert!(start.elapsed().as_secs() < 5, "{:?}", start.elapsed());
            assert!(msg.contains(&format!("{pattern:?}")), "{msg}");
        }
    }
}
