"""The examples of the README and of the docs/ pages run, and print what the pages show.

Conventions (CONTRIBUTING.md repeats them):

- ```` ```python ```` blocks are doctests (``>>>`` prompts, the output under them; ``...`` in an
  output stands for any text). They run in order in one namespace, as a reader would type them.
- ```` ```console ```` blocks are shell sessions: each ``$ command`` line runs in bash, and the
  lines under it, up to the next ``$``, are what it prints (stdout and stderr together).
- A ```` ```sh ```` block followed by a ```` ```text ```` block is a command and its output, checked
  the same way; its ``pip install`` steps are skipped (the suite runs in an installed package).
  The README's test command is not run here (it would run this very test): ``make readme-test``
  runs it verbatim in CI, and this module checks that the two lines agree.
- In docs/ pages, python blocks without ``>>>`` (a script for a Ray cluster) are shown, not run;
  in the README every python block must have examples.

Everything runs in a temporary folder laid out as a user's: ``../shared`` is the shared data,
``BYTEPAIR_VOCAB_DIR`` its vocabularies, ``roberta-base/``, ``qwen2/`` and ``llama2/`` those
models' files;
``bytepair`` runs the console entry point named in ``pyproject.toml`` of this checkout.
"""

from __future__ import annotations

import doctest
import itertools
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT, shared_path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

README = ROOT / "README.md"
DOC_PAGES = sorted(p for p in (ROOT / "docs").rglob("*.md") if "_ext" not in p.parts)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```[ \t]*$", re.M | re.S)
CHECKER_FLAGS = doctest.ELLIPSIS
# A tqdm line: redrawn in place (carriage returns), "[elapsed<left, rate]" or "[elapsed, rate]".
PROGRESS_BAR = re.compile(r"\r|\[\d+:\d\d(<[^\]]*)?, [^\]]*\]")
# Folders of the shared vocabularies that the README uses as "a model's own files".
MODEL_FOLDERS = ("roberta-base", "qwen2", "llama2")
README_TEST_COMMAND = 'pip install -e ".[dev]" && cargo test && python -m pytest'


@dataclass(frozen=True)
class Block:
    lang: str
    text: str
    line: int  # the README line of the block's first content line


def readme_blocks(page: Path = README) -> list[Block]:
    source = page.read_text("utf-8")
    return [
        Block(m.group(1), m.group(2), source.count("\n", 0, m.start(2)) + 1)
        for m in FENCE.finditer(source)
    ]


@pytest.fixture
def user_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder beside ``shared/``, with the models' files, a ``bytepair`` command on PATH."""
    shared = shared_path()
    (tmp_path / "shared").symlink_to(shared, target_is_directory=True)
    work = tmp_path / "work"
    work.mkdir()
    for name in MODEL_FOLDERS:
        (work / name).symlink_to(shared_path("vocab", name), target_is_directory=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    command = bin_dir / "bytepair"
    python = shlex.quote(sys.executable)
    command.write_text(f'#!/bin/sh\nexec {python} -c {_entry_point()} "$@"\n')
    command.chmod(0o755)
    monkeypatch.chdir(work)
    monkeypatch.setenv("BYTEPAIR_VOCAB_DIR", str(shared / "vocab"))
    monkeypatch.setenv("BYTEPAIR_OFFLINE", "1")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("COLUMNS", "100")
    return work


def _entry_point() -> str:
    """``python -c`` code that runs the ``bytepair`` script of pyproject.toml."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["scripts"]
    module, function = scripts["bytepair"].split(":")
    code = f"import sys; from {module} import {function}; sys.argv[0] = 'bytepair'; {function}()"
    return shlex.quote(code)


def run_shell(command: str, cwd: Path) -> str:
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )
    # A progress bar (shown when a step takes over half a second, as on a loaded machine) is not
    # part of the shown output; output without a final newline reads as if it had one.
    lines: list[str] = []
    after_bar = True  # also drops blank lines at the start
    for line in done.stdout.split("\n"):
        if PROGRESS_BAR.search(line) or (after_bar and not line):
            after_bar = True  # a closed bar leaves an empty line behind
            continue
        after_bar = False
        lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    return "".join(f"{line}\n" for line in lines)


def assert_output(where: str, command: str, want: str, got: str) -> None:
    if not doctest.OutputChecker().check_output(want, got, CHECKER_FLAGS):
        raise AssertionError(
            f"{where}: `{command}` printed\n{got}\nbut the README shows\n{want}"
            "(`...` in the README matches any text)"
        )


def console_steps(block: Block) -> list[tuple[int, str, str]]:
    """``(line, command, expected output)`` for each ``$`` line of a console block."""
    steps: list[tuple[int, str, str]] = []
    for offset, line in enumerate(block.text.splitlines(keepends=True)):
        if line.startswith("$ "):
            steps.append((block.line + offset, line[2:].strip(), ""))
        else:
            assert steps, f"README.md:{block.line}: a console block starts with `$ command`"
            at, command, want = steps[-1]
            steps[-1] = (at, command, want + line)
    return steps


def run_doctests(page: Path, blocks: list[Block], *, every_block: bool) -> None:
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=CHECKER_FLAGS)
    globs: dict[str, object] = {"__name__": page.stem}
    name = str(page.relative_to(ROOT))
    for block in blocks:
        test = parser.get_doctest(block.text, globs, name, str(page), block.line - 1)
        if not test.examples:
            assert not every_block, f"{name}:{block.line}: a python block without `>>>` examples"
            continue
        report: list[str] = []
        result = runner.run(test, out=report.append, clear_globs=False)
        assert result.failed == 0, "".join(report)
        globs = test.globs  # DocTest runs on a copy: the next block sees what this one made


def run_console(page: Path, blocks: list[Block], cwd: Path) -> None:
    name = str(page.relative_to(ROOT))
    for block in blocks:
        for line, command, want in console_steps(block):
            assert_output(f"{name}:{line}", command, want, run_shell(command, cwd))


def test_python_examples(user_folder: Path) -> None:
    blocks = [b for b in readme_blocks() if b.lang == "python"]
    assert blocks, "the README has no Python example"
    run_doctests(README, blocks, every_block=True)


def test_console_examples(user_folder: Path) -> None:
    blocks = [b for b in readme_blocks() if b.lang == "console"]
    assert blocks, "the README has no console example"
    run_console(README, blocks, user_folder)


@pytest.mark.slow
@pytest.mark.parametrize("page", DOC_PAGES, ids=lambda p: str(p.relative_to(ROOT / "docs")))
def test_docs_examples(page: Path, user_folder: Path) -> None:
    blocks = readme_blocks(page)
    run_doctests(page, [b for b in blocks if b.lang == "python"], every_block=False)
    run_console(page, [b for b in blocks if b.lang == "console"], user_folder)


def test_quick_start_commands(user_folder: Path) -> None:
    blocks = readme_blocks()
    commands = [(i, b) for i, b in enumerate(blocks) if b.lang == "sh"]
    assert [b.text.strip() for _, b in commands][1:] == [README_TEST_COMMAND]
    (i, main_job), _ = commands
    assert i == 0, "the main job is the README's first code block"
    output = blocks[i + 1]
    assert output.lang == "text", f"README.md:{output.line}: the main job's output follows it"
    steps = [s for s in main_job.text.strip().split(" && ") if not s.startswith("pip install")]
    assert steps, "the main job does more than install"
    command = " && ".join(steps)
    assert_output(
        f"README.md:{main_job.line}", command, output.text, run_shell(command, user_folder)
    )


def test_readme_test_command_is_what_ci_runs() -> None:
    blocks = readme_blocks()
    assert [b.text.strip() for b in blocks if b.lang == "sh"][1] == README_TEST_COMMAND
    recipe = (ROOT / "Makefile").read_text("utf-8")
    assert f"\t{README_TEST_COMMAND}\n" in recipe, "make readme-test must run the README's command"
    assert "make ci" in (ROOT / ".ci" / "run").read_text("utf-8")


def test_every_code_block_is_checked() -> None:
    langs = [b.lang for b in readme_blocks()]
    unchecked = sorted(set(langs) - {"python", "console", "sh", "text"})
    assert unchecked == [], f"README code blocks no test runs: {unchecked}"
    # A text block is only ever the shown output of the command block before it.
    for before, lang in itertools.pairwise(langs):
        if lang == "text":
            assert before == "sh", "a text block follows the command whose output it is"
