"""The reference loaders: real files with their quirks, and malformed files that must fail clearly.

Equality with tiktoken's own loaders is in ``test_reference_conformance.py``.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from bytepair.bytes_unicode import encode_bytes
from bytepair.reference import load_gpt2_files, load_tiktoken_bpe

from conftest import shared_path

# ---- real files ---------------------------------------------------------------------------


@pytest.mark.slow
def test_llama32_gpt2_format_without_header_equals_llama3_tiktoken_file() -> None:
    # ollama's vocab.bpe has no "#version" line (line 1 is a merge), 233 merges that start with
    # "#", and several merges per token, some with a half that ranks after the result.
    vocab = shared_path("vocab", "llama3.2-gpt2fmt")
    first_line = (vocab / "vocab.bpe").read_text(encoding="utf-8").split("\n", 1)[0]
    assert not first_line.startswith("#version")
    ranks, specials = load_gpt2_files(vocab / "encoder.json", vocab / "vocab.bpe")
    assert ranks == load_tiktoken_bpe(shared_path("vocab", "llama3", "tokenizer.model"))
    assert specials == {}


@pytest.mark.slow
def test_qwen2_crlf_merges_and_hash_lines(tmp_path: Path) -> None:
    vocab = shared_path("vocab", "qwen2")
    raw = (vocab / "merges.txt").read_bytes()
    assert raw.count(b"\r\n") == raw.count(b"\n")
    hash_merges = [line for line in raw.split(b"\r\n")[1:] if line.startswith(b"#")]
    assert len(hash_merges) == 96
    ranks, specials = load_gpt2_files(vocab / "vocab.json", vocab / "merges.txt")
    assert len(ranks) == 151643 and specials == {}
    # The same as the LF-normalised file: no "\r" leaked into a token.
    lf = tmp_path / "merges.txt"
    lf.write_bytes(raw.replace(b"\r\n", b"\n"))
    assert load_gpt2_files(vocab / "vocab.json", lf) == (ranks, specials)
    # Every "#..." merge line made its token: none was skipped as a comment.
    json_vocab = json.loads((vocab / "vocab.json").read_text(encoding="utf-8"))
    for line in hash_merges:
        left, right = line.decode("utf-8").split(" ")
        assert json_vocab[left + right] in ranks.values()


def test_gpt2_hf_files_equal_gpt2_files() -> None:
    hf = shared_path("vocab", "gpt2-hf")
    gpt2 = shared_path("vocab", "gpt2")
    assert load_gpt2_files(hf / "vocab.json", hf / "merges.txt") == load_gpt2_files(
        gpt2 / "encoder.json", gpt2 / "vocab.bpe"
    )


def test_vocabulary_without_all_bytes_is_rejected() -> None:
    # SmolLM's byte-level vocabulary lacks 21 single bytes: a rank-based encoder could not encode
    # text containing them, so the loader says so instead of failing at encode time.
    vocab = shared_path("vocab", "smollm")
    with pytest.raises(ValueError, match=r"vocab\.json: lacks 21 of the 256 single-byte tokens"):
        load_gpt2_files(vocab / "vocab.json", vocab / "merges.txt")


# ---- tiktoken format: malformed files ------------------------------------------------------


def b64(token: bytes) -> str:
    return base64.b64encode(token).decode()


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def test_tiktoken_crlf_blank_lines_and_empty_token(tmp_path: Path) -> None:
    path = write(tmp_path, "ok.tiktoken", f"{b64(b'a')} 0\r\n\r\n{b64(b'bc')} 7\r\n=  8\n\n\n")
    assert load_tiktoken_bpe(path) == {b"a": 0, b"bc": 7, b"": 8}


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        ("YQ== 0\nnot*base64 1\n", 2, "is not valid base64"),
        ("YQ== 0\nYg==\n", 2, "expected '<base64 token> <rank>'"),
        ("YQ== 0\nYg== 1 2\n", 2, "expected '<base64 token> <rank>'"),
        ("YQ== zero\n", 1, "rank b'zero' is not a non-negative integer"),
        ("YQ== -1\n", 1, "is not a non-negative integer"),
        ("YQ== 1.5\n", 1, "is not a non-negative integer"),
        ("YQ== 0\nYg== 1\nYQ== 2\n", 3, "token b'a' already on line 1"),
        ("YQ== 0\nYg== 0\n", 2, "rank 0 already on line 1"),
        ("YQ 0\n", 1, "is not valid base64"),  # missing padding
    ],
)
def test_tiktoken_malformed_lines_name_file_and_line(
    tmp_path: Path, content: str, line: int, message: str
) -> None:
    path = write(tmp_path, "bad.tiktoken", content)
    with pytest.raises(ValueError, match=rf"bad\.tiktoken:{line}: .*{_re(message)}"):
        load_tiktoken_bpe(path)


@pytest.mark.parametrize("content", ["", "\n\n", "  \r\n"])
def test_tiktoken_empty_file(tmp_path: Path, content: str) -> None:
    path = write(tmp_path, "empty.tiktoken", content)
    with pytest.raises(ValueError, match=r"empty\.tiktoken: no tokens"):
        load_tiktoken_bpe(path)


def _re(text: str) -> str:
    return re.escape(text)


# ---- GPT-2 format: tiny vocabularies -------------------------------------------------------

BYTES = {encode_bytes(bytes([b])): b for b in range(256)}


def gpt2_files(tmp_path: Path, encoder: dict[str, int] | str, merges: str) -> tuple[Path, Path]:
    """encoder.json (a dict, or raw text) and vocab.bpe in tmp_path."""
    enc_path = tmp_path / "encoder.json"
    enc_path.write_text(encoder if isinstance(encoder, str) else json.dumps(encoder), "utf-8")
    merges_path = tmp_path / "vocab.bpe"
    merges_path.write_bytes(merges.encode("utf-8"))
    return enc_path, merges_path


TINY = BYTES | {"Ġt": 256, "he": 257, "Ġthe": 258, "##": 259, "<|endoftext|>": 260}
TINY_MERGES = "#version: 0.2\nĠ t\nh e\nĠt he\n# #\n"


def test_gpt2_tiny(tmp_path: Path) -> None:
    ranks, specials = load_gpt2_files(*gpt2_files(tmp_path, TINY, TINY_MERGES))
    assert ranks == {bytes([b]): BYTES[encode_bytes(bytes([b]))] for b in range(256)} | {
        b" t": 256,
        b"he": 257,
        b" the": 258,
        b"##": 259,
    }
    assert specials == {"<|endoftext|>": 260}


@pytest.mark.parametrize(
    "merges",
    [
        "Ġ t\nh e\nĠt he\n# #\n",  # no header
        "#version: 0.2\r\nĠ t\r\nh e\r\nĠt he\r\n# #\r\n\r\n\r\n",  # CRLF, trailing blank lines
        "#version: 0.2\nĠ t\n\nh e\nĠt he\n# #",  # blank line inside, no final newline
    ],
)
def test_gpt2_layout_variants(tmp_path: Path, merges: str) -> None:
    ranks, _ = load_gpt2_files(*gpt2_files(tmp_path, TINY, merges))
    assert b"##" in ranks and b" the" in ranks


@pytest.mark.parametrize(
    ("merges", "line", "message"),
    [
        ("#version: 0.2\nĠ t\nĠt hx\n", 3, "needs token b'hx', which is not in encoder.json"),
        ("#version: 0.2\nĠ t\nĠ q\n", 3, "needs token b' q', which is not in encoder.json"),
        ("#version: 0.2\nĠ t\nh  e\n", 3, "expected two tokens separated by one space"),
        ("#version: 0.2\nĠ t\nhe\n", 3, "expected two tokens separated by one space"),
        ("#version: 0.2\nĠ t\nh e x\n", 3, "expected two tokens separated by one space"),
        ("#version: 0.2\nĠ t\nh ń\n", 3, "character 'ń' (U+0144) at index 0 is not in the GPT-2"),
        ("#version: 0.2\nh e\nĠ t\n", 3, "makes id 256 after a merge that made id 257"),
        # Only line 1 can be the header; later it is a merge of the tokens "#version:" and "0.2".
        ("#version: 0.2\n#version: 0.2\n", 2, "merge '#version: 0.2' needs token b'#version:'"),
    ],
)
def test_gpt2_bad_merges_name_file_and_line(
    tmp_path: Path, merges: str, line: int, message: str
) -> None:
    with pytest.raises(ValueError, match=rf"vocab\.bpe:{line}: .*{_re(message)}"):
        load_gpt2_files(*gpt2_files(tmp_path, TINY, merges))


def test_gpt2_token_that_no_merge_builds_from_lower_ranks(tmp_path: Path) -> None:
    # " the" (256) from " t" (257): the token would have to exist before its own half.
    encoder = BYTES | {"Ġthe": 256, "Ġt": 257, "he": 258}
    merges = "Ġt he\nĠ t\nh e\n"
    with pytest.raises(ValueError, match=r"vocab\.bpe:1: .*no merge makes it from two tokens"):
        load_gpt2_files(*gpt2_files(tmp_path, encoder, merges))


@pytest.mark.parametrize(
    ("encoder", "message"),
    [
        ('{"a": 0,\n "b": }', r"encoder\.json:2: not valid JSON"),
        ("[1, 2]", r"encoder\.json: expected a non-empty JSON object"),
        ("{}", r"encoder\.json: expected a non-empty JSON object"),
        (json.dumps(TINY | {"x": "7"}), r"encoder\.json: id of 'x' is '7', not an integer"),
        (json.dumps(TINY | {"x": True}), r"encoder\.json: id of 'x' is True"),
        (json.dumps(TINY | {"x": 5}), r"encoder\.json: id 5 is given to 'ą' and 'x'"),
        (json.dumps({k: v for k, v in TINY.items() if k != "Ġ"}), r"lacks 1 of the 256"),
    ],
)
def test_gpt2_bad_encoder_json(tmp_path: Path, encoder: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_gpt2_files(*gpt2_files(tmp_path, encoder, TINY_MERGES))


@pytest.mark.parametrize("merges", ["", "#version: 0.2\n", "\n\n"])
def test_gpt2_empty_merges(tmp_path: Path, merges: str) -> None:
    with pytest.raises(ValueError, match=r"vocab\.bpe: no merges"):
        load_gpt2_files(*gpt2_files(tmp_path, TINY, merges))
