"""The package's import graph: no circles, and data flowing one way.

Built from the source with ``ast``, so every import counts: at module level, inside functions,
under ``if TYPE_CHECKING:``. An import of ``bytepair.a.b`` is an edge to ``bytepair.a.b`` and,
since Python runs it first, to the package ``bytepair.a``. Edges into the packages that contain
the importing module are not counted: Python has started importing those before the module
runs (every module is inside ``bytepair``, whose ``__init__`` is the public face that imports
the library; ``bytepair.chat.lookalikes`` may import ``bytepair.chat.templates``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "bytepair"


def _module_name(path: Path, root: Path) -> str:
    parts = ["bytepair", *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    if level == 0:
        return target or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, target] if target else base)


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Every module of the package and the package modules it imports."""
    paths = {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    known = set(paths)
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(module, is_package, node.level, node.module)
                names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            for name in names:
                # The module itself and every package above it (each runs on import).
                parts = name.split(".")
                for end in range(1, len(parts) + 1):
                    prefix = ".".join(parts[:end])
                    if prefix in known and not _in(module, prefix):
                        edges.add(prefix)
        graph[module] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (its modules, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def _in(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


GRAPH = import_graph()


def test_the_graph_sees_the_package() -> None:
    assert "bytepair.registry" in GRAPH["bytepair.report.stats"]
    assert "bytepair.encoding" in GRAPH["bytepair.registry"]


def test_no_import_circle() -> None:
    assert find_cycle(GRAPH) is None, " -> ".join(find_cycle(GRAPH) or [])


# bytepair.hub finds a Hub model's files and settings for Encoding.from_pretrained, which calls
# it: it sits below the encodings, with the formats.
@pytest.mark.parametrize("lower", ["bytepair.formats", "bytepair.chat", "bytepair.hub"])
def test_formats_chat_and_hub_never_import_encoding(lower: str) -> None:
    offenders = {
        m: sorted(
            e
            for e in edges
            if _in(
                e, "bytepair.encoding", "bytepair.hf", "bytepair.sentencepiece", "bytepair.registry"
            )
        )
        for m, edges in GRAPH.items()
        if _in(m, lower)
    }
    assert {m: e for m, e in offenders.items() if e} == {}


@pytest.mark.parametrize(
    ("upper", "allowed"),
    [
        # `python -m bytepair` is the command's second entry point.
        ("bytepair.cli", ("bytepair.cli", "bytepair.__main__")),
        ("bytepair.report", ("bytepair.cli", "bytepair.report")),
        ("bytepair.distributed", ("bytepair.distributed",)),
    ],
)
def test_applications_are_not_imported_by_the_library(upper: str, allowed: tuple[str, ...]) -> None:
    offenders = sorted(
        m
        for m, edges in GRAPH.items()
        if not _in(m, *allowed) and any(_in(e, upper) for e in edges)
    )
    assert offenders == []


def test_each_model_is_its_own_type() -> None:
    # The rank model (Encoding) knows nothing of the other models, nor they of each other.
    source = (PACKAGE / "encoding.py").read_text(encoding="utf-8")
    for mark in ("self._hf", "is_pair_mode", "hf_pipeline", "HfPipeline", "SentencePiece"):
        assert mark not in source
    assert not any(
        _in(e, "bytepair.hf", "bytepair.sentencepiece") for e in GRAPH["bytepair.encoding"]
    )
    for model, other in (
        ("bytepair.hf", "bytepair.sentencepiece"),
        ("bytepair.sentencepiece", "bytepair.hf"),
    ):
        offenders = sorted(
            m for m, edges in GRAPH.items() if _in(m, model) and any(_in(e, other) for e in edges)
        )
        assert offenders == []


def test_the_checks_catch_a_circle(tmp_path: Path) -> None:
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "a.py").write_text("def f():\n    from bytepair import b\n")
    (tmp_path / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from bytepair.a import f\n"
    )
    graph = import_graph(tmp_path)
    assert graph["bytepair.a"] == {"bytepair.b"} and graph["bytepair.b"] == {"bytepair.a"}
    assert find_cycle(graph) == ["bytepair.a", "bytepair.b", "bytepair.a"]
