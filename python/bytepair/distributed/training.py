"""``train``: count pieces as a map-reduce over shards, then learn merges on one node.

**Map.** Each shard is pre-tokenized and its pieces counted by a worker in a
:class:`bytepair._core.PieceCounter`; the worker returns ``counter.serialize_counts()``, the
shard's unique pieces with their counts in one bytes object. **Reduce.** The caller adds each
shard's counts into one counter as they arrive, in the core (``add_serialized_counts``: order
does not matter, counts are ``u64``). **Merge.** The merge loop runs on the calling node over
the aggregated counts, exactly as in :func:`bytepair.train`, so the merges are the same as
training on the same documents in one process.

Memory. The reduce and merge node holds the table of unique pieces, which grows more slowly
than the corpus (Heaps' law, unique pieces ~ K * size^beta, with beta below 1); the merge loop
needs a few times the counter's memory per unique piece (``benchmarks/bench_distributed.py``
measures both; the figures are in ``docs/performance.md``). Web-scale corpora can still reach
hundreds of millions of unique pieces. The map workers need only their own shard's table. To
bound the merge node, drop rare pieces between the phases (the
merges then approximate those of the full table)::

    counts = count_pieces(files, pattern="o200k", engine="ray")
    kept = _core.PieceCounter(counts.pattern)
    kept.add_counts([(piece, n) for piece, n in counts.items() if n >= 2])
    merges = kept.train(vocab_size, consume=True)
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from bytepair import _core
from bytepair._progress import progress_bar
from bytepair.distributed import engines
from bytepair.distributed.engines import Engine, Workers, check_positive, worker_options
from bytepair.distributed.inputs import (
    SAMPLE_BY,
    Format,
    Inputs,
    Reader,
    SampleBy,
    Shard,
    list_inputs,
    plan_shards,
)
from bytepair.distributed.tokenizing import DEFAULT_SHARD_SIZE
from bytepair.encoding import Encoding
from bytepair.patterns import resolve_pattern
from bytepair.train import TrainOptions

_BATCH_CHARS = 4 << 20


@dataclass(frozen=True)
class CountJob:
    """Counts the pieces of one shard (the callable sent once to each worker)."""

    pattern: str
    reader: Reader
    num_threads: int

    def __call__(self, shard: Shard) -> bytes:
        counter = _core.PieceCounter(self.pattern)
        for piece in shard.pieces:
            f = self.reader.files[piece.file]
            if (
                f.format == "txt"
                and self.reader.sample_by == "document"
                and f.fs is None
                and f.compression is None
                and self.reader.decode_errors == "strict"
            ):
                # A local file that is one document: Rust reads it in blocks (bounded memory),
                # exactly as bytepair.train(files=...) does.
                counter.add_file(f.path, self.num_threads)
                continue
            for batch in self.reader.batches([piece], _BATCH_CHARS):
                counter.add_texts(batch, self.num_threads)
        # One bytes object, not items(): a list of tuples costs more to build, pickle and
        # add up in the caller than counting the shard did.
        return counter.serialize_counts()


def count_pieces(
    inputs: Inputs,
    *,
    pattern: str = "o200k",
    engine: Engine | Workers = "ray",
    num_workers: int | None = None,
    text_field: str = "text",
    sample_by: SampleBy = "document",
    format: Format | None = None,
    shard_size: int = DEFAULT_SHARD_SIZE,
    decode_errors: str = "strict",
    threads_per_worker: int | None = None,
    max_retries: int | None = None,
    show_progress: bool = True,
    filesystem: Any = None,
) -> _core.PieceCounter:
    """The map-reduce phase alone: the pieces of ``inputs`` counted across workers.

    The arguments are those of :func:`train` (inputs and documents as in
    :func:`~bytepair.distributed.tokenize`). The returned counter can be trained
    (``counter.train(...)``), merged with others, or inspected (``len``, ``items()``).
    """
    threads, retries = worker_options(engine, num_workers, threads_per_worker, max_retries)
    if sample_by not in SAMPLE_BY:
        raise ValueError(f"sample_by must be one of {SAMPLE_BY}, got {sample_by!r}")
    check_positive("shard_size", shard_size)
    "".encode("utf-8", errors=decode_errors)
    pat = resolve_pattern(pattern)
    total = _core.PieceCounter(pat)  # also checks the pattern before any work starts
    engines.start_local_workers(engine, num_workers)
    files = list_inputs(inputs, format=format, filesystem=filesystem)
    shards = plan_shards(files, shard_size, sample_by)
    job = CountJob(pat, Reader(files, text_field, sample_by, decode_errors), threads)
    size = sum(s.size for s in shards)
    with progress_bar("counting", size, enabled=show_progress) as advance:
        for i, counts in engines.run(
            job,
            shards,
            engine=engine,
            num_workers=num_workers,
            threads_per_worker=threads,
            max_retries=retries,
        ):
            total.add_serialized_counts(counts)
            if advance is not None:
                advance(shards[i].size)
    return total


def train(
    inputs: Inputs,
    *,
    vocab_size: int,
    pattern: str = "o200k",
    special_tokens: Iterable[str] | None = None,
    engine: Engine | Workers = "ray",
    num_workers: int | None = None,
    text_field: str = "text",
    sample_by: SampleBy = "document",
    format: Format | None = None,
    shard_size: int = DEFAULT_SHARD_SIZE,
    min_frequency: int = 0,
    tie_break: Literal["bytepair", "hf"] = "bytepair",
    name: str = "trained",
    decode_errors: str = "strict",
    threads_per_worker: int | None = None,
    merge_threads: int | None = None,
    max_retries: int | None = None,
    show_progress: bool = True,
    filesystem: Any = None,
) -> Encoding:
    """Train a byte-level BPE :class:`~bytepair.Encoding` on files, counting on many workers.

    ``vocab_size``, ``pattern``, ``special_tokens``, ``min_frequency``, ``tie_break`` and
    ``name`` mean what they mean in :func:`bytepair.train`; the inputs and workers what they
    mean in :func:`~bytepair.distributed.tokenize`. ``merge_threads`` are the threads of the
    merge loop on this node (default: all its cores). The merges are those of
    :func:`bytepair.train` on the same documents (for ``.txt`` files read whole, those of
    ``bytepair.train(files=...)``).
    """
    options = TrainOptions(
        vocab_size=vocab_size,
        pattern=pattern,
        special_tokens=special_tokens,  # type: ignore[arg-type]  # checked and made a tuple
        min_frequency=min_frequency,
        tie_break=tie_break,
        name=name,
    )
    threads = (os.cpu_count() or 1) if merge_threads is None else merge_threads
    check_positive("merge_threads", threads)

    counter = count_pieces(
        inputs,
        pattern=pattern,
        engine=engine,
        num_workers=num_workers,
        text_field=text_field,
        sample_by=sample_by,
        format=format,
        shard_size=shard_size,
        decode_errors=decode_errors,
        threads_per_worker=threads_per_worker,
        max_retries=max_retries,
        show_progress=show_progress,
        filesystem=filesystem,
    )
    return options.learn(counter, threads, show_progress=show_progress)
