//! Building encoders out of parsed vocabularies ([`crate::formats`] parses, this builds), and
//! converting between the two models ([`equivalence`]).

use std::collections::HashSet;

use crate::encoder::{PairEncoder, RankEncoder};
use crate::formats::hf::{self, MergeList};
use crate::formats::tiktoken;
use crate::pretokenize::pipeline::Pipeline;
use crate::vocab::added::{AddedToken, AddedVocabulary};
use crate::vocab::pair_vocab::{AddedEntry, MissingByte};
use crate::{Error, Rank};

pub mod equivalence;

pub use equivalence::{DerivedMerge, derive_merges, rank_equivalence};

/// A rank encoder from the contents of a `.tiktoken` file.
pub fn tiktoken_encoder(
    data: &[u8],
    specials: impl IntoIterator<Item = (String, Rank)>,
    pattern: &str,
) -> Result<RankEncoder, Error> {
    RankEncoder::new(tiktoken::parse(data)?, specials, pattern)
}

/// A rank encoder from GPT-2 files read as tiktoken reads them (ids are ranks): `encoder` is
/// `encoder.json`'s entries, `merges_data` the bytes of `vocab.bpe`. Returns the encoder and its
/// special tokens: the entries no merge makes, plus `extra_specials`.
pub fn gpt2_encoder(
    encoder: &[(String, Rank)],
    merges_data: &[u8],
    pattern: &str,
    extra_specials: impl IntoIterator<Item = (String, Rank)>,
) -> Result<(RankEncoder, Vec<(String, Rank)>), Error> {
    let merges = hf::parse_merges(merges_data)?;
    let (ranks, mut specials) = hf::gpt2_ranks(encoder, &merges)?;
    specials.extend(extra_specials);
    let encoder = RankEncoder::new(ranks, specials.iter().cloned(), pattern)?;
    Ok((encoder, specials))
}

/// A pair encoder from a Hugging Face model: its vocabulary (token text to id), merges,
/// `ignore_merges`, what a byte without a token becomes (after its `<0xHH>` tokens where
/// `byte_fallback`), its added tokens (in the order `tokenizers` searches them) and its
/// pre-tokenizer pipeline.
#[allow(clippy::too_many_arguments)]
pub fn pair_encoder(
    vocab: &[(String, Rank)],
    merges: &MergeList,
    ignore_merges: bool,
    missing: MissingByte,
    byte_fallback: bool,
    added: Vec<AddedToken>,
    pipeline: Pipeline,
) -> Result<PairEncoder, Error> {
    let mut model = hf::pair_vocabulary(vocab, merges)?;
    model.ignore_merges = ignore_merges;
    model.missing = missing;
    model.byte_fallback = byte_fallback;
    // An id decodes as `tokenizers`' ByteLevel decoder reads its text; the first token listed
    // with an id names it.
    let mut seen = HashSet::new();
    let entries: Vec<AddedEntry> = added
        .iter()
        .filter(|t| seen.insert(t.id))
        .map(|t| (t.content.clone(), t.id, hf::token_bytes(&t.content).0))
        .collect();
    let search = AddedVocabulary::new(added)?;
    Ok(PairEncoder::new(model, entries, pipeline)?.with_added_vocabulary(search))
}
