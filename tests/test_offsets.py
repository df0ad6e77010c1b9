"""``encode_with_offsets``: the ids of ``encode`` and ``tokenizers``' ``Encoding.offsets``.

Every ``tokenizer.json`` of ``../shared/vocab`` is compared with ``tokenizers`` on targeted texts
(characters split across tokens, normalizers that compose, decompose and expand, added tokens
that strip whitespace, trimmed offsets) and, marked slow, on corpus samples and lines. The rank
model and the SentencePiece ``.model`` are checked against the spans their bytes imply.
"""

from __future__ import annotations

import functools
import itertools
from pathlib import Path

import pytest
from formats_support import (
    IGNORED_SETTINGS,
    TOKENIZER_JSONS,
    corpus_lines,
    corpus_samples,
    hf_tokenizer,
)

from bytepair import Encoding

from anchors import ours
from conftest import shared_path

JSONS = {**TOKENIZER_JSONS, "llama2": "llama2/tokenizer.json"}

TARGETED = [
    "Hello  world 😀 ﬁne é<|endoftext|>x",
    "a\u0301\u0302 e\u0301 ﬁ Ⅻ ǅ İstanbul ß",
    "한국어 텍스트, 日本語のテキスト, עברית",
    "a <mask> b <s>hi there</s> x",
    "  a",
    " hello   world  ",
    "\t\ttabs\n\n\nnewlines \r\n",
    "👩‍👩‍👧‍👦 family, 🇫🇷 flag, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "",
    " ",
    "x",
    "<unk> [CLS] [SEP] [MASK] <pad>",
    "caf\u00e9 CAF\u00c9 Ａｂｃ１２３",
    "price: $1,234.56 — “quoted” «guillemets»",
]


@functools.cache
def load(name: str) -> tuple[Encoding, object]:
    path = shared_path("vocab", JSONS[name])
    if name == "llama2":  # a SentencePiece model in tokenizer.json form
        return Encoding.from_file(path), hf_tokenizer(path)
    return Encoding.from_tokenizer_json(path, ignore_settings=IGNORED_SETTINGS), hf_tokenizer(path)


@functools.cache
def dropped_chars(name: str) -> frozenset[str]:
    """The ASCII characters a model without an unknown token leaves out (no token for them)."""
    enc, _ = load(name)
    have = {t for t in enc._core.token_byte_values() if len(t) == 1}
    return frozenset(chr(b) for b in range(128) if bytes([b]) not in have)


def check(name: str, text: str, add_special_tokens: bool = True) -> None:
    enc, tk = load(name)
    want = tk.encode(text, add_special_tokens=add_special_tokens)  # type: ignore[attr-defined]
    ids, spans = enc.encode_with_offsets(
        text, allowed_special="all", add_special_tokens=add_special_tokens
    )
    assert ids == want.ids, f"{name} {text[:40]!r}: ids differ"
    expected = want.offsets
    cut = next((i for i, c in enumerate(text) if c in dropped_chars(name)), None)
    if cut is not None:
        # tokenizers shifts the spans of a word after a byte it leaves out onto that byte;
        # ours stay on the text: compare up to it, and check that each token lies in its span.
        assert_in_spans(enc, text, ids, spans, dropped_chars(name))
        spans = [s for s, w in zip(spans, expected, strict=True) if w[1] <= cut]
        expected = expected[: len(spans)]
    if spans != expected:
        at = next(i for i, (a, b) in enumerate(zip(spans, expected, strict=True)) if a != b)
        raise AssertionError(
            f"{name} {text[max(0, spans[at][0] - 10) : spans[at][1] + 10]!r}: offsets differ at "
            f"token {at} ({want.tokens[at]!r}): expected {want.offsets[at]}, got {spans[at]}"
        )


def assert_in_spans(
    enc: Encoding,
    text: str,
    ids: list[int],
    spans: list[tuple[int, int]],
    dropped: frozenset[str] = frozenset(),
) -> None:
    """Each token's bytes lie in the UTF-8 of its span, less the characters ``dropped``."""
    for token, (start, end) in zip(ids, spans, strict=True):
        data = enc.decode_single_token_bytes(token)
        kept = "".join(c for c in text[start:end] if c not in dropped)
        assert data in kept.encode("utf-8"), (token, data, start, end)


def test_a_byte_the_model_leaves_out_is_in_no_span() -> None:
    # Falcon has no token for byte 0x1D and no unknown token: tokenizers drops it and gives the
    # next token the span of the dropped byte, (0, 1); ours is where the token is.
    enc, tk = load("falcon")
    assert "\x1d" in dropped_chars("falcon")
    ids, spans = enc.encode_with_offsets("\x1d\x00")
    assert ids == tk.encode("\x1d\x00").ids == [enc.encode_single_token(b"\x00")]  # type: ignore[attr-defined]
    assert spans == [(1, 2)]


@pytest.mark.parametrize("name", sorted(JSONS))
@pytest.mark.parametrize("text", TARGETED)
def test_targeted_texts_give_tokenizers_offsets(name: str, text: str) -> None:
    check(name, text)


@pytest.mark.parametrize("name", sorted(JSONS))
def test_without_the_post_processors_tokens(name: str) -> None:
    check(name, "<s>Some text</s> with [CLS] markers", add_special_tokens=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(JSONS))
def test_corpus_samples_give_tokenizers_offsets(name: str) -> None:
    for _, text in corpus_samples(4000):
        check(name, text)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(JSONS))
def test_corpus_lines_give_tokenizers_offsets(name: str) -> None:
    for _, line in corpus_lines()[::4]:
        check(name, line)


def test_a_token_inside_a_character_spans_the_whole_character() -> None:
    # GPT-2 splits the emoji's four bytes over two tokens: each spans the one character.
    enc, _ = load("gpt2-hf")
    ids, spans = enc.encode_with_offsets("a 😀")
    assert [enc.decode_single_token_bytes(i) for i in ids] == [b"a", b" \xf0\x9f\x98", b"\x80"]
    assert spans == [(0, 1), (1, 3), (2, 3)]


def test_rank_model_spans_are_the_characters_of_each_tokens_bytes() -> None:
    enc = ours("cl100k_base")
    text = "naïve café 😀😀 <|endoftext|> 日本語\ud800x"
    ids, spans = enc.encode_with_offsets(text, allowed_special="all")
    assert ids == enc.encode(text, allowed_special="all")
    repaired = text.replace("\ud800", "\ufffd")
    assert_in_spans(enc, repaired, ids, spans)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(a[0] <= b[0] and a[1] <= b[1] for a, b in itertools.pairwise(spans))


def test_rank_model_on_a_corpus_sample() -> None:
    enc = ours("o200k_base")
    for _, text in corpus_samples(2000)[:8]:
        ids, spans = enc.encode_with_offsets(text)
        assert ids == enc.encode(text)
        # Joined, the spans that do not overlap their neighbours cover the text in order.
        assert spans[0][0] == 0 and spans[-1][1] == len(text)
        assert (
            "".join(text[s:e] for i, (s, e) in enumerate(spans) if i == 0 or s >= spans[i - 1][1])
            == text
        )


def test_special_token_arguments_are_those_of_encode() -> None:
    enc = ours("cl100k_base")
    with pytest.raises(ValueError, match="disallowed special token"):
        enc.encode_with_offsets("<|endoftext|>")
    ids, spans = enc.encode_with_offsets("<|endoftext|>", disallowed_special=())
    assert ids == enc.encode("<|endoftext|>", disallowed_special=())
    assert spans[-1][1] == len("<|endoftext|>")


@functools.cache
def sentencepiece_model() -> tuple[Encoding, object]:
    import sentencepiece

    path: Path = shared_path("vocab", "llama2", "tokenizer.model")
    return Encoding.from_file(path), sentencepiece.SentencePieceProcessor(model_file=str(path))


def sentencepiece_spans(sp: object, text: str) -> list[tuple[int, int]]:
    """sentencepiece's own piece offsets (bytes of the text), as character spans."""
    proto = sp.encode(text, return_type="proto")  # type: ignore[attr-defined]
    data = text.encode("utf-8")
    chars = [len(data[:i].decode("utf-8", "ignore")) for i in range(len(data) + 1)]
    return [(chars[p.begin], chars[p.end]) for p in proto.pieces]


@pytest.mark.parametrize(
    "text",
    ["Hello world", "  leading and  double  spaces ", "日本語 😀 é", "a\nb\tc", "x"],
)
def test_sentencepiece_model_gives_sentencepieces_offsets(text: str) -> None:
    enc, sp = sentencepiece_model()
    ids, spans = enc.encode_with_offsets(text, add_special_tokens=False)
    assert ids == sp.encode(text)  # type: ignore[attr-defined]
    assert spans == sentencepiece_spans(sp, text)


@pytest.mark.slow
def test_sentencepiece_model_on_corpus_lines() -> None:
    enc, sp = sentencepiece_model()
    for label, line in corpus_lines()[::4]:
        ids, spans = enc.encode_with_offsets(line, disallowed_special=(), add_special_tokens=False)
        assert ids == sp.encode(line), label  # type: ignore[attr-defined]
        assert spans == sentencepiece_spans(sp, line), label


def test_show_names_the_text_each_token_came_from() -> None:
    from bytepair.report.show import render_tokens

    enc, _ = load("claude-legacy")  # NFKC: "ﬁ" is read as "fi", "Ⅻ" as "XII"
    view = render_tokens(enc, "ﬁne Ⅻ", color=False).splitlines()
    assert view[1] == "[fine][ X][II]"
    assert [line.rsplit("  ", 1)[-1] for line in view[3:]] == ['"ﬁne"', '" Ⅻ"', '"Ⅻ"']
    emoji = render_tokens(load("gpt2-hf")[0], "a 😀", color=False).splitlines()
    assert emoji[-2:] == [
        '  1  30325  " "⟨f0 9f 98⟩  20 f0 9f 98  " 😀"',
        '  2    222  ⟨80⟩           80           "😀"',
    ]
