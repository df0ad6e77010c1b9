"""The Rust pre-tokenizer scanners against the `regex` module: the same pieces, always.

``bytepair._core.split(pattern, text)`` uses the hand-written scanner of a known pattern; here it
must give exactly ``regex.findall(pattern, text)`` on every corpus file and on generated text.

One allowance, and only one: the Unicode version. The Rust core classifies characters with
``regex-syntax``'s tables (Unicode 16.0), as tiktoken does (it matches with the same crates);
the ``regex`` module may be newer (2026.5.9 has Unicode 17.0). They then disagree on

- the characters new in the newer version (4699 of them for 17.0, e.g. Sidetic U+10940..U+10959,
  Tolong Siki U+11DB0..U+11DDB, CJK extension J U+323B0..U+33479): letters or digits there,
  unassigned (so "punctuation", ``[^\\s\\p{L}\\p{N}]``) for us and tiktoken;
- U+0295 LATIN LETTER PHARYNGEAL VOICED FRICATIVE 'ʕ', which Unicode 17.0 moved from Ll to Lo:
  it joined o200k's "upper-ish" class, so e.g. o200k cuts "ʕAb" as ``ʕAb`` with ``regex`` but
  as ``ʕ``, ``Ab`` with tiktoken 0.14 and with us.

`unicode_disagreements` computes that set from the two engines themselves, and a test pins it
to exactly those two kinds; before comparing pieces, those characters (only) are replaced by
U+FFFD, which both engines classify alike. The Rust tests (scanner against fancy-regex, the
same tables) need no such allowance.
"""

from __future__ import annotations

import functools

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair import _core, patterns

from conftest import SHARED, shared_path

PATTERNS = {
    "gpt2": patterns.GPT2,
    "gpt2_original": patterns.GPT2_ORIGINAL,
    "cl100k": patterns.CL100K,
    "o200k": patterns.O200K,
    "llama3": patterns.LLAMA3,
    "tekken": patterns.TEKKEN,
    "qwen2": patterns.QWEN2,
}

# The class expressions the patterns are built from (the others are their complements).
CLASSES = [
    r"\p{L}",
    r"\p{N}",
    r"\s",
    r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]",
    r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]",
]

_CORPUS_DIR = SHARED / "corpus"
CORPUS = sorted(p for p in _CORPUS_DIR.glob("*/*") if p.is_file()) if _CORPUS_DIR.is_dir() else []


def _all_characters() -> str:
    return "".join(chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF)


@functools.cache
def unicode_disagreements() -> frozenset[str]:
    """The characters that `regex` and the Rust core's tables put in different classes."""
    text = _all_characters()
    differ: set[str] = set()
    for cls in CLASSES:
        ours = set(_core.split(cls, text, use_regex=True))
        differ |= ours ^ set(regex.findall(cls, text))
    return frozenset(differ)


@functools.cache
def _replace_table() -> dict[int, str]:
    return dict.fromkeys(map(ord, unicode_disagreements()), "\ufffd")


def comparable(text: str) -> str:
    """`text` with the characters of `unicode_disagreements` replaced by U+FFFD."""
    return text.translate(_replace_table())


def first_difference(text: str, ours: list[str], theirs: list[str]) -> str | None:
    offset = 0
    for k, (a, b) in enumerate(zip(ours, theirs, strict=False)):
        if a != b:
            around = slice(max(k - 2, 0), k + 3)
            return (
                f"piece {k} at char {offset}: scanner {a!r}, regex {b!r}; "
                f"scanner {ours[around]!r}, regex {theirs[around]!r}; "
                f"text there {text[offset : offset + 40]!r}"
            )
        offset += len(a)
    if len(ours) != len(theirs):
        return f"{len(ours)} pieces from the scanner, {len(theirs)} from regex"
    return None


def assert_same_pieces(name: str, text: str) -> None:
    text = comparable(text)
    pattern = PATTERNS[name]
    ours = _core.split(pattern, text)
    theirs = regex.findall(pattern, text)
    diff = first_difference(text, ours, theirs)
    assert diff is None, f"{name}: {diff}"


# ---- which engine runs -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "scanner"),
    [
        (patterns.GPT2, "gpt2"),
        (patterns.GPT2_ORIGINAL, "gpt2"),
        (patterns.CL100K, "cl100k"),
        (patterns.O200K, "o200k"),
        (patterns.LLAMA3, "llama3"),
        (patterns.QWEN2, "qwen2"),
        (patterns.TEKKEN, "tekken"),
        (r"\w+|\s+", None),
        # A known pattern with one character changed is just a pattern.
        (patterns.CL100K.replace("{1,3}", "{1,4}"), None),
    ],
)
def test_scanner_for(pattern: str, scanner: str | None) -> None:
    assert _core.scanner_for(pattern) == scanner


# ---- the Unicode allowance ---------------------------------------------------------------


def test_unicode_disagreements_are_only_newer_unicode() -> None:
    """Every disagreement is a character our Unicode version lacks, or U+0295 (Ll -> Lo)."""
    text = _all_characters()
    unassigned_for_us = set(_core.split(r"\p{Cn}", text, use_regex=True))
    assert unicode_disagreements() - unassigned_for_us <= {"\u0295"}
    # The case folds of the contraction letters agree ('s' also matches 'ſ' U+017F in both).
    for letter in "sdmtlvre":
        pattern = f"(?i:{letter})"
        ours = _core.split(pattern, text, use_regex=True)
        assert ours == regex.findall(pattern, text), letter
    assert _core.split("(?i:s)", "sSſ", use_regex=True) == ["s", "S", "ſ"]


def test_u0295_is_cut_as_tiktoken_does() -> None:
    # regex (Unicode 17) gives ["ʕAb"]; tiktoken 0.14 (Unicode 16 tables) and we give:
    assert _core.split(patterns.O200K, "ʕAb") == ["ʕ", "Ab"]


# ---- the shared corpus -------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "path", CORPUS or [None], ids=[f"{p.parent.name}/{p.name}" for p in CORPUS] or None
)
def test_corpus_file(path: object) -> None:
    if path is None:
        shared_path("corpus")
        return
    text = path.read_text(encoding="utf-8", errors="replace")  # type: ignore[attr-defined]
    for name in PATTERNS:
        assert_same_pieces(name, text)


def test_corpus_is_there() -> None:
    shared_path("corpus")
    assert len(CORPUS) > 50


# ---- generated text ----------------------------------------------------------------------

# Where the alternatives meet: each kind of whitespace, letters of every case class (Lt 'ǅ',
# Lm 'ʰ', Lo '中'), combining marks, numbers (Nd, Arabic-Indic, No '½', Nl 'Ⅻ'), contractions in
# every case with the case folds 'ſ' (of s) and Kelvin 'K' (of k), punctuation, '/', emoji.
ATOMS = [
    " ", " ", "\t", "\n", "\r", "\r\n", "\u00a0", "\u3000", "\u0085", "\u2028", "\x0b", "\x1c",
    "\u200b", "\u200d", "a", "z", "A", "Z", "é", "É", "ß", "ǅ", "ʰ", "ー", "中", "ひ", "한",
    "\u0301", "\u094d", "7", "0", "٣", "½", "Ⅻ", "'", "s", "S", "t", "T", "ſ", "\u212a", "k",
    "l", "L", "e", "E", "r", "v", "m", "d", "D", "'s", "'S", "'t", "'ll", "'LL", "'lL", "'ve",
    "'VE", "'re", "'m", "'D", "'ſ", ".", ",", "!", "(", "/", "//", "-", '"', "😀", "👍🏽",
    "\U0001f1fa\U0001f1f8", "\x00",
]  # fmt: skip

tricky_text = st.lists(st.sampled_from(ATOMS), max_size=40).map("".join)
any_text = st.text(st.characters(codec="utf-8"), max_size=60)
categories_text = st.text(
    st.characters(
        categories=["Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Zs"],
        include_characters=" \t\n\r'/",
    ),
    max_size=40,
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(tricky_text, any_text, categories_text), st.sampled_from(sorted(PATTERNS)))
def test_generated_text(text: str, name: str) -> None:
    assert_same_pieces(name, text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(ATOMS), st.integers(1, 6)), max_size=12))
def test_generated_runs(runs: list[tuple[str, int]]) -> None:
    """Runs of one atom (long whitespace, letter and mark runs) where backtracking matters."""
    text = "".join(atom * n for atom, n in runs)
    for name in PATTERNS:
        assert_same_pieces(name, text)


@pytest.mark.parametrize("name", sorted(PATTERNS))
@pytest.mark.parametrize(
    "text",
    [
        "",
        "Hello world's  end",
        "I'LL DON'T don'ſ we'RE",
        "  \n  \n b \n ",
        "a \n  ",
        "中A\u0301A A中 ʰA",
        "((word 'quoted' \tx",
        "12345 ½٣7 Ⅻ",
        "x!!\r\n\r\n/y",
        " " * 1000 + "x",
        "\n" * 3 + " " * 5,
    ],
)
def test_examples(text: str, name: str) -> None:
    assert_same_pieces(name, text)
