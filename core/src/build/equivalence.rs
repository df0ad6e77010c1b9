//! Between the two models: the merges that reproduce a tiktoken vocabulary under Hugging Face's
//! rule, and whether a pair encoder can be written as tiktoken ranks without changing an id.

use rustc_hash::FxHashMap;

use crate::Rank;
use crate::encoder::{Encoder, PairEncoder};
use crate::merge::pair::NONE;
use crate::vocab::RankMap;

/// A token's id and the merge that makes it under tiktoken's rule, if one does.
pub type DerivedMerge = (Rank, Option<(Vec<u8>, Vec<u8>)>);

/// tiktoken's rule on the bytes of `token`, never joining the whole token: the boundaries of the
/// parts it ends with. If there are exactly two parts, they are the merge that makes `token`
/// wherever the rule makes it (the rule works inside a part's bytes as if they stood alone).
fn parts_without_whole(token: &[u8], ranks: &RankMap) -> Vec<usize> {
    let n = token.len();
    let rank = |s: usize, e: usize| {
        if s == 0 && e == n {
            NONE
        } else {
            ranks.get(&token[s..e]).copied().unwrap_or(NONE)
        }
    };
    // starts[i] = start of part i; pair[i] = rank of part i joined with part i + 1.
    let mut starts: Vec<usize> = (0..=n).collect();
    let mut pair: Vec<Rank> = (0..n.saturating_sub(1)).map(|i| rank(i, i + 2)).collect();
    // The lowest rank, leftmost on ties (tuples compare the index second).
    while let Some((best, at)) = pair.iter().enumerate().map(|(i, &r)| (r, i)).min() {
        if best == NONE {
            break;
        }
        starts.remove(at + 1);
        pair.remove(at);
        if at < pair.len() {
            pair[at] = rank(starts[at], starts[at + 2]);
        }
        if at > 0 {
            pair[at - 1] = rank(starts[at - 1], starts[at + 1]);
        }
    }
    starts
}

/// For every token of more than one byte, in rank order: the merge that tiktoken's rule uses to
/// make it (`None` if the rule never makes it by merging, only as a whole piece).
///
/// Written as a merges list with `ignore_merges: true`, these reproduce tiktoken's ids exactly
/// under Hugging Face's pair rule: whenever the rank rule joins two adjacent parts into `t`, they
/// are the parts it reaches on `t`'s bytes alone, which is this merge, and merge priorities follow
/// the ranks.
pub fn derive_merges(ranks: &RankMap) -> Vec<DerivedMerge> {
    let mut tokens: Vec<(&Vec<u8>, Rank)> = ranks
        .iter()
        .filter(|(t, _)| t.len() > 1)
        .map(|(t, r)| (t, *r))
        .collect();
    tokens.sort_unstable_by_key(|&(_, r)| r);
    tokens
        .into_iter()
        .map(|(token, rank)| {
            let starts = parts_without_whole(token, ranks);
            let split = match starts.as_slice() {
                [0, mid, end] if *end == token.len() => {
                    Some((token[..*mid].to_vec(), token[*mid..].to_vec()))
                }
                _ => None,
            };
            (rank, split)
        })
        .collect()
}

/// Whether a pair-merge encoder gives the same ids as tiktoken's rank rule with its ids as ranks,
/// on every text; `Err` says why not.
///
/// Sufficient and checked exactly: all 256 bytes are tokens; every merge joins and makes ordinary
/// tokens; merges are listed in the order of the ids they make, one per token; the merges are
/// exactly those [`derive_merges`] finds for the ranks (so both rules join the same pairs in the
/// same order); and, unless `ignore_merges`, every token is what the merges make of its own bytes
/// (so tiktoken's whole-piece lookup changes nothing).
pub fn rank_equivalence(encoder: &PairEncoder) -> Result<(), String> {
    let model = encoder.model();
    let ranks = encoder.ranks();
    if let Some(b) = model.byte_ids().iter().position(|&id| id == NONE) {
        return Err(format!("the byte 0x{b:02X} has no token"));
    }
    let bytes_of = |id: Rank| -> Result<&[u8], String> {
        let bytes = encoder
            .token_bytes(id)
            .ok_or_else(|| format!("id {id} is no token"))?;
        if ranks.get(bytes) == Some(&id) {
            Ok(bytes)
        } else {
            Err(format!(
                "id {id} ({:?}) is an added or non-byte-level token",
                String::from_utf8_lossy(bytes)
            ))
        }
    };
    let mut listed: FxHashMap<Rank, (Rank, Rank)> = FxHashMap::default();
    let mut last: Option<Rank> = None;
    for (left, right, result) in model.merges() {
        for id in [left, right, result] {
            bytes_of(id)?;
        }
        if last.is_some_and(|l| result <= l) {
            return Err(format!(
                "merges are not listed in the order of the ids they make (id {result} after {})",
                last.unwrap_or_default()
            ));
        }
        last = Some(result);
        listed.insert(result, (left, right));
    }
    let derived = derive_merges(ranks);
    let mut n_derived = 0;
    for (rank, split) in &derived {
        let Some((l, r)) = split else { continue };
        n_derived += 1;
        let want = (ranks.get(l).copied(), ranks.get(r).copied());
        let have = listed.get(rank).map(|&(a, b)| (Some(a), Some(b)));
        if have != Some(want) {
            return Err(format!(
                "token {rank} ({:?}) is made from {:?} + {:?} by the rank rule but by merge {:?} here",
                String::from_utf8_lossy(encoder.token_bytes(*rank).unwrap_or_default()),
                String::from_utf8_lossy(l),
                String::from_utf8_lossy(r),
                have
            ));
        }
    }
    if n_derived != listed.len() {
        return Err(format!(
            "{} merges make tokens that the rank rule builds otherwise or never",
            listed.len().abs_diff(n_derived)
        ));
    }
    let mut out = Vec::new();
    for (token, &id) in ranks {
        out.clear();
        model.encode_piece(token, &mut out);
        if out.as_slice() != [id] {
            return Err(format!(
                "token {id} ({:?}) is not what the merges make of its bytes (no ignore_merges)",
                String::from_utf8_lossy(token)
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;
    use crate::bytes::byte_map::encode_bytes;
    use crate::formats::hf::{MergeList, pair_vocabulary};

    fn byte_vocab() -> Vec<(String, Rank)> {
        (0..=255u8)
            .map(|b| (encode_bytes(&[b]), Rank::from(b)))
            .collect()
    }

    #[test]
    fn rank_equivalence_is_exact() {
        use crate::pretokenize::pipeline::{Pipeline, Stage};
        let mut vocab = byte_vocab();
        vocab.extend([("ab".into(), 256), ("bc".into(), 257), ("abc".into(), 258)]);
        let pipeline = || {
            Pipeline::new(vec![Stage::ByteLevel {
                add_prefix_space: false,
                regex: None,
            }])
            .unwrap_or_else(|e| panic!("{e}"))
        };
        let build = |merges: Vec<(&str, &str)>| {
            let list = MergeList {
                merges: merges
                    .into_iter()
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .collect(),
                lines: None,
            };
            let model = pair_vocabulary(&vocab, &list).unwrap_or_else(|e| panic!("{e}"));
            PairEncoder::new(model, vec![], pipeline()).unwrap_or_else(|e| panic!("{e}"))
        };
        // The merges tiktoken's rule implies: "abc" from ("ab", "c").
        assert_eq!(
            rank_equivalence(&build(vec![("a", "b"), ("b", "c"), ("ab", "c")])),
            Ok(())
        );
        // From ("a", "bc") instead: the pair rule never joins "ab" + "c"; not equivalent.
        let other = rank_equivalence(&build(vec![("a", "b"), ("b", "c"), ("a", "bc")]));
        assert!(other.is_err(), "{other:?}");
    }

    #[test]
    fn derived_merges() {
        let mut ranks: RankMap = (0..=255u8).map(|b| (vec![b], Rank::from(b))).collect();
        ranks.insert(b"ab".to_vec(), 256);
        ranks.insert(b"bc".to_vec(), 257);
        ranks.insert(b"abc".to_vec(), 258);
        let d = derive_merges(&ranks);
        assert_eq!(d[2], (258, Some((b"ab".to_vec(), b"c".to_vec()))));
    }
}
