"""ReferenceEncoding and pretokenize on their own: construction checks, round trips, the protocol.

The comparisons with tiktoken are in ``test_reference_conformance.py``.
"""

from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair.patterns import PATTERNS
from bytepair.reference import ReferenceEncoding, Tokenizer, load_tiktoken_bpe, pretokenize

from conftest import shared_path

BYTES = {bytes([b]): b for b in range(256)}


def toy(**overrides: object) -> ReferenceEncoding:
    kwargs: dict[str, object] = {
        "pat_str": "gpt2",
        "mergeable_ranks": BYTES | {b"ab": 256, b"abc": 257, b" a": 258},
        "special_tokens": {"<|end|>": 300, "<|start|>": 301},
    }
    kwargs.update(overrides)
    return ReferenceEncoding("toy", **kwargs)  # type: ignore[arg-type]


@functools.cache
def real(name: str) -> ReferenceEncoding:
    ranks = load_tiktoken_bpe(shared_path("vocab", name, f"{name}.tiktoken"))
    return ReferenceEncoding(name, pat_str=name, mergeable_ranks=ranks, special_tokens={})


# ---- construction -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"mergeable_ranks": {b"a": 0}},
            r"lacks 255 of the 256 single-byte tokens, e\.g\. b'\\x00'",
        ),
        (
            {"mergeable_ranks": BYTES | {b"ab": 5}},
            r"rank 5 is given to two tokens, b'\\x05' and b'ab'",
        ),
        ({"mergeable_ranks": BYTES | {b"ab": -1}}, r"maps bytes to ranks >= 0, got b'ab': -1"),
        ({"mergeable_ranks": BYTES | {"ab": 256}}, r"maps bytes to ranks >= 0, got 'ab'"),
        ({"special_tokens": {"<|end|>": 256}}, r"special token '<\|end\|>' has id 256, which is"),
        ({"special_tokens": {"<|end|>": 7}}, r"has id 7, which is already the id of b'\\x07'"),
        ({"special_tokens": {"": 400}}, r"special tokens are non-empty str"),
        ({"special_tokens": {"<|x|>": "1"}}, r"special token '<\|x\|>' has invalid id '1'"),
        ({"pat_str": "(unclosed"}, r"invalid pre-tokenizer pattern '\(unclosed'"),
        (
            {"explicit_n_vocab": 300},
            r"explicit_n_vocab=300, but there are 261 tokens with ids up to 301",
        ),
        (
            {"mergeable_ranks": BYTES | {b"xyz": 256}, "verify_tokens": True},
            r"e\.g\. b'xyz' \(rank 256\)",
        ),
    ],
)
def test_construction_errors(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        toy(**overrides)


def test_pattern_names_are_resolved() -> None:
    assert toy(pat_str="cl100k").pat_str == PATTERNS["cl100k"]
    assert toy(pat_str=r"\S+|\s+").pat_str == r"\S+|\s+"


def test_mappings_are_read_only_views() -> None:
    enc = toy()
    with pytest.raises(TypeError):
        enc.mergeable_ranks[b"zz"] = 999  # type: ignore[index]
    with pytest.raises(TypeError):
        enc.special_tokens["<|x|>"] = 999  # type: ignore[index]


def test_constructor_copies_its_inputs() -> None:
    ranks = BYTES | {b"ab": 256}
    enc = ReferenceEncoding("c", pat_str="gpt2", mergeable_ranks=ranks, special_tokens={})
    ranks[b"cd"] = 257
    assert b"cd" not in enc.mergeable_ranks
    assert enc.encode("cd") == [99, 100]


# ---- encode / decode ----------------------------------------------------------------------


def test_toy_ids() -> None:
    enc = toy()
    # In " ab", b"ab" (256) ranks before b" a" (258), so it is merged first.
    assert enc.encode("abc ab a") == [257, 32, 256, 258]
    assert enc.encode("ab<|end|>abc", allowed_special="all") == [256, 300, 257]
    assert enc.encode_ordinary("<|end|>")[:2] == [60, 124]
    assert enc.encode_single_token("<|start|>") == 301
    assert enc.encode_single_token(b"abc") == 257
    with pytest.raises(KeyError):
        enc.encode_single_token("abcd")


def test_empty_and_whitespace() -> None:
    enc = real("cl100k_base")
    assert enc.encode("") == [] and enc.decode([]) == "" and enc.decode_bytes([]) == b""
    for text in [" ", "\n", "\r\n", "\t\t", " " * 100, "\n" * 50]:
        assert enc.decode(enc.encode(text)) == text


def test_decoding() -> None:
    enc = toy()
    ids = enc.encode("é")
    assert enc.decode_bytes(ids) == "é".encode()
    assert enc.decode(ids[:1]) == "\ufffd"
    assert enc.decode(ids[:1], errors="ignore") == ""
    with pytest.raises(UnicodeDecodeError):
        enc.decode(ids[:1], errors="strict")
    assert enc.decode_tokens_bytes([257, 300]) == [b"abc", b"<|end|>"]
    assert enc.decode_single_token_bytes(301) == b"<|start|>"
    with pytest.raises(KeyError, match="token id 299 is not in 'toy'"):
        enc.decode_bytes([1, 299])
    with pytest.raises(KeyError):
        enc.decode_single_token_bytes(299)


def test_properties() -> None:
    enc = toy()
    assert enc.n_vocab == 302 and enc.max_token_value == 301
    assert enc.special_tokens_set == {"<|end|>", "<|start|>"}
    with pytest.raises(KeyError):
        _ = enc.eot_token  # no <|endoftext|> in this vocabulary
    assert toy(special_tokens={"<|endoftext|>": 999}).eot_token == 999
    assert repr(enc) == "<ReferenceEncoding 'toy'>"


def test_satisfies_the_tokenizer_protocol() -> None:
    assert isinstance(toy(), Tokenizer)
    assert not isinstance(object(), Tokenizer)


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
@settings(max_examples=100, deadline=None)
@given(text=st.text())
def test_round_trip_any_text(name: str, text: str) -> None:
    enc = real(name)
    ids = enc.encode(text, disallowed_special=())
    assert enc.decode_bytes(ids) == text.encode("utf-8")
    assert enc.decode(ids) == text


@settings(max_examples=100, deadline=None)
@given(text=st.text("ab <|end|>start", max_size=40))
def test_special_tokens_round_trip(text: str) -> None:
    enc = toy()
    ids = enc.encode(text, allowed_special="all")
    assert enc.decode(ids) == text
    assert (300 in ids) == ("<|end|>" in text)


# ---- pretokenize --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k", "llama3", "qwen2"])
@settings(max_examples=100, deadline=None)
@given(text=st.text())
def test_named_patterns_cover_every_character(name: str, text: str) -> None:
    assert "".join(pretokenize(text, name)) == text


def test_pretokenize_examples() -> None:
    assert pretokenize("I'm here  now\n\n", "gpt2") == ["I", "'m", " here", " ", " now", "\n\n"]
    assert pretokenize("12345 abc", "cl100k") == ["123", "45", " abc"]
    assert pretokenize("12345", "qwen2") == ["1", "2", "3", "4", "5"]
    assert pretokenize("HelloWorld", "o200k") == ["Hello", "World"]
    # Capturing groups do not change what a piece is; unmatched text is an error naming it.
    assert pretokenize("a1b22", r"(\d)+|[a-z]") == ["a", "1", "b", "22"]
    with pytest.raises(ValueError, match=r"at character 0 \('a'\)"):
        pretokenize("a1b22", r"\d+")
    with pytest.raises(ValueError, match=r"at character 3 \('x'\)"):
        pretokenize("a1bx", r"\d+|[ab]")
