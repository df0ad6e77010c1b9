"""The registry: names, models, local files, offline errors; interop with tiktoken and HF."""

from __future__ import annotations

from pathlib import Path

import pytest

import bytepair
from bytepair import registry

from anchors import ours, tiktoken_encoding


def test_known_names_and_models() -> None:
    names = bytepair.list_encoding_names()
    for name in ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base"]:
        assert name in names
    assert "o200k_harmony" in names
    assert bytepair.encoding_name_for_model("gpt-4o-2024-08-06") == "o200k_base"
    assert bytepair.encoding_name_for_model("gpt-4.1-mini") == "o200k_base"
    assert bytepair.encoding_name_for_model("gpt-3.5-turbo-0125") == "cl100k_base"
    assert bytepair.encoding_name_for_model("text-davinci-003") == "p50k_base"
    with pytest.raises(KeyError, match="no tokenizer is known for model 'my-model'"):
        bytepair.encoding_name_for_model("my-model")
    with pytest.raises(ValueError, match="unknown encoding 'nope'"):
        bytepair.get_encoding("nope")


def test_offline_error_says_which_file_to_put_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BYTEPAIR_OFFLINE", "1")
    monkeypatch.setenv("BYTEPAIR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("BYTEPAIR_VOCAB_DIR", raising=False)
    with pytest.raises(FileNotFoundError) as error:
        registry.find_vocab_file("cl100k_base", vocab_dir=tmp_path)
    message = str(error.value)
    assert "cl100k_base.tiktoken" in message
    assert str(tmp_path / "cache") in message
    assert "BYTEPAIR_OFFLINE=1" in message


def test_cache_dir_is_used_and_hash_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from anchors import vocab_dir

    _, data = registry.find_vocab_file("r50k_base", vocab_dir=vocab_dir())
    monkeypatch.setenv("BYTEPAIR_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("BYTEPAIR_VOCAB_DIR", raising=False)
    registry.write_atomic(tmp_path / "r50k_base.tiktoken", data)
    path, again = registry.find_vocab_file("r50k_base")
    assert path == tmp_path / "r50k_base.tiktoken"
    assert again == data
    registry.write_atomic(tmp_path / "r50k_base.tiktoken", data[:-10])
    with pytest.raises(ValueError, match="sha256"):
        registry.find_vocab_file("r50k_base")


@pytest.mark.slow
def test_to_tiktoken_and_to_hf_give_the_same_ids() -> None:
    enc = ours("cl100k_base")
    text = "Héllo wörld, 你好! <|endoftext|> 12345 \n\n  code()"
    expected = tiktoken_encoding("cl100k_base").encode(text, disallowed_special=())
    assert enc.to_tiktoken().encode(text, disallowed_special=()) == expected
    hf = enc.to_hf()
    assert hf.encode(text.replace("<|endoftext|>", ""), add_special_tokens=False).ids == (
        enc.encode_ordinary(text.replace("<|endoftext|>", ""))
    )
