"""bytepair: byte-level BPE tokenizers with exact tiktoken / Hugging Face ids and a Rust core.

>>> import bytepair
>>> enc = bytepair.train("the cat sat on the mat " * 50, vocab_size=300, pattern="gpt2")
>>> enc.decode(enc.encode("the cat sat"))
'the cat sat'
"""

from __future__ import annotations

from bytepair.encoding import Encoding as Encoding

__all__ = ["Encoding"]
__version__ = "0.1.0"
