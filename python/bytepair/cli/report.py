"""``bytepair report``: token statistics and cost of many prompts, tokenizers side by side."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from bytepair._progress import progress_bar
from bytepair._terminal import use_color
from bytepair.cli.common import (
    TokenizerChoice,
    chosen_tokenizers,
    fail,
    open_output,
    read_stdin,
    require_module,
    stdin_is_terminal,
    tokenizer_options,
)
from bytepair.cli.group import cli
from bytepair.formats.targets import check_writable
from bytepair.report import Prompt, load_prices, load_prompts, token_report
from bytepair.report.prompts import IN_FOLDERS


@cli.command(short_help="Token statistics and cost of many prompts, tokenizers side by side.")
@click.argument("prompts", nargs=-1, metavar="[PROMPTS]...")
@tokenizer_options(multiple=True)
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
@click.option(
    "--color/--no-color",
    default=None,
    help="Bold table headers (default: on a terminal, unless NO_COLOR is set or TERM=dumb).",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress bar, no notes, no messages.")
def report(
    prompts: tuple[str, ...],
    encodings: tuple[str, ...],
    models: tuple[str, ...],
    tokenizer_files: tuple[str, ...],
    hf_repos: tuple[str, ...],
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
    color: bool | None,
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
        require_module("matplotlib", "--plot")
        backend_bases = require_module("matplotlib.backend_bases", "--plot")
        supported = backend_bases.FigureCanvasBase.get_supported_filetypes()
        suffix = Path(plot).suffix.lstrip(".").lower()
        if suffix not in supported:
            fail(f"--plot {plot}: give a file ending in .png (or {', '.join(sorted(supported))})")
        check_writable([Path(plot)])  # before the work, not after printing the report
    choice = TokenizerChoice.of(encodings, models, tokenizer_files, pattern, vocab_dir, hf_repos)
    tokenizers = chosen_tokenizers(choice)
    prices = None if no_prices else load_prices(prices_file)

    loaded: list[Prompt] = []
    paths = [p for p in prompts if p != "-"]
    if "-" in prompts or not prompts:
        if not prompts and stdin_is_terminal():
            fail("no prompts: give files or folders, or pipe a prompt in")
        loaded.append(Prompt(read_stdin(), "<stdin>"))
    loaded.extend(load_prompts(paths, field=field, column=column))
    if not loaded:
        fail(
            f"no prompts found in {', '.join(prompts)} (folders are searched for "
            f"{', '.join(IN_FOLDERS)} files)"
        )

    with progress_bar(
        "counting",
        len(loaded) * len(tokenizers),
        " prompts",
        enabled=False if quiet else None,
        file=sys.stderr,
    ) as advance:
        result = token_report(
            loaded,
            tokenizers,
            prices=prices,
            output_tokens=output_tokens,
            num_threads=threads,
            progress=advance,
        )

    if fmt == "json":
        text = result.to_json()
    elif fmt == "csv":
        text = result.to_csv()
    elif fmt == "markdown":
        text = result.to_markdown(notes=not quiet)
    else:
        to_stdout = output in (None, "-")
        text = result.to_table(
            color=use_color(sys.stdout, color) if to_stdout else bool(color),
            notes=not quiet,
        )
    with open_output(output) as out:
        out.write(text if text.endswith("\n") else text + "\n")
    if plot is not None:
        result.plot(plot)
        if not quiet:
            click.echo(f"wrote {plot}", err=True)
