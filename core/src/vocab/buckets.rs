//! A read-mostly hash table from packed token keys to ranks where a lookup touches one cache
//! line.
//!
//! A lookup in a general hash table (`hashbrown`) reads a line of control bytes and then, on a
//! tag match, the line holding the entry: two dependent cache misses when the table is larger
//! than the cache, which a vocabulary of 200k tokens is, and those two loads are where the
//! encoder spends its time. Here keys and ranks share 64-byte buckets
//! (five `u64` keys or three `u128` keys, with their ranks), so the line that holds the key also
//! holds the answer, and the table is half the size. A key is found in its home bucket or, if
//! that bucket was full when it was inserted, in one of the buckets after it (linear probing
//! over buckets); a bucket that no insert ever found full (a flag in the line) ends the search.
//!
//! Many lookups during a merge are for byte strings that are not tokens. `hashbrown` answers
//! those from its control bytes, one byte per slot, which stay in the cache; a bucket table alone
//! would fetch a bucket for each of them, which made it slower than `hashbrown`. So the table has
//! a Bloom filter in front (two bits per key, about 16 bits of filter per key) that turns away
//! nearly all absent keys without waiting for a bucket (whose line is only asked for: see
//! [`BucketTable::get`]). The figures are in `docs/performance.md`.
//!
//! Keys are inserted in rank order. Ranks follow the order of the merges, which roughly follows
//! how common a token was in the text the vocabulary was trained on, so a key that finds its
//! home bucket full and has to go past it is one of the rarer tokens, and the tokens text uses
//! most are in their home buckets. A lookup of a key past its home bucket reads a second line
//! after a mispredicted branch, so inserting in rank order keeps that second line off the
//! common tokens' path.
//!
//! Keys are mixed with a random seed drawn for each table: a vocabulary file made so that its
//! tokens share buckets would make building and searching the table quadratic, and without the
//! seed such a file could be prepared in advance.

use std::hash::{BuildHasher, RandomState};

use crate::Rank;
use crate::mem::huge_pages::{HugePageArray, usable_len};

/// A packed token key (see [`crate::packed`]): never zero, because the length is in the top
/// byte, so zero marks an empty slot.
pub trait Key: Copy + Eq + Default {
    /// Slots per bucket: as many keys with their ranks as fit 64 bytes.
    const SLOTS: usize;
    /// A hash of the key whose high bits depend on all of its bits.
    fn spread(self, seed: u64) -> u64;
}

const MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;

impl Key for u64 {
    const SLOTS: usize = 5;
    #[inline(always)]
    fn spread(self, seed: u64) -> u64 {
        (self ^ seed).wrapping_mul(MULTIPLIER)
    }
}

impl Key for u128 {
    const SLOTS: usize = 3;
    #[inline(always)]
    fn spread(self, seed: u64) -> u64 {
        let low = (self as u64 ^ seed).wrapping_mul(MULTIPLIER);
        (low ^ (self >> 64) as u64).wrapping_mul(MULTIPLIER)
    }
}

/// Up to five (`u64`) or three (`u128`) keys and their ranks in one cache line; unused slots
/// hold key zero, and slots fill in order, so a bucket is full when its last key is set.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Bucket<K, const W: usize> {
    keys: [K; W],
    ranks: [Rank; W],
    /// Not zero when an insert found this bucket full and went on to the next: only then can
    /// a key missing here be further on (in the four bytes the keys and ranks leave free).
    overflow: u32,
}

/// Packed keys to ranks; see the module documentation.
#[derive(Debug, Clone)]
pub struct BucketTable<K: Key, const W: usize> {
    buckets: HugePageArray<Bucket<K, W>>,
    /// The Bloom filter: bit `i` is `filter[i / 64] >> (i % 64) & 1`.
    filter: Box<[u64]>,
    /// A filter bit index is the top bits of a hash: `64 - log2(filter bits)`.
    filter_shift: u32,
    /// Mixed into every key's hash (see the module documentation).
    seed: u64,
}

/// Keys of up to 7 bytes.
pub type ShortTable = BucketTable<u64, 5>;
/// Keys of 8 to 15 bytes.
pub type MediumTable = BucketTable<u128, 3>;

impl<K: Key, const W: usize> BucketTable<K, W> {
    /// A table for `entries` (key, rank) pairs whose keys are distinct and non-zero.
    pub fn new(mut entries: Vec<(K, Rank)>) -> Self {
        const { assert!(W == K::SLOTS && std::mem::size_of::<Bucket<K, W>>() == 64) };
        // At most four fifths full (for five slots), so that nearly every key is in its home
        // bucket and a search for an absent key usually ends there too.
        let n = entries.len();
        // Any number of buckets, not a power of two: rounding up would leave up to half of a
        // table that should stay in the cache empty.
        let count = (n * 5).div_ceil(4 * W).max(n / W + 1);
        // A table that fills at least three quarters of its 2 MiB pages is given them (see
        // `huge_pages`), and as many buckets as fill them: o200k's short tokens fit one page,
        // its medium ones nearly one.
        let count = usable_len::<Bucket<K, W>>(count);
        let filter_bits = (n * 12).max(64).next_power_of_two();
        let empty = Bucket {
            keys: [K::default(); W],
            ranks: [0; W],
            overflow: 0,
        };
        let mut table = Self {
            buckets: HugePageArray::filled(count, empty),
            filter: vec![0; filter_bits / 64].into_boxed_slice(),
            filter_shift: 64 - filter_bits.trailing_zeros(),
            seed: RandomState::new().hash_one(n),
        };
        // Lower ranks first: a key finds its home bucket full only of keys ranked below it,
        // so the tokens that text uses most are in their home buckets (see the module
        // documentation).
        entries.sort_unstable_by_key(|&(_, rank)| rank);
        for (key, rank) in entries {
            table.insert(key, rank);
        }
        table
    }

    /// Whether `key` (in the table) is outside its home bucket.
    #[cfg(test)]
    fn displaced(&self, key: K) -> bool {
        !self.buckets[self.home(key)].keys.contains(&key)
    }

    /// The bucket where the search for `key` starts: the hash scaled to the number of buckets
    /// (its high bits pick the bucket).
    #[inline(always)]
    fn home(&self, key: K) -> usize {
        ((u128::from(key.spread(self.seed)) * self.buckets.len() as u128) >> 64) as usize
    }

    /// The bucket after `b`, the first after the last.
    #[inline(always)]
    fn after(&self, b: usize) -> usize {
        if b + 1 == self.buckets.len() {
            0
        } else {
            b + 1
        }
    }

    /// The two filter bits of `key`, from a second hash: the bucket index takes the top bits
    /// of the first, so these must not.
    #[inline(always)]
    fn filter_bits(&self, key: K) -> [usize; 2] {
        let h = key.spread(self.seed);
        let g = (h ^ h >> 29).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        [g, g << 24].map(|bits| (bits >> self.filter_shift) as usize)
    }

    /// False if `key` is certainly not in the table.
    #[inline(always)]
    fn may_contain(&self, key: K) -> bool {
        let [a, b] = self.filter_bits(key);
        (self.filter[a / 64] >> (a % 64)) & (self.filter[b / 64] >> (b % 64)) & 1 != 0
    }

    fn insert(&mut self, key: K, rank: Rank) {
        debug_assert!(key != K::default());
        for bit in self.filter_bits(key) {
            self.filter[bit / 64] |= 1 << (bit % 64);
        }
        let mut b = self.home(key);
        loop {
            let bucket = &mut self.buckets[b];
            if let Some(slot) = bucket.keys.iter().position(|&k| k == K::default()) {
                bucket.keys[slot] = key;
                bucket.ranks[slot] = rank;
                return;
            }
            bucket.overflow = 1;
            b = self.after(b);
        }
    }

    /// Start loading what [`Self::get`] of `key` will read (the filter words, the home bucket).
    #[inline(always)]
    pub fn prefetch(&self, key: K) {
        let [a, b] = self.filter_bits(key);
        crate::prefetch(&self.filter[a / 64]);
        crate::prefetch(&self.filter[b / 64]);
        crate::prefetch(&self.buckets[self.home(key)]);
    }

    /// The rank of `key`, if it is in the table.
    ///
    /// The line of the key's home bucket is asked for before the filter is read: the lookups of
    /// a merge often find a token, so the branch on the filter's answer is often mispredicted,
    /// and a bucket loaded only once the filter said "maybe" would be a second miss waiting on
    /// the first. Fresh text gains more than this loses when the tables stay in the cache.
    #[inline(always)]
    pub fn get(&self, key: K) -> Option<Rank> {
        let home = self.home(key);
        crate::prefetch(&self.buckets[home]);
        if !self.may_contain(key) {
            return None;
        }
        self.search_from(key, home)
    }

    /// [`Self::get`] without the filter, for keys that are usually present (a whole piece is
    /// a token nine times in ten): the filter's two reads would only confirm it, and a missing
    /// key usually costs one bucket, since a search ends at the first bucket that never
    /// overflowed.
    #[inline(always)]
    pub fn get_present(&self, key: K) -> Option<Rank> {
        self.search_from(key, self.home(key))
    }

    /// The search for `key` from its home bucket, `home`.
    #[inline(always)]
    fn search_from(&self, key: K, home: usize) -> Option<Rank> {
        let mut b = home;
        loop {
            let bucket = &self.buckets[b];
            // Every slot is compared and the match's index picked by selects, not branches:
            // where in its bucket a key sits is random, so a branch on it would mispredict
            // about once per lookup, which costs as much as the cache miss this layout saves.
            let mut slot = W;
            for (i, &k) in bucket.keys.iter().enumerate() {
                slot = if k == key { i } else { slot };
            }
            if let Some(&rank) = bucket.ranks.get(slot) {
                return Some(rank);
            }
            if bucket.overflow == 0 {
                return None;
            }
            b = self.after(b);
        }
    }

    /// Every key with its rank, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (K, Rank)> + '_ {
        self.buckets.iter().flat_map(|bucket| {
            bucket
                .keys
                .iter()
                .zip(&bucket.ranks)
                .filter(|(k, _)| **k != K::default())
                .map(|(&k, &r)| (k, r))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytes::packed::{pack8, pack16};

    #[test]
    fn keys_outside_their_home_bucket_rank_below_its_keys() {
        // Keys given in an order unrelated to their ranks, enough of them that many home
        // buckets fill up.
        let mut seed: u64 = 3;
        let mut keys: Vec<(u64, Rank)> = (0u32..40_000)
            .map(|i| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                (pack8(&(seed >> 16).to_le_bytes()[..5]), i)
            })
            .collect();
        keys.sort_unstable();
        keys.dedup_by_key(|(k, _)| *k);
        let table = ShortTable::new(keys.clone());
        let mut displaced = 0;
        for &(key, rank) in &keys {
            assert_eq!(table.get_present(key), Some(rank));
            if table.displaced(key) {
                displaced += 1;
                // Its home bucket was full when it came, and only of keys ranked below it.
                let home = &table.buckets[table.home(key)];
                assert!(
                    home.ranks.iter().all(|&r| r < rank),
                    "{rank} {:?}",
                    home.ranks
                );
            }
        }
        // The test means something only if some keys had to go past their home bucket.
        assert!(displaced > 100, "{displaced}");
    }

    #[test]
    fn finds_every_key_and_no_other() {
        // Enough keys to fill buckets and make probes run past full ones.
        let words: Vec<Vec<u8>> = (0u32..20_000)
            .map(|i| format!("w{i}").into_bytes())
            .filter(|w| w.len() <= 7)
            .collect();
        let short = ShortTable::new(
            words
                .iter()
                .enumerate()
                .map(|(i, w)| (pack8(w), i as Rank))
                .collect(),
        );
        for (i, w) in words.iter().enumerate() {
            assert_eq!(short.get(pack8(w)), Some(i as Rank));
            assert_eq!(short.get_present(pack8(w)), Some(i as Rank));
        }
        for i in 0u32..20_000 {
            assert_eq!(short.get(pack8(format!("x{i}").as_bytes())), None);
            assert_eq!(short.get_present(pack8(format!("x{i}").as_bytes())), None);
        }
        // The searches above ran past full buckets (the test is about that).
        assert!(short.buckets.iter().filter(|b| b.overflow != 0).count() > 100);
        let mut all: Vec<(u64, Rank)> = short.iter().collect();
        all.sort_by_key(|&(_, r)| r);
        assert_eq!(all.len(), words.len());
        assert!(
            all.iter()
                .enumerate()
                .all(|(i, &(k, r))| r == i as Rank && k == pack8(&words[i]))
        );

        let long: Vec<Vec<u8>> = (0u32..5_000)
            .map(|i| format!("medium-{i}").into_bytes())
            .collect();
        let medium = MediumTable::new(
            long.iter()
                .enumerate()
                .map(|(i, w)| (pack16(w), i as Rank))
                .collect(),
        );
        for (i, w) in long.iter().enumerate() {
            assert_eq!(medium.get(pack16(w)), Some(i as Rank));
        }
        assert_eq!(medium.get(pack16(b"medium-x")), None);
    }

    #[test]
    fn nearly_full_small_tables_end_every_search() {
        // Tiny tables are filled to their last free slot (or would be, without the rule that one
        // bucket must stay not full): searches for absent keys must still end.
        for n in 1..=40u8 {
            let keys: Vec<u64> = (1..=n).map(|i| pack8(&[b'a', b'b', i])).collect();
            let table = ShortTable::new(keys.iter().map(|&k| (k, Rank::from(k as u8))).collect());
            for &k in &keys {
                assert_eq!(table.get(k), Some(Rank::from(k as u8)));
                assert_eq!(table.get_present(k), Some(Rank::from(k as u8)));
            }
            assert_eq!(table.get(pack8(b"zzz")), None);
            for i in 0..=255 {
                assert_eq!(table.get_present(pack8(&[b'z', i])), None);
            }
        }
    }
}
