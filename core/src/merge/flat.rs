//! The flat merge: candidate pairs in a small array, the lowest found by a vector minimum at
//! every step. For the pieces of real text (up to a few hundred bytes).

use super::heap::heap_merge;
use super::premerge::lead;
use super::{Lookup, pair_rank};
use crate::Rank;

/// Pieces up to this many bytes use the flat-array merge; longer ones the heap, then, once they
/// add up to [`BUILD_BACKTRACKER_AFTER`] bytes, the linear-time backtracker. The flat merge is
/// quadratic, but in vector steps of eight keys: up to here it beats the backtracker on the
/// pieces it takes over, the space-less sentences of Chinese and Japanese text.
pub(crate) const FLAT_MERGE_MAX_LEN: usize = 512;
/// Pieces up to this many bytes (nearly all) merge in arrays of this size: clearing arrays
/// for 512 bytes would cost a short piece more than its merge.
pub(crate) const FLAT_MERGE_SHORT_LEN: usize = 64;

/// How a flat merge finds the next pair: one key per byte position, `rank << pos_bits | pos`
/// for the pair that starts at the part beginning at `pos`, or `NO_PAIR`, where `pos_bits`
/// is `log2` of the array size. The lowest key is the lowest-ranked pair and, among equal ranks,
/// the leftmost, which is the merge rule itself; and a minimum over an array of `i32` compiles
/// to branch-free SSE2 (`pcmpgtd`, no unsigned compare needed).
const NO_PAIR: i32 = i32::MAX;
/// Keys are scanned in blocks of this many (two vector registers, no scalar tail).
const LANES: usize = 8;
const _: () = assert!(
    FLAT_MERGE_SHORT_LEN.is_power_of_two()
        && FLAT_MERGE_MAX_LEN.is_power_of_two()
        && FLAT_MERGE_SHORT_LEN % LANES == 0
        && FLAT_MERGE_MAX_LEN <= u16::MAX as usize
);

/// Ranks from this one up do not fit a key of a flat merge with arrays of `size`; such
/// vocabularies (millions of tokens, none real) take the heap merge.
pub(crate) const fn key_rank_limit(size: usize) -> Rank {
    (NO_PAIR >> size.trailing_zeros()) as Rank
}

#[inline(always)]
fn pair_key<const SIZE: usize>(rank: Rank, pos: usize) -> i32 {
    if rank < key_rank_limit(SIZE) {
        (rank << SIZE.trailing_zeros() | pos as Rank) as i32
    } else {
        NO_PAIR
    }
}

/// The lowest of `keys` (whose length is a multiple of [`LANES`]).
#[inline(always)]
fn lowest_key(keys: &[i32]) -> i32 {
    let mut lowest = [NO_PAIR; LANES];
    for block in keys.chunks_exact(LANES) {
        for (low, &key) in lowest.iter_mut().zip(block) {
            *low = (*low).min(key);
        }
    }
    let [a, b] = [0, 4].map(|h| {
        lowest[h]
            .min(lowest[h + 2])
            .min(lowest[h + 1].min(lowest[h + 3]))
    });
    a.min(b)
}

/// Merge a piece of at most [`FLAT_MERGE_MAX_LEN`] bytes by scanning all candidate pairs for
/// the lowest one at every merge: `O(n^2)`, but the scan is a branch-free vector minimum and
/// parts are joined by relinking, not by moving the array, so for the pieces of real text it
/// beats the heap. Longer pieces (and vocabularies whose ranks do not fit a key) go to
/// [`heap_merge`].
///
/// Calls `on_join(left, right)` with the ranks of the two parts of each merge, in order, and
/// `emit(rank)` for each final part, left to right.
pub(crate) fn flat_merge<L: Lookup>(
    piece: &[u8],
    ranks: &L,
    byte_ranks: &[Rank; 256],
    on_join: impl FnMut(Rank, Rank),
    emit: impl FnMut(Rank),
) {
    if piece.len() <= FLAT_MERGE_SHORT_LEN {
        flat_merge_in::<L, FLAT_MERGE_SHORT_LEN>(piece, ranks, byte_ranks, on_join, emit);
    } else {
        flat_merge_in::<L, FLAT_MERGE_MAX_LEN>(piece, ranks, byte_ranks, on_join, emit);
    }
}

/// [`flat_merge`] with arrays of `SIZE` entries (a power of two).
fn flat_merge_in<L: Lookup, const SIZE: usize>(
    piece: &[u8],
    ranks: &L,
    byte_ranks: &[Rank; 256],
    mut on_join: impl FnMut(Rank, Rank),
    mut emit: impl FnMut(Rank),
) {
    let n = piece.len();
    if n > SIZE || ranks.rank_bound() > key_rank_limit(SIZE) {
        heap_merge(piece, ranks, byte_ranks, on_join, emit);
        return;
    }
    let pos_bits = SIZE.trailing_zeros();
    if n == 0 {
        return;
    }
    // Parts are named by their first byte: `rank[p]` is the token part `p` is, `next[p]` where
    // the next part starts (`n` after the last), `prev[p]` where the previous one starts.
    let mut rank = [0; SIZE];
    let mut next = [0u16; SIZE];
    let mut prev = [0u16; SIZE];
    let mut keys = [NO_PAIR; SIZE];
    // The parts to start from: single bytes, and the pairs `PreMerge` allows already joined.
    let premerge = ranks.premerge();
    let mut p = 0;
    let mut before = 0;
    while p < n {
        let joined = premerge.and_then(|pm| pm.at(piece, p));
        let width = match joined {
            Some(r) => {
                on_join(
                    byte_ranks[usize::from(piece[p])],
                    byte_ranks[usize::from(piece[p + 1])],
                );
                rank[p] = r;
                2
            }
            None => {
                rank[p] = byte_ranks[usize::from(piece[p])];
                1
            }
        };
        // The second round (see `PreMerge`): a part that completes a three-byte letter with the
        // part before it joins it now. Its neighbours' bytes are known, so this needs no
        // second pass.
        if p > 0 && lead(piece[before]) && p - before + width == 3 {
            if let Some(r) = premerge.and_then(|pm| pm.letter(piece, before, p)) {
                #[cfg(test)]
                super::tests::LETTERS_JOINED.with(|n| n.set(n.get() + 1));
                on_join(rank[before], rank[p]);
                rank[before] = r;
                next[before] = (p + width) as u16;
                p += width;
                continue;
            }
        }
        next[p] = (p + width) as u16;
        prev[p] = before as u16;
        before = p;
        p += width;
    }
    // The first minimum is kept while the keys are written (not read back: see below).
    let mut best = NO_PAIR;
    let mut p = 0;
    while p < n {
        let q = usize::from(next[p]);
        if q >= n {
            break;
        }
        keys[p] = pair_key::<SIZE>(pair_rank(piece, p, usize::from(next[q]), ranks), p);
        best = best.min(keys[p]);
        p = q;
    }
    // A merge's lookups form a chain (each pair to look up depends on the merges before it),
    // and on fresh text each link waits for memory. The first merges look up runs of three
    // and four parts: start loading all of those now. Only for pieces of up to 16 bytes: long
    // pieces of many short parts find their tables in cache, and the loads only cost them.
    if SIZE == FLAT_MERGE_SHORT_LEN && n <= 16 {
        let mut first = 0;
        while first < n {
            let second = usize::from(next[first]);
            let third = match next.get(second) {
                Some(&third) if second < n && usize::from(third) < n => usize::from(third),
                _ => break,
            };
            let fourth = usize::from(next[third]);
            ranks.prefetch(&piece[first..fourth]);
            if fourth < n {
                ranks.prefetch(&piece[first..usize::from(next[fourth])]);
            }
            first = second;
        }
    }
    // Every part, the last one included (its key stays `NO_PAIR`).
    let scanned = &mut keys[..n.div_ceil(LANES) * LANES];
    // With the large arrays, the lowest key of each block of `LANES` keys is kept, so that a
    // merge rescans the (at most three) blocks it changed and then the block minima, not every
    // key: a piece of hundreds of bytes that merges hundreds of times (a run of one letter)
    // would otherwise rescan hundreds of keys per merge.
    let two_level = SIZE > FLAT_MERGE_SHORT_LEN;
    let mut block_min = [NO_PAIR; FLAT_MERGE_MAX_LEN / LANES];
    let used_blocks = (scanned.len() / LANES).div_ceil(LANES) * LANES;
    if two_level {
        for (low, block) in block_min.iter_mut().zip(scanned.chunks_exact(LANES)) {
            *low = lowest_key(block);
        }
    }
    while best != NO_PAIR {
        // Join part `left` with the next one; the joined part *is* the token of the key's rank.
        // Then the two pairs that changed: the joined part with the one after it, and the
        // part before it with the joined part.
        let left = (best & ((1 << pos_bits) - 1)) as usize;
        let right = usize::from(next[left]);
        let after = next.get(right).map_or(n, |&a| usize::from(a));
        let before = usize::from(prev[left]);
        on_join(rank[left], rank[right]);
        rank[left] = (best >> pos_bits) as Rank;
        // The three changed keys are cleared now and, for the one-level scan, set only after
        // it, which takes their new values from registers: a vector load right after a
        // narrower store to the same bytes would wait for the store to reach the cache. (The
        // two-level scan reloads just three blocks, and waits.)
        scanned[right] = NO_PAIR;
        scanned[left] = NO_PAIR;
        scanned[before] = NO_PAIR;
        let joined = if after < n {
            next[left] = after as u16;
            prev[after] = left as u16;
            pair_key::<SIZE>(
                pair_rank(piece, left, usize::from(next[after]), ranks),
                left,
            )
        } else {
            next[left] = n as u16;
            NO_PAIR
        };
        let preceding = if left > 0 {
            pair_key::<SIZE>(pair_rank(piece, before, after, ranks), before)
        } else {
            NO_PAIR
        };
        if !two_level {
            best = lowest_key(scanned).min(joined).min(preceding);
        }
        scanned[left] = joined;
        if left > 0 {
            scanned[before] = preceding;
        }
        if two_level {
            for changed in [before, left, right] {
                let b = changed / LANES;
                block_min[b] = lowest_key(&scanned[b * LANES..(b + 1) * LANES]);
            }
            best = lowest_key(&block_min[..used_blocks]);
        }
    }
    let mut p = 0;
    while p < n {
        emit(rank[p]);
        p = usize::from(next[p]);
    }
}
