"""bytepair.train: the merges of rustbpe, of the pure-Python reference, and (tie_break="hf") of
Hugging Face tokenizers; sources (text, generators, files, globs); special tokens; stopping rules;
Ctrl-C; bad arguments."""

from __future__ import annotations

import _thread
import contextlib
import doctest
import functools
import json
import random
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import rustbpe
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

import bytepair
from bytepair import _core
from bytepair.patterns import CL100K, GPT2, O200K, resolve_pattern
from bytepair.reference.train import count_pieces as reference_count
from bytepair.reference.train import train_from_counts as reference_merges
from bytepair.train import count_pieces, merges_to_ranks

from conftest import shared_path

# Hugging Face's regex engine reads possessive quantifiers differently: spell them greedily.
CL100K_HF = CL100K.replace("{1,3}+", "{1,3}")
GPT2_HF = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# (category, pattern) for the differential tests: every built-in family gets real text.
CORPORA = [("english", CL100K), ("code", O200K), ("multilingual", GPT2)]


@functools.cache
def corpus_text(category: str, size: int) -> str:
    """The first ``size`` characters of the category's files, in name order."""
    folder = shared_path("corpus", category)
    text = ""
    for path in sorted(folder.iterdir()):
        text += path.read_text(encoding="utf-8")
        if len(text) >= size:
            break
    return text[:size]


def documents(category: str, size: int) -> list[str]:
    return corpus_text(category, size).split("\n\n")


def merges_of(
    texts: list[str], vocab_size: int, pattern: str, **kw: object
) -> list[tuple[int, int]]:
    counter = _core.PieceCounter(pattern)
    counter.add_texts(texts, 2)
    return counter.train(vocab_size, **kw)  # type: ignore[arg-type]


def rustbpe_ranks(texts: list[str], vocab_size: int, pattern: str) -> dict[bytes, int]:
    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(iter(texts), vocab_size, pattern=pattern)
    return {bytes(b): i for b, i in tok.get_mergeable_ranks()}


def hf_merges(
    texts: list[str], vocab_size: int, pattern: str, min_frequency: int = 0
) -> list[tuple[bytes, bytes]]:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern), "isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
        special_tokens=[],
    )
    tok.train_from_iterator(texts, trainer)
    byte_of = {c: b for b, c in enumerate(_core.byte_map_table())}
    out = []
    for merge in json.loads(tok.to_str())["model"]["merges"]:
        left, right = merge.split(" ") if isinstance(merge, str) else merge
        out.append((bytes(byte_of[c] for c in left), bytes(byte_of[c] for c in right)))
    return out


def tokens(enc: bytepair.Encoding) -> list[bytes]:
    """The ordinary tokens in rank order."""
    return [
        enc.decode_single_token_bytes(i) for i in range(enc.n_vocab - len(enc.special_tokens_set))
    ]


def as_bytes(merges: list[tuple[int, int]]) -> list[tuple[bytes, bytes]]:
    tokens = [bytes([b]) for b in range(256)]
    out = []
    for a, b in merges:
        out.append((tokens[a], tokens[b]))
        tokens.append(tokens[a] + tokens[b])
    return out


# ---- differential: rustbpe, the reference, Hugging Face ---------------------------------------


@pytest.mark.parametrize("vocab_size", [300, 1000, 4096])
@pytest.mark.parametrize(("category", "pattern"), CORPORA, ids=[c for c, _ in CORPORA])
def test_equal_to_rustbpe(category: str, pattern: str, vocab_size: int) -> None:
    texts = documents(category, 1_000_000)
    ours = merges_to_ranks(merges_of(texts, vocab_size, pattern))
    theirs = rustbpe_ranks(texts, vocab_size, pattern)
    assert len(ours) == vocab_size
    assert sorted(ours.items(), key=lambda kv: kv[1]) == sorted(
        theirs.items(), key=lambda kv: kv[1]
    )


@pytest.mark.parametrize(("category", "pattern"), CORPORA, ids=[c for c, _ in CORPORA])
def test_equal_to_reference(category: str, pattern: str) -> None:
    texts = documents(category, 250_000)
    counts = reference_count(texts, pattern)
    assert dict(count_pieces(texts, pattern=pattern).items()) == dict(counts)
    assert merges_of(texts, 1000, pattern) == reference_merges(counts, 1000)


@pytest.mark.parametrize(
    ("category", "pattern", "vocab_size"),
    [("english", CL100K_HF, 4096), ("code", CL100K_HF, 1000), ("multilingual", GPT2_HF, 1000)],
    ids=["english-cl100k-4096", "code-cl100k-1000", "multilingual-gpt2-1000"],
)
def test_hf_tie_break_equal_to_tokenizers(category: str, pattern: str, vocab_size: int) -> None:
    texts = documents(category, 500_000)
    ours = merges_of(texts, vocab_size, pattern, tie_break="hf")
    assert as_bytes(ours) == hf_merges(texts, vocab_size, pattern)
    # The default tie-break is a different rule: it departs from HF's order early on.
    assert merges_of(texts, vocab_size, pattern) != ours


def test_hf_min_frequency_equal_to_tokenizers() -> None:
    texts = documents("english", 200_000)
    ours = merges_of(texts, 4096, GPT2_HF, tie_break="hf", min_frequency=40)
    assert 0 < len(ours) < 4096 - 256
    assert as_bytes(ours) == hf_merges(texts, 4096, GPT2_HF, min_frequency=40)


WORDS = st.text(alphabet="ab c\n'", max_size=40)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=st.lists(WORDS, max_size=20), vocab_size=st.integers(256, 300))
def test_equal_to_reference_on_generated_corpora(docs: list[str], vocab_size: int) -> None:
    for pattern in (GPT2, r"[^\n]+|\n"):
        expected = reference_merges(reference_count(docs, pattern), vocab_size)
        assert merges_of(docs, vocab_size, pattern) == expected


@settings(max_examples=60, deadline=None)
@given(docs=st.lists(st.text(alphabet="aab!c ", min_size=1, max_size=30), min_size=1, max_size=15))
def test_hf_tie_break_on_generated_corpora(docs: list[str]) -> None:
    ours = merges_of(docs, 290, GPT2_HF, tie_break="hf")
    assert as_bytes(ours) == hf_merges(docs, 290, GPT2_HF)


def test_deterministic_across_threads_and_document_order() -> None:
    texts = documents("code", 300_000)
    shuffled = texts[:]
    random.Random(0).shuffle(shuffled)
    one = bytepair.train(
        texts, vocab_size=1500, pattern="o200k", num_threads=1, show_progress=False
    )
    two = bytepair.train(
        shuffled, vocab_size=1500, pattern="o200k", num_threads=2, show_progress=False
    )
    assert tokens(one) == tokens(two)


# ---- sources -----------------------------------------------------------------------------------


def test_generator_is_streamed_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = documents("english", 300_000)
    expected = bytepair.train(texts, vocab_size=800, pattern="cl100k", show_progress=False)
    # bytepair.train is the function; the module is in sys.modules.
    monkeypatch.setattr(sys.modules["bytepair.train"], "_BATCH_ITEMS", 7)
    produced = 0

    def generate() -> Iterator[str]:
        nonlocal produced
        for t in texts:
            produced += 1
            yield t

    enc = bytepair.train(generate(), vocab_size=800, pattern="cl100k", show_progress=False)
    assert produced == len(texts)
    assert tokens(enc) == tokens(expected)


@pytest.mark.parametrize("pattern", ["cl100k", "o200k", "gpt2", "llama3"])
def test_big_file_and_long_text_give_the_pieces_of_the_whole_text(pattern: str) -> None:
    # 3.3 MB: cut into blocks to count in parallel; the cuts must not change a single piece.
    path = shared_path("corpus", "english", "gutenberg_2600_tolstoy_war_and_peace.txt")
    text = path.read_text(encoding="utf-8")
    expected = reference_count(text, resolve_pattern(pattern))
    assert dict(count_pieces(path, pattern=pattern).items()) == dict(expected)
    assert dict(count_pieces(text, pattern=pattern).items()) == dict(expected)


def test_files_globs_and_lists(tmp_path: Path) -> None:
    texts = documents("multilingual", 200_000)[:40]
    for i, t in enumerate(texts):
        (tmp_path / f"doc{i:02}.txt").write_text(t, encoding="utf-8")
    (tmp_path / "skip.md").write_text("not matched by the glob", encoding="utf-8")
    paths = sorted(tmp_path.glob("*.txt"))
    expected = merges_of(texts, 700, resolve_pattern("o200k"))

    def merges(**kw: object) -> list[bytes]:
        enc = bytepair.train(vocab_size=700, pattern="o200k", show_progress=False, **kw)  # type: ignore[arg-type]
        return tokens(enc)

    want = list(merges_to_ranks(expected))
    assert merges(source=paths) == want
    assert merges(source=tmp_path / "*.txt") == want
    assert merges(files=str(tmp_path / "doc*.txt")) == want
    assert merges(files=[str(p) for p in paths]) == want
    assert merges(source=texts[:20], files=paths[20:]) == want
    # A str is text, never a file name.
    enc = bytepair.train(str(paths[0]), vocab_size=260, pattern="o200k", show_progress=False)
    assert enc.decode(enc.encode(str(paths[0]))) == str(paths[0])


def test_file_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file"):
        bytepair.train(tmp_path / "missing.txt", vocab_size=300, show_progress=False)
    with pytest.raises(FileNotFoundError, match="no file matches"):
        bytepair.train(files=str(tmp_path / "*.nothing"), vocab_size=300, show_progress=False)
    with pytest.raises(ValueError, match="is a directory"):
        bytepair.train(tmp_path, vocab_size=300, show_progress=False)
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"caf\xe9 au lait")
    with pytest.raises(ValueError, match=r"latin1\.txt is not UTF-8: invalid byte at offset 3"):
        bytepair.train(bad, vocab_size=300, show_progress=False)


def test_counters_merge_for_distributed_counting() -> None:
    texts = documents("code", 200_000)
    half = len(texts) // 2
    a = count_pieces(texts[:half], pattern="cl100k")
    b = count_pieces(texts[half:], pattern="cl100k")
    c = count_pieces(texts[:half], pattern="cl100k")
    a.merge_counts(b)
    c.add_counts(b.items())
    whole = count_pieces(texts, pattern="cl100k")
    assert a.items() == c.items() == whole.items()
    assert len(a) == len(whole) and a.total == whole.total
    assert a.train(1000) == whole.train(1000)
    assert len(whole) > 0  # train() without consume= keeps the counts
    with pytest.raises(ValueError, match="different patterns"):
        a.merge_counts(count_pieces("x", pattern="gpt2"))


# ---- the encoding, special tokens, stopping ------------------------------------------------------


def test_round_trip_and_special_tokens() -> None:
    enc = bytepair.train(
        documents("english", 400_000),
        vocab_size=2000,
        pattern="o200k",
        special_tokens=["<|endoftext|>", "<|pad|>", "<|endoftext|>"],
        name="mine",
        show_progress=False,
    )
    assert enc.name == "mine" and enc.n_vocab == 2002
    assert enc.encode("<|endoftext|><|pad|>", allowed_special="all") == [2000, 2001]
    for text in [corpus_text("code", 50_000), corpus_text("multilingual", 50_000), "", " \n\t"]:
        assert enc.decode(enc.encode(text)) == text
    assert enc.encode_ordinary("the") == [enc.encode_single_token(b"the")]


@settings(max_examples=50, deadline=None)
@given(text=st.text())
def test_round_trip_generated(text: str) -> None:
    enc = trained_small()
    assert enc.decode(enc.encode_ordinary(text)) == text


@functools.cache
def trained_small() -> bytepair.Encoding:
    return bytepair.train(documents("multilingual", 100_000), vocab_size=600, show_progress=False)


def test_min_frequency_stops_early() -> None:
    texts = documents("english", 200_000)
    full = merges_of(texts, 3000, CL100K)
    made = []
    for k in (5, 20, 100):
        enc = bytepair.train(
            texts, vocab_size=3000, pattern="cl100k", min_frequency=k, show_progress=False
        )
        made.append(enc.n_vocab - 256)
        # A prefix of the merges without a minimum.
        assert merges_to_ranks(full[: made[-1]]) == {t: i for i, t in enumerate(tokens(enc))}
    assert len(full) > made[0] > made[1] > made[2] > 0
    # "ab" occurs 3 times, " ab", " c", " cd" twice, " e" and " ef" once.
    tiny = ["ab ab ab cd cd ef"]
    assert merges_of(tiny, 300, GPT2, min_frequency=2) == [
        (97, 98),
        (32, 99),
        (32, 256),
        (257, 100),
    ]
    assert merges_of(tiny, 300, GPT2, min_frequency=3) == [(97, 98)]
    assert len(merges_of(tiny, 300, GPT2, min_frequency=1)) == 6


def test_training_stops_when_pairs_run_out() -> None:
    enc = bytepair.train("abc abc", vocab_size=10_000, pattern="gpt2", show_progress=False)
    assert [enc.decode_single_token_bytes(i) for i in range(256, enc.n_vocab)] == [
        b"ab",
        b"abc",
        b" abc",
    ]


# ---- progress and Ctrl-C ----------------------------------------------------------------------


def test_progress_reports_all_work() -> None:
    text = corpus_text("english", 300_000)
    counter = _core.PieceCounter(CL100K)
    counted: list[int] = []
    counter.add_text(text, 2, counted.append)
    assert sum(counted) == len(text.encode())
    made: list[int] = []
    merges = counter.train(2000, progress=made.append)
    assert sum(made) == len(merges) == 2000 - 256


def test_no_tqdm_no_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    real = importlib.import_module

    def no_tqdm(name: str, package: str | None = None) -> object:
        if name == "tqdm":
            raise ImportError(name)
        return real(name, package)

    with_bar = bytepair.train("hello hello", vocab_size=260, pattern="gpt2", show_progress=True)
    monkeypatch.setattr(importlib, "import_module", no_tqdm)
    enc = bytepair.train("hello hello", vocab_size=260, pattern="gpt2", show_progress=True)
    assert tokens(enc) == tokens(with_bar) and enc.n_vocab == 260


@contextlib.contextmanager
def sigint_raises() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt inside the block (whatever handler an earlier test left);
    an interrupt still pending at its end is drained, not raised later in another test."""
    armed = True

    def on_sigint(_signum: int, _frame: object) -> None:
        if armed:
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        armed = False
        for _ in range(1000):
            time.sleep(0)
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_stops_the_merge_loop() -> None:
    counter = count_pieces(documents("multilingual", 300_000), pattern="o200k")

    def interrupt(_: int) -> None:
        _thread.interrupt_main()  # as if Ctrl-C was pressed: the next signal check raises

    with sigint_raises():
        with pytest.raises(KeyboardInterrupt):
            counter.train(100_000, progress=interrupt)
        assert len(counter) > 0  # the counts survive; training can be run again
        with pytest.raises(KeyboardInterrupt):
            counter.add_texts(["more text"] * 10, 2, interrupt)


def test_ctrl_c_stops_counting_an_endless_stream() -> None:
    # A Ctrl-C that CPython delivers inside a finalizer is printed and dropped, which in a long
    # test run happens: the interrupt is sent again every 0.3 s, and the stream ends after 30 s
    # so that a lost one fails the test instead of hanging it.
    start = time.monotonic()

    def endless() -> Iterator[str]:
        while time.monotonic() - start < 30:
            yield "all work and no play makes jack a dull boy\n" * 50

    stop = threading.Event()

    def keep_interrupting() -> None:
        while not stop.wait(0.3):
            _thread.interrupt_main()

    sender = threading.Thread(target=keep_interrupting, daemon=True)
    with sigint_raises():
        sender.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                bytepair.train(endless(), vocab_size=300, show_progress=False)
        finally:
            stop.set()
            sender.join()
    assert time.monotonic() - start < 5


def test_docstring_examples() -> None:
    module = sys.modules["bytepair.train"]
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 8 and result.failed == 0


# ---- bad arguments -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"vocab_size": 255}, ValueError, "at least 256"),
        ({"vocab_size": 300.0}, ValueError, "at least 256"),
        ({"vocab_size": 300, "pattern": "(unclosed"}, ValueError, "pattern"),
        ({"vocab_size": 300, "tie_break": "smallest"}, ValueError, "tie_break"),
        ({"vocab_size": 300, "min_frequency": -1}, ValueError, "min_frequency"),
        ({"vocab_size": 300, "num_threads": 0}, ValueError, "num_threads"),
        ({"vocab_size": 300, "special_tokens": "<|end|>"}, TypeError, "list of strings"),
        ({"vocab_size": 300, "special_tokens": [""]}, ValueError, "non-empty"),
    ],
)
def test_bad_arguments(kwargs: dict[str, object], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        bytepair.train("some text", show_progress=False, **kwargs)  # type: ignore[arg-type]


def test_bad_sources() -> None:
    with pytest.raises(TypeError, match="decode bytes"):
        bytepair.train(b"bytes", vocab_size=300, show_progress=False)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="item 1 of source is a int"):
        bytepair.train(["ok", 3], vocab_size=300, show_progress=False)  # type: ignore[list-item]
    with pytest.raises(TypeError, match="needs a source"):
        bytepair.train(vocab_size=300, show_progress=False)
    with pytest.raises(ValueError, match="tie_break"):
        _core.PieceCounter(GPT2).train(300, tie_break="huggingface")
