"""The pre-tokenizers of well-known ``vocab.json`` + ``merges.txt`` pairs, by the vocabulary's hash.

The two files hold the vocabulary and the merges, never the pre-tokenizer or the normalizer, and
a wrong pre-tokenizer gives wrong ids without any error (Qwen2's files read with GPT-2's
``ByteLevel`` split digits and words differently). So a pair is read only where its pipeline is
known: given by the caller (``pat_str=``, ``pre_tokenizer=``), or recognised here by the sha256
of ``vocab.json`` (the pipeline of the model's own ``tokenizer.json``).

>>> from bytepair.formats.hf_known import KNOWN_HF_VOCABS
>>> KNOWN_HF_VOCABS["ca10d7e9fb3ed18575dd1e277a2579c16d108e32f27439684afa0e10b1440910"].model
'Qwen2'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bytepair.patterns import QWEN2

__all__ = ["KNOWN_HF_VOCABS", "KnownHfVocab", "missing_pre_tokenizer_message"]

_BYTE_LEVEL = {
    "type": "ByteLevel",
    "add_prefix_space": False,
    "trim_offsets": True,
    "use_regex": True,
}


@dataclass(frozen=True)
class KnownHfVocab:
    """A model's pipeline, as its ``tokenizer.json`` gives it."""

    model: str
    pre_tokenizer: dict[str, Any]
    normalizer: dict[str, Any] | None = None


KNOWN_HF_VOCABS: dict[str, KnownHfVocab] = {
    # Qwen2 (Qwen2-1.5B-Instruct): NFC, Split(qwen2 regex) + ByteLevel without its regex.
    "ca10d7e9fb3ed18575dd1e277a2579c16d108e32f27439684afa0e10b1440910": KnownHfVocab(
        "Qwen2",
        {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": QWEN2},
                    "behavior": "Isolated",
                    "invert": False,
                },
                dict(_BYTE_LEVEL, use_regex=False),
            ],
        },
        {"type": "NFC"},
    ),
    # SmolLM / SmolLM2: single digits, then ByteLevel.
    "82b84012e3add4d01d12ba14442026e49b8cbbaead1f79ecf3d919784f82dc79": KnownHfVocab(
        "SmolLM",
        {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Digits", "individual_digits": True},
                _BYTE_LEVEL,
            ],
        },
    ),
    # GPT-2 as Hugging Face ships it (whisper's copy): ByteLevel.
    "3ba3c3109ff33976c4bd966589c11ee14fcaa1f4c9e5e154c2ed7f99d80709e7": KnownHfVocab(
        "GPT-2", _BYTE_LEVEL
    ),
}
"""Pipelines by the sha256 (hex) of ``vocab.json``."""


def missing_pre_tokenizer_message(source: str) -> str:
    """Why a pair whose pipeline is unknown is not read, and what to pass."""
    return (
        f"{source}: vocab.json + merges.txt do not say how text is pre-tokenized, and this "
        "vocabulary is not one bytepair recognises; a wrong guess gives wrong ids. Pass the "
        "model's pattern, e.g. pat_str='gpt2' (GPT-2's ByteLevel), 'llama3' or 'qwen2', or "
        "pre_tokenizer= (the pre_tokenizer object of its tokenizer.json), and normalizer= if "
        "it has one; or load its tokenizer.json instead"
    )
