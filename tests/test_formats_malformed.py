"""Malformed vocabulary files: a ValueError naming the file and the line or JSON path; never a
panic, never a half-built encoder; and format detection by content."""

from __future__ import annotations

import base64
import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair import Encoding
from bytepair.bytes_unicode import encode_bytes
from bytepair.formats import detect, load

from conftest import shared_path


def _tiny_vocab() -> dict[str, int]:
    return {encode_bytes(bytes([b])): b for b in range(256)} | {"ab": 256, "abc": 257}


def _write_pair(folder: Path, vocab: Any, merges: str, names: tuple[str, str]) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / names[0]).write_text(vocab if isinstance(vocab, str) else json.dumps(vocab), "utf-8")
    (folder / names[1]).write_text(merges, "utf-8")
    return folder


def _tokenizer_json(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "version": "1.0",
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "vocab": _tiny_vocab(), "merges": ["a b", "ab c"]},
    }
    data.update(changes)
    return data


def _expect_error(path: Path, *needles: str, **kwargs: Any) -> None:
    with pytest.raises(ValueError) as info:
        Encoding.from_file(path, **kwargs)
    message = str(info.value)
    for needle in (str(path), *needles):
        assert needle in message, message


# ---- tokenizer.json ---------------------------------------------------------------------------


def test_truncated_json_names_line_and_column(tmp_path: Path) -> None:
    text = shared_path("vocab", "gpt2-hf", "gpt2.json").read_text("utf-8")
    path = tmp_path / "tokenizer.json"
    path.write_text(text[: len(text) // 2], "utf-8")
    with pytest.raises(ValueError, match=r"tokenizer\.json:\d+:\d+: not valid JSON"):
        Encoding.from_tokenizer_json(path)


@pytest.mark.parametrize(
    ("merges", "needle"),
    [
        (["a b", "ab q"], "model.merges[1]"),
        (["a b", "abc d"], "model.merges[1]"),
        (["a b c"], "model.merges[0]"),
        ([["a", "b"], 7], "model.merges[1]"),
    ],
)
def test_bad_merges_name_the_json_path(merges: list[Any], needle: str, tmp_path: Path) -> None:
    data = _tokenizer_json()
    data["model"]["merges"] = merges
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), "utf-8")
    _expect_error(path, needle)


def test_bad_vocab_entries(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    data = _tokenizer_json()
    data["model"]["vocab"]["abc"] = 256  # two tokens with id 256
    path.write_text(json.dumps(data), "utf-8")
    _expect_error(path, "model.vocab", "id 256")
    for bad in (-1, 2**40, True, "7"):
        data["model"]["vocab"]["abc"] = bad
        path.write_text(json.dumps(data), "utf-8")
        _expect_error(path, "model.vocab", repr(bad))
    # A repeated key, which json.load would silently collapse.
    text = json.dumps(_tokenizer_json()).replace('"ab": 256', '"ab": 256, "ab": 258')
    path.write_text(text, "utf-8")
    _expect_error(path, "'ab' appears twice")
    data = _tokenizer_json(added_tokens=[{"id": "x", "content": "<s>"}])
    path.write_text(json.dumps(data), "utf-8")
    _expect_error(path, "added_tokens[0].id")


# ---- vocab.json / encoder.json + merges -------------------------------------------------------


@pytest.mark.parametrize("names", [("vocab.json", "merges.txt"), ("encoder.json", "vocab.bpe")])
def test_merge_naming_an_unknown_token(names: tuple[str, str], tmp_path: Path) -> None:
    folder = _write_pair(tmp_path / "v", _tiny_vocab(), "#version: 0.2\na b\nab q\n", names)
    _expect_error(folder / names[1], "line 3", '"q"')


@pytest.mark.parametrize("names", [("vocab.json", "merges.txt"), ("encoder.json", "vocab.bpe")])
def test_duplicate_ids(names: tuple[str, str], tmp_path: Path) -> None:
    vocab = _tiny_vocab() | {"abc": 256}
    folder = _write_pair(tmp_path / "v", vocab, "a b\nab c\n", names)
    _expect_error(folder / names[0], "id 256", "'ab'", "'abc'")


@pytest.mark.parametrize("names", [("vocab.json", "merges.txt"), ("encoder.json", "vocab.bpe")])
def test_malformed_merge_line(names: tuple[str, str], tmp_path: Path) -> None:
    folder = _write_pair(tmp_path / "v", _tiny_vocab(), "a b\nabc\n", names)
    _expect_error(folder / names[1], "line 2", "two tokens")


def test_gpt2_merges_out_of_rank_order(tmp_path: Path) -> None:
    folder = _write_pair(
        tmp_path / "v", _tiny_vocab(), "ab c\na b\n", ("encoder.json", "vocab.bpe")
    )
    _expect_error(folder / "vocab.bpe", "line 2", "order of the ids")


def test_gpt2_vocabulary_missing_a_byte(tmp_path: Path) -> None:
    vocab = _tiny_vocab()
    del vocab[encode_bytes(b"\x00")]
    folder = _write_pair(tmp_path / "v", vocab, "a b\n", ("encoder.json", "vocab.bpe"))
    _expect_error(folder / "encoder.json", "single-byte")


# ---- tiktoken -----------------------------------------------------------------------------


def _tiktoken_lines() -> list[bytes]:
    return [base64.b64encode(bytes([b])) + b" %d" % b for b in range(256)]


@pytest.mark.parametrize(
    ("line", "needle"),
    [(b"!!!! 256", "bad base64"), (b"YWI= x", "not a non-negative integer"), (b"YWI=", "")],
)
def test_bad_tiktoken_line(line: bytes, needle: str, tmp_path: Path) -> None:
    path = tmp_path / "v.tiktoken"
    path.write_bytes(b"\n".join([*_tiktoken_lines(), line]) + b"\n")
    with pytest.raises(ValueError) as info:
        Encoding.from_tiktoken_file(path, pat_str="gpt2")
    assert str(path) in str(info.value) and "line 257" in str(info.value)
    assert needle in str(info.value)


def test_tiktoken_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "v.tiktoken"
    path.write_bytes(b"\n".join([*_tiktoken_lines(), b"YWI= 255"]) + b"\n")
    _expect_error(path, "255", pat_str="gpt2")


@pytest.mark.parametrize(
    "name", ["tokenizer.json", "vocab.json", "x.tiktoken", "tokenizer.model", "merges.txt"]
)
def test_empty_files(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_bytes(b"")
    _expect_error(path, "empty")


def test_unknown_tiktoken_needs_a_pattern(tmp_path: Path) -> None:
    path = tmp_path / "v.tiktoken"
    path.write_bytes(b"\n".join(_tiktoken_lines()) + b"\n")
    _expect_error(path, "pat_str")
    assert Encoding.from_file(path, pat_str="gpt2").encode("ab") == [97, 98]


# ---- never a panic ------------------------------------------------------------------------------


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.binary(max_size=300)
    | st.builds(lambda s: s.encode("utf-8"), st.text(max_size=200))
    | st.builds(
        lambda lines: b"\n".join(lines),
        st.lists(st.sampled_from([b"YQ== 0", b"Yg== 1", b"!! 2", b"a b", b"{", b"#version: 0.2"])),
    ),
    name=st.sampled_from(["tokenizer.json", "vocab.json", "x.tiktoken", "merges.txt", "x.model"]),
)
def test_garbage_is_a_value_error(data: bytes, name: str, tmp_path: Path) -> None:
    folder = tmp_path / "g"
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    path = folder / name
    path.write_bytes(data)
    (folder / ("merges.txt" if name != "merges.txt" else "vocab.json")).write_bytes(data)
    pat_str = None if name in ("tokenizer.json", "vocab.json", "merges.txt") else "gpt2"
    # Loading garbage may succeed (a valid tiny vocabulary) or fail, but only with ValueError.
    with contextlib.suppress(ValueError):
        load(path, pat_str=pat_str)


# ---- detection by content ---------------------------------------------------------------------


def test_detection_by_content(tmp_path: Path) -> None:
    vocab = shared_path("vocab")
    assert detect(vocab / "llama3" / "tokenizer.model").kind == "tiktoken"
    assert detect(vocab / "gpt2-hf" / "gpt2.json").kind == "tokenizer-json"
    assert detect(vocab / "gpt2-hf" / "vocab.json").kind == "hf-files"
    assert detect(vocab / "gpt2-hf" / "merges.txt").kind == "hf-files"
    assert detect(vocab / "gpt2").kind == "gpt2"
    assert detect(vocab / "qwen2").kind == "hf-files"
    assert detect(vocab / "smollm").kind == "tokenizer-json"  # tokenizer.json wins in a folder
    # Names do not matter: a tokenizer.json under another name, a tiktoken file as ".txt".
    renamed = tmp_path / "something.txt"
    renamed.write_bytes((vocab / "cl100k_base" / "cl100k_base.tiktoken").read_bytes())
    enc = Encoding.from_file(renamed)
    assert enc.name == "cl100k_base" and enc.encode("hello world") == [15339, 1917]
    llama = Encoding.from_file(vocab / "llama3" / "tokenizer.model")
    assert llama.name == "llama3" and llama.encode("This is a test sentence.") == [
        2028,
        374,
        264,
        1296,
        11914,
        13,
    ]
    with pytest.raises(ValueError, match="unrecognised vocabulary format"):
        bad = tmp_path / "bad.bin"
        bad.write_bytes(b"\x00\x01 not a vocabulary\n")
        Encoding.from_file(bad)
    with pytest.raises(ValueError, match="no vocabulary found"):
        Encoding.from_file(_empty_dir(tmp_path))
    with pytest.raises(ValueError, match="own pre-tokenizer"):
        Encoding.from_file(vocab / "phi-2", pat_str="gpt2")


def _empty_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder
