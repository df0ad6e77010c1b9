//! The real vocabularies of `../shared/vocab`: they must qualify, and give the heap merge's ids.

use super::*;
use crate::test_data::random_text;
use crate::test_data::{corpus_files, shared};
use crate::vocab::RankMap;

const VOCABS: [&str; 6] = [
    "r50k_base/r50k_base.tiktoken",
    "p50k_base/p50k_base.tiktoken",
    "cl100k_base/cl100k_base.tiktoken",
    "o200k_base/o200k_base.tiktoken",
    "llama3/tokenizer.model",
    "llama4/tokenizer.model",
];

/// The token table of a vocabulary file of `../shared/vocab`, with its single bytes' ranks.
fn load(shared: &std::path::Path, vocab: &str) -> (MergeTable, [Rank; 256]) {
    let data = std::fs::read(shared.join("vocab").join(vocab)).unwrap();
    let ranks: RankMap = crate::formats::tiktoken::parse(&data)
        .unwrap()
        .into_iter()
        .collect();
    let byte_ranks: [Rank; 256] = std::array::from_fn(|b| ranks[&vec![b as u8]]);
    (MergeTable::new(&ranks, &byte_ranks), byte_ranks)
}

/// The tokens shared out between threads come back in order: the same last joins as
/// merging every token on one thread.
#[test]
fn last_joins_on_threads_equal_one_thread() {
    let Some(shared) = shared() else { return };
    let (table, _) = load(&shared, VOCABS[3]);
    let (bytes, spans) = table.tokens().tokens();
    let got = last_joins(&bytes, &spans, &table);
    let one_thread: Vec<Option<[Rank; 2]>> = spans
        .iter()
        .map(|(span, _)| last_join(&bytes[span.clone()], &table))
        .collect();
    assert_eq!(got.len(), spans.len());
    assert!(got == one_thread);
    // Every token of o200k forms, and each multi-byte one has a split.
    assert!(got.iter().all(Option::is_some));
}

#[test]
fn equal_to_the_heap_merge_on_every_corpus_file() {
    let Some(shared) = shared() else { return };
    let files: Vec<Vec<u8>> = corpus_files(&shared)
        .iter()
        .map(|f| std::fs::read(f).unwrap())
        .collect();
    for vocab in VOCABS {
        let (table, byte_ranks) = load(&shared, vocab);
        let start = std::time::Instant::now();
        let backtracker = Backtracker::new(&table);
        eprintln!("{vocab}: built in {:?}", start.elapsed());
        let backtracker = backtracker.unwrap();
        // Llama 3 has tokens ranked below their parts; the others grow along merges.
        assert_eq!(
            backtracker.monotone,
            !vocab.starts_with("llama3"),
            "{vocab}"
        );
        let mut seed = 5u64;
        let mut compared = 0;
        for text in &files {
            // Windows of raw bytes, not pre-tokenized pieces: harder and more varied input.
            for _ in 0..12 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let len = (seed >> 40) as usize % 1500 + 1;
                let at = (seed >> 20) as usize % text.len().max(1);
                let window = &text[at.min(text.len())..(at + len).min(text.len())];
                let mut expected = Vec::new();
                heap_merge(window, &table, &byte_ranks, |_, _| {}, |r| expected.push(r));
                let mut got = Vec::new();
                assert!(backtracker.merge(window, &table, &mut got));
                assert_eq!(
                    got,
                    expected,
                    "{vocab}: {:?}",
                    String::from_utf8_lossy(window)
                );
                compared += window.len();
            }
        }
        // Pieces from small alphabets: runs, near-runs and mixed scripts, where the search
        // backs up most.
        for alphabet in [
            &b" "[..],
            b"\t \n",
            b"ab",
            b" a",
            b"0123456789",
            b"=-*",
            "é中 ".as_bytes(),
            b"etaoin shrdlu",
        ] {
            for len in (1..600).step_by(7) {
                let window = random_text(&mut seed, len, alphabet);
                let mut expected = Vec::new();
                heap_merge(
                    &window,
                    &table,
                    &byte_ranks,
                    |_, _| {},
                    |r| expected.push(r),
                );
                let mut got = Vec::new();
                assert!(backtracker.merge(&window, &table, &mut got));
                assert_eq!(
                    got,
                    expected,
                    "{vocab}: {:?}",
                    String::from_utf8_lossy(&window)
                );
                compared += window.len();
            }
        }
        eprintln!("{vocab}: {compared} bytes compared");
    }
}

/// Runs of whitespace in Llama 3 (whose vocabulary has tokens ranked below their parts) take
/// the cheap boundary check: the bytes merged by the fallback stay a small multiple of the
/// piece, at every length around the merge thresholds. Before, each pair of long space tokens
/// was merged by hand: thousands of bytes per byte of piece.
#[test]
fn llama3_whitespace_runs_check_pairs_cheaply() {
    let Some(shared) = shared() else { return };
    let (table, byte_ranks) = load(&shared, VOCABS[4]);
    let backtracker = Backtracker::new(&table).unwrap();
    assert!(!backtracker.monotone);
    for unit in [&b" "[..], b"\t", b"\n", b" \t", b"\n ", b" \n\t", b"\r\n"] {
        for len in [
            FLAT_MERGE_MAX_LEN + 1,
            INLINE_MAX * 8,
            300,
            600,
            1811,
            1812,
            4096,
            20_000,
        ] {
            let mut piece: Vec<u8> = unit.iter().copied().cycle().take(len).collect();
            piece.push(b'a');
            FALLBACK_BYTES.with(|c| c.set(0));
            let mut got = Vec::new();
            assert!(backtracker.merge(&piece, &table, &mut got));
            let fallback = FALLBACK_BYTES.with(std::cell::Cell::get);
            assert!(
                fallback <= 4 * piece.len() + 4096,
                "{unit:?} x {len}: {fallback} bytes merged by hand"
            );
            let mut expected = Vec::new();
            heap_merge(&piece, &table, &byte_ranks, |_, _| {}, |r| expected.push(r));
            assert_eq!(got, expected, "{unit:?} x {len}");
        }
    }
}
