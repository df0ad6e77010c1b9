"""The GPT-2 byte map: a fixed bijection between the 256 byte values and 256 visible characters.

Byte-level BPE tokens are byte strings (``b" the"``, ``b"\\n"``, half of a UTF-8 character such as
``b"\\xc3"``), but the files that store them are text: ``vocab.json`` keys must be valid Unicode,
``merges.txt`` separates the two halves of a merge with a space, and control bytes are invisible.
GPT-2 therefore writes each byte as a printable, non-whitespace character. That is why real
vocabularies contain ``"Ġthe"`` (``b" the"``) and ``"Ċ"`` (``b"\\n"``).

The rule: bytes whose Latin-1 character is already visible (``!``..``~``, ``¡``..``¬``,
``®``..``ÿ``, 188 in all) keep their own code point; the other 68 are taken in increasing byte order
and the n-th of them becomes ``chr(256 + n)`` (U+0100..U+0143). The two groups of outputs do not
overlap, so the map is injective, and 256 distinct outputs from 256 inputs make it a bijection onto
its image. The generic helpers (:func:`is_injective`, :func:`is_surjective`, :func:`inverse`) state
those properties for any finite map.

>>> encode_bytes(b"Hi there\\n")
'HiĠthereĊ'
>>> decode_chars("HiĠthereĊ")
b'Hi there\\n'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

__all__ = [
    "bytes_to_unicode",
    "decode_chars",
    "encode_bytes",
    "inverse",
    "is_injective",
    "is_surjective",
    "unicode_to_bytes",
]

K = TypeVar("K")
V = TypeVar("V")


def is_injective(f: Mapping[K, V]) -> bool:
    """Whether no two keys of ``f`` share a value (``f`` is one to one).

    >>> is_injective({1: "a", 2: "b"})
    True
    >>> is_injective({1: "a", 2: "b", 3: "a"})
    False
    """
    # The values are what can collide: a mapping's keys are distinct by construction.
    return len(set(f.values())) == len(f)


def is_surjective(f: Mapping[K, V], codomain: Iterable[V]) -> bool:
    """Whether every element of ``codomain`` is the value of some key of ``f`` (``f`` is onto).

    Raises ``ValueError`` if a value of ``f`` lies outside ``codomain``: then ``f`` is not a map
    into ``codomain`` at all, and "onto ``codomain``?" has no answer.

    >>> is_surjective({1: "a", 2: "b"}, {"a", "b"})
    True
    >>> is_surjective({1: "a", 2: "b"}, {"a", "b", "c"})
    False
    >>> is_surjective({1: "a", 2: "z"}, {"a", "b"})
    Traceback (most recent call last):
    ...
    ValueError: value 'z' (of key 2) is not in the codomain
    """
    targets = set(codomain)
    for key, value in f.items():
        if value not in targets:
            raise ValueError(f"value {value!r} (of key {key!r}) is not in the codomain")
    # Every value is a target, so the image is a subset of the targets; equal sizes make it all.
    return len(set(f.values())) == len(targets)


def inverse(f: Mapping[K, V]) -> dict[V, K]:
    """The inverse map ``{value: key}`` of an injective ``f``.

    Raises ``ValueError`` naming the first value that two keys share, since that value would have
    two preimages.

    >>> inverse({1: "a", 2: "b"})
    {'a': 1, 'b': 2}
    >>> inverse({1: "a", 2: "b", 3: "a"})
    Traceback (most recent call last):
    ...
    ValueError: not injective: value 'a' is shared by keys 1 and 3
    """
    result: dict[V, K] = {}
    for key, value in f.items():
        # A bare dict comprehension would silently keep the last key for a repeated value.
        if value in result:
            raise ValueError(
                f"not injective: value {value!r} is shared by keys {result[value]!r} and {key!r}"
            )
        result[value] = key
    return result


def _keeps_own_char(b: int) -> bool:
    """Whether byte ``b`` is already a visible, non-space Latin-1 character."""
    # 0xAD (soft hyphen) is invisible, which is why the upper range is split around it.
    return 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF


def bytes_to_unicode() -> dict[int, str]:
    """The GPT-2 byte map: a new dict from each byte value 0..255 (in order) to its character.

    >>> table = bytes_to_unicode()
    >>> table[ord("A")], table[ord(" ")], table[ord("\\n")], table[0x00], table[0xAD]
    ('A', 'Ġ', 'Ċ', 'Ā', 'Ń')
    >>> len(table), list(table)[:3]
    (256, [0, 1, 2])
    """
    table: dict[int, str] = {}
    # n counts the bytes remapped so far; it, not the byte value, picks the new code point.
    n = 0
    for b in range(256):
        if _keeps_own_char(b):
            table[b] = chr(b)
        else:
            table[b] = chr(256 + n)
            n += 1
    return table


def unicode_to_bytes() -> dict[str, int]:
    """The inverse of :func:`bytes_to_unicode`: a new dict from each of its characters to its byte.

    >>> inv = unicode_to_bytes()
    >>> inv["Ġ"], inv["A"], len(inv)
    (32, 65, 256)
    >>> " " in inv
    False
    """
    return inverse(bytes_to_unicode())


# Hot-path tables for the file loaders, built once from the rule. They are immutable strings, so no
# caller can corrupt them; bytes_to_unicode() still hands every caller a fresh dict of its own.

# _BYTE_TO_CHAR[b] is the character of byte b. A Latin-1 decode turns byte b into chr(b), so one
# str.translate over it then applies the whole map in C.
_BYTE_TO_CHAR = "".join(bytes_to_unicode().values())

# Stands in for "no byte": any character above U+00FF works, because Latin-1 cannot encode it.
_OUTSIDE_SENTINEL = "\ufffd"


def _decode_table() -> str:
    """A str.translate table from each character of the image to the Latin-1 character of its byte.

    Every other position up to the largest image character (U+0143) holds the sentinel, and
    str.translate leaves characters beyond the table unchanged. So after translating, the characters
    outside the image are exactly those that Latin-1 cannot encode, and because the translation is
    one character for one, the failing index is also the index in the input.
    """
    char_to_byte = unicode_to_bytes()
    top = max(map(ord, char_to_byte))
    return "".join(
        chr(char_to_byte[c]) if c in char_to_byte else _OUTSIDE_SENTINEL
        for c in map(chr, range(top + 1))
    )


_CHAR_TO_LATIN1 = _decode_table()


def encode_bytes(data: bytes | bytearray | memoryview) -> str:
    """Write ``data`` in the GPT-2 alphabet: one character per byte, ``len(data)`` in all.

    Any bytes work, including invalid UTF-8 (a token can end inside a character). A ``str`` is
    rejected with ``TypeError``: encode it to bytes first, for example with ``.encode("utf-8")``.

    >>> encode_bytes(b"Hi there\\n")
    'HiĠthereĊ'
    >>> encode_bytes("é".encode("utf-8"))
    'Ã©'
    >>> encode_bytes(b"\\xc3")
    'Ã'
    """
    if isinstance(data, str):
        # Code points are not bytes: "é" would become one byte instead of UTF-8's two.
        raise TypeError(
            'encode_bytes takes bytes, not str: encode it first, e.g. text.encode("utf-8")'
        )
    return str(data, "latin-1").translate(_BYTE_TO_CHAR)


def decode_chars(text: str) -> bytes:
    """The bytes that ``text`` (in the GPT-2 alphabet) stands for: the inverse of encode_bytes.

    Raises ``ValueError`` naming the first character that is not the image of any byte, such as a
    real space, a newline, ``"ń"`` (U+0144) or ``"€"``: a corrupt vocabulary should fail loudly.

    >>> decode_chars("HiĠthereĊ")
    b'Hi there\\n'
    >>> decode_chars("Ã©").decode("utf-8")
    'é'
    >>> decode_chars("Hi there")
    Traceback (most recent call last):
    ...
    ValueError: character ' ' (U+0020) at index 2 is not in the GPT-2 byte map
    """
    if not isinstance(text, str):
        raise TypeError(f"decode_chars takes str, not {type(text).__name__}")
    try:
        return text.translate(_CHAR_TO_LATIN1).encode("latin-1")
    except UnicodeEncodeError as err:
        # The internal error describes the translated text; report the caller's character instead.
        bad, i = text[err.start], err.start
        raise ValueError(
            f"character {bad!r} (U+{ord(bad):04X}) at index {i} is not in the GPT-2 byte map"
        ) from None
