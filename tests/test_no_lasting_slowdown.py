"""No input makes later calls slower, and no run costs many times prose per byte.

The kinds: runs of one character and of a repeated unit of two to five (` \t`, `\r\n`,
`\n    `), and runs of one letter or mark after a space or before a newline (` aaaa`,
`----\n`), each at lengths around every threshold in the merge, and each at hundreds of
different lengths in one text (more than the per-thread cache of repeating pieces holds).

Issue 31: once long pieces of Llama 3 added up to the backtracker's threshold, the merge of
every later long run of spaces checked each pair of space tokens by merging their bytes, about
60 times the cost of the same piece before (for good, in that `Encoding`). Each encoding runs in
a child process so that its instance is fresh; timings are the best of several runs and the
bounds are generous (a lasting switch or a slow piece kind costs tens of times more).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap

import pytest

from anchors import ours, tiktoken_encoding, vocab_dir

NAMES = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base", "llama3"]

CHILD = textwrap.dedent(
    """
    import json, random, sys, time
    import bytepair

    enc = bytepair.get_encoding(sys.argv[1], vocab_dir=sys.argv[2])

    def per_byte(text, runs=5):
        best = float("inf")
        for _ in range(runs):
            start = time.perf_counter()
            enc.count(text)
            best = min(best, time.perf_counter() - start)
        return best / len(text.encode())

    prose = ("The quick brown fox, said Mary, jumps over 12 lazy dogs; then it rests. ") * 2000
    kinds = {}
    units = [" ", "\\t", "\\n", " \\t", "\\n ", "\\r\\n", "\\n    ", " \\t\\n"]
    for unit in units:
        for length in [20, 40, 64, 65, 129, 513, 600, 1811, 4097, 70000]:
            piece = (unit * length)[:length] + "a"
            kinds[f"{unit!r}x{length}"] = per_byte(piece * max(1, 100000 // length))
        lengths = list(range(16, 700))
        random.Random(unit).shuffle(lengths)
        text = "".join((unit * n)[:n] + "a" for n in lengths)
        kinds[f"{unit!r}x16-699"] = per_byte(text)
    # A run of one letter or mark after a space, or before a newline: the pattern's letter and
    # punctuation rules make these one piece with the run (merge/uniform.rs, affixed runs).
    for before, unit, after in [(" ", "a", ""), (" ", "=", ""), ("", "-", "\\n"), (" A", "a", "")]:
        for length in [17, 20, 40, 64, 65, 129, 511, 512, 513, 600, 4097]:
            piece = (before + unit * length + after + " ") * max(1, 100000 // length)
            kinds[f"{before + unit + after!r}x{length}"] = per_byte(piece)
        lengths = list(range(16, 700))
        random.Random(unit).shuffle(lengths)
        text = "".join(before + unit * n + after + " " for n in lengths)
        kinds[f"{before + unit + after!r}x16-699"] = per_byte(text)
    before = per_byte(" " * 1811, runs=20)
    for _ in range(12):
        enc.count((" " * 1812 + "a") * 16)
    after = per_byte(" " * 1811, runs=20)
    print(json.dumps({"prose": per_byte(prose), "kinds": kinds, "before": before, "after": after}))
    """
)


def _figures(name: str) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", CHILD, name, str(vocab_dir())],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return json.loads(result.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_no_call_slows_later_ones(name: str) -> None:
    figures = _figures(name)
    # The lasting switch to a slower merge showed as 60x; a switch to a faster one is allowed.
    assert figures["after"] < 3 * figures["before"] + 1e-9, figures
    # The reported request (llama3: long runs of spaces each followed by a letter) costs about
    # prose. Other encodings' long runs are the per-piece cost that the xfail below records.
    if name == "llama3":
        prose = figures["prose"]
        for kind in ["' 'x1811", "' 'x70000"]:
            assert figures["kinds"][kind] < 10 * prose, (kind, figures)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_every_run_kind_within_3x_prose(name: str) -> None:
    figures = _figures(name)
    prose = figures["prose"]
    slow = {k: round(v / prose, 1) for k, v in figures["kinds"].items() if v > 3 * prose}
    assert not slow, f"{name}: piece kinds costing over 3x prose per byte: {slow}"


@pytest.mark.parametrize("name", NAMES)
def test_runs_of_one_character_equal_tiktoken(name: str) -> None:
    # Runs of one byte merge a rank at a time over their run-length form (merge/uniform.rs):
    # every length around the thresholds, after and before other text, as tiktoken merges them.
    enc, reference = ours(name), tiktoken_encoding(name)
    rng = random.Random(name)
    for unit in [" ", "\t", "\n", "=", "-", "0", "#", "/", "\u3000"]:
        for length in [*range(14, 70), 127, 128, 129, 255, 256, 511, 512, 513, 900, 1811]:
            text = rng.choice(["", "x", " y", "\n"]) + unit * length + rng.choice(["", "a", " b"])
            assert enc.encode_ordinary(text) == reference.encode_ordinary(text), (unit, length)


@pytest.mark.parametrize("name", NAMES)
def test_runs_with_a_byte_or_two_around_them_equal_tiktoken(name: str) -> None:
    # A run of one byte after one or two other bytes, or before them (` aaaa`, ` Aaaa`,
    # `----\n`, `====\r\n`), merges over its run-length form too and is cached by those bytes
    # and its length: every length around the thresholds, twice each, as tiktoken merges them.
    enc, reference = ours(name), tiktoken_encoding(name)
    rng = random.Random(name)
    shapes = [(" ", "a", ""), (" A", "a", ""), ("", "-", "\n"), (" ", "=", ""), ("", "=", "\r\n")]
    shapes += [
        ("", "=", "\n"),
        (" ", "*", "\n"),
        ("x", " ", ""),
        (" ", "0", ""),
        (" \u00e9", "e", ""),
    ]
    for before, unit, after in shapes:
        for length in [*range(14, 70), 127, 128, 129, 255, 256, 511, 512, 513, 900, 1811]:
            text = rng.choice(["", "x", "\n"]) + before + unit * length + after
            text += rng.choice(["", " b", "\n"])
            expected = reference.encode_ordinary(text)
            for _ in range(2):  # the second from the cache of repeating pieces
                assert enc.encode_ordinary(text) == expected, (before, unit, after, length)


@pytest.mark.parametrize("name", NAMES)
def test_runs_of_a_repeated_unit_equal_tiktoken(name: str) -> None:
    # Pieces that repeat a unit of two to eight bytes merge by passes over a repeated block
    # (merge/periodic.rs) and are cached by unit and length (merge/cache.rs): every length
    # around the thresholds, whole units and cut short, twice each (the second from the cache).
    enc, reference = ours(name), tiktoken_encoding(name)
    rng = random.Random(name)
    units = [" \t", "\n ", "\r\n", "\n    ", " \t\n", "\t\t\n", "-=", "ab", "\n\t\t\t", "\u3000 "]
    for unit in units:
        for length in [*range(14, 70), 127, 128, 129, 255, 256, 511, 512, 513, 900, 1811, 4097]:
            text = rng.choice(["", "x", " y", "\n"]) + (unit * length)[:length]
            text += rng.choice(["", "a", " b"])
            expected = reference.encode_ordinary(text)
            for _ in range(2):
                assert enc.encode_ordinary(text) == expected, (unit, length)
