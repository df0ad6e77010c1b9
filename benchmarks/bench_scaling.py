"""Multi-core scaling: batch encoding on 1, 2, 4, 8, 16 threads, and ``engine="local"`` tokenize
and piece counting on as many workers, in one short run, for machines with more cores than the
one the other tables come from.

Threads and workers stop at ``os.cpu_count()``. Batch: ``encode_ordinary_batch`` of the English,
code and multilingual paragraphs (``--mb`` of them), each run with a fresh copy of the encoding (an
encoding caches the pieces it merged, and a warm one would flatter the later runs). Distributed:
``tokenize`` of the same paragraphs as JSON Lines files in shards of ``--shard-mib``, from the
driver's call to the manifest (the fork server the workers come from is started once before);
counting: ``count_pieces`` of the same files, whose shards' counts the driver adds up as they
arrive (the part that does not scale with the workers). Each count is run ``--repeat`` times, the
best kept. Amdahl's law is fitted to each mode's speed-ups (``1 / S(n) = s + (1 - s) / n``, least
squares in ``s``) and projected to 16 and 64 cores. The result is a Markdown section, printed or
written to ``--out`` (``--write``: also into ``BENCHMARKS.md``, between
``<!-- scaling:begin/end -->``).



    python benchmarks/bench_scaling.py --out scaling.md
"""

from __future__ import annotations

import argparse
import os
import pickle
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from bench_distributed import SHARED, amdahl, corpus_paragraphs, write_jsonl

import bytepair
from bytepair import registry
from bytepair.distributed import count_pieces, engines, tokenize

COUNTS = (1, 2, 4, 8, 16)


def cpu_model() -> str:
    """The processor's name, as the kernel reports it."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def fit_serial_fraction(speedups: dict[int, float]) -> float:
    """Amdahl's serial fraction fitted to ``{n: speed-up}`` (least squares, in [0, 1])."""
    pairs = [(1 / s - 1 / n, 1 - 1 / n) for n, s in speedups.items() if n > 1]
    denominator = sum(b * b for _, b in pairs)
    if not denominator:
        return float("nan")
    return min(1.0, max(0.0, sum(a * b for a, b in pairs) / denominator))


def best_of(repeat: int, run: Callable[[], None]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def batch_scaling(
    enc: bytepair.Encoding, docs: list[str], counts: list[int], repeat: int
) -> dict[int, float]:
    """Seconds of ``encode_ordinary_batch`` on each thread count, a fresh encoding each run."""
    state = pickle.dumps(enc)
    seconds = {}
    for n in counts:
        copies = [pickle.loads(state) for _ in range(repeat)]

        def run(copies: list[bytepair.Encoding] = copies, n: int = n) -> None:
            copies.pop().encode_ordinary_batch(docs, num_threads=n)

        seconds[n] = best_of(repeat, run)
        print(f"  batch, {n} thread(s): {seconds[n]:.2f} s", file=sys.stderr)
    return seconds


def distributed_scaling(
    enc: bytepair.Encoding, files: list[Path], counts: list[int], repeat: int, shard: int
) -> dict[int, float]:
    """Seconds of ``tokenize(engine="local")`` on each worker count, into a new folder each run."""
    out = Path(tempfile.mkdtemp(prefix="bench-scaling-out-"))
    with ProcessPoolExecutor(1, mp_context=engines._context()) as pool:
        pool.submit(int).result()  # the fork server, started once
    seconds = {}
    for n in counts:

        def run(n: int = n) -> None:
            folder = Path(tempfile.mkdtemp(dir=out))
            tokenize(
                files,
                enc,
                folder,
                engine="local",
                num_workers=n,
                shard_size=shard,
                show_progress=False,
            )
            shutil.rmtree(folder)

        seconds[n] = best_of(repeat, run)
        print(f"  distributed, {n} worker(s): {seconds[n]:.2f} s", file=sys.stderr)
    shutil.rmtree(out)
    return seconds


def counting_scaling(
    files: list[Path], counts: list[int], repeat: int, shard: int
) -> dict[int, float]:
    """Seconds of ``count_pieces(engine="local")`` on each worker count."""
    seconds = {}
    for n in counts:

        def run(n: int = n) -> None:
            count_pieces(
                files, engine="local", num_workers=n, shard_size=shard, show_progress=False
            )

        seconds[n] = best_of(repeat, run)
        print(f"  counting, {n} worker(s): {seconds[n]:.2f} s", file=sys.stderr)
    return seconds


def render(args: argparse.Namespace, mb: float, results: dict[str, dict[int, float]]) -> str:
    lines = [
        "## Multi-core scaling (`benchmarks/bench_scaling.py`)",
        "",
        f"{cpu_model()}, {os.cpu_count()} logical cores; Python {platform.python_version()}, "
        f"`{args.encoding}`, {mb:.1f} MB of paragraphs (english, code, multilingual); run "
        f"{time.strftime('%Y-%m-%d %H:%M')}, best of {args.repeat}, load average "
        f"{os.getloadavg()[0]:.1f} at the end. `python benchmarks/bench_scaling.py --mb "
        f"{args.mb} --repeat {args.repeat}`.",
        "",
        "| mode | threads / workers | wall s | MB/s | speed-up | efficiency |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    fits = []
    for mode, seconds in results.items():
        one = seconds[min(seconds)]
        speedups = {n: one / t for n, t in seconds.items()}
        for n, t in seconds.items():
            lines.append(
                f"| {mode} | {n} | {t:.2f} | {mb / t:.1f} | {speedups[n]:.2f}x "
                f"| {speedups[n] / n:.0%} |"
            )
        s = fit_serial_fraction(speedups)
        fits.append(
            f"| {mode} | {s:.3f} | {amdahl(s, 16):.1f}x | {amdahl(s, 64):.1f}x |"
            if s == s
            else f"| {mode} | (one count only) | | |"
        )
    lines += [
        "",
        "Amdahl's serial fraction fitted to each mode's speed-ups, and what it projects to:",
        "",
        "| mode | serial fraction | 16 cores | 64 cores |",
        "|---|---:|---:|---:|",
        *fits,
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=32, help="MB of paragraphs")
    parser.add_argument("--encoding", default="cl100k_base")
    parser.add_argument("--repeat", type=int, default=2, help="runs per count (the best counts)")
    parser.add_argument("--shard-mib", type=float, default=0.5, help="shard size of tokenize")
    parser.add_argument("--max", type=int, default=max(COUNTS), help="most threads / workers")
    parser.add_argument("--out", type=Path, help="write the Markdown section here (else print)")
    parser.add_argument(
        "--write", action="store_true", help="also store it in BENCHMARKS.md (scaling markers)"
    )
    args = parser.parse_args()

    limit = min(args.max, os.cpu_count() or 1)
    counts = [n for n in COUNTS if n <= limit] or [1]
    enc = registry.get_encoding(args.encoding, vocab_dir=SHARED / "vocab")
    paragraphs = corpus_paragraphs(args.mb)
    docs = [p for paras in paragraphs.values() for p in paras]
    mb = sum(len(d.encode("utf-8")) for d in docs) / 1e6
    tmp = Path(tempfile.mkdtemp(prefix="bench-scaling-"))
    try:
        files = write_jsonl(tmp, paragraphs)
        results: dict[str, dict[int, Any]] = {
            "batch (`encode_ordinary_batch`)": batch_scaling(enc, docs, counts, args.repeat),
            'distributed (`engine="local"`)': distributed_scaling(
                enc, files, counts, args.repeat, int(args.shard_mib * (1 << 20))
            ),
            'counting (`count_pieces`, `engine="local"`)': counting_scaling(
                files, counts, args.repeat, int(args.shard_mib * (1 << 20))
            ),
        }
    finally:
        shutil.rmtree(tmp)
    report = render(args, mb, results)
    if args.out is None:
        print(report)
    else:
        args.out.write_text(report, encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    if args.write:
        from _report import write_section

        write_section(report, marker="scaling")


if __name__ == "__main__":
    main()
