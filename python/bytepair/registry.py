"""Known encodings by name, loaded from local files first, downloaded only when asked.

Where a vocabulary file is looked for, in order:

1. ``vocab_dir`` passed to :func:`get_encoding`, then each folder of ``BYTEPAIR_VOCAB_DIR``
   (``os.pathsep``-separated): a file named as upstream names it (``cl100k_base.tiktoken``),
   directly inside or in a sub-folder named after the encoding (the layout of a folder of
   vocabularies such as ``shared/vocab``);
2. the cache, ``BYTEPAIR_CACHE_DIR`` (default: the platform's user cache folder,
   ``~/.cache/bytepair`` on Linux; see :func:`cache_dir`), by the same names;
3. a download from the upstream URL (unless ``download=False`` or ``BYTEPAIR_OFFLINE=1``),
   verified against the pinned sha256 and written to the cache atomically; without network the
   error says exactly which file to put where.

Every file is checked against its sha256 before use, wherever it came from, so a truncated or
tampered file is an error, never a silently different tokenizer. Nothing touches the network at
import time.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import platformdirs

from bytepair import _io
from bytepair.encoding import Encoding
from bytepair.known import CL100K_FILE as CL100K_FILE
from bytepair.known import ENCODINGS as ENCODINGS
from bytepair.known import LLAMA3_FILE as LLAMA3_FILE
from bytepair.known import MODEL_PREFIX_TO_ENCODING as MODEL_PREFIX_TO_ENCODING
from bytepair.known import MODEL_TO_ENCODING as MODEL_TO_ENCODING
from bytepair.known import O200K_FILE as O200K_FILE
from bytepair.known import P50K_FILE as P50K_FILE
from bytepair.known import R50K_FILE as R50K_FILE
from bytepair.known import EncodingSpec as EncodingSpec
from bytepair.known import VocabFile as VocabFile
from bytepair.known import llama3_specials as _llama3_specials  # noqa: F401 (old name)

# Re-exported where they used to live.
write_atomic = _io.write_atomic
__all__ = [
    "cache_dir",
    "encoding_for_model",
    "encoding_name_for_model",
    "find_vocab_file",
    "get_encoding",
    "list_encoding_names",
    "locate_vocab_file",
    "write_atomic",
]

_cache: dict[str, Encoding] = {}
_lock = threading.Lock()


# tiktoken's names in tiktoken's order (code may index its list), then ours.
_TIKTOKEN_ORDER = (
    "gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"
)  # fmt: skip


def list_encoding_names() -> list[str]:
    """The names :func:`get_encoding` knows: tiktoken's, in tiktoken's order, then ours.

    >>> list_encoding_names()[:5]
    ['gpt2', 'r50k_base', 'p50k_base', 'p50k_edit', 'cl100k_base']
    """
    ours = sorted(set(ENCODINGS) - set(_TIKTOKEN_ORDER))
    return [n for n in _TIKTOKEN_ORDER if n in ENCODINGS] + ours


def cache_dir() -> Path:
    """The download cache: ``BYTEPAIR_CACHE_DIR``, else the platform's user cache folder
    (``$XDG_CACHE_HOME/bytepair`` or ``~/.cache/bytepair`` on Linux, ``~/Library/Caches/bytepair``
    on macOS, ``%LOCALAPPDATA%\\bytepair\\Cache`` on Windows)."""
    configured = os.environ.get("BYTEPAIR_CACHE_DIR")
    if configured:
        return Path(configured)
    return Path(platformdirs.user_cache_dir("bytepair", appauthor=False))


def _search_dirs(vocab_dir: str | os.PathLike[str] | None) -> Iterator[Path]:
    if vocab_dir is not None:
        yield Path(vocab_dir)
    for entry in os.environ.get("BYTEPAIR_VOCAB_DIR", "").split(os.pathsep):
        if entry:
            yield Path(entry)
    yield cache_dir()


def _candidates(spec: EncodingSpec, directory: Path) -> Iterator[Path]:
    names = (spec.file.filename, *spec.file.aliases)
    folders = [spec.name, spec.folder or spec.name, spec.file.filename.split(".")[0]]
    for name in names:
        yield directory / name
        for folder in dict.fromkeys(folders):
            yield directory / folder / name


def locate_vocab_file(name: str, *, vocab_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """Where the vocabulary file of encoding ``name`` is found locally (the folders of the
    module docs, in order), or None; the file is neither read nor checked.

    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "cl100k_base.tiktoken").write_bytes(b"not checked here")
    >>> locate_vocab_file("cl100k_base", vocab_dir=folder) == folder / "cl100k_base.tiktoken"
    True
    """
    spec = _spec(name)
    for directory in _search_dirs(vocab_dir):
        for path in _candidates(spec, directory):
            if path.is_file():
                return path
    return None


def find_vocab_file(
    name: str, *, vocab_dir: str | os.PathLike[str] | None = None, download: bool | None = None
) -> tuple[Path, bytes]:
    """Locate (or, if allowed, download) the vocabulary file of encoding ``name``.

    Returns the path and the verified contents.
    """
    spec = _spec(name)
    tried: list[str] = []
    for directory in _search_dirs(vocab_dir):
        for path in _candidates(spec, directory):
            if not path.is_file():
                continue
            data = path.read_bytes()
            if _io.sha256_hex(data) != spec.file.sha256:
                raise ValueError(
                    f"{path}: sha256 {_io.sha256_hex(data)} does not match the expected "
                    f"{spec.file.sha256} for {name!r}; the file is corrupt or a different "
                    "vocabulary: delete or replace it"
                )
            return path, data
        tried.append(str(directory))
    if download is None:
        download = os.environ.get("BYTEPAIR_OFFLINE", "") in ("", "0")
    if download and spec.file.url:
        try:
            return _download(spec.file)
        except OSError as e:
            raise FileNotFoundError(
                f"no {spec.file.filename} for encoding {name!r} in {', '.join(tried)}, and "
                f"downloading {spec.file.url} failed ({e}): put that file into "
                f"{cache_dir()} (or set BYTEPAIR_VOCAB_DIR to a folder that has it)"
            ) from None
    how = f"download it from {spec.file.url} " if spec.file.url else "obtain it from its publisher "
    raise FileNotFoundError(
        f"no {spec.file.filename} for encoding {name!r} in {', '.join(tried)}: {how}"
        f"into one of those folders, set BYTEPAIR_VOCAB_DIR to a folder that has it"
        + (" (downloads are off: BYTEPAIR_OFFLINE=1 or download=False)" if spec.file.url else "")
    )


def _download(file: VocabFile) -> tuple[Path, bytes]:
    import urllib.request

    assert file.url is not None
    with urllib.request.urlopen(file.url, timeout=60) as response:
        data = response.read()
    if _io.sha256_hex(data) != file.sha256:
        raise ValueError(
            f"downloaded {file.url} but its sha256 {_io.sha256_hex(data)} is not the expected "
            f"{file.sha256}; not saved"
        )
    target = cache_dir() / file.filename
    _io.write_atomic(target, data)
    return target, data


def _spec(name: str) -> EncodingSpec:
    try:
        return ENCODINGS[name]
    except KeyError:
        raise ValueError(
            f"unknown encoding {name!r}; known encodings: {', '.join(list_encoding_names())}"
        ) from None


def get_encoding(
    name: str, *, vocab_dir: str | os.PathLike[str] | None = None, download: bool | None = None
) -> Encoding:
    """The encoding called ``name`` (built once per process, then shared).

    Looks for the file locally (see the module docs), then downloads it unless
    ``download=False`` or ``BYTEPAIR_OFFLINE=1``.
    """
    spec = _spec(name)
    key = f"{name}\0{vocab_dir}"
    with _lock:
        cached = _cache.get(key)
    if cached is not None:
        return cached
    path, data = find_vocab_file(name, vocab_dir=vocab_dir, download=download)
    enc = Encoding._from_tiktoken_bytes(
        data,
        name=spec.name,
        pat_str=spec.pat_str,
        special_tokens=spec.special_tokens,
        source=str(path),
    )
    if spec.explicit_n_vocab is not None and enc.n_vocab != spec.explicit_n_vocab:
        raise ValueError(f"{path}: {name} should have {spec.explicit_n_vocab} ids")
    with _lock:
        return _cache.setdefault(key, enc)


def encoding_name_for_model(model_name: str) -> str:
    """The encoding name a model uses.

    >>> encoding_name_for_model("gpt-4o-mini")
    'o200k_base'
    """
    if model_name in MODEL_TO_ENCODING:
        return MODEL_TO_ENCODING[model_name]
    for prefix, encoding in MODEL_PREFIX_TO_ENCODING.items():
        if model_name.startswith(prefix):
            return encoding
    raise KeyError(
        f"no tokenizer is known for model {model_name!r}; pass an encoding name instead, "
        f"e.g. get_encoding('o200k_base') (known: {', '.join(list_encoding_names())})"
    )


def encoding_for_model(
    model_name: str,
    *,
    vocab_dir: str | os.PathLike[str] | None = None,
    download: bool | None = None,
) -> Encoding:
    """The encoding a model uses (``KeyError`` for an unknown model)."""
    return get_encoding(encoding_name_for_model(model_name), vocab_dir=vocab_dir, download=download)
