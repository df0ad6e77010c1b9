"""GPT-2's files (``encoder.json`` + ``vocab.bpe``), read as tiktoken reads them.

They are a JSON object of token strings (in the GPT-2 byte alphabet, see
:mod:`bytepair.bytes_unicode`) to ids, and a list of merges, ``left right`` per line. tiktoken
(its ``data_gym_to_mergeable_bpe_ranks``) takes the ids as ranks and the merges only as a sign of
which tokens are ranks. That is what makes GPT-2's files equal ``r50k_base`` and ollama's Llama
3.2 files equal Llama 3's ``tokenizer.model``. Entries that no merge makes (``<|endoftext|>``)
are special tokens. Hugging Face reads the same two files (as ``vocab.json`` + ``merges.txt``)
another way: see :mod:`bytepair.formats.hf_files`.

Writing (:func:`write_gpt2_files`) produces ``encoder.json`` + ``vocab.bpe`` that read back, as
GPT-2 files, to the same ids.

>>> import tempfile, pathlib
>>> from bytepair import Encoding
>>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257}
>>> from bytepair.patterns import GPT2
>>> enc = Encoding("toy", pat_str=GPT2, mergeable_ranks=ranks, special_tokens={"<e>": 258})
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> [p.name for p in write_gpt2_files(enc, folder)]
['encoder.json', 'vocab.bpe']
>>> (folder / "vocab.bpe").read_text()
'#version: 0.2\\na b\\nab c\\n'
>>> back = load_gpt2_files(folder / "encoder.json", folder / "vocab.bpe")
>>> back.encode("abc<e>", allowed_special="all")
[257, 258]
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bytepair._arguments import check_id_range
from bytepair._io import write_all_or_nothing
from bytepair.bytes_unicode import encode_bytes
from bytepair.formats.builders import build
from bytepair.formats.common import StrPath, encoding_name, read_vocab
from bytepair.formats.hf_files import load_hf_files as load_hf_files
from bytepair.formats.values import Gpt2Files, HasVocabulary, rank_vocabulary
from bytepair.patterns import GPT2, resolve_pattern

__all__ = ["load_gpt2_files", "load_hf_files", "parse_gpt2_files", "write_gpt2_files"]

__all__ = ["load_gpt2_files", "load_hf_files", "write_gpt2_files"]


def load_gpt2_files(
    encoder_json: StrPath,
    vocab_bpe: StrPath,
    *,
    pat_str: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
    name: str | None = None,
) -> Any:
    """Read GPT-2 files as tiktoken does (ids are ranks; tiktoken's merge rule).

    ``pat_str`` defaults to GPT-2's pattern; ``special_tokens`` are added to the entries that no
    merge makes. Errors name the file and the line.
    """
    return build(
        parse_gpt2_files(
            encoder_json, vocab_bpe, pat_str=pat_str, special_tokens=special_tokens, name=name
        )
    )


def parse_gpt2_files(
    encoder_json: StrPath,
    vocab_bpe: StrPath,
    *,
    pat_str: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
    name: str | None = None,
) -> Gpt2Files:
    """GPT-2 files read and checked, to be built (see :func:`load_gpt2_files`)."""
    encoder = read_vocab(encoder_json)
    missing = [b for b in range(256) if encode_bytes(bytes([b])) not in encoder]
    if missing:
        raise ValueError(
            f"{encoder_json}: lacks {len(missing)} of the 256 single-byte tokens, "
            f"e.g. {bytes([missing[0]])!r}"
        )
    merges_data = Path(vocab_bpe).read_bytes()
    try:
        check_id_range({}, special_tokens or {})
    except ValueError as err:
        raise ValueError(f"{encoder_json}: {err}") from None
    return Gpt2Files(
        encoder=encoder,
        merges_data=merges_data,
        name=name or encoding_name(encoder_json),
        pat_str=resolve_pattern(pat_str or GPT2),
        special_tokens=dict(special_tokens or {}),
        encoder_source=str(encoder_json),
        merges_source=str(vocab_bpe),
    )


def _merge_lines(
    token: bytes, derived: tuple[bytes, bytes] | None, ranks: Mapping[bytes, int]
) -> list[tuple[bytes, bytes]]:
    """The merges to list for ``token``: the one tiktoken's rule uses (``derived``), and, if that
    has a half of higher rank or there is none, a split into two lower-ranked tokens, which a
    GPT-2 file needs to show the token is a rank (ollama's Llama 3.2 file does the same)."""
    rank = ranks[token]
    lines = [derived] if derived is not None else []
    if derived is None or not (ranks[derived[0]] < rank and ranks[derived[1]] < rank):
        lower = next(
            (
                (token[:i], token[i:])
                for i in range(1, len(token))
                if ranks.get(token[:i], rank) < rank and ranks.get(token[i:], rank) < rank
            ),
            None,
        )
        if lower is None:
            raise ValueError(
                f"token {token!r} (rank {rank}) is not two tokens of lower rank, which GPT-2 "
                "files require"
            )
        lines.append(lower)
    return lines


def write_gpt2_files(enc: HasVocabulary, folder: StrPath) -> list[Path]:
    """Write ``encoder.json`` + ``vocab.bpe`` into ``folder`` (tiktoken's view of GPT-2 files:
    ids are ranks). ``json.dumps`` with its defaults, as OpenAI wrote GPT-2's ``encoder.json``.

    An encoding read from Hugging Face files must be exactly representable by ranks (see
    :func:`bytepair.formats.hf_json.tiktoken_compatibility`).
    """
    vocabulary = rank_vocabulary(enc, "as GPT-2 files")
    target = Path(folder)
    if target.suffix == ".json":
        encoder_path, merges_path = target, target.with_name("vocab.bpe")
    else:
        encoder_path, merges_path = target / "encoder.json", target / "vocab.bpe"
    ranks = vocabulary.ranks()
    token_of = {r: t for t, r in ranks.items()}
    encoder = {encode_bytes(t): r for t, r in ranks.items()}
    encoder.update(vocabulary.special_tokens)
    encoder = dict(sorted(encoder.items(), key=lambda kv: kv[1]))
    lines = ["#version: 0.2"]
    for token_id, derived in vocabulary.derived_merges():
        token = token_of[token_id]
        try:
            merges = _merge_lines(token, derived, ranks)
        except ValueError as err:
            raise ValueError(f"{enc.name} cannot be written as GPT-2 files: {err}") from None
        lines.extend(f"{encode_bytes(left)} {encode_bytes(right)}" for left, right in merges)
    # Both files or neither: a pair of one old and one new file would load as a third tokenizer.
    write_all_or_nothing(
        {
            encoder_path: json.dumps(encoder).encode("utf-8"),
            merges_path: ("\n".join(lines) + "\n").encode("utf-8"),
        }
    )
    return [encoder_path, merges_path]
