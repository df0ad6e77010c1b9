"""Reports as text: aligned tables, Markdown, CSV; and as a picture (matplotlib).

>>> from bytepair import Encoding
>>> from bytepair.report import token_report
>>> enc = Encoding("bytes", pat_str=r".", special_tokens={},
...                mergeable_ranks={bytes([b]): b for b in range(256)})
>>> print(report_markdown(token_report(["hello world", "hi"], enc)))
| 2 prompts | bytes |
|:--|--:|
| tokens, total | 13 |
| tokens/prompt: min | 2 |
| median | 6.50 |
| p95 | 10.55 |
| max | 11 |
| mean | 6.50 |
| bytes/token | 1.00 |
| chars/token | 1.00 |
| tokens/word | 4.33 |
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Sequence
from typing import Any

import click

from bytepair._optional import MissingExtraError, require
from bytepair.report.results import ReportData as Report
from bytepair.report.results import TokenizerStats

__all__ = [
    "MissingExtraError",
    "lengths_figure",
    "plot_lengths",
    "report_csv",
    "report_markdown",
    "report_table",
    "require_extra",
]


def require_extra(module: str, feature: str) -> Any:
    """Import an optional dependency of the ``report`` extra, or say how to get it."""
    return require(module, feature, "report")


def _number(value: float | None, digits: int = 2) -> str:
    if value is None:
        return "-"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.{digits}f}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def money(value: float, currency: str) -> str:
    """An amount with cents, or three significant digits below one unit (small test runs).

    >>> money(1234.5, "USD"), money(0.000158, "USD"), money(0, "EUR"), money(2, "CHF")
    ('$1,234.50', '$0.000158', '€0', '2.00 CHF')
    """
    symbol = {"USD": "$", "EUR": "€", "GBP": "£"}.get(currency)
    if value == 0:
        amount = "0"
    elif value >= 1:
        amount = f"{value:,.2f}"
    else:
        decimals = min(12, 2 - math.floor(math.log10(value)))
        amount = f"{value:.{decimals}f}"
    return f"{symbol}{amount}" if symbol else f"{amount} {currency}"


_ROWS: list[tuple[str, str]] = [
    ("tokens, total", "total"),
    ("tokens/prompt: min", "minimum"),
    ("median", "median"),
    ("p95", "p95"),
    ("max", "maximum"),
    ("mean", "mean"),
    ("bytes/token", "bytes_per_token"),
    ("chars/token", "chars_per_token"),
    ("tokens/word", "tokens_per_word"),
]


def _overhead(stats: TokenizerStats) -> str:
    if stats.overhead is None:
        return "-"
    return f"{stats.overhead:,}" + (" (est.)" if stats.overhead_method == "openai" else "")


def _stat_rows(report: Report) -> list[list[str]]:
    rows = []
    for title, attr in _ROWS:
        row = [title]
        for stats in report.tokenizers:
            value = getattr(stats, attr)
            row.append(_ratio(value) if attr.endswith(("_token", "_word")) else _number(value))
        rows.append(row)
    if any(s.overhead is not None for s in report.tokenizers):
        rows.append(["chat overhead", *(_overhead(s) for s in report.tokenizers)])
    return rows


def _prompts_title(report: Report) -> str:
    n = len(report.prompts)
    return f"{n:,} prompt" + ("" if n == 1 else "s")


def _header(report: Report) -> list[str]:
    return [_prompts_title(report), *(_column_title(s) for s in report.tokenizers)]


def _column_title(stats: TokenizerStats) -> str:
    return stats.label if stats.label == stats.encoding else f"{stats.label} ({stats.encoding})"


def _cost_rows(report: Report) -> list[list[str]]:
    rows = []
    for stats in report.tokenizers:
        for c in stats.costs:
            rows.append(
                [
                    c.model,
                    stats.encoding,
                    f"{c.input_tokens:,}",
                    money(c.input_cost, c.currency),
                    f"{c.output_tokens:,}",
                    money(c.output_cost, c.currency),
                    money(c.total_cost, c.currency),
                ]
            )
    return rows


_COST_HEADER = [
    "model",
    "tokenizer",
    "input tokens",
    "input cost",
    "output tokens",
    "output cost",
    "total",
]


def _cost_title(report: Report) -> str:
    prices = report.prices
    assert prices is not None
    dated = f", prices of {prices.date}" if prices.date else ""
    return (
        f"Estimated cost ({prices.currency}{dated} from {prices.source}; "
        f"{report.output_tokens:,} output tokens per prompt)"
    )


def _notes(report: Report) -> list[str]:
    notes = []
    if any(s.overhead_method == "openai" for s in report.tokenizers):
        notes.append(
            "chat overhead (est.): OpenAI's cookbook method (3 tokens per message, 1 per name, "
            "3 priming the reply, tool definitions as it counts them); OpenAI does not publish "
            "its format"
        )
    chats = any(p.messages is not None for p in report.prompts)
    for stats in report.tokenizers:
        if chats and stats.overhead is None:
            notes.append(f"{stats.label}: no chat template known, message text only")
    if report.prices is not None:
        for stats in report.tokenizers:
            for model in stats.unpriced:
                notes.append(f"no price for {model!r} in {report.prices.source}")
            if not stats.costs and not stats.unpriced:
                notes.append(f"no model in {report.prices.source} uses {stats.encoding}")
    return notes


def _align(rows: Sequence[Sequence[str]], header_bold: bool) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        cells = [
            row[0].ljust(widths[0]),
            *(cell.rjust(w) for cell, w in zip(row[1:], widths[1:], strict=True)),
        ]
        line = "  ".join(cells).rstrip()
        if n == 0 and header_bold:
            line = click.style(line, bold=True)
        lines.append(line)
    return lines


def report_table(report: Report, *, color: bool = False, notes: bool = True) -> str:
    """Aligned plain-text tables (bold headers with ``color=True``); ``notes=False`` leaves out
    the notes about models without prices."""
    lines = _align([_header(report), *_stat_rows(report)], color)
    cost_rows = _cost_rows(report)
    if report.prices is not None:
        lines += ["", _cost_title(report)]
        if cost_rows:
            lines += _align([_COST_HEADER, *cost_rows], color)
        lines += [f"note: {n}" for n in _notes(report)] if notes else []
    return "\n".join(lines)


def _md_table(rows: Sequence[Sequence[str]], left: int = 1) -> list[str]:
    def esc(cell: str) -> str:
        return cell.replace("|", "\\|")

    align = [":--"] * left + ["--:"] * (len(rows[0]) - left)
    out = ["| " + " | ".join(esc(c) for c in rows[0]) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows[1:]]
    return out


def report_markdown(report: Report, *, notes: bool = True) -> str:
    """The statistics table, and the cost table when there are prices, in GitHub Markdown
    (with the notes about models without prices unless ``notes=False``)."""
    lines = _md_table([_header(report), *_stat_rows(report)])
    if report.prices is not None:
        lines += ["", f"**{_cost_title(report)}**", ""]
        cost_rows = _cost_rows(report)
        if cost_rows:
            lines += _md_table([_COST_HEADER, *cost_rows], left=2)
        lines += [f"- note: {n}" for n in _notes(report)] if notes else []
    return "\n".join(lines)


def report_csv(report: Report) -> str:
    """One row per tokenizer and priced model (a tokenizer without prices has one row with
    empty cost columns); raw numbers, no thousands separators."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    stat_keys = [
        "prompts",
        "total_tokens",
        "min",
        "median",
        "p95",
        "max",
        "mean",
        "bytes_per_token",
        "chars_per_token",
        "tokens_per_word",
        "chat_overhead",
        "chat_overhead_method",
    ]
    cost_keys = [
        "model",
        "currency",
        "input_tokens",
        "output_tokens",
        "input_price_per_million",
        "output_price_per_million",
        "input_cost",
        "output_cost",
        "total_cost",
    ]
    writer.writerow(["tokenizer", "encoding", *stat_keys, *cost_keys])
    for stats in report.tokenizers:
        summary = stats.summary()
        head = [stats.label, stats.encoding, *(_csv_value(summary[k]) for k in stat_keys)]
        if not stats.costs:
            writer.writerow(head + [""] * len(cost_keys))
        for cost in stats.costs:
            as_dict = cost.to_dict()
            writer.writerow(head + [_csv_value(as_dict[k]) for k in cost_keys])
    return out.getvalue()


def _csv_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(round(value, 10))
    return str(value)


# Lengths spanning more than this ratio (two decades) are drawn on a logarithmic axis: on a
# linear one, whole files next to paragraphs squeeze the short prompts into the first bin.
_LOG_SPAN = 100
_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")
# Similar tokenizers give nearly the same curve: line styles tell them apart where they overlap.
_LINESTYLES = ("-", "--", "-.", ":")


def _bin_edges(low: int, high: int, log: bool) -> list[float]:
    """About 50 bins: whole-token bins on a linear axis, equal ratios on a logarithmic one."""
    if log:
        start, stop = math.log10(max(low, 1) * 0.95), math.log10(high * 1.05)
        n = 50
        return [10 ** (start + (stop - start) * i / n) for i in range(n + 1)]
    width = max(1, math.ceil((high - low + 1) / 50))
    return [low - 0.5 + i * width for i in range((high - low) // width + 2)]


def lengths_figure(report: Report) -> Any:
    """The matplotlib ``Figure`` of :func:`plot_lengths` (its one Axes is ``figure.axes[0]``).

    The length axis is logarithmic when the lengths span more than two decades.
    """
    require_extra("matplotlib", "plotting")
    figure_module = require_extra("matplotlib.figure", "plotting")
    ticker = require_extra("matplotlib.ticker", "plotting")
    colors_module = require_extra("matplotlib.colors", "plotting")
    fig = figure_module.Figure(figsize=(8, 4.5), layout="constrained")
    ax = fig.add_subplot()
    all_counts = [c for s in report.tokenizers for c in s.counts]
    low, high = min(all_counts), max(all_counts)
    log = high / max(low, 1) > _LOG_SPAN
    edges = _bin_edges(low, high, log)
    for i, stats in enumerate(report.tokenizers):
        color = _COLORS[i % len(_COLORS)]
        linestyle = _LINESTYLES[i % len(_LINESTYLES)]
        # An empty prompt (0 tokens) has no place on a log axis: it joins the first bin.
        counts = [max(c, 1) for c in stats.counts] if log else list(stats.counts)
        ax.hist(
            counts,
            bins=edges,
            histtype="stepfilled",
            facecolor=colors_module.to_rgba(color, 0.12),
            edgecolor=color,
            linestyle=linestyle,
            linewidth=1.8,
            label=f"{_column_title(stats)}: median {_rounded(stats.median)}, "
            f"p95 {_rounded(stats.p95)}",
        )
        ax.axvline(max(stats.median, 1) if log else stats.median, color=color, linestyle=":")
    if log:
        ax.set_xscale("log")
    ax.yaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    ax.set_xlabel("tokens per prompt" + (" (log scale)" if log else ""))
    ax.set_ylabel("prompts")
    ax.set_title(f"Prompt lengths ({_prompts_title(report)})")
    ax.legend(fontsize="small")
    return fig


def _rounded(value: float | None) -> str:
    """A length for the legend: whole tokens (``p95 309``, not ``308.65``)."""
    return "-" if value is None else f"{round(value):,}"


def plot_lengths(report: Report, path: str | os.PathLike[str]) -> None:
    """Write a picture of the distribution of tokens per prompt, one curve per tokenizer.

    A step histogram per tokenizer on shared bins (each in its own colour and line style, so
    that similar tokenizers stay apart), with each median marked and the legend giving the
    median and p95 in whole tokens; the length axis is logarithmic when the lengths span more
    than two decades. The format comes from the file's suffix (``.png``, ``.svg``, ``.pdf``).
    Needs matplotlib (the ``report`` extra). Uses no global pyplot state, so it is safe in
    servers and threads.
    """
    fig = lengths_figure(report)
    try:
        fig.savefig(os.fspath(path))
    except ValueError as e:  # an unknown image format
        raise ValueError(f"{os.fspath(path)}: {e}") from None
