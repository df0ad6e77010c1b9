"""bytepair.distributed's fast paths give what the plain paths give: JSON Lines read a block at a
time (and line by line where a line is wrong, for the message), token arrays straight from the
core, an encoding sent to workers as its .tiktoken bytes, piece counts sent as one bytes object.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

import bytepair
from bytepair import _core, patterns, registry
from bytepair.distributed import InputError, count_pieces, load_tokens, tokenize
from bytepair.distributed import inputs as inputs_module
from bytepair.distributed.inputs import Reader, list_inputs, plan_shards
from bytepair.distributed.tokenizing import RankEncodingFile, TokenizeJob

from conftest import shared_path

RUN: dict[str, Any] = dict(engine="local", num_workers=0, show_progress=False)


@pytest.fixture(scope="module")
def enc() -> bytepair.Encoding:
    return registry.get_encoding("gpt2", vocab_dir=shared_path("vocab"))


def read_all(path: Path, shard_size: int, **options: Any) -> list[str]:
    files = list_inputs(path)
    reader = Reader(files, **options)
    shards = plan_shards(files, shard_size, "document")
    return [d for s in shards for p in s.pieces for d in reader.documents(p)]


# Lines json.loads reads one by one, each spelled in a way the block reader must not misread.
AWKWARD_LINES = [
    '{"text": "plain"}',
    '   {"text": "leading spaces"}',
    '{"text": "trailing spaces and CR"}  \r',
    '{"text": "line\\u2028separator \\u0085 and \\u001c inside"}',
    '{"text": "a lone surrogate \\ud800 and a pair \\ud83d\\ude00"}',
    '{"text": "<|endoftext|> as text"}',
    '{"id": 1, "text": "", "meta": {"text": 2}}',
    "\t",
    "\x0c",
    '{"text": "é, 中文, \u2028 raw"}',
]


def test_block_reader_reads_what_json_loads_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(AWKWARD_LINES * 40) + "\n", encoding="utf-8")
    expected = [
        json.loads(line)["text"]
        for line in path.read_bytes().decode().split("\n")
        if line.strip(" \t\n\r\x0b\x0c")
    ]
    monkeypatch.setattr(inputs_module, "_BUFFER", 97)  # blocks end inside lines, often
    for shard_size in (1, 7, 500, 1 << 20):
        assert read_all(path, shard_size) == expected


@pytest.mark.parametrize(
    ("content", "message"),
    [
        # Each line alone is no object, yet joined with commas they would read as three.
        (b'{"a": 1},{"text": "b"}\n{"t": [{"q": 1}\n{"z": 1}]}\n', r"t\.jsonl:1: not valid JSON"),
        (b'{"text": "a"}\n{"text": "b"} {"text": "c"}\n', r"t\.jsonl:2: not valid JSON"),
        (b'{"text": "a"}\n\n[1]\n', r"t\.jsonl:3: expected a JSON object, got list"),
        (b'{"text": "a"}\n{"body": "b"}\n', r"t\.jsonl:2: no field 'text' \(fields: 'body'\)"),
        (b'{"text": "a"}\n{"text": null}\n', r"t\.jsonl:2: field 'text' is NoneType"),
        (b'{"text": "a"}\n{"text": "\xff"}\n', r"t\.jsonl:2: not valid UTF-8 \(byte 24\)"),
    ],
)
def test_block_reader_reports_the_line_that_is_wrong(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_all(path, 1 << 20)


def test_block_reader_replaces_bad_bytes_as_line_by_line_decoding_does(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [b'{"text": "a\xff"}', b'{"text": "\xe2\x82"}', b'{"text": "ok"}']
    path.write_bytes(b"\n".join(lines) + b"\n")
    expected = [json.loads(line.decode("utf-8", "replace"))["text"] for line in lines]
    assert read_all(path, 1 << 20, decode_errors="replace") == expected


def test_arrays_from_the_core_equal_encode_ordinary(tmp_path: Path, enc: bytepair.Encoding) -> None:
    texts = ["hello <|endoftext|> world", "a\ud800b", "", "  \n\n x", "Привет 😀" * 50]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    tokenize(path, enc, tmp_path / "out", **RUN)
    got = [doc.tolist() for doc in load_tokens(tmp_path / "out").documents()]
    assert got == [[*enc.encode_ordinary(t), enc.eot_token] for t in texts]
    tokenize(path, enc, tmp_path / "plain", append_eot=False, **RUN)
    plain = [doc.tolist() for doc in load_tokens(tmp_path / "plain").documents()]
    assert plain == [enc.encode_ordinary(t) for t in texts]


def test_a_job_sends_a_plain_encoding_as_tiktoken_bytes(enc: bytepair.Encoding) -> None:
    job = TokenizeJob(enc, Reader([]), "/nowhere", "<u2", enc.eot_token, "job", 1)
    state = job.__getstate__()
    assert isinstance(state["encoding"], RankEncodingFile)
    copy = pickle.loads(pickle.dumps(job))
    text = "The job's copy <|endoftext|> encodes alike."
    assert copy.encoding.encode_ordinary(text) == enc.encode_ordinary(text)
    assert copy.encoding._special_tokens == enc._special_tokens and copy.eot == job.eot

    # A subclass may do more than its core: it travels as it is.
    class Sub(bytepair.Encoding):
        pass

    assert RankEncodingFile.of(Sub.__new__(Sub)) is None


def test_a_worker_builds_the_same_encoding_once(enc: bytepair.Encoding) -> None:
    # A kept worker's next job with the same encoding reuses the one it built; another
    # encoding, or the same one with other special tokens, is built anew.
    first = pickle.loads(pickle.dumps(RankEncodingFile.of(enc))).build()
    assert pickle.loads(pickle.dumps(RankEncodingFile.of(enc))).build() is first
    other = bytepair.Encoding(
        enc.name,
        pat_str=enc.pat_str,
        mergeable_ranks=enc._mergeable_ranks,
        special_tokens={**enc._special_tokens, "<|x|>": enc.n_vocab},
    )
    rebuilt = RankEncodingFile.of(other)
    assert rebuilt is not None and rebuilt.build() is not first
    assert rebuilt.build()._special_tokens == other._special_tokens
    assert RankEncodingFile.of(enc).build() is not first  # the last one built is the other


def test_serialized_counts_round_trip_and_bad_bytes_are_refused() -> None:
    counter = _core.PieceCounter(patterns.resolve_pattern("o200k"))
    counter.add_texts(["hello hello world", "x" * 5000, "   \n", "中文 😀"], 1)
    data = counter.serialize_counts()
    copy = _core.PieceCounter(counter.pattern)
    copy.add_serialized_counts(data)
    copy.add_serialized_counts(data)
    assert sorted(copy.items()) == sorted((p, 2 * n) for p, n in counter.items())
    assert copy.total == 2 * counter.total
    for bad in (data[:-1], data[:3], b"\xff\xff\xff\xff" + data[4:]):
        before = sorted(copy.items())
        with pytest.raises(ValueError, match="serialized counts end inside the piece at byte"):
            copy.add_serialized_counts(bad)
        assert sorted(copy.items()) == before  # nothing added
    empty = _core.PieceCounter(counter.pattern)
    empty.add_serialized_counts(b"")
    assert len(empty) == 0 and empty.serialize_counts() == b""


def test_local_workers_count_and_tokenize_what_one_process_does(
    tmp_path: Path, enc: bytepair.Encoding
) -> None:
    path = tmp_path / "t.jsonl"
    docs = [f"document {i} " + "words " * (i % 17) for i in range(3000)]
    path.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs))
    one = _core.PieceCounter(patterns.resolve_pattern("o200k"))
    one.add_texts(docs, 1)
    run: dict[str, Any] = dict(engine="local", num_workers=2, shard_size=4000, show_progress=False)
    got = count_pieces(path, **run)
    assert sorted(got.items()) == sorted(one.items()) and got.total == one.total
    manifest = tokenize(path, enc, tmp_path / "out", **run)
    assert len(manifest.shards) > 10
    tokens = [doc.tolist() for doc in load_tokens(tmp_path / "out").documents()]
    assert tokens == [[*enc.encode_ordinary(d), enc.eot_token] for d in docs]
