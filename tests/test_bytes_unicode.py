"""Tests for ``bytepair.bytes_unicode``, the GPT-2 byte map (contract: shared/seeds/000_*.txt).

Layout:
1. the test catalog of the contract's section 4, one test per row, under the catalog's names;
2. goldens: the real GPT-2 vocabulary and tiktoken's r50k_base ranks, Hugging Face ``tokenizers``,
   and the Rust table behind ``bytepair._core``;
3. mutants: one small wrong implementation per pitfall of section 5, each of which must be rejected
   by the same check that the catalog test runs on the real module. A check that passes a mutant
   is too weak, so this is what keeps the catalog honest.
"""

from __future__ import annotations

import base64
import json
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bytepair import _core
from bytepair.bytes_unicode import (
    bytes_to_unicode,
    decode_chars,
    encode_bytes,
    inverse,
    is_injective,
    is_surjective,
    unicode_to_bytes,
)

from conftest import shared_path

# The bytes whose Latin-1 character is visible, written out from the contract's ranges rather
# than computed by the module under test.
KEPT = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
REMAPPED = [b for b in range(256) if b not in KEPT]

# Characters that are not the image of any byte (section 4: " ", "\n", U+0144, "€").
OUTSIDE_THE_IMAGE = [" ", "\n", "\u0144", "€"]

ByteMap = Mapping[int, str]
Encode = Callable[[Any], str]
Decode = Callable[[str], bytes]
Injective = Callable[[Mapping[Any, Any]], bool]
Surjective = Callable[[Mapping[Any, Any], Iterable[Any]], bool]
Inverse = Callable[[Mapping[Any, Any]], dict[Any, Any]]


def error_message(expected: type[Exception], call: Callable[[], object]) -> str:
    """The message of the ``expected`` error that ``call`` raises; AssertionError if it does not.

    Used instead of ``pytest.raises`` inside checks, so that a mutant fails a check with a plain
    AssertionError that the mutant tests can expect.
    """
    try:
        call()
    except expected as err:
        return str(err)
    raise AssertionError(f"expected {expected.__name__}")


# ---------------------------------------------------------------------------------------------
# Checks shared by the catalog tests (on the real module) and the mutant tests (on wrong code).
# ---------------------------------------------------------------------------------------------


def check_injective_cases(is_injective: Injective) -> None:
    assert is_injective({})
    assert is_injective({b: b for b in range(10)})
    assert is_injective({0: 2, 1: 0, 2: 1})
    assert not is_injective({1: "a", 2: "b", 3: "a"})
    assert not is_injective({0: "x", 1: "x"})
    # One collision among many distinct values, far apart in insertion order.
    assert not is_injective({**{b: b for b in range(100)}, 100: 0})


def check_surjective_cases(is_surjective: Surjective) -> None:
    assert is_surjective({}, set())
    assert is_surjective({1: "a", 2: "b"}, {"a", "b"})
    # Not injective, yet onto: the two properties are independent.
    assert is_surjective({1: "a", 2: "b", 3: "a"}, {"a", "b"})
    # The codomain is any iterable, read once; repeats in it do not count twice.
    assert is_surjective({1: "a", 2: "b"}, iter(["b", "a", "a"]))
    # Missing targets.
    assert not is_surjective({}, {"a"})
    assert not is_surjective({1: "a", 2: "b"}, {"a", "b", "c"})
    # Values outside the codomain: not a map into it at all, so no answer.
    assert "'z'" in error_message(ValueError, lambda: is_surjective({1: "a", 2: "z"}, {"a", "b"}))
    assert "'z'" in error_message(ValueError, lambda: is_surjective({1: "a", 2: "z"}, {"a"}))
    error_message(ValueError, lambda: is_surjective({1: "a"}, set()))


def check_inverse_rejects_a_collision(inverse: Inverse) -> None:
    assert inverse({1: "a", 2: "b"}) == {"a": 1, "b": 2}
    message = error_message(ValueError, lambda: inverse({1: "a", 2: "b", 3: "a"}))
    assert "'a'" in message
    message = error_message(ValueError, lambda: inverse({"x": 7, "y": 8, "z": 8}))
    assert "8" in message


def check_printable(table: ByteMap) -> None:
    for b, c in table.items():
        # Letters, marks of punctuation, symbols and digits; never a separator (Z*) or an
        # invisible control or format character (C*, which includes the soft hyphen U+00AD).
        category = unicodedata.category(c)
        assert c.isprintable() and not c.isspace(), f"byte {b:#04x} -> {c!r}"
        assert category[0] not in "CZ", f"byte {b:#04x} -> {c!r} ({category})"


def check_fixed_points(table: ByteMap) -> None:
    assert len(KEPT) == 188
    for b in KEPT:
        assert table[b] == chr(b), f"byte {b:#04x} should keep its own character"
    for b in REMAPPED:
        assert table[b] != chr(b), f"byte {b:#04x} should be remapped"
    # The bytes at the edges of the kept ranges, where off-by-one and merged ranges go wrong.
    assert table[ord("!")] == "!"
    assert table[ord("~")] == "~"
    assert table[0xA1] == "¡"
    assert table[0xAC] == "¬"
    assert table[0xAD] == "\u0143"  # soft hyphen: invisible, so the last remapped byte
    assert table[0xAE] == "®"
    assert table[0xFF] == "ÿ"


def check_remapped_consecutive(table: ByteMap) -> None:
    assert len(REMAPPED) == 68
    assert [table[b] for b in REMAPPED] == [chr(c) for c in range(0x100, 0x144)]
    # Section 3 by hand: n counts remapped bytes, so it equals b only up to the space.
    assert table[0x00] == "\u0100"  # Ā
    assert table[0x0A] == "\u010a"  # Ċ
    assert table[0x20] == "\u0120"  # Ġ
    assert table[0x7F] == "\u0121"  # ġ, the first remapped byte after the gap
    assert table[0xA0] == "\u0142"
    assert table[0xAD] == "\u0143"


def check_fresh_dict(make: Callable[[], dict[int, str]]) -> None:
    first = make()
    assert list(first) == list(range(256))
    first[ord(" ")] = " "
    first[0] = "X"
    del first[0xFF]
    second = make()
    assert second is not first
    assert list(second) == list(range(256))
    assert second[ord(" ")] == "Ġ"
    assert second[0] == "Ā"
    assert second[0xFF] == "ÿ"


def check_roundtrip_every_byte(encode: Encode, decode: Decode) -> None:
    every_byte = bytes(range(256))
    text = encode(every_byte)
    assert len(text) == 256
    assert decode(text) == every_byte
    # Each byte on its own and next to its neighbours, as in real tokens.
    for b in range(256):
        assert decode(encode(bytes([b]))) == bytes([b])
    assert decode(encode(every_byte[::-1] * 2)) == every_byte[::-1] * 2


def check_decode_rejects(decode: Decode) -> None:
    for c in OUTSIDE_THE_IMAGE:
        assert repr(c) in error_message(ValueError, partial(decode, c))
        # Also when it hides between valid characters.
        assert repr(c) in error_message(ValueError, partial(decode, "ĠtheĠ" + c + "Ċ"))


def check_encode_rejects_str(encode: Encode) -> None:
    for text in ["abc", "", "é"]:
        error_message(TypeError, partial(encode, text))


# ---------------------------------------------------------------------------------------------
# The test catalog (contract section 4).
# ---------------------------------------------------------------------------------------------


def test_hand_example_encode() -> None:
    assert encode_bytes(b"Hi there\n") == "HiĠthereĊ"
    assert len(encode_bytes(b"Hi there\n")) == 9
    assert bytes_to_unicode()[0] == "Ā"
    assert decode_chars("HiĠthereĊ") == b"Hi there\n"
    # The word " there" with its leading space, as it appears in a GPT-2 vocabulary.
    assert encode_bytes(b" there") == "Ġthere"
    assert encode_bytes("é".encode()) == "Ã©"


def test_hand_example_small_maps() -> None:
    f = {1: "a", 2: "b", 3: "a"}
    g = {1: "a", 2: "b"}
    assert not is_injective(f)
    with pytest.raises(ValueError, match="'a'"):
        inverse(f)
    assert is_injective(g)
    assert is_surjective(g, {"a", "b"})
    assert inverse(g) == {"a": 1, "b": 2}
    assert not is_surjective(g, {"a", "b", "c"})


def test_matches_gpt2_table() -> None:
    """GPT-2's ids 0..255 are its 256 one-character tokens; r50k_base gives each id's byte."""
    encoder: dict[str, int] = json.loads(
        shared_path("vocab", "gpt2", "encoder.json").read_text(encoding="utf-8")
    )
    ranks = _tiktoken_ranks(shared_path("vocab", "r50k_base", "r50k_base.tiktoken"))
    single = {token: i for token, i in encoder.items() if len(token) == 1}
    # GPT-2 orders them kept bytes first ("!" is id 0), then the remapped ones: id is not byte.
    assert sorted(single.values()) == list(range(256))
    assert single["!"] == 0
    assert single["Ā"] == 188

    table = bytes_to_unicode()
    assert set(single) == set(table.values())
    for token, i in single.items():
        byte = ranks[i]
        assert len(byte) == 1
        assert table[byte[0]] == token
        assert decode_chars(token) == byte


def test_is_a_bijection_onto_256_characters() -> None:
    table = bytes_to_unicode()
    assert sorted(table) == list(range(256))
    values = list(table.values())
    assert all(isinstance(c, str) and len(c) == 1 for c in values)
    assert len(set(values)) == 256
    assert is_injective(table)
    assert is_surjective(table, values)
    # The image is 188 Latin-1 characters plus U+0100..U+0143, nothing else.
    assert set(values) == {chr(b) for b in KEPT} | {chr(c) for c in range(0x100, 0x144)}


def test_every_character_is_printable_and_not_whitespace() -> None:
    check_printable(bytes_to_unicode())


def test_printable_bytes_map_to_themselves() -> None:
    check_fixed_points(bytes_to_unicode())


def test_remapped_bytes_are_consecutive_from_256() -> None:
    check_remapped_consecutive(bytes_to_unicode())


def test_keys_in_byte_order_and_a_fresh_dict_each_call() -> None:
    check_fresh_dict(bytes_to_unicode)
    # The inverse too, and an edit to either must not reach the encoder's own tables.
    edited = unicode_to_bytes()
    edited["Ġ"] = ord("X")
    assert unicode_to_bytes()["Ġ"] == 0x20
    table = bytes_to_unicode()
    table[0x20] = "X"
    assert encode_bytes(b" ") == "Ġ"
    assert decode_chars("Ġ") == b" "


def test_unicode_to_bytes_is_the_inverse() -> None:
    forward = bytes_to_unicode()
    backward = unicode_to_bytes()
    assert len(backward) == 256
    assert all(backward[forward[b]] == b for b in range(256))
    assert all(forward[backward[c]] == c for c in backward)
    assert backward == inverse(forward)


@given(st.binary(max_size=512))
def test_roundtrip_random_bytes(data: bytes) -> None:
    text = encode_bytes(data)
    assert len(text) == len(data)
    assert decode_chars(text) == data


def test_roundtrip_every_byte() -> None:
    check_roundtrip_every_byte(encode_bytes, decode_chars)


def test_roundtrip_utf8_text() -> None:
    # The map works on bytes: one character per UTF-8 byte, not per character of the text.
    assert encode_bytes("é".encode()) == "Ã©"
    assert encode_bytes("😀".encode()) == "ðŁĺĢ"
    for text in ["é", "😀", "naïve café 😀\n\t", "日本語", "a\u0301", ""]:
        encoded = encode_bytes(text.encode("utf-8"))
        assert len(encoded) == len(text.encode("utf-8"))
        assert decode_chars(encoded).decode("utf-8") == text
    # A token may end inside a character: the halves are invalid UTF-8 and still round-trip.
    head, tail = "😀".encode()[:2], "😀".encode()[2:]
    assert decode_chars(encode_bytes(head)) + decode_chars(encode_bytes(tail)) == "😀".encode()


@given(st.text())
def test_roundtrip_utf8_text_property(text: str) -> None:
    data = text.encode("utf-8")
    encoded = encode_bytes(data)
    assert len(encoded) == len(data)
    assert decode_chars(encoded).decode("utf-8") == text


@pytest.mark.parametrize("char", OUTSIDE_THE_IMAGE, ids=["space", "newline", "U+0144", "euro"])
def test_decode_rejects_characters_outside_the_image(char: str) -> None:
    with pytest.raises(ValueError, match="is not in the GPT-2 byte map") as info:
        decode_chars(char)
    assert repr(char) in str(info.value)
    # The first bad character is named with its index, even after valid ones.
    with pytest.raises(ValueError, match="at index 4") as info:
        decode_chars("Ġthe" + char + "Ċ" + char)
    assert repr(char) in str(info.value)
    check_decode_rejects(decode_chars)


def test_decode_rejects_every_character_outside_the_image() -> None:
    image = set(bytes_to_unicode().values())
    # Everything up to well past U+0143, plus a surrogate and characters outside the BMP.
    candidates = [chr(c) for c in range(0x200)] + ["\ud800", "€", "😀", "\U0010ffff"]
    for c in candidates:
        if c in image:
            assert len(decode_chars(c)) == 1
        else:
            with pytest.raises(ValueError):
                decode_chars(c)


def test_encode_rejects_str() -> None:
    with pytest.raises(TypeError, match="encode"):
        encode_bytes("abc")  # type: ignore[arg-type]
    check_encode_rejects_str(encode_bytes)


def test_inverse_rejects_a_collision() -> None:
    with pytest.raises(ValueError, match=r"value 'a' is shared by keys 1 and 3"):
        inverse({1: "a", 2: "b", 3: "a"})
    check_inverse_rejects_a_collision(inverse)


def test_is_injective_cases() -> None:
    check_injective_cases(is_injective)


def test_is_surjective_cases() -> None:
    check_surjective_cases(is_surjective)


# ---------------------------------------------------------------------------------------------
# Beyond the catalog: bytes-like inputs, the whole GPT-2 vocabulary, other implementations.
# ---------------------------------------------------------------------------------------------


def test_encode_accepts_bytes_like() -> None:
    data = b"Hi there\n\xad\x7f"
    expected = encode_bytes(data)
    assert encode_bytes(bytearray(data)) == expected
    assert encode_bytes(memoryview(data)) == expected
    assert encode_bytes(memoryview(b"xx" + data)[2:]) == expected
    assert encode_bytes(b"") == ""


def test_decode_rejects_non_str() -> None:
    with pytest.raises(TypeError):
        decode_chars(b"abc")  # type: ignore[arg-type]


def test_decodes_the_whole_gpt2_vocabulary() -> None:
    """Every GPT-2 token string decodes to exactly the bytes tiktoken ranks under the same id."""
    encoder: dict[str, int] = json.loads(
        shared_path("vocab", "gpt2", "encoder.json").read_text(encoding="utf-8")
    )
    ranks = _tiktoken_ranks(shared_path("vocab", "r50k_base", "r50k_base.tiktoken"))
    # <|endoftext|> is a special token, stored as plain text and not a byte string.
    del encoder["<|endoftext|>"]
    assert len(encoder) == len(ranks) == 50256
    for token, i in encoder.items():
        assert decode_chars(token) == ranks[i], (token, i)
        assert encode_bytes(ranks[i]) == token


def test_matches_the_original_gpt2_construction() -> None:
    """The table built the way openai/gpt-2's src/encoder.py builds it (runs without data files).

    That version lists the kept bytes first, then appends each missing byte with 2**8 + n, and
    zips the two lists into a dict: the same pairs as ours, in a different key order.
    """
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    kept += range(ord("®"), ord("ÿ") + 1)
    bs, cs = list(kept), list(kept)
    n = 0
    for b in range(2**8):
        if b not in bs:
            bs.append(b)
            cs.append(2**8 + n)
            n += 1
    assert bytes_to_unicode() == dict(zip(bs, map(chr, cs), strict=True))


def test_matches_tokenizers_alphabet() -> None:
    pre_tokenizers = pytest.importorskip("tokenizers.pre_tokenizers")
    assert set(pre_tokenizers.ByteLevel.alphabet()) == set(bytes_to_unicode().values())


@given(st.text(min_size=1))
def test_matches_tokenizers_byte_level(text: str) -> None:
    """Hugging Face's ByteLevel pre-tokenizer (with no splitting) writes text in our alphabet."""
    pre_tokenizers = pytest.importorskip("tokenizers.pre_tokenizers")
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    [(piece, _offsets)] = byte_level.pre_tokenize_str(text)
    assert piece == encode_bytes(text.encode("utf-8"))


def test_rust_table_matches_python() -> None:
    rust = _core.byte_map_table()
    assert len(rust) == 256
    assert all(isinstance(c, str) and len(c) == 1 for c in rust)
    table = bytes_to_unicode()
    for b in range(256):
        assert rust[b] == table[b], f"byte {b:#04x}: Rust {rust[b]!r}, Python {table[b]!r}"


def _tiktoken_ranks(path: Any) -> dict[int, bytes]:
    """Rank -> token bytes from a ``.tiktoken`` file (base64 token, a space, the rank)."""
    ranks: dict[int, bytes] = {}
    for line in path.read_bytes().splitlines():
        if line:
            token, rank = line.split()
            ranks[int(rank)] = base64.b64decode(token)
    return ranks


# ---------------------------------------------------------------------------------------------
# Mutants (contract section 5): wrong implementations the checks above must reject.
# ---------------------------------------------------------------------------------------------


def _table_from_rule(
    kept: Callable[[int], bool], new_code: Callable[[int, int], int]
) -> dict[int, str]:
    """A byte map built the GPT-2 way, with its two decisions swappable: which bytes keep their
    own character, and which code point the n-th remapped byte b gets."""
    table: dict[int, str] = {}
    n = 0
    for b in range(256):
        if kept(b):
            table[b] = chr(b)
        else:
            table[b] = chr(new_code(b, n))
            n += 1
    return table


def _gpt2_kept(b: int) -> bool:
    return b in KEPT


def _next_code(b: int, n: int) -> int:
    return 256 + n


# Pitfall 1: every byte to itself. A bijection, but space and control bytes stay invisible.
mutant_s01_identity = _table_from_rule(lambda b: True, _next_code)
# Pitfall 2: one range 0xA1..0xFF keeps the invisible soft hyphen and shifts later bytes.
mutant_s02_one_upper_range = _table_from_rule(
    lambda b: 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xFF, _next_code
)
# Pitfall 3: remapping by byte value, not by running count.
mutant_s03_byte_value = _table_from_rule(_gpt2_kept, lambda b, n: 256 + b)
# Pitfall 11: an off-by-one range end remaps "~".
mutant_m01_tilde_remapped = _table_from_rule(
    lambda b: 0x21 <= b <= 0x7D or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF, _next_code
)


def mutant_s04_inverse(f: Mapping[Any, Any]) -> dict[Any, Any]:
    # Pitfall 5: a comprehension silently keeps the last key of a repeated value.
    return {v: k for k, v in f.items()}


def mutant_s05_decode(text: str) -> bytes:
    # Pitfall 4: arithmetic instead of the inverse table. Right for bytes 0..32 only.
    return bytes(ord(c) & 0xFF for c in text)


def mutant_s06_surjective(f: Mapping[Any, Any], codomain: Iterable[Any]) -> bool:
    # Pitfall 8: values outside the codomain are ignored instead of rejected.
    return set(codomain) <= set(f.values())


def mutant_s07_surjective(f: Mapping[Any, Any], codomain: Iterable[Any]) -> bool:
    # Pitfall 7: "onto" read as "into", f(A) ⊆ B.
    return set(f.values()) <= set(codomain)


def mutant_s08_injective(f: Mapping[Any, Any]) -> bool:
    # Pitfall 6: checks the keys, which a mapping never repeats.
    return len(set(f)) == len(f)


def mutant_s09_encode(data: Any) -> str:
    # Pitfall 10: a str is taken by code points, so "é" becomes one byte instead of two.
    table = bytes_to_unicode()
    codes = map(ord, data) if isinstance(data, str) else data
    return "".join(table[b] for b in codes)


_s10_cache = bytes_to_unicode()


def mutant_s10_cached() -> dict[int, str]:
    # Pitfall 9: one shared dict, so one caller's edit reaches every later caller.
    return _s10_cache


MUTANTS = [
    pytest.param(lambda: check_printable(mutant_s01_identity), id="s01-identity"),
    pytest.param(lambda: check_fixed_points(mutant_s02_one_upper_range), id="s02-one-range"),
    pytest.param(lambda: check_remapped_consecutive(mutant_s02_one_upper_range), id="s02-shift"),
    pytest.param(lambda: check_remapped_consecutive(mutant_s03_byte_value), id="s03-256+b"),
    pytest.param(lambda: check_inverse_rejects_a_collision(mutant_s04_inverse), id="s04"),
    pytest.param(
        lambda: check_roundtrip_every_byte(encode_bytes, mutant_s05_decode), id="s05-roundtrip"
    ),
    pytest.param(lambda: check_decode_rejects(mutant_s05_decode), id="s05-rejects"),
    pytest.param(lambda: check_surjective_cases(mutant_s06_surjective), id="s06"),
    pytest.param(lambda: check_surjective_cases(mutant_s07_surjective), id="s07"),
    pytest.param(lambda: check_injective_cases(mutant_s08_injective), id="s08"),
    pytest.param(lambda: check_encode_rejects_str(mutant_s09_encode), id="s09"),
    pytest.param(lambda: check_fresh_dict(mutant_s10_cached), id="s10"),
    pytest.param(lambda: check_fixed_points(mutant_m01_tilde_remapped), id="m01"),
]


@pytest.mark.parametrize("run_check_on_mutant", MUTANTS)
def test_checks_reject_mutant(run_check_on_mutant: Callable[[], None]) -> None:
    with pytest.raises(AssertionError):
        run_check_on_mutant()


def test_mutants_are_plausible() -> None:
    """The wrong tables are still bijections, so only the specific checks can catch them."""
    for table in [mutant_s01_identity, mutant_s02_one_upper_range, mutant_s03_byte_value]:
        assert is_injective(table)
    assert mutant_m01_tilde_remapped != bytes_to_unicode()
