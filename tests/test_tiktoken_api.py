"""tiktoken's surface beyond encode/decode, against tiktoken itself (issue 30, points 2 and 3):
``encode_bytes`` / ``_encode_bytes``, ``encode_with_unstable``, ``_encode_single_piece``,
``_encode_only_native_bpe``, and the modules ``load``, ``model`` and ``core``."""

from __future__ import annotations

import pickle
import random
from pathlib import Path

import pytest
import tiktoken
import tiktoken.load
import tiktoken.model

import bytepair
from bytepair import load as bp_load
from bytepair.patterns import GPT2

from anchors import ours, tiktoken_encoding
from conftest import shared_path

NAMES = ["r50k_base", "cl100k_base", "o200k_base"]


def random_token_bytes(name: str, rng: random.Random, size: int) -> bytes:
    """Random tokens' bytes run together to about ``size`` bytes: mostly not valid UTF-8."""
    values = tiktoken_encoding(name).token_byte_values()
    out = bytearray()
    while len(out) < size:
        out += rng.choice(values)
    return bytes(out[:size])


def test_encode_bytes_examples_of_the_issue() -> None:
    enc = ours("cl100k_base")
    assert enc.encode_bytes(b" \xec\x8b\xa4\xed") == [62085]
    assert enc._encode_bytes(b"hello \xed") == [15339, 10997]
    assert enc.encode_bytes(b"hello world") == enc.encode_ordinary("hello world")
    assert enc.encode_bytes(b"") == []


@pytest.mark.parametrize("name", NAMES)
def test_encode_bytes_equals_tiktoken_on_random_token_bytes(name: str) -> None:
    enc, ref = ours(name), tiktoken_encoding(name)
    rng = random.Random(30 + len(name))
    for _ in range(60):
        data = random_token_bytes(name, rng, rng.choice([10, 30, 100, 400, 2000]))
        assert enc.encode_bytes(data) == ref._encode_bytes(data), data
        assert enc.decode_bytes(enc.encode_bytes(data)) == data


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_encode_bytes_equals_tiktoken_on_long_random_token_bytes(name: str) -> None:
    enc, ref = ours(name), tiktoken_encoding(name)
    rng = random.Random(300 + len(name))
    for _ in range(100):
        data = random_token_bytes(name, rng, rng.randint(10, 10_000))
        # Text cut inside a character, whitespace runs, a valid prefix: tiktoken's cases.
        cut = rng.randint(0, len(data))
        for case in (data, b"hello  \n\n" + data, data[:cut] + "é".encode()[:1]):
            assert enc.encode_bytes(case) == ref._encode_bytes(case)


def prefixes(text: str, step: int = 1) -> list[str]:
    return [text[:i] for i in range(0, len(text) + 1, step)]


SAMPLE = "Hello fanta, it's 2024!\n\n  def f(x):\n\treturn x  # ok\r\n日本語 テキスト\u3000end "


def check_unstable(name: str, step: int) -> None:
    enc, ref = ours(name), tiktoken_encoding(name)
    for text in prefixes(SAMPLE, step):
        stable, completions = enc.encode_with_unstable(text)
        ref_stable, ref_completions = ref.encode_with_unstable(text)
        assert stable == ref_stable, text
        assert sorted(map(tuple, completions)) == sorted(map(tuple, ref_completions)), text


@pytest.mark.parametrize("name", NAMES)
def test_encode_with_unstable_equals_tiktoken_for_prefixes(name: str) -> None:
    check_unstable(name, 5)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_encode_with_unstable_equals_tiktoken_for_every_prefix(name: str) -> None:
    check_unstable(name, 1)


def test_encode_with_unstable_special_tokens() -> None:
    enc, ref = ours("cl100k_base"), tiktoken_encoding("cl100k_base")
    for text in ["a<|endoftext|>", "a<|endoftext|> b", "<|endoftext|>"]:
        got = enc.encode_with_unstable(text, allowed_special="all")
        want = ref.encode_with_unstable(text, allowed_special="all")
        assert got[0] == want[0] and sorted(map(tuple, got[1])) == sorted(map(tuple, want[1]))
    with pytest.raises(ValueError, match="special token"):
        enc.encode_with_unstable("a<|endoftext|>")


@pytest.mark.parametrize("name", NAMES)
def test_single_piece_and_native_bpe_equal_tiktoken(name: str) -> None:
    enc, ref = ours(name), tiktoken_encoding(name)
    rng = random.Random(3)
    pieces: list[str | bytes] = ["helloqqqq", "hello world", " " * 300, "a" * 500, "日本語"]
    pieces += [random_token_bytes(name, rng, rng.randint(1, 200)) for _ in range(50)]
    for piece in pieces:
        assert enc._encode_single_piece(piece) == ref._encode_single_piece(piece), piece
    for text in prefixes(SAMPLE, 7):
        assert enc._encode_only_native_bpe(text) == ref._encode_only_native_bpe(text)


def test_hugging_face_encodings_refuse_the_rank_rule_methods(shared: object) -> None:
    enc = bytepair.Encoding.from_file(shared_path("vocab", "falcon", "tokenizer.json"))
    for call in (enc.encode_bytes, enc._encode_single_piece):
        with pytest.raises(ValueError, match="tiktoken's rank rule"):
            call(b"abc")


def test_import_bytepair_as_tiktoken_covers_its_modules() -> None:
    import bytepair as tk

    assert tk.core.Encoding is bytepair.Encoding
    assert tiktoken.model.MODEL_TO_ENCODING.items() <= tk.model.MODEL_TO_ENCODING.items()
    for model, name in tiktoken.model.MODEL_TO_ENCODING.items():
        assert tk.model.encoding_name_for_model(model) == name
    for prefix, name in tiktoken.model.MODEL_PREFIX_TO_ENCODING.items():
        assert tk.model.MODEL_PREFIX_TO_ENCODING[prefix] == name
        assert tk.model.encoding_name_for_model(prefix + "x") == name
    theirs = tiktoken.list_encoding_names()
    assert tk.list_encoding_names()[: len(theirs)] == theirs
    from bytepair.load import load_tiktoken_bpe  # as Llama 3's reference tokenizer imports it

    assert callable(load_tiktoken_bpe)


@pytest.mark.parametrize(
    "parts",
    [
        ("r50k_base", "r50k_base.tiktoken"),
        ("cl100k_base", "cl100k_base.tiktoken"),
        ("o200k_base", "o200k_base.tiktoken"),
        ("llama3", "tokenizer.model"),
        ("whisper-multilingual", "multilingual.tiktoken"),
    ],
)
def test_load_tiktoken_bpe_equals_tiktoken(parts: tuple[str, str]) -> None:
    path = str(shared_path("vocab", *parts))
    assert bp_load.load_tiktoken_bpe(path) == tiktoken.load.load_tiktoken_bpe(path)


def test_load_checks_the_hash_and_stays_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(shared_path("vocab", "r50k_base", "r50k_base.tiktoken"))
    sha = bytepair.registry.ENCODINGS["r50k_base"].file.sha256
    assert bp_load.read_file_cached(path, sha) == Path(path).read_bytes()
    with pytest.raises(ValueError, match="sha256"):
        bp_load.load_tiktoken_bpe(path, "0" * 64)
    monkeypatch.setenv("BYTEPAIR_OFFLINE", "1")
    with pytest.raises(FileNotFoundError, match="downloads are off"):
        bp_load.read_file("https://example.invalid/x.tiktoken")
    # A known URL resolves to the local copy, without the network.
    monkeypatch.setenv("BYTEPAIR_VOCAB_DIR", str(shared_path("vocab")))
    url = bytepair.registry.ENCODINGS["r50k_base"].file.url
    assert url is not None
    assert bp_load.load_tiktoken_bpe(url) == tiktoken.load.load_tiktoken_bpe(path)


def test_data_gym_to_mergeable_bpe_ranks_equals_tiktoken() -> None:
    merges = str(shared_path("vocab", "gpt2", "vocab.bpe"))
    encoder = str(shared_path("vocab", "gpt2", "encoder.json"))
    want = tiktoken.load.data_gym_to_mergeable_bpe_ranks(merges, encoder)
    assert bp_load.data_gym_to_mergeable_bpe_ranks(merges, encoder) == want


def test_whispers_vocabulary_with_its_empty_token_encodes_as_tiktoken() -> None:
    # Whisper's multilingual.tiktoken ends with "= 50256", an empty token; whisper builds its
    # tiktoken Encoding from these ranks (GPT-2's pattern, <|endoftext|> after them).
    path = shared_path("vocab", "whisper-multilingual", "multilingual.tiktoken")
    ranks = tiktoken.load.load_tiktoken_bpe(str(path))
    assert ranks[b""] == 50256
    specials = {"<|endoftext|>": 50257, "<|startoftranscript|>": 50258}
    theirs = tiktoken.Encoding("w", pat_str=GPT2, mergeable_ranks=ranks, special_tokens=specials)
    mine = bytepair.Encoding("w", pat_str=GPT2, mergeable_ranks=ranks, special_tokens=specials)
    loaded = bytepair.Encoding.from_file(path, pat_str=GPT2, special_tokens=specials)
    text = "Hello, 世界! こんにちは <|endoftext|> Ça va? 🎵" * 3
    for enc in (mine, loaded):
        assert enc.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
        assert enc.n_vocab == theirs.n_vocab
        assert enc.decode_single_token_bytes(50256) == b""
        assert enc.decode([50256, 15947]) == theirs.decode([50256, 15947])
    again = pickle.loads(pickle.dumps(loaded))
    assert again.encode(text, disallowed_special=()) == mine.encode(text, disallowed_special=())
