"""What the benchmark scripts share: writing their section of BENCHMARKS.md."""

from __future__ import annotations

from pathlib import Path

from bytepair import registry

ROOT = Path(__file__).resolve().parent.parent


def write_section(report: str, marker: str) -> None:
    """Replace (or append) the ``<!-- marker:begin/end -->`` block of BENCHMARKS.md, atomically."""
    path = ROOT / "BENCHMARKS.md"
    begin, end = f"<!-- {marker}:begin -->", f"<!-- {marker}:end -->"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    block = f"{begin}\n{report}{end}"
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    registry.write_atomic(path, text.encode("utf-8"))
