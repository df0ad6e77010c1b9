"""The pattern strings in Python and in the Rust core are the same strings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bytepair import _core, patterns

RUST_PATTERNS = Path(__file__).resolve().parent.parent / "core/src/pretokenize/patterns.rs"


def rust_constant(name: str) -> str:
    source = RUST_PATTERNS.read_text(encoding="utf-8")
    start = source.index(f"pub const {name}:")
    body = source[start : source.index(";", start)]
    return "".join(re.findall(r'r"(.*?)"', body))


@pytest.mark.parametrize("name", ["GPT2", "GPT2_ORIGINAL", "CL100K", "O200K", "LLAMA3"])
def test_python_and_rust_patterns_agree(name: str) -> None:
    assert rust_constant(name) == getattr(patterns, name)


def test_names_resolve() -> None:
    assert patterns.resolve_pattern("cl100k_base") == patterns.CL100K
    assert patterns.resolve_pattern("llama4") == patterns.O200K
    assert patterns.resolve_pattern(r"\w+") == r"\w+"
    assert _core.scanner_for(r"\w+") is None
