"""bytepair.formats.gpt2.load_hf_files: vocab.json + merges.txt read as tokenizers reads them.

The reference for each pair is ``tokenizers.models.BPE.from_file`` with the pre-tokenizer and
normalizer that MANIFEST.tsv gives for the model (GPT-2: ByteLevel; Qwen2: NFC +
Split(qwen2 pattern) + ByteLevel(use_regex=False); SmolLM: Digits(individual) + ByteLevel).
"""

from __future__ import annotations

from typing import Any

import pytest
import tokenizers
from formats_support import corpus_samples, difference
from tokenizers import Regex, decoders, models, normalizers
from tokenizers import pre_tokenizers as pt

from bytepair import Encoding, patterns

from conftest import shared_path

CASES: dict[str, tuple[dict[str, Any], Any, Any]] = {
    "gpt2-hf": ({}, pt.ByteLevel(add_prefix_space=False), None),
    "qwen2": (
        {"pat_str": "qwen2", "normalizer": "NFC"},
        pt.Sequence(
            [
                pt.Split(Regex(patterns.QWEN2), "isolated"),
                pt.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        ),
        normalizers.NFC(),
    ),
    "smollm": (
        {
            "pre_tokenizer": {
                "type": "Sequence",
                "pretokenizers": [
                    {"type": "Digits", "individual_digits": True},
                    {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
                ],
            }
        },
        pt.Sequence([pt.Digits(individual_digits=True), pt.ByteLevel(add_prefix_space=False)]),
        None,
    ),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def pair(request: pytest.FixtureRequest) -> tuple[Encoding, tokenizers.Tokenizer]:
    options, pre, normalizer = CASES[request.param]
    folder = shared_path("vocab", request.param)
    vocab, merges = folder / "vocab.json", folder / "merges.txt"
    enc = Encoding.from_hf_files(vocab, merges, **options)
    tk = tokenizers.Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
    tk.pre_tokenizer = pre
    tk.decoder = decoders.ByteLevel()
    if normalizer is not None:
        tk.normalizer = normalizer
    return enc, tk


@pytest.mark.slow
def test_corpus_ids_and_text(pair: tuple[Encoding, tokenizers.Tokenizer]) -> None:
    enc, tk = pair
    samples = corpus_samples()
    texts = [t for _, t in samples]
    # BPE.from_file knows no special tokens: compare with our ordinary encoding.
    want = [e.ids for e in tk.encode_batch(texts)]
    for (label, text), w in zip(samples, want, strict=True):
        got = enc.encode_ordinary(text)
        assert got == w, difference(f"{enc.name} {label}", w, got)
        assert enc.decode(w) == tk.decode(w), label


@pytest.mark.slow
def test_special_tokens_as_added_tokens(pair: tuple[Encoding, tokenizers.Tokenizer]) -> None:
    enc, tk = pair
    # Entries that no merge makes are taken as special tokens (GPT-2's <|endoftext|>, SmolLM's
    # 17); allowed, they behave like tokenizers' added tokens.
    expected = {"gpt2-hf": 1, "qwen2": 0, "smollm": 17}[enc.name]
    assert len(enc.special_tokens_set) == expected
    tk.add_special_tokens(sorted(enc.special_tokens_set))
    text = shared_path("corpus", "edge", "special_token_lookalikes.txt").read_text("utf-8")[:30000]
    assert enc.encode(text, allowed_special="all") == tk.encode(text).ids
    if expected:
        with pytest.raises(ValueError, match="disallowed special token"):
            enc.encode(text)


def test_merges_file_with_crlf_and_hash_merges() -> None:
    # Qwen2's merges.txt has CRLF endings and 96 merges that start with "#".
    folder = shared_path("vocab", "qwen2")
    assert b"\r\n" in (folder / "merges.txt").read_bytes()[:200]
    enc = Encoding.from_file(folder, pat_str="qwen2", normalizer="NFC")
    assert enc.decode(enc.encode("#include <stdio.h>\r\n")) == "#include <stdio.h>\r\n"
    merges = enc._core.pair_merges() or []
    assert len(merges) == 151387
