"""Reading vocabularies from the files they ship in, into ``mergeable_ranks`` dicts.

Two formats cover the byte-level BPE vocabularies in use:

- **tiktoken** (``.tiktoken``; also Llama 3's ``tokenizer.model``): one token per line,
  ``<base64 of the token bytes> <rank>``. Bytes are stored as base64 because tokens are arbitrary
  bytes, often not valid UTF-8.
- **GPT-2** (``encoder.json`` + ``vocab.bpe``, or Hugging Face's ``vocab.json`` + ``merges.txt``):
  ``encoder.json`` maps each token, written in the GPT-2 byte alphabet (``"Ġthe"`` is
  ``b" the"``, see :mod:`bytepair.bytes_unicode`), to its id; ``vocab.bpe`` lists the merges in
  the order they were learnt, one ``left right`` per line.

For GPT-2 files the ids of ``encoder.json`` are the ranks, and the merges file is the evidence
that those ranks describe a BPE: the merges come in the order of the ids they make, and every
token is made by at least one merge of two tokens of lower rank. Real files break naive parsers,
and these loaders cope with each case:

- The first line of a merges file is usually a ``#version: ...`` header, but not always (ollama's
  Llama 3.2 ``vocab.bpe`` starts with a merge). Other lines that start with ``#`` are real merges
  (``# #``, ``#include`` pieces), so "skip comment lines" would drop merges.
- Line endings may be CRLF, and files may end with blank lines.
- ``encoder.json`` holds entries that no merge builds, such as ``<|endoftext|>``: those are the
  special tokens, returned separately.
- Whisper's ``multilingual.tiktoken`` writes an empty token as ``=``.

Every error is a ``ValueError`` naming the file and, where there is one, the line.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from pathlib import Path

from bytepair.bytes_unicode import decode_chars, encode_bytes

__all__ = ["load_gpt2_files", "load_tiktoken_bpe"]

StrPath = str | os.PathLike[str]


def load_tiktoken_bpe(path: StrPath) -> dict[bytes, int]:
    """Read a tiktoken file: ``<base64 token> <rank>`` per line -> ``{token bytes: rank}``.

    Stricter than tiktoken's own loader (which silently keeps the last of two lines for one token,
    and skips characters outside the base64 alphabet): bad base64, a rank that is not a
    non-negative integer, a repeated token or rank, or an empty file raise ``ValueError`` with the
    file and line. Blank lines and CRLF endings are accepted. On every real file both loaders
    give the same dict.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp, "tiny.tiktoken")
    ...     _ = path.write_text("IQ== 0\\nIiM= 1\\n")
    ...     load_tiktoken_bpe(path)
    {b'!': 0, b'"#': 1}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp, "bad.tiktoken")
    ...     _ = path.write_text("IQ== 0\\nIiM= one\\n")
    ...     load_tiktoken_bpe(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: .../bad.tiktoken:2: rank b'one' is not a non-negative integer
    """
    path = Path(path)
    ranks: dict[bytes, int] = {}
    line_of_token: dict[bytes, int] = {}
    line_of_rank: dict[int, int] = {}
    # bytes.splitlines() splits on \n, \r\n and \r only (str.splitlines would also split on
    # characters such as U+2028, which never matter here, as the file is ASCII).
    for lineno, line in enumerate(path.read_bytes().splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        where = f"{path}:{lineno}"
        if len(fields) != 2:
            raise ValueError(f"{where}: expected '<base64 token> <rank>', got {line!r}")
        token_b64, rank_text = fields
        try:
            # Whisper's multilingual.tiktoken writes an empty token as a lone "=" (rank 50256);
            # tiktoken's lenient decoder reads b"", and so do we. Anything else must be exact.
            token = b"" if token_b64 == b"=" else base64.b64decode(token_b64, validate=True)
        except binascii.Error as err:
            raise ValueError(f"{where}: token {token_b64!r} is not valid base64 ({err})") from None
        if not rank_text.isdigit():  # bytes.isdigit(): ASCII digits only, no sign
            raise ValueError(f"{where}: rank {rank_text!r} is not a non-negative integer")
        rank = int(rank_text)
        if token in line_of_token:
            raise ValueError(f"{where}: token {token!r} already on line {line_of_token[token]}")
        if rank in line_of_rank:
            raise ValueError(f"{where}: rank {rank} already on line {line_of_rank[rank]}")
        ranks[token] = rank
        line_of_token[token] = line_of_rank[rank] = lineno
    if not ranks:
        raise ValueError(f"{path}: no tokens (empty file?)")
    return ranks


def load_gpt2_files(
    encoder_json_path: StrPath, vocab_bpe_path: StrPath
) -> tuple[dict[bytes, int], dict[str, int]]:
    """Read GPT-2 style files -> ``(mergeable_ranks, special_tokens)``.

    ``mergeable_ranks`` holds the 256 single bytes and every token a merge builds, with their
    ``encoder.json`` ids as ranks; ``special_tokens`` holds the other ``encoder.json`` entries
    (for GPT-2: ``{"<|endoftext|>": 50256}``), keyed by their text as written.

    Checks, each a ``ValueError`` with file (and line):

    - ``encoder.json`` is a JSON object of distinct integer ids with all 256 single bytes;
    - each merge line is two tokens separated by a space, and both halves and their
      concatenation are in ``encoder.json``;
    - merges come in the order of the ids they make: ranks are merge priorities, so this is what
      makes "merge the lowest rank first" equal to "apply the merges in file order". (tiktoken
      checks the stricter GPT-2 case, merge ``i`` makes id ``256 + i``; Llama 3.2's file lists
      several merges per token, and RoBERTa's renumbered ids fail this check, rightly);
    - every token that merges make is made by at least one merge of two tokens of lower rank.
      For GPT-2 (one merge per token) that is: each merge's result ranks after both halves.

    >>> import json, tempfile
    >>> encoder = {encode_bytes(bytes([b])): b for b in range(256)}
    >>> encoder |= {"Ġt": 256, "he": 257, "Ġthe": 258, "<|endoftext|>": 259}
    >>> merges = "#version: 0.2\\nĠ t\\r\\nh e\\r\\nĠt he\\r\\n\\r\\n"
    >>> def load(encoder, merges):
    ...     with tempfile.TemporaryDirectory() as tmp:
    ...         _ = Path(tmp, "encoder.json").write_text(json.dumps(encoder))
    ...         _ = Path(tmp, "vocab.bpe").write_text(merges, encoding="utf-8")
    ...         return load_gpt2_files(Path(tmp, "encoder.json"), Path(tmp, "vocab.bpe"))
    >>> ranks, specials = load(encoder, merges)
    >>> len(ranks), ranks[b" t"], ranks[b" the"], specials
    (259, 256, 258, {'<|endoftext|>': 259})
    >>> load(encoder | {"he": 258, "Ġthe": 257}, merges)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: .../vocab.bpe:4: merge 'Ġt he' makes id 257 after a merge that made id 258: merges must come in the order of the ids (ranks) they make
    >>> merges = "Ġ t\\nĠt he\\nh e\\n"  # no header: line 1 is a merge
    >>> load(encoder | {"he": 258, "Ġthe": 257}, merges)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: .../vocab.bpe:2: merge 'Ġt he' makes b' the' (id 257), but no merge makes it from two tokens of lower id, so BPE could never produce it
    """  # noqa: E501
    encoder_path, merges_path = Path(encoder_json_path), Path(vocab_bpe_path)
    encoder = _read_encoder_json(encoder_path)

    # Token bytes -> id, for every entry written in the byte alphabet. An entry with a character
    # outside it (a real space, say) cannot be a byte-level token; it can only be special.
    id_of: dict[bytes, int] = {}
    for key, token_id in encoder.items():
        try:
            id_of[decode_chars(key)] = token_id
        except ValueError:
            continue
    missing = [bytes([b]) for b in range(256) if bytes([b]) not in id_of]
    if missing:
        raise ValueError(
            f"{encoder_path}: lacks {len(missing)} of the 256 single-byte tokens, "
            f"e.g. {missing[0]!r}"
        )

    ranks = {bytes([b]): id_of[bytes([b])] for b in range(256)}
    # Files converted from tiktoken (Llama 3.2's) list several merges per token, including some
    # with a half that ranks *after* the result (b"    " from b" " + b"   "). Such a merge is
    # harmless, but each token needs at least one merge from two tokens of lower rank.
    first_merge: dict[bytes, tuple[int, bytes, bytes]] = {}
    from_lower: set[bytes] = set()
    last_rank = -1
    for lineno, left, right in _read_merges(merges_path):
        where = f"{merges_path}:{lineno}"
        merged = left + right
        for part in (left, right, merged):
            if part not in id_of:
                raise ValueError(
                    f"{where}: merge {_show(left, right)!r} needs token {part!r}, "
                    f"which is not in {encoder_path.name}"
                )
        rank = id_of[merged]
        # Encoding by rank (lowest first) equals applying the merges in file order only if the
        # file lists the merges in the order of the ids of the tokens they make.
        if rank < last_rank:
            raise ValueError(
                f"{where}: merge {_show(left, right)!r} makes id {rank} after a merge that made "
                f"id {last_rank}: merges must come in the order of the ids (ranks) they make"
            )
        last_rank = rank
        first_merge.setdefault(merged, (lineno, left, right))
        if id_of[left] < rank and id_of[right] < rank:
            from_lower.add(merged)
        ranks[merged] = rank
    for merged, (lineno, left, right) in first_merge.items():
        if merged not in from_lower:
            raise ValueError(
                f"{merges_path}:{lineno}: merge {_show(left, right)!r} makes {merged!r} "
                f"(id {id_of[merged]}), but no merge makes it from two tokens of lower id, "
                "so BPE could never produce it"
            )

    mergeable_ids = set(ranks.values())
    specials = {key: i for key, i in encoder.items() if i not in mergeable_ids}
    return ranks, specials


def _show(left: bytes, right: bytes) -> str:
    """A merge as it is written in the file."""
    return f"{encode_bytes(left)} {encode_bytes(right)}"


def _read_encoder_json(path: Path) -> dict[str, int]:
    """``encoder.json`` / ``vocab.json`` as a dict, with its shape checked."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}:{err.lineno}: not valid JSON ({err.msg})") from None
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 ({err})") from None
    if not isinstance(data, dict) or not data:
        raise ValueError(f"{path}: expected a non-empty JSON object of token -> id")
    token_of: dict[int, str] = {}
    for key, token_id in data.items():
        # bool is a subclass of int in Python; `true` is not an id.
        if not isinstance(token_id, int) or isinstance(token_id, bool) or token_id < 0:
            raise ValueError(f"{path}: id of {key!r} is {token_id!r}, not an integer >= 0")
        if token_id in token_of:
            raise ValueError(
                f"{path}: id {token_id} is given to {token_of[token_id]!r} and {key!r}"
            )
        token_of[token_id] = key
    return data


def _read_merges(path: Path) -> list[tuple[int, bytes, bytes]]:
    """The merges of ``vocab.bpe`` / ``merges.txt`` as ``(line number, left, right)``."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 ({err})") from None
    merges = []
    # split("\n"), not splitlines(): the latter also splits at U+0085, U+2028 and the like.
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r")  # CRLF files
        if not line.strip():
            continue  # blank lines, e.g. at the end of the file
        if lineno == 1 and line.startswith("#version"):
            continue  # the optional header; later lines starting with "#" are real merges
        halves = line.split(" ")
        if len(halves) != 2 or not all(halves):
            raise ValueError(
                f"{path}:{lineno}: expected two tokens separated by one space, got {line!r}"
            )
        try:
            left, right = decode_chars(halves[0]), decode_chars(halves[1])
        except ValueError as err:
            raise ValueError(f"{path}:{lineno}: {err}") from None
        merges.append((lineno, left, right))
    if not merges:
        raise ValueError(f"{path}: no merges (empty file?)")
    return merges
