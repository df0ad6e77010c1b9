use super::*;
use crate::test_data::random_text;
use crate::vocab::RankMap;

/// A vocabulary learned the way BPE training does (so both properties hold): repeatedly add
/// the most frequent adjacent pair of a sample text as the next rank.
fn trained(sample: &[u8], merges: usize) -> (RankMap, [Rank; 256]) {
    let mut ranks = RankMap::default();
    let mut byte_ranks = [0; 256];
    for b in 0..=255u8 {
        ranks.insert(vec![b], Rank::from(b));
        byte_ranks[usize::from(b)] = Rank::from(b);
    }
    let mut parts: Vec<Vec<u8>> = sample.iter().map(|&b| vec![b]).collect();
    for next in 0..merges {
        let mut counts: std::collections::BTreeMap<(Vec<u8>, Vec<u8>), usize> = Default::default();
        for w in parts.windows(2) {
            *counts.entry((w[0].clone(), w[1].clone())).or_default() += 1;
        }
        let Some(((a, b), _)) = counts
            .into_iter()
            .max_by(|x, y| x.1.cmp(&y.1).then_with(|| y.0.cmp(&x.0)))
        else {
            break;
        };
        let joined = [a.as_slice(), b.as_slice()].concat();
        if ranks.contains_key(&joined) {
            break;
        }
        ranks.insert(joined.clone(), 256 + next as Rank);
        let mut merged = Vec::with_capacity(parts.len());
        let mut i = 0;
        while i < parts.len() {
            if i + 1 < parts.len() && parts[i] == a && parts[i + 1] == b {
                merged.push(joined.clone());
                i += 2;
            } else {
                merged.push(parts[i].clone());
                i += 1;
            }
        }
        parts = merged;
    }
    (ranks, byte_ranks)
}

#[test]
fn agrees_with_the_heap_merge_on_trained_vocabularies() {
    let mut seed = 11;
    for (alphabet, merges) in [(&b"ab"[..], 40), (b"abc", 80), (b"ab c", 120), (b"a", 12)] {
        let sample = random_text(&mut seed, 3000, alphabet);
        let (ranks, byte_ranks) = trained(&sample, merges);
        let table = MergeTable::new(&ranks, &byte_ranks);
        let backtracker = Backtracker::new(&table).expect("a trained vocabulary qualifies");
        for len in [1, 2, 3, 5, 17, 64, 65, 300, 2000] {
            for _ in 0..20 {
                let piece = random_text(&mut seed, len, alphabet);
                let mut expected = Vec::new();
                heap_merge(&piece, &table, &byte_ranks, |_, _| {}, |r| expected.push(r));
                let mut got = vec![7];
                assert!(backtracker.merge(&piece, &table, &mut got));
                assert_eq!(
                    got[1..],
                    expected[..],
                    "{:?}",
                    String::from_utf8_lossy(&piece)
                );
            }
        }
    }
}

#[test]
fn ranks_that_do_not_grow_along_merges_take_the_exact_check() {
    let mut ranks = RankMap::default();
    let mut byte_ranks = [0; 256];
    for b in 0..=255u8 {
        ranks.insert(vec![b], Rank::from(b) + 10);
        byte_ranks[usize::from(b)] = Rank::from(b) + 10;
    }
    // "ab" ranks below its own bytes, "abab" below "ab".
    ranks.insert(b"ab".to_vec(), 3);
    ranks.insert(b"ba".to_vec(), 4);
    ranks.insert(b"abab".to_vec(), 2);
    ranks.insert(b"aba".to_vec(), 300);
    let table = MergeTable::new(&ranks, &byte_ranks);
    let backtracker = Backtracker::new(&table).expect("every vocabulary qualifies");
    assert!(!backtracker.monotone);
    let mut seed = 3;
    for len in 1..200 {
        let piece = random_text(&mut seed, len, b"ab");
        let mut expected = Vec::new();
        heap_merge(&piece, &table, &byte_ranks, |_, _| {}, |r| expected.push(r));
        let mut got = Vec::new();
        assert!(backtracker.merge(&piece, &table, &mut got));
        assert_eq!(got, expected, "{:?}", String::from_utf8_lossy(&piece));
    }
}

#[test]
fn tokens_that_never_form_are_left_out() {
    let mut ranks: RankMap = (0..=255u8).map(|b| (vec![b], Rank::from(b))).collect();
    let byte_ranks: [Rank; 256] = std::array::from_fn(|b| b as Rank);
    // No two-byte token joins "x", "y", "z", so "xyz" can never form.
    ranks.insert(b"xyz".to_vec(), 256);
    ranks.insert(b"zx".to_vec(), 257);
    let table = MergeTable::new(&ranks, &byte_ranks);
    let backtracker = Backtracker::new(&table).expect("qualifies without the unreachable token");
    for piece in [&b"xyzxyzxyz"[..], b"xxyyzz", b"zyxyzyxxyz"] {
        let mut expected = Vec::new();
        heap_merge(piece, &table, &byte_ranks, |_, _| {}, |r| expected.push(r));
        let mut got = Vec::new();
        assert!(backtracker.merge(piece, &table, &mut got));
        assert_eq!(got, expected);
    }
}

#[test]
fn huge_tokens_from_a_hostile_file_are_cheap() {
    let mut ranks: RankMap = (0..=255u8).map(|b| (vec![b], Rank::from(b))).collect();
    let byte_ranks: [Rank; 256] = std::array::from_fn(|b| b as Rank);
    // Unreachable (nothing merges "aa"), and too long for the flat merge's quadratic time.
    ranks.insert(vec![b'a'; 60_000], 256);
    let table = MergeTable::new(&ranks, &byte_ranks);
    let backtracker = Backtracker::new(&table).expect("tokens under 64 KiB qualify");
    let mut got = Vec::new();
    assert!(backtracker.merge(&[b'a'; 1000], &table, &mut got));
    assert_eq!(got, vec![Rank::from(b'a'); 1000]);
    // Past 64 KiB the linear path steps aside and the heap merge takes the piece.
    ranks.insert(vec![b'b'; 70_000], 257);
    let table = MergeTable::new(&ranks, &byte_ranks);
    assert!(Backtracker::new(&table).is_none());
    let mut out = Vec::new();
    super::super::merge_piece(&[b'b'; 100], &table, &byte_ranks, &mut out);
    assert_eq!(out, vec![Rank::from(b'b'); 100]);
}

#[test]
fn the_filter_never_drops_a_token() {
    let mut seed = 9;
    let tokens: Vec<Vec<u8>> = (0..5000)
        .map(|i| random_text(&mut seed, 3 + i % 13, b"abcdefgh"))
        .collect();
    let filter = TokenFilter::new(tokens.iter().map(Vec::as_slice));
    assert!(tokens.iter().all(|t| filter.may_contain(t)));
    let others = (0..5000)
        .map(|i| random_text(&mut seed, 3 + i % 13, b"xyz"))
        .filter(|t| filter.may_contain(t))
        .count();
    assert!(others < 500, "{others} of 5000 non-tokens pass the filter");
}

#[test]
fn trie_lists_every_prefix_token() {
    let tokens: Vec<(&[u8], Rank)> = vec![(b"a", 1), (b"ab", 5), (b"abc", 2), (b"b", 3)];
    let trie = PrefixTrie::new(&tokens);
    let mut out = Vec::new();
    trie.prefixes(b"abcd", usize::MAX, &mut out);
    assert_eq!(out, vec![(1, 1), (2, 5), (3, 2)]);
    out.clear();
    trie.prefixes(b"abcd", 2, &mut out);
    assert_eq!(out, vec![(1, 1), (2, 5)]);
    out.clear();
    trie.prefixes(b"c", usize::MAX, &mut out);
    assert!(out.is_empty());
}
