"""``tiktoken.load`` for code that imports it: ``load_tiktoken_bpe`` and friends.

Llama 3's reference tokenizer does ``from tiktoken.load import load_tiktoken_bpe``; with
``import bytepair as tiktoken`` (or ``from bytepair.load import ...``) the same calls work.
Local paths are read as they are. A URL is read only the way :mod:`bytepair.registry` allows:
the URL of a known vocabulary resolves to its local copy (``BYTEPAIR_VOCAB_DIR``, the cache)
and downloads, verified, only where downloads are on (not ``BYTEPAIR_OFFLINE=1``); any other
URL downloads only where downloads are on, into the cache. tiktoken's ``/tmp/data-gym-cache``
is never used.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.tiktoken"
>>> _ = path.write_bytes(b"IQ== 0\\nIiM= 1\\n")
>>> load_tiktoken_bpe(str(path))
{b'!': 0, b'"#': 1}
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import urllib.request
from pathlib import Path

from bytepair import _core, _io, registry
from bytepair.bytes_unicode import unicode_to_bytes
from bytepair.reference import load as reference_load

__all__ = [
    "check_hash",
    "data_gym_to_mergeable_bpe_ranks",
    "dump_tiktoken_bpe",
    "load_tiktoken_bpe",
    "read_file",
    "read_file_cached",
]


def _known_name(url: str) -> str | None:
    return next((n for n, spec in registry.ENCODINGS.items() if spec.file.url == url), None)


def _downloads_on() -> bool:
    return os.environ.get("BYTEPAIR_OFFLINE", "") in ("", "0")


def read_file(blobpath: str) -> bytes:
    """The bytes of a local file, or of a URL where :mod:`bytepair.registry`'s rules allow."""
    if "://" not in blobpath:
        with open(blobpath, "rb") as f:
            return f.read()
    name = _known_name(blobpath)
    if name is not None:
        return registry.find_vocab_file(name)[1]
    if not _downloads_on():
        raise FileNotFoundError(
            f"{blobpath}: downloads are off (BYTEPAIR_OFFLINE=1); download the file yourself "
            "and pass its local path"
        )
    cached = registry.cache_dir() / "urls" / hashlib.sha1(blobpath.encode()).hexdigest()
    if cached.is_file():
        return cached.read_bytes()
    with urllib.request.urlopen(blobpath, timeout=60) as response:
        data: bytes = response.read()
    _io.write_atomic(cached, data)
    return data


def check_hash(data: bytes, expected_hash: str) -> bool:
    """Whether ``data`` has the sha256 ``expected_hash`` (hex)."""
    return _io.sha256_hex(data) == expected_hash


def read_file_cached(blobpath: str, expected_hash: str | None = None) -> bytes:
    """:func:`read_file`, checked against ``expected_hash`` (sha256 hex) when given."""
    data = read_file(blobpath)
    if expected_hash is not None and not check_hash(data, expected_hash):
        raise ValueError(
            f"{blobpath}: sha256 {_io.sha256_hex(data)} is not the expected {expected_hash}; "
            "the file is corrupt or a different one"
        )
    return data


def load_tiktoken_bpe(tiktoken_bpe_file: str, expected_hash: str | None = None) -> dict[bytes, int]:
    """``{token bytes: rank}`` of a ``.tiktoken`` file (parsed in Rust; a malformed line is a
    ``ValueError`` naming it, where tiktoken may keep going)."""
    blobpath = os.fspath(tiktoken_bpe_file)
    data = read_file_cached(blobpath, expected_hash)
    try:
        return _core.parse_tiktoken(data)
    except ValueError as e:
        if "://" not in blobpath:
            # The Python reader words the errors with the line.
            return reference_load.load_tiktoken_bpe(blobpath)
        raise ValueError(f"{blobpath}: {e}") from None


def dump_tiktoken_bpe(bpe_ranks: dict[bytes, int], tiktoken_bpe_file: str) -> None:
    """Write ``bpe_ranks`` as a ``.tiktoken`` file (atomically, to a local path)."""
    lines = [
        base64.b64encode(token) + b" " + str(rank).encode() + b"\n"
        for token, rank in sorted(bpe_ranks.items(), key=lambda x: x[1])
    ]
    _io.write_atomic(Path(tiktoken_bpe_file), b"".join(lines))


def data_gym_to_mergeable_bpe_ranks(
    vocab_bpe_file: str,
    encoder_json_file: str,
    vocab_bpe_hash: str | None = None,
    encoder_json_hash: str | None = None,
    clobber_one_byte_tokens: bool = False,
) -> dict[bytes, int]:
    """GPT-2's ``vocab.bpe`` + ``encoder.json`` as tiktoken reads them: single bytes ranked in
    the data-gym order, then one rank per merge; the encoder must agree (``ValueError`` if not).
    """
    printable = [b for b in range(256) if chr(b).isprintable() and chr(b) != " "]
    rank_to_byte = printable + [b for b in range(256) if b not in printable]
    decoder = unicode_to_bytes()  # the same byte alphabet as tiktoken's data-gym one

    def decode(value: str) -> bytes:
        return bytes(decoder[c] for c in value)

    merges_text = read_file_cached(vocab_bpe_file, vocab_bpe_hash).decode()
    merges = [tuple(line.split()) for line in merges_text.split("\n")[1:-1]]
    ranks = {bytes([b]): i for i, b in enumerate(rank_to_byte)}
    for first, second in merges:
        ranks[decode(first) + decode(second)] = len(ranks)
    encoder = json.loads(read_file_cached(encoder_json_file, encoder_json_hash))
    loaded = {decode(k): v for k, v in encoder.items()}
    loaded.pop(b"<|endoftext|>", None)
    loaded.pop(b"<|startoftext|>", None)
    if clobber_one_byte_tokens:
        for token, rank in loaded.items():
            if len(token) == 1:
                ranks[token] = rank
    if ranks != loaded:
        raise ValueError(
            f"{encoder_json_file} does not match the merges of {vocab_bpe_file} "
            "(tiktoken asserts that they agree)"
        )
    return ranks
