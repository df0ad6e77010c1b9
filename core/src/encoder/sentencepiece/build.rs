//! Building a [`SentencePieceEncoder`]: checking the vocabulary as sentencepiece's
//! `InitializePieces` (or `tokenizers`' BPE builder) does, and indexing it.

use rustc_hash::FxHashMap;

use super::chunks::{Cut, adjacent_pairs};
use super::join_table::JoinTable;
use super::merge::{FLAT_RANK_LIMIT, MergeScratch, NONE};
use super::normalize::Normalizer;
use super::{PieceKind, Prepend, ScoreRules, SentencePieceEncoder, SentencePieceSpec};
use crate::vocab::by_id::{MAX_ID, TokenBytes};
use crate::vocab::{RankMap, TokenTable, Tokens, literals};
use crate::{Error, Rank};

fn invalid(msg: String) -> Error {
    Error::InvalidVocabulary(msg)
}

/// The byte of a byte piece `<0xXX>`.
fn byte_of_piece(piece: &str) -> Option<u8> {
    let hex = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

impl SentencePieceEncoder {
    /// Check and index `spec`.
    pub fn new(spec: SentencePieceSpec) -> Result<Self, Error> {
        let n = spec.pieces.len();
        if n >= MAX_ID as usize {
            return Err(invalid(format!(
                "{n} pieces are too many (at most {MAX_ID})"
            )));
        }
        if let Some(map) = spec.precompiled_charsmap.as_ref().filter(|m| !m.is_empty()) {
            return Err(Error::InvalidArgument(format!(
                "sentencepiece normalization with a precompiled charsmap ({} bytes: a rule \
                 other than identity, such as nmt_nfkc) is not supported; only identity \
                 normalization is",
                map.len()
            )));
        }
        let by_rank = spec.merges.is_some();
        let mut byte_ids = [NONE; 256];
        let mut byte_of = vec![0u8; n];
        let mut table_map = RankMap::default();
        let mut reserved: FxHashMap<Vec<u8>, Rank> = FxHashMap::default();
        for (i, (piece, _, kind)) in spec.pieces.iter().enumerate() {
            let id = i as Rank;
            if piece.is_empty() {
                return Err(invalid(format!("piece {id} is empty")));
            }
            if *kind == PieceKind::Byte {
                let b = byte_of_piece(piece).ok_or_else(|| {
                    invalid(format!(
                        "byte piece {id} is {piece:?}, not of the form <0xXX>"
                    ))
                })?;
                byte_of[i] = b;
                if byte_ids[usize::from(b)] == NONE {
                    byte_ids[usize::from(b)] = id;
                }
            }
            let map = if by_rank || kind.mergeable() {
                &mut table_map
            } else {
                &mut reserved
            };
            if let Some(other) = map.insert(piece.as_bytes().to_vec(), id) {
                return Err(invalid(format!(
                    "piece {piece:?} is defined twice (ids {other} and {id})"
                )));
            }
        }
        let unk = match spec.unk_id {
            Some(u) if (u as usize) < n => {
                if !by_rank && spec.pieces[u as usize].2 != PieceKind::Unknown {
                    return Err(invalid(format!(
                        "the unknown piece {u} ({:?}) is not of type UNKNOWN",
                        spec.pieces[u as usize].0
                    )));
                }
                u
            }
            Some(u) => {
                return Err(invalid(format!(
                    "the unknown id {u} is no piece (there are {n})"
                )));
            }
            None if by_rank => NONE,
            None => {
                return Err(invalid(
                    "sentencepiece's merge needs an unknown piece".into(),
                ));
            }
        };
        if spec.byte_fallback && !by_rank {
            if let Some(b) = byte_ids.iter().position(|&id| id == NONE) {
                return Err(invalid(format!(
                    "byte_fallback needs the 256 byte pieces <0x00>..<0xFF>; <0x{b:02X}> is missing"
                )));
            }
        }

        let mut byte_ranks = [NONE; 256];
        for (b, slot) in byte_ranks.iter_mut().enumerate() {
            if let Some(&id) = table_map.get(&[b as u8][..]) {
                *slot = id;
            }
        }
        let table = TokenTable::new(&table_map, &byte_ranks);
        let cut_char = if spec.escape_whitespaces {
            spec.replacement
        } else {
            ' '
        };

        let mut merges = None;
        let mut score = None;
        let mut has_unused = false;
        // Which cuts are safe follows from the strings merges can make (see `chunks.rs`); the
        // pair rule also needs symbols that spell their text, which byte fallback tokens and
        // the unknown token do not, and words whole for `ignore_merges`.
        let mut pairs_safe = true;
        let ((joinable, before, after), pairs_safe) = if let Some(list) = &spec.merges {
            let mut map = FxHashMap::default();
            let mut results = Vec::with_capacity(list.len());
            for (i, &(left, right)) in list.iter().enumerate() {
                let (Some(l), Some(r)) = (
                    spec.pieces.get(left as usize),
                    spec.pieces.get(right as usize),
                ) else {
                    return Err(invalid(format!(
                        "merge {i} names id {}, which is no piece",
                        left.max(right)
                    )));
                };
                let joined = format!("{}{}", l.0, r.0);
                let Some(&made) = table_map.get(joined.as_bytes()) else {
                    return Err(invalid(format!(
                        "merge {i} ({:?}, {:?}) makes {joined:?}, which is no piece",
                        l.0, r.0
                    )));
                };
                map.insert(u64::from(left) << 32 | u64::from(right), (i as u32, made));
                results.push(joined);
                for side in [left, right] {
                    pairs_safe &= side != unk && spec.pieces[side as usize].2 != PieceKind::Byte;
                }
            }
            merges = Some(map);
            pairs_safe &= !spec.ignore_merges;
            (adjacent_pairs(results.iter(), cut_char), pairs_safe)
        } else {
            let mut scores: Vec<f32> = spec
                .pieces
                .iter()
                .filter(|p| p.2.mergeable())
                .map(|p| p.1 + 0.0)
                .collect();
            // Highest first; equal scores share a rank, so ties go to the leftmost pair.
            scores.sort_by(|a, b| b.total_cmp(a));
            scores.dedup_by(|a, b| a.total_cmp(b).is_eq());
            let score_rank = spec
                .pieces
                .iter()
                .map(|p| {
                    let s = p.1 + 0.0;
                    scores
                        .binary_search_by(|x| s.total_cmp(x))
                        .map_or(u32::MAX, |r| r as u32)
                })
                .collect();
            let final_id = spec
                .pieces
                .iter()
                .enumerate()
                .map(|(i, p)| reserved.get(p.0.as_bytes()).copied().unwrap_or(i as Rank))
                .collect();
            let unused: Vec<bool> = spec
                .pieces
                .iter()
                .map(|p| p.2 == PieceKind::Unused)
                .collect();
            has_unused = unused.contains(&true);
            let user_pieces: Vec<&str> = spec
                .pieces
                .iter()
                .filter(|p| p.2 == PieceKind::UserDefined)
                .map(|p| p.0.as_str())
                .collect();
            let user =
                if user_pieces.is_empty() {
                    None
                } else {
                    Some(literals::leftmost_longest(&user_pieces).map_err(|e| {
                        invalid(format!("cannot index the user-defined pieces: {e}"))
                    })?)
                };
            score = Some(ScoreRules {
                score_rank,
                final_id,
                reserved,
                unused,
                has_unused,
                user,
                joins: None,
                flat_keys_fit: scores.len() < FLAT_RANK_LIMIT as usize,
            });
            let strings = spec.pieces.iter().filter(|p| p.2.mergeable());
            (
                adjacent_pairs(strings.map(|p| p.0.as_str()), cut_char),
                !has_unused,
            )
        };
        let cut = if by_rank && spec.split_on_replacement {
            Cut::EverySpace
        } else if has_unused {
            Cut::Nowhere
        } else if !before {
            Cut::BeforeSpace
        } else if !after {
            Cut::AfterSpace
        } else {
            Cut::Nowhere
        };

        let tokens = Self::tokens_of(&spec)?;
        let user_for_normalizer = score
            .as_ref()
            .and_then(|s| s.user.clone())
            .filter(|_| spec.remove_extra_whitespaces);
        let mut encoder = SentencePieceEncoder {
            table,
            score,
            merges,
            byte_ids,
            byte_of,
            whole: vec![false; n],
            unk,
            byte_fallback: spec.byte_fallback,
            fuse_unknown: if by_rank {
                spec.fuse_unk && !spec.split_on_replacement
            } else {
                !spec.byte_fallback
            },
            fuse_unk: spec.fuse_unk,
            ignore_merges: spec.ignore_merges && by_rank,
            normalizer: Normalizer {
                remove_extra_whitespaces: spec.remove_extra_whitespaces,
                escape_whitespaces: spec.escape_whitespaces,
                treat_whitespace_as_suffix: spec.treat_whitespace_as_suffix,
                replacement: spec.replacement,
                prefix_if_absent: matches!(
                    spec.prepend,
                    Prepend::AlwaysUnlessPresent | Prepend::First
                ),
                user: user_for_normalizer,
            },
            prepend: spec.prepend,
            replacement: spec.replacement,
            cut_char,
            cut,
            joinable: pairs_safe.then_some(joinable),
            cacheable: !has_unused,
            char_ids: Box::default(),
            char_pieces: Box::default(),
            decoder: spec.decoder,
            unk_surface: spec.unk_surface,
            tokens,
            owner: crate::merge::cache::new_owner(),
            pieces: spec.pieces,
        };
        let joins = encoder.join_table();
        if joins.is_some() {
            encoder.char_pieces = encoder.char_piece_table();
        }
        if let Some(rules) = encoder.score.as_mut() {
            rules.joins = joins;
        }
        encoder.whole = encoder.whole_pieces();
        encoder.char_ids = encoder.char_table();
        Ok(encoder)
    }

    /// The score rule's joins by the ids of their two sides, so that a merge looks up a pair of
    /// ids instead of the bytes they spell. Exact when every character of a piece of two or more
    /// is a piece itself (then a symbol without an id joins nothing, by either lookup); `None`
    /// otherwise, and with UNUSED pieces, whose joins the merge must record.
    fn join_table(&self) -> Option<JoinTable> {
        let rules = self.score.as_ref().filter(|r| !r.has_unused)?;
        let mut joins = Vec::new();
        for (i, (piece, _, kind)) in self.pieces.iter().enumerate() {
            let bytes = piece.as_bytes();
            if !kind.mergeable() || self.lookup_in(bytes, bytes) != Some(i as Rank) {
                continue;
            }
            for (at, c) in piece.char_indices().skip(1) {
                let char_bytes = &bytes[at..at + c.len_utf8()];
                self.lookup_in(bytes, char_bytes)?;
                let (left, right) = (&bytes[..at], &bytes[at..]);
                if let (Some(l), Some(r)) =
                    (self.lookup_in(bytes, left), self.lookup_in(bytes, right))
                {
                    joins.push((l, r, rules.score_rank[i], i as Rank));
                }
            }
            if let Some(c) = piece
                .chars()
                .next()
                .filter(|_| piece.chars().nth(1).is_some())
            {
                self.lookup_in(bytes, &bytes[..c.len_utf8()])?;
            }
        }
        Some(JoinTable::new(joins))
    }

    /// By id: whether the piece's text, merged alone, is the piece itself (then a chunk that
    /// spells a piece needs no merge).
    fn whole_pieces(&self) -> Vec<bool> {
        let mut scratch = MergeScratch::default();
        let mut ids = Vec::new();
        self.pieces
            .iter()
            .enumerate()
            .map(|(i, (piece, _, _))| {
                let Some(id) = self.lookup_in(piece.as_bytes(), piece.as_bytes()) else {
                    return false;
                };
                if id as usize != i {
                    return false;
                }
                ids.clear();
                self.merge_chunk(piece, &mut scratch, &mut ids);
                ids[..] == [self.final_id(id)]
            })
            .collect()
    }

    /// The tokens as the [`crate::Encoder`] trait sees them: the bytes of each id (the
    /// replacement as a space, byte pieces as their byte, control pieces as nothing, the
    /// unknown piece as its surface), ordinary tokens by those bytes, and the specials.
    fn tokens_of(spec: &SentencePieceSpec) -> Result<Tokens, Error> {
        let bytes_of = |(piece, _, kind): &(String, f32, PieceKind)| -> Vec<u8> {
            match kind {
                PieceKind::Byte => byte_of_piece(piece).map(|b| vec![b]).unwrap_or_default(),
                PieceKind::Control => Vec::new(),
                PieceKind::Unknown => spec.unk_surface.as_bytes().to_vec(),
                _ => piece
                    .chars()
                    .map(|c| if c == spec.replacement { ' ' } else { c })
                    .collect::<String>()
                    .into_bytes(),
            }
        };
        let by_id: Vec<Vec<u8>> = spec.pieces.iter().map(bytes_of).collect();
        let mut ranks = RankMap::default();
        for (i, p) in spec.pieces.iter().enumerate() {
            if p.2.mergeable() && !by_id[i].is_empty() {
                ranks.entry(by_id[i].clone()).or_insert(i as Rank);
            }
        }
        for (i, p) in spec.pieces.iter().enumerate() {
            if p.2 == PieceKind::Byte {
                ranks.entry(by_id[i].clone()).or_insert(i as Rank);
            }
        }
        let mut specials = FxHashMap::default();
        for (name, id) in &spec.special_tokens {
            if name.is_empty() || *id as usize >= spec.pieces.len() {
                return Err(invalid(format!(
                    "special token {name:?} has id {id}, which is no piece"
                )));
            }
            specials.insert(name.clone(), *id);
        }
        Ok(Tokens {
            ranks,
            specials,
            by_id: TokenBytes::from_slots(by_id.iter().map(|b| Some(b.as_slice())))?,
        })
    }
}
