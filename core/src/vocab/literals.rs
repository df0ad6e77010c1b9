//! Finding a set of literal strings (special and added tokens) in text.

use aho_corasick::{AhoCorasick, AhoCorasickKind, BuildError, MatchKind};

/// Above this many pattern bytes the automaton is a contiguous NFA: building aho-corasick's
/// DFA grows with pattern length times alphabet, so one very long special token would make
/// loading a vocabulary take seconds, while the NFA builds in time linear in the patterns.
const DFA_MAX_PATTERN_BYTES: usize = 2048;

/// A leftmost-longest automaton over `patterns`: where two start at the same place, the longer
/// one wins, as tiktoken and `tokenizers` choose.
pub fn leftmost_longest<P: AsRef<[u8]>>(patterns: &[P]) -> Result<AhoCorasick, BuildError> {
    let total: usize = patterns.iter().map(|p| p.as_ref().len()).sum();
    let kind = (total > DFA_MAX_PATTERN_BYTES).then_some(AhoCorasickKind::ContiguousNFA);
    AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .kind(kind)
        .build(patterns)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_match_wins_with_either_kind() {
        for long in [false, true] {
            let filler = if long {
                "x".repeat(3000)
            } else {
                String::new()
            };
            let patterns = ["<|a", "<|ab|>", filler.as_str()];
            let patterns: Vec<&str> = patterns.into_iter().filter(|p| !p.is_empty()).collect();
            let automaton = leftmost_longest(&patterns).unwrap();
            let m = automaton.find("zz<|ab|>").unwrap();
            assert_eq!((m.start(), m.end(), m.pattern().as_usize()), (2, 8, 1));
        }
    }

    #[test]
    fn a_very_long_pattern_builds_in_linear_time() {
        // The DFA took seconds for one pattern of 40,000 bytes; the NFA takes milliseconds.
        let long = "x".repeat(200_000);
        let started = std::time::Instant::now();
        let automaton = leftmost_longest(&[long.as_str()]).unwrap();
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert!(automaton.find(long.as_str()).is_some());
    }
}
