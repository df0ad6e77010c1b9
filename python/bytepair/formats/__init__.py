"""Real vocabulary files in and out, with the ids of the libraries they come from.

=================================  ==========================  =================================
format                             read as                     ids equal to
=================================  ==========================  =================================
tiktoken (``.tiktoken``,           tiktoken's rank rule        ``tiktoken``
Llama 3's ``tokenizer.model``)
GPT-2 ``encoder.json`` +           tiktoken's rank rule        ``tiktoken`` (``gpt2``, and
``vocab.bpe``                      (ids are ranks)             Llama 3 for ollama's files)
HF ``vocab.json`` + ``merges.txt`` pair merges                 ``tokenizers`` ``BPE.from_file``
HF ``tokenizer.json``              pair merges + pipeline      ``tokenizers.Tokenizer``
Mistral ``tekken.json``            tiktoken's rank rule        ``mistral_common``'s
                                   (ranks after the specials)  ``Tekkenizer``
SentencePiece ``.model``           piece scores                ``sentencepiece``
SentencePiece-style                pair merges + Metaspace     ``tokenizers.Tokenizer``
``tokenizer.json``
=================================  ==========================  =================================

:func:`load` recognises the format by content (:mod:`bytepair.formats.detect`); :func:`save`
writes ``tiktoken``, ``hf`` (``tokenizer.json``) or ``gpt2`` (``encoder.json`` + ``vocab.bpe``);
:func:`convert` does both, for the ``bytepair convert`` command.

The formats parse files into plain values and write values back
(:mod:`bytepair.formats.values`); they know no tokenizer model. The models build encodings from
the parsed values (:mod:`bytepair.formats.builders`).

Special tokens follow tiktoken's rules whatever the format: text that spells one raises
``ValueError`` unless ``allowed_special`` allows it (or ``disallowed_special=()`` makes it plain
text). For Hugging Face files the special tokens are the added tokens marked ``special``;
``allowed_special="all"`` recognises them in text as ``tokenizers`` does, and gives its ids. Added
tokens marked ``special: false`` are vocabulary and always recognised, and the post-processor's
tokens (``<s>`` ... ``</s>``) are added as ids with ``add_special_tokens=True``, never read from
text. (``tokenizers`` recognises special added tokens in any text; bytepair does not by default,
so that text that looks like a control token never becomes one unless the caller says so.)

>>> import tempfile, pathlib
>>> from bytepair import Encoding
>>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
>>> from bytepair.patterns import GPT2
>>> enc = Encoding("toy", pat_str=GPT2, mergeable_ranks=ranks, special_tokens={"<e>": 257})
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = convert(*save(enc, folder / "toy.tiktoken", format="tiktoken"), folder / "hf",
...             to="hf", pat_str="gpt2", special_tokens={"<e>": 257})
>>> load(folder / "hf").encode("ab<e>", allowed_special="all")
[256, 257]
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from bytepair._io import write_atomic
from bytepair.formats.builders import build
from bytepair.formats.common import StrPath
from bytepair.formats.detect import Detected, detect
from bytepair.formats.gpt2 import load_gpt2_files, write_gpt2_files
from bytepair.formats.hf_files import load_hf_files
from bytepair.formats.hf_json import load_tokenizer_json, write_tokenizer_json
from bytepair.formats.sentencepiece_json import read_sentencepiece_json
from bytepair.formats.sentencepiece_model import read_sentencepiece_model
from bytepair.formats.sentencepiece_write import sentencepiece_model_bytes
from bytepair.formats.targets import missing_folders, save_targets
from bytepair.formats.tekken import load_tekken
from bytepair.formats.tiktoken_file import load_tiktoken, tiktoken_bytes
from bytepair.formats.values import HasVocabulary, SentencePieceComponents

__all__ = ["Detected", "convert", "detect", "load", "save"]

SaveFormat = Literal["tiktoken", "hf", "gpt2", "sentencepiece"]

# The formats that hold their own pre-tokenizer and special tokens (what an error names).
_HOLDS_ITS_OWN = {
    "tokenizer-json": "a tokenizer.json has its own pre-tokenizer",
    "tekken": "a tekken.json has its own pattern",
    "sentencepiece-model": "a SentencePiece model has its own normalizer",
    "sentencepiece-json": "a SentencePiece model has its own normalizer",
}


def load(
    path: StrPath,
    *,
    pat_str: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
    name: str | None = None,
    **options: Any,
) -> Any:
    """Read the vocabulary at ``path`` (a file or a folder), whatever its format.

    ``pat_str`` and ``special_tokens`` apply to the formats that do not hold them (tiktoken,
    GPT-2 and HF vocabulary files); a ``tokenizer.json``, ``tekken.json`` or SentencePiece
    ``.model`` has its own, and passing them is an error. ``options`` go to
    :func:`bytepair.formats.hf_files.load_hf_files` (``normalizer``, ``pre_tokenizer``,
    ``ignore_merges``); for a ``tokenizer.json``, ``ignore_settings`` (see
    :mod:`bytepair.formats.hf_json`). Returns the encoding (a ``bytepair.Encoding``).
    """
    found = detect(path)
    if found.kind in ("tokenizer-json", "sentencepiece-json"):
        ignore_settings = options.pop("ignore_settings", ())
    elif "ignore_settings" in options:
        raise TypeError(f"{path}: ignore_settings applies to a tokenizer.json, not to this file")
    if options and found.kind != "hf-files":
        raise TypeError(f"{path}: options {sorted(options)} apply to vocab.json + merges.txt only")
    holds = _HOLDS_ITS_OWN.get(found.kind)
    if holds is not None and (pat_str is not None or special_tokens is not None):
        raise ValueError(
            f"{path}: {holds} and special tokens; do not pass pat_str or special_tokens"
        )
    if found.kind == "sentencepiece-model":
        return build(read_sentencepiece_model(found.paths[0], data=found.raw, name=name))
    if found.kind == "sentencepiece-json":
        return build(
            read_sentencepiece_json(
                found.paths[0], data=found.parsed, name=name, ignore_settings=ignore_settings
            )
        )
    if found.kind == "tokenizer-json":
        return load_tokenizer_json(
            found.paths[0],
            data=found.parsed,
            tables=found.tables,
            name=name,
            ignore_settings=ignore_settings,
        )
    if found.kind == "tekken":
        return load_tekken(found.paths[0], parsed=found.parsed, name=name)
    if found.kind == "tiktoken":
        return load_tiktoken(
            found.paths[0],
            data=found.raw,
            pat_str=pat_str,
            special_tokens=special_tokens,
            name=name,
        )
    vocab, merges = found.paths
    if found.kind == "gpt2":
        return load_gpt2_files(
            vocab, merges, pat_str=pat_str, special_tokens=special_tokens, name=name
        )
    return load_hf_files(
        vocab, merges, pat_str=pat_str, special_tokens=special_tokens, name=name, **options
    )


def save(enc: HasVocabulary, path: StrPath, *, format: SaveFormat) -> list[Path]:
    """Write ``enc`` to ``path`` in ``format``; returns the files written (atomically).

    - ``"tiktoken"``: ranks only (``path`` may be a folder: ``<name>.tiktoken`` in it); load it
      back with the same ``pat_str`` and ``special_tokens``;
    - ``"hf"``: ``tokenizer.json`` (``path`` may be a folder), readable by ``tokenizers``;
    - ``"gpt2"``: ``encoder.json`` + ``vocab.bpe`` in the folder ``path``;
    - ``"sentencepiece"``: a SentencePiece ``.model`` (``path`` may be a folder:
      ``tokenizer.model`` in it), for an encoding read from one.

    A SentencePiece model saves as ``"sentencepiece"`` and ``"hf"`` only
    (:mod:`bytepair.formats.sentencepiece_write` says what each keeps).

    >>> import tempfile, pathlib
    >>> from bytepair import Encoding
    >>> from bytepair.patterns import GPT2
    >>> enc = Encoding("b", pat_str=GPT2, mergeable_ranks={bytes([b]): b for b in range(256)},
    ...                special_tokens={})
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> [p.name for p in save(enc, folder, format="gpt2") + save(enc, folder, format="tiktoken")]
    ['encoder.json', 'vocab.bpe', 'b.tiktoken']
    """
    # A trailing separator or an existing folder means a folder (formats.targets).
    targets = save_targets(enc.name, path, format)
    if format == "hf":
        return write_tokenizer_json(enc, targets[0])
    if format == "gpt2":
        return write_gpt2_files(enc, targets[0])  # encoder.json's path; vocab.bpe goes beside
    if format == "sentencepiece":
        vocabulary = enc.vocabulary()
        if not isinstance(vocabulary, SentencePieceComponents):
            raise ValueError(
                f"{enc.name} cannot be written as a SentencePiece .model: it is not a "
                "SentencePiece model"
            )
        write_atomic(targets[0], sentencepiece_model_bytes(vocabulary))
        return targets
    write_atomic(targets[0], tiktoken_bytes(enc))
    return targets


def convert(
    in_path: StrPath,
    out_path: StrPath,
    *,
    to: SaveFormat,
    pat_str: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
    **options: Any,
) -> list[Path]:
    """Read ``in_path`` (any format, see :func:`load`) and write it to ``out_path`` as ``to``.

    Returns the files written. ``hf`` output needs the pattern, which tiktoken files do not hold:
    pass ``pat_str`` for a tiktoken file that is not one of the known encodings.
    """
    enc = load(in_path, pat_str=pat_str, special_tokens=special_tokens, **options)
    out = os.fspath(out_path)
    if to in ("hf", "gpt2", "sentencepiece") and not Path(out).suffix:
        out = os.path.join(out, "")  # a name without a suffix is the folder to write into
    created = missing_folders(save_targets(enc.name, out, to))
    try:
        return save(enc, out, format=to)
    except BaseException:
        for folder in created:  # a failed conversion leaves nothing behind
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
