//! The hand-written scanners against the general regex engine (fancy-regex) on the same pattern:
//! identical pieces for every known pattern, and the pieces cover the whole text.
#![no_main]

use std::sync::OnceLock;

use bytepair_core::Pretokenizer;
use bytepair_core::pretokenize::patterns;
use bytepair_fuzz::text_from;
use libfuzzer_sys::fuzz_target;

const PATTERNS: [&str; 5] = [
    patterns::GPT2,
    patterns::GPT2_ORIGINAL,
    patterns::CL100K,
    patterns::O200K,
    patterns::LLAMA3,
];

fn pairs() -> &'static Vec<(Pretokenizer, Pretokenizer)> {
    static PAIRS: OnceLock<Vec<(Pretokenizer, Pretokenizer)>> = OnceLock::new();
    PAIRS.get_or_init(|| {
        PATTERNS
            .iter()
            .map(|p| {
                let scanner = Pretokenizer::new(p).expect("known pattern");
                assert!(scanner.scanner().is_some(), "no scanner for {p}");
                (scanner, Pretokenizer::with_regex(p).expect("known pattern"))
            })
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let text = text_from(data);
    for (scanner, regex) in pairs() {
        let ours = scanner.pieces(&text).expect("scanners never fail");
        // The regex engine may give up (backtrack limit); then there is nothing to compare.
        let Ok(theirs) = regex.pieces(&text) else {
            continue;
        };
        assert_eq!(ours, theirs, "pattern {:?} on {text:?}", scanner.pattern());
        assert_eq!(ours.concat(), text, "pieces do not cover the text");
    }
});
