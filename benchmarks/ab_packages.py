"""The default calls of two bytepair packages, each with its compiled module, in one process.

``ab_builds.py`` compares two compiled modules under one Python package; a change that moves
code between the package and the module (such as how ``Encoding.encode`` reaches the core)
needs both sides whole. Here package A (a ``python`` folder holding ``bytepair`` with its
``_core*.so``, for example a ``git worktree`` of main) is copied and renamed ``bytepair_a`` so
that it loads beside the installed ``bytepair`` (B). Each round times every call on both, in
alternating order (best of three repeats); it prints each side's best time and the median over
the rounds of B's time over A's (below 1: B is faster).

    python benchmarks/ab_packages.py /tmp/main-worktree/python --rounds 40
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import re
import shutil
import statistics
import sys
import tempfile
import timeit
from pathlib import Path
from types import ModuleType

from corpus_text import paragraphs

import bytepair

SHORT_PROMPT = "Summarise the following email in two sentences, please."
CALLS = [
    "enc.encode(short)",
    "enc.count(short)",
    "enc.encode_ordinary(short)",
    "enc.encode(paragraph)",
    "enc.count(paragraph)",
    "enc.encode_ordinary(paragraph)",
]


def renamed_copy(python_dir: Path, into: Path) -> ModuleType:
    """Package ``bytepair`` of ``python_dir`` imported as ``bytepair_a`` from a copy."""
    target = into / "bytepair_a"
    shutil.copytree(python_dir / "bytepair", target)
    for source in target.rglob("*.py"):
        text = source.read_text()
        text = re.sub(r"\bfrom bytepair\b", "from bytepair_a", text)
        text = re.sub(r"\bimport bytepair\b", "import bytepair_a as bytepair", text)
        source.write_text(text.replace('"bytepair.', '"bytepair_a.'))
    sys.path.insert(0, str(into))
    return importlib.import_module("bytepair_a")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path, help="the python folder of package A")
    parser.add_argument("--encoding", default="o200k_base")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ab-packages-") as folder:
        package_a = renamed_copy(args.a, Path(folder))
        encodings = {
            "A": package_a.get_encoding(args.encoding),
            "B": bytepair.get_encoding(args.encoding),
        }
        paragraph = next(p for p in paragraphs("english") if 400 < len(p) < 1200)
        best = {call: {"A": float("inf"), "B": float("inf")} for call in CALLS}
        ratios: dict[str, list[float]] = {call: [] for call in CALLS}
        gc.disable()
        for round_ in range(args.rounds):
            for call in CALLS:
                number = 20_000 if "short" in call else 2_000
                seconds = {}
                for side in ("A", "B") if round_ % 2 == 0 else ("B", "A"):
                    names = {"enc": encodings[side], "short": SHORT_PROMPT, "paragraph": paragraph}
                    runs = timeit.repeat(call, number=number, repeat=3, globals=names)
                    seconds[side] = min(runs) / number
                    best[call][side] = min(best[call][side], seconds[side])
                ratios[call].append(seconds["B"] / seconds["A"])
        gc.enable()
    print(f"{args.encoding}, {args.rounds} rounds, load average {os.getloadavg()[0]:.1f}")
    for call in CALLS:
        a, b = (best[call][side] * 1e9 for side in ("A", "B"))
        median = statistics.median(ratios[call])
        print(f"{call:32s} A {a:8.1f} ns  B {b:8.1f} ns  B/A median {median:.3f}")


if __name__ == "__main__":
    main()
