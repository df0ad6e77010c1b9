"""Where each token of an encoded text lies in that text: ``(start, end)`` character spans.

The spans are those of Hugging Face ``tokenizers``' ``Encoding.offsets``. A model reads a
normalized text (:class:`Aligned`: each of its characters remembers the character of the text it
came from); each token covers some of its UTF-8 bytes, and its span runs from the text
character of its first byte to the text character of its last byte. So a token that holds part
of a character spans the whole character, as do the other tokens that hold the rest of it.

A model may read characters that are not in the text (a dummy prefix, a prefix space): such a
character is *inserted* and belongs to the text character after it. A model may drop characters
(extra whitespace, bytes it has no token for): those belong to no token. An added token with
``lstrip``/``rstrip`` spans the whitespace it takes. Anything else that does not match raises,
so a span is never a guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bytepair._whitespace import is_rust_whitespace

__all__ = ["Aligned", "Piece", "identity", "token_spans"]

Span = tuple[int, int]


@dataclass(frozen=True)
class Aligned:
    """A normalized text and, for each of its characters, the index of the character of the
    original text it belongs to; ``end``: the index after the original text (by default after
    the last origin)."""

    text: str
    origin: Sequence[int]
    end: int | None = None


def identity(text: str, shift: int = 0) -> Aligned:
    """``text`` unchanged, its characters at ``shift``, ``shift + 1``, ..."""
    return Aligned(text, range(shift, shift + len(text)))


@dataclass(frozen=True)
class Piece:
    """What one token reads of the normalized text: its bytes, and whether it takes the
    whitespace before (``lstrip``) or after (``rstrip``) it. ``data=None``: an unknown token,
    which reads the characters up to the next token."""

    data: bytes | None
    lstrip: bool = False
    rstrip: bool = False


def _char_of_byte(text: str, data: bytes) -> Sequence[int]:
    if len(data) == len(text):
        return range(len(text))
    owner: list[int] = []
    for i, c in enumerate(text):
        n = 1 if c < "\x80" else 2 if c < "\u0800" else 3 if c < "\U00010000" else 4
        owner.extend([i] * n)
    return owner


class _Walk:
    """A cursor over the UTF-8 bytes of an :class:`Aligned` text."""

    def __init__(
        self,
        aligned: Aligned,
        insertable: bytes,
        removable: bytes,
        dropped: frozenset[int],
        to_next: bool,
    ) -> None:
        self.dropped = dropped
        self.text = aligned.text
        self.origin = aligned.origin
        if aligned.end is not None:
            self.end = aligned.end
        else:
            self.end = aligned.origin[-1] + 1 if aligned.origin else 0
        self.to_next = to_next
        self.data = aligned.text.encode("utf-8", "surrogatepass")
        self.char = _char_of_byte(self.text, self.data)
        self.insertable = insertable
        self.removable = removable
        self.pos = 0

    def skip_whitespace(self) -> int | None:
        """Take the whitespace characters at the cursor; the first one's byte, if any."""
        first = None
        while self.pos < len(self.data) and is_rust_whitespace(self.text[self.char[self.pos]]):
            first = self.pos if first is None else first
            c = self.char[self.pos]
            while self.pos < len(self.data) and self.char[self.pos] == c:
                self.pos += 1
        return first

    def matches_at(self, piece: bytes) -> bool:
        """Whether ``piece`` could start at the cursor (matched, inserted, or after removed)."""
        data, at = self.data, self.pos
        while self.removable and data.startswith(self.removable, at):
            if data.startswith(piece[:1], at):
                return True
            at += len(self.removable)
        return bool(
            data.startswith(piece[:1], at)
            or (self.insertable and piece.startswith(self.insertable))
        )

    def take(self, piece: Piece, following: Piece | None, where: int) -> Span:
        data, n = self.data, len(self.data)
        first = self.skip_whitespace() if piece.lstrip else None
        last = first
        anchor: int | None = None
        if piece.data is None:
            # An unknown token: at least one character, then up to where the next one starts.
            start = self.pos
            while self.pos < n and (
                self.pos == start
                or following is None
                or following.data is None
                or not self.matches_at(following.data)
            ):
                self.pos += 1
                while self.pos < n and self.char[self.pos] == self.char[self.pos - 1]:
                    self.pos += 1
            if self.pos > start:
                first = start if first is None else first
                last = self.pos - 1
        else:
            token, j = piece.data, 0
            while j < len(token):
                if self.pos < n and data[self.pos] == token[j]:
                    first = self.pos if first is None else first
                    last = self.pos
                    self.pos += 1
                    j += 1
                elif self.insertable and token.startswith(self.insertable, j):
                    anchor = self.pos if anchor is None else anchor
                    j += len(self.insertable)
                elif self.removable and data.startswith(self.removable, self.pos):
                    self.pos += len(self.removable)
                elif self.pos < n and data[self.pos] in self.dropped:
                    self.pos += 1
                else:
                    raise RuntimeError(
                        f"bytepair internal error: token {where} ({token!r}) does not match the "
                        f"text at byte {self.pos}; please report it"
                    )
        if piece.rstrip:
            taken = self.skip_whitespace()
            if taken is not None:
                first = taken if first is None else first
                last = self.pos - 1
        if first is None or last is None:
            # Only inserted characters: they belong to the character after them.
            at = min(anchor if anchor is not None else self.pos, n - 1)
            if at < 0:
                return (0, 0)
            o = self.origin[self.char[at]]
            return (o, o + 1)
        if self.to_next:
            after = last + 1
            return (
                self.origin[self.char[first]],
                self.origin[self.char[after]] if after < n else self.end,
            )
        return (self.origin[self.char[first]], self.origin[self.char[last]] + 1)

    def finish(self) -> None:
        while True:
            if self.removable and self.data.startswith(self.removable, self.pos):
                self.pos += len(self.removable)
            elif self.pos < len(self.data) and self.data[self.pos] in self.dropped:
                self.pos += 1
            else:
                break
        if self.pos != len(self.data):
            raise RuntimeError(
                f"bytepair internal error: the tokens end at byte {self.pos} of "
                f"{len(self.data)}; please report it"
            )


def token_spans(
    aligned: Aligned,
    pieces: Sequence[Piece],
    *,
    insertable: bytes = b"",
    removable: bytes = b"",
    dropped: frozenset[int] = frozenset(),
    to_next: bool = False,
) -> list[Span]:
    """The span in the original text of each of ``pieces``, read in order over ``aligned``.

    ``dropped``: the bytes a model without an unknown token leaves out (those it has no token
    for). ``to_next``: sentencepiece's rule instead of ``tokenizers``': a span ends where the
    character of the byte after the token starts, so a token of the first bytes of a character
    is empty and the one of its last byte spans it.

    >>> token_spans(identity("naïve"), [Piece(b"na"), Piece(b"\\xc3"), Piece(b"\\xafve")])
    [(0, 2), (2, 3), (2, 5)]
    >>> token_spans(Aligned("▁hi", [0, 0, 1]), [Piece("▁hi".encode())])
    [(0, 2)]
    """
    walk = _Walk(aligned, insertable, removable, dropped, to_next)
    spans = []
    for i, piece in enumerate(pieces):
        following = pieces[i + 1] if i + 1 < len(pieces) else None
        spans.append(walk.take(piece, following, i))
    walk.finish()
    return spans
