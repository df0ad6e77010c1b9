//! A table of what each one-character chunk of the Basic Multilingual Plane encodes to.
//!
//! Scripts a vocabulary hardly covers (Devanagari, Thai, Hangul and most of CJK for Llama 2)
//! are cut into one-character chunks, one per character of the text. Indexing by code point
//! keeps a script's entries on a few cache lines, where the hashed chunk cache spreads them
//! over as many lines as characters and hashes each one.

use super::SentencePieceEncoder;
use super::merge::{MergeScratch, NONE};
use crate::Rank;

/// The first code point of the table (ASCII chunks take the general path).
const FIRST: u32 = 0x80;
/// The end of the table: the Basic Multilingual Plane.
const END: u32 = 0x1_0000;
/// The entry of a character that encodes to its UTF-8 bytes' byte pieces.
const AS_BYTES: Rank = NONE - 1;

impl SentencePieceEncoder {
    /// By code point below U+10000: the mergeable piece of that one character, or [`NONE`].
    /// The merge's symbols start as characters, each looked up once.
    pub(super) fn char_piece_table(&self) -> Box<[Rank]> {
        let mut buf = [0u8; 4];
        (0..END)
            .map(|code| match char::from_u32(code) {
                Some(c) => {
                    let bytes = c.encode_utf8(&mut buf).as_bytes();
                    self.lookup_in(bytes, bytes).unwrap_or(NONE)
                }
                None => NONE,
            })
            .collect()
    }

    /// The mergeable piece of the character of `len` bytes at `at` in `text`, or [`NONE`].
    #[inline(always)]
    pub(super) fn char_piece(&self, text: &[u8], at: usize, len: usize) -> Rank {
        let code = code_point(&text[at..], len);
        match self.char_pieces.get(code as usize) {
            Some(&id) => id,
            None => self.lookup_in(text, &text[at..at + len]).unwrap_or(NONE),
        }
    }

    /// The table: one id, [`AS_BYTES`], or [`NONE`] where the encoding is anything else (the
    /// general path handles it).
    pub(super) fn char_table(&self) -> Box<[Rank]> {
        if !self.cacheable {
            return Box::default();
        }
        let mut scratch = MergeScratch::default();
        let mut ids = Vec::new();
        let mut buf = [0u8; 4];
        (FIRST..END)
            .map(|code| {
                let Some(c) = char::from_u32(code) else {
                    return NONE;
                };
                let chunk = c.encode_utf8(&mut buf);
                ids.clear();
                self.encode_cached(chunk, &mut scratch, None, &mut ids);
                match ids[..] {
                    [id] if id < AS_BYTES => id,
                    _ if self.byte_fallback
                        && ids.len() == chunk.len()
                        && ids
                            .iter()
                            .zip(chunk.bytes())
                            .all(|(&id, b)| id == self.byte_ids[usize::from(b)]) =>
                    {
                        AS_BYTES
                    }
                    _ => NONE,
                }
            })
            .collect()
    }

    /// Append the ids of the one-character chunk `bytes` (not ASCII) from the table; false
    /// where the table does not have them.
    #[inline(always)]
    pub(super) fn push_char_ids(&self, bytes: &[u8], out: &mut Vec<Rank>) -> bool {
        self.push_ids_of_char(code_point(bytes, bytes.len()), bytes, out)
    }

    /// [`Self::push_char_ids`] of the character `code`, whose UTF-8 is `bytes`.
    #[inline(always)]
    pub(super) fn push_ids_of_char(&self, code: u32, bytes: &[u8], out: &mut Vec<Rank>) -> bool {
        let Some(&entry) = self.char_ids.get(code.wrapping_sub(FIRST) as usize) else {
            return false;
        };
        match entry {
            NONE => false,
            AS_BYTES => {
                out.extend(bytes.iter().map(|&b| self.byte_ids[usize::from(b)]));
                true
            }
            id => {
                out.push(id);
                true
            }
        }
    }
}

/// The code point of the UTF-8 character of `len` bytes at the start of `bytes` (valid UTF-8).
#[inline(always)]
pub(super) fn code_point(bytes: &[u8], len: usize) -> u32 {
    let cont = |i: usize| u32::from(bytes[i] & 0x3F);
    match len {
        1 => u32::from(bytes[0]),
        2 => u32::from(bytes[0] & 0x1F) << 6 | cont(1),
        3 => u32::from(bytes[0] & 0x0F) << 12 | cont(1) << 6 | cont(2),
        _ => u32::from(bytes[0] & 0x07) << 18 | cont(1) << 12 | cont(2) << 6 | cont(3),
    }
}
