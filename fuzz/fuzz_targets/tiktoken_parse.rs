//! The `.tiktoken` parser and vocabulary validation on hostile files: never a panic, never a huge
//! allocation (libFuzzer's -malloc_limit_mb catches those), and parse(write(x)) == x.
#![no_main]

use bytepair_core::formats::tiktoken;
use bytepair_core::pretokenize::patterns;
use bytepair_core::{Encoder, Rank, RankEncoder};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(ranks) = tiktoken::parse(data) else {
        return;
    };
    let mut sorted = ranks.clone();
    sorted.sort();
    let mut again = tiktoken::parse(&tiktoken::write(&ranks)).expect("written files parse");
    again.sort();
    assert_eq!(again, sorted);

    // Complete the byte alphabet so validation gets past its first check, then build and use it.
    let mut next: Rank = ranks
        .iter()
        .map(|t| t.1)
        .max()
        .unwrap_or(0)
        .saturating_add(1);
    let mut full = ranks;
    for b in 0..=255u8 {
        if !full.iter().any(|t| t.0 == [b]) {
            full.push((vec![b], next));
            next = next.saturating_add(1);
        }
    }
    let Ok(encoder) = RankEncoder::new(full, [("<|endoftext|>".to_string(), next)], patterns::GPT2)
    else {
        return;
    };
    let text = String::from_utf8_lossy(data);
    let ids = encoder.encode_ordinary(&text).expect("encode");
    assert_eq!(encoder.decode_bytes(&ids).as_deref(), Ok(text.as_bytes()));
});
