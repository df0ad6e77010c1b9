"""bytepair.formats.gpt2: GPT-2's encoder.json + vocab.bpe read as tiktoken reads them.

GPT-2's own files must give ``gpt2`` (r50k) ids and ollama's Llama 3.2 files Llama 3's, and the
writers must reproduce the original files byte for byte.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from formats_support import corpus_samples, difference

import bytepair
from bytepair import Encoding, registry

from conftest import shared_path


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _compare(enc: Encoding, reference: Encoding) -> None:
    for label, text in corpus_samples():
        want = reference.encode(text, allowed_special="all")
        got = enc.encode(text, allowed_special="all")
        assert got == want, difference(f"{enc.name} {label}", want, got)


def test_gpt2_files_equal_tiktoken_gpt2() -> None:
    folder = shared_path("vocab", "gpt2")
    enc = Encoding.from_gpt2_files(folder / "encoder.json", folder / "vocab.bpe")
    assert enc.special_tokens_set == {"<|endoftext|>"} and enc.eot_token == 50256
    assert enc.encode("hello world") == [31373, 995]
    reference = bytepair.get_encoding("gpt2", vocab_dir=shared_path("vocab"))
    assert enc.n_vocab == reference.n_vocab == 50257
    assert isinstance(enc._core, bytepair._core.RankEncoder)
    _compare(enc, reference)


@pytest.mark.slow
def test_llama32_files_equal_llama3() -> None:
    folder = shared_path("vocab", "llama3.2-gpt2fmt")
    enc = Encoding.from_gpt2_files(
        folder / "encoder.json",
        folder / "vocab.bpe",
        pat_str="llama3",
        special_tokens=registry._llama3_specials(),
    )
    reference = bytepair.get_encoding("llama3", vocab_dir=shared_path("vocab"))
    assert enc._mergeable_ranks == reference._mergeable_ranks
    assert enc.encode("This is a test sentence.") == [2028, 374, 264, 1296, 11914, 13]
    _compare(enc, reference)


def test_from_file_recognises_gpt2_files() -> None:
    enc = Encoding.from_file(shared_path("vocab", "gpt2"))
    assert enc.name == "gpt2" and enc.encode("hello world") == [31373, 995]
    # Either file of the pair will do.
    assert Encoding.from_file(shared_path("vocab", "gpt2", "vocab.bpe")).n_vocab == 50257


def test_writers_reproduce_the_original_files(tmp_path: Path) -> None:
    vocab = shared_path("vocab")
    r50k = bytepair.get_encoding("gpt2", vocab_dir=vocab)
    encoder, merges = r50k.save(tmp_path, format="gpt2")
    assert _sha256(encoder) == _sha256(vocab / "gpt2" / "encoder.json")
    assert _sha256(merges) == _sha256(vocab / "gpt2" / "vocab.bpe")
    # GPT-2's tokenizer.json is tiktoken's r50k exactly (pair rule = rank rule, proven by the
    # core), so it writes r50k_base.tiktoken byte for byte.
    hf = Encoding.from_tokenizer_json(vocab / "gpt2-hf" / "gpt2.json")
    (written,) = hf.save(tmp_path / "gpt2.tiktoken", format="tiktoken")
    assert _sha256(written) == _sha256(vocab / "r50k_base" / "r50k_base.tiktoken")


def test_rank_equivalence_is_reported() -> None:
    vocab = shared_path("vocab")
    assert (
        Encoding.from_tokenizer_json(vocab / "gpt2-hf" / "gpt2.json")._core.rank_equivalence()
        is None
    )
    roberta = Encoding.from_tokenizer_json(vocab / "roberta-base" / "tokenizer.json")
    reason = roberta._core.rank_equivalence()
    assert reason is not None and "order of the ids" in reason
