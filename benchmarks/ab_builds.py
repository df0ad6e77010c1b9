"""Two builds of ``bytepair._core`` against each other, in the encoding benchmark's conditions.

A change to the encoder's hot path moves its speed by a few percent, and this machine's speed
moves by more than that between runs, so two benchmark runs cannot tell builds apart. Here both
builds are loaded in one process and take turns on the same text. For each slice of fresh
paragraphs, tiktoken encodes the slice (as in the benchmark, other tables then fill the cache),
then each build, in alternating order, re-encodes a quarter of the warm-up text and encodes the
slice, timed. It prints the median over the slices of B's time over A's, and the total of B's
over A's; below 1 means B is faster.

    cp python/bytepair/_core*.so /tmp/a.so    # keep build A
    # change the code, rebuild (pip install -e .), then:
    python benchmarks/ab_builds.py o200k_base english /tmp/a.so python/bytepair/_core*.so

``--method count_ordinary`` times ``count`` instead of ``encode_ordinary``. Only the compiled
module changes between the builds; the Python package is the one installed. The encodings
``llama2.model`` and ``llama2.json`` (Llama 2's two files) compare the builds' SentencePiece
model, with ``sentencepiece`` encoding each slice first.

``--edge base64_hex_blobs.txt`` compares the builds on the benchmark's worst-case measure
instead: a file of ``corpus/edge`` and English prose, each encoded in one call (best of two),
both builds in turn for 16 rounds. It prints each build's time per byte on the file over its
time per byte on prose, and B's time over A's on each (medians over the rounds).

Run it several times both ways round (A B, then B A; a run takes seconds). Where the tables land
in memory can favour one build whatever its code: on multilingual text the build given second
was up to 4% faster in total, even when both were copies of one build. One run's median moves
by about 4%; five or more in each order settle a difference of 1-2%.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import statistics
from collections.abc import Callable
from types import ModuleType
from typing import Any

from bench_encode import time_calls
from corpus_text import CORPUS, first_quarter, paragraphs, prose, slices
from encode_libraries import SHARED, build_tiktoken, vocab_path

import bytepair
from bytepair import registry

# The SentencePiece model's files, by the name the command line gives them.
SENTENCEPIECE_FILES = {"llama2.model": "tokenizer.model", "llama2.json": "tokenizer.json"}


def load_build(path: str) -> ModuleType:
    """The compiled module at ``path``, loaded under its own name (a second copy is allowed)."""
    loader = importlib.machinery.ExtensionFileLoader("bytepair._core", path)
    spec = importlib.util.spec_from_file_location("bytepair._core", path, loader=loader)
    if spec is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def rank_encoder(module: ModuleType) -> Any:
    """The build's tiktoken-model class: ``RankEncoder``, or ``CoreEncoding`` in builds made
    before the two models had a class each (so that such a build can still be build A)."""
    return getattr(module, "RankEncoder", None) or module.CoreEncoding


def build_encoders(encoding: str, method: str, builds: list[str]) -> list[Callable[[str], Any]]:
    """``method`` of each build's encoder of ``encoding``."""
    if encoding in SENTENCEPIECE_FILES:
        path = SHARED / "vocab" / "llama2" / SENTENCEPIECE_FILES[encoding]
        c = bytepair.Encoding.from_file(path)._components  # type: ignore[attr-defined]
        options = c.encoder_options()
        return [
            getattr(load_build(p).SentencePieceEncoder(list(c.pieces), **options), method)
            for p in builds
        ]
    spec = registry.ENCODINGS[encoding]
    data = vocab_path(encoding).read_bytes()
    return [
        getattr(rank_encoder(load_build(p)).from_tiktoken(data, {}, spec.pat_str), method)
        for p in builds
    ]


def reference(encoding: str) -> Callable[[str], Any]:
    """The library whose encode runs on each slice first, as the benchmark's other tables."""
    if encoding in SENTENCEPIECE_FILES:
        import sentencepiece

        path = SHARED / "vocab" / "llama2" / "tokenizer.model"
        return sentencepiece.SentencePieceProcessor(model_file=str(path)).encode
    return build_tiktoken(encoding)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("encoding", choices=["cl100k_base", "o200k_base", *SENTENCEPIECE_FILES])
    parser.add_argument("text", choices=["english", "code", "multilingual"])
    parser.add_argument("a", help="path of build A's compiled module (.so)")
    parser.add_argument("b", help="path of build B's compiled module (.so)")
    parser.add_argument("--slices", type=int, default=9)
    parser.add_argument("--mb", type=float, default=0.8, help="MB of fresh text per slice")
    parser.add_argument("--method", default="encode_ordinary", help="the RankEncoder method")
    parser.add_argument("--edge", help="a file of corpus/edge: the worst-case measure instead")
    args = parser.parse_args()

    encode = build_encoders(args.encoding, args.method, [args.a, args.b])
    if args.edge:
        worst_case(args.encoding, args.edge, encode)
        return
    warm, *runs = slices(paragraphs(args.text), args.slices + 1, int(args.mb * 1e6))
    other = reference(args.encoding)
    for f in encode:
        for d in warm:
            f(d)
    rewarm = first_quarter(warm)
    ratios, totals = [], [0.0, 0.0]
    for i, docs in enumerate(runs):
        time_calls(other, docs)
        seconds = [0.0, 0.0]
        for k in (0, 1) if i % 2 == 0 else (1, 0):
            for d in rewarm:
                encode[k](d)
            seconds[k] = time_calls(encode[k], docs)
            totals[k] += seconds[k]
        ratios.append(seconds[1] / seconds[0])
    print(
        f"{args.encoding} {args.text} {args.method}: B/A median {statistics.median(ratios):.3f}, "
        f"total {totals[1] / totals[0]:.3f}, slices {min(ratios):.3f}-{max(ratios):.3f}"
    )


def worst_case(encoding: str, name: str, encode: list[Callable[[str], object]]) -> None:
    """The two builds on the worst-case measure: an edge file against prose, per byte."""
    english = prose()
    text = (CORPUS / "edge" / name).read_text(encoding="utf-8")
    sizes = (len(english.encode()), len(text.encode()))
    per_prose: list[list[float]] = [[], []]
    seconds: list[list[tuple[float, float]]] = [[], []]
    for r in range(16):
        for k in (0, 1) if r % 2 == 0 else (1, 0):
            both = [min(time_calls(encode[k], [t]) for _ in range(2)) for t in (english, text)]
            seconds[k].append((both[0], both[1]))
            per_prose[k].append((both[1] / sizes[1]) / (both[0] / sizes[0]))
    median = statistics.median
    edge = median(b[1] / a[1] for a, b in zip(*seconds, strict=True))
    plain = median(b[0] / a[0] for a, b in zip(*seconds, strict=True))
    print(
        f"{encoding} {name}: x prose A {median(per_prose[0]):.2f}, B {median(per_prose[1]):.2f}; "
        f"B/A {edge:.3f} on the file, {plain:.3f} on prose"
    )


if __name__ == "__main__":
    main()
