//! A per-thread cache of merged chunks, as `merge::cache` is for pieces: running text repeats
//! the same words, and a chunk (mostly a word with its leading space) that is not one piece
//! needs a merge. A direct-mapped table keyed by the chunk's bytes and the encoder that made
//! the entry; exact, since an entry is used only when the whole key matches.
//!
//! Chunks of one character (the scripts a vocabulary hardly covers are cut into them) have a
//! table of their own keyed by the code point, which costs less than hashing a chunk.

use std::cell::RefCell;

use crate::Rank;

const SLOTS: usize = 8192;
/// Chunks of this many bytes at most are cached.
pub(super) const MAX_CHUNK: usize = 32;
/// Chunks that merge into more ids than this are not cached.
const MAX_IDS: usize = 6;

/// 64 bytes: one cache line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Entry {
    key: [u8; MAX_CHUNK],
    len: u8,
    count: u8,
    owner: u32,
    ids: [Rank; MAX_IDS],
}

const EMPTY: Entry = Entry {
    key: [0; MAX_CHUNK],
    len: 0,
    count: 0,
    owner: 0,
    ids: [0; MAX_IDS],
};

const CHAR_SLOTS: usize = 4096;
/// A character merges into at most this many ids (its UTF-8 bytes).
const CHAR_IDS: usize = 4;

#[derive(Clone, Copy)]
struct CharEntry {
    owner: u32,
    /// The code point; `u32::MAX` for an empty slot.
    ch: u32,
    count: u32,
    ids: [Rank; CHAR_IDS],
}

const NO_CHAR: CharEntry = CharEntry {
    owner: 0,
    ch: u32::MAX,
    count: 0,
    ids: [0; CHAR_IDS],
};

pub(super) struct ChunkCache {
    entries: Box<[Entry]>,
    chars: Box<[CharEntry]>,
}

thread_local! {
    static CACHE: RefCell<ChunkCache> = RefCell::new(ChunkCache {
        entries: vec![EMPTY; SLOTS].into_boxed_slice(),
        chars: vec![NO_CHAR; CHAR_SLOTS].into_boxed_slice(),
    });
}

/// Run `f` with this thread's cache, or with none if it is in use further up this thread.
pub(super) fn with_chunk_cache<R>(f: impl FnOnce(Option<&mut ChunkCache>) -> R) -> R {
    CACHE.with(|cell| match cell.try_borrow_mut() {
        Ok(mut cache) => f(Some(&mut cache)),
        Err(_) => f(None),
    })
}

#[inline(always)]
fn key_of(chunk: &[u8]) -> [u8; MAX_CHUNK] {
    let mut key = [0u8; MAX_CHUNK];
    key[..chunk.len()].copy_from_slice(chunk);
    key
}

/// The key's bytes as four words (an array comparison would call `memcmp`).
#[inline(always)]
fn words(key: &[u8; MAX_CHUNK]) -> [u64; 4] {
    let word = |i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&key[i..i + 8]);
        u64::from_le_bytes(w)
    };
    [word(0), word(8), word(16), word(24)]
}

#[inline(always)]
fn same_key(a: &[u8; MAX_CHUNK], b: &[u8; MAX_CHUNK]) -> bool {
    let (a, b) = (words(a), words(b));
    (a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]) == 0
}

#[inline(always)]
fn slot(key: &[u8; MAX_CHUNK], len: usize, owner: u32) -> usize {
    let [a, b, c, d] = words(key);
    let mixed = (a.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ b.rotate_left(21)
        ^ c.rotate_left(42)
        ^ d.rotate_left(11)
        ^ (len as u64) << 56
        ^ u64::from(owner))
    .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> (64 - SLOTS.trailing_zeros())) as usize
}

impl ChunkCache {
    /// Append the ids of `chunk` (at most [`MAX_CHUNK`] bytes): from the cache, or from `merge`,
    /// which appends them to `out` and whose result is then kept.
    #[inline]
    pub(super) fn get_or_merge(
        &mut self,
        owner: u32,
        chunk: &[u8],
        out: &mut Vec<Rank>,
        merge: impl FnOnce(&mut Vec<Rank>),
    ) {
        let key = key_of(chunk);
        let entry = &mut self.entries[slot(&key, chunk.len(), owner)];
        if entry.owner == owner
            && usize::from(entry.len) == chunk.len()
            && same_key(&entry.key, &key)
        {
            out.extend_from_slice(&entry.ids[..usize::from(entry.count)]);
            return;
        }
        let start = out.len();
        merge(out);
        let ids = &out[start..];
        if ids.len() <= MAX_IDS {
            entry.key = key;
            entry.len = chunk.len() as u8;
            entry.owner = owner;
            entry.count = ids.len() as u8;
            entry.ids[..ids.len()].copy_from_slice(ids);
        }
    }

    /// Append the ids of the one-character chunk `ch`: from the cache, or from `merge`, as
    /// [`Self::get_or_merge`].
    #[inline]
    pub(super) fn get_or_merge_char(
        &mut self,
        owner: u32,
        ch: char,
        out: &mut Vec<Rank>,
        merge: impl FnOnce(&mut Self, &mut Vec<Rank>),
    ) {
        let code = ch as u32;
        let mixed = (u64::from(code) ^ u64::from(owner) << 32).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let slot = (mixed >> (64 - CHAR_SLOTS.trailing_zeros())) as usize;
        let entry = self.chars[slot];
        if entry.ch == code && entry.owner == owner {
            out.extend_from_slice(&entry.ids[..entry.count as usize]);
            return;
        }
        let start = out.len();
        merge(self, out);
        let ids = &out[start..];
        if ids.len() <= CHAR_IDS {
            let entry = &mut self.chars[slot];
            entry.owner = owner;
            entry.ch = code;
            entry.count = ids.len() as u32;
            entry.ids[..ids.len()].copy_from_slice(ids);
        }
    }
}
