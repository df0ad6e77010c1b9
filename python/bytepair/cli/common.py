"""What every subcommand shares: one-line errors, choosing tokenizers, reading inputs,
writing outputs."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from bytepair import registry
from bytepair._optional import MissingExtraError, require
from bytepair._terminal import is_terminal
from bytepair.encoding import Encoding
from bytepair.formats.hf_json import UnappliedSetting
from bytepair.patterns import resolve_pattern
from bytepair.report import Tokenizer, resolve_tokenizer
from bytepair.report.prompts import read_text_file

DEFAULT_ENCODING = "o200k_base"

F = TypeVar("F", bound=Callable[..., Any])


# ---- errors: one line, no traceback ---------------------------------------------------------

# Errors that come from what the user gave: a missing file, an unknown name, bad data. They are
# shown as one line; anything else is a bug and keeps its traceback.
_USER_ERRORS = (ValueError, KeyError, OSError, MissingExtraError)


def one_line(error: BaseException) -> str:
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
            raise click.ClickException(one_line(e)) from None


class Group(click.Group):
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


def tokenizer_options(multiple: bool) -> Callable[[F], F]:
    """-e/-m/-t/--hf (and --pattern, --vocab-dir). They are always collected as lists so that a
    command taking one tokenizer can refuse a repeated option instead of keeping the last."""
    more = " Repeatable (shown in the order -e, -m, -t, --hf)." if multiple else ""

    def decorate(f: F) -> F:
        options = [
            click.option(
                "-e",
                "--encoding",
                "encodings",
                multiple=True,
                metavar="NAME",
                help=f"Encoding by name: {', '.join(registry.list_encoding_names())} "
                f"(default: {DEFAULT_ENCODING}).{more}",
            ),
            click.option(
                "-m",
                "--model",
                "models",
                multiple=True,
                metavar="MODEL",
                help=f"The encoding of a model, e.g. gpt-4o, gpt-4, llama-3.1.{more}",
            ),
            click.option(
                "-t",
                "--tokenizer",
                "tokenizer_files",
                multiple=True,
                metavar="FILE",
                help="A vocabulary file or folder: .tiktoken, tokenizer.json, encoder.json + "
                f"vocab.bpe, vocab.json + merges.txt, tekken.json.{more}",
            ),
            click.option(
                "--hf",
                "hf_repos",
                multiple=True,
                metavar="ORG/MODEL",
                help="The tokenizer of a Hugging Face Hub model, through the Hugging Face cache "
                f"(HF_HUB_OFFLINE=1 reads the cache only; needs bytepair[hub]).{more}",
            ),
            click.option(
                "--pattern",
                metavar="NAME|REGEX",
                help="Pre-tokenizer pattern for a -t file that does not store one "
                "(.tiktoken): o200k, cl100k, gpt2, llama3, ... or a regex.",
            ),
            click.option(
                "--ignore-setting",
                type=click.Choice(["padding", "truncation"]),
                multiple=True,
                expose_value=False,
                callback=_keep_ignored_settings,
                help="Read a -t tokenizer.json without its padding or truncation, which "
                "bytepair does not apply (the ids of tokenizers after no_padding() or "
                "no_truncation()). Repeatable.",
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


_IGNORED_SETTINGS = "bytepair.ignore_settings"


def _keep_ignored_settings(ctx: click.Context, _: click.Parameter, value: tuple[str, ...]) -> None:
    # Kept on the context, so the commands need not pass it along.
    ctx.meta[_IGNORED_SETTINGS] = value


def _ignored_settings() -> tuple[str, ...]:
    ctx = click.get_current_context(silent=True)
    return () if ctx is None else tuple(ctx.meta.get(_IGNORED_SETTINGS, ()))


@dataclass(frozen=True)
class TokenizerChoice:
    encodings: tuple[str, ...]
    models: tuple[str, ...]
    files: tuple[str, ...]
    pattern: str | None
    vocab_dir: Path | None
    hf_repos: tuple[str, ...] = ()

    @staticmethod
    def of(
        encodings: str | tuple[str, ...] | None,
        models: str | tuple[str, ...] | None,
        tokenizer_files: str | tuple[str, ...] | None,
        pattern: str | None,
        vocab_dir: Path | None,
        hf_repos: str | tuple[str, ...] | None = None,
    ) -> TokenizerChoice:
        def many(value: str | tuple[str, ...] | None) -> tuple[str, ...]:
            if value is None:
                return ()
            return (value,) if isinstance(value, str) else tuple(value)

        return TokenizerChoice(
            many(encodings),
            many(models),
            many(tokenizer_files),
            pattern,
            vocab_dir,
            many(hf_repos),
        )


def load_tokenizer_file(path: str, pattern: str | None = None) -> Encoding:
    """An encoding from a vocabulary file or folder, in any format :mod:`bytepair.formats`
    reads (recognised by content).

    A tiktoken file holds no pre-tokenizer pattern: the well-known ones are recognised by their
    sha256, any other needs ``pattern`` (a name such as ``o200k`` or a regex).
    """
    if not os.path.exists(path):
        fail(f"{path}: no such tokenizer file")
    ignored = _ignored_settings()
    options: dict[str, Any] = {"ignore_settings": ignored} if ignored else {}
    try:
        return Encoding.from_file(
            path, pat_str=None if pattern is None else resolve_pattern(pattern), **options
        )
    except TypeError as e:
        if not ignored:
            raise
        fail(f"{e} (--ignore-setting is for a tokenizer.json)")
    except UnappliedSetting as e:
        fail(f"{e.where}; pass --ignore-setting {e.key} to read the file without it ({e.without})")
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
        fail(one_line(e))


def chosen_tokenizers(choice: TokenizerChoice) -> list[Tokenizer]:
    """The tokenizers chosen with -e/-m/-t/--hf (o200k_base when none), in that order."""
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
    for repo_id in choice.hf_repos:
        encoding = Encoding.from_pretrained(repo_id)
        found.append(Tokenizer(encoding.name, encoding))
    if choice.pattern is not None and not choice.files:
        fail("--pattern applies to a tokenizer file: use it with -t FILE")
    if not found:
        found.append(_resolve(DEFAULT_ENCODING, choice.vocab_dir))
    return found


def one_tokenizer(choice: TokenizerChoice) -> Encoding:
    command = click.get_current_context().info_name
    for option, given in (
        ("-e/--encoding", choice.encodings),
        ("-m/--model", choice.models),
        ("-t/--tokenizer", choice.files),
        ("--hf", choice.hf_repos),
    ):
        if len(given) > 1:
            fail(
                f"{option} given {len(given)} times ({', '.join(given)}); "
                f"'{command}' takes one tokenizer"
            )
    chosen = sum(map(len, (choice.encodings, choice.models, choice.files, choice.hf_repos)))
    if chosen > 1:
        fail("give one tokenizer: -e NAME, -m MODEL, -t FILE or --hf ORG/MODEL")
    return chosen_tokenizers(choice)[0].encoding


# ---- inputs -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Input:
    source: str
    text: str


def read_stdin() -> str:
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        fail(f"standard input: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})")


def stdin_is_terminal() -> bool:
    return is_terminal(sys.stdin)


def stdout_is_terminal() -> bool:
    return is_terminal(sys.stdout)


def _label(text: str, number: int) -> str:
    short = text if len(text) <= 40 else text[:37] + "..."
    return json.dumps(short, ensure_ascii=False) if short else f"text {number}"


def read_inputs(texts: Sequence[str], files: Sequence[str], what: str) -> list[_Input]:
    """Texts from arguments, then files ('-' is standard input); standard input if neither."""
    inputs = [_Input(_label(t, i + 1), t) for i, t in enumerate(texts)]
    for name in files:
        if name == "-":
            inputs.append(_Input("<stdin>", read_stdin()))
        else:
            inputs.append(_Input(name, read_text_file(name)))
    if not inputs:
        if stdin_is_terminal():
            fail(f"no input: give {what} as arguments, files with -f FILE, or pipe text in")
        inputs.append(_Input("<stdin>", read_stdin()))
    return inputs


def note(message: str, quiet: bool = False) -> None:
    """A note for the user on standard error (``-q`` silences it)."""
    if not quiet:
        click.echo(f"note: {message}", err=True)


def hint_files(texts: Sequence[str], quiet: bool = False) -> None:
    if quiet:
        return
    for text in texts:
        if text and len(text) < 4096 and "\n" not in text and os.path.isfile(text):
            note(f"{text!r} is taken as text; to read the file use -f {text}")


special_option = click.option(
    "--allow-special",
    is_flag=True,
    help="Text that spells a special token (<|endoftext|>) becomes that token; by default it "
    "is ordinary text.",
)
quiet_option = click.option("-q", "--quiet", is_flag=True, help="No notes on standard error.")
files_option = click.option(
    "-f",
    "--file",
    "files",
    multiple=True,
    metavar="FILE",
    help="Read input from FILE (UTF-8; '-' is standard input). Repeatable.",
)


def encode_text(encoding: Encoding, text: str, allow_special: bool) -> list[int]:
    if allow_special:
        return encoding.encode(text, allowed_special="all")
    return encoding.encode(text, disallowed_special=())


def count_text(encoding: Encoding, text: str, allow_special: bool) -> int:
    if allow_special:
        return encoding.count(text, allowed_special="all")
    return encoding.count(text, disallowed_special=())


def require_module(module: str, why: str) -> Any:
    """``module``, or a one-line error saying how to install it."""
    try:
        return require(module, why)
    except MissingExtraError:
        package = module.split(".")[0]
        fail(f"{why} needs {package}: pip install {package} (or 'bytepair[report]')")


@contextmanager
def open_output(path: str | None, binary: bool = False) -> Iterator[Any]:
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
