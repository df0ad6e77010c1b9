"""Token counts of many prompts under several tokenizers: statistics, and what they cost.

>>> from bytepair import Encoding
>>> enc = Encoding("bytes", pat_str=r".", special_tokens={},
...                mergeable_ranks={bytes([b]): b for b in range(256)})
>>> report = token_report(["hello world", "hi"], enc)
>>> stats = report["bytes"]
>>> stats.counts, stats.total, stats.median, stats.tokens_per_word
((11, 2), 13, 6.5, 4.333333333333333)
>>> report.to_dict()["prompts"][1]
{'source': 'prompt 2', 'chars': 2, 'bytes': 2, 'words': 1, 'tokens': {'bytes': 2}}
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bytepair.encoding import Encoding
from bytepair.registry import encoding_name_for_model, get_encoding, list_encoding_names
from bytepair.report.chat import chat_method, count_chat_with
from bytepair.report.prices import PriceTable, load_prices
from bytepair.report.prompts import Prompt
from bytepair.report.render import plot_lengths, report_csv, report_markdown, report_table
from bytepair.report.results import Cost, ReportData, TokenizerStats, percentile

__all__ = [
    "Cost",
    "Report",
    "Tokenizer",
    "TokenizerStats",
    "percentile",
    "resolve_tokenizer",
    "token_report",
]

# Prompts are counted in batches of at most this many prompts or characters, so that progress
# moves on long lists and on a few huge prompts alike.
_BATCH_PROMPTS = 1024
_BATCH_CHARS = 1 << 20


def _batches(texts: list[str]) -> list[list[str]]:
    batches: list[list[str]] = []
    batch: list[str] = []
    size = 0
    for text in texts:
        if batch and (len(batch) >= _BATCH_PROMPTS or size + len(text) > _BATCH_CHARS):
            batches.append(batch)
            batch, size = [], 0
        batch.append(text)
        size += len(text)
    if batch:
        batches.append(batch)
    return batches


@dataclass(frozen=True)
class Tokenizer:
    """An encoding under a label, and the models whose prices apply to it.

    ``models=None`` prices every model of the price table whose tokenizer is this encoding's
    name; a tuple prices exactly those models.
    """

    label: str
    encoding: Encoding
    models: tuple[str, ...] | None = None


TokenizerLike = Tokenizer | Encoding | str


def resolve_tokenizer(
    spec: TokenizerLike, *, vocab_dir: str | os.PathLike[str] | None = None
) -> Tokenizer:
    """A :class:`Tokenizer` from an encoding, an encoding name or a model name.

    A model name (``"gpt-4o"``) gives its encoding, labelled and priced as that model.
    Raises ``ValueError`` for a name that is neither, and the registry's errors (a missing
    vocabulary file) as they are.
    """
    if isinstance(spec, Tokenizer):
        return spec
    if isinstance(spec, Encoding):
        return Tokenizer(spec.name, spec)
    if spec in list_encoding_names():
        return Tokenizer(spec, get_encoding(spec, vocab_dir=vocab_dir))
    try:
        name = encoding_name_for_model(spec)
    except KeyError:
        raise ValueError(
            f"unknown tokenizer {spec!r}: neither an encoding "
            f"({', '.join(list_encoding_names())}) nor a model bytepair knows"
        ) from None
    return Tokenizer(spec, get_encoding(name, vocab_dir=vocab_dir), (spec,))


@dataclass(frozen=True)
class Report(ReportData):
    """Token counts of prompts under one or several tokenizers, with statistics and costs.

    ``report[label]`` is one tokenizer's :class:`TokenizerStats`. Format it with
    :meth:`to_table`, :meth:`to_markdown`, :meth:`to_csv`, :meth:`to_json`; draw it with
    :meth:`plot`.
    """

    def to_table(self, *, color: bool = False, notes: bool = True) -> str:
        """Aligned plain-text tables: statistics side by side, then costs (and notes on models
        without prices unless ``notes=False``)."""
        return report_table(self, color=color, notes=notes)

    def to_markdown(self, *, notes: bool = True) -> str:
        """The same tables in GitHub Markdown."""
        return report_markdown(self, notes=notes)

    def to_csv(self) -> str:
        """One CSV row per tokenizer and priced model (statistics repeated on each)."""
        return report_csv(self)

    def plot(self, path: str | os.PathLike[str] | Path) -> None:
        """Draw the distribution of prompt lengths per tokenizer to an image file (matplotlib,
        ``pip install 'bytepair[report]'``)."""
        plot_lengths(self, path)

    def __str__(self) -> str:
        return self.to_table()


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def _chat_counts(
    spec: Tokenizer, prompts: Sequence[Prompt], counts: list[int]
) -> tuple[int | None, str | None]:
    """Replace the counts of chat prompts by what the model receives; the overhead in all and
    how it was counted (None, None when no prompt is a chat or the format is unknown)."""
    chats = [i for i, p in enumerate(prompts) if p.messages is not None]
    model = spec.models[0] if spec.models else None
    method = chat_method(spec.encoding, model) if chats else None
    if method is None:
        return None, None
    overhead = 0
    for i in chats:
        prompt = prompts[i]
        assert prompt.messages is not None
        try:
            n = count_chat_with(spec.encoding, prompt.messages, prompt.tools, method=method)
        except (ValueError, TypeError) as e:
            raise ValueError(f"{prompt.source}: {e}") from None
        counts[i] = n.tokens
        overhead += n.overhead
    return overhead, method


def _stats(
    tokenizer: Tokenizer,
    counts: list[int],
    totals: tuple[int, int, int],
    prices: PriceTable | None,
    output_tokens: int,
    chat: tuple[int | None, str | None] = (None, None),
) -> TokenizerStats:
    total_bytes, total_chars, total_words = totals
    ordered = sorted(counts)
    total = sum(counts)
    costs: list[Cost] = []
    unpriced: list[str] = []
    if prices is not None:
        if tokenizer.models is None:
            priced = prices.for_tokenizer(tokenizer.encoding.name)
        else:
            priced = []
            for model in tokenizer.models:
                price = prices.get(model)
                if price is None:
                    unpriced.append(model)
                else:
                    priced.append(price)
        n_output = output_tokens * len(counts)
        costs = [Cost(p.model, total, n_output, p.input, p.output, prices.currency) for p in priced]
    return TokenizerStats(
        label=tokenizer.label,
        encoding=tokenizer.encoding.name,
        counts=tuple(counts),
        total=total,
        minimum=ordered[0],
        median=percentile(ordered, 0.5),
        p95=percentile(ordered, 0.95),
        maximum=ordered[-1],
        mean=total / len(counts),
        bytes_per_token=_ratio(total_bytes, total),
        chars_per_token=_ratio(total_chars, total),
        tokens_per_word=_ratio(total, total_words),
        costs=tuple(costs),
        unpriced=tuple(unpriced),
        overhead=chat[0],
        overhead_method=chat[1],
    )


def _unique_labels(tokenizers: list[Tokenizer]) -> list[Tokenizer]:
    seen: dict[str, int] = {}
    out = []
    for t in tokenizers:
        n = seen.get(t.label, 0) + 1
        seen[t.label] = n
        out.append(t if n == 1 else Tokenizer(f"{t.label}#{n}", t.encoding, t.models))
    return out


def token_report(
    prompts: Iterable[str | Prompt],
    encodings: TokenizerLike | Sequence[TokenizerLike] | Mapping[str, Encoding],
    *,
    prices: PriceTable | str | os.PathLike[str] | None = None,
    output_tokens: int = 0,
    vocab_dir: str | os.PathLike[str] | None = None,
    num_threads: int | None = None,
    progress: Callable[[int], object] | None = None,
) -> Report:
    """Count every prompt with every tokenizer; summarise, and price with ``prices``.

    Args:
        prompts: texts, or :class:`Prompt` objects (see :func:`load_prompts`).
        encodings: one or several :class:`~bytepair.Encoding` objects, encoding names
            (``"o200k_base"``), model names (``"gpt-4o"``: labelled and priced as that model)
            or :class:`Tokenizer` objects; or a mapping of label to encoding.
        prices: a :class:`PriceTable` (e.g. :func:`default_prices`) or a pricing file; None
            leaves out costs. A tokenizer given as an encoding is priced for every model of the
            table that uses it, one given as a model for that model.
        output_tokens: output tokens expected per prompt, priced at the output rate.
        vocab_dir: where to find vocabularies given by name (as :func:`bytepair.get_encoding`).
        num_threads: threads for counting (default: the encoding's default).
        progress: called with the number of prompts counted after each batch (of at most
            1024 prompts or a million characters), for a progress bar.

    Text that spells a special token (``<|endoftext|>``) is counted as ordinary text, as a
    provider's API treats user text. A chat prompt (a :class:`Prompt` with ``messages``) counts
    what the model receives (:mod:`bytepair.report.chat`): the model's chat template where the
    encoding has one, OpenAI's cookbook estimate for OpenAI's encodings and models; the tokens
    beyond the messages' text are each tokenizer's ``overhead``.

    >>> from bytepair import Encoding
    >>> enc = Encoding("bytes", pat_str=r".", special_tokens={},
    ...                mergeable_ranks={bytes([b]): b for b in range(256)})
    >>> from bytepair.report.prices import parse_prices
    >>> table = parse_prices('[models.m]\\ntokenizer="bytes"\\ninput=1e6\\noutput=2e6')
    >>> cost = token_report(["abc", "de"], enc, prices=table, output_tokens=1)["bytes"].costs[0]
    >>> cost.input_tokens, cost.output_tokens, cost.total_cost
    (5, 2, 9.0)
    """
    if isinstance(output_tokens, bool) or not isinstance(output_tokens, int) or output_tokens < 0:
        raise ValueError(f"output_tokens must be an int >= 0, got {output_tokens!r}")
    items = tuple(
        p if isinstance(p, Prompt) else Prompt(p, f"prompt {i + 1}") for i, p in enumerate(prompts)
    )
    for p in items:
        if not isinstance(p.text, str):
            raise TypeError(f"{p.source}: a prompt must be a str, got {type(p.text).__name__}")
    if not items:
        raise ValueError("no prompts to report on")

    if isinstance(encodings, Mapping):
        specs: list[Tokenizer] = [Tokenizer(label, e) for label, e in encodings.items()]
    elif isinstance(encodings, (str, Encoding, Tokenizer)):
        specs = [resolve_tokenizer(encodings, vocab_dir=vocab_dir)]
    else:
        specs = [resolve_tokenizer(e, vocab_dir=vocab_dir) for e in encodings]
    if not specs:
        raise ValueError("no tokenizers to report on")
    specs = _unique_labels(specs)

    table = prices if isinstance(prices, PriceTable) or prices is None else load_prices(prices)

    texts = [p.text for p in items]
    chars = tuple(len(t) for t in texts)
    sizes = tuple(len(t.encode("utf-8", "replace")) for t in texts)
    words = tuple(len(t.split()) for t in texts)
    totals = (sum(sizes), sum(chars), sum(words))

    results = []
    batches = _batches(texts)
    for spec in specs:
        counts: list[int] = []
        for chunk in batches:
            if num_threads is None:
                counts.extend(spec.encoding.count_batch(chunk, disallowed_special=()))
            else:
                counts.extend(
                    spec.encoding.count_batch(chunk, num_threads=num_threads, disallowed_special=())
                )
            if progress is not None:
                progress(len(chunk))
        chat = _chat_counts(spec, items, counts)
        results.append(_stats(spec, counts, totals, table, output_tokens, chat))
    return Report(
        prompts=items,
        tokenizers=tuple(results),
        chars=chars,
        bytes=sizes,
        words=words,
        output_tokens=output_tokens,
        prices=table,
    )
