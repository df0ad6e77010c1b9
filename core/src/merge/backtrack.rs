//! Merging long pieces in linear time, by checking token boundaries instead of replaying merges.
//!
//! The heap merge costs `O(n log n)` with a large constant, many times prose's cost per byte on
//! a long run of letters. This module finds the same ids another way, resting on two facts
//! about rank-greedy BPE (proved below; the second is checked for the vocabulary before this path
//! is used). Tokens that their own bytes do not merge into (a few in Llama 3) never form in any
//! text, so they are left out.
//!
//! 1. *Pairs decide.* Call adjacent tokens `a`, `b` compatible when merging the bytes of `a` then
//!    `b` on their own gives `[a, b]`. A segmentation of a text into tokens that merge back to
//!    themselves is the BPE result exactly when every adjacent pair in it is compatible.
//!    Why: in BPE's run on the whole text, look at the first merge that crosses a boundary of
//!    the segmentation, between tokens `a` and `b`. Until then the span of `a` and `b` evolved
//!    as if alone, so merging `a`+`b` alone crosses that boundary too: they are not compatible.
//!    So no merge crosses a boundary, each token's span merges as if alone, into the token.
//!    Conversely, BPE's own result is pairwise compatible (each pair's span evolved alone).
//! 2. *Compatibility is cheap to check* when each token's rank is above the ranks of the two
//!    tokens its last merge joined (its *split*): then merges happen in increasing rank order,
//!    the parts next to the boundary over time are the chains `a, right(a), right(right(a))...`
//!    and `b, left(b), ...`, and walking both chains backwards from the latest-formed part tells
//!    whether the pair across the boundary would ever have been the lowest rank first.
//!
//! The search walks the piece left to right, taking the longest token (from a byte trie) that
//! is compatible with the previous one, and backs up when nothing fits. By fact 1 the tokens on
//! the stack at position `p` are always the BPE result of the first `p` bytes, so a position
//! where nothing fits never fits later: it is marked dead and never tried again. Each position
//! is tried once, with at most one candidate per token length: linear in the piece length.

use std::ops::Range;

use super::{FLAT_MERGE_MAX_LEN, Lookup, MergeTable, flat_merge, heap_merge};
use crate::Rank;
use crate::bytes::packed::pack16;
use crate::vocab::table::INLINE_MAX;

#[cfg(test)]
thread_local! {
    /// The bytes this thread's compatibility checks merged by hand (the costly fallback).
    static FALLBACK_BYTES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// No token (in `split` and the trie), or no limit (in `compatible`).
const NONE: Rank = Rank::MAX;

/// What the boundary search needs besides the token table; built once per vocabulary.
#[derive(Debug, Clone)]
pub(crate) struct Backtracker {
    /// For each rank, the ranks its last merge joined (`[NONE, NONE]` for single bytes).
    split: Vec<[Rank; 2]>,
    /// The byte length of each rank's token (0: no token has that rank, or it never forms).
    len: Vec<u16>,
    /// Whether every token ranks above the two it is made of (fact 2 for the whole vocabulary).
    monotone: bool,
    /// For each rank, whether it and every token of its merge tree (its split, theirs, down to
    /// single bytes) rank above the two they are made of. Fact 2 needs this only of the two
    /// tokens of a pair: only their trees form before a merge crosses the boundary. A pair with
    /// one token outside it is checked by merging the pair's bytes, which costs more.
    grows: Vec<bool>,
    trie: PrefixTrie,
    /// One bit per hash of each 3..=15-byte token: most byte strings the boundary check asks
    /// about are no token, and this answers that from L2 instead of a miss in the token table.
    maybe_token: TokenFilter,
}

/// A one-hash Bloom filter over packed tokens.
#[derive(Debug, Clone)]
struct TokenFilter {
    bits: Vec<u64>,
    shift: u32,
}

impl TokenFilter {
    fn new<'a>(tokens: impl ExactSizeIterator<Item = &'a [u8]>) -> Self {
        // About 20 bits per token: a false "maybe" one time in twenty.
        let size = (tokens.len() * 20).next_power_of_two().max(64);
        let mut filter = Self {
            bits: vec![0; size / 64],
            shift: 64 - size.trailing_zeros(),
        };
        for token in tokens {
            if (3..=INLINE_MAX).contains(&token.len()) {
                let bit = filter.bit(pack16(token));
                filter.bits[bit / 64] |= 1 << (bit % 64);
            }
        }
        filter
    }

    #[inline]
    fn bit(&self, key: u128) -> usize {
        let mixed = (key as u64 ^ (key >> 64) as u64 ^ (key >> 67) as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (mixed >> self.shift) as usize
    }

    /// False when `bytes` (3 to 15 of them) is surely no token.
    #[inline]
    fn may_contain(&self, bytes: &[u8]) -> bool {
        let bit = self.bit(pack16(bytes));
        self.bits[bit / 64] & 1 << (bit % 64) != 0
    }
}

/// [`last_join`] of every token (`bytes[span]`), in order.
///
/// Merging every token's bytes is most of the time it takes to build a [`Backtracker`], which
/// happens in the middle of an encode (see `BUILD_BACKTRACKER_AFTER`), so the tokens are shared
/// out between threads, when the machine has more than one core. Scoped
/// threads: all have finished when this returns. If a thread cannot be started (or fails),
/// its share is merged on this one.
fn last_joins(
    bytes: &[u8],
    spans: &[(Range<usize>, Rank)],
    table: &MergeTable,
) -> Vec<Option<[Rank; 2]>> {
    let of_span = |(span, _): &(Range<usize>, Rank)| last_join(&bytes[span.clone()], table);
    let sequential = |share: &[(Range<usize>, Rank)]| share.iter().map(of_span).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    // Below this many tokens (toy vocabularies) a thread costs more than it saves.
    if threads < 2 || spans.len() < 1 << 14 {
        return sequential(spans);
    }
    let shares: Vec<_> = spans.chunks(spans.len().div_ceil(threads)).collect();
    std::thread::scope(|scope| {
        let started: Vec<_> = shares[1..]
            .iter()
            .map(|share| {
                std::thread::Builder::new()
                    .spawn_scoped(scope, || sequential(share))
                    .ok()
            })
            .collect();
        let mut out: Vec<Option<[Rank; 2]>> = sequential(shares[0]);
        for (share, thread) in shares[1..].iter().zip(started) {
            match thread.and_then(|t| t.join().ok()) {
                Some(part) => out.extend::<Vec<_>>(part),
                None => out.extend(share.iter().map(of_span)),
            }
        }
        out
    })
}

/// The two ranks the last merge of `token`'s bytes, merged alone, joins (`[NONE, NONE]` for a
/// single byte), or `None` if they do not merge into one token.
fn last_join(token: &[u8], table: &MergeTable) -> Option<[Rank; 2]> {
    if token.len() < 2 {
        return Some([NONE; 2]);
    }
    let mut last = [NONE; 2];
    let mut parts = 0;
    merge_alone(token, table, |l, r| last = [l, r], |_| parts += 1);
    (parts == 1).then_some(last)
}

/// Merge `bytes` on their own, as [`flat_merge`] does; long ones (a hostile file's megabyte
/// token) take the heap so that nothing here is quadratic.
fn merge_alone(
    bytes: &[u8],
    table: &MergeTable,
    on_join: impl FnMut(Rank, Rank),
    emit: impl FnMut(Rank),
) {
    if bytes.len() <= FLAT_MERGE_MAX_LEN {
        flat_merge(bytes, table, table.tokens().byte_ranks(), on_join, emit);
    } else {
        heap_merge(bytes, table, table.tokens().byte_ranks(), on_join, emit);
    }
}

/// The boundary search of the module comment over `piece`: append the ids of the segmentation
/// whose every adjacent pair passes `compatible(at, left, right)` (`left` ends at byte `at`) to
/// `out` and return true, or return false with `out` unchanged if there is none. `trie` holds
/// the tokens that merge back to themselves. Shared by the rank rule and the pair rule
/// ([`crate::merge::pair`]), which differ only in `compatible`.
pub(crate) fn search(
    piece: &[u8],
    trie: &PrefixTrie,
    out: &mut Vec<Rank>,
    mut compatible: impl FnMut(usize, Rank, Rank) -> bool,
) -> bool {
    let n = piece.len();
    let base = out.len();
    // Where each token on the stack (`out[base..]`) starts.
    let mut starts: Vec<u32> = Vec::with_capacity(n / 2 + 1);
    let mut dead = vec![0u64; n / 64 + 1];
    let mut candidates: Vec<(u32, Rank)> = Vec::with_capacity(64);
    let mut memo = PairMemo::new(n);
    let mut pos = 0;
    // After backing up to `pos`: the length of the token just taken back (0: none yet).
    let mut retried = 0;
    while pos < n {
        candidates.clear();
        trie.prefixes(&piece[pos..], n - pos, &mut candidates);
        let previous = out[base..].last().copied();
        let mut fits = |&(len, rank): &(u32, Rank)| {
            let end = pos + len as usize;
            (end == n || dead[end / 64] & 1 << (end % 64) == 0)
                && previous
                    .is_none_or(|left| memo.get_or(left, rank, || compatible(pos, left, rank)))
        };
        // The order tried: the previous token again first (in a run of one character the
        // same token repeats, and the longest candidate is often wrong), then the others,
        // longest first. A retry resumes after the candidate taken back.
        let repeat = previous.and_then(|p| candidates.iter().position(|c| c.1 == p));
        let repeat_len = repeat.map_or(0, |k| candidates[k].0);
        let mut fit = None;
        if retried == 0 {
            if let Some(k) = repeat {
                fit = Some(candidates[k]).filter(&mut fits);
            }
        }
        if fit.is_none() {
            let shorter_than = if retried == 0 || retried == repeat_len {
                u32::MAX
            } else {
                retried
            };
            fit = candidates
                .iter()
                .rev()
                .filter(|c| c.0 < shorter_than && c.0 != repeat_len)
                .find(|c| fits(c))
                .copied();
        }
        if let Some((len, rank)) = fit {
            out.push(rank);
            starts.push(pos as u32);
            pos += len as usize;
            retried = 0;
        } else {
            dead[pos / 64] |= 1 << (pos % 64);
            let Some(start) = starts.pop() else {
                out.truncate(base);
                return false;
            };
            out.pop();
            retried = (pos - start as usize) as u32;
            pos = start as usize;
        }
    }
    true
}

/// Compatibility answers already worked out during one piece. Runs repeat the same few pairs
/// (a run of tabs tries many lengths at every position), so most checks become one load.
struct PairMemo {
    /// `(left << 32 | right) << 1 | answer`, or `EMPTY`; direct mapped, newest answer wins.
    slots: Vec<u64>,
    shift: u32,
}

impl PairMemo {
    const EMPTY: u64 = u64::MAX;

    fn new(piece_len: usize) -> Self {
        let size = (piece_len / 4).next_power_of_two().clamp(64, 4096);
        Self {
            slots: vec![Self::EMPTY; size],
            shift: 64 - size.trailing_zeros(),
        }
    }

    #[inline]
    fn get_or(&mut self, left: Rank, right: Rank, check: impl FnOnce() -> bool) -> bool {
        let key = u64::from(left) << 32 | u64::from(right);
        let slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize;
        let entry = self.slots[slot];
        if entry != Self::EMPTY && entry >> 1 == key {
            return entry & 1 == 1;
        }
        let answer = check();
        self.slots[slot] = key << 1 | u64::from(answer);
        answer
    }
}

/// Every token in a byte trie, so the tokens that start a text are found in one walk.
/// Nodes are numbered breadth first, so the children of node `v` are the nodes
/// `first[v]..first[v + 1]`, with their bytes (sorted) in `label` at the same indices.
#[derive(Debug, Clone)]
pub(crate) struct PrefixTrie {
    first: Vec<u32>,
    label: Vec<u8>,
    rank: Vec<Rank>,
}

impl PrefixTrie {
    /// `tokens` sorted by bytes, without duplicates.
    pub(crate) fn new(tokens: &[(&[u8], Rank)]) -> Self {
        // One entry per node: the tokens under it (a range of `tokens`) and its depth.
        let mut nodes: Vec<(usize, usize, usize)> = vec![(0, tokens.len(), 0)];
        let mut first = Vec::new();
        let mut label = vec![0u8];
        let mut rank = Vec::new();
        let mut v = 0;
        while v < nodes.len() {
            let (mut lo, hi, depth) = nodes[v];
            // Sorted order puts the node's own token (its whole prefix) first.
            if lo < hi && tokens[lo].0.len() == depth {
                rank.push(tokens[lo].1);
                lo += 1;
            } else {
                rank.push(NONE);
            }
            first.push(nodes.len() as u32);
            while lo < hi {
                let byte = tokens[lo].0[depth];
                let end = lo + tokens[lo..hi].partition_point(|t| t.0[depth] == byte);
                nodes.push((lo, end, depth + 1));
                label.push(byte);
                lo = end;
            }
            v += 1;
        }
        first.push(nodes.len() as u32);
        Self { first, label, rank }
    }

    /// Push `(length, rank)` for every token that starts `text` and is at most `max` bytes,
    /// shortest first.
    #[inline]
    fn prefixes(&self, text: &[u8], max: usize, out: &mut Vec<(u32, Rank)>) {
        let mut v = 0usize;
        for (depth, &byte) in text.iter().take(max).enumerate() {
            let (lo, hi) = (self.first[v] as usize, self.first[v + 1] as usize);
            let children = &self.label[lo..hi];
            v = if children.len() == 256 {
                lo + usize::from(byte)
            } else {
                match children.binary_search(&byte) {
                    Ok(k) => lo + k,
                    Err(_) => return,
                }
            };
            if self.rank[v] != NONE {
                out.push((depth as u32 + 1, self.rank[v]));
            }
        }
    }
}

impl Backtracker {
    /// Index the tokens of `table` (`None` only for tokens over 64 KiB, which no real
    /// vocabulary has; callers then keep the heap merge).
    pub(crate) fn new(table: &MergeTable) -> Option<Self> {
        let (bytes, mut spans) = table.tokens().tokens();
        spans.sort_unstable_by(|a, b| bytes[a.0.clone()].cmp(&bytes[b.0.clone()]));
        let bound = spans.iter().map(|t| t.1 as usize + 1).max()?;
        let mut split = vec![[NONE; 2]; bound];
        let mut len = vec![0u16; bound];
        let mut reachable = Vec::with_capacity(spans.len());
        let mut monotone = true;
        for ((span, rank), last) in spans.iter().zip(last_joins(&bytes, &spans, table)) {
            let token = &bytes[span.clone()];
            let token_len = u16::try_from(token.len()).ok()?;
            // A token that its own bytes do not merge into never forms in any text (a part's
            // bytes always merge as if alone), so leaving it out changes nothing.
            let Some(last) = last else {
                continue;
            };
            if token.len() > 1 {
                // Fact 2 needs ranks that grow along each merge (Llama 3 has a few that do not).
                monotone &= last[0] < *rank && last[1] < *rank;
                split[*rank as usize] = last;
            }
            len[*rank as usize] = token_len;
            reachable.push((token, *rank));
        }
        // Ranks in increasing order: a growing token's parts rank below it, so theirs are known.
        let mut grows = vec![false; bound];
        for rank in 0..bound {
            grows[rank] = match len[rank] {
                0 => false,
                1 => true,
                _ => split[rank]
                    .iter()
                    .all(|&part| (part as usize) < rank && grows[part as usize]),
            };
        }
        Some(Self {
            split,
            len,
            monotone,
            grows,
            maybe_token: TokenFilter::new(reachable.iter().map(|t| t.0)),
            trie: PrefixTrie::new(&reachable),
        })
    }

    /// The rank of `bytes` if it is a token that some text can merge into.
    #[inline]
    fn reachable_rank(&self, bytes: &[u8], table: &MergeTable) -> Option<Rank> {
        if (3..=INLINE_MAX).contains(&bytes.len()) && !self.maybe_token.may_contain(bytes) {
            return None;
        }
        table.rank(bytes).filter(|&r| self.len[r as usize] != 0)
    }

    /// Append the ids of `piece` to `out` and return true; false (with `out` unchanged) if no
    /// segmentation is found, which the checks in [`Backtracker::new`] rule out.
    pub(crate) fn merge(&self, piece: &[u8], table: &MergeTable, out: &mut Vec<Rank>) -> bool {
        search(piece, &self.trie, out, |at, left, right| {
            self.compatible(piece, at, left, right, table)
        })
    }

    /// Whether token `left`, ending at byte `at` of `piece`, and token `right`, starting there,
    /// stay apart when their bytes are merged alone (fact 2 in the module comment).
    #[inline]
    fn compatible(
        &self,
        piece: &[u8],
        at: usize,
        mut left: Rank,
        mut right: Rank,
        table: &MergeTable,
    ) -> bool {
        let left_len = usize::from(self.len[left as usize]);
        let right_len = usize::from(self.len[right as usize]);
        let trees_grow = self.monotone || self.grows[left as usize] && self.grows[right as usize];
        if !trees_grow {
            #[cfg(test)]
            FALLBACK_BYTES.with(|c| c.set(c.get() + left_len + right_len));
            let mut parts = [NONE; 3];
            let mut n = 0;
            merge_alone(
                &piece[at - left_len..at + right_len],
                table,
                |_, _| {},
                |rank| {
                    parts[n.min(2)] = rank;
                    n += 1;
                },
            );
            return n == 2 && parts[..2] == [left, right];
        }
        // A token across the boundary ranked below `limit` would have been merged before the
        // event that ends the current pair of neighbours; at first nothing ends them.
        let mut limit = NONE;
        loop {
            let left_len = usize::from(self.len[left as usize]);
            let right_len = usize::from(self.len[right as usize]);
            if let Some(across) = self.reachable_rank(&piece[at - left_len..at + right_len], table)
            {
                if across < limit {
                    return false;
                }
            }
            // Undo the later-formed neighbour. On equal ranks the left one formed first (ties go
            // to the leftmost pair), and a tie with the boundary pair goes the same way: the
            // boundary beats a merge on its right, loses to one on its left.
            if left_len > 1 && (right_len == 1 || left > right) {
                limit = left;
                left = self.split[left as usize][1];
            } else if right_len > 1 {
                limit = right + 1;
                right = self.split[right as usize][0];
            } else {
                return true;
            }
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod real_vocabularies;
