"""Inputs: which files a job reads, how they are cut into shards, and the documents of each.

What a document is, by format (chosen by the file name; ``format=`` overrides it):

- ``.jsonl`` / ``.ndjson``: one JSON object per line; the document is the string
  ``obj[text_field]``. Blank lines are skipped; any other line must be such an object.
- ``.parquet``: the string column ``text_field``, a document per row (nulls are errors).
- ``.txt`` (any other file with ``format="txt"``), by ``sample_by``:

  - ``"document"`` (the default): the whole file is one document, exactly as stored. This is
    the faithful choice for a folder of books, articles or source files: no text is dropped
    and end-of-text tokens land only between files.
  - ``"line"``: each non-blank line is a document, without its line ending (``\\n`` or
    ``\\r\\n``), as Hugging Face's ``text`` loader and Ray Data's ``read_text`` read files.
  - ``"paragraph"``: each run of non-blank lines is a document: the text from the start of its
    first line to the end of its last, line endings inside kept as stored, the last one
    dropped. Blank lines (empty or only ASCII whitespace) separate documents.

Lines end at ``\\n`` only. Files are UTF-8 (``decode_errors="replace"`` accepts bad bytes);
JSON strings may hold lone surrogates, which encoding repairs as tiktoken does. Files ending in
``.gz``, ``.bz2``, ``.zst`` or ``.lz4`` are decompressed on the fly and read whole.

**Shards.** Files are taken in the order given (a folder or glob expands to its files in sorted
order) and cut into shards of about ``shard_size`` stored bytes: small files are grouped, and a
large ``.jsonl`` or line/paragraph ``.txt`` file is cut at byte offsets, a large parquet file
at row groups. A document belongs to the shard that holds the first byte of its first line, so
every document is read exactly once, and the plan depends only on the inputs' names and sizes:
re-running a job plans the same shards. Shards in order hold the documents in input order.

Paths are local, or URIs of any filesystem pyarrow opens (``s3://``, ``gs://``, ``hdfs://``,
...; or pass ``filesystem=``), the filesystems Ray Data reads.
"""

from __future__ import annotations

import bz2
import fnmatch
import glob
import gzip
import io
import itertools
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any, Literal, NamedTuple, cast

from bytepair.distributed._deps import require_pyarrow

Format = Literal["txt", "jsonl", "parquet"]
SampleBy = Literal["document", "line", "paragraph"]
PathLike = str | os.PathLike[str]
Inputs = PathLike | Iterable[PathLike]

FORMATS: dict[str, Format] = {
    ".txt": "txt",
    ".text": "txt",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
}
COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd", ".lz4": "lz4"}
SAMPLE_BY = ("document", "line", "paragraph")
_GLOB_MAGIC = ("*", "?", "[")
_WHITESPACE = b" \t\n\r\x0b\x0c"  # what bytes.strip() strips: a line of these is blank
_BLANK = _WHITESPACE.decode()
_JSON_SPACE = " \t\n\r"  # the whitespace json.loads allows around a value
_BUFFER = 1 << 20
# json's own C scanner, called once per line: json.loads adds three Python frames and two
# regex matches around the same call, most of the time of a short line.
_scan_json = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[attr-defined]


class InputError(ValueError):
    """An input that cannot be read as documents; the message names the file and line or row."""


@dataclass(frozen=True)
class InputFile:
    """One input file: its name as given, where to read it, its stored size and format."""

    name: str
    path: str
    size: int
    format: Format
    compression: str | None = None
    fs: Any = None  # a pyarrow FileSystem, or None for the local filesystem
    mtime_ns: int | None = None

    def describe(self) -> dict[str, Any]:
        """What the manifest records of this file."""
        return {"path": self.name, "size": self.size, "format": self.format}


class Piece(NamedTuple):
    """Part of one file: bytes ``[start, end)`` (lines starting there), row groups
    ``[start, end)`` of a parquet file, or the whole file (``end == -1``)."""

    file: int
    start: int
    end: int


@dataclass(frozen=True)
class Shard:
    """The unit of work and of output: consecutive pieces, and their stored size in bytes."""

    index: int
    pieces: tuple[Piece, ...]
    size: int


# ---- listing -------------------------------------------------------------------------------


def _has_scheme(name: str) -> bool:
    scheme, sep, _ = name.partition("://")
    return bool(sep) and scheme.isidentifier() and len(scheme) > 1


def _detect(name: str, format: Format | None) -> tuple[Format | None, str | None]:
    base = name.rsplit("/", 1)[-1].lower()
    stem, ext = os.path.splitext(base)
    compression = COMPRESSIONS.get(ext)
    if compression is not None:
        ext = os.path.splitext(stem)[1]
    return (format or FORMATS.get(ext)), compression


def _input_file(
    name: str, path: str, size: int, fs: Any, format: Format | None, mtime_ns: int | None
) -> InputFile:
    fmt, compression = _detect(path, format)
    if fmt is None:
        raise InputError(
            f"{name}: cannot tell the format from the name; use .jsonl, .parquet or .txt "
            "(optionally .gz/.zst/...) or pass format='jsonl', 'parquet' or 'txt'"
        )
    return InputFile(name, path, size, fmt, compression, fs, mtime_ns)


def _local_file(name: str, format: Format | None) -> InputFile:
    st = os.stat(name)
    return _input_file(name, os.path.abspath(name), st.st_size, None, format, st.st_mtime_ns)


def _known(path: str, format: Format | None) -> bool:
    return format is not None or _detect(path, None)[0] is not None


def _glob_match(pattern: list[str], parts: list[str]) -> bool:
    """Whether path ``parts`` match glob ``pattern`` parts, ``**`` matching any number."""
    if not pattern:
        return not parts
    if pattern[0] == "**":
        return any(_glob_match(pattern[1:], parts[i:]) for i in range(len(parts) + 1))
    return (
        bool(parts)
        and fnmatch.fnmatchcase(parts[0], pattern[0])
        and (_glob_match(pattern[1:], parts[1:]))
    )


def _list_local(name: str, format: Format | None) -> list[InputFile]:
    if os.path.isfile(name):
        return [_local_file(name, format)]
    if os.path.isdir(name):
        found = sorted(os.path.join(root, f) for root, _, files in os.walk(name) for f in files)
        paths = [p for p in found if _known(p, format) and not os.path.basename(p).startswith(".")]
    elif any(c in name for c in _GLOB_MAGIC):
        paths = [p for p in sorted(glob.glob(name, recursive=True)) if os.path.isfile(p)]
    else:
        raise FileNotFoundError(f"no such file or folder: {name!r}")
    if not paths:
        raise FileNotFoundError(f"no input file in {name!r}")
    return [_local_file(p, format) for p in paths]


def _list_remote(name: str, fs: Any, path: str, format: Format | None) -> list[InputFile]:
    pafs = require_pyarrow("reading from a filesystem other than the local one", "pyarrow.fs")
    info = fs.get_file_info(path)
    if info.type == pafs.FileType.File:
        return [_input_file(name, path, info.size, fs, format, info.mtime_ns)]
    if info.type == pafs.FileType.Directory:
        base, pattern = path.rstrip("/"), None
    elif any(c in path for c in _GLOB_MAGIC):
        head = path[: min(path.find(c) for c in _GLOB_MAGIC if c in path)]
        base, pattern = head.rsplit("/", 1)[0] if "/" in head else "", path.split("/")
    else:
        raise FileNotFoundError(f"no such file or folder: {name!r}")
    selector = pafs.FileSelector(base, recursive=True, allow_not_found=True)
    found = sorted(
        (i for i in fs.get_file_info(selector) if i.type == pafs.FileType.File),
        key=lambda i: i.path,
    )
    if pattern is None:
        found = [i for i in found if _known(i.path, format)]
    else:
        found = [i for i in found if _glob_match(pattern, i.path.split("/"))]
    if not found:
        raise FileNotFoundError(f"no input file in {name!r}")
    prefix = name[: len(name) - len(path)] if name.endswith(path) else ""
    return [_input_file(prefix + i.path, i.path, i.size, fs, format, i.mtime_ns) for i in found]


def list_inputs(
    inputs: Inputs, *, format: Format | None = None, filesystem: Any = None
) -> list[InputFile]:
    """The input files, in order: each path as given, folders and globs expanded and sorted.

    A folder yields the files in it (recursively) whose names have a known format.
    """
    if format is not None and format not in ("txt", "jsonl", "parquet"):
        raise ValueError(f"format must be 'txt', 'jsonl', 'parquet' or None, got {format!r}")
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    files: list[InputFile] = []
    for item in inputs:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"inputs are paths (str or os.PathLike), got {type(item).__name__}")
        name = os.fspath(item)
        if filesystem is not None:
            files.extend(_list_remote(name, filesystem, name, format))
        elif _has_scheme(name) and not name.startswith("file://"):
            pafs = require_pyarrow(f"reading {name}", "pyarrow.fs")
            fs, path = pafs.FileSystem.from_uri(name)
            files.extend(_list_remote(name, fs, path, format))
        else:
            files.extend(_list_local(name.removeprefix("file://"), format))
    if not files:
        raise ValueError("no inputs given")
    return files


# ---- planning ------------------------------------------------------------------------------


def _splittable(f: InputFile, sample_by: SampleBy) -> bool:
    if f.compression is not None:
        return False
    return f.format == "jsonl" or f.format == "parquet" or sample_by != "document"


def _row_group_sizes(f: InputFile) -> list[int]:
    pq = require_pyarrow(f"reading {f.name}", "pyarrow.parquet")
    with _open_raw(f) as raw:
        meta = pq.ParquetFile(raw).metadata
    return [
        sum(rg.column(c).total_compressed_size for c in range(rg.num_columns))
        for rg in (meta.row_group(i) for i in range(meta.num_row_groups))
    ]


def _cut(f: InputFile, i: int, shard_size: int) -> list[tuple[Piece, int]]:
    """Pieces of about ``shard_size`` bytes of a large file, with their sizes."""
    if f.format == "parquet":
        sizes = _row_group_sizes(f)
        pieces: list[tuple[Piece, int]] = []
        start, acc = 0, 0
        for g, size in enumerate(sizes):
            if acc and acc + size > shard_size:
                pieces.append((Piece(i, start, g), acc))
                start, acc = g, 0
            acc += size
        pieces.append((Piece(i, start, len(sizes)), acc))
        return pieces
    n = -(-f.size // shard_size)
    cuts = [f.size * k // n for k in range(n + 1)]
    return [(Piece(i, a, b), b - a) for a, b in itertools.pairwise(cuts)]


def plan_shards(files: Sequence[InputFile], shard_size: int, sample_by: SampleBy) -> list[Shard]:
    """Cut the files into shards of about ``shard_size`` stored bytes, in input order."""
    shards: list[Shard] = []
    group: list[Piece] = []
    group_size = 0

    def flush() -> None:
        nonlocal group, group_size
        if group:
            shards.append(Shard(len(shards), tuple(group), group_size))
            group, group_size = [], 0

    for i, f in enumerate(files):
        if f.size > shard_size and _splittable(f, sample_by):
            flush()
            for piece, size in _cut(f, i, shard_size):
                shards.append(Shard(len(shards), (piece,), size))
            continue
        if group and group_size + f.size > shard_size:
            flush()
        group.append(Piece(i, 0, -1))
        group_size += f.size
    flush()
    return shards


# ---- reading -------------------------------------------------------------------------------


def _open_raw(f: InputFile) -> IO[bytes]:
    """A seekable binary file (not for compressed files)."""
    if f.fs is None:
        return open(f.path, "rb", buffering=_BUFFER)
    return io.BufferedReader(f.fs.open_input_file(f.path), _BUFFER)


def _open_stream(f: InputFile) -> IO[bytes]:
    """The file's bytes, decompressed, from the start."""
    if f.compression is None:
        return _open_raw(f)
    if f.fs is None and f.compression == "gzip":
        return cast(IO[bytes], gzip.open(f.path, "rb"))
    if f.fs is None and f.compression == "bz2":
        return cast(IO[bytes], bz2.open(f.path, "rb"))
    pa = require_pyarrow(f"reading {f.name}")
    if f.fs is None:
        stream = pa.input_stream(f.path, compression=f.compression)
    else:
        stream = f.fs.open_input_stream(f.path, compression=f.compression)
    return io.BufferedReader(stream, _BUFFER)


def _lines_from(f: IO[bytes], start: int) -> Iterator[tuple[int, bytes]]:
    """``(offset, line)`` for every line that starts at or after ``start``."""
    pos = 0  # (a compressed stream cannot tell() its position: it is always read from 0)
    if start > 0:
        f.seek(start - 1)
        f.readline()  # the rest of the line holding byte start - 1 (just "\n" if it ends there)
        pos = f.tell()
    for line in iter(f.readline, b""):
        yield pos, line
        pos += len(line)


def _line_blocks(f: IO[bytes], start: int, end: int) -> Iterator[tuple[int, bytes]]:
    """``(offset, block)``: the lines that start in ``[start, end)`` (``end`` -1: to the end of
    the file), in blocks of whole lines of about ``_BUFFER`` bytes."""
    pos = 0
    if start > 0:
        f.seek(start - 1)
        f.readline()  # as in _lines_from: the line holding byte start - 1 is not ours
        pos = f.tell()
    while end < 0 or pos < end:
        block = f.read(_BUFFER if end < 0 else min(_BUFFER, end - pos))
        if not block:
            return
        if not block.endswith(b"\n"):
            block += f.readline()  # the last line started before the limit: it is ours
        yield pos, block
        pos += len(block)


def _split_lines(pos: int, block: bytes) -> Iterator[tuple[int, bytes]]:
    """``(offset, line)`` for each line of ``block``, which starts at offset ``pos``."""
    begin = 0
    while begin < len(block):
        stop = block.find(b"\n", begin) + 1 or len(block)
        yield pos + begin, block[begin:stop]
        begin = stop


def _strip_eol(line: bytes) -> bytes:
    if line.endswith(b"\r\n"):
        return line[:-2]
    return line[:-1] if line.endswith(b"\n") else line


def _line_before_is_blank(f: IO[bytes], start: int) -> bool:
    """Whether the line ending just before offset ``start`` (a line start) is blank."""
    pos = start - 1  # the "\n" that ends that line
    while pos > 0:
        size = min(pos, 1 << 12)
        f.seek(pos - size)
        chunk = f.read(size)
        for j in range(len(chunk) - 1, -1, -1):
            byte = chunk[j]
            if byte == 0x0A:
                return True
            if byte not in _WHITESPACE:
                return False
        pos -= size
    return True


@dataclass(frozen=True)
class Reader:
    """Reads the documents of pieces of ``files`` (see the module docs)."""

    files: Sequence[InputFile]
    text_field: str = "text"
    sample_by: SampleBy = "document"
    decode_errors: str = "strict"

    def documents(self, piece: Piece) -> Iterator[str]:
        """The documents of one piece, in order."""
        f = self.files[piece.file]
        if f.format == "parquet":
            yield from self._parquet(f, piece)
            return
        if f.format == "txt" and self.sample_by == "document":
            with _open_stream(f) as stream:
                data = stream.read()
            yield self._decode(f, data, 0, data)
            return
        whole = piece.end == -1
        with _open_stream(f) as stream:
            start, end = (0, -1) if whole else (piece.start, piece.end)
            if f.format == "jsonl":
                for pos, block in _line_blocks(stream, start, end):
                    texts = self._json_block(block)
                    if texts is None:  # something to report: line by line, for its message
                        texts = [
                            self._json_text(f, at, line)
                            for at, line in _split_lines(pos, block)
                            if line.strip()
                        ]
                    yield from texts
            elif self.sample_by == "line":
                for pos, line in self._owned_lines(stream, start, end):
                    content = _strip_eol(line)
                    if content.strip():
                        yield self._decode(f, content, pos, content)
            else:
                yield from self._paragraphs(f, stream, start, end)

    def batches(self, pieces: Iterable[Piece], batch_chars: int) -> Iterator[list[str]]:
        """The documents of ``pieces`` in order, in lists of about ``batch_chars`` characters."""
        batch: list[str] = []
        size = 0
        for piece in pieces:
            for doc in self.documents(piece):
                batch.append(doc)
                size += len(doc)
                if size >= batch_chars:
                    yield batch
                    batch, size = [], 0
        if batch:
            yield batch

    # -- formats ---------------------------------------------------------------------------

    @staticmethod
    def _owned_lines(stream: IO[bytes], start: int, end: int) -> Iterator[tuple[int, bytes]]:
        for pos, line in _lines_from(stream, start):
            if 0 <= end <= pos:
                return
            yield pos, line

    def _paragraphs(self, f: InputFile, stream: IO[bytes], start: int, end: int) -> Iterator[str]:
        lines = _lines_from(stream, start)
        first = next(lines, None)
        if first is None:
            return
        # Inside a paragraph that began in an earlier piece: its lines are not ours.
        in_paragraph = first[0] > 0 and not _line_before_is_blank(stream, first[0])
        if first[0] > 0:
            stream.seek(first[0] + len(first[1]))
        mine = False
        begin = 0
        parts: list[bytes] = []
        for pos, line in _chain_first(first, lines):
            if not line.strip():
                if mine:
                    yield self._paragraph(f, begin, parts)
                in_paragraph = mine = False
                parts = []
                if 0 <= end <= pos:
                    return
                continue
            if not in_paragraph:
                if 0 <= end <= pos:
                    return
                in_paragraph = mine = True
                begin = pos
            if mine:
                parts.append(line)
        if mine:
            yield self._paragraph(f, begin, parts)

    def _paragraph(self, f: InputFile, begin: int, parts: list[bytes]) -> str:
        data = _strip_eol(b"".join(parts))
        return self._decode(f, data, begin, data)

    def _json_block(self, block: bytes) -> list[str] | None:
        """The texts of a block of JSON Lines, or None where a line is anything but an object
        holding a string at ``text_field`` (blank lines skipped), which :meth:`_json_text`
        then reports."""
        try:
            text = block.decode("utf-8", errors=self.decode_errors)
        except UnicodeDecodeError:
            return None
        field, texts = self.text_field, []
        # Lines end at "\n" only (str.splitlines would also cut at "\x1c", "\u2028", ...).
        for line in text.split("\n"):
            if not line.strip(_BLANK):
                continue
            try:
                obj, stop = _scan_json(line, 0)
            except (StopIteration, ValueError):
                return None
            if stop != len(line) and line[stop:].strip(_JSON_SPACE):
                return None
            value = obj.get(field) if type(obj) is dict else None
            if type(value) is not str:
                return None
            texts.append(value)
        return texts

    def _json_text(self, f: InputFile, pos: int, line: bytes) -> str:
        text = self._decode(f, line, pos, line)
        try:
            obj = json.loads(text)
        except ValueError as e:
            raise self._error(f, pos, f"not valid JSON ({e})") from None
        if not isinstance(obj, dict):
            raise self._error(f, pos, f"expected a JSON object, got {type(obj).__name__}")
        try:
            value = obj[self.text_field]
        except KeyError:
            fields = ", ".join(repr(k) for k in list(obj)[:12])
            raise self._error(
                f, pos, f"no field {self.text_field!r} (fields: {fields}); pass text_field="
            ) from None
        if not isinstance(value, str):
            raise self._error(
                f, pos, f"field {self.text_field!r} is {type(value).__name__}, not a string"
            )
        return value

    def _parquet(self, f: InputFile, piece: Piece) -> Iterator[str]:
        pa = require_pyarrow(f"reading {f.name}")
        pq = require_pyarrow(f"reading {f.name}", "pyarrow.parquet")
        with _open_raw(f) as raw:
            pf = pq.ParquetFile(raw)
            schema = pf.schema_arrow
            if self.text_field not in schema.names:
                names = ", ".join(repr(n) for n in schema.names[:12])
                raise InputError(
                    f"{f.name}: no column {self.text_field!r} (columns: {names}); pass text_field="
                )
            kind = schema.field(self.text_field).type
            if not (
                pa.types.is_string(kind)
                or pa.types.is_large_string(kind)
                or getattr(pa.types, "is_string_view", lambda _: False)(kind)
            ):
                raise InputError(f"{f.name}: column {self.text_field!r} is {kind}, not strings")
            meta = pf.metadata
            groups = range(meta.num_row_groups) if piece.end == -1 else range(*piece[1:])
            row = sum(meta.row_group(g).num_rows for g in range(groups.start))
            batches = pf.iter_batches(
                batch_size=4096, row_groups=list(groups), columns=[self.text_field]
            )
            for batch in batches:
                column = batch.column(0)
                values = column.to_pylist()
                if column.null_count:
                    bad = row + next(i for i, v in enumerate(values) if v is None)
                    raise InputError(
                        f"{f.name}: row {bad}: {self.text_field!r} is null (rows count from 0)"
                    )
                yield from values
                row += len(values)

    # -- errors ----------------------------------------------------------------------------

    def _decode(self, f: InputFile, data: bytes, pos: int, where: bytes) -> str:
        try:
            return data.decode("utf-8", errors=self.decode_errors)
        except UnicodeDecodeError as e:
            at = pos + e.start
            line = _line_number(f, pos) + where.count(b"\n", 0, e.start)
            raise InputError(
                f"{f.name}:{line}: not valid UTF-8 (byte {at}); fix the file or pass "
                "decode_errors='replace'"
            ) from None

    def _error(self, f: InputFile, pos: int, message: str) -> InputError:
        return InputError(f"{f.name}:{_line_number(f, pos)}: {message}")


def _chain_first(
    first: tuple[int, bytes], rest: Iterator[tuple[int, bytes]]
) -> Iterator[tuple[int, bytes]]:
    yield first
    yield from rest


def _line_number(f: InputFile, pos: int) -> int:
    """The 1-based line number of byte ``pos`` (read again from the start: errors only)."""
    newlines = 0
    with _open_stream(f) as stream:
        left = pos
        while left > 0:
            chunk = stream.read(min(left, _BUFFER))
            if not chunk:
                break
            newlines += chunk.count(b"\n")
            left -= len(chunk)
    return newlines + 1
