"""bytepair: byte-level BPE tokenizers with exact tiktoken / Hugging Face ids and a Rust core.

>>> import bytepair
>>> enc = bytepair.train("the cat sat on the mat " * 50, vocab_size=300, pattern="gpt2")
>>> enc.decode(enc.encode("the cat sat"))
'the cat sat'
"""

from __future__ import annotations

import importlib.metadata as _metadata

# Importing the tokenizer models registers the file values each builds (bytepair.formats.builders):
# _rank for tiktoken and GPT-2 files, hf for Hugging Face files.
from bytepair import _rank as _rank

# tiktoken's modules, so that `import bytepair as tiktoken` reaches tiktoken.load and the rest.
from bytepair import core as core
from bytepair import formats as formats
from bytepair import hf as hf
from bytepair import load as load
from bytepair import model as model
from bytepair import sentencepiece as sentencepiece
from bytepair.encoding import Encoding as Encoding
from bytepair.encoding import StreamDecoder as StreamDecoder
from bytepair.registry import encoding_for_model as encoding_for_model
from bytepair.registry import encoding_name_for_model as encoding_name_for_model
from bytepair.registry import get_encoding as get_encoding
from bytepair.registry import list_encoding_names as list_encoding_names
from bytepair.train import train as train

__all__ = [
    "Encoding",
    "StreamDecoder",
    "core",
    "encoding_for_model",
    "encoding_name_for_model",
    "formats",
    "get_encoding",
    "list_encoding_names",
    "load",
    "model",
    "sentencepiece",
    "train",
]
try:
    __version__ = _metadata.version("bytepair")
except _metadata.PackageNotFoundError:  # a source tree on sys.path that was never installed
    __version__ = "0+unknown"
