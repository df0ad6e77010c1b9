"""Mistakes that used to give a silently wrong result, and now say what is wrong (issue 30,
points 6 to 11): pattern names, folders without their pre-tokenizer, tokenizer.json settings,
paths that mean folders, outputs that cannot be written, file modes."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import bytepair
from bytepair.cli import cli
from bytepair.patterns import resolve_pattern

from conftest import shared_path

BYTES = {bytes([b]): b for b in range(256)}


def run(*args: str) -> Result:
    env = {"BYTEPAIR_VOCAB_DIR": "", "BYTEPAIR_OFFLINE": "1"}
    return CliRunner().invoke(cli, list(args), env=env)


def one_line_error(result: Result) -> str:
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("Error: ")
    return line


# ---- 6. unknown pattern names -----------------------------------------------------------


@pytest.mark.parametrize("name", ["cl100K", "nope", "o200k-base", "GPT2"])
def test_a_name_like_pattern_that_is_no_name_is_an_error(name: str) -> None:
    with pytest.raises(ValueError, match="unknown pattern name") as err:
        resolve_pattern(name)
    assert "cl100k_base" in str(err.value)  # the names are listed
    with pytest.raises(ValueError, match="unknown pattern name"):
        bytepair.Encoding("x", pat_str=name, mergeable_ranks=BYTES, special_tokens={})
    with pytest.raises(ValueError, match="unknown pattern name"):
        bytepair.train("the cat sat " * 20, vocab_size=260, pattern=name)


def test_the_error_suggests_the_name_meant() -> None:
    for typo, meant in [("cl100K", "cl100k"), ("O200K_BASE", "o200k_base"), ("gtp2", "gpt2")]:
        with pytest.raises(ValueError, match=f"did you mean '{meant}'"):
            resolve_pattern(typo)


def test_names_and_regexes_still_work() -> None:
    enc = bytepair.Encoding("x", pat_str="gpt2", mergeable_ranks=BYTES, special_tokens={})
    assert enc.pat_str == bytepair.patterns.GPT2 and enc.encode("hi") == [104, 105]
    assert resolve_pattern(r"\S+|\s+") == r"\S+|\s+"


def test_cli_show_and_train_refuse_an_unknown_pattern_name(tmp_path: Path) -> None:
    vocab = str(shared_path("vocab", "r50k_base", "r50k_base.tiktoken"))
    line = one_line_error(run("show", "-t", vocab, "--pattern", "cl100K", "hello world"))
    assert "did you mean 'cl100k'?" in line
    corpus = tmp_path / "emma.txt"
    corpus.write_text("the cat sat on the mat\n" * 50)
    out = tmp_path / "x.tiktoken"
    result = run("train", str(corpus), "--vocab-size", "300", "--pattern", "nope", "-o", str(out))
    assert "unknown pattern name 'nope'" in one_line_error(result)
    assert not out.exists()
