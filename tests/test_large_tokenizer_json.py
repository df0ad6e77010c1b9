"""A ``tokenizer.json``'s vocabulary and merges are read by the core into compact tables
(``bytepair.formats.hf_json.read_tokenizer_json``): loading a huge file costs a small multiple
of its size (SECURITY.md, point 4), and the tables give the ids the Python path gives."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bytepair import Encoding
from bytepair.bytes_unicode import encode_bytes
from bytepair.formats.hf_json import load_tokenizer_json, read_tokenizer_json

from conftest import shared_path

# The child writes a valid byte-level tokenizer.json of N entries and merges (and, given a
# third argument K, one more key of K letters that no merge makes), then reports the file's size
# and the peak resident memory that loading it and encoding a long piece added.
CHILD = r"""
import json, random, resource, sys
from bytepair.bytes_unicode import encode_bytes
n, out = int(sys.argv[1]), sys.argv[2]
long_key = int(sys.argv[3]) if len(sys.argv) > 3 else 0
rng = random.Random(1)
alpha = [encode_bytes(bytes([b])) for b in range(256)]
vocab = {a: i for i, a in enumerate(alpha)}
short, merges = list(alpha), []
while len(vocab) < n:
    left, right = short[rng.randrange(len(short))], alpha[rng.randrange(256)]
    if left + right in vocab:
        continue
    vocab[left + right] = len(vocab)
    merges.append(f"{left} {right}")
    if len(left) < 4:
        short.append(left + right)
if long_key:
    vocab["ab" * (long_key // 2)] = len(vocab)
level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
doc = {"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": level,
       "post_processor": None, "decoder": level,
       "model": {"type": "BPE", "vocab": vocab, "merges": merges}}
with open(out, "w") as f:
    json.dump(doc, f, ensure_ascii=False)
del doc, vocab, merges, short
import gc, os
gc.collect()
import bytepair
with open("/proc/self/status") as f:
    before = next(int(l.split()[1]) for l in f if l.startswith("VmRSS"))
# VmHWM resets only by writing /proc/self/clear_refs: measure the growth over the current size.
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
enc = bytepair.Encoding.from_file(out)
long_piece = enc.encode_ordinary("ab" * 5000)
with open("/proc/self/status") as f:
    peak = next(int(l.split()[1]) for l in f if l.startswith("VmHWM"))
print(json.dumps({"size": os.path.getsize(out), "added": (peak - before) * 1024,
                  "n_vocab": enc.n_vocab, "ids": enc.encode_ordinary("hello world"),
                  "long_piece": len(long_piece)}))
"""


def _load_in_child(tmp_path: Path, entries: str, *key_size: str) -> dict[str, int]:
    """CHILD's report for a generated file of `entries` entries (and one extra key's size)."""
    out = tmp_path / "tokenizer.json"
    run = subprocess.run(
        [sys.executable, "-c", CHILD, entries, str(out), *key_size],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    report: dict[str, int] = json.loads(run.stdout)
    return report


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux /proc")
def test_loading_a_large_tokenizer_json_costs_a_small_multiple_of_it(tmp_path: Path) -> None:
    report = _load_in_child(tmp_path, "300000")
    assert report["n_vocab"] == 300_000
    # Measured about 14x with the core's tables (the built encoder's own tables are most of
    # it); parsed by Python, the same file cost about 30x.
    assert report["added"] < 20 * report["size"], report


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux /proc")
def test_one_huge_key_costs_a_small_multiple_of_the_file(tmp_path: Path) -> None:
    # A 16 MB key that no merge makes: it is never merged, neither for the whole-piece table
    # nor for the long-piece search (merging it cost about 50 bytes per byte, 41 s for 50 MB).
    report = _load_in_child(tmp_path, "2000", "16000000")
    assert report["n_vocab"] == 2001
    assert report["size"] > 16_000_000
    assert report["long_piece"] > 1  # the key is no token of any text
    assert report["added"] < 8 * report["size"], report


def test_a_merge_may_not_make_a_token_over_a_mebibyte(tmp_path: Path) -> None:
    alpha = [encode_bytes(bytes([b])) for b in range(256)]
    vocab = {a: i for i, a in enumerate(alpha)}
    half = "a" * (1 << 19)
    vocab[half] = 256
    vocab[half + half] = 257
    level = {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True}
    model = {"type": "BPE", "vocab": vocab, "merges": [f"{half} {half}"]}
    doc = {"pre_tokenizer": level, "decoder": level, "model": model}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert Encoding.from_file(path).n_vocab == 258  # exactly 1 MiB: allowed
    vocab[half + half + "a"] = 258
    model["merges"].append(f"{half + half} a")
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match=r"merges\[1\]: merge makes a token of 1048577 bytes"):
        Encoding.from_file(path)


HF_FILES = ["gpt2-hf/gpt2.json", "smollm/tokenizer.json", "roberta-base/tokenizer.json"]
IGNORE = ("padding", "truncation")


@pytest.mark.parametrize("name", HF_FILES)
def test_tables_give_the_ids_of_the_python_path(name: str) -> None:
    path = shared_path("vocab", name)
    spec, tables = read_tokenizer_json(path)
    assert tables is not None
    assert spec["model"]["vocab"] == {}
    full = json.loads(path.read_text(encoding="utf-8"))
    assert len(tables) == len(full["model"]["vocab"])
    assert tables.merge_count == len(full["model"].get("merges", []))
    token, token_id = next(iter(full["model"]["vocab"].items()))
    assert tables[token] == token_id and token in tables and tables.get("\0nope") is None
    fast = Encoding.from_file(path, ignore_settings=IGNORE)
    slow = load_tokenizer_json(path, data=full, ignore_settings=IGNORE)
    text = shared_path("corpus").joinpath("README.md")
    sample = text.read_text(encoding="utf-8") if text.is_file() else "Hello, world!  \n\tx"
    sample += " naïve café 東京 🙂 1234567"
    assert fast.encode(sample) == slow.encode(sample)
    assert fast.n_vocab == slow.n_vocab


def test_a_repeated_vocabulary_key_is_still_named(tmp_path: Path) -> None:
    # The core declines such tables; the Python path names what is wrong.
    path = tmp_path / "tokenizer.json"
    path.write_text('{"model": {"type": "BPE", "vocab": {"a": 0,\n"a": 1}}}', encoding="utf-8")
    with pytest.raises(ValueError, match="the key 'a' appears twice"):
        Encoding.from_file(path)
