"""Which tokenizer model builds each parsed value: models register here, loaders ask here.

The formats parse files into values (:mod:`bytepair.formats.values`) and never import a model;
each model (the rank model in :mod:`bytepair.encoding`, the Hugging Face pipeline model in
:mod:`bytepair.hf`) registers the value types it builds when it is imported, which
``import bytepair`` does. A new model registers its own value types and touches no other model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["build", "register_builder"]

_V = TypeVar("_V")

_BUILDERS: dict[type[Any], Callable[[Any], Any]] = {}


def register_builder(kind: type[_V], builder: Callable[[_V], Any]) -> None:
    """Let ``builder`` make encodings of values of type ``kind``."""
    _BUILDERS[kind] = builder


def build(parsed: object) -> Any:
    """The encoding a registered model builds from ``parsed``."""
    try:
        builder = _BUILDERS[type(parsed)]
    except KeyError:
        raise TypeError(
            f"no tokenizer model builds {type(parsed).__name__} values (import bytepair first)"
        ) from None
    return builder(parsed)
