//! The score rule's joins by the ids of their two sides.
//!
//! A merge asks, for each pair of adjacent symbols, which piece (if any) spells both; by ids
//! that is one probe of a table built at load instead of hashing the bytes the pair spells.
//! Vocabularies below 65,535 pieces (Llama 2, Mistral 7B: 32,000) pack a join in eight bytes,
//! open addressing in a table about 1 MB for Llama 2, which stays in a core's L2 cache; larger
//! ones use a hash map.

use rustc_hash::FxHashMap;

use crate::Rank;

const EMPTY: u64 = u64::MAX;
/// Ids and score ranks below this pack into sixteen bits each.
const COMPACT_LIMIT: u32 = 0xFFFF;

#[derive(Debug, Clone)]
pub(super) enum JoinTable {
    /// Slots of `(left << 16 | right) << 32 | score rank << 16 | id`, `EMPTY` where free;
    /// linear probing from the key's hash.
    Compact { slots: Box<[u64]>, shift: u32 },
    /// `(left << 32 | right)` -> `(score rank << 32 | id)`.
    Wide(FxHashMap<u64, u64>),
}

#[inline(always)]
fn home(key: u32, shift: u32) -> usize {
    (u64::from(key).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

impl JoinTable {
    /// The table of `joins`: `(left, right, score rank, id)`, each pair once.
    pub(super) fn new(joins: Vec<(Rank, Rank, u32, Rank)>) -> Self {
        let compact = joins
            .iter()
            .all(|&(l, r, rank, id)| l.max(r).max(rank).max(id) < COMPACT_LIMIT);
        if !compact {
            let map = joins
                .into_iter()
                .map(|(l, r, rank, id)| {
                    (
                        u64::from(l) << 32 | u64::from(r),
                        u64::from(rank) << 32 | u64::from(id),
                    )
                })
                .collect();
            return JoinTable::Wide(map);
        }
        let size = (joins.len() * 2).next_power_of_two().max(16);
        let shift = 64 - size.trailing_zeros();
        let mut slots = vec![EMPTY; size].into_boxed_slice();
        for (l, r, rank, id) in joins {
            let key = l << 16 | r;
            let mut at = home(key, shift);
            while slots[at] != EMPTY {
                at = (at + 1) & (size - 1);
            }
            slots[at] = u64::from(key) << 32 | u64::from(rank) << 16 | u64::from(id);
        }
        JoinTable::Compact { slots, shift }
    }

    /// The `(score rank, id)` of the piece that `left` then `right` spell.
    #[inline(always)]
    pub(super) fn get(&self, left: Rank, right: Rank) -> Option<(u32, Rank)> {
        match self {
            JoinTable::Compact { slots, shift } => {
                // Ids at or above the limit are in no join (the table would be wide).
                if left.max(right) >= COMPACT_LIMIT {
                    return None;
                }
                let key = left << 16 | right;
                let mask = slots.len() - 1;
                let mut at = home(key, *shift);
                loop {
                    let slot = slots[at];
                    if slot == EMPTY {
                        return None;
                    }
                    if (slot >> 32) as u32 == key {
                        return Some(((slot >> 16) as u32 & 0xFFFF, slot as u32 & 0xFFFF));
                    }
                    at = (at + 1) & mask;
                }
            }
            JoinTable::Wide(map) => {
                let made = *map.get(&(u64::from(left) << 32 | u64::from(right)))?;
                Some(((made >> 32) as u32, made as Rank))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::panic)]

    use super::*;

    #[test]
    fn both_layouts_find_every_join_and_nothing_else() {
        let joins: Vec<(Rank, Rank, u32, Rank)> = (0..5000u32)
            .map(|i| (i % 97, i / 97, i % 1000, 40000 + i % 20000))
            .collect();
        let mut wide = joins.clone();
        wide.push((70000, 1, 5, 7));
        let (compact, wide) = (JoinTable::new(joins.clone()), JoinTable::new(wide));
        assert!(matches!(compact, JoinTable::Compact { .. }));
        assert!(matches!(wide, JoinTable::Wide(_)));
        for table in [&compact, &wide] {
            for &(l, r, rank, id) in &joins {
                assert_eq!(table.get(l, r), Some((rank, id)));
            }
            assert_eq!(table.get(96, 60), None);
            assert_eq!(table.get(0, 97), None);
            assert_eq!(table.get(70001, 1), None);
        }
        assert_eq!(wide.get(70000, 1), Some((5, 7)));
        assert_eq!(compact.get(0xFFFF, 0), None);
    }
}
