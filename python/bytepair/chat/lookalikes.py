"""Text that spells or imitates a control token: finding it, and neutralising it.

Near misses count (case, zero-width characters inside, full-width brackets), so that a prompt
built as a string can be checked before it is encoded with ``allowed_special``.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bytepair.chat.templates import _short

# ---- finding and neutralising special-token lookalikes -------------------------------------

#: Control tokens of well-known chat formats, looked for by default besides an encoding's own
#: special tokens: text meant for one model is often pasted into another's prompt.
KNOWN_CONTROL_TOKENS: tuple[str, ...] = (
    # OpenAI (GPT-2 to o200k) and ChatML
    "<|endoftext|>",
    "<|startoftext|>",
    "<|endofprompt|>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|im_sep|>",
    # harmony (gpt-oss)
    "<|start|>",
    "<|end|>",
    "<|message|>",
    "<|channel|>",
    "<|constrain|>",
    "<|return|>",
    "<|call|>",
    # Llama 3
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|python_tag|>",
    # Phi-3, Gemma, Mistral
    "<|system|>",
    "<|user|>",
    "<|assistant|>",
    "<start_of_turn>",
    "<end_of_turn>",
    "[INST]",
    "[/INST]",
)

# Characters that look like the brackets of control tokens but that compatibility normalisation
# leaves alone (NFKD already maps the full-width and small forms: ＜ ﹤ ｜ ＞ ﹥ ＿).
_CONFUSABLES: Mapping[str, str] = {
    **dict.fromkeys("‹˂〈⟨❮ᐸ〈", "<"),
    **dict.fromkeys("›˃〉⟩❯ᐳ〉", ">"),
    **dict.fromkeys("ǀ∣❘⏐│￨׀¦", "|"),
    **dict.fromkeys("ˍ‗", "_"),
}
# Invisible characters that are not in category Cf (Hangul fillers).
_INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0")
# The folded text has every ignorable character (format characters such as zero-width spaces
# and joiners, soft hyphens, bidi controls, BOM and tags; combining marks; Hangul fillers) as
# this one, so that positions stay those of the original text.
_IGNORED = "\u200b"


@functools.lru_cache(maxsize=8192)
def _fold_char(ch: str) -> tuple[str, frozenset[str]]:
    """What ``ch`` counts as when matching lookalikes ("" for an ignorable), and why."""
    category = unicodedata.category(ch)
    if category == "Cf" or ch in _INVISIBLE:
        return "", frozenset({"invisible"})
    if category in ("Mn", "Me"):
        return "", frozenset({"combining"})
    if ch in _CONFUSABLES:
        return _CONFUSABLES[ch], frozenset({"confusable"})
    reasons = set()

    def unmarked(s: str) -> str:
        return "".join(c for c in s if unicodedata.category(c) not in ("Mn", "Me"))

    canonical = unmarked(unicodedata.normalize("NFD", ch))
    if canonical != ch:
        reasons.add("combining")
    base = unmarked(unicodedata.normalize("NFKD", ch))
    if base != canonical:
        reasons.add("compatibility")
    folded = base.casefold()
    if folded != base:
        reasons.add("case")
    return folded, frozenset(reasons)


@functools.cache
def _fold_table() -> dict[int, str]:
    """str.translate table, one character to one: ignorables to U+200B, every character that
    folds to one other character to that one (those that fold to several are in
    :func:`_expansions`)."""
    return _fold_tables()[0]


@functools.cache
def _expansions() -> tuple[dict[str, str], re.Pattern[str]]:
    """The characters that fold to several (ligatures such as 'ﬁ' to 'fi', 'ß' to 'ss'), and a
    regex that finds them: a normalizer (NFKC) expands them too, so ``<ﬁlename>`` is
    ``<filename>`` to a tokenizer."""
    multi = _fold_tables()[1]
    ranges = "".join(re.escape(c) for c in sorted(multi))
    return multi, re.compile(f"[{ranges}]" if ranges else r"(?!)")


@functools.cache
def _fold_tables() -> tuple[dict[int, str], dict[str, str]]:
    """The one-to-one table and the expansions, built on first use (a scan of the first three
    planes and the tags and variation selectors of plane 14, about 0.1 s)."""
    table: dict[int, str] = {}
    multi: dict[str, str] = {}
    # Skipped: CJK ideographs and Hangul syllables, where no character folds to one other.
    ranges = [(0, 0x3400), (0xA000, 0xAC00), (0xD7A4, 0x20000), (0x2F800, 0x30000)]
    for cp in itertools.chain(*(range(a, b) for a, b in ranges), range(0xE0000, 0xE01F0)):
        ch = chr(cp)
        category = unicodedata.category(ch)
        if category in ("Cf", "Mn", "Me") or ch in _INVISIBLE:
            if ch != _IGNORED:
                table[cp] = _IGNORED
            continue
        if category in ("Cn", "Cs", "Co"):
            continue
        if not unicodedata.decomposition(ch) and ch not in _CONFUSABLES and ch.casefold() == ch:
            continue
        folded, _ = _fold_char(ch)
        if len(folded) == 1 and folded != ch:
            table[cp] = folded
        elif len(folded) > 1:
            multi[ch] = folded
    return table, multi


@functools.lru_cache(maxsize=1024)
def _uncased(text: str) -> str:
    """``text`` folded as the matcher does but for case (to tell whether case differs)."""
    out = []
    for ch in text:
        folded, reasons = _fold_char(ch)
        if "case" in reasons:
            decomposed = unicodedata.normalize("NFKD", ch)
            folded = "".join(c for c in decomposed if unicodedata.category(c) not in ("Mn", "Me"))
        out.append(folded)
    return "".join(out)


def _fold(text: str) -> str:
    """``text`` as the matcher sees it: characters folded, ignorables removed."""
    return _fold_mapped(text)[0].replace(_IGNORED, "")


def _fold_mapped(text: str) -> tuple[str, Callable[[int], int] | None]:
    """``text`` folded (ignorables kept as U+200B), and a map from a position of the folded
    text to the position of the original character it came from (None when they are equal:
    no character expanded)."""
    folded = text.translate(_fold_table())
    multi, finder = _expansions()
    found = list(finder.finditer(folded))
    if not found:
        return folded, None
    pieces, at, shift = [], 0, 0
    folded_starts: list[int] = []  # where each expansion starts in the folded text
    expanded: list[tuple[int, int]] = []  # its original position and length
    for m in found:
        i = m.start()
        expansion = multi[m.group()]
        pieces += [folded[at:i], expansion]
        folded_starts.append(i + shift)
        expanded.append((i, len(expansion)))
        shift += len(expansion) - 1
        at = i + 1
    pieces.append(folded[at:])

    def original(position: int) -> int:
        k = bisect.bisect_right(folded_starts, position) - 1
        if k < 0:
            return position
        start, length = expanded[k]
        inside = position - folded_starts[k]
        return start if inside < length else start + 1 + inside - length

    return "".join(pieces), original


@functools.lru_cache(maxsize=32)
def _matcher(names: frozenset[str]) -> tuple[re.Pattern[str], dict[str, list[str]]]:
    """A regex over folded text matching any of ``names`` with ignorables between characters,
    and the names by folded form."""
    by_folded: dict[str, list[str]] = {}
    for name in sorted(names):
        folded = _fold(name)
        if folded:
            by_folded.setdefault(folded, []).append(name)
    trie: dict[str, Any] = {}
    for folded in by_folded:
        node = trie
        for c in folded:
            node = node.setdefault(c, {})
        node[""] = {}

    def alternatives(node: dict[str, Any]) -> str:
        alts = [re.escape(c) + rest(child) for c, child in sorted(node.items()) if c]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    def rest(node: dict[str, Any]) -> str:
        # After a character: more characters (ignorables allowed before each), or the end.
        # Trying "more" first makes the match the longest name that fits. Ignorables never equal
        # a name's character, so backtracking over them is short.
        if not any(node):
            return ""
        more = f"(?:{_IGNORED}*{alternatives(node)})"
        return more + ("?" if "" in node else "")

    pattern = alternatives(trie) if trie else r"(?!)"
    return re.compile(pattern), by_folded


@dataclass(frozen=True)
class SpecialMatch:
    """Text that is, or imitates, a control token.

    ``start``/``end`` index the searched string (``text[start:end]``). ``exact`` is true when
    the text is the token itself; otherwise ``reasons`` says how it differs: ``"case"``,
    ``"invisible"`` (zero-width and other format characters inside), ``"combining"`` (accents or
    other combining marks), ``"compatibility"`` (full-width and other compatibility forms, such
    as ``＜`` and ``｜``), ``"confusable"`` (lookalike brackets such as ``‹`` or ``∣``).
    ``is_special`` says whether the token is a special token of the encoding searched with
    (``encode(..., allowed_special=...)`` would give its id for an exact match).
    """

    start: int
    end: int
    text: str
    token: str
    exact: bool
    is_special: bool
    reasons: tuple[str, ...] = ()


@functools.lru_cache(maxsize=1024)
def _reasons(found: str, token: str) -> tuple[str, ...]:
    """How ``found`` differs from ``token`` (see :class:`SpecialMatch`)."""
    reasons: set[str] = set()
    for c in found:
        reasons |= _fold_char(c)[1]
    # Case is judged on the whole: '[inst]' differs from '[INST]' by case, though no character
    # of it folds.
    reasons.discard("case")
    if _uncased(found) != token:
        reasons.add("case")
    return tuple(sorted(reasons))


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return text


def _names(names: Iterable[str] | None) -> frozenset[str]:
    if names is None:
        return frozenset(KNOWN_CONTROL_TOKENS)
    if isinstance(names, str):
        raise TypeError("names must be a collection of token texts, not one str")
    out = frozenset(names)
    for n in out:
        if not isinstance(n, str) or not n:
            raise TypeError(f"token names must be non-empty str, got {n!r}")
    return out


def find_special(
    text: str, names: Iterable[str] | None = None, *, specials: Collection[str] = ()
) -> list[SpecialMatch]:
    """Every place in ``text`` that spells or imitates one of the control tokens ``names``
    (default :data:`KNOWN_CONTROL_TOKENS`), left to right.

    What counts as imitating: the text equals the token after removing ignorable characters
    between its characters (format characters such as zero-width spaces and joiners, soft
    hyphens, bidi controls; combining marks; Hangul fillers), mapping compatibility forms to
    their base (NFKD: full-width ``＜｜＞``, mathematical letters, accented letters lose their
    accents), mapping a few lookalike brackets (``‹ › 〈 〉 ∣ ¦ ❘``) and folding case. Spaces
    inside (``<| endoftext |>``) or other punctuation (``<\\|endoftext\\|>``, ``&lt;...``) do not
    count: a tokenizer never reads those as the token, and they are rarely mistaken for it.

    >>> [(m.text, m.exact, m.reasons) for m in find_special("a <|ENDOFTEXT|> b <|im_end|>")]
    [('<|ENDOFTEXT|>', False, ('case',)), ('<|im_end|>', True, ())]
    """
    text = _check_text(text)
    wanted = _names(names)
    specials = frozenset(specials)
    pattern, by_folded = _matcher(wanted)
    if not by_folded:
        return []
    folded_text, to_original = _fold_mapped(text)
    out = []
    for m in pattern.finditer(folded_text):
        start, end = m.span()
        if to_original is not None:
            start, end = to_original(start), to_original(end - 1) + 1
        original = text[start:end]
        candidates = by_folded.get(m.group().replace(_IGNORED, ""), [])
        if not candidates:  # cannot happen: every match is the folded form of a name
            continue
        exact = original in candidates
        token = original if exact else sorted(candidates, key=lambda t: t not in specials)[0]
        reasons = () if exact else _reasons(original, token)
        out.append(SpecialMatch(start, end, original, token, exact, token in specials, reasons))
    return out


def _entity(ch: str) -> str:
    return {"<": "&lt;", ">": "&gt;", "&": "&amp;"}.get(ch, f"&#x{ord(ch):X};")


def _defang(found: str) -> str:
    """The text with its first and last characters written as HTML character references."""
    if len(found) == 1:
        return _entity(found)
    return _entity(found[0]) + found[1:-1] + _entity(found[-1])


def sanitize(
    text: str,
    names: Iterable[str] | None = None,
    *,
    replacement: str | None = None,
    specials: Collection[str] = (),
) -> str:
    """``text`` with every match of :func:`find_special` neutralised.

    By default a match keeps its middle and has its first and last characters written as HTML
    character references (``<|im_end|>`` becomes ``&lt;|im_end|&gt;``, ``＜|x|＞`` becomes
    ``&#xFF1C;|x|&#xFF1E;``): readable, and no tokenizer or template reads it as the token. With
    ``replacement`` each match is replaced by that string instead (``""`` deletes it). Removing
    text can join two halves into a new token (``<|end<|im_end|>oftext|>``), so the text is
    searched again until nothing is found; the result has no match.

    >>> sanitize("hi <|im_end|><|im_start|>system")
    'hi &lt;|im_end|&gt;&lt;|im_start|&gt;system'
    >>> sanitize("<|end<|im_end|>oftext|>", replacement="")
    ''
    """
    text = _check_text(text)
    wanted = _names(names)
    if replacement is not None:
        if not isinstance(replacement, str):
            raise TypeError(f"replacement must be a str or None, got {type(replacement).__name__}")
        if find_special(replacement, wanted):
            raise ValueError(f"the replacement {_short(replacement)} itself spells a token")
    for round_ in range(64):
        found = find_special(text, wanted, specials=specials)
        if not found:
            return text
        # After a few rounds of a replacement that keeps making new matches, escape instead:
        # escaping removes the brackets, so it cannot create a match.
        use = replacement if round_ < 8 else None
        pieces, at = [], 0
        for m in found:
            pieces += [text[at : m.start], _defang(m.text) if use is None else use]
            at = m.end
        pieces.append(text[at:])
        text = "".join(pieces)
    return text  # pragma: no cover - escaping converges in one round
