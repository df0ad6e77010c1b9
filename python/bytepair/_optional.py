"""Optional dependencies: imported when a feature needs them; one way to say what is missing."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["MissingExtraError", "require"]


class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message says what to install."""


def require(module: str, feature: str, extra: str | None = None) -> Any:
    """Import ``module`` (``"matplotlib.figure"``) for ``feature``, or raise a one-line
    :class:`MissingExtraError` saying how to install it: the ``bytepair[extra]`` extra, or the
    package itself when no extra holds it.

    >>> require("json", "reading").__name__
    'json'
    >>> require("no_such_mod", "a plot", "report")
    Traceback (most recent call last):
    ...
    bytepair._optional.MissingExtraError: a plot needs no_such_mod: pip install 'bytepair[report]'
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".")[0]
        how = f"'bytepair[{extra}]'" if extra is not None else package
        raise MissingExtraError(f"{feature} needs {package}: pip install {how}") from None
