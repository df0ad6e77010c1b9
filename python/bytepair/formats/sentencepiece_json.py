"""SentencePiece-style ``tokenizer.json`` files (Llama 2 and Mistral as Hugging Face ships them).

These files hold a sentencepiece BPE model converted for ``tokenizers``: a ``BPE`` model with
``byte_fallback`` over pieces spelt with ``▁``, and around it either

- a ``Metaspace`` pre-tokenizer (spaces become ``▁``; ``prepend_scheme`` ``"first"`` or
  ``"always"`` puts ``▁`` before a part that does not start with one; ``split``), or
- the normalizers ``Prepend("▁")`` and ``Replace(" ", "▁")`` (``▁`` before every part, always);

and the decoders ``Replace("▁", " ")``, ``ByteFallback``, ``Fuse`` and, when a ``▁`` is
prepended, ``Strip(" ", 1, 0)``. The ids are those of ``tokenizers``' ``encode(text,
add_special_tokens=False)`` with its special tokens allowed. Anything else raises ``ValueError``
naming the file and the JSON path: a file that reads gives the ids ``tokenizers`` gives.

>>> spec = {"model": {"type": "BPE", "byte_fallback": True, "vocab": {"<unk>": 0}, "merges": []},
...         "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first"},
...         "decoder": {"type": "ByteLevel"}}
>>> is_sentencepiece_json(spec)
True
>>> read_sentencepiece_json("x.json", data=spec)
Traceback (most recent call last):
...
ValueError: x.json: decoder: unsupported decoder 'ByteLevel': expected Replace('▁', ' '), ByteFallback, Fuse, Strip(' ', 1, 0)
"""  # noqa: E501

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any, Literal

from bytepair.formats.common import StrPath, check_vocab, encoding_name, read_json
from bytepair.formats.hf_json import _check_settings, _merge_pairs
from bytepair.formats.hf_pipeline import _field, _template, _type_of, added_tokens_of
from bytepair.formats.values import SentencePieceComponents

__all__ = ["is_sentencepiece_json", "read_sentencepiece_json"]

_NORMAL, _UNKNOWN, _CONTROL, _BYTE = 1, 2, 3, 6

_MODEL_KEYS = {
    "type",
    "vocab",
    "merges",
    "dropout",
    "unk_token",
    "continuing_subword_prefix",
    "end_of_word_suffix",
    "fuse_unk",
    "byte_fallback",
    "ignore_merges",
}

_PREPEND_SCHEMES: dict[str, Literal["always_unless_present", "first", "never"]] = {
    "always": "always_unless_present",
    "first": "first",
    "never": "never",
}


def _flat(spec: Any, key: str, where: str) -> list[tuple[str, Any]]:
    """A component, or the parts of a ``Sequence`` of them, each with its JSON path."""
    if spec is None:
        return []
    if _type_of(spec, where) == "Sequence":
        parts = _field(spec, key, list, where, None)
        return [(f"{where}.{key}[{i}]", p) for i, p in enumerate(parts)]
    return [(where, spec)]


def is_sentencepiece_json(spec: Any) -> bool:
    """Whether a parsed ``tokenizer.json`` is a SentencePiece-style BPE model (a ``BPE`` model
    with no ``ByteLevel`` pre-tokenizer and with ``byte_fallback``, a ``Metaspace``
    pre-tokenizer or a ``Prepend`` normalizer)."""
    if not isinstance(spec, dict) or not isinstance(spec.get("model"), dict):
        return False
    if spec["model"].get("type", "BPE") != "BPE":
        return False
    try:
        pre = _flat(spec.get("pre_tokenizer"), "pretokenizers", "pre_tokenizer")
        norm = _flat(spec.get("normalizer"), "normalizers", "normalizer")
    except ValueError:
        return False
    # A byte-level file may set byte_fallback too (it never falls back): ByteLevel decides.
    if any(isinstance(p, dict) and p.get("type") == "ByteLevel" for _, p in pre):
        return False
    if spec["model"].get("byte_fallback") is True:
        return True
    return any(isinstance(p, dict) and p.get("type") == "Metaspace" for _, p in pre) or any(
        isinstance(n, dict) and n.get("type") == "Prepend" for _, n in norm
    )


def _one_char(value: Any, where: str) -> str:
    if not isinstance(value, str) or len(value) != 1:
        raise ValueError(f"{where}: expected one character, got {value!r}")
    return value


def _string_pattern(spec: Any, where: str) -> str:
    pattern = spec.get("pattern")
    if not (isinstance(pattern, dict) and set(pattern) == {"String"}):
        raise ValueError(f"{where}.pattern: only a String pattern is supported, got {pattern!r}")
    return _field(pattern, "String", str, f"{where}.pattern", None)  # type: ignore[no-any-return]


def _normalizer(spec: Any) -> tuple[str | None, bool]:
    """The replacement character (None if spaces stay spaces) and whether ``▁`` is prepended."""
    replacement: str | None = None
    prepend: str | None = None
    for where, part in _flat(spec, "normalizers", "normalizer"):
        kind = _type_of(part, where)
        if kind == "Replace" and replacement is None:
            if _string_pattern(part, where) != " ":
                raise ValueError(f"{where}.pattern: only Replace(' ', '▁') is supported")
            replacement = _one_char(part.get("content"), f"{where}.content")
        elif kind == "Prepend" and prepend is None:
            prepend = _one_char(part.get("prepend"), f"{where}.prepend")
        else:
            raise ValueError(
                f"{where}: unsupported normalizer {kind!r} (a SentencePiece-style file has at "
                "most Prepend('▁') and Replace(' ', '▁'))"
            )
    if prepend is not None and prepend != replacement:
        raise ValueError(
            f"normalizer: Prepend({prepend!r}) needs Replace(' ', {prepend!r}) beside it"
        )
    return replacement, prepend is not None


def _metaspace(spec: Any) -> tuple[str, str, bool] | None:
    """``Metaspace``'s replacement, prepend rule and split, or None without one."""
    if spec is None:
        return None
    where = "pre_tokenizer"
    kind = _type_of(spec, where)
    if kind != "Metaspace":
        raise ValueError(
            f"{where}: unsupported pre-tokenizer {kind!r} (a SentencePiece-style file has a "
            "Metaspace pre-tokenizer or none)"
        )
    replacement = _one_char(spec.get("replacement"), f"{where}.replacement")
    scheme = _field(spec, "prepend_scheme", str, where, "always")
    if scheme not in _PREPEND_SCHEMES:
        raise ValueError(f"{where}.prepend_scheme: unknown scheme {scheme!r}")
    # tokenizers' rule for files from before prepend_scheme existed.
    if spec.get("add_prefix_space") is False and scheme != "never":
        raise ValueError(f"{where}: add_prefix_space false contradicts {scheme!r}")
    split = _field(spec, "split", bool, where, True)
    return replacement, _PREPEND_SCHEMES[scheme], split


def _check_decoder(spec: Any, replacement: str, stripped: bool) -> None:
    want = ["Replace", "ByteFallback", "Fuse"] + (["Strip"] if stripped else [])
    expected = f"Replace({replacement!r}, ' '), ByteFallback, Fuse" + (
        ", Strip(' ', 1, 0)" if stripped else " (no Strip: no prefix is added)"
    )
    parts = _flat(spec, "decoders", "decoder")
    kinds = [_type_of(p, w) for w, p in parts]
    if kinds != want:
        found = ", ".join(repr(k) for k in kinds) or "none"
        plural = "decoders" if len(kinds) > 1 else "decoder"
        raise ValueError(f"decoder: unsupported {plural} {found}: expected {expected}")
    for where, part in parts:
        kind = part["type"]
        if kind == "Replace" and (
            _string_pattern(part, where) != replacement or part.get("content") != " "
        ):
            raise ValueError(f"{where}: expected Replace({replacement!r}, ' ')")
        if kind == "Strip" and (
            part.get("content") != " " or part.get("start") != 1 or part.get("stop") != 0
        ):
            raise ValueError(f"{where}: expected Strip(' ', 1, 0)")


def _model(
    model: Mapping[str, Any],
) -> tuple[dict[str, int], list[tuple[str, str]], dict[str, Any]]:
    unknown = [k for k in model if k not in _MODEL_KEYS]
    if unknown:
        raise ValueError(f"model.{unknown[0]}: unsupported BPE option")
    if model.get("dropout") not in (None, 0, 0.0):
        raise ValueError(f"model.dropout: unsupported dropout {model['dropout']!r}")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key) not in (None, ""):
            raise ValueError(f"model.{key}: unsupported {model[key]!r}")
    vocab = check_vocab(model.get("vocab"), "model.vocab")
    ids = set(vocab.values())
    missing = next((i for i in range(len(vocab)) if i not in ids), None)
    if missing is not None:
        raise ValueError(f"model.vocab: ids must be 0 to {len(vocab) - 1}; {missing} is missing")
    unk = model.get("unk_token")
    if unk is not None and (not isinstance(unk, str) or unk not in vocab):
        raise ValueError(f"model.unk_token: {unk!r} is not in model.vocab")
    options = {
        "unk_token": unk,
        "byte_fallback": _field(model, "byte_fallback", bool, "model", False),
        "fuse_unk": _field(model, "fuse_unk", bool, "model", False),
        "ignore_merges": _field(model, "ignore_merges", bool, "model", False),
    }
    return vocab, _merge_pairs(model.get("merges", []), "model.merges"), options


def _specials(spec: Any, vocab: Mapping[str, int], has_normalizer: bool) -> dict[str, int]:
    """The special added tokens with their ids, appended after the vocabulary when new."""
    specials: dict[str, int] = {}
    next_id = len(vocab)
    for i, (token, _) in enumerate(added_tokens_of(spec, "added_tokens")):
        at = f"added_tokens[{i}]"
        if not token.special:
            raise ValueError(
                f"{at}: {token.content!r} is not special; tokenizers recognises such added "
                "tokens in all text, which bytepair does not support for this model"
            )
        if token.lstrip or token.rstrip or token.single_word:
            raise ValueError(f"{at}: lstrip, rstrip and single_word are not supported")
        if token.normalized and has_normalizer:
            raise ValueError(f"{at}: a normalized special token with a normalizer: unsupported")
        if token.content in specials:
            continue
        # tokenizers keeps a vocabulary token's id, and gives a new one the next free id.
        specials[token.content] = vocab.get(token.content, next_id)
        next_id += token.content not in vocab
    return specials


def read_sentencepiece_json(
    path: StrPath,
    *,
    data: Any = None,
    name: str | None = None,
    ignore_settings: Collection[str] = (),
) -> SentencePieceComponents:
    """Read a SentencePiece-style ``tokenizer.json`` (``data``: its parsed JSON, if read)."""
    source = str(path)
    spec = read_json(path) if data is None else data
    if not isinstance(spec, dict) or not isinstance(spec.get("model"), dict):
        raise ValueError(f"{source}: not a tokenizer.json (no 'model' object)")
    try:
        return _components(spec, source, name or encoding_name(path), ignore_settings)
    except ValueError as err:
        raise ValueError(f"{source}: {err}") from None


def _components(
    spec: dict[str, Any], source: str, name: str, ignore_settings: Collection[str]
) -> SentencePieceComponents:
    _check_settings(spec, source, ignore_settings)
    if spec.get("version", "1.0") != "1.0":
        raise ValueError(f"version: unsupported tokenizer.json version {spec['version']!r}")
    model = spec["model"]
    if model.get("type", "BPE") != "BPE":
        raise ValueError(f"model.type: unsupported model {model['type']!r}: expected BPE")
    vocab, merge_strings, options = _model(model)
    replacement, prepends = _normalizer(spec.get("normalizer"))
    metaspace = _metaspace(spec.get("pre_tokenizer"))
    prepend: Literal["always", "always_unless_present", "first", "never"] = (
        "always" if prepends else "never"
    )
    split = False
    if metaspace is not None:
        if replacement is not None:
            raise ValueError(
                "normalizer: a Replace or Prepend normalizer and a Metaspace "
                "pre-tokenizer together are not supported"
            )
        replacement, prepend, split = metaspace  # type: ignore[assignment]
    if replacement is None:
        raise ValueError(
            "pre_tokenizer: neither a Metaspace pre-tokenizer nor a Replace(' ', '▁') "
            "normalizer: not a SentencePiece-style file"
        )
    _check_decoder(spec.get("decoder"), replacement, prepend != "never")
    specials = _specials(spec.get("added_tokens"), vocab, spec.get("normalizer") is not None)
    pieces: list[tuple[str, float, int]] = []
    for text, _ in sorted(vocab.items(), key=lambda kv: kv[1]):
        kind = _NORMAL
        if text == options["unk_token"]:
            kind = _UNKNOWN
        elif text in specials:
            kind = _CONTROL
        elif re.fullmatch(r"<0x[0-9A-F]{2}>", text):
            kind = _BYTE
        pieces.append((text, 0.0, kind))
    for text, token_id in sorted(specials.items(), key=lambda kv: kv[1]):
        if token_id >= len(vocab):
            pieces.append((text, 0.0, _CONTROL))
    merges = []
    for i, (left, right) in enumerate(merge_strings):
        for side in (left, right):
            if side not in vocab:
                raise ValueError(f"model.merges[{i}]: {side!r} is not in model.vocab")
        if left + right not in vocab:
            raise ValueError(f"model.merges[{i}]: {left + right!r} is not in model.vocab")
        merges.append((vocab[left], vocab[right]))
    add_bos, add_eos, bos_id, eos_id = _post_processor(spec.get("post_processor"), specials)
    unk = options["unk_token"]
    return SentencePieceComponents(
        name=name,
        source=source,
        source_format="tokenizer-json",
        model_type="BPE",
        pieces=pieces,
        merges=merges,
        byte_fallback=options["byte_fallback"],
        unk_id=None if unk is None else vocab[unk],
        prepend=prepend,
        remove_extra_whitespaces=False,
        escape_whitespaces=True,
        treat_whitespace_as_suffix=False,
        replacement=replacement,
        split_on_replacement=split,
        precompiled_charsmap=None,
        fuse_unk=options["fuse_unk"],
        ignore_merges=options["ignore_merges"],
        decoder="hf",
        unk_surface=unk if unk is not None else " \u2047 ",
        special_tokens=specials,
        bos_id=bos_id,
        eos_id=eos_id,
        pad_id=None,
        add_bos=add_bos,
        add_eos=add_eos,
        spec={**spec, **{key: None for key in ignore_settings}},
    )


def _post_processor(
    spec: Any, specials: Mapping[str, int]
) -> tuple[bool, bool, int | None, int | None]:
    """``add_bos``, ``add_eos`` and the bos and eos ids. Without a post-processor the ids are
    the special tokens ``<s>`` and ``</s>`` where the file has them."""
    if spec is None:
        return False, False, specials.get("<s>"), specials.get("</s>")
    where = "post_processor"
    kind = _type_of(spec, where)
    if kind != "TemplateProcessing":
        raise ValueError(
            f"{where}: unsupported post-processor {kind!r}: expected a TemplateProcessing "
            "'[bos] $A [eos]' (each optional) or none"
        )
    prefix, suffix = _template(spec, where)
    if len(prefix) > 1 or len(suffix) > 1:
        raise ValueError(
            f"{where}.single: only '[bos] $A [eos]' (one token each side, each optional) is "
            f"supported, got {len(prefix)} token(s) before and {len(suffix)} after"
        )
    for token_id in prefix + suffix:
        if token_id not in specials.values():
            raise ValueError(f"{where}: id {token_id} is not a special added token")
    return (
        bool(prefix),
        bool(suffix),
        prefix[0] if prefix else specials.get("<s>"),
        suffix[0] if suffix else specials.get("</s>"),
    )
