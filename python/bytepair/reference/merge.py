"""Step 2 of byte-level BPE: turn one piece's bytes into tokens by replaying merges in rank order.

A vocabulary is a dict ``mergeable_ranks`` from token bytes to rank. Ranks double as token ids
and as merge priorities: a token of lower rank was learnt earlier, from more frequent data, so
it is merged first. Encoding one piece:

1. Start from single bytes: ``b"hello"`` is ``[b"h", b"e", b"l", b"l", b"o"]``.
2. Look at every adjacent pair of parts. If their concatenation is a token, that is a possible
   merge, with that token's rank.
3. Do the possible merge of lowest rank (the leftmost one if the same token can be made in two
   places, as in ``b"aaa"``), then go back to 2. Stop when no adjacent pair is a token.

This is exactly tiktoken's ``byte_pair_merge`` (and ``bpe_encode`` of its ``_educational.py``).
It looks up the *bytes* of the merged pair, not the pair of ids, so it needs only the ranks, not
a list of merges.

:func:`merge_piece` is the direct transcription: every step scans all pairs, which is quadratic
in the piece's length. That is fine for words, and hopeless for a piece of a million ``"a"``
(one regex piece, since letters run together). :func:`merge_piece_heap` gives the same parts in
``O(n log n)`` with a heap of candidate merges; :func:`encode_piece` picks between them.

>>> ranks = {bytes([b]): b for b in range(256)} | {b"ll": 256, b"he": 257, b"llo": 258}
>>> merge_piece(ranks, b"hello")
[b'he', b'llo']
>>> encode_piece(ranks, b"hello")
[257, 258]
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from itertools import pairwise

__all__ = [
    "LONG_PIECE",
    "encode_piece",
    "merge_piece",
    "merge_piece_heap",
    "unreachable_tokens",
]

LONG_PIECE = 64
"""Pieces longer than this many bytes go to :func:`merge_piece_heap` (same result, faster)."""

_NO_MERGE = 1 << 63
"""Stands for "this pair is not a token"; larger than every rank, so ``min()`` never picks it."""


def merge_piece(ranks: Mapping[bytes, int], piece: bytes) -> list[bytes]:
    """Merge the bytes of ``piece`` into tokens, lowest rank first (quadratic; for short pieces).

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"aa": 256}
    >>> merge_piece(ranks, b"aaa")  # two places make b"aa": the leftmost wins
    [b'aa', b'a']
    >>> merge_piece(ranks, b"")
    []
    """
    parts = [piece[i : i + 1] for i in range(len(piece))]
    # pair_ranks[i] is the rank of parts[i] + parts[i + 1]: the candidate merges, left to right.
    pair_ranks = [ranks.get(a + b, _NO_MERGE) for a, b in pairwise(parts)]
    while pair_ranks:
        best = min(pair_ranks)
        if best == _NO_MERGE:
            break
        # index() returns the first occurrence: the leftmost of equal ranks, as tiktoken does.
        i = pair_ranks.index(best)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
        # The merged pair is gone; its two neighbours now touch the new, longer part, so only
        # those two candidates change. Everything else keeps its rank.
        del pair_ranks[i]
        if i > 0:
            pair_ranks[i - 1] = ranks.get(parts[i - 1] + parts[i], _NO_MERGE)
        if i < len(pair_ranks):
            pair_ranks[i] = ranks.get(parts[i] + parts[i + 1], _NO_MERGE)
    return parts


def merge_piece_heap(ranks: Mapping[bytes, int], piece: bytes) -> list[bytes]:
    """The same parts as :func:`merge_piece`, in ``O(n log n)`` for long pieces.

    Parts are named by the byte offset where they start; ``end[s]`` is where part ``s`` ends, which
    is also where the next part starts. A heap holds candidate merges as ``(rank, start)``, so it
    pops the lowest rank and, among equal ranks, the leftmost: the same choice as the full scan.
    After a merge only the two neighbouring candidates change; old heap entries are not removed
    but skipped when popped, because their rank no longer matches ``pair_rank[start]``. (Ranks are
    unique, so a candidate whose bytes changed cannot keep its rank.)

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"aa": 256, b"aaaa": 257}
    >>> merge_piece_heap(ranks, b"a" * 7)
    [b'aaaa', b'aa', b'a']
    >>> merge_piece_heap(ranks, b"a" * 7) == merge_piece(ranks, b"a" * 7)
    True
    """
    n = len(piece)
    end = list(range(1, n + 1))  # end[s]: one past the last byte of the part starting at s
    prev = list(range(-1, n - 1))  # prev[s]: start of the part before s (-1: none)
    live = [True] * n  # live[s]: a part still starts at s
    pair_rank = [_NO_MERGE] * n  # pair_rank[s]: rank of part s + the part after it

    def candidate(s: int) -> None:
        """Recompute the merge of part ``s`` with its right neighbour and queue it."""
        right = end[s]
        rank = ranks.get(piece[s : end[right]], _NO_MERGE) if right < n else _NO_MERGE
        pair_rank[s] = rank
        if rank != _NO_MERGE:
            heapq.heappush(heap, (rank, s))

    heap: list[tuple[int, int]] = []
    for s in range(n - 1):
        candidate(s)
    while heap:
        rank, s = heapq.heappop(heap)
        if not live[s] or pair_rank[s] != rank:
            continue  # stale: part s was merged away or has a new right neighbour since
        right = end[s]
        live[right] = False
        end[s] = end[right]
        if end[s] < n:
            prev[end[s]] = s
        candidate(s)
        if prev[s] >= 0:
            candidate(prev[s])
    parts = []
    s = 0
    while s < n:
        parts.append(piece[s : end[s]])
        s = end[s]
    return parts


def encode_piece(ranks: Mapping[bytes, int], piece: bytes) -> list[int]:
    """The token ids of one piece: a single lookup if the whole piece is a token, else merges.

    The whole-piece lookup is mostly a shortcut (most words are one token): in the OpenAI
    vocabularies every token's bytes merge back into that token anyway. tiktoken does the same
    lookup, so where a token would not merge back (:func:`unreachable_tokens`), it decides.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257}
    >>> encode_piece(ranks, b"abc"), encode_piece(ranks, b"abcab"), encode_piece(ranks, b"")
    ([257], [257, 256], [])
    """
    rank = ranks.get(piece)
    if rank is not None:
        return [rank]
    return [ranks[part] for part in _merge(ranks, piece)]


def _merge(ranks: Mapping[bytes, int], piece: bytes) -> list[bytes]:
    """:func:`merge_piece` for short pieces (a little faster there), the heap for long ones."""
    return merge_piece(ranks, piece) if len(piece) <= LONG_PIECE else merge_piece_heap(ranks, piece)


def unreachable_tokens(ranks: Mapping[bytes, int]) -> list[bytes]:
    """The tokens whose own bytes do not merge back into that one token, in rank order.

    Such a token can only come out of the whole-piece shortcut of :func:`encode_piece`; inside a
    longer piece it is never produced. The vocabularies of tiktoken (r50k, p50k, cl100k, o200k)
    have none. It costs a full merge per token (about a second for o200k), so it is a separate
    check rather than part of every construction.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"bc": 257, b"abc": 258}
    >>> unreachable_tokens(ranks)  # b"abc" needs b"ab" + b"c" or b"a" + b"bc": both are tokens
    []
    >>> unreachable_tokens({bytes([b]): b for b in range(256)} | {b"abc": 256})
    [b'abc']
    """
    result = [token for token in ranks if len(token) > 1 and _merge(ranks, token) != [token]]
    return sorted(result, key=ranks.__getitem__)
