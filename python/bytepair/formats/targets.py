"""Where a save writes, decided before anything is written (and before long work).

A path *means a folder* when it ends with a separator (``out/``) or is an existing folder; the
file then gets its format's usual name inside. :func:`check_writable` tries to create a file
where each target will go, so a command that trains for an hour fails at the start, naming the
target, rather than at the end, naming a temporary file.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> [p.name for p in save_targets("mine", str(folder / "out") + "/", "tiktoken")]
['mine.tiktoken']
>>> [p.name for p in save_targets("mine", folder / "x.tiktoken", "tiktoken")]
['x.tiktoken']
>>> check_writable(save_targets("mine", folder / "new" / "deeper/", "hf"))
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from bytepair.formats.common import StrPath

__all__ = ["check_writable", "means_folder", "missing_folders", "save_targets"]


def means_folder(path: StrPath) -> bool:
    """Whether ``path`` names a folder: a trailing separator, or an existing folder."""
    text = os.fspath(path)
    separators = tuple(s for s in (os.sep, os.altsep) if s)
    return text.endswith(separators) or os.path.isdir(text)


def save_targets(name: str, path: StrPath, format: str) -> list[Path]:
    """The files a save of encoding ``name`` to ``path`` in ``format`` writes."""
    target = Path(path)
    if format == "gpt2":
        if target.suffix == ".json" and not means_folder(path):
            return [target, target.with_name("vocab.bpe")]
        return [target / "encoder.json", target / "vocab.bpe"]
    default = {
        "tiktoken": f"{name}.tiktoken",
        "hf": "tokenizer.json",
        "sentencepiece": "tokenizer.model",
    }.get(format)
    if default is None:
        raise ValueError(
            f"unknown format {format!r}; expected 'tiktoken', 'hf', 'gpt2' or 'sentencepiece'"
        )
    return [target / default] if means_folder(path) else [target]


def missing_folders(targets: Iterable[Path]) -> list[Path]:
    """The folders above ``targets`` that do not exist yet (a save creates them), deepest first."""
    missing: set[Path] = set()
    for target in targets:
        folder = target.parent
        while not folder.exists() and folder != folder.parent:
            missing.add(folder)
            folder = folder.parent
    return sorted(missing, key=lambda p: len(p.parts), reverse=True)


def check_writable(targets: Iterable[Path]) -> None:
    """Raise ``OSError`` naming the target if a file cannot be created where it goes."""
    for target in targets:
        if target.is_dir():
            raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", str(target))
        folder = target.parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        if not folder.is_dir():
            raise NotADirectoryError(
                errno.ENOTDIR, f"cannot write: {folder} is not a folder", str(target)
            )
        try:
            fd, probe = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".probe")
        except OSError as e:
            raise type(e)(e.errno, f"cannot write: {e.strerror} ({folder})", str(target)) from None
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(probe)
