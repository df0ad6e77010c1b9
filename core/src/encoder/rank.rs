//! tiktoken's model: ranked byte strings merged by the lowest rank first, pieces cut by one
//! pre-tokenizer, special tokens that never share an id with an ordinary token (but may share
//! one with each other, as tiktoken allows).

use std::collections::hash_map::Entry;

use super::Encoder;
use crate::merge::MergeTable;
use crate::merge::cache::{self as piece_cache, encode_cached};
use crate::pretokenize::Scanner;
use crate::vocab::by_id::{MAX_ID, TokenBytes, check_id_space};
use crate::vocab::{RankMap, Tokens};
use crate::{Error, Pretokenizer, Rank};

/// About how many ids [`RankEncoder::count_ordinary`] holds before adding them to its count.
const COUNT_BUFFER: usize = 48;

/// A byte-level BPE encoder with tiktoken's rules. Immutable once built, so one instance is
/// shared freely between threads.
#[derive(Debug, Clone)]
pub struct RankEncoder {
    /// Ordinary and special tokens, and the bytes of each id.
    tokens: Tokens,
    /// The same tokens laid out for fast lookups on the encode path.
    table: MergeTable,
    /// Names this encoder in the per-thread piece cache.
    owner: u32,
    byte_ranks: [Rank; 256],
    pretokenizer: Pretokenizer,
}

impl RankEncoder {
    /// Build and validate an encoder. Every single byte must be a token; ranks and token bytes
    /// must be unique, and special tokens may not reuse an ordinary id.
    ///
    /// Special tokens may share an id with each other (tiktoken's `o200k_harmony` gives
    /// `<|endofprompt|>` and `<|reserved_200018|>` one id): each encodes to that id, and the id
    /// decodes to the one whose text sorts first by its UTF-8 bytes, whatever the order given
    /// (tiktoken's choice depends on hash order).
    pub fn new(
        ranks: impl IntoIterator<Item = (Vec<u8>, Rank)>,
        specials: impl IntoIterator<Item = (String, Rank)>,
        pattern: &str,
    ) -> Result<Self, Error> {
        let pretokenizer = Pretokenizer::new(pattern)?;
        Self::with_pretokenizer(ranks, specials, pretokenizer)
    }

    /// As [`RankEncoder::new`], with a pre-tokenizer already built.
    pub fn with_pretokenizer(
        ranks: impl IntoIterator<Item = (Vec<u8>, Rank)>,
        specials: impl IntoIterator<Item = (String, Rank)>,
        pretokenizer: Pretokenizer,
    ) -> Result<Self, Error> {
        let ranks = ranks.into_iter();
        let mut empty: Option<Rank> = None;
        let mut map = RankMap::with_capacity_and_hasher(ranks.size_hint().0, Default::default());
        for (token, rank) in ranks {
            if rank >= MAX_ID {
                return Err(Error::InvalidVocabulary(format!(
                    "rank {rank} of token {:?} is too large (ids must be below {MAX_ID})",
                    String::from_utf8_lossy(&token)
                )));
            }
            if token.is_empty() {
                // tiktoken takes an empty token (Whisper's vocabularies have one): it is never
                // a piece's result, and its id decodes to nothing.
                if let Some(first) = empty.replace(rank) {
                    return Err(Error::InvalidVocabulary(format!(
                        "the empty token has two ranks: {first} and {rank}"
                    )));
                }
                continue;
            }
            // The token moves into the map: a vocabulary is many small allocations, and copying
            // each would be a visible part of the construction time.
            match map.entry(token) {
                Entry::Occupied(taken) => {
                    return Err(Error::InvalidVocabulary(format!(
                        "token {:?} has two ranks: {} and {rank}",
                        String::from_utf8_lossy(taken.key()),
                        taken.get()
                    )));
                }
                Entry::Vacant(free) => {
                    free.insert(rank);
                }
            }
        }
        let mut byte_ranks = [0; 256];
        for b in 0..=255u8 {
            byte_ranks[usize::from(b)] = *map.get(&[b][..]).ok_or_else(|| {
                Error::InvalidVocabulary(format!(
                    "the single byte 0x{b:02X} is not a token; a byte-level vocabulary needs all 256"
                ))
            })?;
        }

        let specials: Vec<(String, Rank)> = specials.into_iter().collect();
        for (text, id) in &specials {
            if *id >= MAX_ID {
                return Err(Error::InvalidVocabulary(format!(
                    "special token {text:?} has id {id}, too large (ids must be below {MAX_ID})"
                )));
            }
            if text.is_empty() {
                return Err(Error::InvalidVocabulary(format!(
                    "special token {id} is empty"
                )));
            }
        }

        // Every token, ordinary and special, by id. Kept as a list and sorted, never as a table
        // indexed by id: a file claiming one huge rank must not allocate gigabytes.
        let mut by_id: Vec<(Rank, bool, &[u8])> = map
            .iter()
            .map(|(token, &rank)| (rank, false, token.as_slice()))
            .chain(empty.map(|rank| (rank, false, &b""[..])))
            .chain(
                specials
                    .iter()
                    .map(|(text, id)| (*id, true, text.as_bytes())),
            )
            .collect();
        // Ordinary tokens sort before specials of the same id, so a clash names the special;
        // specials of one id sort by their bytes, the first being the one the id decodes to.
        by_id.sort_unstable();
        for pair in by_id.windows(2) {
            let ((id, _, first), (_, special, second)) = match pair {
                [a, b] if a.0 == b.0 && !(a.1 && b.1) => (a, b),
                _ => continue,
            };
            return Err(Error::InvalidVocabulary(if *special {
                format!(
                    "special token {:?} has id {id}, which is already taken",
                    String::from_utf8_lossy(second)
                )
            } else {
                format!(
                    "rank {id} is given to two tokens: {:?} and {:?}",
                    String::from_utf8_lossy(first),
                    String::from_utf8_lossy(second)
                )
            }));
        }
        by_id.dedup_by_key(|t| t.0);
        let id_bound = by_id.last().map_or(0, |t| t.0 as usize + 1);
        check_id_space(by_id.len(), id_bound)?;

        let mut tokens = by_id.iter().peekable();
        let token_bytes = TokenBytes::from_slots(
            (0..id_bound).map(|id| tokens.next_if(|t| t.0 as usize == id).map(|t| t.2)),
        )?;
        drop(by_id);
        let special_map = specials.into_iter().collect();
        let table = MergeTable::new(&map, &byte_ranks);
        if let Some(rank) = empty {
            map.insert(Vec::new(), rank); // for mergeable_ranks and encode_single_token
        }
        Ok(Self {
            table,
            owner: piece_cache::new_owner(),
            tokens: Tokens {
                ranks: map,
                specials: special_map,
                by_id: token_bytes,
            },
            byte_ranks,
            pretokenizer,
        })
    }

    /// The pre-tokenizer in use.
    pub fn pretokenizer(&self) -> &Pretokenizer {
        &self.pretokenizer
    }

    /// The encoder's loop (byte-level tables, no special tokens): each piece's ids appended to
    /// `out`, then `after(out)`.
    #[inline(always)]
    fn encode_pieces(
        &self,
        text: &str,
        out: &mut Vec<Rank>,
        mut after: impl FnMut(&mut Vec<Rank>),
    ) -> Result<(), Error> {
        piece_cache::with_cache(|mut cache| {
            self.pretokenizer.split_bytes(text, |bytes| {
                encode_cached(
                    &mut cache,
                    self.owner,
                    text.as_bytes(),
                    bytes,
                    &self.table,
                    &self.byte_ranks,
                    out,
                );
                after(out);
            })
        })
    }
}

impl Encoder for RankEncoder {
    #[inline]
    fn encode_ordinary_into(&self, text: &str, out: &mut Vec<Rank>) -> Result<(), Error> {
        self.encode_pieces(text, out, |_| {})
    }

    fn count_ordinary(&self, text: &str) -> Result<usize, Error> {
        // The ids go through a small buffer, emptied into the count as it fills: the encode
        // loop itself, holding a few dozen ids at a time, never the list.
        let mut n = 0;
        let mut ids = Vec::with_capacity(COUNT_BUFFER);
        self.encode_pieces(text, &mut ids, |ids| {
            if ids.len() >= COUNT_BUFFER {
                n += ids.len();
                ids.clear();
            }
        })?;
        Ok(n + ids.len())
    }

    fn encode_invalid_byte(&self, byte: u8, out: &mut Vec<Rank>) {
        out.push(self.byte_ranks[usize::from(byte)]);
    }

    #[inline]
    fn tokens(&self) -> &Tokens {
        &self.tokens
    }

    fn scanner(&self) -> Option<Scanner> {
        self.pretokenizer.scanner()
    }
}
