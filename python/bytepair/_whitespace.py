"""Whitespace as Rust's ``char::is_whitespace`` sees it (the Unicode White_Space property),
which tiktoken's unstable-token search and ``tokenizers``' stripping use. Python's
``str.isspace`` also counts U+001C..U+001F."""

from __future__ import annotations

__all__ = ["is_rust_whitespace"]

_NOT_RUST_WHITESPACE = frozenset("\x1c\x1d\x1e\x1f")


def is_rust_whitespace(text: str) -> bool:
    """Whether ``text`` (one character, or more) is all whitespace as Rust's
    ``char::is_whitespace`` says.

    >>> is_rust_whitespace("\\u3000"), is_rust_whitespace("\\x1c"), is_rust_whitespace("")
    (True, False, False)
    """
    return text.isspace() and _NOT_RUST_WHITESPACE.isdisjoint(text)
