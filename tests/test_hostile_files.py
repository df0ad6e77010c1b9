"""Malformed and hostile vocabulary files: a clear error, fast, in bounded memory; atomic saves.

Malformed: a bad line, a bad id, a merge naming an unknown token, truncated JSON: a ValueError
that names the file and the line or JSON path; never a panic, never a half-built encoder.
Hostile: enormous lines, a huge claimed rank or id, binary junk, deeply nested or huge JSON.
Memory is the peak resident size of the load alone (Linux: the peak is reset through
``/proc/self/clear_refs``; elsewhere the memory checks are skipped, the error checks are not).
Also here: format detection by content, and saves that leave the old files whole on failure.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import random
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair import Encoding, formats, registry
from bytepair.bytes_unicode import encode_bytes
from bytepair.formats import detect

from conftest import shared_path

MB = 1 << 20
# A valid .tiktoken file: the 256 single bytes, one per line, each ranked by its value.
TIKTOKEN_LINES = [f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(256)]
VALID = "".join(f"{line}\n" for line in TIKTOKEN_LINES)


def _status(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            found = re.search(rf"{field}:\s+(\d+)", f.read())
    except OSError:
        return None
    return int(found.group(1)) * 1024 if found else None


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def peak_growth(call: Callable[[], Any]) -> tuple[BaseException | None, float, int | None]:
    """Run ``call``: the exception it raised (or None), seconds taken, peak memory growth."""
    can_measure = _reset_peak()
    before = _status("VmRSS")
    start = time.monotonic()
    error: BaseException | None = None
    try:
        call()
    except Exception as e:
        error = e
    seconds = time.monotonic() - start
    after = _status("VmHWM")
    if not can_measure or before is None or after is None:
        return error, seconds, None
    return error, seconds, after - before


def write(path: Path, content: str | bytes) -> Path:
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def assert_fails_cleanly(
    call: Callable[[], Any], match: str, *, max_growth: float = 64 * MB, max_seconds: float = 10
) -> None:
    error, seconds, growth = peak_growth(call)
    if error is not None and not isinstance(error, ValueError):
        raise error
    assert isinstance(error, ValueError), f"expected ValueError({match!r}), got success"
    assert re.search(match, str(error)), str(error)
    assert seconds < max_seconds, f"took {seconds:.1f} s"
    if growth is not None:
        assert growth < max_growth, f"peak grew by {growth / MB:.0f} MB"


def _expect_error(path: Path, *needles: str, **kwargs: Any) -> None:
    with pytest.raises(ValueError) as info:
        Encoding.from_file(path, **kwargs)
    message = str(info.value)
    for needle in (str(path), *needles):
        assert needle in message, message


# ---- .tiktoken files ---------------------------------------------------------------------


def _tiktoken_lines() -> list[bytes]:
    return [line.encode() for line in TIKTOKEN_LINES]


def load_both(path: Path) -> list[Callable[[], Any]]:
    return [
        lambda: Encoding.from_tiktoken_file(path, pat_str="gpt2"),
        lambda: formats.load(path, pat_str="gpt2"),
    ]


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (VALID + "YWI= 268435000\n", "ids must be nearly contiguous"),  # one huge rank
        (VALID + "YWI= 100000000\n", "ids must be nearly contiguous"),
        (VALID + "YWI= 4294967295\n", "too large"),
        (VALID + "YWI= 99999999999999999999\n", "line 257: the rank is not a non-negative integer"),
        (VALID + "YWI= -1\n", "line 257: the rank is not"),
        (VALID + "YWI= 1e9\n", "line 257: the rank is not"),
        (VALID + "YWI= 5\n", "rank 5 is given to two tokens"),
        (VALID + "YQ== 300\n", "has two ranks"),
        (VALID.replace("AA== 0\n", ""), "0x00 is not a token"),
        ("", "holds no tokens|empty"),
        ("\n\n\n", "holds no tokens|empty"),
        (b"\x00" * MB, "no space|unrecognised"),
        (VALID.encode("utf-16"), "bad base64|merges file|unrecognised"),
        (b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 100, "bad base64|no space|unrecognised"),
    ],
    ids=[
        "huge-rank",
        "rank-1e8",
        "u32-max-rank",
        "rank-over-u64",
        "negative-rank",
        "float-rank",
        "duplicate-rank",
        "duplicate-token",
        "missing-byte",
        "empty",
        "blank",
        "nul-bytes",
        "utf16",
        "png",
    ],
)
def test_hostile_tiktoken_files(tmp_path: Path, content: str | bytes, match: str) -> None:
    path = write(tmp_path / "hostile.tiktoken", content)
    for loader in load_both(path):
        assert_fails_cleanly(loader, match)


def test_binary_junk(tmp_path: Path) -> None:
    rng = random.Random(0)
    for i in range(20):
        data = bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 4000)))
        path = write(tmp_path / f"junk{i}.tiktoken", data)
        for loader in load_both(path):
            assert_fails_cleanly(loader, ".")


def test_enormous_line(tmp_path: Path) -> None:
    # 40 MB of base64 on one line: parsed (it is a token), then rejected; memory stays a small
    # multiple of the file.
    size = 40 * MB
    path = write(tmp_path / "line.tiktoken", "A" * size + " 0\n")
    for loader in load_both(path):
        assert_fails_cleanly(loader, "0x00 is not a token", max_growth=6 * size)
    junk = write(tmp_path / "junk-line.tiktoken", "!" * size + " 0\n")
    for loader in load_both(junk):
        assert_fails_cleanly(loader, "bad base64|unrecognised|merges", max_growth=3 * size)


@pytest.mark.parametrize(
    ("line", "needle"),
    [(b"!!!! 256", "bad base64"), (b"YWI= x", "not a non-negative integer"), (b"YWI=", "")],
)
def test_bad_tiktoken_line(line: bytes, needle: str, tmp_path: Path) -> None:
    path = tmp_path / "v.tiktoken"
    path.write_bytes(b"\n".join([*_tiktoken_lines(), line]) + b"\n")
    with pytest.raises(ValueError) as info:
        Encoding.from_tiktoken_file(path, pat_str="gpt2")
    assert str(path) in str(info.value) and "line 257" in str(info.value)
    assert needle in str(info.value)


def test_tiktoken_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "v.tiktoken"
    path.write_bytes(b"\n".join([*_tiktoken_lines(), b"YWI= 255"]) + b"\n")
    _expect_error(path, "255", pat_str="gpt2")


def test_unknown_tiktoken_needs_a_pattern(tmp_path: Path) -> None:
    path = tmp_path / "v.tiktoken"
    path.write_bytes(b"\n".join(_tiktoken_lines()) + b"\n")
    _expect_error(path, "pat_str")
    assert Encoding.from_file(path, pat_str="gpt2").encode("ab") == [97, 98]


# ---- JSON and merges files ---------------------------------------------------------------


def byte_vocab() -> dict[str, int]:
    """A vocab.json of the 256 single bytes (as GPT-2 characters) and ``ab``."""
    return {encode_bytes(bytes([b])): b for b in range(256)} | {"ab": 256}


def _tiny_vocab() -> dict[str, int]:
    return byte_vocab() | {"abc": 257}


def write_pair(
    folder: Path,
    vocab: Any,
    merges: str = "#version: 0.2\na b\n",
    names: tuple[str, str] = ("vocab.json", "merges.txt"),
) -> Path:
    """A vocabulary file and its merges file in ``folder`` (``vocab`` as JSON or as text)."""
    folder.mkdir(exist_ok=True)
    write(folder / names[0], vocab if isinstance(vocab, str) else json.dumps(vocab))
    write(folder / names[1], merges)
    return folder


def _tokenizer_json(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "version": "1.0",
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "vocab": _tiny_vocab(), "merges": ["a b", "ab c"]},
    }
    data.update(changes)
    return data


def test_huge_json_string(tmp_path: Path) -> None:
    size = 50 * MB
    text = '{"model": {"type": "BPE", "vocab": {"' + "a" * size + '": 0}, "merges": []}}'
    path = write(tmp_path / "tokenizer.json", text)
    assert_fails_cleanly(lambda: formats.load(path), ".", max_growth=8 * size)


def test_json_ids_out_of_range(tmp_path: Path) -> None:
    cases: list[tuple[object, str]] = [
        (-1, "not an integer"),
        ("3", "not an integer"),
        (True, "not an integer"),
        (2**32 - 1, "too large|not an integer"),
    ]
    for i, (bad, match) in enumerate(cases):
        folder = write_pair(tmp_path / f"v{i}", byte_vocab() | {"abc": bad})
        assert_fails_cleanly(lambda folder=folder: formats.load(folder), match)
    nan = tmp_path / "nan"
    write_pair(nan, json.dumps(byte_vocab())[:-1] + ', "abc": NaN}')
    assert_fails_cleanly(lambda: formats.load(nan), "not an integer")


def test_json_id_beyond_64_bits(tmp_path: Path) -> None:
    folder = write_pair(tmp_path / "v", byte_vocab() | {"abc": 2**70})
    assert_fails_cleanly(lambda: formats.load(folder), "too large|not an integer")
    folder = write_pair(tmp_path / "w", byte_vocab() | {"abc": 2**28})
    assert_fails_cleanly(lambda: formats.load(folder), "too large|not an integer")


def test_json_huge_sparse_id(tmp_path: Path) -> None:
    # 2**24 ids: a few hundred MB where the bug is, an error in microseconds where it is fixed.
    folder = write_pair(tmp_path / "v", byte_vocab() | {"abc": 2**24})
    assert_fails_cleanly(lambda: formats.load(folder), "nearly contiguous|too large")


def test_deeply_nested_json(tmp_path: Path) -> None:
    path = write(tmp_path / "tokenizer.json", '{"a":' * 100_000 + "1" + "}" * 100_000)
    assert_fails_cleanly(lambda: formats.load(path), "nest|deep|JSON")


def test_nested_json_arrays_are_rejected(tmp_path: Path) -> None:
    path = write(tmp_path / "deep.json", "[" * 100_000 + "]" * 100_000)
    assert_fails_cleanly(lambda: formats.load(path), ".")


def test_truncated_json_names_line_and_column(tmp_path: Path) -> None:
    text = shared_path("vocab", "gpt2-hf", "gpt2.json").read_text("utf-8")
    path = tmp_path / "tokenizer.json"
    path.write_text(text[: len(text) // 2], "utf-8")
    with pytest.raises(ValueError, match=r"tokenizer\.json:\d+:\d+: not valid JSON"):
        Encoding.from_tokenizer_json(path)


@pytest.mark.parametrize(
    ("merges", "needle"),
    [
        (["a b", "ab q"], "model.merges[1]"),
        (["a b", "abc d"], "model.merges[1]"),
        (["a b c"], "model.merges[0]"),
        ([["a", "b"], 7], "model.merges[1]"),
    ],
)
def test_bad_merges_name_the_json_path(merges: list[Any], needle: str, tmp_path: Path) -> None:
    data = _tokenizer_json()
    data["model"]["merges"] = merges
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), "utf-8")
    _expect_error(path, needle)


def test_bad_vocab_entries(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    data = _tokenizer_json()
    data["model"]["vocab"]["abc"] = 256  # two tokens with id 256
    path.write_text(json.dumps(data), "utf-8")
    _expect_error(path, "model.vocab", "id 256")
    for bad in (-1, 2**40, True, "7"):
        data["model"]["vocab"]["abc"] = bad
        path.write_text(json.dumps(data), "utf-8")
        _expect_error(path, "model.vocab", repr(bad))
    # A repeated key, which json.load would silently collapse.
    text = json.dumps(_tokenizer_json()).replace('"ab": 256', '"ab": 256, "ab": 258')
    path.write_text(text, "utf-8")
    _expect_error(path, "'ab' appears twice")
    data = _tokenizer_json(added_tokens=[{"id": "x", "content": "<s>"}])
    path.write_text(json.dumps(data), "utf-8")
    _expect_error(path, "added_tokens[0].id")


@pytest.mark.parametrize("names", [("vocab.json", "merges.txt"), ("encoder.json", "vocab.bpe")])
def test_merge_naming_an_unknown_token(names: tuple[str, str], tmp_path: Path) -> None:
    folder = write_pair(tmp_path / "v", _tiny_vocab(), "#version: 0.2\na b\nab q\n", names)
    _expect_error(folder / names[1], "line 3", '"q"')


@pytest.mark.parametrize("names", [("vocab.json", "merges.txt"), ("encoder.json", "vocab.bpe")])
def test_duplicate_ids(names: tuple[str, str], tmp_path: Path) -> None:
    vocab = _tiny_vocab() | {"abc": 256}
    folder = write_pair(tmp_path / "v", vocab, "a b\nab c\n", names)
    _expect_error(folder / names[0], "id 256", "'ab'", "'abc'")


@pytest.mark.parametrize("names", [("vocab.json", "merges.txt"), ("encoder.json", "vocab.bpe")])
def test_malformed_merge_line(names: tuple[str, str], tmp_path: Path) -> None:
    folder = write_pair(tmp_path / "v", _tiny_vocab(), "a b\nabc\n", names)
    _expect_error(folder / names[1], "line 2", "two tokens")


def test_gpt2_merges_out_of_rank_order(tmp_path: Path) -> None:
    folder = write_pair(tmp_path / "v", _tiny_vocab(), "ab c\na b\n", ("encoder.json", "vocab.bpe"))
    _expect_error(folder / "vocab.bpe", "line 2", "order of the ids")


def test_gpt2_vocabulary_missing_a_byte(tmp_path: Path) -> None:
    vocab = _tiny_vocab()
    del vocab[encode_bytes(b"\x00")]
    folder = write_pair(tmp_path / "v", vocab, "a b\n", ("encoder.json", "vocab.bpe"))
    _expect_error(folder / "encoder.json", "single-byte")


# ---- any format: empty files, garbage, detection by content ------------------------------


@pytest.mark.parametrize(
    "name", ["tokenizer.json", "vocab.json", "x.tiktoken", "tokenizer.model", "merges.txt"]
)
def test_empty_files(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_bytes(b"")
    _expect_error(path, "empty")


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.binary(max_size=300)
    | st.builds(lambda s: s.encode("utf-8"), st.text(max_size=200))
    | st.builds(
        lambda lines: b"\n".join(lines),
        st.lists(st.sampled_from([b"YQ== 0", b"Yg== 1", b"!! 2", b"a b", b"{", b"#version: 0.2"])),
    ),
    name=st.sampled_from(["tokenizer.json", "vocab.json", "x.tiktoken", "merges.txt", "x.model"]),
)
def test_garbage_is_a_value_error(data: bytes, name: str, tmp_path: Path) -> None:
    folder = tmp_path / "g"
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    path = folder / name
    path.write_bytes(data)
    (folder / ("merges.txt" if name != "merges.txt" else "vocab.json")).write_bytes(data)
    pat_str = None if name in ("tokenizer.json", "vocab.json", "merges.txt") else "gpt2"
    # Loading garbage may succeed (a valid tiny vocabulary) or fail, but only with ValueError.
    with contextlib.suppress(ValueError):
        formats.load(path, pat_str=pat_str)


def test_detection_by_content(tmp_path: Path) -> None:
    vocab = shared_path("vocab")
    assert detect(vocab / "llama3" / "tokenizer.model").kind == "tiktoken"
    assert detect(vocab / "gpt2-hf" / "gpt2.json").kind == "tokenizer-json"
    assert detect(vocab / "gpt2-hf" / "vocab.json").kind == "hf-files"
    assert detect(vocab / "gpt2-hf" / "merges.txt").kind == "hf-files"
    assert detect(vocab / "gpt2").kind == "gpt2"
    assert detect(vocab / "qwen2").kind == "hf-files"
    assert detect(vocab / "smollm").kind == "tokenizer-json"  # tokenizer.json wins in a folder
    # Names do not matter: a tokenizer.json under another name, a tiktoken file as ".txt".
    renamed = tmp_path / "something.txt"
    renamed.write_bytes((vocab / "cl100k_base" / "cl100k_base.tiktoken").read_bytes())
    enc = Encoding.from_file(renamed)
    assert enc.name == "cl100k_base" and enc.encode("hello world") == [15339, 1917]
    llama = Encoding.from_file(vocab / "llama3" / "tokenizer.model")
    assert llama.name == "llama3" and llama.encode("This is a test sentence.") == [
        2028,
        374,
        264,
        1296,
        11914,
        13,
    ]
    with pytest.raises(ValueError, match="unrecognised vocabulary format"):
        bad = tmp_path / "bad.bin"
        bad.write_bytes(b"\x00\x01 not a vocabulary\n")
        Encoding.from_file(bad)
    with pytest.raises(ValueError, match="no vocabulary found"):
        Encoding.from_file(_empty_dir(tmp_path))
    with pytest.raises(ValueError, match="own pre-tokenizer"):
        Encoding.from_file(vocab / "phi-2", pat_str="gpt2")


def _empty_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


# ---- atomic saves ------------------------------------------------------------------------


def small_encoding() -> Encoding:
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257}
    return Encoding("small", pat_str="gpt2", mergeable_ranks=ranks, special_tokens={"<e>": 258})


class Boom(Exception):
    pass


def failing_write(real_fdopen: Callable[..., Any]) -> Callable[..., Any]:
    """An os.fdopen whose file writes half of the data, then raises (a full disk, a crash)."""

    class HalfFile:
        def __init__(self, f: Any) -> None:
            self._f = f

        def __enter__(self) -> HalfFile:
            return self

        def __exit__(self, *exc: object) -> None:
            self._f.close()

        def write(self, data: bytes) -> int:
            self._f.write(data[: len(data) // 2])
            self._f.flush()
            raise Boom("disk full")

        def __getattr__(self, name: str) -> Any:
            return getattr(self._f, name)

    return lambda *a, **k: HalfFile(real_fdopen(*a, **k))


@pytest.mark.parametrize("how", ["write", "fsync", "replace", "interrupt"])
@pytest.mark.parametrize("fmt", ["tiktoken", "hf", "gpt2"])
def test_failed_save_leaves_the_old_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, how: str
) -> None:
    enc = small_encoding()
    target = tmp_path / ("out" if fmt == "gpt2" else f"out.{fmt}")
    if fmt == "gpt2":
        target.mkdir()
    written = enc.save(target, format=fmt)  # type: ignore[arg-type]
    old = {p: p.read_bytes() for p in written}
    bigger = enc.with_special_tokens({"<f>": 259, "<g>": 260})
    if how == "write":
        monkeypatch.setattr(os, "fdopen", failing_write(os.fdopen))
    elif how == "fsync":
        monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(Boom("fsync")))
    elif how == "replace":
        monkeypatch.setattr(os, "replace", lambda a, b: (_ for _ in ()).throw(Boom("replace")))
    else:
        monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises((Boom, KeyboardInterrupt)):
        bigger.save(target, format=fmt)  # type: ignore[arg-type]
    monkeypatch.undo()
    for path, data in old.items():
        assert path.read_bytes() == data, f"{path.name} changed"
    leftovers = sorted(p.name for p in tmp_path.rglob("*") if p.is_file() and p not in old)
    assert leftovers == [], "temporary files left behind"
    # And the old files still load.
    if fmt == "gpt2":
        loaded = formats.load(written[0].parent)
    else:
        loaded = formats.load(written[0], pat_str="gpt2" if fmt == "tiktoken" else None)
    assert loaded.decode_single_token_bytes(257) == b"abc"


def test_write_atomic_replaces_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    registry.write_atomic(path, b"old" * 1000)
    registry.write_atomic(path, b"new")
    assert path.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["f.bin"]


def test_gpt2_pair_save_is_all_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    enc = small_encoding()
    enc.save(tmp_path, format="gpt2")
    before = formats.load(tmp_path)
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"bc": 257, b"abc": 258}
    other = Encoding("other", pat_str="gpt2", mergeable_ranks=ranks, special_tokens={"<e>": 259})
    real_replace, calls = os.replace, []

    def crash_on_second(src: Any, dst: Any) -> None:
        calls.append(dst)
        if len(calls) == 2:
            raise Boom("crash between the two files")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", crash_on_second)
    with pytest.raises(Boom):
        other.save(tmp_path, format="gpt2")
    monkeypatch.undo()
    after = formats.load(tmp_path)
    assert after.n_vocab == before.n_vocab
    assert after.encode_ordinary("abc") == before.encode_ordinary("abc")
