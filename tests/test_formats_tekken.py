"""Mistral's ``tekken.json`` read as ``mistral_common``'s ``Tekkenizer`` reads it.

The oracle is ``Tekkenizer.from_file(path).encode(text, bos=False, eos=False)`` on the two files
of the ``mistral_common`` wheel (Mistral NeMo's and Pixtral's); synthetic files cover what those
two do not (a listed special-token block, malformed files).
"""

from __future__ import annotations

import base64
import doctest
import functools
import json
import os
from pathlib import Path
from typing import Any

import mistral_common
import pytest
from click.testing import CliRunner
from formats_support import corpus_samples, difference, read_text
from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy
from mistral_common.tokens.tokenizers.tekken import Tekkenizer

import bytepair
from bytepair.cli import cli
from bytepair.formats import detect, tekken
from bytepair.formats.tekken import DEPRECATED_SPECIAL_TOKENS, parse_tekken
from bytepair.formats.values import RankVocabulary
from bytepair.report import token_report

from conftest import shared_path

DATA = Path(os.path.dirname(mistral_common.__file__)) / "data"
TEKKEN_FILES = ("tekken_240718.json", "tekken_240911.json")

TEXTS = (
    "",
    "Hello world!",
    "  leading spaces, trailing spaces   ",
    "line one\nline two\r\n\r\n\tindented\n\n\n",
    "1234567890 3.14159 1,000,000",
    "CamelCaseWords and UPPERCASE and lowercase",
    "naïve café — “quotes” ‘single’ … ½",
    "日本語のテキスト、中文文本，한국어 텍스트",
    "Здравствуй, мир! Γειά σου Κόσμε! مرحبا بالعالم שלום עולם",
    "emoji 👩‍👩‍👧‍👦 🇫🇷 👍🏽 ✨",
    "def f(x):\n    return x ** 2  # comment\n",
    "[INST] What is 2+2? [/INST] 4</s><s>",
    "<unk><pad>[IMG][IMG_BREAK][TOOL_CALLS]",
    "\u200b\u00a0\u3000 zero width and odd spaces",
)


@functools.cache
def tekken_pair(name: str) -> tuple[bytepair.Encoding, Tekkenizer]:
    path = DATA / name
    return bytepair.Encoding.from_file(path), Tekkenizer.from_file(path)


@pytest.fixture(scope="module", params=TEKKEN_FILES)
def pair(request: pytest.FixtureRequest) -> tuple[bytepair.Encoding, Tekkenizer]:
    return tekken_pair(request.param)


def tekken_ids(tk: Tekkenizer, text: str) -> list[int]:
    return tk.encode(text, bos=False, eos=False)


# ---- the real files ---------------------------------------------------------------------------


def test_ids_equal_tekkenizer_on_a_sample(pair: tuple[bytepair.Encoding, Tekkenizer]) -> None:
    enc, tk = pair
    for text in TEXTS:
        assert enc.encode_ordinary(text) == tekken_ids(tk, text), text
        assert enc.encode(text, disallowed_special=()) == tekken_ids(tk, text), text
    for label, text in corpus_samples():
        want = tekken_ids(tk, text)
        got = enc.encode_ordinary(text)
        assert got == want, difference(label, want, got)


@pytest.mark.slow
def test_ids_equal_tekkenizer_on_every_corpus_line(
    pair: tuple[bytepair.Encoding, Tekkenizer],
) -> None:
    enc, tk = pair
    root = shared_path("corpus")
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix != ".tsv")
    assert files
    for path in files:
        lines = read_text(path).splitlines(keepends=True)
        got = enc.encode_ordinary_batch(lines)
        for i, (line, ids) in enumerate(zip(lines, got, strict=True)):
            want = tekken_ids(tk, line)
            if ids != want:
                label = f"{path.relative_to(root)}:{i + 1}"
                raise AssertionError(difference(label, want, ids))


def test_runs_longer_than_one_match_call_allows(pair: tuple[bytepair.Encoding, Tekkenizer]) -> None:
    # Runs far longer than one call of a backtracking regex engine may take.
    enc, tek = pair
    text = "x " + "a" * 300_000 + " " + "\u00dc" * 200_000 + "b" * 300_000
    assert enc.encode_ordinary(text) == tek.encode(text, bos=False, eos=False)


def test_tekken_pattern_has_a_scanner(pair: tuple[bytepair.Encoding, Tekkenizer]) -> None:
    enc, _ = pair
    assert enc.pat_str == bytepair.patterns.TEKKEN
    assert bytepair._core.scanner_for(enc.pat_str) == "tekken"


def test_a_megabyte_of_whitespace_encodes(pair: tuple[bytepair.Encoding, Tekkenizer]) -> None:
    # Tekkenizer itself (tiktoken's regex) fails on a megabyte ("Max stack size exceeded"); ours
    # encodes it losslessly and agrees with Tekkenizer on the longest runs Tekkenizer can take.
    enc, tek = pair
    for unit in (" ", "\t", "\n", " \n"):
        text = unit * (1 << 20) + "x"
        ids = enc.encode_ordinary(text)
        assert enc.decode(ids) == text
        short = unit * 20_000 + "x"
        assert enc.encode_ordinary(short) == tekken_ids(tek, short)


def test_decode_equals_tekkenizer(pair: tuple[bytepair.Encoding, Tekkenizer]) -> None:
    enc, tk = pair
    for text in TEXTS:
        ids = tekken_ids(tk, text)
        assert enc.decode(ids) == tk.decode(ids) == text
        assert enc.decode_bytes(ids) == b"".join(tk.id_to_byte_piece(i) for i in ids)
    # Special ids decode to their text: Tekkenizer's KEEP policy, not its default IGNORE.
    ids = [tk.bos_id, *tekken_ids(tk, "Hi"), tk.eos_id]
    assert enc.decode(ids) == tk.decode(ids, special_token_policy=SpecialTokenPolicy.KEEP)
    assert enc.decode(ids) == "<s>Hi</s>"


def test_special_tokens_at_tekkenizers_ids(pair: tuple[bytepair.Encoding, Tekkenizer]) -> None:
    enc, tk = pair
    assert enc.n_vocab == tk.n_words == 131_072
    assert len(enc.special_tokens_set) == tk.num_special_tokens == 1000
    assert (enc.encode_single_token("<unk>"), tk.unk_id) == (0, 0)
    assert (enc.encode_single_token("<s>"), tk.bos_id) == (1, 1)
    assert (enc.encode_single_token("</s>"), tk.eos_id) == (2, 2)
    assert enc.encode_single_token("[INST]") == tk.get_special_token("[INST]") == 3
    assert enc.encode_single_token("<SPECIAL_999>") == tk.get_special_token("<SPECIAL_999>")
    for i in range(tk.num_special_tokens):
        assert enc.decode_single_token_bytes(i).decode() == tk.id_to_piece(i)
    # The first ordinary token (byte 0) follows the special block; the vocabulary is cut.
    assert enc.encode_single_token(b"\x00") == 1000
    assert enc.max_token_value == 131_071


def test_special_text_raises_unless_allowed(pair: tuple[bytepair.Encoding, Tekkenizer]) -> None:
    enc, tk = pair
    text = "[INST] hi [/INST]"
    with pytest.raises(ValueError, match=r"disallowed special token '\[INST\]'"):
        enc.encode(text)
    # Tekkenizer reads control-token text as plain text: encode_ordinary here.
    assert enc.encode_ordinary(text) == tekken_ids(tk, text)
    assert tk.get_special_token("[INST]") not in tekken_ids(tk, text)
    allowed = enc.encode(text, allowed_special="all")
    assert allowed[0] == 3 and allowed[-1] == 4
    assert enc.decode(allowed) == text


def test_load_detect_folder_and_report(tmp_path: Path) -> None:
    path = DATA / TEKKEN_FILES[0]
    enc, tk = tekken_pair(TEKKEN_FILES[0])
    assert detect(path).kind == "tekken"
    assert enc.name == "tekken_240718"
    loaded = bytepair.formats.load(path)
    assert loaded.encode_ordinary("Hello world") == tekken_ids(tk, "Hello world")
    (tmp_path / "tekken.json").symlink_to(path)
    assert detect(tmp_path).kind == "tekken"
    with pytest.raises(ValueError, match="has its own pattern and special tokens"):
        bytepair.formats.load(path, pat_str="gpt2")
    texts = ["Hello world", "[INST] Summarise this. [/INST]"]
    report = token_report(texts, enc)
    assert report[enc.name].counts == tuple(len(tekken_ids(tk, t)) for t in texts)


def test_save_and_load_keep_the_ids(tmp_path: Path) -> None:
    enc, tk = tekken_pair(TEKKEN_FILES[0])
    as_hf = bytepair.Encoding.from_file(enc.save(tmp_path / "hf", format="hf")[0])
    vocabulary = enc.vocabulary()  # a .tiktoken file holds neither pattern nor special tokens
    assert isinstance(vocabulary, RankVocabulary)
    as_tiktoken = bytepair.Encoding.from_file(
        enc.save(tmp_path / "nemo.tiktoken", format="tiktoken")[0],
        pat_str=vocabulary.pat_str,
        special_tokens=vocabulary.special_tokens,
    )
    for text in TEXTS:
        want = tekken_ids(tk, text)
        assert as_hf.encode_ordinary(text) == as_tiktoken.encode_ordinary(text) == want, text
    assert as_hf.encode_single_token("[INST]") == as_tiktoken.encode_single_token("[INST]") == 3


def test_module_doctests() -> None:
    result = doctest.testmod(tekken)
    assert result.attempted > 0 and result.failed == 0


def test_cli_count_with_a_tekken_file() -> None:
    path = DATA / TEKKEN_FILES[1]
    _, tk = tekken_pair(TEKKEN_FILES[1])
    text = "How many r's are in strawberry? [INST]"
    result = CliRunner().invoke(
        cli, ["count", "-t", str(path), text], env={"BYTEPAIR_OFFLINE": "1"}
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(len(tekken_ids(tk, text)))


# ---- synthetic files --------------------------------------------------------------------------


def entry(rank: int, token: bytes) -> dict[str, Any]:
    return {"rank": rank, "token_bytes": base64.b64encode(token).decode(), "token_str": None}


def tekken_spec(
    extra: tuple[bytes, ...] = (b"ab", b"abc", b" a"), num_special: int = 5, **config: Any
) -> dict[str, Any]:
    vocab = [entry(b, bytes([b])) for b in range(256)]
    vocab += [entry(256 + i, token) for i, token in enumerate(extra)]
    settings = {
        "pattern": r" ?\w+| ?[^\w\s]+|\s+",
        "num_vocab_tokens": len(vocab),
        "default_vocab_size": len(vocab) + num_special,
        "default_num_special_tokens": num_special,
        "version": "v13",
    }
    specials = [special(0, "<unk>"), special(1, "<s>"), special(2, "</s>")]
    return {"config": settings | config, "vocab": vocab, "special_tokens": specials}


def special(rank: int, token_str: str) -> dict[str, Any]:
    return {"rank": rank, "token_str": token_str, "is_control": True}


def write(tmp_path: Path, spec: Any, name: str = "tekken.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(spec))
    return path


def test_listed_special_tokens_fillers_and_the_cut(tmp_path: Path) -> None:
    spec = tekken_spec(num_special=5)
    spec["special_tokens"] = [special(0, "<unk>"), special(1, "<s>"), special(2, "[THINK]")]
    spec["config"]["default_vocab_size"] -= 1  # cuts the last token, b" a"
    path = write(tmp_path, spec)
    enc, tk = bytepair.Encoding.from_file(path), Tekkenizer.from_file(path)
    assert enc.n_vocab == tk.n_words == 5 + 258
    for token in ("<unk>", "<s>", "[THINK]", "<SPECIAL_3>", "<SPECIAL_4>"):
        assert enc.encode_single_token(token) == tk.get_special_token(token)
    for text in ("abc ab a", "x [THINK] ab", "\n\n abcabc"):
        assert enc.encode_ordinary(text) == tekken_ids(tk, text)
    assert enc.encode("[THINK]abc", allowed_special="all") == [2, 5 + 257]


def test_a_file_before_v7_gets_the_default_special_tokens(tmp_path: Path) -> None:
    spec = tekken_spec(num_special=25, version="v3")
    del spec["special_tokens"]
    path = write(tmp_path, spec)
    enc, tk = bytepair.Encoding.from_file(path), Tekkenizer.from_file(path)
    for i, token in enumerate(DEPRECATED_SPECIAL_TOKENS):
        assert enc.encode_single_token(token) == tk.get_special_token(token) == i
    assert enc.encode_single_token("<SPECIAL_24>") == 24
    assert enc.encode_ordinary("abc ab") == tekken_ids(tk, "abc ab")


def test_entries_past_the_cut_are_not_read(tmp_path: Path) -> None:
    spec = tekken_spec()
    spec["vocab"].append({"rank": "junk"})
    assert bytepair.Encoding.from_file(write(tmp_path, spec)).n_vocab == 5 + 259


def malformed(tmp_path: Path, spec: Any, message: str) -> None:
    path = write(tmp_path, spec)
    with pytest.raises(ValueError, match=message) as info:
        bytepair.Encoding.from_file(path)
    text = str(info.value)
    assert text.startswith(f"{path}: ") and "\n" not in text, text


def _without_vocab() -> dict[str, Any]:
    spec = tekken_spec()
    del spec["vocab"]
    return spec


def _bad_base64() -> dict[str, Any]:
    spec = tekken_spec()
    spec["vocab"][257]["token_bytes"] = "YWJj!"
    return spec


def _duplicate_rank() -> dict[str, Any]:
    spec = tekken_spec()
    spec["vocab"][258]["rank"] = 256
    return spec


def _duplicate_bytes() -> dict[str, Any]:
    spec = tekken_spec(extra=(b"ab", b"ab"))
    return spec


def _not_single_bytes() -> dict[str, Any]:
    spec = tekken_spec()
    spec["vocab"][65] = entry(65, b"AB")
    return spec


def _too_short() -> dict[str, Any]:
    spec = tekken_spec()
    spec["config"]["default_vocab_size"] += 1
    return spec


def _no_pattern() -> dict[str, Any]:
    spec = tekken_spec()
    del spec["config"]["pattern"]
    return spec


def _count_not_int() -> dict[str, Any]:
    spec = tekken_spec()
    spec["config"]["default_num_special_tokens"] = "5"
    return spec


def _special_out_of_order() -> dict[str, Any]:
    spec = tekken_spec()
    spec["special_tokens"] = [special(0, "<unk>"), special(2, "<s>")]
    return spec


def _special_twice() -> dict[str, Any]:
    spec = tekken_spec()
    spec["special_tokens"] = [special(0, "<s>"), special(1, "<s>")]
    return spec


def _special_missing_in_v13() -> dict[str, Any]:
    spec = tekken_spec()
    del spec["special_tokens"]
    return spec


def _too_many_specials() -> dict[str, Any]:
    spec = tekken_spec(num_special=1)
    spec["special_tokens"] = [special(0, "<unk>"), special(1, "<s>")]
    return spec


def _huge_vocab_size() -> dict[str, Any]:
    spec = tekken_spec()
    spec["config"]["default_vocab_size"] = 10**12
    return spec


def _negative_specials() -> dict[str, Any]:
    spec = tekken_spec()
    spec["config"]["default_num_special_tokens"] = -1
    return spec


def _vocab_not_list() -> dict[str, Any]:
    spec = tekken_spec()
    spec["vocab"] = {"AA==": 0}
    return spec


def _rank_is_bool() -> dict[str, Any]:
    spec = tekken_spec()
    spec["vocab"][1]["rank"] = True
    return spec


def _empty_token() -> dict[str, Any]:
    spec = tekken_spec(extra=(b"",))
    return spec


def _vocab_entry_not_object() -> dict[str, Any]:
    spec = tekken_spec()
    spec["vocab"][3] = "AQ=="
    return spec


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_without_vocab, r"not a tekken file: no 'vocab' key"),
        (_bad_base64, r"vocab\[257\]\.token_bytes: 'YWJj!' is not base64"),
        (_duplicate_rank, r"vocab\[258\]\.rank: 256, but vocab\[256\] has it too"),
        (_duplicate_bytes, r"vocab\[257\]\.token_bytes: b'ab' is also vocab\[256\]"),
        (_not_single_bytes, r"vocab\[65\]\.token_bytes: b'AB', expected the single byte b'A'"),
        (_too_short, r"vocab: 259 tokens, fewer than .* = 260"),
        (_no_pattern, r"config: no 'pattern' key"),
        (_count_not_int, r"config\.default_num_special_tokens: expected int, got '5'"),
        (_special_out_of_order, r"special_tokens\[1\]\.rank: 2, expected 1"),
        (_special_twice, r"special_tokens\[1\]: '<s>' is also special token 0"),
        (_special_missing_in_v13, r"special_tokens: missing, .*'v13'"),
        (_too_many_specials, r"special_tokens: 2 tokens, more than .*\(1\)"),
        (_vocab_entry_not_object, r"vocab\[3\]: expected an object"),
        (_huge_vocab_size, r"config: default_num_special_tokens 5 and default_vocab_size 10+ "),
        (_negative_specials, r"config: default_num_special_tokens -1 and"),
        (_vocab_not_list, r"vocab: expected a list"),
        (_rank_is_bool, r"vocab\[1\]\.rank: expected int, got True"),
        (_empty_token, r"vocab\[256\]\.token_bytes: empty"),
    ],
)
def test_malformed_files_name_the_place(tmp_path: Path, make: Any, message: str) -> None:
    malformed(tmp_path, make(), message)


def test_a_tekken_file_is_no_longer_a_vocabulary_without_merges(tmp_path: Path) -> None:
    spec = tekken_spec()
    del spec["config"]["pattern"]
    path = write(tmp_path, spec)
    assert detect(path).kind == "tekken"
    with pytest.raises(ValueError, match=r"config: no 'pattern' key"):
        parse_tekken(path)
    assert parse_tekken(write(tmp_path, tekken_spec())).special_tokens["</s>"] == 2
