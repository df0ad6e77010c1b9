//! A Hugging Face BPE model's vocabulary as plain values: tokens with their ids, merges as ids
//! in priority order, and what a byte without a token becomes.

use crate::Rank;

/// What to do with a byte whose single-byte token is not in the vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissingByte {
    /// Leave it out, as `tokenizers` does for a BPE without `unk_token` (NeoX, Falcon and SmolLM
    /// lack some control bytes and bytes that never occur in UTF-8).
    Drop,
    /// Emit this id for it; with `fuse`, one id for a run of such bytes.
    Unknown { id: Rank, fuse: bool },
}

/// The model part of a pair-merge (Hugging Face) vocabulary, as
/// [`crate::encoder::PairEncoder::new`] takes it.
#[derive(Debug, Clone)]
pub struct PairVocabulary {
    /// Model tokens: bytes, id, and whether the file wrote it in the GPT-2 byte alphabet.
    pub vocab: Vec<(Vec<u8>, Rank, bool)>,
    /// `(left, right, result)` ids, in priority order.
    pub merges: Vec<(Rank, Rank, Rank)>,
    /// Hugging Face's `ignore_merges`: a piece that is a whole token is that token.
    pub ignore_merges: bool,
    /// What a byte without a single-byte token becomes.
    pub missing: MissingByte,
    /// `tokenizers`' `byte_fallback`: such a byte first becomes the `<0xHH>` tokens of its
    /// byte-level character's UTF-8 bytes, where the vocabulary has them.
    pub byte_fallback: bool,
}

/// An added token as the encoder stores it: text, id, and the bytes its id decodes to.
pub type AddedEntry = (String, Rank, Vec<u8>);
