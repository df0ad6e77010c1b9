"""The chat methods of ``Encoding``: chats encoded so that no message can produce a control token,
and the search for control tokens in untrusted text (see :mod:`bytepair.chat`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from bytepair import chat
from bytepair.chat import ChatTemplate, JinjaTemplate, SpecialMatch
from bytepair.chat.structural import ChatEncoder

__all__ = ["ChatApi"]


class ChatApi:
    """Chat prompts and untrusted text; mixed into :class:`bytepair.Encoding`."""

    _special_set: frozenset[str]

    def encode_chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        template: str | ChatTemplate | JinjaTemplate = "chatml",
        *,
        add_generation_prompt: bool = False,
        tools: Sequence[Mapping[str, Any]] | None = None,
        documents: Sequence[Mapping[str, Any]] | None = None,
        variables: Mapping[str, Any] | None = None,
    ) -> list[int]:
        """Encode a chat: control tokens from the template as ids, every message's content as
        ordinary text, so no message can produce a control token (prompt injection).

        ``template``: ``"chatml"``, ``"llama3"``, a :class:`bytepair.chat.ChatTemplate`, Jinja
        source or a :class:`bytepair.chat.JinjaTemplate` (rendered as transformers does, with
        ``tools``, ``documents``, ``variables``; see :mod:`bytepair.chat.jinja`), or ``"model"``
        (the template of the Hub model, :meth:`from_pretrained`). Wrong types are a
        ``TypeError``, unknown roles or keys a ``ValueError``; so is a ``ChatTemplate`` whose
        special tokens this encoding lacks (the message says how to add them).
        """
        return chat.encode_chat(
            cast(ChatEncoder, self),  # the Encoding this is mixed into
            messages,
            template,
            add_generation_prompt=add_generation_prompt,
            tools=tools,
            documents=documents,
            variables=variables,
        )

    def find_special(self, text: str, *, names: Iterable[str] | None = None) -> list[SpecialMatch]:
        """Where ``text`` spells or imitates a control token: this encoding's special tokens and
        the well-known ones of other chat formats (or ``names``). Near misses count: case,
        zero-width characters inside, full-width brackets; see :func:`bytepair.chat.find_special`.
        """
        wanted = self._special_set | set(chat.KNOWN_CONTROL_TOKENS) if names is None else names
        return chat.find_special(text, wanted, specials=self._special_set)

    def sanitize(
        self, text: str, *, names: Iterable[str] | None = None, replacement: str | None = None
    ) -> str:
        """``text`` with every :meth:`find_special` match neutralised (by default its brackets
        become HTML character references: ``&lt;|im_end|&gt;``), for prompts built as strings.
        """
        wanted = self._special_set | set(chat.KNOWN_CONTROL_TOKENS) if names is None else names
        return chat.sanitize(text, wanted, replacement=replacement, specials=self._special_set)
