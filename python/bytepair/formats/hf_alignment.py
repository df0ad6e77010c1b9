"""Hugging Face normalizers that also say where each output character came from.

:func:`aligned_normalizer_of` mirrors :func:`~bytepair.formats.hf_pipeline.normalizer_of` over
:class:`~bytepair.offsets.Aligned` texts, with the alignments ``tokenizers``' ``NormalizedString``
keeps: a character that replaces others belongs to the first of them (a composition), the
characters a character expands to all belong to it (a decomposition, a lowercase ``İ``), the
text a ``Replace`` puts in belongs to the last character it replaced, and a ``Prepend`` belongs
to the first character. It runs only for offsets; the text it gives is checked against the
normalizer's own.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from typing import Any, Literal, cast

from bytepair.formats.hf_pipeline import (
    _UNKNOWN_SPLIT,
    REPLACE_SECONDS_FLOOR,
    REPLACE_SECONDS_PER_CHAR,
    _lowercase,
    _type_of,
    _unicode_normalizer,
)
from bytepair.formats.regex_dialects import onig_to_rust
from bytepair.offsets import Aligned

__all__ = ["AlignedNormalizer", "aligned_normalizer_of"]

AlignedNormalizer = Callable[[Aligned], Aligned]

_Form = Literal["NFC", "NFD", "NFKC", "NFKD"]


def _unknown(c: str) -> bool:
    # Characters tokenizers' tables lack: starters that neither decompose nor compose.
    return _UNKNOWN_SPLIT.match(c) is not None


def _combining(c: str) -> int:
    return 0 if _unknown(c) else unicodedata.combining(c)


def _compose(starter: str, c: str) -> str | None:
    if _unknown(starter) or _unknown(c):
        return None
    joined = unicodedata.normalize("NFC", starter + c)
    return joined if len(joined) == 1 else None


def _aligned_unicode(form: _Form) -> AlignedNormalizer:
    normalize = _unicode_normalizer(form)
    decomposition: _Form = "NFD" if form in ("NFC", "NFD") else "NFKD"
    composes = form in ("NFC", "NFKC")

    def run(a: Aligned) -> Aligned:
        expected = normalize(a.text)
        if expected == a.text:
            return a
        # As unicode-normalization-alignments: the first character of a decomposition replaces
        # its source, the others are inserted; each keeps that mark through the reordering.
        chars: list[str] = []
        consumed: list[int] = []
        for c in a.text:
            parts = c if _unknown(c) else unicodedata.normalize(decomposition, c)
            chars.extend(parts)
            consumed.extend([1] + [0] * (len(parts) - 1))
        # Canonical order: marks move within a run of non-starters, with their marks.
        i = 0
        while i < len(chars):
            if _combining(chars[i]) == 0:
                i += 1
                continue
            j = i
            while j < len(chars) and _combining(chars[j]) != 0:
                j += 1
            run = sorted(
                zip(chars[i:j], consumed[i:j], strict=True), key=lambda p: _combining(p[0])
            )
            chars[i:j] = [c for c, _ in run]
            consumed[i:j] = [n for _, n in run]
            i = j
        if composes:
            chars, taken = _composed(chars)
            grouped, at = [], 0
            for n in taken:  # a composite replaces what its parts replaced
                grouped.append(sum(consumed[at : at + n]))
                at += n
            consumed = grouped
        # tokenizers' NormalizedString::transform: a replacing character takes the alignment of
        # the next source characters in order, an inserted one that of the last taken.
        origin: list[int] = []
        k = 0
        for n in consumed:
            origin.append(a.origin[k] if n else a.origin[max(k - 1, 0)])
            k += n
        out = Aligned("".join(chars), origin)
        if out.text != expected:
            raise RuntimeError(
                f"bytepair internal error: aligned {form} of {a.text!r} differs from {form}; "
                "please report it"
            )
        return out

    return run


def _composed(chars: list[str]) -> tuple[list[str], list[int]]:
    """Canonical composition; for each output character, how many input characters it took."""
    out: list[str] = []
    taken: list[int] = []
    starter: int | None = None
    for c in chars:
        ccc = _combining(c)
        if starter is not None:
            previous = _combining(out[-1]) if len(out) - 1 > starter else None
            blocked = previous is not None and (previous == 0 or previous >= ccc)
            composite = None if blocked else _compose(out[starter], c)
            if composite is not None:
                out[starter] = composite
                taken[starter] += 1
                continue
        out.append(c)
        taken.append(1)
        if ccc == 0:
            starter = len(out) - 1
    return out, taken


def _aligned_lowercase(a: Aligned) -> Aligned:
    if _lowercase(a.text) == a.text:
        return a
    chars: list[str] = []
    origin: list[int] = []
    for c, o in zip(a.text, a.origin, strict=True):
        lower = c.lower()  # one character at a time, as tokenizers (see _lowercase)
        chars.append(lower)
        origin.extend([o] * len(lower))
    return Aligned("".join(chars), origin)


def _aligned_replace(spec: Mapping[str, Any]) -> AlignedNormalizer:
    content = spec["content"]
    pattern = spec["pattern"]
    if "String" in pattern:
        old = pattern["String"]

        def spans(text: str) -> list[tuple[int, int]]:
            found, at = [], text.find(old) if old else -1
            while at >= 0:
                found.append((at, at + len(old)))
                at = text.find(old, at + len(old))
            return found

    else:
        import regex

        compiled = regex.compile(onig_to_rust(pattern["Regex"]))

        def spans(text: str) -> list[tuple[int, int]]:
            limit = REPLACE_SECONDS_FLOOR + REPLACE_SECONDS_PER_CHAR * len(text)
            return [m.span() for m in compiled.finditer(text, timeout=limit)]

    def run(a: Aligned) -> Aligned:
        matches = spans(a.text)
        if not matches:
            return a
        pieces: list[str] = []
        origin: list[int] = []
        last = 0
        for start, end in matches:
            pieces.append(a.text[last:start])
            origin.extend(a.origin[last:start])
            # The text put in belongs to the last character replaced (the one before, if none).
            owner = a.origin[end - 1] if end > 0 else (a.origin[0] if a.origin else 0)
            pieces.append(content)
            origin.extend([owner] * len(content))
            last = end
        pieces.append(a.text[last:])
        origin.extend(a.origin[last:])
        return Aligned("".join(pieces), origin)

    return run


def _aligned_prepend(prefix: str) -> AlignedNormalizer:
    def run(a: Aligned) -> Aligned:
        if not a.text:
            return a
        return Aligned(prefix + a.text, [a.origin[0]] * len(prefix) + list(a.origin))

    return run


def aligned_normalizer_of(spec: Any) -> AlignedNormalizer | None:
    """The aligned form of a ``normalizer`` that
    :func:`~bytepair.formats.hf_pipeline.normalizer_of` compiled (so ``spec`` is valid).

    >>> run = aligned_normalizer_of({"type": "NFKC"})
    >>> out = run(Aligned("ﬁx", range(2)))
    >>> out.text, list(out.origin)
    ('fix', [0, 0, 1])
    """
    if spec is None:
        return None
    kind = _type_of(spec, "normalizer")
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return _aligned_unicode(cast(_Form, kind))
    if kind == "Lowercase":
        return _aligned_lowercase
    if kind == "Replace":
        return _aligned_replace(spec)
    if kind == "Prepend":
        return _aligned_prepend(spec["prepend"])
    if kind == "Sequence":
        steps = [s for s in map(aligned_normalizer_of, spec["normalizers"]) if s is not None]

        def sequence(a: Aligned) -> Aligned:
            for step in steps:
                a = step(a)
            return a

        return sequence
    raise ValueError(f"normalizer: no aligned form of {kind!r}")
