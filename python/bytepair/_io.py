"""Files written whole or not at all, and the hashes that name their contents.

Every file bytepair writes (vocabularies, the download cache, token shards) goes through
:func:`write_atomic` or :func:`write_all_or_nothing`, so a reader sees the old file or the new
one, never half of one, and new files get the permissions the user's umask allows.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "STALE_SECONDS",
    "remove_stale_temporaries",
    "sha256_hex",
    "write_all_or_nothing",
    "write_atomic",
]


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


# Temporary files are named `.{target}.bytepair-{pid}-{random}.tmp` (and `.old` for the backups
# of write_all_or_nothing), so a later save can tell ours from anything else and remove those
# that a killed writer left.
_TAG = "bytepair"
STALE_SECONDS = 15 * 60
"""A temporary file of ours untouched this long is stale even if its writer still runs."""


def _temp_prefix(path: Path) -> str:
    return f".{path.name}.{_TAG}-{os.getpid()}-"


def _pid_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # someone else's process, or no way to tell: keep its file
    return True


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Remove the temporary files of earlier saves of ``path`` whose writer is gone (its pid no
    longer runs) or that nobody touched for :data:`STALE_SECONDS`; only files of our own naming.
    Returns the files removed."""
    own = re.compile(rf"\.{re.escape(path.name)}\.{_TAG}-(\d+)-[^/]*\.(?:tmp|old)")
    removed: list[Path] = []
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        found = own.fullmatch(entry.name)
        if found is None:
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            age = now - entry.stat(follow_symlinks=False).st_mtime
            pid = int(found.group(1))
            if (pid != os.getpid() and not _pid_running(pid)) or age > STALE_SECONDS:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue  # gone already, or not ours to remove
    return removed


def _target(path: Path) -> Path:
    """The file a save of ``path`` writes: the target of a symbolic link (so the link stays a
    link), else ``path``."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _sync_folder(folder: Path) -> None:
    # The rename is durable only once the folder's entry is on disk. Not every system can open
    # a folder (Windows cannot); there the rename is as durable as the system makes it.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def _stage(path: Path, data: bytes) -> Path:
    """``data`` written in full (and synced) to a temporary file beside ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=_temp_prefix(path), suffix=".tmp")
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

    A symbolic link stays a link: its target is written (atomically, beside the target).
    """
    path = _target(Path(path))
    tmp = _stage(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


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
            target = _target(Path(final))
            staged.append((_stage(target, data), target))
        for tmp, final in staged:
            if final.exists():
                backup = final.with_name(f"{_temp_prefix(final)}{uuid.uuid4().hex}.old")
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
    for folder in dict.fromkeys(final.parent for _, final in staged):
        _sync_folder(folder)
