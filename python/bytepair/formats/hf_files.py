"""Hugging Face's ``vocab.json`` + ``merges.txt``, read as ``tokenizers`` reads them.

They are the same two files as GPT-2's (see :mod:`bytepair.formats.gpt2`), read as
``tokenizers.models.BPE.from_file`` reads them: merges by pair priority, ids as given, then a
pre-tokenizer (``pat_str`` as ``Split`` + ``ByteLevel(use_regex=False)``, or any
``pre_tokenizer`` object; the files do not hold it, so it must be given unless the vocabulary is
recognised, see :mod:`bytepair.formats.hf_known`) and an optional ``normalizer``.
Special tokens come from ``special_tokens``, else from an ``added_tokens.json`` next to the
vocabulary, plus the entries that no merge makes; they are special added tokens, recognised in
text where ``allowed_special`` allows them (see :mod:`bytepair.formats`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bytepair._io import sha256_hex
from bytepair.formats.builders import build
from bytepair.formats.common import StrPath, encoding_name, read_json, read_vocab, token_bytes
from bytepair.formats.hf_json import BYTE_LEVEL
from bytepair.formats.hf_known import KNOWN_HF_VOCABS, missing_pre_tokenizer_message
from bytepair.formats.hf_pipeline import AddedToken
from bytepair.formats.regex_dialects import rust_to_onig
from bytepair.formats.values import HfComponents
from bytepair.patterns import resolve_pattern

__all__ = ["load_hf_files", "parse_hf_files"]


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
) -> Any:
    """Read Hugging Face ``vocab.json`` + ``merges.txt`` as ``tokenizers`` does.

    ``normalizer`` is a name (``"NFC"``) or a ``tokenizer.json`` normalizer object; the
    pre-tokenizer is ``Split(pat_str)`` + ``ByteLevel`` (``pat_str="gpt2"``: GPT-2's pattern),
    or the ``pre_tokenizer`` object given. The files do not say it, so one of the two is needed
    unless the vocabulary is a known one (:mod:`bytepair.formats.hf_known`, by its hash: Qwen2,
    SmolLM, GPT-2), which brings its own pre-tokenizer and normalizer; else ``ValueError``.
    Special tokens: ``special_tokens`` if given, else those of an ``added_tokens.json`` beside
    ``vocab_json`` and the vocabulary entries that no merge makes.
    """
    source = f"{vocab_json} + {merges_txt}"
    # The files do not say their pre-tokenizer: the caller does, or the vocabulary is known.
    unknown_pipeline = False
    if pat_str is None and pre_tokenizer is None:
        known = KNOWN_HF_VOCABS.get(sha256_hex(Path(vocab_json).read_bytes()))
        if known is not None:
            pre_tokenizer = known.pre_tokenizer
            normalizer = normalizer if normalizer is not None else known.normalizer
        unknown_pipeline = known is None
    components = parse_hf_files(
        vocab_json,
        merges_txt,
        pat_str=pat_str,
        pre_tokenizer=pre_tokenizer,
        normalizer=normalizer,
        special_tokens=special_tokens,
        ignore_merges=ignore_merges,
        name=name,
    )
    try:
        enc = build(components)
    except ValueError as err:
        message = str(err)
        if "line " in message and message.startswith(source):
            message = f"{merges_txt}: {message[len(source) + 2 :]}"
        raise ValueError(message) from None
    if unknown_pipeline:  # after the files' own errors, which say more
        raise ValueError(missing_pre_tokenizer_message(source))
    return enc


def parse_hf_files(
    vocab_json: StrPath,
    merges_txt: StrPath,
    *,
    pat_str: str | None = None,
    pre_tokenizer: Mapping[str, Any] | None = None,
    normalizer: str | Mapping[str, Any] | None = None,
    special_tokens: Mapping[str, int] | None = None,
    ignore_merges: bool = False,
    name: str | None = None,
) -> HfComponents:
    """The files' components, checked, to be built (see :func:`load_hf_files`)."""
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
    return HfComponents(
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
