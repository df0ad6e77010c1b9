"""bytepair.distributed on this machine: tokenize and count throughput with 1 and 2 workers
(local processes and a local Ray cluster) against a plain single-process loop, and how the
piece-count table of training grows with the corpus.

The corpus is the shared English, code and multilingual files, cut into paragraphs and written
as JSON Lines (the usual pretraining input), one file per source file. Every run's tokens are
checked against the plain loop's. Results are printed as Markdown and, with ``--write``, stored
in ``BENCHMARKS.md`` between ``<!-- distributed:begin -->`` and ``<!-- distributed:end -->``.

    python benchmarks/bench_distributed.py --write
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from _report import write_section

import bytepair
from bytepair import registry
from bytepair.distributed import Workers, count_pieces, engines, load_tokens, tokenize
from bytepair.train import count_pieces as count_pieces_one_process

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("BYTEPAIR_SHARED", ROOT.parent / "shared"))
CATEGORIES = ("english", "code", "multilingual")
SHARD_SIZE = 1 << 20


def documents_of(text: str) -> list[str]:
    """Paragraphs; one longer than 20,000 characters (a file of one sentence per line, a
    minified script) is cut into its lines."""
    docs = []
    for para in text.split("\n\n"):
        docs += para.split("\n") if len(para) > 20_000 else [para]
    return [d for d in docs if d.strip()]


def corpus_paragraphs(limit_mb: float) -> dict[str, list[str]]:
    """The documents of each shared corpus file (by name), up to ``limit_mb`` in all."""
    out: dict[str, list[str]] = {}
    total = 0
    for category in CATEGORIES:
        for path in sorted((SHARED / "corpus" / category).iterdir()):
            text = path.read_text(encoding="utf-8", errors="replace")
            out[f"{category}_{path.stem}"] = documents_of(text)
            total += len(text.encode("utf-8"))
            if total >= limit_mb * 1e6:
                return out
    return out


def write_jsonl(folder: Path, paragraphs: dict[str, list[str]]) -> list[Path]:
    files = []
    for name, paras in paragraphs.items():
        path = folder / f"{name}.jsonl"
        with path.open("w", encoding="utf-8") as f:
            for p in paras:
                f.write(json.dumps({"text": p}, ensure_ascii=False) + "\n")
        files.append(path)
    return files


REPEAT = 1


def cpu_seconds() -> float:
    """CPU time of this process, of its finished children, and of the finished children of the
    fork server that local workers come from (they are its children, not ours)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime + forkserver_children_cpu()


def forkserver_children_cpu() -> float:
    """CPU seconds of the fork server's workers that have exited (Linux; else 0)."""
    from multiprocessing import forkserver

    pid = getattr(forkserver._forkserver, "_forkserver_pid", None)
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    # Fields 16 and 17 of stat (cutime, cstime), counted after the command name.
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def timed(fn: Callable[[], Any]) -> tuple[tuple[float, float], Any]:
    """(wall, CPU) seconds of the fastest of ``REPEAT`` runs, and the last result."""
    best, result = (math.inf, math.inf), None
    for _ in range(REPEAT):
        start, cpu = time.perf_counter(), cpu_seconds()
        result = fn()
        best = min(best, (time.perf_counter() - start, cpu_seconds() - cpu))
    return best, result


def fresh(enc: bytepair.Encoding) -> Callable[[], bytepair.Encoding]:
    """Copies of ``enc`` made ahead, one per run: an encoding caches the pieces it merged, and
    an in-process row re-run on the same text with one encoding would be timed warm, while each
    worker builds its own and starts cold."""
    copies = [pickle.loads(pickle.dumps(enc)) for _ in range(REPEAT)]
    return copies.pop


def plain_loop(files: list[Path], enc: bytepair.Encoding, out: Path) -> np.ndarray:
    """What one writes without this package: one process, one document at a time."""
    ids: list[int] = []
    for path in files:
        with path.open(encoding="utf-8") as f:
            for line in f:
                ids.extend(enc.encode_ordinary(json.loads(line)["text"]))
                ids.append(enc.eot_token)
    tokens = np.array(ids, dtype=np.uint16)
    np.save(out, tokens)
    return tokens


def one_process_batch(files: list[Path], enc: bytepair.Encoding, threads: int) -> np.ndarray:
    """One process, encode_ordinary_batch on ``threads`` Rust threads."""
    parts = []
    for path in files:
        with path.open(encoding="utf-8") as f:
            docs = [json.loads(line)["text"] for line in f]
        for ids in enc.encode_ordinary_batch(docs, num_threads=threads):
            ids.append(enc.eot_token)
            parts.append(np.array(ids, dtype=np.uint16))
    return np.concatenate(parts)


# ---- the piece-count table ------------------------------------------------------------------

GROWTH_CHILD = r"""
import gc, json, os, sys, threading, time
from bytepair import _core
from bytepair.patterns import resolve_pattern
docs, vocab_size = json.load(open(sys.argv[1])), int(sys.argv[2])
page = os.sysconf("SC_PAGE_SIZE")
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * page
peak = 0
def sample(stop):
    global peak
    while not stop.wait(0.005):
        peak = max(peak, rss())
pattern = resolve_pattern("o200k")
# Memory first: the whole corpus counted, then merged (resident memory sampled meanwhile).
gc.collect()
base = rss()
stop = threading.Event()
sampler = threading.Thread(target=sample, args=(stop,))
sampler.start()
counter = _core.PieceCounter(pattern)
counter.add_texts(docs, 1)
counted = rss()
start = time.perf_counter()
counter.train(vocab_size, 0, "bytepair", 1, None, consume=True)
merge_s = time.perf_counter() - start
stop.set()
sampler.join()
# Then the table's growth, prefix by prefix.
counter = _core.PieceCounter(pattern)
rows, done, size, marks = [], 0, 0, [m * 1e6 for m in (1, 2, 4, 8, 16, 32, 64, 128)]
for i, doc in enumerate(docs):
    size += len(doc.encode("utf-8"))
    if marks and size >= marks[0] or i == len(docs) - 1:
        counter.add_texts(docs[done:i + 1], 1)
        done = i + 1
        piece_bytes = sum(len(p) for p, _ in counter.items())
        rows.append([size, len(counter), piece_bytes, counter.total])
        while marks and size >= marks[0]:
            marks.pop(0)
print(json.dumps({"rows": rows, "base": base, "counted": counted, "peak": peak,
                  "merge_s": merge_s}))
"""


def piece_growth(paragraphs: dict[str, list[str]], vocab_size: int, tmp: Path) -> dict[str, Any]:
    docs = [p for paras in paragraphs.values() for p in paras]
    random.Random(0).shuffle(docs)  # a mixed corpus: every prefix has all three categories
    path = tmp / "docs.json"
    path.write_text(json.dumps(docs), encoding="utf-8")
    code = subprocess.run(
        [sys.executable, "-c", GROWTH_CHILD, str(path), str(vocab_size)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(code.stdout)
    return result


# ---- report ---------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=64, help="corpus size limit (MB)")
    parser.add_argument("--encoding", default="gpt2")
    parser.add_argument("--vocab-size", type=int, default=4096, help="for the merge-node row")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray rows")
    parser.add_argument("--repeat", type=int, default=2, help="runs per row (the best counts)")
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args()

    global REPEAT
    REPEAT = args.repeat
    load = os.getloadavg()[0]
    enc = registry.get_encoding(args.encoding, vocab_dir=SHARED / "vocab")
    paragraphs = corpus_paragraphs(args.mb)
    tmp = Path(tempfile.mkdtemp(prefix="bench-distributed-"))
    files = write_jsonl(tmp, paragraphs)
    mb = sum(f.stat().st_size for f in files) / 1e6
    docs = sum(len(p) for p in paragraphs.values())
    print(f"{len(files)} files, {docs} documents, {mb:.1f} MB of JSON Lines", file=sys.stderr)

    # The fork server local workers come from starts once per process: timed here, on its own.
    start = time.perf_counter()
    with ProcessPoolExecutor(1, mp_context=engines._context()) as pool:
        pool.submit(int).result()
    forkserver_s = time.perf_counter() - start

    rows: list[tuple[str, str, float, float | None]] = []  # (job, how, wall s, CPU s)
    starts: dict[str, float | None] = {}  # what starting each kind of worker took, in s
    copy = fresh(enc)
    seconds, reference = timed(lambda: plain_loop(files, copy(), tmp / "plain.npy"))
    tokens = len(reference)
    rows.append(("tokenize", "plain loop, 1 process (`encode_ordinary` per document)", *seconds))
    copy = fresh(enc)
    seconds, batch = timed(lambda: one_process_batch(files, copy(), 2))
    assert np.array_equal(batch, reference)
    rows.append(("tokenize", "1 process, `encode_ordinary_batch`, 2 threads", *seconds))

    folders = iter(range(10**6))

    def run_tokenize(engine: str, workers: int, kept: Workers | None = None) -> None:
        seconds, out = timed(
            lambda: (
                tokenize(
                    files,
                    enc,
                    tmp / f"{engine}{workers}-{next(folders)}",  # a new folder: no shard to skip
                    engine=kept or engine,  # type: ignore[arg-type]
                    num_workers=None if kept else workers,
                    shard_size=SHARD_SIZE,
                    show_progress=False,
                ).directory
            )
        )
        got = load_tokens(out)
        assert np.array_equal(got.tokens, reference), f"{engine}/{workers} differs"
        cpu = seconds[1] if engine == "local" else None  # Ray workers are not our children
        rows.append(("tokenize", how(engine, workers, kept is not None), seconds[0], cpu))

    def run_count(engine: str, workers: int, kept: Workers | None = None) -> None:
        seconds, _ = timed(
            lambda: count_pieces(
                files,
                pattern="o200k",
                engine=kept or engine,  # type: ignore[arg-type]
                num_workers=None if kept else workers,
                shard_size=SHARD_SIZE,
                show_progress=False,
            )
        )
        cpu = seconds[1] if engine == "local" else None
        rows.append(("count pieces", how(engine, workers, kept is not None), seconds[0], cpu))

    def run_kept(engine: str) -> None:
        """Both jobs on workers started once (each job still sends its own job to them)."""
        for workers in (1, 2):
            start = time.perf_counter()
            with Workers(engine, num_workers=workers) as kept:  # type: ignore[arg-type]
                starts[f'`Workers("{engine}", {workers})`'] = time.perf_counter() - start
                run_tokenize(engine, workers, kept)
                run_count(engine, workers, kept)

    def plain_count() -> None:
        texts = []
        for path in files:
            with path.open(encoding="utf-8") as f:
                texts += [json.loads(line)["text"] for line in f]
        count_pieces_one_process(texts, pattern="o200k", num_threads=1)

    for workers in (1, 2):
        run_tokenize("local", workers)
    seconds, _ = timed(plain_count)
    rows.append(("count pieces", "read, then `bytepair.train.count_pieces`, 1 thread", *seconds))
    for workers in (1, 2):
        run_count("local", workers)
    run_kept("local")
    bound = two_process_bound()

    ray_init = None
    if not args.no_ray:
        import ray

        start = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False)
        ray_init = time.perf_counter() - start
        where = ray.get(ray.remote(lambda: bytepair._core.__file__).remote())
        assert where == bytepair._core.__file__, f"Ray workers load another _core: {where}"
        for workers in (1, 2):
            run_tokenize("ray", workers)
        for workers in (1, 2):
            run_count("ray", workers)
        run_kept("ray")
        ray.shutdown()

    growth = piece_growth(paragraphs, args.vocab_size, tmp)
    load = max(load, os.getloadavg()[0])
    starts["fork server"], starts["ray"] = forkserver_s, ray_init
    report = render(args, enc, len(files), docs, mb, tokens, rows, starts, bound, growth, load)
    print(report)
    if args.write:
        write_section(report, marker="distributed")


def how(engine: str, workers: int, kept: bool) -> str:
    """A row's label: a call that starts its workers, or one on workers started before."""
    if kept:
        return f'`Workers("{engine}", {workers})` started once'
    return f'`engine="{engine}"`, {workers} worker(s)'


def render(
    args: argparse.Namespace,
    enc: bytepair.Encoding,
    n_files: int,
    docs: int,
    mb: float,
    tokens: int,
    rows: list[tuple[str, str, float, float | None]],
    starts: dict[str, float | None],
    bound: float,
    growth: dict[str, Any],
    load: float,
) -> str:
    core = Path(bytepair._core.__file__)
    lines = [
        "## Distributed tokenize and train (`benchmarks/bench_distributed.py`)",
        "",
        f"{n_files} JSON Lines files ({mb:.1f} MB, {docs} documents: paragraphs of the shared "
        f"english, code and multilingual corpora), `{enc.name}`, {tokens} tokens; shards of "
        f"{SHARD_SIZE >> 20} MiB. {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"`_core` a {build_kind(core)}; the machine is shared (load average up to {load:.1f} "
        f"during the run), best of {REPEAT} runs. Each engine run includes starting its "
        "workers and writing the shards and manifest; every run's tokens equal the plain "
        "loop's. CPU s is the CPU time of this process and its worker processes (not "
        "measurable for Ray's workers): when it stays flat while the wall time does not drop "
        "with a second worker, the second core was busy with other work.",
        "",
        "| job | how | wall s | MB/s | speed-up | CPU s |",
        "|---|---|---:|---:|---:|---:|",
    ]
    first: dict[str, float] = {}
    for job, how, seconds, cpu in rows:
        base = first.setdefault(job, seconds)
        cpu_text = "" if cpu is None else f"{cpu:.2f}"
        lines.append(
            f"| {job} | {how} | {seconds:.2f} | {mb / seconds:.1f} | {base / seconds:.2f}x "
            f"| {cpu_text} |"
        )
    lines += [
        "",
        f"Starting the fork server that local workers come from, once per process (not in the "
        f"table): {starts['fork server']:.2f} s.",
    ]
    if starts["ray"] is not None:
        lines.append(
            f"Starting the local Ray cluster (`ray.init`, not in the table): {starts['ray']:.1f} s."
        )
    kept = [f"{name} {t:.2f} s" for name, t in starts.items() if name.startswith("`Workers")]
    lines.append(
        "Starting the workers that the `started once` rows then run both jobs on (not in the "
        f"table): {', '.join(kept)}."
    )
    lines += ["", *scaling_summary(rows, bound)]
    rows_g = growth["rows"]
    lines += [
        "",
        "### The piece-count table (the memory of the merge node)",
        "",
        "Unique pieces (pattern `o200k`) in growing prefixes of the same corpus, shuffled by "
        "document so that every prefix mixes the three kinds of text:",
        "",
        "| corpus MB | pieces counted | unique pieces | bytes of unique pieces |",
        "|---:|---:|---:|---:|",
    ]
    for size, unique, piece_bytes, total in rows_g:
        lines.append(f"| {size / 1e6:.1f} | {total} | {unique} | {piece_bytes / 1e6:.1f} MB |")
    xs = [math.log(r[0]) for r in rows_g]
    ys = [math.log(r[1]) for r in rows_g]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mx) ** 2 for x in xs)
    beta = (
        sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / spread
        if spread
        else math.nan
    )
    table_mb = (growth["counted"] - growth["base"]) / 1e6
    peak_mb = (growth["peak"] - growth["base"]) / 1e6
    lines += [
        "",
        f"Growth exponent fitted on these rows (Heaps' law, unique ~ size^beta): "
        f"beta = {beta:.2f}. Resident memory of the counter (above the process's with the "
        f"documents loaded) after counting the whole corpus: {table_mb:.0f} MB; peak while "
        f"learning {args.vocab_size - 256} merges from it (`consume=True`): {peak_mb:.0f} MB, "
        f"{growth['merge_s']:.1f} s. Per unique piece that is about "
        f"{peak_mb * 1e6 / rows_g[-1][1]:.0f} bytes at the peak. Extrapolating with this "
        "beta: 10x the corpus gives "
        f"{10**beta:.1f}x the pieces, 1000x gives {1000**beta:.0f}x; a merge node needs "
        "memory for the unique pieces of the whole corpus, the map workers only for their "
        "shard's.",
        "",
    ]
    return "\n".join(lines)


def two_process_bound(rounds: int = 16, target_bytes: int = 400_000) -> float:
    """What the second core gives our encoder now: two processes, each encoding half of a run
    of paragraphs, against one encoding all of it (median of ``rounds``), as the encoding
    table's two-thread rows measure it. Two workers cannot do better than this."""
    from bench_encode import EncoderProcesses

    processes = EncoderProcesses("cl100k_base", target_bytes)
    try:
        ratios = [processes.one(1 + r) / processes.two(1 + r) for r in range(rounds)]
    finally:
        processes.close()
    return statistics.median(ratios)


def amdahl_serial_fraction(speedup: float, workers: int) -> float:
    """The serial fraction ``s`` for which Amdahl's law gives ``speedup`` on ``workers``:
    ``1 / speedup = s + (1 - s) / workers``."""
    return min(1.0, max(0.0, (workers / speedup - 1) / (workers - 1)))


def amdahl(serial: float, workers: int) -> float:
    return 1 / (serial + (1 - serial) / workers)


def scaling_summary(rows: list[tuple[str, str, float, float | None]], bound: float) -> list[str]:
    """The ratios the scale-out targets are stated in, and what they project to."""
    wall = {(job, how): seconds for job, how, seconds, _ in rows}
    baselines = {"tokenize": "plain loop", "count pieces": "read, then"}
    lines = [
        "### Scaling of the engines",
        "",
        f"Two processes of our encoder, each on half of a run of paragraphs, against one on all "
        f"of it, measured between the local and the Ray rows (median of 16 rounds): "
        f"**{bound:.2f}x**, the most two workers can get on this machine now. The serial "
        "fraction is Amdahl's, solved from the two-worker speed-up (`raw`) and from that "
        "speed-up taken relative to the two-process bound (`vs bound`, which is what the "
        "code's own serial part would be on two free cores, 0 where the bound was no higher than "
        "the speed-up), each projected to 16 and 64 workers. A bound near 1 means the second "
        "core was taken by other work during the run, and neither fraction says much.",
        "",
        "| engine | job | 1 worker / one process | 2 workers / 1 worker | serial fraction "
        "(raw) | 16 workers | 64 workers | serial fraction (vs bound) | 16 workers | 64 workers |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    kinds = [(e, k) for e in ("local", "ray") for k in (None, "workers started once")]
    for engine, kept in kinds:
        for job, prefix in baselines.items():
            base = next(
                (t for (j, h), t in wall.items() if j == job and h.startswith(prefix)), None
            )
            one = wall.get((job, how(engine, 1, kept is not None)))
            two = wall.get((job, how(engine, 2, kept is not None)))
            if base is None or one is None or two is None:
                continue
            engine_text = engine if kept is None else f"{engine}, {kept}"
            speedup = one / two
            raw = amdahl_serial_fraction(speedup, 2)
            relative = amdahl_serial_fraction(min(2.0, 2 * speedup / bound), 2)
            lines.append(
                f"| {engine_text} | {job} | {base / one:.2f}x | {speedup:.2f}x | {raw:.2f} "
                f"| {amdahl(raw, 16):.1f}x | {amdahl(raw, 64):.1f}x | {relative:.2f} "
                f"| {amdahl(relative, 16):.1f}x | {amdahl(relative, 64):.1f}x |"
            )
    return lines


def build_kind(core: Path) -> str:
    """Whether the extension looks like a release build (debug builds are much larger)."""
    return "debug build" if core.stat().st_size > 20e6 else "release build"


if __name__ == "__main__":
    main()
