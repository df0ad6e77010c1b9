"""Saving: load -> save -> load keeps every id, and tokenizers reads our tokenizer.json with the
same ids; bytepair.formats.convert (the engine of ``bytepair convert``)."""

from __future__ import annotations

import doctest
import importlib
import pickle
from pathlib import Path
from typing import Any

import pytest
import tokenizers
from formats_support import (
    IGNORED_SETTINGS,
    TOKENIZER_JSONS,
    corpus_samples,
    difference,
    hf_tokenizer,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import Encoding
from bytepair.formats import convert, load

from conftest import shared_path

# Round trips of every real vocabulary through every format: minutes, so out of the fast loop.
pytestmark = pytest.mark.slow

SMALL = 3000  # characters per corpus sample here: the point is the round trip, not the corpus

TIKTOKEN_NAMES = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base", "llama3"]


def _texts() -> list[str]:
    # Every fourth sample of every file's start and middle: the corpus-wide comparison is in
    # test_formats_hf_json; here the point is that nothing changes across a save.
    return [t for _, t in corpus_samples(SMALL)][::4]


@pytest.mark.parametrize("name", TIKTOKEN_NAMES)
def test_tiktoken_to_tokenizer_json(name: str, tmp_path: Path) -> None:
    enc = bytepair.get_encoding(name, vocab_dir=shared_path("vocab"))
    (path,) = enc.save(tmp_path, format="hf")
    tk = tokenizers.Tokenizer.from_file(str(path))
    back = Encoding.from_file(path)
    assert back.scanner == enc.scanner  # the pattern came back in a spelling the core knows
    texts = _texts()
    want = [enc.encode(t, allowed_special="all") for t in texts]
    ours_batch = back.encode_batch(texts, allowed_special="all")
    for w, hf, ours in zip(want, tk.encode_batch(texts), ours_batch, strict=True):
        assert hf.ids == w, difference(f"tokenizers on our {name} tokenizer.json", w, hf.ids)
        assert ours == w, difference(f"our {name} tokenizer.json", w, ours)
    assert back.decode(want[0]) == enc.decode(want[0])


@pytest.mark.parametrize("name", TIKTOKEN_NAMES)
def test_tiktoken_and_gpt2_formats_round_trip(name: str, tmp_path: Path) -> None:
    enc = bytepair.get_encoding(name, vocab_dir=shared_path("vocab"))
    (tiktoken_file,) = enc.save(tmp_path / f"{name}.tiktoken", format="tiktoken")
    again = Encoding.from_tiktoken_file(
        tiktoken_file, pat_str=enc.pat_str, special_tokens=enc._special_tokens
    )
    assert again._mergeable_ranks == enc._mergeable_ranks
    folder = tmp_path / "gpt2"
    folder.mkdir()
    encoder, merges = enc.save(folder, format="gpt2")
    gpt2 = Encoding.from_gpt2_files(encoder, merges, pat_str=enc.pat_str)
    assert gpt2._mergeable_ranks == enc._mergeable_ranks
    assert gpt2._special_tokens == enc._special_tokens
    text = corpus_samples(SMALL)[0][1]
    assert gpt2.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")


@pytest.mark.parametrize("key", sorted(TOKENIZER_JSONS))
def test_tokenizer_json_round_trip(key: str, tmp_path: Path) -> None:
    source = shared_path("vocab", TOKENIZER_JSONS[key])
    enc = Encoding.from_tokenizer_json(source, ignore_settings=IGNORED_SETTINGS)
    (path,) = enc.save(tmp_path / "tokenizer.json", format="hf")
    original, ours = hf_tokenizer(source), tokenizers.Tokenizer.from_file(str(path))
    back = Encoding.from_tokenizer_json(path)
    texts = _texts()
    want = [e.ids for e in original.encode_batch(texts)]
    for text, w, hf in zip(texts, want, ours.encode_batch(texts), strict=True):
        assert hf.ids == w, difference(f"tokenizers on our {key} tokenizer.json", w, hf.ids)
        got = back.encode(text, allowed_special="all")
        assert got == w, difference(f"our {key} tokenizer.json", w, got)


@pytest.mark.parametrize(
    ("folder", "options"),
    [
        ("qwen2", {"pat_str": "qwen2", "normalizer": "NFC"}),
        ("smollm", {"ignore_settings": IGNORED_SETTINGS}),
        ("gpt2-hf", {}),
    ],
)
def test_hf_files_to_tokenizer_json(folder: str, options: dict[str, Any], tmp_path: Path) -> None:
    enc = Encoding.from_file(shared_path("vocab", folder), **options)
    (path,) = enc.save(tmp_path, format="hf")
    tk = tokenizers.Tokenizer.from_file(str(path))
    for text in _texts():
        assert tk.encode(text).ids == enc.encode(text, allowed_special="all"), folder


def test_formats_that_cannot_hold_a_tokenizer_say_why(tmp_path: Path) -> None:
    vocab = shared_path("vocab")
    target = tmp_path / "out.tiktoken"
    target.write_bytes(b"old")
    cases = {
        "roberta-base/tokenizer.json": "post-processor adds tokens",
        "gpt-neox-20b/20B_tokenizer.json": "normalizer",
        "phi-2/tokenizer.json": "non-special added tokens",
        "falcon/tokenizer.json": "not a single pattern",
    }
    for file, why in cases.items():
        enc = Encoding.from_file(vocab / file)
        with pytest.raises(ValueError, match=why):
            enc.save(target, format="tiktoken")
        with pytest.raises(ValueError, match=why):
            enc.save(tmp_path, format="gpt2")
    assert target.read_bytes() == b"old"  # nothing half-written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.tiktoken"]


def test_convert(tmp_path: Path) -> None:
    vocab = shared_path("vocab")
    # tiktoken -> hf -> tiktoken, through files only.
    hf_folder = tmp_path / "hf"
    (json_path,) = convert(vocab / "cl100k_base" / "cl100k_base.tiktoken", hf_folder, to="hf")
    assert json_path == hf_folder / "tokenizer.json"
    (back,) = convert(hf_folder, tmp_path / "cl100k.tiktoken", to="tiktoken")
    assert back.read_bytes() == (vocab / "cl100k_base" / "cl100k_base.tiktoken").read_bytes()
    # gpt2 files -> tiktoken; Llama 3's tokenizer.model (recognised by content and sha256) -> hf.
    (r50k,) = convert(vocab / "gpt2", tmp_path / "r50k.tiktoken", to="tiktoken")
    assert r50k.read_bytes() == (vocab / "r50k_base" / "r50k_base.tiktoken").read_bytes()
    convert(vocab / "llama3" / "tokenizer.model", tmp_path / "llama3", to="gpt2")
    llama = load(tmp_path / "llama3", pat_str="llama3")
    assert llama.encode("This is a test sentence.") == [2028, 374, 264, 1296, 11914, 13]
    with pytest.raises(ValueError, match="pat_str"):
        convert(_renamed_unknown(r50k), tmp_path / "x", to="hf")


def _renamed_unknown(path: Path) -> Path:
    # A tiktoken file that is not one of the known ones (one rank dropped): no pattern known.
    lines = path.read_bytes().splitlines()
    other = path.with_name("unknown.tiktoken")
    other.write_bytes(b"\n".join(lines[:-1]) + b"\n")
    return other


def test_pickle_keeps_hugging_face_behaviour() -> None:
    enc = Encoding.from_tokenizer_json(shared_path("vocab", "roberta-base", "tokenizer.json"))
    again = pickle.loads(pickle.dumps(enc))
    text = "Hello <mask> world"
    ids = enc.encode(text, allowed_special="all")
    assert again.encode(text, allowed_special="all") == ids and ids[0] == 0 and 50264 in ids
    with pytest.raises(ValueError, match="disallowed special token '<mask>'"):
        again.encode(text)
    assert again.special_tokens_set == enc.special_tokens_set


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Encoding, tokenizers.Tokenizer]:
    text = shared_path("corpus", "english", "tinyshakespeare.txt").read_text("utf-8")[:200_000]
    enc = bytepair.train(text, vocab_size=600, pattern="cl100k", show_progress=False)
    folder = tmp_path_factory.mktemp("trained")
    (path,) = enc.save(folder, format="hf")
    return enc, tokenizers.Tokenizer.from_file(str(path))


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=60) | st.from_regex(r"[a-z ]{0,40}", fullmatch=True))
def test_trained_vocabulary_in_tokenizers(
    trained: tuple[Encoding, tokenizers.Tokenizer], text: str
) -> None:
    enc, tk = trained
    text = text.encode("utf-8", "replace").decode("utf-8")
    assert tk.encode(text).ids == enc.encode_ordinary(text)


@pytest.mark.parametrize(
    "module",
    [
        "bytepair.formats",
        "bytepair.formats.common",
        "bytepair.formats.detect",
        "bytepair.formats.gpt2",
        "bytepair.formats.hf_json",
        "bytepair.formats.hf_pipeline",
        "bytepair.formats.regex_dialects",
        "bytepair.formats.tiktoken_file",
    ],
)
def test_doctests(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


def test_encoding_method_doctests(doctest_namespace: dict[str, Any]) -> None:
    # The namespace pytest's doctests get (the root conftest.py puts byte_encoding in it).
    globs = {"Encoding": Encoding, **doctest_namespace}
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    for name in ("from_file", "from_gpt2_files", "from_hf_files", "from_tokenizer_json", "save"):
        for test in finder.find(getattr(Encoding, name), name, globs=globs):
            runner.run(test)
    assert runner.failures == 0 and runner.tries >= 5
