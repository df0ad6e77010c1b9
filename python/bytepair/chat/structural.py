"""Chat prompts built structurally: control tokens as ids, every message's content as text.

Works on any encoding with tiktoken's interface (:class:`ChatEncoder`); ``Encoding.encode_chat``
calls :func:`encode_chat`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from bytepair._whitespace import is_rust_whitespace
from bytepair.chat.jinja import JinjaTemplate, is_jinja, template_parts
from bytepair.chat.templates import (
    IM_END,
    IM_START,
    ChatTemplate,
    Part,
    Special,
    _short,
    resolve_template,
)


class ChatEncoder(Protocol):
    """What building a chat needs from an encoding (``bytepair.Encoding`` has it all)."""

    @property
    def name(self) -> str: ...

    @property
    def n_vocab(self) -> int: ...

    @property
    def special_tokens_set(self) -> set[str]: ...

    def encode_ordinary(self, text: str) -> list[int]: ...

    def encode_single_token(self, text_or_bytes: str | bytes) -> int: ...


# Special-token ids that models were trained with, for encodings whose published vocabulary lacks
# a template's tokens (tiktoken's README extends cl100k_base with these for ChatML).
_KNOWN_EXTRA_IDS: Mapping[str, Mapping[str, int]] = {
    "cl100k_base": {IM_START: 100264, IM_END: 100265},
}


def _missing_specials_message(enc: ChatEncoder, template: ChatTemplate, missing: list[str]) -> str:
    known = _KNOWN_EXTRA_IDS.get(enc.name, {})
    if all(t in known for t in missing):
        ids = {t: known[t] for t in missing}
        where = "the ids its models were trained with"
    else:
        ids = {t: enc.n_vocab + i for i, t in enumerate(missing)}
        where = "placeholder ids: use the ids your model was trained with"
    return (
        f"template {template.name!r} needs the special token(s) {', '.join(missing)}, which "
        f"encoding {enc.name!r} does not have. Register them on a copy of the encoding, e.g. "
        f"enc.with_special_tokens({ids!r}) ({where}), or use a template made of this "
        "encoding's own special tokens."
    )


def _model_template(enc: ChatEncoder, tools: object) -> JinjaTemplate:
    """The chat template of the Hub repository ``enc`` came from (``template="model"``)."""
    config = getattr(enc, "tokenizer_config", None)
    templates = getattr(config, "chat_templates", None) or {}
    # As transformers picks: the "tool_use" template when tools are given and there is one.
    name = "tool_use" if tools is not None and "tool_use" in templates else "default"
    if name not in templates:
        raise ValueError(
            f"encoding {enc.name!r} has no chat template of its model (template='model' needs "
            "an encoding from Encoding.from_pretrained whose tokenizer_config.json has one)"
        )
    return JinjaTemplate(templates[name], name=f"{enc.name}:{name}")


def _jinja_template(enc: ChatEncoder, template: object, tools: object) -> JinjaTemplate | None:
    if isinstance(template, JinjaTemplate):
        return template
    if template == "model":
        return _model_template(enc, tools)
    if isinstance(template, str) and is_jinja(template):
        return JinjaTemplate(template)
    return None


def _strip_beside_tokens(enc: ChatEncoder, parts: list[Part]) -> list[Part]:
    """``parts`` with the whitespace that an ``lstrip``/``rstrip`` added token takes in
    tokenizers removed beside it (it belongs to the token, whoever wrote it)."""
    strips = getattr(enc, "_special_strips", None)
    flags: dict[str, tuple[bool, bool]] = strips() if strips is not None else {}
    if not flags:
        return parts
    out = list(parts)
    for i, part in enumerate(out):
        if not isinstance(part, Special) or part.token not in flags:
            continue
        left, right = flags[part.token]
        j = i - 1
        while left and j >= 0 and isinstance(out[j], str):
            text = str(out[j])
            k = len(text)
            while k > 0 and is_rust_whitespace(text[k - 1]):
                k -= 1
            out[j] = text[:k]
            if k > 0:
                break
            j -= 1
        j = i + 1
        while right and j < len(out) and isinstance(out[j], str):
            text = str(out[j])
            k = 0
            while k < len(text) and is_rust_whitespace(text[k]):
                k += 1
            out[j] = text[k:]
            if k < len(text):
                break
            j += 1
    return out


def _encode_parts(enc: ChatEncoder, parts: Iterable[Part]) -> list[int]:
    ids: list[int] = []
    text: list[str] = []
    parts = _strip_beside_tokens(enc, list(parts))
    # Adjacent text (literal and content) is encoded as one string, so the ids equal those of
    # the rendered prompt encoded with the control tokens allowed (when content is clean).
    for part in parts:
        if isinstance(part, Special):
            if text:
                ids += enc.encode_ordinary("".join(text))
                text.clear()
            ids.append(enc.encode_single_token(part.token))
        else:
            text.append(part)
    if text:
        ids += enc.encode_ordinary("".join(text))
    return ids


def template_variables(enc: ChatEncoder, variables: Mapping[str, Any] | None) -> dict[str, Any]:
    """The variables a Jinja template gets: the special tokens of the encoding's Hub config
    (``bos_token``, ...), then ``variables``."""
    config = getattr(enc, "tokenizer_config", None)
    own = config.template_variables() if config is not None else {}
    return {**own, **(variables or {})}


def encode_chat(
    enc: ChatEncoder,
    messages: object,
    template: str | ChatTemplate | JinjaTemplate = "chatml",
    *,
    add_generation_prompt: bool = False,
    tools: Iterable[Mapping[str, Any]] | None = None,
    documents: Iterable[Mapping[str, Any]] | None = None,
    variables: Mapping[str, Any] | None = None,
) -> list[int]:
    """The ids of a chat, built structurally (see :meth:`Encoding.encode_chat`)."""
    if not isinstance(add_generation_prompt, bool):
        raise TypeError("add_generation_prompt must be True or False")
    jinja = _jinja_template(enc, template, tools)
    if jinja is not None:
        parts = template_parts(
            jinja,
            enc.special_tokens_set,
            messages,
            tools=tools,
            documents=documents,
            add_generation_prompt=add_generation_prompt,
            variables=template_variables(enc, variables),
        )
        return _encode_parts(enc, parts)
    if tools is not None or documents is not None or variables is not None:
        raise TypeError("tools, documents and variables apply to Jinja templates only")
    assert not isinstance(template, JinjaTemplate)
    tmpl = resolve_template(template)
    specials = enc.special_tokens_set
    missing = sorted(tmpl.special_tokens() - specials)
    if missing:
        raise ValueError(_missing_specials_message(enc, tmpl, missing))
    # A template whose literal text spells a control token is a bug in the template: it would
    # be encoded as text, silently unlike what its author meant.
    for literal in tmpl.literals():
        for token in specials:
            if token in literal:
                raise ValueError(
                    f"template {tmpl.name!r} has the special token {token} inside literal "
                    f"text {_short(literal)}; write Special({token!r}) to insert it"
                )
    return _encode_parts(enc, tmpl.parts(messages, add_generation_prompt=add_generation_prompt))
