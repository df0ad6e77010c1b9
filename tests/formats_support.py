"""Shared by the ``test_formats_*`` modules: corpus samples, reference tokenizers, messages.

``tokenizers`` encodes about 1 MB/s, so the differential tests compare on a sample of every
corpus file rather than the whole corpus: the first 20 000 characters and 20 000 from the middle
(one sample when the file is shorter than 40 000), plus per-line encoding of a few files.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

from conftest import shared_path

SAMPLE_CHARS = 20_000

# The vocabularies of /work/shared/vocab that are Hugging Face files, by MANIFEST name.
TOKENIZER_JSONS = {
    "gpt2-hf": "gpt2-hf/gpt2.json",
    "gpt-neox-20b": "gpt-neox-20b/20B_tokenizer.json",
    "olmo1": "olmo1/allenai_gpt-neox-olmo-dolma-v1_5.json",
    "olmo2-dolma2": "olmo2-dolma2/allenai_dolma2.json",
    "smollm": "smollm/tokenizer.json",
    "phi-2": "phi-2/tokenizer.json",
    "falcon": "falcon/tokenizer.json",
    "roberta-base": "roberta-base/tokenizer.json",
    "claude-legacy": "claude-legacy/tokenizer.json",
}

# Files whose lines are encoded one by one (short texts: the start and end of text matter).
PER_LINE_FILES = (
    "multilingual/tatoeba_80_more_languages.txt",
    "multilingual/tweets_xlmt_8langs_with_emoji.txt",
    "code/python_cpython_3.11.7_stdlib_35_modules.py",
    "edge/special_token_lookalikes.txt",
)
PER_LINE_LIMIT = 400


def read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace")


@functools.cache
def corpus_samples(size: int = SAMPLE_CHARS) -> tuple[tuple[str, str], ...]:
    """``(label, text)`` for the start and the middle of every corpus file."""
    root = shared_path("corpus")
    out = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix != ".tsv"):
        text = read_text(path)
        name = str(path.relative_to(root))
        out.append((f"{name}[:{size}]", text[:size]))
        if len(text) > 2 * size:
            mid = len(text) // 2
            out.append((f"{name}[{mid}:+{size}]", text[mid : mid + size]))
    return tuple(out)


@functools.cache
def corpus_lines() -> tuple[tuple[str, str], ...]:
    """``(label, line)`` for the first lines of :data:`PER_LINE_FILES`."""
    out = []
    for name in PER_LINE_FILES:
        lines = read_text(shared_path("corpus", name)).splitlines(keepends=True)
        out.extend((f"{name}:{i + 1}", line) for i, line in enumerate(lines[:PER_LINE_LIMIT]))
    return tuple(out)


def difference(label: str, want: Sequence[int], got: Sequence[int]) -> str:
    """Where two id lists part, for an assertion message."""
    at = next(
        (i for i, (a, b) in enumerate(zip(want, got, strict=False)) if a != b),
        min(len(want), len(got)),
    )
    lo = max(0, at - 3)
    return (
        f"{label}: ids differ at {at} (lengths {len(want)}, {len(got)}): "
        f"expected ...{list(want[lo : at + 5])}, got ...{list(got[lo : at + 5])}"
    )


# SmolLM's file sets padding and truncation, which bytepair reads only when told to drop them
# (tokenizers' ids after no_padding() and no_truncation(), as hf_tokenizer gives).
IGNORED_SETTINGS = ("padding", "truncation")


def hf_tokenizer(path: Path):  # type: ignore[no-untyped-def]
    """``tokenizers.Tokenizer.from_file`` without padding or truncation (SmolLM's file sets
    both)."""
    import tokenizers

    tk = tokenizers.Tokenizer.from_file(str(path))
    tk.no_padding()
    tk.no_truncation()
    return tk


def qwen2_tokenizer():  # type: ignore[no-untyped-def]
    """``tokenizers``' reading of Qwen2's ``vocab.json`` + ``merges.txt`` with Qwen2's own
    pipeline (NFC, its pattern, ByteLevel without a regex), which the pair of files lacks."""
    import tokenizers
    from tokenizers import decoders, models, normalizers
    from tokenizers import pre_tokenizers as pt

    from bytepair import patterns

    folder = shared_path("vocab", "qwen2")
    tk = tokenizers.Tokenizer(
        models.BPE.from_file(str(folder / "vocab.json"), str(folder / "merges.txt"))
    )
    tk.normalizer = normalizers.NFC()
    tk.pre_tokenizer = pt.Sequence(
        [
            pt.Split(tokenizers.Regex(patterns.QWEN2), "isolated"),
            pt.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tk.decoder = decoders.ByteLevel()
    return tk
