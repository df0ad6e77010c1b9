"""Prices per million tokens, read from a small TOML file.

The package ships a dated example (``bytepair/data/prices.toml``, see :func:`default_prices`);
its comments document the format. In short::

    [prices]
    date = 2025-08-07
    currency = "USD"

    [models."gpt-4o"]
    tokenizer = "o200k_base"   # optional for models bytepair knows
    input = 2.50               # per million input tokens
    output = 10.00             # per million output tokens

>>> table = parse_prices('[models."gpt-4o"]\\ninput = 2.5\\noutput = 10', source="inline")
>>> table.models["gpt-4o"]
ModelPrice(model='gpt-4o', tokenizer='o200k_base', input=2.5, output=10.0, note=None)
>>> [m.model for m in default_prices().for_tokenizer("cl100k_base")][:2]
['gpt-4-turbo', 'gpt-4']
"""

from __future__ import annotations

import datetime
import math
import os
import sys
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from bytepair.registry import encoding_name_for_model

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found,no-redef,unused-ignore]

__all__ = ["ModelPrice", "PriceTable", "PricesError", "default_prices", "load_prices"]

_MODEL_KEYS = ("tokenizer", "input", "output", "note")
_META_KEYS = ("date", "currency", "source")


class PricesError(ValueError):
    """A pricing file that cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class ModelPrice:
    """A model's prices per million tokens, and the encoding that counts its tokens."""

    model: str
    tokenizer: str
    input: float
    output: float
    note: str | None = None

    def cost(self, input_tokens: int, output_tokens: int = 0) -> float:
        """The price of so many input and output tokens.

        >>> ModelPrice("m", "o200k_base", input=2.5, output=10.0).cost(1_000_000, 1000)
        2.51
        """
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


@dataclass(frozen=True)
class PriceTable:
    """Model prices, with the date and the source they were read from."""

    models: dict[str, ModelPrice]
    source: str = ""
    date: str | None = None
    currency: str = "USD"
    origin: str | None = field(default=None, compare=False)
    """Where the prices came from (``[prices] source``), if the file says."""

    def for_tokenizer(self, name: str) -> list[ModelPrice]:
        """The models whose tokens the encoding called ``name`` counts, in file order."""
        return [m for m in self.models.values() if m.tokenizer == name]

    def get(self, model: str) -> ModelPrice | None:
        """The prices of ``model``, or None."""
        return self.models.get(model)


def _number(value: Any, where: str, key: str) -> float:
    what = "input (prompt)" if key == "input" else "output (completion)"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise PricesError(
            f"{where}: {key!r} must be a number (price per million {what} tokens), got {value!r}"
        )
    if value < 0:
        raise PricesError(f"{where}: {key!r} is negative ({value})")
    return float(value)


def parse_prices(text: str, *, source: str = "<prices>") -> PriceTable:
    """Read a pricing table from TOML text (see the module docs for the format).

    Raises :class:`PricesError` with a one-line message for invalid TOML or a malformed entry.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        message = " ".join(str(e).split())
        raise PricesError(f"{source}: invalid TOML: {message}") from None
    unknown = [k for k in data if k not in ("prices", "models")]
    if unknown:
        raise PricesError(
            f'{source}: unknown table {unknown[0]!r} (expected [prices] and [models."NAME"])'
        )
    meta = data.get("prices", {})
    if not isinstance(meta, dict):
        raise PricesError(f"{source}: 'prices' must be a table ([prices])")
    for key in meta:
        if key not in _META_KEYS:
            raise PricesError(
                f"{source}: [prices]: unknown key {key!r} (expected {', '.join(_META_KEYS)})"
            )
    date = meta.get("date")
    if date is not None and not isinstance(date, (str, datetime.date)):
        raise PricesError(f"{source}: [prices]: 'date' must be a date, got {date!r}")
    currency = meta.get("currency", "USD")
    if not isinstance(currency, str) or not currency:
        raise PricesError(f"{source}: [prices]: 'currency' must be text, got {currency!r}")
    origin = meta.get("source")
    if origin is not None and not isinstance(origin, str):
        raise PricesError(f"{source}: [prices]: 'source' must be text, got {origin!r}")

    models_data = data.get("models")
    if not isinstance(models_data, dict) or not models_data:
        raise PricesError(f'{source}: no models: add tables like [models."gpt-4o"]')
    models: dict[str, ModelPrice] = {}
    for name, entry in models_data.items():
        where = f'{source}: [models."{name}"]'
        if not isinstance(entry, dict):
            raise PricesError(f"{where}: must be a table with input and output prices")
        for key in entry:
            if key not in _MODEL_KEYS:
                raise PricesError(
                    f"{where}: unknown key {key!r} (expected {', '.join(_MODEL_KEYS)})"
                )
        for key in ("input", "output"):
            if key not in entry:
                raise PricesError(f"{where}: missing {key!r} (price per million tokens)")
        tokenizer = entry.get("tokenizer")
        if tokenizer is None:
            try:
                tokenizer = encoding_name_for_model(name)
            except KeyError:
                raise PricesError(
                    f"{where}: no 'tokenizer' and bytepair knows no encoding for this model; "
                    'add tokenizer = "o200k_base" (or another encoding name)'
                ) from None
        if not isinstance(tokenizer, str) or not tokenizer:
            raise PricesError(f"{where}: 'tokenizer' must be an encoding name, got {tokenizer!r}")
        note = entry.get("note")
        if note is not None and not isinstance(note, str):
            raise PricesError(f"{where}: 'note' must be text, got {note!r}")
        models[name] = ModelPrice(
            name,
            tokenizer,
            _number(entry["input"], where, "input"),
            _number(entry["output"], where, "output"),
            note,
        )
    return PriceTable(
        models,
        source=source,
        date=None if date is None else str(date),
        currency=currency,
        origin=origin,
    )


def load_prices(path: str | os.PathLike[str] | None = None) -> PriceTable:
    """Read a pricing file; without a path, the example shipped with the package.

    Raises :class:`PricesError` (a ``ValueError``) with a one-line message naming the file.
    """
    if path is None:
        return default_prices()
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise PricesError(f"{name}: no such pricing file") from None
    except OSError as e:
        raise PricesError(f"{name}: cannot read: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise PricesError(f"{name}: not UTF-8 text (offset {e.start})") from None
    return parse_prices(text, source=name)


def default_prices() -> PriceTable:
    """The dated example price list shipped with bytepair (``bytepair/data/prices.toml``)."""
    text = resources.files("bytepair").joinpath("data").joinpath("prices.toml").read_text("utf-8")
    return parse_prices(text, source="bytepair/data/prices.toml")
