"""Hostile vocabulary files fail fast, with a clear error and bounded memory; saving is atomic.

Hostile: enormous lines, a huge claimed rank or id, binary junk, deeply nested or huge JSON.
Memory is the peak resident size of the load alone (Linux: the peak is reset through
``/proc/self/clear_refs``; elsewhere the memory checks are skipped, the error checks are not).
"""

from __future__ import annotations

import base64
import json
import os
import random
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bytepair import Encoding, formats, registry
from bytepair.bytes_unicode import bytes_to_unicode

MB = 1 << 20
VALID = "".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256))


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


# ---- .tiktoken files ---------------------------------------------------------------------


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
    for load in load_both(path):
        assert_fails_cleanly(load, match)


def test_binary_junk(tmp_path: Path) -> None:
    rng = random.Random(0)
    for i in range(20):
        data = bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 4000)))
        path = write(tmp_path / f"junk{i}.tiktoken", data)
        for load in load_both(path):
            assert_fails_cleanly(load, ".")


def test_enormous_line(tmp_path: Path) -> None:
    # 40 MB of base64 on one line: parsed (it is a token), then rejected; memory stays a small
    # multiple of the file.
    size = 40 * MB
    path = write(tmp_path / "line.tiktoken", "A" * size + " 0\n")
    for load in load_both(path):
        assert_fails_cleanly(load, "0x00 is not a token", max_growth=6 * size)
    junk = write(tmp_path / "junk-line.tiktoken", "!" * size + " 0\n")
    for load in load_both(junk):
        assert_fails_cleanly(load, "bad base64|unrecognised|merges", max_growth=3 * size)


# ---- JSON files (bytepair.formats) -------------------------------------------------------


def gpt2_pair(folder: Path, vocab: Any, merges: str = "#version: 0.2\na b\n") -> Path:
    folder.mkdir()
    text = vocab if isinstance(vocab, str) else json.dumps(vocab)
    write(folder / "vocab.json", text)
    write(folder / "merges.txt", merges)
    return folder


def byte_vocab() -> dict[str, int]:
    table = bytes_to_unicode()
    return {table[b]: b for b in range(256)} | {"ab": 256}


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
        folder = gpt2_pair(tmp_path / f"v{i}", byte_vocab() | {"abc": bad})
        assert_fails_cleanly(lambda folder=folder: formats.load(folder), match)
    nan = tmp_path / "nan"
    gpt2_pair(nan, json.dumps(byte_vocab())[:-1] + ', "abc": NaN}')
    assert_fails_cleanly(lambda: formats.load(nan), "not an integer")


def test_json_id_beyond_64_bits(tmp_path: Path) -> None:
    folder = gpt2_pair(tmp_path / "v", byte_vocab() | {"abc": 2**70})
    assert_fails_cleanly(lambda: formats.load(folder), "too large|not an integer")
    folder = gpt2_pair(tmp_path / "w", byte_vocab() | {"abc": 2**28})
    assert_fails_cleanly(lambda: formats.load(folder), "too large|not an integer")


def test_json_huge_sparse_id(tmp_path: Path) -> None:
    # 2**24 ids: a few hundred MB where the bug is, an error in microseconds where it is fixed.
    folder = gpt2_pair(tmp_path / "v", byte_vocab() | {"abc": 2**24})
    assert_fails_cleanly(lambda: formats.load(folder), "nearly contiguous|too large")


def test_deeply_nested_json(tmp_path: Path) -> None:
    path = write(tmp_path / "tokenizer.json", '{"a":' * 100_000 + "1" + "}" * 100_000)
    assert_fails_cleanly(lambda: formats.load(path), "nest|deep|JSON")


def test_nested_json_arrays_are_rejected(tmp_path: Path) -> None:
    path = write(tmp_path / "deep.json", "[" * 100_000 + "]" * 100_000)
    assert_fails_cleanly(lambda: formats.load(path), ".")


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
