"""Cut a text to a token budget, at a token boundary, and say what was cut.

>>> from bytepair import Encoding
>>> enc = Encoding("bytes", pat_str=r".", special_tokens={},
...                mergeable_ranks={bytes([b]): b for b in range(256)})
>>> cut = truncate(enc, "hello world", 5)
>>> cut.text, cut.ids, cut.dropped_tokens, cut.dropped_text
('hello', [104, 101, 108, 108, 111], 6, ' world')

A budget that ends inside a character's bytes (here the two bytes of "é") cuts before that
character, so fewer tokens are kept than the budget allows, and ``split_character`` says so:

>>> cut = truncate(enc, "café", 4)
>>> cut.text, len(cut.ids), cut.dropped_text, cut.split_character
('caf', 3, 'é', True)
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass
from typing import Any

from bytepair.encoding import Encoding

__all__ = ["Truncated", "truncate"]


@dataclass(frozen=True)
class Truncated:
    """A text cut to a token budget."""

    text: str
    """What is kept: the text of ``ids``."""
    ids: list[int]
    """The first tokens of the whole text's encoding, at most the budget."""
    dropped_tokens: int
    """How many tokens of the whole text were cut off (0: it fitted)."""
    dropped_text: str
    """The text cut off (``text + dropped_text`` is the whole text)."""
    split_character: bool = False
    """True when the budget ended inside a character's bytes, so the cut was made before
    that character (and fewer tokens than the budget are kept)."""

    @property
    def truncated(self) -> bool:
        """Whether anything was cut."""
        return self.dropped_tokens > 0


def _continues_a_character(data: bytes, position: int) -> bool:
    # UTF-8 continuation bytes are 0b10xxxxxx: a cut before one splits a character.
    return position < len(data) and data[position] & 0xC0 == 0x80


def truncate(encoding: Encoding, text: str, max_tokens: int, **encode_options: Any) -> Truncated:
    """The first ``max_tokens`` tokens of ``text`` and the text they spell, never splitting a
    character; ``encode_options`` (``allowed_special=``, ``disallowed_special=``) go to
    :meth:`Encoding.encode`.

    The ids are the start of ``encoding.encode(text)``; encoding the kept text again gives the
    same ids except where BPE would merge differently at the new end of the text.
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
        raise ValueError(f"max_tokens must be an int >= 0, got {max_tokens!r}")
    ids = encoding.encode(text, **encode_options)
    if len(ids) <= max_tokens:
        return Truncated(text, ids, 0, "")
    pieces = encoding.decode_tokens_bytes(ids)
    whole = b"".join(pieces)
    ends = list(itertools.accumulate(len(p) for p in pieces))  # ends[i]: where token i ends
    kept, split = max_tokens, False
    while kept > 0 and _continues_a_character(whole, ends[kept - 1]):
        start = ends[kept - 1]
        while start > 0 and _continues_a_character(whole, start):
            start -= 1  # back to the character's first byte
        kept = bisect.bisect_right(ends, start, hi=kept)  # the tokens that end before it
        split = True
    cut = ends[kept - 1] if kept else 0
    return Truncated(
        whole[:cut].decode("utf-8"),
        ids[:kept],
        len(ids) - kept,
        whole[cut:].decode("utf-8"),
        split,
    )
