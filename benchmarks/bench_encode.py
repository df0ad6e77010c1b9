"""Encoder speed, side by side with every library we measure against, in one run.

Each library is built offline from the same local vocabulary file. Every repetition encodes text
that no library has seen before in this process (several cache what they encoded, which flatters
repeated runs), one call per paragraph, single thread. Libraries that are not installed are
skipped and say so. Results are printed as a Markdown table and, with ``--write``, stored in
``BENCHMARKS.md`` between markers.

    python benchmarks/bench_encode.py --write
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from _report import write_section
from corpus_text import CORPUS, PARAGRAPHS, first_quarter, paragraphs, prose, slices
from encode_libraries import (
    ADAPTERS,
    COUNTERS,
    Encode,
    build_bytepair,
    build_tiktoken,
    own_bytepair,
    vocab_path,
)

import bytepair
from bytepair import registry

T = TypeVar("T")


def time_calls(encode: Callable[[T], object], docs: Sequence[T]) -> float:
    """Seconds for ``encode`` of each of ``docs`` in turn, the collector off."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for d in docs:
            encode(d)
        return time.perf_counter() - start
    finally:
        gc.enable()


# ---- the benchmarks ---------------------------------------------------------------------------


def throughput(
    libraries: list[str], encodings: list[str], reps: int, target_bytes: int
) -> list[dict[str, Any]]:
    rows = []
    for name in encodings:
        built: dict[str, Encode] = {}
        for lib in libraries:
            try:
                built[lib] = ADAPTERS[lib](name)
            except Exception as e:
                note(
                    f"{lib}: not measured"
                    + ("" if isinstance(e, ImportError) else f" for {name}")
                    + f" ({unavailable(e)})"
                )
        for category in ["english", "code", "multilingual"]:
            runs = slices(paragraphs(category), reps + 1, target_bytes)
            warmup, measured = runs[0], runs[1:]
            rewarm = first_quarter(warmup)
            # The gate, on the warm-up text (untimed): a library that gives other ids than
            # tiktoken, or raises, on any of it is left out of this text's rows, with the reason.
            encoders = dict(built)
            for lib, reason in gate(encoders, warmup).items():
                note(f"{lib}: left out of {name} {category} ({reason})")
                del encoders[lib]
            reference = encoders["tiktoken"]
            times: dict[str, list[float]] = {lib: [] for lib in encoders}
            exact: dict[str, bool] = {lib: True for lib in encoders}
            nbytes = []
            for i, docs in enumerate(measured):
                nbytes.append(sum(len(d.encode("utf-8")) for d in docs))
                order = list(encoders)
                order = order[i % len(order) :] + order[: i % len(order)]
                for lib in order:
                    # Each library encodes part of the warm-up text again right before it is
                    # timed: the libraries timed before it have filled the caches with their own
                    # tables (measured: 7-21% of bytepair's time on half a MB, depending on the
                    # library before it), and a process that tokenizes uses one library, not ten.
                    time_calls(encoders[lib], rewarm)
                    try:
                        times[lib].append(time_calls(encoders[lib], docs))
                    except Exception as e:  # a limit the warm-up text did not reach
                        note(f"{lib}: left out of {name} {category} (raises: {unavailable(e)})")
                        del encoders[lib], times[lib], exact[lib]
                # Exactness on a sample of this run's paragraphs.
                for d in docs[:200]:
                    expected = list(reference(d))
                    for lib, encode in encoders.items():
                        got = encode(d)
                        # A count is checked against the number of ids.
                        same = (
                            got == len(expected) if isinstance(got, int) else list(got) == expected
                        )
                        if exact[lib] and not same:
                            exact[lib] = False
            mb = sum(nbytes) / 1e6
            for lib, encode in encoders.items():
                speed = mb / sum(times[lib])
                # The ratio of each repetition (all libraries ran it within seconds of each
                # other), then the median: a slow spell of the machine during one library's run
                # moves one repetition, not the result.
                pairs = zip(times["tiktoken"], times[lib], strict=True)
                per_rep = sorted(theirs / ours for theirs, ours in pairs)
                ratio = statistics.median(per_rep)
                returns = type(encode("a b")).__name__
                rows.append(
                    {
                        "encoding": name,
                        "text": category,
                        "library": lib,
                        # A list of Python ints costs more to build than an array: say which.
                        "returns": returns,
                        "MB/s": speed,
                        "x tiktoken": ratio,
                        "bytepair lead": lead(times, lib, returns),
                        # The spread of the repetitions' ratios: on a shared machine one
                        # repetition's ratio can be a quarter off the median.
                        "range": f"{per_rep[0]:.2f}-{per_rep[-1]:.2f}",
                        "same ids": exact[lib],
                        "MB": mb,
                    }
                )
            print(f"  {name} {category}: done", file=sys.stderr)
    return rows


# ---- short prompts ----------------------------------------------------------------------------


def prompts(count: int, seed: int) -> list[str]:
    """``count`` prompts of 10-100 bytes cut from paragraphs of every corpus kind (different
    for each ``seed``: libraries that cache would otherwise find every prompt seen before)."""
    import random

    rng = random.Random(seed)
    pool = [p for kind in ("english", "code", "multilingual") for p in paragraphs(kind)[:20000]]
    out: list[str] = []
    while len(out) < count:
        data = rng.choice(pool).encode("utf-8")
        size = rng.randint(10, 100)
        start = rng.randrange(max(1, len(data) - size))
        text = data[start : start + size].decode("utf-8", errors="ignore")
        if 10 <= len(text.encode("utf-8")) <= 100:
            out.append(text)
    return out


def short_prompts(
    libraries: list[str], encodings: list[str], reps: int, calls: int
) -> list[dict[str, Any]]:
    """Calls per second on prompts of 10-100 bytes, one call each: ``encode`` of every library
    and the counting calls there are, fresh prompts each repetition, gated like the rest."""
    rows = []
    for name in encodings:
        built: dict[str, Encode] = {}
        for lib in libraries:
            try:
                built[lib] = ADAPTERS[lib](name)
            except Exception as e:
                if not isinstance(e, ImportError):  # (said once, by the throughput table)
                    note(f"{lib}: no short-prompt row for {name} ({unavailable(e)})")
        for lib, build in COUNTERS.items():
            if lib not in built and lib.split(" ")[0] in [*libraries, "tiktoken"]:
                try:
                    built[lib] = build(name)
                except Exception as e:
                    note(f"{lib}: no short-prompt row for {name} ({unavailable(e)})")
        encoders = dict(built)
        warmup = prompts(calls, seed=0)
        for lib, reason in gate(encoders, warmup).items():
            note(f"{lib}: left out of {name} short prompts ({reason})")
            del encoders[lib]
        times: dict[str, list[float]] = {lib: [] for lib in encoders}
        for r in range(reps):
            batch = prompts(calls, seed=1 + r)
            order = list(encoders)
            order = order[r % len(order) :] + order[: r % len(order)]
            for lib in order:
                time_calls(encoders[lib], warmup[: calls // 4])
                times[lib].append(time_calls(encoders[lib], batch))
        for lib, encode in encoders.items():
            pairs = zip(times["tiktoken"], times[lib], strict=True)
            returns = type(encode("a b")).__name__
            rows.append(
                {
                    "encoding": name,
                    "library": lib,
                    "returns": returns,
                    "calls/s": calls * reps / sum(times[lib]),
                    "x tiktoken": statistics.median(t / o for t, o in pairs),
                    "bytepair lead": lead(times, lib, returns),
                }
            )
        print(f"  {name} short prompts: done", file=sys.stderr)
    return rows


NOTES: list[str] = []


def note(line: str) -> None:
    """A library left out, and why: printed now and listed under the tables."""
    print(f"  {line}", file=sys.stderr)
    NOTES.append(line)


def unavailable(e: Exception) -> str:
    if isinstance(e, ImportError):
        return f"not installed: {e.name or e}"
    return f"{type(e).__name__}: {str(e)[:160]}"


def gate(encoders: dict[str, Encode], docs: Sequence[str]) -> dict[str, str]:
    """Libraries whose ids differ from tiktoken's (or that raise) on some of ``docs``, with the
    first such document; every other library has encoded all of them (its warm-up)."""
    reference = encoders["tiktoken"]
    failed: dict[str, str] = {}
    for i, d in enumerate(docs):
        expected = list(reference(d))
        for lib, encode in encoders.items():
            if lib in failed:
                continue
            try:
                got = encode(d)
            except Exception as e:
                failed[lib] = f"raises on text {i} of the gate, {len(d)} chars: {unavailable(e)}"
                continue
            same = got == len(expected) if isinstance(got, int) else list(got) == expected
            if not same:
                failed[lib] = f"other ids than tiktoken on text {i} of the gate, {len(d)} chars"
    return failed


# The bytepair row with the same kind of output as a library: lists with lists, numpy arrays
# with encode_to_numpy, counts with count.
LIKE = {"ndarray": "bytepair (numpy)", "int": "bytepair (count)"}


def lead(times: dict[str, list[float]], lib: str, returns: str) -> float | str:
    """The library's time over the like bytepair row's, median of the repetitions (above
    1.10: bytepair leads by 10%)."""
    like = LIKE.get(returns, "bytepair")
    if like not in times:
        return ""
    pairs = zip(times[lib], times[like], strict=True)
    return statistics.median(theirs / ours for theirs, ours in pairs)


# The edge files of long runs (the worst-case bound is for these), then other inputs.
LONG_RUN_FILES = [
    "run_letter_a_500k.txt",
    "ws_spaces_200k.txt",
    "ws_spaces_word_spaces_300k.txt",
    "ws_newlines_lf_150k.txt",
    "ws_tabs_150k.txt",
    "digits_long_runs.txt",
    "runs_letters_various_scripts.txt",
]
OTHER_EDGE_FILES = ["base64_hex_blobs.txt"]


def worst_case(encodings: list[str]) -> list[dict[str, Any]]:
    """Per-byte time on long runs against English prose (bytepair; tiktoken for reference).

    ``kind`` tells the long-run edge files apart from the other inputs: an edge file of random
    base64 and hex blobs (short pieces, more than a quarter of them merged and nearly all of
    those distinct, so no cache helps: the slowest text per byte short of runs), and synthetic
    inputs (a million spaces, on which tiktoken's regex overflows its stack with o200k; one
    1 MB word; pieces just under the length where the linear-time search takes over)."""
    files = LONG_RUN_FILES + OTHER_EDGE_FILES
    english = prose()
    prose_bytes = len(english.encode())
    rows = []
    for name in encodings:
        encoders = {"bytepair": build_bytepair(name), "tiktoken": build_tiktoken(name)}
        texts = {f: (CORPUS / "edge" / f).read_text(encoding="utf-8") for f in files}
        texts["1M spaces (synthetic)"] = " " * 1_000_000
        texts["1 MB random letters, one word"] = random_letters(1_000_000)
        # The flat merge's worst case: pieces just under its 512-byte limit that merge at
        # every step (longer pieces take the linear-time search).
        texts["511-letter runs of 'a' (synthetic)"] = ("a" * 511 + " ") * 2000
        # Issue 31: long runs of whitespace, each then a letter; once they added up to the
        # backtracker's threshold, Llama 3 switched for good to a slow pair check on them.
        texts["1812 spaces then a letter, x580 (synthetic)"] = (" " * 1812 + "a") * 580
        texts["600 tabs then a letter, x1000 (synthetic)"] = ("\t" * 600 + "a") * 1000
        texts["129 newlines then a letter, x4000 (synthetic)"] = ("\n" * 129 + "a") * 4000
        texts["mixed whitespace then a letter, x2000 (synthetic)"] = (" \t\n" * 100 + "a") * 2000
        for label, text in texts.items():
            kind = (
                "long-run edge file"
                if label in LONG_RUN_FILES
                else "edge file"
                if label in OTHER_EDGE_FILES
                else "synthetic"
            )
            row: dict[str, Any] = {"encoding": name, "input": label, "kind": kind}
            for lib, encode in encoders.items():
                try:
                    # Prose and the input timed in turn, best of each: this machine has slow
                    # spells of a second or more, and one during the prose run alone would
                    # move every ratio.
                    prose_s, text_s = float("inf"), float("inf")
                    for _ in range(5):
                        prose_s = min(prose_s, time_calls(encode, [english]))
                        text_s = min(text_s, time_calls(encode, [text]))
                    per_byte = text_s / len(text.encode())
                    row[f"{lib} ns/byte"] = per_byte * 1e9
                    row[f"{lib} x prose"] = per_byte / (prose_s / prose_bytes)
                except BaseException as e:
                    row[f"{lib} ns/byte"] = float("nan")
                    row[f"{lib} x prose"] = f"fails: {type(e).__name__}"
            rows.append(row)
    return rows


def random_letters(n: int) -> str:
    import random

    rng = random.Random(0)
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n))


def _spin(n: int) -> float:
    """Seconds this process takes to add up ``range(n)``: work that touches no shared memory."""
    start = time.perf_counter()
    sum(range(n))
    return time.perf_counter() - start


def two_core_check(tries: int = 5, n: int = 5_000_000) -> float:
    """How many times one process's throughput two processes of pure arithmetic get (median of
    ``tries``): what this machine's second core gives at the moment, the ceiling of any
    two-thread measure taken in the same minutes (a shared virtual machine gave 0.9 to 2.4).
    """
    ratios = []
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.map(_spin, [1000, 1000])  # both workers started
        for _ in range(tries):
            one = _spin(n)
            start = time.perf_counter()
            pool.map(_spin, [n, n])
            ratios.append(2 * one / (time.perf_counter() - start))
    return statistics.median(ratios)


def english_runs(target_bytes: int) -> list[list[str]]:
    """The English corpus as runs of paragraphs of at least ``target_bytes`` each (the short
    remainder dropped): the rounds of :func:`threads`, in its processes too."""
    runs = slices(paragraphs("english"), 10**6, target_bytes)
    return [r for r in runs if sum(len(p.encode()) for p in r) >= target_bytes]


def _encoder_process(conn: Any, start: Any, name: str, target_bytes: int) -> None:
    """One of :class:`EncoderProcesses`: on ``(round, part)`` it encodes that round's paragraphs
    (``part`` 0: all of them; 1 or 2: that half, starting together with the other process) on
    one thread and sends back the seconds it took."""
    enc = own_bytepair(name)
    runs = english_runs(target_bytes)
    enc.encode_ordinary_batch(runs[0], num_threads=1)
    conn.send("ready")
    while (job := conn.recv()) is not None:
        index, part = job
        docs = runs[index]
        if part:
            half = len(docs) // 2
            docs = docs[:half] if part == 1 else docs[half:]
            start.wait()
        conn.send(time_calls(lambda d: enc.encode_ordinary_batch(d, num_threads=1), [docs]))


class EncoderProcesses:
    """Two processes with an encoder each, for the ceiling of the two-thread measure: two
    processes, each encoding half of a round's paragraphs on one thread of its own, share no
    memory and hand no lists between threads, so how many times one process's throughput they
    get is what the machine gives this work on two cores at that moment."""

    def __init__(self, name: str, target_bytes: int) -> None:
        ctx = multiprocessing.get_context("spawn")
        start = ctx.Barrier(2)
        pipes = [ctx.Pipe() for _ in range(2)]
        self.procs = [
            ctx.Process(target=_encoder_process, args=(child, start, name, target_bytes))
            for _, child in pipes
        ]
        for p in self.procs:
            p.start()
        self.conns = [parent for parent, _ in pipes]
        for c in self.conns:
            c.recv()

    def one(self, index: int) -> float:
        """Seconds one process takes for round ``index`` (the processes take turns)."""
        conn = self.conns[index % 2]
        conn.send((index, 0))
        seconds: float = conn.recv()
        return seconds

    def two(self, index: int) -> float:
        """The longer of the two processes' times for their halves of round ``index``, each
        timed from the moment both were ready (a barrier)."""
        for part, conn in enumerate(self.conns, start=1):
            conn.send((index, part))
        halves: list[float] = [conn.recv() for conn in self.conns]
        return max(halves)

    def close(self) -> None:
        for conn in self.conns:
            conn.send(None)
        for p in self.procs:
            p.join()


def threads(name: str, target_bytes: int, rounds: int = 90) -> list[dict[str, Any]]:
    """``encode_ordinary_batch`` on one and on two threads, and two processes against one.

    Each round measures all four on the same run of paragraphs, one right after the other, in
    an order that alternates from round to round: paragraphs of different books differ in cost
    far more than the modes do. The rounds cycle through the English corpus in runs of
    ``target_bytes``; a run comes back after all the others (about 15 MB), so no cache holds
    any of it.

    Two threads over one is the median over the rounds of each round's ratio, as the throughput
    table takes its ratios, and for the same reason: this kind of machine moves one process's
    speed by a factor of two within seconds, and two threads need both cores quiet at once. Two
    processes measured in the same rounds show what the second core gave this very work (each
    process encodes on one thread and makes its own lists): with a program doing nothing but
    arithmetic on the other core, the Rust encoder alone ran at 0.65 of its speed in some
    seconds and at full speed in others. Hence many short rounds spread over a few seconds, the
    spread of the rounds' ratios, and the two-process rows next to the two-thread ones.
    (``count`` is a row of the throughput table, measured there like every library: run on the
    text of this table after another mode, it would find the words already merged.)
    """
    enc = own_bytepair(name)
    runs = english_runs(target_bytes)
    enc.encode_ordinary_batch(runs[0], num_threads=2)  # warm up: pools, caches, shared ints
    processes = EncoderProcesses(name, target_bytes)

    def measure(mode: str, index: int) -> float:
        if mode == "1 process":
            return processes.one(index)
        if mode == "2 processes":
            return processes.two(index)
        count = 1 if mode == "1 thread" else 2
        return time_calls(lambda d: enc.encode_ordinary_batch(d, num_threads=count), [runs[index]])

    modes = ["1 thread", "2 threads", "1 process", "2 processes"]
    seconds: dict[str, list[float]] = {mode: [] for mode in modes}
    mb: list[float] = []
    try:
        for r in range(rounds):
            index = 1 + r % (len(runs) - 1)
            mb.append(sum(len(d.encode()) for d in runs[index]) / 1e6)
            for mode in modes if r % 2 == 0 else [modes[1], modes[0], modes[3], modes[2]]:
                seconds[mode].append(measure(mode, index))
    finally:
        processes.close()

    def speed(mode: str) -> float:
        return statistics.median(m / t for m, t in zip(mb, seconds[mode], strict=True))

    def per_round(one: str, two: str) -> list[float]:
        return sorted(a / b for a, b in zip(seconds[one], seconds[two], strict=True))

    threaded = per_round("1 thread", "2 threads")
    separate = per_round("1 process", "2 processes")
    return [
        {"measure": "batch, 1 thread (MB/s), median of the rounds", "value": speed("1 thread")},
        {"measure": "batch, 2 threads (MB/s), median of the rounds", "value": speed("2 threads")},
        {
            "measure": "2 threads / 1 thread (median of the rounds)",
            "value": statistics.median(threaded),
        },
        {"measure": "range of the rounds", "value": f"{threaded[0]:.2f}-{threaded[-1]:.2f}"},
        {
            "measure": "2 processes / 1 process of this encoder, same rounds (median)",
            "value": statistics.median(separate),
        },
        {"measure": "range of those rounds", "value": f"{separate[0]:.2f}-{separate[-1]:.2f}"},
        {
            "measure": "two processes of pure arithmetic / one (the machine, now)",
            "value": two_core_check(),
        },
    ]


def construction(name: str = "o200k_base", repeat: int = 7) -> list[dict[str, Any]]:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    spec = registry.ENCODINGS[name]
    path = vocab_path(name)

    def ours() -> None:
        bytepair.Encoding.from_tiktoken_file(
            path, pat_str=spec.pat_str, special_tokens=spec.special_tokens, name=name
        )

    def theirs() -> None:
        tiktoken.Encoding(
            name,
            pat_str=spec.pat_str,
            mergeable_ranks=load_tiktoken_bpe(str(path)),
            special_tokens=spec.special_tokens,
        )

    # Alternating, so that a slow spell of the machine hits both libraries alike.
    builds = {"bytepair": ours, "tiktoken": theirs}
    best = dict.fromkeys(builds, float("inf"))
    for _ in range(repeat):
        for lib, build in builds.items():
            gc.collect()
            t = time.perf_counter()
            build()
            best[lib] = min(best[lib], time.perf_counter() - t)
    rows: list[dict[str, Any]] = [{"library": lib, "seconds": s} for lib, s in best.items()]
    rows.append({"library": "bytepair / tiktoken", "seconds": best["bytepair"] / best["tiktoken"]})
    return rows


# ---- output -----------------------------------------------------------------------------------


def markdown(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(no rows)\n"
    columns = list(dict.fromkeys(k for r in rows for k in r))

    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.2f}"
        return str(v)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(r.get(c, "")) for c in columns) + " |" for r in rows]
    return "\n".join(lines) + "\n"


SECTIONS = ("throughput", "prompts", "worst", "threads", "construction")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--mb", type=float, default=0.8, help="MB of fresh text per repetition")
    parser.add_argument("--libraries", default=",".join(ADAPTERS))
    parser.add_argument("--encodings", default="cl100k_base,o200k_base")
    parser.add_argument("--prompts", type=int, default=20000, help="short prompts per repetition")
    parser.add_argument(
        "--sections",
        default=",".join(SECTIONS),
        help="which sections to run (a short smoke run: --sections throughput,prompts)",
    )
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args()
    chosen = args.sections.split(",")
    if args.write and chosen != list(SECTIONS):
        parser.error("--write needs every section (BENCHMARKS.md holds one whole run)")
    libraries = args.libraries.split(",")
    encodings = args.encodings.split(",")
    target = int(args.mb * 1e6)

    started = time.strftime("%Y-%m-%d %H:%M")
    sections = []
    if "throughput" in chosen:
        print("throughput ...", file=sys.stderr)
        rows = throughput(libraries, encodings, args.reps, target)
        sections.append(
            "### Single-thread `encode_ordinary`, one call per paragraph\n\n"
            f"{args.reps} repetitions of ~{args.mb} MB of fresh {PARAGRAPHS} per text kind, "
            "the libraries in turn (the order rotates); before each timed run a library encodes a "
            "quarter of the warm-up text again, so that it starts with its own tables in cache, as "
            "in a process that uses one tokenizer. `same ids` compares 200 paragraphs of each "
            "repetition with tiktoken. `x tiktoken` is against tiktoken's `encode_ordinary` (the "
            "median over the repetitions of each one's ratio, `range` the lowest and highest of "
            "them; MB/s is over all of them), which "
            "returns a list; `returns` says what each call gives back (`ndarray`: no Python ints "
            "are made, compare with `bytepair (numpy)`). `bytepair (count)` is `Encoding.count` "
            "(default arguments): the number of ids, timed like the rest. Before any "
            "timing, each library encodes the warm-up text and is left out of that text's rows, "
            "with the reason listed below, where its ids differ from tiktoken's or it raises. "
            "`bytepair lead` is the library's time over the time of the bytepair row with the "
            "same output (lists with `bytepair`, arrays with `bytepair (numpy)`, counts with "
            "`bytepair (count)`), median of the repetitions: above 1.10 bytepair leads by 10% or "
            "more.\n\n" + markdown(rows)
        )
    if "prompts" in chosen:
        print("short prompts ...", file=sys.stderr)
        rows = short_prompts(libraries, encodings, args.reps, args.prompts)
        sections.append(
            "### Short prompts: calls per second, 10-100 bytes each\n\n"
            f"{args.reps} repetitions of {args.prompts} prompts of 10-100 bytes cut at random "
            "from paragraphs of all three kinds (new prompts each repetition, the libraries in "
            "turn), one call per prompt: the per-call cost that `count` on chat turns pays. "
            "The `encode` rows are the throughput table's calls; the count rows are the "
            "counting calls that libraries have (tiktoken's is the length of its list). Gated "
            "like the throughput table; `bytepair lead` as there.\n\n" + markdown(rows)
        )
    if "worst" in chosen:
        print("worst case ...", file=sys.stderr)
        sections.append(
            "### Worst case: time per byte on long runs, against English prose\n\n"
            "Each input and 3000 English paragraphs (one text) are encoded in one call each, in "
            "turn, best of five. The bound of the fast-encoder issue (at most 3x prose) is for "
            "the long-run edge files; the other rows show how far from prose the slowest text "
            "gets and that merging stays linear in the length of a piece.\n\n"
            + markdown(worst_case(encodings))
        )
    if "threads" in chosen:
        print("threads ...", file=sys.stderr)
        for name in encodings:
            sections.append(
                f"### Two threads ({name}, english)\n\n"
                f"`encode_ordinary_batch` of ~{args.mb / 2} MB of paragraphs per round, 90 "
                "rounds cycling through the English corpus (no cache holds a round's text when "
                "it comes back), one and two threads in each round, then two processes of the "
                "same encoder each encoding half of it against one process encoding all of it "
                "(the order alternates); each ratio is the median of the rounds' ratios.\n\n"
                + markdown(threads(name, target // 2))
            )
    if "construction" in chosen:
        print("construction ...", file=sys.stderr)
        sections.append(
            "### Building o200k_base from its file (best of 7, alternating)\n\n"
            + markdown(construction())
        )
    if NOTES:
        sections.append(
            "### Libraries not measured, and rows left out\n\n"
            + "".join(f"- {line}\n" for line in dict.fromkeys(NOTES))
        )
    header = (
        f"Run {started} on {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
        f"`python benchmarks/bench_encode.py --reps {args.reps} --mb {args.mb} "
        f"--prompts {args.prompts}`.\n\n"
    )
    report = header + "\n".join(sections)
    print(report)
    if args.write:
        write_section(report, marker="encode")


if __name__ == "__main__":
    main()
