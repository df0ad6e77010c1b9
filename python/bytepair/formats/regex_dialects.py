"""Regex dialects: Hugging Face files are read by Oniguruma (Ruby syntax), our core by Rust.

The same pattern text means different things to the two engines in three places that matter for
tokenizer patterns (each checked against ``tokenizers`` 0.23):

- ``^`` and ``$``: line anchors in Ruby syntax (``$`` matches before every ``\\n``), text anchors
  in Rust unless ``(?m)`` is on;
- ``X{n,m}+``: in Ruby a *repetition of the interval* (``\\p{N}{1,3}+`` is "any number of
  digits"), in Rust a possessive interval (at most three digits, never given back);
- everything else used by real tokenizers (classes, ``\\p{..}``, lookahead, ``?+``/``++``/``*+``
  possessives, atomic groups, inline flags) reads the same.

:func:`onig_to_rust` rewrites a pattern from a ``tokenizer.json`` so that our engine matches what
``tokenizers`` matches; :func:`rust_to_onig` rewrites one of ours (tiktoken's spelling) for a
``tokenizer.json`` we write. The well-known patterns map to their canonical spelling, so that the
core recognises them and uses its hand-written scanners.

>>> onig_to_rust(r"\\d{1,3}+|a$")
'(?:\\\\d{1,3})+|a(?m:$)'
>>> rust_to_onig(r"\\p{N}{1,3}+|\\s++$")
'(?>\\\\p{N}{1,3})|\\\\s++\\\\z'
"""

from __future__ import annotations

import re

from bytepair import patterns

__all__ = ["onig_to_rust", "rust_to_onig"]

_INTERVAL = re.compile(r"\{\d+(?:,\d*)?\}")


def _escape_end(pattern: str, i: int) -> int:
    """The end of the escape sequence starting at ``pattern[i] == '\\\\'``."""
    if i + 1 >= len(pattern):
        return len(pattern)
    nxt = pattern[i + 1]
    if nxt in "pPxku" and i + 2 < len(pattern) and pattern[i + 2] in "{<":
        close = "}" if pattern[i + 2] == "{" else ">"
        end = pattern.find(close, i + 3)
        return len(pattern) if end < 0 else end + 1
    return i + 2


def _class_end(pattern: str, i: int) -> int:
    """The end of the character class starting at ``pattern[i] == '['`` (nested classes too)."""
    depth = 0
    j = i
    while j < len(pattern):
        c = pattern[j]
        if c == "\\":
            j = _escape_end(pattern, j)
            continue
        if c == "[":
            depth += 1
            j += 1
            # A "]" right after "[" or "[^" is a literal in both dialects.
            if pattern.startswith("^", j):
                j += 1
            if pattern.startswith("]", j):
                j += 1
            continue
        if c == "]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return len(pattern)


def _rewrite(pattern: str, *, to_rust: bool) -> str:
    out: list[str] = []
    atom: int | None = None  # index in `out` where the last complete atom starts
    groups: list[int] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            j = _escape_end(pattern, i)
            atom = len(out)
            out.append(pattern[i:j])
            i = j
        elif c == "[":
            j = _class_end(pattern, i)
            atom = len(out)
            out.append(pattern[i:j])
            i = j
        elif c == "(":
            groups.append(len(out))
            out.append(c)
            atom = None
            i += 1
        elif c == ")":
            atom = groups.pop() if groups else None
            out.append(c)
            i += 1
        elif c == "{" and (m := _INTERVAL.match(pattern, i)):
            quantifier = m.group(0)
            i = m.end()
            if i < n and pattern[i] == "+" and atom is not None:
                body = "".join(out[atom:]) + quantifier
                del out[atom:]
                # Oniguruma repeats the interval; Rust (and tiktoken) make it possessive.
                out.append(f"(?:{body})+" if to_rust else f"(?>{body})")
                i += 1
            else:
                out.append(quantifier)
            atom = None
        elif c in "*+?":
            quantifier = c
            i += 1
            if i < n and pattern[i] in "?+":
                quantifier += pattern[i]
                i += 1
            out.append(quantifier)
            atom = None
        elif c in "^$":
            atom = len(out)
            if to_rust:
                out.append(f"(?m:{c})")
            else:
                out.append(r"\A" if c == "^" else r"\z")
            i += 1
        else:
            atom = len(out)
            out.append(c)
            i += 1
    return "".join(out)


def _has_multiline_flag(pattern: str) -> bool:
    return re.search(r"\(\?[a-zA-Z]*m[a-zA-Z]*[:)]", pattern) is not None


_KNOWN_RUST = (
    patterns.GPT2,
    patterns.GPT2_ORIGINAL,
    patterns.CL100K,
    patterns.O200K,
    patterns.LLAMA3,
    patterns.QWEN2,
    patterns.TEKKEN,
)


def rust_to_onig(pattern: str) -> str:
    """The Oniguruma spelling of a Rust/tiktoken pattern (for a ``tokenizer.json`` we write).

    >>> rust_to_onig(patterns.LLAMA3) == patterns.LLAMA3
    True
    """
    if _has_multiline_flag(pattern):
        raise ValueError(
            f"cannot translate a pattern with the (?m) flag for Oniguruma: {pattern!r}"
        )
    return _rewrite(pattern, to_rust=False)


_KNOWN_ONIG = {rust_to_onig(p): p for p in _KNOWN_RUST}


def onig_to_rust(pattern: str) -> str:
    """The Rust spelling of a pattern from a ``tokenizer.json`` (read by Oniguruma there).

    Known patterns come back in tiktoken's spelling, which the core runs with a scanner:

    >>> onig_to_rust(rust_to_onig(patterns.CL100K)) == patterns.CL100K
    True
    """
    known = _KNOWN_ONIG.get(pattern)
    if known is not None:
        return known
    return _rewrite(pattern, to_rust=True)
