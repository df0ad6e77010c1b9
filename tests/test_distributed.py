"""bytepair.distributed: what a document is, shard planning, errors that name file and line,
tokenize/train on local processes and on a real local Ray cluster compared with one process,
worker crashes, resuming, and Hugging Face datasets with num_proc."""

from __future__ import annotations

import doctest
import gzip
import importlib
import itertools
import json
import os
import pickle
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import registry
from bytepair.distributed import (
    InputError,
    Manifest,
    Workers,
    count_pieces,
    load_tokens,
    tokenize,
    train,
)
from bytepair.distributed.hf import DatasetEncoder
from bytepair.distributed.inputs import Reader, list_inputs, plan_shards
from bytepair.train import count_pieces as count_pieces_one_process

from conftest import shared_path

pq = pytest.importorskip("pyarrow.parquet")
pa = pytest.importorskip("pyarrow")

SHARD_SIZE = 16_000  # small shards: the corpus below makes about 25 of them
WHITESPACE = " \t\n\r\x0b\x0c"  # what a blank line may hold


# ---- the corpus: files cut from shared/corpus, and how one process reads them ---------------


def _cut(*parts: str, size: int) -> str:
    text = shared_path("corpus", *parts).read_text(encoding="utf-8")
    return text[:size]


@pytest.fixture(scope="module")
def enc() -> bytepair.Encoding:
    return registry.get_encoding("gpt2", vocab_dir=shared_path("vocab"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Files of every format, in the order a job reads them."""
    root = tmp_path_factory.mktemp("corpus")
    files: list[Path] = []

    def add(name: str) -> Path:
        files.append(root / name)
        return files[-1]

    add("00_moby.txt").write_text(
        _cut("english", "gutenberg_2701_melville_moby_dick.txt", size=40_000), encoding="utf-8"
    )
    add("01_ru.txt").write_text(
        _cut("multilingual", "tatoeba_rus_russian.txt", size=20_000), encoding="utf-8"
    )
    add("02_code.txt").write_text(
        _cut("code", "python_cpython_3.11.7_stdlib_35_modules.py", size=20_000), encoding="utf-8"
    )
    war = _cut("english", "gutenberg_2600_tolstoy_war_and_peace.txt", size=100_000)
    with add("03_war.jsonl").open("w", encoding="utf-8") as f:
        for i, para in enumerate(war.split("\n\n")):
            f.write(json.dumps({"id": i, "text": para}) + "\n")
            if i % 50 == 0:
                f.write("\n")  # blank lines are skipped
    zh = _cut("multilingual", "wikipedia_cmrc2018_zh_chinese.txt", size=40_000).split("\n")
    pq.write_table(
        pa.table({"n": list(range(len(zh))), "text": zh}), add("04_zh.parquet"), row_group_size=20
    )
    emma = _cut("english", "gutenberg_158_austen_emma.txt", size=30_000)
    with gzip.open(add("05_emma.jsonl.gz"), "wt", encoding="utf-8") as f:
        for para in emma.split("\n\n"):
            f.write(json.dumps({"text": para}, ensure_ascii=False) + "\n")
    add("06_empty.txt").write_bytes(b"")
    add("07_tweets.txt").write_text(
        _cut("multilingual", "tweets_xlmt_8langs_with_emoji.txt", size=10_000), encoding="utf-8"
    )
    return [str(p) for p in files]


def one_process_documents(paths: Sequence[str]) -> list[str]:
    """The documents of ``paths`` read the plain way: a .txt file is one document."""
    docs: list[str] = []
    for path in paths:
        if path.endswith(".parquet"):
            docs += pq.read_table(path).column("text").to_pylist()
            continue
        opener: Any = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as f:
            data = f.read().decode("utf-8")
        if ".jsonl" in path:
            docs += [json.loads(line)["text"] for line in data.split("\n") if line.strip()]
        else:
            docs.append(data)
    return docs


def one_process_tokens(enc: bytepair.Encoding, docs: Sequence[str]) -> list[list[int]]:
    return [[*enc.encode_ordinary(doc), enc.eot_token] for doc in docs]


def as_lists(directory: Path) -> list[list[int]]:
    return [doc.tolist() for doc in load_tokens(directory).documents()]


class CrashingEncoding(bytepair.Encoding):
    """Kills the worker process that first meets document ``trigger`` (once: then ``marker``
    exists), in the middle of the job and of a shard; appends the id of each process that
    encodes a batch to the file ``log``, if there is one."""

    marker: str
    trigger: str | None
    log: str | None

    def __getstate__(self) -> dict[str, Any]:
        probe = {"marker": self.marker, "trigger": self.trigger, "log": self.log}
        return {**super().__getstate__(), **probe}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.marker, self.trigger, self.log = (
            state.pop("marker"),
            state.pop("trigger"),
            state.pop("log"),
        )
        super().__setstate__(state)

    def encode_ordinary_batch(self, text: Sequence[str], *, num_threads: int = 1) -> Any:
        if self.log is not None:
            with open(self.log, "a") as f:
                f.write(f"{os.getpid()}\n")
        if self.trigger in text and not os.path.exists(self.marker):
            Path(self.marker).touch()
            os._exit(3)
        return super().encode_ordinary_batch(text, num_threads=num_threads)


def crashing(
    enc: bytepair.Encoding, marker: Path, trigger: str | None, log: Path | None = None
) -> CrashingEncoding:
    crash = CrashingEncoding.__new__(CrashingEncoding)
    probe = {"marker": str(marker), "trigger": trigger, "log": log and str(log)}
    crash.__setstate__({**enc.__getstate__(), **probe})
    return crash


def worker_pid(seconds: float) -> int:
    """A job's task: the process that ran it (after ``seconds``, so that every worker gets
    some of the tasks)."""
    time.sleep(seconds)
    return os.getpid()


def pids(workers: Workers) -> set[int]:
    return {pid for _, pid in workers.run(worker_pid, [0.02] * 8)}


def jobs_keep_their_workers(workers: Workers, tmp_path: Path, corpus: list[str]) -> None:
    """Counts, tokenizes, fails on a bad input, crashes and tokenizes again on ``workers``:
    each job's output as one process makes it, and no process started beyond the two that
    each failure replaces (a process per job would be two more per job)."""
    enc = registry.get_encoding("gpt2", vocab_dir=shared_path("vocab"))
    docs = one_process_documents(corpus)
    seen = pids(workers)
    assert len(seen) <= 2
    run: dict[str, Any] = dict(engine=workers, shard_size=SHARD_SIZE, show_progress=False)
    counts = count_pieces(corpus, pattern="gpt2", **run)
    assert counts.items() == count_pieces_one_process(docs, pattern="gpt2").items()
    log = tmp_path / "pids"
    tokenize(corpus, crashing(enc, log, trigger=None, log=log), tmp_path / "a", **run)
    assert as_lists(tmp_path / "a") == one_process_tokens(enc, docs)
    assert {int(pid) for pid in log.read_text().split()} <= seen, "the job had its own workers"
    seen |= pids(workers)
    assert len(seen) <= 2
    bad = tmp_path / "zz_bad.jsonl"
    bad.write_text('{"text": 12}\n')
    with pytest.raises(InputError, match=r"zz_bad\.jsonl:1: field 'text' is int"):
        tokenize([*corpus, bad], enc, tmp_path / "b", **run)
    marker = tmp_path / "crashed"
    tokenize(corpus, crashing(enc, marker, trigger=docs[len(docs) // 2]), tmp_path / "c", **run)
    assert marker.exists()
    assert as_lists(tmp_path / "c") == one_process_tokens(enc, docs)
    seen |= pids(workers)
    assert len(seen) <= 6
    # One job at a time: a second is refused while the first runs, and runs after it.
    first = workers.run(worker_pid, [0.0] * 4)
    next(first)
    with pytest.raises(RuntimeError, match="is running another job: one job at a time"):
        count_pieces(corpus, pattern="gpt2", **run)
    with pytest.raises(RuntimeError, match="is running another job"):
        next(workers.run(worker_pid, [0.0]))
    first.close()
    assert counts.items() == count_pieces(corpus, pattern="gpt2", **run).items()
    with pytest.raises(ValueError, match="num_workers is set by the Workers"):
        tokenize(corpus, enc, tmp_path / "d", num_workers=2, **run)
    with pytest.raises(ValueError, match="max_retries is set by the Workers"):
        count_pieces(corpus, max_retries=1, **run)


# ---- what a document is, and shards ---------------------------------------------------------


def reference_lines(text: str) -> list[str]:
    return [line for line in re.split(r"\r?\n", text) if line.strip(WHITESPACE)]


def reference_paragraphs(text: str) -> list[str]:
    paragraphs, current = [], []
    for line in re.findall(r"[^\n]*\n|[^\n]+$", text):
        if line.strip(WHITESPACE):
            current.append(line)
        elif current:
            paragraphs.append(current)
            current = []
    if current:
        paragraphs.append(current)
    return [re.sub(r"\r?\n$", "", "".join(p)) for p in paragraphs]


def read_all(paths: list[str], shard_size: int, **options: Any) -> list[str]:
    files = list_inputs(
        paths, format=options.pop("format", None), filesystem=options.pop("filesystem", None)
    )
    reader = Reader(files, **options)
    shards = plan_shards(files, shard_size, reader.sample_by)
    return [doc for shard in shards for p in shard.pieces for doc in reader.documents(p)]


lines = st.lists(
    st.sampled_from(["", " ", "\t ", "\r", "a", "bc d", "é ü", "x\r", "  y  ", "\x0c", "ж"]),
    max_size=30,
)


@pytest.mark.slow
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=lines, final_newline=st.booleans(), crlf=st.booleans())
def test_every_cut_gives_the_lines_and_paragraphs_of_a_plain_split(
    tmp_path: Path, lines: list[str], final_newline: bool, crlf: bool
) -> None:
    text = ("\r\n" if crlf else "\n").join(lines) + ("\n" if final_newline else "")
    path = tmp_path / "t.txt"
    path.write_bytes(text.encode("utf-8"))
    size = len(text.encode("utf-8"))
    for shard_size in sorted({1, 2, 3, 5, 8, max(1, size // 3), max(1, size)}):
        assert read_all([str(path)], shard_size, sample_by="line") == reference_lines(text)
        assert read_all([str(path)], shard_size, sample_by="paragraph") == (
            reference_paragraphs(text)
        )
        jsonl = tmp_path / "t.jsonl"
        jsonl.write_text("".join(json.dumps({"text": line}) + "\n\n" for line in lines))
        assert read_all([str(jsonl)], shard_size) == lines


def test_plan_depends_only_on_the_inputs_and_covers_them(corpus: list[str]) -> None:
    files = list_inputs(corpus)
    shards = plan_shards(files, SHARD_SIZE, "document")
    assert shards == plan_shards(list_inputs(corpus), SHARD_SIZE, "document")
    assert [s.index for s in shards] == list(range(len(shards)))
    # The big jsonl file is cut at bytes, the parquet file at row groups, small files grouped.
    war = [p for s in shards for p in s.pieces if files[p.file].name.endswith("03_war.jsonl")]
    assert len(war) > 3 and war[0].start == 0 and war[-1].end == files[war[0].file].size
    assert all(a.end == b.start for a, b in itertools.pairwise(war))
    zh = [p for s in shards for p in s.pieces if files[p.file].format == "parquet"]
    assert len(zh) > 1 and all(a.end == b.start for a, b in itertools.pairwise(zh))
    # Reading all shards gives every document once, in input order.
    assert read_all(corpus, SHARD_SIZE) == one_process_documents(corpus)


def test_folders_and_globs_expand_sorted(tmp_path: Path) -> None:
    for name in ["b.txt", "a.jsonl", "sub/c.parquet", "notes.md", ".hidden.txt"]:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    names = [Path(f.name).name for f in list_inputs(tmp_path)]
    assert names == ["a.jsonl", "b.txt", "c.parquet"]
    assert [Path(f.name).name for f in list_inputs(str(tmp_path / "*.txt"))] == ["b.txt"]
    with pytest.raises(InputError, match=r"notes\.md: cannot tell the format.*format="):
        list_inputs(tmp_path / "notes.md")
    assert list_inputs(tmp_path / "notes.md", format="txt")[0].format == "txt"
    with pytest.raises(FileNotFoundError, match="no such file"):
        list_inputs(tmp_path / "missing.jsonl")
    (tmp_path / "b.txt").write_text("one\n\ntwo\n")
    assert read_all([(tmp_path / "b.txt").as_uri()], 3, sample_by="paragraph") == ["one", "two"]


def test_pyarrow_filesystems_read_the_same_documents(corpus: list[str]) -> None:
    # The code path of s3://, gs://, hdfs:// ... inputs, on pyarrow's local filesystem.
    fs = pytest.importorskip("pyarrow.fs").LocalFileSystem()
    files = list_inputs(str(Path(corpus[0]).parent / "*"), filesystem=fs)
    assert [f.path for f in files] == corpus and all(f.fs is fs for f in files)
    assert read_all(corpus, SHARD_SIZE, filesystem=fs) == one_process_documents(corpus)
    assert read_all(corpus[:2], 5000, filesystem=fs, sample_by="paragraph") == read_all(
        corpus[:2], 5000, sample_by="paragraph"
    )


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "bad.jsonl",
            b'{"text": "a"}\n\n{"body": "b", "id": 2}\n',
            r"bad\.jsonl:3: no field 'text' \(fields: 'body', 'id'\)",
        ),
        ("bad.jsonl", b'{"text": "a"}\n{"text": \n', r"bad\.jsonl:2: not valid JSON"),
        ("bad.jsonl", b'{"text": 5}\n', r"bad\.jsonl:1: field 'text' is int, not a string"),
        ("bad.jsonl", b'["text"]\n', r"bad\.jsonl:1: expected a JSON object, got list"),
        (
            "bad.txt",
            b"fine\nfine\nbad \xff byte\n",
            r"bad\.txt:3: not valid UTF-8 \(byte 14\).*decode_errors=",
        ),
    ],
)
def test_errors_name_file_and_line(
    tmp_path: Path, enc: bytepair.Encoding, name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    for shard_size in (1, 1000):
        with pytest.raises(InputError, match=message):
            tokenize(
                path,
                enc,
                tmp_path / f"out{shard_size}",
                engine="local",
                num_workers=0,
                sample_by="line",
                shard_size=shard_size,
                show_progress=False,
            )
    with pytest.raises(InputError, match=message):
        count_pieces(path, engine="local", num_workers=0, sample_by="line", show_progress=False)


def test_parquet_errors_name_file_column_and_row(tmp_path: Path, enc: bytepair.Encoding) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"body": ["a", "b", None]}), path, row_group_size=1)
    run = dict(engine="local", num_workers=0, show_progress=False)
    with pytest.raises(InputError, match=r"t\.parquet: no column 'text' \(columns: 'body'\)"):
        tokenize(path, enc, tmp_path / "out", **run)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"t\.parquet: row 2: 'body' is null"):
        tokenize(path, enc, tmp_path / "out2", text_field="body", shard_size=1, **run)  # type: ignore[arg-type]
    pq.write_table(pa.table({"text": [1, 2]}), path)
    with pytest.raises(InputError, match=r"column 'text' is int64, not strings"):
        tokenize(path, enc, tmp_path / "out3", **run)  # type: ignore[arg-type]


def test_missing_ray_is_a_one_line_install_hint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, enc: bytepair.Encoding
) -> None:
    (tmp_path / "a.txt").write_text("hello")
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(
        ImportError, match=r"^engine='ray' .*needs ray: pip install 'bytepair\[ray\]'$"
    ):
        tokenize(tmp_path / "a.txt", enc, tmp_path / "out", engine="ray", show_progress=False)


def test_only_the_distributed_package_imports_ray() -> None:
    code = (
        "import sys, bytepair, bytepair.train, bytepair.registry\n"
        "assert 'bytepair.distributed' not in sys.modules\n"
        "import bytepair.distributed\n"
        "assert 'ray' not in sys.modules and 'pyarrow' not in sys.modules, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("module", ["bytepair.distributed", "bytepair.distributed.hf"])
def test_doctests(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0


def test_bad_arguments(tmp_path: Path, enc: bytepair.Encoding) -> None:
    (tmp_path / "a.txt").write_text("hello")
    kw: dict[str, Any] = dict(engine="local", num_workers=0, show_progress=False)
    with pytest.raises(ValueError, match="dtype must be uint16, uint32 or uint64"):
        tokenize(tmp_path / "a.txt", enc, tmp_path / "o", dtype=np.uint8, **kw)
    ranks = {bytes([b]): b for b in range(256)}
    big = bytepair.Encoding(
        "big", pat_str=".", mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 70_000}
    )
    with pytest.raises(ValueError, match=r"uint16 cannot hold the ids of 'big' \(n_vocab 70001"):
        tokenize(tmp_path / "a.txt", big, tmp_path / "o", dtype="uint16", **kw)
    manifest = tokenize(tmp_path / "a.txt", big, tmp_path / "big", **kw)
    assert manifest.dtype == "uint32" and as_lists(tmp_path / "big") == [
        [104, 101, 108, 108, 111, 70_000]
    ]
    with pytest.raises(ValueError, match="has no special token '<x>'"):
        tokenize(tmp_path / "a.txt", enc, tmp_path / "o", append_eot="<x>", **kw)
    with pytest.raises(ValueError, match="sample_by"):
        tokenize(tmp_path / "a.txt", enc, tmp_path / "o", sample_by="word", **kw)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="engine"):
        tokenize(tmp_path / "a.txt", enc, tmp_path / "o", engine="dask", show_progress=False)  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError, match="did not finish"):
        load_tokens(tmp_path / "nothing")


# ---- engine="local" ---------------------------------------------------------------------------


def inodes(directory: Path) -> dict[str, int]:
    return {p.name: p.stat().st_ino for p in sorted(directory.glob("shard-*"))}


@pytest.mark.slow
def test_tokenize_local_matches_one_process(
    tmp_path: Path, corpus: list[str], enc: bytepair.Encoding
) -> None:
    out = tmp_path / "out"
    manifest = tokenize(
        corpus, enc, out, engine="local", num_workers=2, shard_size=SHARD_SIZE, show_progress=False
    )
    docs = one_process_documents(corpus)
    expected = one_process_tokens(enc, docs)
    assert as_lists(out) == expected
    assert manifest == Manifest.load(out)
    assert manifest.documents == len(docs) and manifest.tokens == sum(map(len, expected))
    assert len(manifest.shards) > 10 and [i["path"] for i in manifest.inputs] == corpus
    assert manifest.dtype == "uint16" and manifest.eot_token == 50256
    # The vocabulary hash is that of the upstream r50k_base.tiktoken file.
    assert manifest.encoding["vocab_sha256"] == registry.R50K_FILE.sha256
    # Standard .npy files: memory-mapped, or read raw after the 128-byte header.
    first = manifest.shards[0]
    tokens = np.load(out / first.tokens_file, mmap_mode="r")
    raw = np.memmap(out / first.tokens_file, dtype=np.uint16, mode="r", offset=128)
    assert tokens.dtype == np.uint16 and np.array_equal(tokens, raw)
    offsets = np.load(out / first.offsets_file)
    assert offsets.dtype == np.uint64 and offsets[-1] == len(tokens) == first.tokens
    assert not list(out.glob(".*"))  # no temporary file left
    # Running the same job again does nothing; another job's output is not overwritten.
    before = inodes(out)
    assert (
        tokenize(corpus, enc, out, engine="local", shard_size=SHARD_SIZE, show_progress=False)
        == manifest
    )
    assert inodes(out) == before
    with pytest.raises(ValueError, match=r"different job.*overwrite=True"):
        tokenize(
            corpus,
            enc,
            out,
            engine="local",
            append_eot=False,
            shard_size=SHARD_SIZE,
            show_progress=False,
        )
    again = tokenize(
        corpus[:2],
        enc,
        out,
        engine="local",
        num_workers=0,
        append_eot=False,
        overwrite=True,
        show_progress=False,
    )
    assert again.documents == 2 and len(list(out.glob("shard-*.json"))) == len(again.shards)
    assert as_lists(out) == [enc.encode_ordinary(d) for d in docs[:2]]


@pytest.mark.slow
def test_local_worker_killed_mid_job_is_replaced(
    tmp_path: Path, corpus: list[str], enc: bytepair.Encoding
) -> None:
    marker = tmp_path / "crashed"
    docs = one_process_documents(corpus)
    tokenize(
        corpus,
        crashing(enc, marker, trigger=docs[len(docs) // 2]),
        tmp_path / "out",
        engine="local",
        num_workers=2,
        shard_size=SHARD_SIZE,
        show_progress=False,
    )
    assert marker.exists()  # a worker did die
    assert as_lists(tmp_path / "out") == one_process_tokens(enc, docs)
    assert not list((tmp_path / "out").glob(".*"))  # its temporary file was removed


@pytest.mark.slow
def test_rerun_after_a_failure_skips_finished_shards(
    tmp_path: Path, corpus: list[str], enc: bytepair.Encoding
) -> None:
    bad = tmp_path / "zz_bad.jsonl"
    bad.write_text('{"text": "fine"}\n{"text": 12}\n')
    out = tmp_path / "out"
    run: dict[str, Any] = dict(
        engine="local", num_workers=1, shard_size=SHARD_SIZE, show_progress=False
    )
    with pytest.raises(InputError, match=r"zz_bad\.jsonl:2: field 'text' is int"):
        tokenize([*corpus, bad], enc, out, **run)
    finished = inodes(out)
    assert len(finished) > 10 and not (out / "manifest.json").exists()
    bad.write_text('{"text": "fine"}\n{"text": "12"}\n')  # fixed
    manifest = tokenize([*corpus, bad], enc, out, **run)
    assert {k: v for k, v in inodes(out).items() if k in finished} == finished
    docs = [*one_process_documents(corpus), "fine", "12"]
    assert manifest.documents == len(docs)
    assert as_lists(out) == one_process_tokens(enc, docs)


@pytest.mark.slow
def test_train_local_matches_bytepair_train(corpus: list[str]) -> None:
    docs = one_process_documents(corpus)
    expected = bytepair.train(
        docs, vocab_size=400, pattern="o200k", special_tokens=["<|eot|>"], show_progress=False
    )
    got = train(
        corpus,
        vocab_size=400,
        pattern="o200k",
        special_tokens=["<|eot|>"],
        engine="local",
        num_workers=2,
        shard_size=SHARD_SIZE,
        show_progress=False,
    )
    assert got._mergeable_ranks == expected._mergeable_ranks
    assert got._special_tokens == expected._special_tokens == {"<|eot|>": 400}
    # .txt files read whole count as bytepair.train(files=...) counts them.
    txt = [p for p in corpus if p.endswith(".txt")]
    assert count_pieces(
        txt,
        pattern="gpt2",
        engine="local",
        num_workers=0,
        shard_size=SHARD_SIZE,
        show_progress=False,
    ).items() == (count_pieces_one_process(files=txt, pattern="gpt2").items())


@pytest.mark.slow
def test_local_workers_are_kept_between_jobs(
    tmp_path: Path, corpus: list[str], enc: bytepair.Encoding
) -> None:
    with Workers("local", num_workers=2) as workers:
        assert workers.num_workers == 2 and "'local'" in repr(workers)
        jobs_keep_their_workers(workers, tmp_path, corpus)
    assert workers.closed
    with pytest.raises(RuntimeError, match="is closed: start another Workers"):
        count_pieces(corpus, engine=workers, show_progress=False)
    manifest = tmp_path / "a" / "manifest.json"
    before = manifest.read_bytes()
    with pytest.raises(RuntimeError, match="is closed"):
        tokenize(corpus, enc, tmp_path / "a", engine=workers, overwrite=True, show_progress=False)
    assert manifest.read_bytes() == before  # the finished output is untouched
    with Workers("local", num_workers=0) as here:
        assert pids(here) == {os.getpid()}
    with pytest.raises(ValueError, match='engine must be "ray" or "local"'):
        Workers("dask")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="num_workers must be an int >= 1"):
        Workers("ray", num_workers=0)


# ---- Hugging Face datasets ---------------------------------------------------------------------


# datasets forks its workers; Python 3.12+ warns when the forking process has threads.
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_hf_datasets_map_with_num_proc(corpus: list[str], enc: bytepair.Encoding) -> None:
    datasets = pytest.importorskip("datasets")
    docs = one_process_documents(corpus)
    ds = datasets.Dataset.from_dict({"text": docs, "id": list(range(len(docs)))})
    fn = DatasetEncoder(enc)
    # A clean, deterministic pickle: the same fingerprint whatever order the ranks were in.
    shuffled = bytepair.Encoding(
        "gpt2",
        pat_str=enc.pat_str,
        special_tokens=enc._special_tokens,
        mergeable_ranks=dict(reversed(enc._mergeable_ranks.items())),
    )
    assert pickle.dumps(fn) == pickle.dumps(DatasetEncoder(shuffled))
    hasher = datasets.fingerprint.Hasher
    assert hasher.hash(fn) == hasher.hash(pickle.loads(pickle.dumps(fn)))
    out = ds.map(fn, batched=True, num_proc=2, remove_columns=["text"])
    assert out.column_names == ["id", "input_ids"]
    assert [list(ids) for ids in out["input_ids"]] == one_process_tokens(enc, docs)
    with pytest.raises(ValueError, match="no column 'body'"):
        ds.map(DatasetEncoder(enc, text_field="body"), batched=True)


# ---- engine="ray": a real local cluster ---------------------------------------------------------


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    # Ray workers do not import this test module: send CrashingEncoding by value.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(
        num_cpus=2, include_dashboard=False, object_store_memory=200 << 20, log_to_driver=False
    )
    yield ray
    ray.shutdown()


@pytest.mark.slow
def test_tokenize_ray_matches_one_process(
    ray_cluster: Any, tmp_path: Path, corpus: list[str], enc: bytepair.Encoding
) -> None:
    manifest = tokenize(
        corpus, enc, tmp_path / "out", engine="ray", shard_size=SHARD_SIZE, show_progress=False
    )
    expected = one_process_tokens(enc, one_process_documents(corpus))
    assert as_lists(tmp_path / "out") == expected
    local = tokenize(
        corpus,
        enc,
        tmp_path / "local",
        engine="local",
        num_workers=0,
        shard_size=SHARD_SIZE,
        show_progress=False,
    )
    assert manifest.to_json() == local.to_json()
    for info in manifest.shards:
        a = np.load(tmp_path / "out" / info.tokens_file)
        assert np.array_equal(a, np.load(tmp_path / "local" / info.tokens_file))


@pytest.mark.slow
def test_ray_worker_killed_mid_job_is_retried(
    ray_cluster: Any, tmp_path: Path, corpus: list[str], enc: bytepair.Encoding
) -> None:
    marker = tmp_path / "crashed"
    docs = one_process_documents(corpus)
    tokenize(
        corpus,
        crashing(enc, marker, trigger=docs[len(docs) // 2]),
        tmp_path / "out",
        engine="ray",
        num_workers=2,
        shard_size=SHARD_SIZE,
        show_progress=False,
    )
    assert marker.exists()  # an actor's process did die, and was restarted
    assert as_lists(tmp_path / "out") == one_process_tokens(enc, docs)
    assert not list((tmp_path / "out").glob(".*"))


@pytest.mark.slow
def test_train_ray_matches_bytepair_train(ray_cluster: Any, corpus: list[str]) -> None:
    docs = one_process_documents(corpus)
    expected = bytepair.train(docs, vocab_size=450, pattern="cl100k", show_progress=False)
    got = train(
        corpus,
        vocab_size=450,
        pattern="cl100k",
        engine="ray",
        shard_size=SHARD_SIZE,
        show_progress=False,
    )
    assert got._mergeable_ranks == expected._mergeable_ranks


@pytest.mark.slow
def test_ray_workers_are_kept_between_jobs(
    ray_cluster: Any, tmp_path: Path, corpus: list[str]
) -> None:
    with Workers("ray", num_workers=2) as workers:
        assert workers.num_workers == 2
        jobs_keep_their_workers(workers, tmp_path, corpus)
    # Closed: the actors are gone, and their CPUs free again.
    deadline = time.monotonic() + 30
    while ray_cluster.available_resources().get("CPU", 0) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert ray_cluster.available_resources().get("CPU", 0) == 2
