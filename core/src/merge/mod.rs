//! Rank-greedy merging of one pre-tokenized piece.
//!
//! The rule (tiktoken's and GPT-2's): start from single bytes; repeatedly find the adjacent pair
//! whose concatenation has the lowest rank in the vocabulary (the leftmost on ties) and join it;
//! stop when no adjacent pair is a token. The result is the id of each remaining part.
//!
//! Short pieces use a flat array of candidate pairs scanned once per merge (fast for the usual
//! 2-20 bytes). Long pieces switch to a min-heap over a linked list of parts, which keeps the
//! cost `O(n log n)`, or to the linear-time search of `backtrack`: a megabyte of one repeated
//! letter must not take quadratic time.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::Rank;
use crate::vocab::RankMap;
use crate::vocab::table::TokenTable;

pub(crate) mod backtrack;
pub(crate) mod cache;
mod flat;
mod heap;
pub mod pair;
pub(crate) mod periodic;
mod premerge;
#[cfg(test)]
mod tests;
mod uniform;

use backtrack::Backtracker;
pub(crate) use flat::{FLAT_MERGE_MAX_LEN, flat_merge};
pub(crate) use heap::heap_merge;
use periodic::{PERIODIC_MIN_LEN, merge_periodic, period};
pub use premerge::PreMerge;
use uniform::{UNIFORM_MIN_LEN, affixed_run, merge_affixed, merge_uniform};

/// Anything that gives the rank of a byte string (a token of the vocabulary) or `None`.
pub trait Lookup {
    fn rank(&self, bytes: &[u8]) -> Option<Rank>;

    /// Every rank `rank` returns is below this.
    fn rank_bound(&self) -> Rank;

    /// Which adjacent byte pairs a merge may join before it starts (see [`PreMerge`]).
    #[inline]
    fn premerge(&self) -> Option<&PreMerge> {
        None
    }

    /// Start loading what `rank(bytes)` will read; nothing by default.
    #[inline]
    fn prefetch(&self, _bytes: &[u8]) {}

    /// Append the ids of a long `piece` by a linear-time method and return true, or return
    /// false (appending nothing) to have the caller use the heap merge.
    fn merge_long(&self, _piece: &[u8], _out: &mut Vec<Rank>) -> bool {
        false
    }
}

impl Lookup for RankMap {
    #[inline]
    fn rank(&self, bytes: &[u8]) -> Option<Rank> {
        self.get(bytes).copied()
    }

    /// Walks the whole map: for tests and one-off merges, not for the encoder's hot path.
    fn rank_bound(&self) -> Rank {
        self.values().max().map_or(0, |&r| r.saturating_add(1))
    }
}

/// The token table with what the merge strategies build from it: the pairs the pre-merge may
/// join, and the linear-time backtracker for long pieces (built on demand). What a rank
/// encoder merges with.
#[derive(Debug, Clone)]
pub struct MergeTable {
    tokens: TokenTable,
    premerge: PreMerge,
    /// Built once long pieces add up to [`BUILD_BACKTRACKER_AFTER`] bytes, `None` if the
    /// vocabulary does not qualify for the linear-time merge.
    backtracker: OnceLock<Option<Box<Backtracker>>>,
    /// The bytes of the long pieces merged before the backtracker was built.
    long_bytes: LongBytes,
}

/// Long pieces merge with the heap (`O(n log n)`) until they add up to this many bytes, then
/// with the backtracker, which is much faster on long runs but costly to build. Built on the
/// first long piece, the build would go to text with a single long piece; this way the heap
/// merges made before the build cost a fraction of it, and text that never has that much in
/// long pieces never pays for it.
const BUILD_BACKTRACKER_AFTER: usize = 256 << 10;

/// A byte count shared by the threads that use one table.
#[derive(Debug, Default)]
struct LongBytes(AtomicUsize);

impl Clone for LongBytes {
    fn clone(&self) -> Self {
        Self(AtomicUsize::new(self.0.load(Ordering::Relaxed)))
    }
}

impl MergeTable {
    /// Index `ranks`; `byte_ranks` gives the rank of every single byte.
    pub fn new(ranks: &RankMap, byte_ranks: &[Rank; 256]) -> Self {
        let tokens = TokenTable::new(ranks, byte_ranks);
        let premerge = PreMerge::new(ranks, tokens.pair_ranks());
        Self {
            tokens,
            premerge,
            backtracker: OnceLock::new(),
            long_bytes: LongBytes::default(),
        }
    }

    /// The token table itself.
    #[inline(always)]
    pub fn tokens(&self) -> &TokenTable {
        &self.tokens
    }

    /// See [`TokenTable::piece_rank_in`].
    #[inline(always)]
    pub fn piece_rank_in(&self, text: &[u8], piece: &[u8]) -> Option<Rank> {
        self.tokens.piece_rank_in(text, piece)
    }
}

impl Lookup for MergeTable {
    #[inline]
    fn rank(&self, bytes: &[u8]) -> Option<Rank> {
        self.tokens.rank_by_length(bytes)
    }

    #[inline]
    fn rank_bound(&self) -> Rank {
        self.tokens.rank_bound()
    }

    #[inline]
    fn premerge(&self) -> Option<&PreMerge> {
        Some(&self.premerge)
    }

    #[inline(always)]
    fn prefetch(&self, bytes: &[u8]) {
        self.tokens.prefetch(bytes);
    }

    fn merge_long(&self, piece: &[u8], out: &mut Vec<Rank>) -> bool {
        let backtracker = match self.backtracker.get() {
            Some(built) => built,
            None => {
                let before = self.long_bytes.0.fetch_add(piece.len(), Ordering::Relaxed);
                if before.saturating_add(piece.len()) < BUILD_BACKTRACKER_AFTER {
                    return false;
                }
                self.backtracker
                    .get_or_init(|| Backtracker::new(self).map(Box::new))
            }
        };
        backtracker
            .as_ref()
            .is_some_and(|b| b.merge(piece, self, out))
    }
}

/// Append the ids of `piece` to `out`. Every single byte must be a token (checked when the
/// vocabulary is built), which is why `byte_ranks` is a plain array.
#[inline]
pub fn encode_piece<L: Lookup>(
    piece: &[u8],
    ranks: &L,
    byte_ranks: &[Rank; 256],
    out: &mut Vec<Rank>,
) {
    match piece.len() {
        0 => {}
        1 => out.push(byte_ranks[usize::from(piece[0])]),
        _ => {
            if let Some(rank) = ranks.rank(piece) {
                out.push(rank);
            } else {
                merge_piece(piece, ranks, byte_ranks, out);
            }
        }
    }
}

/// Append the ids of `piece` (at least two bytes) that is known not to be a single token.
#[inline]
pub fn merge_piece<L: Lookup>(
    piece: &[u8],
    ranks: &L,
    byte_ranks: &[Rank; 256],
    out: &mut Vec<Rank>,
) {
    // A run of one byte: spaces, tabs or newlines of indentation, rules of `=` or `-`.
    if piece.len() >= UNIFORM_MIN_LEN
        && piece.iter().all(|&b| b == piece[0])
        && merge_uniform(piece, ranks, byte_ranks, out)
    {
        return;
    }
    // A short unit repeated: alternating whitespace (` \t`, `\r\n`), a line of `-=`.
    if piece.len() >= PERIODIC_MIN_LEN
        && period(piece).is_some_and(|p| merge_periodic(piece, p, ranks, byte_ranks, out))
    {
        return;
    }
    // Such a run after a space or before a newline (` aaaa`, ` ====`, `----\n`).
    if piece.len() > UNIFORM_MIN_LEN
        && affixed_run(piece).is_some_and(|run| merge_affixed(piece, run, ranks, byte_ranks, out))
    {
        return;
    }
    if piece.len() <= FLAT_MERGE_MAX_LEN {
        flat_merge(piece, ranks, byte_ranks, |_, _| {}, |rank| out.push(rank));
    } else if !ranks.merge_long(piece, out) {
        heap_merge(piece, ranks, byte_ranks, |_, _| {}, |rank| out.push(rank));
    }
}

/// The number of ids `encode_piece` would append, without building them.
#[inline]
pub fn count_piece<L: Lookup>(piece: &[u8], ranks: &L, byte_ranks: &[Rank; 256]) -> usize {
    match piece.len() {
        0 => 0,
        1 => 1,
        _ => {
            if ranks.rank(piece).is_some() {
                1
            } else {
                let mut ids = Vec::new();
                merge_piece(piece, ranks, byte_ranks, &mut ids);
                ids.len()
            }
        }
    }
}

#[inline]
pub(crate) fn pair_rank<L: Lookup>(piece: &[u8], start: usize, end: usize, ranks: &L) -> Rank {
    ranks.rank(&piece[start..end]).unwrap_or(Rank::MAX)
}
