"""bytepair.truncate: a text cut to a token budget, at a token boundary, never inside a
character, with what was cut."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair.truncate import Truncated, truncate

from anchors import ours as enc

TEXTS = [
    "How many r's are in strawberry?",
    "a 🍓 and 日本語のテキスト, café crème",
    "👩‍👩‍👧‍👦 family 🇫🇷 flag",
    "",
]


def _check(name: str, text: str, budget: int, **options: Any) -> Truncated:
    encoding = enc(name)
    ids = encoding.encode(text, **options)
    cut = truncate(encoding, text, budget, **options)
    assert cut.text + cut.dropped_text == text
    assert cut.ids == ids[: len(cut.ids)]  # the start of the whole text's tokens
    assert len(cut.ids) <= budget
    assert len(cut.ids) + cut.dropped_tokens == len(ids)
    assert encoding.decode(cut.ids) == cut.text  # whole characters only
    assert cut.truncated == (len(ids) > budget)
    if not cut.split_character:
        assert len(cut.ids) == min(budget, len(ids))  # the budget is used up
    else:
        assert len(cut.ids) < budget
    return cut


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "gpt2"])
@pytest.mark.parametrize("text", TEXTS)
def test_every_budget(name: str, text: str) -> None:
    for budget in range(len(enc(name).encode(text)) + 2):
        _check(name, text, budget)


def test_a_cut_inside_an_emoji_cuts_before_it() -> None:
    # o200k: "a", " \xf0\x9f\x8d", "\x93": the second token ends inside the strawberry.
    cut = _check("o200k_base", "a 🍓", 2)
    assert cut.split_character
    assert (cut.text, cut.dropped_text, cut.dropped_tokens) == ("a", " 🍓", 2)


def test_nothing_to_cut() -> None:
    cut = truncate(enc("o200k_base"), "short", 100)
    assert not cut.truncated and cut.dropped_text == "" and cut.text == "short"


def test_special_tokens_follow_the_encode_options() -> None:
    o200k = enc("o200k_base")
    text = "hi<|endoftext|>there"
    with pytest.raises(ValueError, match="special"):
        truncate(o200k, text, 2)  # tiktoken's rule: special text is an error by default
    cut = truncate(o200k, text, 2, allowed_special="all")
    assert cut.ids == o200k.encode(text, allowed_special="all")[:2]
    assert cut.text == "hi<|endoftext|>"


@pytest.mark.parametrize("bad", [-1, True, 1.5, "3"])
def test_a_bad_budget_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        truncate(enc("o200k_base"), "x", bad)  # type: ignore[arg-type]


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=60), st.integers(min_value=0, max_value=40))
def test_any_text_any_budget(text: str, budget: int) -> None:
    text = text.encode("utf-8", "replace").decode("utf-8")  # no lone surrogates
    # hypothesis also draws string constants from the code, special tokens among them: as text.
    _check("cl100k_base", text, budget, disallowed_special=())
