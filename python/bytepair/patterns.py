"""The pre-tokenizer patterns of the well-known vocabularies, by name.

These are the strings the original libraries use (tiktoken's spelling for the OpenAI encodings,
``llama_models`` for Llama 3). Those the Rust core has a hand-written scanner for are written
once, in the core, and read here from ``_core.NAMED_PATTERNS``; the core swaps in the scanner for
exactly these strings, and any other pattern runs on a general regex engine.

>>> import regex
>>> regex.findall(PATTERNS["gpt2"], "Hello world's end")
['Hello', ' world', "'s", ' end']
"""

from __future__ import annotations

import difflib
import re

from bytepair import _core

GPT2 = _core.NAMED_PATTERNS["gpt2"]
"""GPT-2, r50k_base and p50k_base (tiktoken's spelling, possessive quantifiers)."""

GPT2_ORIGINAL = _core.NAMED_PATTERNS["gpt2_original"]
"""The original GPT-2 spelling (openai/gpt-2, whisper, Hugging Face ByteLevel): the same pieces."""

CL100K = _core.NAMED_PATTERNS["cl100k"]
"""cl100k_base (GPT-3.5, GPT-4)."""

O200K = _core.NAMED_PATTERNS["o200k"]
"""o200k_base (GPT-4o and later; also Llama 4)."""

LLAMA3 = _core.NAMED_PATTERNS["llama3"]
"""Llama 3 (also OLMo 2)."""

QWEN2 = _core.NAMED_PATTERNS["qwen2"]
"""Qwen2 (also Qwen2.5 and Qwen3): Llama 3's pattern with single digits."""

TEKKEN = _core.NAMED_PATTERNS["tekken"]
"""Mistral's tekken (``tekken.json``): o200k's pattern without contractions, single digits."""

PATTERNS: dict[str, str] = {
    "gpt2": GPT2,
    "r50k": GPT2,
    "r50k_base": GPT2,
    "p50k": GPT2,
    "p50k_base": GPT2,
    "cl100k": CL100K,
    "cl100k_base": CL100K,
    "o200k": O200K,
    "o200k_base": O200K,
    "llama3": LLAMA3,
    "llama4": O200K,
    "qwen2": QWEN2,
    "tekken": TEKKEN,
}
"""Pattern by name; each encoding's name works as well as the family's."""


_NAME_LIKE = re.compile(r"[A-Za-z0-9_-]+")


def resolve_pattern(name_or_pattern: str) -> str:
    """Return the pattern for a known name, or the argument itself (taken as a regex).

    A string made only of letters, digits, ``_`` and ``-`` that is no known name is a
    ``ValueError``: as a regex it would match only itself and drop every other text.

    >>> resolve_pattern("cl100k") == CL100K
    True
    >>> resolve_pattern(r"\\w+")
    '\\\\w+'
    >>> resolve_pattern("cl100K")
    Traceback (most recent call last):
    ...
    ValueError: unknown pattern name 'cl100K' (did you mean 'cl100k'?); known names: gpt2, ...
    """
    pattern = PATTERNS.get(name_or_pattern)
    if pattern is not None:
        return pattern
    if _NAME_LIKE.fullmatch(name_or_pattern):
        raise ValueError(unknown_pattern_message(name_or_pattern))
    return name_or_pattern


def unknown_pattern_message(name: str) -> str:
    """What to say about ``name``, which is no pattern name: a close name, and all of them."""
    folded = {known.lower().replace("-", "_"): known for known in PATTERNS}
    close = folded.get(name.lower().replace("-", "_"))
    if close is None:
        matches = difflib.get_close_matches(name.lower(), list(folded), n=1)
        close = folded[matches[0]] if matches else None
    hint = f" (did you mean {close!r}?)" if close else ""
    return (
        f"unknown pattern name {name!r}{hint}; known names: {', '.join(PATTERNS)} (or pass a regex)"
    )
