"""Chat prompts built structurally: control tokens as ids, every message's content as text.

Works on any encoding with tiktoken's interface (:class:`ChatEncoder`); ``Encoding.encode_chat``
calls :func:`encode_chat`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from bytepair.chat.templates import (
    IM_END,
    IM_START,
    ChatTemplate,
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


def encode_chat(
    enc: ChatEncoder,
    messages: object,
    template: str | ChatTemplate = "chatml",
    *,
    add_generation_prompt: bool = False,
) -> list[int]:
    """The ids of a chat, built structurally (see :meth:`Encoding.encode_chat`)."""
    tmpl = resolve_template(template)
    if not isinstance(add_generation_prompt, bool):
        raise TypeError("add_generation_prompt must be True or False")
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
    ids: list[int] = []
    text: list[str] = []
    # Adjacent text (literal and content) is encoded as one string, so the ids equal those of
    # the rendered prompt encoded with the control tokens allowed (when content is clean).
    for part in tmpl.parts(messages, add_generation_prompt=add_generation_prompt):
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
