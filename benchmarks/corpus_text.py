"""The benchmarks' text: the shared corpora cut into paragraphs, and runs of fresh paragraphs.

A paragraph is a block between blank lines; a file without blank lines (a list of sentences,
one per line) is cut into blocks of whole lines. The files of a category are interleaved, so
that every run of paragraphs mixes all of them (for multilingual text, all the languages).
"""

from __future__ import annotations

from encode_libraries import SHARED

CORPUS = SHARED / "corpus"


# A file without blank lines (the tatoeba files: one sentence per line) is cut into paragraphs
# of whole lines of about this many bytes, the median paragraph of the files that have them.
LINES_PER_PARAGRAPH_BYTES = 1000


def paragraphs(category: str) -> list[str]:
    """Every paragraph (blank-line separated) of a corpus category, files interleaved, so that
    every run of paragraphs mixes all the files (for multilingual text, all the languages)."""
    per_file = []
    for path in sorted((CORPUS / category).glob("*")):
        text = path.read_text(encoding="utf-8")
        if "\n\n" in text:
            per_file.append([p for p in text.split("\n\n") if p.strip()])
        else:
            per_file.append(line_paragraphs(text))
    out: list[str] = []
    for i in range(max(len(f) for f in per_file)):
        out.extend(f[i] for f in per_file if i < len(f))
    return out


# What the tables say a paragraph is.
PARAGRAPHS = (
    "paragraphs (blocks between blank lines; a file of one sentence per line is cut into blocks "
    "of whole lines of about 1,000 bytes), the files of a kind interleaved so that every "
    "repetition mixes all of them"
)


def line_paragraphs(text: str) -> list[str]:
    """``text``'s lines in consecutive groups of about ``LINES_PER_PARAGRAPH_BYTES`` bytes."""
    out, current, size = [], [], 0
    for line in text.split("\n"):
        current.append(line)
        size += len(line.encode("utf-8")) + 1
        if size >= LINES_PER_PARAGRAPH_BYTES:
            out.append("\n".join(current))
            current, size = [], 0
    if any(line.strip() for line in current):
        out.append("\n".join(current))
    return out


def prose() -> str:
    """The English prose the worst-case measure divides by: 3000 paragraphs in one text."""
    return "\n\n".join(paragraphs("english")[:3000])


def slices(paras: list[str], reps: int, target_bytes: int) -> list[list[str]]:
    """``reps`` disjoint runs of paragraphs of about ``target_bytes`` each."""
    out, current, size = [], [], 0
    for p in paras:
        current.append(p)
        size += len(p.encode("utf-8"))
        if size >= target_bytes:
            out.append(current)
            current, size = [], 0
            if len(out) == reps:
                break
    if len(out) < reps and current:
        out.append(current)
    return out


def first_quarter(docs: list[str]) -> list[str]:
    """The first quarter of the text of ``docs``, the last paragraph cut where it runs out.

    A quarter of the paragraphs would be nothing when the warm-up is one long document (an
    edge file of one long run).
    """
    budget = sum(len(d) for d in docs) // 4
    out = []
    for d in docs:
        if budget <= 0:
            break
        out.append(d[:budget])
        budget -= len(d)
    return out
