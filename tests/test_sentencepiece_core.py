"""The compiled SentencePiece encoder (``_core.SentencePieceEncoder``) against its oracles:
sentencepiece itself for ``.model`` files (llama2 and Mistral's), and ``tokenizers`` for the
Hugging Face flavour of llama2. Drives ``_core`` directly: the package's loaders are not used."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import mistral_common
import pytest
import sentencepiece
import tokenizers

from bytepair import _core

from conftest import shared_path

MISTRAL_DATA = Path(mistral_common.__file__).parent / "data"
MISTRAL_MODELS = [
    "tokenizer.model.v1",
    "mistral_instruct_tokenizer_240216.model.v2",
    "mistral_instruct_tokenizer_240323.model.v3",
    "mistral_instruct_tokenizer_241114.model.v7",
]
MODELS = ["llama2", *MISTRAL_MODELS]
CONTROL, UNKNOWN, BYTE = 3, 2, 6
FAST_FILES = [
    "english/wikipedia_xquad_en_paragraphs.txt",
    "multilingual/wikipedia_xquad_el_greek.txt",
    "code/rust_regex_1.7.1_src.rs",
    "edge/emoji_zwj_flags_skin_tones.txt",
    "edge/control_chars_c0_c1_nul.txt",
    "edge/random_unicode_all_planes.txt",
    "edge/special_token_lookalikes.txt",
]


def model_path(name: str) -> Path:
    if name == "llama2":
        return shared_path("vocab", "llama2", "tokenizer.model")
    return MISTRAL_DATA / name


def sp_encoder(data: bytes) -> _core.SentencePieceEncoder:
    """The encoder of a ``.model`` file, its CONTROL pieces as the special tokens."""
    model = _core.parse_sentencepiece_model(data)
    assert model["model_type"] == "BPE"
    trainer, normalizer = model["trainer"], model["normalizer"]
    pieces = model["pieces"]
    return _core.SentencePieceEncoder(
        pieces,
        byte_fallback=trainer["byte_fallback"],
        unk_id=next(i for i, p in enumerate(pieces) if p[2] == UNKNOWN),
        prepend="always" if normalizer["add_dummy_prefix"] else "never",
        remove_extra_whitespaces=normalizer["remove_extra_whitespaces"],
        escape_whitespaces=normalizer["escape_whitespaces"],
        treat_whitespace_as_suffix=trainer["treat_whitespace_as_suffix"],
        precompiled_charsmap=normalizer["precompiled_charsmap"] or None,
        unk_surface=trainer["unk_surface"],
        special_tokens={p[0]: i for i, p in enumerate(pieces) if p[2] == CONTROL},
    )


def hf_encoder(path: Path) -> _core.SentencePieceEncoder:
    """The encoder of a ``tokenizer.json`` with a BPE model and a Metaspace pre-tokenizer."""
    config: dict[str, Any] = json.loads(path.read_text("utf-8"))
    model, pre = config["model"], config["pre_tokenizer"]
    assert model["type"] == "BPE" and pre["type"] == "Metaspace"
    vocab: dict[str, int] = model["vocab"]
    specials = {t["content"]: t["id"] for t in config["added_tokens"] if t["special"]}
    pieces: list[tuple[str, float, int]] = [("", 0.0, 1)] * (max(vocab.values()) + 1)
    for token, i in vocab.items():
        if token == model["unk_token"]:
            kind = UNKNOWN
        elif token in specials:
            kind = CONTROL
        elif re.fullmatch(r"<0x[0-9A-F]{2}>", token):
            kind = BYTE
        else:
            kind = 1
        pieces[i] = (token, 0.0, kind)
    merges = [m.split(" ", 1) if isinstance(m, str) else m for m in model["merges"]]
    return _core.SentencePieceEncoder(
        pieces,
        merges=[(vocab[a], vocab[b]) for a, b in merges],
        byte_fallback=model["byte_fallback"],
        unk_id=vocab.get(model["unk_token"]),
        prepend={"always": "always_unless_present"}.get(
            pre["prepend_scheme"], pre["prepend_scheme"]
        ),
        remove_extra_whitespaces=False,
        escape_whitespaces=True,
        treat_whitespace_as_suffix=False,
        replacement=pre["replacement"],
        split_on_replacement=pre["split"],
        fuse_unk=model["fuse_unk"],
        ignore_merges=model["ignore_merges"],
        decoder="hf",
        unk_surface=model["unk_token"],
        special_tokens=specials,
    )


@pytest.fixture(scope="module", params=MODELS)
def sp_pair(request: pytest.FixtureRequest) -> tuple[Any, _core.SentencePieceEncoder]:
    data = model_path(request.param).read_bytes()
    return sentencepiece.SentencePieceProcessor(model_proto=data), sp_encoder(data)


@pytest.fixture(scope="module")
def hf_pair() -> tuple[tokenizers.Tokenizer, _core.SentencePieceEncoder]:
    path = shared_path("vocab", "llama2", "tokenizer.json")
    return tokenizers.Tokenizer.from_file(str(path)), hf_encoder(path)


def fast_lines() -> list[str]:
    lines: list[str] = []
    for name in FAST_FILES:
        text = shared_path("corpus", name).read_text("utf-8", errors="replace")
        lines.extend(text.splitlines()[:50])
    lines += ["", " ", "  two  spaces  ", "\u2581lead", "trail\u2581", "a\u2581\u2581b", "<s>x</s>"]
    return lines


def corpus_files() -> list[Path]:
    root = shared_path("corpus")
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name != "MANIFEST.tsv")


def first_difference(ours: list[int], theirs: list[int]) -> str:
    at = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), None)
    at = min(len(ours), len(theirs)) if at is None else at
    return f"first difference at id {at}: ours {ours[at : at + 8]}, theirs {theirs[at : at + 8]}"


def test_model_dict_shape_and_round_trip() -> None:
    data = model_path("llama2").read_bytes()
    model = _core.parse_sentencepiece_model(data)
    assert model["model_type"] == "BPE"
    assert len(model["pieces"]) == 32000
    assert model["pieces"][:3] == [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3)]
    assert model["trainer"]["byte_fallback"] is True
    assert model["trainer"]["unk_surface"] == " \u2047 "
    assert model["normalizer"]["name"] == "identity"
    assert model["normalizer"]["add_dummy_prefix"] is True
    written = _core.write_sentencepiece_model(model)
    assert _core.parse_sentencepiece_model(written) == model
    # sentencepiece loads what we write, and encodes as from the original.
    text = "Hello  world, \u00e9t\u00e9 \u4e2d\u6587!"
    original = sentencepiece.SentencePieceProcessor(model_proto=data)
    rewritten = sentencepiece.SentencePieceProcessor(model_proto=written)
    assert rewritten.encode(text) == original.encode(text)


def test_malformed_model_is_a_value_error() -> None:
    data = model_path("llama2").read_bytes()
    with pytest.raises(ValueError, match=r"^sentencepiece model: "):
        _core.parse_sentencepiece_model(data[:1001])
    with pytest.raises(KeyError, match='no "pieces"'):
        _core.write_sentencepiece_model({"model_type": "BPE"})


def test_mistral_models_are_bpe() -> None:
    for name in MISTRAL_MODELS:
        model = _core.parse_sentencepiece_model(model_path(name).read_bytes())
        assert model["model_type"] == "BPE", name


def test_lines_equal_sentencepiece(sp_pair: tuple[Any, _core.SentencePieceEncoder]) -> None:
    sp, enc = sp_pair
    for line in fast_lines():
        theirs = sp.encode(line)
        assert enc.encode_ordinary(line) == theirs, line
        assert enc.count_ordinary(line) == len(theirs)
        assert enc.decode(theirs) == sp.decode(theirs), line


def test_lines_equal_tokenizers(
    hf_pair: tuple[tokenizers.Tokenizer, _core.SentencePieceEncoder],
) -> None:
    tok, enc = hf_pair
    allowed = enc.special_set(["<s>", "</s>"])
    for line in fast_lines():
        theirs = tok.encode(line, add_special_tokens=False).ids
        assert enc.encode(line, allowed) == theirs, line
        assert enc.decode(theirs) == tok.decode(theirs), line


def test_specials_split_segments(sp_pair: tuple[Any, _core.SentencePieceEncoder]) -> None:
    sp, enc = sp_pair
    allowed = enc.special_set(["<s>", "</s>"])
    text = "<s>Hello</s> world<s>"
    expected = [1, *sp.encode("Hello"), 2, *sp.encode(" world"), 1]
    assert enc.encode(text, allowed) == expected
    assert enc.count(text, allowed) == len(expected)
    # Not allowed, "<s>" is text, as for sentencepiece.
    assert enc.encode_ordinary(text) == sp.encode(text)


def test_random_byte_pieces_decode_as_sentencepiece(
    sp_pair: tuple[Any, _core.SentencePieceEncoder],
) -> None:
    sp, enc = sp_pair
    rng = random.Random(7)
    pieces = enc.pieces()
    byte_ids = [i for i, p in enumerate(pieces) if p[2] == BYTE]
    other = [i for i, p in enumerate(pieces) if p[2] != BYTE]
    for _ in range(300):
        ids = [
            rng.choice(byte_ids) if rng.random() < 0.7 else rng.choice(other)
            for _ in range(rng.randrange(1, 12))
        ]
        assert enc.decode(ids) == sp.decode(ids), ids


def test_piece_lookups(sp_pair: tuple[Any, _core.SentencePieceEncoder]) -> None:
    sp, enc = sp_pair
    for i in [0, 1, 2, 3, 100, 1000, sp.get_piece_size() - 1]:
        piece = sp.id_to_piece(i)
        assert enc.id_to_piece(i) == piece
        assert enc.piece_to_id(piece) == i
    assert enc.piece_to_id("no such piece \u2603") is None
    with pytest.raises(KeyError):
        enc.id_to_piece(sp.get_piece_size())
    assert enc.decode_bytes(sp.encode("a b")) == b" a b"


@pytest.mark.slow
def test_corpus_equals_sentencepiece(sp_pair: tuple[Any, _core.SentencePieceEncoder]) -> None:
    sp, enc = sp_pair
    for path in corpus_files():
        text = path.read_text("utf-8", errors="replace")
        theirs = sp.encode(text)
        ours = enc.encode_ordinary(text)
        assert ours == theirs, f"{path.name}: {first_difference(ours, theirs)}"
        assert enc.decode(theirs) == sp.decode(theirs), path.name


@pytest.mark.slow
def test_corpus_equals_tokenizers(
    hf_pair: tuple[tokenizers.Tokenizer, _core.SentencePieceEncoder],
) -> None:
    tok, enc = hf_pair
    allowed = enc.special_set(["<s>", "</s>"])
    for path in corpus_files():
        text = path.read_text("utf-8", errors="replace")
        theirs = tok.encode(text, add_special_tokens=False).ids
        ours = enc.encode(text, allowed)
        assert ours == theirs, f"{path.name}: {first_difference(ours, theirs)}"
        assert enc.decode(theirs) == tok.decode(theirs), path.name
