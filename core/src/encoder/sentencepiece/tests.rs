#![allow(clippy::panic)]

use std::time::{Duration, Instant};

use super::*;

const R: char = '\u{2581}';

/// `<unk>` 0, `<s>` 1, `</s>` 2, then `extra`.
fn spec(extra: &[(&str, f32, PieceKind)]) -> SentencePieceSpec {
    let mut pieces = vec![
        ("<unk>".to_string(), 0.0, PieceKind::Unknown),
        ("<s>".to_string(), 0.0, PieceKind::Control),
        ("</s>".to_string(), 0.0, PieceKind::Control),
    ];
    pieces.extend(
        extra
            .iter()
            .map(|&(p, s, k)| (p.replace('_', "\u{2581}"), s, k)),
    );
    let mut spec = SentencePieceSpec::new(pieces);
    spec.remove_extra_whitespaces = false;
    spec.special_tokens = vec![("<s>".into(), 1), ("</s>".into(), 2)];
    spec
}

fn build(spec: SentencePieceSpec) -> SentencePieceEncoder {
    SentencePieceEncoder::new(spec).unwrap_or_else(|e| panic!("{e}"))
}

fn ids(enc: &SentencePieceEncoder, text: &str) -> Vec<Rank> {
    enc.encode_ordinary(text).unwrap_or_else(|e| panic!("{e}"))
}

const N: PieceKind = PieceKind::Normal;

fn letters() -> Vec<(&'static str, f32, PieceKind)> {
    vec![
        ("_", -9.0, N),
        ("a", -9.0, N),
        ("b", -9.0, N),
        ("c", -9.0, N),
    ]
}

/// The same encoder, cutting nowhere, caching nothing, with neither the character table nor
/// the join table: every chunk merged by looking up the bytes of each pair.
fn uncut(enc: &SentencePieceEncoder) -> SentencePieceEncoder {
    let mut plain = enc.clone();
    plain.cut = Cut::Nowhere;
    plain.joinable = None;
    plain.cacheable = false;
    plain.char_ids = Box::default();
    if let Some(rules) = plain.score.as_mut() {
        rules.joins = None;
        // The merge takes its shortcut for one repeated character only without UNUSED pieces;
        // marking some present (none is) makes it merge such chunks one join at a time.
        rules.has_unused = true;
    }
    plain
}

#[test]
fn highest_score_first_then_leftmost() {
    let mut v = letters();
    v.extend([("ab", -2.0, N), ("bc", -1.0, N)]);
    let mut s = spec(&v);
    s.prepend = Prepend::Never;
    let enc = build(s.clone());
    assert_eq!(ids(&enc, "abc"), vec![4, 8]);
    // Equal scores: the leftmost pair joins first.
    s.pieces[7].1 = -1.0;
    let enc = build(s);
    assert_eq!(ids(&enc, "abc"), vec![7, 6]);
}

#[test]
fn a_piece_that_cannot_be_reached_is_not_taken_whole() {
    // "abc" exists but neither "ab" nor "bc" does: the merge never makes it.
    let mut v = letters();
    v.push(("abc", 0.0, N));
    let mut s = spec(&v);
    s.prepend = Prepend::Never;
    let enc = build(s);
    assert_eq!(ids(&enc, "abc"), vec![4, 5, 6]);
    assert_eq!(ids(&uncut(&enc), "abc"), vec![4, 5, 6]);
}

#[test]
fn user_defined_pieces_are_whole_and_frozen() {
    let mut v = letters();
    v.extend([
        ("[X]", 0.0, PieceKind::UserDefined),
        ("[", -9.0, N),
        ("_[", -1.0, N),
    ]);
    let enc = build(spec(&v));
    // "▁[" is a piece, but "[X]" is matched first and never merged.
    assert_eq!(ids(&enc, "[X]a"), vec![3, 7, 4]);
    assert_eq!(ids(&enc, "b[X]"), vec![3, 5, 7]);
}

#[test]
fn unused_pieces_are_split_back() {
    let mut v = letters();
    v.extend([("ab", -1.0, PieceKind::Unused), ("abc", -2.0, N)]);
    let mut s = spec(&v);
    s.prepend = Prepend::Never;
    let enc = build(s);
    assert_eq!(ids(&enc, "ab"), vec![4, 5]);
    assert_eq!(ids(&enc, "abc"), vec![8]);
    assert_eq!(enc.cut, Cut::Nowhere);
}

#[test]
fn unknown_characters_are_one_unknown_id_or_bytes() {
    let enc = build(spec(&letters()));
    // "▁xy▁a": the unknown run "xy" is one <unk>.
    assert_eq!(ids(&enc, "xy a"), vec![3, 0, 3, 4]);
    assert_eq!(ids(&enc, "a xy"), vec![3, 4, 3, 0]);

    let mut v = letters();
    let bytes: Vec<String> = (0..=255u8).map(|b| format!("<0x{b:02X}>")).collect();
    v.extend(bytes.iter().map(|b| (b.as_str(), 0.0, PieceKind::Byte)));
    let mut s = spec(&v);
    s.byte_fallback = true;
    let enc = build(s);
    let byte = |b: u8| 7 + Rank::from(b);
    assert_eq!(ids(&enc, "\u{e9}"), vec![3, byte(0xC3), byte(0xA9)]);
    assert_eq!(
        enc.decode(&ids(&enc, "a \u{e9}"), false),
        Ok("a \u{e9}".into())
    );
    // Invalid bytes decode to one U+FFFD each; a leading replacement is dropped once.
    let decoded = enc.decode(&[3, byte(0xE2), byte(0x82), 4, byte(0xFF)], false);
    assert_eq!(decoded, Ok("\u{FFFD}\u{FFFD}a\u{FFFD}".into()));
    assert_eq!(enc.encode_bytes(b"a\xff"), Ok(vec![3, 4, byte(0xFF)]));
}

#[test]
fn decode_rules() {
    let mut v = letters();
    v.push(("_a", -1.0, N));
    let enc = build(spec(&v));
    assert_eq!(
        enc.decode(&[1, 7, 7, 0, 2], false),
        Ok("a a \u{2047} ".into())
    );
    assert_eq!(
        enc.decode_bytes(&[1, 7, 0]),
        Ok(b" a \xe2\x81\x87 ".to_vec())
    );
    assert_eq!(enc.decode(&[99], false), Err(Error::UnknownId(99)));
    let mut s = spec(&v);
    s.prepend = Prepend::Never;
    assert_eq!(build(s).decode(&[7, 7], false), Ok(" a a".into()));
}

#[test]
fn dummy_prefix_per_segment() {
    let mut v = letters();
    v.push(("_a", -1.0, N));
    let mut s = spec(&v);
    let enc = build(s.clone());
    let allowed = enc
        .special_matcher(["<s>"])
        .unwrap_or_else(|e| panic!("{e}"));
    let encode = |enc: &SentencePieceEncoder, t| enc.encode(t, &allowed).unwrap_or_default();
    assert_eq!(encode(&enc, "a<s>a"), vec![7, 1, 7]);
    assert_eq!(encode(&enc, "<s>a"), vec![1, 7]);
    // With none allowed, "<s>" is text.
    assert_eq!(ids(&enc, "<s>")[0], 3);
    s.prepend = Prepend::First;
    let enc = build(s);
    assert_eq!(encode(&enc, "a<s>a"), vec![7, 1, 4]);
    assert_eq!(encode(&enc, "<s>a"), vec![1, 4]);
    assert_eq!(enc.count("a<s>a", &allowed), Ok(3));
}

#[test]
fn extra_whitespace_removed() {
    let mut v = letters();
    v.push(("_a", -1.0, N));
    let mut s = spec(&v);
    s.remove_extra_whitespaces = true;
    let enc = build(s);
    assert_eq!(ids(&enc, "  a   a  "), vec![7, 7]);
    assert_eq!(ids(&enc, "   "), Vec::<Rank>::new());
    assert_eq!(enc.decode(&[3, 7], false), Ok("a".into()));
}

fn hf_spec() -> SentencePieceSpec {
    let mut v = letters();
    v.extend([
        ("ab", 0.0, N),
        ("bc", 0.0, N),
        ("_a", 0.0, N),
        ("_ab", 0.0, N),
    ]);
    let mut s = spec(&v);
    // Merge ranks: "b c" first, then "▁ a", then "a b", then "▁a b".
    s.merges = Some(vec![(5, 6), (3, 4), (4, 5), (9, 5)]);
    s.prepend = Prepend::First;
    s.unk_id = Some(0);
    s.fuse_unk = true;
    s.decoder = DecoderKind::Hf;
    s.unk_surface = "<unk>".into();
    s
}

#[test]
fn merge_list_order_then_leftmost() {
    let enc = build(hf_spec());
    // "▁abc": "bc" (rank 0) first, then "▁a" (rank 1): "▁a" "bc".
    assert_eq!(ids(&enc, "abc"), vec![9, 8]);
    // "▁ab": "▁a" then "▁a b".
    assert_eq!(ids(&enc, "ab"), vec![10]);
    // Already starting with a space: no prefix.
    assert_eq!(ids(&enc, " ab"), vec![10]);
    assert_eq!(ids(&enc, "xy"), vec![3, 0]);
    assert_eq!(enc.decode(&[10, 3, 0], false), Ok("ab <unk>".into()));
    // Special tokens as their text when kept; the leading space stripped is the whole text's.
    assert_eq!(enc.decode(&[1, 10, 2], true), Ok("<s> ab</s>".into()));
    assert_eq!(enc.decode(&[10, 1, 10], true), Ok("ab<s> ab".into()));
    assert_eq!(enc.decode(&[1, 10, 2], false), Ok("ab".into()));
}

#[test]
fn cutting_and_caching_change_nothing() {
    let mut v = letters();
    v.extend([
        ("ab", -1.0, N),
        ("_a", -0.5, N),
        ("__", -0.7, N),
        ("_ab", -0.2, N),
        ("ba", -1.5, N),
        ("cc", -1.1, N),
        (",", -9.0, N),
        ("b,", -0.3, N),
        ("_,", -0.4, N),
        // Letters beyond ASCII: "é" joins, "ü" and "ß" are lone, "ж" is no piece at all.
        ("é", -9.0, N),
        ("ü", -9.0, N),
        ("ß", -9.0, N),
        ("éa", -0.6, N),
        ("_é", -0.8, N),
    ]);
    let texts = [
        "éa üü ßéa aéüb",
        "жж ж éж üжü",
        "aüéa,ß béé",
        "ab ba  abc cc   a",
        "   ",
        "a",
        "abab ab ab xx ab",
        "cccc c cc",
        "ab, ba,c, a,,b , ,",
        "",
    ];
    let by_score = build(spec(&v));
    assert_eq!(by_score.cut, Cut::BeforeSpace);
    let rule = by_score
        .joinable
        .as_ref()
        .unwrap_or_else(|| panic!("no pair rule"));
    assert!(!rule.is_lone('é' as u32) && rule.is_lone('ü' as u32) && rule.is_lone('ж' as u32));
    assert!(by_score.score.as_ref().is_some_and(|r| r.joins.is_some()));
    assert!(!by_score.char_ids.is_empty());
    let by_rank = build(hf_spec());
    assert_eq!(by_rank.cut, Cut::BeforeSpace);
    // Longer than the flat merge takes: uncut, these go through the heap.
    let long = texts.map(|t| t.repeat(5));
    for enc in [by_score, by_rank] {
        let plain = uncut(&enc);
        // Every chunk through the queue, none through the flat scan.
        let mut queued = plain.clone();
        if let Some(rules) = queued.score.as_mut() {
            rules.flat_keys_fit = false;
        }
        for t in texts.iter().copied().chain(long.iter().map(String::as_str)) {
            for _ in 0..2 {
                assert_eq!(ids(&enc, t), ids(&plain, t), "{t:?}");
                assert_eq!(ids(&queued, t), ids(&plain, t), "{t:?}");
            }
        }
    }
    // A piece with a letter before the replacement forbids cutting before it.
    v.push(("a_", -3.0, N));
    assert_eq!(build(spec(&v)).cut, Cut::Nowhere);
}

#[test]
fn hostile_inputs_finish_quickly() {
    let mut v = letters();
    v.extend([
        ("aa", -1.0, N),
        ("aaaa", -0.5, N),
        ("__", -1.0, N),
        ("____", -0.5, N),
    ]);
    let enc = build(spec(&v));
    let hf = {
        let mut s = spec(&v);
        s.merges = Some(vec![(4, 4), (7, 7), (3, 3), (9, 9)]);
        s.prepend = Prepend::First;
        build(s)
    };
    for text in ["a".repeat(1 << 20), " ".repeat(1 << 20)] {
        for e in [&enc, &hf] {
            let start = Instant::now();
            let got = ids(e, &text);
            assert!(start.elapsed() < Duration::from_secs(20));
            assert!(
                got.len() >= (1 << 18) && got.len() < (1 << 19),
                "{}",
                got.len()
            );
        }
    }
}

#[test]
fn bad_vocabularies_are_errors() {
    let mut s = spec(&letters());
    s.pieces.push(("a".into(), 0.0, N));
    assert!(SentencePieceEncoder::new(s).is_err());
    let mut s = spec(&letters());
    s.byte_fallback = true;
    assert!(SentencePieceEncoder::new(s).is_err());
    let mut s = spec(&letters());
    s.unk_id = Some(3);
    assert!(SentencePieceEncoder::new(s).is_err());
    let mut s = spec(&letters());
    s.precompiled_charsmap = Some(vec![1, 2, 3]);
    let err = SentencePieceEncoder::new(s).err().map(|e| e.to_string());
    assert!(err.is_some_and(|e| e.contains("precompiled charsmap")));
    let mut s = hf_spec();
    s.merges = Some(vec![(4, 6)]);
    assert!(SentencePieceEncoder::new(s).is_err());
    let mut s = spec(&letters());
    s.pieces.push((String::new(), 0.0, N));
    assert!(SentencePieceEncoder::new(s).is_err());
}

#[test]
fn piece_lookups() {
    let enc = build(spec(&letters()));
    assert_eq!(enc.piece_to_id("<s>"), Some(1));
    assert_eq!(enc.piece_to_id("a"), Some(4));
    assert_eq!(enc.piece_to_id("zz"), None);
    assert_eq!(enc.id_to_piece(3), Some(R.to_string().as_str()));
    assert_eq!(enc.encode_single_token(b" "), Some(3));
}

#[test]
fn pieces_spelled_with_characters_that_are_no_piece_still_join() {
    // "xy" and "_xy" are pieces, "x" and "y" are not: no join table (a symbol without an id
    // would join nothing), and the bytes lookup makes them.
    let mut v = letters();
    v.extend([("xy", -1.0, N), ("_xy", -0.5, N), ("ab", -2.0, N)]);
    let enc = build(spec(&v));
    assert!(enc.score.as_ref().is_some_and(|r| r.joins.is_none()));
    let plain = uncut(&enc);
    for t in ["xy", "x y", "abxyab xy", "yx", "x"] {
        assert_eq!(ids(&enc, t), ids(&plain, t), "{t:?}");
    }
    assert_eq!(ids(&enc, "xy"), vec![8]);
    assert_eq!(ids(&enc, "x"), vec![3, 0]);
}

#[test]
fn the_character_table_agrees_with_the_merge() {
    // Byte fallback, pieces of one and two characters beyond ASCII, an unknown character.
    let mut v = letters();
    v.extend([
        ("é", -9.0, N),
        ("ж", -9.0, N),
        ("жж", -1.0, N),
        ("_ж", -2.0, N),
    ]);
    v.extend((0..=255u8).map(|b| {
        let name: &'static str = format!("<0x{b:02X}>").leak();
        (name, 0.0, PieceKind::Byte)
    }));
    for byte_fallback in [false, true] {
        let mut s = spec(&v);
        s.byte_fallback = byte_fallback;
        let enc = build(s);
        let plain = uncut(&enc);
        for t in ["é", "ж", "жж ж", "中", "é中ж", "ü", "\u{2581}", "a中b"] {
            assert_eq!(
                ids(&enc, t),
                ids(&plain, t),
                "{t:?} byte_fallback {byte_fallback}"
            );
        }
    }
}

#[test]
fn runs_of_one_character_take_the_stack_where_their_pieces_tie() {
    // Pieces of "a" repeated with one score (the stack), with different scores (the queue),
    // and with gaps in the lengths; runs around the shortcut's threshold and the pieces'.
    let lengths: [&[usize]; 4] = [&[2, 3, 4, 5, 6, 7, 8], &[2, 4, 8], &[3, 5], &[2, 3, 7, 9]];
    for (case, lens) in lengths.iter().enumerate() {
        for tied in [true, false] {
            let mut v = letters();
            let runs: Vec<(String, f32)> = lens
                .iter()
                .map(|&n| ("a".repeat(n), if tied { -5.0 } else { -(n as f32) }))
                .collect();
            v.extend(runs.iter().map(|(p, s)| {
                let p: &'static str = p.clone().leak();
                (p, *s, N)
            }));
            let mut s = spec(&v);
            s.prepend = Prepend::Never;
            let enc = build(s);
            let plain = uncut(&enc);
            for n in [1, 2, 63, 64, 65, 100, 127, 128, 129, 1000, 4099] {
                let t = "a".repeat(n);
                assert_eq!(
                    ids(&enc, &t),
                    ids(&plain, &t),
                    "case {case} tied {tied} n {n}"
                );
            }
        }
    }
}
