"""The ``bytepair`` command as people use it: colours and terminals, progress bars, quiet
notes, repeated options, decode's final newline, listing what is known, truncation.

Terminal behaviour is checked for real: the command runs in a subprocess on a pseudo-terminal
(``pty``), with the window size set, next to the same command in a pipe.
"""

from __future__ import annotations

import fcntl
import importlib
import io
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from bytepair import _terminal
from bytepair.cli import cli

from anchors import ours as enc
from conftest import ROOT, shared_path

train_module = importlib.import_module("bytepair.train")

STRAWBERRY = "How many r's are in strawberry?"
PYTHONPATH = os.pathsep.join([str(ROOT / "python"), os.environ.get("PYTHONPATH", "")])


@pytest.fixture(scope="module")
def vocab() -> str:
    return str(shared_path("vocab"))


def run(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> Result:
    base = {"BYTEPAIR_VOCAB_DIR": "", "BYTEPAIR_OFFLINE": "1"}
    return CliRunner().invoke(cli, list(args), input=input, env={**base, **(env or {})})


def ok(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> Result:
    result = run(*args, input=input, env=env)
    assert result.exit_code == 0, result.output
    return result


def _env(**changes: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM", "COLUMNS")}
    env.update({"PYTHONPATH": PYTHONPATH, "BYTEPAIR_OFFLINE": "1", "TERM": "xterm-256color"})
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def on_terminal(code: str, columns: int = 100, **env: str | None) -> bytes:
    """What ``python -c code`` writes to a pseudo-terminal of ``columns`` columns."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=_env(**env),
        close_fds=True,
    )
    os.close(follower)
    out = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(leader, 65536)
        except OSError:  # the other side closed
            break
        if not data:
            break
        out += data
    os.close(leader)
    assert process.wait(timeout=60) == 0, out.decode(errors="replace")
    return out


def in_pipe(code: str, **env: str | None) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, env=_env(**env), timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done


def _command(*args: str) -> str:
    return f"from bytepair.cli import main; main({list(args)!r})"


# ---- colours ----------------------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert _terminal.use_color(_Terminal()) is True
    assert _terminal.use_color(io.StringIO()) is False  # a file or a pipe
    assert _terminal.use_color(None) is False
    monkeypatch.setenv("NO_COLOR", "")  # empty: not set, per no-color.org
    assert _terminal.use_color(_Terminal()) is True
    monkeypatch.setenv("NO_COLOR", "1")
    assert _terminal.use_color(_Terminal()) is False
    assert _terminal.use_color(_Terminal(), True) is True  # --color wins
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "dumb")
    assert _terminal.use_color(_Terminal()) is False
    assert _terminal.use_color(io.StringIO(), True) is True


def test_show_on_a_terminal_honours_no_color_and_term_dumb(vocab: str) -> None:
    code = _command("show", "--vocab-dir", vocab, "--no-table", STRAWBERRY)
    assert b"\x1b[48;5;" in on_terminal(code)
    assert b"\x1b[" not in on_terminal(code, NO_COLOR="1")
    assert b"\x1b[" not in on_terminal(code, TERM="dumb")
    forced = _command("show", "--vocab-dir", vocab, "--no-table", "--color", STRAWBERRY)
    assert b"\x1b[48;5;" in on_terminal(forced, NO_COLOR="1")
    assert b"[ strawberry]" in on_terminal(code, NO_COLOR="1")  # brackets instead


def test_report_headers_bold_only_when_colour_is_wanted(vocab: str, tmp_path: Path) -> None:
    prompt = tmp_path / "p.txt"
    prompt.write_text(STRAWBERRY)
    args = ["report", "--vocab-dir", vocab, "--no-prices", "-q", str(prompt)]
    assert b"\x1b[1m" in on_terminal(_command(*args))
    assert b"\x1b[" not in on_terminal(_command(*args), NO_COLOR="yes")
    assert b"\x1b[" not in in_pipe(_command(*args)).stdout
    assert b"\x1b[1m" in in_pipe(_command(*args, "--color")).stdout


# ---- progress bars ----------------------------------------------------------------------------

_BAR = """
import time
from bytepair._progress import progress_bar
with progress_bar("counting", 100, " items") as advance:
    print("bar" if advance else "no bar", flush=True)
    for _ in range(8):
        time.sleep(0.1)
        if advance:
            advance(12.5)
"""


def test_progress_bar_stays_out_of_pipes_and_logs() -> None:
    done = in_pipe(_BAR)
    assert done.stdout == b"no bar\n"
    assert b"\r" not in done.stderr and done.stderr == b""


def test_progress_bar_on_a_terminal_shows_percent() -> None:
    out = on_terminal(_BAR)
    assert b"bar\r\n" in out and b"100%" in out and b"\r" in out


def test_progress_bar_on_a_zero_column_terminal_is_whole_and_has_no_blank_lines() -> None:
    out = on_terminal(_BAR, columns=0).decode()
    frames = [f for line in out.split("\n") for f in line.split("\r")]
    assert any("counting: 100%" in f and f.endswith("]") for f in frames), frames
    lines = out.replace("\r\n", "\n").split("\n")
    assert "" not in [line.split("\r")[-1] for line in lines[:-1]], lines


def test_progress_bar_written_to_a_file_is_off() -> None:
    from bytepair._progress import progress_bar

    with progress_bar("x", 10, file=io.StringIO()) as advance:
        assert advance is None


def test_train_progress_knows_the_total_from_the_file_sizes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = []
    for i, text in enumerate(["the cat sat on the mat\n" * 40, "a dog and a log\n" * 25]):
        files.append(tmp_path / f"{i}.txt")
        files[-1].write_text(text)
    totals: dict[str, int | None] = {}
    real = train_module.progress_bar

    def recording(desc: str, total: int | None = None, *args: object, **kwargs: object) -> object:
        totals[desc] = total
        return real(desc, total, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(train_module, "progress_bar", recording)
    ok("train", *map(str, files), "--vocab-size", "270", "-o", str(tmp_path / "t.tiktoken"))
    assert totals["counting"] == sum(f.stat().st_size for f in files) > 0
    assert totals["merging"] == 270 - 256
    # A glob is counted too; texts have no size known up front.
    train_module.count_pieces(files=str(tmp_path / "*.txt"), show_progress=True)
    assert totals["counting"] == sum(f.stat().st_size for f in files)
    train_module.count_pieces("some text", show_progress=True)
    assert totals["counting"] is None


# ---- quiet, repeated options, decode's newline -------------------------------------------------


def test_quiet_silences_the_notes_of_report(vocab: str, tmp_path: Path) -> None:
    prompt = tmp_path / "p.txt"
    prompt.write_text(STRAWBERRY)
    loud = ok("report", "--vocab-dir", vocab, "-e", "r50k_base", str(prompt))
    assert "note: no model" in loud.output and "uses r50k_base" in loud.output
    for fmt in ("table", "markdown"):
        args = ["--vocab-dir", vocab, "-e", "r50k_base", "-q", "--format", fmt, str(prompt)]
        quiet = ok("report", *args)
        assert "note" not in quiet.output
        assert "r50k_base" in quiet.stdout  # the report itself is there


def test_quiet_silences_the_file_hint(vocab: str, tmp_path: Path) -> None:
    path = tmp_path / "prompt.txt"
    path.write_text("x")
    assert "note:" in ok("count", "--vocab-dir", vocab, str(path)).stderr
    assert ok("count", "--vocab-dir", vocab, "-q", str(path)).stderr == ""


@pytest.mark.parametrize(
    ("command", "option", "values"),
    [
        ("encode", "-e", ("o200k_base", "cl100k_base")),
        ("count", "-m", ("gpt-4o", "gpt-4")),
        ("decode", "-e", ("o200k_base", "o200k_base")),
        ("encode", "-t", ("a.tiktoken", "b.tiktoken")),
    ],
)
def test_a_repeated_tokenizer_option_is_an_error(
    vocab: str, command: str, option: str, values: tuple[str, str]
) -> None:
    args = [command, "--vocab-dir", vocab]
    for value in values:
        args += [option, value]
    result = run(*args, "1")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"{option}/" in lines[0] and "given 2 times" in lines[0]
    assert f"'{command}' takes one tokenizer" in lines[0]


def test_show_and_report_still_take_several(vocab: str) -> None:
    result = ok("show", "--vocab-dir", vocab, "-e", "o200k_base", "-e", "cl100k_base", "hi")
    assert "o200k_base:" in result.stdout and "cl100k_base:" in result.stdout


def test_decode_ends_with_a_newline_only_on_a_terminal(vocab: str) -> None:
    ids = " ".join(map(str, enc("o200k_base").encode(STRAWBERRY)))
    piped = in_pipe(_command("decode", "--vocab-dir", vocab, ids))
    assert piped.stdout == STRAWBERRY.encode()  # exact bytes in a pipe
    out = on_terminal(_command("decode", "--vocab-dir", vocab, ids))
    assert out == STRAWBERRY.encode() + b"\r\n"  # the pty turns \n into \r\n
    ends_with_newline = " ".join(map(str, enc("o200k_base").encode("line\n")))
    out = on_terminal(_command("decode", "--vocab-dir", vocab, ends_with_newline))
    assert out == b"line\r\n"  # no second newline


# ---- listing what is known ----------------------------------------------------------------------


def test_list_shows_encodings_with_their_files_and_models(vocab: str, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    data = json.loads(
        ok(
            "list", "--vocab-dir", vocab, "--format", "json", env={"BYTEPAIR_CACHE_DIR": str(empty)}
        ).stdout
    )
    by_name = {row["name"]: row for row in data["encodings"]}
    assert set(by_name) >= {"o200k_base", "cl100k_base", "gpt2", "llama3"}
    assert by_name["o200k_base"]["path"] == str(
        shared_path("vocab", "o200k_base", "o200k_base.tiktoken")
    )
    models = {row["model"]: row["encoding"] for row in data["models"]}
    assert models["gpt-4o"] == "o200k_base" and models["gpt-4o-*"] == "o200k_base"
    args = ["encodings", "--vocab-dir", str(empty), "--format", "json"]
    missing = json.loads(ok("list", *args, env={"BYTEPAIR_CACHE_DIR": str(empty)}).stdout)
    assert "models" not in missing
    assert all(row["path"] is None for row in missing["encodings"])
    text = ok("list", "--vocab-dir", str(empty), env={"BYTEPAIR_CACHE_DIR": str(empty)}).stdout
    assert f"cache: {empty}" in text
    assert "llama3" in text and "put tokenizer.model into" in text
    assert "downloads are off" in text  # BYTEPAIR_OFFLINE=1
    assert "gpt-3.5-turbo" in ok("list", "models").stdout


def test_python_dash_m_bytepair() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bytepair", "--help"], capture_output=True, env=_env(), timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert b"Usage: bytepair" in done.stdout or b"Usage: python -m bytepair" in done.stdout
    assert b"count" in done.stdout and b"list" in done.stdout


# ---- truncation -------------------------------------------------------------------------------


def test_encode_truncate_keeps_the_first_tokens_and_says_what_was_cut(vocab: str) -> None:
    o200k = enc("o200k_base")
    ids = o200k.encode(STRAWBERRY)
    result = ok("encode", "--vocab-dir", vocab, "--truncate", "3", STRAWBERRY)
    assert result.stdout == " ".join(map(str, ids[:3])) + "\n"
    assert result.stderr == (
        f'note: "{STRAWBERRY}": cut to 3 tokens, {len(ids) - 3} tokens '
        f"({len(o200k.decode(ids[3:]))} characters) left out\n"
    )
    fits = ok("encode", "--vocab-dir", vocab, "--truncate", "100", STRAWBERRY)
    assert fits.stdout == " ".join(map(str, ids)) + "\n" and fits.stderr == ""
    quiet = ok("encode", "--vocab-dir", vocab, "--truncate", "3", "-q", STRAWBERRY)
    assert quiet.stdout == result.stdout and quiet.stderr == ""
    assert run("encode", "--vocab-dir", vocab, "--truncate", "-1", "x").exit_code == 2


def test_truncate_inside_a_character_says_so(vocab: str, tmp_path: Path) -> None:
    result = ok("encode", "--vocab-dir", vocab, "--truncate", "2", "--format", "json", "a 🍓")
    assert json.loads(result.stdout) == enc("o200k_base").encode("a")
    assert "cut before it" in result.stderr
    out = tmp_path / "ids.npy"
    ok("encode", "--vocab-dir", vocab, "--truncate", "2", "-o", str(out), "a 🍓")
    assert np.load(out).tolist() == enc("o200k_base").encode("a")


def test_show_truncate(vocab: str) -> None:
    result = ok("show", "--vocab-dir", vocab, "--no-color", "--truncate", "4", STRAWBERRY)
    assert "o200k_base: 4 tokens" in result.stdout
    assert "[How][ many][ r]['s]\n" in result.stdout
    assert "note: the text (o200k_base): cut to 4 tokens" in result.stderr
