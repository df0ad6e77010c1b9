"""Every public method of Encoding on hostile arguments: a documented result or a clear exception.

Hostile means: wrong types, lone surrogates, text that decodes to invalid UTF-8, ids that are
negative, out of range or beyond 64 bits, empty input. The allowed outcomes are the documented
result, or ``TypeError`` (wrong type), ``ValueError`` (a disallowed special token, bad option;
``UnicodeDecodeError`` from ``errors="strict"`` is one), ``KeyError`` (an id or bytes that are no
token): never a crash, a hang, an ``OverflowError`` or an ``AttributeError``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair

from anchors import ours

CLEAR_ERRORS = (TypeError, ValueError, KeyError)


@functools.cache
def enc() -> bytepair.Encoding:
    return ours("cl100k_base")


@functools.cache
def chat_enc() -> bytepair.Encoding:
    return enc().with_special_tokens({"<|im_start|>": 100264, "<|im_end|>": 100265})


def repaired(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


# Text with everything Python strings can hold: lone surrogates, NUL, controls, astral planes,
# and pieces of special tokens.
TEXTS = st.lists(
    st.characters(categories=["Cs"])
    | st.characters()
    | st.sampled_from(["<|endoftext|>", "<|", "|>", "\x00", "\ud800", "\udfff", "\ufeff"]),
    max_size=40,
).map("".join)
# Ids of every kind: real ones, the gap after the specials, negative, huge, beyond 64 bits.
IDS = (
    st.integers(0, 100_276)
    | st.integers(-(2**70), 2**70)
    | st.sampled_from([-1, 100_261, 100_277, 2**31, 2**32, 2**63 - 1, 2**63, 2**64, -(2**63) - 1])
)
WRONG = st.sampled_from(
    [None, 1, -1, 2.5, b"bytes", bytearray(b"x"), ["a"], ("a",), {"a": 1}, {1}, object()]
)


def outcome(call: Callable[[], Any]) -> Any:
    """The result of ``call``, or the clear exception it raised (anything else fails)."""
    try:
        return call()
    except CLEAR_ERRORS as e:
        return e


# ---- text in ---------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(TEXTS)
def test_text_methods_on_any_text(text: str) -> None:
    e = enc()
    clean = repaired(text)
    has_special = any(t in clean for t in e.special_tokens_set)

    ordinary = e.encode_ordinary(text)
    assert e.decode(ordinary) == clean
    assert all(0 <= i < e.n_vocab and not e.is_special_token(i) for i in ordinary)
    assert e.count(text, disallowed_special=()) == len(ordinary)
    assert e.encode_ordinary_batch([text, text], num_threads=2) == [ordinary, ordinary]
    assert list(e.encode_to_numpy(text, disallowed_special=())) == ordinary

    result = outcome(lambda: e.encode(text))
    if has_special:
        assert isinstance(result, ValueError) and "disallowed special token" in str(result)
    else:
        assert result == ordinary
    assert isinstance(outcome(lambda: e.count(text)), ValueError if has_special else int)
    assert isinstance(outcome(lambda: e.encode_batch([text])), ValueError if has_special else list)
    assert isinstance(outcome(lambda: e.count_batch([text])), ValueError if has_special else list)

    everything = e.encode(text, allowed_special="all")
    assert e.decode(everything) == clean
    assert e.count(text, allowed_special="all") == len(everything)

    single = outcome(lambda: e.encode_single_token(text))
    assert isinstance(single, int | KeyError | ValueError)  # ValueError: a lone surrogate

    found = e.find_special(text)
    assert all(text[m.start : m.end] == m.text for m in found)
    assert e.find_special(e.sanitize(text)) == []
    chat = chat_enc()
    ids = chat.encode_chat([{"role": "user", "content": text}])
    assert [i for i in ids if chat.is_special_token(i)] == [100264, 100265]


@pytest.mark.parametrize(
    "method",
    [
        "encode",
        "encode_ordinary",
        "count",
        "encode_to_numpy",
        "encode_single_token",
        "find_special",
        "sanitize",
    ],
)
@settings(max_examples=25, deadline=None)
@given(WRONG)
def test_text_methods_reject_wrong_types(method: str, value: object) -> None:
    if method == "encode_single_token" and isinstance(value, bytes | bytearray):
        return  # bytes are a valid argument there
    with pytest.raises(TypeError):
        getattr(enc(), method)(value)


@pytest.mark.parametrize("method", ["encode_batch", "encode_ordinary_batch", "count_batch"])
def test_batch_methods_reject_wrong_types(method: str) -> None:
    call = getattr(enc(), method)
    for value in ["one text", b"bytes", None, 3, [None], ["ok", 3], [b"x"]]:
        with pytest.raises(TypeError):
            call(value)
    for threads in [0, -1, 257, 10**12]:
        with pytest.raises(ValueError, match="num_threads"):
            call(["a"], num_threads=threads)
    for threads in ["2", 2.0, None, True]:
        with pytest.raises(TypeError, match="num_threads"):
            call(["a"], num_threads=threads)
    assert call([]) == []
    assert call(["a"], num_threads=256) in ([[64]], [1])  # clamped to one thread per text


def test_special_token_options_reject_a_bare_string() -> None:
    with pytest.raises(TypeError, match=r"did you mean allowed_special=\{'<\|endoftext\|>'\}"):
        enc().encode("<|endoftext|>", allowed_special="<|endoftext|>")
    with pytest.raises(TypeError, match="disallowed_special"):
        enc().encode("x", disallowed_special="<|endoftext|>")
    assert enc().encode("<|endoftext|>", allowed_special="all") == [100257]


def test_empty_input() -> None:
    e = enc()
    assert e.encode("") == e.encode_ordinary("") == []
    assert e.count("") == 0
    assert list(e.encode_to_numpy("")) == []
    assert e.encode_batch([]) == e.encode_ordinary_batch([]) == [] == e.count_batch([])
    assert e.encode_batch([""]) == [[]]
    assert e.decode([]) == "" and e.decode_bytes([]) == b""
    assert e.decode_tokens_bytes([]) == [] and e.decode_with_offsets([]) == ("", [])
    assert e.decode_batch([]) == [] and e.decode_bytes_batch([[]]) == [b""]
    assert e.find_special("") == [] and e.sanitize("") == ""
    assert chat_enc().encode_chat([]) == []
    with pytest.raises(KeyError):
        e.encode_single_token("")
    with pytest.raises(KeyError):
        e.encode_single_token(b"")
    d = e.stream_decoder()
    assert d.feed_many([]) == "" and d.flush() == ""


# ---- ids in ----------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.lists(IDS, max_size=8))
def test_id_methods_on_any_ids(ids: list[int]) -> None:
    e = enc()
    # Valid: every id is a token (ids in the gap after cl100k's specials are not).
    valid = all(
        not isinstance(outcome(lambda i=i: e.decode_single_token_bytes(i)), KeyError) for i in ids
    )
    for call in [
        lambda: e.decode_bytes(ids),
        lambda: e.decode(ids),
        lambda: e.decode(ids, errors="strict"),
        lambda: e.decode_tokens_bytes(ids),
        lambda: e.decode_with_offsets(ids),
        lambda: e.decode_batch([ids, ids]),
        lambda: e.decode_bytes_batch([ids]),
        lambda: e.stream_decoder().feed_many(ids),
        lambda: [e.stream_decoder().feed(i) for i in ids],
    ]:
        result = outcome(call)
        if valid:
            assert not isinstance(result, KeyError)
        else:
            assert isinstance(result, KeyError), result
            assert "is not in the vocabulary" in str(result)
    if valid:
        data = e.decode_bytes(ids)
        assert data == b"".join(e.decode_tokens_bytes(ids))
        assert e.decode(ids) == data.decode("utf-8", "replace")
        strict = outcome(lambda: e.decode(ids, errors="strict"))
        assert isinstance(strict, str | UnicodeDecodeError)
    for i in ids:
        assert isinstance(e.is_special_token(i), bool)


@settings(max_examples=25, deadline=None)
@given(WRONG | st.lists(WRONG, min_size=1, max_size=3))
def test_id_methods_reject_wrong_types(value: object) -> None:
    e = enc()
    # Any iterable of ints is a valid argument (bytes, a set of ints): as tiktoken, documented.
    ints = isinstance(value, bytes | bytearray | set | list | tuple) and all(
        isinstance(x, int) for x in value
    )
    for call in [e.decode, e.decode_bytes, e.decode_tokens_bytes, e.decode_with_offsets]:
        result = outcome(lambda call=call: call(value))
        if not ints:
            assert isinstance(result, TypeError | KeyError), (call, value, result)
    if not isinstance(value, int):
        with pytest.raises(TypeError):
            e.decode_single_token_bytes(value)  # type: ignore[arg-type]


def test_invalid_utf8_from_ids() -> None:
    e = enc()
    lone = e.encode_single_token(b"\xff")
    start = e.encode_single_token(b"\xe4")
    assert e.decode_bytes([lone]) == b"\xff"
    assert e.decode([lone, start]) == "\ufffd\ufffd"
    with pytest.raises(UnicodeDecodeError):
        e.decode([lone], errors="strict")
    with pytest.raises(UnicodeDecodeError):
        e.decode_with_offsets([start])
    assert e.decode([lone], errors="surrogateescape") == "\udcff"
    d = e.stream_decoder()
    assert d.feed(start) == "" and d.pending == b"\xe4" and d.flush() == "\ufffd"


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=40))
def test_encode_single_token_on_any_bytes(data: bytes) -> None:
    result = outcome(lambda: enc().encode_single_token(data))
    if isinstance(result, int):
        assert enc().decode_single_token_bytes(result) == data
    else:
        assert isinstance(result, KeyError)
