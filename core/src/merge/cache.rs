//! A small per-thread cache of recently merged pieces.
//!
//! Most pieces are whole tokens and need one lookup. The rest (a word that is two or three
//! tokens, which is most words in many languages) need a merge with a lookup per candidate pair,
//! and the same such words recur constantly in running text. A direct-mapped table of a few
//! thousand entries, keyed by the piece's bytes and the encoder that produced them, turns those
//! repeats into one probe. It is exact: an entry is used only when the full key matches.
//!
//! Longer pieces that repeat a short unit (indentation, a rule of `-`, alternating whitespace),
//! or are a run of one byte with a byte or two around it (` ====`, `----\n`), are determined by
//! their unit (or those bytes) and length, so a second table keyed by those serves them: such
//! pieces come back again and again in code and markup, and each costs many merges.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::Rank;
use crate::bytes::packed::pack16;
use crate::merge::periodic::period;
use crate::merge::uniform::affixed_run;
use crate::merge::{MergeTable, merge_piece};

const SLOTS: usize = 4096;
/// Pieces of this many bytes at most are cached (their bytes are the key, packed in a `u128`).
const MAX_PIECE: usize = 15;
/// Pieces that merge into more ids than this are not cached.
const MAX_IDS: usize = 4;
/// Repeating pieces up to this many bytes are cached by unit and length (longer ones merge at
/// a small cost per byte), if they merge into at most [`MAX_REPEATING_IDS`] ids.
const MAX_REPEATING_PIECE: usize = 512;
const MAX_REPEATING_IDS: usize = 128;
const REPEATING_SLOTS: usize = 256;

static NEXT_OWNER: AtomicU32 = AtomicU32::new(1);

/// A process-unique number for an encoder, so that one thread's cache never serves ids of one
/// vocabulary to another.
pub fn new_owner() -> u32 {
    NEXT_OWNER.fetch_add(1, Ordering::Relaxed)
}

#[derive(Clone, Copy)]
struct Entry {
    key: u128,
    owner: u32,
    len: u8,
    ids: [Rank; MAX_IDS],
}

const EMPTY: Entry = Entry {
    key: 0,
    owner: 0,
    len: 0,
    ids: [0; MAX_IDS],
};

/// A repeating piece: its unit (packed), its length, and its ids.
#[derive(Clone, Default)]
struct RepeatingEntry {
    unit: u128,
    len: u32,
    owner: u32,
    ids: Vec<Rank>,
}

pub struct PieceCache {
    entries: Box<[Entry]>,
    repeating: Box<[RepeatingEntry]>,
}

thread_local! {
    static CACHE: RefCell<PieceCache> = RefCell::new(PieceCache {
        entries: vec![EMPTY; SLOTS].into_boxed_slice(),
        repeating: vec![RepeatingEntry::default(); REPEATING_SLOTS].into_boxed_slice(),
    });
}

/// Run `f` with this thread's cache (or with none if it is already in use on this thread).
pub fn with_cache<R>(f: impl FnOnce(Option<&mut PieceCache>) -> R) -> R {
    CACHE.with(|cell| match cell.try_borrow_mut() {
        Ok(mut cache) => f(Some(&mut cache)),
        Err(_) => f(None),
    })
}

#[inline]
fn slot(key: u128, owner: u32) -> usize {
    let mixed =
        (key as u64 ^ (key >> 64) as u64 ^ u64::from(owner)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> 52) as usize & (SLOTS - 1)
}

impl PieceCache {
    /// Append the ids of `piece`, which is known not to be a single token.
    #[inline]
    pub fn merge(
        &mut self,
        owner: u32,
        piece: &[u8],
        table: &MergeTable,
        byte_ranks: &[Rank; 256],
        out: &mut Vec<Rank>,
    ) {
        if piece.len() > MAX_PIECE {
            match (piece.len() <= MAX_REPEATING_PIECE)
                .then(|| repeating_key(piece))
                .flatten()
            {
                Some(key) => self.merge_repeating(owner, piece, key, table, byte_ranks, out),
                None => merge_piece(piece, table, byte_ranks, out),
            }
            return;
        }
        let key = pack16(piece);
        let entry = &mut self.entries[slot(key, owner)];
        if entry.owner == owner && entry.key == key {
            out.extend_from_slice(&entry.ids[..usize::from(entry.len)]);
            return;
        }
        let start = out.len();
        merge_piece(piece, table, byte_ranks, out);
        let ids = &out[start..];
        if ids.len() <= MAX_IDS {
            entry.key = key;
            entry.owner = owner;
            entry.len = ids.len() as u8;
            entry.ids[..ids.len()].copy_from_slice(ids);
        }
    }
}

impl PieceCache {
    /// Append the ids of `piece`, which `key` and its length name (see [`repeating_key`]).
    fn merge_repeating(
        &mut self,
        owner: u32,
        piece: &[u8],
        key: u128,
        table: &MergeTable,
        byte_ranks: &[Rank; 256],
        out: &mut Vec<Rank>,
    ) {
        let len = piece.len() as u32;
        let entry = &mut self.repeating[repeating_slot(key, len, owner)];
        if entry.owner == owner && entry.key_is(key, len) {
            out.extend_from_slice(&entry.ids);
            return;
        }
        let start = out.len();
        merge_piece(piece, table, byte_ranks, out);
        let ids = &out[start..];
        if ids.len() <= MAX_REPEATING_IDS {
            entry.unit = key;
            entry.len = len;
            entry.owner = owner;
            entry.ids.clear();
            entry.ids.extend_from_slice(ids);
        }
    }
}

/// What names a piece of up to [`MAX_REPEATING_PIECE`] bytes with its length, if it is one
/// of the regular kinds: its repeated unit (packed), or for a run with a byte or two before or
/// after it, those bytes and the run's byte (packed) and where the run starts (bits 124-125,
/// which a unit leaves zero).
#[inline]
fn repeating_key(piece: &[u8]) -> Option<u128> {
    if let Some(unit) = period(piece) {
        return Some(pack16(&piece[..unit]));
    }
    let (start, end) = affixed_run(piece)?;
    let mut named = [0u8; 8];
    named[..=start].copy_from_slice(&piece[..=start]);
    let affixes = piece.len() - end;
    named[start + 1..start + 1 + affixes].copy_from_slice(&piece[end..]);
    Some(pack16(&named[..start + 1 + affixes]) | (start as u128 + 1) << 124)
}

/// The slot of a repeating piece with unit `key` (packed) and length `len`.
#[inline]
pub(super) fn repeating_slot(key: u128, len: u32, owner: u32) -> usize {
    slot(key ^ u128::from(len) << 64, owner) % REPEATING_SLOTS
}

impl RepeatingEntry {
    #[inline]
    fn key_is(&self, unit: u128, len: u32) -> bool {
        self.unit == unit && self.len == len
    }
}

/// Append the ids of `piece` using `cache` when there is one.
#[inline]
pub fn encode_cached(
    cache: &mut Option<&mut PieceCache>,
    owner: u32,
    text: &[u8],
    piece: &[u8],
    table: &MergeTable,
    byte_ranks: &[Rank; 256],
    out: &mut Vec<Rank>,
) {
    if let Some(rank) = table.piece_rank_in(text, piece) {
        out.push(rank);
    } else if let Some(cache) = cache {
        cache.merge(owner, piece, table, byte_ranks, out);
    } else {
        merge_piece(piece, table, byte_ranks, out);
    }
}
