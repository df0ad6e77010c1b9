//! Counting the unique pieces of a corpus: pre-tokenize, then count each piece's bytes.
//!
//! Texts are counted in parallel on the current rayon pool (the caller decides the pool and so the
//! number of threads): each worker fills its own maps, borrowing the pieces from the texts, and the
//! maps are then added into the counter's, which own their keys. Long texts are first cut into
//! blocks at places that do not change the pieces ([`super::blocks`]).
//!
//! Most pieces are short (`" the"`, `"ing"`, `"\n"`): a piece of up to 7 bytes is kept inline in
//! an integer key (its bytes and its length), so counting it allocates nothing and compares one
//! integer; longer pieces are kept as byte strings.

use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::blocks::{BLOCK_BYTES, CutRule, split_blocks};
use crate::bytes::packed::pack8;
use crate::{Error, Pretokenizer};

/// Pieces up to this many bytes are stored inline.
const INLINE: usize = 7;

/// A short piece as an integer: its bytes, then its length in the top byte.
#[inline]
fn pack(piece: &[u8]) -> Option<u64> {
    if piece.len() > INLINE {
        return None;
    }
    Some(pack8(piece))
}

/// The bytes of a counted piece, inline (short pieces) or borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PieceBytes<'a> {
    /// Up to 7 bytes, the length in the last byte.
    Inline([u8; 8]),
    /// A longer piece.
    Slice(&'a [u8]),
}

impl AsRef<[u8]> for PieceBytes<'_> {
    fn as_ref(&self) -> &[u8] {
        match self {
            PieceBytes::Inline(b) => &b[..usize::from(b[7]).min(INLINE)],
            PieceBytes::Slice(s) => s,
        }
    }
}

/// An owned piece, inline (short pieces) or boxed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PieceBuf {
    /// Up to 7 bytes, the length in the last byte.
    Inline([u8; 8]),
    /// A longer piece.
    Boxed(Box<[u8]>),
}

impl AsRef<[u8]> for PieceBuf {
    fn as_ref(&self) -> &[u8] {
        match self {
            PieceBuf::Inline(b) => &b[..usize::from(b[7]).min(INLINE)],
            PieceBuf::Boxed(s) => s,
        }
    }
}

/// Unique pieces (their bytes) and how often each occurs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PieceCounts {
    short: FxHashMap<u64, u64>,
    long: FxHashMap<Box<[u8]>, u64>,
}

impl PieceCounts {
    /// The number of unique pieces.
    pub fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.short.is_empty() && self.long.is_empty()
    }

    /// The count of a piece (0 if unseen).
    pub fn get(&self, piece: &[u8]) -> u64 {
        match pack(piece) {
            Some(k) => self.short.get(&k).copied(),
            None => self.long.get(piece).copied(),
        }
        .unwrap_or(0)
    }

    /// Add `n` occurrences of `piece`.
    #[inline]
    pub fn add(&mut self, piece: &[u8], n: u64) {
        if n == 0 {
            return;
        }
        if let Some(k) = pack(piece) {
            let c = self.short.entry(k).or_insert(0);
            *c = c.saturating_add(n);
        } else if let Some(c) = self.long.get_mut(piece) {
            *c = c.saturating_add(n);
        } else {
            self.long.insert(piece.into(), n);
        }
    }

    /// Every piece and its count, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (PieceBytes<'_>, u64)> + '_ {
        let short = self
            .short
            .iter()
            .map(|(&k, &n)| (PieceBytes::Inline(k.to_le_bytes()), n));
        let long = self.long.iter().map(|(k, &n)| (PieceBytes::Slice(k), n));
        short.chain(long)
    }

    /// The bytes of all unique pieces together.
    pub fn total_bytes(&self) -> usize {
        let short: usize = self.short.keys().map(|k| (k >> 56) as usize).sum();
        short + self.long.keys().map(|k| k.len()).sum::<usize>()
    }
}

impl IntoIterator for PieceCounts {
    type Item = (PieceBuf, u64);
    type IntoIter = Box<dyn Iterator<Item = (PieceBuf, u64)>>;

    fn into_iter(self) -> Self::IntoIter {
        let short = self
            .short
            .into_iter()
            .map(|(k, n)| (PieceBuf::Inline(k.to_le_bytes()), n));
        let long = self.long.into_iter().map(|(k, n)| (PieceBuf::Boxed(k), n));
        Box::new(short.chain(long))
    }
}

/// One worker's counts, borrowing long pieces from the texts.
#[derive(Default)]
struct Local<'t> {
    short: FxHashMap<u64, u64>,
    long: FxHashMap<&'t [u8], u64>,
}

/// Counts texts on the current rayon pool without a counter (see [`PieceCounter::text_counter`]).
#[derive(Debug, Clone)]
pub struct TextCounter {
    pretokenizer: Arc<Pretokenizer>,
    rule: CutRule,
}

/// Piece counts of some texts, borrowing from them, to add to a [`PieceCounter`].
pub struct TextCounts<'t> {
    locals: Vec<Local<'t>>,
}

impl TextCounter {
    /// Count the pieces of each text (a separate document), in parallel on the current pool.
    pub fn count<'t, S: AsRef<str> + Sync>(&self, texts: &'t [S]) -> Result<TextCounts<'t>, Error> {
        let units: Vec<&'t str> = texts
            .iter()
            .flat_map(|t| {
                let t = t.as_ref();
                if t.len() > 2 * BLOCK_BYTES {
                    split_blocks(t, BLOCK_BYTES, self.rule)
                } else {
                    vec![t]
                }
            })
            .collect();
        let pre = &*self.pretokenizer;
        let locals = units
            .par_iter()
            .try_fold(Local::default, |mut local, unit| {
                pre.split_covering(unit, |piece| {
                    let piece = piece.as_bytes();
                    match pack(piece) {
                        Some(k) if !piece.is_empty() => *local.short.entry(k).or_insert(0) += 1,
                        Some(_) => {}
                        None => *local.long.entry(piece).or_insert(0) += 1,
                    }
                })?;
                Ok::<_, Error>(local)
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(TextCounts { locals })
    }
}

/// Counts the pieces of texts, files and other counters with one pattern.
#[derive(Debug, Clone)]
pub struct PieceCounter {
    pretokenizer: Arc<Pretokenizer>,
    rule: CutRule,
    counts: PieceCounts,
    pieces: u64,
}

impl PieceCounter {
    /// A counter for `pattern` (a scanner for the built-in patterns, else the regex engine).
    pub fn new(pattern: &str) -> Result<Self, Error> {
        Ok(Self::with_pretokenizer(Pretokenizer::new(pattern)?))
    }

    /// A counter that splits with `pretokenizer`.
    pub fn with_pretokenizer(pretokenizer: Pretokenizer) -> Self {
        let rule = CutRule::for_pattern(pretokenizer.pattern(), CutRule::Never);
        Self {
            pretokenizer: Arc::new(pretokenizer),
            rule,
            counts: PieceCounts::default(),
            pieces: 0,
        }
    }

    /// The pre-tokenizer's pattern.
    pub fn pattern(&self) -> &str {
        self.pretokenizer.pattern()
    }

    /// Where in-memory texts may be cut for this pattern (never for a custom pattern).
    pub fn text_rule(&self) -> CutRule {
        self.rule
    }

    /// Where files may be cut for this pattern (after any line break for a custom pattern).
    pub fn file_rule(&self) -> CutRule {
        CutRule::for_pattern(self.pattern(), CutRule::LineBreak)
    }

    /// The number of unique pieces.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Whether nothing has been counted.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The number of pieces counted (with repetitions).
    pub fn total(&self) -> u64 {
        self.pieces
    }

    /// The counts.
    pub fn counts(&self) -> &PieceCounts {
        &self.counts
    }

    /// Take the counts out, leaving the counter empty.
    pub fn take_counts(&mut self) -> PieceCounts {
        self.pieces = 0;
        std::mem::take(&mut self.counts)
    }

    /// Count the pieces of one text (in parallel when it is long and the pattern is built-in).
    pub fn add_text(&mut self, text: &str) -> Result<(), Error> {
        self.add_texts(&[text])
    }

    /// Count the pieces of each text, in parallel on the current rayon pool. Each text is a
    /// separate document: no piece spans two texts.
    pub fn add_texts<S: AsRef<str> + Sync>(&mut self, texts: &[S]) -> Result<(), Error> {
        let counts = self.text_counter().count(texts)?;
        self.add_text_counts(counts);
        Ok(())
    }

    /// What counting texts needs of this counter, detached from it: count with it while no
    /// lock on the counter is held, then add the result with [`Self::add_text_counts`]. A lock
    /// held across the parallel count deadlocks: a worker waiting in a rayon join can pick up
    /// another caller's job on the same pool, which then waits for that lock.
    pub fn text_counter(&self) -> TextCounter {
        TextCounter {
            pretokenizer: Arc::clone(&self.pretokenizer),
            rule: self.rule,
        }
    }

    /// Add counts made by [`TextCounter::count`].
    pub fn add_text_counts(&mut self, counts: TextCounts<'_>) {
        for local in counts.locals {
            self.absorb(local);
        }
    }

    fn absorb(&mut self, local: Local<'_>) {
        let counts = &mut self.counts;
        let mut added: u64 = local.short.values().sum::<u64>() + local.long.values().sum::<u64>();
        if counts.short.is_empty() {
            counts.short = local.short;
        } else {
            for (k, n) in local.short {
                let c = counts.short.entry(k).or_insert(0);
                *c = c.saturating_add(n);
            }
        }
        for (piece, n) in local.long {
            counts.add(piece, n);
        }
        added = self.pieces.saturating_add(added);
        self.pieces = added;
    }

    /// Add `n` occurrences of `piece` (for counts computed elsewhere).
    #[inline]
    pub fn add_count(&mut self, piece: &[u8], n: u64) {
        if !piece.is_empty() {
            self.pieces = self.pieces.saturating_add(n);
            self.counts.add(piece, n);
        }
    }

    /// Add another counter's counts (its pattern should be the same; see [`Self::pattern`]).
    pub fn merge(&mut self, other: &PieceCounter) {
        if self.counts.is_empty() {
            self.counts.clone_from(&other.counts);
            self.pieces = other.pieces;
            return;
        }
        for (piece, n) in other.counts.iter() {
            self.add_count(piece.as_ref(), n);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::pretokenize::patterns;

    fn sorted(c: &PieceCounter) -> Vec<(Vec<u8>, u64)> {
        let mut v: Vec<_> = c
            .counts()
            .iter()
            .map(|(k, n)| (k.as_ref().to_vec(), n))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn counts_pieces() {
        let mut c = PieceCounter::new(patterns::GPT2).unwrap();
        c.add_texts(&["the cat the", "cat"]).unwrap();
        assert_eq!(
            sorted(&c),
            vec![
                (b" cat".to_vec(), 1),
                (b" the".to_vec(), 1),
                (b"cat".to_vec(), 1),
                (b"the".to_vec(), 1)
            ]
        );
        assert_eq!(c.total(), 4);
        assert_eq!(c.len(), 4);
    }

    #[test]
    fn long_text_equals_many_small_and_merge_adds() {
        let line = "Hello world, 2024 is here!\n  spaced   out\nnext line's end.\n";
        let text = line.repeat(100_000);
        let mut whole = PieceCounter::new(patterns::CL100K).unwrap();
        whole.add_text(&text).unwrap();
        let mut one = PieceCounter::new(patterns::CL100K).unwrap();
        one.add_text(line).unwrap();
        // The text repeats the line; pieces never span the lines' ends here.
        for (k, n) in one.counts().iter() {
            let k = k.as_ref();
            assert_eq!(
                whole.counts().get(k),
                n * 100_000,
                "{:?}",
                String::from_utf8_lossy(k)
            );
        }
        let mut sum = one.clone();
        sum.merge(&one);
        assert!(
            sum.counts()
                .iter()
                .all(|(k, n)| n == 2 * one.counts().get(k.as_ref()))
        );
        assert_eq!(sum.total(), 2 * one.total());
    }

    #[test]
    fn short_and_long_pieces_round_trip() {
        let mut counts = PieceCounts::default();
        let pieces: Vec<Vec<u8>> = (1..=12)
            .map(|n| (0..n).map(|i| b'a' + i).collect())
            .collect();
        for (i, p) in pieces.iter().enumerate() {
            counts.add(p, i as u64 + 1);
            counts.add(p, 1);
        }
        counts.add(b"\0", 5); // a zero byte is not the end of an inline piece
        assert_eq!(counts.len(), 13);
        assert_eq!(counts.total_bytes(), (1..=12).sum::<usize>() + 1);
        for (i, p) in pieces.iter().enumerate() {
            assert_eq!(counts.get(p), i as u64 + 2);
        }
        assert_eq!(counts.get(b"\0"), 5);
        assert_eq!(counts.get(b"\0\0"), 0);
        let mut seen: Vec<(Vec<u8>, u64)> = counts
            .iter()
            .map(|(k, n)| (k.as_ref().to_vec(), n))
            .collect();
        let mut owned: Vec<(Vec<u8>, u64)> = counts
            .clone()
            .into_iter()
            .map(|(k, n)| (k.as_ref().to_vec(), n))
            .collect();
        seen.sort();
        owned.sort();
        assert_eq!(seen, owned);
        assert_eq!(seen.len(), 13);
    }

    #[test]
    fn bad_pattern_is_an_error() {
        assert!(matches!(PieceCounter::new("(?<"), Err(Error::Pattern(_))));
    }

    /// Issue 30 point 12: one counter behind a Mutex and one pool, used from four OS threads at
    /// once while four busy threads compete for the CPUs. With the lock taken inside `install`
    /// around `add_texts` (the bindings' way) this stalled for good after about 3,000 of the
    /// 12,000 calls; counting with a `TextCounter` and locking only to add the result does not.
    #[test]
    fn shared_counter_from_threads_under_contention() {
        use std::sync::{
            Arc, Mutex,
            atomic::{AtomicBool, Ordering},
        };
        let counter = Arc::new(Mutex::new(PieceCounter::new(patterns::GPT2).unwrap()));
        let pool = Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .unwrap(),
        );
        let stop = Arc::new(AtomicBool::new(false));
        let busy: Vec<_> = (0..4)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        x = x.wrapping_mul(31).wrapping_add(1);
                        std::hint::black_box(x);
                    }
                })
            })
            .collect();
        let text = "all work and no play makes jack a dull boy\n".repeat(50);
        let texts: Vec<&str> = vec![text.as_str(); 16];
        let (tx, rx) = std::sync::mpsc::channel();
        let progress = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        for _ in 0..4 {
            let progress = Arc::clone(&progress);
            let (counter, pool, tx, texts) = (
                Arc::clone(&counter),
                Arc::clone(&pool),
                tx.clone(),
                texts.iter().map(|t| t.to_string()).collect::<Vec<_>>(),
            );
            std::thread::spawn(move || {
                for _ in 0..3000 {
                    let counting = counter.lock().unwrap().text_counter();
                    let counts = pool.install(|| counting.count(&texts)).unwrap();
                    counter.lock().unwrap().add_text_counts(counts);
                    progress.fetch_add(1, Ordering::Relaxed);
                }
                tx.send(()).unwrap();
            });
        }
        let mut done = 0;
        while done < 4 {
            if rx.recv_timeout(std::time::Duration::from_secs(20)).is_err() {
                let a = progress.load(Ordering::Relaxed);
                std::thread::sleep(std::time::Duration::from_secs(5));
                eprintln!("PROGRESS {a} -> {}", progress.load(Ordering::Relaxed));
                break;
            }
            done += 1;
        }
        stop.store(true, Ordering::Relaxed);
        for b in busy {
            b.join().unwrap();
        }
        assert_eq!(done, 4, "counting hung");
    }
}
