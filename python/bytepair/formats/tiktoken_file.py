"""The tiktoken format: ``base64(token) rank`` per line, no pattern, no special tokens.

A ``.tiktoken`` file holds ranks only, so loading one needs the pre-tokenizer pattern and the
special tokens from elsewhere. For the files of the known encodings (identified by sha256,
whatever their name: Llama 3 ships its file as ``tokenizer.model``) both are filled in from
:mod:`bytepair.known`; for any other file ``pat_str`` is required.

>>> import tempfile, pathlib
>>> from bytepair import Encoding
>>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
>>> enc = Encoding("toy", pat_str=r"\\S+|\\s+", mergeable_ranks=ranks, special_tokens={})
>>> path = pathlib.Path(tempfile.mkdtemp()) / "toy.tiktoken"
>>> _ = enc.save(path, format="tiktoken")
>>> load_tiktoken(path, pat_str=r"\\S+|\\s+").encode("abab ab")
[256, 256, 32, 256]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bytepair._arguments import check_id_range
from bytepair._io import sha256_hex
from bytepair.formats.builders import build
from bytepair.formats.common import StrPath, encoding_name
from bytepair.formats.values import HasVocabulary, TiktokenFile, rank_vocabulary
from bytepair.known import ENCODINGS
from bytepair.patterns import resolve_pattern

__all__ = [
    "known_encoding",
    "load_tiktoken",
    "parse_tiktoken",
    "tiktoken_bytes",
    "with_line_numbers",
]


def known_encoding(data: bytes, stem: str = "") -> str | None:
    """The name of the known encoding whose vocabulary file ``data`` is (by sha256), if any.

    Several encodings share a file (``gpt2`` and ``r50k_base``); the one named like the file
    wins, else the first listed.

    >>> known_encoding(b"not a known file") is None
    True
    """
    digest = sha256_hex(data)
    names = [name for name, spec in ENCODINGS.items() if spec.file.sha256 == digest]
    if not names:
        return None
    return stem if stem in names else names[0]


def load_tiktoken(
    path: StrPath,
    *,
    data: bytes | None = None,
    pat_str: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
    name: str | None = None,
) -> Any:
    """Read a tiktoken file into an encoding. ``pat_str`` (a pattern name or regex) and
    ``special_tokens`` default to the known encoding's when the file is one (by sha256);
    otherwise ``pat_str`` is required.
    """
    return build(
        parse_tiktoken(path, data=data, pat_str=pat_str, special_tokens=special_tokens, name=name)
    )


def parse_tiktoken(
    path: StrPath,
    *,
    data: bytes | None = None,
    pat_str: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
    name: str | None = None,
) -> TiktokenFile:
    """A tiktoken file with its pattern and special tokens (see :func:`load_tiktoken`)."""
    if data is None:
        data = Path(path).read_bytes()
    stem = Path(path).name.split(".")[0]
    known = known_encoding(data, stem)
    if pat_str is None:
        if known is None:
            raise ValueError(
                f"{path}: a tiktoken file holds no pre-tokenizer pattern; pass pat_str= "
                "(a pattern name such as 'cl100k' or a regex)"
            )
        pat_str = ENCODINGS[known].pat_str
    if special_tokens is None:
        special_tokens = ENCODINGS[known].special_tokens if known is not None else {}
    try:
        check_id_range({}, special_tokens)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    return TiktokenFile(
        data,
        name=name or known or encoding_name(path),
        pat_str=resolve_pattern(pat_str),
        special_tokens=dict(special_tokens),
        source=str(path),
    )


def tiktoken_bytes(enc: HasVocabulary) -> bytes:
    """The ``.tiktoken`` file of ``enc`` (its ranks; the pattern and special tokens are not part
    of the format).

    An encoding read from Hugging Face files can be written only when tiktoken's rule gives the
    same ids for every text: its ids are merge ranks, its merges are the ones tiktoken's rule
    implies, and nothing besides one pattern shapes the pieces (no normalizer, no non-special
    added tokens). Otherwise ``ValueError`` says what stands in the way.
    """
    vocabulary = rank_vocabulary(enc, "in the tiktoken format")
    try:
        return vocabulary.tiktoken_file()
    except ValueError as err:
        raise ValueError(f"{enc.name}: {err}") from None


# The core's errors about the ranks of a .tiktoken file name the ranks but not the lines (it
# checks them after parsing): these find the ranks a message names.
_RANKS_NAMED = (
    re.compile(r"rank (\d+) is given to two tokens"),
    re.compile(r"has two ranks: (\d+) and (\d+)"),
    re.compile(r"ids run up to (\d+) "),
    re.compile(r"rank (\d+) of token .* is too large"),
)
_MAX_LINES_NAMED = 4


def with_line_numbers(data: bytes, message: str) -> str:
    """``message`` (an error about the ranks of the tiktoken file ``data``) with the lines that
    hold the ranks it names; unchanged when it names none or no line holds them.

    >>> with_line_numbers(b"YQ== 0\\nYg== 1\\nYw== 1\\n", "rank 1 is given to two tokens: b, c")
    'rank 1 is given to two tokens: b, c (lines 2, 3)'
    """
    if "line " in message:
        return message
    ranks = [
        rank for pattern in _RANKS_NAMED for m in pattern.finditer(message) for rank in m.groups()
    ]
    offsets = sorted(
        m.start()
        for rank in dict.fromkeys(ranks)
        for m in re.finditer(rb"(?m)[ \t]" + rank.encode() + rb"[ \t]*\r?$", data)
    )[:_MAX_LINES_NAMED]
    if not offsets:
        return message
    lines = [data.count(b"\n", 0, offset) + 1 for offset in offsets]
    return f"{message} ({'line' if len(lines) == 1 else 'lines'} {', '.join(map(str, lines))})"
