"""The one progress bar: tqdm's, when it is installed and wanted."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO

from bytepair._terminal import DEFAULT_COLUMNS, columns, is_terminal

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
    """A tqdm bar's ``update``, or None when ``enabled`` is False, when ``file`` (default:
    standard error) is not a terminal, or when tqdm is not installed (it is optional for the
    library). ``enabled=None`` and ``True`` both mean "if on a terminal".

    A bar redraws itself with carriage returns, which in a pipe or a log file pile up on one
    line, so there it is left out. A terminal that reports 0 columns gets a bar of the
    default width. The bar appears only for work that lasts more than half a second; byte
    counts are shown scaled (``12.3MB``); with a ``total`` it shows the percentage and the time
    left.

    >>> with progress_bar("nothing", enabled=False) as advance:
    ...     advance is None
    True
    """
    stream = file if file is not None else sys.stderr
    if enabled is False or not is_terminal(stream):
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
        # A terminal reporting no width: a fixed one (else tqdm follows the terminal's).
        ncols=None if columns(stream) else DEFAULT_COLUMNS,
        file=stream,
    )
    try:
        yield bar.update
    finally:
        bar.close()
