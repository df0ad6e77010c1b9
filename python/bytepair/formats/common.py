"""Helpers shared by the format modules: reading JSON with useful errors, naming, writing."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bytepair._io import write_all_or_nothing, write_atomic
from bytepair.bytes_unicode import decode_chars

__all__ = [
    "StrPath",
    "encoding_name",
    "read_json",
    "read_vocab",
    "template_post_processor",
    "token_bytes",
    "write_all_or_nothing",
    "write_json",
]

StrPath = str | os.PathLike[str]

# Ids the core stores (it refuses larger ones with its own message; this keeps Python's integer
# conversion from failing first).
MAX_ID = 1 << 28

# File names that say nothing about the vocabulary: the folder names it instead.
_GENERIC_STEMS = {"tokenizer", "vocab", "encoder", "merges", "model"}


def encoding_name(path: StrPath) -> str:
    """A name for the encoding read from ``path``: the file's stem, or its folder's name when the
    stem is generic (``phi-2/tokenizer.json`` is ``phi-2``).

    >>> encoding_name("vocab/phi-2/tokenizer.json"), encoding_name("x/cl100k_base.tiktoken")
    ('phi-2', 'cl100k_base')
    """
    p = Path(path)
    if p.is_dir():
        return p.resolve().name
    stem = p.name.split(".")[0]
    if stem in _GENERIC_STEMS and p.resolve().parent.name:
        return p.resolve().parent.name
    return stem


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"the key {key!r} appears twice in one JSON object")
            seen.add(key)
    return result


def read_json(path: StrPath, data: bytes | None = None) -> Any:
    """Parse a JSON file; errors name the file and the line (and a repeated key, which plain
    ``json.load`` would silently collapse)."""
    if data is None:
        data = Path(path).read_bytes()
    if not data.strip():
        raise ValueError(f"{path}: the file is empty")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 ({err})") from None
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}:{err.lineno}:{err.colno}: not valid JSON ({err.msg})") from None
    except RecursionError:
        raise ValueError(f"{path}: JSON nested too deeply to be a vocabulary") from None
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None


def check_vocab(vocab: Any, where: str) -> dict[str, int]:
    """Check a token -> id mapping: a non-empty object of distinct non-negative integer ids."""
    if not isinstance(vocab, dict) or not vocab:
        raise ValueError(f"{where}: expected a non-empty JSON object of token -> id")
    token_of: dict[int, str] = {}
    for token, token_id in vocab.items():
        # bool is a subclass of int in Python; `true` is not an id.
        if type(token_id) is not int or not 0 <= token_id < MAX_ID:
            raise ValueError(
                f"{where}: the id of {token!r} is {token_id!r}, not an integer in 0..{MAX_ID - 1}"
            )
        other = token_of.setdefault(token_id, token)
        if other != token:
            raise ValueError(f"{where}: id {token_id} is given to both {other!r} and {token!r}")
    return vocab


def read_vocab(path: StrPath) -> dict[str, int]:
    """Read ``encoder.json`` / ``vocab.json``."""
    return check_vocab(read_json(path), str(path))


def token_bytes(text: str) -> bytes:
    """The bytes a vocabulary string stands for: GPT-2 byte alphabet if every character is in it,
    else its own UTF-8 (the rule of ``tokenizers``' ByteLevel decoder).

    >>> token_bytes("Ġhi"), token_bytes("  ")
    (b' hi', b'  ')
    """
    try:
        return decode_chars(text)
    except ValueError:
        return text.encode("utf-8")


def write_json(path: Path, obj: Mapping[str, Any] | list[Any], *, indent: int | None = 2) -> None:
    """Write JSON atomically (non-ASCII as is, like ``tokenizers``)."""
    text = json.dumps(obj, ensure_ascii=False, indent=indent)
    write_atomic(path, (text + "\n").encode("utf-8"))


def template_post_processor(
    bos: tuple[str, int] | None, eos: tuple[str, int] | None
) -> dict[str, Any]:
    """A ``tokenizer.json`` post-processor ``[bos] $A [eos]`` (each ``(text, id)`` or None), as
    transformers' ``update_post_processor`` writes it for ``add_bos_token``/``add_eos_token``."""
    single: list[dict[str, Any]] = []
    if bos is not None:
        single.append({"SpecialToken": {"id": bos[0], "type_id": 0}})
    single.append({"Sequence": {"id": "A", "type_id": 0}})
    if eos is not None:
        single.append({"SpecialToken": {"id": eos[0], "type_id": 0}})
    pair = [
        {"Sequence": {"id": "B", "type_id": 1}}
        if "Sequence" in item
        else {"SpecialToken": {"id": item["SpecialToken"]["id"], "type_id": 1}}
        for item in single
    ]
    return {
        "type": "TemplateProcessing",
        "single": single,
        "pair": [*single, *pair],
        "special_tokens": {
            text: {"id": text, "ids": [id_], "tokens": [text]}
            for text, id_ in (t for t in (bos, eos) if t is not None)
        },
    }
