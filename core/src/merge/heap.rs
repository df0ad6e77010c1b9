//! The heap merge: `O(n log n)` for any piece, the fallback for long ones.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Lookup, pair_rank};
use crate::Rank;

/// Merge with a min-heap of candidate pairs over a doubly linked list of parts: `O(n log n)`.
/// `on_join` and `emit` as for the flat merge.
/// Stale heap entries are skipped when popped (lazy deletion). Heap entries are single `u64`
/// keys, `rank << 32 | start`, so ties go to the leftmost pair as in the flat merge.
pub(crate) fn heap_merge<L: Lookup>(
    piece: &[u8],
    ranks: &L,
    byte_ranks: &[Rank; 256],
    mut on_join: impl FnMut(Rank, Rank),
    mut emit: impl FnMut(Rank),
) {
    let n = piece.len();
    const NONE: u32 = u32::MAX;
    // Parts are named by their start byte; `next[s]` is the start of the following part (n at the
    // end), `prev[s]` the start of the preceding one; a dead part has `rank == Rank::MAX`.
    let mut next: Vec<u32> = (1..=n as u32).collect();
    let mut prev: Vec<u32> = (0..n as u32)
        .map(|i| if i == 0 { NONE } else { i - 1 })
        .collect();
    let mut part: Vec<Rank> = piece.iter().map(|&b| byte_ranks[usize::from(b)]).collect();
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
    let mut heap: BinaryHeap<Reverse<u64>> = pair
        .iter()
        .enumerate()
        .filter(|&(_, &r)| r != Rank::MAX)
        .map(|(i, &r)| Reverse(u64::from(r) << 32 | i as u64))
        .collect();

    while let Some(Reverse(key)) = heap.pop() {
        let rank = (key >> 32) as Rank;
        let left = (key & 0xFFFF_FFFF) as usize;
        if part[left] == Rank::MAX || pair[left] != rank {
            continue;
        }
        // Join `left` with the part after it: the result is the token of rank `rank`.
        let right = next[left] as usize;
        let after = next[right] as usize;
        on_join(part[left], part[right]);
        part[right] = Rank::MAX;
        part[left] = rank;
        next[left] = after as u32;
        if after < n {
            prev[after] = left as u32;
            let r = pair_rank(piece, left, next[after] as usize, ranks);
            pair[left] = r;
            if r != Rank::MAX {
                heap.push(Reverse(u64::from(r) << 32 | left as u64));
            }
        } else {
            pair[left] = Rank::MAX;
        }
        let before = prev[left];
        if before != NONE {
            let before = before as usize;
            let r = pair_rank(piece, before, after, ranks);
            pair[before] = r;
            if r != Rank::MAX {
                heap.push(Reverse(u64::from(r) << 32 | before as u64));
            }
        }
    }

    let mut s = 0;
    while s < n {
        emit(part[s]);
        s = next[s] as usize;
    }
}
