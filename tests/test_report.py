"""bytepair.report: prompts from files, prices, token reports, the token view."""

from __future__ import annotations

import doctest
import importlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import bytepair
from bytepair.report import (
    MissingExtraError,
    PricesError,
    PriceTable,
    Prompt,
    PromptError,
    Tokenizer,
    default_prices,
    html_page,
    load_prices,
    load_prompts,
    parse_prices,
    render_tokens,
    show,
    token_pieces,
    token_report,
)

from anchors import ours as enc
from conftest import shared_path

MODULES = [
    "bytepair.report",
    "bytepair.report.prompts",
    "bytepair.report.prices",
    "bytepair.report.stats",
    "bytepair.report.render",
    "bytepair.report.show",
]


@pytest.fixture
def byte_encoding() -> bytepair.Encoding:
    ranks = {bytes([b]): b for b in range(256)}
    return bytepair.Encoding("bytes", pat_str=r".", mergeable_ranks=ranks, special_tokens={})


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module: str) -> None:
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(importlib.import_module(module), optionflags=flags)
    assert result.failed == 0
    assert result.attempted > 0


# ---- prompts ----------------------------------------------------------------------------------


def test_text_files_and_folders(tmp_path: Path) -> None:
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "b.txt").write_text("second", encoding="utf-8")
    (tmp_path / "d" / "a.md").write_text("first\r\n", encoding="utf-8")
    (tmp_path / "d" / "sub" / "c.prompt").write_text("third", encoding="utf-8")
    (tmp_path / "d" / "README").write_text("no suffix: not a prompt file", encoding="utf-8")
    (tmp_path / "d" / "package.json").write_text('{"name": "x"}', encoding="utf-8")
    (tmp_path / "d" / "MANIFEST.tsv").write_text("file\tbytes\n", encoding="utf-8")
    (tmp_path / "d" / "z.jsonl").write_text('{"text": "fourth"}\n', encoding="utf-8")
    (tmp_path / "d" / ".secret.txt").write_text("hidden", encoding="utf-8")
    (tmp_path / "d" / "logo.png").write_bytes(b"\x89PNG")
    (tmp_path / "d" / ".git").mkdir()
    (tmp_path / "d" / ".git" / "x.txt").write_text("hidden too", encoding="utf-8")
    one = tmp_path / "one.weird-suffix"
    one.write_text("named files are read whatever their suffix", encoding="utf-8")
    prompts = load_prompts([tmp_path / "d", one])
    assert [p.text for p in prompts] == [
        "first\r\n",  # line endings kept
        "second",
        "fourth",
        "third",  # files before sub-folders, each sorted
        "named files are read whatever their suffix",
    ]
    assert prompts[0].source == str(tmp_path / "d" / "a.md")


def test_jsonl_fields_strings_and_chat(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    lines = [
        json.dumps("a bare string"),
        json.dumps({"prompt": "the prompt field", "text": "not this one"}),
        json.dumps({"messages": [{"role": "user", "content": "chat"}], "prompt": "not this"}),
        "",
        json.dumps([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]),
        json.dumps({"input": "input field"}),
        json.dumps(
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "look: "},
                            {"type": "image_url", "image_url": {"url": "x"}},
                            {"type": "text", "text": "a cat"},
                        ],
                    },
                    {"role": "assistant", "content": None, "tool_calls": []},
                    {"role": "tool", "content": "42"},
                ]
            }
        ),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    prompts = load_prompts([path])
    assert [p.text for p in prompts] == [
        "a bare string",
        "the prompt field",
        "chat",
        "s\n\nu",
        "input field",
        "look: a cat\n\n42",
    ]
    assert [p.source.rsplit(":", 1)[1] for p in prompts] == ["1", "2", "3", "5", "6", "7"]


def test_jsonl_named_and_nested_fields(tmp_path: Path) -> None:
    path = tmp_path / "requests.jsonl"
    rows = [
        {"custom_id": "a", "body": {"messages": [{"role": "user", "content": "nested chat"}]}},
        {"custom_id": "b", "body": {"messages": [{"role": "user", "content": "second"}]}},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    assert [p.text for p in load_prompts([path], field="body.messages")] == [
        "nested chat",
        "second",
    ]
    # A field holding an object with messages (an OpenAI batch request body) works too.
    assert [p.text for p in load_prompts([path], field="body")] == ["nested chat", "second"]
    with pytest.raises(PromptError, match=r"requests.jsonl:1: no field 'body.prompt'"):
        load_prompts([path], field="body.prompt")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"prompt": "a"}\n{"prompt": 2\n', r"bad.jsonl:2: invalid JSON: .*column"),
        ('{"a": 1}\n', r"bad.jsonl:1: none of the fields messages, prompt.*\(the object has a\)"),
        ('{"prompt": 5}\n', r"bad.jsonl:1: field 'prompt' is a JSON number"),
        ("3\n", r"bad.jsonl:1: a JSON number is not a prompt"),
        ('{"messages": [{"role": "user", "content": 7}]}\n', r"bad.jsonl:1: .*message 0"),
    ],
)
def test_jsonl_errors_name_the_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(PromptError, match=message):
        load_prompts([path])


def test_json_files(tmp_path: Path) -> None:
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([{"prompt": "one"}, "two"]), encoding="utf-8")
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{"role": "user", "content": "hi"}]), encoding="utf-8")
    prompts = load_prompts([listed, chat])
    assert [(p.text, p.source) for p in prompts] == [
        ("one", f"{listed}[0]"),
        ("two", f"{listed}[1]"),
        ("hi", str(chat)),
    ]
    broken = tmp_path / "broken.json"
    broken.write_text('[\n  {"prompt": "x"},\n  oops\n]', encoding="utf-8")
    with pytest.raises(PromptError, match=r"broken.json:3: invalid JSON"):
        load_prompts([broken])


def test_csv_columns(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    long_text = "word " * 50_000  # longer than the csv module's default 128 KiB field limit
    path.write_text(
        'id,Prompt,answer\n1,"multi\nline, with comma",x\n2,' + long_text + ",y\n",
        encoding="utf-8",
    )
    prompts = load_prompts([path])  # "Prompt" found case-insensitively
    assert [p.text for p in prompts] == ["multi\nline, with comma", long_text]
    assert [p.source.rsplit(":", 1)[1] for p in prompts] == ["3", "4"]  # lines where rows end
    assert [p.text for p in load_prompts([path], column="answer")] == ["x", "y"]
    tsv = tmp_path / "one.tsv"
    tsv.write_text("question\nfirst\nsecond\n", encoding="utf-8")
    assert [p.text for p in load_prompts([tsv])] == ["first", "second"]  # the only column
    with pytest.raises(PromptError, match=r"no column 'Answer' \(the header has id, Prompt"):
        load_prompts([path], column="Answer")
    empty = tmp_path / "empty.csv"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(PromptError, match="empty CSV"):
        load_prompts([empty])


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(PromptError, match=r"missing\.txt: no such file"):
        load_prompts([tmp_path / "missing.txt"])
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"ok \xc3\x28")
    with pytest.raises(PromptError, match=r"binary.txt: not UTF-8 text \(byte 0xc3 at offset 3\)"):
        load_prompts([binary])


# ---- prices -----------------------------------------------------------------------------------


def test_default_prices_are_dated_and_name_known_tokenizers() -> None:
    table = default_prices()
    assert table.date is not None and table.date.startswith("20")
    assert table.currency == "USD"
    assert table.source == "bytepair/data/prices.toml"
    assert "gpt-4o" in table.models and table.models["gpt-4o"].tokenizer == "o200k_base"
    for price in table.models.values():
        assert price.tokenizer in bytepair.list_encoding_names()
        assert price.input > 0 and price.output >= price.input
        # The tokenizer written in the file agrees with the registry's model table.
        assert bytepair.encoding_name_for_model(price.model) == price.tokenizer
    assert load_prices() == table


def test_prices_file(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(
        '[prices]\ndate = "2024-05-13"\ncurrency = "EUR"\n'
        '[models."gpt-4o-mini"]\ninput = 0.15\noutput = 0.6\nnote = "no tokenizer: known model"\n'
        '[models."local"]\ntokenizer = "my-vocab"\ninput = 0\noutput = 0\n',
        encoding="utf-8",
    )
    table = load_prices(path)
    assert table.date == "2024-05-13" and table.currency == "EUR"
    assert table.models["gpt-4o-mini"].tokenizer == "o200k_base"
    assert [m.model for m in table.for_tokenizer("my-vocab")] == ["local"]
    assert table.models["gpt-4o-mini"].cost(1_000_000, 1_000_000) == pytest.approx(0.75)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[models.x\n", "invalid TOML"),
        ("title = 1\n", "unknown table 'title'"),
        ("[prices]\ndate = 1\n[models.m]\ninput=1\noutput=1\n", "'date' must be a date"),
        ("[prices]\nwhen = 1\n", "unknown key 'when'"),
        ("[prices]\n", "no models"),
        ('[models."gpt-4o"]\ninput = 1\n', "missing 'output'"),
        ('[models."gpt-4o"]\ninput = -1\noutput = 1\n', "'input' is negative"),
        ('[models."gpt-4o"]\ninput = true\noutput = 1\n', "'input' must be a number"),
        ('[models."gpt-4o"]\ninput = nan\noutput = 1\n', "'input' must be a number"),
        ('[models."gpt-4o"]\ninptu = 1\ninput = 1\noutput = 1\n', "unknown key 'inptu'"),
        ('[models."who"]\ninput = 1\noutput = 1\n', "no 'tokenizer'"),
        ('[models."gpt-4o"]\ntokenizer = 3\ninput = 1\noutput = 1\n', "'tokenizer' must be"),
        ("models = 3\n", "no models"),
    ],
)
def test_malformed_prices(text: str, message: str) -> None:
    with pytest.raises(PricesError, match=message) as info:
        parse_prices(text, source="bad.toml")
    assert str(info.value).startswith("bad.toml: ")
    assert "\n" not in str(info.value)


# ---- token_report -----------------------------------------------------------------------------


def corpus_prompts() -> list[Prompt]:
    root = shared_path("corpus")
    files = sorted(p for p in root.glob("*/*") if p.is_file() and p.name != "MANIFEST.tsv")
    prompts = []
    for f in files[:: max(1, len(files) // 12)]:
        text = f.read_bytes().decode("utf-8", "replace")
        # Cut files into prompt-sized pieces, a few from each.
        for i in range(0, min(len(text), 40_000), 4000):
            prompts.append(Prompt(text[i : i + 4000], f"{f.name}@{i}"))
    return prompts


def test_report_counts_equal_encoding_count_on_the_corpus() -> None:
    prompts = corpus_prompts()
    names = ["o200k_base", "cl100k_base", "gpt2"]
    report = token_report(prompts, [enc(n) for n in names], num_threads=2)
    texts = [p.text for p in prompts]
    for name in names:
        expected = [enc(name).count(t, disallowed_special=()) for t in texts]
        stats = report[name]
        assert list(stats.counts) == expected
        assert stats.total == sum(expected)
        assert stats.minimum == min(expected) and stats.maximum == max(expected)
        assert stats.median == pytest.approx(float(np.median(expected)))
        assert stats.p95 == pytest.approx(float(np.percentile(expected, 95)))
        assert stats.mean == pytest.approx(float(np.mean(expected)))
        n_bytes = sum(len(t.encode("utf-8")) for t in texts)
        assert stats.bytes_per_token == pytest.approx(n_bytes / sum(expected))
        assert stats.chars_per_token == pytest.approx(sum(map(len, texts)) / sum(expected))
        assert stats.tokens_per_word == pytest.approx(
            sum(expected) / sum(len(t.split()) for t in texts)
        )
    # The newer vocabularies compress this mixed corpus better.
    assert report["o200k_base"].total < report["gpt2"].total
    data = json.loads(json.dumps(report.to_dict()))
    assert len(data["prompts"]) == len(prompts)
    assert data["totals"] == {n: report[n].total for n in names}


def test_report_by_names_models_and_prices() -> None:
    prompts = ["How many r's are in strawberry?", "What is 17 * 23?", ""]
    report = token_report(
        prompts,
        ["o200k_base", "gpt-4", "gpt-4o"],
        prices=default_prices(),
        output_tokens=10,
        vocab_dir=shared_path("vocab"),
    )
    assert report.labels == ["o200k_base", "gpt-4", "gpt-4o"]
    assert report["gpt-4"].encoding == "cl100k_base"
    assert report["gpt-4"].minimum == 0  # the empty prompt
    assert [c.model for c in report["gpt-4"].costs] == ["gpt-4"]
    priced = {c.model for c in report["o200k_base"].costs}
    assert {"gpt-4o", "gpt-4o-mini", "gpt-4.1"} <= priced
    cost = report["gpt-4o"].costs[0]
    price = default_prices().models["gpt-4o"]
    assert cost.input_tokens == report["gpt-4o"].total
    assert cost.output_tokens == 30
    assert cost.total_cost == pytest.approx(
        (cost.input_tokens * price.input + 30 * price.output) / 1e6
    )


def test_report_labels_and_mapping(byte_encoding: bytepair.Encoding) -> None:
    report = token_report(["ab"], [byte_encoding, byte_encoding])
    assert report.labels == ["bytes", "bytes#2"]
    report = token_report(["ab"], {"mine": byte_encoding})
    assert report["mine"].counts == (2,)
    with pytest.raises(KeyError, match="no tokenizer 'other'"):
        report["other"]
    table = PriceTable({}, source="empty")
    priced = token_report(["ab"], Tokenizer("t", byte_encoding, ("m1",)), prices=table)
    assert priced["t"].unpriced == ("m1",)
    assert "no price for 'm1'" in priced.to_table()


def test_report_ratios_without_words_or_tokens(byte_encoding: bytepair.Encoding) -> None:
    stats = token_report(["", ""], byte_encoding)["bytes"]
    assert stats.total == 0
    assert stats.bytes_per_token is None and stats.tokens_per_word is None
    assert "-" in token_report(["", ""], byte_encoding).to_table()


def test_report_errors(byte_encoding: bytepair.Encoding) -> None:
    with pytest.raises(ValueError, match="no prompts"):
        token_report([], byte_encoding)
    with pytest.raises(ValueError, match="no tokenizers"):
        token_report(["a"], [])
    with pytest.raises(ValueError, match="output_tokens"):
        token_report(["a"], byte_encoding, output_tokens=-1)
    with pytest.raises(ValueError, match="unknown tokenizer 'nope'"):
        token_report(["a"], "nope")
    with pytest.raises(TypeError, match="must be a str"):
        token_report([Prompt(b"bytes", "x")], byte_encoding)  # type: ignore[arg-type]


def test_report_progress_and_special_text(byte_encoding: bytepair.Encoding) -> None:
    seen: list[int] = []
    o200k = enc("o200k_base")
    report = token_report(["<|endoftext|>"] * 3000, [o200k, byte_encoding], progress=seen.append)
    assert sum(seen) == 6000 and len(seen) == 6  # batches of 1024
    assert report["o200k_base"].counts[0] == o200k.count("<|endoftext|>", disallowed_special=())


def test_dataframe() -> None:
    report = token_report(
        [Prompt("hello world", "a"), Prompt("hi there", "b")], [enc("gpt2"), enc("o200k_base")]
    )
    df = report.to_dataframe()
    assert list(df.columns) == ["source", "chars", "bytes", "words", "gpt2", "o200k_base"]
    assert df["source"].tolist() == ["a", "b"]
    assert df["gpt2"].tolist() == [2, 2]
    assert df["words"].tolist() == [2, 2]


def test_plot_and_missing_extra(
    byte_encoding: bytepair.Encoding, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = token_report(["a", "abc", "abcdef" * 20], [byte_encoding, enc("gpt2")])
    svg = tmp_path / "plot.svg"
    report.plot(svg)
    assert "<svg" in svg.read_text(encoding="utf-8")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'bytepair\[report\]'"):
        report.plot(tmp_path / "never.png")
    with pytest.raises(MissingExtraError, match="pandas"):
        report.to_dataframe()
    assert not (tmp_path / "never.png").exists()


# ---- the token view ---------------------------------------------------------------------------


def test_strawberry_pieces() -> None:
    cl100k = enc("cl100k_base")
    assert [p.text for p in token_pieces(cl100k, "strawberry")] == ["str", "aw", "berry"]
    assert [p.text for p in token_pieces(enc("o200k_base"), "strawberry")] == [
        "st",
        "raw",
        "berry",
    ]
    pieces = token_pieces(cl100k, "How many r's are in strawberry?")
    assert [p.text for p in pieces] == [
        "How",
        " many",
        " r",
        "'s",
        " are",
        " in",
        " strawberry",
        "?",
    ]
    assert [p.id for p in pieces] == cl100k.encode("How many r's are in strawberry?")


def test_pieces_that_are_not_whole_characters() -> None:
    o200k = enc("o200k_base")
    pieces = token_pieces(o200k, "a 🍓")
    assert b"".join(p.bytes for p in pieces) == "a 🍓".encode()
    partial = [p for p in pieces if p.text is None]
    assert [p.hex for p in partial] == ["20 f0 9f 8d", "93"]
    assert [p.label for p in partial] == [" ⟨f0 9f 8d⟩", "⟨93⟩"]
    view = render_tokens(o200k, "a 🍓", color=False)
    assert view.splitlines()[1] == "[a][ ⟨f0 9f 8d⟩][⟨93⟩]"
    assert '" "⟨f0 9f 8d⟩  20 f0 9f 8d' in view


def test_special_tokens_in_the_view() -> None:
    cl100k = enc("cl100k_base")
    plain = token_pieces(cl100k, "<|endoftext|>")
    assert len(plain) > 1 and not any(p.special for p in plain)
    (special,) = token_pieces(cl100k, "<|endoftext|>", allow_special=True)
    assert special.special and special.id == 100257
    assert "\x1b[1m" in render_tokens(cl100k, "<|endoftext|>", allow_special=True)


def test_show_prints_colour_only_when_asked(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    with out.open("w", encoding="utf-8") as f:
        show("tab\there\nnext line", enc("gpt2"), file=f)  # a file: no colour
    text = out.read_text(encoding="utf-8")
    assert "\x1b[" not in text
    assert "⇥" in text and "↵" in text
    with out.open("w", encoding="utf-8") as f:
        show("tab\there\nnext line", enc("gpt2"), file=f, color=True, table=False)
    coloured = out.read_text(encoding="utf-8")
    # The first token's pastel background (xterm colour 153), as click.style writes it.
    assert "\x1b[48;5;153m" in coloured
    # The background is closed before each line break so it does not run to the edge.
    assert all(line.endswith("\x1b[0m") for line in coloured.splitlines()[1:])


def test_html_page_escapes_and_is_self_contained() -> None:
    page = html_page("<script>alert(1)</script> & 🍓", [enc("cl100k_base"), enc("o200k_base")])
    assert "<script" not in page
    assert "&lt;" in page and "&amp;" in page
    assert page.count("<section>") == 2
    assert "http" not in page and "src=" not in page and "href=" not in page
    assert page.count("<tr>") == page.count("</tr>") > 0
