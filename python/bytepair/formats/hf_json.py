"""Hugging Face ``tokenizer.json``: reading its components, writing one.

Reading follows ``tokenizers`` 0.23 step by step (see :mod:`bytepair.formats.hf_pipeline` for the
components): the model must be a byte-level BPE (``ByteLevel`` pre-tokenizer and decoder, no
``byte_fallback``, no ``continuing_subword_prefix``/``end_of_word_suffix``, no dropout); merges
may be ``"a b"`` strings or ``[a, b]`` pairs; ``ignore_merges`` is honoured; added tokens get the
ids ``tokenizers`` gives them. ``truncation`` and ``padding`` change the ids ``tokenizers``
returns (cut at ``max_length``, filled with the pad token) and are not applied: a file that sets
them is a ``ValueError`` unless ``ignore_settings`` names them (the ids of ``tokenizers`` after
``no_truncation()`` / ``no_padding()``). Everything else is a ``ValueError`` naming the file and
the JSON path.

Writing produces a file that ``tokenizers.Tokenizer.from_file`` reads with identical ids:

- an encoding read from Hugging Face files is written back with its components as loaded;
- a tiktoken encoding becomes ``BPE(ignore_merges=True)`` with the merges tiktoken's rule
  implies, ``Split(pattern, Removed, invert=True)`` (tiktoken keeps only the pattern's matches)
  and ``ByteLevel(use_regex=False)``; GPT-2's pattern becomes ``ByteLevel(use_regex=True)``. Its
  special tokens become special added tokens: ``tokenizers`` recognises them in any text, the
  encoding read back only where ``allowed_special`` allows, as the original did.

>>> import tempfile, pathlib
>>> from bytepair import Encoding
>>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257}
>>> enc = Encoding("toy", pat_str=r"\\S+|\\s+", mergeable_ranks=ranks, special_tokens={"<e>": 258})
>>> path = pathlib.Path(tempfile.mkdtemp()) / "tokenizer.json"
>>> _ = enc.save(path, format="hf")
>>> back = load_tokenizer_json(path)
>>> back.encode("abc ab<e>", allowed_special="all"), back.encode_ordinary("abc ab<e>")
([257, 32, 256, 258], [257, 32, 256, 60, 101, 62])
"""

from __future__ import annotations

import copy
import json
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from bytepair import _core, patterns
from bytepair.bytes_unicode import encode_bytes
from bytepair.formats.builders import build
from bytepair.formats.common import StrPath, check_vocab, encoding_name, read_json, write_json
from bytepair.formats.hf_pipeline import AddedToken, _field, added_tokens_of
from bytepair.formats.regex_dialects import rust_to_onig
from bytepair.formats.sentencepiece_write import sentencepiece_tokenizer_json
from bytepair.formats.values import (
    HasVocabulary,
    HfComponents,
    RankVocabulary,
    SentencePieceComponents,
)

__all__ = [
    "BYTE_LEVEL",
    "UnappliedSetting",
    "load_tokenizer_json",
    "parse_tokenizer_json",
    "read_tokenizer_json",
    "tiktoken_compatibility",
    "tokenizer_json",
    "write_tokenizer_json",
]

BYTE_LEVEL: dict[str, Any] = {
    "type": "ByteLevel",
    "add_prefix_space": False,
    "trim_offsets": True,
    "use_regex": True,
}
"""GPT-2's pre-tokenizer (and, as a decoder, every byte-level model's)."""

_MODEL_KEYS = {
    "type",
    "vocab",
    "merges",
    "dropout",
    "unk_token",
    "continuing_subword_prefix",
    "end_of_word_suffix",
    "fuse_unk",
    "byte_fallback",
    "ignore_merges",
}


# The core's tables answer lookups as a read-only mapping of token -> id does.
Mapping.register(_core.ModelTables)


def read_tokenizer_json(path: StrPath, data: bytes | None = None) -> tuple[Any, Any]:
    """Parse a ``tokenizer.json``: ``(spec, tables)``.

    The core reads ``model.vocab`` and ``model.merges`` into compact tables (``tables``, a
    ``_core.ModelTables``; the spec then holds ``{}`` and ``[]`` in their place), so a huge
    vocabulary costs a small multiple of its file instead of a Python object per entry.
    Where the tables do not read cleanly (a repeated key, an id that is no small integer, a
    malformed merge), ``tables`` is None and the spec is the whole file, whose checks say what
    is wrong.
    """
    if data is None:
        data = Path(path).read_bytes()
    split = _core.split_model_tables(data)
    if split is None:
        return read_json(path, data), None
    rest, tables = split
    return read_json(path, rest), tables


def _merge_pairs(merges: Any, where: str) -> list[tuple[str, str]]:
    if not isinstance(merges, list):
        raise ValueError(f"{where}: expected a list")
    pairs: list[tuple[str, str]] = []
    for i, merge in enumerate(merges):
        if isinstance(merge, str):
            parts = merge.split(" ")
            if len(parts) == 2:
                pairs.append((parts[0], parts[1]))
                continue
        elif isinstance(merge, list) and len(merge) == 2 and all(isinstance(m, str) for m in merge):
            pairs.append((merge[0], merge[1]))
            continue
        raise ValueError(f'{where}[{i}]: expected "left right" or [left, right], got {merge!r}')
    return pairs


def _model_options(model: Mapping[str, Any], vocab: Mapping[str, int]) -> dict[str, Any]:
    """Check the BPE model's options; return those to keep (and to write back)."""
    kind = model.get("type", "BPE")
    if kind != "BPE":
        raise ValueError(f"model: unsupported model {kind!r}: bytepair reads byte-level BPE models")
    unknown = [k for k in model if k not in _MODEL_KEYS]
    if unknown:
        raise ValueError(f"model.{unknown[0]}: unsupported BPE option")
    dropout = model.get("dropout")
    if dropout not in (None, 0, 0.0):
        raise ValueError(f"model.dropout: unsupported dropout {dropout!r} (ids would be random)")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key) not in (None, ""):
            raise ValueError(
                f"model.{key}: unsupported {model[key]!r}: byte-level BPE uses no subword "
                "prefix or suffix"
            )
    # tokenizers falls back to <0xXX> tokens only for a byte-level character missing from the
    # vocabulary (with all 256 present, what BpeTrainer writes, it never does); the core does too.
    byte_fallback = _field(model, "byte_fallback", bool, "model", False)
    unk = model.get("unk_token")
    if unk is not None and (not isinstance(unk, str) or unk not in vocab):
        raise ValueError(f"model.unk_token: {unk!r} is not in model.vocab")
    return {
        "unk_token": unk,
        "fuse_unk": _field(model, "fuse_unk", bool, "model", False),
        "ignore_merges": _field(model, "ignore_merges", bool, "model", False),
        "byte_fallback": byte_fallback,
    }


def load_tokenizer_json(
    path: StrPath,
    *,
    data: Any = None,
    tables: Any = None,
    name: str | None = None,
    ignore_settings: Collection[str] = (),
) -> Any:
    """Read a Hugging Face ``tokenizer.json`` of a byte-level BPE model into an encoding.

    ``data`` may hold the parsed JSON already (the loaders that detect formats parse it once),
    with ``tables`` its model's tables (see :func:`read_tokenizer_json`).
    ``ignore_settings`` (``"padding"``, ``"truncation"``): settings of the file to read it without.
    """
    return build(
        parse_tokenizer_json(
            path, data=data, tables=tables, name=name, ignore_settings=ignore_settings
        )
    )


_SETTINGS = {
    "padding": "pads what encode returns with its pad token",
    "truncation": "cuts what encode returns at max_length",
}


class UnappliedSetting(ValueError):
    """A ``tokenizer.json`` setting that changes ``tokenizers``' ids and that bytepair does not
    apply; ``key`` is the setting, ``where`` what it does in the file."""

    def __init__(self, source: str, key: str, effect: str, value: Any) -> None:
        self.key = key
        self.where = (
            f"{source}: {key}: tokenizers {effect} ({json.dumps(value)}), which bytepair does "
            "not apply"
        )
        self.without = f"the ids of tokenizers after no_{key}()"
        super().__init__(
            f"{self.where}; pass ignore_settings=({key!r},) to read the file without it "
            f"({self.without}), or set it to null in the file"
        )


def _check_settings(spec: dict[str, Any], source: str, ignore_settings: Collection[str]) -> None:
    unknown = sorted(set(ignore_settings) - set(_SETTINGS))
    if unknown:
        raise ValueError(f"ignore_settings: unknown {unknown}; expected 'padding', 'truncation'")
    for key, effect in _SETTINGS.items():
        value = spec.get(key)
        if value is not None and key not in ignore_settings:
            raise UnappliedSetting(source, key, effect, value)


def parse_tokenizer_json(
    path: StrPath,
    *,
    data: Any = None,
    tables: Any = None,
    name: str | None = None,
    ignore_settings: Collection[str] = (),
) -> HfComponents:
    """The components of a ``tokenizer.json``, checked (see :func:`load_tokenizer_json`)."""
    source = str(path)
    spec, tables = read_tokenizer_json(path) if data is None else (data, tables)
    if not isinstance(spec, dict) or not isinstance(spec.get("model"), dict):
        raise ValueError(f"{source}: not a tokenizer.json (no 'model' object)")
    _check_settings(spec, source, ignore_settings)
    version = spec.get("version", "1.0")
    if version != "1.0":
        raise ValueError(f"{source}: version: unsupported tokenizer.json version {version!r}")
    model = spec["model"]
    try:
        if tables is None:
            vocab: Mapping[str, int] = check_vocab(model.get("vocab"), "model.vocab")
            merges: list[tuple[str, str]] | None = _merge_pairs(
                model.get("merges", []), "model.merges"
            )
        else:
            vocab, merges = tables, None
        options = _model_options(model, vocab)
        added = added_tokens_of(spec.get("added_tokens"), "added_tokens")
    except ValueError as err:
        raise ValueError(f"{source}: {err}") from None
    return HfComponents(
        name=name or encoding_name(path),
        source=source,
        vocab=vocab,
        merges=merges,
        merges_data=None,
        tables=tables,
        options=options,
        normalizer=spec.get("normalizer"),
        pre_tokenizer=spec.get("pre_tokenizer"),
        post_processor=spec.get("post_processor"),
        decoder=spec.get("decoder"),
        added=added,
    )


# ---- writing -------------------------------------------------------------------------------


def _vocab_string(token: bytes, in_alphabet: bool) -> str:
    return encode_bytes(token) if in_alphabet else token.decode("utf-8")


def _rank_mode_components(enc: RankVocabulary) -> dict[str, Any]:
    """The components of a tiktoken encoding, as a ``tokenizer.json`` spells them."""
    pattern = enc.pat_str
    if pattern in (patterns.GPT2, patterns.GPT2_ORIGINAL):
        pre_tokenizer: dict[str, Any] = dict(BYTE_LEVEL)
    else:
        pre_tokenizer = {
            "type": "Sequence",
            "pretokenizers": [
                # tiktoken keeps the pattern's matches and drops any text between them.
                {
                    "type": "Split",
                    "pattern": {"Regex": rust_to_onig(pattern)},
                    "behavior": "Removed",
                    "invert": True,
                },
                dict(BYTE_LEVEL, use_regex=False),
            ],
        }
    vocab = {encode_bytes(token): rank for token, rank in enc.ranks().items()}
    for text, token_id in enc.special_tokens.items():
        # tokenizers numbers a new added token after the model's vocabulary, so a special
        # token elsewhere (cl100k's <|endoftext|> = 100257) must also be in the vocabulary.
        vocab.setdefault(text, token_id)
    vocab = dict(sorted(vocab.items(), key=lambda kv: kv[1]))
    merges = [
        [encode_bytes(left), encode_bytes(right)]
        for _, split in enc.derived_merges()
        if split is not None
        for left, right in [split]
    ]
    added = [
        AddedToken(text, token_id).to_json()
        for text, token_id in sorted(enc.special_tokens.items(), key=lambda kv: kv[1])
    ]
    return {
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": None,
        "decoder": dict(BYTE_LEVEL),
        "model": _bpe(vocab, merges, ignore_merges=True),
    }


def _bpe(
    vocab: dict[str, int],
    merges: list[list[str]],
    *,
    ignore_merges: bool,
    unk_token: str | None = None,
    fuse_unk: bool = False,
    byte_fallback: bool = False,
) -> dict[str, Any]:
    return {
        "type": "BPE",
        "dropout": None,
        "unk_token": unk_token,
        "continuing_subword_prefix": None,
        "end_of_word_suffix": None,
        "fuse_unk": fuse_unk,
        "byte_fallback": byte_fallback,
        "ignore_merges": ignore_merges,
        "vocab": vocab,
        "merges": merges,
    }


def tokenizer_json(enc: HasVocabulary) -> dict[str, Any]:
    """The ``tokenizer.json`` of ``enc`` as a JSON object."""
    vocabulary = enc.vocabulary()
    if isinstance(vocabulary, SentencePieceComponents):
        return sentencepiece_tokenizer_json(vocabulary)
    if isinstance(vocabulary, RankVocabulary):
        body = _rank_mode_components(vocabulary)
    else:
        strings = {i: _vocab_string(b, alpha) for i, b, alpha in vocabulary.vocab()}
        vocab = {strings[i]: i for i in sorted(strings)}
        merges = [[strings[left], strings[right]] for left, right, _ in vocabulary.merges()]
        options = vocabulary.components["model_options"]
        config = copy.deepcopy(dict(vocabulary.components))
        body = {
            "added_tokens": config["added_tokens"],
            "normalizer": config["normalizer"],
            "pre_tokenizer": config["pre_tokenizer"],
            "post_processor": config["post_processor"],
            "decoder": config["decoder"],
            "model": _bpe(
                vocab,
                merges,
                ignore_merges=bool(options.get("ignore_merges")),
                unk_token=options.get("unk_token"),
                fuse_unk=bool(options.get("fuse_unk")),
                byte_fallback=bool(options.get("byte_fallback")),
            ),
        }
    return {"version": "1.0", "truncation": None, "padding": None, **body}


def write_tokenizer_json(enc: HasVocabulary, path: StrPath) -> list[Path]:
    """Write ``enc`` as ``tokenizer.json`` (``path`` may be a folder); returns the file written."""
    target = Path(path)
    if target.is_dir():
        target = target / "tokenizer.json"
    write_json(target, tokenizer_json(enc))
    return [target]


# ---- what the tiktoken and GPT-2 formats can hold ------------------------------------------


def tiktoken_compatibility(enc: HasVocabulary) -> str | None:
    """Why ``enc`` cannot be written as tiktoken ranks (plus a pattern), or None if it can.

    Encodings read from tiktoken or GPT-2 files always can. One read from Hugging Face files can
    when its model gives tiktoken's ids (checked exactly by the core: ids are merge ranks and the
    merges are those tiktoken's rule implies) and its pipeline is one pattern: no normalizer, no
    post-processor adding tokens, only special added tokens, and a pre-tokenizer that is
    ``ByteLevel`` alone or a ``Split`` keeping a pattern's matches followed by ``ByteLevel``.

    >>> ranks = {bytes([b]): b for b in range(256)}
    >>> from bytepair import Encoding
    >>> from bytepair.patterns import GPT2
    >>> tiktoken_compatibility(Encoding("b", pat_str=GPT2, mergeable_ranks=ranks,
    ...                                 special_tokens={})) is None
    True
    """
    vocabulary = enc.vocabulary()
    if isinstance(vocabulary, RankVocabulary):
        return None
    return vocabulary.rank_problem()
