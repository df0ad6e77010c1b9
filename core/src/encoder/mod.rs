//! Encoders: a whole tokenizer model, from text to ids and back.
//!
//! Each model is its own type, and every one implements [`Encoder`]:
//! - [`RankEncoder`] (`rank.rs`): tiktoken's model, merging by rank with one pre-tokenizer;
//! - [`PairEncoder`] (`pair.rs`): Hugging Face's BPE model, merging by pair priority, with its
//!   pre-tokenizer pipeline and added tokens;
//! - [`SentencePieceEncoder`] (`sentencepiece/`): SentencePiece's BPE model, merging by piece
//!   score (sentencepiece) or by a merge list (Hugging Face), after its own normalization.
//!
//! What they share is in the trait's provided methods and in [`SpecialMatcher`]
//! (`special.rs`), the search for special tokens in text. An encoder is immutable once built, so one instance is shared freely between threads.

use rustc_hash::FxHashMap;

use crate::pretokenize::Scanner;
use crate::vocab::by_id::TokenBytes;
use crate::vocab::{RankMap, Tokens};
use crate::{Error, Rank};

mod pair;
mod rank;
pub mod sentencepiece;
mod special;
#[cfg(test)]
mod tests;

pub use crate::vocab::by_id::check_id_space;
pub use crate::vocab::pair_vocab::{AddedEntry, PairVocabulary};
pub use pair::PairEncoder;
pub use rank::RankEncoder;
pub use sentencepiece::SentencePieceEncoder;
pub use special::SpecialMatcher;

/// A tokenizer model: text to ids, ids to bytes.
///
/// Implementors give the model's own steps (the ordinary encode, its count, what an invalid
/// UTF-8 byte becomes) and its tables; everything that follows from those (special tokens,
/// decoding, single tokens) is provided here once.
pub trait Encoder {
    /// Append the ids of `text` (no special tokens) to `out`.
    fn encode_ordinary_into(&self, text: &str, out: &mut Vec<Rank>) -> Result<(), Error>;

    /// The number of ids of `text` (no special tokens), without building them.
    fn count_ordinary(&self, text: &str) -> Result<usize, Error>;

    /// Append the ids of a byte that is not part of valid UTF-8 (see [`Encoder::encode_bytes`]).
    fn encode_invalid_byte(&self, byte: u8, out: &mut Vec<Rank>);

    /// The model's tokens (see [`Tokens`]).
    fn tokens(&self) -> &Tokens;

    /// Ordinary tokens (bytes to id).
    #[inline]
    fn ranks(&self) -> &RankMap {
        &self.tokens().ranks
    }

    /// Special (or added) tokens (text to id).
    #[inline]
    fn specials(&self) -> &FxHashMap<String, Rank> {
        &self.tokens().specials
    }

    /// The bytes of every id.
    #[inline]
    fn token_bytes_by_id(&self) -> &TokenBytes {
        &self.tokens().by_id
    }

    /// The hand-written scanner that cuts text, if one does (`None`: the regex engine).
    fn scanner(&self) -> Option<Scanner>;

    /// One past the highest id in use.
    #[inline]
    fn id_bound(&self) -> usize {
        self.token_bytes_by_id().id_bound()
    }

    /// The bytes of one token (ordinary or special).
    #[inline]
    fn token_bytes(&self, id: Rank) -> Option<&[u8]> {
        self.token_bytes_by_id().get(id)
    }

    /// Concatenate the bytes of `ids`; the first unknown id is an error.
    fn decode_bytes(&self, ids: &[Rank]) -> Result<Vec<u8>, Error> {
        self.token_bytes_by_id().decode(ids)
    }

    /// The ordinary token whose bytes are exactly `bytes`, or the special token spelled so.
    fn encode_single_token(&self, bytes: &[u8]) -> Option<Rank> {
        if let Some(&r) = self.ranks().get(bytes) {
            return Some(r);
        }
        std::str::from_utf8(bytes)
            .ok()
            .and_then(|s| self.specials().get(s).copied())
    }

    /// Compile a matcher for the named special tokens (all must exist).
    fn special_matcher<'a>(
        &self,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<SpecialMatcher, Error>
    where
        Self: Sized,
    {
        SpecialMatcher::new(self.specials(), names)
    }

    /// Encode text with no special-token handling: special-looking text is ordinary text.
    fn encode_ordinary(&self, text: &str) -> Result<Vec<Rank>, Error> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        self.encode_ordinary_into(text, &mut out)?;
        Ok(out)
    }

    /// Encode text, turning the specials of `allowed` into their ids; all other text is ordinary.
    fn encode(&self, text: &str, allowed: &SpecialMatcher) -> Result<Vec<Rank>, Error> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        self.encode_into(text, allowed, &mut out)?;
        Ok(out)
    }

    /// Append the ids `encode` would return to `out`.
    fn encode_into(
        &self,
        text: &str,
        allowed: &SpecialMatcher,
        out: &mut Vec<Rank>,
    ) -> Result<(), Error> {
        let mut start = 0;
        while let Some((s, e, id)) = allowed.find(text, start) {
            self.encode_ordinary_into(&text[start..s], out)?;
            out.push(id);
            start = e;
        }
        self.encode_ordinary_into(&text[start..], out)
    }

    /// The number of ids `encode` would return.
    fn count(&self, text: &str, allowed: &SpecialMatcher) -> Result<usize, Error> {
        let mut n = 0;
        let mut start = 0;
        while let Some((s, e, _)) = allowed.find(text, start) {
            n += self.count_ordinary(&text[start..s])? + 1;
            start = e;
        }
        Ok(n + self.count_ordinary(&text[start..])?)
    }

    /// Encode bytes that may not be UTF-8: valid stretches go through the pre-tokenizer, the
    /// invalid bytes in between become what [`Encoder::encode_invalid_byte`] makes them.
    fn encode_bytes(&self, data: &[u8]) -> Result<Vec<Rank>, Error> {
        let mut out = Vec::with_capacity(data.len() / 3 + 1);
        for chunk in data.utf8_chunks() {
            self.encode_ordinary_into(chunk.valid(), &mut out)?;
            for &b in chunk.invalid() {
                self.encode_invalid_byte(b, &mut out);
            }
        }
        Ok(out)
    }
}
