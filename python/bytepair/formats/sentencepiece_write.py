"""Writing a SentencePiece model: as its ``.model`` file or as a ``tokenizer.json``.

What was read is written back as it was: a ``.model`` as its own bytes, a ``tokenizer.json``
as its JSON. A ``.model`` becomes a ``tokenizer.json`` the way transformers' ``LlamaConverter``
(``legacy=False``) makes one, merges derived from the piece scores; ``tokenizers`` then gives
other ids than ``sentencepiece`` on some texts (a text that starts with a space, text after an
allowed special token), which a ``UserWarning`` says. A ``tokenizer.json`` cannot become a
``.model``: it has no piece scores, and sentencepiece merges by score.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from bytepair.formats.common import template_post_processor
from bytepair.formats.values import SentencePieceComponents

__all__ = ["sentencepiece_model_bytes", "sentencepiece_tokenizer_json"]

_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED = 1, 2, 3, 4


def sentencepiece_model_bytes(c: SentencePieceComponents) -> bytes:
    """The ``.model`` file of ``c``: the bytes it was read from."""
    if c.original is None:
        raise ValueError(
            f"{c.name} was read from a tokenizer.json, which has no piece scores; a .model "
            "merges by score, so it cannot be written as one (save it as 'hf')"
        )
    return c.original


def sentencepiece_tokenizer_json(c: SentencePieceComponents) -> dict[str, Any]:
    """The ``tokenizer.json`` of ``c`` as a JSON object (see the module docstring)."""
    if c.spec is not None:
        return copy.deepcopy(dict(c.spec))
    problem = _conversion_problem(c)
    if problem is not None:
        raise ValueError(f"{c.name} cannot be written as a tokenizer.json: {problem}")
    # prepend "first" (a Llama config's legacy=false) is what the converter writes: same ids.
    if c.prepend != "first":
        warnings.warn(
            f"{c.name}: a .model written as tokenizer.json (as transformers converts it): "
            "tokenizers' ids differ from sentencepiece's where a text starts with a space or "
            "follows an allowed special token",
            UserWarning,
            stacklevel=3,
        )
    vocab = {piece: i for i, (piece, _, _) in enumerate(c.pieces)}
    unk = c.pieces[c.unk_id][0] if c.unk_id is not None else None
    added = [
        {
            "id": i,
            "content": piece,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": kind == _CONTROL,
        }
        for i, (piece, _, kind) in enumerate(c.pieces)
        if kind == _CONTROL
    ]
    decoders: list[dict[str, Any]] = [
        {"type": "Replace", "pattern": {"String": c.replacement}, "content": " "},
        {"type": "ByteFallback"},
        {"type": "Fuse"},
    ]
    if c.prepend != "never":
        decoders.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Metaspace",
            "replacement": c.replacement,
            "prepend_scheme": "never" if c.prepend == "never" else "first",
            "split": False,
        },
        "post_processor": _post_processor(c),
        "decoder": {"type": "Sequence", "decoders": decoders},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": unk,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": True,
            "byte_fallback": c.byte_fallback,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": [list(pair) for pair in derived_merges(c.pieces, vocab)],
        },
    }


def _post_processor(c: SentencePieceComponents) -> dict[str, Any] | None:
    """``[bos] $A [eos]`` where ``c`` adds them (a Hub config's ``add_bos_token``), else none."""
    bos = (c.pieces[c.bos_id][0], c.bos_id) if c.add_bos and c.bos_id is not None else None
    eos = (c.pieces[c.eos_id][0], c.eos_id) if c.add_eos and c.eos_id is not None else None
    return template_post_processor(bos, eos) if bos or eos else None


def derived_merges(
    pieces: Sequence[tuple[str, float, int]], vocab: Mapping[str, int]
) -> list[tuple[str, str]]:
    """transformers' merges of a ``.model`` (``SentencePieceExtractor`` as of 4.46, which wrote
    Llama 2's ``tokenizer.json``): every split of a piece into two pieces, ordered by the
    merged piece's score (the first three pieces count 0), then by the left part's and the
    right part's lengths, longest first."""
    merges: list[tuple[str, str, float]] = []
    for i, (piece, score, _) in enumerate(pieces):
        score = 0.0 if i < 3 else score
        merges.extend(
            (piece[:cut], piece[cut:], score)
            for cut in range(1, len(piece))
            if piece[:cut] in vocab and piece[cut:] in vocab
        )
    merges.sort(key=lambda m: (m[2], len(m[0]), len(m[1])), reverse=True)
    return [(left, right) for left, right, _ in merges]


def _conversion_problem(c: SentencePieceComponents) -> str | None:
    """Why the converter's ``tokenizer.json`` would do something else than ``c``, or None."""
    if c.remove_extra_whitespaces:
        return "it removes extra whitespace (normalizer_spec.remove_extra_whitespaces)"
    if c.treat_whitespace_as_suffix:
        return "it puts whitespace at the end of pieces (treat_whitespace_as_suffix)"
    if not c.escape_whitespaces:
        return "it keeps spaces as spaces (normalizer_spec.escape_whitespaces is false)"
    kinds = {kind for _, _, kind in c.pieces}
    if _USER_DEFINED in kinds:
        return "it has user-defined pieces, which sentencepiece matches whole"
    if c.unk_id is None or c.pieces[c.unk_id][2] != _UNKNOWN:
        return "it has no unknown piece"
    return None
