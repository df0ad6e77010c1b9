"""A model's tokenizer by name, through ``huggingface_hub`` and its cache (``bytepair[hub]``).

:func:`load_pretrained` fetches the tokenizer files of a Hub repository (``org/model``) with
``huggingface_hub.snapshot_download``: the hub library's own cache, revision handling and offline
mode (``HF_HUB_OFFLINE=1`` or ``local_files_only=True`` read the cache only); bytepair keeps no
cache of its own. The vocabulary is read by :func:`bytepair.formats.load` from the snapshot
folder, whatever its format; ``tokenizer_config.json`` and ``special_tokens_map.json`` become a
:class:`TokenizerConfig` (special tokens, ``add_bos_token``/``add_eos_token``,
``model_max_length``, the chat template).

``Encoding.from_pretrained`` is the public entry point. This module sits above
:mod:`bytepair.formats` and below the encodings, which call it (it never imports them).

>>> cfg = parse_tokenizer_config("org/m", {"eos_token": {"content": "</s>"},
...                                         "model_max_length": 2048}, {})
>>> cfg.eos_token, cfg.model_max_length, cfg.chat_template is None
('</s>', 2048, True)
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from bytepair import formats
from bytepair._optional import require
from bytepair.chat.jinja import SPECIAL_TOKEN_NAMES

__all__ = [
    "CONFIG_FILES",
    "TOKENIZER_FILES",
    "HubError",
    "TokenizerConfig",
    "load_pretrained",
    "parse_tokenizer_config",
    "snapshot_folder",
    "transformers_tokenizer",
]

#: The vocabulary files looked for, in the order :func:`bytepair.formats.load` prefers them.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "tekken.json", "vocab.json", "merges.txt")
#: The settings read beside the vocabulary.
CONFIG_FILES = ("tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja")

# Vocabulary files with their own special tokens, beside which the config's only name them.
_HOLDS_ITS_OWN_SPECIALS = ("sentencepiece-model", "tekken")

# transformers writes "no limit" as a huge integer (int(1e30) and the like).
_NO_LIMIT = 10**18


class HubError(OSError):
    """A repository or revision that cannot be had (not cached offline, not found, gated)."""


@dataclass(frozen=True)
class TokenizerConfig:
    """What a Hub repository says about its tokenizer beside the vocabulary.

    Tokens are given as their text. ``add_bos_token``/``add_eos_token`` are None when the config
    does not set them (the vocabulary's post-processor decides). ``model_max_length`` is None for
    "no limit". ``chat_template`` is the default template (Jinja source) and ``chat_templates``
    every named one (``"default"``, ``"tool_use"``, ...). ``added_tokens`` maps each id of
    ``added_tokens_decoder`` to ``(text, special)``. ``legacy`` is the config's flag of Llama's
    SentencePiece tokenizer (False: no dummy-prefix space after the first one, as
    transformers' ``LlamaConverter`` makes a ``tokenizer.model`` into a ``tokenizer.json``).
    """

    repo_id: str
    revision: str | None = None
    bos_token: str | None = None
    eos_token: str | None = None
    unk_token: str | None = None
    pad_token: str | None = None
    add_bos_token: bool | None = None
    add_eos_token: bool | None = None
    model_max_length: int | None = None
    legacy: bool | None = None
    chat_template: str | None = None
    chat_templates: Mapping[str, str] = field(default_factory=dict)
    added_tokens: Mapping[int, tuple[str, bool]] = field(default_factory=dict)
    special_tokens: Mapping[str, Any] = field(default_factory=dict)

    def template_variables(self) -> dict[str, Any]:
        """The special tokens as transformers passes them to a chat template
        (``bos_token``, ``eos_token``, ...; ``additional_special_tokens`` when given)."""
        return dict(self.special_tokens)

    # Pickled with plain dicts: a MappingProxyType cannot be pickled.
    def __getstate__(self) -> dict[str, Any]:
        return {k: dict(v) if isinstance(v, MappingProxyType) else v for k, v in vars(self).items()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            frozen = MappingProxyType(v) if isinstance(v, dict) else v
            object.__setattr__(self, k, frozen)


def _token_text(value: object, where: str) -> str | None:
    """A token as the config writes it: a string, or an AddedToken object with ``content``."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return str(value["content"])
    raise ValueError(f"{where}: expected a token (a string or {{'content': ...}}), got {value!r}")


def _flag(value: object, where: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise ValueError(f"{where}: expected true or false, got {value!r}")


def _templates(value: object, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if isinstance(value, str):
        return {"default": value}
    # A list of {"name": ..., "template": ...} (several templates, e.g. "tool_use").
    if isinstance(value, list):
        out = {}
        for i, item in enumerate(value):
            if not (
                isinstance(item, Mapping)
                and isinstance(item.get("name"), str)
                and isinstance(item.get("template"), str)
            ):
                raise ValueError(f"{where}[{i}]: expected {{'name': str, 'template': str}}")
            out[item["name"]] = item["template"]
        return out
    raise ValueError(f"{where}: expected a string or a list of named templates")


def parse_tokenizer_config(
    repo_id: str,
    config: Mapping[str, Any],
    special_tokens_map: Mapping[str, Any],
    *,
    revision: str | None = None,
    jinja_template: str | None = None,
) -> TokenizerConfig:
    """A :class:`TokenizerConfig` from the parsed ``tokenizer_config.json`` and
    ``special_tokens_map.json`` (whose tokens win, as in transformers) and the text of
    ``chat_template.jinja`` (which wins over the config's ``chat_template``)."""
    where = f"{repo_id}: tokenizer_config.json"
    if not isinstance(config, Mapping) or not isinstance(special_tokens_map, Mapping):
        raise ValueError(f"{repo_id}: tokenizer_config.json must hold a JSON object")
    specials: dict[str, Any] = {}
    for name in SPECIAL_TOKEN_NAMES:
        for source, label in ((config, where), (special_tokens_map, "special_tokens_map.json")):
            text = _token_text(source.get(name), f"{label}: {name}")
            if text is not None:
                specials[name] = text
    extra = special_tokens_map.get(
        "additional_special_tokens", config.get("additional_special_tokens")
    )
    if isinstance(extra, list):
        specials["additional_special_tokens"] = [
            t for i, v in enumerate(extra) if (t := _token_text(v, f"{where}[{i}]")) is not None
        ]
    limit = config.get("model_max_length")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int | float)):
        raise ValueError(f"{where}: model_max_length must be a number, got {limit!r}")
    added: dict[int, tuple[str, bool]] = {}
    decoder = config.get("added_tokens_decoder") or {}
    if not isinstance(decoder, Mapping):
        raise ValueError(f"{where}: added_tokens_decoder must be an object of id -> token")
    for key, token in decoder.items():
        text = _token_text(token, f"{where}: added_tokens_decoder[{key}]")
        if not (isinstance(key, str) and key.isdigit()) or text is None:
            raise ValueError(f"{where}: added_tokens_decoder[{key!r}] is not an id and a token")
        special = isinstance(token, Mapping) and token.get("special") is True
        added[int(key)] = (text, special)
    templates = _templates(config.get("chat_template"), f"{where}: chat_template")
    if jinja_template is not None:
        templates["default"] = jinja_template
    return TokenizerConfig(
        repo_id=repo_id,
        revision=revision,
        bos_token=specials.get("bos_token"),
        eos_token=specials.get("eos_token"),
        unk_token=specials.get("unk_token"),
        pad_token=specials.get("pad_token"),
        add_bos_token=_flag(config.get("add_bos_token"), f"{where}: add_bos_token"),
        add_eos_token=_flag(config.get("add_eos_token"), f"{where}: add_eos_token"),
        model_max_length=None if limit is None or limit >= _NO_LIMIT else int(limit),
        legacy=_flag(config.get("legacy"), f"{where}: legacy"),
        chat_template=templates.get("default"),
        chat_templates=MappingProxyType(templates),
        added_tokens=MappingProxyType(added),
        special_tokens=MappingProxyType(specials),
    )


def _not_available(repo_id: str, revision: str | None, error: Exception, offline: bool) -> str:
    at = f" at revision {revision!r}" if revision else ""
    kind = type(error).__name__
    if kind == "LocalEntryNotFoundError" or offline:
        return (
            f"{repo_id}{at} is not in the Hugging Face cache and downloads are off "
            "(HF_HUB_OFFLINE=1 or local_files_only=True): download it once online, e.g. "
            f"`hf download {repo_id} tokenizer.json tokenizer_config.json`, or pass cache_dir="
        )
    if kind == "GatedRepoError":
        return f"{repo_id} is gated: accept its terms on huggingface.co and pass token= (or log in)"
    if kind == "RepositoryNotFoundError":
        return f"{repo_id}: no such repository on the Hub (or it is private: pass token=)"
    if kind == "RevisionNotFoundError":
        return f"{repo_id}: no revision {revision!r} (give a branch, tag or commit hash)"
    first = str(error).strip().splitlines()[0] if str(error).strip() else kind
    return f"{repo_id}{at}: cannot fetch the tokenizer files ({first})"


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def snapshot_folder(
    repo_id: str,
    revision: str | None = None,
    *,
    local_files_only: bool = False,
    cache_dir: str | os.PathLike[str] | None = None,
    token: str | bool | None = None,
) -> Path:
    """The snapshot folder of ``repo_id`` at ``revision`` holding its tokenizer files, fetched
    into (or found in) the Hugging Face cache by ``huggingface_hub.snapshot_download``."""
    if not isinstance(repo_id, str) or not repo_id.strip():
        raise ValueError(f"expected a Hub repository id such as 'org/model', got {repo_id!r}")
    hub = require("huggingface_hub", "from_pretrained()", "hub")
    try:
        folder = hub.snapshot_download(
            repo_id,
            revision=revision,
            allow_patterns=[*TOKENIZER_FILES, *CONFIG_FILES],
            cache_dir=None if cache_dir is None else os.fspath(cache_dir),
            local_files_only=local_files_only,
            token=token,
        )
    except (OSError, ValueError) as e:
        offline = local_files_only or _offline()
        raise HubError(_not_available(repo_id, revision, e, offline)) from None
    return Path(folder)


def _read_json(path: Path, repo_id: str) -> Any:
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"{repo_id}: {path.name} is not valid JSON ({e})") from None


def _vocabulary_id(enc: Any, text: str) -> int | None:
    """The id the vocabulary itself gives ``text`` (a SentencePiece piece such as ``<unk>``,
    or a special token), or None."""
    if hasattr(enc, "piece_to_id"):
        found: int | None = enc.piece_to_id(text)
        return found
    try:
        return int(enc.encode_single_token(text))
    except KeyError:
        return None


def load_pretrained(
    repo_id: str,
    revision: str | None = None,
    *,
    local_files_only: bool = False,
    cache_dir: str | os.PathLike[str] | None = None,
    token: str | bool | None = None,
) -> tuple[Any, TokenizerConfig]:
    """The encoding of ``repo_id`` (built by :func:`bytepair.formats.load` from the snapshot
    folder) and its :class:`TokenizerConfig`.

    A ``tokenizer.json`` holds its own special tokens; its ``padding`` and ``truncation`` are
    left out, as transformers leaves them out of ``encode``. For the other formats the special
    entries of ``added_tokens_decoder`` (Qwen2's ``<|im_start|>`` beside ``vocab.json`` +
    ``merges.txt``) are given to the loader as special tokens; a SentencePiece ``.model`` or a
    ``tekken.json`` has its own, which those entries must match.
    """
    folder = snapshot_folder(
        repo_id, revision, local_files_only=local_files_only, cache_dir=cache_dir, token=token
    )
    jinja = folder / "chat_template.jinja"
    config = parse_tokenizer_config(
        repo_id,
        _read_json(folder / "tokenizer_config.json", repo_id),
        _read_json(folder / "special_tokens_map.json", repo_id),
        revision=folder.name,
        jinja_template=jinja.read_text(encoding="utf-8") if jinja.is_file() else None,
    )
    present = [name for name in TOKENIZER_FILES if (folder / name).is_file()]
    if not present:
        raise ValueError(
            f"{repo_id}: the repository has no tokenizer file ({', '.join(TOKENIZER_FILES)})"
        )
    specials = {text: i for i, (text, special) in config.added_tokens.items() if special}
    options: dict[str, Any] = {}
    try:
        # A tokenizer.json is what formats.load reads first (and is not parsed twice here).
        kind = "tokenizer-json" if present[0] == "tokenizer.json" else formats.detect(folder).kind
        if kind in ("tokenizer-json", "sentencepiece-json"):
            # transformers turns the file's padding and truncation off and keeps them as
            # defaults of its own calls; the ids of encode are those of the tokenizer without.
            options["ignore_settings"] = ("padding", "truncation")
        elif specials and kind not in _HOLDS_ITS_OWN_SPECIALS:
            options["special_tokens"] = specials
        enc = formats.load(folder, name=repo_id, **options)
    except ValueError as e:
        raise ValueError(f"{repo_id}: {e}") from None
    if kind in _HOLDS_ITS_OWN_SPECIALS:
        # Llama 2's config lists the .model's own control pieces: they must be the same ids.
        for text, i in specials.items():
            if _vocabulary_id(enc, text) != i:
                raise ValueError(
                    f"{repo_id}: tokenizer_config.json has the special token {text!r} = {i}, "
                    f"which its {present[0]} does not have with that id"
                )
    return enc, config


def transformers_tokenizer(tokenizer: Any, config: TokenizerConfig | None, **kwargs: Any) -> Any:
    """A transformers ``PreTrainedTokenizerFast`` around the ``tokenizers.Tokenizer``
    ``tokenizer``, with the special tokens, ``model_max_length`` and chat templates of
    ``config``; ``kwargs`` win (``Encoding.to_transformers``)."""
    transformers = require("transformers", "to_transformers()")
    options: dict[str, Any] = {}
    if config is not None:
        options.update({k: v for k, v in config.special_tokens.items() if v not in (None, [])})
        if config.model_max_length is not None:
            options["model_max_length"] = config.model_max_length
        templates = dict(config.chat_templates)
        if templates:
            only_default = list(templates) == ["default"]
            options["chat_template"] = templates["default"] if only_default else templates
    options.update(kwargs)
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer, **options)
