"""Worst-case inputs encode without error and in bounded memory: 100 MB of text, a million repeats
of one character, a megabyte of spaces, and every file of the pathological corpus.

Each group runs in a child process, which measures the peak resident memory of each call alone
(Linux resets the peak through ``/proc/self/clear_refs``; elsewhere the growth of
``ru_maxrss`` is an upper bound). The bounds are generous: they catch a copy too many per byte
or a quadratic table, not a few megabytes. Timings belong to ``benchmarks/bench_encode.py``.

A debug build of the extension (``--profile dev``) encodes long pieces about 20 times slower
than a release build, so there the sizes shrink tenfold (``BYTEPAIR_WORST_CASE_SCALE`` overrides);
CI builds release and runs the full sizes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from bytepair import _core

from anchors import vocab_dir
from conftest import shared_path

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs the resource module")

MB = 1 << 20


def _debug_build() -> bool:
    with open(_core.__file__, "rb") as f:
        return b".debug_info" in f.read()


SCALE = float(os.environ.get("BYTEPAIR_WORST_CASE_SCALE", "0.1" if _debug_build() else "1"))

# The child: builds each input, resets the peak, runs the call, reports the peak's growth.
CHILD = textwrap.dedent(
    """
    import json, re, resource, sys
    import bytepair

    def peak():
        try:
            with open("/proc/self/status") as f:
                return int(re.search(r"VmHWM:\\s+(\\d+)", f.read()).group(1)) * 1024
        except OSError:
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    def reset():
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            pass

    name, vocab, cases = sys.argv[1], sys.argv[2], json.loads(sys.stdin.read())
    enc = bytepair.get_encoding(name, vocab_dir=vocab)
    out = []
    for case in cases:
        if "path" in case:
            with open(case["path"], encoding="utf-8", errors="surrogateescape") as f:
                text = f.read()
        else:
            text = (case["unit"] * (case["size"] // len(case["unit"]) + 1))[: case["size"]]
        reset()
        before = peak()
        if case["call"] == "count":
            n = enc.count(text, disallowed_special=())
            ok = True
        elif case["call"] == "numpy":
            n = len(enc.encode_to_numpy(text, disallowed_special=()))
            ok = True
        else:  # encode, then check the round trip and the count
            ids = enc.encode(text, disallowed_special=())
            n = len(ids)
            repaired = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            ok = enc.decode(ids) == repaired and enc.count(text, disallowed_special=()) == n
            del ids
        out.append({"growth": peak() - before, "tokens": n, "ok": ok, "chars": len(text)})
        del text
    print(json.dumps(out))
    """
)


def run_child(name: str, cases: list[dict[str, Any]], timeout: float = 600) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, name, str(vocab_dir())],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results: list[dict[str, Any]] = json.loads(done.stdout)
    return results


def scaled(n: int) -> int:
    return max(1000, int(n * SCALE))


# unit, size in characters, call; the bound on peak growth is per case below.
PATHOLOGICAL = [
    ("a", 1_000_000, "encode"),  # one piece of a million letters (the heap merge)
    (" ", 1_000_000, "encode"),  # a megabyte of spaces
    ("\n", 1_000_000, "encode"),
    ("1", 1_000_000, "encode"),
    ("!", 1_000_000, "encode"),  # one piece of punctuation
    ("é", 500_000, "encode"),
    ("中", 500_000, "encode"),
    ("😀", 250_000, "encode"),
    ("a\u0301", 500_000, "encode"),  # a letter and a million combining marks: one piece
    (" \t\r\n\u3000\u00a0", 1_000_000, "encode"),
    ("ab ", 1_000_000, "encode"),  # many short pieces
    ("'s", 1_000_000, "encode"),
    ("<|endoftext|>", 1_000_000, "encode"),  # special-looking text, encoded as text
]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_pathological_runs_in_bounded_memory(name: str) -> None:
    cases = [{"unit": u, "size": scaled(n), "call": c} for u, n, c in PATHOLOGICAL]
    for (unit, _, _), result in zip(PATHOLOGICAL, run_child(name, cases), strict=True):
        label = f"{unit!r} x {result['chars']}"
        assert result["ok"], f"{label}: round trip or count differs"
        assert result["tokens"] > 0
        # Input bytes (up to 4 per char) times a generous factor for one long piece's merge
        # tables (about 40 bytes per byte), plus the id list as Python ints, plus slack.
        n_bytes = len(unit.encode("utf-8")) * result["chars"] // len(unit)
        bound = 64 * n_bytes + 64 * result["tokens"] + 64 * MB
        assert result["growth"] < bound, f"{label}: peak grew by {result['growth'] / MB:.0f} MB"


def test_every_edge_corpus_file_in_bounded_memory() -> None:
    folder = shared_path("corpus", "edge")
    files = sorted(p for p in folder.iterdir() if p.is_file())
    cases = [{"path": str(p), "call": "encode"} for p in files]
    for path, result in zip(files, run_child("cl100k_base", cases), strict=True):
        assert result["ok"], f"{path.name}: round trip or count differs"
        size = path.stat().st_size
        bound = 64 * size + 64 * result["tokens"] + 64 * MB
        assert result["growth"] < bound, f"{path.name}: peak grew by {result['growth'] / MB:.0f} MB"


def test_100_mb_of_text() -> None:
    source = shared_path("corpus", "english", "gutenberg_2600_tolstoy_war_and_peace.txt")
    size = scaled(100 * MB)
    unit = Path(source).read_text(encoding="utf-8")
    cases = [
        {"unit": unit, "size": size, "call": "count"},
        {"unit": unit, "size": size, "call": "numpy"},
    ]
    count, numpy = run_child("cl100k_base", cases)
    assert count["chars"] == size and count["tokens"] == numpy["tokens"] > size // 10
    # Counting builds no ids: the only copy is the UTF-8 of a non-ASCII text.
    assert count["growth"] < 1.5 * size + 64 * MB, f"count: {count['growth'] / MB:.0f} MB"
    # Ids as 4-byte numbers, a few copies of them at most.
    bound = 1.5 * size + 16 * numpy["tokens"] + 64 * MB
    assert numpy["growth"] < bound, f"numpy: {numpy['growth'] / MB:.0f} MB"
