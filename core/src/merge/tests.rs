use super::flat::{FLAT_MERGE_SHORT_LEN, key_rank_limit};
use super::*;
use crate::test_data::random_text;

fn vocab(tokens: &[&[u8]]) -> (RankMap, [Rank; 256]) {
    let mut ranks = RankMap::default();
    let mut byte_ranks = [0; 256];
    for b in 0..=255u8 {
        ranks.insert(vec![b], u32::from(b));
        byte_ranks[usize::from(b)] = u32::from(b);
    }
    for (i, t) in tokens.iter().enumerate() {
        ranks.insert(t.to_vec(), 256 + i as Rank);
    }
    (ranks, byte_ranks)
}

/// The textbook quadratic algorithm, as an oracle.
fn naive(piece: &[u8], ranks: &RankMap) -> Vec<Rank> {
    let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
    loop {
        let mut best: Option<(Rank, usize)> = None;
        for i in 0..parts.len().saturating_sub(1) {
            let joined = [parts[i].as_slice(), parts[i + 1].as_slice()].concat();
            if let Some(&r) = ranks.get(&joined) {
                if best.is_none_or(|(br, _)| r < br) {
                    best = Some((r, i));
                }
            }
        }
        let Some((_, i)) = best else { break };
        let right = parts.remove(i + 1);
        parts[i].extend(right);
    }
    parts.iter().map(|p| ranks[p]).collect()
}

#[test]
fn flat_and_heap_agree_with_naive() {
    let (ranks, byte_ranks) = vocab(&[b"ab", b"bc", b"abc", b"aa", b"aaaa", b"ca", b"cab", b"aaa"]);
    let mut seed: u64 = 7;
    // Both array sizes of the flat merge, and past its limit; runs of one letter merge
    // most often (every block minimum changes many times).
    let runs = [65, 200, 512].map(|n| vec![b'a'; n]);
    let random = (1..300)
        .chain([511, 512, 513, 800])
        .map(|len| random_text(&mut seed, len, b"abc"));
    for piece in runs.into_iter().chain(random) {
        let mut via_flat = Vec::new();
        flat_merge(&piece, &ranks, &byte_ranks, |_, _| {}, |r| via_flat.push(r));
        let mut via_heap = Vec::new();
        heap_merge(&piece, &ranks, &byte_ranks, |_, _| {}, |r| via_heap.push(r));
        let table = MergeTable::new(&ranks, &byte_ranks);
        let mut via_table = Vec::new();
        heap_merge(
            &piece,
            &table,
            &byte_ranks,
            |_, _| {},
            |r| via_table.push(r),
        );

        let expected = naive(&piece, &ranks);
        assert_eq!(via_flat, expected, "flat {piece:?}");
        assert_eq!(via_table, expected, "table {piece:?}");
        assert_eq!(via_heap, expected, "heap {piece:?}");
        assert_eq!(count_piece(&piece, &ranks, &byte_ranks), expected.len());
    }
}

/// Joining pairs before the merge (`PreMerge`) must not change any result, whatever the
/// ranks: random vocabularies over a small alphabet, whose ranks follow no training order
/// (a long token may rank below its parts), against the textbook algorithm.
#[test]
fn premerged_pairs_change_nothing_in_random_vocabularies() {
    let mut seed: u64 = 11;
    let mut premerged = 0;
    for round in 0..300 {
        let alphabet: &[u8] = if round % 2 == 0 {
            b"ab\xd0\xbe"
        } else {
            b"abcd"
        };
        let count = 4 + round % 40;
        let mut tokens: Vec<Vec<u8>> = Vec::new();
        while tokens.len() < count {
            let len = 2 + (random_text(&mut seed, 1, b"0123")[0] - b'0') as usize;
            let token = random_text(&mut seed, len, alphabet);
            if !tokens.contains(&token) {
                tokens.push(token);
            }
        }
        let refs: Vec<&[u8]> = tokens.iter().map(Vec::as_slice).collect();
        let (ranks, byte_ranks) = vocab(&refs);
        let table = MergeTable::new(&ranks, &byte_ranks);
        for len in 1..=40 {
            let piece = random_text(&mut seed, len, alphabet);
            premerged += (0..len)
                .filter(|&i| table.premerge.at(&piece, i).is_some())
                .count();
            let mut via_flat = Vec::new();
            flat_merge(&piece, &table, &byte_ranks, |_, _| {}, |r| via_flat.push(r));
            assert_eq!(via_flat, naive(&piece, &ranks), "{tokens:?} {piece:?}");
        }
    }
    // The test means something only if pairs were joined in advance.
    assert!(premerged > 10_000, "{premerged}");
}

thread_local! {
    /// Letters joined by the second round on this thread (each test runs on its own).
    pub(super) static LETTERS_JOINED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The second round (three-byte letters) must not change any result either: random
/// vocabularies of letters, bytes of letters and strings of both, ranked in random order,
/// against the textbook algorithm.
#[test]
fn joined_letters_change_nothing_in_random_vocabularies() {
    // Three-byte letters (two sharing their first two bytes, one sharing its last two with
    // another), and bytes that split them or stand alone.
    let units: [&[u8]; 10] = [
        b"\xe0\xb8\x81",
        b"\xe0\xb8\x82",
        b"\xe1\xb8\x82",
        b"\xe0\xb8",
        b"\xb8\x82",
        b"\x82a",
        b"a\xe0",
        b"\xe0",
        b"\x81",
        b"a",
    ];
    let mut seed: u64 = 7;
    let pick = |seed: &mut u64, n: usize| -> Vec<u8> {
        (0..n)
            .flat_map(|_| units[usize::from(random_text(seed, 1, b"0123456789")[0] - b'0')])
            .copied()
            .collect()
    };
    let before = LETTERS_JOINED.with(std::cell::Cell::get);
    for round in 0..300 {
        let count = 4 + round % 40;
        // Half the vocabularies start with the letters and their pairs (so the letters
        // rank low, as they do in real ones), in a random order.
        let mut tokens: Vec<Vec<u8>> = Vec::new();
        if round % 2 == 0 {
            while tokens.len() < 5 {
                let unit = pick(&mut seed, 1);
                if unit.len() > 1 && !tokens.contains(&unit) {
                    tokens.push(unit);
                }
            }
        }
        while tokens.len() < count {
            let n = 1 + usize::from(random_text(&mut seed, 1, b"0012")[0] - b'0');
            let token = pick(&mut seed, n);
            if token.len() > 1 && !tokens.contains(&token) {
                tokens.push(token);
            }
        }
        let refs: Vec<&[u8]> = tokens.iter().map(Vec::as_slice).collect();
        let (ranks, byte_ranks) = vocab(&refs);
        let table = MergeTable::new(&ranks, &byte_ranks);
        for n in 1..=30 {
            let piece = pick(&mut seed, n);
            let mut via_flat = Vec::new();
            flat_merge(&piece, &table, &byte_ranks, |_, _| {}, |r| via_flat.push(r));
            assert_eq!(via_flat, naive(&piece, &ranks), "{tokens:?} {piece:?}");
        }
    }
    // The test means something only if letters were joined in advance.
    let joined = LETTERS_JOINED.with(std::cell::Cell::get) - before;
    assert!(joined > 5_000, "{joined}");
}

/// The encoder's whole-piece lookup reads a window of the text past the piece: it must give
/// `rank`'s answer for every piece at every place, the last bytes of the text included
/// (where no window of eight bytes fits), for tokens and non-tokens of every length.
#[test]
fn whole_piece_lookup_in_text_equals_rank() {
    let tokens: [&[u8]; 12] = [
        b"ab",
        b"abc",
        b"abca",
        b"abcab",
        b"abcabc",
        b"abcabca",
        b"abcabcab",
        b"ca",
        b"cab",
        b"bca",
        b"abcabcabcabcabc",
        b"abcabcabcabcabca",
    ];
    let (ranks, byte_ranks) = vocab(&tokens);
    let table = MergeTable::new(&ranks, &byte_ranks);
    let mut seed = 5;
    let mut texts = vec![b"abcabcabcabcabcabc".to_vec(), b"xabcabca".to_vec()];
    texts.extend((0..20).map(|_| crate::test_data::random_text(&mut seed, 40, b"abcx")));
    let mut found = [0usize; 17];
    for text in &texts {
        for start in 0..text.len() {
            for end in start + 1..=text.len().min(start + 16) {
                let piece = &text[start..end];
                let expected = table.rank(piece);
                assert_eq!(table.piece_rank_in(text, piece), expected, "{piece:?}");
                assert_eq!(expected, ranks.get(piece).copied(), "{piece:?}");
                if expected.is_some() {
                    found[piece.len()] += 1;
                }
            }
        }
    }
    // Every length from 1 to 8 and 15, 16 was found as a token somewhere.
    assert!(
        found[1..=8].iter().chain(&found[15..=16]).all(|&n| n > 0),
        "{found:?}"
    );
}

#[test]
fn whole_piece_and_single_bytes() {
    let (ranks, byte_ranks) = vocab(&[b"ab", b"abc"]);
    let mut out = Vec::new();
    encode_piece(b"abc", &ranks, &byte_ranks, &mut out);
    encode_piece(b"z", &ranks, &byte_ranks, &mut out);
    encode_piece(b"", &ranks, &byte_ranks, &mut out);
    assert_eq!(out, vec![257, u32::from(b'z')]);
}

/// Keys pack a rank with a position; ranks at the top of what fits, and ranks that do not
/// fit (the heap merge then takes over), still give the rule's result, for both array sizes
/// (the larger one leaves fewer bits to the rank).
#[test]
fn ranks_near_and_above_the_key_limit() {
    let tokens: [&[u8]; 6] = [b"ab", b"bc", b"abc", b"aa", b"aaaa", b"ca"];
    let lengths: Vec<usize> = (1..80).chain([100, 300, 511, 512, 513, 700]).collect();
    for size in [FLAT_MERGE_SHORT_LEN, FLAT_MERGE_MAX_LEN] {
        let limit = key_rank_limit(size);
        for first in [limit - tokens.len() as Rank, limit, 1 << 30] {
            let (mut ranks, byte_ranks) = vocab(&[]);
            for (i, t) in tokens.iter().enumerate() {
                ranks.insert(t.to_vec(), first + i as Rank);
            }
            let mut seed: u64 = 11;
            for &len in &lengths {
                let piece = random_text(&mut seed, len, b"abc");
                let mut got = Vec::new();
                flat_merge(&piece, &ranks, &byte_ranks, |_, _| {}, |r| got.push(r));
                assert_eq!(got, naive(&piece, &ranks), "first rank {first}, {piece:?}");
            }
        }
    }
}

#[test]
fn backtracker_is_built_once_long_pieces_add_up() {
    let (ranks, byte_ranks) = vocab(&[b"ab", b"bc", b"abc", b"aa", b"aaaa", b"ca", b"cab", b"aaa"]);
    let table = MergeTable::new(&ranks, &byte_ranks);
    let mut seed: u64 = 3;
    let piece = random_text(&mut seed, FLAT_MERGE_MAX_LEN + 88, b"abc");
    let expected = naive(&piece, &ranks);
    let mut merged = 0;
    while merged + piece.len() < BUILD_BACKTRACKER_AFTER {
        let mut out = Vec::new();
        merge_piece(&piece, &table, &byte_ranks, &mut out);
        assert_eq!(out, expected);
        merged += piece.len();
        assert!(
            table.backtracker.get().is_none(),
            "built after {merged} bytes"
        );
    }
    // The piece that crosses the line builds it, and merges with it to the same ids.
    let mut out = Vec::new();
    merge_piece(&piece, &table, &byte_ranks, &mut out);
    assert!(matches!(table.backtracker.get(), Some(Some(_))));
    assert_eq!(out, expected);
    // A piece that long on its own builds it at once.
    let fresh = MergeTable::new(&ranks, &byte_ranks);
    let run = random_text(&mut seed, BUILD_BACKTRACKER_AFTER, b"abc");
    let mut via_heap = Vec::new();
    heap_merge(&run, &ranks, &byte_ranks, |_, _| {}, |r| via_heap.push(r));
    let mut out = Vec::new();
    merge_piece(&run, &fresh, &byte_ranks, &mut out);
    assert!(matches!(fresh.backtracker.get(), Some(Some(_))));
    assert_eq!(out, via_heap);
}

#[test]
fn long_run_is_not_quadratic() {
    let (ranks, byte_ranks) = vocab(&[b"aa", b"aaaa", b"aaaaaaaa"]);
    let piece = vec![b'a'; 1_000_000];
    let mut out = Vec::new();
    encode_piece(&piece, &ranks, &byte_ranks, &mut out);
    assert_eq!(out.len(), 125_000);
    assert!(out.iter().all(|&r| r == 258));
}

/// A vocabulary of runs of `a`: `lens` in rank order (after the 256 bytes).
fn runs_vocab(lens: &[usize]) -> (RankMap, [Rank; 256]) {
    let tokens: Vec<Vec<u8>> = lens.iter().map(|&l| vec![b'a'; l]).collect();
    let refs: Vec<&[u8]> = tokens.iter().map(Vec::as_slice).collect();
    vocab(&refs)
}

#[test]
fn runs_of_one_byte_merge_as_one_join_at_a_time() {
    let mut seed = 7u64;
    let mut by_runs = 0;
    let mut declined = 0;
    for round in 0..300 {
        // Random sets of run lengths in random rank order: trained-like orders (shorter
        // first) in half the rounds, any order in the other half.
        let mut lens: Vec<usize> = (2..=40)
            .filter(|_| random_text(&mut seed, 1, b"01")[0] == b'1')
            .collect();
        if round % 2 == 1 {
            for i in (1..lens.len()).rev() {
                let j = usize::from(random_text(&mut seed, 1, b"0123456789")[0] - b'0') % (i + 1);
                lens.swap(i, j);
            }
        }
        let (ranks, byte_ranks) = runs_vocab(&lens);
        for len in [16, 17, 31, 64, 65, 129, 300] {
            let piece = vec![b'a'; len];
            let expected = naive(&piece, &ranks);
            let mut got = Vec::new();
            if uniform::merge_uniform(&piece, &ranks, &byte_ranks, &mut got) {
                assert_eq!(got, expected, "lens {lens:?}, piece of {len}");
                by_runs += 1;
            } else {
                assert!(got.is_empty());
                declined += 1;
            }
            let mut via_piece = Vec::new();
            merge_piece(&piece, &ranks, &byte_ranks, &mut via_piece);
            assert_eq!(
                via_piece, expected,
                "merge_piece, lens {lens:?}, piece of {len}"
            );
        }
    }
    // Both outcomes are exercised: the pass for most vocabularies, the fallback for some.
    assert!(
        by_runs > 1000 && declined > 0,
        "{by_runs} by runs, {declined} declined"
    );
}

#[test]
fn runs_with_affixes_merge_as_one_join_at_a_time() {
    let mut seed = 13u64;
    let mut by_runs = 0;
    let mut declined = 0;
    for round in 0..300 {
        // Runs of `a`, and tokens of a space or `-` before runs and a newline or `b` after
        // them, in random rank order (trained-like, shorter first, in half the rounds).
        let mut tokens: Vec<Vec<u8>> = Vec::new();
        for len in 1..=24 {
            for (pre, post) in [(&b""[..], &b""[..]), (b" ", b""), (b"-", b""), (b"", b"\n")] {
                let pick = random_text(&mut seed, 1, b"0123")[0];
                if (len > 1 || !pre.is_empty() || !post.is_empty()) && pick != b'0' {
                    tokens.push([pre, &vec![b'a'; len][..], post].concat());
                }
            }
        }
        tokens.push(b" -".to_vec());
        tokens.push(b"\nb".to_vec());
        if round % 2 == 1 {
            for i in (1..tokens.len()).rev() {
                let j =
                    usize::from(random_text(&mut seed, 2, b"0123456789")[0] - b'0') * 7 % (i + 1);
                tokens.swap(i, j);
            }
        }
        let refs: Vec<&[u8]> = tokens.iter().map(Vec::as_slice).collect();
        let (ranks, byte_ranks) = vocab(&refs);
        for len in [16, 17, 31, 64, 65, 200] {
            for (pre, post) in [
                (&b" "[..], &b""[..]),
                (b" -", b""),
                (b"", b"\n"),
                (b"", b"\nb"),
                (b"-", b"\n"),
                (b" -", b"\nb"),
            ] {
                let piece = [pre, &vec![b'a'; len][..], post].concat();
                let expected = naive(&piece, &ranks);
                let run = uniform::affixed_run(&piece);
                assert_eq!(run, Some((pre.len(), pre.len() + len)));
                let mut got = Vec::new();
                if uniform::merge_affixed(
                    &piece,
                    run.unwrap_or_default(),
                    &ranks,
                    &byte_ranks,
                    &mut got,
                ) {
                    assert_eq!(got, expected, "tokens {tokens:?}, piece {piece:?}");
                    by_runs += 1;
                } else {
                    assert!(got.is_empty());
                    declined += 1;
                }
                let mut via_piece = Vec::new();
                merge_piece(&piece, &ranks, &byte_ranks, &mut via_piece);
                assert_eq!(via_piece, expected, "merge_piece, piece {piece:?}");
            }
        }
    }
    assert!(
        by_runs > 3000 && declined > 0,
        "{by_runs} by runs, {declined} declined"
    );
    // What does not qualify: too short a run, three bytes before it, two runs.
    for piece in [
        &b" aaaaaaaaaaaaaaa"[..],
        b"   aaaaaaaaaaaaaaaaaa",
        b" aaaaaaaaaaaaaaaaaaaaab b",
    ] {
        assert_eq!(uniform::affixed_run(piece), None, "{piece:?}");
    }
    assert_eq!(uniform::affixed_run(&[b'a'; 40]), None);
}

#[test]
fn periodic_pieces_merge_as_one_join_at_a_time() {
    let mut seed = 11u64;
    let mut by_passes = 0;
    let mut declined = 0;
    for round in 0..400 {
        // A unit of two to five bytes over a small alphabet, and random tokens made of its
        // rotations' repetitions, in random rank order.
        let unit_len = 2 + round % 4;
        let unit = random_text(&mut seed, unit_len, b"ab\n");
        let long: Vec<u8> = unit.iter().copied().cycle().take(80).collect();
        let mut tokens: Vec<Vec<u8>> = Vec::new();
        for _ in 0..30 {
            let start = usize::from(random_text(&mut seed, 1, b"0123456789")[0] - b'0') % unit_len;
            let len = 2 + usize::from(random_text(&mut seed, 1, b"0123456789abcdef")[0]) % 24;
            let token = long[start..start + len].to_vec();
            if !tokens.contains(&token) && token.iter().any(|&b| b != token[0]) {
                tokens.push(token);
            }
        }
        let refs: Vec<&[u8]> = tokens.iter().map(Vec::as_slice).collect();
        let (ranks, byte_ranks) = vocab(&refs);
        // Long pieces have many copies of the repeated block; the heap merge (itself tested
        // against the textbook one) is their reference.
        for len in [16, 17, 33, 64, 129, 300, 1000, 4097] {
            let piece: Vec<u8> = unit.iter().copied().cycle().take(len).collect();
            let Some(p) = periodic::period(&piece) else {
                continue;
            };
            let expected = if len <= 300 {
                naive(&piece, &ranks)
            } else {
                let mut ids = Vec::new();
                heap_merge(&piece, &ranks, &byte_ranks, |_, _| {}, |r| ids.push(r));
                ids
            };
            let mut got = Vec::new();
            if periodic::merge_periodic(&piece, p, &ranks, &byte_ranks, &mut got) {
                assert_eq!(got, expected, "tokens {tokens:?}, piece {piece:?}");
                by_passes += 1;
            } else {
                assert!(got.is_empty());
                declined += 1;
            }
            let mut via_piece = Vec::new();
            merge_piece(&piece, &ranks, &byte_ranks, &mut via_piece);
            assert_eq!(via_piece, expected, "merge_piece, piece {piece:?}");
        }
    }
    assert!(
        by_passes > 1000 && declined > 0,
        "{by_passes} by passes, {declined} declined"
    );
}

#[test]
fn periods_are_the_shortest_units() {
    assert_eq!(periodic::period(b" \t \t \t \t"), Some(2));
    assert_eq!(periodic::period(b"\r\n\r\n\r\n\r"), Some(2));
    assert_eq!(periodic::period(b"ab\nab\nab\nab"), Some(3));
    assert_eq!(periodic::period(b"aaaaaaaa"), Some(2));
    assert_eq!(periodic::period(b"abcabcabd"), None);
    assert_eq!(periodic::period(b"abcdefghiabcdefghi"), None);
}

#[test]
fn repeating_pieces_are_cached_per_encoder() {
    // Two vocabularies that merge the same repeating pieces differently, used in turn on one
    // thread: each gets its own ids, from the merge the first time and the cache after.
    let (first, first_bytes) = vocab(&[b" \t", b" \t \t", b"\r\n"]);
    let (second, second_bytes) = vocab(&[b"\t ", b"\t \t ", b"\r\n\r\n"]);
    let tables = [
        (MergeTable::new(&first, &first_bytes), first_bytes),
        (MergeTable::new(&second, &second_bytes), second_bytes),
    ];
    for len in [16, 17, 40, 511, 512, 513] {
        for unit in [&b" \t"[..], b"\r\n", b"\t \n"] {
            // Two owners whose entries for this piece share a slot.
            let key = crate::bytes::packed::pack16(unit);
            let first_owner = cache::new_owner();
            let slot = cache::repeating_slot(key, len as u32, first_owner);
            let second_owner = std::iter::repeat_with(cache::new_owner)
                .find(|&o| cache::repeating_slot(key, len as u32, o) == slot)
                .unwrap_or_default();
            let owners = [first_owner, second_owner];
            let piece: Vec<u8> = unit.iter().copied().cycle().take(len).collect();
            for _ in 0..2 {
                for ((table, byte_ranks), &owner) in tables.iter().zip(&owners) {
                    let mut expected = Vec::new();
                    heap_merge(&piece, table, byte_ranks, |_, _| {}, |r| expected.push(r));
                    let mut got = Vec::new();
                    cache::with_cache(|mut c| {
                        assert!(c.is_some());
                        cache::encode_cached(
                            &mut c, owner, &piece, &piece, table, byte_ranks, &mut got,
                        );
                    });
                    assert_eq!(got, expected, "{unit:?} x {len}");
                }
            }
        }
    }
}
