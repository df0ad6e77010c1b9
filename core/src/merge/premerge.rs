//! Joining, before the merge starts, the byte pairs (and three-byte letters) that BPE would join
//! first anyway: see [`PreMerge`].

use rustc_hash::FxHashMap;

use crate::Rank;
use crate::vocab::RankMap;
use crate::vocab::table::two;

/// Byte pairs that a merge can join before it starts, because they would be joined before any
/// other merge touches either byte. This is most of the letters of alphabets written with two
/// bytes per letter (Cyrillic, Greek, Hebrew, Arabic: their letter is a two-byte token), which
/// otherwise cost a merge step each; a piece of such a word then starts from letters.
///
/// The rule: bytes `a b` at positions `i, i + 1` form a token of rank `r`, and
/// 1. no token that ends with the byte before them and `a` (`x a`, at any length from two), and
///    none that starts with `b` and the byte after them (`b y`), has a rank below `r`;
/// 2. no token longer than two bytes that starts or ends with `a b` has a rank below `r`.
///
/// Then BPE joins `a` and `b` before any other merge touches them: until it does, the part
/// left of `a` ends with `x` and the part right of `b` starts with `y`, so joining `a` or `b`
/// with them would make a token of (1), ranked above the pair `a b` that is there all along. And
/// starting with `a b` joined changes no other choice before that: the only new candidates are
/// tokens of (2), ranked above `r`, and every merge made before `a b` is ranked at most `r` (an
/// equal rank is another `a b`, further left). So the result is the same. The conditions are
/// local (the neighbours' bytes never change), so any set of such pairs that do not overlap can
/// be joined at once, and two such pairs cannot overlap (`a b` and `b c` would each have to be
/// ranked below the other).
///
/// A second round does the same for letters written with three bytes (Chinese, Japanese, Thai,
/// the Indian scripts): the first round leaves such a letter as a pair and a byte, `P Q`, and
/// the merge would spend a step per letter joining them. The argument above holds for parts as
/// it does for bytes, so `P Q` (the letter's token, rank `r`) is joined in advance when
/// 3. no token longer than three bytes that starts or ends with the letter ranks below `r`, and
/// 4. joining `P` or `Q` with its neighbour would make a token ranked above `r`: every token
///    ending with the neighbour's last byte and `P` (`x a` or `x a b`), or starting with `Q`
///    and the neighbour's first byte (`c y` or `b c y`), ranks above `r`.
///
/// With o200k this joins most three-byte letters of the multilingual corpus before the merge
/// starts. English and code, which have no such letters, pay nothing: the round starts only at
/// a lead byte. The figures for both rounds are in `docs/performance.md`.
#[derive(Debug, Clone)]
pub struct PreMerge {
    /// For each two bytes: the rank of their token if it meets (2), else `Rank::MAX`.
    joinable: Box<[Rank]>,
    /// The lowest rank of a token ending with these two bytes (the two-byte token included).
    ending: Box<[Rank]>,
    /// The lowest rank of a token starting with these two bytes.
    starting: Box<[Rank]>,
    /// For each three bytes of a letter (indexed by [`three`]): the rank of its token if it
    /// meets (3), with [`LEFT_PAIR_FREE`] and [`RIGHT_PAIR_FREE`]; else `Rank::MAX`.
    letters: Box<[Rank]>,
    /// The lowest rank of a token ending with `x a b` (key `x << 16 | a << 8 | b`), where `a b`
    /// starts a three-byte letter: (4) for a left part of two bytes. A few hundred keys.
    ending_in_letter: FxHashMap<u32, Rank>,
    /// The lowest rank of a token starting with `b c y`, where `b c` ends a three-byte letter:
    /// (4) for a right part of two bytes.
    starting_in_letter: FxHashMap<u32, Rank>,
}

/// Set in `PreMerge::letters` when no token of three or more bytes ending with the letter's
/// first two bytes ranks below it: (4) holds for a left part `a b` whatever its neighbour, with
/// no need to look up `x a b`. Ranks are below `1 << 28`, so the flags never meet a rank's bits.
const LEFT_PAIR_FREE: Rank = 1 << 31;
/// The same for a right part `b c` and the tokens starting with it.
const RIGHT_PAIR_FREE: Rank = 1 << 30;

/// The index of a three-byte UTF-8 sequence (a lead byte `0xE0..=0xEF`, two continuation bytes)
/// in `PreMerge::letters`: the 16 bits of the character (any such three bytes have their own).
#[inline(always)]
fn three(a: u8, b: u8, c: u8) -> Option<usize> {
    (lead(a) & continuation(b) & continuation(c))
        .then(|| usize::from(a & 0x0F) << 12 | usize::from(b & 0x3F) << 6 | usize::from(c & 0x3F))
}

/// Whether `b` starts a three-byte UTF-8 sequence.
#[inline(always)]
pub(crate) fn lead(b: u8) -> bool {
    b & 0xF0 == 0xE0
}

/// Whether `b` continues a UTF-8 sequence.
#[inline(always)]
fn continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// Three bytes as a key of `PreMerge::ending_in_letter` and `starting_in_letter`.
#[inline(always)]
fn key(x: u8, y: u8, z: u8) -> u32 {
    u32::from(x) << 16 | u32::from(y) << 8 | u32::from(z)
}

impl PreMerge {
    pub(crate) fn new(ranks: &RankMap, pair: &[Rank]) -> Self {
        // One pass over the tokens for both rounds. First round: the lowest rank of the tokens
        // longer than two bytes by their first and last two bytes (1, 2). Second round: of the
        // tokens longer than three bytes by the three-byte letter they start or end with (3),
        // and of the tokens a two-byte part of a letter could make with a neighbour, by their
        // three bytes at the letter's side (4); and the letters themselves.
        let mut longer_ending = vec![Rank::MAX; 1 << 16];
        let mut longer_starting = vec![Rank::MAX; 1 << 16];
        let mut longer_after = vec![Rank::MAX; 1 << 16];
        let mut longer_before = vec![Rank::MAX; 1 << 16];
        let mut ending_in_letter = FxHashMap::<u32, Rank>::default();
        let mut starting_in_letter = FxHashMap::<u32, Rank>::default();
        let mut three_byte_letters = Vec::new();
        let lower = |least: &mut Rank, rank: Rank| *least = (*least).min(rank);
        for (token, &rank) in ranks.iter().filter(|(t, _)| t.len() > 2) {
            let (Some(&[a, b, c]), Some(&[x, y, z])) = (token.first_chunk(), token.last_chunk())
            else {
                continue;
            };
            lower(&mut longer_starting[two(a, b)], rank);
            lower(&mut longer_ending[two(y, z)], rank);
            if let Some(i) = three(a, b, c) {
                if token.len() == 3 {
                    three_byte_letters.push((i, [a, b, c], rank));
                } else {
                    lower(&mut longer_after[i], rank);
                }
            }
            if let Some(i) = three(x, y, z).filter(|_| token.len() > 3) {
                lower(&mut longer_before[i], rank);
            }
            if continuation(a) && continuation(b) {
                lower(starting_in_letter.entry(key(a, b, c)).or_insert(rank), rank);
            }
            if lead(y) && continuation(z) {
                lower(ending_in_letter.entry(key(x, y, z)).or_insert(rank), rank);
            }
        }
        let joinable = (0..1 << 16)
            .map(|i| {
                let r = pair[i];
                if r < longer_ending[i] && r < longer_starting[i] {
                    r
                } else {
                    Rank::MAX
                }
            })
            .collect();
        let mut letters = vec![Rank::MAX; 1 << 16];
        for (i, [a, b, c], rank) in three_byte_letters {
            if rank < longer_after[i] && rank < longer_before[i] {
                let left_free = rank < longer_ending[two(a, b)];
                let right_free = rank < longer_starting[two(b, c)];
                letters[i] = rank
                    | if left_free { LEFT_PAIR_FREE } else { 0 }
                    | if right_free { RIGHT_PAIR_FREE } else { 0 };
            }
        }
        let with_pair = |longer: Vec<Rank>| -> Box<[Rank]> {
            longer.iter().zip(pair).map(|(&l, &p)| l.min(p)).collect()
        };
        Self {
            joinable,
            ending: with_pair(longer_ending),
            starting: with_pair(longer_starting),
            letters: letters.into_boxed_slice(),
            ending_in_letter,
            starting_in_letter,
        }
    }

    /// The rank of the three-byte letter `piece[p..p + 3]`, made of the parts `piece[p..q]` and
    /// `piece[q..p + 3]` (a pair joined by the first round and a byte, in either order), if they
    /// can be joined before merging: (3) was settled in advance, (4) depends on the neighbours'
    /// bytes.
    #[inline(always)]
    pub(crate) fn letter(&self, piece: &[u8], p: usize, q: usize) -> Option<Rank> {
        let end = p + 3;
        let (&a, &b, &c) = (piece.get(p)?, piece.get(p + 1)?, piece.get(p + 2)?);
        let entry = self.letters[three(a, b, c)?];
        if entry == Rank::MAX {
            return None;
        }
        let r = entry & !(LEFT_PAIR_FREE | RIGHT_PAIR_FREE);
        let before = p.checked_sub(1).map(|h| piece[h]);
        let after = piece.get(end).copied();
        let least = |map: &FxHashMap<u32, Rank>, k: u32| map.get(&k).copied().unwrap_or(Rank::MAX);
        let (left, right) = if q == p + 2 {
            // `a b` + `c`.
            let left = match before {
                Some(x) if entry & LEFT_PAIR_FREE == 0 => {
                    least(&self.ending_in_letter, key(x, a, b))
                }
                _ => Rank::MAX,
            };
            (left, after.map_or(Rank::MAX, |y| self.starting[two(c, y)]))
        } else {
            // `a` + `b c`.
            let right = match after {
                Some(y) if entry & RIGHT_PAIR_FREE == 0 => {
                    least(&self.starting_in_letter, key(b, c, y))
                }
                _ => Rank::MAX,
            };
            (before.map_or(Rank::MAX, |x| self.ending[two(x, a)]), right)
        };
        (left > r && right > r).then_some(r)
    }

    /// The rank of the token of `piece[i..i + 2]` if that pair can be joined before merging.
    #[inline(always)]
    pub(crate) fn at(&self, piece: &[u8], i: usize) -> Option<Rank> {
        let (&a, &b) = (piece.get(i)?, piece.get(i + 1)?);
        let r = self.joinable[two(a, b)];
        if r == Rank::MAX {
            return None;
        }
        let left = i
            .checked_sub(1)
            .map_or(Rank::MAX, |h| self.ending[two(piece[h], a)]);
        let right = piece
            .get(i + 2)
            .map_or(Rank::MAX, |&y| self.starting[two(b, y)]);
        (left > r && right > r).then_some(r)
    }
}
