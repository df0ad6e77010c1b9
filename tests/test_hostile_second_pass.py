"""Hostile input, second pass (issue 31): loads that stay linear, errors that say where.

Each test reproduces one finding: added tokens by the thousand, ranks and ids that no int type
holds, and (below) the rest of the issue's Python-side points.
"""

from __future__ import annotations

import base64
import gc
import json
import time
from pathlib import Path
from typing import Any

import pytest

import bytepair
from bytepair import Encoding, formats
from bytepair.bytes_unicode import encode_bytes

from anchors import ours
from conftest import shared_path

BYTE_RANKS = {bytes([b]): b for b in range(256)}
BYTE_LEVEL = {
    "type": "ByteLevel",
    "add_prefix_space": False,
    "trim_offsets": True,
    "use_regex": True,
}


def _tokenizer_json(added: list[dict[str, Any]], **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "version": "1.0",
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": BYTE_LEVEL,
        "post_processor": None,
        "decoder": BYTE_LEVEL,
        "model": {
            "type": "BPE",
            "vocab": {encode_bytes(bytes([b])): b for b in range(256)},
            "merges": [],
        },
    }
    data.update(changes)
    return data


def _added(content: str, token_id: int, **flags: bool) -> dict[str, Any]:
    entry = {
        "id": token_id,
        "content": content,
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": False,
        "special": True,
    }
    return entry | flags


def _write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), "utf-8")
    return path


# ---- 5: loading is linear in the number of added tokens ----------------------------------


def _load_seconds(tmp_path: Path, n: int) -> float:
    added = [_added(f"<tok{i}>", 256 + i) for i in range(n)]
    path = _write_json(tmp_path / f"added{n}.json", _tokenizer_json(added))
    # The collector off while timed: its passes cost in proportion to everything the test
    # session holds, which says nothing about how loading grows with the file.
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        enc = Encoding.from_tokenizer_json(path)
        seconds = time.perf_counter() - start
    finally:
        gc.enable()
    assert enc.encode(f"<tok{n - 1}>", allowed_special="all") == [256 + n - 1]
    return seconds


def test_many_added_tokens_load_in_linear_time(tmp_path: Path) -> None:
    # Best of three: a loaded machine only ever adds time.
    small = min(_load_seconds(tmp_path, 5_000) for _ in range(3))
    large = min(_load_seconds(tmp_path, 20_000) for _ in range(3))
    assert large < 5, f"20,000 added tokens took {large:.1f} s"
    # Four times the tokens: linear is about 4x; quadratic would be 16x.
    assert large < 8 * small + 0.05, f"5,000: {small:.3f} s, 20,000: {large:.3f} s"


def test_added_token_ids_follow_tokenizers(tmp_path: Path) -> None:
    # The linear bookkeeping keeps tokenizers' rules: a repeated token keeps its first id, a
    # token in the vocabulary keeps that id, new ones count on from the vocabulary's end.
    tokenizers = pytest.importorskip("tokenizers")
    added = [
        _added("<a>", 256),
        _added("<b>", 257),
        _added("<a>", 300),
        _added("<a>", 256, lstrip=True),
        _added("a", 97, special=False),
        _added("<c>", 258, special=False),
        _added("<c>", 258),
        _added("<d>", 259),
    ]
    path = _write_json(tmp_path / "tokenizer.json", _tokenizer_json(added))
    with pytest.warns(UserWarning):
        enc = Encoding.from_tokenizer_json(path)
    oracle = tokenizers.Tokenizer.from_file(str(path))
    for text in ("x<a>y<b> <c><d>a", "<a>", "<b>", "<c>", "<d>", " <a> "):
        assert enc.encode(text, allowed_special="all") == oracle.encode(text).ids, text


# ---- 9: ranks and special ids outside the core's range are a ValueError naming the token ---


@pytest.mark.parametrize("bad", [-1, 2**28, 2**40, 2**62, 2**70])
def test_out_of_range_ranks_and_ids_are_value_errors(bad: int, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"rank of b'ab' is -?\d+"):
        Encoding("x", pat_str="gpt2", mergeable_ranks=BYTE_RANKS | {b"ab": bad}, special_tokens={})
    with pytest.raises(ValueError, match=r"special token id of '<s>' is -?\d+"):
        Encoding("x", pat_str="gpt2", mergeable_ranks=BYTE_RANKS, special_tokens={"<s>": bad})
    enc = Encoding(
        "x", pat_str="gpt2", mergeable_ranks=BYTE_RANKS | {b"ab": 256}, special_tokens={}
    )
    with pytest.raises(ValueError, match="'<s>'"):
        enc.with_special_tokens({"<s>": bad})
    tiktoken_path, gpt2_folder = tmp_path / "v.tiktoken", tmp_path / "gpt2"
    enc.save(tiktoken_path, format="tiktoken")
    enc.save(gpt2_folder, format="gpt2")
    loads = [
        lambda: Encoding.from_tiktoken_file(
            tiktoken_path, pat_str="gpt2", special_tokens={"<s>": bad}
        ),
        lambda: formats.load(tiktoken_path, pat_str="gpt2", special_tokens={"<s>": bad}),
        lambda: formats.load(gpt2_folder, special_tokens={"<s>": bad}),
    ]
    for load in loads:
        with pytest.raises(ValueError, match="'<s>'") as info:
            load()
        assert str(tmp_path) in str(info.value)


# ---- 10: encode_chat takes message text as plain str, never calling the caller's methods ---


class _Sly(str):
    """A str whose methods lie: strip() returns a control token, str() another text."""

    def strip(self, *args: Any) -> Any:
        return bytepair.chat.Special("<|eot_id|>")

    def __str__(self) -> str:
        return "<|eot_id|>"

    def __hash__(self) -> int:
        return hash("user")

    def __eq__(self, other: object) -> bool:
        return True

    def __getitem__(self, key: Any) -> Any:
        return bytepair.chat.Special("<|eot_id|>")


def test_encode_chat_ignores_methods_of_str_subclasses() -> None:
    enc = ours("llama3")
    eot = enc.encode_single_token("<|eot_id|>")
    sly = [{"role": "user", "content": _Sly("hi")}]
    plain = [{"role": "user", "content": "hi"}]
    ids = enc.encode_chat(sly, template="llama3")
    assert ids == enc.encode_chat(plain, template="llama3")
    assert ids.count(eot) == 1  # the template's own, after the content
    assert enc.encode_chat([{"role": _Sly("user"), "content": "hi"}], template="llama3") == ids
    # A role that only compares equal to a known one is not that role.
    with pytest.raises(ValueError, match="not a role"):
        enc.encode_chat([{"role": _Sly("nobody"), "content": "hi"}], template="llama3")
    # An object that claims to be a str (through __class__) is none.
    fake = type("Fake", (), {"__class__": property(lambda self: str)})()
    with pytest.raises(TypeError, match="'content' must be a str"):
        enc.encode_chat([{"role": "user", "content": fake}], template="llama3")


# ---- 3: a Replace normalizer's regex is bounded by time per character --------------------


def _with_normalizer(path: Path, source: Path, normalizer: Any) -> Path:
    data = json.loads(source.read_text("utf-8"))
    data["normalizer"] = normalizer
    return _write_json(path, data)


def test_backtracking_replace_regex_fails_fast(tmp_path: Path) -> None:
    evil = {"type": "Replace", "pattern": {"Regex": "(a|aa)+c"}, "content": "x"}
    normalizer = {"type": "Sequence", "normalizers": [{"type": "NFC"}, evil]}
    path = _write_json(tmp_path / "t.json", _tokenizer_json([], normalizer=normalizer))
    enc = Encoding.from_tokenizer_json(path)
    assert enc.encode("aac b") == enc.encode("x b")  # an ordinary text is replaced as before
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"normalizer\.normalizers\[1\]\.pattern.*\(a\|aa\)\+c"):
        enc.encode("a" * 45)
    assert time.perf_counter() - start < 10


@pytest.mark.parametrize(
    "normalizer",
    [
        {"type": "Replace", "pattern": {"Regex": r"\s+"}, "content": " "},
        {"type": "Replace", "pattern": {"Regex": r"(\d)(\d)"}, "content": "<$1$2>"},
        {"type": "Replace", "pattern": {"Regex": r"[A-Z][a-z]*"}, "content": "W"},
    ],
    ids=["spaces", "digits", "words"],
)
def test_ordinary_replace_regexes_match_tokenizers(normalizer: Any, tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    from formats_support import corpus_samples

    path = _with_normalizer(
        tmp_path / "tokenizer.json", shared_path("vocab", "gpt2-hf", "gpt2.json"), normalizer
    )
    enc = Encoding.from_tokenizer_json(path)
    oracle = tokenizers.Tokenizer.from_file(str(path))
    for label, text in corpus_samples()[:12]:
        assert enc.encode(text) == oracle.encode(text).ids, label


# ---- 7: errors that say where -------------------------------------------------------------

_BYTE_LINES = "".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256))


@pytest.mark.parametrize(
    ("content", "where"),
    [
        (_BYTE_LINES + "YWI= 5\n", "lines 6, 257"),  # a duplicate rank: both lines
        ("YWI= 5\n" + _BYTE_LINES, "lines 1, 7"),
        (_BYTE_LINES + "YQ== 300\n", "lines 98, 257"),  # a duplicate token: its two ranks
        (_BYTE_LINES + "YWI= 268435000\n", "line 257"),
        (_BYTE_LINES + "YWI= 4294967295\n", "line 257"),
        ((_BYTE_LINES + "YWI= 5\n").replace("\n", "\r\n"), "lines 6, 257"),
    ],
    ids=[
        "duplicate-rank",
        "duplicate-rank-first",
        "duplicate-token",
        "huge-rank",
        "u32-max",
        "crlf",
    ],
)
def test_tiktoken_rank_errors_name_the_line(content: str, where: str, tmp_path: Path) -> None:
    path = tmp_path / "v.tiktoken"
    path.write_bytes(content.encode())
    for load in (
        lambda: Encoding.from_tiktoken_file(path, pat_str="gpt2"),
        lambda: formats.load(path, pat_str="gpt2"),
    ):
        with pytest.raises(ValueError) as info:
            load()
        assert str(path) in str(info.value) and f"({where})" in str(info.value), info.value


def _nested(kind: str, depth: int, leaf: dict[str, Any]) -> dict[str, Any]:
    key = {"normalizer": "normalizers", "pre_tokenizer": "pretokenizers"}[kind]
    spec = leaf
    for _ in range(depth):
        spec = {"type": "Sequence", key: [spec]}
    return spec


@pytest.mark.parametrize("kind", ["normalizer", "pre_tokenizer"])
def test_deeply_nested_sequences_are_value_errors(kind: str, tmp_path: Path) -> None:
    from bytepair.formats.hf_pipeline import MAX_NESTING

    leaf = {"type": "NFC"} if kind == "normalizer" else BYTE_LEVEL
    key = "normalizers" if kind == "normalizer" else "pretokenizers"
    for depth in (300, MAX_NESTING + 1):
        path = _write_json(
            tmp_path / "t.json", _tokenizer_json([], **{kind: _nested(kind, depth, leaf)})
        )
        assert path.stat().st_size < 200_000
        with pytest.raises(ValueError, match=rf"{kind}(\.{key}\[0\])+: .*nested more than"):
            Encoding.from_tokenizer_json(path)
    path = _write_json(
        tmp_path / "ok.json", _tokenizer_json([], **{kind: _nested(kind, MAX_NESTING, leaf)})
    )
    assert Encoding.from_tokenizer_json(path).encode("héllo") == list("héllo".encode())


def test_deep_json_inside_a_component_is_a_value_error(tmp_path: Path) -> None:
    junk: list[Any] = []
    for _ in range(900):
        junk = [junk]
    for kind in ("normalizer", "post_processor", "decoder"):
        component = {"type": "ByteLevel" if kind != "normalizer" else "NFC", "junk": junk}
        if kind == "decoder":
            component |= {k: v for k, v in BYTE_LEVEL.items() if k != "type"}
        path = _write_json(tmp_path / "t.json", _tokenizer_json([], **{kind: component}))
        with pytest.raises(ValueError, match=rf"{kind}\.junk(\[0\])+: JSON nested more than"):
            Encoding.from_tokenizer_json(path)


# ---- 11: saves follow symbolic links, clean up after killed writers, sync the folder -------


def test_save_through_a_symlink_writes_its_target(tmp_path: Path) -> None:
    from bytepair import _io

    target = tmp_path / "real" / "v.tiktoken"
    target.parent.mkdir()
    target.write_bytes(b"old")
    link = tmp_path / "v.tiktoken"
    link.symlink_to(target)
    enc = Encoding("x", pat_str="gpt2", mergeable_ranks=BYTE_RANKS, special_tokens={})
    enc.save(link, format="tiktoken")
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert Encoding.from_tiktoken_file(target, pat_str="gpt2").encode("hi") == [104, 105]
    _io.write_all_or_nothing({link: b"both"})
    assert link.is_symlink() and target.read_bytes() == b"both"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["real", "v.tiktoken", "v.tiktoken"]


def test_a_killed_writer_leaves_nothing_after_the_next_save(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from bytepair import _io

    path = tmp_path / "v.bin"
    # A writer killed after staging its temporary file, before the rename.
    child = (
        "import os, sys, pathlib; from bytepair import _io; "
        "_io._stage(pathlib.Path(sys.argv[1]), b'partial'); os._exit(9)"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(_io.__file__).parents[1])}
    assert subprocess.run([sys.executable, "-c", child, str(path)], env=env).returncode == 9
    (left,) = tmp_path.iterdir()
    assert left.name.startswith(".v.bin.bytepair-") and left.name.endswith(".tmp")
    # Files that are not ours, or ours but of a live writer, stay.
    others = [tmp_path / ".v.bin.mine.tmp", tmp_path / "v.bin.tmp"]
    live = tmp_path / f".v.bin.bytepair-{os.getpid()}-live.tmp"
    for p in [*others, live]:
        p.write_bytes(b"")
    # Ours and untouched for longer than the limit: stale even if its writer runs.
    old = tmp_path / f".v.bin.bytepair-{os.getpid()}-old.old"
    old.write_bytes(b"")
    os.utime(old, (time.time() - _io.STALE_SECONDS - 60,) * 2)
    _io.write_atomic(path, b"whole")
    assert path.read_bytes() == b"whole"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in [path, *others, live]
    )


def test_saves_sync_the_folder_after_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import stat

    from bytepair import _io

    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append("fsync-folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "fsync-file")
        real_fsync(fd)

    def replace(src: Any, dst: Any) -> None:
        events.append("rename")
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    _io.write_atomic(tmp_path / "a", b"1")
    assert events == ["fsync-file", "rename", "fsync-folder"]
    events.clear()
    _io.write_all_or_nothing({tmp_path / "b": b"2", tmp_path / "c": b"3"})
    assert events == ["fsync-file", "fsync-file", "rename", "rename", "fsync-folder"]


# ---- 4: loading is linear in the length of a special token -------------------------------


def _seconds(call: Any) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def test_long_special_token_loads_in_linear_time(tmp_path: Path) -> None:
    def build(n: int) -> Encoding:
        return Encoding(
            "x", pat_str="gpt2", mergeable_ranks=BYTE_RANKS, special_tokens={"x" * n: 256}
        )

    # 20,000 first: where loading is quadratic this fails in about a second, not minutes.
    assert _seconds(lambda: build(20_000)) < 0.4
    assert _seconds(lambda: build(100_000)) < 2
    path = _write_json(tmp_path / "t.json", _tokenizer_json([_added("y" * 100_000, 256)]))
    assert _seconds(lambda: Encoding.from_tokenizer_json(path)) < 2


# ---- 8: sanitize and find_special fold characters that expand, as NFKC does --------------

_EXPANDING = {"fi": "ﬁ", "fl": "ﬂ", "ff": "ﬀ", "st": "ﬆ", "ffi": "ﬃ"}


def _expanded_variants(token: str) -> list[str]:
    """``token`` with each letter pair that a ligature spells written as that ligature, and the
    brackets as lookalikes."""
    out = []
    for letters, ligature in _EXPANDING.items():
        at = token.find(letters)
        if at >= 0:
            variant = token[:at] + ligature + token[at + len(letters) :]
            out += [variant, variant.replace("<", "‹").replace(">", "›")]
    return out


def test_sanitize_folds_expansions_as_the_normalizer_does(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    data = json.loads(shared_path("vocab", "smollm", "tokenizer.json").read_text("utf-8"))
    data["normalizer"] = {"type": "NFKC"}
    data["padding"] = data["truncation"] = None
    for token in data["added_tokens"]:
        token["normalized"] = True
    path = _write_json(tmp_path / "tokenizer.json", data)
    enc = Encoding.from_tokenizer_json(path)
    oracle = tokenizers.Tokenizer.from_file(str(path))
    special_ids = {t["id"] for t in data["added_tokens"] if t["special"]}
    variants = [v for t in sorted(enc.special_tokens_set) for v in _expanded_variants(t)]
    variants += ["‹|im_ﬆart|>", "x <ﬁlename> y ﬁ <|im_ﬆart|>ß"]
    assert "<ﬁlename>" in variants
    spelled = 0
    for text in variants:
        framed = f"a {text} b"
        if special_ids & set(oracle.encode(framed).ids):
            spelled += 1
            assert enc.find_special(framed), text  # tokenizers reads a control token here
            assert set(enc.encode(framed, allowed_special="all")) & special_ids
        clean = enc.sanitize(framed)
        assert not special_ids & set(oracle.encode(clean).ids), (text, clean)
        assert not enc.find_special(clean), clean
        for m in enc.find_special(framed):  # spans index the original text
            assert framed[m.start : m.end] == m.text and m.text.strip() == m.text
    assert spelled >= 5
    (match,) = enc.find_special("‹|ﬁm_prefix|>")
    assert (match.start, match.end, match.token) == (0, 13, "<|fim_prefix|>")
    assert enc.sanitize("‹ﬁlename>") != "‹ﬁlename>"
