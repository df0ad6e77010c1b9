//! Pair-priority merging of one pre-tokenized piece: the rule of Hugging Face `tokenizers` (and of
//! the original GPT-2 `encoder.py`).
//!
//! Start from the ids of the piece's single bytes; repeatedly take the adjacent pair `(a, b)` that
//! the merges list names with the lowest priority (its line; the leftmost pair on ties) and replace
//! it by the merge's result; stop when no adjacent pair is a listed merge.
//!
//! This differs from tiktoken's rule ([`crate::merge`]: "join the adjacent parts whose
//! *concatenation* has the lowest rank") in two ways that real vocabularies exercise:
//! - only the listed pair joins: if `abc` is made from `(ab, c)`, adjacent parts `a` and `bc` stay
//!   apart, although their bytes spell a token;
//! - ids are free: the result of merge `i` may have any id (RoBERTa, NeoX, Falcon and SmolLM number
//!   their special tokens first), so priorities and ids are stored separately.
//!
//! Short pieces use a flat array; long ones the linear-time search of [`crate::merge`]'s
//! `backtrack` module with the pair rule as its compatibility check, or, where that does not
//! apply (a merge that takes the unknown token), a heap over a linked list (`O(n log n)`).

use rustc_hash::{FxHashMap, FxHashSet};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::OnceLock;

use crate::Rank;
use crate::merge::backtrack::{PrefixTrie, search};
use crate::vocab::RankMap;

/// `(left id, right id)` packed into one `u64` -> `(priority, id of the result)`.
pub type PairMap = FxHashMap<u64, (u32, Rank)>;

/// No token: a byte the vocabulary lacks, or "no merge" as a priority.
pub const NONE: Rank = Rank::MAX;

/// Pieces up to this many symbols use the flat-array merge; longer ones use the heap.
const FLAT_MERGE_MAX_LEN: usize = 128;

#[inline]
fn key(left: Rank, right: Rank) -> u64 {
    (u64::from(left) << 32) | u64::from(right)
}

pub use crate::vocab::pair_vocab::MissingByte;

/// A pair-merge BPE model: merges by pair, single-byte ids, and the pieces known to be one token.
#[derive(Debug, Clone)]
pub struct PairModel {
    merges: PairMap,
    byte_ids: [Rank; 256],
    missing: MissingByte,
    /// `byte_fallback`: for each byte without a token, the ids of `<0xHH>` for the UTF-8 bytes
    /// of its byte-level character ([`NONE`]-padded; `[NONE; 2]` where one is missing).
    fallback: Option<Box<ByteFallback>>,
    /// Whole pieces whose result is known to be this single id (checked when built), so the
    /// common words skip the merge loop, exactly as tiktoken's first lookup does.
    shortcut: RankMap,
    /// The tokens that merge back to themselves, for the linear-time search on long pieces
    /// (`crate::merge::backtrack`); built on the first long piece.
    long: OnceLock<Box<LongPieces>>,
}

/// What the long-piece search needs: the tokens that merge back to themselves, and their lengths.
#[derive(Debug, Clone)]
struct LongPieces {
    trie: PrefixTrie,
    len: FxHashMap<Rank, usize>,
    /// Whether some merge takes the unknown id (then it is no barrier, and pieces with missing
    /// bytes keep the heap).
    unknown_merges: bool,
}

/// The fallback ids of each byte (see [`PairModel::with_byte_fallback`]).
pub type ByteFallback = [[Rank; 2]; 256];

/// Every byte value, so that single-byte tokens can be borrowed as slices.
const ALL_BYTES: [u8; 256] = {
    let mut all = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        all[b] = b as u8;
        b += 1;
    }
    all
};

impl PairModel {
    /// Build from merges in priority order (`(left, right, result)`; a repeated pair keeps its
    /// last line, as `tokenizers` does), the id of each single byte ([`NONE`] when absent), and
    /// the whole-piece table: with `ignore_merges` every token of `vocab` (Hugging Face's
    /// `ignore_merges: true`), otherwise only the tokens that the merges rebuild from their bytes.
    pub fn new(
        merges: impl IntoIterator<Item = (Rank, Rank, Rank)>,
        byte_ids: [Rank; 256],
        missing: MissingByte,
        vocab: &RankMap,
        ignore_merges: bool,
    ) -> Self {
        Self::with_byte_fallback(merges, byte_ids, missing, None, vocab, ignore_merges)
    }

    /// [`Self::new`] with `tokenizers`' `byte_fallback`: a byte without a token becomes the
    /// `fallback` ids of its byte-level character's UTF-8 bytes (`<0xC4>`, `<0x84>` for byte
    /// 0x04, whose character is `Ą`) where the vocabulary has them all, and `missing` otherwise.
    pub fn with_byte_fallback(
        merges: impl IntoIterator<Item = (Rank, Rank, Rank)>,
        byte_ids: [Rank; 256],
        missing: MissingByte,
        fallback: Option<Box<ByteFallback>>,
        vocab: &RankMap,
        ignore_merges: bool,
    ) -> Self {
        let mut map = PairMap::default();
        for (priority, (left, right, result)) in merges.into_iter().enumerate() {
            let priority = u32::try_from(priority).unwrap_or(u32::MAX - 1);
            map.insert(key(left, right), (priority, result));
        }
        let mut model = Self {
            merges: map,
            byte_ids,
            missing,
            fallback,
            shortcut: RankMap::default(),
            long: OnceLock::new(),
        };
        let shortcut = if ignore_merges {
            vocab.clone()
        } else {
            let made = model.merge_results();
            let mut parts = Vec::new();
            vocab
                .iter()
                .filter(|(token, id)| model.merges_to_itself(token, **id, &made, &mut parts))
                .map(|(token, id)| (token.clone(), *id))
                .collect()
        };
        model.shortcut = shortcut;
        model
    }

    /// The ids that some merge produces.
    fn merge_results(&self) -> FxHashSet<Rank> {
        self.merges.values().map(|&(_, result)| result).collect()
    }

    /// Whether merging `token`'s bytes gives `[id]`. A token of two or more bytes that no merge
    /// produces never does (its bytes start as other tokens' ids), so it is not merged: a huge
    /// key that no merge makes costs nothing to build.
    fn merges_to_itself(
        &self,
        token: &[u8],
        id: Rank,
        made: &FxHashSet<Rank>,
        parts: &mut Vec<Rank>,
    ) -> bool {
        if token.len() > 1 && !made.contains(&id) {
            return false;
        }
        parts.clear();
        self.merge_plain(token, parts);
        parts.as_slice() == [id]
    }

    /// The merges as `(left, right, result)` in priority order.
    pub fn merges(&self) -> Vec<(Rank, Rank, Rank)> {
        let mut all: Vec<(u32, Rank, Rank, Rank)> = self
            .merges
            .iter()
            .map(|(&k, &(priority, result))| (priority, (k >> 32) as Rank, k as Rank, result))
            .collect();
        all.sort_unstable();
        all.into_iter().map(|(_, l, r, m)| (l, r, m)).collect()
    }

    /// The id of each single byte ([`NONE`] when the vocabulary lacks it).
    pub fn byte_ids(&self) -> &[Rank; 256] {
        &self.byte_ids
    }

    /// The merge of an adjacent pair, if listed: `(priority, result)`.
    #[inline]
    pub fn pair(&self, left: Rank, right: Rank) -> Option<(u32, Rank)> {
        self.merges.get(&key(left, right)).copied()
    }

    /// Append the ids of `piece` to `out`.
    #[inline]
    pub fn encode_piece(&self, piece: &[u8], out: &mut Vec<Rank>) {
        match piece.len() {
            0 => {}
            1 if self.byte_ids[usize::from(piece[0])] != NONE => {
                out.push(self.byte_ids[usize::from(piece[0])]);
            }
            _ => {
                if let Some(&id) = self.shortcut.get(piece) {
                    out.push(id);
                } else {
                    self.merge_into(piece, out);
                }
            }
        }
    }

    /// The number of ids `encode_piece` would append.
    #[inline]
    pub fn count_piece(&self, piece: &[u8]) -> usize {
        if piece.len() > 1 && self.shortcut.contains_key(piece) {
            return 1;
        }
        let mut ids = Vec::new();
        self.encode_piece(piece, &mut ids);
        ids.len()
    }

    /// The ids of the piece's bytes, before any merge.
    fn initial(&self, piece: &[u8], ids: &mut Vec<Rank>) {
        let mut in_unknown_run = false;
        for &b in piece {
            let id = self.byte_ids[usize::from(b)];
            if id != NONE {
                ids.push(id);
                in_unknown_run = false;
                continue;
            }
            if let Some(ids_of) = self.fallback.as_deref().map(|f| f[usize::from(b)]) {
                if ids_of[0] != NONE {
                    ids.extend(ids_of.iter().copied().filter(|&id| id != NONE));
                    in_unknown_run = false;
                    continue;
                }
            }
            match self.missing {
                MissingByte::Drop => {}
                MissingByte::Unknown { id, fuse } => {
                    if !(fuse && in_unknown_run) {
                        ids.push(id);
                    }
                    in_unknown_run = true;
                }
            }
        }
    }

    /// Merge `piece` from its bytes (no whole-piece lookup) and append the result to `out`.
    fn merge_into(&self, piece: &[u8], out: &mut Vec<Rank>) {
        if piece.len() <= FLAT_MERGE_MAX_LEN || !self.merge_long(piece, out) {
            self.merge_plain(piece, out);
        }
    }

    /// The linear-time search of `crate::merge::backtrack` with the pair rule: two neighbours
    /// are compatible when merging their bytes alone keeps them apart. Missing bytes are left
    /// out first when they are dropped (the merge never sees them) and cut the piece when they
    /// become the unknown id. False (nothing appended) when a merge takes the unknown id.
    fn merge_long(&self, piece: &[u8], out: &mut Vec<Rank>) -> bool {
        let long = self.long.get_or_init(|| Box::new(self.long_pieces()));
        let kept: Vec<u8>;
        let piece = if piece.iter().any(|&b| self.byte_ids[usize::from(b)] == NONE) {
            if self.fallback.is_some() {
                return false; // fallback ids may merge: the heap takes the piece
            }
            if let MissingByte::Unknown { id, fuse } = self.missing {
                // The unknown id joins no pair (checked), so it cuts the piece: the runs of
                // known bytes merge apart, each run of missing bytes gives its unknown id(s).
                if long.unknown_merges {
                    return false;
                }
                for run in piece.chunk_by(|a, b| {
                    (self.byte_ids[usize::from(*a)] == NONE)
                        == (self.byte_ids[usize::from(*b)] == NONE)
                }) {
                    if self.byte_ids[usize::from(run[0])] != NONE {
                        self.merge_into(run, out);
                    } else if fuse {
                        out.push(id);
                    } else {
                        out.extend(std::iter::repeat_n(id, run.len()));
                    }
                }
                return true;
            }
            kept = piece
                .iter()
                .copied()
                .filter(|&b| self.byte_ids[usize::from(b)] != NONE)
                .collect();
            &kept[..]
        } else {
            piece
        };
        let mut pair = Vec::new();
        search(piece, &long.trie, out, |at, left, right| {
            let (Some(&l), Some(&r)) = (long.len.get(&left), long.len.get(&right)) else {
                return false;
            };
            pair.clear();
            self.merge_plain(&piece[at - l..at + r], &mut pair);
            pair == [left, right]
        })
    }

    /// The tokens (of the whole-piece table, and single bytes) that merge back to themselves.
    fn long_pieces(&self) -> LongPieces {
        let made = self.merge_results();
        let mut parts = Vec::new();
        let mut tokens: Vec<(&[u8], Rank)> = self
            .shortcut
            .iter()
            .filter(|(token, id)| self.merges_to_itself(token, **id, &made, &mut parts))
            .map(|(token, &id)| (token.as_slice(), id))
            .collect();
        for (b, &id) in self.byte_ids.iter().enumerate() {
            if id != NONE {
                tokens.push((&ALL_BYTES[b..=b], id));
            }
        }
        tokens.sort_unstable();
        tokens.dedup_by(|a, b| a.0 == b.0);
        let unknown_merges = match self.missing {
            MissingByte::Unknown { id, .. } => self
                .merges
                .keys()
                .any(|&k| (k >> 32) as Rank == id || k as Rank == id),
            MissingByte::Drop => false,
        };
        LongPieces {
            len: tokens.iter().map(|&(t, id)| (id, t.len())).collect(),
            trie: PrefixTrie::new(&tokens),
            unknown_merges,
        }
    }

    /// Merge `piece` from its bytes without the long-piece search.
    fn merge_plain(&self, piece: &[u8], out: &mut Vec<Rank>) {
        let start = out.len();
        self.initial(piece, out);
        let symbols = &mut out[start..];
        if symbols.len() < 2 {
            return;
        }
        let mut ids = symbols.to_vec();
        out.truncate(start);
        if ids.len() <= FLAT_MERGE_MAX_LEN {
            self.flat_merge(&mut ids);
            out.extend_from_slice(&ids);
        } else {
            self.heap_merge(&ids, out);
        }
    }

    /// `O(n^2)` with tiny constants: one scan for the best pair per merge.
    fn flat_merge(&self, ids: &mut Vec<Rank>) {
        // pairs[i] = (priority, result) of ids[i] joined with ids[i + 1].
        let lookup = |l: Rank, r: Rank| self.pair(l, r).unwrap_or((u32::MAX, NONE));
        let mut pairs: Vec<(u32, Rank)> = ids.windows(2).map(|w| lookup(w[0], w[1])).collect();
        loop {
            let mut best = u32::MAX;
            let mut at = 0;
            for (i, &(priority, _)) in pairs.iter().enumerate() {
                if priority < best {
                    best = priority;
                    at = i;
                }
            }
            if best == u32::MAX {
                break;
            }
            ids[at] = pairs[at].1;
            ids.remove(at + 1);
            pairs.remove(at);
            if at < pairs.len() {
                pairs[at] = lookup(ids[at], ids[at + 1]);
            }
            if at > 0 {
                pairs[at - 1] = lookup(ids[at - 1], ids[at]);
            }
        }
    }

    /// `O(n log n)`: a min-heap of (priority, position) over a doubly linked list of symbols.
    /// Stale entries are recognised by the priority recorded for their position.
    fn heap_merge(&self, initial: &[Rank], out: &mut Vec<Rank>) {
        let n = initial.len();
        const END: usize = usize::MAX;
        let mut ids = initial.to_vec();
        let mut next: Vec<usize> = (1..=n).map(|i| if i == n { END } else { i }).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| if i == 0 { END } else { i - 1 }).collect();
        let mut alive = vec![true; n];
        let mut pair: Vec<u32> = vec![u32::MAX; n];
        let mut heap: BinaryHeap<Reverse<(u32, usize)>> = BinaryHeap::with_capacity(n);
        for i in 0..n - 1 {
            if let Some((priority, _)) = self.pair(ids[i], ids[i + 1]) {
                pair[i] = priority;
                heap.push(Reverse((priority, i)));
            }
        }
        while let Some(Reverse((priority, left))) = heap.pop() {
            if !alive[left] || pair[left] != priority {
                continue;
            }
            let right = next[left];
            let Some((_, result)) = (right != END)
                .then(|| self.pair(ids[left], ids[right]))
                .flatten()
            else {
                continue;
            };
            ids[left] = result;
            alive[right] = false;
            let after = next[right];
            next[left] = after;
            pair[left] = u32::MAX;
            if after != END {
                prev[after] = left;
                if let Some((p, _)) = self.pair(result, ids[after]) {
                    pair[left] = p;
                    heap.push(Reverse((p, left)));
                }
            }
            let before = prev[left];
            if before != END {
                pair[before] = u32::MAX;
                if let Some((p, _)) = self.pair(ids[before], result) {
                    pair[before] = p;
                    heap.push(Reverse((p, before)));
                }
            }
        }
        let mut i = 0;
        while i != END {
            out.push(ids[i]);
            i = next[i];
        }
    }
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;
    use crate::test_data::random_text;

    /// Merges of the toy models: ab, bc, abc, aa, aaaa, ca, cab, dd.
    const MERGES: [(Rank, Rank, Rank); 8] = [
        (0, 1, 10),
        (1, 2, 11),
        (10, 2, 12),
        (0, 0, 13),
        (13, 13, 14),
        (2, 0, 15),
        (15, 1, 16),
        (3, 3, 17),
    ];

    /// Bytes 'a'..='d' are ids 0..=3, the rest absent; merges as given.
    fn model(
        merges: &[(Rank, Rank, Rank)],
        ignore_merges: bool,
        vocab: &[(&[u8], Rank)],
    ) -> PairModel {
        let mut byte_ids = [NONE; 256];
        for (i, b) in (b'a'..=b'd').enumerate() {
            byte_ids[usize::from(b)] = i as Rank;
        }
        let vocab: RankMap = vocab.iter().map(|(t, i)| (t.to_vec(), *i)).collect();
        PairModel::new(
            merges.iter().copied(),
            byte_ids,
            MissingByte::Drop,
            &vocab,
            ignore_merges,
        )
    }

    fn encode(m: &PairModel, piece: &[u8]) -> Vec<Rank> {
        let mut out = Vec::new();
        m.encode_piece(piece, &mut out);
        out
    }

    /// The textbook quadratic algorithm, as an oracle.
    fn naive(m: &PairModel, piece: &[u8]) -> Vec<Rank> {
        let mut ids = Vec::new();
        m.initial(piece, &mut ids);
        loop {
            let best = (0..ids.len().saturating_sub(1))
                .filter_map(|i| m.pair(ids[i], ids[i + 1]).map(|(p, r)| (p, i, r)))
                .min();
            let Some((_, i, r)) = best else { break };
            ids[i] = r;
            ids.remove(i + 1);
        }
        ids
    }

    #[test]
    fn long_pieces_take_the_linear_search_and_agree_with_naive() {
        // The last merge comes after its parts' own merges would make it: "abc" is never formed
        // from "a"+"bc".
        let merges: Vec<_> = MERGES.iter().copied().chain([(0, 11, 18)]).collect();
        let vocab: &[(&[u8], Rank)] = &[
            (b"ab", 10),
            (b"bc", 11),
            (b"abc", 12),
            (b"aa", 13),
            (b"aaaa", 14),
            (b"ca", 15),
            (b"cab", 16),
            (b"dd", 17),
        ];
        let m = model(&merges, false, vocab);
        let mut seed: u64 = 5;
        for len in [129, 130, 200, 333, 1000, 5000] {
            for alphabet in [&b"abcdz"[..], b"a", b"az", b"abc", b"cab d"] {
                let piece = random_text(&mut seed, len, alphabet);
                let expected = naive(&m, &piece);
                let mut via_search = Vec::new();
                assert!(m.merge_long(&piece, &mut via_search), "{piece:?}");
                assert_eq!(via_search, expected, "{piece:?}");
                assert_eq!(encode(&m, &piece), expected);
            }
        }
    }

    #[test]
    fn long_pieces_with_unknown_bytes() {
        let mut byte_ids = [NONE; 256];
        for (i, b) in (b'a'..=b'c').enumerate() {
            byte_ids[usize::from(b)] = i as Rank;
        }
        let merges = [(0, 1, 10), (10, 2, 12), (0, 0, 13), (13, 13, 14)];
        let vocab: RankMap = [(&b"ab"[..], 10), (b"abc", 12), (b"aa", 13), (b"aaaa", 14)]
            .iter()
            .map(|(t, i)| (t.to_vec(), *i))
            .collect();
        let mut seed: u64 = 8;
        for fuse in [false, true] {
            let unknown = MissingByte::Unknown { id: 99, fuse };
            let m = PairModel::new(merges, byte_ids, unknown, &vocab, false);
            for len in [129, 300, 2000] {
                let piece = random_text(&mut seed, len, b"aabcxyaa");
                let mut via_search = Vec::new();
                assert!(m.merge_long(&piece, &mut via_search));
                assert_eq!(via_search, naive(&m, &piece), "fuse {fuse}: {piece:?}");
            }
            // A merge that takes the unknown id makes it no barrier: the heap keeps those pieces.
            let with_unknown = [(0, 1, 10), (99, 0, 20)];
            let m = PairModel::new(with_unknown, byte_ids, unknown, &vocab, false);
            let piece = [b'x', b'a'].repeat(100);
            assert!(!m.merge_long(&piece, &mut Vec::new()));
            assert_eq!(encode(&m, &piece), naive(&m, &piece));
        }
    }

    #[test]
    fn only_the_listed_pair_merges() {
        // ab=10 (a,b), bc=11 (b,c), abc=12 from (ab, c) only.
        let m = model(&[(0, 1, 10), (1, 2, 11), (10, 2, 12)], false, &[]);
        assert_eq!(encode(&m, b"abc"), vec![12]);
        // Without (a, b) first, a + bc never joins although "abc" is a token.
        let m = model(&[(1, 2, 11), (0, 1, 10), (10, 2, 12)], false, &[]);
        assert_eq!(encode(&m, b"abc"), vec![0, 11]);
    }

    #[test]
    fn ids_need_not_follow_priority() {
        let m = model(&[(0, 0, 500), (500, 500, 7)], false, &[]);
        assert_eq!(encode(&m, b"aaaa"), vec![7]);
        assert_eq!(encode(&m, b"aaaaa"), vec![7, 0]);
    }

    #[test]
    fn missing_bytes_are_dropped_or_unknown() {
        let m = model(&[(0, 1, 10)], false, &[]);
        // 'z' is no token: dropped, and its neighbours become adjacent (as in tokenizers).
        assert_eq!(encode(&m, b"azb"), vec![10]);
        let mut byte_ids = [NONE; 256];
        byte_ids[usize::from(b'a')] = 0;
        let unk = |fuse| {
            let vocab = RankMap::default();
            PairModel::new(
                [],
                byte_ids,
                MissingByte::Unknown { id: 9, fuse },
                &vocab,
                false,
            )
        };
        assert_eq!(encode(&unk(false), b"azza"), vec![0, 9, 9, 0]);
        assert_eq!(encode(&unk(true), b"azza"), vec![0, 9, 0]);
    }

    #[test]
    fn shortcut_only_where_exact() {
        // "abc" is in the vocabulary but the merges cannot build it: no shortcut unless asked.
        let merges = [(1, 2, 11), (0, 1, 10), (10, 2, 12)];
        let vocab: &[(&[u8], Rank)] = &[(b"ab", 10), (b"bc", 11), (b"abc", 12)];
        assert_eq!(encode(&model(&merges, false, vocab), b"abc"), vec![0, 11]);
        assert_eq!(encode(&model(&merges, true, vocab), b"abc"), vec![12]);
    }

    #[test]
    fn tokens_no_merge_makes_are_never_merged() {
        // "cd" (20) is made by no merge, so its bytes never give [20]: it is no shortcut and no
        // part of the long-piece search, whatever its length, and costs no merge to rule out.
        let vocab: &[(&[u8], Rank)] = &[(b"ab", 10), (b"abc", 12), (b"cd", 20)];
        let strict = model(&MERGES, false, vocab);
        assert!(strict.shortcut.contains_key(&b"abc"[..]));
        assert!(!strict.shortcut.contains_key(&b"cd"[..]));
        let loose = model(&MERGES, true, vocab);
        assert!(loose.shortcut.contains_key(&b"cd"[..]));
        let long = loose.long_pieces();
        assert!(long.len.contains_key(&12) && !long.len.contains_key(&20));
        let piece = b"cdcd".repeat(100);
        assert_eq!(encode(&strict, &piece), naive(&strict, &piece));
    }

    #[test]
    fn flat_and_heap_agree_with_naive() {
        let m = model(&MERGES, false, &[]);
        let mut seed: u64 = 11;
        for len in 1..400 {
            let piece = random_text(&mut seed, len, b"abcdz");
            let expected = naive(&m, &piece);
            assert_eq!(encode(&m, &piece), expected, "{piece:?}");
            assert_eq!(m.count_piece(&piece), expected.len());
        }
    }

    #[test]
    fn long_run_is_not_quadratic() {
        let m = model(&[(0, 0, 10), (10, 10, 11), (11, 11, 12)], false, &[]);
        let out = encode(&m, &vec![b'a'; 1_000_000]);
        assert_eq!(out.len(), 125_000);
        assert!(out.iter().all(|&r| r == 12));
    }

    #[test]
    fn merges_round_trip_in_priority_order() {
        let merges = vec![(0, 1, 10), (1, 2, 11), (10, 2, 12)];
        assert_eq!(model(&merges, false, &[]).merges(), merges);
    }
}
