"""The ``bytepair`` command: count, encode, decode, show, report, train, convert and list.

Every subcommand picks its tokenizer the same way: ``-e NAME`` (an encoding: ``o200k_base``),
``-m MODEL`` (a model: ``gpt-4o``), ``-t FILE`` (a vocabulary file) or ``--hf ORG/MODEL`` (a
Hugging Face Hub model, through its cache); ``o200k_base`` when none is given. Vocabulary files
for names are found as :func:`bytepair.get_encoding` finds them (``--vocab-dir``,
``BYTEPAIR_VOCAB_DIR``, the cache). A mistake in what the user gave (an unknown name, a missing
file, a bad line of JSON) is reported on one line of standard error, with a non-zero exit
status, never with a traceback.
"""

from __future__ import annotations

from collections.abc import Sequence

# Importing each subcommand module adds its commands to the group.
from bytepair.cli import listing as _listing
from bytepair.cli import report as _report
from bytepair.cli import text as _text
from bytepair.cli import vocab as _vocab
from bytepair.cli.common import DEFAULT_ENCODING as DEFAULT_ENCODING
from bytepair.cli.common import fail as fail
from bytepair.cli.common import load_tokenizer_file as load_tokenizer_file
from bytepair.cli.group import cli as cli

__all__ = ["cli", "main"]
_COMMANDS = (_listing, _report, _text, _vocab)


def main(argv: Sequence[str] | None = None) -> None:
    """The console entry point (``bytepair``)."""
    cli.main(args=None if argv is None else list(argv), prog_name="bytepair")
