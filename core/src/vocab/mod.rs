//! Vocabularies: the tokens a model knows, the tables laid out for looking them up, and Hugging
//! Face's added tokens.

use rustc_hash::FxHashMap;

use crate::Rank;

pub mod added;
mod buckets;
pub mod by_id;
pub mod literals;
pub mod pair_vocab;
pub mod table;
pub mod tokens;

pub use table::TokenTable;
pub use tokens::Tokens;

/// Token bytes to rank. `Vec<u8>: Borrow<[u8]>`, so it is queried with byte slices.
pub type RankMap = FxHashMap<Vec<u8>, Rank>;
