"""Step 1 of byte-level BPE: cut the text into pieces with a regex, before any merging.

BPE never merges across a piece boundary. The pattern decides what can become one token: with
GPT-2's pattern a word keeps its leading space (``" world"``), digits, letters and punctuation
never share a token, and contractions split off (``"'s"``). Without this step BPE would learn
tokens such as ``"dog."`` and ``"dog!"`` that waste the vocabulary.

Patterns need the third-party ``regex`` package: the standard ``re`` module knows neither Unicode
property classes (``\\p{L}`` = any letter) nor possessive quantifiers (``++``, ``?+``) that
tiktoken's spellings use. A pattern is given by name (``"gpt2"``, ``"cl100k"``, ``"o200k"``, see
:data:`bytepair.patterns.PATTERNS`) or as the regex itself.

>>> pretokenize("Hello world's end!!", "gpt2")
['Hello', ' world', "'s", ' end', '!!']
>>> pretokenize("x = 12345", "cl100k")
['x', ' =', ' ', '123', '45']
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import regex

from bytepair.patterns import resolve_pattern

__all__ = ["compile_pattern", "iter_pieces", "pretokenize"]


@functools.lru_cache(maxsize=64)
def compile_pattern(pattern: str) -> Any:
    """Compile a pattern name or regex (cached); ``ValueError`` if it is not a valid regex.

    >>> compile_pattern("gpt2").findall("it's")
    ['it', "'s"]
    >>> compile_pattern("(unclosed")
    Traceback (most recent call last):
    ...
    ValueError: invalid pre-tokenizer pattern '(unclosed': missing ) at position 9
    """
    pat_str = resolve_pattern(pattern)
    try:
        return regex.compile(pat_str)
    except regex.error as err:
        raise ValueError(f"invalid pre-tokenizer pattern {pat_str!r}: {err}") from None


def iter_pieces(text: str, pattern: str = "gpt2") -> Iterator[str]:
    """Yield the pieces of ``text`` one by one, left to right.

    The pieces join back to ``text``: text the pattern does not match would be lost, so it is a
    ``ValueError`` naming where it starts (tiktoken drops it silently). Every named pattern
    matches every character.

    >>> list(iter_pieces("a  b", "gpt2"))
    ['a', ' ', ' b']
    >>> list(iter_pieces("ab12", r"\\d+"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: pattern '\\\\d+' does not match the text at character 0 ('ab'): that text ...
    """
    covered = 0
    for match in compile_pattern(pattern).finditer(text):
        if match.start() > covered:
            _unmatched(pattern, text, covered, match.start())
        covered = max(covered, match.end())
        if match.end() > match.start():
            yield match.group()
    if covered < len(text):
        _unmatched(pattern, text, covered, len(text))


def _unmatched(pattern: str, text: str, start: int, end: int) -> None:
    gap = text[start:end]
    shown = repr(gap[:20]) + ("..." if len(gap) > 20 else "")
    raise ValueError(
        f"pattern {resolve_pattern(pattern)!r} does not match the text at character {start} "
        f"({shown}): that text would be dropped; use a pattern that matches every character "
        "(end it with `|\\s+|.` for example)"
    )


def pretokenize(text: str, pattern: str = "gpt2") -> list[str]:
    """The pieces of ``text`` as a list (see :func:`iter_pieces`); a capturing group does not
    change what a piece is.

    >>> pretokenize("Hi  there\\n\\n", "gpt2")
    ['Hi', ' ', ' there', '\\n\\n']
    >>> "".join(pretokenize("naïve 東京 🙂", "o200k")) == "naïve 東京 🙂"
    True
    >>> pretokenize("ab cd", r"(a|c)\\w|\\s")
    ['ab', ' ', 'cd']
    """
    return list(iter_pieces(text, pattern))
