"""The ``bytepair`` command group; each subcommand module adds its commands to it."""

from __future__ import annotations

import click

from bytepair.cli.common import Group


@click.group(
    "bytepair",
    cls=Group,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="bytepair", prog_name="bytepair")
def cli() -> None:
    """Byte-level BPE tokenizers: count, encode, decode, show, report, train, convert, list.

    \b
    Examples:
      bytepair count "How many r's are in strawberry?"
      bytepair show -e cl100k_base -e o200k_base strawberry
      bytepair report -m gpt-4o -m gpt-4 evals.jsonl --output-tokens 200
      bytepair encode --truncate 100 -f prompt.txt
      bytepair list
    """
