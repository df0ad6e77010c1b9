"""Mistral's tekken files (``tekken.json``: Mistral NeMo, Pixtral, Ministral, Mistral Small).

A tekken file is one JSON object:

- ``config``: ``pattern`` (the pre-tokenizer regex, tiktoken's dialect),
  ``default_vocab_size`` (all ids, special ones included), ``default_num_special_tokens`` and
  ``version`` (``"v3"``, ``"v7"``, ...); ``num_vocab_tokens`` is informative only;
- ``vocab``: the ordinary tokens in rank order, each ``{"rank", "token_bytes" (base64),
  "token_str"}``;
- ``special_tokens`` (optional before ``v7``): ``{"rank", "token_str", "is_control"}`` in id
  order;
- ``image``, ``audio``, ...: settings of other modalities, not read here.

Read as ``mistral_common``'s ``Tekkenizer`` reads it, and giving its ids: the special tokens take
ids ``0 .. default_num_special_tokens - 1`` (a file without ``special_tokens`` gets the twenty
tokens of ``Tekkenizer.DEPRECATED_SPECIAL_TOKENS``; ids no token names are the fillers
``<SPECIAL_n>``), and the vocabulary, cut to its first ``default_vocab_size -
default_num_special_tokens`` entries, follows them: ordinary token ``r`` has id
``r + default_num_special_tokens``. tiktoken's rule on ranks shifted by a constant merges in the
same order, so the file is a rank vocabulary like a ``.tiktoken`` file's (a
:class:`~bytepair.formats.values.TiktokenFile`).

Differences from ``Tekkenizer``, by bytepair's tiktoken policy for special tokens:

- ``encode`` raises ``ValueError`` on text that spells a special token (``"[INST]"``), unless
  ``allowed_special`` allows it (it then gives the token's id) or ``disallowed_special=()``;
  ``Tekkenizer.encode`` always reads such text as plain text, which is what ``encode_ordinary``
  and ``encode(text, disallowed_special=())`` do here.
- ``decode`` writes a special id as its text (``Tekkenizer.decode`` with
  ``special_token_policy=KEEP``); ``Tekkenizer`` drops them by default (``IGNORE``).
- no ``<s>`` is added: ``Tekkenizer.encode(text, bos=False, eos=False)`` is the equal call.

>>> import base64, json, tempfile, pathlib
>>> vocab = [{"rank": b, "token_bytes": base64.b64encode(bytes([b])).decode(), "token_str": None}
...          for b in range(256)]
>>> vocab.append({"rank": 256, "token_bytes": base64.b64encode(b"ab").decode(), "token_str": "ab"})
>>> config = {"pattern": r"\\S+|\\s+", "default_vocab_size": 260, "default_num_special_tokens": 3,
...           "version": "v7"}
>>> specials = [{"rank": 0, "token_str": "<unk>", "is_control": True},
...             {"rank": 1, "token_str": "<s>", "is_control": True}]
>>> path = pathlib.Path(tempfile.mkdtemp()) / "tekken.json"
>>> _ = path.write_text(json.dumps({"config": config, "vocab": vocab, "special_tokens": specials}))
>>> enc = load_tekken(path)
>>> enc.encode("ab a"), enc.encode("<s>ab", allowed_special="all")
([259, 35, 100], [1, 259])
>>> sorted(enc.special_tokens_set)
['<SPECIAL_2>', '<s>', '<unk>']
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

from bytepair.formats.builders import build
from bytepair.formats.common import MAX_ID, StrPath, encoding_name, read_json
from bytepair.formats.values import TiktokenFile
from bytepair.patterns import resolve_pattern

__all__ = ["DEPRECATED_SPECIAL_TOKENS", "load_tekken", "looks_like_tekken", "parse_tekken"]

# Tekkenizer.DEPRECATED_SPECIAL_TOKENS: the special tokens of files before v7, which list none.
DEPRECATED_SPECIAL_TOKENS = (
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)
_LAST_VERSION_WITHOUT_SPECIALS = 7
_FILLER = "<SPECIAL_{}>"
_VERSION = re.compile(r"v(\d+)")


def looks_like_tekken(parsed: object) -> bool:
    """Whether the JSON value ``parsed`` is meant as a tekken file: an object with a ``config``
    object or a ``vocab`` list (``encoder.json`` and ``vocab.json`` map tokens to integers)."""
    return isinstance(parsed, dict) and (
        isinstance(parsed.get("config"), dict) or isinstance(parsed.get("vocab"), list)
    )


def load_tekken(path: StrPath, *, parsed: Any = None, name: str | None = None) -> Any:
    """Read a ``tekken.json`` into an encoding with ``Tekkenizer``'s ids (see the module).

    ``parsed`` is the file's JSON if already read. Errors name the file and the JSON key or list
    index at fault.
    """
    return build(parse_tekken(path, parsed=parsed, name=name))


def parse_tekken(path: StrPath, *, parsed: Any = None, name: str | None = None) -> TiktokenFile:
    """A tekken file read and checked, as the rank vocabulary it is (see :func:`load_tekken`)."""
    spec = read_json(path) if parsed is None else parsed
    try:
        data, pattern, specials = _read(spec)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    return TiktokenFile(
        data,
        name=name or encoding_name(path),
        pat_str=pattern,
        special_tokens=specials,
        source=str(path),
    )


def _read(spec: Any) -> tuple[bytes, str, dict[str, int]]:
    if not isinstance(spec, dict):
        raise ValueError("not a tekken file: expected a JSON object")
    for key in ("config", "vocab"):
        if key not in spec:
            raise ValueError(f"not a tekken file: no {key!r} key")
    config = spec["config"]
    if not isinstance(config, dict):
        raise ValueError("config: expected an object")
    pattern = _field(config, "pattern", str)
    vocab_size = _field(config, "default_vocab_size", int)
    num_special = _field(config, "default_num_special_tokens", int)
    if not 0 <= num_special <= vocab_size < MAX_ID:
        raise ValueError(
            f"config: default_num_special_tokens {num_special} and default_vocab_size "
            f"{vocab_size} must satisfy 0 <= special <= vocab size < {MAX_ID}"
        )
    try:
        pattern = resolve_pattern(pattern)
    except ValueError as err:
        raise ValueError(f"config.pattern: {err}") from None
    specials = _special_tokens(spec, config, num_special)
    return _ranks_file(spec["vocab"], vocab_size - num_special, num_special), pattern, specials


def _field(obj: Mapping[str, Any], key: str, kind: type, where: str = "config") -> Any:
    if key not in obj:
        raise ValueError(f"{where}: no {key!r} key")
    value = obj[key]
    # bool is a subclass of int in Python; `true` is not a count.
    if type(value) is not kind:
        raise ValueError(f"{where}.{key}: expected {kind.__name__}, got {value!r}")
    return value


def _special_tokens(
    spec: Mapping[str, Any], config: Mapping[str, Any], count: int
) -> dict[str, int]:
    """The special tokens at their ids, fillers included (``Tekkenizer.__init__``'s rule)."""
    listed = spec.get("special_tokens")
    if listed is None:
        version = config.get("version")
        number = _VERSION.fullmatch(version) if isinstance(version, str) else None
        if number is None or int(number[1]) > _LAST_VERSION_WITHOUT_SPECIALS:
            raise ValueError(
                f"special_tokens: missing, which only files of version v7 or earlier may be "
                f"(config.version is {version!r})"
            )
        names = list(DEPRECATED_SPECIAL_TOKENS)
        where = "the default special tokens (the file lists none)"
    else:
        if not isinstance(listed, list):
            raise ValueError("special_tokens: expected a list")
        names = []
        for i, token in enumerate(listed):
            at = f"special_tokens[{i}]"
            if not isinstance(token, dict):
                raise ValueError(f"{at}: expected an object with rank and token_str")
            rank = _field(token, "rank", int, at)
            if rank != i:
                raise ValueError(
                    f"{at}.rank: {rank}, expected {i} (special tokens are in id order)"
                )
            names.append(_field(token, "token_str", str, at))
        where = "special_tokens"
    if len(names) > count:
        raise ValueError(
            f"{where}: {len(names)} tokens, more than config.default_num_special_tokens ({count})"
        )
    ids: dict[str, int] = {}
    for i, token_str in enumerate(names + [_FILLER.format(i) for i in range(len(names), count)]):
        other = ids.setdefault(token_str, i)
        if other != i:
            at = f"special_tokens[{i}]" if i < len(names) else f"filler id {i}"
            raise ValueError(f"{at}: {token_str!r} is also special token {other}")
    return ids


def _ranks_file(vocab: Any, size: int, offset: int) -> bytes:
    """The ``.tiktoken`` lines of the first ``size`` tokens of ``vocab``, ranks shifted by
    ``offset`` (the entries past ``size`` are cut, as ``Tekkenizer`` cuts them, unread)."""
    if not isinstance(vocab, list):
        raise ValueError("vocab: expected a list")
    if len(vocab) < size:
        raise ValueError(
            f"vocab: {len(vocab)} tokens, fewer than config.default_vocab_size - "
            f"config.default_num_special_tokens = {size}"
        )
    lines: list[bytes] = []
    index_of: dict[bytes, int] = {}
    for i in range(size):
        token = vocab[i]
        at = f"vocab[{i}]"
        if not isinstance(token, dict):
            raise ValueError(f"{at}: expected an object with rank and token_bytes")
        rank = _field(token, "rank", int, at)
        if rank != i:
            why = f"vocab[{rank}] has it too" if 0 <= rank < i else f"expected {i}"
            raise ValueError(f"{at}.rank: {rank}, but {why} (ranks are 0, 1, 2, ... in order)")
        text = _field(token, "token_bytes", str, at)
        try:
            raw = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as err:
            raise ValueError(f"{at}.token_bytes: {text[:40]!r} is not base64 ({err})") from None
        if i < 256 and raw != bytes([i]):
            raise ValueError(f"{at}.token_bytes: {raw!r}, expected the single byte {bytes([i])!r}")
        if not raw:
            raise ValueError(f"{at}.token_bytes: empty")
        other = index_of.setdefault(raw, i)
        if other != i:
            raise ValueError(f"{at}.token_bytes: {raw!r} is also vocab[{other}]")
        lines.append(b"%s %d\n" % (base64.b64encode(raw), i + offset))
    return b"".join(lines)
