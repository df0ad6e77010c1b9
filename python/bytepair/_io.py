"""Files written whole or not at all, and the hashes that name their contents.

Every file bytepair writes (vocabularies, the download cache, token shards) goes through
:func:`write_atomic` or :func:`write_all_or_nothing`, so a reader sees the old file or the new
one, never half of one, and new files get the permissions the user's umask allows.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path

__all__ = ["sha256_hex", "write_all_or_nothing", "write_atomic"]


def _read_umask() -> int:
    # Linux shows the umask; elsewhere the only way to read it is to set it (and put it back),
    # done once, at import.
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_read_umask()


def sha256_hex(data: bytes) -> str:
    """The sha256 of ``data`` as hex digits.

    >>> sha256_hex(b"")[:16]
    'e3b0c44298fc1c14'
    """
    return hashlib.sha256(data).hexdigest()


def _stage(path: Path, data: bytes) -> Path:
    """``data`` written in full (and synced) to a temporary file beside ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp makes the file private (0600); the final file gets the ordinary mode.
        os.fchmod(fd, _FILE_MODE)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.bin"
    >>> write_atomic(p, b"abc"); p.read_bytes()
    b'abc'
    """
    tmp = _stage(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_all_or_nothing(files: Mapping[Path, bytes]) -> None:
    """Write several files so that readers see all the old ones or all the new ones.

    Each file is first written in full beside its target (and synced), then the targets are
    replaced one by one; if anything fails on the way (an error, an interrupt), the files already
    replaced are put back from hard links to their old contents, and every temporary file is
    removed. Only a crash of the whole process between two renames can leave a mix.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> write_all_or_nothing({folder / "a": b"1", folder / "b": b"2"})
    >>> sorted(p.name for p in folder.iterdir())
    ['a', 'b']
    """
    staged: list[tuple[Path, Path]] = []
    backups: dict[Path, Path] = {}
    replaced: list[Path] = []
    try:
        for final, data in files.items():
            staged.append((_stage(final, data), final))
        for tmp, final in staged:
            if final.exists():
                backup = final.with_name(f".{final.name}.{uuid.uuid4().hex}.old")
                try:
                    os.link(final, backup)
                except OSError:
                    shutil.copy2(final, backup)
                backups[final] = backup
            os.replace(tmp, final)
            replaced.append(final)
    except BaseException:
        for final in reversed(replaced):
            old = backups.pop(final, None)
            if old is not None:
                os.replace(old, final)
            else:
                final.unlink(missing_ok=True)
        raise
    finally:
        for staged_file, _ in staged:
            staged_file.unlink(missing_ok=True)
        for old in backups.values():
            old.unlink(missing_ok=True)
