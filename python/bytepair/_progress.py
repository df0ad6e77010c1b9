"""The one progress bar: tqdm's, when it is installed and wanted."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO

__all__ = ["Progress", "progress_bar"]

Progress = Callable[[int], object]
"""Called with the amount of work just done (bytes, merges, prompts)."""


@contextmanager
def progress_bar(
    desc: str,
    total: int | None = None,
    unit: str = "B",
    *,
    enabled: bool | None = True,
    file: IO[str] | None = None,
) -> Iterator[Progress | None]:
    """A tqdm bar's ``update``, or None when ``enabled`` is False or tqdm is not installed
    (it is optional for the library). ``enabled=None`` shows the bar only on a terminal.

    The bar appears only for work that lasts more than half a second; byte counts are shown
    scaled (``12.3MB``).

    >>> with progress_bar("nothing", enabled=False) as advance:
    ...     advance is None
    True
    """
    if enabled is False:
        yield None
        return
    try:
        tqdm = importlib.import_module("tqdm").tqdm
    except ImportError:
        yield None
        return
    bar = tqdm(
        desc=desc,
        total=total,
        unit=unit,
        unit_scale=unit == "B",
        delay=0.5,
        disable=None if enabled is None else False,
        file=file,
    )
    try:
        yield bar.update
    finally:
        bar.close()
