"""Step 4: learn the merges from text (training a byte-level BPE vocabulary).

Training is two phases:

1. **Count.** Pre-tokenize every text and count each distinct piece (:func:`count_pieces`).
   Merges never cross piece boundaries, so from now on the text is just this table, e.g.
   ``{b" the": 3051, b" cat": 12, ...}``: far smaller than the text itself. Counts from several
   shards simply add up, which is how a distributed trainer splits the work.
2. **Merge** (:func:`train_from_counts`). Write every piece as a list of ids (ids 0..255 are the
   byte values). Then, until the vocabulary is full:

   - count every adjacent pair of ids, weighted by how often its piece occurs;
   - take the pair with the **highest count**; on a tie, the **smallest pair** ``(left, right)``
     (compared as a tuple of ids);
   - give it the next id (256, 257, ... in order of creation) and replace it, left to right and
     without overlap, in every piece: ``[97, 97, 97]`` with ``(97, 97) -> 256`` becomes
     ``[256, 97]``.

   Training stops at ``vocab_size`` tokens, or earlier when no piece has two ids left. A pair
   that occurs only once is still merged, as rustbpe does (it merges while a count is > 0).

The tie-break and the stopping rule make the merges deterministic and equal to
`rustbpe <https://github.com/karpathy/rustbpe>`_'s; the tests check this on real and generated
text. (ANCHORS.md reports bpeasy gives the same merges, while Hugging Face ``tokenizers`` breaks
ties by its own token order and departs from them.)

Recounting all pairs after each merge would cost a pass over the whole table per merge. Instead
the counts are kept up to date: a merge only touches the pieces that contain the pair (an index
says which), only the pairs next to each merged occurrence change (:func:`merge_ids` reports
them), and a heap finds the next best pair. That makes a few hundred KB of text to a vocabulary
of 2000 a matter of seconds.

"at", "he" and "th" all occur 3 times; the tie goes to the smallest pair, (97, 116) = "at":

>>> enc = train("the cat sat on the mat; the end", vocab_size=260, pattern="gpt2")
>>> [enc.decode_single_token_bytes(i) for i in range(256, 260)]
[b'at', b'he', b'the', b' the']
>>> enc.encode("the mat")
[258, 32, 109, 256]
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from itertools import pairwise

from bytepair.reference.encoder import ReferenceEncoding
from bytepair.reference.pretokenize import pretokenize

__all__ = ["count_pieces", "merge_ids", "merges_to_ranks", "train", "train_from_counts"]

Pair = tuple[int, int]
PairChange = tuple[Pair, int]


def count_pieces(texts: str | Iterable[str], pattern: str = "gpt2") -> Counter[bytes]:
    """Phase 1: how often each pre-tokenized piece occurs, as UTF-8 bytes.

    ``texts`` is one string or an iterable of documents; a pattern never matches across two
    documents (and ``$`` in a pattern means the end of a document).

    >>> count_pieces(["the cat", "the dog"], "gpt2")
    Counter({b'the': 2, b' cat': 1, b' dog': 1})
    """
    if isinstance(texts, str):
        texts = [texts]
    counts: Counter[bytes] = Counter()
    for text in texts:
        counts.update(piece.encode("utf-8") for piece in pretokenize(text, pattern))
    return counts


def merge_ids(ids: list[int], pair: Pair, new_id: int) -> tuple[list[int], list[PairChange]]:
    """Replace each ``pair`` in ``ids`` by ``new_id``, left to right, no overlap.

    Also returns how the piece's pair counts changed, as ``(pair, +1 or -1)`` entries, so the
    trainer can update its totals without recounting the piece. Around each occurrence of
    ``(a, b)`` with neighbours ``x`` and ``y``, ``x a b y`` becomes ``x N y``: the pairs ``(x, a)``,
    ``(a, b)``, ``(b, y)`` go and ``(x, N)``, ``(N, y)`` come. The subtle step is ``x``: it is
    taken from the output, so in ``a a a a`` the second occurrence sees ``x = N`` (the first
    merge), and the ``(N, a)`` counted by the first occurrence is taken back.

    >>> new, changes = merge_ids([120, 97, 98, 121], (97, 98), 256)  # x a b y -> x N y
    >>> new
    [120, 256, 121]
    >>> changes  # doctest: +NORMALIZE_WHITESPACE
    [((120, 97), -1), ((120, 256), 1), ((97, 98), -1),
     ((98, 121), -1), ((256, 121), 1)]
    >>> new, changes = merge_ids([97, 97, 97, 97], (97, 97), 256)
    >>> new, changes[2:5]
    ([256, 256], [((256, 97), 1), ((256, 97), -1), ((256, 256), 1)])
    """
    a, b = pair
    out: list[int] = []
    changes: list[PairChange] = []
    i, n = 0, len(ids)
    while True:
        # list.index scans in C for the next `a`; most of a long piece is skipped this way.
        try:
            j = ids.index(a, i)
        except ValueError:
            break
        if j + 1 == n or ids[j + 1] != b:
            out.extend(ids[i : j + 1])
            i = j + 1
            continue
        out.extend(ids[i:j])
        if out:
            x = out[-1]
            changes += [((x, a), -1), ((x, new_id), 1)]
        changes.append(((a, b), -1))
        if j + 2 < n:
            y = ids[j + 2]
            changes += [((b, y), -1), ((new_id, y), 1)]
        out.append(new_id)
        i = j + 2
    out.extend(ids[i:])
    return out, changes


def train_from_counts(counts: Mapping[bytes, int], vocab_size: int) -> list[Pair]:
    """Phase 2: the merges, in order; merge ``i`` creates token id ``256 + i``.

    Each step merges the pair with the highest count, the smallest ``(left, right)`` on a tie.
    Returns fewer than ``vocab_size - 256`` merges if the pieces run out of pairs.

    In ``b"aaa"`` the pair (97, 97) occurs twice (overlapping), tying with (97, 98) in ``b"ab"``
    (twice); the smaller pair goes first. The last merge has a count of 1:

    >>> train_from_counts({b"aaa": 1, b"ab": 2}, vocab_size=300)
    [(97, 97), (97, 98), (256, 97)]
    >>> train_from_counts({b"hello": 1}, vocab_size=258)
    [(101, 108), (104, 256)]
    """
    if vocab_size < 256:
        raise ValueError(f"vocab_size must be at least 256 (the single bytes), got {vocab_size}")
    # Each distinct piece once, as a list of ids, with how often it occurs: one merge in
    # words[w] stands for freqs[w] merges in the text.
    words = [list(piece) for piece in counts]
    freqs = list(counts.values())

    # pair_counts[pair]: occurrences in the whole text. where[pair]: the pieces that contain it
    # (or did once: a stale entry only costs a look at a piece that no longer has the pair).
    pair_counts: defaultdict[Pair, int] = defaultdict(int)
    where: defaultdict[Pair, set[int]] = defaultdict(set)
    for w, ids in enumerate(words):
        for pair in pairwise(ids):
            pair_counts[pair] += freqs[w]
            where[pair].add(w)

    # The heap pops the highest count first (counts are negated, heapq is a min-heap) and, among
    # equal counts, the smallest pair: exactly the choice the algorithm wants. Entries are not
    # updated in place: when a count falls, the entry is fixed when it reaches the top.
    heap = [(-count, pair) for pair, count in pair_counts.items()]
    heapq.heapify(heap)

    merges: list[Pair] = []
    while heap and len(merges) < vocab_size - 256:
        negative_count, pair = heapq.heappop(heap)
        count = pair_counts.get(pair, 0)
        if count <= 0:
            continue  # the pair has disappeared (its occurrences were eaten by other merges)
        if count != -negative_count:
            # Its count fell since it was queued. Counts of existing pairs only ever fall (a
            # merge creates only pairs that contain the new id), so requeueing with the current
            # count and looking again is enough to keep the heap's top exact.
            heapq.heappush(heap, (-count, pair))
            continue

        new_id = 256 + len(merges)
        merges.append(pair)
        created: set[Pair] = set()
        for w in sorted(where.pop(pair)):
            words[w], changes = merge_ids(words[w], pair, new_id)
            # Nothing changes in a stale entry (a piece that no longer has the pair).
            for changed_pair, delta in changes:
                pair_counts[changed_pair] += delta * freqs[w]
                if delta > 0:  # a pair that appeared; it contains new_id
                    where[changed_pair].add(w)
                    created.add(changed_pair)
        del pair_counts[pair]  # all of its occurrences are merged now
        for new_pair in sorted(created):
            heapq.heappush(heap, (-pair_counts[new_pair], new_pair))
    return merges


def merges_to_ranks(merges: Iterable[Pair]) -> dict[bytes, int]:
    """The ``mergeable_ranks`` of a list of merges: 256 single bytes, then one token per merge.

    Raises ``ValueError`` if two merges make the same bytes: such ranks would not describe a
    tokenizer. (Training could in principle do that, joining the same bytes split two ways in
    different pieces; no test text, real or generated, has made it happen.)

    >>> merges_to_ranks([(104, 105), (256, 33)]) == {bytes([b]): b for b in range(256)} | {
    ...     b"hi": 256, b"hi!": 257}
    True
    """
    tokens = [bytes([b]) for b in range(256)]
    ranks = {token: rank for rank, token in enumerate(tokens)}
    for left, right in merges:
        token = tokens[left] + tokens[right]
        if token in ranks:
            raise ValueError(
                f"merge {len(tokens) - 256} ({left}, {right}) makes {token!r}, "
                f"which is already token {ranks[token]}"
            )
        ranks[token] = len(tokens)
        tokens.append(token)
    return ranks


def train(
    texts: str | Iterable[str],
    vocab_size: int,
    pattern: str = "gpt2",
    special_tokens: Iterable[str] | None = None,
    *,
    name: str = "trained",
) -> ReferenceEncoding:
    """Train a byte-level BPE encoder: count pieces, learn merges, add special tokens.

    ``vocab_size`` counts the 256 bytes and the merges (as rustbpe does); special tokens get the
    ids after the merges, in the order given. The merges themselves are
    ``train_from_counts(count_pieces(texts, pattern), vocab_size)``.

    >>> enc = train(["hello hello world"] * 3, vocab_size=262, special_tokens=["<|end|>"])
    >>> [enc.decode_single_token_bytes(i) for i in range(256, 262)]
    [b'el', b'hel', b'lo', b'hello', b' w', b' hello']
    >>> enc.encode("hello<|end|>", allowed_special="all")
    [259, 262]
    >>> enc.n_vocab, enc.decode(enc.encode("hello world"))
    (263, 'hello world')
    """
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens is a list of strings, not one string")
    merges = train_from_counts(count_pieces(texts, pattern), vocab_size)
    ranks = merges_to_ranks(merges)
    specials = {text: len(ranks) + i for i, text in enumerate(dict.fromkeys(special_tokens or ()))}
    return ReferenceEncoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials)
