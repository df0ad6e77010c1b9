//! Merging a piece of one repeated byte (runs of spaces, tabs, newlines, `=`), or one such run
//! with a byte or two before and after it (` aaaa…`, ` =====`, `-----\n`), a rank at a time
//! over its run-length form, instead of one join at a time.
//!
//! Every part of such a piece is named by its length, the prefix position it starts at (or
//! that it starts in the run) and the suffix bytes after it (or that it ends in the run), which
//! fix its bytes, so the piece is a few runs of equal parts. One pass joins every adjacent pair
//! of the lowest rank, left to right, as the one-join-at-a-time rule does while each join makes
//! only pairs of higher rank, which each pass checks; where a vocabulary breaks that, or the
//! runs stop being few, the caller merges the usual way.

use super::Lookup;
use crate::Rank;

/// Pieces shorter than this stay with the flat merge, which is as fast on them.
pub(crate) const UNIFORM_MIN_LEN: usize = 16;
/// More runs than this and the piece is not the regular kind this pass is for.
const MAX_RUNS: usize = 32;
/// Lengths up to this are looked up once per piece.
const MEMO: usize = 128;
const UNKNOWN: Rank = Rank::MAX - 1;
/// Parts longer than this do not fit a part's name.
const MAX_LEN: usize = 1 << 27;

/// A part's name: `first | last << 2 | len << 4`, where `first` is the prefix position it
/// starts at (the prefix's length if it starts in the run), `last` how many suffix bytes
/// follow it (the suffix's length if it ends in the run) and `len` its length in bytes. Two
/// parts of one piece with one name are the same bytes.
type Part = u32;

#[inline(always)]
fn part_len(part: Part) -> usize {
    (part >> 4) as usize
}

/// The part that `left` then `right` (adjacent) make.
#[inline(always)]
fn cat(left: Part, right: Part) -> Part {
    (left & 0b11) | (right & 0b1100) | ((left >> 4) + (right >> 4)) << 4
}

/// Runs of `count` parts named `part`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Run {
    part: Part,
    count: u32,
}

/// The rank of each part (`Rank::MAX` if it is no token), the run's from a memo.
struct Ranks<'a, L: Lookup> {
    piece: &'a [u8],
    lookup: &'a L,
    byte_ranks: &'a [Rank; 256],
    /// Where the run starts and how many bytes follow it.
    start: usize,
    suffix: usize,
    /// The name of a part inside the run, less its length.
    inside: Part,
    memo: [Rank; MEMO + 1],
    /// The other parts' ranks, `part << 32 | rank` by a hash of the part (`EMPTY_SLOT`: free):
    /// each pass asks for the prefix's and the suffix's parts again.
    affixed: [u64; AFFIXED_SLOTS],
}

const AFFIXED_SLOTS: usize = 32;
const EMPTY_SLOT: u64 = u64::MAX;

impl<L: Lookup> Ranks<'_, L> {
    #[inline]
    fn of(&mut self, part: Part) -> Rank {
        let len = part_len(part);
        let n = self.piece.len();
        if len > n {
            return Rank::MAX;
        }
        let in_run = part & 0b1111 == self.inside;
        if in_run && len <= MEMO && self.memo[len] != UNKNOWN {
            return self.memo[len];
        }
        let slot = (u64::from(part).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 59) as usize;
        if !in_run {
            let held = self.affixed[slot];
            if held != EMPTY_SLOT && (held >> 32) as Part == part {
                return held as Rank;
            }
        }
        let first = (part & 0b11) as usize;
        let last = (part >> 2 & 0b11) as usize;
        let begin = if first < self.start {
            first
        } else if last < self.suffix {
            match (n - last).checked_sub(len) {
                Some(begin) => begin,
                None => return Rank::MAX,
            }
        } else {
            self.start
        };
        let Some(bytes) = self.piece.get(begin..begin + len) else {
            return Rank::MAX;
        };
        let rank = match bytes {
            [b] => self.byte_ranks[usize::from(*b)],
            _ => self.lookup.rank(bytes).unwrap_or(Rank::MAX),
        };
        if in_run && len <= MEMO {
            self.memo[len] = rank;
        } else if !in_run {
            self.affixed[slot] = u64::from(part) << 32 | u64::from(rank);
        }
        rank
    }
}

/// A pass's output can hold this many runs (more and the pass declines): on the stack, as a
/// piece of twenty bytes takes several passes, each of which would allocate.
const CAPACITY: usize = 2 * MAX_RUNS;

/// A piece's runs, in order.
#[derive(Clone, Copy)]
struct Runs {
    items: [Run; CAPACITY],
    len: usize,
}

impl Runs {
    fn new() -> Self {
        Runs {
            items: [Run { part: 0, count: 0 }; CAPACITY],
            len: 0,
        }
    }

    fn as_slice(&self) -> &[Run] {
        &self.items[..self.len]
    }

    /// Append `count` parts named `part`, folded into the last run if it has that name; false
    /// if there is no room.
    fn push(&mut self, part: Part, count: u32) -> bool {
        if count == 0 {
            return true;
        }
        match self.len.checked_sub(1).map(|i| &mut self.items[i]) {
            Some(last) if last.part == part => last.count += count,
            _ if self.len == CAPACITY => return false,
            _ => {
                self.items[self.len] = Run { part, count };
                self.len += 1;
            }
        }
        true
    }

    fn last_part(&self) -> Option<Part> {
        self.as_slice().last().map(|r| r.part)
    }
}

/// At most this many other bytes before and after the run of an affixed piece.
const MAX_AFFIX: usize = 2;

/// Where the run of `piece` is (`start..end`), if it is one run of at least
/// [`UNIFORM_MIN_LEN`] bytes with one or two other bytes before or after it.
pub(crate) fn affixed_run(piece: &[u8]) -> Option<(usize, usize)> {
    let n = piece.len();
    if n <= UNIFORM_MIN_LEN || n > MAX_LEN {
        return None;
    }
    // The byte at MAX_AFFIX is in any run that qualifies.
    let byte = piece[MAX_AFFIX];
    let start = piece[..MAX_AFFIX]
        .iter()
        .rposition(|&b| b != byte)
        .map_or(0, |i| i + 1);
    let end = piece[n - MAX_AFFIX..]
        .iter()
        .position(|&b| b != byte)
        .map_or(n, |i| n - MAX_AFFIX + i);
    let run = end >= start + UNIFORM_MIN_LEN && piece[start..end].iter().all(|&b| b == byte);
    (run && (start, end) != (0, n)).then_some((start, end))
}

/// Append the ids of `piece` (every byte the same, at least two) and return true, or return
/// false having appended nothing.
pub(crate) fn merge_uniform<L: Lookup>(
    piece: &[u8],
    lookup: &L,
    byte_ranks: &[Rank; 256],
    out: &mut Vec<Rank>,
) -> bool {
    merge_affixed(piece, (0, piece.len()), lookup, byte_ranks, out)
}

/// Append the ids of `piece`, whose bytes `start..end` are one byte repeated (at most three
/// other bytes on each side, as a part's name has room for), and return true, or return false
/// having appended nothing.
pub(crate) fn merge_affixed<L: Lookup>(
    piece: &[u8],
    (start, end): (usize, usize),
    lookup: &L,
    byte_ranks: &[Rank; 256],
    out: &mut Vec<Rank>,
) -> bool {
    let n = piece.len();
    if n > MAX_LEN || start > 3 || end > n || n - end > 3 || end < start + 2 {
        return false;
    }
    let suffix = n - end;
    let name = |first: usize, last: usize| (first | last << 2 | 1 << 4) as Part;
    let mut ranks = Ranks {
        piece,
        lookup,
        byte_ranks,
        start,
        suffix,
        inside: (start | suffix << 2) as Part,
        memo: [UNKNOWN; MEMO + 1],
        affixed: [EMPTY_SLOT; AFFIXED_SLOTS],
    };
    let (mut runs, mut next) = (Runs::new(), Runs::new());
    for i in 0..start {
        runs.push(name(i, suffix), 1);
    }
    runs.push(name(start, suffix), (end - start) as u32);
    for j in end..n {
        runs.push(name(start, n - j - 1), 1);
    }
    // Each pass applies one rank, higher than the last; a vocabulary has few ranks of one
    // repeated byte, and this bound keeps the attempt cheap whatever it has.
    for _ in 0..n {
        let mut best = Rank::MAX;
        let parts = runs.as_slice();
        for (i, r) in parts.iter().enumerate() {
            if r.count >= 2 {
                best = best.min(ranks.of(cat(r.part, r.part)));
            }
            if let Some(next) = parts.get(i + 1) {
                best = best.min(ranks.of(cat(r.part, next.part)));
            }
        }
        if best == Rank::MAX {
            for r in parts {
                let id = ranks.of(r.part);
                out.extend(std::iter::repeat_n(id, r.count as usize));
            }
            return true;
        }
        if !pass(parts, best, &mut ranks, &mut next) || next.len > MAX_RUNS {
            return false;
        }
        std::mem::swap(&mut runs, &mut next);
    }
    false
}

/// Join every pair of rank `best`, leftmost first, into `out`; false if a join makes a pair of
/// lower rank (which the one-join-at-a-time rule would take next) or `out` is full.
fn pass<L: Lookup>(runs: &[Run], best: Rank, ranks: &mut Ranks<'_, L>, out: &mut Runs) -> bool {
    out.len = 0;
    // The last part of the previous run, not yet emitted: it may join the next run's first.
    let mut pending: Option<Part> = None;
    // A join of `joined` between the emitted parts and `right` (the next part not yet joined)
    // may not make a pair of a rank below `best` (equal is impossible: that pair's token is
    // `joined` itself, shorter than either pair).
    let lower =
        |ranks: &mut Ranks<'_, L>, left: Option<Part>, joined: Part, right: Option<Part>| {
            left.is_some_and(|l| ranks.of(cat(l, joined)) < best)
                || right.is_some_and(|r| ranks.of(cat(joined, r)) < best)
        };
    for (i, run) in runs.iter().enumerate() {
        let next_first = runs.get(i + 1).map(|r| r.part);
        let mut count = run.count;
        if let Some(p) = pending.take() {
            if ranks.of(cat(p, run.part)) == best {
                let joined = cat(p, run.part);
                let right = if count >= 2 {
                    Some(run.part)
                } else {
                    next_first
                };
                if lower(ranks, out.last_part(), joined, right) {
                    return false;
                }
                if !out.push(joined, 1) {
                    return false;
                }
                count -= 1;
            } else {
                if !out.push(p, 1) {
                    return false;
                }
            }
        }
        if count == 0 {
            continue;
        }
        if count >= 2 && ranks.of(cat(run.part, run.part)) == best {
            let joined = cat(run.part, run.part);
            let pairs = count / 2;
            let leftover = count % 2 == 1;
            // The first join's left, each later join's left (the previous join), and the
            // last join's right; the others have the run's part on their right.
            let right_of_last = if leftover { Some(run.part) } else { next_first };
            if lower(ranks, out.last_part(), joined, None)
                || (pairs >= 2 && lower(ranks, Some(joined), joined, None))
                || (pairs >= 2 && lower(ranks, None, joined, Some(run.part)))
                || lower(ranks, None, joined, right_of_last)
            {
                return false;
            }
            if !out.push(joined, pairs) {
                return false;
            }
            if leftover {
                pending = Some(run.part);
            }
        } else {
            if !out.push(run.part, count - 1) {
                return false;
            }
            pending = Some(run.part);
        }
    }
    if let Some(p) = pending {
        if !out.push(p, 1) {
            return false;
        }
    }
    true
}
