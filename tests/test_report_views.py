"""The web page of ``bytepair show --html`` and the lengths plot of ``bytepair report --plot``:
what they contain, and the choices they make from the data."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from bytepair.cli import cli
from bytepair.report import default_prices, html_page, token_report
from bytepair.report.render import lengths_figure, money

from anchors import ours as enc
from conftest import shared_path

STRAWBERRY = "How many r's are in strawberry?"


# ---- the page ----------------------------------------------------------------------------------


def test_tokenizers_side_by_side_under_a_summary() -> None:
    o200k, cl100k = enc("o200k_base"), enc("cl100k_base")
    page = html_page(STRAWBERRY, [o200k, cl100k], prices=default_prices())
    assert 'class="columns" style="grid-template-columns: repeat(2, minmax(0, 1fr))"' in page
    assert '<body class="wide">' in page
    overview = page[page.index('<table class="overview">') : page.index("</table>")]
    assert page.index('<table class="overview">') < page.index('<div class="columns"')
    rows = re.findall(r"<tr><td>([^<]+)</td><td class=\"num\">([\d,]+)</td>", overview)
    assert rows == [
        ("o200k_base", str(len(o200k.encode(STRAWBERRY)))),
        ("cl100k_base", str(len(cl100k.encode(STRAWBERRY)))),
    ]
    per_char = f"{len(STRAWBERRY) / len(o200k.encode(STRAWBERRY)):.2f}"
    assert per_char in overview
    assert "input cost" in overview
    prices = default_prices()
    for encoding in (o200k, cl100k):
        first = prices.for_tokenizer(encoding.name)[0]
        cost = money(first.cost(len(encoding.encode(STRAWBERRY))), prices.currency)
        assert f"{first.model} {cost}" in overview
    if len(prices.for_tokenizer("o200k_base")) > 3:
        assert "more</td>" in overview  # the first three models, then how many more
    single = html_page(STRAWBERRY, o200k)
    assert "repeat(1, " in single and 'class="wide"' not in single
    assert "input cost" not in single  # no prices given


def test_a_long_text_is_cut_with_a_note() -> None:
    text = "The quick brown fox jumps over the lazy dog. " * 2000  # 90,000 characters
    o200k = enc("o200k_base")
    full = html_page(text, o200k, max_chars=None)
    cut = html_page(text, o200k, max_chars=9_000)
    assert "left out" not in full
    assert "shows the first 9,000 of 90,000 characters; the remaining 81,000 are left out" in cut
    assert len(cut) < len(full) / 5
    assert html_page(text, o200k).count("<tr>") == full.count("<tr>")  # under the default cap
    with pytest.raises(ValueError, match="max_chars"):
        html_page(text, o200k, max_chars=-1)


def test_show_html_cap_is_said_on_stderr(tmp_path: Path) -> None:
    source = tmp_path / "novel.txt"
    source.write_text("Call me Ishmael. " * 1000)  # 17,000 characters
    page = tmp_path / "p.html"
    args = ["show", "--vocab-dir", str(shared_path("vocab")), "-f", str(source), "--no-table"]
    runner = CliRunner()
    result = runner.invoke(cli, [*args, "--html", str(page), "--max-chars", "1000"])
    assert result.exit_code == 0, result.output
    assert "shows the first 1,000 of 17,000 characters (16,000 left out" in result.stderr
    assert "the first 1,000 of 17,000 characters" in page.read_text()
    quiet = runner.invoke(cli, [*args, "--html", str(page), "--max-chars", "1000", "-q"])
    assert quiet.exit_code == 0 and quiet.stderr == ""


# ---- the plot ----------------------------------------------------------------------------------


def _report(lengths: list[list[int]]) -> object:
    """A report whose tokenizer i gives prompt j exactly lengths[i][j] tokens (one byte each)."""
    byte_ranks = {bytes([b]): b for b in range(256)}
    from bytepair import Encoding

    tokenizers = [
        Encoding(f"bytes{i}", pat_str=r".", mergeable_ranks=byte_ranks, special_tokens={})
        for i in range(len(lengths))
    ]
    assert all(row == lengths[0] for row in lengths)  # same texts for every tokenizer
    return token_report(["x" * n for n in lengths[0]], tokenizers)


def test_the_axis_is_logarithmic_when_lengths_span_decades() -> None:
    pytest.importorskip("matplotlib")
    paragraphs_and_files = [12, 40, 55, 80, 120, 300, 2_000, 15_000, 40_000]
    wide = lengths_figure(_report([paragraphs_and_files]))
    assert wide.axes[0].get_xscale() == "log"
    narrow = lengths_figure(_report([[100, 120, 180, 250, 400, 900]]))  # under two decades
    assert narrow.axes[0].get_xscale() == "linear"
    with_empty = lengths_figure(_report([[0, 5, 60_000]]))  # an empty prompt, log axis
    assert with_empty.axes[0].get_xscale() == "log"


def test_overlapping_series_differ_in_style_and_the_legend_is_rounded() -> None:
    pytest.importorskip("matplotlib")
    lengths = [3, 17, 90, 251, 308, 309, 310]
    report = _report([lengths, lengths])  # identical tokenizers: the curves coincide
    fig = lengths_figure(report)
    ax = fig.axes[0]
    histograms = [p for p in ax.patches if p.get_label() and not p.get_label().startswith("_")]
    assert len(histograms) == 2
    styles = {p.get_linestyle() for p in histograms}
    assert len(styles) == 2  # solid and dashed: both visible where they overlap
    assert all(p.get_facecolor()[3] < 0.5 for p in histograms)  # see-through fills
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    p95 = report.tokenizers[0].p95  # type: ignore[attr-defined]
    assert p95 is not None and not float(p95).is_integer()
    assert all(f"p95 {round(p95)}" in label for label in labels), labels
    assert not any(re.search(r"\d\.\d", label) for label in labels), labels
