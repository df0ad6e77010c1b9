"""The offsets of a SentencePiece model: where each piece lies in the text.

The text is cut at the special tokens the ids hold; each part is normalized as the model
normalizes it (:meth:`SentencePieceAlignment.normalize`, the rules of
:meth:`bytepair.reference.sentencepiece.SentencePieceReference.normalize` with each character's
origin kept), and the pieces are walked over it by :func:`bytepair.offsets.token_spans`.

The dummy prefix belongs to the character after it (to the one before it when whitespace is a
suffix), as ``tokenizers``' ``Metaspace`` and ``Prepend`` align it; a space that
``remove_extra_whitespaces`` drops belongs to no piece; a byte piece spans its whole character.
"""

from __future__ import annotations

from collections.abc import Sequence

from bytepair import _core
from bytepair.formats.values import SentencePieceComponents
from bytepair.offsets import Aligned, Piece, token_spans

__all__ = ["SentencePieceAlignment"]

Span = tuple[int, int]

# sentencepiece's piece types.
_UNKNOWN, _USER_DEFINED, _BYTE = 2, 4, 6


class SentencePieceAlignment:
    """Offsets for one SentencePiece model (built once per encoding)."""

    def __init__(self, c: SentencePieceComponents, core: _core.SentencePieceEncoder) -> None:
        self.c = c
        self.core = core
        self.space = c.replacement if c.escape_whitespaces else " "
        # A .model's spans are sentencepiece's; a tokenizer.json's are tokenizers'.
        self.to_next = c.source_format == "sentencepiece-model"
        self.pieces: list[Piece] = []
        # User-defined pieces by their first character, longest first (sentencepiece's
        # PrefixMatcher): the longest one that matches is one unit.
        self.user_defined: dict[str, list[str]] = {}
        for text, _, kind in c.pieces:
            if kind == _BYTE:
                self.pieces.append(Piece(bytes([int(text[3:5], 16)])))
            elif kind == _UNKNOWN:
                self.pieces.append(Piece(None))
            else:
                self.pieces.append(Piece(text.encode("utf-8")))
            if kind == _USER_DEFINED:
                self.user_defined.setdefault(text[0], []).append(text)
        for candidates in self.user_defined.values():
            candidates.sort(key=len, reverse=True)
        self.specials = {i: t for t, i in c.special_tokens.items()}

    def _units(self, text: str) -> list[tuple[str, int]]:
        units, at = [], 0
        while at < len(text):
            candidates = self.user_defined.get(text[at], ())
            found = next((u for u in candidates if text.startswith(u, at)), None)
            unit = found or text[at]
            units.append((unit, at))
            at += len(unit)
        return units

    def normalize(self, text: str, shift: int, at_start: bool) -> Aligned:
        """``text`` (at ``shift`` in the whole text) as the merge step reads it."""
        c, space = self.c, self.space
        units = self._units(text)
        if c.remove_extra_whitespaces:
            while units and units[0][0] == " ":
                units.pop(0)
        if not units:
            return Aligned("", [])
        chars: list[str] = []
        origin: list[int] = []
        previous_space = c.remove_extra_whitespaces
        for unit, at in units:
            k = 0
            if previous_space:  # a run of spaces counts once
                while k < len(unit) and unit[k] == " ":
                    k += 1
            if k < len(unit):
                for j in range(k, len(unit)):
                    ch = space if unit[j] == " " and c.escape_whitespaces else unit[j]
                    chars.extend(ch)
                    origin.extend([shift + at + j] * len(ch))
                previous_space = unit.endswith(" ")
            if not c.remove_extra_whitespaces:
                previous_space = False
        if c.remove_extra_whitespaces:
            while len(chars) >= len(space) and "".join(chars[-len(space) :]) == space:
                del chars[-len(space) :], origin[-len(space) :]
        if not chars:
            return Aligned("", [])
        unconditional = c.prepend == "always"
        if unconditional and c.treat_whitespace_as_suffix:
            chars.extend(space)
            origin.extend([origin[-1]] * len(space))
        elif unconditional or (
            (c.prepend == "always_unless_present" or (c.prepend == "first" and at_start))
            and not "".join(chars).startswith(c.replacement)
        ):
            chars[:0] = space if unconditional else c.replacement
            n = len(space if unconditional else c.replacement)
            origin[:0] = [origin[0]] * n
        return Aligned("".join(chars), origin)

    def spans(self, text: str, ids: Sequence[int]) -> list[Span]:
        """The span of each of ``ids``, the model's ids of ``text`` (no beginning or end)."""
        spans: list[Span] = []
        pos, i = 0, 0
        while i <= len(ids):
            j = i
            while j < len(ids) and ids[j] not in self.specials:
                j += 1
            end = len(text)
            if j < len(ids):
                end = text.find(self.specials[ids[j]], pos)
                if end < 0:
                    raise RuntimeError(
                        f"bytepair internal error: special token {ids[j]} is not in the text "
                        f"after {pos}; please report it"
                    )
            aligned = self.normalize(text[pos:end], pos, pos == 0)
            aligned = Aligned(aligned.text, aligned.origin, end)
            pieces = [self.pieces[t] for t in ids[i:j]]
            spans.extend(token_spans(aligned, pieces, to_next=self.to_next))
            if j == len(ids):
                break
            content = self.specials[ids[j]]
            spans.append((end, end + len(content)))
            pos, i = end + len(content), j + 1
        return spans
