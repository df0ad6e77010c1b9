"""bytepair.Encoding: tiktoken's interface and ids, special-token rules, decoding, threads."""

from __future__ import annotations

import doctest
import gc
import inspect
import pickle
import subprocess
import sys
import threading
import weakref
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair

from anchors import TIKTOKEN_NAMES, corpus_files, corpus_id, ours, tiktoken_encoding

CORPUS = corpus_files()


def toy() -> bytepair.Encoding:
    ranks = {bytes([b]): b for b in range(256)}
    for i, token in enumerate([b"ab", b"abc", b" a", b"\xc3\xa9"]):
        ranks[token] = 256 + i
    return bytepair.Encoding(
        "toy",
        pat_str=r"\S+|\s+",
        mergeable_ranks=ranks,
        special_tokens={"<|end|>": 300, "<|start|>": 301},
    )


# ---- exactness against tiktoken on every corpus file -----------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("path", CORPUS or [None], ids=corpus_id if CORPUS else None)
@pytest.mark.parametrize("name", TIKTOKEN_NAMES)
def test_ids_equal_tiktoken_on_corpus(name: str, path: object) -> None:
    if path is None:
        from conftest import shared_path

        shared_path("corpus")
    text = path.read_text(encoding="utf-8")  # type: ignore[attr-defined]
    expected = tiktoken_encoding(name).encode_ordinary(text)
    enc = ours(name)
    assert enc.encode_ordinary(text) == expected
    assert enc.count(text, disallowed_special=()) == len(expected)
    assert enc.decode_bytes(expected) == text.encode("utf-8")


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_letters_in_random_order_equal_tiktoken(name: str) -> None:
    """Letters of the Chinese, Japanese, Korean, Thai and Hindi corpus files in random order.

    The merge joins most three-byte letters before it starts, when no token that a letter's
    parts could make with the neighbouring bytes ranks below it; shuffled letters meet
    neighbours that running text never gives them.
    """
    import random

    from conftest import shared_path

    names = [
        "xquad_th_thai",
        "cmrc2018_zh_chinese",
        "xquad_hi_hindi",
        "korquad_ko_korean",
        "jsquad_ja_japanese",
    ]
    letters = "".join(
        shared_path("corpus", "multilingual", f"wikipedia_{n}.txt").read_text(encoding="utf-8")
        for n in names
    )
    rng = random.Random(5)
    enc, theirs = ours(name), tiktoken_encoding(name)
    for _ in range(3000):
        text = "".join(rng.choice(letters) for _ in range(rng.randint(1, 40)))
        assert enc.encode_ordinary(text) == theirs.encode_ordinary(text), text


@pytest.mark.parametrize("name", TIKTOKEN_NAMES)
def test_golden_ids(name: str) -> None:
    enc = ours(name)
    assert enc.encode("hello world") == tiktoken_encoding(name).encode("hello world")
    if name in ("gpt2", "r50k_base"):
        assert enc.encode("hello world") == [31373, 995]
    if name == "llama3":
        assert enc.encode("This is a test sentence.") == [2028, 374, 264, 1296, 11914, 13]


SPECIAL_TEXTS = [
    "plain text",
    "<|endoftext|>",
    "a<|endoftext|>b<|fim_prefix|>c",
    "<|endofprompt|> x <|endoftext|><|endoftext|>",
    "<|endoftext",
    "<|eot_id|><|start_header_id|>user<|end_header_id|>",
]
SPECIAL_OPTIONS: list[dict[str, object]] = [
    {},
    {"allowed_special": "all"},
    {"disallowed_special": ()},
    {"allowed_special": {"<|endoftext|>"}},
    {"allowed_special": {"<|endoftext|>"}, "disallowed_special": ()},
    {"disallowed_special": {"<|fim_prefix|>"}},
    {"allowed_special": "all", "disallowed_special": ()},
    {"allowed_special": {"<|eot_id|>"}, "disallowed_special": {"<|end_header_id|>"}},
    # A disallowed string that is no special token is refused too, as tiktoken does.
    {"allowed_special": "all", "disallowed_special": {"text", "<|fim_prefix|>"}},
]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "llama3", "p50k_edit"])
@pytest.mark.parametrize("options", SPECIAL_OPTIONS, ids=str)
def test_special_token_rules_equal_tiktoken(name: str, options: dict[str, object]) -> None:
    theirs, enc = tiktoken_encoding(name), ours(name)
    for text in SPECIAL_TEXTS:
        try:
            expected: object = theirs.encode(text, **options)  # type: ignore[arg-type]
        except ValueError as e:
            # Every method that takes these options refuses the text with tiktoken's message.
            for method, arg in (
                ("encode", text),
                ("count", text),
                ("encode_to_numpy", text),
                ("encode_batch", ["", text]),
                ("count_batch", ["", text]),
            ):
                with pytest.raises(ValueError) as ours_error:
                    getattr(enc, method)(arg, **options)
                assert str(ours_error.value) == str(e), method
            continue
        assert enc.encode(text, **options) == expected  # type: ignore[arg-type]
        assert enc.count(text, **options) == len(expected)  # type: ignore[arg-type,arg-type]
        assert enc.encode_to_numpy(text, **options).tolist() == expected  # type: ignore[arg-type]
        assert enc.encode_batch([text, text], **options) == [expected, expected]  # type: ignore[arg-type]
        assert enc.count_batch([text, text], **options) == [len(expected)] * 2  # type: ignore[arg-type]


def test_disallowed_special_message_shows_the_fix() -> None:
    with pytest.raises(ValueError, match=r"allowed_special=\{'<\|end\|>', \.\.\.\}"):
        toy().encode("x <|end|>")


def test_special_arguments_of_any_collection_type() -> None:
    # Resolved arguments are cached by value: every collection type, and repeated calls, give
    # the same ids, and a different set never reuses another's entry.
    enc = toy()
    text = "ab<|end|><|start|>"
    want = [256, 300, *b"<|start|>"]
    makers: list[Any] = [
        lambda: {"<|end|>"},
        lambda: frozenset({"<|end|>"}),
        lambda: ("<|end|>",),
        lambda: ["<|end|>"],
        lambda: (t for t in ["<|end|>"]),
        lambda: {"<|end|>": 1}.keys(),
    ]
    for make in makers:
        for _ in range(2):
            assert enc.encode(text, allowed_special=make(), disallowed_special=()) == want
            assert enc.encode(text, allowed_special=make(), disallowed_special=None) == want
    assert enc.encode(text, allowed_special=("<|start|>",), disallowed_special=()) == [
        256,
        *b"<|end|>",
        301,
    ]
    with pytest.raises(ValueError, match=r"'<\|start\|>'"):
        enc.encode(text, allowed_special=("<|end|>",))


def test_core_special_sets() -> None:
    # What Encoding passes to the core: a set compiled once per encoder, checked in the same call.
    enc, other = toy(), toy()
    core = enc._core
    end, both = core.special_set(["<|end|>"]), core.special_set(["<|end|>", "<|start|>"])
    assert core.encode("ab<|end|><|start|>", end) == [256, 300, *b"<|start|>"]
    assert core.count("ab<|end|><|start|>", both) == 3
    with pytest.raises(bytepair._core.DisallowedSpecial) as found:
        core.count("ab <|start|> <|end|>", None, both)
    assert found.value.args == ("<|start|>",)
    with pytest.raises(bytepair._core.DisallowedSpecial, match="end"):
        core.encode_batch(["ab", "<|end|>", "<|start|>"], 2, None, both)
    # Ids are per encoder: a set made by another one is refused, never used.
    with pytest.raises(ValueError, match="another RankEncoder"):
        other._core.encode("ab", end)
    with pytest.raises(ValueError, match="not a special token"):
        core.special_set(["<|nope|>"])


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_lone_surrogates_like_tiktoken(name: str) -> None:
    theirs, enc = tiktoken_encoding(name), ours(name)
    for text in ["a\ud800b", "\udc00", "\ud83d\ude00 pair", "x\udfff\ud800"]:
        assert enc.encode(text) == theirs.encode(text)
        assert enc.encode_ordinary(text) == theirs.encode_ordinary(text)
        assert enc.count(text) == len(theirs.encode(text))


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_vocabulary_views_equal_tiktoken(name: str) -> None:
    theirs, enc = tiktoken_encoding(name), ours(name)
    assert enc.n_vocab == theirs.n_vocab
    assert enc.max_token_value == theirs.max_token_value
    assert enc.eot_token == theirs.eot_token
    assert enc.special_tokens_set == theirs.special_tokens_set
    assert enc.token_byte_values() == theirs.token_byte_values()
    assert enc._mergeable_ranks == theirs._mergeable_ranks
    ids = theirs.encode("héllo wörld, 你好 🎉", allowed_special="all")
    assert enc.decode_with_offsets(ids) == theirs.decode_with_offsets(ids)
    assert enc.decode_tokens_bytes(ids) == theirs.decode_tokens_bytes(ids)
    assert enc.encode_single_token("<|endoftext|>") == theirs.encode_single_token("<|endoftext|>")
    assert enc.encode_single_token(b"hello") == theirs.encode_single_token(b"hello")
    assert enc.is_special_token(enc.eot_token)
    assert not enc.is_special_token(0)


# ---- the API on a toy vocabulary --------------------------------------------------------


def test_decode_errors_and_partial_utf8() -> None:
    enc = toy()
    assert enc.decode([0xC3]) == "\ufffd"
    assert enc.decode([0xC3], errors="ignore") == ""
    with pytest.raises(UnicodeDecodeError):
        enc.decode([0xC3], errors="strict")
    with pytest.raises(KeyError, match="999"):
        enc.decode([999])
    with pytest.raises(KeyError, match="-1"):
        enc.decode_bytes([-1])
    with pytest.raises(KeyError, match="999"):
        enc.decode_single_token_bytes(999)
    with pytest.raises(KeyError):
        enc.encode_single_token("not a token")


def test_numpy_and_batches() -> None:
    np = pytest.importorskip("numpy")
    enc = toy()
    arr = enc.encode_to_numpy("abc ab é")
    assert arr.dtype == np.uint32
    assert arr.tolist() == enc.encode("abc ab é")
    # Each call gets an array of its own, which the caller may change.
    assert arr.flags.owndata and arr.flags.writeable
    arr[:] = 0
    assert enc.encode_to_numpy("abc ab é").tolist() == enc.encode("abc ab é")
    texts = ["abc", "ab ab", "", "é" * 10]
    assert enc.encode_ordinary_batch(texts, num_threads=2) == [enc.encode(t) for t in texts]
    assert enc.count_batch(texts, num_threads=2) == [len(enc.encode(t)) for t in texts]
    assert enc.decode_batch(enc.encode_batch(texts)) == texts


def test_numpy_missing_is_an_import_error() -> None:
    # The array is made with numpy's C API, which the `numpy` crate looks up on first use and
    # panics if it cannot: without numpy, the call must raise the ImportError of importing it.
    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "from bytepair import Encoding\n"
        "enc = Encoding('b', pat_str=r'.', mergeable_ranks={bytes([b]): b for b in range(256)},"
        " special_tokens={})\n"
        "assert enc.encode('hi') == [104, 105]\n"
        "for call in (lambda: enc.encode_to_numpy('hi'),"
        " lambda: enc._core.encode_to_numpy('hi', None, None)):\n"
        "    try:\n"
        "        call()\n"
        "    except ImportError as e:\n"
        "        print('ImportError', 'numpy' in str(e))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["ImportError", "True", "ImportError", "True"]
    assert "panic" not in run.stderr.lower()


# The ids a list returns are ints that one array per process holds, in id order, never freed
# (`bindings/src/cpython/ints.rs`). Run in a new process, so that the array starts empty and grows
# here: within the memory it has (65536 ids), then into new memory.
SHARED_INTS = r"""
import gc, pickle, sys, sysconfig
import bytepair
from bytepair import Encoding

def encoding(n):
    # Every single byte, then " t256", " t257", ...: each a whole piece of the pattern.
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({f" t{i}".encode(): i for i in range(256, n)})
    return Encoding(f"v{n}", pat_str=r" ?\S+", mergeable_ranks=ranks, special_tokens={})

shared = (
    sys.implementation.name == "cpython"
    and not sysconfig.get_config_var("Py_GIL_DISABLED")
    and bytepair._core.CPYTHON_INTERNALS
)
kept = []
for n in [300, 1000, 70_000, 200_000]:
    enc = encoding(n)
    ids = [5, 256, 257, 299] + list(range(n - 3, n))
    t = "\x05" + "".join(f" t{i}" for i in ids[1:])
    got = enc.encode_ordinary(t)
    assert got == ids, (n, got, ids)
    again = enc.encode_ordinary(t)
    assert all(type(x) is int for x in got)
    assert pickle.loads(pickle.dumps(got)) == ids
    # CPython's own small ints up to 256, as int() gives them, in every array the ints grew
    # into (their slots point at them).
    assert got[0] is int("5") and got[1] is int("256")
    low = enc.encode_ordinary("".join(map(chr, range(33, 127))))
    assert low == list(range(33, 127)) and all(x is int(str(x)) for x in low)
    if shared:
        # The same int for an id, call after call, and from the encoder before (same array
        # while it has room, n = 1000 after 300) ...
        assert all(x is y for x, y in zip(got, again))
        if n == 1000:
            assert kept[-1][2] is got[2]
        # ... whose count never falls to zero: huge before 3.12, immortal after.
        before = sys.getrefcount(got[2])
        many = [enc.encode_ordinary(t) for _ in range(1000)]
        if sys.version_info >= (3, 12):
            assert sys.getrefcount(got[2]) == before
        else:
            assert before > 2**59 and sys.getrefcount(got[2]) == before + 1000
        del many
    kept.append(got)
    del again
    gc.collect()
# Every int handed out is still whole after the array grew into new memory twice.
for got in kept:
    assert [x + 0 for x in got] == got and all(hash(x) == int(str(x)) for x in got)
print("ok", shared)
"""


def test_returned_ints_are_shared_and_outlive_every_list() -> None:
    run = subprocess.run(
        [sys.executable, "-c", SHARED_INTS], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split()[0] == "ok"


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_large_batches_keep_order(threads: int) -> None:
    # Many chunks, claimed by workers and by the calling thread in whatever order they finish:
    # every text's ids must come back in its place, empty texts and ones spelling a special
    # token (allowed here) included.
    enc = toy()
    texts = [("ab é " * (i % 13)) + ("<|end|>" if i % 7 == 0 else "") for i in range(3001)]
    expected = [enc.encode(t, allowed_special="all") for t in texts]
    assert enc.encode_batch(texts, num_threads=threads, allowed_special="all") == expected
    ordinary = [enc.encode_ordinary(t) for t in texts]
    assert enc.encode_ordinary_batch(texts, num_threads=threads) == ordinary
    assert enc.count_batch(texts, num_threads=threads, allowed_special="all") == [
        len(ids) for ids in expected
    ]


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_batch_errors_name_the_first_text_in_order(threads: int) -> None:
    # Chunks finish in any order; the error must still be that of the first text that spells a
    # disallowed token, as with tiktoken (its batches raise the first text's error). Here a
    # later chunk, which threads may check first, spells another token.
    enc = toy()
    texts = ["ab " * 40] * 3001
    texts[2000] = "a <|end|> b"
    texts[2900] = "<|start|>"
    for call in (enc.encode_batch, enc.count_batch):
        with pytest.raises(ValueError, match="end") as raised:
            call(texts, num_threads=threads)
        assert "<|start|>" not in str(raised.value)
    texts[2000] = "ab"
    with pytest.raises(ValueError, match="start"):
        enc.count_batch(texts, num_threads=threads)


@pytest.mark.parametrize("threads", [1, 2])
def test_batches_read_every_kind_of_string(threads: int) -> None:
    # Batches read each str's own storage (one, two or four bytes per character) and convert it
    # on the thread that encodes it: every kind must give the ids of a single call, including
    # Latin-1 text whose bytes happen to be valid UTF-8 ("Ã©" is the UTF-8 of "é"), lone
    # surrogates in two- and four-byte strings (repaired as single calls repair them), and a
    # text larger than the per-thread conversion buffer that is kept.
    class Subclass(str):
        """A str subclass keeps its characters outside the object (not "compact")."""

    enc = ours("o200k_base")
    texts = [
        "plain ASCII, with digits 12345",
        Subclass("“a subclass” of str, café"),
        Subclass("plain subclass"),
        "",
        "café naïve \xa0 \xff",
        "Ã©tÃ© Ã©tÃ©",  # Latin-1 storage C3 A9 ...: valid UTF-8 for "été été"
        "“curly” — quotes… and 日本語のテキスト",
        "emoji 😀🎉 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
        "a\ud800b",
        "😀\udc00 astral with a lone surrogate",
        "x\udfff\ud800",
        "\ud83d\ude00 two surrogates that pair up",
        "<|endoftext|> spelled in text",
        "é" * (600 * 1024) + " “end”",
    ]
    assert {t.isascii() for t in texts} == {True, False}
    ordinary = [enc.encode_ordinary(t) for t in texts]
    assert enc.encode_ordinary_batch(texts, num_threads=threads) == ordinary
    allowed = [enc.encode(t, allowed_special="all") for t in texts]
    assert enc.encode_batch(texts, num_threads=threads, allowed_special="all") == allowed
    assert enc.count_batch(texts, num_threads=threads, allowed_special="all") == [
        len(ids) for ids in allowed
    ]
    # The default refuses the special token, naming it, whatever the string's kind.
    with pytest.raises(ValueError, match="endoftext"):
        enc.encode_batch(texts, num_threads=threads)
    with pytest.raises(ValueError, match="endoftext"):
        enc.count_batch(texts, num_threads=threads)
    clean = [t for t in texts if "<|" not in t]
    assert enc.encode_batch(clean, num_threads=threads) == [enc.encode(t) for t in clean]


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="CPython's str layout")
def test_batches_leave_no_utf8_copy_in_the_strings() -> None:
    # CPython keeps the UTF-8 of a non-ASCII str inside it once asked for it (a single call
    # asks); a batch of the fast build converts on its own threads and leaves the strings as
    # they were, while the portable build (no CPython internals) asks CPython, as single calls do.
    enc = ours("o200k_base")
    texts = ["".join(["“quoted” café ", str(i)]) for i in range(50)]
    sizes = [sys.getsizeof(t) for t in texts]
    enc.encode_ordinary_batch(texts, num_threads=2)
    enc.count_batch(texts, num_threads=2)
    if bytepair._core.CPYTHON_INTERNALS:
        assert [sys.getsizeof(t) for t in texts] == sizes
    else:
        assert all(sys.getsizeof(t) > size for t, size in zip(texts, sizes, strict=True))
        return
    enc.encode_ordinary(texts[0])
    assert sys.getsizeof(texts[0]) > sizes[0]  # the check can fail: a single call does copy


def test_stream_decoder_holds_split_characters() -> None:
    enc = toy()
    ids = enc.encode_ordinary("a😀é")
    decoder = enc.stream_decoder()
    pieces = [decoder.feed(i) for i in ids]
    assert "".join(pieces) == "a😀é"
    assert "\ufffd" not in "".join(pieces)
    # The emoji's four bytes are four tokens: nothing comes out until the last one.
    assert pieces[1:4] == ["", "", ""]
    assert decoder.feed(0xF0) == ""
    assert decoder.pending == b"\xf0"
    assert decoder.flush() == "\ufffd"
    assert decoder.pending == b""


def test_explicit_n_vocab_and_validation() -> None:
    ranks = {bytes([b]): b for b in range(256)}
    bytepair.Encoding(
        "x", pat_str=".", mergeable_ranks=ranks, special_tokens={}, explicit_n_vocab=256
    )
    with pytest.raises(ValueError, match="explicit_n_vocab"):
        bytepair.Encoding(
            "x", pat_str=".", mergeable_ranks=ranks, special_tokens={}, explicit_n_vocab=300
        )
    missing = {bytes([b]): b for b in range(255)}
    with pytest.raises(ValueError, match="0xFF"):
        bytepair.Encoding("x", pat_str=".", mergeable_ranks=missing, special_tokens={})
    with pytest.raises(ValueError, match="already taken"):
        bytepair.Encoding("x", pat_str=".", mergeable_ranks=ranks, special_tokens={"<s>": 5})
    with pytest.raises(ValueError, match="pattern"):
        bytepair.Encoding("x", pat_str="(", mergeable_ranks=ranks, special_tokens={})


def test_pickle_and_threads() -> None:
    enc = toy()
    clone = pickle.loads(pickle.dumps(enc))
    text = "abc ab é " * 100
    assert clone.encode(text) == enc.encode(text)
    assert clone.name == "toy"
    expected = enc.encode(text)
    results: list[bool] = []

    def work() -> None:
        results.extend(enc.encode(text) == expected for _ in range(50))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 400


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_round_trip_text(text: str) -> None:
    enc = toy()
    ids = enc.encode(text, disallowed_special=())
    assert enc.decode(ids) == text
    assert enc.decode_bytes(ids) == text.encode("utf-8")
    assert enc.count(text, disallowed_special=()) == len(ids)


@settings(max_examples=100, deadline=None)
@given(st.text(st.characters(categories=["Cs", "Ll", "Zs"])))
def test_surrogates_are_repaired_like_tiktoken(text: str) -> None:
    enc = toy()
    repaired = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert enc.decode(enc.encode(text)) == repaired
    # encode_ordinary is the compiled method itself (no Python around it): it repairs too.
    assert enc.encode_ordinary(text) == enc.encode_ordinary(repaired)
    assert enc.decode(enc.encode_ordinary(text)) == repaired


def test_encode_ordinary_is_the_compiled_method_unless_overridden() -> None:
    enc = toy()
    # A compiled method of the class (no Python frame around the core's call).
    assert type(enc.encode_ordinary).__name__ == "builtin_function_or_method"
    method = inspect.getattr_static(bytepair.Encoding, "encode_ordinary")
    assert type(method).__name__ == "method_descriptor"
    # The method documented on the class gives the same ids.
    text = "ab abc\ud800 <|end|>"
    assert bytepair.Encoding.encode_ordinary(enc, text) == enc.encode_ordinary(text)
    assert pickle.loads(pickle.dumps(enc)).encode_ordinary("abc ab") == [257, 32, 256]

    class Shouting(bytepair.Encoding):
        def encode_ordinary(self, text: str) -> list[int]:
            return super().encode_ordinary(text.upper())

    ranks = {bytes([b]): b for b in range(256)}
    loud = Shouting("loud", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})
    assert loud.encode_ordinary("ab") == [ord("A"), ord("B")]


def test_encode_and_count_with_defaults_are_compiled_and_pass_the_rest_on() -> None:
    enc = toy()
    method_encode, method_count = bytepair.Encoding.encode, bytepair.Encoding.count
    assert type(enc.encode).__name__ == "builtin_function_or_method"
    assert type(enc.count).__name__ == "builtin_function_or_method"
    for text in ["abc ab \u00e9", "", "a\ud800b", "\ud83d\ude00 ab"]:
        assert enc.encode(text) == method_encode(enc, text)
        assert enc.count(text) == method_count(enc, text) == len(enc.encode(text))
    # A special token's text: the method's error, naming the token.
    for call, method in ((enc.encode, method_encode), (enc.count, method_count)):
        with pytest.raises(ValueError) as raised:
            call("a <|end|>")
        with pytest.raises(ValueError) as expected:
            method(enc, "a <|end|>")
        assert type(raised.value) is type(expected.value)
        assert str(raised.value) == str(expected.value)
        assert "<|end|>" in str(raised.value)
        with pytest.raises(TypeError):
            call(5)
        with pytest.raises(TypeError):
            call("a", "b")
    # Keyword arguments go to the method.
    assert enc.encode("a <|end|>", allowed_special="all") == [97, 32, 300]
    assert enc.count("a <|end|>", disallowed_special=()) == 9
    assert enc.encode(text="ab") == [256]
    assert pickle.loads(pickle.dumps(enc)).count("abc ab") == 3

    class Counting(bytepair.Encoding):
        def count(self, text: str, **kwargs: Any) -> int:
            return -1

    ranks = {bytes([b]): b for b in range(256)}
    mine = Counting("c", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})
    assert mine.count("ab") == -1
    assert mine.encode("ab") == [97, 98]


@pytest.mark.parametrize("name", ["encode", "count", "encode_ordinary"])
def test_compiled_methods_are_documented_with_working_examples(name: str) -> None:
    # The compiled methods carry Encoding's documentation; its examples run as doctests do.
    method = getattr(bytepair.Encoding, name)
    assert inspect.signature(method).parameters["text"]
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner()
    test = parser.get_doctest(method.__doc__, {"Encoding": bytepair.Encoding}, name, None, 0)
    result = runner.run(test)
    assert result.attempted > 0 and result.failed == 0


def test_an_encoding_with_compiled_calls_is_freed() -> None:
    # Its compiled encode and count hold the Python methods bound to it (a cycle through its
    # __dict__): the collector must still free it.
    enc = toy()
    assert enc.encode("ab") == [256] and enc.count("ab") == 1
    gone = weakref.ref(enc)
    del enc
    gc.collect()
    assert gone() is None


@settings(max_examples=200, deadline=None)
@given(st.binary())
def test_round_trip_bytes(data: bytes) -> None:
    enc = toy()
    ids = enc._core.encode_bytes(data)
    assert enc.decode_bytes(ids) == data


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_real_vocab_round_trip_and_tiktoken(text: str) -> None:
    enc = ours("o200k_base")
    ids = enc.encode_ordinary(text)
    assert ids == tiktoken_encoding("o200k_base").encode_ordinary(text)
    assert enc.decode(ids) == text
