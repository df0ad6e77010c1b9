"""Train a byte-level BPE vocabulary: fast, deterministic, parallel, in bounded memory.

Training has two phases, both in Rust with the GIL released:

1. **Count** the pieces of the corpus (:func:`count_pieces`): pre-tokenize with the pattern and
   count each distinct piece, in parallel on ``num_threads`` threads.
2. **Merge**: repeatedly merge the pair of adjacent tokens with the highest count, ties going to
   the smallest pair of ids, until the vocabulary has ``vocab_size`` tokens.

The merges are those of rustbpe and of the pure-Python :func:`bytepair.reference.train`, or
with ``tie_break="hf"`` those of Hugging Face's ``BpeTrainer`` (see :func:`train`).

What the source can be (a plain ``str`` is always text, never a file name):

- ``str``: one text (a document);
- ``os.PathLike`` (e.g. :class:`pathlib.Path`): a UTF-8 file, or a glob such as
  ``Path("data/*.txt")`` when no file of that name exists;
- an iterable (list, generator, ...) whose items are ``str`` (each one document; read in
  batches, so a generator over terabytes is fine) or ``os.PathLike`` files;
- ``files=``: file names or globs as ``str`` or ``os.PathLike`` (one or a list), for when the
  names are strings.

A piece never spans two documents. Long texts and files are cut into blocks to count them in
parallel and in bounded memory; with the built-in patterns the cuts are placed where they cannot
change any piece (after a line break before a letter or digit, or before a space between two
letters), so a file gives exactly the pieces of its whole text. Only a megabyte of text with no
such place is cut at a character boundary. With a custom pattern an in-memory text is never cut,
and a file is cut just after line breaks (a piece of a custom pattern that would run across a
line break at a block's end is split there). Files are decoded as UTF-8 with line endings kept as
they are (no ``\\r\\n`` translation).

>>> enc = train(["low lower lowest", "new newer newest"] * 10, vocab_size=270, pattern="gpt2",
...             show_progress=False)
>>> [enc.decode_single_token_bytes(i) for i in range(256, 262)]
[b'we', b'lo', b'ne', b' lo', b' ne', b'st']
>>> enc.decode(enc.encode("slowest newer"))
'slowest newer'
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Union

from bytepair import _core
from bytepair._progress import Progress, progress_bar
from bytepair.encoding import Encoding
from bytepair.patterns import resolve_pattern

__all__ = ["TrainOptions", "count_pieces", "merges_to_ranks", "train"]

PathArg = Union[str, "os.PathLike[str]"]
Source = Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]

_BATCH_BYTES = 8 << 20  # texts from an iterable are handed to Rust in batches of about this size
_BATCH_ITEMS = 1 << 16
_GLOB_MAGIC = ("*", "?", "[")


def _threads(num_threads: int | None) -> int:
    if num_threads is None:
        return os.cpu_count() or 1
    if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
        raise ValueError(f"num_threads must be a positive int or None, got {num_threads!r}")
    return num_threads


def _expand_path(path: PathArg) -> list[str]:
    """The files a path names: itself, or the matches of a glob (sorted)."""
    name = os.fspath(path)
    if os.path.isfile(name):
        return [name]
    if os.path.isdir(name):
        raise ValueError(
            f"{name!r} is a directory; pass a glob such as {os.path.join(name, '**', '*.txt')!r}"
        )
    if any(c in name for c in _GLOB_MAGIC):
        matches = [m for m in sorted(glob.glob(name, recursive=True)) if os.path.isfile(m)]
        if matches:
            return matches
        raise FileNotFoundError(f"no file matches {name!r}")
    raise FileNotFoundError(f"no such file: {name!r}")


def _file_list(files: PathArg | Iterable[PathArg] | None) -> list[str]:
    if files is None:
        return []
    if isinstance(files, (str, os.PathLike)):
        files = [files]
    out: list[str] = []
    for f in files:
        if not isinstance(f, (str, os.PathLike)):
            raise TypeError(f"files= takes paths (str or os.PathLike), got {type(f).__name__}")
        out.extend(_expand_path(f))
    return out


def _feed(
    counter: _core.PieceCounter, source: Source, threads: int, progress: Progress | None
) -> None:
    if isinstance(source, str):
        counter.add_text(source, threads, progress)
        return
    if isinstance(source, os.PathLike):
        for f in _expand_path(source):
            counter.add_file(f, threads, progress)
        return
    if isinstance(source, (bytes, bytearray, memoryview)) or not isinstance(source, Iterable):
        raise TypeError(
            "source must be a str (a text), an os.PathLike (a file or glob) or an iterable of "
            f"them, got {type(source).__name__}"
            + ("; decode bytes to str first" if isinstance(source, (bytes, bytearray)) else "")
        )
    batch: list[str] = []
    size = 0
    for i, item in enumerate(source):
        if isinstance(item, str):
            batch.append(item)
            size += len(item)
            if size >= _BATCH_BYTES or len(batch) >= _BATCH_ITEMS:
                counter.add_texts(batch, threads, progress)
                batch, size = [], 0
        elif isinstance(item, os.PathLike):
            for f in _expand_path(item):
                counter.add_file(f, threads, progress)
        else:
            raise TypeError(
                f"item {i} of source is a {type(item).__name__}; expected str (a text) "
                "or os.PathLike (a file)"
            )
    if batch:
        counter.add_texts(batch, threads, progress)


def count_pieces(
    source: Source | None = None,
    *,
    pattern: str = "o200k",
    files: PathArg | Iterable[PathArg] | None = None,
    num_threads: int | None = None,
    show_progress: bool = False,
) -> _core.PieceCounter:
    """Phase 1: count the distinct pieces of a corpus (see the module docs for ``source``).

    The returned :class:`bytepair._core.PieceCounter` can take more text (``add_texts``,
    ``add_file``), be merged with counters built elsewhere (``merge_counts``, or
    ``add_counts(other.items())`` after shipping the items), and learn merges (``train``).

    >>> counter = count_pieces(["the cat", "the dog"], pattern="gpt2")
    >>> counter.items()
    [(b'the', 2), (b' cat', 1), (b' dog', 1)]
    """
    counter = _core.PieceCounter(resolve_pattern(pattern))
    threads = _threads(num_threads)
    paths = _file_list(files)
    total = _known_size(source, paths) if show_progress else None
    with progress_bar("counting", total, enabled=show_progress) as progress:
        if source is not None:
            _feed(counter, source, threads, progress)
        for f in paths:
            counter.add_file(f, threads, progress)
    return counter


def _known_size(source: Source | None, paths: list[str]) -> int | None:
    """The bytes to count when they are known up front (files; a path source), so that the
    progress bar shows a percentage and the time left; None for texts and iterables."""
    if isinstance(source, os.PathLike):
        paths = [*_expand_path(source), *paths]
    elif source is not None:
        return None
    try:
        return sum(os.path.getsize(f) for f in paths)
    except OSError:
        return None  # the counting reports the missing file


def merges_to_ranks(merges: Iterable[tuple[int, int]]) -> dict[bytes, int]:
    """The ``mergeable_ranks`` of merges: the 256 single bytes, then one token per merge.

    >>> merges_to_ranks([(104, 105), (256, 33)]) == {bytes([b]): b for b in range(256)} | {
    ...     b"hi": 256, b"hi!": 257}
    True
    """
    tokens = [bytes([b]) for b in range(256)]
    for left, right in merges:
        tokens.append(tokens[left] + tokens[right])
    ranks = {token: rank for rank, token in enumerate(tokens)}
    if len(ranks) != len(tokens):  # impossible for merges learned by BPE (see merges.rs)
        raise ValueError("two merges make the same bytes")
    return ranks


def train(
    source: Source | None = None,
    *,
    vocab_size: int,
    pattern: str = "o200k",
    special_tokens: Iterable[str] | None = None,
    min_frequency: int = 0,
    show_progress: bool = True,
    num_threads: int | None = None,
    tie_break: Literal["bytepair", "hf"] = "bytepair",
    name: str = "trained",
    files: PathArg | Iterable[PathArg] | None = None,
) -> Encoding:
    """Train a byte-level BPE :class:`~bytepair.Encoding` on a corpus.

    Args:
        source: text, an iterable of texts, or files (see the module docs); or ``files=``.
        vocab_size: ordinary tokens wanted: the 256 single bytes plus ``vocab_size - 256``
            merges (as rustbpe counts). Special tokens come on top (Hugging Face's
            ``vocab_size`` includes them).
        pattern: a pattern name from :data:`bytepair.patterns.PATTERNS` (``"o200k"``,
            ``"cl100k"``, ``"gpt2"``, ``"llama3"``, ...) or a regex of your own.
        special_tokens: strings that get the ids right after the last merge, in order. They are
            not removed from the training text (there they count as ordinary text).
        min_frequency: stop before the first merge whose pair occurs fewer times than this, so
            the vocabulary may end up smaller than ``vocab_size`` (0 or 1: no limit). Training
            also stops early when no piece has two tokens left.
        show_progress: show progress bars if ``tqdm`` is installed (it is optional).
        num_threads: threads for counting (default: all cores). The merge loop is sequential.
        tie_break: among pairs with the same count, merge first the smallest pair of ids, with
            bytes numbered by value (``"bytepair"``: the merges of rustbpe, bpeasy and
            :func:`bytepair.reference.train`) or as Hugging Face's ``BpeTrainer`` numbers the
            ByteLevel alphabet (``"hf"``: its merges for a ``Split(pattern)`` + ``ByteLevel``
            setup; note that HF's regex engine reads possessive quantifiers such as tiktoken's
            ``\\p{N}{1,3}+`` differently, so use a non-possessive spelling to compare).
        name: the encoding's name.
        files: file paths or globs (``str`` or ``os.PathLike``), counted after ``source``.

    Counting and merging run with the GIL released; Ctrl-C stops training with
    ``KeyboardInterrupt`` within a fraction of a second. The result depends only on the corpus
    and the arguments, never on ``num_threads`` or the order of documents.

    >>> enc = train("the cat sat on the mat. " * 20, vocab_size=262, pattern="gpt2",
    ...             special_tokens=["<|end|>"], show_progress=False)
    >>> [enc.decode_single_token_bytes(i) for i in range(256, 262)]
    [b'at', b'he', b'the', b' the', b' c', b' m']
    >>> enc.encode("the mat<|end|>", allowed_special="all")
    [258, 261, 256, 262]
    """
    options = TrainOptions(
        vocab_size=vocab_size,
        pattern=pattern,
        special_tokens=special_tokens,  # type: ignore[arg-type]  # checked and made a tuple
        min_frequency=min_frequency,
        tie_break=tie_break,
        name=name,
    )
    if source is None and files is None:
        raise TypeError("train() needs a source (text, iterable of texts, path) or files=")
    threads = _threads(num_threads)
    counter = count_pieces(
        source, pattern=pattern, files=files, num_threads=threads, show_progress=show_progress
    )
    return options.learn(counter, threads, show_progress=show_progress)


@dataclass(frozen=True)
class TrainOptions:
    """What training learns, checked once on construction: :func:`train` and
    :func:`bytepair.distributed.train` both build one and let it run the merge loop.

    >>> TrainOptions(vocab_size=100)
    Traceback (most recent call last):
    ...
    ValueError: vocab_size must be an int of at least 256 (the bytes), got 100
    >>> TrainOptions(vocab_size=300, special_tokens=["<a>", "<a>", "<b>"]).special_tokens
    ('<a>', '<b>')
    """

    vocab_size: int
    pattern: str = "o200k"
    special_tokens: tuple[str, ...] = ()
    """In id order, duplicates dropped (any iterable of strings is accepted)."""
    min_frequency: int = 0
    tie_break: Literal["bytepair", "hf"] = "bytepair"
    name: str = "trained"

    def __post_init__(self) -> None:
        vocab_size, min_frequency = self.vocab_size, self.min_frequency
        if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 256:
            raise ValueError(
                f"vocab_size must be an int of at least 256 (the bytes), got {vocab_size!r}"
            )
        if (
            isinstance(min_frequency, bool)
            or not isinstance(min_frequency, int)
            or min_frequency < 0
        ):
            raise ValueError(f"min_frequency must be an int >= 0, got {min_frequency!r}")
        if self.tie_break not in ("bytepair", "hf"):
            raise ValueError(f'tie_break must be "bytepair" or "hf", got {self.tie_break!r}')
        given: Iterable[str] | None = self.special_tokens
        if isinstance(given, str):
            raise TypeError("special_tokens is a list of strings, not one string")
        specials = tuple(dict.fromkeys(given or ()))
        for s in specials:
            if not isinstance(s, str) or not s:
                raise ValueError(f"special tokens must be non-empty strings, got {s!r}")
        object.__setattr__(self, "special_tokens", specials)

    def learn(
        self, counter: _core.PieceCounter, num_threads: int, *, show_progress: bool
    ) -> Encoding:
        """Run the merge loop on ``counter`` (its counts are consumed) and build the encoding:
        the merges' ranks, then the special tokens numbered after the last one."""
        with progress_bar(
            "merging", self.vocab_size - 256, " merges", enabled=show_progress
        ) as progress:
            merges = counter.train(
                self.vocab_size,
                self.min_frequency,
                self.tie_break,
                num_threads,
                progress,
                consume=True,
            )
        ranks = merges_to_ranks(merges)
        return Encoding(
            self.name,
            pat_str=resolve_pattern(self.pattern),
            mergeable_ranks=ranks,
            special_tokens={s: len(ranks) + i for i, s in enumerate(self.special_tokens)},
        )
