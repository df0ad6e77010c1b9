"""The components of a Hugging Face tokenizer: normalizers, pre-tokenizers, post-processors.

A ``tokenizer.json`` describes a tokenizer as components; ``tokenizers`` runs, for each text:

1. added tokens that match the raw text (``normalized: false``) are split off;
2. the rest is normalized (NFC, Lowercase, ...), and added tokens with ``normalized: true`` are
   split off that;
3. the rest is pre-tokenized (a sequence of splits, ending in ``ByteLevel``) and merged;
4. a post-processor adds the model's special tokens (``<s>`` ... ``</s>``) when asked
   (``add_special_tokens=True``, the default of ``Tokenizer.encode``).

Steps 1, 3 and the added-token matching of step 2 run in Rust; :mod:`bytepair.hf` runs the
pipeline. This module compiles the JSON components into what the core takes (pre-tokenizer
stages, added tokens) and into Python for the rest: normalizers (with :mod:`unicodedata`,
applied between steps 1 and 2) and post-processors (a prefix and a suffix of ids).

Anything this module does not reproduce exactly raises ``ValueError`` naming the component and
its JSON path: a tokenizer that loads gives the ids ``tokenizers`` gives.

>>> [s.kind for s in stages_of({"type": "Sequence", "pretokenizers": [
...     {"type": "Digits", "individual_digits": True},
...     {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}]}, "pre_tokenizer")]
['numeric', 'byte_level']
>>> normalizer_of({"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]},
...               "normalizer")("ＡΣ")
'aσ'
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from bytepair import patterns
from bytepair.formats.regex_dialects import onig_to_rust

__all__ = [
    "AddedToken",
    "Normalizer",
    "Stage",
    "assign_added_ids",
    "check_decoder",
    "normalizer_of",
    "post_processor_of",
    "stages_of",
]

Normalizer = Callable[[str], str]
"""A text-to-text function (a compiled ``normalizer``)."""

StageKind = Literal["byte_level", "regex", "literal", "numeric", "punctuation"]


@dataclass(frozen=True)
class Stage:
    """One pre-tokenizer stage, as the core's ``PairEncoder`` reads it (by these names).

    ``byte_level``: ``ByteLevel``, splitting first with ``pattern`` (GPT-2's) or not at all
    (None), then ``add_prefix_space``. The others are splits by ``behavior``, ``invert``ed or
    not: ``regex`` and ``literal`` by ``pattern``, ``numeric`` (``Digits``) and
    ``punctuation``.
    """

    kind: StageKind
    pattern: str | None = None
    behavior: str = "isolated"
    invert: bool = False
    add_prefix_space: bool = False


_BEHAVIORS = {
    "Removed": "removed",
    "Isolated": "isolated",
    "MergedWithPrevious": "merged_with_previous",
    "MergedWithNext": "merged_with_next",
    "Contiguous": "contiguous",
}


def _type_of(spec: Any, where: str) -> str:
    if not isinstance(spec, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(spec).__name__}")
    kind = spec.get("type")
    if not isinstance(kind, str):
        raise ValueError(f"{where}: no 'type'")
    return kind


def _field(
    spec: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str, default: Any
) -> Any:
    value = spec.get(key, default)
    # bool is an int in Python; a JSON `true` is never a number here.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{where}.{key}: expected {_kind_name(kind)}, got {value!r}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {
        bool: "true/false",
        int: "an integer",
        str: "a string",
        list: "a list",
        dict: "an object",
    }
    return " or ".join(names.get(k, k.__name__) for k in kinds)


MAX_NESTING = 64
"""How deeply ``Sequence`` components may nest (real files nest one or two levels)."""


def _nested(depth: int, where: str) -> int:
    # Deeper nesting is no tokenizer anyone trains, and would reach Python's recursion limit
    # (here, when the components are copied, and when a normalizer runs).
    if depth >= MAX_NESTING:
        raise ValueError(f"{where}: Sequence nested more than {MAX_NESTING} levels deep")
    return depth + 1


def _check_json_depth(spec: Any, where: str) -> None:
    """Any JSON inside a component (a Sequence is two levels: an object, then its list) nests
    at most about ``2 * MAX_NESTING`` levels, checked without recursion."""
    limit = 2 * MAX_NESTING + 8
    # Each entry's path is a chain (parent chain, key), spelled out only for the error.
    stack: list[tuple[Any, int, Any]] = [(spec, 1, None)]
    while stack:
        value, level, chain = stack.pop()
        if level > limit:
            keys = []
            while chain is not None:
                chain, key = chain
                keys.append(f"[{key}]" if isinstance(key, int) else f".{key}")
            at = where + "".join(reversed(keys))
            raise ValueError(f"{at}: JSON nested more than {limit} levels deep")
        if isinstance(value, dict):
            stack.extend((v, level + 1, (chain, k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, level + 1, (chain, i)) for i, v in enumerate(value))


def _unsupported(where: str, what: str, name: str, why: str = "") -> ValueError:
    return ValueError(
        f"{where}: unsupported {what} {name!r}{': ' + why if why else ''} "
        "(bytepair reproduces the components byte-level BPE models use and refuses the others "
        "rather than give ids that differ from tokenizers')"
    )


# ---- normalizers ---------------------------------------------------------------------------

# Characters whose normalization properties (a combining class, a decomposition) are missing
# from the Unicode tables of `tokenizers` (its normalizer crate predates Unicode 10), found by
# comparing it with Python's `unicodedata` (Unicode 14) over every code point. `tokenizers`
# treats them as unassigned: starters that block reordering and composition and decompose to
# themselves. Normalization is stable across Unicode versions except for newly assigned
# characters, so normalizing the text between these characters with `unicodedata` and keeping
# them as they are gives exactly `tokenizers`' result. U+11930 is the second half of the one new
# canonical composition (U+11935 + U+11930 = U+11938), which `tokenizers` therefore never makes.
# fmt: off
_TOKENIZERS_UNKNOWN = (
    (0x07FD, 0x07FD), (0x0898, 0x089F), (0x08CA, 0x08D3), (0x09FE, 0x09FE), (0x0C3C, 0x0C3C),
    (0x0D3B, 0x0D3C), (0x0EBA, 0x0EBA), (0x1715, 0x1715), (0x1ABF, 0x1ACE), (0x1DF6, 0x1DFA),
    (0x32FF, 0x32FF), (0xA7F2, 0xA7F4), (0xA82C, 0xA82C), (0xAB69, 0xAB69), (0x10781, 0x10785),
    (0x10787, 0x107B0), (0x107B2, 0x107BA), (0x10D24, 0x10D27), (0x10EAB, 0x10EAC),
    (0x10F46, 0x10F50), (0x10F82, 0x10F85), (0x11070, 0x11070), (0x1133B, 0x1133B),
    (0x1145E, 0x1145E), (0x11839, 0x1183A), (0x11930, 0x11930), (0x11938, 0x11938),
    (0x1193D, 0x1193E), (0x11943, 0x11943), (0x119E0, 0x119E0), (0x11A34, 0x11A34),
    (0x11A47, 0x11A47), (0x11A99, 0x11A99), (0x11D42, 0x11D42), (0x11D44, 0x11D45),
    (0x11D97, 0x11D97), (0x16FF0, 0x16FF1), (0x1E130, 0x1E136), (0x1E2AE, 0x1E2AE),
    (0x1E2EC, 0x1E2EF), (0x1F16C, 0x1F16C), (0x1FBF0, 0x1FBF9),
    # Assigned in Unicode 15.0/15.1 (Python 3.12/3.13), unknown to tokenizers' tables.
    (0x10EFD, 0x10EFF), (0x11F41, 0x11F42), (0x1E030, 0x1E06D), (0x1E08F, 0x1E08F),
    (0x1E4EC, 0x1E4EF),
)
# fmt: on
_UNKNOWN_SPLIT = re.compile(
    "([" + "".join(f"{chr(a)}-{chr(b)}" for a, b in _TOKENIZERS_UNKNOWN) + "])"
)


def _unicode_normalizer(form: Literal["NFC", "NFD", "NFKC", "NFKD"]) -> Normalizer:
    def normalize(text: str) -> str:
        if text.isascii():
            return text
        if _UNKNOWN_SPLIT.search(text) is None:
            return unicodedata.normalize(form, text)
        # The split keeps the separators at odd positions; those stay as they are.
        parts = _UNKNOWN_SPLIT.split(text)
        return "".join(p if i % 2 else unicodedata.normalize(form, p) for i, p in enumerate(parts))

    return normalize


def _lowercase(text: str) -> str:
    # tokenizers lowercases one character at a time (Rust's char::to_lowercase), so a final
    # capital sigma becomes "σ"; str.lower() would apply Unicode's Final_Sigma rule ("ς").
    if "\u03a3" in text:
        return "".join(c.lower() for c in text)
    return text.lower()


# The time a Replace normalizer's regex may take on a text: generous for any pattern that runs in
# linear time (a replacement per character included), reached only by one that backtracks.
REPLACE_SECONDS_FLOOR = 1.0
REPLACE_SECONDS_PER_CHAR = 10e-6


def _short(text: str, limit: int = 80) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def _replace(spec: Mapping[str, Any], where: str) -> Normalizer:
    content = _field(spec, "content", str, where, None)
    pattern = _field(spec, "pattern", dict, where, None)
    if set(pattern) == {"String"} and isinstance(pattern["String"], str):
        old = pattern["String"]
        if not old:
            return lambda text: text
        return lambda text: text.replace(old, content)
    if set(pattern) == {"Regex"} and isinstance(pattern["Regex"], str):
        import regex

        try:
            compiled = regex.compile(onig_to_rust(pattern["Regex"]))
        except regex.error as err:
            raise ValueError(
                f"{where}.pattern: cannot compile {pattern['Regex']!r}: {err}"
            ) from None
        source = pattern["Regex"]

        def replace(text: str) -> str:
            # Python's `regex` backtracks: a pattern like (a|aa)+c takes exponential time. The
            # time limit grows with the text, so only such a pattern ever reaches it.
            limit = REPLACE_SECONDS_FLOOR + REPLACE_SECONDS_PER_CHAR * len(text)
            try:
                return cast(str, compiled.sub(lambda _m: content, text, timeout=limit))
            except TimeoutError:
                raise ValueError(
                    f"{where}.pattern: the Replace regex {_short(source)} took over {limit:.1f} s "
                    f"on {len(text)} characters (it backtracks without bound: rewrite it "
                    "without nested or overlapping repetition)"
                ) from None

        return replace
    raise ValueError(f"{where}.pattern: expected {{'String': ...}} or {{'Regex': ...}}")


def normalizer_of(spec: Any, where: str, *, depth: int = 0) -> Normalizer | None:
    """Compile a ``normalizer`` (``None`` for ``null``).

    Supported: NFC, NFD, NFKC, NFKD, Lowercase, Replace, Prepend, Sequence.

    >>> normalizer_of({"type": "Prepend", "prepend": "▁"}, "normalizer")("hi")
    '▁hi'
    >>> normalizer_of({"type": "BertNormalizer"}, "normalizer")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: normalizer: unsupported normalizer 'BertNormalizer' ...
    """
    if spec is None:
        return None
    if depth == 0:
        _check_json_depth(spec, where)
    kind = _type_of(spec, where)
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return _unicode_normalizer(cast(Literal["NFC", "NFD", "NFKC", "NFKD"], kind))
    if kind == "Lowercase":
        return _lowercase
    if kind == "Replace":
        return _replace(spec, where)
    if kind == "Prepend":
        prefix = _field(spec, "prepend", str, where, None)
        # tokenizers prepends only to non-empty text.
        return lambda text: prefix + text if text else text
    if kind == "Sequence":
        parts = _field(spec, "normalizers", list, where, None)
        inner = _nested(depth, where)
        steps = [
            normalizer_of(p, f"{where}.normalizers[{i}]", depth=inner) for i, p in enumerate(parts)
        ]
        chain = [s for s in steps if s is not None]

        def sequence(text: str) -> str:
            for step in chain:
                text = step(text)
            return text

        return sequence
    raise _unsupported(where, "normalizer", kind)


# ---- pre-tokenizers ------------------------------------------------------------------------


def _behavior(spec: Mapping[str, Any], where: str, default: str) -> str:
    name = _field(spec, "behavior", str, where, default)
    if name not in _BEHAVIORS:
        raise ValueError(f"{where}.behavior: unknown behaviour {name!r}")
    return _BEHAVIORS[name]


def stages_of(spec: Any, where: str, *, depth: int = 0) -> list[Stage]:
    """Compile a ``pre_tokenizer`` into the core's stages (``[]`` for ``null``).

    Supported: ByteLevel (``add_prefix_space``, ``use_regex``: GPT-2's original pattern), Split
    (regex or string; every behaviour; ``invert``), Digits, Punctuation, Sequence.

    >>> stages_of({"type": "Split", "pattern": {"String": "-"}, "behavior": "Contiguous",
    ...            "invert": False}, "pre_tokenizer")  # doctest: +NORMALIZE_WHITESPACE
    [Stage(kind='literal', pattern='-', behavior='contiguous', invert=False,
           add_prefix_space=False)]
    >>> stages_of({"type": "Metaspace"}, "pre_tokenizer")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: pre_tokenizer: unsupported pre-tokenizer 'Metaspace' ...
    """
    if spec is None:
        return []
    if depth == 0:
        _check_json_depth(spec, where)
    kind = _type_of(spec, where)
    if kind == "ByteLevel":
        add_prefix_space = _field(spec, "add_prefix_space", bool, where, True)
        use_regex = _field(spec, "use_regex", bool, where, True)
        pattern = patterns.GPT2_ORIGINAL if use_regex else None
        return [Stage("byte_level", pattern, add_prefix_space=add_prefix_space)]
    if kind == "Split":
        pattern = _field(spec, "pattern", dict, where, None)
        behavior = _behavior(spec, where, "Isolated")
        invert = _field(spec, "invert", bool, where, False)
        if set(pattern) == {"Regex"} and isinstance(pattern["Regex"], str):
            return [Stage("regex", onig_to_rust(pattern["Regex"]), behavior, invert)]
        if set(pattern) == {"String"} and isinstance(pattern["String"], str):
            return [Stage("literal", pattern["String"], behavior, invert)]
        raise ValueError(f"{where}.pattern: expected {{'Regex': ...}} or {{'String': ...}}")
    if kind == "Digits":
        individual = _field(spec, "individual_digits", bool, where, False)
        return [Stage("numeric", None, "isolated" if individual else "contiguous")]
    if kind == "Punctuation":
        return [Stage("punctuation", None, _behavior(spec, where, "Isolated"))]
    if kind == "Sequence":
        parts = _field(spec, "pretokenizers", list, where, None)
        inner = _nested(depth, where)
        return [
            s
            for i, p in enumerate(parts)
            for s in stages_of(p, f"{where}.pretokenizers[{i}]", depth=inner)
        ]
    raise _unsupported(where, "pre-tokenizer", kind)


def check_byte_level(stages: Sequence[Stage], where: str) -> None:
    """A byte-level BPE needs exactly one ``ByteLevel`` pre-tokenizer (it maps bytes to the
    characters the vocabulary is written in)."""
    n = sum(1 for s in stages if s.kind == "byte_level")
    if n != 1:
        raise ValueError(
            f"{where}: {'no' if n == 0 else 'more than one'} ByteLevel pre-tokenizer; bytepair "
            "reads byte-level BPE tokenizers, whose pre-tokenizer ends in exactly one ByteLevel"
        )


# ---- decoders and post-processors ----------------------------------------------------------


def check_decoder(spec: Any, where: str, *, depth: int = 0) -> None:
    """The decoder must be ``ByteLevel`` (alone or as the only step of a ``Sequence``)."""
    if spec is None:
        raise _unsupported(where, "decoder", "null", "a byte-level BPE decodes with ByteLevel")
    if depth == 0:
        _check_json_depth(spec, where)
    kind = _type_of(spec, where)
    if kind == "ByteLevel":
        return
    if kind == "Sequence":
        parts = _field(spec, "decoders", list, where, None)
        if len(parts) == 1:
            check_decoder(parts[0], f"{where}.decoders[0]", depth=_nested(depth, where))
            return
    raise _unsupported(where, "decoder", kind)


def post_processor_of(
    spec: Any, where: str, token_id: Callable[[str], int | None], *, depth: int = 0
) -> tuple[list[int], list[int]]:
    """The ids a ``post_processor`` puts before and after a single sequence.

    Supported: TemplateProcessing (the ``single`` template), RobertaProcessing, BertProcessing,
    ByteLevel (no ids), Sequence.

    >>> post_processor_of({"type": "RobertaProcessing", "cls": ["<s>", 0], "sep": ["</s>", 2]},
    ...                   "post_processor", lambda t: None)
    ([0], [2])
    """
    if spec is None:
        return [], []
    if depth == 0:
        _check_json_depth(spec, where)
    kind = _type_of(spec, where)
    if kind == "ByteLevel":
        return [], []
    if kind in ("RobertaProcessing", "BertProcessing"):
        ids = []
        for key in ("cls", "sep"):
            pair = spec.get(key)
            if not (
                isinstance(pair, list)
                and len(pair) == 2
                and isinstance(pair[0], str)
                and isinstance(pair[1], int)
            ):
                raise ValueError(f"{where}.{key}: expected [token, id], got {pair!r}")
            ids.append(pair[1])
        return [ids[0]], [ids[1]]
    if kind == "TemplateProcessing":
        return _template(spec, where)
    if kind == "Sequence":
        parts = _field(spec, "processors", list, where, None)
        prefix: list[int] = []
        suffix: list[int] = []
        inner = _nested(depth, where)
        for i, p in enumerate(parts):
            before, after = post_processor_of(p, f"{where}.processors[{i}]", token_id, depth=inner)
            prefix, suffix = before + prefix, suffix + after
        return prefix, suffix
    raise _unsupported(where, "post-processor", kind)


def _template(spec: Mapping[str, Any], where: str) -> tuple[list[int], list[int]]:
    single = _field(spec, "single", list, where, None)
    specials = _field(spec, "special_tokens", dict, where, {})
    prefix: list[int] = []
    suffix: list[int] = []
    seen_sequence = False
    for i, piece in enumerate(single):
        at = f"{where}.single[{i}]"
        if isinstance(piece, dict) and set(piece) == {"Sequence"}:
            if piece["Sequence"].get("id") != "A" or seen_sequence:
                raise ValueError(f"{at}: a single-sequence template holds sequence A once")
            seen_sequence = True
        elif isinstance(piece, dict) and set(piece) == {"SpecialToken"}:
            name = piece["SpecialToken"].get("id")
            entry = specials.get(name)
            ids = entry.get("ids") if isinstance(entry, dict) else None
            if not isinstance(ids, list) or not all(isinstance(x, int) for x in ids):
                raise ValueError(f"{at}: special token {name!r} is not in {where}.special_tokens")
            (suffix if seen_sequence else prefix).extend(ids)
        else:
            raise ValueError(f"{at}: expected {{'Sequence': ...}} or {{'SpecialToken': ...}}")
    if not seen_sequence:
        raise ValueError(f"{where}.single: the template never places the sequence")
    return prefix, suffix


# ---- added tokens --------------------------------------------------------------------------


@dataclass(frozen=True)
class AddedToken:
    """An added token of a Hugging Face tokenizer, with the id ``tokenizers`` gives it."""

    content: str
    id: int
    special: bool = True
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool = False

    def to_json(self) -> dict[str, Any]:
        """The ``added_tokens`` entry."""
        return {
            "id": self.id,
            "content": self.content,
            "single_word": self.single_word,
            "lstrip": self.lstrip,
            "rstrip": self.rstrip,
            "normalized": self.normalized,
            "special": self.special,
        }


def added_tokens_of(spec: Any, where: str) -> list[tuple[AddedToken, int]]:
    """Parse ``added_tokens``: each token with the id the file gives it."""
    if spec is None:
        return []
    if not isinstance(spec, list):
        raise ValueError(f"{where}: expected a list, got {type(spec).__name__}")
    out = []
    for i, entry in enumerate(spec):
        at = f"{where}[{i}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{at}: expected an object")
        file_id = _field(entry, "id", int, at, None)
        if not 0 <= file_id < 1 << 28:
            raise ValueError(f"{at}.id: {file_id} is not an id (0 to 2**28 - 1)")
        token = AddedToken(
            content=_field(entry, "content", str, at, None),
            id=file_id,
            special=_field(entry, "special", bool, at, False),
            single_word=_field(entry, "single_word", bool, at, False),
            lstrip=_field(entry, "lstrip", bool, at, False),
            rstrip=_field(entry, "rstrip", bool, at, False),
            normalized=_field(entry, "normalized", bool, at, True),
        )
        out.append((token, file_id))
    return out


def assign_added_ids(
    tokens: Sequence[AddedToken], vocab: Mapping[str, int]
) -> tuple[list[AddedToken], set[str]]:
    """Give added tokens their ids as ``tokenizers`` does when it loads a file.

    Tokens are added one by one: a token already known (as an added token or in the model
    vocabulary) keeps that id; a new one gets the next id after the model vocabulary (or after
    the largest added id). The ids written in the file are not used (``tokenizers`` only warns
    when they differ). Returns the tokens in search order (special ones first, then the others,
    each in file order) with their ids and latest flags, and the set of special contents.

    >>> vocab = {"a": 0, "b": 1}
    >>> tokens, specials = assign_added_ids([AddedToken("<s>", 9), AddedToken("b", 0)], vocab)
    >>> [(t.content, t.id) for t in tokens], sorted(specials)
    ([('<s>', 2), ('b', 1)], ['<s>', 'b'])
    """
    vocab_size = len(vocab)
    added_id: dict[str, int] = {}
    by_id: dict[int, AddedToken] = {}
    # How many tokens of `by_id` equal each token without its id: the question "is this token
    # (flags and all) already added under some id?" in constant time, so loading is linear.
    present: Counter[AddedToken] = Counter()
    highest: int | None = None
    special_set: set[str] = set()
    special_order: list[AddedToken] = []
    other_order: list[AddedToken] = []
    for token in tokens:
        if token.special and token.content and token.content not in special_set:
            special_order.append(token)
            special_set.add(token.content)
        if not token.content or present[replace_id(token, 0)] > 0:
            continue
        new_id = added_id.get(token.content, vocab.get(token.content))
        if new_id is None:
            if highest is None:
                new_id = vocab_size
            else:
                new_id = highest + 1 if highest >= vocab_size or vocab_size == 0 else vocab_size
        added_id[token.content] = new_id
        highest = new_id if highest is None else max(highest, new_id)
        replaced = by_id.get(new_id)
        if replaced is not None:
            present[replace_id(replaced, 0)] -= 1
        by_id[new_id] = token
        present[replace_id(token, 0)] += 1
        if token.content not in special_set:
            other_order.append(token)
    ordered = []
    for token in special_order + other_order:
        token_id = added_id[token.content]
        latest = by_id[token_id]
        ordered.append(
            AddedToken(
                content=latest.content,
                id=token_id,
                special=latest.content in special_set,
                single_word=latest.single_word,
                lstrip=latest.lstrip,
                rstrip=latest.rstrip,
                normalized=token.normalized,
            )
        )
    return ordered, special_set


def replace_id(token: AddedToken, new_id: int) -> AddedToken:
    """``token`` with another id (to compare tokens as ``tokenizers`` does, without ids)."""
    return AddedToken(
        token.content,
        new_id,
        token.special,
        token.single_word,
        token.lstrip,
        token.rstrip,
        token.normalized,
    )
