"""``bytepair encode``, ``decode``, ``count`` and ``show``: one text (or a few) at a time."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from bytepair._terminal import use_color
from bytepair.cli.common import (
    TokenizerChoice,
    chosen_tokenizers,
    count_text,
    encode_text,
    fail,
    files_option,
    hint_files,
    note,
    one_line,
    one_tokenizer,
    open_output,
    quiet_option,
    read_inputs,
    read_stdin,
    require_module,
    special_option,
    stdin_is_terminal,
    stdout_is_terminal,
    tokenizer_options,
)
from bytepair.cli.group import cli
from bytepair.encoding import Encoding
from bytepair.report import html_page, load_prices, render_tokens
from bytepair.report.page import DEFAULT_MAX_CHARS
from bytepair.report.prompts import read_text_file
from bytepair.truncate import truncate

truncate_option = click.option(
    "--truncate",
    "max_tokens",
    type=click.IntRange(min=0),
    metavar="N",
    help="Keep the first N tokens of each input (cut at a token boundary, never inside a "
    "character); a note on standard error says how many were cut.",
)


def _tokens(n: int) -> str:
    return f"{n:,} token" + ("" if n == 1 else "s")


def _cut(
    encoding: Encoding,
    text: str,
    source: str,
    max_tokens: int | None,
    allow_special: bool,
    quiet: bool,
) -> tuple[str, list[int]]:
    """The text and ids of one input, cut to ``max_tokens`` if given (with a note)."""
    if max_tokens is None:
        return text, encode_text(encoding, text, allow_special)
    if allow_special:
        cut = truncate(encoding, text, max_tokens, allowed_special="all")
    else:
        cut = truncate(encoding, text, max_tokens, disallowed_special=())
    if cut.truncated:
        inside = ""
        if cut.split_character:
            inside = " (the limit fell inside a character: cut before it)"
        note(
            f"{source}: cut to {_tokens(len(cut.ids))}, {_tokens(cut.dropped_tokens)} "
            f"({len(cut.dropped_text):,} characters) left out{inside}",
            quiet,
        )
    return cut.text, cut.ids


@cli.command()
@click.argument("texts", nargs=-1, metavar="[TEXT]...")
@files_option
@tokenizer_options(multiple=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "npy"]),
    help="text: ids separated by spaces, one line per input; json: a JSON array per line; "
    "npy: a numpy uint32 array (needs -o FILE). Default: from -o's suffix, else text.",
)
@click.option("-o", "--output", metavar="FILE", help="Write the ids to FILE.")
@special_option
@truncate_option
@quiet_option
def encode(
    texts: tuple[str, ...],
    files: tuple[str, ...],
    encodings: tuple[str, ...],
    models: tuple[str, ...],
    tokenizer_files: tuple[str, ...],
    hf_repos: tuple[str, ...],
    pattern: str | None,
    vocab_dir: Path | None,
    fmt: str | None,
    output: str | None,
    allow_special: bool,
    max_tokens: int | None,
    quiet: bool,
) -> None:
    """Turn text into token ids.

    Each TEXT argument, then each -f FILE, is one input; with neither, standard input is.
    """
    hint_files(texts, quiet)
    encoding = one_tokenizer(
        TokenizerChoice.of(encodings, models, tokenizer_files, pattern, vocab_dir, hf_repos)
    )
    inputs = read_inputs(texts, files, "TEXT")
    if fmt is None:
        fmt = "npy" if output is not None and output.endswith(".npy") else "text"
    if fmt == "npy":
        if output is None or output == "-":
            fail("--format npy writes a binary file: give it with -o FILE.npy")
        if len(inputs) != 1:
            fail(f"a .npy file holds one sequence of ids, but there are {len(inputs)} inputs")
        np = require_module("numpy", "writing .npy")
        _, kept = _cut(encoding, inputs[0].text, inputs[0].source, max_tokens, allow_special, quiet)
        ids = np.asarray(kept, dtype=np.uint32)
        with open_output(output, binary=True) as f:
            np.save(f, ids)
        return
    with open_output(output) as out:
        for item in inputs:
            _, ids = _cut(encoding, item.text, item.source, max_tokens, allow_special, quiet)
            out.write((json.dumps(ids) if fmt == "json" else " ".join(map(str, ids))) + "\n")


_ID_SEPARATORS = re.compile(r"[\s,\[\]]+")


def _parse_ids(text: str, where: str) -> list[int]:
    ids = []
    for word in _ID_SEPARATORS.split(text):
        if not word:
            continue
        if not word.isdigit():
            fail(f"{where}: {word!r} is not a token id (ids are integers >= 0)")
        ids.append(int(word))
    return ids


def _id_sequences(ids: Sequence[str], files: Sequence[str]) -> list[list[int]]:
    sequences: list[list[int]] = []
    if ids:
        sequences.append(_parse_ids(" ".join(ids), "arguments"))
    sources: list[tuple[str, str | None]] = [(name, None) for name in files]
    if not ids and not files:
        if stdin_is_terminal():
            fail("no input: give ids as arguments, a file with -f FILE, or pipe them in")
        sources.append(("<stdin>", read_stdin()))
    for name, text in sources:
        if text is None and name == "-":
            name, text = "<stdin>", read_stdin()
        if text is None and name.endswith(".npy"):
            np = require_module("numpy", "reading .npy")
            try:
                array = np.load(name, allow_pickle=False)
            except ValueError as e:
                fail(f"{name}: not a numpy array file ({one_line(e)})")
            if array.ndim != 1 or array.dtype.kind not in "iu":
                fail(f"{name}: expected a 1-D array of integers, got {array.dtype}{array.shape}")
            sequences.append([int(i) for i in array])
            continue
        if text is None:
            text = read_text_file(name)
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                sequences.append(_parse_ids(line, f"{name}:{number}"))
    return sequences


@cli.command()
@click.argument("ids", nargs=-1, metavar="[ID]...")
@files_option
@tokenizer_options(multiple=False)
@click.option(
    "--errors",
    type=click.Choice(["replace", "strict", "ignore", "backslashreplace"]),
    default="replace",
    show_default=True,
    help="What to do with bytes that are not valid UTF-8.",
)
@click.option("-o", "--output", metavar="FILE", help="Write the text to FILE.")
def decode(
    ids: tuple[str, ...],
    files: tuple[str, ...],
    encodings: tuple[str, ...],
    models: tuple[str, ...],
    tokenizer_files: tuple[str, ...],
    hf_repos: tuple[str, ...],
    pattern: str | None,
    vocab_dir: Path | None,
    errors: str,
    output: str | None,
) -> None:
    """Turn token ids back into text.

    Ids come from the arguments ("24912 2375", "24912,2375" or "[24912, 2375]"), or from -f
    FILE or standard input: one sequence per line (as `bytepair encode` writes them, text or
    JSON), or a .npy array. The texts are written one after another, exactly as decoded; on a
    terminal a final newline is added if the text lacks one (so the prompt starts on a line of
    its own), never in a pipe or a file.
    """
    encoding = one_tokenizer(
        TokenizerChoice.of(encodings, models, tokenizer_files, pattern, vocab_dir, hf_repos)
    )
    sequences = _id_sequences(ids, files)
    text = ""
    with open_output(output, binary=True) as out:
        for sequence in sequences:
            bound = encoding.n_vocab
            bad = next((i for i in sequence if i >= bound), None)
            if bad is not None:
                fail(f"{bad} is not a token id of {encoding.name} (ids go up to {bound - 1})")
            data = encoding.decode_bytes(sequence)
            try:
                text = data.decode("utf-8", errors=errors)
            except UnicodeDecodeError as e:
                fail(
                    f"the ids decode to bytes that are not UTF-8 (at byte {e.start}); "
                    "use --errors replace"
                )
            out.write(text.encode("utf-8", "surrogateescape"))
        # On a terminal the shell's prompt would follow the text on its last line.
        if output in (None, "-") and stdout_is_terminal() and text and not text.endswith("\n"):
            out.write(b"\n")


@cli.command()
@click.argument("texts", nargs=-1, metavar="[TEXT]...")
@files_option
@tokenizer_options(multiple=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: {encoding, inputs: [{source, tokens}], total}.",
)
@special_option
@quiet_option
def count(
    texts: tuple[str, ...],
    files: tuple[str, ...],
    encodings: tuple[str, ...],
    models: tuple[str, ...],
    tokenizer_files: tuple[str, ...],
    hf_repos: tuple[str, ...],
    pattern: str | None,
    vocab_dir: Path | None,
    fmt: str,
    allow_special: bool,
    quiet: bool,
) -> None:
    """Count the tokens of texts and files.

    One input prints its count alone; several print one line each (count, then what was
    counted) and a total. Each TEXT argument, then each -f FILE, is one input; with neither,
    standard input is. For prompt files (JSONL, CSV, folders) and costs, see `bytepair report`.
    """
    hint_files(texts, quiet)
    encoding = one_tokenizer(
        TokenizerChoice.of(encodings, models, tokenizer_files, pattern, vocab_dir, hf_repos)
    )
    inputs = read_inputs(texts, files, "TEXT")
    counts = [count_text(encoding, item.text, allow_special) for item in inputs]
    total = sum(counts)
    if fmt == "json":
        data = {
            "encoding": encoding.name,
            "inputs": [
                {"source": i.source, "tokens": n} for i, n in zip(inputs, counts, strict=True)
            ],
            "total": total,
        }
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    if len(inputs) == 1:
        click.echo(str(total))
        return
    width = len(str(total))
    for item, n in zip(inputs, counts, strict=True):
        click.echo(f"{n:>{width}}  {item.source}")
    click.echo(f"{total:>{width}}  total ({encoding.name})")


@cli.command()
@click.argument("texts", nargs=-1, metavar="[TEXT]...")
@files_option
@tokenizer_options(multiple=True)
@click.option(
    "--color/--no-color",
    default=None,
    help="Colour the tokens (default: on a terminal, unless NO_COLOR is set or TERM=dumb); "
    "without colour each token is shown in [brackets].",
)
@click.option("--table/--no-table", default=True, help="List each token with its id.")
@click.option(
    "--html",
    "html_file",
    metavar="FILE",
    help="Also write the view as a self-contained web page to FILE (tokenizers side by side).",
)
@click.option(
    "--max-chars",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_CHARS,
    show_default=True,
    metavar="N",
    help="The web page shows the first N characters of the text (and says what it left out).",
)
@special_option
@truncate_option
@quiet_option
def show(
    texts: tuple[str, ...],
    files: tuple[str, ...],
    encodings: tuple[str, ...],
    models: tuple[str, ...],
    tokenizer_files: tuple[str, ...],
    hf_repos: tuple[str, ...],
    pattern: str | None,
    vocab_dir: Path | None,
    color: bool | None,
    table: bool,
    html_file: str | None,
    max_chars: int,
    allow_special: bool,
    max_tokens: int | None,
    quiet: bool,
) -> None:
    """Show how a text is cut into tokens, with their ids.

    The TEXT words make one text (joined by spaces); -f FILE contents follow on new lines;
    with neither, standard input is read.
    Tokens that are not whole characters (part of an emoji, say) are shown by their byte
    values, as ⟨f0 9f⟩. Give several tokenizers to compare them:

    \b
      bytepair show -e cl100k_base -e o200k_base "How many r's are in strawberry?"
    """
    hint_files(texts, quiet)
    tokenizers = chosen_tokenizers(
        TokenizerChoice.of(encodings, models, tokenizer_files, pattern, vocab_dir, hf_repos)
    )
    # Words given as arguments make one text (`bytepair show How are you`); files follow.
    parts = [" ".join(texts)] if texts else []
    if files or not texts:
        parts += [item.text for item in read_inputs((), files, "TEXT")]
    text = "\n".join(parts)
    if max_tokens is not None:
        # Several tokenizers: each would cut elsewhere; the first one's budget decides.
        first = tokenizers[0].encoding
        text, _ = _cut(first, text, f"the text ({first.name})", max_tokens, allow_special, quiet)
    color = use_color(sys.stdout, color)
    views = [
        render_tokens(t.encoding, text, color=color, table=table, allow_special=allow_special)
        for t in tokenizers
    ]
    click.echo("\n\n".join(views), color=color)
    if html_file is not None:
        page = html_page(
            text,
            [t.encoding for t in tokenizers],
            allow_special=allow_special,
            max_chars=max_chars,
            prices=load_prices(None),
        )
        with open_output(html_file) as f:
            f.write(page)
        if len(text) > max_chars:
            note(
                f"{html_file} shows the first {max_chars:,} of {len(text):,} characters "
                f"({len(text) - max_chars:,} left out; raise the limit with --max-chars)",
                quiet,
            )
