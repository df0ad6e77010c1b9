"""``encode_with_offsets``: the ids of a text and where each token lies in it.

Mixed into :class:`bytepair.Encoding`. The rank model reads the text as it is; the other models
override :meth:`OffsetsApi._offsets_call` with their own reading (a normalizer, a dummy prefix).
The spans follow :mod:`bytepair.offsets`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Literal, TypeVar

from bytepair import _core
from bytepair.offsets import Piece, identity, token_spans
from bytepair.specials import ALLOWED_DEFAULT, DISALLOWED_DEFAULT

__all__ = ["OffsetsApi", "Span"]

Span = tuple[int, int]
_T = TypeVar("_T")
_R = TypeVar("_R")
_CoreCall = Callable[[_T, _core.SpecialSet | None, _core.SpecialSet | None], _R]
_Result = tuple[list[int], list[Span]]


class OffsetsApi:
    """:meth:`encode_with_offsets`; mixed into :class:`bytepair.Encoding`."""

    if TYPE_CHECKING:
        _core: _core.Encoder

        def _run(
            self,
            call: _CoreCall[str, _R],
            text: str,
            allowed_special: Literal["all"] | Collection[str],
            disallowed_special: Literal["all"] | Collection[str],
        ) -> _R: ...

    def encode_with_offsets(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = ALLOWED_DEFAULT,
        disallowed_special: Literal["all"] | Collection[str] = DISALLOWED_DEFAULT,
        add_special_tokens: bool = True,
    ) -> tuple[list[int], list[Span]]:
        """The ids of ``encode`` and, for each, its ``(start, end)`` span of characters in
        ``text``: Hugging Face ``tokenizers``' ``Encoding.offsets``.

        A token that holds only part of a character (byte-level BPE splits an emoji into
        several tokens) spans the whole character, so neighbouring spans may overlap; a token
        the text does not spell (a beginning-of-text token, a post-processor's ``[CLS]``) spans
        ``(0, 0)``; a Hugging Face pipeline that trims offsets leaves spaces out of the spans.

        >>> byte_encoding.encode_with_offsets("hé<s>", allowed_special="all")
        ([104, 195, 169, 256], [(0, 1), (1, 2), (1, 2), (2, 5)])
        """
        call = self._offsets_call(add_special_tokens)
        return self._run(call, text, allowed_special, disallowed_special)

    def _offsets_call(self, add_special_tokens: bool) -> _CoreCall[str, _Result]:
        core = self._core

        def call(
            text: str, allowed: _core.SpecialSet | None, disallowed: _core.SpecialSet | None
        ) -> _Result:
            ids = core.encode(text, allowed, disallowed)
            pieces = [Piece(data) for data in core.decode_tokens_bytes(ids)]
            return ids, token_spans(identity(text), pieces)

        return call
