"""SentencePiece ``.model`` files (Llama 2, Mistral): reading one into its components.

A ``.model`` file is a protobuf ``ModelProto`` (parsed in the core; a malformed one is parsed
again by :mod:`bytepair.reference.sentencepiece_proto`, whose error names the byte): the pieces
with their scores and types, and the trainer's and normalizer's settings. Only BPE models are
read (``UNIGRAM``, ``WORD`` and ``CHAR`` models raise ``ValueError`` naming the type and the
file), and only with the ``identity`` normalizer (no ``precompiled_charsmap``).

The ids are sentencepiece's: ``SentencePieceProcessor.encode`` joins pieces by score, treats
``"<s>"`` in text as ordinary text, and adds no ``<s>``/``</s>`` unless asked; so
``add_bos``/``add_eos`` are false and the control pieces are special tokens that a call must
allow.

>>> import pathlib, tempfile
>>> piece = b"\\x0a\\x05<unk>\\x18\\x02"  # "<unk>", type UNKNOWN
>>> trainer = b"\\x18\\x01"  # model_type UNIGRAM
>>> path = pathlib.Path(tempfile.mkdtemp()) / "u.model"
>>> _ = path.write_bytes(b"\\x0a\\x09" + piece + b"\\x12\\x02" + trainer)
>>> read_sentencepiece_model(path)
Traceback (most recent call last):
...
ValueError: ...u.model: a UNIGRAM sentencepiece model; bytepair reads BPE models only
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bytepair import _core
from bytepair.formats.common import StrPath, encoding_name
from bytepair.formats.values import SentencePieceComponents
from bytepair.reference.sentencepiece_proto import parse_sentencepiece_model

__all__ = ["components_of_model", "looks_like_sentencepiece_model", "read_sentencepiece_model"]

_UNKNOWN, _CONTROL = 2, 3


def looks_like_sentencepiece_model(data: bytes) -> bool:
    """Whether ``data`` starts as a ``ModelProto`` does: a piece (field 1) holding a piece
    string (field 1) that fits inside it.

    >>> looks_like_sentencepiece_model(b"\\x0a\\x09\\x0a\\x05<unk>\\x18\\x02")
    True
    >>> looks_like_sentencepiece_model(b"\\n\\n\\nIQ== 0\\n")
    False
    """
    if len(data) < 4 or data[0] != 0x0A:
        return False
    outer, at = _small_varint(data, 1)
    if outer is None or data[at : at + 1] != b"\x0a":
        return False
    inner, after = _small_varint(data, at + 1)
    return inner is not None and inner > 0 and after + inner <= at + outer <= len(data)


def _small_varint(data: bytes, at: int) -> tuple[int | None, int]:
    value = shift = 0
    for i in range(at, min(at + 5, len(data))):
        value |= (data[i] & 0x7F) << shift
        if data[i] < 0x80:
            return value, i + 1
        shift += 7
    return None, at


def read_sentencepiece_model(
    path: StrPath, *, data: bytes | None = None, name: str | None = None
) -> SentencePieceComponents:
    """Read the ``.model`` file at ``path`` (``data``: its bytes, if already read)."""
    if data is None:
        data = Path(path).read_bytes()
    try:
        model = _core.parse_sentencepiece_model(data)
    except ValueError:
        # The compiled parser says what is wrong; the reference parser also says where.
        try:
            parse_sentencepiece_model(data)
        except ValueError as err:
            raise ValueError(f"{path}: {err}") from None
        raise
    except OverflowError as err:
        raise ValueError(f"{path}: {err}") from None
    return components_of_model(model, data, source=str(path), name=name or encoding_name(path))


def components_of_model(
    model: dict[str, Any], data: bytes, *, source: str, name: str
) -> SentencePieceComponents:
    """The components of a parsed ``ModelProto`` (the dict of ``parse_sentencepiece_model``)."""
    kind = model["model_type"]
    if kind != "BPE":
        raise ValueError(f"{source}: a {kind} sentencepiece model; bytepair reads BPE models only")
    trainer, normalizer = model["trainer"], model["normalizer"]
    if normalizer["precompiled_charsmap"]:
        raise ValueError(
            f"{source}: normalizer_spec: the normalizer {normalizer['name']!r} has Unicode "
            "rules (precompiled_charsmap), which bytepair does not apply; only 'identity' "
            "models are supported"
        )
    pieces = [tuple(p) for p in model["pieces"]]
    if not pieces:
        raise ValueError(f"{source}: the model has no pieces")
    unknown = [i for i, (_, _, t) in enumerate(pieces) if t == _UNKNOWN]
    if len(unknown) != 1:
        raise ValueError(
            f"{source}: a model has exactly one piece of type UNKNOWN, this one {len(unknown)}"
        )

    def optional_id(key: str) -> int | None:
        value = trainer[key]
        if value < 0:
            return None
        if value >= len(pieces):
            raise ValueError(
                f"{source}: trainer_spec.{key} is {value}, but there are {len(pieces)} pieces"
            )
        return int(value)

    return SentencePieceComponents(
        name=name,
        source=source,
        source_format="sentencepiece-model",
        model_type=kind,
        pieces=pieces,
        merges=None,
        byte_fallback=trainer["byte_fallback"],
        unk_id=unknown[0],
        prepend="always" if normalizer["add_dummy_prefix"] else "never",
        remove_extra_whitespaces=normalizer["remove_extra_whitespaces"],
        escape_whitespaces=normalizer["escape_whitespaces"],
        treat_whitespace_as_suffix=trainer["treat_whitespace_as_suffix"],
        replacement="\u2581",
        split_on_replacement=False,
        precompiled_charsmap=None,
        fuse_unk=False,
        ignore_merges=False,
        decoder="sentencepiece",
        unk_surface=trainer["unk_surface"],
        special_tokens={p: i for i, (p, _, t) in enumerate(pieces) if t == _CONTROL},
        bos_id=optional_id("bos_id"),
        eos_id=optional_id("eos_id"),
        pad_id=optional_id("pad_id"),
        add_bos=False,
        add_eos=False,
        original=bytes(data),
    )
