"""The web page of ``bytepair show --html`` rendered by a real browser (headless Chromium):
with two tokenizers, their token views stand side by side.

Needs the ``chromium`` command (Debian: ``apt-get install chromium``); without it the test skips
on a user's machine and fails under CI (``BYTEPAIR_REQUIRE_SHARED=1``), which installs it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from bytepair.cli import cli

from conftest import REQUIRE_SHARED, shared_path

WIDTH, HEIGHT = 1200, 800
# The token backgrounds of the page (bytepair.report.page).
TOKEN_COLOURS = {(0xAF, 0xD7, 0xFF), (0xFF, 0xD7, 0x87), (0xD7, 0xFF, 0xD7), (0xFF, 0xAF, 0xD7),
                 (0xD7, 0xAF, 0xFF), (0xFF, 0xFF, 0xD7)}  # fmt: skip
TEXT = "The quick brown fox jumps over the lazy dog; strawberry has three r letters. " * 6


def _browser() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    message = "no chromium to render the page: apt-get install chromium"
    if REQUIRE_SHARED:
        pytest.fail(message)
    pytest.skip(message)


def screenshot(page: Path, out: Path) -> None:
    command = [
        _browser(),
        "--headless",
        "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
        "--disable-gpu",
        "--hide-scrollbars",
        f"--window-size={WIDTH},{HEIGHT}",
        f"--screenshot={out}",
        page.as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and out.is_file(), done.stderr[-2000:]


def test_two_tokenizers_render_side_by_side(tmp_path: Path) -> None:
    from PIL import Image

    page = tmp_path / "tokens.html"
    args = ["show", "--vocab-dir", str(shared_path("vocab")), "-e", "cl100k_base"]
    result = CliRunner().invoke(
        cli, [*args, "-e", "o200k_base", "--no-table", "--html", str(page), TEXT]
    )
    assert result.exit_code == 0, result.output
    png = tmp_path / "tokens.png"
    screenshot(page, png)
    image = Image.open(png).convert("RGB")
    assert image.size == (WIDTH, HEIGHT)
    pixels = image.load()
    left_rows, right_rows, middle = set(), set(), 0
    for y in range(HEIGHT):
        for x in range(0, WIDTH, 2):
            if pixels[x, y] not in TOKEN_COLOURS:
                continue
            if x < WIDTH // 2 - 20:
                left_rows.add(y)
            elif x > WIDTH // 2 + 20:
                right_rows.add(y)
            elif abs(x - WIDTH // 2) <= 8:
                middle += 1
    both = left_rows & right_rows
    # Both columns show tokens on the same lines of the screen...
    assert len(both) > 100, (len(left_rows), len(right_rows))
    # ...with the gap between the columns free of tokens (a single wide text would cross it).
    assert middle == 0
    # The summary table sits above the token views.
    assert min(both) > 150
