"""The output of :func:`bytepair.distributed.tokenize`: token shards, their index, the manifest.

An output folder holds, for each shard ``i`` (``NNNNNN`` = ``i`` in six digits):

- ``shard-NNNNNN.tokens.npy``: every token id of the shard's documents, flat, in order, as
  ``uint16`` when the vocabulary fits (ids below 65536) else ``uint32``. A standard ``.npy``
  file: ``np.load(path, mmap_mode="r")`` maps it, and the data starts at byte 128, so readers
  of raw ``.bin`` token files can use ``np.memmap(path, dtype, offset=128)``.
- ``shard-NNNNNN.offsets.npy``: ``uint64``, one more than the shard's documents: document ``j``
  is ``tokens[offsets[j]:offsets[j + 1]]`` (its end-of-text token included, if appended).
- ``shard-NNNNNN.json``: written last, it marks the shard finished and records its sources,
  counts and the job's fingerprint; a re-run skips shards whose marker matches the job.

and ``manifest.json``, written when every shard is done: the inputs, the shards in order, the
totals, the dtype and the encoding (name, pattern, and the sha256 of its vocabulary in
``.tiktoken`` form: for a known encoding it equals the sha256 of the upstream vocabulary file).

Every file is written to a temporary name and renamed into place (``os.replace``), so a crash
leaves finished files or none, never half a file.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from bytepair import _core
from bytepair._io import write_atomic
from bytepair.encoding import Encoding
from bytepair.formats.values import RankVocabulary

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
HEADER_BYTES = 128
_TMP_PREFIX = ".shard-"


def shard_stem(index: int) -> str:
    """The common start of a shard's file names: ``shard-000042``."""
    return f"shard-{index:06d}"


def vocab_sha256(encoding: Encoding) -> str:
    """The sha256 of the ordinary tokens in ``.tiktoken`` form (``base64 rank`` lines by rank).

    For a known encoding this is the sha256 of its upstream vocabulary file.
    """
    if type(encoding._core) is _core.RankEncoder:
        # The core writes that form itself, several times faster.
        return hashlib.sha256(encoding._core.to_tiktoken()).hexdigest()
    ranks = sorted(encoding._mergeable_ranks.items(), key=lambda kv: kv[1])
    h = hashlib.sha256()
    for token, rank in ranks:
        h.update(base64.b64encode(token) + b" " + str(rank).encode() + b"\n")
    return h.hexdigest()


def encoding_info(encoding: Encoding) -> dict[str, Any]:
    """What identifies an encoding in a manifest."""
    specials = json.dumps(sorted(encoding._special_tokens.items()), ensure_ascii=False)
    info = {
        "name": encoding.name,
        "n_vocab": encoding.n_vocab,
        "pat_str": encoding.pat_str,
        "vocab_sha256": vocab_sha256(encoding),
        "special_tokens_sha256": hashlib.sha256(specials.encode()).hexdigest(),
    }
    if not isinstance(encoding.vocabulary(), RankVocabulary):
        # A model other than ranks (a Hugging Face pipeline: normalizer, added tokens, ...) is
        # more than the vocabulary.
        state = json.dumps(encoding.__getstate__(), sort_keys=True, default=repr)
        info["pipeline_sha256"] = hashlib.sha256(state.encode()).hexdigest()
    return info


def npy_header(dtype: np.dtype[Any], length: int) -> bytes:
    """A 128-byte ``.npy`` (version 1.0) header for a 1-d array of ``length`` items."""
    if dtype.fields is not None:
        raise ValueError(f"cannot write a .npy header for the structured dtype {dtype}")
    descr = dtype.str  # what numpy's dtype_to_descr gives for a plain dtype
    text = f"{{'descr': {descr!r}, 'fortran_order': False, 'shape': ({length},), }}"
    text = text.ljust(HEADER_BYTES - 10 - 1) + "\n"
    header = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode("latin1")
    if len(header) != HEADER_BYTES:
        raise ValueError(f"cannot write a .npy header for {length} items")
    return header


def _temp(directory: Path, name: str) -> tuple[int, str]:
    return tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")


class ShardWriter:
    """Writes one shard: tokens are appended as they come, all files renamed into place at
    :meth:`commit` (the markers last)."""

    def __init__(self, directory: Path, index: int, dtype: np.dtype[Any]) -> None:
        self.directory = directory
        self.stem = shard_stem(index)
        self.dtype = dtype
        fd, self._tmp = _temp(directory, f"{self.stem}.tokens.npy")
        self._file = os.fdopen(fd, "wb")
        self._file.write(npy_header(dtype, 0))
        self.lengths: list[int] = []
        self.tokens = 0

    def add(self, documents: Sequence[list[int]], eot: int | None) -> None:
        """Append the token lists of some documents (and ``eot`` after each, unless None)."""
        import itertools

        if eot is not None:
            for ids in documents:
                ids.append(eot)
        lengths = [len(ids) for ids in documents]
        count = sum(lengths)
        flat = np.fromiter(itertools.chain.from_iterable(documents), self.dtype, count=count)
        self._file.write(flat.tobytes())
        self.lengths.extend(lengths)
        self.tokens += count

    def add_arrays(self, documents: Sequence[npt.NDArray[Any]], eot: int | None) -> None:
        """Append the token arrays of some documents (and ``eot`` after each, unless None);
        the ids must fit this shard's dtype (the job checked the vocabulary)."""
        if not documents:
            return
        parts = list(documents)
        if eot is not None:
            end = np.array([eot], dtype=self.dtype)
            parts = [part for ids in documents for part in (ids, end)]
        lengths = [len(ids) + (eot is not None) for ids in documents]
        flat = np.concatenate(parts, dtype=self.dtype, casting="same_kind")
        self._file.write(flat.tobytes())
        self.lengths.extend(lengths)
        self.tokens += len(flat)

    def commit(self, marker: dict[str, Any]) -> dict[str, Any]:
        """Finish the files, move them into place, and write the marker (returned)."""
        f = self._file
        f.seek(0)
        f.write(npy_header(self.dtype, self.tokens))
        f.flush()
        os.fsync(f.fileno())
        f.close()
        offsets = np.zeros(len(self.lengths) + 1, dtype=np.uint64)
        np.cumsum(self.lengths, out=offsets[1:])
        record = {
            **marker,
            "tokens_file": f"{self.stem}.tokens.npy",
            "offsets_file": f"{self.stem}.offsets.npy",
            "documents": len(self.lengths),
            "tokens": self.tokens,
        }
        write_atomic(self.directory / record["offsets_file"], _npy_bytes(offsets))
        os.replace(self._tmp, self.directory / record["tokens_file"])
        write_atomic(self.directory / f"{self.stem}.json", _json_bytes(record))
        return record

    def abort(self) -> None:
        """Drop the temporary file."""
        self._file.close()
        Path(self._tmp).unlink(missing_ok=True)


def _npy_bytes(array: npt.NDArray[Any]) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _json_bytes(data: Any) -> bytes:
    return (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode()


def read_marker(directory: Path, index: int) -> dict[str, Any] | None:
    """A finished shard's marker, or None if the shard is not (completely) there."""
    path = directory / f"{shard_stem(index)}.json"
    try:
        record: dict[str, Any] = json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return None
    for key in ("tokens_file", "offsets_file"):
        if not (directory / str(record.get(key))).is_file():
            return None
    return record


def remove_temporaries(directory: Path) -> None:
    """Delete temporary files left by killed workers (call when no worker is running)."""
    for path in directory.glob(f"{_TMP_PREFIX}*.tmp"):
        path.unlink(missing_ok=True)


def remove_shards_from(directory: Path, first: int) -> None:
    """Delete the files of shards ``first`` and above (left by an earlier, larger job)."""
    for path in directory.glob("shard-*"):
        number = path.name[len("shard-") :].split(".", 1)[0]
        if number.isdigit() and int(number) >= first:
            path.unlink(missing_ok=True)


@dataclass(frozen=True)
class ShardInfo:
    """One shard of the output, as the manifest lists it."""

    index: int
    tokens_file: str
    offsets_file: str
    documents: int
    tokens: int
    first_document: int
    sources: list[dict[str, Any]]


@dataclass(frozen=True)
class Manifest:
    """What :func:`~bytepair.distributed.tokenize` wrote; ``manifest.json`` in the folder."""

    directory: str
    encoding: dict[str, Any]
    dtype: str
    eot_token: int | None
    text_field: str
    sample_by: str
    inputs: list[dict[str, Any]]
    shards: list[ShardInfo]
    documents: int
    tokens: int
    job: str
    version: int = FORMAT_VERSION
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        del data["directory"]
        return data

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> Manifest:
        """Read ``manifest.json`` of a finished job."""
        path = Path(directory) / MANIFEST
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise FileNotFoundError(
                f"{path} not found: the job did not finish (run the same tokenize() call "
                "again to resume it) or this is not a tokenize() output folder"
            ) from None
        if data.get("version") != FORMAT_VERSION:
            raise ValueError(f"{path}: format version {data.get('version')}, expected 1")
        shards = [ShardInfo(**s) for s in data.pop("shards")]
        return cls(directory=str(directory), shards=shards, **data)

    def write(self) -> None:
        write_atomic(Path(self.directory) / MANIFEST, _json_bytes(self.to_json()))

    def open_shard(self, index: int, *, mmap: bool = True) -> Tokens:
        """The tokens and document offsets of one shard (memory-mapped by default)."""
        info = self.shards[index]
        root = Path(self.directory)
        tokens = np.load(root / info.tokens_file, mmap_mode="r" if mmap else None)
        offsets = np.load(root / info.offsets_file)
        if len(tokens) != info.tokens or len(offsets) != info.documents + 1:
            raise ValueError(f"{root / info.tokens_file}: does not match {MANIFEST}")
        return Tokens(tokens, offsets)


class Tokens(NamedTuple):
    """Token ids of documents, flat, and where each document starts.

    Document ``i`` is ``tokens[offsets[i]:offsets[i + 1]]``; ``len(offsets)`` is one more than
    the number of documents.
    """

    tokens: npt.NDArray[Any]
    offsets: npt.NDArray[np.uint64]

    @property
    def num_documents(self) -> int:
        return len(self.offsets) - 1

    def document(self, i: int) -> npt.NDArray[Any]:
        """The tokens of document ``i``."""
        if not 0 <= i < self.num_documents:
            raise IndexError(f"document {i} out of range (0..{self.num_documents - 1})")
        return self.tokens[int(self.offsets[i]) : int(self.offsets[i + 1])]

    def documents(self) -> Iterator[npt.NDArray[Any]]:
        """Each document's tokens, in order."""
        for i in range(self.num_documents):
            yield self.tokens[int(self.offsets[i]) : int(self.offsets[i + 1])]


def load_tokens(directory: str | os.PathLike[str], *, mmap: bool = True) -> Tokens:
    """Every document of a finished :func:`~bytepair.distributed.tokenize` job, in input order.

    With one shard and ``mmap=True`` the tokens stay memory-mapped; otherwise the shards are
    concatenated in memory (for large outputs iterate ``Manifest.load(d).open_shard(i)``).
    """
    manifest = Manifest.load(directory)
    parts = [manifest.open_shard(i, mmap=mmap) for i in range(len(manifest.shards))]
    if len(parts) == 1:
        return parts[0]
    dtype = np.dtype(manifest.dtype)
    if not parts:
        return Tokens(np.zeros(0, dtype), np.zeros(1, np.uint64))
    tokens = np.concatenate([p.tokens for p in parts]).astype(dtype, copy=False)
    offsets = [parts[0].offsets[:1]]
    base = np.uint64(0)
    for p in parts:
        offsets.append(p.offsets[1:] + base)
        base += np.uint64(len(p.tokens))
    return Tokens(tokens, np.concatenate(offsets))
