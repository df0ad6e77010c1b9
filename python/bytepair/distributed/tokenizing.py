"""``tokenize``: encode files into token shards, on local processes or a Ray cluster."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bytepair import _core
from bytepair._arguments import utf8_safe
from bytepair._progress import progress_bar
from bytepair.distributed import engines
from bytepair.distributed.engines import Engine, Workers, check_positive, worker_options
from bytepair.distributed.inputs import (
    SAMPLE_BY,
    Format,
    InputFile,
    Inputs,
    Reader,
    SampleBy,
    Shard,
    list_inputs,
    plan_shards,
)
from bytepair.distributed.shards import (
    FORMAT_VERSION,
    MANIFEST,
    Manifest,
    ShardInfo,
    ShardWriter,
    encoding_info,
    read_marker,
    remove_shards_from,
    remove_temporaries,
)
from bytepair.encoding import Encoding

DEFAULT_SHARD_SIZE = 64 << 20
_BATCH_CHARS = 1 << 20  # documents are encoded in batches of about this many characters


def resolve_dtype(encoding: Encoding, dtype: npt.DTypeLike | None) -> np.dtype[Any]:
    """``uint16`` if every id fits, else ``uint32``; a given dtype must hold every id."""
    if dtype is None:
        return np.dtype(np.uint16 if encoding.n_vocab <= 1 << 16 else np.uint32)
    resolved = np.dtype(dtype)
    if resolved.kind != "u" or resolved.itemsize not in (2, 4, 8):
        raise ValueError(f"dtype must be uint16, uint32 or uint64, got {resolved}")
    if encoding.n_vocab > 1 << (8 * resolved.itemsize):
        raise ValueError(
            f"dtype {resolved} cannot hold the ids of {encoding.name!r} (n_vocab "
            f"{encoding.n_vocab}); pass dtype=None (automatic) or 'uint32'"
        )
    little: np.dtype[Any] = resolved.newbyteorder("<")
    return little


def resolve_eot(encoding: Encoding, append_eot: bool | str) -> int | None:
    """The id appended after each document, or None."""
    if append_eot is False:
        return None
    name = "<|endoftext|>" if append_eot is True else append_eot
    if not isinstance(name, str):
        raise TypeError(f"append_eot is a bool or a special token's text, got {append_eot!r}")
    try:
        return encoding._special_tokens[name]
    except KeyError:
        known = ", ".join(repr(t) for t in sorted(encoding._special_tokens)[:5])
        raise ValueError(
            f"encoding {encoding.name!r} has no special token {name!r} to append after each "
            f"document; pass append_eot=False or the name of one of its special tokens "
            f"({known or 'it has none'})"
        ) from None


def fingerprint(**parts: Any) -> str:
    """A short hash of everything that decides a job's output."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def sources_id(files: Sequence[InputFile], shard: Shard) -> str:
    """A hash of what a shard reads: its pieces, and the names, sizes and times of their files.

    A finished shard is reused while this stays the same; edit an input and the shards reading
    it are made again.
    """
    parts = []
    for piece in shard.pieces:
        f = files[piece.file]
        parts.append([f.name, f.size, f.mtime_ns, f.format, f.compression, *piece[1:]])
    return fingerprint(shard=shard.index, pieces=parts)


def describe_piece(files: Sequence[InputFile], piece: tuple[int, int, int]) -> dict[str, Any]:
    f = files[piece[0]]
    if piece[2] == -1:
        return {"path": f.name}
    unit = "row_groups" if f.format == "parquet" else "bytes"
    return {"path": f.name, unit: [piece[1], piece[2]]}


@dataclass(frozen=True)
class RankEncodingFile:
    """A plain rank encoding as its ``.tiktoken`` bytes: a worker builds it from them several
    times faster than from the pickled dict of ranks."""

    name: str
    pat_str: str
    tiktoken: bytes
    special_tokens: dict[str, int]

    @classmethod
    def of(cls, encoding: Encoding) -> RankEncodingFile | None:
        if type(encoding) is not Encoding or type(encoding._core) is not _core.RankEncoder:
            return None  # a subclass or another model: pickled as it is
        data = encoding._core.to_tiktoken()
        return cls(encoding.name, encoding.pat_str, data, dict(encoding._special_tokens))

    def build(self) -> Encoding:
        """The encoding; the one this process built last if it is the same (a kept worker's
        next job with the same encoding builds nothing, and finds its caches warm)."""
        global _last_built
        if _last_built is not None and _last_built[0] == self:
            return _last_built[1]
        encoding = Encoding._from_tiktoken_bytes(
            self.tiktoken,
            name=self.name,
            pat_str=self.pat_str,
            special_tokens=self.special_tokens,
            source=f"the job's copy of {self.name!r}",
        )
        _last_built = (self, encoding)
        return encoding


_last_built: tuple[RankEncodingFile, Encoding] | None = None


@dataclass(frozen=True)
class TokenizeJob:
    """Encodes one shard into its files (the callable sent once to each worker)."""

    encoding: Encoding
    reader: Reader
    output_dir: str
    dtype: str
    eot: int | None
    job: str
    num_threads: int
    batch_chars: int = _BATCH_CHARS

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["encoding"] = RankEncodingFile.of(self.encoding) or self.encoding
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        if isinstance(state["encoding"], RankEncodingFile):
            state["encoding"] = state["encoding"].build()
        for key, value in state.items():
            object.__setattr__(self, key, value)

    def _array_encoder(self) -> Callable[[str], npt.NDArray[np.uint32]] | None:
        """Arrays straight from the core, when that is what the encoding's batch call does:
        on one thread, of a plain rank encoding (a subclass may do more in Python)."""
        plain = type(self.encoding).encode_ordinary_batch is Encoding.encode_ordinary_batch
        core = self.encoding._core
        if self.num_threads == 1 and plain and type(core) is _core.RankEncoder:
            return _ordinary_array(core)
        return None

    def __call__(self, shard: Shard) -> dict[str, Any]:
        writer = ShardWriter(Path(self.output_dir), shard.index, np.dtype(self.dtype))
        try:
            arrays = self._array_encoder()
            for batch in self.reader.batches(shard.pieces, self.batch_chars):
                if arrays is not None:
                    writer.add_arrays([arrays(text) for text in batch], self.eot)
                else:
                    ids = self.encoding.encode_ordinary_batch(batch, num_threads=self.num_threads)
                    writer.add(ids, self.eot)
            marker = {
                "shard": shard.index,
                "job": self.job,
                "sources_id": sources_id(self.reader.files, shard),
                "sources": [describe_piece(self.reader.files, p) for p in shard.pieces],
            }
            return writer.commit(marker)
        except BaseException:
            writer.abort()
            raise


def _ordinary_array(core: _core.RankEncoder) -> Callable[[str], npt.NDArray[np.uint32]]:
    """``encode_ordinary`` of one text, as an array: no Python int per id."""

    def encode(text: str) -> npt.NDArray[np.uint32]:
        try:
            return core.encode_to_numpy(text, None, None)
        except UnicodeEncodeError:  # a lone surrogate, repaired as encode_ordinary does
            return core.encode_to_numpy(utf8_safe(text), None, None)

    return encode


def tokenize(
    inputs: Inputs,
    encoding: Encoding,
    output_dir: str | os.PathLike[str],
    *,
    text_field: str = "text",
    engine: Engine | Workers = "ray",
    num_workers: int | None = None,
    append_eot: bool | str = True,
    dtype: npt.DTypeLike | None = None,
    shard_size: int = DEFAULT_SHARD_SIZE,
    sample_by: SampleBy = "document",
    format: Format | None = None,
    decode_errors: str = "strict",
    threads_per_worker: int | None = None,
    max_retries: int | None = None,
    show_progress: bool = True,
    overwrite: bool = False,
    filesystem: Any = None,
) -> Manifest:
    """Encode the documents of ``inputs`` into token shards in ``output_dir``.

    Args:
        inputs: files, folders or globs, local or URIs (``s3://...``); see
            :mod:`bytepair.distributed.inputs` for formats and what a document is.
        encoding: the :class:`~bytepair.Encoding`; sent to each worker once.
        output_dir: where shards and ``manifest.json`` go (on a cluster: storage every node
            mounts). One job at a time per folder.
        text_field: the JSON field or parquet column holding the text.
        engine: ``"ray"`` (the cluster ``RAY_ADDRESS`` names, or a local one), ``"local"``
            (processes on this machine, no Ray needed; they import the calling script, so call
            this under ``if __name__ == "__main__":``), both started for this call, or a
            :class:`~bytepair.distributed.Workers` already started (which then also sets
            ``num_workers``, ``threads_per_worker`` and ``max_retries``).
        num_workers: worker processes or actors (default: all CPUs, ``// threads_per_worker``);
            with ``engine="local"``, 0 runs in this process.
        append_eot: append ``<|endoftext|>`` after each document (``True``), nothing
            (``False``), or the special token named by a string (``"<|end_of_text|>"``).
        dtype: of the token files; default ``uint16`` if every id fits, else ``uint32``.
        shard_size: stored input bytes per shard (default 64 MiB): the unit of work, of
            output files and of what a crash loses.
        sample_by: for ``.txt`` files: ``"document"`` (a file is a document), ``"line"`` or
            ``"paragraph"``.
        format: ``"jsonl"``, ``"parquet"`` or ``"txt"`` for every input, overriding names.
        decode_errors: for bytes that are not UTF-8: ``"strict"`` (an error naming file and
            line), ``"replace"`` or ``"ignore"``.
        threads_per_worker: encoding threads (and CPUs reserved) per worker (default 1).
        max_retries: how often a worker that died is replaced and its shard retried (default
            3).
        show_progress: a progress bar over input bytes (needs ``tqdm``).
        overwrite: replace the output of a job with another encoding or other options in
            ``output_dir`` (else that is an error). A re-run of the same job after inputs were
            edited needs no flag: the shards that read them are made again.
        filesystem: a ``pyarrow.fs.FileSystem`` to read every input from.

    Returns:
        the :class:`~bytepair.distributed.Manifest`, also written to ``manifest.json``.

    A re-run of the same call skips the shards already finished (a crashed job resumes), and
    the output, document for document, is what encoding the inputs in one process gives:
    ``encoding.encode_ordinary(doc) + [eot]`` for each document in input order.
    """
    if not isinstance(encoding, Encoding):
        raise TypeError(f"encoding must be a bytepair.Encoding, got {type(encoding).__name__}")
    threads, retries = worker_options(engine, num_workers, threads_per_worker, max_retries)
    if sample_by not in SAMPLE_BY:
        raise ValueError(f"sample_by must be one of {SAMPLE_BY}, got {sample_by!r}")
    check_positive("shard_size", shard_size)
    "".encode("utf-8", errors=decode_errors)  # LookupError now for an unknown handler
    dt = resolve_dtype(encoding, dtype)
    eot = resolve_eot(encoding, append_eot)
    engines.start_local_workers(engine, num_workers)

    files = list_inputs(inputs, format=format, filesystem=filesystem)
    shards = plan_shards(files, shard_size, sample_by)
    info = encoding_info(encoding)
    job_id = fingerprint(
        version=FORMAT_VERSION,
        shard_size=shard_size,
        sample_by=sample_by,
        text_field=text_field,
        encoding=info,
        dtype=dt.str,
        eot=eot,
        decode_errors=decode_errors,
        format=format,
    )
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)

    # Reuse the finished shards of this job (same encoding and options) whose inputs have not
    # changed; refuse to touch the output of another job unless told to.
    different = (
        f"{out} holds the output of a different job (another encoding or other options); "
        "use another output_dir or pass overwrite=True"
    )
    existing = _existing_manifest(out)
    if existing is not None and existing.job != job_id and not overwrite:
        raise ValueError(different)
    records: dict[int, dict[str, Any]] = {}
    for shard in shards:
        marker = read_marker(out, shard.index)
        if marker is None:
            continue
        if marker.get("job") != job_id:
            if not overwrite:
                raise ValueError(different)
        elif marker.get("sources_id") == sources_id(files, shard):
            records[shard.index] = marker
    todo = [s for s in shards if s.index not in records]
    if todo:
        (out / MANIFEST).unlink(missing_ok=True)  # the folder is incomplete until the end
    job = TokenizeJob(
        encoding=encoding,
        reader=Reader(files, text_field, sample_by, decode_errors),
        output_dir=str(out.resolve()),
        dtype=dt.str,
        eot=eot,
        job=job_id,
        num_threads=threads,
    )
    total = sum(s.size for s in todo)
    with progress_bar("tokenizing", total, enabled=show_progress and bool(todo)) as advance:
        for i, record in engines.run(
            job,
            todo,
            engine=engine,
            num_workers=num_workers,
            threads_per_worker=threads,
            max_retries=retries,
        ):
            records[todo[i].index] = record
            if advance is not None:
                advance(todo[i].size)
    remove_temporaries(out)
    remove_shards_from(out, len(shards))  # of an earlier run over more inputs

    infos: list[ShardInfo] = []
    first = 0
    for shard in shards:
        r = records[shard.index]
        infos.append(
            ShardInfo(
                index=shard.index,
                tokens_file=r["tokens_file"],
                offsets_file=r["offsets_file"],
                documents=r["documents"],
                tokens=r["tokens"],
                first_document=first,
                sources=r["sources"],
            )
        )
        first += r["documents"]
    manifest = Manifest(
        directory=str(out),
        encoding=info,
        dtype=dt.name,
        eot_token=eot,
        text_field=text_field,
        sample_by=sample_by,
        inputs=[f.describe() for f in files],
        shards=infos,
        documents=first,
        tokens=sum(s.tokens for s in infos),
        job=job_id,
    )
    if manifest != existing:
        manifest.write()
    return manifest


def _existing_manifest(out: Path) -> Manifest | None:
    if not (out / MANIFEST).is_file():
        return None
    try:
        return Manifest.load(out)
    except (ValueError, TypeError, KeyError):
        return None
