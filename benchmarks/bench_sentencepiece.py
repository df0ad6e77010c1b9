"""SentencePiece-family tokenizers side by side: Llama 2 and Mistral's tekken.

Llama 2's tokenizer in its two files, each against the library it comes from: the
``tokenizer.model`` with the ``sentencepiece`` library, the ``tokenizer.json`` with
``tokenizers``; bytepair loads both. Mistral's ``tekken.json`` (from the mistral_common wheel)
against mistral_common's Tekkenizer. One call per paragraph, fresh paragraphs each repetition,
the libraries in turn; ids checked against the file's own library before any timing. Then the
worst case: a long run of one character, of spaces and of random CJK, per byte against prose.

    python benchmarks/bench_sentencepiece.py [--reps 5] [--mb 0.5] [--write]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _report import write_section
from bench_encode import markdown, time_calls
from corpus_text import PARAGRAPHS, first_quarter, paragraphs, slices
from encode_libraries import SHARED

import bytepair

Encode = Callable[[str], object]

LLAMA2 = SHARED / "vocab" / "llama2"


def tekken_path() -> Path:
    import mistral_common

    return Path(mistral_common.__file__).parent / "data" / "tekken_240911.json"


def sentencepiece_model() -> Encode:
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=str(LLAMA2 / "tokenizer.model"))
    return sp.encode


def tokenizers_json() -> Encode:
    import tokenizers

    tok = tokenizers.Tokenizer.from_file(str(LLAMA2 / "tokenizer.json"))
    return lambda text: tok.encode(text, add_special_tokens=False).ids


def mistral_tekken() -> Encode:
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    tok = Tekkenizer.from_file(str(tekken_path()))
    return lambda text: tok.encode(text, bos=False, eos=False)


def ours(path: Path) -> Encode:
    return bytepair.Encoding.from_file(path).encode_ordinary


# Each model: its file's own library first (the reference), then bytepair on the same file.
MODELS: dict[str, dict[str, Callable[[], Encode]]] = {
    "llama2 .model": {
        "sentencepiece": sentencepiece_model,
        "bytepair": lambda: ours(LLAMA2 / "tokenizer.model"),
    },
    "llama2 tokenizer.json": {
        "tokenizers": tokenizers_json,
        "bytepair": lambda: ours(LLAMA2 / "tokenizer.json"),
    },
    "tekken": {"mistral_common": mistral_tekken, "bytepair": lambda: ours(tekken_path())},
}


def throughput(reps: int, target_bytes: int) -> list[dict[str, Any]]:
    rows = []
    for model, builders in MODELS.items():
        encoders = {lib: build() for lib, build in builders.items()}
        reference_lib = next(iter(encoders))
        for category in ["english", "code", "multilingual"]:
            runs = slices(paragraphs(category), reps + 1, target_bytes)
            warmup, measured = runs[0], runs[1:]
            rewarm = first_quarter(warmup)
            for encode in encoders.values():
                time_calls(encode, warmup)
            same = all(
                list(encoders["bytepair"](d)) == list(encoders[reference_lib](d))
                for docs in measured
                for d in docs[:200]
            )
            times: dict[str, list[float]] = {lib: [] for lib in encoders}
            nbytes = 0
            for i, docs in enumerate(measured):
                nbytes += sum(len(d.encode("utf-8")) for d in docs)
                order = list(encoders)[i % 2 :] + list(encoders)[: i % 2]
                for lib in order:
                    time_calls(encoders[lib], rewarm)
                    times[lib].append(time_calls(encoders[lib], docs))
            pairs = zip(times[reference_lib], times["bytepair"], strict=True)
            per_rep = sorted(theirs / mine for theirs, mine in pairs)
            rows.append(
                {
                    "model": model,
                    "text": category,
                    "its library": reference_lib,
                    "library MB/s": nbytes / 1e6 / sum(times[reference_lib]),
                    "bytepair MB/s": nbytes / 1e6 / sum(times["bytepair"]),
                    "x its library": statistics.median(per_rep),
                    "range": f"{per_rep[0]:.2f}-{per_rep[-1]:.2f}",
                    "same ids": same,
                }
            )
            print(f"  {model} {category}: done", file=sys.stderr)
    return rows


def hostile_texts(n: int) -> dict[str, str]:
    rng = random.Random(0)
    cjk = "".join(chr(rng.randrange(0x4E00, 0x9FFF)) for _ in range(n // 3))
    return {"one letter": "a" * n, "spaces": " " * n, "random CJK": cjk}


def best_of(encode: Encode, text: str, tries: int = 5) -> float:
    best = float("inf")
    for _ in range(tries):
        start = time.perf_counter()
        encode(text)
        best = min(best, time.perf_counter() - start)
    return best


def worst_case(n: int) -> list[dict[str, Any]]:
    prose = "\n\n".join(paragraphs("english")[:3000])
    rows = []
    for model, builders in MODELS.items():
        encode = builders["bytepair"]()
        per_byte_prose = best_of(encode, prose) / len(prose.encode("utf-8"))
        for kind, text in hostile_texts(n).items():
            row: dict[str, Any] = {
                "model": model,
                "input": f"{kind} ({len(text.encode('utf-8')) / 1e6:.1f} MB)",
            }
            try:
                per_byte = best_of(encode, text, tries=3) / len(text.encode("utf-8"))
            except ValueError as err:
                # A pattern without a scanner can exceed the regex engine's fixed stack.
                row |= {"ns/byte": "refused", "prose ns/byte": per_byte_prose * 1e9}
                row["x prose"] = str(err).split(": ")[-1][:60]
            else:
                row |= {
                    "ns/byte": per_byte * 1e9,
                    "prose ns/byte": per_byte_prose * 1e9,
                    "x prose": per_byte / per_byte_prose,
                }
            rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--mb", type=float, default=0.5, help="MB of fresh text per repetition")
    parser.add_argument("--worst-mb", type=float, default=1.0, help="MB of each hostile input")
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args()
    started = time.strftime("%Y-%m-%d %H:%M")
    print("throughput ...", file=sys.stderr)
    sections = [
        "### Single-thread `encode_ordinary`, one call per paragraph\n\n"
        f"{args.reps} repetitions of ~{args.mb} MB of fresh {PARAGRAPHS} per text kind; `x its "
        "library` is the median over the repetitions of the file's own library's time over "
        "bytepair's (`range` the lowest and highest); `same ids` compares 200 paragraphs of "
        "each repetition.\n\n" + markdown(throughput(args.reps, int(args.mb * 1e6)))
    ]
    print("worst case ...", file=sys.stderr)
    sections.append(
        "### Worst case: time per byte of one long input, against English prose\n\n"
        "Each input and 3000 English paragraphs (one text) in one call each, best of three and "
        "five.\n\n" + markdown(worst_case(int(args.worst_mb * 1e6)))
    )
    header = (
        "## SentencePiece and tekken (`benchmarks/bench_sentencepiece.py`)\n\n"
        "Each file against the library it comes from (issue 32's goals: at least 5x "
        "sentencepiece and 3x tokenizers; a worst-case input at most 3x prose per byte).\n\n"
        f"Run {started} on {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
        f"`python benchmarks/bench_sentencepiece.py --reps {args.reps} --mb {args.mb}`.\n\n"
    )
    report = header + "\n".join(sections)
    print(report)
    if args.write:
        write_section(report, marker="sentencepiece")


if __name__ == "__main__":
    main()
