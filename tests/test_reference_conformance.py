"""The pure-Python reference gives tiktoken's ids, and its loaders give tiktoken's dicts.

Encoders are built offline from ``../shared/vocab`` (see ANCHORS.md). The corpus sample takes a
head and a middle slice of every file of every category (whole files when small): a few hundred
KB per encoding, since the reference is pure Python.

One difference is known and pinned down here rather than hidden: the reference splits text with
the ``regex`` package, tiktoken with Rust's regex crate, and their Unicode tables are not the same
version (``regex`` 2026.x knows Unicode 17; tiktoken 0.14 does not). Characters assigned in the
newer version (4644 letters such as CJK Extension J, 13 digits, 42 marks) are ``\\p{L}`` etc. for
one engine and unassigned for the other, and U+0295 (ʕ) moved from Ll to Lo. Such a character can
move a piece boundary and so change ids. :func:`engine_disagreements` computes the set exactly by
asking both engines about every code point; the corpus sample masks it, and
``test_engine_disagreements_are_unicode_version_changes`` checks that nothing else disagrees.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
import regex
import tiktoken
import tiktoken.load
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair.patterns import PATTERNS
from bytepair.reference import (
    ReferenceEncoding,
    Tokenizer,
    load_gpt2_files,
    load_tiktoken_bpe,
    unreachable_tokens,
)

from conftest import shared_path

CL100K_SPECIALS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
# name -> (tiktoken file or None for the GPT-2 files, pattern, special tokens), as in tiktoken_ext
ENCODINGS: dict[str, tuple[str | None, str, dict[str, int]]] = {
    "gpt2": (None, PATTERNS["gpt2"], {"<|endoftext|>": 50256}),
    "r50k_base": ("r50k_base/r50k_base.tiktoken", PATTERNS["gpt2"], {"<|endoftext|>": 50256}),
    "p50k_base": ("p50k_base/p50k_base.tiktoken", PATTERNS["gpt2"], {"<|endoftext|>": 50256}),
    "cl100k_base": ("cl100k_base/cl100k_base.tiktoken", PATTERNS["cl100k"], CL100K_SPECIALS),
    "o200k_base": (
        "o200k_base/o200k_base.tiktoken",
        PATTERNS["o200k"],
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
}
SLICE = 3000  # characters per slice of a corpus file


def tiktoken_load(path: Path) -> dict[bytes, int]:
    """tiktoken's loader, with its download cache turned off (it would copy the file to /tmp)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", "")
        return tiktoken.load.load_tiktoken_bpe(str(path))


def tiktoken_gpt2_ranks() -> dict[bytes, int]:
    """tiktoken's own reading of encoder.json + vocab.bpe (``data_gym_to_mergeable_bpe_ranks``)."""
    vocab = shared_path("vocab", "gpt2")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", "")
        return tiktoken.load.data_gym_to_mergeable_bpe_ranks(
            str(vocab / "vocab.bpe"), str(vocab / "encoder.json")
        )


@functools.cache
def encoders(name: str) -> tuple[ReferenceEncoding, tiktoken.Encoding]:
    """The reference (through our loaders) and tiktoken (through its loaders) for ``name``."""
    file, pat_str, specials = ENCODINGS[name]
    if file is None:
        vocab = shared_path("vocab", "gpt2")
        ranks, gpt2_specials = load_gpt2_files(vocab / "encoder.json", vocab / "vocab.bpe")
        assert gpt2_specials == specials
        tk_ranks = tiktoken_gpt2_ranks()
    else:
        path = shared_path("vocab", file)
        ranks, tk_ranks = load_tiktoken_bpe(path), tiktoken_load(path)
    ref = ReferenceEncoding(name, pat_str=pat_str, mergeable_ranks=ranks, special_tokens=specials)
    tk = tiktoken.Encoding(name, pat_str=pat_str, mergeable_ranks=tk_ranks, special_tokens=specials)
    return ref, tk


# ---- where the two regex engines disagree -------------------------------------------------

# Every character class the named patterns use. [\r\n], [^...] and literals are derived from these.
CLASSES = [r"\p{L}", r"\p{Lu}", r"\p{Ll}", r"\p{Lt}", r"\p{Lm}", r"\p{Lo}", r"\p{M}", r"\p{N}"]
CLASSES += [r"\s"]
# Assigned before Unicode 14 (Python 3.11's unicodedata) but given a new category since.
RECATEGORISED = {"\u0295"}  # ʕ LATIN LETTER PHARYNGEAL VOICED FRICATIVE: Ll -> Lo in Unicode 17


@functools.cache
def engine_disagreements() -> frozenset[str]:
    """The code points that ``regex`` and tiktoken's Rust regex put in different classes.

    A tiktoken encoder whose pattern is a single class drops every character the class does not
    match, so encoding all code points and decoding gives the class as Rust sees it.
    """
    every = "".join(map(chr, itertools.chain(range(0xD800), range(0xE000, 0x110000))))
    byte_ranks = {bytes([b]): b for b in range(256)}
    result: set[str] = set()
    for cls in CLASSES:
        probe = tiktoken.Encoding(
            "probe", pat_str=cls, mergeable_ranks=byte_ranks, special_tokens={}
        )
        in_rust = set(probe.decode(probe.encode_ordinary(every)))
        in_python = set(regex.findall(cls, every))
        result |= in_rust ^ in_python
    return frozenset(result)


def test_engine_disagreements_are_unicode_version_changes() -> None:
    # Each disagreement is a character Python's (older) Unicode database does not even know, or
    # one whose category changed: a Unicode version gap, not a bug in either pattern engine.
    for char in engine_disagreements():
        assert unicodedata.category(char) == "Cn" or char in RECATEGORISED, f"U+{ord(char):04X}"


def test_unicode_version_gap_changes_ids() -> None:
    # U+32A88 is a CJK ideograph of Extension J (Unicode 17). Where one engine reads it as a
    # letter, "歏\U00032a88誓" is one piece for it and three for the other, and r50k's byte
    # merges then differ at the piece boundary. If the engines ever agree, so do the ids.
    ref, tk = encoders("r50k_base")
    text = "歏\U00032a88誓"
    assert (ref.encode(text) == tk.encode(text)) == ("\U00032a88" not in engine_disagreements())


# ---- loaders ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "file",
    [
        "r50k_base/r50k_base.tiktoken",
        "p50k_base/p50k_base.tiktoken",
        "cl100k_base/cl100k_base.tiktoken",
        "o200k_base/o200k_base.tiktoken",
        "llama3/tokenizer.model",
        "whisper-multilingual/multilingual.tiktoken",  # has an empty token written "="
    ],
)
def test_load_tiktoken_bpe_equals_tiktoken(file: str) -> None:
    path = shared_path("vocab", file)
    assert load_tiktoken_bpe(path) == tiktoken_load(path)


def test_gpt2_files_equal_tiktoken_and_r50k() -> None:
    vocab = shared_path("vocab", "gpt2")
    ranks, specials = load_gpt2_files(vocab / "encoder.json", vocab / "vocab.bpe")
    assert ranks == tiktoken_gpt2_ranks()
    assert ranks == load_tiktoken_bpe(shared_path("vocab", "r50k_base", "r50k_base.tiktoken"))
    assert specials == {"<|endoftext|>": 50256}


# ---- ids on the corpus --------------------------------------------------------------------


def corpus_sample() -> Iterator[tuple[str, str]]:
    """(label, text): a head and a middle slice of every corpus file; small files whole."""
    root = shared_path("corpus")
    for path in sorted(root.glob("*/*")):
        if path.name == "MANIFEST.tsv":
            continue
        text = path.read_text(encoding="utf-8")
        label = f"{path.parent.name}/{path.name}"
        if len(text) <= 2 * SLICE:
            yield label, text
        else:
            middle = len(text) // 2
            yield f"{label}[:{SLICE}]", text[:SLICE]
            yield f"{label}[{middle}:]", text[middle : middle + SLICE]


def test_corpus_sample_covers_every_category() -> None:
    labels = [label for label, _ in corpus_sample()]
    assert {label.split("/")[0] for label in labels} == {"code", "edge", "english", "multilingual"}
    assert len(labels) > 200


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ENCODINGS))
def test_ids_equal_tiktoken_on_corpus(name: str) -> None:
    ref, tk = encoders(name)
    mask = {ord(char): "?" for char in engine_disagreements()}
    mismatches = []
    for label, raw in corpus_sample():
        text = raw.translate(mask)
        expected = tk.encode(text, allowed_special="all")
        got = ref.encode(text, allowed_special="all")
        if got != expected:
            mismatches.append(label)
        assert ref.decode_bytes(got) == text.encode("utf-8"), label
    assert mismatches == []


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_special_token_lookalikes_encode_ordinary(name: str) -> None:
    ref, tk = encoders(name)
    text = shared_path("corpus", "edge", "special_token_lookalikes.txt").read_text("utf-8")
    text = text[:20000]
    assert ref.encode_ordinary(text) == tk.encode_ordinary(text)
    assert ref.encode(text, disallowed_special=()) == tk.encode(text, disallowed_special=())


@pytest.mark.parametrize("name", list(ENCODINGS))
def test_vocabulary_facts(name: str) -> None:
    ref, tk = encoders(name)
    assert ref.n_vocab == tk.n_vocab
    assert ref.max_token_value == tk.max_token_value
    assert ref.eot_token == tk.eot_token
    assert ref.special_tokens_set == tk.special_tokens_set
    assert isinstance(ref, Tokenizer) and isinstance(tk, Tokenizer)
    for token in [0, 255, 256, 1000, ref.eot_token]:
        assert ref.decode_single_token_bytes(token) == tk.decode_single_token_bytes(token)


def test_golden_ids() -> None:
    assert encoders("gpt2")[0].encode("hello world") == [31373, 995]
    assert encoders("cl100k_base")[0].encode("hello world") == [15339, 1917]
    assert encoders("o200k_base")[0].encode("hello world") == [24912, 2375]


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in ENCODINGS if n != "gpt2"])
def test_every_token_merges_back_into_itself(name: str) -> None:
    # The whole-piece lookup in encode_piece is then a shortcut that never changes ids.
    assert unreachable_tokens(encoders(name)[0].mergeable_ranks) == []


# ---- arbitrary text -----------------------------------------------------------------------

texts_both_engines_read_alike = st.text(
    st.characters(codec="utf-8", exclude_characters=engine_disagreements())
)


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
@settings(max_examples=150, deadline=None)
@given(text=texts_both_engines_read_alike)
def test_ids_equal_tiktoken_on_arbitrary_text(name: str, text: str) -> None:
    ref, tk = encoders(name)
    assert ref.encode_ordinary(text) == tk.encode_ordinary(text)


@pytest.mark.parametrize(
    "text",
    ["a\ud800b", "\ud83d\ude00 pair", "lone low \udfff", "\udfff\ud800", "<|endoftext|>\ud800"],
)
def test_surrogates_are_repaired_as_tiktoken_does(text: str) -> None:
    ref, tk = encoders("cl100k_base")
    assert ref.encode_ordinary(text) == tk.encode_ordinary(text)
    assert ref.encode(text, allowed_special="all") == tk.encode(text, allowed_special="all")


# ---- special tokens -----------------------------------------------------------------------

SPECIAL_TEXTS = [
    "",
    "no special tokens here",
    "hello <|endoftext|> world",
    "<|endoftext|><|endoftext|>",
    "<|fim_prefix|>def f():<|fim_suffix|>\n    return 1<|fim_middle|>",
    "<|endofprompt|> then <|endoftext|>",
    "<|endoftext",
    "<|endoftext|>   \n",
    "hello world",
]
SPECIAL_CHOICES: list[tuple[object, object]] = [
    (set(), "all"),
    ("all", "all"),
    ({"<|endoftext|>"}, "all"),
    (set(), ()),
    ("all", ()),
    ({"<|endoftext|>"}, ()),
    (set(), {"<|endoftext|>"}),
    ({"<|fim_prefix|>", "<|fim_suffix|>"}, {"<|endofprompt|>"}),
    ({"hello"}, ()),  # allowing text that is not a special token does nothing
    (set(), {"hello"}),  # but disallowing any text makes it an error, as in tiktoken
    (frozenset({"<|endoftext|>"}), ["<|endofprompt|>"]),
]


def outcome(enc: object, text: str, allowed: object, disallowed: object) -> object:
    """The ids, or the ValueError's message."""
    try:
        return enc.encode(text, allowed_special=allowed, disallowed_special=disallowed)  # type: ignore[attr-defined]
    except ValueError as err:
        return f"ValueError: {err}"


@pytest.mark.parametrize(("allowed", "disallowed"), SPECIAL_CHOICES)
def test_special_tokens_as_tiktoken(allowed: object, disallowed: object) -> None:
    ref, tk = encoders("cl100k_base")
    for text in SPECIAL_TEXTS:
        assert outcome(ref, text, allowed, disallowed) == outcome(tk, text, allowed, disallowed)


def test_disallowed_special_message_names_the_token_and_the_fix() -> None:
    ref, _ = encoders("cl100k_base")
    with pytest.raises(ValueError, match=re.escape("special token '<|endofprompt|>'")) as info:
        ref.encode("a <|endofprompt|> b")
    assert "allowed_special={'<|endofprompt|>', ...}" in str(info.value)
    assert "disallowed_special=()" in str(info.value)
