"""One Encoding shared by many threads gives what one thread gives; fork() after use is safe.

The compiled encoder is immutable (a frozen pyclass, ``Sync``) and releases the GIL, so threads
really run at once in Rust. Batch calls reuse a pool of ``num_threads`` threads kept per process:
a forked child, which has none of its parent's threads, starts its own, and no lock the child
needs is ever waited on.
"""

from __future__ import annotations

import functools
import gc
import json
import os
import random
import signal
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import bytepair
from bytepair import _core, patterns

from anchors import ours
from conftest import shared_path

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

SPECIAL_SETS: list[Any] = [
    "all",
    {"<|endoftext|>"},
    {"<|fim_prefix|>", "<|fim_suffix|>"},
    {"<|endofprompt|>", "<|endoftext|>", "<|fim_middle|>"},
    set(),
]


@functools.cache
def texts() -> list[str]:
    """A few hundred varied lines: many scripts, emoji, special-token lookalikes, long runs."""
    rng = random.Random(7)
    out = []
    for name in [
        ("multilingual", "tweets_xlmt_8langs_with_emoji.txt"),
        ("multilingual", "tatoeba_80_more_languages.txt"),
        ("edge", "special_token_lookalikes.txt"),
        ("code", "python_cpython_3.11.7_stdlib_35_modules.py"),
    ]:
        lines = shared_path("corpus", *name).read_text(encoding="utf-8").splitlines()
        out += rng.sample(lines, 60)
    return [*out, "a" * 5000, " " * 5000, "<|endoftext|>" * 50, ""]


def work(enc: bytepair.Encoding, batch: list[str], specials: Any) -> list[Any]:
    """Everything a caller does with an encoding, as plain data to compare."""
    out: list[Any] = []
    for text in batch:
        ids = enc.encode(text, allowed_special=specials, disallowed_special=())
        out.append(
            (
                ids,
                enc.encode_ordinary(text),
                enc.count(text, allowed_special=specials, disallowed_special=()),
                enc.decode(ids),
                enc.decode_tokens_bytes(ids[:20]),
            )
        )
    out.append(
        enc.encode_batch(batch, num_threads=2, allowed_special=specials, disallowed_special=())
    )
    out.append(enc.count_batch(batch, num_threads=2, disallowed_special=()))
    out.append(enc.encode_ordinary_batch(batch, num_threads=3))
    out.append(enc.decode_batch([x[0] for x in out[: len(batch)]]))
    return out


@contextmanager
def switch_often() -> Iterator[None]:
    # Hand the GIL over every 10 microseconds, so Python-level steps interleave as much as they can.
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def test_many_threads_share_one_encoding() -> None:
    enc = ours("cl100k_base")
    batch = texts()
    expected = {i: work(enc, batch, s) for i, s in enumerate(SPECIAL_SETS)}
    n_threads = 12
    barrier = threading.Barrier(n_threads)
    failures: list[str] = []

    def thread(k: int) -> None:
        barrier.wait()
        for round_ in range(2):
            i = (k + round_) % len(SPECIAL_SETS)
            if work(enc, batch, SPECIAL_SETS[i]) != expected[i]:
                failures.append(f"thread {k} round {round_}")

    with switch_often():
        threads = [threading.Thread(target=thread, args=(k,)) for k in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert failures == []


def run_forked(child: Callable[[], Any], timeout: float = 120) -> Any:
    """Run ``child`` in a forked process; return what it returned (through JSON) or fail."""
    fd, path = tempfile.mkstemp(prefix="bytepair-fork-", suffix=".json")
    os.close(fd)
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns that forking a multi-threaded process may deadlock: that risk
            # is exactly what these tests check.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the child: never return into pytest
            code = 1
            try:
                with open(path, "w") as f:
                    json.dump(child(), f)
                code = 0
            finally:
                os._exit(code)
        deadline = time.monotonic() + timeout
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                pytest.fail(f"the forked child hung for {timeout} s")
            time.sleep(0.02)
        assert os.waitstatus_to_exitcode(status) == 0, "the forked child failed"
        with open(path) as f:
            return json.load(f)
    finally:
        os.unlink(path)


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(value, default=lambda b: b.hex()))


def test_fork_after_use() -> None:
    enc = ours("cl100k_base")
    batch = texts()[:80]
    expected = as_json(work(enc, batch, "all"))  # the parent has used every path, threads too
    assert run_forked(lambda: as_json(work(enc, batch, "all"))) == expected
    # A fresh encoding in the child works too (the registry's cache and lock were copied).
    child = run_forked(
        lambda: bytepair.get_encoding("cl100k_base", vocab_dir=shared_path("vocab")).encode("fork")
    )
    assert child == enc.encode("fork")


def test_piece_counter_used_across_fork() -> None:
    # The counter keeps its thread pool between calls; a child must start its own, not wait
    # for the parent's threads, which fork did not copy.
    counter = _core.PieceCounter(patterns.CL100K)
    batch = texts()[:80]
    counter.add_texts(batch, 2)
    expected = counter.items()

    def child() -> Any:
        counter.add_texts(batch, 2)
        return as_json(counter.items())

    doubled = [(piece, 2 * n) for piece, n in expected]
    assert run_forked(child) == as_json(doubled)


def test_fork_while_other_threads_encode() -> None:
    enc = ours("cl100k_base")
    batch = texts()[:80]
    expected = as_json(work(enc, batch, {"<|endoftext|>"}))
    stop = threading.Event()

    def busy(k: int) -> None:
        while not stop.is_set():
            enc.encode_batch(batch, num_threads=2, allowed_special=SPECIAL_SETS[k % 5])
            enc.encode(batch[k], allowed_special=SPECIAL_SETS[(k + 1) % 5], disallowed_special=())

    threads = [threading.Thread(target=busy, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    try:
        time.sleep(0.2)
        for _ in range(3):
            got = run_forked(lambda: as_json(work(enc, batch, {"<|endoftext|>"})))
            assert got == expected
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=120)


def test_encode_inside_a_finalizer_while_a_list_is_made() -> None:
    # Lists of ids share one int per id, kept in slots the encoder locks while it makes a list.
    # Making the list can start the garbage collector (Python 3.11 collects inside the
    # allocation), whose finalizers may encode with the same encoder on the same thread: that
    # call must not wait for the lock it already holds, and must still return the right ids.
    enc = ours("cl100k_base")
    text = "Finalizers run in the middle of other work, 12345 times."
    expected = enc.encode_ordinary(text)
    expected_outer = enc.encode_ordinary(text * 3)
    inner: list[list[int]] = []
    outer_running = False
    ran_inside: list[bool] = []

    class EncodesWhenCollected:
        def __init__(self) -> None:
            self.cycle = self

        def __del__(self) -> None:
            ran_inside.append(outer_running)
            inner.append(enc.encode_ordinary(text))

    # The collector is set to run at the next allocation of a tracked object, which must be the
    # list's: the method is bound before, and the interpreter's spare lists are used up (a list
    # taken from them is no allocation).
    encode, longer = enc.encode_ordinary, text * 3
    old = gc.get_threshold()
    try:
        spare_lists_used_up = [[] for _ in range(1000)]
        gc.collect()
        for _ in range(50):
            EncodesWhenCollected()
        gc.set_threshold(1)
        outer_running = True
        outer = encode(longer)
        outer_running = False
    finally:
        gc.set_threshold(*old)
    del spare_lists_used_up
    gc.collect()
    assert outer == expected_outer
    assert inner and all(ids == expected for ids in inner)
    if sys.version_info < (3, 12):
        assert any(ran_inside), "no finalizer ran while the list was made"
    # Outside such a call, the ints are shared: the second list holds the first one's objects
    # (where the build shares ints: not in the portable build).
    again = enc.encode_ordinary(text)
    if _core.CPYTHON_INTERNALS:
        assert all(a is b for a, b in zip(enc.encode_ordinary(text), again, strict=True))
