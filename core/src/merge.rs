//! Rank-greedy merging of one pre-tokenized piece.
//!
//! The rule (tiktoken's and GPT-2's): start from single bytes; repeatedly find the adjacent pair
//! whose concatenation has the lowest rank in the vocabulary (the leftmost on ties) and join it;
//! stop when no adjacent pair is a token. The result is the id of each remaining part.
//!
//! Short pieces use a flat array scanned once per merge (fast for the usual 2-20 bytes). Long
//! pieces switch to a min-heap over a linked list of parts, which keeps the cost `O(n log n)`:
//! a megabyte of one repeated letter must not take quadratic time.

use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::Rank;

/// Token bytes to rank. `Vec<u8>: Borrow<[u8]>`, so it is queried with byte slices.
pub type RankMap = FxHashMap<Vec<u8>, Rank>;

/// Pieces up to this many bytes use the flat-array merge; longer ones use the heap.
const FLAT_MERGE_MAX_LEN: usize = 128;

/// Append the ids of `piece` to `out`. Every single byte must be a token (checked when the
/// vocabulary is built), which is why `byte_ranks` is a plain array.
#[inline]
pub fn encode_piece(piece: &[u8], ranks: &RankMap, byte_ranks: &[Rank; 256], out: &mut Vec<Rank>) {
    match piece.len() {
        0 => {}
        1 => out.push(byte_ranks[usize::from(piece[0])]),
        _ => {
            if let Some(&rank) = ranks.get(piece) {
                out.push(rank);
            } else if piece.len() <= FLAT_MERGE_MAX_LEN {
                flat_merge(piece, ranks, |start, end| {
                    out.push(part_rank(piece, start, end, ranks, byte_ranks))
                });
            } else {
                heap_merge(piece, ranks, |start, end| {
                    out.push(part_rank(piece, start, end, ranks, byte_ranks))
                });
            }
        }
    }
}

/// The number of ids `encode_piece` would append, without building them.
#[inline]
pub fn count_piece(piece: &[u8], ranks: &RankMap) -> usize {
    match piece.len() {
        0 => 0,
        1 => 1,
        _ => {
            if ranks.contains_key(piece) {
                1
            } else {
                let mut n = 0;
                if piece.len() <= FLAT_MERGE_MAX_LEN {
                    flat_merge(piece, ranks, |_, _| n += 1);
                } else {
                    heap_merge(piece, ranks, |_, _| n += 1);
                }
                n
            }
        }
    }
}

#[inline]
fn part_rank(
    piece: &[u8],
    start: usize,
    end: usize,
    ranks: &RankMap,
    byte_ranks: &[Rank; 256],
) -> Rank {
    if end - start == 1 {
        byte_ranks[usize::from(piece[start])]
    } else {
        // A part longer than one byte only exists because its bytes were found in `ranks`.
        ranks.get(&piece[start..end]).copied().unwrap_or(Rank::MAX)
    }
}

#[inline]
fn pair_rank(piece: &[u8], start: usize, end: usize, ranks: &RankMap) -> Rank {
    ranks.get(&piece[start..end]).copied().unwrap_or(Rank::MAX)
}

/// Merge with a flat array of part starts: `O(n^2)` but with tiny constants for short pieces.
/// Calls `emit(start, end)` for each final part, left to right.
fn flat_merge(piece: &[u8], ranks: &RankMap, mut emit: impl FnMut(usize, usize)) {
    // parts[i] = (start of part i, rank of part i joined with part i+1). The last entry is a
    // sentinel holding the end of the piece.
    let n = piece.len();
    let mut parts: Vec<(usize, Rank)> = Vec::with_capacity(n + 1);
    for i in 0..n - 1 {
        parts.push((i, pair_rank(piece, i, i + 2, ranks)));
    }
    parts.push((n - 1, Rank::MAX));
    parts.push((n, Rank::MAX));

    loop {
        // The lowest-ranked pair, leftmost on ties.
        let mut best = Rank::MAX;
        let mut at = 0;
        for (i, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
            if rank < best {
                best = rank;
                at = i;
            }
        }
        if best == Rank::MAX {
            break;
        }
        // Join part `at` with part `at + 1`, then refresh the two pair ranks that changed.
        parts.remove(at + 1);
        parts[at].1 = if at + 2 < parts.len() {
            pair_rank(piece, parts[at].0, parts[at + 2].0, ranks)
        } else {
            Rank::MAX
        };
        if at > 0 {
            parts[at - 1].1 = pair_rank(piece, parts[at - 1].0, parts[at + 1].0, ranks);
        }
    }
    for w in parts.windows(2) {
        emit(w[0].0, w[1].0);
    }
}

/// Merge with a min-heap of candidate pairs over a doubly linked list of parts: `O(n log n)`.
/// Stale heap entries are skipped when popped (lazy deletion).
fn heap_merge(piece: &[u8], ranks: &RankMap, mut emit: impl FnMut(usize, usize)) {
    let n = piece.len();
    const NONE: usize = usize::MAX;
    // Parts are named by their start byte; `next[s]` is the start of the following part (n at the
    // end), `prev[s]` the start of the preceding one, `alive[s]` whether s still starts a part.
    let mut next: Vec<usize> = (1..=n).collect();
    let mut prev: Vec<usize> = (0..n).map(|i| if i == 0 { NONE } else { i - 1 }).collect();
    let mut alive = vec![true; n];
    // The rank of the pair starting at each part, to recognise stale heap entries.
    let mut pair: Vec<Rank> = (0..n)
        .map(|i| {
            if i + 1 < n {
                pair_rank(piece, i, i + 2, ranks)
            } else {
                Rank::MAX
            }
        })
        .collect();
    let mut heap: BinaryHeap<Reverse<(Rank, usize)>> = pair
        .iter()
        .enumerate()
        .filter(|&(_, &r)| r != Rank::MAX)
        .map(|(i, &r)| Reverse((r, i)))
        .collect();

    while let Some(Reverse((rank, left))) = heap.pop() {
        if !alive[left] || pair[left] != rank {
            continue;
        }
        // Join `left` with the part after it.
        let right = next[left];
        let after = next[right];
        alive[right] = false;
        next[left] = after;
        if after < n {
            prev[after] = left;
            let r = pair_rank(piece, left, next[after], ranks);
            pair[left] = r;
            if r != Rank::MAX {
                heap.push(Reverse((r, left)));
            }
        } else {
            pair[left] = Rank::MAX;
        }
        let before = prev[left];
        if before != NONE {
            let r = pair_rank(piece, before, after, ranks);
            pair[before] = r;
            if r != Rank::MAX {
                heap.push(Reverse((r, before)));
            }
        }
    }

    let mut s = 0;
    while s < n {
        emit(s, next[s]);
        s = next[s];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let (ranks, byte_ranks) =
            vocab(&[b"ab", b"bc", b"abc", b"aa", b"aaaa", b"ca", b"cab", b"aaa"]);
        let mut seed: u64 = 7;
        for len in 1..300 {
            let piece: Vec<u8> = (0..len)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    b"abc"[(seed >> 33) as usize % 3]
                })
                .collect();
            let mut via_flat = Vec::new();
            flat_merge(&piece, &ranks, |s, e| {
                via_flat.push(part_rank(&piece, s, e, &ranks, &byte_ranks))
            });
            let mut via_heap = Vec::new();
            heap_merge(&piece, &ranks, |s, e| {
                via_heap.push(part_rank(&piece, s, e, &ranks, &byte_ranks))
            });
            let expected = naive(&piece, &ranks);
            assert_eq!(via_flat, expected, "flat {piece:?}");
            assert_eq!(via_heap, expected, "heap {piece:?}");
            assert_eq!(count_piece(&piece, &ranks), expected.len());
        }
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

    #[test]
    fn long_run_is_not_quadratic() {
        let (ranks, byte_ranks) = vocab(&[b"aa", b"aaaa", b"aaaaaaaa"]);
        let piece = vec![b'a'; 1_000_000];
        let mut out = Vec::new();
        encode_piece(&piece, &ranks, &byte_ranks, &mut out);
        assert_eq!(out.len(), 125_000);
        assert!(out.iter().all(|&r| r == 258));
    }
}
