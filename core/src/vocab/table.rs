//! The token table: every ordinary token's rank, laid out for the encoder's lookups.

use std::ops::Range;

use super::RankMap;
use super::buckets::{MediumTable, ShortTable};
use crate::Rank;
use crate::bytes::packed::{pack8, pack16, unpack8, unpack16};

/// The longest token kept inline by [`TokenTable`]: in a `u64` key up to `SHORT_MAX` bytes, in
/// a `u128` key up to `INLINE_MAX`.
pub(crate) const SHORT_MAX: usize = 7;
pub(crate) const INLINE_MAX: usize = 15;

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
        }
    }

    /// Every token with its rank, in no particular order: the bytes of all of them back to back,
    /// and where each one's are (one buffer, not an allocation per token: building the
    /// linear-time merge's tables allocated, sorted and freed 200k small vectors for o200k).
    pub(crate) fn tokens(&self) -> (Vec<u8>, Vec<(Range<usize>, Rank)>) {
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
    /// lookup for every piece (most pieces of prose are one token).
    ///
    /// This is the merge's rank lookup inlined into the encoder's loop, so that its branches
    /// (on the piece's length, on finding it) are predicted from their own history rather than
    /// sharing it with the merge's lookups, which mostly miss. A piece of 3 to 7 bytes (most
    /// pieces) is read with one 8-byte load from `text`, masked to its length, instead of the
    /// two length-dependent loads of `pack8`, and skips the Bloom filter, which for whole
    /// pieces would nearly always answer "maybe".
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
    pub(crate) fn rank_by_length(&self, bytes: &[u8]) -> Option<Rank> {
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

    /// The length in bytes of the longest token.
    #[inline(always)]
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// One past the highest rank.
    #[inline(always)]
    pub fn rank_bound(&self) -> Rank {
        self.rank_bound
    }

    /// The rank of every single byte.
    #[inline(always)]
    pub fn byte_ranks(&self) -> &[Rank; 256] {
        &self.byte
    }

    /// The rank of each two-byte token, indexed by [`two`] (`Rank::MAX`: no token).
    pub(crate) fn pair_ranks(&self) -> &[Rank] {
        &self.pair
    }

    /// Start loading what a lookup of `bytes` will read.
    #[inline(always)]
    pub fn prefetch(&self, bytes: &[u8]) {
        match bytes.len() {
            3..=SHORT_MAX => self.short.prefetch(pack8(bytes)),
            n if (SHORT_MAX + 1..=INLINE_MAX).contains(&n) => {
                self.medium.prefetch(pack16(bytes));
            }
            _ => {}
        }
    }
}

/// The index of two bytes in the tables of two-byte strings (`TokenTable::pair`, `PreMerge`).
#[inline(always)]
pub(crate) fn two(a: u8, b: u8) -> usize {
    usize::from(a) << 8 | usize::from(b)
}
