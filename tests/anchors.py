"""Build the libraries we compare against (tiktoken) offline from the shared vocabulary files."""

from __future__ import annotations

import functools
from pathlib import Path

import tiktoken
from tiktoken.load import load_tiktoken_bpe

import bytepair
from bytepair import registry

from conftest import shared_path

# The encodings whose ids must equal tiktoken's on every corpus file.
TIKTOKEN_NAMES = [
    "gpt2",
    "r50k_base",
    "p50k_base",
    "p50k_edit",
    "cl100k_base",
    "o200k_base",
    "llama3",
]


def vocab_dir() -> Path:
    return shared_path("vocab")


@functools.cache
def ours(name: str) -> bytepair.Encoding:
    return bytepair.get_encoding(name, vocab_dir=vocab_dir())


@functools.cache
def tiktoken_encoding(name: str) -> tiktoken.Encoding:
    spec = registry.ENCODINGS[name]
    path, _ = registry.find_vocab_file(name, vocab_dir=vocab_dir())
    return tiktoken.Encoding(
        name,
        pat_str=spec.pat_str,
        mergeable_ranks=load_tiktoken_bpe(str(path)),
        special_tokens=spec.special_tokens,
        explicit_n_vocab=spec.explicit_n_vocab,
    )


def corpus_files() -> list[Path]:
    """Every file of the shared corpus, or [] when the data is absent (tests then skip)."""
    root = registry_root()
    if root is None:
        return []
    return sorted(p for p in root.glob("*/*") if p.is_file() and p.name != "MANIFEST.tsv")


def registry_root() -> Path | None:
    from conftest import SHARED

    root = SHARED / "corpus"
    return root if root.is_dir() else None


def corpus_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"
