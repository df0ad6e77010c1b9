//! The score rule on a chunk of one repeated character (a megabyte of spaces), where every
//! piece of that character repeated has the same score.
//!
//! Llama 2 gives its runs of the whitespace piece, from two to sixteen, one score. Then every
//! possible join ties and the leftmost joins first, which a stack does in one pass: each
//! character in turn joins the symbol before it while the two spell a piece. The queue's
//! general merge took about three times English prose per byte on a megabyte of spaces.

use super::SentencePieceEncoder;
use super::merge::NONE;
use crate::Rank;

/// Chunks of fewer characters take the usual merge, which is as fast on them.
pub(super) const UNIFORM_MIN_CHARS: usize = 64;

impl SentencePieceEncoder {
    /// Append the ids of `chunk`, one character of `unit` bytes repeated (a piece itself), by
    /// the score rule and return true; false, appending nothing, if the pieces of the repeated
    /// character do not all share one score.
    pub(super) fn merge_uniform(&self, chunk: &[u8], unit: usize, out: &mut Vec<Rank>) -> bool {
        let Some(rules) = self.score.as_ref() else {
            return false;
        };
        let chars = chunk.len() / unit;
        let longest = (self.table.max_len() / unit).min(chars);
        // By length: the piece of the character repeated that often, or NONE.
        let mut ids = vec![NONE; longest + 1];
        let mut rank = None;
        for (len, slot) in ids.iter_mut().enumerate().skip(1) {
            let Some(id) = self.lookup_in(chunk, &chunk[..len * unit]) else {
                continue;
            };
            *slot = id;
            if len >= 2 {
                match rank {
                    None => rank = Some(rules.score_rank[id as usize]),
                    Some(r) if r != rules.score_rank[id as usize] => return false,
                    Some(_) => {}
                }
            }
        }
        if ids.get(1).is_none_or(|&id| id == NONE) {
            return false;
        }
        // The symbols so far, by length; no two adjacent ones spell a piece.
        let mut symbols: Vec<u32> = Vec::new();
        for _ in 0..chars {
            let mut last = 1;
            while let Some(&before) = symbols.last() {
                let joined = before as usize + last;
                if ids.get(joined).is_none_or(|&id| id == NONE) {
                    break;
                }
                symbols.pop();
                last = joined;
            }
            symbols.push(last as u32);
        }
        out.extend(
            symbols
                .iter()
                .map(|&len| rules.final_id[ids[len as usize] as usize]),
        );
        true
    }
}
