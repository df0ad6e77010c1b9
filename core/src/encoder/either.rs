//! TEMPORARY: the bindings' bridge to the two encoder types.
//!
//! The bindings still hold one `CoreEncoding` class for both models, so they hold one
//! [`AnyEncoder`] and call the methods the fused encoder had. Remove this file when the
//! bindings hold one class per model ([`RankEncoder`], [`PairEncoder`]) and call [`Encoder`]
//! on it directly; nothing in the core uses it.

use rustc_hash::FxHashMap;

use super::{Encoder, PairEncoder, RankEncoder};
use crate::merge::pair::PairModel;
use crate::pretokenize::Scanner;
use crate::pretokenize::pipeline::Pipeline;
use crate::vocab::RankMap;
use crate::vocab::added::AddedVocabulary;
use crate::vocab::by_id::TokenBytes;
use crate::vocab::pair_vocab::{AddedEntry, PairVocabulary};
use crate::{Error, Pretokenizer, Rank};

/// An encoder of either model, for the bindings until they hold one class per model.
#[derive(Debug, Clone)]
pub enum AnyEncoder {
    Rank(RankEncoder),
    Pair(PairEncoder),
}

/// Each method of [`Encoder`] on the encoder inside.
macro_rules! delegate {
    ($self:ident, $e:ident => $call:expr) => {
        match $self {
            AnyEncoder::Rank($e) => $call,
            AnyEncoder::Pair($e) => $call,
        }
    };
}

impl AnyEncoder {
    /// [`RankEncoder::new`].
    pub fn new(
        ranks: impl IntoIterator<Item = (Vec<u8>, Rank)>,
        specials: impl IntoIterator<Item = (String, Rank)>,
        pattern: &str,
    ) -> Result<Self, Error> {
        RankEncoder::new(ranks, specials, pattern).map(Self::Rank)
    }

    /// [`RankEncoder::with_pretokenizer`].
    pub fn with_pretokenizer(
        ranks: impl IntoIterator<Item = (Vec<u8>, Rank)>,
        specials: impl IntoIterator<Item = (String, Rank)>,
        pretokenizer: Pretokenizer,
    ) -> Result<Self, Error> {
        RankEncoder::with_pretokenizer(ranks, specials, pretokenizer).map(Self::Rank)
    }

    /// [`PairEncoder::new`].
    pub fn with_pair_merges(
        model: PairVocabulary,
        added: Vec<AddedEntry>,
        pipeline: Pipeline,
    ) -> Result<Self, Error> {
        PairEncoder::new(model, added, pipeline).map(Self::Pair)
    }

    /// Whether this encoder merges by pair priority (Hugging Face) rather than by rank.
    pub fn is_pair_mode(&self) -> bool {
        matches!(self, Self::Pair(_))
    }

    /// The pair encoder, if this is one.
    pub fn as_pair(&self) -> Option<&PairEncoder> {
        match self {
            Self::Pair(p) => Some(p),
            Self::Rank(_) => None,
        }
    }

    /// The pair model, in pair mode.
    pub fn pair_model(&self) -> Option<&PairModel> {
        self.as_pair().map(PairEncoder::model)
    }

    /// The pre-tokenizer pipeline, in pair mode.
    pub fn pipeline(&self) -> Option<&Pipeline> {
        self.as_pair().map(PairEncoder::pipeline)
    }

    /// In pair mode, the model vocabulary: `(id, written in the GPT-2 byte alphabet)`.
    pub fn pair_vocab(&self) -> Option<&[(Rank, bool)]> {
        self.as_pair().map(PairEncoder::model_vocab)
    }

    /// In pair mode, the added tokens compiled for search, if there are any.
    pub fn added(&self) -> Option<&AddedVocabulary> {
        self.as_pair().and_then(PairEncoder::added)
    }

    /// [`PairEncoder::encode_with_added_into`], or the ordinary encode for a rank encoder.
    pub fn encode_with_added_into(
        &self,
        text: &str,
        enabled: &[bool],
        first_pass: bool,
        out: &mut Vec<Rank>,
    ) -> Result<(), Error> {
        match self {
            Self::Pair(p) => p.encode_with_added_into(text, enabled, first_pass, out),
            Self::Rank(r) => r.encode_ordinary_into(text, out),
        }
    }
}

impl Encoder for AnyEncoder {
    #[inline]
    fn encode_ordinary_into(&self, text: &str, out: &mut Vec<Rank>) -> Result<(), Error> {
        delegate!(self, e => e.encode_ordinary_into(text, out))
    }

    #[inline]
    fn count_ordinary(&self, text: &str) -> Result<usize, Error> {
        delegate!(self, e => e.count_ordinary(text))
    }

    fn encode_invalid_byte(&self, byte: u8, out: &mut Vec<Rank>) {
        delegate!(self, e => e.encode_invalid_byte(byte, out))
    }

    fn encode_bytes(&self, data: &[u8]) -> Result<Vec<Rank>, Error> {
        delegate!(self, e => e.encode_bytes(data))
    }

    #[inline]
    fn ranks(&self) -> &RankMap {
        delegate!(self, e => e.ranks())
    }

    #[inline]
    fn specials(&self) -> &FxHashMap<String, Rank> {
        delegate!(self, e => e.specials())
    }

    #[inline]
    fn token_bytes_by_id(&self) -> &TokenBytes {
        delegate!(self, e => e.token_bytes_by_id())
    }

    fn scanner(&self) -> Option<Scanner> {
        delegate!(self, e => e.scanner())
    }
}
