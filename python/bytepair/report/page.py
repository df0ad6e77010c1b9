"""The token view as a self-contained web page: inline CSS, no scripts, nothing fetched.

Several tokenizers are shown side by side, one column each, under a summary table (tokens,
characters per token, and the input cost on the models that use each tokenizer when prices are
given). A long text is cut to ``max_chars`` characters, with a note at the top of the page, so
that a whole novel does not become a page of tens of megabytes.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from bytepair.encoding import Encoding
from bytepair.report.prices import PriceTable
from bytepair.report.render import money
from bytepair.report.show import TokenPiece, quoted, token_pieces

__all__ = ["DEFAULT_MAX_CHARS", "html_page"]

DEFAULT_MAX_CHARS = 200_000
"""The characters of text a page shows by default (a few megabytes of HTML per tokenizer)."""

# Pastel backgrounds with black text, the terminal view's colours; neighbours always differ.
_BACKGROUNDS = ("#afd7ff", "#ffd787", "#d7ffd7", "#ffafd7", "#d7afff", "#ffffd7")
# At most this many models' costs per tokenizer in the summary (o200k has a dozen).
_COST_MODELS = 3

_CSS = (
    """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; color: #111;
       padding: 0 1rem; background: #fff; }
body.wide { max-width: none; margin: 1rem; }
h1 { font-size: 1.3rem; } h2 { font-size: 1.1rem; margin-top: 1rem; }
.summary { color: #555; }
.cut { background: #fff3cd; border: 1px solid #e0c36c; padding: .5rem .75rem; border-radius: 6px; }
.columns { display: grid; gap: 1.5rem; align-items: start; }
.columns > section { min-width: 0; overflow-x: auto; }
.text { font-family: ui-monospace, monospace; white-space: pre-wrap; word-break: break-all;
        line-height: 1.9; border: 1px solid #ddd; padding: .75rem; border-radius: 6px; }
.tok { color: #000; border-radius: 3px; padding: 1px 0; }
.tok:hover { outline: 2px solid #333; }
.partial { text-decoration: underline dotted; }
.special { font-weight: bold; }
.mark { color: #777; }
table { border-collapse: collapse; margin-top: 1rem; font-family: ui-monospace, monospace; }
td, th { border-bottom: 1px solid #eee; padding: 2px 10px; text-align: left; }
td.num, .tokens td:nth-child(-n+2) { text-align: right; }
table.overview { font-family: system-ui, sans-serif; margin-bottom: 1rem; }
table.overview th { background: #f4f4f4; }
"""
    # One class per background keeps each token's markup short on long pages.
    + "".join(f".c{i} {{ background: {color}; }}\n" for i, color in enumerate(_BACKGROUNDS))
)


def _spans(pieces: Sequence[TokenPiece]) -> str:
    spans = []
    for p in pieces:
        classes = f"tok c{p.index % len(_BACKGROUNDS)}"
        classes += (" partial" if p.text is None else "") + (" special" if p.special else "")
        title = f"#{p.index} id {p.id}" + ("" if p.text is not None else f" bytes {p.hex}")
        label = html.escape(p.label)
        label = label.replace("\n", '<span class="mark">↵</span>\n').replace(
            "\t", '<span class="mark">⇥</span>\t'
        )
        spans.append(f'<span class="{classes}" title="{html.escape(title)}">{label}</span>')
    # No line break inside the div: its white-space is pre-wrap.
    return '<div class="text">' + "".join(spans) + "</div>"


def _column(encoding: Encoding, text: str, pieces: Sequence[TokenPiece]) -> list[str]:
    n_bytes = sum(len(p.bytes) for p in pieces)
    out = [
        f"<section><h2>{html.escape(encoding.name)}</h2>",
        f'<p class="summary">{len(pieces):,} tokens, {len(text):,} characters, '
        f"{n_bytes:,} bytes</p>",
        _spans(pieces),
        '<table class="tokens"><thead><tr><th>#</th><th>id</th><th>token</th><th>bytes</th></tr>',
        "</thead><tbody>",
    ]
    for p in pieces:
        out.append(
            f"<tr><td>{p.index}</td><td>{p.id}</td><td>{html.escape(quoted(p))}</td>"
            f"<td>{'' if p.text is not None else p.hex}</td></tr>"
        )
    out.append("</tbody></table></section>")
    return out


def _costs(encoding: Encoding, n_tokens: int, prices: PriceTable) -> str:
    models = prices.for_tokenizer(encoding.name)
    shown = [
        f"{html.escape(m.model)} {money(m.cost(n_tokens), prices.currency)}"
        for m in models[:_COST_MODELS]
    ]
    if len(models) > _COST_MODELS:
        shown.append(f"+{len(models) - _COST_MODELS} more")
    return "; ".join(shown) or "-"


def _overview(
    encodings: Sequence[Encoding],
    text: str,
    all_pieces: Sequence[Sequence[TokenPiece]],
    prices: PriceTable | None,
) -> list[str]:
    cost_head = "<th>input cost</th>" if prices is not None else ""
    out = [
        '<table class="overview"><thead><tr><th>tokenizer</th><th>tokens</th>'
        f"<th>characters/token</th><th>bytes/token</th>{cost_head}</tr></thead><tbody>"
    ]
    n_bytes = len(text.encode("utf-8", "surrogatepass"))
    for encoding, pieces in zip(encodings, all_pieces, strict=True):
        n = len(pieces)
        per_char = f"{len(text) / n:.2f}" if n else "-"
        per_byte = f"{n_bytes / n:.2f}" if n else "-"
        cost = f"<td>{_costs(encoding, n, prices)}</td>" if prices is not None else ""
        out.append(
            f'<tr><td>{html.escape(encoding.name)}</td><td class="num">{n:,}</td>'
            f'<td class="num">{per_char}</td><td class="num">{per_byte}</td>{cost}</tr>'
        )
    out.append("</tbody></table>")
    return out


def html_page(
    text: str,
    encodings: Encoding | Sequence[Encoding],
    *,
    title: str | None = None,
    allow_special: bool = False,
    max_chars: int | None = DEFAULT_MAX_CHARS,
    prices: PriceTable | None = None,
) -> str:
    """A self-contained HTML page (inline CSS, no scripts, nothing fetched) of the token view
    of ``text`` under each encoding, side by side, with a summary table on top (and the input
    cost on each model of ``prices`` that uses the encoding).

    Only the first ``max_chars`` characters are shown (``None``: all); the page says what was
    left out.

    >>> from bytepair import Encoding
    >>> enc = Encoding("b", pat_str=r".", special_tokens={},
    ...                mergeable_ranks={bytes([b]): b for b in range(256)})
    >>> page = html_page("a<b", enc)
    >>> page.startswith("<!DOCTYPE html>"), "&lt;" in page
    (True, True)
    >>> "the first 2 of 3 characters" in html_page("a<b", enc, max_chars=2)
    True
    """
    if isinstance(encodings, Encoding):
        encodings = [encodings]
    if max_chars is not None and max_chars < 0:
        raise ValueError(f"max_chars must be >= 0 or None, got {max_chars!r}")
    heading = title or "Tokens of " + ", ".join(e.name for e in encodings)
    shown = text if max_chars is None else text[:max_chars]
    all_pieces = [token_pieces(e, shown, allow_special=allow_special) for e in encodings]
    wide = ' class="wide"' if len(encodings) > 1 else ""
    body = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(heading)}</title>",
        f"<style>{_CSS}</style></head><body{wide}>",
        f"<h1>{html.escape(heading)}</h1>",
        '<p class="summary">Hover over a token to see its id; underlined tokens are not whole '
        "characters and are shown by their byte values.</p>",
    ]
    if len(shown) < len(text):
        body.append(
            f'<p class="cut">This page shows the first {len(shown):,} of {len(text):,} '
            f"characters; the remaining {len(text) - len(shown):,} are left out (raise the "
            "limit with --max-chars, or max_chars= in Python). The counts below are of the "
            "part shown.</p>"
        )
    body += _overview(encodings, shown, all_pieces, prices)
    body.append(
        f'<div class="columns" style="grid-template-columns: '
        f'repeat({len(encodings)}, minmax(0, 1fr))">'
    )
    for encoding, pieces in zip(encodings, all_pieces, strict=True):
        body += _column(encoding, shown, pieces)
    body.append("</div></body></html>")
    return "\n".join(body) + "\n"
