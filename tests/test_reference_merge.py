"""Merging one piece: the quadratic scan, the heap, and tiktoken's own byte_pair_merge agree."""

from __future__ import annotations

import functools

import pytest
import tiktoken
import tiktoken.load
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair.reference import encode_piece, merge_piece, merge_piece_heap, unreachable_tokens
from bytepair.reference.merge import LONG_PIECE

from conftest import shared_path


@functools.cache
def cl100k() -> tuple[dict[bytes, int], tiktoken.Encoding]:
    path = shared_path("vocab", "cl100k_base", "cl100k_base.tiktoken")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken would copy the file into /tmp
        ranks = tiktoken.load.load_tiktoken_bpe(str(path))
    enc = tiktoken.Encoding("cl100k_base", pat_str=r"\S+", mergeable_ranks=ranks, special_tokens={})
    return ranks, enc


# A toy vocabulary where ties and overlaps are common: runs of "a" and "ab".
TOY = {bytes([b]): b for b in range(256)} | {
    token: 256 + i for i, token in enumerate([b"aa", b"ab", b"aaa", b"aba", b"aaaa", b"bab"])
}


@settings(max_examples=300, deadline=None)
@given(piece=st.binary(max_size=40) | st.text("ab", max_size=40).map(str.encode))
def test_scan_and_heap_agree(piece: bytes) -> None:
    assert merge_piece(TOY, piece) == merge_piece_heap(TOY, piece)
    assert b"".join(merge_piece(TOY, piece)) == piece


@settings(max_examples=300, deadline=None)
@given(
    piece=st.binary(min_size=1, max_size=80)
    | st.text(min_size=1, max_size=40).map(str.encode)
    | st.text("ab \n", min_size=1, max_size=200).map(str.encode)
)
def test_equal_to_tiktoken_byte_pair_merge(piece: bytes) -> None:
    ranks, enc = cl100k()
    expected = enc._encode_single_piece(piece)
    assert [ranks[p] for p in merge_piece(ranks, piece)] == expected
    assert [ranks[p] for p in merge_piece_heap(ranks, piece)] == expected
    assert encode_piece(ranks, piece) == expected


@pytest.mark.parametrize("piece", [b"a" * 5000, b"ab" * 3000, "é".encode() * 2000, b" " * 4097])
def test_long_pieces(piece: bytes) -> None:
    ranks, enc = cl100k()
    assert len(piece) > LONG_PIECE
    assert encode_piece(ranks, piece) == enc._encode_single_piece(piece)


def test_a_long_run_is_not_quadratic() -> None:
    # The scan would need ~n^2/2 = 4.5e10 steps here; the heap needs about a second.
    ranks, enc = cl100k()
    piece = b"a" * 300_000
    assert encode_piece(ranks, piece) == enc._encode_single_piece(piece)


def test_leftmost_of_equal_ranks_merges_first() -> None:
    # b"aa" can be made at 0 or at 1; taking the leftmost gives [aa, a], not [a, aa].
    ranks = {bytes([b]): b for b in range(256)} | {b"aa": 256}
    assert merge_piece(ranks, b"aaa") == [b"aa", b"a"]
    assert merge_piece_heap(ranks, b"aaa") == [b"aa", b"a"]


def test_unreachable_tokens() -> None:
    # Neither b"xy" nor b"yz" is a token, so no merge of single bytes can reach b"xyz".
    ranks = {bytes([b]): b for b in range(256)} | {b"xyz": 256}
    assert unreachable_tokens(ranks) == [b"xyz"]
    assert encode_piece(ranks, b"xyz") == [256]  # only the whole-piece lookup finds it
    assert encode_piece(ranks, b"xyzx") == [120, 121, 122, 120]
    # Ranks, not merge order, decide: b"xyz" (256) is reached through b"xy" (257) + b"z".
    ranks[b"xy"] = 257
    assert unreachable_tokens(ranks) == []
    assert encode_piece(ranks, b"xyzx") == [256, 120]
