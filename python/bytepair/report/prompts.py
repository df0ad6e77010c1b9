"""Prompts from files: plain text, folders of them, JSON Lines, JSON and CSV.

Every prompt remembers where it came from (``evals.jsonl:12``) so that a report, or an error,
can point at it.

- a **text file** (any name not listed below) is one prompt, read as UTF-8;
- a **folder** is searched recursively for prompt files: ``.txt``, ``.md``, ``.markdown``,
  ``.text``, ``.prompt`` (one prompt each) and ``.jsonl``, ``.ndjson``, in sorted order; hidden
  files and folders are skipped. Other files, JSON and CSV among them (a folder often holds a
  ``package.json`` or a manifest next to its prompts), are read only when named;
- **JSON Lines** (``.jsonl``, ``.ndjson``): one prompt per non-blank line. A line may be a string,
  a list of chat messages, or an object; in an object the prompt is the ``field`` asked for (a
  dotted path such as ``request.messages`` reaches into nested objects) or, without one, the
  first of ``messages``, ``prompt``, ``text``, ``input``, ``content`` that is present;
- **JSON** (``.json``): a list of such items, or one item;
- **CSV** (``.csv``, ``.tsv``): one prompt per row, from ``column`` or, without one, the first of
  the columns ``prompt``, ``text``, ``input``, ``content`` (or the only column).

Chat ``messages`` (``[{"role": "user", "content": "..."}]``, content as a string or as a list of
``{"type": "text", "text": ...}`` parts) become the contents joined by blank lines; the prompt
keeps the messages, and the object's ``tools``, for a report to count the chat template's
tokens too.

>>> import json, pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "chat.jsonl").write_text(json.dumps({"messages": [
...     {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi!"}]}) + "\\n")
>>> load_prompts([d / "chat.jsonl"])
[Prompt(text='Be brief.\\n\\nHi!', source='...chat.jsonl:1')]
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_COLUMNS",
    "DEFAULT_FIELDS",
    "IN_FOLDERS",
    "Prompt",
    "PromptError",
    "chat_text",
    "load_prompts",
    "read_text_file",
]

DEFAULT_FIELDS = ("messages", "prompt", "text", "input", "content")
"""The fields tried, in order, in a JSON object when no field is named."""

DEFAULT_COLUMNS = ("prompt", "text", "input", "content")
"""The columns tried, in order, in a CSV file when no column is named."""

_JSONL = {".jsonl", ".ndjson"}
_CSV = {".csv": ",", ".tsv": "\t"}
IN_FOLDERS = (".txt", ".md", ".markdown", ".text", ".prompt", ".jsonl", ".ndjson")
"""The suffixes of the files read from a folder."""


@dataclass(frozen=True)
class Prompt:
    """One prompt's text and where it came from (a file, ``file:line``, or a label).

    A chat prompt also keeps its ``messages`` (and the ``tools`` beside them), so that a report
    counts what the model receives (see :mod:`bytepair.report.chat`)."""

    text: str
    source: str = ""
    messages: tuple[Any, ...] | None = field(default=None, repr=False, compare=False)
    tools: tuple[Any, ...] | None = field(default=None, repr=False, compare=False)


class PromptError(ValueError):
    """A prompt file that cannot be read as asked; the message names the file and line."""


def read_text_file(path: str | os.PathLike[str]) -> str:
    """The contents of a UTF-8 text file, with line endings kept as they are.

    Raises :class:`PromptError` with a one-line message for a missing, unreadable or non-UTF-8
    file.
    """
    name = os.fspath(path)
    try:
        data = Path(name).read_bytes()
    except FileNotFoundError:
        raise PromptError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise PromptError(f"{name}: is a directory") from None
    except OSError as e:
        raise PromptError(f"{name}: cannot read: {e.strerror or e}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise PromptError(
            f"{name}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})"
        ) from None


def chat_text(messages: Sequence[Any], where: str = "messages") -> str:
    """The text of a list of chat messages: their contents, joined by blank lines.

    >>> chat_text([{"role": "user", "content": [{"type": "text", "text": "a"},
    ...            {"type": "image_url", "image_url": {"url": "..."}}]},
    ...            {"role": "assistant", "content": "b"}])
    'a\\n\\nb'
    """
    parts: list[str] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or "content" not in message:
            raise PromptError(f"{where}: message {i} is not an object with a 'content'")
        content = message["content"]
        if content is None:  # an assistant message that only calls tools
            continue
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            texts = [_content_part(part, f"{where}: message {i}") for part in content]
            parts.append("".join(t for t in texts if t is not None))
        else:
            raise PromptError(
                f"{where}: message {i} has a content of type {type(content).__name__}, "
                "expected text or a list of parts"
            )
    return "\n\n".join(parts)


def _content_part(part: Any, where: str) -> str | None:
    if isinstance(part, str):
        return part
    if isinstance(part, dict):
        if part.get("type", "text") == "text":
            text = part.get("text")
            if isinstance(text, str):
                return text
            raise PromptError(f"{where}: a text part without a 'text' string")
        return None  # images, audio, files: no text to count
    raise PromptError(f"{where}: a content part of type {type(part).__name__}")


def _is_messages(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(m, dict) and "content" in m for m in value)
    )


def _lookup(obj: dict[str, Any], field: str) -> tuple[bool, Any]:
    value: Any = obj
    for key in field.split("."):
        if not isinstance(value, dict) or key not in value:
            return False, None
        value = value[key]
    return True, value


def _fields_of(obj: dict[str, Any]) -> str:
    names = list(obj)
    shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
    return shown or "no fields"


def _item_text(item: Any, field: str | None, where: str) -> str:
    """The prompt of one JSON item (a JSONL line, or an element of a JSON list)."""
    if field is None:
        if isinstance(item, str):
            return item
        if _is_messages(item):
            return chat_text(item, where)
        if isinstance(item, dict):
            for name in DEFAULT_FIELDS:
                if name in item:
                    return _value_text(item[name], name, where)
            raise PromptError(
                f"{where}: none of the fields {', '.join(DEFAULT_FIELDS)} "
                f"(the object has {_fields_of(item)}); name one with --field"
            )
        raise PromptError(
            f"{where}: a JSON {_json_type(item)} is not a prompt "
            "(expected a string, an object or a list of chat messages)"
        )
    if not isinstance(item, dict):
        raise PromptError(f"{where}: a JSON {_json_type(item)} has no field {field!r}")
    found, value = _lookup(item, field)
    if not found:
        raise PromptError(f"{where}: no field {field!r} (the object has {_fields_of(item)})")
    return _value_text(value, field, where)


def _value_text(value: Any, field: str, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and (not value or _is_messages(value)):
        return chat_text(value, where)
    if isinstance(value, dict) and _is_messages(value.get("messages")):
        return chat_text(value["messages"], where)
    raise PromptError(
        f"{where}: field {field!r} is a JSON {_json_type(value)}, "
        "not text or a list of chat messages"
    )


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _chat_of(item: Any, field: str | None) -> tuple[tuple[Any, ...] | None, tuple[Any, ...] | None]:
    """The messages and tools of a chat item, as :func:`_item_text` finds its text (None, None
    for other prompts). Tools are the ``tools`` beside the messages."""
    parent: Any = None
    value: Any = item
    if field is not None:
        head, _, _ = field.rpartition(".")
        parent = _lookup(item, head)[1] if head else item
        value = _lookup(item, field)[1]
    elif isinstance(item, dict):
        name = next((n for n in DEFAULT_FIELDS if n in item), None)
        if name != "messages":
            return None, None
        parent, value = item, item["messages"]
    if isinstance(value, dict) and _is_messages(value.get("messages")):
        parent, value = value, value["messages"]
    if not _is_messages(value):
        return None, None
    tools = parent.get("tools") if isinstance(parent, dict) else None
    return tuple(value), tuple(tools) if isinstance(tools, list) and tools else None


def _prompt(item: Any, field: str | None, where: str) -> Prompt:
    text = _item_text(item, field, where)
    messages, tools = _chat_of(item, field)
    return Prompt(text, where, messages, tools)


def _from_jsonl(path: str, field: str | None) -> list[Prompt]:
    prompts = []
    for number, line in enumerate(read_text_file(path).splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            item = json.loads(line)
        except json.JSONDecodeError as e:
            raise PromptError(f"{where}: invalid JSON: {e.msg} (column {e.colno})") from None
        prompts.append(_prompt(item, field, where))
    return prompts


def _from_json(path: str, field: str | None) -> list[Prompt]:
    try:
        data = json.loads(read_text_file(path))
    except json.JSONDecodeError as e:
        raise PromptError(f"{path}:{e.lineno}: invalid JSON: {e.msg} (column {e.colno})") from None
    if isinstance(data, list) and not _is_messages(data):
        return [_prompt(item, field, f"{path}[{i}]") for i, item in enumerate(data)]
    return [Prompt(_item_text(data, field, path), path)]


def _from_csv(path: str, column: str | None, delimiter: str) -> list[Prompt]:
    # Prompts are long: lift the csv module's default 128 KiB limit on one field.
    if csv.field_size_limit() < 2**31 - 1:
        csv.field_size_limit(2**31 - 1)
    text = read_text_file(path)
    reader = csv.DictReader(text.splitlines(keepends=True), delimiter=delimiter)
    try:
        header = list(reader.fieldnames or [])
    except csv.Error as e:
        raise PromptError(f"{path}:1: invalid CSV: {e}") from None
    if not header:
        raise PromptError(f"{path}: empty CSV file (no header row)")
    if column is None:
        lowered = {h.strip().lower(): h for h in header}
        chosen = next((lowered[c] for c in DEFAULT_COLUMNS if c in lowered), None)
        if chosen is None and len(header) == 1:
            chosen = header[0]
        if chosen is None:
            raise PromptError(
                f"{path}: none of the columns {', '.join(DEFAULT_COLUMNS)} "
                f"(the header has {', '.join(header)}); name one with --column"
            )
        column = chosen
    elif column not in header:
        raise PromptError(f"{path}: no column {column!r} (the header has {', '.join(header)})")
    prompts = []
    try:
        for row in reader:
            value = row.get(column)
            if value is None:
                raise PromptError(f"{path}:{reader.line_num}: the row has no {column!r} value")
            prompts.append(Prompt(value, f"{path}:{reader.line_num}"))
    except csv.Error as e:
        raise PromptError(f"{path}:{reader.line_num}: invalid CSV: {e}") from None
    return prompts


def _folder_files(folder: Path) -> list[Path]:
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = Path(root) / name
            if not name.startswith(".") and path.suffix.lower() in IN_FOLDERS:
                found.append(path)
    return found


def _load_file(path: str, field: str | None, column: str | None) -> list[Prompt]:
    suffix = Path(path).suffix.lower()
    if suffix in _JSONL:
        return _from_jsonl(path, field)
    if suffix == ".json":
        return _from_json(path, field)
    if suffix in _CSV:
        return _from_csv(path, column, _CSV[suffix])
    return [Prompt(read_text_file(path), path)]


def load_prompts(
    paths: Iterable[str | os.PathLike[str]],
    *,
    field: str | None = None,
    column: str | None = None,
) -> list[Prompt]:
    """The prompts in files and folders (see the module docs for what each kind holds).

    ``field`` names the JSON field (dotted for nested objects) and ``column`` the CSV column
    that holds the prompt. Raises :class:`PromptError` (a ``ValueError``) with a one-line
    message naming the file, and the line where there is one.
    """
    prompts: list[Prompt] = []
    for p in paths:
        name = os.fspath(p)
        if os.path.isdir(name):
            for f in _folder_files(Path(name)):
                prompts.extend(_load_file(str(f), field, column))
        else:
            prompts.extend(_load_file(name, field, column))
    return prompts
