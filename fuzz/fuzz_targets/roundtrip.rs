//! Decode(encode(x)) == x for text and for arbitrary bytes, counts equal lengths, special tokens
//! appear only when allowed, and decoding arbitrary ids is a value or an `UnknownId` error.
//!
//! The vocabulary is a built-in toy one, or the `.tiktoken` file named by `BYTEPAIR_FUZZ_VOCAB`
//! (e.g. ../shared/vocab/cl100k_base/cl100k_base.tiktoken), with the cl100k pattern.
#![no_main]

use std::sync::OnceLock;

use bytepair_core::encoder::SpecialMatcher;
use bytepair_core::formats::tiktoken;
use bytepair_core::pretokenize::patterns;
use bytepair_core::{Encoder, Error, Rank, RankEncoder};
use bytepair_fuzz::{text_from, toy_vocabulary};
use libfuzzer_sys::fuzz_target;

const SPECIALS: [&str; 2] = ["<|endoftext|>", "<|im_start|>"];

struct Setup {
    encoder: RankEncoder,
    all: SpecialMatcher,
    none: SpecialMatcher,
    special_ids: Vec<Rank>,
}

fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let ranks = match std::env::var_os("BYTEPAIR_FUZZ_VOCAB") {
            Some(path) => tiktoken::parse(&std::fs::read(path).expect("read BYTEPAIR_FUZZ_VOCAB"))
                .expect("parse BYTEPAIR_FUZZ_VOCAB"),
            None => toy_vocabulary(),
        };
        let next = ranks.iter().map(|t| t.1).max().unwrap_or(0) + 1;
        let specials: Vec<(String, Rank)> = SPECIALS
            .iter()
            .zip(next..)
            .map(|(s, id)| (s.to_string(), id))
            .collect();
        let special_ids = specials.iter().map(|s| s.1).collect();
        let encoder = RankEncoder::new(ranks, specials, patterns::CL100K).expect("vocabulary");
        let all = encoder.special_matcher(SPECIALS).expect("matcher");
        let none = encoder.special_matcher([]).expect("matcher");
        Setup {
            encoder,
            all,
            none,
            special_ids,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let s = setup();
    let enc = &s.encoder;
    let text = text_from(data);

    let ordinary = enc.encode_ordinary(&text).expect("encode_ordinary");
    assert!(!ordinary.iter().any(|id| s.special_ids.contains(id)));
    assert_eq!(enc.decode_bytes(&ordinary).as_deref(), Ok(text.as_bytes()));
    assert_eq!(enc.count_ordinary(&text), Ok(ordinary.len()));
    assert_eq!(enc.encode(&text, &s.none).as_ref(), Ok(&ordinary));

    let with_specials = enc.encode(&text, &s.all).expect("encode");
    assert_eq!(
        enc.decode_bytes(&with_specials).as_deref(),
        Ok(text.as_bytes())
    );
    assert_eq!(enc.count(&text, &s.all), Ok(with_specials.len()));
    let n_special = with_specials
        .iter()
        .filter(|id| s.special_ids.contains(id))
        .count();
    let n_text: usize = SPECIALS.iter().map(|t| text.matches(t).count()).sum();
    assert_eq!(n_special, n_text, "special ids in {text:?}");

    // Any bytes at all, valid UTF-8 or not.
    let raw = enc.encode_bytes(data).expect("encode_bytes");
    assert_eq!(enc.decode_bytes(&raw).as_deref(), Ok(data));

    // Arbitrary ids: the bytes, or an error naming the first unknown id.
    let ids: Vec<Rank> = data
        .chunks_exact(4)
        .map(|c| Rank::from_le_bytes([c[0], c[1], c[2], c[3]]) % (enc.id_bound() as Rank * 2 + 1))
        .collect();
    match enc.decode_bytes(&ids) {
        Ok(bytes) => {
            assert!(ids.iter().all(|&id| enc.token_bytes(id).is_some()) && bytes.len() >= ids.len())
        }
        Err(Error::UnknownId(id)) => {
            let first = ids.iter().find(|&&i| enc.token_bytes(i).is_none());
            assert_eq!(first.map(|&i| u64::from(i)), Some(id));
        }
        Err(e) => panic!("unexpected error {e}"),
    }
});
