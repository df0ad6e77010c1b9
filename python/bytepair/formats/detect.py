"""Recognising a vocabulary's format by its content (names are only a tie-breaker).

- a JSON object with a ``model`` object: Hugging Face ``tokenizer.json`` (``sentencepiece-json``
  when it is a SentencePiece-style BPE model, :mod:`bytepair.formats.sentencepiece_json`);
- a JSON object with a ``config`` object or a ``vocab`` list: Mistral's ``tekken.json``;
- a protobuf ``ModelProto``: a SentencePiece ``.model`` (Llama 2's ``tokenizer.model``);
- a JSON object of token -> id: ``encoder.json`` / ``vocab.json``, paired with the merges file
  beside it (``vocab.bpe``: GPT-2 files, read as tiktoken does; ``merges.txt``: Hugging Face files);
- lines of ``<base64> <integer>``: tiktoken (``.tiktoken``, and Llama 3's ``tokenizer.model``);
- lines of ``<token> <token>``: a merges file, paired with the vocabulary beside it;
- a folder: the first of ``tokenizer.json``, ``vocab.json`` + ``merges.txt``, ``encoder.json`` +
  ``vocab.bpe``, ``tekken.json``, a single ``*.tiktoken`` or ``tokenizer.model``.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "x.model").write_text("IQ== 0\\nIg== 1\\n")
>>> detect(folder / "x.model").kind
'tiktoken'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from bytepair.formats.common import StrPath, read_json
from bytepair.formats.hf_json import read_tokenizer_json
from bytepair.formats.sentencepiece_json import is_sentencepiece_json
from bytepair.formats.sentencepiece_model import looks_like_sentencepiece_model
from bytepair.formats.tekken import looks_like_tekken

__all__ = ["Detected", "detect"]

Kind = Literal[
    "tiktoken",
    "gpt2",
    "hf-files",
    "tokenizer-json",
    "tekken",
    "sentencepiece-json",
    "sentencepiece-model",
]

_TIKTOKEN_LINE = re.compile(rb"^[A-Za-z0-9+/]*=*[ \t]+\d+\r?$")


@dataclass(frozen=True)
class Detected:
    """A recognised vocabulary: its kind, its files, and the data already read (``parsed`` JSON
    for ``tokenizer-json`` and ``sentencepiece-json``, ``raw`` bytes for ``tiktoken`` and
    ``sentencepiece-model``, and for ``tokenizer-json`` the model's ``tables`` the core read,
    see :func:`~bytepair.formats.hf_json.read_tokenizer_json`), so nothing is read twice."""

    kind: Kind
    paths: tuple[Path, ...]
    parsed: Any = field(default=None, compare=False, repr=False)
    raw: bytes | None = field(default=None, compare=False, repr=False)
    tables: Any = field(default=None, compare=False, repr=False)


def _sibling(path: Path, *names: str) -> Path | None:
    for name in names:
        candidate = path.with_name(name)
        if candidate.is_file():
            return candidate
    return None


def _pair_for_vocab(path: Path) -> Detected:
    preferred = (
        ("vocab.bpe", "merges.txt") if path.name == "encoder.json" else ("merges.txt", "vocab.bpe")
    )
    merges = _sibling(path, *preferred)
    if merges is None:
        raise ValueError(
            f"{path}: a vocabulary without merges; expected merges.txt or vocab.bpe beside it"
        )
    kind: Kind = "gpt2" if merges.name == "vocab.bpe" else "hf-files"
    return Detected(kind, (path, merges))


def _pair_for_merges(path: Path) -> Detected:
    preferred = (
        ("encoder.json", "vocab.json")
        if path.name == "vocab.bpe"
        else ("vocab.json", "encoder.json")
    )
    vocab = _sibling(path, *preferred)
    if vocab is None:
        raise ValueError(
            f"{path}: a merges file without its vocabulary (vocab.json or encoder.json)"
        )
    kind: Kind = "gpt2" if path.name == "vocab.bpe" else "hf-files"
    return Detected(kind, (vocab, path))


def _detect_folder(folder: Path) -> Detected:
    if (folder / "tokenizer.json").is_file():
        return detect(folder / "tokenizer.json")
    for vocab, merges, kind in (
        ("vocab.json", "merges.txt", "hf-files"),
        ("encoder.json", "vocab.bpe", "gpt2"),
    ):
        if (folder / vocab).is_file() and (folder / merges).is_file():
            return Detected(kind, (folder / vocab, folder / merges))  # type: ignore[arg-type]
    if (folder / "tekken.json").is_file():
        return detect(folder / "tekken.json")
    candidates = sorted(folder.glob("*.tiktoken")) + sorted(folder.glob("tokenizer.model"))
    if len(candidates) == 1:
        return detect(candidates[0])
    raise ValueError(
        f"{folder}: no vocabulary found (tokenizer.json, vocab.json + merges.txt, encoder.json "
        "+ vocab.bpe, or a single .tiktoken / tokenizer.model)"
    )


def detect(path: StrPath) -> Detected:
    """Recognise the vocabulary at ``path`` (a file or a folder)."""
    p = Path(path)
    if p.is_dir():
        return _detect_folder(p)
    data = p.read_bytes()
    if looks_like_sentencepiece_model(data):  # before stripping: its first byte is "\n"
        return Detected("sentencepiece-model", (p,), raw=data)
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head:
        raise ValueError(f"{p}: the file is empty")
    if head.startswith(b"{"):
        parsed, tables = read_tokenizer_json(p, data)
        if isinstance(parsed, dict) and isinstance(parsed.get("model"), dict):
            if is_sentencepiece_json(parsed):
                # A SentencePiece-style file's reader takes its vocabulary as JSON.
                full = parsed if tables is None else read_json(p, data)
                return Detected("sentencepiece-json", (p,), parsed=full)
            return Detected("tokenizer-json", (p,), parsed=parsed, tables=tables)
        if looks_like_tekken(parsed):
            return Detected("tekken", (p,), parsed=parsed)
        return _pair_for_vocab(p)
    # The first line is looked at in place: a hostile file's one 40 MB line must not be copied.
    end = head.find(b"\n")
    end = len(head) if end < 0 else end
    if _TIKTOKEN_LINE.match(head, 0, end):
        return Detected("tiktoken", (p,), raw=data)
    if head.startswith(b"#version") or head.count(b" ", 0, end) == 1:
        return _pair_for_merges(p)
    raise ValueError(
        f"{p}: unrecognised vocabulary format (expected tokenizer.json, encoder.json/vocab.json "
        "with its merges file, or tiktoken's '<base64> <rank>' lines)"
    )
