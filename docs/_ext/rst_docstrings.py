"""A griffe extension: the package's reStructuredText-flavoured docstrings, read as Markdown.

The docstrings are written for ``help()`` and doctest: bare ``>>>`` examples, ``:func:`x```
roles, ``::`` literal blocks and simple tables. Markdown would read a doctest's output such as
``[b'ab', b'c']`` as a link and a table's ``====`` rule as a heading, so before the docstrings
are rendered this fences examples and tables as code and turns roles into code spans. Only the
documentation site sees the change; the sources stay as they are.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension, Object

ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|data|attr|exc|obj):`~?([^`]+)`")
TABLE_RULE = re.compile(r"^\s*=+(\s+=+)+\s*$")


def _role(match: re.Match[str]) -> str:
    target = match.group(1)
    shown = target.rsplit(".", 1)[-1] if match.group(0).count("~") else target
    return f"`{shown}`"


def _fence(lines: list[str], start: int, end: int, lang: str, out: list[str]) -> None:
    indent = re.match(r"\s*", lines[start]).group(0)  # type: ignore[union-attr]
    out.append(f"{indent}```{lang}")
    out.extend(lines[start:end])
    out.append(f"{indent}```")


def markdown_docstring(text: str) -> str:
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(">>>"):
            # A doctest runs until the first blank line.
            end = i
            while end < len(lines) and lines[end].strip():
                end += 1
            _fence(lines, i, end, "pycon", out)
            i = end
        elif TABLE_RULE.match(line):
            # A simple table: three rules (top, under the header, bottom).
            rules, end = 0, i
            while end < len(lines) and rules < 3:
                rules += bool(TABLE_RULE.match(lines[end]))
                end += 1
            _fence(lines, i, end, "text", out)
            i = end
        else:
            out.append(ROLE.sub(_role, line.replace("::", ":") if line.endswith("::") else line))
            i += 1
    return "\n".join(out)


class RstDocstrings(Extension):
    def on_instance(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)
