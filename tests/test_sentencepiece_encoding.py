"""The SentencePiece model as users meet it: ``Encoding.from_file`` on Llama 2's ``.model`` and
``tokenizer.json``, against ``sentencepiece`` and ``tokenizers``; saving and converting; the
command line. (The core's ids on every corpus file: tests/test_sentencepiece_core.py; the
reference's: tests/test_sentencepiece_reference.py.)"""

from __future__ import annotations

import json
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest
import sentencepiece
import tokenizers
from click.testing import CliRunner

from bytepair import Encoding, formats
from bytepair.cli import cli
from bytepair.sentencepiece import SentencePieceEncoding

from conftest import shared_path

FILES = [
    "english/wikipedia_xquad_en_paragraphs.txt",
    "multilingual/wikipedia_xquad_zh_chinese.txt",
    "code/rust_regex_1.7.1_src.rs",
    "edge/special_token_lookalikes.txt",
    "edge/random_unicode_all_planes.txt",
]


def _llama(name: str) -> Path:
    return shared_path("vocab", "llama2", name)


@pytest.fixture(scope="module")
def model() -> tuple[SentencePieceEncoding, sentencepiece.SentencePieceProcessor]:
    enc = Encoding.from_file(_llama("tokenizer.model"))
    assert isinstance(enc, SentencePieceEncoding)
    return enc, sentencepiece.SentencePieceProcessor(model_file=str(_llama("tokenizer.model")))


@pytest.fixture(scope="module")
def hf() -> tuple[SentencePieceEncoding, tokenizers.Tokenizer]:
    enc = Encoding.from_file(_llama("tokenizer.json"))
    assert isinstance(enc, SentencePieceEncoding)
    return enc, tokenizers.Tokenizer.from_file(str(_llama("tokenizer.json")))


def _lines() -> list[str]:
    lines: list[str] = []
    for name in FILES:
        text = shared_path("corpus", name).read_text(encoding="utf-8", errors="replace")
        lines += text.splitlines()[:300]
    return [line for line in lines if line]


def test_model_ids_and_decode_equal_sentencepiece(model: tuple) -> None:  # type: ignore[type-arg]
    enc, sp = model
    lines = _lines()
    want = sp.encode(lines)
    assert enc.encode_ordinary_batch(lines) == want
    assert enc.encode_batch(lines, disallowed_special=()) == want
    assert enc.count_batch(lines, disallowed_special=()) == [len(ids) for ids in want]
    for line, ids in zip(lines[:400], want[:400], strict=False):
        assert enc.encode_ordinary(line) == ids
        assert enc.encode(line, disallowed_special=()) == ids
        assert enc.count(line, disallowed_special=()) == len(ids)
        assert enc.encode_to_numpy(line, disallowed_special=()).tolist() == ids
        assert enc.decode(ids) == sp.decode(ids)


def test_long_runs_of_one_character_equal_sentencepiece(model: tuple) -> None:  # type: ignore[type-arg]
    # Runs of one character long enough for the core's shortcut (64 characters and more),
    # at lengths around the longest run piece (16 spaces), alone and between words.
    enc, sp = model
    texts = []
    for n in [63, 64, 65, 79, 80, 81, 127, 128, 129, 1000, 4097]:
        texts += [" " * n, "x" + " " * n + "y", "a" * n, "\u2581" * n, "é" * n, "中" * n]
    texts.append(" " * 200_000)
    for text in texts:
        assert enc.encode_ordinary(text) == sp.encode(text), (text[:3], len(text))


def test_tokenizer_json_ids_and_decode_equal_tokenizers(hf: tuple) -> None:  # type: ignore[type-arg]
    enc, tk = hf
    lines = _lines()
    want = [e.ids for e in tk.encode_batch(lines)]
    assert enc.encode_batch(lines, allowed_special="all") == want
    for line, ids in zip(lines[:400], want[:400], strict=False):
        assert enc.encode(line, allowed_special="all") == ids
        assert enc.decode(ids) == tk.decode(ids, skip_special_tokens=False)
        assert enc.decode(ids, skip_special_tokens=True) == tk.decode(ids)


def test_special_tokens_follow_tiktoken_rules(model: tuple, hf: tuple) -> None:  # type: ignore[type-arg]
    enc, sp = model
    with pytest.raises(ValueError, match="disallowed special token '<s>'"):
        enc.encode("a <s> b")
    assert enc.encode_ordinary("a <s> b") == sp.encode("a <s> b")  # text, as sentencepiece has it
    # Allowed: the text around it is encoded on its own, each part with the dummy prefix.
    assert enc.encode("<s>hi", allowed_special="all") == [1, *sp.encode("hi")]
    assert (enc.bos_id, enc.eos_id, enc.unk_id, enc.pad_id, enc.eot_token) == (1, 2, 0, None, 2)
    assert enc.id_to_piece(15043) == "▁Hello" and enc.piece_to_id("▁Hello") == 15043
    assert enc.piece_to_id("no such piece") is None
    with pytest.raises(KeyError, match="32000"):
        enc.id_to_piece(32000)
    # sentencepiece decodes control pieces as nothing; tokenizers writes them unless skipped.
    assert enc.decode([1, 15043, 2]) == "Hello" == sp.decode([1, 15043, 2])
    hf_enc, tk = hf
    assert hf_enc.decode([1, 15043, 2]) == tk.decode([1, 15043, 2], skip_special_tokens=False)


def test_bytes_pieces_decode_by_each_library_rule(model: tuple, hf: tuple) -> None:  # type: ignore[type-arg]
    (enc, sp), (hf_enc, tk) = model, hf
    broken = [15043, 3 + 0xE6, 3 + 0x97, 3 + 0xFF, 29871]  # "▁Hello", two of three bytes, 0xFF
    assert enc.decode(broken) == sp.decode(broken)
    assert hf_enc.decode(broken) == tk.decode(broken)
    with pytest.raises(UnicodeDecodeError):
        enc.decode(broken, errors="strict")
    assert enc.decode([15043], errors="strict") == "Hello"
    with pytest.raises(ValueError, match="errors='ignore'"):
        enc.decode(broken, errors="ignore")
    with pytest.raises(KeyError, match="99999"):
        enc.decode([99999])


def test_a_post_processor_adds_its_tokens(tmp_path: Path) -> None:
    spec = json.loads(_llama("tokenizer.json").read_text(encoding="utf-8"))
    spec["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [
            {"SpecialToken": {"id": "<s>", "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}},
        ],
        "pair": [],
        "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}},
    }
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    enc, tk = Encoding.from_file(path), tokenizers.Tokenizer.from_file(str(path))
    for text in ["Hello world", "", " x"]:
        ids = tk.encode(text).ids
        assert enc.encode(text) == ids and enc.count(text) == len(ids)
        assert enc.encode_batch([text]) == [ids] and enc.count_batch([text]) == [len(ids)]
        assert enc.encode_to_numpy(text).tolist() == ids
        no_bos = tk.encode(text, add_special_tokens=False).ids
        assert enc.encode(text, add_special_tokens=False) == no_bos == enc.encode_ordinary(text)


def test_save_writes_what_was_read(model: tuple, hf: tuple, tmp_path: Path) -> None:  # type: ignore[type-arg]
    (enc, _), (hf_enc, tk) = model, hf
    (written,) = enc.save(tmp_path, format="sentencepiece")
    assert written.name == "tokenizer.model"
    assert written.read_bytes() == _llama("tokenizer.model").read_bytes()
    (again,) = hf_enc.save(tmp_path / "again.json", format="hf")
    assert json.loads(again.read_text(encoding="utf-8")) == json.loads(
        _llama("tokenizer.json").read_text(encoding="utf-8")
    )
    assert hf_enc.to_hf().encode("Hello  world").ids == tk.encode("Hello  world").ids


def test_a_model_converts_as_transformers_converts_it(model: tuple, tmp_path: Path) -> None:  # type: ignore[type-arg]
    enc, _ = model
    with pytest.warns(UserWarning, match="ids differ from sentencepiece's"):
        (written,) = enc.save(tmp_path, format="hf")
    # Llama 2's tokenizer.json was written by transformers' LlamaConverter: the same file.
    assert json.loads(written.read_text(encoding="utf-8")) == json.loads(
        _llama("tokenizer.json").read_text(encoding="utf-8")
    )
    with pytest.warns(UserWarning):
        assert enc.to_hf().encode("Hello world").ids == enc.encode("Hello world")


def test_what_cannot_be_written_is_refused(model: tuple, hf: tuple, tmp_path: Path) -> None:  # type: ignore[type-arg]
    (enc, _), (hf_enc, _) = model, hf
    with pytest.raises(ValueError, match="no piece scores"):
        hf_enc.save(tmp_path / "x.model", format="sentencepiece")
    for fmt in ("tiktoken", "gpt2"):
        with pytest.raises(ValueError, match="is a SentencePiece model"):
            enc.save(tmp_path / "out/", format=fmt)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="is a SentencePiece model"):
        enc.to_tiktoken()
    with pytest.raises(ValueError, match="is a SentencePiece model"):
        enc.with_special_tokens({"<x>": 40000})
    byte_level = Encoding(
        "b", pat_str="gpt2", mergeable_ranks={bytes([b]): b for b in range(256)}, special_tokens={}
    )
    with pytest.raises(ValueError, match="not a SentencePiece model"):
        byte_level.save(tmp_path / "b.model", format="sentencepiece")
    assert list(tmp_path.rglob("*")) == []  # nothing half-written


def test_a_model_whose_whitespace_rules_tokenizers_lacks_is_not_converted(tmp_path: Path) -> None:
    from sentencepiece import sentencepiece_model_pb2 as pb

    proto = pb.ModelProto()
    proto.ParseFromString(_llama("tokenizer.model").read_bytes())
    proto.normalizer_spec.remove_extra_whitespaces = True
    path = tmp_path / "collapsing.model"
    path.write_bytes(proto.SerializeToString())
    enc = Encoding.from_file(path)
    sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
    assert enc.encode_ordinary("  a   b  ") == sp.encode("  a   b  ")
    with pytest.raises(ValueError, match="remove_extra_whitespaces"):
        enc.save(tmp_path / "out.json", format="hf")
    assert not (tmp_path / "out.json").exists()


def test_pickle_keeps_the_model(model: tuple, hf: tuple) -> None:  # type: ignore[type-arg]
    for enc, _ in (model, hf):
        copy = pickle.loads(pickle.dumps(enc))
        assert type(copy) is SentencePieceEncoding
        assert copy.encode_ordinary(" Hello  wörld") == enc.encode_ordinary(" Hello  wörld")
        assert copy.decode([15043, 29871]) == enc.decode([15043, 29871])


def test_convert_and_the_command_line(tmp_path: Path) -> None:
    written = formats.convert(_llama("tokenizer.model"), tmp_path / "sp", to="sentencepiece")
    assert written[0].read_bytes() == _llama("tokenizer.model").read_bytes()
    runner = CliRunner()
    result = runner.invoke(
        cli, ["encode", "-t", str(_llama("tokenizer.model")), "Hello strawberry"]
    )
    assert result.exit_code == 0, result.output
    sp = sentencepiece.SentencePieceProcessor(model_file=str(_llama("tokenizer.model")))
    assert result.output.split() == [str(i) for i in sp.encode("Hello strawberry")]
    result = runner.invoke(
        cli,
        [
            "convert",
            str(_llama("tokenizer.json")),
            str(tmp_path / "x.model"),
            "--to",
            "sentencepiece",
        ],
    )
    assert result.exit_code != 0 and "no piece scores" in result.output
    assert not (tmp_path / "x.model").exists()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        result = runner.invoke(
            cli, ["convert", str(_llama("tokenizer.model")), str(tmp_path / "hf/"), "--to", "hf"]
        )
    assert result.exit_code == 0, result.output
    converted = Encoding.from_file(tmp_path / "hf" / "tokenizer.json")
    tk = tokenizers.Tokenizer.from_file(str(_llama("tokenizer.json")))
    assert converted.encode("Hello  world", allowed_special="all") == tk.encode("Hello  world").ids
    assert isinstance(np.asarray(converted.encode_to_numpy("x")), np.ndarray)
