"""How many tokens a chat costs: the messages as the model receives them, not only their text.

- A model with a chat template (an encoding from ``Encoding.from_pretrained``, or a Hub id
  ``"org/model"``): the rendered template with the generation prompt, encoded structurally
  (:meth:`bytepair.Encoding.encode_chat` with ``template="model"``). Exact.
- An OpenAI chat model (``"gpt-4o"``, or its encoding ``o200k_base``/``cl100k_base``): the method
  of OpenAI's cookbook ("How to count tokens with tiktoken"): every value of every message, plus
  3 tokens per message, 1 per ``name``, 3 priming the reply; tool definitions counted the
  cookbook's way. An estimate: OpenAI does not publish its chat format.

>>> import bytepair
>>> enc = bytepair.Encoding("bytes", pat_str=r".", special_tokens={},
...                         mergeable_ranks={bytes([b]): b for b in range(256)})
>>> n = count_chat([{"role": "user", "content": "hi"}], enc, method="openai")
>>> n.tokens, n.content, n.overhead, n.estimate
(12, 2, 10, True)
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from bytepair.encoding import Encoding
from bytepair.registry import encoding_name_for_model, get_encoding
from bytepair.report.prompts import chat_text

__all__ = ["ChatCount", "chat_method", "count_chat", "count_chat_with"]

Method = Literal["template", "openai"]

# The cookbook's per-model settings for function definitions (gpt-4o family, then older).
_TOOL_SETTINGS = {
    "o200k": {"init": 7, "prop_init": 3, "prop_key": 3, "enum_init": -3, "enum_item": 3, "end": 12},
    "cl100k": {
        "init": 10,
        "prop_init": 3,
        "prop_key": 3,
        "enum_init": -3,
        "enum_item": 3,
        "end": 12,
    },
}
_OPENAI_ENCODINGS = ("o200k_base", "o200k_harmony", "cl100k_base")


@dataclass(frozen=True)
class ChatCount:
    """A chat's tokens: ``tokens`` in all, ``content`` of the messages' text alone, and
    ``overhead`` (the rest: the template's tokens, or the cookbook's per-message tokens and tool
    definitions). ``estimate`` is true for the cookbook's method; ``method`` names it."""

    tokens: int
    content: int
    method: Method
    estimate: bool

    @property
    def overhead(self) -> int:
        return self.tokens - self.content


def _content_tokens(enc: Encoding, messages: Sequence[Any]) -> int:
    return sum(enc.count(chat_text([m]), disallowed_special=()) for m in messages)


def chat_method(enc: Encoding, model: str | None = None) -> Method | None:
    """How a chat is counted with ``enc``: ``"template"`` when it has its model's chat
    template, ``"openai"`` for OpenAI's encodings, None when neither is known."""
    config = enc.tokenizer_config
    if config is not None and config.chat_template is not None:
        return "template"
    if enc.name in _OPENAI_ENCODINGS or model is not None:
        return "openai"
    return None


def _openai_tokens(enc: Encoding, messages: Sequence[Any], tools: Sequence[Any] | None) -> int:
    def count(value: object) -> int:
        return enc.count(value if isinstance(value, str) else str(value), disallowed_special=())

    total = 3  # every reply is primed with <|start|>assistant<|message|>
    for message in messages:
        total += 3
        for key, value in message.items():
            if key == "content" and not isinstance(value, str):
                value = chat_text([message])
            if value is None:
                continue
            total += count(value)
            if key == "name":
                total += 1
    if tools:
        settings = _TOOL_SETTINGS["o200k" if enc.name.startswith("o200k") else "cl100k"]
        for tool in tools:
            function = tool.get("function", tool) if isinstance(tool, Mapping) else {}
            total += settings["init"]
            description = str(function.get("description", "")).removesuffix(".")
            total += count(f"{function.get('name', '')}:{description}")
            properties = (function.get("parameters") or {}).get("properties") or {}
            if properties:
                total += settings["prop_init"]
                for key, prop in properties.items():
                    total += settings["prop_key"]
                    if "enum" in prop:
                        total += settings["enum_init"]
                        for item in prop["enum"]:
                            total += settings["enum_item"] + count(item)
                    desc = str(prop.get("description", "")).removesuffix(".")
                    total += count(f"{key}:{prop.get('type', '')}:{desc}")
        total += settings["end"]
    return total


def count_chat_with(
    enc: Encoding,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None = None,
    *,
    method: Method | None = None,
) -> ChatCount:
    """:func:`count_chat` with an encoding already chosen (``method`` None: see
    :func:`chat_method`; an encoding with neither raises ``ValueError``)."""
    chosen = method or chat_method(enc)
    if chosen is None:
        raise ValueError(
            f"encoding {enc.name!r} has no chat template and is not an OpenAI encoding: give a "
            "model (a Hub id 'org/model' or an OpenAI model name) to count its chat overhead"
        )
    content = _content_tokens(enc, messages)
    if chosen == "template":
        ids = enc.encode_chat(messages, template="model", tools=tools, add_generation_prompt=True)
        return ChatCount(len(ids), content, "template", estimate=False)
    return ChatCount(_openai_tokens(enc, messages, tools), content, "openai", estimate=True)


def count_chat(
    messages: Sequence[Mapping[str, Any]],
    model: str | Encoding,
    tools: Sequence[Mapping[str, Any]] | None = None,
    *,
    method: Method | None = None,
    vocab_dir: str | os.PathLike[str] | None = None,
) -> ChatCount:
    """The tokens ``messages`` (and ``tools``) cost with ``model``: an OpenAI model name
    (``"gpt-4o"``; the cookbook's estimate), a Hub id (``"Qwen/Qwen2.5-7B-Instruct"``; its
    own chat template, read through the Hugging Face cache) or an :class:`~bytepair.Encoding`.
    ``method`` forces ``"template"`` or ``"openai"``."""
    if isinstance(model, Encoding):
        return count_chat_with(model, messages, tools, method=method)
    if not isinstance(model, str):
        raise TypeError(f"model must be a model name or an Encoding, got {type(model).__name__}")
    try:
        name = encoding_name_for_model(model)
    except KeyError:
        if "/" not in model:
            raise ValueError(
                f"unknown model {model!r}: give an OpenAI model name (gpt-4o, ...) or a Hugging "
                "Face Hub id ('org/model')"
            ) from None
        return count_chat_with(Encoding.from_pretrained(model), messages, tools, method=method)
    enc = get_encoding(name, vocab_dir=vocab_dir)
    return count_chat_with(enc, messages, tools, method=method or "openai")
