"""What the terminal we write to can show: colour or not, and how wide it is.

One decision for every coloured output (``bytepair show``, report tables): an explicit choice
(``--color/--no-color``, ``color=``) wins; otherwise colour only on a terminal, and never when
``NO_COLOR`` is set to anything (https://no-color.org) or ``TERM`` is ``dumb``.
"""

from __future__ import annotations

import os
from typing import IO, Any

__all__ = ["DEFAULT_COLUMNS", "columns", "is_terminal", "use_color"]

DEFAULT_COLUMNS = 80
"""The width assumed for a terminal that reports none (0 columns, as some CI ptys do)."""


def is_terminal(stream: IO[Any] | None) -> bool:
    """Whether ``stream`` is an interactive terminal (False for pipes, files, None)."""
    try:
        return stream is not None and bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def use_color(stream: IO[Any] | None, choice: bool | None = None) -> bool:
    """Whether to colour what is written to ``stream``.

    >>> import io
    >>> use_color(io.StringIO()), use_color(io.StringIO(), True)
    (False, True)
    """
    if choice is not None:
        return choice
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return is_terminal(stream)


def columns(stream: IO[Any] | None) -> int:
    """The width of the terminal ``stream`` writes to; 0 when it reports none or is no
    terminal."""
    try:
        width = os.get_terminal_size(stream.fileno()).columns if stream is not None else 0
    except (AttributeError, OSError, ValueError):
        width = 0
    return max(width, 0)
