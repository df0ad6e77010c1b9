"""GPT-2's files (``encoder.json`` + ``vocab.bpe``) and Hugging Face's (``vocab.json`` +
``merges.txt``): the same two files, read two ways.

Both are a JSON object of token strings (in the GPT-2 byte alphabet, see
:mod:`bytepair.bytes_unicode`) to ids, and a list of merges, ``left right`` per line.

- **GPT-2 files** are read as tiktoken reads them (its ``data_gym_to_mergeable_bpe_ranks``): the
  ids are ranks and the merges only show which tokens are ranks. That is what makes GPT-2's
  files equal ``r50k_base`` and ollama's Llama 3.2 files equal Llama 3's ``tokenizer.model``.
  Entries that no merge makes (``<|endoftext|>``) are special tokens.
- **Hugging Face files** are read as ``tokenizers.models.BPE.from_file`` reads them: merges by
  pair priority, ids as given, then a pre-tokenizer (``ByteLevel`` by default, or ``pat_str`` as
  ``Split`` + ``ByteLevel(use_regex=False)``, or any ``pre_tokenizer`` object) and an optional
  ``normalizer``. Special tokens come from ``special_tokens``, else from an ``added_tokens.json``
  next to the vocabulary, plus the entries that no merge makes; they are special added tokens,
  recognised in text where ``allowed_special`` allows them (see :mod:`bytepair.formats`).

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

from bytepair import _core
from bytepair.bytes_unicode import encode_bytes
from bytepair.encoding import Encoding
from bytepair.formats.common import (
    StrPath,
    encoding_name,
    read_json,
    read_vocab,
    token_bytes,
    write_all_or_nothing,
)
from bytepair.formats.hf_json import BYTE_LEVEL, build_hf_encoding
from bytepair.formats.hf_pipeline import AddedToken
from bytepair.formats.regex_dialects import rust_to_onig
from bytepair.patterns import GPT2, resolve_pattern

__all__ = ["load_gpt2_files", "load_hf_files", "write_gpt2_files"]


def load_gpt2_files(
    encoder_json: StrPath,
    vocab_bpe: StrPath,
    *,
    pat_str: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
    name: str | None = None,
) -> Encoding:
    """Read GPT-2 files as tiktoken does (ids are ranks; tiktoken's merge rule).

    ``pat_str`` defaults to GPT-2's pattern; ``special_tokens`` are added to the entries that no
    merge makes. Errors name the file and the line.
    """
    encoder = read_vocab(encoder_json)
    missing = [b for b in range(256) if encode_bytes(bytes([b])) not in encoder]
    if missing:
        raise ValueError(
            f"{encoder_json}: lacks {len(missing)} of the 256 single-byte tokens, "
            f"e.g. {bytes([missing[0]])!r}"
        )
    merges_data = Path(vocab_bpe).read_bytes()
    pattern = resolve_pattern(pat_str or GPT2)
    try:
        core, specials = _core.RankEncoder.from_gpt2(
            encoder, merges_data, pattern, dict(special_tokens or {})
        )
    except ValueError as err:
        where = vocab_bpe if "line " in str(err) or "merges" in str(err) else encoder_json
        raise ValueError(f"{where}: {err}") from None
    return Encoding._from_core(name or encoding_name(encoder_json), pattern, core, specials)


def _made_by_merges(merges_data: bytes) -> set[str]:
    """The tokens the merges of a merges file make (a light parse; the core checks the file)."""
    made = set()
    for line in merges_data.decode("utf-8", errors="replace").split("\n"):
        line = line.removesuffix("\r")
        if line.startswith("#version"):
            continue
        halves = line.split(" ")
        if len(halves) == 2:
            made.add(halves[0] + halves[1])
    return made


def _pre_tokenizer_for(pat_str: str | None, pre_tokenizer: Mapping[str, Any] | None) -> Any:
    if pat_str is not None and pre_tokenizer is not None:
        raise ValueError("pass pat_str or pre_tokenizer, not both")
    if pre_tokenizer is not None:
        return dict(pre_tokenizer)
    if pat_str is None:
        return dict(BYTE_LEVEL)
    return {
        "type": "Sequence",
        "pretokenizers": [
            {
                "type": "Split",
                "pattern": {"Regex": rust_to_onig(resolve_pattern(pat_str))},
                "behavior": "Isolated",
                "invert": False,
            },
            dict(BYTE_LEVEL, use_regex=False),
        ],
    }


def load_hf_files(
    vocab_json: StrPath,
    merges_txt: StrPath,
    *,
    pat_str: str | None = None,
    pre_tokenizer: Mapping[str, Any] | None = None,
    normalizer: str | Mapping[str, Any] | None = None,
    special_tokens: Mapping[str, int] | None = None,
    ignore_merges: bool = False,
    name: str | None = None,
) -> Encoding:
    """Read Hugging Face ``vocab.json`` + ``merges.txt`` as ``tokenizers`` does.

    ``normalizer`` is a name (``"NFC"``) or a ``tokenizer.json`` normalizer object; the
    pre-tokenizer is ``ByteLevel`` (GPT-2's), or ``Split(pat_str)`` + ``ByteLevel``, or the
    ``pre_tokenizer`` object given. Special tokens: ``special_tokens`` if given, else those of an
    ``added_tokens.json`` beside ``vocab_json`` and the vocabulary entries that no merge makes.
    """
    source = f"{vocab_json} + {merges_txt}"
    vocab = read_vocab(vocab_json)
    merges_data = Path(merges_txt).read_bytes()
    if special_tokens is None:
        specials: dict[str, int] = {}
        sidecar = Path(vocab_json).with_name("added_tokens.json")
        if sidecar.is_file():
            extra = read_json(sidecar)
            if not isinstance(extra, dict) or not all(
                isinstance(k, str) and type(v) is int for k, v in extra.items()
            ):
                raise ValueError(f"{sidecar}: expected a JSON object of token -> id")
            specials.update(extra)
        made = _made_by_merges(merges_data)
        for token, token_id in vocab.items():
            if token not in made and len(token_bytes(token)) > 1:
                specials.setdefault(token, token_id)
    else:
        specials = dict(special_tokens)
    norm: Any = {"type": normalizer} if isinstance(normalizer, str) else normalizer
    added = [
        (AddedToken(text, token_id), token_id)
        for text, token_id in sorted(specials.items(), key=lambda kv: kv[1])
    ]
    try:
        pre = _pre_tokenizer_for(pat_str, pre_tokenizer)
    except ValueError as err:
        raise ValueError(f"{source}: {err}") from None
    try:
        return build_hf_encoding(
            name=name or encoding_name(vocab_json),
            source=source,
            vocab=vocab,
            merges=None,
            merges_data=merges_data,
            options={"ignore_merges": ignore_merges},
            normalizer=norm,
            pre_tokenizer=pre,
            post_processor=None,
            decoder=dict(BYTE_LEVEL),
            added=added,
        )
    except ValueError as err:
        message = str(err)
        if "line " in message and message.startswith(source):
            message = f"{merges_txt}: {message[len(source) + 2 :]}"
        raise ValueError(message) from None


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


def write_gpt2_files(enc: Encoding, folder: StrPath) -> list[Path]:
    """Write ``encoder.json`` + ``vocab.bpe`` into ``folder`` (tiktoken's view of GPT-2 files:
    ids are ranks). ``json.dumps`` with its defaults, as OpenAI wrote GPT-2's ``encoder.json``.

    An encoding read from Hugging Face files must be exactly representable by ranks (see
    :func:`bytepair.formats.hf_json.tiktoken_compatibility`).
    """
    from bytepair.formats.hf_json import tiktoken_compatibility

    problem = tiktoken_compatibility(enc)
    if problem is not None:
        raise ValueError(f"{enc.name} cannot be written as GPT-2 files: {problem}")
    target = Path(folder)
    if target.suffix == ".json":
        encoder_path, merges_path = target, target.with_name("vocab.bpe")
    else:
        encoder_path, merges_path = target / "encoder.json", target / "vocab.bpe"
    ranks = enc._mergeable_ranks
    encoder = {encode_bytes(t): r for t, r in ranks.items()}
    encoder.update(enc._special_tokens)
    encoder = dict(sorted(encoder.items(), key=lambda kv: kv[1]))
    lines = ["#version: 0.2"]
    for token_id, derived in enc._core.derive_merges():
        token = enc.decode_single_token_bytes(token_id)
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
