"""See how a text is cut into tokens, in the terminal (colour); :mod:`bytepair.report.page`
makes the same view a web page.

Each token is shown with its id. A token whose bytes are not whole UTF-8 characters (a piece of
an emoji or of a CJK character) is shown by its byte values, ``⟨f0 9f 8d⟩``, since it has no
text of its own. Where a token is not the text it came from (such a piece, a SentencePiece
``▁``, a normalized character), the table also shows that text (``Encoding.encode_with_offsets``).

>>> from bytepair import Encoding
>>> ranks = {bytes([b]): b for b in range(256)} | {b"st": 256, b"ra": 257, b"raw": 258}
>>> enc = Encoding("toy", pat_str=r"\\S+|\\s+", mergeable_ranks=ranks, special_tokens={})
>>> print(render_tokens(enc, "straw é", color=False))
toy: 5 tokens, 7 characters, 8 bytes
[st][raw][ ][⟨c3⟩][⟨a9⟩]
  #   id  token  bytes  text
  0  256  "st"
  1  258  "raw"
  2   32  " "
  3  195  ⟨c3⟩   c3     "é"
  4  169  ⟨a9⟩   a9     "é"
"""

from __future__ import annotations

import json
import sys
import unicodedata
from dataclasses import dataclass
from typing import TextIO

import click

from bytepair._terminal import use_color
from bytepair.encoding import Encoding

__all__ = ["TokenPiece", "quoted", "render_tokens", "show", "token_pieces"]


@dataclass(frozen=True)
class TokenPiece:
    """One token of a text: its position, id and bytes, and its text if it has one."""

    index: int
    id: int
    bytes: bytes
    text: str | None
    """The token's text, or None when its bytes are not whole UTF-8 characters."""
    special: bool = False
    span: tuple[int, int] = (0, 0)
    """Where the token lies in the text, ``(start, end)`` characters (see
    ``Encoding.encode_with_offsets``); ``(0, 0)`` for a token the text does not spell."""

    @property
    def hex(self) -> str:
        """The byte values, ``"f0 9f 8d"``."""
        return self.bytes.hex(" ")

    @property
    def label(self) -> str:
        """The token as shown: its text, with undecodable bytes as ``⟨f0 9f⟩``."""
        if self.text is not None:
            return self.text
        return _readable(self.bytes)


def _segments(data: bytes) -> list[tuple[bool, str]]:
    """Runs of whole characters ``(True, text)`` and of other bytes ``(False, "f0 9f")``."""
    # surrogateescape turns each byte that is not part of a whole character into U+DC80..U+DCFF.
    segments: list[tuple[bool, str]] = []
    text: list[str] = []
    pending: list[int] = []
    for ch in data.decode("utf-8", "surrogateescape"):
        if "\udc80" <= ch <= "\udcff":
            if text:
                segments.append((True, "".join(text)))
                text = []
            pending.append(ord(ch) - 0xDC00)
        else:
            if pending:
                segments.append((False, bytes(pending).hex(" ")))
                pending = []
            text.append(ch)
    if text:
        segments.append((True, "".join(text)))
    if pending:
        segments.append((False, bytes(pending).hex(" ")))
    return segments


def _readable(data: bytes) -> str:
    return "".join(t if whole else f"⟨{t}⟩" for whole, t in _segments(data))


def token_pieces(encoding: Encoding, text: str, *, allow_special: bool = False) -> list[TokenPiece]:
    """The tokens of ``text``, each with its id, bytes and text.

    With ``allow_special=True`` text spelling a special token becomes that token; otherwise it
    is ordinary text.

    >>> from bytepair import Encoding
    >>> enc = Encoding("b", pat_str=r".", special_tokens={},
    ...                mergeable_ranks={bytes([b]): b for b in range(256)})
    >>> [(p.id, p.text) for p in token_pieces(enc, "hé")]
    [(104, 'h'), (195, None), (169, None)]
    """
    if allow_special:
        ids, spans = encoding.encode_with_offsets(text, allowed_special="all")
    else:
        ids, spans = encoding.encode_with_offsets(text, disallowed_special=())
    pieces = []
    tokens = zip(ids, encoding.decode_tokens_bytes(ids), spans, strict=True)
    for index, (token, data, span) in enumerate(tokens):
        try:
            piece_text: str | None = data.decode("utf-8")
        except UnicodeDecodeError:
            piece_text = None
        special = allow_special and encoding.is_special_token(token)
        pieces.append(TokenPiece(index, token, data, piece_text, special, span))
    return pieces


# Pastel backgrounds (xterm 256-colour numbers) with black text: readable on dark and light
# terminals alike, and neighbours always differ.
_BACKGROUNDS = (153, 222, 194, 218, 183, 230)


def _visible(text: str) -> str:
    # A newline or tab inside a coloured token would be invisible: mark it.
    return text.replace("\t", "⇥").replace("\r", "␍").replace("\n", "↵\n")


def _styled(text: str, index: int, piece: TokenPiece) -> str:
    def style(part: str) -> str:
        return click.style(
            part,
            fg=16,  # black
            bg=_BACKGROUNDS[index % len(_BACKGROUNDS)],
            bold=piece.special or None,
            underline=piece.text is None or None,
        )

    # Close the colour before a line break so the background does not run to the edge.
    return "\n".join(style(part) if part else "" for part in text.split("\n"))


def quoted(piece: TokenPiece) -> str:
    """The token as a string literal, bytes that are no whole character outside the quotes."""
    # Quoted like a string literal, so that spaces and newlines show; bytes that are no whole
    # character stand outside the quotes: " "⟨f0 9f 8d⟩.
    return "".join(
        json.dumps(t, ensure_ascii=False) if whole else f"⟨{t}⟩"
        for whole, t in _segments(piece.bytes)
    )


def _width(text: str) -> int:
    """Columns taken in a terminal: wide (CJK) characters take 2, combining marks 0."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _width(text))


def render_tokens(
    encoding: Encoding,
    text: str,
    *,
    color: bool = True,
    table: bool = True,
    allow_special: bool = False,
) -> str:
    """The token view of ``text`` under ``encoding``, as text for a terminal.

    A header line; the text with each token in its own colour (``color=True``) or in
    ``[brackets]``; then (``table=True``) one line per token: index, id, the token, its byte
    values when it is not whole characters, and the text it came from when that differs.
    """
    pieces = token_pieces(encoding, text, allow_special=allow_special)
    n_bytes = sum(len(p.bytes) for p in pieces)
    plural = "" if len(pieces) == 1 else "s"
    lines = [
        f"{encoding.name}: {len(pieces):,} token{plural}, {len(text):,} characters, "
        f"{n_bytes:,} bytes"
    ]
    if color:
        lines.append("".join(_styled(_visible(p.label), p.index, p) for p in pieces))
    else:
        lines.append("".join(f"[{_visible(p.label)}]" for p in pieces))
    if table and pieces:
        id_width = max(2, *(len(str(p.id)) for p in pieces))
        index_width = max(1, len(str(len(pieces) - 1)))
        shown = [quoted(p) for p in pieces]
        token_width = max(5, *(_width(s) for s in shown))
        any_partial = any(p.text is None for p in pieces)
        bytes_width = max(5, *(len(p.hex) for p in pieces if p.text is None)) if any_partial else 0
        sources = [text[p.span[0] : p.span[1]] for p in pieces]
        any_source = any(
            source and source != p.text for p, source in zip(pieces, sources, strict=True)
        )
        head = f"{'#':>{index_width + 2}}  {'id':>{id_width}}  {_pad('token', token_width)}"
        if any_partial:
            head += f"  {_pad('bytes', bytes_width)}"
        if any_source:
            head += "  text"
        lines.append(head.rstrip())
        for p, s, source in zip(pieces, shown, sources, strict=True):
            line = f"{p.index:>{index_width + 2}}  {p.id:>{id_width}}  {_pad(s, token_width)}"
            if any_partial:
                line += f"  {_pad(p.hex if p.text is None else '', bytes_width)}"
            if source and source != p.text:
                line += f"  {json.dumps(source, ensure_ascii=False)}"
            lines.append(line.rstrip())
    return "\n".join(lines)


def show(
    text: str,
    encoding: Encoding,
    *,
    color: bool | None = None,
    table: bool = True,
    file: TextIO | None = None,
) -> None:
    """Print the token view of ``text`` (see :func:`render_tokens`).

    Colour is used when ``file`` (default: standard output) is a terminal and neither
    ``NO_COLOR`` nor ``TERM=dumb`` is set, unless ``color`` says otherwise.
    """
    out = file if file is not None else sys.stdout
    color = use_color(out, color)
    print(render_tokens(encoding, text, color=color, table=table), file=out)
