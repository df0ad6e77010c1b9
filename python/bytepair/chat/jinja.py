"""Hugging Face chat templates (Jinja), rendered as transformers renders them and encoded so that
no message can produce a control token.

Rendering: ``jinja2``'s ``ImmutableSandboxedEnvironment`` with transformers' settings
(``trim_blocks``, ``lstrip_blocks``, the ``loopcontrols`` extension and ``{% generation %}``
blocks; ``raise_exception``, ``strftime_now``, a ``tojson`` that does not escape HTML, a
``namespace`` that refuses underscore names) and its variables (``messages``, ``tools``,
``documents``, ``add_generation_prompt``, the tokenizer's special tokens, any others given). For
ordinary messages the text equals ``apply_chat_template(..., tokenize=False)``.

Encoding (:func:`template_parts`): the template is rendered a second time with every string
that came from the caller (message contents, names, tool calls and their arguments, tool
definitions, documents, other variables) wrapped in two noncharacters (U+FDD0 ... U+FDD1), with
the string's leading and trailing whitespace left outside, so that ``|trim`` and ``.strip()``
act as they do on the plain string. When the second rendering, markers removed, equals the
first, and the markers pair up, every character between markers came from the caller: it is
encoded as plain text, and only the template's own text may give special tokens. Roles, the
``type`` of parts and tools, dictionary keys and the special-token variables (``bos_token``,
...) are left unmarked: templates compare them with fixed strings.

A template that inspects or cuts the strings (``content.split('</think>')``, ``|length``,
slicing, comparing) renders differently with the markers, or separates them. Then the fallback
marks only the occurrences of the encoding's special tokens inside the caller's strings (what
transformers' ``sanitize_control_tokens`` does); if that too does not survive the template, the
chat is refused with a ``ValueError`` rather than encoded unsafely. In the fallback a control
token that the template assembles from two of the caller's strings (one ends ``<|im_``, the next
starts ``end|>``) is not caught; in the first method it is.

An added token marked ``lstrip``/``rstrip`` takes the whitespace beside it, as in ``tokenizers``
(:func:`bytepair.chat.structural.encode_chat` removes it), so the ids stay transformers' ids.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bytepair._optional import require
from bytepair.chat.templates import Part, Special, message_dicts

__all__ = ["JinjaTemplate", "is_jinja", "template_parts"]

OPEN, CLOSE = "\ufdd0", "\ufdd1"
_MARKERS = re.compile(f"[{OPEN}{CLOSE}]")
# Values that templates compare with fixed strings ("user", "function", "text").
_STRUCTURAL_KEYS = frozenset({"role", "type"})
# The names transformers gives the special tokens it passes to chat templates.
SPECIAL_TOKEN_NAMES = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)
# Variables that are the tokenizer's own tokens: template text, never the caller's.
TOKEN_VARIABLES = frozenset((*SPECIAL_TOKEN_NAMES, "additional_special_tokens"))


def is_jinja(text: str) -> bool:
    """Whether ``text`` is Jinja source rather than a template's name."""
    return "{{" in text or "{%" in text


@functools.cache
def _environment() -> Any:
    jinja2 = require("jinja2", "Jinja chat templates", "hub")
    sandbox = require("jinja2.sandbox", "Jinja chat templates", "hub")
    ext = require("jinja2.ext", "Jinja chat templates", "hub")

    class Generation(ext.Extension):  # type: ignore[misc,name-defined]
        # transformers' {% generation %} marks the assistant's text; it renders the body.
        tags = frozenset({"generation"})

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            call = self.call_method("_body")
            return jinja2.nodes.CallBlock(call, [], [], body).set_lineno(lineno)

        def _body(self, caller: Callable[[], str]) -> str:
            return caller()

    class Namespace(jinja2.utils.Namespace):  # type: ignore[misc,name-defined]
        # As transformers': no underscore attributes (a way towards Python's internals).
        def __init__(*args: Any, **kwargs: Any) -> None:
            self, rest = args[0], args[1:]
            attrs = dict(*rest, **kwargs)
            for name in attrs:
                Namespace._check(name)
            jinja2.utils.Namespace.__init__(self, attrs)

        def __setitem__(self, name: str, value: Any) -> None:
            Namespace._check(name)
            jinja2.utils.Namespace.__setitem__(self, name, value)

        @staticmethod
        def _check(name: object) -> None:
            if isinstance(name, str) and name.startswith("_"):
                raise jinja2.exceptions.SecurityError(
                    f"chat templates cannot store underscore names on a namespace ({name!r})"
                )

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(
        x: Any,
        ensure_ascii: bool = False,
        indent: int | None = None,
        separators: Any = None,
        sort_keys: bool = False,
    ) -> str:
        return json.dumps(
            x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
        )

    def strftime_now(format: str) -> str:
        return datetime.now().strftime(format)

    env = sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[Generation, ext.loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    env.globals["dict"] = dict
    env.globals["namespace"] = Namespace
    return env


@functools.lru_cache(maxsize=64)
def _compiled(source: str) -> Any:
    jinja2 = require("jinja2", "Jinja chat templates", "hub")
    try:
        return _environment().from_string(source)
    except jinja2.exceptions.TemplateSyntaxError as e:
        raise ValueError(f"the chat template is not valid Jinja (line {e.lineno}: {e})") from None


def _plain(value: Any, where: str) -> Any:
    """``value`` as plain JSON data (what transformers gives templates); other types refused."""
    if value is None or type(value) in (bool, int, float):
        return value
    if isinstance(value, str):
        if _MARKERS.search(value):
            raise ValueError(f"{where}: the text holds U+FDD0 or U+FDD1, which are not characters")
        return str.__str__(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    raise TypeError(f"{where}: expected JSON data (str, number, list, dict), got {type(value)}")


def _messages(messages: object) -> list[dict[str, Any]]:
    out = []
    for i, message in enumerate(message_dicts(messages, "a dict")):
        if not isinstance(message.get("role"), str):
            raise ValueError(f"message {i} has no 'role' string")
        # transformers drops the keys whose value is None (OpenAI's content=None).
        out.append(_plain({k: v for k, v in message.items() if v is not None}, f"message {i}"))
    return out


def _mark_strings(value: Any, mark: Callable[[str], str], key: str | None = None) -> Any:
    if isinstance(value, str):
        return value if key in _STRUCTURAL_KEYS else mark(value)
    if isinstance(value, dict):
        return {k: _mark_strings(v, mark, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_mark_strings(v, mark, key) for v in value]
    return value


def _mark_whole(text: str) -> str:
    core = text.strip()
    if not core:
        return text  # whitespace spells no token
    start = len(text) - len(text.lstrip())
    return text[:start] + OPEN + core + CLOSE + text[start + len(core) :]


def _mark_tokens(pattern: re.Pattern[str]) -> Callable[[str], str]:
    return lambda text: pattern.sub(lambda m: OPEN + m.group() + CLOSE, text)


@functools.lru_cache(maxsize=32)
def _token_pattern(tokens: frozenset[str]) -> re.Pattern[str]:
    alternatives = sorted(tokens, key=lambda t: (-len(t), t))
    return re.compile("|".join(map(re.escape, alternatives)) if alternatives else r"(?!)")


def _regions(rendered: str) -> list[tuple[str, bool]] | None:
    """The rendering as (text, from the caller) regions, or None when the markers do not
    pair up (the template cut a marked string)."""
    out: list[tuple[str, bool]] = []
    inside, at = False, 0
    for m in _MARKERS.finditer(rendered):
        opening = m.group() == OPEN
        if opening == inside:
            return None
        if m.start() > at:
            out.append((rendered[at : m.start()], inside))
        inside, at = opening, m.end()
    if inside:
        return None
    if at < len(rendered):
        out.append((rendered[at:], False))
    return out


@dataclass(frozen=True)
class JinjaTemplate:
    """A Hugging Face chat template: Jinja source, as in ``tokenizer_config.json``.

    >>> t = JinjaTemplate("{% for m in messages %}<s>{{ m.role }}: {{ m.content | trim }}\\n"
    ...                   "{% endfor %}")
    >>> t.render([{"role": "user", "content": " hi "}])
    '<s>user: hi\\n'
    """

    source: str
    name: str = "jinja"

    def __post_init__(self) -> None:
        if not isinstance(self.source, str):
            raise TypeError(f"the template source must be a str, got {type(self.source)}")
        _compiled(self.source)  # a syntax error shows now

    def _render(
        self,
        messages: list[dict[str, Any]],
        tools: Any,
        documents: Any,
        add_generation_prompt: bool,
        variables: Mapping[str, Any],
    ) -> str:
        jinja2 = require("jinja2", "Jinja chat templates", "hub")
        try:
            rendered: str = _compiled(self.source).render(
                **variables,
                messages=messages,
                tools=tools,
                documents=documents,
                add_generation_prompt=add_generation_prompt,
            )
        except jinja2.exceptions.TemplateError as e:
            raise ValueError(f"chat template {self.name!r}: {e}") from None
        return rendered

    def _inputs(
        self, messages: object, tools: object, documents: object, variables: object
    ) -> tuple[list[dict[str, Any]], Any, Any, dict[str, Any]]:
        if variables is not None and not isinstance(variables, Mapping):
            raise TypeError("variables must be a dict of template variables")
        given = dict(variables or {})
        for reserved in ("messages", "tools", "documents", "add_generation_prompt"):
            if reserved in given:
                raise ValueError(f"pass {reserved} as its own argument, not in variables")
        for what, value in (("tools", tools), ("documents", documents)):
            if value is not None and not (
                isinstance(value, list | tuple) and all(isinstance(d, Mapping) for d in value)
            ):
                raise TypeError(f"{what} must be a list of dicts")
        return (
            _messages(messages),
            None if tools is None else _plain(tools, "tools"),
            None if documents is None else _plain(documents, "documents"),
            _plain(given, "variables"),
        )

    def render(
        self,
        messages: object,
        *,
        tools: Iterable[Mapping[str, Any]] | None = None,
        documents: Iterable[Mapping[str, Any]] | None = None,
        add_generation_prompt: bool = False,
        variables: Mapping[str, Any] | None = None,
    ) -> str:
        """The prompt as text, as ``apply_chat_template(..., tokenize=False)`` gives it.

        ``variables`` holds the others the template reads: the special tokens (``bos_token``,
        ``eos_token``, ...) and things such as ``date_string``. For logs and counting only:
        encoding this string with ``allowed_special`` lets a message write control tokens; use
        :func:`bytepair.chat.encode_chat`.
        """
        msgs, tls, docs, var = self._inputs(messages, tools, documents, variables)
        return self._render(msgs, tls, docs, bool(add_generation_prompt), var)


def template_parts(
    template: JinjaTemplate,
    special_tokens: Iterable[str],
    messages: object,
    *,
    tools: Iterable[Mapping[str, Any]] | None = None,
    documents: Iterable[Mapping[str, Any]] | None = None,
    add_generation_prompt: bool = False,
    variables: Mapping[str, Any] | None = None,
) -> list[Part]:
    """The prompt as parts: :class:`Special` for each special token the template itself writes,
    ``str`` for all other text (the caller's strings included, whatever they spell). See the
    module's documentation for how the caller's text is told apart, and when a chat is refused.
    """
    msgs, tls, docs, var = template._inputs(messages, tools, documents, variables)
    generation = bool(add_generation_prompt)
    plain = template._render(msgs, tls, docs, generation, var)
    pattern = _token_pattern(frozenset(special_tokens))

    def marked(mark: Callable[[str], str]) -> list[tuple[str, bool]] | None:
        own = {k: v for k, v in var.items() if k in TOKEN_VARIABLES}
        others = {k: _mark_strings(v, mark) for k, v in var.items() if k not in TOKEN_VARIABLES}
        try:
            rendered = template._render(
                _mark_strings(msgs, mark),
                _mark_strings(tls, mark),
                _mark_strings(docs, mark),
                generation,
                {**others, **own},
            )
        except ValueError:
            return None  # the markers changed what the template does (a length check, ...)
        regions = _regions(rendered)
        if regions is None or "".join(text for text, _ in regions) != plain:
            return None
        return regions

    regions = marked(_mark_whole)
    if regions is None:
        regions = marked(_mark_tokens(pattern))
        if regions is None or any(
            from_caller and not pattern.fullmatch(text) for text, from_caller in regions
        ):
            raise ValueError(
                f"chat template {template.name!r} transforms the messages' text in a way that "
                "hides where it came from (it splits a control token, or renders differently "
                "with marked text): bytepair cannot tell the template's control tokens from "
                "the messages', so it refuses to encode this chat"
            )
    parts: list[Part] = []
    for text, from_caller in regions:
        if from_caller:
            parts.append(text)
            continue
        at = 0
        for m in pattern.finditer(text):
            if m.start() > at:
                parts.append(text[at : m.start()])
            parts.append(Special(m.group()))
            at = m.end()
        if at < len(text):
            parts.append(text[at:])
    return parts
