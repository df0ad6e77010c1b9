"""``bytepair list``: the encodings and models known by name, and where their files are."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from bytepair import registry
from bytepair.cli.group import cli


def _encodings(vocab_dir: Path | None) -> list[dict[str, str | None]]:
    rows: list[dict[str, str | None]] = []
    for name in registry.list_encoding_names():
        spec = registry.ENCODINGS[name]
        path = registry.locate_vocab_file(name, vocab_dir=vocab_dir)
        rows.append(
            {
                "name": name,
                "file": spec.file.filename,
                "path": None if path is None else str(path),
                "url": spec.file.url,
            }
        )
    return rows


def _models() -> list[dict[str, str]]:
    exact = [{"model": m, "encoding": e} for m, e in registry.MODEL_TO_ENCODING.items()]
    prefixes = [
        {"model": f"{p}*", "encoding": e} for p, e in registry.MODEL_PREFIX_TO_ENCODING.items()
    ]
    return exact + prefixes


def _status(row: dict[str, str | None]) -> str:
    if row["path"] is not None:
        return str(row["path"])
    if row["url"] and os.environ.get("BYTEPAIR_OFFLINE", "") in ("", "0"):
        return "not here: downloaded into the cache on first use"
    if row["url"]:
        return f"not here (downloads are off: BYTEPAIR_OFFLINE): get it from {row['url']}"
    return f"not here: put {row['file']} into --vocab-dir, BYTEPAIR_VOCAB_DIR or the cache"


@cli.command("list", short_help="The encodings and models known by name.")
@click.argument("what", type=click.Choice(["all", "encodings", "models"]), default="all")
@click.option(
    "--vocab-dir",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Folder with vocabulary files (searched before BYTEPAIR_VOCAB_DIR).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: {encodings: [{name, file, path, url}], models: [{model, encoding}]}.",
)
def list_known(what: str, vocab_dir: Path | None, fmt: str) -> None:
    """List the encodings (-e NAME) with where their vocabulary file is, and the models
    (-m MODEL) with their encoding; a name ending in * stands for every model it starts.

    Files are looked for in --vocab-dir, BYTEPAIR_VOCAB_DIR, then the cache (BYTEPAIR_CACHE_DIR
    or the platform's cache folder); they are not read here.
    """
    encodings = _encodings(vocab_dir) if what in ("all", "encodings") else None
    models = _models() if what in ("all", "models") else None
    if fmt == "json":
        data = {"encodings": encodings, "models": models}
        click.echo(json.dumps({k: v for k, v in data.items() if v is not None}, indent=2))
        return
    blocks = []
    if encodings is not None:
        width = max(len(str(row["name"])) for row in encodings)
        lines = [f"encodings (cache: {registry.cache_dir()}):"]
        lines += [f"  {row['name']:<{width}}  {_status(row)}" for row in encodings]
        blocks.append("\n".join(lines))
    if models is not None:
        width = max(len(row["model"]) for row in models)
        lines = ["models:"] + [f"  {row['model']:<{width}}  {row['encoding']}" for row in models]
        blocks.append("\n".join(lines))
    click.echo("\n\n".join(blocks))
