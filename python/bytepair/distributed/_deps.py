"""Optional dependencies, imported only when a job needs them, and the progress bar."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

INSTALL_HINT = "pip install 'bytepair[ray]'"


def require(module: str, what: str) -> ModuleType:
    """Import ``module`` or raise a one-line ImportError that says how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"{what} needs {module.split('.')[0]}: {INSTALL_HINT}") from None


def require_ray() -> Any:
    """The ``ray`` module (``engine="ray"``)."""
    return require("ray", "engine='ray' (or use engine='local')")


def require_pyarrow(what: str, module: str = "pyarrow") -> Any:
    """``pyarrow`` or one of its modules (``"pyarrow.fs"``, ``"pyarrow.parquet"``): parquet,
    compressed and remote inputs."""
    return require(module, what)


@contextmanager
def progress_bar(
    enabled: bool, desc: str, total: int, unit: str = "B"
) -> Iterator[Callable[[int], object] | None]:
    """A tqdm bar's ``update``, or None when disabled or tqdm is not installed.

    The bar appears only for work that lasts more than half a second.
    """
    if not enabled:
        yield None
        return
    try:
        tqdm = importlib.import_module("tqdm").tqdm
    except ImportError:
        yield None
        return
    bar = tqdm(desc=desc, total=total, unit=unit, unit_scale=True, delay=0.5)
    try:
        yield bar.update
    finally:
        bar.close()
