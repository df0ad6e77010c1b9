"""See how a text is cut into tokens: in the terminal (colour) or as a self-contained web page.

Each token is shown with its id. A token whose bytes are not whole UTF-8 characters (a piece of
an emoji or of a CJK character) is shown by its byte values, ``⟨f0 9f 8d⟩``, since it has no
text of its own.

>>> from bytepair import Encoding
>>> ranks = {bytes([b]): b for b in range(256)} | {b"st": 256, b"ra": 257, b"raw": 258}
>>> enc = Encoding("toy", pat_str=r"\\S+|\\s+", mergeable_ranks=ranks, special_tokens={})
>>> print(render_tokens(enc, "straw é", color=False))
toy: 5 tokens, 7 characters, 8 bytes
[st][raw][ ][⟨c3⟩][⟨a9⟩]
  #   id  token  bytes
  0  256  "st"
  1  258  "raw"
  2   32  " "
  3  195  ⟨c3⟩   c3
  4  169  ⟨a9⟩   a9
"""

from __future__ import annotations

import html
import json
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from bytepair.encoding import Encoding

__all__ = ["TokenPiece", "html_page", "render_tokens", "show", "token_pieces"]


@dataclass(frozen=True)
class TokenPiece:
    """One token of a text: its position, id and bytes, and its text if it has one."""

    index: int
    id: int
    bytes: bytes
    text: str | None
    """The token's text, or None when its bytes are not whole UTF-8 characters."""
    special: bool = False

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
        ids = encoding.encode(text, allowed_special="all")
    else:
        ids = encoding.encode(text, disallowed_special=())
    pieces = []
    for index, (token, data) in enumerate(zip(ids, encoding.decode_tokens_bytes(ids), strict=True)):
        try:
            piece_text: str | None = data.decode("utf-8")
        except UnicodeDecodeError:
            piece_text = None
        pieces.append(
            TokenPiece(
                index, token, data, piece_text, allow_special and encoding.is_special_token(token)
            )
        )
    return pieces


# Pastel backgrounds (xterm 256-colour numbers) with black text: readable on dark and light
# terminals alike, and neighbours always differ.
_BACKGROUNDS = (153, 222, 194, 218, 183, 230)
_HTML_BACKGROUNDS = ("#afd7ff", "#ffd787", "#d7ffd7", "#ffafd7", "#d7afff", "#ffffd7")


def _visible(text: str) -> str:
    # A newline or tab inside a coloured token would be invisible: mark it.
    return text.replace("\t", "⇥").replace("\r", "␍").replace("\n", "↵\n")


def _ansi(text: str, index: int, piece: TokenPiece) -> str:
    style = f"\x1b[38;5;16;48;5;{_BACKGROUNDS[index % len(_BACKGROUNDS)]}m"
    if piece.special:
        style += "\x1b[1m"
    if piece.text is None:
        style += "\x1b[4m"
    # Close the colour before a line break so the background does not run to the edge.
    parts = text.split("\n")
    return "\n".join(f"{style}{part}\x1b[0m" if part else "" for part in parts)


def _quoted(piece: TokenPiece) -> str:
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
    ``[brackets]``; then (``table=True``) one line per token: index, id, the token, and its
    byte values when it is not whole characters.
    """
    pieces = token_pieces(encoding, text, allow_special=allow_special)
    n_bytes = sum(len(p.bytes) for p in pieces)
    plural = "" if len(pieces) == 1 else "s"
    lines = [
        f"{encoding.name}: {len(pieces):,} token{plural}, {len(text):,} characters, "
        f"{n_bytes:,} bytes"
    ]
    if color:
        lines.append("".join(_ansi(_visible(p.label), p.index, p) for p in pieces))
    else:
        lines.append("".join(f"[{_visible(p.label)}]" for p in pieces))
    if table and pieces:
        id_width = max(2, *(len(str(p.id)) for p in pieces))
        index_width = max(1, len(str(len(pieces) - 1)))
        shown = [_quoted(p) for p in pieces]
        token_width = max(5, *(_width(s) for s in shown))
        any_partial = any(p.text is None for p in pieces)
        head = f"{'#':>{index_width + 2}}  {'id':>{id_width}}  {_pad('token', token_width)}"
        lines.append((head + "  bytes") if any_partial else head.rstrip())
        for p, s in zip(pieces, shown, strict=True):
            line = f"{p.index:>{index_width + 2}}  {p.id:>{id_width}}  {_pad(s, token_width)}"
            if p.text is None:
                line += f"  {p.hex}"
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

    Colour is used when ``file`` (default: standard output) is a terminal, unless ``color`` says
    otherwise.
    """
    out = file if file is not None else sys.stdout
    if color is None:
        color = out.isatty()
    print(render_tokens(encoding, text, color=color, table=table), file=out)


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; color: #111;
       padding: 0 1rem; }
h1 { font-size: 1.3rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
.summary { color: #555; }
.text { font-family: ui-monospace, monospace; white-space: pre-wrap; word-break: break-all;
        line-height: 1.9; border: 1px solid #ddd; padding: .75rem; border-radius: 6px; }
.tok { color: #000; border-radius: 3px; padding: 1px 0; }
.tok:hover { outline: 2px solid #333; }
.partial { text-decoration: underline dotted; }
.special { font-weight: bold; }
.mark { color: #777; }
table { border-collapse: collapse; margin-top: 1rem; font-family: ui-monospace, monospace; }
td, th { border-bottom: 1px solid #eee; padding: 2px 10px; text-align: left; }
td.num { text-align: right; }
"""


def _html_section(encoding: Encoding, text: str, allow_special: bool) -> list[str]:
    pieces = token_pieces(encoding, text, allow_special=allow_special)
    n_bytes = sum(len(p.bytes) for p in pieces)
    out = [
        f"<section><h2>{html.escape(encoding.name)}</h2>",
        f'<p class="summary">{len(pieces):,} tokens, {len(text):,} characters, '
        f"{n_bytes:,} bytes</p>",
    ]
    spans = []
    for p in pieces:
        classes = (
            ["tok"] + (["partial"] if p.text is None else []) + (["special"] if p.special else [])
        )
        title = f"#{p.index} id {p.id}" + ("" if p.text is not None else f" bytes {p.hex}")
        label = html.escape(p.label)
        label = label.replace("\n", '<span class="mark">↵</span>\n').replace(
            "\t", '<span class="mark">⇥</span>\t'
        )
        color = _HTML_BACKGROUNDS[p.index % len(_HTML_BACKGROUNDS)]
        spans.append(
            f'<span class="{" ".join(classes)}" style="background:{color}" '
            f'title="{html.escape(title)}">{label}</span>'
        )
    # No line break inside the div: its white-space is pre-wrap.
    out.append('<div class="text">' + "".join(spans) + "</div>")
    out.append("<table><thead><tr><th>#</th><th>id</th><th>token</th><th>bytes</th></tr>")
    out.append("</thead><tbody>")
    for p in pieces:
        out.append(
            f'<tr><td class="num">{p.index}</td><td class="num">{p.id}</td>'
            f"<td>{html.escape(_quoted(p))}</td>"
            f"<td>{'' if p.text is not None else p.hex}</td></tr>"
        )
    out.append("</tbody></table></section>")
    return out


def html_page(
    text: str,
    encodings: Encoding | Sequence[Encoding],
    *,
    title: str | None = None,
    allow_special: bool = False,
) -> str:
    """A self-contained HTML page (inline CSS, no scripts, nothing fetched) of the token view
    of ``text`` under each encoding.

    >>> from bytepair import Encoding
    >>> enc = Encoding("b", pat_str=r".", special_tokens={},
    ...                mergeable_ranks={bytes([b]): b for b in range(256)})
    >>> page = html_page("a<b", enc)
    >>> page.startswith("<!DOCTYPE html>"), "&lt;" in page
    (True, True)
    """
    if isinstance(encodings, Encoding):
        encodings = [encodings]
    heading = title or "Tokens of " + ", ".join(e.name for e in encodings)
    body = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(heading)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(heading)}</h1>",
        '<p class="summary">Hover over a token to see its id; underlined tokens are not whole '
        "characters and are shown by their byte values.</p>",
    ]
    for encoding in encodings:
        body += _html_section(encoding, text, allow_special)
    body.append("</body></html>")
    return "\n".join(body) + "\n"
