//! Merging a piece of one repeated byte (runs of spaces, tabs, newlines, `=`) a rank at a time
//! over its run-length form, instead of one join at a time.
//!
//! Every part of such a piece is the byte repeated, named by its length, so the piece is a few
//! runs of equal parts. One pass joins every adjacent pair of the lowest rank, left to right,
//! as the one-join-at-a-time rule does while each join makes only pairs of higher rank, which
//! each pass checks; where a vocabulary breaks that, or the runs stop being few, the caller
//! merges the usual way.

use super::Lookup;
use crate::Rank;

/// Pieces shorter than this stay with the flat merge, which is as fast on them.
pub(crate) const UNIFORM_MIN_LEN: usize = 16;
/// More runs than this and the piece is not the regular kind this pass is for.
const MAX_RUNS: usize = 32;
/// Lengths up to this are looked up once per piece.
const MEMO: usize = 128;
const UNKNOWN: Rank = Rank::MAX - 1;

/// Runs of `count` parts of `len` bytes each.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Run {
    len: u32,
    count: u32,
}

/// The rank of the byte repeated `len` times (`Rank::MAX` if it is no token), from a memo.
struct Ranks<'a, L: Lookup> {
    piece: &'a [u8],
    lookup: &'a L,
    byte_rank: Rank,
    memo: [Rank; MEMO + 1],
}

impl<L: Lookup> Ranks<'_, L> {
    #[inline]
    fn of(&mut self, len: u32) -> Rank {
        let len = len as usize;
        if len == 1 {
            return self.byte_rank;
        }
        if len > self.piece.len() {
            return Rank::MAX;
        }
        let look = |l: &L| l.rank(&self.piece[..len]).unwrap_or(Rank::MAX);
        if len > MEMO {
            return look(self.lookup);
        }
        if self.memo[len] == UNKNOWN {
            self.memo[len] = look(self.lookup);
        }
        self.memo[len]
    }
}

/// The parts of one pass, appended with equal neighbours folded into one run.
struct Output {
    runs: Vec<Run>,
}

impl Output {
    fn push(&mut self, len: u32, count: u32) {
        if count == 0 {
            return;
        }
        match self.runs.last_mut() {
            Some(last) if last.len == len => last.count += count,
            _ => self.runs.push(Run { len, count }),
        }
    }

    fn last_len(&self) -> Option<u32> {
        self.runs.last().map(|r| r.len)
    }
}

/// Append the ids of `piece` (every byte the same, at least two) and return true, or return
/// false having appended nothing.
pub(crate) fn merge_uniform<L: Lookup>(
    piece: &[u8],
    lookup: &L,
    byte_ranks: &[Rank; 256],
    out: &mut Vec<Rank>,
) -> bool {
    let Some(&byte) = piece.first() else {
        return false;
    };
    let mut ranks = Ranks {
        piece,
        lookup,
        byte_rank: byte_ranks[usize::from(byte)],
        memo: [UNKNOWN; MEMO + 1],
    };
    let Ok(n) = u32::try_from(piece.len()) else {
        return false;
    };
    let mut runs = vec![Run { len: 1, count: n }];
    // Each pass applies one rank, higher than the last; a vocabulary has few ranks of one
    // repeated byte, and this bound keeps the attempt cheap whatever it has.
    for _ in 0..piece.len() {
        let mut best = Rank::MAX;
        for (i, r) in runs.iter().enumerate() {
            if r.count >= 2 {
                best = best.min(ranks.of(2 * r.len));
            }
            if let Some(next) = runs.get(i + 1) {
                best = best.min(ranks.of(r.len + next.len));
            }
        }
        if best == Rank::MAX {
            for r in &runs {
                let id = ranks.of(r.len);
                out.extend(std::iter::repeat_n(id, r.count as usize));
            }
            return true;
        }
        match pass(&runs, best, &mut ranks) {
            Some(next) if next.len() <= MAX_RUNS => runs = next,
            _ => return false,
        }
    }
    false
}

/// Join every pair of rank `best`, leftmost first; `None` if a join makes a pair of lower rank
/// (which the one-join-at-a-time rule would take next).
fn pass<L: Lookup>(runs: &[Run], best: Rank, ranks: &mut Ranks<'_, L>) -> Option<Vec<Run>> {
    let mut out = Output {
        runs: Vec::with_capacity(runs.len() + 2),
    };
    // The last part of the previous run, not yet emitted: it may join the next run's first.
    let mut pending: Option<u32> = None;
    // A join of `joined` between the emitted parts and `right` (the next part not yet joined)
    // may not make a pair of a rank below `best` (equal is impossible: that pair's token is
    // `joined` itself, shorter than either pair).
    let lower = |ranks: &mut Ranks<'_, L>, left: Option<u32>, joined: u32, right: Option<u32>| {
        left.is_some_and(|l| ranks.of(l + joined) < best)
            || right.is_some_and(|r| ranks.of(joined + r) < best)
    };
    for (i, run) in runs.iter().enumerate() {
        let next_first = runs.get(i + 1).map(|r| r.len);
        let mut count = run.count;
        if let Some(p) = pending.take() {
            if ranks.of(p + run.len) == best {
                let joined = p + run.len;
                let right = if count >= 2 {
                    Some(run.len)
                } else {
                    next_first
                };
                if lower(ranks, out.last_len(), joined, right) {
                    return None;
                }
                out.push(joined, 1);
                count -= 1;
            } else {
                out.push(p, 1);
            }
        }
        if count == 0 {
            continue;
        }
        if count >= 2 && ranks.of(2 * run.len) == best {
            let joined = 2 * run.len;
            let pairs = count / 2;
            let leftover = count % 2 == 1;
            // The first join's left, each later join's left (the previous join), and the
            // last join's right; the others have the run's part on their right.
            let right_of_last = if leftover { Some(run.len) } else { next_first };
            if lower(ranks, out.last_len(), joined, None)
                || (pairs >= 2 && lower(ranks, Some(joined), joined, None))
                || (pairs >= 2 && lower(ranks, None, joined, Some(run.len)))
                || lower(ranks, None, joined, right_of_last)
            {
                return None;
            }
            out.push(joined, pairs);
            if leftover {
                pending = Some(run.len);
            }
        } else {
            out.push(run.len, count - 1);
            pending = Some(run.len);
        }
    }
    if let Some(p) = pending {
        out.push(p, 1);
    }
    Some(out.runs)
}
