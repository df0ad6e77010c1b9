//! What every tokenizer model knows of its tokens, whatever its merge rule.

use rustc_hash::FxHashMap;

use super::RankMap;
use super::by_id::TokenBytes;
use crate::Rank;

/// A model's tokens: the ordinary ones by bytes, the special (or added) ones by text, and the
/// bytes of every id for decoding. Each encoder holds one, so that the lookups and decoding
/// the [`crate::Encoder`] trait provides are written once for all models.
#[derive(Debug, Clone)]
pub struct Tokens {
    /// Ordinary tokens, bytes to id.
    pub ranks: RankMap,
    /// Special (or added) tokens, text to id.
    pub specials: FxHashMap<String, Rank>,
    /// The bytes of each id, ordinary and special.
    pub by_id: TokenBytes,
}
