"""Scale out: tokenize datasets and train tokenizers on many processes or a Ray cluster.

Example (needs input files and, for ``engine="ray"``, Ray; see ``tests/test_distributed.py``
for runnable versions)::

    from bytepair.distributed import tokenize, load_tokens, train
    enc = bytepair.get_encoding("gpt2")
    tokenize("data/*.jsonl", enc, "out/", engine="ray")
    tokens, offsets = load_tokens("out/")

- :func:`tokenize` reads ``.jsonl`` / ``.parquet`` / ``.txt`` files (local or any filesystem
  pyarrow opens), encodes them on Ray actors (``engine="ray"``) or local processes
  (``engine="local"``, no Ray needed), and writes flat ``uint16``/``uint32`` token shards with
  a document index and ``manifest.json`` (format: :mod:`bytepair.distributed.shards`; what a
  document is: :mod:`bytepair.distributed.inputs`). Re-running a crashed job skips finished
  shards; the output equals encoding the documents one by one in one process.
- :func:`load_tokens` reads the shards back, in input order.
- :func:`train` counts pieces as a map-reduce across workers and learns the merges on this
  node: the merges of :func:`bytepair.train` on the same documents
  (:mod:`bytepair.distributed.training`); :func:`count_pieces` is the map-reduce alone.
- :class:`Workers` keeps processes or Ray actors between jobs (``engine=workers``), so that
  only the first job pays for starting them.
- :class:`~bytepair.distributed.hf.DatasetEncoder` tokenizes a Hugging Face ``Dataset`` with
  ``map(batched=True, num_proc=N)``.

Needs numpy; Ray only for ``engine="ray"``, pyarrow for parquet, compressed or remote inputs:
``pip install 'bytepair[ray]'`` installs all three. Nothing else in bytepair imports this
package, and this package imports Ray only when a job runs on it.
"""

from __future__ import annotations

try:
    import numpy as _numpy  # noqa: F401
except ImportError:
    raise ImportError("bytepair.distributed needs numpy: pip install 'bytepair[ray]'") from None

from bytepair.distributed.engines import Workers as Workers
from bytepair.distributed.hf import DatasetEncoder as DatasetEncoder
from bytepair.distributed.inputs import InputError as InputError
from bytepair.distributed.shards import Manifest as Manifest
from bytepair.distributed.shards import ShardInfo as ShardInfo
from bytepair.distributed.shards import Tokens as Tokens
from bytepair.distributed.shards import load_tokens as load_tokens
from bytepair.distributed.tokenizing import tokenize as tokenize
from bytepair.distributed.training import count_pieces as count_pieces
from bytepair.distributed.training import train as train

__all__ = [
    "DatasetEncoder",
    "InputError",
    "Manifest",
    "ShardInfo",
    "Tokens",
    "Workers",
    "count_pieces",
    "load_tokens",
    "tokenize",
    "train",
]
