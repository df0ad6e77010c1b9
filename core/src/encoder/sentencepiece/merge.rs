//! Merging one chunk of normalized text into ids, by either rule.
//!
//! Both join over a doubly linked list of symbols: short chunks by scanning each symbol's best
//! join, long ones with a priority queue (`queue.rs`), `O(n log n)` on any chunk:
//! - by score (`bpe_model.cc`): symbols are user-defined pieces (frozen) or single characters;
//!   the adjacent pair whose concatenation is the piece of highest score joins first, the
//!   leftmost on ties; stale candidates are recognised by their size, as there; UNUSED
//!   pieces are split back into the two parts they were last made from;
//! - by merge rank (`tokenizers`' `Word::merge_all`): symbols are ids (characters, byte
//!   fallback tokens, the unknown token); the pair of lowest merge rank joins first, the leftmost
//!   on ties; an entry is stale when its pair no longer makes the same token.

use std::cell::RefCell;

use rustc_hash::FxHashMap;

use super::SentencePieceEncoder;
use super::queue::CandidateQueue;
use super::uniform::UNIFORM_MIN_CHARS;
use crate::Rank;

pub(super) const NONE: u32 = u32::MAX;

/// One symbol of the linked list. For the score rule a symbol is the bytes
/// `start..start + len` of the chunk (`len == 0`: joined into its left neighbour); for the rank
/// rule it is `id` (`NONE`: joined).
#[derive(Clone, Copy)]
struct Symbol {
    start: u32,
    len: u32,
    id: Rank,
    prev: u32,
    next: u32,
    frozen: bool,
}

/// The buffers of one merge, kept by each thread between chunks.
#[derive(Default)]
pub(super) struct MergeScratch {
    symbols: Vec<Symbol>,
    /// The long chunks' candidate joins: `(priority << 32 | left symbol, size, new id)`.
    queue: CandidateQueue,
    /// UNUSED piece id -> the (start, len) of the two parts that last made it.
    rev: FxHashMap<Rank, [(u32, u32); 2]>,
    stack: Vec<(u32, u32)>,
    /// By symbol: its best join with its right neighbour (the flat merge of short chunks), and
    /// that join's priority alone, scanned for the least.
    flat: Vec<(u64, u32, Rank)>,
    priority: Vec<u32>,
}

/// Chunks of at most this many symbols merge by scanning, not with the queue.
const FLAT_MAX: usize = 24;
/// The bits of a symbol's index in the scan's keys (`FLAT_MAX` fits).
const FLAT_SYMBOL_BITS: u32 = 5;
/// Score ranks below this leave room for the index in a 32-bit key.
pub(super) const FLAT_RANK_LIMIT: u32 = 1 << (32 - FLAT_SYMBOL_BITS);

thread_local! {
    static SCRATCH: RefCell<MergeScratch> = RefCell::new(MergeScratch::default());
}

/// Run `f` with this thread's merge buffers (fresh ones if they are in use further up).
pub(super) fn with_merge_scratch<R>(f: impl FnOnce(&mut MergeScratch) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => {
            let r = f(&mut s);
            if s.symbols.capacity() > 1 << 20 {
                *s = MergeScratch::default();
            }
            r
        }
        Err(_) => f(&mut MergeScratch::default()),
    })
}

/// The byte length of the UTF-8 character whose first byte is `b`.
#[inline(always)]
pub(super) fn char_len(b: u8) -> usize {
    match b {
        0..0xC0 => 1,
        0xC0..0xE0 => 2,
        0xE0..0xF0 => 3,
        _ => 4,
    }
}

fn link(symbols: &mut [Symbol]) {
    let n = symbols.len();
    for (i, s) in symbols.iter_mut().enumerate() {
        s.prev = if i == 0 { NONE } else { i as u32 - 1 };
        s.next = if i + 1 == n { NONE } else { i as u32 + 1 };
    }
}

fn symbol(start: usize, len: usize, id: Rank, frozen: bool) -> Symbol {
    Symbol {
        start: start as u32,
        len: len as u32,
        id,
        prev: NONE,
        next: NONE,
        frozen,
    }
}

impl SentencePieceEncoder {
    /// The mergeable piece (score rule) or vocabulary token (rank rule) spelled `bytes`.
    #[inline(always)]
    pub(super) fn lookup_in(&self, text: &[u8], bytes: &[u8]) -> Option<Rank> {
        let id = if bytes.len() == 1 {
            self.table.byte_ranks()[usize::from(bytes[0])]
        } else {
            self.table.piece_rank_in(text, bytes)?
        };
        (id != NONE).then_some(id)
    }

    /// Append the ids of `chunk` by the score rule.
    pub(super) fn merge_by_score(&self, chunk: &str, s: &mut MergeScratch, out: &mut Vec<Rank>) {
        let bytes = chunk.as_bytes();
        let Some(rules) = &self.score else { return };
        if !rules.has_unused && rules.user.is_none() {
            let unit = bytes.first().map_or(1, |&b| char_len(b));
            if bytes.len() >= UNIFORM_MIN_CHARS * unit
                && bytes.len() % unit == 0
                && bytes[unit..] == bytes[..bytes.len() - unit]
                && self.merge_uniform(bytes, unit, out)
            {
                return;
            }
        }
        s.symbols.clear();
        s.rev.clear();
        let joins = rules.joins.as_ref();
        // With the join table a character's symbol starts with its id (NONE: it joins nothing).
        let push_chars = |symbols: &mut Vec<Symbol>, from: usize, to: usize| {
            let mut at = from;
            while at < to {
                let len = char_len(bytes[at]).min(to - at);
                let id = match joins {
                    Some(_) => self.char_piece(bytes, at, len),
                    None => NONE,
                };
                symbols.push(symbol(at, len, id, false));
                at += len;
            }
        };
        match &rules.user {
            Some(user) => {
                let mut at = 0;
                for m in user.find_iter(chunk) {
                    push_chars(&mut s.symbols, at, m.start());
                    s.symbols.push(symbol(m.start(), m.len(), NONE, true));
                    at = m.end();
                }
                push_chars(&mut s.symbols, at, bytes.len());
            }
            None => push_chars(&mut s.symbols, 0, bytes.len()),
        }
        link(&mut s.symbols);

        let MergeScratch {
            symbols,
            queue,
            rev,
            stack,
            flat,
            priority,
        } = s;
        // The join of `left` and `right` if it is a piece: (priority, size, id).
        let mut consider = |symbols: &[Symbol], left: u32, right: u32| {
            if left == NONE || right == NONE {
                return None;
            }
            let (l, r) = (symbols[left as usize], symbols[right as usize]);
            if l.frozen || r.frozen {
                return None;
            }
            if let Some(joins) = joins {
                if l.id == NONE || r.id == NONE {
                    return None;
                }
                let (rank, id) = joins.get(l.id, r.id)?;
                let priority = u64::from(rank) << 32 | u64::from(left);
                return Some((priority, l.len + r.len, id));
            }
            let (start, end) = (l.start as usize, (r.start + r.len) as usize);
            let id = self.lookup_in(bytes, &bytes[start..end])?;
            if rules.has_unused && rules.unused[id as usize] {
                rev.insert(id, [(l.start, l.len), (r.start, r.len)]);
            }
            let priority = u64::from(rules.score_rank[id as usize]) << 32 | u64::from(left);
            Some((priority, l.len + r.len, id))
        };
        let join = |symbols: &mut [Symbol], left: usize, size: u32, id: Rank| {
            let right = symbols[left].next;
            let after = symbols[right as usize].next;
            symbols[left].len = size;
            symbols[left].id = id;
            symbols[left].next = after;
            if after != NONE {
                symbols[after as usize].prev = left as u32;
            }
            symbols[right as usize].len = 0;
            (symbols[left].prev, after)
        };
        let n = symbols.len();
        if n <= FLAT_MAX && rules.flat_keys_fit {
            // Few symbols: the best join of each symbol with its right neighbour, scanned for
            // the best overall; the same joins in the same order as the queue below.
            // A priority's low half is its left symbol, so the least one names the join.
            flat.clear();
            flat.resize(n, (u64::MAX, 0, 0));
            for i in 1..n as u32 {
                if let Some(join) = consider(symbols, i - 1, i) {
                    flat[i as usize - 1] = join;
                }
            }
            // The scan compares 32-bit keys (score rank, then the symbol's 5 bits), half the
            // bytes of the full priorities; `flat_keys_fit` says every rank leaves room.
            let short_key = |p: u64| ((p >> 32) << FLAT_SYMBOL_BITS | (p & 0xFFFF_FFFF)) as u32;
            priority.clear();
            priority.extend(flat.iter().map(|c| short_key(c.0)));
            loop {
                let best = priority.iter().copied().fold(u32::MAX, u32::min);
                if best == u32::MAX {
                    break;
                }
                let left = (best & ((1 << FLAT_SYMBOL_BITS) - 1)) as usize;
                let (_, size, id) = flat[left];
                let right = symbols[left].next as usize;
                priority[right] = u32::MAX;
                let (before, after) = join(symbols, left, size, id);
                let mut reconsider = |at: usize, join: Option<(u64, u32, Rank)>| {
                    let join = join.unwrap_or((u64::MAX, 0, 0));
                    flat[at] = join;
                    priority[at] = if join.0 == u64::MAX {
                        u32::MAX
                    } else {
                        short_key(join.0)
                    };
                };
                reconsider(left, consider(symbols, left as u32, after));
                if before != NONE {
                    reconsider(before as usize, consider(symbols, before, left as u32));
                }
            }
        } else {
            queue.reset((1..n as u32).filter_map(|i| consider(symbols, i - 1, i)));
            while let Some((key, size, id)) = queue.pop() {
                let left = (key & 0xFFFF_FFFF) as usize;
                let (l, right) = (symbols[left], symbols[left].next);
                // Stale: either side joined since, as `bpe_model.cc` checks with the sizes
                // (they only grow, and a symbol's right neighbour changes only when it joins).
                if l.len == 0 || right == NONE || l.len + symbols[right as usize].len != size {
                    continue;
                }
                let (before, after) = join(symbols, left, size, id);
                for (a, b) in [(before, left as u32), (left as u32, after)] {
                    if let Some(candidate) = consider(symbols, a, b) {
                        queue.push(candidate);
                    }
                }
            }
        }

        let mut prev_unknown = false;
        let mut i = if symbols.is_empty() { NONE } else { 0 };
        while i != NONE {
            let sym = symbols[i as usize];
            stack.clear();
            stack.push((sym.start, sym.len));
            // A joined symbol knows its piece; the others are looked up.
            let mut known = sym.id;
            while let Some((start, len)) = stack.pop() {
                let piece = &bytes[start as usize..(start + len) as usize];
                let found = if known == NONE {
                    self.lookup_in(bytes, piece)
                } else {
                    Some(std::mem::replace(&mut known, NONE))
                };
                let id = match found {
                    Some(id) => rules.final_id[id as usize],
                    None => rules.reserved.get(piece).copied().unwrap_or(self.unk),
                };
                if rules.has_unused && rules.unused.get(id as usize) == Some(&true) {
                    if let Some(&[left, right]) = rev.get(&id) {
                        stack.push(right);
                        stack.push(left);
                        continue;
                    }
                }
                let unknown = id == self.unk;
                if unknown && self.byte_fallback {
                    out.extend(piece.iter().map(|&b| self.byte_ids[usize::from(b)]));
                } else if !(unknown && prev_unknown) {
                    out.push(id);
                }
                prev_unknown = unknown;
            }
            i = sym.next;
        }
    }

    /// Append the ids of `chunk` by the merge-rank rule.
    pub(super) fn merge_by_rank(&self, chunk: &str, s: &mut MergeScratch, out: &mut Vec<Rank>) {
        let bytes = chunk.as_bytes();
        let Some(merges) = &self.merges else { return };
        s.symbols.clear();
        let symbols = &mut s.symbols;
        // The unknown token waiting to be added, as `tokenizers` keeps it: a run of unknown
        // characters is one token with `fuse_unk`.
        let mut pending_unknown = false;
        let mut at = 0;
        while at < bytes.len() {
            let len = char_len(bytes[at]).min(bytes.len() - at);
            let c = &bytes[at..at + len];
            if let Some(id) = self.lookup_in(bytes, c) {
                if std::mem::take(&mut pending_unknown) {
                    symbols.push(symbol(0, 1, self.unk, false));
                }
                symbols.push(symbol(0, 1, id, false));
            } else if self.byte_fallback && c.iter().all(|&b| self.byte_ids[usize::from(b)] != NONE)
            {
                for &b in c {
                    symbols.push(symbol(0, 1, self.byte_ids[usize::from(b)], false));
                }
            } else if self.unk != NONE {
                if pending_unknown && !self.fuse_unk {
                    symbols.push(symbol(0, 1, self.unk, false));
                }
                pending_unknown = true;
            }
            at += len;
        }
        if pending_unknown {
            symbols.push(symbol(0, 1, self.unk, false));
        }
        link(symbols);

        let pair = |a: Rank, b: Rank| merges.get(&(u64::from(a) << 32 | u64::from(b))).copied();
        let queue = &mut s.queue;
        queue.reset(symbols.windows(2).enumerate().filter_map(|(i, w)| {
            let (rank, new) = pair(w[0].id, w[1].id)?;
            Some((u64::from(rank) << 32 | i as u64, new, 0))
        }));
        while let Some((key, new, _)) = queue.pop() {
            let pos = (key & 0xFFFF_FFFF) as usize;
            let current = symbols[pos];
            if current.id == NONE || current.next == NONE {
                continue;
            }
            let right = symbols[current.next as usize];
            if pair(current.id, right.id).is_none_or(|(_, id)| id != new) {
                continue;
            }
            symbols[pos].id = new;
            symbols[pos].next = right.next;
            symbols[current.next as usize].id = NONE;
            if right.next != NONE {
                symbols[right.next as usize].prev = pos as u32;
            }
            if current.prev != NONE {
                let before = symbols[current.prev as usize].id;
                if let Some((rank, made)) = pair(before, new) {
                    let at = u64::from(current.prev);
                    queue.push((u64::from(rank) << 32 | at, made, 0));
                }
            }
            if right.next != NONE {
                let after = symbols[right.next as usize].id;
                if let Some((rank, made)) = pair(new, after) {
                    queue.push((u64::from(rank) << 32 | pos as u64, made, 0));
                }
            }
        }
        out.extend(symbols.iter().filter(|s| s.id != NONE).map(|s| s.id));
    }
}
