"""The named patterns: the core's strings, tiktoken's spelling, each with its scanner."""

from __future__ import annotations

import pytest

from bytepair import _core, patterns


def tiktoken_pattern(constructor: str) -> str:
    """The pattern tiktoken's own constructor gives, with its vocabulary loading stubbed out."""
    from tiktoken_ext import openai_public

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(openai_public, "load_tiktoken_bpe", lambda *args, **kwargs: {})
        return str(getattr(openai_public, constructor)()["pat_str"])


@pytest.mark.parametrize(
    ("name", "constructor"),
    [("GPT2", "r50k_base"), ("CL100K", "cl100k_base"), ("O200K", "o200k_base")],
)
def test_patterns_are_tiktokens_own(name: str, constructor: str) -> None:
    assert getattr(patterns, name) == tiktoken_pattern(constructor)


@pytest.mark.parametrize("name", sorted(_core.NAMED_PATTERNS))
def test_every_named_core_pattern_has_its_scanner(name: str) -> None:
    pattern = _core.NAMED_PATTERNS[name]
    assert _core.scanner_for(pattern) is not None
    assert getattr(patterns, name.upper()) == pattern


def test_names_resolve() -> None:
    assert patterns.resolve_pattern("cl100k_base") == patterns.CL100K
    assert patterns.resolve_pattern("llama4") == patterns.O200K
    assert patterns.resolve_pattern(r"\w+") == r"\w+"
    assert _core.scanner_for(r"\w+") is None
