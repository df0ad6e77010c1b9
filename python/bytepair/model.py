"""``tiktoken.model`` for code that imports it: which encoding a model name uses.

>>> encoding_name_for_model("gpt-4")
'cl100k_base'
>>> MODEL_TO_ENCODING["gpt-4o"]
'o200k_base'
"""

from __future__ import annotations

from bytepair.registry import MODEL_PREFIX_TO_ENCODING as MODEL_PREFIX_TO_ENCODING
from bytepair.registry import MODEL_TO_ENCODING as MODEL_TO_ENCODING
from bytepair.registry import encoding_for_model as encoding_for_model
from bytepair.registry import encoding_name_for_model as encoding_name_for_model

__all__ = [
    "MODEL_PREFIX_TO_ENCODING",
    "MODEL_TO_ENCODING",
    "encoding_for_model",
    "encoding_name_for_model",
]
