"""The Hugging Face pipeline model: normalizers, added tokens, pre-tokenizer stages, pair merges
and a post-processor around the core, as ``tokenizers`` runs them.

Importing it registers its builder, so the loaders of :mod:`bytepair.formats` build
:class:`HfEncoding` values for Hugging Face files.
"""

from bytepair.hf.encoding import HfEncoding as HfEncoding
from bytepair.hf.encoding import build_hf_encoding as build_hf_encoding
from bytepair.hf.pipeline import HfPipeline as HfPipeline

__all__ = ["HfEncoding", "HfPipeline", "build_hf_encoding"]
