//! The encoder against the textbook merge, on vocabularies made from the fuzz input itself, with
//! short pieces (flat merge) and pieces over 128 bytes (heap merge).
//!
//! Input: byte 0 = number of extra tokens and which pattern; then per token a length byte and
//! that many alphabet bytes; the rest is the text. Tokens and text share a tiny alphabet (with
//! the two bytes of 'é') so merges fire constantly.
#![no_main]

use bytepair_core::pretokenize::patterns;
use bytepair_core::{Encoder, RankEncoder};
use bytepair_fuzz::{naive_encode, vocabulary};
use libfuzzer_sys::fuzz_target;

const BYTES: &[u8] = b"abc \n\xc3\xa9a";
const CHARS: &[&str] = &["a", "b", "c", " ", "\n", "é", "a", "ab"];
/// The naive merge is cubic: keep pieces short enough to run thousands of inputs a second.
const MAX_TEXT: usize = 600;

fuzz_target!(|data: &[u8]| {
    let Some((&header, mut rest)) = data.split_first() else {
        return;
    };
    let mut tokens = Vec::new();
    for _ in 0..(header & 0x3f) {
        let Some((&len, tail)) = rest.split_first() else {
            break;
        };
        let len = 2 + usize::from(len % 6);
        let take = len.min(tail.len());
        tokens.push(
            tail[..take]
                .iter()
                .map(|&b| BYTES[usize::from(b) % BYTES.len()])
                .collect::<Vec<u8>>(),
        );
        rest = &tail[take..];
    }
    let text: String = rest
        .iter()
        .take(MAX_TEXT)
        .map(|&b| CHARS[usize::from(b) % CHARS.len()])
        .collect();
    // Bit 6: the GPT-2 scanner (short pieces) or one piece per line (long pieces, heap merge).
    let pattern = if header & 0x40 == 0 {
        patterns::GPT2
    } else {
        r"[^\n]+|\n"
    };
    let encoder = RankEncoder::new(vocabulary(tokens), [], pattern).expect("valid vocabulary");

    let ids = encoder.encode_ordinary(&text).expect("encode");
    assert_eq!(ids, naive_encode(&encoder, &text), "text {text:?}");
    assert_eq!(encoder.count_ordinary(&text), Ok(ids.len()));
    assert_eq!(encoder.decode_bytes(&ids).as_deref(), Ok(text.as_bytes()));
    assert_eq!(encoder.encode_bytes(text.as_bytes()).as_ref(), Ok(&ids));
});
