//! SentencePiece's BPE model, in sentencepiece's flavour (merge by piece score, `bpe_model.cc`)
//! or Hugging Face's (merge by the rank of a merge list, `tokenizers`' BPE with Metaspace).
//!
//! Text is normalized (`normalize.rs`: whitespace escaped to the replacement character, the
//! dummy prefix), cut into chunks that no merge can cross (`chunks.rs`), and each chunk merged
//! (`merge.rs`) through a per-thread cache of chunks (`cache.rs`); chunks of one character come
//! from a table by code point (`char_table.rs`), and the score rule looks its joins up by id
//! (`join_table.rs`). Decoding follows the flavour's decoder (`decode.rs`). The vocabulary is
//! checked and indexed in `build.rs`.

use aho_corasick::AhoCorasick;
use rustc_hash::FxHashMap;

use super::{Encoder, SpecialMatcher};
use crate::batch::with_scratch;
use crate::pretokenize::Scanner;
use crate::vocab::{TokenTable, Tokens};
use crate::{Error, Rank};

mod build;
mod cache;
mod char_table;
mod chunks;
mod decode;
mod join_table;
mod merge;
mod normalize;
mod queue;
#[cfg(test)]
mod tests;
mod uniform;

use chunks::Cut;
use merge::{NONE, char_len, with_merge_scratch};
use normalize::Normalizer;

/// A piece's type, sentencepiece's `ModelProto.SentencePiece.Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PieceKind {
    Normal,
    Unknown,
    Control,
    UserDefined,
    Unused,
    Byte,
}

impl PieceKind {
    /// The type of the proto's number (1 NORMAL ... 6 BYTE).
    pub fn from_number(n: i32) -> Option<Self> {
        Some(match n {
            1 => PieceKind::Normal,
            2 => PieceKind::Unknown,
            3 => PieceKind::Control,
            4 => PieceKind::UserDefined,
            5 => PieceKind::Unused,
            6 => PieceKind::Byte,
            _ => return None,
        })
    }

    /// The proto's number for this type.
    pub fn number(self) -> i32 {
        match self {
            PieceKind::Normal => 1,
            PieceKind::Unknown => 2,
            PieceKind::Control => 3,
            PieceKind::UserDefined => 4,
            PieceKind::Unused => 5,
            PieceKind::Byte => 6,
        }
    }

    /// Whether sentencepiece's merge may produce pieces of this type.
    fn mergeable(self) -> bool {
        matches!(
            self,
            PieceKind::Normal | PieceKind::UserDefined | PieceKind::Unused
        )
    }
}

/// Where the dummy prefix (the replacement character) goes before a segment of text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prepend {
    /// Before every segment (sentencepiece's `add_dummy_prefix`; the `Prepend` normalizer).
    Always,
    /// Before every segment that does not start with it (`Metaspace`'s "always").
    AlwaysUnlessPresent,
    /// Only before the segment at offset 0 of the text, if it does not start with it.
    First,
    Never,
}

/// Which decoder's rules `decode` follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecoderKind {
    SentencePiece,
    Hf,
}

/// Everything a [`SentencePieceEncoder`] is built from.
#[derive(Debug, Clone)]
pub struct SentencePieceSpec {
    /// `(piece, score, type)`; the id is the index.
    pub pieces: Vec<(String, f32, PieceKind)>,
    /// `None`: merge by score. Some: Hugging Face's merge list, `(left, right)` ids, by priority.
    pub merges: Option<Vec<(Rank, Rank)>>,
    pub byte_fallback: bool,
    pub unk_id: Option<Rank>,
    pub prepend: Prepend,
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
    pub treat_whitespace_as_suffix: bool,
    pub replacement: char,
    pub split_on_replacement: bool,
    pub precompiled_charsmap: Option<Vec<u8>>,
    pub fuse_unk: bool,
    pub ignore_merges: bool,
    pub decoder: DecoderKind,
    pub unk_surface: String,
    pub special_tokens: Vec<(String, Rank)>,
}

impl SentencePieceSpec {
    /// sentencepiece's defaults for `pieces`: score merges, identity normalization with the
    /// dummy prefix and escaped whitespace, `unk_id` 0.
    pub fn new(pieces: Vec<(String, f32, PieceKind)>) -> Self {
        Self {
            pieces,
            merges: None,
            byte_fallback: false,
            unk_id: Some(0),
            prepend: Prepend::Always,
            remove_extra_whitespaces: true,
            escape_whitespaces: true,
            treat_whitespace_as_suffix: false,
            replacement: '\u{2581}',
            split_on_replacement: false,
            precompiled_charsmap: None,
            fuse_unk: false,
            ignore_merges: false,
            decoder: DecoderKind::SentencePiece,
            unk_surface: " \u{2047} ".into(),
            special_tokens: Vec::new(),
        }
    }
}

/// What the score rule needs beside the table.
#[derive(Debug, Clone)]
struct ScoreRules {
    /// By id: the position of the piece's score among all scores, highest first.
    score_rank: Vec<u32>,
    /// By mergeable id: sentencepiece's `PieceToId` of its text (a reserved piece of the same
    /// text wins).
    final_id: Vec<Rank>,
    /// The CONTROL, UNKNOWN and BYTE pieces by text.
    reserved: FxHashMap<Vec<u8>, Rank>,
    unused: Vec<bool>,
    has_unused: bool,
    /// The USER_DEFINED pieces, matched longest first.
    user: Option<AhoCorasick>,
    /// The score rank and id of every piece that two pieces spell, by their ids
    /// (`join_table.rs`); `None` where a symbol without an id could still join.
    joins: Option<join_table::JoinTable>,
    /// Whether every score rank is below `merge::FLAT_RANK_LIMIT` (short chunks then merge by
    /// scanning 32-bit keys; else all by the queue).
    flat_keys_fit: bool,
}

/// A SentencePiece BPE encoder (see the module documentation).
#[derive(Debug, Clone)]
pub struct SentencePieceEncoder {
    pieces: Vec<(String, f32, PieceKind)>,
    /// The mergeable pieces (score rule) or every token (rank rule), bytes to id; ids absent
    /// from the single-byte table are `NONE`.
    table: TokenTable,
    score: Option<ScoreRules>,
    /// `(left << 32 | right)` -> (rank, merged id).
    merges: Option<FxHashMap<u64, (u32, Rank)>>,
    byte_ids: [Rank; 256],
    /// By id: the byte of a BYTE piece.
    byte_of: Vec<u8>,
    /// By id: whether the piece's own text, merged alone, is that one piece.
    whole: Vec<bool>,
    unk: Rank,
    byte_fallback: bool,
    /// Whether a run of unknown pieces is one unknown id.
    fuse_unknown: bool,
    fuse_unk: bool,
    ignore_merges: bool,
    normalizer: Normalizer,
    prepend: Prepend,
    replacement: char,
    /// The whitespace character of normalized text (the replacement when it is escaped).
    cut_char: char,
    /// Where the whitespace rule cuts, and the pair rule's table (see `chunks.rs`).
    cut: Cut,
    joinable: Option<chunks::PairRule>,
    /// Whether chunks may be cached (not when UNUSED pieces make results depend on the whole
    /// text).
    cacheable: bool,
    /// By code point from U+0080 below U+10000: what a chunk of that one character encodes to
    /// (see `char_table.rs`); empty when chunks are not cacheable.
    char_ids: Box<[Rank]>,
    /// By code point below U+10000: the mergeable piece of that character (`char_table.rs`);
    /// empty without the score rule's join table.
    char_pieces: Box<[Rank]>,
    decoder: DecoderKind,
    unk_surface: String,
    tokens: Tokens,
    owner: u32,
}

thread_local! {
    static NORMALIZED: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    static COUNTED: std::cell::RefCell<Vec<Rank>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl SentencePieceEncoder {
    /// The pieces as `(piece, score, type)`, by id.
    pub fn pieces(&self) -> &[(String, f32, PieceKind)] {
        &self.pieces
    }

    /// The piece of `id`.
    pub fn id_to_piece(&self, id: Rank) -> Option<&str> {
        self.pieces.get(id as usize).map(|p| p.0.as_str())
    }

    /// The id of `piece` (sentencepiece's `PieceToId` without the unknown fallback).
    pub fn piece_to_id(&self, piece: &str) -> Option<Rank> {
        if let Some(rules) = &self.score {
            if let Some(&id) = rules.reserved.get(piece.as_bytes()) {
                return Some(id);
            }
        }
        if let Some(id) = self.lookup_in(piece.as_bytes(), piece.as_bytes()) {
            return Some(id);
        }
        self.pieces
            .iter()
            .position(|p| p.0 == piece)
            .map(|i| i as Rank)
    }

    /// Encode one segment of text (between special tokens); `first`: it starts the text.
    pub fn encode_segment(&self, text: &str, first: bool, out: &mut Vec<Rank>) {
        let prefix = match self.prepend {
            Prepend::Always | Prepend::AlwaysUnlessPresent => true,
            Prepend::First => first,
            Prepend::Never => false,
        };
        with_scratch(&NORMALIZED, |norm| {
            self.normalizer.normalize(text, prefix, norm);
            self.encode_normalized(norm, out);
        });
    }

    /// Append the ids of a normalized segment.
    fn encode_normalized(&self, norm: &str, out: &mut Vec<Rank>) {
        if norm.is_empty() {
            return;
        }
        if self.ignore_merges && self.merges.is_some() && self.cut != Cut::EverySpace {
            if let Some(id) = self.lookup_in(norm.as_bytes(), norm.as_bytes()) {
                out.push(id);
                return;
            }
        }
        let segment_start = out.len();
        with_merge_scratch(|scratch| {
            cache::with_chunk_cache(|mut cache| {
                self.for_each_chunk(norm, |chunk, lone| {
                    let before = out.len();
                    if lone == chunks::NOT_LONE
                        || !self.push_ids_of_char(lone, chunk.as_bytes(), out)
                    {
                        self.encode_chunk(chunk, scratch, cache.as_deref_mut(), out);
                    }
                    // A run of unknown characters across a cut is still one unknown id.
                    if self.fuse_unknown
                        && before > segment_start
                        && out.len() > before
                        && out[before] == self.unk
                        && out[before - 1] == self.unk
                    {
                        out.remove(before);
                    }
                });
            });
        });
    }

    fn encode_chunk(
        &self,
        chunk: &str,
        scratch: &mut merge::MergeScratch,
        cache: Option<&mut cache::ChunkCache>,
        out: &mut Vec<Rank>,
    ) {
        let bytes = chunk.as_bytes();
        // One character (not ASCII): the table, which agrees with every path below.
        let first = bytes.first().copied().unwrap_or(0);
        let one_char = first >= 0x80 && bytes.len() == char_len(first);
        if one_char && self.push_char_ids(bytes, out) {
            return;
        }
        if self.ignore_merges && self.cut == Cut::EverySpace {
            if let Some(id) = self.lookup_in(bytes, bytes) {
                out.push(id);
                return;
            }
        }
        if !self.cacheable {
            return self.merge_chunk(chunk, scratch, out);
        }
        match (cache, chunk.chars().next().filter(|_| one_char)) {
            (Some(cache), Some(ch)) => {
                cache.get_or_merge_char(self.owner, ch, out, |cache, out| {
                    self.encode_cached(chunk, scratch, Some(cache), out)
                })
            }
            (cache, _) => self.encode_cached(chunk, scratch, cache, out),
        }
    }

    /// Append the ids of `chunk` of a cacheable model: a whole piece, or a merge through the
    /// chunk cache.
    fn encode_cached(
        &self,
        chunk: &str,
        scratch: &mut merge::MergeScratch,
        cache: Option<&mut cache::ChunkCache>,
        out: &mut Vec<Rank>,
    ) {
        let bytes = chunk.as_bytes();
        if let Some(id) = self.lookup_in(bytes, bytes) {
            if self.whole[id as usize] {
                out.push(self.final_id(id));
                return;
            }
        }
        match cache.filter(|_| bytes.len() <= cache::MAX_CHUNK) {
            Some(cache) => cache.get_or_merge(self.owner, bytes, out, |out| {
                self.merge_chunk(chunk, scratch, out)
            }),
            None => self.merge_chunk(chunk, scratch, out),
        }
    }

    /// The id a whole-piece chunk encodes to.
    #[inline]
    fn final_id(&self, id: Rank) -> Rank {
        self.score.as_ref().map_or(id, |r| r.final_id[id as usize])
    }

    fn merge_chunk(&self, chunk: &str, scratch: &mut merge::MergeScratch, out: &mut Vec<Rank>) {
        if self.merges.is_some() {
            self.merge_by_rank(chunk, scratch, out);
        } else {
            self.merge_by_score(chunk, scratch, out);
        }
    }

    /// Append the ids of `text`, split at the specials of `allowed`, each segment encoded alone
    /// with the dummy prefix as [`Prepend`] says.
    fn encode_segments(&self, text: &str, allowed: &SpecialMatcher, out: &mut Vec<Rank>) {
        let mut start = 0;
        while let Some((s, e, id)) = allowed.find(text, start) {
            self.encode_segment(&text[start..s], start == 0, out);
            out.push(id);
            start = e;
        }
        self.encode_segment(&text[start..], start == 0, out);
    }

    fn counted(&self, encode: impl FnOnce(&mut Vec<Rank>)) -> usize {
        with_scratch(&COUNTED, |ids| {
            encode(ids);
            ids.len()
        })
    }
}

impl Encoder for SentencePieceEncoder {
    fn encode_ordinary_into(&self, text: &str, out: &mut Vec<Rank>) -> Result<(), Error> {
        self.encode_segment(text, true, out);
        Ok(())
    }

    fn count_ordinary(&self, text: &str) -> Result<usize, Error> {
        Ok(self.counted(|ids| self.encode_segment(text, true, ids)))
    }

    fn encode_invalid_byte(&self, byte: u8, out: &mut Vec<Rank>) {
        let id = self.byte_ids[usize::from(byte)];
        if id != NONE {
            out.push(id);
        } else if self.unk != NONE {
            out.push(self.unk);
        }
    }

    #[inline]
    fn tokens(&self) -> &Tokens {
        &self.tokens
    }

    fn scanner(&self) -> Option<Scanner> {
        None
    }

    fn encode_into(
        &self,
        text: &str,
        allowed: &SpecialMatcher,
        out: &mut Vec<Rank>,
    ) -> Result<(), Error> {
        self.encode_segments(text, allowed, out);
        Ok(())
    }

    fn count(&self, text: &str, allowed: &SpecialMatcher) -> Result<usize, Error> {
        Ok(self.counted(|ids| self.encode_segments(text, allowed, ids)))
    }

    /// Valid stretches are segments (the dummy prefix as between specials); each invalid byte
    /// is its byte piece, or the unknown id.
    fn encode_bytes(&self, data: &[u8]) -> Result<Vec<Rank>, Error> {
        let mut out = Vec::with_capacity(data.len() / 3 + 1);
        let mut offset = 0;
        for chunk in data.utf8_chunks() {
            self.encode_segment(chunk.valid(), offset == 0, &mut out);
            for &b in chunk.invalid() {
                self.encode_invalid_byte(b, &mut out);
            }
            offset += chunk.valid().len() + chunk.invalid().len();
        }
        Ok(out)
    }
}
