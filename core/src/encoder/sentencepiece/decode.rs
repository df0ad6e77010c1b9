//! Ids back to text, by sentencepiece's rules (`SentencePieceProcessor::Decode`) or by those of
//! `tokenizers`' ByteFallback, Fuse and Strip decoders.

use super::{DecoderKind, PieceKind, SentencePieceEncoder};
use crate::{Error, Rank};

/// Append `bytes` as sentencepiece's `ProcessBytePieces` does: each valid character as itself,
/// each byte that starts no valid character as one U+FFFD.
fn push_bytes_per_char(bytes: &[u8], out: &mut String) {
    let mut at = 0;
    while at < bytes.len() {
        let len = super::merge::char_len(bytes[at]);
        match bytes.get(at..at + len).map(std::str::from_utf8) {
            Some(Ok(c)) => {
                out.push_str(c);
                at += len;
            }
            _ => {
                out.push('\u{FFFD}');
                at += 1;
            }
        }
    }
}

/// Append `bytes` as `tokenizers`' ByteFallback decoder does: the whole run if it is UTF-8,
/// else one U+FFFD per byte.
fn push_bytes_whole(bytes: &[u8], out: &mut String) {
    match std::str::from_utf8(bytes) {
        Ok(s) => out.push_str(s),
        Err(_) => out.extend(std::iter::repeat_n('\u{FFFD}', bytes.len())),
    }
}

impl SentencePieceEncoder {
    /// The text of `ids` by this encoder's decoder rule. `keep_special`: the `tokenizers` rule
    /// writes special tokens as their text (its `skip_special_tokens=False`); sentencepiece's
    /// rule always decodes control pieces as nothing.
    pub fn decode(&self, ids: &[Rank], keep_special: bool) -> Result<String, Error> {
        match self.decoder {
            DecoderKind::SentencePiece => self.decode_sentencepiece(ids),
            DecoderKind::Hf => self.decode_hf(ids, keep_special),
        }
    }

    fn piece_of(&self, id: Rank) -> Result<(&str, PieceKind), Error> {
        self.pieces
            .get(id as usize)
            .map(|(p, _, k)| (p.as_str(), *k))
            .ok_or(Error::UnknownId(u64::from(id)))
    }

    fn push_replaced(&self, piece: &str, out: &mut String) {
        for c in piece.chars() {
            out.push(if c == self.replacement { ' ' } else { c });
        }
    }

    fn decode_sentencepiece(&self, ids: &[Rank]) -> Result<String, Error> {
        let mut text = String::with_capacity(ids.len() * 4);
        let mut bytes = Vec::new();
        // Whether a leading replacement may still be dropped (the dummy prefix), and whether
        // the last piece dropped one.
        let mut at_start = true;
        let mut dropped = false;
        let strips =
            self.prepend != super::Prepend::Never || self.normalizer.remove_extra_whitespaces;
        for &id in ids {
            let (piece, kind) = self.piece_of(id)?;
            if kind == PieceKind::Byte {
                bytes.push(self.byte_of[id as usize]);
                continue;
            }
            push_bytes_per_char(&bytes, &mut text);
            bytes.clear();
            if dropped || !text.is_empty() {
                at_start = false;
            }
            dropped = false;
            match kind {
                PieceKind::Control => {}
                PieceKind::Unknown => text.push_str(&self.unk_surface),
                _ => {
                    let mut piece = piece;
                    if at_start && strips {
                        if let Some(rest) = piece.strip_prefix(self.replacement) {
                            piece = rest;
                            // With extra whitespace removed, every leading one goes.
                            dropped = !self.normalizer.remove_extra_whitespaces;
                        }
                    }
                    self.push_replaced(piece, &mut text);
                }
            }
        }
        push_bytes_per_char(&bytes, &mut text);
        Ok(text)
    }

    fn decode_hf(&self, ids: &[Rank], keep_special: bool) -> Result<String, Error> {
        let mut text = String::with_capacity(ids.len() * 4);
        let mut bytes = Vec::new();
        for &id in ids {
            let (piece, kind) = self.piece_of(id)?;
            if kind == PieceKind::Byte {
                bytes.push(self.byte_of[id as usize]);
                continue;
            }
            push_bytes_whole(&bytes, &mut text);
            bytes.clear();
            match kind {
                // Fuse joins them with the rest, so Strip may take a leading space of theirs.
                PieceKind::Control if keep_special => text.push_str(piece),
                PieceKind::Control => {}
                PieceKind::Unknown => text.push_str(&self.unk_surface),
                _ => self.push_replaced(piece, &mut text),
            }
        }
        push_bytes_whole(&bytes, &mut text);
        if self.prepend != super::Prepend::Never && text.starts_with(' ') {
            text.remove(0);
        }
        Ok(text)
    }
}
