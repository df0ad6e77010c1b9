"""What the package's docstring examples share (``pytest --doctest-modules python/bytepair``).

``byte_encoding`` is the smallest real encoding: the 256 single bytes as tokens 0-255, GPT-2's
pattern and one special token, ``<s>`` = 256. Examples that need nothing more use it instead of
each building a vocabulary of their own.
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _doctest_encodings(doctest_namespace: dict[str, Any]) -> None:
    from bytepair import Encoding
    from bytepair.patterns import GPT2

    doctest_namespace["byte_encoding"] = Encoding(
        "bytes",
        pat_str=GPT2,
        mergeable_ranks={bytes([b]): b for b in range(256)},
        special_tokens={"<s>": 256},
    )
