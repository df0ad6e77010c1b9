"""``bytepair train`` and ``convert``: vocabulary files out."""

from __future__ import annotations

import os
import time
from pathlib import Path

import click

from bytepair.cli.common import fail
from bytepair.cli.group import cli
from bytepair.formats import SaveFormat
from bytepair.formats import convert as convert_files
from bytepair.formats.targets import check_writable, save_targets
from bytepair.patterns import resolve_pattern
from bytepair.train import train as train_encoding

_SAVE_FORMATS = ["tiktoken", "hf", "gpt2"]
# A SentencePiece .model is written only by converting one (training makes byte-level BPE).
_CONVERT_FORMATS = [*_SAVE_FORMATS, "sentencepiece"]


def _save_format(name: str) -> SaveFormat:
    if name == "hf":
        return "hf"
    if name == "gpt2":
        return "gpt2"
    if name == "sentencepiece":
        return "sentencepiece"
    return "tiktoken"


def _format_from_suffix(path: str) -> str:
    if path.endswith((".tiktoken", ".model")):
        return "tiktoken"
    if path.endswith(".json"):
        return "hf"
    fail(
        f"cannot tell the format of {path!r} from its name: give --format {'|'.join(_SAVE_FORMATS)}"
    )


@cli.command(short_help="Learn a vocabulary from text files.")
@click.argument("files", nargs=-1, required=True, metavar="FILES...")
@click.option(
    "--vocab-size",
    type=click.IntRange(min=256),
    required=True,
    metavar="N",
    help="Ordinary tokens wanted: the 256 bytes plus N - 256 merges.",
)
@click.option(
    "--pattern",
    default="o200k",
    show_default=True,
    metavar="NAME|REGEX",
    help="Pre-tokenizer pattern: o200k, cl100k, gpt2, llama3, qwen2, ... or a regex.",
)
@click.option("-o", "--output", required=True, metavar="OUT", help="Where to write the vocabulary.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(_SAVE_FORMATS),
    help="tiktoken (a .tiktoken file; it stores no pattern), hf (a tokenizer.json) or gpt2 "
    "(encoder.json + vocab.bpe in the folder OUT). Default: from OUT's suffix (.tiktoken, "
    ".json).",
)
@click.option(
    "--special",
    multiple=True,
    metavar="TOKEN",
    help="A special token, given the next id after the merges. Repeatable.",
)
@click.option(
    "--min-frequency",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    metavar="N",
    help="Stop before the first merge of a pair seen fewer than N times.",
)
@click.option("--name", metavar="NAME", help="The encoding's name (default: OUT's stem).")
@click.option("--threads", type=click.IntRange(min=1), metavar="N", help="Threads for counting.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars, no summary.")
def train(
    files: tuple[str, ...],
    vocab_size: int,
    pattern: str,
    output: str,
    fmt: str | None,
    special: tuple[str, ...],
    min_frequency: int,
    name: str | None,
    threads: int | None,
    quiet: bool,
) -> None:
    """Learn a byte-level BPE vocabulary from text files (globs work: 'data/**/*.txt').

    \b
      bytepair train corpus/*.txt --vocab-size 8192 --pattern o200k -o mine.tiktoken
    """

    fmt = fmt or _format_from_suffix(output)
    for path in files:
        if not any(c in path for c in "*?[") and not os.path.isfile(path):
            fail(
                f"{path}: no such file"
                + (" (a folder: pass a glob)" if os.path.isdir(path) else "")
            )
    encoding_name = name or Path(output).name.split(".")[0] or "trained"
    check_writable(save_targets(encoding_name, output, fmt))  # before the work, not after
    started = time.perf_counter()
    encoding = train_encoding(
        files=list(files),
        vocab_size=vocab_size,
        pattern=pattern,
        special_tokens=list(special),
        min_frequency=min_frequency,
        show_progress=not quiet,
        num_threads=threads,
        name=encoding_name,
    )
    written = encoding.save(output, format=_save_format(fmt))
    if not quiet:
        n_ordinary = encoding.n_vocab - len(special)
        short = (
            f", fewer than {vocab_size:,}: no pair left to merge"
            + (f" {min_frequency} times" if min_frequency > 1 else "")
            if n_ordinary < vocab_size
            else ""
        )
        click.echo(
            f"trained {encoding_name!r}: {n_ordinary:,} tokens ({n_ordinary - 256:,} merges"
            f"{short}){f' + {len(special)} special' if special else ''} in "
            f"{time.perf_counter() - started:.1f} s; wrote {', '.join(map(str, written))} "
            f"({fmt})",
            err=True,
        )
        if fmt == "tiktoken":
            click.echo(
                f"note: a .tiktoken file stores no pattern: load it with "
                f"-t {output} --pattern {pattern!r}",
                err=True,
            )


@cli.command(short_help="Convert a vocabulary file to another format.")
@click.argument("source", metavar="IN")
@click.argument("target", metavar="OUT")
@click.option(
    "--to",
    "to",
    type=click.Choice(_CONVERT_FORMATS),
    required=True,
    help="The format to write.",
)
@click.option(
    "--pattern",
    metavar="NAME|REGEX",
    help="Pattern of an input that does not store one (.tiktoken).",
)
@click.option("-q", "--quiet", is_flag=True, help="Do not list the files written.")
def convert(source: str, target: str, to: str, pattern: str | None, quiet: bool) -> None:
    """Convert a vocabulary to another format.

    IN is any vocabulary bytepair reads (a .tiktoken file, a tokenizer.json, GPT-2's
    encoder.json + vocab.bpe, Hugging Face's vocab.json + merges.txt, Mistral's tekken.json, a
    SentencePiece .model, or their folder).
    --to tiktoken writes a .tiktoken file, hf a tokenizer.json, gpt2 encoder.json + vocab.bpe in
    the folder OUT, sentencepiece a .model (from a .model only).
    """
    if not os.path.exists(source):
        fail(f"{source}: no such file")

    try:
        written = convert_files(
            source,
            target,
            to=_save_format(to),
            pat_str=None if pattern is None else resolve_pattern(pattern),
        )
    except ValueError as e:
        if pattern is None and "pattern" in str(e):
            fail(
                f"{source}: the file stores no pre-tokenizer pattern, which {to} needs; "
                "pass --pattern (o200k, cl100k, gpt2, llama3, ... or a regex)"
            )
        raise
    if not quiet:
        click.echo(f"wrote {', '.join(map(str, written))}", err=True)
