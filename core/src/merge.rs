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

use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::Rank;
use crate::packed::{pack8, pack16, unpack8, unpack16};

pub(crate) mod backtrack;
mod buckets;
use backtrack::Backtracker;
use buckets::{MediumTable, ShortTable};

/// Token bytes to rank. `Vec<u8>: Borrow<[u8]>`, so it is queried with byte slices.
pub type RankMap = FxHashMap<Vec<u8>, Rank>;

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

/// The longest token kept inline by [`TokenTable`]: in a `u64` key up to `SHORT_MAX` bytes, in
/// a `u128` key up to `INLINE_MAX`.
const SHORT_MAX: usize = 7;
const INLINE_MAX: usize = 15;

/// A lookup table laid out for the hot path, where the cost of a lookup is its cache misses. A
/// `HashMap<Vec<u8>, _>` costs up to three (control bytes, bucket, the key's heap bytes); here
/// tokens of 3 to 15 bytes (nearly all of them) are packed integer keys, those of up to 7 bytes
/// (most lookups) in a table with half-size buckets, two-byte tokens sit in a flat 64 Ki array,
/// and anything longer than the longest token is rejected without hashing. Multilingual text
/// makes several lookups per byte and long runs more, so this layout is most of the speed.
#[derive(Debug, Clone)]
pub struct TokenTable {
    pair: Box<[Rank]>,
    /// Tokens of 3 to 7 bytes (most lookups), five to a cache line.
    short: ShortTable,
    /// Tokens of 8 to 15 bytes, three to a cache line.
    medium: MediumTable,
    long: RankMap,
    byte: [Rank; 256],
    max_len: usize,
    rank_bound: Rank,
    premerge: PreMerge,
    /// Built once long pieces add up to [`BUILD_BACKTRACKER_AFTER`] bytes (building it merges
    /// every token's bytes, on all cores: for o200k 0.14 s on one, 0.07-0.09 s on two), `None`
    /// if the vocabulary does not qualify for the linear-time merge.
    backtracker: OnceLock<Option<Box<Backtracker>>>,
    /// The bytes of the long pieces merged before the backtracker was built.
    long_bytes: LongBytes,
}

/// Long pieces merge with the heap (`O(n log n)`) until they add up to this many bytes, then
/// with the backtracker, which is about twenty times faster on long runs (o200k: 5-8 ns/byte
/// against 110-130 on the edge corpus's runs of one letter, spaces or tabs) but costs a tenth of
/// a second to build. Built on the first long piece, as it was, that tenth of a second went to
/// the one piece over 512 bytes in the whole multilingual corpus (547 bytes of Thai, which the
/// heap merges in 0.3 ms): the benchmark's repetition holding it ran at a fifth of its speed.
/// Now the heap merges made before the build cost at most about a third of the build (a quarter
/// of a megabyte at 110-130 ns/byte is about 30 ms), and text that never has that much in long
/// pieces never pays for it.
const BUILD_BACKTRACKER_AFTER: usize = 256 << 10;

/// A byte count shared by the threads that use one table.
#[derive(Debug, Default)]
struct LongBytes(AtomicUsize);

impl Clone for LongBytes {
    fn clone(&self) -> Self {
        Self(AtomicUsize::new(self.0.load(Ordering::Relaxed)))
    }
}

impl TokenTable {
    /// Index `ranks`; `byte_ranks` gives the rank of every single byte.
    pub fn new(ranks: &RankMap, byte_ranks: &[Rank; 256]) -> Self {
        let mut pair = vec![Rank::MAX; 1 << 16].into_boxed_slice();
        let mut short = Vec::new();
        let mut medium = Vec::new();
        let mut long = RankMap::default();
        let mut max_len = 1;
        for (token, &rank) in ranks {
            max_len = max_len.max(token.len());
            match token.len() {
                2 => pair[two(token[0], token[1])] = rank,
                3..=SHORT_MAX => short.push((pack8(token), rank)),
                n if (SHORT_MAX + 1..=INLINE_MAX).contains(&n) => {
                    medium.push((pack16(token), rank));
                }
                n if n > INLINE_MAX => {
                    long.insert(token.clone(), rank);
                }
                _ => {}
            }
        }
        let premerge = PreMerge::new(ranks, &pair);
        let short = ShortTable::new(short);
        let medium = MediumTable::new(medium);
        Self {
            pair,
            short,
            medium,
            long,
            byte: *byte_ranks,
            max_len,
            rank_bound: ranks.values().max().map_or(0, |&r| r.saturating_add(1)),
            premerge,
            backtracker: OnceLock::new(),
            long_bytes: LongBytes::default(),
        }
    }

    /// Every token with its rank, in no particular order: the bytes of all of them back to back,
    /// and where each one's are (one buffer, not an allocation per token: building the
    /// linear-time merge's tables allocated, sorted and freed 200k small vectors for o200k).
    fn tokens(&self) -> (Vec<u8>, Vec<(Range<usize>, Rank)>) {
        let mut bytes = Vec::new();
        let mut spans = Vec::new();
        let mut push = |token: &[u8], rank: Rank| {
            let start = bytes.len();
            bytes.extend_from_slice(token);
            spans.push((start..bytes.len(), rank));
        };
        for b in 0..=255u8 {
            push(&[b], self.byte[usize::from(b)]);
        }
        for (i, &rank) in self.pair.iter().enumerate() {
            if rank != Rank::MAX {
                push(&[(i >> 8) as u8, i as u8], rank);
            }
        }
        for (key, rank) in self.short.iter() {
            let (token, len) = unpack8(key);
            push(&token[..len], rank);
        }
        for (key, rank) in self.medium.iter() {
            let (token, len) = unpack16(key);
            push(&token[..len], rank);
        }
        for (token, &rank) in &self.long {
            push(token, rank);
        }
        (bytes, spans)
    }

    /// The rank of `piece`, a subslice of `text`, if it is one token: the encoder's first
    /// lookup for every piece (nine in ten pieces of English are one token).
    ///
    /// This is [`Lookup::rank`] inlined into the encoder's loop, so that its branches
    /// (on the piece's length, on finding it) are predicted from their own history rather than
    /// sharing it with the merge's lookups, which mostly miss. A piece of 3 to 7 bytes (two
    /// thirds of English pieces) is read with one 8-byte load from `text`, masked to its length,
    /// instead of the two length-dependent loads of `pack8`. Both together: `encode_ordinary`
    /// 3-5% less time on English and code, o200k and cl100k (both builds in one process).
    /// Such a piece also skips the Bloom filter, which would nearly always answer "maybe"
    /// (another 1-3%, and a tenth fewer L1 misses in cachegrind).
    #[inline(always)]
    pub fn piece_rank_in(&self, text: &[u8], piece: &[u8]) -> Option<Rank> {
        let n = piece.len();
        if n.wrapping_sub(3) <= SHORT_MAX - 3 {
            // The piece's offset in `text`; anything else (not a subslice) finds no window or
            // the wrong one, which the debug assertion catches.
            let at = (piece.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
            if let Some(window) = text.get(at..).and_then(|t| t.first_chunk::<8>()) {
                debug_assert_eq!(&window[..n], piece);
                let key = u64::from_le_bytes(*window) & ((1u64 << (8 * n)) - 1) | (n as u64) << 56;
                return self.short.get_present(key);
            }
        }
        self.rank_by_length(piece)
    }

    /// [`Lookup::rank`]'s body, inlined into each caller so that each has its own copy of the
    /// branches.
    #[inline(always)]
    fn rank_by_length(&self, bytes: &[u8]) -> Option<Rank> {
        match bytes.len() {
            1 => Some(self.byte[usize::from(bytes[0])]),
            2 => {
                let r = self.pair[two(bytes[0], bytes[1])];
                (r != Rank::MAX).then_some(r)
            }
            n if n <= SHORT_MAX => self.short.get(pack8(bytes)),
            n if n <= INLINE_MAX => self.medium.get(pack16(bytes)),
            n if n <= self.max_len => self.long.get(bytes).copied(),
            _ => None,
        }
    }
}

impl Lookup for TokenTable {
    #[inline]
    fn rank(&self, bytes: &[u8]) -> Option<Rank> {
        self.rank_by_length(bytes)
    }

    #[inline]
    fn rank_bound(&self) -> Rank {
        self.rank_bound
    }

    #[inline]
    fn premerge(&self) -> Option<&PreMerge> {
        Some(&self.premerge)
    }

    #[inline(always)]
    fn prefetch(&self, bytes: &[u8]) {
        match bytes.len() {
            3..=SHORT_MAX => self.short.prefetch(pack8(bytes)),
            n if (SHORT_MAX + 1..=INLINE_MAX).contains(&n) => {
                self.medium.prefetch(pack16(bytes));
            }
            _ => {}
        }
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

/// Byte pairs that a merge can join before it starts, because they would be joined before any
/// other merge touches either byte. This is most of the letters of alphabets written with two
/// bytes per letter (Cyrillic, Greek, Hebrew, Arabic: their letter is a two-byte token), which
/// otherwise cost a merge step each; a piece of such a word then starts from letters. With
/// o200k, 82% of the two-byte letters of the multilingual corpus qualify, and merging that text
/// takes 28% less time.
///
/// The rule: bytes `a b` at positions `i, i + 1` form a token of rank `r`, and
/// 1. no token that ends with the byte before them and `a` (`x a`, at any length from two), and
///    none that starts with `b` and the byte after them (`b y`), has a rank below `r`;
/// 2. no token longer than two bytes that starts or ends with `a b` has a rank below `r`.
///
/// Then BPE joins `a` and `b` before any other merge touches them: until it does, the part
/// left of `a` ends with `x` and the part right of `b` starts with `y`, so joining `a` or `b`
/// with them would make a token of (1), ranked above the pair `a b` that is there all along. And
/// starting with `a b` joined changes no other choice before that: the only new candidates are
/// tokens of (2), ranked above `r`, and every merge made before `a b` is ranked at most `r` (an
/// equal rank is another `a b`, further left). So the result is the same. The conditions are
/// local (the neighbours' bytes never change), so any set of such pairs that do not overlap can
/// be joined at once, and two such pairs cannot overlap (`a b` and `b c` would each have to be
/// ranked below the other).
///
/// A second round does the same for letters written with three bytes (Chinese, Japanese, Thai,
/// the Indian scripts): the first round leaves such a letter as a pair and a byte, `P Q`, and
/// the merge would spend a step per letter joining them. The argument above holds for parts as
/// it does for bytes, so `P Q` (the letter's token, rank `r`) is joined in advance when
/// 3. no token longer than three bytes that starts or ends with the letter ranks below `r`, and
/// 4. joining `P` or `Q` with its neighbour would make a token ranked above `r`: every token
///    ending with the neighbour's last byte and `P` (`x a` or `x a b`), or starting with `Q`
///    and the neighbour's first byte (`c y` or `b c y`), ranks above `r`.
///
/// With o200k this joins most three-byte letters of the multilingual corpus before the merge
/// starts. Measured with and without this round in one process on the same text, Chinese and
/// Japanese text encodes in 56-60% of the time, Thai in 70-74%, Korean and Hindi in 76-93%, and
/// the multilingual corpus as a whole took 11-14% less time (10-12% with cl100k). English and
/// code, which have no such letters, are unchanged: the round starts only at a lead byte.
#[derive(Debug, Clone)]
pub struct PreMerge {
    /// For each two bytes: the rank of their token if it meets (2), else `Rank::MAX`.
    joinable: Box<[Rank]>,
    /// The lowest rank of a token ending with these two bytes (the two-byte token included).
    ending: Box<[Rank]>,
    /// The lowest rank of a token starting with these two bytes.
    starting: Box<[Rank]>,
    /// For each three bytes of a letter (indexed by [`three`]): the rank of its token if it
    /// meets (3), with [`LEFT_PAIR_FREE`] and [`RIGHT_PAIR_FREE`]; else `Rank::MAX`.
    letters: Box<[Rank]>,
    /// The lowest rank of a token ending with `x a b` (key `x << 16 | a << 8 | b`), where `a b`
    /// starts a three-byte letter: (4) for a left part of two bytes. A few hundred keys.
    ending_in_letter: FxHashMap<u32, Rank>,
    /// The lowest rank of a token starting with `b c y`, where `b c` ends a three-byte letter:
    /// (4) for a right part of two bytes.
    starting_in_letter: FxHashMap<u32, Rank>,
}

/// Set in `PreMerge::letters` when no token of three or more bytes ending with the letter's
/// first two bytes ranks below it: (4) holds for a left part `a b` whatever its neighbour, with
/// no need to look up `x a b`. Ranks are below `1 << 28`, so the flags never meet a rank's bits.
const LEFT_PAIR_FREE: Rank = 1 << 31;
/// The same for a right part `b c` and the tokens starting with it.
const RIGHT_PAIR_FREE: Rank = 1 << 30;

/// The index of a three-byte UTF-8 sequence (a lead byte `0xE0..=0xEF`, two continuation bytes)
/// in `PreMerge::letters`: the 16 bits of the character (any such three bytes have their own).
#[inline(always)]
fn three(a: u8, b: u8, c: u8) -> Option<usize> {
    (lead(a) & continuation(b) & continuation(c))
        .then(|| usize::from(a & 0x0F) << 12 | usize::from(b & 0x3F) << 6 | usize::from(c & 0x3F))
}

/// Whether `b` starts a three-byte UTF-8 sequence.
#[inline(always)]
fn lead(b: u8) -> bool {
    b & 0xF0 == 0xE0
}

/// Whether `b` continues a UTF-8 sequence.
#[inline(always)]
fn continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// Three bytes as a key of `PreMerge::ending_in_letter` and `starting_in_letter`.
#[inline(always)]
fn key(x: u8, y: u8, z: u8) -> u32 {
    u32::from(x) << 16 | u32::from(y) << 8 | u32::from(z)
}

/// The index of two bytes in the tables of two-byte strings (`TokenTable::pair`, `PreMerge`).
#[inline(always)]
fn two(a: u8, b: u8) -> usize {
    usize::from(a) << 8 | usize::from(b)
}

impl PreMerge {
    fn new(ranks: &RankMap, pair: &[Rank]) -> Self {
        // One pass over the tokens for both rounds. First round: the lowest rank of the tokens
        // longer than two bytes by their first and last two bytes (1, 2). Second round: of the
        // tokens longer than three bytes by the three-byte letter they start or end with (3),
        // and of the tokens a two-byte part of a letter could make with a neighbour, by their
        // three bytes at the letter's side (4); and the letters themselves.
        let mut longer_ending = vec![Rank::MAX; 1 << 16];
        let mut longer_starting = vec![Rank::MAX; 1 << 16];
        let mut longer_after = vec![Rank::MAX; 1 << 16];
        let mut longer_before = vec![Rank::MAX; 1 << 16];
        let mut ending_in_letter = FxHashMap::<u32, Rank>::default();
        let mut starting_in_letter = FxHashMap::<u32, Rank>::default();
        let mut three_byte_letters = Vec::new();
        let lower = |least: &mut Rank, rank: Rank| *least = (*least).min(rank);
        for (token, &rank) in ranks.iter().filter(|(t, _)| t.len() > 2) {
            let (Some(&[a, b, c]), Some(&[x, y, z])) = (token.first_chunk(), token.last_chunk())
            else {
                continue;
            };
            lower(&mut longer_starting[two(a, b)], rank);
            lower(&mut longer_ending[two(y, z)], rank);
            if let Some(i) = three(a, b, c) {
                if token.len() == 3 {
                    three_byte_letters.push((i, [a, b, c], rank));
                } else {
                    lower(&mut longer_after[i], rank);
                }
            }
            if let Some(i) = three(x, y, z).filter(|_| token.len() > 3) {
                lower(&mut longer_before[i], rank);
            }
            if continuation(a) && continuation(b) {
                lower(starting_in_letter.entry(key(a, b, c)).or_insert(rank), rank);
            }
            if lead(y) && continuation(z) {
                lower(ending_in_letter.entry(key(x, y, z)).or_insert(rank), rank);
            }
        }
        let joinable = (0..1 << 16)
            .map(|i| {
                let r = pair[i];
                if r < longer_ending[i] && r < longer_starting[i] {
                    r
                } else {
                    Rank::MAX
                }
            })
            .collect();
        let mut letters = vec![Rank::MAX; 1 << 16];
        for (i, [a, b, c], rank) in three_byte_letters {
            if rank < longer_after[i] && rank < longer_before[i] {
                let left_free = rank < longer_ending[two(a, b)];
                let right_free = rank < longer_starting[two(b, c)];
                letters[i] = rank
                    | if left_free { LEFT_PAIR_FREE } else { 0 }
                    | if right_free { RIGHT_PAIR_FREE } else { 0 };
            }
        }
        let with_pair = |longer: Vec<Rank>| -> Box<[Rank]> {
            longer.iter().zip(pair).map(|(&l, &p)| l.min(p)).collect()
        };
        Self {
            joinable,
            ending: with_pair(longer_ending),
            starting: with_pair(longer_starting),
            letters: letters.into_boxed_slice(),
            ending_in_letter,
            starting_in_letter,
        }
    }

    /// The rank of the three-byte letter `piece[p..p + 3]`, made of the parts `piece[p..q]` and
    /// `piece[q..p + 3]` (a pair joined by the first round and a byte, in either order), if they
    /// can be joined before merging: (3) was settled in advance, (4) depends on the neighbours'
    /// bytes.
    #[inline(always)]
    fn letter(&self, piece: &[u8], p: usize, q: usize) -> Option<Rank> {
        let end = p + 3;
        let (&a, &b, &c) = (piece.get(p)?, piece.get(p + 1)?, piece.get(p + 2)?);
        let entry = self.letters[three(a, b, c)?];
        if entry == Rank::MAX {
            return None;
        }
        let r = entry & !(LEFT_PAIR_FREE | RIGHT_PAIR_FREE);
        let before = p.checked_sub(1).map(|h| piece[h]);
        let after = piece.get(end).copied();
        let least = |map: &FxHashMap<u32, Rank>, k: u32| map.get(&k).copied().unwrap_or(Rank::MAX);
        let (left, right) = if q == p + 2 {
            // `a b` + `c`.
            let left = match before {
                Some(x) if entry & LEFT_PAIR_FREE == 0 => {
                    least(&self.ending_in_letter, key(x, a, b))
                }
                _ => Rank::MAX,
            };
            (left, after.map_or(Rank::MAX, |y| self.starting[two(c, y)]))
        } else {
            // `a` + `b c`.
            let right = match after {
                Some(y) if entry & RIGHT_PAIR_FREE == 0 => {
                    least(&self.starting_in_letter, key(b, c, y))
                }
                _ => Rank::MAX,
            };
            (before.map_or(Rank::MAX, |x| self.ending[two(x, a)]), right)
        };
        (left > r && right > r).then_some(r)
    }

    /// The rank of the token of `piece[i..i + 2]` if that pair can be joined before merging.
    #[inline(always)]
    fn at(&self, piece: &[u8], i: usize) -> Option<Rank> {
        let (&a, &b) = (piece.get(i)?, piece.get(i + 1)?);
        let r = self.joinable[two(a, b)];
        if r == Rank::MAX {
            return None;
        }
        let left = i
            .checked_sub(1)
            .map_or(Rank::MAX, |h| self.ending[two(piece[h], a)]);
        let right = piece
            .get(i + 2)
            .map_or(Rank::MAX, |&y| self.starting[two(b, y)]);
        (left > r && right > r).then_some(r)
    }
}

/// Pieces up to this many bytes use the flat-array merge; longer ones the heap, then, once they
/// add up to [`BUILD_BACKTRACKER_AFTER`] bytes, the linear-time backtracker. The flat merge is
/// quadratic, but in vector steps of eight keys: up to here it beat the backtracker on the
/// pieces it takes over, the space-less sentences of Chinese and Japanese text (multilingual
/// text took 11% less time with o200k, 9% with cl100k, than with a limit of 64, measured in one
/// process on the same text; Thai, whose pieces are mostly 128-256 bytes, alone was 6-10%
/// slower).
const FLAT_MERGE_MAX_LEN: usize = 512;
/// Pieces up to this many bytes (nearly all) merge in arrays of this size: clearing arrays
/// for 512 bytes would cost a short piece more than its merge.
const FLAT_MERGE_SHORT_LEN: usize = 64;

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
fn pair_rank<L: Lookup>(piece: &[u8], start: usize, end: usize, ranks: &L) -> Rank {
    ranks.rank(&piece[start..end]).unwrap_or(Rank::MAX)
}

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
const fn key_rank_limit(size: usize) -> Rank {
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
fn flat_merge<L: Lookup>(
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
                tests::LETTERS_JOINED.with(|n| n.set(n.get() + 1));
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
    // and four parts: start loading all of those now. Only for pieces of up to 16 bytes: with
    // every piece, cl100k's multilingual text took 8% more time (long pieces of many short
    // parts, whose tables are small enough to stay in cache); with short ones only, English
    // took 2-7% less (o200k and cl100k), o200k's multilingual 1-4% (both builds in one
    // process, medians of per-slice ratios).
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

/// Merge with a min-heap of candidate pairs over a doubly linked list of parts: `O(n log n)`.
/// `on_join` and `emit` as for the flat merge.
/// Stale heap entries are skipped when popped (lazy deletion). Heap entries are single `u64`
/// keys, `rank << 32 | start`, so ties go to the leftmost pair as in the flat merge.
fn heap_merge<L: Lookup>(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_data::random_text;

    fn vocab(tokens: &[&[u8]]) -> (RankMap, [Rank; 256]) {
        let mut ranks = RankMap::default();
        let mut byte_ranks = [0; 256];
        for b in 0..=255u8 {
            ranks.insert(vec![b], u32::from(b));
            byte_ranks[usize::from(b)] = u32::from(b);
        }
        for (i, t) in tokens.iter().enumerate() {
            ranks.insert(t.to_vec(), 256 + i as Rank);
        }
        (ranks, byte_ranks)
    }

    /// The textbook quadratic algorithm, as an oracle.
    fn naive(piece: &[u8], ranks: &RankMap) -> Vec<Rank> {
        let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
        loop {
            let mut best: Option<(Rank, usize)> = None;
            for i in 0..parts.len().saturating_sub(1) {
                let joined = [parts[i].as_slice(), parts[i + 1].as_slice()].concat();
                if let Some(&r) = ranks.get(&joined) {
                    if best.is_none_or(|(br, _)| r < br) {
                        best = Some((r, i));
                    }
                }
            }
            let Some((_, i)) = best else { break };
            let right = parts.remove(i + 1);
            parts[i].extend(right);
        }
        parts.iter().map(|p| ranks[p]).collect()
    }

    #[test]
    fn flat_and_heap_agree_with_naive() {
        let (ranks, byte_ranks) =
            vocab(&[b"ab", b"bc", b"abc", b"aa", b"aaaa", b"ca", b"cab", b"aaa"]);
        let mut seed: u64 = 7;
        // Both array sizes of the flat merge, and past its limit; runs of one letter merge
        // most often (every block minimum changes many times).
        let runs = [65, 200, 512].map(|n| vec![b'a'; n]);
        let random = (1..300)
            .chain([511, 512, 513, 800])
            .map(|len| random_text(&mut seed, len, b"abc"));
        for piece in runs.into_iter().chain(random) {
            let mut via_flat = Vec::new();
            flat_merge(&piece, &ranks, &byte_ranks, |_, _| {}, |r| via_flat.push(r));
            let mut via_heap = Vec::new();
            heap_merge(&piece, &ranks, &byte_ranks, |_, _| {}, |r| via_heap.push(r));
            let table = TokenTable::new(&ranks, &byte_ranks);
            let mut via_table = Vec::new();
            heap_merge(
                &piece,
                &table,
                &byte_ranks,
                |_, _| {},
                |r| via_table.push(r),
            );

            let expected = naive(&piece, &ranks);
            assert_eq!(via_flat, expected, "flat {piece:?}");
            assert_eq!(via_table, expected, "table {piece:?}");
            assert_eq!(via_heap, expected, "heap {piece:?}");
            assert_eq!(count_piece(&piece, &ranks, &byte_ranks), expected.len());
        }
    }

    /// Joining pairs before the merge (`PreMerge`) must not change any result, whatever the
    /// ranks: random vocabularies over a small alphabet, whose ranks follow no training order
    /// (a long token may rank below its parts), against the textbook algorithm.
    #[test]
    fn premerged_pairs_change_nothing_in_random_vocabularies() {
        let mut seed: u64 = 11;
        let mut premerged = 0;
        for round in 0..300 {
            let alphabet: &[u8] = if round % 2 == 0 {
                b"ab\xd0\xbe"
            } else {
                b"abcd"
            };
            let count = 4 + round % 40;
            let mut tokens: Vec<Vec<u8>> = Vec::new();
            while tokens.len() < count {
                let len = 2 + (random_text(&mut seed, 1, b"0123")[0] - b'0') as usize;
                let token = random_text(&mut seed, len, alphabet);
                if !tokens.contains(&token) {
                    tokens.push(token);
                }
            }
            let refs: Vec<&[u8]> = tokens.iter().map(Vec::as_slice).collect();
            let (ranks, byte_ranks) = vocab(&refs);
            let table = TokenTable::new(&ranks, &byte_ranks);
            for len in 1..=40 {
                let piece = random_text(&mut seed, len, alphabet);
                premerged += (0..len)
                    .filter(|&i| table.premerge.at(&piece, i).is_some())
                    .count();
                let mut via_flat = Vec::new();
                flat_merge(&piece, &table, &byte_ranks, |_, _| {}, |r| via_flat.push(r));
                assert_eq!(via_flat, naive(&piece, &ranks), "{tokens:?} {piece:?}");
            }
        }
        // The test means something only if pairs were joined in advance.
        assert!(premerged > 10_000, "{premerged}");
    }

    thread_local! {
        /// Letters joined by the second round on this thread (each test runs on its own).
        pub(super) static LETTERS_JOINED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// The second round (three-byte letters) must not change any result either: random
    /// vocabularies of letters, bytes of letters and strings of both, ranked in random order,
    /// against the textbook algorithm.
    #[test]
    fn joined_letters_change_nothing_in_random_vocabularies() {
        // Three-byte letters (two sharing their first two bytes, one sharing its last two with
        // another), and bytes that split them or stand alone.
        let units: [&[u8]; 10] = [
            b"\xe0\xb8\x81",
            b"\xe0\xb8\x82",
            b"\xe1\xb8\x82",
            b"\xe0\xb8",
            b"\xb8\x82",
            b"\x82a",
            b"a\xe0",
            b"\xe0",
            b"\x81",
            b"a",
        ];
        let mut seed: u64 = 7;
        let pick = |seed: &mut u64, n: usize| -> Vec<u8> {
            (0..n)
                .flat_map(|_| units[usize::from(random_text(seed, 1, b"0123456789")[0] - b'0')])
                .copied()
                .collect()
        };
        let before = LETTERS_JOINED.with(std::cell::Cell::get);
        for round in 0..300 {
            let count = 4 + round % 40;
            // Half the vocabularies start with the letters and their pairs (so the letters
            // rank low, as they do in real ones), in a random order.
            let mut tokens: Vec<Vec<u8>> = Vec::new();
            if round % 2 == 0 {
                while tokens.len() < 5 {
                    let unit = pick(&mut seed, 1);
                    if unit.len() > 1 && !tokens.contains(&unit) {
                        tokens.push(unit);
                    }
                }
            }
            while tokens.len() < count {
                let n = 1 + usize::from(random_text(&mut seed, 1, b"0012")[0] - b'0');
                let token = pick(&mut seed, n);
                if token.len() > 1 && !tokens.contains(&token) {
                    tokens.push(token);
                }
            }
            let refs: Vec<&[u8]> = tokens.iter().map(Vec::as_slice).collect();
            let (ranks, byte_ranks) = vocab(&refs);
            let table = TokenTable::new(&ranks, &byte_ranks);
            for n in 1..=30 {
                let piece = pick(&mut seed, n);
                let mut via_flat = Vec::new();
                flat_merge(&piece, &table, &byte_ranks, |_, _| {}, |r| via_flat.push(r));
                assert_eq!(via_flat, naive(&piece, &ranks), "{tokens:?} {piece:?}");
            }
        }
        // The test means something only if letters were joined in advance.
        let joined = LETTERS_JOINED.with(std::cell::Cell::get) - before;
        assert!(joined > 5_000, "{joined}");
    }

    /// The encoder's whole-piece lookup reads a window of the text past the piece: it must give
    /// `rank`'s answer for every piece at every place, the last bytes of the text included
    /// (where no window of eight bytes fits), for tokens and non-tokens of every length.
    #[test]
    fn whole_piece_lookup_in_text_equals_rank() {
        let tokens: [&[u8]; 12] = [
            b"ab",
            b"abc",
            b"abca",
            b"abcab",
            b"abcabc",
            b"abcabca",
            b"abcabcab",
            b"ca",
            b"cab",
            b"bca",
            b"abcabcabcabcabc",
            b"abcabcabcabcabca",
        ];
        let (ranks, byte_ranks) = vocab(&tokens);
        let table = TokenTable::new(&ranks, &byte_ranks);
        let mut seed = 5;
        let mut texts = vec![b"abcabcabcabcabcabc".to_vec(), b"xabcabca".to_vec()];
        texts.extend((0..20).map(|_| crate::test_data::random_text(&mut seed, 40, b"abcx")));
        let mut found = [0usize; 17];
        for text in &texts {
            for start in 0..text.len() {
                for end in start + 1..=text.len().min(start + 16) {
                    let piece = &text[start..end];
                    let expected = table.rank(piece);
                    assert_eq!(table.piece_rank_in(text, piece), expected, "{piece:?}");
                    assert_eq!(expected, ranks.get(piece).copied(), "{piece:?}");
                    if expected.is_some() {
                        found[piece.len()] += 1;
                    }
                }
            }
        }
        // Every length from 1 to 8 and 15, 16 was found as a token somewhere.
        assert!(
            found[1..=8].iter().chain(&found[15..=16]).all(|&n| n > 0),
            "{found:?}"
        );
    }

    #[test]
    fn whole_piece_and_single_bytes() {
        let (ranks, byte_ranks) = vocab(&[b"ab", b"abc"]);
        let mut out = Vec::new();
        encode_piece(b"abc", &ranks, &byte_ranks, &mut out);
        encode_piece(b"z", &ranks, &byte_ranks, &mut out);
        encode_piece(b"", &ranks, &byte_ranks, &mut out);
        assert_eq!(out, vec![257, u32::from(b'z')]);
    }

    /// Keys pack a rank with a position; ranks at the top of what fits, and ranks that do not
    /// fit (the heap merge then takes over), still give the rule's result, for both array sizes
    /// (the larger one leaves fewer bits to the rank).
    #[test]
    fn ranks_near_and_above_the_key_limit() {
        let tokens: [&[u8]; 6] = [b"ab", b"bc", b"abc", b"aa", b"aaaa", b"ca"];
        let lengths: Vec<usize> = (1..80).chain([100, 300, 511, 512, 513, 700]).collect();
        for size in [FLAT_MERGE_SHORT_LEN, FLAT_MERGE_MAX_LEN] {
            let limit = key_rank_limit(size);
            for first in [limit - tokens.len() as Rank, limit, 1 << 30] {
                let (mut ranks, byte_ranks) = vocab(&[]);
                for (i, t) in tokens.iter().enumerate() {
                    ranks.insert(t.to_vec(), first + i as Rank);
                }
                let mut seed: u64 = 11;
                for &len in &lengths {
                    let piece = random_text(&mut seed, len, b"abc");
                    let mut got = Vec::new();
                    flat_merge(&piece, &ranks, &byte_ranks, |_, _| {}, |r| got.push(r));
                    assert_eq!(got, naive(&piece, &ranks), "first rank {first}, {piece:?}");
                }
            }
        }
    }

    #[test]
    fn backtracker_is_built_once_long_pieces_add_up() {
        let (ranks, byte_ranks) =
            vocab(&[b"ab", b"bc", b"abc", b"aa", b"aaaa", b"ca", b"cab", b"aaa"]);
        let table = TokenTable::new(&ranks, &byte_ranks);
        let mut seed: u64 = 3;
        let piece = random_text(&mut seed, FLAT_MERGE_MAX_LEN + 88, b"abc");
        let expected = naive(&piece, &ranks);
        let mut merged = 0;
        while merged + piece.len() < BUILD_BACKTRACKER_AFTER {
            let mut out = Vec::new();
            merge_piece(&piece, &table, &byte_ranks, &mut out);
            assert_eq!(out, expected);
            merged += piece.len();
            assert!(
                table.backtracker.get().is_none(),
                "built after {merged} bytes"
            );
        }
        // The piece that crosses the line builds it, and merges with it to the same ids.
        let mut out = Vec::new();
        merge_piece(&piece, &table, &byte_ranks, &mut out);
        assert!(matches!(table.backtracker.get(), Some(Some(_))));
        assert_eq!(out, expected);
        // A piece that long on its own builds it at once.
        let fresh = TokenTable::new(&ranks, &byte_ranks);
        let run = random_text(&mut seed, BUILD_BACKTRACKER_AFTER, b"abc");
        let mut via_heap = Vec::new();
        heap_merge(&run, &ranks, &byte_ranks, |_, _| {}, |r| via_heap.push(r));
        let mut out = Vec::new();
        merge_piece(&run, &fresh, &byte_ranks, &mut out);
        assert!(matches!(fresh.backtracker.get(), Some(Some(_))));
        assert_eq!(out, via_heap);
    }

    #[test]
    fn long_run_is_not_quadratic() {
        let (ranks, byte_ranks) = vocab(&[b"aa", b"aaaa", b"aaaaaaaa"]);
        let piece = vec![b'a'; 1_000_000];
        let mut out = Vec::new();
        encode_piece(&piece, &ranks, &byte_ranks, &mut out);
        assert_eq!(out.len(), 125_000);
        assert!(out.iter().all(|&r| r == 258));
    }
}
