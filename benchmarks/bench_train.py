"""Trainer speed and memory, side by side: bytepair, Hugging Face tokenizers, rustbpe, bpeasy,
gigatoken, gigabpe and ffbpe.

Each trainer runs in a fresh subprocess (so peak RSS is its own) on the same documents (the
paragraphs of the shared english + code corpora, cut to the size asked), with the cl100k
pattern and two threads where the library takes a thread count. Compression is bytes per token
of held-out text (multilingual and edge-free english the trainers did not see), encoded with
each trained vocabulary through the same rank rule. Results go to ``BENCHMARKS.md`` (``--write``).

    python benchmarks/bench_train.py --write
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("BYTEPAIR_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus"

CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, {bench_dir!r})
from bench_train import documents, held_out
lib, mb, vocab_size = {lib!r}, {mb!r}, {vocab_size!r}
docs = documents(mb)
from bytepair import patterns
pat = patterns.CL100K
start = time.perf_counter()
if lib == "bytepair":
    import bytepair
    enc = bytepair.train(
        docs, vocab_size=vocab_size, pattern=pat, num_threads=2, show_progress=False
    )
    ranks = enc._mergeable_ranks
elif lib == "rustbpe":
    import rustbpe
    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(iter(docs), vocab_size, pattern=pat)
    ranks = dict(tok.get_mergeable_ranks())
elif lib == "bpeasy":
    import bpeasy
    ranks = bpeasy.train_bpe(iter(docs), pat, 128, vocab_size)
elif lib == "gigatoken":
    # gigatoken takes one buffer and a separator; its pre-tokenizer is GPT-4's (cl100k).
    from gigatoken import gigatoken_rs
    blob = "\n\n".join(docs).encode()
    start = time.perf_counter()
    vocab = gigatoken_rs.train_bpe(blob, vocab_size, [], separator=b"\n\n")[0]
    ranks = {{token: i for i, token in vocab.items()}}
elif lib == "gigabpe":
    # Files only, and its own fixed GPT-2 split ("bytelevel"; no pattern argument): the
    # documents go to a file first, untimed; its vocabulary is Hugging Face's byte-level
    # strings, holding only the bytes the corpus has (the others are added, after the clock,
    # so that held-out text can be encoded).
    import gigabpe, tempfile
    from bytepair.bytes_unicode import decode_chars
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write("\n\n".join(docs))
    start = time.perf_counter()
    vocab, _ = gigabpe.train_bpe(
        [f.name], vocab_size, special_tokens=[], pretokenizer="bytelevel", threads=2
    )
    ranks = {{decode_chars(t): i for t, i in vocab.items()}}
    seconds, tokens = time.perf_counter() - start, len(ranks)
    for b in range(256):
        ranks.setdefault(bytes([b]), max(ranks.values()) + 1)
elif lib == "ffbpe":
    # Its pattern-driven word counter, then its byte-level trainer (merges equal rustbpe's).
    import ffbpe
    counter = ffbpe.PreTokenizer([], pat_str=pat).word_counter()
    counter.add_batch(docs)
    trainer = ffbpe.BpeTrainer([], unit="byte")
    trainer.add_word_counter(counter)
    trainer.train(vocab_size)
    ranks = dict(trainer.vocab)
elif lib == "hf":
    os.environ["RAYON_NUM_THREADS"] = "2"
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers
    from bytepair.bytes_unicode import decode_chars
    # HF's regex engine reads possessive quantifiers differently (ANCHORS.md): drop them.
    hf_pat = pat.replace("{{1,3}}+", "{{1,3}}").replace("++", "+")
    hf_pat = hf_pat.replace("?+", "?").replace("*+", "*")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(hf_pat), "isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
    tok.train_from_iterator(docs, trainer)
    ranks = {{decode_chars(t): i for t, i in tok.get_vocab().items()}}
else:
    raise SystemExit(f"unknown library {{lib!r}}")
if lib != "gigabpe":
    seconds, tokens = time.perf_counter() - start, len(ranks)
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
import bytepair
enc = bytepair.Encoding("t", pat_str=pat, mergeable_ranks=ranks, special_tokens={{}})
text = held_out()
bpt = len(text.encode()) / len(enc.encode_ordinary(text))
row = {{"seconds": seconds, "peak_mb": peak_mb, "tokens": tokens, "bytes/token": bpt}}
print(json.dumps(row))
"""


def documents(mb: float) -> list[str]:
    """Paragraphs of english + code, interleaved, up to ``mb`` megabytes."""
    per_file = []
    for category in ("english", "code"):
        for path in sorted((CORPUS / category).glob("*")):
            per_file.append(path.read_text(encoding="utf-8").split("\n\n"))
    out: list[str] = []
    size, limit = 0, int(mb * 1e6)
    for i in range(max(len(f) for f in per_file)):
        for f in per_file:
            if i < len(f) and size < limit:
                out.append(f[i])
                size += len(f[i].encode())
    return out


def held_out() -> str:
    parts = [
        p.read_text(encoding="utf-8")[:200_000] for p in sorted(CORPUS.glob("multilingual/wiki*"))
    ]
    return "\n".join(parts)


def run(lib: str, mb: float, vocab_size: int) -> dict[str, object]:
    code = CHILD.format(bench_dir=str(Path(__file__).parent), lib=lib, mb=mb, vocab_size=vocab_size)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        if "ModuleNotFoundError" in last:
            return {"error": f"not installed ({last.rsplit(' ', 1)[-1]})"}
        return {"error": last[:120]}
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def table(rows: list[dict[str, object]]) -> str:
    columns = list(dict.fromkeys(k for r in rows for k in r))
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        cells = [
            f"{v:.2f}" if isinstance(v, float) else str(v) for v in (r.get(c, "") for c in columns)
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=25.0)
    parser.add_argument("--libraries", default="bytepair,rustbpe,bpeasy,gigatoken,gigabpe,ffbpe,hf")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    libs = args.libraries.split(",")
    rows = []
    for vocab_size in (8192, 32768):
        for lib in libs:
            rows.append(
                {
                    "MB": args.mb,
                    "vocab": vocab_size,
                    "library": lib,
                    **run(lib, args.mb, vocab_size),
                }
            )
            print(rows[-1], file=sys.stderr)
    scaling = []
    for mb in (5.0, 10.0, args.mb):
        for vocab_size in (8192, 32768):
            scaling.append({"MB": mb, "vocab": vocab_size, **run("bytepair", mb, vocab_size)})
            print(scaling[-1], file=sys.stderr)
    report = (
        f"Run {time.strftime('%Y-%m-%d %H:%M')} on {os.cpu_count()} cores; "
        f"`python benchmarks/bench_train.py --mb {args.mb}`. Wall time of training only (the "
        "documents are in memory; gigabpe reads them from a file written before its clock "
        "starts, and splits with its fixed GPT-2 pattern, not cl100k's), peak RSS of the whole "
        "process, bytes/token on held-out multilingual Wikipedia text.\n\n### Side by side\n\n"
        + table(rows)
        + "\n### bytepair as the corpus and the vocabulary grow\n\n"
        + table(scaling)
    )
    print(report)
    if args.write:
        from _report import write_section

        write_section(report, marker="train")


if __name__ == "__main__":
    main()
