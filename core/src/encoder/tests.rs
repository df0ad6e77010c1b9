use super::*;
use crate::pretokenize::patterns;
use crate::vocab::by_id::MAX_ID;

fn tiny() -> RankEncoder {
    let mut ranks: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], u32::from(b))).collect();
    for (i, t) in [
        &b"he"[..],
        b"ll",
        b"hell",
        b"hello",
        b" w",
        b"or",
        b" wor",
        b"ld",
    ]
    .iter()
    .enumerate()
    {
        ranks.push((t.to_vec(), 256 + i as Rank));
    }
    RankEncoder::new(ranks, [("<|end|>".to_string(), 300)], patterns::GPT2)
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn encodes_and_decodes() {
    let enc = tiny();
    let ids = enc.encode_ordinary("hello world").unwrap_or_default();
    assert_eq!(ids, vec![259, 262, 263]);
    assert_eq!(enc.count_ordinary("hello world"), Ok(3));
    assert_eq!(enc.decode_bytes(&ids), Ok(b"hello world".to_vec()));
    assert_eq!(enc.decode_bytes(&[999]), Err(Error::UnknownId(999)));
}

/// tiktoken takes an empty token (Whisper's vocabularies end with one, written "="): its rank
/// decodes to nothing and no text encodes to it; a second one is an error.
#[test]
fn an_empty_token_decodes_to_nothing_and_is_never_produced() {
    let mut ranks: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], u32::from(b))).collect();
    ranks.push((b"ab".to_vec(), 256));
    ranks.push((Vec::new(), 257));
    let enc = RankEncoder::new(ranks.clone(), [], patterns::GPT2).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        enc.encode_ordinary("ab a").unwrap_or_default(),
        vec![256, 32, 97]
    );
    assert_eq!(enc.decode_bytes(&[256, 257, 97]), Ok(b"aba".to_vec()));
    assert_eq!(enc.ranks().get(&b""[..]), Some(&257));
    let file = crate::formats::tiktoken::write(&ranks);
    let parsed = crate::formats::tiktoken::parse(&file).unwrap_or_default();
    assert!(parsed.contains(&(Vec::new(), 257)));
    let equals = crate::formats::tiktoken::parse(b"YQ== 0\n= 1\n").unwrap_or_default();
    assert_eq!(equals, vec![(b"a".to_vec(), 0), (Vec::new(), 1)]);
    ranks.push((Vec::new(), 258));
    let Err(Error::InvalidVocabulary(msg)) = RankEncoder::new(ranks, [], patterns::GPT2) else {
        panic!("two empty tokens accepted");
    };
    assert!(
        msg.contains("the empty token has two ranks: 257 and 258"),
        "{msg}"
    );
}

#[test]
fn specials_only_when_allowed() {
    let enc = tiny();
    let none = enc.special_matcher([]).unwrap_or_else(|e| panic!("{e}"));
    let all = enc
        .special_matcher(["<|end|>"])
        .unwrap_or_else(|e| panic!("{e}"));
    let text = "hello<|end|>";
    assert!(!enc.encode(text, &none).unwrap_or_default().contains(&300));
    assert_eq!(enc.encode(text, &all).unwrap_or_default(), vec![259, 300]);
    assert_eq!(enc.count(text, &all), Ok(2));
    assert!(enc.special_matcher(["<|nope|>"]).is_err());
}

/// The first-byte prefilter never changes what `find` returns: against a naive search,
/// for sets of tokens with one, two, three and more distinct first bytes (multi-byte ones
/// too), from every start.
#[test]
fn special_search_equals_a_naive_search() {
    let specials = ["<|a|>", "<|ab|>", "[x]", "{y}", "«z»", "éé", "<|"];
    let ranks: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], u32::from(b))).collect();
    let named = specials
        .iter()
        .enumerate()
        .map(|(i, s)| (s.to_string(), 1000 + i as Rank));
    let enc = RankEncoder::new(ranks, named, patterns::GPT2).unwrap_or_else(|e| panic!("{e}"));
    let text = "x < <| <|a <|a|> [x] {y} éé «z» <|ab|> «« {y<|a|>";
    for take in 1..=specials.len() {
        let names = &specials[..take];
        let matcher = enc
            .special_matcher(names.iter().copied())
            .unwrap_or_else(|e| panic!("{e}"));
        for from in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            // Leftmost, then longest.
            let naive = (from..text.len())
                .filter_map(|start| {
                    names
                        .iter()
                        .filter(|n| text.as_bytes()[start..].starts_with(n.as_bytes()))
                        .max_by_key(|n| n.len())
                        .map(|n| (start, start + n.len(), enc.specials()[*n]))
                })
                .next();
            assert_eq!(matcher.find(text, from), naive, "{names:?} from {from}");
        }
    }
}

#[test]
fn rejects_bad_vocabularies() {
    let missing: Vec<(Vec<u8>, Rank)> = (0..=254u8).map(|b| (vec![b], u32::from(b))).collect();
    assert!(RankEncoder::new(missing, [], patterns::GPT2).is_err());
    let mut dup: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], u32::from(b))).collect();
    dup.push((b"ab".to_vec(), 5));
    assert!(RankEncoder::new(dup, [], patterns::GPT2).is_err());
    let base: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], u32::from(b))).collect();
    assert!(RankEncoder::new(base, [("<s>".to_string(), 3)], patterns::GPT2).is_err());
}

#[test]
fn huge_sparse_ids_are_rejected_without_allocating() {
    // A hostile-file case: one line claiming rank 2^28 - 1 used to allocate a 6 GiB table
    // before any other check ran (now a regression seed of the `tiktoken_parse` fuzz target).
    let bytes = || (0..=255u8).map(|b| (vec![b], u32::from(b)));
    let huge = bytes().chain([(b"ab".to_vec(), MAX_ID - 1)]);
    let err = RankEncoder::new(huge, [], patterns::GPT2)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("nearly contiguous"), "{err}");
    let special = RankEncoder::new(bytes(), [("<s>".to_string(), MAX_ID - 1)], patterns::GPT2);
    assert!(special.is_err());
    // Sparse but small id spaces stay fine (a toy vocabulary with cl100k's special id).
    let toy = RankEncoder::new(bytes(), [("<s>".to_string(), 100_257)], patterns::GPT2)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(toy.id_bound(), 100_258);
    assert_eq!(toy.token_bytes(100_257), Some(&b"<s>"[..]));
    assert_eq!(toy.token_bytes(100_256), None);
}

#[test]
fn whole_piece_token_needs_no_merge_path() {
    // From the `encode` fuzz target: with "aaa" a token but not "aa", a piece "aaa" is that
    // one token (tiktoken checks the whole piece first), while "aaaa" has no merge at all.
    let ranks = (0..=255u8)
        .map(|b| (vec![b], u32::from(b)))
        .chain([(b"aaa".to_vec(), 256)]);
    let enc = RankEncoder::new(ranks, [], patterns::GPT2).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(enc.encode_ordinary("aaa"), Ok(vec![256]));
    assert_eq!(enc.encode_ordinary("aaaa"), Ok(vec![97; 4]));
    assert_eq!(enc.count_ordinary("aaa aaaa"), Ok(1 + 5));
}

#[test]
fn clashing_ids_are_named() {
    let bytes = || (0..=255u8).map(|b| (vec![b], u32::from(b)));
    let two = bytes().chain([(b"ab".to_vec(), 7)]);
    let err = RankEncoder::new(two, [], patterns::GPT2)
        .err()
        .map(|e| e.to_string());
    assert!(err.is_some_and(|e| e.contains("rank 7 is given to two tokens")));
    let special = RankEncoder::new(bytes(), [("<s>".to_string(), 7)], patterns::GPT2);
    let err = special.err().map(|e| e.to_string());
    assert!(err.is_some_and(|e| e.contains("\"<s>\" has id 7, which is already taken")));
}

#[test]
fn invalid_utf8_bytes() {
    let enc = tiny();
    assert_eq!(
        enc.encode_bytes(b"he\xffll").unwrap_or_default(),
        vec![256, 255, 257]
    );
}

/// Issue 30 point 1: special tokens may share an id, as tiktoken allows; each encodes to it and
/// the id decodes to the text that sorts first, in whatever order they were given.
#[test]
fn specials_may_share_an_id() {
    let bytes = || (0..=255u8).map(|b| (vec![b], u32::from(b)));
    for specials in [
        vec![("<|b|>", 256), ("<|a|>", 256), ("<|c|>", 257)],
        vec![("<|c|>", 257), ("<|a|>", 256), ("<|b|>", 256)],
    ] {
        let specials = specials.into_iter().map(|(t, id)| (t.to_string(), id));
        let enc = RankEncoder::new(bytes(), specials, r"\S+|\s+").unwrap_or_else(|e| panic!("{e}"));
        let all = enc
            .special_matcher(["<|a|>", "<|b|>", "<|c|>"])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            enc.encode("<|a|><|b|>x<|c|>", &all),
            Ok(vec![256, 256, 120, 257])
        );
        assert_eq!(enc.token_bytes(256), Some(&b"<|a|>"[..]));
        assert_eq!(enc.token_bytes(257), Some(&b"<|c|>"[..]));
        assert_eq!(enc.id_bound(), 258);
        assert_eq!(enc.encode_single_token(b"<|b|>"), Some(256));
    }
    // Sharing with an ordinary token stays an error: the id would mean two different texts.
    let err = RankEncoder::new(
        bytes(),
        [("<|a|>".to_string(), 65), ("<|b|>".to_string(), 65)],
        r"\S+|\s+",
    )
    .err()
    .map(|e| e.to_string());
    assert!(err.is_some_and(|e| e.contains("has id 65, which is already taken")));
}
