"""The ``bytepair`` command, run in-process with click's CliRunner (one test runs the real
entry point in a subprocess). Vocabularies come from the shared folder via ``--vocab-dir``."""

from __future__ import annotations

import csv
import io
import json
import shlex
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

import bytepair
from bytepair.cli import cli

from anchors import ours as enc
from conftest import shared_path

STRAWBERRY = "How many r's are in strawberry?"


@pytest.fixture(scope="module")
def vocab() -> str:
    return str(shared_path("vocab"))


def run(*args: str, input: str | bytes | None = None, env: dict[str, str] | None = None) -> Result:
    # Environment variables that would change where vocabularies come from are cleared.
    base = {"BYTEPAIR_VOCAB_DIR": "", "BYTEPAIR_OFFLINE": "1"}
    return CliRunner().invoke(cli, list(args), input=input, env={**base, **(env or {})})


def ok(*args: str, input: str | bytes | None = None) -> Result:
    result = run(*args, input=input)
    assert result.exit_code == 0, result.output
    return result


def assert_one_line_error(result: Result, *needles: str) -> None:
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    for needle in needles:
        assert needle in lines[0], lines[0]


# ---- count ------------------------------------------------------------------------------------


def test_count_one_text_prints_the_number(vocab: str) -> None:
    for name in ("cl100k_base", "o200k_base"):
        result = ok("count", "--vocab-dir", vocab, "-e", name, STRAWBERRY)
        assert result.stdout == f"{enc(name).count(STRAWBERRY)}\n"


def test_count_model_name_uses_its_encoding(vocab: str) -> None:
    result = ok("count", "--vocab-dir", vocab, "-m", "gpt-4", "hello world, again")
    assert int(result.stdout) == enc("cl100k_base").count("hello world, again")


def test_count_texts_files_and_stdin_with_total(vocab: str, tmp_path: Path) -> None:
    corpus = shared_path("corpus", "english")
    big = sorted(corpus.iterdir())[0]
    small = tmp_path / "small.txt"
    small.write_text("Ünïcödé 🍓 text\r\nwith CRLF\n", encoding="utf-8")
    result = ok(
        "count",
        "--vocab-dir",
        vocab,
        "-e",
        "o200k_base",
        "first text",
        "-f",
        str(small),
        "-f",
        str(big),
        "-f",
        "-",
        input="from stdin",
    )
    o200k = enc("o200k_base")
    expected = [
        o200k.count("first text"),
        o200k.count(small.read_bytes().decode("utf-8")),
        o200k.count(big.read_bytes().decode("utf-8")),
        o200k.count("from stdin"),
    ]
    lines = result.stdout.splitlines()
    assert [int(line.split()[0]) for line in lines[:-1]] == expected
    assert lines[1].endswith(str(small))
    assert lines[-1].split()[0] == str(sum(expected))
    assert "total" in lines[-1]


def test_count_json(vocab: str, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("some file text", encoding="utf-8")
    result = ok(
        "count", "--vocab-dir", vocab, "-e", "cl100k_base", "abc", "-f", str(f), "--format", "json"
    )
    data = json.loads(result.stdout)
    cl100k = enc("cl100k_base")
    assert data["encoding"] == "cl100k_base"
    assert [i["tokens"] for i in data["inputs"]] == [
        cl100k.count("abc"),
        cl100k.count("some file text"),
    ]
    assert data["inputs"][1]["source"] == str(f)
    assert data["total"] == sum(i["tokens"] for i in data["inputs"])


def test_count_reads_stdin_without_arguments(vocab: str) -> None:
    text = "piped text\nover two lines\n"
    result = ok("count", "--vocab-dir", vocab, input=text)
    assert int(result.stdout) == enc("o200k_base").count(text)  # the default encoding


def test_special_tokens_are_text_unless_allowed(vocab: str) -> None:
    text = "a<|endoftext|>b"
    plain = ok("encode", "--vocab-dir", vocab, "-e", "cl100k_base", text)
    assert [int(i) for i in plain.stdout.split()] == enc("cl100k_base").encode(
        text, disallowed_special=()
    )
    special = ok("encode", "--vocab-dir", vocab, "-e", "cl100k_base", "--allow-special", text)
    assert 100257 in [int(i) for i in special.stdout.split()]


def test_count_warns_when_a_text_is_a_file_name(vocab: str, tmp_path: Path) -> None:
    f = tmp_path / "notes.txt"
    f.write_text("many words in this file " * 10, encoding="utf-8")
    result = ok("count", "--vocab-dir", vocab, str(f))
    assert int(result.stdout) == enc("o200k_base").count(str(f))
    assert "-f" in result.stderr


# ---- encode and decode -------------------------------------------------------------------------


def test_encode_text_and_json(vocab: str) -> None:
    cl100k = enc("cl100k_base")
    result = ok("encode", "--vocab-dir", vocab, "-e", "cl100k_base", "hello world", "¿Qué tal? 🍓")
    lines = result.stdout.splitlines()
    assert [[int(i) for i in line.split()] for line in lines] == [
        cl100k.encode("hello world"),
        cl100k.encode("¿Qué tal? 🍓"),
    ]
    result = ok("encode", "--vocab-dir", vocab, "-e", "gpt2", "hello world", "--format", "json")
    assert json.loads(result.stdout) == [31373, 995]  # GPT-2's golden ids


def test_encode_npy_and_decode_npy(vocab: str, tmp_path: Path) -> None:
    text = "numpy output: 日本語 and emoji 🍓"
    out = tmp_path / "ids.npy"
    ok("encode", "--vocab-dir", vocab, "-e", "o200k_base", text, "-o", str(out))
    ids = np.load(out)
    assert ids.dtype == np.uint32
    assert ids.tolist() == enc("o200k_base").encode(text)
    result = ok("decode", "--vocab-dir", vocab, "-e", "o200k_base", "-f", str(out))
    assert result.stdout_bytes == text.encode("utf-8")


def test_encode_decode_round_trip_through_a_pipe(vocab: str) -> None:
    text = "line one\nline two\twith tab 🍓\n"
    ids = ok("encode", "--vocab-dir", vocab, "-e", "cl100k_base", input=text).stdout
    back = ok("decode", "--vocab-dir", vocab, "-e", "cl100k_base", input=ids)
    assert back.stdout_bytes == text.encode("utf-8")
    as_json = ok(
        "encode", "--vocab-dir", vocab, "-e", "cl100k_base", "--format", "json", input=text
    ).stdout
    back = ok("decode", "--vocab-dir", vocab, "-e", "cl100k_base", input=as_json)
    assert back.stdout_bytes == text.encode("utf-8")


@pytest.mark.parametrize("form", [["24912", "2375"], ["24912,2375"], ["[24912, 2375]"]])
def test_decode_arguments(vocab: str, form: list[str]) -> None:
    assert ok("decode", "--vocab-dir", vocab, *form).stdout == "hello world"


def test_decode_partial_character(vocab: str) -> None:
    ids = enc("o200k_base").encode("🍓")[:1]
    replaced = ok("decode", "--vocab-dir", vocab, *map(str, ids))
    assert "\ufffd" in replaced.stdout
    assert_one_line_error(
        run("decode", "--vocab-dir", vocab, "--errors", "strict", *map(str, ids)), "UTF-8"
    )


# ---- show -------------------------------------------------------------------------------------


def test_show_strawberry(vocab: str) -> None:
    """The famous example: the model sees 'strawberry' as a few tokens, never as letters."""
    result = ok(
        "show",
        "--vocab-dir",
        vocab,
        "-e",
        "cl100k_base",
        "-e",
        "o200k_base",
        "strawberry",
        "--no-color",
    )
    out = result.stdout
    assert "cl100k_base: 3 tokens" in out
    assert "[str][aw][berry]" in out
    assert "o200k_base: 3 tokens" in out
    assert "[st][raw][berry]" in out
    for token_id in (496, 675, 15717, 302, 1618, 19772):
        assert f" {token_id}  " in out

    # In a sentence " strawberry" is a single token: not one letter r is visible to the model.
    result = ok("show", "--vocab-dir", vocab, "-e", "cl100k_base", STRAWBERRY, "--no-color")
    assert "[How][ many][ r]['s][ are][ in][ strawberry][?]" in result.stdout
    assert '73700  " strawberry"' in result.stdout


def test_show_bytes_of_partial_tokens_and_colour(vocab: str) -> None:
    result = ok("show", "--vocab-dir", vocab, "-e", "o200k_base", "a 🍓", "--no-color")
    o200k = enc("o200k_base")
    ids = o200k.encode("a 🍓")
    assert len(ids) == 3  # the emoji is cut across two tokens
    assert "⟨f0 9f 8d⟩" in result.stdout and "⟨93⟩" in result.stdout
    assert "20 f0 9f 8d" in result.stdout  # the byte values column
    coloured = ok("show", "--vocab-dir", vocab, "-e", "o200k_base", "a 🍓", "--color")
    assert "\x1b[" in coloured.stdout
    plain = ok("show", "--vocab-dir", vocab, "-e", "o200k_base", "a 🍓")  # not a terminal
    assert "\x1b[" not in plain.stdout


class _PageChecker(HTMLParser):
    VOID = frozenset({"meta", "br", "img", "link", "input", "hr"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.tags: list[str] = []
        self.external: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href") or (value and "url(" in value):
                self.external.append(f"{tag} {name}={value}")
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-5:])
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_show_html_is_a_valid_self_contained_page(vocab: str, tmp_path: Path) -> None:
    page = tmp_path / "tokens.html"
    text = STRAWBERRY + ' <b>"&amp;"</b> 🍓\n日本語'
    ok(
        "show",
        "--vocab-dir",
        vocab,
        "-e",
        "cl100k_base",
        "-e",
        "o200k_base",
        text,
        "--html",
        str(page),
    )
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    checker = _PageChecker()
    checker.feed(html)
    checker.close()
    assert checker.stack == []  # every element is closed, in order
    assert checker.external == [] and "script" not in checker.tags and "link" not in checker.tags
    assert "url(" not in html and "@import" not in html
    shown = "".join(checker.text)
    assert ' <b>"&amp;"</b>' in shown  # the text is escaped, not interpreted
    for name in ("cl100k_base", "o200k_base"):
        for token_id in enc(name).encode(text):
            assert f">{token_id}<" in html
    assert "f0 9f 8d" in html  # the bytes of a token that is part of the emoji


# ---- report -----------------------------------------------------------------------------------


@pytest.fixture
def prompt_files(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "prompts"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("Summarise the following article in three bullet points.")
    (folder / "sub" / "b.md").write_text("# Title\n\nTranslate to French: the cat sat on the mat.")
    (folder / ".hidden.txt").write_text("never read")
    (folder / "image.png").write_bytes(b"\x89PNG not text")
    jsonl = tmp_path / "evals.jsonl"
    rows = [
        {"id": 1, "question": STRAWBERRY, "messages": [{"role": "user", "content": STRAWBERRY}]},
        {
            "id": 2,
            "question": "What is 17 * 23?",
            "messages": [
                {"role": "system", "content": "Answer with a number."},
                {"role": "user", "content": [{"type": "text", "text": "What is 17 * 23?"}]},
            ],
        },
    ]
    jsonl.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    table = tmp_path / "data.csv"
    table.write_text(
        'id,question,answer\n1,"Name three primes, please.",2 3 5\n2,Is 91 prime?,no\n'
    )
    return {"folder": folder, "jsonl": jsonl, "csv": table}


def test_report_json_counts_equal_encoding_count(vocab: str, prompt_files: dict[str, Path]) -> None:
    result = ok(
        "report",
        "--vocab-dir",
        vocab,
        "-e",
        "o200k_base",
        "-e",
        "cl100k_base",
        "-q",
        str(prompt_files["folder"]),
        str(prompt_files["jsonl"]),
        str(prompt_files["csv"]),
        "--column",
        "question",
        "--format",
        "json",
    )
    data = json.loads(result.stdout)
    texts = [
        "Summarise the following article in three bullet points.",
        "# Title\n\nTranslate to French: the cat sat on the mat.",
        STRAWBERRY,
        "Answer with a number.\n\nWhat is 17 * 23?",
        "Name three primes, please.",
        "Is 91 prime?",
    ]
    assert data["prompts_count"] == len(texts)
    sources = [p["source"] for p in data["prompts"]]
    assert sources[2].endswith("evals.jsonl:1") and sources[5].endswith("data.csv:3")
    # The two chats count as OpenAI's cookbook counts them: every value of every message, 3
    # tokens per message and 3 priming the reply.
    chats = {
        2: [("user", STRAWBERRY)],
        3: [("system", "Answer with a number."), ("user", "What is 17 * 23?")],
    }
    for name in ("o200k_base", "cl100k_base"):
        e = enc(name)
        expected = [
            3 + sum(3 + e.count(r) + e.count(c) for r, c in chats[i]) if i in chats else e.count(t)
            for i, t in enumerate(texts)
        ]
        assert [p["tokens"][name] for p in data["prompts"]] == expected
        assert data["totals"][name] == sum(expected)
        stats = next(t for t in data["tokenizers"] if t["label"] == name)
        assert stats["total_tokens"] == sum(expected)
        assert stats["min"] == min(expected) and stats["max"] == max(expected)
        assert stats["median"] == pytest.approx(float(np.median(expected)))
        assert stats["p95"] == pytest.approx(float(np.percentile(expected, 95)))
        assert stats["bytes_per_token"] == pytest.approx(
            sum(len(t.encode()) for t in texts) / sum(expected)
        )
        assert stats["tokens_per_word"] == pytest.approx(
            sum(expected) / sum(len(t.split()) for t in texts)
        )
        assert stats["costs"]  # the packaged prices have models for both
        content = sum(e.count(c) for chat in chats.values() for _, c in chat)
        overhead = sum(expected[i] for i in chats) - content
        assert (stats["chat_overhead"], stats["chat_overhead_method"]) == (overhead, "openai")


def test_report_jsonl_field_and_prices(
    vocab: str, tmp_path: Path, prompt_files: dict[str, Path]
) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text(
        '[prices]\ndate = 2025-01-01\ncurrency = "USD"\n'
        '[models."gpt-4o"]\ninput = 2.0\noutput = 8.0\n'
        '[models."my-model"]\ntokenizer = "cl100k_base"\ninput = 1.0\noutput = 1.0\n'
    )
    result = ok(
        "report",
        "--vocab-dir",
        vocab,
        "-m",
        "gpt-4o",
        "-m",
        "gpt-4",
        str(prompt_files["jsonl"]),
        "--field",
        "question",
        "--prices",
        str(prices),
        "--output-tokens",
        "100",
        "--format",
        "json",
    )
    data = json.loads(result.stdout)
    gpt4o = next(t for t in data["tokenizers"] if t["label"] == "gpt-4o")
    total = enc("o200k_base").count(STRAWBERRY) + enc("o200k_base").count("What is 17 * 23?")
    assert gpt4o["total_tokens"] == total
    (cost,) = gpt4o["costs"]
    assert cost["model"] == "gpt-4o"
    assert cost["output_tokens"] == 200  # 2 prompts x 100
    assert cost["total_cost"] == pytest.approx((total * 2.0 + 200 * 8.0) / 1e6)
    gpt4 = next(t for t in data["tokenizers"] if t["label"] == "gpt-4")
    assert gpt4["costs"] == [] and gpt4["unpriced_models"] == ["gpt-4"]
    assert data["prices"]["date"] == "2025-01-01"

    table = ok(
        "report",
        "--vocab-dir",
        vocab,
        "-m",
        "gpt-4",
        str(prompt_files["jsonl"]),
        "--prices",
        str(prices),
    )
    assert "no price for 'gpt-4'" in table.stdout


def test_report_table_markdown_csv(vocab: str, prompt_files: dict[str, Path]) -> None:
    args = [
        "report",
        "--vocab-dir",
        vocab,
        "-e",
        "o200k_base",
        "-e",
        "cl100k_base",
        str(prompt_files["jsonl"]),
        "--output-tokens",
        "50",
    ]
    table = ok(*args).stdout
    assert table.splitlines()[0].split() == ["2", "prompts", "o200k_base", "cl100k_base"]
    for row in ("tokens, total", "median", "p95", "bytes/token", "chars/token", "tokens/word"):
        assert row in table
    assert "gpt-4o " in table and "gpt-4 " in table and "Estimated cost" in table
    assert "2025-" in table  # the packaged prices are dated

    markdown = ok(*args, "--format", "markdown").stdout
    assert markdown.startswith("| 2 prompts | o200k_base | cl100k_base |\n|:--|--:|--:|")

    rows = list(csv.DictReader(io.StringIO(ok(*args, "--format", "csv").stdout)))
    o200k_rows = [r for r in rows if r["tokenizer"] == "o200k_base"]
    assert {r["model"] for r in o200k_rows} >= {"gpt-4o", "gpt-4o-mini"}
    # The chats as OpenAI's cookbook counts them (see test_report_json_counts_equal_...).
    e = enc("o200k_base")
    total = (
        (3 + 3 + e.count("user") + e.count(STRAWBERRY))
        + (3 + 3 + e.count("system") + e.count("Answer with a number."))
        + (3 + e.count("user") + e.count("What is 17 * 23?"))
    )
    assert all(int(r["total_tokens"]) == total for r in o200k_rows)
    assert all(r["chat_overhead_method"] == "openai" for r in o200k_rows)
    assert "chat overhead" in table and "(est.)" in table and "cookbook" in table
    assert all(int(r["output_tokens"]) == 100 for r in o200k_rows)

    no_prices = ok(*args, "--no-prices").stdout
    assert "Estimated cost" not in no_prices


def test_report_stdin_and_output_file(vocab: str, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    ok(
        "report",
        "--vocab-dir",
        vocab,
        "-q",
        "--format",
        "json",
        "-o",
        str(out),
        input="a prompt from standard input",
    )
    data = json.loads(out.read_text())
    assert data["prompts"][0]["source"] == "<stdin>"
    assert data["totals"]["o200k_base"] == enc("o200k_base").count("a prompt from standard input")


def test_report_plot(vocab: str, tmp_path: Path, prompt_files: dict[str, Path]) -> None:
    png = tmp_path / "lengths.png"
    result = ok(
        "report",
        "--vocab-dir",
        vocab,
        "-e",
        "o200k_base",
        "-e",
        "gpt2",
        "-q",
        str(prompt_files["folder"]),
        str(prompt_files["jsonl"]),
        "--plot",
        str(png),
    )
    assert result.stderr == ""  # --quiet
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert png.stat().st_size > 5000


# ---- train and convert ------------------------------------------------------------------------


def test_train_then_use_the_vocabulary(vocab: str, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat on the mat. the dog sat on the log. " * 200)
    out = tmp_path / "toy.tiktoken"
    result = ok(
        "train", str(corpus), "--vocab-size", "300", "--pattern", "gpt2", "-o", str(out), "--quiet"
    )
    assert result.output == ""
    expected = bytepair.train(corpus, vocab_size=300, pattern="gpt2", show_progress=False)
    text = "the cat sat on the log"
    ids = ok("encode", "-t", str(out), "--pattern", "gpt2", text).stdout.split()
    assert [int(i) for i in ids] == expected.encode(text)

    loud = run(
        "train",
        str(corpus),
        "--vocab-size",
        "300",
        "--pattern",
        "gpt2",
        "-o",
        str(tmp_path / "again.tiktoken"),
    )
    assert loud.exit_code == 0
    n = expected.n_vocab  # the tiny corpus runs out of pairs before 300
    assert f"trained 'again': {n} tokens ({n - 256} merges, fewer than 300" in loud.stderr


def test_tokenizer_file_of_a_known_vocabulary_needs_no_pattern(vocab: str) -> None:
    path = shared_path("vocab", "cl100k_base", "cl100k_base.tiktoken")
    result = ok("count", "-t", str(path), STRAWBERRY)
    assert int(result.stdout) == enc("cl100k_base").count(STRAWBERRY)


def test_convert_to_tiktoken(vocab: str, tmp_path: Path) -> None:
    source = shared_path("vocab", "r50k_base", "r50k_base.tiktoken")
    out = tmp_path / "copy.tiktoken"
    ok("convert", str(source), str(out), "--to", "tiktoken", "--pattern", "gpt2")
    text = "hello world, converted"
    ids = ok("encode", "-t", str(out), "--pattern", "gpt2", text).stdout.split()
    assert [int(i) for i in ids] == enc("r50k_base").encode(text)


@pytest.mark.parametrize("to", ["hf", "gpt2"])
def test_convert_known_tiktoken_to_other_formats(vocab: str, tmp_path: Path, to: str) -> None:
    # A well-known .tiktoken file is recognised, so its pattern need not be given.
    source = shared_path("vocab", "r50k_base", "r50k_base.tiktoken")
    out = tmp_path / ("tokenizer.json" if to == "hf" else "gpt2-folder")
    result = ok("convert", str(source), str(out), "--to", to)
    assert "wrote" in result.stderr
    text = "Converted vocabularies give the same ids: 12345 🍓 日本語"
    ids = ok("encode", "-t", str(out), text).stdout.split()
    assert [int(i) for i in ids] == enc("r50k_base").encode(text)


def test_train_to_hf_json_and_read_it_back(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("low lower lowest newer newest wider widest " * 100)
    out = tmp_path / "tokenizer.json"
    ok("train", str(corpus), "--vocab-size", "280", "--pattern", "gpt2", "-o", str(out), "-q")
    trained = bytepair.train(corpus, vocab_size=280, pattern="gpt2", show_progress=False)
    text = "the lowest and the newest"
    assert [int(i) for i in ok("encode", "-t", str(out), text).stdout.split()] == trained.encode(
        text
    )


def test_tokenizer_json_special_tokens_in_text() -> None:
    # A tokenizer.json's special added tokens: plain text by default, as for tiktoken files (no
    # error), the model's tokens with --allow-special; <s> ... </s> come from the post-processor.
    path = str(shared_path("vocab", "roberta-base", "tokenizer.json"))
    text = "Hello <mask>"
    plain = [int(i) for i in ok("encode", "-t", path, text).stdout.split()]
    assert plain[0] == 0 and plain[-1] == 2 and 50264 not in plain
    allowed = [int(i) for i in ok("encode", "-t", path, "--allow-special", text).stdout.split()]
    assert allowed == [0, 31414, 50264, 2]
    assert ok("count", "-t", path, text).stdout == f"{len(plain)}\n"
    assert ok("count", "-t", path, "--allow-special", text).stdout == "4\n"


def test_tokenizer_folder(vocab: str) -> None:
    # GPT-2's own encoder.json + vocab.bpe, given as their folder.
    result = ok("encode", "-t", str(shared_path("vocab", "gpt2")), "hello world")
    assert result.stdout == "31373 995\n"


# ---- errors: one line, non-zero, no traceback ------------------------------------------------


def test_errors_are_one_line(vocab: str, tmp_path: Path, prompt_files: dict[str, Path]) -> None:
    bad_jsonl = tmp_path / "bad.jsonl"
    bad_jsonl.write_text('{"prompt": "fine"}\n\n{"prompt": broken}\n')
    not_utf8 = tmp_path / "latin1.txt"
    not_utf8.write_bytes("café".encode("latin-1"))
    bad_toml = tmp_path / "bad.toml"
    bad_toml.write_text("[models.x\n")
    bad_price = tmp_path / "price.toml"
    bad_price.write_text('[models."gpt-4o"]\ninput = "cheap"\noutput = 1\n')
    no_output = tmp_path / "no_output.toml"
    no_output.write_text('[models."gpt-4o"]\ninput = 1\n')
    unknown_model = tmp_path / "unknown_model.toml"
    unknown_model.write_text('[models."mystery"]\ninput = 1\noutput = 1\n')
    empty = tmp_path / "empty"
    empty.mkdir()
    trained = tmp_path / "own.tiktoken"  # a vocabulary no registry knows: no pattern known
    bytepair.train("some text to train on " * 20, vocab_size=260, show_progress=False).save(
        trained, format="tiktoken"
    )
    jsonl, table = str(prompt_files["jsonl"]), str(prompt_files["csv"])
    v = ["--vocab-dir", vocab]
    cases: list[tuple[list[str], list[str]]] = [
        (["count", *v, "-e", "o200k", "x"], ["unknown encoding 'o200k'", "o200k_base"]),
        (["report", *v, "-m", "gpt-9000", jsonl], ["unknown model 'gpt-9000'"]),
        (["count", *v, "-f", str(tmp_path / "missing.txt")], ["missing.txt", "no such file"]),
        (["report", *v, str(tmp_path / "missing.jsonl")], ["missing.jsonl"]),
        (["count", *v, "-f", str(not_utf8)], ["latin1.txt", "not UTF-8"]),
        (["report", *v, str(bad_jsonl)], ["bad.jsonl:3", "invalid JSON"]),
        (["report", *v, jsonl, "--field", "nope"], ["evals.jsonl:1", "no field 'nope'"]),
        (["report", *v, table, "--column", "nope"], ["data.csv", "no column 'nope'"]),
        (["report", *v, table], ["data.csv", "--column"]),
        (["report", *v, jsonl, "--prices", str(bad_toml)], ["bad.toml", "invalid TOML"]),
        (["report", *v, jsonl, "--prices", str(bad_price)], ["price.toml", "'input'"]),
        (["report", *v, jsonl, "--prices", str(no_output)], ["missing 'output'"]),
        (["report", *v, jsonl, "--prices", str(unknown_model)], ["mystery", "tokenizer"]),
        (["report", *v, jsonl, "--prices", str(tmp_path / "none.toml")], ["none.toml"]),
        (["report", *v, str(empty)], ["no prompts"]),
        (["report", *v, jsonl, "--plot", str(tmp_path / "x.unknown")], ["--plot"]),
        (
            ["count", "--vocab-dir", str(empty), "-e", "cl100k_base", "x"],
            ["cl100k_base.tiktoken", "BYTEPAIR_OFFLINE=1"],
        ),
        (["count", *v, "-t", str(tmp_path / "none.tiktoken"), "x"], ["none.tiktoken"]),
        (["count", *v, "-t", str(bad_jsonl), "x"], ["bad.jsonl"]),
        (["count", *v, "-t", str(trained), "x"], ["own.tiktoken", "--pattern"]),
        (["convert", str(trained), str(tmp_path / "t.json"), "--to", "hf"], ["--pattern"]),
        (["convert", str(tmp_path / "none"), str(tmp_path / "t.json"), "--to", "hf"], ["none"]),
        (["count", *v, "-e", "gpt2", "-m", "gpt-4", "x"], ["one tokenizer"]),
        (["decode", *v, "1", "two"], ["'two' is not a token id"]),
        (["decode", *v, "-e", "gpt2", "50300"], ["50300"]),
        (["encode", *v, "a", "b", "-o", str(tmp_path / "x.npy")], ["one sequence"]),
        (
            ["train", str(tmp_path / "missing.txt"), "--vocab-size", "300", "-o", "x.tiktoken"],
            ["missing.txt"],
        ),
        (["train", jsonl, "--vocab-size", "300", "-o", str(tmp_path / "x.bin")], ["--format"]),
        (["train", jsonl, "-o", "x.tiktoken"], ["--vocab-size", "bytepair train --help"]),
        (["report", *v, jsonl, "--output-tokens", "-5"], ["-5"]),
        (["nonsense"], ["nonsense"]),
        (["count", "--bogus"], ["--bogus"]),
    ]
    for args, needles in cases:
        result = run(*args, env={"BYTEPAIR_CACHE_DIR": str(empty)})
        assert_one_line_error(result, *needles)
    assert not list(Path.cwd().glob("x.*"))  # nothing written into the working directory


def test_entry_point_in_a_subprocess(vocab: str, tmp_path: Path) -> None:
    code = "import sys; from bytepair.cli import main; sys.argv[0] = 'bytepair'; main()"
    ok_run = subprocess.run(
        [sys.executable, "-c", code, "count", "--vocab-dir", vocab, "-e", "cl100k_base", "hi"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert ok_run.returncode == 0 and ok_run.stdout == "1\n"
    failed = subprocess.run(
        [sys.executable, "-c", code, "report", "--vocab-dir", vocab, "missing.jsonl"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert failed.returncode == 1
    assert failed.stdout == ""
    assert failed.stderr == "Error: missing.jsonl: no such file\n"


def test_help_and_version() -> None:
    result = ok("--help")
    for command in ("count", "encode", "decode", "show", "report", "train", "convert"):
        assert command in result.stdout
    assert bytepair.__version__ in ok("--version").stdout


def test_readme_examples_are_real_output(vocab: str) -> None:
    """The README's strawberry examples are what the command prints."""
    from conftest import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for command in (
        "bytepair show -e cl100k_base -e o200k_base strawberry",
        'bytepair count "How many r\'s are in strawberry?"',
    ):
        block = readme.split(f"$ {command}\n", 1)[1]
        expected = block.split("\n```", 1)[0].split("\n$ ", 1)[0] + "\n"
        args = shlex.split(command)[1:]
        assert ok(*args[:1], "--vocab-dir", vocab, *args[1:]).stdout == expected


def test_show_joins_words_and_reads_stdin(vocab: str) -> None:
    words = ok("show", "--vocab-dir", vocab, "-e", "gpt2", "hello", "world", "--no-table")
    assert words.stdout.splitlines()[1] == "[hello][ world]"
    piped = ok("show", "--vocab-dir", vocab, "-e", "gpt2", "--no-table", input="hello world")
    assert piped.stdout == words.stdout
