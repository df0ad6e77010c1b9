"""Mistakes that used to give a silently wrong result, and now say what is wrong (issue 30,
points 6 to 11): pattern names, folders without their pre-tokenizer, tokenizer.json settings,
paths that mean folders, outputs that cannot be written, file modes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import tokenizers
from click.testing import CliRunner, Result
from formats_support import qwen2_tokenizer

import bytepair
from bytepair.cli import cli
from bytepair.patterns import resolve_pattern
from bytepair.reference import ReferenceEncoding

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


@pytest.mark.parametrize(
    ("text", "where"), [("abc 12 def", 'byte offset 3 (" 12 ")'), ("x!", 'byte offset 1 ("!")')]
)
def test_text_the_pattern_leaves_unmatched_is_an_error_naming_it(text: str, where: str) -> None:
    # tiktoken drops it: encode("abc 12 def") with [a-z]+ is the ids of "abcdef".
    enc = bytepair.Encoding("x", pat_str="[a-z]+", mergeable_ranks=BYTES, special_tokens={})
    calls = [
        lambda: enc.encode(text),
        lambda: enc.encode_ordinary(text),
        lambda: enc.count(text),
        lambda: enc.encode_batch(["ok", text]),
        lambda: enc.encode_with_offsets(text),
        lambda: bytepair.train([text] * 5, vocab_size=258, pattern="[a-z]+"),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=re.escape(where)):
            call()
    assert enc.encode("abc") == [97, 98, 99]
    ref = ReferenceEncoding("x", pat_str="[a-z]+", mergeable_ranks=BYTES, special_tokens={})
    with pytest.raises(ValueError, match="does not match the text at character"):
        ref.encode(text)


def test_cli_show_and_train_refuse_a_pattern_that_drops_text(tmp_path: Path) -> None:
    vocab = str(shared_path("vocab", "r50k_base", "r50k_base.tiktoken"))
    line = one_line_error(run("show", "-t", vocab, "--pattern", "[a-z]+", "hello world"))
    assert 'does not match the text at byte offset 5 (" ")' in line
    corpus = tmp_path / "emma.txt"
    corpus.write_text("the cat sat on the mat\n" * 50)
    out = tmp_path / "x.tiktoken"
    result = run("train", str(corpus), "--vocab-size", "300", "--pattern", "[a-z]+", "-o", str(out))
    assert "does not match the text at byte offset" in one_line_error(result)
    assert not out.exists()


# ---- 7. vocab.json + merges.txt do not carry their pre-tokenizer -------------------------


def test_a_known_vocabulary_brings_its_pre_tokenizer() -> None:
    # Qwen2's files with GPT-2's ByteLevel gave other ids (lapi.h: 7,109 tokens, not 5,706).
    text = shared_path("corpus", "code", "c_lua_5.4.4_src.c").read_text("utf-8")[:20000]
    text += " 12345 naïve café"
    enc = bytepair.Encoding.from_file(shared_path("vocab", "qwen2"))
    assert enc.encode_ordinary(text) == qwen2_tokenizer().encode(text).ids


def test_an_unknown_pair_needs_its_pattern(tmp_path: Path) -> None:
    folder = tmp_path / "mymodel"
    folder.mkdir()
    vocab = json.loads(shared_path("vocab", "qwen2", "vocab.json").read_text("utf-8"))
    (folder / "vocab.json").write_text(json.dumps(vocab, indent=1), "utf-8")  # another hash
    (folder / "merges.txt").write_bytes(shared_path("vocab", "qwen2", "merges.txt").read_bytes())
    for load in (
        lambda: bytepair.Encoding.from_file(folder, normalizer="NFC"),
        lambda: bytepair.Encoding.from_hf_files(folder / "vocab.json", folder / "merges.txt"),
    ):
        with pytest.raises(ValueError, match="do not say how text is pre-tokenized") as err:
            load()
        assert "pat_str=" in str(err.value) and str(folder) in str(err.value)
    enc = bytepair.Encoding.from_file(folder, pat_str="qwen2", normalizer="NFC")
    text = "hello world 12345 naïve"
    assert enc.encode_ordinary(text) == qwen2_tokenizer().encode(text).ids


# ---- 9. a trailing separator or an existing folder means a folder -------------------------


def byte_encoding(name: str = "bytes") -> bytepair.Encoding:
    return bytepair.Encoding(name, pat_str="gpt2", mergeable_ranks=BYTES, special_tokens={})


@pytest.mark.parametrize(
    ("fmt", "file"), [("tiktoken", "bytes.tiktoken"), ("hf", "tokenizer.json")]
)
def test_save_to_a_path_ending_in_a_separator_writes_into_that_folder(
    fmt: str, file: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    written = byte_encoding().save(f"{out}/", format=fmt)  # type: ignore[arg-type]
    assert written == [out / file] and out.is_dir()
    options = {"pat_str": "gpt2"} if fmt == "tiktoken" else {}
    assert bytepair.Encoding.from_file(written[0], **options).encode("hi") == [104, 105]
    # An existing folder, without the separator, is a folder too.
    assert byte_encoding().save(out, format=fmt) == [out / file]  # type: ignore[arg-type]


def test_train_into_a_new_folder(tmp_path: Path) -> None:
    corpus = tmp_path / "emma.txt"
    corpus.write_text("the cat sat on the mat\n" * 50)
    out = tmp_path / "newdir"
    result = run(*result_args(corpus, f"{out}/"))
    assert result.exit_code == 0, result.output
    assert (out / "newdir.tiktoken").is_file()


def result_args(corpus: Path, output: str) -> list[str]:
    return ["train", str(corpus), "--vocab-size", "260", "-q", "--format", "tiktoken", "-o", output]


def test_a_failed_convert_leaves_nothing_behind(tmp_path: Path) -> None:
    # Falcon merges by pair priority: it cannot be written as GPT-2 ranks.
    source = str(shared_path("vocab", "falcon", "tokenizer.json"))
    out = tmp_path / "a" / "b"
    result = run("convert", source, str(out), "--to", "gpt2")
    assert result.exit_code != 0
    assert list(tmp_path.iterdir()) == []


# ---- 11. an output that cannot be written fails before the work --------------------------


def test_train_into_an_unwritable_place_fails_first_naming_the_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "emma.txt"
    corpus.write_text("the cat sat on the mat\n" * 50)
    blocker = tmp_path / "ro"
    blocker.write_text("a file where a folder should be")
    target = blocker / "x.tiktoken"

    def no_training(*args: object, **kwargs: object) -> None:
        raise AssertionError("trained although the output cannot be written")

    monkeypatch.setattr("bytepair.cli.vocab.train_encoding", no_training)
    line = one_line_error(run(*result_args(corpus, str(target))))
    assert str(target) in line and ".tmp" not in line


def test_check_writable_names_the_target_of_a_read_only_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bytepair.formats import targets

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    # Root may write anywhere; the refusal a read-only folder gives is simulated.
    monkeypatch.setattr(targets.tempfile, "mkstemp", refuse)
    target = tmp_path / "ro" / "x.tiktoken"
    with pytest.raises(PermissionError) as err:
        targets.check_writable([target])
    assert err.value.filename == str(target) and "Permission denied" in str(err.value)


def test_report_plot_into_an_unwritable_place_fails_before_printing(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    prompt = tmp_path / "p.txt"
    prompt.write_text("hello world")
    blocker = tmp_path / "f"
    blocker.write_text("")
    vocab = str(shared_path("vocab"))
    result = run(
        "report",
        "--vocab-dir",
        vocab,
        "-e",
        "cl100k_base",
        str(prompt),
        "--plot",
        str(blocker / "x.png"),
    )
    assert result.stdout == ""
    assert str(blocker / "x.png") in one_line_error(result)


# ---- 10. saves respect the umask ----------------------------------------------------------


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600)])
def test_saves_respect_the_umask(umask: int, mode: int, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    script = (
        "import os, sys, bytepair\n"
        "enc = bytepair.Encoding('b', pat_str='gpt2',"
        " mergeable_ranks={bytes([b]): b for b in range(256)}, special_tokens={})\n"
        "for fmt in ('tiktoken', 'hf', 'gpt2'):\n"
        "    for p in enc.save(sys.argv[1] + '/' + fmt + '/', format=fmt):\n"
        "        print(oct(os.stat(p).st_mode & 0o777))\n"
    )
    # The umask of the process, as a shell sets it before the program starts.
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=lambda: os.umask(umask),
    )
    assert out.stdout.split() == [oct(mode)] * 4


# ---- 8. tokenizer.json settings that change ids -----------------------------------------


def test_padding_and_truncation_are_never_dropped_silently(tmp_path: Path) -> None:
    path = shared_path("vocab", "smollm", "tokenizer.json")
    with pytest.raises(ValueError, match=r"padding: .*ignore_settings=\('padding',\)") as err:
        bytepair.Encoding.from_file(path)
    assert str(path) in str(err.value) and "192" in str(err.value)
    with pytest.raises(ValueError, match=r"truncation: .*max_length"):
        bytepair.Encoding.from_file(path, ignore_settings=("padding",))
    with pytest.raises(ValueError, match="ignore_settings: unknown"):
        bytepair.Encoding.from_file(path, ignore_settings=("paddin",))
    # The folder finds the same tokenizer.json.
    with pytest.raises(ValueError, match="padding"):
        bytepair.Encoding.from_file(path.parent)
    # Dropped on request: the ids of tokenizers without them.
    enc = bytepair.Encoding.from_file(path, ignore_settings=("padding", "truncation"))
    tk = tokenizers.Tokenizer.from_file(str(path))
    text = "word 123 " * 150
    assert len(tk.encode(text).ids) == 192 != len(enc.encode(text))
    tk.no_padding()
    tk.no_truncation()
    assert enc.encode(text) == tk.encode(text).ids
    # A file with them set to null reads as before.
    spec = json.loads(path.read_text("utf-8"))
    spec["padding"] = spec["truncation"] = None
    clean = tmp_path / "tokenizer.json"
    clean.write_text(json.dumps(spec), "utf-8")
    assert bytepair.Encoding.from_file(clean).encode(text) == enc.encode(text)


def test_cli_drops_padding_and_truncation_only_when_told() -> None:
    path = str(shared_path("vocab", "smollm", "tokenizer.json"))
    line = one_line_error(run("count", "-t", path, "word " * 300))
    assert "padding: tokenizers pads" in line and "pass --ignore-setting padding" in line
    line = one_line_error(run("count", "-t", path, "--ignore-setting", "padding", "word " * 300))
    assert "pass --ignore-setting truncation" in line
    ignored = ["--ignore-setting", "padding", "--ignore-setting", "truncation"]
    result = run("count", "-t", path, *ignored, "word " * 300)
    assert result.exit_code == 0, result.output
    enc = bytepair.Encoding.from_file(path, ignore_settings=("padding", "truncation"))
    assert result.stdout.split()[0] == str(enc.count("word " * 300)) != "192"
    # Not for a file without such settings; without the flag such a file reads as before.
    tiktoken_file = str(shared_path("vocab", "r50k_base", "r50k_base.tiktoken"))
    line = one_line_error(run("count", "-t", tiktoken_file, "--ignore-setting", "padding", "hi"))
    assert "ignore_settings applies to a tokenizer.json" in line
    result = run("count", "-t", tiktoken_file, "hello world")
    assert result.exit_code == 0 and result.stdout.split()[0] == "2", result.output
