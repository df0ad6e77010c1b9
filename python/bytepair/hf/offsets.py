"""The offsets of a Hugging Face pipeline: ``tokenizers``' ``Encoding.offsets``.

The text is cut at its added tokens as the core cuts it; each part between them is normalized
with alignments (:mod:`bytepair.formats.hf_alignment`) and encoded; the spans of its tokens come
from :func:`bytepair.offsets.token_spans`. A ``ByteLevel`` or ``RobertaProcessing``
post-processor with ``trim_offsets`` then takes leading and trailing spaces off each span, and
the post-processor's own tokens get ``(0, 0)``, as in ``tokenizers``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

from bytepair import _core
from bytepair._whitespace import is_rust_whitespace
from bytepair.bytes_unicode import bytes_to_unicode
from bytepair.formats.hf_alignment import AlignedNormalizer, aligned_normalizer_of
from bytepair.hf.pipeline import HfPipeline
from bytepair.offsets import Aligned, Piece, identity, token_spans

__all__ = ["HfOffsets"]

Span = tuple[int, int]


def _processors(spec: Any) -> Iterator[dict[str, Any]]:
    if isinstance(spec, dict):
        if spec.get("type") == "Sequence":
            for p in spec.get("processors", []):
                yield from _processors(p)
        else:
            yield spec


def _byte_levels(spec: Any) -> Iterator[dict[str, Any]]:
    if isinstance(spec, dict):
        if spec.get("type") == "Sequence":
            for p in spec.get("pretokenizers", []):
                yield from _byte_levels(p)
        elif spec.get("type") == "ByteLevel":
            yield spec


def _spaces(chars: Iterable[str]) -> int:
    n = 0
    for c in chars:
        if not (c == "\u0120" or is_rust_whitespace(c)):
            break
        n += 1
    return n


BYTES_TO_UNICODE = bytes_to_unicode()


def _fallback_ids(core: _core.PairEncoder, char: str) -> tuple[int, ...] | None:
    try:
        return tuple(core.encode_single_token(f"<0x{x:02X}>".encode()) for x in char.encode())
    except KeyError:
        return None


class HfOffsets:
    """Offsets for one :class:`HfPipeline` and its core (built once per encoding)."""

    def __init__(self, pipeline: HfPipeline, core: _core.PairEncoder) -> None:
        self.pipeline = pipeline
        self.core = core
        config = pipeline.config
        self.normalize: AlignedNormalizer | None = aligned_normalizer_of(config.get("normalizer"))
        # ByteLevel's add_prefix_space (true unless the file says false) puts a space before
        # each piece that lacks one: a character the text does not have.
        prefix_space = any(
            s.get("add_prefix_space", True) for s in _byte_levels(config.get("pre_tokenizer"))
        )
        self.insertable = b" " if prefix_space else b""
        # Without an unknown token, tokenizers leaves out the bytes it has no token for.
        # With one, the unknown token reads what the model has no token for.
        options = config.get("model_options") or {}
        unk = options.get("unk_token")
        have = {data[0] for data in core.token_byte_values() if len(data) == 1}
        # byte_fallback: such a byte is the <0xHH> tokens of its byte-level character's UTF-8.
        self.fallback: dict[int, list[tuple[tuple[int, ...], int]]] = {}
        for b in set(range(256)) - have if options.get("byte_fallback") else ():
            seq = _fallback_ids(core, BYTES_TO_UNICODE[b])
            if seq is not None:
                self.fallback.setdefault(seq[0], []).append((seq, b))
                have.add(b)
        self.dropped = frozenset(() if isinstance(unk, str) else set(range(256)) - have)
        # trim_offsets of the post-processor: None when off, else its add_prefix_space.
        self.trim: bool | None = None
        for p in _processors(config.get("post_processor")):
            if p.get("type") in ("ByteLevel", "RobertaProcessing") and p.get("trim_offsets", True):
                self.trim = bool(p.get("add_prefix_space", True))
        self.added: dict[int, Piece] = {}
        if isinstance(unk, str):
            with contextlib.suppress(KeyError):
                self.added[core.encode_single_token(unk.encode("utf-8"))] = Piece(None)
        self.added_text: set[int] = set()
        for t in pipeline.added:
            content = t.content
            if t.normalized and pipeline.normalizer is not None:
                content = pipeline.normalizer(content)
            self.added[t.id] = Piece(content.encode("utf-8"), t.lstrip, t.rstrip)
            self.added_text.add(t.id)

    def _spans(self, aligned: Aligned, ids: list[int]) -> list[Span]:
        # The fallback tokens of one byte read that byte together: each spans its character.
        added, data = self.added, self.core.decode_tokens_bytes(ids)
        pieces: list[Piece] = []
        owner: list[int] = []
        i = 0
        while i < len(ids):
            seq, b = next(
                (f for f in self.fallback.get(ids[i], ()) if tuple(ids[i : i + len(f[0])]) == f[0]),
                ((ids[i],), -1),
            )
            pieces.append(Piece(bytes([b])) if b >= 0 else added.get(ids[i]) or Piece(data[i]))
            owner.extend([len(pieces) - 1] * len(seq))
            i += len(seq)
        spans = token_spans(aligned, pieces, insertable=self.insertable, dropped=self.dropped)
        return [spans[k] for k in owner]

    def encode(
        self,
        text: str,
        allowed: _core.SpecialSet | None,
        disallowed: _core.SpecialSet | None,
        add_special_tokens: bool,
    ) -> tuple[list[int], list[Span]]:
        """The ids of ``text`` (as :meth:`HfPipeline.encode`) and the span of each."""
        core, pipeline = self.core, self.pipeline
        if self.normalize is None:
            ids = core.encode(text, allowed, disallowed)
            spans = self._spans(identity(text), ids)
        else:
            ids, spans = [], []
            pos = 0
            for part in core.split_added(text, allowed, disallowed):
                if isinstance(part, int):
                    ids.append(part)
                    span = self._added_span(text, pos, part)
                    spans.append(span)
                    pos = span[1]
                    continue
                if not text.startswith(part, pos):
                    raise RuntimeError(
                        f"bytepair internal error: a part of the text is not at {pos}; please "
                        "report it"
                    )
                aligned = self.normalize(identity(part, pos))
                if pipeline.normalizer is not None and aligned.text != pipeline.normalizer(part):
                    raise RuntimeError(
                        "bytepair internal error: the aligned normalizer differs from the "
                        "normalizer; please report it"
                    )
                part_ids = core.encode_normalized(aligned.text, allowed)
                ids.extend(part_ids)
                spans.extend(self._spans(aligned, part_ids))
                pos += len(part)
        if self.trim is not None:
            spans = self._trimmed(text, ids, spans, self.trim)
        if add_special_tokens and (pipeline.prefix or pipeline.suffix):
            ids = [*pipeline.prefix, *ids, *pipeline.suffix]
            spans = [(0, 0)] * len(pipeline.prefix) + spans + [(0, 0)] * len(pipeline.suffix)
        return ids, spans

    def _added_span(self, text: str, pos: int, token: int) -> Span:
        """The span of the added token the core cut from ``text`` at ``pos``."""
        piece = self.added[token]
        start = end = pos
        if piece.lstrip:
            while end < len(text) and is_rust_whitespace(text[end]):
                end += 1
        content = (piece.data or b"").decode("utf-8")
        if not text.startswith(content, end):
            raise RuntimeError(
                f"bytepair internal error: added token {token} is not at {end}; please report it"
            )
        end += len(content)
        if piece.rstrip:
            while end < len(text) and is_rust_whitespace(text[end]):
                end += 1
        return (start, end)

    def _trimmed(
        self, text: str, ids: list[int], spans: list[Span], add_prefix_space: bool
    ) -> list[Span]:
        # tokenizers' process_offsets: count the spaces (Ġ or whitespace) that open and close
        # each token's string and move the span's ends past them.
        out = []
        for i, (token, (start, end)) in enumerate(zip(ids, spans, strict=True)):
            if token in self.added_text:
                s = text[start:end]
                leading, trailing = _spaces(s), _spaces(reversed(s))
            else:  # in the byte-level string a space is "Ġ"; no other byte maps to whitespace
                data = self.core.decode_single_token_bytes(token)
                leading = len(data) - len(data.lstrip(b" "))
                trailing = len(data) - len(data.rstrip(b" "))
            if leading:
                if (i == 0 or start == 0) and add_prefix_space and leading == 1:
                    leading = 0
                start = min(start + leading, end)
            if trailing and end >= trailing:
                end = max(end - trailing, start)
            out.append((start, end))
        return out
