"""The one interface every tokenizer in bytepair offers: text to ids, ids to bytes or text.

A tokenizer is anything with these three methods. The reference encoder, the Rust-backed
``bytepair.Encoding`` and a plain ``tiktoken.Encoding`` all qualify, so tests and tools can take
any of them. The protocol is ``runtime_checkable``: ``isinstance(obj, Tokenizer)`` checks that the
methods exist (not their signatures).

Why both ``decode`` and ``decode_bytes``? Tokens are byte strings, and a token can end in the
middle of a UTF-8 character. ``decode_bytes`` is the lossless inverse of ``encode``;
``decode`` is a convenience that turns those bytes into text with an ``errors=`` policy
(``"replace"`` by default, as in tiktoken, so a cut character shows as U+FFFD).

>>> from bytepair.reference import ReferenceEncoding
>>> ranks = {bytes([b]): b for b in range(256)}
>>> enc = ReferenceEncoding("bytes", pat_str="gpt2", mergeable_ranks=ranks, special_tokens={})
>>> isinstance(enc, Tokenizer)
True
>>> enc.decode(enc.encode("hé")), enc.decode_bytes(enc.encode("hé")[:2])
('hé', b'h\\xc3')
>>> enc.decode(enc.encode("hé")[:2])
'h�'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

__all__ = ["Tokenizer"]


@runtime_checkable
class Tokenizer(Protocol):
    """Text to token ids and back.

    The first argument of each method is positional-only, so implementations may name it as they
    like (tiktoken says ``tokens``, we say ``ids``).

    >>> class Bytes:
    ...     def encode(self, text, /): return list(text.encode())
    ...     def decode(self, ids, /, errors="replace"): return bytes(ids).decode(errors=errors)
    ...     def decode_bytes(self, ids, /): return bytes(ids)
    >>> isinstance(Bytes(), Tokenizer)
    True
    """

    def encode(self, text: str, /) -> list[int]:
        """The token ids of ``text``."""
        ...

    def decode(self, ids: Sequence[int], /, errors: str = "replace") -> str:
        """The text of ``ids``; bytes that are not valid UTF-8 are handled by ``errors``."""
        ...

    def decode_bytes(self, ids: Sequence[int], /) -> bytes:
        """The exact bytes of ``ids`` (the lossless inverse of :meth:`encode`)."""
        ...
