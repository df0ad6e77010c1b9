//! Training byte-level BPE: learn merges from a corpus.
//!
//! Two stages, each in its own file:
//! - [`count`]: pre-tokenize the corpus and count its unique pieces ([`PieceCounter`], parallel
//!   over texts and blocks of long texts; [`blocks`] says where long texts and files are cut);
//! - [`merges`]: the merge loop over the unique pieces ([`Merger`]), with incremental pair counts
//!   and a lazily refreshed max-heap: no recount per merge.
//!
//! The rule: merge the pair with the highest count (`u64`, overlapping occurrences counted),
//! ties to the smallest pair of ids (see [`TieBreak`]); in each word replace occurrences left to
//! right without overlap. With [`TieBreak::Bytepair`] this gives the merges of rustbpe and bpeasy;
//! with [`TieBreak::HuggingFace`] those of Hugging Face's `BpeTrainer` on a ByteLevel setup.
//!
//! ```
//! use bytepair_core::train::{PieceCounter, TrainOptions, train, token_bytes};
//! let mut counter = PieceCounter::new(r"\w+|\s+")?;
//! counter.add_texts(&["low lower lowest", "slow slower"])?;
//! let merges = train(&counter, &TrainOptions::new(259))?;
//! assert_eq!(merges, vec![(b'l' as u32, b'o' as u32), (256, b'w' as u32), (257, b'e' as u32)]);
//! assert_eq!(token_bytes(&merges)?[258], b"lowe".to_vec());
//! # Ok::<(), bytepair_core::Error>(())
//! ```

pub mod blocks;
pub mod count;
pub mod merges;

pub use blocks::{CutRule, TextChunks};
pub use count::{PieceBuf, PieceBytes, PieceCounter, PieceCounts, TextCounter, TextCounts};
pub use merges::{Merger, TieBreak, TrainOptions};

use crate::{Error, Rank};

/// Learn the merges of a counter's pieces (see [`Merger`] to do it step by step).
pub fn train(counter: &PieceCounter, options: &TrainOptions) -> Result<Vec<(Rank, Rank)>, Error> {
    let mut merger = Merger::new(counter.counts().iter(), options)?;
    merger.run();
    Ok(merger.merges())
}

/// The bytes of every token, by id: the 256 single bytes, then one token per merge.
pub fn token_bytes(merges: &[(Rank, Rank)]) -> Result<Vec<Vec<u8>>, Error> {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for (i, &(a, b)) in merges.iter().enumerate() {
        let (Some(left), Some(right)) = (tokens.get(a as usize), tokens.get(b as usize)) else {
            return Err(Error::InvalidArgument(format!(
                "merge {i} ({a}, {b}) refers to a token that does not exist yet"
            )));
        };
        let joined = [left.as_slice(), right.as_slice()].concat();
        tokens.push(joined);
    }
    Ok(tokens)
}
