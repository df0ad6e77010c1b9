"""The API reference documents every public method of ``Encoding``, the compiled ones included.

mkdocstrings reads the package statically, so the compiled methods' documentation reaches the
page only through ``_core.pyi``: its docstrings must say what the compiled ones say.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import griffe  # the loader mkdocstrings reads the package with

import bytepair
from bytepair import _core

STUB = Path(bytepair.__file__).with_name("_core.pyi")


def _stub_docstrings() -> dict[str, str]:
    """``Class.method`` (or ``Class``) -> docstring, for what the stub documents."""
    docs: dict[str, str] = {}
    for node in ast.parse(STUB.read_text(encoding="utf-8")).body:
        if not isinstance(node, ast.ClassDef):
            continue
        if (doc := ast.get_docstring(node)) is not None:
            docs[node.name] = doc
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and (doc := ast.get_docstring(item)) is not None:
                docs[f"{node.name}.{item.name}"] = doc
    return docs


def test_the_stub_says_what_the_compiled_module_says() -> None:
    docs = _stub_docstrings()
    assert "EncodingBase.encode" in docs and "EncodingBase.encode_ordinary" in docs
    for path, doc in docs.items():
        if "." not in path:
            continue  # a class's stub docstring may summarise; its methods' must match
        owner, name = path.split(".")
        compiled = inspect.getdoc(getattr(getattr(_core, owner), name))
        assert compiled == doc, f"_core.pyi's docstring of {path} differs from the compiled one"


def test_every_public_encoding_method_reaches_the_reference() -> None:
    where = str(Path(bytepair.__file__).parent.parent)
    package = griffe.load("bytepair", search_paths=[where], allow_inspection=False)
    members = package["Encoding"].all_members
    public = [n for n in dir(bytepair.Encoding) if not n.startswith("_")]
    undocumented = []
    for name in public:
        member = members.get(name)
        target = member.final_target if member is not None and member.is_alias else member
        # A member declared only for type checkers is left off the page (and hides the one it
        # declares), so it counts as missing.
        if target is None or not target.docstring or not target.runtime:
            undocumented.append(name)
    assert not undocumented, f"left off the API reference: {undocumented}"
