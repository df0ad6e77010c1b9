"""The libraries the encoding benchmark measures: for each, how to build an encoder from the
local vocabulary files, offline (``../shared/ANCHORS.md`` says how each is built and why).

A builder takes an encoding name and returns an encode function; ``ADAPTERS`` lists them by the
name the tables show, ``COUNTERS`` the counting calls of the short-prompt table. A library that
is not installed raises ImportError in its builder, which the benchmark reports.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bytepair
from bytepair import registry

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("BYTEPAIR_SHARED", ROOT.parent / "shared"))
VOCAB = SHARED / "vocab"

# Ids (a list or an array) or, for the counting rows, their number.
Encode = Callable[[str], Any]


def vocab_path(name: str) -> Path:
    path, _ = registry.find_vocab_file(name, vocab_dir=VOCAB)
    return path


# ---- adapters: name -> builder(encoding name) -> encode function ----------------------------


def own_bytepair(name: str) -> bytepair.Encoding:
    """A bytepair encoding of its own (``get_encoding`` shares one per process). Each row needs
    its own: the per-thread cache of merged pieces is per encoding, so a row sharing one would
    find the words of a repetition already merged by the row timed before it on the same text.
    """
    spec = registry.ENCODINGS[name]
    return bytepair.Encoding.from_tiktoken_file(
        vocab_path(name), pat_str=spec.pat_str, special_tokens=spec.special_tokens, name=name
    )


def build_bytepair(name: str) -> Encode:
    return own_bytepair(name).encode_ordinary


def build_bytepair_numpy(name: str) -> Encode:
    # The like-for-like row for libraries that return numpy arrays (gigatoken): no Python list.
    return own_bytepair(name).encode_to_numpy


def build_bytepair_count(name: str) -> Encode:
    # `count` (default arguments) measured like the rest, on text it has not seen: the number of
    # ids without the list, to set against the `bytepair` row.
    return own_bytepair(name).count


def build_tiktoken(name: str) -> Encode:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    spec = registry.ENCODINGS[name]
    enc = tiktoken.Encoding(
        name,
        pat_str=spec.pat_str,
        mergeable_ranks=load_tiktoken_bpe(str(vocab_path(name))),
        special_tokens=spec.special_tokens,
    )
    return enc.encode_ordinary


def build_gigatoken(name: str) -> Encode:
    import gigatoken

    pre = {"cl100k_base": "gpt4", "o200k_base": "o200k"}[name]
    tok = gigatoken.Tokenizer.from_tiktoken(
        str(vocab_path(name)), pretokenizer=pre, special_tokens={}
    )
    return lambda text: tok.encode(text)


def build_toktok(name: str) -> Encode:
    import toktok

    return toktok._toktok.Tokenizer(name, "").encode_ordinary  # type: ignore[no-any-return]


def build_riptoken(name: str) -> Encode:
    import riptoken

    spec = registry.ENCODINGS[name]
    core = riptoken.CoreBPE(riptoken.load_tiktoken_bpe(str(vocab_path(name))), {}, spec.pat_str)
    return core.encode_ordinary  # type: ignore[no-any-return]


def build_splintr(name: str) -> Encode:
    import splintr

    pattern = {"cl100k_base": splintr.CL100K_BASE_PATTERN, "o200k_base": splintr.O200K_BASE_PATTERN}
    tok = splintr.Tokenizer(str(vocab_path(name)), pattern[name], {})
    return tok.encode_ordinary  # type: ignore[no-any-return]


def build_wordchipper(name: str) -> Encode:
    cache = Path(tempfile.mkdtemp(prefix="wordchipper-"))
    (cache / "openai" / name).mkdir(parents=True)
    (cache / "openai" / name / f"{name}.tiktoken").symlink_to(vocab_path(name))
    os.environ["WORDCHIPPER_CACHE_DIR"] = str(cache)
    import wordchipper

    tok = wordchipper.Tokenizer.from_pretrained(name)
    return tok.encode  # type: ignore[no-any-return]


def build_tokendagger(name: str) -> Encode:
    import tokendagger
    from tiktoken.load import load_tiktoken_bpe

    spec = registry.ENCODINGS[name]
    enc = tokendagger.Encoding(
        name,
        pat_str=spec.pat_str,
        mergeable_ranks=load_tiktoken_bpe(str(vocab_path(name))),
        special_tokens={},
    )
    return enc.encode_ordinary  # type: ignore[no-any-return]


def build_rs_bpe(name: str) -> Encode:
    from rs_bpe.bpe import openai

    tok = getattr(openai, name)()
    return tok.encode  # type: ignore[no-any-return]


# The Hugging Face spelling of cl100k's pattern (no possessive quantifiers), which the
# tokenizer.json readers below accept where they reject tiktoken's.
HF_CL100K_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+"
    r"[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def tokenizer_json(name: str) -> Path:
    """A tokenizer.json of the encoding, written by bytepair from the local file (no specials),
    with cl100k's pattern in the Hugging Face spelling."""
    folder = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
    enc = bytepair.Encoding.from_tiktoken_file(
        vocab_path(name), pat_str=registry.ENCODINGS[name].pat_str, special_tokens={}, name=name
    )
    (path,) = enc.save(folder, format="hf")
    if name == "cl100k_base":
        spec = json.loads(path.read_text(encoding="utf-8"))
        for stage in spec["pre_tokenizer"]["pretokenizers"]:
            if stage["type"] == "Split":
                stage["pattern"] = {"Regex": HF_CL100K_PATTERN}
        path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    return path


def build_fastokens(name: str) -> Encode:
    # Its worker pool serves single calls too: one thread, for single-thread figures.
    os.environ["FASTOKENS_BPE_THREADS"] = "1"
    import fastokens

    tok = fastokens.Tokenizer.from_tiktoken(str(vocab_path(name)), encoding=name, special_tokens={})
    return lambda text: tok.encode_ordinary(text).ids


def build_snaptokens(name: str) -> Encode:
    import snaptokens

    tok = snaptokens.Tokenizer.from_file(str(tokenizer_json(name)), tkz_cache=True)
    return lambda text: tok.encode(text).ids


def build_quicktok(name: str) -> Encode:
    return build_quicktok_tokenizer(name).encode_ordinary  # type: ignore[no-any-return]


def build_quicktok_tokenizer(name: str) -> Any:
    # No .tiktoken loader: its own data files, written from ours as its importer writes them
    # under a name of our own (it reads "cl100k_base" as its bundled copy), the scanner named
    # in them; the ids are checked here like every library's.
    import quicktok
    from quicktok import _import_core
    from tiktoken.load import load_tiktoken_bpe

    scanner = {"cl100k_base": "cl100k", "o200k_base": "o200k"}[name]
    data = tempfile.mkdtemp(prefix="quicktok-")
    ranks = load_tiktoken_bpe(str(vocab_path(name)))
    _import_core.write_files(data, f"local_{scanner}", ranks, {}, scanner, False)
    bundled = Path(quicktok.__file__).parent / "data"
    _import_core.ensure_tables(data, str(bundled), scanner, False)
    return quicktok.Tokenizer(f"local_{scanner}", data)


def build_tuetoken(name: str) -> Encode:
    import tuetoken

    return tuetoken.Tokenizer(str(tokenizer_json(name))).encode_ordinary


def build_bpe_openai(name: str) -> Encode:
    # Vocabularies built into the wheel only (the same data as the files here).
    import bpe_openai

    return bpe_openai.get_encoding(name).encode_ordinary  # type: ignore[no-any-return]


def build_kitoken(name: str) -> Encode:
    import kitoken

    tok = kitoken.Kitoken.from_tiktoken_file(str(vocab_path(name)))
    # It adds special tokens of its own (cl100k: <|im_start|>, ...) that cut plain text.
    definition = tok.definition()
    definition["specials"] = []
    tok.set_definition(definition)
    return tok.encode


ADAPTERS: dict[str, Callable[[str], Encode]] = {
    "bytepair": build_bytepair,
    "bytepair (numpy)": build_bytepair_numpy,
    "bytepair (count)": build_bytepair_count,
    "tiktoken": build_tiktoken,
    "gigatoken": build_gigatoken,
    "toktok-rs": build_toktok,
    "splintr-rs": build_splintr,
    "wordchipper": build_wordchipper,
    "riptoken": build_riptoken,
    "tokendagger": build_tokendagger,
    "rs-bpe": build_rs_bpe,
    "fastokens": build_fastokens,
    "snaptokens": build_snaptokens,
    "quicktok-v1": build_quicktok,
    "tuetoken": build_tuetoken,
    "bpe-openai": build_bpe_openai,
    "kitoken": build_kitoken,
}


def build_quicktok_count(name: str) -> Encode:
    return build_quicktok_tokenizer(name).count  # type: ignore[no-any-return]


def build_tuetoken_count(name: str) -> Encode:
    import tuetoken

    return tuetoken.Tokenizer(str(tokenizer_json(name))).count_tokens


def build_tiktoken_count(name: str) -> Encode:
    # tiktoken has no count: what one writes with it.
    encode = build_tiktoken(name)
    return lambda text: len(encode(text))


# Libraries with a call that counts without returning the ids, for the short-prompt count rows.
COUNTERS: dict[str, Callable[[str], Encode]] = {
    "tiktoken (len of encode_ordinary)": build_tiktoken_count,
    "bytepair (count)": build_bytepair_count,
    "quicktok-v1 (count)": build_quicktok_count,
    "tuetoken (count_tokens)": build_tuetoken_count,
}
