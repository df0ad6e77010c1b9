"""The rank model's builders: encodings from tiktoken and GPT-2 files (ids are ranks).

Registered with :mod:`bytepair.formats.builders` on import (``import bytepair`` does it), so
the loaders of :mod:`bytepair.formats` build an :class:`~bytepair.Encoding` for those files.
"""

from __future__ import annotations

from bytepair import _core
from bytepair.encoding import Encoding
from bytepair.formats.builders import register_builder
from bytepair.formats.values import Gpt2Files, TiktokenFile

__all__: list[str] = []


def _build_from_tiktoken_file(parsed: TiktokenFile) -> Encoding:
    return Encoding._from_tiktoken_bytes(
        parsed.data,
        name=parsed.name,
        pat_str=parsed.pat_str,
        special_tokens=dict(parsed.special_tokens),
        source=parsed.source,
    )


def _build_from_gpt2_files(parsed: Gpt2Files) -> Encoding:
    try:
        core, specials = _core.RankEncoder.from_gpt2(
            dict(parsed.encoder),
            parsed.merges_data,
            parsed.pat_str,
            dict(parsed.special_tokens),
        )
    except ValueError as err:
        message = str(err)
        where = parsed.merges_source if "line " in message or "merges" in message else None
        raise ValueError(f"{where or parsed.encoder_source}: {err}") from None
    return Encoding._from_core(parsed.name, parsed.pat_str, core, specials)


register_builder(TiktokenFile, _build_from_tiktoken_file)
register_builder(Gpt2Files, _build_from_gpt2_files)
