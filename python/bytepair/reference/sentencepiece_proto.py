"""Reading a SentencePiece ``.model`` file: the protobuf wire format, by hand.

A ``.model`` file is one ``ModelProto`` message (``src/sentencepiece_model.proto`` in
google/sentencepiece) in protobuf's binary wire format. The format is small enough to read in a
page of Python, and reading it here keeps the reference free of generated code:

- a message is a sequence of *fields*; each starts with a varint *key* ``field_number << 3 |
  wire_type``;
- wire type 0 is a varint (little-endian groups of 7 bits, the top bit saying "more"), 1 eight
  bytes, 2 a varint length then that many bytes (strings, bytes, nested messages), 5 four bytes
  (a ``float``); 3 and 4 start and end a group (a proto1 relic, only ever skipped);
- fields may come in any order and repeat: a repeated field appends, a scalar keeps the last
  value, a nested message merges; fields this reader does not know are skipped;
- an absent field has its proto2 default (``add_dummy_prefix`` is ``true``, ``pad_id`` ``-1``).

:func:`parse_sentencepiece_model` returns the dict of ``_core.parse_sentencepiece_model``; bad
input raises ``ValueError("sentencepiece model: <what> at byte <offset>")``.

>>> piece = b"\\x0a\\x05<unk>" + b"\\x15" + bytes(4) + b"\\x18\\x02"  # piece, score 0.0, UNKNOWN
>>> model = parse_sentencepiece_model(b"\\x0a" + bytes([len(piece)]) + piece)
>>> model["pieces"], model["model_type"], model["normalizer"]["add_dummy_prefix"]
([('<unk>', 0.0, 2)], 'UNIGRAM', True)
>>> parse_sentencepiece_model(b"\\x0a\\x05\\x0a")
Traceback (most recent call last):
...
ValueError: sentencepiece model: field 1 of ModelProto is 5 bytes long but only 1 remain at byte 2
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

__all__ = ["MODEL_TYPES", "PIECE_TYPES", "parse_sentencepiece_model"]

MODEL_TYPES = {1: "UNIGRAM", 2: "BPE", 3: "WORD", 4: "CHAR"}
"""``TrainerSpec.ModelType``."""

PIECE_TYPES = {1: "NORMAL", 2: "UNKNOWN", 3: "CONTROL", 4: "USER_DEFINED", 5: "UNUSED", 6: "BYTE"}
"""``ModelProto.SentencePiece.Type``."""

_VARINT, _FIXED64, _LENGTH, _GROUP_START, _GROUP_END, _FIXED32 = 0, 1, 2, 3, 4, 5

# Each field this reader keeps: number -> (name, wire type, how to turn the raw value into ours).
_Field = tuple[str, int, Callable[[Any, int], Any]]


def _error(what: str, at: int) -> ValueError:
    return ValueError(f"sentencepiece model: {what} at byte {at}")


def _int32(value: int, at: int) -> int:
    # An int32 is written as a 64-bit varint (negative ones take ten bytes); keep its low 32 bits.
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _bool(value: int, at: int) -> bool:
    return value != 0


def _float(value: bytes, at: int) -> float:
    return float(struct.unpack("<f", value)[0])


def _string(value: bytes, at: int) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _error(f"a string field is not valid UTF-8 ({err.reason})", at + err.start) from None


def _bytes(value: bytes, at: int) -> bytes:
    return bytes(value)


def _enum(names: dict[int, str], what: str) -> Callable[[Any, int], Any]:
    def convert(value: int, at: int) -> int:
        number = _int32(value, at)
        if number not in names:
            raise _error(f"unknown {what} {number}", at)
        return number

    return convert


_PIECE: dict[int, _Field] = {
    1: ("piece", _LENGTH, _string),
    2: ("score", _FIXED32, _float),
    3: ("type", _VARINT, _enum(PIECE_TYPES, "piece type")),
}
_TRAINER: dict[int, _Field] = {
    3: ("model_type", _VARINT, _enum(MODEL_TYPES, "model type")),
    4: ("vocab_size", _VARINT, _int32),
    22: ("split_by_whitespace", _VARINT, _bool),
    24: ("treat_whitespace_as_suffix", _VARINT, _bool),
    25: ("split_digits", _VARINT, _bool),
    26: ("allow_whitespace_only_pieces", _VARINT, _bool),
    35: ("byte_fallback", _VARINT, _bool),
    40: ("unk_id", _VARINT, _int32),
    41: ("bos_id", _VARINT, _int32),
    42: ("eos_id", _VARINT, _int32),
    43: ("pad_id", _VARINT, _int32),
    44: ("unk_surface", _LENGTH, _string),
}
_NORMALIZER: dict[int, _Field] = {
    1: ("name", _LENGTH, _string),
    2: ("precompiled_charsmap", _LENGTH, _bytes),
    3: ("add_dummy_prefix", _VARINT, _bool),
    4: ("remove_extra_whitespaces", _VARINT, _bool),
    5: ("escape_whitespaces", _VARINT, _bool),
}

_TRAINER_DEFAULTS: dict[str, Any] = {
    "model_type": 1,
    "vocab_size": 8000,
    "byte_fallback": False,
    "split_digits": False,
    "split_by_whitespace": True,
    "treat_whitespace_as_suffix": False,
    "allow_whitespace_only_pieces": False,
    "unk_id": 0,
    "bos_id": 1,
    "eos_id": 2,
    "pad_id": -1,
    "unk_surface": " \u2047 ",
}
_NORMALIZER_DEFAULTS: dict[str, Any] = {
    "name": "",
    "add_dummy_prefix": True,
    "remove_extra_whitespaces": True,
    "escape_whitespaces": True,
    "precompiled_charsmap": b"",
}
_PIECE_DEFAULTS: dict[str, Any] = {"piece": "", "score": 0.0, "type": 1}

_WIRE_NAMES = {0: "varint", 1: "64-bit", 2: "length-delimited", 3: "group", 4: "group", 5: "32-bit"}


def _varint(data: bytes, at: int, end: int) -> tuple[int, int]:
    """The varint at ``at`` and the position after it."""
    value = shift = 0
    start = at
    while True:
        if at >= end:
            raise _error("truncated varint", start)
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
        if shift >= 70:  # ten bytes hold 64 bits; an eleventh means garbage
            raise _error("varint longer than 10 bytes", start)


def _fields(data: bytes, at: int, end: int, message: str) -> Any:
    """Yield ``(field number, wire type, value, offset of the value)`` for each field."""
    groups: list[int] = []  # the field numbers of the groups we are inside (skipped)
    while at < end:
        key_at = at
        key, at = _varint(data, at, end)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise _error(f"field number 0 in {message}", key_at)
        value_at = at
        value: Any
        if wire == _VARINT:
            value, at = _varint(data, at, end)
        elif wire in (_FIXED64, _FIXED32):
            size = 8 if wire == _FIXED64 else 4
            if end - at < size:
                raise _error(f"field {number} of {message} needs {size} bytes", at)
            value, at = data[at : at + size], at + size
        elif wire == _LENGTH:
            size, at = _varint(data, at, end)
            if size > end - at:
                raise _error(
                    f"field {number} of {message} is {size} bytes long but only {end - at} remain",
                    at,
                )
            value_at, value, at = at, data[at : at + size], at + size
        elif wire == _GROUP_START:
            if not groups:
                yield number, wire, None, value_at, key_at
            groups.append(number)
            continue
        elif wire == _GROUP_END:
            if not groups or groups[-1] != number:
                raise _error(f"group {number} ends in {message} but never started", key_at)
            groups.pop()
            continue
        else:
            raise _error(f"invalid wire type {wire} in {message}", key_at)
        if not groups:
            yield number, wire, value, value_at, key_at
    if groups:
        raise _error(f"group {groups[-1]} in {message} never ends", end)


def _message(
    data: bytes, at: int, end: int, name: str, schema: dict[int, _Field], into: dict[str, Any]
) -> dict[str, Any]:
    """Read the known scalar fields of one message into ``into`` (a message that repeats merges)."""
    for number, wire, value, value_at, key_at in _fields(data, at, end, name):
        if number not in schema:
            continue
        key, expected, convert = schema[number]
        if wire != expected:
            raise _error(
                f"{name}.{key} (field {number}) has wire type {wire} ({_WIRE_NAMES[wire]}), "
                f"expected {expected} ({_WIRE_NAMES[expected]})",
                key_at,
            )
        into[key] = convert(value, value_at)
    return into


def parse_sentencepiece_model(data: bytes) -> dict[str, Any]:
    """The pieces and settings of a SentencePiece ``ModelProto`` (see the module docstring)."""
    data = bytes(data)
    pieces: list[tuple[str, float, int]] = []
    trainer = dict(_TRAINER_DEFAULTS)
    normalizer = dict(_NORMALIZER_DEFAULTS)
    submessages = {
        2: ("TrainerSpec", _TRAINER, trainer),
        3: ("NormalizerSpec", _NORMALIZER, normalizer),
    }
    for number, wire, value, value_at, key_at in _fields(data, 0, len(data), "ModelProto"):
        if number not in (1, 2, 3):
            continue  # self_test_data, denormalizer_spec, extensions
        if wire != _LENGTH:
            raise _error(
                f"field {number} of ModelProto has wire type {wire} ({_WIRE_NAMES[wire]}), "
                "expected 2 (length-delimited)",
                key_at,
            )
        end = value_at + len(value)
        if number == 1:
            piece = _message(data, value_at, end, "SentencePiece", _PIECE, dict(_PIECE_DEFAULTS))
            pieces.append((piece["piece"], piece["score"], piece["type"]))
        else:
            name, schema, into = submessages[number]
            _message(data, value_at, end, name, schema, into)
    return {
        "model_type": MODEL_TYPES[trainer.pop("model_type")],
        "pieces": pieces,
        "trainer": trainer,
        "normalizer": normalizer,
    }
