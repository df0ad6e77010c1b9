//! Every token's bytes by id, ordinary and special: what decoding reads, and the checks that an
//! id space is dense enough to be stored so.

use crate::{Error, Rank};

/// Ids at or above this cannot be stored densely; no real vocabulary comes close.
pub const MAX_ID: Rank = 1 << 28;
/// Ids below this may be sparse (a toy vocabulary with a special token at 100257 is fine)...
const FREE_ID_SPACE: usize = 1 << 20;
/// ...above it, the id space may be at most this many times the number of tokens, so that a
/// file claiming one huge rank is an error instead of a table of hundreds of megabytes.
const MAX_IDS_PER_TOKEN: usize = 4;

/// Check, before allocating anything indexed by id, that `n_tokens` tokens with ids below
/// `id_bound` are dense enough: decoding uses tables indexed by id (5 bytes per id), so a file
/// that claims one huge id must be an error, not hundreds of megabytes.
pub fn check_id_space(n_tokens: usize, id_bound: usize) -> Result<(), Error> {
    if id_bound
        > n_tokens
            .saturating_mul(MAX_IDS_PER_TOKEN)
            .max(FREE_ID_SPACE)
    {
        return Err(Error::InvalidVocabulary(format!(
            "ids run up to {} but there are only {n_tokens} tokens; ids must be nearly \
             contiguous (below {FREE_ID_SPACE}, or at most {MAX_IDS_PER_TOKEN} ids per token)",
            id_bound.saturating_sub(1),
        )));
    }
    Ok(())
}

/// Token bytes by id: `bytes[offsets[id]..offsets[id + 1]]`, with `present[id]` false for ids
/// that are no token.
#[derive(Debug, Clone, Default)]
pub struct TokenBytes {
    offsets: Vec<u32>,
    bytes: Vec<u8>,
    present: Vec<bool>,
}

impl TokenBytes {
    /// The table of `slots`, the bytes of each id from 0 in order (`None`: no token). The
    /// caller checks the id space first ([`check_id_space`]).
    pub fn from_slots<'a>(
        slots: impl ExactSizeIterator<Item = Option<&'a [u8]>>,
    ) -> Result<Self, Error> {
        let mut offsets = Vec::with_capacity(slots.len() + 1);
        let mut bytes = Vec::new();
        let mut present = Vec::with_capacity(slots.len());
        for token in slots {
            offsets.push(u32::try_from(bytes.len()).map_err(|_| too_big())?);
            present.push(token.is_some());
            if let Some(t) = token {
                bytes.extend_from_slice(t);
            }
        }
        offsets.push(u32::try_from(bytes.len()).map_err(|_| too_big())?);
        Ok(Self {
            offsets,
            bytes,
            present,
        })
    }

    /// One past the highest id in use.
    #[inline]
    pub fn id_bound(&self) -> usize {
        self.present.len()
    }

    /// The bytes of one token (ordinary or special).
    #[inline]
    pub fn get(&self, id: Rank) -> Option<&[u8]> {
        let i = id as usize;
        if *self.present.get(i)? {
            Some(&self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize])
        } else {
            None
        }
    }

    /// Concatenate the bytes of `ids`; the first unknown id is an error.
    pub fn decode(&self, ids: &[Rank]) -> Result<Vec<u8>, Error> {
        let mut out = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            out.extend_from_slice(self.get(id).ok_or(Error::UnknownId(u64::from(id)))?);
        }
        Ok(out)
    }
}

fn too_big() -> Error {
    Error::InvalidVocabulary("tokens total more than 4 GiB".into())
}
