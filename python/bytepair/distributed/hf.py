"""Tokenize a Hugging Face ``datasets.Dataset`` with bytepair, in parallel with ``num_proc``.

:class:`DatasetEncoder` is the function to give ``Dataset.map(batched=True)``::

    from bytepair.distributed.hf import DatasetEncoder

    enc = bytepair.get_encoding("o200k_base")
    tokenized = ds.map(
        DatasetEncoder(enc),                 # adds "input_ids": ids + [<|endoftext|>]
        batched=True,
        num_proc=8,                          # worker processes; each receives the encoder once
        remove_columns=ds.column_names,      # keep only input_ids
    )

It pickles to a small, deterministic state (the vocabulary by rank, the pattern, the special
tokens; an encoding with a Hugging Face pipeline pickles as itself), so ``num_proc`` workers
receive it cleanly and ``datasets`` gives it the same fingerprint in every run: the cache of an
earlier ``map`` is reused. Each worker process
rebuilds the encoder once. ``datasets`` is not a dependency of bytepair; this module does not
import it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bytepair.distributed.engines import check_positive
from bytepair.distributed.tokenizing import resolve_eot
from bytepair.encoding import Encoding


class DatasetEncoder:
    """A batched ``map`` function: ``{text_field: [str, ...]} -> {output_field: [ids, ...]}``.

    Args:
        encoding: the :class:`~bytepair.Encoding`.
        text_field: the column holding the text.
        output_field: the column to write the token ids to.
        append_eot: append ``<|endoftext|>`` to each document (``True``), nothing
            (``False``), or the special token named by a string.
        num_threads: encoding threads inside each ``map`` worker process (use ``num_proc``
            for more processes).

    >>> import bytepair
    >>> ranks = {bytes([b]): b for b in range(256)}
    >>> enc = bytepair.Encoding("bytes", pat_str=r".", mergeable_ranks=ranks,
    ...                         special_tokens={"<|endoftext|>": 256})
    >>> DatasetEncoder(enc)({"text": ["hi", "!"]})
    {'input_ids': [[104, 105, 256], [33, 256]]}
    """

    def __init__(
        self,
        encoding: Encoding,
        *,
        text_field: str = "text",
        output_field: str = "input_ids",
        append_eot: bool | str = True,
        num_threads: int = 1,
    ) -> None:
        if not isinstance(encoding, Encoding):
            raise TypeError(f"encoding must be a bytepair.Encoding, got {type(encoding).__name__}")
        self.encoding = encoding
        self.text_field = text_field
        self.output_field = output_field
        self.eot = resolve_eot(encoding, append_eot)
        self.num_threads = check_positive("num_threads", num_threads)

    def __call__(self, batch: Mapping[str, Sequence[Any]]) -> dict[str, list[list[int]]]:
        try:
            texts = batch[self.text_field]
        except KeyError:
            columns = ", ".join(repr(c) for c in list(batch)[:12])
            raise ValueError(
                f"the dataset has no column {self.text_field!r} (columns: {columns}); "
                "pass text_field="
            ) from None
        texts = list(texts)
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise ValueError(
                    f"column {self.text_field!r} holds {type(text).__name__} at position {i} "
                    "of a batch, not a string; drop such rows first (Dataset.filter)"
                )
        ids = self.encoding.encode_ordinary_batch(texts, num_threads=self.num_threads)
        if self.eot is not None:
            for row in ids:
                row.append(self.eot)
        return {self.output_field: ids}

    def __getstate__(self) -> dict[str, Any]:
        enc = self.encoding
        state: dict[str, Any] = {
            "text_field": self.text_field,
            "output_field": self.output_field,
            "eot": self.eot,
            "num_threads": self.num_threads,
        }
        if type(enc) is not Encoding:
            # Another model (a Hugging Face pipeline) or a subclass: the encoding pickles itself.
            return {**state, "encoding": enc}
        # A plain BPE encoding: its parts in a fixed order (the ranks dict's order can vary).
        ranks = sorted(enc._mergeable_ranks.items(), key=lambda kv: kv[1])
        specials = sorted(enc._special_tokens.items())
        return {
            **state,
            "name": enc.name,
            "pat_str": enc.pat_str,
            "ranks": ranks,
            "special_tokens": specials,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        if "encoding" in state:
            self.encoding = state["encoding"]
        else:
            self.encoding = Encoding(
                state["name"],
                pat_str=state["pat_str"],
                mergeable_ranks=dict(state["ranks"]),
                special_tokens=dict(state["special_tokens"]),
            )
        self.text_field = state["text_field"]
        self.output_field = state["output_field"]
        self.eot = state["eot"]
        self.num_threads = state["num_threads"]

    def __repr__(self) -> str:
        return (
            f"DatasetEncoder({self.encoding.name!r}, text_field={self.text_field!r}, "
            f"output_field={self.output_field!r}, eot={self.eot})"
        )
