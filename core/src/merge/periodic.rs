//! Merging a piece that repeats a short unit (` \t`, `\r\n`, `\n    `) a rank at a time.
//!
//! A part of such a piece is named by its phase (where it starts within the unit) and its
//! length, so one vocabulary lookup per distinct part is enough. One pass joins every adjacent
//! pair of the lowest rank, left to right, as the one-join-at-a-time rule does while each join
//! makes only pairs of higher rank, which each pass checks.
//!
//! The parts are kept as a prefix, a block repeated `count` times and a suffix. A pass goes
//! through the copies of the block one by one until two copies start alike (both with their
//! first part free, or both with it joined to the part before); the copies in between then
//! repeat to the last copy, so the pass emits them once as the next block and resumes before
//! the last. A pass costs the length of the prefix, the suffix and a few blocks, not of the
//! piece; a budget hands pieces whose ends keep growing back to the caller.

use std::cell::RefCell;

use super::Lookup;
use crate::Rank;

/// Pieces shorter than this stay with the flat merge, which is as fast on them.
pub(crate) const PERIODIC_MIN_LEN: usize = 16;
/// Units of up to this many bytes.
const MAX_PERIOD: usize = 8;
/// Parts of up to this many bytes are looked up once per piece.
const MEMO: usize = 128;

/// The length of the shortest unit of 2 to [`MAX_PERIOD`] bytes that `piece` repeats (the
/// last repetition may be cut short), if it is at least two units long.
pub(crate) fn period(piece: &[u8]) -> Option<usize> {
    let n = piece.len();
    (2..=MAX_PERIOD.min(n / 2)).find(|&p| piece[p..] == piece[..n - p])
}

/// A part: its phase in the unit and its length in bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Part {
    phase: u32,
    len: u32,
}

/// The parts of a piece: `prefix`, then `block` repeated `count` times, then `suffix`.
/// Every copy of the block starts at the same phase (its length is a multiple of the unit).
#[derive(Default)]
struct Parts {
    prefix: Vec<Part>,
    block: Vec<Part>,
    count: usize,
    suffix: Vec<Part>,
}

impl Parts {
    fn clear(&mut self) {
        self.prefix.clear();
        self.block.clear();
        self.count = 0;
        self.suffix.clear();
    }

    fn len(&self) -> usize {
        self.prefix.len() + self.count * self.block.len() + self.suffix.len()
    }

    /// Where copy `c` of the block starts.
    fn copy_start(&self, c: usize) -> usize {
        self.prefix.len() + c * self.block.len()
    }

    /// The part at position `i` (below [`Parts::len`]).
    #[inline]
    fn at(&self, i: usize) -> Part {
        let blocks = self.count * self.block.len();
        match i.checked_sub(self.prefix.len()) {
            None => self.prefix[i],
            Some(j) if j < blocks => self.block[j % self.block.len()],
            Some(j) => self.suffix[j - blocks],
        }
    }

    /// The positions whose pairs stand for all of them: the prefix, the first two copies
    /// (the second shows the pair across copies), and from the last part of the last copy on.
    fn distinct_positions(&self) -> impl Iterator<Item = usize> {
        let len = self.len();
        let head = self.copy_start(self.count.min(2)).min(len);
        let tail = self.copy_start(self.count).saturating_sub(1).max(head);
        (0..head).chain(tail..len)
    }
}

/// What a thread keeps between pieces: allocating these per piece would cost a short piece
/// more than its merge.
struct Scratch {
    parts: Parts,
    joined: Parts,
    /// Memoised ranks of parts of up to [`MEMO`] bytes at `phase * (MEMO + 1) + len`, as
    /// `piece << 32 | rank`: valid where the high half is the current piece's number.
    memo: Vec<u64>,
    piece: u32,
}

/// Kept buffers grown past this many parts (by a piece whose ends kept growing) are dropped.
const MAX_KEPT_PARTS: usize = 1 << 16;

impl Scratch {
    fn new() -> Self {
        Self {
            parts: Parts::default(),
            joined: Parts::default(),
            memo: vec![0; MAX_PERIOD * (MEMO + 1)],
            piece: 0,
        }
    }

    fn kept_parts(&self) -> usize {
        [&self.parts, &self.joined]
            .iter()
            .map(|p| p.prefix.capacity() + p.block.capacity() + p.suffix.capacity())
            .sum()
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::new());
}

/// The rank of a part (`Rank::MAX` if it is no token), memoised.
struct PartRanks<'a, L: Lookup> {
    piece: &'a [u8],
    lookup: &'a L,
    byte_ranks: &'a [Rank; 256],
    memo: &'a mut [u64],
    stamp: u64,
}

impl<L: Lookup> PartRanks<'_, L> {
    /// The bytes of a part at `phase` are those at the same phase in the first unit, since
    /// every later unit repeats them.
    #[inline(always)]
    fn of(&mut self, part: Part) -> Rank {
        let (phase, len) = (part.phase as usize, part.len as usize);
        if len <= MEMO {
            if let Some(&known) = self.memo.get(phase * (MEMO + 1) + len) {
                if known >> 32 == self.stamp {
                    return known as Rank;
                }
            }
        }
        self.look(phase, len)
    }

    #[inline(never)]
    fn look(&mut self, phase: usize, len: usize) -> Rank {
        let rank = match self.piece.get(phase..phase + len) {
            Some(&[byte]) => self.byte_ranks[usize::from(byte)],
            Some(bytes) => self.lookup.rank(bytes).unwrap_or(Rank::MAX),
            None => Rank::MAX,
        };
        if len <= MEMO {
            if let Some(slot) = self.memo.get_mut(phase * (MEMO + 1) + len) {
                *slot = self.stamp << 32 | u64::from(rank);
            }
        }
        rank
    }

    /// The rank of `left` and `right` joined.
    #[inline(always)]
    fn joined(&mut self, left: Part, right: Part) -> Rank {
        self.of(Part {
            phase: left.phase,
            len: left.len + right.len,
        })
    }

    /// The rank of the pair at position `i` of `parts`.
    #[inline(always)]
    fn pair_at(&mut self, parts: &Parts, i: usize) -> Rank {
        if i + 1 < parts.len() {
            self.joined(parts.at(i), parts.at(i + 1))
        } else {
            Rank::MAX
        }
    }
}

/// Append the ids of `piece`, which repeats a unit of `period` bytes (see [`period`]), and
/// return true, or return false having appended nothing.
pub(crate) fn merge_periodic<L: Lookup>(
    piece: &[u8],
    period: usize,
    lookup: &L,
    byte_ranks: &[Rank; 256],
    out: &mut Vec<Rank>,
) -> bool {
    if u32::try_from(piece.len()).is_err() || !(2..=MAX_PERIOD).contains(&period) {
        return false;
    }
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => {
            let done = merge_in(piece, period, lookup, byte_ranks, &mut scratch, out);
            if scratch.kept_parts() > MAX_KEPT_PARTS {
                *scratch = Scratch::new();
            }
            done
        }
        // In use further up this thread's stack (not possible today, but never a panic).
        Err(_) => merge_in(piece, period, lookup, byte_ranks, &mut Scratch::new(), out),
    })
}

fn merge_in<L: Lookup>(
    piece: &[u8],
    period: usize,
    lookup: &L,
    byte_ranks: &[Rank; 256],
    scratch: &mut Scratch,
    out: &mut Vec<Rank>,
) -> bool {
    let n = piece.len();
    scratch.piece = scratch.piece.wrapping_add(1);
    if scratch.piece == 0 {
        scratch.memo.fill(0);
        scratch.piece = 1;
    }
    let Scratch {
        parts,
        joined,
        memo,
        piece: stamp,
    } = scratch;
    let mut ranks = PartRanks {
        piece,
        lookup,
        byte_ranks,
        memo,
        stamp: u64::from(*stamp),
    };
    parts.clear();
    let single = |phase| Part { phase, len: 1 };
    parts.block.extend((0..period as u32).map(single));
    parts.count = n / period;
    parts.suffix.extend((0..(n % period) as u32).map(single));
    // A pass over a periodic piece looks at a few blocks and whatever the ends have grown to;
    // ends that keep growing mean this is not the kind of piece it is for.
    let mut budget = 2 * period * n + 64;
    loop {
        let work = parts.prefix.len() + 3 * parts.block.len() + parts.suffix.len();
        if work > budget {
            return false;
        }
        budget -= work;
        let best = parts
            .distinct_positions()
            .map(|i| ranks.pair_at(parts, i))
            .min()
            .unwrap_or(Rank::MAX);
        if best == Rank::MAX {
            emit(parts, &mut ranks, out);
            return true;
        }
        if !pass(parts, best, &mut ranks, joined) {
            return false;
        }
        std::mem::swap(parts, joined);
    }
}

/// Append the ids of every part.
fn emit<L: Lookup>(parts: &Parts, ranks: &mut PartRanks<'_, L>, out: &mut Vec<Rank>) {
    out.reserve(parts.len());
    out.extend(parts.prefix.iter().map(|&p| ranks.of(p)));
    if parts.count > 0 {
        let start = out.len();
        out.extend(parts.block.iter().map(|&p| ranks.of(p)));
        for _ in 1..parts.count {
            out.extend_from_within(start..start + parts.block.len());
        }
    }
    out.extend(parts.suffix.iter().map(|&p| ranks.of(p)));
}

/// Join every pair of rank `best` in `parts` into `joined`, leftmost first; false if a join
/// makes a pair of lower rank (which the one-join-at-a-time rule would take next). Equal is
/// impossible: that pair's token is the joined part itself, shorter than the pair.
fn pass<L: Lookup>(
    parts: &Parts,
    best: Rank,
    ranks: &mut PartRanks<'_, L>,
    joined: &mut Parts,
) -> bool {
    joined.clear();
    let len = parts.len();
    let block_len = parts.block.len();
    // Output goes to the prefix until the repeating copies are found, then to the suffix.
    let mut repeated = false;
    let mut last: Option<Part> = None;
    // For the copies started so far (at most three: by the third two start alike): whether
    // each started with its first part joined to the part before, and how much of the prefix
    // had been emitted then.
    let mut starts = [(false, 0usize); 3];
    let mut started = 0;
    let mut i = 0;
    while i < len {
        // Only copies followed by another copy are alike; the last one meets the suffix.
        if !repeated && block_len > 0 && started + 1 < parts.count && i >= parts.copy_start(started)
        {
            let copy = started;
            let taken = i > parts.copy_start(copy);
            starts[copy] = (taken, joined.prefix.len());
            started += 1;
            let first = [1, 2]
                .into_iter()
                .find(|&q| copy >= q && starts[copy - q].0 == taken)
                .map(|q| (copy - q, q));
            if let Some((first, copies)) = first {
                // Copies `first..copy` come out as one block; it repeats for as long as whole
                // runs of `copies` copies fit before the last copy.
                let runs = (parts.count - 1 - copy) / copies;
                joined.block.extend(joined.prefix.drain(starts[first].1..));
                joined.count = 1 + runs;
                i += runs * copies * block_len;
                repeated = true;
            }
            continue;
        }
        let left = parts.at(i);
        if ranks.pair_at(parts, i) != best {
            push(joined, repeated, left);
            last = Some(left);
            i += 1;
            continue;
        }
        let part = Part {
            phase: left.phase,
            len: left.len + parts.at(i + 1).len,
        };
        // The pairs this join makes: with the part before it (final for this pass) and with
        // the part after it as it is now (it may join its own right neighbour next).
        if last.is_some_and(|before| ranks.joined(before, part) < best)
            || (i + 2 < len && ranks.joined(part, parts.at(i + 2)) < best)
        {
            return false;
        }
        push(joined, repeated, part);
        last = Some(part);
        i += 2;
    }
    true
}

#[inline]
fn push(parts: &mut Parts, repeated: bool, part: Part) {
    if repeated {
        parts.suffix.push(part);
    } else {
        parts.prefix.push(part);
    }
}
