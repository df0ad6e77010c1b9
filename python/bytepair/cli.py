"""The ``bytepair`` command: count, encode, decode, show, report, train and convert.

Every subcommand picks its tokenizer the same way: ``-e NAME`` (an encoding: ``o200k_base``),
``-m MODEL`` (a model: ``gpt-4o``) or ``-t FILE`` (a vocabulary file); ``o200k_base`` when none
is given. Vocabulary files for names are found as :func:`bytepair.get_encoding` finds them
(``--vocab-dir``, ``BYTEPAIR_VOCAB_DIR``, the cache). A mistake in what the user gave (an
unknown name, a missing file, a bad line of JSON) is reported on one line of standard error,
with a non-zero exit status, never with a traceback.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from bytepair import registry
from bytepair.encoding import Encoding
from bytepair.patterns import resolve_pattern
from bytepair.report import (
    MissingExtraError,
    Prompt,
    Tokenizer,
    html_page,
    load_prices,
    load_prompts,
    render_tokens,
    resolve_tokenizer,
    token_report,
)
from bytepair.report.prompts import IN_FOLDERS, read_text_file

if TYPE_CHECKING:
    from bytepair.formats import SaveFormat

__all__ = ["cli", "main"]

DEFAULT_ENCODING = "o200k_base"

F = TypeVar("F", bound=Callable[..., Any])


# ---- errors: one line, no traceback ---------------------------------------------------------

# Errors that come from what the user gave: a missing file, an unknown name, bad data. They are
# shown as one line; anything else is a bug and keeps its traceback.
_USER_ERRORS = (ValueError, KeyError, OSError, MissingExtraError)


def _one_line(error: BaseException) -> str:
    if isinstance(error, KeyError) and error.args:
        message = str(error.args[0])
    elif isinstance(error, OSError) and error.strerror and error.filename:
        message = f"{error.filename}: {error.strerror}"
    else:
        message = str(error) or type(error).__name__
    return " ".join(line.strip() for line in message.splitlines() if line.strip())


def fail(message: str) -> NoReturn:
    """Stop with a one-line error message (exit status 1)."""
    raise click.ClickException(message)


class _UsageError(click.ClickException):
    """A usage error shown on one line, with a pointer to the command's help."""

    exit_code = 2


def _usage_error(error: click.UsageError) -> _UsageError:
    message = " ".join(error.format_message().split())
    if error.ctx is not None:
        message += f" (see '{error.ctx.command_path} --help')"
    return _UsageError(message)


class _Command(click.Command):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise  # `bytepair encode ... | head`: click ends quietly
        except _USER_ERRORS as e:
            raise click.ClickException(_one_line(e)) from None


class _Group(click.Group):
    command_class = _Command

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as e:
            if type(e).__name__ == "NoArgsIsHelpError":
                raise  # prints the help, as it should
            raise _usage_error(e) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as e:
            if type(e).__name__ == "NoArgsIsHelpError":
                raise
            raise _usage_error(e) from None


# ---- choosing tokenizers ----------------------------------------------------------------------


def _tokenizer_options(multiple: bool) -> Callable[[F], F]:
    more = " Repeatable (shown in the order -e, -m, -t)." if multiple else ""

    def decorate(f: F) -> F:
        options = [
            click.option(
                "-e",
                "--encoding",
                "encodings",
                multiple=multiple,
                metavar="NAME",
                help=f"Encoding by name: {', '.join(registry.list_encoding_names())} "
                f"(default: {DEFAULT_ENCODING}).{more}",
            ),
            click.option(
                "-m",
                "--model",
                "models",
                multiple=multiple,
                metavar="MODEL",
                help=f"The encoding of a model, e.g. gpt-4o, gpt-4, llama-3.1.{more}",
            ),
            click.option(
                "-t",
                "--tokenizer",
                "tokenizer_files",
                multiple=multiple,
                metavar="FILE",
                help="A vocabulary file or folder: .tiktoken, tokenizer.json, encoder.json + "
                f"vocab.bpe, vocab.json + merges.txt.{more}",
            ),
            click.option(
                "--pattern",
                metavar="NAME|REGEX",
                help="Pre-tokenizer pattern for a -t file that does not store one "
                "(.tiktoken): o200k, cl100k, gpt2, llama3, ... or a regex.",
            ),
            click.option(
                "--vocab-dir",
                type=click.Path(file_okay=False, path_type=Path),
                metavar="DIR",
                help="Folder with vocabulary files (searched before BYTEPAIR_VOCAB_DIR).",
            ),
        ]
        for option in reversed(options):
            f = option(f)
        return f

    return decorate


@dataclass(frozen=True)
class _Choice:
    encodings: tuple[str, ...]
    models: tuple[str, ...]
    files: tuple[str, ...]
    pattern: str | None
    vocab_dir: Path | None

    @staticmethod
    def of(
        encodings: str | tuple[str, ...] | None,
        models: str | tuple[str, ...] | None,
        tokenizer_files: str | tuple[str, ...] | None,
        pattern: str | None,
        vocab_dir: Path | None,
    ) -> _Choice:
        def many(value: str | tuple[str, ...] | None) -> tuple[str, ...]:
            if value is None:
                return ()
            return (value,) if isinstance(value, str) else tuple(value)

        return _Choice(many(encodings), many(models), many(tokenizer_files), pattern, vocab_dir)


def load_tokenizer_file(path: str, pattern: str | None = None) -> Encoding:
    """An encoding from a vocabulary file or folder, in any format :mod:`bytepair.formats`
    reads (recognised by content).

    A tiktoken file holds no pre-tokenizer pattern: the well-known ones are recognised by their
    sha256, any other needs ``pattern`` (a name such as ``o200k`` or a regex).
    """
    if not os.path.exists(path):
        fail(f"{path}: no such tokenizer file")
    try:
        return Encoding.from_file(
            path, pat_str=None if pattern is None else resolve_pattern(pattern)
        )
    except ValueError as e:
        if pattern is None and "pattern" in str(e):
            fail(
                f"{path}: the file stores no pre-tokenizer pattern; pass --pattern "
                "(o200k, cl100k, gpt2, llama3, ... or a regex)"
            )
        raise


def _resolve(name: str, vocab_dir: Path | None) -> Tokenizer:
    try:
        return resolve_tokenizer(name, vocab_dir=vocab_dir)
    except FileNotFoundError as e:
        fail(_one_line(e))


def _tokenizers(choice: _Choice) -> list[Tokenizer]:
    """The tokenizers chosen with -e/-m/-t (o200k_base when none), in that order."""
    found: list[Tokenizer] = []
    for name in choice.encodings:
        if name not in registry.ENCODINGS:
            fail(
                f"unknown encoding {name!r}; known encodings: "
                f"{', '.join(registry.list_encoding_names())} (for a model use -m)"
            )
        found.append(_resolve(name, choice.vocab_dir))
    for model in choice.models:
        try:
            registry.encoding_name_for_model(model)
        except KeyError:
            fail(
                f"unknown model {model!r}; give its encoding with -e "
                f"({', '.join(registry.list_encoding_names())})"
            )
        found.append(_resolve(model, choice.vocab_dir))
    for path in choice.files:
        encoding = load_tokenizer_file(path, choice.pattern)
        found.append(Tokenizer(encoding.name, encoding))
    if choice.pattern is not None and not choice.files:
        fail("--pattern applies to a tokenizer file: use it with -t FILE")
    if not found:
        found.append(_resolve(DEFAULT_ENCODING, choice.vocab_dir))
    return found


def _one_tokenizer(choice: _Choice) -> Encoding:
    chosen = len(choice.encodings) + len(choice.models) + len(choice.files)
    if chosen > 1:
        fail("give one tokenizer: -e NAME, -m MODEL or -t FILE")
    return _tokenizers(choice)[0].encoding


# ---- inputs -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Input:
    source: str
    text: str


def _read_stdin() -> str:
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        fail(f"standard input: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})")


def _stdin_is_terminal() -> bool:
    return sys.stdin is not None and sys.stdin.isatty()


def _label(text: str, number: int) -> str:
    short = text if len(text) <= 40 else text[:37] + "..."
    return json.dumps(short, ensure_ascii=False) if short else f"text {number}"


def _inputs(texts: Sequence[str], files: Sequence[str], what: str) -> list[_Input]:
    """Texts from arguments, then files ('-' is standard input); standard input if neither."""
    inputs = [_Input(_label(t, i + 1), t) for i, t in enumerate(texts)]
    for name in files:
        if name == "-":
            inputs.append(_Input("<stdin>", _read_stdin()))
        else:
            inputs.append(_Input(name, read_text_file(name)))
    if not inputs:
        if _stdin_is_terminal():
            fail(f"no input: give {what} as arguments, files with -f FILE, or pipe text in")
        inputs.append(_Input("<stdin>", _read_stdin()))
    return inputs


def _hint_files(texts: Sequence[str]) -> None:
    for text in texts:
        if text and len(text) < 4096 and "\n" not in text and os.path.isfile(text):
            click.echo(f"note: {text!r} is taken as text; to read the file use -f {text}", err=True)


_special_option = click.option(
    "--allow-special",
    is_flag=True,
    help="Text that spells a special token (<|endoftext|>) becomes that token; by default it "
    "is ordinary text.",
)
_files_option = click.option(
    "-f",
    "--file",
    "files",
    multiple=True,
    metavar="FILE",
    help="Read input from FILE (UTF-8; '-' is standard input). Repeatable.",
)


def _encode(encoding: Encoding, text: str, allow_special: bool) -> list[int]:
    if allow_special:
        return encoding.encode(text, allowed_special="all")
    return encoding.encode(text, disallowed_special=())


def _count(encoding: Encoding, text: str, allow_special: bool) -> int:
    if allow_special:
        return encoding.count(text, allowed_special="all")
    return encoding.count(text, disallowed_special=())


def _require(module: str, why: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        fail(f"{why} needs {module}: pip install {module} (or 'bytepair[report]')")


@contextmanager
def _output(path: str | None, binary: bool = False) -> Iterator[Any]:
    """A stream for the result: standard output, or the file ``path``."""
    if path is None or path == "-":
        yield sys.stdout.buffer if binary else sys.stdout
        return
    try:
        # Opened here, not in the with below, so that only the open's failure is reported as
        # "cannot write" (an OSError from the body is the body's).
        f = open(path, "wb") if binary else open(path, "w", encoding="utf-8")  # noqa: SIM115
    except OSError as e:
        fail(f"{path}: cannot write: {e.strerror or e}")
    with f:
        yield f


# ---- the command group --------------------------------------------------------------------


@click.group(
    "bytepair",
    cls=_Group,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="bytepair", prog_name="bytepair")
def cli() -> None:
    """Byte-level BPE tokenizers: count, encode, decode, show, report, train, convert.

    \b
    Examples:
      bytepair count "How many r's are in strawberry?"
      bytepair show -e cl100k_base -e o200k_base strawberry
      bytepair report -m gpt-4o -m gpt-4 evals.jsonl --output-tokens 200
    """


@cli.command()
@click.argument("texts", nargs=-1, metavar="[TEXT]...")
@_files_option
@_tokenizer_options(multiple=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "npy"]),
    help="text: ids separated by spaces, one line per input; json: a JSON array per line; "
    "npy: a numpy uint32 array (needs -o FILE). Default: from -o's suffix, else text.",
)
@click.option("-o", "--output", metavar="FILE", help="Write the ids to FILE.")
@_special_option
def encode(
    texts: tuple[str, ...],
    files: tuple[str, ...],
    encodings: str | None,
    models: str | None,
    tokenizer_files: str | None,
    pattern: str | None,
    vocab_dir: Path | None,
    fmt: str | None,
    output: str | None,
    allow_special: bool,
) -> None:
    """Turn text into token ids.

    Each TEXT argument, then each -f FILE, is one input; with neither, standard input is.
    """
    _hint_files(texts)
    encoding = _one_tokenizer(_Choice.of(encodings, models, tokenizer_files, pattern, vocab_dir))
    inputs = _inputs(texts, files, "TEXT")
    if fmt is None:
        fmt = "npy" if output is not None and output.endswith(".npy") else "text"
    if fmt == "npy":
        if output is None or output == "-":
            fail("--format npy writes a binary file: give it with -o FILE.npy")
        if len(inputs) != 1:
            fail(f"a .npy file holds one sequence of ids, but there are {len(inputs)} inputs")
        np = _require("numpy", "writing .npy")
        ids = np.asarray(_encode(encoding, inputs[0].text, allow_special), dtype=np.uint32)
        with _output(output, binary=True) as f:
            np.save(f, ids)
        return
    with _output(output) as out:
        for item in inputs:
            ids = _encode(encoding, item.text, allow_special)
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
        if _stdin_is_terminal():
            fail("no input: give ids as arguments, a file with -f FILE, or pipe them in")
        sources.append(("<stdin>", _read_stdin()))
    for name, text in sources:
        if text is None and name == "-":
            name, text = "<stdin>", _read_stdin()
        if text is None and name.endswith(".npy"):
            np = _require("numpy", "reading .npy")
            try:
                array = np.load(name, allow_pickle=False)
            except ValueError as e:
                fail(f"{name}: not a numpy array file ({_one_line(e)})")
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
@_files_option
@_tokenizer_options(multiple=False)
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
    encodings: str | None,
    models: str | None,
    tokenizer_files: str | None,
    pattern: str | None,
    vocab_dir: Path | None,
    errors: str,
    output: str | None,
) -> None:
    """Turn token ids back into text.

    Ids come from the arguments ("24912 2375", "24912,2375" or "[24912, 2375]"), or from -f
    FILE or standard input: one sequence per line (as `bytepair encode` writes them, text or
    JSON), or a .npy array. The texts are written one after another, exactly as decoded.
    """
    encoding = _one_tokenizer(_Choice.of(encodings, models, tokenizer_files, pattern, vocab_dir))
    sequences = _id_sequences(ids, files)
    with _output(output, binary=True) as out:
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


@cli.command()
@click.argument("texts", nargs=-1, metavar="[TEXT]...")
@_files_option
@_tokenizer_options(multiple=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: {encoding, inputs: [{source, tokens}], total}.",
)
@_special_option
def count(
    texts: tuple[str, ...],
    files: tuple[str, ...],
    encodings: str | None,
    models: str | None,
    tokenizer_files: str | None,
    pattern: str | None,
    vocab_dir: Path | None,
    fmt: str,
    allow_special: bool,
) -> None:
    """Count the tokens of texts and files.

    One input prints its count alone; several print one line each (count, then what was
    counted) and a total. Each TEXT argument, then each -f FILE, is one input; with neither,
    standard input is. For prompt files (JSONL, CSV, folders) and costs, see `bytepair report`.
    """
    _hint_files(texts)
    encoding = _one_tokenizer(_Choice.of(encodings, models, tokenizer_files, pattern, vocab_dir))
    inputs = _inputs(texts, files, "TEXT")
    counts = [_count(encoding, item.text, allow_special) for item in inputs]
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
@_files_option
@_tokenizer_options(multiple=True)
@click.option(
    "--color/--no-color",
    default=None,
    help="Colour the tokens (default: when writing to a terminal); without colour each token "
    "is shown in [brackets].",
)
@click.option("--table/--no-table", default=True, help="List each token with its id.")
@click.option(
    "--html",
    "html_file",
    metavar="FILE",
    help="Also write the view as a self-contained web page to FILE.",
)
@_special_option
def show(
    texts: tuple[str, ...],
    files: tuple[str, ...],
    encodings: tuple[str, ...],
    models: tuple[str, ...],
    tokenizer_files: tuple[str, ...],
    pattern: str | None,
    vocab_dir: Path | None,
    color: bool | None,
    table: bool,
    html_file: str | None,
    allow_special: bool,
) -> None:
    """Show how a text is cut into tokens, with their ids.

    The TEXT words make one text (joined by spaces); -f FILE contents follow on new lines;
    with neither, standard input is read.
    Tokens that are not whole characters (part of an emoji, say) are shown by their byte
    values, as ⟨f0 9f⟩. Give several tokenizers to compare them:

    \b
      bytepair show -e cl100k_base -e o200k_base "How many r's are in strawberry?"
    """
    _hint_files(texts)
    tokenizers = _tokenizers(_Choice.of(encodings, models, tokenizer_files, pattern, vocab_dir))
    # Words given as arguments make one text (`bytepair show How are you`); files follow.
    parts = [" ".join(texts)] if texts else []
    if files or not texts:
        parts += [item.text for item in _inputs((), files, "TEXT")]
    text = "\n".join(parts)
    if color is None:
        color = sys.stdout.isatty()
    views = [
        render_tokens(t.encoding, text, color=color, table=table, allow_special=allow_special)
        for t in tokenizers
    ]
    click.echo("\n\n".join(views), color=color)
    if html_file is not None:
        page = html_page(text, [t.encoding for t in tokenizers], allow_special=allow_special)
        with _output(html_file) as f:
            f.write(page)


@cli.command(short_help="Token statistics and cost of many prompts, tokenizers side by side.")
@click.argument("prompts", nargs=-1, metavar="[PROMPTS]...")
@_tokenizer_options(multiple=True)
@click.option(
    "--field",
    metavar="NAME",
    help="JSON field holding the prompt (dotted for nested objects; a string or chat "
    "messages). Default: messages, prompt, text, input or content.",
)
@click.option(
    "--column",
    metavar="NAME",
    help="CSV column holding the prompt. Default: prompt, text, input or content.",
)
@click.option(
    "--prices",
    "prices_file",
    metavar="FILE",
    help="Pricing file (TOML; see bytepair/data/prices.toml). Default: the example shipped "
    "with bytepair.",
)
@click.option("--no-prices", is_flag=True, help="Leave out the cost estimate.")
@click.option(
    "--output-tokens",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    metavar="N",
    help="Output tokens expected per prompt, priced at the output rate.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "markdown", "csv", "json"]),
    default="table",
    show_default=True,
    help="json carries the per-prompt counts too.",
)
@click.option("-o", "--output", metavar="FILE", help="Write the report to FILE.")
@click.option(
    "--plot",
    metavar="FILE.png",
    help="Draw the distribution of prompt lengths per tokenizer (needs matplotlib: "
    "pip install 'bytepair[report]').",
)
@click.option("--threads", type=click.IntRange(min=1), metavar="N", help="Threads for counting.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar, no messages.")
def report(
    prompts: tuple[str, ...],
    encodings: tuple[str, ...],
    models: tuple[str, ...],
    tokenizer_files: tuple[str, ...],
    pattern: str | None,
    vocab_dir: Path | None,
    field: str | None,
    column: str | None,
    prices_file: str | None,
    no_prices: bool,
    output_tokens: int,
    fmt: str,
    output: str | None,
    plot: str | None,
    threads: int | None,
    quiet: bool,
) -> None:
    """Token statistics and estimated cost of many prompts, tokenizers side by side.

    PROMPTS are text files (one prompt each), folders (searched for .txt, .md, .prompt and
    .jsonl files), JSON Lines files (one prompt per line: a string, chat messages, or an object's
    --field), JSON files (a list of the same) and CSV files (one prompt per row, from
    --column); '-' (or nothing) reads one prompt from standard input.

    Per tokenizer: prompts, tokens per prompt (min, median, p95, max, mean), total tokens,
    bytes, characters and tokens per word, and the cost of the tokens on each model of the
    pricing file that uses the tokenizer (or on the model asked for with -m).

    \b
      bytepair report -e o200k_base -e cl100k_base prompts/ --output-tokens 300
      bytepair report -m gpt-4o evals.jsonl --field question --format json -o report.json
    """
    if no_prices and prices_file is not None:
        fail("--prices and --no-prices contradict each other")
    if plot is not None:
        _require("matplotlib", "--plot")
        backend_bases = importlib.import_module("matplotlib.backend_bases")
        supported = backend_bases.FigureCanvasBase.get_supported_filetypes()
        suffix = Path(plot).suffix.lstrip(".").lower()
        if suffix not in supported:
            fail(f"--plot {plot}: give a file ending in .png (or {', '.join(sorted(supported))})")
    choice = _Choice.of(encodings, models, tokenizer_files, pattern, vocab_dir)
    tokenizers = _tokenizers(choice)
    prices = None if no_prices else load_prices(prices_file)

    loaded: list[Prompt] = []
    paths = [p for p in prompts if p != "-"]
    if "-" in prompts or not prompts:
        if not prompts and _stdin_is_terminal():
            fail("no prompts: give files or folders, or pipe a prompt in")
        loaded.append(Prompt(_read_stdin(), "<stdin>"))
    loaded.extend(load_prompts(paths, field=field, column=column))
    if not loaded:
        fail(
            f"no prompts found in {', '.join(prompts)} (folders are searched for "
            f"{', '.join(IN_FOLDERS)} files)"
        )

    tqdm = importlib.import_module("tqdm").tqdm
    with tqdm(
        total=len(loaded) * len(tokenizers),
        desc="counting",
        unit=" prompts",
        delay=0.5,
        disable=True if quiet else None,
        file=sys.stderr,
    ) as bar:
        result = token_report(
            loaded,
            tokenizers,
            prices=prices,
            output_tokens=output_tokens,
            num_threads=threads,
            progress=bar.update,
        )

    if fmt == "json":
        text = result.to_json()
    elif fmt == "csv":
        text = result.to_csv()
    elif fmt == "markdown":
        text = result.to_markdown()
    else:
        to_terminal = output in (None, "-") and sys.stdout.isatty()
        text = result.to_table(color=to_terminal)
    with _output(output) as out:
        out.write(text if text.endswith("\n") else text + "\n")
    if plot is not None:
        result.plot(plot)
        if not quiet:
            click.echo(f"wrote {plot}", err=True)


_SAVE_FORMATS = ["tiktoken", "hf", "gpt2"]


def _save_format(name: str) -> SaveFormat:
    if name == "hf":
        return "hf"
    if name == "gpt2":
        return "gpt2"
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
    from bytepair.train import train as train_encoding

    fmt = fmt or _format_from_suffix(output)
    for path in files:
        if not any(c in path for c in "*?[") and not os.path.isfile(path):
            fail(
                f"{path}: no such file"
                + (" (a folder: pass a glob)" if os.path.isdir(path) else "")
            )
    encoding_name = name or Path(output).name.split(".")[0] or "trained"
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
    type=click.Choice(_SAVE_FORMATS),
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
    encoder.json + vocab.bpe or Hugging Face's vocab.json + merges.txt, or their folder).
    --to tiktoken writes a .tiktoken file, hf a tokenizer.json, gpt2 encoder.json + vocab.bpe in
    the folder OUT.
    """
    if not os.path.exists(source):
        fail(f"{source}: no such file")
    from bytepair.formats import convert as convert_files

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


def main(argv: Sequence[str] | None = None) -> None:
    """The console entry point (``bytepair``)."""
    cli.main(args=None if argv is None else list(argv), prog_name="bytepair")


if __name__ == "__main__":  # pragma: no cover
    main()
