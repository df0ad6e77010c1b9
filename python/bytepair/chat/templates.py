"""Chat templates: which control tokens and texts surround each message of a role.

:data:`CHATML` and :data:`LLAMA3` are the built-in ones; :class:`ChatTemplate` makes others.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


def plain_str(value: object) -> str | None:
    """``value`` as an exact ``str``, or None when it is no str.

    A ``str`` subclass is copied with ``str.__str__``, which no subclass can override (its own
    ``__str__``, ``strip``, ``__hash__`` or ``__getitem__`` could return other text, even a
    :class:`Special`), so nothing of the caller's object runs after this.
    """
    if type(value) is str:
        return value
    if isinstance(value, str):
        try:
            return str.__str__(value)
        except TypeError:  # claims to be a str (a __class__ property) but is none
            return None
    return None


# ---- templates ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Special:
    """A control token in a template, named by its text: ``Special("<|im_start|>")``.

    In a template a plain ``str`` is literal text (encoded as ordinary text); only ``Special``
    becomes a control id.
    """

    token: str

    def __post_init__(self) -> None:
        token = plain_str(self.token)
        if not token:
            raise TypeError(f"Special needs the token's text, got {self.token!r}")
        object.__setattr__(self, "token", token)


#: One element of a template: literal text or a control token.
Part = str | Special


@dataclass(frozen=True)
class RoleFormat:
    """What surrounds the content of one role's messages."""

    prefix: tuple[Part, ...] = ()
    suffix: tuple[Part, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "prefix", _parts(self.prefix, "prefix"))
        object.__setattr__(self, "suffix", _parts(self.suffix, "suffix"))


@dataclass(frozen=True)
class ChatTemplate:
    """A chat format: per-role prefix and suffix around each message's content.

    A message renders as ``prefix + content + suffix`` of its role; the prompt is ``begin``, the
    messages in order, then ``generation_prompt`` when asked for. Each part is literal text (a
    ``str``) or a control token (:class:`Special`). ``strip_content`` strips whitespace around
    each content first (Llama 3 does). Roles not in ``roles`` are an error.

    >>> t = ChatTemplate(
    ...     "plain",
    ...     roles={"user": RoleFormat(("User: ",), ("\\n",)),
    ...            "assistant": RoleFormat(("Bot: ",), (Special("<|endoftext|>"), "\\n"))},
    ...     generation_prompt=("Bot:",),
    ... )
    >>> t.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    'User: hi\\nBot:'
    >>> sorted(t.special_tokens())
    ['<|endoftext|>']
    """

    name: str
    roles: Mapping[str, RoleFormat] = field(hash=False)
    begin: tuple[Part, ...] = ()
    generation_prompt: tuple[Part, ...] = ()
    strip_content: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"the template name must be a str, got {type(self.name).__name__}")
        if not isinstance(self.roles, Mapping) or not self.roles:
            raise TypeError("roles must be a non-empty mapping of role name to RoleFormat")
        for role, fmt in self.roles.items():
            if not isinstance(role, str) or not role:
                raise TypeError(f"role names must be non-empty strings, got {role!r}")
            if not isinstance(fmt, RoleFormat):
                raise TypeError(f"role {role!r} needs a RoleFormat, got {type(fmt).__name__}")
        object.__setattr__(self, "roles", MappingProxyType(dict(self.roles)))
        object.__setattr__(self, "begin", _parts(self.begin, "begin"))
        object.__setattr__(self, "generation_prompt", _parts(self.generation_prompt, "prompt"))

    def special_tokens(self) -> frozenset[str]:
        """Every control token the template uses."""
        parts = [*self.begin, *self.generation_prompt]
        for fmt in self.roles.values():
            parts += [*fmt.prefix, *fmt.suffix]
        return frozenset(p.token for p in parts if isinstance(p, Special))

    def literals(self) -> list[str]:
        """Every piece of literal text in the template."""
        parts = [*self.begin, *self.generation_prompt]
        for fmt in self.roles.values():
            parts += [*fmt.prefix, *fmt.suffix]
        return [p for p in parts if isinstance(p, str)]

    def parts(self, messages: object, *, add_generation_prompt: bool = False) -> list[Part]:
        """The prompt as a list of parts, message contents included as literal text."""
        out: list[Part] = list(self.begin)
        for role, content in _checked_messages(messages, self):
            fmt = self.roles[role]
            out += fmt.prefix
            out.append(content.strip() if self.strip_content else content)
            out += fmt.suffix
        if add_generation_prompt:
            out += self.generation_prompt
        return out

    def render(self, messages: object, *, add_generation_prompt: bool = False) -> str:
        """The prompt as text, control tokens spelled out: for logs and tests only.

        Never encode this string with ``allowed_special``: a message that spells a control
        token would become that token. :func:`encode_chat` is the safe way to get the ids.
        """
        return "".join(
            p.token if isinstance(p, Special) else p
            for p in self.parts(messages, add_generation_prompt=add_generation_prompt)
        )


def _parts(parts: object, what: str) -> tuple[Part, ...]:
    if isinstance(parts, str | Special):
        parts = (parts,)
    if not isinstance(parts, Iterable):
        raise TypeError(f"{what} must be a tuple of str and Special, got {type(parts).__name__}")
    out = []
    for p in tuple(parts):
        text = plain_str(p)
        if text is None and not isinstance(p, Special):
            raise TypeError(f"{what} parts must be str (text) or Special, got {type(p).__name__}")
        out.append(p if text is None else text)
    return tuple(out)


_ROLE_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,64}")

IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
BEGIN_OF_TEXT = "<|begin_of_text|>"
START_HEADER = "<|start_header_id|>"
END_HEADER = "<|end_header_id|>"
EOT = "<|eot_id|>"


def _role_names(roles: Iterable[str]) -> list[str]:
    names = [roles] if isinstance(roles, str) else list(roles)
    for r in names:
        if not isinstance(r, str) or not _ROLE_NAME.fullmatch(r):
            raise ValueError(
                f"role name {r!r} is not allowed: use 1 to 64 letters, digits, '_', '.', ':', '-'"
            )
    return names


def chatml(roles: Iterable[str] = ("system", "user", "assistant", "tool")) -> ChatTemplate:
    """ChatML: ``<|im_start|>{role}\\n{content}<|im_end|>\\n`` per message; the generation
    prompt is ``<|im_start|>assistant\\n``. Content is kept as given (not stripped).

    >>> chatml().render([{"role": "system", "content": "Be brief."}])
    '<|im_start|>system\\nBe brief.<|im_end|>\\n'
    """
    return ChatTemplate(
        "chatml",
        roles={
            r: RoleFormat((Special(IM_START), f"{r}\n"), (Special(IM_END), "\n"))
            for r in _role_names(roles)
        },
        generation_prompt=(Special(IM_START), "assistant\n"),
    )


def llama3(roles: Iterable[str] = ("system", "user", "assistant", "ipython")) -> ChatTemplate:
    """Llama 3 (3.0 to 3.3 instruct), as Meta's ``ChatFormat`` and the Hugging Face template
    write it: ``<|begin_of_text|>``, then per message
    ``<|start_header_id|>{role}<|end_header_id|>\\n\\n{content stripped}<|eot_id|>``; the
    generation prompt is the assistant header. Role ``tool`` is written ``ipython`` (as in
    Meta's llama-models). Meta's ``encode_dialog_prompt`` always adds the generation prompt:
    pass ``add_generation_prompt=True`` for the same ids.

    >>> llama3().render([{"role": "user", "content": " hi "}], add_generation_prompt=True)
    '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\\n\\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\\n\\n'
    """

    def header(name: str) -> tuple[Part, ...]:
        return (Special(START_HEADER), name, Special(END_HEADER), "\n\n")

    names = _role_names(roles)
    formats = {r: RoleFormat(header(r), (Special(EOT),)) for r in names}
    if "ipython" in names and "tool" not in formats:
        formats["tool"] = RoleFormat(header("ipython"), (Special(EOT),))
    return ChatTemplate(
        "llama3",
        roles=formats,
        begin=(Special(BEGIN_OF_TEXT),),
        generation_prompt=header("assistant"),
        strip_content=True,
    )


CHATML = chatml()
LLAMA3 = llama3()
#: The templates :func:`encode_chat` knows by name.
TEMPLATES: Mapping[str, ChatTemplate] = MappingProxyType({"chatml": CHATML, "llama3": LLAMA3})


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def message_dicts(messages: object, each: str) -> list[Mapping[Any, Any]]:
    """``messages`` as a list of mappings, or a TypeError saying which item is ``each`` not."""
    if isinstance(messages, str | bytes | bytearray | Mapping) or not isinstance(
        messages, Iterable
    ):
        raise TypeError(
            "messages must be a list of {'role': ..., 'content': ...} dicts, "
            f"got {type(messages).__name__}"
        )
    out = list(messages)
    for i, message in enumerate(out):
        if not isinstance(message, Mapping):
            raise TypeError(f"message {i} must be {each}, got {type(message).__name__}")
    return out


def _checked_messages(messages: object, template: ChatTemplate) -> list[tuple[str, str]]:
    """The messages as (role, content) pairs, or a TypeError/ValueError saying what is wrong."""
    out = []
    for i, message in enumerate(message_dicts(messages, "a dict with 'role' and 'content'")):
        extra = [k for k in message if k not in ("role", "content")]
        if extra:
            raise ValueError(
                f"message {i} has keys {', '.join(_short(k) for k in extra)} that the template "
                "does not render; pass only 'role' and 'content'"
            )
        for key in ("role", "content"):
            if key not in message:
                raise ValueError(f"message {i} has no {key!r}")
        role, content = plain_str(message["role"]), plain_str(message["content"])
        if role is None:
            raise TypeError(
                f"message {i}: 'role' must be a str, got {type(message['role']).__name__}"
            )
        if role not in template.roles:
            raise ValueError(
                f"message {i}: role {_short(role)} is not a role of template "
                f"{template.name!r} ({', '.join(template.roles)}); pick one of those or pass a "
                "ChatTemplate that defines it"
            )
        if content is None:
            given = message["content"]
            hint = ""
            if isinstance(given, list):
                hint = " (lists of content parts are not supported: join their text first)"
            raise TypeError(
                f"message {i} ({role}): 'content' must be a str, got {type(given).__name__}{hint}"
            )
        out.append((role, content))
    return out


def resolve_template(template: str | ChatTemplate) -> ChatTemplate:
    """A template given by name (``"chatml"``, ``"llama3"``) or as a :class:`ChatTemplate`."""
    if isinstance(template, ChatTemplate):
        return template
    if isinstance(template, str):
        try:
            return TEMPLATES[template]
        except KeyError:
            raise ValueError(
                f"unknown chat template {_short(template)}; known: {', '.join(TEMPLATES)}, "
                "'model' (the template of a Hub model's encoding), Jinja source, or a "
                "ChatTemplate"
            ) from None
    raise TypeError(f"template must be a name or a ChatTemplate, got {type(template).__name__}")
