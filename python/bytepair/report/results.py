"""The values a token report holds: costs, one tokenizer's statistics, the whole report.

:mod:`bytepair.report.render` draws these; :mod:`bytepair.report.stats` computes them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bytepair._optional import require
from bytepair.report.prices import PriceTable
from bytepair.report.prompts import Prompt

__all__ = ["Cost", "ReportData", "TokenizerStats", "percentile"]


@dataclass(frozen=True)
class Cost:
    """The estimated price of a report's prompts (and of the expected answers) on one model."""

    model: str
    input_tokens: int
    output_tokens: int
    input_price: float
    """Price per million input tokens."""
    output_price: float
    """Price per million output tokens."""
    currency: str = "USD"

    @property
    def input_cost(self) -> float:
        return self.input_tokens * self.input_price / 1_000_000

    @property
    def output_cost(self) -> float:
        return self.output_tokens * self.output_price / 1_000_000

    @property
    def total_cost(self) -> float:
        return self.input_cost + self.output_cost

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "currency": self.currency,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "input_price_per_million": self.input_price,
            "output_price_per_million": self.output_price,
            "input_cost": self.input_cost,
            "output_cost": self.output_cost,
            "total_cost": self.total_cost,
        }


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0..1) of sorted values, interpolated linearly (numpy's default).

    >>> percentile([1, 2, 3, 4], 0.5), percentile([1, 2, 3, 4], 0.95)
    (2.5, 3.8499999999999996)
    """
    if not sorted_values:
        return math.nan
    position = (len(sorted_values) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


@dataclass(frozen=True)
class TokenizerStats:
    """One tokenizer's counts over a report's prompts, their statistics, and costs.

    The ratios are totals over all prompts (total bytes / total tokens, ...), None when the
    denominator is 0. Words are runs of non-whitespace (``str.split``), so ``tokens_per_word``
    means little for languages written without spaces.
    """

    label: str
    encoding: str
    counts: tuple[int, ...]
    total: int
    minimum: int
    median: float
    p95: float
    maximum: int
    mean: float
    bytes_per_token: float | None
    chars_per_token: float | None
    tokens_per_word: float | None
    costs: tuple[Cost, ...] = ()
    unpriced: tuple[str, ...] = ()
    """Models asked for (``-m``) that the price table has no price for."""
    overhead: int | None = None
    """Of ``total``, the tokens of chat prompts beyond their messages' text (the template's, or
    the cookbook's estimate); None when no prompt is a chat or the chat format is unknown."""
    overhead_method: str | None = None
    """How ``overhead`` was counted: ``"template"`` (exact) or ``"openai"`` (an estimate)."""

    @property
    def prompts(self) -> int:
        return len(self.counts)

    def summary(self) -> dict[str, Any]:
        """The statistics as a dict (what JSON output carries under ``tokenizers``)."""
        return {
            "label": self.label,
            "encoding": self.encoding,
            "prompts": self.prompts,
            "total_tokens": self.total,
            "min": self.minimum,
            "median": self.median,
            "p95": self.p95,
            "max": self.maximum,
            "mean": self.mean,
            "bytes_per_token": self.bytes_per_token,
            "chars_per_token": self.chars_per_token,
            "tokens_per_word": self.tokens_per_word,
            "costs": [c.to_dict() for c in self.costs],
            "unpriced_models": list(self.unpriced),
            "chat_overhead": self.overhead,
            "chat_overhead_method": self.overhead_method,
        }


@dataclass(frozen=True)
class ReportData:
    """Token counts of prompts under one or several tokenizers, with statistics and costs: the
    values of a :class:`bytepair.report.Report`, which adds the ways to render them.

    ``report[label]`` is one tokenizer's :class:`TokenizerStats`.
    """

    prompts: tuple[Prompt, ...]
    tokenizers: tuple[TokenizerStats, ...]
    chars: tuple[int, ...]
    bytes: tuple[int, ...]
    words: tuple[int, ...]
    output_tokens: int = 0
    """Output tokens expected per prompt, for the cost estimate."""
    prices: PriceTable | None = None

    def __getitem__(self, label: str) -> TokenizerStats:
        for stats in self.tokenizers:
            if stats.label == label:
                return stats
        raise KeyError(
            f"no tokenizer {label!r} in this report (it has "
            f"{', '.join(s.label for s in self.tokenizers)})"
        )

    @property
    def labels(self) -> list[str]:
        return [s.label for s in self.tokenizers]

    def to_dict(self, *, per_prompt: bool = True) -> dict[str, Any]:
        """Everything as JSON-ready data: per-prompt counts, totals and costs per tokenizer."""
        data: dict[str, Any] = {
            "prompts_count": len(self.prompts),
            "chars": sum(self.chars),
            "bytes": sum(self.bytes),
            "words": sum(self.words),
            "output_tokens_per_prompt": self.output_tokens,
            "prices": None
            if self.prices is None
            else {
                "source": self.prices.source,
                "date": self.prices.date,
                "currency": self.prices.currency,
            },
            "tokenizers": [s.summary() for s in self.tokenizers],
            "totals": {s.label: s.total for s in self.tokenizers},
        }
        if per_prompt:
            data["prompts"] = [
                {
                    "source": prompt.source,
                    "chars": self.chars[i],
                    "bytes": self.bytes[i],
                    "words": self.words[i],
                    "tokens": {s.label: s.counts[i] for s in self.tokenizers},
                }
                for i, prompt in enumerate(self.prompts)
            ]
        return data

    def to_dataframe(self) -> Any:
        """One row per prompt (source, chars, bytes, words, then tokens per tokenizer), as a
        ``pandas.DataFrame``. Needs pandas (``pip install 'bytepair[report]'``)."""
        pandas = require("pandas", "Report.to_dataframe()", "report")
        columns: dict[str, list[Any]] = {
            "source": [p.source for p in self.prompts],
            "chars": list(self.chars),
            "bytes": list(self.bytes),
            "words": list(self.words),
        }
        for stats in self.tokenizers:
            columns[stats.label] = list(stats.counts)
        return pandas.DataFrame(columns)

    def to_json(self, *, per_prompt: bool = True, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(per_prompt=per_prompt), indent=indent, ensure_ascii=False)
