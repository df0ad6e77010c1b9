"""The pure-Python SentencePiece reference against sentencepiece and ``tokenizers``.

Three oracles: ``sentencepiece`` reads the ``.model`` files (its generated protobuf classes check
our wire-format reader too), ``tokenizers`` reads the ``tokenizer.json``. Models come from
``../shared/vocab/llama2`` and the Mistral ``.model`` files inside the ``mistral_common`` wheel;
toy models are made by editing llama2's ``ModelProto`` to reach the settings real files lack.
"""

from __future__ import annotations

import os
import random
import struct
from functools import cache
from pathlib import Path
from typing import Any

import mistral_common
import pytest
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb
from tokenizers import Tokenizer

from bytepair.formats import load
from bytepair.formats.sentencepiece_model import components_of_model
from bytepair.reference.sentencepiece import SentencePieceReference
from bytepair.reference.sentencepiece_proto import parse_sentencepiece_model

from conftest import shared_path

MISTRAL_DATA = Path(os.path.dirname(mistral_common.__file__)) / "data"
MISTRAL_MODELS = sorted(p.name for p in MISTRAL_DATA.glob("*.model*"))

EDGE_TEXTS = [
    "",
    " ",
    "   ",
    "hello",
    " hello",
    "  hello",
    "hello ",
    "hello   world  ",
    "a\nb",
    "\n",
    "\n\n x",
    "\t x\t",
    "\r\n",
    "😀 👨‍👩‍👧 🇫🇷",
    "é\U0010ffff\u0378\ue000",  # unassigned and private-use: byte fallback
    "\x00\x01",
    "<s>",
    "a<s>b</s> c",
    "[INST] hi [/INST]",
    "\u2581hi \u2581",
    "1234567 3.14",
    "日本語のテキスト",
]


def _model_path(name: str) -> Path:
    return (
        shared_path("vocab", "llama2", "tokenizer.model")
        if name == "llama2"
        else MISTRAL_DATA / name
    )


@cache
def _sentencepiece(name: str) -> spm.SentencePieceProcessor:
    return spm.SentencePieceProcessor(model_file=str(_model_path(name)))


@cache
def _reference(name: str) -> SentencePieceReference:
    components = load(_model_path(name)).vocabulary()
    return SentencePieceReference(components.pieces, **components.encoder_options())


def _corpus_lines(max_chars: int, files_per_category: int | None = None) -> list[tuple[str, str]]:
    """Lines of every corpus file (or of the first few of each category), shuffled with a
    fixed seed, up to ``max_chars`` characters per file; very long lines are cut."""
    root = shared_path("corpus")
    out: list[tuple[str, str]] = []
    for category in sorted(p for p in root.iterdir() if p.is_dir()):
        files = sorted(category.iterdir())[:files_per_category]
        for path in files:
            text = path.read_bytes().decode("utf-8", errors="replace")
            lines = text.split("\n")
            random.Random(path.name).shuffle(lines)
            budget = max_chars
            for line in lines:
                line = line[:2000]
                out.append((path.name, line))
                budget -= len(line) + 1
                if budget <= 0:
                    break
    return out


# ---- the wire-format reader ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["llama2", *MISTRAL_MODELS])
def test_proto_reader_matches_sentencepiece(name: str) -> None:
    data = _model_path(name).read_bytes()
    got = parse_sentencepiece_model(data)
    want = pb.ModelProto()
    want.ParseFromString(data)
    assert got["model_type"] == pb.TrainerSpec.ModelType.Name(want.trainer_spec.model_type)
    assert got["pieces"] == [(p.piece, p.score, p.type) for p in want.pieces]
    for key, value in got["trainer"].items():
        assert value == getattr(want.trainer_spec, key), key
    for key, value in got["normalizer"].items():
        assert value == getattr(want.normalizer_spec, key), key
    # The processor agrees on every id's piece, score and kind.
    sp = _sentencepiece(name)
    assert len(got["pieces"]) == sp.get_piece_size()
    for i, (piece, score, kind) in enumerate(got["pieces"]):
        assert (sp.id_to_piece(i), sp.get_score(i)) == (piece, score)
        assert sp.is_control(i) == (kind == 3) and sp.is_byte(i) == (kind == 6)
        assert sp.is_unknown(i) == (kind == 2) and sp.is_unused(i) == (kind == 5)


def _toy(**fields: Any) -> pb.ModelProto:
    model = pb.ModelProto()
    piece = model.pieces.add()
    piece.piece, piece.type = "<unk>", 2
    for spec, values in fields.items():
        for key, value in values.items():
            setattr(getattr(model, spec), key, value)
    return model


def test_proto_defaults_negative_ints_and_unknown_fields() -> None:
    model = _toy(trainer_spec={"pad_id": -1, "unk_id": 0, "model_type": 2, "input_format": "x"})
    model.denormalizer_spec.name = "skipped"  # a field this reader does not keep
    data = model.SerializeToString()
    assert b"\xff" * 9 in data  # -1 takes ten bytes on the wire
    got = parse_sentencepiece_model(data)
    assert got["trainer"]["pad_id"] == -1 and got["model_type"] == "BPE"
    assert got["normalizer"] == {
        "name": "",
        "add_dummy_prefix": True,
        "remove_extra_whitespaces": True,
        "escape_whitespaces": True,
        "precompiled_charsmap": b"",
    }
    assert got["trainer"]["unk_surface"] == " \u2047 " and got["trainer"]["vocab_size"] == 8000
    # A group (wire types 3 and 4) of an unknown field is skipped; a repeated message merges.
    group = bytes([(9 << 3) | 3, 0x08, 0x01, (9 << 3) | 4])
    again = b"\x12\x02" + bytes([(4 << 3), 0x07])  # trainer_spec again: vocab_size 7
    merged = parse_sentencepiece_model(data + group + again)
    assert merged["trainer"]["vocab_size"] == 7 and merged["trainer"]["pad_id"] == -1


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x0a\x05\x0a", r"field 1 of ModelProto is 5 bytes long but only 1 remain at byte 2"),
        (b"\x0a", r"truncated varint at byte 1"),
        (b"\x08" + b"\xff" * 11, r"varint longer than 10 bytes at byte 1"),
        (b"\x08\x01", r"field 1 of ModelProto has wire type 0 \(varint\), expected 2 .* at byte 0"),
        (b"\x0a\x02\x08\x01", r"SentencePiece.piece \(field 1\) has wire type 0 .* at byte 2"),
        (b"\x0a\x03\x0a\x01\xff", r"a string field is not valid UTF-8 .* at byte 4"),
        (b"\x0a\x02\x18\x09", r"unknown piece type 9 at byte 3"),
        (b"\x12\x02\x18\x07", r"unknown model type 7 at byte 3"),
        (b"\x0a\x02\x15\x00", r"field 2 of SentencePiece needs 4 bytes at byte 3"),
        (b"\x0e", r"invalid wire type 6 in ModelProto at byte 0"),
        (b"\x00", r"field number 0 in ModelProto at byte 0"),
        (b"\x4b\x08\x01", r"group 9 in ModelProto never ends at byte 3"),
        (b"\x4c", r"group 9 ends in ModelProto but never started at byte 0"),
    ],
)
def test_malformed_models_name_the_byte(data: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=r"^sentencepiece model: " + message):
        parse_sentencepiece_model(data)


def test_truncated_real_model_is_refused() -> None:
    data = _model_path("llama2").read_bytes()
    for cut in (data[:-1], data[:3], data[: data.index(b"\x12", 200_000)]):
        with pytest.raises(ValueError, match=r"remain at byte \d+$|truncated varint at byte"):
            parse_sentencepiece_model(cut)


# ---- the .model flavour against sentencepiece ------------------------------------------------


def _check_sentencepiece(name: str, texts: list[tuple[str, str]]) -> None:
    sp, ref = _sentencepiece(name), _reference(name)
    for where, text in texts:
        want = sp.encode(text)
        assert ref.encode_ordinary(text) == want, (name, where, text[:80])
        assert ref.decode(want) == sp.decode(want), (name, where, text[:80])


@pytest.mark.parametrize("name", ["llama2", *MISTRAL_MODELS])
def test_model_flavour_matches_sentencepiece_on_edge_texts(name: str) -> None:
    _check_sentencepiece(name, [("edge", t) for t in EDGE_TEXTS])


def test_model_flavour_matches_sentencepiece_on_a_sample() -> None:
    texts = _corpus_lines(400, files_per_category=3)
    for name in ("llama2", "mistral_instruct_tokenizer_241114.model.v7"):
        _check_sentencepiece(name, texts)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["llama2", *MISTRAL_MODELS])
def test_model_flavour_matches_sentencepiece_on_every_corpus_file(name: str) -> None:
    _check_sentencepiece(name, _corpus_lines(8000))


def test_decode_matches_both_libraries_on_random_ids() -> None:
    # Runs of byte pieces that are not UTF-8, control pieces, <unk>, leading spaces.
    sp, ref = _sentencepiece("llama2"), _reference("llama2")
    hf, hf_ref = _tokenizers(), _json_reference()
    rng = random.Random(0)
    pool = [*range(300), 259, 1678, 22172, 29871, 29892]
    for _ in range(3000):
        ids = [rng.choice(pool) for _ in range(rng.randrange(8))]
        assert ref.decode(ids) == sp.decode(ids), ids
        assert hf_ref.decode(ids) == hf.decode(ids), ids


def test_decode_bytes_is_the_text_with_the_dummy_prefix() -> None:
    ref = _reference("llama2")
    for text in EDGE_TEXTS[1:]:
        if "\u2581" not in text:  # a literal ▁ comes back as a space
            assert ref.decode_bytes(ref.encode_ordinary(text)) == b" " + text.encode()
    assert ref.decode_bytes([0, 1, 2, 13 + 3]) == b" \xe2\x81\x87 \x0d"
    assert ref.token_bytes(1) == b"" and ref.token_bytes(3 + 0xC3) == b"\xc3"


def test_allowed_specials_split_the_text_and_each_part_gets_the_prefix() -> None:
    sp, ref = _sentencepiece("llama2"), _reference("llama2")
    text = "hi<s> there</s>"
    assert ref.encode_ordinary(text) == sp.encode(text)  # "<s>" is text unless allowed
    assert ref.encode(text, {"<s>", "</s>"}) == [*sp.encode("hi"), 1, *sp.encode(" there"), 2]
    assert ref.encode(text, {"<s>"}) == [*sp.encode("hi"), 1, *sp.encode(" there</s>")]
    assert ref.encode(text, {"not special"}) == sp.encode(text)


def _edited_llama(edit: Any) -> tuple[spm.SentencePieceProcessor, SentencePieceReference]:
    model = pb.ModelProto()
    model.ParseFromString(_model_path("llama2").read_bytes())
    edit(model)
    data = model.SerializeToString()
    components = components_of_model(parse_sentencepiece_model(data), data, source="x", name="x")
    ref = SentencePieceReference(components.pieces, **components.encoder_options())
    return spm.SentencePieceProcessor(model_proto=data), ref


def _without_bytes(model: pb.ModelProto) -> None:
    model.trainer_spec.byte_fallback = False
    for piece in model.pieces:
        if piece.type == 6:
            piece.type = 1


def _unused_and_user_defined(model: pb.ModelProto) -> None:
    for piece in model.pieces:
        if piece.piece in ("▁the", "ing", "▁▁", "er"):
            piece.type = 5  # UNUSED: split back into what it was made of
        if piece.piece in ("▁hello", "ll", "▁", "world"):
            piece.type = 4  # USER_DEFINED: matched whole, never joined


EDITS = {
    "remove_extra_whitespaces": lambda m: setattr(
        m.normalizer_spec, "remove_extra_whitespaces", True
    ),
    "no_dummy_prefix": lambda m: setattr(m.normalizer_spec, "add_dummy_prefix", False),
    "no_escape": lambda m: setattr(m.normalizer_spec, "escape_whitespaces", False),
    "suffix": lambda m: setattr(m.trainer_spec, "treat_whitespace_as_suffix", True),
    "no_byte_fallback": _without_bytes,
    "unused_and_user_defined": _unused_and_user_defined,
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_settings_real_files_lack_match_sentencepiece(edit: str) -> None:
    sp, ref = _edited_llama(EDITS[edit])
    texts = [
        *EDGE_TEXTS,
        "  the  thing   is singing  ",
        "hello world, well hello!",
        "er▁er the▁",
        "\U0010ffff\U0010fffe x \ue000\ue001",
    ]
    texts += [line for _, line in _corpus_lines(300, files_per_category=2)]
    for text in texts:
        want = sp.encode(text)
        assert ref.encode_ordinary(text) == want, (edit, text[:80])
        assert ref.decode(want) == sp.decode(want), (edit, text[:80])


def test_constructor_refuses_what_it_cannot_do() -> None:
    components = load(_model_path("llama2")).vocabulary()
    options = components.encoder_options()
    with pytest.raises(ValueError, match=r"precompiled_charsmap: .* not supported"):
        SentencePieceReference(components.pieces, **{**options, "precompiled_charsmap": b"\x01"})
    with pytest.raises(ValueError, match="prepend: expected one of"):
        SentencePieceReference(components.pieces, **{**options, "prepend": "sometimes"})
    with pytest.raises(ValueError, match="unk_id: 1 is not a piece of type 2"):
        SentencePieceReference(components.pieces, **{**options, "unk_id": 1})
    with pytest.raises(ValueError, match=r"pieces\[3\]: 'x' is also pieces\[2\]"):
        SentencePieceReference([("<unk>", 0, 2), ("a", 0, 1), ("x", 0, 1), ("x", 0, 1)], **options)
    with pytest.raises(ValueError, match=r"token id 32000 is not in 0\.\.31999"):
        _reference("llama2").decode([32000])
    score = components.pieces[500][1]  # a float32 value, kept exactly
    assert struct.unpack("<f", struct.pack("<f", score))[0] == score != 0


# ---- the tokenizer.json flavour against tokenizers -------------------------------------------


@cache
def _tokenizers(path: str = "") -> Tokenizer:
    return Tokenizer.from_file(path or str(shared_path("vocab", "llama2", "tokenizer.json")))


@cache
def _json_reference(path: str = "") -> SentencePieceReference:
    components = load(path or shared_path("vocab", "llama2", "tokenizer.json")).vocabulary()
    return SentencePieceReference(components.pieces, **components.encoder_options())


def _check_tokenizers(texts: list[tuple[str, str]], path: str = "") -> None:
    hf, ref = _tokenizers(path), _json_reference(path)
    for where, text in texts:
        want = hf.encode(text, add_special_tokens=False).ids
        # tokenizers recognises its special tokens in any text: allow them all.
        assert ref.encode(text, "all") == want, (where, text[:80])
        assert ref.decode(want) == hf.decode(want), (where, text[:80])
        if "<s>" not in text and "</s>" not in text:
            assert ref.encode_ordinary(text) == want


def test_json_flavour_matches_tokenizers_on_edge_texts_and_a_sample() -> None:
    texts = [("edge", t) for t in EDGE_TEXTS] + _corpus_lines(400, files_per_category=3)
    _check_tokenizers(texts)


@pytest.mark.slow
def test_json_flavour_matches_tokenizers_on_every_corpus_file() -> None:
    _check_tokenizers(_corpus_lines(8000))


def test_json_and_model_flavours_differ_where_the_libraries_do() -> None:
    # Metaspace(prepend_scheme="first") adds no ▁ before a text that starts with a space,
    # sentencepiece always does; tokenizers' decode drops the space that sentencepiece keeps.
    model, json_ref = _reference("llama2"), _json_reference()
    assert model.encode_ordinary(" hello") == [29871, 22172]
    assert json_ref.encode_ordinary(" hello") == [22172]
    assert model.decode(model.encode_ordinary(" ")) == " "
    assert json_ref.decode(json_ref.encode_ordinary(" ")) == ""
    assert (model.decode([0]), json_ref.decode([0])) == (" \u2047 ", "<unk>")
    assert json_ref.encode("<s> hi", "all") == [1, 7251] and json_ref.decode([1, 7251]) == "hi"
