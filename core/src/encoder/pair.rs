//! Hugging Face's BPE model: merges by pair priority ([`crate::merge::pair`]), a pre-tokenizer
//! pipeline, and added tokens that may share ids with model tokens.

use rustc_hash::{FxHashMap, FxHashSet};

use super::Encoder;
use crate::bytes::byte_map::bytes_to_unicode;
use crate::merge::pair::{ByteFallback, MissingByte, NONE, PairModel};
use crate::pretokenize::Scanner;
use crate::pretokenize::pipeline::Pipeline;
use crate::vocab::added::AddedVocabulary;
use crate::vocab::by_id::{MAX_ID, TokenBytes, check_id_space};
use crate::vocab::pair_vocab::{AddedEntry, PairVocabulary};
use crate::vocab::{RankMap, Tokens};
use crate::{Error, Pretokenizer, Rank};

/// A byte-level BPE encoder with Hugging Face's rules.
#[derive(Debug, Clone)]
pub struct PairEncoder {
    model: PairModel,
    pipeline: Pipeline,
    /// The model vocabulary's ids, and whether each was written in the GPT-2 byte alphabet (the
    /// others, such as OLMo's `"   "`, stand for their own UTF-8 bytes).
    vocab: Vec<(Rank, bool)>,
    /// The ordinary tokens (the model's in the byte alphabet, less those that are added
    /// tokens), the added tokens by text, and the bytes of each id.
    tokens: Tokens,
    /// The added tokens compiled for search, when there are any.
    added: Option<AddedVocabulary>,
}

fn slot(
    id: Rank,
    by_id: &mut Vec<Option<Vec<u8>>>,
    what: impl FnOnce() -> String,
) -> Result<usize, Error> {
    if id >= MAX_ID {
        return Err(Error::InvalidVocabulary(format!(
            "{} has id {id}, too large (ids must be below {MAX_ID})",
            what()
        )));
    }
    let slot = id as usize;
    if by_id.len() <= slot {
        by_id.resize(slot + 1, None);
    }
    Ok(slot)
}

/// For each byte without a token, the ids of `<0xHH>` for the UTF-8 bytes of its byte-level
/// character, as `tokenizers`' `byte_fallback` looks them up (`[NONE; 2]` unless all exist).
fn byte_fallback_ids(model_map: &RankMap, byte_ranks: &[Rank; 256]) -> Box<ByteFallback> {
    let chars = bytes_to_unicode();
    let mut table = Box::new([[NONE; 2]; 256]);
    for (b, ids) in table.iter_mut().enumerate() {
        if byte_ranks[b] != NONE {
            continue;
        }
        let mut utf8 = [0u8; 4];
        let found: Option<Vec<Rank>> = chars[b]
            .encode_utf8(&mut utf8)
            .bytes()
            .map(|x| model_map.get(format!("<0x{x:02X}>").as_bytes()).copied())
            .collect();
        if let Some(found) = found.filter(|f| f.len() <= 2) {
            for (slot, id) in ids.iter_mut().zip(found) {
                *slot = id;
            }
        }
    }
    table
}

impl PairEncoder {
    /// Build a pair-merge encoder (Hugging Face semantics, see [`crate::merge::pair`]).
    ///
    /// `added` are the added tokens; unlike tiktoken specials they may share an id with a model
    /// token (NeoX's `<|endoftext|>` is both), and the id then decodes as the added token, as in
    /// `tokenizers`. Ids must be unique within the model and within `added`; merges may name only
    /// model ids. Bytes missing from the vocabulary are allowed (see [`MissingByte`]).
    pub fn new(
        model: PairVocabulary,
        added: Vec<AddedEntry>,
        pipeline: Pipeline,
    ) -> Result<Self, Error> {
        let PairVocabulary {
            vocab,
            merges,
            ignore_merges,
            missing,
            byte_fallback,
        } = model;
        // Tables are indexed by id: refuse a sparse id space before allocating one.
        let highest = vocab
            .iter()
            .map(|t| t.1)
            .chain(added.iter().map(|t| t.1))
            .max();
        if let Some(id) = highest.filter(|&id| id >= MAX_ID) {
            return Err(Error::InvalidVocabulary(format!(
                "id {id} is too large (ids must be below {MAX_ID})"
            )));
        }
        let id_bound = highest.map_or(0, |id| id as usize + 1);
        check_id_space(vocab.len() + added.len(), id_bound)?;
        let mut by_id: Vec<Option<Vec<u8>>> = Vec::with_capacity(id_bound);
        let mut model_map = RankMap::with_capacity_and_hasher(vocab.len(), Default::default());
        let mut vocab_ids = Vec::with_capacity(vocab.len());
        for (token, id, in_byte_alphabet) in vocab {
            let at = slot(id, &mut by_id, || {
                format!("token {:?}", String::from_utf8_lossy(&token))
            })?;
            if let Some(other) = &by_id[at] {
                return Err(Error::InvalidVocabulary(format!(
                    "id {id} is given to two tokens: {:?} and {:?}",
                    String::from_utf8_lossy(other),
                    String::from_utf8_lossy(&token)
                )));
            }
            if token.is_empty() {
                return Err(Error::InvalidVocabulary(format!(
                    "id {id} has an empty token"
                )));
            }
            if in_byte_alphabet {
                if let Some(previous) = model_map.insert(token.clone(), id) {
                    return Err(Error::InvalidVocabulary(format!(
                        "token {:?} has two ids: {previous} and {id}",
                        String::from_utf8_lossy(&token)
                    )));
                }
            }
            vocab_ids.push((id, in_byte_alphabet));
            by_id[at] = Some(token);
        }
        let is_model_id = |id: Rank, by_id: &[Option<Vec<u8>>]| {
            by_id.get(id as usize).is_some_and(Option::is_some)
        };
        for &(left, right, result) in &merges {
            for id in [left, right, result] {
                if !is_model_id(id, &by_id) {
                    return Err(Error::InvalidVocabulary(format!(
                        "a merge names id {id}, which is no token"
                    )));
                }
            }
        }
        if let MissingByte::Unknown { id, .. } = missing {
            if !is_model_id(id, &by_id) {
                return Err(Error::InvalidVocabulary(format!(
                    "the unknown token's id {id} is no token"
                )));
            }
        }

        let mut byte_ranks = [NONE; 256];
        for b in 0..=255u8 {
            if let Some(&id) = model_map.get(&[b][..]) {
                byte_ranks[usize::from(b)] = id;
            }
        }
        let fallback = byte_fallback.then(|| byte_fallback_ids(&model_map, &byte_ranks));
        let pair_model = PairModel::with_byte_fallback(
            merges,
            byte_ranks,
            missing,
            fallback,
            &model_map,
            ignore_merges,
        );

        let mut specials = FxHashMap::default();
        let mut added_ids = FxHashSet::default();
        for (text, id, decoded) in added {
            if text.is_empty() {
                return Err(Error::InvalidVocabulary(format!(
                    "added token {id} is empty"
                )));
            }
            let at = slot(id, &mut by_id, || format!("added token {text:?}"))?;
            if !added_ids.insert(id) {
                return Err(Error::InvalidVocabulary(format!(
                    "added token {text:?} has id {id}, which another added token has"
                )));
            }
            by_id[at] = Some(decoded);
            specials.insert(text, id);
        }
        // The ordinary tokens are the model's, less those that are added tokens.
        model_map.retain(|_, id| !added_ids.contains(id));

        let token_bytes = TokenBytes::from_slots(by_id.iter().map(Option::as_deref))?;
        Ok(Self {
            model: pair_model,
            pipeline,
            vocab: vocab_ids,
            tokens: Tokens {
                ranks: model_map,
                specials,
                by_id: token_bytes,
            },
            added: None,
        })
    }

    /// This encoder, finding `added` in text before the model sees it (see
    /// [`PairEncoder::encode_with_added_into`]); a vocabulary with no token finds nothing.
    pub fn with_added_vocabulary(mut self, added: AddedVocabulary) -> Self {
        self.added = (!added.tokens().is_empty()).then_some(added);
        self
    }

    /// The added tokens compiled for search, if there are any.
    pub fn added(&self) -> Option<&AddedVocabulary> {
        self.added.as_ref()
    }

    /// The pair model.
    pub fn model(&self) -> &PairModel {
        &self.model
    }

    /// The model vocabulary: `(id, written in the GPT-2 byte alphabet)`, in input order.
    pub fn model_vocab(&self) -> &[(Rank, bool)] {
        &self.vocab
    }

    /// Encode as `tokenizers` does: the added tokens of `enabled` first (see
    /// [`AddedVocabulary::encode_into`]), then the pipeline and merges. `first_pass` false when
    /// the caller already split off the raw-text tokens and normalized the rest.
    pub fn encode_with_added_into(
        &self,
        text: &str,
        enabled: &[bool],
        first_pass: bool,
        out: &mut Vec<Rank>,
    ) -> Result<(), Error> {
        match &self.added {
            Some(added) => added.encode_into(text, enabled, first_pass, out, |t, out| {
                self.encode_ordinary_into(t, out)
            }),
            None => self.encode_ordinary_into(text, out),
        }
    }
}

impl Encoder for PairEncoder {
    #[inline]
    fn encode_ordinary_into(&self, text: &str, out: &mut Vec<Rank>) -> Result<(), Error> {
        self.pipeline
            .split(text, |piece| self.model.encode_piece(piece, out))
    }

    fn count_ordinary(&self, text: &str) -> Result<usize, Error> {
        let mut n = 0;
        self.pipeline
            .split(text, |piece| n += self.model.count_piece(piece))?;
        Ok(n)
    }

    fn encode_invalid_byte(&self, byte: u8, out: &mut Vec<Rank>) {
        self.model.encode_piece(&[byte], out);
    }

    #[inline]
    fn tokens(&self) -> &Tokens {
        &self.tokens
    }

    fn scanner(&self) -> Option<Scanner> {
        self.pipeline.first_regex().and_then(Pretokenizer::scanner)
    }
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;
    use crate::pretokenize::pipeline::Stage;

    fn pipeline() -> Pipeline {
        let gpt2 = Pretokenizer::new(crate::pretokenize::patterns::GPT2_ORIGINAL)
            .unwrap_or_else(|e| panic!("{e}"));
        Pipeline::new(vec![Stage::ByteLevel {
            add_prefix_space: false,
            regex: Some(gpt2),
        }])
        .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Specials first (ids 0, 1), then the 256 bytes from 2, then "ab" = 258, "abc" = 259.
    fn vocabulary() -> PairVocabulary {
        let mut vocab: Vec<(Vec<u8>, Rank, bool)> = (0..=255u8)
            .map(|b| (vec![b], Rank::from(b) + 2, true))
            .collect();
        vocab.push((b"<s>".to_vec(), 0, true));
        vocab.push((b"  ".to_vec(), 1, false));
        vocab.push((b"ab".to_vec(), 258, true));
        vocab.push((b"abc".to_vec(), 259, true));
        let (a, b, c) = (
            Rank::from(b'a') + 2,
            Rank::from(b'b') + 2,
            Rank::from(b'c') + 2,
        );
        PairVocabulary {
            vocab,
            merges: vec![(a, b, 258), (258, c, 259)],
            ignore_merges: false,
            missing: MissingByte::Drop,
            byte_fallback: false,
        }
    }

    /// `byte_fallback`: a byte without a token becomes `<0xHH>` tokens for its byte-level
    /// character (byte 0x04 is `Ą`, UTF-8 c4 84), as `tokenizers` gives for such a vocabulary;
    /// where one of them is missing too, the byte is dropped.
    #[test]
    fn byte_fallback_gives_the_byte_level_characters_utf8_tokens() {
        let mut model = vocabulary();
        model
            .vocab
            .retain(|(t, _, _)| t.as_slice() != [4u8] && t.as_slice() != [0x80u8]);
        let next = 300;
        for (i, name) in ["<0xC4>", "<0x84>"].iter().enumerate() {
            model
                .vocab
                .push((name.as_bytes().to_vec(), next + i as Rank, true));
        }
        let without = PairEncoder::new(model.clone(), Vec::new(), pipeline())
            .unwrap_or_else(|e| panic!("{e}"));
        model.byte_fallback = true;
        let with =
            PairEncoder::new(model, Vec::new(), pipeline()).unwrap_or_else(|e| panic!("{e}"));
        let ab = 258;
        assert_eq!(
            with.encode_ordinary("ab\u{4}").unwrap_or_default(),
            vec![ab, 300, 301]
        );
        assert_eq!(
            without.encode_ordinary("ab\u{4}").unwrap_or_default(),
            vec![ab]
        );
        // 0x80's character, Ģ (c4 a2), has no <0xA2>: dropped, with or without.
        let c2 = Rank::from(0xC2u8) + 2;
        assert_eq!(with.encode_ordinary("\u{80}").unwrap_or_default(), vec![c2]);
        // A piece long enough for the long-piece path: the heap merge takes it.
        let long = format!("{}!", "\u{4}".repeat(200));
        let ids = with.encode_ordinary(&long).unwrap_or_default();
        assert_eq!(ids.len(), 401);
        assert!(ids[..400].chunks(2).all(|p| p == [300, 301]));
    }

    #[test]
    fn ids_free_of_merge_order_and_shared_with_added_tokens() {
        let added = vec![("<s>".to_string(), 0, b"<s>".to_vec())];
        let enc =
            PairEncoder::new(vocabulary(), added, pipeline()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            enc.encode_ordinary("abc ab"),
            Ok(vec![259, Rank::from(b' ') + 2, 258])
        );
        assert_eq!(enc.decode_bytes(&[0, 259]), Ok(b"<s>abc".to_vec()));
        // The added token is no ordinary token; the non-byte-level "  " is none either.
        assert_eq!(enc.ranks().get(&b"<s>"[..]), None);
        assert_eq!(enc.ranks().get(&b"  "[..]), None);
        assert_eq!(enc.specials().get("<s>"), Some(&0));
        assert_eq!(enc.count_ordinary("abc ab"), Ok(3));
        assert_eq!(enc.encode_bytes(b"ab\xff"), Ok(vec![258, 257]));
    }

    #[test]
    fn bad_vocabularies_are_errors() {
        let mut twice = vocabulary();
        twice.vocab.push((b"zz".to_vec(), 258, true));
        assert!(PairEncoder::new(twice, vec![], pipeline()).is_err());
        let mut unknown = vocabulary();
        unknown.merges.push((1000, 2, 3));
        assert!(PairEncoder::new(unknown, vec![], pipeline()).is_err());
        let added = vec![("x".to_string(), 5, vec![]), ("y".to_string(), 5, vec![])];
        assert!(PairEncoder::new(vocabulary(), added, pipeline()).is_err());
        let mut huge = vocabulary();
        huge.vocab.push((b"big".to_vec(), MAX_ID, true));
        assert!(PairEncoder::new(huge, vec![], pipeline()).is_err());
    }
}
