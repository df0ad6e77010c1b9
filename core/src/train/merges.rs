//! The merge loop: learn merges from unique words and their counts, without recounting.
//!
//! Each unique piece is a "word": its token ids (at first one per byte) and how often it occurs.
//! The loop keeps, for every adjacent pair of ids,
//! - its count: the sum over words of (occurrences in the word × the word's count), where the
//!   occurrences are all adjacent positions, overlapping ones included (`aaa` holds `(a, a)` twice);
//! - the words where it may occur (a list that can hold stale entries, never misses one);
//! - an entry in a max-heap ordered by (count, then the smallest pair of ids).
//!
//! A merge pops the heap. An entry whose count is no longer current is pushed back with the
//! current count (lazy refresh: counts only ever fall for an existing pair, so the heap's stale
//! entries overestimate and a current entry on top is the true maximum). A current entry is
//! merged: in each of its words, occurrences are replaced left to right without overlap
//! (`aaa` with `(a, a)` becomes `[aa, a]`), and the counts of the pairs around each occurrence are
//! updated (the left neighbour `x` loses `(x, a)` and gains `(x, new)`, the right neighbour `y`
//! loses `(b, y)` and gains `(new, y)`; the left neighbour may be the new token itself).
//!
//! Why no pair ever needs its word list extended after it was created: every pair that gains
//! occurrences contains the new token, so each pair gains occurrences in exactly one step, and
//! its heap entry and word list are created then. A merged pair never appears again.
//!
//! Why no two merges make the same bytes: the tokens of a stretch of a word that begins and ends
//! at token boundaries depend only on its bytes (merging is left to right and never crosses a
//! boundary that survives). If merge k makes bytes `s` somewhere, every stretch `s` that still ends
//! at boundaries is `[X, Y]` before merge k and becomes one token then; so `s` cannot later be
//! made by another pair. Hence a merge always adds a new token and token ids are dense.
//!
//! Tie-break: ids 0..=255 stand for bytes and new ids follow in creation order (256, 257, ...).
//! [`TieBreak::Bytepair`] uses the byte values as ids (as rustbpe and bpeasy do);
//! [`TieBreak::HuggingFace`] numbers the bytes as Hugging Face's `BpeTrainer` does with the
//! ByteLevel alphabet (sorted by the character each byte is shown as, so printable ASCII `!`..`~`
//! comes first) and compares pairs by those ids. The learned merges are reported with byte values
//! as ids in both cases.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::collections::binary_heap::PeekMut;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::{Error, Rank};

/// How ties between pairs with the same count are broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TieBreak {
    /// The smallest (left, right) pair of ids, bytes numbered by their value (rustbpe, bpeasy).
    #[default]
    Bytepair,
    /// The smallest pair of Hugging Face `BpeTrainer` ids for a ByteLevel vocabulary.
    HuggingFace,
}

/// What to learn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrainOptions {
    /// Ordinary tokens wanted, the 256 single bytes included (so `vocab_size - 256` merges).
    pub vocab_size: usize,
    /// Stop before the first merge whose count is below this (0 and 1: no limit).
    pub min_frequency: u64,
    /// How ties are broken.
    pub tie_break: TieBreak,
}

impl TrainOptions {
    /// `vocab_size` tokens with the default tie-break and no minimum frequency.
    pub fn new(vocab_size: usize) -> Self {
        Self {
            vocab_size,
            min_frequency: 0,
            tie_break: TieBreak::Bytepair,
        }
    }
}

type PairKey = u64;

/// Merges whose pair is in at least this many words look for it in parallel.
const PARALLEL_HOLDERS: usize = 8192;

#[inline]
fn key(a: u32, b: u32) -> PairKey {
    (u64::from(a) << 32) | u64::from(b)
}

#[inline]
fn unkey(k: PairKey) -> (u32, u32) {
    ((k >> 32) as u32, k as u32)
}

/// The HF id of each byte: its position when the 256 byte characters are sorted.
fn hf_byte_ids() -> [u32; 256] {
    let chars = crate::bytes::byte_map::bytes_to_unicode();
    let mut order: Vec<u8> = (0..=255).collect();
    order.sort_unstable_by_key(|&b| chars[usize::from(b)]);
    let mut ids = [0u32; 256];
    for (id, &b) in order.iter().enumerate() {
        ids[usize::from(b)] = id as u32;
    }
    ids
}

/// A word: where its ids are in the arena, how many are left, and how often the piece occurs.
#[derive(Debug, Clone, Copy)]
struct Word {
    start: usize,
    count: u64,
    len: u32,
}

/// What is known about an adjacent pair of ids.
#[derive(Debug, Clone, Default)]
struct PairInfo {
    count: u64,
    /// Words that hold (or held) the pair, each at most once per step that added it.
    words: Vec<u32>,
}

/// The learning state; [`Merger::step`] makes a bounded number of merges, so a caller can report
/// progress or stop between steps.
#[derive(Debug, Clone)]
pub struct Merger {
    /// All words' ids, one after the other; a word shrinks in place as it is merged.
    ids: Vec<u32>,
    words: Vec<Word>,
    pairs: FxHashMap<PairKey, PairInfo>,
    heap: BinaryHeap<(u64, Reverse<PairKey>)>,
    /// Merges made, in internal ids.
    merges: Vec<(u32, u32)>,
    frequencies: Vec<u64>,
    /// Internal id (below 256) -> byte value.
    byte_of: [u8; 256],
    target: usize,
    min_frequency: u64,
    finished: bool,
    /// Pairs created during the current merge.
    new_keys: Vec<PairKey>,
}

impl Merger {
    /// Prepare to learn from unique pieces and their counts (in any order: the result does not
    /// depend on it). Pieces shorter than two bytes and zero counts are ignored.
    pub fn new<I, K>(pieces: I, options: &TrainOptions) -> Result<Self, Error>
    where
        I: IntoIterator<Item = (K, u64)>,
        K: AsRef<[u8]>,
    {
        Self::with_capacity(pieces, 0, options)
    }

    /// As [`Merger::new`], reserving room for `total_bytes` bytes of pieces (saves the arena's
    /// regrowth on large corpora).
    pub fn with_capacity<I, K>(
        pieces: I,
        total_bytes: usize,
        options: &TrainOptions,
    ) -> Result<Self, Error>
    where
        I: IntoIterator<Item = (K, u64)>,
        K: AsRef<[u8]>,
    {
        if options.vocab_size < 256 {
            return Err(Error::InvalidArgument(format!(
                "vocab_size must be at least 256 (the single bytes), got {}",
                options.vocab_size
            )));
        }
        if options.vocab_size > u32::MAX as usize {
            return Err(Error::InvalidArgument(format!(
                "vocab_size must fit token ids in 32 bits, got {}",
                options.vocab_size
            )));
        }
        let id_of: [u32; 256] = match options.tie_break {
            TieBreak::Bytepair => std::array::from_fn(|b| b as u32),
            TieBreak::HuggingFace => hf_byte_ids(),
        };
        let mut byte_of = [0u8; 256];
        for (b, &id) in id_of.iter().enumerate() {
            byte_of[id as usize] = b as u8;
        }

        let pieces = pieces.into_iter();
        let mut m = Self {
            ids: Vec::with_capacity(total_bytes),
            words: Vec::new(),
            pairs: FxHashMap::default(),
            heap: BinaryHeap::new(),
            merges: Vec::new(),
            frequencies: Vec::new(),
            byte_of,
            target: options.vocab_size - 256,
            min_frequency: options.min_frequency,
            finished: false,
            new_keys: Vec::new(),
        };
        // Frequent words first: they take part in most merges, and packing them together keeps
        // the merge loop in cache. (The order does not change the result.)
        let mut kept: Vec<(K, u64)> = pieces
            .filter(|(p, c)| p.as_ref().len() >= 2 && *c > 0)
            .collect();
        kept.sort_unstable_by_key(|x| Reverse(x.1));
        if kept.len() > u32::MAX as usize {
            return Err(Error::InvalidArgument(
                "more than 2^32 unique pieces".into(),
            ));
        }
        m.words.reserve_exact(kept.len());
        for (piece, count) in kept {
            let piece = piece.as_ref();
            let len = u32::try_from(piece.len())
                .map_err(|_| Error::InvalidArgument("a piece longer than 4 GiB".into()))?;
            m.words.push(Word {
                start: m.ids.len(),
                count,
                len,
            });
            m.ids.extend(piece.iter().map(|&b| id_of[usize::from(b)]));
        }
        m.count_initial_pairs();
        Ok(m)
    }

    fn count_initial_pairs(&mut self) {
        for (w, word) in self.words.iter().enumerate() {
            let ids = &self.ids[word.start..word.start + word.len as usize];
            let w = w as u32;
            for pair in ids.windows(2) {
                let info = self.pairs.entry(key(pair[0], pair[1])).or_default();
                info.count = info.count.saturating_add(word.count);
                if info.words.last() != Some(&w) {
                    info.words.push(w);
                }
            }
        }
        self.heap = self
            .pairs
            .iter()
            .map(|(&k, info)| (info.count, Reverse(k)))
            .collect();
    }

    /// Make up to `max_merges` merges; returns how many were made (0 once finished).
    pub fn step(&mut self, max_merges: usize) -> usize {
        let mut done = 0;
        while done < max_merges && !self.finished {
            if self.merges.len() >= self.target {
                self.finished = true;
                break;
            }
            let Some(mut top) = self.heap.peek_mut() else {
                self.finished = true;
                break;
            };
            let (count, Reverse(k)) = *top;
            let current = self.pairs.get(&k).map_or(0, |info| info.count);
            if current != count {
                // Stale: fix the entry in place (one sift down instead of a pop and a push).
                if current > 0 {
                    top.0 = current;
                } else {
                    PeekMut::pop(top);
                    self.pairs.remove(&k);
                }
                continue;
            }
            PeekMut::pop(top);
            if count == 0 || count < self.min_frequency {
                self.finished = true;
                break;
            }
            self.merge(k, count);
            done += 1;
        }
        done
    }

    /// Make all the merges.
    pub fn run(&mut self) {
        while self.step(usize::MAX) > 0 {}
    }

    /// Whether no more merges will be made.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Merges made so far.
    pub fn merges_done(&self) -> usize {
        self.merges.len()
    }

    /// Merges wanted (`vocab_size - 256`); fewer are made when the corpus runs out of pairs or
    /// the counts fall below `min_frequency`.
    pub fn target_merges(&self) -> usize {
        self.target
    }

    /// The merges so far, as (left id, right id) with ids 0..=255 the byte values and merge `i`
    /// making id `256 + i`.
    pub fn merges(&self) -> Vec<(Rank, Rank)> {
        let public = |id: u32| {
            if id < 256 {
                u32::from(self.byte_of[id as usize])
            } else {
                id
            }
        };
        self.merges
            .iter()
            .map(|&(a, b)| (public(a), public(b)))
            .collect()
    }

    /// The count of each merged pair when it was merged.
    pub fn frequencies(&self) -> &[u64] {
        &self.frequencies
    }

    fn merge(&mut self, k: PairKey, count: u64) {
        let (a, b) = unkey(k);
        let new = 256 + self.merges.len() as u32;
        self.merges.push((a, b));
        self.frequencies.push(count);
        let holders = self
            .pairs
            .remove(&k)
            .map(|info| info.words)
            .unwrap_or_default();

        let Self {
            ids,
            words,
            pairs,
            new_keys,
            ..
        } = self;
        // First pass: where each holder's first occurrence is (stale holders drop out). It only
        // reads, and its loop is small, so the processor overlaps the cache misses of many words;
        // long lists are split over the current rayon pool's threads.
        let first_of = |&w: &u32| {
            let word = &words[w as usize];
            let seq = &ids[word.start..word.start + word.len as usize];
            seq.windows(2)
                .position(|p| p[0] == a && p[1] == b)
                .map(|first| (w, first))
        };
        let found: Vec<(u32, usize)> = if holders.len() >= PARALLEL_HOLDERS {
            holders
                .par_chunks(PARALLEL_HOLDERS / 4)
                .flat_map_iter(|c| c.iter().filter_map(first_of))
                .collect()
        } else {
            holders.iter().filter_map(first_of).collect()
        };
        drop(holders);
        for (w, first) in found {
            let word = &mut words[w as usize];
            let len = word.len as usize;
            let seq = &mut ids[word.start..word.start + len];
            let c = word.count;
            let (mut r, mut out) = (first, first);
            while r < len {
                if r + 1 < len && seq[r] == a && seq[r + 1] == b {
                    if out > 0 {
                        let x = seq[out - 1];
                        dec(pairs, key(x, a), c);
                        add(pairs, new_keys, key(x, new), c, w);
                    }
                    if r + 2 < len {
                        let y = seq[r + 2];
                        dec(pairs, key(b, y), c);
                        add(pairs, new_keys, key(new, y), c, w);
                    }
                    seq[out] = new;
                    out += 1;
                    r += 2;
                } else {
                    seq[out] = seq[r];
                    out += 1;
                    r += 1;
                }
            }
            word.len = out as u32;
        }
        self.pairs.remove(&k);
        for nk in self.new_keys.drain(..) {
            match self.pairs.get(&nk).map(|info| info.count) {
                Some(c) if c > 0 => self.heap.push((c, Reverse(nk))),
                _ => {
                    self.pairs.remove(&nk);
                }
            }
        }
    }
}

/// Remove occurrences of a pair (destroyed by the merge).
#[inline]
fn dec(pairs: &mut FxHashMap<PairKey, PairInfo>, k: PairKey, c: u64) {
    if let Some(info) = pairs.get_mut(&k) {
        info.count = info.count.saturating_sub(c);
    }
}

/// Count a new occurrence of a pair (made by the merge) in word `w`.
#[inline]
fn add(
    pairs: &mut FxHashMap<PairKey, PairInfo>,
    new_keys: &mut Vec<PairKey>,
    k: PairKey,
    c: u64,
    w: u32,
) {
    let info = pairs.entry(k).or_default();
    if info.words.is_empty() {
        new_keys.push(k);
    }
    info.count = info.count.saturating_add(c);
    if info.words.last() != Some(&w) {
        info.words.push(w);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn train(words: &[(&str, u64)], vocab_size: usize, tie_break: TieBreak) -> Vec<(Rank, Rank)> {
        let options = TrainOptions {
            vocab_size,
            min_frequency: 0,
            tie_break,
        };
        let mut m = Merger::new(words.iter().map(|&(w, c)| (w.as_bytes(), c)), &options).unwrap();
        m.run();
        m.merges()
    }

    /// The obvious algorithm: recount every pair before each merge.
    fn naive(words: &[(&str, u64)], vocab_size: usize) -> Vec<(Rank, Rank)> {
        let mut ws: Vec<(Vec<u32>, u64)> = words
            .iter()
            .map(|&(w, c)| (w.bytes().map(u32::from).collect(), c))
            .collect();
        let mut merges = Vec::new();
        while merges.len() + 256 < vocab_size {
            let mut counts: FxHashMap<(u32, u32), u64> = FxHashMap::default();
            for (w, c) in &ws {
                for p in w.windows(2) {
                    *counts.entry((p[0], p[1])).or_insert(0) += c;
                }
            }
            let Some((&pair, _)) = counts.iter().max_by_key(|&(&p, &c)| (c, Reverse(p))) else {
                break;
            };
            let new = 256 + merges.len() as u32;
            merges.push(pair);
            for (w, _) in &mut ws {
                let mut out = Vec::with_capacity(w.len());
                let mut i = 0;
                while i < w.len() {
                    if i + 1 < w.len() && (w[i], w[i + 1]) == pair {
                        out.push(new);
                        i += 2;
                    } else {
                        out.push(w[i]);
                        i += 1;
                    }
                }
                *w = out;
            }
        }
        merges
    }

    #[test]
    fn overlapping_pairs_merge_left_to_right() {
        // "aaa" holds (a, a) twice; merging gives [aa, a], then (aa, a).
        let merges = train(&[("aaa", 1)], 300, TieBreak::Bytepair);
        assert_eq!(merges, vec![(97, 97), (256, 97)]);
        // "aaaa" -> [aa, aa] -> [aaaa].
        assert_eq!(
            train(&[("aaaa", 1)], 300, TieBreak::Bytepair),
            vec![(97, 97), (256, 256)]
        );
    }

    #[test]
    fn ties_go_to_the_smallest_pair() {
        // (a, b) and (c, d) both occur twice: (97, 98) < (99, 100).
        assert_eq!(
            train(&[("ab", 2), ("cd", 2)], 257, TieBreak::Bytepair),
            vec![(97, 98)]
        );
        // Among HF ids, '!' (33) comes before 'a' and the control byte 0x01 after '~'.
        assert_eq!(
            train(&[("\x01\x01", 1), ("!!", 1)], 257, TieBreak::HuggingFace),
            vec![(33, 33)]
        );
        assert_eq!(
            train(&[("\x01\x01", 1), ("!!", 1)], 257, TieBreak::Bytepair),
            vec![(1, 1)]
        );
        // Higher counts win over smaller ids.
        assert_eq!(
            train(&[("ab", 2), ("zz", 3)], 257, TieBreak::Bytepair),
            vec![(122, 122)]
        );
    }

    #[test]
    fn equals_the_naive_algorithm() {
        let words: Vec<(String, u64)> = (0..400u64)
            .map(|i| {
                let w: String = (0..(3 + i % 11))
                    .map(|j| char::from(b"abcab a"[((i * 7 + j * j * 3 + i / 5) % 7) as usize]))
                    .collect();
                (w, 1 + (i * 13) % 5)
            })
            .collect();
        let refs: Vec<(&str, u64)> = words.iter().map(|(w, c)| (w.as_str(), *c)).collect();
        for vocab in [260, 300, 400] {
            assert_eq!(train(&refs, vocab, TieBreak::Bytepair), naive(&refs, vocab));
        }
    }

    #[test]
    fn equals_the_naive_algorithm_with_parallel_lookups() {
        // Enough words that the first merges look for their pair on several threads.
        let mut state = 12345u64;
        let words: Vec<(String, u64)> = (0..3 * PARALLEL_HOLDERS)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let len = 2 + (state >> 60) as usize;
                let w = (0..len)
                    .map(|i| char::from(b"abc"[(state.rotate_right(4 * i as u32) % 3) as usize]))
                    .collect();
                (w, 1 + (state >> 33) % 3)
            })
            .collect();
        let refs: Vec<(&str, u64)> = words.iter().map(|(w, c)| (w.as_str(), *c)).collect();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let parallel = pool.install(|| train(&refs, 290, TieBreak::Bytepair));
        assert_eq!(parallel, naive(&refs, 290));
    }

    #[test]
    fn min_frequency_stops_early_and_counts_are_u64() {
        let big = 5_000_000_000u64; // above i32 and u32
        let words = [("ab", big), ("cd", 3), ("ef", 1)];
        let options = TrainOptions {
            vocab_size: 1000,
            min_frequency: 2,
            tie_break: TieBreak::Bytepair,
        };
        let mut m = Merger::new(words.iter().map(|&(w, c)| (w.as_bytes(), c)), &options).unwrap();
        m.run();
        assert_eq!(m.merges(), vec![(97, 98), (99, 100)]);
        assert_eq!(m.frequencies(), &[big, 3]);
        assert!(m.is_finished());
    }

    #[test]
    fn deterministic_whatever_the_order_and_stepwise() {
        let words = [
            ("hello", 3),
            ("yellow", 2),
            ("mellow", 4),
            ("low", 7),
            ("lower", 1),
        ];
        let forward = train(&words, 280, TieBreak::Bytepair);
        let mut reversed = words;
        reversed.reverse();
        assert_eq!(train(&reversed, 280, TieBreak::Bytepair), forward);
        let mut m = Merger::new(
            words.iter().map(|&(w, c)| (w.as_bytes(), c)),
            &TrainOptions::new(280),
        )
        .unwrap();
        while m.step(1) == 1 {}
        assert_eq!(m.merges(), forward);
        assert_eq!(m.merges_done(), forward.len());
    }

    #[test]
    fn bad_vocab_size() {
        let err = Merger::new([("ab", 1)], &TrainOptions::new(255)).unwrap_err();
        assert!(err.to_string().contains("at least 256"));
    }
}
