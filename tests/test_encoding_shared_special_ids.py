"""Special tokens that share an id (issue 30 point 1): accepted and encoded as tiktoken does.

tiktoken's own ``o200k_harmony`` constructor arguments give two special tokens one id. Each
encodes to that id; the id decodes to the token whose text sorts first (tiktoken's choice
depends on hash order, so only the encode is compared with it).
"""

from __future__ import annotations

import pytest

import bytepair

tiktoken = pytest.importorskip("tiktoken")

RANKS = {bytes([b]): b for b in range(256)}


def _both(special_tokens: dict[str, int]) -> tuple[bytepair.Encoding, object]:
    ours = bytepair.Encoding(
        "dup", pat_str=r"\S+|\s+", mergeable_ranks=RANKS, special_tokens=special_tokens
    )
    theirs = tiktoken.Encoding(
        "dup", pat_str=r"\S+|\s+", mergeable_ranks=RANKS, special_tokens=special_tokens
    )
    return ours, theirs


@pytest.mark.parametrize(
    "special_tokens",
    [
        {"<|a|>": 256, "<|b|>": 256},
        {"<|b|>": 256, "<|a|>": 256, "<|c|>": 257},
    ],
)
def test_shared_ids_encode_as_tiktoken(special_tokens: dict[str, int]) -> None:
    ours, theirs = _both(special_tokens)
    for text in ["<|a|><|b|>", "x <|b|> y<|a|>", "<|c|>" if "<|c|>" in special_tokens else "z"]:
        assert ours.encode(text, allowed_special="all") == theirs.encode(
            text, allowed_special="all"
        )
    assert ours.encode("<|a|><|b|>", allowed_special="all") == [256, 256]
    assert ours.n_vocab == theirs.n_vocab
    # Deterministic: the text that sorts first, whatever the order given.
    assert ours.decode([256]) == "<|a|>"
    assert ours.decode_single_token_bytes(256) == b"<|a|>"
    assert ours.encode_single_token("<|b|>") == 256
