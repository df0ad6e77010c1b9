"""The two merge rules of SentencePiece-style BPE models, on one normalized text.

Both start from characters (not bytes) and join neighbours into vocabulary pieces; they differ in
which join comes first.

- :func:`merge_by_score` is sentencepiece's ``bpe::Model::Encode`` (``src/bpe_model.cc``): the
  join whose *result* has the highest score wins, the leftmost among equals. User-defined pieces
  are matched whole first and never joined; a result that is an ``UNUSED`` piece is split back
  into the two pieces it was made of.
- :func:`merge_by_rank` is ``tokenizers``' ``BPE::merge_word`` (``models/bpe/{model,word}.rs``):
  the *pair* earliest in the merge list wins, the leftmost among equals. A character missing
  from the vocabulary becomes its UTF-8 byte pieces (``byte_fallback``) or the unknown piece.

Characters that are no piece become ``<unk>`` in the first rule too; turning them into byte
pieces is the caller's step (sentencepiece does it after the model, in ``SentencePieceProcessor``).

>>> ids = {"▁": 0, "a": 1, "b": 2, "▁a": 3, "ab": 4, "▁ab": 5}
>>> scores = [-5.0, -9.0, -9.0, -1.0, -2.0, -3.0]
>>> merge_by_score([("▁", False), ("a", False), ("b", False)], ids, scores, set())
['▁ab']
>>> merge_by_rank("▁ab", ids, {(1, 2): (0, 4), (0, 1): (1, 3), (3, 2): (2, 5)},
...               byte_fallback=False, unk_id=None, fuse_unk=False, ignore_merges=False)
[0, 4]
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet

__all__ = ["merge_by_rank", "merge_by_score"]


def merge_by_score(
    units: Sequence[tuple[str, bool]],
    piece_id: Mapping[str, int],
    scores: Sequence[float],
    unused: AbstractSet[int],
) -> list[str]:
    """Join ``units`` (text, frozen) into pieces, highest-scoring result first.

    ``piece_id`` holds the pieces a join may produce (``NORMAL``, ``USER_DEFINED`` and
    ``UNUSED``); ``scores`` is indexed by id. Returns the pieces' texts, left to right.
    """
    pieces = [text for text, _ in units]
    frozen = [is_frozen for _, is_frozen in units]
    nxt = [*range(1, len(pieces)), -1]
    prv = list(range(-1, len(pieces) - 1))
    # The agenda: (-score, left index, length of the result, right index). Python's heap is a
    # min-heap, so the highest score comes out first, then the leftmost.
    agenda: list[tuple[float, int, int, int]] = []
    # For UNUSED results: what they were made of, to split them back at the end. The last pair
    # pushed for a text wins, as in sentencepiece (it records on push, not on merge).
    made_of: dict[str, tuple[str, str]] = {}

    def consider(left: int, right: int) -> None:
        if left == -1 or right == -1 or frozen[left] or frozen[right]:
            return
        joined = pieces[left] + pieces[right]
        found = piece_id.get(joined)
        if found is None:
            return
        heapq.heappush(agenda, (-scores[found], left, len(joined), right))
        if found in unused:
            made_of[joined] = (pieces[left], pieces[right])

    for i in range(1, len(pieces)):
        consider(i - 1, i)
    while agenda:
        _, left, size, right = heapq.heappop(agenda)
        # A stale entry: one side was joined into something else since it was pushed.
        if not pieces[left] or not pieces[right] or len(pieces[left]) + len(pieces[right]) != size:
            continue
        pieces[left] += pieces[right]
        pieces[right] = ""
        nxt[left] = nxt[right]
        if nxt[right] >= 0:
            prv[nxt[right]] = left
        consider(prv[left], left)
        consider(left, nxt[left])

    out: list[str] = []

    def resegment(text: str) -> None:
        found = piece_id.get(text)
        if found is None or found not in unused or text not in made_of:
            out.append(text)
            return
        left, right = made_of[text]
        resegment(left)
        resegment(right)

    index = 0 if pieces else -1
    while index != -1:
        resegment(pieces[index])
        index = nxt[index]
    return out


def merge_by_rank(
    word: str,
    vocab: Mapping[str, int],
    merges: Mapping[tuple[int, int], tuple[int, int]],
    *,
    byte_fallback: bool,
    unk_id: int | None,
    fuse_unk: bool,
    ignore_merges: bool,
) -> list[int]:
    """The ids of ``word``: characters joined by ``merges`` ((left, right) -> (rank, merged)).

    Follows ``tokenizers`` to the letter, including two quirks: with ``fuse_unk``, a run of
    unknown characters is one unknown id, and a byte-fallback character inside such a run does
    not end it (its byte ids come first, the fused unknown after); without an unknown id, an
    unknown character is dropped.
    """
    if not word:
        return []
    if ignore_merges and word in vocab:
        return [vocab[word]]
    symbols: list[int] = []
    pending_unk = False  # an unknown id not yet added (fuse_unk may still extend it)
    for char in word:
        found = vocab.get(char)
        if found is not None:
            if pending_unk:
                symbols.append(unk_id)  # type: ignore[arg-type]
                pending_unk = False
            symbols.append(found)
            continue
        if byte_fallback:
            byte_ids = [vocab.get(f"<0x{b:02X}>") for b in char.encode("utf-8")]
            if all(i is not None for i in byte_ids):
                symbols.extend(i for i in byte_ids if i is not None)
                continue
        if unk_id is not None:
            if pending_unk and not fuse_unk:
                symbols.append(unk_id)
            pending_unk = True
    if pending_unk:
        symbols.append(unk_id)  # type: ignore[arg-type]
    return _merge_ids(symbols, merges)


def _merge_ids(symbols: list[int], merges: Mapping[tuple[int, int], tuple[int, int]]) -> list[int]:
    """Apply ``merges`` to ``symbols``: lowest rank first, then leftmost (``Word::merge_all``)."""
    alive = [True] * len(symbols)
    nxt = [*range(1, len(symbols)), -1]
    prv = list(range(-1, len(symbols) - 1))
    queue: list[tuple[int, int, int]] = []  # (rank, position, merged id)
    for pos in range(len(symbols) - 1):
        found = merges.get((symbols[pos], symbols[pos + 1]))
        if found is not None:
            queue.append((found[0], pos, found[1]))
    heapq.heapify(queue)
    while queue:
        _, pos, merged = heapq.heappop(queue)
        right = nxt[pos]
        if not alive[pos] or right == -1:
            continue
        # A stale entry: the pair at `pos` is no longer the one this entry was made for.
        current = merges.get((symbols[pos], symbols[right]))
        if current is None or current[1] != merged:
            continue
        symbols[pos] = merged
        alive[right] = False
        nxt[pos] = nxt[right]
        if nxt[right] != -1:
            prv[nxt[right]] = pos
        for left_pos, right_pos in ((prv[pos], pos), (pos, nxt[pos])):
            if left_pos != -1 and right_pos != -1:
                found = merges.get((symbols[left_pos], symbols[right_pos]))
                if found is not None:
                    heapq.heappush(queue, (found[0], left_pos, found[1]))
    return [s for s, keep in zip(symbols, alive, strict=True) if keep]
